// The page tests/bundle_test.sh bundles with esbuild and with Vite from a
// fresh project that installed the npm tarball of web/ (`npm pack`): the
// package as an app gets it. texel.create() is given no wasmUrl, so the
// engine must find texel.wasm wherever the bundle put it. Runs a matmul and
// BlazeFace (the demo's model and photo) and logs "N passed, N failed".
import * as texel from 'texel-gpu';
import { MODELS, decode, preprocess } from './blazeface.js';

let passed = 0, failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (ok) passed++; else failed++;
};

async function main() {
  const tx = await texel.create();
  check(tx.caps.renderer.length > 0, `create() without wasmUrl (${tx.caps.renderer})`);
  const a = tx.tensor([1, 2, 3, 4, 5, 6], [2, 3]), b = tx.tensor([1, 0, 0, 1, 1, 1], [3, 2]);
  const y = a.matmul(b);
  const got = Array.from(await y.data());
  check(got.join() === '4,5,10,11', `matmul: ${got}`);
  [a, b, y].forEach((t) => t.dispose());

  const model = MODELS.front;
  const phases = [];
  const session = await tx.loadModel(`./${model.file}`, { onProgress: (e) => phases.push(e.phase) });
  check(phases[0] === 'download' && phases.at(-1) === 'compile', `load progress: ${[...new Set(phases)]}`);
  const img = new Image();
  img.src = './astronaut.png';
  await img.decode();
  const roi = { x: 0, y: 0, w: img.width, h: img.height };
  const { input, toImage } = preprocess(img, roi, model.size, document.createElement('canvas'));
  const x = tx.tensor(input, [1, model.size, model.size, 3]);
  const out = await session.run({ [session.inputs[0].name]: x });
  const [s0, s1, b0, b1] = await Promise.all(
    ['Identity:0', 'Identity_1:0', 'Identity_2:0', 'Identity_3:0'].map((n) => out[n].data()));
  const { detections } = decode([s0, s1], [b0, b1], model.size, model.minScore, toImage);
  const f = detections[0];
  check(detections.length === 1 && f.score > 0.9 && f.x1 - f.x0 > 0.05 * roi.w && f.x1 - f.x0 < roi.w / 2,
    `BlazeFace on ${session.device} finds the one face: ${detections.map((d) => `${d.score.toFixed(3)} at ` +
      `[${[d.x0, d.y0, d.x1, d.y1].map((v) => v.toFixed(0))}]`).join(', ')}`);
  x.dispose();
  Object.values(out).forEach((t) => t.dispose());
  session.dispose();
  tx.dispose();
}

main()
  .catch((e) => check(false, `threw: ${e.stack || e}`))
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed`);
    window.__result = { status: failed ? 1 : 0 };
  });
