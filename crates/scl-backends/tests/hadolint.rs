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

/// Exec-form strings that are valid JSON (and that BuildKit reads right)
/// but that hadolint read as shell form before `quote::json_string` wrote
/// `"` and `\` as `\u0022`/`\u005c`: a backslash before a quote, a trailing
/// backslash, backslashes then a quote. Each must lint clean (no DL3025)
/// and come back from BuildKit's parser as JSON with the same values.
#[test]
fn exec_form_with_quotes_and_backslashes_is_json_to_hadolint() {
    let hadolint = tools::require("hadolint", tools::hadolint());
    let python = tools::require(
        "BuildKit's parser (python -c 'import dockerfile')",
        tools::python_with_parser(),
    );
    let (Some(hadolint), Some(python)) = (hadolint, python) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let values = [
        "a\\\"b",
        "a\\",
        "\\\\\"",
        "\"",
        "\\",
        "x\\\\",
        "\\\"\\\"",
        "say \"hi\"\\n",
    ];
    let mut files = Vec::new();
    for (n, v) in values.iter().enumerate() {
        let spec = scl_ir::EnvSpec {
            api_version: scl_ir::API_VERSION.into(),
            base: Some(scl_ir::ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            entrypoint: vec!["python".into(), v.to_string()],
            command: vec![v.to_string()],
            ..Default::default()
        };
        let out = scl_backends::docker::lower(&spec, "t");
        assert!(out.errors.is_empty(), "{v:?}: {:?}", out.errors);
        let file = dir.path().join(format!("{n}.Dockerfile"));
        std::fs::write(&file, &out.artifact("Dockerfile").unwrap().contents).unwrap();
        files.push(file);
    }
    let findings = tools::lint_files(&hadolint, &files);
    assert!(findings.is_empty(), "hadolint findings:\n{findings:#?}");
    for (parsed, v) in tools::parse_files(&python, &files).iter().zip(values) {
        assert_eq!(parsed.error, None, "{v:?}");
        let get = |cmd: &str| {
            parsed
                .instructions
                .iter()
                .find(|i| i.cmd == cmd)
                .unwrap_or_else(|| panic!("{v:?}: no {cmd}"))
        };
        let (e, c) = (get("ENTRYPOINT"), get("CMD"));
        assert!(e.json && c.json, "{v:?}: not the JSON form");
        assert_eq!(e.value, ["python", v], "{v:?}");
        assert_eq!(c.value, [v], "{v:?}");
    }
}
