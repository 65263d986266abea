// glsl-templates/resize.glsl: ONNX Resize, nearest, n-linear or cubic; one
// output texel (4 elements, each on its own) per fragment.
// The host merges the output into TX_NDIM (1..6) dims numbered from the
// innermost (0) out: dim k has output size p_od<k>, input size p_in<k>, input
// stride p_st<k> and scale p_sc<k>. Dims in the bit mask TX_RMASK are
// resampled; the others map output coordinate o to input o.
// Structural: TX_COORD (0 half_pixel, 1 asymmetric, 2 align_corners,
// 3 pytorch_half_pixel, 4 tf_half_pixel_for_nearest); TX_TAPS: 1 nearest
// (TX_NEAREST 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil),
// 2 linear, 4 cubic (coefficient p_a; TX_EXCLUDE: taps outside the input get
// weight 0 and the rest are renormalised). Interpolating dims combine their
// taps: TX_TAPS^TX_NRES reads; resampled dim k is digit (TX_POS >> 3k) & 7
// of the tap counter (TX_LOG bits a digit).
// TX_RESID: the sampler of a residual of the output's layout, added to
// each output texel (a fused Add; p_r_ws its width shift).
// TX_UP (nearest, engine/gpu/resize.c up_factors): output o of dim 0 reads
// input o / TX_SX, of dim 1 o / TX_SY, and output rows are whole texels (the
// host checks each draw's sizes): one input texel per output texel.
// Params: p_n, p_ntex, p_out_ws, p_ws0.
// The coordinate arithmetic follows onnxruntime's float32 order exactly, so
// nearest picks the same element at ties (tx_div divides in IEEE 754 float
// also where the driver's division does not, see shaders/prelude.glsl; a
// compiler that folds a division by a specialized constant into a reciprocal
// multiply could still break a tie differently there).

// sc is the dim's scale, except: align_corners passes the resized length
// in * scale (unrounded, as the ONNX reference uses it), pytorch_half_pixel
// passes 0 where that length is 1 (then the coordinate is -0.5).
float tx_rz_coord(int o, int od, int in_, float sc) {
#if TX_COORD == 0
  return tx_div(float(o) + 0.5, sc) - 0.5;
#elif TX_COORD == 1
  return tx_div(float(o), sc);
#elif TX_COORD == 2
  return sc == 1.0 ? 0.0 : tx_div(float(o) * float(in_ - 1), sc - 1.0);
#elif TX_COORD == 3
  return sc == 0.0 ? -0.5 : tx_div(float(o) + 0.5, sc) - 0.5;
#else
  return tx_div(float(o) + 0.5, sc);
#endif
}

#if TX_TAPS == 1
// Nearest: adds the picked index times the stride to src.
void tx_rz_dim(int o, int od, int in_, int st, float sc, inout int src, out ivec4 ix,
               out vec4 wt) {
  float x = tx_rz_coord(o, od, in_, sc);
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
  ix = ivec4(0);
  wt = vec4(0.0);
}
#else
// Interpolation: the taps' input offsets (index times stride, indices
// clamped to the input: edge padding, as the ONNX reference pads) and
// weights.
void tx_rz_dim(int o, int od, int in_, int st, float sc, inout int src, out ivec4 ix,
               out vec4 wt) {
  float x = tx_rz_coord(o, od, in_, sc);
#if TX_TAPS == 2
  x = clamp(x, 0.0, float(in_ - 1));
  int x0 = int(x);
  float r = x - float(x0);
  ix = ivec4(x0, min(x0 + 1, in_ - 1), 0, 0) * st;
  wt = vec4(1.0 - r, r, 0.0, 0.0);
#else
  float f = floor(x);
  float r = x - f;
  ivec4 t = int(f) + ivec4(-1, 0, 1, 2);
  float q = 1.0 - r, r1 = r + 1.0, q1 = q + 1.0;
  wt = vec4(((p_a * r1 - 5.0 * p_a) * r1 + 8.0 * p_a) * r1 - 4.0 * p_a,
            ((p_a + 2.0) * r - (p_a + 3.0)) * r * r + 1.0,
            ((p_a + 2.0) * q - (p_a + 3.0)) * q * q + 1.0,
            ((p_a * q1 - 5.0 * p_a) * q1 + 8.0 * p_a) * q1 - 4.0 * p_a);
#ifdef TX_EXCLUDE
  wt = mix(wt, vec4(0.0), bvec4(uvec4(lessThan(t, ivec4(0))) |
                                uvec4(greaterThanEqual(t, ivec4(in_)))));
  wt /= dot(wt, vec4(1.0));
#endif
  ix = clamp(t, ivec4(0), ivec4(in_ - 1)) * st;
#endif
}
#endif

// Per dim: resampled dims (bit in TX_RMASK) go through tx_rz_dim, the
// others copy. Tap k of a resampled dim: digit (TX_POS >> 3K) & 7 of c.
// (Macros stay on one line and paste no tokens: portable preprocessors.)
#define TX_RZ(BIT, O, OD, IN, ST, SC, IX, WT) if ((TX_RMASK & (BIT)) != 0) tx_rz_dim(O, OD, IN, ST, SC, src, IX, WT); else src += (O) * (ST);
#define TX_TAP(BIT, K, IX, WT) if ((TX_RMASK & (BIT)) != 0) { int d_ = (c >> (TX_LOG * ((TX_POS >> (3 * K)) & 7))) & (TX_TAPS - 1); s += IX[d_]; w *= WT[d_]; }

float tx_rz(int i) {
  int src = 0;
  int r = i;
  int o;
  // vectors, not arrays: dynamic array indexing is slow on llvmpipe
  ivec4 ix0, ix1, ix2, ix3, ix4, ix5;
  vec4 wt0, wt1, wt2, wt3, wt4, wt5;
#if TX_NDIM == 1
  TX_RZ(1, r, p_od0, p_in0, p_st0, p_sc0, ix0, wt0)
#else
  o = r % p_od0; r /= p_od0;
  TX_RZ(1, o, p_od0, p_in0, p_st0, p_sc0, ix0, wt0)
#endif
#if TX_NDIM == 2
  TX_RZ(2, r, p_od1, p_in1, p_st1, p_sc1, ix1, wt1)
#elif TX_NDIM > 2
  o = r % p_od1; r /= p_od1;
  TX_RZ(2, o, p_od1, p_in1, p_st1, p_sc1, ix1, wt1)
#endif
#if TX_NDIM == 3
  TX_RZ(4, r, p_od2, p_in2, p_st2, p_sc2, ix2, wt2)
#elif TX_NDIM > 3
  o = r % p_od2; r /= p_od2;
  TX_RZ(4, o, p_od2, p_in2, p_st2, p_sc2, ix2, wt2)
#endif
#if TX_NDIM == 4
  TX_RZ(8, r, p_od3, p_in3, p_st3, p_sc3, ix3, wt3)
#elif TX_NDIM > 4
  o = r % p_od3; r /= p_od3;
  TX_RZ(8, o, p_od3, p_in3, p_st3, p_sc3, ix3, wt3)
#endif
#if TX_NDIM == 5
  TX_RZ(16, r, p_od4, p_in4, p_st4, p_sc4, ix4, wt4)
#elif TX_NDIM > 5
  o = r % p_od4; r /= p_od4;
  TX_RZ(16, o, p_od4, p_in4, p_st4, p_sc4, ix4, wt4)
  TX_RZ(32, r, p_od5, p_in5, p_st5, p_sc5, ix5, wt5)
#endif
#if TX_TAPS > 1
  float acc = 0.0;
  for (int c = 0; c < (1 << (TX_LOG * TX_NRES)); c++) {
    int s = src;
    float w = 1.0;
    TX_TAP(1, 0, ix0, wt0)
    TX_TAP(2, 1, ix1, wt1)
    TX_TAP(4, 2, ix2, wt2)
    TX_TAP(8, 3, ix3, wt3)
    TX_TAP(16, 4, ix4, wt4)
    TX_TAP(32, 5, ix5, wt5)
    acc += w * tx_elem(u_in0, s, p_ws0);
  }
  return acc;
#else
  return tx_elem(u_in0, src, p_ws0);
#endif
}

#ifdef TX_UP
// Output texel t: 4 elements of one output row from one input texel.
vec4 tx_up(int t) {
  int e = t * 4;
  int row = e / p_od0, x0 = e - row * p_od0;
#if TX_NDIM > 1
  int outer = row / p_od1, y = row - outer * p_od1;
  int src = (outer * p_in1 + y / TX_SY) * p_in0 + x0 / TX_SX;
#else
  int src = x0 / TX_SX;
#endif
#if TX_SX == 1
  return tx_texel(u_in0, src >> 2, p_ws0);
#elif TX_SX == 2
  // src even: the texel's elements 0, 1 or 2, 3, each twice
  vec4 v = tx_texel(u_in0, src >> 2, p_ws0);
  return (src & 2) == 0 ? v.xxyy : v.zzww;
#else
  return vec4(tx_elem(u_in0, src, p_ws0)); // TX_SX a multiple of 4: one element
#endif
}
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 v = vec4(0.0);
#ifdef TX_UP
  v = tx_up(t);
#else
  for (int j = 0; j < 4; j++) {
    int i = t * 4 + j;
    if (i < p_n) v[j] = tx_rz(i);
  }
#endif
  o0 = tx_resid_act(v, t); // TX_RESID: a fused Add's other operand
}
