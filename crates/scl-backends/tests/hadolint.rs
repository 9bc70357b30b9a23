//! Lints every generated Dockerfile of every fixture with hadolint, using the
//! workspace's `.hadolint.yaml`, and fails on any finding (error, warning,
//! info or style).
//!
//! hadolint comes from `scripts/install-test-tools.sh`. When it is missing
//! the test fails, unless `SCL_SKIP_TOOLS=1` is set (then it says so and
//! skips). `HADOLINT=/path/to/hadolint` picks a binary other than the one on
//! `PATH`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn hadolint() -> Option<String> {
    let bin = std::env::var("HADOLINT").unwrap_or_else(|_| "hadolint".into());
    match Command::new(&bin).arg("--version").output() {
        Ok(o) if o.status.success() => Some(bin),
        _ => None,
    }
}

#[test]
fn generated_dockerfiles_pass_hadolint() {
    let Some(bin) = hadolint() else {
        if std::env::var("SCL_SKIP_TOOLS").as_deref() == Ok("1") {
            eprintln!("SKIPPED: hadolint not found and SCL_SKIP_TOOLS=1");
            return;
        }
        panic!(
            "hadolint not found (set HADOLINT or put it on PATH): run scripts/install-test-tools.sh, \
             or set SCL_SKIP_TOOLS=1 to skip this test knowingly"
        );
    };
    let config = workspace_root().join(".hadolint.yaml");
    assert!(config.is_file(), "missing {}", config.display());
    let dir = tempfile::tempdir().unwrap();

    // Control: hadolint with this config does report a bad Dockerfile, so a
    // clean result below means something.
    let bad = dir.path().join("control.Dockerfile");
    std::fs::write(
        &bad,
        "FROM debian:latest\nRUN apt-get update && apt-get install -y git\n",
    )
    .unwrap();
    let o = Command::new(&bin)
        .arg("--no-color")
        .arg("--config")
        .arg(&config)
        .arg(&bad)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success(),
        "hadolint passed a bad Dockerfile:\n{report}"
    );
    for rule in ["DL3007", "DL3009", "DL3015"] {
        assert!(report.contains(rule), "control lacks {rule}:\n{report}");
    }

    let mut linted = 0;
    let mut failures = Vec::new();
    for (name, _spec, out) in common::lowered() {
        for a in common::dockerfiles(&out) {
            let file = dir
                .path()
                .join(format!("{name}__{}", a.path.replace('/', "__")));
            std::fs::write(&file, &a.contents).unwrap();
            let o = Command::new(&bin)
                .arg("--no-color")
                .args(["--failure-threshold", "warning", "--config"])
                .arg(&config)
                .arg(&file)
                .output()
                .expect("hadolint runs");
            let findings = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            if !o.status.success() || !findings.trim().is_empty() {
                failures.push(format!(
                    "{name}/{} (exit {:?}):\n{findings}",
                    a.path,
                    o.status.code()
                ));
            }
            linted += 1;
        }
    }
    assert!(
        linted >= 8,
        "expected every fixture's Dockerfiles, linted {linted}"
    );
    assert!(
        failures.is_empty(),
        "hadolint findings:\n{}",
        failures.join("\n")
    );
}
