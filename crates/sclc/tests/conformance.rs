//! Runs the shared conformance suite (`../shared/conformance/run.py`, or the
//! copy in `tests/conformance/` when the shared folder is absent) and the
//! project's own semantic cases against the built `sclc`: every case must pass.

mod common;
use common::*;
use std::process::Command;

/// Runs a conformance-format runner against the built `sclc`; fails on any
/// failed case and returns how many passed.
fn run_cases(runner: &std::path::Path) -> usize {
    let out = Command::new("python3")
        .arg(runner)
        .arg(env!("CARGO_BIN_EXE_sclc"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.ends_with(" passed, 0 failed"), "{stdout}");
    last.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn conformance_suite_passes() {
    let shared = repo().join("../shared/conformance/run.py");
    let local = repo().join("tests/conformance/run.py");
    let runner = if shared.is_file() { shared } else { local };
    assert!(run_cases(&runner) >= 22);
}

/// The project's own semantic cases (`tests/semantics/`), in the same format:
/// `self` late binding, map `+=`/`-=`, quantities, `"""` strings, template
/// instances as distinct ancestors, resolved diamonds, services with `with`,
/// comprehensions, `if` items, de-duplication, stdlib functions, defaults.
#[test]
fn semantic_cases_pass() {
    assert!(run_cases(&repo().join("tests/semantics/run.py")) >= 12);
}
