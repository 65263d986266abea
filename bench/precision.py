#!/usr/bin/env python3
"""Compares texel outputs saved by `texel run --save` at two precisions.

    python3 bench/precision.py F32DIR F16DIR

Per output: the max abs difference, the max |f32|, the share of rows whose
argmax over the last axis agrees (top-1 for classifiers, per-step characters
for the recognizer) and how many values are > 0 in each (BlazeFace's score
logits: a detection before NMS; OCR det's probability map after a 0 shift is
all positive, so its line compares the count > 0.3). Prints one JSON object.
Pure Python (no numpy): .npy float32, little-endian, C order."""
import ast
import json
import os
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10 : 10 + hlen].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = tuple(header["shape"])
    n = 1
    for d in shape:
        n *= d
    vals = struct.unpack("<%df" % n, data[10 + hlen : 10 + hlen + 4 * n])
    return shape, vals


def compare(a_dir, b_dir):
    out = {}
    for name in sorted(os.listdir(a_dir)):
        if not name.endswith(".npy") or name.startswith("input."):
            continue
        sa, a = read_npy(os.path.join(a_dir, name))
        sb, b = read_npy(os.path.join(b_dir, name))
        if sa != sb:
            out[name[:-4]] = {"error": "shape %s vs %s" % (sb, sa)}
            continue
        last = sa[-1] if sa else 1
        rows = len(a) // last if last else 0
        agree = sum(
            1
            for r in range(rows)
            if max(range(last), key=lambda i: a[r * last + i])
            == max(range(last), key=lambda i: b[r * last + i])
        )
        out[name[:-4]] = {
            "shape": list(sa),
            "max_abs_diff": max((abs(x - y) for x, y in zip(a, b)), default=0.0),
            "max_abs_f32": max((abs(x) for x in a), default=0.0),
            "argmax_agree": agree / rows if rows else 1.0,
            "positive_f32": sum(1 for x in a if x > 0),
            "positive_f16": sum(1 for x in b if x > 0),
            "above_0.3_f32": sum(1 for x in a if x > 0.3),
            "above_0.3_f16": sum(1 for x in b if x > 0.3),
        }
    return out


if __name__ == "__main__":
    json.dump(compare(sys.argv[1], sys.argv[2]), sys.stdout)
    print()
