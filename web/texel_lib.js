// emscripten JS library: WebGL2 context creation for texel (web/texel_web.c and
// host/glctx_web.c). JS owns the canvas; the context is registered with
// emscripten's GL layer so the engine's C code (engine/gl/gl.c) drives it.
mergeInto(LibraryManager.library, {
  // Takes the canvas texel.js keeps for context `key` (Module.txwCanvasOf:
  // a context whose WebGL2 context comes at its first GPU use), else
  // Module.txwCanvas if the JS API put one there, else makes a canvas nobody
  // sees. Returns the GL context handle (0: no WebGL2).
  txw_js_context_create__deps: ['$GL'],
  txw_js_context_create: function(key) {
    var of = Module['txwCanvasOf'];
    var canvas = key && of ? of.get(key) : Module['txwCanvas'];
    if (key && of) of.delete(key);
    else Module['txwCanvas'] = null;
    if (!canvas) {
      if (typeof document != 'undefined') canvas = document.createElement('canvas');
      else if (typeof OffscreenCanvas != 'undefined') canvas = new OffscreenCanvas(1, 1);
      else return 0;
      canvas.width = canvas.height = 1;
    }
    var attrs = {alpha: false, depth: false, stencil: false, antialias: false,
                 premultipliedAlpha: false, preserveDrawingBuffer: false,
                 powerPreference: 'high-performance'};
    var gl = canvas.getContext('webgl2', attrs);
    if (!gl) return 0;
    var h = GL.registerContext(gl, {majorVersion: 2, minorVersion: 0,
                                    enableExtensionsByDefault: 1});
    GL.makeContextCurrent(h);
    Module['txwLastCanvas'] = canvas;
    return h;
  },
  // The WebGL2 context of context w was made at its first GPU use: texel.js
  // (Module.txwGlMade) recalls what it keeps per renderer.
  txw_js_gl_made: function(w, renderer) {
    var f = Module['txwGlMade'];
    if (f) f(w, UTF8ToString(renderer));
  },
  // WebGL masks RENDERER ("WebKit WebGL"); WEBGL_debug_renderer_info's
  // unmasked string names the device (ANGLE (..., SwiftShader ...)), which
  // engine/gl/gl.c reports as tx_caps.renderer. Leaves out untouched if none.
  txw_js_unmasked_renderer__deps: ['$GL'],
  txw_js_unmasked_renderer: function(out, n) {
    var gl = GLctx;
    var e = gl && gl.getExtension('WEBGL_debug_renderer_info');
    var s = e ? gl.getParameter(e.UNMASKED_RENDERER_WEBGL) : '';
    if (s) stringToUTF8(String(s), out, n);
  },
  // A float32 read's values (web/texel_web.c txw_read_finish_js) into a new
  // Float32Array, Module.txwRead: from the bound pixel-pack buffer, or from
  // host values in wasm memory (a split tensor's).
  txw_js_read_bound: function(bytes) {
    var a = new Float32Array(bytes / 4);
    if (bytes > 0) GLctx.getBufferSubData(0x88EB /* PIXEL_PACK_BUFFER */, 0, a);
    Module['txwRead'] = a;
    return 1;
  },
  txw_js_read_host: function(values, bytes) {
    Module['txwRead'] = HEAPF32.slice(values >> 2, (values >> 2) + bytes / 4);
    return 1;
  },
  // Chromium keeps at most 16 WebGL contexts alive and drops the oldest with a
  // warning; losing ours on purpose frees its GPU memory now.
  txw_js_context_destroy__deps: ['$GL'],
  txw_js_context_destroy: function(h) {
    var c = GL.contexts[h];
    if (!c) return;
    var ext = c.GLctx.getExtension('WEBGL_lose_context');
    GL.deleteContext(h);
    if (ext) ext.loseContext();
  },
});
