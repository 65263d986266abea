/* Every op of texel_ops.def × {generic forced, specialized forced, adaptive,
 * adaptive on tiny textures} × its family's shape sets, against engine/ref/.
 * An op added to the list is swept here without further edits. */
#include <math.h>

#include "check.h"
#include "glctx.h"
#include "harness.h"
#include "internal.h"

typedef struct shape_case {
    const char *shapes; /* as for `texel op --shape` */
    tx_op_attrs attrs;
    bool bias;
    const char *tag;    /* names the attrs in the test name */
} shape_case;

static const shape_case k_unary[] = {
    {.shapes = "1"}, {.shapes = "3"}, {.shapes = "4"}, {.shapes = "17"}, {.shapes = "5x7x11x13"}, {.shapes = "64x65"}, {.shapes = "2x3x4x5x6x7"}, {.shapes = "0"}, {.shapes = "scalar"},
};
static const shape_case k_clip[] = {
    {.shapes = "5x7x11x13", .attrs = {.lo = 0, .hi = 6}},
    {.shapes = "17", .attrs = {.lo = -1.5f, .hi = 0.25f}},
    {.shapes = "33x9", .attrs = {.lo = -INFINITY, .hi = 1}},
    {.shapes = "33x9", .attrs = {.lo = -2, .hi = INFINITY}},
};
static const shape_case k_binary[] = {
    {.shapes = "1,1"},          {.shapes = "5x7x11x13,5x7x11x13"}, {.shapes = "5x7x11x13,13"}, {.shapes = "5x1x11x1,7x1x13"},
    {.shapes = "1,4x5"},        {.shapes = "4x5,1"},               {.shapes = "scalar,3x3"},   {.shapes = "2x1x4,3x1"},
    {.shapes = "64x8,8"},       {.shapes = "8,64x8"},              {.shapes = "65x33,65x1"},   {.shapes = "2x3x4x5x6x7,7"},
    {.shapes = "1x3x1x5x1x7,2x1x4x1x6x1"}, {.shapes = "0x3,3"},
};
static const shape_case k_matmul[] = {
    {.shapes = "1x1,1x1"},
    {.shapes = "5x7,7x3"},
    {.shapes = "33x17,17x12"},
    {.shapes = "64x64,64x64"},
    {.shapes = "9x16,16x20"},
    {.shapes = "12x5,5x8"},
    {.shapes = "13x6,6x9"},
    {.shapes = "2x3x5x8,8x12"},
    {.shapes = "3x1x6x4,2x4x8"},
    {.shapes = "7,7x4"},
    {.shapes = "4x7,7"},
    {.shapes = "7,7"},
    {.shapes = "16x12,20x12", .attrs = {.matmul = {.transpose_b = true}}},
    {.shapes = "12x16,12x20", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "20x18,20x8", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "2x40x12,12x16", .attrs = {.matmul = {.activation = TX_OP_TANH}}, .bias = true},
    {.shapes = "10x6,9x10", .attrs = {.matmul = {.transpose_a = true, .transpose_b = true}}},
    {.shapes = "3x16x8,3x16x8", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "20x16,16x24", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "5x7,7x6", .attrs = {.matmul = {.activation = TX_OP_GELU}}, .bias = true},
    {.shapes = "33x32,32x8", .attrs = {.matmul = {.activation = TX_OP_RELU6}}, .bias = true},
    {.shapes = "2x8x8,8x13", .attrs = {.matmul = {.activation = TX_OP_SIGMOID}}, .bias = true},
};

#define AX(...) .n_axes = (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), .axes = {__VA_ARGS__}
static const shape_case k_reduce[] = {
    {.shapes = "1", .tag = "all"},
    {.shapes = "scalar", .tag = "all"},
    {.shapes = "5x7x11x13", .tag = "all"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(-1), .drop_dims = true}}, .tag = "-1/drop"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(0, 2)}}, .tag = "0,2"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(3, 1), .drop_dims = true}}, .tag = "3,1/drop"},
    {.shapes = "2x3x4x5x6x7", .attrs = {.reduce = {AX(0, 2, 4)}}, .tag = "0,2,4"},
    {.shapes = "2x3x4x5x6x7", .attrs = {.reduce = {AX(1, 3, -1), .drop_dims = true}}, .tag = "1,3,5/drop"},
    {.shapes = "7x1x5", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
    {.shapes = "16x1000", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(-1)}}, .tag = "-1"},
    {.shapes = "1000x16", .attrs = {.reduce = {AX(0)}}, .tag = "0"},
    {.shapes = "2000x8", .attrs = {.reduce = {AX(0)}}, .tag = "0"},
    {.shapes = "6x5x8", .attrs = {.reduce = {AX(1), .drop_dims = true}}, .tag = "1/drop"},
    {.shapes = "3x4x5x12", .attrs = {.reduce = {AX(0, 2)}}, .tag = "0,2"},
    {.shapes = "16000", .tag = "all"},
    {.shapes = "4x4096", .attrs = {.reduce = {AX(0, 1), .drop_dims = true}}, .tag = "0,1/drop"},
    {.shapes = "5x7", .attrs = {.reduce = {.noop_with_empty_axes = true}}, .tag = "noop"},
    {.shapes = "3x0", .attrs = {.reduce = {AX(1)}}, .tag = "empty"},
    {.shapes = "0x3", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
};
static const shape_case k_arg[] = {
    {.shapes = "17", .tag = "default"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(-1), .drop_dims = true}}, .tag = "-1/drop"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(2), .select_last_index = true}}, .tag = "2/last"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(1)}}, .tag = "1"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(1), .select_last_index = true}}, .tag = "1/last"},
    {.shapes = "2x4096", .attrs = {.reduce = {AX(1), .select_last_index = true}}, .tag = "1/last"},
    {.shapes = "1000x16", .attrs = {.reduce = {AX(0), .select_last_index = true}}, .tag = "0/last"},
};
static const shape_case k_softmax[] = {
    {.shapes = "17", .attrs = {.softmax = {.axis = 0}}, .tag = "0"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = -1}}, .tag = "-1"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 1}}, .tag = "1"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 0}}, .tag = "0"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 1, .coerce_2d = true}}, .tag = "1/2d"},
    {.shapes = "16x1000", .attrs = {.softmax = {.axis = -1}}, .tag = "-1"},
    {.shapes = "3x4999", .attrs = {.softmax = {.axis = 1}}, .tag = "1"},
    {.shapes = "0x3", .attrs = {.softmax = {.axis = 1}}, .tag = "1"},
};
static const shape_case k_batch_norm[] = {
    {.shapes = "2x3x5x7,3,3,3,3"},
    {.shapes = "4x6,6,6,6,6", .attrs = {.norm = {.epsilon = 1e-3f}}, .tag = "eps"},
    {.shapes = "1x8x16x17,8,8,8,8"},
};
static const shape_case k_instance_norm[] = {
    {.shapes = "2x3x5x7,3,3"},
    {.shapes = "1x4x1000,4,4"},
    {.shapes = "2x3x17x3,3,3", .attrs = {.norm = {.epsilon = 1e-2f}}, .tag = "eps"},
};
static const shape_case k_layer_norm[] = {
    {.shapes = "5x7x11x13,13,13", .attrs = {.norm = {.axis = -1}}, .tag = "-1"},
    {.shapes = "5x7x11x13,11x13,11x13", .attrs = {.norm = {.axis = -2}}, .tag = "-2"},
    {.shapes = "5x7x11x13,13", .attrs = {.norm = {.axis = 2}}, .tag = "2/trailing-scale"},
    {.shapes = "4x1000,1000,1000", .attrs = {.norm = {.axis = 1}}, .tag = "1"},
    {.shapes = "6x10,1,1x1", .attrs = {.norm = {.axis = 0, .epsilon = 1e-3f}}, .tag = "0/scalar"},
    {.shapes = "3x4x6,6,6", .attrs = {.norm = {.axis = 1}}, .tag = "1/period6"},
    {.shapes = "5x8,8", .attrs = {.norm = {.axis = -1}}, .tag = "-1/no-bias"},
};
static const shape_case k_act[] = {
    {.shapes = "5x7x11x13", .attrs = {.alpha = 0.2f, .beta = 0.5f}, .tag = "a.2,b.5"},
    {.shapes = "17", .attrs = {.alpha = 1.6732632f, .beta = 1.0507009f}, .tag = "selu"},
    {.shapes = "64x65", .attrs = {.alpha = 0.01f, .beta = 0}, .tag = "a.01"},
    {.shapes = "scalar", .attrs = {.alpha = 2, .beta = -1}, .tag = "a2,b-1"},
};
static const shape_case k_cast[] = {
    {.shapes = "5x7x11x13", .attrs = {.cast_to = TX_DTYPE_INT32}, .tag = "int32"},
    {.shapes = "17", .attrs = {.cast_to = TX_DTYPE_FLOAT32}, .tag = "float32"},
    {.shapes = "33x9", .attrs = {.cast_bool = true}, .tag = "bool"},
    {.shapes = "33x9", .attrs = {.cast_to = TX_DTYPE_INT32, .cast_bool = true}, .tag = "bool-int32"},
};
static const shape_case k_where[] = {
    {.shapes = "5x7x11,5x7x11,5x7x11"},
    {.shapes = "2x1x4,3x1,4"},
    {.shapes = "scalar,3x3,1"},
    {.shapes = "7x1,1x9,7x9"},
};
static const shape_case k_variadic[] = {
    {.shapes = "5x7"},
    {.shapes = "5x7,5x7"},
    {.shapes = "2x1x4,3x1,4"},
    {.shapes = "5x7x11,11,7x1,1x1x1,5x7x11,scalar"},
    {.shapes = "9,9,9,9,9,9,9,9"},
    {.shapes = "0x3,3"},
};

typedef struct family_cases {
    const shape_case *cases;
    int n;
} family_cases;

#define CASES(a) ((family_cases){a, (int)TX_COUNTOF(a)})
static family_cases cases_for(tx_op op) {
    switch (op) { /* ops whose inputs or attributes differ from their family's */
    case TX_OP_ARGMAX:
    case TX_OP_ARGMIN: return CASES(k_arg);
    case TX_OP_BATCH_NORM: return CASES(k_batch_norm);
    case TX_OP_INSTANCE_NORM: return CASES(k_instance_norm);
    case TX_OP_LAYER_NORM: return CASES(k_layer_norm);
    case TX_OP_WHERE: return CASES(k_where);
    default: break;
    }
    switch (tx_op_family(op)) {
    case TX_FAMILY_REDUCE: return CASES(k_reduce);
    case TX_FAMILY_SOFTMAX: return CASES(k_softmax);
    case TX_FAMILY_ACT: return CASES(k_act);
    case TX_FAMILY_CAST: return CASES(k_cast);
    case TX_FAMILY_NARY: return CASES(k_variadic);
    case TX_FAMILY_UNARY: return (family_cases){k_unary, (int)TX_COUNTOF(k_unary)};
    case TX_FAMILY_CLIP: return (family_cases){k_clip, (int)TX_COUNTOF(k_clip)};
    case TX_FAMILY_BINARY: return (family_cases){k_binary, (int)TX_COUNTOF(k_binary)};
    case TX_FAMILY_MATMUL: return (family_cases){k_matmul, (int)TX_COUNTOF(k_matmul)};
    default: return (family_cases){NULL, 0};
    }
}

static bool parse_case(tx_op op, const shape_case *c, tx_check_desc *d) {
    memset(d, 0, sizeof *d);
    d->op = op;
    d->attrs = c->attrs;
    d->seed = 7;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", c->shapes);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (d->n_inputs == TX_CHECK_MAX_INPUTS)
            return false;
        d->rank[d->n_inputs] = tx_parse_shape(tok, d->shape[d->n_inputs]);
        if (d->rank[d->n_inputs] < 0)
            return false;
        d->n_inputs++;
    }
    if (c->bias) {
        int rb = d->rank[1];
        d->rank[2] = 1;
        d->shape[2][0] = d->shape[1][d->attrs.matmul.transpose_b ? rb - 2 : rb - 1];
        d->n_inputs = 3;
    }
    return d->n_inputs == tx_op_arity(op) || (op == TX_OP_MATMUL && d->n_inputs == 3) ||
           (op == TX_OP_LAYER_NORM && d->n_inputs == 2) || tx_op_arity(op) == 0;
}

typedef struct mode {
    const char *name;
    tx_ctx_desc desc;
    int calls; /* calls per case: adaptive needs k + 1 to reach the specialized variant */
} mode;

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    const mode modes[] = {
        {"generic", {.specialize_after = TX_SPECIALIZE_NEVER}, 1},
        {"specialized", {.specialize_after = TX_SPECIALIZE_ALWAYS}, 1},
        {"adaptive", {.specialize_after = 2}, 4},
        {"adaptive-tex64", {.specialize_after = 1, .max_texture_size = 64}, 2},
    };
    for (size_t m = 0; m < TX_COUNTOF(modes); m++) {
        tx_host *h;
        tx_ctx *ctx;
        int rc = tx_host_open(&modes[m].desc, &h, &ctx);
        if (rc == TX_HOST_NO_CONTEXT) {
            printf("no GL context: skipping the op sweep\n");
            return 77;
        }
        if (rc)
            return 1;
        for (int op = 1; op < TX_OP_COUNT_; op++) {
            family_cases fc = cases_for((tx_op)op);
            if (!fc.n) {
                char name[96];
                snprintf(name, sizeof name, "%s/%s", modes[m].name, tx_op_name((tx_op)op));
                if (tx_test_begin(name)) {
                    CHECK(fc.n > 0, "no shape set for this op's family");
                    tx_test_end();
                }
                continue;
            }
            for (int ci = 0; ci < fc.n; ci++) {
                char name[192];
                const shape_case *c = &fc.cases[ci];
                snprintf(name, sizeof name, "%s/%s/%s%s%s%s%s%s", modes[m].name,
                         tx_op_name((tx_op)op), c->shapes, c->attrs.matmul.transpose_a ? "/ta" : "",
                         c->attrs.matmul.transpose_b ? "/tb" : "", c->bias ? "/bias" : "",
                         c->tag ? "/" : "", c->tag ? c->tag : "");
                if (!tx_test_begin(name))
                    continue;
                tx_check_desc d;
                CHECK(parse_case((tx_op)op, c, &d), "bad case table entry");
                for (int call = 0; call < modes[m].calls && !tx_t.cur_failed; call++) {
                    d.seed = 7 + (uint64_t)call;
                    tx_check_result r;
                    tx_check_run(ctx, &d, &r);
                    CHECK(r.status == TX_STATUS_OK, "call %d: %s: %s", call,
                          tx_status_name(r.status), r.error);
                    CHECK(r.bad == 0,
                          "call %d: %lld of %lld elements out of tolerance; first at %lld: got "
                          "%.9g want %.9g (max abs err %.3g)",
                          call, (long long)r.bad, (long long)r.numel, (long long)r.first_bad,
                          (double)r.first_bad_got, (double)r.first_bad_want, r.max_abs_err);
                    free(r.call_ms);
                }
                tx_test_end();
            }
        }
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        char name[96];
        snprintf(name, sizeof name, "%s/variants-used", modes[m].name);
        if (tx_test_begin(name)) {
            if (m == 0) {
                CHECK(st.specialized_compiles == 0, "generic mode specialized %llu programs",
                      (unsigned long long)st.specialized_compiles);
            } else {
                CHECK(st.specialized_runs > 0, "no run used a specialized program");
            }
            CHECK(st.compile_failures == 0, "%llu programs failed to compile",
                  (unsigned long long)st.compile_failures);
            CHECK(st.live_tensors == 0, "%llu tensors leaked", (unsigned long long)st.live_tensors);
            tx_test_end();
        }
        tx_host_close(h, ctx);
    }
    return tx_test_finish();
}
