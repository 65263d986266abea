#!/usr/bin/env bash
# `texel run`: random feeds, .npy and image inputs, --save, --dim, statuses.
set -uo pipefail
cd "$(dirname "$0")/.."
TEXEL=${1:-build/texel}
ND=/usr/share/libonnx-testdata/data/node
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli_lib.sh
source tests/cli_lib.sh

# A Relu model with input x: [N, 3, H, W] (symbolic dims), written by hand in
# the protobuf wire format.
python3 - "$tmp/relu.onnx" <<'PY'
import sys
def varint(v):
    out = b""
    while True:
        c = v & 127; v >>= 7
        out += bytes([c | (128 if v else 0)])
        if not v: return out
def field(n, payload): return varint(n << 3 | 2) + varint(len(payload)) + payload
def vint(n, v): return varint(n << 3) + varint(v)
def s(n, text): return field(n, text.encode())
def vinfo(name, dims):
    shape = b"".join(field(1, s(2, d) if isinstance(d, str) else vint(1, d)) for d in dims)
    return s(1, name) + field(2, field(1, vint(1, 1) + field(2, shape)))
node = s(1, "x") + s(2, "y") + s(3, "relu0") + s(4, "Relu")
graph = field(1, node) + s(2, "g") + field(11, vinfo("x", ["N", 3, "H", "W"])) + \
        field(12, vinfo("y", ["N", 3, "H", "W"]))
model = vint(1, 8) + field(8, vint(2, 13)) + field(7, graph)
open(sys.argv[1], "wb").write(model)
PY

# .npy input: 2x3 float64, C order
python3 - "$tmp/x.npy" <<'PY'
import struct, sys
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 1, 2), }"
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
data = [-1.5, 2.0, 0.25, -0.5, 3.0, -4.0]
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() +
                              struct.pack("<6d", *data))
PY

check "random feed of the declared shape; stats and timings" \
    'j["status"] == "TX_STATUS_OK" and j["inputs"][0]["shape"] == [4, 3] and j["outputs"][0]["shape"] == [3, 5] and j["outputs"][0]["min"] > 0 and "generic_compiles" in j and j["first_ms"] > 0' \
    "$TEXEL" run "$ND/test_gemm_all_attributes/model.onnx" --json
check "--repeat gives a steady-state time and specializes" \
    'j["steady_ms"] > 0 and j["repeat"] == 3 and j["specialized_compiles"] >= 1' \
    "$TEXEL" run "$ND/test_gemm_all_attributes/model.onnx" --json --repeat 3 --specialize-after 2
check ".npy input (float64) through Relu" \
    'j["outputs"][0]["shape"] == [1, 3, 1, 2] and j["outputs"][0]["first"] == [0, 2, 0.25, 0, 3, 0]' \
    "$TEXEL" run "$tmp/relu.onnx" --input "x=$tmp/x.npy" --json
check "image input, resized and normalized, NCHW" \
    'j["inputs"][0]["shape"] == [1, 3, 24, 32] and j["outputs"][0]["min"] >= 0 and j["outputs"][0]["max"] <= 1 and j["outputs"][0]["max"] > 0.5' \
    "$TEXEL" run "$tmp/relu.onnx" --input x=/usr/share/darknet/data/dog.jpg --resize 32x24 --mean 0.5 --std 0.5 --json
check "--dim names a symbolic dimension" \
    'j["inputs"][0]["shape"] == [1, 3, 5, 7]' \
    "$TEXEL" run "$tmp/relu.onnx" --dim H=5 --dim W=7 --json
check "an unsupported model names its missing op types" \
    'j["status"] == "TX_STATUS_UNSUPPORTED" and "\"TfIdfVectorizer\"" in j["error"]' \
    "$TEXEL" run "$ND/test_tfidfvectorizer_tf_batch_onlybigrams_skip0/model.onnx" --json
check "a wrong input shape is a clear status" \
    'j["status"] == "TX_STATUS_SHAPE_MISMATCH" and "\"x\"" in j["error"]' \
    "$TEXEL" run "$ND/test_relu/model.onnx" --input "x=$tmp/x.npy" --json

xvfb-run -a "$TEXEL" run "$ND/test_gemm_default_vector_bias/model.onnx" --save "$tmp/save" >/dev/null 2>&1
if [[ -f "$tmp/save/y.npy" && -f "$tmp/save/input.a.npy" && -f "$tmp/save/input.c.npy" ]] &&
    python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
assert b[:6] == b'\x93NUMPY' and b\"'shape': (2, 4,)\" in b[:128] and len(b) == 128 + 2 * 4 * 4
" "$tmp/save/y.npy"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL --save writes outputs and inputs as .npy"
fi

# The GL context comes at the first GPU use: with no display to be had (an X
# display that does not exist), a CPU run needs none, auto's runs stay on
# the CPU saying why, and a GPU run fails naming what is missing.
check "no display: --device cpu runs without GL" \
    'j["status"] == "TX_STATUS_OK" and j["device"] == "cpu" and j["draws"] == 0 and j["outputs"][0]["first"] == [0, 2, 0.25, 0, 3, 0]' \
    env DISPLAY=:9999 TEXEL_GL=glfw "$TEXEL" run "$tmp/relu.onnx" --input "x=$tmp/x.npy" --device cpu --json
check "no display: auto runs on the CPU, naming why" \
    'j["status"] == "TX_STATUS_OK" and j["device"] == "cpu" and j["device_decided"] and j["runs_cpu"] == 3 and j["device_reason"].startswith("no GPU context (no display")' \
    env -u TEXEL_DEVICE DISPLAY=:9999 TEXEL_GL=glfw "$TEXEL" run "$tmp/relu.onnx" --input "x=$tmp/x.npy" --repeat 2 --json
check_rc "no display: --device gpu exits 77" 77 env DISPLAY=:9999 TEXEL_GL=glfw "$TEXEL" run "$tmp/relu.onnx" --device gpu
check_rc "unsupported model exits 4" 4 "$TEXEL" run "$ND/test_tfidfvectorizer_tf_batch_onlybigrams_skip0/model.onnx"
check_rc "unknown input name exits 1" 1 "$TEXEL" run "$tmp/relu.onnx" --input "q=$tmp/x.npy"
check_rc "missing model file exits 1" 1 "$TEXEL" run "$tmp/nope.onnx"
check_rc "truncated .npy exits 1" 1 bash -c "head -c 100 '$tmp/x.npy' > '$tmp/t.npy'; '$TEXEL' run '$tmp/relu.onnx' --input 'x=$tmp/t.npy'"
check_rc "not a model exits 1" 1 "$TEXEL" run "$tmp/x.npy"
check_rc "bad option exits 2" 2 "$TEXEL" run "$tmp/relu.onnx" --resize 12
check_rc "no model exits 2" 2 "$TEXEL" run

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
