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

// Index i of a row-major [*, n1, n2] grid -> its coordinates (i0, i1, i2).
ivec3 tx_split3(int i, int n1, int n2) {
  int per = n1 * n2;
  int i0 = i / per;
  int r = i - i0 * per;
  int i1 = r / n2;
  return ivec3(i0, i1, r - i1 * n2);
}

float tx_lane(vec4 v, int c) { return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w)); }

float tx_elem(highp sampler2D s, int i, int ws) { return tx_lane(tx_texel(s, i >> 2, ws), i & 3); }

float tx_nan() { return uintBitsToFloat(0x7fc00000u); }
float tx_inf() { return uintBitsToFloat(0x7f800000u); }
