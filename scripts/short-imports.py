#!/usr/bin/env python3
"""Short import and export names for the package's wasm and its JS glue
(build-pkg.sh).

wasm-bindgen names every import of its glue module `./tidings_bg.js`
`__wbg_<name>_<16 hex digits of hash>`, the wasm's import section repeats the
module name for each one, and the closure shims' exports carry mangled paths
with crate hashes. The hex digits barely compress, and each name is written
twice (the wasm, the glue): 5.4 KB of the gzip total (docs/size.md). This
renames that module to `w`, its imports to `a`, `b`, … `Z`, `aa`, … in import
order, and every export but `memory` likewise, in both files. Nothing else
changes. Checked, or the build fails: each old import name occurs exactly
once in the glue, as a key of its imports object; the glue reads the exports
only as `wasm.<name>`. Imports of other modules (wasm-bindgen snippets) keep
their names.

Usage: short-imports.py <wasm> <glue.js>   (both rewritten in place)
"""
import re
import sys

from wasm_binary import leb, name_bytes, read_name, sections, uleb

MODULE = "./tidings_bg.js"
SHORT_MODULE = "w"
# What the page may read of `init()`'s result (the tests read its memory).
KEPT_EXPORTS = {"memory"}
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def short_name(n):
    """The n-th short name: a … Z, aa, ab, …"""
    name = ""
    while True:
        name = LETTERS[n % len(LETTERS)] + name
        n = n // len(LETTERS) - 1
        if n < 0:
            return name


def limits(data, i):
    flags = data[i]
    i += 1
    _, i = leb(data, i)
    if flags & 1:
        _, i = leb(data, i)
    return i


def import_desc_end(data, i):
    """The end of one import's description starting at its kind byte."""
    kind = data[i]
    i += 1
    if kind == 0:  # function: type index
        _, i = leb(data, i)
    elif kind == 1:  # table: reftype, limits
        i = limits(data, i + 1)
    elif kind == 2:  # memory: limits
        i = limits(data, i)
    elif kind == 3:  # global: valtype, mutability
        i += 2
    elif kind == 4:  # tag: attribute, type index
        _, i = leb(data, i + 1)
    else:
        sys.exit(f"short-imports: unknown import kind {kind}")
    return i


def rename_imports(data):
    """The import section `data` with MODULE's imports renamed; the mapping."""
    n, i = leb(data, 0)
    out = bytearray(uleb(n))
    mapping = {}
    for _ in range(n):
        module, i = read_name(data, i)
        field, i = read_name(data, i)
        end = import_desc_end(data, i)
        desc = data[i:end]
        i = end
        if module == MODULE:
            if field in mapping:
                sys.exit(f"short-imports: {field} imported twice")
            mapping[field] = short_name(len(mapping))
            module, field = SHORT_MODULE, mapping[field]
        out += name_bytes(module) + name_bytes(field) + desc
    return bytes(out), mapping


def rename_exports(data):
    """The export section `data` with every export but `memory` renamed; the
    mapping."""
    n, i = leb(data, 0)
    out = bytearray(uleb(n))
    mapping = {}
    for _ in range(n):
        name, i = read_name(data, i)
        _, end = leb(data, i + 1)
        desc = data[i:end]
        i = end
        if name not in KEPT_EXPORTS:
            mapping[name] = short_name(len(mapping))
            name = mapping[name]
        out += name_bytes(name) + desc
    return bytes(out), mapping


def rewrite_wasm(buf):
    out = bytearray(buf[:8])
    imports = exports = None
    for sid, body in sections(buf):
        if sid == 2:
            body, imports = rename_imports(body)
        elif sid == 7:
            body, exports = rename_exports(body)
        out += bytes([sid]) + uleb(len(body)) + body
    if not imports or not exports:
        sys.exit(f"short-imports: no imports from {MODULE} or no exports")
    return bytes(out), imports, exports


def rewrite_glue(js, mapping, exports):
    quoted = f'"{MODULE}":'
    if js.count(quoted) != 1:
        sys.exit(f"short-imports: {quoted} is not once in the glue")
    js = js.replace(quoted, f'"{SHORT_MODULE}":')
    for old, new in mapping.items():
        key = re.compile(r"\b" + re.escape(old) + r"\b")
        hits = key.findall(js)
        if len(hits) != 1 or not re.search(r"\b" + re.escape(old) + r":", js):
            sys.exit(f"short-imports: {old} is not once as a key in the glue")
        js = key.sub(new, js)
    # The glue reads the exports only as `wasm.<name>` (`wasm` being
    # `instance.exports`), never by a computed name or through an alias.
    aliased = re.search(r"(=|\()\s*wasm\s*[;,)\n]", js)
    if "wasm[" in js or aliased or len(re.findall(r"\bexports\b", js)) != 1:
        sys.exit("short-imports: the glue reads the exports other than as wasm.<name>")
    for old, new in exports.items():
        used = re.compile(r"\bwasm\." + re.escape(old) + r"\b")
        js = used.sub("wasm." + new, js)
    return js


def main():
    wasm_path, glue_path = sys.argv[1:3]
    wasm, mapping, exports = rewrite_wasm(open(wasm_path, "rb").read())
    glue = rewrite_glue(open(glue_path, encoding="utf-8").read(), mapping, exports)
    open(wasm_path, "wb").write(wasm)
    open(glue_path, "w", encoding="utf-8").write(glue)
    print(f"short-imports: {len(mapping)} imports of {MODULE}, {len(exports)} exports renamed")


if __name__ == "__main__":
    main()
