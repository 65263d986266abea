#!/usr/bin/python3
"""Quantization cases for tests/quant_test.sh that the backend tests do not
reach, each a directory under OUTDIR with model.onnx, input.x.npy and either
want.y.npy (the exact answer, computed here in int64 / float64 numpy) or
error.txt (what texel's message must contain), and fused.txt where the plan
must fuse that many nodes away.

  matmulint_chunks  MatMulInteger over K = 1200 where running sums in float32
                    would pass 2^24 (column 0 sums 600 · 255 · 127 before
                    coming back to 0): texel must split K into exact chunks
  convint_chunks    ConvInteger over 96 channels x 3 x 3 (K = 864): chunks of
                    channels, with padding
  convint_grouped   the same per group of a grouped ConvInteger
  qdq_fold          DequantizeLinear -> Conv (per-channel int8 weights, int32
                    bias) -> QuantizeLinear: the fold into QLinearConv must
                    give the integer math's answer exactly
  q_per_axis        QuantizeLinear + DequantizeLinear per axis (opset 13)
  q_blocked         QuantizeLinear with block_size 2 along a dim of 5 (opset 21)
  bad_*             malformed nodes: the message names what is wrong

Usage: quant_cases.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

rng = np.random.default_rng(14)


def model(nodes, inits, x_shape, y_type, opset, y_shape=None):
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     x_shape)],
                          [helper.make_tensor_value_info("y", y_type, y_shape)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def write(out, name, m, x, want=None, error=None, fused=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    save(m, os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "input.x.npy"), x.astype(np.float32))
    if want is not None:
        np.save(os.path.join(d, "want.y.npy"), want)
    if error is not None:
        open(os.path.join(d, "error.txt"), "w").write(error)
    if fused is not None:
        open(os.path.join(d, "fused.txt"), "w").write(str(fused))


def quant(v, s, z, lo, hi):
    """ONNX QuantizeLinear in float32: saturate(round_half_even(v / s) + z)."""
    return np.clip(np.rint(np.float32(1) * v / s) + z, lo, hi)


def quantize_u8(x):
    """x holds integers 0..255: QuantizeLinear with scale 1, zero point 0."""
    return [helper.make_node("QuantizeLinear", ["x", "one", "u8zero"], ["a"])], \
        {"one": np.float32(1), "u8zero": np.uint8(0)}


def cases(out):
    # MatMulInteger, K = 1200
    k = 1200
    a = rng.integers(0, 256, (4, k)).astype(np.int64)
    a[0] = 255
    b = rng.integers(-127, 128, (k, 3)).astype(np.int64)
    b[:, 0] = np.where(np.arange(k) < 600, 127, -127)
    nodes, inits = quantize_u8(None)
    nodes.append(helper.make_node("MatMulInteger", ["a", "b", "u8zero", "i8zero"], ["y"]))
    inits.update(b=b.astype(np.int8), i8zero=np.int8(0))
    write(out, "matmulint_chunks", model(nodes, inits, [4, k], TensorProto.INT32, 13), a,
          want=(a @ b).astype(np.int64))

    # ConvInteger, 96 channels, 3x3, pads 1, per-channel weight zero points
    c, m = 96, 4
    x = rng.integers(0, 256, (1, c, 6, 6)).astype(np.int64)
    w = rng.integers(-100, 101, (m, c, 3, 3)).astype(np.int64)
    wz = np.array([0, 3, -5, 7], np.int64)
    nodes, inits = quantize_u8(None)
    nodes.append(helper.make_node("ConvInteger", ["a", "w", "u8zero", "wz"], ["y"], pads=[1] * 4))
    inits.update(w=w.astype(np.int8), wz=wz.astype(np.int8))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ws = w - wz.reshape(m, 1, 1, 1)
    want = np.zeros((1, m, 6, 6), np.int64)
    for i in range(6):
        for j in range(6):
            want[0, :, i, j] = np.tensordot(ws, xp[0, :, i:i + 3, j:j + 3], axes=3)
    write(out, "convint_chunks", model(nodes, inits, [1, c, 6, 6], TensorProto.INT32, 13), x,
          want=want)

    # grouped ConvInteger (2 groups of 96 channels x 3 x 3): chunks per group
    c, m, g = 192, 4, 2
    x = rng.integers(0, 256, (1, c, 5, 5)).astype(np.int64)
    w = rng.integers(-120, 121, (m, c // g, 3, 3)).astype(np.int64)
    nodes, inits = quantize_u8(None)
    nodes.append(helper.make_node("ConvInteger", ["a", "w", "u8zero"], ["y"], group=g))
    inits.update(w=w.astype(np.int8))
    want = np.zeros((1, m, 3, 3), np.int64)
    for o in range(m):
        gi = o // (m // g)
        xs_ = x[0, gi * (c // g):(gi + 1) * (c // g)]
        for i in range(3):
            for j in range(3):
                want[0, o, i, j] = np.sum(w[o] * xs_[:, i:i + 3, j:j + 3])
    write(out, "convint_grouped", model(nodes, inits, [1, c, 5, 5], TensorProto.INT32, 13), x,
          want=want)

    # DequantizeLinear -> Conv -> QuantizeLinear (folded into QLinearConv)
    c, m = 8, 3
    xs, xz, ys, yz = np.float32(0.05), np.uint8(120), np.float32(0.2), np.uint8(100)
    wq = rng.integers(-127, 128, (m, c, 3, 3)).astype(np.int8)
    wsc = np.array([0.01, 0.02, 0.005], np.float32)
    bs = (xs * wsc).astype(np.float32)
    bq = rng.integers(-2000, 2000, m).astype(np.int32)
    x = (rng.random((1, c, 5, 5)) * 12 - 6).astype(np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["wq", "wsc"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["bq", "bs"], ["bf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["yf"], pads=[1] * 4),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    inits = dict(xs=xs, xz=xz, ys=ys, yz=yz, wq=wq, wsc=wsc, bs=bs, bq=bq)
    xq = quant(x, xs, int(xz), 0, 255).astype(np.int64) - int(xz)
    xp = np.pad(xq, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((1, m, 5, 5), np.int64)
    for i in range(5):
        for j in range(5):
            acc[0, :, i, j] = np.tensordot(wq.astype(np.int64), xp[0, :, i:i + 3, j:j + 3],
                                           axes=3)
    acc += bq.reshape(1, m, 1, 1)
    mult = ((xs * wsc).astype(np.float32) / ys).astype(np.float32).reshape(1, m, 1, 1)
    want = quant(acc.astype(np.float32) * mult, np.float32(1), int(yz), 0, 255)
    # fused: the QuantizeLinear and the DequantizeLinear of x fold into the Conv
    write(out, "qdq_fold", model(nodes, inits, [1, c, 5, 5], TensorProto.UINT8, 13), x,
          want=want.astype(np.int64), fused=2)

    # per-axis QuantizeLinear, then DequantizeLinear (float result)
    x = (rng.random((2, 3, 4)) * 8 - 4).astype(np.float32)
    s = np.array([0.02, 0.05, 0.1], np.float32)
    z = np.array([-3, 0, 5], np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]
    q = quant(x, s.reshape(1, 3, 1), z.reshape(1, 3, 1).astype(np.int64), -128, 127)
    want = ((q - z.reshape(1, 3, 1)) * s.reshape(1, 3, 1)).astype(np.float32)
    write(out, "q_per_axis", model(nodes, dict(s=s, z=z), [2, 3, 4], TensorProto.FLOAT, 13), x,
          want=want)

    # blocked QuantizeLinear: block 2 along a dim of 5 (scale [3, 3])
    x = (rng.random((3, 5)) * 8 - 4).astype(np.float32)
    s = (rng.random((3, 3)) * 0.1 + 0.01).astype(np.float32)
    z = rng.integers(-10, 10, (3, 3)).astype(np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2)]
    sb, zb = np.repeat(s, 2, axis=1)[:, :5], np.repeat(z, 2, axis=1)[:, :5]
    want = quant(x, sb, zb.astype(np.int64), -128, 127).astype(np.int64)
    write(out, "q_blocked", model(nodes, dict(s=s, z=z), [3, 5], TensorProto.INT8, 21), x,
          want=want)

    # DynamicQuantizeLinear of all zeros: scale 1, zero point 0 (as onnxruntime)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["z"], ["zf"], to=TensorProto.FLOAT),
             helper.make_node("Concat", ["qf", "s1", "zf1"], ["y"], axis=0),
             helper.make_node("Reshape", ["s", "shape1"], ["s1"]),
             helper.make_node("Reshape", ["zf", "shape1"], ["zf1"])]
    nodes = nodes[:3] + nodes[4:] + [nodes[3]]
    write(out, "dynamic_zeros", model(nodes, dict(shape1=np.array([1], np.int64)), [3],
                                      TensorProto.FLOAT, 13), np.zeros(3, np.float32),
          want=np.array([0, 0, 0, 1, 0], np.float32))

    # malformed nodes
    x = np.ones((3, 5), np.float32)
    bad = [
        ("bad_scale_len", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1)],
         dict(s=np.ones(4, np.float32)), TensorProto.UINT8, "got 4 values"),
        ("bad_axis", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=5)],
         dict(s=np.ones(5, np.float32)), TensorProto.UINT8, "axis 5 is out of range"),
        ("bad_zp_shape", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
         dict(s=np.ones(5, np.float32), z=np.zeros(3, np.uint8)), TensorProto.UINT8,
         "zero point's shape differs"),
        ("bad_type", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
         dict(s=np.float32(1), z=np.int32(0)), TensorProto.INT32,
         "quantized element type int32 is unsupported"),
    ]
    for name, nodes, inits, yt, msg in bad:
        write(out, name, model(nodes, inits, [3, 5], yt, 13), x, error=msg)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases(sys.argv[1])
