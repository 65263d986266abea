#!/usr/bin/env bash
# The CLI's contract: `texel info` and `texel op` output and counters.
set -uo pipefail
TEXEL=${1:-build/texel}
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

check "info probes float32 rendering" 'j["float32_render"] and j["max_texture_size"] >= 2048' \
    "$TEXEL" info --json
# The host's EGL road (no X display: here Mesa's llvmpipe device or
# surfaceless platform; NVIDIA's EGL device on a GPU server).
check "EGL road without X: a context that renders float32" 'j["float32_render"]' \
    env -u DISPLAY TEXEL_GL=egl "$TEXEL" info --json
check "EGL road without X: a checked matmul" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    env -u DISPLAY TEXEL_GL=egl "$TEXEL" op matmul --shape 64x48,48x40 --repeat 2 --json
check_rc "EGL road: a device number past the list is no context (77)" 77 \
    env -u DISPLAY TEXEL_GL=egl TEXEL_EGL_DEVICE=99 "$TEXEL" info
# Division in integer steps (what drivers without IEEE division get, forced here).
check "TEXEL_EMULATE_DIVISION: info says so" 'j["emulated_division"]' \
    env TEXEL_EMULATE_DIVISION=1 "$TEXEL" info --json
check "emulated division, broadcast, both variants: equal to the reference" \
    'j["mismatches"] == 0 and j["max_abs_err"] == 0 and j["specialized_runs"] >= 1' \
    env TEXEL_EMULATE_DIVISION=1 "$TEXEL" op div --shape 33x64,64 --repeat 3 --specialize-after 2 --json
check "matmul 256, k=2: one specialized compile, accurate" \
    'j["specialized_compiles"] == 1 and j["max_abs_err"] <= 1e-3 and j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after 2 --json
check "matmul 256, never: no specialized compile" \
    'j["specialized_compiles"] == 0 and j["max_abs_err"] <= 1e-3 and j["generic_compiles"] >= 1' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after -1 --json
check "matmul 256, always: specialized from the first call" \
    'j["specialized_compiles"] == 1 and j["specialized_runs"] == 7' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after 0 --json
check "json has the documented counters" \
    'all(k in j for k in ["generic_compiles","specialized_compiles","cache_hits","draws","bytes_uploaded","bytes_downloaded","max_abs_err"])' \
    "$TEXEL" op add --shape 5x7x11x13,13 --repeat 2 --json
check "batched matmul with bias and gelu" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op matmul --shape 3x40x24,24x36 --bias --activation gelu --repeat 1 --json
check "an op error is reported with its status" 'j["status"] == "TX_STATUS_SHAPE_MISMATCH" and "matmul" in j["error"]' \
    "$TEXEL" op matmul --shape 4x5,6x7 --repeat 0 --json
check "grouped conv with attribute flags, bias and relu6" \
    'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK" and j["gflops"] > 0' \
    "$TEXEL" op conv --shape 1x8x10x12,16x4x3x3 --group 2 --stride 2 --pad 1 --bias --activation relu6 --repeat 1 --json
check "depthwise conv reading x through --x-affine, against the reference" \
    'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op conv --shape 1x6x9x16,6x1x3x3 --group 6 --pad 1 --bias --x-affine -0.5,2 --repeat 1 --json
check_rc "--x-affine needs SCALE,SHIFT" 2 "$TEXEL" op conv --shape 1x4x5x5,6x4x3x3 --x-affine 2
check "averagepool with ceil_mode and count_include_pad" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op averagepool --shape 1x3x9x9 --kernel 3 --stride 2 --pad 1 --ceil-mode --count-include-pad --repeat 1 --json
check "a conv channel mismatch names the op and shapes" \
    'j["status"] == "TX_STATUS_SHAPE_MISMATCH" and "conv" in j["error"] and "[6, 3, 3, 3]" in j["error"]' \
    "$TEXEL" op conv --shape 1x4x5x5,6x3x3x3 --repeat 1 --json
check_rc "a 3-value stride on a 2-D conv is a usage error" 2 "$TEXEL" op conv --shape 1x4x5x5,6x4x3x3 --stride 1x2x3
# 1024 values per fragment, then 32 states per fragment on a GPU (1024 -> 32 -> 1)
# or 1024 on a software rasterizer (1024 -> 1): engine/gpu/reduce.c
soft_gl=$(xrun "$TEXEL" info --json 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin).get('renderer', '').lower()
print(int(any(s in r for s in ('llvmpipe', 'softpipe', 'swiftshader', 'swrast', 'basic render', 'software'))))")
check "sum of 1M values: 3 draws per call (2 in software), accurate" \
    'j["mismatches"] == 0 and j["draws"] == 3 * ('"${soft_gl:-0}"' and 2 or 3) and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op reduce_sum --shape 1048576 --repeat 2 --json
check "reduce flags: axes, drop-dims" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op reduce_mean --shape 6x5x4 --axes 0,-1 --drop-dims --repeat 1 --json
check "argmax --select-last" \
    'j["mismatches"] == 0' "$TEXEL" op argmax --shape 9x13 --axes 1 --select-last --repeat 0 --json
check "softmax --axis 0 --coerce-2d" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op softmax --shape 4x5x6 --axis 1 --coerce-2d --repeat 0 --json
check "multi-input shapes: batch_norm, variadic sum" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op batch_norm --shape 2x3x4x4,3,3,3,3 --repeat 0 --json
check "variadic sum of 5 broadcast inputs" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op sum --shape 5x7,7,5x1,scalar,5x7 --repeat 0 --json
check "a bad axis is reported with its status" 'j["status"] == "TX_STATUS_INVALID_ARGUMENT" and "axis 3" in j["error"]' \
    "$TEXEL" op reduce_sum --shape 4x5 --axes 3 --repeat 0 --json
check_rc "bad --axes is a usage error" 2 "$TEXEL" op reduce_sum --shape 4 --axes 1,x
bench_json=$(mktemp)
if xvfb-run -a "$TEXEL" bench --smoke --runs 2 --json "$bench_json" >/dev/null 2>&1 &&
   python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['cases'], 'no cases'
for c in j['cases']:
    for m in ('generic', 'specialized', 'adaptive'):
        r = c['modes'][m]
        assert r['status'] == 'TX_STATUS_OK' and r['median_ms'] > 0 and r['first_ms'] > 0, (c['name'], m)
        # the first call's output was checked against the plain-C reference
        assert 0 <= r['max_error'] <= 1e-3, (c['name'], m, r['max_error'])
    assert c['modes']['generic']['specialized_compiles'] == 0
    assert c['modes']['specialized']['specialized_compiles'] >= 1
    # adaptive's timed runs start after its transition: served exactly as always-specialized
    a, sp = c['modes']['adaptive'], c['modes']['specialized']
    assert a['steady_specialized_runs'] == sp['steady_specialized_runs'] > 0, (c['name'], a, sp)
    assert a['steady_generic_runs'] == sp['steady_generic_runs'], c['name']
    assert a['warmup_calls'] > j['default_k'] >= 1 and sp['warmup_calls'] == 1, c['name']
" "$bench_json" && python3 bench/report.py "$(mktemp -d)" "$bench_json" >/dev/null; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL bench runner smoke run"
fi
rm -f "$bench_json"
# texel run --precision f16: half the texture bytes, outputs within float16's
# rounding of float32's, compile cost per program family in the JSON
gemm=/usr/share/libonnx-testdata/data/node/test_gemm_default_vector_bias/model.onnx
if [[ -f $gemm ]]; then
    prec=$(mktemp -d)
    if xvfb-run -a "$TEXEL" run "$gemm" --device gpu --json --save "$prec/f32" >"$prec/f32.json" 2>&1 &&
        xvfb-run -a "$TEXEL" run "$gemm" --device gpu --precision f16 --json --save "$prec/f16" \
            >"$prec/f16.json" 2>&1 &&
        python3 - "$prec" "$(dirname "$0")/../bench/precision.py" <<'PY'
import json, subprocess, sys
d, precision_py = sys.argv[1], sys.argv[2]
a, b = (json.load(open("%s/%s.json" % (d, p))) for p in ("f32", "f16"))
assert b["peak_texture_bytes"] * 2 == a["peak_texture_bytes"] > 0, (a["peak_texture_bytes"], b["peak_texture_bytes"])
fam = a["compile_families"]
assert fam and all(f["generic"] >= 1 for f in fam.values()), fam
cmp = json.loads(subprocess.check_output(["python3", precision_py, d + "/f32", d + "/f16"]))
for name, r in cmp.items():
    assert 0 < r["max_abs_diff"] <= 2e-3 * max(1, r["max_abs_f32"]), (name, r)
PY
    then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL texel run --precision f16: $(tail -c 400 "$prec/f16.json")"
    fi
    rm -rf "$prec"
fi
# texel run --profile: every step timed over --repeat more runs, in the text
# (by op type, the slowest steps) and in the JSON (every step)
if [[ -f $gemm ]]; then
    prof=$(mktemp -d)
    if xvfb-run -a "$TEXEL" run "$gemm" --device gpu --repeat 2 --profile >"$prof/text" 2>&1 &&
        grep -q '^profile: 2 runs, every step finished before the next' "$prof/text" &&
        grep -q '^  Gemm  ' "$prof/text" && grep -q 'ms  Gemm "[^"]*" -> \[[0-9, ]*\] on the gpu' "$prof/text" &&
        xvfb-run -a "$TEXEL" run "$gemm" --device cpu --profile --json >"$prof/json" 2>&1 &&
        python3 - "$prof/json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["profile"]
assert p["runs"] == 1 and len(p["steps"]) == r["steps"] >= 1, p
for s in p["steps"]:
    assert s["runs"] == 1 and s["device"] == "cpu" and s["draws"] == s["compiles"] == 0 and s["ms"] >= 0, s
assert [s["op_type"] for s in p["steps"]] == ["Gemm"], p
assert p["steps"][0]["shape"] == r["outputs"][0]["shape"], (p, r["outputs"])
assert p["steps"][0]["macs"] == 2 * 7 * 4, p  # A [2, 7] x B [7, 4]
PY
    then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL texel run --profile: $(tail -c 600 "$prof/text") $(tail -c 400 "$prof/json")"
    fi
    rm -rf "$prof"
fi
check_rc "bad --precision is a usage error" 2 "$TEXEL" run "${gemm:-x.onnx}" --precision f8
check_rc "unknown op is a usage error" 2 "$TEXEL" op frobnicate --shape 4
check_rc "bad shape is a usage error" 2 "$TEXEL" op relu --shape 4xq
check_rc "unknown command is a usage error" 2 "$TEXEL" bogus

# Every command's --help: usage on stdout, exit 0, its options listed.
help_has() { # name, command words, options the usage must name...
    local name=$1 cmd=$2 out
    shift 2
    # shellcheck disable=SC2086 # word-split on purpose: "op matmul"
    out=$("$TEXEL" $cmd --help 2>/dev/null)
    local rc=$? missing=()
    for o in "$@"; do [[ $out == *"$o"* ]] || missing+=("$o"); done
    if [[ $rc -eq 0 && ${#missing[@]} -eq 0 ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc, missing ${missing[*]}"
    fi
}
help_has "texel --help" "" "texel run" "texel conformance" "texel bench" "texel op" "exit status" "relu"
help_has "info --help" info --json
help_has "op --help" "op matmul" --shape --repeat --activation --stride --axes --to "ops:"
help_has "bench --help" bench --cases --smoke --runs --json --list --no-reference --device
help_has "run --help" run --input --output --json --save --resize --mean --std --layout --dim \
    --seed --repeat --specialize-after --no-fusion --device --quiet --profile
help_has "conformance --help" conformance --filter --must-pass --json --verbose --device --quiet
if [[ $("$TEXEL" --version) == "texel $(meson introspect --projectinfo "$(dirname "$TEXEL")" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')" ]]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL texel --version is not meson's project version"
fi
# An unknown option names itself (exit 2), an option without its value too.
names_itself() { # name, wanted text, command...
    local name=$1 want=$2 err
    shift 2
    err=$("$@" 2>&1 >/dev/null)
    local rc=$?
    if [[ $rc -eq 2 && $err == *"$want"* ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc, stderr lacks '$want': $(head -1 <<<"$err")"
    fi
}
names_itself "info unknown option" 'unknown option "--frob"' "$TEXEL" info --frob
names_itself "op unknown option" 'unknown option "--frob"' "$TEXEL" op relu --shape 4 --frob
names_itself "op trailing unknown option" 'unknown option "--frob"' "$TEXEL" op relu --frob
names_itself "op option without value" '--shape needs a value' "$TEXEL" op relu --shape
names_itself "bench unknown option" 'unknown option "--frob"' "$TEXEL" bench --frob 1
names_itself "run unknown option" 'unknown option "--frob"' "$TEXEL" run m.onnx --frob
names_itself "run option without value" '--save needs a value' "$TEXEL" run m.onnx --save
names_itself "conformance unknown option" 'unknown option "--frob"' "$TEXEL" conformance --frob

# texel run --save makes the directory and its parents.
tmp=$(mktemp -d)
relu=/usr/share/libonnx-testdata/data/node/test_relu/model.onnx
if xrun "$TEXEL" run "$relu" --save "$tmp/new/dir" >/dev/null 2>&1 && [[ -f $tmp/new/dir/y.npy && -f $tmp/new/dir/input.x.npy ]]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL run --save new/dir"
fi
touch "$tmp/file"
check_rc "run --save under a file is an error" 1 "$TEXEL" run "$relu" --save "$tmp/file/sub"
# The progress line: on stderr when it is a terminal (script(1) gives one),
# never with --quiet or when stderr is not a terminal.
progress() { # --quiet or nothing; prints stderr of a conformance run under a pty
    script -qec "xvfb-run -a '$TEXEL' conformance /usr/share/libonnx-testdata/data/node --filter test_relu $* >/dev/null" /dev/null
}
if [[ $(progress) == *$'\r'"conformance node"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL conformance shows a progress line on a terminal"
fi
if [[ $(progress --quiet) != *"conformance node"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL conformance --quiet shows no progress line"
fi
if [[ $(xrun "$TEXEL" conformance /usr/share/libonnx-testdata/data/node --filter test_relu 2>&1 >/dev/null) != *"conformance node"* ]]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL conformance shows no progress line when stderr is not a terminal"
fi
# texel run's load line (shown after 1 s; here at once)
runline() { # options; prints stderr of a run under a pty
    script -qec "TEXEL_PROGRESS_AFTER_MS=0 xvfb-run -a '$TEXEL' run '$relu' --device gpu $* >/dev/null" /dev/null
}
if [[ $(runline) == *$'\r'"texel run: model.onnx: "*" s)"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL run shows a progress line on a terminal"
fi
if [[ $(runline --quiet) != *"texel run: model.onnx"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL run --quiet shows no progress line"
fi
rm -rf "$tmp"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
