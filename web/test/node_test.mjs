// texel-gpu in Node (>= 18), no browser: the package imports, the engine
// (texel.wasm, read from the package) loads, and create() answers at once
// with TexelError UNSUPPORTED naming what is missing (Node has no WebGL2, and
// the engine makes every context on one) instead of hanging or failing on a
// fetch of a file: URL, and Node exits once done. `node web/test/node_test.mjs [MODULE]`: MODULE
// defaults to ../texel.js (web/test/bundle_test.sh passes 'texel-gpu' from a
// project that installed the npm tarball). Prints "N passed, N failed".
const spec = process.argv[2] || '../texel.js';
let passed = 0, failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (ok) passed++; else failed++;
};
const within = (p, ms) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error(`no answer in ${ms} ms`)), ms))]);

// importing the module and a failed create() leave nothing that keeps Node running
{
  const { spawnSync } = await import('node:child_process');
  const target = spec.startsWith('.') ? new URL(spec, import.meta.url).href : spec;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e',
    `const t = await import(${JSON.stringify(target)}); await t.create().catch(() => {});`],
  { timeout: 30000, cwd: process.cwd() });
  check(r.status === 0 && r.signal === null, `Node exits after import + create() (${Date.now() - t0} ms, status ${r.status}, signal ${r.signal})`);
}

try {
  const texel = await import(spec);
  check(typeof texel.create === 'function' && typeof texel.Session === 'function', `import('${spec}')`);
  check(texel.simdAvailable() === true, 'wasm SIMD validates in Node');
  for (const opts of [{}, { device: 'cpu' }, { simd: false }]) {
    let err = null;
    const t0 = Date.now();
    try { await within(texel.create(opts), 30000); } catch (e) { err = e; }
    check(err instanceof texel.TexelError && err.status === texel.Status.UNSUPPORTED &&
      err.statusName === 'TX_STATUS_UNSUPPORTED' && /WebGL2/.test(err.message) && /Node/.test(err.message),
    `create(${JSON.stringify(opts)}) rejects with UNSUPPORTED in ${Date.now() - t0} ms: ${err?.message ?? 'resolved'}`);
  }
  // the engine did load: its status table came from the wasm
  check(Object.keys(texel.Status).length >= 12 && texel.Status.OK === 0, `Status from the engine: ${Object.keys(texel.Status).length} codes`);
} catch (e) {
  check(false, `threw: ${e.stack || e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
