// shaders/prelude.glsl: index <-> texel math shared by every template.
// A tensor is row-major; element i lives in texel i/4, lane i%4; texel t of a
// texture of width 2^ws sits at (t & (2^ws - 1), t >> ws).

ivec2 tx_coord(int t, int ws) { return ivec2(t & ((1 << ws) - 1), t >> ws); }

// The texel index this fragment writes (outputs share one width).
int tx_frag_texel(int ws) {
  ivec2 p = ivec2(gl_FragCoord.xy);
  return (p.y << ws) | p.x;
}

// Opens a template's main(): declares int T, the output texel this fragment
// writes; a fragment past the last texel in use (p_ntex) zeroes every output
// (TX_ZERO_OUTPUTS, from codegen) and returns. A macro, because only the
// template declares p_out_ws and p_ntex; on one line, like every macro here.
#define TX_OUTPUT_TEXEL(T) int T = tx_frag_texel(p_out_ws); if (T >= p_ntex) { TX_ZERO_OUTPUTS return; }

vec4 tx_texel(highp sampler2D s, int t, int ws) { return texelFetch(s, tx_coord(t, ws), 0); }

// Texel t by texture() on the NEAREST sampler, inv = (1 / width, 1 / height)
// (tx_req_tex_inv): for hot loops. SwiftShader range-checks texelFetch; in a
// raw probe each further fetch of a fragment cost 2.2 ns, texture()'s 0.65.
vec4 tx_texel_n(highp sampler2D s, int t, int ws, vec2 inv) {
  return texture(s, (vec2(tx_coord(t, ws)) + 0.5) * inv);
}

// Index i of a row-major [*, n1, n2] grid -> its coordinates (i0, i1, i2).
ivec3 tx_split3(int i, int n1, int n2) {
  int per = n1 * n2;
  int i0 = i / per;
  int r = i - i0 * per;
  int i1 = r / n2;
  return ivec3(i0, i1, r - i1 * n2);
}

// Texel t of layer `layer` of an array texture, by texture() (as tx_texel_n).
vec4 tx_layer_texel_n(highp sampler2DArray s, int t, int ws, vec2 inv, int layer) {
  return texture(s, vec3((vec2(tx_coord(t, ws)) + 0.5) * inv, float(layer)));
}

// The texel at this fragment's own position in an input of the output's
// width (codegen checks the widths): no index math at all.
vec4 tx_texel_here(highp sampler2D s, vec2 inv) { return texture(s, gl_FragCoord.xy * inv); }

float tx_lane(vec4 v, int c) { return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w)); }

float tx_elem(highp sampler2D s, int i, int ws) { return tx_lane(tx_texel(s, i >> 2, ws), i & 3); }
float tx_elem_n(highp sampler2D s, int i, int ws, vec2 inv) { return tx_lane(tx_texel_n(s, i >> 2, ws, inv), i & 3); }

// Elements e .. e + 3 of a texture, wherever they start: the two texels
// that hold them, shifted (the second is not read from when e % 4 == 0).
vec4 tx_run(highp sampler2D s, int e, int ws) {
  int i = e >> 2, sh = e & 3;
  vec4 t0 = tx_texel(s, i, ws);
  if (sh == 0)
    return t0;
  vec4 t1 = tx_texel(s, i + 1, ws);
  return sh == 1 ? vec4(t0.yzw, t1.x) : (sh == 2 ? vec4(t0.zw, t1.xy) : vec4(t0.w, t1.xyz));
}

float tx_nan() { return uintBitsToFloat(0x7fc00000u); }
float tx_inf() { return uintBitsToFloat(0x7f800000u); }

// a / b. Where the driver's division is not correctly rounded (NVIDIA's
// GLSL multiplies by a reciprocal, which GLSL allows: 2.5 ulp, and turns
// inf / FLT_MAX into inf * 0 = NaN), codegen defines TX_EXACT_DIV and the
// quotient of the 24-bit significands comes from restoring long division in
// integers, rounded to nearest even: the IEEE 754 quotient, as the CPU device
// computes it. Subnormal operands count as zeros of their sign and
// quotients below the normal range flush to zero, as GLSL ES lets a device
// do; zeros, infinities and NaN follow IEEE 754.
#ifdef TX_EXACT_DIV
float tx_div(float a, float b) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  uint sign = (ua ^ ub) & 0x80000000u;
  uint ea = (ua >> 23) & 255u, eb = (ub >> 23) & 255u;
  bool a_nan = ea == 255u && (ua & 0x7fffffu) != 0u, b_nan = eb == 255u && (ub & 0x7fffffu) != 0u;
  if (a_nan || b_nan || (ea == 255u && eb == 255u) || (ea == 0u && eb == 0u)) return tx_nan();
  if (ea == 255u || eb == 0u) return uintBitsToFloat(sign | 0x7f800000u); // inf / x, x / 0
  if (ea == 0u || eb == 255u) return uintBitsToFloat(sign); // 0 / x, x / inf
  uint ma = (ua & 0x7fffffu) | 0x800000u, mb = (ub & 0x7fffffu) | 0x800000u;
  int e = int(ea) - int(eb) + 127;
  if (ma < mb) { ma <<= 1; e -= 1; } // ma / mb in [1, 2)
  uint r = ma, m = 0u;
  for (int i = 0; i < 25; i++) { // 24 significant bits and a guard bit; r < 2 mb < 2^25
    m <<= 1;
    if (r >= mb) { r -= mb; m |= 1u; }
    r <<= 1;
  }
  uint guard = m & 1u;
  m >>= 1;
  if (guard == 1u && (r != 0u || (m & 1u) == 1u)) m += 1u;
  if (m == 0x1000000u) { m >>= 1; e += 1; }
  if (e >= 255) return uintBitsToFloat(sign | 0x7f800000u);
  if (e <= 0) return uintBitsToFloat(sign);
  return uintBitsToFloat(sign | (uint(e) << 23) | (m & 0x7fffffu));
}
vec4 tx_div(vec4 a, vec4 b) {
  return vec4(tx_div(a.x, b.x), tx_div(a.y, b.y), tx_div(a.z, b.z), tx_div(a.w, b.w));
}
#else
float tx_div(float a, float b) { return a / b; }
vec4 tx_div(vec4 a, vec4 b) { return a / b; }
#endif
