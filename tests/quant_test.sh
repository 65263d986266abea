#!/usr/bin/env bash
# Quantization cases the backend tests do not reach (tests/quant_cases.py
# says which): each model runs through `texel run` on the GPU and on the CPU
# device and its output must equal the exact answer computed in numpy (ints
# exactly, floats within 1e-6 relative); each malformed model must fail with
# a message naming what is wrong.
#
# Usage: tests/quant_test.sh [path/to/texel]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TEXEL=${1:-build/texel}
PY=/usr/bin/python3
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
    echo "FAIL python3-onnx / python3-numpy missing (scripts/setup.sh installs them)"
    echo "0 passed, 1 failed"
    exit 1
fi
"$PY" tests/quant_cases.py "$work/cases" || { echo "0 passed, 1 failed"; exit 1; }

for c in "$work"/cases/*/; do
    name=$(basename "$c")
    for dev in gpu cpu; do
        out="$work/out-$name-$dev"
        xvfb-run -a "$TEXEL" run "$c/model.onnx" --input "x=$c/input.x.npy" --device "$dev" \
            --json --save "$out" >"$out.json" 2>"$out.err"
        rc=$?
        if [[ -f $c/error.txt ]]; then
            want=$(cat "$c/error.txt")
            if [[ $rc -ne 0 ]] && grep -qF "$want" "$out.json"; then
                pass=$((pass + 1))
                echo "ok   $name ($dev): refused: $(grep -o '"error": .*' "$out.json" | cut -c1-160)"
            else
                fail=$((fail + 1))
                echo "FAIL $name ($dev): want an error containing \"$want\", got exit $rc: $(head -c 300 "$out.json")"
            fi
            continue
        fi
        if [[ $rc -ne 0 ]]; then
            fail=$((fail + 1))
            echo "FAIL $name ($dev): exit $rc: $(head -c 300 "$out.json") $(tail -2 "$out.err")"
            continue
        fi
        if [[ -f $c/fused.txt ]] && ! grep -q "\"fused\": $(cat "$c/fused.txt")," "$out.json"; then
            fail=$((fail + 1))
            echo "FAIL $name ($dev): want $(cat "$c/fused.txt") nodes fused: $(grep -o '"fused": [0-9]*' "$out.json")"
            continue
        fi
        if msg=$("$PY" - "$c/want.y.npy" "$out/y.npy" 2>&1 <<'PY'
import sys
import numpy as np
want, got = np.load(sys.argv[1]), np.load(sys.argv[2]).astype(np.float64)
if want.shape != got.shape:
    sys.exit("shape %s, want %s" % (got.shape, want.shape))
if want.dtype.kind in "iu":
    bad = np.flatnonzero(got != want)
else:
    bad = np.flatnonzero(np.abs(got - want) > 1e-6 * np.maximum(1, np.abs(want)))
if bad.size:
    i = bad[0]
    sys.exit("%d of %d differ; first at %d: got %r, want %r" %
             (bad.size, want.size, i, got.flat[i], want.flat[i]))
print("%d values exact" % want.size if want.dtype.kind in "iu" else "%d values" % want.size)
PY
        ); then
            pass=$((pass + 1))
            echo "ok   $name ($dev): $msg"
        else
            fail=$((fail + 1))
            echo "FAIL $name ($dev): $msg"
        fi
    done
done

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
