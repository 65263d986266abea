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

#if TX_N > 0
vec4 nx_load0(int t) {
#if TX_M0 == 0
  return tx_texel(u_in0, t, p_w0);
#elif TX_M0 == 1
  return vec4(tx_elem(u_in0, 0, p_w0));
#else
  vec4 v;
  for (int l = 0; l < 4; l++) {
    int i = nx_index(min(t * 4 + l, p_n - 1), p_s0_0, p_s0_1, p_s0_2, p_s0_3, p_s0_4,
                     p_s0_5);
    v[l] = tx_elem(u_in0, i, p_w0);
  }
  return v;
#endif
}
#endif

#if TX_N > 1
vec4 nx_load1(int t) {
#if TX_M1 == 0
  return tx_texel(u_in1, t, p_w1);
#elif TX_M1 == 1
  return vec4(tx_elem(u_in1, 0, p_w1));
#else
  vec4 v;
  for (int l = 0; l < 4; l++) {
    int i = nx_index(min(t * 4 + l, p_n - 1), p_s1_0, p_s1_1, p_s1_2, p_s1_3, p_s1_4,
                     p_s1_5);
    v[l] = tx_elem(u_in1, i, p_w1);
  }
  return v;
#endif
}
#endif

#if TX_N > 2
vec4 nx_load2(int t) {
#if TX_M2 == 0
  return tx_texel(u_in2, t, p_w2);
#elif TX_M2 == 1
  return vec4(tx_elem(u_in2, 0, p_w2));
#else
  vec4 v;
  for (int l = 0; l < 4; l++) {
    int i = nx_index(min(t * 4 + l, p_n - 1), p_s2_0, p_s2_1, p_s2_2, p_s2_3, p_s2_4,
                     p_s2_5);
    v[l] = tx_elem(u_in2, i, p_w2);
  }
  return v;
#endif
}
#endif

#if TX_N > 3
vec4 nx_load3(int t) {
#if TX_M3 == 0
  return tx_texel(u_in3, t, p_w3);
#elif TX_M3 == 1
  return vec4(tx_elem(u_in3, 0, p_w3));
#else
  vec4 v;
  for (int l = 0; l < 4; l++) {
    int i = nx_index(min(t * 4 + l, p_n - 1), p_s3_0, p_s3_1, p_s3_2, p_s3_3, p_s3_4,
                     p_s3_5);
    v[l] = tx_elem(u_in3, i, p_w3);
  }
  return v;
#endif
}
#endif

void main() {
  int t = tx_frag_texel(p_out_ws);
  if (t >= p_ntex) {
    o0 = vec4(0.0);
    return;
  }
#ifdef TX_WHERE
  vec4 r = mix(nx_load2(t), nx_load1(t), notEqual(nx_load0(t), vec4(0.0)));
#else
  vec4 r = nx_load0(t);
#if TX_N > 1
  r = TX_OP(r, nx_load1(t));
#endif
#if TX_N > 2
  r = TX_OP(r, nx_load2(t));
#endif
#if TX_N > 3
  r = TX_OP(r, nx_load3(t));
#endif
#endif
#ifdef TX_SCALE
  r *= p_scale;
#endif
  o0 = r;
}
