#!/usr/bin/env bash
# texel on a machine with a real GPU, headless through EGL (no X server):
# the driver check (conformance, numerics_test), the GPU bench cases with
# every matmul tiling, and the real models on gpu / cpu / auto / f16 with the
# largest difference from the CPU device's outputs. What bench/README.md's
# H100 tables came from.
#   bash bench/real_gpu.sh [OUTDIR]        (default results/real-gpu-<date>)
# Needs the GPU's EGL library (libEGL_nvidia etc.); builds build-bench/ and
# fetches the pinned models like bench/run.sh. Run as is on the GPU machine.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:-results/real-gpu-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
bash scripts/setup.sh >/dev/null || exit 1
[[ -d build-bench ]] || meson setup build-bench --buildtype=release >/dev/null
ninja -C build-bench texel tests/numerics_test >/dev/null || exit 1
CACHE=$(bash scripts/fetch_models.sh) || exit 1 # read by tests/models/list.sh
T=$PWD/build-bench/texel
S=$out/summary.txt
export TEXEL_GL=egl TEXEL_CACHE_DIR=$out/choices
{ TEXEL_VERBOSE=1 $T info; } >"$S" 2>&1
$T conformance /usr/share/libonnx-testdata/data/node --device gpu --verbose >"$out/conformance.txt" 2>&1
echo "conformance: $(tail -1 "$out/conformance.txt")" >>"$S"
grep -E "^FAIL" "$out/conformance.txt" >>"$S"
TEXEL_DEVICE=gpu build-bench/tests/numerics_test >"$out/numerics.txt" 2>&1
echo "numerics_test: $(tail -1 "$out/numerics.txt")" >>"$S"
cases=matmul_256,matmul_512,matmul_1024,conv2d_56,conv1x1_56,mobilenet_head
$T bench --runs 15 --device all --no-reference --cases "$cases" >"$out/bench.txt" 2>&1
for tm in 1 4 8; do
    $T bench --runs 15 --device gpu --no-reference --matmul-tm $tm --cases "$cases" >"$out/tm$tm.txt" 2>&1
done
$T bench --runs 15 --device all --json "$out/desktop.json" >"$out/bench-all.txt" 2>&1
# shellcheck source=tests/models/list.sh
# shellcheck disable=SC2034
source tests/models/list.sh
jpg=/usr/share/darknet/data/dog.jpg
for entry in "${MODELS[@]}"; do
    IFS='|' read -r name model input opts <<<"$entry"
    for mode in gpu cpu auto f16; do
        dev=$mode extra=()
        [[ $mode == f16 ]] && dev=gpu extra=(--precision f16)
        # shellcheck disable=SC2086
        $T run "$model" --input "$input=$jpg" $opts --repeat 20 --json --device $dev "${extra[@]}" \
            --save "$out/$name-$mode" >"$out/$name-$mode.json" 2>"$out/$name-$mode.err"
    done
done
PY=python3 # one with numpy (Debian's python3-numpy, which scripts/setup.sh installs)
"$PY" -c "import numpy" 2>/dev/null || PY=/usr/bin/python3
"$PY" - "$out" "${MODELS[@]}" >>"$S" <<'PY'
import glob, json, os, sys
import numpy as np
out = sys.argv[1]
for entry in sys.argv[2:]:
    name = entry.split("|")[0]
    for mode in ["gpu", "cpu", "auto", "f16"]:
        try:
            j = json.load(open(f"{out}/{name}-{mode}.json"))
        except (OSError, ValueError):
            print(f"{name:10} {mode:5} failed: {open(f'{out}/{name}-{mode}.err').read()[-200:]}")
            continue
        diff = 0.0
        for f in glob.glob(f"{out}/{name}-{mode}/*.npy"):
            ref = f.replace(f"/{name}-{mode}/", f"/{name}-cpu/")
            if not os.path.basename(f).startswith("input.") and mode != "cpu" and os.path.exists(ref):
                diff = max(diff, float(np.max(np.abs(np.load(f).astype(np.float64) - np.load(ref)))))
        print("%-10s %-5s create %8.1f first %8.1f steady %8.2f on %s (%s) max diff from cpu %.2e" % (
            name, mode, j["create_ms"], j["first_ms"], j["steady_ms"], j["device"],
            j.get("device_reason", ""), diff))
PY
cat "$S"
echo "wrote $out"
