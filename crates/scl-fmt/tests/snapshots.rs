//! The formatted text of hand-written inputs covering every construct and
//! comments in every position (`tests/cases/*.scl`), as insta snapshots;
//! each output must also mean what its input means and be a fixed point.

#[test]
fn formatted_cases() {
    insta::glob!("cases/*.scl", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let out = scl_fmt::format(&src).expect("the case parses");
        scl_fmt::verify(&src, &out).unwrap();
        assert_eq!(scl_fmt::format(&out).unwrap(), out, "not idempotent");
        assert_eq!(minus_minus(&out), None, "`--` in the output");
        insta::assert_snapshot!(out);
    });
}

/// Where two `-` tokens touch (`--x`, which reads as another operator).
fn minus_minus(out: &str) -> Option<usize> {
    let p = scl_syntax::parse(out);
    p.trivia
        .pieces
        .windows(2)
        .find(|w| {
            &out[w[0].span.range()] == "-"
                && &out[w[1].span.range()] == "-"
                && w[0].span.end == w[1].span.start
        })
        .map(|w| w[0].span.start as usize)
}

/// Two prefix minus signs keep a space between them, however many there
/// are and whatever follows; `!` and `-` mixes stay as they are.
#[test]
fn two_minus_signs_never_touch() {
    for (src, want) in [
        ("let a = - -1\n", "let a = - -1\n"),
        ("let a = --1\n", "let a = - -1\n"),
        ("let a = - - -x\n", "let a = - - -x\n"),
        ("let a = -!-x\n", "let a = -!-x\n"),
        ("let a = !!x\n", "let a = !!x\n"),
        ("let a = b - -c\n", "let a = b - -c\n"),
        ("let a = - // c\n-1\n", "let a = - // c\n  -1\n"),
    ] {
        let out = scl_fmt::format(src).unwrap();
        scl_fmt::verify(src, &out).unwrap();
        assert_eq!(out, want, "{src:?}");
        assert_eq!(minus_minus(&out), None, "{out}");
    }
}

#[test]
fn a_file_with_a_syntax_error_is_not_formatted() {
    let errs = scl_fmt::format("env a {\n  x = \n").unwrap_err();
    assert!(!errs.is_empty());
    assert!(errs.iter().all(|d| d.code.starts_with("E000")), "{errs:?}");
}

#[test]
fn an_empty_file_stays_empty_and_one_newline_ends_a_file() {
    assert_eq!(scl_fmt::format("").unwrap(), "");
    assert_eq!(scl_fmt::format("\n\n  \n").unwrap(), "");
    assert_eq!(scl_fmt::format("let a = 1\n\n\n").unwrap(), "let a = 1\n");
    assert_eq!(scl_fmt::format("let a = 1").unwrap(), "let a = 1\n");
    assert_eq!(scl_fmt::format("// only\n").unwrap(), "// only\n");
}

/// A `"""` string's value depends on the columns of its lines and of its
/// closing quotes: re-indenting the item around it must not change them.
#[test]
fn triple_quoted_strings_keep_their_value_when_the_item_moves() {
    let src = "env e {\n        x = \"\"\"\n      one\n        two\n      \"\"\"\n          y = \"\"\"a\n  b\"\"\"\n}\n";
    let out = scl_fmt::format(src).unwrap();
    scl_fmt::verify(src, &out).unwrap();
    assert!(
        out.contains("  x = \"\"\"\n      one\n        two\n      \"\"\"\n"),
        "{out}"
    );
}

/// Parentheses the user wrote stay (they can change the meaning), however
/// deep and wherever the expression stands.
#[test]
fn parentheses_are_kept() {
    let src = "let a = (1 + 2) * 3\nlet b = -(1 - 2)\nlet c = ((f))(1).x\nlet d = (1 - (2 - 3))\nlet e = [(1), (if true then 1 else 2) + 1]\n";
    let out = scl_fmt::format(src).unwrap();
    assert_eq!(out, src);
}

/// CRLF line ends and trailing blanks go; comments keep their text.
#[test]
fn crlf_and_trailing_blanks() {
    let src = "let a = 1   // c  \r\nlet b = 2\r\n";
    assert_eq!(scl_fmt::format(src).unwrap(), "let a = 1 // c\nlet b = 2\n");
}

/// A file written with `\r\n` comes out with `\n` only, also inside `"""`
/// strings and the interpolations in them (the lexer reads `\r\n` there as
/// `\n`, so the values are the same).
#[test]
fn crlf_inside_triple_quoted_strings_becomes_lf() {
    let src =
        "env e {\r\n  x = \"\"\"\r\n    one\r\n    ${ 1 +\r\n      2 }\r\n    \"\"\"\r\n}\r\n";
    let out = scl_fmt::format(src).unwrap();
    assert!(!out.contains('\r'), "{out:?}");
    assert_eq!(
        out,
        "env e {\n  x = \"\"\"\n    one\n    ${ 1 +\n      2 }\n    \"\"\"\n}\n"
    );
    scl_fmt::verify(src, &out).unwrap();
}
