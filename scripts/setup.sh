#!/usr/bin/env bash
# Installs everything texel needs on a fresh Debian machine (idempotent):
# Debian packages via apt-get, npm packages from lockfiles. Run as root (or
# with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(meson ninja-build pkg-config gcc python3 python3-glad libglfw3-dev libstb-dev
      xvfb xauth libgl1-mesa-dri libegl1 libegl-mesa0 libegl-dev libgles2
      libonnx-testdata darknet python3-onnx python3-numpy
      cmake)  # tests/consumer builds a CMake project against the installed texel
# The browser build and tests (scripts/build-web.sh, scripts/test.sh): Debian's
# emscripten and chromium; node + npm for playwright-core (web/package.json).
if [[ "${TEXEL_SETUP_WEB:-}" == "1" ]]; then
    PKGS+=(emscripten chromium brotli)
fi
# The real-model tests fetch models and onnxruntime-node through npm: Debian's
# nodejs + npm, unless a node with its own npm is already there.
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
if [[ "${TEXEL_SETUP_EXTRA:-}" != "" ]]; then
    # shellcheck disable=SC2206
    PKGS+=(${TEXEL_SETUP_EXTRA})
fi

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q \
        --no-install-recommends "${missing[@]}"
fi

if [[ "${TEXEL_SETUP_WEB:-}" == "1" ]]; then
    # npm packages from web/package-lock.json (playwright-core drives Debian's
    # chromium; it never downloads a browser).
    if [[ ! -f web/node_modules/.package-lock.json ||
          web/package-lock.json -nt web/node_modules/.package-lock.json ]]; then
        echo "setup: npm ci in web/"
        (cd web && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    fi
fi

# The digits data `texel train` and its smoke test use (from Debian's
# python3-sklearn, sha256-pinned, into the cache).
bash scripts/fetch_digits.sh >/dev/null
