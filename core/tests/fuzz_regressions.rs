//! The fuzz oracles (docs/reliability.md) in the normal suite: every input committed
//! under `fuzz/corpus/<target>/` (the seed corpora) and
//! `fuzz/regressions/<target>/` (every crash the fuzzer found, minimized)
//! replayed through the same check as `make fuzz` runs
//! (`tidings_core::testing`), plus a quick pseudo-random sweep of each
//! target so the suite exercises the oracles without the fuzzer.

use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};
use tidings_core::rng::Rng;
use tidings_core::testing::{decoders, engine_model, hints, sse_reference};

/// Run `check` on `data` decoded the way `fuzz_target!` decodes it.
fn replay<'a, T: Arbitrary<'a>>(
    data: &'a [u8],
    check: fn(&T) -> Result<(), String>,
) -> Result<(), String> {
    match T::arbitrary_take_rest(Unstructured::new(data)) {
        Ok(case) => check(&case),
        Err(_) => Ok(()),
    }
}

fn files(dir: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(dir)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.path(), std::fs::read(e.path()).ok()?)))
        .collect();
    out.sort();
    out
}

/// One fuzz target's oracle on raw bytes.
type Check = fn(&[u8]) -> Result<(), String>;

/// Every fuzz target and its oracle, in the smoke's order (its per-target
/// seed is the row's index, so a reordered table changes the smoke's inputs).
const TARGETS: [(&str, Check); 6] = [
    ("sse", |d| replay(d, sse_reference::check)),
    ("http_hints", |d| replay(d, hints::check_hints)),
    ("validators", |d| replay(d, hints::check_validators)),
    ("json_envelope", |d| replay(d, decoders::check_json)),
    ("crosstab_wire", |d| replay(d, decoders::check_wire)),
    ("engine", |d| replay(d, engine_model::check)),
];

/// The committed corpus and regressions of `target`, then 300 pseudo-random
/// inputs (fixed seed), through its oracle in [`TARGETS`].
fn run_target(target: &str) {
    let Some(&(_, check)) = TARGETS.iter().find(|(name, _)| *name == target) else {
        panic!("{target}: not in TARGETS")
    };
    let mut failures = Vec::new();
    for dir in ["corpus", "regressions"] {
        for (path, data) in files(dir, target) {
            if let Err(e) = check(&data) {
                failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    // Pseudo-random inputs, fixed seed.
    let mut rng = Rng::new(23);
    for i in 0..300 {
        let len = usize::try_from(rng.below(2048)).unwrap_or(0);
        let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        if let Err(e) = check(&data) {
            failures.push(format!("random #{i}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{target}:\n{}", failures.join("\n"));
}

/// One test per target, named after it (`cargo test -p tidings-core --test
/// fuzz_regressions engine` replays one).
macro_rules! replay_tests {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                run_target(stringify!($target));
            }
        )*
    };
}

replay_tests!(
    sse,
    http_hints,
    validators,
    engine,
    json_envelope,
    crosstab_wire
);

/// The fuzz smoke of `make test` (`make smoke`): every target's oracle on
/// pseudo-random inputs for `FUZZ_SMOKE_S` seconds in all (default 20),
/// without the instrumented build that `make fuzz` needs (README
/// "Reliability": its cold build costs minutes). Prints executions per target.
#[test]
#[ignore = "make smoke runs it with a time budget"]
// The budget is the harness's own wall time; the code under test gets none.
#[allow(clippy::disallowed_methods)]
fn smoke_random_inputs() {
    let total_s: u64 = std::env::var("FUZZ_SMOKE_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let per = std::time::Duration::from_millis(total_s * 1000 / TARGETS.len() as u64);
    // Seeded (FUZZ_SMOKE_SEED, default 23): a failure replays exactly.
    let seed: u64 = std::env::var("FUZZ_SMOKE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(23);
    let mut failures = Vec::new();
    for (i, (name, check)) in TARGETS.iter().enumerate() {
        let mut rng = Rng::new(seed ^ (i as u64) << 32);
        let start = std::time::Instant::now();
        let mut execs = 0u64;
        while start.elapsed() < per {
            let len = usize::try_from(rng.below(4096)).unwrap_or(0);
            let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            execs += 1;
            if let Err(e) = check(&data) {
                failures.push(format!("{name} (seed {seed}, input #{execs}): {e}"));
                break;
            }
        }
        println!(
            "fuzz smoke: {name} executions={execs} failures={}",
            failures.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
