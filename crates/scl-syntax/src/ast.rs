//! The abstract syntax tree of one SCL module.
//!
//! Every node carries its byte [`Span`]. Bodies of envs and records are
//! [`Block`]s behind an `Arc`, so the evaluator can keep a cheap handle on an
//! env's items (inheritance layers) without copying them. Nodes that failed to
//! parse are kept as `Error` variants, so a module with errors still has a
//! tree (parsing never fails).

use scl_diag::Span;
use std::sync::Arc;

/// The text of a name or of a short literal in the tree: kept inline when
/// it has at most 23 bytes (almost every identifier and most literals), so
/// that making, copying and dropping a tree allocates nothing per name;
/// a longer text is shared (`Arc<str>`), so a copy of it is a reference.
/// Derefs to `&str`; compares, hashes and orders as its text.
pub type Name = smol_str::SmolStr;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// One parsed module: its declarations in source order.
#[derive(Clone, PartialEq, Default)]
pub struct Module {
    pub decls: Vec<Decl>,
    /// The spans of the declarations that had a syntax error of their own
    /// (in their header, their value, or text after them), in source order.
    /// Such a declaration is still in `decls`, with its name, its kind and
    /// every part that parsed; a missing part is an `Error` node (a
    /// recovered env's body ends with an [`ItemKind::Error`] item). Its
    /// span covers the text the parser skipped. Later stages treat these
    /// spans as already reported: no diagnostic of their own inside them.
    /// Errors inside the items of a block are recovered per item
    /// ([`ItemKind::Error`]) and do not make the declaration recovered.
    pub recovered: Vec<Span>,
}

impl Module {
    /// The [`Module::recovered`] spans as `scl_diag::Ranges`, an empty span
    /// one byte wide: the one overlap rule of everything that skips
    /// recovered declarations (the outline, the type checker).
    pub fn recovered_ranges(&self) -> scl_diag::Ranges {
        scl_diag::Ranges::new(
            self.recovered
                .iter()
                .map(|s| (s.start, s.end.max(s.start + 1)))
                .collect(),
        )
    }
}

/// As derived, but `recovered` only when there is one (so the tree of a
/// valid module prints as it did before the field existed).
impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("Module");
        s.field("decls", &self.decls);
        if !self.recovered.is_empty() {
            s.field("recovered", &self.recovered);
        }
        s.finish()
    }
}

// Every module's tree is kept twice (positional, and anchored for
// incrementality): the common nodes stay small (the rare, large variants
// sit behind a `Box`).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<Decl>() <= 88);
    assert!(std::mem::size_of::<Expr>() <= 56);
    assert!(std::mem::size_of::<StrPart>() <= 32);
};

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Decl {
    Import(ImportDecl),
    Param(Box<ParamDecl>),
    Let(Box<LetDecl>),
    Enum(Box<EnumDecl>),
    Fn(Box<FnDecl>),
    Env(Box<EnvDecl>),
}

impl Decl {
    /// The declared name (the alias, for an import).
    pub fn name(&self) -> &Ident {
        match self {
            Decl::Import(d) => &d.alias,
            Decl::Param(d) => &d.name,
            Decl::Let(d) => &d.name,
            Decl::Enum(d) => &d.name,
            Decl::Fn(d) => &d.name,
            Decl::Env(d) => &d.name,
        }
    }
    /// The span of the whole declaration.
    pub fn span(&self) -> Span {
        match self {
            Decl::Import(d) => d.span,
            Decl::Param(d) => d.span,
            Decl::Let(d) => d.span,
            Decl::Enum(d) => d.span,
            Decl::Fn(d) => d.span,
            Decl::Env(d) => d.span,
        }
    }
    /// The `///` doc comment attached to the declaration, if any.
    pub fn doc(&self) -> Option<&str> {
        match self {
            Decl::Import(_) => None,
            Decl::Param(d) => d.doc.as_deref(),
            Decl::Let(d) => d.doc.as_deref(),
            Decl::Enum(d) => d.doc.as_deref(),
            Decl::Fn(d) => d.doc.as_deref(),
            Decl::Env(d) => d.doc.as_deref(),
        }
    }
}

/// `import "PATH" as ALIAS`
#[derive(Clone, Debug, PartialEq)]
pub struct ImportDecl {
    /// The path as written, without quotes (`./base.env.scl`, `std/s3-data`).
    pub path: Name,
    pub path_span: Span,
    pub alias: Ident,
    pub span: Span,
}

/// `param NAME: TYPE = DEFAULT [where PRED]`
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Expr,
    pub where_: Option<Expr>,
    pub span: Span,
}

/// `let NAME = EXPR`
#[derive(Clone, Debug, PartialEq)]
pub struct LetDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `enum NAME { a, b, c }`
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub variants: Vec<Ident>,
    pub span: Span,
}

/// `fn NAME(ARGS) -> TYPE = EXPR`
#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub params: Vec<ParamSig>,
    pub ret: Option<TypeExpr>,
    pub body: Expr,
    pub span: Span,
}

/// `env NAME [(ARGS)] [extends P, ...] { ITEMS }`
#[derive(Clone, Debug, PartialEq)]
pub struct EnvDecl {
    pub doc: Option<String>,
    pub name: Ident,
    /// `Some` for a template (even `env t() {}`), `None` for a plain env.
    pub params: Option<Vec<ParamSig>>,
    /// The parents, in order: names, `module.name`, or calls (template instances).
    pub extends: Vec<Expr>,
    /// The span of the `extends ...` clause (keyword through the last parent).
    pub extends_span: Option<Span>,
    pub body: Block,
    pub span: Span,
}

/// One argument of a fn or template: `name: Type [= default]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSig {
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

/// A type annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `Int`, `Memory`, `Volume`, `Flavor`, or a qualified `mod.Flavor` (segments).
    Named(Vec<Ident>),
    /// `[T]`
    List(Box<TypeExpr>),
    /// `{String: T}` (the key type is always String).
    Map(Box<TypeExpr>),
    /// `T?`
    Optional(Box<TypeExpr>),
    /// Could not be parsed.
    Error,
}

/// The items of an env body, a record literal, or a nested block, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub items: Arc<Vec<Item>>,
    /// From `{` to `}` inclusive.
    pub span: Span,
}

/// One item of a block.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub doc: Option<String>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// `PATH = EXPR`, `PATH += EXPR`, `PATH -= EXPR`
    Assign {
        path: FieldPath,
        op: AssignOp,
        op_span: Span,
        value: Expr,
    },
    /// `PATH { ITEMS }` — update field by field.
    Nested { path: FieldPath, body: Block },
    /// `if COND { ITEMS } [else { ITEMS } | else if ...]`
    If {
        cond: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// An item that could not be parsed (the error is in the parse result).
    Error,
}

/// `=`, `+=` or `-=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Set,
    Append,
    Remove,
}

/// A dotted path of field names; a segment may be a quoted string.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldPath {
    pub segments: Vec<PathSegment>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PathSegment {
    /// The field or key name (unquoted, escapes processed).
    pub name: Name,
    pub quoted: bool,
    pub span: Span,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A string, plain or with `${...}` parts; `"""` strings arrive here with
    /// indentation already removed.
    Str(Vec<StrPart>),
    /// A quantity literal: the number as written (`"1.5"`, `"32"`) and its suffix.
    Quantity {
        number: Name,
        suffix: QuantitySuffix,
    },
    /// `.name`, resolved against the expected type.
    EnumLit(Name),
    /// A plain name.
    Name(Name),
    /// `self`
    SelfRef,
    /// `[a, b, c]`
    List(Vec<Expr>),
    /// `[for x in xs if cond: body]`
    Comprehension(Box<Comprehension>),
    /// `{ ITEMS }` — a record (or, where an Env is expected, an anonymous env).
    Record(Block),
    /// A base followed by postfix operations applied left to right: calls,
    /// field access and indexing, then `with` blocks (`f(x).y[0] with { … }`).
    /// Flat, so a chain of any length costs no recursion; `ops` is never
    /// empty (a bare base is the base itself).
    Postfix {
        base: Box<Expr>,
        ops: Vec<PostOp>,
    },
    /// `!x`, `-x`, `!-x`: the operators, outermost first, then the operand.
    /// Flat like [`ExprKind::Postfix`]; `ops` is never empty.
    Unary {
        ops: Vec<(UnaryOp, Span)>,
        operand: Box<Expr>,
    },
    /// `a OP b OP c …`: the operands of one precedence level, folded left to
    /// right (`a - b - c` is `(a - b) - c`). Flat like [`ExprKind::Postfix`];
    /// `rest` is never empty, and an operand is never a `Binary` of the same
    /// precedence level unless it was written in parentheses.
    Binary {
        first: Box<Expr>,
        rest: Vec<(BinaryOp, Expr)>,
    },
    /// `if c then a else b`
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Could not be parsed (the error is in the parse result).
    Error,
}

/// `[for var in iter if cond: body]` (behind a `Box` in [`ExprKind`], so
/// that the rare comprehension does not make every expression larger).
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    pub var: Ident,
    pub iter: Expr,
    pub cond: Option<Expr>,
    pub body: Expr,
}

/// One postfix operation of an [`ExprKind::Postfix`] chain.
#[derive(Clone, Debug, PartialEq)]
pub struct PostOp {
    pub kind: PostOpKind,
    /// The operation's own text: `(args)`, the field name, `[index]`, or
    /// `with { … }`. The expression up to and including operation `k` spans
    /// from the base's start to the end of `ops[k].span`.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PostOpKind {
    /// `(args)`: positional arguments first, then named ones.
    Call(Vec<Arg>),
    /// `.name`
    Field(Ident),
    /// `[index]`
    Index(Box<Expr>),
    /// `with { ITEMS }`: the same inheritance as an expression.
    With(Block),
}

/// A piece of a string literal.
#[derive(Clone, Debug, PartialEq)]
pub enum StrPart {
    /// Literal text, escapes already processed.
    Lit(Name),
    /// `${expr}` (behind a `Box`, so that the usual literal part is small).
    Interp(Box<Expr>),
}

/// A call argument; `name` is set for `name = value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

/// Quantity suffixes (Kubernetes semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantitySuffix {
    /// `Ki Mi Gi Ti Pi Ei`: powers of 1024 (1 to 6).
    Binary(u8),
    /// `k M G T P E`: powers of 1000 (1 to 6).
    Decimal(u8),
    /// `m`: thousandths.
    Milli,
}

impl QuantitySuffix {
    /// The suffix as written.
    pub fn as_str(self) -> &'static str {
        match self {
            QuantitySuffix::Binary(p) => ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][p as usize],
            QuantitySuffix::Decimal(p) => ["", "k", "M", "G", "T", "P", "E"][p as usize],
            QuantitySuffix::Milli => "m",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }
}

/// Calls `f` with every name a declaration refers to: each `Name`
/// expression and the first segment of each named type, in its types,
/// defaults, parents and body. Names bound inside it (arguments,
/// comprehension variables) are included where they are used: the caller
/// decides what a name means. Recurses once per level of nesting (bounded by
/// [`crate::MAX_NESTING`]); chains are visited in loops.
pub fn names_in_decl(d: &Decl, f: &mut dyn FnMut(&str)) {
    let params = |ps: &[ParamSig], f: &mut dyn FnMut(&str)| {
        for p in ps {
            names_in_type(&p.ty, f);
            if let Some(x) = &p.default {
                names_in_expr(x, f);
            }
        }
    };
    match d {
        Decl::Import(_) => {}
        Decl::Enum(_) => {}
        Decl::Param(p) => {
            names_in_type(&p.ty, f);
            names_in_expr(&p.default, f);
            if let Some(w) = &p.where_ {
                names_in_expr(w, f);
            }
        }
        Decl::Let(l) => names_in_expr(&l.value, f),
        Decl::Fn(fd) => {
            params(&fd.params, f);
            if let Some(t) = &fd.ret {
                names_in_type(t, f);
            }
            names_in_expr(&fd.body, f);
        }
        Decl::Env(e) => {
            if let Some(ps) = &e.params {
                params(ps, f);
            }
            for p in &e.extends {
                names_in_expr(p, f);
            }
            names_in_block(&e.body, f);
        }
    }
}

fn names_in_type(t: &TypeExpr, f: &mut dyn FnMut(&str)) {
    match &t.kind {
        TypeExprKind::Named(segs) => {
            if let Some(s) = segs.first() {
                f(&s.name);
            }
        }
        TypeExprKind::List(x) | TypeExprKind::Map(x) | TypeExprKind::Optional(x) => {
            names_in_type(x, f)
        }
        TypeExprKind::Error => {}
    }
}

fn names_in_block(b: &Block, f: &mut dyn FnMut(&str)) {
    for it in b.items.iter() {
        match &it.kind {
            ItemKind::Assign { value, .. } => names_in_expr(value, f),
            ItemKind::Nested { body, .. } => names_in_block(body, f),
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => {
                names_in_expr(cond, f);
                names_in_block(then_block, f);
                if let Some(e) = else_block {
                    names_in_block(e, f);
                }
            }
            ItemKind::Error => {}
        }
    }
}

fn names_in_expr(e: &Expr, f: &mut dyn FnMut(&str)) {
    match &e.kind {
        ExprKind::Name(n) => f(n),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Quantity { .. }
        | ExprKind::EnumLit(_)
        | ExprKind::SelfRef
        | ExprKind::Error => {}
        ExprKind::Str(parts) => {
            for p in parts {
                if let StrPart::Interp(x) = p {
                    names_in_expr(x, f);
                }
            }
        }
        ExprKind::List(xs) => xs.iter().for_each(|x| names_in_expr(x, f)),
        ExprKind::Comprehension(c) => {
            let Comprehension {
                iter, cond, body, ..
            } = &**c;
            names_in_expr(iter, f);
            if let Some(c) = cond {
                names_in_expr(c, f);
            }
            names_in_expr(body, f);
        }
        ExprKind::Record(b) => names_in_block(b, f),
        ExprKind::Postfix { base, ops } => {
            names_in_expr(base, f);
            for op in ops {
                match &op.kind {
                    PostOpKind::Call(args) => args.iter().for_each(|a| names_in_expr(&a.value, f)),
                    PostOpKind::Field(_) => {}
                    PostOpKind::Index(i) => names_in_expr(i, f),
                    PostOpKind::With(b) => names_in_block(b, f),
                }
            }
        }
        ExprKind::Unary { operand, .. } => names_in_expr(operand, f),
        ExprKind::Binary { first, rest } => {
            names_in_expr(first, f);
            for (_, x) in rest {
                names_in_expr(x, f);
            }
        }
        ExprKind::If(c, a, b) => {
            names_in_expr(c, f);
            names_in_expr(a, f);
            names_in_expr(b, f);
        }
    }
}

/// The ranks ([`SpanTable`]) of every span of one declaration, `(start,
/// end)` in the order [`Decl::for_each_span_mut`] visits them: made by
/// [`Decl::ranked_span_table`], read by [`Decl::anchor_ranked`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SpanRanks(Vec<(u32, u32)>);

/// Where the spans of one declaration are: every distinct start offset and
/// every distinct end offset of its spans, sorted. An anchored span
/// ([`Decl::anchored`]) holds ranks in these lists; the table of the
/// declaration as it is now turns them back into offsets
/// ([`SpanTable::absolute`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SpanTable {
    /// The smallest start: the offsets are kept relative to it.
    base: u32,
    /// How many of `offsets` are starts (the ends follow).
    starts: u32,
    /// The starts, then the ends, each list sorted, minus `base`: in one
    /// allocation, and as `u16` when the declaration is shorter than
    /// 64 KiB (every module keeps a table per declaration).
    offsets: Offsets,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Offsets {
    Narrow(Box<[u16]>),
    Wide(Box<[u32]>),
}

impl Default for Offsets {
    fn default() -> Self {
        Offsets::Narrow(Box::default())
    }
}

impl SpanTable {
    /// The table of these starts and ends (any order, repeats allowed).
    fn new(mut starts: Vec<u32>, mut ends: Vec<u32>) -> SpanTable {
        starts.sort_unstable();
        starts.dedup();
        ends.sort_unstable();
        ends.dedup();
        SpanTable::sorted(starts, ends)
    }

    /// The table of these starts and ends, each list sorted without repeats.
    fn sorted(starts: Vec<u32>, ends: Vec<u32>) -> SpanTable {
        let base = starts
            .first()
            .copied()
            .unwrap_or(0)
            .min(ends.first().copied().unwrap_or(0));
        let all = starts.iter().chain(&ends).map(|x| x - base);
        let offsets = if ends.last().is_none_or(|e| e - base <= u32::from(u16::MAX)) {
            Offsets::Narrow(all.map(|x| x as u16).collect())
        } else {
            Offsets::Wide(all.collect())
        };
        SpanTable {
            base,
            starts: starts.len() as u32,
            offsets,
        }
    }

    fn len(&self) -> usize {
        match &self.offsets {
            Offsets::Narrow(x) => x.len(),
            Offsets::Wide(x) => x.len(),
        }
    }

    /// The `i`-th of all offsets (starts, then ends), absolute.
    fn at(&self, i: usize) -> u32 {
        self.base
            + match &self.offsets {
                Offsets::Narrow(x) => u32::from(x[i]),
                Offsets::Wide(x) => x[i],
            }
    }

    /// The start of rank `r`, clamped to the last one (0 when none).
    fn start(&self, r: u32) -> u32 {
        let n = self.starts as usize;
        match n {
            0 => 0,
            _ => self.at((r as usize).min(n - 1)),
        }
    }

    /// The end of rank `r`, clamped to the last one (0 when none).
    fn end(&self, r: u32) -> u32 {
        let (from, n) = (self.starts as usize, self.len() - self.starts as usize);
        match n {
            0 => 0,
            _ => self.at(from + (r as usize).min(n - 1)),
        }
    }

    /// The rank of `x` among the starts (`from` 0) or the ends (`from`
    /// the number of starts); 0 when it is not one of them.
    fn rank(&self, from: usize, to: usize, x: u32) -> u32 {
        let Some(x) = x.checked_sub(self.base) else {
            return 0;
        };
        let found = match &self.offsets {
            Offsets::Narrow(v) => match u16::try_from(x) {
                Ok(x) => v[from..to].binary_search(&x).ok(),
                Err(_) => None,
            },
            Offsets::Wide(v) => v[from..to].binary_search(&x).ok(),
        };
        found.unwrap_or(0) as u32
    }

    /// The absolute span an anchored span of this declaration stands for
    /// (a rank out of range, which an edit that changed the declaration's
    /// shape can leave in a stale value, is clamped to the declaration).
    pub fn absolute(&self, s: Span) -> Span {
        Span::new(self.start(s.start) as usize, self.end(s.end) as usize)
    }

    /// The anchored form of absolute span `s` of this declaration: its
    /// start's and end's ranks (see [`Decl::anchored`]).
    fn anchored(&self, s: Span, anchor: u32) -> Span {
        let n = self.starts as usize;
        Span {
            start: self.rank(0, n, s.start),
            end: self.rank(n, self.len(), s.end),
            anchor,
        }
    }
}

impl Decl {
    /// The span table of this declaration (absolute spans).
    pub fn span_table(&self) -> SpanTable {
        self.clone().own_span_table()
    }

    /// [`Decl::span_table`] without a copy (the walk that reads the spans
    /// is the one that can rewrite them, hence `&mut`; nothing changes).
    pub fn own_span_table(&mut self) -> SpanTable {
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        self.for_each_span_mut(&mut |s| {
            starts.push(s.start);
            ends.push(s.end);
        });
        SpanTable::new(starts, ends)
    }

    /// The position- and layout-independent form of this declaration, the
    /// one the evaluator reads: every span anchored to `anchor` (see
    /// [`Span`]), its start and end replaced by their ranks among the
    /// declaration's span starts and ends ([`SpanTable`]), and the doc
    /// comments left out. Moving the declaration, or adding a comment,
    /// blank lines or spaces anywhere in it, gives an equal tree: only what
    /// the code means is left. Ranks keep the order of offsets, so joining
    /// two spans ([`Span::to`]) still works. `anchor` must not be 0.
    pub fn anchored(&self, anchor: u32) -> Decl {
        let mut d = self.clone();
        d.anchor(anchor);
        d
    }

    /// [`Decl::anchored`] in place, without a copy: the declaration
    /// becomes its anchored form, and the table of where its spans were
    /// (what [`Decl::absolute`] needs to turn them back) is returned. How a
    /// compile keeps one tree per module: the parse is anchored, its span
    /// tables kept, and the absolute form made again only where a pass
    /// needs offsets.
    pub fn anchor(&mut self, anchor: u32) -> SpanTable {
        let (table, ranks) = self.ranked_span_table();
        self.anchor_ranked(&ranks, anchor);
        table
    }

    /// [`Decl::anchor`] with the declaration's table already made
    /// ([`Decl::own_span_table`]: `table` must be this declaration's).
    pub fn anchor_to(&mut self, table: &SpanTable, anchor: u32) {
        self.for_each_span_mut(&mut |s| *s = table.anchored(*s, anchor));
        self.strip_docs();
    }

    /// [`Decl::own_span_table`], and the ranks of every span in the order
    /// the walk visits them: what [`Decl::anchor_ranked`] writes without
    /// looking any offset up. One sort of the starts and one of the ends
    /// (each offset packed with its visit index), then a pass over each:
    /// O(n log n) for the declaration instead of two binary searches per
    /// span.
    pub fn ranked_span_table(&mut self) -> (SpanTable, SpanRanks) {
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        let mut i: u64 = 0;
        self.for_each_span_mut(&mut |s| {
            starts.push(u64::from(s.start) << 32 | i);
            ends.push(u64::from(s.end) << 32 | i);
            i += 1;
        });
        // The visit index must fit in the packed low half: a file the
        // compiler reads is at most 16 MiB, and its declarations hold a few
        // spans per byte at most, far fewer than 2^32.
        debug_assert!(i <= u64::from(u32::MAX));
        let mut ranks = vec![(0u32, 0u32); i as usize];
        let sorted_ranks = |packed: &mut Vec<u64>, set: &mut dyn FnMut(usize, u32)| {
            packed.sort_unstable();
            let mut values: Vec<u32> = Vec::with_capacity(packed.len());
            for p in packed.iter() {
                let value = (p >> 32) as u32;
                if values.last() != Some(&value) {
                    values.push(value);
                }
                set((p & u64::from(u32::MAX)) as usize, values.len() as u32 - 1);
            }
            values
        };
        let starts = sorted_ranks(&mut starts, &mut |at, r| ranks[at].0 = r);
        let ends = sorted_ranks(&mut ends, &mut |at, r| ranks[at].1 = r);
        (SpanTable::sorted(starts, ends), SpanRanks(ranks))
    }

    /// [`Decl::anchor_to`] from the ranks [`Decl::ranked_span_table`] gave
    /// for this same declaration (unchanged since): every span anchored to
    /// `anchor` in one walk, doc comments left out in it. The same tree as
    /// `anchor_to` with that call's table.
    pub fn anchor_ranked(&mut self, ranks: &SpanRanks, anchor: u32) {
        struct Write<'a> {
            ranks: &'a [(u32, u32)],
            next: usize,
            anchor: u32,
        }
        impl VisitMut for Write<'_> {
            fn span(&mut self, s: &mut Span) {
                // Out of step only if the tree changed since the ranks
                // were made (a caller's bug): the span is then left as 0..0.
                let (start, end) = self.ranks.get(self.next).copied().unwrap_or_default();
                self.next += 1;
                *s = Span {
                    start,
                    end,
                    anchor: self.anchor,
                };
            }
            fn item(&mut self, item: &mut Item) {
                item.doc = None;
            }
        }
        let mut write = Write {
            ranks: &ranks.0,
            next: 0,
            anchor,
        };
        self.walk_mut(&mut write);
        debug_assert_eq!(write.next, ranks.0.len(), "the ranks of another tree");
        self.strip_own_doc();
    }

    /// The declaration with absolute spans again, from its anchored form
    /// ([`Decl::anchor`]) and the table of where its spans are: equal to
    /// the parse it was anchored from, but for the doc comments (left
    /// out). A copy: the anchored form is what is kept.
    pub fn absolute(&self, table: &SpanTable) -> Decl {
        let mut d = self.clone();
        d.for_each_span_mut(&mut |s| *s = table.absolute(*s));
        d
    }

    /// Leaves out every doc comment: of the declaration and of the items
    /// of every block in it (they do not change what the code means).
    pub fn strip_docs(&mut self) {
        self.strip_own_doc();
        struct Docs;
        impl VisitMut for Docs {
            fn span(&mut self, _: &mut Span) {}
            fn item(&mut self, item: &mut Item) {
                item.doc = None;
            }
        }
        self.walk_mut(&mut Docs);
    }

    /// Leaves out the declaration's own doc comment (not its items').
    fn strip_own_doc(&mut self) {
        match self {
            Decl::Import(_) => {}
            Decl::Param(d) => d.doc = None,
            Decl::Let(d) => d.doc = None,
            Decl::Enum(d) => d.doc = None,
            Decl::Fn(d) => d.doc = None,
            Decl::Env(d) => d.doc = None,
        }
    }

    /// Calls `f` on every span of the declaration, in a fixed order: the
    /// order of [`Decl::walk_mut`], which [`Decl::ranked_span_table`] and
    /// [`Decl::anchor_ranked`] rely on (the ranks are matched to spans by
    /// position in it). The test `every_span_is_visited` checks that no
    /// span is missed.
    pub fn for_each_span_mut(&mut self, f: &mut impl FnMut(&mut Span)) {
        self.walk_mut(&mut SpansOnly(f));
    }

    /// Walks the declaration: `v` sees every span and every block item.
    fn walk_mut(&mut self, f: &mut impl VisitMut) {
        match self {
            Decl::Import(d) => {
                f.span(&mut d.path_span);
                f.span(&mut d.alias.span);
                f.span(&mut d.span);
            }
            Decl::Param(d) => {
                f.span(&mut d.name.span);
                d.ty.for_each_span_mut(f);
                d.default.for_each_span_mut(f);
                if let Some(w) = &mut d.where_ {
                    w.for_each_span_mut(f);
                }
                f.span(&mut d.span);
            }
            Decl::Let(d) => {
                f.span(&mut d.name.span);
                d.value.for_each_span_mut(f);
                f.span(&mut d.span);
            }
            Decl::Enum(d) => {
                f.span(&mut d.name.span);
                for v in &mut d.variants {
                    f.span(&mut v.span);
                }
                f.span(&mut d.span);
            }
            Decl::Fn(d) => {
                f.span(&mut d.name.span);
                for p in &mut d.params {
                    p.for_each_span_mut(f);
                }
                if let Some(t) = &mut d.ret {
                    t.for_each_span_mut(f);
                }
                d.body.for_each_span_mut(f);
                f.span(&mut d.span);
            }
            Decl::Env(d) => {
                f.span(&mut d.name.span);
                for p in d.params.iter_mut().flatten() {
                    p.for_each_span_mut(f);
                }
                for e in &mut d.extends {
                    e.for_each_span_mut(f);
                }
                if let Some(s) = &mut d.extends_span {
                    f.span(s);
                }
                d.body.for_each_span_mut(f);
                f.span(&mut d.span);
            }
        }
    }
}

/// What [`Decl::walk_mut`] calls: every span, and every item of every
/// block (before its spans).
trait VisitMut {
    fn span(&mut self, s: &mut Span);
    fn item(&mut self, _item: &mut Item) {}
}

struct SpansOnly<'a, F>(&'a mut F);

impl<F: FnMut(&mut Span)> VisitMut for SpansOnly<'_, F> {
    fn span(&mut self, s: &mut Span) {
        (self.0)(s)
    }
}

impl ParamSig {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        f.span(&mut self.name.span);
        self.ty.for_each_span_mut(f);
        if let Some(d) = &mut self.default {
            d.for_each_span_mut(f);
        }
        f.span(&mut self.span);
    }
}

impl TypeExpr {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        match &mut self.kind {
            TypeExprKind::Named(segs) => {
                for s in segs {
                    f.span(&mut s.span);
                }
            }
            TypeExprKind::List(t) | TypeExprKind::Map(t) | TypeExprKind::Optional(t) => {
                t.for_each_span_mut(f)
            }
            TypeExprKind::Error => {}
        }
        f.span(&mut self.span);
    }
}

impl Block {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        for item in Arc::make_mut(&mut self.items) {
            f.item(item);
            item.for_each_span_mut(f);
        }
        f.span(&mut self.span);
    }
}

impl Item {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        match &mut self.kind {
            ItemKind::Assign {
                path,
                op_span,
                value,
                ..
            } => {
                path.for_each_span_mut(f);
                f.span(op_span);
                value.for_each_span_mut(f);
            }
            ItemKind::Nested { path, body } => {
                path.for_each_span_mut(f);
                body.for_each_span_mut(f);
            }
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => {
                cond.for_each_span_mut(f);
                then_block.for_each_span_mut(f);
                if let Some(b) = else_block {
                    b.for_each_span_mut(f);
                }
            }
            ItemKind::Error => {}
        }
        f.span(&mut self.span);
    }
}

impl FieldPath {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        for s in &mut self.segments {
            f.span(&mut s.span);
        }
        f.span(&mut self.span);
    }
}

impl Expr {
    fn for_each_span_mut(&mut self, f: &mut impl VisitMut) {
        match &mut self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Quantity { .. }
            | ExprKind::EnumLit(_)
            | ExprKind::Name(_)
            | ExprKind::SelfRef
            | ExprKind::Error => {}
            ExprKind::Str(parts) => {
                for p in parts {
                    if let StrPart::Interp(e) = p {
                        e.for_each_span_mut(f);
                    }
                }
            }
            ExprKind::List(xs) => {
                for x in xs {
                    x.for_each_span_mut(f);
                }
            }
            ExprKind::Comprehension(c) => {
                let Comprehension {
                    var,
                    iter,
                    cond,
                    body,
                } = &mut **c;
                f.span(&mut var.span);
                iter.for_each_span_mut(f);
                if let Some(c) = cond {
                    c.for_each_span_mut(f);
                }
                body.for_each_span_mut(f);
            }
            ExprKind::Record(b) => b.for_each_span_mut(f),
            ExprKind::Postfix { base, ops } => {
                base.for_each_span_mut(f);
                for op in ops {
                    match &mut op.kind {
                        PostOpKind::Call(args) => {
                            for a in args {
                                if let Some(n) = &mut a.name {
                                    f.span(&mut n.span);
                                }
                                a.value.for_each_span_mut(f);
                                f.span(&mut a.span);
                            }
                        }
                        PostOpKind::Field(id) => f.span(&mut id.span),
                        PostOpKind::Index(e) => e.for_each_span_mut(f),
                        PostOpKind::With(b) => b.for_each_span_mut(f),
                    }
                    f.span(&mut op.span);
                }
            }
            ExprKind::Unary { ops, operand } => {
                for (_, s) in ops {
                    f.span(s);
                }
                operand.for_each_span_mut(f);
            }
            ExprKind::Binary { first, rest } => {
                first.for_each_span_mut(f);
                for (_, e) in rest {
                    e.for_each_span_mut(f);
                }
            }
            ExprKind::If(c, a, b) => {
                c.for_each_span_mut(f);
                a.for_each_span_mut(f);
                b.for_each_span_mut(f);
            }
        }
        f.span(&mut self.span);
    }
}
