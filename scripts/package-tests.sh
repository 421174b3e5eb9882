#!/usr/bin/env bash
# Type tests of the package's curated index.d.ts (js/): a TypeScript consumer
# (tests/types/) compiled with `tsc --noEmit --strict`; every line marked
# `// @ts-expect-error` must fail to compile, or tsc reports the directive as
# unused. The packed package itself (npm pack → esbuild/Vite apps in Chromium,
# its types checked from the installed tarball) is tested by
# tests/e2e/package-*.test.mjs, which `make browser-tests` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/tsc --noEmit --strict -p tests/types
n=$(cat tests/types/*.ts | grep -c '@ts-expect-error')
echo "package-tests: tests/types compile with $(node_modules/.bin/tsc --version) --strict; $n lines fail as expected"
