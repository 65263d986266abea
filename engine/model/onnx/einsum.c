/* ONNX Einsum, lowered to engine ops: each operand's repeated labels become a
 * strided slice (the diagonal), labels no one else reads are summed out, and
 * operands combine left to right as one batched matmul each (batch labels
 * first, the contracted ones multiplied away), then a transpose gives the
 * output order. Ellipsis dims are labels of their own, broadcast right-aligned. */
#include <string.h>

#include "build.h"

#define EIN_LABELS 64 /* a-z, A-Z, then ellipsis dims */

typedef struct ein_term {
    int n;                /* labels (= the operand's rank, once parsed) */
    int lab[TX_MAX_RANK]; /* label of each dim */
    int64_t dim[TX_MAX_RANK];
    tx_tensor t;
} ein_term;

static int label_of(char c) {
    return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* One term "ab...c" of rank `rank` (ellipsis dims: labels 52 + their place among E). */
static bool parse_term(const char *s, size_t len, int rank, int E, ein_term *t, bool *ell) {
    int nl = 0;
    *ell = false;
    for (size_t i = 0; i < len; i++)
        nl += label_of(s[i]) >= 0;
    int e = rank < 0 ? E : rank - nl; /* dims the ellipsis covers (the output: all E) */
    t->n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || e < 0 || e > E)
                return false;
            *ell = true;
            for (int k = 0; k < e; k++)
                if (t->n < TX_MAX_RANK)
                    t->lab[t->n++] = 52 + E - e + k;
            i += 2;
        } else if (label_of(s[i]) >= 0) {
            if (t->n >= TX_MAX_RANK)
                return false;
            t->lab[t->n++] = label_of(s[i]);
        } else {
            return false;
        }
    }
    return t->n == rank || rank < 0;
}

static void permute(tx_xb *b, ein_term *t, const int *perm) {
    bool same = true;
    for (int i = 0; i < t->n; i++)
        same &= perm[i] == i;
    if (same)
        return;
    ein_term o = *t;
    for (int i = 0; i < t->n; i++) {
        o.lab[i] = t->lab[perm[i]];
        o.dim[i] = t->dim[perm[i]];
    }
    o.t = tx_xb_transpose(b, t->t, perm);
    *t = o;
}

/* Repeated labels: the diagonal as a strided slice of the two dims merged. */
static void diagonals(tx_xb *b, ein_term *t) {
    for (int i = 0; i < t->n && !b->st; i++)
        for (int j = i + 1; j < t->n && !b->st; j++) {
            if (t->lab[i] != t->lab[j])
                continue;
            if (t->dim[i] != t->dim[j]) {
                tx_xb_fail(b, TX_STATUS_SHAPE_MISMATCH, "a repeated label has two sizes");
                return;
            }
            int perm[TX_MAX_RANK], m = 0;
            for (int k = 0; k < t->n; k++)
                if (k != i && k != j)
                    perm[m++] = k;
            perm[m] = i;
            perm[m + 1] = j;
            permute(b, t, perm);
            int64_t n = t->dim[t->n - 1], s[TX_MAX_RANK];
            memcpy(s, t->dim, sizeof s);
            s[t->n - 2] = n * n;
            tx_tensor v = tx_xb_reshape(b, t->t, t->n - 1, s);
            t->t = tx_xb_slice(b, v, t->n - 2, 0, n * n, n + 1);
            t->n--;
            i = -1; /* start over: the labels moved */
            break;
        }
}

/* Sums out the dims whose labels `keep` does not mark. */
static void sum_out(tx_xb *b, ein_term *t, const bool *keep) {
    int axes[TX_MAX_RANK], na = 0, m = 0;
    ein_term o = *t;
    for (int i = 0; i < t->n; i++) {
        if (keep[t->lab[i]]) {
            o.lab[m] = t->lab[i];
            o.dim[m++] = t->dim[i];
        } else {
            axes[na++] = i;
        }
    }
    if (!na)
        return;
    o.n = m;
    o.t = tx_xb_reduce(b, TX_OP_REDUCE_SUM, t->t, axes, na, false);
    *t = o;
}

/* a ⊗ b contracted over the labels in both that `later` does not mark. */
static void combine(tx_xb *b, ein_term *a, const ein_term *c, const bool *later) {
    int pa[TX_MAX_RANK], pc[TX_MAX_RANK], nb = 0, nl = 0, nk = 0, nr = 0;
    int bl[TX_MAX_RANK], ll[TX_MAX_RANK], kl[TX_MAX_RANK], rl[TX_MAX_RANK];
    int ia[EIN_LABELS], ic[EIN_LABELS];
    for (int k = 0; k < EIN_LABELS; k++)
        ia[k] = ic[k] = -1;
    for (int i = 0; i < a->n; i++)
        ia[a->lab[i]] = i;
    for (int i = 0; i < c->n; i++)
        ic[c->lab[i]] = i;
    for (int i = 0; i < a->n; i++) {
        int l = a->lab[i];
        if (ic[l] < 0)
            ll[nl++] = l;
        else if (later[l])
            bl[nb++] = l;
        else
            kl[nk++] = l;
    }
    for (int i = 0; i < c->n; i++)
        if (ia[c->lab[i]] < 0)
            rl[nr++] = c->lab[i];
    if (nb + 2 > TX_MAX_RANK || nb + nl + nr > TX_MAX_RANK) {
        tx_xb_fail(b, TX_STATUS_RANK_TOO_HIGH, "too many labels for one matmul");
        return;
    }
    int64_t L = 1, K = 1, R = 1, sa[TX_MAX_RANK], sc[TX_MAX_RANK], so[TX_MAX_RANK];
    ein_term o = {0};
    int m = 0;
    for (int i = 0; i < nb; i++) {
        pa[i] = ia[bl[i]];
        pc[i] = ic[bl[i]];
        sa[i] = a->dim[pa[i]];
        sc[i] = c->dim[pc[i]];
        o.lab[m] = bl[i];
        o.dim[m++] = sa[i] > sc[i] ? sa[i] : sc[i];
    }
    for (int i = 0; i < nl; i++) {
        pa[nb + i] = ia[ll[i]];
        L *= a->dim[ia[ll[i]]];
        o.lab[m] = ll[i];
        o.dim[m++] = a->dim[ia[ll[i]]];
    }
    for (int i = 0; i < nk; i++) {
        pa[nb + nl + i] = ia[kl[i]];
        pc[nb + i] = ic[kl[i]];
        if (a->dim[ia[kl[i]]] != c->dim[ic[kl[i]]]) {
            tx_xb_fail(b, TX_STATUS_SHAPE_MISMATCH, "a contracted label has two sizes");
            return;
        }
        K *= a->dim[ia[kl[i]]];
    }
    for (int i = 0; i < nr; i++) {
        pc[nb + nk + i] = ic[rl[i]];
        R *= c->dim[ic[rl[i]]];
        o.lab[m] = rl[i];
        o.dim[m++] = c->dim[ic[rl[i]]];
    }
    o.n = m;
    ein_term ta = *a, tc = *c;
    permute(b, &ta, pa);
    permute(b, &tc, pc);
    sa[nb] = L, sa[nb + 1] = K, sc[nb] = K, sc[nb + 1] = R;
    tx_tensor va = tx_xb_reshape(b, ta.t, nb + 2, sa), vc = tx_xb_reshape(b, tc.t, nb + 2, sc);
    tx_tensor y = tx_xb_matmul(b, va, vc, false, (tx_tensor){0});
    memcpy(so, o.dim, sizeof so);
    o.t = tx_xb_reshape(b, y, o.n, so);
    *a = o;
}

static tx_status exec_einsum(tx_xnode *x) {
    const char *eq = tx_attr_str(x->node, "equation", NULL);
    char s[256];
    size_t n = 0;
    for (const char *p = eq; p && *p && n + 1 < sizeof s; p++)
        if (*p != ' ')
            s[n++] = *p;
    s[n] = 0;
    if (!eq || !n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "the equation attribute is missing");
    const char *arrow = strstr(s, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - s) : n;
    ein_term t[8];
    int nt = 0, E = 0, rank[8];
    if (x->n_in > 8)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 8 operands");
    for (int i = 0; i < x->n_in; i++) {
        int64_t sh[TX_MAX_RANK];
        tx_status st = tx_x_shape(x, i, &rank[i], sh);
        if (st)
            return st;
        memcpy(t[i].dim, sh, sizeof sh);
    }
    /* ellipsis rank: the most dims any operand's ellipsis covers */
    for (size_t a = 0, k = 0; a <= lhs_len; a++)
        if (a == lhs_len || s[a] == ',') {
            if (nt < x->n_in && memchr(s + k, '.', a - k)) {
                int nl = 0;
                for (size_t c = k; c < a; c++)
                    nl += label_of(s[c]) >= 0;
                if (rank[nt] - nl > E)
                    E = rank[nt] - nl;
            }
            nt++;
            k = a + 1;
        }
    if (nt != x->n_in)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "equation \"%s\" has %d operands, the node %d", eq, nt, x->n_in);
    int count[EIN_LABELS] = {0};
    bool any_ell = false;
    for (size_t a = 0, k = 0, i = 0; a <= lhs_len; a++)
        if (a == lhs_len || s[a] == ',') {
            bool ell;
            if (!parse_term(s + k, a - k, rank[i], E, &t[i], &ell))
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                                 "operand %zu's term does not fit its rank %d in \"%s\"", i,
                                 rank[i], eq);
            any_ell |= ell;
            for (int d = 0; d < t[i].n; d++)
                count[t[i].lab[d]]++;
            i++;
            k = a + 1;
        }
    ein_term out = {0};
    if (arrow) {
        bool ell;
        if (!parse_term(arrow + 2, strlen(arrow + 2), -1, E, &out, &ell))
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad output term in \"%s\"", eq);
    } else { /* implicit: ellipsis dims, then the labels seen once, in order */
        for (int k = 52; k < 52 + E && any_ell; k++)
            out.lab[out.n++] = k;
        for (int k = 26; k < 52; k++) /* uppercase sorts first */
            if (count[k] == 1)
                out.lab[out.n++] = k;
        for (int k = 0; k < 26; k++)
            if (count[k] == 1)
                out.lab[out.n++] = k;
    }
    bool in_out[EIN_LABELS] = {0};
    for (int k = 0; k < out.n; k++) {
        if (in_out[out.lab[k]] || !count[out.lab[k]])
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "an output label is repeated or in no operand in \"%s\"", eq);
        in_out[out.lab[k]] = true;
    }
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_xb b = {.x = x};
    for (int i = 0; i < nt; i++) {
        tx_tensor v = tx_xb_in(&b, i);
        if (!b.st && tx_x_dtype_of(x, v) != TX_DTYPE_FLOAT32)
            v = tx_xb_cast(&b, v, TX_DTYPE_FLOAT32);
        t[i].t = v;
        diagonals(&b, &t[i]);
        bool keep[EIN_LABELS]; /* labels the output or another operand reads */
        for (int k = 0; k < EIN_LABELS; k++)
            keep[k] = in_out[k];
        for (int j = 0; j < nt; j++)
            for (int d = 0; d < t[j].n && j != i; d++)
                keep[t[j].lab[d]] = true;
        sum_out(&b, &t[i], keep);
    }
    ein_term cur = t[0];
    for (int i = 1; i < nt && !b.st; i++) {
        bool later[EIN_LABELS];
        for (int k = 0; k < EIN_LABELS; k++)
            later[k] = in_out[k];
        for (int j = i + 1; j < nt; j++)
            for (int d = 0; d < t[j].n; d++)
                later[t[j].lab[d]] = true;
        combine(&b, &cur, &t[i], later);
    }
    sum_out(&b, &cur, in_out);
    int perm[TX_MAX_RANK];
    for (int k = 0; k < out.n && !b.st; k++) {
        perm[k] = -1;
        for (int d = 0; d < cur.n; d++)
            if (cur.lab[d] == out.lab[k])
                perm[k] = d;
        if (perm[k] < 0 || cur.n != out.n)
            tx_xb_fail(&b, TX_STATUS_INVALID_ARGUMENT,
                       "the output labels do not match the inputs'");
    }
    if (!b.st)
        permute(&b, &cur, perm);
    tx_xb_output(&b, 0, cur.t, tx_x_elem(x, 0));
    return tx_xb_free(&b);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"Einsum", exec_einsum, NULL, 0, 1, -1, 0},
};

const tx_onnx_family tx_onnx_ops_einsum = {k_ops, TX_COUNTOF(k_ops)};
