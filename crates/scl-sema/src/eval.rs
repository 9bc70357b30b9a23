//! The evaluator: module declarations on demand, expressions with an expected
//! type (bidirectional, so enum literals and record literals know their
//! type), and envs by applying their linearized layers to an empty record.

use crate::builtins;
use crate::normalize;
use crate::ty::{EnumDef, RecordTy, Ty};
use crate::value::*;
use crate::{Host, ModuleId, ModuleValues};
use scl_diag::{did_you_mean, Diagnostic, Span};
use scl_syntax::ast::{self, AssignOp, BinaryOp, Decl, ExprKind, ItemKind, UnaryOp};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Marker: evaluation failed and a diagnostic was already recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reported;
pub(crate) type R<T> = Result<T, Reported>;

enum Slot {
    Todo,
    InProgress,
    Done(R<Value>),
}

/// The `self` of the env being evaluated: the previous round's record
/// (`None` in the first round) and whether any `self` was read.
pub(crate) struct SelfCx {
    snapshot: Option<Arc<Record>>,
    used: Cell<bool>,
    first_use: Cell<Option<(ModuleId, Span)>>,
    /// The first `self.…` read that gave a still-pending value (the field
    /// that depends on itself, when the fixpoint does not converge).
    pending_use: Cell<Option<(ModuleId, Span)>>,
}

/// The context of one expression: the module its names resolve in, local
/// bindings (arguments, comprehension variables), and `self`.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub module: ModuleId,
    pub locals: &'a [(String, Value)],
    pub selfcx: Option<&'a SelfCx>,
}

/// Evaluates every declaration of module `m`: params (with `--set` values and
/// `where`), lets, fns, enums, imports, and every env that is not a template
/// to its final, normalized result. Never panics on user input.
pub fn evaluate_module(host: &dyn Host, m: ModuleId) -> ModuleValues {
    let ev = Evaluator::new(host, m);
    let parse = ev.parse.clone();
    // --set names that match no param.
    let params: Vec<&str> = parse
        .module
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Param(p) => Some(p.name.name.as_str()),
            _ => None,
        })
        .collect();
    for o in host.overrides(m) {
        if !params.contains(&o.name.as_str()) {
            let mut d = Diagnostic::error(
                "E0312",
                o.name_span,
                format!(
                    "`--set {}`: module `{}` has no parameter `{}`",
                    o.name,
                    host.display_path(m),
                    o.name
                ),
            );
            d.at.file = o.file.clone();
            // A parameter of that name in an imported module is set with its alias.
            let imported = parse.module.decls.iter().enumerate().find_map(|(i, decl)| {
                let Decl::Import(imp) = decl else { return None };
                let target = host.import(m, i)?;
                host.parse(target)
                    .module
                    .decls
                    .iter()
                    .any(|x| matches!(x, Decl::Param(p) if p.name.name == o.name))
                    .then(|| imp.alias.name.clone())
            });
            d = match (did_you_mean(&o.name, params.iter().copied()), imported) {
                (_, Some(alias)) => d.with_help(format!(
                    "the module imported as `{alias}` has a parameter `{}`: write `--set {alias}.{}=…`",
                    o.name, o.name
                )),
                (Some(s), None) => d.with_help(format!("did you mean `{s}`?")),
                (None, None) if params.is_empty() => {
                    d.with_help("this module declares no parameters")
                }
                (None, None) => d.with_help(format!("parameters: {}", params.join(", "))),
            };
            ev.diags.borrow_mut().push(d);
        }
    }
    // Declarations that need no cycle to evaluate go first, each after the
    // declarations it names: then evaluating one never recurses into
    // another (a chain of 5,000 `extends` declared in any order costs no
    // stack), and an env's parent has its final value ready to build on.
    for i in evaluation_order(&parse.module, &ev.index) {
        if let Ok(Value::Env(envv)) = ev.decl_value(i) {
            if matches!(&parse.module.decls[i], Decl::Env(e) if e.params.is_none()) {
                let _ = ev.final_of(&envv);
            }
        }
    }
    let mut out = ModuleValues::default();
    let mut done: HashSet<&str> = HashSet::new();
    for (i, d) in parse.module.decls.iter().enumerate() {
        if !done.insert(d.name().name.as_str()) {
            continue; // duplicate declaration: reported by the static pass
        }
        let name = d.name().name.clone();
        match ev.decl_value(i) {
            Ok(mut v) => {
                if let (Decl::Env(e), Value::Env(envv)) = (d, &v) {
                    if e.params.is_none() {
                        out.envs.push(name.clone());
                        match ev.final_of(envv) {
                            Ok(f) => {
                                let mut nv = (**envv).clone();
                                nv.final_env = Some(f);
                                v = Value::Env(Arc::new(nv));
                            }
                            Err(_) => {
                                out.failed.push(name);
                                continue;
                            }
                        }
                    }
                }
                out.values.insert(name, v);
            }
            Err(_) => out.failed.push(name),
        }
    }
    let file = host.display_path(m);
    let mut seen = HashSet::new();
    out.diagnostics = ev
        .diags
        .into_inner()
        .into_iter()
        .map(|d| d.in_file(&file))
        .filter(|d| seen.insert((d.code, d.at.clone(), d.message.clone())))
        .collect();
    out
}

/// The declarations of `module` whose evaluation involves no cycle, each
/// after every declaration of the module it names (a post-order of the
/// static reference graph). Declarations on a cycle, and those that reach
/// one, are left out: they are evaluated on demand, in declaration order, so
/// that a cycle is reported from where the user reads it first.
fn evaluation_order(module: &ast::Module, index: &HashMap<String, usize>) -> Vec<usize> {
    let n = module.decls.len();
    let deps: Vec<Vec<usize>> = module
        .decls
        .iter()
        .map(|d| {
            let mut out = Vec::new();
            ast::names_in_decl(d, &mut |name| {
                if let Some(&j) = index.get(name) {
                    out.push(j);
                }
            });
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    // 0 = not seen, 1 = on the path, 2 = done.
    let mut state = vec![0u8; n];
    let mut cyclic = vec![false; n];
    let mut clean = vec![false; n];
    let mut order = Vec::new();
    let mut path: Vec<(usize, usize)> = Vec::new(); // (decl, next dep)
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        path.push((root, 0));
        while let Some(&mut (v, ref mut next)) = path.last_mut() {
            if let Some(&w) = deps[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        path.push((w, 0));
                    }
                    1 => {
                        // A cycle: every declaration on the path from `w`.
                        let from = path.iter().rposition(|&(x, _)| x == w).unwrap_or(0);
                        for &(x, _) in &path[from..] {
                            cyclic[x] = true;
                        }
                    }
                    _ => {}
                }
                continue;
            }
            path.pop();
            state[v] = 2;
            clean[v] = !cyclic[v] && deps[v].iter().all(|&w| clean[w]);
            if clean[v] {
                order.push(v);
            }
        }
    }
    order
}

pub(crate) struct Evaluator<'h> {
    pub host: &'h dyn Host,
    pub root: ModuleId,
    pub parse: Arc<scl_syntax::Parse>,
    slots: RefCell<Vec<Slot>>,
    index: HashMap<String, usize>,
    pub diags: RefCell<Vec<Diagnostic>>,
    env_stack: RefCell<Vec<String>>,
    finals: RefCell<HashMap<usize, R<Arc<FinalEnv>>>>,
    depth: Cell<u32>,
    /// Functions and templates being called: calling one again is recursion.
    calls: RefCell<Vec<(ModuleId, usize)>>,
    /// Envs whose final value is being computed.
    finalizing: RefCell<Vec<Arc<EnvValue>>>,
    /// Evaluation steps taken, against [`MAX_STEPS`].
    steps: Cell<u64>,
    /// Bytes of strings and lists produced so far, against [`MAX_PRODUCED`].
    produced: Cell<u64>,
    /// Where code of another module is being used (a call, an inherited
    /// template instance): module, span and what to call it in a label.
    uses: RefCell<Vec<(ModuleId, Span, String)>>,
    /// Set once `self` is read: only then can a value be (or hold) `Pending`.
    self_seen: Cell<bool>,
    /// [`Evaluator::pending`] of large lists and records, by address.
    pending_known: RefCell<HashMap<usize, (Value, bool)>>,
    /// The did-you-mean budget of the evaluation (see [`Evaluator::suggest`]).
    suggestions: RefCell<scl_diag::Suggestions>,
}

/// Evaluation steps one item costs when an env's layers are applied again
/// from the first (see `Evaluator::compute_final`): about what applying an
/// item (path walk, set-twice check, provenance) costs against one step.
const REBUILD_ITEM_STEPS: usize = 16;

/// The most rounds of the `self` fixpoint of one env (see
/// `Evaluator::compute_final`): fields may read each other through `self`
/// this many levels deep.
pub const MAX_SELF_ROUNDS: usize = 64;

/// How deeply evaluation may nest: one level per expression inside another
/// and per call of a function or template from another. Syntax bounds the
/// first (`E0007`); this bounds chains of calls (`f1` calls `f2` … calls
/// `f5000`), which are legal but would otherwise need unbounded stack.
const MAX_DEPTH: u32 = 10_000;
/// The name of `e with { … }` is `e`'s name with this suffix.
const WITH_SUFFIX: &str = " with {…}";
/// Evaluation steps one module may take: far above any real program, low
/// enough that exponential programs stop in about a second.
const MAX_STEPS: u64 = 20_000_000;
/// The largest string (bytes) or list (elements) a program may build.
pub(crate) const MAX_SIZE: usize = 1 << 24;
/// The bytes of strings and lists one module's evaluation may produce in
/// all (256 MiB; a list element counts as the size of a value): every
/// string and list an operator, a builtin, a literal, a comprehension or an
/// append makes is charged, and so is the state an env copies from its
/// parent, so no program can grow memory past a known bound however its
/// values are combined.
pub(crate) const MAX_PRODUCED: u64 = 1 << 28;
/// What one list element costs against [`MAX_PRODUCED`].
pub(crate) const VALUE_BYTES: usize = std::mem::size_of::<Value>();
/// What one inherited field costs against [`MAX_PRODUCED`] each time an env
/// starts from its parent's state: about what the field takes in the
/// record, the provenance and the IR of the env (measured: 500 to 600 bytes).
const INHERITED_BYTES: usize = 512;

impl<'h> Evaluator<'h> {
    fn new(host: &'h dyn Host, m: ModuleId) -> Self {
        let parse = host.parse(m);
        let mut index = HashMap::new();
        for (i, d) in parse.module.decls.iter().enumerate() {
            index.entry(d.name().name.clone()).or_insert(i);
        }
        let n = parse.module.decls.len();
        Evaluator {
            host,
            root: m,
            parse,
            slots: RefCell::new((0..n).map(|_| Slot::Todo).collect()),
            index,
            diags: RefCell::new(Vec::new()),
            env_stack: RefCell::new(Vec::new()),
            finals: RefCell::new(HashMap::new()),
            depth: Cell::new(0),
            calls: RefCell::new(Vec::new()),
            finalizing: RefCell::new(Vec::new()),
            steps: Cell::new(0),
            produced: Cell::new(0),
            uses: RefCell::new(Vec::new()),
            suggestions: RefCell::default(),
            self_seen: Cell::new(false),
            pending_known: RefCell::default(),
        }
    }

    /// Records a diagnostic located in module `m` and returns `Reported`.
    pub fn report(&self, m: ModuleId, d: Diagnostic) -> Reported {
        let d = if m == self.root {
            d
        } else {
            // An error inside another module's function or template, met
            // while evaluating this one: show where this module uses it.
            let used = self
                .uses
                .borrow()
                .iter()
                .rev()
                .find(|u| u.0 == self.root)
                .cloned();
            let d = d.in_file(&self.host.display_path(m));
            match used {
                Some((_, span, what)) => {
                    d.with_label(self.host.display_path(self.root), span, what)
                }
                None => d,
            }
        };
        self.diags.borrow_mut().push(d);
        Reported
    }

    /// A did-you-mean for `name` among `candidates` (made only if needed),
    /// within the evaluation's budget ([`scl_diag::Suggestions`]): each
    /// costs a pass over the candidates, which can be every name of a large
    /// module.
    fn suggest<'c>(
        &self,
        name: &str,
        candidates: impl FnOnce() -> Vec<&'c str>,
    ) -> Option<&'c str> {
        self.suggestions.borrow_mut().suggest(name, candidates)
    }

    /// Runs `f` with `(module, span, what)` on the stack of places where
    /// another module's code is being used (see [`Evaluator::report`]).
    fn using<T>(
        &self,
        module: ModuleId,
        span: Span,
        what: impl FnOnce() -> String,
        f: impl FnOnce() -> T,
    ) -> T {
        self.uses.borrow_mut().push((module, span, what()));
        let r = f();
        self.uses.borrow_mut().pop();
        r
    }

    pub fn err<T>(
        &self,
        m: ModuleId,
        code: &'static str,
        span: Span,
        msg: impl Into<String>,
    ) -> R<T> {
        Err(self.report(m, Diagnostic::error(code, span, msg)))
    }

    pub fn warn(
        &self,
        m: ModuleId,
        code: &'static str,
        span: Span,
        msg: impl Into<String>,
        help: &str,
    ) {
        let mut d = Diagnostic::warning(code, span, msg);
        if !help.is_empty() {
            d = d.with_help(help);
        }
        self.report(m, d);
    }

    fn parse_of(&self, m: ModuleId) -> Arc<scl_syntax::Parse> {
        if m == self.root {
            self.parse.clone()
        } else {
            self.host.parse(m)
        }
    }

    // ----- declarations ------------------------------------------------

    fn decl_value(&self, i: usize) -> R<Value> {
        {
            let slots = self.slots.borrow();
            match &slots[i] {
                Slot::Done(r) => return r.clone(),
                Slot::InProgress => {
                    let decl = &self.parse.module.decls[i];
                    return Err(self.cycle_error(decl));
                }
                Slot::Todo => {}
            }
        }
        self.slots.borrow_mut()[i] = Slot::InProgress;
        let parse = self.parse.clone();
        let r = self.eval_decl(i, &parse.module.decls[i]);
        self.slots.borrow_mut()[i] = Slot::Done(r.clone());
        r
    }

    fn cycle_error(&self, decl: &Decl) -> Reported {
        match decl {
            Decl::Env(e) => {
                let stack = self.env_stack.borrow();
                let start = stack.iter().position(|n| *n == e.name.name).unwrap_or(0);
                let mut cycle: Vec<String> =
                    stack[start..].iter().map(|n| format!("`{n}`")).collect();
                cycle.push(format!("`{}`", e.name.name));
                let span = e.extends_span.unwrap_or(e.name.span);
                self.report(
                    self.root,
                    Diagnostic::error(
                        "E0301",
                        span,
                        format!("extends cycle: {}", cycle.join(" extends ")),
                    )
                    .with_help(
                        "an env cannot inherit from itself; make both extend a common base instead",
                    ),
                )
            }
            other => self.report(
                self.root,
                Diagnostic::error(
                    "E0306",
                    other.name().span,
                    format!(
                        "`{}` depends on its own value (recursion is not allowed)",
                        other.name().name
                    ),
                ),
            ),
        }
    }

    fn eval_decl(&self, i: usize, decl: &Decl) -> R<Value> {
        let cx = Cx {
            module: self.root,
            locals: &[],
            selfcx: None,
        };
        match decl {
            Decl::Import(_) => match self.host.import(self.root, i) {
                Some(m) => Ok(Value::Module(m)),
                None => Err(Reported),
            },
            Decl::Let(l) => self.eval(cx, &l.value, &Ty::Any),
            Decl::Enum(e) => Ok(Value::EnumType(Arc::new(EnumDef {
                name: e.name.name.clone(),
                variants: e.variants.iter().map(|v| v.name.clone()).collect(),
            }))),
            Decl::Fn(_) => Ok(Value::Func {
                module: self.root,
                decl: i,
            }),
            Decl::Env(e) if e.params.is_some() => Ok(Value::Template {
                module: self.root,
                decl: i,
            }),
            Decl::Env(e) => {
                self.env_stack.borrow_mut().push(e.name.name.clone());
                let r = self.env_value(self.root, i, Vec::new(), e.name.name.clone());
                self.env_stack.borrow_mut().pop();
                r.map(Value::Env)
            }
            Decl::Param(p) => self.eval_param(p),
        }
    }

    fn eval_param(&self, p: &ast::ParamDecl) -> R<Value> {
        let cx = Cx {
            module: self.root,
            locals: &[],
            selfcx: None,
        };
        let ty = self.resolve_type(self.root, &p.ty)?;
        let over = self
            .host
            .overrides(self.root)
            .into_iter()
            .find(|o| o.name == p.name.name);
        let value = match &over {
            Some(o) => self.eval_override(o, &ty)?,
            None => self.eval(cx, &p.default, &ty)?,
        };
        if let Some(pred) = &p.where_ {
            let locals = vec![(p.name.name.clone(), value.clone())];
            let pcx = Cx {
                module: self.root,
                locals: &locals,
                selfcx: None,
            };
            match self.eval(pcx, pred, &Ty::Bool)? {
                Value::Bool(true) => {}
                Value::Bool(false) => {
                    let text = self.snippet(self.root, pred.span);
                    let msg = format!(
                        "parameter `{}` = {} violates `where {}`",
                        p.name.name, value, text
                    );
                    let d = match &over {
                        Some(o) => {
                            let mut d = Diagnostic::error(
                                "E0303",
                                Span::new(o.offset as usize, o.offset as usize + o.value.len()),
                                msg,
                            )
                            .with_label(
                                self.host.display_path(self.root),
                                pred.span,
                                "the constraint",
                            );
                            d.at.file = o.file.clone();
                            d
                        }
                        None => Diagnostic::error("E0303", p.default.span, msg)
                            .with_primary_label("this default")
                            .with_label(Arc::from(""), pred.span, "the constraint"),
                    };
                    return Err(self.report(
                        self.root,
                        d.with_help("choose a value that satisfies the constraint"),
                    ));
                }
                other => {
                    return self.err(
                        self.root,
                        "E0201",
                        pred.span,
                        format!("`where` needs a Bool, found {}", other.type_name()),
                    )
                }
            }
        }
        Ok(value)
    }

    fn eval_override(&self, o: &crate::Override, ty: &Ty) -> R<Value> {
        let span = Span::new(o.offset as usize, o.offset as usize + o.value.len());
        let mk = |code: &'static str, msg: String| {
            let mut d = Diagnostic::error(code, span, msg);
            d.at.file = o.file.clone();
            d
        };
        if ty.is_string_like() {
            // The value is the text itself; a diagnostic about it points
            // into the command line, not into the module.
            let before = self.diags.borrow().len();
            let r = self.coerce(self.root, Value::str(o.value.as_str()), ty, span);
            for d in self.diags.borrow_mut()[before..].iter_mut() {
                d.at.file = o.file.clone();
            }
            return r;
        }
        // Parse the value as an SCL expression: `let __set = VALUE`.
        let prefix = "let __set = ";
        let parse = scl_syntax::parse(&format!("{prefix}{}", o.value));
        let expr = match parse.module.decls.first() {
            Some(Decl::Let(l)) if parse.errors.is_empty() => l.value.clone(),
            _ => {
                return Err(self.report(
                    self.root,
                    mk(
                        "E0201",
                        format!("`--set {}={}`: not a valid {} value", o.name, o.value, ty),
                    ),
                ))
            }
        };
        if let ExprKind::Name(n) = &expr.kind {
            if !self.index.contains_key(n) {
                return Err(self.report(
                    self.root,
                    mk("E0201", format!("`--set {}={}`: expected {ty}, found the word `{n}`", o.name, o.value))
                        .with_help(format!("`{}` is {} parameter; give {} value (only String-like parameters take bare text)", o.name, a_type(&ty.to_string()), a_type(&ty.to_string()))),
                ));
            }
        }
        let before = self.diags.borrow().len();
        let cx = Cx {
            module: self.root,
            locals: &[],
            selfcx: None,
        };
        let r = self.eval(cx, &expr, ty);
        // Re-point diagnostics from the pseudo-source to the command line.
        let shift = o.offset as i64 - prefix.len() as i64;
        for d in self.diags.borrow_mut()[before..].iter_mut() {
            d.at.file = o.file.clone();
            d.at.span = Span::new(
                (d.at.span.start as i64 + shift).max(0) as usize,
                (d.at.span.end as i64 + shift).max(0) as usize,
            );
        }
        r
    }

    /// The text of a span of module `m`'s source, for messages.
    fn snippet(&self, m: ModuleId, span: Span) -> String {
        let text = self.host.text(m);
        text.get(span.range())
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }

    // ----- types ---------------------------------------------------------

    pub fn resolve_type(&self, m: ModuleId, t: &ast::TypeExpr) -> R<Ty> {
        use ast::TypeExprKind as K;
        Ok(match &t.kind {
            K::List(e) => Ty::List(Box::new(self.resolve_type(m, e)?)),
            K::Map(e) => Ty::Map(Box::new(self.resolve_type(m, e)?)),
            K::Optional(e) => Ty::Optional(Box::new(self.resolve_type(m, e)?)),
            K::Error => return Err(Reported),
            K::Named(segs) => {
                if segs.len() == 1 {
                    if let Some(t) = Ty::builtin(&segs[0].name) {
                        return Ok(t);
                    }
                }
                if segs.len() == 1 {
                    let known = if m == self.root {
                        self.index.contains_key(&segs[0].name)
                    } else {
                        self.host
                            .module_values(m)
                            .values
                            .contains_key(&segs[0].name)
                    };
                    if !known {
                        return Err(Reported); // E0206, from the static pass
                    }
                }
                let cx = Cx {
                    module: m,
                    locals: &[],
                    selfcx: None,
                };
                let mut v = self.lookup(cx, &segs[0].name, segs[0].span)?;
                for s in &segs[1..] {
                    v = self.member(m, &v, &s.name, s.span)?;
                }
                match v {
                    Value::EnumType(def) => Ty::Enum(def),
                    other => {
                        return self.err(
                            m,
                            "E0206",
                            t.span,
                            format!(
                                "`{}` is a {}, not a type",
                                segs.iter()
                                    .map(|s| s.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join("."),
                                other.type_name()
                            ),
                        )
                    }
                }
            }
        })
    }

    // ----- names ---------------------------------------------------------

    pub fn lookup(&self, cx: Cx, name: &str, span: Span) -> R<Value> {
        if let Some((_, v)) = cx.locals.iter().rev().find(|(n, _)| n == name) {
            return Ok(v.clone());
        }
        if cx.module == self.root {
            if let Some(&i) = self.index.get(name) {
                return self.decl_value(i);
            }
        } else {
            let mv = self.host.module_values(cx.module);
            if let Some(v) = mv.values.get(name) {
                return Ok(v.clone());
            }
            if mv.failed.iter().any(|n| n == name) {
                return Err(Reported);
            }
        }
        if let Some(b) = builtins::lookup(name) {
            return Ok(Value::Builtin(b));
        }
        let parse = self.parse_of(cx.module);
        let mut d = Diagnostic::error("E0101", span, format!("unknown name `{name}`"));
        let names = || {
            let mut names: Vec<&str> = cx.locals.iter().map(|(n, _)| n.as_str()).collect();
            names.extend(parse.module.decls.iter().map(|d| d.name().name.as_str()));
            names.extend(builtins::NAMES.iter().copied());
            names
        };
        if let Some(s) = self.suggest(name, names) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(self.report(cx.module, d))
    }

    /// `value.name` where value is a module, record or env.
    fn member(&self, m: ModuleId, v: &Value, name: &str, span: Span) -> R<Value> {
        match v {
            Value::Pending => Ok(Value::Pending),
            Value::Module(id) => {
                let mv = self.host.module_values(*id);
                if let Some(v) = mv.values.get(name) {
                    return Ok(v.clone());
                }
                if mv.failed.iter().any(|n| n == name) {
                    return Err(Reported);
                }
                let mut d = Diagnostic::error(
                    "E0106",
                    span,
                    format!(
                        "module `{}` has no declaration `{name}`",
                        self.host.display_path(*id)
                    ),
                );
                if let Some(s) =
                    self.suggest(name, || mv.values.keys().map(|k| k.as_str()).collect())
                {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                Err(self.report(m, d))
            }
            Value::Record(r) => match r.get(name) {
                Some(v) => Ok(v.clone()),
                None => {
                    let mut d = Diagnostic::error(
                        "E0311",
                        span,
                        format!("the record has no field `{name}`"),
                    );
                    d = match self.suggest(name, || r.keys().map(|k| k.as_str()).collect()) {
                        Some(s) => d.with_help(format!("did you mean `{s}`?")),
                        None => d.with_help(format!("fields: {}", keys_list(r))),
                    };
                    Err(self.report(m, d))
                }
            },
            Value::Env(e) => {
                let f = self.final_of(e)?;
                self.member(m, &Value::Record(f.record.clone()), name, span)
            }
            Value::Image { reference, digest } => match name {
                "ref" => Ok(Value::Str(reference.clone())),
                "digest" => Ok(digest.clone().map(Value::Str).unwrap_or(Value::str(""))),
                _ => self.err(
                    m,
                    "E0311",
                    span,
                    format!("an Image has the fields `ref` and `digest`, not `{name}`"),
                ),
            },
            Value::EnumType(def) => {
                if def.variants.iter().any(|v| v == name) {
                    Ok(Value::Enum {
                        ty: Some(def.name.as_str().into()),
                        variant: name.into(),
                    })
                } else {
                    self.err(
                        m,
                        "E0204",
                        span,
                        format!("enum `{}` has no variant `{name}`", def.name),
                    )
                }
            }
            other => self.err(
                m,
                "E0211",
                span,
                format!(
                    "{} has no fields (reading `.{name}`)",
                    a_type(&other.type_name())
                ),
            ),
        }
    }

    // ----- expressions -----------------------------------------------------

    /// Evaluates `e` expecting type `ty` (`Ty::Any` for none) and coerces the
    /// result to it.
    pub fn eval(&self, cx: Cx, e: &ast::Expr, ty: &Ty) -> R<Value> {
        let d = self.depth.get();
        if d > MAX_DEPTH {
            return Err(self.report(
                cx.module,
                Diagnostic::error(
                    "E0316",
                    e.span,
                    format!("evaluation is nested more than {MAX_DEPTH} levels deep"),
                )
                .with_help("a chain of functions or templates, each calling the next, is too long; compute the steps in a list instead"),
            ));
        }
        // Past the budget (reported once, where it ran out), nothing more
        // is evaluated: whatever would follow only grows further.
        if self.produced.get() > MAX_PRODUCED {
            return Err(Reported);
        }
        self.spend_steps(
            cx.module,
            e.span,
            1,
            "the program grows exponentially (a value doubled in a chain of lets or functions?)",
        )?;
        self.depth.set(d + 1);
        // A record literal with a schema type was checked field by field as
        // it was built; only its required fields remain to be checked.
        let built = matches!(e.kind, ExprKind::Record(_))
            && matches!(ty, Ty::Record(_) | Ty::Map(_) | Ty::Env);
        let r = self.eval_inner(cx, e, ty).and_then(|v| {
            if built {
                Ok(v)
            } else {
                self.coerce(cx.module, v, ty, e.span)
            }
        });
        self.depth.set(d);
        r
    }

    fn eval_inner(&self, cx: Cx, e: &ast::Expr, ty: &Ty) -> R<Value> {
        let ty = match ty {
            Ty::Optional(t) => &**t,
            t => t,
        };
        match &e.kind {
            ExprKind::Int(i) => Ok(Value::Int(*i)),
            ExprKind::Float(f) if !f.is_finite() => {
                self.err(cx.module, "E0005", e.span, "this number is too large")
            }
            ExprKind::Float(f) => Ok(Value::Float(*f)),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Str(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        ast::StrPart::Lit(t) => s.push_str(t),
                        ast::StrPart::Interp(x) => {
                            let v = self.eval(cx, x, &Ty::Any)?;
                            if self.pending(&v) {
                                return Ok(Value::Pending);
                            }
                            let piece = self.interpolate(cx.module, &v, x.span)?;
                            if s.len() + piece.len() > MAX_SIZE {
                                return self.too_large(cx.module, e.span, "string");
                            }
                            s.push_str(&piece);
                        }
                    }
                }
                if parts.len() > 1 || matches!(parts.first(), Some(ast::StrPart::Interp(_))) {
                    self.new_string(cx.module, e.span, s.len())?;
                }
                Ok(Value::str(s))
            }
            ExprKind::Quantity { number, suffix } => {
                builtins::quantity(self, cx.module, number, *suffix, e.span)
            }
            ExprKind::EnumLit(v) => match ty {
                Ty::Enum(def) => Ok(Value::Enum {
                    ty: Some(def.name.as_str().into()),
                    variant: v.as_str().into(),
                }),
                _ => Ok(Value::Enum {
                    ty: None,
                    variant: v.as_str().into(),
                }),
            },
            ExprKind::Name(n) => self.lookup(cx, n, e.span),
            ExprKind::SelfRef => match cx.selfcx {
                Some(s) => {
                    s.used.set(true);
                    self.self_seen.set(true);
                    if s.first_use.get().is_none() {
                        s.first_use.set(Some((cx.module, e.span)));
                    }
                    Ok(match &s.snapshot {
                        Some(r) => Value::Record(r.clone()),
                        None => Value::Pending,
                    })
                }
                None => self.err(
                    cx.module,
                    "E0211",
                    e.span,
                    "`self` is only valid inside an env",
                ),
            },
            ExprKind::List(items) => {
                let et = match ty {
                    Ty::List(t) => (**t).clone(),
                    _ => Ty::Any,
                };
                self.new_list(cx.module, e.span, items.len())?;
                let out = all_ok(items.iter().map(|it| self.eval(cx, it, &et)))?;
                Ok(Value::List(Arc::new(out)))
            }
            ExprKind::Comprehension {
                var,
                iter,
                cond,
                body,
            } => {
                let et = match ty {
                    Ty::List(t) => (**t).clone(),
                    _ => Ty::Any,
                };
                let xs = self.eval(cx, iter, &Ty::Any)?;
                let items: Vec<Value> = match xs {
                    Value::List(l) => l.to_vec(),
                    Value::Record(r) => r.keys().map(|k| Value::str(k.as_str())).collect(),
                    Value::Pending => return Ok(Value::Pending),
                    other => {
                        return self.err(
                            cx.module,
                            "E0201",
                            iter.span,
                            format!("`for` needs a list, found {}", other.type_name()),
                        )
                    }
                };
                let mut out = Vec::new();
                for x in items {
                    let mut locals = cx.locals.to_vec();
                    locals.push((var.name.clone(), x));
                    let icx = Cx {
                        locals: &locals,
                        ..cx
                    };
                    if let Some(c) = cond {
                        match self.eval(icx, c, &Ty::Bool)? {
                            Value::Bool(true) => {}
                            Value::Bool(false) => continue,
                            _ => return Ok(Value::Pending),
                        }
                    }
                    out.push(self.eval(icx, body, &et)?);
                }
                self.new_list(cx.module, e.span, out.len())?;
                Ok(Value::List(Arc::new(out)))
            }
            ExprKind::Record(block) => match ty {
                Ty::Env => {
                    let layer = self.anon_layer(cx, block, Lin::new(), "record".into());
                    Ok(Value::Env(Arc::new(EnvValue {
                        name: "record".into(),
                        layers: Lin::new().push(layer),
                        chain: true,
                        extends_span: block.span,
                        module: cx.module,
                        final_env: None,
                        single_parent: false,
                        parent_final: None,
                    })))
                }
                _ => self.record_value(cx, block, ty),
            },
            ExprKind::Postfix { base, ops } => self.postfix(cx, base, ops, ty),
            ExprKind::Unary { ops, operand } => {
                let mut v = self.eval(cx, operand, &Ty::Any)?;
                for (op, op_span) in ops.iter().rev() {
                    let span = op_span.to(operand.span);
                    v = match (op, v) {
                        (_, Value::Pending) => Value::Pending,
                        (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                        (UnaryOp::Neg, Value::Int(i)) => match i.checked_neg() {
                            Some(n) => Value::Int(n),
                            None => {
                                return self.err(cx.module, "E0207", span, "arithmetic overflow")
                            }
                        },
                        (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
                        (UnaryOp::Neg, Value::Memory(b)) => Value::Memory(-b),
                        (UnaryOp::Neg, Value::Cpu(c)) => match c.checked_neg() {
                            Some(n) => Value::Cpu(n),
                            None => {
                                return self.err(cx.module, "E0207", span, "arithmetic overflow")
                            }
                        },
                        (op, v) => {
                            return self.err(
                                cx.module,
                                "E0211",
                                span,
                                format!(
                                    "`{}` does not apply to {}",
                                    if *op == UnaryOp::Not { "!" } else { "-" },
                                    v.type_name()
                                ),
                            )
                        }
                    };
                }
                Ok(v)
            }
            ExprKind::Binary { first, rest } => self.binary_chain(cx, first, rest, ty),
            ExprKind::If(c, a, b) => match self.eval(cx, c, &Ty::Bool)? {
                Value::Bool(true) => self.eval(cx, a, ty),
                Value::Bool(false) => self.eval(cx, b, ty),
                _ => Ok(Value::Pending),
            },
            ExprKind::Error => Err(Reported),
        }
    }

    /// A flat postfix chain: calls, field access and indexing, then `with`
    /// blocks, applied left to right to the value of `base`.
    fn postfix(&self, cx: Cx, base: &ast::Expr, ops: &[ast::PostOp], ty: &Ty) -> R<Value> {
        use ast::PostOpKind;
        // A record literal before `with` is an anonymous env.
        let base_ty = match ops.first().map(|o| &o.kind) {
            Some(PostOpKind::With(_)) => Ty::Env,
            _ => Ty::Any,
        };
        let mut v = self.eval(cx, base, &base_ty)?;
        // The span of the expression so far (the receiver of the next op).
        let mut span = base.span;
        for (k, op) in ops.iter().enumerate() {
            let whole = span.to(op.span);
            v = match &op.kind {
                PostOpKind::Field(name) => {
                    let r = self.member(cx.module, &v, &name.name, name.span)?;
                    if let (0, ExprKind::SelfRef, Some(s)) = (k, &base.kind, cx.selfcx) {
                        if s.snapshot.is_some() && s.pending_use.get().is_none() && self.pending(&r)
                        {
                            s.pending_use.set(Some((cx.module, whole)));
                        }
                    }
                    r
                }
                PostOpKind::Index(idx) => {
                    let i = self.eval(cx, idx, &Ty::Any)?;
                    self.index(cx.module, &v, &i, idx.span, whole)?
                }
                PostOpKind::Call(args) => {
                    let last = k + 1 == ops.len();
                    self.call(cx, &v, args, whole, span, if last { ty } else { &Ty::Any })?
                }
                PostOpKind::With(block) => {
                    let b = if k == 0 {
                        v
                    } else {
                        self.coerce(cx.module, v, &Ty::Env, span)?
                    };
                    let env = match b {
                        Value::Env(env) => env,
                        Value::Pending => return Ok(Value::Pending),
                        other => {
                            return self.err(
                                cx.module,
                                "E0313",
                                span,
                                format!("`with` needs an env, found {}", other.type_name()),
                            )
                        }
                    };
                    self.with_env(cx, &env, block, whole)
                }
            };
            span = whole;
        }
        Ok(v)
    }

    /// `env with { … }`: `env`'s layers plus an anonymous one for `block`;
    /// `span` is the whole expression.
    fn with_env(&self, cx: Cx, env: &Arc<EnvValue>, block: &ast::Block, span: Span) -> Value {
        // `a with {…} with {…}` is still called `a with {…}` (a name that
        // grew with the chain would cost its length at every link).
        let name = if env.name.ends_with(WITH_SUFFIX) {
            env.name.clone()
        } else {
            format!("{}{WITH_SUFFIX}", env.name)
        };
        let layer = self.anon_layer(cx, block, env.layers.clone(), name.clone());
        Value::Env(Arc::new(EnvValue {
            name,
            layers: env.layers.push(layer),
            chain: env.chain,
            extends_span: span,
            module: cx.module,
            final_env: None,
            single_parent: true,
            parent_final: env.final_env.clone(),
        }))
    }

    /// `b[i]`: a map by key, a list by position (negative from the end).
    fn index(&self, m: ModuleId, b: &Value, i: &Value, idx_span: Span, span: Span) -> R<Value> {
        match (b, i) {
            (Value::Pending, _) | (_, Value::Pending) => Ok(Value::Pending),
            (Value::Record(r), Value::Str(k)) => match r.get(&**k) {
                Some(v) => Ok(v.clone()),
                None => {
                    let mut d = Diagnostic::error(
                        "E0311",
                        idx_span,
                        format!("no key {:?} in this map", &**k),
                    )
                    .with_primary_label("this key");
                    d = d.with_help(format!("keys: {}", keys_list(r)));
                    Err(self.report(m, d))
                }
            },
            (Value::List(l), Value::Int(n)) => {
                let len = l.len() as i64;
                let k = if *n < 0 { len + n } else { *n };
                if k < 0 || k >= len {
                    self.err(
                        m,
                        "E0311",
                        idx_span,
                        format!("index {n} is out of range for a list of {len}"),
                    )
                } else {
                    Ok(l[k as usize].clone())
                }
            }
            _ => self.err(
                m,
                "E0211",
                span,
                format!("cannot index a {} with a {}", b.type_name(), i.type_name()),
            ),
        }
    }

    fn anon_layer(&self, cx: Cx, block: &ast::Block, ancestors: Lin, name: String) -> Arc<Layer> {
        Arc::new(Layer {
            id: LayerId {
                module: cx.module,
                decl: None,
                span: block.span,
                args: cx.locals.to_vec(),
            },
            name: name.into(),
            block: block.clone(),
            locals: Arc::new(cx.locals.to_vec()),
            ancestors,
        })
    }

    pub fn too_large<T>(&self, m: ModuleId, span: Span, what: &str) -> R<T> {
        Err(self.report(
            m,
            Diagnostic::error("E0316", span, format!("this {what} is larger than {MAX_SIZE} (bytes or elements)"))
                .with_help("the program grows exponentially (a value doubled in a chain of lets or functions?)"),
        ))
    }

    /// Whether `v` is or holds `Pending` (a `self` field not known yet).
    /// That needs a walk through the value, so it is done only once `self`
    /// was read in this evaluation: before, no value can hold `Pending`, and
    /// an operation on a large list costs nothing extra.
    ///
    /// A large list or record is walked once: the answer is kept by its
    /// address (with the value, so the address stays its own), since an env
    /// that reads `self` in a long chain asks about the same records
    /// (`self.vars`) once per layer and round.
    pub(crate) fn pending(&self, v: &Value) -> bool {
        if !self.self_seen.get() {
            return false;
        }
        let key = match v {
            Value::Pending => return true,
            Value::List(l) if l.len() >= 16 => Arc::as_ptr(l) as usize,
            Value::Record(r) if r.len() >= 16 => Arc::as_ptr(r) as *const u8 as usize,
            _ => return v.is_pending(),
        };
        if let Some((_, p)) = self.pending_known.borrow().get(&key) {
            return *p;
        }
        let p = v.is_pending();
        self.pending_known.borrow_mut().insert(key, (v.clone(), p));
        p
    }

    /// Charges `units` of work (elements compared or copied by one
    /// operation) to the step budget, [`MAX_STEPS`]: an operation whose cost
    /// grows with its operands' size (`contains` on a list, `-=`, `+=`,
    /// `==` of lists) costs that many steps, so repeating it over a large
    /// list is bounded like any other loop. E0316 once when it runs out.
    pub(crate) fn work(&self, m: ModuleId, span: Span, units: u64) -> R<()> {
        self.spend_steps(
            m,
            span,
            units,
            "an operation on large lists is repeated many times (`contains`, `-=`, `+=` or `==` inside a comprehension?)",
        )
    }

    /// Adds `units` to the steps taken; past [`MAX_STEPS`], `E0316` with
    /// `help` where the budget ran out (reported once) and every later
    /// spending fails.
    fn spend_steps(&self, m: ModuleId, span: Span, units: u64, help: &str) -> R<()> {
        self.spend(&self.steps, MAX_STEPS, units, || {
            self.report(
                m,
                Diagnostic::error(
                    "E0316",
                    span,
                    format!("evaluation took more than {MAX_STEPS} steps"),
                )
                .with_help(help),
            );
        })
    }

    /// Adds `amount` to one of the budget's counters; the first time the
    /// total passes `limit` it calls `report`, and from then on every
    /// spending fails.
    fn spend(&self, counter: &Cell<u64>, limit: u64, amount: u64, report: impl FnOnce()) -> R<()> {
        let before = counter.get();
        let total = before.saturating_add(amount);
        counter.set(total);
        if total <= limit {
            return Ok(());
        }
        if before <= limit {
            report();
        }
        Err(Reported)
    }

    /// Charges `bytes` against [`MAX_PRODUCED`]; past it, `E0316` (reported
    /// once) and every later charge fails.
    fn charge(&self, m: ModuleId, span: Span, bytes: usize) -> R<()> {
        self.spend(&self.produced, MAX_PRODUCED, bytes as u64, || {
            self.report(
                m,
                Diagnostic::error(
                    "E0316",
                    span,
                    format!(
                        "evaluation produced more than {} MiB of strings, lists and inherited fields",
                        MAX_PRODUCED >> 20
                    ),
                )
                .with_help("the program builds ever larger values (a value doubled in a chain of lets, nested `replace` or `join`?)"),
            );
        })
    }

    /// Charges `bytes` that normalization copies into the IR (shared
    /// values become owned copies there) against [`MAX_PRODUCED`]; past it,
    /// `E0316` at `span` (reported once).
    pub(crate) fn charge_ir(&self, m: ModuleId, span: Span, bytes: usize) -> R<()> {
        self.charge(m, span, bytes)
    }

    /// Before a string of `len` bytes is built: at most [`MAX_SIZE`], and
    /// charged against [`MAX_PRODUCED`].
    pub(crate) fn new_string(&self, m: ModuleId, span: Span, len: usize) -> R<()> {
        if len > MAX_SIZE {
            return self.too_large(m, span, "string");
        }
        self.charge(m, span, len)
    }

    /// Before a list of `n` elements is built: at most [`MAX_SIZE`], and
    /// charged against [`MAX_PRODUCED`].
    pub(crate) fn new_list(&self, m: ModuleId, span: Span, n: usize) -> R<()> {
        if n > MAX_SIZE {
            return self.too_large(m, span, "list");
        }
        self.charge(m, span, n.saturating_mul(VALUE_BYTES))
    }

    /// Text of a value inside a string (`"${x}"`).
    pub fn interpolate(&self, m: ModuleId, v: &Value, span: Span) -> R<String> {
        Ok(match v {
            Value::Str(s) => s.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Enum { variant, .. } => variant.to_string(),
            Value::Memory(b) => format_memory(*b),
            Value::Cpu(c) => format_cpu(*c),
            Value::Image { reference, .. } => reference.to_string(),
            Value::File { path, .. } => path.to_string(),
            Value::Secret { .. } => {
                return Err(self.report(
                    m,
                    Diagnostic::error("E0210", span, "a secret cannot be interpolated into a string")
                        .with_help("interpolating a secret would write it into an artifact as plain text; set it as a whole value of `vars` instead"),
                ))
            }
            other => {
                return Err(self.report(
                    m,
                    Diagnostic::error("E0210", span, format!("{} cannot be interpolated into a string", a_type(&other.type_name())))
                        .with_help("interpolate a string, number, boolean, enum or quantity; for lists use `join(list, \",\")`"),
                ))
            }
        })
    }

    /// A flat chain `first OP x OP y …` of one precedence level, folded left
    /// to right (no recursion, whatever its length).
    fn binary_chain(
        &self,
        cx: Cx,
        first: &ast::Expr,
        rest: &[(BinaryOp, ast::Expr)],
        ty: &Ty,
    ) -> R<Value> {
        let Some((op0, _)) = rest.first() else {
            return self.eval(cx, first, ty);
        };
        let first_ty = match op0 {
            BinaryOp::And | BinaryOp::Or => Ty::Bool,
            op => operand_ty(*op, ty),
        };
        let mut acc = self.eval(cx, first, &first_ty)?;
        let mut acc_span = first.span;
        for (op, rhs) in rest {
            let span = acc_span.to(rhs.span);
            acc = self.binary_step(cx, *op, acc, acc_span, rhs, span, ty)?;
            acc_span = span;
        }
        Ok(acc)
    }

    /// `x OP b`, where `x` (at `x_span`) is the value so far and `b` is not
    /// evaluated yet (`&&` and `||` may not evaluate it); `span` covers both.
    #[allow(clippy::too_many_arguments)]
    fn binary_step(
        &self,
        cx: Cx,
        op: BinaryOp,
        x: Value,
        x_span: Span,
        b: &ast::Expr,
        span: Span,
        ty: &Ty,
    ) -> R<Value> {
        use Value::*;
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return match (op, x) {
                (_, Pending) => Ok(Pending),
                (BinaryOp::And, Bool(false)) => Ok(Bool(false)),
                (BinaryOp::Or, Bool(true)) => Ok(Bool(true)),
                (_, Bool(_)) => self.eval(cx, b, &Ty::Bool),
                (_, other) => self.err(
                    cx.module,
                    "E0201",
                    x_span,
                    format!(
                        "`{}` needs Bool operands, found {}",
                        op.as_str(),
                        other.type_name()
                    ),
                ),
            };
        }
        let y = self.eval(cx, b, &operand_ty(op, ty))?;
        if self.pending(&x) || self.pending(&y) {
            return Ok(Pending);
        }
        let bad = |me: &Self| -> R<Value> {
            me.err(
                cx.module,
                if matches!(
                    (&x, &y),
                    (Memory(_), Int(_) | Float(_)) | (Int(_) | Float(_), Memory(_))
                ) && matches!(op, BinaryOp::Add | BinaryOp::Sub)
                {
                    "E0207"
                } else {
                    "E0211"
                },
                span,
                format!(
                    "`{}` does not apply to {} and {}",
                    op.as_str(),
                    x.type_name(),
                    y.type_name()
                ),
            )
        };
        let overflow =
            |me: &Self| -> R<Value> { me.err(cx.module, "E0207", span, "arithmetic overflow") };
        match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                self.work(cx.module, span, compare_work(&x, &y))?;
                let eq = values_equal(&x, &y);
                return Ok(Bool(if op == BinaryOp::Eq { eq } else { !eq }));
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                self.work(cx.module, span, compare_work(&x, &y))?;
                let ord = match (&x, &y) {
                    (Int(p), Int(q)) => p.partial_cmp(q),
                    (Int(p), Float(q)) => (*p as f64).partial_cmp(q),
                    (Float(p), Int(q)) => p.partial_cmp(&(*q as f64)),
                    (Float(p), Float(q)) => p.partial_cmp(q),
                    (Memory(p), Memory(q)) => p.partial_cmp(q),
                    (Cpu(p), Cpu(q)) => p.partial_cmp(q),
                    (Str(p), Str(q)) => p.partial_cmp(q),
                    _ => return bad(self),
                };
                let Some(o) = ord else { return Ok(Bool(false)) };
                use std::cmp::Ordering::*;
                return Ok(Bool(match op {
                    BinaryOp::Lt => o == Less,
                    BinaryOp::Le => o != Greater,
                    BinaryOp::Gt => o == Greater,
                    _ => o != Less,
                }));
            }
            _ => {}
        }
        let r = match (op, &x, &y) {
            (BinaryOp::Add, Int(p), Int(q)) => p.checked_add(*q).map(Int),
            (BinaryOp::Sub, Int(p), Int(q)) => p.checked_sub(*q).map(Int),
            (BinaryOp::Mul, Int(p), Int(q)) => p.checked_mul(*q).map(Int),
            (BinaryOp::Div, Int(_), Int(0))
            | (BinaryOp::Div, Memory(_), Int(0))
            | (BinaryOp::Div, Cpu(_), Int(0)) => {
                return self.err(cx.module, "E0211", span, "division by zero")
            }
            (BinaryOp::Div, Int(p), Int(q)) => p.checked_div(*q).map(Int),
            (op, Int(_) | Float(_), Int(_) | Float(_)) => {
                let p = as_f64(&x);
                let q = as_f64(&y);
                Some(Float(match op {
                    BinaryOp::Add => p + q,
                    BinaryOp::Sub => p - q,
                    BinaryOp::Mul => p * q,
                    _ => p / q,
                }))
            }
            (BinaryOp::Add, Str(p), Str(q)) => {
                self.new_string(cx.module, span, p.len() + q.len())?;
                Some(Value::str(format!("{p}{q}")))
            }
            (BinaryOp::Add, List(p), List(q)) => {
                self.new_list(cx.module, span, p.len() + q.len())?;
                Some(List(Arc::new(p.iter().chain(q.iter()).cloned().collect())))
            }
            (BinaryOp::Add, Memory(p), Memory(q)) => p.checked_add(*q).map(Memory),
            (BinaryOp::Sub, Memory(p), Memory(q)) => p.checked_sub(*q).map(Memory),
            (BinaryOp::Add, Cpu(p), Cpu(q)) => p.checked_add(*q).map(Cpu),
            (BinaryOp::Sub, Cpu(p), Cpu(q)) => p.checked_sub(*q).map(Cpu),
            (BinaryOp::Mul, Memory(p), Int(q)) | (BinaryOp::Mul, Int(q), Memory(p)) => {
                p.checked_mul(*q as i128).map(Memory)
            }
            (BinaryOp::Mul, Cpu(p), Int(q)) | (BinaryOp::Mul, Int(q), Cpu(p)) => {
                p.checked_mul(*q).map(Cpu)
            }
            (BinaryOp::Mul, Memory(p), Float(q)) | (BinaryOp::Mul, Float(q), Memory(p)) => {
                let r = *p as f64 * q;
                if r.fract() != 0.0 {
                    return self.err(
                        cx.module,
                        "E0207",
                        span,
                        format!("{} × {q} is not a whole number of bytes", format_memory(*p)),
                    );
                }
                Some(Memory(r as i128))
            }
            (BinaryOp::Mul, Cpu(p), Float(q)) | (BinaryOp::Mul, Float(q), Cpu(p)) => {
                Some(Cpu((*p as f64 * q).round() as i64))
            }
            (BinaryOp::Div, Memory(p), Int(q)) => {
                if p.checked_rem(*q as i128).is_none_or(|r| r != 0) {
                    return self.err(
                        cx.module,
                        "E0207",
                        span,
                        format!("{} / {q} is not a whole number of bytes", format_memory(*p)),
                    );
                }
                Some(Memory(p / *q as i128))
            }
            (BinaryOp::Div, Cpu(p), Int(q)) => {
                if p % q != 0 {
                    return self.err(
                        cx.module,
                        "E0207",
                        span,
                        format!(
                            "{} / {q} is not a whole number of millicores",
                            format_cpu(*p)
                        ),
                    );
                }
                p.checked_div(*q).map(Cpu)
            }
            _ => return bad(self),
        };
        match r {
            Some(Float(f)) if !f.is_finite() => self.err(
                cx.module,
                "E0207",
                span,
                format!("`{}` gives {f}, which is not a finite number", op.as_str()),
            ),
            Some(v) => Ok(v),
            None => overflow(self),
        }
    }

    // ----- calls ------------------------------------------------------------

    /// Pushes a call; calling a function or template that is already being
    /// called is recursion (E0306; usually reported by the static pass).
    fn enter_call(
        &self,
        at: ModuleId,
        module: ModuleId,
        decl: usize,
        span: Span,
    ) -> R<CallGuard<'_>> {
        if self.calls.borrow().contains(&(module, decl)) {
            let parse = self.parse_of(module);
            let name = parse.module.decls[decl].name().name.clone();
            return Err(self.report(
                at,
                Diagnostic::error(
                    "E0306",
                    span,
                    format!(
                        "`{name}` is called while it is being evaluated: recursion is not allowed"
                    ),
                ),
            ));
        }
        self.calls.borrow_mut().push((module, decl));
        Ok(CallGuard { calls: &self.calls })
    }

    fn call(
        &self,
        cx: Cx,
        f: &Value,
        args: &[ast::Arg],
        span: Span,
        callee_span: Span,
        ty: &Ty,
    ) -> R<Value> {
        match f {
            Value::Pending => Ok(Value::Pending),
            Value::Builtin(name) => builtins::call(self, cx, name, args, span, ty),
            Value::Func { module, decl } => {
                let parse = self.parse_of(*module);
                let Decl::Fn(fd) = &parse.module.decls[*decl] else {
                    return Err(Reported);
                };
                // Arguments are evaluated in the caller, before the call
                // begins: `g(g(x))` is two calls one after the other, not
                // recursion.
                let bound = self.bind_args(
                    cx,
                    (*module, *decl),
                    &fd.name.name,
                    &fd.params,
                    args,
                    span,
                    "function",
                )?;
                let _guard = self.enter_call(cx.module, *module, *decl, span)?;
                let ret = match &fd.ret {
                    Some(t) => self.resolve_type(*module, t)?,
                    None => Ty::Any,
                };
                let fcx = Cx {
                    module: *module,
                    locals: &bound,
                    selfcx: None,
                };
                if *module == cx.module {
                    self.eval(fcx, &fd.body, &ret)
                } else {
                    let name = &fd.name.name;
                    self.using(
                        cx.module,
                        span,
                        || format!("in this call of `{name}`"),
                        || self.eval(fcx, &fd.body, &ret),
                    )
                }
            }
            Value::Template { module, decl } => self
                .instantiate(cx, *module, *decl, args, span)
                .map(Value::Env),
            other => self.err(
                cx.module,
                "E0211",
                callee_span,
                format!("{} cannot be called", a_type(&other.type_name())),
            ),
        }
    }

    /// Binds call arguments (evaluated in the caller's scope) to parameters:
    /// positional first, then named; defaults are evaluated in the callee's module.
    #[allow(clippy::too_many_arguments)]
    fn bind_args(
        &self,
        cx: Cx,
        (callee_module, callee_decl): (ModuleId, usize),
        callee: &str,
        params: &[ast::ParamSig],
        args: &[ast::Arg],
        span: Span,
        what: &str,
    ) -> R<Vec<(String, Value)>> {
        let mut given: Vec<Option<&ast::Arg>> = vec![None; params.len()];
        let mut failed = false;
        let mut pos = 0;
        for a in args {
            match &a.name {
                None => {
                    if pos >= params.len() {
                        self.report(
                            cx.module,
                            Diagnostic::error(
                                "E0308",
                                a.span,
                                format!(
                                    "{what} `{callee}` takes {} argument(s), this is one too many",
                                    params.len()
                                ),
                            ),
                        );
                        failed = true;
                    } else {
                        given[pos] = Some(a);
                    }
                    pos += 1;
                }
                Some(n) => match params.iter().position(|p| p.name.name == n.name) {
                    Some(i) if given[i].is_none() => given[i] = Some(a),
                    Some(_) => {
                        self.report(
                            cx.module,
                            Diagnostic::error(
                                "E0305",
                                n.span,
                                format!("argument `{}` is given twice", n.name),
                            ),
                        );
                        failed = true;
                    }
                    None => {
                        let mut d = Diagnostic::error(
                            "E0308",
                            n.span,
                            format!("{what} `{callee}` has no argument `{}`", n.name),
                        );
                        d = match did_you_mean(&n.name, params.iter().map(|p| p.name.name.as_str()))
                        {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_help(format!(
                                "arguments: {}",
                                params
                                    .iter()
                                    .map(|p| p.name.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        };
                        self.report(cx.module, d);
                        failed = true;
                    }
                },
            }
        }
        let mut bound = Vec::new();
        for (p, g) in params.iter().zip(&given) {
            let pty = match self.resolve_type(callee_module, &p.ty) {
                Ok(t) => t,
                Err(_) => {
                    failed = true;
                    continue;
                }
            };
            let v = match (g, &p.default) {
                (Some(a), _) => self.eval(cx, &a.value, &pty),
                (None, Some(d)) => {
                    // A default belongs to the callee: a call of the callee
                    // inside it is recursion.
                    let dcx = Cx {
                        module: callee_module,
                        locals: &bound,
                        selfcx: None,
                    };
                    self.enter_call(cx.module, callee_module, callee_decl, span)
                        .and_then(|_guard| self.eval(dcx, d, &pty))
                }
                (None, None) => {
                    if !failed {
                        self.report(
                            cx.module,
                            Diagnostic::error(
                                "E0309",
                                span,
                                format!("{what} `{callee}` needs the argument `{}`", p.name.name),
                            )
                            .with_help(format!("pass it: `{} = …`", p.name.name)),
                        );
                    }
                    failed = true;
                    continue;
                }
            };
            match v {
                Ok(v) => bound.push((p.name.name.clone(), v)),
                Err(_) => failed = true,
            }
        }
        if failed {
            Err(Reported)
        } else {
            Ok(bound)
        }
    }

    fn instantiate(
        &self,
        cx: Cx,
        module: ModuleId,
        decl: usize,
        args: &[ast::Arg],
        span: Span,
    ) -> R<Arc<EnvValue>> {
        let parse = self.parse_of(module);
        let Decl::Env(ed) = &parse.module.decls[decl] else {
            return Err(Reported);
        };
        let params = ed.params.clone().unwrap_or_default();
        // As for functions: arguments first, in the caller; then the call.
        let bound = self.bind_args(
            cx,
            (module, decl),
            &ed.name.name,
            &params,
            args,
            span,
            "template",
        )?;
        let _guard = self.enter_call(cx.module, module, decl, span)?;
        let shown: Vec<String> = bound.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        let name = format!("{}({})", ed.name.name, shown.join(", "));
        self.env_value(module, decl, bound, name)
    }

    /// Builds the linearization of env declaration `decl` of module `m`
    /// (a plain env, or a template with bound arguments).
    fn env_value(
        &self,
        m: ModuleId,
        decl: usize,
        args: Vec<(String, Value)>,
        name: String,
    ) -> R<Arc<EnvValue>> {
        let parse = self.parse_of(m);
        let Decl::Env(ed) = &parse.module.decls[decl] else {
            return Err(Reported);
        };
        let cx = Cx {
            module: m,
            locals: &args,
            selfcx: None,
        };
        let mut parents: Vec<Arc<EnvValue>> = Vec::new();
        let mut failed = false;
        for p in &ed.extends {
            let v = match self.eval(cx, p, &Ty::Any) {
                Ok(v) => v,
                Err(_) => {
                    failed = true;
                    continue;
                }
            };
            let env = match v {
                Value::Env(e) => e,
                Value::Template { module, decl } => {
                    match self.instantiate(cx, module, decl, &[], p.span) {
                        Ok(e) => e,
                        Err(_) => {
                            failed = true;
                            continue;
                        }
                    }
                }
                other => {
                    self.report(
                        m,
                        Diagnostic::error(
                            "E0313",
                            p.span,
                            format!("`extends` needs an env, found {}", other.type_name()),
                        ),
                    );
                    failed = true;
                    continue;
                }
            };
            parents.push(env);
        }
        if failed {
            return Err(Reported);
        }
        let (lin, chain) = linearize(&parents);
        let single = parents.len() == 1;
        let layer = Arc::new(Layer {
            id: LayerId {
                module: m,
                decl: Some(decl),
                span: ed.name.span,
                args: args.clone(),
            },
            name: name.as_str().into(),
            block: ed.body.clone(),
            locals: Arc::new(args),
            ancestors: lin.clone(),
        });
        Ok(Arc::new(EnvValue {
            name,
            layers: lin.push(layer),
            chain,
            extends_span: ed.extends_span.unwrap_or(ed.name.span),
            module: m,
            final_env: None,
            single_parent: single,
            parent_final: if single {
                parents[0].final_env.clone()
            } else {
                None
            },
        }))
    }

    // ----- envs: applying layers -------------------------------------------------

    /// The final, normalized result of an env (cached for the root module's
    /// named envs).
    pub fn final_of(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>> {
        if let Some(f) = &env.final_env {
            return Ok(f.clone());
        }
        // Envs declared in this module (not `with` or record envs, whose last
        // layer has no declaration) are computed once.
        let key = env.layers.last().and_then(|l| {
            if l.id.module == self.root && l.id.args.is_empty() {
                l.id.decl
            } else {
                None
            }
        });
        let is_named = key.is_some();
        if is_named {
            if let Some(r) = self.finals.borrow().get(&key.unwrap()) {
                return r.clone();
            }
        }
        // An env whose value needs its own final value (a service that is the
        // env itself, two envs reading each other's fields) has none.
        let pos = self
            .finalizing
            .borrow()
            .iter()
            .position(|x| x.layers.len() == env.layers.len() && x.layers.same(&env.layers));
        if let Some(pos) = pos {
            let chain: Vec<String> = self.finalizing.borrow()[pos..]
                .iter()
                .map(|x| format!("`{}`", x.name))
                .collect();
            let d = Diagnostic::error(
                "E0301",
                env.extends_span,
                format!("`{}` needs its own final value: {} → `{}`", env.name, chain.join(" → "), env.name),
            )
            .with_help("an env cannot contain itself as a service or read its own fields through another env");
            return Err(self.report(env.module, d));
        }
        self.finalizing.borrow_mut().push(env.clone());
        let r = self.compute_final(env);
        self.finalizing.borrow_mut().pop();
        if is_named {
            self.finals.borrow_mut().insert(key.unwrap(), r.clone());
        }
        r
    }

    /// Evaluates the layers of `env` into its final record, IR and origins.
    /// `self` is a fixpoint: each round reads the previous round's record,
    /// so a chain of fields reading each other k deep (`a = self.b`, `b =
    /// self.c`, …) needs k + 2 rounds (k to resolve, one to see it settle); at most [`MAX_SELF_ROUNDS`] are run,
    /// each charged to the evaluation's step budget like any evaluation.
    fn compute_final(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>> {
        if self.produced.get() > MAX_PRODUCED || self.steps.get() > MAX_STEPS {
            return Err(Reported);
        }
        // The `self` fixpoint: round 1 reads `self` as pending; later rounds
        // read the previous round's record, until two rounds agree.
        // A single parent whose layers were already applied: start from its
        // state and apply only this env's own layer.
        let reuse = env.single_parent.then_some(()).and_then(|()| {
            let f = match &env.parent_final {
                Some(f) => Some(f.clone()),
                None => {
                    let parent = env.layers.init();
                    let last = parent.last()?;
                    let key = if last.id.module == self.root && last.id.args.is_empty() {
                        last.id.decl
                    } else {
                        None
                    };
                    key.and_then(|k| self.finals.borrow().get(&k).and_then(|r| r.clone().ok()))
                }
            }?;
            f.applied.clone().map(|a| (env.layers.len() - 1, a))
        });
        // The layers still to apply (only the last one when reusing).
        let start = reuse.as_ref().map_or(0, |(n, _)| *n);
        let todo = env.layers.suffix(start);
        let mut snapshot: Option<Arc<Record>> = None;
        let mut last: Option<(Arc<Record>, Builder, bool)> = None;
        for round in 0..MAX_SELF_ROUNDS {
            let before = self.diags.borrow().len();
            let view = snapshot.as_ref().map(|r| Arc::new(normalize::self_view(r)));
            let selfcx = SelfCx {
                snapshot: view,
                used: Cell::new(false),
                first_use: Cell::new(None),
                pending_use: Cell::new(None),
            };
            let mut b = match &reuse {
                Some((_, applied)) => {
                    // Starting from the parent's state copies it: a chain
                    // whose every env adds a field copies ever more (the
                    // IR of each env holds them all), so the copy is charged.
                    let n = applied.origins.len().saturating_mul(INHERITED_BYTES);
                    if self.charge(env.module, env.extends_span, n).is_err() {
                        return Err(Reported);
                    }
                    Builder::from_applied(applied)
                }
                None => {
                    let mut b = Builder::new(true);
                    // Writes are needed only for the diamond rule, which a
                    // single chain of inheritance cannot break.
                    b.track_writes = !env.chain;
                    b
                }
            };
            let mut failed = false;
            // Applying layers again from the first (an env with several
            // parents, or whose parent reads `self`, cannot start from its
            // parent's state; each round of the `self` fixpoint applies
            // them all again) is charged per item, at what applying one
            // costs against one evaluation step: a chain of n such envs
            // costs O(n²) items, and the budget bounds it.
            if reuse.is_none() && todo.len() > 1 {
                let items: usize = todo.iter().map(|l| l.block.items.len()).sum();
                if self
                    .work(
                        env.module,
                        env.extends_span,
                        (items * REBUILD_ITEM_STEPS) as u64,
                    )
                    .is_err()
                {
                    return Err(Reported);
                }
            }
            for (j, layer) in todo.iter().enumerate() {
                b.layer = start + j;
                b.layer_name = layer.name.clone();
                b.layer_module = layer.id.module;
                let cx = Cx {
                    module: layer.id.module,
                    locals: &layer.locals,
                    selfcx: Some(&selfcx),
                };
                let mut apply = || {
                    self.apply_block(
                        &mut b,
                        cx,
                        &layer.block,
                        &[],
                        &Ty::Record(RecordTy::Env),
                        &layer.name,
                    )
                };
                // A template instance of another module is this env's own
                // use of it: its errors get a label at the `extends`. (A named
                // env of another module reports its errors there itself.)
                let r = if layer.id.module != env.module && !layer.id.args.is_empty() {
                    let name = &layer.name;
                    self.using(
                        env.module,
                        env.extends_span,
                        || format!("`{name}` is instantiated here"),
                        apply,
                    )
                } else {
                    apply()
                };
                if r.is_err() {
                    failed = true;
                }
            }
            let record = Arc::new(std::mem::take(&mut b.record));
            if !selfcx.used.get() || failed {
                if failed {
                    return Err(Reported);
                }
                last = Some((record, b, !selfcx.used.get()));
                break;
            }
            let converged = snapshot.as_ref().is_some_and(|s| **s == *record);
            // Still changing after the last round: a chain too deep (a real
            // cycle settles, with pending values, and is reported below).
            if !converged && round == MAX_SELF_ROUNDS - 1 {
                let (m, span) = selfcx
                    .first_use
                    .get()
                    .unwrap_or((env.module, env.extends_span));
                return Err(self.report(
                    m,
                    Diagnostic::error(
                        "E0310",
                        span,
                        format!(
                            "the fields of `{}` read each other through `self` more than {} deep",
                            env.name,
                            MAX_SELF_ROUNDS - 2
                        ),
                    )
                    .with_help("compute the values from `let` declarations instead"),
                ));
            }
            if converged {
                if record.values().any(Value::is_pending) {
                    let (m, span) = selfcx
                        .pending_use
                        .get()
                        .or(selfcx.first_use.get())
                        .unwrap_or((env.module, env.extends_span));
                    return Err(self.report(
                        m,
                        Diagnostic::error(
                            "E0310",
                            span,
                            format!(
                                "a field of `{}` depends on its own value through `self`",
                                env.name
                            ),
                        )
                        .with_help("compute the value from a `let` or a `param` instead"),
                    ));
                }
                last = Some((record, b, false));
                break;
            }
            // Drop this round's diagnostics: the next round redoes them.
            self.diags.borrow_mut().truncate(before);
            snapshot = Some(record);
        }
        let (record, b, reusable) = last.ok_or(Reported)?;
        self.check_conflicts(env, &b)?;
        let origins: BTreeMap<String, Origin> = b
            .origins
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    Origin {
                        layer: o.name.clone(),
                        module: o.module,
                        span: o.span,
                        replaced: o.replaced.clone(),
                    },
                )
            })
            .collect();
        let origins = Arc::new(origins);
        let spec = normalize::normalize(self, env, &record, &origins)?;
        let applied = reusable.then(|| Arc::new(b.into_applied(&record)));
        Ok(Arc::new(FinalEnv {
            record,
            origins,
            spec: Some(Arc::new(spec)),
            applied,
        }))
    }

    /// The diamond rule: two writes of the same path (or of a path and a
    /// field below it) by envs that are not ancestors of each other, with
    /// different values, are an error unless an env that inherits both (or
    /// the env itself) writes the path again.
    ///
    /// Only writes of one path and of the paths above it can conflict, so
    /// the pairs are looked for per path; a path whose writers are all
    /// ancestors of each other (the common case) is skipped after one pass.
    fn check_conflicts(&self, env: &Arc<EnvValue>, b: &Builder) -> R<()> {
        // A single chain of inheritance has no unrelated layers.
        if env.chain {
            return Ok(());
        }
        let layers = env.layers.to_vec();
        let anc = Ancestry::new(&layers);
        let last = layers.len() - 1;
        for (path, writes) in &b.writes {
            // The writes of `path` and of every path above it.
            let mut group: Vec<(&str, &Write)> =
                writes.iter().map(|w| (path.as_str(), w)).collect();
            for p in Seen::prefixes(path) {
                if let Some((k, ws)) = b.writes.get_key_value(p) {
                    group.extend(ws.iter().map(|w| (k.as_str(), w)));
                }
            }
            let mut writers: Vec<usize> = group.iter().map(|(_, w)| w.layer).collect();
            writers.sort_unstable();
            writers.dedup();
            if writers.windows(2).all(|w| anc.is_anc(w[0], w[1])) {
                continue;
            }
            for (i, (pi, wi)) in group.iter().enumerate() {
                for (pj, wj) in group.iter().skip(i + 1) {
                    // Order the pair so that `p` is a prefix of (or equal to) `q`.
                    let ((p, wp), (q, wq)) = if pj.len() < pi.len() {
                        ((pj, wj), (pi, wi))
                    } else {
                        ((pi, wi), (pj, wj))
                    };
                    let same = p == q;
                    if wp.layer == wq.layer
                        || anc.is_anc(wp.layer, wq.layer)
                        || anc.is_anc(wq.layer, wp.layer)
                    {
                        continue;
                    }
                    let sub = if same {
                        Some(wp.value.clone())
                    } else {
                        sub_value(&wp.value, &q[p.len() + 1..])
                    };
                    if sub.as_ref().is_some_and(|v| values_equal(v, &wq.value)) {
                        continue;
                    }
                    // Resolved by a later write of `q` or an enclosing path in
                    // an env that has both as ancestors (or the env itself)?
                    let resolved = group.iter().any(|(pz, wz)| {
                        (*q == *pz
                            || (q.starts_with(*pz) && q.as_bytes().get(pz.len()) == Some(&b'.')))
                            && wz.layer != wp.layer
                            && wz.layer != wq.layer
                            && (wz.layer == last
                                || (anc.is_anc(wp.layer, wz.layer)
                                    && anc.is_anc(wq.layer, wz.layer)))
                    });
                    if resolved {
                        continue;
                    }
                    let (lp, lq) = (&layers[wp.layer], &layers[wq.layer]);
                    let me = &layers[last];
                    let shown = |v: Option<&Value>| {
                        v.map(|v| v.to_string()).unwrap_or_else(|| "nothing".into())
                    };
                    let d = Diagnostic::error(
                        "E0302",
                        env.extends_span,
                        format!(
                            "`{}` inherits conflicting values for `{q}`: {} from `{}` and {} from `{}`",
                            me.name,
                            shown(sub.as_ref()),
                            lp.name,
                            wq.value,
                            lq.name
                        ),
                    )
                    .with_primary_label("both parents are inherited here")
                    .with_label(
                        self.host.display_path(lp.id.module),
                        wp.span,
                        format!("`{}` sets {p} = {}", lp.name, wp.value),
                    )
                    .with_label(
                        self.host.display_path(lq.id.module),
                        wq.span,
                        format!("`{}` sets {q} = {}", lq.name, wq.value),
                    )
                    .with_help(format!("set `{q}` in `{}` itself to choose one", me.name));
                    return Err(self.report(env.module, d));
                }
            }
        }
        Ok(())
    }

    /// A record literal as a value of type `ty` (a schema record, a map, or untyped).
    fn record_value(&self, cx: Cx, block: &ast::Block, ty: &Ty) -> R<Value> {
        let mut b = Builder::new(false);
        self.apply_block(&mut b, cx, block, &[], ty, "")?;
        if let Ty::Record(rt) = ty {
            let mut failed = false;
            for &(n, _, req) in rt.fields() {
                if req && !b.record.contains_key(n) {
                    self.report(
                        cx.module,
                        Diagnostic::error(
                            "E0209",
                            block.span,
                            format!("{} needs the field `{n}`", rt.name()),
                        ),
                    );
                    failed = true;
                }
            }
            if failed {
                return Err(Reported);
            }
            b.record.insert(TYPE_KEY.into(), Value::str(rt.name()));
        }
        Ok(Value::Record(Arc::new(b.record)))
    }

    /// Applies the items of `block` at `prefix` (a path into `b.record`)
    /// whose type is `ty`.
    pub(crate) fn apply_block(
        &self,
        b: &mut Builder,
        cx: Cx,
        block: &ast::Block,
        prefix: &[String],
        ty: &Ty,
        layer: &str,
    ) -> R<()> {
        let mut seen = Seen::default();
        self.apply_items(b, cx, block, prefix, ty, layer, &mut seen)
    }

    /// Applies a block's items; `seen` holds the paths set so far in the
    /// enclosing body (nested blocks share it), for the set-twice check.
    #[allow(clippy::too_many_arguments)]
    fn apply_items(
        &self,
        b: &mut Builder,
        cx: Cx,
        block: &ast::Block,
        prefix: &[String],
        ty: &Ty,
        layer: &str,
        seen: &mut Seen,
    ) -> R<()> {
        let mut failed = false;
        for item in block.items.iter() {
            if self
                .apply_item(b, cx, item, prefix, ty, layer, seen)
                .is_err()
            {
                failed = true;
            }
        }
        if failed {
            Err(Reported)
        } else {
            Ok(())
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_item(
        &self,
        b: &mut Builder,
        cx: Cx,
        item: &ast::Item,
        prefix: &[String],
        ty: &Ty,
        layer: &str,
        seen: &mut Seen,
    ) -> R<()> {
        match &item.kind {
            ItemKind::Error => Err(Reported),
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => match self.eval(cx, cond, &Ty::Bool)? {
                Value::Bool(true) => self.apply_block(b, cx, then_block, prefix, ty, layer),
                Value::Bool(false) => match else_block {
                    Some(e) => self.apply_block(b, cx, e, prefix, ty, layer),
                    None => Ok(()),
                },
                _ => Ok(()), // pending `self`: decided in a later round
            },
            ItemKind::Nested { path, body } => {
                let (full, fty) = self.walk_path(cx.module, prefix, ty, path)?;
                let key = path_key(&full);
                match &fty {
                    Ty::Record(_) | Ty::Map(_) | Ty::Any => {}
                    other => {
                        return self.err(
                            cx.module,
                            "E0201",
                            path.span,
                            format!(
                                "`{key}` is a {other}, not a record: use `{} = …`",
                                path.segments.last().map(|s| s.name.as_str()).unwrap_or("")
                            ),
                        )
                    }
                }
                b.ensure_record(&full);
                self.apply_items(b, cx, body, &full, &fty, layer, seen)
            }
            ItemKind::Assign {
                path,
                op,
                op_span: _,
                value,
            } => {
                let (full, fty) = self.walk_path(cx.module, prefix, ty, path)?;
                let key = path_key(&full);
                if *op == AssignOp::Set {
                    if let Some(prev) = seen.overlapping(&key) {
                        return Err(self.report(
                            cx.module,
                            Diagnostic::error(
                                "E0305",
                                path.span,
                                format!("`{key}` is set twice in this block"),
                            )
                            .with_label(Arc::from(""), prev, "first set here")
                            .with_help("remove one of the two items"),
                        ));
                    }
                    seen.insert(&key, path.span);
                }
                let vty = match (op, &fty) {
                    (AssignOp::Set, t) => t.clone(),
                    (AssignOp::Append, Ty::List(_)) | (AssignOp::Append, Ty::Map(_)) => fty.clone(),
                    (AssignOp::Remove, Ty::List(_)) => fty.clone(),
                    (AssignOp::Remove, Ty::Map(_)) => Ty::List(Box::new(Ty::String)),
                    (AssignOp::Append | AssignOp::Remove, Ty::Any) => Ty::Any,
                    (_, other) => {
                        return self.err(
                            cx.module,
                            "E0211",
                            item.span,
                            format!(
                                "`{}` works on lists and maps; `{key}` is a {other}",
                                if *op == AssignOp::Append { "+=" } else { "-=" }
                            ),
                        )
                    }
                };
                let v = self.eval(cx, value, &vty)?;
                // A map key set twice in this block, one of them by `+=`
                // (`vars.A = …` then `vars += { A = … }`, two `+=` with one
                // key, or `vars = { A = … }` then `vars += { A = … }`): the
                // second would silently win, as with two `=`.
                if let (Value::Record(r), Ty::Map(_)) = (&v, &fty) {
                    for k in r.keys().filter(|k| k.as_str() != TYPE_KEY) {
                        let kp = format!("{key}.{k}");
                        if *op == AssignOp::Append {
                            if let Some(prev) = seen.set.get(&kp) {
                                return Err(self.report(
                                    cx.module,
                                    Diagnostic::error(
                                        "E0305",
                                        value.span,
                                        format!("`{kp}` is set twice in this block"),
                                    )
                                    .with_label(Arc::from(""), *prev, "first set here")
                                    .with_help("remove one of the two items"),
                                ));
                            }
                            seen.insert(&kp, value.span);
                        } else {
                            seen.set.insert(kp, path.span);
                        }
                    }
                }
                if let (AssignOp::Append, Value::List(l)) = (op, &v) {
                    // The list grows by a copy of the new elements.
                    self.charge(cx.module, item.span, l.len().saturating_mul(VALUE_BYTES))?;
                }
                // What the assignment copies (`+=`: the current list or map)
                // or compares (`-=` of non-strings: every pair) is work.
                let (have, given) = (b.len_at(&full), value_len(&v));
                let units = match op {
                    AssignOp::Set => 1,
                    AssignOp::Append => have + given,
                    AssignOp::Remove if removes_by_hash(&v) => have + given,
                    AssignOp::Remove => have.saturating_mul(given.max(1)),
                };
                self.work(cx.module, item.span, units as u64)?;
                b.assign(&full, key, *op, v, item.span, &fty)
                    .map_err(|msg| {
                        self.report(cx.module, Diagnostic::error("E0201", item.span, msg))
                    })
            }
        }
    }

    /// Resolves a dotted path below `prefix` (of type `ty`): the full path
    /// and the type at its end. Unknown fields are E0202 with a suggestion.
    fn walk_path(
        &self,
        m: ModuleId,
        prefix: &[String],
        ty: &Ty,
        path: &ast::FieldPath,
    ) -> R<(Vec<String>, Ty)> {
        let mut full = prefix.to_vec();
        let mut t = ty.clone();
        for seg in &path.segments {
            t = match t {
                Ty::Optional(inner) => *inner,
                other => other,
            };
            let next = match &t {
                Ty::Record(rt) => match rt.field(&seg.name) {
                    Some(ft) => ft,
                    None => {
                        let fields: Vec<&str> = rt.fields().iter().map(|(n, _, _)| *n).collect();
                        let where_ = if full.is_empty() {
                            rt.name().to_string()
                        } else {
                            format!("`{}` ({})", full.join("."), rt.name())
                        };
                        let mut d = Diagnostic::error(
                            "E0202",
                            seg.span,
                            format!("unknown field `{}` in {where_}", seg.name),
                        );
                        d = match did_you_mean(&seg.name, fields.iter().copied())
                            .or_else(|| field_alias(*rt, &seg.name))
                        {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_help(format!("fields: {}", fields.join(", "))),
                        };
                        return Err(self.report(m, d));
                    }
                },
                Ty::Map(et) => (**et).clone(),
                Ty::Any => Ty::Any,
                Ty::Env => {
                    return self.err(
                        m,
                        "E0211",
                        seg.span,
                        format!(
                            "`{}` is an env; change it with `… with {{ … }}`",
                            full.join(".")
                        ),
                    )
                }
                other => {
                    return self.err(
                        m,
                        "E0202",
                        seg.span,
                        format!(
                            "`{}` is a {other} and has no field `{}`",
                            full.join("."),
                            seg.name
                        ),
                    )
                }
            };
            full.push(seg.name.clone());
            t = next;
        }
        Ok((full, t))
    }

    /// Checks `v` against `ty` and converts it (a bare number to Cpu, a
    /// string to an Image, …). Errors are reported at `span`.
    pub fn coerce(&self, m: ModuleId, v: Value, ty: &Ty, span: Span) -> R<Value> {
        crate::builtins::coerce(self, m, v, ty, span)
    }
}

/// The paths set so far in one env body (nested blocks included), for the
/// set-twice check: a path conflicts with itself, with a path above it and
/// with a path below it. Lookups cost the path's depth, not the body's size.
#[derive(Default)]
pub(crate) struct Seen {
    set: HashMap<String, Span>,
    /// Every proper prefix of a set path → where the first such path was set.
    under: HashMap<String, Span>,
}

impl Seen {
    fn prefixes(key: &str) -> impl Iterator<Item = &str> {
        key_dots(key).into_iter().map(move |i| &key[..i])
    }

    /// Where a path overlapping `key` was set, if any.
    fn overlapping(&self, key: &str) -> Option<Span> {
        self.set
            .get(key)
            .or_else(|| Seen::prefixes(key).find_map(|p| self.set.get(p)))
            .or_else(|| self.under.get(key))
            .copied()
    }

    fn insert(&mut self, key: &str, span: Span) {
        for p in Seen::prefixes(key) {
            if !self.under.contains_key(p) {
                self.under.insert(p.to_string(), span);
            }
        }
        self.set.insert(key.to_string(), span);
    }
}

/// Pops the call stack when a call returns.
struct CallGuard<'a> {
    calls: &'a RefCell<Vec<(ModuleId, usize)>>,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.calls.borrow_mut().pop();
    }
}

/// Accumulates one env (or record literal): the record, the writes for the
/// diamond rule, and the origin of every written path.
pub(crate) struct Builder {
    pub record: Record,
    track: bool,
    /// Record writes for the diamond rule (not needed for a single chain).
    track_writes: bool,
    /// The layer being applied: its position, name and module.
    pub layer: usize,
    pub layer_name: Arc<str>,
    pub layer_module: ModuleId,
    pub writes: BTreeMap<String, Vec<Write>>,
    pub origins: BTreeMap<String, Written>,
}

/// The last write of a path, for provenance.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    /// Position of the layer that wrote it.
    layer: usize,
    name: Arc<str>,
    module: ModuleId,
    span: Span,
    /// The layer whose write it replaced, if another one.
    replaced: Option<Arc<str>>,
}

#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub layer: usize,
    pub value: Value,
    pub span: Span,
}

/// The state of a [`Builder`] after applying some layers, kept in a
/// [`FinalEnv`] for the envs that extend it.
#[derive(Debug)]
pub(crate) struct Applied {
    record: Record,
    track_writes: bool,
    writes: BTreeMap<String, Vec<Write>>,
    origins: BTreeMap<String, Written>,
}

impl Builder {
    fn new(track: bool) -> Builder {
        Builder {
            record: Record::new(),
            track,
            track_writes: track,
            layer: 0,
            layer_name: Arc::from(""),
            layer_module: ModuleId(0),
            writes: BTreeMap::new(),
            origins: BTreeMap::new(),
        }
    }

    fn from_applied(a: &Applied) -> Builder {
        Builder {
            record: a.record.clone(),
            track: true,
            track_writes: a.track_writes,
            layer: 0,
            layer_name: Arc::from(""),
            layer_module: ModuleId(0),
            writes: a.writes.clone(),
            origins: a.origins.clone(),
        }
    }

    fn into_applied(self, record: &Arc<Record>) -> Applied {
        Applied {
            record: (**record).clone(),
            track_writes: self.track_writes,
            writes: self.writes,
            origins: self.origins,
        }
    }

    fn slot<'a>(rec: &'a mut Record, path: &[String]) -> &'a mut Record {
        let mut cur = rec;
        for seg in path {
            let e = cur
                .entry(seg.clone())
                .or_insert_with(|| Value::Record(Arc::new(Record::new())));
            if !matches!(e, Value::Record(_)) {
                *e = Value::Record(Arc::new(Record::new()));
            }
            let Value::Record(r) = e else { unreachable!() };
            cur = Arc::make_mut(r);
        }
        cur
    }

    /// The length of the list or map at `path` (0 if there is none).
    fn len_at(&self, path: &[String]) -> usize {
        let mut cur = &self.record;
        let Some((last, parent)) = path.split_last() else {
            return 0;
        };
        for seg in parent {
            match cur.get(seg) {
                Some(Value::Record(r)) => cur = r,
                _ => return 0,
            }
        }
        cur.get(last).map_or(0, value_len)
    }

    fn ensure_record(&mut self, path: &[String]) {
        Builder::slot(&mut self.record, path);
    }

    fn note_write(&mut self, key: String, value: &Value, span: Span) {
        if !self.track {
            return;
        }
        // A record written whole replaces what was recorded below it (only a
        // record can have paths below it).
        if matches!(value, Value::Record(_)) {
            self.forget_below(&key);
        }
        if self.track_writes {
            self.writes.entry(key.clone()).or_default().push(Write {
                layer: self.layer,
                value: value.clone(),
                span,
            });
        }
        let mut w = Written {
            layer: self.layer,
            name: self.layer_name.clone(),
            module: self.layer_module,
            span,
            replaced: None,
        };
        match self.origins.entry(key) {
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let prev = o.get();
                if prev.layer != w.layer {
                    w.replaced = Some(prev.name.clone());
                }
                o.insert(w);
            }
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(w);
            }
        }
    }

    /// Drops the provenance of `key` and of every path below it.
    fn forget(&mut self, key: &str) {
        if !self.track {
            return;
        }
        self.origins.remove(key);
        self.forget_below(key);
    }

    /// Drops the provenance of every path below `key`.
    fn forget_below(&mut self, key: &str) {
        let below = format!("{key}.");
        let stale: Vec<String> = self
            .origins
            .range(below.clone()..)
            .take_while(|(k, _)| k.starts_with(&below))
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            self.origins.remove(&k);
        }
    }

    /// `+=`/`-=` on a list: the last env to change it, but nothing was replaced.
    fn note_touch(&mut self, key: String, span: Span) {
        if !self.track {
            return;
        }
        self.origins.insert(
            key,
            Written {
                layer: self.layer,
                name: self.layer_name.clone(),
                module: self.layer_module,
                span,
                replaced: None,
            },
        );
    }

    /// Applies `=`, `+=` or `-=` of `v` at `path` (whose type is `ty`).
    fn assign(
        &mut self,
        path: &[String],
        key: String,
        op: AssignOp,
        v: Value,
        span: Span,
        ty: &Ty,
    ) -> Result<(), String> {
        let (last, parent) = path.split_last().expect("paths are never empty");
        let is_map = matches!(ty, Ty::Map(_))
            || (matches!(ty, Ty::Any) && matches!(v, Value::Record(_)) && op == AssignOp::Append);
        match op {
            AssignOp::Set => {
                Builder::slot(&mut self.record, parent).insert(last.clone(), v.clone());
                self.note_write(key, &v, span);
            }
            AssignOp::Append => {
                let rec = Builder::slot(&mut self.record, parent);
                let cur = rec.get(last).cloned();
                match (cur, v) {
                    (None | Some(Value::List(_)), Value::List(new)) if !is_map => {
                        let mut items = match rec.get(last) {
                            Some(Value::List(old)) => old.to_vec(),
                            _ => Vec::new(),
                        };
                        items.extend(new.iter().cloned());
                        rec.insert(last.clone(), Value::List(Arc::new(items)));
                        self.note_touch(key, span);
                    }
                    (cur, Value::Record(new)) => {
                        let mut merged = match cur {
                            Some(Value::Record(old)) => (*old).clone(),
                            _ => Record::new(),
                        };
                        let mut writes = Vec::new();
                        for (k, x) in new.iter() {
                            merged.insert(k.clone(), x.clone());
                            writes.push((format!("{key}.{}", quote_segment(k)), x.clone()));
                        }
                        rec.insert(last.clone(), Value::Record(Arc::new(merged)));
                        for (k, x) in writes {
                            self.note_write(k, &x, span);
                        }
                    }
                    (_, v) => {
                        return Err(format!(
                            "`+=` on `{key}` needs a list or map value, found {}",
                            v.type_name()
                        ))
                    }
                }
            }
            AssignOp::Remove => {
                let rec = Builder::slot(&mut self.record, parent);
                match (rec.get(last).cloned(), v) {
                    (Some(Value::Record(old)), Value::List(keys))
                        if is_map || matches!(ty, Ty::Any) =>
                    {
                        let mut m = (*old).clone();
                        let mut gone = Vec::new();
                        for k in keys.iter() {
                            if let Value::Str(s) = k {
                                if m.remove(&**s).is_some() {
                                    gone.push(format!("{key}.{}", quote_segment(s)));
                                }
                            }
                        }
                        rec.insert(last.clone(), Value::Record(Arc::new(m)));
                        // A removed key has no provenance any more.
                        for g in gone {
                            self.forget(&g);
                        }
                    }
                    (Some(Value::List(old)), Value::List(rm)) => {
                        let kept: Vec<Value> = if removes_by_hash(&Value::List(rm.clone())) {
                            // Strings (the common case: packages, flags) by
                            // hash: linear, not a pass over `rm` per element.
                            let gone: HashSet<&str> = rm
                                .iter()
                                .filter_map(|r| match r {
                                    Value::Str(s) => Some(&**s),
                                    _ => None,
                                })
                                .collect();
                            old.iter()
                                .filter(|x| !matches!(x, Value::Str(s) if gone.contains(&**s)))
                                .cloned()
                                .collect()
                        } else {
                            old.iter()
                                .filter(|x| !rm.iter().any(|r| values_equal(x, r)))
                                .cloned()
                                .collect()
                        };
                        rec.insert(last.clone(), Value::List(Arc::new(kept)));
                    }
                    (None, Value::List(_)) => {}
                    (_, v) => {
                        return Err(format!(
                            "`-=` on `{key}` needs a list, found {}",
                            v.type_name()
                        ))
                    }
                }
                self.note_touch(key, span);
            }
        }
        Ok(())
    }
}

/// The top-level length of a list or map value (0 for anything else).
fn value_len(v: &Value) -> usize {
    match v {
        Value::List(l) => l.len(),
        Value::Record(r) => r.len(),
        _ => 0,
    }
}

/// True when a `-=` removes a list of strings only: then it goes by hash
/// (a string equals only the same string; other values, such as an Int
/// equal to a Float, need [`values_equal`]).
fn removes_by_hash(v: &Value) -> bool {
    matches!(v, Value::List(l) if l.iter().all(|x| matches!(x, Value::Str(_))))
}

/// Names users bring from other tools (compose, Kubernetes, cog, conda) for
/// fields of the Env schema, for "did you mean" when edit distance finds nothing.
fn field_alias(rt: RecordTy, name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    Some(match (rt, n.as_str()) {
        (
            RecordTy::Env,
            "env"
            | "envs"
            | "env_vars"
            | "envvars"
            | "environment"
            | "variables"
            | "environment_variables",
        ) => "vars",
        (RecordTy::Env, "image" | "from" | "base_image") => "base",
        (RecordTy::Env, "cmd" | "args") => "command",
        (RecordTy::Env, "working_dir" | "work_dir" | "cwd" | "workingdir") => "workdir",
        (RecordTy::Env, "expose" | "port") => "ports",
        (RecordTy::Env, "volume" | "mounts") => "volumes",
        (RecordTy::Env, "label" | "annotations") => "labels",
        (RecordTy::Env, "packages" | "apt" | "apt_packages" | "system_packages") => {
            "system.packages"
        }
        (RecordTy::Env, "requirements" | "pip" | "python_packages") => "python",
        (RecordTy::Env, "run" | "steps" | "build_steps") => "setup",
        (RecordTy::Env, "copy" | "add") => "files",
        (RecordTy::Env, "dockerignore" | "exclude") => "ignore",
        (RecordTy::Env, "resource" | "gpu" | "gpus" | "cpu" | "memory") => "resources",
        (RecordTy::ResourceList, "gpus" | "nvidia.com/gpu") => "gpu",
        (RecordTy::ResourceList, "mem" | "ram") => "memory",
        (RecordTy::Python, "requirement" | "requirements_file") => "requirements",
        (RecordTy::Python, "pip" | "package") => "packages",
        _ => return None,
    })
}

/// The type an operand of `op` is evaluated with when the whole expression
/// is expected to be `ty`: a list type flows into `+`/`-` (so list literals
/// in `xs + [..]` know their element type); nothing else does.
fn operand_ty(op: BinaryOp, ty: &Ty) -> Ty {
    match (op, ty) {
        (BinaryOp::Add | BinaryOp::Sub, Ty::List(_)) => ty.clone(),
        _ => Ty::Any,
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

/// Equality as the language sees it: enums by variant, numbers across Int/Float.
/// The work [`values_equal`] may do on `a` and `b`, in elements: the
/// shorter top-level length of two lists, maps or strings (a string counts
/// one unit per 64 bytes), else 1. Deeper levels are not counted: a
/// comparison's cost is bounded by what the values' own making was charged.
pub(crate) fn compare_work(a: &Value, b: &Value) -> u64 {
    let n = match (a, b) {
        (Value::List(x), Value::List(y)) if !Arc::ptr_eq(x, y) => x.len().min(y.len()),
        (Value::Record(x), Value::Record(y)) if !Arc::ptr_eq(x, y) => x.len().min(y.len()),
        (Value::Str(x), Value::Str(y)) => x.len().min(y.len()) / 64,
        _ => 0,
    };
    1 + n as u64
}

pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Enum { variant: x, .. }, Value::Enum { variant: y, .. }) => x == y,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
        (Value::List(x), Value::List(y)) => {
            Arc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_equal(p, q)))
        }
        (Value::Record(x), Value::Record(y)) => {
            Arc::ptr_eq(x, y)
                || x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && values_equal(v1, v2))
        }
        _ => a == b,
    }
}

/// Collects every result, so that every error is reported, then fails if
/// any step failed.
pub(crate) fn all_ok<T>(results: impl IntoIterator<Item = R<T>>) -> R<Vec<T>> {
    let mut out = Vec::new();
    let mut failed = false;
    for r in results {
        match r {
            Ok(v) => out.push(v),
            Err(_) => failed = true,
        }
    }
    if failed {
        Err(Reported)
    } else {
        Ok(out)
    }
}

/// "a list", "an Int", "an enum literal": the type name with its article.
fn a_type(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// The linearization of an env with these parents (`design`: depth-first,
/// left to right, each ancestor once): the first parent's list, shared, then
/// the layers of each later parent that are not in it yet. Also whether the
/// result is a single chain (every layer inherits all the layers before it).
///
/// O(1) for one parent; O(total layers) for several.
fn linearize(parents: &[Arc<EnvValue>]) -> (Lin, bool) {
    let Some((first, rest)) = parents.split_first() else {
        return (Lin::new(), true);
    };
    if rest.is_empty() {
        return (first.layers.clone(), first.chain);
    }
    // Layers by declaration and span; equal keys are told apart by their
    // arguments (two instances of one template).
    type Key = (ModuleId, Option<usize>, u32, u32);
    let key = |l: &Layer| -> Key { (l.id.module, l.id.decl, l.id.span.start, l.id.span.end) };
    let mut seen: HashMap<Key, Vec<Arc<Layer>>> = HashMap::new();
    for l in first.layers.to_vec() {
        seen.entry(key(&l)).or_default().push(l);
    }
    let mut lin = first.layers.clone();
    for p in rest {
        for l in p.layers.to_vec() {
            let same = seen.entry(key(&l)).or_default();
            if !same.iter().any(|x| x.id == l.id) {
                same.push(l.clone());
                lin = lin.push(l);
            }
        }
    }
    // Every ancestor of a layer comes before it in a linearization, so a
    // layer inherits all the layers before it exactly when it has that many
    // ancestors.
    let chain = lin
        .to_vec()
        .iter()
        .enumerate()
        .all(|(i, l)| l.ancestors.len() == i);
    (lin, chain)
}

/// "Is layer `x` an ancestor of layer `y`?" for the layers of one
/// linearization, by position. A layer with as many ancestors as layers
/// before it inherits them all (every ancestor precedes it), which answers
/// in O(1) for every layer of a chain; other layers' ancestors are looked up
/// once and kept.
struct Ancestry<'a> {
    layers: &'a [Arc<Layer>],
    /// Positions of layers by declaration and span (equal keys: template
    /// instances, told apart by their arguments).
    index: HashMap<(ModuleId, Option<usize>, u32, u32), Vec<usize>>,
    sets: RefCell<HashMap<usize, HashSet<usize>>>,
}

impl<'a> Ancestry<'a> {
    fn new(layers: &'a [Arc<Layer>]) -> Ancestry<'a> {
        let mut index: HashMap<_, Vec<usize>> = HashMap::new();
        for (i, l) in layers.iter().enumerate() {
            index
                .entry((l.id.module, l.id.decl, l.id.span.start, l.id.span.end))
                .or_default()
                .push(i);
        }
        Ancestry {
            layers,
            index,
            sets: RefCell::new(HashMap::new()),
        }
    }

    fn is_anc(&self, x: usize, y: usize) -> bool {
        if x >= y {
            return false;
        }
        let l = &self.layers[y];
        if l.ancestors.len() == y {
            return true;
        }
        let mut sets = self.sets.borrow_mut();
        let set = sets.entry(y).or_insert_with(|| {
            l.ancestors
                .to_vec()
                .iter()
                .filter_map(|a| {
                    self.index
                        .get(&(a.id.module, a.id.decl, a.id.span.start, a.id.span.end))?
                        .iter()
                        .copied()
                        .find(|&i| self.layers[i].id == a.id)
                })
                .collect()
        });
        set.contains(&x)
    }
}

/// A path as one string key: segments joined with `.`, a segment holding a
/// `.` or `"` quoted (`labels."app.kubernetes.io/name"`), so that a key and
/// the paths below it never collide with a map key that contains a dot.
pub(crate) fn path_key(segments: &[String]) -> String {
    let mut out = String::new();
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(&quote_segment(s));
    }
    out
}

/// One path segment as written in a key (quoted when it holds `.` or `"`).
pub(crate) fn quote_segment(s: &str) -> String {
    if s.contains(['.', '"']) {
        format!("{s:?}")
    } else {
        s.to_string()
    }
}

/// Byte positions of the `.` separators of a key (not those inside quotes).
fn key_dots(key: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in key.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(i),
            _ => {}
        }
    }
    out
}

/// The segments of a key (quoted ones unquoted).
fn key_segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in key_dots(key).into_iter().chain([key.len()]) {
        let seg = &key[start..i];
        out.push(
            match seg.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
                None => seg.to_string(),
            },
        );
        start = i + 1;
    }
    out
}

/// The value at a key's path inside a record value.
fn sub_value(v: &Value, path: &str) -> Option<Value> {
    let mut cur = v.clone();
    for seg in key_segments(path) {
        cur = match &cur {
            Value::Record(r) => r.get(&seg)?.clone(),
            _ => return None,
        };
    }
    Some(cur)
}

fn keys_list(r: &Record) -> String {
    let mut ks: Vec<String> = r.keys().map(|k| format!("{k:?}")).take(12).collect();
    if r.len() > 12 {
        ks.push("…".into());
    }
    ks.join(", ")
}
