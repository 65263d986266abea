#!/usr/bin/env bash
# Builds the browser package, fetches the demo's model and photos into
# web/demo/assets/ (scripts/demo-assets.sh: pinned, sha512-checked, not in git)
# and serves the demo on http://127.0.0.1:PORT/web/demo/ (default port 8080;
# 127.0.0.1 only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-web.sh
bash scripts/demo-assets.sh >/dev/null
exec node web/test/serve.mjs "${1:-8080}"
