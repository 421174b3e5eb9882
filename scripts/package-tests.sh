#!/usr/bin/env bash
# Type tests of the package's curated .d.ts files (js/index.d.ts, js/react.d.ts, …): a
# TypeScript consumer (tests/types/) compiled with `tsc --noEmit --strict` by the oldest
# TypeScript the npm README supports (typescript-oldest, 5.4) and by the current one; every
# line marked `// @ts-expect-error` must fail to compile, or tsc reports the directive as
# unused. Then the package docs' links (tests/docs-links.test.mjs, no browser). The packed
# package itself (npm pack → esbuild/Vite apps in Chromium, its types checked from the
# installed tarball) is tested by tests/e2e/package-*.test.mjs, which `make browser-tests` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each by its own path: both packages name their binary `tsc`, so node_modules/.bin/tsc is
# whichever npm linked last.
for ts in typescript-oldest typescript; do
  node "node_modules/$ts/bin/tsc" --noEmit --strict -p tests/types
  echo "package-tests: tests/types compile with $(node "node_modules/$ts/bin/tsc" --version) --strict"
done
n=$(cat tests/types/*.ts | grep -c '@ts-expect-error')
echo "package-tests: $n lines fail as expected"
node --test tests/docs-links.test.mjs
