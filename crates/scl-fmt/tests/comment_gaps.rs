//! A comment in any gap between two tokens stays in that gap.
//!
//! For the hand-written cases (`tests/cases/*.scl`, every construct) and the
//! repository's examples, a comment is put into every gap
//! between two tokens, in three ways (`x// c⏎y`, `x ⏎// c⏎y`, `x // c⏎y`).
//! For each variant that parses without errors, the formatter must give a
//! text with (a) the same tree and comments ([`scl_fmt::verify`]), (b) the
//! comment after as many tokens as before (commas aside, which the layout
//! adds and removes) — in the same gap, not moved into the next item or
//! past a bracket — and still on a line of its own or at the end of one,
//! and (c) a fixed point, where (d) a line broken by the comment in the
//! middle of a declaration or item continues indented deeper than the line
//! the declaration or item starts on ([`unindented_continuations`]). A
//! variant with an error is the parser's business, not the formatter's.

use scl_syntax::ast::*;
use scl_syntax::PieceKind;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// For each comment: how many tokens (`,` aside) come before it, whether
/// it is on a line of its own, and its text.
fn gaps(src: &str) -> Vec<(usize, bool, String)> {
    let p = scl_syntax::parse(src);
    let mut n = 0;
    let mut own_line = true;
    let mut out = Vec::new();
    for pc in &p.trivia.pieces {
        let t = &src[pc.span.range()];
        match pc.kind {
            PieceKind::Whitespace => continue,
            PieceKind::Newline => {
                own_line = true;
                continue;
            }
            PieceKind::Comment | PieceKind::DocComment => {
                out.push((n, own_line, t.trim_end().to_string()))
            }
            _ if t == "," => continue,
            _ => n += 1,
        }
        own_line = false;
    }
    out
}

/// Where a token ends, for every token of `src`.
fn token_ends(src: &str) -> Vec<usize> {
    scl_syntax::parse(src)
        .trivia
        .pieces
        .iter()
        .filter(|p| {
            !matches!(
                p.kind,
                PieceKind::Whitespace
                    | PieceKind::Newline
                    | PieceKind::Comment
                    | PieceKind::DocComment
            )
        })
        .map(|p| p.span.end as usize)
        .collect()
}

fn files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = repo();
    for d in ["crates/scl-fmt/tests/cases"] {
        let mut stack = vec![root.join(d)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(".scl") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The spans of every declaration and item (in env bodies, nested and
/// `if` blocks, records and `with` blocks) of a module.
fn statements(m: &Module) -> Vec<(u32, u32)> {
    fn block(b: &Block, out: &mut Vec<(u32, u32)>) {
        for it in b.items.iter() {
            out.push((it.span.start, it.span.end));
            match &it.kind {
                ItemKind::Assign { value, .. } => expr(value, out),
                ItemKind::Nested { body, .. } => block(body, out),
                ItemKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    expr(cond, out);
                    block(then_block, out);
                    if let Some(e) = else_block {
                        block(e, out);
                    }
                }
                ItemKind::Error => {}
            }
        }
    }
    fn expr(e: &Expr, out: &mut Vec<(u32, u32)>) {
        match &e.kind {
            ExprKind::List(xs) => xs.iter().for_each(|x| expr(x, out)),
            ExprKind::Comprehension(c) => {
                let Comprehension {
                    iter, cond, body, ..
                } = &**c;
                expr(iter, out);
                if let Some(c) = cond {
                    expr(c, out);
                }
                expr(body, out);
            }
            ExprKind::Record(b) => block(b, out),
            ExprKind::Postfix { base, ops } => {
                expr(base, out);
                for op in ops {
                    match &op.kind {
                        PostOpKind::Call(args) => args.iter().for_each(|a| expr(&a.value, out)),
                        PostOpKind::Index(i) => expr(i, out),
                        PostOpKind::With(b) => block(b, out),
                        PostOpKind::Field(_) => {}
                    }
                }
            }
            ExprKind::Unary { operand, .. } => expr(operand, out),
            ExprKind::Binary { first, rest } => {
                expr(first, out);
                rest.iter().for_each(|(_, x)| expr(x, out));
            }
            ExprKind::If(a, b, c) => [a, b, c].iter().for_each(|x| expr(x, out)),
            _ => {}
        }
    }
    fn params(ps: &[ParamSig], out: &mut Vec<(u32, u32)>) {
        ps.iter()
            .filter_map(|p| p.default.as_ref())
            .for_each(|d| expr(d, out));
    }
    let mut out = Vec::new();
    for d in &m.decls {
        out.push((d.span().start, d.span().end));
        match d {
            Decl::Param(p) => {
                expr(&p.default, &mut out);
                if let Some(w) = &p.where_ {
                    expr(w, &mut out);
                }
            }
            Decl::Let(l) => expr(&l.value, &mut out),
            Decl::Fn(f) => {
                params(&f.params, &mut out);
                expr(&f.body, &mut out);
            }
            Decl::Env(e) => {
                params(e.params.as_deref().unwrap_or(&[]), &mut out);
                e.extends.iter().for_each(|x| expr(x, &mut out));
                block(&e.body, &mut out);
            }
            Decl::Import(_) | Decl::Enum(_) => {}
        }
    }
    out
}

/// The lines of a formatted text that continue a declaration or an item
/// (they start inside it, with a token or a comment that is not a closing
/// bracket or `else`, and not inside a `"""` string) but are not indented
/// deeper than the line it starts on: `param n: Int = // c` then `1` at
/// the start of a line.
fn unindented_continuations(out: &str) -> Vec<String> {
    let parse = scl_syntax::parse(out);
    let toks: Vec<(u32, u32, &str, PieceKind)> = parse
        .trivia
        .pieces
        .iter()
        .filter(|p| !matches!(p.kind, PieceKind::Whitespace | PieceKind::Newline))
        .map(|p| (p.span.start, p.span.end, &out[p.span.range()], p.kind))
        .collect();
    let indent_at = |pos: usize| {
        let ls = out[..pos].rfind('\n').map_or(0, |i| i + 1);
        out[ls..].len() - out[ls..].trim_start_matches(' ').len()
    };
    // Each statement from its first token (not a doc comment before it).
    let stmts: Vec<(u32, u32, usize)> = statements(&parse.module)
        .into_iter()
        .filter_map(|(s, e)| {
            let t = toks
                .iter()
                .find(|t| t.0 >= s && !matches!(t.3, PieceKind::Comment | PieceKind::DocComment))?;
            Some((t.0, e, indent_at(t.0 as usize)))
        })
        .collect();
    let mut bad = Vec::new();
    let mut at = 0usize;
    for line in out.split_inclusive('\n') {
        let start = at + (line.len() - line.trim_start_matches(' ').len());
        at += line.len();
        if line.trim().is_empty() {
            continue;
        }
        let Some(first) = toks.iter().find(|t| t.1 as usize > start) else {
            continue;
        };
        // Inside a `"""` string; a bracket, `else` or `if` of `else if`
        // (or the comments before one) at its statement's level.
        let next_token = toks
            .iter()
            .find(|t| {
                t.1 as usize > start && !matches!(t.3, PieceKind::Comment | PieceKind::DocComment)
            })
            .map_or("", |t| t.2);
        let after_else = toks
            .iter()
            .rposition(|t| {
                (t.1 as usize) <= start
                    && !matches!(t.3, PieceKind::Comment | PieceKind::DocComment)
            })
            .is_some_and(|i| toks[i].2 == "else");
        if (first.0 as usize) < start
            || next_token.starts_with(['}', ']', ')', '{'])
            || next_token == "else"
            || (next_token == "if" && after_else)
        {
            continue;
        }
        let inner = stmts
            .iter()
            .filter(|s| (s.0 as usize) < start && start < s.1 as usize)
            .min_by_key(|s| s.1 - s.0);
        if let Some(&(_, _, ind)) = inner {
            if indent_at(start) <= ind {
                bad.push(line.trim_end().to_string());
            }
        }
    }
    bad
}

#[test]
fn a_line_broken_by_a_comment_continues_indented() {
    let cases = [
        "param n: Int = // c3\n  1 where n >= 0\n",
        "param n: Int = 1 where n >= // c5\n1 // c6\n",
        "fn f(a: Int) -> Int = a + // c13\n1\n",
        "let x = f(1\n) + // c24\n2\n",
        "let x =\n// own line\n1\n",
        "param n: // c\nInt = 1\n",
        "env e {\n  a = // c\n  [1]\n  b = {\n    c = // d\n    1\n  }\n}\n",
    ];
    for src in cases {
        let out = scl_fmt::format(src).unwrap();
        scl_fmt::verify(src, &out).unwrap();
        assert_eq!(
            unindented_continuations(&out),
            Vec::<String>::new(),
            "{out}"
        );
    }
    // The check itself sees an unindented continuation.
    assert_eq!(
        unindented_continuations("param n: Int = // c3\n1 where n >= 0\n"),
        ["1 where n >= 0"]
    );
}

#[test]
fn a_comment_in_any_token_gap_stays_in_that_gap() {
    let mut tried = 0;
    let mut failures = Vec::new();
    for f in files() {
        let src = std::fs::read_to_string(&f).unwrap();
        if !scl_syntax::parse(&src).errors.is_empty() {
            continue;
        }
        for (k, g) in token_ends(&src).into_iter().enumerate() {
            for ins in [
                format!("// c{k}\n"),
                format!("\n// c{k}\n"),
                format!(" // c{k}\n"),
            ] {
                let v = format!("{}{ins}{}", &src[..g], &src[g..]);
                let Ok(out) = scl_fmt::format(&v) else {
                    continue;
                };
                tried += 1;
                let why = if let Err(e) = scl_fmt::verify(&v, &out) {
                    e
                } else if gaps(&v) != gaps(&out) {
                    "the comment is in another gap".into()
                } else if scl_fmt::format(&out).as_ref() != Ok(&out) {
                    "not idempotent".into()
                } else if let Some(l) = unindented_continuations(&out).first() {
                    format!("the line `{l}` continues a declaration or item unindented")
                } else {
                    continue;
                };
                if failures.len() < 20 {
                    let line = v[..g].lines().last().unwrap_or("");
                    failures.push(format!(
                        "{}, after `{line}`: {why}\n--- formatted:\n{out}",
                        f.display()
                    ));
                } else {
                    failures.push(String::new());
                }
            }
        }
    }
    assert!(tried > 1500, "only {tried} variants parsed");
    assert!(
        failures.is_empty(),
        "{} of {tried} variants failed; the first:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// `verify` refuses a text whose comment went into another gap, even with
/// the same tree and the same comment texts.
#[test]
fn verify_refuses_a_comment_moved_to_another_gap() {
    let src = "let a = [\n  1 // one\n  , 2\n]\n";
    // Same gap: the comma moved, the comment is still after `1`.
    assert_eq!(
        scl_fmt::verify(src, "let a = [\n  1, // one\n  2,\n]\n"),
        Ok(())
    );
    // Another gap: after `2`.
    let e = scl_fmt::verify(src, "let a = [\n  1,\n  2, // one\n]\n").unwrap_err();
    assert!(e.contains("moved"), "{e}");
    // Another item.
    let e = scl_fmt::verify(
        "let a = 1 // a\nlet b = 2\n",
        "let a = 1\n// a\nlet b = 2\n",
    )
    .unwrap_err();
    assert!(e.contains("moved"), "{e}");
}
