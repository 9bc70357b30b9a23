//! From the AST and the trivia table to a [`Doc`]: the canonical layout
//! (book/src/formatting.md) with every comment in the token gap it was in.
//!
//! Comments are a queue in source order. Lists of things (declarations,
//! block items, list elements, arguments, parameters, enum variants) take
//! the comments before each element as its own-line comments and a comment
//! after it on the same line as its end-of-line comment; comments before a
//! closing bracket stay at the end of the list. Any other comment (inside an
//! expression) is printed where the printer reaches the next expression,
//! parenthesis or closer after it, which is the same gap between two tokens
//! as in the source, so the line break after it is as legal as it was.

use crate::doc::*;
use scl_syntax::ast::*;
use scl_syntax::{Parse, PieceKind};

/// True if `d` prints nothing at all (no text, no break).
fn is_empty(d: &Doc) -> bool {
    match d {
        Doc::Nil => true,
        Doc::Concat(v, _) => v.iter().all(is_empty),
        _ => false,
    }
}

struct Comment {
    start: u32,
    end: u32,
    text: String,
    /// Only blanks between the comment and the line break before it.
    own_line: bool,
}

/// A token (a piece that is not whitespace, a line break or a comment).
struct Tok {
    start: u32,
    end: u32,
    kind: PieceKind,
}

pub(crate) struct Printer<'a> {
    src: &'a str,
    comments: Vec<Comment>,
    next: usize,
    toks: Vec<Tok>,
    /// For each token that is a `(`, the index of its `)`.
    close_of: Vec<Option<usize>>,
}

/// One element of a list with its comments.
struct Part {
    /// Own-line comments before the element, each with "an empty line before it".
    leading: Vec<(Doc, bool)>,
    /// An empty line before the element (or before its first comment).
    blank: bool,
    doc: Doc,
    trailing: Option<Doc>,
}

struct Seq {
    /// A comment on the opener's line (`{ // …`).
    after_open: Option<Doc>,
    parts: Vec<Part>,
    /// Comments after the last element, before the closer.
    dangling: Vec<(Doc, bool)>,
}

impl Seq {
    fn has_comments(&self) -> bool {
        self.after_open.is_some()
            || !self.dangling.is_empty()
            || self
                .parts
                .iter()
                .any(|p| !p.leading.is_empty() || p.trailing.is_some())
    }
}

impl<'a> Printer<'a> {
    pub(crate) fn new(src: &'a str, parse: &Parse) -> Printer<'a> {
        let mut comments = Vec::new();
        let mut toks = Vec::new();
        for p in &parse.trivia.pieces {
            match p.kind {
                PieceKind::Whitespace | PieceKind::Newline => {}
                PieceKind::Comment | PieceKind::DocComment => {
                    let line_start = src[..p.span.start as usize]
                        .rfind('\n')
                        .map_or(0, |i| i + 1);
                    comments.push(Comment {
                        start: p.span.start,
                        end: p.span.end,
                        text: src[p.span.range()].trim_end().to_string(),
                        own_line: src[line_start..p.span.start as usize]
                            .bytes()
                            .all(|b| matches!(b, b' ' | b'\t' | b'\r')),
                    })
                }
                kind => toks.push(Tok {
                    start: p.span.start,
                    end: p.span.end,
                    kind,
                }),
            }
        }
        let mut close_of = vec![None; toks.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            if t.kind == PieceKind::Punct {
                match &src[t.start as usize..t.end as usize] {
                    "(" => open.push(i),
                    ")" => {
                        if let Some(o) = open.pop() {
                            close_of[o] = Some(i);
                        }
                    }
                    _ => {}
                }
            }
        }
        Printer {
            src,
            comments,
            next: 0,
            toks,
            close_of,
        }
    }

    fn raw(&self, start: u32, end: u32) -> &'a str {
        &self.src[start as usize..end as usize]
    }

    // ---- comments ---------------------------------------------------------

    fn peek_before(&self, pos: u32) -> bool {
        self.comments.get(self.next).is_some_and(|c| c.start < pos)
    }

    /// The comments before `pos`, printed in place (inside an expression).
    /// A line broken by a comment continues one level deeper (it is the
    /// rest of the same declaration or item); the own-line comments are at
    /// that level too.
    fn inline(&mut self, pos: u32) -> Doc {
        let d = self.inline_here(pos);
        if is_empty(&d) {
            return d;
        }
        nest(d)
    }

    /// [`Self::inline`] without the extra level: for a place that already
    /// has one (an operator's right side, a part of a broken `if`, inside
    /// parentheses or a comprehension).
    fn inline_here(&mut self, pos: u32) -> Doc {
        let mut out = Vec::new();
        while self.peek_before(pos) {
            let c = &self.comments[self.next];
            self.next += 1;
            if c.own_line {
                out.push(Doc::NewlineIfNeeded);
            } else {
                out.push(text(" "));
            }
            out.push(text(c.text.clone()));
            out.push(Doc::Hard);
        }
        concat(out)
    }

    /// Skips the comments inside `[start, end)` (printed as part of raw text).
    fn skip(&mut self, end: u32) {
        while self.peek_before(end) {
            self.next += 1;
        }
    }

    fn newlines(&self, from: u32, to: u32) -> usize {
        if from >= to {
            return 0;
        }
        self.raw(from, to).bytes().filter(|&b| b == b'\n').count()
    }

    /// The own-line comments before `pos`, each with whether an empty line
    /// is before it; `last` is where the text before them ended (updated).
    fn leading(&mut self, pos: u32, last: &mut u32) -> Vec<(Doc, bool)> {
        let mut out = Vec::new();
        while self.peek_before(pos) {
            let c = &self.comments[self.next];
            self.next += 1;
            let blank = self.newlines(*last, c.start) >= 2;
            out.push((text(c.text.clone()), blank));
            *last = c.end;
        }
        out
    }

    /// The comment on the same line after `end` (only blanks and commas
    /// between), if any.
    fn trailing(&mut self, end: u32, last: &mut u32) -> Option<Doc> {
        let c = self.comments.get(self.next)?;
        if c.start < end
            || !self
                .raw(end, c.start)
                .bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b','))
        {
            return None;
        }
        self.next += 1;
        *last = c.end;
        Some(text(c.text.clone()))
    }

    /// The elements of a list between an opener ending at `open` and a
    /// closer starting at `close`, with their comments.
    fn seq<T>(
        &mut self,
        items: &[T],
        open: u32,
        close: u32,
        range: impl Fn(&Self, &T) -> (u32, u32),
        mut print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Seq {
        let mut last = open;
        // (The module has no opener: it starts at 0.)
        let after_open = if open == 0 {
            None
        } else {
            self.trailing(open, &mut last)
        };
        let mut parts = Vec::new();
        for it in items {
            let (s, e) = range(self, it);
            let leading = self.leading(s, &mut last);
            let blank = match leading.first() {
                Some((_, b)) => *b,
                None => self.newlines(last, s) >= 2,
            };
            let blank = blank && !parts.is_empty();
            let mut leading = leading;
            if parts.is_empty() {
                if let Some(first) = leading.first_mut() {
                    first.1 = false;
                }
            }
            // The empty line before the element itself, after its comments.
            let blank_after_comments = !leading.is_empty() && self.newlines(last, s) >= 2;
            let doc = print(self, it);
            // Comments the element did not place (none, normally).
            let rest = self.inline(e);
            let doc = concat(vec![doc, rest]);
            last = e.max(last);
            let trailing = self.trailing(e, &mut last);
            if blank_after_comments {
                leading.push((Doc::Nil, true));
            }
            parts.push(Part {
                leading,
                blank,
                doc,
                trailing,
            });
        }
        let mut dangling = Vec::new();
        while self.peek_before(close) {
            let c = &self.comments[self.next];
            self.next += 1;
            let blank =
                self.newlines(last, c.start) >= 2 && !(parts.is_empty() && dangling.is_empty());
            dangling.push((text(c.text.clone()), blank));
            last = c.end;
        }
        Seq {
            after_open,
            parts,
            dangling,
        }
    }

    // ---- layouts ------------------------------------------------------------

    /// One element per line (blocks, declarations, broken lists). `sep` is
    /// printed after every element (`","` in lists, nothing in blocks).
    fn lines(seq: Seq, sep: &str) -> Doc {
        Self::lines_last(seq, sep, true)
    }

    /// [`Self::lines`]; `last_sep` false leaves `sep` off the last element
    /// (a list of parents takes no trailing comma).
    fn lines_last(seq: Seq, sep: &str, last_sep: bool) -> Doc {
        let n = seq.parts.len();
        let mut out = Vec::new();
        let mut first = true;
        let brk = |out: &mut Vec<Doc>, blank: bool, first: &mut bool| {
            if !*first {
                out.push(if blank { Doc::Blank } else { Doc::Hard });
            }
            *first = false;
        };
        for (k, p) in seq.parts.into_iter().enumerate() {
            let mut blank = p.blank;
            let mut pending_blank = false;
            for (i, (c, b)) in p.leading.into_iter().enumerate() {
                if matches!(c, Doc::Nil) {
                    // An empty line between the comments and the element.
                    pending_blank = true;
                    continue;
                }
                brk(&mut out, if i == 0 { blank } else { b }, &mut first);
                out.push(c);
                blank = false;
            }
            brk(&mut out, blank || pending_blank, &mut first);
            out.push(p.doc);
            if last_sep || k + 1 < n {
                out.push(text(sep));
            }
            if let Some(t) = p.trailing {
                out.push(text(" "));
                out.push(t);
            }
        }
        for (c, b) in seq.dangling {
            brk(&mut out, b, &mut first);
            out.push(c);
        }
        concat(out)
    }

    /// `open items close`, always one item per line (an env body, a nested
    /// block, an `if` block): `{}` when empty.
    fn block_layout(seq: Seq, sep: &str) -> Doc {
        Self::broken(seq, "{", "}", sep)
    }

    /// `open`, one element per line (each followed by `sep`), `close`;
    /// `open close` when there is nothing at all.
    fn broken(mut seq: Seq, open: &str, close: &str, sep: &str) -> Doc {
        let after_open = seq.after_open.take();
        if seq.parts.is_empty() && seq.dangling.is_empty() && after_open.is_none() {
            return text(format!("{open}{close}"));
        }
        let mut v = vec![text(open)];
        if let Some(c) = after_open {
            v.push(text(" "));
            v.push(c);
        }
        let body = Self::lines(seq, sep);
        if matches!(&body, Doc::Concat(x, _) if x.is_empty()) {
            v.push(Doc::Hard);
        } else {
            v.push(nest(concat(vec![Doc::Hard, body])));
            v.push(Doc::Hard);
        }
        v.push(text(close));
        concat(v)
    }

    /// A bracketed list: flat (`open a, b close`) when it fits and holds no
    /// comment, else one element per line with a trailing comma. `pad` is
    /// the blank inside the brackets when flat (`{ a, b }`) or not (`[a, b]`).
    fn list_layout(seq: Seq, open: &str, close: &str, pad: bool, force: bool) -> Doc {
        Self::list_layout_sep(seq, open, close, pad, force, ",")
    }

    /// [`Self::list_layout`] with `sep` after each element when broken
    /// (`""` for a `with` block, whose items are separated by line breaks).
    fn list_layout_sep(
        seq: Seq,
        open: &str,
        close: &str,
        pad: bool,
        force: bool,
        sep: &str,
    ) -> Doc {
        if force || seq.has_comments() || seq.parts.is_empty() {
            return Self::broken(seq, open, close, sep);
        }
        let inner = if pad { Doc::Line } else { Doc::Soft };
        let mut body = vec![inner.clone()];
        let n = seq.parts.len();
        for (i, p) in seq.parts.into_iter().enumerate() {
            body.push(p.doc);
            if i + 1 < n {
                body.push(if_break(text(sep), text(",")));
                body.push(Doc::Line);
            }
        }
        body.push(if_break(text(sep), Doc::Nil));
        group(concat(vec![
            text(open),
            nest(concat(body)),
            inner,
            text(close),
        ]))
    }

    // ---- tokens -------------------------------------------------------------

    /// The index of the first token starting at or after `pos`.
    fn tok_at(&self, pos: u32) -> usize {
        self.toks.partition_point(|t| t.start < pos)
    }

    /// The first token at or after `pos` with text `s`.
    fn find(&self, pos: u32, s: &str) -> Option<&Tok> {
        self.toks[self.tok_at(pos)..]
            .iter()
            .find(|t| self.raw(t.start, t.end) == s)
    }

    /// The token `s` (the first at or after `from`), after the comments
    /// before it: a comment stays in the gap before the token it preceded.
    fn tok(&mut self, from: u32, s: &str) -> Doc {
        concat(vec![self.before(from, s), text(s.to_string())])
    }

    /// [`Self::tok`] for a place that is already one level deeper
    /// ([`Self::inline_here`]).
    fn tok_here(&mut self, from: u32, s: &str) -> Doc {
        let c = match self.find(from, s).map(|t| t.start) {
            Some(at) => self.inline_here(at),
            None => Doc::Nil,
        };
        concat(vec![c, text(s.to_string())])
    }

    /// The comments before the first token `s` at or after `from` (for a
    /// token that a layout prints itself, like a list's opener).
    fn before(&mut self, from: u32, s: &str) -> Doc {
        match self.find(from, s).map(|t| t.start) {
            Some(at) => self.inline(at),
            None => Doc::Nil,
        }
    }

    /// True if token `i` is a `(` that opens a parenthesized expression (not
    /// a call's or a parameter list's: those follow the end of an
    /// expression or a name).
    fn paren_open(&self, i: usize) -> bool {
        let t = &self.toks[i];
        if t.kind != PieceKind::Punct || self.raw(t.start, t.end) != "(" {
            return false;
        }
        let Some(prev) = i.checked_sub(1).map(|j| &self.toks[j]) else {
            return true;
        };
        let ends_expr = match prev.kind {
            PieceKind::Ident | PieceKind::Number | PieceKind::Str => true,
            PieceKind::Keyword => {
                matches!(self.raw(prev.start, prev.end), "true" | "false" | "self")
            }
            PieceKind::Punct => matches!(self.raw(prev.start, prev.end), ")" | "]" | "}"),
            _ => false,
        };
        !ends_expr
    }

    /// The parentheses written around the text `[start, end)`, outermost
    /// first: (position of `(`, position of `)`).
    fn parens_around(&self, start: u32, end: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut a = self.tok_at(start);
        let mut b = self.toks.partition_point(|t| t.end <= end); // one past the last token
        while a > 0
            && b < self.toks.len()
            && self.paren_open(a - 1)
            && self.close_of[a - 1] == Some(b)
        {
            out.push((self.toks[a - 1].start, self.toks[b].start));
            a -= 1;
            b += 1;
        }
        out.reverse();
        out
    }

    /// The text of `e` without its own parentheses (the AST's spans leave
    /// out the parentheses of an operand, so chains are measured from theirs).
    fn inner_range(&self, e: &Expr) -> (u32, u32) {
        match &e.kind {
            ExprKind::Binary { first, rest } => (
                self.outer(first).0,
                rest.last().map_or(e.span.end, |(_, x)| self.outer(x).1),
            ),
            ExprKind::Postfix { base, ops } => (
                self.chain_parens(base, ops)
                    .iter()
                    .flatten()
                    .map(|&(o, _)| o)
                    .min()
                    .unwrap_or(self.outer(base).0),
                ops.last().map_or(e.span.end, |o| o.span.end),
            ),
            ExprKind::Unary { ops, operand } => (
                ops.first().map_or(e.span.start, |o| o.1.start),
                self.outer(operand).1,
            ),
            _ => (e.span.start, e.span.end),
        }
    }

    /// For each operation of a postfix chain but the last, the parentheses
    /// that close right after it (outermost first): the parser merges
    /// `(a[0]).b` into one chain `a [0] .b`, so the parentheses around the
    /// base and its first operations are only in the text. (Those around the
    /// whole chain are the chain's own, see [`Printer::outer`].)
    fn chain_parens(&self, base: &Expr, ops: &[PostOp]) -> Vec<Vec<(u32, u32)>> {
        let mut start = self.outer(base).0;
        let mut out = Vec::with_capacity(ops.len().saturating_sub(1));
        for o in ops.iter().take(ops.len().saturating_sub(1)) {
            let ps = self.parens_around(start, o.span.end);
            if let Some(&(open, _)) = ps.first() {
                start = open;
            }
            out.push(ps);
        }
        out
    }

    /// The text of `e` with its parentheses.
    fn outer(&self, e: &Expr) -> (u32, u32) {
        let (s, t) = self.inner_range(e);
        match self.parens_around(s, t).first() {
            Some(&(o, c)) => (o, c + 1),
            None => (s, t),
        }
    }

    // ---- declarations ---------------------------------------------------------

    pub(crate) fn module(&mut self, m: &Module) -> Doc {
        let end = self.src.len() as u32;
        let seq = self.seq(
            &m.decls,
            0,
            end,
            |_, d| (d.span().start, d.span().end),
            |p, d| p.decl(d),
        );
        let empty = seq.parts.is_empty() && seq.dangling.is_empty();
        let body = Self::lines(seq, "");
        if empty {
            return Doc::Nil;
        }
        concat(vec![body, Doc::Hard])
    }

    fn decl(&mut self, d: &Decl) -> Doc {
        match d {
            Decl::Import(i) => {
                let path = self.raw(i.path_span.start, i.path_span.end);
                self.skip(i.path_span.end);
                concat(vec![
                    text("import "),
                    text(path),
                    text(" "),
                    self.tok(i.path_span.end, "as"),
                    text(" "),
                    self.ident(&i.alias),
                ])
            }
            Decl::Param(p) => {
                let mut v = vec![
                    text("param "),
                    self.ident(&p.name),
                    self.tok(p.name.span.end, ":"),
                    text(" "),
                    self.ty(&p.ty),
                    text(" "),
                    self.tok(p.ty.span.end, "="),
                    text(" "),
                    self.expr(&p.default),
                ];
                if let Some(w) = &p.where_ {
                    v.push(text(" "));
                    v.push(self.tok(self.outer(&p.default).1, "where"));
                    v.push(text(" "));
                    v.push(self.expr(w));
                }
                concat(v)
            }
            Decl::Let(l) => concat(vec![
                text("let "),
                self.ident(&l.name),
                text(" "),
                self.tok(l.name.span.end, "="),
                text(" "),
                self.expr(&l.value),
            ]),
            Decl::Enum(e) => {
                let name = self.ident(&e.name);
                // The comments before the `{` (the list prints the `{` itself).
                let brace = self.before(e.name.span.end, "{");
                let open = self
                    .find(e.name.span.end, "{")
                    .map_or(e.name.span.end, |t| t.end);
                let seq = self.seq(
                    &e.variants,
                    open,
                    e.span.end - 1,
                    |_, v| (v.span.start, v.span.end),
                    |p, v| p.ident(v),
                );
                concat(vec![
                    text("enum "),
                    name,
                    text(" "),
                    brace,
                    Self::list_layout(seq, "{", "}", true, false),
                ])
            }
            Decl::Fn(f) => {
                let mut v = vec![
                    text("fn "),
                    self.ident(&f.name),
                    self.params(f.name.span.end, &f.params),
                ];
                let mut after = self.params_end(f.name.span.end);
                if let Some(t) = &f.ret {
                    v.push(text(" "));
                    v.push(self.tok(after, "->"));
                    v.push(text(" "));
                    v.push(self.ty(t));
                    after = t.span.end;
                }
                v.push(text(" "));
                v.push(self.tok(after, "="));
                v.push(text(" "));
                v.push(self.expr(&f.body));
                concat(v)
            }
            Decl::Env(e) => {
                let mut v = vec![text("env "), self.ident(&e.name)];
                if let Some(ps) = &e.params {
                    v.push(self.params(e.name.span.end, ps));
                }
                if let (false, Some(es)) = (e.extends.is_empty(), e.extends_span) {
                    let open = self.find(es.start, "extends").map_or(es.start, |t| t.end);
                    let seq = self.seq(
                        &e.extends,
                        open,
                        e.body.span.start,
                        |p, x| p.outer(x),
                        |p, x| p.expr(x),
                    );
                    v.push(text(" "));
                    v.push(
                        self.tok(
                            e.params
                                .as_ref()
                                .map_or(e.name.span.end, |_| self.params_end(e.name.span.end)),
                            "extends",
                        ),
                    );
                    if seq.has_comments() {
                        let mut seq = seq;
                        if let Some(c) = seq.after_open.take() {
                            v.push(text(" "));
                            v.push(c);
                        }
                        // (No comment can stand between the last parent and
                        // the `{`: a line break there ends the declaration.)
                        // Parents on lines of their own are indented two
                        // levels, so the body's items (one level) stand apart.
                        v.push(nest(nest(concat(vec![
                            Doc::Hard,
                            Self::lines_last(seq, ",", false),
                        ]))));
                    } else {
                        let mut ps = Vec::new();
                        for (i, p) in seq.parts.into_iter().enumerate() {
                            if i > 0 {
                                ps.push(text(","));
                                ps.push(Doc::Line);
                            }
                            ps.push(p.doc);
                        }
                        // (Broken: two levels, as above.)
                        v.push(group(nest(nest(concat(vec![Doc::Line, concat(ps)])))));
                    }
                }
                v.push(text(" "));
                v.push(self.block(&e.body));
                concat(v)
            }
        }
    }

    fn ident(&mut self, id: &Ident) -> Doc {
        concat(vec![self.inline(id.span.start), text(id.name.clone())])
    }

    /// The end of the parameter list after the name ending at `after`.
    fn params_end(&self, after: u32) -> u32 {
        let i = self.tok_at(after);
        match self.close_of.get(i).copied().flatten() {
            Some(c) => self.toks[c].end,
            None => after,
        }
    }

    /// `(name: T = default, …)` after the name ending at `after`.
    fn params(&mut self, after: u32, ps: &[ParamSig]) -> Doc {
        let Some(i) = self
            .toks
            .get(self.tok_at(after))
            .map(|_| self.tok_at(after))
        else {
            return text("()");
        };
        let open = self.toks[i].end;
        let close = self.close_of[i].map_or(open, |c| self.toks[c].start);
        let pre = self.inline(self.toks[i].start);
        let seq = self.seq(
            ps,
            open,
            close,
            |_, p| (p.span.start, p.span.end),
            |pr, p| {
                let mut v = vec![
                    pr.ident(&p.name),
                    pr.tok(p.name.span.end, ":"),
                    text(" "),
                    pr.ty(&p.ty),
                ];
                if let Some(d) = &p.default {
                    v.push(text(" "));
                    v.push(pr.tok(p.ty.span.end, "="));
                    v.push(text(" "));
                    v.push(pr.expr(d));
                }
                concat(v)
            },
        );
        concat(vec![pre, Self::list_layout(seq, "(", ")", false, false)])
    }

    fn ty(&mut self, t: &TypeExpr) -> Doc {
        let pre = self.inline(t.span.start);
        let body = match &t.kind {
            TypeExprKind::Named(segs) => {
                let mut v = Vec::new();
                for (i, s) in segs.iter().enumerate() {
                    if i > 0 {
                        v.push(self.tok(segs[i - 1].span.end, "."));
                    }
                    v.push(self.ident(s));
                }
                concat(v)
            }
            TypeExprKind::List(x) => concat(vec![text("["), self.ty(x), self.tok(x.span.end, "]")]),
            TypeExprKind::Map(x) => {
                // The key type as written (always `String` in a valid program,
                // which is checked after parsing).
                let i = self.tok_at(t.span.start) + 1;
                let (key, key_at) = match self.toks.get(i) {
                    Some(k) if k.kind == PieceKind::Ident => (self.raw(k.start, k.end), k.start),
                    _ => ("String", t.span.start + 1),
                };
                concat(vec![
                    text("{"),
                    self.inline(key_at),
                    text(key),
                    self.tok(key_at, ":"),
                    text(" "),
                    self.ty(x),
                    self.tok(x.span.end, "}"),
                ])
            }
            TypeExprKind::Optional(x) => concat(vec![self.ty(x), self.tok(x.span.end, "?")]),
            TypeExprKind::Error => {
                self.skip(t.span.end);
                text(self.raw(t.span.start, t.span.end))
            }
        };
        concat(vec![pre, body])
    }

    // ---- blocks and items -----------------------------------------------------

    fn block_seq(&mut self, b: &Block) -> Seq {
        self.seq(
            &b.items,
            b.span.start + 1,
            b.span.end.saturating_sub(1),
            |_, it| (it.span.start, it.span.end),
            |p, it| p.item(it),
        )
    }

    /// An env body, a nested block or an `if` block: one item per line.
    fn block(&mut self, b: &Block) -> Doc {
        // (A `{` after a comment starts its line at the item's level, as its
        // `}` does.)
        let pre = self.inline_here(b.span.start);
        let seq = self.block_seq(b);
        concat(vec![pre, Self::block_layout(seq, "")])
    }

    /// A record literal or a `with` block: `{ a = 1, b = 2 }` when it fits,
    /// holds no comment and was written on one line (no line break after
    /// its `{`), else one item per line.
    fn record(&mut self, b: &Block, commas: bool) -> Doc {
        let first = b.items.first().map_or(b.span.end, |i| i.span.start);
        let written_broken = self.newlines(b.span.start, first) > 0;
        let seq = self.block_seq(b);
        let sep = if commas { "," } else { "" };
        Self::list_layout_sep(seq, "{", "}", true, written_broken, sep)
    }

    fn item(&mut self, it: &Item) -> Doc {
        match &it.kind {
            ItemKind::Assign {
                path,
                op,
                op_span,
                value,
            } => {
                let op = match op {
                    AssignOp::Set => "=",
                    AssignOp::Append => "+=",
                    AssignOp::Remove => "-=",
                };
                concat(vec![
                    self.path(path),
                    self.inline(op_span.start),
                    text(" "),
                    text(op),
                    text(" "),
                    self.expr(value),
                ])
            }
            ItemKind::Nested { path, body } => {
                concat(vec![self.path(path), text(" "), self.block(body)])
            }
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let mut v = vec![
                    text("if "),
                    self.expr(cond),
                    text(" "),
                    self.block(then_block),
                ];
                if let Some(e) = else_block {
                    let else_at = self
                        .find(then_block.span.end, "else")
                        .map_or(e.span.start, |t| t.start);
                    // (`else` after `} // c` starts the line, as `} else` does.)
                    v.push(self.inline_here(else_at));
                    v.push(text(" "));
                    v.push(text("else "));
                    let is_else_if = e.items.len() == 1
                        && matches!(e.items[0].kind, ItemKind::If { .. })
                        && self.raw(e.span.start, e.span.end).starts_with("if");
                    if is_else_if {
                        v.push(self.inline_here(e.span.start));
                        v.push(self.item(&e.items[0]));
                    } else {
                        v.push(self.block(e));
                    }
                }
                concat(v)
            }
            ItemKind::Error => {
                self.skip(it.span.end);
                text(self.raw(it.span.start, it.span.end))
            }
        }
    }

    fn path(&mut self, p: &FieldPath) -> Doc {
        let mut v = Vec::new();
        for (i, s) in p.segments.iter().enumerate() {
            if i > 0 {
                v.push(self.tok(p.segments[i - 1].span.end, "."));
            }
            v.push(self.inline(s.span.start));
            v.push(text(self.raw(s.span.start, s.span.end)));
        }
        concat(v)
    }

    // ---- expressions ----------------------------------------------------------

    fn expr(&mut self, e: &Expr) -> Doc {
        let (s, t) = self.inner_range(e);
        let parens = self.parens_around(s, t);
        // A comment before the expression: the whole expression continues
        // one level deeper (`= // c` then the value indented, as after `+`).
        let with_pre = |pre: Doc, body: Doc| {
            if is_empty(&pre) {
                body
            } else {
                nest(concat(vec![pre, body]))
            }
        };
        if parens.is_empty() {
            let pre = self.inline_here(s);
            let body = self.expr_inner(e);
            return with_pre(pre, body);
        }
        // Inside parentheses: a comment's line break indents what follows.
        let mut pre = Doc::Nil;
        let mut inner = Vec::new();
        for (k, &(o, _)) in parens.iter().enumerate() {
            if k == 0 {
                pre = self.inline_here(o);
            } else {
                inner.push(self.inline_here(o));
            }
            inner.push(text("("));
        }
        inner.push(self.inline_here(s));
        inner.push(self.expr_inner(e));
        for &(_, c) in parens.iter().rev() {
            inner.push(self.inline_here(c));
            inner.push(text(")"));
        }
        with_pre(pre, nest(concat(inner)))
    }

    fn expr_inner(&mut self, e: &Expr) -> Doc {
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Quantity { .. }
            | ExprKind::Str(_)
            | ExprKind::Error => {
                // Literals exactly as written (`1_000`, escapes, `"""` text).
                self.skip(e.span.end);
                let s = self.raw(e.span.start, e.span.end);
                if s.contains('\n') {
                    // Line ends are `\n` (inside a string the lexer reads
                    // `\r\n` as `\n`, so the value stays).
                    Doc::Raw(s.replace("\r\n", "\n"))
                } else {
                    text(s)
                }
            }
            ExprKind::Bool(b) => text(if *b { "true" } else { "false" }),
            ExprKind::SelfRef => text("self"),
            ExprKind::EnumLit(n) => {
                // `.` and the name are two tokens (a comment may sit between).
                let name_at = self
                    .toks
                    .get(self.tok_at(e.span.start) + 1)
                    .map_or(e.span.end, |t| t.start);
                concat(vec![text("."), self.inline(name_at), text(n.clone())])
            }
            ExprKind::Name(n) => text(n.clone()),
            ExprKind::List(xs) => {
                let seq = self.seq(
                    xs,
                    e.span.start + 1,
                    e.span.end - 1,
                    |p, x| p.outer(x),
                    |p, x| p.expr(x),
                );
                Self::list_layout(seq, "[", "]", false, false)
            }
            ExprKind::Comprehension(c) => {
                let Comprehension {
                    var,
                    iter,
                    cond,
                    body,
                } = &**c;
                // A comment after the `[` stays at the end of its line.
                let after_open = self.before(e.span.start, "for");
                let mut v = vec![
                    after_open,
                    Doc::Soft,
                    text("for"),
                    text(" "),
                    self.ident(var),
                    text(" "),
                    self.tok_here(var.span.end, "in"),
                    text(" "),
                    self.expr(iter),
                ];
                let mut after = self.outer(iter).1;
                if let Some(c) = cond {
                    v.push(text(" "));
                    v.push(self.tok_here(after, "if"));
                    v.push(text(" "));
                    v.push(self.expr(c));
                    after = self.outer(c).1;
                }
                v.push(self.tok_here(after, ":"));
                v.push(text(" "));
                v.push(self.expr(body));
                v.push(self.inline_here(e.span.end - 1));
                group(concat(vec![
                    text("["),
                    nest(concat(v)),
                    Doc::Soft,
                    text("]"),
                ]))
            }
            ExprKind::Record(b) => self.record(b, true),
            ExprKind::Postfix { base, ops } => {
                // The parser merges a parenthesized chain into the chain
                // after it (`(a[0]).b` is one chain `a [0] .b`): the
                // parentheses written around the base and its first k
                // operations are found again here and kept (those around
                // the whole chain are `expr`'s).
                let inner = self.chain_parens(base, ops);
                let mut opens: Vec<u32> = inner.iter().flatten().map(|&(o, _)| o).collect();
                opens.sort_unstable();
                // As in `expr`: a comment before the first `(` stays
                // before it, and a line break inside the parentheses
                // indents what follows.
                let mut pre = Doc::Nil;
                let mut v = Vec::new();
                for (k, &o) in opens.iter().enumerate() {
                    if k == 0 {
                        pre = self.inline_here(o);
                    } else {
                        v.push(self.inline_here(o));
                    }
                    v.push(text("("));
                }
                let nested = !opens.is_empty();
                v.push(self.expr(base));
                for (k, op) in ops.iter().enumerate() {
                    match &op.kind {
                        PostOpKind::Call(args) => {
                            v.push(self.inline(op.span.start));
                            let seq = self.seq(
                                args,
                                op.span.start + 1,
                                op.span.end - 1,
                                |p, a| match &a.name {
                                    Some(n) => (n.span.start, p.outer(&a.value).1),
                                    None => p.outer(&a.value),
                                },
                                |p, a| match &a.name {
                                    Some(n) => concat(vec![
                                        p.ident(n),
                                        text(" "),
                                        p.tok(n.span.end, "="),
                                        text(" "),
                                        p.expr(&a.value),
                                    ]),
                                    None => p.expr(&a.value),
                                },
                            );
                            v.push(Self::list_layout(seq, "(", ")", false, false));
                        }
                        PostOpKind::Field(id) => {
                            // (The op's span is the name's: the `.` is the
                            // token before it.)
                            let dot = self.tok_at(id.span.start).checked_sub(1);
                            let dot_at = dot.map_or(id.span.start, |i| self.toks[i].start);
                            v.push(self.inline(dot_at));
                            v.push(text("."));
                            v.push(self.ident(id));
                        }
                        PostOpKind::Index(i) => {
                            v.push(self.inline(op.span.start));
                            v.push(text("["));
                            v.push(nest(concat(vec![
                                self.inline_here(self.outer(i).0),
                                self.expr(i),
                                self.inline_here(op.span.end - 1),
                            ])));
                            v.push(text("]"));
                        }
                        PostOpKind::With(b) => {
                            v.push(self.inline(op.span.start));
                            v.push(text(" "));
                            v.push(text("with "));
                            v.push(self.inline(b.span.start));
                            v.push(self.record(b, false));
                        }
                    }
                    for &(_, c) in inner.get(k).into_iter().flatten().rev() {
                        v.push(self.inline_here(c));
                        v.push(text(")"));
                    }
                }
                if nested {
                    concat(vec![pre, nest(concat(v))])
                } else {
                    concat(v)
                }
            }
            ExprKind::Unary { ops, operand } => {
                let mut v = Vec::new();
                let mut prev = None;
                for (op, span) in ops {
                    v.push(self.inline(span.start));
                    // `- -x`, not `--x` (which reads as another operator).
                    if prev == Some(UnaryOp::Neg) && *op == UnaryOp::Neg {
                        v.push(text(" "));
                    }
                    v.push(text(match op {
                        UnaryOp::Not => "!",
                        UnaryOp::Neg => "-",
                    }));
                    prev = Some(*op);
                }
                v.push(self.expr(operand));
                concat(v)
            }
            ExprKind::Binary { first, rest } => {
                let mut v = vec![self.expr(first)];
                let mut tail = Vec::new();
                let mut after = self.outer(first).1;
                for (op, x) in rest {
                    tail.push(text(" "));
                    tail.push(self.tok_here(after, op.as_str()));
                    // A comment after the operator stays at the end of its line.
                    tail.push(self.inline_here(self.outer(x).0));
                    tail.push(Doc::Line);
                    tail.push(self.expr(x));
                    after = self.outer(x).1;
                }
                v.push(nest(concat(tail)));
                group(concat(v))
            }
            ExprKind::If(c, a, b) => {
                let cd = self.expr(c);
                let then_at = self.find(self.outer(c).1, "then").map_or(0, |t| t.start);
                let c1 = self.inline_here(then_at);
                let ad = self.expr(a);
                let else_at = self.find(self.outer(a).1, "else").map_or(0, |t| t.start);
                let c2 = self.inline_here(else_at);
                let bd = self.expr(b);
                group(concat(vec![
                    text("if "),
                    cd,
                    nest(concat(vec![
                        c1,
                        Doc::Line,
                        text("then "),
                        ad,
                        c2,
                        Doc::Line,
                        text("else "),
                        bd,
                    ])),
                ]))
            }
        }
    }
}
