//! Typing expressions: [`Checker::infer`] gives an expression's type,
//! [`Checker::check`] checks it against an expected type (which flows into
//! list, record, `if` and enum literals, as evaluation's expected type does).

use super::messages::{a_type, mismatch, quoted, Source};
use super::types::{fits, join, ModuleTypes, Type};
use super::Context;
use crate::ty::{EnumDef, Ty};
use rustc_hash::FxHashMap as HashMap;
use scl_diag::{did_you_mean, Diagnostic, Span, Suggestions};
use scl_syntax::ast::Name;
use scl_syntax::ast::*;
use std::sync::Arc;

/// The fields of a plain record type.
type Fields = Arc<std::collections::BTreeMap<String, Type>>;

/// The state of one module's check.
pub(super) struct Checker<'a> {
    pub cx: &'a Context<'a>,
    /// The module's declarations, in order.
    pub module: &'a [&'a Decl],
    /// The first declaration of each name.
    pub index: HashMap<&'a str, usize>,
    /// Each declaration's type, once known (`None`: not yet, or on a cycle).
    pub decl_types: Vec<Option<Type>>,
    /// Parameters and comprehension variables in scope, innermost last.
    pub locals: Vec<(Name, Type)>,
    /// Inside an env body, where `self` is the env being defined.
    pub self_ok: bool,
    pub out: Vec<Diagnostic>,
    pub table: Vec<(Span, Type)>,
    pub suggestions: Suggestions,
    /// A record read as a map, by its fields' address: computed once per
    /// record type, however often it is indexed (the record is kept, so
    /// the address is not reused).
    as_map: HashMap<usize, (Fields, Option<Type>)>,
}

impl<'a> Checker<'a> {
    pub fn new(module: &'a [&'a Decl], cx: &'a Context<'a>) -> Self {
        let mut index = HashMap::default();
        for (i, d) in module.iter().enumerate() {
            index.entry(d.name().name.as_str()).or_insert(i);
        }
        Checker {
            cx,
            module,
            index,
            decl_types: vec![None; module.len()],
            locals: Vec::new(),
            self_ok: false,
            out: Vec::new(),
            table: Vec::new(),
            suggestions: Suggestions::default(),
            as_map: HashMap::default(),
        }
    }

    /// The module's text, for quoting what a span covers.
    pub fn text(&self) -> Source<'a> {
        Source {
            text: self.cx.text,
            absolute: self.cx.absolute,
        }
    }

    pub fn error(&mut self, code: &'static str, span: Span, msg: impl Into<String>) {
        self.out.push(Diagnostic::error(code, span, msg));
    }

    fn record(&mut self, span: Span, t: &Type) {
        self.table.push((span, t.clone()));
    }

    // ----- types written in signatures --------------------------------------

    /// The type a type expression names; unknown names are `Error` (E0206
    /// comes from the static pass's name check).
    pub fn resolve(&mut self, t: &TypeExpr) -> Type {
        match &t.kind {
            TypeExprKind::List(e) => Type::list(self.resolve(e)),
            TypeExprKind::Map(e) => Type::Map(Arc::new(self.resolve(e))),
            TypeExprKind::Optional(e) => Type::Optional(Arc::new(self.resolve(e))),
            TypeExprKind::Error => Type::Error,
            TypeExprKind::Named(segs) => {
                if segs.len() == 1 {
                    if let Some(ty) = Ty::builtin(&segs[0].name) {
                        return Type::from_ty(&ty);
                    }
                    return match self.index.get(segs[0].name.as_str()) {
                        Some(&i) => match self.module[i] {
                            Decl::Enum(e) => Type::Enum(enum_def(e)),
                            _ => Type::Error,
                        },
                        None => Type::Error,
                    };
                }
                let Some(Type::Module(Some(m))) = self.global(&segs[0].name) else {
                    return Type::Error;
                };
                match (segs.len(), m.decls.get(&segs[1].name)) {
                    (2, Some(Type::EnumType(d))) => Type::Enum(d.clone()),
                    _ => Type::Error,
                }
            }
        }
    }

    /// The type of top-level declaration `name` (`None`: no such name).
    pub fn global(&mut self, name: &str) -> Option<Type> {
        let &i = self.index.get(name)?;
        Some(self.decl_types[i].clone().unwrap_or(Type::Error))
    }

    // ----- expressions ---------------------------------------------------------

    /// Checks `e` against `expected` and gives its type.
    pub fn check(&mut self, e: &Expr, expected: &Type) -> Type {
        if expected.is_unknown() {
            return self.infer(e);
        }
        let want = expected.strip_optional();
        let t = match &e.kind {
            ExprKind::List(items) => match want {
                Type::List(et) => {
                    let et = (**et).clone();
                    for it in items {
                        self.check(it, &et);
                    }
                    let t = Type::list(et);
                    self.record(e.span, &t);
                    return t;
                }
                _ => self.infer(e),
            },
            ExprKind::Comprehension { .. } => match want {
                Type::List(et) => {
                    let et = (**et).clone();
                    let t = self.comprehension(e, Some(&et));
                    self.record(e.span, &t);
                    return t;
                }
                _ => self.infer(e),
            },
            ExprKind::Record(block) => {
                if let Some(t) = self.record_against(block, want) {
                    self.record(e.span, &t);
                    return t;
                }
                self.infer(e)
            }
            ExprKind::If(c, a, b) => {
                self.check(c, &Type::Bool);
                let ta = self.check(a, expected);
                let tb = self.check(b, expected);
                let t = join(&ta, &tb).unwrap_or_else(|| expected.clone());
                self.record(e.span, &t);
                return t;
            }
            ExprKind::EnumLit(v) => match want {
                Type::Enum(def) => {
                    let t = Type::Enum(def.clone());
                    if !def.variants.iter().any(|x| x == v) {
                        self.unknown_variant(e.span, v, def);
                    }
                    self.record(e.span, &t);
                    return t;
                }
                _ => self.infer(e),
            },
            ExprKind::Binary { first, rest }
                if matches!(want, Type::List(_))
                    && rest.iter().all(|(op, _)| *op == BinaryOp::Add) =>
            {
                // `xs + [..]`: the list type flows into every operand.
                self.check(first, expected);
                for (_, x) in rest {
                    self.check(x, expected);
                }
                let t = want.clone();
                self.record(e.span, &t);
                return t;
            }
            _ => self.infer(e),
        };
        if !fits(&t, expected) {
            match (t.strip_optional(), want) {
                (Type::Record(fs), Type::Schema(rt)) => {
                    let fs = fs.clone();
                    self.record_mismatch(e.span, &fs, *rt);
                }
                _ => {
                    let d = mismatch(self.text(), e.span, &t, expected);
                    self.out.push(d);
                }
            }
        }
        t
    }

    /// A plain record (a `let`, a parameter) where schema record `rt` is
    /// expected: what does not fit, field by field, with evaluation's codes.
    fn record_mismatch(
        &mut self,
        span: Span,
        fs: &std::collections::BTreeMap<String, Type>,
        rt: crate::ty::RecordTy,
    ) {
        let names = || rt.fields().iter().map(|(n, _, _)| *n);
        for (k, v) in fs {
            match rt.field_ref(k) {
                Some(ft) => {
                    let ft = Type::from_ty(ft);
                    if !fits(v, &ft) {
                        let msg = format!(
                            "field `{k}` of {}: expected {ft}, found {v}{}",
                            rt.name(),
                            quoted(self.text(), span)
                        );
                        self.error("E0201", span, msg);
                    }
                }
                None => {
                    let mut d = Diagnostic::error(
                        "E0202",
                        span,
                        format!("unknown field `{k}` in {}", rt.name()),
                    );
                    d = match did_you_mean(k, names()) {
                        Some(s) => d.with_help(format!("did you mean `{s}`?")),
                        None => d.with_help(format!(
                            "fields: {}",
                            names().collect::<Vec<_>>().join(", ")
                        )),
                    };
                    self.out.push(d);
                }
            }
        }
        for &(n, _, req) in rt.fields() {
            if req && !fs.contains_key(n) {
                self.error(
                    "E0209",
                    span,
                    format!("{} needs the field `{n}`", rt.name()),
                );
            }
        }
    }

    pub fn unknown_variant(&mut self, span: Span, v: &str, def: &EnumDef) {
        self.out
            .push(crate::wording::unknown_variant_diag(span, v, def));
    }

    /// The type of `e`.
    pub fn infer(&mut self, e: &Expr) -> Type {
        let t = self.infer_inner(e);
        self.record(e.span, &t);
        t
    }

    fn infer_inner(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Int(_) => Type::Int,
            ExprKind::Float(_) => Type::Float,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Quantity { suffix, .. } => match suffix {
                QuantitySuffix::Milli => Type::Cpu,
                _ => Type::Memory,
            },
            ExprKind::EnumLit(v) => Type::EnumLit(v.as_str().into()),
            ExprKind::Error => Type::Error,
            ExprKind::Str(parts) => {
                for p in parts {
                    if let StrPart::Interp(x) = p {
                        let t = self.infer(x);
                        self.interpolated(x.span, &t);
                    }
                }
                Type::string()
            }
            ExprKind::Name(n) => {
                if let Some((_, t)) = self.locals.iter().rev().find(|(l, _)| l == n) {
                    return t.clone();
                }
                if let Some(t) = self.global(n) {
                    return t;
                }
                match crate::builtins::Builtin::from_name(n) {
                    Some(b) => Type::Builtin(b),
                    None => Type::Error, // E0101, from the name check
                }
            }
            ExprKind::SelfRef => {
                if self.self_ok {
                    Type::Env
                } else {
                    self.error("E0211", e.span, "`self` is only valid inside an env");
                    Type::Error
                }
            }
            ExprKind::List(items) => {
                let mut t = Type::Nothing;
                let mut first: Option<(Span, Type)> = None;
                for it in items {
                    let ti = self.infer(it);
                    match join(&t, &ti) {
                        Some(j) => t = j,
                        None => {
                            let (fs, ft) = first.clone().unwrap_or((it.span, Type::Error));
                            let d = Diagnostic::error(
                                "E0337",
                                it.span,
                                format!(
                                    "the elements of a list have one type: this one is {ti}{}, the ones before are {ft}",
                                    quoted(self.text(), it.span)
                                ),
                            )
                            .with_label(Arc::from(""), fs, format!("this element is {ft}"))
                            .with_help("make every element the same type (a list of strings: interpolate numbers, `\"${n}\"`)");
                            self.out.push(d);
                            t = Type::Error;
                            break;
                        }
                    }
                    if first.is_none() && !ti.is_unknown() {
                        first = Some((it.span, ti));
                    }
                }
                Type::list(t)
            }
            ExprKind::Comprehension { .. } => self.comprehension(e, None),
            ExprKind::Record(block) => self.record_literal(block),
            ExprKind::Postfix { base, ops } => self.postfix(base, ops),
            ExprKind::Unary { ops, operand } => {
                let mut t = self.infer(operand);
                for (op, op_span) in ops.iter().rev() {
                    let span = op_span.to(operand.span);
                    t = match (op, t.strip_optional()) {
                        (_, Type::Error) => Type::Error,
                        (UnaryOp::Not, Type::Bool) => Type::Bool,
                        (
                            UnaryOp::Neg,
                            x @ (Type::Int | Type::Float | Type::Memory | Type::Cpu),
                        ) => x.clone(),
                        (op, x) => {
                            let msg = format!(
                                "`{}` does not apply to {x}{}",
                                if *op == UnaryOp::Not { "!" } else { "-" },
                                quoted(self.text(), operand.span)
                            );
                            self.error("E0211", span, msg);
                            Type::Error
                        }
                    };
                }
                t
            }
            ExprKind::Binary { first, rest } => self.binary(first, rest),
            ExprKind::If(c, a, b) => {
                self.check(c, &Type::Bool);
                let ta = self.infer(a);
                let tb = self.infer(b);
                match join(&ta, &tb) {
                    Some(t) => t,
                    None => {
                        let d = Diagnostic::error(
                            "E0337",
                            b.span,
                            format!(
                                "the branches of an `if` have one type: `then` gives {ta}{}, `else` gives {tb}{}",
                                quoted(self.text(), a.span),
                                quoted(self.text(), b.span)
                            ),
                        )
                        .with_label(Arc::from(""), a.span, format!("this is {ta}"))
                        .with_help("make both branches the same type");
                        self.out.push(d);
                        Type::Error
                    }
                }
            }
        }
    }

    /// An interpolated value `"${x}"` of type `t`.
    pub fn interpolated(&mut self, span: Span, t: &Type) {
        if t.interpolable() {
            return;
        }
        let d = if matches!(t.strip_optional(), Type::Secret) {
            Diagnostic::error("E0210", span, "a secret cannot be interpolated into a string")
                .with_help("interpolating a secret would write it into an artifact as plain text; set it as a whole value of `vars` instead")
        } else {
            Diagnostic::error(
                "E0210",
                span,
                format!("{} cannot be interpolated into a string", a_type(t)),
            )
            .with_help("interpolate a string, number, boolean, enum or quantity; for lists use `join(list, \",\")`")
        };
        self.out.push(d);
    }

    /// `[for x in XS if C: E]`, with `E` checked against `elem` when given.
    fn comprehension(&mut self, e: &Expr, elem: Option<&Type>) -> Type {
        let ExprKind::Comprehension(c) = &e.kind else {
            return Type::Error;
        };
        let Comprehension {
            var,
            iter,
            cond,
            body,
        } = &**c;
        let it = self.infer(iter);
        let vt = match it.strip_optional() {
            Type::List(t) => (**t).clone(),
            Type::Map(_) | Type::Record(_) | Type::Schema(_) => Type::string(),
            Type::Error => Type::Error,
            other => {
                let msg = format!(
                    "`for` needs a list, found {other}{}",
                    quoted(self.text(), iter.span)
                );
                self.error("E0201", iter.span, msg);
                Type::Error
            }
        };
        self.locals.push((var.name.clone(), vt.clone()));
        self.record(var.span, &vt);
        if let Some(c) = cond {
            self.check(c, &Type::Bool);
        }
        let bt = match elem {
            Some(t) => {
                self.check(body, t);
                t.clone()
            }
            None => self.infer(body),
        };
        self.locals.pop();
        Type::list(bt)
    }

    /// A chain `base op op …`.
    fn postfix(&mut self, base: &Expr, ops: &[PostOp]) -> Type {
        let mut t = match (ops.first().map(|o| &o.kind), &base.kind) {
            // A record literal before `with` is an anonymous env.
            (Some(PostOpKind::With(_)), ExprKind::Record(_)) => self.check(base, &Type::Env),
            _ => self.infer(base),
        };
        let mut span = base.span;
        for op in ops {
            let whole = span.to(op.span);
            t = match &op.kind {
                PostOpKind::Field(name) => self.member(&t, name),
                PostOpKind::Index(idx) => self.index(&t, idx, whole),
                PostOpKind::Call(args) => self.call(&t, args, whole, span),
                PostOpKind::With(block) => {
                    match t.strip_optional() {
                        Type::Env | Type::Error => {}
                        other => {
                            let msg = format!(
                                "`with` needs an env, found {other}{}",
                                quoted(self.text(), span)
                            );
                            self.error("E0313", span, msg);
                        }
                    }
                    self.env_body(block);
                    Type::Env
                }
            };
            self.record(whole, &t);
            span = whole;
        }
        t
    }

    /// `t.name`.
    fn member(&mut self, t: &Type, name: &Ident) -> Type {
        let n = name.name.as_str();
        match t.strip_optional() {
            Type::Error | Type::Nothing => Type::Error,
            Type::Module(None) => Type::Error,
            Type::Module(Some(m)) => self.module_member(m, name),
            Type::Schema(rt) => match rt.field_ref(n) {
                Some(ft) => Type::from_ty(ft),
                None => {
                    let fields: Vec<&str> = rt.fields().iter().map(|(f, _, _)| *f).collect();
                    self.no_field(name, fields.iter().copied());
                    Type::Error
                }
            },
            Type::Env => self.member(&Type::Schema(crate::ty::RecordTy::Env), name),
            Type::Record(fs) => match fs.get(n) {
                Some(ft) => ft.clone(),
                None => {
                    let fs = fs.clone();
                    self.no_field(name, fs.keys().map(|k| k.as_str()));
                    Type::Error
                }
            },
            // A map is a record at run time: `labels.app` reads a key.
            Type::Map(v) => (**v).clone(),
            Type::Image => match n {
                "ref" | "digest" => Type::string(),
                _ => {
                    self.error(
                        "E0311",
                        name.span,
                        format!("an Image has the fields `ref` and `digest`, not `{n}`"),
                    );
                    Type::Error
                }
            },
            Type::Asset => match n {
                "kind" | "repo" | "revision" | "url" | "sha256" => Type::string(),
                "to" => Type::Str(Ty::Path),
                "files" => Type::list(Type::string()),
                _ => {
                    self.no_field(
                        name,
                        ["kind", "repo", "files", "revision", "url", "sha256", "to"].into_iter(),
                    );
                    Type::Error
                }
            },
            Type::EnumType(def) => {
                if def.variants.iter().any(|v| v == n) {
                    Type::Enum(def.clone())
                } else {
                    self.error(
                        "E0204",
                        name.span,
                        format!("enum `{}` has no variant `{n}`", def.name),
                    );
                    Type::Error
                }
            }
            other => {
                let msg = format!("{} has no fields (reading `.{n}`)", a_type(other));
                self.error("E0211", name.span, msg);
                Type::Error
            }
        }
    }

    fn module_member(&mut self, m: &Arc<ModuleTypes>, name: &Ident) -> Type {
        if let Some(t) = m.decls.get(&name.name) {
            return t.clone();
        }
        let mut d = Diagnostic::error(
            "E0106",
            name.span,
            format!("module `{}` has no declaration `{}`", m.path, name.name),
        );
        if let Some(s) = self
            .suggestions
            .suggest(&name.name, || m.decls.keys().map(|k| k.as_str()))
        {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        self.out.push(d);
        Type::Error
    }

    fn no_field<'n>(&mut self, name: &Ident, fields: impl Iterator<Item = &'n str> + Clone) {
        let mut d = Diagnostic::error(
            "E0311",
            name.span,
            format!("the record has no field `{}`", name.name),
        );
        d = match did_you_mean(&name.name, fields.clone()) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!("fields: {}", fields.collect::<Vec<_>>().join(", "))),
        };
        self.out.push(d);
    }

    /// `t[idx]`; `whole` is the span of the indexing.
    fn index(&mut self, t: &Type, idx: &Expr, whole: Span) -> Type {
        match t.strip_optional() {
            Type::Error | Type::Nothing => {
                self.infer(idx);
                Type::Error
            }
            Type::List(et) => {
                self.check(idx, &Type::Int);
                (**et).clone()
            }
            Type::Map(vt) => {
                self.check(idx, &Type::string());
                (**vt).clone()
            }
            Type::Record(fs) => {
                if let Some(k) = literal_key(idx) {
                    self.record(idx.span, &Type::string());
                    return match fs.get(k) {
                        Some(ft) => ft.clone(),
                        None => {
                            let keys: Vec<String> =
                                fs.keys().map(|k| format!("{k:?}")).take(50).collect();
                            let d = Diagnostic::error(
                                "E0311",
                                idx.span,
                                format!("no key {k:?} in this map"),
                            )
                            .with_primary_label("this key")
                            .with_help(format!("keys: {}", keys.join(", ")));
                            self.out.push(d);
                            Type::Error
                        }
                    };
                }
                self.check(idx, &Type::string());
                let key = Arc::as_ptr(fs) as usize;
                let as_map = match self.as_map.get(&key) {
                    Some((_, t)) => t.clone(),
                    None => {
                        let t = Type::record_as_map(fs);
                        self.as_map.insert(key, (fs.clone(), t.clone()));
                        t
                    }
                };
                match as_map {
                    Some(v) => v,
                    None => {
                        let d = Diagnostic::error(
                            "E0337",
                            idx.span,
                            format!(
                                "a record indexed by a computed key{} is read as a map, whose values have one type, but its fields have different types ({t})",
                                quoted(self.text(), idx.span)
                            ),
                        )
                        .with_help("give all its fields one type, or read one field by name");
                        self.out.push(d);
                        Type::Error
                    }
                }
            }
            Type::Schema(rt) => {
                let Some(k) = literal_key(idx) else {
                    let it = self.infer(idx);
                    let msg = format!(
                        "cannot index {} with a computed {it}: name the field",
                        a_type(t)
                    );
                    self.error("E0211", whole, msg);
                    return Type::Error;
                };
                self.record(idx.span, &Type::string());
                match rt.field_ref(k) {
                    Some(ft) => Type::from_ty(ft),
                    None => {
                        let d = Diagnostic::error(
                            "E0311",
                            idx.span,
                            format!("no key {k:?} in this map"),
                        )
                        .with_primary_label("this key");
                        self.out.push(d);
                        Type::Error
                    }
                }
            }
            other => {
                let it = self.infer(idx);
                let msg = format!("cannot index {} with {}", a_type(other), a_type(&it));
                self.error("E0211", whole, msg);
                Type::Error
            }
        }
    }

    /// A chain of one precedence level, folded left to right.
    fn binary(&mut self, first: &Expr, rest: &[(BinaryOp, Expr)]) -> Type {
        let mut acc = self.infer(first);
        let mut acc_span = first.span;
        for (op, rhs) in rest {
            let span = acc_span.to(rhs.span);
            let r = self.infer(rhs);
            acc = self.binary_step(*op, &acc, acc_span, &r, rhs.span, span);
            self.record(span, &acc);
            acc_span = span;
        }
        acc
    }

    fn binary_step(
        &mut self,
        op: BinaryOp,
        x: &Type,
        x_span: Span,
        y: &Type,
        y_span: Span,
        span: Span,
    ) -> Type {
        use Type::*;
        let (a, b) = (x.strip_optional(), y.strip_optional());
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            for (t, s) in [(a, x_span), (b, y_span)] {
                if !fits(t, &Bool) {
                    let msg = format!(
                        "`{}` needs Bool operands, found {t}{}",
                        op.as_str(),
                        quoted(self.text(), s)
                    );
                    self.error("E0201", s, msg);
                }
            }
            return Bool;
        }
        if a.is_unknown() || b.is_unknown() {
            return match op {
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => Bool,
                // The known side's type (a number, a quantity, a list).
                _ if a.is_unknown() && !b.is_unknown() && !matches!(b, Int) => b.clone(),
                _ if !a.is_unknown() && !matches!(a, Int) => a.clone(),
                _ => Error,
            };
        }
        let r = match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                if join(a, b).is_some() {
                    Some(Bool)
                } else {
                    None
                }
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => match (a, b) {
                (Int | Float, Int | Float) | (Memory, Memory) | (Cpu, Cpu) | (Str(_), Str(_)) => {
                    Some(Bool)
                }
                _ => None,
            },
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => match (op, a, b) {
                (_, Int, Int) => Some(Int),
                (_, Int | Float, Int | Float) => Some(Float),
                (BinaryOp::Add, Str(_), Str(_)) => Some(Type::string()),
                (BinaryOp::Add, List(p), List(q)) => match join(p, q) {
                    Some(t) => Some(Type::list(t)),
                    None => {
                        let d = Diagnostic::error(
                            "E0337",
                            span,
                            format!(
                                "`+` joins two lists of one element type; found {a} and {b}{}",
                                quoted(self.text(), span)
                            ),
                        )
                        .with_help("make both lists hold the same type");
                        self.out.push(d);
                        return Error;
                    }
                },
                (BinaryOp::Add | BinaryOp::Sub, Memory, Memory) => Some(Memory),
                (BinaryOp::Add | BinaryOp::Sub, Cpu, Cpu) => Some(Cpu),
                (BinaryOp::Mul, Memory, Int | Float) | (BinaryOp::Mul, Int | Float, Memory) => {
                    Some(Memory)
                }
                (BinaryOp::Mul, Cpu, Int | Float) | (BinaryOp::Mul, Int | Float, Cpu) => Some(Cpu),
                (BinaryOp::Div, Memory, Int) => Some(Memory),
                (BinaryOp::Div, Cpu, Int) => Some(Cpu),
                _ => None,
            },
            BinaryOp::And | BinaryOp::Or => Some(Bool),
        };
        if let Some(t) = r {
            return t;
        }
        let code = if matches!((a, b), (Memory, Int | Float) | (Int | Float, Memory))
            && matches!(op, BinaryOp::Add | BinaryOp::Sub)
        {
            "E0207"
        } else {
            "E0211"
        };
        let mut d = Diagnostic::error(
            code,
            span,
            format!(
                "`{}` does not apply to {a} and {b}{}",
                op.as_str(),
                quoted(self.text(), span)
            ),
        );
        d = match (op, a, b) {
            (BinaryOp::Add, Str(_), _) | (BinaryOp::Add, _, Str(_)) => {
                d.with_help("to join text and a value, interpolate the value: `\"text ${value}\"`")
            }
            (BinaryOp::Eq | BinaryOp::Ne, _, _) => {
                d.with_help("values of different types are never equal; compare values of one type")
            }
            _ if code == "E0207" => d.with_help("give the number a unit (`512Mi`)"),
            _ => d,
        };
        self.out.push(d);
        Error
    }
}

/// `"key"` written as a string without interpolation.
pub(super) fn literal_key(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Str(parts) => match parts.as_slice() {
            [StrPart::Lit(s)] => Some(s.as_str()),
            [] => Some(""),
            _ => None,
        },
        _ => None,
    }
}

/// The enum type an `enum` declaration declares.
pub(super) fn enum_def(e: &EnumDecl) -> Arc<EnumDef> {
    Arc::new(EnumDef {
        name: e.name.name.to_string(),
        variants: e.variants.iter().map(|v| v.name.to_string()).collect(),
    })
}
