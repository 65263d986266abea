#!/usr/bin/env python3
"""Writes the small hand-built ONNX models committed as seeds of the ONNX fuzz
targets (tests/fuzz/corpus/onnx_*/seed-*.onnx). run.sh adds every
libonnx-testdata model and the real models at fuzz time; these few make sure
the committed corpora (replayed by the ordinary suite) reach the executors
without any download.

    python3 tests/fuzz/seeds.py   # rewrites the seed files

A minimal protobuf writer: field numbers are onnx.proto's."""
import os
import struct


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_int(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    return key(field, 2) + varint(len(b)) + b


def f_str(field, s):
    return f_bytes(field, s.encode())


def f_float(field, v):
    return key(field, 5) + struct.pack("<f", v)


FLOAT, INT64 = 1, 7


def tensor(name, dims, elem, values):
    raw = struct.pack("<%d%s" % (len(values), "f" if elem == FLOAT else "q"), *values)
    return b"".join(f_int(1, d) for d in dims) + f_int(2, elem) + f_str(8, name) + f_bytes(9, raw)


def attr_i(name, v):
    return f_str(1, name) + f_int(3, v) + f_int(20, 2)


def attr_f(name, v):
    return f_str(1, name) + f_float(2, v) + f_int(20, 1)


def attr_is(name, vs):
    return f_str(1, name) + b"".join(f_int(8, v) for v in vs) + f_int(20, 7)


def node(op, ins, outs, attrs=(), name=""):
    return (b"".join(f_str(1, i) for i in ins) + b"".join(f_str(2, o) for o in outs) +
            f_str(3, name or op.lower()) + f_str(4, op) + b"".join(f_bytes(5, a) for a in attrs))


def vinfo(name, elem, dims):
    shape = b"".join(f_bytes(1, f_int(1, d) if d >= 0 else f_str(2, "N")) for d in dims)
    ttype = f_int(1, elem) + f_bytes(2, shape)
    return f_str(1, name) + f_bytes(2, f_bytes(1, ttype))


def model(nodes, inits, inputs, outputs, opset=13):
    g = (b"".join(f_bytes(1, n) for n in nodes) + f_str(2, "seed") +
         b"".join(f_bytes(5, t) for t in inits) + b"".join(f_bytes(11, v) for v in inputs) +
         b"".join(f_bytes(12, v) for v in outputs))
    return f_int(1, 8) + f_bytes(7, g) + f_bytes(8, f_int(2, opset))


def ramp(n, scale=0.1):
    return [((i * 7) % 11 - 5) * scale for i in range(n)]


def conv_net():
    """Conv + bias + Relu → MaxPool → Flatten → Gemm → Softmax."""
    return model(
        [node("Conv", ["x", "W", "B"], ["c"], [attr_is("pads", [1, 1, 1, 1])]),
         node("Relu", ["c"], ["r"]),
         node("MaxPool", ["r"], ["p"], [attr_is("kernel_shape", [2, 2]), attr_is("strides", [2, 2])]),
         node("Flatten", ["p"], ["f"]),
         node("Gemm", ["f", "G"], ["g"], [attr_i("transB", 1)]),
         node("Softmax", ["g"], ["y"], [attr_i("axis", 1)])],
        [tensor("W", [4, 3, 3, 3], FLOAT, ramp(108)), tensor("B", [4], FLOAT, ramp(4)),
         tensor("G", [5, 64], FLOAT, ramp(320, 0.01))],
        [vinfo("x", FLOAT, [1, 3, 8, 8])], [vinfo("y", FLOAT, [1, 5])])


def shape_graph():
    """A dynamic batch through a Shape → Gather → Concat → Reshape subgraph,
    MatMul + Add, Transpose, ReduceMean."""
    return model(
        [node("MatMul", ["x", "W"], ["h"]), node("Add", ["h", "B"], ["hb"]),
         node("Shape", ["hb"], ["s"]), node("Gather", ["s", "i0"], ["n"], [attr_i("axis", 0)]),
         node("Unsqueeze", ["n", "ax0"], ["n1"]),
         node("Concat", ["n1", "tail"], ["shp"], [attr_i("axis", 0)]),
         node("Reshape", ["hb", "shp"], ["r"]),
         node("Transpose", ["r"], ["t"], [attr_is("perm", [0, 2, 1])]),
         node("ReduceMean", ["t"], ["y"], [attr_is("axes", [1]), attr_i("keepdims", 0)], "mean")],
        [tensor("W", [6, 8], FLOAT, ramp(48)), tensor("B", [8], FLOAT, ramp(8)),
         tensor("i0", [], INT64, [0]), tensor("ax0", [1], INT64, [0]),
         tensor("tail", [2], INT64, [2, 4])],
        [vinfo("x", FLOAT, [-1, 6])], [vinfo("y", FLOAT, [-1, 2])])


def data_moves():
    """Pad, Slice, Concat, Resize, Where, Cast: the index-map kernels."""
    return model(
        [node("Pad", ["x", "pads"], ["p"]),
         node("Slice", ["p", "starts", "ends", "axes"], ["s"]),
         node("Concat", ["s", "s"], ["c"], [attr_i("axis", 1)]),
         node("Resize", ["c", "", "scales"], ["z"], [f_str(1, "mode") + f_str(4, "linear") + f_int(20, 3)]),
         node("Greater", ["z", "zero"], ["m"]),
         node("Where", ["m", "z", "zero"], ["w"]),
         node("Cast", ["w"], ["y"], [attr_i("to", FLOAT)])],
        [tensor("pads", [8], INT64, [0, 0, 1, 1, 0, 0, 1, 1]),
         tensor("starts", [2], INT64, [1, 0]), tensor("ends", [2], INT64, [5, 5]),
         tensor("axes", [2], INT64, [2, 3]), tensor("scales", [4], FLOAT, [1, 1, 2, 2]),
         tensor("zero", [], FLOAT, [0.0])],
        [vinfo("x", FLOAT, [1, 2, 4, 4])], [vinfo("y", FLOAT, [1, 4, 8, 10])])


SEEDS = {"conv-net": conv_net, "shape-graph": shape_graph, "data-moves": data_moves}

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for target in ("onnx_load", "onnx_graph", "onnx_run"):
        d = os.path.join(here, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for name, make in SEEDS.items():
            with open(os.path.join(d, "seed-%s.onnx" % name), "wb") as f:
                f.write(make())
