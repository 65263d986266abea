// shaders/elementwise.glsl: lanewise functions shared by the unary template
// and fused activations (matmul, conv). NaN in gives NaN out. Selecting by a
// comparison mask is not enough: Mesa's NIR rewrites mix(x, 0, x < 0) into
// max(x, 0), whose NaN result GLSL leaves undefined (llvmpipe returns 0), so
// NaN lanes are put back explicitly by tx_keep_nan (tests/numerics_test.c).
// Every function here that selects by a mask or whose built-in loses NaN
// (llvmpipe's atan) ends in tx_keep_nan: the one mechanism for all families.
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
  return tx_keep_nan(r, x);
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
  return tx_keep_nan(sign(x) * y, x);
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

vec4 tx_u_softplus(vec4 x) {
  // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): no overflow for large x
  vec4 r = mix(x, vec4(0.0), lessThan(x, vec4(0.0))) + log(1.0 + exp(-abs(x)));
  return tx_keep_nan(r, x);
}
vec4 tx_u_softsign(vec4 x) { return tx_div(x, 1.0 + abs(x)); }
vec4 tx_u_hard_swish(vec4 x) {
  vec4 h = x * (1.0 / 6.0) + 0.5;
  h = mix(h, vec4(0.0), lessThan(h, vec4(0.0)));
  h = mix(h, vec4(1.0), greaterThan(h, vec4(1.0)));
  return tx_keep_nan(x * h, x);
}
// sin and cos by Cody-Waite reduction to [-pi/4, pi/4] and Taylor polynomials
// (|error| < 2e-7 for |x| < 1e4): SwiftShader's built-ins are off by 2e-4.
// `quarter` is 0 for sin, 1 for cos (cos x = sin(x + pi/2)).
// Past |x| ~ 2^24 float32 holds no phase and the reduction fails: clamping r
// keeps those results bounded (|v| <= 1) instead of an overflowed polynomial;
// +-inf and NaN give NaN (r is NaN there, put back by tx_keep_nan).
vec4 tx_sin_q(vec4 x, float quarter) {
  vec4 k = floor(x * 0.63661977236758134 + 0.5);
  vec4 rx = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.549789948768648e-8;
  vec4 r = clamp(rx, -0.7854, 0.7854);
  vec4 r2 = r * r;
  vec4 sr = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0)))));
  vec4 cr = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 + r2 * (-1.0 / 3628800.0)))));
  vec4 q = mod(k + quarter, 4.0);
  vec4 v = mix(sr, cr, greaterThanEqual(mod(q, 2.0), vec4(0.5)));
  return tx_keep_nan(mix(v, -v, greaterThanEqual(q, vec4(1.5))), rx);
}
vec4 tx_u_sin(vec4 x) { return tx_sin_q(x, 0.0); }
vec4 tx_u_cos(vec4 x) { return tx_sin_q(x, 1.0); }
vec4 tx_u_tan(vec4 x) { return sin(x) / cos(x); }
vec4 tx_u_floor(vec4 x) { return floor(x); }
vec4 tx_u_ceil(vec4 x) { return ceil(x); }
vec4 tx_u_round(vec4 x) { return roundEven(x); }
vec4 tx_u_sign(vec4 x) { return tx_keep_nan(sign(x), x); }
vec4 tx_u_reciprocal(vec4 x) { return 1.0 / x; }
vec4 tx_u_not(vec4 x) { return vec4(equal(x, vec4(0.0))); }
// Past |x| = 88.7 e^|x| overflows float32 while sinh and cosh (e^|x| / 2) do
// not until 89.4: for large |x| they are e^(|x| - ln 2), the e^-|x| term lost.
vec4 tx_u_sinh(vec4 x) {
  vec4 big = sign(x) * exp(abs(x) - 0.69314718);
  return tx_keep_nan(mix(sinh(x), big, greaterThan(abs(x), vec4(16.0))), x);
}
vec4 tx_u_cosh(vec4 x) {
  vec4 big = exp(abs(x) - 0.69314718);
  return tx_keep_nan(mix(cosh(x), big, greaterThan(abs(x), vec4(16.0))), x);
}
// llvmpipe's asin/acos are off by up to 4e-4; its atan is accurate but
// gives atan(NaN) = 0
vec4 tx_u_atan(vec4 x) { return tx_keep_nan(atan(x), x); }
// (and atan(x, NaN) is 0 there: outside [-1, 1] the NaN is put in by mask)
vec4 tx_u_asin(vec4 x) {
  vec4 r = mix(atan(x, sqrt((1.0 - x) * (1.0 + x))), vec4(tx_nan()), greaterThan(abs(x), vec4(1.0)));
  return tx_keep_nan(r, x);
}
vec4 tx_u_acos(vec4 x) {
  vec4 r = mix(2.0 * atan(sqrt((1.0 - x) / (1.0 + x))), vec4(tx_nan()), greaterThan(abs(x), vec4(1.0)));
  return tx_keep_nan(r, x);
}
// odd-symmetric form: log(x + sqrt(x^2 + 1)) cancels for x << 0; past
// |x| = 1e18 the 1 is lost to rounding (and x^2 overflows past 1.8e19), so
// the result is log|x| + ln 2
vec4 tx_u_asinh(vec4 x) {
  vec4 a = abs(x);
  vec4 r = mix(log(a + sqrt(a * a + 1.0)), log(a) + 0.69314718, greaterThan(a, vec4(1.0e18)));
  return tx_keep_nan(sign(x) * r, x);
}
vec4 tx_u_acosh(vec4 x) {
  vec4 r = mix(log(x + sqrt(x * x - 1.0)), log(x) + 0.69314718, greaterThan(x, vec4(1.0e18)));
  return tx_keep_nan(mix(r, vec4(tx_nan()), lessThan(x, vec4(1.0))), x);
}
vec4 tx_u_atanh(vec4 x) {
  vec4 r = 0.5 * log(tx_div(1.0 + x, 1.0 - x));
  return mix(r, vec4(tx_nan()), greaterThan(abs(x), vec4(1.0)));
}
vec4 tx_u_mish(vec4 x) { return x * tx_u_tanh(tx_u_softplus(x)); }
vec4 tx_u_is_nan(vec4 x) { return vec4(isnan(x)); }
// cast: to int truncates toward zero (NaN -> 0, clamped to the int32 range);
// to bool: NaN is nonzero, so true
vec4 tx_u_cast_int(vec4 x) {
  vec4 r = clamp(trunc(x), -2147483648.0, 2147483520.0);
  return mix(r, vec4(0.0), isnan(x));
}
vec4 tx_u_cast_float(vec4 x) { return x; }
vec4 tx_u_cast_bool(vec4 x) { return vec4(notEqual(x, vec4(0.0))); }
#ifdef TX_HAS_ALPHA
// family ACT: p_alpha, p_beta
vec4 tx_u_hard_sigmoid(vec4 x) {
  vec4 h = p_alpha * x + p_beta;
  h = mix(h, vec4(0.0), lessThan(h, vec4(0.0)));
  return tx_keep_nan(mix(h, vec4(1.0), greaterThan(h, vec4(1.0))), x);
}
vec4 tx_u_affine(vec4 x) { return p_alpha * x + p_beta; }
vec4 tx_u_swish(vec4 x) { return x * tx_u_sigmoid(p_alpha * x); }
vec4 tx_u_leaky_relu(vec4 x) { return tx_keep_nan(mix(x, p_alpha * x, lessThan(x, vec4(0.0))), x); }
vec4 tx_u_elu(vec4 x) {
  return tx_keep_nan(mix(x, p_alpha * (exp(x) - 1.0), lessThan(x, vec4(0.0))), x);
}
vec4 tx_u_celu(vec4 x) {
  vec4 n = p_alpha * (exp(x / p_alpha) - 1.0);
  return tx_keep_nan(mix(x, n, lessThan(x, vec4(0.0))), x);
}
vec4 tx_u_thresholded_relu(vec4 x) {
  return tx_keep_nan(mix(vec4(0.0), x, greaterThan(x, vec4(p_alpha))), x);
}
vec4 tx_u_shrink(vec4 x) {
  vec4 r = mix(vec4(0.0), x + p_beta, lessThan(x, vec4(-p_alpha)));
  r = mix(r, x - p_beta, greaterThan(x, vec4(p_alpha)));
  return tx_keep_nan(r, x);
}
vec4 tx_u_selu(vec4 x) {
  return tx_keep_nan(p_beta * mix(x, p_alpha * (exp(x) - 1.0), lessThan(x, vec4(0.0))), x);
}
#endif

// The end of an op with a fused residual and activation: TX_RESID (the
// residual's sampler; p_r_ws its width shift) holds texel t in the output's
// layout, added before TX_ACT.
vec4 tx_resid_act(vec4 v, int t) {
#ifdef TX_RESID
#ifdef TX_RESID_N
  // a residual covering y's first p_r_ntex texels (zero-padded channels)
  if (t < p_r_ntex)
#endif
  v += texelFetch(TX_RESID, tx_coord(t, p_r_ws), 0);
#endif
#ifdef TX_ACT
  v = TX_ACT(v);
#endif
  return v;
}
