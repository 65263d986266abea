/* The only part of the engine that calls GL. Everything above it speaks in
 * tx_gl_* handles and plain C types, and this layer keeps the bound state
 * (program, textures per unit, framebuffer attachments, viewport) so that
 * redundant GL calls are skipped: under WebGL every call crosses into JS. */
#ifndef TX_GL_H
#define TX_GL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t tx_gl_tex;
typedef unsigned int tx_gl_prog;

/* A tx_gl_tex names a 2D texture, a 2D array texture (TX_GL_ARRAY set:
 * sampled as a sampler2DArray) or one layer of an array texture as a render
 * target (TX_GL_LAYER): the GL name is the low 32 bits, the flag and the
 * layer live above them (a GL name may take all 32 bits: WebGL's counter
 * only grows). An op that writes several row phases renders them into the
 * layers of one array texture, and the pass that gathers them fetches once
 * from the layer it needs instead of picking one of several textures
 * through an if-chain, which SwiftShader runs in full. */
#define TX_GL_ARRAY       (1ull << 63)
#define TX_GL_LAYER(t, i) ((t) | ((tx_gl_tex)(i) << 32))
#define TX_GL_NAME(t)     ((unsigned)((t)&0xFFFFFFFFull))
#define TX_GL_LAYER_OF(t) ((int)(((t) >> 32) & 7u))
#define TX_GL_MAX_LAYERS  8

#define TX_GL_MAX_OUTPUTS  8  /* draw buffers used at most (matmul, conv tiles) */
#define TX_GL_UNITS        16 /* GLES 3.0 guarantees 16 fragment texture units */
#define TX_GL_MAX_UNIFORMS 64

typedef struct tx_gl {
    /* One framebuffer per output count (1..4): a matmul alternates a
     * 4-target tile pass and a 1-target interleave, and each keeps its
     * attachments and draw buffers instead of re-attaching every call. */
    unsigned fbos[TX_GL_MAX_OUTPUTS]; /* one framebuffer per output count */
    tx_gl_tex fbo_att[TX_GL_MAX_OUTPUTS][TX_GL_MAX_OUTPUTS];
    int cur_fbo; /* index into fbos, -1 none bound */
    unsigned vao;
    unsigned vs; /* the shared full-screen-triangle vertex shader */
    tx_gl_prog cur_prog;
    tx_gl_tex unit_tex[TX_GL_UNITS];
    int active_unit;
    int vp_w, vp_h;
    bool has_parallel; /* KHR_parallel_shader_compile */
    bool has_robustness;
    /* Under WebGL glGetError is a synchronous round trip to the GPU process
     * (~0.1 ms in Chromium, 30x a small op's cost): when set, draws skip it
     * and an error surfaces at the next read instead (web/texel_web.c sets
     * it unless the page asks for debug checks). */
    bool defer_errors;
    unsigned pending_error; /* an error found while clearing the queue, not yet reported */
    unsigned taken_error;   /* the last error a check found (tx_gl_taken_error) */
    /* Errors a check has reported so far: an async read started under
     * deferred errors fails when this moved while it was pending (its own
     * start's error may be the one another check took). */
    unsigned error_epoch;
    bool half_storage; /* tensor textures are RGBA16F instead of RGBA32F */
    /* The context is gone: delete/unbind calls are skipped (the names died
     * with it, and a new context may hand the same numbers out again). Set
     * by the engine when the driver confirms a loss, and once the engine has
     * forgotten every object of a lost context (context.c). */
    bool lost;
    /* Test hook: behave as a lost context would (every draw, upload, read
     * and allocation fails with a GL error; tx_gl_context_lost says true). */
    bool fault_lost;
    /* Test hook: the next fault_storage textures get no storage (an invalid
     * size), as a driver out of memory leaves them. */
    int fault_storage;
    /* Texture checks batched (tx_gl_batch_begin): the names made since. */
    bool batch_on;
    unsigned *batch;
    int batch_n, batch_cap;
} tx_gl;

/* Loads GL entry points (desktop) and creates the shared objects. Returns
 * false with a message in err when the context is unusable. */
bool tx_gl_init(tx_gl *g, void (*(*get_proc)(const char *))(void), char *err, size_t n);
void tx_gl_shutdown(tx_gl *g);
/* Sets the GL state texel draws, reads and uploads with (no blending,
 * scissor, masks; pixel-store defaults; its VAO; nothing bound on its texture
 * units) and empties the binding caches: at init, and after the caller's own
 * GL calls (tx_ctx_reset_gl_state). */
void tx_gl_reset_state(tx_gl *g);
/* Test hook: GL state a caller's drawing could leave behind (another active
 * unit, emptied units, blending, a 1x1 scissor and viewport, a color mask, an
 * unpack row length), behind the caches' back. */
void tx_gl_test_scramble(void);
void tx_gl_strings(char *renderer, char *version, char *glsl, size_t n);
int tx_gl_max_texture_size(void);
int tx_gl_max_draw_buffers(void);
bool tx_gl_has_extension(const char *name);
/* Renders a known pattern into a texture of that format and reads it back. */
bool tx_gl_probe_render(tx_gl *g, bool half);
/* Divides 1024 pseudo-random float pairs in a shader and compares the bits
 * with the host's IEEE 754 quotients: true when every one matches. Drivers
 * that divide by a reciprocal multiply (NVIDIA's, within 2 ulp as GLSL
 * allows) fail it. */
bool tx_gl_probe_div(tx_gl *g);
/* The three probes above in one program and one draw to three targets
 * (float32 quotients, float32 pattern, float16 pattern): each probe alone is
 * a compile, a draw and a blocking read (~40 ms each on SwiftShader, at
 * every context's creation). false: the driver refused that framebuffer or
 * program, nothing measured (probe one by one). *div_exact is true where
 * float32 rendering fails (nothing to learn), as tx_gl_probe_div says. */
bool tx_gl_probe_all(tx_gl *g, bool *f32, bool *f16, bool *div_exact);

/* With deferred errors, texture creation asks glGetError once (a round trip
 * under WebGL); between tx_gl_batch_begin and tx_gl_batch_end (a session's
 * weights) not at all: the end asks once, and where it finds an error,
 * whether each texture made since got its storage. false: one did not (out
 * of memory; the caller fails and frees what it made). Without deferred
 * errors every texture is checked as it is made and the batch is empty. */
void tx_gl_batch_begin(tx_gl *g);
bool tx_gl_batch_end(tx_gl *g);

/* Textures: RGBA32F (RGBA16F with half_storage), w × h texels. */
bool tx_gl_tex_create(tx_gl *g, int w, int h, tx_gl_tex *out);
/* A w×h array texture of `layers` (<= TX_GL_MAX_LAYERS) layers: *out has TX_GL_ARRAY set. */
bool tx_gl_tex_create_array(tx_gl *g, int w, int h, int layers, tx_gl_tex *out);
void tx_gl_tex_delete(tx_gl *g, tx_gl_tex t);
/* Writes `texels` texels (4 floats each, or 4 half floats with `half`, for
 * RGBA16F textures only) starting at texel 0, row-major. */
void tx_gl_tex_upload(tx_gl *g, tx_gl_tex t, int w, int texels, const void *data, bool half);
/* Reads the first `texels` texels into dst (4 floats each); false on any GL
 * error since the last check (with deferred checks, maybe an earlier op's). */
bool tx_gl_tex_read(tx_gl *g, tx_gl_tex t, int w, int texels, float *dst);

/* Asynchronous read: copies the first `texels` texels into a new pixel-pack
 * buffer and puts a fence behind the copy. Nothing waits here. */
bool tx_gl_read_begin(tx_gl *g, tx_gl_tex t, int w, int texels, unsigned *buf, void **sync);
/* Has the fence signalled? Never blocks (under WebGL the answer only changes
 * between tasks of the event loop, so the caller must yield between polls). */
bool tx_gl_read_ready(tx_gl *g, void *sync);
/* Copies the buffer's first `bytes` into dst, or, with copy, binds it as
 * GL_PIXEL_PACK_BUFFER and lets copy(user) take them (the web build reads
 * them into a JS array: no round trip through wasm memory). Stalls if not
 * ready. */
bool tx_gl_read_end(tx_gl *g, unsigned buf, size_t bytes, void *dst,
                    bool (*copy)(void *user, size_t bytes), void *user);
/* Deletes the buffer and fence (skipped once g->lost). */
void tx_gl_read_free(tx_gl *g, unsigned buf, void *sync);

/* Programs. Link is issued without waiting; query completion separately. */
tx_gl_prog tx_gl_program_begin(tx_gl *g, const char *fs_source);
/* With KHR_parallel_shader_compile: has the link finished? (else true) */
bool tx_gl_program_done(tx_gl *g, tx_gl_prog p);
/* Blocks until linked; false if compile or link failed, log in `log`. */
bool tx_gl_program_ok(tx_gl *g, tx_gl_prog p, char *log, size_t n);
void tx_gl_program_delete(tx_gl *g, tx_gl_prog p);
int tx_gl_uniform_location(tx_gl_prog p, const char *name);
void tx_gl_use(tx_gl *g, tx_gl_prog p);
void tx_gl_uniform_i(int loc, int v);
void tx_gl_uniform_f(int loc, float v);

/* The first texture unit of a program with n_out outputs: its inputs are on
 * units base..base+n_in-1 (samplers u_in<i> = base + i). Multi-output passes
 * and single-output ones use disjoint units, so a two-pass op (matmul's tile
 * pass, then its interleave of the tile outputs) keeps every texture bound
 * across calls instead of rebinding each pass's inputs. */
int tx_gl_unit_base(int n_out);
/* Binds textures to units base..base+n_in-1, the outputs as draw buffers
 * 0..n_out-1, and draws one full-screen triangle of w × h fragments. */
void tx_gl_draw(tx_gl *g, const tx_gl_tex *ins, int n_in, const tx_gl_tex *outs, int n_out, int w,
                int h);
void tx_gl_finish(void);
/* Returns the first pending GL error (0 if none) and clears the queue. */
unsigned tx_gl_error(void);
const char *tx_gl_error_name(unsigned e);
/* tx_gl_error after a draw or upload; 0 without asking when g->defer_errors. */
unsigned tx_gl_op_error(tx_gl *g);
/* The error the last failed check found (0 if none), cleared by the call:
 * what a failure under deferred checks names. */
unsigned tx_gl_taken_error(tx_gl *g);
/* Whether e is GL_OUT_OF_MEMORY. */
bool tx_gl_error_is_oom(unsigned e);
/* True when the driver reports the context was reset or lost. */
bool tx_gl_context_lost(tx_gl *g);
/* Tests: does the current context know this texture name (glIsTexture)? */
bool tx_gl_tex_exists(tx_gl_tex t);
/* Test hook: how many textures, programs, shaders, framebuffers and vertex
 * arrays named 1 .. upto exist on the current GL context. */
int tx_gl_count_objects(unsigned upto);
/* Test hook: makes the driver record a real error (GL_INVALID_VALUE) that
 * the next tx_gl_error() returns. */
void tx_gl_inject_error(void);

#endif
