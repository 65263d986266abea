// glsl-templates/reduce.glsl: tree reduction over any subset of axes.
//
// The C side canonicalizes x into up to 3 kept groups (sizes p_k*, element
// strides p_ks*) and up to 3 reduced groups (p_r*, p_rs*), leading ones padded
// with size 1. Output o (row-major over the kept groups) reduces the flat
// reduction index j in [0, p_R) (row-major over the reduced groups).
//
// A reduction runs in passes. A *partial* pass (TX_DST 0) writes one state
// texel per fragment: fragment t reduces chunk t % p_P (p_C consecutive j) of
// output t / p_P. Later passes (TX_SRC 1) read those states, p_Pin per output,
// and merge them in order, so ArgMax's first/last index is exact. The *final*
// pass (TX_DST 1) writes 4 finished outputs per texel, one per lane.
//
// Structural: TX_ACC (accumulator: TX_ACC_SUM, _SUMSQ, _PROD, _MAX, _MIN,
// _LSE, _ARGMAX, _ARGMIN, _MOMENTS, _L1), TX_FIN (final value: 0 s.x, 1 s.x /
// R, 2 sqrt(s.x), 3 s.x + log(s.y), 4 index s.y, 5 log(s.x)), TX_SRC (0 x, 1 states),
// TX_DST (0 states, 1 final values), TX_VEC (source x whose innermost reduced
// group is contiguous with p_r2 % 4 == 0: whole texels per step), TX_KVEC
// (the innermost kept group is contiguous with p_k2 % 4 == 0 and the state
// is one value: a texel packs the states of 4 adjacent outputs, "output" o
// below is then a quad, and each fetch serves all 4), TX_LAST
// (ArgMax/ArgMin select_last_index).
// States: SUM/SUMSQ/PROD/MAX/MIN (acc, -), LSE (running max m, sum of
// exp(x - m)), ARG* (best value, index; index < 0 = empty), MOMENTS (sum and
// sum of squares of x - K, K, -) with K = the group's first element, so the
// variance does not cancel catastrophically.
// Params: p_ntex, p_out_ws, p_in_ws, p_nout (outputs), p_R, p_C, p_P, p_Pin,
// p_k1, p_k2, p_ks0..2, p_r1, p_r2, p_rs0..2.

const int ACC_SUM = 0;
const int ACC_SUMSQ = 1;
const int ACC_PROD = 2;
const int ACC_MAX = 3;
const int ACC_MIN = 4;
const int ACC_LSE = 5;
const int ACC_ARGMAX = 6;
const int ACC_ARGMIN = 7;
const int ACC_MOMENTS = 8;
const int ACC_L1 = 9;

float g_K; // MOMENTS shift for the current output

vec4 r_init() {
  if (TX_ACC == ACC_PROD) return vec4(1.0, 0.0, 0.0, 0.0);
  if (TX_ACC == ACC_MAX) return vec4(-tx_inf(), 0.0, 0.0, 0.0);
  if (TX_ACC == ACC_MIN) return vec4(tx_inf(), 0.0, 0.0, 0.0);
  if (TX_ACC == ACC_LSE) return vec4(-tx_inf(), 0.0, 0.0, 0.0);
  if (TX_ACC == ACC_ARGMAX || TX_ACC == ACC_ARGMIN) return vec4(0.0, -1.0, 0.0, 0.0);
  return vec4(0.0, 0.0, g_K, 0.0);
}

// Does value x (at a later index) replace the current best b? NaN beats
// every number, as in numpy (the first NaN, or the last with TX_LAST).
bool r_better(float x, float b) {
#ifdef TX_LAST
  if (isnan(b)) return isnan(x);
#else
  if (isnan(b)) return false;
#endif
  if (isnan(x)) return true;
#if TX_ACC == 6
#ifdef TX_LAST
  return x >= b;
#else
  return x > b;
#endif
#else
#ifdef TX_LAST
  return x <= b;
#else
  return x < b;
#endif
#endif
}

void r_add(inout vec4 s, float x, int j) {
#if TX_ACC == 0
  s.x += x;
#elif TX_ACC == 1
  s.x += x * x;
#elif TX_ACC == 9
  s.x += abs(x);
#elif TX_ACC == 2
  s.x *= x;
#elif TX_ACC == 3
  if (x > s.x || isnan(x)) s.x = x;
#elif TX_ACC == 4
  if (x < s.x || isnan(x)) s.x = x;
#elif TX_ACC == 5
  if (x > s.x) {
    s.y = s.y * exp(s.x - x) + 1.0;
    s.x = x;
  } else if (x != -tx_inf()) {
    s.y += exp(x - s.x);
  }
#elif TX_ACC == 6 || TX_ACC == 7
  if (s.y < 0.0 || r_better(x, s.x)) s = vec4(x, float(j), 0.0, 0.0);
#else
  float d = x - s.z;
  s.x += d;
  s.y += d * d;
#endif
}

void r_add4(inout vec4 s, vec4 v, int j) {
#if TX_ACC == 0
  s.x += (v.x + v.y) + (v.z + v.w);
#elif TX_ACC == 1
  s.x += dot(v, v);
#elif TX_ACC == 9
  s.x += dot(abs(v), vec4(1.0));
#elif TX_ACC == 8
  vec4 d = v - s.z;
  s.x += (d.x + d.y) + (d.z + d.w);
  s.y += dot(d, d);
#else
  r_add(s, v.x, j);
  r_add(s, v.y, j + 1);
  r_add(s, v.z, j + 2);
  r_add(s, v.w, j + 3);
#endif
}

// Merges state t (covering later indices) into s.
void r_merge(inout vec4 s, vec4 t) {
#if TX_ACC == 0 || TX_ACC == 1 || TX_ACC == 8 || TX_ACC == 9
  s.xy += t.xy;
#elif TX_ACC == 2
  s.x *= t.x;
#elif TX_ACC == 3 || TX_ACC == 4
  r_add(s, t.x, 0);
#elif TX_ACC == 5
  if (t.y == 0.0 && !isnan(t.x)) return;
  float m = max(s.x, t.x);
  if (isnan(s.x) || isnan(t.x)) {
    s = vec4(tx_nan());
    return;
  }
  float fs = s.x == m ? 1.0 : exp(s.x - m);
  float ft = t.x == m ? 1.0 : exp(t.x - m);
  s.y = s.y * fs + t.y * ft;
  s.x = m;
#else
  if (t.y < 0.0) return;
  if (s.y < 0.0 || r_better(t.x, s.x)) s = t;
#endif
}

float r_final(vec4 s) {
#if TX_FIN == 1
  return s.x / float(p_R);
#elif TX_FIN == 2
  return sqrt(s.x);
#elif TX_FIN == 3
  return s.x + tx_u_log(vec4(s.y)).x; // log(0) = -inf, log(<0) = NaN on every driver
#elif TX_FIN == 4
  return max(s.y, 0.0);
#elif TX_FIN == 5
  return tx_u_log(vec4(s.x)).x;
#else
  return s.x;
#endif
}

#ifdef TX_KVEC
// Lane l of a state texel holds output 4o + l's (scalar) state.
void r_lanes_add(inout vec4 s, vec4 v, int j) {
  for (int l = 0; l < 4; l++) {
    vec4 st = vec4(s[l], 0.0, 0.0, 0.0);
    r_add(st, v[l], j);
    s[l] = st.x;
  }
}
void r_lanes_merge(inout vec4 s, vec4 t) {
  for (int l = 0; l < 4; l++) {
    vec4 st = vec4(s[l], 0.0, 0.0, 0.0);
    r_merge(st, vec4(t[l], 0.0, 0.0, 0.0));
    s[l] = st.x;
  }
}
#endif

#if TX_SRC == 0
// Element offset of the first element of output o.
int r_base(int o) {
  int c2 = o % p_k2;
  int q = o / p_k2;
  int c1 = q % p_k1;
  int c0 = q / p_k1;
  return c0 * p_ks0 + c1 * p_ks1 + c2 * p_ks2;
}

vec4 r_range(int o, int j0, int j1) {
#ifdef TX_KVEC
  int base = r_base(o * 4);
  vec4 s = vec4(r_init().x);
#else
  int base = r_base(o);
  g_K = TX_ACC == ACC_MOMENTS ? tx_elem(u_in0, base, p_in_ws) : 0.0;
  vec4 s = r_init();
#endif
  int c2 = j0 % p_r2;
  int q = j0 / p_r2;
  int c1 = q % p_r1;
  int c0 = q / p_r1;
  int off = base + c0 * p_rs0 + c1 * p_rs1 + c2 * p_rs2;
#ifdef TX_VEC
  // Contiguous, texel-aligned: p_rs2 == 1, p_r2 % 4 == 0, j0 % 4 == 0.
  for (int j = j0; j < j1; j += 4) {
    r_add4(s, tx_texel_n(u_in0, off >> 2, p_in_ws, vec2(p_in_iw, p_in_ih)), j);
    c2 += 4;
    off += 4;
#elif defined(TX_KVEC)
  // The 4 outputs' elements are adjacent in one texel (p_ks2 == 1, p_k2 % 4 == 0).
  for (int j = j0; j < j1; j++) {
    r_lanes_add(s, tx_texel_n(u_in0, off >> 2, p_in_ws, vec2(p_in_iw, p_in_ih)), j);
    c2++;
    off += p_rs2;
#else
  for (int j = j0; j < j1; j++) {
    r_add(s, tx_elem_n(u_in0, off, p_in_ws, vec2(p_in_iw, p_in_ih)), j);
    c2++;
    off += p_rs2;
#endif
    if (c2 == p_r2) {
      c2 = 0;
      off += p_rs1 - p_r2 * p_rs2;
      c1++;
      if (c1 == p_r1) {
        c1 = 0;
        off += p_rs0 - p_r1 * p_rs1;
      }
    }
  }
  return s;
}
#else
vec4 r_range(int o, int j0, int j1) {
  int t = o * p_Pin + j0;
  vec4 s = tx_texel_n(u_in0, t, p_in_ws, vec2(p_in_iw, p_in_ih));
  for (int j = j0 + 1; j < j1; j++) {
#ifdef TX_KVEC
    r_lanes_merge(s, tx_texel_n(u_in0, ++t, p_in_ws, vec2(p_in_iw, p_in_ih)));
#else
    r_merge(s, tx_texel_n(u_in0, ++t, p_in_ws, vec2(p_in_iw, p_in_ih)));
#endif
  }
  return s;
}
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
#if TX_SRC == 0
  int n = p_R;
#else
  int n = p_Pin;
#endif
#if TX_DST == 0
  int o = t / p_P;
  int j0 = (t - o * p_P) * p_C;
  o0 = r_range(o, j0, min(j0 + p_C, n));
#elif defined(TX_KVEC)
  vec4 s = r_range(t, 0, n);
  vec4 r;
  for (int l = 0; l < 4; l++) r[l] = r_final(vec4(s[l], 0.0, 0.0, 0.0));
  o0 = r;
#else
  vec4 r = vec4(0.0);
  for (int l = 0; l < 4; l++) {
    int o = t * 4 + l;
    if (o < p_nout) r[l] = r_final(r_range(o, 0, n));
  }
  o0 = r;
#endif
}
