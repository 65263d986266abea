// Runs in a module Worker (web/test/api.js): no document, so texel makes its
// WebGL2 context on an OffscreenCanvas.
import * as texel from '../texel.js';

try {
  const tx = await texel.create();
  const a = tx.tensor([1, 2, 3, 4], [2, 2]);
  // m stays referenced until the stats are taken: a forgotten intermediate
  // may be freed by the FinalizationRegistry during the await
  const m = a.matmul(a, { activation: 'relu' });
  const y = m.add(1);
  const values = Array.from(await y.data());
  const stats = tx.stats();
  m.dispose();
  postMessage({ ok: true, values, canvas: tx.canvas.constructor.name, stats });
} catch (e) {
  postMessage({ ok: false, error: String(e && e.stack || e) });
}
