// glsl-templates/resize.glsl: ONNX Resize, nearest or n-linear; one output
// texel (4 elements, each on its own) per fragment.
// The host merges the output into TX_NDIM (1..6) dims numbered from the
// innermost (0) out: dim k has output size p_od<k>, input size p_in<k>, input
// stride p_st<k> and scale p_sc<k>. Dims in the bit mask TX_RMASK are
// resampled; the others map output coordinate o to input o.
// Structural: TX_COORD (0 half_pixel, 1 asymmetric, 2 align_corners,
// 3 pytorch_half_pixel, 4 tf_half_pixel_for_nearest), TX_LINEAR (0 nearest:
// TX_NEAREST 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil;
// 1 linear: every resampled dim interpolates between its two neighbours,
// 2^popcount(TX_RMASK) reads). Params: p_n, p_ntex, p_out_ws, p_ws0.
// The coordinate arithmetic follows onnxruntime's float32 order exactly, so
// nearest picks the same element at ties.

float tx_rz_coord(int o, int od, int in_, float sc) {
#if TX_COORD == 0
  return (float(o) + 0.5) / sc - 0.5;
#elif TX_COORD == 1
  return float(o) / sc;
#elif TX_COORD == 2
  return od == 1 ? 0.0 : float(o * (in_ - 1)) / float(od - 1);
#elif TX_COORD == 3
  return od > 1 ? (float(o) + 0.5) / sc - 0.5 : 0.0;
#else
  return (float(o) + 0.5) / sc;
#endif
}

#if TX_LINEAR
int g_lo[6], g_hi[6];
float g_w[6];
#endif

// Adds dim k's contribution for output coordinate o to src (nearest and
// plain dims) or records its two neighbours (linear).
void tx_rz_dim(int k, int bit, int o, int od, int in_, int st, float sc, inout int src) {
  if ((TX_RMASK & bit) == 0) {
    src += o * st;
    return;
  }
  float x = tx_rz_coord(o, od, in_, sc);
#if TX_LINEAR
  x = clamp(x, 0.0, float(in_ - 1));
  int x0 = int(x);
  g_lo[k] = x0 * st;
  g_hi[k] = min(x0 + 1, in_ - 1) * st;
  g_w[k] = x - float(x0);
#else
#if TX_NEAREST == 0
  float n = ceil(x - 0.5);
#elif TX_NEAREST == 1
  float n = floor(x + 0.5);
#elif TX_NEAREST == 2
  float n = floor(x);
#else
  float n = ceil(x);
#endif
  src += clamp(int(n), 0, in_ - 1) * st;
#endif
}

float tx_rz(int i) {
  int src = 0;
  int r = i;
  int o;
#if TX_NDIM == 1
  tx_rz_dim(0, 1, r, p_od0, p_in0, p_st0, p_sc0, src);
#else
  o = r % p_od0; r /= p_od0;
  tx_rz_dim(0, 1, o, p_od0, p_in0, p_st0, p_sc0, src);
#endif
#if TX_NDIM == 2
  tx_rz_dim(1, 2, r, p_od1, p_in1, p_st1, p_sc1, src);
#elif TX_NDIM > 2
  o = r % p_od1; r /= p_od1;
  tx_rz_dim(1, 2, o, p_od1, p_in1, p_st1, p_sc1, src);
#endif
#if TX_NDIM == 3
  tx_rz_dim(2, 4, r, p_od2, p_in2, p_st2, p_sc2, src);
#elif TX_NDIM > 3
  o = r % p_od2; r /= p_od2;
  tx_rz_dim(2, 4, o, p_od2, p_in2, p_st2, p_sc2, src);
#endif
#if TX_NDIM == 4
  tx_rz_dim(3, 8, r, p_od3, p_in3, p_st3, p_sc3, src);
#elif TX_NDIM > 4
  o = r % p_od3; r /= p_od3;
  tx_rz_dim(3, 8, o, p_od3, p_in3, p_st3, p_sc3, src);
#endif
#if TX_NDIM == 5
  tx_rz_dim(4, 16, r, p_od4, p_in4, p_st4, p_sc4, src);
#elif TX_NDIM > 5
  o = r % p_od4; r /= p_od4;
  tx_rz_dim(4, 16, o, p_od4, p_in4, p_st4, p_sc4, src);
  tx_rz_dim(5, 32, r, p_od5, p_in5, p_st5, p_sc5, src);
#endif
#if TX_LINEAR
  // corners: bit k of c picks dim k's upper neighbour; dims outside
  // TX_RMASK are skipped (a constant test: unrolled away)
  float acc = 0.0;
  for (int c = 0; c < (1 << TX_NDIM); c++) {
    if ((c & ~TX_RMASK) != 0) continue;
    int s = src;
    float w = 1.0;
    for (int k = 0; k < TX_NDIM; k++) {
      if ((TX_RMASK & (1 << k)) == 0) continue;
      bool up = ((c >> k) & 1) != 0;
      s += up ? g_hi[k] : g_lo[k];
      w *= up ? g_w[k] : 1.0 - g_w[k];
    }
    acc += w * tx_elem(u_in0, s, p_ws0);
  }
  return acc;
#else
  return tx_elem(u_in0, src, p_ws0);
#endif
}

void main() {
  int t = tx_frag_texel(p_out_ws);
  if (t >= p_ntex) {
    o0 = vec4(0.0);
    return;
  }
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++) {
    int i = t * 4 + j;
    if (i < p_n) v[j] = tx_rz(i);
  }
  o0 = v;
}
