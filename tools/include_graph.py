#!/usr/bin/env python3
"""Prints how the engine's core units (engine/*.c, engine/*.h) depend on each
other and fails when they form a circle.

A unit is a .c and its .h (error.c + error.h); a header without a .c
(internal.h) is a unit of its own. Unit A depends on unit B when one of A's
files #includes one of B's, or when A's .c calls a function that B's .c
defines: every .c reaches every declaration through internal.h, so the
includes alone cannot show a call circle. Only the core is checked; calls
into engine/gl/, engine/ops/, engine/cpu/ ... are not followed.

Usage: tools/include_graph.py [REPO_ROOT]
Prints the graph, any circle, and "N passed, N failed" (one check: 1 passed,
0 failed without a circle). Exit status 1 on a circle.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
engine = os.path.join(root, "engine")
files = sorted(f for f in os.listdir(engine) if f.endswith((".c", ".h")))


def unit(name):
    return os.path.splitext(name)[0]


def code_only(text):
    """The source without comments and string or character literals."""
    pat = r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    return re.sub(pat, lambda m: " " if m.group(0)[0] == "/" else '""', text, flags=re.S)


src = {}
for f in files:
    with open(os.path.join(engine, f), encoding="utf-8") as fh:
        src[f] = fh.read()

# #include "x" edges between core files
includes = {f: [] for f in files}
for f in files:
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', src[f], flags=re.M):
        if m.group(1) in src:
            includes[f].append(m.group(1))

# functions defined with external linkage by each .c: a definition starts at
# column 0 (house style), is not static, and its ")" is followed by "{"
defined = {}
for f in files:
    if not f.endswith(".c"):
        continue
    code = code_only(src[f])
    for m in re.finditer(r"^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b(tx_\w+)\s*\(",
                         code, flags=re.M):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        if code[i:].lstrip().startswith("{"):
            defined[m.group(1)] = unit(f)

calls = {}  # (from unit, to unit) -> sorted names called
for f in files:
    if not f.endswith(".c"):
        continue
    for name in set(re.findall(r"\b(tx_\w+)\s*\(", code_only(src[f]))):
        to = defined.get(name)
        if to and to != unit(f):
            calls.setdefault((unit(f), to), set()).add(name)

units = sorted({unit(f) for f in files})
deps = {u: set() for u in units}
for f, incs in includes.items():
    for g in incs:
        if unit(g) != unit(f):
            deps[unit(f)].add(unit(g))
for a, b in calls:
    deps[a].add(b)

print("#include graph (engine/):")
for f in files:
    print(f"  {f} -> {', '.join(includes[f]) if includes[f] else '-'}")
print("calls between units (caller -> callee: functions):")
for (a, b), names in sorted(calls.items()):
    print(f"  {a} -> {b}: {', '.join(sorted(names))}")
print("units and what they depend on:")
for u in units:
    print(f"  {u} -> {', '.join(sorted(deps[u])) if deps[u] else '-'}")

# circles: strongly connected components of more than one unit (Tarjan)
index, low, stack, on, sccs = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(deps[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))


for u in units:
    if u not in index:
        visit(u)
for comp in sccs:
    print(f"circle: {' <-> '.join(comp)}")
if not sccs:
    print("no circle among the engine's core units")
print(f"{0 if sccs else 1} passed, {1 if sccs else 0} failed")
sys.exit(1 if sccs else 0)
