//! The record being built by applying items, with the writes the diamond
//! rule needs and the provenance of every written path.

use super::*;

/// Accumulates one env (or record literal): the record, the writes for the
/// diamond rule, and the origin of every written path.
pub(crate) struct Builder {
    pub record: Record,
    pub(super) track: bool,
    /// Record writes for the diamond rule (not needed for a single chain).
    pub(super) track_writes: bool,
    /// The layer being applied: its position, name and module.
    pub layer: usize,
    pub layer_name: Arc<str>,
    pub layer_module: ModuleId,
    pub writes: BTreeMap<FieldPath, Vec<Write>>,
    pub origins: Origins,
}

impl Builder {
    pub(super) fn new(track: bool) -> Builder {
        Builder {
            record: Record::new(),
            track,
            track_writes: track,
            layer: 0,
            layer_name: Arc::from(""),
            layer_module: ModuleId(0),
            writes: BTreeMap::new(),
            origins: Origins::default(),
        }
    }

    pub(super) fn from_applied(a: &Applied) -> Builder {
        Builder {
            record: (*a.record).clone(),
            track: true,
            track_writes: a.track_writes,
            layer: 0,
            layer_name: Arc::from(""),
            layer_module: ModuleId(0),
            writes: a.writes.clone(),
            origins: Origins::over(&a.origins),
        }
    }

    /// The state to keep for the envs that extend this one; `origins` is
    /// the builder's, already moved into the env's `FinalEnv`.
    pub(super) fn into_applied(self, record: &Arc<Record>, origins: &Arc<Origins>) -> Applied {
        Applied {
            record: record.clone(),
            track_writes: self.track_writes,
            writes: self.writes,
            origins: origins.clone(),
        }
    }

    /// The record at `path` of `rec`, made (replacing what is not a
    /// record) where missing.
    pub(super) fn slot<'a>(rec: &'a mut Record, path: &[Seg]) -> &'a mut Record {
        let mut cur = rec;
        for seg in path {
            if !matches!(cur.get_str(seg.as_str()), Some(Value::Record(_))) {
                cur.insert(seg.as_str().into(), Value::Record(Arc::new(Record::new())));
            }
            let Some(Value::Record(r)) = cur.get_mut(seg.as_str()) else {
                unreachable!("just made")
            };
            cur = Arc::make_mut(r);
        }
        cur
    }

    /// The length of the list or map at `path` (0 if there is none).
    pub(super) fn len_at(&self, path: &FieldPath) -> usize {
        let mut cur = &self.record;
        let Some((last, parent)) = path.segments().split_last() else {
            return 0;
        };
        for seg in parent {
            match cur.get_str(seg.as_str()) {
                Some(Value::Record(r)) => cur = r,
                _ => return 0,
            }
        }
        cur.get_str(last.as_str()).map_or(0, value_len)
    }

    pub(super) fn ensure_record(&mut self, path: &FieldPath) {
        Builder::slot(&mut self.record, path.segments());
    }

    /// Records that the current layer wrote `value` at `key`; `existed`
    /// says whether the record held a value there before (what the write
    /// replaced).
    pub(super) fn note_write(&mut self, key: FieldPath, value: &Value, span: Span, existed: bool) {
        if !self.track {
            return;
        }
        let replaced = if existed {
            self.previous_writer(&key, matches!(value, Value::Record(_)))
        } else {
            None
        };
        // A record written whole replaces what was recorded below it (only a
        // record can have paths below it).
        if matches!(value, Value::Record(_)) {
            self.forget_below(&key);
        }
        if self.track_writes {
            self.writes.entry(key.clone()).or_default().push(Write {
                layer: self.layer,
                value: value.clone(),
                span,
            });
        }
        let w = Origin {
            position: self.layer,
            layer: self.layer_name.clone(),
            module: self.layer_module,
            span,
            replaced,
        };
        self.origins.insert(key, w);
    }

    /// The other layer whose value at `key` a write replaces: for a record
    /// written whole, the last one that wrote it or a path below it; else
    /// the one that wrote `key` itself; else the one that wrote the nearest
    /// enclosing record whole (`python = {…}`, then `python.version = …`).
    /// `None` when the current layer wrote it last.
    fn previous_writer(&self, key: &FieldPath, record: bool) -> Option<Arc<str>> {
        let other = |o: &Origin| (o.position != self.layer).then(|| o.layer.clone());
        if record {
            // The value held parts written by several layers: the last one.
            let below = self.origins.paths_below(key);
            let last = self
                .origins
                .get(key)
                .into_iter()
                .chain(below.iter().filter_map(|k| self.origins.get(k)))
                .filter(|o| o.position != self.layer)
                .max_by_key(|o| o.position)
                .map(|o| o.layer.clone());
            if last.is_some() {
                return last;
            }
        }
        self.origins.nearest(key).and_then(other)
    }

    /// Drops the provenance of `key` and of every path below it.
    pub(super) fn forget(&mut self, key: &FieldPath) {
        if !self.track {
            return;
        }
        self.origins.remove(key);
        self.forget_below(key);
    }

    /// Drops the provenance of every path below `key`.
    pub(super) fn forget_below(&mut self, key: &FieldPath) {
        for k in self.origins.paths_below(key) {
            self.origins.remove(&k);
        }
    }

    /// `+=`/`-=` on a list: the last env to change it, but nothing was replaced.
    pub(super) fn note_touch(&mut self, key: FieldPath, span: Span) {
        if !self.track {
            return;
        }
        self.origins.insert(
            key,
            Origin {
                position: self.layer,
                layer: self.layer_name.clone(),
                module: self.layer_module,
                span,
                replaced: None,
            },
        );
    }

    /// Applies `=`, `+=` or `-=` of `v` at `path` (whose type is `ty`).
    pub(super) fn assign(
        &mut self,
        path: &FieldPath,
        op: AssignOp,
        v: Value,
        span: Span,
        ty: &Ty,
    ) -> Result<(), String> {
        let key = path.clone();
        let (last, parent) = path.segments().split_last().expect("paths are never empty");
        let last = last.as_str();
        let is_map = matches!(ty, Ty::Map(_))
            || (matches!(ty, Ty::Any) && matches!(v, Value::Record(_)) && op == AssignOp::Append);
        match op {
            AssignOp::Set => {
                let old = Builder::slot(&mut self.record, parent).insert(last.into(), v.clone());
                self.note_write(key, &v, span, old.is_some());
            }
            AssignOp::Append => {
                let rec = Builder::slot(&mut self.record, parent);
                let cur = rec.get_str(last).cloned();
                match (cur, v) {
                    (None | Some(Value::List(_)), Value::List(new)) if !is_map => {
                        let old: &[Value] = match rec.get_str(last) {
                            Some(Value::List(old)) => old,
                            _ => &[],
                        };
                        // Exactly the room needed: the list is kept as is.
                        let mut items = Vec::with_capacity(old.len() + new.len());
                        items.extend(old.iter().cloned());
                        items.extend(new.iter().cloned());
                        rec.insert(last.into(), Value::List(Arc::new(items)));
                        self.note_touch(key, span);
                    }
                    (cur, Value::Record(new)) => {
                        let mut merged = match cur {
                            Some(Value::Record(old)) => (*old).clone(),
                            _ => Record::new(),
                        };
                        let mut writes = Vec::new();
                        for (k, x) in new.iter() {
                            let old = merged.insert(k.clone(), x.clone());
                            if !is_type_mark(k) {
                                writes.push((key.key(k), x.clone(), old.is_some()));
                            }
                        }
                        rec.insert(last.into(), Value::Record(Arc::new(merged)));
                        for (k, x, existed) in writes {
                            self.note_write(k, &x, span, existed);
                        }
                    }
                    (_, v) => {
                        return Err(format!(
                            "`+=` on `{key}` needs a list or map value, found {}",
                            v.type_name()
                        ))
                    }
                }
            }
            AssignOp::Remove => {
                let rec = Builder::slot(&mut self.record, parent);
                match (rec.get_str(last).cloned(), v) {
                    (Some(Value::Record(old)), Value::List(keys))
                        if is_map || matches!(ty, Ty::Any) =>
                    {
                        let mut m = (*old).clone();
                        let mut gone = Vec::new();
                        for k in keys.iter() {
                            if let Value::Str(s) = k {
                                if m.remove(&**s).is_some() {
                                    gone.push(key.key(s));
                                }
                            }
                        }
                        rec.insert(last.into(), Value::Record(Arc::new(m)));
                        // A removed key has no provenance any more.
                        for g in gone {
                            self.forget(&g);
                        }
                    }
                    (Some(Value::List(old)), Value::List(rm)) => {
                        let kept: Vec<Value> = if removes_by_hash(&Value::List(rm.clone())) {
                            // Strings (the common case: packages, flags) by
                            // hash: linear, not a pass over `rm` per element.
                            let gone: HashSet<&str> = rm
                                .iter()
                                .filter_map(|r| match r {
                                    Value::Str(s) => Some(&**s),
                                    _ => None,
                                })
                                .collect();
                            old.iter()
                                .filter(|x| !matches!(x, Value::Str(s) if gone.contains(&**s)))
                                .cloned()
                                .collect()
                        } else {
                            old.iter()
                                .filter(|x| !rm.iter().any(|r| values_equal(x, r)))
                                .cloned()
                                .collect()
                        };
                        rec.insert(last.into(), Value::List(Arc::new(kept)));
                    }
                    (None, Value::List(_)) => {}
                    (_, v) => {
                        return Err(format!(
                            "`-=` on `{key}` needs a list, found {}",
                            v.type_name()
                        ))
                    }
                }
                self.note_touch(key, span);
            }
        }
        Ok(())
    }
}
