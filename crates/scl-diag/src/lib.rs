//! Diagnostics for SCL.
//!
//! One data type, [`Diagnostic`], is produced by every stage (parser, resolver,
//! checker, evaluator, backends) and rendered in one place: by ariadne for a
//! terminal ([`render_human`]), as one JSON object per line for CI
//! ([`render_json`], fields as in `design/cli.md`), and later as LSP
//! diagnostics. Library crates never print.
//!
//! Spans are byte ranges into the UTF-8 text of one file; [`LineIndex`]
//! converts them to 1-based lines and character columns.

mod codes;
mod hidden;
mod ranges;
mod render;

pub use codes::{explain, lookup, Code, CODES};
pub use hidden::{
    describe_char, hidden_name, is_bidi, is_hidden, is_hidden_at, visible_source, visible_text,
};
pub use ranges::Ranges;
pub use render::{render_human, render_json, FileId, LineIndex, SourceCache};

use std::sync::Arc;

/// A byte range `[start, end)` into one file's text.
///
/// A span is either absolute (`anchor == 0`: offsets into the file's text)
/// or anchored (`anchor != 0`: the anchor names one top-level declaration
/// — the database keeps the table — and `start` and `end` are ranks among
/// that declaration's span starts and ends: see
/// `scl_syntax::ast::Decl::anchored`). The evaluator works on anchored
/// declarations, so a comment, blank lines or spaces added anywhere change
/// none of the values and diagnostics computed from them; an anchored span
/// is made absolute only when it is rendered.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte (inclusive).
    pub start: u32,
    /// Last byte (exclusive).
    pub end: u32,
    /// `0` for an absolute span, else the item the offsets are relative to.
    pub anchor: u32,
}

/// As derived, with `anchor` shown only when the span is anchored (so an
/// absolute span prints as it did before the field existed).
impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("Span");
        s.field("start", &self.start).field("end", &self.end);
        if self.anchor != 0 {
            s.field("anchor", &self.anchor);
        }
        s.finish()
    }
}

impl Span {
    /// An absolute span from `start` to `end` (bytes).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end.max(start) as u32,
            anchor: 0,
        }
    }
    /// The smallest span covering both (they have the same anchor: two
    /// places in one declaration; else `self` is kept).
    pub fn to(self, other: Span) -> Span {
        if self.anchor != other.anchor {
            return self;
        }
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
            anchor: self.anchor,
        }
    }
    /// As a `usize` range, for slicing (absolute spans).
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Error or warning. Warnings never change the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Where a diagnostic points: a file (its display path, workspace-relative
/// where possible; `<command-line>` for `--set` values) and a byte span in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: Arc<str>,
    pub span: Span,
}

/// A secondary label: another place that explains the primary one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub at: Location,
    pub message: String,
}

/// One diagnostic: a code from [`CODES`], a severity, a message, the primary
/// location, labels elsewhere, and an optional help text (the fix).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// `E####` or `W####`; every code has an `sclc explain` page.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The primary location. `file` may be empty while the diagnostic is
    /// still inside the syntax crate; the database fills it in.
    pub at: Location,
    /// The message printed under the primary span (defaults to nothing).
    pub primary_label: Option<String>,
    pub labels: Vec<Label>,
    /// A suggestion the user can act on ("did you mean `memory`?").
    pub help: Option<String>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with code `code` at `span` (file filled in later).
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Error, span, message)
    }
    /// A warning with code `code` at `span` (file filled in later).
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Warning, span, message)
    }
    fn new(
        code: &'static str,
        severity: Severity,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        debug_assert!(
            lookup(code).is_some(),
            "unregistered diagnostic code {code}"
        );
        Diagnostic {
            code,
            severity,
            message: message.into(),
            at: Location {
                file: Arc::from(""),
                span,
            },
            primary_label: None,
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
        }
    }
    /// Sets the file of the primary location and of every label whose file is empty.
    pub fn in_file(mut self, file: &Arc<str>) -> Diagnostic {
        if self.at.file.is_empty() {
            self.at.file = file.clone();
        }
        for l in &mut self.labels {
            if l.at.file.is_empty() {
                l.at.file = file.clone();
            }
        }
        self
    }
    /// Sets the label printed under the primary span.
    pub fn with_primary_label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary_label = Some(message.into());
        self
    }
    /// Adds a secondary label (file may be empty: same file as the primary).
    pub fn with_label(
        mut self,
        file: Arc<str>,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        self.labels.push(Label {
            at: Location { file, span },
            message: message.into(),
        });
        self
    }
    /// Sets the help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The closest candidate to `name` by edit distance, for "did you mean" hints.
/// Returns `None` when nothing is close (distance above a third of the length,
/// at least 1, at most 3).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let name_len = name.chars().count();
    let limit = (name_len / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        // The distance is at least the difference in length: most
        // candidates are ruled out without computing it.
        let c_len = c.chars().count();
        if c_len.abs_diff(name_len) > limit {
            continue;
        }
        let bound = best.map_or(limit, |(bd, _)| bd.min(limit));
        let Some(d) = edit_distance_within(name, c, bound) else {
            continue;
        };
        if best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// A budget for did-you-mean hints, one per file or evaluation: at most
/// [`Suggestions::CALLS`] hints (as many as a file's diagnostics are shown)
/// and [`Suggestions::WORK`] candidates looked at in all. Each hint is a
/// pass over every name in scope, so without a budget a module of n unknown
/// names among n declarations costs n² (a million of them: hours).
#[derive(Clone, Debug)]
pub struct Suggestions {
    calls_left: usize,
    work_left: usize,
}

impl Default for Suggestions {
    fn default() -> Self {
        Suggestions {
            calls_left: Self::CALLS,
            work_left: Self::WORK,
        }
    }
}

impl Suggestions {
    /// Hints per budget.
    pub const CALLS: usize = 100;
    /// Candidates looked at per budget (a few tens of milliseconds).
    pub const WORK: usize = 1_000_000;

    /// [`did_you_mean`] for `name`, while the budget lasts: `candidates` is
    /// made only then, and a pass that would exceed the budget gives no hint.
    pub fn suggest<'a, I>(&mut self, name: &str, candidates: impl FnOnce() -> I) -> Option<&'a str>
    where
        I: IntoIterator<Item = &'a str>,
    {
        if self.calls_left == 0 || self.work_left == 0 {
            return None;
        }
        self.calls_left -= 1;
        let mut exhausted = false;
        let work = &mut self.work_left;
        let counted = candidates().into_iter().take_while(|_| {
            if *work == 0 {
                exhausted = true;
                return false;
            }
            *work -= 1;
            true
        });
        let best = did_you_mean(name, counted);
        if exhausted {
            None
        } else {
            best
        }
    }
}

/// [`edit_distance`] when it is at most `limit`, else `None`; stops as soon
/// as every alignment costs more (O(len·len) time at worst, three rows of
/// memory).
pub fn edit_distance_within(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let m = b.len();
    let mut prev2: Vec<usize> = vec![0; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur: Vec<usize> = vec![0; m + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    (d <= limit).then_some(d)
}

/// Damerau-Levenshtein distance (optimal string alignment) in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("memroy", ["memory", "cpu", "gpu"]),
            Some("memory")
        );
        assert_eq!(
            did_you_mean("gpu_cuont", ["gpu_count", "nodes"]),
            Some("gpu_count")
        );
        assert_eq!(did_you_mean("zzz", ["memory"]), None);
    }

    #[test]
    fn bounded_distance_agrees_with_the_full_one() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "memory",
            "memroy",
            "mem",
            "gpu_count",
            "gpu_cuont",
            "ünï",
            "üin",
            "kitten",
            "sitting",
            "xyzzy",
        ];
        for a in words {
            for b in words {
                let d = edit_distance(a, b);
                for limit in 0..5 {
                    let want = (d <= limit).then_some(d);
                    assert_eq!(
                        edit_distance_within(a, b, limit),
                        want,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }
}
