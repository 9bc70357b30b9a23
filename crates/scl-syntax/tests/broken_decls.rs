//! Trees for broken code: a declaration with a syntax error is still in the
//! tree, with its name, its kind and every part that parsed, and its span is
//! in `Module::recovered`.
//!
//! The class test cuts every repository file at every character and checks
//! that every declaration whose header is complete in the cut text (`env
//! NAME`, `param NAME`, `let NAME`, `fn NAME`, `enum NAME`, `import "…" as
//! NAME`, followed by another token) is in the tree under that name with the
//! right kind. The headers are read from the token stream of the lexer, not
//! from the parser under test.

use scl_syntax::ast::{Decl, ExprKind, ItemKind, TypeExprKind};
use scl_syntax::{lex, parse, TokenKind};
use std::path::PathBuf;
mod common;

/// Every `.scl` file of examples/, stdlib/, tests/ and this crate's fixtures.
fn files() -> Vec<PathBuf> {
    let out: Vec<PathBuf> = common::scl_files(&[
        "examples",
        "stdlib",
        "tests",
        "crates/scl-syntax/tests/fixtures",
    ])
    .into_iter()
    .map(|f| common::root().join(f))
    .collect();
    assert!(out.len() > 100, "found only {} .scl files", out.len());
    out
}

/// The kind of a declaration, as its keyword.
fn kind(d: &Decl) -> &'static str {
    match d {
        Decl::Import(_) => "import",
        Decl::Param(_) => "param",
        Decl::Let(_) => "let",
        Decl::Enum(_) => "enum",
        Decl::Fn(_) => "fn",
        Decl::Env(_) => "env",
    }
}

/// `(keyword, name)` of every declaration whose header is complete in
/// `src`, from the tokens alone. A declaration starts at a declaration
/// keyword outside all brackets that is the first token, follows a newline
/// token (or a doc comment), or stands in column 1 (where the lexer closes
/// what is open: grammar/scl.ebnf). Its header is complete when its name is
/// followed by another token.
fn complete_headers(src: &str) -> Vec<(&'static str, String)> {
    let (tokens, _) = lex(src);
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        let kw = match t.kind {
            TokenKind::Import => Some("import"),
            TokenKind::Param => Some("param"),
            TokenKind::Let => Some("let"),
            TokenKind::Fn => Some("fn"),
            TokenKind::Env => Some("env"),
            TokenKind::Enum => Some("enum"),
            _ => None,
        };
        let starts_line = {
            let s = t.span.start as usize;
            s == 0 || src.as_bytes()[s - 1] == b'\n'
        };
        let after_separator = tokens[..i]
            .iter()
            .rev()
            .find(|p| !matches!(p.kind, TokenKind::DocComment(_)))
            .is_none_or(|p| p.kind == TokenKind::Newline);
        if let Some(kw) = kw {
            if depth == 0 && (after_separator || starts_line) {
                // The name's position: after `import STRING as`, else next.
                let name_at = if kw == "import" { i + 3 } else { i + 1 };
                let header_ok = kw != "import"
                    || (matches!(tokens.get(i + 1).map(|t| &t.kind), Some(TokenKind::Str(_)))
                        && tokens.get(i + 2).map(|t| &t.kind) == Some(&TokenKind::As));
                if let (true, Some(TokenKind::Ident(name)), Some(_)) = (
                    header_ok,
                    tokens.get(name_at).map(|t| &t.kind),
                    tokens.get(name_at + 1),
                ) {
                    out.push((kw, name.to_string()));
                }
            }
        }
        match t.kind {
            TokenKind::LParen
            | TokenKind::LBracket
            | TokenKind::LBrace
            | TokenKind::StrStart
            | TokenKind::InterpStart => depth += 1,
            TokenKind::RParen
            | TokenKind::RBracket
            | TokenKind::RBrace
            | TokenKind::StrEnd
            | TokenKind::InterpEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// Checks one text; returns a description of the first problem.
fn check(src: &str) -> Result<(), String> {
    let p = parse(src);
    let got: Vec<(&str, &str)> = p
        .module
        .decls
        .iter()
        .map(|d| (kind(d), d.name().name.as_str()))
        .collect();
    // Every complete header, in order (a subsequence of the tree's
    // declarations: a declaration cut right after its name may be there too).
    let mut rest = got.iter();
    for (kw, name) in complete_headers(src) {
        if !rest.any(|&(k, n)| k == kw && n == name) {
            return Err(format!(
                "`{kw} {name}` is missing from the tree: {got:?} (errors {:?})",
                p.errors.iter().map(|e| &e.message).collect::<Vec<_>>()
            ));
        }
    }
    // Recovered spans are the spans of declarations, in order, and only
    // with a syntax error.
    let spans: Vec<_> = p.module.decls.iter().map(|d| d.span()).collect();
    let mut at = spans.iter();
    for r in &p.module.recovered {
        if !at.any(|s| s == r) {
            return Err(format!("recovered span {r:?} is no declaration's span"));
        }
    }
    if !p.module.recovered.is_empty() && p.errors.is_empty() {
        return Err("recovered declarations without a syntax error".into());
    }
    Ok(())
}

#[test]
fn every_complete_header_of_every_prefix_is_in_the_tree() {
    let mut checked = 0usize;
    let mut headers = 0usize;
    for f in files() {
        let src = std::fs::read_to_string(&f).unwrap();
        for end in (0..=src.len()).filter(|&i| src.is_char_boundary(i)) {
            let cut = &src[..end];
            if let Err(e) = check(cut) {
                panic!("{} (prefix of {end} bytes): {e}\n{cut}", f.display());
            }
            checked += 1;
            headers += complete_headers(cut).len();
        }
    }
    assert!(checked > 10_000 && headers > 10_000, "{checked} {headers}");
}

#[test]
fn the_header_reader_sees_headers() {
    // The oracle itself: it must find what it is meant to find.
    assert_eq!(
        complete_headers("import \"a.env.scl\" as a\n/// d\nlet x = 1\nenv e extends {"),
        [
            ("import", "a".to_string()),
            ("let", "x".to_string()),
            ("env", "e".to_string())
        ]
    );
    assert_eq!(complete_headers("env e"), []);
    assert_eq!(
        complete_headers("env a {\n  let x = 1\n}"),
        [("env", "a".to_string())]
    );
    assert_eq!(
        complete_headers("env a {\nlet x = 1"),
        [("env", "a".to_string()), ("let", "x".to_string())]
    );
}

/// `(kind, name)` of the declarations and `(line:col message)` of the errors.
fn outline(src: &str) -> (Vec<String>, Vec<String>) {
    let p = parse(src);
    let idx = scl_diag::LineIndex::new(src);
    (
        p.module
            .decls
            .iter()
            .map(|d| format!("{} {}", kind(d), d.name().name))
            .collect(),
        p.errors
            .iter()
            .map(|d| {
                let (l, c) = idx.line_col(src, d.at.span.start as usize);
                format!("{} {l}:{c} {}", d.code, d.message)
            })
            .collect(),
    )
}

#[test]
fn an_env_whose_parent_list_is_cut_off() {
    let src = "env app extends {\n";
    let p = parse(src);
    insta::assert_debug_snapshot!(p.module);
    assert_eq!(
        outline(src).1,
        ["E0006 1:18 unclosed `{`"],
        "the parser's error is inside the unclosed region"
    );
    assert_eq!(p.module.recovered, [p.module.decls[0].span()]);
}

#[test]
fn a_template_with_a_broken_parameter_keeps_its_parents_and_items() {
    let src = "env t(a: Int, b: ) extends base {\n  x = 1\n  y = \n}\n";
    let p = parse(src);
    insta::assert_debug_snapshot!(p.module);
    let Decl::Env(t) = &p.module.decls[0] else {
        panic!("{:?}", p.module)
    };
    let params = t.params.as_ref().unwrap();
    assert_eq!(params.len(), 2);
    assert_eq!(params[1].name.name, "b");
    assert_eq!(params[1].ty.kind, TypeExprKind::Error);
    assert_eq!(t.extends.len(), 1);
    assert!(matches!(t.body.items[0].kind, ItemKind::Assign { .. }));
    assert_eq!(t.body.items[1].kind, ItemKind::Error);
    assert_eq!(
        outline(src).1,
        [
            "E0001 1:18 expected type, found `)`",
            // At the `=` that lacks its value, not at the `}` after it.
            "E0001 3:5 missing value after `=`"
        ]
    );
}

#[test]
fn a_let_without_a_value() {
    let src = "let x =";
    let p = parse(src);
    insta::assert_debug_snapshot!(p.module);
    let Decl::Let(x) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(x.value.kind, ExprKind::Error);
    assert_eq!(
        outline(src).1,
        ["E0001 1:8 expected expression, found end of file"]
    );
}

#[test]
fn a_fn_without_a_return_type() {
    let src = "fn f(a: Int) ->";
    let p = parse(src);
    insta::assert_debug_snapshot!(p.module);
    let Decl::Fn(f) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(f.params.len(), 1);
    assert_eq!(f.ret.as_ref().map(|t| &t.kind), Some(&TypeExprKind::Error));
    assert_eq!(f.body.kind, ExprKind::Error);
    assert_eq!(
        outline(src).1,
        ["E0001 1:16 expected type, found end of file"]
    );
}

#[test]
fn an_import_without_an_alias_has_no_name() {
    // Nothing to find it by: the tree has no import, the next declaration
    // (a declaration keyword in column 1) is still read.
    let src = "import \"x.env.scl\" as\nenv app {}\n";
    assert_eq!(
        outline(src),
        (
            vec!["env app".to_string()],
            vec!["E0001 2:1 expected identifier, found `env`".to_string()]
        )
    );
    insta::assert_debug_snapshot!(parse("import \"x.env.scl\" as").module);
}

#[test]
fn the_declaration_after_a_broken_one_is_read() {
    // No newline token between them (the lexer drops it after `+`): the
    // declaration keyword in column 1 ends the broken one.
    assert_eq!(
        outline("let x = 1 +\nenv b {}\n"),
        (
            vec!["let x".to_string(), "env b".to_string()],
            vec!["E0001 2:1 expected expression, found `env`".to_string()]
        )
    );
    let p = parse("let x = 1 +\nenv b {}\n");
    assert_eq!(p.module.recovered, [p.module.decls[0].span()]);
}

#[test]
fn each_kind_keeps_what_parsed() {
    for (src, decls, errors) in [
        (
            "enum Mode { a, b = 1, c }",
            "enum Mode",
            "E0001 1:18 expected newline, `,` or `}`, found `=`",
        ),
        (
            "param p: Int = ",
            "param p",
            // Just after the last token, not after the trailing space.
            "E0001 1:15 expected expression, found end of file",
        ),
        (
            "param p: ",
            "param p",
            "E0001 1:9 expected type, found end of file",
        ),
        (
            "env e(a: Int) extends b, c(1) x",
            "env e",
            "E0001 1:31 expected `,` or `{`, found `x`",
        ),
        (
            "let x = 1 2\nlet y = 2",
            "let x,let y",
            "E0001 1:11 expected newline or end of file, found `2`",
        ),
    ] {
        let (d, e) = outline(src);
        assert_eq!(
            (d.join(","), e.join("\n")),
            (decls.into(), errors.into()),
            "{src}"
        );
        assert_eq!(parse(src).module.recovered.len(), 1, "{src}");
    }
    let p = parse("enum Mode { a, b = 1, c }");
    let Decl::Enum(m) = &p.module.decls[0] else {
        panic!()
    };
    let names: Vec<_> = m.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let p = parse("env e(a: Int) extends b, c(1) x");
    let Decl::Env(e) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(e.extends.len(), 2);
    assert_eq!(e.params.as_ref().map(|p| p.len()), Some(1));
    assert_eq!(e.body.items.last().map(|i| &i.kind), Some(&ItemKind::Error));
}

#[test]
fn valid_modules_recover_nothing_and_item_errors_stay_in_their_item() {
    assert_eq!(
        parse("env a {\n  x = 1\n}\nlet y = 2\n").module.recovered,
        []
    );
    // An item error is recovered by the item: the env is whole.
    let p = parse("env a {\n  x = = 1\n  y = 2\n}\n");
    assert_eq!(p.errors.len(), 1);
    assert_eq!(p.module.recovered, []);
}
