/* Tensors larger than one texture: the storage in engine/tensor.c, what the
 * op fronts share in engine/split.c, the fronts' split paths in
 * engine/ops/split.c.
 *
 * A GPU tensor with more RGBA texels than one MAX_TEXTURE_SIZE² texture holds
 * is stored split: its storage holds no texture but parts, ordinary internal
 * GPU tensors that each hold a consecutive range of the row-major elements
 * (a whole number of dim-0 rows each where a row fits one texture). Reads,
 * writes, tx_tensor_to and reshape views work on it like on any tensor; the
 * op fronts of gather, matmul, the elementwise families (unary, clip,
 * activations, cast, binary), transpose, slice and concat run such a tensor
 * as ops on its parts (per-part ops joined again along dim 0, see
 * ops/split.c); every other op refuses it with TX_STATUS_TOO_LARGE naming
 * the op. */
#ifndef TX_SPLIT_H
#define TX_SPLIT_H

#include "device.h"

/* ---- helpers for the op fronts (engine/split.c) ---- */

/* Whether t is a live split tensor. */
bool tx_is_split(tx_ctx *ctx, tx_tensor t);
/* Whether a tensor of numel elements on dev needs more than one texture. */
bool tx_needs_split(const tx_ctx *ctx, tx_device dev, int64_t numel);
/* Split t's part count, and part p as a view shaped [rows, t.shape[1:]]
 * covering dim-0 rows [*r0, *r1); TOO_LARGE when the part does not hold
 * whole rows (a reshaped view of a split tensor). */
int tx_split_parts(tx_ctx *ctx, tx_tensor t);
tx_status tx_split_part_rows(tx_ctx *ctx, const char *op, tx_tensor t, int p, int64_t *r0,
                             int64_t *r1, tx_tensor *view);
/* Rows [r0, r1) of t's dim 0 (split or not) as a new tensor, split where
 * it is larger than a texture. */
tx_status tx_rows_of(tx_ctx *ctx, const char *op, tx_tensor t, int64_t r0, int64_t r1,
                     tx_tensor *out);
/* Joins n tensors along dim 0 (equal other dims, one dtype) and destroys
 * them: one tensor where it fits a texture, else a split tensor whose parts
 * are the pieces themselves. */
tx_status tx_join_rows(tx_ctx *ctx, const char *op, tx_tensor *pieces, int n, tx_tensor *out);
/* tx_join_rows when st is OK; else destroys the pieces and returns st. */
tx_status tx_join_or_drop(tx_ctx *ctx, const char *op, tx_status st, tx_tensor *pieces, int n,
                          tx_tensor *out);

/* ---- op fronts on split tensors (engine/ops/split.c) ---- */

tx_status tx_split_unary(tx_ctx *ctx, tx_op op, tx_tensor x, float lo, float hi, tx_dtype to,
                         tx_tensor *out);
tx_status tx_split_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out);
tx_status tx_split_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *d,
                          tx_tensor *out);
tx_status tx_split_gather(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out);
/* perm complete (rank entries, checked). */
tx_status tx_split_transpose(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out);
tx_status tx_split_slice(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out);
/* Also for inputs that each fit but whose result does not. */
tx_status tx_split_concat(tx_ctx *ctx, const tx_tensor *xs, int n, int axis, tx_tensor *out);

#endif
