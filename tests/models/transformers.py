#!/usr/bin/python3
"""Writes two small transformer graphs with the op patterns exporters produce
(torch.onnx / HF optimum, opset 17) and seeded random weights, plus inputs for
several sequence lengths, into OUTDIR (the cache; never the repository):

  bert.onnx   BERT-style encoder: word/position/token-type Gather embeddings,
              position ids from Shape -> Gather -> Range, the attention mask as
              (1 - Cast(Unsqueeze(mask))) * -10000, MatMul + Add projections,
              Reshape (to a Concat of Shape pieces) / Transpose into heads,
              scaled scores + mask, Softmax, Erf-GELU, LayerNormalization as the
              opset-17 op (embeddings, after the FFN) and decomposed (ReduceMean,
              Sub, Pow, Sqrt, Div after attention), a tanh pooler on token 0.
  gpt2.onnx   GPT-2-style decoder: token + position Gather embeddings, one
              fused QKV MatMul + Add split by Split, a causal mask sliced from a
              constant lower-triangular buffer (Slice with Shape-computed ends)
              applied by Where, the padding mask added, tanh-GELU (Pow 3),
              decomposed LayerNormalization before each block and the opset-17
              op at the end, and tied logits (MatMul with the transposed
              embedding table).

Both have symbolic dims "batch" and "sequence". For each (batch B, length L)
in SHAPES it writes OUTDIR/<model>-<B>x<L>/input.<name>.npy (int64 ids in
[0, vocab), a 0/1 mask with the last third of batch row 1 padded).

Usage: /usr/bin/python3 tests/models/transformers.py OUTDIR [SEED]
(python3-onnx and numpy from Debian; scripts/setup.sh installs them.)"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
SHAPES = ((2, 5), (1, 8), (3, 13), (1, 1))


class Graph:
    def __init__(self, name, rng):
        self.name, self.rng = name, rng
        self.nodes, self.inits, self.n = [], [], 0

    def uid(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def const(self, base, value):
        name = self.uid(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, base, shape, scale=0.02):
        return self.const(base, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.uid(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.uid(op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    # ---- patterns ----
    def dim(self, x, axis):
        """Shape(x)[axis] as a 0-d int64 (torch's size() export)."""
        return self.op("Gather", [self.op("Shape", [x]), self.const("axis", np.int64(axis))], axis=0)

    def unsq(self, x, axes):
        return self.op("Unsqueeze", [x, self.const("axes", np.array(axes, np.int64))])

    def linear(self, x, n_in, n_out):
        y = self.op("MatMul", [x, self.weight("w", (n_in, n_out))])
        return self.op("Add", [y, self.weight("b", (n_out,))])

    def layer_norm_op(self, x, h):
        g = self.const("ln_g", (1 + self.rng.standard_normal(h) * 0.1).astype(np.float32))
        b = self.weight("ln_b", (h,), 0.1)
        return self.op("LayerNormalization", [x, g, b], axis=-1, epsilon=1e-5)

    def layer_norm_decomposed(self, x, h):
        mean = self.op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [d, self.const("two", np.float32(2))])],
                      axes=[-1], keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.const("eps", np.float32(1e-5))])])
        y = self.op("Div", [d, std])
        g = self.const("ln_g", (1 + self.rng.standard_normal(h) * 0.1).astype(np.float32))
        return self.op("Add", [self.op("Mul", [y, g]), self.weight("ln_b", (h,), 0.1)])

    def gelu_erf(self, x):
        e = self.op("Erf", [self.op("Div", [x, self.const("sqrt2", np.float32(np.sqrt(2)))])])
        y = self.op("Mul", [x, self.op("Add", [e, self.const("one", np.float32(1))])])
        return self.op("Mul", [y, self.const("half", np.float32(0.5))])

    def gelu_tanh(self, x):
        c = self.op("Mul", [self.op("Pow", [x, self.const("three", np.float32(3))]),
                            self.const("k", np.float32(0.044715))])
        t = self.op("Tanh", [self.op("Mul", [self.op("Add", [x, c]),
                                             self.const("s", np.float32(np.sqrt(2 / np.pi)))])])
        y = self.op("Mul", [self.op("Mul", [x, self.const("half", np.float32(0.5))]),
                            self.op("Add", [t, self.const("one", np.float32(1))])])
        return y

    def heads(self, x, nh, hd, perm):
        """[B, S, H] -> [B, S, nh, hd] (shape from Shape pieces) -> Transpose perm."""
        b, s = self.unsq(self.dim(x, 0), [0]), self.unsq(self.dim(x, 1), [0])
        shape = self.op("Concat", [b, s, self.const("nh", np.array([nh], np.int64)),
                                   self.const("hd", np.array([hd], np.int64))], axis=0)
        return self.op("Transpose", [self.op("Reshape", [x, shape])], perm=perm)

    def merge_heads(self, x, h):
        """[B, nh, S, hd] -> [B, S, H] (Reshape to [0, 0, H]... as exporters with constants)."""
        t = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.op("Reshape", [t, self.const("shape", np.array([0, -1, h], np.int64))])

    def attention(self, q, k, v, nh, hd, bias):
        """q [B,nh,S,hd], k [B,nh,hd,S] (already transposed), v [B,nh,S,hd]."""
        s = self.op("MatMul", [q, k])
        s = self.op("Div", [s, self.const("scale", np.float32(np.sqrt(hd)))])
        s = bias(s)
        p = self.op("Softmax", [s], axis=-1)
        return self.op("MatMul", [p, v])

    def model(self, inputs, outputs):
        g = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="texel tests/models/transformers.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def ids_info(name):
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


def bert(rng, vocab=1000, h=64, nh=4, layers=2, ffn=256, max_pos=128, types=2):
    g, hd = Graph("bert", rng), h // nh
    ids, mask, tt = "input_ids", "attention_mask", "token_type_ids"
    seq = g.dim(ids, 1)
    pos = g.unsq(g.op("Range", [g.const("zero", np.int64(0)), seq, g.const("one", np.int64(1))]),
                 [0])
    x = g.op("Add", [g.op("Gather", [g.weight("wte", (vocab, h)), ids], axis=0),
                     g.op("Gather", [g.weight("wpe", (max_pos, h)), pos], axis=0)])
    x = g.op("Add", [x, g.op("Gather", [g.weight("tte", (types, h)), tt], axis=0)])
    x = g.layer_norm_op(x, h)
    m = g.op("Cast", [g.unsq(mask, [1, 2])], to=TensorProto.FLOAT)
    m = g.op("Mul", [g.op("Sub", [g.const("one", np.float32(1)), m]),
                     g.const("neg", np.float32(-10000))])
    for _ in range(layers):
        q = g.heads(g.linear(x, h, h), nh, hd, [0, 2, 1, 3])
        k = g.heads(g.linear(x, h, h), nh, hd, [0, 2, 3, 1])
        v = g.heads(g.linear(x, h, h), nh, hd, [0, 2, 1, 3])
        a = g.attention(q, k, v, nh, hd, lambda s: g.op("Add", [s, m]))
        a = g.linear(g.merge_heads(a, h), h, h)
        x = g.layer_norm_decomposed(g.op("Add", [a, x]), h)
        f = g.linear(g.gelu_erf(g.linear(x, h, ffn)), ffn, h)
        x = g.layer_norm_op(g.op("Add", [f, x]), h)
    first = g.op("Gather", [x, g.const("idx", np.int64(0))], axis=1)
    pooled = g.op("Tanh", [g.linear(first, h, h)])
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="out0"))
    g.nodes.append(helper.make_node("Identity", [pooled], ["pooler_output"], name="out1"))
    f32 = TensorProto.FLOAT
    return g.model([ids_info(ids), ids_info(mask), ids_info(tt)], [
        helper.make_tensor_value_info("last_hidden_state", f32, ["batch", "sequence", h]),
        helper.make_tensor_value_info("pooler_output", f32, ["batch", h])
    ]), {"input_ids": vocab, "attention_mask": None, "token_type_ids": types}


def gpt2(rng, vocab=1000, h=64, nh=4, layers=2, max_pos=128):
    g, hd = Graph("gpt2", rng), h // nh
    ids, mask = "input_ids", "attention_mask"
    wte = g.weight("wte", (vocab, h))
    seq = g.dim(ids, 1)
    pos = g.unsq(g.op("Range", [g.const("zero", np.int64(0)), seq, g.const("one", np.int64(1))]),
                 [0])
    x = g.op("Add", [g.op("Gather", [wte, ids], axis=0),
                     g.op("Gather", [g.weight("wpe", (max_pos, h)), pos], axis=0)])
    pad = g.op("Cast", [g.unsq(mask, [1, 2])], to=TensorProto.FLOAT)
    pad = g.op("Mul", [g.op("Sub", [g.const("one", np.float32(1)), pad]),
                       g.const("neg", np.float32(-10000))])
    causal = g.const("causal", np.tril(np.ones((1, 1, max_pos, max_pos), np.bool_)))

    def bias(s):
        q_len, k_len = g.unsq(g.dim(s, 2), [0]), g.unsq(g.dim(s, 3), [0])
        start = g.op("Sub", [k_len, q_len])
        c = g.op("Slice", [causal, start, k_len, g.const("ax", np.array([2], np.int64))])
        c = g.op("Slice", [c, g.const("z", np.array([0], np.int64)), k_len,
                           g.const("ax", np.array([3], np.int64))])
        s = g.op("Where", [c, s, g.const("minv", np.float32(-3.4028234663852886e38))])
        return g.op("Add", [s, pad])

    for _ in range(layers):
        y = g.layer_norm_decomposed(x, h)
        qkv = g.linear(y, h, 3 * h)
        q, k, v = g.op("Split", [qkv, g.const("split", np.array([h, h, h], np.int64))], n_out=3,
                       axis=2)
        q = g.heads(q, nh, hd, [0, 2, 1, 3])
        k = g.heads(k, nh, hd, [0, 2, 3, 1])
        v = g.heads(v, nh, hd, [0, 2, 1, 3])
        a = g.linear(g.merge_heads(g.attention(q, k, v, nh, hd, bias), h), h, h)
        x = g.op("Add", [x, a])
        y = g.layer_norm_decomposed(x, h)
        x = g.op("Add", [x, g.linear(g.gelu_tanh(g.linear(y, h, 4 * h)), 4 * h, h)])
    x = g.layer_norm_op(x, h)
    g.nodes.append(helper.make_node("MatMul", [x, g.op("Transpose", [wte], perm=[1, 0])],
                                    ["logits"], name="lm_head"))
    return g.model([ids_info(ids), ids_info(mask)], [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", vocab])
    ]), {"input_ids": vocab, "attention_mask": None}


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 14
    os.makedirs(out, exist_ok=True)
    for name, build in (("bert", bert), ("gpt2", gpt2)):
        rng = np.random.default_rng(seed)
        model, inputs = build(rng)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        for b, n in SHAPES:
            d = os.path.join(out, "%s-%dx%d" % (name, b, n))
            os.makedirs(d, exist_ok=True)
            for inp, hi in inputs.items():
                if hi is None:  # the mask: row 1 padded at its end
                    v = np.ones((b, n), np.int64)
                    if b > 1:
                        v[1, n - n // 3:] = 0
                else:
                    v = rng.integers(0, hi, (b, n), dtype=np.int64)
                np.save(os.path.join(d, "input.%s.npy" % inp), v)


if __name__ == "__main__":
    main()
