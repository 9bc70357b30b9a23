//! A small Wadler-style pretty printer ("A prettier printer", Wadler 2003,
//! in the strict form of Lindig's "Strictly Pretty"): a document is text,
//! line breaks that a group lays out flat (as a space or nothing) or broken
//! (as a newline plus indentation), nesting, and groups.
//!
//! Beside the classic parts it has what a formatter that keeps comments and
//! raw string literals needs: hard breaks (after a `//` comment) that force
//! every enclosing group to break, a break that is only taken when the line
//! already has text, an empty line, and raw text that may hold newlines
//! (a `"""` string, printed as written: its later lines are not indented).

/// The width lines are fitted to, in characters.
pub const WIDTH: usize = 100;
/// One level of indentation, in spaces.
pub const INDENT: usize = 2;

/// A document (see the module docs).
#[derive(Clone, Debug)]
pub enum Doc {
    Nil,
    /// Text without a newline.
    Text(String),
    /// Text that may hold newlines, printed as is.
    Raw(String),
    /// A space when flat, a newline when broken.
    Line,
    /// Nothing when flat, a newline when broken.
    Soft,
    /// Always a newline; the enclosing groups break.
    Hard,
    /// A newline unless the current line is still empty; counts as [`Doc::Hard`].
    NewlineIfNeeded,
    /// An empty line (one, however many come in a row); counts as [`Doc::Hard`].
    Blank,
    /// The inner document with one more level of indentation after its breaks.
    Nest(Box<Doc>, bool),
    /// Flat if it fits the rest of the line (and holds no hard break), else broken.
    Group(Box<Doc>, bool),
    /// The first when the enclosing group is broken, the second when it is flat.
    IfBreak(Box<Doc>, Box<Doc>),
    Concat(Vec<Doc>, bool),
}

impl Doc {
    /// True if the document holds a hard break (so a group around it breaks).
    pub fn has_hard(&self) -> bool {
        match self {
            Doc::Hard | Doc::NewlineIfNeeded | Doc::Blank => true,
            Doc::Nest(_, h) | Doc::Group(_, h) | Doc::Concat(_, h) => *h,
            // Only the broken alternative can hold one (taken when broken).
            _ => false,
        }
    }
}

pub fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

pub fn nest(d: Doc) -> Doc {
    let h = d.has_hard();
    Doc::Nest(Box::new(d), h)
}

pub fn group(d: Doc) -> Doc {
    let h = d.has_hard();
    Doc::Group(Box::new(d), h)
}

pub fn if_break(broken: Doc, flat: Doc) -> Doc {
    Doc::IfBreak(Box::new(broken), Box::new(flat))
}

pub fn concat(v: Vec<Doc>) -> Doc {
    let h = v.iter().any(Doc::has_hard);
    Doc::Concat(v, h)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flat,
    Break,
}

/// Lays `doc` out in [`WIDTH`] columns. Lines carry no trailing blanks.
pub fn render(doc: &Doc) -> String {
    let mut out = String::new();
    // Whether the current line holds text yet (indentation is written lazily).
    let mut line_empty = true;
    let mut col = 0usize;
    let mut pending_indent = 0usize;
    let mut stack: Vec<(usize, Mode, &Doc)> = vec![(0, Mode::Break, doc)];
    // A break on a line that holds nothing yet only sets its indentation:
    // empty lines come from `Blank` alone.
    fn newline(out: &mut String, line_empty: &mut bool, col: &mut usize, pi: &mut usize, i: usize) {
        if *line_empty {
            *col = i;
            *pi = i;
            return;
        }
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
        *line_empty = true;
        *col = i;
        *pi = i;
    }
    while let Some((i, mode, d)) = stack.pop() {
        match d {
            Doc::Nil => {}
            Doc::Text(s) | Doc::Raw(s) => {
                // No blank at the start of a line (a separator before a
                // comment that now starts one).
                if s.is_empty() || (s == " " && (line_empty || out.ends_with(' '))) {
                    continue;
                }
                if line_empty {
                    out.extend(std::iter::repeat_n(' ', pending_indent));
                    line_empty = false;
                }
                out.push_str(s);
                match s.rfind('\n') {
                    Some(k) => col = s[k + 1..].chars().count(),
                    None => col += s.chars().count(),
                }
            }
            Doc::Line | Doc::Soft if mode == Mode::Flat => {
                if matches!(d, Doc::Line) {
                    out.push(' ');
                    col += 1;
                }
            }
            Doc::Line | Doc::Soft | Doc::Hard => {
                newline(&mut out, &mut line_empty, &mut col, &mut pending_indent, i)
            }
            Doc::NewlineIfNeeded => {
                if !line_empty {
                    newline(&mut out, &mut line_empty, &mut col, &mut pending_indent, i)
                }
            }
            Doc::Blank => {
                if !line_empty {
                    newline(&mut out, &mut line_empty, &mut col, &mut pending_indent, i)
                }
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push('\n');
                }
                pending_indent = i;
                col = i;
            }
            Doc::Nest(x, _) => stack.push((i + INDENT, mode, x)),
            Doc::Concat(v, _) => {
                for x in v.iter().rev() {
                    stack.push((i, mode, x));
                }
            }
            Doc::IfBreak(b, f) => stack.push((i, mode, if mode == Mode::Break { b } else { f })),
            Doc::Group(x, hard) => {
                let m = if *hard {
                    Mode::Break
                } else if mode == Mode::Flat || fits(WIDTH.saturating_sub(col), x, &stack) {
                    Mode::Flat
                } else {
                    Mode::Break
                };
                stack.push((i, m, x));
            }
        }
    }
    out
}

/// True if `first`, laid out flat, and what follows it up to the next
/// break of the rest (`rest`, innermost last) fit in `width` characters.
fn fits(width: usize, first: &Doc, rest: &[(usize, Mode, &Doc)]) -> bool {
    let mut w = width as isize;
    let mut local: Vec<(Mode, &Doc)> = vec![(Mode::Flat, first)];
    let mut rest_i = rest.len();
    loop {
        let (mode, d) = match local.pop() {
            Some(x) => x,
            None => {
                if rest_i == 0 {
                    return true;
                }
                rest_i -= 1;
                (rest[rest_i].1, rest[rest_i].2)
            }
        };
        match d {
            Doc::Nil => {}
            Doc::Text(s) => w -= s.chars().count() as isize,
            Doc::Raw(s) => match s.find('\n') {
                Some(k) => return w >= s[..k].chars().count() as isize,
                None => w -= s.chars().count() as isize,
            },
            Doc::Line | Doc::Soft => {
                if mode == Mode::Break {
                    return true;
                }
                if matches!(d, Doc::Line) {
                    w -= 1;
                }
            }
            Doc::Hard | Doc::NewlineIfNeeded | Doc::Blank => return mode == Mode::Break,
            Doc::Nest(x, _) => local.push((mode, x)),
            Doc::Concat(v, _) => {
                for x in v.iter().rev() {
                    local.push((mode, x));
                }
            }
            Doc::IfBreak(b, f) => local.push((mode, if mode == Mode::Break { b } else { f })),
            Doc::Group(x, hard) => local.push((if *hard { Mode::Break } else { Mode::Flat }, x)),
        }
        if w < 0 {
            return false;
        }
    }
}
