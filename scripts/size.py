#!/usr/bin/env python3
"""Size report for the tidings package (`make size`).

Prints raw / gzip / brotli bytes of the wasm and of the minified JS glue, their
gzip sum against the ceiling, and where the wasm bytes go: function-body bytes
summed per crate, read from the name section of a names-kept build of the same
code (scripts/build-pkg.sh writes it as pkg-names/tidings_bg.wasm).

Exit status 1 when the gzip sum (wasm + minified glue) is above --ceiling.
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


def minify(path):
    out = subprocess.run(["node_modules/.bin/esbuild", "--minify", "--format=esm", path],
                         capture_output=True, check=True)
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pkg", default="pkg")
    ap.add_argument("--names", default="pkg-names/tidings_bg.wasm")
    ap.add_argument("--ceiling", type=int, default=16384, help="max gzip bytes of wasm + minified glue")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()

    wasm = open(os.path.join(a.pkg, "tidings_bg.wasm"), "rb").read()
    # Every shipped .js, the wasm-bindgen snippets (snippets/…) included.
    glue_js = sorted(os.path.relpath(os.path.join(d, f), a.pkg)
                     for d, _, fs in os.walk(a.pkg) for f in fs if f.endswith(".js"))
    glue = b"".join(minify(os.path.join(a.pkg, f)) for f in glue_js)
    route = open(os.path.join(a.pkg, ".build-route")).read().strip() if os.path.exists(os.path.join(a.pkg, ".build-route")) else "?"

    rows = [("wasm", wasm), ("JS glue (min)", glue)]
    print(f"tidings size report (build route: {route})")
    print(f"{'file':<16}{'raw':>10}{'gzip':>10}{'brotli':>10}")
    gz_total = 0
    for label, data in rows:
        gz = len(gzip.compress(data, 9))
        gz_total += gz
        print(f"{label:<16}{len(data):>10}{gz:>10}{brotli_size(data):>10}")
    print(f"{'total gzip':<16}{'':>10}{gz_total:>10}   ceiling {a.ceiling}, goal 13312 (13 KB)")

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
        print("\nnote: not the nightly build; the ceiling applies to the nightly route only")
        return 0
    if gz_total > a.ceiling:
        print(f"\nFAIL: {gz_total} gzip bytes > ceiling {a.ceiling}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
