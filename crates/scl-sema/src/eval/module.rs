//! Evaluating a module: one declaration on its own ([`evaluate_decl`], a
//! query per declaration in the database), the declarations on cycles
//! together ([`evaluate_cyclic`]), the whole module from those
//! ([`assemble_module`]), and `--set` names that match no parameter.

use super::*;
use crate::DeclKind;

/// The `--set` values addressed to module `m` that name no parameter of it
/// (E0312, with the alias to use when an imported module has that parameter).
pub fn unknown_overrides(host: &dyn Host, m: ModuleId) -> Vec<Diagnostic> {
    let items = host.items(m);
    let params: Vec<&str> = items
        .items
        .iter()
        .filter(|x| x.kind == DeclKind::Param)
        .map(|x| x.name.as_str())
        .collect();
    let mut out = Vec::new();
    for o in host.overrides(m) {
        if params.contains(&o.name.as_str()) {
            continue;
        }
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
        let imported = items.items.iter().enumerate().find_map(|(i, x)| {
            x.import.as_ref()?;
            let target = host.import(m, i)?;
            host.items(target)
                .items
                .iter()
                .any(|t| t.kind == DeclKind::Param && t.name == o.name)
                .then(|| x.name.clone())
        });
        d = match (did_you_mean(&o.name, params.iter().copied()), imported) {
            (_, Some(alias)) => d.with_help(format!(
                "the module imported as `{alias}` has a parameter `{}`: write `--set {alias}.{}=…`",
                o.name, o.name
            )),
            (Some(s), None) => d.with_help(format!("did you mean `{s}`?")),
            (None, None) if params.is_empty() => d.with_help("this module declares no parameters"),
            (None, None) => d.with_help(format!("parameters: {}", params.join(", "))),
        };
        out.push(d);
    }
    out
}

/// The result of evaluating one declaration: its value (`None` when its
/// evaluation failed; the errors are in `diagnostics`, or were reported
/// where the failure started) — a plain env with its final, normalized
/// value — and the diagnostics met, in the module's file, their spans
/// anchored.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DeclOutcome {
    pub value: Option<Value>,
    pub diagnostics: Vec<Diagnostic>,
    /// What the evaluation spent of the budget, with what it read.
    pub spent: Spent,
}

/// What an evaluation spent of the budget ([`crate::limits`]): bytes of
/// strings, lists and inherited fields produced, and steps taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Spent {
    pub produced: u64,
    pub steps: u64,
}

/// Evaluates declaration `decl` of module `m` on its own: a clean
/// declaration ([`crate::Items::clean`]); every other declaration it names
/// comes from [`Host::decl_value`]. Never panics on user input.
pub fn evaluate_decl(host: &dyn Host, m: ModuleId, decl: usize) -> DeclOutcome {
    let ev = Evaluator::new(host, m, Some(decl));
    let value = ev.final_value(decl);
    let spent = ev.spent();
    DeclOutcome {
        value,
        spent,
        diagnostics: ev.take_diagnostics(),
    }
}

/// The declarations of a module that are not clean (on a cycle of
/// references, or reaching one), evaluated together in declaration order,
/// and the diagnostics met (anchored spans, in the module's file).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CyclicValues {
    /// By declaration index: the value, `None` when it failed.
    pub values: BTreeMap<usize, Option<Value>>,
    pub diagnostics: Vec<Diagnostic>,
    /// What their evaluation spent of the budget (all of them together).
    pub spent: Spent,
}

/// Evaluates the declarations of module `m` that are not clean (see
/// [`CyclicValues`]); clean ones come from [`Host::decl_value`].
pub fn evaluate_cyclic(host: &dyn Host, m: ModuleId) -> CyclicValues {
    let ev = Evaluator::new(host, m, None);
    let items = ev.items.clone();
    let mut values = BTreeMap::new();
    for (i, x) in items.items.iter().enumerate() {
        if x.clean || x.occurrence > 0 {
            continue; // clean, or a duplicate (reported by the static pass)
        }
        values.insert(i, ev.final_value(i));
    }
    let spent = ev.spent();
    CyclicValues {
        values,
        spent,
        diagnostics: ev.take_diagnostics(),
    }
}

/// A whole module's values, assembled from the outcome of each clean
/// declaration (`outcome(i)`, memoized by the database: [`evaluate_decl`])
/// and of the others (`cyclic`: [`evaluate_cyclic`]), with the `--set`
/// names that match no parameter. Clean declarations are asked for in
/// [`crate::Items::order`], each after those it names, so that none waits
/// on another (no recursion however long a chain of `extends` is).
pub fn assemble_module(
    host: &dyn Host,
    m: ModuleId,
    outcome: &dyn Fn(usize) -> Arc<DeclOutcome>,
    cyclic: &CyclicValues,
) -> ModuleValues {
    let items = host.items(m);
    let mut out = ModuleValues::default();
    let mut diags = unknown_overrides(host, m);
    // By declaration index: the value (`None` when it failed), `None` for
    // a declaration not evaluated (a duplicate).
    let mut by_index: Vec<Option<Option<Value>>> = vec![None; items.items.len()];
    for &i in &items.order {
        if items.items[i].occurrence > 0 {
            continue;
        }
        if items.items[i].kind == DeclKind::Import {
            continue; // a module: not one of the module's values
        }
        let o = outcome(i);
        diags.extend(o.diagnostics.iter().cloned());
        by_index[i] = Some(o.value.clone());
    }
    diags.extend(cyclic.diagnostics.iter().cloned());
    for (&i, v) in &cyclic.values {
        if let Some(slot) = by_index.get_mut(i) {
            *slot = Some(v.clone());
        }
    }
    // The IR of an env that holds services by reference is completed here,
    // where it is read: this query, not the env's own, depends on their
    // content (an edit of one service re-evaluates none of its siblings).
    let pending = |v: &Option<Value>| matches!(v, Some(Value::Env(e)) if e.final_env.as_ref().is_some_and(|f| f.is_pending()));
    if by_index.iter().flatten().any(pending) {
        let ev = Evaluator::new(host, m, None);
        for v in by_index.iter_mut().flatten() {
            let Some(Value::Env(e)) = v else { continue };
            let Some(f) = e.final_env.as_ref().filter(|f| f.is_pending()) else {
                continue;
            };
            *v = ev.complete(f).ok().map(|f| {
                let mut nv = (**e).clone();
                nv.final_env = Some(f);
                Value::Env(Arc::new(nv))
            });
        }
        diags.extend(ev.take_diagnostics());
    }
    for (i, x) in items.items.iter().enumerate() {
        if x.occurrence > 0 || x.kind == DeclKind::Import {
            continue; // a duplicate (reported by the static pass), or an import
        }
        if x.kind == DeclKind::Env {
            out.envs.push(x.name.clone());
        }
        match by_index.get_mut(i).and_then(Option::take).flatten() {
            Some(v) => {
                out.values.insert(x.name.clone(), v);
            }
            None => out.failed.push(x.name.clone()),
        }
    }
    let mut seen = HashSet::default();
    out.diagnostics = diags
        .into_iter()
        .filter(|d| seen.insert((d.code, d.at.clone(), d.message.clone())))
        .collect();
    out
}

/// The declarations of `module` whose evaluation involves no cycle, each
/// after every declaration of the module it names (a post-order of the
/// static reference graph). Declarations on a cycle, and those that reach
/// one, are left out: they are evaluated on demand, in declaration order, so
/// that a cycle is reported from where the user reads it first.
pub(crate) fn evaluation_order(module: &ast::Module, index: &HashMap<String, usize>) -> Vec<usize> {
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
