//! `sclc fmt`: the command-line contract (`--check`, `--stdin`, files with
//! syntax errors, atomic writes, unchanged files left alone) and, on the
//! repository's own programs, that formatting never changes what `sclc`
//! says about them (`sclc ir` bytes, or the list of diagnostic codes and
//! messages).

mod common;
use common::*;
use std::path::Path;
use std::time::{Duration, SystemTime};

const UGLY: &str = "env a{\n    x=1 // keep me\n  y  =  [1,2]\n}\n";
const PRETTY: &str = "env a {\n  x = 1 // keep me\n  y = [1, 2]\n}\n";
const BROKEN: &str = "env b {\n  x = \n";

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_lists_the_files_that_would_change_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.env.scl", PRETTY);
    write(d.path(), "sub/b.env.scl", UGLY);
    // Not a `.env.scl` file: not taken from a folder (as by `sclc check`).
    write(d.path(), "sub/c.scl", UGLY);
    let out = sclc(d.path(), &["fmt", "--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "sub/b.env.scl\n");
    assert_eq!(read(d.path(), "sub/b.env.scl"), UGLY);
    let out = sclc(d.path(), &["fmt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(read(d.path(), "sub/b.env.scl"), PRETTY);
    assert_eq!(read(d.path(), "sub/c.scl"), UGLY);
    let out = sclc(d.path(), &["fmt", "--check", "."]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
}

#[test]
fn stdin_to_stdout() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let run = |input: &str, args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sclc"))
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(UGLY, &["fmt", "--stdin"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), PRETTY);
    let out = run(PRETTY, &["fmt", "--stdin", "--check"]);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), String::new()));
    let out = run(UGLY, &["fmt", "--stdin", "--check"]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(1), "<stdin>\n".into())
    );
    let out = run(BROKEN, &["fmt", "--stdin"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("<stdin>:"), "{}", stderr(&out));
}

#[test]
fn a_file_with_a_syntax_error_is_untouched_and_reported_like_check() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "bad.env.scl", BROKEN);
    write(d.path(), "good.env.scl", UGLY);
    let out = sclc(d.path(), &["fmt"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(read(d.path(), "bad.env.scl"), BROKEN);
    // The other files are still formatted.
    assert_eq!(read(d.path(), "good.env.scl"), PRETTY);
    // The same rendering as `sclc check` (the file named as given).
    let check = sclc(d.path(), &["check", "bad.env.scl"]);
    assert_eq!(stderr(&out), stderr(&check));
    assert!(stderr(&out).contains("E0"), "{}", stderr(&out));
    // JSON too.
    let out = sclc(
        d.path(),
        &["fmt", "--message-format", "json", "bad.env.scl"],
    );
    let v: serde_json::Value = serde_json::from_str(stderr(&out).lines().next().unwrap()).unwrap();
    assert_eq!(v["file"], "bad.env.scl");
}

#[test]
fn not_utf8_is_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("x.env.scl"), b"env a {}\n\xff\n").unwrap();
    let out = sclc(d.path(), &["fmt", "x.env.scl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not valid UTF-8"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(d.path().join("x.env.scl")).unwrap(),
        b"env a {}\n\xff\n"
    );
}

#[test]
fn writes_are_atomic_keep_permissions_and_leave_other_files() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.env.scl", UGLY);
    write(d.path(), "notes.txt", "not SCL {");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            d.path().join("a.env.scl"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
    }
    let out = sclc(d.path(), &["fmt", "a.env.scl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(d.path(), "a.env.scl"), PRETTY);
    assert_eq!(read(d.path(), "notes.txt"), "not SCL {");
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["a.env.scl", "notes.txt"],
        "a temporary file was left"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.path().join("a.env.scl"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}

#[test]
fn unchanged_files_are_not_rewritten() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "same.env.scl", PRETTY);
    write(d.path(), "other.env.scl", UGLY);
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    for f in ["same.env.scl", "other.env.scl"] {
        let file = std::fs::File::options()
            .write(true)
            .open(d.path().join(f))
            .unwrap();
        file.set_modified(old).unwrap();
    }
    let out = sclc(d.path(), &["fmt"]);
    assert_eq!(out.status.code(), Some(0));
    let mtime = |f: &str| {
        std::fs::metadata(d.path().join(f))
            .unwrap()
            .modified()
            .unwrap()
    };
    assert_eq!(mtime("same.env.scl"), old);
    assert_ne!(mtime("other.env.scl"), old);
}

#[test]
fn a_missing_path_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let out = sclc(d.path(), &["fmt", "nope.env.scl"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `sclc fmt` takes exactly the files `sclc check` takes, with the same
/// usage errors (message and exit code 2) and without touching anything:
/// a file that is not a `.env.scl` file, a folder (or the default `.`)
/// with no `.env.scl` file below it (only `*.scl` or nothing), a path that
/// does not exist.
#[test]
fn fmt_takes_the_files_check_takes() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "notes.txt", UGLY);
    write(d.path(), "lib/x.scl", UGLY);
    write(d.path(), "ok/a.env.scl", UGLY);
    std::fs::create_dir_all(d.path().join("empty")).unwrap();
    let cases: [(&str, &[&str], &str); 6] = [
        (
            ".",
            &["notes.txt"],
            "error: notes.txt is not a `.env.scl` file\n",
        ),
        (
            ".",
            &["lib/x.scl"],
            "error: lib/x.scl is not a `.env.scl` file\n",
        ),
        (".", &["lib"], "error: no `.env.scl` file in lib\n"),
        ("empty", &[], "error: no `.env.scl` file in .\n"),
        (
            ".",
            &["ok", "nope"],
            "error: no such file or folder: nope\n",
        ),
        (
            ".",
            &["ok/a.env.scl", "notes.txt"],
            "error: notes.txt is not a `.env.scl` file\n",
        ),
    ];
    for (dir, args, want) in cases {
        let dir = d.path().join(dir);
        let run = |cmd: &str| {
            let mut a = vec![cmd];
            a.extend_from_slice(args);
            sclc(&dir, &a)
        };
        let (f, c) = (run("fmt"), run("check"));
        assert_eq!(
            (f.status.code(), stderr(&f), stdout(&f)),
            (Some(2), want.to_string(), String::new()),
            "sclc fmt {args:?} in {dir:?}"
        );
        assert_eq!(
            (c.status.code(), stderr(&c)),
            (Some(2), want.to_string()),
            "sclc check {args:?} in {dir:?}"
        );
    }
    for f in ["notes.txt", "lib/x.scl", "ok/a.env.scl"] {
        assert_eq!(read(d.path(), f), UGLY, "{f} was written");
    }
}

/// Code and message of each diagnostic `sclc check` gives (JSON), and the
/// exit code.
fn check_summary(dir: &Path, file: &str) -> (Option<i32>, Vec<(String, String)>) {
    let out = sclc(dir, &["check", "--message-format", "json", file]);
    let diags = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (
                v["code"].as_str().unwrap_or("").to_string(),
                v["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (out.status.code(), diags)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let q = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

/// For every program of a folder: `sclc ir` gives the same bytes after
/// formatting, or (for a program with errors) `sclc check` gives the same
/// codes and messages. Returns how many files the formatter changed.
fn same_meaning_after_fmt(folder: &Path) -> usize {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("w");
    copy_dir(folder, &root);
    let files: Vec<String> = scl_files(&root)
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    let before: Vec<_> = files
        .iter()
        .map(|f| (check_summary(&root, f), stdout(&sclc(&root, &["ir", f]))))
        .collect();
    let texts: Vec<String> = files.iter().map(|f| read(&root, f)).collect();
    sclc(&root, &["fmt", "."]);
    let mut changed = 0;
    for (i, f) in files.iter().enumerate() {
        if read(&root, f) != texts[i] {
            changed += 1;
        }
        let after = (check_summary(&root, f), stdout(&sclc(&root, &["ir", f])));
        assert_eq!(
            after,
            before[i],
            "{f} means something else after `sclc fmt`:\n{}",
            read(&root, f)
        );
    }
    changed
}

#[test]
fn formatting_keeps_the_meaning_of_the_diagnostics_cases() {
    let changed = same_meaning_after_fmt(&repo().join("tests/diagnostics"));
    assert!(
        changed >= 10,
        "only {changed} files changed: the test would prove little"
    );
}

#[test]
fn formatting_keeps_the_meaning_of_the_syntax_fixtures() {
    same_meaning_after_fmt(&repo().join("crates/scl-syntax/tests/fixtures"));
}

#[test]
fn formatting_keeps_the_ir_of_the_examples() {
    same_meaning_after_fmt(&repo().join("examples"));
}

/// The repository's own SCL files are formatted (`sclc fmt --check`).
#[test]
fn examples_and_stdlib_are_formatted() {
    let out = sclc(&repo(), &["fmt", "--check", "examples", "stdlib"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "not formatted:\n{}",
        stdout(&out)
    );
}

/// A file named twice, or by its name and through a link, is listed once by
/// `--check` (and formatted once).
#[test]
fn a_file_named_twice_is_done_once() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.env.scl", UGLY);
    #[cfg(unix)]
    std::os::unix::fs::symlink("a.env.scl", d.path().join("link.env.scl")).unwrap();
    let mut args = vec!["fmt", "--check", "a.env.scl", "a.env.scl", "./a.env.scl"];
    if cfg!(unix) {
        args.push("link.env.scl");
    }
    let out = sclc(d.path(), &args);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(1), "a.env.scl\n".into())
    );
    let out = sclc(
        d.path(),
        &args[..args.len() - 1]
            .iter()
            .copied()
            .filter(|a| *a != "--check")
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(d.path(), "a.env.scl"), PRETTY);
}

/// A read-only file is left as it is, with an error (a rename over it
/// would get past its permissions); the other files are formatted.
#[cfg(unix)]
#[test]
fn a_read_only_file_is_not_written() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "ro.env.scl", UGLY);
    write(d.path(), "rw.env.scl", UGLY);
    let ro = d.path().join("ro.env.scl");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = sclc(d.path(), &["fmt"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: cannot write ro.env.scl: the file is read-only\n"
    );
    assert_eq!(read(d.path(), "ro.env.scl"), UGLY);
    assert_eq!(read(d.path(), "rw.env.scl"), PRETTY);
    let mode = std::fs::metadata(&ro).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444);
    // `--check` still lists it.
    let out = sclc(d.path(), &["fmt", "--check"]);
    assert_eq!(stdout(&out), "ro.env.scl\n");
}

/// `sclc fmt --check` and `sclc check` of a folder holding a FIFO named
/// `*.env.scl` take only the regular files (opening a FIFO would block
/// until something writes to it: the command hung).
#[cfg(unix)]
#[test]
fn a_fifo_in_a_folder_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.env.scl", "env a {\n  description = \"a\"\n}\n");
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("x.env.scl"))
        .status()
        .unwrap();
    assert!(made.success());
    for args in [&["fmt", "--check", "."][..], &["check", "."][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sclc"))
            .args(args)
            .current_dir(d.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("sclc {args:?} did not finish: it opened the FIFO");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(
            !stdout(&o).contains("x.env.scl"),
            "{args:?}: {}",
            stdout(&o)
        );
    }
    // Only the FIFO: no file to check, a usage error (exit 2).
    std::fs::remove_file(d.path().join("a.env.scl")).unwrap();
    let o = sclc(d.path(), &["check", "."]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
