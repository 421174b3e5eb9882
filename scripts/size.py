#!/usr/bin/env python3
"""Size report for the tidings package (`make size`).

Prints, per entry of the package (a row), raw / gzip / brotli bytes of its
wasm and of its JS bundled and minified (entry + wrapper + glue), their gzip
sum against the row's ceiling; then where the full wasm's bytes go:
function-body bytes summed per crate, read from the name section of a
names-kept build of the same code (scripts/names-build.sh writes it as
pkg-names/tidings_bg.wasm).

Exit status 1 when any row's gzip sum is above its ceiling.
"""
import argparse
import gzip
import os
import re
import subprocess
import sys
from collections import defaultdict

from wasm_binary import leb, sections


def function_sizes(buf):
    """{function index: body bytes}, {function index: name}."""
    imported = 0
    bodies = []
    names = {}
    for sid, data in sections(buf):
        if sid == 2:  # imports: count imported functions (they shift indices)
            n, i = leb(data, 0)
            for _ in range(n):
                for _ in range(2):
                    ln, i = leb(data, i)
                    i += ln
                kind = data[i]
                i += 1
                if kind == 0:
                    _, i = leb(data, i)
                    imported += 1
                elif kind == 1:
                    i += 1
                    flags, i = leb(data, i)
                    _, i = leb(data, i)
                    if flags & 1:
                        _, i = leb(data, i)
                elif kind == 2:
                    flags, i = leb(data, i)
                    _, i = leb(data, i)
                    if flags & 1:
                        _, i = leb(data, i)
                elif kind == 3:
                    i += 2
                elif kind == 4:
                    i += 1
                    _, i = leb(data, i)
        elif sid == 10:  # code
            n, i = leb(data, 0)
            for _ in range(n):
                size, j = leb(data, i)
                bodies.append(size + (j - i))
                i = j + size
        elif sid == 0:  # custom: look for "name"
            ln, i = leb(data, 0)
            if data[i:i + ln] != b"name":
                continue
            i += ln
            while i < len(data):
                sub = data[i]
                size, j = leb(data, i + 1)
                if sub == 1:
                    n, k = leb(data, j)
                    for _ in range(n):
                        idx, k = leb(data, k)
                        ln2, k = leb(data, k)
                        names[idx] = data[k:k + ln2].decode("utf-8", "replace")
                        k += ln2
                i = j + size
    return {imported + n: s for n, s in enumerate(bodies)}, names


CRATE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def crate_of(name):
    name = name.lstrip("<&*( ")
    if name.startswith("_ZN"):
        m = re.match(r"_ZN(\d+)", name)
        if m:
            n = int(m.group(1))
            name = name[len(m.group(0)):][:n]
    m = CRATE.match(name.replace("dyn ", "").replace("mut ", ""))
    if not m:
        return "(other)"
    head = m.group(0)
    if "::" not in name and not name.startswith(head + "::"):
        return "(wasm-bindgen glue)" if head.startswith("__wbg") or head.startswith("__wbindgen") else "(unnamed)"
    return head


def short_name(name):
    """A function name without crate hashes and generic noise, at most 100 chars."""
    name = re.sub(r"\[[0-9a-f]{16}\]", "", name)
    return name if len(name) <= 100 else name[:97] + "..."


def brotli_size(data):
    try:
        import brotli  # type: ignore
        return len(brotli.compress(data, quality=11))
    except ImportError:
        pass
    try:
        out = subprocess.run(["node", "-e", "const z=require('zlib');let c=[];process.stdin.on('data',d=>c.push(d)).on('end',()=>{process.stdout.write(String(z.brotliCompressSync(Buffer.concat(c),{params:{[z.constants.BROTLI_PARAM_QUALITY]:11}}).length))})"],
                             input=data, capture_output=True, check=True)
        return int(out.stdout)
    except Exception:
        return -1


def bundle(entry, flavour=None):
    """The entry JS as an app downloads it: the entry, the shared wrapper, the
    glue and its snippets, bundled and minified by esbuild into one file.
    `flavour`: the entry's `./receive/` glue taken from that directory of the
    package instead (a flavour that is no entry of its own)."""
    if flavour is None:
        src = entry
    else:
        src = os.path.join(os.path.dirname(entry), ".row-" + os.path.basename(entry))
        with open(entry) as f, open(src, "w") as g:
            g.write(f.read().replace('"./receive/', f'"./{flavour}/'))
    try:
        out = subprocess.run(["node_modules/.bin/esbuild", "--bundle", "--minify", "--format=esm", src],
                             capture_output=True, check=True)
    finally:
        if flavour is not None:
            os.remove(src)
    return out.stdout


# (row, entry JS, the wasm's directory in the package, the argument naming
# its ceiling): what an app downloads for each entry of the package (README
# "Pay only for what you import"). The last row is a flavour with no entry
# of its own (scripts/build-pkg.sh builds it into rows/, outside the
# package's files): the receive wasm with `crossTab` and Durable Streams,
# measured with the receive entry's JS.
ROWS = [
    ("everything", "index.js", "", "ceiling"),
    ("receive-only", "receive.js", "receive", "receive_ceiling"),
    ("receive+crossTab+durable (receive.js)", "receive.js", "rows/receive-tabs-durable", "receive_tabs_durable_ceiling"),
]


def matrix(a):
    """Print each row's wasm, JS (bundled, minified) and gzip total; the rows
    over their ceiling."""
    print(f"{'row':<14}{'':<6}{'raw':>10}{'gzip':>10}{'brotli':>10}")
    over = []
    for row, entry, wasm_dir, ceiling_arg in ROWS:
        wasm = open(os.path.join(a.pkg, wasm_dir, "tidings_bg.wasm"), "rb").read()
        flavour = wasm_dir if wasm_dir not in ("", "receive") else None
        js = bundle(os.path.join(a.pkg, entry), flavour)
        gz_total = 0
        # A label too long for the column gets a line of its own.
        col = row if len(row) < 14 else ""
        if not col:
            print(row)
        for label, data in (("wasm", wasm), ("JS", js)):
            gz = len(gzip.compress(data, 9))
            gz_total += gz
            print(f"{col:<14}{label:<6}{len(data):>10}{gz:>10}{brotli_size(data):>10}")
        ceiling = getattr(a, ceiling_arg)
        print(f"{col:<14}{'total':<6}{'':>10}{gz_total:>10}   gzip ceiling {ceiling}")
        if gz_total > ceiling:
            over.append(f"{row}: {gz_total} gzip bytes > ceiling {ceiling}")
    return over


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pkg", default="pkg")
    ap.add_argument("--names", default="pkg-names/tidings_bg.wasm")
    ap.add_argument("--ceiling", type=int, default=16384, help="max gzip bytes of the everything row (wasm + bundled JS)")
    ap.add_argument("--receive-ceiling", type=int, default=16384, help="max gzip bytes of the receive-only row")
    ap.add_argument("--receive-tabs-durable-ceiling", type=int, default=16384,
                    help="max gzip bytes of the receive + crossTab + Durable Streams row")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()

    route_file = os.path.join(a.pkg, ".build-route")
    route = open(route_file).read().strip() if os.path.exists(route_file) else "?"
    print(f"tidings size report (build route: {route}): per entry, the wasm and the JS an app downloads")
    over = matrix(a)

    if os.path.exists(a.names):
        sizes, names = function_sizes(open(a.names, "rb").read())
        per = defaultdict(int)
        for idx, s in sizes.items():
            per[crate_of(names.get(idx, ""))] += s
        total = sum(per.values()) or 1
        print(f"\nwasm code bytes by crate (function bodies, names-kept build; {total} bytes):")
        for crate, s in sorted(per.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"  {crate:<28}{s:>8}  {100 * s / total:5.1f}%")
        # wasm-opt inlines functions called once into their caller, so a big
        # entry stands for everything it alone calls (e.g. the `subscribe`
        # shim holds the options reader and the connection start).
        print(f"\nlargest functions (bytes; after the optimizer's inlining):")
        for idx, s in sorted(sizes.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"  {s:>7}  {short_name(names.get(idx, '?'))}")
    if route != "nightly":
        print("\nnote: not the nightly build; the ceilings apply to the nightly route only")
        return 0
    for line in over:
        print(f"\nFAIL: {line}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
