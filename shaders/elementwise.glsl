// shaders/elementwise.glsl: lanewise functions shared by the unary template
// and fused activations (matmul, conv). NaN in gives NaN out. Selecting by a
// comparison mask is not enough: Mesa's NIR rewrites mix(x, 0, x < 0) into
// max(x, 0), whose NaN result GLSL leaves undefined (llvmpipe returns 0), so
// NaN lanes are put back explicitly with isnan (tests/numerics_test.c).
// tx_u_clip reads p_lo/p_hi only when TX_HAS_LO/TX_HAS_HI.

vec4 tx_keep_nan(vec4 r, vec4 x) { return mix(r, x, isnan(x)); }
vec4 tx_u_relu(vec4 x) { return tx_keep_nan(mix(x, vec4(0.0), lessThan(x, vec4(0.0))), x); }
vec4 tx_u_relu6(vec4 x) {
  vec4 r = mix(x, vec4(0.0), lessThan(x, vec4(0.0)));
  return tx_keep_nan(mix(r, vec4(6.0), greaterThan(x, vec4(6.0))), x);
}
vec4 tx_u_sigmoid(vec4 x) { return 1.0 / (1.0 + exp(-x)); }
vec4 tx_u_tanh(vec4 x) {
  // (1 - e^-2|x|) / (1 + e^-2|x|): no inf/inf for large |x|
  vec4 t = exp(-2.0 * abs(x));
  vec4 r = sign(x) * (1.0 - t) / (1.0 + t);
  return mix(r, x, isnan(x));
}
vec4 tx_u_exp(vec4 x) { return exp(x); }
vec4 tx_u_log(vec4 x) {
  vec4 r = log(x);
  r = mix(r, vec4(-tx_inf()), equal(x, vec4(0.0)));
  return mix(r, vec4(tx_nan()), lessThan(x, vec4(0.0)));
}
vec4 tx_u_sqrt(vec4 x) { return mix(sqrt(x), vec4(tx_nan()), lessThan(x, vec4(0.0))); }
vec4 tx_u_abs(vec4 x) { return abs(x); }
vec4 tx_u_neg(vec4 x) { return -x; }
vec4 tx_u_erf(vec4 x) {
  // Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7
  vec4 a = abs(x);
  vec4 t = 1.0 / (1.0 + 0.3275911 * a);
  vec4 y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                  0.254829592) * t * exp(-a * a);
  return mix(sign(x) * y, x, isnan(x));
}
vec4 tx_u_gelu(vec4 x) { return 0.5 * x * (1.0 + tx_u_erf(x * 0.70710678118654752)); }
vec4 tx_u_clip(vec4 x) {
  vec4 r = x;
#ifdef TX_HAS_LO
  r = mix(r, vec4(p_lo), lessThan(x, vec4(p_lo)));
#endif
#ifdef TX_HAS_HI
  r = mix(r, vec4(p_hi), greaterThan(x, vec4(p_hi)));
#endif
  return tx_keep_nan(r, x);
}

