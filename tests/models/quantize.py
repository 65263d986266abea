#!/usr/bin/python3
"""Quantized versions of the real models for tests/models_test.sh.

onnxruntime's own quantization tools (`quantize_dynamic`, `quantize_static`)
are a pip package, and the Python package index is not reachable from the
machines this project runs on (only the Debian archive and the npm registry
are), so this script writes the same three formats with Debian's python3-onnx
and numpy:

  dynamic  quantize_dynamic's QOperator output: each MatMul / Conv with a
           constant weight becomes DynamicQuantizeLinear(x) ->
           MatMulInteger / ConvInteger (int8 weight, symmetric per tensor) ->
           Cast -> Mul(x_scale * w_scale) (-> Add(bias) for Conv)
  qdq      quantize_static's QDQ output: uint8 QuantizeLinear ->
           DequantizeLinear pairs on the activations entering and leaving each
           Conv / MatMul, int8 weights and int32 biases behind DequantizeLinear
  qop      quantize_static's QOperator output: QLinearConv (int8 weights per
           output channel, int32 bias) and QLinearMatMul between
           QuantizeLinear / DequantizeLinear; chained quantized ops pass their
           uint8 tensors on directly

Static ranges come from calibration: `augment` writes the model with every
float intermediate as an output, onnxruntime-node runs it on calibration
photos (tests/models/ort_run.js ranges), and the min/max per tensor (JSON)
feeds `static`. Models below opset 11 are converted to 11 first (as
onnxruntime's quantizer asks).

Usage:
  quantize.py augment MODEL OUT.onnx
  quantize.py dynamic MODEL OUT.onnx
  quantize.py static  MODEL RANGES.json qdq|qop OUT.onnx
"""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference, version_converter


def load(path):
    m = onnx.load(path)
    op = [o for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    if op.version < 11:
        m = version_converter.convert_version(m, 11)
    return m


def float_values(m):
    """Names of float tensors produced by nodes (after shape inference)."""
    inf = shape_inference.infer_shapes(m)
    types = {}
    for v in list(inf.graph.value_info) + list(inf.graph.output) + list(inf.graph.input):
        types[v.name] = v.type.tensor_type.elem_type
    out = []
    for n in m.graph.node:
        for o in n.output:
            if o and types.get(o) == TensorProto.FLOAT:
                out.append(o)
    return out


def augment(src, dst):
    m = load(src)
    have = {o.name for o in m.graph.output}
    for name in float_values(m):
        if name not in have:
            m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    onnx.save(m, dst)


class Graph:
    def __init__(self, m):
        self.m = m
        # weights: initializers, and Constant nodes' values (Paddle2ONNX writes those)
        self.inits = {i.name: i for i in m.graph.initializer}
        for n in m.graph.node:
            if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
                self.inits[n.output[0]] = n.attribute[0].t
        self.nodes = []
        self.new_inits = []
        self.count = 0

    def uniq(self, base):
        self.count += 1
        return "%s_q%d" % (base, self.count)

    def const(self, base, arr):
        name = self.uniq(base)
        self.new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, name):
        i = self.inits.get(name)
        return None if i is None or i.data_type != TensorProto.FLOAT else numpy_helper.to_array(i)

    def add(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=self.uniq(op), **attrs))

    def finish(self, opset=None):
        g = self.m.graph
        used = {i for n in self.nodes for i in n.input} | {o.name for o in g.output}
        del g.node[:]
        g.node.extend(n for n in self.nodes if n.op_type != "Constant" or n.output[0] in used)
        keep = [i for i in g.initializer if i.name in used]
        del g.initializer[:]
        g.initializer.extend(keep + self.new_inits)
        if opset:
            for o in self.m.opset_import:
                if o.domain in ("", "ai.onnx"):
                    o.version = max(o.version, opset)
        return self.m


def sym_int8(w, axis=None):
    """Symmetric int8 weights: per tensor, or per slice along axis 0."""
    # an all-zero weight (or channel) gets scale 1, as onnxruntime's compute_scale_zp does
    if axis is None:
        a = float(np.abs(w).max())
        s = np.float32(a / 127.0 if a > 0 else 1.0)
    else:
        a = np.abs(w).reshape(w.shape[0], -1).max(axis=1)
        s = np.where(a > 0, a / 127.0, 1.0).astype(np.float32)
    sb = s if axis is None else s.reshape((-1,) + (1,) * (w.ndim - 1))
    q = np.clip(np.rint(w / sb), -127, 127).astype(np.int8)
    return q, s


def int32_bias(v):
    return np.clip(np.rint(v), -2**31, 2**31 - 1).astype(np.int32)


def conv_attrs(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def dynamic(src, dst):
    m = load(src)
    g = Graph(m)
    for n in m.graph.node:
        w = g.weight(n.input[1]) if n.op_type in ("MatMul", "Conv") and len(n.input) > 1 else None
        if w is None or (n.op_type == "MatMul" and w.ndim != 2):
            g.nodes.append(n)
            continue
        x = n.input[0]
        xq, xs, xz = g.uniq(x + "_u8"), g.uniq(x + "_scale"), g.uniq(x + "_zp")
        g.add("DynamicQuantizeLinear", [x], [xq, xs, xz])
        wq, ws = sym_int8(w)
        wn, wz = g.const(n.input[1] + "_i8", wq), g.const(n.input[1] + "_zp", np.int8(0))
        acc, accf, sc, y = g.uniq("acc"), g.uniq("accf"), g.uniq("scale"), n.output[0]
        if n.op_type == "MatMul":
            g.add("MatMulInteger", [xq, wn, xz, wz], [acc])
        else:
            g.add("ConvInteger", [xq, wn, xz, wz], [acc], **conv_attrs(n))
        g.add("Cast", [acc], [accf], to=TensorProto.FLOAT)
        g.add("Mul", [xs, g.const("w_scale", ws)], [sc])
        bias = g.weight(n.input[2]) if n.op_type == "Conv" and len(n.input) > 2 else None
        if bias is None:
            g.add("Mul", [accf, sc], [y])
        else:
            t = g.uniq("scaled")
            g.add("Mul", [accf, sc], [t])
            g.add("Add", [t, g.const("bias", bias.reshape(1, -1, 1, 1))], [y])
    onnx.save(g.finish(), dst)


def act_params(r):
    lo, hi = min(r[0], 0.0), max(r[1], 0.0)
    s = np.float32(max(hi - lo, 1e-8) / 255.0)
    z = np.uint8(np.clip(np.rint(-lo / s), 0, 255))
    return s, z


def static(src, ranges_path, fmt, dst):
    m = load(src)
    ranges = json.load(open(ranges_path))
    g = Graph(m)
    qparams = {}  # tensor -> (scale name, zp name, scale, zp)

    def params(t):
        if t not in qparams:
            s, z = act_params(ranges[t])
            qparams[t] = (g.const(t + "_scale", s), g.const(t + "_zp", z), s, z)
        return qparams[t]

    def quantizable(n):
        if n.op_type not in ("Conv", "MatMul") or len(n.input) < 2:
            return False
        w = g.weight(n.input[1])
        return (w is not None and n.input[0] in ranges and n.output[0] in ranges and
                (n.op_type == "Conv" or w.ndim == 2))

    if fmt == "qdq":
        # Q -> DQ on each quantized node's activation input and output
        renamed = {}
        for n in m.graph.node:
            ins = [renamed.get(i, i) for i in n.input]
            if not quantizable(n):
                del n.input[:]
                n.input.extend(ins)
                g.nodes.append(n)
                continue
            x = n.input[0]
            if x not in renamed:
                sn, zn, _, _ = params(x)
                q, dq = g.uniq(x + "_q"), g.uniq(x + "_dq")
                g.add("QuantizeLinear", [ins[0], sn, zn], [q])
                g.add("DequantizeLinear", [q, sn, zn], [dq])
                renamed[x] = dq
                ins[0] = dq
            w = g.weight(n.input[1])
            wq, ws = sym_int8(w)
            wdq = g.uniq("w_dq")
            g.add("DequantizeLinear", [g.const("w_i8", wq), g.const("w_scale", ws),
                                       g.const("w_zp", np.int8(0))], [wdq])
            ins[1] = wdq
            if n.op_type == "Conv" and len(n.input) > 2 and g.weight(n.input[2]) is not None:
                bs = np.float32(params(x)[2] * ws)
                bq = int32_bias(g.weight(n.input[2]) / bs)
                bdq = g.uniq("b_dq")
                g.add("DequantizeLinear", [g.const("b_i32", bq), g.const("b_scale", bs)], [bdq])
                ins[2] = bdq
            y = n.output[0]
            raw = g.uniq(y + "_f")
            g.nodes.append(helper.make_node(n.op_type, ins, [raw], name=n.name,
                                            **conv_attrs(n)))
            sn, zn, _, _ = params(y)
            q = g.uniq(y + "_q")
            g.add("QuantizeLinear", [raw, sn, zn], [q])
            g.add("DequantizeLinear", [q, sn, zn], [y])
            renamed[y] = y
        onnx.save(g.finish(), dst)
        return

    # qop: QLinearConv / QLinearMatMul; a quantized output feeding the next
    # quantized op is passed on as uint8
    quantized = {}  # float tensor -> its uint8 twin
    for n in m.graph.node:
        if not quantizable(n):
            g.nodes.append(n)
            continue
        x, y = n.input[0], n.output[0]
        xs, xz, xsv, _ = params(x)
        if x not in quantized:
            q = g.uniq(x + "_q")
            g.add("QuantizeLinear", [x, xs, xz], [q])
            quantized[x] = q
        ys, yz, _, _ = params(y)
        yq = g.uniq(y + "_q")
        w = g.weight(n.input[1])
        if n.op_type == "Conv":
            wq, ws = sym_int8(w, axis=0)
            ins = [quantized[x], xs, xz, g.const("w_i8", wq), g.const("w_scale", ws),
                   g.const("w_zp", np.zeros(len(ws), np.int8)), ys, yz]
            if len(n.input) > 2 and g.weight(n.input[2]) is not None:
                bq = int32_bias(g.weight(n.input[2]) / (xsv * ws))
                ins.append(g.const("b_i32", bq))
            g.add("QLinearConv", ins, [yq], **conv_attrs(n))
        else:
            wq, ws = sym_int8(w)
            g.add("QLinearMatMul", [quantized[x], xs, xz, g.const("w_i8", wq),
                                    g.const("w_scale", ws), g.const("w_zp", np.int8(0)), ys, yz],
                  [yq])
        g.add("DequantizeLinear", [yq, ys, yz], [y])
        quantized[y] = yq
    onnx.save(g.finish(), dst)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "augment":
        augment(a[1], a[2])
    elif len(a) == 3 and a[0] == "dynamic":
        dynamic(a[1], a[2])
    elif len(a) == 5 and a[0] == "static" and a[3] in ("qdq", "qop"):
        static(a[1], a[2], a[3], a[4])
    else:
        sys.exit(__doc__)
