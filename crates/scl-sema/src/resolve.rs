//! The static pass over one module, before evaluation: names declared twice,
//! unknown names (with did-you-mean), unknown types, recursion between
//! functions, and warnings that need only the syntax (decimal memory units).
//! It sees every expression, including branches that evaluation skips.

use crate::builtins;
use crate::ty::Ty;
use crate::typeck;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use scl_diag::{Diagnostic, Suggestions};
use scl_syntax::ast::Name;
use scl_syntax::ast::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Checks one module's syntax tree; the diagnostics' files are left empty.
/// Without the module's text and its imports' types: names from imports
/// are not type-checked (see [`check_module_with`]).
pub fn check_module(module: &Module) -> Vec<Diagnostic> {
    check_module_with(
        module,
        &StaticInputs {
            text: "",
            imports: &typeck::NoImports,
            known_modules: &[],
            absolute: None,
        },
    )
    .diagnostics
}

/// A module an unknown alias may mean: `import "PATH" as ALIAS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownModule {
    pub alias: String,
    /// As written in an `import` (`std/s3-data`).
    pub path: String,
}

/// What the static pass needs besides the syntax tree.
pub struct StaticInputs<'a> {
    /// The module's text (for quoting it in messages; may be empty).
    pub text: &'a str,
    /// The declaration types of the modules it imports.
    pub imports: &'a dyn typeck::ImportTypes,
    /// Modules an unknown alias may mean (the stdlib's, by their names and
    /// documented aliases), for "add this import".
    pub known_modules: &'a [KnownModule],
    /// Where an anchored span of the declarations is in `text`
    /// (`typeck::Context::absolute`); `None` for absolute spans.
    pub absolute: Option<&'a dyn Fn(scl_diag::Span) -> scl_diag::Span>,
}

/// The whole static pass: names, duplicates, types in signatures, recursion
/// and the type checker ([`typeck::type_module`]). The result's
/// diagnostics hold both; its files are left empty.
pub fn check_module_with(module: &Module, inputs: &StaticInputs) -> typeck::Typed {
    check_declarations(&typeck::Declarations::of(module), inputs)
}

/// [`check_module_with`] on a list of declarations (the database's
/// anchored ones: the diagnostics keep their anchored spans, for the
/// caller to make absolute).
pub fn check_declarations(decls: &typeck::Declarations, inputs: &StaticInputs) -> typeck::Typed {
    let mut typed = typeck::type_declarations(
        decls,
        &typeck::Context {
            text: inputs.text,
            imports: inputs.imports,
            absolute: inputs.absolute,
        },
    );
    let mut out = names(&decls.list, inputs.known_modules);
    out.append(&mut typed.diagnostics);
    typed.diagnostics = out;
    typed
}

fn names(module: &[&Decl], known_modules: &[KnownModule]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut first: HashMap<&str, &Ident> = HashMap::default();
    for d in module {
        let n = d.name();
        if let Some(prev) = first.get(n.name.as_str()) {
            out.push(
                Diagnostic::error(
                    "E0104",
                    n.span,
                    format!("the name `{}` is declared twice in this module", n.name),
                )
                .with_label(Arc::from(""), prev.span, "first declared here")
                .with_help("rename or remove one of them"),
            );
        } else {
            first.insert(&n.name, n);
        }
    }
    let globals: Vec<&str> = module.iter().map(|d| d.name().name.as_str()).collect();
    let enums: Vec<&str> = module
        .iter()
        .filter_map(|d| match d {
            Decl::Enum(e) => Some(e.name.name.as_str()),
            _ => None,
        })
        .collect();
    let imports: Vec<&str> = module
        .iter()
        .filter_map(|d| match d {
            Decl::Import(i) => Some(i.alias.name.as_str()),
            _ => None,
        })
        .collect();
    // Lookups by hash (a module may declare thousands of names); the lists
    // keep declaration order for the did-you-mean candidates.
    let global_set: HashSet<&str> = globals.iter().copied().collect();
    let enum_set: HashSet<&str> = enums.iter().copied().collect();
    let import_set: HashSet<&str> = imports.iter().copied().collect();
    let mut w = Walker {
        globals: &globals,
        global_set: &global_set,
        enums: &enums,
        enum_set: &enum_set,
        imports: &import_set,
        suggestions: Suggestions::default(),
        out: &mut out,
        refs: Vec::new(),
        known_modules,
    };
    let mut calls: BTreeMap<usize, Vec<(Name, scl_diag::Span)>> = BTreeMap::new();
    for (i, d) in module.iter().enumerate() {
        match d {
            Decl::Import(_) | Decl::Enum(_) => {}
            Decl::Let(l) => w.expr(&l.value, &mut Vec::new()),
            Decl::Param(p) => {
                w.ty(&p.ty);
                w.expr(&p.default, &mut Vec::new());
                if let Some(x) = &p.where_ {
                    w.expr(x, &mut vec![p.name.name.clone()]);
                }
            }
            Decl::Fn(f) => {
                // A call in a default argument is a call of the function
                // too (`fn f(x: Int = f()) = x` never ends).
                w.refs.clear();
                let mut scope = Vec::new();
                for p in &f.params {
                    w.ty(&p.ty);
                    if let Some(d) = &p.default {
                        w.expr(d, &mut scope.clone());
                    }
                    scope.push(p.name.name.clone());
                }
                if let Some(r) = &f.ret {
                    w.ty(r);
                }
                w.expr(&f.body, &mut scope);
                calls.insert(i, std::mem::take(&mut w.refs));
            }
            Decl::Env(e) => {
                let mut scope = Vec::new();
                for p in e.params.iter().flatten() {
                    w.ty(&p.ty);
                    if let Some(d) = &p.default {
                        w.expr(d, &mut scope.clone());
                    }
                    scope.push(p.name.name.clone());
                }
                for x in &e.extends {
                    w.expr(x, &mut scope);
                }
                w.block(&e.body, &mut scope);
            }
        }
    }
    // Recursion between functions of this module (another module's functions
    // cannot call back without an import cycle).
    let fn_index: HashMap<&str, usize> = module
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match d {
            Decl::Fn(f) => Some((f.name.name.as_str(), i)),
            _ => None,
        })
        .collect();
    let mut state: HashMap<usize, u8> = HashMap::default(); // 1 = on stack, 2 = done
    let mut reported = false;
    for &start in calls.keys() {
        let mut stack = vec![start];
        find_cycle(
            start,
            &calls,
            &fn_index,
            &mut state,
            &mut stack,
            module,
            &mut out,
            &mut reported,
        );
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn find_cycle(
    f: usize,
    calls: &BTreeMap<usize, Vec<(Name, scl_diag::Span)>>,
    index: &HashMap<&str, usize>,
    state: &mut HashMap<usize, u8>,
    stack: &mut Vec<usize>,
    module: &[&Decl],
    out: &mut Vec<Diagnostic>,
    reported: &mut bool,
) {
    if state.get(&f) == Some(&2) {
        return;
    }
    state.insert(f, 1);
    for (callee, span) in calls.get(&f).into_iter().flatten() {
        let Some(&g) = index.get(callee.as_str()) else {
            continue;
        };
        if state.get(&g) == Some(&1) {
            let pos = stack.iter().position(|x| *x == g).unwrap_or(0);
            let names: Vec<&str> = stack[pos..]
                .iter()
                .map(|i| module[*i].name().name.as_str())
                .collect();
            let msg = if names.len() == 1 {
                format!(
                    "function `{}` calls itself: recursion is not allowed",
                    names[0]
                )
            } else {
                format!(
                    "functions {} call each other: recursion is not allowed",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(" → ")
                )
            };
            if !*reported {
                out.push(
                    Diagnostic::error("E0306", *span, msg).with_help(
                        "SCL is total; use a list comprehension or a lookup table instead",
                    ),
                );
                *reported = true;
            }
            continue;
        }
        stack.push(g);
        find_cycle(g, calls, index, state, stack, module, out, reported);
        stack.pop();
    }
    state.insert(f, 2);
}

struct Walker<'a> {
    globals: &'a [&'a str],
    global_set: &'a HashSet<&'a str>,
    enums: &'a [&'a str],
    enum_set: &'a HashSet<&'a str>,
    imports: &'a HashSet<&'a str>,
    /// The did-you-mean budget of the module.
    suggestions: Suggestions,
    out: &'a mut Vec<Diagnostic>,
    /// Names referenced (for the call graph of the current fn).
    refs: Vec<(Name, scl_diag::Span)>,
    known_modules: &'a [KnownModule],
}

impl Walker<'_> {
    fn ty(&mut self, t: &TypeExpr) {
        match &t.kind {
            TypeExprKind::List(e) | TypeExprKind::Map(e) | TypeExprKind::Optional(e) => self.ty(e),
            TypeExprKind::Error => {}
            TypeExprKind::Named(segs) => {
                if segs.len() == 1 {
                    let n = &segs[0].name;
                    if Ty::builtin(n).is_none() && !self.enum_set.contains(n.as_str()) {
                        let enums = self.enums;
                        let cands = || {
                            Ty::BUILTIN_NAMES
                                .iter()
                                .copied()
                                .chain(enums.iter().copied())
                        };
                        let mut d =
                            Diagnostic::error("E0206", segs[0].span, format!("unknown type `{n}`"));
                        if let Some(s) = self.suggestions.suggest(n, cands) {
                            d = d.with_help(format!("did you mean `{s}`?"));
                        }
                        self.out.push(d);
                    }
                } else if !self.imports.contains(segs[0].name.as_str()) {
                    self.out.push(Diagnostic::error(
                        "E0206",
                        segs[0].span,
                        format!("unknown module `{}` in a type", segs[0].name),
                    ));
                }
            }
        }
    }

    fn block(&mut self, b: &Block, scope: &mut Vec<Name>) {
        for it in b.items.iter() {
            match &it.kind {
                ItemKind::Assign { value, .. } => self.expr(value, scope),
                ItemKind::Nested { body, .. } => self.block(body, scope),
                ItemKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    self.expr(cond, scope);
                    self.block(then_block, scope);
                    if let Some(e) = else_block {
                        self.block(e, scope);
                    }
                }
                ItemKind::Error => {}
            }
        }
    }

    fn expr(&mut self, e: &Expr, scope: &mut Vec<Name>) {
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::EnumLit(_)
            | ExprKind::SelfRef
            | ExprKind::Error => {}
            ExprKind::Quantity { number, suffix } => {
                if let QuantitySuffix::Decimal(_) = suffix {
                    let bin = format!("{}i", suffix.as_str().to_uppercase());
                    self.out.push(
                        Diagnostic::warning(
                            "W0001",
                            e.span,
                            format!(
                                "`{number}{}` is decimal ({number}×10^{} bytes)",
                                suffix.as_str(),
                                3 * decimal_power(*suffix)
                            ),
                        )
                        .with_help(format!(
                            "Kubernetes memory usually uses binary units: `{number}{bin}`"
                        )),
                    );
                }
            }
            ExprKind::Str(parts) => {
                for p in parts {
                    if let StrPart::Interp(x) = p {
                        self.expr(x, scope);
                    }
                }
            }
            ExprKind::Name(n) => {
                self.refs.push((n.clone(), e.span));
                if self.known(n, scope) {
                    return;
                }
                let mut d = Diagnostic::error("E0101", e.span, format!("unknown name `{n}`"));
                let globals = self.globals;
                let cands = || {
                    scope
                        .iter()
                        .map(|s| s.as_str())
                        .chain(globals.iter().copied())
                        .chain(builtins::NAMES.iter().copied())
                };
                if let Some(s) = self.suggestions.suggest(n, cands) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.out.push(d);
            }
            ExprKind::List(xs) => xs.iter().for_each(|x| self.expr(x, scope)),
            ExprKind::Comprehension(c) => {
                let Comprehension {
                    var,
                    iter,
                    cond,
                    body,
                } = &**c;
                self.expr(iter, scope);
                scope.push(var.name.clone());
                if let Some(c) = cond {
                    self.expr(c, scope);
                }
                self.expr(body, scope);
                scope.pop();
            }
            ExprKind::Record(b) => self.block(b, scope),
            ExprKind::Postfix { base, ops } => {
                match (&base.kind, ops.first().map(|o| &o.kind)) {
                    (ExprKind::Name(n), Some(PostOpKind::Field(_))) if !self.known(n, scope) => {
                        self.unknown_alias(n, base.span, scope)
                    }
                    _ => self.expr(base, scope),
                }
                for op in ops {
                    match &op.kind {
                        PostOpKind::Field(_) => {}
                        PostOpKind::Index(i) => self.expr(i, scope),
                        PostOpKind::Call(args) => {
                            for a in args {
                                self.expr(&a.value, scope);
                            }
                        }
                        PostOpKind::With(b) => self.block(b, scope),
                    }
                }
            }
            ExprKind::Binary { first, rest } => {
                self.expr(first, scope);
                for (_, x) in rest {
                    self.expr(x, scope);
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand, scope),
            ExprKind::If(c, a, b) => {
                self.expr(c, scope);
                self.expr(a, scope);
                self.expr(b, scope);
            }
        }
    }
}

impl Walker<'_> {
    fn known(&self, n: &str, scope: &[Name]) -> bool {
        scope.iter().any(|s| s == n) || self.global_set.contains(n) || builtins::lookup(n).is_some()
    }

    /// `n.member` where `n` is not a name: when a module of the stdlib has
    /// that name (or documents it as its alias), say which import to add.
    fn unknown_alias(&mut self, n: &str, span: scl_diag::Span, scope: &mut Vec<Name>) {
        let Some(m) = self.known_modules.iter().find(|m| m.alias == n) else {
            let e = Expr {
                kind: ExprKind::Name(n.into()),
                span,
            };
            return self.expr(&e, scope);
        };
        self.out.push(
            Diagnostic::error(
                "E0101",
                span,
                format!("unknown name `{n}`: no module is imported as `{n}`"),
            )
            .with_help(format!(
                "add `import \"{}\" as {n}` at the top of the file",
                m.path
            )),
        );
    }
}

fn decimal_power(s: QuantitySuffix) -> u8 {
    match s {
        QuantitySuffix::Decimal(p) => p,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A did-you-mean costs a pass over every name in scope: with thousands
    /// of unknown names that was quadratic, so only the first
    /// [`Suggestions::CALLS`] get one (no more are shown per file anyway).
    #[test]
    fn suggestions_are_made_for_the_first_unknown_names_only() {
        let src: String = (0..150)
            .map(|i| format!("let abcdefgh{i} = abcdefgx{i}\n"))
            .collect();
        let parse = scl_syntax::parse(&src);
        let diags = check_module(&parse.module);
        assert_eq!(diags.len(), 150);
        let helped = diags.iter().filter(|d| d.help.is_some()).count();
        assert_eq!(helped, Suggestions::CALLS);
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `abcdefgh0`?"));
    }

    /// And all of them together look at a bounded number of candidates:
    /// 20,000 unknown names among 20,000 declarations would be 400 million.
    #[test]
    fn suggestions_stop_when_their_work_budget_is_spent() {
        let src: String = (0..20_000)
            .map(|i| format!("let abcdefgh{i} = abcdefgx{i}\n"))
            .collect();
        let parse = scl_syntax::parse(&src);
        let diags = check_module(&parse.module);
        let helped = diags.iter().filter(|d| d.help.is_some()).count();
        // Each pass looks at 20,000 globals and the builtins: the budget of
        // a million candidates ends it before the hundredth hint would.
        assert!(helped > 0 && helped < Suggestions::CALLS, "{helped}");
        let within = Suggestions::WORK / (20_000 + builtins::NAMES.len());
        assert_eq!(helped, within);
    }
}
