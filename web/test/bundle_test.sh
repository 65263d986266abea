#!/usr/bin/env bash
# texel-gpu as an app's dependency: `npm pack` of web/ (after
# scripts/build-web.sh), the tarball installed into a fresh temp project, the
# page web/test/bundle/ (a matmul, then BlazeFace on the demo's photo)
# bundled by esbuild and by Vite (pinned in web/package.json), and each bundle
# opened in headless Chromium (web/test/run.mjs dir). texel.create() gets no
# wasmUrl: Vite emits texel.wasm from texel.mjs's
# `new URL('texel.wasm', import.meta.url)`; esbuild leaves that URL relative to
# the bundle, where the app copies the .wasm files (web/README.md). Node
# imports the installed package too (web/test/node_test.mjs).
# Needs web/demo/assets (scripts/demo-assets.sh). Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
bin=$root/web/node_modules/.bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# ---- the tarball ----
tgz=$(cd web && npm pack --silent --pack-destination "$tmp" 2>"$tmp/pack.err" | tail -1)
if [[ -n $tgz && -f $tmp/$tgz ]]; then ok "npm pack: $tgz"; else
    bad "npm pack"
    cat "$tmp/pack.err"
    echo "$pass passed, $fail failed"
    exit 1
fi
files=$(tar tzf "$tmp/$tgz" | sed 's|^package/||' | sort | tr '\n' ' ')
want="README.md package.json texel-mt.mjs texel-mt.wasm texel-mt.worker.js texel-ops.d.ts texel-scalar.mjs texel-scalar.wasm texel.d.ts texel.js texel.mjs texel.wasm "
if [[ $files == "$want" ]]; then ok "the tarball holds the package's files, nothing else"; else
    bad "tarball files: $files (want $want)"
fi
# the package.json the tarball carries: every file "exports" names is there
if tar xzf "$tmp/$tgz" -C "$tmp" && node -e '
const p = require(process.argv[1] + "/package/package.json"), fs = require("fs");
const paths = [p.main, p.types, ...Object.values(p.exports).flatMap((e) => typeof e === "string" ? [e] : Object.values(e))];
const missing = paths.filter((f) => !fs.existsSync(process.argv[1] + "/package/" + f));
if (missing.length) { console.log("missing: " + missing); process.exit(1); }' "$tmp"; then
    ok "main, types and exports name files of the tarball"
else
    bad "package.json names files the tarball lacks"
fi

# ---- a fresh project that depends on it ----
app=$tmp/app
mkdir -p "$app/public"
cat >"$app/package.json" <<JSON
{ "name": "texel-bundle-check", "private": true, "type": "module",
  "dependencies": { "texel-gpu": "file:../$tgz" } }
JSON
if (cd "$app" && npm install --offline --loglevel=error >"$tmp/install.log" 2>&1) &&
    [[ -f $app/node_modules/texel-gpu/texel.wasm ]]; then
    ok "npm install of the tarball"
else
    bad "npm install of the tarball"
    cat "$tmp/install.log"
fi
cp web/test/bundle/index.html web/test/bundle/main.js web/demo/blazeface.js web/test/node_test.mjs web/test/onnx_model.js "$app/"
cp web/demo/assets/face_detection_front_128x128.onnx web/demo/assets/astronaut.png "$app/public/"
# Node imports the installed package: create() gives the CPU device (no WebGL2), ops, a session and
# BlazeFace (public/) run
if out=$(cd "$app" && timeout 120 node node_test.mjs texel-gpu 2>&1); then ok "Node: $(tail -1 <<<"$out")"; else
    bad "Node with the installed package"
    echo "$out" | tail -10
fi

run_page() { # name, dir
    local out
    out=$(node web/test/run.mjs dir "$2" 2>&1)
    local rc=$? line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
    if [[ $rc -eq 0 && $line == *", 0 failed" ]]; then ok "$1 in Chromium: $line"; else
        bad "$1 in Chromium (exit $rc)"
        echo "$out" | tail -15
    fi
}

# ---- esbuild ----
if (cd "$app" && "$bin/esbuild" main.js --bundle --format=esm --outdir=dist-esbuild \
    --log-level=warning) >"$tmp/esbuild.log" 2>&1; then
    ok "esbuild bundles the page"
    cp "$app/index.html" "$app"/public/* "$app/dist-esbuild/"
    cp "$app"/node_modules/texel-gpu/*.wasm "$app/dist-esbuild/"
    run_page "esbuild bundle" "$app/dist-esbuild"
else
    bad "esbuild"
    cat "$tmp/esbuild.log"
fi

# ---- Vite ----
if (cd "$app" && node "$root/web/node_modules/vite/bin/vite.js" build --logLevel warn \
    --outDir dist-vite) >"$tmp/vite.log" 2>&1; then
    ok "vite build bundles the page"
    if ls "$app"/dist-vite/assets/texel-*.wasm >/dev/null 2>&1; then ok "Vite emitted texel.wasm"; else
        bad "Vite did not emit texel.wasm: $(find "$app/dist-vite" -type f | tr "\n" " ")"
    fi
    run_page "Vite bundle" "$app/dist-vite"
else
    bad "vite build"
    cat "$tmp/vite.log"
fi

# ---- Vite's dev server, with the config web/README.md gives for it ----
echo "export default { optimizeDeps: { exclude: ['texel-gpu'] } };" >"$app/vite.config.js"
out=$(timeout 300 node web/test/vite_dev.mjs "$app" 2>&1)
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
if [[ $rc -eq 0 && $line == *", 0 failed" ]]; then ok "Vite dev server in Chromium: $line"; else
    bad "Vite dev server in Chromium (exit $rc)"
    echo "$out" | tail -15
fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
