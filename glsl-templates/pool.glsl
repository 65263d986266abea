// glsl-templates/pool.glsl: MaxPool / AveragePool (windowed) and their
// global forms, NCHW. One output texel (4 consecutive output elements) per
// fragment; each element walks its window.
//
// Structural: TX_MAX or TX_AVG; TX_INCLUDE_PAD (average: padded cells count);
// TX_GLOBAL (the window is the whole plane); TX_GVEC (global with H*W % 4 == 0:
// planes start on texel boundaries, so the walk is one texel per fetch).
// Params: p_ntex, p_n (output elements), p_out_ws, p_in_ws, p_H, p_W; windowed
// also p_Ho, p_Wo, p_kh, p_kw, p_sh, p_sw, p_dh, p_dw, p_pt, p_pl (begin pads)
// and p_He, p_We (end of the padded input: H + end pad). TX_TILE2 (windows
// 2 wide tiling x, W % 4 == 0; p_in_iw, p_in_ih): texel-wide reads.
// TX_MAX_GRAD: a max pool's gradient where the windows tile x (stride =
// kernel, no pads or dilation): u_in1 holds the pool's output y (p_y_ws),
// u_in2 its gradient g (p_g_ws), and the output dx has x's shape (p_n
// elements): (x == y) * g / (the window's count of x == y), 0 past the last
// whole window. Params: p_ntex, p_n, p_out_ws, p_in_ws, p_in_iw, p_in_ih, p_H,
// p_W, p_Ho, p_Wo, p_kh, p_kw. TX_GRAD_KW (W % 4 == 0, kw = TX_GRAD_KW of 1,
// 2 or 4): an output texel is 4 x of one row, 4 / kw whole windows, read a
// texel per window row (TX_HERE: x's texture is as wide as dx's).

#ifdef TX_GRAD_KW
// one value per window -> each lane's window's
vec4 tx_spread(vec4 v) {
#if TX_GRAD_KW == 1
  return v;
#elif TX_GRAD_KW == 2
  return v.xxyy;
#else
  return v.xxxx;
#endif
}
// per-lane counts -> each lane's window's total
vec4 tx_window_sum(vec4 c) {
#if TX_GRAD_KW == 1
  return c;
#elif TX_GRAD_KW == 2
  return vec4(c.x + c.y, c.x + c.y, c.z + c.w, c.z + c.w);
#else
  return vec4(c.x + c.y + c.z + c.w);
#endif
}

void main() {
  TX_OUTPUT_TEXEL(t)
  vec2 inv = vec2(p_in_iw, p_in_ih);
  int e = t * 4;
  int r = e / p_W;
  int ix = e - r * p_W;
  int plane = r / p_H;
  int iy = r - plane * p_H;
  int oy = iy / p_kh;
  if (oy >= p_Ho) { // past the last whole window row
    o0 = vec4(0.0);
    return;
  }
  int o = (plane * p_Ho + oy) * p_Wo + ix / TX_GRAD_KW;
  vec4 m = tx_spread(tx_run(u_in1, o, p_y_ws));
  vec4 g = tx_spread(tx_run(u_in2, o, p_g_ws));
  int row = ((plane * p_H + oy * p_kh) * p_W + ix) >> 2, wq = p_W >> 2;
  vec4 ties = vec4(0.0);
  for (int ky = 0; ky < p_kh; ky++)
    ties += vec4(equal(tx_texel_n(u_in0, row + ky * wq, p_in_ws, inv), m));
#ifdef TX_HERE
  vec4 x = tx_texel_here(u_in0, inv);
#else
  vec4 x = tx_texel_n(u_in0, t, p_in_ws, inv);
#endif
  // as the scalar form below: 0 * share is NaN where share is not finite
  vec4 share = tx_div(g, tx_window_sum(ties));
  bvec4 bad = bvec4(uvec4(isnan(share)) | uvec4(isinf(share)));
  o0 = mix(mix(vec4(0.0), vec4(tx_nan()), bad), share, equal(x, m));
}
#elif defined(TX_MAX_GRAD)
float tx_x(int i) { return tx_elem_n(u_in0, i, p_in_ws, vec2(p_in_iw, p_in_ih)); }

float tx_pool1(int e) {
  int ix = e % p_W;
  int r = e / p_W;
  int iy = r % p_H;
  int plane = r / p_H;
  int oy = iy / p_kh, ox = ix / p_kw;
  if (oy >= p_Ho || ox >= p_Wo) return 0.0;
  int o = (plane * p_Ho + oy) * p_Wo + ox;
  float m = tx_elem(u_in1, o, p_y_ws);
  int base = (plane * p_H + oy * p_kh) * p_W + ox * p_kw;
  float ties = 0.0;
  for (int ky = 0; ky < p_kh; ky++)
    for (int kx = 0; kx < p_kw; kx++) ties += tx_x(base + ky * p_W + kx) == m ? 1.0 : 0.0;
  // (x == y) * (g / ties) as the ops it replaces computed it, spelled out
  // (a compiler may turn a mask's product into a select): 0 * share is NaN
  // where share is not finite (a window whose max is NaN has no ties)
  float share = tx_div(tx_elem(u_in2, o, p_g_ws), ties);
  return tx_x(e) == m ? share : (isnan(share) || isinf(share) ? tx_nan() : 0.0);
}
#else

#ifdef TX_MAX
#define TX_INIT (-tx_inf())
#define TX_ACC(a, v) max(a, v)
#else
#define TX_INIT 0.0
#define TX_ACC(a, v) ((a) + (v))
#endif

float tx_pool1(int e) {
#ifdef TX_GLOBAL
  int hw = p_H * p_W;
#ifdef TX_GVEC
  int base = (e * hw) >> 2;
  vec4 a = vec4(TX_INIT);
  for (int i = 0; i < (hw >> 2); i++) a = TX_ACC(a, tx_texel(u_in0, base + i, p_in_ws));
  float acc = TX_ACC(TX_ACC(a.x, a.y), TX_ACC(a.z, a.w));
#else
  int base = e * hw;
  float acc = TX_INIT;
  for (int i = 0; i < hw; i++) acc = TX_ACC(acc, tx_elem(u_in0, base + i, p_in_ws));
#endif
#ifdef TX_AVG
  acc /= float(hw);
#endif
  return acc;
#else
  int x = e % p_Wo;
  int r = e / p_Wo;
  int y = r % p_Ho;
  int plane = r / p_Ho;
  int base = plane * p_H * p_W;
  int y0 = y * p_sh - p_pt, x0 = x * p_sw - p_pl;
  float acc = TX_INIT;
  int cnt = 0, rows = 0, cols = 0;
  for (int ky = 0; ky < p_kh; ky++) {
    int iy = y0 + ky * p_dh;
    if (iy >= -p_pt && iy < p_He) rows++;
    if (iy < 0 || iy >= p_H) continue;
    for (int kx = 0; kx < p_kw; kx++) {
      int ix = x0 + kx * p_dw;
      if (ix < 0 || ix >= p_W) continue;
      acc = TX_ACC(acc, tx_elem(u_in0, base + iy * p_W + ix, p_in_ws));
      cnt++;
    }
  }
#ifdef TX_AVG
#ifdef TX_INCLUDE_PAD
  for (int kx = 0; kx < p_kw; kx++) {
    int ix = x0 + kx * p_dw;
    if (ix >= -p_pl && ix < p_We) cols++;
  }
  cnt = rows * cols;
#endif
  acc /= float(cnt);
#endif
  return acc;
#endif
}
#endif

#if defined(TX_TILE2)
// Windows that tile x 2 wide (stride = kernel, kw 2, no pads or dilation)
// over rows of whole texels (W % 4 == 0, so Wo is even): outputs e and e + 1
// (e even) are the two windows of one texel per window row, taken in the
// order the general walk takes them.
vec2 tx_pair(int e, vec2 inv) {
  int r = e / p_Wo;
  int ox = e - r * p_Wo;
  int plane = r / p_Ho;
  int oy = r - plane * p_Ho;
  int row = ((plane * p_H + oy * p_kh) * p_W + ox * 2) >> 2, wq = p_W >> 2;
  vec2 acc = vec2(TX_INIT);
  for (int ky = 0; ky < p_kh; ky++) {
    vec4 a = tx_texel_n(u_in0, row + ky * wq, p_in_ws, inv);
    acc = TX_ACC(acc, a.xz);
    acc = TX_ACC(acc, a.yw);
  }
#ifdef TX_AVG
  acc /= float(2 * p_kh);
#endif
  return acc;
}

void main() {
  TX_OUTPUT_TEXEL(t)
  vec2 inv = vec2(p_in_iw, p_in_ih);
  // the second pair of the last texel may lie past the end (never stored)
  o0 = vec4(tx_pair(t * 4, inv), tx_pair(min(t * 4 + 2, p_n - 2), inv));
}
#elif !defined(TX_GRAD_KW)
void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++)
    if (t * 4 + j < p_n) v[j] = tx_pool1(t * 4 + j);
  o0 = v;
}
#endif
