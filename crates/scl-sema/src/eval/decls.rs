//! One declaration's value, computed once, and the cycle errors met on the way.

use super::*;

pub(super) enum Slot {
    Todo,
    InProgress,
    Done(R<Value>),
}

impl Evaluator<'_> {
    pub(super) fn decl_value(&self, i: usize) -> R<Value> {
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
}
