// glsl-templates/norm.glsl: y = (x - mean) / sqrt(var + eps) * scale + bias,
// one output texel per fragment. Element i belongs to group g = i / p_S and
// channel c = g % p_C.
// Structural: TX_MODE 0 batch_norm (mean u_in3[c], var u_in4[c]), 1 stats
// from a MOMENTS state texture u_in1[g] of reduce.glsl (instance_norm,
// layer_norm: mean = K + s1 / p_R, var = s2 / p_R - (s1 / p_R)^2);
// TX_PCHAN: scale/bias indexed by c (else by i % p_S % period, layer_norm);
// TX_BIAS: a bias input (u_in2 scale, u_in3 bias in modes 1; in mode 0
// u_in1 scale, u_in2 B).
// Params: p_ntex, p_out_ws, p_x_ws, p_s_ws (stats or mean), p_v_ws (var),
// p_a_ws (scale), p_b_ws (bias), p_n, p_S, p_C, p_R, p_eps, p_ap, p_bp
// (scale / bias periods).

float nm_one(int i, float x) {
  int g = i / p_S;
#ifdef TX_PCHAN
  int c = g % p_C;
  int ai = c;
  int bi = c;
#else
  int ai = (i % p_S) % p_ap;
  int bi = (i % p_S) % p_bp;
#endif
#if TX_MODE == 0
  float mean = tx_elem(u_in3, c, p_s_ws);
  float var = tx_elem(u_in4, c, p_v_ws);
  float a = tx_elem(u_in1, ai, p_a_ws);
  float b = tx_elem(u_in2, bi, p_b_ws);
#else
  vec4 s = tx_texel(u_in1, g, p_s_ws);
  float m1 = s.x / float(p_R);
  float mean = s.z + m1;
  float var = max(s.y / float(p_R) - m1 * m1, 0.0);
  float a = tx_elem(u_in2, ai, p_a_ws);
#ifdef TX_BIAS
  float b = tx_elem(u_in3, bi, p_b_ws);
#else
  float b = 0.0;
#endif
#endif
  return (x - mean) / sqrt(var + p_eps) * a + b;
}

void main() {
  int t = tx_frag_texel(p_out_ws);
  if (t >= p_ntex) {
    o0 = vec4(0.0);
    return;
  }
  vec4 x = tx_texel(u_in0, t, p_x_ws);
  vec4 y;
  for (int l = 0; l < 4; l++) y[l] = nm_one(min(t * 4 + l, p_n - 1), x[l]);
  o0 = y;
}
