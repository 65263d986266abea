// Browser benchmark runner: serves bench/browser on 127.0.0.1, drives Debian's
// headless Chromium (SwiftShader WebGL2) with playwright-core and a fresh
// profile, and writes the page's results as JSON.
// Usage: node bench/browser/run.mjs --cli build/texel [--texel URL-DIR] [--cases a,b]
//        [--smoke] [--runs N] [--out FILE]
import { execFileSync } from 'node:child_process';
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

const listArgs = ['bench', '--list'];
let cases = JSON.parse(execFileSync(cli, listArgs, { encoding: 'utf8' }));
if (args.includes('--smoke')) cases = cases.filter((c) => c.smoke);
const only = opt('--cases', null);
if (only) cases = cases.filter((c) => only.split(',').includes(c.name));

const roots = {
  '/tfjs/': join(here, 'node_modules/@tensorflow/tfjs/dist/'),
  '/tfjs-wasm/': join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/'),
  '/': here + '/',
};
if (texelDir) roots['/texel/'] = resolve(texelDir) + '/';
const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json' };
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (url.pathname === '/cases.json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(cases));
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
  res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const profile = mkdtempSync(join(tmpdir(), 'texel-bench-profile-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run'],
});
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error('page:', m.text()); });
  let url = `http://127.0.0.1:${port}/page.html?runs=${runs}`;
  if (texelDir) url += '&texel=' + encodeURIComponent('/texel_cases.mjs');
  await page.goto(url);
  await page.waitForFunction(() => window.__benchResult, null, { timeout: 3600e3, polling: 1000 });
  const result = await page.evaluate(() => window.__benchResult);
  if (result.error) throw new Error(result.error);
  writeFileSync(out, JSON.stringify(result, null, 1));
  console.log(`wrote ${out} (${result.cases.length} cases, ${result.renderer})`);
} finally {
  await browser.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
