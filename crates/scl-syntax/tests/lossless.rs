//! Every byte of a file is in exactly one piece of the trivia table, for
//! every file of the repository (examples, stdlib, tests) and every prefix of
//! each: the pieces tile the file, each piece's text is what its kind says,
//! and the text rebuilt from them is the file, byte for byte.

use scl_syntax::{parse, PieceKind};
use std::path::PathBuf;

mod common;

fn files() -> Vec<PathBuf> {
    let out: Vec<PathBuf> = common::scl_files(&["examples", "stdlib", "tests", "crates"])
        .into_iter()
        .map(|f| common::root().join(f))
        .collect();
    assert!(out.len() > 50, "found only {} .scl files", out.len());
    out
}

/// Checks one text; returns a description of the first problem.
fn check(src: &str) -> Result<(), String> {
    let p = parse(src);
    let mut pos = 0u32;
    for piece in &p.trivia.pieces {
        if piece.span.start != pos {
            return Err(format!("gap or overlap at {pos}: next piece {piece:?}"));
        }
        if piece.span.end <= piece.span.start {
            return Err(format!("empty piece {piece:?}"));
        }
        let text = &src[piece.span.start as usize..piece.span.end as usize];
        let ok = match piece.kind {
            PieceKind::Whitespace => text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')),
            PieceKind::Newline => text == "\n",
            PieceKind::Comment => text.starts_with("//") && !text.contains('\n'),
            PieceKind::DocComment => {
                text.starts_with("///") && !text.starts_with("////") && !text.contains('\n')
            }
            PieceKind::Keyword => scl_syntax::is_keyword(text),
            PieceKind::Ident => {
                !scl_syntax::is_keyword(text)
                    && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && !text.as_bytes()[0].is_ascii_digit()
            }
            PieceKind::Number => text.as_bytes()[0].is_ascii_digit(),
            PieceKind::Str => true,
            PieceKind::Interp => text == "${" || text == "}",
            PieceKind::Punct => {
                !text.is_empty() && text.len() <= 2 && !text.contains(char::is_whitespace)
            }
            PieceKind::Skipped => !p.errors.is_empty(),
        };
        if !ok {
            return Err(format!("piece {piece:?} has text {text:?}"));
        }
        pos = piece.span.end;
    }
    if pos as usize != src.len() {
        return Err(format!("pieces end at {pos}, the file at {}", src.len()));
    }
    if p.trivia.rebuild(src) != src {
        return Err("rebuilt text differs".into());
    }
    // The two halves on their own (what the compiler's database keeps, and
    // what it makes when an editor asks) are the halves of `parse`.
    let tree = scl_syntax::parse_tree(src);
    if tree.module != p.module || tree.errors != p.errors {
        return Err("parse_tree differs from parse".into());
    }
    if scl_syntax::trivia::of(src) != *p.trivia {
        return Err("trivia::of differs from parse's table".into());
    }
    Ok(())
}

#[test]
fn every_file_and_every_prefix_is_rebuilt_byte_for_byte() {
    let mut checked = 0usize;
    for f in files() {
        let src = std::fs::read_to_string(&f).unwrap();
        let ends: Vec<usize> = (0..=src.len())
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        for &end in &ends {
            if let Err(e) = check(&src[..end]) {
                panic!("{} (prefix of {end} bytes): {e}", f.display());
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000);
}

#[test]
fn comments_blank_lines_and_raw_literals_are_pieces() {
    let src = "// head\n\n/// doc\nenv a {\n  x = \"a\\tb ${1_000}\" // tail\n  s = \"\"\"\n    hi\n    \"\"\"\n}\n";
    let p = parse(src);
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    let kinds: Vec<(PieceKind, &str)> = p
        .trivia
        .pieces
        .iter()
        .map(|x| (x.kind, &src[x.span.start as usize..x.span.end as usize]))
        .collect();
    use PieceKind::*;
    assert_eq!(
        kinds,
        vec![
            (Comment, "// head"),
            (Newline, "\n"),
            (Newline, "\n"),
            (DocComment, "/// doc"),
            (Newline, "\n"),
            (Keyword, "env"),
            (Whitespace, " "),
            (Ident, "a"),
            (Whitespace, " "),
            (Punct, "{"),
            (Newline, "\n"),
            (Whitespace, "  "),
            (Ident, "x"),
            (Whitespace, " "),
            (Punct, "="),
            (Whitespace, " "),
            (Str, "\"a\\tb "),
            (Interp, "${"),
            (Number, "1_000"),
            (Interp, "}"),
            (Str, "\""),
            (Whitespace, " "),
            (Comment, "// tail"),
            (Newline, "\n"),
            (Whitespace, "  "),
            (Ident, "s"),
            (Whitespace, " "),
            (Punct, "="),
            (Whitespace, " "),
            (Str, "\"\"\"\n    hi\n    \"\"\""),
            (Newline, "\n"),
            (Punct, "}"),
            (Newline, "\n"),
        ]
    );
    assert_eq!(p.trivia.comments().count(), 3);
}

#[test]
fn broken_text_is_still_tiled() {
    for src in [
        "env a { x = @ }",
        "env a { s = \"abc",
        ")))",
        "x = \"${",
        "env a {\n  s = \"\"\"\n  x ${y",
    ] {
        check(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    }
}
