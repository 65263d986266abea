// `node web/test/vite_dev.mjs APP`: Vite's dev server (web/package.json's
// pinned vite) on the app directory APP, on a free port, and its page opened
// in headless Chromium (run.mjs). web/test/bundle_test.sh runs it on the
// fresh project that installed the npm tarball, with the vite.config.js
// web/README.md asks for (optimizeDeps.exclude: the dev server's
// pre-bundling moves the package's modules away from its .wasm files).
import { createServer } from 'vite';
import { runPage } from './run.mjs';

const server = await createServer({
  root: process.argv[2],
  logLevel: 'warn',
  server: { host: '127.0.0.1', port: 0, strictPort: true },
});
await server.listen();
const { port } = server.httpServer.address();
const status = await runPage(`http://127.0.0.1:${port}/`);
await server.close();
process.exit(status);
