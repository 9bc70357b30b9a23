//! Every diagnostic case in `tests/diagnostics/` gives exactly the
//! diagnostics listed in `tests/diagnostics/expect.txt`: code, file, line,
//! column and message, in order. Also checks the JSON fields of cli.md and
//! the exit codes.

mod common;
use common::*;
use std::collections::BTreeMap;

fn cases() -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let dir = repo().join("tests/diagnostics");
    let mut expect: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in std::fs::read_to_string(dir.join("expect.txt"))
        .unwrap()
        .lines()
    {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (case, rest) = line.split_once(": ").unwrap();
        expect
            .entry(case.to_string())
            .or_default()
            .push(rest.to_string());
    }
    let mut cases = Vec::new();
    for f in scl_files(&dir) {
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().to_string();
        // Multi-file cases are folders; their entry point is main.env.scl.
        if rel.contains('/') && !rel.ends_with("/main.env.scl") {
            continue;
        }
        cases.push(rel);
    }
    (cases, expect)
}

#[test]
fn every_case_gives_exactly_its_diagnostics() {
    let dir = repo().join("tests/diagnostics");
    let (cases, expect) = cases();
    assert!(
        cases.len() >= 40,
        "expected at least 40 cases, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let text = std::fs::read_to_string(dir.join(case)).unwrap();
        // `// command: build` runs `sclc build --target docker` into a
        // scratch folder (for the diagnostics of a backend) instead of
        // `sclc check`; an error must leave that folder without an output.
        // (`// target: T` picks another target).
        let build = text.lines().any(|l| l.trim() == "// command: build");
        let target = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("// target: "))
            .unwrap_or("docker");
        let out_dir = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = if build {
            vec![
                "build".into(),
                case.clone(),
                "--target".into(),
                target.into(),
                "--out".into(),
                out_dir.path().join("out").display().to_string(),
            ]
        } else {
            vec!["check".into(), case.clone()]
        };
        args.extend(["--message-format".into(), "json".into()]);
        for l in text.lines() {
            if let Some(a) = l.strip_prefix("// args:") {
                args.extend(a.split_whitespace().map(String::from));
            }
        }
        let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let out = sclc(&dir, &argv);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut got = Vec::new();
        let mut any_error = false;
        for line in stderr.lines() {
            let d: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{case}: not JSON ({e}): {line}"));
            for k in [
                "code",
                "severity",
                "message",
                "file",
                "line",
                "column",
                "end_line",
                "end_column",
                "labels",
                "help",
            ] {
                assert!(d.get(k).is_some(), "{case}: diagnostic lacks `{k}`: {line}");
            }
            any_error |= d["severity"] == "error";
            got.push(format!(
                "{} {}:{}:{} {}",
                d["code"].as_str().unwrap(),
                d["file"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap()
            ));
        }
        let want = expect.get(case).cloned().unwrap_or_default();
        if got != want {
            failures.push(format!("{case}:\n  want {want:#?}\n  got  {got:#?}"));
        }
        let code = out.status.code().unwrap();
        if code != i32::from(any_error) {
            failures.push(format!("{case}: exit {code}, errors: {any_error}"));
        }
        if build && any_error && out_dir.path().join("out").exists() {
            failures.push(format!("{case}: build wrote output despite errors"));
        }
    }
    for case in expect.keys() {
        assert!(
            cases.contains(case),
            "expect.txt names a missing case {case}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn at_least_25_distinct_error_codes_are_tested() {
    let (_, expect) = cases();
    let mut codes: Vec<&str> = expect
        .values()
        .flatten()
        .map(|l| &l[..5])
        .filter(|c| c.starts_with('E'))
        .collect();
    codes.sort();
    codes.dedup();
    assert!(
        codes.len() >= 25,
        "only {} distinct error codes: {codes:?}",
        codes.len()
    );
}

#[test]
fn every_emitted_code_has_an_explanation() {
    let (_, expect) = cases();
    for l in expect.values().flatten() {
        let code = &l[..5];
        let out = sclc(&repo(), &["explain", code]);
        assert_eq!(out.status.code(), Some(0), "sclc explain {code}");
        assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("{code}: ")));
    }
    assert_eq!(sclc(&repo(), &["explain", "E9999"]).status.code(), Some(2));
}

#[test]
fn human_output_shows_the_source_line_and_the_fix() {
    let dir = repo().join("tests/diagnostics");
    let out = sclc(&dir, &["check", "unknown_field.env.scl"]);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stderr);
    assert!(s.contains("[E0202] Error: unknown field `memroy`"), "{s}");
    assert!(s.contains("resources.requests { memroy = 4Gi }"), "{s}");
    assert!(s.contains("did you mean `memory`?"), "{s}");
    assert!(
        !s.contains('\u{1b}'),
        "no colours when NO_COLOR is set / not a terminal: {s}"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        sclc(&repo(), &["check", "no/such/file.env.scl"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(sclc(&repo(), &["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        sclc(&repo(), &["ir", "examples/hello/hello.env.scl", "--bogus"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn unknown_env_is_an_error_with_a_suggestion() {
    let out = sclc(
        &repo(),
        &[
            "ir",
            "examples/hello/hello.env.scl",
            "--env",
            "helo",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stderr);
    assert!(
        s.contains("\"code\":\"E0315\"") && s.contains("did you mean `hello`?"),
        "{s}"
    );
}
