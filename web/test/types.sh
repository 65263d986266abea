#!/usr/bin/env bash
# Type-checks web/texel.d.ts + the generated web/texel-ops.d.ts against
# web/test/types_check.ts with the TypeScript compiler from web/package.json.
cd "$(dirname "$0")/.." || exit 1
if node_modules/.bin/tsc -p test/tsconfig.json; then
    echo "ok   texel.d.ts type-checks against test/types_check.ts"
    echo "1 passed, 0 failed"
else
    echo "FAIL texel.d.ts type-check"
    echo "0 passed, 1 failed"
    exit 1
fi
