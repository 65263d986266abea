// glsl-templates/nary.glsl: elementwise over TX_N (1..4) inputs with numpy
// broadcasting, one output texel per fragment. Ops: where (TX_WHERE: in0 !=
// 0 ? in1 : in2, NaN counts as true) or a fold with TX_OP (nx_sum, nx_min,
// nx_max; NaN propagates), then times p_scale with TX_SCALE (mean's last
// pass). The variadic ops run several passes when there are more than 4
// inputs, the running result being input 0 of the next pass.
// Structural: TX_N, TX_M0..3 per input: 0 same size as the output (texel
// reads), 1 one element, 2 general broadcast (needs TX_GENERAL).
// Params: p_ntex, p_out_ws, p_n, p_w0..3 (texture widths), with TX_GENERAL the
// output dims p_d0..5 and, per broadcast input k, element strides p_sk_0..5
// (0 where it broadcasts); p_scale.

vec4 nx_sum(vec4 a, vec4 b) { return a + b; }
bvec4 nx_either_nan(vec4 a, vec4 b) { return bvec4(uvec4(isnan(a)) | uvec4(isnan(b))); }
vec4 nx_min(vec4 a, vec4 b) { return mix(min(a, b), a + b, nx_either_nan(a, b)); }
vec4 nx_max(vec4 a, vec4 b) { return mix(max(a, b), a + b, nx_either_nan(a, b)); }

#ifdef TX_GENERAL
int nx_index(int i, int s0, int s1, int s2, int s3, int s4, int s5) {
  int r = i;
  int o = 0;
  o += (r % p_d5) * s5; r /= p_d5;
  o += (r % p_d4) * s4; r /= p_d4;
  o += (r % p_d3) * s3; r /= p_d3;
  o += (r % p_d2) * s2; r /= p_d2;
  o += (r % p_d1) * s1; r /= p_d1;
  return o + r * s0;
}
#endif

// One input's texel t; `mode` is TX_Mk (a constant, so the branches fold)
// and s0..s5 its broadcast strides (zeros unless mode 2).
vec4 nx_load(highp sampler2D s, int t, int mode, int ws, int s0, int s1, int s2, int s3,
             int s4, int s5) {
  if (mode == 0) return tx_texel(s, t, ws);
  if (mode == 1) return vec4(tx_elem(s, 0, ws));
  vec4 v = vec4(0.0);
#ifdef TX_GENERAL
  for (int l = 0; l < 4; l++)
    v[l] = tx_elem(s, nx_index(min(t * 4 + l, p_n - 1), s0, s1, s2, s3, s4, s5), ws);
#endif
  return v;
}

#if TX_N > 0
#if TX_M0 == 2
#define NX_IN0(t) nx_load(u_in0, t, 2, p_w0, p_s0_0, p_s0_1, p_s0_2, p_s0_3, p_s0_4, p_s0_5)
#else
#define NX_IN0(t) nx_load(u_in0, t, TX_M0, p_w0, 0, 0, 0, 0, 0, 0)
#endif
#endif
#if TX_N > 1
#if TX_M1 == 2
#define NX_IN1(t) nx_load(u_in1, t, 2, p_w1, p_s1_0, p_s1_1, p_s1_2, p_s1_3, p_s1_4, p_s1_5)
#else
#define NX_IN1(t) nx_load(u_in1, t, TX_M1, p_w1, 0, 0, 0, 0, 0, 0)
#endif
#endif
#if TX_N > 2
#if TX_M2 == 2
#define NX_IN2(t) nx_load(u_in2, t, 2, p_w2, p_s2_0, p_s2_1, p_s2_2, p_s2_3, p_s2_4, p_s2_5)
#else
#define NX_IN2(t) nx_load(u_in2, t, TX_M2, p_w2, 0, 0, 0, 0, 0, 0)
#endif
#endif
#if TX_N > 3
#if TX_M3 == 2
#define NX_IN3(t) nx_load(u_in3, t, 2, p_w3, p_s3_0, p_s3_1, p_s3_2, p_s3_3, p_s3_4, p_s3_5)
#else
#define NX_IN3(t) nx_load(u_in3, t, TX_M3, p_w3, 0, 0, 0, 0, 0, 0)
#endif
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
#ifdef TX_WHERE
  vec4 r = mix(NX_IN2(t), NX_IN1(t), notEqual(NX_IN0(t), vec4(0.0)));
#else
  vec4 r = NX_IN0(t);
#if TX_N > 1
  r = TX_OP(r, NX_IN1(t));
#endif
#if TX_N > 2
  r = TX_OP(r, NX_IN2(t));
#endif
#if TX_N > 3
  r = TX_OP(r, NX_IN3(t));
#endif
#endif
#ifdef TX_SCALE
  r *= p_scale;
#endif
  o0 = r;
}
