// glsl-templates/optim.glsl: one fused optimizer step per parameter tensor
// (engine/gpu/optim.c; the formulas are tx_optim_call's in engine/device.h).
// Reads p (u_in0), g (u_in1), the state s1 (u_in2) and s2 (u_in3) texel by
// texel and the coefficients from a 2-texel tensor (u_in4), and writes p'
// (o0) and the new state (o1, o2) in one draw.
// Structural: TX_KIND 0 sgd, 1 momentum, 2 adam; TX_NESTEROV; TX_FIRST
// (momentum: no velocity yet). Params: p_ntex, p_out_ws, p_w0..p_w4.

void main() {
  TX_OUTPUT_TEXEL(t)
  vec4 c0 = tx_texel(u_in4, 0, p_w4); // lr, l2, mu or b1, b2
  vec4 c1 = tx_texel(u_in4, 1, p_w4); // eps, 1 / c1, 1 / c2, keep
  vec4 p = tx_texel(u_in0, t, p_w0);
  vec4 g = tx_texel(u_in1, t, p_w1) + c0.y * p;
#if TX_KIND == 0
  o0 = p - c0.x * g;
#elif TX_KIND == 1
#ifdef TX_FIRST
  vec4 v = g;
#else
  vec4 v = c0.z * tx_texel(u_in2, t, p_w2) + g;
#endif
#ifdef TX_NESTEROV
  o0 = p - c0.x * (g + c0.z * v);
#else
  o0 = p - c0.x * v;
#endif
  o1 = v;
#else
  vec4 m = c0.z * tx_texel(u_in2, t, p_w2) + (1.0 - c0.z) * g;
  vec4 v = c0.w * tx_texel(u_in3, t, p_w3) + (1.0 - c0.w) * g * g;
  o0 = c1.w * p - c0.x * (m * c1.y) / (sqrt(v * c1.z) + c1.x);
  o1 = m;
  o2 = v;
#endif
}
