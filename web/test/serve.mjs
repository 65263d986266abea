// A static file server for the tests and the demo: the repository root on
// 127.0.0.1 only, with the MIME types ES modules and wasm streaming need.
//
// Cross-origin isolation (what SharedArrayBuffer, and so texel-mt.wasm, needs):
// every path under /coi/ is the same file as without the prefix, sent with
//   Cross-Origin-Opener-Policy: same-origin
//   Cross-Origin-Embedder-Policy: require-corp
// (/coi/web/test/api.html is the API test page isolated; relative URLs stay
// under /coi/). serve(port, {isolate: true}) sends them for every path;
// serve(port, {root}) serves another directory (a bundled app).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.svg': 'image/svg+xml', '.onnx': 'application/octet-stream',
};

export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

export function serve(port = 0, { isolate = false, root = ROOT } = {}) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let path = normalize(decodeURIComponent(url.pathname));
    let coi = isolate;
    if (path.startsWith('/coi/')) {
      path = path.slice(4);
      coi = true;
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = join(root, path);
    if (!file.startsWith(root + '/')) { res.writeHead(403).end(); return; }
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream',
                           'cache-control': 'no-store', ...(coi ? ISOLATION_HEADERS : {}) });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}\n`);
    }
  });
  return new Promise((ok) => server.listen(port, '127.0.0.1', () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // node web/test/serve.mjs [PORT] [--isolate]
  const isolate = process.argv.includes('--isolate');
  const port = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) || 8080);
  const server = await serve(port, { isolate });
  const { port: p } = server.address();
  console.log(`serving ${ROOT} on http://127.0.0.1:${p}/${isolate ? ' (cross-origin isolated)' : ''}`);
  console.log(`demo: http://127.0.0.1:${p}/web/demo/ (isolated, threads: http://127.0.0.1:${p}/coi/web/demo/)`);
}
