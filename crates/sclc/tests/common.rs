//! Helpers shared by the CLI tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs the built `sclc` with `args` in `cwd`.
pub fn sclc(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("sclc runs")
}

/// Every file below `dir` (recursively, sorted) for which `keep` is true.
pub fn files_below(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(d: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        let mut es: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, keep, out);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    walk(dir, keep, &mut out);
    out
}

/// Every `*.env.scl` below `dir`, sorted.
pub fn scl_files(dir: &Path) -> Vec<PathBuf> {
    files_below(dir, &|p| p.to_string_lossy().ends_with(".env.scl"))
}

/// Whether a test that needs an outside program must fail rather than skip
/// without it: `CI` is set (to anything but `false`, `0` or empty), or one
/// of `vars` is `1`.
pub fn must_run(vars: &[&str]) -> bool {
    let ci = std::env::var("CI").unwrap_or_default();
    !matches!(ci.as_str(), "" | "0" | "false")
        || vars.iter().any(|v| std::env::var(v).as_deref() == Ok("1"))
}

/// A process's exit status, stdout and stderr, for an assertion message.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
