// Runs in a module Worker (web/test/api.js): no document, so texel makes its
// WebGL2 context on an OffscreenCanvas.
import * as texel from '../texel.js';

try {
  const tx = await texel.create();
  const a = tx.tensor([1, 2, 3, 4], [2, 2]);
  const y = a.matmul(a, { activation: 'relu' }).add(1);
  const values = Array.from(await y.data());
  postMessage({ ok: true, values, canvas: tx.canvas.constructor.name, stats: tx.stats() });
} catch (e) {
  postMessage({ ok: false, error: String(e && e.stack || e) });
}
