#!/usr/bin/env python3
"""Import circles between the top-level modules of a crate (ARCHITECTURE.md "Layers").

For each crate root (default: `src` and `core/src`), every `.rs` file belongs to
the top-level module its path names (`src/api/options.rs` to `api`,
`core/src/calm.rs` to `calm`; `lib.rs` to none). A file of module A depends on
module B when it names a path that resolves into B:

- `use crate::B::...`, `use crate::{B::x, ...}`, `crate::B::x` in code, `$crate::B`;
- `super::...` and `super::super::...`, resolved from the file's module path
  (inline `mod x { ... }` blocks, such as `mod tests`, count as one level);
- in the root file, `use B::...` (a top-level module by its bare name);
- `crate::Name` where the root re-exports `Name` from B (`pub use B::Name`).

Every path is counted whatever its `#[cfg]`: test code included, since a
circle in any build is a circle. Only top-level modules are nodes; circles
among the sub-modules of one module are not looked for.

Prints every strongly connected component of more than one module, each edge
inside it with one example file:line, and exits 1 when there is any.

Usage: scripts/module-cycles.py [--edges] [root ...]   (default roots: src core/src;
       --edges also lists every dependency, one example each)
       scripts/module-cycles.py --self-test  (checks this script on inline examples)
"""
import os
import re
import sys

TOKEN = re.compile(
    r"""(?P<nl>\n)
    | (?P<ws>[ \t\r\f\v]+)
    | (?P<line_comment>//[^\n]*)
    | (?P<raw>b?r(?P<hashes>\#*)")
    | (?P<string>b?"(?:\\.|[^"\\])*")
    | (?P<char>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]+\}|.)|[^\\'\n])')
    | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
    | (?P<ident>\$?[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>[0-9][0-9A-Za-z_]*)
    | (?P<path_sep>::)
    | (?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)


def tokens(src):
    """(text, line) for each identifier and punctuation of Rust `src`, with
    comments, strings, char literals, lifetimes and numbers left out."""
    out, i, line, n = [], 0, 1, len(src)
    while i < n:
        if src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += src.count("\n", i, j)
            i = j
            continue
        m = TOKEN.match(src, i)
        kind, text = m.lastgroup, m.group()
        if kind == "raw":
            end = src.find('"' + m.group("hashes"), m.end())
            end = n if end < 0 else end + 1 + len(m.group("hashes"))
            text = src[i:end]
        if kind in ("ident", "path_sep", "punct"):
            out.append(("crate" if text == "$crate" else text, line))
        line += text.count("\n")
        i += len(text)
    return out


def use_paths(toks, k):
    """The paths of the use tree starting at toks[k]; returns (paths, index
    after the tree). A path is a list of segments (`*` for a glob)."""
    prefix, paths, segment_next = [], [], True
    while k < len(toks):
        t = toks[k][0]
        if t == "{" and segment_next:
            k += 1
            while k < len(toks) and toks[k][0] != "}":
                sub, after = use_paths(toks, k)
                paths += [prefix + p for p in sub]
                k = after if after > k else k + 1
                if k < len(toks) and toks[k][0] == ",":
                    k += 1
            return paths, k + 1
        if t == "::" and not segment_next:
            segment_next, k = True, k + 1
        elif t == "as" and not segment_next:
            k += 2
        elif segment_next and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\*", t):
            prefix.append(t)
            segment_next, k = False, k + 1
        else:
            break
    return [prefix] if prefix else [], k


def module_of(rel):
    """The module path of a file relative to its crate root."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "mod" or parts == ["lib"] or parts == ["main"]:
        parts = parts[:-1]
    return parts


def resolve(base, segs, top_modules, root_file):
    """The absolute path `segs` names from module `base`, or None when it does
    not start in this crate."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return segs[1:]
    if head in ("self", "super"):
        path, k = list(base), 0
        while k < len(segs) and segs[k] in ("self", "super"):
            if segs[k] == "super":
                if not path:
                    return None
                path.pop()
            k += 1
        return path + segs[k:]
    if root_file and not base and head in top_modules:
        return segs
    return None


def scan_file(rel, src, top_modules):
    """(absolute path, line, module path it was named in) for every path of
    this crate that the file names."""
    toks = tokens(src)
    file_mod = module_of(rel)
    root_file = not file_mod
    inline, depth, found, k = [], 0, [], 0
    while k < len(toks):
        t, line = toks[k]
        base = file_mod + [name for name, _ in inline]
        if t == "mod" and k + 2 < len(toks) and toks[k + 2][0] == "{":
            inline.append((toks[k + 1][0], depth))
            depth += 1
            k += 3
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if inline and inline[-1][1] == depth:
                inline.pop()
        elif t == "use":
            paths, k = use_paths(toks, k + 1)
            for p in paths:
                found.append((resolve(base, p, top_modules, root_file), line, base))
            continue
        elif t in ("crate", "super", "self") and k + 1 < len(toks) and toks[k + 1][0] == "::":
            prev = toks[k - 1][0] if k else ""
            if prev != "::":
                segs, _ = use_paths(toks, k)
                for p in segs:
                    found.append((resolve(base, p, top_modules, False), line, base))
        k += 1
    return [(p, line, base) for p, line, base in found if p is not None]


def root_reexports(root_src, top_modules):
    """Names the crate root re-exports (`pub use B::Name`), each to its module."""
    names, toks = {}, tokens(root_src)
    for k, (t, _) in enumerate(toks):
        if t == "use" and k and toks[k - 1][0] in ("pub", ")"):
            for p in use_paths(toks, k + 1)[0]:
                path = p[1:] if p[:1] == ["crate"] else p
                if len(path) >= 2 and path[0] in top_modules and path[-1] != "*":
                    names[path[-1]] = path[0]
    return names


def graph(files):
    """{(a, b): (file, line)} for the dependencies between the top-level
    modules of one crate, given {path relative to the root: source}."""
    mods = {module_of(rel)[0] for rel in files if module_of(rel)}
    root = next((src for rel, src in files.items() if not module_of(rel)), "")
    names = root_reexports(root, mods)
    edges = {}
    for rel in sorted(files):
        mod = module_of(rel)
        if not mod:
            continue
        for path, line, _ in scan_file(rel, files[rel], mods):
            if not path:
                continue
            dest = path[0] if path[0] in mods else names.get(path[0])
            if dest and dest != mod[0]:
                edges.setdefault((mod[0], dest), (rel, line))
    return mods, edges


def components(nodes, edges):
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    succ = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
                out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return sorted(out)


def report(name, files, all_edges=False):
    """Print the circles of one crate (and every edge when `all_edges`);
    return how many circles there are."""
    mods, edges = graph(files)
    comps = components(mods, edges)
    print(f"{name}: {len(mods)} modules, {len(edges)} edges, {len(comps)} circles")
    for (a, b), (rel, line) in sorted(edges.items()) if all_edges else ():
        print(f"  {a} -> {b}  {os.path.join(name, rel)}:{line}")
    for i, comp in enumerate(comps, 1):
        print(f"  circle {i}: {', '.join(comp)}")
        for (a, b), (rel, line) in sorted(edges.items()):
            if a in comp and b in comp:
                print(f"    {a} -> {b}  {os.path.join(name, rel)}:{line}")
    return len(comps)


def read_crate(root):
    """{path relative to root: source} for every .rs file under root."""
    files = {}
    for dirpath, _, names in os.walk(root):
        for f in names:
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    files[os.path.relpath(path, root)] = fh.read()
    return files


def self_test():
    """The script on inline crates: a circle it must find, and look-alikes it must not."""
    circle = {
        "lib.rs": "mod a;\nmod b;\nmod c;\npub use c::Thing;\n",
        "a/mod.rs": "mod x;\nuse crate::{b::{self, Q}, c};\n",
        "a/x.rs": "fn f() { super::super::c::g(); }\n",
        "b.rs": "// use crate::c;\nconst S: &str = \"crate::c::x\";\nfn f() -> crate::Thing { todo!() }\n",
        "c.rs": "pub struct Thing;\nmod tests {\n    use super::*;\n    fn t() { super::Thing; }\n}\n",
    }
    _, edges = graph(circle)
    assert edges == {
        ("a", "b"): ("a/mod.rs", 2),
        ("a", "c"): ("a/mod.rs", 2),
        ("b", "c"): ("b.rs", 3),
    }, edges
    assert components({"a", "b", "c"}, edges) == [], "no circle yet"
    circle["c.rs"] += "fn back() { crate::a::x::f(); }\n"
    circle["b.rs"] += "#[cfg(test)]\nmod t { use super::super::a; }\n"
    mods, edges = graph(circle)
    assert edges[("c", "a")] == ("c.rs", 6), edges
    assert edges[("b", "a")] == ("b.rs", 5), edges
    assert components(mods, edges) == [["a", "b", "c"]], components(mods, edges)
    raw = {"lib.rs": "", "d.rs": 'const R: &str = r#"crate::e"#; fn f<\'a>(_: &\'a u8) { let _ = \'{\'; }\nmod m { use crate::e; }\n', "e.rs": ""}
    assert graph(raw)[1] == {("d", "e"): ("d.rs", 2)}, graph(raw)[1]
    print("module-cycles self-test: ok")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    all_edges = "--edges" in argv
    argv = [a for a in argv if a != "--edges"]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = argv or [os.path.join(here, "src"), os.path.join(here, "core", "src")]
    found = 0
    for root in roots:
        found += report(os.path.relpath(root), read_crate(root), all_edges)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
