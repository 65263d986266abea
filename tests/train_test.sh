#!/usr/bin/env bash
# `texel train` on the sklearn digits (scripts/fetch_digits.sh puts them in the
# cache): a few epochs of the MLP and the CNN on both devices must lower the
# loss; the MLP's every step must match the plain-C reference trainer; full
# runs on the CPU device must reach 95% held-out accuracy; bad options and a
# missing data file are statuses.
set -uo pipefail
cd "$(dirname "$0")/.."
TEXEL=${1:-build/texel}
# shellcheck source=tests/cli_lib.sh
source tests/cli_lib.sh
if ! bash scripts/fetch_digits.sh >/dev/null; then
    echo "train_test: no digits data (scripts/fetch_digits.sh failed)"
    echo "0 passed, 1 failed"
    exit 1
fi

for m in mlp cnn; do
    for d in gpu cpu; do
        check "$m smoke $d" "j['last_loss'] < j['first_loss'] and j['steps'] == 132" \
            "$TEXEL" train --model "$m" --device "$d" --smoke --json
    done
    check "$m accuracy cpu" "j['accuracy'] >= 0.95 and j['held_out'] == 360" \
        "$TEXEL" train --model "$m" --device cpu --json
done
for d in gpu cpu; do
    check_rc "mlp matches the reference trainer on the $d" 0 \
        "$TEXEL" train --check-reference --device "$d"
done
check_rc "unknown model" 2 "$TEXEL" train --model rnn
check_rc "reference is mlp only" 2 "$TEXEL" train --model cnn --check-reference
check_rc "missing data" 1 "$TEXEL" train --data /nonexistent/digits.csv

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
