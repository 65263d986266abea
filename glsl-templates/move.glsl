// glsl-templates/move.glsl: data movement; each output element reads one
// input element at an index computed from its coordinates. One output texel
// (4 elements) per fragment. Three kinds (TX_KIND):
//
// 0 map: transpose, slice, pad, expand, tile, depth/space, split. The host
//   merges the output into TX_NDIM (1..6) dims numbered from the innermost
//   (0) out. Dim d has size p_od<d> (the outermost needs none) and input
//   stride p_st<d>; the source index is p_base + sum(o_d * p_st<d>). Dims in
//   the bit mask TX_BMASK (bit d) first map o_d to c = o_d * p_mul<d> +
//   p_off<d> and send c through the border rule TX_BMODE (1 constant
//   p_value, 2 reflect, 3 edge, 4 wrap) against the input extent p_in<d>,
//   then add c * p_st<d>; with TX_BMASK != 0 every used dim declares
//   p_mul/p_off/p_in (the dead branch must compile).
//   TX_VEC: 0 per lane; 1 the inner dim is contiguous, aligned to texels:
//   one texel copy; 2 contiguous but unaligned: two fetches and a lane
//   shift; 3 the inner dim is broadcast (stride 0): one fetch for 4 lanes.
// 1 concat: the output is [outer, p_L]; input k (u_in<k>, k < TX_NIN) covers
//   row elements [p_b<k>, p_b<k> + p_l<k>) and has rows of p_l<k>. TX_PREV:
//   u_in0 is the partial result of an earlier draw (same shape as the
//   output) and fills what this draw's inputs do not cover. TX_VEC 1: every
//   row and region is a whole number of texels (all in texels then).
// 2 gather: output [outer, p_nidx, p_inner]; element (o, j, c) reads
//   u_in0 at (o * p_dim + idx) * p_inner + c, idx = u_in1[j] (negative
//   counts from the end; clamped to [0, p_dim - 1]). TX_VEC 1: p_inner % 4
//   == 0, whole texels.
// Common params: p_n (output elements), p_ntex, p_out_ws, p_ws<k> (input k).

#if TX_KIND == 0

#if TX_BMASK != 0
// Maps coordinate c into [0, n) by the border rule; false: constant fill.
// (GLSL leaves % of negative operands undefined: fold the sign first.)
bool tx_border(inout int c, int n) {
  if (c >= 0 && c < n) return true;
#if TX_BMODE == 1
  return false;
#elif TX_BMODE == 2
  // reflection is an even triangle wave of period 2(n - 1)
  if (n == 1) { c = 0; return true; }
  int p = 2 * (n - 1);
  c = abs(c) % p;
  if (c >= n) c = p - c;
  return true;
#elif TX_BMODE == 3
  c = clamp(c, 0, n - 1);
  return true;
#else
  if (c < 0) c += n * ((n - 1 - c) / n);
  c = c % n;
  return true;
#endif
}
void tx_dim(int bit, int o, int mul, int off, int n, int st, inout int src, inout bool inside) {
  if ((TX_BMASK & bit) != 0) {
    int c = o * mul + off;
    inside = tx_border(c, n) && inside;
    src += c * st;
  } else {
    src += o * st;
  }
}
// (macros stay on one line: no reliance on line continuation)
#define TX_DIM(BIT, O, MUL, OFF, IN, ST) tx_dim(BIT, O, MUL, OFF, IN, ST, src, inside);
#else
#define TX_DIM(BIT, O, MUL, OFF, IN, ST) src += (O) * (ST);
#endif

// Source index of output element i; inside = false: the constant fill.
int tx_src(int i, out bool inside) {
  inside = true;
  int src = p_base;
  int r = i;
  int o;
#if TX_NDIM == 1
  TX_DIM(1, r, p_mul0, p_off0, p_in0, p_st0)
#else
  o = r % p_od0; r /= p_od0;
  TX_DIM(1, o, p_mul0, p_off0, p_in0, p_st0)
#endif
#if TX_NDIM == 2
  TX_DIM(2, r, p_mul1, p_off1, p_in1, p_st1)
#elif TX_NDIM > 2
  o = r % p_od1; r /= p_od1;
  TX_DIM(2, o, p_mul1, p_off1, p_in1, p_st1)
#endif
#if TX_NDIM == 3
  TX_DIM(4, r, p_mul2, p_off2, p_in2, p_st2)
#elif TX_NDIM > 3
  o = r % p_od2; r /= p_od2;
  TX_DIM(4, o, p_mul2, p_off2, p_in2, p_st2)
#endif
#if TX_NDIM == 4
  TX_DIM(8, r, p_mul3, p_off3, p_in3, p_st3)
#elif TX_NDIM > 4
  o = r % p_od3; r /= p_od3;
  TX_DIM(8, o, p_mul3, p_off3, p_in3, p_st3)
#endif
#if TX_NDIM == 5
  TX_DIM(16, r, p_mul4, p_off4, p_in4, p_st4)
#elif TX_NDIM > 5
  o = r % p_od4; r /= p_od4;
  TX_DIM(16, o, p_mul4, p_off4, p_in4, p_st4)
  TX_DIM(32, r, p_mul5, p_off5, p_in5, p_st5)
#endif
#if TX_BMODE == 1
  if (!inside) src = 0;  // never fetch outside the texture
#endif
  return src;
}

#if TX_BMODE == 1
#define TX_FILL(v, inside) ((inside) ? (v) : p_value)
#else
#define TX_FILL(v, inside) (v)
#endif

void main() {
  TX_OUTPUT_TEXEL(t)
#if TX_VEC == 0
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++) {
    int i = t * 4 + j;
    if (i < p_n) {
      bool inside;
      int s = tx_src(i, inside);
      v[j] = TX_FILL(tx_elem(u_in0, s, p_ws0), inside);
    }
  }
  o0 = v;
#else
  // The 4 lanes share every outer coordinate (the inner dim is a multiple of
  // 4 long), so one source index and one border test serve them all.
  bool inside;
  int s = tx_src(t * 4, inside);
#if TX_VEC == 1
  vec4 v = tx_texel(u_in0, s >> 2, p_ws0);
#elif TX_VEC == 2
  int q = s >> 2;
  int k = s & 3;
  vec4 a = tx_texel(u_in0, q, p_ws0);
  vec4 v = a;
  if (k != 0) {
    vec4 b = tx_texel(u_in0, q + 1, p_ws0);
    v = k == 1 ? vec4(a.yzw, b.x) : (k == 2 ? vec4(a.zw, b.xy) : vec4(a.w, b.xyz));
  }
#else
  vec4 v = vec4(tx_elem(u_in0, s, p_ws0));
#endif
#if TX_BMODE == 1
  if (!inside) v = vec4(p_value);
#endif
  o0 = v;
#endif
}

#elif TX_KIND == 1

#if TX_VEC == 1
#define TX_READ(S, I, WS) tx_texel(S, I, WS)
#define TX_VALUE vec4
#else
#define TX_READ(S, I, WS) tx_elem(S, I, WS)
#define TX_VALUE float
#endif

// Value of output element (or texel, TX_VEC) i from this draw's inputs.
// One header for both (TX_VALUE): codegen's trimming finds a function by
// its header, which may not differ between conditional branches.
TX_VALUE tx_concat(int i) {
  TX_VALUE v = TX_VALUE(0.0);
  int o = i / p_L;
  int r = i - o * p_L;
#if TX_PREV
  bool done = false;
#define TX_TAKE(S, B, L, WS) if (r >= (B) && r < (B) + (L)) { v = TX_READ(S, o * (L) + r - (B), WS); done = true; }
#else
#define TX_TAKE(S, B, L, WS) if (r >= (B) && r < (B) + (L)) v = TX_READ(S, o * (L) + r - (B), WS);
#endif
#if TX_PREV
#if TX_NIN > 1
  TX_TAKE(u_in1, p_b1, p_l1, p_ws1)
#endif
#if TX_NIN > 2
  TX_TAKE(u_in2, p_b2, p_l2, p_ws2)
#endif
#if TX_NIN > 3
  TX_TAKE(u_in3, p_b3, p_l3, p_ws3)
#endif
  if (!done) v = TX_READ(u_in0, i, p_ws0);
#else
  TX_TAKE(u_in0, p_b0, p_l0, p_ws0)
#if TX_NIN > 1
  TX_TAKE(u_in1, p_b1, p_l1, p_ws1)
#endif
#if TX_NIN > 2
  TX_TAKE(u_in2, p_b2, p_l2, p_ws2)
#endif
#if TX_NIN > 3
  TX_TAKE(u_in3, p_b3, p_l3, p_ws3)
#endif
#endif
  return v;
}

void main() {
  TX_OUTPUT_TEXEL(t)
#if TX_VEC == 1
  o0 = tx_concat(t);
#else
  vec4 v = vec4(0.0);
  for (int j = 0; j < 4; j++) {
    int i = t * 4 + j;
    if (i < p_n) v[j] = tx_concat(i);
  }
  o0 = v;
#endif
}

#else  // TX_KIND == 2: gather

int tx_gather_index(int j) {
  int k = int(tx_elem(u_in1, j, p_ws1));
  if (k < 0) k += p_dim;
  return clamp(k, 0, p_dim - 1);
}

void main() {
  TX_OUTPUT_TEXEL(t)
#if TX_VEC == 1
  // whole texels: p_inner4 texels per index
  int o = t / (p_nidx * p_inner4);
  int r = t - o * (p_nidx * p_inner4);
  int j = r / p_inner4;
  int c = r - j * p_inner4;
  o0 = tx_texel(u_in0, (o * p_dim + tx_gather_index(j)) * p_inner4 + c, p_ws0);
#else
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; l++) {
    int i = t * 4 + l;
    if (i < p_n) {
      int o = i / (p_nidx * p_inner);
      int r = i - o * (p_nidx * p_inner);
      int j = r / p_inner;
      int c = r - j * p_inner;
      v[l] = tx_elem(u_in0, (o * p_dim + tx_gather_index(j)) * p_inner + c, p_ws0);
    }
  }
  o0 = v;
#endif
}

#endif
