// glsl-templates/unary.glsl: one output texel per fragment, y = f(x), lanewise.
// Families UNARY and CLIP. Structural: TX_FN (a function of
// shaders/elementwise.glsl). Params: p_ntex (texels in use), p_out_ws,
// p_in_ws; CLIP adds p_lo, p_hi.

void main() {
  TX_OUTPUT_TEXEL(t)
  o0 = TX_FN(tx_texel(u_in0, t, p_in_ws));
}
