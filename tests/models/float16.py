#!/usr/bin/python3
"""Float16 versions of the real models for tests/models_test.sh.

Writes two models from MODEL:

  HALF   the model as a float16 export looks (onnxconverter-common's
         convert_float_to_float16 with keep_io_types): every float
         initializer and Constant float16, float value_info float16, Casts
         to float become Casts to float16, and Casts at the float32 inputs
         and outputs; Resize's scales stay float32 (the op takes no other)
  ROUND  MODEL itself with each of those weights rounded to float16 and
         back: the same values in float32, the reference HALF must match

Both first rewrite a BatchNormalization whose variance lies beyond float16's
range (PaddleOCR det's first, 1e7-1e8) to variance 1 and the scale that
gives the same result, as an exporter targeting float16 has to.

Usage: float16.py MODEL HALF.onnx ROUND.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

FLOAT32_INPUTS = {("Resize", 1), ("Resize", 2), ("Upsample", 1)}


def tensors(g):
    """name -> the TensorProto holding that constant (initializer or Constant)."""
    out = {t.name: t for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].type == onnx.AttributeProto.TENSOR:
            out[n.output[0]] = n.attribute[0].t
    return out


def rescale_batchnorms(g):
    """BN(x) = scale (x - mean) / sqrt(var + eps) + B with var within float16."""
    consts = tensors(g)
    for n in g.node:
        if n.op_type != "BatchNormalization" or len(n.input) < 5:
            continue
        sc, var = consts.get(n.input[1]), consts.get(n.input[4])
        if sc is None or var is None:
            continue
        v = numpy_helper.to_array(var).astype(np.float64)
        if np.abs(v).max() <= 65504:
            continue
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        scale = numpy_helper.to_array(sc).astype(np.float64) * np.sqrt(1 + eps) / np.sqrt(v + eps)
        sc.CopyFrom(numpy_helper.from_array(scale.astype(np.float32), sc.name))
        var.CopyFrom(numpy_helper.from_array(np.ones_like(v, dtype=np.float32), var.name))


def main(src, half_path, round_path):
    half, rnd = onnx.load(src), onnx.load(src)
    for m, to_half in ((half, True), (rnd, False)):
        g = m.graph
        rescale_batchnorms(g)
        keep = {x for n in g.node for i, x in enumerate(n.input) if (n.op_type, i) in FLOAT32_INPUTS}

        def convert(t):
            if t.data_type != T.FLOAT or t.name in keep:
                return
            # out-of-range values clamp to the largest half, as
            # convert_float_to_float16 clamps them (PaddleOCR's Clip bounds)
            a = np.clip(numpy_helper.to_array(t), -65504, 65504).astype(np.float16)
            t.CopyFrom(numpy_helper.from_array(a if to_half else a.astype(np.float32), t.name))

        for t in g.initializer:
            convert(t)
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and not (n.op_type == "Constant" and n.output[0] in keep):
                    convert(a.t)
                if to_half and n.op_type == "Cast" and a.name == "to" and a.i == T.FLOAT:
                    a.i = T.FLOAT16
        if not to_half:
            continue
        for v in g.value_info:
            if v.type.tensor_type.elem_type == T.FLOAT:
                v.type.tensor_type.elem_type = T.FLOAT16
        inits = {t.name for t in g.initializer}
        rename = {}
        head, tail = [], []
        for v in g.input:
            if v.type.tensor_type.elem_type == T.FLOAT and v.name not in inits:
                rename[v.name] = v.name + "_f16"
                head.append(helper.make_node("Cast", [v.name], [v.name + "_f16"], to=T.FLOAT16))
        outs = {}
        for v in g.output:
            if v.type.tensor_type.elem_type == T.FLOAT:
                outs[v.name] = v.name + "_f16"
                tail.append(helper.make_node("Cast", [v.name + "_f16"], [v.name], to=T.FLOAT))
        for n in g.node:
            for i, x in enumerate(n.input):
                n.input[i] = rename.get(x, outs.get(x, x))
            for i, x in enumerate(n.output):
                n.output[i] = outs.get(x, x)
        nodes = head + list(g.node) + tail
        del g.node[:]
        g.node.extend(nodes)
    onnx.save(half, half_path)
    onnx.save(rnd, round_path)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
