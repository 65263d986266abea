// The in-page half of the model benchmark (run.mjs --models): one engine
// configuration per page load (?engine=…), every model of /models.json, the
// same input bytes for all (seeded fill). Reports per model: create ms
// (session/model creation), first-result ms (first run + read back), steady
// median ms (run + read back) and the first output's values (the runner
// compares them with onnxruntime-web wasm's); and ready_ms, the page's time
// to its engine (?model=NAME: that model only, for run.mjs --cold).
const params = new URLSearchParams(location.search);
const ENGINE = params.get('engine');
const RUNS = Number(params.get('runs') || 10);
const log = (s) => { document.getElementById('log').textContent += '\n' + s; };
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

export function fill(n, seed) { // xorshift32 in [0, 1): image-like inputs
  const v = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    v[i] = s / 4294967296;
  }
  return v;
}
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

// engine name → {create(bytes) → {run(input) → Float32Array, dispose}}
async function texelEngine(device, threads, glAtCreate = false, noWorker = false) {
  // noWorker: as on a page whose CSP refuses blob: workers (texel.js then
  // makes no worker's context to start the GPU process off the page's thread)
  if (noWorker) globalThis.Worker = function () { throw new DOMException('blocked', 'SecurityError'); };
  const texel = await import('/texel/texel.js');
  texel.forgetDeviceChoices();
  // glAtCreate: a canvas of the page's makes the WebGL2 context at create()
  // (as every context did before it came at the first GPU use)
  const canvas = glAtCreate ? document.createElement('canvas') : undefined;
  // k=N / always / never (run.mjs --specialize-after): texel's specializeAfter
  const k = params.get('k');
  if (k && !/^(\d+|always|never)$/.test(k)) throw new Error(`k=${k}: want a count, always or never`);
  const kOpt = k ? { specializeAfter: /^\d+$/.test(k) ? Number(k) : k } : {};
  const tx = await texel.create({ threads, ...(canvas ? { canvas } : {}), ...kOpt });
  return {
    info: () => ({ threads: tx.threads, renderer: tx.caps.renderer }),
    // what making texel's WebGL2 context cost, and the worker's (texel.js warmGpu)
    glStart: async () => ({ gl_start_ms: tx.stats().glStartMs, warm: await tx._warm }),
    async create(bytes, m) {
      const s = await tx.loadModel(bytes, { device });
      const name = s.inputs[0].name;
      return {
        device: () => `${s.device} (${s.deviceReason})`,
        async run(x) {
          const t = tx.tensor(x, m.shape, { device: s.device });
          const out = await s.run({ [name]: t });
          const first = out[s.outputs[0].name];
          const v = await first.data();
          t.dispose();
          for (const o of Object.values(out)) o.dispose();
          return v;
        },
        // ?profile=1: n more runs timed step by step (session.profile()),
        // summed per op type (ms a run, share, draws a run, GFLOP/s) and
        // the ten slowest steps
        async profile(x, n) {
          s.profile(true);
          for (let i = 0; i < n; i++) await this.run(x);
          const steps = s.profileSteps();
          s.profile(false);
          const ops = new Map();
          let total = 0;
          for (const e of steps) {
            const o = ops.get(e.opType) || { op_type: e.opType, steps: 0, ms: 0, draws: 0, macs: 0, compiles: 0 };
            o.steps++;
            o.ms += e.ms / n;
            o.draws += e.draws / n;
            o.macs += e.macs;
            o.compiles += e.compiles;
            ops.set(e.opType, o);
            total += e.ms / n;
          }
          const gflops = (macs, ms) => (macs > 0 && ms > 0 ? 2 * macs / (ms * 1e6) : null);
          const byOp = [...ops.values()].sort((a, b) => b.ms - a.ms)
            .map((o) => ({ ...o, share: total ? o.ms / total : 0, gflops: gflops(o.macs, o.ms) }));
          const slowest = [...steps].sort((a, b) => b.ms - a.ms).slice(0, 10).map((e) => ({
            op_type: e.opType, name: e.name, activation: e.activation, shape: e.shape,
            ms: e.ms / n, draws: e.draws / n, compiles: e.compiles, gflops: gflops(e.macs, e.ms / n),
            device: e.device }));
          return { runs: n, steps_ms: total, by_op: byOp, slowest };
        },
        dispose: () => s.dispose(),
      };
    },
  };
}

async function ortEngine(ep, threads) {
  const ort = await import('/ort/ort.all.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = threads;
  return {
    info: () => ({ threads, crossOriginIsolated }),
    async create(bytes, m) {
      const s = await ort.InferenceSession.create(bytes, { executionProviders: [ep] });
      return {
        device: () => ep,
        async run(x) {
          const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, m.shape) };
          const out = await s.run(feeds);
          const first = out[s.outputNames[0]];
          const v = ep === 'wasm' ? first.data : await first.getData(true);
          return Float32Array.from(v);
        },
        dispose: () => s.release(),
      };
    },
  };
}

const ENGINES = {
  'texel-cpu': () => texelEngine('cpu', false),
  'texel-cpu-mt': () => texelEngine('cpu', true),
  'texel-gpu': () => texelEngine('gpu', false),
  'texel-auto': () => texelEngine('auto', false),
  'texel-auto-gl-first': () => texelEngine('auto', false, true),
  'texel-auto-no-worker': () => texelEngine('auto', false, false, true),
  'texel-gpu-no-worker': () => texelEngine('gpu', false, false, true),
  'ort-wasm-1t': () => ortEngine('wasm', 1),
  'ort-wasm-2t': () => ortEngine('wasm', 2),
  'ort-webgl': () => ortEngine('webgl', 1),
  'ort-webgpu': () => ortEngine('webgpu', 1),
};

async function main() {
  const only = params.get('model'); // --cold: one model per page
  const models = (await (await fetch('/models.json')).json()).filter((m) => !only || m.name === only);
  const result = { engine: ENGINE, runs: RUNS, models: [] };
  if (ENGINE === 'ort-webgpu' && !(navigator.gpu && await navigator.gpu.requestAdapter())) {
    result.skipped = 'this browser offers no WebGPU adapter';
    window.__benchResult = result;
    return;
  }
  if (ENGINE.endsWith('-mt') || ENGINE === 'ort-wasm-2t') {
    if (!crossOriginIsolated) throw new Error(`${ENGINE} needs a cross-origin isolated page`);
  }
  const engine = await ENGINES[ENGINE]();
  // from the page's start: its modules, the engine's wasm and context
  result.ready_ms = performance.now();
  for (const m of models) {
    log(`${ENGINE} ${m.name}`);
    const entry = { name: m.name };
    try {
      const bytes = new Uint8Array(await (await fetch(m.url)).arrayBuffer());
      const x = fill(numel(m.shape), 7);
      const t0 = performance.now();
      const s = await engine.create(bytes, m);
      entry.create_ms = performance.now() - t0;
      const t1 = performance.now();
      let out = await s.run(x);
      entry.first_ms = performance.now() - t1;
      const ms = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        out = await s.run(x);
        ms.push(performance.now() - t);
      }
      entry.second_ms = ms[0];
      entry.steady_ms = median(ms);
      entry.total_ms = entry.first_ms + ms.reduce((a, b) => a + b, 0); // every run, the first included
      entry.min_ms = Math.min(...ms);
      entry.runs_ms = ms.map((v) => Math.round(v * 100) / 100); // in order: warm-up visible
      entry.device = s.device();
      entry.output = Array.from(out);
      if (params.get('profile') && s.profile) entry.profile = await s.profile(x, Math.max(RUNS, 3));
      Object.assign(entry, await engine.glStart?.());
      s.dispose();
      entry.status = 'ok';
    } catch (e) {
      entry.status = String(e && e.message || e).slice(0, 300);
    }
    log(`  ${entry.status} create ${entry.create_ms?.toFixed(1)} first ${entry.first_ms?.toFixed(1)} steady ${entry.steady_ms?.toFixed(1)}`);
    result.models.push(entry);
  }
  result.info = engine.info(); // after the runs: texel's caps make its WebGL2 context
  window.__benchResult = result;
}
main().catch((e) => { window.__benchResult = { error: String(e && e.stack || e) }; });
