//! Typing declarations, each once, after the declarations it names (an
//! iterative depth-first order, so a long `let` chain costs no stack).

use super::infer::{enum_def, Checker};
use super::types::{ModuleTypes, Param, Signature, Type};
use super::{Context, Declarations, TypeTable, Typed};
use scl_diag::Diagnostic;
use scl_syntax::ast::*;
use std::sync::Arc;

pub(super) fn check(module: &Declarations, cx: &Context) -> Typed {
    let mut c = Checker::new(&module.list, cx);
    for i in order(&module.list, &c) {
        // A declaration with a syntax error means nothing certain: it is
        // not checked, and what uses it is not checked against it.
        if module.recovered.get(i).copied().unwrap_or(false) {
            c.decl_types[i] = Some(Type::Error);
            continue;
        }
        let t = c.decl(i);
        // The declared name has the declaration's type (hover on a name).
        c.table.push((module.list[i].name().span, t.clone()));
        c.decl_types[i] = Some(t);
    }
    let mut decls = scl_ir::fields::Fields::new();
    for (i, d) in module.list.iter().enumerate() {
        if c.index.get(d.name().name.as_str()) == Some(&i) {
            decls.insert(
                d.name().name.clone(),
                c.decl_types[i].clone().unwrap_or(Type::Error),
            );
        }
    }
    // Kept as long as the module is: no spare room.
    decls.shrink_to_fit();
    Typed {
        diagnostics: c.out,
        types: TypeTable { entries: c.table },
        signatures: ModuleTypes {
            path: String::new(),
            decls,
        },
    }
}

/// The declarations in an order where each comes after those it names
/// (on a cycle, in any order: the names on it are typed `Error` there, and
/// the cycle is evaluation's error).
fn order(module: &[&Decl], c: &Checker) -> Vec<usize> {
    let n = module.len();
    let deps: Vec<Vec<usize>> = module
        .iter()
        .map(|d| {
            let mut out = Vec::new();
            names_in_decl(d, &mut |name| {
                if let Some(&j) = c.index.get(name) {
                    out.push(j);
                }
            });
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let mut out = Vec::with_capacity(n);
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        path.push((root, 0));
        while let Some(&mut (v, ref mut next)) = path.last_mut() {
            if let Some(&w) = deps[v].get(*next) {
                *next += 1;
                if state[w] == 0 {
                    state[w] = 1;
                    path.push((w, 0));
                }
            } else {
                state[v] = 2;
                out.push(v);
                path.pop();
            }
        }
    }
    out
}

impl Checker<'_> {
    /// Types declaration `i` and checks its body.
    fn decl(&mut self, i: usize) -> Type {
        let module = self.module;
        match module[i] {
            Decl::Import(_) => {
                let m = self.cx.imports.import_types(i);
                Type::Module(m)
            }
            Decl::Enum(e) => Type::EnumType(enum_def(e)),
            Decl::Let(l) => self.infer(&l.value),
            Decl::Param(p) => {
                let t = self.resolve(&p.ty);
                self.check(&p.default, &t);
                if let Some(w) = &p.where_ {
                    self.locals.push((p.name.name.clone(), t.clone()));
                    self.check(w, &Type::Bool);
                    self.locals.pop();
                }
                t
            }
            Decl::Fn(f) => {
                let params = self.params(&f.params);
                let declared = f.ret.as_ref().map(|r| self.resolve(r));
                let body = match &declared {
                    Some(r) => self.check(&f.body, r),
                    None => self.infer(&f.body),
                };
                self.locals.clear();
                Type::Fn(Arc::new(Signature {
                    name: f.name.name.to_string(),
                    params,
                    ret: declared.unwrap_or(body),
                }))
            }
            Decl::Env(e) => {
                let params = e.params.as_ref().map(|ps| self.params(ps));
                for p in &e.extends {
                    self.parent(p);
                }
                self.env_body(&e.body);
                self.locals.clear();
                match params {
                    Some(params) => Type::Template(Arc::new(Signature {
                        name: e.name.name.to_string(),
                        params,
                        ret: Type::Env,
                    })),
                    None => Type::Env,
                }
            }
        }
    }

    /// Declared parameters: their types, defaults checked against them;
    /// each is in scope for the defaults after it and for the body.
    fn params(&mut self, ps: &[ParamSig]) -> Vec<Param> {
        self.locals.clear();
        let mut out = Vec::new();
        for p in ps {
            let t = self.resolve(&p.ty);
            if let Some(d) = &p.default {
                self.check(d, &t);
            }
            self.table.push((p.name.span, t.clone()));
            self.locals.push((p.name.name.clone(), t.clone()));
            out.push(Param {
                name: p.name.name.to_string(),
                ty: t,
                has_default: p.default.is_some(),
            });
        }
        out
    }

    /// A parent in `extends`: an env, or a template whose parameters all
    /// have defaults.
    fn parent(&mut self, p: &Expr) {
        match self.infer(p) {
            Type::Env | Type::Error => {}
            Type::Template(sig) => {
                if let Some(q) = sig.params.iter().find(|q| !q.has_default) {
                    self.out.push(
                        Diagnostic::error(
                            "E0309",
                            p.span,
                            format!("template `{}` needs the argument `{}`", sig.name, q.name),
                        )
                        .with_help(format!("pass it: `{}({} = …)`", sig.name, q.name)),
                    );
                }
            }
            other => {
                let msg = format!(
                    "`extends` needs an env, found {other}{}",
                    super::messages::quoted(self.text(), p.span)
                );
                self.error("E0313", p.span, msg);
            }
        }
    }
}
