#!/usr/bin/env bash
# Extracts the sklearn digits (1,797 8x8 images, sklearn/datasets/data/digits.csv.gz)
# from Debian's python3-sklearn package, pinned by version and by the sha256 of
# the file, into the cache (never the repository):
# ${TEXEL_CACHE:-~/.cache/texel}/digits/digits.csv (what `texel train` reads).
# Prints that path on success.
set -euo pipefail
CACHE=${TEXEL_CACHE:-$HOME/.cache/texel}
VER=1.2.1+dfsg-1
SHA256=46abec6b12486ad9e51943373abcf22bbea1b5a51a1619b361570d8893f1464a
dest="$CACHE/digits"
if [[ -f "$dest/digits.csv" && -f "$dest/digits.csv.gz" ]] &&
    [[ "$(sha256sum "$dest/digits.csv.gz" | cut -d' ' -f1)" == "$SHA256" ]]; then
    echo "$dest/digits.csv"
    exit 0
fi
mkdir -p "$dest"
tmp=$(mktemp -d "$CACHE/.digits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt-get download drops privileges to _apt where it can: give it a directory it may write
chmod 755 "$tmp"
# apt-get download needs the package lists: refresh them once if it fails
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
(cd "$tmp" && { apt-get download -q "python3-sklearn=$VER" >/dev/null 2>&1 ||
    { $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null &&
        apt-get download -q "python3-sklearn=$VER" >/dev/null 2>&1; }; }) || {
    echo "fetch_digits: apt-get download python3-sklearn=$VER failed" >&2
    exit 1
}
dpkg -x "$tmp"/python3-sklearn_*.deb "$tmp/x"
gz=$(find "$tmp/x" -path '*sklearn/datasets/data/digits.csv.gz' | head -n 1)
got=$(sha256sum "$gz" | cut -d' ' -f1)
if [[ "$got" != "$SHA256" ]]; then
    echo "fetch_digits: digits.csv.gz: sha256 $got, want $SHA256" >&2
    exit 1
fi
cp "$gz" "$dest/digits.csv.gz"
gzip -dc "$dest/digits.csv.gz" >"$dest/digits.csv.tmp"
mv "$dest/digits.csv.tmp" "$dest/digits.csv"
echo "$dest/digits.csv"
