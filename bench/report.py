#!/usr/bin/env python3
"""Turns bench JSON into a markdown table and SVG charts.

Usage: bench/report.py OUTDIR desktop.json [browser.json]
Writes OUTDIR/results.md, OUTDIR/steady.svg, OUTDIR/first_call.svg.
browser.json (from bench/browser/run.mjs) adds texel-in-Chromium and TF.js
columns and the texel/TF.js ratios measured in the same page."""
import json
import os
import sys
from html import escape

MODES = ["generic", "specialized", "adaptive"]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def fmt(v):
    if v is None or v < 0:
        return "-"
    return "%.2f" % v if v < 100 else "%.0f" % v


def table(desk, browser):
    lines = []
    lines.append("Desktop: %s (%s), %d runs per mode, default k = %d.\n" % (
        desk["renderer"], desk["version"], desk["runs"], desk["default_k"]))
    lines.append("| case | generic first / median ms | specialized first / median ms | "
                 "adaptive first / median ms | GFLOP/s (best) | CPU reference ms | "
                 "max error vs reference |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for c in desk["cases"]:
        cells = []
        best = 0
        for m in MODES:
            r = c["modes"].get(m)
            if not r or r["status"] != "TX_STATUS_OK":
                cells.append("failed")
                continue
            cells.append("%s / %s" % (fmt(r["first_ms"]), fmt(r["median_ms"])))
            best = max(best, r["gflops"])
        errs = [r["max_error"] for r in c["modes"].values() if r.get("max_error", -1) >= 0]
        lines.append("| %s | %s | %s | %s | %s |" % (c["name"], " | ".join(cells),
                                                    "%.2f" % best if c["flops"] else "-",
                                                    fmt(c["reference_ms"]),
                                                    "%.1e" % max(errs) if errs else "-"))
    if browser:
        lines.append("")
        lines.append("Browser: %s, same page, fresh profile (%s).\n" % (
            browser.get("browser", "Chromium"), browser.get("renderer", "")))
        lines.append("| case | texel first ms | texel first 10 ms | texel steady ms | "
                     "TF.js webgl first ms | TF.js webgl first 10 ms | TF.js webgl steady ms | "
                     "texel/TF.js steady | texel/TF.js first | texel/TF.js first 10 | "
                     "texel cpu first ms | texel cpu steady ms | TF.js wasm first ms | "
                     "TF.js wasm steady ms | texel cpu/TF.js wasm steady | first outputs' max difference |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        ratio = lambda a, b, k: ("%.2f" % (a[k] / b[k])) if a.get(k) and b.get(k) else "-"
        for c in browser["cases"]:
            t, w = c.get("texel", {}), c.get("tfjs_webgl", {})
            tc, a = c.get("texel_cpu", {}), c.get("tfjs_wasm", {})
            diffs = [d for d in c.get("check", {}).values() if d is not None]
            lines.append("| %s |%s" % (c["name"], " %s |" * 15) % (
                fmt(t.get("first_ms")), fmt(t.get("first10_ms")), fmt(t.get("median_ms")),
                fmt(w.get("first_ms")), fmt(w.get("first10_ms")), fmt(w.get("median_ms")),
                ratio(t, w, "median_ms"), ratio(t, w, "first_ms"), ratio(t, w, "first10_ms"),
                fmt(tc.get("first_ms")), fmt(tc.get("median_ms")),
                fmt(a.get("first_ms")), fmt(a.get("median_ms")), ratio(tc, a, "median_ms"),
                "%.1e" % max(diffs) if diffs else "-"))
    return "\n".join(lines) + "\n"


def bars_svg(title, groups, series, unit):
    """groups: [(label, {series: value})]; horizontal grouped bars, log-free."""
    colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"]
    bar_h, gap, left, width = 12, 10, 170, 520
    vmax = max([v for _, d in groups for v in d.values() if v is not None and v > 0] or [1])
    height = 40 + len(groups) * (len(series) * bar_h + gap) + 20 * len(series)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (left + width + 90, height)]
    out.append('<text x="10" y="18" font-size="14">%s</text>' % escape(title))
    y = 34
    for label, d in groups:
        out.append('<text x="10" y="%d">%s</text>' % (y + bar_h, escape(label)))
        for i, s in enumerate(series):
            v = d.get(s)
            if v is not None and v > 0:
                w = max(1, int(width * v / vmax))
                out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>' % (
                    left, y, w, bar_h - 2, colors[i % len(colors)]))
                out.append('<text x="%d" y="%d">%s %s</text>' % (left + w + 4, y + bar_h - 3,
                                                                 fmt(v), unit))
            y += bar_h
        y += gap
    for i, s in enumerate(series):
        out.append('<rect x="10" y="%d" width="10" height="10" fill="%s"/>' % (y, colors[i]))
        out.append('<text x="26" y="%d">%s</text>' % (y + 9, escape(s)))
        y += 16
    out.append("</svg>")
    return "\n".join(out)


def main():
    outdir, desk_path = sys.argv[1], sys.argv[2]
    browser = load(sys.argv[3]) if len(sys.argv) > 3 else None
    desk = load(desk_path)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "results.md"), "w", encoding="utf-8") as f:
        f.write(table(desk, browser))
    by_name = {c["name"]: c for c in (browser or {}).get("cases", [])}
    for key, title, fname in [("median_ms", "steady-state ms per call (lower is better)",
                               "steady.svg"),
                              ("first_ms", "first call ms: upload + compile + run + download",
                               "first_call.svg")]:
        series = ["desktop " + m for m in MODES]
        if browser:
            series += ["browser texel", "TF.js webgl"]
        groups = []
        for c in desk["cases"]:
            d = {"desktop " + m: c["modes"][m].get(key) for m in MODES if m in c["modes"]}
            b = by_name.get(c["name"])
            if b:
                d["browser texel"] = b.get("texel", {}).get(key)
                d["TF.js webgl"] = b.get("tfjs_webgl", {}).get(key)
            groups.append((c["name"], d))
        with open(os.path.join(outdir, fname), "w", encoding="utf-8") as f:
            f.write(bars_svg(title, groups, series, "ms"))
    print(open(os.path.join(outdir, "results.md"), encoding="utf-8").read())


if __name__ == "__main__":
    main()
