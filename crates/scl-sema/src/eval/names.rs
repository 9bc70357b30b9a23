//! Names (locals, declarations, other modules, builtins), members (`a.b`)
//! and type expressions.

use super::*;

impl Evaluator<'_> {
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
                        self.items.get(&segs[0].name).is_some()
                    } else {
                        self.host.items(m).get(&segs[0].name).is_some()
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

    /// The env a [`Value::EnvRef`] names, from its module (the query that
    /// asks depends on it from here on); `Reported` when it failed there
    /// (its errors are reported in its own module).
    pub(crate) fn resolve_env(&self, r: &EnvRef) -> R<Arc<EnvValue>> {
        match self.host.own_decl_value(r.module, r.decl, r.clean) {
            // An env whose services by reference failed (in its module's
            // values) has failed, as it would have held by value.
            Some(Value::Env(e))
                if e.final_env.as_ref().is_some_and(|f| f.is_pending())
                    && self.completed_env(r).is_none() =>
            {
                Err(Reported)
            }
            Some(Value::Env(e)) => Ok(e),
            _ => Err(Reported),
        }
    }

    /// The complete final value of the env `r` names, from its module's
    /// values (`Host::completed_env`); `None` when it failed.
    pub(crate) fn completed_env(&self, r: &EnvRef) -> Option<Arc<FinalEnv>> {
        self.host.completed_env(r.module, &r.name)
    }

    /// `v` with an env reference resolved ([`Evaluator::resolve_env`]);
    /// any other value as it is.
    pub(crate) fn resolved(&self, v: Value) -> R<Value> {
        match v {
            Value::EnvRef(r) => self.resolve_env(&r).map(Value::Env),
            v => Ok(v),
        }
    }

    pub fn lookup(&self, cx: Cx, name: &str, span: Span) -> R<Value> {
        if let Some((_, v)) = cx.locals.iter().rev().find(|(n, _)| n == name) {
            return Ok(v.clone());
        }
        if cx.module == self.root {
            if let Some(i) = self.items.get(name) {
                self.charge_read(i, span)?;
                return self.decl_value(i);
            }
        } else if let Some(i) = self.host.items(cx.module).get(name) {
            return self.host.decl_value(cx.module, i).ok_or(Reported);
        }
        if let Some(b) = builtins::lookup(name) {
            return Ok(Value::Builtin(b));
        }
        let items = self.host.items(cx.module);
        let mut d = Diagnostic::error("E0101", span, format!("unknown name `{name}`"));
        let names = || {
            let mut names: Vec<&str> = cx.locals.iter().map(|(n, _)| n.as_str()).collect();
            names.extend(items.names());
            names.extend(builtins::NAMES.iter().copied());
            names
        };
        if let Some(s) = self.suggest(name, names) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(self.report(cx.module, d))
    }

    /// `value.name` where value is a module, record or env.
    pub(super) fn member(&self, m: ModuleId, v: &Value, name: &str, span: Span) -> R<Value> {
        match v {
            Value::Pending => Ok(Value::Pending),
            Value::Module(id) => {
                let items = self.host.items(*id);
                if let Some(i) = items.get(name) {
                    // A plain env is taken by reference: what holds it does
                    // not depend on its content until it reads it.
                    if items.items[i].kind == crate::DeclKind::Env {
                        return Ok(Value::EnvRef(Arc::new(EnvRef {
                            module: *id,
                            decl: i,
                            name: Arc::from(name),
                            clean: items.clean(i),
                        })));
                    }
                    return self.host.decl_value(*id, i).ok_or(Reported);
                }
                let mut d = Diagnostic::error(
                    "E0106",
                    span,
                    format!(
                        "module `{}` has no declaration `{name}`",
                        self.host.display_path(*id)
                    ),
                );
                if let Some(s) = self.suggest(name, || items.names().collect()) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                Err(self.report(m, d))
            }
            Value::Record(r) => match r.get_str(name) {
                Some(v) => Ok(v.clone()),
                None => {
                    let mut d = Diagnostic::error(
                        "E0311",
                        span,
                        format!("the record has no field `{name}`"),
                    );
                    d = match self.suggest(name, || r.keys().map(|k| &**k).collect()) {
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
            Value::EnvRef(r) => {
                let e = self.resolve_env(r)?;
                self.member(m, &Value::Env(e), name, span)
            }
            Value::Image(i) => match name {
                "ref" => Ok(Value::Str(i.reference.clone())),
                "digest" => Ok(i.digest.clone().map(Value::Str).unwrap_or(Value::str(""))),
                _ => self.err(
                    m,
                    "E0311",
                    span,
                    format!("an Image has the fields `ref` and `digest`, not `{name}`"),
                ),
            },
            Value::EnumType(def) => {
                if def.variants.iter().any(|v| v == name) {
                    Ok(Value::enum_value(
                        Some(def.name.as_str().into()),
                        name.into(),
                    ))
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
}
