//! The fuzz harness of SCL: inputs from a grammar-aware
//! generator ([`gen`]), a mutator of the repository's examples ([`mutate`])
//! and the hostile shapes ([`hostile`]), run through the whole
//! pipeline by the [`oracle`] in a supervised worker process (`main.rs`:
//! stack overflows, aborts, time-outs and memory blow-ups end the worker,
//! not the run).
//!
//! Every case is a pure function of `(seed, index)` ([`case_tree`]): case
//! `index` of seed `seed` is the same on every machine, so a failure is
//! reproduced from the two numbers (`scl-fuzz case --seed S --index I`).
//! The first [`SCHEDULED`] indexes are the hostile shapes at the sizes the
//! issue reported, so every run covers them; later ones are random.
//!
//! Run it: `cargo run --release -p scl-fuzz -- --time 3600` (a random seed,
//! printed first); see `fuzz/README.md`.

pub mod alloc;
pub mod case;
pub mod dockerfile;
pub mod gen;
pub mod hostile;
pub mod mutate;
pub mod oracle;

use case::Case;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::{Arc, Mutex};

/// How many indexes, from 0, are the hostile shapes at their trigger size.
pub const SCHEDULED: u64 = hostile::SHAPES.len() as u64;

/// The strategy of every random case: generated programs, mutated corpus
/// files, and hostile shapes at a random (log-uniform) size up to the one
/// the issue reported.
pub fn strategy(corpus: Arc<mutate::Corpus>) -> BoxedStrategy<Case> {
    let shapes = hostile::SHAPES.len();
    prop_oneof![
        4 => gen::module().prop_map(|t| Case::single("gen", t)),
        4 => mutate::mutated(corpus),
        1 => (0..shapes, 0.0f64..=1.0).prop_map(|(i, u)| {
            let t = hostile::SHAPES[i].trigger as f64;
            hostile::case(i, t.powf(u).round().max(1.0) as usize)
        }),
    ]
    .boxed()
}

/// The 32-byte ChaCha seed of case `index` of `seed`.
fn rng_seed(seed: u64, index: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&seed.to_le_bytes());
    b[8..16].copy_from_slice(&index.to_le_bytes());
    b[16..24].copy_from_slice(b"scl-fuzz");
    b
}

/// The value tree of case `index` of `seed` (its `current()` is the case;
/// `simplify`/`complicate` shrink it). Scheduled indexes have no tree.
pub fn case_tree(
    strategy: &BoxedStrategy<Case>,
    seed: u64,
    index: u64,
) -> Box<dyn ValueTree<Value = Case>> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &rng_seed(seed, index));
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    Box::new(
        strategy
            .new_tree(&mut runner)
            .expect("the strategies never reject"),
    )
}

/// Case `index` of `seed`.
pub fn case_at(strategy: &BoxedStrategy<Case>, seed: u64, index: u64) -> Case {
    if index < SCHEDULED {
        let i = index as usize;
        hostile::case(i, hostile::SHAPES[i].trigger)
    } else {
        case_tree(strategy, seed, index).current()
    }
}

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Installs a panic hook that records where the last panic happened (for
/// [`oracle::Failure`]'s detail) and prints nothing: the harness reports.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        if let Ok(mut g) = LAST_PANIC.lock() {
            *g = at;
        }
    }));
}

/// Where the last panic happened (`file:line:column`), if the hook saw it.
pub fn last_panic_location() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|mut g| g.take())
}
