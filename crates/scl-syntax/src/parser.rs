//! The parser: hand-written recursive descent over the tokens of
//! [`crate::lex`].
//!
//! The grammar is written down in `grammar/scl.ebnf`; every function below
//! is one of its rules and says which. The lexer has already decided which
//! newlines are separators and guarantees that brackets, strings and
//! interpolations are balanced in the token stream, so the parser can always
//! skip a broken piece as a balanced group, and it decides every choice by
//! looking at most two tokens ahead: it never backtracks.
//!
//! **Cost.** There is nothing to build: a parse is one [`Parser`] value (the
//! token kinds as bytes, a cursor, the errors) and one pass over the tokens.
//! On valid input no recovery code runs and nothing is allocated beyond the
//! tree itself; the only bookkeeping is the set of tokens that were looked
//! for and not found at the current position (a few bytes on the stack,
//! reset when the cursor moves), from which an error message is made if one
//! is needed.
//!
//! **Errors.** A failed rule reports one `E0001` at the token it stopped at:
//! "expected A, B or C, found D", where A, B, C are everything that was
//! looked for at that token — the alternatives of the rule that failed and
//! the optional pieces that could have continued before it (`where` after a
//! param's default, `else` after an `if` item), labelled as a reader names
//! them (`expression`, `declaration`, `field name`, `type`). Tokens that
//! only continue an expression (operators, `(`, `.`, `[`, `with`) are not
//! listed: they are always possible and never the point.
//!
//! A value missing at the end of a line (`x =` with the next item, the
//! block's `}` or a declaration keyword on the next line, which a line break
//! after `=` would make the value) is reported at the operator, "missing
//! value after `=`", and the next line is read as a line of its own
//! ([`Parser::missing_value`]).
//!
//! **Recovery** is at four levels, innermost first; each skips from where its
//! construct began, by balanced groups, so a failure deep inside nested
//! brackets is always cleaned up:
//! * a call argument, list element or template parameter: skip to the next
//!   `,` or the closing bracket ([`ExprKind::Error`] or a parameter with an
//!   error type);
//! * a bracketed expression, list, argument list, index, interpolation or enum
//!   body with an error after its last good element: skip to the closing
//!   bracket (the elements that parsed are kept, the rest is an Error node);
//! * an item: skip to the next newline, `,` or `}` of the same block
//!   ([`ItemKind::Error`]);
//! * a declaration: skip to the next newline followed by a declaration
//!   keyword, or to a declaration keyword in column 1 (which also closes
//!   brackets in the lexer), or to the end of the file. The declaration stays
//!   in the tree with its name, its kind and every part that parsed (missing
//!   parts are `Error` nodes), and its span is added to
//!   [`Module::recovered`], so later stages treat it as reported.
//!
//! Then the errors are de-duplicated: at most one syntax error per line,
//! none on a line that already has an error from the lexer (other than a
//! hidden character, `E0010`, which the lexer reads as absent), and none
//! inside a region the lexer reported as unclosed.
//!
//! **Limits.** Chains (one precedence level, prefix operators, postfix and
//! `with` chains, `?` after a type) are loops, not recursion. The parser
//! recurses once per bracket (at most [`crate::MAX_NESTING`], the lexer's
//! limit) and once per `if` construct, which it limits to the same depth
//! (`E0007`): so the stack it needs is bounded whatever the input.

use crate::ast::*;
use crate::lexer::{lex, Token, TokenKind};
use crate::{Parse, Tree};
use scl_diag::{Diagnostic, LineIndex, Span};
use std::sync::Arc;

/// Parses one file. Never fails and never panics: the module holds everything
/// that could be parsed (broken pieces as `Error` nodes, broken declarations
/// listed in [`Module::recovered`]) and `errors` the syntax errors, in
/// source order.
pub fn parse(src: &str) -> Parse {
    let (tokens, lex_errors) = lex(src);
    let trivia = Arc::new(crate::trivia::Trivia {
        pieces: crate::trivia::pieces(src, &tokens),
    });
    let Tree { module, errors } = tree_of(src, tokens, lex_errors);
    Parse {
        module,
        errors,
        trivia,
    }
}

/// [`parse`] without the trivia table: what a compiler that does not
/// format or color the text needs (the table is about as large as the
/// tree; [`crate::trivia::of`] makes it later from the same text).
pub fn parse_tree(src: &str) -> Tree {
    let (tokens, lex_errors) = lex(src);
    tree_of(src, tokens, lex_errors)
}

fn tree_of(src: &str, tokens: Vec<Token>, lex_errors: Vec<Diagnostic>) -> Tree {
    let mut p = Parser::new(src, tokens);
    // The lexer's errors count towards the limit; once the lexer itself
    // stopped reading (E0011), the parser records nothing more.
    let lex_flooded = lex_errors.iter().any(|d| d.code == "E0011");
    p.budget = if lex_flooded {
        0
    } else {
        crate::lexer::MAX_LEX_ERRORS.saturating_sub(lex_errors.len())
    };
    let module = p.module();
    let mut errs = std::mem::take(&mut p.errors);
    let mut errors = lex_errors;
    if let Some(at) = p.overflow {
        // Everything the parser said after the point it refused to go
        // deeper is a consequence of that.
        errs.retain(|d| (d.at.span.start as usize) < at);
        let end = p
            .toks
            .iter()
            .find(|t| t.span.start as usize >= at)
            .map_or(at, |t| t.span.end as usize);
        errors.push(too_deep(Span::new(at, end)));
    }
    let mut errors = dedup_errors(src, errors, errs);
    if let Some(at) = p.flood.filter(|_| !lex_flooded) {
        // Not subject to the one-per-line rule: it says where reading stopped.
        errors.push(crate::lexer::too_many_errors(at));
    }
    Tree {
        module: Arc::new(module),
        errors,
    }
}

/// `E0007` at `span`: nesting deeper than [`crate::MAX_NESTING`] levels.
pub(crate) fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0007",
        span,
        format!(
            "this is nested more than {} levels deep",
            crate::MAX_NESTING
        ),
    )
    .with_help(
        "split the expression with `let` declarations, or use a map for long `if`/`else if` chains",
    )
}

/// Keeps every lexer error, and a parser error only when its line has no
/// error yet; sorts by position.
fn dedup_errors(
    src: &str,
    lex_errors: Vec<Diagnostic>,
    mut parse_errors: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    // Parser errors between an unclosed delimiter and the place where the
    // lexer closed it are consequences of it.
    let regions = scl_diag::Ranges::new(
        lex_errors
            .iter()
            .filter(|d| d.code == "E0006")
            .filter_map(|d| d.labels.first().map(|l| (l.at.span.start, d.at.span.end)))
            .collect(),
    );
    parse_errors.retain(|d| !regions.contains(d.at.span.start));
    if parse_errors.is_empty() {
        let mut out = lex_errors;
        out.sort_by_key(|d| (d.at.span.start, d.at.span.end));
        return out;
    }
    let index = LineIndex::new(src);
    let line = |d: &Diagnostic| index.line(d.at.span.start as usize);
    // A hidden character (E0010) is read as if it were not there, so the
    // parser's view of its line is the reader's: both are reported.
    let mut lines: std::collections::HashSet<usize> = lex_errors
        .iter()
        .filter(|d| d.code != "E0010")
        .map(line)
        .collect();
    parse_errors.sort_by_key(|d| (d.at.span.start, d.at.span.end));
    let mut out = lex_errors;
    for d in parse_errors {
        if lines.insert(line(&d)) {
            out.push(d);
        }
    }
    out.sort_by_key(|d| (d.at.span.start, d.at.span.end));
    out
}

/// The kind of a token without its payload, as one byte (the parser looks
/// at these; payloads are taken from the tokens when a node is built), and
/// [`K::Eof`] after the last token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum K {
    Ident,
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
    SelfKw,
    Int,
    Float,
    Quantity,
    Str,
    StrStart,
    StrText,
    InterpStart,
    InterpEnd,
    StrEnd,
    Newline,
    Eq,
    PlusEq,
    MinusEq,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Bang,
    AndAnd,
    OrOr,
    Dot,
    Comma,
    Colon,
    Question,
    Arrow,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Eof,
}

impl K {
    fn of(t: &TokenKind) -> K {
        use TokenKind as T;
        match t {
            T::Ident(_) => K::Ident,
            T::Import => K::Import,
            T::As => K::As,
            T::Param => K::Param,
            T::Let => K::Let,
            T::Fn => K::Fn,
            T::Env => K::Env,
            T::Enum => K::Enum,
            T::Extends => K::Extends,
            T::With => K::With,
            T::If => K::If,
            T::Then => K::Then,
            T::Else => K::Else,
            T::For => K::For,
            T::In => K::In,
            T::Where => K::Where,
            T::True => K::True,
            T::False => K::False,
            T::SelfKw => K::SelfKw,
            T::Int(_) => K::Int,
            T::Float(_) => K::Float,
            T::Quantity { .. } => K::Quantity,
            T::Str(_) => K::Str,
            T::StrStart => K::StrStart,
            T::StrText(_) => K::StrText,
            T::InterpStart => K::InterpStart,
            T::InterpEnd => K::InterpEnd,
            T::StrEnd => K::StrEnd,
            // Doc comments never reach the parser (see `Parser::new`).
            T::DocComment(_) | T::Newline => K::Newline,
            T::Eq => K::Eq,
            T::PlusEq => K::PlusEq,
            T::MinusEq => K::MinusEq,
            T::EqEq => K::EqEq,
            T::NotEq => K::NotEq,
            T::Lt => K::Lt,
            T::Le => K::Le,
            T::Gt => K::Gt,
            T::Ge => K::Ge,
            T::Plus => K::Plus,
            T::Minus => K::Minus,
            T::Star => K::Star,
            T::Slash => K::Slash,
            T::Bang => K::Bang,
            T::AndAnd => K::AndAnd,
            T::OrOr => K::OrOr,
            T::Dot => K::Dot,
            T::Comma => K::Comma,
            T::Colon => K::Colon,
            T::Question => K::Question,
            T::Arrow => K::Arrow,
            T::LParen => K::LParen,
            T::RParen => K::RParen,
            T::LBracket => K::LBracket,
            T::RBracket => K::RBracket,
            T::LBrace => K::LBrace,
            T::RBrace => K::RBrace,
        }
    }

    fn opens(self) -> bool {
        matches!(
            self,
            K::LParen | K::LBracket | K::LBrace | K::StrStart | K::InterpStart
        )
    }

    fn closes(self) -> bool {
        matches!(
            self,
            K::RParen | K::RBracket | K::RBrace | K::StrEnd | K::InterpEnd
        )
    }

    fn starts_decl(self) -> bool {
        matches!(
            self,
            K::Import | K::Param | K::Let | K::Fn | K::Env | K::Enum
        )
    }

    /// How an expected token is named in a message (`TokenKind::describe`).
    fn describe(self) -> String {
        use TokenKind as T;
        let t = match self {
            K::Newline => return "newline".into(),
            K::Eof => return "end of file".into(),
            K::Str | K::StrStart => return "string".into(),
            K::StrEnd => return "end of string".into(),
            K::InterpEnd => return "`}`".into(),
            K::Ident | K::Int | K::Float | K::Quantity | K::StrText => return String::new(),
            K::Import => T::Import,
            K::As => T::As,
            K::Param => T::Param,
            K::Let => T::Let,
            K::Fn => T::Fn,
            K::Env => T::Env,
            K::Enum => T::Enum,
            K::Extends => T::Extends,
            K::With => T::With,
            K::If => T::If,
            K::Then => T::Then,
            K::Else => T::Else,
            K::For => T::For,
            K::In => T::In,
            K::Where => T::Where,
            K::True => T::True,
            K::False => T::False,
            K::SelfKw => T::SelfKw,
            K::InterpStart => T::InterpStart,
            K::Eq => T::Eq,
            K::PlusEq => T::PlusEq,
            K::MinusEq => T::MinusEq,
            K::EqEq => T::EqEq,
            K::NotEq => T::NotEq,
            K::Lt => T::Lt,
            K::Le => T::Le,
            K::Gt => T::Gt,
            K::Ge => T::Ge,
            K::Plus => T::Plus,
            K::Minus => T::Minus,
            K::Star => T::Star,
            K::Slash => T::Slash,
            K::Bang => T::Bang,
            K::AndAnd => T::AndAnd,
            K::OrOr => T::OrOr,
            K::Dot => T::Dot,
            K::Comma => T::Comma,
            K::Colon => T::Colon,
            K::Question => T::Question,
            K::Arrow => T::Arrow,
            K::LParen => T::LParen,
            K::RParen => T::RParen,
            K::LBracket => T::LBracket,
            K::RBracket => T::RBracket,
            K::LBrace => T::LBrace,
            K::RBrace => T::RBrace,
        };
        t.describe()
    }
}

/// What a message can say was expected besides a token: the names of rules.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Label {
    Expression = 64,
    Declaration,
    Identifier,
    FieldName,
    Type,
    String,
    AssignOp,
}

impl Label {
    fn text(self) -> &'static str {
        match self {
            Label::Expression => "expression",
            Label::Declaration => "declaration",
            Label::Identifier => "identifier",
            Label::FieldName => "field name",
            Label::Type => "type",
            Label::String => "string",
            Label::AssignOp => "`=`, `+=`, `-=`",
        }
    }
}

/// What was looked for and not found at token `pos`, in the order it was
/// looked for (a token kind as `K as u8`, or a [`Label`] as `64 + n`).
/// Fixed-size: recording costs no allocation.
struct Expected {
    pos: usize,
    seen: u128,
    list: [u8; 16],
    n: u8,
}

/// A rule failed; its error has been reported (or suppressed, see
/// [`Parser::bail`]). The caller recovers.
struct Fail;
type R<T> = Result<T, Fail>;

struct Parser<'s> {
    src: &'s str,
    /// The tokens without doc comments (their payloads are taken out as
    /// nodes are built).
    toks: Vec<Token>,
    /// `kinds[i]` is the kind of `toks[i]`; one more [`K::Eof`] at the end.
    kinds: Vec<K>,
    /// Doc comments by the index of the token they precede, in order.
    docs: Vec<(usize, String)>,
    pos: usize,
    eoi: Span,
    expected: Expected,
    errors: Vec<Diagnostic>,
    /// How many `if` constructs enclose the current position.
    depth: usize,
    /// Where the parser first refused to nest deeper (a byte offset).
    overflow: Option<usize>,
    /// Set at the overflow: every rule then sees the end of the file and
    /// reports nothing, so the parse unwinds to the declaration level.
    bail: bool,
    /// A declaration-level error happened in the current declaration
    /// (errors inside block items are recovered by the item and do not count).
    broken: bool,
    /// How many more errors may be recorded (see [`Parser::may_report`]).
    budget: usize,
    /// Where the parser stopped reading because the budget was spent (a
    /// byte offset; `E0011` there).
    flood: Option<usize>,
    /// See [`Parser::may_report`].
    same_line: u32,
    /// See [`Parser::pairs`]; empty until the first recovery.
    pairs: Vec<u32>,
    /// Tokens the recovery scans stepped over (the unit tests bound it).
    steps: usize,
    /// The token after a missing value (see [`Parser::missing_value`]):
    /// recovery reads it as the start of a new line.
    line_break: Option<usize>,
}

impl<'s> Parser<'s> {
    fn new(src: &'s str, mut tokens: Vec<Token>) -> Parser<'s> {
        let mut kinds = Vec::with_capacity(tokens.len() + 1);
        let mut docs: Vec<(usize, String)> = Vec::new();
        if tokens
            .iter()
            .any(|t| matches!(t.kind, TokenKind::DocComment(_)))
        {
            // Doc comments leave the stream; each is attached to the index
            // of the next token that is not a newline.
            let mut pending: Option<String> = None;
            let mut kept = 0usize;
            tokens.retain_mut(|t| {
                if let TokenKind::DocComment(text) = &mut t.kind {
                    let text = std::mem::take(text);
                    match &mut pending {
                        Some(p) => {
                            p.push('\n');
                            p.push_str(&text);
                        }
                        None => pending = Some(text),
                    }
                    return false;
                }
                if t.kind != TokenKind::Newline {
                    if let Some(doc) = pending.take() {
                        docs.push((kept, doc));
                    }
                }
                kept += 1;
                true
            });
        }
        kinds.extend(tokens.iter().map(|t| K::of(&t.kind)));
        let toks = tokens;
        kinds.push(K::Eof);
        Parser {
            src,
            toks,
            kinds,
            docs,
            pos: 0,
            eoi: Span::new(src.len(), src.len()),
            expected: Expected {
                pos: 0,
                seen: 0,
                list: [0; 16],
                n: 0,
            },
            errors: Vec::new(),
            depth: 0,
            overflow: None,
            bail: false,
            broken: false,
            budget: usize::MAX,
            flood: None,
            same_line: 0,
            pairs: Vec::new(),
            steps: 0,
            line_break: None,
        }
    }

    // ---- the cursor ---------------------------------------------------------

    fn peek(&self) -> K {
        if self.bail {
            K::Eof
        } else {
            self.kinds[self.pos]
        }
    }

    fn nth(&self, n: usize) -> K {
        if self.bail {
            K::Eof
        } else {
            self.kinds.get(self.pos + n).copied().unwrap_or(K::Eof)
        }
    }

    fn bump(&mut self) {
        if self.kinds[self.pos] != K::Eof {
            self.pos += 1;
        }
    }

    /// Takes the current token's payload and moves on.
    fn take(&mut self) -> (TokenKind, Span) {
        let span = self.toks[self.pos].span;
        let kind = std::mem::replace(&mut self.toks[self.pos].kind, TokenKind::Newline);
        self.bump();
        (kind, span)
    }

    fn cur_span(&self) -> Span {
        self.toks.get(self.pos).map_or(self.eoi, |t| t.span)
    }

    /// From the start of token `start` to the end of the last token taken;
    /// empty, at the current token, when none was.
    fn span_from(&self, start: usize) -> Span {
        if self.pos > start {
            Span::new(
                self.toks[start].span.start as usize,
                self.toks[self.pos - 1].span.end as usize,
            )
        } else {
            let at = self.cur_span().start as usize;
            Span::new(at, at)
        }
    }

    fn expect_code(&mut self, code: u8) {
        let e = &mut self.expected;
        if e.pos != self.pos {
            e.pos = self.pos;
            e.seen = 0;
            e.n = 0;
        }
        if e.seen & (1u128 << code) == 0 && (e.n as usize) < e.list.len() {
            e.seen |= 1u128 << code;
            e.list[e.n as usize] = code;
            e.n += 1;
        }
    }

    fn expect_label(&mut self, l: Label) {
        self.expect_code(l as u8);
    }

    /// True at a `k`; otherwise records that `k` was looked for.
    fn at(&mut self, k: K) -> bool {
        if self.peek() == k {
            true
        } else {
            self.expect_code(k as u8);
            false
        }
    }

    fn eat(&mut self, k: K) -> bool {
        let yes = self.at(k);
        if yes {
            self.bump();
        }
        yes
    }

    /// Takes a `k` or fails.
    fn need(&mut self, k: K) -> R<()> {
        if self.eat(k) {
            Ok(())
        } else {
            Err(self.fail())
        }
    }

    fn doc(&mut self, at: usize) -> Option<String> {
        let i = self.docs.binary_search_by_key(&at, |d| d.0).ok()?;
        Some(std::mem::take(&mut self.docs[i].1))
    }

    // ---- errors and recovery ------------------------------------------------

    /// Whether an error at byte `at` is recorded. Of the errors of one line
    /// only the first is kept (see [`dedup_errors`]): one after the last
    /// recorded error on its line is dropped here already, so a line of
    /// ten thousand broken arguments costs one diagnostic, not ten
    /// thousand. Past the budget ([`crate::lexer::MAX_LEX_ERRORS`] with the
    /// lexer's), the parser stops reading the file (`E0011`, as the lexer
    /// does): every rule then sees the end of the file.
    fn may_report(&mut self, at: u32) -> bool {
        if let Some(last) = self.errors.last() {
            // `same_line` is the furthest offset known to be on the last
            // error's line: each byte is looked at once.
            let from = last.at.span.start.max(self.same_line);
            if last.at.span.start <= at
                && (at <= from || !self.src.as_bytes()[from as usize..at as usize].contains(&b'\n'))
            {
                self.same_line = self.same_line.max(at);
                return false;
            }
        }
        if self.errors.len() >= self.budget {
            self.flood.get_or_insert(at as usize);
            self.bail = true;
            return false;
        }
        self.same_line = at;
        true
    }

    /// Reports "expected …, found …" at the current token and returns the failure.
    fn fail(&mut self) -> Fail {
        self.broken = true;
        if self.bail {
            return Fail;
        }
        let span = if self.pos < self.toks.len() {
            self.cur_span()
        } else {
            self.end_of_code()
        };
        if !self.may_report(span.start) {
            return Fail;
        }
        let found = self.toks.get(self.pos).map(|t| &t.kind);
        let found_s = found.map_or_else(|| "end of file".to_string(), |t| t.describe());
        let mut list: Vec<String> = Vec::new();
        if self.expected.pos == self.pos {
            for &code in &self.expected.list[..self.expected.n as usize] {
                list.push(match code {
                    64 => Label::Expression.text().to_string(),
                    65 => Label::Declaration.text().to_string(),
                    66 => Label::Identifier.text().to_string(),
                    67 => Label::FieldName.text().to_string(),
                    68 => Label::Type.text().to_string(),
                    69 => Label::String.text().to_string(),
                    70 => Label::AssignOp.text().to_string(),
                    k => describe_code(k),
                });
            }
        }
        if list.iter().any(|e| e == "declaration") {
            list.retain(|e| e != "newline");
        }
        if list.iter().any(|e| e == "field name") {
            list.retain(|e| e != "newline" && e != "`,`");
        }
        let (msg, label) = if list.is_empty() || list.len() > 5 {
            (
                format!("unexpected {found_s}"),
                "unexpected here".to_string(),
            )
        } else {
            let l = match list.len() {
                1 => list[0].clone(),
                n => format!("{} or {}", list[..n - 1].join(", "), list[n - 1]),
            };
            (
                format!("expected {l}, found {found_s}"),
                format!("expected {l}"),
            )
        };
        let mut d = Diagnostic::error("E0001", span, msg).with_primary_label(label);
        if list.iter().any(|e| e == "declaration") && matches!(found, Some(TokenKind::Ident(_))) {
            d = d.with_help("items such as `x = ...` belong inside `env NAME { ... }`; a module constant is `let x = ...`");
        }
        if self.at_block_comment() {
            d = d.with_help(
                "`/* */` comments are not supported in SCL; use `//` to the end of the line",
            );
        }
        if matches!(found, Some(t) if crate::is_keyword(t.symbol()))
            && list.iter().any(|e| e == "field name")
        {
            d = d.with_help("keywords cannot be field names");
        }
        self.errors.push(d);
        Fail
    }

    /// Checks, just after a `=`, `+=`, `-=` or `where` (the token before the
    /// cursor), whether its value is missing: the next token is on a later
    /// line (a line break after an operator continues the line) and starts
    /// what cannot be a value there: a declaration keyword (`decl`) or, in
    /// a block, the next item (`field.path =`, `+=`, `-=`) or the block's
    /// `}`. Every such text is an error anyway; this reports it at the
    /// operator ("missing value after `=`") instead of at the next line,
    /// and recovery reads the next line as a line of its own
    /// ([`Parser::line_break`]). Fails when the value is missing.
    fn missing_value(&mut self, decl: bool) -> R<()> {
        let (Some(op), Some(next)) = (
            self.toks.get(self.pos.wrapping_sub(1)),
            self.toks.get(self.pos),
        ) else {
            return Ok(());
        };
        let (op_span, next_start) = (op.span, next.span.start);
        if !self.src.as_bytes()[op_span.end as usize..next_start as usize].contains(&b'\n') {
            return Ok(());
        }
        let k = self.peek();
        let missing = k.starts_decl()
            || (!decl && k == K::RBrace)
            || (!decl && {
                // A field path followed by an assignment operator.
                let mut i = self.pos;
                while matches!(self.kinds[i], K::Ident | K::Str) && self.kinds[i + 1] == K::Dot {
                    i += 2;
                }
                matches!(self.kinds[i], K::Ident | K::Str)
                    && matches!(self.kinds[i + 1], K::Eq | K::PlusEq | K::MinusEq)
            });
        if !missing {
            return Ok(());
        }
        self.broken = true;
        self.line_break = Some(self.pos);
        if self.bail || !self.may_report(op_span.start) {
            return Err(Fail);
        }
        let op_text = &self.src[op_span.range()];
        let d = Diagnostic::error("E0001", op_span, format!("missing value after `{op_text}`"))
            .with_primary_label("expected a value after this")
            .with_help(format!(
                "write the value on the same line as `{op_text}`: a line break after `{op_text}` continues the line, so the next line would be read as the value"
            ));
        self.errors.push(d);
        Err(Fail)
    }

    /// True when the current token is the `/` or the `*` of a `/*` (a
    /// block comment, which SCL does not have: it lexes as two operators).
    fn at_block_comment(&self) -> bool {
        let adjacent = |i: usize| {
            self.kinds.get(i) == Some(&K::Slash)
                && self.kinds.get(i + 1) == Some(&K::Star)
                && self.toks[i].span.end == self.toks[i + 1].span.start
        };
        adjacent(self.pos) || (self.pos > 0 && adjacent(self.pos - 1))
    }

    /// Where "found end of file" is reported: just after the last token
    /// that is not a newline (as rustc does), not after the comments and
    /// blank lines that may follow it; zero-width. At the start of an empty
    /// file when there is none.
    fn end_of_code(&self) -> Span {
        let at = self
            .toks
            .iter()
            .rev()
            .find(|t| t.kind != TokenKind::Newline && t.span.start < t.span.end)
            .map_or(0, |t| t.span.end as usize);
        Span::new(at, at)
    }

    /// For each opener `i`, `pairs[i]` is the index of its closer (the
    /// lexer balances the stream; an opener it left open would pair with
    /// the end). Built on the first recovery (valid input never needs it),
    /// so that every skip jumps over a group in one step: a recovery at
    /// each of n nested levels then costs n steps, not n times the size of
    /// the innermost group.
    fn pairs(&mut self) -> &[u32] {
        if self.pairs.is_empty() {
            let eof = (self.kinds.len() - 1) as u32;
            let mut pairs = vec![eof; self.kinds.len()];
            let mut open: Vec<u32> = Vec::new();
            for (i, k) in self.kinds.iter().enumerate() {
                if k.opens() {
                    open.push(i as u32);
                } else if k.closes() {
                    if let Some(o) = open.pop() {
                        pairs[o as usize] = i as u32;
                    }
                }
            }
            self.pairs = pairs;
        }
        &self.pairs
    }

    /// From token `from`, the index of the first token at the same bracket
    /// depth for which `stop` holds, or of the first closer without an
    /// opener after `from`, or of the end. Reads the kinds directly (also
    /// while bailing); jumps over each group in one step.
    fn scan(&mut self, from: usize, stop: impl Fn(K) -> bool) -> usize {
        self.pairs();
        let mut i = from;
        loop {
            self.steps += 1;
            let k = self.kinds[i];
            if k == K::Eof || stop(k) || k.closes() {
                return i;
            }
            i = if k.opens() { self.pairs[i] as usize } else { i };
            if self.kinds[i] != K::Eof {
                i += 1;
            }
        }
    }

    /// Skips to the closer of the group opened at token `open`, and past it.
    fn close_group(&mut self, open: usize) {
        self.steps += 1;
        let close = self.pairs()[open] as usize;
        self.pos = self.pos.max(close);
        self.bump();
    }

    /// Skips to the next `,` (not taken) or to the closer (taken) of the group
    /// opened at `open`, from `from` (where the broken element began); true
    /// at a `,`.
    fn skip_element(&mut self, from: usize, open: usize) -> bool {
        let stop = self.scan(from, |k| k == K::Comma);
        self.pos = self.pos.max(stop);
        if self.kinds[self.pos] == K::Comma && !self.bail {
            true
        } else {
            self.close_group(open);
            false
        }
    }

    /// True when token `i` starts a line (column 1).
    fn in_column_one(&self, i: usize) -> bool {
        let s = self.toks[i].span.start as usize;
        s == 0 || self.src.as_bytes().get(s - 1) == Some(&b'\n')
    }

    /// Where a broken declaration starting at token `from` ends: at least
    /// one token, then balanced groups up to a newline followed by a
    /// declaration keyword, a declaration keyword in column 1, or the end.
    fn decl_boundary(&mut self, from: usize) -> usize {
        self.pairs();
        let mut i = from;
        let mut first = true;
        loop {
            self.steps += 1;
            let k = self.kinds[i];
            if k == K::Eof {
                return i;
            }
            if !first {
                if k == K::Newline && self.kinds[i + 1].starts_decl() {
                    return i;
                }
                if k.starts_decl() && (self.in_column_one(i) || self.line_break == Some(i)) {
                    return i;
                }
            }
            if k.opens() {
                i = self.pairs[i] as usize;
                if self.kinds[i] == K::Eof {
                    return i;
                }
            }
            first = false;
            i += 1;
        }
    }

    /// Enters an `if` construct one level deeper, or fails at the limit.
    fn enter_if(&mut self) -> R<()> {
        if self.depth >= crate::MAX_NESTING {
            if self.overflow.is_none() {
                self.overflow = Some(self.cur_span().start as usize);
            }
            self.broken = true;
            self.bail = true;
            return Err(Fail);
        }
        self.depth += 1;
        Ok(())
    }

    // ---- module and declarations ----------------------------------------------

    /// `module = { NL } { decl ( NL | EOF ) { NL } } EOF`
    fn module(&mut self) -> Module {
        let mut decls = Vec::new();
        let mut recovered = Vec::new();
        loop {
            while self.peek() == K::Newline {
                self.bump();
            }
            if self.peek() == K::Eof {
                break;
            }
            let start = self.pos;
            self.broken = false;
            let decl = if self.peek().starts_decl() {
                let d = self.decl(start);
                if !self.broken && !matches!(self.peek(), K::Newline | K::Eof) {
                    self.expect_code(K::Newline as u8);
                    self.expect_code(K::Eof as u8);
                    self.fail();
                }
                d
            } else {
                self.expect_label(Label::Declaration);
                self.fail();
                None
            };
            if self.broken {
                let end = if self.flood.is_some() {
                    // The rest of the file is not read: this declaration
                    // covers it.
                    self.kinds.len() - 1
                } else {
                    self.bail = false;
                    self.decl_boundary(start)
                };
                self.pos = self.pos.max(end);
            }
            if let Some(mut d) = decl {
                if self.broken {
                    let span = self.span_from(start);
                    mark_recovered(&mut d, span);
                    recovered.push(span);
                }
                decls.push(d);
            }
            if self.flood.is_some() {
                break;
            }
        }
        decls.shrink_to_fit();
        Module { decls, recovered }
    }

    /// `decl = import | param | let | enum | fn | env`; `None` when even
    /// its name is missing.
    fn decl(&mut self, start: usize) -> Option<Decl> {
        let doc = self.doc(start);
        match self.peek() {
            K::Import => self.import_decl(start),
            K::Param => self.param_decl(start, doc),
            K::Let => self.let_decl(start, doc),
            K::Enum => self.enum_decl(start, doc),
            K::Fn => self.fn_decl(start, doc),
            _ => self.env_decl(start, doc),
        }
    }

    fn ident(&mut self) -> R<Ident> {
        if self.peek() == K::Ident {
            let (kind, span) = self.take();
            let TokenKind::Ident(name) = kind else {
                unreachable!("an Ident token")
            };
            Ok(Ident { name, span })
        } else {
            self.expect_label(Label::Identifier);
            Err(self.fail())
        }
    }

    fn err_expr(&self, start: usize) -> Expr {
        Expr {
            kind: ExprKind::Error,
            span: self.span_from(start),
        }
    }

    fn err_type(&self, start: usize) -> TypeExpr {
        TypeExpr {
            kind: TypeExprKind::Error,
            span: self.span_from(start),
        }
    }

    /// `import = "import" STRING "as" IDENT`
    fn import_decl(&mut self, start: usize) -> Option<Decl> {
        self.bump();
        if self.peek() != K::Str {
            self.expect_label(Label::String);
            self.fail();
            return None;
        }
        let (kind, path_span) = self.take();
        let TokenKind::Str(path) = kind else {
            unreachable!("a Str token")
        };
        self.need(K::As).ok()?;
        let alias = self.ident().ok()?;
        Some(Decl::Import(ImportDecl {
            path,
            path_span,
            alias,
            span: self.span_from(start),
        }))
    }

    /// `param = "param" IDENT ":" type "=" expr [ "where" expr ]`
    fn param_decl(&mut self, start: usize, doc: Option<String>) -> Option<Decl> {
        self.bump();
        let name = self.ident().ok()?;
        let (mut ty, mut default, mut where_) = (None, None, None);
        let _ = self.param_rest(&mut ty, &mut default, &mut where_);
        Some(Decl::Param(Box::new(ParamDecl {
            doc,
            name,
            ty: ty.unwrap_or_else(|| self.err_type(self.pos)),
            default: default.unwrap_or_else(|| self.err_expr(self.pos)),
            where_,
            span: self.span_from(start),
        })))
    }

    /// The rest of a param after its name; a part that fails is an Error
    /// node over what it took, a part not reached is left `None`.
    fn param_rest(
        &mut self,
        ty: &mut Option<TypeExpr>,
        default: &mut Option<Expr>,
        where_: &mut Option<Expr>,
    ) -> R<()> {
        self.need(K::Colon)?;
        let at = self.pos;
        *ty = Some(self.ty().inspect_err(|_| *ty = Some(self.err_type(at)))?);
        self.need(K::Eq)?;
        let at = self.pos;
        self.missing_value(true)
            .inspect_err(|_| *default = Some(self.err_expr(at)))?;
        *default = Some(
            self.expr()
                .inspect_err(|_| *default = Some(self.err_expr(at)))?,
        );
        if self.eat(K::Where) {
            let at = self.pos;
            self.missing_value(true)
                .inspect_err(|_| *where_ = Some(self.err_expr(at)))?;
            *where_ = Some(
                self.expr()
                    .inspect_err(|_| *where_ = Some(self.err_expr(at)))?,
            );
        }
        Ok(())
    }

    /// `let = "let" IDENT "=" expr`
    fn let_decl(&mut self, start: usize, doc: Option<String>) -> Option<Decl> {
        self.bump();
        let name = self.ident().ok()?;
        let value = match self.need(K::Eq).and_then(|()| self.missing_value(true)) {
            Ok(()) => {
                let at = self.pos;
                self.expr().unwrap_or_else(|_| self.err_expr(at))
            }
            Err(Fail) => self.err_expr(self.pos),
        };
        Some(Decl::Let(Box::new(LetDecl {
            doc,
            name,
            value,
            span: self.span_from(start),
        })))
    }

    /// `enum = "enum" IDENT "{" { SEP } [ IDENT { SEP { SEP } IDENT } { SEP } ] "}"`
    fn enum_decl(&mut self, start: usize, doc: Option<String>) -> Option<Decl> {
        self.bump();
        let name = self.ident().ok()?;
        let mut variants = Vec::new();
        if self.eat(K::LBrace) {
            let open = self.pos - 1;
            let mut sep = true;
            loop {
                while matches!(self.peek(), K::Newline | K::Comma) {
                    self.bump();
                    sep = true;
                }
                self.expect_code(K::Newline as u8);
                self.expect_code(K::Comma as u8);
                if sep && self.peek() == K::Ident {
                    if let Ok(id) = self.ident() {
                        variants.push(id);
                    }
                    sep = false;
                    continue;
                }
                if sep {
                    self.expect_label(Label::Identifier);
                }
                if self.eat(K::RBrace) {
                    break;
                }
                // A broken variant: report, skip to the next separator.
                let from = self.pos;
                self.fail();
                if self.bail {
                    break;
                }
                let stop = self.scan(from, |k| matches!(k, K::Comma | K::Newline));
                self.pos = self.pos.max(stop);
                if !matches!(self.kinds[self.pos], K::Comma | K::Newline) {
                    self.close_group(open);
                    break;
                }
            }
        } else {
            self.fail();
        }
        Some(Decl::Enum(Box::new(EnumDecl {
            doc,
            name,
            variants,
            span: self.span_from(start),
        })))
    }

    /// `fn = "fn" IDENT params [ "->" type ] "=" expr`
    fn fn_decl(&mut self, start: usize, doc: Option<String>) -> Option<Decl> {
        self.bump();
        let name = self.ident().ok()?;
        let (mut params, mut ret, mut body) = (Vec::new(), None, None);
        let _ = self.fn_rest(&mut params, &mut ret, &mut body);
        Some(Decl::Fn(Box::new(FnDecl {
            doc,
            name,
            params,
            ret,
            body: body.unwrap_or_else(|| self.err_expr(self.pos)),
            span: self.span_from(start),
        })))
    }

    fn fn_rest(
        &mut self,
        params: &mut Vec<ParamSig>,
        ret: &mut Option<TypeExpr>,
        body: &mut Option<Expr>,
    ) -> R<()> {
        if !self.at(K::LParen) {
            return Err(self.fail());
        }
        // A broken parameter is recovered inside the list: go on after it.
        *params = self.params()?;
        if self.eat(K::Arrow) {
            let at = self.pos;
            *ret = Some(self.ty().inspect_err(|_| *ret = Some(self.err_type(at)))?);
        }
        self.need(K::Eq)?;
        let at = self.pos;
        self.missing_value(true)
            .inspect_err(|_| *body = Some(self.err_expr(at)))?;
        *body = Some(
            self.expr()
                .inspect_err(|_| *body = Some(self.err_expr(at)))?,
        );
        Ok(())
    }

    /// `env = "env" IDENT [ params ] [ "extends" parent { "," parent } ] block`
    fn env_decl(&mut self, start: usize, doc: Option<String>) -> Option<Decl> {
        self.bump();
        let name = self.ident().ok()?;
        let mut d = EnvDecl {
            doc,
            name,
            params: None,
            extends: Vec::new(),
            extends_span: None,
            body: Block {
                items: Arc::new(Vec::new()),
                span: self.eoi,
            },
            span: self.eoi,
        };
        match self.env_rest(&mut d) {
            Ok(body) => d.body = body,
            Err(Fail) => {
                let span = self.span_from(self.pos);
                d.body = Block {
                    items: Arc::new(vec![Item {
                        doc: None,
                        kind: ItemKind::Error,
                        span,
                    }]),
                    span,
                };
            }
        }
        d.span = self.span_from(start);
        Some(Decl::Env(Box::new(d)))
    }

    fn env_rest(&mut self, d: &mut EnvDecl) -> R<Block> {
        if self.peek() == K::LParen {
            // A broken parameter is recovered inside the list: go on after it.
            d.params = Some(self.params()?);
        }
        if self.eat(K::Extends) {
            let at = self.pos - 1;
            loop {
                let p = self.postfix()?;
                d.extends.push(p);
                d.extends_span = Some(self.span_from(at));
                if !self.eat(K::Comma) {
                    break;
                }
            }
        }
        self.block()
    }

    /// `params = "(" [ param_sig { "," param_sig } [ "," ] ] ")"`, at the
    /// `(`; a broken parameter is kept (with what parsed) and skipped.
    fn params(&mut self) -> R<Vec<ParamSig>> {
        let open = self.pos;
        self.bump();
        let mut out = Vec::new();
        loop {
            if self.peek() != K::Ident {
                self.expect_label(Label::Identifier);
                if self.eat(K::RParen) {
                    break;
                }
                self.fail();
                if self.bail {
                    break;
                }
                if self.skip_element(self.pos, open) {
                    self.bump();
                    continue;
                }
                break;
            }
            let from = self.pos;
            let ok = self.param_sig(&mut out);
            if ok.is_ok() {
                if self.eat(K::Comma) {
                    continue;
                }
                if self.eat(K::RParen) {
                    break;
                }
                self.fail();
            }
            if self.bail {
                break;
            }
            if self.skip_element(from, open) {
                self.bump();
                continue;
            }
            break;
        }
        if self.bail {
            return Err(Fail);
        }
        Ok(out)
    }

    /// `param_sig = IDENT ":" type [ "=" expr ]`, at the IDENT; pushes the
    /// parameter even when only its name parsed.
    fn param_sig(&mut self, out: &mut Vec<ParamSig>) -> R<()> {
        let start = self.pos;
        let name = self.ident()?;
        // On failure: where the type should have started.
        let ty = match self.need(K::Colon) {
            Ok(()) => {
                let at = self.pos;
                self.ty().map_err(|_| at)
            }
            Err(Fail) => Err(self.pos),
        };
        let ty = match ty {
            Ok(t) => t,
            Err(at) => {
                let f = Fail;
                let ty = self.err_type(at);
                out.push(ParamSig {
                    name,
                    ty,
                    default: None,
                    span: self.span_from(start),
                });
                return Err(f);
            }
        };
        let mut default = None;
        let mut res = Ok(());
        if self.eat(K::Eq) {
            let at = self.pos;
            match self.expr() {
                Ok(e) => default = Some(e),
                Err(f) => {
                    default = Some(self.err_expr(at));
                    res = Err(f);
                }
            }
        }
        out.push(ParamSig {
            name,
            ty,
            default,
            span: self.span_from(start),
        });
        res
    }

    // ---- types ----------------------------------------------------------------

    /// `type = type_base { "?" }`
    fn ty(&mut self) -> R<TypeExpr> {
        let start = self.pos;
        let kind = match self.peek() {
            K::Ident => {
                let mut segs = vec![self.ident()?];
                while self.peek() == K::Dot {
                    self.bump();
                    segs.push(self.ident()?);
                }
                TypeExprKind::Named(segs)
            }
            K::LBracket => {
                self.bump();
                let t = self.ty()?;
                self.need(K::RBracket)?;
                TypeExprKind::List(Box::new(t))
            }
            K::LBrace => {
                self.bump();
                self.eat(K::Newline);
                self.ident()?;
                self.need(K::Colon)?;
                let t = self.ty()?;
                self.eat(K::Newline);
                self.need(K::RBrace)?;
                TypeExprKind::Map(Box::new(t))
            }
            _ => {
                self.expect_label(Label::Type);
                return Err(self.fail());
            }
        };
        let mut t = TypeExpr {
            kind,
            span: self.span_from(start),
        };
        // `T??` is `T?`: one Optional however many `?` (flat).
        while self.peek() == K::Question {
            let q = self.cur_span();
            self.bump();
            t = match t.kind {
                TypeExprKind::Optional(_) => TypeExpr {
                    span: t.span.to(q),
                    kind: t.kind,
                },
                _ => TypeExpr {
                    span: t.span.to(q),
                    kind: TypeExprKind::Optional(Box::new(t)),
                },
            };
        }
        Ok(t)
    }

    // ---- blocks and items -----------------------------------------------------

    /// `block = "{" { SEP } { item ( SEP | &"}" ) { SEP } } "}"`; a broken
    /// item becomes [`ItemKind::Error`] and the block goes on.
    fn block(&mut self) -> R<Block> {
        let start = self.pos;
        self.need(K::LBrace)?;
        let mut items = Vec::new();
        loop {
            while matches!(self.peek(), K::Newline | K::Comma) {
                self.bump();
            }
            match self.peek() {
                K::RBrace => {
                    self.bump();
                    break;
                }
                K::Eof => {
                    // Only while bailing (the stream is balanced).
                    self.fail();
                    return Err(Fail);
                }
                _ => {}
            }
            let item_start = self.pos;
            let broken = self.broken;
            let item = self.item();
            self.broken = broken;
            match item {
                Ok(it) => items.push(it),
                Err(Fail) => {
                    if self.bail {
                        return Err(Fail);
                    }
                    let mut stop = self.scan(item_start, |k| matches!(k, K::Newline | K::Comma));
                    if let Some(b) = self
                        .line_break
                        .take()
                        .filter(|&b| b > item_start && b < stop)
                    {
                        // The value was missing: the next line is an item.
                        stop = b;
                    }
                    self.pos = self.pos.max(stop);
                    if self.pos == item_start {
                        self.bump();
                    }
                    let span = self.span_from(item_start);
                    match items.last_mut() {
                        // Broken items in a row are one Error item, so a
                        // line of them costs one node, not one per comma.
                        Some(last) if matches!(last.kind, ItemKind::Error) => {
                            last.span = last.span.to(span)
                        }
                        _ => items.push(Item {
                            doc: None,
                            kind: ItemKind::Error,
                            span,
                        }),
                    }
                }
            }
        }
        // The tree is kept for the life of a compile or an editor session:
        // no spare capacity (here and in the other growing lists below).
        items.shrink_to_fit();
        Ok(Block {
            items: Arc::new(items),
            span: self.span_from(start),
        })
    }

    /// `item = if_item | path ( assign_op expr | block )`, then its
    /// separator (not taken) or the `}`.
    fn item(&mut self) -> R<Item> {
        let start = self.pos;
        let kind = match self.peek() {
            K::If => self.if_item()?,
            K::Ident | K::Str => self.path_item()?,
            _ => {
                self.expect_code(K::If as u8);
                self.expect_label(Label::FieldName);
                return Err(self.fail());
            }
        };
        let span = self.span_from(start);
        match self.peek() {
            K::Newline | K::Comma => self.bump(),
            K::RBrace => {}
            _ => {
                self.expect_code(K::Newline as u8);
                self.expect_code(K::Comma as u8);
                self.expect_code(K::RBrace as u8);
                return Err(self.fail());
            }
        }
        Ok(Item {
            doc: self.doc(start),
            kind,
            span,
        })
    }

    fn segment(&mut self) -> R<PathSegment> {
        match self.peek() {
            K::Ident | K::Str => {
                let (kind, span) = self.take();
                let (name, quoted) = match kind {
                    TokenKind::Ident(n) => (n, false),
                    TokenKind::Str(n) => (n, true),
                    _ => unreachable!("an Ident or Str token"),
                };
                Ok(PathSegment { name, quoted, span })
            }
            _ => {
                self.expect_label(Label::FieldName);
                Err(self.fail())
            }
        }
    }

    /// `path ( assign_op expr | block )`
    fn path_item(&mut self) -> R<ItemKind> {
        let start = self.pos;
        let mut segments = vec![self.segment()?];
        while self.peek() == K::Dot {
            self.bump();
            segments.push(self.segment()?);
        }
        segments.shrink_to_fit();
        let path = FieldPath {
            segments,
            span: self.span_from(start),
        };
        let op = match self.peek() {
            K::Eq => AssignOp::Set,
            K::PlusEq => AssignOp::Append,
            K::MinusEq => AssignOp::Remove,
            K::LBrace => {
                let body = self.block()?;
                return Ok(ItemKind::Nested { path, body });
            }
            _ => {
                self.expect_label(Label::AssignOp);
                self.expect_code(K::LBrace as u8);
                return Err(self.fail());
            }
        };
        let op_span = self.cur_span();
        self.bump();
        self.missing_value(false)?;
        let value = self.expr()?;
        Ok(ItemKind::Assign {
            path,
            op,
            op_span,
            value,
        })
    }

    /// `if_item = "if" expr block [ "else" ( block | if_item ) ]`
    fn if_item(&mut self) -> R<ItemKind> {
        self.enter_if()?;
        let r = self.if_item_inner();
        self.depth -= 1;
        r
    }

    fn if_item_inner(&mut self) -> R<ItemKind> {
        self.bump();
        let cond = self.expr()?;
        let then_block = self.block()?;
        let else_block = if self.eat(K::Else) {
            match self.peek() {
                K::LBrace => Some(self.block()?),
                K::If => {
                    let start = self.pos;
                    let kind = self.if_item()?;
                    let span = self.span_from(start);
                    Some(Block {
                        items: Arc::new(vec![Item {
                            doc: None,
                            kind,
                            span,
                        }]),
                        span,
                    })
                }
                _ => {
                    self.expect_code(K::LBrace as u8);
                    self.expect_code(K::If as u8);
                    return Err(self.fail());
                }
            }
        } else {
            None
        };
        Ok(ItemKind::If {
            cond,
            then_block,
            else_block,
        })
    }

    // ---- expressions ----------------------------------------------------------

    /// `expr = or`: the five precedence levels `or and compare sum
    /// product`, read in one loop (operands and operators in order, no
    /// recursion per level) and then grouped: each level is one flat
    /// [`ExprKind::Binary`].
    fn expr(&mut self) -> R<Expr> {
        let first = self.unary()?;
        match self.binary_op() {
            None => Ok(first),
            Some(op) => self.binary_chain(first, op),
        }
    }

    /// The rest of [`Parser::expr`] after its first operand, at operator `op`.
    fn binary_chain(&mut self, first: Expr, op: (BinaryOp, u8)) -> R<Expr> {
        let mut operands = vec![first];
        let mut ops = vec![op];
        loop {
            self.bump();
            operands.push(self.unary()?);
            match self.binary_op() {
                Some(op) => ops.push(op),
                None => break,
            }
        }
        let mut operands = operands.into_iter().map(Some).collect::<Vec<_>>();
        Ok(group_binary(&mut operands, &ops, 0, ops.len(), 4))
    }

    /// The binary operator at the cursor and its level (0 = `* /` … 4 = `||`).
    fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        Some(match self.peek() {
            K::Star => (BinaryOp::Mul, 0),
            K::Slash => (BinaryOp::Div, 0),
            K::Plus => (BinaryOp::Add, 1),
            K::Minus => (BinaryOp::Sub, 1),
            K::EqEq => (BinaryOp::Eq, 2),
            K::NotEq => (BinaryOp::Ne, 2),
            K::Lt => (BinaryOp::Lt, 2),
            K::Le => (BinaryOp::Le, 2),
            K::Gt => (BinaryOp::Gt, 2),
            K::Ge => (BinaryOp::Ge, 2),
            K::AndAnd => (BinaryOp::And, 3),
            K::OrOr => (BinaryOp::Or, 4),
            _ => return None,
        })
    }

    /// `unary = { "!" | "-" } with`, `with = postfix { "with" block }`
    /// and `postfix` in one function: this is on the path of every nesting
    /// level, so it is one stack frame, and the rare parts are functions of
    /// their own.
    fn unary(&mut self) -> R<Expr> {
        let mut ops = Vec::new();
        loop {
            let op = match self.peek() {
                K::Bang => UnaryOp::Not,
                K::Minus => UnaryOp::Neg,
                _ => break,
            };
            ops.push((op, self.cur_span()));
            self.bump();
        }
        let base = self.atom()?;
        let mut post = Vec::new();
        self.postfix_ops(&mut post)?;
        while self.peek() == K::With {
            post.push(self.with_op()?);
        }
        let operand = postfix_chain(base, post);
        Ok(if ops.is_empty() {
            operand
        } else {
            Expr {
                span: ops[0].1.to(operand.span),
                kind: ExprKind::Unary {
                    ops,
                    operand: Box::new(operand),
                },
            }
        })
    }

    /// `"with" block`, at the `with`.
    fn with_op(&mut self) -> R<PostOp> {
        let start = self.pos;
        self.bump();
        let b = self.block()?;
        Ok(PostOp {
            span: self.span_from(start),
            kind: PostOpKind::With(b),
        })
    }

    /// `postfix = atom { call_args | "." IDENT | "[" expr "]" }` (a parent
    /// of an env).
    fn postfix(&mut self) -> R<Expr> {
        let base = self.atom()?;
        let mut ops = Vec::new();
        self.postfix_ops(&mut ops)?;
        Ok(postfix_chain(base, ops))
    }

    /// The operations after a postfix base, in a loop.
    fn postfix_ops(&mut self, ops: &mut Vec<PostOp>) -> R<()> {
        loop {
            match self.peek() {
                K::LParen => ops.push(self.call_args()),
                K::Dot => {
                    self.bump();
                    let id = self.ident()?;
                    ops.push(PostOp {
                        span: id.span,
                        kind: PostOpKind::Field(id),
                    });
                }
                K::LBracket => ops.push(self.index_op()?),
                _ => break,
            }
        }
        if self.bail {
            return Err(Fail);
        }
        Ok(())
    }

    /// `"[" expr "]"` after a postfix base, at the `[`; a broken index is
    /// an Error node.
    fn index_op(&mut self) -> R<PostOp> {
        let open = self.pos;
        self.bump();
        let at = self.pos;
        let index = match self.expr().and_then(|e| self.need(K::RBracket).map(|_| e)) {
            Ok(e) => e,
            Err(Fail) => {
                if self.bail {
                    return Err(Fail);
                }
                let e = self.err_expr(at);
                self.close_group(open);
                e
            }
        };
        Ok(PostOp {
            kind: PostOpKind::Index(Box::new(index)),
            span: self.span_from(open),
        })
    }

    /// `call_args = "(" [ arg { "," arg } [ "," ] ] ")"`, at the `(`;
    /// `arg = IDENT "=" expr | expr`. A broken argument is an Error value.
    fn call_args(&mut self) -> PostOp {
        let open = self.pos;
        self.bump();
        let mut args: Vec<Arg> = Vec::new();
        let mut clean = true;
        loop {
            if self.peek() == K::RParen {
                self.bump();
                break;
            }
            let start = self.pos;
            let arg = if self.peek() == K::Ident && self.nth(1) == K::Eq {
                self.ident().and_then(|name| {
                    self.bump();
                    let value = self.expr()?;
                    Ok(Arg {
                        name: Some(name),
                        value,
                        span: self.span_from(start),
                    })
                })
            } else if self.peek() == K::Comma {
                // Nothing to skip: the list cannot go on.
                self.expect_label(Label::Identifier);
                self.expect_label(Label::Expression);
                self.expect_code(K::RParen as u8);
                Err(self.fail())
            } else {
                let bare = self.peek() == K::Ident;
                if !bare {
                    self.expect_label(Label::Identifier);
                }
                self.expr().map(|value| {
                    if bare && self.pos == start + 1 {
                        // `name = value` was possible here too.
                        self.expect_code(K::Eq as u8);
                    }
                    Arg {
                        name: None,
                        span: value.span,
                        value,
                    }
                })
            };
            match arg {
                Ok(a) => {
                    args.push(a);
                    if self.eat(K::Comma) {
                        continue;
                    }
                    if self.eat(K::RParen) {
                        break;
                    }
                    self.fail();
                    clean = false;
                    if !self.bail {
                        self.close_group(open);
                    }
                    break;
                }
                Err(Fail) => {
                    if self.bail {
                        break;
                    }
                    let at_comma = self.skip_element(start, open);
                    let span = self.span_from(start);
                    match args.last_mut() {
                        // Broken arguments in a row are one Error argument.
                        Some(last)
                            if last.name.is_none()
                                && matches!(last.value.kind, ExprKind::Error) =>
                        {
                            last.span = last.span.to(span);
                            last.value.span = last.span;
                        }
                        _ => args.push(Arg {
                            name: None,
                            value: Expr {
                                kind: ExprKind::Error,
                                span,
                            },
                            span,
                        }),
                    }
                    if at_comma {
                        self.bump();
                        continue;
                    }
                    break;
                }
            }
        }
        if clean {
            let mut named = false;
            for a in &args {
                if a.name.is_some() {
                    named = true;
                } else if named && a.value.kind != ExprKind::Error {
                    self.broken = true;
                    if self.may_report(a.span.start) {
                        self.errors.push(Diagnostic::error(
                            "E0001",
                            a.span,
                            "positional argument after a named argument",
                        ));
                    }
                    break;
                }
            }
        }
        PostOp {
            kind: PostOpKind::Call(args),
            span: self.span_from(open),
        }
    }

    /// `atom`: literals, names, strings, enum literals, `( expr )`, lists
    /// and comprehensions, records, `if … then … else …`. A dispatcher, so
    /// that its stack frame is small (it is on the path of every nesting level).
    fn atom(&mut self) -> R<Expr> {
        match self.peek() {
            K::Int
            | K::Float
            | K::Quantity
            | K::Str
            | K::Ident
            | K::True
            | K::False
            | K::SelfKw
            | K::Dot => self.literal(),
            K::StrStart => self.template(),
            K::LParen => self.paren(),
            K::LBracket => self.list(),
            K::LBrace => self.record(),
            K::If => {
                self.enter_if()?;
                let r = self.if_expr();
                self.depth -= 1;
                r
            }
            _ => {
                self.expect_label(Label::Expression);
                Err(self.fail())
            }
        }
    }

    /// A literal, a name, `self` or an enum literal `.name`.
    fn literal(&mut self) -> R<Expr> {
        let start = self.pos;
        let kind = match self.peek() {
            K::True => ExprKind::Bool(true),
            K::False => ExprKind::Bool(false),
            K::SelfKw => ExprKind::SelfRef,
            K::Dot => {
                self.bump();
                let id = self.ident()?;
                return Ok(Expr {
                    kind: ExprKind::EnumLit(id.name),
                    span: self.span_from(start),
                });
            }
            _ => {
                let (kind, span) = self.take();
                let kind = match kind {
                    TokenKind::Int(i) => ExprKind::Int(i),
                    TokenKind::Float(f) => ExprKind::Float(f),
                    TokenKind::Quantity { number, suffix } => ExprKind::Quantity { number, suffix },
                    TokenKind::Str(s) => ExprKind::Str(vec![StrPart::Lit(s)]),
                    TokenKind::Ident(n) => ExprKind::Name(n),
                    _ => ExprKind::Error,
                };
                return Ok(Expr { kind, span });
            }
        };
        self.bump();
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `"(" expr ")"`: the expression itself (its span without the
    /// parentheses); a broken one is an Error node spanning the group.
    fn paren(&mut self) -> R<Expr> {
        let start = self.pos;
        self.bump();
        match self.expr().and_then(|e| self.need(K::RParen).map(|_| e)) {
            Ok(e) => Ok(e),
            Err(Fail) if self.bail => Err(Fail),
            Err(Fail) => {
                self.close_group(start);
                Ok(self.err_expr(start))
            }
        }
    }

    /// A record literal: a block.
    fn record(&mut self) -> R<Expr> {
        let b = self.block()?;
        Ok(Expr {
            span: b.span,
            kind: ExprKind::Record(b),
        })
    }

    /// `"if" expr "then" expr "else" expr`
    fn if_expr(&mut self) -> R<Expr> {
        let start = self.pos;
        self.bump();
        let c = self.expr()?;
        self.need(K::Then)?;
        let a = self.expr()?;
        self.need(K::Else)?;
        let b = self.expr()?;
        Ok(Expr {
            kind: ExprKind::If(Box::new(c), Box::new(a), Box::new(b)),
            span: self.span_from(start),
        })
    }

    /// `string = STR_START { STR_TEXT | INTERP_START expr INTERP_END } STR_END`
    fn template(&mut self) -> R<Expr> {
        let start = self.pos;
        self.bump();
        let mut parts = Vec::new();
        loop {
            match self.peek() {
                K::StrText => {
                    let (kind, _) = self.take();
                    if let TokenKind::StrText(s) = kind {
                        parts.push(StrPart::Lit(s));
                    }
                }
                K::InterpStart => {
                    let open = self.pos;
                    self.bump();
                    match self.expr().and_then(|e| self.need(K::InterpEnd).map(|_| e)) {
                        Ok(e) => parts.push(StrPart::Interp(Box::new(e))),
                        Err(Fail) if self.bail => return Err(Fail),
                        Err(Fail) => {
                            self.close_group(open);
                            parts.push(StrPart::Interp(Box::new(self.err_expr(open))));
                        }
                    }
                }
                K::StrEnd => {
                    self.bump();
                    break;
                }
                _ => {
                    // Only while bailing (the lexer balances strings).
                    return Err(self.fail());
                }
            }
        }
        Ok(Expr {
            kind: ExprKind::Str(parts),
            span: self.span_from(start),
        })
    }

    /// `"[" ( comprehension | [ expr { "," expr } [ "," ] ] ) "]"`
    fn list(&mut self) -> R<Expr> {
        let open = self.pos;
        self.bump();
        if self.peek() == K::For {
            return match self.comprehension() {
                Ok(kind) => Ok(Expr {
                    kind,
                    span: self.span_from(open),
                }),
                Err(Fail) if self.bail => Err(Fail),
                Err(Fail) => {
                    self.close_group(open);
                    Ok(self.err_expr(open))
                }
            };
        }
        self.expect_code(K::For as u8);
        let mut items = Vec::new();
        loop {
            if self.peek() == K::RBracket {
                self.bump();
                break;
            }
            let start = self.pos;
            let item = if self.peek() == K::Comma {
                // Nothing to skip: the list cannot go on.
                self.expect_label(Label::Expression);
                self.expect_code(K::RBracket as u8);
                Err(self.fail())
            } else {
                self.expr()
            };
            match item {
                Ok(e) => {
                    items.push(e);
                    if self.eat(K::Comma) {
                        continue;
                    }
                    if self.eat(K::RBracket) {
                        break;
                    }
                    let at = self.pos;
                    self.fail();
                    if self.bail {
                        return Err(Fail);
                    }
                    self.close_group(open);
                    items.push(self.err_expr(at));
                    break;
                }
                Err(Fail) => {
                    if self.bail {
                        return Err(Fail);
                    }
                    let at_comma = self.skip_element(start, open);
                    let e = self.err_expr(start);
                    match items.last_mut() {
                        // Broken elements in a row are one Error element.
                        Some(last) if matches!(last.kind, ExprKind::Error) => {
                            last.span = last.span.to(e.span)
                        }
                        _ => items.push(e),
                    }
                    if at_comma {
                        self.bump();
                        continue;
                    }
                    break;
                }
            }
        }
        items.shrink_to_fit();
        Ok(Expr {
            kind: ExprKind::List(items),
            span: self.span_from(open),
        })
    }

    /// `comprehension = "for" IDENT "in" expr [ "if" expr ] ":" expr`, then the `]`.
    fn comprehension(&mut self) -> R<ExprKind> {
        self.bump();
        let var = self.ident()?;
        self.need(K::In)?;
        let iter = self.expr()?;
        let cond = if self.eat(K::If) {
            Some(self.expr()?)
        } else {
            None
        };
        self.need(K::Colon)?;
        let body = self.expr()?;
        self.need(K::RBracket)?;
        Ok(ExprKind::Comprehension(Box::new(Comprehension {
            var,
            iter,
            cond,
            body,
        })))
    }
}

/// How the token kind recorded as `code` (`K as u8`) is named in a message.
fn describe_code(code: u8) -> String {
    // `code` was recorded from a `K` (all below 64).
    const ALL: [K; 57] = [
        K::Ident,
        K::Import,
        K::As,
        K::Param,
        K::Let,
        K::Fn,
        K::Env,
        K::Enum,
        K::Extends,
        K::With,
        K::If,
        K::Then,
        K::Else,
        K::For,
        K::In,
        K::Where,
        K::True,
        K::False,
        K::SelfKw,
        K::Int,
        K::Float,
        K::Quantity,
        K::Str,
        K::StrStart,
        K::StrText,
        K::InterpStart,
        K::InterpEnd,
        K::StrEnd,
        K::Newline,
        K::Eq,
        K::PlusEq,
        K::MinusEq,
        K::EqEq,
        K::NotEq,
        K::Lt,
        K::Le,
        K::Gt,
        K::Ge,
        K::Plus,
        K::Minus,
        K::Star,
        K::Slash,
        K::Bang,
        K::AndAnd,
        K::OrOr,
        K::Dot,
        K::Comma,
        K::Colon,
        K::Question,
        K::Arrow,
        K::LParen,
        K::RParen,
        K::LBracket,
        K::RBracket,
        K::LBrace,
        K::RBrace,
        K::Eof,
    ];
    ALL.get(code as usize)
        .map_or_else(String::new, |k| k.describe())
}

/// Marks a recovered declaration: its span covers what was skipped, and an
/// env gets an Error item at the end of its body (if it has none), so
/// evaluating it stops there quietly (as at every Error node) instead of
/// reporting what the missing part would have set.
fn mark_recovered(d: &mut Decl, span: Span) {
    match d {
        Decl::Import(x) => x.span = span,
        Decl::Param(x) => x.span = span,
        Decl::Let(x) => x.span = span,
        Decl::Enum(x) => x.span = span,
        Decl::Fn(x) => x.span = span,
        Decl::Env(x) => {
            x.span = span;
            if !matches!(
                x.body.items.last(),
                Some(Item {
                    kind: ItemKind::Error,
                    ..
                })
            ) {
                let at = Span::new(x.body.span.end as usize, x.body.span.end as usize);
                Arc::make_mut(&mut x.body.items).push(Item {
                    doc: None,
                    kind: ItemKind::Error,
                    span: at,
                });
            }
        }
    }
}

/// Groups `operands[lo..=hi]` (with `ops[lo..hi]` between them, none
/// looser than `level`) into flat chains, one [`ExprKind::Binary`] per
/// level: split at the operators of `level`, group each part one level
/// tighter. Recurses at most five levels deep; the work is linear per level.
fn group_binary(
    operands: &mut [Option<Expr>],
    ops: &[(BinaryOp, u8)],
    lo: usize,
    hi: usize,
    level: u8,
) -> Expr {
    if lo == hi {
        return operands[lo].take().unwrap_or(Expr {
            kind: ExprKind::Error,
            span: Span::new(0, 0),
        });
    }
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut seps: Vec<BinaryOp> = Vec::new();
    let mut from = lo;
    for (i, &(op, l)) in ops.iter().enumerate().take(hi).skip(lo) {
        if l == level {
            parts.push((from, i));
            seps.push(op);
            from = i + 1;
        }
    }
    parts.push((from, hi));
    if seps.is_empty() && level > 0 {
        return group_binary(operands, ops, lo, hi, level - 1);
    }
    let mut it = parts.into_iter();
    let (a, b) = it.next().unwrap_or((lo, lo));
    let tighter = level.saturating_sub(1);
    let first = group_binary(operands, ops, a, b, tighter);
    let rest: Vec<(BinaryOp, Expr)> = seps
        .into_iter()
        .zip(it)
        .map(|(op, (a, b))| (op, group_binary(operands, ops, a, b, tighter)))
        .collect();
    let span = first.span.to(rest.last().map_or(first.span, |r| r.1.span));
    Expr {
        span,
        kind: ExprKind::Binary {
            first: Box::new(first),
            rest,
        },
    }
}

/// `base` followed by `ops` as one flat [`ExprKind::Postfix`], merged into
/// `base` when it already is one (the `with` blocks after a postfix chain,
/// or a parenthesized chain); `base` itself when there is no operation.
fn postfix_chain(base: Expr, mut ops: Vec<PostOp>) -> Expr {
    ops.shrink_to_fit();
    let Some(last) = ops.last() else {
        return base;
    };
    let span = base.span.to(last.span);
    match base.kind {
        ExprKind::Postfix {
            base: inner,
            ops: mut first,
        } => {
            first.extend(ops);
            Expr {
                span,
                kind: ExprKind::Postfix {
                    base: inner,
                    ops: first,
                },
            }
        }
        kind => Expr {
            span,
            kind: ExprKind::Postfix {
                base: Box::new(Expr {
                    kind,
                    span: base.span,
                }),
                ops,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `src` and returns the parser (its counters) and the module.
    fn run(src: &str) -> (Parser<'_>, Module) {
        let (tokens, _) = lex(src);
        let mut p = Parser::new(src, tokens);
        let m = p.module();
        (p, m)
    }

    /// Recovery at every level of a deep nesting skips each group in one
    /// step: the work is linear in the tokens, not in tokens × depth (which
    /// re-scanning every group from where its construct began would be).
    #[test]
    fn recovery_at_every_nesting_level_is_linear() {
        let n = 2000;
        let cases = [
            // A list, a call, parentheses, an index, each broken after its
            // (broken) inner group, 200 levels deep.
            format!(
                "let x = {}{}{}\n",
                "[".repeat(200),
                "1, ".repeat(n),
                "x ]".repeat(200)
            ),
            format!(
                "let x = {}{}{}\n",
                "f(".repeat(200),
                "1, ".repeat(n),
                "x )".repeat(200)
            ),
            format!(
                "let x = {}{}{}\n",
                "(".repeat(200),
                "1 + ".repeat(n),
                "1 x )".repeat(200)
            ),
            format!(
                "let x = a{}{}{}\n",
                "[".repeat(200),
                "1 + ".repeat(n),
                "1 x ]".repeat(200)
            ),
            // Records and nested blocks: each item broken after its block.
            format!(
                "env a {{\n{}{}{}}}\n",
                "x = {\n".repeat(200),
                "y = 1\n".repeat(n),
                "} 1\n".repeat(200)
            ),
            format!(
                "env a {{\n{}{}{}}}\n",
                "x {\n".repeat(200),
                "y = 1\n".repeat(n),
                "} 1\n".repeat(200)
            ),
        ];
        for src in &cases {
            let (p, _) = run(src);
            assert!(!p.errors.is_empty());
            let tokens = p.kinds.len();
            assert!(
                p.steps <= 2 * tokens,
                "{} recovery steps for {tokens} tokens: {}",
                p.steps,
                &src[..40]
            );
        }
    }

    /// Errors after the first on a line are dropped when they happen (the
    /// final de-duplication would drop them anyway): a line of 100,000
    /// broken arguments records one error, not 100,000.
    #[test]
    fn a_line_of_broken_pieces_records_one_error() {
        let cases = [
            format!("let x = f(a{})\n", ",".repeat(100_000)),
            format!("let x = [a{}]\n", ",".repeat(100_000)),
            format!("let x = f({})\n", "=,".repeat(100_000)),
            format!("env a {{ {} }}\n", "x = =,".repeat(100_000)),
            format!("enum e {{ {} }}\n", "1 ".repeat(100_000)),
        ];
        for src in &cases {
            let (p, _) = run(src);
            assert_eq!(p.errors.len(), 1, "{}", &src[..30]);
        }
    }
}
