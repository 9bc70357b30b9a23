//! The lossless side of the syntax: every byte of a file in exactly one
//! [`Piece`], in order.
//!
//! SCL keeps the AST the evaluator reads (chosen for the evaluator's sake:
//! flat chains, no trivia) and adds this table beside it, the pattern of
//! Gleam's `ModuleExtra` and ruff's comment ranges: the tokens say where the
//! code is, and the pieces between them say what every other byte is —
//! spaces, line breaks, `//` comments, `///` doc comments, the raw text of
//! string literals (escapes and `"""` indentation as written) and bytes the
//! lexer skipped with an error. The formatter reads comments and blank lines
//! from here and literals' raw text by their spans; a test rebuilds every
//! file byte for byte from the pieces.

use crate::lexer::{Token, TokenKind};
use scl_diag::Span;

/// What one piece of text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// Spaces, tabs and carriage returns (a run of them).
    Whitespace,
    /// One `\n` (significant or not: that is the parser's business).
    Newline,
    /// A `//` comment, from the slashes to the end of its line (the `\n`
    /// excluded). `////…` is an ordinary comment.
    Comment,
    /// A `///` doc comment line, slashes included, `\n` excluded.
    DocComment,
    /// A keyword (`env`, `if`, `true`, …).
    Keyword,
    /// An identifier.
    Ident,
    /// A number or quantity as written (`1_000`, `2.5e3`, `4Gi`).
    Number,
    /// Part of a string literal as written: quotes, text, escapes, the
    /// indentation a `"""` string removes. A string without interpolation is
    /// one piece; one with `${…}` is pieces around the interpolations' tokens.
    Str,
    /// The `${` or the `}` of an interpolation.
    Interp,
    /// An operator or a bracket (`=`, `+=`, `->`, `(`, `}`, …).
    Punct,
    /// Bytes the lexer reported and skipped (an unexpected character, a
    /// closer without an opener, the rest of a file after `E0007`/`E0011`).
    Skipped,
}

/// One piece of a file's text: its kind and its byte range. The pieces of a
/// file are in order and tile it: the first starts at 0, each starts where
/// the one before ends, the last ends at the file's length; none is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub kind: PieceKind,
    pub span: Span,
}

/// The pieces of `src`, given the tokens [`crate::lex`] made of it.
///
/// Zero-width tokens (closers the lexer inserted) have no text and give no
/// piece. Bytes no token covers are classified here: inside a string literal
/// they are [`PieceKind::Str`]; elsewhere whitespace, newlines and comments
/// by their first bytes, and anything else [`PieceKind::Skipped`].
pub(crate) fn pieces(src: &str, tokens: &[Token]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(tokens.len() * 2 + 1);
    let mut pos = 0usize;
    // How many strings and interpolations enclose `pos`, innermost last:
    // `true` for a string (gaps are string text), `false` for an
    // interpolation (gaps are ordinary trivia).
    let mut ctx: Vec<bool> = Vec::new();
    for t in tokens {
        let (start, end) = (t.span.start as usize, t.span.end as usize);
        if start > pos {
            gap(src, pos, start, ctx.last() == Some(&true), &mut out);
            pos = start;
        }
        match t.kind {
            TokenKind::StrStart => ctx.push(true),
            TokenKind::InterpStart => ctx.push(false),
            TokenKind::InterpEnd | TokenKind::StrEnd => {
                ctx.pop();
            }
            _ => {}
        }
        if end <= pos {
            // Zero-width, or text already covered (a newline token shares
            // its `\n` with nothing else, so this is only zero-width ones).
            continue;
        }
        let kind = match &t.kind {
            TokenKind::Ident(_) => PieceKind::Ident,
            TokenKind::Int(_) | TokenKind::Float(_) | TokenKind::Quantity { .. } => {
                PieceKind::Number
            }
            TokenKind::Str(_) | TokenKind::StrStart | TokenKind::StrText(_) | TokenKind::StrEnd => {
                PieceKind::Str
            }
            TokenKind::InterpStart | TokenKind::InterpEnd => PieceKind::Interp,
            TokenKind::DocComment(_) => PieceKind::DocComment,
            TokenKind::Newline => PieceKind::Newline,
            k if crate::is_keyword(k.symbol()) => PieceKind::Keyword,
            _ => PieceKind::Punct,
        };
        push(&mut out, kind, pos.max(start), end);
        pos = end;
    }
    if pos < src.len() {
        gap(src, pos, src.len(), false, &mut out);
    }
    out
}

fn push(out: &mut Vec<Piece>, kind: PieceKind, start: usize, end: usize) {
    if end <= start {
        return;
    }
    // Adjacent skipped bytes and string text are one piece.
    if let Some(last) = out.last_mut() {
        if last.kind == kind
            && matches!(
                kind,
                PieceKind::Skipped | PieceKind::Str | PieceKind::Whitespace
            )
            && last.span.end as usize == start
        {
            last.span.end = end as u32;
            return;
        }
    }
    out.push(Piece {
        kind,
        span: Span::new(start, end),
    });
}

/// Classifies `src[from..to]`, text no token covers.
fn gap(src: &str, from: usize, to: usize, in_string: bool, out: &mut Vec<Piece>) {
    if in_string {
        push(out, PieceKind::Str, from, to);
        return;
    }
    let b = src.as_bytes();
    let mut i = from;
    while i < to {
        let start = i;
        let kind = match b[i] {
            b' ' | b'\t' | b'\r' => {
                while i < to && matches!(b[i], b' ' | b'\t' | b'\r') {
                    i += 1;
                }
                PieceKind::Whitespace
            }
            b'\n' => {
                i += 1;
                PieceKind::Newline
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < to && b[i] != b'\n' {
                    i += 1;
                }
                let text = &src[start..i];
                if text.starts_with("///") && !text.starts_with("////") {
                    PieceKind::DocComment
                } else {
                    PieceKind::Comment
                }
            }
            _ => {
                // Up to the next byte that starts something known.
                i += 1;
                while i < to && !matches!(b[i], b' ' | b'\t' | b'\r' | b'\n' | b'/') {
                    i += 1;
                }
                // Never split a character.
                while i < to && !src.is_char_boundary(i) {
                    i += 1;
                }
                PieceKind::Skipped
            }
        };
        push(out, kind, start, i);
    }
}

/// The table of `src` on its own: lexes it again (as [`crate::parse`]
/// does) and lists its pieces.
pub fn of(src: &str) -> Trivia {
    let (tokens, _) = crate::lexer::lex(src);
    Trivia {
        pieces: pieces(src, &tokens),
    }
}

/// The lossless text table of one file (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trivia {
    /// Every byte of the file, in order (see [`Piece`]).
    pub pieces: Vec<Piece>,
}

impl Trivia {
    /// The `//` and `///` comments, in order.
    pub fn comments(&self) -> impl Iterator<Item = &Piece> + '_ {
        self.pieces
            .iter()
            .filter(|p| matches!(p.kind, PieceKind::Comment | PieceKind::DocComment))
    }

    /// The text again, from the pieces: `src` itself when the table is
    /// whole (the tests check it is, for every file and every prefix).
    pub fn rebuild(&self, src: &str) -> String {
        let mut s = String::with_capacity(src.len());
        for p in &self.pieces {
            s.push_str(&src[p.span.start as usize..p.span.end as usize]);
        }
        s
    }
}
