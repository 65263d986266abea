#!/usr/bin/env bash
# Quick start, part one: install, build, and run the default demo — the probed
# device capabilities, then a 256×256 matmul checked against the C reference,
# with the program-cache counters.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[[ -d build ]] || meson setup build --buildtype=release
ninja -C build texel
xvfb-run -a build/texel info
xvfb-run -a build/texel op matmul --shape 256x256,256x256 --repeat 6 --specialize-after 2
