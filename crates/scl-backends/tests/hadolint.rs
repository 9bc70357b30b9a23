//! Lints every generated Dockerfile of every fixture with hadolint, using the
//! workspace's `.hadolint.yaml`, and fails on any finding (error, warning,
//! info or style).
//!
//! hadolint comes from `scripts/install-test-tools.sh` (`<repo>/.venv`), else
//! `PATH` (see `common/tools.rs`). When it is missing the test fails, unless
//! `SCL_SKIP_TOOLS=1` is set (then it says so and skips).

mod common;

use common::tools;

#[test]
fn generated_dockerfiles_pass_hadolint() {
    let Some(bin) = tools::require("hadolint", tools::hadolint()) else {
        return;
    };
    assert!(tools::hadolint_config().is_file());
    let dir = tempfile::tempdir().unwrap();

    // Control: hadolint with this config does report a bad Dockerfile, so a
    // clean result below means something.
    // And a Dockerfile it cannot parse (an ENV value ending in an escaped
    // backslash inside quotes) is reported as DL1000.
    let bad = dir.path().join("control.Dockerfile");
    std::fs::write(
        &bad,
        "FROM debian:latest\nRUN apt-get update && apt-get install -y git\n",
    )
    .unwrap();
    let unparsable = dir.path().join("unparsable.Dockerfile");
    std::fs::write(&unparsable, "FROM debian:12.5\nENV C=\"z\\\\\"\n").unwrap();
    let control = tools::lint_files(&bin, &[bad, unparsable]);
    for rule in ["DL3007", "DL3009", "DL3015", "DL1000"] {
        assert!(
            control.iter().any(|f| f.code == rule),
            "control lacks {rule}: {control:?}"
        );
    }

    let mut files = Vec::new();
    for (name, _spec, out) in common::lowered() {
        for a in common::dockerfiles(&out) {
            let file = dir
                .path()
                .join(format!("{name}__{}", a.path.replace('/', "__")));
            std::fs::write(&file, &a.contents).unwrap();
            files.push(file);
        }
    }
    assert!(
        files.len() >= 8,
        "expected every fixture's Dockerfiles, got {}",
        files.len()
    );
    let findings = tools::lint_files(&bin, &files);
    assert!(findings.is_empty(), "hadolint findings:\n{findings:#?}");
}
