// texel: tensors on the GPU of any WebGL2 browser, or on its CPU (wasm SIMD,
// web workers). The JS face of the C engine (texel.wasm, driven through the
// thin C layer web/texel_web.c).
//
//   import * as texel from 'texel-gpu';
//   const tx = await texel.create();
//   const y = tx.scope(() => tx.tensor([1, 2, 3, 4], [2, 2]).matmul(w, { activation: 'relu' }));
//   console.log(await y.data());   // Float32Array, read without blocking the page
//   y.dispose();
//
// Op methods (a.add(b), a.matmul(b, {...}), x.relu(), x.clip(0, 6), ...) are made
// from the engine's op list at load time: an op added to the C engine appears
// here without JS edits. Arguments after the tensor inputs are the op's
// attributes, positionally or as one options object (camelCase or snake_case).
//
// Three builds of the engine: texel.mjs/.wasm (wasm SIMD, one thread),
// texel-mt.mjs/.wasm (SIMD + a pool of web workers for the CPU device; needs
// SharedArrayBuffer, i.e. a cross-origin isolated page: COOP same-origin +
// COEP require-corp) and texel-scalar.mjs/.wasm (no SIMD, one thread: for
// browsers without wasm SIMD). create() takes the threaded one when the page
// is isolated, unless told otherwise (create({threads: false | true})), and
// the scalar one where WebAssembly.validate refuses a SIMD instruction (or
// create({simd: false})).

/** Engine status codes by name (`Status.CONTEXT_LOST` ...), filled on load. */
export const Status = {};

export class TexelError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'TexelError';
    /** The engine's tx_status (a number; see Status). */
    this.status = status;
    /** e.g. 'TX_STATUS_SHAPE_MISMATCH' */
    this.statusName = statusNames[status] || `TX_STATUS_${status}`;
  }
}

const statusNames = [];
const DTYPES = ['float32', 'int32'];
/** tx_device names by value: 0 default, 1 gpu, 2 cpu, 3 auto (filled on load). */
const DEVICES = [];
const corePromises = new Map(); // build name → Promise<core>

/** True where the threaded build can run: SharedArrayBuffer on a cross-origin isolated page. */
export function threadsAvailable() {
  return typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true;
}

/** True where the browser runs wasm SIMD (a module with one v128 instruction validates). */
export function simdAvailable() {
  return WebAssembly.validate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123,
    3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]));
}

const isNode = () => typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined';

// A file of this package, in Node. The module name is not a literal, so that
// bundlers (which never take this path: there is a window) leave it alone.
async function readPackageFile(name) {
  const fsName = 'node:fs/promises';
  const fs = await import(/* @vite-ignore */ fsName);
  return new Uint8Array(await fs.readFile(new URL("./" + name, import.meta.url)));
}

function loadCore(opts) {
  const simd = opts.simd === undefined || opts.simd === 'auto' ? simdAvailable() : !!opts.simd;
  const threads = opts.threads === undefined || opts.threads === 'auto' ? simd && threadsAvailable() : !!opts.threads;
  if (threads && typeof SharedArrayBuffer !== 'function')
    return Promise.reject(new TexelError(Status.UNSUPPORTED ?? 8, 'texel.create: threads: true needs SharedArrayBuffer, which browsers give only to cross-origin isolated pages (headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)'));
  if (threads && !simd)
    return Promise.reject(new TexelError(Status.UNSUPPORTED ?? 8, 'texel.create: the threaded build needs wasm SIMD'));
  const build = threads ? 'mt' : simd ? 'simd' : 'scalar';
  let p = corePromises.get(build);
  if (!p) {
    const moduleOpts = {};
    const wasmUrl = threads ? opts.wasmUrlThreads : simd ? opts.wasmUrl : opts.wasmUrlScalar;
    if (wasmUrl) moduleOpts.locateFile = (f) => (f.endsWith('.wasm') ? wasmUrl : new URL(f, import.meta.url).href);
    p = (threads ? import('./texel-mt.mjs') : simd ? import('./texel.mjs') : import('./texel-scalar.mjs'))
      .then(async (m) => {
        // Node: no fetch of file: URLs; the bytes are read from the package
        if (isNode() && !wasmUrl)
          moduleOpts.wasmBinary = await readPackageFile(threads ? 'texel-mt.wasm' : simd ? 'texel.wasm' : 'texel-scalar.wasm');
        return m.default(moduleOpts);
      })
      .then((core) => {
        for (let i = 0; i < core._txw_status_count(); i++) {
          const name = core.UTF8ToString(core._txw_status_name(i));
          statusNames[i] = name;
          Status[name.replace(/^TX_STATUS_/, '')] = i;
        }
        for (let d = 0; d < 4; d++) DEVICES[d] = core.UTF8ToString(core._txw_device_name(d));
        installOps(core);
        core.txwThreads = threads;
        core.txwSimd = simd;
        return core;
      });
    p.catch(() => corePromises.delete(build));
    corePromises.set(build, p);
  }
  return p;
}

// A device name → its tx_device value. allowAuto: sessions only.
function deviceCode(name, what, allowAuto) {
  if (name === undefined || name === null || name === 'default') return 0;
  const d = DEVICES.indexOf(name);
  if (d <= 0 || (d === 3 && !allowAuto))
    throw new TexelError(Status.INVALID_ARGUMENT, `${what}: unknown device "${name}" (${allowAuto ? "'auto', " : ''}'gpu' or 'cpu')`);
  return d;
}

// ---- auto's decisions, remembered per model bytes + renderer ----
// The C side keeps them in a file on the desktop; under emscripten the page
// keeps them here (localStorage, where there is one: not in workers).
const CHOICE_PREFIX = 'texel-device:';

function modelHash(bytes) {
  // two FNV-1a 32 lanes (different offsets) and the length: 64 bits of identity
  let a = 0x811c9dc5, b = 0x050c5d1f;
  for (let i = 0; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 16777619);
    b = Math.imul(b ^ bytes[i], 16777619);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}-${bytes.length}`;
}

function storage() {
  try { return globalThis.localStorage ?? null; } catch { return null; }
}

function recallChoice(key) {
  try {
    const v = JSON.parse(storage()?.getItem(key) ?? 'null');
    return v && (v.device === 'gpu' || v.device === 'cpu') ? v : null;
  } catch { return null; }
}

// A software rasterizer that auto's probe confirmed (engine/model/choose.c)
// is the renderer's, whatever the model: the origin keeps it for a day, so
// that a later page's 'auto' sessions go to the CPU at once, without making
// a WebGL2 context to ask the renderer. A context made here that names
// another renderer forgets it.
const SOFTWARE_KEY = `${CHOICE_PREFIX}software`;
const SOFTWARE_MS = 24 * 3600e3;

function recallSoftware() {
  try {
    const v = JSON.parse(storage()?.getItem(SOFTWARE_KEY) ?? 'null');
    const age = Date.now() - (v?.at ?? NaN);
    return typeof v?.renderer === 'string' && age >= 0 && age < SOFTWARE_MS ? v : null;
  } catch { return null; }
}

// Is any choice remembered for the model of this hash (on any renderer)?
function hasChoice(hash) {
  const s = storage();
  try {
    for (let i = 0; s && i < s.length; i++) if (s.key(i)?.startsWith(`${CHOICE_PREFIX}${hash}:`)) return true;
  } catch { /* no storage: nothing remembered */ }
  return false;
}

function rememberChoice(key, st) {
  try {
    storage()?.setItem(key, JSON.stringify({ device: st.nextDevice, gpuMs: st.gpuMs, cpuMs: st.cpuMs }));
  } catch { /* quota or privacy mode: remembering is an optimisation */ }
}

// Kernel variants measured per renderer (env TEXEL_TUNE=1: matmul's tile
// rows, conv's positions per fragment, per size class), handed to every later
// context on that renderer: {"matmul-tm": [per class], "conv-tp": [...]}.
const KERNEL_PREFIX = 'texel-kernels:';
const TUNE_CLASSES = 32;
const TUNED = ['matmul-tm', 'conv-tp']; // texel_web.c: k_tuned

function recallKernels(core, w, key) {
  try {
    const v = JSON.parse(storage()?.getItem(key) ?? 'null');
    TUNED.forEach((kernel, k) => {
      if (!Array.isArray(v?.[kernel])) return;
      v[kernel].slice(0, TUNE_CLASSES).forEach((x, cls) => { if (x) core._txw_set_kernel_choice(w, k, cls, x | 0); });
    });
  } catch { /* a damaged entry: measure again */ }
}

function rememberKernels(core, w, key) {
  const v = {};
  TUNED.forEach((kernel, k) => {
    const c = Array.from({ length: TUNE_CLASSES }, (_, cls) => core._txw_kernel_choice(w, k, cls));
    if (c.some((x) => x)) v[kernel] = c;
  });
  if (!Object.keys(v).length) return;
  try { storage()?.setItem(key, JSON.stringify(v)); } catch { /* an optimisation */ }
}

// The browser starts its GPU process at a page's first WebGL context, and the
// thread that asks waits inside getContext for it: 0.2-1.7 s on SwiftShader
// in a browser just launched. An 'auto' session would then make texel's
// context on the page's thread before its second run, and on a software
// rasterizer time a matmul on it (auto's probe, ~0.5 s there). The worker
// below looks first, off the page's thread: a throwaway WebGL2 context (the
// GPU process started), its renderer, and a fragment shader's FMA rate (4
// independent vec4 chains, 128x128 fragments, 255 steps timed beyond one).
// Meanwhile auto's sessions stay on the CPU (tx_ctx_gpu_hint); a software
// rasterizer timed slow keeps them there without texel's context, and a
// remembered choice is found by the renderer without it. Resolves
// {renderer, ms, gflops} or null (no Worker, no OffscreenCanvas WebGL2, a
// CSP without blob: workers, 10 s without an answer). TIME false: the
// context and renderer only (create()'s look, which needs no rate).
const WARM_SRC = `const t0 = performance.now();
let renderer = null, ms = 0, gflops = 0;
try {
  const W = 128, H = 128, N = 256;
  // texel_lib.js's attributes (powerPreference: the same GPU of two)
  const gl = new OffscreenCanvas(W, H).getContext('webgl2', { alpha: false, depth: false, stencil: false,
    antialias: false, premultipliedAlpha: false, preserveDrawingBuffer: false, powerPreference: 'high-performance' });
  ms = performance.now() - t0;
  if (gl) {
    const d = gl.getExtension('WEBGL_debug_renderer_info');
    renderer = String((d && gl.getParameter(d.UNMASKED_RENDERER_WEBGL)) || gl.getParameter(gl.RENDERER));
    const shader = (type, src) => { const x = gl.createShader(type); gl.shaderSource(x, src); gl.compileShader(x); return x; };
    const p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER, '#version 300 es\\nvoid main() {\\n' +
      '  gl_Position = vec4(vec2(gl_VertexID & 1, gl_VertexID >> 1) * 4.0 - 1.0, 0.0, 1.0);\\n}'));
    gl.attachShader(p, shader(gl.FRAGMENT_SHADER, '#version 300 es\\nprecision highp float;\\n' +
      'uniform int n; uniform vec4 s; out vec4 o;\\nvoid main() {\\n' +
      '  vec4 t = s * gl_FragCoord.x, a = t, b = t + 1.0, c = t + 2.0, e = t + 3.0;\\n' +
      '  for (int i = 0; i < n; i++) { a = a * s + t; b = b * s + t; c = c * s + t; e = e * s + t; }\\n' +
      '  o = (a + b + c + e) * 1e-9;\\n}'));
    gl.linkProgram(p);
    if (TIME && gl.getProgramParameter(p, gl.LINK_STATUS)) {
      gl.useProgram(p);
      gl.uniform4f(gl.getUniformLocation(p, 's'), 0.5, 0.25, 0.125, 0.0625);
      const px = new Uint8Array(4), nl = gl.getUniformLocation(p, 'n');
      const draw = (k) => {
        const t = performance.now();
        gl.uniform1i(nl, k);
        gl.drawArrays(gl.TRIANGLES, 0, 3);
        gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
        return performance.now() - t;
      };
      draw(1); // the driver's compile
      const spent = draw(N) - draw(1);
      gflops = spent > 0 ? Math.min(W * H * (N - 1) * 32 / (spent * 1e6), 1e6) : 1e6;
    }
    gl.getExtension('WEBGL_lose_context')?.loseContext();
  }
} catch (e) { /* no WebGL2 here: null */ }
postMessage({ renderer, ms, gflops });`;

// A texel context on this page has made its WebGL2 context: the GPU
// process runs, and create() need not wait for a look.
let gpuStarted = false;

/** @internal Tests only: as on a page where no texel context made its WebGL2 context yet. */
export function _forgetGpuStarted() { gpuStarted = false; }

// onStop receives a function that ends the look at once (null answer); time:
// whether the worker times its shader (auto needs the rate, create() not).
function warmGpu(onStop, time = true) {
  if (typeof Worker !== 'function' || typeof Blob !== 'function' || typeof URL?.createObjectURL !== 'function')
    return Promise.resolve(null);
  return new Promise((resolve) => {
    let worker = null, url = null, timer = null, settled = false;
    const done = (v) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try { worker?.terminate(); } catch { /* gone */ }
      if (url) URL.revokeObjectURL(url);
      resolve(v && typeof v.renderer === 'string' ? { renderer: v.renderer.slice(0, 127), ms: +v.ms, gflops: +v.gflops || 0 } : null);
    };
    try {
      url = URL.createObjectURL(new Blob([`const TIME = ${!!time};\n${WARM_SRC}`], { type: 'text/javascript' }));
      worker = new Worker(url);
    } catch {
      done(null); // e.g. a content security policy without blob: workers
      return;
    }
    timer = setTimeout(() => done(null), 10e3);
    worker.onmessage = (e) => done(e.data);
    worker.onerror = () => done(null);
    onStop?.(() => done(null));
  });
}

// A context about to be made on the page's thread (create() of a GPU
// context, a GPU session on a context whose WebGL2 context is still to
// come), where no texel context made one yet: the worker starts the GPU
// process first (no shader timed), waited for at most 3 s, so that the
// page's thread does not freeze in getContext while it starts (SwiftShader,
// a browser just started: the longest block 0.21-1.47 s → 0.12-0.17,
// bench/README). Once one has (gpuStarted), the look would only cost time.
async function startGpuProcess() {
  if (gpuStarted) return;
  let stop = null;
  await within(warmGpu((s) => { stop = s; }, false), LOOK_WAIT_MS);
  stop?.();
}

// How long the page waits for a look it needs (the worker's own limit: 10 s).
const LOOK_WAIT_MS = 3000;

// p, or null after ms (p goes on).
function within(p, ms) {
  let timer;
  return Promise.race([p, new Promise((r) => { timer = setTimeout(() => r(null), ms); })])
    .finally(() => clearTimeout(timer));
}

/** Forgets every remembered auto decision and kernel choice of this origin. */
export function forgetDeviceChoices() {
  const s = storage();
  if (!s) return;
  for (let i = s.length - 1; i >= 0; i--) {
    const k = s.key(i);
    if (k?.startsWith(CHOICE_PREFIX) || k?.startsWith(KERNEL_PREFIX)) s.removeItem(k);
  }
}

// Copies strings into the wasm heap (NUL-terminated); the caller frees each pointer.
function heapStrings(c, list) {
  return list.map((n) => {
    const len = c.lengthBytesUTF8(n) + 1;
    const sp = c._malloc(len);
    c.stringToUTF8(n, sp, len);
    return sp;
  });
}

const camelToSnake = (k) => k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
const snakeToCamel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

/** The op list of the loaded engine: [{name, op, arity, attrs}]. */
let opSpecs = [];

function installOps(core) {
  opSpecs = [];
  for (let op = 1; op < core._txw_op_count(); op++) {
    const name = core.UTF8ToString(core._txw_op_name(op));
    const attrs = core.UTF8ToString(core._txw_op_attr_names(op)).split(',').filter(Boolean);
    const spec = { name, op, arity: core._txw_op_arity(op), attrs };
    opSpecs.push(spec);
    // Built-in members win (an op named like one is still reachable: tx.run).
    if (!(name in Tensor.prototype)) {
      Object.defineProperty(Tensor.prototype, name, {
        configurable: true, writable: true,
        value(...args) { return this._tx._callOp(spec, [this, ...args]); },
      });
    }
    if (!(name in Context.prototype)) {
      Object.defineProperty(Context.prototype, name, {
        configurable: true, writable: true,
        value(...args) { return this._callOp(spec, args); },
      });
    }
  }
}

// A fetch response's bytes, read as a stream so onProgress({phase: 'download',
// loaded, total}) sees them arrive (total: Content-Length, 0 when the server
// sends none or the body is compressed).
async function readBody(res, onProgress) {
  if (!onProgress || !res.body?.getReader) return new Uint8Array(await res.arrayBuffer());
  const enc = res.headers.get('content-encoding');
  const total = enc && enc !== 'identity' ? 0 : Number(res.headers.get('content-length')) || 0;
  const reader = res.body.getReader();
  const chunks = [];
  let loaded = 0;
  onProgress({ phase: 'download', loaded, total });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onProgress({ phase: 'download', loaded, total });
  }
  const bytes = new Uint8Array(loaded);
  let off = 0;
  for (const ch of chunks) {
    bytes.set(ch, off);
    off += ch.length;
  }
  return bytes;
}

// Frees the GPU memory of tensors the app forgot to dispose. A safety net, not
// a memory manager: GC timing is up to the browser.
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ tx, id }) => tx._finalize(id)) : null;

export class Tensor {
  constructor(tx, id, shape, dtype) {
    this._tx = tx;
    this._id = id;
    /** @type {readonly number[]} */
    this.shape = Object.freeze(shape.slice());
    this.dtype = dtype;
    this.size = numel(shape);
    this.rank = shape.length;
  }

  get disposed() { return this._id === 0; }
  /** The engine's handle (for debugging). */
  get id() { return this._id; }

  dispose() {
    if (this._id === 0) return;
    if (this._borrowed) this._id = 0; // a session's weight: the session frees it
    else this._tx._destroy(this);
  }

  /** Blocking read: stalls the page until the GPU is done. */
  dataSync() { return this._tx._readSync(this); }

  /** Non-blocking read: pixel-pack buffer + fence, polled between tasks. */
  data() { return this._tx._readAsync(this); }

  /** A view with a new shape (no draw, no copy); one dim may be -1. */
  reshape(shape) { return this._tx._reshape(this, shape); }

  /** 'gpu' (a texture) or 'cpu' (wasm memory): where the tensor lives and its ops run. */
  get device() { return this._tx._device(this); }

  /** A copy on `device` ('gpu' | 'cpu'): a new tensor, the counted crossing between devices. */
  to(device) { return this._tx._to(this, device); }

  /** Nested JS arrays (blocking). */
  arraySync() {
    const flat = Array.from(this.dataSync());
    const build = (dim, off) => {
      if (dim === this.rank) return flat[off];
      const step = numel(this.shape.slice(dim + 1));
      return Array.from({ length: this.shape[dim] }, (_, i) => build(dim + 1, off + i * step));
    };
    return build(0, 0);
  }

  toString() {
    return `Tensor(${this._id ? `#${this._id}` : 'disposed'}, ${this.dtype}, [${this.shape.join(', ')}])`;
  }
}

class Context {
  constructor(core, w, canvas, blockingReadMs = 0) {
    this._core = core;
    this._w = w;
    this.canvas = canvas;
    this._scratch = core._malloc(256);
    this._scopes = [];
    this._pending = new Set();
    // blocking reads (_readAsync): the work a read waited for -> how long
    this._readWaits = new Map();
    this._blockingReadMs = blockingReadMs;
    this._blockingReads = 0;
    this._listeners = { contextlost: [], contextrestored: [] };
    this._sessions = new Set();
    this._live = 0;
    this._finalized = 0;
    this._onLost = (e) => {
      e.preventDefault(); // lets the browser restore the context
      this._lose();
    };
    this._onRestored = () => this._restore();
    // null: a context without GL (Node), nothing to lose; with its WebGL2
    // context still to come, the canvas it will be made on
    canvas?.addEventListener('webglcontextlost', this._onLost);
    canvas?.addEventListener('webglcontextrestored', this._onRestored);
    /** True when this context runs the threaded build (texel-mt.wasm). */
    this.threads = core.txwThreads;
    /** False when it runs the build without wasm SIMD (texel-scalar.wasm). */
    this.simd = core.txwSimd;
    this._caps = null;
    this._warm = null; // warmGpu's answer (a promise), asked at the first 'auto' loadModel
    this._warmAnswer = null;
    this._warmStop = null; // ends a look still under way (dispose)
    this._kernelKey = null; // per renderer: known once the WebGL2 context is made
    const raw = this._rawCaps();
    if (raw.glPending) (core.txwContexts ??= new Map()).set(w, this); // _glMade at the first GPU use
    else if (!raw.noGpu) this._glMade(raw.renderer);
    // measured kernel choices outlive the page (and this context)
    this._onPageHide = () => { if (this._w && this._kernelKey) rememberKernels(core, this._w, this._kernelKey); };
    globalThis.addEventListener?.('pagehide', this._onPageHide);
  }

  /**
   * Probed device capabilities (renderer, max texture size, float render ...).
   * A context whose WebGL2 context is still to come (create() without device
   * 'gpu') makes it here: the probes are what caps report.
   */
  get caps() {
    if (this._caps) return this._caps;
    if (!this._w) throw new TexelError(Status.INVALID_ARGUMENT, 'texel: this context was disposed');
    if (this._rawCaps().glPending) this._core._txw_start_gl(this._w); // failing: caps.noGpu says so
    this._caps = this._rawCaps();
    return this._caps;
  }

  /** False until the context has a working WebGL2 context (and after one the probes refused): create() without device 'gpu' makes it at the first GPU use (a GPU tensor or op, a session on the GPU, an 'auto' session's second run unless a worker's look at the GPU kept it on the CPU, reading caps), so that work on the CPU never waits for it. */
  get glMade() { return !!this._w && this._core._txw_gl_handle(this._w) !== 0 && !this._rawCaps().noGpu; }

  _rawCaps() { return camelKeys(JSON.parse(this._core.UTF8ToString(this._core._txw_caps_json(this._w)))); }

  // The worker's look at the GPU (warmGpu), once per context: auto's
  // sessions wait for it on the CPU (tx_ctx_gpu_hint), then learn what it found.
  _warmGpu() {
    if (this._warm) return this._warm;
    const c = this._core, w = this._ctx();
    c._txw_gpu_hint(w, 0, 0);
    this._warm = warmGpu((stop) => { this._warmStop = stop; }).then((v) => {
      this._warmAnswer = v;
      if (this._w === w) {
        const [sp] = heapStrings(c, [v?.renderer ?? '']);
        c._txw_gpu_hint(w, sp, v?.gflops ?? 0);
        c._free(sp);
      }
      return v;
    });
    return this._warm;
  }

  // The WebGL2 context is made (at creation, or by the engine at the first
  // GPU use, before its probes): the kernel choices kept for its renderer.
  _glMade(renderer) {
    gpuStarted = true;
    this._core.txwContexts?.delete(this._w);
    const software = recallSoftware();
    try {
      if (software && software.renderer !== renderer) storage()?.removeItem(SOFTWARE_KEY);
    } catch { /* no storage: nothing kept */ }
    this._kernelKey = `${KERNEL_PREFIX}${renderer}`;
    recallKernels(this._core, this._w, this._kernelKey);
  }

  // ---- plumbing ----

  _ctx() {
    if (!this._w) throw new TexelError(Status.INVALID_ARGUMENT, 'texel: this context was disposed');
    return this._w;
  }

  _check(status) {
    if (status === 0) return;
    const msg = this._core.UTF8ToString(this._core._txw_last_error(this._w));
    throw new TexelError(status, msg || statusNames[status]);
  }

  _u32(i = 0) { return this._core.HEAPU32[(this._scratch >> 2) + i]; }

  _track(t) {
    this._live++;
    if (this._scopes.length) this._scopes[this._scopes.length - 1].add(t);
    registry?.register(t, { tx: this, id: t._id }, t);
    return t;
  }

  _wrap(id) {
    const c = this._core;
    const p = this._scratch + 64;
    this._check(c._txw_tensor_shape(this._w, id, p));
    const h = c.HEAP32.subarray(p >> 2, (p >> 2) + 8);
    return this._track(new Tensor(this, id, Array.from(h.subarray(2, 2 + h[0])), DTYPES[h[1]]));
  }

  _destroy(t) {
    const id = t._id;
    t._id = 0;
    this._live--;
    registry?.unregister(t);
    if (this._w) this._core._txw_tensor_destroy(this._w, id);
  }

  _finalize(id) {
    if (!this._w) return;
    this._live--;
    this._finalized++;
    this._core._txw_tensor_destroy(this._w, id);
  }

  _own(t, what) {
    if (!(t instanceof Tensor)) throw new TexelError(Status.INVALID_ARGUMENT, `${what} is not a texel Tensor`);
    if (t._tx !== this) throw new TexelError(Status.INVALID_ARGUMENT, `${what} belongs to another texel context`);
    if (t._id === 0) throw new TexelError(Status.STALE_HANDLE, `${what} was disposed`);
    return t._id;
  }

  // ---- tensors ----

  /**
   * tensor(values, shape?, dtype? | {dtype?, device?}): values is a
   * Float32Array, Int32Array, number[] or a number (a scalar). Int32Array
   * gives an int32 tensor. dtype 'float16': values are half floats, a
   * Uint16Array of their bit patterns (or a Float16Array where the browser
   * has one), for a float32 tensor; a context storing float16 takes them as
   * they are (half the bytes), others widen them exactly. device: 'gpu' |
   * 'cpu' (default: the context's).
   */
  tensor(values, shape, dtype) {
    const w = this._ctx();
    let device = 0;
    if (dtype && typeof dtype === 'object') {
      device = deviceCode(dtype.device, 'tensor', false);
      dtype = dtype.dtype;
    }
    if (typeof values === 'number') {
      values = [values];
      shape ??= [];
    }
    if (dtype === 'float16') return this._tensorHalves(values, shape, device);
    if (!dtype) dtype = values instanceof Int32Array ? 'int32' : 'float32';
    const code = DTYPES.indexOf(dtype);
    if (code < 0) throw new TexelError(Status.INVALID_ARGUMENT, `tensor: unknown dtype "${dtype}" (float32 or int32)`);
    const data = values instanceof (code ? Int32Array : Float32Array) ? values
      : (code ? Int32Array : Float32Array).from(values);
    shape ??= [data.length];
    return this._tensorFrom(w, data, shape, code, device);
  }

  _tensorHalves(values, shape, device) {
    const w = this._ctx();
    const F16 = globalThis.Float16Array;
    const data = values instanceof Uint16Array ? values
      : F16 && values instanceof F16 ? new Uint16Array(values.buffer, values.byteOffset, values.length)
        : null;
    if (!data)
      throw new TexelError(Status.INVALID_ARGUMENT, "tensor: dtype 'float16' takes a Uint16Array of half-float bit patterns or a Float16Array");
    shape ??= [data.length];
    return this._tensorFrom(w, data, shape, 2, device);
  }

  // code: 0 float32, 1 int32, 2 float32 from half floats (tx_tensor_desc.data_f16)
  _tensorFrom(w, data, shape, code, device) {
    if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0))
      throw new TexelError(Status.INVALID_ARGUMENT, `tensor: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    if (shape.length > 6) throw new TexelError(Status.RANK_TOO_HIGH, `tensor: rank ${shape.length} exceeds the maximum of 6`);
    if (numel(shape) !== data.length)
      throw new TexelError(Status.SHAPE_MISMATCH, `tensor: ${data.length} values given for shape [${shape.join(', ')}] (${numel(shape)} elements)`);
    const c = this._core;
    const bytes = data.length * data.BYTES_PER_ELEMENT;
    const ptr = c._malloc(Math.max(bytes, 4));
    try {
      c.HEAPU8.set(new Uint8Array(data.buffer, data.byteOffset, bytes), ptr);
      const sp = this._scratch + 64;
      c.HEAP32.set(shape, sp >> 2);
      this._check(c._txw_tensor_create(w, shape.length, sp, code, ptr, device, this._scratch));
    } finally {
      c._free(ptr);
    }
    return this._track(new Tensor(this, this._u32(), shape, code === 1 ? 'int32' : 'float32'));
  }

  /** zeros(shape, dtype?) */
  zeros(shape, dtype = 'float32') {
    return this.tensor(dtype === 'int32' ? new Int32Array(numel(shape)) : new Float32Array(numel(shape)), shape, dtype);
  }

  _reshape(t, shape) {
    const w = this._ctx();
    const id = this._own(t, 'reshape: tensor');
    const c = this._core;
    const sp = this._scratch + 64;
    c.HEAP32.set(shape, sp >> 2);
    this._check(c._txw_tensor_reshape(w, id, shape.length, sp, this._scratch));
    return this._wrap(this._u32());
  }

  _device(t) {
    const w = this._ctx();
    const id = this._own(t, 'device: tensor');
    this._check(this._core._txw_tensor_device(w, id, this._scratch));
    return DEVICES[this._core.HEAP32[this._scratch >> 2]];
  }

  _to(t, device) {
    const w = this._ctx();
    const id = this._own(t, 'to: tensor');
    this._check(this._core._txw_tensor_to(w, id, deviceCode(device, 'to', false), this._scratch));
    return this._wrap(this._u32());
  }

  _readSync(t) {
    const w = this._ctx();
    const id = this._own(t, 'dataSync: tensor');
    const c = this._core;
    const bytes = t.size * 4;
    // float32 on the CPU device: one copy, straight out of wasm memory
    const host = t.dtype === 'int32' ? 0 : c._txw_tensor_host_view(w, id);
    if (host) return new Float32Array(c.HEAPU8.slice(host, host + bytes).buffer);
    const ptr = c._malloc(Math.max(bytes, 4));
    try {
      this._check(c._txw_tensor_read(w, id, ptr, bytes));
      const Typed = t.dtype === 'int32' ? Int32Array : Float32Array;
      return new Typed(c.HEAPU8.slice(ptr, ptr + bytes).buffer);
    } finally {
      c._free(ptr);
    }
  }

  _readAsync(t) {
    // A CPU tensor's values are in wasm memory already: nothing to wait for,
    // so no pending read (and one copy fewer)
    try {
      if (this._device(t) === 'cpu') return Promise.resolve(this._readSync(t));
    } catch (e) {
      return Promise.reject(e);
    }
    // A read waits for the work queued before it. Polled, its fence is seen
    // ~1-2 ms after that work is done (Chromium checks it on a timer and
    // between tasks), which is most of a small op's time. So a read whose
    // work was seen before (the same draws since the last read: the C
    // core's key) and then finished within blockingReadMs is finished at
    // once, the page waiting for it as dataSync would; any other is polled.
    // Only with no other read pending: one that is would be waited for too.
    // A longer read of seen work is polled until blockingReadMs / 2 (at most
    // 4 ms) before its last time, then finished at once: the page waits that
    // long instead of the fence's lateness at the end.
    let rid, key, t0;
    try {
      const w = this._ctx();
      const id = this._own(t, 'data: tensor');
      t0 = performance.now();
      this._check(this._core._txw_read_async(w, id, this._scratch));
      rid = this._u32();
      key = `${this._u32(1)}:${t.size}`;
    } catch (e) {
      return Promise.reject(e);
    }
    const seen = this._readWaits.get(key);
    const canBlock = seen !== undefined && this._blockingReadMs > 0 && !this._pending.size;
    const block = canBlock && seen <= this._blockingReadMs;
    // polled: when to stop polling and wait (never, for unseen work)
    const blockAt = canBlock ? seen - Math.min(this._blockingReadMs / 2, 4) : Infinity;
    const { size, dtype } = t;
    const c = this._core;
    // the values, once the fence has signalled (or, blocking, at once: the
    // driver waits for them)
    const finish = () => {
      if (dtype === 'float32') {
        // straight into a new array (texel_web.c txw_read_finish_js)
        c.txwRead = null;
        this._check(c._txw_read_finish_js(this._w, rid));
        const values = c.txwRead;
        c.txwRead = null;
        return values;
      }
      const bytes = size * 4;
      const ptr = c._malloc(Math.max(bytes, 4));
      try {
        this._check(c._txw_read_finish(this._w, rid, ptr, bytes));
        return new Int32Array(c.HEAPU8.slice(ptr, ptr + bytes).buffer);
      } finally {
        c._free(ptr);
      }
    };
    // The wait a read of this work took: a blocking one's own time; a polled
    // one's last poll that found it not done (its fence's lateness left out).
    const remember = (ms) => {
      if (this._readWaits.size >= 1024) this._readWaits.clear();
      this._readWaits.set(key, ms);
    };
    if (block) {
      // Settled from the next task, not at once: a loop of awaited reads
      // must still let the page handle input and paint between them.
      return new Promise((resolve, reject) => {
        let values, err = null;
        try {
          values = finish();
          remember(performance.now() - t0);
          this._blockingReads++;
        } catch (e) {
          err = e;
        }
        later(() => (err ? reject(err) : resolve(values)), 0);
      });
    }
    return new Promise((resolve, reject) => {
      const entry = { reject, done: false };
      this._pending.add(entry);
      let polls = 0;
      let notDone = t0;
      const settle = (fn, v) => {
        entry.done = true;
        this._pending.delete(entry);
        fn(v);
      };
      const poll = () => {
        if (entry.done) return; // rejected by a context loss meanwhile
        try {
          const rp = this._scratch + 128;
          const now = performance.now();
          this._check(c._txw_read_poll(this._w, rid, rp));
          if (!c.HEAP32[rp >> 2]) {
            // past blockAt, and still the only read pending: wait here
            if (now - t0 < blockAt || this._pending.size > 1) {
              notDone = now;
              // the next poll no later than blockAt: a 4 ms step past it
              // would find the work done up to 4 ms late
              later(poll, polls++, blockAt - (now - t0));
              return;
            }
            const values = finish();
            remember(performance.now() - t0);
            this._blockingReads++;
            settle(resolve, values);
            return;
          }
          remember(notDone - t0);
          settle(resolve, finish());
        } catch (e) {
          settle(reject, e);
        }
      };
      later(poll, polls++);
    });
  }

  // ---- ops ----

  /** run('add', [a, b]) / run('matmul', [a, b], {transposeB: true}): any op by name. */
  run(name, inputs, attrs = {}) {
    const spec = opSpecs.find((s) => s.name === name);
    if (!spec) throw new TexelError(Status.INVALID_ARGUMENT, `unknown op "${name}" (ops: ${opSpecs.map((s) => s.name).join(', ')})`);
    return this._callOp(spec, [...inputs, attrs]);
  }

  /** The engine's ops: [{name, arity, attrs}]. */
  get ops() { return opSpecs.map(({ name, arity, attrs }) => ({ name, arity, attrs: attrs.map(snakeToCamel) })); }

  _callOp(spec, args) {
    const w = this._ctx();
    const { name, arity } = spec;
    const inputs = [];
    const temps = [];
    let i = 0;
    try {
      for (; inputs.length < arity && i < args.length; i++) {
        const a = args[i];
        if (typeof a === 'number') {
          const t = this.tensor(a, [], inputs[0]?.dtype ?? 'float32');
          this.keep(t);
          temps.push(t);
          inputs.push(t);
        } else {
          this._own(a, `${name}: input ${inputs.length}`);
          inputs.push(a);
        }
      }
      if (inputs.length < arity)
        throw new TexelError(Status.INVALID_ARGUMENT, `${name}: takes ${arity} tensor input${arity > 1 ? 's' : ''}, got ${inputs.length}`);
      const attrs = {};
      let pos = 0;
      for (; i < args.length; i++) {
        const a = args[i];
        if (a && typeof a === 'object' && !(a instanceof Tensor) && !Array.isArray(a) && !ArrayBuffer.isView(a)) {
          for (const [k, v] of Object.entries(a)) attrs[camelToSnake(k)] = v;
        } else {
          if (pos >= spec.attrs.length)
            throw new TexelError(Status.INVALID_ARGUMENT, `${name}: too many arguments (attributes: ${spec.attrs.map(snakeToCamel).join(', ') || 'none'})`);
          attrs[spec.attrs[pos++]] = a; // undefined keeps the default
        }
      }
      const enc = [];
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null) continue;
        let s;
        if (v instanceof Tensor) s = String(this._own(v, `${name}: ${snakeToCamel(k)}`));
        else if (typeof v === 'boolean') s = v ? '1' : '0';
        else if (Array.isArray(v) || ArrayBuffer.isView(v)) s = Array.from(v).join(',');
        else s = String(v);
        enc.push(`${k}=${s}`);
      }
      const c = this._core;
      const str = enc.join(';');
      const sp = c._malloc(c.lengthBytesUTF8(str) + 1);
      const ip = this._scratch + 128;
      try {
        c.stringToUTF8(str, sp, c.lengthBytesUTF8(str) + 1);
        c.HEAPU32.set(inputs.map((t) => t._id), ip >> 2);
        this._check(c._txw_op_run(w, spec.op, ip, inputs.length, sp, this._scratch));
      } finally {
        c._free(sp);
      }
      return this._wrap(this._u32());
    } finally {
      for (const t of temps) t.dispose();
    }
  }

  // ---- models ----

  /**
   * loadModel(ArrayBuffer | Uint8Array | URL string, {device?, onProgress?}): an ONNX model
   * as a Session. Its graph is planned and its weights uploaded once; after a
   * context loss the engine re-uploads them when the context is restored.
   * device: 'auto' (default), 'gpu' or 'cpu'. 'auto' runs a software
   * rasterizer's sessions on the CPU; elsewhere it measures both devices over
   * the first runs and keeps the faster, remembered in localStorage per model
   * bytes + renderer so the next load of the model decides at once.
   * onProgress(event): {phase: 'download', loaded, total} as the bytes arrive
   * (total 0: unknown), then {phase: 'compile', done, total} as the GPU
   * programs compile (session.compile; total 0 on the CPU): the promise
   * resolves once they have, so the first run does not wait for them.
   */
  async loadModel(source, options = {}) {
    const want = options?.device ?? 'auto';
    const code = deviceCode(want, 'loadModel', true);
    const onProgress = options?.onProgress;
    if (onProgress !== undefined && typeof onProgress !== 'function')
      throw new TexelError(Status.INVALID_ARGUMENT, 'loadModel: onProgress must be a function');
    let bytes;
    const isUrl = typeof source === 'string' || (typeof URL === 'function' && source instanceof URL);
    if (isUrl) {
      let res;
      try {
        res = await fetch(source);
      } catch (e) {
        throw new TexelError(Status.INVALID_ARGUMENT, `loadModel: fetching ${source} failed: ${e.message}`);
      }
      if (!res.ok) throw new TexelError(Status.INVALID_ARGUMENT, `loadModel: fetching ${source}: HTTP ${res.status}`);
      bytes = await readBody(res, onProgress);
    } else if (source instanceof ArrayBuffer) {
      bytes = new Uint8Array(source);
    } else if (ArrayBuffer.isView(source)) {
      bytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    } else {
      throw new TexelError(Status.INVALID_ARGUMENT, 'loadModel: pass an ArrayBuffer, a typed array or a URL');
    }
    this._ctx(); // (not disposed)
    const c = this._core;
    let device = code, remembered = null, choiceKey = null, software = null;
    const raw = this._rawCaps();
    if ((code === 0 || code === 3) && !raw.noGpu) { // auto (without GL: the CPU at once)
      // The key names the renderer. With no WebGL2 context yet: a model
      // with a remembered choice is looked up by the worker's renderer
      // (warmGpu; without an answer within 3 s, texel's context is made
      // for it); else a software rasterizer remembered goes to the CPU at
      // once; else the worker looks at the GPU while auto's first runs go
      // on the CPU, and the key is made once auto has measured.
      const hash = modelHash(bytes);
      let renderer = raw.glPending ? null : this.caps.renderer;
      if (raw.glPending && hasChoice(hash))
        renderer = (await within(this._warmGpu(), LOOK_WAIT_MS))?.renderer ?? this.caps.renderer;
      else if (raw.glPending && !(software = recallSoftware()))
        this._warmGpu();
      if (renderer) {
        choiceKey = `${CHOICE_PREFIX}${hash}:${renderer}`;
        remembered = recallChoice(choiceKey);
        if (remembered) device = deviceCode(remembered.device, 'loadModel', false);
      } else if (software) {
        device = deviceCode('cpu', 'loadModel', false);
      } else {
        choiceKey = () => `${CHOICE_PREFIX}${hash}:${this.caps.renderer}`;
      }
    }
    // a GPU session makes the WebGL2 context (unless the worker's look for
    // auto already started the GPU process)
    if (device === 1 && !this._warmAnswer && this._w && this._rawCaps().glPending) await startGpuProcess();
    const w = this._ctx(); // (disposed while a worker answered: an error)
    const ptr = c._malloc(Math.max(bytes.length, 1));
    try {
      c.HEAPU8.set(bytes, ptr); // the engine copies what it keeps
      this._check(c._txw_session_create(w, ptr, bytes.length, device, this._scratch));
    } finally {
      c._free(ptr);
    }
    if (!isUrl)
      onProgress?.({ phase: 'download', loaded: bytes.length, total: bytes.length });
    const session = new Session(this, this._u32());
    if (remembered) {
      const f = (v) => (typeof v === 'number' ? v.toFixed(2) : '?');
      session._reason = `remembered: gpu ${f(remembered.gpuMs)} ms, cpu ${f(remembered.cpuMs)} ms (localStorage)`;
    } else if (software) {
      session._reason = `software rasterizer (${software.renderer}; remembered: probed ` +
        `${new Date(software.at).toISOString()}, localStorage; no WebGL2 context made)`;
    } else if (choiceKey) {
      session._choiceKey = choiceKey; // stored once auto has measured
    }
    this._sessions.add(session);
    if (onProgress) {
      try {
        await session.compile({ onProgress });
      } catch (e) {
        session.dispose();
        throw e;
      }
    }
    return session;
  }

  // ---- training ----

  /**
   * valueAndGrad(f) → (...args) => {value, grads}: runs f(...args) under a
   * gradient tape (every op it runs is recorded) and returns its value (a
   * Tensor; its sum is differentiated) and grads[i] = d sum(value) / d t for
   * each Tensor t among args, in order. f may be async (e.g. a session.run):
   * then the result is a Promise. The gradients are new tensors.
   */
  valueAndGrad(f) {
    if (typeof f !== 'function') throw new TexelError(Status.INVALID_ARGUMENT, 'valueAndGrad: pass a function');
    return (...args) => this._taped(() => f(...args), args.filter((a) => a instanceof Tensor), 'valueAndGrad');
  }

  /** grad(f) → (...args) => the gradient of sum(f(...args)) for each Tensor argument
   *  (one tensor when there is one, else an array); the value is disposed. */
  grad(f) {
    const vg = this.valueAndGrad(f);
    const pick = ({ value, grads }) => {
      value.dispose();
      return grads.length === 1 ? grads[0] : grads;
    };
    return (...args) => {
      const r = vg(...args);
      return r && typeof r.then === 'function' ? r.then(pick) : pick(r);
    };
  }

  /** variable(values | Tensor, shape?): a tensor no tx.scope disposes (a trainable parameter). */
  variable(values, shape, dtype) {
    const t = values instanceof Tensor ? values : this.tensor(values, shape, dtype);
    return this.keep(t);
  }

  // Runs fn under a tape; the gradients of its value for xs.
  _taped(fn, xs, what) {
    const c = this._core;
    const w = this._ctx();
    this._check(c._txw_tape_begin(w, this._scratch));
    const tape = this._u32();
    const finish = (value) => {
      try {
        if (!(value instanceof Tensor)) throw new TexelError(Status.INVALID_ARGUMENT, `${what}: the function must return a Tensor`);
        const ids = xs.map((t, i) => this._own(t, `${what}: argument ${i}`));
        const p = c._malloc(8 * xs.length + 8);
        try {
          c.HEAPU32.set(ids, p >> 2);
          this._check(c._txw_tape_grad(w, tape, this._own(value, `${what}: value`), p, xs.length, p + 4 * xs.length));
          const grads = ids.map((_, i) => this._wrap(c.HEAPU32[(p >> 2) + xs.length + i]));
          return { value, grads };
        } finally {
          c._free(p);
        }
      } finally {
        c._txw_tape_end(w, tape);
      }
    };
    let value;
    try {
      value = fn();
    } catch (e) {
      c._txw_tape_end(w, tape);
      throw e;
    }
    if (value && typeof value.then === 'function')
      return value.then(finish, (e) => { c._txw_tape_end(w, tape); throw e; });
    return finish(value);
  }

  _loss(kind, what, x, y, options = {}) {
    const w = this._ctx();
    const red = options.reduction ?? 'mean';
    const code = ['mean', 'sum', 'none'].indexOf(red);
    if (code < 0) throw new TexelError(Status.INVALID_ARGUMENT, `${what}: reduction "${red}" (mean, sum or none)`);
    const weight = options.weight ? this._own(options.weight, `${what}: weight`) : 0;
    const ii = options.ignoreIndex ?? options.ignore_index;
    this._check(this._core._txw_loss(w, kind, this._own(x, `${what}: x`), this._own(y, `${what}: labels`), weight, code,
      ii === undefined ? 0 : 1, ii ?? 0, this._scratch, 0));
    return this._wrap(this._u32());
  }

  /** softmaxCrossEntropy(scores [N, C, ...], labels int32 [N, ...], {weight, ignoreIndex, reduction}) (ONNX SoftmaxCrossEntropyLoss). */
  softmaxCrossEntropy(scores, labels, options) { return this._loss(0, 'softmaxCrossEntropy', scores, labels, options); }
  /** nllLoss(logProb [N, C, ...], labels, {weight, ignoreIndex, reduction}) (ONNX NegativeLogLikelihoodLoss). */
  nllLoss(logProb, labels, options) { return this._loss(1, 'nllLoss', logProb, labels, options); }
  /** mseLoss(a, b, {reduction}): mean (or sum, none) of (a - b)^2. */
  mseLoss(a, b, options) { return this._loss(2, 'mseLoss', a, b, options); }

  /**
   * optimizer(kind, {lr, momentum, nesterov, beta1, beta2, epsilon, weightDecay}):
   * 'sgd' | 'momentum' | 'adam' | 'adamw'. opt.step(params, grads) updates the
   * params in place (their state lives on the device); opt.minimize(f, params)
   * runs f() under a tape, steps on its gradients and returns its value.
   */
  optimizer(kind, o = {}) {
    const code = ['sgd', 'momentum', 'adam', 'adamw'].indexOf(kind);
    if (code < 0) throw new TexelError(Status.INVALID_ARGUMENT, `optimizer: unknown kind "${kind}" (sgd, momentum, adam, adamw)`);
    const c = this._core;
    this._check(c._txw_optim_create(this._ctx(), code, o.lr ?? 0, o.momentum ?? 0, o.nesterov ? 1 : 0,
      o.beta1 ?? 0, o.beta2 ?? 0, o.epsilon ?? 0, o.weightDecay ?? o.weight_decay ?? 0, this._scratch));
    return new Optimizer(this, this._u32(), kind);
  }

  // ---- memory ----

  /**
   * Runs fn() and disposes every tensor created inside it except those it
   * returns (a tensor, or arrays/objects of tensors), which move to the
   * enclosing scope. fn must be synchronous.
   */
  scope(fn) {
    const mine = new Set();
    this._scopes.push(mine);
    let result;
    try {
      result = fn();
      if (result && typeof result.then === 'function')
        throw new TexelError(Status.INVALID_ARGUMENT, 'scope: fn returned a Promise; scope() takes synchronous functions (await outside it)');
    } finally {
      this._scopes.pop();
      const keep = new Set();
      collectTensors(result, keep, 0);
      const parent = this._scopes[this._scopes.length - 1];
      for (const t of mine) {
        if (keep.has(t)) parent?.add(t);
        else t.dispose();
      }
    }
    return result;
  }

  /** Takes t out of every open scope: it survives them. */
  keep(t) {
    for (const s of this._scopes) s.delete(t);
    return t;
  }

  /** The engine's counters plus the JS wrapper's (camelCase). cpuOps and
   *  liveHostBytes count the CPU device's work and memory. */
  stats() {
    const s = camelKeys(JSON.parse(this._core.UTF8ToString(this._core._txw_stats_json(this._ctx()))));
    for (const k of Object.keys(s.compileFamilies)) s.compileFamilies[k] = camelKeys(s.compileFamilies[k]);
    s.jsLiveTensors = this._live;
    s.jsFinalized = this._finalized;
    s.pendingReads = this._pending.size;
    s.blockingReads = this._blockingReads;
    return s;
  }

  /** Waits for all queued GPU work (for timing). */
  finish() { this._check(this._core._txw_finish(this._ctx())); }

  /** Frees pooled (unused) textures. */
  trim() { this._core._txw_trim(this._ctx()); }

  /** After drawing of your own on the canvas's WebGL context texel uses (create({canvas})):
   *  sets the state texel relies on again and forgets its cached bindings. Call before the next texel call. */
  resetGLState() { this._check(this._core._txw_reset_gl_state(this._ctx())); }

  // ---- context loss ----

  get lost() { return !this._w || this._core._txw_is_lost(this._w) !== 0; }

  /** on('contextlost' | 'contextrestored', fn). A model session re-uploads its weights on 'contextrestored'. */
  on(event, fn) {
    if (!this._listeners[event]) throw new TexelError(Status.INVALID_ARGUMENT, `on: unknown event "${event}"`);
    this._listeners[event].push(fn);
    return () => { this._listeners[event] = this._listeners[event].filter((f) => f !== fn); };
  }

  _emit(event, arg) {
    for (const fn of this._listeners[event]) {
      try { fn(arg); } catch (e) { console.error(e); }
    }
  }

  _lose() {
    if (!this._w || !this.glMade) return; // not texel's yet: the page made it (tx.canvas)
    this._core._txw_mark_lost(this._w);
    const err = new TexelError(Status.CONTEXT_LOST, 'texel: the WebGL context was lost; pending reads were cancelled');
    for (const p of this._pending) {
      p.done = true;
      p.reject(err);
    }
    this._pending.clear();
    this._emit('contextlost', err);
  }

  _restore() {
    if (!this._w || !this.glMade) return;
    const s = this._core._txw_restore(this._w);
    if (s) {
      const e = new TexelError(s, this._core.UTF8ToString(this._core._txw_last_error(this._w)));
      this._emit('contextlost', e);
      return;
    }
    this._emit('contextrestored', { generation: this._core._txw_generation(this._w) });
  }

  /** Destroys the engine context and every tensor of it. */
  dispose() {
    if (!this._w) return;
    this._warmStop?.(); // the worker and its context, if still looking
    this.canvas?.removeEventListener('webglcontextlost', this._onLost);
    this.canvas?.removeEventListener('webglcontextrestored', this._onRestored);
    const err = new TexelError(Status.INVALID_ARGUMENT, 'texel: the context was disposed');
    for (const p of this._pending) {
      p.done = true;
      p.reject(err);
    }
    this._pending.clear();
    for (const sess of this._sessions) sess.dispose();
    this._onPageHide();
    globalThis.removeEventListener?.('pagehide', this._onPageHide);
    this._caps ??= this._rawCaps(); // still readable (a context never given GL: glPending)
    this._core.txwContexts?.delete(this._w);
    this._core.txwCanvasOf?.delete(this._w);
    this._core._txw_destroy(this._w);
    this._core._free(this._scratch);
    this._w = 0;
  }
}

/**
 * A loaded ONNX model (Context.loadModel). inputs/outputs describe its graph
 * values: {name, shape, dtype, onnxType}; a dynamic dimension is its symbolic
 * name (a string) or -1, an unknown rank gives shape null.
 */
export class Optimizer {
  constructor(tx, ptr, kind) {
    this._tx = tx;
    this._ptr = ptr;
    this.kind = kind;
  }

  /** Updates each of params in place from its gradient (same order every step). */
  step(params, grads) {
    const tx = this._tx;
    const w = tx._ctx();
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'optimizer.step: this optimizer was disposed');
    if (!Array.isArray(params) || !Array.isArray(grads) || params.length !== grads.length)
      throw new TexelError(Status.INVALID_ARGUMENT, 'optimizer.step: params and grads must be arrays of one length');
    const c = tx._core;
    const n = params.length;
    const p = c._malloc(8 * n + 8);
    try {
      c.HEAPU32.set(params.map((t, i) => tx._own(t, `optimizer.step: param ${i}`)), p >> 2);
      c.HEAPU32.set(grads.map((t, i) => tx._own(t, `optimizer.step: grad ${i}`)), (p >> 2) + n);
      tx._check(c._txw_optim_step(w, this._ptr, p, p + 4 * n, n));
    } finally {
      c._free(p);
    }
  }

  /** minimize(f, params): value = f() under a tape, one step on d sum(value) / d params;
   *  returns the value (the gradients are disposed). f may be async. */
  minimize(f, params) {
    const apply = ({ value, grads }) => {
      try {
        this.step(params, grads);
      } finally {
        for (const g of grads) g.dispose();
      }
      return value;
    };
    const r = this._tx._taped(f, params, 'minimize');
    return r && typeof r.then === 'function' ? r.then(apply) : apply(r);
  }

  dispose() {
    if (!this._ptr) return;
    if (this._tx._w) this._tx._core._txw_optim_destroy(this._tx._w, this._ptr);
    this._ptr = 0;
  }
}

export class Session {
  constructor(tx, ptr) {
    this._tx = tx;
    this._ptr = ptr;
    this.inputs = Object.freeze(this._describe(0));
    this.outputs = Object.freeze(this._describe(1));
  }

  get disposed() { return this._ptr === 0; }

  /**
   * The session's counters and its device choice (tx_session_stats): nodes,
   * steps, folded, fused, weightBytes, hostBytes (the parsed model and
   * folded constants kept in wasm memory; float16 weights as halves),
   * device (the last run's), nextDevice,
   * decided, reason, runsGpu,
   * runsCpu, gpuMs, cpuMs, readbacks, readbackBytes.
   */
  stats() {
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.stats: this session was disposed');
    const c = this._tx._core;
    const s = camelKeys(JSON.parse(c.UTF8ToString(c._txw_session_stats_json(this._tx._ctx(), this._ptr))));
    if (this._reason) s.reason = this._reason;
    return s;
  }

  /**
   * Where a run's time goes (tx_session_profile). profile(true) zeroes the
   * counts and times every step of the runs that follow, each GPU step
   * waited for by reading a texel of its output (a round trip, which a small
   * step's time includes; those runs are slower than others); profile(false)
   * stops it.
   */
  profile(on = true) {
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.profile: this session was disposed');
    this._tx._check(this._tx._core._txw_session_profile_enable(this._tx._ctx(), this._ptr, on ? 1 : 0));
  }

  /**
   * The profile, one entry a step in run order: {opType, name, activation
   * (a fused one, or ''), runs, ms (their total), draws, compiles (programs compiled in
   * that time), macs (Conv, ConvTranspose,
   * MatMul, Gemm: the multiply-adds of a run), device, shape (the
   * first output's in the last timed run)}; null while profiling is off.
   */
  profileSteps() {
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.profileSteps: this session was disposed');
    const c = this._tx._core;
    const ptr = c._txw_session_profile_json(this._tx._ctx(), this._ptr);
    if (!ptr) return null;
    try {
      return JSON.parse(c.UTF8ToString(ptr)).map(camelKeys);
    } finally {
      c._free(ptr);
    }
  }

  /** The device the next run uses ('gpu' | 'cpu'; after auto has decided, its choice). */
  get device() { return this.stats().nextDevice; }

  /** Why: "fixed by the session's desc", "software rasterizer (...)", "measured: ...", "remembered: ...", "trial: ..." (while auto measures). */
  get deviceReason() { return this.stats().reason; }

  _describe(isOutput) {
    const c = this._tx._core;
    const p = this._tx._scratch + 160;
    const list = [];
    for (let i = 0; i < c._txw_session_count(this._ptr, isOutput); i++) {
      this._tx._check(c._txw_session_info(this._ptr, isOutput, i, p));
      const h = c.HEAP32.subarray(p >> 2, (p >> 2) + 9);
      const rank = h[0];
      const shape = rank < 0 ? null : Array.from(h.subarray(3, 3 + rank), (d, k) =>
        d >= 0 ? d : c.UTF8ToString(c._txw_session_name(this._ptr, isOutput, i, k)) || -1);
      list.push(Object.freeze({
        name: c.UTF8ToString(c._txw_session_name(this._ptr, isOutput, i, -1)),
        shape: shape && Object.freeze(shape), dtype: DTYPES[h[1]], onnxType: h[2],
      }));
    }
    return list;
  }

  /**
   * run({inputName: tensor, ...}, {fetches?}) → {outputName: tensor}: every
   * output, or the names in fetches. The outputs are new tensors the caller
   * disposes (inside a tx.scope they belong to it); the feeds stay the caller's.
   */
  async run(feeds, options = {}) {
    const tx = this._tx;
    const w = tx._ctx();
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.run: this session was disposed');
    if (!feeds || typeof feeds !== 'object' || feeds instanceof Tensor)
      throw new TexelError(Status.INVALID_ARGUMENT, 'session.run: feeds must be an object {inputName: tensor}');
    const names = Object.keys(feeds);
    const ids = names.map((n) => tx._own(feeds[n], `session.run: feed "${n}"`));
    const fetches = options?.fetches ?? this.outputs.map((o) => o.name);
    if (!Array.isArray(fetches) || fetches.some((f) => typeof f !== 'string'))
      throw new TexelError(Status.INVALID_ARGUMENT, 'session.run: fetches must be an array of output names');
    const c = tx._core;
    const strs = heapStrings(c, [...names, ...fetches]);
    const n = names.length, m = fetches.length;
    const arr = c._malloc(4 * (2 * n + 2 * m) + 4);
    try {
      const base = arr >> 2;
      c.HEAPU32.set(strs.slice(0, n), base);
      c.HEAPU32.set(ids, base + n);
      c.HEAPU32.set(strs.slice(n), base + 2 * n);
      const outs = arr + 4 * (2 * n + m);
      tx._check(c._txw_session_run(w, this._ptr, n, arr, arr + 4 * n, m, arr + 8 * n, outs));
      if (this._choiceKey) { // auto: remember a measured decision
        const st = this.stats();
        if (st.decided) {
          const key = this._choiceKey; // a function: made once measured (the GL context is there)
          if (/^measured/.test(st.reason)) rememberChoice(typeof key === 'function' ? key() : key, st);
          else if (/^software rasterizer .*probe: /.test(st.reason) && (tx.glMade || tx._warmAnswer)) {
            // probed on texel's context, or by the worker before it (none made)
            const renderer = tx.glMade ? tx.caps.renderer : tx._warmAnswer.renderer;
            try {
              storage()?.setItem(SOFTWARE_KEY, JSON.stringify({ renderer, at: Date.now() }));
            } catch { /* remembering is an optimisation */ }
          }
          this._choiceKey = null;
        }
      }
      const result = {};
      const got = Array.from(c.HEAPU32.subarray(outs >> 2, (outs >> 2) + m));
      got.forEach((id, i) => { result[fetches[i]] = tx._wrap(id); });
      return result;
    } finally {
      for (const sp of strs) c._free(sp);
      c._free(arr);
    }
  }

  /**
   * compile({onProgress?}) → Promise<{programs}>: compiles the GPU programs the
   * session needs before its first run (tx_session_compile: the plan walked
   * for zero inputs of the declared shapes, dynamic dims 1, drawing nothing),
   * reporting onProgress({phase: 'compile', done, total}) as they finish
   * (the browser compiles in the background with KHR_parallel_shader_compile;
   * without it they are done when the walk returns). A session that runs on
   * the CPU has nothing to compile: one event with total 0.
   * loadModel(url, {onProgress}) calls it.
   */
  async compile(options = {}) {
    const tx = this._tx;
    const onProgress = options?.onProgress;
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.compile: this session was disposed');
    if (this.device !== 'gpu') {
      onProgress?.({ phase: 'compile', done: 0, total: 0 });
      return { programs: 0 };
    }
    const c = tx._core;
    const feeds = this.inputs.map((v) => {
      const shape = v.shape ? v.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1)) : [1];
      const data = v.dtype === 'int32' ? new Int32Array(numel(shape)) : new Float32Array(numel(shape));
      return tx.tensor(data, shape, { dtype: v.dtype, device: 'gpu' });
    });
    const strs = heapStrings(c, this.inputs.map((v) => v.name));
    const n = strs.length;
    const arr = c._malloc(4 * (2 * n + 1));
    let programs = 0;
    try {
      c.HEAPU32.set(strs, arr >> 2);
      c.HEAPU32.set(feeds.map((t) => t._id), (arr >> 2) + n);
      tx._check(c._txw_session_compile(tx._ctx(), this._ptr, n, arr, arr + 4 * n, arr + 8 * n));
      programs = c.HEAP32[(arr >> 2) + 2 * n];
    } finally {
      for (const sp of strs) c._free(sp);
      c._free(arr);
      for (const t of feeds) t.dispose();
    }
    for (;;) {
      const left = this._ptr && tx._w ? c._txw_session_compiling(tx._w, this._ptr) : 0;
      onProgress?.({ phase: 'compile', done: programs - left, total: programs });
      if (left <= 0) break;
      await new Promise((r) => setTimeout(r, 16));
    }
    return { programs };
  }

  /**
   * weight(name): the device tensor of initializer `name`, owned by the session
   * (dispose() on it only drops the handle): for fine-tuning, take gradients
   * for it through a run (tx.valueAndGrad / optimizer.minimize with an async f)
   * and step on it; the session's next runs use the new values. Needs a
   * session loaded with device 'gpu' or 'cpu'.
   */
  weight(name) {
    const tx = this._tx;
    const w = tx._ctx();
    if (!this._ptr) throw new TexelError(Status.INVALID_ARGUMENT, 'session.weight: this session was disposed');
    const c = tx._core;
    const len = c.lengthBytesUTF8(String(name)) + 1;
    const sp = c._malloc(len);
    try {
      c.stringToUTF8(String(name), sp, len);
      tx._check(c._txw_session_weight(w, this._ptr, sp, tx._scratch));
    } finally {
      c._free(sp);
    }
    const id = tx._u32();
    const p = tx._scratch + 64;
    tx._check(c._txw_tensor_shape(w, id, p));
    const h = c.HEAP32.subarray(p >> 2, (p >> 2) + 8);
    const t = new Tensor(tx, id, Array.from(h.subarray(2, 2 + h[0])), DTYPES[h[1]]);
    t._borrowed = true;
    return t;
  }

  /** Frees the session's weights and graph. */
  dispose() {
    if (!this._ptr) return;
    if (this._tx._w) this._tx._core._txw_session_destroy(this._tx._w, this._ptr);
    this._tx._sessions.delete(this);
    this._ptr = 0;
  }
}

// First polls right after the current task (a fence often signals within
// one), then about every millisecond, and every 4 ms once a read has waited
// ~20 polls, so a long read does not spin; never later than atMost ms (a
// read's time to stop polling). A timer is set from a message task
// (the channel), not from the timer before it: Chromium clamps a chain of
// nested timers to 4 ms, which made a 10 ms matmul wait ~15 ms for its values.
// The channel is made on first use and, in Node, unref'd: a listening port
// would keep Node's event loop alive after an import of this module.
let channel = null;
const queue = [];
function later(fn, n, atMost = Infinity) {
  if (!channel && typeof MessageChannel === 'function') {
    channel = new MessageChannel();
    channel.port1.onmessage = () => queue.shift()?.();
    channel.port1.unref?.();
  }
  const ms = Math.max(0, Math.min(n < 24 ? 1 : 4, atMost));
  if (!channel) {
    setTimeout(fn, ms);
    return;
  }
  queue.push(n < 4 ? fn : () => setTimeout(fn, ms));
  channel.port2.postMessage(0);
}

function collectTensors(v, out, depth) {
  if (depth > 8 || v === null || typeof v !== 'object') return;
  if (v instanceof Tensor) out.add(v);
  else if (Array.isArray(v)) for (const x of v) collectTensors(x, out, depth + 1);
  else if (Object.getPrototypeOf(v) === Object.prototype) for (const x of Object.values(v)) collectTensors(x, out, depth + 1);
}

function camelKeys(o) {
  const r = {};
  for (const [k, v] of Object.entries(o)) r[snakeToCamel(k)] = v;
  return r;
}

/**
 * create({canvas?, specializeAfter?, precision?, memoryBudget?, maxTextureSize?, logShaders?,
 *         debug?, device?, cpuThreads?, threads?, simd?, env?, wasmUrl?, wasmUrlThreads?,
 *         wasmUrlScalar?})
 * Loads the engine (once per page and build) and makes a context on `canvas`
 * (default: a canvas of its own that is never shown). debug: check for GL
 * errors after every op (a GPU round trip each) instead of at the next read.
 * device: where tx.tensor puts tensors ('gpu', default, or 'cpu'; without WebGL2, as in Node, 'cpu').
 * cpuThreads: the CPU device's threads (0: one per core; threaded build only).
 * threads: 'auto' (default: the threaded build on a cross-origin isolated
 * page), true or false. simd: 'auto' (default: wasm SIMD where the browser
 * validates it), true or false (texel-scalar.wasm). In Node (no WebGL2, no canvas given) the
 * context has no GL: the CPU device only (caps.noGpu; device 'gpu' rejects with UNSUPPORTED). env: engine environment variables ({TEXEL_AUTO_MEASURE:
 * '1'}; null unsets), set for the whole loaded engine before the context is made.
 * The WebGL2 context is made at the first GPU use (a GPU tensor or op, a
 * session on the GPU, an 'auto' session's second run unless a worker's look
 * at the GPU kept it on the CPU, reading caps; see glMade), so that CPU work and an 'auto' session's first run never wait for
 * it (with its probes ~150 ms on SwiftShader, seconds while the browser's GPU
 * process is still starting); a browser without WebGL2 then fails that use
 * with UNSUPPORTED, and 'auto' stays on the CPU. device 'gpu', precision
 * 'f16' or a canvas of your own make it at once.
 */
export async function create(opts = {}) {
  // a context made at once (device 'gpu', precision 'f16', no canvas
  // given): the GPU process started beside the wasm's load
  const look = !opts.canvas && (opts.device === 'gpu' || opts.precision === 'f16') &&
    (typeof document !== 'undefined' || typeof OffscreenCanvas !== 'undefined')
    ? startGpuProcess() : null;
  const core = await loadCore(opts);
  await look;
  let canvas = opts.canvas;
  let noGpu = false;
  if (!canvas) {
    if (typeof document === 'undefined' && typeof OffscreenCanvas === 'undefined') {
      // Node (or a worklet): nothing here makes a WebGL2 context, so the
      // context is one without GL: the CPU device only.
      if (opts.device === 'gpu')
        throw new TexelError(Status.UNSUPPORTED, 'texel.create: device \'gpu\' needs WebGL2, and there ' +
          'is none here (no document, no OffscreenCanvas' +
          (isNode() ? ': Node.js has no WebGL2, and headless-gl is WebGL1 only' : '') +
          '). Leave device out (or \'cpu\') for a context of the CPU device, or pass ' +
          'create({canvas}) with a canvas whose getContext(\'webgl2\') works.');
      noGpu = true;
    } else {
      canvas = typeof document !== 'undefined' ? document.createElement('canvas') : new OffscreenCanvas(1, 1);
      canvas.width = canvas.height = 1;
    }
  }
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    const strs = [k, v === null || v === undefined ? null : String(v)].map((x) => {
      if (x === null) return 0; // unset
      const len = core.lengthBytesUTF8(x) + 1;
      const p = core._malloc(len);
      core.stringToUTF8(x, p, len);
      return p;
    });
    core._txw_setenv(strs[0], strs[1]);
    strs.forEach((p) => core._free(p));
  }
  const device = deviceCode(opts.device, 'texel.create', false);
  const blockingReadMs = opts.blockingReadMs ?? 8;
  if (typeof blockingReadMs !== 'number' || !(blockingReadMs >= 0))
    throw new TexelError(Status.INVALID_ARGUMENT, `texel.create: blockingReadMs is a number of milliseconds >= 0, not ${JSON.stringify(blockingReadMs)}`);
  // specializeAfter: k identical calls; 0 or 'always'; 'never'; default 2.
  const k = opts.specializeAfter;
  const code = k === undefined ? 0 : k === 0 || k === 'always' ? -1 : k === 'never' || k < 0 ? -2 : k;
  const precision = opts.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f16')
    throw new TexelError(Status.INVALID_ARGUMENT, `texel.create: precision is 'f32' or 'f16', not ${JSON.stringify(precision)}`);
  // First results on the CPU never wait for a WebGL2 context (~150 ms with
  // its probes on SwiftShader, seconds while the browser's GPU process is
  // still starting): texel's own canvas gets its context at the first GPU
  // use, unless the caller asked for the GPU (device 'gpu', precision 'f16':
  // an unusable GPU is then create()'s error) or gave a canvas.
  const glLater = !noGpu && !opts.canvas && opts.device !== 'gpu' && precision !== 'f16';
  core.txwGlMade ??= (w, renderer) => core.txwContexts?.get(w)?._glMade(renderer);
  if (canvas && !glLater) core.txwCanvas = canvas;
  const w = core._txw_create(code, opts.memoryBudget ?? 0, opts.maxTextureSize ?? 0,
    opts.logShaders ? 1 : 0, opts.debug ? 1 : 0, device, opts.cpuThreads ?? 0, precision === 'f16' ? 1 : 0,
    noGpu ? 1 : 0, glLater ? 1 : 0);
  core.txwCanvas = null;
  if (!w) throw new TexelError(Status.UNSUPPORTED, `texel.create: ${core.UTF8ToString(core._txw_create_error())}`);
  if (glLater) (core.txwCanvasOf ??= new Map()).set(w, canvas);
  return new Context(core, w, canvas ?? null, blockingReadMs);
}

export { Context };
export default { create, Status, TexelError, Tensor, Context, Session, Optimizer, threadsAvailable, simdAvailable, forgetDeviceChoices };
