//! Exact diagnostics for each syntax error code, and recovery.

use scl_diag::LineIndex;
use scl_syntax::{ast, parse};

/// `CODE line:col message` for every error.
fn errors(src: &str) -> Vec<String> {
    let idx = LineIndex::new(src);
    parse(src)
        .errors
        .iter()
        .map(|d| {
            assert!(d.at.file.is_empty());
            let (l, c) = idx.line_col(src, d.at.span.start as usize);
            format!("{} {l}:{c} {}", d.code, d.message)
        })
        .collect()
}

#[test]
fn e0001_unexpected_token() {
    assert_eq!(
        errors("env a {\n  base = = 5\n}\n"),
        ["E0001 2:10 expected expression, found `=`"]
    );
    assert_eq!(
        errors("enum E { a = 1 }\n"),
        ["E0001 1:12 expected newline, `,` or `}`, found `=`"]
    );
    assert_eq!(
        errors("env a {\n  x = f(1 2)\n}\n"),
        ["E0001 2:11 expected `,` or `)`, found `2`"]
    );
    assert_eq!(
        errors("env a {\n  x = 1)\n}\n"),
        ["E0001 2:8 unexpected `)`"]
    );
    assert_eq!(
        errors("x = 1\nenv a {}\n"),
        ["E0001 1:1 expected declaration, found `x`"]
    );
    assert_eq!(
        errors("env a {\n  if x > 1 foo { }\n}\n"),
        ["E0001 2:12 expected `{`, found `foo`"]
    );
    assert_eq!(
        errors("env a { if = 1 }\n"),
        ["E0001 1:12 expected expression, found `=`"]
    );
    assert_eq!(
        errors("env a {\n  x = f(a = 1, 2)\n}\n"),
        ["E0001 2:16 positional argument after a named argument"]
    );
    assert_eq!(
        errors("env a { x = 1 @ }\n"),
        ["E0001 1:15 unexpected character `@`"]
    );
    assert_eq!(
        errors("let x = 1 +\n"),
        ["E0001 1:12 expected expression, found end of file"]
    );
}

#[test]
fn e0002_unterminated_string() {
    let src = "env bad {\n  base = image(\"debian:12.5)\n  workdir = \"/w\"\n}\n";
    assert_eq!(errors(src), ["E0002 2:16 unterminated string"]);
    let p = parse(src);
    let ast::Decl::Env(env) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(env.body.items.len(), 2);
    assert_eq!(
        errors("let x = \"\"\"\nabc\n"),
        ["E0002 1:9 unterminated string"]
    );
}

#[test]
fn e0003_bad_interpolation() {
    assert_eq!(
        errors("let x = \"a${}b\"\n"),
        ["E0003 1:11 empty interpolation `${}`"]
    );
    assert_eq!(
        errors("let x = \"a${b\nlet y = 1\n"),
        ["E0003 1:11 unterminated interpolation: expected `}`"]
    );
}

#[test]
fn e0004_unknown_escape() {
    assert_eq!(
        errors("let x = \"a\\qb\"\n"),
        ["E0004 1:11 unknown escape `\\q`"]
    );
}

#[test]
fn e0005_bad_number() {
    assert_eq!(
        errors("env a { memory = 4GB }\n"),
        ["E0005 1:18 unknown quantity suffix `GB` in `4GB`"]
    );
    assert_eq!(
        errors("let x = 3e\n"),
        ["E0005 1:9 malformed exponent in `3e`"]
    );
    assert_eq!(
        errors("let x = 99999999999999999999\n"),
        ["E0005 1:9 integer literal is too large"]
    );
    let p = parse("env a { memory = 4GB }\n");
    assert_eq!(
        p.errors[0]
            .help
            .as_deref()
            .map(|h| h.starts_with("write `4Gi`")),
        Some(true)
    );
}

/// "found end of file" is reported just after the last token of code (as
/// rustc does), never on the empty line after the final line break nor
/// after trailing comments and blank lines; so is an unclosed bracket at the
/// end of the file (its label stays at the opener).
#[test]
fn end_of_file_errors_are_after_the_last_token() {
    for (src, want) in [
        (
            "env app extends base,\n",
            "E0001 1:22 expected expression, found end of file",
        ),
        (
            "let x =\n",
            "E0001 1:8 expected expression, found end of file",
        ),
        (
            "let x =",
            "E0001 1:8 expected expression, found end of file",
        ),
        (
            "let x =   \n\n",
            "E0001 1:8 expected expression, found end of file",
        ),
        (
            "let x = // the value\n\n// more\n\n",
            "E0001 1:8 expected expression, found end of file",
        ),
        (
            "/// doc\nparam p: Int =\n/// dangling doc\n",
            "E0001 2:15 expected expression, found end of file",
        ),
        ("env a {\n  x = 1\n\n\n", "E0006 2:8 unclosed `{`"),
        ("env a {\n  x = 1\n  // c\n\n", "E0006 2:8 unclosed `{`"),
        ("env a {\n\n", "E0006 1:8 unclosed `{`"),
        ("let x = [1,\n\n", "E0006 1:12 unclosed `[`"),
        (
            "// only a comment\nenv\n",
            "E0001 2:4 expected identifier, found end of file",
        ),
    ] {
        assert_eq!(errors(src), [want], "{src:?}");
    }
    let src = "env a {\n  x = 1\n\n\n";
    let p = parse(src);
    assert_eq!(p.errors[0].at.span.start, p.errors[0].at.span.end);
    assert_eq!(&src[p.errors[0].labels[0].at.span.range()], "{");
}

/// A value missing at the end of a line: the line break after `=` continues
/// the line, so the next line would be read as the value. The error is at
/// the `=` of the line that lacks it, and the next line is kept.
#[test]
fn a_missing_value_is_reported_at_its_operator() {
    let src =
        "env a {\n  base = image(\"debian:12.5\")\n  system.packages =\n  command = [\"a\"]\n}\n";
    assert_eq!(errors(src), ["E0001 3:19 missing value after `=`"]);
    let p = parse(src);
    let ast::Decl::Env(e) = &p.module.decls[0] else {
        panic!()
    };
    let kinds: Vec<_> = e
        .body
        .items
        .iter()
        .map(|i| match &i.kind {
            ast::ItemKind::Assign { path, .. } => path.segments[0].name.to_string(),
            ast::ItemKind::Error => "error".into(),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["base", "error", "command"],
        "the next line is read as an item"
    );
    assert!(p.errors[0].help.as_deref().unwrap().contains("same line"));
    for (src, want) in [
        (
            "env a {\n  x +=\n  y.z -= 1\n}\n",
            "E0001 2:5 missing value after `+=`",
        ),
        (
            "env a {\n  x = // to do\n  y = 1\n}\n",
            "E0001 2:5 missing value after `=`",
        ),
        ("env a {\n  x =\n}\n", "E0001 2:5 missing value after `=`"),
        (
            "env a {\n  x -=\n  \"a b\".c = 1\n}\n",
            "E0001 2:5 missing value after `-=`",
        ),
        ("let x =\nenv a {}\n", "E0001 1:7 missing value after `=`"),
        ("let x =\n  env a {}\n", "E0001 1:7 missing value after `=`"),
        (
            "param p: Int =\nlet y = 1\n",
            "E0001 1:14 missing value after `=`",
        ),
        (
            "param p: Int = 1 where\nlet y = 1\n",
            "E0001 1:18 missing value after `where`",
        ),
        ("fn f() =\nlet y = 1\n", "E0001 1:8 missing value after `=`"),
    ] {
        assert_eq!(errors(src), [want], "{src:?}");
    }
    // The declaration after the one that lacks a value is kept, also when
    // it does not start in column 1.
    let p = parse("let x =\n  env a {}\n");
    assert_eq!(p.module.decls.len(), 2);
    // A value on the next line is fine when it is a value.
    assert_eq!(
        errors("env a {\n  x =\n    1\n  y =\n    z.w\n}\n"),
        Vec::<String>::new()
    );
}

/// `/* */` is not a comment in SCL; where it is met, the error says so.
#[test]
fn block_comments_get_a_help() {
    for (src, want) in [
        (
            "env a {\n  command = [\"bash\", /* no */ \"-lc\"]\n}\n",
            "E0001 2:22 expected expression, found `/`",
        ),
        (
            "env a {\n  x = 1 /* no */\n}\n",
            "E0001 2:10 expected expression, found `*`",
        ),
        (
            "/* header */\nenv a {}\n",
            "E0001 1:1 expected declaration, found `/`",
        ),
    ] {
        let p = parse(src);
        assert_eq!(errors(src), [want], "{src:?}");
        assert_eq!(
            p.errors[0].help.as_deref(),
            Some("`/* */` comments are not supported in SCL; use `//` to the end of the line"),
            "{src:?}"
        );
    }
    // A division by a product is not a comment.
    let p = parse("let x = 1 / (2 * 3) +\n");
    assert!(p.errors[0].help.is_none());
}

#[test]
fn e0006_unclosed_delimiter() {
    let src = "env a {\n  base = image(\"x\"\n  k = 2\n}\n";
    assert_eq!(errors(src), ["E0006 4:1 unclosed `(`"]);
    let p = parse(src);
    let label = &p.errors[0].labels[0];
    assert_eq!(&src[label.at.span.range()], "(");
    // A declaration at the start of a line closes what is still open.
    let src = "env a {\n  base = image(\"x\")\nenv b { x = 1 }\n";
    assert_eq!(errors(src), ["E0006 3:1 unclosed `{`"]);
    let p = parse(src);
    assert_eq!(p.module.decls.len(), 2);
    assert_eq!(p.module.decls[1].name().name, "b");
    assert_eq!(errors("let x = [1, 2"), ["E0006 1:14 unclosed `[`"]);
}

#[test]
fn two_typos_two_errors() {
    let src = r#"env a {
  base = image("debian:12.5")
  python.packages = ["x" "y"]
  workdir = "/w"
}

env b extends a {
  resources.requests { memory = = 4Gi }
  description = "still here"
}

env c extends b {
  command = ["python"]
}
"#;
    let errs = errors(src);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].starts_with("E0001 3:"), "{errs:#?}");
    assert!(errs[1].starts_with("E0001 8:"), "{errs:#?}");
    let p = parse(src);
    let names: Vec<_> = p
        .module
        .decls
        .iter()
        .map(|d| d.name().name.clone())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let ast::Decl::Env(a) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(a.body.items.len(), 3, "items around the typo survive");
    let ast::Decl::Env(b) = &p.module.decls[1] else {
        panic!()
    };
    assert_eq!(b.body.items.len(), 2);
    let ast::Decl::Env(c) = &p.module.decls[2] else {
        panic!()
    };
    assert_eq!(c.extends.len(), 1);
    assert!(!matches!(c.body.items[0].kind, ast::ItemKind::Error));
}

#[test]
fn missing_separator_is_one_error() {
    let errs = errors("env a {\n  x = 1 y = 2\n  z = 3\n}\nenv b {}\n");
    assert_eq!(errs, ["E0001 2:9 expected newline, `,` or `}`, found `y`"]);
}

#[test]
fn garbage_does_not_panic() {
    for src in [
        "",
        "\n\n",
        "}",
        ")))",
        "{{{",
        "\"",
        "\"\"\"",
        "\"${",
        "\"${\"${",
        "env",
        "env a",
        "env a extends",
        "env a(",
        "fn f(",
        "param x:",
        "let = ",
        ".",
        "..",
        "1..2",
        "é",
        "\u{0}",
        "env a { x = \"\\",
        "x\r\ny",
        "3e+",
        "0x10",
        "let x = [for]",
        "let x = [for x in]",
        "env a { if }",
        "env a { if x {} else }",
        "let x = a with",
        "env a { \"unterminated = 1 }",
        "let x = \"${\"\"\"}\"",
        "let x = \"\"\"${\n\"\"\"",
    ] {
        let _ = parse(src);
    }
    // Arbitrary bytes, as lossy UTF-8.
    let mut seed = 0x2545F4914F6CDD1Du64;
    for _ in 0..2000 {
        let len = (seed % 64) as usize;
        let mut bytes = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let pick = b"env{}()[]\"$\\=+-.,:\n xa1G\xc3\xa9/*!<>&|?";
            bytes.push(pick[(seed % pick.len() as u64) as usize]);
        }
        let src = String::from_utf8_lossy(&bytes);
        let _ = parse(&src);
    }
}

#[test]
fn newline_rules() {
    let src = r#"env a extends b,
  c {
  if x {
    y = 1
  }
  else if z {
    y = 2
  }
  else {
    y = 3
  }
  z = if c
    then 1
    else 2
  w = 1 + // a comment
    2
  v = base
    with { a = 1 }
  list = [
    "a",
    "b",
  ]
  call = f(
    1,
    at = 2,
  )
  rec = {
    a = 1

    b = 2,
  }
}
"#;
    assert_eq!(errors(src), Vec::<String>::new());
    let p = parse(src);
    let ast::Decl::Env(env) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(env.extends.len(), 2);
    assert_eq!(env.body.items.len(), 7);
    let ast::ItemKind::Assign { value, .. } = &env.body.items[6].kind else {
        panic!()
    };
    let ast::ExprKind::Record(b) = &value.kind else {
        panic!()
    };
    assert_eq!(b.items.len(), 2);
}

#[test]
fn keywords_are_not_field_names() {
    let p = parse("env a {\n  in = 1\n  from = 2\n  type = 3\n}\n");
    assert_eq!(p.errors.len(), 1);
    assert_eq!(
        p.errors[0].help.as_deref(),
        Some("keywords cannot be field names")
    );
}

/// The parser stops at the same count as the lexer (`E0011`, the lexer's
/// errors included): a file of 2,000 broken lines gives 1,000 errors and
/// says where it stopped reading; the declarations before that point are
/// in the tree, the last one covering the rest of the file.
#[test]
fn e0011_the_parser_stops_after_1000_errors() {
    for line in ["let x =\n", "let = 1\n", "env a extends b c\n"] {
        let src = line.repeat(2000);
        let e = errors(&src);
        assert_eq!(e.len(), 1001, "{line:?}");
        assert!(
            e[1000].starts_with("E0011 ")
                && e[1000]
                    .ends_with(" more than 1000 syntax errors: the rest of the file is not read"),
            "{line:?}: {}",
            e[1000]
        );
        assert!(
            e[..1000].iter().all(|e| e.starts_with("E0001 ")),
            "{line:?}"
        );
        let p = parse(&src);
        assert!(p.module.decls.len() <= 1001, "{line:?}");
        if let Some(last) = p.module.decls.last() {
            assert_eq!(last.span().end as usize, src.trim_end().len(), "{line:?}");
        }
    }
    // The lexer's errors count: 600 of them and 600 broken lines.
    let src = format!("{}{}", "let a = 1 @\n".repeat(600), "let x =\n".repeat(600));
    let e = errors(&src);
    assert_eq!(e.len(), 1001);
    assert!(e[1000].starts_with("E0011 "), "{}", e[1000]);
    // When the lexer stopped reading, the parser adds nothing.
    let src = "@\n".repeat(1100);
    let e = errors(&src);
    assert_eq!(e.iter().filter(|e| e.starts_with("E0011")).count(), 1);
    assert_eq!(e.len(), 1001);
}

/// Broken elements in a row are one Error node: a line of 100,000 empty
/// arguments, list elements or items is one node, not 100,000.
#[test]
fn broken_elements_in_a_row_are_one_error_node() {
    let value = |src: &str| match &parse(src).module.decls[0] {
        ast::Decl::Let(l) => l.value.clone(),
        d => panic!("{d:?}"),
    };
    let commas = ",".repeat(100_000);
    let e = value(&format!("let x = f(a{commas}b)\n"));
    let ast::ExprKind::Postfix { ops, .. } = &e.kind else {
        panic!("{e:?}")
    };
    let ast::PostOpKind::Call(args) = &ops[0].kind else {
        panic!("{ops:?}")
    };
    assert_eq!(args.len(), 3);
    assert_eq!(args[1].value.kind, ast::ExprKind::Error);
    let e = value(&format!("let x = [a{commas}b]\n"));
    let ast::ExprKind::List(items) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].kind, ast::ExprKind::Error);
    let p = parse(&format!(
        "env a {{ x = 1, {} y = 2 }}\n",
        "z = =, ".repeat(100_000)
    ));
    let ast::Decl::Env(env) = &p.module.decls[0] else {
        panic!()
    };
    let kinds: Vec<_> = env
        .body
        .items
        .iter()
        .map(|i| matches!(i.kind, ast::ItemKind::Error))
        .collect();
    assert_eq!(kinds, [false, true, false]);
    assert_eq!(p.errors.len(), 1);
}
