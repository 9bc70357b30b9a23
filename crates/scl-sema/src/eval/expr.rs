//! Expressions: literals, operators, postfix chains (`f(x).y[i] with { … }`).

use super::*;

/// The name of `e with { … }` is `e`'s name with this suffix.
pub(super) const WITH_SUFFIX: &str = " with {…}";

/// The type an operand of `op` is evaluated with when the whole expression
/// is expected to be `ty`: a list type flows into `+`/`-` (so list literals
/// in `xs + [..]` know their element type); nothing else does.
pub(super) fn operand_ty(op: BinaryOp, ty: &Ty) -> Ty {
    match (op, ty) {
        (BinaryOp::Add | BinaryOp::Sub, Ty::List(_)) => ty.clone(),
        _ => Ty::Any,
    }
}

pub(super) fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

impl Evaluator<'_> {
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
                self.coerce_expr(cx.module, e, v, ty)
            }
        });
        self.depth.set(d);
        r
    }

    pub(super) fn eval_inner(&self, cx: Cx, e: &ast::Expr, ty: &Ty) -> R<Value> {
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
                Ty::Enum(def) => Ok(Value::enum_value(
                    Some(def.name.as_str().into()),
                    v.as_str().into(),
                )),
                _ => Ok(Value::enum_value(None, v.as_str().into())),
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
            ExprKind::Comprehension(c) => {
                let ast::Comprehension {
                    var,
                    iter,
                    cond,
                    body,
                } = &**c;
                let et = match ty {
                    Ty::List(t) => (**t).clone(),
                    _ => Ty::Any,
                };
                let xs = self.eval(cx, iter, &Ty::Any)?;
                let items: Vec<Value> = match xs {
                    Value::List(l) => l.to_vec(),
                    Value::Record(r) => fields(&r).map(|(k, _)| Value::Str(k.clone())).collect(),
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
                        used_at: None,
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
                        (UnaryOp::Neg, Value::Memory(b)) => Value::Memory(Bytes::new(-b.get())),
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
    pub(super) fn postfix(
        &self,
        cx: Cx,
        base: &ast::Expr,
        ops: &[ast::PostOp],
        ty: &Ty,
    ) -> R<Value> {
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
                    let env = match self.resolved(b)? {
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
    pub(super) fn with_env(
        &self,
        cx: Cx,
        env: &Arc<EnvValue>,
        block: &ast::Block,
        span: Span,
    ) -> Value {
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
            used_at: None,
        }))
    }

    /// `b[i]`: a map by key, a list by position (negative from the end).
    pub(super) fn index(
        &self,
        m: ModuleId,
        b: &Value,
        i: &Value,
        idx_span: Span,
        span: Span,
    ) -> R<Value> {
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
                    d = match nearest_versions(r, k) {
                        Some(near) => d.with_help(format!(
                            "the nearest that exist: {near}; keys: {}",
                            keys_list(r)
                        )),
                        None => d.with_help(format!("keys: {}", keys_list(r))),
                    };
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

    pub(super) fn anon_layer(
        &self,
        cx: Cx,
        block: &ast::Block,
        ancestors: Lin,
        name: String,
    ) -> Arc<Layer> {
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

    /// Text of a value inside a string (`"${x}"`).
    pub fn interpolate(&self, m: ModuleId, v: &Value, span: Span) -> R<String> {
        Ok(match v {
            Value::Str(s) => s.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Enum(e) => e.variant.to_string(),
            Value::Memory(b) => format_memory(b.get()),
            Value::Cpu(c) => format_cpu(*c),
            Value::Image(i) => i.reference.to_string(),
            Value::File(f) => f.path.to_string(),
            Value::Secret(_) => {
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
    pub(super) fn binary_chain(
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
    pub(super) fn binary_step(
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
                // An env by reference compares as the env (a failed one fails).
                let (x, y) = (self.resolved(x)?, self.resolved(y)?);
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
                    (Memory(p), Memory(q)) => p.get().partial_cmp(&q.get()),
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
            (BinaryOp::Add, Memory(p), Memory(q)) => memory(p.get().checked_add(q.get())),
            (BinaryOp::Sub, Memory(p), Memory(q)) => memory(p.get().checked_sub(q.get())),
            (BinaryOp::Add, Cpu(p), Cpu(q)) => p.checked_add(*q).map(Cpu),
            (BinaryOp::Sub, Cpu(p), Cpu(q)) => p.checked_sub(*q).map(Cpu),
            (BinaryOp::Mul, Memory(p), Int(q)) | (BinaryOp::Mul, Int(q), Memory(p)) => {
                memory(p.get().checked_mul(*q as i128))
            }
            (BinaryOp::Mul, Cpu(p), Int(q)) | (BinaryOp::Mul, Int(q), Cpu(p)) => {
                p.checked_mul(*q).map(Cpu)
            }
            (BinaryOp::Mul, Memory(p), Float(q)) | (BinaryOp::Mul, Float(q), Memory(p)) => {
                let r = p.get() as f64 * q;
                if r.fract() != 0.0 {
                    return self.err(
                        cx.module,
                        "E0207",
                        span,
                        format!(
                            "{} × {q} is not a whole number of bytes",
                            format_memory(p.get())
                        ),
                    );
                }
                memory(Some(r as i128))
            }
            (BinaryOp::Mul, Cpu(p), Float(q)) | (BinaryOp::Mul, Float(q), Cpu(p)) => {
                Some(Cpu((*p as f64 * q).round() as i64))
            }
            (BinaryOp::Div, Memory(p), Int(q)) => {
                let p = p.get();
                if p.checked_rem(*q as i128).is_none_or(|r| r != 0) {
                    return self.err(
                        cx.module,
                        "E0207",
                        span,
                        format!("{} / {q} is not a whole number of bytes", format_memory(p)),
                    );
                }
                memory(Some(p / *q as i128))
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
}

/// For a missing key that is a dotted version, the keys nearest to it,
/// compared numerically: the versions it is a prefix of when there are any
/// (`"2.5"` → `"2.5.0", "2.5.1"`: the releases of that series, at most six,
/// the newest), else the nearest version below and above it (`"12.7"` →
/// `"12.6", "12.8"`); `None` when the key or no key is a version.
fn nearest_versions(r: &Record, key: &str) -> Option<String> {
    use scl_domain::version::Dotted;
    const SERIES: usize = 6;
    let want = Dotted::parse(key)?;
    let mut versions: Vec<(Dotted, &str)> = r
        .keys()
        .filter_map(|k| Some((Dotted::parse(k)?, &**k)))
        .collect();
    versions.sort();
    let series: Vec<&str> = versions
        .iter()
        .filter(|(v, _)| v.parts().starts_with(want.parts()))
        .map(|(_, k)| *k)
        .collect();
    let near: Vec<&str> = if series.is_empty() {
        let below = versions.iter().rev().find(|(v, _)| *v < want);
        let above = versions.iter().find(|(v, _)| *v > want);
        [below, above]
            .into_iter()
            .flatten()
            .map(|(_, k)| *k)
            .collect()
    } else {
        series[series.len().saturating_sub(SERIES)..].to_vec()
    };
    (!near.is_empty()).then(|| {
        near.iter()
            .map(|k| format!("{k:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// A memory value of `n` bytes, if the arithmetic did not overflow.
fn memory(n: Option<i128>) -> Option<Value> {
    n.map(|n| Value::Memory(Bytes::new(n)))
}
