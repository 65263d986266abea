/* Template + parameters → GLSL ES 3.00.
 *
 * Both variants share one body (glsl-templates/<family>.glsl) and the shared
 * helpers (the .glsl files in shaders/). They differ only in how each parameter is
 * declared: `uniform int p_n;` (generic) or `const int p_n = 5005;`
 * (specialized), so the specialized compile folds divisions and constant
 * loops. Structural choices (which expression, which fast path) are #defines
 * and belong to both variants. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t len) {
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        TX_ASSERT(np);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) {
    sb_put(b, s, strlen(s));
}

static void sb_fmt(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_fmt(sbuf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    TX_ASSERT(n >= 0 && (size_t)n < sizeof tmp);
    sb_put(b, tmp, (size_t)n);
}

void tx_req_init(tx_program_req *r, tx_family fam, const char *template_name, int n_inputs,
                 int n_outputs) {
    memset(r, 0, sizeof *r);
    r->family = fam;
    r->template_name = template_name;
    r->n_inputs = n_inputs;
    r->n_outputs = n_outputs;
}

void tx_req_define(tx_program_req *r, const char *name, const char *value) {
    size_t used = strlen(r->defines);
    int n = snprintf(r->defines + used, sizeof r->defines - used, "#define %s %s\n", name, value);
    TX_ASSERT(n > 0 && (size_t)n < sizeof r->defines - used);
}

void tx_req_define_int(tx_program_req *r, const char *name, int value) {
    char v[32];
    snprintf(v, sizeof v, "%d", value);
    tx_req_define(r, name, v);
}

void tx_req_int(tx_program_req *r, const char *name, int v) {
    TX_ASSERT(r->n_params < TX_MAX_PARAMS);
    r->params[r->n_params++] = (tx_param){.name = name, .type = TX_PARAM_INT, .v.i = v};
}

void tx_req_ints(tx_program_req *r, const tx_req_iv *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        tx_req_int(r, p[i].name, p[i].v);
}

void tx_req_float(tx_program_req *r, const char *name, float v) {
    TX_ASSERT(r->n_params < TX_MAX_PARAMS);
    r->params[r->n_params++] = (tx_param){.name = name, .type = TX_PARAM_FLOAT, .v.f = v};
}

void tx_req_tex_inv(tx_program_req *r, const char *iw, const char *ih, const tx_texture *t) {
    tx_req_float(r, iw, 1.0f / (float)t->w);
    tx_req_float(r, ih, 1.0f / (float)t->h);
}

void tx_req_here(tx_program_req *r, const char *name, const tx_texture *in, const tx_texture *out) {
    if (in->wshift == out->wshift)
        tx_req_define(r, name, "1");
}

void tx_req_clip(tx_program_req *r, float lo, float hi) {
    if (isfinite(lo)) {
        tx_req_define(r, "TX_HAS_LO", "1");
        tx_req_float(r, "p_lo", lo);
    }
    if (isfinite(hi)) {
        tx_req_define(r, "TX_HAS_HI", "1");
        tx_req_float(r, "p_hi", hi);
    }
}

void tx_req_act(tx_program_req *r, tx_op act, float lo, float hi) {
    if (act == TX_OP_NONE)
        return;
    char fn[48];
    snprintf(fn, sizeof fn, "tx_u_%s", tx_op_name(act));
    tx_req_define(r, "TX_ACT", fn);
    if (act == TX_OP_CLIP)
        tx_req_clip(r, lo, hi);
}

void tx_req_resid(tx_program_req *r, int in, const tx_texture *resid) {
    char name[16];
    snprintf(name, sizeof name, "u_in%d", in);
    tx_req_define(r, "TX_RESID", name);
    tx_req_int(r, "p_r_ws", resid->wshift);
}

/* A float literal that reads back as exactly v (finite values only). */
static void float_literal(char *buf, size_t n, float v) {
    snprintf(buf, n, "%.9g", (double)v);
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", n - strlen(buf) - 1);
}

char *tx_codegen(const tx_program_req *r, bool specialized, bool emulate_div) {
    sbuf b = {0};
    sb_str(&b, "#version 300 es\n"
               "precision highp float;\nprecision highp int;\nprecision highp sampler2D;\n");
    sb_fmt(&b, "// texel %s, %s variant\n", r->template_name,
           specialized ? "specialized" : "generic");
    if (emulate_div)
        sb_str(&b, "#define TX_EXACT_DIV 1\n"); /* tx_div, shaders/prelude.glsl */
    sb_str(&b, r->defines);
    for (int i = 0; i < r->n_params; i++) {
        const tx_param *p = &r->params[i];
        const char *ty = p->type == TX_PARAM_INT ? "int" : "float";
        if (!specialized) {
            sb_fmt(&b, "uniform %s %s;\n", ty, p->name);
        } else if (p->type == TX_PARAM_INT) {
            sb_fmt(&b, "const int %s = %d;\n", p->name, p->v.i);
        } else {
            char lit[48];
            float_literal(lit, sizeof lit, p->v.f);
            sb_fmt(&b, "const float %s = %s;\n", p->name, lit);
        }
    }
    for (int i = 0; i < r->n_inputs; i++)
        sb_fmt(&b, "uniform highp %s u_in%d;\n",
               (r->array_inputs >> i) & 1 ? "sampler2DArray" : "sampler2D", i);
    for (int i = 0; i < r->n_outputs; i++)
        sb_fmt(&b, "layout(location = %d) out vec4 o%d;\n", i, i);
    /* what TX_OUTPUT_TEXEL (shaders/prelude.glsl) writes past the last texel */
    sb_str(&b, "#define TX_ZERO_OUTPUTS");
    for (int i = 0; i < r->n_outputs; i++)
        sb_fmt(&b, " o%d = vec4(0.0);", i);
    sb_str(&b, "\n");
    static const char *const shared[] = {"shaders/prelude", "shaders/elementwise"};
    for (size_t i = 0; i < TX_COUNTOF(shared); i++) {
        const char *src = tx_template_source(shared[i]);
        TX_ASSERT(src);
        sb_str(&b, src);
    }
    const char *body = tx_template_source(r->template_name);
    TX_ASSERT(body);
    sb_str(&b, body);
    return b.p;
}
