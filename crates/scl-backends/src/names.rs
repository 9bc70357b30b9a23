//! Names derived from env and service names for the formats that restrict
//! them: Kubernetes object names and image repositories.

/// The longest object name sclc derives: Kubernetes names a Job's pods
/// `<job>-<5 random>` and a PyTorchJob's `<job>-worker-<index>`, and each must
/// stay a 63-character DNS label (RFC 1123 §2.1 as Kubernetes applies it);
/// 52 is the limit Kubernetes itself applies to CronJob names for the same
/// reason.
pub const MAX_OBJECT_NAME: usize = 52;

/// The DNS-1035 label made from an env or service name: ASCII letters
/// lower-cased, every other character that is not `[a-z0-9]` becomes `-`,
/// runs of `-` become one, and `-` or digits at the start and `-` at the end
/// are removed (`bert_train` → `bert-train`, `_Stack.v2` → `stack-v2`).
/// Kubeflow's PyTorchJob webhook requires a DNS-1035 label
/// (`[a-z]([-a-z0-9]*[a-z0-9])?`), stricter than the RFC 1123 names of core
/// kinds, so one rule serves every kind.
///
/// # Errors
/// A sentence when nothing is left (`_` or `__9`) or the result is longer
/// than [`MAX_OBJECT_NAME`].
pub fn object_name(name: &str) -> Result<String, String> {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || (c.is_ascii_digit() && !out.is_empty()) {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        return Err(format!(
            "`{name}` has no letter to start a Kubernetes object name with ([a-z] then [a-z0-9-])"
        ));
    }
    if out.len() > MAX_OBJECT_NAME {
        return Err(format!(
            "the object name `{out}` made from `{name}` is {} characters long, more than the {MAX_OBJECT_NAME} that leave room for the names Kubernetes gives its pods",
            out.len()
        ));
    }
    Ok(out)
}

/// One component of an image repository made from a name: lower-cased, every
/// run of characters outside `[a-z0-9]` becomes one `-`, trimmed of `-`
/// (`Web UI` → `web-ui`); `env` when nothing is left. Kept within the
/// distribution reference grammar (`[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`).
/// `_` is kept between alphanumerics (`bert_train` stays).
pub fn repository_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep: Option<char> = None;
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if let Some(s) = sep.take() {
                if !out.is_empty() {
                    out.push(s);
                }
            }
            out.push(c);
        } else if c == '_' {
            sep.get_or_insert('_');
        } else {
            sep = Some('-');
        }
    }
    if out.is_empty() {
        "env".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names() {
        for (a, b) in [
            ("bert_train", "bert-train"),
            ("_Stack.v2", "stack-v2"),
            ("a__b", "a-b"),
            ("x-", "x"),
            ("9lives", "lives"),
            ("Ünï", "n"),
        ] {
            assert_eq!(object_name(a).as_deref(), Ok(b), "{a}");
        }
        assert!(object_name("_").is_err());
        assert!(object_name("__9").is_err());
        assert!(object_name(&"a".repeat(53)).is_err());
        assert_eq!(object_name(&"a".repeat(52)).unwrap().len(), 52);
    }

    #[test]
    fn object_names_are_dns_1035_labels() {
        let ok = |s: &str| {
            let b = s.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_lowercase()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && *b.last().unwrap() != b'-'
        };
        for s in ["a", "A-", "a b c", "x!!y", "é_x", "a.-_b", "Z9_"] {
            if let Ok(n) = object_name(s) {
                assert!(ok(&n), "{s} -> {n}");
            }
        }
    }

    #[test]
    fn repository_components() {
        assert_eq!(repository_component("bert_train"), "bert_train");
        assert_eq!(repository_component("Web UI"), "web-ui");
        assert_eq!(repository_component("a__b"), "a_b");
        assert_eq!(repository_component("_x_"), "x");
        assert_eq!(repository_component("-"), "env");
    }
}
