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
// nearest picks the same element at ties (where the driver divides in IEEE
// float, as llvmpipe does; a driver that turns the division by a specialized
// constant scale into a reciprocal multiply may break a tie differently at
// non-power-of-two downscales).

// sc is the dim's scale, except: align_corners passes the resized length
// in * scale (unrounded, as the ONNX reference uses it), pytorch_half_pixel
// passes 0 where that length is 1 (coordinate -0.5, which clamps to 0).
float tx_rz_coord(int o, int od, int in_, float sc) {
#if TX_COORD == 0
  return (float(o) + 0.5) / sc - 0.5;
#elif TX_COORD == 1
  return float(o) / sc;
#elif TX_COORD == 2
  return sc == 1.0 ? 0.0 : float(o) * float(in_ - 1) / (sc - 1.0);
#elif TX_COORD == 3
  return sc == 0.0 ? 0.0 : (float(o) + 0.5) / sc - 0.5;
#else
  return (float(o) + 0.5) / sc;
#endif
}

// Dim k's input coordinate for output coordinate o: nearest adds the
// picked index times the stride to src; linear clamps like onnxruntime and
// returns both neighbours (already times the stride) and the upper weight.
void tx_rz_dim(int o, int od, int in_, int st, float sc, inout int src, out int lo, out int hi,
               out float w) {
  float x = tx_rz_coord(o, od, in_, sc);
#if TX_LINEAR
  x = clamp(x, 0.0, float(in_ - 1));
  int x0 = int(x);
  lo = x0 * st;
  hi = min(x0 + 1, in_ - 1) * st;
  w = x - float(x0);
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
  lo = hi = 0;
  w = 0.0;
#endif
}

// Named scalars, not arrays: dynamic array indexing is slow on llvmpipe.
// Dim k is resampled when bit k of TX_RMASK is set; otherwise it is a copy.
// (Macros stay on one line and paste no tokens: portable preprocessors.)
#define TX_RZ(BIT, O, OD, IN, ST, SC, LO, HI, W) if ((TX_RMASK & (BIT)) != 0) tx_rz_dim(O, OD, IN, ST, SC, src, LO, HI, W); else src += (O) * (ST);
#define TX_CORNER(BIT, LO, HI, W) if ((TX_RMASK & (BIT)) != 0) { if ((c & (BIT)) != 0) { s += HI; w *= W; } else { s += LO; w *= 1.0 - W; } }

float tx_rz(int i) {
  int src = 0;
  int r = i;
  int o;
  int lo0 = 0, lo1 = 0, lo2 = 0, lo3 = 0, lo4 = 0, lo5 = 0;
  int hi0 = 0, hi1 = 0, hi2 = 0, hi3 = 0, hi4 = 0, hi5 = 0;
  float w0 = 0.0, w1 = 0.0, w2 = 0.0, w3 = 0.0, w4 = 0.0, w5 = 0.0;
#if TX_NDIM == 1
  TX_RZ(1, r, p_od0, p_in0, p_st0, p_sc0, lo0, hi0, w0)
#else
  o = r % p_od0; r /= p_od0;
  TX_RZ(1, o, p_od0, p_in0, p_st0, p_sc0, lo0, hi0, w0)
#endif
#if TX_NDIM == 2
  TX_RZ(2, r, p_od1, p_in1, p_st1, p_sc1, lo1, hi1, w1)
#elif TX_NDIM > 2
  o = r % p_od1; r /= p_od1;
  TX_RZ(2, o, p_od1, p_in1, p_st1, p_sc1, lo1, hi1, w1)
#endif
#if TX_NDIM == 3
  TX_RZ(4, r, p_od2, p_in2, p_st2, p_sc2, lo2, hi2, w2)
#elif TX_NDIM > 3
  o = r % p_od2; r /= p_od2;
  TX_RZ(4, o, p_od2, p_in2, p_st2, p_sc2, lo2, hi2, w2)
#endif
#if TX_NDIM == 4
  TX_RZ(8, r, p_od3, p_in3, p_st3, p_sc3, lo3, hi3, w3)
#elif TX_NDIM > 4
  o = r % p_od3; r /= p_od3;
  TX_RZ(8, o, p_od3, p_in3, p_st3, p_sc3, lo3, hi3, w3)
#endif
#if TX_NDIM == 5
  TX_RZ(16, r, p_od4, p_in4, p_st4, p_sc4, lo4, hi4, w4)
#elif TX_NDIM > 5
  o = r % p_od4; r /= p_od4;
  TX_RZ(16, o, p_od4, p_in4, p_st4, p_sc4, lo4, hi4, w4)
  TX_RZ(32, r, p_od5, p_in5, p_st5, p_sc5, lo5, hi5, w5)
#endif
#if TX_LINEAR
  // corner c: bit k picks dim k's upper neighbour; corners with bits outside
  // TX_RMASK are skipped (a constant test: the loop unrolls to the live ones)
  float acc = 0.0;
  for (int c = 0; c < (1 << TX_NDIM); c++) {
    if ((c & ~TX_RMASK) != 0) continue;
    int s = src;
    float w = 1.0;
    TX_CORNER(1, lo0, hi0, w0)
    TX_CORNER(2, lo1, hi1, w1)
    TX_CORNER(4, lo2, hi2, w2)
    TX_CORNER(8, lo3, hi3, w3)
    TX_CORNER(16, lo4, hi4, w4)
    TX_CORNER(32, lo5, hi5, w5)
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
