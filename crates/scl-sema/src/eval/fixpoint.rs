//! An env's final value: its layers applied, with `self` as a fixpoint.

use super::*;

/// The `self` of the env being evaluated: the previous round's record
/// (`None` in the first round) and whether any `self` was read.
pub(crate) struct SelfCx {
    pub(super) snapshot: Option<Arc<Record>>,
    pub(super) used: Cell<bool>,
    pub(super) first_use: Cell<Option<(ModuleId, Span)>>,
    /// The first `self.…` read that gave a still-pending value (the field
    /// that depends on itself, when the fixpoint does not converge).
    pub(super) pending_use: Cell<Option<(ModuleId, Span)>>,
}

/// The most rounds of the `self` fixpoint of one env (see
/// `Evaluator::compute_final`): fields may read each other through `self`
/// this many levels deep.
pub const MAX_SELF_ROUNDS: usize = 64;

impl Evaluator<'_> {
    /// The final, normalized result of an env (cached for the root module's
    /// named envs).
    pub fn final_of(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>> {
        if let Some(f) = &env.final_env {
            return Ok(f.clone());
        }
        // Envs declared in this module (not `with` or record envs, whose last
        // layer has no declaration) are computed once.
        let key = env.layers.last().and_then(|l| {
            if l.id.module == self.root && l.id.args.is_empty() {
                l.id.decl
            } else {
                None
            }
        });
        let is_named = key.is_some();
        if is_named {
            if let Some(r) = self.finals.borrow().get(&key.unwrap()) {
                return r.clone();
            }
        }
        // An env whose value needs its own final value (a service that is the
        // env itself, two envs reading each other's fields) has none.
        let pos = self
            .finalizing
            .borrow()
            .iter()
            .position(|x| x.layers.len() == env.layers.len() && x.layers.same(&env.layers));
        if let Some(pos) = pos {
            let chain: Vec<String> = self.finalizing.borrow()[pos..]
                .iter()
                .map(|x| format!("`{}`", x.name))
                .collect();
            let d = Diagnostic::error(
                "E0301",
                env.extends_span,
                format!("`{}` needs its own final value: {} → `{}`", env.name, chain.join(" → "), env.name),
            )
            .with_help("an env cannot contain itself as a service or read its own fields through another env");
            return Err(self.report(env.module, d));
        }
        self.finalizing.borrow_mut().push(env.clone());
        let r = match env.used_at {
            Some((m, span)) if m != env.module => {
                let name = &env.name;
                self.using(
                    m,
                    span,
                    || format!("`{name}` is instantiated here"),
                    || self.compute_final(env),
                )
            }
            _ => self.compute_final(env),
        };
        self.finalizing.borrow_mut().pop();
        if is_named {
            self.finals.borrow_mut().insert(key.unwrap(), r.clone());
        }
        r
    }

    /// Evaluates the layers of `env` into its final record, IR and origins.
    /// `self` is a fixpoint: each round reads the previous round's record,
    /// so a chain of fields reading each other k deep (`a = self.b`, `b =
    /// self.c`, …) needs k + 2 rounds (k to resolve, one to see it settle); at most [`MAX_SELF_ROUNDS`] are run,
    /// each charged to the evaluation's step budget like any evaluation.
    pub(super) fn compute_final(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>> {
        if self.produced.get() > MAX_PRODUCED || self.steps.get() > MAX_STEPS {
            return Err(Reported);
        }
        // The `self` fixpoint: round 1 reads `self` as pending; later rounds
        // read the previous round's record, until two rounds agree.
        // A single parent whose layers were already applied: start from its
        // state and apply only this env's own layer.
        let reuse = env.single_parent.then_some(()).and_then(|()| {
            let f = match &env.parent_final {
                Some(f) => Some(f.clone()),
                None => {
                    let parent = env.layers.init();
                    let last = parent.last()?;
                    let key = if last.id.module == self.root && last.id.args.is_empty() {
                        last.id.decl
                    } else {
                        None
                    };
                    key.and_then(|k| self.finals.borrow().get(&k).and_then(|r| r.clone().ok()))
                }
            }?;
            f.applied.clone().map(|a| (env.layers.len() - 1, a))
        });
        // The layers still to apply (only the last one when reusing).
        let start = reuse.as_ref().map_or(0, |(n, _)| *n);
        let todo = env.layers.suffix(start);
        let mut snapshot: Option<Arc<Record>> = None;
        let mut last: Option<(Arc<Record>, Builder, bool)> = None;
        for round in 0..MAX_SELF_ROUNDS {
            let before = self.diags.borrow().len();
            let view = snapshot.as_ref().map(|r| Arc::new(normalize::self_view(r)));
            let selfcx = SelfCx {
                snapshot: view,
                used: Cell::new(false),
                first_use: Cell::new(None),
                pending_use: Cell::new(None),
            };
            let mut b = match &reuse {
                Some((_, applied)) => {
                    // Starting from the parent's state copies it: a chain
                    // whose every env adds a field copies ever more (the
                    // IR of each env holds them all), so the copy is charged.
                    let n = applied.origins.len().saturating_mul(INHERITED_BYTES);
                    if self.charge(env.module, env.extends_span, n).is_err() {
                        return Err(Reported);
                    }
                    Builder::from_applied(applied)
                }
                None => {
                    let mut b = Builder::new(true);
                    // Writes are needed only for the diamond rule, which a
                    // single chain of inheritance cannot break.
                    b.track_writes = !env.chain;
                    b
                }
            };
            let mut failed = false;
            // Applying layers again from the first (an env with several
            // parents, or whose parent reads `self`, cannot start from its
            // parent's state; each round of the `self` fixpoint applies
            // them all again) is charged per item, at what applying one
            // costs against one evaluation step: a chain of n such envs
            // costs O(n²) items, and the budget bounds it.
            if reuse.is_none() && todo.len() > 1 {
                let items: usize = todo.iter().map(|l| l.block.items.len()).sum();
                if self
                    .work(
                        env.module,
                        env.extends_span,
                        (items * REBUILD_ITEM_STEPS) as u64,
                    )
                    .is_err()
                {
                    return Err(Reported);
                }
            }
            for (j, layer) in todo.iter().enumerate() {
                b.layer = start + j;
                b.layer_name = layer.name.clone();
                b.layer_module = layer.id.module;
                let cx = Cx {
                    module: layer.id.module,
                    locals: &layer.locals,
                    selfcx: Some(&selfcx),
                };
                let mut apply = || {
                    self.apply_block(
                        &mut b,
                        cx,
                        &layer.block,
                        &FieldPath::root(),
                        &Ty::Record(RecordTy::Env),
                        &layer.name,
                    )
                };
                // A template instance of another module is this env's own
                // use of it: its errors get a label at the `extends`. (A named
                // env of another module reports its errors there itself.)
                let r = if layer.id.module != env.module && !layer.id.args.is_empty() {
                    let name = &layer.name;
                    self.using(
                        env.module,
                        env.extends_span,
                        || format!("`{name}` is instantiated here"),
                        apply,
                    )
                } else {
                    apply()
                };
                if r.is_err() {
                    failed = true;
                }
            }
            let record = Arc::new(std::mem::take(&mut b.record));
            if !selfcx.used.get() || failed {
                if failed {
                    return Err(Reported);
                }
                last = Some((record, b, !selfcx.used.get()));
                break;
            }
            let converged = snapshot.as_ref().is_some_and(|s| **s == *record);
            // Still changing after the last round: a chain too deep (a real
            // cycle settles, with pending values, and is reported below).
            if !converged && round == MAX_SELF_ROUNDS - 1 {
                let (m, span) = selfcx
                    .first_use
                    .get()
                    .unwrap_or((env.module, env.extends_span));
                return Err(self.report(
                    m,
                    Diagnostic::error(
                        "E0310",
                        span,
                        format!(
                            "the fields of `{}` read each other through `self` more than {} deep",
                            env.name,
                            MAX_SELF_ROUNDS - 2
                        ),
                    )
                    .with_help("compute the values from `let` declarations instead"),
                ));
            }
            if converged {
                if record.values().any(Value::is_pending) {
                    let (m, span) = selfcx
                        .pending_use
                        .get()
                        .or(selfcx.first_use.get())
                        .unwrap_or((env.module, env.extends_span));
                    return Err(self.report(
                        m,
                        Diagnostic::error(
                            "E0310",
                            span,
                            format!(
                                "a field of `{}` depends on its own value through `self`",
                                env.name
                            ),
                        )
                        .with_help("compute the value from a `let` or a `param` instead"),
                    ));
                }
                last = Some((record, b, false));
                break;
            }
            // Drop this round's diagnostics: the next round redoes them.
            self.diags.borrow_mut().truncate(before);
            snapshot = Some(record);
        }
        let (record, b, reusable) = last.ok_or(Reported)?;
        self.check_conflicts(env, &b)?;
        let mut b = b;
        let mut origins = std::mem::take(&mut b.origins);
        origins.shrink_to_fit();
        let origins = Arc::new(origins);
        let (spec, pending) = normalize::normalize(self, env, &record, &origins)?;
        let applied = reusable.then(|| Arc::new(b.into_applied(&record, &origins)));
        Ok(Arc::new(FinalEnv {
            record,
            origins,
            spec: Some(Arc::new(spec)),
            applied,
            pending,
        }))
    }

    /// `f` with the services it holds by reference ([`Value::EnvRef`])
    /// added to its IR — each resolved from its module and completed in
    /// turn — and the services checked together
    /// (`normalize::check_services`); `f` itself when it holds none.
    /// `Reported` when a service failed (its errors are in its own module)
    /// or a check failed. Run where the IR is read, so that the env's own
    /// value does not depend on its services' content.
    pub(crate) fn complete(&self, f: &Arc<FinalEnv>) -> R<Arc<FinalEnv>> {
        let Some(p) = &f.pending else {
            return Ok(f.clone());
        };
        let Some(own) = &f.spec else {
            return Err(Reported);
        };
        let mut spec = (**own).clone();
        // Each service's complete IR is its module's (memoized there: no
        // completion is repeated, however services nest), in name order
        // (the services record's): the map is built in bulk.
        let (resolved, failed) = normalize::pending_specs(self, &p.services);
        if failed {
            return Err(Reported);
        }
        if spec.services.is_empty() {
            spec.services = resolved.into_iter().collect();
        } else {
            spec.services.extend(resolved);
        }
        let names = normalize::service_names(&f.record);
        let at = |path: &FieldPath| normalize::origin_at(&f.origins, p.module, p.span, path);
        let check = || normalize::check_services(self, &at, &names, &spec.services);
        // A template instance made by another module's code: its errors
        // get a label at that call, as its other errors do (`final_of`).
        let bad = match p.used_at {
            Some((m, span)) if m != p.module => {
                let name = &p.name;
                self.using(m, span, || format!("`{name}` is instantiated here"), check)
            }
            _ => check(),
        };
        if bad {
            return Err(Reported);
        }
        Ok(Arc::new(FinalEnv {
            record: f.record.clone(),
            origins: f.origins.clone(),
            spec: Some(Arc::new(spec)),
            applied: f.applied.clone(),
            pending: None,
        }))
    }
}

/// Normalization reports through the evaluator and charges its budget.
impl normalize::Sink for Evaluator<'_> {
    fn report(&self, m: ModuleId, d: Diagnostic) -> Reported {
        Evaluator::report(self, m, d)
    }
    fn warn(&self, m: ModuleId, code: &'static str, span: Span, msg: String, help: &str) {
        Evaluator::warn(self, m, code, span, msg, help)
    }
    fn charge_ir(&self, at: &dyn Fn() -> (ModuleId, Span), bytes: usize) -> R<()> {
        Evaluator::charge_ir(self, at, bytes)
    }
    fn final_of(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>> {
        Evaluator::final_of(self, env)
    }
    fn complete(&self, f: &Arc<FinalEnv>) -> R<Arc<FinalEnv>> {
        Evaluator::complete(self, f)
    }
    fn completed_specs(&self, refs: &[&EnvRef]) -> Vec<Option<Arc<scl_ir::EnvSpec>>> {
        let envs: Vec<(ModuleId, Arc<str>)> =
            refs.iter().map(|r| (r.module, r.name.clone())).collect();
        self.host.completed_specs(&envs)
    }
    fn display_path(&self, m: ModuleId) -> Arc<str> {
        self.host.display_path(m)
    }
}
