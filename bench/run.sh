#!/usr/bin/env bash
# Reproduces the whole comparison: texel on the desktop (llvmpipe, or a real
# GPU when one is there) in three modes plus the CPU reference, then texel's
# web build beside TensorFlow.js 4.22 (webgl and wasm) in one headless
# Chromium page (SwiftShader WebGL2, fresh profile). Writes
# results/bench-<date>/{desktop.json,browser.json,results.md,steady.svg,first_call.svg}.
#   bash bench/run.sh [--smoke] [--runs N] [--cases a,b] [--engines a,b]
#     --engines: the browser page's engines, a subset of texel, texel_cpu,
#     tfjs_webgl, tfjs_wasm (texel_cpu,tfjs_wasm: the CPU engines alone)
#   bash bench/run.sh --models [--smoke] [--runs N]   only the browser model
#     benchmark (texel cpu/gpu/auto beside onnxruntime-web; results/bench-<date>/models.json)
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
bash scripts/setup.sh
[[ -d build-bench ]] || meson setup build-bench --buildtype=release >/dev/null
ninja -C build-bench texel >/dev/null
TEXEL_WEB_BUILD=build-web bash scripts/build-web.sh >/dev/null
(cd bench/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
out="results/bench-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
if [[ " ${args[*]} " == *" --models "* ]]; then
    models_args=()
    for ((i = 0; i < ${#args[@]}; i++)); do
        case "${args[i]}" in
        --smoke) models_args+=(--smoke) ;;
        --runs) models_args+=(--runs "${args[i + 1]}"); i=$((i + 1)) ;;
        esac
    done
    node bench/browser/run.mjs --models --texel web --out "$out/models.json" "${models_args[@]}" \
        | tee "$out/models.md"
    exit 0
fi
desktop_args=() # --engines is the browser page's alone
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
    --engines) i=$((i + 1)) ;;
    *) desktop_args+=("${args[i]}") ;;
    esac
done
echo "desktop runner → $out/desktop.json"
xvfb-run -a build-bench/texel bench --json "$out/desktop.json" "${desktop_args[@]}"
echo "browser runner → $out/browser.json"
browser_args=()
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
    --smoke) browser_args+=(--smoke) ;;
    --runs | --cases | --engines) browser_args+=("${args[i]}" "${args[i + 1]}"); i=$((i + 1)) ;;
    esac
done
node bench/browser/run.mjs --cli build-bench/texel --texel web --out "$out/browser.json" "${browser_args[@]}"
python3 bench/report.py "$out" "$out/desktop.json" "$out/browser.json"
echo "wrote $out/results.md, steady.svg, first_call.svg"
