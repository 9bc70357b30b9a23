//! Rendering: ariadne for people, JSON lines for machines.

use crate::{Diagnostic, Severity};
use std::collections::HashMap;

/// Maps byte offsets of one text to 1-based lines and 1-based character columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `text` (O(len)).
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }
    /// The 1-based line of byte `offset` (O(log lines); offsets past the end
    /// are on the last line).
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }

    /// `(line, column)` of byte `offset`, both 1-based, the column counted in
    /// characters. Offsets past the end clamp to the end.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let mut end = offset;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (line + 1, text[start..end].chars().count() + 1)
    }

    /// The number of lines (a text without a line break is one line; a
    /// trailing line break starts an empty last line).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Always false: every text has at least one (possibly empty) line.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The byte offset where the 0-based line `line` starts, if it exists.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// `(line, character)` of byte `offset` as the Language Server Protocol
    /// counts them (`Position` in the LSP 3.17 specification): both
    /// 0-based, the character counted in UTF-16 code units (a character
    /// outside the Basic Multilingual Plane, such as an emoji, is 2).
    /// Offsets past the end clamp to the end; an offset inside a character
    /// counts from the character's start.
    pub fn utf16_position(&self, text: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let mut end = offset;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let units: usize = text[start..end].chars().map(char::len_utf16).sum();
        (line as u32, units as u32)
    }

    /// The byte offset of the LSP position `(line, character)` (0-based,
    /// UTF-16 code units): the inverse of [`LineIndex::utf16_position`].
    /// A character past the end of its line (or inside a surrogate pair)
    /// clamps to the end of the line (before its line break) or to the
    /// character's start; a line past the last clamps to the end of the text.
    pub fn offset_of_utf16(&self, text: &str, line: u32, character: u32) -> usize {
        let Some(&start) = self.starts.get(line as usize) else {
            return text.len();
        };
        let end = self.line_end(text, line as usize);
        let mut units = 0usize;
        for (i, c) in text[start..end].char_indices() {
            if units + c.len_utf16() > character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The byte offset of the 1-based `(line, column)` of [`LineIndex::line_col`]
    /// (the column in characters), clamped like [`LineIndex::offset_of_utf16`].
    pub fn offset_of_line_col(&self, text: &str, line: usize, column: usize) -> usize {
        let Some(&start) = line.checked_sub(1).and_then(|l| self.starts.get(l)) else {
            return if line == 0 { 0 } else { text.len() };
        };
        // Columns count every character before the `\n`, a `\r` included.
        let end = self.starts.get(line).map_or(text.len(), |&s| s - 1);
        text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(end, |(i, _)| start + i)
    }

    /// The end of 0-based line `line`: before its `\n` (and a `\r` before it).
    fn line_end(&self, text: &str, line: usize) -> usize {
        let end = self.starts.get(line + 1).map_or(text.len(), |&s| s - 1);
        if end > self.starts[line]
            && text.as_bytes().get(end - 1) == Some(&b'\r')
            && end < text.len()
        {
            end - 1
        } else {
            end
        }
    }
}

/// A file's identity inside one database: a small number, the same for the
/// life of the database, given out in the order files are first read.
/// Diagnostics name their file by a key (its workspace-relative path); a
/// front end maps keys to ids (`scl_ide::Analysis::file_id`) and ids to
/// the path it shows, which it chooses when it renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// The source texts a renderer may need, by display path.
pub trait SourceCache {
    /// The text of `file`, if known.
    fn source(&self, file: &str) -> Option<&str>;
    /// The path shown for `file` (a diagnostic's file key: the
    /// workspace-relative path, `std/NAME.env.scl`, `<command-line>`). The
    /// renderer asks this when it writes a file name, so a front end chooses
    /// it: the CLI shows paths relative to the current folder. Default: the
    /// key itself.
    fn display<'a>(&'a self, file: &'a str) -> std::borrow::Cow<'a, str> {
        std::borrow::Cow::Borrowed(file)
    }
}

impl SourceCache for HashMap<String, String> {
    fn source(&self, file: &str) -> Option<&str> {
        self.get(file).map(|s| s.as_str())
    }
}

/// `(line, column)` of `offset` in `file`. The line index of the last text
/// asked about is kept (per thread), so rendering every diagnostic of one
/// file indexes it once, not once per diagnostic.
fn position(sources: &dyn SourceCache, file: &str, offset: u32) -> (usize, usize) {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(usize, usize, LineIndex)>> =
            const { std::cell::RefCell::new(None) };
    }
    match sources.source(file) {
        Some(text) => LAST.with(|last| {
            let mut last = last.borrow_mut();
            let key = (text.as_ptr() as usize, text.len());
            if last.as_ref().is_none_or(|(p, n, _)| (*p, *n) != key) {
                *last = Some((key.0, key.1, LineIndex::new(text)));
            }
            let (_, _, index) = last.as_ref().expect("set above");
            index.line_col(text, offset as usize)
        }),
        None => (1, offset as usize + 1),
    }
}

/// One JSON object (no trailing newline) with the fields of `design/cli.md`:
/// `code, severity, message, file, line, column, end_line, end_column,
/// labels, help`; lines and columns are 1-based, columns in characters.
pub fn render_json(d: &Diagnostic, sources: &dyn SourceCache) -> String {
    let (line, column) = position(sources, &d.at.file, d.at.span.start);
    let (end_line, end_column) = position(sources, &d.at.file, d.at.span.end);
    let labels: Vec<serde_json::Value> = d
        .labels
        .iter()
        .map(|l| {
            let (line, column) = position(sources, &l.at.file, l.at.span.start);
            let (end_line, end_column) = position(sources, &l.at.file, l.at.span.end);
            serde_json::json!({
                "file": sources.display(&l.at.file), "line": line, "column": column,
                "end_line": end_line, "end_column": end_column, "message": l.message,
            })
        })
        .collect();
    serde_json::json!({
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "file": sources.display(&d.at.file),
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "labels": labels,
        "help": d.help,
        "notes": d.notes,
    })
    .to_string()
}

/// Lines longer than this (in bytes) are not drawn by [`render_human`].
const MAX_DRAWN_LINE: usize = 1000;

/// The diagnostic as ariadne draws it: the source lines with labels, the help
/// and notes. `color` turns ANSI colours on (only on a terminal; respect
/// `NO_COLOR`). Falls back to a compact form (position, labels, help and
/// notes as lines) when a source is missing or a line to draw is longer than
/// 1000 bytes.
///
/// Nothing hidden reaches the terminal ([`crate::is_hidden`]: an escape that
/// starts a terminal sequence, a carriage return, a bidirectional override):
/// source lines show them as same-length placeholders
/// ([`crate::visible_source`]), messages, labels, help and notes as escapes
/// ([`crate::visible_text`]).
pub fn render_human(d: &Diagnostic, sources: &dyn SourceCache, color: bool) -> String {
    let mut d = d.clone();
    let vis = |s: &mut String| {
        if let std::borrow::Cow::Owned(v) = crate::visible_text(s) {
            *s = v;
        }
    };
    vis(&mut d.message);
    d.labels.iter_mut().for_each(|l| vis(&mut l.message));
    if let Some(l) = &mut d.primary_label {
        vis(l);
    }
    if let Some(h) = &mut d.help {
        vis(h);
    }
    d.notes.iter_mut().for_each(vis);
    // File names too (a file may be named with an escape sequence): the
    // renderer sees the shown names, and looks their texts up by the real ones.
    let mut real: HashMap<String, String> = HashMap::new();
    let mut show = |f: &mut std::sync::Arc<str>| {
        let shown = sources.display(f);
        let shown = crate::visible_text(&shown).into_owned();
        if shown != **f {
            real.insert(shown.clone(), f.to_string());
            *f = std::sync::Arc::from(shown);
        }
    };
    // Every span on character boundaries of its file's text (and inside it):
    // a span can come from outside the text's own coordinates (the bytes of
    // a file that is not valid UTF-8, a stale position), and everything
    // below slices the text by spans.
    let snap = |at: &mut crate::Location| {
        if let Some(text) = sources.source(&at.file) {
            let start = floor_char_boundary(text, at.span.start as usize);
            let end = ceil_char_boundary(text, (at.span.end as usize).max(start));
            at.span = crate::Span::new(start, end);
        }
    };
    snap(&mut d.at);
    d.labels.iter_mut().for_each(|l| snap(&mut l.at));
    show(&mut d.at.file);
    d.labels.iter_mut().for_each(|l| show(&mut l.at.file));
    if real.is_empty() {
        return render_visible(&d, sources, color);
    }
    render_visible(&d, &Renamed { sources, real }, color)
}

/// A source cache looked up by shown file names (see [`render_human`]).
struct Renamed<'a> {
    sources: &'a dyn SourceCache,
    real: HashMap<String, String>,
}

impl SourceCache for Renamed<'_> {
    fn source(&self, file: &str) -> Option<&str> {
        self.sources
            .source(self.real.get(file).map_or(file, |r| r.as_str()))
    }
}

/// The part of a file ariadne is given: whole lines from the first to the
/// last one a label of this diagnostic touches (the lines before it as empty
/// lines). A diagnostic costs the size of what it shows and the number of
/// lines before it, not the size of the file.
struct Window {
    /// Byte range of the excerpt in the file.
    start: usize,
    end: usize,
    /// Lines before `start`.
    lines_before: usize,
}

/// Draws `d`; its spans are already on character boundaries of their texts
/// and inside them (see [`render_human`]).
fn render_visible(d: &Diagnostic, sources: &dyn SourceCache, color: bool) -> String {
    use ariadne::{Config, IndexType, Label, Report, ReportKind};
    let kind = match d.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let mut files: Vec<String> = vec![d.at.file.to_string()];
    for l in &d.labels {
        if !files.contains(&l.at.file.to_string()) {
            files.push(l.at.file.to_string());
        }
    }
    // A very long line (generated or minified input) is not drawn: ariadne
    // would print all of it, once for the source and once for the marks.
    let too_long = |file: &str, offset: u32| {
        sources.source(file).is_some_and(|t| {
            let at = (offset as usize).min(t.len());
            let start = t[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = t[at..].find('\n').map_or(t.len(), |i| at + i);
            end - start > MAX_DRAWN_LINE
        })
    };
    if files.iter().any(|f| sources.source(f).is_none())
        || too_long(&d.at.file, d.at.span.start)
        || d.labels
            .iter()
            .any(|l| too_long(&l.at.file, l.at.span.start))
    {
        let (line, col) = position(sources, &d.at.file, d.at.span.start);
        let mut s = format!(
            "{}[{}]: {}\n  --> {}:{}:{}\n",
            sev(d.severity),
            d.code,
            d.message,
            d.at.file,
            line,
            col
        );
        for l in &d.labels {
            let (line, col) = position(sources, &l.at.file, l.at.span.start);
            s.push_str(&format!(
                "  --> {}:{}:{}: {}\n",
                l.at.file, line, col, l.message
            ));
        }
        if let Some(h) = &d.help {
            s.push_str(&format!("  help: {h}\n"));
        }
        for n in &d.notes {
            s.push_str(&format!("  note: {n}\n"));
        }
        return s;
    }
    let all_spans = || {
        std::iter::once((&*d.at.file, d.at.span))
            .chain(d.labels.iter().map(|l| (&*l.at.file, l.at.span)))
    };
    let windows: HashMap<&str, Window> = files
        .iter()
        .map(|f| {
            let text = sources.source(f).unwrap_or("");
            // Spans are on character boundaries and inside the text
            // (`render_human` snapped them).
            let (lo, hi) = all_spans()
                .filter(|(file, _)| *file == f.as_str())
                .fold((text.len(), 0), |(lo, hi), (_, sp)| {
                    (lo.min(sp.start as usize), hi.max(sp.end as usize))
                });
            let lo = lo.min(hi);
            let start = text[..lo].rfind('\n').map_or(0, |i| i + 1);
            let end = text[hi..].find('\n').map_or(text.len(), |i| hi + i + 1);
            let lines_before = text.as_bytes()[..start]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            (
                f.as_str(),
                Window {
                    start,
                    end,
                    lines_before,
                },
            )
        })
        .collect();
    let clamp = |file: &str, span: crate::Span| {
        let w = &windows[file];
        let shift = |o: u32| (o as usize).clamp(w.start, w.end) - w.start + w.lines_before;
        let s = shift(span.start);
        (file.to_string(), s..shift(span.end).max(s))
    };
    let mut report = Report::build(kind, clamp(&d.at.file, d.at.span))
        .with_code(d.code)
        .with_message(&d.message)
        .with_config(
            Config::default()
                .with_index_type(IndexType::Byte)
                .with_color(color),
        );
    // ariadne draws a label only with a message; default to the diagnostic's.
    let primary_msg = match &d.primary_label {
        Some(l) => l.as_str(),
        None if d.message.chars().count() <= 60 => d.message.as_str(),
        None => "here",
    };
    let color = match d.severity {
        Severity::Error => ariadne::Color::Red,
        Severity::Warning => ariadne::Color::Yellow,
    };
    // ariadne starts a new source section whenever a label comes before the
    // previous one; give the labels their source order so one file is one section.
    let mut labels: Vec<(&str, crate::Span, &str, bool)> =
        vec![(&d.at.file, d.at.span, primary_msg, true)];
    labels.extend(
        d.labels
            .iter()
            .map(|l| (&*l.at.file, l.at.span, l.message.as_str(), false)),
    );
    labels.sort_by_key(|(f, sp, _, _)| (*f != &*d.at.file, *f, sp.start));
    for (order, (f, sp, msg, primary)) in labels.into_iter().enumerate() {
        let mut label = Label::new(clamp(f, sp))
            .with_message(msg)
            .with_order(order as i32);
        if primary {
            label = label.with_color(color);
        }
        report = report.with_label(label);
    }
    if let Some(h) = &d.help {
        report = report.with_help(h);
    }
    for n in &d.notes {
        report = report.with_note(n);
    }
    let srcs: HashMap<String, ariadne::Source<String>> = files
        .iter()
        .map(|f| {
            let w = &windows[f.as_str()];
            let text = &sources.source(f).unwrap_or("")[w.start..w.end];
            // ariadne 0.6 numbers the drawn lines from the start of the text
            // it is given (`with_display_line_offset` moves only the
            // `file:line:col` header), so the lines before the window are
            // given as empty lines, and the spans move by their number.
            let mut excerpt = "\n".repeat(w.lines_before);
            excerpt.push_str(&crate::visible_source(text));
            // A span at the very end of a text that ends with a line break
            // is on the (empty) last line; ariadne only draws lines that
            // hold a character, so give that line one blank.
            if w.start == w.end && excerpt.ends_with('\n') || excerpt.is_empty() {
                excerpt.push(' ');
            }
            (f.clone(), ariadne::Source::from(excerpt))
        })
        .collect();
    let cache = ariadne::FnCache::new(
        (|id: &String| Err(format!("no source for {id}"))) as fn(&String) -> Result<String, String>,
    )
    .with_sources(srcs);
    let mut out = Vec::new();
    if report.finish().write(cache, &mut out).is_err() {
        return format!("{}[{}]: {}\n", sev(d.severity), d.code, d.message);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The largest char boundary of `text` at or below `i` (clamped to its length).
fn ceil_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn sev(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn line_col_counts_characters() {
        let t = "ab\nçd\n";
        let ix = LineIndex::new(t);
        assert_eq!(ix.line_col(t, 0), (1, 1));
        assert_eq!(ix.line_col(t, 3), (2, 1));
        assert_eq!(ix.line_col(t, 5), (2, 2)); // after the two-byte ç
        assert_eq!((ix.line(0), ix.line(3), ix.line(99)), (1, 2, 3));
    }

    #[test]
    fn a_span_at_the_end_after_a_line_break_is_on_the_last_line() {
        // `let x =` and a line break: "found end of file" is at offset 8,
        // line 2 column 1 (as the JSON says), not line 1 column 2.
        let text = "let x =\n";
        let mut src = HashMap::new();
        src.insert("a.env.scl".to_string(), text.to_string());
        let file: std::sync::Arc<str> = std::sync::Arc::from("a.env.scl");
        let d = Diagnostic::error("E0001", crate::Span::new(8, 8), "m").in_file(&file);
        let out = render_human(&d, &src, false);
        assert!(out.contains("a.env.scl:2:1"), "{out}");
        let d = Diagnostic::error("E0001", crate::Span::new(0, 0), "m").in_file(&file);
        let empty: HashMap<String, String> = [("a.env.scl".to_string(), String::new())].into();
        let out = render_human(&d, &empty, false);
        assert!(out.contains("a.env.scl:1:1"), "{out}");
    }

    #[test]
    fn any_span_renders_even_inside_a_character() {
        // Spans can come from outside the text's coordinates (the bytes of a
        // file that is not valid UTF-8): every start and end, on a character
        // boundary or not, past the end or not, renders without a panic.
        let text = "é\u{fffd}x\n🦀ç\n";
        let mut src = HashMap::new();
        src.insert("a.env.scl".to_string(), text.to_string());
        let file: std::sync::Arc<str> = std::sync::Arc::from("a.env.scl");
        for start in 0..=text.len() + 1 {
            for end in start..=text.len() + 1 {
                let span = crate::Span::new(start, end);
                let d = Diagnostic::error("E0001", span, "m")
                    .with_label(file.clone(), span, "l")
                    .in_file(&file);
                let out = render_human(&d, &src, false);
                assert!(out.contains("E0001"), "{start}..{end}: {out}");
            }
        }
    }

    #[test]
    fn nothing_hidden_reaches_the_terminal() {
        // An escape sequence, a lone carriage return and a bidi override in
        // the source line, the message, a label, the help and a note.
        let text = "let x = \"\u{1b}[2J\r\u{202e}\"\n";
        let mut src = HashMap::new();
        src.insert("a.env.scl".to_string(), text.to_string());
        let file: std::sync::Arc<str> = std::sync::Arc::from("a.env.scl");
        let d = Diagnostic::error("E0010", crate::Span::new(9, 10), "bad \u{1b}[31m")
            .with_label(file.clone(), crate::Span::new(13, 14), "cr \r")
            .with_help("help \u{202e}")
            .with_note("note \u{7}")
            .in_file(&file);
        for color in [false, true] {
            let out = render_human(&d, &src, color);
            // Colour codes are ours; strip them before looking.
            let plain = out.replace("\u{1b}[0m", "").replace("\u{1b}[31m", "");
            let plain: String = plain
                .split('\u{1b}')
                .enumerate()
                .map(|(i, p)| {
                    if i == 0 {
                        p
                    } else {
                        p.split_once('m').map_or(p, |x| x.1)
                    }
                })
                .collect();
            assert!(!plain.chars().any(crate::is_hidden), "{plain:?}");
            assert!(plain.contains("bad \\u{1b}[31m"), "{plain}");
            assert!(plain.contains("help \\u{202e}"), "{plain}");
            assert!(plain.contains("note \\u{7}"), "{plain}");
            // The line is drawn once, with placeholders, at line 1.
            assert!(plain.contains("let x = \"?[2J?\u{fffd}\""), "{plain}");
            assert!(plain.contains("a.env.scl:1:10"), "{plain}");
        }
    }

    #[test]
    fn file_names_are_shown_without_hidden_characters() {
        let name = "x\u{1b}[31mred\u{202e}.env.scl";
        let mut src = HashMap::new();
        src.insert(name.to_string(), "let a = 1\n".to_string());
        let file: std::sync::Arc<str> = std::sync::Arc::from(name);
        let d = Diagnostic::error("E0001", crate::Span::new(4, 5), "bad").in_file(&file);
        let out = render_human(&d, &src, false);
        assert!(!out.chars().any(crate::is_hidden), "{out:?}");
        assert!(
            out.contains("x\\u{1b}[31mred\\u{202e}.env.scl:1:5"),
            "{out}"
        );
        assert!(out.contains("let a = 1"), "{out}");
    }

    #[test]
    fn drawn_lines_keep_their_numbers() {
        let text = "a\nb\nccc\nd\n".to_string();
        let mut src = HashMap::new();
        src.insert("a.env.scl".to_string(), text);
        let file: std::sync::Arc<str> = std::sync::Arc::from("a.env.scl");
        let d = Diagnostic::error("E0001", crate::Span::new(5, 6), "bad").in_file(&file);
        let out = render_human(&d, &src, false);
        assert!(out.contains("a.env.scl:3:2"), "{out}");
        assert!(out.contains(" 3 │ ccc"), "{out}");
        assert!(!out.contains("│ b") && !out.contains("│ d"), "{out}");
    }

    #[test]
    fn long_lines_are_not_drawn() {
        let text = format!("let x = {}\n", "1+".repeat(5000));
        let mut src = HashMap::new();
        src.insert("a.env.scl".to_string(), text);
        let d = Diagnostic::error("E0001", crate::Span::new(8, 9), "bad")
            .in_file(&std::sync::Arc::from("a.env.scl"));
        let out = render_human(&d, &src, false);
        assert_eq!(out, "error[E0001]: bad\n  --> a.env.scl:1:9\n");
    }
}
