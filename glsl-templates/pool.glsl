// glsl-templates/pool.glsl: MaxPool / AveragePool (windowed) and their
// global forms, NCHW. One output texel (4 consecutive output elements) per
// fragment; each element walks its window.
//
// Structural: TX_MAX or TX_AVG; TX_INCLUDE_PAD (average: padded cells count);
// TX_GLOBAL (the window is the whole plane); TX_GVEC (global with H*W % 4 == 0:
// planes start on texel boundaries, so the walk is one texel per fetch).
// Params: p_ntex, p_n (output elements), p_out_ws, p_in_ws, p_H, p_W; windowed
// also p_Ho, p_Wo, p_kh, p_kw, p_sh, p_sw, p_dh, p_dw, p_pt, p_pl (begin pads)
// and p_He, p_We (end of the padded input: H + end pad).

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

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++)
    if (t * 4 + j < p_n) v[j] = tx_pool1(t * 4 + j);
  o0 = v;
}
