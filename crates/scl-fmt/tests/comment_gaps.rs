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
//! and (c) a fixed point. A variant with an error is the
//! parser's business, not the formatter's.

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
