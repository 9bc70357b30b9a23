//! Typing blocks of items: env bodies (against the Env schema), nested
//! blocks, record literals of a schema type, maps, and plain records.

use super::infer::Checker;
use super::messages::field_alias;
use super::types::Type;
use crate::ty::RecordTy;
use scl_diag::{did_you_mean, Diagnostic};
use scl_syntax::ast::*;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Checker<'_> {
    /// An env body (of an env declaration, `X with { … }`, or a record
    /// literal that is an env): items against `Env`, with `self` allowed.
    pub fn env_body(&mut self, block: &Block) {
        let was = std::mem::replace(&mut self.self_ok, true);
        self.block(block, &Type::Schema(RecordTy::Env), &mut Vec::new());
        self.self_ok = was;
    }

    /// A record literal where `want` is expected: checked against it when it
    /// is a schema record, a map or an env (its type then), else `None`.
    pub fn record_against(&mut self, block: &Block, want: &Type) -> Option<Type> {
        match want {
            Type::Schema(rt) => {
                self.block(block, want, &mut Vec::new());
                // Required fields: one that any item sets (in any branch) counts.
                let set = first_segments(block);
                for &(n, _, req) in rt.fields() {
                    if req && !set.iter().any(|s| s == n) {
                        self.out.push(Diagnostic::error(
                            "E0209",
                            block.span,
                            format!("{} needs the field `{n}`", rt.name()),
                        ));
                    }
                }
                Some(want.clone())
            }
            Type::Map(_) => {
                self.block(block, want, &mut Vec::new());
                Some(want.clone())
            }
            Type::Env => {
                self.env_body(block);
                Some(Type::Env)
            }
            _ => None,
        }
    }

    /// Items of `block` inside a record of type `ty`; `prefix` is the path
    /// from the body to the block (for messages).
    pub fn block(&mut self, block: &Block, ty: &Type, prefix: &mut Vec<String>) {
        for item in block.items.iter() {
            match &item.kind {
                ItemKind::Error => {}
                ItemKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    // Both blocks, whatever the condition will be.
                    self.check(cond, &Type::Bool);
                    self.block(then_block, ty, prefix);
                    if let Some(e) = else_block {
                        self.block(e, ty, prefix);
                    }
                }
                ItemKind::Nested { path, body } => {
                    let depth = prefix.len();
                    let ft = self.walk(ty, path, prefix);
                    match ft.strip_optional() {
                        t @ (Type::Schema(_) | Type::Map(_) | Type::Error) => {
                            let t = t.clone();
                            self.block(body, &t, prefix);
                        }
                        other => {
                            let msg = format!(
                                "`{}` is a {other}, not a record: use `{} = …`",
                                prefix.join("."),
                                path.segments.last().map(|s| s.name.as_str()).unwrap_or("")
                            );
                            self.error("E0201", path.span, msg);
                        }
                    }
                    prefix.truncate(depth);
                }
                ItemKind::Assign {
                    path, op, value, ..
                } => {
                    let depth = prefix.len();
                    let ft = self.walk(ty, path, prefix);
                    let vt = match (op, ft.strip_optional()) {
                        (AssignOp::Set, t) => Some(t.clone()),
                        (_, Type::Error) => Some(Type::Error),
                        (AssignOp::Append, t @ (Type::List(_) | Type::Map(_))) => Some(t.clone()),
                        (AssignOp::Remove, t @ Type::List(_)) => Some(t.clone()),
                        (AssignOp::Remove, Type::Map(_)) => Some(Type::list(Type::string())),
                        (_, other) => {
                            let msg = format!(
                                "`{}` works on lists and maps; `{}` is a {other}",
                                if *op == AssignOp::Append { "+=" } else { "-=" },
                                prefix.join(".")
                            );
                            self.error("E0211", item.span, msg);
                            None
                        }
                    };
                    match vt {
                        Some(t) => {
                            self.check(value, &t);
                        }
                        None => {
                            self.infer(value);
                        }
                    }
                    prefix.truncate(depth);
                }
            }
        }
    }

    /// Follows `path` from a record of type `ty`, pushing its segments on
    /// `prefix`; the type at its end (`Error` after an error).
    fn walk(&mut self, ty: &Type, path: &FieldPath, prefix: &mut Vec<String>) -> Type {
        let mut t = ty.clone();
        for seg in &path.segments {
            let next = match t.strip_optional() {
                Type::Schema(rt) => match rt.field_ref(&seg.name) {
                    Some(ft) => Type::from_ty(ft),
                    None => {
                        let fields: Vec<&str> = rt.fields().iter().map(|(n, _, _)| *n).collect();
                        let where_ = if prefix.is_empty() {
                            rt.name().to_string()
                        } else {
                            format!("`{}` ({})", prefix.join("."), rt.name())
                        };
                        let mut d = Diagnostic::error(
                            "E0202",
                            seg.span,
                            format!("unknown field `{}` in {where_}", seg.name),
                        );
                        d = match did_you_mean(&seg.name, fields.iter().copied())
                            .or_else(|| field_alias(*rt, &seg.name))
                        {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_help(format!("fields: {}", fields.join(", "))),
                        };
                        self.out.push(d);
                        return Type::Error;
                    }
                },
                Type::Map(et) => (**et).clone(),
                Type::Error => Type::Error,
                Type::Env => {
                    let msg = format!(
                        "`{}` is an env; change it with `… with {{ … }}`",
                        prefix.join(".")
                    );
                    self.error("E0211", seg.span, msg);
                    return Type::Error;
                }
                other => {
                    let msg = format!(
                        "`{}` is a {other} and has no field `{}`",
                        prefix.join("."),
                        seg.name
                    );
                    self.error("E0202", seg.span, msg);
                    return Type::Error;
                }
            };
            prefix.push(seg.name.to_string());
            // A field name in a path has the field's type (hover).
            self.table.push((seg.span, next.clone()));
            t = next;
        }
        t
    }

    /// A record literal with no expected type: a map `{String: T}` when a
    /// key is quoted, else a plain record of its fields.
    pub fn record_literal(&mut self, block: &Block) -> Type {
        let mut fields = BTreeMap::new();
        let quoted = self.plain_fields(block, &mut fields);
        if !quoted {
            return Type::Record(Arc::new(fields));
        }
        let mut t = Type::Nothing;
        for (k, v) in &fields {
            match super::types::join(&t, v) {
                Some(j) => t = j,
                None => {
                    let d = Diagnostic::error(
                        "E0337",
                        block.span,
                        format!(
                            "a record with quoted keys is a map, whose values have one type: key {k:?} is {v}, the keys before it are {t}"
                        ),
                    )
                    .with_help("give every key a value of one type");
                    self.out.push(d);
                    return Type::Map(Arc::new(Type::Error));
                }
            }
        }
        Type::Map(Arc::new(t))
    }

    /// The fields a block without a type defines; true if a key is quoted.
    fn plain_fields(&mut self, block: &Block, fields: &mut BTreeMap<String, Type>) -> bool {
        let mut quoted = false;
        for item in block.items.iter() {
            match &item.kind {
                ItemKind::Error => {}
                ItemKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    self.check(cond, &Type::Bool);
                    quoted |= self.plain_fields(then_block, fields);
                    if let Some(e) = else_block {
                        quoted |= self.plain_fields(e, fields);
                    }
                }
                ItemKind::Nested { path, body } => {
                    quoted |= path.segments.iter().any(|s| s.quoted);
                    let t = self.record_literal(body);
                    insert_path(fields, &path.segments, t);
                }
                ItemKind::Assign { path, value, .. } => {
                    quoted |= path.segments.iter().any(|s| s.quoted);
                    let t = self.infer(value);
                    insert_path(fields, &path.segments, t);
                }
            }
        }
        quoted
    }
}

/// Sets `a.b.c` in a plain record type.
fn insert_path(fields: &mut BTreeMap<String, Type>, segs: &[PathSegment], t: Type) {
    let Some((first, rest)) = segs.split_first() else {
        return;
    };
    if rest.is_empty() {
        fields.insert(first.name.to_string(), t);
        return;
    }
    let mut inner = match fields.remove(first.name.as_str()) {
        Some(Type::Record(r)) => (*r).clone(),
        _ => BTreeMap::new(),
    };
    insert_path(&mut inner, rest, t);
    fields.insert(first.name.to_string(), Type::Record(Arc::new(inner)));
}

/// The first path segment of every item of a block, `if` blocks included.
fn first_segments(block: &Block) -> Vec<Name> {
    let mut out = Vec::new();
    let mut todo = vec![block];
    while let Some(b) = todo.pop() {
        for item in b.items.iter() {
            match &item.kind {
                ItemKind::Assign { path, .. } | ItemKind::Nested { path, .. } => {
                    if let Some(s) = path.segments.first() {
                        out.push(s.name.clone());
                    }
                }
                ItemKind::If {
                    then_block,
                    else_block,
                    ..
                } => {
                    todo.push(then_block);
                    todo.extend(else_block.iter());
                }
                ItemKind::Error => {}
            }
        }
    }
    out
}
