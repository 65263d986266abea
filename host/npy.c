#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *tx_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

void tx_npy_free(tx_npy *n) {
    free(n->data);
    n->data = NULL;
}

/* Finds 'key': in the header dict and returns a pointer past the colon. */
static const char *dict_value(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p)
        return NULL;
    p = strchr(p + strlen(pat), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int failf(char *err, size_t err_len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

int tx_npy_parse(const void *buf, size_t len, tx_npy *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return failf(err, err_len, "not a .npy file (bad magic)");
    int major = b[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return failf(err, err_len, "truncated .npy header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        off = 12;
    } else {
        return failf(err, err_len, ".npy version %d is unsupported", major);
    }
    if (hlen > len - off || hlen > 65536)
        return failf(err, err_len, "truncated .npy header (%zu bytes declared)", hlen);
    char *h = malloc(hlen + 1);
    if (!h)
        return failf(err, err_len, "out of memory");
    memcpy(h, b + off, hlen);
    h[hlen] = 0;
    off += hlen;
    int rc = -1;
    const char *d = dict_value(h, "descr"), *fo = dict_value(h, "fortran_order"),
               *sh = dict_value(h, "shape");
    if (!d || !fo || !sh || *d != '\'' || *sh != '(') {
        failf(err, err_len, "malformed .npy header: %s", h);
        goto done;
    }
    if (strncmp(fo, "False", 5) != 0) {
        failf(err, err_len, ".npy in Fortran order is unsupported");
        goto done;
    }
    size_t dl = strcspn(d + 1, "'");
    if (dl >= sizeof out->descr) {
        failf(err, err_len, "unsupported .npy dtype");
        goto done;
    }
    memcpy(out->descr, d + 1, dl);
    out->descr[dl] = 0;
    static const struct {
        const char *descr;
        int width;
        tx_dtype dt;
    } k_types[] = {{"<f4", 4, TX_DTYPE_FLOAT32}, {"<f8", 8, TX_DTYPE_FLOAT32},
                   {"<i4", 4, TX_DTYPE_INT32},   {"<i8", 8, TX_DTYPE_INT32},
                   {"|b1", 1, TX_DTYPE_INT32},   {"|u1", 1, TX_DTYPE_INT32},
                   {"|i1", 1, TX_DTYPE_INT32}};
    int ti = -1;
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (strcmp(out->descr, k_types[i].descr) == 0)
            ti = (int)i;
    if (ti < 0) {
        failf(err, err_len, ".npy dtype '%s' is unsupported (want <f4, <f8, <i4, <i8)", out->descr);
        goto done;
    }
    const char *p = sh + 1;
    int64_t numel = 1;
    while (1) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) {
            failf(err, err_len, "malformed .npy shape");
            goto done;
        }
        if (out->rank == TX_MAX_RANK) {
            failf(err, err_len, ".npy rank above %d", TX_MAX_RANK);
            goto done;
        }
        if (v > 0 && numel > ((int64_t)1 << 40) / v) {
            failf(err, err_len, ".npy shape too large");
            goto done;
        }
        out->shape[out->rank++] = v;
        numel *= v;
        p = end;
    }
    int w = k_types[ti].width;
    if ((uint64_t)numel * (uint64_t)w > len - off) {
        failf(err, err_len, ".npy data truncated: %lld elements of %d bytes need %lld bytes, %zu present",
             (long long)numel, w, (long long)numel * w, len - off);
        goto done;
    }
    out->numel = numel;
    out->dtype = k_types[ti].dt;
    out->data = malloc((size_t)(numel ? numel : 1) * 4);
    if (!out->data) {
        failf(err, err_len, "out of memory");
        goto done;
    }
    const unsigned char *src = b + off;
    for (int64_t i = 0; i < numel; i++) {
        const unsigned char *q = src + i * w;
        uint64_t u = 0;
        for (int k = w - 1; k >= 0; k--)
            u = u << 8 | q[k];
        if (out->dtype == TX_DTYPE_FLOAT32) {
            float f;
            if (w == 4) {
                uint32_t x = (uint32_t)u;
                memcpy(&f, &x, 4);
            } else {
                double dd;
                memcpy(&dd, &u, 8);
                f = (float)dd;
            }
            ((float *)out->data)[i] = f;
        } else {
            int64_t v = w == 8 ? (int64_t)u : w == 4 ? (int32_t)u
                                          : strcmp(out->descr, "|i1") == 0 ? (int8_t)u
                                                                           : (int64_t)u;
            if (v > (1 << 24) || v < -(1 << 24)) {
                failf(err, err_len, ".npy integer %lld at %lld exceeds the device's exact range (2^24)",
                     (long long)v, (long long)i);
                tx_npy_free(out);
                goto done;
            }
            ((int32_t *)out->data)[i] = (int32_t)v;
        }
    }
    rc = 0;
done:
    free(h);
    return rc;
}

int tx_npy_read(const char *path, tx_npy *out, char *err, size_t err_len) {
    size_t len;
    void *buf = tx_read_file(path, &len);
    if (!buf) {
        memset(out, 0, sizeof *out);
        return failf(err, err_len, "cannot read %s", path);
    }
    int rc = tx_npy_parse(buf, len, out, err, err_len);
    free(buf);
    return rc;
}

int tx_npy_write(const char *path, const char *descr, int rank, const int64_t *shape,
                 tx_dtype dtype, const void *data) {
    int w = descr[2] == '8' ? 8 : 4;
    bool isf = descr[1] == 'f';
    char h[256];
    int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        n += snprintf(h + n, sizeof h - (size_t)n, "%lld,%s", (long long)shape[i],
                      i + 1 < rank ? " " : "");
        numel *= shape[i];
    }
    n += snprintf(h + n, sizeof h - (size_t)n, "), }");
    /* pad so that data starts at a multiple of 64, header ends with \n */
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int hl = n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255),
                             (unsigned char)(hl >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(h, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    for (int64_t i = 0; i < numel; i++) {
        double v = dtype == TX_DTYPE_FLOAT32 ? ((const float *)data)[i]
                                             : ((const int32_t *)data)[i];
        unsigned char b[8];
        uint64_t u;
        if (isf && w == 4) {
            float fv = (float)v;
            uint32_t x;
            memcpy(&x, &fv, 4);
            u = x;
        } else if (isf) {
            memcpy(&u, &v, 8);
        } else {
            u = (uint64_t)(int64_t)v;
        }
        for (int k = 0; k < w; k++)
            b[k] = (unsigned char)(u >> (8 * k));
        fwrite(b, 1, (size_t)w, f);
    }
    return fclose(f) == 0 ? 0 : -1;
}
