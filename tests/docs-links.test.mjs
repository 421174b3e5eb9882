// The package's documents (the npm README and every .d.ts it ships) point only at what a user
// of the installed package can open: relative links and named .md files that ship (the `files`
// of pkg.json.template), `#anchors` and quoted sections that are headings there (GitHub's
// slugs), `{@link Name}` to a declared name, no placeholder host and no document that exists
// nowhere. Also: the TypeScript range the README states is the one scripts/package-tests.sh
// compiles the type tests with. No build needed (node --test; scripts/package-tests.sh runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const ROOT = new URL("../", import.meta.url);
const read = (path) => readFileSync(new URL(path, ROOT), "utf8");
const FILES = JSON.parse(read("pkg.json.template").replace(/@\w+@/g, "x")).files;
/** Whether `path` (relative to the package root) ships: a `files` entry or under a listed dir. */
const ships = (path) => FILES.some((f) => (f.endsWith("/") ? path.startsWith(f) : f === path));
/** The package's documents: package path → text as shipped (scripts/build-pkg.sh). */
const DOCS = new Map([
  ["README.md", read("js/npm-README.md")],
  ...FILES.filter((f) => f.endsWith(".d.ts")).map((f) => [f, read(`js/${f}`)]),
]);

/** GitHub's heading anchor: lower case, punctuation (backticks too) dropped, spaces → `-`. */
export function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** A Markdown text's anchors (repeated headings get `-1`, `-2`, …), fenced code left out. */
function anchors(text) {
  const seen = new Map(), out = new Set();
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = !fence && line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!m) continue;
    const base = slug(m[1]), n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Markdown links `[text](target)` and bare http(s) URLs of a text: { target, line }. */
function links(text) {
  const out = [];
  text.split("\n").forEach((l, i) => {
    for (const m of l.matchAll(/\]\(([^)\s]+)[^)]*\)/g)) out.push({ target: m[1], line: i + 1 });
    for (const m of l.matchAll(/(?<!\]\()\bhttps?:\/\/[^\s)>"'`]+/g)) out.push({ target: m[0], line: i + 1 });
  });
  return out;
}

/** Where a link (relative to a document at the package root) goes: a problem, or null. */
function check(doc, target) {
  if (/^https?:/.test(target)) {
    return /\.invalid\b|@REPOSITORY@/.test(new URL(target).host) ? `placeholder host ${target}` : null;
  }
  if (/^[a-z]+:/i.test(target)) return `unexpected scheme ${target}`;
  const [path, anchor] = target.split("#");
  const file = path === "" ? doc : path.replace(/^\.\//, "");
  if (!ships(file)) return `${file} is not in the package`;
  if (anchor === undefined) return null;
  if (!DOCS.has(file) || !file.endsWith(".md")) return `#${anchor}: ${file} has no headings`;
  return anchors(DOCS.get(file)).has(anchor) ? null : `no heading #${anchor} in ${file}`;
}

test("GitHub's heading slugs", () => {
  assert.equal(slug("Receive only: a smaller download"), "receive-only-a-smaller-download");
  assert.equal(slug("React: `useSubscription`"), "react-usesubscription");
  assert.equal(slug("What your server must send (CORS, pings)"), "what-your-server-must-send-cors-pings");
  assert.deepEqual([...anchors("# A\n```\n# B\n```\n## A\n### C.D")], ["a", "a-1", "cd"]);
});

test("every link in the npm README and the shipped .d.ts files resolves in the package", () => {
  assert.ok(DOCS.has("index.d.ts") && DOCS.has("react.d.ts") && DOCS.has("receive.d.ts"), [...DOCS.keys()].join());
  const bad = [];
  for (const [doc, text] of DOCS) {
    for (const { target, line } of links(text)) {
      const problem = check(doc, target);
      if (problem) bad.push(`${doc}:${line}: ${problem}`);
    }
  }
  assert.deepEqual(bad, []);
});

test("every .md document and section the docs name ships with the package", () => {
  const bad = [];
  for (const [doc, text] of DOCS) {
    text.split("\n").forEach((l, i) => {
      for (const m of l.matchAll(/(?<![\w/.#-])((?:[\w-]+\/)*[\w.-]+\.md)\b(?:,?\s*"([^"]+)")?/g)) {
        const problem = check(doc, m[2] ? `${m[1]}#${slug(m[2])}` : m[1]);
        if (problem) bad.push(`${doc}:${i + 1}: ${m[0]}: ${problem}`);
      }
    });
  }
  assert.deepEqual(bad, []);
});

test("no placeholder address and no DESIGN.md anywhere in the docs", () => {
  for (const [doc, text] of DOCS) {
    assert.doesNotMatch(text, /example\.invalid|@REPOSITORY@/, doc);
    assert.doesNotMatch(text, /DESIGN\.md/, doc);
  }
});

test("no placeholder address in the package's metadata (package.json, the Cargo manifests)", () => {
  // A `repository` or `homepage` that leads nowhere is worse than none: the package ships its
  // guide (the README) and points at no address until the project has a public one.
  for (const file of ["pkg.json.template", "Cargo.toml", "core/Cargo.toml", "server/Cargo.toml"]) {
    assert.doesNotMatch(read(file), /\.invalid\b|@REPOSITORY@/, file);
  }
});

test("every {@link Name} in the .d.ts files names a declared type, function or constant", () => {
  const declared = new Set();
  for (const text of DOCS.values()) {
    for (const m of text.matchAll(/\b(?:function|interface|type|const|class)\s+(\w+)/g)) declared.add(m[1]);
  }
  const bad = [];
  for (const [doc, text] of DOCS) {
    for (const m of text.matchAll(/\{@link\s+([\w.]+)/g)) if (!declared.has(m[1].split(".")[0])) bad.push(`${doc}: ${m[0]}`);
  }
  assert.deepEqual(bad, []);
});

test("the README's TypeScript range is the one the type tests compile with", () => {
  const readme = DOCS.get("README.md");
  const stated = readme.match(/TypeScript (\d+\.\d+) or later/);
  assert.ok(stated, "the README states the oldest supported TypeScript");
  const oldest = JSON.parse(read("node_modules/typescript-oldest/package.json")).version;
  assert.equal(oldest.split(".").slice(0, 2).join("."), stated[1], `typescript-oldest is ${oldest}`);
  const script = read("scripts/package-tests.sh");
  assert.match(script, /for ts in typescript-oldest typescript; do/);
  assert.match(script, /tsc" --noEmit --strict -p tests\/types/);
  assert.match(read("tests/types/tsconfig.json"), /"react\.ts"/, "the hook's types are among the type tests");
});
