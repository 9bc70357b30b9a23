//! Diagnostics name their file by the path a user can open from where
//! `sclc` runs: relative to the current folder when the file is below it,
//! else absolute; the stdlib as `std/NAME.env.scl` (see messages.rs). The
//! path is chosen when rendering, for the JSON `file` and labels and for the
//! human form alike.

mod common;
use common::sclc;
use std::path::Path;

const BAD: &str =
    "env app {\n  base = image(\"debian:12.5\")\n  resources.requests { memroy = 4Gi }\n}\n";

fn files_of(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| {
            let d: serde_json::Value = serde_json::from_str(l).unwrap();
            d["file"].as_str().unwrap().to_string()
        })
        .collect()
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_tree_is_reported_with_the_folders_of_its_files() {
    // No scl.toml: each file is the root of its own workspace, so its
    // workspace-relative name is bare; the user needs `team/a/…`.
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("team/a/main.env.scl"), BAD);
    write(&dir.path().join("team/b/main.env.scl"), BAD);
    let out = sclc(dir.path(), &["check", ".", "--message-format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        files_of(&out),
        ["team/a/main.env.scl", "team/b/main.env.scl"]
    );
    let out = sclc(dir.path(), &["check", "."]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("team/a/main.env.scl:3:24"), "{err}");
    assert!(err.contains("team/b/main.env.scl:3:24"), "{err}");
}

#[test]
fn a_file_outside_the_current_folder_is_shown_absolute() {
    // The workspace is `ws` (scl.toml); sclc runs in `ws/app`; the error is
    // in `ws/lib/base.env.scl`, which `app/main.env.scl` imports.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    write(&ws.join("scl.toml"), "");
    write(
        &ws.join("app/main.env.scl"),
        "import \"../lib/base.env.scl\" as base\nlet x = nope\nenv app extends base.app {}\n",
    );
    write(&ws.join("lib/base.env.scl"), BAD);
    let out = sclc(
        &ws.join("app"),
        &["check", "main.env.scl", "--message-format", "json"],
    );
    let lib = ws.join("lib/base.env.scl").display().to_string();
    assert_eq!(files_of(&out), ["main.env.scl", lib.as_str()]);
    // From the workspace root both are relative, with their folders.
    let out = sclc(
        &ws,
        &["check", "app/main.env.scl", "--message-format", "json"],
    );
    assert_eq!(files_of(&out), ["app/main.env.scl", "lib/base.env.scl"]);
    // From above the workspace: through `ws/`.
    let out = sclc(
        dir.path(),
        &["check", "ws/app/main.env.scl", "--message-format", "json"],
    );
    assert_eq!(
        files_of(&out),
        ["ws/app/main.env.scl", "ws/lib/base.env.scl"]
    );
}

#[test]
fn the_same_error_in_two_workspaces_is_printed_for_each() {
    // With `--set` every file is a root of its own; two files with the same
    // workspace-relative name (`main.env.scl`) in two workspaces are two
    // files, and each keeps its error.
    let dir = tempfile::tempdir().unwrap();
    let text = "param gpus: Int = 1\nlet x = nope\nenv app {\n  base = image(\"debian:12.5\")\n}\n";
    write(&dir.path().join("a/main.env.scl"), text);
    write(&dir.path().join("b/main.env.scl"), text);
    let out = sclc(
        dir.path(),
        &["check", ".", "--set", "gpus=2", "--message-format", "json"],
    );
    assert_eq!(files_of(&out), ["a/main.env.scl", "b/main.env.scl"]);
}

#[test]
fn check_of_a_folder_gives_each_file_the_set_flags_addressed_to_it() {
    // A parameter declared by one file and an alias imported by another:
    // each flag goes to the files that take it, and the files that take
    // neither (a base module) are checked without them. A flag no file
    // takes is one error, reported once.
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("base.env.scl"),
        "param torch_ver: String = \"2.3.1\"\nenv base_env {\n  base = image(\"debian:12.5\")\n}\n",
    );
    write(
        &dir.path().join("train.env.scl"),
        "import \"./base.env.scl\" as common\nparam gpus: Int = 1\nenv train extends common.base_env {\n  description = \"gpus ${gpus}\"\n}\n",
    );
    let ok = sclc(
        dir.path(),
        &[
            "check",
            ".",
            "--set",
            "gpus=2",
            "--set",
            "common.torch_ver=2.4.0",
        ],
    );
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    assert!(ok.stderr.is_empty(), "{ok:?}");
    let bad = sclc(
        dir.path(),
        &[
            "check",
            ".",
            "--set",
            "gpus=2",
            "--set",
            "nope=1",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    let err = String::from_utf8_lossy(&bad.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("\"E0312\"")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("has no parameter `nope`"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_removed_current_folder_is_a_usage_error() {
    // Without a current folder, `sclc check` must not guess one (it once
    // fell back to `/` and checked the whole disk).
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    // A shell enters the folder, removes it, then runs sclc there.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd '{}' && rmdir '{}' && exec '{}' check",
            gone.display(),
            gone.display(),
            env!("CARGO_BIN_EXE_sclc")
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: the current folder cannot be read"),
        "{err}"
    );
}

#[test]
fn the_summary_counts_the_problems_shown_and_says_when_more_were_left_out() {
    // 150 errors in one file: 100 shown, then E0008 ("and 50 more …"),
    // which is not counted as an error of its own.
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..150).map(|i| format!("let x{i} = nope{i}\n")).collect();
    write(&dir.path().join("many.env.scl"), &text);
    let out = sclc(dir.path(), &["check", "many.env.scl"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("and 50 more errors in this file, not shown"),
        "{err}"
    );
    assert_eq!(
        err.lines().last(),
        Some("100 errors emitted, more not shown"),
        "{err}"
    );
}
