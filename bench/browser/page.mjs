// The in-page half of the browser benchmark: runs every case of the shared
// table (fetched as /cases.json, generated from bench/cases.c) with TF.js
// (webgl and wasm) and, when the runner serves a texel web build, with texel
// (WebGL2 and its CPU device: wasm SIMD, one thread like TF.js wasm on a page
// that is not cross-origin isolated) — all in this one page, so ratios come
// from the same browser run. Per case: texel WebGL, TF.js webgl, then texel
// cpu and TF.js wasm sample by sample in turn (timeTogether). Each engine
// keeps one context for the page (texelContexts; TF.js its backend).
/* global tf */
const log = (s) => { document.getElementById('log').textContent += '\n' + s; };
const params = new URLSearchParams(location.search);
const RUNS = Number(params.get('runs') || 15);
// matmul-tm=1|4|8: texel's matmul tiling forced (a row per kernel variant):
// handed over as a remembered choice of this renderer for every size class
const MATMUL_TM = Number(params.get('matmul-tm') || 0);
// trim=1: free texel's pooled textures after each case. By default texel
// keeps them for the page, as TF.js keeps its texture cache
// (WEBGL_DELETE_TEXTURE_THRESHOLD -1: never deleted): a case's first call
// then meets the pools the cases before it left, in both engines.
const TRIM = params.get('trim') === '1';
// engines=a,b: only these of texel, texel_cpu, tfjs_webgl, tfjs_wasm (default all);
// texel_cpu,tfjs_wasm: the CPU engines without the WebGL engines' work before them.
const ENGINES = (e) => !params.get('engines') || params.get('engines').split(',').includes(e);

function fill(n, seed) {
  // xorshift32: inputs only need to be seeded, not identical to the desktop's
  const v = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    v[i] = (s / 4294967296) * 2 - 1;
  }
  return v;
}
const numel = (shape) => shape.reduce((a, b) => a * b, 1);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// TF.js implementations by case name. Shapes come from the shared table.
// Convs run NHWC with HWIO filters, TF.js's native layout; inputs are made
// from the NCHW shapes of the table by tfShapes.
const nhwc = (s) => (s.length === 4 ? [s[0], s[2], s[3], s[1]] : s);
const hwio = (s) => [s[2], s[3], s[1], s[0]];
const hwcm = (s) => [s[2], s[3], s[0], 1]; // depthwise [C,1,kh,kw] -> [kh,kw,C,1]
const tfCases = {
  matmul: { run: (t) => tf.matMul(t[0], t[1]) },
  add: { run: (t) => tf.add(t[0], t[1]) },
  relu: { run: (t) => tf.relu(t[0]) },
  softmax: { run: (t) => tf.softmax(t[0]) },
  sum: { run: (t) => tf.sum(t[0]) },
  conv2d: { shapes: (s) => [nhwc(s[0]), hwio(s[1]), s[2]],
    run: (t) => tf.relu(tf.add(tf.conv2d(t[0], t[1], 1, 'same'), t[2])) },
  conv1x1: { shapes: (s) => [nhwc(s[0]), hwio(s[1]), s[2]],
    run: (t) => tf.clipByValue(tf.add(tf.conv2d(t[0], t[1], 1, 'valid'), t[2]), 0, 6) },
  depthwise: { shapes: (s) => [nhwc(s[0]), hwcm(s[1]), s[2]],
    run: (t) => tf.relu(tf.add(tf.depthwiseConv2d(t[0], t[1], 1, 'same'), t[2])) },
  mobilenet: {
    shapes: (s) => s.map((sh, i) => (i === 0 ? nhwc(sh) : sh.length === 4 ? (sh[1] === 1 ? hwcm(sh) : hwio(sh)) : sh)),
    run: (t) => tf.tidy(() => {
      const layers = [[false, 2], [true, 1], [false, 1], [true, 2], [false, 1]];
      let x = t[0];
      layers.forEach(([dw, s], l) => {
        const y = dw ? tf.depthwiseConv2d(x, t[1 + 2 * l], s, 'same') : tf.conv2d(x, t[1 + 2 * l], s, 'same');
        x = tf.clipByValue(tf.add(y, t[2 + 2 * l]), 0, 6);
      });
      return x;
    }),
  },
};
// train_mlp_step: the same step with tf.variable weights (made once per input
// set) and tf.train.sgd's minimize.
const tfTrain = new WeakMap();
tfCases.train = {
  run: (t) => {
    let v = tfTrain.get(t[1]);
    if (!v) {
      v = { vars: [1, 2, 3, 4].map((i) => tf.variable(t[i])), opt: tf.train.sgd(1e-3) };
      tfTrain.set(t[1], v);
    }
    const [w1, b1, w2, b2] = v.vars;
    return v.opt.minimize(() => tf.losses.meanSquaredError(t[5],
      tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(t[0], w1), b1)), w2), b2)), true, v.vars);
  },
};
// train_cnn_step: the digits CNN's step, NHWC (the dense layer's rows follow
// TF's flatten order; the step's work is the same).
const tfTrainCnn = new WeakMap();
tfCases.train_cnn = {
  shapes: (s) => s.map((sh, i) => (i === 0 ? nhwc(sh) : sh.length === 4 ? hwio(sh) : sh)),
  run: (t) => {
    let v = tfTrainCnn.get(t[1]);
    if (!v) {
      v = { vars: [1, 2, 3, 4, 5, 6].map((i) => tf.variable(t[i])), opt: tf.train.sgd(1e-3) };
      tfTrainCnn.set(t[1], v);
    }
    const [w1, b1, w2, b2, w3, b3] = v.vars;
    return v.opt.minimize(() => {
      let x = tf.maxPool(tf.relu(tf.add(tf.conv2d(t[0], w1, 1, 'same'), b1)), 2, 2, 'valid');
      x = tf.maxPool(tf.relu(tf.add(tf.conv2d(x, w2, 1, 'same'), b2)), 2, 2, 'valid');
      return tf.losses.meanSquaredError(t[7], tf.add(tf.matMul(tf.reshape(x, [x.shape[0], 64]), w3), b3));
    }, true, v.vars);
  },
};
function tfFor(name) {
  return tfCases[name.replace(/_step$/, '')] || tfCases[name.split('_')[0]];
}

// Steady state: RUNS samples, each the mean of `calls` back-to-back calls
// (run, read, dispose), enough calls for a sample of ~5 ms: the page's clock
// steps by 0.1 ms where it is not cross-origin isolated, too coarse for a
// 0.3 ms case timed one call at a time. Every engine is timed the same way.
// prepare() makes the input tensors from values filled before it (the fill is
// the page's work, not an engine's), times the first call (tensors, run, read)
// and the first ten together (first10_ms: what a short run pays, an engine's
// later compiles included), then calls settle(once) if the engine has one
// (texel: calls until nothing compiles, as `texel bench` does) and returns a
// sampler.
async function prepare(makeInputs, run, read, dispose, settle = null) {
  const t0 = performance.now();
  const inputs = makeInputs();
  const tIn = performance.now();
  const out = run(inputs);
  const tRun = performance.now();
  const values = await read(out);
  const first = performance.now() - t0;
  // where the first call went: making the inputs (upload), issuing the op
  // (compiles), reading the output back (the draws, the read)
  const phases = { inputs_ms: +(tIn - t0).toFixed(2), run_ms: +(tRun - tIn).toFixed(2), read_ms: +(t0 + first - tRun).toFixed(2) };
  dispose([out]);
  const once = async () => {
    const o = run(inputs);
    await read(o);
    dispose([o]);
  };
  let first10 = first;
  for (let i = 1; i < 10; i++) {
    const t = performance.now();
    await once();
    first10 += performance.now() - t;
  }
  const warmup = settle ? await settle(once) : 0;
  const t1 = performance.now();
  await once();
  const probe = performance.now() - t1;
  const calls = probe >= 5 ? 1 : Math.min(100, Math.ceil(5 / Math.max(probe, 0.05)));
  const ms = [];
  return {
    values, // the first call's output: checked against the other engines' (checkCase)
    sample: async () => {
      const t = performance.now();
      for (let k = 0; k < calls; k++) await once();
      ms.push((performance.now() - t) / calls);
    },
    finish: () => {
      dispose(inputs);
      return { first_ms: first, first_phases: phases, first10_ms: first10, warmup_calls: warmup, median_ms: median(ms),
        min_ms: Math.min(...ms), max_ms: Math.max(...ms), calls_per_sample: calls };
    },
  };
}

// Engines of one case timed side by side: sample i of every engine, then
// sample i + 1, so that a burst of load on a shared machine lands on all of
// them alike (the CPU engines, texel cpu and TF.js wasm, run this way).
// Each engine is {prep: async () => sampler or {status}, done?: () => extra fields}.
async function timeTogether(engines) {
  const res = [];
  for (const e of engines) {
    try {
      res.push({ e, p: await e.prep() });
    } catch (err) {
      res.push({ e, r: { status: 'failed: ' + String(err && err.message || err).split('\n')[0] } });
    }
  }
  const live = res.filter((x) => x.p && x.p.sample);
  try {
    for (let i = 0; i < RUNS; i++) for (const x of live) await x.p.sample();
  } catch (err) {
    for (const x of live) x.r = { status: 'failed: ' + String(err && err.message || err).split('\n')[0] };
  }
  return res.map((x) => {
    if (x.r) return (x.e.done && x.e.done(), x.r);
    if (!x.p.sample) return (x.e.done && x.e.done(), x.p);
    const r = { status: 'ok', ...x.p.finish(), ...(x.e.done ? x.e.done() : {}) };
    Object.defineProperty(r, 'values', { value: x.p.values }); // not in the JSON
    return r;
  });
}

// An engine for timeTogether: TF.js with `backend` (one TF.js engine per
// timeTogether: the backend is set once, in prep).
function tfEngine(c, backend) {
  const f = tfFor(c.name);
  return {
    prep: async () => {
      if (!f) return { status: 'no TF.js equivalent' };
      await tf.setBackend(backend);
      await tf.ready();
      const shapes = f.shapes ? f.shapes(c.inputs) : c.inputs;
      const values = shapes.map((shape, i) => fill(numel(shape), i + 1));
      try {
        return await prepare(
          () => shapes.map((shape, i) => tf.tensor(values[i], shape)),
          (t) => f.run(t),
          (o) => o.data(),
          (ts) => ts.forEach((t) => t.dispose()));
      } catch (e) {
        // e.g. TF.js wasm has no Conv2DBackpropFilter kernel: it cannot train the CNN
        return { status: 'failed: ' + String(e && e.message || e).split('\n')[0] };
      }
    },
  };
}

// One texel context per device for the whole page, as an app keeps one and
// as TF.js keeps its backend's: a case's first call then meets a context that
// has drawn before (TF.js's first case and texel's alike pay a fresh one's
// first draws). A case's stats are the counters it added.
const texelContexts = {};
function statsDelta(after, before) {
  const d = {};
  for (const [k, v] of Object.entries(after)) {
    if (typeof v === 'number') d[k] = /live|pooled|peak|pending|waiting|generation|specializedPrograms/i.test(k) ? v : +(v - (before[k] || 0)).toFixed(3);
    else if (v && typeof v === 'object') d[k] = statsDelta(v, before[k] || {});
    else d[k] = v;
  }
  return d;
}
// Calls (at most 80) until one compiles nothing, leaves nothing compiling and
// no call signature waits for more calls before its specialized program (on a
// software rasterizer a small draw's may wait up to 64 calls): the steady
// samples then time the programs a long run ends up with; the transition
// shows in first10_ms and warmup_calls.
async function settleTexel(tx, once) {
  for (let i = 1; i <= 80; i++) {
    const b = tx.stats();
    await once();
    const a = tx.stats();
    if (a.genericCompiles === b.genericCompiles && a.specializedCompiles === b.specializedCompiles &&
        a.specializedReady === b.specializedReady && a.compileFailures === b.compileFailures &&
        a.specializedCompiles <= a.specializedReady + a.compileFailures && !a.specializationsWaiting)
      return i;
  }
  return 80;
}

function texelEngine(c, texel, device = 'gpu') {
  let tx = null;
  let before = null;
  return {
    prep: async () => {
      if (!texel || !texel.cases[c.name]) return { status: 'not available in this build' };
      if (MATMUL_TM && !texelContexts[device]) {
        const probe = await texel.create({ device });
        const key = `texel-kernels:${probe.caps.renderer}`;
        probe.dispose();
        localStorage.setItem(key, JSON.stringify({ 'matmul-tm': Array(32).fill(MATMUL_TM) }));
      }
      tx = texelContexts[device] ||= await texel.create({ device });
      before = tx.stats();
      const values = c.inputs.map((shape, i) => fill(numel(shape), i + 1));
      return prepare(
        () => c.inputs.map((shape, i) => tx.tensor(values[i], shape)),
        (t) => texel.cases[c.name](tx, t),
        (o) => o.data(),
        (ts) => ts.forEach((t) => t.dispose()),
        (once) => settleTexel(tx, once));
    },
    done: () => {
      if (!tx) return {};
      const stats = statsDelta(tx.stats(), before);
      if (TRIM) tx.trim();
      tx = null;
      return { stats };
    },
  };
}

// The engines' first outputs against each other: max |a - b| / (1 + |b|).
// texel's two devices share the inputs on every case; TF.js gets the same
// values in the same order where the layouts agree (not the NHWC convs).
const SAME_LAYOUT = /^(matmul|add|relu|softmax|sum|train_mlp)/;
function maxRel(a, b) {
  if (!a || !b) return null;
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i] - b[i]) / (1 + Math.abs(b[i]));
    if (!(e <= m)) m = Number.isNaN(e) ? Infinity : e;
  }
  return m;
}
function checkCase(entry) {
  const v = (e) => entry[e] && entry[e].values;
  const check = {};
  const pair = (a, b) => {
    const d = maxRel(v(a), v(b));
    if (d !== null) check[`${a}_vs_${b}`] = d;
  };
  pair('texel', 'texel_cpu');
  if (SAME_LAYOUT.test(entry.name)) {
    pair('texel', 'tfjs_webgl');
    pair('texel_cpu', 'tfjs_wasm');
  }
  return check;
}

async function main() {
  const cases = await (await fetch('/cases.json')).json();
  let texel = null;
  if (params.get('texel')) {
    try {
      texel = await import(params.get('texel'));
    } catch (e) {
      log('texel module failed to load: ' + e);
    }
  }
  const gl = document.createElement('canvas').getContext('webgl2');
  const dbg = gl && gl.getExtension('WEBGL_debug_renderer_info');
  const result = {
    runner: 'browser', browser: navigator.userAgent, runs: RUNS,
    renderer: dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : (gl ? gl.getParameter(gl.RENDERER) : 'no webgl2'),
    cases: [],
  };
  // every case of the whole table (not only those run) has both engines'
  // implementation: a case added to bench/cases.c without them would
  // otherwise show as dashes in the browser table
  const all = await (await fetch('/cases-all.json')).json();
  result.missing = all.flatMap((c) => [
    ...(texel && !texel.cases[c.name] ? [`${c.name}: texel`] : []),
    ...(!tfFor(c.name) ? [`${c.name}: TF.js`] : [])]);
  if (tf.wasm) tf.wasm.setWasmPaths('/tfjs-wasm/');
  for (const c of cases) {
    log('case ' + c.name);
    const entry = { name: c.name, what: c.what, flops: c.flops };
    // the WebGL engines one after the other (each its own GL work), then the
    // CPU engines side by side (timeTogether)
    const skipped = { status: 'not in --engines' };
    entry.texel = ENGINES('texel') ? (await timeTogether([texelEngine(c, texel)]))[0] : skipped;
    entry.tfjs_webgl = ENGINES('tfjs_webgl') ? (await timeTogether([tfEngine(c, 'webgl')]))[0] : skipped;
    const cpu = [];
    if (ENGINES('texel_cpu')) cpu.push(texelEngine(c, texel, 'cpu'));
    if (ENGINES('tfjs_wasm')) cpu.push(tfEngine(c, 'wasm'));
    const cr = await timeTogether(cpu);
    entry.texel_cpu = ENGINES('texel_cpu') ? cr.shift() : skipped;
    entry.tfjs_wasm = ENGINES('tfjs_wasm') ? cr.shift() : skipped;
    entry.check = checkCase(entry);
    result.cases.push(entry);
    log(JSON.stringify(entry));
  }
  window.__benchResult = result;
}
main().catch((e) => { window.__benchResult = { error: String(e && e.stack || e) }; });
