//! What only an editor asks of a file: semantic tokens, inlay hints and
//! formatting edits.
//!
//! Semantic tokens come from the trivia table (`scl_syntax::trivia`: every
//! byte of the file in one piece of a known kind), the identifiers among
//! them classified by a walk of the tree that resolves each name as
//! [`Analysis::definition`] does (local binders, the module's
//! declarations, `alias.name` in the imported module, builtins). Inlay
//! hints read the evaluated envs ([`Analysis::origins`]'s provenance and
//! the envs' final records) and, for defaulted parameters, only the
//! syntax. Formatting edits are a line diff against what `sclc fmt`
//! writes.

use crate::{Analysis, Diagnostic, FileId, NavTarget, Span, SymbolKind, TextEdit};
use scl_sema::value::{Value, TYPE_KEY};
use scl_syntax::ast::{
    Arg, Block, Decl, Expr, ExprKind, ItemKind, Module, ParamSig, PostOpKind, StrPart, TypeExpr,
    TypeExprKind,
};
use scl_syntax::PieceKind;
use std::collections::HashMap;

// ---------------------------------------------------------------------
// Semantic tokens

/// LSP standard semantic token types, in the legend order the server
/// advertises ([`TokenKind::ALL`]; a token's index in the legend is
/// `kind as u32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// `env`, `extends`, `if`, `true`, `self`, …
    Keyword,
    /// `//` and `///` comments (doc comments carry [`SemanticToken::DOCUMENTATION`]).
    Comment,
    /// The text of a string literal, quotes included (an interpolated
    /// string is several tokens around its interpolations).
    String,
    /// Numbers and quantities (`4`, `2.5`, `16Gi`, `500m`).
    Number,
    /// Operators (`=`, `+=`, `->`, `&&`, `?`, …) and the `${` / `}` of an
    /// interpolation; brackets, commas, colons and dots are not tokens.
    Operator,
    /// An import alias.
    Namespace,
    /// A type name (`Int`, `Memory`, `Volume`).
    Type,
    /// An enum's name (declaration and uses, types included).
    Enum,
    /// An enum variant: declared in an `enum`, or a literal `.x` (the dot
    /// included).
    EnumMember,
    /// A function (`fn`) or a builtin (with [`SemanticToken::DEFAULT_LIBRARY`]).
    Function,
    /// A parameter of a function or template (its declaration, its uses,
    /// and a named argument `name = value` of a call).
    Parameter,
    /// A `param`, a `let`, a comprehension variable (all three
    /// [`SemanticToken::READONLY`]), or a name that resolves to nothing (no
    /// modifier).
    Variable,
    /// A field or map key written in a body (`resources.requests.cpu`,
    /// `{ name = … }`) or read with `.field`.
    Property,
    /// An env or template.
    Class,
}

impl TokenKind {
    /// Every kind, in legend order.
    pub const ALL: &'static [TokenKind] = &[
        TokenKind::Keyword,
        TokenKind::Comment,
        TokenKind::String,
        TokenKind::Number,
        TokenKind::Operator,
        TokenKind::Namespace,
        TokenKind::Type,
        TokenKind::Enum,
        TokenKind::EnumMember,
        TokenKind::Function,
        TokenKind::Parameter,
        TokenKind::Variable,
        TokenKind::Property,
        TokenKind::Class,
    ];

    /// The LSP name of the type (`"enumMember"`, …).
    pub fn lsp_name(self) -> &'static str {
        match self {
            TokenKind::Keyword => "keyword",
            TokenKind::Comment => "comment",
            TokenKind::String => "string",
            TokenKind::Number => "number",
            TokenKind::Operator => "operator",
            TokenKind::Namespace => "namespace",
            TokenKind::Type => "type",
            TokenKind::Enum => "enum",
            TokenKind::EnumMember => "enumMember",
            TokenKind::Function => "function",
            TokenKind::Parameter => "parameter",
            TokenKind::Variable => "variable",
            TokenKind::Property => "property",
            TokenKind::Class => "class",
        }
    }
}

/// The modifier legend: bit `1 << i` of [`SemanticToken::modifiers`] is
/// `TOKEN_MODIFIERS[i]`.
pub const TOKEN_MODIFIERS: &[&str] =
    &["declaration", "documentation", "readonly", "defaultLibrary"];
/// One semantic token: bytes `span` of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanticToken {
    /// Byte offsets, never empty, on character boundaries.
    pub span: Span,
    pub kind: TokenKind,
    /// Bits of [`TOKEN_MODIFIERS`] (`SemanticToken::DECLARATION`, …).
    pub modifiers: u32,
}

impl SemanticToken {
    /// The name being declared (a declaration's name, a parameter, a
    /// binder, an enum variant in its `enum`).
    pub const DECLARATION: u32 = 1 << 0;
    /// A `///` doc comment.
    pub const DOCUMENTATION: u32 = 1 << 1;
    /// A `param`, a `let` or a comprehension variable.
    pub const READONLY: u32 = 1 << 2;
    /// A builtin function or type, or a stdlib import (`std/…`) and what
    /// it declares.
    pub const DEFAULT_LIBRARY: u32 = 1 << 3;
}

const MOD_DECLARATION: u32 = SemanticToken::DECLARATION;
const MOD_DOCUMENTATION: u32 = SemanticToken::DOCUMENTATION;
const MOD_READONLY: u32 = SemanticToken::READONLY;
const MOD_DEFAULT_LIBRARY: u32 = SemanticToken::DEFAULT_LIBRARY;

impl Analysis {
    /// The semantic tokens of `file`: sorted by start, non-overlapping,
    /// never empty spans; a token may span lines (a `"""` string, the
    /// server splits it per line). Works on any text (half-typed code:
    /// what did not parse is classified from its pieces alone).
    pub fn semantic_tokens(&self, file: FileId) -> Vec<SemanticToken> {
        let parse = self.parse(file).clone();
        let text = self.text(file);
        let names = Walk::run(self, file, &parse.module).classes;
        let mut out: Vec<SemanticToken> = Vec::new();
        for p in &self.trivia(file).pieces {
            let Some(s) = text.get(p.span.range()) else {
                continue;
            };
            let (kind, modifiers) = match p.kind {
                PieceKind::Keyword => (TokenKind::Keyword, 0),
                PieceKind::Comment => (TokenKind::Comment, 0),
                PieceKind::DocComment => (TokenKind::Comment, MOD_DOCUMENTATION),
                PieceKind::Number => (TokenKind::Number, 0),
                PieceKind::Str => (TokenKind::String, 0),
                PieceKind::Interp => (TokenKind::Operator, 0),
                PieceKind::Ident => names
                    .get(&(p.span.start, p.span.end))
                    .copied()
                    .unwrap_or((TokenKind::Variable, 0)),
                PieceKind::Punct => match names.get(&(p.span.start, p.span.end)) {
                    // The dot of an enum literal.
                    Some(c) => *c,
                    None if is_operator(s) => (TokenKind::Operator, 0),
                    None => continue,
                },
                PieceKind::Whitespace | PieceKind::Newline | PieceKind::Skipped => continue,
            };
            // `.x`: one token.
            if let Some(last) = out.last_mut() {
                if kind == TokenKind::EnumMember
                    && last.kind == kind
                    && last.span.end == p.span.start
                    && text.get(last.span.range()) == Some(".")
                {
                    last.span.end = p.span.end;
                    last.modifiers |= modifiers;
                    continue;
                }
            }
            out.push(SemanticToken {
                span: p.span,
                kind,
                modifiers,
            });
        }
        out
    }
}

fn is_operator(s: &str) -> bool {
    !matches!(s, "(" | ")" | "[" | "]" | "{" | "}" | "," | ":" | ".")
}

fn name_class(k: SymbolKind) -> (TokenKind, u32) {
    match k {
        SymbolKind::Import => (TokenKind::Namespace, 0),
        SymbolKind::Param | SymbolKind::Let => (TokenKind::Variable, MOD_READONLY),
        SymbolKind::Enum => (TokenKind::Enum, 0),
        SymbolKind::Variant => (TokenKind::EnumMember, 0),
        SymbolKind::Function => (TokenKind::Function, 0),
        SymbolKind::Env | SymbolKind::Template => (TokenKind::Class, 0),
        SymbolKind::Parameter => (TokenKind::Parameter, 0),
    }
}

/// A call of a declared template or function, for the defaulted-parameter
/// hints.
struct CallSite<'m> {
    /// `(alias, name)`: `name` of the module imported as `alias`, or of
    /// this module.
    callee: (Option<&'m str>, &'m str),
    args: &'m [Arg],
    /// The `(…)`.
    span: Span,
}

/// One walk of a module's tree: the class of every name (by its span) and
/// the calls of declared names.
struct Walk<'a, 'm> {
    a: &'a Analysis,
    file: FileId,
    text: std::sync::Arc<str>,
    /// The module's declarations by name (the first of a name).
    decls: HashMap<&'m str, SymbolKind>,
    /// Import aliases: declaration index, and whether the path is `std/…`.
    imports: HashMap<&'m str, (usize, bool)>,
    /// The declarations of imported modules, by alias (filled on first use;
    /// `None`: the import does not resolve).
    targets: HashMap<&'m str, Option<HashMap<String, SymbolKind>>>,
    /// Local binders in scope, innermost last.
    scope: Vec<(&'m str, TokenKind)>,
    classes: HashMap<(u32, u32), (TokenKind, u32)>,
    calls: Vec<CallSite<'m>>,
}

impl<'a, 'm> Walk<'a, 'm> {
    fn run(a: &'a Analysis, file: FileId, m: &'m Module) -> Walk<'a, 'm> {
        let mut w = Walk {
            a,
            file,
            text: a.text(file),
            decls: HashMap::new(),
            imports: HashMap::new(),
            targets: HashMap::new(),
            scope: Vec::new(),
            classes: HashMap::new(),
            calls: Vec::new(),
        };
        for (i, (d, s)) in m.decls.iter().zip(crate::nav::symbols(m)).enumerate() {
            w.decls.entry(d.name().name.as_str()).or_insert(s.kind);
            if let Decl::Import(imp) = d {
                w.imports
                    .entry(imp.alias.name.as_str())
                    .or_insert((i, imp.path.starts_with("std/")));
            }
        }
        for d in &m.decls {
            w.decl(d);
        }
        w
    }

    fn set(&mut self, span: Span, kind: TokenKind, mods: u32) {
        if span.end > span.start {
            self.classes.insert((span.start, span.end), (kind, mods));
        }
    }

    fn decl(&mut self, d: &'m Decl) {
        let name = d.name();
        let mut mods = 0;
        // The kind of this declaration (a duplicate name keeps its own).
        let kind = match d {
            Decl::Import(imp) => {
                if imp.path.starts_with("std/") {
                    mods |= MOD_DEFAULT_LIBRARY;
                }
                TokenKind::Namespace
            }
            Decl::Param(_) | Decl::Let(_) => {
                mods |= MOD_READONLY;
                TokenKind::Variable
            }
            Decl::Enum(_) => TokenKind::Enum,
            Decl::Fn(_) => TokenKind::Function,
            Decl::Env(_) => TokenKind::Class,
        };
        self.set(name.span, kind, mods | MOD_DECLARATION);
        match d {
            Decl::Import(_) => {}
            Decl::Param(p) => {
                self.ty(&p.ty);
                self.expr(&p.default);
                if let Some(x) = &p.where_ {
                    self.expr(x);
                }
            }
            Decl::Let(l) => self.expr(&l.value),
            Decl::Enum(e) => {
                for v in &e.variants {
                    self.set(v.span, TokenKind::EnumMember, MOD_DECLARATION);
                }
            }
            Decl::Fn(f) => {
                self.params(&f.params);
                if let Some(t) = &f.ret {
                    self.ty(t);
                }
                self.expr(&f.body);
                self.scope.clear();
            }
            Decl::Env(e) => {
                if let Some(ps) = &e.params {
                    self.params(ps);
                }
                for x in &e.extends {
                    self.expr(x);
                }
                self.block(&e.body);
                self.scope.clear();
            }
        }
    }

    fn params(&mut self, ps: &'m [ParamSig]) {
        for p in ps {
            self.ty(&p.ty);
            if let Some(x) = &p.default {
                self.expr(x);
            }
            self.set(p.name.span, TokenKind::Parameter, MOD_DECLARATION);
            self.scope.push((&p.name.name, TokenKind::Parameter));
        }
    }

    /// The declarations of the module imported as `alias`.
    fn target(&mut self, alias: &'m str) -> Option<&HashMap<String, SymbolKind>> {
        let (i, _) = *self.imports.get(alias)?;
        let (a, file) = (self.a, self.file);
        self.targets
            .entry(alias)
            .or_insert_with(|| {
                let t = a.import_target(file, i)?;
                Some(
                    crate::nav::symbols(&a.parse(t).module)
                        .into_iter()
                        .rev()
                        .map(|s| (s.name, s.kind))
                        .collect(),
                )
            })
            .as_ref()
    }

    fn is_local(&self, n: &str) -> bool {
        self.scope.iter().any(|(s, _)| *s == n)
    }

    /// A plain name.
    fn name(&mut self, n: &'m str, span: Span) {
        let class = if let Some((_, k)) = self.scope.iter().rev().find(|(s, _)| *s == n) {
            // A comprehension variable is read-only like a `let`.
            (
                *k,
                if *k == TokenKind::Variable {
                    MOD_READONLY
                } else {
                    0
                },
            )
        } else if let Some(k) = self.decls.get(n) {
            let (kind, mut mods) = name_class(*k);
            if matches!(self.imports.get(n), Some((_, true))) {
                mods |= MOD_DEFAULT_LIBRARY;
            }
            (kind, mods)
        } else if scl_sema::builtins::lookup(n).is_some() {
            (TokenKind::Function, MOD_DEFAULT_LIBRARY)
        } else {
            (TokenKind::Variable, 0)
        };
        self.set(span, class.0, class.1);
    }

    /// `name` of the module imported as `alias` (the alias itself already
    /// classified).
    fn qualified(&mut self, alias: &'m str, name: &str, span: Span, is_type: bool) {
        let std = matches!(self.imports.get(alias), Some((_, true)));
        let kind = self.target(alias).and_then(|t| t.get(name)).copied();
        let (kind, mut mods) = match (kind, is_type) {
            (Some(SymbolKind::Enum), _) => (TokenKind::Enum, 0),
            (_, true) => (TokenKind::Type, 0),
            (Some(k), false) => name_class(k),
            (None, false) => (TokenKind::Variable, 0),
        };
        if std {
            mods |= MOD_DEFAULT_LIBRARY;
        }
        self.set(span, kind, mods);
    }

    fn ty(&mut self, t: &'m TypeExpr) {
        match &t.kind {
            TypeExprKind::Named(segs) => match segs.as_slice() {
                [one] => {
                    let class = match self.decls.get(one.name.as_str()) {
                        Some(SymbolKind::Enum) => (TokenKind::Enum, 0),
                        Some(_) => (TokenKind::Type, 0),
                        None if scl_sema::ty::Ty::builtin(&one.name).is_some() => {
                            (TokenKind::Type, MOD_DEFAULT_LIBRARY)
                        }
                        None => (TokenKind::Type, 0),
                    };
                    self.set(one.span, class.0, class.1);
                }
                [alias, name, ..] => {
                    self.name(&alias.name, alias.span);
                    self.qualified(&alias.name, &name.name, name.span, true);
                }
                [] => {}
            },
            TypeExprKind::Map(x) => {
                // `{String: T}`: the key type is not in the tree (it is
                // always String); classify the word written before `:`.
                let start = t.span.start as usize;
                let end = (x.span.start as usize).max(start);
                if let Some(head) = self.text.get(start..end) {
                    if let Some(i) = head.find("String") {
                        let at = start + i;
                        self.set(Span::new(at, at + 6), TokenKind::Type, MOD_DEFAULT_LIBRARY);
                    }
                }
                self.ty(x)
            }
            TypeExprKind::List(x) | TypeExprKind::Optional(x) => self.ty(x),
            TypeExprKind::Error => {}
        }
    }

    fn block(&mut self, b: &'m Block) {
        for it in b.items.iter() {
            match &it.kind {
                ItemKind::Assign { path, value, .. } => {
                    self.path(path);
                    self.expr(value);
                }
                ItemKind::Nested { path, body } => {
                    self.path(path);
                    self.block(body);
                }
                ItemKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    self.expr(cond);
                    self.block(then_block);
                    if let Some(e) = else_block {
                        self.block(e);
                    }
                }
                ItemKind::Error => {}
            }
        }
    }

    fn path(&mut self, p: &scl_syntax::ast::FieldPath) {
        for s in &p.segments {
            // A quoted key stays a string.
            if !s.quoted {
                self.set(s.span, TokenKind::Property, 0);
            }
        }
    }

    fn expr(&mut self, e: &'m Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::EnumLit(_) => {
                // `.` then the name (maybe with blanks between).
                self.set(
                    Span::new(e.span.start as usize, e.span.start as usize + 1),
                    TokenKind::EnumMember,
                    0,
                );
                let inner = self
                    .text
                    .get(e.span.start as usize + 1..e.span.end as usize)
                    .unwrap_or("");
                let start = e.span.end as usize - inner.trim_start().len();
                self.set(
                    Span::new(start, e.span.end as usize),
                    TokenKind::EnumMember,
                    0,
                );
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Quantity { .. }
            | ExprKind::SelfRef
            | ExprKind::Error => {}
            ExprKind::Str(parts) => {
                for p in parts {
                    if let StrPart::Interp(x) = p {
                        self.expr(x);
                    }
                }
            }
            ExprKind::List(xs) => xs.iter().for_each(|x| self.expr(x)),
            ExprKind::Comprehension(c) => {
                let scl_syntax::ast::Comprehension {
                    var,
                    iter,
                    cond,
                    body,
                } = &**c;
                self.expr(iter);
                self.set(
                    var.span,
                    TokenKind::Variable,
                    MOD_DECLARATION | MOD_READONLY,
                );
                self.scope.push((&var.name, TokenKind::Variable));
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.expr(body);
                self.scope.pop();
            }
            ExprKind::Record(b) => self.block(b),
            ExprKind::Postfix { base, ops } => {
                let mut rest = &ops[..];
                let mut callee = None;
                match (&base.kind, ops.first().map(|o| &o.kind)) {
                    (ExprKind::Name(alias), Some(PostOpKind::Field(id)))
                        if !self.is_local(alias) && self.imports.contains_key(alias.as_str()) =>
                    {
                        self.name(alias, base.span);
                        self.qualified(alias, &id.name, id.span, false);
                        callee = Some((Some(alias.as_str()), id.name.as_str()));
                        rest = &ops[1..];
                    }
                    (ExprKind::Name(n), _) if !self.is_local(n) => {
                        self.name(n, base.span);
                        callee = Some((None, n.as_str()));
                    }
                    _ => self.expr(base),
                }
                for (k, op) in rest.iter().enumerate() {
                    match &op.kind {
                        PostOpKind::Call(args) => {
                            if let (0, Some(c)) = (k, callee) {
                                self.calls.push(CallSite {
                                    callee: c,
                                    args,
                                    span: op.span,
                                });
                            }
                            for a in args {
                                if let Some(n) = &a.name {
                                    self.set(n.span, TokenKind::Parameter, 0);
                                }
                                self.expr(&a.value);
                            }
                        }
                        PostOpKind::Field(id) => self.set(id.span, TokenKind::Property, 0),
                        PostOpKind::Index(i) => self.expr(i),
                        PostOpKind::With(b) => self.block(b),
                    }
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Binary { first, rest } => {
                self.expr(first);
                for (_, x) in rest {
                    self.expr(x);
                }
            }
            ExprKind::If(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
        }
    }
}

// ---------------------------------------------------------------------
// Inlay hints

/// What an [`InlayHint`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InlayKind {
    /// What an env inherits, or the inherited value an item replaces.
    Inherited,
    /// A parameter of a template or function call left at its default.
    Default,
}

/// One inlay hint: text shown at a position, not part of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    /// The byte offset the hint is placed at (the text is shown before the
    /// character there).
    pub offset: u32,
    /// The text shown, without padding (a default argument after another
    /// argument starts with `, `); values in it are clipped to 40
    /// characters with `…`.
    pub label: String,
    /// More text, on hover: one line per inherited field
    /// (`path = value (set in ENV at file:line)`), or where a default is.
    pub tooltip: Option<String>,
    pub kind: InlayKind,
    /// Where the shown value was set (click-through): the parent env's
    /// name, the item of the parent that set a replaced value, a
    /// parameter's default expression.
    pub target: Option<NavTarget>,
}

/// The most characters of a value shown in a label.
const SHOWN: usize = 40;
/// The most lines of a tooltip listing inherited fields.
const TOOLTIP_LINES: usize = 50;

/// `s` on one line (blanks collapsed), at most [`SHOWN`] characters (then
/// `…`).
fn clip(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= SHOWN {
        return one;
    }
    let mut out: String = one.chars().take(SHOWN - 1).collect();
    out.push('…');
    out
}

/// A parent in an `extends` clause, resolved.
struct Parent {
    file: FileId,
    /// The env's or template's name.
    name: String,
    name_span: Span,
    /// A template instance (`gpu_env(…)`): no evaluated value of its own.
    template: bool,
}

type Final = std::sync::Arc<scl_sema::FinalEnv>;

impl Analysis {
    /// The inlay hints of `file` whose offset is inside `range` (bytes,
    /// both ends included), sorted by offset:
    /// - after the `{` of an `env X extends P {` header, `inherits N fields
    ///   from P` ([`InlayKind::Inherited`]; the tooltip lists them with
    ///   their values and where they were set, the target is P). An env
    ///   that does not evaluate (a template, an env with errors) gets its
    ///   single plain parent's fields;
    /// - at the end of an item of an env that replaces an inherited value,
    ///   `(was 4 in base)` ([`InlayKind::Inherited`], the target is the
    ///   parent's item), or `(overrides LAYER)` when the old value is not
    ///   known (it came from a template instance);
    /// - before the `)` of a call of a template or function, each
    ///   parameter left at its default, `memory = 16Gi`
    ///   ([`InlayKind::Default`], the target is the default's expression).
    pub fn inlay_hints(&self, file: FileId, range: Span) -> Vec<InlayHint> {
        let parse = self.parse(file).clone();
        let m = &parse.module;
        let text = self.text(file);
        let mut out = Vec::new();
        let touches = |s: Span| s.start <= range.end && range.start <= s.end;
        for d in &m.decls {
            if let Decl::Env(e) = d {
                if touches(e.span) {
                    self.env_hints(file, m, &text, e, &mut out);
                }
            }
        }
        let w = Walk::run(self, file, m);
        for c in w.calls.iter().filter(|c| touches(c.span)) {
            self.default_hints(file, m, &text, c, &mut out);
        }
        out.retain(|h| range.start <= h.offset && h.offset <= range.end);
        out.sort_by_key(|h| h.offset);
        out
    }

    fn final_env(&self, file: FileId, name: &str) -> Option<Final> {
        scl_db::module_values(self.db(), self.source_file(file))
            .final_env(name)
            .cloned()
    }

    /// The module a qualified name's alias imports.
    fn import_of(&self, file: FileId, m: &Module, alias: &str) -> Option<FileId> {
        let i = m
            .decls
            .iter()
            .position(|d| matches!(d, Decl::Import(imp) if imp.alias.name == alias))?;
        self.import_target(file, i)
    }

    /// The module a name's optional alias names, with its parse: the one
    /// `m` (the module of `file`) imports as `alias`, else `file` itself.
    fn named_module(
        &self,
        file: FileId,
        m: &Module,
        alias: Option<&str>,
    ) -> Option<(FileId, std::sync::Arc<scl_syntax::Tree>)> {
        let tf = match alias {
            Some(a) => self.import_of(file, m, a)?,
            None => file,
        };
        Some((tf, self.parse(tf).clone()))
    }

    /// The env or template a parent expression names.
    fn parent(&self, file: FileId, m: &Module, e: &Expr) -> Option<Parent> {
        let (alias, name, template) = match &e.kind {
            ExprKind::Name(n) => (None, n.as_str(), false),
            ExprKind::Postfix { base, ops } => {
                let ExprKind::Name(first) = &base.kind else {
                    return None;
                };
                match ops.as_slice() {
                    [op] => match &op.kind {
                        PostOpKind::Field(id) => (Some(first.as_str()), id.name.as_str(), false),
                        PostOpKind::Call(_) => (None, first.as_str(), true),
                        _ => return None,
                    },
                    [f, c] => match (&f.kind, &c.kind) {
                        (PostOpKind::Field(id), PostOpKind::Call(_)) => {
                            (Some(first.as_str()), id.name.as_str(), true)
                        }
                        _ => return None,
                    },
                    _ => return None,
                }
            }
            _ => return None,
        };
        let (tf, tp) = self.named_module(file, m, alias)?;
        let d = tp.module.decls.iter().find_map(|d| match d {
            Decl::Env(env) if env.name.name == name => Some(env),
            _ => None,
        })?;
        Some(Parent {
            file: tf,
            name: name.to_string(),
            name_span: d.name.span,
            template: template || d.params.is_some(),
        })
    }

    /// `path = value (set in ENV at file:line)`.
    fn origin_line(&self, path: &str, value: Option<&Value>, o: &scl_sema::Origin) -> String {
        let f = FileId(o.module.0);
        let (line, _) = self.line_col(f, scl_db::absolute_span(self.db(), o.span).start);
        let v = value.map_or_else(|| "…".to_string(), |v| clip(&v.to_string()));
        format!(
            "{path} = {v} (set in {} at {}:{line})",
            o.layer,
            self.key(f)
        )
    }

    /// The `inherits N fields from P` hint of an env whose inherited
    /// fields are `fields` (of the final env `fin`).
    fn inherits_hint<'o>(
        &self,
        fin: &Final,
        fields: impl ExactSizeIterator<Item = (&'o scl_ir::FieldPath, &'o scl_sema::Origin)>,
        from: &str,
        offset: u32,
        target: Option<NavTarget>,
    ) -> Option<InlayHint> {
        let n = fields.len();
        if n == 0 {
            return None;
        }
        let mut lines: Vec<String> = Vec::new();
        for (path, o) in fields.take(TOOLTIP_LINES) {
            let p = path.render().replace(TYPE_KEY, "");
            lines.push(self.origin_line(&p, value_at(&fin.record, path), o));
        }
        if n > TOOLTIP_LINES {
            lines.push(format!("… and {} more", n - TOOLTIP_LINES));
        }
        Some(InlayHint {
            offset,
            label: format!(
                "inherits {n} field{} from {from}",
                if n == 1 { "" } else { "s" }
            ),
            tooltip: Some(lines.join("\n")),
            kind: InlayKind::Inherited,
            target,
        })
    }

    fn env_hints(
        &self,
        file: FileId,
        m: &Module,
        text: &str,
        e: &scl_syntax::ast::EnvDecl,
        out: &mut Vec<InlayHint>,
    ) {
        if e.extends.is_empty() {
            return;
        }
        let parents: Vec<Parent> = e
            .extends
            .iter()
            .filter_map(|x| self.parent(file, m, x))
            .collect();
        let from = clip(
            &e.extends
                .iter()
                .filter_map(|x| text.get(x.span.range()))
                .collect::<Vec<_>>()
                .join(", "),
        );
        let body = e.body.span.start as usize;
        let offset = match (text.as_bytes().get(body), e.extends_span) {
            (Some(b'{'), _) => body as u32 + 1,
            (_, Some(s)) => s.end,
            _ => return,
        };
        let target = parents.first().map(|p| NavTarget {
            file: p.file,
            span: p.name_span,
        });
        let parent_finals: Vec<Final> = parents
            .iter()
            .filter(|p| !p.template)
            .filter_map(|p| self.final_env(p.file, &p.name))
            .collect();
        let own = match &e.params {
            None => self.final_env(file, &e.name.name),
            Some(_) => None,
        };
        let Some(fin) = own else {
            // Not evaluated: what its one plain parent gives, if that is
            // all, less what its own items set (read from the syntax).
            if let ([p], [pf]) = (parents.as_slice(), parent_finals.as_slice()) {
                if !p.template {
                    self.syntax_hints(e, pf, &from, offset, target, out);
                }
            }
            return;
        };
        let flat = fin.origins.flatten();
        let mine = |o: &scl_sema::Origin| *o.layer == *e.name.name && FileId(o.module.0) == file;
        let inherited: Vec<_> = flat.iter().filter(|(_, o)| !mine(o)).collect();
        out.extend(self.inherits_hint(&fin, inherited.into_iter(), &from, offset, target));
        // The items that replaced an inherited value: one hint per item.
        let ancestors = self.ancestors(&parents);
        let mut by_item: Vec<(Span, Vec<(&scl_ir::FieldPath, &str)>)> = Vec::new();
        for (path, o) in flat.iter().filter(|(_, o)| mine(o)) {
            let Some(layer) = o.replaced.as_deref() else {
                continue;
            };
            let at = scl_db::absolute_span(self.db(), o.span);
            match by_item.iter_mut().find(|(s, _)| *s == at) {
                Some((_, ps)) => ps.push((path, layer)),
                None => by_item.push((at, vec![(path, layer)])),
            }
        }
        for (at, paths) in by_item {
            let (path, layer) = paths[0];
            let path = common_prefix(paths.iter().map(|(p, _)| *p)).unwrap_or_else(|| path.clone());
            let rendered = path.render().replace(TYPE_KEY, "");
            // The ancestor that had it: its value and where it was set.
            let old = ancestors.iter().find_map(|pf| {
                let o = pf.origins.get(&path).or_else(|| {
                    // A record replaced whole: where its first field was set.
                    paths.iter().find_map(|(p, _)| pf.origins.get(p))
                })?;
                if *o.layer != *layer {
                    return None;
                }
                Some((value_at(&pf.record, &path)?.clone(), o.clone()))
            });
            let hint = match old {
                Some((v, o)) => self.was_hint(at.end, layer, &rendered, &v, &o),
                None => InlayHint {
                    offset: at.end,
                    label: format!("(overrides {})", clip(layer)),
                    tooltip: Some(format!("{rendered} was set in {layer}")),
                    kind: InlayKind::Inherited,
                    target: None,
                },
            };
            out.push(hint);
        }
    }

    /// The evaluated plain envs among `parents` and, through templates,
    /// their ancestors (the nearest plain env on each line; at most 16
    /// declarations looked at).
    fn ancestors(&self, parents: &[Parent]) -> Vec<Final> {
        let mut out = Vec::new();
        let mut queue: std::collections::VecDeque<Parent> = Vec::new().into();
        let mut budget = 16;
        let next = |p: &Parent, queue: &mut std::collections::VecDeque<Parent>| {
            let parse = self.parse(p.file).clone();
            let m = &parse.module;
            for d in &m.decls {
                if let Decl::Env(e) = d {
                    if e.name.span == p.name_span {
                        queue.extend(e.extends.iter().filter_map(|x| self.parent(p.file, m, x)));
                    }
                }
            }
        };
        for p in parents {
            if p.template {
                next(p, &mut queue);
            } else {
                out.extend(self.final_env(p.file, &p.name));
            }
        }
        while let Some(p) = queue.pop_front() {
            budget -= 1;
            if budget == 0 {
                break;
            }
            if p.template {
                next(&p, &mut queue);
            } else {
                out.extend(self.final_env(p.file, &p.name));
            }
        }
        out
    }

    /// `(was V in LAYER)` at `offset`: `path` was `v`, set by `o`.
    fn was_hint(
        &self,
        offset: u32,
        layer: &str,
        path: &str,
        v: &Value,
        o: &scl_sema::Origin,
    ) -> InlayHint {
        InlayHint {
            offset,
            label: format!("(was {} in {})", clip(&v.to_string()), clip(layer)),
            tooltip: Some(self.origin_line(path, Some(v), o)),
            kind: InlayKind::Inherited,
            target: Some(NavTarget {
                file: FileId(o.module.0),
                span: scl_db::absolute_span(self.db(), o.span),
            }),
        }
    }

    /// The hints of an env that did not evaluate (a template, an env with
    /// errors) with one plain parent `pf`, from its items as written: the
    /// parent's fields its `=` items do not set, and a `(was …)` after each
    /// `=` item that replaces one.
    fn syntax_hints(
        &self,
        e: &scl_syntax::ast::EnvDecl,
        pf: &Final,
        from: &str,
        offset: u32,
        target: Option<NavTarget>,
        out: &mut Vec<InlayHint>,
    ) {
        let mut items = Vec::new();
        written(&e.body, "", &mut items);
        let all = pf.origins.flatten();
        let flat: Vec<(String, &scl_ir::FieldPath, &scl_sema::Origin)> = all
            .iter()
            .map(|(p, o)| (p.render().replace(TYPE_KEY, ""), p, o))
            .collect();
        let under = |path: &str, set: &str| {
            path == set || path.strip_prefix(set).is_some_and(|r| r.starts_with('.'))
        };
        let kept: Vec<(&scl_ir::FieldPath, &scl_sema::Origin)> = flat
            .iter()
            .filter(|(r, _, _)| !items.iter().any(|(set, _, s)| *s && under(r, set)))
            .map(|(_, p, o)| (*p, *o))
            .collect();
        out.extend(self.inherits_hint(pf, kept.into_iter(), from, offset, target));
        for (set, span, is_set) in &items {
            if !is_set {
                continue;
            }
            let Some((_, p, o)) = flat.iter().find(|(r, _, _)| under(r, set)) else {
                continue;
            };
            let depth = set_depth(set);
            let mut fp = scl_ir::FieldPath::root();
            for seg in p.segments().iter().take(depth) {
                fp.push(seg.clone());
            }
            if let Some(v) = value_at(&pf.record, &fp) {
                out.push(self.was_hint(span.end, &o.layer, set, v, o));
            }
        }
    }

    fn default_hints(
        &self,
        file: FileId,
        m: &Module,
        text: &str,
        c: &CallSite<'_>,
        out: &mut Vec<InlayHint>,
    ) {
        let close = c.span.end.saturating_sub(1);
        if c.span.end <= c.span.start || text.as_bytes().get(close as usize) != Some(&b')') {
            return;
        }
        let (alias, name) = c.callee;
        let Some((tf, tp)) = self.named_module(file, m, alias) else {
            return;
        };
        let params = tp.module.decls.iter().find_map(|d| match d {
            Decl::Env(e) if e.name.name == name => e.params.as_deref(),
            Decl::Fn(f) if f.name.name == name => Some(&f.params[..]),
            _ => None,
        });
        let Some(params) = params else {
            return;
        };
        let ttext = if tf == file {
            None
        } else {
            Some(self.text(tf))
        };
        let ttext: &str = ttext.as_deref().unwrap_or(text);
        let positional = c.args.iter().take_while(|a| a.name.is_none()).count();
        let inside = text
            .get(c.span.start as usize + 1..close as usize)
            .unwrap_or("")
            .trim_end();
        let mut sep = !(inside.is_empty() || inside.ends_with(','));
        for (i, p) in params.iter().enumerate() {
            let Some(default) = &p.default else {
                continue;
            };
            let given = i < positional
                || c.args
                    .iter()
                    .any(|a| a.name.as_ref().is_some_and(|n| n.name == p.name.name));
            if given {
                continue;
            }
            let value = clip(ttext.get(default.span.range()).unwrap_or("…"));
            out.push(InlayHint {
                offset: close,
                label: format!("{}{} = {value}", if sep { ", " } else { "" }, p.name.name),
                tooltip: Some(format!(
                    "`{}` of `{}` is left at its default",
                    p.name.name,
                    match alias {
                        Some(a) => format!("{a}.{name}"),
                        None => name.to_string(),
                    }
                )),
                kind: InlayKind::Default,
                target: Some(NavTarget {
                    file: tf,
                    span: default.span,
                }),
            });
            sep = true;
        }
    }
}

/// The paths the items of `b` write, as provenance renders them, with the
/// item and whether it is an `=` (not `+=`, `-=` or a nested block).
fn written(b: &Block, prefix: &str, out: &mut Vec<(String, Span, bool)>) {
    let join = |path: &scl_syntax::ast::FieldPath| {
        let mut p = prefix.to_string();
        for s in &path.segments {
            if !p.is_empty() {
                p.push('.');
            }
            p.push_str(&scl_ir::path::quote_segment(&s.name));
        }
        p
    };
    for it in b.items.iter() {
        match &it.kind {
            ItemKind::Assign { path, op, .. } => {
                out.push((join(path), it.span, *op == scl_syntax::ast::AssignOp::Set));
            }
            ItemKind::Nested { path, body } => written(body, &join(path), out),
            ItemKind::If {
                then_block,
                else_block,
                ..
            } => {
                written(then_block, prefix, out);
                if let Some(e) = else_block {
                    written(e, prefix, out);
                }
            }
            ItemKind::Error => {}
        }
    }
}

/// How many segments a rendered path has (quoted segments may hold dots).
fn set_depth(path: &str) -> usize {
    scl_ir::FieldPath::parse(path).len()
}

/// The value at `path` of an env's final record (through nested records).
fn value_at<'r>(
    record: &'r scl_sema::value::Record,
    path: &scl_ir::FieldPath,
) -> Option<&'r Value> {
    let mut cur = record;
    let segs = path.segments();
    for (i, s) in segs.iter().enumerate() {
        let v = cur.get(s.as_str())?;
        if i + 1 == segs.len() {
            return Some(v);
        }
        match v {
            Value::Record(r) => cur = r,
            _ => return None,
        }
    }
    None
}

/// The longest path every one of `paths` starts with (`None` for none).
fn common_prefix<'p>(
    mut paths: impl Iterator<Item = &'p scl_ir::FieldPath>,
) -> Option<scl_ir::FieldPath> {
    let first = paths.next()?.clone();
    let mut n = first.len();
    for p in paths {
        n = first
            .segments()
            .iter()
            .zip(p.segments())
            .take(n)
            .take_while(|(a, b)| a == b)
            .count();
    }
    let mut out = scl_ir::FieldPath::root();
    for s in &first.segments()[..n] {
        out.push(s.clone());
    }
    (n > 0).then_some(out)
}

// ---------------------------------------------------------------------
// Formatting

/// The byte order mark `sclc fmt` keeps in front of the formatted text.
const BOM: &str = "\u{feff}";

impl Analysis {
    /// The edits that make `file` what `sclc fmt` writes
    /// (`scl_fmt::format_verified`; a byte order mark at the start is
    /// kept): one per changed run of lines (a line diff), in order, not
    /// overlapping, their spans bytes of the current text; empty when the
    /// file is formatted (or, for a formatter bug, when the formatted text
    /// would not mean the same: `sclc fmt` leaves such a file as it is).
    /// `Err` with the file's syntax errors (their `file` the file's key)
    /// when it has one: a broken file is never formatted.
    pub fn format_edits(&self, file: FileId) -> Result<Vec<TextEdit>, Vec<Diagnostic>> {
        let key = self.key(file);
        let errors = &self.parse(file).errors;
        if !errors.is_empty() {
            return Err(errors.iter().map(|d| d.clone().in_file(&key)).collect());
        }
        let text = self.text(file);
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (BOM.len(), rest),
            None => (0, &*text),
        };
        let formatted = match scl_fmt::format_verified(body) {
            Ok(f) => f,
            Err(scl_fmt::Refusal::Syntax(diags)) => {
                return Err(diags.into_iter().map(|d| d.in_file(&key)).collect())
            }
            Err(scl_fmt::Refusal::Meaning(_)) => return Ok(Vec::new()),
        };
        Ok(line_edits(body, &formatted)
            .into_iter()
            .map(|(span, new_text)| TextEdit {
                file,
                span: Span::new(span.start as usize + bom, span.end as usize + bom),
                new_text,
            })
            .collect())
    }
}

/// The edits (bytes of `old`, new text) that turn `old` into `new`: one
/// per run of changed lines.
fn line_edits(old: &str, new: &str) -> Vec<(Span, String)> {
    let diff = similar::TextDiff::from_lines(old, new);
    // Byte offsets of the lines of each side.
    let starts = |s: &str| -> Vec<usize> {
        let mut v = vec![0];
        v.extend(s.match_indices('\n').map(|(i, _)| i + 1));
        if *v.last().unwrap_or(&0) != s.len() {
            v.push(s.len());
        }
        v
    };
    let (os, ns) = (starts(old), starts(new));
    let mut out: Vec<(Span, String)> = Vec::new();
    // The run being gathered: old lines and new lines.
    let mut run: Option<(std::ops::Range<usize>, std::ops::Range<usize>)> = None;
    let mut flush = |run: &mut Option<(std::ops::Range<usize>, std::ops::Range<usize>)>| {
        if let Some((o, n)) = run.take() {
            out.push((
                Span::new(os[o.start], os[o.end]),
                new[ns[n.start]..ns[n.end]].to_string(),
            ));
        }
    };
    for op in diff.ops() {
        if let similar::DiffOp::Equal { .. } = op {
            flush(&mut run);
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        run = Some(match run.take() {
            Some((ro, rn)) => (ro.start..o.end, rn.start..n.end),
            None => (o, n),
        });
    }
    flush(&mut run);
    out
}
