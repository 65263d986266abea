#!/usr/bin/env bash
# The CLI's contract: `texel info` and `texel op` output and counters.
set -uo pipefail
TEXEL=${1:-build/texel}
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

check "info probes float32 rendering" 'j["float32_render"] and j["max_texture_size"] >= 2048' \
    "$TEXEL" info --json
check "matmul 256, k=2: one specialized compile, accurate" \
    'j["specialized_compiles"] == 1 and j["max_abs_err"] <= 1e-3 and j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after 2 --json
check "matmul 256, never: no specialized compile" \
    'j["specialized_compiles"] == 0 and j["max_abs_err"] <= 1e-3 and j["generic_compiles"] >= 1' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after -1 --json
check "matmul 256, always: specialized from the first call" \
    'j["specialized_compiles"] == 1 and j["specialized_runs"] == 7' \
    "$TEXEL" op matmul --shape 256x256,256x256 --repeat 6 --specialize-after 0 --json
check "json has the documented counters" \
    'all(k in j for k in ["generic_compiles","specialized_compiles","cache_hits","draws","bytes_uploaded","bytes_downloaded","max_abs_err"])' \
    "$TEXEL" op add --shape 5x7x11x13,13 --repeat 2 --json
check "batched matmul with bias and gelu" 'j["mismatches"] == 0 and j["status"] == "TX_STATUS_OK"' \
    "$TEXEL" op matmul --shape 3x40x24,24x36 --bias --activation gelu --repeat 1 --json
check "an op error is reported with its status" 'j["status"] == "TX_STATUS_SHAPE_MISMATCH" and "matmul" in j["error"]' \
    "$TEXEL" op matmul --shape 4x5,6x7 --repeat 0 --json
check_rc "unknown op is a usage error" 2 "$TEXEL" op frobnicate --shape 4
check_rc "bad shape is a usage error" 2 "$TEXEL" op relu --shape 4xq
check_rc "unknown command is a usage error" 2 "$TEXEL" bogus

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
