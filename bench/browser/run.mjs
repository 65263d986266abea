// Browser benchmark runner: serves bench/browser on 127.0.0.1, drives Debian's
// headless Chromium (SwiftShader WebGL2) with playwright-core and a fresh
// profile, and writes the page's results as JSON.
// Usage: node bench/browser/run.mjs --cli build/texel [--texel URL-DIR] [--cases a,b]
//        [--smoke] [--runs N] [--out FILE] [--isolate] [--matmul-tm 1|4|8]
//        [--engines texel,texel_cpu,tfjs_webgl,tfjs_wasm]  (a subset; default all)
//        node bench/browser/run.mjs --models [--texel web] [--smoke] [--runs N] [--out FILE]
//          real models (BlazeFace, PaddleOCR det/rec/cls; scripts/fetch_models.sh):
//          texel cpu / cpu-mt / gpu / auto beside onnxruntime-web (wasm 1 and 2
//          threads, webgl, webgpu where offered), one page load per engine in
//          one browser, on a cross-origin isolated server (threads need it).
//          --smoke: BlazeFace only, texel cpu + gpu and ort wasm, 3 runs.
//          --specialize-after N|always|never: texel's k (default: its own rule).
//          --engines a,b: these engines only, in this order (names as in the table;
//          the max abs diff column needs ort-wasm-1t among them).
//          --profile: after the steady runs, as many more for texel's engines timed
//          step by step (session.profile()): per model the time per op type and the
//          slowest steps, printed and in the JSON (each result's "profile").
//        node bench/browser/run.mjs --models --cold [--samples N] [--engines a,b] [--texel web]
//          the page's time to its first result, each page in a browser of its own (no
//          GPU process started yet): ort wasm 1 thread, texel cpu / gpu / auto.
// --isolate: send COOP same-origin + COEP require-corp (SharedArrayBuffer: texel-mt, ort threads).
// --trim: texel frees its pooled textures after each case (tx.trim()); by
//   default it keeps them for the page, as TF.js keeps its texture cache.
// Each engine's first call is split in the JSON (first_phases: making the
// inputs, issuing the op, reading the output back).
import { execFileSync } from 'node:child_process';
import { models as modelList, printTable, compare } from './models_run.mjs';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const cli = opt('--cli', 'build/texel');
const out = opt('--out', 'results/browser.json');
const runs = opt('--runs', '15');
const texelDir = opt('--texel', null); // the web/ folder after scripts/build-web.sh
const kArg = opt('--specialize-after', null); // --models: texel's k for the page
const profileArg = args.includes('--profile'); // --models: texel's step profile

const modelsMode = args.includes('--models');
const smoke = args.includes('--smoke');
const isolate = modelsMode || args.includes('--isolate');
let cases = [];
let allCases = []; // the whole table: the page checks that both engines implement every case
if (!modelsMode) {
  cases = allCases = JSON.parse(execFileSync(cli, ['bench', '--list'], { encoding: 'utf8' }));
  if (smoke) cases = cases.filter((c) => c.smoke);
  const only = opt('--cases', null);
  if (only) cases = cases.filter((c) => only.split(',').includes(c.name));
}
let models = [];
if (modelsMode) {
  const cache = execFileSync('bash', [join(here, '../../scripts/fetch_models.sh')], { encoding: 'utf8' }).trim().split('\n').pop();
  models = modelList(cache, smoke);
}

const roots = {
  '/tfjs/': join(here, 'node_modules/@tensorflow/tfjs/dist/'),
  '/tfjs-wasm/': join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/'),
  '/ort/': join(here, 'node_modules/onnxruntime-web/dist/'),
  '/': here + '/',
};
for (const m of models) roots[`/models/${m.name}/`] = dirname(m.file) + '/';
if (texelDir) roots['/texel/'] = resolve(texelDir) + '/';
const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json' };
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const coi = isolate ? { 'cross-origin-opener-policy': 'same-origin',
    'cross-origin-embedder-policy': 'require-corp' } : {};
  if (url.pathname === '/cases.json' || url.pathname === '/cases-all.json' || url.pathname === '/models.json') {
    res.writeHead(200, { 'content-type': 'application/json', ...coi });
    res.end(JSON.stringify(url.pathname === '/cases.json' ? cases : url.pathname === '/cases-all.json' ? allCases
      : models.map(({ name, shape, file }) => ({ name, shape, url: `/models/${name}/${file.split('/').pop()}` }))));
    return;
  }
  const prefix = Object.keys(roots).filter((p) => url.pathname.startsWith(p))
    .sort((a, b) => b.length - a.length)[0];
  const file = normalize(join(roots[prefix], url.pathname.slice(prefix.length)));
  if (!file.startsWith(roots[prefix]) || !existsSync(file) || statSync(file).isDirectory()) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream', ...coi });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const profile = mkdtempSync(join(tmpdir(), 'texel-bench-profile-'));
// A page's window.__benchResult, or the first uncaught error it throws: a
// page that breaks (a script that does not parse, say) never sets a result,
// and the run must say so instead of waiting out the hour.
async function pageResult(page, what, url) {
  let fail;
  const failed = new Promise((resolve, reject) => { fail = reject; });
  page.on('pageerror', (e) => fail(new Error(`${what} threw: ${String(e && e.message || e).split('\n')[0]}`)));
  await page.goto(url);
  await Promise.race([failed,
    page.waitForFunction(() => window.__benchResult, null, { timeout: 3600e3, polling: 1000 })]);
  return page.evaluate(() => window.__benchResult);
}

const launch = (dir) => chromium.launchPersistentContext(dir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run'],
});

// --cold: a page's way to its first result in a browser of its own (fresh
// profile, no GPU process started): per sample, engine and model, one browser
// opens models.html for that model and runs it once. Samples alternate the
// engines, so that the machine's drift spreads over all of them.
async function cold(engines, samples) {
  const times = new Map(); // `${model} ${engine}` -> [{ready, create, first}]
  for (let i = 0; i < samples; i++) {
    for (const m of models) {
      for (const engine of engines) {
        const dir = mkdtempSync(join(tmpdir(), 'texel-bench-cold-'));
        const b = await launch(dir);
        try {
          const page = await b.newPage();
          const r = await pageResult(page, `models.html (${engine}, cold)`,
            `http://127.0.0.1:${port}/models.html?engine=${engine}&runs=1&model=${m.name}`);
          const e = r.models?.[0];
          if (r.error || e?.status !== 'ok') throw new Error(`${engine} ${m.name}: ${r.error || e?.status}`);
          const key = `${m.name} ${engine}`;
          times.set(key, [...(times.get(key) || []), { ready: r.ready_ms, create: e.create_ms, first: e.first_ms, second: e.second_ms, gl: e.gl_start_ms, warm: e.warm?.ms }]);
        } finally {
          await b.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    console.error(`cold: sample ${i + 1} of ${samples}`);
  }
  const med = (xs) => { const v = [...xs].sort((a, b) => a - b); const h = v.length >> 1; return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2; };
  const f = (v) => v.toFixed(0);
  const lines = ['| model | engine | page → engine ms | create ms | first run ms | page → first result ms (median) | range | second run ms (median) | range |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|'];
  const rows = [];
  for (const [key, ts] of times) {
    const [model, engine] = key.split(' ');
    const total = ts.map((t) => t.ready + t.create + t.first);
    const second = ts.map((t) => t.second);
    rows.push({ model, engine, ready_ms: ts.map((t) => t.ready), create_ms: ts.map((t) => t.create), first_ms: ts.map((t) => t.first), total_ms: total, second_ms: second, gl_start_ms: ts.map((t) => t.gl), warm_ms: ts.map((t) => t.warm) });
    lines.push(`| ${model} | ${engine} | ${f(med(ts.map((t) => t.ready)))} | ${f(med(ts.map((t) => t.create)))} | ` +
      `${f(med(ts.map((t) => t.first)))} | ${f(med(total))} | ${f(Math.min(...total))}-${f(Math.max(...total))} | ` +
      `${f(med(second))} | ${f(Math.min(...second))}-${f(Math.max(...second))} |`);
  }
  return { rows, table: lines.join('\n') };
}

if (args.includes('--cold')) {
  if (!modelsMode) throw new Error('--cold goes with --models');
  const engines = (opt('--engines', null) || 'ort-wasm-1t,texel-cpu,texel-gpu,texel-auto').split(',');
  try {
    const r = await cold(engines, Number(opt('--samples', '5')));
    writeFileSync(out, JSON.stringify({ runner: 'browser-models-cold', results: r.rows }, null, 1));
    console.log(r.table);
    console.log(`wrote ${out}`);
  } finally {
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  process.exit(0);
}

// --models --profile: per engine and model, the op types' time and the slowest steps
function printProfiles(results) {
  const lines = [];
  const f = (v, d = 2) => (v === null || v === undefined ? '-' : v.toFixed(d));
  for (const r of results)
    for (const m of r.models || []) {
      const p = m.profile;
      if (!p) continue;
      lines.push(`\n${r.engine} ${m.name}: ${p.runs} runs step by step, the steps ${f(p.steps_ms)} ms a run (unprofiled steady ${f(m.steady_ms)})`);
      lines.push('| op type | steps | ms a run | share | draws a run | GFLOP/s | compiles |', '|---|---:|---:|---:|---:|---:|---:|');
      for (const o of p.by_op)
        lines.push(`| ${o.op_type} | ${o.steps} | ${f(o.ms, 3)} | ${(100 * o.share).toFixed(1)}% | ${f(o.draws, 1)} | ${f(o.gflops)} | ${o.compiles} |`);
      lines.push('slowest steps:');
      for (const e of p.slowest)
        lines.push(`  ${f(e.ms, 3)} ms ${e.op_type}${e.activation ? ' + ' + e.activation : ''} "${e.name}" -> [${e.shape}] on the ${e.device}, ${f(e.draws, 1)} draws${e.gflops ? ', ' + f(e.gflops) + ' GFLOP/s' : ''}${e.compiles ? `, ${e.compiles} compiles in its time` : ''}`);
    }
  return lines.join('\n');
}

const browser = await launch(profile);
try {
  if (modelsMode) {
    const engines = opt('--engines', null) ? opt('--engines', null).split(',')
      : smoke ? ['ort-wasm-1t', 'texel-cpu', 'texel-gpu']
      : ['ort-wasm-1t', 'ort-wasm-2t', 'ort-webgl', 'ort-webgpu', 'texel-cpu', 'texel-cpu-mt', 'texel-gpu', 'texel-auto'];
    const mruns = opt('--runs', smoke ? '3' : '10');
    const results = [];
    for (const engine of engines) {
      const page = await browser.newPage();
      page.on('console', (m) => { if (m.type() === 'error') console.error(`page (${engine}):`, m.text()); });
      const r = await pageResult(page, `models.html (${engine})`,
        `http://127.0.0.1:${port}/models.html?engine=${engine}&runs=${mruns}` +
        (kArg ? `&k=${kArg}` : '') + (profileArg ? '&profile=1' : ''));
      await page.close();
      if (r.error) r.models = models.map((m) => ({ name: m.name, status: r.error.split('\n')[0] }));
      results.push(r);
      console.error(`${engine}: ${r.skipped || (r.models || []).map((m) => `${m.name} ${m.status === 'ok' ? m.steady_ms.toFixed(1) + ' ms' : m.status}`).join(', ')}`);
    }
    const ua = await (await browser.newPage()).evaluate(() => navigator.userAgent);
    const table = compare(results, 'ort-wasm-1t');
    writeFileSync(out, JSON.stringify({ runner: 'browser-models', browser: ua, runs: Number(mruns),
      specialize_after: kArg || 'default', results: table }, null, 1));
    console.log(printTable(table));
    if (profileArg) console.log(printProfiles(results));
    console.log(`wrote ${out}`);
    // texel's outputs against onnxruntime-web wasm's, as tests/bench_browser_test.sh's smoke
    const off = table.filter((r) => r.status === 'ok' && r.engine.startsWith('texel') &&
      r.max_abs_diff !== undefined && !(r.max_abs_diff <= 1e-3));
    if (off.length) throw new Error(`texel's outputs differ from ort-wasm-1t's by more than 1e-3: ${off.map((r) => `${r.model} ${r.engine} ${r.max_abs_diff}`).join(', ')}`);
  } else {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error('page:', m.text()); });
  let url = `http://127.0.0.1:${port}/page.html?runs=${runs}`;
  if (opt('--matmul-tm', null)) url += `&matmul-tm=${opt('--matmul-tm', null)}`;
  if (opt('--engines', null)) url += `&engines=${opt('--engines', null)}`;
  if (args.includes('--trim')) url += '&trim=1';
  if (texelDir) url += '&texel=' + encodeURIComponent('/texel_cases.mjs');
  const result = await pageResult(page, 'page.html', url);
  if (result.error) throw new Error(result.error);
  writeFileSync(out, JSON.stringify(result, null, 1));
  console.log(`wrote ${out} (${result.cases.length} cases, ${result.renderer})`);
  // engines that disagree on a case's first output: a timing of wrong numbers is no timing
  const wrong = result.cases.flatMap((c) => Object.entries(c.check || {})
    .filter(([, d]) => !(d <= 1e-3)).map(([k, d]) => `${c.name}: ${k} ${d}`));
  if (wrong.length) throw new Error(`first outputs differ by more than 1e-3 (relative):\n  ${wrong.join('\n  ')}`);
  }
} finally {
  await browser.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
