//! Document symbols, definition, references, completion and hover: what an
//! editor asks about a position, answered from the syntax tree, the import
//! graph and the schema (`scl_sema::ty::RecordTy::fields`).

use crate::{Analysis, FileId};
use scl_diag::Span;
use scl_sema::ty::{RecordTy, Ty};
use scl_syntax::ast::{
    Block, Decl, Expr, ExprKind, ItemKind, Module, ParamSig, PostOpKind, StrPart, TypeExpr,
    TypeExprKind,
};
use std::collections::HashMap;

/// What a [`Symbol`] declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Import,
    /// A module parameter (`param`).
    Param,
    Let,
    Enum,
    /// A variant of an enum.
    Variant,
    Function,
    Env,
    /// An env with parameters.
    Template,
    /// A parameter of a function or template.
    Parameter,
}

impl SymbolKind {
    /// The word shown for it (`env`, `template`, `fn`, …).
    pub fn label(self) -> &'static str {
        match self {
            SymbolKind::Import => "import",
            SymbolKind::Param => "param",
            SymbolKind::Let => "let",
            SymbolKind::Enum => "enum",
            SymbolKind::Variant => "variant",
            SymbolKind::Function => "fn",
            SymbolKind::Env => "env",
            SymbolKind::Template => "template",
            SymbolKind::Parameter => "parameter",
        }
    }
}

/// One declaration of a file (LSP `DocumentSymbol`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// The whole declaration (bytes).
    pub span: Span,
    /// The name in it.
    pub name_span: Span,
    /// The `///` doc comment.
    pub doc: Option<String>,
    /// A template's or function's parameters, an enum's variants.
    pub children: Vec<Symbol>,
}

/// A place in a file: where a definition or reference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NavTarget {
    pub file: FileId,
    /// The name (for a module: the empty span at its start).
    pub span: Span,
}

/// What a completion candidate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionKind {
    /// A schema field of the record being written.
    Field,
    /// A variant of an enum-typed field (`.read_only`).
    EnumVariant,
    /// A stdlib module (`std/s3-data`).
    Module,
    /// A `.env.scl` file beside the importer.
    File,
    /// A folder beside the importer (`./sub/`).
    Folder,
    /// A name in scope: a declaration of the module or a local binder.
    Name(SymbolKind),
}

/// One completion candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What is inserted (and shown).
    pub label: String,
    pub kind: CompletionKind,
    /// A field's type, a declaration's kind.
    pub detail: Option<String>,
}

/// What is at a position: its kind, doc comment and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The span described.
    pub span: Span,
    /// `env`, `template`, `fn`, `param`, `let`, `field`, …
    pub kind: String,
    pub name: String,
    pub doc: Option<String>,
    /// The type, when known (schema fields; expressions once the static
    /// checker gives types by offset: [`Analysis::type_at`]).
    pub ty: Option<String>,
    /// The resolved value, rendered as SCL source and clipped to about 200
    /// bytes (`…` after a clipped one): a field of an env body (the env's
    /// final value there), a `let` or a `param` (its value in its module).
    pub value: Option<String>,
    /// For a field item of an env body: the layers that set it, from the
    /// one whose value wins to the first one it overrode (empty elsewhere,
    /// and for the body of a template, which is not evaluated on its own).
    pub chain: Vec<crate::ChainLink>,
}

fn symbol_of(d: &Decl) -> Symbol {
    let params = |ps: &[ParamSig]| {
        ps.iter()
            .map(|p| Symbol {
                name: p.name.name.to_string(),
                kind: SymbolKind::Parameter,
                span: p.span,
                name_span: p.name.span,
                doc: None,
                children: Vec::new(),
            })
            .collect()
    };
    let (kind, children) = match d {
        Decl::Import(_) => (SymbolKind::Import, Vec::new()),
        Decl::Param(_) => (SymbolKind::Param, Vec::new()),
        Decl::Let(_) => (SymbolKind::Let, Vec::new()),
        Decl::Enum(e) => (
            SymbolKind::Enum,
            e.variants
                .iter()
                .map(|v| Symbol {
                    name: v.name.to_string(),
                    kind: SymbolKind::Variant,
                    span: v.span,
                    name_span: v.span,
                    doc: None,
                    children: Vec::new(),
                })
                .collect(),
        ),
        Decl::Fn(f) => (SymbolKind::Function, params(&f.params)),
        Decl::Env(e) => match &e.params {
            Some(ps) => (SymbolKind::Template, params(ps)),
            None => (SymbolKind::Env, Vec::new()),
        },
    };
    Symbol {
        name: d.name().name.to_string(),
        kind,
        span: d.span(),
        name_span: d.name().span,
        doc: d.doc().map(String::from),
        children,
    }
}

pub(crate) fn symbols(m: &Module) -> Vec<Symbol> {
    m.decls.iter().map(symbol_of).collect()
}

// ---------------------------------------------------------------------
// Name occurrences

/// What a name occurrence refers to, before looking at other modules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Res {
    /// A local binder (parameter, comprehension variable) at this span.
    Local(Span),
    /// A declaration of the module by name (or a builtin, if none).
    Decl(String),
    /// `alias.name`: declaration `name` of the module imported as `alias`.
    Qualified(String, String),
    /// The path of import declaration number `n`.
    ImportPath(usize),
}

#[derive(Clone, Debug)]
struct Occ {
    span: Span,
    res: Res,
}

/// Every name occurrence of a module: declaration names, uses, binders,
/// type names, import aliases and paths. Recurses once per level of syntax
/// nesting (bounded by `scl_syntax::MAX_NESTING`).
fn occurrences(m: &Module) -> Vec<Occ> {
    let mut w = Walker {
        out: Vec::new(),
        scope: Vec::new(),
    };
    for (i, d) in m.decls.iter().enumerate() {
        let name = d.name();
        if !name.name.is_empty() {
            w.out.push(Occ {
                span: name.span,
                res: Res::Decl(name.name.to_string()),
            });
        }
        match d {
            Decl::Import(imp) => w.out.push(Occ {
                span: imp.path_span,
                res: Res::ImportPath(i),
            }),
            Decl::Param(p) => {
                w.ty(&p.ty);
                w.expr(&p.default);
                if let Some(x) = &p.where_ {
                    w.expr(x);
                }
            }
            Decl::Let(l) => w.expr(&l.value),
            Decl::Enum(_) => {}
            Decl::Fn(f) => {
                w.params(&f.params);
                if let Some(t) = &f.ret {
                    w.ty(t);
                }
                w.expr(&f.body);
                w.scope.clear();
            }
            Decl::Env(e) => {
                if let Some(ps) = &e.params {
                    w.params(ps);
                }
                for x in &e.extends {
                    w.expr(x);
                }
                w.block(&e.body);
                w.scope.clear();
            }
        }
    }
    w.out
}

struct Walker {
    out: Vec<Occ>,
    scope: Vec<(String, Span)>,
}

impl Walker {
    fn params(&mut self, ps: &[ParamSig]) {
        for p in ps {
            self.ty(&p.ty);
            if let Some(x) = &p.default {
                self.expr(x);
            }
            self.scope.push((p.name.name.to_string(), p.name.span));
            self.out.push(Occ {
                span: p.name.span,
                res: Res::Local(p.name.span),
            });
        }
    }
    fn name(&mut self, n: &str, span: Span) {
        let res = match self.scope.iter().rev().find(|(s, _)| s == n) {
            Some((_, b)) => Res::Local(*b),
            None => Res::Decl(n.to_string()),
        };
        self.out.push(Occ { span, res });
    }
    fn ty(&mut self, t: &TypeExpr) {
        match &t.kind {
            TypeExprKind::Named(segs) => match segs.as_slice() {
                [one] => self.out.push(Occ {
                    span: one.span,
                    res: Res::Decl(one.name.to_string()),
                }),
                [alias, name, ..] => {
                    self.out.push(Occ {
                        span: alias.span,
                        res: Res::Decl(alias.name.to_string()),
                    });
                    self.out.push(Occ {
                        span: name.span,
                        res: Res::Qualified(alias.name.to_string(), name.name.to_string()),
                    });
                }
                [] => {}
            },
            TypeExprKind::List(x) | TypeExprKind::Map(x) | TypeExprKind::Optional(x) => self.ty(x),
            TypeExprKind::Error => {}
        }
    }
    fn block(&mut self, b: &Block) {
        for it in b.items.iter() {
            match &it.kind {
                ItemKind::Assign { value, .. } => self.expr(value),
                ItemKind::Nested { body, .. } => self.block(body),
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
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.name(n, e.span),
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
                self.scope.push((var.name.to_string(), var.span));
                self.out.push(Occ {
                    span: var.span,
                    res: Res::Local(var.span),
                });
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.expr(body);
                self.scope.pop();
            }
            ExprKind::Record(b) => self.block(b),
            ExprKind::Postfix { base, ops } => {
                let mut rest = &ops[..];
                match (&base.kind, ops.first().map(|o| &o.kind)) {
                    (ExprKind::Name(alias), Some(PostOpKind::Field(id)))
                        if !self.scope.iter().any(|(s, _)| s == alias) =>
                    {
                        self.name(alias, base.span);
                        self.out.push(Occ {
                            span: id.span,
                            res: Res::Qualified(alias.to_string(), id.name.to_string()),
                        });
                        rest = &ops[1..];
                    }
                    _ => self.expr(base),
                }
                for op in rest {
                    match &op.kind {
                        PostOpKind::Call(args) => args.iter().for_each(|a| self.expr(&a.value)),
                        PostOpKind::Field(_) => {}
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

/// A resolved occurrence: the binder or declaration name it refers to, and
/// for an import the module it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Def {
    site: NavTarget,
    module: Option<FileId>,
}

fn decl_index(m: &Module, name: &str) -> Option<usize> {
    m.decls.iter().position(|d| d.name().name == name)
}

fn resolve(a: &Analysis, file: FileId, res: &Res) -> Option<Def> {
    let m = &a.parse(file).module;
    match res {
        Res::Local(span) => Some(Def {
            site: NavTarget { file, span: *span },
            module: None,
        }),
        Res::Decl(n) => {
            let i = decl_index(m, n)?;
            let module = match &m.decls[i] {
                Decl::Import(_) => a.import_target(file, i),
                _ => None,
            };
            Some(Def {
                site: NavTarget {
                    file,
                    span: m.decls[i].name().span,
                },
                module,
            })
        }
        Res::Qualified(alias, n) => {
            let i = m
                .decls
                .iter()
                .position(|d| matches!(d, Decl::Import(imp) if imp.alias.name == *alias))?;
            let target = a.import_target(file, i)?;
            let tm = &a.parse(target).module;
            let j = decl_index(tm, n)?;
            Some(Def {
                site: NavTarget {
                    file: target,
                    span: tm.decls[j].name().span,
                },
                module: None,
            })
        }
        Res::ImportPath(i) => {
            let target = a.import_target(file, *i)?;
            Some(Def {
                site: NavTarget {
                    file: target,
                    span: Span::default(),
                },
                module: Some(target),
            })
        }
    }
}

/// The occurrence under `offset` (its span holds the offset, or ends at it:
/// a cursor just after a name is on it); the innermost one.
fn occurrence_at(occs: &[Occ], offset: u32) -> Option<&Occ> {
    occs.iter()
        .filter(|o| o.span.start <= offset && offset <= o.span.end && o.span.end > o.span.start)
        .min_by_key(|o| o.span.end - o.span.start)
}

pub(crate) fn definition(a: &Analysis, file: FileId, offset: u32) -> Option<NavTarget> {
    let occs = occurrences(&a.parse(file).module);
    let Some(occ) = occurrence_at(&occs, offset) else {
        // A field item of an env body: the item of the layer it overrode.
        let fa = field_at(&a.parse(file).module, offset)?;
        let (_, chain) = crate::refactor::chain(a, file, fa.env.as_deref()?, &fa.path);
        let here = chain
            .iter()
            .position(|l| l.at.file == file && l.at.span == fa.item)?;
        return chain.get(here + 1).map(|l| l.at);
    };
    let def = resolve(a, file, &occ.res)?;
    Some(match def.module {
        Some(m) => NavTarget {
            file: m,
            span: Span::default(),
        },
        None => def.site,
    })
}

pub(crate) fn references(
    a: &Analysis,
    file: FileId,
    offset: u32,
    include_declaration: bool,
) -> Vec<NavTarget> {
    let occs = occurrences(&a.parse(file).module);
    let Some(def) = occurrence_at(&occs, offset).and_then(|o| resolve(a, file, &o.res)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sf in a.db().files() {
        let f = a.db().file_id(sf);
        // Locals are only seen in their own file.
        if matches!(
            occurrence_at(&occs, offset).map(|o| &o.res),
            Some(Res::Local(_))
        ) && f != file
        {
            continue;
        }
        let m = &a.parse(f).module;
        let mut cache: HashMap<Res, Option<Def>> = HashMap::new();
        for o in occurrences(m) {
            let r = cache
                .entry(o.res.clone())
                .or_insert_with(|| resolve(a, f, &o.res));
            if r.map(|d| d.site) == Some(def.site) {
                let here = NavTarget {
                    file: f,
                    span: o.span,
                };
                if include_declaration || here != def.site {
                    out.push(here);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

// ---------------------------------------------------------------------
// Hover

pub(crate) fn hover(a: &Analysis, file: FileId, offset: u32) -> Option<Hover> {
    let occs = occurrences(&a.parse(file).module);
    if let Some(occ) = occurrence_at(&occs, offset) {
        let def = resolve(a, file, &occ.res)?;
        let m = &a.parse(def.site.file).module;
        let ty = a.type_at(file, offset);
        if let Some(d) = m.decls.iter().find(|d| d.name().span == def.site.span) {
            let s = symbol_of(d);
            let value = match s.kind {
                SymbolKind::Let | SymbolKind::Param => a
                    .values(def.site.file)
                    .values
                    .get(&s.name)
                    .map(|v| v.to_string()),
                _ => None,
            };
            return Some(Hover {
                span: occ.span,
                kind: s.kind.label().to_string(),
                name: s.name,
                doc: s.doc,
                ty,
                value,
                chain: Vec::new(),
            });
        }
        let text = a.text(def.site.file);
        return Some(Hover {
            span: occ.span,
            kind: "parameter".into(),
            name: text
                .get(def.site.span.range())
                .unwrap_or_default()
                .to_string(),
            doc: None,
            ty,
            value: None,
            chain: Vec::new(),
        });
    }
    let text = a.text(file);
    let offset = on_char(&text, offset);
    let m = &a.parse(file).module;
    // A segment of a field path in an env body: the field, its value in the
    // env and the layers that set it.
    if let Some(fa) = field_at(m, offset) {
        let rec = match fa.path.len() {
            1 => Some(RecordTy::Env),
            n => field_ty(RecordTy::Env, fa.path[..n - 1].iter().map(|s| s.as_str()))
                .as_ref()
                .and_then(as_record),
        };
        if let Some((rec, ty)) = rec.and_then(|r| Some((r, r.field_ref(fa.path.last()?)?.clone())))
        {
            let (value, chain) = match &fa.env {
                Some(env) => crate::refactor::chain(a, file, env, &fa.path),
                None => (None, Vec::new()),
            };
            return Some(Hover {
                span: fa.segment,
                kind: "field".into(),
                name: format!("{}.{}", rec.name(), fa.path.last().unwrap()),
                doc: None,
                ty: Some(ty.to_string()),
                value,
                chain,
            });
        }
    }
    // A schema field in a record literal of an env body.
    let Some(Ctx::Field { rec, .. }) = context(m, &text, offset) else {
        return None;
    };
    let bytes = text.as_bytes();
    let (mut s, mut e) = (offset as usize, offset as usize);
    while s > 0 && is_word(bytes[s - 1]) {
        s -= 1;
    }
    while e < bytes.len() && is_word(bytes[e]) {
        e += 1;
    }
    let name = &text[s..e];
    let ty = rec.field_ref(name)?;
    Some(Hover {
        span: Span::new(s, e),
        kind: "field".into(),
        name: format!("{}.{name}", rec.name()),
        doc: None,
        ty: Some(ty.to_string()),
        value: None,
        chain: Vec::new(),
    })
}

/// A segment of a field path of an env body under the cursor.
pub(crate) struct FieldAt {
    /// The env's name; `None` for a template (not evaluated on its own).
    pub env: Option<String>,
    /// The path from the env's record to the segment (the enclosing
    /// `PATH { … }` blocks' paths first).
    pub path: Vec<String>,
    /// The segment's span.
    pub segment: Span,
    /// The item's span.
    pub item: Span,
}

/// The field path segment at `offset` in an env body (also inside `if`
/// blocks and `PATH { … }` blocks).
pub(crate) fn field_at(m: &Module, offset: u32) -> Option<FieldAt> {
    for d in &m.decls {
        let Decl::Env(e) = d else { continue };
        if !contains(e.body.span, offset) {
            continue;
        }
        let env = e.params.is_none().then(|| e.name.name.to_string());
        let mut prefix = Vec::new();
        return field_in_block(&e.body, offset, &mut prefix).map(|(path, segment, item)| FieldAt {
            env,
            path,
            segment,
            item,
        });
    }
    None
}

fn field_in_block(
    b: &Block,
    offset: u32,
    prefix: &mut Vec<String>,
) -> Option<(Vec<String>, Span, Span)> {
    for it in b.items.iter() {
        if !contains(it.span, offset) {
            continue;
        }
        let (path, body) = match &it.kind {
            ItemKind::Assign { path, .. } => (path, None),
            ItemKind::Nested { path, body } => (path, Some(body)),
            ItemKind::If {
                then_block,
                else_block,
                ..
            } => {
                for blk in std::iter::once(then_block).chain(else_block.as_ref()) {
                    if contains(blk.span, offset) {
                        return field_in_block(blk, offset, prefix);
                    }
                }
                return None;
            }
            ItemKind::Error => return None,
        };
        for (i, seg) in path.segments.iter().enumerate() {
            if contains(seg.span, offset) {
                let mut p = prefix.clone();
                p.extend(path.segments[..=i].iter().map(|s| s.name.to_string()));
                return Some((p, seg.span, it.span));
            }
        }
        let body = body?;
        if !contains(body.span, offset) {
            return None;
        }
        let n = prefix.len();
        prefix.extend(path.segments.iter().map(|s| s.name.to_string()));
        let r = field_in_block(body, offset, prefix);
        prefix.truncate(n);
        return r;
    }
    None
}

// ---------------------------------------------------------------------
// Completion

/// Where the cursor is, for completion.
enum Ctx {
    /// Writing a field path in a body of record type `rec`; `prefix` is the
    /// dotted path typed before the cursor on this item.
    Field { rec: RecordTy, prefix: String },
    /// Writing a value; `ty` the field's type when the value is a field's.
    Value { ty: Option<Ty>, prefix: String },
    /// Inside an import's path string; the path typed before the cursor.
    ImportPath { typed: String },
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The dotted word before `offset` (`resources.req`, `.read_`, `lib.`).
fn prefix_before(text: &str, offset: usize) -> String {
    let b = text.as_bytes();
    let mut s = offset.min(b.len());
    while s > 0 && (is_word(b[s - 1]) || b[s - 1] == b'.') {
        s -= 1;
    }
    text[s..offset.min(b.len())].to_string()
}

fn contains(span: Span, offset: u32) -> bool {
    span.start <= offset && offset <= span.end
}

/// The type at the end of a field path from `rec`, following records
/// (through optionals).
fn field_ty<'a>(rec: RecordTy, path: impl IntoIterator<Item = &'a str>) -> Option<Ty> {
    let mut cur = Ty::Record(rec);
    for seg in path {
        let r = match unwrap_opt(&cur) {
            Ty::Record(r) => *r,
            _ => return None,
        };
        cur = r.field_ref(seg)?.clone();
    }
    Some(cur)
}

fn unwrap_opt(t: &Ty) -> &Ty {
    match t {
        Ty::Optional(x) => unwrap_opt(x),
        t => t,
    }
}

fn as_record(t: &Ty) -> Option<RecordTy> {
    match unwrap_opt(t) {
        Ty::Record(r) => Some(*r),
        Ty::Env => Some(RecordTy::Env),
        Ty::List(x) => as_record(x),
        _ => None,
    }
}

fn context(m: &Module, text: &str, offset: u32) -> Option<Ctx> {
    let prefix = prefix_before(text, offset as usize);
    // Inside the path of an import being typed (`import "std/` or
    // `import "./` with no `as` yet): the tree may hold no import there.
    let before = text.get(..offset as usize).unwrap_or("");
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    if let Some(rest) = line.trim_start().strip_prefix("import") {
        if let Some(typed) = rest.trim_start().strip_prefix('"') {
            if !typed.contains('"') {
                return Some(Ctx::ImportPath {
                    typed: typed.to_string(),
                });
            }
        }
    }
    for d in &m.decls {
        if !contains(d.span(), offset) {
            continue;
        }
        match d {
            Decl::Import(imp)
                if contains(imp.path_span, offset) && offset > imp.path_span.start =>
            {
                let start = imp.path_span.start as usize + 1;
                let typed = text.get(start..offset as usize).unwrap_or("").to_string();
                return Some(Ctx::ImportPath { typed });
            }
            Decl::Env(e) if offset > e.body.span.start && offset < e.body.span.end.max(1) => {
                return Some(in_block(&e.body, RecordTy::Env, text, offset));
            }
            _ => return Some(Ctx::Value { ty: None, prefix }),
        }
    }
    None
}

fn in_block(b: &Block, rec: RecordTy, text: &str, offset: u32) -> Ctx {
    let prefix = prefix_before(text, offset as usize);
    for it in b.items.iter() {
        if !contains(it.span, offset) {
            continue;
        }
        match &it.kind {
            ItemKind::Assign {
                path,
                op_span,
                value,
                ..
            } => {
                if offset < op_span.end {
                    break;
                }
                let ty = field_ty(rec, path.segments.iter().map(|s| s.name.as_str()));
                // A record literal, or one in a list of records
                // (`volumes += [{ … }]`), is written field by field.
                if let Some(r) = ty.as_ref().and_then(as_record) {
                    let elems: &[Expr] = match &value.kind {
                        ExprKind::List(xs) => xs,
                        _ => std::slice::from_ref(value),
                    };
                    for x in elems {
                        if let ExprKind::Record(inner) = &x.kind {
                            if offset > inner.span.start && offset < inner.span.end {
                                return in_block(inner, r, text, offset);
                            }
                        }
                    }
                }
                return Ctx::Value { ty, prefix };
            }
            ItemKind::Nested { path, body } => {
                if offset > body.span.start && offset < body.span.end {
                    let ty = field_ty(rec, path.segments.iter().map(|s| s.name.as_str()));
                    if let Some(r) = ty.as_ref().and_then(as_record) {
                        return in_block(body, r, text, offset);
                    }
                    return Ctx::Value { ty: None, prefix };
                }
                break;
            }
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if contains(cond.span, offset) {
                    return Ctx::Value { ty: None, prefix };
                }
                for blk in std::iter::once(then_block).chain(else_block.as_ref()) {
                    if offset > blk.span.start && offset < blk.span.end {
                        return in_block(blk, rec, text, offset);
                    }
                }
                break;
            }
            ItemKind::Error => break,
        }
    }
    // Text being typed often does not parse yet (`manager = ` with no
    // value): read an assignment from the text before the cursor.
    if let Some((path, value)) = assignment_before(text, offset as usize) {
        let ty = field_ty(rec, path.split('.'));
        return Ctx::Value {
            ty,
            prefix: value.to_string(),
        };
    }
    Ctx::Field { rec, prefix }
}

/// `(path, value typed)` when the text from the last `{`, `,` or line
/// break before `offset` is `PATH =` (or `+=`, `-=`) and a value word.
fn assignment_before(text: &str, offset: usize) -> Option<(&str, &str)> {
    let before = text.get(..offset)?;
    let start = before.rfind(['{', ',', '\n']).map_or(0, |i| i + 1);
    let seg = before[start..].trim_start();
    let eq = seg.find('=')?;
    let path = seg[..eq].trim_end().trim_end_matches(['+', '-']).trim_end();
    let value = seg[eq + 1..].trim_start();
    let word = |s: &str| s.bytes().all(|b| is_word(b) || b == b'.');
    (!path.is_empty() && word(path) && word(value)).then_some((path, value))
}

/// `offset` moved back to a character boundary of `text` (and into it).
fn on_char(text: &str, offset: u32) -> u32 {
    let mut o = (offset as usize).min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o as u32
}

pub(crate) fn completions(a: &Analysis, file: FileId, offset: u32) -> Vec<Completion> {
    let text = a.text(file);
    let offset = on_char(&text, offset);
    let m = &a.parse(file).module;
    let Some(ctx) = context(m, &text, offset) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match ctx {
        Ctx::Field { rec, prefix } => {
            let (path, last) = match prefix.rsplit_once('.') {
                Some((p, l)) => (Some(p), l),
                None => (None, prefix.as_str()),
            };
            let rec = match path {
                Some(p) => match field_ty(rec, p.split('.')).as_ref().and_then(as_record) {
                    Some(r) => r,
                    None => return out,
                },
                None => rec,
            };
            for (name, ty, _) in rec.fields() {
                if name.starts_with(last) {
                    out.push(Completion {
                        label: name.to_string(),
                        kind: CompletionKind::Field,
                        detail: Some(ty.to_string()),
                    });
                }
            }
        }
        Ctx::Value { ty, prefix } => {
            if let Some((alias, last)) = prefix.split_once('.').filter(|(a, _)| !a.is_empty()) {
                // `alias.` : the declarations of the imported module.
                if let Some(i) = m
                    .decls
                    .iter()
                    .position(|d| matches!(d, Decl::Import(imp) if imp.alias.name == alias))
                {
                    if let Some(t) = a.import_target(file, i) {
                        for s in symbols(&a.parse(t).module) {
                            if s.kind != SymbolKind::Import && s.name.starts_with(last) {
                                out.push(name_completion(&s));
                            }
                        }
                    }
                }
                return out;
            }
            // An argument name of a template or function call: its
            // parameters first (a positional value may follow them).
            if let Some(callee) = call_before(&text, offset as usize) {
                for p in callee_params(a, file, m, &callee) {
                    if p.starts_with(&prefix) {
                        out.push(Completion {
                            label: p,
                            kind: CompletionKind::Name(SymbolKind::Parameter),
                            detail: Some(format!("parameter of {callee}")),
                        });
                    }
                }
            }
            let variants = ty.as_ref().map(enum_variants).unwrap_or_default();
            let dot = prefix.strip_prefix('.');
            for v in variants {
                if dot.is_none_or(|p| v.starts_with(p)) {
                    out.push(Completion {
                        label: format!(".{v}"),
                        kind: CompletionKind::EnumVariant,
                        detail: ty.as_ref().map(|t| t.to_string()),
                    });
                }
            }
            if dot.is_some() {
                return out;
            }
            // Names in scope: the enclosing template's or function's
            // parameters, then the module's declarations.
            for d in &m.decls {
                let ps = match d {
                    Decl::Env(e) if contains(e.span, offset) => e.params.as_deref(),
                    Decl::Fn(f) if contains(f.span, offset) => Some(&f.params[..]),
                    _ => None,
                };
                for p in ps.unwrap_or_default() {
                    if p.name.name.starts_with(&prefix) {
                        out.push(Completion {
                            label: p.name.name.to_string(),
                            kind: CompletionKind::Name(SymbolKind::Parameter),
                            detail: Some("parameter".into()),
                        });
                    }
                }
            }
            for s in symbols(m) {
                if s.name.starts_with(&prefix) && !s.name.is_empty() {
                    out.push(name_completion(&s));
                }
            }
        }
        Ctx::ImportPath { typed } => {
            for n in a.stdlib_modules() {
                let label = format!("std/{n}");
                if label.starts_with(&typed) {
                    out.push(Completion {
                        label,
                        kind: CompletionKind::Module,
                        detail: None,
                    });
                }
            }
            let here = a.path(file);
            let dir_part = match typed.rfind('/') {
                Some(i) => typed[..=i].to_string(),
                None => "./".to_string(),
            };
            if dir_part.starts_with("std/") {
                return out;
            }
            let Some(folder) = here.parent() else {
                return out;
            };
            let folder = scl_db::normalize_path(&folder.join(&dir_part));
            let root = a.root();
            for e in a.listing(&folder).iter().flat_map(|es| es.iter()) {
                let p = folder.join(&e.name);
                if p == here || e.name.starts_with('.') || !p.starts_with(&root) {
                    continue;
                }
                let (label, kind) = if e.is_dir {
                    (format!("{dir_part}{}/", e.name), CompletionKind::Folder)
                } else if e.name.ends_with(".env.scl") {
                    (format!("{dir_part}{}", e.name), CompletionKind::File)
                } else {
                    continue;
                };
                if label.starts_with(&typed) {
                    out.push(Completion {
                        label,
                        kind,
                        detail: None,
                    });
                }
            }
        }
    }
    out
}

/// The callee (`py`, `torch.runtime`) when `offset` is where an argument's
/// name is written: directly inside a call's parentheses, after `(` or `,`,
/// with at most a word typed.
fn call_before(text: &str, offset: usize) -> Option<String> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = offset.min(b.len());
    let mut arg_start = None;
    while i > 0 {
        i -= 1;
        match b[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' if depth == 0 => break,
            b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
            b'[' | b'{' => return None,
            b',' if depth == 0 && arg_start.is_none() => arg_start = Some(i + 1),
            _ => {}
        }
        if i == 0 {
            return None;
        }
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let typed = text[arg_start.unwrap_or(i + 1)..offset].trim();
    if !typed.bytes().all(is_word) {
        return None;
    }
    let callee = prefix_before(text, i);
    (!callee.is_empty() && !callee.starts_with('.')).then_some(callee)
}

/// The parameter names of the template or function `callee` names.
fn callee_params(a: &Analysis, file: FileId, m: &Module, callee: &str) -> Vec<String> {
    let res = match callee.split_once('.') {
        Some((alias, name)) => Res::Qualified(alias.to_string(), name.to_string()),
        None => Res::Decl(callee.to_string()),
    };
    let Some(def) = resolve(a, file, &res) else {
        return Vec::new();
    };
    let tm = if def.site.file == file {
        m
    } else {
        &a.parse(def.site.file).module
    };
    let ps = tm.decls.iter().find_map(|d| match d {
        Decl::Env(e) if e.name.span == def.site.span => e.params.as_deref(),
        Decl::Fn(f) if f.name.span == def.site.span => Some(&f.params[..]),
        _ => None,
    });
    ps.unwrap_or_default()
        .iter()
        .map(|p| p.name.name.to_string())
        .collect()
}

fn name_completion(s: &Symbol) -> Completion {
    Completion {
        label: s.name.clone(),
        kind: CompletionKind::Name(s.kind),
        detail: Some(s.kind.label().to_string()),
    }
}

fn enum_variants(t: &Ty) -> Vec<String> {
    match unwrap_opt(t) {
        Ty::Enum(def) => def.variants.clone(),
        Ty::List(x) => enum_variants(x),
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------
// Rename

/// What a rename at a position renames.
pub(crate) struct RenameSite {
    /// The name under the cursor.
    pub occ: Span,
    /// The binder or declaration name it refers to.
    pub def: NavTarget,
    /// A local binder (a parameter, a comprehension variable).
    pub local: bool,
}

/// The name at `offset` if it can be renamed (see `Analysis::prepare_rename`).
pub(crate) fn rename_site(a: &Analysis, file: FileId, offset: u32) -> Result<RenameSite, String> {
    let m = &a.parse(file).module;
    let occs = occurrences(m);
    let Some(occ) = occurrence_at(&occs, offset) else {
        if field_at(m, offset).is_some() {
            return Err("a schema field cannot be renamed".into());
        }
        return Err("nothing to rename here".into());
    };
    if let Res::ImportPath(_) = occ.res {
        return Err("an import path cannot be renamed".into());
    }
    let Some(def) = resolve(a, file, &occ.res) else {
        let text = a.text(file);
        let name = text.get(occ.span.range()).unwrap_or_default();
        if let Res::Decl(_) = occ.res {
            if scl_sema::builtins::lookup(name).is_some() {
                return Err(format!("`{name}` is a builtin and cannot be renamed"));
            }
        }
        return Err(format!("`{name}` is not declared: nothing to rename"));
    };
    if a.key(def.site.file).starts_with("std/") {
        return Err("a stdlib declaration cannot be renamed".into());
    }
    Ok(RenameSite {
        occ: occ.span,
        def: def.site,
        local: matches!(occ.res, Res::Local(_)),
    })
}

/// Why renaming `site` to `new` would change what some name refers to:
/// `new` is declared (or used as a builtin) in the module of the
/// declaration, or is a parameter of a function or template where a use
/// is, or (a local) is a name in the declaration that holds the binder.
pub(crate) fn rename_clash(a: &Analysis, site: &RenameSite, new: &str) -> Option<String> {
    let file = site.def.file;
    let m = &a.parse(file).module;
    let text = a.text(file);
    let key = a.key(file);
    let line = |s: Span| a.line_col(file, s.start).0;
    let occs = occurrences(m);
    let named = |o: &Occ| text.get(o.span.range()) == Some(new);
    if site.local {
        let d = m
            .decls
            .iter()
            .find(|d| contains(d.span(), site.def.span.start))?;
        for o in occs
            .iter()
            .filter(|o| contains(d.span(), o.span.start) && named(o))
        {
            if o.span == site.def.span {
                continue;
            }
            return Some(format!(
                "`{new}` is already a name in `{}` ({key}, line {})",
                d.name().name,
                line(o.span)
            ));
        }
        if let Some(i) = decl_index(m, new) {
            return Some(format!(
                "`{new}` is already declared in {key} (line {})",
                line(m.decls[i].name().span)
            ));
        }
        return None;
    }
    if let Some(i) = decl_index(m, new) {
        return Some(format!(
            "`{new}` is already declared in {key} (line {})",
            line(m.decls[i].name().span)
        ));
    }
    for o in &occs {
        if matches!(&o.res, Res::Decl(n) if n == new) {
            return Some(format!(
                "`{new}` is a builtin used in {key} (line {})",
                line(o.span)
            ));
        }
    }
    // A use inside a function or template with a parameter named `new`
    // would refer to that parameter.
    for o in &occs {
        let Res::Decl(n) = &o.res else { continue };
        if o.span == site.def.span || resolve(a, file, &o.res).map(|d| d.site) != Some(site.def) {
            continue;
        }
        let _ = n;
        for d in &m.decls {
            let ps = match d {
                Decl::Fn(f) if contains(f.span, o.span.start) => &f.params[..],
                Decl::Env(e) if contains(e.span, o.span.start) => {
                    e.params.as_deref().unwrap_or_default()
                }
                _ => continue,
            };
            if ps.iter().any(|p| p.name.name == new) {
                return Some(format!(
                    "the use at line {} ({key}) would refer to the parameter `{new}` of `{}`",
                    line(o.span),
                    d.name().name
                ));
            }
        }
    }
    None
}
