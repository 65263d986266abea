// glsl-templates/softmax.glsl: the last pass of softmax / log_softmax. The
// reduction passes (reduce.glsl, TX_ACC_LSE) left one state texel per row:
// (m = row max, s = sum of exp(x - m)). x is viewed as [A, p_R, p_B] and row
// o = a * p_B + b. One output texel per fragment.
// Structural: TX_LOG (log_softmax), TX_ROWVEC (p_B == 1 and p_R % 4 == 0: a
// texel lies in one row, one state fetch per texel), TX_HERE (x's texture is
// as wide as the output's: x's texel at the fragment's own position).
// Params: p_ntex, p_out_ws, p_in_ws, p_st_ws, p_n, p_R, p_B; p_in_iw, p_in_ih,
// p_st_iw, p_st_ih (1 / the textures' widths and heights).

vec4 sm_apply(vec4 x, vec4 m, vec4 s) {
#ifdef TX_LOG
  return x - m - log(s);
#else
  return exp(x - m) / s;
#endif
}

void main() {
  TX_OUTPUT_TEXEL(t)
#ifdef TX_HERE
  vec4 x = tx_texel_here(u_in0, vec2(p_in_iw, p_in_ih));
#else
  vec4 x = tx_texel_n(u_in0, t, p_in_ws, vec2(p_in_iw, p_in_ih));
#endif
  vec2 st_inv = vec2(p_st_iw, p_st_ih);
#ifdef TX_ROWVEC
  vec4 st = tx_texel_n(u_in1, (t * 4) / p_R, p_st_ws, st_inv);
  o0 = sm_apply(x, vec4(st.x), vec4(st.y));
#else
  vec4 m, s;
  for (int l = 0; l < 4; l++) {
    int i = min(t * 4 + l, p_n - 1);
    int o = (i / (p_R * p_B)) * p_B + i % p_B;
    vec4 st = tx_texel_n(u_in1, o, p_st_ws, st_inv);
    m[l] = st.x;
    s[l] = st.y;
  }
  o0 = sm_apply(x, m, s);
#endif
}
