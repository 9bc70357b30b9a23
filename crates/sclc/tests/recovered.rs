//! A declaration with a syntax error stays in the tree (recovered by the
//! parser), and `sclc check` reports exactly the syntax error(s): nothing
//! about the recovered declaration itself (a missing base, unknown names in
//! the part that parsed) and nothing about declarations that use it (an env
//! extending it, a `let` reading it, a call of it).

mod common;
use common::*;

/// `code line:column message` of each diagnostic `sclc check` gives for
/// `src` as one file, and the exit code.
fn check(src: &str) -> (Vec<String>, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.env.scl"), src).unwrap();
    let out = sclc(
        dir.path(),
        &["check", "m.env.scl", "--message-format", "json"],
    );
    let diags = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let d: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {}:{} {}",
                d["code"].as_str().unwrap_or(""),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    (diags, out.status.code())
}

const BASE: &str = "env base {\n  base = image(\"debian:12.5\")\n}\n";

#[test]
fn an_env_cut_off_in_its_parent_list_and_an_env_extending_it() {
    assert_eq!(
        check("env app extends {\n"),
        (vec!["E0006 1:18 unclosed `{`".to_string()], Some(1))
    );
    assert_eq!(
        check("env app extends base x\nenv b extends app {\n  description = \"b\"\n}\n"),
        (
            vec!["E0001 1:22 expected `,` or `{`, found `x`".to_string()],
            Some(1)
        )
    );
}

#[test]
fn a_template_with_a_broken_parameter_and_its_instance() {
    let src = format!(
        "{BASE}env t(a: Int, b: ) extends base {{\n  x = 1\n  y = \n}}\nenv u extends t(a = 1) {{\n  description = \"u\"\n}}\n"
    );
    assert_eq!(
        check(&src),
        (
            vec![
                "E0001 4:18 expected type, found `)`".to_string(),
                "E0001 6:5 missing value after `=`".to_string()
            ],
            Some(1)
        )
    );
}

#[test]
fn a_let_without_a_value_and_its_readers() {
    let src = format!(
        "let x =\nlet y = x + 1\n{}",
        "env app {\n  base = image(\"debian:12.5\")\n  description = \"${y}\"\n}\n"
    );
    assert_eq!(
        check(&src),
        (
            vec!["E0001 1:7 missing value after `=`".to_string()],
            Some(1)
        )
    );
}

#[test]
fn a_fn_without_a_return_type_and_its_callers() {
    let src = "fn f(a: Int) ->\nenv app {\n  base = image(\"debian:12.5\")\n  ports = [f(1)]\n}\n";
    assert_eq!(
        check(src),
        (
            vec!["E0001 2:1 expected type, found `env`".to_string()],
            Some(1)
        )
    );
}

#[test]
fn nothing_is_said_inside_a_recovered_declaration() {
    // `nope` is an unknown name, but the declaration around it is broken.
    assert_eq!(
        check("let x = nope 2\n"),
        (
            vec!["E0001 1:14 expected newline or end of file, found `2`".to_string()],
            Some(1)
        )
    );
}

#[test]
fn an_env_whose_body_parsed_but_whose_header_did_not_stops_its_children() {
    // `t`'s body is whole, but its parameter `b` has no type: `u` would be
    // checked against a template that is not what the user wrote.
    let src = format!(
        "{BASE}env t(a: Int, b: ) extends base {{\n  ports = [a]\n}}\nenv u extends t(a = 1) {{\n  description = \"u\"\n}}\n"
    );
    assert_eq!(
        check(&src),
        (
            vec!["E0001 4:18 expected type, found `)`".to_string()],
            Some(1)
        )
    );
    // Text after a whole env: the env is recovered, its child says nothing
    // (neither of them has a base).
    assert_eq!(
        check("env app {\n  description = \"a\"\n} x\nenv b extends app {\n  description = \"b\"\n}\n"),
        (
            vec!["E0001 3:3 expected newline or end of file, found `x`".to_string()],
            Some(1)
        )
    );
}
