// texel demo: MediaPipe BlazeFace (a real pretrained ONNX model) through a
// texel Session: preprocess in JS, inference on the GPU, anchor decoding and
// weighted NMS in JS, boxes and keypoints drawn on the photo. Shows per-stage
// timings (first run vs warm), the shader cache counters, and survives a
// WebGL context loss (the session's weights come back with the context).
//
// Assets (models, photos) are not in git: scripts/serve-demo.sh (via
// scripts/demo-assets.sh) fetches the pinned model and copies them to assets/.
// ?autorun=1 runs the model, checks the result and sets window.__result
// (web/test/run.mjs turns that into a test); ?model=back, ?image=NAME,
// ?roi=x,y,w,h pick the model, the photo and the region fed to the model.
import * as texel from '../texel.js';
import { KEYPOINTS, MODELS, decode, preprocess } from './blazeface.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const now = () => performance.now();
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const WARM_RUNS = 5;

let tx, session, model, image, roi;
const scratch = document.createElement('canvas');

// ---- one detection pass: the three stages -----------------------------------

async function detect() {
  const t = {};
  let t0 = now();
  const { input, toImage } = preprocess(image, roi, model.size, scratch);
  // on the session's device: a CPU run needs no WebGL2 context (nor a copy)
  const x = tx.tensor(input, [1, model.size, model.size, 3], { device: session.device });
  t.preprocess = now() - t0;

  t0 = now();
  const out = await session.run({ [session.inputs[0].name]: x });
  // the reads are asynchronous: the page keeps running while the GPU works
  const [s0, s1, b0, b1] = await Promise.all(
    ['Identity:0', 'Identity_1:0', 'Identity_2:0', 'Identity_3:0'].map((n) => out[n].data()));
  t.inference = now() - t0;
  x.dispose();
  for (const v of Object.values(out)) v.dispose();

  t0 = now();
  const result = decode([s0, s1], [b0, b1], model.size, model.minScore, toImage);
  draw(result.detections);
  t.postprocess = now() - t0;
  return { t, ...result, raw: s0 };
}

function draw(dets) {
  const c = $('output');
  const scale = Math.min(1, 640 / image.width);
  c.width = Math.round(image.width * scale);
  c.height = Math.round(image.height * scale);
  const g = c.getContext('2d');
  g.drawImage(image, 0, 0, c.width, c.height);
  g.scale(scale, scale);
  g.lineWidth = 2 / scale;
  g.setLineDash([6 / scale, 4 / scale]);
  g.strokeStyle = '#ffd400';
  g.strokeRect(roi.x, roi.y, roi.w, roi.h);
  g.setLineDash([]);
  for (const d of dets) {
    g.strokeStyle = '#00e676';
    g.lineWidth = 3 / scale;
    g.strokeRect(d.x0, d.y0, d.x1 - d.x0, d.y1 - d.y0);
    g.fillStyle = '#ff1744';
    for (const [kx, ky] of d.keypoints) {
      g.beginPath();
      g.arc(kx, ky, 3 / scale, 0, 2 * Math.PI);
      g.fill();
    }
    g.font = `${14 / scale}px sans-serif`;
    g.fillStyle = '#00e676';
    g.fillText(`face ${(100 * d.score).toFixed(0)}%`, d.x0, d.y0 - 4 / scale);
  }
  g.setTransform(1, 0, 0, 1, 0, 0);
  $('detections').innerHTML = dets.length
    ? dets.map((d, i) => `<tr><td>${i + 1}</td><td>${d.score.toFixed(3)}</td><td>${[d.x0, d.y0, d.x1, d.y1].map((v) => v.toFixed(0)).join(', ')}</td>` +
      `<td>${d.keypoints.map(([kx, ky], k) => `<span title="${KEYPOINTS[k]}">${kx.toFixed(0)},${ky.toFixed(0)}</span>`).join(' ')}</td></tr>`).join('')
    : '<tr><td colspan="4">no face above the score threshold</td></tr>';
}

// ---- UI ---------------------------------------------------------------------------

function showTimings(first, warm) {
  const total = (o) => o.preprocess + o.inference + o.postprocess;
  const rows = ['preprocess', 'inference', 'postprocess'].map((k) =>
    `<tr><td>${k}</td><td>${first[k].toFixed(1)}</td><td>${median(warm.map((w) => w[k])).toFixed(1)}</td></tr>`);
  rows.push(`<tr><th>total</th><th>${total(first).toFixed(1)}</th><th>${median(warm.map(total)).toFixed(1)}</th></tr>`);
  $('timings').innerHTML = `<tr><th>stage (ms)</th><th>first run</th><th>warm (median of ${warm.length})</th></tr>` + rows.join('');
}

function showStats() {
  const s = tx.stats();
  const keys = ['genericCompiles', 'specializedCompiles', 'specializedReady', 'cacheHits', 'genericRuns',
    'specializedRuns', 'draws', 'compileMs', 'liveTensors', 'liveTextureBytes', 'pooledTextureBytes', 'peakTextureBytes',
    'bytesUploaded', 'generation'];
  $('stats').innerHTML = keys.map((k) => `<tr><td>${k}</td><td>${typeof s[k] === 'number' && !Number.isInteger(s[k]) ? s[k].toFixed(1) : s[k]}</td></tr>`).join('');
  return s;
}

/** A first pass (on a new image it is the first run of every program) then warm passes. */
async function runAll(warmRuns = WARM_RUNS, table = true) {
  $('status').textContent = 'running BlazeFace…';
  const runs = [await detect()];
  for (let i = 0; i < warmRuns; i++) runs.push(await detect());
  if (table) showTimings(runs[0].t, runs.slice(1).map((r) => r.t));
  showStats();
  showDevice();
  const last = runs[runs.length - 1];
  $('status').textContent = `${last.detections.length} face${last.detections.length === 1 ? '' : 's'} found (${last.candidates} anchor${last.candidates === 1 ? '' : 's'} above ${model.minScore})`;
  return runs;
}

/** matmul 1024x1024 with its read back: first call vs steady state, spot-checked against JS. */
async function benchMatmul(n = 1024, calls = 6) {
  $('status').textContent = 'benchmarking matmul 1024…';
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
  $('status').textContent = 'matmul benchmark done';
  return r;
}

function loadImage(src) {
  return new Promise((ok, fail) => {
    const img = new Image();
    img.onload = () => ok(img);
    img.onerror = () => fail(new Error(`cannot load ${src} (run scripts/serve-demo.sh: it copies the assets)`));
    img.src = src;
  });
}

function setImage(img, roiParam) {
  image = img;
  const v = roiParam?.split(',').map(Number);
  roi = v?.length === 4 && v.every(Number.isFinite) ? { x: v[0], y: v[1], w: v[2], h: v[3] }
    : { x: 0, y: 0, w: img.width, h: img.height };
}

async function loadFile(file) {
  const bmp = await createImageBitmap(file);
  setImage(bmp);
  await runAll();
}

async function loadModel(name) {
  model = MODELS[name];
  session?.dispose();
  const t0 = now();
  session = await tx.loadModel(`./assets/${model.file}`,
    { device: $('device-select').value, onProgress: showLoadProgress });
  $('load').hidden = true;
  const ms = now() - t0;
  const fmt = (v) => `${v.name} [${v.shape?.join(', ')}] ${v.dtype}`;
  $('model').textContent = `${model.file}: loaded and planned in ${ms.toFixed(0)} ms · ` +
    `input ${session.inputs.map(fmt).join(', ')} · outputs ${session.outputs.map(fmt).join(', ')}`;
  showDevice();
}

/** loadModel's progress: the download (bytes), then the GPU programs compiling. */
let loadEvents = 0;
function showLoadProgress(e) {
  loadEvents++;
  $('load').hidden = false;
  const bar = $('load-bar');
  const total = e.total || 0, done = e.phase === 'download' ? e.loaded : e.done;
  // a download of unknown size: an indeterminate bar (no value)
  if (total) bar.value = done / total; else if (e.phase === 'download') bar.removeAttribute('value'); else bar.value = 1;
  $('load-text').textContent = e.phase === 'download'
    ? `downloading ${(done / 1e6).toFixed(2)}${total ? ` of ${(total / 1e6).toFixed(2)}` : ''} MB`
    : total ? `compiling GPU programs: ${done} of ${total}` : 'runs on the CPU: nothing to compile';
}

/** Which device the session runs on and why (auto's choice may change after the first runs). */
function showDevice() {
  $('session-device').textContent = `runs on ${session.device}: ${session.deviceReason}`;
}

/** Loses the WebGL context for real (WEBGL_lose_context) and runs again once it is back. */
async function loseContext() {
  if (!tx.glMade) { // nothing ran on the GPU yet: there is no WebGL context to lose
    $('status').textContent = 'no WebGL context yet: texel makes it at the first GPU use';
    return null;
  }
  const ext = tx.canvas.getContext('webgl2').getExtension('WEBGL_lose_context');
  const restored = new Promise((r) => tx.on('contextrestored', r));
  ext.loseContext();
  await new Promise((r) => setTimeout(r, 50));
  ext.restoreContext();
  await restored;
  return runAll(1, false); // the timings table keeps the first-run/warm figures
}

async function main() {
  tx = await texel.create();
  // tx.caps would make the WebGL2 context now: it is made at the first GPU use
  const showCaps = () => {
    $('device').textContent = tx.glMade
      ? `${tx.caps.renderer} · ${tx.caps.version} · max texture ${tx.caps.maxTextureSize} · specialize after ${tx.caps.specializeAfter}`
      : 'no WebGL2 context yet (made at the first GPU use)';
  };
  showCaps();
  tx.on('contextlost', () => { $('status').textContent = 'WebGL context lost; waiting for the browser to restore it'; });
  tx.on('contextrestored', (info) => { $('status').textContent = `context restored (generation ${info.generation}); the session re-uploaded its weights`; });
  $('device-select').value = ['auto', 'gpu', 'cpu'].includes(params.get('device')) ? params.get('device') : 'auto';
  $('device-select').onchange = async () => { await loadModel($('model-select').value); await runAll(); };
  const modelName = MODELS[params.get('model')] ? params.get('model') : 'front';
  $('model-select').value = modelName;
  await loadModel(modelName);
  const imageName = params.get('image') || 'astronaut.png';
  $('image-select').value = imageName;
  setImage(await loadImage(`./assets/${imageName}`), params.get('roi'));

  $('run').onclick = () => runAll();
  $('lose').onclick = () => loseContext();
  $('bench').onclick = () => benchMatmul();
  $('model-select').onchange = async (e) => { await loadModel(e.target.value); await runAll(); };
  $('image-select').onchange = async (e) => { setImage(await loadImage(`./assets/${e.target.value}`)); await runAll(); };
  $('file').onchange = (e) => e.target.files[0] && loadFile(e.target.files[0]);
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.classList.add('over'); };
  drop.ondragleave = () => drop.classList.remove('over');
  drop.ondrop = (e) => { e.preventDefault(); drop.classList.remove('over'); if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]); };

  const runs = await runAll();
  showCaps();
  if (params.get('autorun')) await autorun(runs);
}

// ---- the end-to-end test (?autorun=1) -------------------------------------------

async function autorun(runs) {
  let failed = 0, passed = 0;
  const ok = (cond, msg) => { console.log(`${cond ? 'ok  ' : 'FAIL'} ${msg}`); if (cond) passed++; else failed++; };
  const first = runs[0], last = runs[runs.length - 1];
  for (const k of ['preprocess', 'inference', 'postprocess'])
    console.log(`  ${k}: first ${first.t[k].toFixed(1)} ms, warm ${median(runs.slice(1).map((r) => r.t[k])).toFixed(1)} ms`);
  const d = last.detections;
  for (const f of d)
    console.log(`  face ${f.score.toFixed(3)} at [${[f.x0, f.y0, f.x1, f.y1].map((v) => v.toFixed(1))}], keypoints ${f.keypoints.map((p) => p.map((v) => v.toFixed(0)).join(',')).join(' ')}`);
  ok(d.length >= 1, `BlazeFace finds a face on the photo (${d.length} found, ${last.candidates} anchors above ${model.minScore})`);
  if (d.length) {
    const f = d[0], w = f.x1 - f.x0, h = f.y1 - f.y0;
    const inRoi = f.x0 >= roi.x - 0.05 * roi.w && f.y0 >= roi.y - 0.05 * roi.h && f.x1 <= roi.x + 1.05 * roi.w && f.y1 <= roi.y + 1.05 * roi.h;
    ok(inRoi && w > 0.05 * roi.w && w < roi.w && h > 0.05 * roi.h && h < roi.h && w / h > 0.6 && w / h < 1.6,
      `box is inside the region and face-sized: ${w.toFixed(0)}x${h.toFixed(0)} px in a ${roi.w}x${roi.h} region`);
    const inside = f.keypoints.slice(0, 4).every(([kx, ky]) => kx > f.x0 && kx < f.x1 && ky > f.y0 && ky < f.y1);
    const [re, le, nose, mouth] = f.keypoints;
    ok(inside && Math.max(re[1], le[1]) < mouth[1] && nose[1] < mouth[1] + 1,
      'eyes, nose and mouth lie inside the box, the eyes above the mouth');
  }
  // generic programs (first run) and specialized ones (warm runs) agree
  let maxDiff = 0;
  for (let i = 0; i < first.raw.length; i++) maxDiff = Math.max(maxDiff, Math.abs(first.raw[i] - last.raw[i]));
  ok(maxDiff < 1e-3, `first and warm runs give the same scores (max diff ${maxDiff.toExponential(2)})`);
  ok(loadEvents >= 2 && $('load').hidden, `the model load showed its progress (${loadEvents} events), then hid the bar`);
  const s = showStats();
  showDevice();
  console.log(`  session on ${session.device}: ${session.deviceReason}`);
  if (session.device === 'gpu')
    ok(s.specializedRuns > 0 && s.genericCompiles > 0, `counters: ${s.genericCompiles} generic + ${s.specializedCompiles} specialized compiles, ${s.specializedRuns} specialized runs`);
  else
    ok(s.cpuOps > 0 && s.liveHostBytes > 0, `counters: ${s.cpuOps} CPU ops, ${s.liveHostBytes} bytes of weights in host memory`);
  // a real context loss: the same session runs again with the same result
  // (an 'auto' session kept on the CPU made no WebGL2 context: made here)
  if (!tx.glMade) void tx.caps;
  const after = await loseContext();
  const a = after[after.length - 1].detections, b = d;
  const same = a.length === b.length && a.every((f, i) => Math.abs(f.x0 - b[i].x0) < 0.5 && Math.abs(f.score - b[i].score) < 1e-3);
  ok(same && tx.stats().generation === 1, `after a context loss and restore the session finds the same ${a.length} face(s)`);
  console.log(`  counters: ${JSON.stringify(tx.stats())}`);
  const status = $('status').textContent;
  const bench = await benchMatmul();
  ok(!bench.bad, `matmul 1024: first call ${bench.first.toFixed(1)} ms, steady state ${bench.steady.toFixed(1)} ms ` +
    `(${bench.gflops.toFixed(2)} GFLOP/s; calls ${bench.all.map((v) => v.toFixed(0)).join(' ')})`);
  $('status').textContent = status;
  $('status').textContent = failed ? 'checks failed' : `done: ${$('status').textContent}`;
  console.log(`${passed} passed, ${failed} failed`);
  window.__result = { status: failed ? 1 : 0 };
}

main().catch((e) => {
  $('status').textContent = `error: ${e.message}`;
  console.log(`demo crashed: ${e.stack || e}`);
  console.log('0 passed, 1 failed');
  window.__result = { status: 1 };
});
