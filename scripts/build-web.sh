#!/usr/bin/env bash
# Builds the browser package: emscripten (Debian's) via the meson cross file
# into build-web/, then copies texel.mjs + texel.wasm (wasm SIMD, one thread)
# and texel-mt.mjs + texel-mt.wasm + texel-mt.worker.js (SIMD + threads) and
# texel-scalar.mjs + .wasm (no SIMD, for browsers without it) next to web/texel.js and
# generates web/texel-ops.d.ts from the op list, so web/ is the npm package.
#   TEXEL_WEB_BUILD   build directory (default build-web)
#   TEXEL_WEB_BUILDTYPE  meson buildtype (default release)
set -euo pipefail
cd "$(dirname "$0")/.."
TEXEL_SETUP_WEB=1 bash scripts/setup.sh
export NODE_PATH=/usr/share/nodejs
# emcc builds its system libraries into its cache on first use; Debian's lives
# under /usr/share, which only root may write.
if [[ -z "${EM_CACHE:-}" && ! -w /usr/share/emscripten/cache ]]; then
    export EM_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/texel-emscripten"
fi
BUILD=${TEXEL_WEB_BUILD:-build-web}
werror=false
[[ "${CI:-}" == "true" ]] && werror=true
if [[ ! -d "$BUILD" ]]; then
    meson setup "$BUILD" --cross-file web/emscripten-cross.ini \
        --buildtype="${TEXEL_WEB_BUILDTYPE:-release}" -Dwerror=$werror
else
    meson configure "$BUILD" -Dwerror=$werror >/dev/null
fi
ninja -C "$BUILD"
# texel.* : SIMD, one thread; texel-mt.* (+ its pthread worker): SIMD + threads
cp "$BUILD/web/texel.mjs" "$BUILD/web/texel.wasm" web/
cp "$BUILD/web/texel-mt.mjs" "$BUILD/web/texel-mt.wasm" "$BUILD/web/texel-mt.worker.js" web/
# Bundlers: Vite bundles `new Worker(new URL("x.js", import.meta.url))` as a
# classic worker, which fails the app's whole build here (the pthread worker
# imports texel-mt.mjs: code splitting in an iife). With the name in a
# variable bundlers leave the worker alone; the threaded build then finds it
# next to the module (web/README.md, "Bundlers").
worker_new='new Worker(new URL("texel-mt.worker.js",import.meta.url))'
grep -qF "$worker_new" web/texel-mt.mjs || { echo "build-web: texel-mt.mjs lacks $worker_new (another emscripten?)" >&2; exit 1; }
sed -i 's|new Worker(new URL("texel-mt.worker.js",import.meta.url))|new Worker(new URL(txwWorker,import.meta.url))|' web/texel-mt.mjs
sed -i '1i var txwWorker="texel-mt.worker.js";' web/texel-mt.mjs
cp "$BUILD/web/texel-scalar.mjs" "$BUILD/web/texel-scalar.wasm" web/
node web/tools/gen-dts.mjs > web/texel-ops.d.ts
