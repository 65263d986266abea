// texel-gpu in Node (>= 18), no browser: the package imports, the engine
// (texel.wasm, read from the package) loads, and create() gives a context
// without GL (Node has no WebGL2): the CPU device only. Tensors, ops, data(),
// loadModel + session.run compute (checked against plain JS; BlazeFace finds
// the face in the demo photo), GPU requests
// reject with UNSUPPORTED naming why, and Node exits once done.
// `node web/test/node_test.mjs [MODULE]`: MODULE defaults to ../texel.js
// (web/test/bundle_test.sh passes 'texel-gpu' from a project that installed
// the npm tarball). Prints "N passed, N failed".
import { onnxModel } from './onnx_model.js';

const spec = process.argv[2] || '../texel.js';
let passed = 0, failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (ok) passed++; else failed++;
};
const within = (p, ms) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error(`no answer in ${ms} ms`)), ms))]);
const rand = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.37) * 2);
const maxDiff = (a, b) => a.length !== b.length ? Infinity : a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
function refMatmul(a, b, m, k, n) {
  const y = new Float32Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      y[i * n + j] = s;
    }
  return y;
}
const rejectsWith = async (p, status, ...words) => {
  try { await p; } catch (e) { return e instanceof Error && e.status === status && words.every((w) => e.message.includes(w)) ? e : null; }
  return null;
};

// An 8-bit RGB / RGBA PNG without interlace (the demo's astronaut.png) → RGBA
// pixels, with node:zlib: Node has no image decoder.
async function readPng(bytes) {
  const { inflateSync } = await import('node:zlib');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const w = dv.getUint32(16), h = dv.getUint32(20), depth = bytes[24], type = bytes[25];
  if (depth !== 8 || (type !== 2 && type !== 6) || bytes[28] !== 0) throw new Error(`PNG: depth ${depth} type ${type}: not handled`);
  const idat = [];
  for (let p = 8; p < bytes.length;) {
    const len = dv.getUint32(p), kind = String.fromCharCode(...bytes.subarray(p + 4, p + 8));
    if (kind === 'IDAT') idat.push(bytes.subarray(p + 8, p + 8 + len));
    p += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const bpp = type === 6 ? 4 : 3, stride = w * bpp, px = new Uint8Array(stride * h), out = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? px[y * stride + i - bpp] : 0, b = y ? px[(y - 1) * stride + i] : 0;
      const c = i >= bpp && y ? px[(y - 1) * stride + i - bpp] : 0;
      const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      px[y * stride + i] = (src[i] + pred) & 255;
    }
  }
  for (let i = 0; i < w * h; i++)
    for (let k = 0; k < 4; k++) out[i * 4 + k] = k < 3 ? px[i * bpp + k] : bpp === 4 ? px[i * bpp + 3] : 255;
  return { w, h, rgba: out };
}

// BlazeFace (the demo's model and photo, scripts/demo-assets.sh) on the CPU
// in Node: the square photo box-filtered to the model's input, the demo's
// decoding (web/demo/blazeface.js); the one face must be found.
async function blazeFace(tx, what) {
  const { readFile } = await import('node:fs/promises');
  const first = async (names) => {
    for (const n of names) { try { return await readFile(new URL(n, import.meta.url)); } catch { /* next */ } }
    return null;
  };
  const model = await first(['../demo/assets/face_detection_front_128x128.onnx', './public/face_detection_front_128x128.onnx']);
  const png = await first(['../demo/assets/astronaut.png', './public/astronaut.png']);
  let bf = null;
  for (const m of ['../demo/blazeface.js', './blazeface.js']) { try { bf = await import(m); break; } catch { /* next */ } }
  if (!model || !png || !bf) {
    console.log(`(BlazeFace left out: no web/demo/assets; scripts/demo-assets.sh fetches them)`);
    return;
  }
  const { size, minScore } = bf.MODELS.front;
  const img = await readPng(png);
  const f = img.w / size;
  check(img.w === img.h && Number.isInteger(f), `${what}: astronaut.png ${img.w}x${img.h}`);
  const input = new Float32Array(size * size * 3);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++)
      for (let k = 0; k < 3; k++) {
        let sum = 0;
        for (let dy = 0; dy < f; dy++)
          for (let dx = 0; dx < f; dx++) sum += img.rgba[((y * f + dy) * img.w + x * f + dx) * 4 + k];
        input[(y * size + x) * 3 + k] = sum / (f * f) / 127.5 - 1;
      }
  const session = await tx.loadModel(model);
  const out = await session.run({ [session.inputs[0].name]: tx.tensor(input, [1, size, size, 3]) });
  const [s0, s1, b0, b1] = await Promise.all(
    ['Identity:0', 'Identity_1:0', 'Identity_2:0', 'Identity_3:0'].map((n) => out[n].data()));
  const { detections } = bf.decode([s0, s1], [b0, b1], size, minScore, (u, v) => [u * img.w, v * img.h]);
  const d = detections[0];
  // the face in astronaut.png: about x 175..255, y 60..160 of 512
  check(detections.length === 1 && d.score > 0.9 && d.x0 > 140 && d.x1 < 290 && d.y0 > 30 && d.y1 < 200,
    `${what}: BlazeFace on ${session.device} finds the one face: ${detections.map((e) => `${e.score.toFixed(3)} at ` +
      `[${[e.x0, e.y0, e.x1, e.y1].map((v) => v.toFixed(0))}]`).join(', ')}`);
  session.dispose();
}

// importing the module, create() and dispose() leave nothing that keeps Node running
{
  const { spawnSync } = await import('node:child_process');
  const target = spec.startsWith('.') ? new URL(spec, import.meta.url).href : spec;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e',
    `const t = await import(${JSON.stringify(target)}); const c = await t.create(); c.tensor([1, 2], [2]).add(c.tensor([3, 4], [2])).dataSync(); await t.create({device: 'gpu'}).catch(() => {});`],
  { timeout: 30000, cwd: process.cwd() });
  check(r.status === 0 && r.signal === null, `Node exits after import + create() + an op (${Date.now() - t0} ms, status ${r.status}, signal ${r.signal}) ${r.stderr}`);
}

try {
  const texel = await import(spec);
  const S = texel.Status;
  check(typeof texel.create === 'function' && typeof texel.Session === 'function', `import('${spec}')`);
  check(texel.simdAvailable() === true, 'wasm SIMD validates in Node');
  for (const opts of [{}, { device: 'cpu' }, { simd: false }]) {
    const what = `create(${JSON.stringify(opts)})`;
    let tx;
    try { tx = await within(texel.create(opts), 30000); } catch (e) { check(false, `${what}: ${e.message}`); continue; }
    check(tx.caps.noGpu === true && tx.caps.maxTextureSize === 0 && tx.simd === (opts.simd !== false),
      `${what}: a context without GL (caps.noGpu ${tx.caps.noGpu}, simd ${tx.simd})`);

    // ops and data() on the CPU, against plain JS
    const [m, k, n] = [9, 13, 7];
    const av = rand(m * k, 1), bv = rand(k * n, 2);
    const a = tx.tensor(av, [m, k]), b = tx.tensor(bv, [k, n]);
    check(a.device === 'cpu', `${what}: tensors default to the CPU (${a.device})`);
    const y = a.matmul(b).relu();
    const want = refMatmul(av, bv, m, k, n).map((v) => Math.max(v, 0));
    const got = await y.data();
    check(y.shape.join() === `${m},${n}` && maxDiff(got, want) < 1e-4,
      `${what}: matmul [${m},${k}]x[${k},${n}] + relu: max |diff| ${maxDiff(got, want).toExponential(2)}`);
    check(maxDiff(a.add(1).mul(2).dataSync(), av.map((v) => (v + 1) * 2)) < 1e-5, `${what}: add, mul, dataSync`);

    // GPU requests are refused, naming why; the CPU goes on
    let e = null;
    try { tx.tensor(av, [m, k], { device: 'gpu' }); } catch (err) { e = err; }
    check(e instanceof texel.TexelError && e.status === S.UNSUPPORTED && /no GPU context/.test(e.message),
      `${what}: tensor(..., {device: 'gpu'}) throws UNSUPPORTED: ${e?.message}`);
    e = null;
    try { a.to('gpu'); } catch (err) { e = err; }
    check(e instanceof texel.TexelError && e.status === S.UNSUPPORTED, `${what}: to('gpu') throws UNSUPPORTED: ${e?.message}`);

    // a model: y = relu(x @ W + B), z = -y, batch dynamic
    const MK = 6, MN = 5, W = rand(MK * MN, 11), B = rand(MN, 12);
    const bytes = onnxModel({
      inputs: [['x', ['batch', MK]]],
      outputs: [['y', [-1, MN]], ['z', ['batch', MN]]],
      inits: [['W', [MK, MN], W], ['B', [MN], B]],
      nodes: [['MatMul', ['x', 'W'], ['xw']], ['Add', ['xw', 'B'], ['xwb']], ['Relu', ['xwb'], ['y']],
        ['Neg', ['y'], ['z']]],
    });
    const session = await tx.loadModel(bytes);
    check(session.device === 'cpu' && session.deviceReason === 'no GPU context',
      `${what}: loadModel: device ${session.device} (${session.deviceReason})`);
    for (const batch of [3, 8]) {
      const xv = rand(batch * MK, batch);
      const out = await session.run({ x: tx.tensor(xv, [batch, MK]) });
      const ref = refMatmul(xv, W, batch, MK, MN).map((v, i) => Math.max(v + B[i % MN], 0));
      const yd = await out.y.data(), zd = await out.z.data();
      check(maxDiff(yd, ref) < 1e-5 && maxDiff(zd, ref.map((v) => -v)) < 1e-5,
        `${what}: session.run batch ${batch}: y, z max |diff| ${maxDiff(yd, ref).toExponential(2)}`);
    }
    check(await rejectsWith(tx.loadModel(bytes, { device: 'gpu' }), S.UNSUPPORTED, 'no GPU context'),
      `${what}: loadModel(..., {device: 'gpu'}) rejects with UNSUPPORTED`);
    session.dispose();
    if (!opts.device) await blazeFace(tx, what);
    tx.dispose();
  }
  // the engine loaded (its status table is filled on the first create)
  check(Object.keys(S).length >= 12 && S.OK === 0, `Status from the engine: ${Object.keys(S).length} codes`);

  // device 'gpu': no WebGL2 in Node, said at once
  {
    const t0 = Date.now();
    const e = await rejectsWith(within(texel.create({ device: 'gpu' }), 30000), S.UNSUPPORTED, 'WebGL2', 'Node');
    check(e instanceof texel.TexelError && e.statusName === 'TX_STATUS_UNSUPPORTED',
      `create({device: 'gpu'}) rejects with UNSUPPORTED in ${Date.now() - t0} ms: ${e?.message ?? 'no such rejection'}`);
  }
} catch (e) {
  check(false, `threw: ${e.stack || e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
