//! Typing calls: of functions and templates (against their declared
//! parameter types) and of builtins (against their row of
//! [`crate::builtins::TABLE`]). The argument errors have evaluation's codes,
//! spans and wording, so a problem both find is reported once.

use super::infer::Checker;
use super::messages::{a_type, quoted};
use super::types::{fits, Signature, Type};
use crate::builtins::{Builtin, ParamTy, RetTy};
use crate::ty::Ty;
use scl_diag::{did_you_mean, Diagnostic, Span};
use scl_syntax::ast::Arg;
use std::sync::Arc;

impl Checker<'_> {
    /// `f(args)`: `span` is the whole call, `callee` the span of `f`.
    pub fn call(&mut self, f: &Type, args: &[Arg], span: Span, callee: Span) -> Type {
        match f.strip_optional() {
            Type::Fn(sig) => {
                self.bind(sig, args, span, "function");
                sig.ret.clone()
            }
            Type::Template(sig) => {
                self.bind(sig, args, span, "template");
                Type::Env
            }
            Type::Builtin(b) => self.builtin(*b, args, span),
            Type::Error | Type::Nothing => {
                for a in args {
                    self.infer(&a.value);
                }
                Type::Error
            }
            other => {
                for a in args {
                    self.infer(&a.value);
                }
                let msg = format!(
                    "{} cannot be called{}",
                    a_type(other),
                    quoted(self.text(), callee)
                );
                self.error("E0211", callee, msg);
                Type::Error
            }
        }
    }

    /// Binds arguments to a function's or template's parameters.
    fn bind(&mut self, sig: &Arc<Signature>, args: &[Arg], span: Span, what: &str) {
        let callee = sig.name.as_str();
        let params = &sig.params;
        let mut given: Vec<bool> = vec![false; params.len()];
        let mut failed = false;
        let mut pos = 0;
        for a in args {
            let slot = match &a.name {
                None => {
                    let i = pos;
                    pos += 1;
                    if i >= params.len() {
                        self.error(
                            "E0308",
                            a.span,
                            format!(
                                "{what} `{callee}` takes {} argument(s), this is one too many",
                                params.len()
                            ),
                        );
                        failed = true;
                        None
                    } else {
                        Some(i)
                    }
                }
                Some(n) => match params.iter().position(|p| p.name == n.name) {
                    Some(i) if !given[i] => Some(i),
                    Some(_) => {
                        self.error(
                            "E0305",
                            n.span,
                            format!("argument `{}` is given twice", n.name),
                        );
                        failed = true;
                        None
                    }
                    None => {
                        let mut d = Diagnostic::error(
                            "E0308",
                            n.span,
                            format!("{what} `{callee}` has no argument `{}`", n.name),
                        );
                        d = match did_you_mean(&n.name, params.iter().map(|p| p.name.as_str())) {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_help(format!(
                                "arguments: {}",
                                params
                                    .iter()
                                    .map(|p| p.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        };
                        self.out.push(d);
                        failed = true;
                        None
                    }
                },
            };
            match slot {
                Some(i) => {
                    given[i] = true;
                    let t = params[i].ty.clone();
                    self.check(&a.value, &t);
                }
                None => {
                    self.infer(&a.value);
                }
            }
        }
        if failed {
            return;
        }
        for (p, g) in params.iter().zip(&given) {
            if !g && !p.has_default {
                self.out.push(
                    Diagnostic::error(
                        "E0309",
                        span,
                        format!("{what} `{callee}` needs the argument `{}`", p.name),
                    )
                    .with_help(format!("pass it: `{} = …`", p.name)),
                );
                // Evaluation stops at the first missing one too.
                return;
            }
        }
    }

    /// A call of a builtin, against its row of the table.
    fn builtin(&mut self, b: Builtin, args: &[Arg], span: Span) -> Type {
        let def = b.def();
        let name = def.name;
        let mut vals: Vec<Option<(Type, Span)>> = vec![None; def.params.len()];
        let mut pos = 0;
        let mut failed = false;
        for a in args {
            let slot = match &a.name {
                None => {
                    pos += 1;
                    if pos > def.params.len() {
                        self.error(
                            "E0308",
                            a.span,
                            format!("`{name}` takes at most {} argument(s)", def.params.len()),
                        );
                        None
                    } else {
                        Some(pos - 1)
                    }
                }
                Some(n) => match def.params.iter().position(|p| p.name == n.name) {
                    Some(i) => Some(i),
                    None => {
                        let mut d = Diagnostic::error(
                            "E0308",
                            n.span,
                            format!("`{name}` has no argument `{}`", n.name),
                        );
                        d = match did_you_mean(&n.name, def.params.iter().map(|p| p.name)) {
                            Some(x) => d.with_help(format!("did you mean `{x}`?")),
                            None => d.with_help(format!(
                                "arguments: {}",
                                def.params
                                    .iter()
                                    .map(|p| p.name)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        };
                        self.out.push(d);
                        None
                    }
                },
            };
            let Some(i) = slot else {
                failed = true;
                self.infer(&a.value);
                continue;
            };
            if vals[i].is_some() {
                let at = a.name.as_ref().map_or(a.span, |n| n.span);
                self.error(
                    "E0305",
                    at,
                    format!(
                        "argument `{}` of `{name}` is given twice",
                        def.params[i].name
                    ),
                );
                failed = true;
                self.infer(&a.value);
                continue;
            }
            let t = match def.params[i].ty {
                ParamTy::Str => self.check(&a.value, &Type::string()),
                ParamTy::Path => self.check(&a.value, &Type::Str(Ty::Path)),
                ParamTy::StrList => self.check(&a.value, &Type::list(Type::string())),
                ParamTy::Secret => self.check(&a.value, &Type::Secret),
                _ => self.infer(&a.value),
            };
            vals[i] = Some((t, a.value.span));
        }
        if !failed {
            for (i, p) in def.params.iter().enumerate() {
                if p.required && vals[i].is_none() {
                    self.out.push(
                        Diagnostic::error(
                            "E0309",
                            span,
                            format!("`{name}` needs the argument `{}`", p.name),
                        )
                        .with_help(format!("pass `{} = …`", p.name)),
                    );
                    failed = true;
                    break;
                }
            }
        }
        if !failed {
            self.builtin_shapes(b, &vals);
        }
        match def.ret {
            RetTy::Image => Type::Image,
            RetTy::File => Type::File(false),
            RetTy::Secret => Type::Secret,
            RetTy::Asset => Type::Asset,
            RetTy::Int => Type::Int,
            RetTy::Bool => Type::Bool,
            RetTy::Str => Type::string(),
            RetTy::StrList => Type::list(Type::string()),
        }
    }

    /// The parameters whose type is a shape (`len`, `join`, `contains`,
    /// `keys`): checked once all arguments are typed.
    fn builtin_shapes(&mut self, b: Builtin, vals: &[Option<(Type, Span)>]) {
        let def = b.def();
        let name = def.name;
        let container = vals.first().cloned().flatten();
        for (i, p) in def.params.iter().enumerate() {
            let Some((t, s)) = vals[i].clone() else {
                continue;
            };
            let t = t.strip_optional().clone();
            if t.is_unknown() {
                continue;
            }
            let ok = match p.ty {
                ParamTy::Str | ParamTy::Path | ParamTy::StrList | ParamTy::Secret => true,
                ParamTy::Sized | ParamTy::Container => matches!(
                    t,
                    Type::Str(_) | Type::List(_) | Type::Map(_) | Type::Record(_) | Type::Schema(_)
                ),
                ParamTy::Map => matches!(t, Type::Map(_) | Type::Record(_) | Type::Schema(_)),
                ParamTy::InterpList => match &t {
                    Type::List(e) if e.interpolable() => true,
                    Type::List(e) => {
                        let e = (**e).clone();
                        self.interpolated(s, &e);
                        true
                    }
                    _ => false,
                },
                ParamTy::Item => match container.as_ref().map(|(c, _)| c.strip_optional()) {
                    Some(Type::List(e)) => fits(&t, e) || fits(e, &t),
                    Some(Type::Str(_) | Type::Map(_) | Type::Record(_) | Type::Schema(_)) => {
                        if !t.is_str() {
                            let d = super::messages::mismatch(self.text(), s, &t, &Type::string());
                            self.out.push(d);
                        }
                        true
                    }
                    _ => true,
                },
            };
            if !ok {
                let want = match p.ty {
                    ParamTy::Sized | ParamTy::Container => "a string, list or map",
                    ParamTy::Map => "a map",
                    ParamTy::InterpList => "a list",
                    _ => "an element of the list",
                };
                let msg = format!(
                    "`{name}` needs {want} for `{}`, found {t}{}",
                    p.name,
                    quoted(self.text(), s)
                );
                self.error("E0201", s, msg);
            }
        }
    }
}
