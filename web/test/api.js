// JS API tests, run in headless Chromium by web/test/run.mjs (page mode).
// Prints "FAIL name" per failure and ends with "N passed, N failed".
import * as texel from '../texel.js';
import { onnxModel } from './onnx_model.js';

const filter = new URLSearchParams(location.search).get('filter');
let passed = 0, failed = 0;
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

class CheckError extends Error {}
function check(cond, msg) { if (!cond) throw new CheckError(msg); }
function close(got, want, tol, what) {
  check(got.length === want.length, `${what}: length ${got.length}, want ${want.length}`);
  for (let i = 0; i < want.length; i++)
    check(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i])), `${what}[${i}] = ${got[i]}, want ${want[i]}`);
}
function throwsTexel(fn, status, ...needles) {
  try { fn(); } catch (e) {
    check(e instanceof texel.TexelError, `threw ${e} instead of a TexelError`);
    check(e instanceof Error, 'TexelError is not an Error');
    check(e.status === status, `status ${e.statusName} (${e.status}), want ${status}: ${e.message}`);
    for (const n of needles) check(e.message.includes(n), `message "${e.message}" lacks "${n}"`);
    return e;
  }
  throw new CheckError(`did not throw (want status ${status})`);
}
const rand = (n, seed = 1) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed) * 2);
function refMatmul(a, b, m, k, n, { ta = false, tb = false, bias = null, relu = false } = {}) {
  const y = new Float32Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
    if (bias) s += bias[j];
    y[i * n + j] = relu ? Math.max(s, 0) : s;
  }
  return y;
}
const tick = () => new Promise((r) => setTimeout(r, 0));

let tx;

test('create: WebGL2 context with float32 render targets; ops from the C op list', async () => {
  check(tx.caps.float32Render === true, `caps ${JSON.stringify(tx.caps)}`);
  check(tx.caps.maxTextureSize >= 4096, `max texture ${tx.caps.maxTextureSize}`);
  const names = tx.ops.map((o) => o.name);
  for (const n of ['relu', 'add', 'matmul', 'clip']) check(names.includes(n), `op ${n} missing from ${names}`);
  const t = tx.tensor([1]);
  for (const n of names) check(typeof t[n] === 'function' || ['reshape', 'dispose'].includes(n), `Tensor.${n} is not a method`);
  t.dispose();
  check(texel.Status.CONTEXT_LOST > 0 && texel.Status.OK === 0, 'Status table');
});

test('elementwise ops, scalars, int32, context-level ops, run()', async () => {
  tx.scope(() => {
    const a = tx.tensor([-2, -1, 0.5, 3, 4, -6], [2, 3]);
    const b = tx.tensor([1, 2, 3], [3]);
    close(a.add(b).dataSync(), [-1, 1, 3.5, 4, 6, -3], 0, 'add broadcast');
    close(a.relu().dataSync(), [0, 0, 0.5, 3, 4, 0], 0, 'relu');
    close(a.mul(2).dataSync(), [-4, -2, 1, 6, 8, -12], 0, 'mul scalar');
    close(a.clip(-1, 3).dataSync(), [-1, -1, 0.5, 3, 3, -1], 0, 'clip positional');
    close(a.clip({ lo: 0 }).dataSync(), [0, 0, 0.5, 3, 4, 0], 0, 'clip options');
    close(tx.sub(a, b).dataSync(), [-3, -3, -2.5, 2, 2, -9], 0, 'tx.sub');
    close(tx.run('max', [a, 0]).dataSync(), [0, 0, 0.5, 3, 4, 0], 0, 'run max');
    close(a.sigmoid().dataSync(), [-2, -1, 0.5, 3, 4, -6].map((x) => 1 / (1 + Math.exp(-x))), 1e-5, 'sigmoid');
    const i = tx.tensor(Int32Array.from([5, -7, 16777216]));
    check(i.dtype === 'int32', i.dtype);
    const s = i.add(tx.tensor(Int32Array.from([1, 1, -16777216]))).dataSync();
    check(s instanceof Int32Array && s.join() === '6,-6,0', `int add ${s}`);
    const v = a.reshape([3, -1]);
    check(v.shape.join() === '3,2', `reshape ${v.shape}`);
    check(JSON.stringify(v.arraySync()) === '[[-2,-1],[0.5,3],[4,-6]]', JSON.stringify(v.arraySync()));
  });
});

test('matmul with transposeB, bias, activation against a JS reference', async () => {
  tx.scope(() => {
    const [m, k, n] = [33, 17, 12];
    const av = rand(m * k, 1), bv = rand(n * k, 2), cv = rand(n, 3);
    const a = tx.tensor(av, [m, k]), b = tx.tensor(bv, [n, k]), c = tx.tensor(cv, [n]);
    const y = a.matmul(b, { transposeB: true, bias: c, activation: 'relu' });
    check(y.shape.join() === `${m},${n}`, `shape ${y.shape}`);
    close(y.dataSync(), refMatmul(av, bv, m, k, n, { tb: true, bias: cv, relu: true }), 1e-4, 'matmul');
    const y2 = tx.tensor(av, [m, k]).matmul(tx.tensor(rand(k * n, 5), [k, n]), false, false, undefined, 'none');
    close(y2.dataSync(), refMatmul(av, rand(k * n, 5), m, k, n), 1e-4, 'matmul positional');
  });
});

test("precision 'f16': RGBA16F storage, half the texture bytes, ~3 digits; compile cost per family in stats()", async () => {
  const m = 64, k = 32, n = 48;
  const a = rand(m * k, 3), b = rand(k * n, 4), want = refMatmul(a, b, m, k, n);
  const bytes = {};
  for (const precision of ['f32', 'f16']) {
    const t = await texel.create({ precision });
    check(t.caps.float16Storage === (precision === 'f16'), `${precision}: caps ${JSON.stringify(t.caps)}`);
    const y = t.tensor(a, [m, k]).matmul(t.tensor(b, [k, n]));
    close(y.dataSync(), want, precision === 'f16' ? 2e-2 : 1e-5, `matmul ${precision}`);
    bytes[precision] = t.stats().liveTextureBytes;
    const fam = t.stats().compileFamilies;
    check(fam.matmul && fam.matmul.generic >= 1 && fam.matmul.compileMs >= 0 && 'firstDrawMs' in fam.matmul,
      `compileFamilies ${JSON.stringify(fam)}`);
    t.dispose();
  }
  check(bytes.f16 * 2 === bytes.f32, `live texture bytes f16 ${bytes.f16}, f32 ${bytes.f32}`);
  let threw = null;
  try { await texel.create({ precision: 'f64' }); } catch (e) { threw = e; }
  check(threw instanceof texel.TexelError && threw.status === texel.Status.INVALID_ARGUMENT &&
    threw.message.includes('precision'), `precision 'f64': ${threw}`);
});

test("tensor(halves, shape, 'float16'): exact values on every storage, half the upload for f16", async () => {
  // every finite half from 0x0000 to 0x7bff and its negative, subnormals included
  const h = new Uint16Array(2 * 0x7c00);
  for (let i = 0; i < 0x7c00; i++) { h[i] = i; h[0x7c00 + i] = 0x8000 | i; }
  const value = (b) => {
    const e = (b >> 10) & 31, m = b & 1023;
    const v = e ? (m + 1024) * 2 ** (e - 25) : m * 2 ** -24;
    return b & 0x8000 ? -v : v;
  };
  const up = {};
  for (const [name, opts, dev] of [['f32', {}, 'gpu'], ['f16', { precision: 'f16' }, 'gpu'], ['cpu', {}, 'cpu']]) {
    const t = await texel.create(opts);
    const before = t.stats().bytesUploaded;
    const x = t.tensor(h, [h.length], { dtype: 'float16', device: dev });
    up[name] = t.stats().bytesUploaded - before;
    check(x.dtype === 'float32' && x.shape[0] === h.length, `${name}: dtype ${x.dtype} shape ${x.shape}`);
    const got = x.dataSync();
    let bad = 0;
    for (let i = 0; i < h.length; i++) if (got[i] !== value(h[i]) && bad++ < 3) console.log(name, i, got[i], value(h[i]));
    check(bad === 0, `${name}: ${bad} halves read back wrong`);
    if (globalThis.Float16Array) {
      const f = new Float16Array([1.5, -0.25, 65504]);
      close(t.tensor(f, [3], 'float16').dataSync(), [1.5, -0.25, 65504], 0, `${name}: Float16Array`);
    }
    let threw = null;
    try { t.tensor([1, 2], [2], 'float16'); } catch (e) { threw = e; }
    check(threw instanceof texel.TexelError && threw.message.includes('Uint16Array'), `number[] as float16: ${threw}`);
    t.dispose();
  }
  check(up.f16 * 2 === up.f32 && up.f16 === h.length * 2, `uploaded f16 ${up.f16} B, f32 ${up.f32} B`);
});

test('TEXEL_TUNE: matmul tilings measured once per renderer and size class, remembered in localStorage', async () => {
  texel.forgetDeviceChoices();
  const m = 64, k = 48, n = 32;
  const a = rand(m * k, 5), b = rand(k * n, 6), want = refMatmul(a, b, m, k, n);
  const compiles = [];
  for (let round = 0; round < 2; round++) {
    const t = await texel.create({ specializeAfter: 'never', env: { TEXEL_TUNE: '1' } });
    for (let call = 0; call < 2; call++)
      t.scope(() => close(t.tensor(a, [m, k]).matmul(t.tensor(b, [k, n])).dataSync(), want, 1e-5, `round ${round}`));
    compiles.push(t.stats().genericCompiles);
    t.dispose(); // remembers the choice
    const kept = JSON.parse(localStorage.getItem(`texel-kernels:${t.caps.renderer}`) ?? 'null')?.['matmul-tm'];
    check(Array.isArray(kept) && kept.some((x) => [1, 4, 8].includes(x)), `stored ${JSON.stringify(kept)}`);
    if (round === 0) console.log(`  measured on this renderer: matmul tile rows per size class ${JSON.stringify(kept)}`);
  }
  check(compiles[0] >= 3 && compiles[1] <= 2, `generic programs: measured ${compiles[0]}, remembered ${compiles[1]}`);
  texel.forgetDeviceChoices();
  const t = await texel.create({ env: { TEXEL_TUNE: null } });
  t.dispose();
});

test('division: caps say whether it is emulated; emulated (TEXEL_EMULATE_DIVISION) it is IEEE 754 bit for bit', async () => {
  check(typeof tx.caps.emulatedDivision === 'boolean', `caps ${JSON.stringify(tx.caps)}`);
  const t = await texel.create({ env: { TEXEL_EMULATE_DIVISION: '1' } });
  try {
    check(t.caps.emulatedDivision === true, `caps ${JSON.stringify(t.caps)}`);
    const n = 4096, a = rand(n, 11), b = rand(n, 12).map((x) => 0.25 + Math.abs(x) * 37);
    a.set([-2.5, 3.5, 1, 7, 0.5]);
    b.set([Math.fround(5 / 255), 3.5, 3, 7, 0.1]); // a rounding tie of DynamicQuantizeLinear, exact ones
    const got = t.scope(() => t.tensor(a, [n]).div(t.tensor(b, [n])).dataSync());
    // float32 operands: the double quotient rounded to float32 is the IEEE float32 quotient
    const bad = [...got.keys()].filter((i) => !Object.is(got[i], Math.fround(a[i] / b[i])));
    check(bad.length === 0, `${bad.length} quotients differ, first ${a[bad[0]]} / ${b[bad[0]]} = ${got[bad[0]]}`);
  } finally {
    t.dispose();
  }
  (await texel.create({ env: { TEXEL_EMULATE_DIVISION: null } })).dispose();
});

test('data(): asynchronous, equals dataSync, snapshot, concurrent', async () => {
  const x = tx.tensor(rand(4099, 7), [4099]);
  const y = x.neg();
  const p = y.data();
  check(p instanceof Promise, 'data() is not a Promise');
  check(tx.stats().pendingReads === 1, `pendingReads ${tx.stats().pendingReads}`);
  const sync = y.dataSync();
  const got = await p;
  check(got instanceof Float32Array, `${got}`);
  close(got, sync, 0, 'async vs sync');
  close(got, rand(4099, 7).map((v) => -v), 0, 'values');
  // Many reads at once, and one of a tensor disposed right after asking.
  const z = x.mul(3);
  const pz = z.data();
  z.dispose();
  const all = await Promise.all([y.data(), x.data(), pz]);
  close(all[2], rand(4099, 7).map((v) => v * 3), 1e-6, 'read of a disposed tensor');
  check(tx.stats().pendingReads === 0, 'reads left pending');
  const i = tx.tensor(Int32Array.from([1, -2, 3]));
  const iv = await i.data();
  check(iv instanceof Int32Array && iv.join() === '1,-2,3', `${iv}`);
  for (const t of [x, y, i]) t.dispose();
});

test('data(): a longer read of seen work is polled until shortly before its last time, then finished at once', async () => {
  // The work is made to look slow: the fence polls report "not done" for the
  // first fakeMs of a read (the values are there; finishing reads them): 30
  // ms for the first, which sets the work's time, then 2 s, so that a read
  // ends by waiting, or fails the test without hanging it (on a loaded
  // machine a poll meant for ~26 ms can land after 30 and find the work
  // done).
  const t = await texel.create({ blockingReadMs: 8 });
  const core = t._core;
  const realPoll = core._txw_read_poll;
  let readStart = 0, fakedNotDone = 0, fakeMs = 30;
  core._txw_read_poll = (w, rid, rp) => {
    const st = realPoll(w, rid, rp);
    if (!st && performance.now() - readStart < fakeMs && core.HEAP32[rp >> 2]) {
      core.HEAP32[rp >> 2] = 0;
      fakedNotDone++;
    }
    return st;
  };
  try {
    const x = t.tensor(rand(4099, 10), [4099]);
    const want = rand(4099, 10).map((v) => 3 * v);
    const blockedAt = [];
    for (let i = 0; i < 3; i++) {
      const y = x.mul(3);
      fakeMs = i === 0 ? 30 : 2000;
      readStart = performance.now();
      const p = y.data();
      // never at once: the work's last read took longer than 8 ms
      check(t.stats().pendingReads === 1, `read ${i}: pendingReads ${t.stats().pendingReads}`);
      close(await p, want, 0, `read ${i}`);
      const ms = performance.now() - readStart;
      blockedAt.push(t.stats().blockingReads);
      // the first read (unseen work) waits out the polls; later ones stop
      // polling ~4 ms before the last read's ~30 ms and wait there (not at
      // once: that is for work seen to take at most blockingReadMs)
      check(ms >= (i === 0 ? 29 : 15), `read ${i} settled after ${ms.toFixed(1)} ms`);
      y.dispose();
    }
    check(fakedNotDone > 3, `polls faked: ${fakedNotDone}`);
    check(blockedAt.join() === '0,1,2', `blockingReads after each read: ${blockedAt}`);
    // with another read pending it keeps polling (waiting would wait for that one too)
    fakeMs = 30;
    const other = x.neg();
    readStart = performance.now();
    const po = other.data();
    const y = x.mul(3);
    const p = y.data();
    close(await p, want, 0, 'with a read pending');
    close(await po, rand(4099, 10).map((v) => -v), 0, 'the other read');
    check(t.stats().blockingReads === 2, `with a read pending: blockingReads ${t.stats().blockingReads}`);
    for (const u of [x, y, other]) u.dispose();
  } finally {
    core._txw_read_poll = realPoll;
    t.dispose();
  }
});

test('data(): a read of work seen to finish fast finishes at once; not with another pending, nor at 0 ms', async () => {
  // blockingReadMs large: which reads block must not depend on this machine's speed
  const t = await texel.create({ blockingReadMs: 1000 });
  const never = await texel.create({ blockingReadMs: 0 });
  const S = texel.Status;
  let bad = null;
  await texel.create({ blockingReadMs: -1 }).catch((e) => { bad = e; });
  check(bad instanceof texel.TexelError && bad.status === S.INVALID_ARGUMENT && bad.message.includes('blockingReadMs'), `blockingReadMs -1: ${bad}`);
  try {
    for (const c of [t, never]) {
      const x = c.tensor(rand(4099, 8), [4099]);
      const ix = c.tensor(Int32Array.from({ length: 37 }, (_, i) => i - 18));
      for (let i = 0; i < 4; i++) {
        const y = x.mul(-2);
        const p = y.data();
        // the first read of this work is polled (nothing is known of it); later ones
        // block where allowed (finished here, settled from the next task), same values
        check(c.stats().pendingReads === (i === 0 || c === never ? 1 : 0), `read ${i}: pendingReads ${c.stats().pendingReads}`);
        // a blocking read still yields to the event loop: microtasks alone do not settle it
        let settled = false;
        p.then(() => { settled = true; });
        for (let m = 0; m < 5; m++) await Promise.resolve();
        check(!settled, `read ${i} settled without a task boundary (a loop of reads would freeze the page)`);
        close(await p, rand(4099, 8).map((v) => -2 * v), 0, `read ${i}`);
        y.dispose();
        const iy = ix.add(ix);
        const iv = await iy.data();
        check(iv instanceof Int32Array && iv.join() === ix.dataSync().map((v) => 2 * v).join(), `int32 read ${i}: ${iv}`);
        iy.dispose();
      }
      const blocked = c.stats().blockingReads;
      check(c === never ? blocked === 0 : blocked === 6, `blockingReads ${blocked}`);
      if (c === t) {
        // the same work again, with another read pending: polled (a blocking read would wait for that one too)
        const other = x.neg();
        const po = other.data();
        const y = x.mul(-2);
        const p = y.data();
        check(c.stats().pendingReads === 2 && c.stats().blockingReads === blocked, `with a read pending: ${c.stats().pendingReads} pending, ${c.stats().blockingReads} blocking`);
        close(await p, rand(4099, 8).map((v) => -2 * v), 0, 'with a read pending');
        close(await po, rand(4099, 8).map((v) => -v), 0, 'the other read');
        // different work (a different size read after the same ops) is polled again
        const zx = c.tensor(rand(5000, 9), [5000]);
        const z = zx.mul(-2);
        const pz = z.data();
        check(c.stats().pendingReads === 1, `new work: pendingReads ${c.stats().pendingReads}`);
        close(await pz, rand(5000, 9).map((v) => -2 * v), 0, 'new work');
        for (const u of [other, y, z, zx]) u.dispose();
      }
      x.dispose();
      ix.dispose();
    }
  } finally {
    t.dispose();
    never.dispose();
  }
});

test('data(): float32 values straight into a JS array: whole texture rows, a split tensor, empty', async () => {
  // 512 x 512 texels: the pixel-pack buffer read into a new Float32Array
  const x = tx.tensor(rand(1 << 20, 5), [1 << 20]);
  const y = x.relu();
  const got = await y.data();
  check(got instanceof Float32Array && got.length === 1 << 20, `${got.length}`);
  close(got, rand(1 << 20, 5).map((v) => Math.max(v, 0)), 0, 'relu of 2^20');
  check(got.buffer.byteLength === got.byteLength, 'the values share a larger buffer');
  const again = await y.data(); // a fresh array each time, not a view the next read overwrites
  again[0] = 123;
  check(got[0] !== 123, 'two reads share their values');
  // a tensor split across textures (a 64-texel limit): values from host memory
  const small = await texel.create({ maxTextureSize: 64 });
  try {
    const v = rand(64 * 64 * 4 * 3 + 5, 6);
    const s = small.tensor(v, [v.length]).neg();
    close(await s.data(), v.map((e) => -e), 0, 'split tensor');
    const e = small.tensor(new Float32Array(0), [0]);
    const ev = await e.data();
    check(ev instanceof Float32Array && ev.length === 0, `empty: ${ev}`);
  } finally {
    small.dispose();
  }
  for (const t of [x, y]) t.dispose();
});

test('scope/dispose: 1,000 scoped op calls leave no live textures behind', async () => {
  const a = tx.tensor(rand(64 * 64, 1), [64, 64]), b = tx.tensor(rand(64, 2), [64]);
  tx.scope(() => a.add(b).relu().dispose()); // warm the pool and programs
  const s0 = tx.stats();
  for (let i = 0; i < 1000; i++) tx.scope(() => { a.add(b).relu().mul(2).matmul(a); });
  const s1 = tx.stats();
  check(s1.liveTextureBytes === s0.liveTextureBytes, `live texture bytes ${s0.liveTextureBytes} -> ${s1.liveTextureBytes}`);
  check(s1.liveTensors === s0.liveTensors && s1.jsLiveTensors === s0.jsLiveTensors,
    `live tensors ${s0.liveTensors} -> ${s1.liveTensors} (js ${s0.jsLiveTensors} -> ${s1.jsLiveTensors})`);
  check(s1.pooledTextureBytes <= s0.pooledTextureBytes + 4 * 64 * 64 * 4 * 4, `pool grew ${s0.pooledTextureBytes} -> ${s1.pooledTextureBytes}`);
  check(s1.draws - s0.draws >= 4000, `draws ${s1.draws - s0.draws}`);
  console.log(`  1000 scoped calls: live texture bytes ${s0.liveTextureBytes} -> ${s1.liveTextureBytes}, ` +
    `live tensors ${s0.liveTensors} -> ${s1.liveTensors}, pooled ${s1.pooledTextureBytes}`);
  // Returned tensors survive (nested too); keep() survives; the rest is freed.
  let kept;
  const [r1, r2] = tx.scope(() => {
    const inner = tx.scope(() => { const t = a.relu(); t.neg(); return { t }; });
    kept = tx.keep(a.neg());
    a.abs();
    return [inner.t, a.exp()];
  });
  check(!r1.disposed && !r2.disposed && !kept.disposed, 'returned/kept tensors were disposed');
  check(tx.stats().jsLiveTensors === s1.jsLiveTensors + 3, `live ${tx.stats().jsLiveTensors} vs ${s1.jsLiveTensors + 3}`);
  for (const t of [r1, r2, kept]) t.dispose();
  throwsTexel(() => tx.scope(() => { a.relu(); throw new texel.TexelError(texel.Status.GL_ERROR, 'boom'); }), texel.Status.GL_ERROR, 'boom');
  check(tx.stats().jsLiveTensors === s1.jsLiveTensors, 'a throwing scope leaked');
  a.dispose();
  b.dispose();
});

test('errors: TexelError with the engine status and message', async () => {
  const S = texel.Status;
  const a = tx.tensor(new Float32Array(12), [3, 4]), b = tx.tensor(new Float32Array(15), [3, 5]);
  throwsTexel(() => a.add(b), S.SHAPE_MISMATCH, 'add', '[3, 4]', '[3, 5]');
  throwsTexel(() => a.matmul(b), S.SHAPE_MISMATCH, 'matmul');
  throwsTexel(() => a.matmul(tx.tensor(new Float32Array(20), [4, 5]), { activation: 'nope' }), S.INVALID_ARGUMENT, 'unknown op "nope"');
  throwsTexel(() => a.matmul(b, { transposeC: true }), S.INVALID_ARGUMENT, 'unknown option "transpose_c"', 'transpose_a');
  throwsTexel(() => a.relu(1), S.INVALID_ARGUMENT, 'too many arguments');
  throwsTexel(() => a.clip(3, 1), S.INVALID_ARGUMENT, 'clip');
  throwsTexel(() => tx.tensor([1, 2, 3], [2, 2]), S.SHAPE_MISMATCH, '3 values', '[2, 2]');
  throwsTexel(() => tx.tensor([1], [1, 1, 1, 1, 1, 1, 1]), S.RANK_TOO_HIGH, 'rank 7');
  throwsTexel(() => tx.tensor(new Float32Array(20000 * 20000 / 1000), [20000, 20000 / 1000 * 1000]), S.SHAPE_MISMATCH);
  throwsTexel(() => tx.zeros([9000, 9000, 4]), S.TOO_LARGE, '[9000, 9000, 4]', 'MAX_TEXTURE_SIZE');
  throwsTexel(() => a.add(tx.tensor(Int32Array.from([1]))), S.DTYPE_MISMATCH);
  throwsTexel(() => tx.run('nope', [a]), S.INVALID_ARGUMENT, 'unknown op "nope"');
  b.dispose();
  throwsTexel(() => a.add(b), S.STALE_HANDLE, 'disposed');
  throwsTexel(() => b.dataSync(), S.STALE_HANDLE);
  let rejected = null;
  await b.data().catch((e) => { rejected = e; });
  check(rejected instanceof texel.TexelError && rejected.status === S.STALE_HANDLE, `data() of a disposed tensor: ${rejected}`);
  const other = await texel.create();
  const o = other.tensor([1]);
  throwsTexel(() => a.add(o), S.INVALID_ARGUMENT, 'another texel context');
  // Two contexts on one page each compute correctly.
  close(o.add(o).dataSync(), [2], 0, 'second context');
  close(a.relu().dataSync(), new Float32Array(12), 0, 'first context after the second');
  other.dispose();
  throwsTexel(() => o.dataSync(), S.INVALID_ARGUMENT, 'disposed');
  a.dispose();
  check(tx.stats().jsLiveTensors >= 0, '');
});

test('GL calls per op in steady state stay few (bound state is cached in engine/gl)', async () => {
  const proto = WebGL2RenderingContext.prototype;
  const saved = {};
  const counts = {};
  for (const k of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, k);
    if (typeof d.value !== 'function') continue;
    saved[k] = d.value;
    proto[k] = function (...args) { counts[k] = (counts[k] || 0) + 1; return saved[k].apply(this, args); };
  }
  try {
    const t3 = await texel.create();
    const a = t3.tensor(rand(4096, 1), [64, 64]), b = t3.tensor(rand(4096, 2), [64, 64]);
    const perOp = (fn) => {
      for (let i = 0; i < 4; i++) fn().dispose(); // compile, specialize, warm the pool
      for (const k of Object.keys(counts)) delete counts[k];
      for (let i = 0; i < 10; i++) fn().dispose();
      const total = Object.values(counts).reduce((x, y) => x + y, 0) / 10;
      return { total, detail: Object.entries(counts).map(([k, v]) => `${k}×${v / 10}`).join(' ') };
    };
    const add = perOp(() => a.add(b));
    const mm = perOp(() => a.matmul(b));
    console.log(`  add: ${add.total} WebGL calls per op (${add.detail})`);
    console.log(`  matmul (2 draws): ${mm.total} WebGL calls per op (${mm.detail})`);
    check(add.total <= 2, `add makes ${add.total} WebGL calls per op`);
    check(mm.total <= 8, `matmul makes ${mm.total} WebGL calls per op`);
    t3.dispose();
  } finally {
    for (const [k, f] of Object.entries(saved)) proto[k] = f;
  }
});

test('resetGLState: the page draws on texel\'s WebGL context, texel carries on after a reset', async () => {
  const t5 = await texel.create();
  try {
    const gl = t5.canvas.getContext('webgl2');
    const a = t5.tensor(rand(33 * 40, 3), [33, 40]), b = t5.tensor(rand(40 * 24, 4), [40, 24]);
    const want = a.matmul(b).add(1).dataSync();
    close(want, refMatmul(rand(33 * 40, 3), rand(40 * 24, 4), 33, 40, 24).map((v) => v + 1), 1e-4, 'before');
    const scramble = () => { // state a page's own drawing could leave
      gl.enable(gl.BLEND); gl.blendFunc(gl.ONE, gl.ONE);
      gl.enable(gl.SCISSOR_TEST); gl.scissor(0, 0, 1, 1); gl.viewport(0, 0, 1, 1);
      gl.colorMask(true, false, true, false);
      for (let u = 0; u < 4; u++) { gl.activeTexture(gl.TEXTURE0 + u); gl.bindTexture(gl.TEXTURE_2D, null); }
      gl.activeTexture(gl.TEXTURE3);
    };
    scramble();
    const bad = a.matmul(b).add(1).dataSync();
    check(bad.some((v, i) => v !== want[i]), 'the scrambled state changed nothing');
    scramble();
    t5.resetGLState();
    close(a.matmul(b).add(1).dataSync(), want, 0, 'after resetGLState');
  } finally {
    t5.dispose();
  }
});

test('GL errors: deferred to the next read by default, per op with debug: true', async () => {
  const S = texel.Status;
  for (const debug of [false, true]) {
    const t4 = await texel.create({ debug });
    const gl = t4.canvas.getContext('webgl2');
    const a = t4.tensor([1, 2, 3, 4]);
    a.neg().dispose(); // so the next op's output comes from the pool
    gl.bindTexture(0x1234, null); // an INVALID_ENUM left in the queue, as a driver fault would
    if (debug) {
      throwsTexel(() => a.neg(), S.GL_ERROR, 'neg', 'GL_INVALID_ENUM');
    } else {
      const y = a.neg(); // not checked here: no GPU round trip per op
      throwsTexel(() => y.dataSync(), S.GL_ERROR, 'earlier op');
    }
    close(a.neg().dataSync(), [-1, -2, -3, -4], 0, `usable after the error (debug ${debug})`);
    t4.dispose();
  }
});

test('in a Worker: OffscreenCanvas context, async read', async () => {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const r = await new Promise((ok, fail) => {
    w.onmessage = (e) => ok(e.data);
    w.onerror = (e) => fail(new CheckError(`worker error: ${e.message}`));
  });
  w.terminate();
  check(r.ok, r.error);
  check(r.canvas === 'OffscreenCanvas', `context on ${r.canvas}`);
  close(r.values, [8, 11, 16, 23], 0, 'worker matmul');
  check(r.stats.draws >= 2 && r.stats.liveTensors === 3, `draws ${r.stats.draws}, live ${r.stats.liveTensors}`);
});

test('FinalizationRegistry frees the GPU memory of forgotten tensors', async () => {
  check(typeof gc === 'function', 'run Chromium with --js-flags=--expose-gc');
  const settle = async () => { for (let i = 0; i < 5; i++) { gc(); await new Promise((r) => setTimeout(r, 20)); } };
  await settle(); // tensors earlier tests dropped on purpose (inside throwing calls)
  const s0 = tx.stats();
  (() => { for (let i = 0; i < 50; i++) tx.tensor(new Float32Array(1024), [1024]); })();
  check(tx.stats().liveTensors === s0.liveTensors + 50, 'tensors not created');
  let s1 = tx.stats();
  for (let i = 0; i < 100 && s1.liveTensors > s0.liveTensors; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
    s1 = tx.stats();
  }
  check(s1.liveTensors === s0.liveTensors && s1.liveTextureBytes === s0.liveTextureBytes,
    `after GC: live tensors ${s0.liveTensors} -> ${s1.liveTensors}, bytes ${s0.liveTextureBytes} -> ${s1.liveTextureBytes}`);
  check(s1.jsFinalized - s0.jsFinalized === 50, `finalized ${s1.jsFinalized - s0.jsFinalized}`);
});

test('context loss: pending reads reject, calls fail, restore rebuilds, old tensors say so', async () => {
  const S = texel.Status;
  // k given: exact on SwiftShader too (the default makes a small draw wait)
  const t2 = await texel.create({ specializeAfter: 2 });
  const gl = t2.canvas.getContext('webgl2');
  const ext = gl.getExtension('WEBGL_lose_context');
  check(ext, 'no WEBGL_lose_context');
  const x = t2.tensor(rand(1000, 3), [10, 100]);
  const w = t2.tensor(rand(100 * 8, 4), [100, 8]);
  close(x.matmul(w).dataSync(), refMatmul(rand(1000, 3), rand(800, 4), 10, 100, 8), 1e-4, 'before loss');
  const events = [];
  t2.on('contextlost', (e) => events.push(['lost', e.status]));
  const restored = new Promise((r) => t2.on('contextrestored', (info) => { events.push(['restored', info.generation]); r(); }));
  const pending = x.relu().data();
  ext.loseContext();
  let err = null;
  await pending.catch((e) => { err = e; });
  check(err instanceof texel.TexelError && err.status === S.CONTEXT_LOST, `pending read: ${err}`);
  check(t2.lost, 'context not reported lost');
  check(events.length === 1 && events[0][1] === S.CONTEXT_LOST, JSON.stringify(events));
  throwsTexel(() => x.add(x), S.CONTEXT_LOST, 'lost');
  throwsTexel(() => t2.tensor([1, 2]), S.CONTEXT_LOST);
  let lateErr = null;
  await x.data().catch((e) => { lateErr = e; });
  check(lateErr?.status === S.CONTEXT_LOST, `data() while lost: ${lateErr}`);
  check(t2.stats().liveTextureBytes === 0, `lost context still counts ${t2.stats().liveTextureBytes} texture bytes`);
  // Restoring is allowed once the lost event's dispatch is over (Chromium reads
  // defaultPrevented after the last listener; the awaits above resumed inside it).
  await new Promise((r) => setTimeout(r, 0));
  ext.restoreContext();
  await restored;
  check(!t2.lost && t2.stats().generation === 1, `lost ${t2.lost}, generation ${t2.stats().generation}`);
  const e = throwsTexel(() => x.matmul(w), S.CONTEXT_LOST, 'before the GL context was lost');
  console.log(`  old tensor after restore: ${e.statusName}: ${e.message}`);
  const x2 = t2.tensor(rand(1000, 3), [10, 100]), w2 = t2.tensor(rand(800, 4), [100, 8]);
  for (let i = 0; i < 4; i++) // generic, then specialized programs, all rebuilt
    close(await x2.matmul(w2, { activation: 'relu' }).data(), refMatmul(rand(1000, 3), rand(800, 4), 10, 100, 8, { relu: true }), 1e-4, `after restore, call ${i}`);
  x.dispose();
  w.dispose();
  const s = t2.stats();
  check(s.specializedRuns > 0 && s.liveTensors === s.jsLiveTensors, JSON.stringify(s));
  t2.dispose();
});


// y = relu(x @ W + B), z = -y: x is [batch, K] with a symbolic batch dim.
const MK = 6, MN = 5;
const mW = rand(MK * MN, 11), mB = rand(MN, 12);
const mlpBytes = () => onnxModel({
  inputs: [['x', ['batch', MK]]],
  outputs: [['y', [-1, MN]], ['z', ['batch', MN]]],
  inits: [['W', [MK, MN], mW], ['B', [MN], mB]],
  nodes: [['MatMul', ['x', 'W'], ['xw']], ['Add', ['xw', 'B'], ['xwb']], ['Relu', ['xwb'], ['y']],
    ['Neg', ['y'], ['z']]],
});
const mlpRef = (xv, m) => refMatmul(xv, mW, m, MK, MN, { bias: mB, relu: true });

test('session.profile(): every step of the runs that follow timed, on the GPU and the CPU', async () => {
  for (const device of ['gpu', 'cpu']) {
    const tx = await texel.create(); // a context of its own: the first run's programs compile in the steps
    const s = await tx.loadModel(mlpBytes(), { device });
    check(s.profileSteps() === null, `${device}: a profile before it is enabled`);
    const xv = rand(3 * MK, 5);
    const x = tx.tensor(xv, [3, MK]);
    const runs = async (n) => {
      for (let r = 0; r < n; r++) {
        const out = await s.run({ x });
        close(await out.y.data(), mlpRef(xv, 3), 1e-5, `${device}: y while profiled`);
        out.y.dispose();
        out.z.dispose();
      }
    };
    s.profile();
    const c0 = tx.stats();
    await runs(2);
    const c1 = tx.stats();
    const p = s.profileSteps();
    const compiled = c1.genericCompiles + c1.specializedCompiles - c0.genericCompiles - c0.specializedCompiles;
    check(p.reduce((a, e) => a + e.compiles, 0) === compiled && (device === 'cpu') === (compiled === 0),
      `${device}: ${p.map((e) => e.compiles)} compiles in the steps, ${compiled} in the runs`);
    check(p.map((e) => `${e.opType}${e.activation ? '+' + e.activation : ''}`).join() === 'MatMul+relu,Neg',
      `${device}: steps ${JSON.stringify(p)}`);
    for (const e of p)
      check(e.runs === 2 && e.device === device && e.ms >= 0 && e.shape.join() === `3,${MN}`,
        `${device}: ${JSON.stringify(e)}`);
    check(p[0].macs === 3 * MK * MN && p[1].macs === 0, `${device}: macs ${p[0].macs}, ${p[1].macs}`);
    check(device === 'gpu' ? p[0].draws >= 2 && p[0].draws % 2 === 0 : p[0].draws === 0,
      `${device}: ${p[0].draws} matmul draws`);
    s.profile(true); // again: from zero
    check(s.profileSteps().every((e) => e.runs === 0 && e.ms === 0), `${device}: counts after a restart`);
    s.profile(false);
    check(s.profileSteps() === null, `${device}: a profile after it is turned off`);
    x.dispose();
    s.dispose();
    let err = null;
    try { s.profile(); } catch (e) { err = e; }
    check(err instanceof texel.TexelError && /disposed/.test(err.message), `${device}: profile after dispose: ${err}`);
    tx.dispose();
  }
});

test('loadModel: inputs/outputs, run against a JS reference, fetches, from a URL', async () => {
  const bytes = mlpBytes();
  const before = tx.stats();
  const session = await tx.loadModel(bytes.buffer);
  check(session instanceof texel.Session, 'not a Session');
  check(JSON.stringify(session.inputs) === JSON.stringify([{ name: 'x', shape: ['batch', MK], dtype: 'float32', onnxType: 1 }]),
    `inputs ${JSON.stringify(session.inputs)}`);
  check(session.outputs.map((o) => `${o.name}:${o.shape}:${o.dtype}`).join(' ') === `y:-1,${MN}:float32 z:batch,${MN}:float32`,
    `outputs ${JSON.stringify(session.outputs)}`);
  for (const m of [3, 7, 3]) { // a dynamic batch: the same session on two shapes
    const xv = rand(m * MK, m);
    const x = tx.tensor(xv, [m, MK]);
    const out = await session.run({ x });
    check(Object.keys(out).join() === 'y,z', `outputs ${Object.keys(out)}`);
    check(out.y.shape.join() === `${m},${MN}`, `y shape ${out.y.shape}`);
    close(await out.y.data(), mlpRef(xv, m), 1e-5, `y (batch ${m})`);
    close(out.z.dataSync(), mlpRef(xv, m).map((v) => -v), 1e-5, `z (batch ${m})`);
    out.y.dispose();
    out.z.dispose();
    const only = await session.run({ x }, { fetches: ['z'] });
    check(Object.keys(only).join() === 'z', `fetches: ${Object.keys(only)}`);
    only.z.dispose();
    x.dispose();
  }
  // in a scope, the outputs are the scope's temporaries
  const xv = rand(2 * MK, 9);
  const x = tx.tensor(xv, [2, MK]);
  const out = await session.run({ x });
  const y = tx.scope(() => out.y.add(out.z).add(out.y));
  close(y.dataSync(), mlpRef(xv, 2), 1e-5, 'y + z + y');
  for (const t of [x, y, out.y, out.z]) t.dispose();
  const url = URL.createObjectURL(new Blob([bytes]));
  const s2 = await tx.loadModel(url);
  URL.revokeObjectURL(url);
  check(s2.inputs[0].name === 'x', 'from a URL');
  const mid = tx.stats();
  check(mid.liveTensors === before.liveTensors + 4, `weights of 2 sessions: ${before.liveTensors} → ${mid.liveTensors} tensors`);
  session.dispose();
  s2.dispose();
  session.dispose(); // twice is fine
  check(session.disposed, 'disposed flag');
  const after = tx.stats();
  check(after.liveTensors === before.liveTensors && after.jsLiveTensors === before.jsLiveTensors,
    `tensors: before ${before.liveTensors}/${before.jsLiveTensors}, after ${after.liveTensors}/${after.jsLiveTensors}`);
});

test('loadModel onProgress: download bytes, then GPU programs compiled of those to compile', async () => {
  const bytes = mlpBytes();
  const url = URL.createObjectURL(new Blob([bytes]));
  const before = tx.stats();
  for (const device of ['gpu', 'cpu']) {
    const ev = [];
    const s = await tx.loadModel(url, { device, onProgress: (e) => ev.push({ ...e }) });
    const dl = ev.filter((e) => e.phase === 'download'), cp = ev.filter((e) => e.phase === 'compile');
    check(dl.length >= 2 && ev.indexOf(cp[0]) === dl.length, `${device}: events in order ${JSON.stringify(ev)}`);
    check(dl.every((e, i) => i === 0 || e.loaded >= dl[i - 1].loaded) && dl.at(-1).loaded === bytes.length &&
      (dl.at(-1).total === 0 || dl.at(-1).total === bytes.length), `${device}: download ${JSON.stringify(dl)}`);
    const last = cp.at(-1);
    check(last && last.done === last.total && (device === 'gpu' ? last.total >= 1 : last.total === 0),
      `${device}: compile ${JSON.stringify(cp)}`);
    // the programs are there: the first run compiles nothing more
    const x = tx.tensor(rand(MK, 3), [1, MK]); // the shapes compile() planned for
    const g0 = tx.stats().genericCompiles;
    const out = await s.run({ x });
    check(device === 'cpu' || tx.stats().genericCompiles === g0, `${device}: first run compiled ${tx.stats().genericCompiles - g0} more`);
    for (const t of [x, out.y, out.z]) t.dispose();
    s.dispose();
  }
  URL.revokeObjectURL(url);
  let err = null;
  try { await tx.loadModel(mlpBytes(), { onProgress: 3 }); } catch (e) { err = e; }
  check(err?.status === texel.Status.INVALID_ARGUMENT && /onProgress/.test(err.message), `onProgress: 3: ${err}`);
  const after = tx.stats();
  check(after.liveTensors === before.liveTensors, `tensors: ${before.liveTensors} → ${after.liveTensors}`);
});

test('loadModel/run errors: malformed model, unknown feed, wrong shape, bad arguments', async () => {
  const S = texel.Status;
  const rejects = async (p, status, ...needles) => {
    let err = null;
    try { await p; } catch (e) { err = e; }
    check(err, `did not reject (want status ${status})`);
    return throwsTexel(() => { throw err; }, status, ...needles);
  };
  const bytes = mlpBytes();
  const bad = await rejects(tx.loadModel(bytes.slice(0, bytes.length - 9)), S.INVALID_ARGUMENT);
  console.log(`  truncated model: ${bad.statusName}: ${bad.message}`);
  await rejects(tx.loadModel(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), S.INVALID_ARGUMENT);
  await rejects(tx.loadModel(42), S.INVALID_ARGUMENT, 'ArrayBuffer');
  await rejects(tx.loadModel('/web/test/no-such-model.onnx'), S.INVALID_ARGUMENT, 'HTTP 404');
  const unsupported = onnxModel({ inputs: [['x', [4]]], outputs: [['y', [4]]], nodes: [['NoSuchOp', ['x'], ['y']]] });
  await rejects(tx.loadModel(unsupported), S.UNSUPPORTED, 'NoSuchOp');
  const session = await tx.loadModel(bytes);
  const x = tx.tensor(rand(3 * MK), [3, MK]);
  const e1 = await rejects(session.run({ q: x }), S.INVALID_ARGUMENT, '"q" is not an input', 'inputs: x');
  console.log(`  unknown feed: ${e1.message}`);
  const wrong = tx.tensor(rand(3 * (MK + 1)), [3, MK + 1]);
  const e2 = await rejects(session.run({ x: wrong }), S.SHAPE_MISMATCH, '"x"', `[-1, ${MK}]`, `[3, ${MK + 1}]`);
  console.log(`  wrong shape: ${e2.message}`);
  await rejects(session.run({ x: tx.tensor(Int32Array.from({ length: 3 * MK }), [3, MK]) }), S.DTYPE_MISMATCH, 'int32');
  await rejects(session.run({}), S.INVALID_ARGUMENT, 'not fed');
  await rejects(session.run({ x: [1, 2, 3] }), S.INVALID_ARGUMENT, 'not a texel Tensor');
  await rejects(session.run({ x }, { fetches: ['xw'] }), S.INVALID_ARGUMENT, 'not an output');
  const before = tx.stats().liveTensors;
  (await session.run({ x })).y.dispose(); // usable after the errors (z is left to the check below)
  check(tx.stats().liveTensors === before + 1, 'one output left live');
  session.dispose();
  await rejects(session.run({ x }), S.INVALID_ARGUMENT, 'disposed');
  x.dispose();
  wrong.dispose();
});

test('context loss: the session re-uploads its weights on restore and runs again', async () => {
  const S = texel.Status;
  const t2 = await texel.create();
  const ext = t2.canvas.getContext('webgl2').getExtension('WEBGL_lose_context');
  const session = await t2.loadModel(mlpBytes(), { device: 'gpu' }); // the GPU's weights are what a loss takes
  const xv = rand(4 * MK, 21);
  const x = t2.tensor(xv, [4, MK]);
  const out = await session.run({ x });
  close(await out.y.data(), mlpRef(xv, 4), 1e-5, 'before the loss');
  const weightBytes = t2.stats().liveTextureBytes;
  const restored = new Promise((r) => t2.on('contextrestored', r));
  const lost = new Promise((r) => t2.on('contextlost', r));
  ext.loseContext();
  await lost;
  let err = null;
  await session.run({ x }).catch((e) => { err = e; });
  check(err?.status === S.CONTEXT_LOST, `run while lost: ${err}`);
  await new Promise((r) => setTimeout(r, 0));
  ext.restoreContext();
  await restored;
  const s = t2.stats();
  check(s.generation === 1 && s.liveTextureBytes > 0, `after restore: ${JSON.stringify(s)}`);
  err = null;
  await session.run({ x }).catch((e) => { err = e; });
  check(err?.status === S.CONTEXT_LOST && /before the GL context was lost/.test(err.message), `old feed: ${err}`);
  const up0 = t2.stats().bytesUploaded;
  const x2 = t2.tensor(xv, [4, MK]);
  for (let i = 0; i < 3; i++) {
    const o = await session.run({ x: x2 });
    close(await o.y.data(), mlpRef(xv, 4), 1e-5, `after restore, run ${i}`);
    close(await o.z.data(), mlpRef(xv, 4).map((v) => -v), 1e-5, `z after restore, run ${i}`);
    o.y.dispose();
    o.z.dispose();
  }
  // the runs uploaded only the feed: the weights were back before them
  check(t2.stats().bytesUploaded - up0 === 4 * MK * 4, `uploaded ${t2.stats().bytesUploaded - up0} bytes`);
  for (const t of [x, x2, out.y, out.z]) t.dispose();
  check(t2.stats().liveTextureBytes <= weightBytes, `${t2.stats().liveTextureBytes} live bytes, weights ${weightBytes}`);
  session.dispose();
  check(t2.stats().liveTensors === 0, `${t2.stats().liveTensors} tensors left`);
  t2.dispose();
});

// ---- the CPU device and auto ----

// y = sigmoid(x + B) * x: elementwise only.
const eB = rand(MK, 13);
const elemBytes = () => onnxModel({
  inputs: [['x', ['batch', MK]]],
  outputs: [['y', ['batch', MK]]],
  inits: [['B', [MK], eB]],
  nodes: [['Add', ['x', 'B'], ['s']], ['Sigmoid', ['s'], ['g']], ['Mul', ['g', 'x'], ['y']]],
});

test('build: the threaded engine exactly when the page is cross-origin isolated', async () => {
  const iso = globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
  check(texel.threadsAvailable() === iso, `threadsAvailable ${texel.threadsAvailable()}, isolated ${iso}`);
  check(tx.threads === iso, `tx.threads ${tx.threads} on a page ${iso ? '' : 'not '}isolated`);
  console.log(`  threads: ${tx.threads} (crossOriginIsolated ${globalThis.crossOriginIsolated})`);
  const t1 = await texel.create({ threads: false });
  check(t1.threads === false, 'threads: false gives the single-threaded build');
  close(t1.tensor([1, -2], [2], { device: 'cpu' }).relu().dataSync(), [1, 0], 0, 'single-threaded cpu relu');
  t1.dispose();
});

test('matmul with a residual: relu(a b + bias + residual) on both devices', async () => {
  const av = rand(3 * 16 * 12, 61), bv = rand(12 * 20, 62), cv = rand(20, 63), rv = rand(3 * 16 * 20, 64);
  for (const device of ['gpu', 'cpu']) {
    tx.scope(() => {
      const o = { device };
      const a = tx.tensor(av, [3, 16, 12], o), b = tx.tensor(bv, [12, 20], o);
      const c = tx.tensor(cv, [20], o), r = tx.tensor(rv, [3, 16, 20], o);
      const plain = a.matmul(b, { bias: c }).dataSync();
      const got = a.matmul(b, { bias: c, residual: r, activation: 'relu' }).dataSync();
      close(got, plain.map((v, i) => Math.max(0, v + rv[i])), 1e-5, `${device}: residual`);
    });
  }
});

test('conv with a residual: relu(conv + bias + residual) on both devices, a wrong shape refused', async () => {
  const xv = rand(1 * 8 * 6 * 8, 51), wv = rand(8 * 8 * 9, 52), bv = rand(8, 53), rv = rand(8 * 6 * 8, 54);
  for (const device of ['gpu', 'cpu']) {
    tx.scope(() => {
      const o = { device };
      const x = tx.tensor(xv, [1, 8, 6, 8], o), w = tx.tensor(wv, [8, 8, 3, 3], o);
      const b = tx.tensor(bv, [8], o), r = tx.tensor(rv, [1, 8, 6, 8], o);
      const plain = x.conv(w, { pads: [1, 1, 1, 1], bias: b }).dataSync();
      const got = x.conv(w, { pads: [1, 1, 1, 1], bias: b, residual: r, activation: 'relu' }).dataSync();
      close(got, plain.map((v, i) => Math.max(0, v + rv[i])), 1e-5, `${device}: residual`);
      let msg = '';
      try {
        x.conv(w, { pads: [1, 1, 1, 1], residual: tx.tensor(rv.slice(0, 48), [1, 8, 6, 1], o) });
      } catch (e) {
        msg = String(e.message);
      }
      check(/residual \[1, 8, 6, 1\] must have y's shape \[1, 8, 6, 8\]/.test(msg), `${device}: ${msg}`);
    });
  }
});

test('conv residual_pad (fewer residual channels), resize with a residual, swish: on both devices', async () => {
  const xv = rand(1 * 4 * 6 * 8, 81), wv = rand(6 * 4 * 9, 82), rv = rand(4 * 6 * 8, 83);
  const sv = rand(2 * 3 * 4, 84), qv = rand(2 * 6 * 8, 85);
  for (const device of ['gpu', 'cpu']) {
    tx.scope(() => {
      const o = { device };
      const x = tx.tensor(xv, [1, 4, 6, 8], o), w = tx.tensor(wv, [6, 4, 3, 3], o);
      const r = tx.tensor(rv, [1, 4, 6, 8], o);
      const plain = x.conv(w, { pads: [1, 1, 1, 1] }).dataSync();
      const got = x.conv(w, { pads: [1, 1, 1, 1], residual: r, residual_pad: true }).dataSync();
      close(got, plain.map((v, i) => v + (i < rv.length ? rv[i] : 0)), 1e-5, `${device}: residual_pad`);
      throwsTexel(() => x.conv(w, { pads: [1, 1, 1, 1], residual: r }), S.SHAPE_MISMATCH,
        "residual [1, 4, 6, 8] must have y's shape [1, 6, 6, 8]");
      const s = tx.tensor(sv, [1, 2, 3, 4], o), q = tx.tensor(qv, [1, 2, 6, 8], o);
      const up = s.resize({ scales: [1, 1, 2, 2] }).dataSync();
      close(s.resize({ scales: [1, 1, 2, 2], residual: q }).dataSync(), up.map((v, i) => v + qv[i]), 1e-6,
        `${device}: resize + residual`);
      const sw = s.swish({ alpha: 1.5 }).dataSync();
      close(sw, sv.map((v) => v / (1 + Math.exp(-1.5 * v))), 1e-5, `${device}: swish`);
    });
  }
});

test('conv and matmul fuse activations with alpha / beta (leakyRelu, hardSigmoid) on both devices', async () => {
  const xv = rand(1 * 8 * 6 * 8, 61), wv = rand(8 * 8 * 9, 62), bv = rand(8, 63);
  const av = rand(9 * 7, 64), mv = rand(7 * 5, 65);
  const leaky = (v) => (v < 0 ? 0.1 * v : v), hsig = (v) => Math.min(1, Math.max(0, v / 6 + 0.5));
  for (const device of ['gpu', 'cpu']) {
    tx.scope(() => {
      const o = { device };
      const x = tx.tensor(xv, [1, 8, 6, 8], o), w = tx.tensor(wv, [8, 8, 3, 3], o), b = tx.tensor(bv, [8], o);
      const plain = x.conv(w, { pads: [1, 1, 1, 1], bias: b }).dataSync();
      const got = x.conv(w, { pads: [1, 1, 1, 1], bias: b, activation: 'leaky_relu', alpha: 0.1 }).dataSync();
      close(got, plain.map(leaky), 1e-5, `${device}: conv + leaky_relu`);
      check(plain.some((v) => v < 0), 'the conv has negative outputs for the slope to act on');
      const a = tx.tensor(av, [9, 7], o), m = tx.tensor(mv, [7, 5], o);
      const p = a.matmul(m).dataSync();
      const h = a.matmul(m, { activation: 'hard_sigmoid', alpha: 1 / 6, beta: 0.5 }).dataSync();
      close(h, p.map(hsig), 1e-5, `${device}: matmul + hard_sigmoid`);
      throwsTexel(() => x.conv(w, { activation: 'leaky_relu', alpha: NaN }), S.INVALID_ARGUMENT,
        "leaky_relu's alpha nan and beta 0 must be finite");
    });
  }
});

test('conv reads its input through x_affine (x * x_scale + x_shift inside x, padding 0) on both devices', async () => {
  const xv = rand(2 * 6 * 5 * 8, 71), wv = rand(6 * 9, 72), dv = rand(4 * 6 * 9, 73);
  const aff = xv.map((v) => 0.5 * v + 1);
  for (const device of ['gpu', 'cpu']) {
    tx.scope(() => {
      const o = { device };
      const x = tx.tensor(xv, [2, 6, 5, 8], o), xa = tx.tensor(aff, [2, 6, 5, 8], o);
      const dw = tx.tensor(wv, [6, 1, 3, 3], o), dense = tx.tensor(dv, [4, 6, 3, 3], o);
      for (const [w, opt, what] of [[dw, { group: 6 }, 'depthwise'], [dense, {}, 'dense']]) {
        const base = { pads: [1, 1, 1, 1], ...opt };
        const want = xa.conv(w, base).dataSync();
        const got = x.conv(w, { ...base, x_affine: true, x_scale: 0.5, x_shift: 1 }).dataSync();
        close(got, want, 1e-5, `${device}: ${what} conv with x_affine`);
      }
      throwsTexel(() => x.conv(dw, { group: 6, x_affine: true, x_scale: Infinity }), S.INVALID_ARGUMENT,
        "x_affine's x_scale inf and x_shift 0 must be finite");
    });
  }
});

test('build: without wasm SIMD (texel-scalar.wasm) the CPU device gives the SIMD build\'s results', async () => {
  check(texel.simdAvailable() === true, 'Chromium validates wasm SIMD');
  check(tx.simd === true, `tx.simd ${tx.simd}`);
  const ts = await texel.create({ simd: false, threads: false });
  check(ts.simd === false && ts.threads === false, `simd ${ts.simd} threads ${ts.threads}`);
  const av = rand(37 * 53, 41), bv = rand(53 * 29, 42), xv = rand(2 * 8 * 9 * 9, 43), wv = rand(16 * 8 * 9, 44);
  const run = (t) => t.scope(() => {
    const o = { device: 'cpu' };
    const a = t.tensor(av, [37, 53], o), b = t.tensor(bv, [53, 29], o);
    const x = t.tensor(xv, [2, 8, 9, 9], o), w = t.tensor(wv, [16, 8, 3, 3], o);
    return [a.matmul(b, { activation: 'relu' }).softmax({ axis: -1 }).dataSync(),
      x.conv(w, { pads: [1, 1, 1, 1] }).sigmoid().dataSync(),
      a.reduce_sum({ axes: [1] }).dataSync()];
  });
  const want = run(tx), got = run(ts);
  for (let i = 0; i < want.length; i++) close(got[i], want[i], 1e-5, `result ${i}: scalar vs SIMD`);
  ts.dispose();
});

test('tensors on the CPU device: device, to(), ops and reads match the GPU, stats', async () => {
  const s0 = tx.stats();
  tx.scope(() => {
    const av = rand(64 * 33, 31), bv = rand(33, 32);
    const ac = tx.tensor(av, [64, 33], { device: 'cpu' }), bc = tx.tensor(bv, [33], { device: 'cpu' });
    const ag = tx.tensor(av, [64, 33]), bg = ac.to('gpu').reshape([64, 33]).add(0);
    check(ac.device === 'cpu' && ag.device === 'gpu' && bg.device === 'gpu', `devices ${ac.device} ${ag.device} ${bg.device}`);
    check(tx.tensor(Int32Array.from([1, 2]), [2], { dtype: 'int32', device: 'cpu' }).dtype === 'int32', 'dtype in options');
    const yc = ac.add(bc).sigmoid().mul(ac), yg = ag.add(bc.to('gpu')).sigmoid().mul(ag);
    check(yc.device === 'cpu', `cpu op output on ${yc.device}`);
    close(yc.dataSync(), yg.dataSync(), 1e-5, 'cpu vs gpu');
    throwsTexel(() => ac.add(ag), texel.Status.DEVICE_MISMATCH);
    throwsTexel(() => tx.tensor([1], [1], { device: 'tpu' }), texel.Status.INVALID_ARGUMENT, 'tpu');
    const s1 = tx.stats();
    check(s1.cpuOps - s0.cpuOps >= 3, `cpuOps ${s0.cpuOps} -> ${s1.cpuOps}`);
    check(s1.liveHostBytes >= 2 * 64 * 33 * 4, `liveHostBytes ${s1.liveHostBytes}`);
  });
  const p = tx.tensor(rand(100, 33), [100], { device: 'cpu' });
  close(await p.data(), rand(100, 33), 0, 'async read of a cpu tensor');
  p.dispose();
  // <=: the FinalizationRegistry may free earlier tests' forgotten tensors meanwhile
  check(tx.stats().liveHostBytes <= s0.liveHostBytes, `host bytes left: ${tx.stats().liveHostBytes} (before ${s0.liveHostBytes})`);
});

test("loadModel device 'cpu' gives the 'gpu' results (elementwise model, MLP)", async () => {
  for (const [name, bytes, ref] of [
    ['elementwise', elemBytes(), (xv, m) => Float32Array.from(xv, (v, i) => v / (1 + Math.exp(-(v + eB[i % MK]))))],
    ['mlp', mlpBytes(), mlpRef]]) {
    const cpu = await tx.loadModel(bytes, { device: 'cpu' });
    const gpu = await tx.loadModel(bytes, { device: 'gpu' });
    check(cpu.device === 'cpu' && gpu.device === 'gpu', `${name}: devices ${cpu.device} ${gpu.device}`);
    check(/fixed/.test(cpu.deviceReason), `${name}: reason "${cpu.deviceReason}"`);
    const xv = rand(5 * MK, 41);
    const x = tx.tensor(xv, [5, MK], { device: 'cpu' });
    const oc = await cpu.run({ x }), og = await gpu.run({ x });
    const yc = oc.y.dataSync();
    check(oc.y.device === 'cpu' && og.y.device === 'gpu', `${name}: outputs on ${oc.y.device}, ${og.y.device}`);
    close(yc, await og.y.data(), 1e-5, `${name}: cpu vs gpu`);
    close(yc, ref(xv, 5), 1e-5, `${name}: cpu vs reference`);
    const st = cpu.stats();
    check(st.runsCpu === 1 && st.runsGpu === 0, `${name}: runs ${JSON.stringify(st)}`);
    for (const t of [x, ...Object.values(oc), ...Object.values(og)]) t.dispose();
    cpu.dispose();
    gpu.dispose();
  }
});

test("auto on a software rasterizer (SwiftShader): the CPU, saying why", async () => {
  texel.forgetDeviceChoices();
  const s = await tx.loadModel(elemBytes()); // device 'auto' is the default
  const soft = /swiftshader|llvmpipe|software/i.test(tx.caps.renderer);
  console.log(`  auto: ${s.device}: ${s.deviceReason}`);
  if (soft) {
    check(s.device === 'cpu' && /^software rasterizer/.test(s.deviceReason), `${s.device}: ${s.deviceReason}`);
  }
  const x = tx.tensor(rand(2 * MK, 3), [2, MK]);
  for (let i = 0; i < 2; i++) { // the probe that confirms the name runs before the second run
    const o = await s.run({ x });
    check(o.y.device === s.device, `output on ${o.y.device}`);
    o.y.dispose();
  }
  x.dispose();
  if (soft) {
    console.log(`  after two runs: ${s.deviceReason}`);
    check(s.stats().decided && s.device === 'cpu' && /probe: matmul/.test(s.deviceReason),
      `after two runs: ${s.device}: ${s.deviceReason}`);
  }
  s.dispose();
  check(!Object.keys(localStorage).some((k) => k.startsWith('texel-device:') && k !== 'texel-device:software'),
    'a software-rasterizer decision is not stored per model (it is no measurement)');
});

test("auto: a probed software rasterizer is the origin's for a day; no WebGL2 context is made for it", async () => {
  texel.forgetDeviceChoices();
  const key = 'texel-device:software';
  const x = new Float32Array(2 * MK).map((_, i) => Math.sin(i));
  const runs = async (t, n) => {
    const s = await t.loadModel(elemBytes());
    await t._warm; // the worker's look, before the second run
    const xt = t.tensor(x, [2, MK], { device: 'cpu' });
    for (let i = 0; i < n; i++) (await s.run({ x: xt })).y.dispose();
    xt.dispose();
    return s;
  };
  const t1 = await texel.create({ device: 'cpu' });
  try {
    const s1 = await runs(t1, 2); // the context and the probe come before the second run
    if (!/^software rasterizer .*probe/.test(s1.deviceReason)) {
      console.log(`  not a software rasterizer here (${s1.deviceReason}): nothing to remember`);
      check(localStorage.getItem(key) === null, 'stored for a GPU');
      return;
    }
    const kept = JSON.parse(localStorage.getItem(key) ?? 'null');
    check(kept?.renderer === t1.caps.renderer && Date.now() - kept.at < 60e3, `kept ${JSON.stringify(kept)}`);
  } finally {
    t1.dispose();
  }
  const t2 = await texel.create({ device: 'cpu' });
  try {
    const s2 = await runs(t2, 3);
    check(s2.device === 'cpu' && s2.stats().decided && /^software rasterizer .*remembered/.test(s2.deviceReason) && !t2.glMade,
      `next page: ${s2.device}: ${s2.deviceReason}; context made ${t2.glMade}`);
    console.log(`  next page: ${s2.deviceReason}`);
  } finally {
    t2.dispose();
  }
  // a day old: auto asks the renderer again
  localStorage.setItem(key, JSON.stringify({ ...JSON.parse(localStorage.getItem(key)), at: Date.now() - 25 * 3600e3 }));
  const t3 = await texel.create({ device: 'cpu' });
  try {
    const s3 = await runs(t3, 1);
    check(/no GL context yet/.test(s3.deviceReason), `expired: ${s3.deviceReason}`);
    // a context that names another renderer forgets it
    localStorage.setItem(key, JSON.stringify({ renderer: 'Some Other GPU', at: Date.now() }));
    t3.tensor([1], [1], { device: 'gpu' }).dispose();
    check(t3.glMade && localStorage.getItem(key) === null, `another renderer kept: ${localStorage.getItem(key)}`);
  } finally {
    t3.dispose();
    texel.forgetDeviceChoices();
  }
});

// Worker replaced for f's time (texel.js's worker that looks at the GPU)
async function withWorker(Fake, f) {
  const real = globalThis.Worker;
  globalThis.Worker = Fake;
  try {
    return await f();
  } finally {
    globalThis.Worker = real;
  }
}
const NoWorker = function () { throw new DOMException('blocked by the test', 'SecurityError'); };

// no worker to look at the GPU first (a CSP without blob: workers): auto
// makes texel's context before its second run
test('create(): the WebGL2 context comes at the first GPU use; CPU work and auto\'s first run never make it', () => withWorker(NoWorker, async () => {
  texel.forgetDeviceChoices();
  const t = await texel.create({ device: 'cpu' });
  try {
    check(!t.glMade && t.stats().glStartMs === 0, 'made by create()');
    const a = t.tensor([1, 2, 3, 4], [2, 2]);
    close(a.matmul(a).dataSync(), [7, 10, 15, 22], 0, 'cpu matmul');
    const s = await t.loadModel(elemBytes());
    check(s.device === 'cpu' && /no GL context yet/.test(s.deviceReason), `loaded: ${s.device}: ${s.deviceReason}`);
    const x = t.tensor(rand(2 * MK, 3), [2, MK]);
    const o1 = await s.run({ x });
    check(!t.glMade, `made by auto's first run (${s.deviceReason})`);
    const o2 = await s.run({ x }); // the context comes before the second
    check(t.glMade && t.stats().glStartMs > 0, `second run: made ${t.glMade}, ${t.stats().glStartMs} ms`);
    console.log(`  made at auto's second run in ${t.stats().glStartMs.toFixed(0)} ms: ${s.deviceReason}`);
    close(o2.y.dataSync(), o1.y.dataSync(), 0, 'the runs agree');
    if (/swiftshader/i.test(t.caps.renderer))
      check(/^software rasterizer/.test(s.deviceReason), `after two runs: ${s.deviceReason}`);
    const g = a.to('gpu');
    close(g.matmul(g).dataSync(), [7, 10, 15, 22], 0, 'gpu matmul');
    check(t.caps.float32Render && !t.caps.glPending && !t.caps.noGpu, `caps ${JSON.stringify(t.caps)}`);
    for (const v of [a, x, o1.y, o2.y, g]) v.dispose();
    s.dispose();
  } finally {
    t.dispose();
  }
  // the default device is the GPU: its first tensor makes it; reading caps does too
  const d = await texel.create();
  check(!d.glMade, 'default create() made it');
  d.tensor([1, 2]).dispose();
  check(d.glMade, 'a GPU tensor did not make it');
  d.dispose();
  const c = await texel.create();
  check(c.caps.float32Render && c.glMade, 'caps did not make it');
  c.dispose();
  // never made: disposed cleanly, its caps still say so
  const n = await texel.create();
  n.dispose();
  check(n.caps.glPending === true && !n.glMade, `never made: ${JSON.stringify(n.caps)}`);
  // asked for the GPU: made at once
  const gp = await texel.create({ device: 'gpu' });
  check(gp.glMade, "device 'gpu' waited");
  gp.dispose();
}));

test("auto: a worker looks at the GPU off the page's thread; the CPU serves until it answers", async () => {
  texel.forgetDeviceChoices();
  const x0 = rand(2 * MK, 3);
  // a worker that never answers: every run on the CPU, no context made;
  // dispose() ends it
  let ended = 0;
  class Silent { terminate() { ended++; } postMessage() {} }
  await withWorker(Silent, async () => {
    const t = await texel.create({ device: 'cpu' });
    try {
      const s = await t.loadModel(elemBytes());
      const x = t.tensor(x0, [2, MK]);
      for (let i = 0; i < 4; i++) (await s.run({ x })).y.dispose();
      check(s.device === 'cpu' && !s.stats().decided && s.stats().runsCpu === 4 && /looks at the GPU/.test(s.deviceReason) && !t.glMade,
        `while it looks: ${s.deviceReason}; made ${t.glMade}`);
      x.dispose();
    } finally {
      t.dispose();
    }
    check(ended === 1, `the silent worker terminated ${ended} times at dispose`);
  });
  // the real one
  const t = await texel.create({ device: 'cpu' });
  try {
    const s = await t.loadModel(elemBytes());
    const x = t.tensor(x0, [2, MK]);
    const o1 = await s.run({ x });
    const seen = await t._warm;
    check(seen && seen.renderer.length > 0 && seen.gflops > 0 && seen.ms >= 0, `the worker saw ${JSON.stringify(seen)}`);
    const o2 = await s.run({ x });
    close(o2.y.dataSync(), o1.y.dataSync(), 0, 'the runs agree');
    console.log(`  worker: ${seen.renderer}, its context ${seen.ms.toFixed(0)} ms, ${seen.gflops.toFixed(1)} GFLOP/s; ${s.deviceReason}`);
    if (/swiftshader/i.test(seen.renderer)) {
      check(s.device === 'cpu' && s.stats().decided && /^software rasterizer .*fragment shader at .*no GL context made/.test(s.deviceReason) && !t.glMade,
        `software: ${s.deviceReason}; made ${t.glMade}`);
      const kept = JSON.parse(localStorage.getItem('texel-device:software') ?? 'null');
      check(kept?.renderer === seen.renderer, `kept ${JSON.stringify(kept)}`);
    } else {
      check(t.glMade, `a GPU (${seen.renderer}): the context before the second run`);
    }
    check(t.caps.renderer === seen.renderer, `texel's context names ${t.caps.renderer}`);
    for (const v of [x, o1.y, o2.y]) v.dispose();
    s.dispose();
  } finally {
    t.dispose();
    texel.forgetDeviceChoices();
  }
});

test("create({device: 'gpu'}) and a GPU session let a worker start the GPU process first, then make the context", async () => {
  let ended = 0, made = 0;
  class Silent { constructor() { made++; } terminate() { ended++; } postMessage() {} }
  texel._forgetGpuStarted(); // as on a page's first context
  const t = await withWorker(Silent, () => texel.create({ device: 'gpu' })); // waits 3 s for it
  try {
    check(made === 1 && ended === 1 && t.glMade, `worker made ${made}, ended ${ended}; context ${t.glMade}`);
  } finally {
    t.dispose();
  }
  // once a texel context has made one, the GPU process runs: no look
  const again = await withWorker(Silent, () => texel.create({ device: 'gpu' }));
  again.dispose();
  texel._forgetGpuStarted();
  const c = await withWorker(Silent, () => texel.create()); // made later: no look at create()
  c.dispose();
  const n = await withWorker(NoWorker, () => texel.create({ device: 'gpu' }));
  check(made === 1 && n.glMade, `looked again (${made} workers), or no worker failed create`);
  n.dispose();
  // a GPU session on a context whose WebGL2 context is still to come: the same
  texel._forgetGpuStarted();
  const l = await texel.create();
  try {
    const s = await withWorker(Silent, () => l.loadModel(elemBytes(), { device: 'gpu' }));
    check(made === 2 && ended === 2 && l.glMade && s.device === 'gpu',
      `gpu session: workers made ${made}, ended ${ended}; context ${l.glMade}; ${s.device}`);
    s.dispose();
  } finally {
    l.dispose();
  }
});

// (no worker: its OffscreenCanvas would give a context)
test('a browser that gives no WebGL2 context at the first GPU use: the CPU device carries on, auto stays there', () => withWorker(NoWorker, async () => {
  texel.forgetDeviceChoices();
  const real = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (kind, ...rest) { return kind === 'webgl2' ? null : real.call(this, kind, ...rest); };
  let t;
  try {
    t = await texel.create({ device: 'cpu' });
    const s = await t.loadModel(elemBytes());
    const x = t.tensor(rand(2 * MK, 4), [2, MK]);
    const want = (await s.run({ x })).y.dataSync();
    for (let i = 0; i < 2; i++) close((await s.run({ x })).y.dataSync(), want, 0, `run ${i + 2}`);
    check(s.device === 'cpu' && s.stats().decided && /^no GPU context \(this browser gave no WebGL2/.test(s.deviceReason),
      `auto: ${s.device}: ${s.deviceReason}`);
    throwsTexel(() => x.to('gpu'), S.UNSUPPORTED, 'no GPU context', 'gave no WebGL2 context');
    throwsTexel(() => t.tensor([1], [1], { device: 'gpu' }), S.UNSUPPORTED, 'gave no WebGL2 context');
    check(t.caps.noGpu && !t.glMade, `caps ${JSON.stringify(t.caps)}`);
    close(x.add(1).dataSync(), Float32Array.from(x.dataSync(), (v) => v + 1), 0, 'cpu add after the refusals');
    x.dispose();
    s.dispose();
  } finally {
    HTMLCanvasElement.prototype.getContext = real;
    t?.dispose();
  }
}));

test('auto remembers its measured decision in localStorage per model + renderer', async () => {
  texel.forgetDeviceChoices();
  // measure even on SwiftShader (the engine's TEXEL_AUTO_MEASURE); k given, so
  // that the trial's GPU runs specialize after 2 calls (the default k makes a
  // small draw wait up to 64 there, and the trial with it)
  const t2 = await texel.create({ env: { TEXEL_AUTO_MEASURE: '1', TEXEL_SPECIALIZE_AFTER: '2' } });
  try {
    const bytes = elemBytes();
    const s = await t2.loadModel(bytes, { device: 'auto' });
    check(/^trial/.test(s.deviceReason), `first: ${s.deviceReason}`);
    const x = t2.tensor(rand(4 * MK, 5), [4, MK]);
    const seen = [];
    for (let i = 0; i < 12 && !s.stats().decided; i++) {
      seen.push(s.device);
      const o = await s.run({ x });
      close(await o.y.data(), (await (await t2.loadModel(bytes, { device: 'gpu' })).run({ x })).y.dataSync(), 1e-5, `trial run ${i}`);
      o.y.dispose();
    }
    const st = s.stats();
    check(st.decided && /^measured/.test(st.reason), `after ${seen.join(',')}: ${JSON.stringify(st)}`);
    check(seen.includes('cpu') && seen.includes('gpu'), `trial devices ${seen}`);
    const keys = Object.keys(localStorage).filter((k) => k.startsWith('texel-device:'));
    check(keys.length === 1 && keys[0].endsWith(`:${t2.caps.renderer}`), `stored keys ${keys}`);
    const stored = JSON.parse(localStorage.getItem(keys[0]));
    // the decision, not the device of the trial's last run (that was stored before)
    // (a tie within the JSON's rounding may go either way)
    const decided = st.nextDevice;
    const tie = Math.abs(st.gpuMs - st.cpuMs) < 0.002;
    check((tie || decided === (st.gpuMs < st.cpuMs ? 'gpu' : 'cpu')) && stored.device === decided && s.device === decided,
      `stored ${JSON.stringify(stored)}, next ${st.nextDevice}, measured gpu ${st.gpuMs} cpu ${st.cpuMs}`);
    console.log(`  measured: ${st.reason}; stored ${JSON.stringify(stored)}`);
    const again = await t2.loadModel(bytes);
    check(again.device === decided && /^remembered/.test(again.deviceReason) && again.stats().decided,
      `second load: ${again.device}: ${again.deviceReason}`);
    // the stored choice is what decides: flip it
    const other = decided === 'gpu' ? 'cpu' : 'gpu';
    localStorage.setItem(keys[0], JSON.stringify({ ...stored, device: other }));
    const flipped = await t2.loadModel(bytes);
    check(flipped.device === other, `flipped: ${flipped.device}: ${flipped.deviceReason}`);
    // another model is not remembered
    const mlp = await t2.loadModel(mlpBytes());
    check(/^trial/.test(mlp.deviceReason), `other model: ${mlp.deviceReason}`);
    // fixed devices neither read nor write the memory
    const fixed = await t2.loadModel(bytes, { device: 'cpu' });
    check(fixed.device === 'cpu' && /fixed/.test(fixed.deviceReason), `fixed: ${fixed.deviceReason}`);
    x.dispose();
    // a context whose WebGL2 context is still to come: a worker's context
    // names the renderer, and a remembered CPU makes none of texel's
    const lazy = async (want) => {
      localStorage.setItem(keys[0], JSON.stringify({ ...stored, device: want }));
      const t = await texel.create();
      try {
        const r = await t.loadModel(bytes);
        return { device: r.device, reason: r.deviceReason, made: t.glMade };
      } finally {
        t.dispose();
      }
    };
    let r = await lazy('cpu');
    check(r.device === 'cpu' && /^remembered/.test(r.reason) && !r.made, `lazy, cpu remembered: ${JSON.stringify(r)}`);
    r = await lazy('gpu');
    check(r.device === 'gpu' && /^remembered/.test(r.reason) && r.made, `lazy, gpu remembered: ${JSON.stringify(r)}`);
    r = await withWorker(NoWorker, () => lazy('cpu')); // no worker (a CSP without blob: workers): texel's context asks
    check(r.device === 'cpu' && /^remembered/.test(r.reason) && r.made, `lazy, no worker: ${JSON.stringify(r)}`);
  } finally {
    t2.dispose();
    (await texel.create({ env: { TEXEL_AUTO_MEASURE: null, TEXEL_SPECIALIZE_AFTER: null } })).dispose();
    texel.forgetDeviceChoices();
  }
});

// ---- training (engine/grad/) ----

const S = texel.Status;

function refSceGrad(xv, wv, lab, m, k, n) { // d mean sce(x W) / dW
  const z = refMatmul(xv, wv, m, k, n);
  const d = new Float32Array(m * n);
  let loss = 0;
  for (let i = 0; i < m; i++) {
    let mx = -Infinity, se = 0;
    for (let j = 0; j < n; j++) mx = Math.max(mx, z[i * n + j]);
    for (let j = 0; j < n; j++) se += Math.exp(z[i * n + j] - mx);
    loss -= z[i * n + lab[i]] - mx - Math.log(se);
    for (let j = 0; j < n; j++) d[i * n + j] = (Math.exp(z[i * n + j] - mx) / se - (j === lab[i])) / m;
  }
  const gw = new Float32Array(k * n);
  for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let i = 0; i < m; i++) s += xv[i * k + p] * d[i * n + j];
    gw[p * n + j] = s;
  }
  return { loss: loss / m, gw };
}

test('training: valueAndGrad / grad of matmul + softmaxCrossEntropy against the analytic gradient', async () => {
  for (const device of ['gpu', 'cpu']) {
    const xv = rand(12, 3), wv = rand(15, 4), lab = Int32Array.from([0, 4, 2, 1]);
    const x = tx.tensor(xv, [4, 3], { device }), w = tx.variable(wv, [3, 5], { device });
    const y = tx.tensor(lab, [4], { device, dtype: 'int32' });
    const before = tx.stats().jsLiveTensors;
    const f = (wt) => tx.scope(() => tx.softmaxCrossEntropy(x.matmul(wt), y));
    const { value, grads } = tx.valueAndGrad(f)(w);
    const want = refSceGrad(xv, wv, lab, 4, 3, 5);
    close(value.dataSync(), [want.loss], 1e-5, `${device}: loss`);
    check(grads.length === 1 && grads[0].shape.join() === '3,5', `${device}: grads ${grads}`);
    close(grads[0].dataSync(), want.gw, 1e-5, `${device}: dW`);
    const g2 = tx.grad(f)(w);
    close(g2.dataSync(), want.gw, 1e-5, `${device}: grad()`);
    for (const t of [value, grads[0], g2]) t.dispose();
    check(tx.stats().jsLiveTensors === before, `${device}: ${tx.stats().jsLiveTensors - before} tensors left`);
    throwsTexel(() => tx.valueAndGrad(() => 3)(w), S.INVALID_ARGUMENT, 'must return a Tensor');
    // resize in linear mode with tf_half_pixel_for_nearest coordinates (1, 4) has no gradient
    const ramp = tx.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [1, 1, 4, 4], { device });
    throwsTexel(() => tx.grad((a) => a.resize({ mode: 1, coord: 4, scales: [1, 1, 2, 2] }).reduce_sum())(ramp),
      S.UNSUPPORTED, 'resize');
    // an overlapping max pool has one: the window maxima's sum spreads ones over the argmaxes
    const mp = tx.grad((a) => a.maxpool({ kernelShape: [3, 3] }).reduce_sum())(ramp);
    close(mp.dataSync(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1], 0, `${device}: maxpool grad`);
    for (const t of [ramp, mp]) t.dispose();
    throwsTexel(() => tx.softmaxCrossEntropy(x, x), S.DTYPE_MISMATCH, 'labels');
    for (const t of [x, w, y]) t.dispose();
  }
});

test('training: optimizer.minimize (adam, momentum) fits a linear regression (sine rows: collinear, so the predictions are checked); step errors', async () => {
  for (const kind of ['adam', 'momentum']) {
    const xv = rand(32, 7), trueW = [1.5, -2, 0.5, 3];
    const yv = Float32Array.from({ length: 8 }, (_, i) => trueW.reduce((s, wj, j) => s + wj * xv[i * 4 + j], 0));
    const x = tx.tensor(xv, [8, 4]), y = tx.tensor(yv, [8, 1]);
    const w = tx.variable(new Float32Array(4), [4, 1]);
    const opt = tx.optimizer(kind, { lr: kind === 'adam' ? 0.1 : 0.05 });
    let first = 0, last = 0;
    for (let i = 0; i < 200; i++) {
      const l = opt.minimize(() => tx.scope(() => tx.mseLoss(x.matmul(w), y)), [w]);
      if (i === 0) first = l.dataSync()[0];
      last = l.dataSync()[0];
      l.dispose();
    }
    check(last < first * 1e-3, `${kind}: loss ${first} -> ${last}`);
    close(refMatmul(xv, w.dataSync(), 8, 4, 1), yv, 2e-2, `${kind}: fitted predictions`);
    throwsTexel(() => opt.step([w], [w, w]), S.INVALID_ARGUMENT, 'one length');
    opt.dispose();
    throwsTexel(() => opt.step([w], [w]), S.INVALID_ARGUMENT, 'disposed');
    for (const t of [x, y, w]) t.dispose();
  }
  throwsTexel(() => tx.optimizer('rmsprop'), S.INVALID_ARGUMENT, 'unknown kind');
  throwsTexel(() => tx.optimizer('sgd', { lr: -1 }), S.INVALID_ARGUMENT, 'lr');
});

test('fine-tuning: session.weight, gradients through an async run, a step the session sees', async () => {
  const session = await tx.loadModel(mlpBytes(), { device: 'gpu' });
  const W = session.weight('W'), B = session.weight('B');
  throwsTexel(() => session.weight('x'), S.INVALID_ARGUMENT, 'not an initializer');
  const xv = rand(3 * MK, 51), rv = rand(3 * MN, 52);
  const x = tx.tensor(xv, [3, MK]), r = tx.tensor(rv, [3, MN]);
  let y0t;
  const { value, grads } = await tx.valueAndGrad(async (w, b) => {
    y0t = (await session.run({ x }, { fetches: ['y'] })).y;
    return tx.scope(() => y0t.mul(r).reduce_sum());
  })(W, B);
  const y0 = mlpRef(xv, 3), db = new Float32Array(MN);
  for (let i = 0; i < 3; i++) for (let j = 0; j < MN; j++) if (y0[i * MN + j] > 0) db[j] += rv[i * MN + j];
  close(grads[1].dataSync(), db, 1e-5, 'dB');
  const opt = tx.optimizer('sgd', { lr: 0.5 });
  opt.step([W, B], grads);
  const w1 = W.dataSync(), b1 = B.dataSync();
  close(b1, Array.from(mB, (v, j) => v - 0.5 * db[j]), 1e-5, "the session's B after a step");
  const out = await session.run({ x }, { fetches: ['y'] });
  close(out.y.dataSync(), refMatmul(xv, w1, 3, MK, MN, { bias: b1, relu: true }), 1e-5, 'run after the step');
  W.dispose(); // only drops the handle: the session still runs
  const again = await session.run({ x }, { fetches: ['y'] });
  close(again.y.dataSync(), out.y.dataSync(), 0, 'run after disposing the borrowed handle');
  for (const t of [value, ...grads, x, r, y0t, out.y, again.y, B]) t.dispose();
  opt.dispose();
  session.dispose();
});

(async () => {
  tx = await texel.create();
  console.log(`renderer: ${tx.caps.renderer}; ${tx.caps.version}`);
  for (const t of tests) {
    if (filter && !t.name.includes(filter)) continue;
    try {
      await t.fn();
      passed++;
      console.log(`ok   ${t.name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${t.name}\n  ${e instanceof CheckError ? e.message : e.stack || e}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  window.__result = { status: failed ? 1 : 0 };
})().catch((e) => {
  console.log(`api tests crashed: ${e.stack || e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  window.__result = { status: 1 };
});
