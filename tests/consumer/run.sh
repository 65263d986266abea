#!/usr/bin/env bash
# texel used from another project (tests/consumer/consumer.c, a matmul and an
# ONNX session under Xvfb), built four ways:
#   installed: `meson install --destdir` of BUILD into a temp dir, then the
#     consumer compiled by hand against it through pkg-config, linked to
#     libtexel.so (its soname and exported symbols checked) and to libtexel.a
#     (pkg-config --static);
#   cmake: tests/consumer/CMakeLists.txt (pkg_check_modules) against the same;
#   subproject: tests/consumer/meson.build with subprojects/texel linked to
#     this repository and --force-fallback-for=texel.
# Usage: tests/consumer/run.sh BUILD_DIR. Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=$(cd "${1:-$root/build}" && pwd)
MODEL=${TEXEL_CONSUMER_MODEL:-/usr/share/libonnx-testdata/data/node/test_relu/model.onnx}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
xvfb() { xvfb-run -a -n $((100 + RANDOM % 4000)) -s "-screen 0 640x480x24 -nolisten tcp -noreset" "$@"; }
# Runs a consumer binary and adds its own "N passed, N failed" to ours.
run_consumer() { # name, command...
    local name=$1 out rc line
    shift
    out=$(xvfb "$@" 2>&1)
    rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
    if [[ $rc -eq 0 && -n $line && $line == *", 0 failed" ]]; then
        ok
        echo "$name: $line"
    else
        bad "$name: exit $rc"
        echo "$out" | tail -20
    fi
}

version=$(meson introspect --projectinfo "$BUILD" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')

# ---- installed (DESTDIR) ----
dest=$tmp/root
if meson install -C "$BUILD" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1; then ok; else
    bad "meson install"
    tail -20 "$tmp/install.log"
fi
pc=$(find "$dest" -name texel.pc | head -1)
if [[ -n $pc ]]; then ok; else bad "no texel.pc installed"; fi
PKG_CONFIG_PATH=$(dirname "${pc:-/nonexistent}")
export PKG_CONFIG_PATH
texel_pc() { PKG_CONFIG_SYSROOT_DIR=$dest pkg-config "$@" texel; }
libdir=$dest$(pkg-config --variable=libdir texel 2>/dev/null)
for f in "$libdir/libtexel.a" "$libdir/libtexel.so" "$(dirname "$(find "$dest" -name texel.h | head -1)")/texel_ops.def"; do
    if [[ -e $f ]]; then ok; else bad "not installed: ${f#"$dest"}"; fi
done
if [[ $(pkg-config --modversion texel 2>/dev/null) == "$version" ]]; then ok; else bad "pkg-config --modversion is not $version"; fi
soname=$(readelf -d "$libdir/libtexel.so" 2>/dev/null | sed -nE 's/.*SONAME.*\[(.*)\]/\1/p')
if [[ $soname == libtexel.so.* && -e $libdir/$soname ]]; then ok; else bad "libtexel.so soname '$soname'"; fi
# libtexel.so exports what texel.h declares, and nothing else (no internals, no glad)
exported=$(nm -D --defined-only "$libdir/libtexel.so" 2>/dev/null | awk '{print $3}' | sort)
declared=$(python3 "$root/tools/gen_symbols.py" --list "$root/engine/include/texel.h")
if [[ -n $declared && $exported == "$declared" ]]; then ok; else
    bad "libtexel.so exports other symbols than texel.h declares:"
    diff <(echo "$declared") <(echo "$exported") | head -10
fi

# shared
# shellcheck disable=SC2046
if cc -std=c11 -o "$tmp/consumer-shared" "$here/consumer.c" $(texel_pc --cflags --libs) \
    $(pkg-config --cflags --libs glfw3) -lm 2>"$tmp/cc.log"; then
    ok
    if readelf -d "$tmp/consumer-shared" | grep -q "NEEDED.*\[$soname\]"; then ok; else bad "consumer-shared does not need $soname"; fi
    run_consumer "installed, shared" env LD_LIBRARY_PATH="$libdir" "$tmp/consumer-shared" "$MODEL" "$version"
else
    bad "compile against the installed libtexel.so"
    cat "$tmp/cc.log"
fi
# static: the archive and Libs.private, nothing else
libs=$(texel_pc --static --libs)
# shellcheck disable=SC2046,SC2086
if cc -std=c11 -o "$tmp/consumer-static" "$here/consumer.c" $(texel_pc --cflags) ${libs/-ltexel/-l:libtexel.a} \
    $(pkg-config --cflags --libs glfw3) -lm 2>"$tmp/cc.log"; then
    ok
    if ! readelf -d "$tmp/consumer-static" | grep -q "NEEDED.*libtexel"; then ok; else bad "consumer-static needs libtexel.so"; fi
    run_consumer "installed, static" "$tmp/consumer-static" "$MODEL" "$version"
else
    bad "compile against the installed libtexel.a"
    cat "$tmp/cc.log"
fi

# ---- CMake through pkg-config ----
# (a texel.pc whose prefix points into the DESTDIR, as a user would relocate it:
# PKG_CONFIG_SYSROOT_DIR would move glfw3's paths there too)
mkdir -p "$tmp/pc"
sed "s|^prefix=|prefix=$dest|" "$pc" >"$tmp/pc/texel.pc"
if command -v cmake >/dev/null; then
    if PKG_CONFIG_PATH=$tmp/pc cmake -S "$here" -B "$tmp/cmake" >"$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1; then
        ok
        run_consumer "cmake" env LD_LIBRARY_PATH="$libdir" "$tmp/cmake/consumer" "$MODEL" "$version"
    else
        bad "cmake build"
        tail -20 "$tmp/cmake.log"
    fi
else
    echo "cmake: not installed (scripts/setup.sh installs it)"
    bad "cmake missing"
fi
unset PKG_CONFIG_PATH

# ---- meson subproject ----
sub=$tmp/sub
mkdir -p "$sub/subprojects"
cp "$here/consumer.c" "$here/meson.build" "$here/meson_options.txt" "$sub/"
ln -s "$root" "$sub/subprojects/texel"
if meson setup "$sub/build" "$sub" --force-fallback-for=texel -Dmodel="$MODEL" >"$tmp/sub.log" 2>&1 &&
    ninja -C "$sub/build" >>"$tmp/sub.log" 2>&1; then
    ok
    run_consumer "subproject" "$sub/build/consumer" "$MODEL" "$version"
else
    bad "subproject build"
    tail -30 "$tmp/sub.log"
fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
