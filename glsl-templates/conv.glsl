// glsl-templates/conv.glsl: Conv and ConvTranspose (NCHW), four passes.
//
// A fragment of the compute pass owns a tile of 4 output channels x 8 (or 4)
// consecutive output x positions, so every input texel it fetches feeds 16
// FMAs (one mat4 x vec4) and every weight texel 8 positions (ANCHORS.md: work
// per fragment is the lever). The passes exist to make that inner loop nothing
// but fetches and FMAs:
//
// TX_PASS 0 packs the input: texel ((n * p_NB + b) * p_Hp + yy) * p_Wp + xx
//   holds 4 input channels at one position of the zero-padded input, so the
//   compute loop has no bounds checks. Dense: b = g * p_IB + ib, lanes are
//   group g's channels ib*4 .. ib*4+3 (0 past p_Cg). TX_DW (depthwise): lanes
//   are channels 4b .. 4b+3 (its own program, as in the unpack pass: the
//   dense code would cost a division by a uniform per texel, which software
//   rasterizers run per lane; PP-OCRv4 rec's first result on SwiftShader
//   1.7-1.8 s -> 2.1 s that way). The padded position maps to the source by
//   u = yy - p_pt (p_pt may be negative: cropping) and, for ConvTranspose
//   run as a conv over the stride-upsampled input, iy = u / p_uh when
//   u % p_uh == 0.
// TX_PASS 1 packs the weights. Dense: texel
//   ((((blk * p_IB + ib) * p_kh + ky) * p_kw + kx) * 4 + j, blk = g * p_OB + ob,
//   lane i = w[out ob*4+i of group g][in ib*4+j][ky][kx], so the 4 texels of
//   a tap are the columns of the mat4 that maps 4 input to 4 output channels.
//   TX_DW: texel (cb * p_kh + ky) * p_kw + kx, lane i = w[4cb+i][0][ky][kx].
//   TX_TRANSPOSE reads ConvTranspose weights [C, Mg, kh, kw], flipped.
//   TX_SWAP_NC (tx_conv_nc_swapped, group 1, never TX_DW): passes 0 and 1
//   read x stored as [C, N, H, W] and w as [Cg, M, kh, kw], and pass 3
//   writes y as [M, N, p_yh, p_yw], the first p_yh x p_yw positions: a conv's
//   weight gradient without draws of its own for the transposes and the cut.
// TX_PASS 2 computes tile ((n * p_NOB + bt) * p_Ho + y) * p_XT + xt: TX_TC
//   (4 or 8: 1 or 2 blocks from blk = bt * TX_TC / 4) output channels at TX_TP
//   (4 or 8) positions from x0 = xt * TX_TP. Render target i holds channel
//   i % 4 of block blk + i / 4 (TX_TC 8) at x0 + 4 * (i / 4) .. +3 (TX_TP 8)
//   (a transposed tile), with bias (TX_BIAS; TX_BIAS_VEC where a block's
//   first channel is a multiple of 4: depthwise, or Mg % 4 == 0) and
//   activation (TX_ACT) fused (with a residual, TX_RESID, the activation
//   moves to the unpack pass).
//   TX_TC 8 is for group-1 1x1 convs: no window overlap for TX_TP 8 to
//   exploit, and the unpack's target then follows the channel. TX_SLIDE
//   (stride == dilation along x): the positions' input windows overlap, so
//   per kernel row it fetches TX_TP + kw texels instead of TX_TP * kw.
// TX_PASS 3 unpacks the tiles (the compute pass's render targets are the
//   layers of one array texture) into the row-major NCHW output. The tile
//   is a parameter here (p_tp, p_tc: one generic program for every tile,
//   whose few integer steps the specialized one folds). TX_ALIGNED (Wo % 4
//   == 0, not TX_SWAP_NC): an output texel is one tile texel, one fetch (a
//   define: llvmpipe runs both sides of a branch on a uniform, and the
//   unaligned side's four lookups made OCR det's steady runs 15-25% slower).
//   TX_RESID (the sampler of a residual of y's shape) adds it, then TX_ACT.
// TX_PASS 4 (TX_DROW) is a depthwise conv straight from the NCHW input to the
//   NCHW output, no pack or unpack pass (W % 4 == 0, Wo % 4 == 0, kw <= 7,
//   stride 1 or 2 along x, no dilation): a fragment owns one output texel,
//   positions x0..x0+3 of one row of one channel; kw, the x stride and
//   (-pl) mod 4 are structural (TX_KW, TX_SW, TX_OFF). Per kernel row it fetches
//   the TX_WT input texels that hold the row's window and the row's taps,
//   packed by TX_PASS 1 with TX_DROW (texels (c * kh + ky) * kt + part hold
//   w[c][0][ky][4 part ..], kt = ceil(kw / 4)): 12 fetches per output texel for 3x3 at stride 1 or 2,
//   where the pack / compute / unpack passes spend ~15 and ~31. TX_RESID:
//   a residual's texel added before TX_ACT.
// TX_PASS 5 is a dense conv of one position (H = W = Ho = Wo = 1, a 1x1
//   kernel, no pads: squeeze-excite after a global pool) straight from NCHW:
//   a fragment owns 4 consecutive outputs n * M + m, each w[m] . x[n] (+ b),
//   4 channels a fetch where C % 4 == 0 (TX_C4), then TX_RESID, TX_ACT.
// Passes 0, 4 and 5 apply x_affine (TX_XA, below) to what they read of x.
// TX_PASS 6 is a ConvTranspose with 2x2 kernels at stride 2, no begin pads,
//   group 1, W even, straight from NCHW: a fragment owns 4 outputs of a row,
//   (oy, 4 xt .. +3), from input positions 2 xt, 2 xt + 1 of row oy / 2 (one
//   texel per channel) and the taps w[c][m][oy % 2][0..1] (one texel per
//   (c, m) of the weights as stored, [C, M, 2, 2]).

#define TX_NT (TX_TP * TX_TC / 4) // render targets of the compute pass

// TX_XAFF (tx_conv_desc.x_affine; passes 0, 4 and 5): x is read as
// x * p_xs + p_xb wherever it is read inside x; the padding stays 0.
#ifdef TX_XAFF
#define TX_XA(V) ((V) * p_xs + p_xb)
#else
#define TX_XA(V) (V)
#endif

#if TX_PASS == 0

void main() {
  TX_OUTPUT_TEXEL(t)
  int xx = t % p_Wp;
  int r = t / p_Wp;
  int yy = r % p_Hp;
  r /= p_Hp;
  int b = r % p_NB;
  int n = r / p_NB;
  int uy = yy - p_pt, ux = xx - p_pl;
  vec4 v = vec4(0.0);
  // GLSL leaves % of negatives undefined: test the sign first (&& short-circuits).
  if (uy >= 0 && ux >= 0 && uy % p_uh == 0 && ux % p_uw == 0) {
    int iy = uy / p_uh, ix = ux / p_uw;
    if (iy < p_H && ix < p_W) {
#ifdef TX_DW
      int c0 = b * 4;
      int cend = p_C;
#else
      int g = b / p_IB;
      int c0 = g * p_Cg + (b - g * p_IB) * 4;
      int cend = g * p_Cg + p_Cg;
#endif
      int plane = p_H * p_W;
#ifdef TX_SWAP_NC // x stored as [C, N, H, W]
      int base = (c0 * p_N + n) * plane + iy * p_W + ix, cs = p_N * plane;
#else
      int base = (n * p_C + c0) * plane + iy * p_W + ix, cs = plane;
#endif
      for (int j = 0; j < 4; j++)
        if (c0 + j < cend) v[j] = TX_XA(tx_elem_n(u_in0, base + j * cs, p_in_ws, vec2(p_in_iw, p_in_ih)));
    }
  }
  o0 = v;
}

#elif TX_PASS == 1

// Weight of output channel `co` (within group g) from input channel `ci`
// (within the group) at tap (ky, kx) of the conv being computed.
float tx_w(int g, int co, int ci, int ky, int kx) {
#ifdef TX_TRANSPOSE
  int i = (((g * p_Cg + ci) * p_Mg + co) * p_kh + (p_kh - 1 - ky)) * p_kw + (p_kw - 1 - kx);
#elif defined(TX_SWAP_NC) // w stored as [Cg, M, kh, kw], group 1
  int i = ((ci * p_M + co) * p_kh + ky) * p_kw + kx;
#else
  int i = (((g * p_Mg + co) * p_Cg + ci) * p_kh + ky) * p_kw + kx;
#endif
  return tx_elem(u_in0, i, p_in_ws);
}

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 v = vec4(0.0);
#if defined(TX_DROW)
  int kt = (p_kw + 3) >> 2; // texels per kernel row
  int part = t % kt, r = t / kt;
  int ky = r % p_kh, c = r / p_kh;
  for (int i = 0; i < 4; i++)
    if (part * 4 + i < p_kw) v[i] = tx_w(c, 0, 0, ky, part * 4 + i);
#elif defined(TX_DW)
  int kx = t % p_kw;
  int r = t / p_kw;
  int ky = r % p_kh;
  int cb = r / p_kh;
  for (int i = 0; i < 4; i++)
    if (cb * 4 + i < p_M) v[i] = tx_w(cb * 4 + i, 0, 0, ky, kx);
#else
  int j = t & 3;
  int r = t >> 2;
  int kx = r % p_kw;
  r /= p_kw;
  int ky = r % p_kh;
  r /= p_kh;
  int ib = r % p_IB;
  int blk = r / p_IB;
  int g = blk / p_OB;
  int ob = blk - g * p_OB;
  int ci = ib * 4 + j;
  if (ci < p_Cg && g < p_G) // TX_TC 8 pads the block list to an even length
    for (int i = 0; i < 4; i++)
      if (ob * 4 + i < p_Mg) v[i] = tx_w(g, ob * 4 + i, ci, ky, kx);
#endif
  o0 = v;
}

#elif TX_PASS == 2

vec4 tx_x(int t) { return tx_texel_n(u_in0, t, p_x_ws, vec2(p_x_iw, p_x_ih)); }
vec4 tx_wt(int t) { return tx_texel_n(u_in1, t, p_w_ws, vec2(p_w_iw, p_w_ih)); }
// Declares a0 .. a<TX_TP - 1>: the input texels of the tile's TX_TP positions,
// p_sw apart from texel B (one line: portable preprocessors).
#if TX_TP == 8
#define CV_LOAD_A(B) vec4 a0 = tx_x(B), a1 = tx_x((B) + p_sw), a2 = tx_x((B) + 2 * p_sw), a3 = tx_x((B) + 3 * p_sw), a4 = tx_x((B) + 4 * p_sw), a5 = tx_x((B) + 5 * p_sw), a6 = tx_x((B) + 6 * p_sw), a7 = tx_x((B) + 7 * p_sw);
#else
#define CV_LOAD_A(B) vec4 a0 = tx_x(B), a1 = tx_x((B) + p_sw), a2 = tx_x((B) + 2 * p_sw), a3 = tx_x((B) + 3 * p_sw);
#endif

vec4 tx_bias(int blk) {
  vec4 bias = vec4(0.0);
#ifdef TX_BIAS
#ifdef TX_DW
  int co0 = blk * 4, cend = p_M;
#else
  int g = blk / p_OB;
  int co0 = g * p_Mg + (blk - g * p_OB) * 4, cend = g * p_Mg + p_Mg;
#endif
#ifdef TX_BIAS_VEC
  // co0 % 4 == 0: the block's biases are one texel (one fetch site for
  // SwiftShader to translate, not 4); lanes past cend are selected away
  bias = mix(tx_texel(u_in2, co0 >> 2, p_b_ws), vec4(0.0),
             greaterThanEqual(ivec4(co0) + ivec4(0, 1, 2, 3), ivec4(cend)));
#else
  for (int i = 0; i < 4; i++)
    if (co0 + i < cend) bias[i] = tx_elem(u_in2, co0 + i, p_b_ws);
#endif
#endif
  return bias;
}

vec4 tx_out(vec4 acc, vec4 bias) {
  acc += bias;
#ifdef TX_ACT
  acc = TX_ACT(acc);
#endif
  return acc;
}

void main() {
  TX_OUTPUT_TEXEL(t)
  int xt = t % p_XT;
  int r = t / p_XT;
  int y = r % p_Ho;
  r /= p_Ho;
  int blk = (r % p_NOB) * (TX_TC / 4);
  int n = r / p_NOB;
  int xs = xt * TX_TP * p_sw;
  int rowstep = p_dh * p_Wp;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
#if TX_NT == 8
  vec4 acc4 = vec4(0.0), acc5 = vec4(0.0), acc6 = vec4(0.0), acc7 = vec4(0.0);
#endif
#ifdef TX_DW
  int nib = 1;
#else
  int nib = p_IB;
  int g = blk / p_OB;
#endif
  for (int ib = 0; ib < nib; ib++) {
#ifdef TX_DW
    int rb = ((n * p_NB + blk) * p_Hp + y * p_sh) * p_Wp + xs;
    int wb = blk * p_kh * p_kw;
#else
    int rb = ((n * p_NB + g * p_IB + ib) * p_Hp + y * p_sh) * p_Wp + xs;
    int wb = (blk * p_IB + ib) * p_kh * p_kw * 4;
#endif
    for (int ky = 0; ky < p_kh; ky++, rb += rowstep) {
#ifdef TX_TRANSPOSE
      // A row of the inserted zeros (or of the padding) adds nothing: a
      // stride-s ConvTranspose skips all but every s-th kernel row.
      int u = y + ky * p_dh - p_pt;
      if (u < 0 || u % p_uh != 0 || u >= p_H * p_uh) {
#ifdef TX_DW
        wb += p_kw;
#else
        wb += p_kw * 4;
#endif
        continue;
      }
#endif
#ifdef TX_SLIDE
      CV_LOAD_A(rb)
#endif
      for (int kx = 0; kx < p_kw; kx++) {
#ifndef TX_SLIDE
        int xb = rb + kx * p_dw;
        CV_LOAD_A(xb)
#endif
        // Depthwise: per-channel weights, lanewise. Dense: the mat4 whose
        // column j maps input channel j to the block's 4 output channels.
#ifdef TX_DW
        vec4 wm = tx_wt(wb++);
#else
        mat4 wm = mat4(tx_wt(wb), tx_wt(wb + 1), tx_wt(wb + 2), tx_wt(wb + 3));
        wb += 4;
#endif
        acc0 += wm * a0;
        acc1 += wm * a1;
        acc2 += wm * a2;
        acc3 += wm * a3;
#if TX_TP == 8
        acc4 += wm * a4;
        acc5 += wm * a5;
        acc6 += wm * a6;
        acc7 += wm * a7;
#elif TX_TC == 8
        // The next block's weights: blocks are p_IB * kh * kw * 4 texels apart.
        int wb2 = wb - 4 + p_IB * p_kh * p_kw * 4;
        mat4 wm2 = mat4(tx_wt(wb2), tx_wt(wb2 + 1), tx_wt(wb2 + 2), tx_wt(wb2 + 3));
        acc4 += wm2 * a0;
        acc5 += wm2 * a1;
        acc6 += wm2 * a2;
        acc7 += wm2 * a3;
#endif
#ifdef TX_SLIDE
        a0 = a1;
        a1 = a2;
        a2 = a3;
#if TX_TP == 8
        a3 = a4;
        a4 = a5;
        a5 = a6;
        a6 = a7;
        a7 = tx_x(rb + (8 + kx) * p_sw);
#else
        a3 = tx_x(rb + (4 + kx) * p_sw);
#endif
#endif
      }
    }
  }
  vec4 bias = tx_bias(blk);
  mat4 o = transpose(mat4(tx_out(acc0, bias), tx_out(acc1, bias), tx_out(acc2, bias),
                          tx_out(acc3, bias)));
  o0 = o[0];
  o1 = o[1];
  o2 = o[2];
  o3 = o[3];
#if TX_NT == 8
#if TX_TC == 8
  bias = tx_bias(blk + 1);
#endif
  o = transpose(mat4(tx_out(acc4, bias), tx_out(acc5, bias), tx_out(acc6, bias),
                     tx_out(acc7, bias)));
  o4 = o[0];
  o5 = o[1];
  o6 = o[2];
  o7 = o[3];
#endif
}

#elif TX_PASS == 4

// Lane i (0 .. 4 * TX_WT - 1) of the window texels w0 .. w3.
float tx_win(vec4 w0, vec4 w1, vec4 w2, vec4 w3, int i) {
  vec4 v = i < 8 ? (i < 4 ? w0 : w1) : (i < 12 ? w2 : w3);
  return tx_lane(v, i & 3);
}

// Texel q of the input row starting at texel `row` (wq texels): 0 outside.
// With TX_TM, x is a matmul's row tiles (engine/gpu/conv.c,
// dw_takes_phases) and the row lies in layer `layer`.
vec4 tx_row_texel(int row, int q, int wq, int layer) {
  if (q < 0 || q >= wq)
    return vec4(0.0);
#ifdef TX_TM
  return TX_XA(tx_layer_texel_n(u_in0, row + q, p_in_ws, vec2(p_in_iw, p_in_ih), layer));
#else
  return TX_XA(tx_texel_n(u_in0, row + q, p_in_ws, vec2(p_in_iw, p_in_ih)));
#endif
}

// Tap KX of the kernel row: its weight W times the 4 positions' inputs,
// lanes TX_OFF + KX + j * TX_SW of the window (TX_OFF: (-pl) mod 4).
#define TX_TAP(KX, W) acc += (W) * vec4(tx_win(w0, w1, w2, w3, TX_OFF + (KX)), tx_win(w0, w1, w2, w3, TX_OFF + (KX) + TX_SW), tx_win(w0, w1, w2, w3, TX_OFF + (KX) + 2 * TX_SW), tx_win(w0, w1, w2, w3, TX_OFF + (KX) + 3 * TX_SW));

void main() {
  TX_OUTPUT_TEXEL(t)
  int xq = p_Wo >> 2, wq = p_W >> 2;
  int xt = t % xq;
  int r = t / xq;
  int y = r % p_Ho;
  int nc = r / p_Ho; // n * C + c
  int c = nc % p_M;
  int q0 = (xt * 4 * TX_SW - p_pl) >> 2; // the window's first texel (floor)
#ifdef TX_TM
  // channel c of image n: row c of product n, row tile c / TX_TM (a shift:
  // TX_TM is 4 or 8) in layer c % TX_TM
  int layer = c & (TX_TM - 1);
  int plane = (nc / p_M) * p_MT + (c >> (TX_TM == 8 ? 3 : 2));
#else
  int layer = 0, plane = nc;
#endif
  vec4 acc = vec4(0.0);
  for (int ky = 0; ky < p_kh; ky++) {
    int iy = y * p_sh - p_pt + ky;
    if (iy < 0 || iy >= p_H)
      continue;
    int row = (plane * p_H + iy) * wq;
    vec4 w0 = tx_row_texel(row, q0, wq, layer), w1 = vec4(0.0), w2 = vec4(0.0), w3 = vec4(0.0);
#if TX_WT >= 2
    w1 = tx_row_texel(row, q0 + 1, wq, layer);
#endif
#if TX_WT >= 3
    w2 = tx_row_texel(row, q0 + 2, wq, layer);
#endif
#if TX_WT >= 4
    w3 = tx_row_texel(row, q0 + 3, wq, layer);
#endif
    int tt = (c * p_kh + ky) * ((TX_KW + 3) >> 2);
    vec4 taps = tx_texel_n(u_in1, tt, p_w_ws, vec2(p_w_iw, p_w_ih));
#if TX_KW > 4
    vec4 taps2 = tx_texel_n(u_in1, tt + 1, p_w_ws, vec2(p_w_iw, p_w_ih));
#endif
    // taps unrolled: every lane index is a constant, so the selects in
    // tx_win fold away (a loop's index would keep them, and they cost more
    // than the fetches saved)
    TX_TAP(0, taps.x)
#if TX_KW >= 2
    TX_TAP(1, taps.y)
#endif
#if TX_KW >= 3
    TX_TAP(2, taps.z)
#endif
#if TX_KW >= 4
    TX_TAP(3, taps.w)
#endif
#if TX_KW >= 5
    TX_TAP(4, taps2.x)
#endif
#if TX_KW >= 6
    TX_TAP(5, taps2.y)
#endif
#if TX_KW >= 7
    TX_TAP(6, taps2.z)
#endif
  }
#ifdef TX_BIAS
  acc += tx_elem(u_in2, c, p_b_ws);
#endif
  o0 = tx_resid_act(acc, t);
}

#elif TX_PASS == 5

// Output element e = n * p_M + m (lanes past p_n are never stored):
// w[m] . x[n] over the p_C channels, plus the bias.
float tx_dot_out(int e) {
  if (e >= p_n)
    return 0.0;
  int n = e / p_M, m = e - n * p_M;
  float s = 0.0;
#ifdef TX_C4
  int cq = p_C >> 2;
  for (int q = 0; q < cq; q++)
    s += dot(TX_XA(tx_texel_n(u_in0, n * cq + q, p_in_ws, vec2(p_in_iw, p_in_ih))),
             tx_texel_n(u_in1, m * cq + q, p_w_ws, vec2(p_w_iw, p_w_ih)));
#else
  for (int c = 0; c < p_C; c++)
    s += TX_XA(tx_elem_n(u_in0, n * p_C + c, p_in_ws, vec2(p_in_iw, p_in_ih))) *
         tx_elem_n(u_in1, m * p_C + c, p_w_ws, vec2(p_w_iw, p_w_ih));
#endif
#ifdef TX_BIAS
  s += tx_elem(u_in2, m, p_b_ws);
#endif
  return s;
}

void main() {
  TX_OUTPUT_TEXEL(t)
  int e = t * 4;
  vec4 acc = vec4(tx_dot_out(e), tx_dot_out(e + 1), tx_dot_out(e + 2), tx_dot_out(e + 3));
  o0 = tx_resid_act(acc, t);
}

#elif TX_PASS == 6

void main() {
  TX_OUTPUT_TEXEL(t)
  int xq = p_W >> 1; // output texels per row: 2W / 4
  int xt = t % xq;
  int r = t / xq;
  int oy = r % (2 * p_H);
  int nm = r / (2 * p_H); // n * M + m
  int m = nm % p_M, n = nm / p_M;
  int iy = oy >> 1;
  // input positions 2 xt, 2 xt + 1: lanes l, l + 1 of one texel (W even)
  int e0 = (n * p_C * p_H + iy) * p_W + 2 * xt, cs = p_H * p_W;
  bool top = (oy & 1) == 0;
  vec4 acc = vec4(0.0);
  for (int c = 0; c < p_C; c++) {
    int e = e0 + c * cs;
    vec4 xv = tx_texel_n(u_in0, e >> 2, p_in_ws, vec2(p_in_iw, p_in_ih));
    vec2 x2 = (e & 2) == 0 ? xv.xy : xv.zw; // a plane of H * W % 4 == 2 moves it
    // taps w[c][m][ky][0..1] of this output row
    vec4 wv = tx_texel_n(u_in1, c * p_M + m, p_w_ws, vec2(p_w_iw, p_w_ih));
    vec2 w2 = top ? wv.xy : wv.zw;
    acc += vec4(x2.x * w2, x2.y * w2);
  }
#ifdef TX_BIAS
  acc += tx_elem(u_in2, m, p_b_ws);
#endif
  o0 = tx_resid_act(acc, t);
}

#else  // TX_PASS == 3

// Target i (layer i of the array texture u_in0) holds output channel i % 4
// of a block at positions 4 * (i / 4) .. +3 of the tile.
vec4 tx_tile(int i, int t) {
  return tx_layer_texel_n(u_in0, t, p_a_ws, vec2(p_a_iw, p_a_ih), i);
}

// Output element e = ((n * p_M + co) * p_Ho + y) * p_Wo + x: its tile index
// and the render target that holds it.
int tx_locate(int e, out int i, out int x) {
  x = e % p_Wo;
  int r = e / p_Wo;
  int y = r % p_Ho;
  r /= p_Ho;
  int co = r % p_M;
  int n = r / p_M;
#ifdef TX_DW
  int blk = co >> 2;
  i = co & 3;
#else
  int g = co / p_Mg;
  int rc = co - g * p_Mg;
  int blk = g * p_OB + (rc >> 2);
  i = rc & 3;
#endif
  if (p_tp == 8) {
    i += x & 4;
    return ((n * p_NOB + blk) * p_Ho + y) * p_XT + (x >> 3);
  }
  if (p_tc == 8) {
    i += (blk & 1) * 4;
    blk >>= 1;
  }
  return ((n * p_NOB + blk) * p_Ho + y) * p_XT + (x >> 2);
}

#ifdef TX_SWAP_NC
// Element e of y, [M, N, p_yh, p_yw]: the conv output element it holds.
int tx_source(int e) {
  int kx = e % p_yw;
  int r = e / p_yw;
  int ky = r % p_yh;
  r /= p_yh;
  int n = r % p_N;
  return ((n * p_M + r / p_N) * p_Ho + ky) * p_Wo + kx;
}
#else
int tx_source(int e) { return e; }
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
  int i, x;
#ifdef TX_ALIGNED // Wo % 4 == 0: an output texel is one tile texel
  int tt = tx_locate(t * 4, i, x);
  vec4 v = tx_tile(i, tt);
#else
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++) {
    int e = t * 4 + j;
    if (e < p_n) {
      int tt = tx_locate(tx_source(e), i, x);
      v[j] = tx_lane(tx_tile(i, tt), x & 3);
    }
  }
#endif
  // a residual, then the activation the compute pass left out (TX_RESID)
  o0 = tx_resid_act(v, t);
}
#endif
