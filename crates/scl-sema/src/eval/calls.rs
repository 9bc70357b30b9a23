//! Calls of functions and templates: argument binding and recursion checks.

use super::*;

/// Pops the call stack when a call returns.
pub(super) struct CallGuard<'a> {
    pub(super) calls: &'a RefCell<Vec<(ModuleId, usize)>>,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.calls.borrow_mut().pop();
    }
}

impl Evaluator<'_> {
    /// Pushes a call; calling a function or template that is already being
    /// called is recursion (E0306; usually reported by the static pass).
    pub(super) fn enter_call(
        &self,
        at: ModuleId,
        module: ModuleId,
        decl: usize,
        span: Span,
    ) -> R<CallGuard<'_>> {
        if self.calls.borrow().contains(&(module, decl)) {
            let name = self.decl_ast(module, decl).decl.name().name.clone();
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

    pub(super) fn call(
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
                let ad = self.decl_ast(*module, *decl);
                let Decl::Fn(fd) = &ad.decl else {
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
    pub(super) fn bind_args(
        &self,
        cx: Cx,
        (callee_module, callee_decl): (ModuleId, usize),
        callee: &str,
        params: &[ast::ParamSig],
        args: &[ast::Arg],
        span: Span,
        what: &str,
    ) -> R<Vec<(Name, Value)>> {
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
                // The call fails already: a default may read the parameter
                // that failed (`os = … cuda …` after `cuda`), and would only
                // add a cascade inside the callee (`unknown name cuda`).
                (None, Some(_)) if failed => continue,
                (None, Some(d)) => {
                    // A default belongs to the callee: a call of the callee
                    // inside it is recursion.
                    let dcx = Cx {
                        module: callee_module,
                        locals: &bound,
                        selfcx: None,
                    };
                    let eval_default = || {
                        self.enter_call(cx.module, callee_module, callee_decl, span)
                            .and_then(|_guard| self.eval(dcx, d, &pty))
                    };
                    if callee_module == cx.module {
                        eval_default()
                    } else {
                        self.using(
                            cx.module,
                            span,
                            || format!("in this call of `{callee}`"),
                            eval_default,
                        )
                    }
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
            // An env passed by reference is resolved here: the argument is
            // the env (a failed one fails the call, and two instances with
            // the same env argument are one ancestor however it was named).
            match v.and_then(|v| self.resolved(v)) {
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

    pub(super) fn instantiate(
        &self,
        cx: Cx,
        module: ModuleId,
        decl: usize,
        args: &[ast::Arg],
        span: Span,
    ) -> R<Arc<EnvValue>> {
        let ad = self.decl_ast(module, decl);
        let Decl::Env(ed) = &ad.decl else {
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
        if module == cx.module {
            return self.env_value(module, decl, bound, name);
        }
        // Another module's template: its parents are evaluated for this
        // use, and so is its final value when it is used as a value.
        let what = format!("`{name}` is instantiated here");
        let env = self.using(
            cx.module,
            span,
            || what,
            || self.env_value(module, decl, bound, name),
        )?;
        let mut env = Arc::unwrap_or_clone(env);
        env.used_at = Some((cx.module, span));
        Ok(Arc::new(env))
    }
}
