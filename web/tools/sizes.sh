#!/usr/bin/env bash
# Prints raw, gzip -9 and brotli -q 11 sizes of the built package files (the
# README's table): bash web/tools/sizes.sh [DIR] (default web/).
# The three builds: texel.* (wasm SIMD, one thread), texel-mt.* (SIMD + threads),
# texel-scalar.* (no SIMD, for browsers without it).
set -euo pipefail
dir=${1:-$(dirname "$0")/..}
printf '| file | raw | gzip -9 | brotli -q 11 |\n|---|---:|---:|---:|\n'
for f in texel.wasm texel.mjs texel-mt.wasm texel-mt.mjs texel-mt.worker.js texel-scalar.wasm \
    texel-scalar.mjs texel.js; do
    p="$dir/$f"
    printf '| %s | %d | %d | %d |\n' "$f" "$(wc -c <"$p")" "$(gzip -9c "$p" | wc -c)" \
        "$(brotli -q 11 -c "$p" | wc -c)"
done
