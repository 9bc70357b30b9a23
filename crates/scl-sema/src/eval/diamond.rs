//! The diamond rule: conflicting writes by unrelated parents are an error.

use super::*;

/// "Is layer `x` an ancestor of layer `y`?" for the layers of one
/// linearization, by position. A layer with as many ancestors as layers
/// before it inherits them all (every ancestor precedes it), which answers
/// in O(1) for every layer of a chain; other layers' ancestors are looked up
/// once and kept.
pub(super) struct Ancestry<'a> {
    pub(super) layers: &'a [Arc<Layer>],
    /// Positions of layers by declaration and span (equal keys: template
    /// instances, told apart by their arguments).
    pub(super) index: HashMap<(ModuleId, Option<usize>, u32, u32), Vec<usize>>,
    pub(super) sets: RefCell<HashMap<usize, HashSet<usize>>>,
}

impl<'a> Ancestry<'a> {
    pub(super) fn new(layers: &'a [Arc<Layer>]) -> Ancestry<'a> {
        let mut index: HashMap<_, Vec<usize>> = HashMap::default();
        for (i, l) in layers.iter().enumerate() {
            index
                .entry((l.id.module, l.id.decl, l.id.span.start, l.id.span.end))
                .or_default()
                .push(i);
        }
        Ancestry {
            layers,
            index,
            sets: RefCell::new(HashMap::default()),
        }
    }

    pub(super) fn is_anc(&self, x: usize, y: usize) -> bool {
        if x >= y {
            return false;
        }
        let l = &self.layers[y];
        if l.ancestors.len() == y {
            return true;
        }
        let mut sets = self.sets.borrow_mut();
        let set = sets.entry(y).or_insert_with(|| {
            l.ancestors
                .to_vec()
                .iter()
                .filter_map(|a| {
                    self.index
                        .get(&(a.id.module, a.id.decl, a.id.span.start, a.id.span.end))?
                        .iter()
                        .copied()
                        .find(|&i| self.layers[i].id == a.id)
                })
                .collect()
        });
        set.contains(&x)
    }
}

impl Evaluator<'_> {
    /// The diamond rule: two writes of the same path (or of a path and a
    /// field below it) by envs that are not ancestors of each other, with
    /// different values, are an error unless an env that inherits both (or
    /// the env itself) writes the path again.
    ///
    /// Only writes of one path and of the paths above it can conflict, so
    /// the pairs are looked for per path; a path whose writers are all
    /// ancestors of each other (the common case) is skipped after one pass.
    pub(super) fn check_conflicts(&self, env: &Arc<EnvValue>, b: &Builder) -> R<()> {
        // A single chain of inheritance has no unrelated layers.
        if env.chain {
            return Ok(());
        }
        let layers = env.layers.to_vec();
        let anc = Ancestry::new(&layers);
        let last = layers.len() - 1;
        for (path, writes) in &b.writes {
            // The writes of `path` and of every path above it.
            let mut group: Vec<(&FieldPath, &Write)> = writes.iter().map(|w| (path, w)).collect();
            for p in path.prefixes() {
                if let Some((k, ws)) = b.writes.get_key_value(&p) {
                    group.extend(ws.iter().map(|w| (k, w)));
                }
            }
            let mut writers: Vec<usize> = group.iter().map(|(_, w)| w.layer).collect();
            writers.sort_unstable();
            writers.dedup();
            if writers.windows(2).all(|w| anc.is_anc(w[0], w[1])) {
                continue;
            }
            for (i, (pi, wi)) in group.iter().enumerate() {
                for (pj, wj) in group.iter().skip(i + 1) {
                    // Order the pair so that `p` is a prefix of (or equal to) `q`.
                    let ((p, wp), (q, wq)) = if pj.len() < pi.len() {
                        ((pj, wj), (pi, wi))
                    } else {
                        ((pi, wi), (pj, wj))
                    };
                    let same = p == q;
                    if wp.layer == wq.layer
                        || anc.is_anc(wp.layer, wq.layer)
                        || anc.is_anc(wq.layer, wp.layer)
                    {
                        continue;
                    }
                    let sub = if same {
                        Some(wp.value.clone())
                    } else {
                        q.strip_prefix(p)
                            .and_then(|below| sub_value(&wp.value, below))
                    };
                    if sub.as_ref().is_some_and(|v| values_equal(v, &wq.value)) {
                        continue;
                    }
                    // Resolved by a later write of `q` or an enclosing path in
                    // an env that has both as ancestors (or the env itself)?
                    let resolved = group.iter().any(|(pz, wz)| {
                        q.starts_with(pz)
                            && wz.layer != wp.layer
                            && wz.layer != wq.layer
                            && (wz.layer == last
                                || (anc.is_anc(wp.layer, wz.layer)
                                    && anc.is_anc(wq.layer, wz.layer)))
                    });
                    if resolved {
                        continue;
                    }
                    let (lp, lq) = (&layers[wp.layer], &layers[wq.layer]);
                    let me = &layers[last];
                    let shown = |v: Option<&Value>| {
                        v.map(|v| v.to_string()).unwrap_or_else(|| "nothing".into())
                    };
                    let d = Diagnostic::error(
                        "E0302",
                        env.extends_span,
                        format!(
                            "`{}` inherits conflicting values for `{q}`: {} from `{}` and {} from `{}`",
                            me.name,
                            shown(sub.as_ref()),
                            lp.name,
                            wq.value,
                            lq.name
                        ),
                    )
                    .with_primary_label("both parents are inherited here")
                    .with_label(
                        self.host.display_path(lp.id.module),
                        wp.span,
                        format!("`{}` sets {p} = {}", lp.name, wp.value),
                    )
                    .with_label(
                        self.host.display_path(lq.id.module),
                        wq.span,
                        format!("`{}` sets {q} = {}", lq.name, wq.value),
                    )
                    .with_help(format!("set `{q}` in `{}` itself to choose one", me.name));
                    return Err(self.report(env.module, d));
                }
            }
        }
        Ok(())
    }
}
