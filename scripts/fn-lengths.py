#!/usr/bin/env python3
"""Function lengths in tidings' Rust sources (`make lint` fails above 60 lines).

A function's length is its lines from the line holding `fn` to the line of its
closing brace, comments inside included; doc comments and attributes above it
are not counted. `#[cfg(test)]` modules are left out, and so are bodiless
declarations (trait items ending in `;`). Closures count toward the function
that holds them; a nested `fn` is measured on its own too.

Usage: scripts/fn-lengths.py [--max N] [--p90 N] [--top K] [dir ...]
(default dirs: core/src src). Prints, per dir, the number of functions, the
longest, p50/p90 and the functions over --max; exits 1 when any dir has a
function over --max or src's p90 is over --p90 (when given).
"""
import argparse
import math
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(src):
    """`src` with comments, strings and char literals blanked (newlines
    kept), so braces and keywords can be found by scanning."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(src[i:j]))
            i = j
        elif re.match(r'b?r#*"', src[i:i + 10]) and (i == 0 or not src[i - 1].isalnum() and src[i - 1] != "_"):
            m = re.match(r'b?r(#*)"', src[i:])
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(blank(src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(blank(src[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", src[i:], re.S)
            if m:
                out.append(blank(m.group(0)))
                i += m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank(s):
    return "".join("\n" if ch == "\n" else " " for ch in s)


def match_brace(s, i):
    """Index of the brace closing the one at `i`."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


def functions(path):
    src = open(path, encoding="utf-8").read()
    s = strip(src)
    # Leave out #[cfg(test)] modules.
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", s))):
        end = match_brace(s, m.end() - 1)
        s = s[: m.start()] + blank(s[m.start(): end + 1]) + s[end + 1:]
    found = []
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", s):
        # The body: the first `{` at bracket depth 0 after the signature,
        # unless a `;` ends it first (a declaration).
        depth, j = 0, m.end()
        while j < len(s):
            ch = s[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch == ";":
                j = -1
                break
            elif depth == 0 and ch == "{":
                break
            j += 1
        if j < 0 or j >= len(s):
            continue
        end = match_brace(s, j)
        first = s.count("\n", 0, m.start()) + 1
        last = s.count("\n", 0, end) + 1
        found.append((last - first + 1, path, first, m.group(1)))
    return found


def percentile(values, p):
    v = sorted(values)
    if not v:
        return 0
    k = max(0, math.ceil(p / 100 * len(v)) - 1)
    return v[k]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*", default=["core/src", "src"])
    ap.add_argument("--max", type=int, default=60)
    ap.add_argument("--p90", type=int, default=None)
    ap.add_argument("--top", type=int, default=5)
    a = ap.parse_args()
    bad = False
    for d in a.dirs:
        fns = []
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith(".rs"):
                    fns += functions(os.path.join(root, f))
        lens = [f[0] for f in fns]
        over = sorted((f for f in fns if f[0] > a.max), reverse=True)
        p90 = percentile(lens, 90)
        print(f"{d}: {len(fns)} functions, longest {max(lens, default=0)}, "
              f"p50 {percentile(lens, 50)}, p90 {p90}, over {a.max}: {len(over)}")
        for n, path, line, name in sorted(fns, reverse=True)[: max(a.top, len(over))]:
            print(f"  {n:4}  {path}:{line}  {name}")
        bad |= bool(over)
        if a.p90 is not None and d.rstrip("/") == "src" and p90 > a.p90:
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
