#!/usr/bin/env bash
# Installs everything texel needs on a fresh Debian machine (idempotent):
# Debian packages via apt-get. Run as root (or with sudo available).
set -euo pipefail

PKGS=(meson ninja-build pkg-config gcc python3 python3-glad libglfw3-dev libstb-dev
      xvfb xauth libgl1-mesa-dri libegl1 libgles2)
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
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi
