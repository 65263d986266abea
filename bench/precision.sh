#!/usr/bin/env bash
# Half-float storage (`texel run --precision f16`: RGBA16F textures) against
# float32 on the real models of tests/models_test.sh, on the GPU device: peak
# texture memory of each and bench/precision.py's comparison of the outputs.
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
    for p in f32 f16; do
        mkdir -p "$work/$name/$p"
        # shellcheck disable=SC2086
        xvfb-run -a "$TEXEL" run "$model" --input "$input=$photo" $opts --device gpu \
            --precision $p --json --save "$work/$name/$p" >"$work/$name/$p.json"
    done
    python3 - "$name" "$work/$name" <<'PY'
import json, subprocess, sys
name, d = sys.argv[1], sys.argv[2]
mem = {p: json.load(open("%s/%s.json" % (d, p)))["peak_texture_bytes"] for p in ("f32", "f16")}
cmp = json.loads(subprocess.check_output(["python3", "bench/precision.py", d + "/f32", d + "/f16"]))
print("%s: peak texture bytes f32 %d, f16 %d (%.2fx)" % (name, mem["f32"], mem["f16"], mem["f16"] / mem["f32"]))
for out, r in cmp.items():
    print("  %s %s: max |f16 - f32| %.4g (max |f32| %.4g), argmax agrees %.1f%%, > 0: %d vs %d, > 0.3: %d vs %d"
          % (out, r["shape"], r["max_abs_diff"], r["max_abs_f32"], 100 * r["argmax_agree"],
             r["positive_f32"], r["positive_f16"], r["above_0.3_f32"], r["above_0.3_f16"]))
PY
done
