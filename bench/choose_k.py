#!/usr/bin/env python3
"""Measures the adaptive-specialization threshold k on this machine.

For each k in {0, 1, 2, 3, 5, never} and each case, runs `texel op` in a fresh
process with the driver's shader disk cache disabled, and reports the total
time of the first 10 calls (compiles included) and the steady-state median.
Usage: bench/choose_k.py [TEXEL] (default build/texel; runs under xvfb-run)."""
import json
import os
import subprocess
import sys

TEXEL = sys.argv[1] if len(sys.argv) > 1 else "build/texel"
CASES = [
    ("matmul", "64x64,64x64"),
    ("matmul", "256x256,256x256"),
    ("matmul", "512x512,512x512"),
    ("add", "1024x1024,1024"),
    ("relu", "1024x1024"),
    ("gelu", "256x1000"),
]
KS = [0, 1, 2, 3, 5, -1]


def run(op, shape, k):
    env = dict(os.environ, MESA_SHADER_CACHE_DISABLE="true")
    out = subprocess.run(["xvfb-run", "-a", TEXEL, "op", op, "--shape", shape, "--repeat", "24",
                          "--specialize-after", str(k), "--json"],
                         capture_output=True, text=True, env=env, check=True).stdout
    j = json.loads(out)
    calls = [j["first_ms"]] + j["call_ms"]
    return sum(calls[:10]), sorted(calls[10:])[len(calls[10:]) // 2]


def main():
    rows = {}
    for op, shape in CASES:
        for k in KS:
            rows[(op, shape, k)] = run(op, shape, k)
    print("| case | " + " | ".join("k=%s" % ("never" if k < 0 else k) for k in KS) + " |")
    print("|---|" + "---:|" * len(KS))
    tot10 = {k: 0.0 for k in KS}
    totss = {k: 0.0 for k in KS}
    for op, shape in CASES:
        cells = []
        for k in KS:
            f10, ss = rows[(op, shape, k)]
            tot10[k] += f10
            totss[k] += ss
            cells.append("%.1f / %.2f" % (f10, ss))
        print("| %s %s | %s |" % (op, shape, " | ".join(cells)))
    print("| **total** | %s |" % " | ".join("%.1f / %.2f" % (tot10[k], totss[k]) for k in KS))
    print("\ncells: ms for the first 10 calls / steady-state median ms per call (run + download)")


if __name__ == "__main__":
    main()
