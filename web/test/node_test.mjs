// texel-gpu in Node (>= 18), no browser: the package imports, the engine
// (texel.wasm, read from the package) loads, and create() gives a context
// without GL (Node has no WebGL2): the CPU device only. Tensors, ops, data(),
// loadModel + session.run compute (checked against plain JS), GPU requests
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
