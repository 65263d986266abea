// glsl-templates/matmul.glsl: C[b] = act(A[b] x B[b] + bias + residual),
// batched with broadcast batch dims.
//
// TX_PASS 0 computes. With TX_VEC (N % 4 == 0) a fragment owns a tile of
// TX_TM rows x 4 columns: per 4-step of K it fetches TX_TM texels of A and 4
// of B and does TX_TM mat4 x vec4 products (4 x 4 x TX_TM FMAs). TX_TM = 4 or
// 8 writes the rows to as many render targets (o0..o7, "row phases": the
// layers of one array texture), and TX_PASS 1 interleaves them into the
// row-major output. TX_TM = 1 writes
// the output directly. With N % 4 != 0 (N > 4), or N that may change
// between runs, the row tiles are
// padded to whole texels (TX_NPAD) and the interleave gathers each output
// texel's 4 elements; else, without TX_VEC, a fragment computes the 4
// consecutive output elements of its texel, one dot product each.
//
// Structural: TX_PASS, TX_VEC, TX_TM, TX_TA / TX_TB (transposed operands),
// TX_A_VEC (A rows are whole texels: !TA && K % 4 == 0), TX_A_TVEC (TA &&
// M % 4 == 0), TX_B_TVEC (TB && K % 4 == 0), TX_BIAS (N values, one per
// column; with TX_BIAS_ROWS M values, one per row: a 1x1 conv's), TX_ACT,
// TX_RESID (the sampler of a residual of the output's layout, added before
// TX_ACT: by the compute pass with TX_TM 1, else by the interleave, which
// then applies TX_ACT instead of the tiles).
// TX_PASS 2 is the first calls' program: small (a software rasterizer
// translates each program at its first draw, 30-80 ms for the others on
// SwiftShader), the transposes and the bias parameters (p_sam, p_sak, p_sbk,
// p_sbn: element strides of A's rows and columns and B's; p_bias 0 none, 1
// per column, 2 per row; u_in2 always declared), so that one generic program
// serves a training step's or a model's every matmul until its own steady
// program is ready.
// TX_A_2D / TX_B_2D (tiles, !TA / !TB, A_VEC / VEC, K fixed; B_2D not with
// TX_NPAD, whose B rows do not start on texels): A's and
// B's texels are read with texture() at coordinates stepped per 4 of K, not
// from element indices: SwiftShader (Subzero) compiles each index's
// shift-and-mask as written and range-checks texelFetch; 512^2 in Chromium
// ran 50 ms with index reads, 30 with stepped texture(). 1: no row of the
// texture is crossed (A: K / 4 divides A's width; B: N is a multiple of B's
// width), 2: a step may cross one (a carry). p_a_iw, p_a_ih, p_b_iw, p_b_ih:
// 1 / their widths and heights (tx_req_tex_inv); in the interleave pass,
// p_a_iw and p_a_ih are the tiles'.
// Params: p_M, p_N, p_K, p_MT (row tiles per batch), p_ntex (output/tile
// texels), p_out_ws, p_a_ws, p_b_ws, p_c_ws (bias), p_bd0..3 (output batch
// dims), p_ab0..3 / p_bb0..3 (batch strides of A and B, in matrices).

// Texels per tile row: N / 4, or with TX_NPAD (N % 4 != 0 and N > 4, or N
// may vary: any N; tiles only) (N + 3) / 4: the row tiles' rows are padded
// to whole texels, their
// last columns computed from whatever B holds past its row (each column of
// a tile reads only its own column of B) and never stored.
#ifdef TX_NPAD
#if TX_TM == 1 || defined(TX_B_2D)
#error TX_NPAD: row tiles (TX_TM 4 or 8), B read by runs
#endif
#define TX_NQ ((p_N + 3) >> 2)
#else
#define TX_NQ (p_N >> 2)
#endif

#if TX_PASS == 1
// Interleave: output row m comes from row phase m % TX_TM, layer m % TX_TM
// of the array texture u_in0 (one fetch, where an if-chain over TX_TM
// textures runs every branch's fetch on SwiftShader).
void main() {
  TX_OUTPUT_TEXEL(t)
  // TX_TM is 4 or 8 and m >= 0: shifts, not a division (SwiftShader divides)
  int tm_shift = TX_TM == 8 ? 3 : 2;
  vec2 inv = vec2(p_a_iw, p_a_ih);
#ifdef TX_NPAD
  // N not a multiple of 4 (at this run, where it may vary: a constant test
  // once the program is specialized): the output texel's 4 elements lie in
  // one row or more (in two where N > 4), each from its tile texel's lane
  if ((p_N & 3) != 0) {
    ivec3 bmn = tx_split3(t * 4, p_M, p_N);
    int b = bmn.x, m = bmn.y, n = bmn.z;
    vec4 v;
    for (int j = 0; j < 4; j++) {
      int tt = (b * p_MT + (m >> tm_shift)) * TX_NQ + (n >> 2);
      v[j] = tx_lane(tx_layer_texel_n(u_in0, tt, p_a_ws, inv, m & (TX_TM - 1)), n & 3);
      n++;
      if (n == p_N) {
        n = 0;
        m++;
        if (m == p_M) { // the next batch (past the end: lanes never stored)
          m = 0;
          b++;
        }
      }
    }
    o0 = tx_resid_act(v, t);
    return;
  }
#endif
  ivec3 bmc = tx_split3(t, p_M, TX_NQ);
  int b = bmc.x, m = bmc.y, c = bmc.z;
  int tt = (b * p_MT + (m >> tm_shift)) * TX_NQ + c;
  vec4 v = tx_layer_texel_n(u_in0, tt, p_a_ws, inv, m & (TX_TM - 1));
  // a residual, then the activation the tiles left out (TX_RESID)
  o0 = tx_resid_act(v, t);
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

#if TX_PASS == 2
// Elements e, e + st, e + 2 st, e + 3 st: one or two texels where st == 1.
vec4 tx_seq(highp sampler2D s, int e, int st, int ws) {
  if (st == 1)
    return tx_run(s, e, ws);
  return vec4(tx_elem(s, e, ws), tx_elem(s, e + st, ws), tx_elem(s, e + 2 * st, ws),
              tx_elem(s, e + 3 * st, ws));
}

// One output texel: 4 consecutive elements of y, each its own dot product.
void main() {
  TX_OUTPUT_TEXEL(t)
  int nbatch = p_bd0 * p_bd1 * p_bd2 * p_bd3;
  vec4 res = vec4(0.0);
  for (int j = 0; j < 4; j++) {
    ivec3 bmn = tx_split3(t * 4 + j, p_M, p_N);
    if (bmn.x >= nbatch)
      break;
    int ao, bo;
    tx_batch_offsets(bmn.x, ao, bo);
    int a = ao + bmn.y * p_sam, b = bo + bmn.z * p_sbn;
    float s = 0.0;
    for (int k0 = 0; k0 < p_K; k0 += 4) {
      vec4 av = tx_seq(u_in0, a + k0 * p_sak, p_sak, p_a_ws);
      vec4 bv = tx_seq(u_in1, b + k0 * p_sbk, p_sbk, p_b_ws);
      if (k0 + 4 > p_K) { // past K: zeros, whatever was read there
        bvec4 in_k = lessThan(ivec4(k0) + ivec4(0, 1, 2, 3), ivec4(p_K));
        av = mix(vec4(0.0), av, in_k);
        bv = mix(vec4(0.0), bv, in_k);
      }
      s += dot(av, bv);
    }
    if (p_bias != 0)
      s += tx_elem(u_in2, p_bias == 2 ? bmn.y : bmn.z, p_c_ws);
    res[j] = s;
  }
  o0 = tx_resid_act(res, t);
}
#else

float tx_b(int bo, int k, int n) {
#ifdef TX_TB
  return tx_elem(u_in1, bo + n * p_K + k, p_b_ws);
#else
  return tx_elem(u_in1, bo + k * p_N + n, p_b_ws);
#endif
}

vec4 tx_act(vec4 v) {
#ifdef TX_ACT
  v = TX_ACT(v);
#endif
  return v;
}

// Row m's texel at columns n0..n0+3, bias and activation applied.
vec4 tx_finish(vec4 acc, int m, int n0) {
#if defined(TX_BIAS_ROWS)
  acc += tx_elem(u_in2, min(m, p_M - 1), p_c_ws);
#elif defined(TX_BIAS) && defined(TX_VEC)
  acc += tx_texel(u_in2, n0 >> 2, p_c_ws);
#endif
  return tx_act(acc);
}

// The element index of A[m][0] (A^T: of A^T[0][m]) in batch offset ao. Rows
// past M read row 0 (their results are never stored).
int tx_a_base(int ao, int m) {
  if (m >= p_M) m = 0;
#ifdef TX_TA
  return ao + m;
#else
  return ao + m * p_K;
#endif
}

// A[m][k0..k0+3] of the row at base `a` (tx_a_base); past K reads 0 (tail).
vec4 tx_a4(int a, int k0, bool tail) {
#if defined(TX_A_VEC)
  return tx_texel(u_in0, (a + k0) >> 2, p_a_ws);
#else
  vec4 v;
  for (int j = 0; j < 4; j++) {
#ifdef TX_TA
    v[j] = (!tail || k0 + j < p_K) ? tx_elem(u_in0, a + (k0 + j) * p_M, p_a_ws) : 0.0;
#else
    v[j] = (!tail || k0 + j < p_K) ? tx_elem(u_in0, a + k0 + j, p_a_ws) : 0.0;
#endif
  }
  return v;
#endif
}

// B[k][n0..n0+3]: one texel where rows are whole texels (TX_VEC), else a
// run from two (N % 4 != 0, or N may vary).
vec4 tx_b_row(int bo, int k, int n0) {
  int e = bo + k * p_N + n0;
#ifdef TX_NPAD
  // N not a multiple of 4 (at this run, where it may vary: a constant test
  // once the program is specialized): a run
  if ((p_N & 3) != 0)
    return tx_run(u_in1, e, p_b_ws);
#endif
#ifdef TX_VEC
  return tx_texel(u_in1, e >> 2, p_b_ws);
#else
  return tx_run(u_in1, e, p_b_ws);
#endif
}

// B block rows k0..k0+3 at columns n0..n0+3, as a mat4 whose column j is
// B[k0 + j][n0..n0+3]; rows past K are 0 (tail).
mat4 tx_b_block(int bo, int n0, int k0, bool tail) {
#if defined(TX_B_TVEC)
  int base = (bo + n0 * p_K + k0) >> 2, kt = p_K >> 2;
  return transpose(mat4(tx_texel(u_in1, base, p_b_ws), tx_texel(u_in1, base + kt, p_b_ws),
                        tx_texel(u_in1, base + 2 * kt, p_b_ws), tx_texel(u_in1, base + 3 * kt, p_b_ws)));
#elif defined(TX_TB)
  if (tail) {
    mat4 v;
    for (int j = 0; j < 4; j++)
      for (int c = 0; c < 4; c++) v[j][c] = k0 + j < p_K ? tx_b(bo, k0 + j, n0 + c) : 0.0;
    return v;
  }
  // B^T's rows n0..n0+3 at k0..k0+3: a run (one or two texels) each
  int e = bo + n0 * p_K + k0;
  return transpose(mat4(tx_run(u_in1, e, p_b_ws), tx_run(u_in1, e + p_K, p_b_ws),
                        tx_run(u_in1, e + 2 * p_K, p_b_ws), tx_run(u_in1, e + 3 * p_K, p_b_ws)));
#else
  if (tail) {
    mat4 v;
    for (int j = 0; j < 4; j++) v[j] = k0 + j < p_K ? tx_b_row(bo, k0 + j, n0) : vec4(0.0);
    return v;
  }
  return mat4(tx_b_row(bo, k0, n0), tx_b_row(bo, k0 + 1, n0), tx_b_row(bo, k0 + 2, n0),
              tx_b_row(bo, k0 + 3, n0));
#endif
}

#ifdef TX_VEC
// The tile's rows are spelled out, an accumulator (c0..c7) and an A base
// (a0..a7) each, never an array indexed in a loop: SwiftShader keeps such an
// array in memory, and the 8-row kernel ran at half the speed (1024^2 in
// Chromium: 990 vs 470 ms). GLSL ES has no token pasting, hence the lists.
#if TX_TM == 8
#define TX_ROWS(R) R(c0, a0, 0) R(c1, a1, 1) R(c2, a2, 2) R(c3, a3, 3) R(c4, a4, 4) R(c5, a5, 5) R(c6, a6, 6) R(c7, a7, 7)
#elif TX_TM == 4
#define TX_ROWS(R) R(c0, a0, 0) R(c1, a1, 1) R(c2, a2, 2) R(c3, a3, 3)
#else
#define TX_ROWS(R) R(c0, a0, 0)
#endif
#if defined(TX_A_2D) || defined(TX_B_2D)
// Texel t of a texture of width 2^ws = 1 / iw: (u, y + 0.5), u normalized, y
// in texels.
vec2 tx_uy(int t, int ws, float iw) {
  ivec2 p = tx_coord(t, ws);
  return vec2((float(p.x) + 0.5) * iw, float(p.y) + 0.5);
}
// Steps (u, y) by d (d.x normalized, d.y whole rows): with a carry (mode 2)
// u wraps past the row's end onto the next row.
#define TX_ADV(P, D, MODE) P += D; if (MODE == 2) { float c_ = step(1.0, P.x); P += vec2(-c_, c_); }
#endif

#ifdef TX_A_2D
// A row's texel (u, y): read, then stepped to the next 4 of K
#define TX_DECL(C, A, I) vec4 C = vec4(0.0); vec2 A = tx_uy(tx_a_base(ao, m0 + I) >> 2, p_a_ws, p_a_iw);
#define TX_STEP(C, A, I) C += bm * texture(u_in0, vec2(A.x, A.y * p_a_ih)); TX_ADV(A, a_d, TX_A_2D)
#define TX_TAIL(C, A, I)
#else
#define TX_DECL(C, A, I) vec4 C = vec4(0.0); int A = tx_a_base(ao, m0 + I);
#define TX_STEP(C, A, I) C += bm * tx_a4(A, k0, false);
#define TX_TAIL(C, A, I) C += bm * tx_a4(A, kfull, true);
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
  ivec3 bmn = tx_split3(t, p_MT, TX_NQ);
  int b = bmn.x, mt = bmn.y, n0 = bmn.z * 4;
  int m0 = mt * TX_TM;
  int ao, bo;
  tx_batch_offsets(b, ao, bo);
#ifdef TX_A_2D
  vec2 a_d = vec2(p_a_iw, 0.0);
#endif
#ifdef TX_B_2D
  // B's rows k0 .. k0 + 3 at column n0; 4 rows of K are N texels further
  int lb = (bo + n0) >> 2, nq = p_N >> 2;
  vec2 b0 = tx_uy(lb, p_b_ws, p_b_iw), b1 = tx_uy(lb + nq, p_b_ws, p_b_iw),
       b2 = tx_uy(lb + 2 * nq, p_b_ws, p_b_iw), b3 = tx_uy(lb + 3 * nq, p_b_ws, p_b_iw);
  vec2 b_d = vec2(float(p_N & ((1 << p_b_ws) - 1)) * p_b_iw, float(p_N >> p_b_ws));
#endif
  TX_ROWS(TX_DECL)
  int kfull = p_K & ~3;
  for (int k0 = 0; k0 < kfull; k0 += 4) {
#ifdef TX_B_2D
    mat4 bm = mat4(texture(u_in1, vec2(b0.x, b0.y * p_b_ih)), texture(u_in1, vec2(b1.x, b1.y * p_b_ih)),
                   texture(u_in1, vec2(b2.x, b2.y * p_b_ih)), texture(u_in1, vec2(b3.x, b3.y * p_b_ih)));
    TX_ADV(b0, b_d, TX_B_2D)
    TX_ADV(b1, b_d, TX_B_2D)
    TX_ADV(b2, b_d, TX_B_2D)
    TX_ADV(b3, b_d, TX_B_2D)
#else
    mat4 bm = tx_b_block(bo, n0, k0, false);
#endif
#if defined(TX_A_TVEC)
#if TX_TM != 4 && TX_TM != 8
#error TX_A_TVEC fills 4-row blocks
#endif
    // A^T rows k0..k0+3 hold 4 consecutive m: one texel per k, transposed
    // (8 rows: the next texel too; past M it holds the next k's, whose
    // results are never stored).
    int at = (ao + k0 * p_M + m0) >> 2, mq = p_M >> 2;
    mat4 a = transpose(mat4(tx_texel(u_in0, at, p_a_ws), tx_texel(u_in0, at + mq, p_a_ws),
                            tx_texel(u_in0, at + 2 * mq, p_a_ws), tx_texel(u_in0, at + 3 * mq, p_a_ws)));
    c0 += bm * a[0];
    c1 += bm * a[1];
    c2 += bm * a[2];
    c3 += bm * a[3];
#if TX_TM == 8
    a = transpose(mat4(tx_texel(u_in0, at + 1, p_a_ws), tx_texel(u_in0, at + 1 + mq, p_a_ws),
                       tx_texel(u_in0, at + 1 + 2 * mq, p_a_ws), tx_texel(u_in0, at + 1 + 3 * mq, p_a_ws)));
    c4 += bm * a[0];
    c5 += bm * a[1];
    c6 += bm * a[2];
    c7 += bm * a[3];
#endif
#else
    TX_ROWS(TX_STEP)
#endif
  }
  if (kfull < p_K) {
    mat4 bm = tx_b_block(bo, n0, kfull, true);
    TX_ROWS(TX_TAIL)
  }
#if defined(TX_RESID) && TX_TM == 1
#ifdef TX_RESID_N
  if (t < p_r_ntex) // a residual covering y's first texels only
#endif
  c0 += texelFetch(TX_RESID, tx_coord(t, p_r_ws), 0); // output texel t
#endif
#if TX_TM == 1
  o0 = tx_finish(c0, m0, n0);
#else
  // The tile's bias, fetched once, not per row: each fetch site is code
  // SwiftShader translates at the first draw (8 rows' tx_finish made the
  // 1x1 conv tile's first draw 69-78 ms, this 53-57). m0 is a multiple of 4,
  // so rows m0 .. m0 + 3 are one texel of a row bias; rows past M read the
  // last texel (their results are never stored).
#if defined(TX_BIAS_ROWS)
  int bt = m0 >> 2, bl = (p_M - 1) >> 2;
  vec4 r0 = tx_texel(u_in2, bt, p_c_ws);
  o0 = tx_act(c0 + r0.x);
  o1 = tx_act(c1 + r0.y);
  o2 = tx_act(c2 + r0.z);
  o3 = tx_act(c3 + r0.w);
#if TX_TM == 8
  vec4 r1 = tx_texel(u_in2, min(bt + 1, bl), p_c_ws);
  o4 = tx_act(c4 + r1.x);
  o5 = tx_act(c5 + r1.y);
  o6 = tx_act(c6 + r1.z);
  o7 = tx_act(c7 + r1.w);
#endif
#else
#if defined(TX_BIAS)
  vec4 cb = tx_texel(u_in2, n0 >> 2, p_c_ws); // one column bias for every row
#else
  vec4 cb = vec4(0.0);
#endif
  o0 = tx_act(c0 + cb);
  o1 = tx_act(c1 + cb);
  o2 = tx_act(c2 + cb);
  o3 = tx_act(c3 + cb);
#if TX_TM == 8
  o4 = tx_act(c4 + cb);
  o5 = tx_act(c5 + cb);
  o6 = tx_act(c6 + cb);
  o7 = tx_act(c7 + cb);
#endif
#endif
#endif
}

#else  // !TX_VEC: one output texel = 4 consecutive elements of y

void main() {
  TX_OUTPUT_TEXEL(t)
  ivec3 bmn = tx_split3(t * 4, p_M, p_N);
  int b = bmn.x, m = bmn.y, n0 = bmn.z;
  int nbatch = p_bd0 * p_bd1 * p_bd2 * p_bd3;
  int kfull = p_K & ~3;
  int ao, bo;
  tx_batch_offsets(b, ao, bo);
  vec4 res = vec4(0.0);
  if (n0 + 3 < p_N && b < nbatch) {
    // 4 columns of one row: a 1 x 4 tile, B's rows read as unaligned runs
    int a = tx_a_base(ao, m);
    for (int k0 = 0; k0 < kfull; k0 += 4) res += tx_b_block(bo, n0, k0, false) * tx_a4(a, k0, false);
    if (kfull < p_K)
      res += tx_b_block(bo, n0, kfull, true) * tx_a4(a, kfull, true);
#if defined(TX_BIAS_ROWS)
    res += tx_elem(u_in2, m, p_c_ws);
#elif defined(TX_BIAS)
    res += tx_run(u_in2, n0, p_c_ws);
#endif
  } else if (p_N == 1 && m + 3 < p_M && b < nbatch) {
    // a matrix-vector product: rows m .. m + 3 of one batch, B's one column a run
    int a0 = tx_a_base(ao, m), a1 = tx_a_base(ao, m + 1), a2 = tx_a_base(ao, m + 2), a3 = tx_a_base(ao, m + 3);
    for (int k0 = 0; k0 < p_K; k0 += 4) {
      bool tail = k0 + 4 > p_K;
      vec4 bv = tx_run(u_in1, bo + k0, p_b_ws);
      if (tail)
        for (int i = 0; i < 4; i++) bv[i] = k0 + i < p_K ? bv[i] : 0.0;
      res += vec4(dot(tx_a4(a0, k0, tail), bv), dot(tx_a4(a1, k0, tail), bv),
                  dot(tx_a4(a2, k0, tail), bv), dot(tx_a4(a3, k0, tail), bv));
    }
#if defined(TX_BIAS_ROWS)
    res += tx_run(u_in2, m, p_c_ws);
#elif defined(TX_BIAS)
    res += tx_elem(u_in2, 0, p_c_ws);
#endif
  } else {
    // the texel's elements lie in several rows (or batches, or past the end)
    for (int j = 0; j < 4; j++) {
      bmn = tx_split3(t * 4 + j, p_M, p_N);
      if (bmn.x >= nbatch)
        continue;
      tx_batch_offsets(bmn.x, ao, bo);
      int a = tx_a_base(ao, bmn.y), n = bmn.z;
      float s = 0.0;
      for (int k0 = 0; k0 < p_K; k0 += 4) {
        vec4 bv;
        for (int i = 0; i < 4; i++) bv[i] = k0 + i < p_K ? tx_b(bo, k0 + i, n) : 0.0;
        s += dot(tx_a4(a, k0, k0 + 4 > p_K), bv);
      }
#if defined(TX_BIAS_ROWS)
      s += tx_elem(u_in2, bmn.y, p_c_ws);
#elif defined(TX_BIAS)
      s += tx_elem(u_in2, n, p_c_ws);
#endif
      res[j] = s;
    }
  }
  o0 = tx_resid_act(res, t);
}
#endif
#endif
#endif
