// glsl-templates/unary.glsl: one output texel per fragment, y = f(x), lanewise.
// Families UNARY and CLIP. Structural: TX_FN (a function of
// shaders/elementwise.glsl); TX_HERE where the input's texture is as wide as
// the output's (texel t at the fragment's own position). Params: p_ntex
// (texels in use), p_out_ws, p_in_ws, p_in_iw and p_in_ih (1 / the input
// texture's width and height); CLIP adds p_lo, p_hi.

void main() {
  TX_OUTPUT_TEXEL(t)
  vec2 inv = vec2(p_in_iw, p_in_ih);
#ifdef TX_HERE
  o0 = TX_FN(tx_texel_here(u_in0, inv));
#else
  o0 = TX_FN(tx_texel_n(u_in0, t, p_in_ws, inv));
#endif
}
