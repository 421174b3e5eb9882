# Sourced by scripts/build-pkg.sh and scripts/names-build.sh: the code
# generation and optimizer flags of the package's wasm, held once so the
# names-kept copy of `make size` measures the same code (docs/size.md).
#
# -Ctarget-cpu=lime1: the "Lime1" feature set (mutable-globals, sign-ext,
# nontrapping-fptoint, multivalue, bulk-memory-opt, extended-const,
# call-indirect-overlong) and no reference types, so wasm-bindgen keeps JS
# values in its JS-side heap instead of an externref table and drops the
# externref shims (−0.9 KB gzip net of the bigger glue, 2026-12-01). The
# output validates without extended-const (LLVM emits it only for PIC), so
# it needs multivalue, bulk memory, sign-ext and non-trapping float-to-int:
# Chrome 86, Firefox 78, Safari 15 (as the reference-types build did).
# shellcheck disable=SC2034
WASM_RUSTFLAGS="-Ctarget-cpu=lime1"
# wasm-bindgen: `--encode-into always` writes strings with TextEncoder's
# encodeInto only, without the encode() fallback (−44 bytes gzip of glue).
WASM_BINDGEN_ARGS=(--encode-into always)
# wasm-opt: the features must be exactly lime1's (none the build did not
# enable). --flatten --rereloop then -Oz three times rebuilds the control flow
# before shrinking (−0.9 KB gzip; the third -Oz −62, a fourth nothing); --low-memory-unused lets it fold constant address
# offsets, sound because the stack sits first, at [0, 1 MiB), and only a stack
# already 1 MiB deep reaches its low 1 KiB (−0.6 KB gzip); the producers and
# target-features sections are of no use to a browser.
# --one-caller-inline-max-function-size=25: a function with one caller is
# inlined only when small (binaryen's default inlines it whatever its size),
# so the big ones stay functions of their own: raw +2 to +4 KB, but gzip
# −2 018 / −897 / −995 on the three rows, measured (12 and 50 gave less).
# Where a function's code sits changes, not what it does.
WASM_OPT_ARGS=(
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int
  --enable-multivalue --enable-bulk-memory-opt --enable-extended-const
  --enable-call-indirect-overlong
  --one-caller-inline-max-function-size=25
  --flatten --rereloop -Oz -Oz -Oz --low-memory-unused
  --strip-producers --strip-target-features
)
