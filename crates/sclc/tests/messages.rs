//! Help lines that say how to fix the mistakes new users make, checked
//! exactly (the diagnostics cases check code, position and message; these
//! check the help too).

mod common;
use common::*;

/// `(code, message, help)` of each diagnostic `sclc check` gives for `src`
/// (one file) with `args`.
fn helps(src: &str, args: &[&str]) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.env.scl"), src).unwrap();
    let mut argv = vec!["check", "m.env.scl", "--message-format", "json"];
    argv.extend(args);
    let out = sclc(dir.path(), &argv);
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| {
            let d: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            (s("code"), s("message"), s("help"))
        })
        .collect()
}

fn help_of(src: &str, code: &str) -> String {
    let all = helps(src, &[]);
    all.iter()
        .find(|d| d.0 == code)
        .unwrap_or_else(|| panic!("no {code} in {all:?}"))
        .2
        .clone()
}

const ENV: &str = "env app {\n  base = image(\"debian:12.5\")\n";

#[test]
fn a_command_string_is_split_into_arguments() {
    let h = help_of(
        &format!("{ENV}  command = \"curl --version\"\n}}\n"),
        "E0201",
    );
    assert_eq!(
        h,
        "this field is a list, one element per argument: write `[\"curl\", \"--version\"]`"
    );
}

#[test]
fn a_version_written_as_a_number_is_quoted() {
    let h = help_of(&format!("{ENV}  python.version = 3.10\n}}\n"), "E0201");
    assert_eq!(
        h,
        "write `\"3.10\"`: without quotes, `3.10` is the number 3.1"
    );
}

#[test]
fn a_single_equals_pin_is_corrected() {
    let h = help_of(
        &format!("{ENV}  python.packages = [\"bitsandbytes=0.43.1\"]\n}}\n"),
        "E0205",
    );
    assert_eq!(
        h,
        "PEP 508 pins a version with `==`: write `bitsandbytes==0.43.1`"
    );
}

#[test]
fn a_relative_container_path_gets_its_slash() {
    let h = help_of(&format!("{ENV}  workdir = \"workspace\"\n}}\n"), "E0208");
    assert_eq!(
        h,
        "a path in the container starts with `/`: write \"/workspace\""
    );
}

#[test]
fn set_names_are_trimmed_and_imported_parameters_suggested() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("base.env.scl"),
        "param cuda: String = \"12.1\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m.env.scl"),
        format!("import \"./base.env.scl\" as base\nparam gpus: Int = 1\n{ENV}}}\n"),
    )
    .unwrap();
    let run = |set: &str| {
        let out = sclc(
            dir.path(),
            &[
                "check",
                "m.env.scl",
                "--set",
                set,
                "--message-format",
                "json",
            ],
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // Blanks around the name are not part of it.
    assert_eq!(run("gpus = 2"), (Some(0), String::new()));
    let (code, err) = run("cuda=11.8");
    assert_eq!(code, Some(1));
    let d: serde_json::Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
    assert_eq!(d["code"], "E0312");
    assert_eq!(
        d["help"],
        "the module imported as `base` has a parameter `cuda`: write `--set base.cuda=…`"
    );
    let (_, err) = run("gpus=two");
    let d: serde_json::Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
    assert_eq!(
        d["help"],
        "`gpus` is an Int parameter; give an Int value (only String-like parameters take bare text)"
    );
}

#[test]
fn an_error_inside_a_stdlib_template_points_at_its_use_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.env.scl"),
        "import \"std/pytorch-cuda\" as torch\nenv job extends torch.runtime(torch = \"2.3.1\", cuda = \"12.4\", image = .official) {\n  description = \"x\"\n}\n",
    )
    .unwrap();
    let out = sclc(
        dir.path(),
        &["check", "m.env.scl", "--message-format", "json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let d: serde_json::Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
    assert_eq!(d["code"], "E0311");
    // The primary location is the use, in the user's file (where a CI
    // annotation lands); the stdlib line is a label.
    assert_eq!(
        (&d["file"], &d["line"], &d["column"]),
        (
            &serde_json::json!("m.env.scl"),
            &serde_json::json!(2),
            &serde_json::json!(9)
        )
    );
    // The label: the lookup `cudnn[torch][cuda]` in the stdlib module.
    let stdlib = std::fs::read_to_string(repo().join("stdlib/pytorch-cuda.env.scl")).unwrap();
    let (line, text) = stdlib
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("cudnn[torch][cuda]"))
        .unwrap();
    let column = text.find("[cuda]").unwrap() + 2;
    let label = &d["labels"][0];
    assert_eq!(
        (&label["file"], &label["line"], &label["column"]),
        (
            &serde_json::json!("std/pytorch-cuda.env.scl"),
            &serde_json::json!(line + 1),
            &serde_json::json!(column)
        )
    );
    assert_eq!(label["message"], "this key");
}

#[test]
fn set_values_with_invisible_characters_are_refused() {
    // Every class of hidden character, and a line break, in a `--set` value
    // is E0010 (the value never reaches the IR), like in a source file.
    let src =
        "param t: String = \"a\"\nenv app {\n  base = image(\"debian:12.5\")\n  vars.T = t\n}\n";
    for (c, name) in [
        ('\u{1b}', "U+001B (ESCAPE)"),
        ('\r', "U+000D (CARRIAGE RETURN)"),
        ('\n', "U+000A"),
        ('\u{202e}', "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ('\u{2028}', "U+2028 (LINE SEPARATOR)"),
    ] {
        let arg = format!("t=a{c}b");
        let d = helps(src, &["--set", &arg]);
        assert_eq!(d.len(), 1, "{c:?}: {d:?}");
        assert_eq!(d[0].0, "E0010");
        assert_eq!(
            d[0].1,
            format!("`--set` value with an invisible character {name}")
        );
    }
}

#[test]
fn a_file_that_is_not_utf8_is_one_error_at_its_first_bad_byte() {
    // The bad byte becomes one U+FFFD in the text the compiler reads; the
    // diagnostic's span is that character, so it renders (it used to panic
    // inside the renderer: exit 101).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.env.scl"), b"let a = 1\n\xff\n").unwrap();
    let out = sclc(dir.path(), &["check", "m.env.scl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("[E0001] Error: the file is not valid UTF-8 (byte 10)"),
        "{err}"
    );
    assert!(err.contains("m.env.scl:2:1"), "{err}");
}
