# tidings — every command a developer or CI needs. Each target installs what
# it needs first (scripts/bootstrap.sh, idempotent).
.PHONY: ds-conformance demo test size bench bench-herd bootstrap pkg server example lint native-tests package-tests browser-tests cross-engine test-engines fuzz soak smoke clean

PORT ?= 8787

## make demo: build the package, run the reference server, print the URL.
demo:
	@scripts/bootstrap.sh build
	@scripts/build-pkg.sh
	@cargo build -q --release -p tidings-server
	@echo "demo: open http://127.0.0.1:$(PORT)/ (Ctrl-C stops the server)"
	@target/release/tidings-server --port $(PORT) --www www --pkg pkg

## make test: every test (native engine + server, wasm in headless Chromium, Playwright e2e,
## the cross-engine suite on Chromium, Firefox ESR and WebKitGTK), and a 20-second smoke of
## `make fuzz` and `make soak`.
## Each phase runs through scripts/timed.sh: its start time, its seconds and the total so far.
TEST_PHASES = bootstrap lint native-tests package-tests pkg server example browser-tests cross-engine smoke
test:
	@export TIMED_T0=$$(date +%s); \
	for phase in $(TEST_PHASES); do \
	  scripts/timed.sh $$phase $(MAKE) --no-print-directory $$phase || exit 1; \
	done

bootstrap:
	@scripts/bootstrap.sh

lint:
	cargo fmt --all -- --check
	cargo clippy -q --workspace --all-targets -- -D warnings
	cargo clippy -q --target wasm32-unknown-unknown --all-targets --features rust,stream-handles -- -D warnings
	python3 scripts/fn-lengths.py --top 0
	python3 scripts/module-cycles.py --self-test
	python3 scripts/module-cycles.py

native-tests:
	cargo test --workspace

package-tests:
	scripts/package-tests.sh

pkg:
	scripts/build-pkg.sh

server:
	cargo build -q --release -p tidings-server

## make example: the example Rust app (examples/rust-app) into target/example-app/www.
example:
	scripts/build-example.sh

browser-tests:
	scripts/browser-tests.sh

# The cross-engine suite alone, on the pkg/ and server the phases before it built.
cross-engine:
	node tests/engines/run.mjs $(ENGINES)

## make test-engines: the cross-engine suite (tests/engines/cases.mjs) on Chromium, Firefox ESR and
## WebKitGTK (`make test` runs it as its cross-engine phase), then the whole e2e suite (tests/e2e) on
## Firefox ESR and on WebKitGTK (tests/engines/e2e.mjs; not in `make test`); each prints pass / fail /
## skipped and the version per engine, and the reason of every skip. ENGINES="firefox webkit" runs a
## subset of the first.
test-engines:
	@scripts/bootstrap.sh engines
	@scripts/build-pkg.sh
	@cargo build -q --release -p tidings-server
	@$(MAKE) --no-print-directory cross-engine
	@scripts/build-example.sh
	node tests/engines/e2e.mjs firefox webkit

## make size: per package entry (row), bytes of its wasm and its bundled JS, raw/gzip/brotli, each row against its ceiling, and where the wasm goes;
## then what a Rust app pays for tidings (scripts/size-rust-app.sh; its recommended-profile row against RUST_APP_CEILING).
# The ceiling only goes down; its history (date, ceiling, gzip, what changed) is docs/size.md.
# SIZE_CEILING: the everything row ("tidings"); RECEIVE_CEILING: the receive-only row ("tidings/receive");
# RECEIVE_TABS_DURABLE_CEILING: the receive wasm with crossTab and Durable Streams (no entry of its own).
SIZE_CEILING ?= 99230
RECEIVE_CEILING ?= 56540
RECEIVE_TABS_DURABLE_CEILING ?= 66770
# RUST_APP_CEILING: what the example Rust app pays for tidings, built with the profile docs/rust.md recommends.
RUST_APP_CEILING ?= 89950
size:
	@scripts/bootstrap.sh build
	@scripts/build-pkg.sh
	@scripts/names-build.sh
	@python3 scripts/size.py --ceiling $(SIZE_CEILING) --receive-ceiling $(RECEIVE_CEILING) \
	  --receive-tabs-durable-ceiling $(RECEIVE_TABS_DURABLE_CEILING)
	@scripts/size-rust-app.sh $(RUST_APP_CEILING)

## make bench: tidings vs native EventSource, fetch-event-source and a fetch poll loop in headless Chromium; prints figures (~7 min; docs/bench.md).
bench:
	@scripts/bench.sh

## make bench-herd: 100k real engines on virtual time through an outage (prints figures; not a test).
bench-herd:
	cargo run -q --release -p tidings-core --example herd

## make fuzz: cargo-fuzz (nightly) on every parser and the engine, FUZZ_S seconds per target
## (default 120); prints executions and crashes per target, exit 1 on a crash (scripts/fuzz.sh).
FUZZ_S ?= 120
fuzz:
	@scripts/bootstrap.sh fuzz
	@FUZZ_S=$(FUZZ_S) scripts/fuzz.sh

## make soak: the built package in headless Chromium against the reference server under a seeded
## fault schedule for SOAK_S seconds (default 900; SOAK_SEED, default 23); prints its figures,
## exit 1 on a lost or duplicated message or memory/listener growth (tests/soak/soak.mjs).
SOAK_S ?= 900
soak: pkg server
	@SOAK_S=$(SOAK_S) node tests/soak/soak.mjs

# The smoke in `make test`: 20 s of the soak, and 20 s of the real fuzzer per
# target (`make fuzz` with FUZZ_S=20 and libFuzzer's seed fixed at 23, so a
# finding reproduces: a fresh clone tries the same mutations in the same order; the
# instrumented build is ~1 min warm, a few cold). Its first fresh-clone run
# (2026-12-01) found an engine input in 20 s; it and a second one are fixed
# and kept in fuzz/regressions/engine/ (docs/reliability.md).
# SMOKE_FUZZ=oracles runs the seeded pseudo-random oracles of the normal test
# build instead (core/tests/fuzz_regressions.rs `smoke_random_inputs`).
SMOKE_FUZZ ?= cargo-fuzz
smoke:
	@SOAK_S=20 node tests/soak/soak.mjs
ifeq ($(SMOKE_FUZZ),cargo-fuzz)
	@scripts/bootstrap.sh fuzz
	@FUZZ_S=20 FUZZ_SEED=23 scripts/fuzz.sh
else
	@FUZZ_SMOKE_S=20 cargo test -q -p tidings-core --test fuzz_regressions -- --ignored --nocapture smoke_random_inputs
endif

clean:
	rm -rf pkg pkg-names target

## make ds-conformance DS_SUITE=<checkout of durable-streams/durable-streams>: its client
## conformance suites (consumer, lifecycle, producer) against tidings in headless Chromium and
## against the protocol's own TypeScript client, with strict result checks (docs/durable-streams.md).
## Not part of `make test`: it needs that checkout. DS_FIXTURES=http: see scripts/ds-conformance/adapter.mjs;
## DS_UNSKIP=1 runs the cases the suite skips for every client too (scripts/ds-conformance.sh).
ds-conformance:
	@test -n "$(DS_SUITE)" || { echo "make ds-conformance: set DS_SUITE=<checkout of durable-streams/durable-streams>"; exit 1; }
	@scripts/bootstrap.sh
	@scripts/build-pkg.sh
	scripts/ds-conformance.sh "$(DS_SUITE)" both
