#!/usr/bin/env bash
# Half-float storage (`texel run --precision f16`: RGBA16F textures) against
# float32 on the real models of tests/models_test.sh, on the GPU device: peak
# texture memory, the host bytes the session keeps and the bytes uploaded of
# each, and bench/precision.py's comparison of the outputs. "f16w" is the
# model converted to float16 weights (tests/models/float16.py, a float16
# export) on float16 storage: its weights stay halves on the host and go up
# as they are.
#   bash bench/precision.sh [path/to/texel] [IMAGE] [MODEL-NAME]
#   (IMAGE default: darknet's person.jpg; MODEL-NAME: only that one)
set -euo pipefail
cd "$(dirname "$0")/.."
TEXEL=${1:-build/texel}
photo=${2:-/usr/share/darknet/data/person.jpg}
only=${3:-}
CACHE=$(bash scripts/fetch_models.sh)
# shellcheck source=tests/models/list.sh
source tests/models/list.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "${MODELS[@]}"; do
    IFS='|' read -r name model input opts <<<"$entry"
    [[ -z $only || $only == "$name" ]] || continue
    mkdir -p "$work/$name"
    /usr/bin/python3 tests/models/float16.py "$model" "$work/$name/half.onnx" "$work/$name/round.onnx"
    for p in f32 f16 f16w; do
        mkdir -p "$work/$name/$p"
        m=$model
        [[ $p == f16w ]] && m=$work/$name/half.onnx
        # shellcheck disable=SC2086
        xvfb-run -a "$TEXEL" run "$m" --input "$input=$photo" $opts --device gpu \
            --precision "${p:0:3}" --json --save "$work/$name/$p" >"$work/$name/$p.json"
    done
    python3 - "$name" "$work/$name" <<'PY'
import json, subprocess, sys
name, d = sys.argv[1], sys.argv[2]
js = {p: json.load(open("%s/%s.json" % (d, p))) for p in ("f32", "f16", "f16w")}
def row(key):
    b = js["f32"][key]
    return ", ".join("%s %d (%.2fx)" % (p, js[p][key], js[p][key] / b) for p in ("f32", "f16", "f16w"))
print("%s:" % name)
print("  peak texture bytes: " + row("peak_texture_bytes"))
print("  host bytes kept:    " + row("host_bytes"))
print("  bytes uploaded:     " + row("bytes_uploaded"))
for p in ("f16", "f16w"):
    cmp = json.loads(subprocess.check_output(["python3", "bench/precision.py", d + "/f32", d + "/" + p]))
    for out, r in cmp.items():
        print("  %s %s %s: max |%s - f32| %.4g (max |f32| %.4g), argmax agrees %.1f%%, > 0: %d vs %d, > 0.3: %d vs %d"
              % (p, out, r["shape"], p, r["max_abs_diff"], r["max_abs_f32"], 100 * r["argmax_agree"],
                 r["positive_f32"], r["positive_f16"], r["above_0.3_f32"], r["above_0.3_f16"]))
PY
done
