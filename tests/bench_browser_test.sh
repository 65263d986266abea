#!/usr/bin/env bash
# The browser benchmark runner works on the smallest cases: texel's web build
# and TF.js (webgl, wasm) each produce timings for every smoke case; and on
# one real model (BlazeFace) beside onnxruntime-web.
set -uo pipefail
TEXEL=${1:-build/texel}
cd "$(dirname "$0")/.."
(cd bench/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || {
    echo "npm ci in bench/browser failed"; echo "0 passed, 1 failed"; exit 1; }
out=$(mktemp)
node bench/browser/run.mjs --cli "$TEXEL" --texel web --smoke --runs 2 --out "$out" >/dev/null 2>&1
python3 - "$out" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL browser runner wrote no JSON:", e); print("0 passed, 1 failed"); sys.exit(1)
ok = bad = 0
# what a peer cannot run, named by the error it gives: if it starts to run,
# this fails too, so the bench README's "cannot" is kept true
known = {("train_cnn_step", "tfjs_wasm"): "Conv2DBackpropFilter"}
for c in j["cases"]:
    for eng in ("texel", "texel_cpu", "tfjs_webgl", "tfjs_wasm"):
        r = c.get(eng, {})
        gap = known.get((c["name"], eng))
        if gap:
            if r.get("status", "").startswith("failed:") and gap in r["status"]:
                ok += 1
            else:
                bad += 1
                print("FAIL %s %s: want a failure naming %s, got %s" % (c["name"], eng, gap, r.get("status")))
        elif r.get("status") == "ok" and r.get("median_ms", 0) > 0 and r.get("first_ms", 0) > 0:
            ok += 1
        else:
            bad += 1
            print("FAIL %s %s: %s" % (c["name"], eng, r.get("status")))
    # the engines' first outputs agree (page.mjs checkCase): texel's two
    # devices on every case, texel and TF.js where the layouts agree
    chk = c.get("check", {})
    want = ["texel_vs_texel_cpu"] + (["texel_vs_tfjs_webgl"] if c["name"] != "train_cnn_step" else [])
    if all(k in chk and chk[k] is not None and chk[k] <= 1e-3 for k in want):
        ok += 1
    else:
        bad += 1
        print("FAIL %s: first outputs disagree or were not compared: %s" % (c["name"], chk))
if not j["cases"]:
    bad += 1
    print("FAIL no smoke cases")
# every case of bench/cases.c (smoke or not) has a texel and a TF.js side
if "missing" in j and not j["missing"]:
    ok += 1
else:
    bad += 1
    print("FAIL cases without a browser implementation: %s" % j.get("missing"))
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
rc=$?
rm -f "$out"
# the real-model smoke: BlazeFace through texel cpu + gpu beside onnxruntime-web
# wasm (3 runs each, same inputs); every engine runs and texel agrees with it
mout=$(mktemp)
node bench/browser/run.mjs --models --smoke --texel web --out "$mout" >/dev/null 2>&1
python3 - "$mout" <<'PY'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["results"]
except Exception as e:
    print("FAIL model runner wrote no JSON:", e); print("0 passed, 1 failed"); sys.exit(1)
ok = bad = 0
for r in rows:
    good = r.get("status") == "ok" and r.get("steady_ms", 0) > 0
    if good and r["engine"].startswith("texel"):
        good = r.get("max_abs_diff", 1e9) <= 1e-3
    if good:
        ok += 1
    else:
        bad += 1
        print("FAIL models %s %s: %s, max abs diff %s" % (r["model"], r["engine"], r.get("status"), r.get("max_abs_diff")))
if not rows:
    bad += 1
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
mrc=$?
rm -f "$mout"
((rc == 0 && mrc == 0))
exit $?
