/* .npy files (NumPy format 1.0–3.0): float32, float64, int32, int64 (also
 * bool/uint8/int8 for reading), C order only. Every header field and the data
 * length are checked against the file size. */
#ifndef TX_HOST_NPY_H
#define TX_HOST_NPY_H

#include <stddef.h>

#include "texel.h"

typedef struct tx_npy {
    int rank;
    int64_t shape[TX_MAX_RANK];
    int64_t numel;
    tx_dtype dtype; /* float32 (from f4/f8) or int32 (from i4/i8/b1/u1/i1) */
    void *data;     /* float or int32_t, malloc'd */
    char descr[8];  /* as in the file, e.g. "<f4" */
} tx_npy;

/* 0 on success; else -1 with a message in err. int64 values outside the
 * device's exact int range (|v| > 2^24) are rejected. */
int tx_npy_parse(const void *buf, size_t len, tx_npy *out, char *err, size_t err_len);
int tx_npy_read(const char *path, tx_npy *out, char *err, size_t err_len);
/* Writes data (float or int32 per dtype) as descr ("<f4", "<f8", "<i4", "<i8"). */
int tx_npy_write(const char *path, const char *descr, int rank, const int64_t *shape,
                 tx_dtype dtype, const void *data);
void tx_npy_free(tx_npy *n);

/* Reads a whole file (malloc'd); NULL on failure. */
void *tx_read_file(const char *path, size_t *len);

#endif
