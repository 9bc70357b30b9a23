//! An env's linearization: its parents' layers in order, then its own.

use super::*;

/// The linearization of an env with these parents (`design`: depth-first,
/// left to right, each ancestor once): the first parent's list, shared, then
/// the layers of each later parent that are not in it yet. Also whether the
/// result is a single chain (every layer inherits all the layers before it).
///
/// O(1) for one parent; O(total layers) for several.
pub(super) fn linearize(parents: &[Arc<EnvValue>]) -> (Lin, bool) {
    let Some((first, rest)) = parents.split_first() else {
        return (Lin::new(), true);
    };
    if rest.is_empty() {
        return (first.layers.clone(), first.chain);
    }
    // Layers by declaration and span; equal keys are told apart by their
    // arguments (two instances of one template).
    type Key = (ModuleId, Option<usize>, u32, u32);
    let key = |l: &Layer| -> Key { (l.id.module, l.id.decl, l.id.span.start, l.id.span.end) };
    let mut seen: HashMap<Key, Vec<Arc<Layer>>> = HashMap::default();
    for l in first.layers.to_vec() {
        seen.entry(key(&l)).or_default().push(l);
    }
    let mut lin = first.layers.clone();
    for p in rest {
        for l in p.layers.to_vec() {
            let same = seen.entry(key(&l)).or_default();
            if !same.iter().any(|x| x.id == l.id) {
                same.push(l.clone());
                lin = lin.push(l);
            }
        }
    }
    // Every ancestor of a layer comes before it in a linearization, so a
    // layer inherits all the layers before it exactly when it has that many
    // ancestors.
    let chain = lin
        .to_vec()
        .iter()
        .enumerate()
        .all(|(i, l)| l.ancestors.len() == i);
    (lin, chain)
}

impl Evaluator<'_> {
    /// Builds the linearization of env declaration `decl` of module `m`
    /// (a plain env, or a template with bound arguments).
    pub(super) fn env_value(
        &self,
        m: ModuleId,
        decl: usize,
        args: Vec<(Name, Value)>,
        name: String,
    ) -> R<Arc<EnvValue>> {
        let ad = self.decl_ast(m, decl);
        let Decl::Env(ed) = &ad.decl else {
            return Err(Reported);
        };
        let cx = Cx {
            module: m,
            locals: &args,
            selfcx: None,
        };
        let mut parents: Vec<Arc<EnvValue>> = Vec::new();
        let mut failed = false;
        for p in &ed.extends {
            let v = match self.eval(cx, p, &Ty::Any) {
                Ok(v) => v,
                Err(_) => {
                    failed = true;
                    continue;
                }
            };
            let env = match v {
                Value::Env(e) => e,
                Value::EnvRef(r) => match self.resolve_env(&r) {
                    Ok(e) => e,
                    Err(_) => {
                        failed = true;
                        continue;
                    }
                },
                Value::Template { module, decl } => {
                    match self.instantiate(cx, module, decl, &[], p.span) {
                        Ok(e) => e,
                        Err(_) => {
                            failed = true;
                            continue;
                        }
                    }
                }
                other => {
                    self.report(
                        m,
                        Diagnostic::error(
                            "E0313",
                            p.span,
                            format!("`extends` needs an env, found {}", other.type_name()),
                        ),
                    );
                    failed = true;
                    continue;
                }
            };
            parents.push(env);
        }
        if failed {
            return Err(Reported);
        }
        let (lin, chain) = linearize(&parents);
        let single = parents.len() == 1;
        let layer = Arc::new(Layer {
            id: LayerId {
                module: m,
                decl: Some(decl),
                span: ed.name.span,
                args: args.clone(),
            },
            name: name.as_str().into(),
            block: ed.body.clone(),
            locals: Arc::new(args),
            ancestors: lin.clone(),
        });
        Ok(Arc::new(EnvValue {
            name,
            layers: lin.push(layer),
            chain,
            extends_span: ed.extends_span.unwrap_or(ed.name.span),
            module: m,
            final_env: None,
            single_parent: single,
            parent_final: if single {
                parents[0].final_env.clone()
            } else {
                None
            },
            used_at: None,
        }))
    }
}
