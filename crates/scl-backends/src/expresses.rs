//! What a target expresses of the IR, declared by each backend, and the
//! "not expressible" warnings computed from that declaration and the IR
//! alone: the compiler knows no backend, and a backend writes no warning by
//! hand for a field it does not write.
//!
//! A declaration names IR field paths (`python.version`, `resources`; a
//! path covers every field below it) in three lists: the fields the target
//! writes, the fields it does not write with what happens instead (each is a
//! warning when the field is set), and the fields that mean nothing for the
//! target (no warning, with the reason). A set field in none of the lists
//! is a warning too, with a generic text, so a field added to the IR is
//! never dropped silently by a target that was not taught about it.

use crate::FieldWarning;
use scl_ir::{EnvSpec, FieldPath};

/// A target's declaration of the IR fields it expresses.
#[derive(Clone, Copy, Debug)]
pub struct Expresses {
    /// The target's name, as `sclc build --target` takes it.
    pub target: &'static str,
    /// IR paths the target writes into its files.
    pub writes: &'static [&'static str],
    /// IR paths the target does not write, each with one sentence saying
    /// what happens instead: a warning when the field is set, in this order.
    pub instead: &'static [(&'static str, &'static str)],
    /// IR paths that need nothing from this target, with the reason.
    pub not_needed: &'static [(&'static str, &'static str)],
}

impl Expresses {
    fn declared(&self) -> impl Iterator<Item = FieldPath> + '_ {
        self.writes
            .iter()
            .copied()
            .chain(self.instead.iter().map(|(p, _)| *p))
            .chain(self.not_needed.iter().map(|(p, _)| *p))
            .map(FieldPath::parse)
    }
}

/// True when a field's IR value is set: present, and not an empty list or
/// object (the IR leaves unset optionals and empty lists out, but a record
/// whose optional fields are all unset is `{}`).
fn is_set(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Object(o) => !o.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

fn at<'a>(ir: &'a serde_json::Value, path: &FieldPath) -> Option<&'a serde_json::Value> {
    let mut cur = ir;
    for seg in path.segments() {
        cur = cur.get(seg.as_str())?;
    }
    Some(cur)
}

/// The warnings for the fields of `spec` (one env, not its services: a
/// backend lowers each service on its own) that `target` does not express:
/// first the set fields of [`Expresses::instead`], in its order, then every
/// set field the declaration does not name, in IR order. Field paths are
/// relative to `spec` (a caller lowering a service adds its prefix).
pub fn unexpressed(spec: &EnvSpec, target: &Expresses) -> Vec<FieldWarning> {
    let ir = match serde_json::to_value(spec) {
        Ok(v) => v,
        // The IR is plain data: serializing it cannot fail.
        Err(_) => return Vec::new(),
    };
    let mut out = Vec::new();
    for (path, text) in target.instead {
        if at(&ir, &FieldPath::parse(path)).is_some_and(is_set) {
            out.push(FieldWarning {
                field: path.to_string(),
                message: text.to_string(),
            });
        }
    }
    let declared: Vec<FieldPath> = target.declared().collect();
    let mut todo = vec![(FieldPath::root(), &ir)];
    while let Some((path, v)) = todo.pop() {
        let Some(obj) = v.as_object() else { continue };
        // In reverse, so that the stack gives IR order.
        for (k, x) in obj.iter().rev() {
            if path.is_empty() && k == "apiVersion" {
                continue;
            }
            let p = path.key(k);
            if declared.iter().any(|d| p.starts_with(d)) || !is_set(x) {
                continue;
            }
            if declared.iter().any(|d| d.starts_with(&p)) {
                // Some fields below it are declared: look at each.
                todo.push((p, x));
                continue;
            }
            out.push(FieldWarning {
                field: p.to_string(),
                message: format!(
                    "the {} target does not write this field; it is left out",
                    target.target
                ),
            });
        }
    }
    // The generic warnings came in stack order; keep `instead` first.
    let n = out
        .iter()
        .position(|w| !target.instead.iter().any(|(p, _)| *p == w.field))
        .unwrap_or(out.len());
    out[n..].sort_by(|a, b| a.field.cmp(&b.field));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scl_ir::*;

    fn spec() -> EnvSpec {
        EnvSpec {
            base: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            python: Some(Python {
                index_credentials: None,
                version: Some("3.12".into()),
                manager: PythonManager::Pip,
                packages: vec!["numpy".into()],
                requirements: Vec::new(),
                index_url: None,
                extra_index_urls: Vec::new(),
            }),
            resources: Some(Resources {
                requests: None,
                limits: None,
            }),
            ports: vec![80],
            distributed: Some(Distributed {
                backend: Backend::Nccl,
                launcher: Launcher::Torchrun,
                nodes: 1,
                procs_per_node: 1,
                elastic: None,
            }),
            ..EnvSpec::default()
        }
    }

    fn fields(w: &[FieldWarning]) -> Vec<&str> {
        w.iter().map(|w| w.field.as_str()).collect()
    }

    #[test]
    fn every_set_field_a_target_does_not_name_is_a_warning() {
        let none = Expresses {
            target: "t",
            writes: &[],
            instead: &[],
            not_needed: &[],
        };
        // `resources` is `{}` (nothing set): no warning.
        let w = unexpressed(&spec(), &none);
        assert_eq!(fields(&w), ["base", "distributed", "ports", "python"]);
        assert_eq!(
            w[0].message,
            "the t target does not write this field; it is left out"
        );
    }

    #[test]
    fn declared_fields_cover_the_fields_below_them() {
        let t = Expresses {
            target: "t",
            writes: &["base", "python.packages", "python.manager"],
            instead: &[("distributed", "run by another target")],
            not_needed: &[("ports", "nothing listens at build time")],
        };
        let w = unexpressed(&spec(), &t);
        assert_eq!(fields(&w), ["distributed", "python.version"]);
        assert_eq!(w[0].message, "run by another target");
    }

    #[test]
    fn instead_keeps_its_order() {
        let mut s = spec();
        s.resources = Some(Resources {
            requests: Some(ResourceList {
                cpu: Some(1000),
                memory: None,
                gpu: None,
            }),
            limits: None,
        });
        let t = Expresses {
            target: "t",
            writes: &["base", "python", "ports"],
            instead: &[("resources", "r"), ("distributed", "d")],
            not_needed: &[],
        };
        assert_eq!(fields(&unexpressed(&s, &t)), ["resources", "distributed"]);
    }
}
