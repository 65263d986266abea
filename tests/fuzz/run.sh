#!/usr/bin/env bash
# Runs one libFuzzer target for a given time:
#   bash tests/fuzz/run.sh TARGET SECONDS [libFuzzer flags...]
#   bash tests/fuzz/run.sh all SECONDS [libFuzzer flags...]   (each target in turn)
# TARGET is a tests/fuzz/fuzz_<TARGET>.c (shape_parse, api, ...). Builds
# build-fuzz/ with clang (ASan + UBSan + libFuzzer coverage), seeds from
# tests/fuzz/corpus/TARGET/, writes new inputs to build-fuzz/fuzz-corpus/TARGET/
# and crashes to build-fuzz/fuzz-crashes/TARGET/, and ends with one line of
# totals. A crashing input belongs in tests/fuzz/corpus/TARGET/ (named
# regress-<what>) once fixed: the ordinary suite replays that directory.
set -uo pipefail
cd "$(dirname "$0")/../.."
target=${1:?usage: bash tests/fuzz/run.sh TARGET SECONDS [libFuzzer flags...]}
secs=${2:?usage: bash tests/fuzz/run.sh TARGET SECONDS [libFuzzer flags...]}
shift 2
if [[ $target == all ]]; then
    rc=0
    for f in tests/fuzz/fuzz_*.c; do
        t=$(basename "$f" .c)
        bash "$0" "${t#fuzz_}" "$secs" "$@" || rc=1
    done
    exit $rc
fi
[[ -f tests/fuzz/fuzz_$target.c ]] || { echo "no target tests/fuzz/fuzz_$target.c" >&2; exit 2; }
TEXEL_SETUP_EXTRA="clang libclang-rt-14-dev" bash scripts/setup.sh || exit 1

BUILD=${TEXEL_FUZZ_BUILD_DIR:-build-fuzz}
if [[ ! -d "$BUILD" ]]; then
    CC=clang meson setup "$BUILD" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link >/dev/null || exit 1
fi
ninja -C "$BUILD" "tests/fuzz/fuzz_$target" >/dev/null || exit 1

seeds=tests/fuzz/corpus/$target
work=$BUILD/fuzz-corpus/$target
crashes=$BUILD/fuzz-crashes/$target
mkdir -p "$seeds" "$work" "$crashes"
# The ONNX targets also start from every model in libonnx-testdata (Debian,
# installed by setup.sh) and the pinned real models (scripts/fetch_models.sh),
# linked under one directory with unique names; the loader target also gets
# the test data's TensorProto files (input_*.pb / output_*.pb).
extra=()
if [[ $target == onnx_* ]]; then
    models=$BUILD/fuzz-seeds/$target
    rm -rf "$models"
    mkdir -p "$models"
    data=/usr/share/libonnx-testdata/data
    pattern=(-name model.onnx)
    [[ $target == onnx_load ]] && pattern=(-name model.onnx -o -name '*.pb')
    find "$data" -type f \( "${pattern[@]}" \) | while read -r f; do
        rel=${f#"$data"/}
        ln -s "$f" "$models/${rel//\//__}"
    done
    if cache=$(bash scripts/fetch_models.sh 2>/dev/null); then
        find "$cache/models" -name '*.onnx' -exec ln -s {} "$models/" \;
    else
        echo "fuzz: the real models could not be fetched; seeding from libonnx-testdata only" >&2
    fi
    extra=("$models")
    # libFuzzer caps inputs at 1 MiB unless told otherwise, which would cut
    # the real models (PP-OCRv4 rec is 10.8 MB) short of their graphs.
    [[ " $* " == *" -max_len="* ]] ||
        set -- -max_len="$(find -L "$models" "$seeds" -type f -printf '%s\n' | sort -n | tail -1)" "$@"
fi
export MESA_SHADER_CACHE_DISABLE=true
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
log=$BUILD/fuzz-$target.log
start=$SECONDS
# Targets that need GL get a virtual display; the others do not mind one.
xvfb-run -a -n $((100 + RANDOM % 800)) -s "-screen 0 1280x1024x24 -nolisten tcp -noreset" "$BUILD/tests/fuzz/fuzz_$target" -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix="$crashes/" -rss_limit_mb=4096 -timeout=60 "$@" "$work" "$seeds" "${extra[@]}" 2>&1 | tee "$log" |
    grep -E '^(INFO: Seed|#[0-9]+ +(INITED|DONE)|==[0-9]+==ERROR|SUMMARY|Done|stat::)'
rc=${PIPESTATUS[0]}
execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
corpus=$(find "$work" "$seeds" -type f | wc -l) # new + committed inputs
found=$(find "$crashes" -type f | wc -l)
echo "fuzz $target: ${execs:-?} executions in $((SECONDS - start))s, corpus $corpus inputs, $found crashing inputs in $crashes (exit $rc)"
[[ $rc -eq 0 ]]
