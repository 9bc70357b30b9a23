//! Applying an env body's (or record literal's) items to a [`Builder`].

use super::*;

/// The paths set so far in one env body (nested blocks included), for the
/// set-twice check: a path conflicts with itself, with a path above it and
/// with a path below it. Lookups cost the path's depth, not the body's size.
#[derive(Default)]
pub(crate) struct Seen {
    pub(super) set: HashMap<FieldPath, Span>,
    /// Every proper prefix of a set path → where the first such path was set.
    pub(super) under: HashMap<FieldPath, Span>,
}

impl Seen {
    /// Where a path overlapping `key` was set, if any.
    pub(super) fn overlapping(&self, key: &FieldPath) -> Option<Span> {
        self.set
            .get(key)
            .or_else(|| key.prefixes().find_map(|p| self.set.get(&p)))
            .or_else(|| self.under.get(key))
            .copied()
    }

    pub(super) fn insert(&mut self, key: &FieldPath, span: Span) {
        for p in key.prefixes() {
            self.under.entry(p).or_insert(span);
        }
        self.set.insert(key.clone(), span);
    }
}

/// The top-level length of a list or map value (0 for anything else).
pub(super) fn value_len(v: &Value) -> usize {
    match v {
        Value::List(l) => l.len(),
        Value::Record(r) => r.len(),
        _ => 0,
    }
}

/// True when a `-=` removes a list of strings only: then it goes by hash
/// (a string equals only the same string; other values, such as an Int
/// equal to a Float, need [`values_equal`]).
pub(super) fn removes_by_hash(v: &Value) -> bool {
    matches!(v, Value::List(l) if l.iter().all(|x| matches!(x, Value::Str(_))))
}

impl Evaluator<'_> {
    /// A record literal as a value of type `ty` (a schema record, a map, or untyped).
    pub(super) fn record_value(&self, cx: Cx, block: &ast::Block, ty: &Ty) -> R<Value> {
        let mut b = Builder::new(false);
        self.apply_block(&mut b, cx, block, &FieldPath::root(), ty, "")?;
        if let Ty::Record(rt) = ty {
            let mut failed = false;
            for &(n, _, req) in rt.fields() {
                if req && !b.record.contains_key(n) {
                    self.report(
                        cx.module,
                        Diagnostic::error(
                            "E0209",
                            block.span,
                            format!("{} needs the field `{n}`", rt.name()),
                        ),
                    );
                    failed = true;
                }
            }
            if failed {
                return Err(Reported);
            }
            b.record.insert(TYPE_KEY.into(), Value::str(rt.name()));
        }
        Ok(Value::Record(Arc::new(b.record)))
    }

    /// Applies the items of `block` at `prefix` (a path into `b.record`)
    /// whose type is `ty`.
    pub(crate) fn apply_block(
        &self,
        b: &mut Builder,
        cx: Cx,
        block: &ast::Block,
        prefix: &FieldPath,
        ty: &Ty,
        layer: &str,
    ) -> R<()> {
        let mut seen = Seen::default();
        self.apply_items(b, cx, block, prefix, ty, layer, &mut seen)
    }

    /// Applies a block's items; `seen` holds the paths set so far in the
    /// enclosing body (nested blocks share it), for the set-twice check.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply_items(
        &self,
        b: &mut Builder,
        cx: Cx,
        block: &ast::Block,
        prefix: &FieldPath,
        ty: &Ty,
        layer: &str,
        seen: &mut Seen,
    ) -> R<()> {
        // Room for each item's path at once: a block of thousands of
        // items (`services { … }` of a whole workspace) is not rehashed
        // as it grows (a no-op when the room is there).
        seen.set.reserve(block.items.len());
        let mut failed = false;
        for item in block.items.iter() {
            if self
                .apply_item(b, cx, item, prefix, ty, layer, seen)
                .is_err()
            {
                failed = true;
            }
        }
        if failed {
            Err(Reported)
        } else {
            Ok(())
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply_item(
        &self,
        b: &mut Builder,
        cx: Cx,
        item: &ast::Item,
        prefix: &FieldPath,
        ty: &Ty,
        layer: &str,
        seen: &mut Seen,
    ) -> R<()> {
        match &item.kind {
            ItemKind::Error => Err(Reported),
            ItemKind::If {
                cond,
                then_block,
                else_block,
            } => match self.eval(cx, cond, &Ty::Bool)? {
                Value::Bool(true) => self.apply_block(b, cx, then_block, prefix, ty, layer),
                Value::Bool(false) => match else_block {
                    Some(e) => self.apply_block(b, cx, e, prefix, ty, layer),
                    None => Ok(()),
                },
                _ => Ok(()), // pending `self`: decided in a later round
            },
            ItemKind::Nested { path, body } => {
                let (full, fty) = self.walk_path(cx.module, prefix, ty, path)?;
                match &fty {
                    Ty::Record(_) | Ty::Map(_) | Ty::Any => {}
                    other => {
                        return self.err(
                            cx.module,
                            "E0201",
                            path.span,
                            format!(
                                "`{full}` is a {other}, not a record: use `{} = …`",
                                path.segments.last().map(|s| s.name.as_str()).unwrap_or("")
                            ),
                        )
                    }
                }
                b.ensure_record(&full);
                self.apply_items(b, cx, body, &full, &fty, layer, seen)
            }
            ItemKind::Assign {
                path,
                op,
                op_span: _,
                value,
            } => {
                let (full, fty) = self.walk_path(cx.module, prefix, ty, path)?;
                if *op == AssignOp::Set {
                    if let Some(prev) = seen.overlapping(&full) {
                        return Err(self.report(
                            cx.module,
                            Diagnostic::error(
                                "E0305",
                                path.span,
                                format!("`{full}` is set twice in this block"),
                            )
                            .with_label(Arc::from(""), prev, "first set here")
                            .with_help("remove one of the two items"),
                        ));
                    }
                    seen.insert(&full, path.span);
                }
                let vty = match (op, &fty) {
                    (AssignOp::Set, t) => t.clone(),
                    (AssignOp::Append, Ty::List(_)) | (AssignOp::Append, Ty::Map(_)) => fty.clone(),
                    (AssignOp::Remove, Ty::List(_)) => fty.clone(),
                    (AssignOp::Remove, Ty::Map(_)) => Ty::List(Box::new(Ty::String)),
                    (AssignOp::Append | AssignOp::Remove, Ty::Any) => Ty::Any,
                    (_, other) => {
                        return self.err(
                            cx.module,
                            "E0211",
                            item.span,
                            format!(
                                "`{}` works on lists and maps; `{full}` is a {other}",
                                if *op == AssignOp::Append { "+=" } else { "-=" }
                            ),
                        )
                    }
                };
                let v = self.eval(cx, value, &vty)?;
                // A map key set twice in this block, one of them by `+=`
                // (`vars.A = …` then `vars += { A = … }`, two `+=` with one
                // key, or `vars = { A = … }` then `vars += { A = … }`): the
                // second would silently win, as with two `=`.
                if let (Value::Record(r), Ty::Map(_)) = (&v, &fty) {
                    for k in r.keys().filter(|k| !is_type_mark(k)) {
                        let kp = full.key(k);
                        if *op == AssignOp::Append {
                            if let Some(prev) = seen.set.get(&kp) {
                                return Err(self.report(
                                    cx.module,
                                    Diagnostic::error(
                                        "E0305",
                                        value.span,
                                        format!("`{kp}` is set twice in this block"),
                                    )
                                    .with_label(Arc::from(""), *prev, "first set here")
                                    .with_help("remove one of the two items"),
                                ));
                            }
                            seen.insert(&kp, value.span);
                        } else {
                            seen.set.insert(kp, path.span);
                        }
                    }
                }
                if let (AssignOp::Append, Value::List(l)) = (op, &v) {
                    // The list grows by a copy of the new elements.
                    self.charge(cx.module, item.span, l.len().saturating_mul(VALUE_BYTES))?;
                }
                // What the assignment copies (`+=`: the current list or map)
                // or compares (`-=` of non-strings: every pair) is work.
                let (have, given) = (b.len_at(&full), value_len(&v));
                let units = match op {
                    AssignOp::Set => 1,
                    AssignOp::Append => have + given,
                    AssignOp::Remove if removes_by_hash(&v) => have + given,
                    AssignOp::Remove => have.saturating_mul(given.max(1)),
                };
                self.work(cx.module, item.span, units as u64)?;
                b.assign(&full, *op, v, item.span, &fty).map_err(|msg| {
                    self.report(cx.module, Diagnostic::error("E0201", item.span, msg))
                })
            }
        }
    }

    /// Resolves a dotted path below `prefix` (of type `ty`): the full path
    /// and the type at its end. Unknown fields are E0202 with a suggestion.
    pub(super) fn walk_path(
        &self,
        m: ModuleId,
        prefix: &FieldPath,
        ty: &Ty,
        path: &ast::FieldPath,
    ) -> R<(FieldPath, Ty)> {
        let mut full = prefix.clone();
        let mut t = ty.clone();
        for seg in &path.segments {
            t = match t {
                Ty::Optional(inner) => *inner,
                other => other,
            };
            let next = match &t {
                Ty::Record(rt) => match rt.field(&seg.name) {
                    Some(ft) => ft,
                    None => {
                        let fields: Vec<&str> = rt.fields().iter().map(|(n, _, _)| *n).collect();
                        let where_ = if full.is_empty() {
                            rt.name().to_string()
                        } else {
                            format!("`{full}` ({})", rt.name())
                        };
                        let mut d = Diagnostic::error(
                            "E0202",
                            seg.span,
                            format!("unknown field `{}` in {where_}", seg.name),
                        );
                        d = match did_you_mean(&seg.name, fields.iter().copied())
                            .map(str::to_string)
                            .or_else(|| crate::schema::alias(*rt, &seg.name))
                        {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_help(format!("fields: {}", fields.join(", "))),
                        };
                        return Err(self.report(m, d));
                    }
                },
                Ty::Map(et) => (**et).clone(),
                Ty::Any => Ty::Any,
                Ty::Env => {
                    return self.err(
                        m,
                        "E0211",
                        seg.span,
                        format!("`{}` is an env; change it with `… with {{ … }}`", full),
                    )
                }
                other => {
                    return self.err(
                        m,
                        "E0202",
                        seg.span,
                        format!("`{}` is a {other} and has no field `{}`", full, seg.name),
                    )
                }
            };
            full.push(match &t {
                Ty::Record(rt) => crate::schema::seg(*rt, &seg.name),
                _ => Seg::Key(seg.name.as_str().into()),
            });
            t = next;
        }
        Ok((full, t))
    }
}
