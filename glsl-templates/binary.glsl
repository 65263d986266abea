// glsl-templates/binary.glsl: y = a (op) b with numpy broadcasting; one
// output texel (4 elements) per fragment.
// Structural: TX_OP (tx_b_add, ...), TX_MODE: 0 general broadcast (per-lane
// index math), 1 same shape (texel-wise), 2 b is one element, 3 a is one
// element, 4 b is a row of the last dim with that dim % 4 == 0 (bias add),
// 5 b is per channel: one value per p_inner consecutive output elements,
// p_np values repeating (a [N, C, H, W] x [1, C, 1, 1] scale), 6 a is.
// TX_INT when the dtype is int32 (integer division and pow). TX_A_HERE,
// TX_B_HERE (modes 1-4): that operand's texture is as wide as the output's.
// Params: p_n, p_ntex, p_out_ws, p_a_ws, p_b_ws, p_a_iw / p_a_ih and p_b_iw /
// p_b_ih (1 / the texture's width and height); general mode also the
// output dims p_d0..p_d5 and element strides p_as*, p_bs* (0 = broadcast);
// mode 4: p_bn4 (texels per row of b); modes 5 and 6: p_inner, p_np.

vec4 tx_b_add(vec4 a, vec4 b) { return a + b; }
vec4 tx_b_sub(vec4 a, vec4 b) { return a - b; }
vec4 tx_b_mul(vec4 a, vec4 b) { return a * b; }
vec4 tx_b_div(vec4 a, vec4 b) {
#ifdef TX_INT
  return trunc(tx_div(a, b));
#else
  return tx_div(a, b);
#endif
}
// pow with C99 / IEEE 754 special cases (Annex F): x^0 = 1 and 1^y = 1 even
// for NaN; (-1)^+-inf = 1; |x| < 1 vs > 1 decides x^+-inf; a negative finite
// base with a non-integer exponent is NaN; odd integer exponents keep the
// sign of -0 and -inf.
float tx_pow1(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;
  if (isnan(a) || isnan(b)) return a + b;
  // exact, where exp2(log2(a)) would round FLT_MAX up to inf
  if (b == 1.0) return a;
  float aa = abs(a);
  if (isinf(b)) {
    if (aa == 1.0) return 1.0;
    return (aa < 1.0) == (b > 0.0) ? 0.0 : tx_inf();
  }
  bool b_int = floor(b) == b;
  bool b_odd = b_int && mod(b, 2.0) == 1.0;
  if (a < 0.0 && !b_int && !isinf(a)) return tx_nan();
  float r;
  if (aa == 0.0) r = b > 0.0 ? 0.0 : tx_inf();
  else if (isinf(aa)) r = b > 0.0 ? tx_inf() : 0.0;
  else r = exp2(b * log2(aa));
#ifdef TX_INT
  r = round(r);
#endif
  // the sign bit, so that -0 counts as negative
  if (b_odd && (floatBitsToUint(a) & 0x80000000u) != 0u) r = -r;
  return r;
}
vec4 tx_b_pow(vec4 a, vec4 b) {
  return vec4(tx_pow1(a.x, b.x), tx_pow1(a.y, b.y), tx_pow1(a.z, b.z), tx_pow1(a.w, b.w));
}
bvec4 tx_either_nan(vec4 a, vec4 b) {
  return bvec4(uvec4(isnan(a)) | uvec4(isnan(b)));
}
vec4 tx_b_min(vec4 a, vec4 b) { return mix(min(a, b), a + b, tx_either_nan(a, b)); }
vec4 tx_b_max(vec4 a, vec4 b) { return mix(max(a, b), a + b, tx_either_nan(a, b)); }

// prelu: b is the slope; logic ops treat nonzero (NaN too) as true; the
// comparisons give 0/1 and are false for NaN, as IEEE says
vec4 tx_b_prelu(vec4 a, vec4 b) { return mix(a, a * b, lessThan(a, vec4(0.0))); }
vec4 tx_b_and(vec4 a, vec4 b) {
  return vec4(uvec4(notEqual(a, vec4(0.0))) & uvec4(notEqual(b, vec4(0.0))));
}
vec4 tx_b_or(vec4 a, vec4 b) {
  return vec4(uvec4(notEqual(a, vec4(0.0))) | uvec4(notEqual(b, vec4(0.0))));
}
vec4 tx_b_xor(vec4 a, vec4 b) {
  return vec4(uvec4(notEqual(a, vec4(0.0))) ^ uvec4(notEqual(b, vec4(0.0))));
}
vec4 tx_b_equal(vec4 a, vec4 b) { return vec4(equal(a, b)); }
vec4 tx_b_less(vec4 a, vec4 b) { return vec4(lessThan(a, b)); }
vec4 tx_b_greater(vec4 a, vec4 b) { return vec4(greaterThan(a, b)); }
vec4 tx_b_less_equal(vec4 a, vec4 b) { return vec4(lessThanEqual(a, b)); }
vec4 tx_b_greater_equal(vec4 a, vec4 b) { return vec4(greaterThanEqual(a, b)); }

// Texel t of a or b: at the fragment's own position where its texture is as
// wide as the output's (TX_A_HERE, TX_B_HERE), else by texture() at t.
vec4 tx_a(int t, vec2 inv) {
#ifdef TX_A_HERE
  return tx_texel_here(u_in0, inv);
#else
  return tx_texel_n(u_in0, t, p_a_ws, inv);
#endif
}
vec4 tx_b(int t, vec2 inv) {
#ifdef TX_B_HERE
  return tx_texel_here(u_in1, inv);
#else
  return tx_texel_n(u_in1, t, p_b_ws, inv);
#endif
}

#if TX_MODE == 0
int tx_src_index(int i, out int bi) {
  int r = i;
  int ai = 0;
  bi = 0;
  int c;
  c = r % p_d5; r /= p_d5; ai += c * p_as5; bi += c * p_bs5;
  c = r % p_d4; r /= p_d4; ai += c * p_as4; bi += c * p_bs4;
  c = r % p_d3; r /= p_d3; ai += c * p_as3; bi += c * p_bs3;
  c = r % p_d2; r /= p_d2; ai += c * p_as2; bi += c * p_bs2;
  c = r % p_d1; r /= p_d1; ai += c * p_as1; bi += c * p_bs1;
  ai += r * p_as0; bi += r * p_bs0;
  return ai;
}
#endif

#if TX_MODE == 5 || TX_MODE == 6
// Element i of the per-channel operand.
float tx_part(int i) {
#if TX_MODE == 5
  return tx_elem_n(u_in1, i, p_b_ws, vec2(p_b_iw, p_b_ih));
#else
  return tx_elem_n(u_in0, i, p_a_ws, vec2(p_a_iw, p_a_ih));
#endif
}
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
#if TX_MODE != 0
  vec2 ia = vec2(p_a_iw, p_a_ih), ib = vec2(p_b_iw, p_b_ih);
#endif
#if TX_MODE == 1
  o0 = TX_OP(tx_a(t, ia), tx_b(t, ib));
#elif TX_MODE == 2
  o0 = TX_OP(tx_a(t, ia), vec4(texture(u_in1, 0.5 * ib).x));
#elif TX_MODE == 3
  o0 = TX_OP(vec4(texture(u_in0, 0.5 * ia).x), tx_b(t, ib));
#elif TX_MODE == 4
  o0 = TX_OP(tx_a(t, ia), tx_texel_n(u_in1, t % p_bn4, p_b_ws, ib));
#elif TX_MODE == 5 || TX_MODE == 6
  // the per-channel operand: one element for the texel's 4 where p_inner
  // is a multiple of 4 (a uniform's test, a constant once specialized),
  // else one per lane (lanes past p_n read a valid index, never stored)
  vec4 v;
  if ((p_inner & 3) == 0) {
    v = vec4(tx_part((t * 4 / p_inner) % p_np));
  } else {
    for (int j = 0; j < 4; j++) v[j] = tx_part((t * 4 + j) / p_inner % p_np);
  }
#if TX_MODE == 5
  o0 = TX_OP(tx_a(t, ia), v);
#else
  o0 = TX_OP(v, tx_b(t, ib));
#endif
#else
  vec4 a, b;
  for (int j = 0; j < 4; j++) {
    int i = t * 4 + j;
    int bi;
    int ai = tx_src_index(i < p_n ? i : 0, bi);
    a[j] = tx_elem(u_in0, ai, p_a_ws);
    b[j] = tx_elem(u_in1, bi, p_b_ws);
  }
  o0 = TX_OP(a, b);
#endif
}
