// glsl-templates/matmul.glsl: C[b] = act(A[b] x B[b] + bias), batched with
// broadcast batch dims.
//
// TX_PASS 0 computes. With TX_VEC (N % 4 == 0) a fragment owns a tile of
// TX_TM rows x 4 columns: per 4-step of K it fetches TX_TM texels of A and 4
// of B and does TX_TM mat4 x vec4 products (4 x 4 x TX_TM FMAs). TX_TM = 4 or
// 8 writes the rows to as many render targets (o0..o7, "row phase"
// textures), and TX_PASS 1 interleaves them into the row-major output. TX_TM = 1 writes
// the output directly. Without TX_VEC (N % 4 != 0) a fragment computes the 4
// consecutive output elements of its texel, one dot product each.
//
// Structural: TX_PASS, TX_VEC, TX_TM, TX_TA / TX_TB (transposed operands),
// TX_A_VEC (A rows are whole texels: !TA && K % 4 == 0), TX_A_TVEC (TA &&
// M % 4 == 0), TX_B_TVEC (TB && K % 4 == 0), TX_BIAS, TX_ACT (activation).
// Params: p_M, p_N, p_K, p_MT (row tiles per batch), p_ntex (output/tile
// texels), p_out_ws, p_a_ws, p_b_ws, p_c_ws (bias), p_bd0..3 (output batch
// dims), p_ab0..3 / p_bb0..3 (batch strides of A and B, in matrices).

#if TX_PASS == 1
// Interleave: output row m comes from row-phase target m % TX_TM.
void main() {
  TX_OUTPUT_TEXEL(t)
  int n4 = p_N >> 2;
  ivec3 bmn = tx_split3(t, p_M, n4);
  int b = bmn.x, m = bmn.y, c = bmn.z;
  int tt = (b * p_MT + m / TX_TM) * n4 + c;
  ivec2 q = tx_coord(tt, p_a_ws);
  int ph = m % TX_TM;
  vec4 v = texelFetch(u_in0, q, 0);
  if (ph == 1) v = texelFetch(u_in1, q, 0);
  if (ph == 2) v = texelFetch(u_in2, q, 0);
  if (ph == 3) v = texelFetch(u_in3, q, 0);
#if TX_TM == 8
  if (ph == 4) v = texelFetch(u_in4, q, 0);
  if (ph == 5) v = texelFetch(u_in5, q, 0);
  if (ph == 6) v = texelFetch(u_in6, q, 0);
  if (ph == 7) v = texelFetch(u_in7, q, 0);
#endif
  o0 = v;
}
#else

// Matrix offsets (in elements) of A and B for output batch b.
void tx_batch_offsets(int b, out int ao, out int bo) {
  int r = b;
  int c;
  ao = 0;
  bo = 0;
  c = r % p_bd3; r /= p_bd3; ao += c * p_ab3; bo += c * p_bb3;
  c = r % p_bd2; r /= p_bd2; ao += c * p_ab2; bo += c * p_bb2;
  c = r % p_bd1; r /= p_bd1; ao += c * p_ab1; bo += c * p_bb1;
  ao += r * p_ab0; bo += r * p_bb0;
  ao *= p_M * p_K;
  bo *= p_K * p_N;
}

float tx_a(int ao, int m, int k) {
#ifdef TX_TA
  return tx_elem(u_in0, ao + k * p_M + m, p_a_ws);
#else
  return tx_elem(u_in0, ao + m * p_K + k, p_a_ws);
#endif
}
float tx_b(int bo, int k, int n) {
#ifdef TX_TB
  return tx_elem(u_in1, bo + n * p_K + k, p_b_ws);
#else
  return tx_elem(u_in1, bo + k * p_N + n, p_b_ws);
#endif
}

vec4 tx_finish(vec4 acc, int n0) {
#ifdef TX_BIAS
#ifdef TX_VEC
  acc += tx_texel(u_in2, n0 >> 2, p_c_ws);
#endif
#endif
#ifdef TX_ACT
  acc = TX_ACT(acc);
#endif
  return acc;
}

#ifdef TX_VEC
// Row i (0..TX_TM-1) of the A block at rows m0.., columns k0..k0+3.
// Rows past M read row 0 (their results are never stored).
vec4 tx_a_row(int ao, int m, int k0, bool tail) {
  if (m >= p_M) m = 0;
#if defined(TX_A_VEC)
  return tx_texel(u_in0, (ao + m * p_K + k0) >> 2, p_a_ws);
#else
  vec4 v;
  for (int j = 0; j < 4; j++) v[j] = (!tail || k0 + j < p_K) ? tx_a(ao, m, k0 + j) : 0.0;
  return v;
#endif
}

// B block rows k0..k0+3 at columns n0..n0+3, as a mat4 whose column j is
// B[k0 + j][n0..n0+3].
mat4 tx_b_block(int bo, int n0, int k0, bool tail) {
#if defined(TX_B_TVEC)
  mat4 v;
  for (int c = 0; c < 4; c++) v[c] = tx_texel(u_in1, (bo + (n0 + c) * p_K + k0) >> 2, p_b_ws);
  return transpose(v);
#elif defined(TX_TB)
  mat4 v;
  for (int j = 0; j < 4; j++)
    for (int c = 0; c < 4; c++) v[j][c] = (!tail || k0 + j < p_K) ? tx_b(bo, k0 + j, n0 + c) : 0.0;
  return v;
#else
  mat4 v;
  int base = (bo + k0 * p_N + n0) >> 2;
  int n4 = p_N >> 2;
  for (int j = 0; j < 4; j++)
    v[j] = (!tail || k0 + j < p_K) ? tx_texel(u_in1, base + j * n4, p_b_ws) : vec4(0.0);
  return v;
#endif
}

void main() {
  TX_OUTPUT_TEXEL(t)
  ivec3 bmn = tx_split3(t, p_MT, p_N >> 2);
  int b = bmn.x, mt = bmn.y, n0 = bmn.z * 4;
  int m0 = mt * TX_TM;
  int ao, bo;
  tx_batch_offsets(b, ao, bo);
  vec4 acc[TX_TM];
  for (int i = 0; i < TX_TM; i++) acc[i] = vec4(0.0);
  int kfull = p_K & ~3;
  for (int k0 = 0; k0 < kfull; k0 += 4) {
    mat4 bm = tx_b_block(bo, n0, k0, false);
#if TX_TM >= 4 && defined(TX_A_TVEC)
    // A^T rows k0..k0+3 hold 4 consecutive m: one texel per k, transposed.
    for (int q = 0; q < TX_TM; q += 4) {
      mat4 at;
      for (int j = 0; j < 4; j++)
        at[j] = tx_texel(u_in0, (ao + (k0 + j) * p_M + m0 + q) >> 2, p_a_ws);
      mat4 a = transpose(at);
      for (int i = 0; i < 4; i++) acc[q + i] += bm * a[i];
    }
#else
    for (int i = 0; i < TX_TM; i++) acc[i] += bm * tx_a_row(ao, m0 + i, k0, false);
#endif
  }
  if (kfull < p_K) {
    mat4 bm = tx_b_block(bo, n0, kfull, true);
    for (int i = 0; i < TX_TM; i++) {
      int m = m0 + i < p_M ? m0 + i : 0;
      vec4 a;
      for (int j = 0; j < 4; j++) a[j] = kfull + j < p_K ? tx_a(ao, m, kfull + j) : 0.0;
      acc[i] += bm * a;
    }
  }
  o0 = tx_finish(acc[0], n0);
#if TX_TM >= 4
  o1 = tx_finish(acc[1], n0);
  o2 = tx_finish(acc[2], n0);
  o3 = tx_finish(acc[3], n0);
#endif
#if TX_TM == 8
  o4 = tx_finish(acc[4], n0);
  o5 = tx_finish(acc[5], n0);
  o6 = tx_finish(acc[6], n0);
  o7 = tx_finish(acc[7], n0);
#endif
}

#else  // !TX_VEC: one output texel = 4 consecutive elements

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 res;
  for (int j = 0; j < 4; j++) {
    ivec3 bmn = tx_split3(t * 4 + j, p_M, p_N);
    int b = bmn.x, m = bmn.y, n = bmn.z;
    if (b >= p_bd0 * p_bd1 * p_bd2 * p_bd3) {
      res[j] = 0.0;
      continue;
    }
    int ao, bo;
    tx_batch_offsets(b, ao, bo);
    float s = 0.0;
    for (int k = 0; k < p_K; k++) s += tx_a(ao, m, k) * tx_b(bo, k, n);
#ifdef TX_BIAS
    s += tx_elem(u_in2, n, p_c_ws);
#endif
    res[j] = s;
  }
#ifdef TX_ACT
  res = TX_ACT(res);
#endif
  o0 = res;
}
#endif
#endif
