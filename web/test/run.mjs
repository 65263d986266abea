// Drives headless Chromium (Debian's, SwiftShader WebGL2) with playwright-core.
//
//   node web/test/run.mjs ctest NAME [FILTER]   a C test program built by build-web/
//   node web/test/run.mjs page PATH [QUERY]     a test page (web/test/api.html)
//   node web/test/run.mjs dir DIR               DIR/index.html, DIR served as the root
//                                               (a bundled app: web/test/bundle_test.sh)
//   TEXEL_SCREENSHOT=file.png                   also saves a screenshot at the end
//
// The page logs its lines to the console (streamed here to stdout, so the
// "N passed, N failed" line reaches scripts/test.sh) and sets window.__result =
// {status}; this process exits with that status.
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';
import { serve } from './serve.mjs';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--js-flags=--expose-gc',
  // A C test blocks the page for minutes: keep timers and rendering running.
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
];

export async function launch() {
  return chromium.launch({
    executablePath: process.env.TEXEL_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: true,
  });
}

async function main() {
  const [mode, name, extra] = process.argv.slice(2);
  const build = process.env.TEXEL_WEB_BUILD || 'build-web';
  let path;
  if (mode === 'ctest') {
    path = `/web/test/ctest.html?mod=${encodeURIComponent(`/${build}/web/${name}.mjs`)}` +
      (extra ? `&arg=${encodeURIComponent(extra)}` : '');
  } else if (mode === 'page') {
    path = `/${name}${extra ? `?${extra}` : ''}`;
  } else if (mode === 'dir') {
    path = '/index.html';
  } else {
    console.error('usage: run.mjs ctest NAME [FILTER] | page PATH [QUERY] | dir DIR');
    process.exit(2);
  }
  const server = await serve(0, mode === 'dir' ? { root: resolve(name) } : {});
  const status = await runPage(`http://127.0.0.1:${server.address().port}${path}`);
  server.close();
  process.exit(status);
}

/** Opens url in headless Chromium, streams its console, returns window.__result.status (1 on a timeout). */
export async function runPage(url) {
  const browser = await launch();
  let status = 1;
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('console', (m) => console.log(m.text()));
    page.on('pageerror', (e) => console.log(`page error: ${e.stack || e}`));
    await page.goto(url);
    const timeout = Number(process.env.TEXEL_WEB_TIMEOUT_MS || 1200000);
    await page.waitForFunction(() => window.__result, null, { timeout, polling: 500 });
    status = await page.evaluate(() => window.__result.status);
    if (process.env.TEXEL_SCREENSHOT) {
      await page.screenshot({ path: process.env.TEXEL_SCREENSHOT, fullPage: true });
      console.log(`screenshot: ${process.env.TEXEL_SCREENSHOT}`);
    }
  } catch (e) {
    console.log(`run.mjs: ${e.stack || e}`);
  } finally {
    await browser.close();
  }
  return status;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
