//! Values checked at `sclc check` time, end to end: usage errors of `check`
//! and `ir` (exit 2), `host:` sources that need not exist, file names kept
//! byte for byte, `--set` given twice, and no panic message on stderr when a
//! parsing library fails on a value.

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
