//! The parser: chumsky 0.13 combinators over the tokens of [`crate::lex`].
//!
//! The grammar is written down in `grammar/scl.ebnf`. The lexer has already
//! decided which newlines are separators and guarantees that brackets,
//! strings and interpolations are balanced in the token stream, so the
//! parser can always skip a broken piece as a balanced group.
//!
//! Recovery happens at four levels, innermost first:
//! * a call argument or list element: skip to the next `,` or closing bracket
//!   ([`ExprKind::Error`]);
//! * a bracketed expression, list, argument list or block with an error
//!   inside that was not caught: the whole group becomes an error node;
//! * an item: skip to the next newline, `,` or `}` of the same block
//!   ([`ItemKind::Error`]);
//! * a declaration: skip to the next top-level newline.
//!
//! Then the errors are de-duplicated: at most one syntax error per line, and
//! none on a line that already has an error from the lexer.

use crate::ast::*;
use crate::lexer::{lex, TokenKind};
use crate::Parse;
use chumsky::error::{RichPattern, RichReason};
use chumsky::input::{Checkpoint, Cursor, MapExtra, MappedInput};
use chumsky::inspector::Inspector;
use chumsky::prelude::*;
use scl_diag::{Diagnostic, LineIndex, Span};
use std::collections::HashMap;
use std::sync::Arc;

type Tok = TokenKind;
type SSpan = SimpleSpan<usize>;
type In<'t> = MappedInput<'t, Tok, SSpan, &'t [(Tok, SSpan)]>;
type Ex<'t> = extra::Full<Rich<'t, Tok, SSpan>, Depth, ()>;
type P<'t, O> = Boxed<'t, 't, In<'t>, O, Ex<'t>>;
/// Doc comments by the byte offset of the token they precede.
type Docs = HashMap<usize, String>;

fn sp(s: SSpan) -> Span {
    Span::new(s.start, s.end)
}

/// Parses one file. Never fails and never panics: the module holds everything
/// that could be parsed (broken pieces as `Error` nodes) and `errors` the
/// syntax errors, in source order.
pub fn parse(src: &str) -> Parse {
    let (tokens, lex_errors) = lex(src);
    let trivia = Arc::new(crate::trivia::Trivia {
        pieces: crate::trivia::pieces(src, &tokens),
    });

    // Doc comments leave the stream; they are attached by position.
    let mut docs: Docs = HashMap::new();
    let mut pending: Option<String> = None;
    let mut toks: Vec<(Tok, SSpan)> = Vec::with_capacity(tokens.len());
    for t in tokens {
        match t.kind {
            TokenKind::DocComment(text) => match &mut pending {
                Some(p) => {
                    p.push('\n');
                    p.push_str(&text);
                }
                None => pending = Some(text),
            },
            kind => {
                let span = SSpan::from(t.span.start as usize..t.span.end as usize);
                if kind != TokenKind::Newline {
                    if let Some(doc) = pending.take() {
                        docs.insert(span.start, doc);
                    }
                }
                toks.push((kind, span));
            }
        }
    }

    let eoi = SSpan::from(src.len()..src.len());
    let nesting = Overflow::new(None);
    let (module, errs) = {
        let input = toks.as_slice().split_token_span(eoi);
        let (out, errs) = module_parser(&docs, &nesting)
            .parse_with_state(input, &mut Depth::default())
            .into_output_errors();
        let errs: Vec<Diagnostic> = errs.iter().map(to_diagnostic).collect();
        (out, errs)
    };
    let mut errors = lex_errors;
    let module = match module {
        Some(m) => m,
        None => {
            // Not expected (every token can be skipped at top level), but never fail.
            if errs.is_empty() {
                errors.push(Diagnostic::error(
                    "E0001",
                    sp(eoi),
                    "could not parse this file",
                ));
            }
            Module::default()
        }
    };
    let mut errs = errs;
    if let Some(at) = nesting.get() {
        // Everything the parser said after the point it refused to go
        // deeper is a consequence of that.
        errs.retain(|d| (d.at.span.start as usize) < at);
        let end = toks
            .iter()
            .find(|(_, s)| s.start >= at)
            .map_or(at, |(_, s)| s.end);
        errors.push(too_deep(Span::new(at, end)));
    }
    let errors = dedup_errors(src, errors, errs);
    Parse {
        module: Arc::new(module),
        errors,
        trivia,
    }
}

/// The parser's state: how many `if` constructs (`if … then … else`
/// expressions and `else if` chains of items) enclose the current position.
/// Brackets are limited to the same depth by the lexer
/// ([`crate::MAX_NESTING`]). A checkpoint saves the depth and a rewind
/// restores it, so a construct that failed half-way leaves no count behind.
#[derive(Default)]
struct Depth(usize);

impl<'t> Inspector<'t, In<'t>> for Depth {
    type Checkpoint = usize;
    fn on_token(&mut self, _: &Tok) {}
    fn on_save<'p>(&self, _: &Cursor<'t, 'p, In<'t>>) -> usize {
        self.0
    }
    fn on_rewind<'p>(&mut self, marker: &Checkpoint<'t, 'p, In<'t>, usize>) {
        self.0 = *marker.inspector();
    }
}

/// Where the parser first refused to nest deeper (a byte offset): kept
/// outside the state, so that no rewind forgets it.
type Overflow = std::cell::Cell<Option<usize>>;

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

/// Parses `p`, an `if` construct, one level deeper, or fails (recording
/// where in `overflow`) when that would pass [`crate::MAX_NESTING`]: the
/// parser recurses once per
/// level, so this bounds the stack it needs whatever the input. Both steps
/// are `try_map_with`, which always runs (also where chumsky only checks).
fn nested<'t, O: 't>(
    overflow: &'t Overflow,
    p: impl Parser<'t, In<'t>, O, Ex<'t>> + Clone + 't,
) -> impl Parser<'t, In<'t>, O, Ex<'t>> + Clone + 't {
    // Only where an `if` starts: a position where one merely could start
    // (every item) must not count.
    just(Tok::If)
        .rewind()
        .try_map_with(move |_, e: &mut MapExtra<'t, '_, In<'t>, Ex<'t>>| {
            let depth = e.state().0;
            if depth >= crate::MAX_NESTING {
                let span: SSpan = e.span();
                if overflow.get().is_none() {
                    overflow.set(Some(span.start));
                }
                return Err(Rich::custom(span, "nested too deeply"));
            }
            e.state().0 = depth + 1;
            Ok(())
        })
        .ignore_then(p)
        .try_map_with(|o, e: &mut MapExtra<'t, '_, In<'t>, Ex<'t>>| {
            e.state().0 -= 1;
            Ok(o)
        })
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
    let index = LineIndex::new(src);
    let line = |d: &Diagnostic| index.line(d.at.span.start as usize);
    let mut lines: std::collections::HashSet<usize> = lex_errors.iter().map(line).collect();
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

/// Turns a chumsky error into an `E0001` diagnostic.
fn to_diagnostic(err: &Rich<'_, Tok, SSpan>) -> Diagnostic {
    let span = sp(*err.span());
    match err.reason() {
        RichReason::Custom(msg) => Diagnostic::error("E0001", span, msg.clone()),
        RichReason::ExpectedFound { expected, found } => {
            let found_s = found
                .as_deref()
                .map_or_else(|| "end of file".to_string(), |t| t.describe());
            // Structural expectations (closers, separators, keywords, labels)
            // say more than "an operator could continue the expression here".
            let mut exp: Vec<String> = Vec::new();
            let mut ops: Vec<String> = Vec::new();
            for p in expected {
                let s = match p {
                    RichPattern::Token(t) if is_operator(t) => {
                        let d = t.describe();
                        if !ops.contains(&d) {
                            ops.push(d);
                        }
                        continue;
                    }
                    RichPattern::Token(t) => t.describe(),
                    RichPattern::Label(l) => l.to_string(),
                    RichPattern::Identifier(i) => format!("`{i}`"),
                    RichPattern::EndOfInput => "end of file".to_string(),
                    _ => continue,
                };
                if !exp.contains(&s) {
                    exp.push(s);
                }
            }
            if exp.iter().any(|e| e == "declaration") {
                exp.retain(|e| e != "newline");
            }
            if exp.iter().any(|e| e == "field name") {
                exp.retain(|e| e != "newline" && e != "`,`");
            }
            if exp.is_empty() {
                exp = ops;
            }
            let (msg, label) = if exp.is_empty() || exp.len() > 5 {
                (
                    format!("unexpected {found_s}"),
                    "unexpected here".to_string(),
                )
            } else {
                let list = match exp.len() {
                    1 => exp[0].clone(),
                    n => format!("{} or {}", exp[..n - 1].join(", "), exp[n - 1]),
                };
                (
                    format!("expected {list}, found {found_s}"),
                    format!("expected {list}"),
                )
            };
            let mut d = Diagnostic::error("E0001", span, msg).with_primary_label(label);
            if exp.iter().any(|e| e == "declaration")
                && matches!(found.as_deref(), Some(Tok::Ident(_)))
            {
                d = d.with_help("items such as `x = ...` belong inside `env NAME { ... }`; a module constant is `let x = ...`");
            }
            if matches!(found.as_deref(), Some(t) if crate::is_keyword(t.symbol()))
                && exp.iter().any(|e| e == "field name")
            {
                d = d.with_help("keywords cannot be field names");
            }
            d
        }
    }
}

/// Tokens that only continue an expression (binary operators and postfix openers).
fn is_operator(t: &Tok) -> bool {
    use TokenKind::*;
    matches!(
        t,
        EqEq | NotEq
            | Lt
            | Le
            | Gt
            | Ge
            | Plus
            | Minus
            | Star
            | Slash
            | AndAnd
            | OrOr
            | Dot
            | LParen
            | LBracket
            | With
            | Question
    )
}

/// The delimiter pairs of the token stream (always balanced).
const PAIRS: [(Tok, Tok); 5] = [
    (Tok::LParen, Tok::RParen),
    (Tok::LBracket, Tok::RBracket),
    (Tok::LBrace, Tok::RBrace),
    (Tok::StrStart, Tok::StrEnd),
    (Tok::InterpStart, Tok::InterpEnd),
];

/// One balanced group: `( ... )`, `[ ... ]`, `{ ... }`, a string with interpolation.
///
/// Built once per parse and shared (by cloning the box) by every [`junk`].
fn group<'t>() -> P<'t, ()> {
    fn one<'t>(i: usize) -> impl Parser<'t, In<'t>, (), Ex<'t>> + Clone {
        let (s, e) = PAIRS[i].clone();
        let mut others: Vec<(Tok, Tok)> = PAIRS.to_vec();
        others.remove(i);
        let others: [(Tok, Tok); 4] = others.try_into().unwrap_or_else(|_| unreachable!());
        nested_delimiters(s, e, others, |_| ())
    }
    choice((one(0), one(1), one(2), one(3), one(4))).boxed()
}

/// Skips at least one token or group (`group` is [`group`]), up to (not
/// including) a stop token or a closing delimiter at the same nesting.
fn junk<'t>(group: &P<'t, ()>, stops: &[Tok]) -> P<'t, ()> {
    let mut excluded: Vec<Tok> = stops.to_vec();
    for (o, c) in PAIRS {
        excluded.push(o);
        excluded.push(c);
    }
    choice((group.clone(), any().and_is(none_of(excluded)).ignored()))
        .repeated()
        .at_least(1)
        .boxed()
}

/// Skips a broken declaration: at least one token, then everything up to a
/// newline followed by a declaration keyword (or the end of the file). So the
/// lines of an env whose header is broken give one error, not one per line.
fn junk_decl<'t>(group: &P<'t, ()>) -> P<'t, ()> {
    let decl_kw = one_of([
        Tok::Import,
        Tok::Param,
        Tok::Let,
        Tok::Fn,
        Tok::Env,
        Tok::Enum,
    ]);
    let nl_inside = just(Tok::Newline)
        .and_is(just(Tok::Newline).then(decl_kw).not())
        .ignored();
    let line = junk(group, &[Tok::Newline]);
    line.clone()
        .then(choice((line, nl_inside)).repeated())
        .ignored()
        .boxed()
}

/// `base` followed by `ops` as one flat [`ExprKind::Postfix`], merged into
/// `base` when it already is one (the `with` blocks after a postfix chain);
/// `base` itself when there is no operation.
fn postfix_chain(base: Expr, ops: Vec<PostOp>) -> Expr {
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

fn ident<'t>() -> P<'t, Ident> {
    select! { Tok::Ident(name) = e => Ident { name, span: sp(e.span()) } }
        .labelled("identifier")
        .boxed()
}

/// A recursive parser. Inside the closure given to [`recursive`] the handle
/// is weak, so the parser graph holds no `Rc` cycle and is freed with the
/// returned (strong) parser.
type Rec<'t, O> = Recursive<chumsky::recursive::Direct<'t, 't, In<'t>, O, Ex<'t>>>;

/// The parser of a whole module.
///
/// It is built anew for every file (it borrows the file's doc comments), so
/// it must not leak: every recursive parser is made with [`recursive`], whose
/// handle inside its own definition is weak. In particular no parser made
/// with `Recursive::declare` may be used inside its own definition, because
/// those clones are strong and form an `Rc` cycle that is never freed (see
/// `tests/leak.rs`).
fn module_parser<'t>(docs: &'t Docs, nesting: &'t Overflow) -> P<'t, Module> {
    let doc_at = move |span: SSpan| docs.get(&span.start).cloned();

    // Shared pieces, built once and cloned (cheap: they are boxed).
    let ident = ident();
    let group = group();
    let junk_comma = junk(&group, &[Tok::Comma]);
    let junk_item = junk(&group, &[Tok::Newline, Tok::Comma]);
    let junk_decl = junk_decl(&group);

    let err_expr = |s: SSpan| Expr {
        kind: ExprKind::Error,
        span: sp(s),
    };

    // ---- types --------------------------------------------------------------
    let ty: P<'t, TypeExpr> = recursive(|ty| {
        let named = ident
            .clone()
            .separated_by(just(Tok::Dot))
            .at_least(1)
            .collect::<Vec<_>>()
            .map(TypeExprKind::Named);
        let list = ty
            .clone()
            .delimited_by(just(Tok::LBracket), just(Tok::RBracket))
            .map(|t| TypeExprKind::List(Box::new(t)));
        let map = just(Tok::LBrace)
            .ignore_then(just(Tok::Newline).or_not())
            .ignore_then(ident.clone())
            .then_ignore(just(Tok::Colon))
            .then(ty.clone())
            .then_ignore(just(Tok::Newline).or_not())
            .then_ignore(just(Tok::RBrace))
            .map(|(_key, t)| TypeExprKind::Map(Box::new(t)));
        choice((named, list, map))
            .map_with(|kind, e| TypeExpr {
                kind,
                span: sp(e.span()),
            })
            .foldl_with(
                just(Tok::Question).map_with(|_, e| sp(e.span())).repeated(),
                // `T??` is `T?`: one Optional however many `?` (flat).
                |t, q, _| match t.kind {
                    TypeExprKind::Optional(_) => TypeExpr {
                        span: t.span.to(q),
                        kind: t.kind,
                    },
                    _ => TypeExpr {
                        span: t.span.to(q),
                        kind: TypeExprKind::Optional(Box::new(t)),
                    },
                },
            )
    })
    .labelled("type")
    .boxed();

    // ---- expressions, items and blocks ----------------------------------------
    // The block and postfix parsers are built inside the definition of `expr`
    // (they need its weak handle) and handed out through these slots for the
    // declarations. They only hold `expr` weakly: the module parser below keeps
    // it alive by also using `expr` itself.
    let mut block_slot: Option<Rec<'t, Block>> = None;
    let mut postfix_slot: Option<P<'t, Expr>> = None;
    let expr: Rec<'t, Expr> = recursive(|expr: Rec<'t, Expr>| {
        // ---- items and blocks -----------------------------------------------
        let block: Rec<'t, Block> = recursive(|block: Rec<'t, Block>| {
            let seps = one_of([Tok::Newline, Tok::Comma]).repeated();
            let segment = choice((
                select! { Tok::Ident(name) = e => PathSegment { name, quoted: false, span: sp(e.span()) } },
                select! { Tok::Str(name) = e => PathSegment { name, quoted: true, span: sp(e.span()) } },
            ))
            .labelled("field name");
            let path = segment
                .separated_by(just(Tok::Dot))
                .at_least(1)
                .collect::<Vec<_>>()
                .map_with(|segments, e| FieldPath {
                    segments,
                    span: sp(e.span()),
                });
            let assign_op = select! {
                Tok::Eq => AssignOp::Set,
                Tok::PlusEq => AssignOp::Append,
                Tok::MinusEq => AssignOp::Remove,
            }
            .labelled("`=`, `+=`, `-=`")
            .map_with(|op, e| (op, sp(e.span())));

            enum Rhs {
                Assign(AssignOp, Span, Expr),
                Nested(Block),
            }
            let path_item = path
                .then(choice((
                    assign_op
                        .then(expr.clone())
                        .map(|((op, s), v)| Rhs::Assign(op, s, v)),
                    block.clone().map(Rhs::Nested),
                )))
                .map(|(path, rhs)| match rhs {
                    Rhs::Assign(op, op_span, value) => ItemKind::Assign {
                        path,
                        op,
                        op_span,
                        value,
                    },
                    Rhs::Nested(body) => ItemKind::Nested { path, body },
                });

            let if_item = recursive(|if_item| {
                let else_if = just(Tok::If)
                    .rewind()
                    .ignore_then(if_item)
                    .map_with(|kind, e| {
                        let span = sp(e.span());
                        Block {
                            items: Arc::new(vec![Item {
                                doc: None,
                                kind,
                                span,
                            }]),
                            span,
                        }
                    });
                nested(
                    nesting,
                    just(Tok::If)
                        .ignore_then(expr.clone())
                        .then(block.clone())
                        .then(
                            just(Tok::Else)
                                .ignore_then(choice((block.clone(), else_if)))
                                .or_not(),
                        )
                        .map(|((cond, then_block), else_block)| ItemKind::If {
                            cond,
                            then_block,
                            else_block,
                        }),
                )
            });

            let item = choice((if_item, path_item))
                .map_with(move |kind, e| Item {
                    doc: doc_at(e.span()),
                    kind,
                    span: sp(e.span()),
                })
                .then_ignore(choice((
                    one_of([Tok::Newline, Tok::Comma]).ignored(),
                    just(Tok::RBrace).rewind().ignored(),
                )))
                .recover_with(via_parser(junk_item.map_with(|_, e| Item {
                    doc: None,
                    kind: ItemKind::Error,
                    span: sp(e.span()),
                })))
                .then_ignore(seps.clone());

            just(Tok::LBrace)
                .ignore_then(seps)
                .ignore_then(item.repeated().collect::<Vec<_>>())
                .then_ignore(just(Tok::RBrace))
                .map_with(|items, e| Block {
                    items: Arc::new(items),
                    span: sp(e.span()),
                })
                .recover_with(via_parser(nested_delimiters(
                    Tok::LBrace,
                    Tok::RBrace,
                    [
                        (Tok::LParen, Tok::RParen),
                        (Tok::LBracket, Tok::RBracket),
                        (Tok::StrStart, Tok::StrEnd),
                    ],
                    |s| Block {
                        items: Arc::new(Vec::new()),
                        span: sp(s),
                    },
                )))
        });

        // ---- expressions ----------------------------------------------------
        let literal = select! {
            Tok::Int(i) => ExprKind::Int(i),
            Tok::Float(f) => ExprKind::Float(f),
            Tok::Quantity { number, suffix } => ExprKind::Quantity { number, suffix },
            Tok::True => ExprKind::Bool(true),
            Tok::False => ExprKind::Bool(false),
            Tok::SelfKw => ExprKind::SelfRef,
            Tok::Str(s) => ExprKind::Str(vec![StrPart::Lit(s)]),
            Tok::Ident(n) => ExprKind::Name(n),
        }
        .map_with(|kind, e| Expr {
            kind,
            span: sp(e.span()),
        });

        let enum_lit = just(Tok::Dot)
            .ignore_then(ident.clone())
            .map_with(|id, e| Expr {
                kind: ExprKind::EnumLit(id.name),
                span: sp(e.span()),
            });

        let interp = expr
            .clone()
            .delimited_by(just(Tok::InterpStart), just(Tok::InterpEnd))
            .map(StrPart::Interp)
            .recover_with(via_parser(nested_delimiters(
                Tok::InterpStart,
                Tok::InterpEnd,
                [
                    (Tok::LParen, Tok::RParen),
                    (Tok::LBracket, Tok::RBracket),
                    (Tok::LBrace, Tok::RBrace),
                    (Tok::StrStart, Tok::StrEnd),
                ],
                move |s| StrPart::Interp(err_expr(s)),
            )));
        let template = just(Tok::StrStart)
            .ignore_then(
                choice((select! { Tok::StrText(s) => StrPart::Lit(s) }, interp))
                    .repeated()
                    .collect::<Vec<_>>(),
            )
            .then_ignore(just(Tok::StrEnd))
            .map_with(|parts, e| Expr {
                kind: ExprKind::Str(parts),
                span: sp(e.span()),
            });

        let paren = expr
            .clone()
            .delimited_by(just(Tok::LParen), just(Tok::RParen))
            .recover_with(via_parser(nested_delimiters(
                Tok::LParen,
                Tok::RParen,
                [
                    (Tok::LBracket, Tok::RBracket),
                    (Tok::LBrace, Tok::RBrace),
                    (Tok::StrStart, Tok::StrEnd),
                ],
                err_expr,
            )));

        let comprehension = just(Tok::For)
            .ignore_then(ident.clone())
            .then_ignore(just(Tok::In))
            .then(expr.clone())
            .then(just(Tok::If).ignore_then(expr.clone()).or_not())
            .then_ignore(just(Tok::Colon))
            .then(expr.clone())
            .map(|(((var, iter), cond), body)| ExprKind::Comprehension {
                var,
                iter: Box::new(iter),
                cond: cond.map(Box::new),
                body: Box::new(body),
            });
        let element = expr.clone().recover_with(via_parser(
            junk_comma.clone().map_with(move |_, e| err_expr(e.span())),
        ));
        let elements = element
            .separated_by(just(Tok::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(ExprKind::List);
        let list = choice((comprehension, elements))
            .delimited_by(just(Tok::LBracket), just(Tok::RBracket))
            .map_with(|kind, e| Expr {
                kind,
                span: sp(e.span()),
            })
            .recover_with(via_parser(nested_delimiters(
                Tok::LBracket,
                Tok::RBracket,
                [
                    (Tok::LParen, Tok::RParen),
                    (Tok::LBrace, Tok::RBrace),
                    (Tok::StrStart, Tok::StrEnd),
                ],
                err_expr,
            )));

        let record = block.clone().map(|b| Expr {
            span: b.span,
            kind: ExprKind::Record(b),
        });

        let if_expr = nested(
            nesting,
            just(Tok::If)
                .ignore_then(expr.clone())
                .then_ignore(just(Tok::Then))
                .then(expr.clone())
                .then_ignore(just(Tok::Else))
                .then(expr.clone())
                .map_with(|((c, a), b), e| Expr {
                    kind: ExprKind::If(Box::new(c), Box::new(a), Box::new(b)),
                    span: sp(e.span()),
                }),
        );

        let atom = choice((literal, template, enum_lit, paren, list, record, if_expr))
            .labelled("expression");

        // Postfix: calls, field access, indexing, then `with` blocks — one
        // flat chain however long it is.
        let arg = choice((
            ident
                .clone()
                .then_ignore(just(Tok::Eq))
                .then(expr.clone())
                .map_with(|(name, value), e| Arg {
                    name: Some(name),
                    value,
                    span: sp(e.span()),
                }),
            expr.clone().map(|value| Arg {
                name: None,
                span: value.span,
                value,
            }),
        ))
        .recover_with(via_parser(junk_comma.map_with(move |_, e| Arg {
            name: None,
            value: err_expr(e.span()),
            span: sp(e.span()),
        })));
        let args = arg
            .separated_by(just(Tok::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .validate(|args: Vec<Arg>, _, emitter| {
                let mut named = false;
                for a in &args {
                    if a.name.is_some() {
                        named = true;
                    } else if named && a.value.kind != ExprKind::Error {
                        let s = a.span;
                        emitter.emit(Rich::custom(
                            SSpan::from(s.start as usize..s.end as usize),
                            "positional argument after a named argument",
                        ));
                        break;
                    }
                }
                args
            })
            .delimited_by(just(Tok::LParen), just(Tok::RParen))
            .recover_with(via_parser(nested_delimiters(
                Tok::LParen,
                Tok::RParen,
                [
                    (Tok::LBracket, Tok::RBracket),
                    (Tok::LBrace, Tok::RBrace),
                    (Tok::StrStart, Tok::StrEnd),
                ],
                |_| Vec::new(),
            )))
            .map_with(|args, e| PostOp {
                kind: PostOpKind::Call(args),
                span: sp(e.span()),
            });
        let field = just(Tok::Dot).ignore_then(ident.clone()).map(|id| PostOp {
            span: id.span,
            kind: PostOpKind::Field(id),
        });
        let index = expr
            .clone()
            .delimited_by(just(Tok::LBracket), just(Tok::RBracket))
            .map_with(|i, e| PostOp {
                kind: PostOpKind::Index(Box::new(i)),
                span: sp(e.span()),
            });
        let postfix = atom
            .clone()
            .then(
                choice((args, field, index))
                    .repeated()
                    .collect::<Vec<PostOp>>(),
            )
            .map(|(base, ops)| postfix_chain(base, ops))
            .boxed();

        let with_op = just(Tok::With)
            .ignore_then(block.clone())
            .map_with(|b, e| PostOp {
                span: sp(e.span()),
                kind: PostOpKind::With(b),
            });
        let with_ = postfix
            .clone()
            .then(with_op.repeated().collect::<Vec<PostOp>>())
            .map(|(base, ops)| postfix_chain(base, ops));

        let unary = select! { Tok::Bang => UnaryOp::Not, Tok::Minus => UnaryOp::Neg }
            .map_with(|op, e| (op, sp(e.span())))
            .repeated()
            .collect::<Vec<_>>()
            .then(with_)
            .map(|(ops, operand)| {
                if ops.is_empty() {
                    operand
                } else {
                    Expr {
                        span: ops[0].1.to(operand.span),
                        kind: ExprKind::Unary {
                            ops,
                            operand: Box::new(operand),
                        },
                    }
                }
            })
            .boxed();

        /// One precedence level: operands of `lower` separated by `ops`, as
        /// one flat [`ExprKind::Binary`] (a single operand is itself).
        fn binary<'t>(
            lower: P<'t, Expr>,
            ops: impl Parser<'t, In<'t>, BinaryOp, Ex<'t>> + Clone + 't,
        ) -> P<'t, Expr> {
            lower
                .clone()
                .then(ops.then(lower).repeated().collect::<Vec<_>>())
                .map(
                    |(first, rest): (Expr, Vec<(BinaryOp, Expr)>)| match rest.last() {
                        None => first,
                        Some((_, last)) => Expr {
                            span: first.span.to(last.span),
                            kind: ExprKind::Binary {
                                first: Box::new(first),
                                rest,
                            },
                        },
                    },
                )
                .boxed()
        }
        let product = binary(
            unary,
            select! { Tok::Star => BinaryOp::Mul, Tok::Slash => BinaryOp::Div },
        );
        let sum = binary(
            product,
            select! { Tok::Plus => BinaryOp::Add, Tok::Minus => BinaryOp::Sub },
        );
        let compare = binary(
            sum,
            select! {
                Tok::EqEq => BinaryOp::Eq,
                Tok::NotEq => BinaryOp::Ne,
                Tok::Lt => BinaryOp::Lt,
                Tok::Le => BinaryOp::Le,
                Tok::Gt => BinaryOp::Gt,
                Tok::Ge => BinaryOp::Ge,
            },
        );
        let and = binary(compare, just(Tok::AndAnd).to(BinaryOp::And));
        let or = binary(and, just(Tok::OrOr).to(BinaryOp::Or));

        block_slot = Some(block);
        postfix_slot = Some(postfix);
        or
    });
    let block = block_slot.expect("set by the definition of `expr`");
    let postfix = postfix_slot.expect("set by the definition of `expr`");

    // ---- declarations -------------------------------------------------------
    let param_sig = ident
        .clone()
        .then_ignore(just(Tok::Colon))
        .then(ty.clone())
        .then(just(Tok::Eq).ignore_then(expr.clone()).or_not())
        .map_with(|((name, ty), default), e| ParamSig {
            name,
            ty,
            default,
            span: sp(e.span()),
        });
    let params = param_sig
        .separated_by(just(Tok::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Tok::LParen), just(Tok::RParen))
        .boxed();

    let import = just(Tok::Import)
        .ignore_then(select! { Tok::Str(s) = e => (s, sp(e.span())) }.labelled("string"))
        .then_ignore(just(Tok::As))
        .then(ident.clone())
        .map_with(|((path, path_span), alias), e| {
            Decl::Import(ImportDecl {
                path,
                path_span,
                alias,
                span: sp(e.span()),
            })
        });

    let param = just(Tok::Param)
        .ignore_then(ident.clone())
        .then_ignore(just(Tok::Colon))
        .then(ty.clone())
        .then_ignore(just(Tok::Eq))
        .then(expr.clone())
        .then(just(Tok::Where).ignore_then(expr.clone()).or_not())
        .map_with(move |(((name, ty), default), where_), e| {
            Decl::Param(ParamDecl {
                doc: doc_at(e.span()),
                name,
                ty,
                default,
                where_,
                span: sp(e.span()),
            })
        });

    let let_ = just(Tok::Let)
        .ignore_then(ident.clone())
        .then_ignore(just(Tok::Eq))
        .then(expr.clone())
        .map_with(move |(name, value), e| {
            Decl::Let(LetDecl {
                doc: doc_at(e.span()),
                name,
                value,
                span: sp(e.span()),
            })
        });

    let seps1 = one_of([Tok::Newline, Tok::Comma]).repeated().at_least(1);
    let enum_ = just(Tok::Enum)
        .ignore_then(ident.clone())
        .then(
            ident
                .clone()
                .separated_by(seps1)
                .allow_leading()
                .allow_trailing()
                .collect::<Vec<_>>()
                .delimited_by(just(Tok::LBrace), just(Tok::RBrace)),
        )
        .map_with(move |(name, variants), e| {
            Decl::Enum(EnumDecl {
                doc: doc_at(e.span()),
                name,
                variants,
                span: sp(e.span()),
            })
        });

    let fn_ = just(Tok::Fn)
        .ignore_then(ident.clone())
        .then(params.clone())
        .then(just(Tok::Arrow).ignore_then(ty.clone()).or_not())
        .then_ignore(just(Tok::Eq))
        .then(expr.clone())
        .map_with(move |(((name, params), ret), body), e| {
            Decl::Fn(FnDecl {
                doc: doc_at(e.span()),
                name,
                params,
                ret,
                body,
                span: sp(e.span()),
            })
        });

    let extends = just(Tok::Extends)
        .ignore_then(
            postfix
                .separated_by(just(Tok::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .map_with(|parents, e| (parents, sp(e.span())));
    let env = just(Tok::Env)
        .ignore_then(ident)
        .then(params.or_not())
        .then(extends.or_not())
        .then(block)
        .map_with(move |(((name, params), extends), body), e| {
            let (extends, extends_span) = match extends {
                Some((p, s)) => (p, Some(s)),
                None => (Vec::new(), None),
            };
            Decl::Env(EnvDecl {
                doc: doc_at(e.span()),
                name,
                params,
                extends,
                extends_span,
                body,
                span: sp(e.span()),
            })
        });

    let decl = choice((import, param, let_, enum_, fn_, env))
        .labelled("declaration")
        .then_ignore(choice((just(Tok::Newline).ignored(), end())))
        .map(Some)
        .recover_with(via_parser(junk_decl.to(None)))
        .then_ignore(just(Tok::Newline).repeated());

    just(Tok::Newline)
        .repeated()
        .ignore_then(decl.repeated().collect::<Vec<_>>())
        .then_ignore(end())
        .map(|decls| Module {
            decls: decls.into_iter().flatten().collect(),
        })
        .boxed()
}
