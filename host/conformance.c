/* texel conformance [DIR]... [--filter S] [--must-pass FILE] [--json] [--verbose]
 *                   [--device auto|gpu|cpu]
 *
 * Runs ONNX backend tests: each test directory holds model.onnx and
 * test_data_set_N directories of input_N.pb / output_N.pb (TensorProtos). A test passes when
 * every output matches within |got - want| <= atol + rtol * |want| (rtol 1e-3,
 * atol 1e-4), with NaN matching NaN. *Unsupported* means the model needs an
 * op, type or feature texel lacks (the session or the data says
 * TX_STATUS_UNSUPPORTED): counted apart, never as passed or failed.
 *
 * Default DIRs: node, simple and pytorch-* under /usr/share/libonnx-testdata/data.
 * --must-pass FILE runs only the tests listed there (one "suite/test" a line,
 * # comments) and fails any that does not pass. The last line is
 * "N passed, N failed" (plus ", N unsupported" without --must-pass, and ", N
 * skipped" for failures of tests whose data contradicts the schema, k_bad_data). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmds.h"
#include "glctx.h"
#include "model/model.h"
#include "npy.h"
#include "report.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"
#define RTOL     1e-3
#define ATOL     1e-4

typedef enum { R_PASS, R_FAIL, R_UNSUP, R_BAD } result;

typedef struct conf {
    bool json, verbose, quiet;
    tx_progress progress; /* stderr, on a terminal unless --quiet */
    const char *filter;
    char **must;
    int n_must;
    bool *must_seen;
    int passed, failed, unsup, bad;
    /* unsupported op types and how many tests each blocks */
    char *ops[512];
    int op_count[512];
    int n_ops;
    bool first_json;
} conf;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the op types named in an UNSUPPORTED message (quoted after
 * "op_type"), or the message's gist (an element type, a feature). */
static void note_unsupported(conf *c, const char *msg) {
    const char *p = strstr(msg, "op_type");
    char names[8][96];
    int n = 0;
    if (p) {
        const char *q = p;
        while (n < 8 && (q = strchr(q, '"'))) {
            const char *e = strchr(q + 1, '"');
            if (!e || e - q - 1 >= 95)
                break;
            snprintf(names[n++], 96, "%.*s", (int)(e - q - 1), q + 1);
            q = e + 1;
            /* a list continues only with ", " */
            if (strncmp(q, ", \"", 3) != 0)
                break;
        }
    } else if ((p = strstr(msg, "element type "))) {
        snprintf(names[n++], 96, "type:%.*s", (int)strcspn(p + 13, " ),"), p + 13);
    } else if (strstr(msg, "rank above")) {
        snprintf(names[n++], 96, "rank above 6");
    } else if (strstr(msg, "not a tensor")) {
        snprintf(names[n++], 96, "sequence/map/optional values");
    } else {
        snprintf(names[n++], 96, "other: %.60s", msg);
    }
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < c->n_ops && strcmp(c->ops[k], names[i]) != 0)
            k++;
        if (k == c->n_ops) {
            if (c->n_ops == 512)
                continue;
            c->ops[c->n_ops] = strdup(names[i]);
            c->op_count[c->n_ops++] = 0;
        }
        c->op_count[k]++;
    }
}

static bool must_listed(conf *c, const char *name) {
    for (int i = 0; i < c->n_must; i++)
        if (strcmp(c->must[i], name) == 0) {
            c->must_seen[i] = true;
            return true;
        }
    return false;
}

/* dst = a + "/" + b, truncated to n (plain copies: no format truncation) */
static void path_join(char *dst, size_t n, const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > n - 2)
        la = n - 2;
    memcpy(dst, a, la);
    dst[la] = '/';
    if (lb > n - la - 2)
        lb = n - la - 2;
    memcpy(dst + la + 1, b, lb);
    dst[la + 1 + lb] = 0;
}

static void *read_pb(const char *dir, const char *fn, size_t *len) {
    char path[4096];
    path_join(path, sizeof path, dir, fn);
    return tx_read_file(path, len);
}

/* Loads dir/<prefix>_<i>.pb for i = 0.. into vals; returns the count. */
static int load_tensors(const char *dir, const char *prefix, tx_hval *vals, char **names, int max,
                        tx_status *st, char *err, size_t err_len) {
    int n = 0;
    *st = TX_STATUS_OK;
    for (; n < max; n++) {
        char fn[64];
        snprintf(fn, sizeof fn, "%s_%d.pb", prefix, n);
        size_t len;
        void *buf = read_pb(dir, fn, &len);
        if (!buf)
            break;
        *st = tx_onnx_load_tensor(buf, len, &vals[n], &names[n], err, err_len);
        free(buf);
        if (*st)
            break;
    }
    return n;
}

static void free_tensors(tx_hval *v, char **names, int n) {
    for (int i = 0; i < n; i++) {
        tx_hval_free(&v[i]);
        free(names[i]);
    }
}

/* Compares a device output with the expected tensor. */
static bool compare(tx_ctx *ctx, tx_tensor got, const tx_hval *want, char *why, size_t n) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dt;
    if (tx_tensor_shape(ctx, got, &rank, shape, &dt)) {
        snprintf(why, n, "no output tensor");
        return false;
    }
    bool same = rank == want->rank;
    for (int d = 0; d < rank && same; d++)
        same = shape[d] == want->shape[d];
    if (!same) {
        char a[160] = "[", b[160] = "[";
        for (int d = 0; d < rank; d++)
            snprintf(a + strlen(a), sizeof a - strlen(a), d ? ",%lld" : "%lld",
                     (long long)shape[d]);
        for (int d = 0; d < want->rank; d++)
            snprintf(b + strlen(b), sizeof b - strlen(b), d ? ",%lld" : "%lld",
                     (long long)want->shape[d]);
        snprintf(why, n, "shape %s], want %s]", a, b);
        return false;
    }
    float *v = malloc((size_t)(want->numel ? want->numel : 1) * 4);
    if (!v || tx_tensor_read(ctx, got, v, (size_t)want->numel * 4)) {
        free(v);
        snprintf(why, n, "cannot read the output");
        return false;
    }
    bool ok = true;
    for (int64_t i = 0; i < want->numel && ok; i++) {
        double g = dt == TX_DTYPE_INT32 ? (double)((int32_t *)v)[i] : (double)v[i];
        double w = tx_hval_get(want, i);
        if (isnan(w) || isnan(g))
            ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g))
            ok = g == w;
        else
            ok = fabs(g - w) <= ATOL + RTOL * fabs(w);
        if (!ok)
            snprintf(why, n, "element %lld: got %.9g, want %.9g", (long long)i, g, w);
    }
    free(v);
    return ok;
}

/* Runs one test directory. */
static result run_test(tx_ctx *ctx, const char *dir, char *why, size_t why_len) {
    char path[4096];
    path_join(path, sizeof path, dir, "model.onnx");
    size_t len;
    void *bytes = tx_read_file(path, &len);
    if (!bytes) {
        snprintf(why, why_len, "cannot read %.1000s", path);
        return R_FAIL;
    }
    tx_stats before;
    tx_ctx_stats(ctx, &before);
    tx_session *s;
    tx_status st = tx_session_create(ctx, bytes, len, NULL, &s);
    free(bytes);
    if (st) {
        snprintf(why, why_len, "%s: %s", tx_status_name(st), tx_last_error(ctx));
        return st == TX_STATUS_UNSUPPORTED ? R_UNSUP : R_FAIL;
    }
    result res = R_PASS;
    int n_sets = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    char **sets = NULL;
    int cap = 0;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "test_data_set_", 14) != 0)
            continue;
        if (n_sets == cap) {
            cap = cap ? cap * 2 : 4;
            sets = realloc(sets, (size_t)cap * sizeof *sets);
        }
        sets[n_sets++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    qsort(sets, (size_t)n_sets, sizeof *sets, cmp_str);
    if (!n_sets) {
        snprintf(why, why_len, "no test_data_set_*");
        res = R_FAIL;
    }
    int n_in = tx_session_input_count(s), n_out = tx_session_output_count(s);
    for (int k = 0; k < n_sets && res == R_PASS; k++) {
        char sd[4096];
        path_join(sd, sizeof sd, dir, sets[k]);
        tx_hval ins[64], outs_want[64];
        char *in_names[64], *out_names[64];
        char err[1024];
        tx_status lst;
        int ni = load_tensors(sd, "input", ins, in_names, 64, &lst, err, sizeof err);
        int no = 0;
        if (!lst)
            no = load_tensors(sd, "output", outs_want, out_names, 64, &lst, err, sizeof err);
        tx_feed feeds[64];
        tx_tensor got[64];
        int n_feeds = 0;
        memset(got, 0, sizeof got);
        if (lst) {
            snprintf(why, why_len, "%s: %s", tx_status_name(lst), err);
            res = lst == TX_STATUS_UNSUPPORTED ? R_UNSUP : R_FAIL;
        } else if (ni != n_in || no != n_out) {
            snprintf(why, why_len, "the data has %d inputs/%d outputs, the model %d/%d", ni, no,
                     n_in, n_out);
            res = R_FAIL;
        }
        for (int i = 0; i < ni && res == R_PASS; i++) {
            tx_value_info info;
            tx_session_input_info(s, i, &info);
            feeds[i].name = info.name; /* input_i is graph input i */
            st = tx_hval_upload(ctx, info.name, &ins[i], &feeds[i].tensor);
            if (st) {
                snprintf(why, why_len, "%s: %s", tx_status_name(st), tx_last_error(ctx));
                res = st == TX_STATUS_UNSUPPORTED ? R_UNSUP : R_FAIL;
            } else {
                n_feeds++;
            }
        }
        if (res == R_PASS) {
            st = tx_session_run(s, feeds, n_feeds, NULL, n_out, got);
            if (st) {
                snprintf(why, why_len, "%s: %s", tx_status_name(st), tx_last_error(ctx));
                res = st == TX_STATUS_UNSUPPORTED ? R_UNSUP : R_FAIL;
                memset(got, 0, sizeof got);
            }
        }
        for (int i = 0; i < n_out && res == R_PASS; i++) {
            char w[512];
            if (!compare(ctx, got[i], &outs_want[i], w, sizeof w)) {
                tx_value_info info;
                tx_session_output_info(s, i, &info);
                snprintf(why, why_len, "%s: output \"%s\": %s", sets[k], info.name, w);
                res = R_FAIL;
            }
        }
        for (int i = 0; i < n_out; i++)
            if (got[i].id)
                tx_tensor_destroy(ctx, got[i]);
        for (int i = 0; i < n_feeds; i++)
            tx_tensor_destroy(ctx, feeds[i].tensor);
        free_tensors(ins, in_names, ni);
        free_tensors(outs_want, out_names, no);
    }
    for (int k = 0; k < n_sets; k++)
        free(sets[k]);
    free(sets);
    tx_session_destroy(s);
    tx_stats after;
    tx_ctx_stats(ctx, &after);
    if (res == R_PASS && after.live_tensors != before.live_tensors) {
        snprintf(why, why_len, "%lld tensors leaked",
                 (long long)after.live_tensors - (long long)before.live_tensors);
        res = R_FAIL;
    }
    return res;
}

/* Tests whose expected outputs contradict the ONNX schema they test: run
 * like any other, but a mismatch there is reported as bad test data (counted
 * as skipped, never as passed), with the reason. */
static const struct {
    const char *test, *reason;
} k_bad_data[] = {
    {"node/test_adam_multiple",
     "its outputs were made with epsilon 1e-2 (onnx's adam.py passes it to the "
     "reference only), but the node sets no epsilon, so the schema's default 1e-6 applies"},
};

static const char *bad_data_reason(const char *test) {
    for (size_t i = 0; i < sizeof k_bad_data / sizeof k_bad_data[0]; i++)
        if (strcmp(k_bad_data[i].test, test) == 0)
            return k_bad_data[i].reason;
    return NULL;
}

static void report(conf *c, const char *name, result r, const char *why) {
    static const char *const k_word[] = {"pass", "FAIL", "unsupported", "bad data"};
    char bad_why[3072];
    const char *bad = r == R_FAIL ? bad_data_reason(name) : NULL;
    if (bad) {
        snprintf(bad_why, sizeof bad_why, "%s (%s)", bad, why);
        why = bad_why;
        r = R_BAD;
    }
    if (r == R_PASS)
        c->passed++;
    else if (r == R_FAIL)
        c->failed++;
    else if (r == R_BAD)
        c->bad++;
    else
        c->unsup++;
    if (r == R_UNSUP)
        note_unsupported(c, why);
    if (c->json) {
        printf("%s\n  {\"test\": ", c->first_json ? "" : ",");
        c->first_json = false;
        tx_json_str(name);
        printf(", \"result\": \"%s\"", r == R_PASS   ? "pass"
                                       : r == R_FAIL ? "fail"
                                       : r == R_BAD  ? "bad data"
                                                     : "unsupported");
        if (r != R_PASS) {
            printf(", \"why\": ");
            tx_json_str(why);
        }
        printf("}");
    } else if (r != R_PASS || c->verbose || !c->must) {
        tx_progress_clear(&c->progress);
        /* in --must-pass mode only what goes wrong is worth a line */
        printf("%-11s %s%s%s\n", k_word[r], name, r == R_PASS ? "" : ": ", r == R_PASS ? "" : why);
    }
    fflush(stdout);
}

static void run_dir(conf *c, tx_ctx *ctx, const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "texel conformance: cannot open %s\n", dir);
        return;
    }
    const char *suite = strrchr(dir, '/');
    suite = suite && suite[1] ? suite + 1 : dir;
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            names = realloc(names, (size_t)cap * sizeof *names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char full[4096], test[512], model[4096];
        path_join(full, sizeof full, dir, names[i]);
        path_join(test, sizeof test, suite, names[i]);
        path_join(model, sizeof model, full, "model.onnx");
        struct stat sb;
        bool skip = stat(model, &sb) != 0 || (c->filter && !strstr(test, c->filter)) ||
                    (c->must && !must_listed(c, test));
        if (!skip) {
            tx_progress_update(&c->progress,
                               "conformance %s %d/%d: %d passed, %d failed, %d unsupported", suite,
                               i + 1, n, c->passed, c->failed, c->unsup);
            char why[2048] = "";
            result r = run_test(ctx, full, why, sizeof why);
            if (c->must && r == R_UNSUP) /* a must-pass test may not become unsupported */
                r = R_FAIL;
            report(c, test, r, why);
        }
        free(names[i]);
    }
    free(names);
}

static int load_must(conf *c, const char *path) {
    size_t len;
    char *buf = tx_read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "texel conformance: cannot read %s\n", path);
        return -1;
    }
    int cap = 0;
    char *save = NULL;
    char *text = realloc(buf, len + 1);
    if (!text) {
        free(buf);
        return -1;
    }
    text[len] = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line[strcspn(line, "# \t\r")] = 0;
        if (!*line)
            continue;
        if (c->n_must == cap) {
            cap = cap ? cap * 2 : 256;
            c->must = realloc(c->must, (size_t)cap * sizeof *c->must);
        }
        c->must[c->n_must++] = strdup(line);
    }
    free(text);
    c->must_seen = calloc((size_t)c->n_must + 1, 1);
    return 0;
}

const char tx_usage_conformance[] =
    "usage: texel conformance [DIR]... [--filter S] [--must-pass FILE] [--json] [--verbose]\n"
    "           [--device auto|gpu|cpu] [--quiet]\n";

int tx_cmd_conformance(int argc, char **argv) {
    conf c = {.first_json = true};
    const char *dirs[64];
    int n_dirs = 0;
    static const char *const value_opts[] = {"--filter", "--device", "--must-pass", NULL};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int first = tx_cli_first_look("conformance", tx_usage_conformance, a, v, value_opts);
        if (first >= 0)
            return first;
        if (strcmp(a, "--json") == 0)
            c.json = true;
        else if (strcmp(a, "--quiet") == 0)
            c.quiet = true;
        else if (strcmp(a, "--verbose") == 0)
            c.verbose = true;
        else if (strcmp(a, "--filter") == 0 && v)
            c.filter = v, i++;
        else if (strcmp(a, "--device") == 0 && v && tx_device_from_name(v) != TX_DEVICE_COUNT_)
            setenv("TEXEL_DEVICE", v, 1), i++; /* every session's device (choose.c) */
        else if (strcmp(a, "--must-pass") == 0 && v) {
            if (load_must(&c, v))
                return 1;
            i++;
        } else if (a[0] != '-' && n_dirs < 64)
            dirs[n_dirs++] = a;
        else if (strcmp(a, "--device") == 0)
            return tx_cli_usage_error("conformance", tx_usage_conformance,
                                      "--device is auto, gpu or cpu");
        else if (a[0] != '-')
            return tx_cli_usage_error("conformance", tx_usage_conformance, "more than 64 DIRs");
        else
            return tx_cli_unknown("conformance", tx_usage_conformance, a);
    }
    char *owned[64];
    int n_owned = 0;
    if (!n_dirs) {
        DIR *d = opendir(TESTDATA);
        struct dirent *e;
        while (d && (e = readdir(d)) && n_owned < 64) {
            if (strcmp(e->d_name, "node") == 0 || strcmp(e->d_name, "simple") == 0 ||
                strncmp(e->d_name, "pytorch-", 8) == 0) {
                char p[512];
                snprintf(p, sizeof p, "%s/%s", TESTDATA, e->d_name);
                owned[n_owned] = strdup(p);
                dirs[n_dirs++] = owned[n_owned++];
            }
        }
        if (d)
            closedir(d);
        if (!n_dirs) {
            fprintf(stderr,
                    "texel conformance: no test data under %s (Debian package "
                    "libonnx-testdata; scripts/setup.sh installs it)\n",
                    TESTDATA);
            return 1;
        }
        qsort(dirs, (size_t)n_dirs, sizeof *dirs, cmp_str);
    }
    tx_host *h;
    tx_ctx *ctx;
    int rc = tx_host_open(NULL, &h, &ctx);
    if (rc)
        return rc;
    if (c.json)
        printf("{\"tests\": [");
    tx_progress_begin(&c.progress, c.quiet, 0);
    for (int i = 0; i < n_dirs; i++)
        run_dir(&c, ctx, dirs[i]);
    tx_progress_end(&c.progress);
    for (int i = 0; i < c.n_must; i++)
        if (!c.must_seen[i])
            report(&c, c.must[i], R_FAIL, "listed in the must-pass file but not found");
    /* most-blocking unsupported features first */
    for (int i = 0; i < c.n_ops; i++)
        for (int j = i + 1; j < c.n_ops; j++)
            if (c.op_count[j] > c.op_count[i] ||
                (c.op_count[j] == c.op_count[i] && strcmp(c.ops[j], c.ops[i]) < 0)) {
                char *t = c.ops[i];
                c.ops[i] = c.ops[j];
                c.ops[j] = t;
                int n = c.op_count[i];
                c.op_count[i] = c.op_count[j];
                c.op_count[j] = n;
            }
    if (c.json) {
        printf("\n], \"passed\": %d, \"failed\": %d, \"unsupported\": %d, \"bad_data\": %d, "
               "\"unsupported_ops\": {",
               c.passed, c.failed, c.unsup, c.bad);
        for (int i = 0; i < c.n_ops; i++) {
            printf(i ? ", " : "");
            tx_json_str(c.ops[i]);
            printf(": %d", c.op_count[i]);
        }
        printf("}}\n");
    } else {
        if (c.n_ops) {
            printf("unsupported (tests blocked):");
            for (int i = 0; i < c.n_ops; i++)
                printf("%s %s (%d)", i ? "," : "", c.ops[i], c.op_count[i]);
            printf("\n");
        }
        char skipped[64] = "";
        if (c.bad) /* run, but their expected outputs are wrong (k_bad_data) */
            snprintf(skipped, sizeof skipped, ", %d skipped", c.bad);
        if (c.must)
            printf("%d passed, %d failed%s\n", c.passed, c.failed, skipped);
        else
            printf("%d passed, %d failed, %d unsupported%s\n", c.passed, c.failed, c.unsup,
                   skipped);
    }
    for (int i = 0; i < c.n_ops; i++)
        free(c.ops[i]);
    for (int i = 0; i < c.n_must; i++)
        free(c.must[i]);
    free(c.must);
    free(c.must_seen);
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    tx_host_close(h, ctx);
    return c.failed ? 1 : 0;
}
