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
    if (tx_op_family(act) == TX_FAMILY_ACT) { /* elementwise.glsl's alpha/beta family */
        tx_req_define(r, "TX_HAS_ALPHA", "1");
        tx_req_float(r, "p_alpha", lo);
        tx_req_float(r, "p_beta", hi);
    }
}

void tx_req_resid(tx_program_req *r, int in, const tx_texture *resid, int64_t r_numel,
                  int64_t y_numel) {
    char name[16];
    snprintf(name, sizeof name, "u_in%d", in);
    tx_req_define(r, "TX_RESID", name);
    tx_req_int(r, "p_r_ws", resid->wshift);
    if (r_numel < y_numel) { /* a prefix of y (whole texels): the rest adds 0 */
        tx_req_define(r, "TX_RESID_N", "1");
        tx_req_int(r, "p_r_ntex", (int)(r_numel / 4));
    }
}

/* A float literal that reads back as exactly v (finite values only). */
static void float_literal(char *buf, size_t n, float v) {
    snprintf(buf, n, "%.9g", (double)v);
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", n - strlen(buf) - 1);
}

/* ---- trimming: what the driver is given ----
 * A program is its template plus every shared helper (shaders/), most of
 * which it never calls, and comments. Chromium's translator (ANGLE) parses
 * and translates all of it before the driver sees the program: a 1M-element
 * relu's program compiled in ~5 ms as assembled and in ~2 once trimmed to
 * the functions it calls (SwiftShader; the first draw's time was the same).
 * So comments go, and so do the functions nothing reachable calls: a
 * function is kept when its name appears outside every function (in a
 * #define, a declaration) or in main or in a kept function. Overloads share
 * their fate. Preprocessor conditionals are not evaluated, so a name in an
 * inactive branch keeps its function: trimming only ever keeps too much. A
 * name a macro would paste together (##) is not seen: templates name the
 * functions they call whole (TX_FN tx_u_relu, TX_OP tx_b_add). */

static bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool ident_char(char c) {
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* Comments out (a block comment becomes one space; a line comment's newline
 * stays), trailing spaces and runs of blank lines squeezed; in place. */
static void strip_comments(char *s) {
    char *w = s;
    const char *r = s;
    bool blank = true; /* w is at a line's start with nothing written on it */
    bool prev_blank = true;
    while (*r) {
        if (r[0] == '/' && r[1] == '/') {
            while (*r && *r != '\n')
                r++;
        } else if (r[0] == '/' && r[1] == '*') {
            const char *e = strstr(r + 2, "*/");
            r = e ? e + 2 : r + strlen(r);
            *w++ = ' ';
        } else if (*r == '\n') {
            while (w > s && w[-1] == ' ') /* trailing spaces */
                w--;
            if (!(blank && prev_blank))
                *w++ = '\n';
            prev_blank = blank;
            blank = true;
            r++;
        } else {
            if (*r != ' ')
                blank = false;
            *w++ = *r++;
        }
    }
    *w = 0;
}

typedef struct fn_def {
    size_t start, end;     /* the definition: [start, end), its closing brace included */
    size_t name, name_len; /* its name */
    bool keep, scanned;
} fn_def;

/* Top-level function definitions of s (comments gone), at most max; -1 when
 * braces or conditionals do not pair up as expected (no function is then
 * taken out).
 * Every branch of a conditional is read from the depth its #if began at and
 * must end at the depth the first branch ended at (each branch its own loop
 * header, say), and one at the top level may not leave a definition open:
 * so a definition lies within one branch, and every branch's are found. */
static int find_functions(const char *s, fn_def *defs, int max) {
    enum { MAX_NEST = 32 };
    struct {
        int begin, end; /* brace depth at the #if; at the first branch's end (-1: not yet) */
    } cond[MAX_NEST];
    int nest = 0, n = 0, depth = 0, nest_at_open = 0;
    size_t stmt = 0; /* where the current top-level statement began */
    bool line_start = true;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (line_start && (c == ' ' || c == '\t'))
            continue;
        if (line_start && c == '#') {
            size_t j = i + 1;
            while (s[j] == ' ')
                j++;
            bool is_if = !strncmp(s + j, "if", 2), is_else = !strncmp(s + j, "el", 2),
                 is_end = !strncmp(s + j, "endif", 5);
            if (is_if) {
                if (nest == MAX_NEST)
                    return -1;
                cond[nest].begin = depth;
                cond[nest++].end = -1;
            } else if (is_else || is_end) { /* #elif, #else, #endif: a branch ends */
                if (nest == 0)
                    return -1;
                int *end = &cond[nest - 1].end;
                if ((*end >= 0 && depth != *end) || (cond[nest - 1].begin == 0 && depth != 0))
                    return -1;
                *end = depth;
                if (is_else)
                    depth = cond[nest - 1].begin;
                else
                    nest--;
            }
            while (s[i + 1] && s[i + 1] != '\n')
                i++;
            if (depth == 0)
                stmt = i + 1;
            continue;
        }
        line_start = c == '\n';
        if (c == '{') {
            if (depth++ > 0)
                continue;
            size_t k = i;
            while (k > stmt && (s[k - 1] == ' ' || s[k - 1] == '\n'))
                k--;
            if (k == stmt || s[k - 1] != ')')
                return -1; /* a top-level brace that opens no function */
            int paren = 0;
            do {
                k--;
                paren += s[k] == ')' ? 1 : s[k] == '(' ? -1 : 0;
            } while (k > stmt && paren > 0);
            while (k > stmt && s[k - 1] == ' ')
                k--;
            size_t e = k;
            while (k > stmt && ident_char(s[k - 1]))
                k--;
            if (paren != 0 || k == e || n == max)
                return -1;
            defs[n] = (fn_def){.start = stmt, .name = k, .name_len = e - k};
            nest_at_open = nest;
        } else if (c == '}') {
            if (--depth < 0)
                return -1;
            if (depth == 0) {
                if (nest != nest_at_open)
                    return -1; /* a conditional opened or closed inside a definition */
                defs[n++].end = i + 1;
                stmt = i + 1;
            }
        } else if (c == ';' && depth == 0) {
            stmt = i + 1;
        }
    }
    return depth == 0 && nest == 0 ? n : -1;
}

/* Marks kept every definition named by an identifier of s[from, to). */
static void mark_names(const char *s, size_t from, size_t to, fn_def *defs, int n) {
    for (size_t i = from; i < to;) {
        if (!ident_start(s[i])) {
            /* a number's letters (1.0e5, 2u) are not a name */
            if (s[i] >= '0' && s[i] <= '9')
                while (i < to && (ident_char(s[i]) || s[i] == '.'))
                    i++;
            else
                i++;
            continue;
        }
        size_t b = i;
        while (i < to && ident_char(s[i]))
            i++;
        for (int d = 0; d < n; d++)
            if (!defs[d].keep && defs[d].name_len == i - b &&
                !memcmp(s + defs[d].name, s + b, i - b))
                defs[d].keep = true;
    }
}

/* s without comments and without the functions main cannot reach; in place. */
static void trim_source(char *s) {
    strip_comments(s);
    enum { MAX_DEFS = 256 };
    fn_def defs[MAX_DEFS];
    int n = find_functions(s, defs, MAX_DEFS);
    if (n <= 0)
        return;
    /* roots: main, and every name outside the definitions */
    size_t at = 0;
    for (int d = 0; d < n; d++) {
        mark_names(s, at, defs[d].start, defs, n);
        at = defs[d].end;
        if (defs[d].name_len == 4 && !memcmp(s + defs[d].name, "main", 4))
            defs[d].keep = true;
    }
    mark_names(s, at, strlen(s), defs, n);
    for (bool more = true; more;) {
        more = false;
        for (int d = 0; d < n; d++)
            if (defs[d].keep && !defs[d].scanned) {
                defs[d].scanned = true;
                mark_names(s, defs[d].name + defs[d].name_len, defs[d].end, defs, n);
                more = true;
            }
    }
    char *w = s;
    at = 0;
    for (int d = 0; d <= n; d++) {
        size_t until = d < n ? defs[d].start : strlen(s + at) + at;
        if (d < n && defs[d].keep)
            until = defs[d].end;
        memmove(w, s + at, until - at);
        w += until - at;
        if (d < n)
            at = defs[d].end;
    }
    *w = 0;
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
    trim_source(b.p);
    return b.p;
}
