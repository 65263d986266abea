// glsl-templates/norm.glsl: y = (x - mean) / sqrt(var + eps) * scale + bias,
// one output texel per fragment. Element i belongs to group g = i / p_S and
// channel c = g % p_C.
// Structural: TX_MODE 0 batch_norm (u_in1 scale, u_in2 B, u_in3 mean, u_in4
// var, all [C]), 1 stats from a MOMENTS state texture u_in1[g] of
// reduce.glsl (instance_norm, layer_norm: mean = K + s1 / p_R, var = s2 / p_R
// - (s1 / p_R)^2) with u_in2 scale and u_in3 bias; TX_PCHAN: scale/bias
// indexed by c (else by i % p_S % period: layer_norm); TX_BIAS: a bias input;
// TX_LANEVEC (p_S % 4 == 0): a texel lies in one group, so its statistics
// are fetched once, and with TX_ASCALAR / TX_BSCALAR (a channel's, or a single
// value) so are scale / bias; TX_AVEC / TX_BVEC (layer_norm, period % 4 == 0):
// scale / bias read as whole texels.
// Params: p_ntex, p_out_ws, p_x_ws, p_s_ws (stats or mean), p_v_ws (var),
// p_a_ws (scale), p_b_ws (bias), p_n, p_S, p_C (layer_norm: 1), p_R, p_eps, p_ap,
// p_bp (scale / bias periods).

// mean and 1 / sqrt(var + eps) of group g (channel c for batch_norm)
vec2 nm_stats(int g, int c) {
#if TX_MODE == 0
  float mean = tx_elem(u_in3, c, p_s_ws);
  float var = tx_elem(u_in4, c, p_v_ws);
#else
  vec4 s = tx_texel(u_in1, g, p_s_ws);
  float m1 = s.x / float(p_R);
  float mean = s.z + m1;
  float var = max(s.y / float(p_R) - m1 * m1, 0.0);
#endif
  return vec2(mean, 1.0 / sqrt(var + p_eps));
}

#if TX_MODE == 0
#define NM_SCALE u_in1
#define NM_BIAS u_in2
#else
#define NM_SCALE u_in2
#define NM_BIAS u_in3
#endif

// scale (which 0) or bias (1) of element i of group g
float nm_param(int which, int i, int g) {
#ifdef TX_PCHAN
  int k = g % p_C;
#else
  int k = (i % p_S) % (which == 0 ? p_ap : p_bp);
#endif
  if (which == 0) return tx_elem(NM_SCALE, k, p_a_ws);
#ifdef TX_BIAS
  return tx_elem(NM_BIAS, k, p_b_ws);
#else
  return 0.0;
#endif
}

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 x = tx_texel(u_in0, t, p_x_ws);
#ifdef TX_LANEVEC
  int i0 = t * 4;
  int g = i0 / p_S;
  vec2 st = nm_stats(g, g % p_C);
  vec4 a, b;
#if defined(TX_AVEC)
  a = tx_texel(NM_SCALE, ((i0 % p_S) % p_ap) >> 2, p_a_ws);
#elif defined(TX_ASCALAR)
  a = vec4(nm_param(0, i0, g));
#else
  for (int l = 0; l < 4; l++) a[l] = nm_param(0, i0 + l, g);
#endif
#if defined(TX_BVEC)
  b = tx_texel(NM_BIAS, ((i0 % p_S) % p_bp) >> 2, p_b_ws);
#elif defined(TX_BSCALAR)
  b = vec4(nm_param(1, i0, g));
#else
  for (int l = 0; l < 4; l++) b[l] = nm_param(1, i0 + l, g);
#endif
  o0 = (x - st.x) * st.y * a + b;
#else
  vec4 y;
  for (int l = 0; l < 4; l++) {
    int i = min(t * 4 + l, p_n - 1);
    int g = i / p_S;
    vec2 st = nm_stats(g, g % p_C);
    y[l] = (x[l] - st.x) * st.y * nm_param(0, i, g) + nm_param(1, i, g);
  }
  o0 = y;
#endif
}
