//! The SCL formatter: one canonical layout for a `.env.scl` file, keeping
//! every comment and every literal as written (the layout is described in
//! the book, `book/src/formatting.md`).
//!
//! It prints the AST of [`scl_syntax::parse`] with the trivia table beside
//! it (comments, blank lines, the raw text of literals), through a small
//! Wadler-style pretty printer ([`doc`]). Formatting never changes what a
//! file means: [`verify`] checks that the output parses without errors to
//! the same tree (spans aside) with the same comments, and `sclc fmt` runs
//! it before writing anything.

pub mod doc;
mod print;

use scl_diag::Diagnostic;

/// Formats one file's text.
///
/// Returns the formatted text (ending in one `\n`; empty for a file with no
/// declaration and no comment), or the file's syntax errors (codes
/// `E0001`–`E0007`, `E0010`, `E0011`, with an empty `file`): a file with a
/// syntax error is never formatted. Idempotent: formatting the result gives
/// the same text.
pub fn format(src: &str) -> Result<String, Vec<Diagnostic>> {
    let parse = scl_syntax::parse(src);
    if !parse.errors.is_empty() {
        return Err(parse.errors);
    }
    let mut p = print::Printer::new(src, &parse);
    let doc = p.module(&parse.module);
    Ok(doc::render(&doc))
}

/// Checks that `formatted` means what `src` means: it has no syntax error,
/// its tree equals `src`'s but for spans, its comments are the same texts
/// in the same order (trailing blanks aside), each in the same gap between
/// tokens ([`comment_gaps`]). `Err` says what differs.
pub fn verify(src: &str, formatted: &str) -> Result<(), String> {
    verify_parsed(src, &scl_syntax::parse(src), formatted)
}

/// Why [`format_verified`] gives no text.
#[derive(Debug)]
pub enum Refusal {
    /// The file's syntax errors (as [`format`] gives them).
    Syntax(Vec<Diagnostic>),
    /// The formatted text would not mean the same (a formatter bug): what
    /// differs, as [`verify`] says it.
    Meaning(String),
}

/// [`format`], then [`verify`] of the result, parsing `src` once: what
/// `sclc fmt` writes.
pub fn format_verified(src: &str) -> Result<String, Refusal> {
    let parse = scl_syntax::parse(src);
    if !parse.errors.is_empty() {
        return Err(Refusal::Syntax(parse.errors));
    }
    let mut p = print::Printer::new(src, &parse);
    let doc = p.module(&parse.module);
    drop(p);
    let out = doc::render(&doc);
    drop(doc);
    verify_parsed(src, &parse, &out).map_err(Refusal::Meaning)?;
    Ok(out)
}

fn verify_parsed(src: &str, a: &scl_syntax::Parse, formatted: &str) -> Result<(), String> {
    let b = scl_syntax::parse(formatted);
    if let Some(e) = b.errors.first() {
        return Err(format!(
            "the formatted text has a syntax error: {} {} at byte {}",
            e.code, e.message, e.at.span.start
        ));
    }
    if tree_without_spans(&a.module) != tree_without_spans(&b.module) {
        return Err("the formatted text parses to another tree".into());
    }
    let (ca, cb) = (comments(src, a), comments(formatted, &b));
    if ca != cb {
        return Err(format!(
            "the comments differ: {} before, {} after",
            ca.len(),
            cb.len()
        ));
    }
    let (ga, gb) = (comment_gaps(src, a), comment_gaps(formatted, &b));
    if let Some(k) = (0..ga.len()).find(|&k| ga[k] != gb[k]) {
        return Err(format!(
            "the comment `{}` moved from after token {}{} to after token {}{}",
            ca[k],
            ga[k].0,
            if ga[k].1 { " (own line)" } else { "" },
            gb[k].0,
            if gb[k].1 { " (own line)" } else { "" },
        ));
    }
    Ok(())
}

/// Where each `//` and `///` comment of a file is, in order: how many
/// tokens come before it, commas left out (the layout adds and removes
/// commas), and whether it is on a line of its own (else at the end of a
/// line). Two texts whose comments have the same places have every comment
/// in the same gap between the same two tokens, on its own line or not.
pub fn comment_gaps(src: &str, parse: &scl_syntax::Parse) -> Vec<(usize, bool)> {
    use scl_syntax::PieceKind;
    let mut n = 0;
    let mut out = Vec::new();
    // Whether only blanks came since the last line break.
    let mut line_start = true;
    for p in &parse.trivia.pieces {
        match p.kind {
            PieceKind::Whitespace => continue,
            PieceKind::Newline => {
                line_start = true;
                continue;
            }
            PieceKind::Comment | PieceKind::DocComment => out.push((n, line_start)),
            // (A line of only commas counts as empty: the layout drops it.)
            _ if &src[p.span.range()] == "," => continue,
            _ => n += 1,
        }
        line_start = false;
    }
    out
}

/// The texts of a file's `//` and `///` comments, in order, without
/// trailing blanks.
pub fn comments(src: &str, parse: &scl_syntax::Parse) -> Vec<String> {
    parse
        .trivia
        .comments()
        .map(|p| src[p.span.range()].trim_end().to_string())
        .collect()
}

/// The tree of a module as text, with every span left out (`Span { … }`
/// written as `_`), so two trees compare equal when only positions differ.
/// Built in one pass (the spans are dropped as the text is written), so it
/// costs one copy of the span-less text.
pub fn tree_without_spans(m: &scl_syntax::ast::Module) -> String {
    use std::fmt::Write;
    let mut w = NoSpans(String::new());
    write!(w, "{m:?}").expect("writing to a String cannot fail");
    w.0
}

/// A writer that drops each `Span { start: N, end: M }` it is given
/// (written as `_`) as soon as its closing ` }` comes.
struct NoSpans(String);

impl std::fmt::Write for NoSpans {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.push_str(s);
        if self.0.ends_with(" }") {
            // A span's text is at most 46 bytes (`Span { start: ` + two u32s).
            let from = self.0.len().saturating_sub(48);
            let from = (from..self.0.len())
                .find(|&i| self.0.is_char_boundary(i))
                .unwrap_or(self.0.len());
            if let Some(k) = self.0[from..].rfind("Span { start: ") {
                let at = from + k;
                let rest = &self.0[at + "Span { start: ".len()..self.0.len() - 2];
                let is_span = rest.split_once(", end: ").is_some_and(|(a, b)| {
                    !a.is_empty()
                        && !b.is_empty()
                        && a.bytes().all(|c| c.is_ascii_digit())
                        && b.bytes().all(|c| c.is_ascii_digit())
                });
                if is_span {
                    self.0.truncate(at);
                    self.0.push('_');
                }
            }
        }
        Ok(())
    }
}
