//! Writing the YAML files of the Kubernetes, Kubeflow and compose targets.
//!
//! Files are serialized from serde structs by `serde-saphyr` (maintained,
//! serde-based, no unsafe C port), never by text templates. It was chosen
//! over `serde_yaml_ng` (the conda target's writer) and `serde_norway`
//! because those two quote only what a YAML 1.2 reader would take for
//! another type: they write `yes`, `on`, `1_000`, `1:20` and `2024-01-31`
//! unquoted, and the readers of these files are YAML 1.1 readers, for which
//! those are a boolean, integers and a date: Kubernetes'
//! `sigs.k8s.io/yaml` (go-yaml v2: also `y`/`n`), PyYAML
//! (`kubernetes-validate`), and in part compose's go-yaml v3 (underscored
//! numbers). `serde-saphyr` quotes all of them (checked by
//! [`misread`]'s test), so `redis-server --appendonly yes` is written as it
//! is meant. Every file is read back and compared before it is returned
//! ([`to_string`]); [`misread`] is kept as a guard: a string the writer
//! leaves plain that a YAML 1.1 reader reads as another type is refused
//! ([`crate::ErrorKind::Misread`]) rather than written.

use std::sync::OnceLock;

/// What a YAML 1.1 reader (PyYAML's `resolver.py` implicit resolvers, plus
/// go-yaml v2's `y`/`Y`/`n`/`N` booleans, `0o` octals and `strconv`'s
/// `inf`/`nan`) reads `s` as when `serde-saphyr` writes it as a plain
/// scalar: `Some("a boolean")` for `yes`, `Some("an integer")` for `1_000`
/// or `1:20`, `Some("a date")` for `2024-01-31`; `None` when it comes back
/// as the same string (the writer quotes it, writes a block, or it is text
/// in every reader).
pub fn misread(s: &str) -> Option<&'static str> {
    let written = serde_saphyr::to_string(&s).ok()?;
    if written.starts_with(['\'', '"', '|', '>']) {
        return None;
    }
    // The writer's own text is what the reader resolves.
    resolve(written.trim_end_matches('\n'))
}

/// The type a YAML 1.1 reader gives the plain scalar `plain` (the
/// resolvers of [`misread`]), `None` for a string.
pub fn resolve(plain: &str) -> Option<&'static str> {
    static RESOLVERS: OnceLock<Vec<(regex::Regex, &'static str)>> = OnceLock::new();
    let resolvers = RESOLVERS.get_or_init(|| {
        [
            (
                r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|y|Y|n|N)$",
                "a boolean",
            ),
            (
                r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?[0-9_]*\.?[0-9_]+[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[-+](?i:inf|infinity|nan))$",
                "a number",
            ),
            (
                r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?[0-9][0-9_]*|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
                "an integer",
            ),
            (r"^(?:<<)$", "a merge key"),
            (r"^(?:~|null|Null|NULL|)$", "null"),
            (
                r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$",
                "a date",
            ),
            (r"^(?:=)$", "a YAML value key"),
        ]
        .into_iter()
        .map(|(re, kind)| (regex::Regex::new(re).expect("resolver regex"), kind))
        .collect()
    });
    resolvers
        .iter()
        .find(|(re, _)| re.is_match(plain))
        .map(|(_, kind)| *kind)
}

/// Every string of `v` (map keys and values, at any depth) that [`misread`]
/// finds, with what it would be read as, in document order.
pub fn misread_in(v: &serde_json::Value) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        match v {
            serde_json::Value::String(s) => {
                if let Some(k) = misread(s) {
                    out.push((s.clone(), k));
                }
            }
            serde_json::Value::Array(a) => todo.extend(a.iter().rev()),
            serde_json::Value::Object(o) => {
                for (k, x) in o.iter().rev() {
                    todo.push(x);
                    if let Some(kind) = misread(k) {
                        out.push((k.clone(), kind));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `value` as YAML (`serde-saphyr`), read back and compared with `value`
/// before it is returned: an `Err` (a sentence) when the writer fails or the
/// text does not read back as the same data.
pub fn to_string(value: &serde_json::Value) -> Result<String, String> {
    let text = serde_saphyr::to_string(value).map_err(|e| e.to_string())?;
    let back: serde_json::Value = serde_saphyr::from_str(&text)
        .map_err(|e| format!("the written YAML does not read back: {e}"))?;
    if &back != value {
        return Err("the written YAML reads back as other data".into());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::misread;

    #[test]
    fn yaml_1_1_types_are_found() {
        // The writer quotes every one of these.
        for s in [
            "yes",
            "Off",
            "y",
            "1_000",
            "1:20",
            "0o17",
            "2024-01-31",
            "<<",
            "=",
            "1_0.5",
            "-inf",
        ] {
            assert_eq!(misread(s), None, "{s}");
        }
        for (s, kind) in [
            ("yes", "a boolean"),
            ("Off", "a boolean"),
            ("y", "a boolean"),
            ("1_000", "an integer"),
            ("1:20", "an integer"),
            ("0o17", "an integer"),
            ("2024-01-31", "a date"),
            ("<<", "a merge key"),
            ("=", "a YAML value key"),
            ("1_0.5", "a number"),
            ("-inf", "a number"),
        ] {
            assert_eq!(super::resolve(s), Some(kind), "{s}");
        }
        // Quoted by the writer, or text for every reader.
        for s in [
            "null", "~", "0x1", "true", "1e3", "a: b", "#x", " x", "plain", "yess", "a\nyes", "",
            "v1.2", "1.2.3", "NaNo",
        ] {
            assert_eq!(misread(s), None, "{s}");
        }
    }
}
