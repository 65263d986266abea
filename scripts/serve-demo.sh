#!/usr/bin/env bash
# Builds the browser package and serves the demo on http://127.0.0.1:PORT/web/demo/
# (default port 8080; 127.0.0.1 only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-web.sh
exec node web/test/serve.mjs "${1:-8080}"
