//! The hand-written, single-pass lexer of SCL.
//!
//! It turns a file into a flat list of [`Token`]s with absolute byte spans and
//! never fails: problems become diagnostics (`E0001`–`E0006`) and the lexer
//! goes on. Besides splitting the text it does three jobs that make the
//! parser simple:
//!
//! * **Newlines.** A [`TokenKind::Newline`] is emitted only where a newline is
//!   a separator: at top level and directly inside `{...}`. Newlines inside
//!   `(...)`, `[...]` and `${...}` are dropped, and so is a newline after a
//!   line that ends with a binary operator, `,`, `=`, `:`, `->`, an opening
//!   bracket or one of the keywords `then else with extends in where as`, and
//!   a newline before a line that starts with `then`, `else` or `with`. Runs
//!   of newlines (blank lines, comment lines) collapse into one token.
//! * **Strings.** A string without interpolation is one [`TokenKind::Str`]. A
//!   string with `${...}` becomes `StrStart`, then `StrText` and
//!   `InterpStart <tokens> InterpEnd` pieces, then `StrEnd`; the tokens of an
//!   interpolation are lexed recursively in place, so nested strings such as
//!   `"${join(xs, ",")}"` work. `"""` strings are dedented here.
//! * **Brackets.** The token stream it returns is always balanced: a missing
//!   closing bracket is reported (`E0006`) and a zero-width closing token is
//!   inserted, at the end of the file or before the closer of an outer
//!   bracket. At the end of the file the error itself is placed just after
//!   the last token of code (like every "found end of file" of the parser),
//!   not after trailing comments and blank lines. After an unterminated `"` string (`E0002`), the `(` and `[`
//!   opened earlier on the same line are closed too, so the next line is lexed
//!   as if the string had been closed at the end of its line.

use crate::ast::QuantitySuffix;
use scl_diag::{Diagnostic, Span};
use std::sync::Arc;

/// One token: its kind and its byte span in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Its byte range in the file (zero-width for tokens the lexer inserted
    /// to close an unclosed bracket).
    pub span: Span,
}

/// The kinds of tokens.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier that is not a keyword.
    Ident(crate::ast::Name),
    // Keywords.
    Import,
    As,
    Param,
    Let,
    Fn,
    Env,
    Enum,
    Extends,
    With,
    If,
    Then,
    Else,
    For,
    In,
    Where,
    True,
    False,
    /// `self`
    SelfKw,
    /// An integer literal.
    Int(i64),
    /// A float literal (`3.5`, `3e-5`).
    Float(f64),
    /// A number with a quantity suffix: the number as written and the suffix.
    Quantity {
        number: crate::ast::Name,
        suffix: QuantitySuffix,
    },
    /// A string literal without interpolation, escapes processed (and, for
    /// `"""`, dedented).
    Str(crate::ast::Name),
    /// The opening quote(s) of a string with interpolation.
    StrStart,
    /// Literal text inside an interpolated string (escapes processed).
    StrText(crate::ast::Name),
    /// `${` inside a string.
    InterpStart,
    /// The `}` closing an interpolation.
    InterpEnd,
    /// The closing quote(s) of a string with interpolation.
    StrEnd,
    /// A `///` doc comment: its text without the slashes and one leading space.
    DocComment(String),
    /// A significant newline (an item or declaration separator).
    Newline,
    /// `=`
    Eq,
    /// `+=`
    PlusEq,
    /// `-=`
    MinusEq,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `!`
    Bang,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `.`
    Dot,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `?`
    Question,
    /// `->`
    Arrow,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
}

impl TokenKind {
    /// A short human description for error messages (`` `=` ``, `newline`, `string`).
    pub fn describe(&self) -> String {
        use TokenKind::*;
        match self {
            Ident(n) => format!("`{n}`"),
            Int(i) => format!("`{i}`"),
            Float(f) => format!("`{f}`"),
            Quantity { number, suffix } => format!("`{number}{}`", suffix.as_str()),
            Str(_) | StrStart => "string".into(),
            StrText(_) => "string text".into(),
            InterpStart => "`${`".into(),
            InterpEnd => "`}`".into(),
            StrEnd => "end of string".into(),
            DocComment(_) => "doc comment".into(),
            Newline => "newline".into(),
            other => format!("`{}`", other.symbol()),
        }
    }

    /// The fixed text of a keyword or punctuation token (empty for the others).
    pub fn symbol(&self) -> &'static str {
        use TokenKind::*;
        match self {
            Import => "import",
            As => "as",
            Param => "param",
            Let => "let",
            Fn => "fn",
            Env => "env",
            Enum => "enum",
            Extends => "extends",
            With => "with",
            If => "if",
            Then => "then",
            Else => "else",
            For => "for",
            In => "in",
            Where => "where",
            True => "true",
            False => "false",
            SelfKw => "self",
            Eq => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Bang => "!",
            AndAnd => "&&",
            OrOr => "||",
            Dot => ".",
            Comma => ",",
            Colon => ":",
            Question => "?",
            Arrow => "->",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            InterpStart => "${",
            _ => "",
        }
    }

    /// True if a line ending with this token continues on the next line.
    fn continues_line(&self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            Newline
                | Eq
                | PlusEq
                | MinusEq
                | EqEq
                | NotEq
                | Lt
                | Le
                | Gt
                | Ge
                | Plus
                | Minus
                | Star
                | Slash
                | Bang
                | AndAnd
                | OrOr
                | Dot
                | Comma
                | Colon
                | Arrow
                | LParen
                | LBracket
                | LBrace
                | Then
                | Else
                | With
                | Extends
                | In
                | Where
                | As
        )
    }
}

/// The keyword for `word`, if it is one.
fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        "import" => Import,
        "as" => As,
        "param" => Param,
        "let" => Let,
        "fn" => Fn,
        "env" => Env,
        "enum" => Enum,
        "extends" => Extends,
        "with" => With,
        "if" => If,
        "then" => Then,
        "else" => Else,
        "for" => For,
        "in" => In,
        "where" => Where,
        "true" => True,
        "false" => False,
        "self" => SelfKw,
        _ => return None,
    })
}

/// True for the words that cannot be used as names or field names.
pub fn is_keyword(word: &str) -> bool {
    keyword(word).is_some()
}

/// Lexes a whole file. Never fails and never panics: the diagnostics describe
/// what was wrong, and the tokens are the lexer's best reading of the text.
pub fn lex(src: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        out: Vec::with_capacity(src.len() / 4 + 4),
        diags: Vec::new(),
        stack: Vec::new(),
        pending_nl: None,
        last_continues: true,
        aborted: false,
        flooded: false,
        scratch: Diagnostic::error("E0011", Span::new(0, 0), ""),
        hidden_first: '\0',
        hidden_count: 0,
    };
    lx.run(None);
    // Close every bracket still open at the end of the file. The closers
    // are placed at the end; the error is reported just after the last
    // token of code (as every "found end of file"), not after the comments
    // and blank lines that may follow it.
    let end = src.len();
    let code_end = lx
        .out
        .iter()
        .rev()
        .find(|t| {
            !matches!(t.kind, TokenKind::Newline | TokenKind::DocComment(_))
                && t.span.start < t.span.end
        })
        .map_or(0, |t| t.span.end as usize);
    while let Some(open) = lx.stack.pop() {
        if lx.aborted {
            let at = Span::new(end, end);
            lx.out.push(Token {
                kind: open.delim.close_kind(),
                span: at,
            });
        } else {
            let at = code_end.max(open.span.end as usize);
            let n = lx.diags.len();
            lx.unclosed(open, Span::new(end, end));
            if lx.diags.len() > n {
                lx.diags[n].at.span = Span::new(at, at);
            }
        }
    }
    (lx.out, lx.diags)
}

/// The deepest nesting of brackets and interpolations the lexer accepts.
const MAX_DEPTH: usize = crate::MAX_NESTING;

/// The most diagnostics the lexer records for one file before it stops
/// reading it (`E0011`); ten times what a front end shows of a file.
pub const MAX_LEX_ERRORS: usize = 1000;

/// `E0011` at byte `at`: more than [`MAX_LEX_ERRORS`] syntax errors, the
/// rest of the file (from `at`) is not read. The lexer and the parser stop
/// at the same count (the parser counts the lexer's errors too).
pub(crate) fn too_many_errors(at: usize) -> Diagnostic {
    Diagnostic::error(
        "E0011",
        Span::new(at, at),
        format!("more than {MAX_LEX_ERRORS} syntax errors: the rest of the file is not read"),
    )
    .with_help("fix the first errors; this file may not be SCL source (a binary, a file saved in another encoding)")
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Delim {
    Paren,
    Bracket,
    Brace,
    /// `${` of an interpolation; `true` inside a `"""` string.
    Interp(bool),
}

impl Delim {
    fn open_str(self) -> &'static str {
        match self {
            Delim::Paren => "(",
            Delim::Bracket => "[",
            Delim::Brace => "{",
            Delim::Interp(_) => "${",
        }
    }
    fn close_str(self) -> &'static str {
        match self {
            Delim::Paren => ")",
            Delim::Bracket => "]",
            Delim::Brace | Delim::Interp(_) => "}",
        }
    }
    fn close_kind(self) -> TokenKind {
        match self {
            Delim::Paren => TokenKind::RParen,
            Delim::Bracket => TokenKind::RBracket,
            Delim::Brace => TokenKind::RBrace,
            Delim::Interp(_) => TokenKind::InterpEnd,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Open {
    delim: Delim,
    span: Span,
}

/// Why [`Lexer::run`] returned.
enum Stop {
    Eof,
    /// The `}` of the interpolation being lexed was consumed (its offset).
    InterpClosed(usize),
    /// A newline inside the interpolation of a one-line string (not consumed).
    Newline,
}

/// A piece of a string while it is being lexed.
enum Piece {
    Text(String, usize, usize),
    /// Leading whitespace of a line of a `"""` string (raw).
    Indent(String, usize),
    /// A raw newline of a `"""` string.
    Newline(usize),
    /// `${ ... }`: the span of `${`, the tokens, the span of `}`.
    Interp(Span, Vec<Token>, Span),
}

/// Whether byte `b` of a string literal stands for itself: printable
/// ASCII that ends nothing and starts no escape or interpolation (a hidden
/// character is not ASCII, so none needs a report).
#[inline]
fn plain_string_byte(b: u8) -> bool {
    (b' '..=b'~').contains(&b) && !matches!(b, b'"' | b'\\' | b'$')
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Vec<Token>,
    diags: Vec<Diagnostic>,
    stack: Vec<Open>,
    /// A significant newline seen but not emitted yet (it is dropped when the
    /// next token is `then`, `else` or `with`).
    pending_nl: Option<Span>,
    /// Set once the nesting limit was hit: the rest of the file is skipped.
    aborted: bool,
    /// Set once [`MAX_LEX_ERRORS`] diagnostics were recorded (see [`Lexer::emit`]).
    flooded: bool,
    /// Where additions to a diagnostic past the limit go.
    scratch: Diagnostic,
    /// The first character and the length of the run of hidden characters
    /// the last E0010 reports.
    hidden_first: char,
    hidden_count: usize,
    /// True if the last emitted token lets the line continue (see
    /// [`TokenKind::continues_line`]), or nothing was emitted yet.
    last_continues: bool,
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }
    fn peek_at(&self, n: usize) -> Option<u8> {
        self.bytes.get(self.pos + n).copied()
    }

    /// Emits a token, first flushing a pending newline.
    fn push(&mut self, kind: TokenKind, span: Span) {
        if let Some(nl) = self.pending_nl.take() {
            if !matches!(kind, TokenKind::Then | TokenKind::Else | TokenKind::With) {
                self.out.push(Token {
                    kind: TokenKind::Newline,
                    span: nl,
                });
            }
        }
        self.last_continues = kind.continues_line();
        self.out.push(Token { kind, span });
    }

    fn error(&mut self, code: &'static str, span: Span, msg: impl Into<String>) -> &mut Diagnostic {
        self.emit(Diagnostic::error(code, span, msg));
        if self.flooded {
            // Past the limit: the caller's additions go nowhere.
            self.scratch = Diagnostic::error(code, span, "");
            return &mut self.scratch;
        }
        self.diags.last_mut().unwrap()
    }

    /// Records a diagnostic. After [`MAX_LEX_ERRORS`] of them the lexer
    /// reports `E0011` once and stops reading the file: every later
    /// diagnostic would cost memory and time for nothing a reader can use.
    fn emit(&mut self, d: Diagnostic) {
        if self.flooded {
            return;
        }
        if self.diags.len() < MAX_LEX_ERRORS {
            self.diags.push(d);
            return;
        }
        self.diags.push(too_many_errors(d.at.span.start as usize));
        self.flooded = true;
        self.aborted = true;
        self.pos = self.src.len();
    }

    /// Reports the hidden characters of `self.src[from..to]` (E0010), a run
    /// of adjacent ones as one diagnostic. A byte order mark at offset 0 is
    /// not hidden (the database blanks it before lexing, other callers may
    /// not).
    fn hidden_chars(&mut self, from: usize, to: usize) {
        let text = &self.src[from..to];
        // Every hidden character starts with a control byte or one of these
        // lead bytes (see `scl_diag::is_hidden`): skip the rest cheaply.
        if !text.bytes().any(|b| {
            (b < 0x20 && b != b'\t' && b != b'\n')
                || matches!(
                    b,
                    0x7f | 0xc2 | 0xcd | 0xd8 | 0xe1 | 0xe2 | 0xe3 | 0xef | 0xf0 | 0xf3
                )
        }) {
            return;
        }
        let mut run: Option<(usize, usize, char, usize)> = None; // start, end, first, count
        for (i, c) in text.char_indices() {
            let at = from + i;
            if scl_diag::is_hidden_at(self.src, at, c) {
                match &mut run {
                    Some((_, end, _, n)) if *end == at => {
                        *end = at + c.len_utf8();
                        *n += 1;
                    }
                    _ => {
                        if let Some(r) = run.take() {
                            self.hidden_run(r);
                        }
                        run = Some((at, at + c.len_utf8(), c, 1));
                    }
                }
            }
        }
        if let Some(r) = run {
            self.hidden_run(r);
        }
    }

    fn hidden_run(&mut self, (mut start, end, mut first, mut n): (usize, usize, char, usize)) {
        // A run continued from the previous diagnostic (a hidden character
        // right after another, found by another path) extends it.
        // (The run's length is kept beside it: counting it again at each
        // extension would be quadratic in the run.)
        if let Some(prev) = self.diags.last() {
            if prev.code == "E0010" && prev.at.span.end as usize == start && !self.flooded {
                start = prev.at.span.start as usize;
                (first, n) = (self.hidden_first, self.hidden_count + n);
                self.diags.pop();
            }
        }
        (self.hidden_first, self.hidden_count) = (first, n);
        let what = scl_diag::describe_char(first);
        let message = if n == 1 {
            format!("invisible character {what}")
        } else {
            format!("{n} invisible characters, the first {what}")
        };
        let help = if scl_diag::is_bidi(first) {
            "delete it: a bidirectional control can make code display in another order than it is read (\"Trojan Source\")"
        } else {
            "delete it; in a string, write `\\n` for a line break and `\\t` for a tab"
        };
        self.error("E0010", Span::new(start, end), message).help = Some(help.into());
    }

    /// True if a newline here separates items (innermost bracket is `{` or none).
    fn newline_significant(&self) -> bool {
        matches!(
            self.stack.last(),
            None | Some(Open {
                delim: Delim::Brace,
                ..
            })
        )
    }

    /// Reports an unclosed bracket and emits its zero-width closer at `at`.
    fn unclosed(&mut self, open: Open, at: Span) {
        let o = open.delim.open_str();
        let c = open.delim.close_str();
        let d = Diagnostic::error("E0006", at, format!("unclosed `{o}`"))
            .with_primary_label(format!("expected `{c}`"))
            .with_label(
                Arc::from(""),
                open.span,
                format!("this `{o}` is never closed"),
            )
            .with_help(format!("add the missing `{c}`"));
        self.emit(d);
        if let Delim::Interp(_) = open.delim {
            // Interpolations are closed by the string lexer.
            return;
        }
        let span = Span::new(at.start as usize, at.start as usize);
        self.pending_nl = None;
        self.last_continues = false;
        self.out.push(Token {
            kind: open.delim.close_kind(),
            span,
        });
    }

    /// The main loop: lexes tokens until the end of the file, or, inside an
    /// interpolation (`interp` is `Some(multiline)`), until its closing `}`.
    fn run(&mut self, interp: Option<bool>) -> Stop {
        while let Some(b) = self.peek() {
            let start = self.pos;
            match b {
                b' ' | b'\t' => self.pos += 1,
                b'\r' => {
                    if self.peek_at(1) != Some(b'\n') {
                        self.hidden_chars(start, start + 1);
                    }
                    self.pos += 1;
                }
                b'\n' => {
                    if interp == Some(false) {
                        return Stop::Newline;
                    }
                    if self.newline_significant()
                        && !self.last_continues
                        && self.pending_nl.is_none()
                    {
                        self.pending_nl = Some(Span::new(start, start + 1));
                    }
                    self.pos += 1;
                }
                b'/' if self.peek_at(1) == Some(b'/') => self.comment(),
                b'"' => self.string(),
                b'0'..=b'9' => self.number(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    while matches!(
                        self.peek(),
                        Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_')
                    ) {
                        self.pos += 1;
                    }
                    let word = &self.src[start..self.pos];
                    let kind = keyword(word)
                        .unwrap_or_else(|| TokenKind::Ident(crate::ast::Name::new(word)));
                    if interp.is_none()
                        && !self.stack.is_empty()
                        && start > 0
                        && self.bytes[start - 1] == b'\n'
                        && matches!(
                            kind,
                            TokenKind::Import
                                | TokenKind::Param
                                | TokenKind::Let
                                | TokenKind::Fn
                                | TokenKind::Env
                                | TokenKind::Enum
                        )
                    {
                        // A declaration keyword at the start of a line while
                        // brackets are open: they were never closed. Close them
                        // here so the declaration parses at top level.
                        let at = Span::new(start, start);
                        while let Some(open) = self.stack.pop() {
                            self.unclosed(open, at);
                        }
                        self.pending_nl = Some(Span::new(start - 1, start));
                    }
                    self.push(kind, Span::new(start, self.pos));
                }
                b'(' | b'[' | b'{' if self.too_deep() => {}
                b'(' | b'[' | b'{' => {
                    let (delim, kind) = match b {
                        b'(' => (Delim::Paren, TokenKind::LParen),
                        b'[' => (Delim::Bracket, TokenKind::LBracket),
                        _ => (Delim::Brace, TokenKind::LBrace),
                    };
                    self.pos += 1;
                    let span = Span::new(start, self.pos);
                    self.push(kind, span);
                    self.stack.push(Open { delim, span });
                }
                b')' | b']' | b'}' => {
                    let delim = match b {
                        b')' => Delim::Paren,
                        b']' => Delim::Bracket,
                        _ => Delim::Brace,
                    };
                    self.pos += 1;
                    if let Some(stop) = self.close(delim, Span::new(start, self.pos)) {
                        return stop;
                    }
                }
                _ => self.operator(),
            }
        }
        Stop::Eof
    }

    /// At an opening bracket: if the nesting limit is reached, reports it
    /// once and skips the rest of the file (deeper nesting would only
    /// exhaust the stack of the later stages).
    fn too_deep(&mut self) -> bool {
        if self.stack.len() < MAX_DEPTH {
            return false;
        }
        if !self.aborted {
            let at = self.pos;
            self.emit(crate::parser::too_deep(Span::new(at, at + 1)));
        }
        self.aborted = true;
        self.pos = self.src.len();
        true
    }

    /// Handles a closing bracket. Returns `Some` when it closes the
    /// interpolation being lexed.
    fn close(&mut self, delim: Delim, span: Span) -> Option<Stop> {
        // The innermost matching opener, not looking past an interpolation.
        let mut found = None;
        for (i, open) in self.stack.iter().enumerate().rev() {
            if open.delim == delim {
                found = Some(i);
                break;
            }
            if delim == Delim::Brace {
                if let Delim::Interp(_) = open.delim {
                    found = Some(i);
                    break;
                }
            }
            if let Delim::Interp(_) = open.delim {
                break;
            }
        }
        match found {
            None => {
                // A stray closer: reported and dropped, so that the token
                // stream stays balanced.
                // A run of them is one error (a file of 40,000 `)` is one
                // problem, not 40,000).
                let c = delim.close_str();
                let message = format!("unexpected `{c}`");
                if let Some(prev) = self.diags.last_mut() {
                    if prev.message == message && prev.at.span.end == span.start {
                        prev.at.span.end = span.end;
                        prev.primary_label =
                            Some(format!("no matching opening bracket for these `{c}`"));
                        return None;
                    }
                }
                let d = Diagnostic::error("E0001", span, message)
                    .with_primary_label(format!("no matching opening bracket for this `{c}`"));
                self.emit(d);
                None
            }
            Some(i) => {
                while self.stack.len() > i + 1 {
                    let open = self.stack.pop().unwrap();
                    self.unclosed(open, span);
                }
                let open = self.stack.pop().unwrap();
                if let Delim::Interp(_) = open.delim {
                    return Some(Stop::InterpClosed(span.start as usize));
                }
                self.push(delim.close_kind(), span);
                None
            }
        }
    }

    fn comment(&mut self) {
        let start = self.pos;
        let end = self.src[start..]
            .find('\n')
            .map_or(self.src.len(), |i| start + i);
        self.hidden_chars(start, end);
        let text = &self.src[start..end];
        self.pos = end;
        if text.starts_with("///") && !text.starts_with("////") {
            let body = &text[3..];
            let body = body.strip_prefix(' ').unwrap_or(body).trim_end();
            // A doc comment lets a pending newline through, so the token
            // stream reads `... NEWLINE DOC decl`.
            if let Some(nl) = self.pending_nl.take() {
                self.out.push(Token {
                    kind: TokenKind::Newline,
                    span: nl,
                });
                self.last_continues = true;
            }
            self.out.push(Token {
                kind: TokenKind::DocComment(body.to_string()),
                span: Span::new(start, end),
            });
        }
    }

    fn operator(&mut self) {
        use TokenKind::*;
        let start = self.pos;
        let b = self.bytes[start];
        let next = self.peek_at(1);
        let (kind, len) = match (b, next) {
            (b'=', Some(b'=')) => (EqEq, 2),
            (b'=', _) => (Eq, 1),
            (b'+', Some(b'=')) => (PlusEq, 2),
            (b'+', _) => (Plus, 1),
            (b'-', Some(b'=')) => (MinusEq, 2),
            (b'-', Some(b'>')) => (Arrow, 2),
            (b'-', _) => (Minus, 1),
            (b'!', Some(b'=')) => (NotEq, 2),
            (b'!', _) => (Bang, 1),
            (b'<', Some(b'=')) => (Le, 2),
            (b'<', _) => (Lt, 1),
            (b'>', Some(b'=')) => (Ge, 2),
            (b'>', _) => (Gt, 1),
            (b'&', Some(b'&')) => (AndAnd, 2),
            (b'|', Some(b'|')) => (OrOr, 2),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'.', _) => (Dot, 1),
            (b',', _) => (Comma, 1),
            (b':', _) => (Colon, 1),
            (b'?', _) => (Question, 1),
            _ => {
                let ch = self.src[start..].chars().next().unwrap_or('\u{fffd}');
                let len = ch.len_utf8().max(1);
                self.pos += len;
                if scl_diag::is_hidden(ch) {
                    self.hidden_chars(start, start + len);
                    return;
                }
                let shown = if ch.is_control() {
                    format!("{:?}", ch)
                } else {
                    format!("`{ch}`")
                };
                let help = match ch {
                    '&' => Some("use `&&` for logical and"),
                    '|' => Some("use `||` for logical or"),
                    ';' => Some("items are separated by newlines or commas"),
                    '\'' => Some("strings use double quotes: \"...\""),
                    '#' => Some("comments start with `//`"),
                    _ => None,
                };
                let message = format!("unexpected character {shown}");
                // A run of one character is one error (a file of `#`).
                if let Some(prev) = self.diags.last_mut() {
                    if prev.code == "E0001"
                        && prev.message == message
                        && prev.at.span.end as usize == start
                    {
                        prev.at.span.end = (start + len) as u32;
                        return;
                    }
                }
                let d = self.error("E0001", Span::new(start, start + len), message);
                if let Some(h) = help {
                    d.help = Some(h.to_string());
                }
                return;
            }
        };
        self.pos += len;
        self.push(kind, Span::new(start, start + len));
    }

    fn number(&mut self) {
        let start = self.pos;
        let digits = |lx: &mut Lexer| {
            while matches!(lx.peek(), Some(b'0'..=b'9' | b'_')) {
                lx.pos += 1;
            }
        };
        digits(self);
        let mut is_float = false;
        if self.peek() == Some(b'.') && matches!(self.peek_at(1), Some(b'0'..=b'9')) {
            self.pos += 1;
            digits(self);
            is_float = true;
        }
        if self.peek() == Some(b'e') {
            let sign = matches!(self.peek_at(1), Some(b'+' | b'-')) as usize;
            if matches!(self.peek_at(1 + sign), Some(b'0'..=b'9')) {
                self.pos += 1 + sign;
                digits(self);
                is_float = true;
            }
        }
        let num_end = self.pos;
        let number: String = self.src[start..num_end]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        // A suffix directly after the number.
        let suf_start = self.pos;
        while matches!(
            self.peek(),
            Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_')
        ) {
            self.pos += 1;
        }
        let suffix = &self.src[suf_start..self.pos];
        let span = Span::new(start, self.pos);
        let plain = |lx: &mut Lexer| -> TokenKind {
            if is_float {
                TokenKind::Float(number.parse().unwrap_or(0.0))
            } else {
                match number.parse::<i64>() {
                    Ok(i) => TokenKind::Int(i),
                    Err(_) => {
                        lx.error(
                            "E0005",
                            Span::new(start, num_end),
                            "integer literal is too large",
                        )
                        .help = Some(
                            "integers are 64-bit; use a quantity suffix for large sizes (`64Gi`)"
                                .into(),
                        );
                        TokenKind::Int(0)
                    }
                }
            }
        };
        if suffix.is_empty() {
            let kind = plain(self);
            self.push(kind, span);
            return;
        }
        let q = match suffix {
            "Ki" => Some(QuantitySuffix::Binary(1)),
            "Mi" => Some(QuantitySuffix::Binary(2)),
            "Gi" => Some(QuantitySuffix::Binary(3)),
            "Ti" => Some(QuantitySuffix::Binary(4)),
            "Pi" => Some(QuantitySuffix::Binary(5)),
            "Ei" => Some(QuantitySuffix::Binary(6)),
            "k" => Some(QuantitySuffix::Decimal(1)),
            "M" => Some(QuantitySuffix::Decimal(2)),
            "G" => Some(QuantitySuffix::Decimal(3)),
            "T" => Some(QuantitySuffix::Decimal(4)),
            "P" => Some(QuantitySuffix::Decimal(5)),
            "E" => Some(QuantitySuffix::Decimal(6)),
            "m" => Some(QuantitySuffix::Milli),
            _ => None,
        };
        match q {
            Some(suffix) => self.push(
                TokenKind::Quantity {
                    number: number.into(),
                    suffix,
                },
                span,
            ),
            None => {
                let sspan = Span::new(suf_start, self.pos);
                if suffix.starts_with('e') && !is_float {
                    self.error(
                        "E0005",
                        span,
                        format!("malformed exponent in `{}`", &self.src[start..self.pos]),
                    )
                    .help =
                        Some("an exponent is `e`, an optional sign, then digits: `3e-5`".into());
                } else {
                    let hint = match suffix {
                        "GB" | "gb" | "g" | "Gb" | "GiB" => Some("Gi"),
                        "MB" | "mb" | "Mb" | "MiB" => Some("Mi"),
                        "KB" | "kb" | "K" | "Kb" | "KiB" => Some("Ki"),
                        "TB" | "tb" | "Tb" | "TiB" => Some("Ti"),
                        _ => None,
                    };
                    let msg = format!(
                        "unknown quantity suffix `{suffix}` in `{}`",
                        &self.src[start..self.pos]
                    );
                    let help = match hint {
                        Some(h) => format!(
                            "write `{}{h}` (binary) or `{}{}` (decimal); suffixes are Ki Mi Gi Ti Pi Ei, k M G T P E and m",
                            &self.src[start..num_end],
                            &self.src[start..num_end],
                            &h[..1]
                        ),
                        None => "quantity suffixes are Ki Mi Gi Ti Pi Ei (binary), k M G T P E (decimal) and m (milli)".into(),
                    };
                    let _ = sspan;
                    let d = Diagnostic::error("E0005", span, msg)
                        .with_primary_label("unknown suffix")
                        .with_help(help);
                    self.emit(d);
                }
                let kind = plain(self);
                self.push(kind, span);
            }
        }
    }

    /// Lexes a string literal starting at `"` or `"""`.
    fn string(&mut self) {
        let start = self.pos;
        let triple = self.src[start..].starts_with("\"\"\"");
        let q = if triple { 3 } else { 1 };
        self.pos += q;
        // The usual literal (`"pkg-5"`, an import's path): printable ASCII
        // up to the closing quote, nothing to unescape, interpolate or
        // report (a hidden character is not ASCII). Its text is the slice
        // itself: nothing is built piece by piece.
        if !triple {
            let rest = &self.bytes[self.pos..];
            let plain = rest.iter().position(|&b| !plain_string_byte(b));
            if let Some(n) = plain.filter(|&n| rest[n] == b'"') {
                let text = crate::ast::Name::new(&self.src[self.pos..self.pos + n]);
                self.pos += n + 1;
                self.push(TokenKind::Str(text), Span::new(start, self.pos));
                return;
            }
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut buf = String::new();
        let mut buf_start = self.pos;
        let mut terminated = false;
        let mut reported = false;
        macro_rules! flush {
            () => {
                if !buf.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut buf), buf_start, self.pos));
                }
            };
        }
        while let Some(b) = self.peek() {
            match b {
                b'"' if !triple => {
                    flush!();
                    self.pos += 1;
                    terminated = true;
                    break;
                }
                b'"' if self.src[self.pos..].starts_with("\"\"\"") => {
                    flush!();
                    self.pos += 3;
                    terminated = true;
                    break;
                }
                b'\r' if self.peek_at(1) == Some(b'\n') => self.pos += 1,
                b'\n' if !triple => break,
                b'\n' => {
                    flush!();
                    pieces.push(Piece::Newline(self.pos));
                    self.pos += 1;
                    let ws_start = self.pos;
                    while matches!(self.peek(), Some(b' ' | b'\t')) {
                        self.pos += 1;
                    }
                    pieces.push(Piece::Indent(
                        self.src[ws_start..self.pos].to_string(),
                        ws_start,
                    ));
                    buf_start = self.pos;
                }
                b'\\' => {
                    if buf.is_empty() {
                        buf_start = self.pos;
                    }
                    let esc_start = self.pos;
                    self.pos += 1;
                    let Some(c) = self.src[self.pos..].chars().next() else {
                        continue;
                    };
                    if c == '\n' {
                        // Leave the newline to the loop (unterminated or a raw newline).
                        self.error(
                            "E0004",
                            Span::new(esc_start, self.pos),
                            "unknown escape `\\` at the end of a line",
                        )
                        .help = Some("write `\\\\` for a backslash".into());
                        buf.push('\\');
                        continue;
                    }
                    self.pos += c.len_utf8();
                    match c {
                        'n' => buf.push('\n'),
                        't' => buf.push('\t'),
                        '"' => buf.push('"'),
                        '\\' => buf.push('\\'),
                        '$' => buf.push('$'),
                        _ => {
                            let shown: String = if c.is_control() {
                                format!("{:?}", c)
                            } else {
                                c.to_string()
                            };
                            self.error("E0004", Span::new(esc_start, self.pos), format!("unknown escape `\\{shown}`"))
                                .help = Some("known escapes are \\n \\t \\\" \\\\ \\$; write `\\\\` for a backslash".into());
                            buf.push('\\');
                            buf.push(c);
                        }
                    }
                }
                b'$' if self.peek_at(1) == Some(b'{') => {
                    flush!();
                    if self.too_deep() {
                        break;
                    }
                    let open = Span::new(self.pos, self.pos + 2);
                    self.pos += 2;
                    let saved_out = std::mem::take(&mut self.out);
                    let saved_nl = self.pending_nl.take();
                    let saved_cont = self.last_continues;
                    self.last_continues = true;
                    let depth = self.stack.len();
                    self.stack.push(Open {
                        delim: Delim::Interp(triple),
                        span: open,
                    });
                    let stop = self.run(Some(triple));
                    let mut inner = std::mem::replace(&mut self.out, saved_out);
                    self.pending_nl = saved_nl;
                    self.last_continues = saved_cont;
                    match stop {
                        Stop::InterpClosed(close) => {
                            let close = Span::new(close, close + 1);
                            if inner.is_empty() {
                                self.error("E0003", open.to(close), "empty interpolation `${}`")
                                    .help = Some("put an expression between `${` and `}`, or write `\\$` for a literal dollar sign".into());
                            } else {
                                pieces.push(Piece::Interp(open, inner, close));
                            }
                        }
                        Stop::Newline | Stop::Eof => {
                            // Close what the interpolation left open, then the interpolation.
                            let at = Span::new(self.pos, self.pos);
                            while self.stack.len() > depth + 1 {
                                let o = self.stack.pop().unwrap();
                                inner.push(Token {
                                    kind: o.delim.close_kind(),
                                    span: at,
                                });
                            }
                            self.stack.truncate(depth);
                            let d = Diagnostic::error("E0003", open, "unterminated interpolation: expected `}`")
                                .with_label(Arc::from(""), at, "the string ends here")
                                .with_help("close the interpolation with `}`, or write `\\$` for a literal dollar sign");
                            if !self.aborted {
                                self.emit(d);
                            }
                            reported = true;
                            if inner.is_empty() {
                                inner.push(Token {
                                    kind: TokenKind::Ident(crate::ast::Name::default()),
                                    span: at,
                                });
                            }
                            pieces.push(Piece::Interp(open, inner, at));
                            break;
                        }
                    }
                    buf_start = self.pos;
                }
                _ => {
                    if buf.is_empty() {
                        buf_start = self.pos;
                    }
                    // A run of printable ASCII that ends nothing and starts
                    // no escape or interpolation (most of a string): copied
                    // in one piece. Anything else goes a character at a time.
                    let run = self.bytes[self.pos..]
                        .iter()
                        .take_while(|&&b| plain_string_byte(b))
                        .count();
                    if run > 0 {
                        buf.push_str(&self.src[self.pos..self.pos + run]);
                        self.pos += run;
                        continue;
                    }
                    let c = self.src[self.pos..].chars().next().unwrap_or('\u{fffd}');
                    if scl_diag::is_hidden(c) {
                        self.hidden_chars(self.pos, self.pos + c.len_utf8());
                    }
                    buf.push(c);
                    self.pos += c.len_utf8().max(1);
                }
            }
        }
        if !terminated {
            flush!();
            if !reported && !self.aborted {
                let what = if triple {
                    "the end of the file"
                } else {
                    "the end of the line"
                };
                let closer = if triple { "\"\"\"" } else { "\"" };
                let d = Diagnostic::error("E0002", Span::new(start, start + q), "unterminated string")
                    .with_primary_label("this string is never closed")
                    .with_label(Arc::from(""), Span::new(self.pos, self.pos), format!("{what} is here"))
                    .with_help(if triple {
                        format!("close the string with `{closer}`")
                    } else {
                        format!("close the string with `{closer}`; use `\"\"\"` for strings that span lines")
                    });
                self.emit(d);
            }
        }
        let end = self.pos;
        if triple {
            dedent(&mut pieces);
        }
        self.emit_string(start, end, q, terminated, pieces);
        if !terminated && !triple {
            // Recover: close the `(` and `[` opened earlier on this line, so the
            // next line is lexed as if the string had ended with its line.
            let line_start = self.src[..start].rfind('\n').map_or(0, |i| i + 1);
            while let Some(open) = self.stack.last().copied() {
                if matches!(open.delim, Delim::Paren | Delim::Bracket)
                    && open.span.start as usize >= line_start
                {
                    self.stack.pop();
                    self.push(open.delim.close_kind(), Span::new(end, end));
                } else {
                    break;
                }
            }
        }
    }

    /// Emits the tokens of a lexed string (`q` quotes open it; `closed` if
    /// the same quotes close it, else its `StrEnd` is zero-width at `end`).
    fn emit_string(
        &mut self,
        start: usize,
        end: usize,
        q: usize,
        closed: bool,
        pieces: Vec<Piece>,
    ) {
        let has_interp = pieces.iter().any(|p| matches!(p, Piece::Interp(..)));
        if !has_interp {
            let mut text = String::new();
            for p in pieces {
                match p {
                    Piece::Text(t, ..) | Piece::Indent(t, _) => text.push_str(&t),
                    Piece::Newline(_) => text.push('\n'),
                    Piece::Interp(..) => {}
                }
            }
            self.push(TokenKind::Str(text.into()), Span::new(start, end));
            return;
        }
        self.push(TokenKind::StrStart, Span::new(start, start + q));
        let mut text = String::new();
        let mut text_span: Option<Span> = None;
        let flush = |out: &mut Vec<Token>, text: &mut String, text_span: &mut Option<Span>| {
            if let Some(sp) = text_span.take() {
                if !text.is_empty() {
                    out.push(Token {
                        kind: TokenKind::StrText(crate::ast::Name::new(text.as_str())),
                        span: sp,
                    });
                }
                text.clear();
            }
        };
        for p in pieces {
            let (t, sp) = match p {
                Piece::Text(t, s, e) => (t, Span::new(s, e)),
                Piece::Indent(t, s) => {
                    let l = t.len();
                    (t, Span::new(s, s + l))
                }
                Piece::Newline(s) => ("\n".to_string(), Span::new(s, s + 1)),
                Piece::Interp(open, toks, close) => {
                    flush(&mut self.out, &mut text, &mut text_span);
                    self.out.push(Token {
                        kind: TokenKind::InterpStart,
                        span: open,
                    });
                    self.out.extend(toks);
                    self.out.push(Token {
                        kind: TokenKind::InterpEnd,
                        span: close,
                    });
                    continue;
                }
            };
            text.push_str(&t);
            text_span = Some(match text_span {
                Some(s) => s.to(sp),
                None => sp,
            });
        }
        flush(&mut self.out, &mut text, &mut text_span);
        let close_start = if closed {
            end.saturating_sub(q).max(start)
        } else {
            end
        };
        self.out.push(Token {
            kind: TokenKind::StrEnd,
            span: Span::new(close_start, end),
        });
        self.last_continues = false;
    }
}

/// The `"""` rules: drop the newline right after the opening quotes; when the
/// closing quotes stand on their own line, drop the newline before them and
/// count their indentation; then remove the common indentation of the
/// non-blank lines from every line.
fn dedent(pieces: &mut Vec<Piece>) {
    if matches!(pieces.first(), Some(Piece::Newline(_))) {
        pieces.remove(0);
    }
    let mut closing_indent: Option<usize> = None;
    let n = pieces.len();
    if n >= 2 {
        if let (Piece::Newline(_), Piece::Indent(ws, _)) = (&pieces[n - 2], &pieces[n - 1]) {
            closing_indent = Some(ws.chars().count());
            pieces.truncate(n - 2);
        }
    }
    // Common indentation over the non-blank lines.
    let mut common = closing_indent;
    let mut line_indent = 0usize;
    let mut blank = true;
    let consider = |common: &mut Option<usize>, indent: usize, blank: bool| {
        if !blank {
            *common = Some(common.map_or(indent, |c| c.min(indent)));
        }
    };
    for p in pieces.iter() {
        match p {
            Piece::Newline(_) => {
                consider(&mut common, line_indent, blank);
                line_indent = 0;
                blank = true;
            }
            Piece::Indent(ws, _) => line_indent = ws.chars().count(),
            Piece::Text(t, ..) => {
                if !t.is_empty() {
                    blank = false;
                }
            }
            Piece::Interp(..) => blank = false,
        }
    }
    consider(&mut common, line_indent, blank);
    let common = common.unwrap_or(0);
    if common == 0 {
        return;
    }
    for p in pieces.iter_mut() {
        if let Piece::Indent(ws, s) = p {
            let cut: usize = ws.chars().take(common).map(|c| c.len_utf8()).sum();
            *ws = ws[cut..].to_string();
            *s += cut;
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_hidden_character_is_e0010_in_strings_comments_and_code() {
        // The lexer skips text without the lead byte of a hidden character;
        // every one of them must still be found, in each place it can be.
        for c in (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| scl_diag::is_hidden(*c))
        {
            if c == '\r' {
                continue; // before a `\n` it is a line end; alone, tested elsewhere
            }
            for src in [
                format!("let a = \"x{c}y\"\n"),
                format!("// x{c}y\n"),
                format!("let a = 1 {c}\n"),
            ] {
                let (_, diags) = lex(&src);
                assert!(
                    diags.iter().any(|d| d.code == "E0010"),
                    "U+{:04X} in {src:?}: {diags:?}",
                    c as u32
                );
            }
        }
    }

    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(src).0.into_iter().map(|t| t.kind).collect()
    }

    /// A plain literal (taken as its slice) lexes as the same literal
    /// followed by an escape does (built piece by piece), but for the
    /// escape; and a literal the slice cannot take (`$`, a tab, a non-ASCII
    /// character, no closing quote) still lexes piece by piece.
    #[test]
    fn plain_string_literals_are_their_slices() {
        let bodies = [
            "",
            "a",
            "pkg-5",
            "./base.env.scl",
            "a b  c",
            "{}[]()=+-*/.,:;'`~!@#%^&|<>?",
            "x".repeat(23).as_str(),
            "y".repeat(24).as_str(),
            "sk-0123456789abcdefghijklmnopqrstuv",
        ]
        .map(str::to_string);
        for body in bodies {
            let fast = lex(&format!("x = \"{body}\" + y"));
            let slow = lex(&format!("x = \"{body}\\t\" + y"));
            assert!(fast.1.is_empty() && slow.1.is_empty(), "{body:?}");
            let text = |t: &[Token]| match &t[2].kind {
                TokenKind::Str(s) => s.to_string(),
                other => panic!("{other:?}"),
            };
            assert_eq!(text(&fast.0), body);
            assert_eq!(text(&slow.0), format!("{body}\t"));
            assert_eq!(fast.0[2].span, Span::new(4, 6 + body.len()), "{body:?}");
            let after = |t: &[Token]| t[3..].iter().map(|t| t.kind.clone()).collect::<Vec<_>>();
            assert_eq!(after(&fast.0), after(&slow.0));
        }
        assert_eq!(kinds("\"a\tb\""), vec![TokenKind::Str("a\tb".into())]);
        assert_eq!(kinds("\"café\""), vec![TokenKind::Str("café".into())]);
        assert_eq!(kinds("\"$x\""), vec![TokenKind::Str("$x".into())]);
        assert!(matches!(kinds("\"a${b}\"")[0], TokenKind::StrStart));
        let (_, diags) = lex("x = \"abc\n");
        assert_eq!(diags.len(), 1, "{diags:?}");
    }

    #[test]
    fn newlines_follow_brackets() {
        use TokenKind::*;
        assert_eq!(
            kinds("a = [\n1,\n2\n]\nb = f(\nx)\n"),
            vec![
                Ident("a".into()),
                Eq,
                LBracket,
                Int(1),
                Comma,
                Int(2),
                RBracket,
                Newline,
                Ident("b".into()),
                Eq,
                Ident("f".into()),
                LParen,
                Ident("x".into()),
                RParen,
            ]
        );
        assert_eq!(
            kinds("x = if a\n then b\n else c\ny = 1 +\n 2"),
            vec![
                Ident("x".into()),
                Eq,
                If,
                Ident("a".into()),
                Then,
                Ident("b".into()),
                Else,
                Ident("c".into()),
                Newline,
                Ident("y".into()),
                Eq,
                Int(1),
                Plus,
                Int(2),
            ]
        );
    }

    #[test]
    fn nested_string_in_interpolation() {
        use TokenKind::*;
        let (toks, diags) = lex(r#""${join(xs, ",")}!""#);
        assert!(diags.is_empty(), "{diags:?}");
        let k: Vec<_> = toks.into_iter().map(|t| t.kind).collect();
        assert_eq!(
            k,
            vec![
                StrStart,
                InterpStart,
                Ident("join".into()),
                LParen,
                Ident("xs".into()),
                Comma,
                Str(",".into()),
                RParen,
                InterpEnd,
                StrText("!".into()),
                StrEnd
            ]
        );
    }

    #[test]
    fn triple_dedent() {
        let src = "x = \"\"\"\n    a\n      b\n\n    c\n    \"\"\"";
        let (toks, diags) = lex(src);
        assert!(diags.is_empty());
        assert_eq!(toks[2].kind, TokenKind::Str("a\n  b\n\nc".into()));
        let src = "x = \"\"\"\n    a\n  \"\"\"";
        assert_eq!(lex(src).0[2].kind, TokenKind::Str("  a".into()));
        let src = "x = \"\"\"one\"\"\"";
        assert_eq!(lex(src).0[2].kind, TokenKind::Str("one".into()));
    }

    #[test]
    fn quantities() {
        use TokenKind::*;
        assert_eq!(
            kinds("32Gi 1.5 3e-5 500m 4G"),
            vec![
                Quantity {
                    number: "32".into(),
                    suffix: QuantitySuffix::Binary(3)
                },
                Float(1.5),
                Float(3e-5),
                Quantity {
                    number: "500".into(),
                    suffix: QuantitySuffix::Milli
                },
                Quantity {
                    number: "4".into(),
                    suffix: QuantitySuffix::Decimal(3)
                },
            ]
        );
        let (t, d) = lex("4GB");
        assert_eq!(t[0].kind, Int(4));
        assert_eq!(d[0].code, "E0005");
    }
}
