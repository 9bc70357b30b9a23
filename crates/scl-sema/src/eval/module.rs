//! Evaluating a whole module: every declaration, in dependency order where
//! there is no cycle, and `--set` names that match no parameter.

use super::*;

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
pub(super) fn evaluation_order(module: &ast::Module, index: &HashMap<String, usize>) -> Vec<usize> {
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
