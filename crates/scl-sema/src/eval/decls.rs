//! One declaration's value, computed once, and the cycle errors met on the way.

use super::*;

pub(super) enum Slot {
    InProgress,
    Done(R<Value>),
}

impl Evaluator<'_> {
    /// Whether declaration `i` of the root module is computed by this
    /// evaluation (else it comes from the host, memoized).
    fn local(&self, i: usize) -> bool {
        match self.own {
            Some(own) => own == i,
            None => !self.items.clean(i),
        }
    }

    pub(super) fn decl_value(&self, i: usize) -> R<Value> {
        if !self.local(i) {
            return self.host.decl_value(self.root, i).ok_or(Reported);
        }
        {
            let slots = self.slots.borrow();
            if i >= self.items.items.len() {
                return Err(Reported);
            }
            match slots.get(&i) {
                Some(Slot::Done(r)) => return r.clone(),
                Some(Slot::InProgress) => {
                    let decl = self.decl_ast(self.root, i);
                    return Err(self.cycle_error(&decl.decl));
                }
                None => {}
            }
        }
        self.slots.borrow_mut().insert(i, Slot::InProgress);
        let decl = self.decl_ast(self.root, i);
        let r = self.eval_decl(i, &decl.decl);
        self.slots.borrow_mut().insert(i, Slot::Done(r.clone()));
        r
    }

    /// Charges what declaration `i` of the root module spent of the
    /// budget, when it is not computed here and was not charged before:
    /// the budget bounds a declaration with everything of its module it
    /// reads, so a chain of lets that doubles a value is stopped where the
    /// module's total passes the limit, as if evaluated in one go. E0316 at
    /// `span` (the name that reads it) when that passes the limit.
    pub(super) fn charge_read(&self, i: usize, span: Span) -> R<()> {
        if self.local(i) || self.items.items[i].kind == crate::DeclKind::Import {
            return Ok(());
        }
        if !self.charged.borrow_mut().insert(i) {
            return Ok(());
        }
        if self.host.decl_value(self.root, i).is_none() {
            return Err(Reported); // it failed, and said why
        }
        let s = self.host.decl_spent(self.root, i);
        self.charge(self.root, span, s.produced as usize)?;
        self.spend_steps(
            self.root,
            span,
            s.steps,
            "the module's declarations together take too many steps",
        )
    }

    /// The value of declaration `i` as a module exports it: a plain env
    /// with its final, normalized value; `None` when evaluation failed.
    pub(super) fn final_value(&self, i: usize) -> Option<Value> {
        let v = self.decl_value(i).ok()?;
        match (&v, self.items.items[i].kind) {
            (Value::Env(envv), crate::DeclKind::Env) => {
                let f = self.final_of(envv).ok()?;
                let mut nv = (**envv).clone();
                nv.final_env = Some(f);
                Some(Value::Env(Arc::new(nv)))
            }
            _ => Some(v),
        }
    }

    pub(super) fn cycle_error(&self, decl: &Decl) -> Reported {
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

    pub(super) fn eval_decl(&self, i: usize, decl: &Decl) -> R<Value> {
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
                name: e.name.name.to_string(),
                variants: e.variants.iter().map(|v| v.name.to_string()).collect(),
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
                self.env_stack.borrow_mut().push(e.name.name.to_string());
                let r = self.env_value(self.root, i, Vec::new(), e.name.name.to_string());
                self.env_stack.borrow_mut().pop();
                r.map(Value::Env)
            }
            Decl::Param(p) => self.eval_param(p),
        }
    }
}
