// texel demo: a real op pipeline on an image with per-stage timings (first run
// vs warm), the shader cache counters, and the matmul 1024 benchmark.
// ?autorun=1 runs everything once, checks the results against plain JS and
// sets window.__result (web/test/run.mjs turns that into a test).
import * as texel from '../texel.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const now = () => performance.now();
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const SIZE = 256;

// ---- the pipeline -------------------------------------------------------------

// Sobel gradient magnitude: patches (JS im2col) × kernels (GPU matmul), then
// gx² + gy² via mul and a [2, 1] matmul, sqrt, scale, clip: 7 GPU ops.
const KERNELS = new Float32Array([ // [9, 2]: columns gx, gy
  -1, -1, 0, -2, 1, -1,
  -2, 0, 0, 0, 2, 0,
  -1, 1, 0, 2, 1, 1,
]);

function grayscale(ctx2d) {
  const px = ctx2d.getImageData(0, 0, SIZE, SIZE).data;
  const g = new Float32Array(SIZE * SIZE);
  for (let i = 0; i < g.length; i++) g[i] = (0.299 * px[4 * i] + 0.587 * px[4 * i + 1] + 0.114 * px[4 * i + 2]) / 255;
  return g;
}

function im2col(g) {
  const p = new Float32Array(SIZE * SIZE * 9);
  for (let y = 0; y < SIZE; y++) for (let x = 0; x < SIZE; x++) {
    const o = (y * SIZE + x) * 9;
    for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
      const yy = Math.min(SIZE - 1, Math.max(0, y + dy)), xx = Math.min(SIZE - 1, Math.max(0, x + dx));
      p[o + (dy + 1) * 3 + (dx + 1)] = g[yy * SIZE + xx];
    }
  }
  return p;
}

function edgesReference(patches) {
  const out = new Float32Array(SIZE * SIZE);
  for (let i = 0; i < out.length; i++) {
    let gx = 0, gy = 0;
    for (let k = 0; k < 9; k++) { gx += patches[i * 9 + k] * KERNELS[2 * k]; gy += patches[i * 9 + k] * KERNELS[2 * k + 1]; }
    out[i] = Math.min(Math.max(Math.sqrt(gx * gx + gy * gy) * 0.5, 0), 1);
  }
  return out;
}

let tx, kernels, ones;

async function runPipeline(ctx2d) {
  const t = {};
  let t0 = now();
  const patches = im2col(grayscale(ctx2d));
  t['image → patches (JS)'] = now() - t0;

  t0 = now();
  const x = tx.tensor(patches, [SIZE * SIZE, 9]);
  t['upload'] = now() - t0;

  // ---- MODEL HOOK --------------------------------------------------------------
  // With the Session API (ONNX issue): `session = await tx.loadModel(url)` once,
  // then here `const out = await session.run({ [session.inputs[0].name]: x })`,
  // and draw its boxes/masks instead of the edge map. Re-upload of the weights
  // after a context loss happens in the session's restore hook
  // (tx_ctx_add_restore_hook in C; tx.on('contextrestored') in JS).
  t0 = now();
  const y = tx.scope(() => {
    const g = x.matmul(kernels);                  // [N, 2]: gx, gy
    const mag = g.mul(g).matmul(ones).sqrt();     // [N, 1]
    return mag.mul(0.5).clip(0, 1).reshape([SIZE, SIZE]);
  });
  t['GPU ops (issue)'] = now() - t0;
  // ------------------------------------------------------------------------------

  t0 = now();
  const values = await y.data();
  t['read back (async)'] = now() - t0;
  x.dispose();
  y.dispose();
  return { t, values, patches };
}

function draw(values) {
  const c = $('output').getContext('2d');
  const img = c.createImageData(SIZE, SIZE);
  for (let i = 0; i < values.length; i++) {
    const v = Math.round(255 * (1 - values[i]));
    img.data.set([v, v, 255 - Math.round(120 * values[i]) , 255], 4 * i);
  }
  c.putImageData(img, 0, 0);
}

function sample(ctx2d) {
  const g = ctx2d.createLinearGradient(0, 0, SIZE, SIZE);
  g.addColorStop(0, '#f6d365');
  g.addColorStop(1, '#fda085');
  ctx2d.fillStyle = g;
  ctx2d.fillRect(0, 0, SIZE, SIZE);
  ctx2d.fillStyle = '#2a4d69';
  ctx2d.beginPath();
  ctx2d.arc(80, 90, 50, 0, 2 * Math.PI);
  ctx2d.fill();
  ctx2d.fillStyle = '#4b86b4';
  ctx2d.fillRect(140, 40, 90, 70);
  ctx2d.fillStyle = '#111';
  ctx2d.font = 'bold 54px sans-serif';
  ctx2d.fillText('texel', 40, 210);
}

// ---- UI ---------------------------------------------------------------------------

function showTimings(first, warm) {
  const rows = Object.keys(first).map((k) =>
    `<tr><td>${k}</td><td>${first[k].toFixed(2)}</td><td>${median(warm.map((w) => w[k])).toFixed(2)}</td></tr>`);
  const total = (o) => Object.values(o).reduce((a, b) => a + b, 0);
  rows.push(`<tr><th>total</th><th>${total(first).toFixed(2)}</th><th>${median(warm.map(total)).toFixed(2)}</th></tr>`);
  $('timings').innerHTML = '<tr><th>stage</th><th>first run</th><th>warm (median)</th></tr>' + rows.join('');
}

function showStats() {
  const s = tx.stats();
  const keys = ['genericCompiles', 'specializedCompiles', 'specializedReady', 'cacheHits', 'genericRuns',
    'specializedRuns', 'draws', 'compileMs', 'liveTensors', 'liveTextureBytes', 'pooledTextureBytes', 'peakTextureBytes'];
  $('stats').innerHTML = keys.map((k) => `<tr><td>${k}</td><td>${typeof s[k] === 'number' && !Number.isInteger(s[k]) ? s[k].toFixed(1) : s[k]}</td></tr>`).join('');
  return s;
}

async function pipelineRuns(runs = 6) {
  const ctx2d = $('input').getContext('2d', { willReadFrequently: true });
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await runPipeline(ctx2d));
  draw(results[results.length - 1].values);
  showTimings(results[0].t, results.slice(1).map((r) => r.t));
  showStats();
  return results;
}

async function benchMatmul(n = 1024, calls = 6) {
  const rnd = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 0.37 + s));
  const av = rnd(n * n, 1), bv = rnd(n * n, 2);
  const a = tx.tensor(av, [n, n]), b = tx.tensor(bv, [n, n]);
  tx.finish();
  const ms = [];
  let last;
  for (let i = 0; i < calls; i++) {
    const t0 = now();
    const y = a.matmul(b);
    last = await y.data();
    ms.push(now() - t0);
    y.dispose();
  }
  // Spot-check a few elements against plain JS.
  let bad = 0;
  for (const [i, j] of [[0, 0], [17, 999], [n - 1, n - 1], [512, 3]]) {
    let s = 0;
    for (let k = 0; k < n; k++) s += av[i * n + k] * bv[k * n + j];
    if (Math.abs(last[i * n + j] - s) > 1e-3 * (1 + Math.abs(s))) bad++;
  }
  a.dispose();
  b.dispose();
  const steady = median(ms.slice(1));
  const r = { first: ms[0], steady, gflops: (2 * n ** 3) / steady / 1e6, all: ms, bad };
  $('bench-table').innerHTML = '<tr><th>first call</th><th>steady state (median)</th><th>GFLOP/s</th></tr>' +
    `<tr><td>${r.first.toFixed(1)}</td><td>${r.steady.toFixed(1)}</td><td>${r.gflops.toFixed(2)}</td></tr>`;
  showStats();
  return r;
}

async function loadFile(file) {
  const bmp = await createImageBitmap(file);
  const c = $('input').getContext('2d', { willReadFrequently: true });
  c.clearRect(0, 0, SIZE, SIZE);
  const s = Math.min(SIZE / bmp.width, SIZE / bmp.height);
  c.drawImage(bmp, (SIZE - bmp.width * s) / 2, (SIZE - bmp.height * s) / 2, bmp.width * s, bmp.height * s);
  await pipelineRuns();
}

async function main() {
  tx = await texel.create();
  $('device').textContent = `${tx.caps.renderer} · ${tx.caps.version} · max texture ${tx.caps.maxTextureSize} · specialize after ${tx.caps.specializeAfter}`;
  kernels = tx.tensor(KERNELS, [9, 2]);
  ones = tx.tensor([1, 1], [2, 1]);
  sample($('input').getContext('2d', { willReadFrequently: true }));
  tx.on('contextlost', () => { $('status').textContent = 'WebGL context lost; waiting for the browser to restore it'; });
  tx.on('contextrestored', () => {
    kernels = tx.tensor(KERNELS, [9, 2]); // what a Session's restore hook does for its weights
    ones = tx.tensor([1, 1], [2, 1]);
    $('status').textContent = 'context restored';
  });
  $('run').onclick = () => pipelineRuns();
  $('bench').onclick = () => benchMatmul();
  $('file').onchange = (e) => e.target.files[0] && loadFile(e.target.files[0]);
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.classList.add('over'); };
  drop.ondragleave = () => drop.classList.remove('over');
  drop.ondrop = (e) => { e.preventDefault(); drop.classList.remove('over'); if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]); };

  $('status').textContent = 'running the pipeline…';
  const runs = await pipelineRuns();
  $('status').textContent = 'ready';
  if (!params.get('autorun')) return;

  // Autorun (the end-to-end test): check the pipeline and the benchmark.
  let failed = 0;
  const last = runs[runs.length - 1];
  const want = edgesReference(last.patches);
  let maxErr = 0;
  for (let i = 0; i < want.length; i++) maxErr = Math.max(maxErr, Math.abs(want[i] - last.values[i]));
  const edgeOk = maxErr < 1e-4;
  console.log(`${edgeOk ? 'ok  ' : 'FAIL'} edge pipeline vs JS reference: max abs err ${maxErr.toExponential(2)}`);
  failed += !edgeOk;
  const first = runs[0].t, warm = runs.slice(1).map((r) => r.t);
  for (const k of Object.keys(first)) console.log(`  ${k}: first ${first[k].toFixed(2)} ms, warm ${median(warm.map((w) => w[k])).toFixed(2)} ms`);
  $('status').textContent = 'benchmarking matmul 1024…';
  const b = await benchMatmul();
  console.log(`${b.bad ? 'FAIL' : 'ok  '} matmul 1024: first call ${b.first.toFixed(1)} ms, steady state ${b.steady.toFixed(1)} ms ` +
    `(${b.gflops.toFixed(2)} GFLOP/s; calls ${b.all.map((v) => v.toFixed(0)).join(' ')})`);
  failed += b.bad ? 1 : 0;
  const s = showStats();
  console.log(`  counters: ${JSON.stringify(s)}`);
  const statsOk = s.specializedRuns > 0 && s.genericCompiles > 0 && s.liveTensors === 2;
  console.log(`${statsOk ? 'ok  ' : 'FAIL'} counters: specialized programs serve warm runs, only the 2 constant tensors stay live`);
  failed += !statsOk;
  $('status').textContent = failed ? 'checks failed' : 'done';
  console.log(`${3 - failed} passed, ${failed} failed`);
  window.__result = { status: failed ? 1 : 0 };
}

main().catch((e) => {
  $('status').textContent = `error: ${e.message}`;
  console.log(`demo crashed: ${e.stack || e}`);
  console.log('0 passed, 1 failed');
  window.__result = { status: 1 };
});
