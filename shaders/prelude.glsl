// shaders/prelude.glsl: index <-> texel math shared by every template.
// A tensor is row-major; element i lives in texel i/4, lane i%4; texel t of a
// texture of width 2^ws sits at (t & (2^ws - 1), t >> ws).

ivec2 tx_coord(int t, int ws) { return ivec2(t & ((1 << ws) - 1), t >> ws); }

// The texel index this fragment writes (outputs share one width).
int tx_frag_texel(int ws) {
  ivec2 p = ivec2(gl_FragCoord.xy);
  return (p.y << ws) | p.x;
}

vec4 tx_texel(highp sampler2D s, int t, int ws) { return texelFetch(s, tx_coord(t, ws), 0); }

float tx_lane(vec4 v, int c) { return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w)); }

float tx_elem(highp sampler2D s, int i, int ws) { return tx_lane(tx_texel(s, i >> 2, ws), i & 3); }

float tx_nan() { return uintBitsToFloat(0x7fc00000u); }
float tx_inf() { return uintBitsToFloat(0x7f800000u); }
