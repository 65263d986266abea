// A tiny ONNX protobuf writer for the browser tests (the C tests have theirs in
// tests/onnx_test.c): enough for ModelProto → GraphProto → nodes, float
// initializers and typed inputs/outputs with symbolic dims.
const enc = new TextEncoder();

class Buf {
  constructor() { this.bytes = []; }
  varint(v) {
    let x = BigInt.asUintN(64, BigInt(v));
    do {
      let c = Number(x & 127n);
      x >>= 7n;
      if (x) c |= 128;
      this.bytes.push(c);
    } while (x);
  }
  key(field, wire) { this.varint((field << 3) | wire); }
  int(field, v) { this.key(field, 0); this.varint(v); }
  raw(field, u8) { this.key(field, 2); this.varint(u8.length); for (const b of u8) this.bytes.push(b); }
  str(field, s) { this.raw(field, enc.encode(s)); }
  msg(field, b) { this.raw(field, b.bytes); }
  get u8() { return Uint8Array.from(this.bytes); }
}

const FLOAT = 1;

function valueInfo(name, dims) {
  const shape = new Buf();
  for (const d of dims) {
    const dim = new Buf();
    if (typeof d === 'string') dim.str(2, d); else dim.int(1, d);
    shape.msg(1, dim);
  }
  const tt = new Buf();
  tt.int(1, FLOAT);
  tt.msg(2, shape);
  const type = new Buf();
  type.msg(1, tt);
  const vi = new Buf();
  vi.str(1, name);
  vi.msg(2, type);
  return vi;
}

/**
 * onnxModel({inputs: [[name, dims]], outputs: [[name, dims]],
 *            inits: [[name, dims, Float32Array]], nodes: [[op, [ins], [outs]]]})
 * → Uint8Array of a ModelProto (opset 13).
 */
export function onnxModel({ inputs, outputs, inits = [], nodes }) {
  const g = new Buf();
  nodes.forEach(([op, ins, outs], i) => {
    const n = new Buf();
    for (const s of ins) n.str(1, s);
    for (const s of outs) n.str(2, s);
    n.str(3, `${op.toLowerCase()}${i}`);
    n.str(4, op);
    g.msg(1, n);
  });
  g.str(2, 'test');
  for (const [name, dims, values] of inits) {
    const t = new Buf();
    for (const d of dims) t.int(1, d);
    t.int(2, FLOAT);
    t.str(8, name);
    t.raw(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
    g.msg(5, t);
  }
  for (const [name, dims] of inputs) g.msg(11, valueInfo(name, dims));
  for (const [name, dims] of outputs) g.msg(12, valueInfo(name, dims));
  const m = new Buf();
  m.int(1, 8);
  const os = new Buf();
  os.int(2, 13);
  m.msg(8, os);
  m.msg(7, g);
  return m.u8;
}
