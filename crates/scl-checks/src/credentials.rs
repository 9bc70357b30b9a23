//! `W0504`: a credential written as plain text. A plain value ends up in
//! the image's layers (`ENV`), the pod spec and every lowered file a
//! reviewer reads; `secret(...)` keeps it out of all of them.
//!
//! Where: `vars` (by name — `*_TOKEN`, `*_KEY`, `*PASSWORD*`, `*SECRET*`,
//! `*_PAT` — or by value), `labels`, the command lines (`setup`, `command`,
//! `entrypoint`, `test`) by value, and index URLs with a password in them.
//! Values are recognized by the published shapes of common tokens:
//! Hugging Face (`hf_…`), GitHub (`ghp_…`, `github_pat_…`), GitLab
//! (`glpat-…`), AWS access key ids (`AKIA…`), OpenAI (`sk-…`), Slack
//! (`xox?-…`), Google API keys (`AIza…`), Weights & Biases keys are
//! caught by their name (`WANDB_API_KEY`).

use std::sync::LazyLock;

use scl_ir::VarValue;

use crate::{Cx, Finding};

/// Token shapes, each with the service it belongs to.
static SHAPES: LazyLock<Vec<(regex::Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"\bhf_[A-Za-z0-9]{30,}\b", "a Hugging Face token"),
        (r"\bghp_[A-Za-z0-9]{36}\b", "a GitHub token"),
        (r"\bgithub_pat_[A-Za-z0-9_]{40,}\b", "a GitHub token"),
        (r"\bglpat-[A-Za-z0-9_-]{20,}\b", "a GitLab token"),
        (r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id"),
        (r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}\b", "an OpenAI-style API key"),
        (r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b", "a Slack token"),
        (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key"),
    ]
    .into_iter()
    .map(|(r, what)| (regex::Regex::new(r).expect("a valid pattern"), what))
    .collect()
});

/// What kind of token `value` holds, by its shape.
pub(crate) fn token_shape(value: &str) -> Option<&'static str> {
    SHAPES
        .iter()
        .find(|(r, _)| r.is_match(value))
        .map(|(_, what)| *what)
}

/// Whether a variable name says it holds a credential.
pub(crate) fn credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_TOKEN")
        || n == "TOKEN"
        || n.ends_with("_KEY")
        || n.ends_with("_PAT")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n.contains("SECRET")
}

/// Whether a value under a credential's name is no credential itself: empty,
/// a path, a `${…}` reference, or a word such as `none`.
fn harmless(value: &str) -> bool {
    let v = value.trim();
    v.is_empty()
        || v.starts_with('/')
        || v.starts_with("./")
        || v.starts_with('$')
        || ["none", "null", "false", "true", "0", "1", "changeme"]
            .contains(&v.to_ascii_lowercase().as_str())
}

fn finding(field: String, what: String, fix: String) -> Finding {
    Finding::warning("W0504", field, format!("{what} is written as plain text: it ends up in the image, the job's spec and every lowered file"))
        .help(fix)
}

pub(crate) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let spec = cx.spec;
    for (k, v) in &spec.vars {
        let VarValue::Plain(value) = v else {
            continue;
        };
        let field = format!("vars.{}", scl_ir::path::quote_segment(k));
        let what = match token_shape(value) {
            Some(shape) => Some(format!("`{k}` holds what looks like {shape}, and it")),
            None if credential_name(k) && !harmless(value) => {
                Some(format!("`{k}` looks like a credential, and it"))
            }
            None => None,
        };
        if let Some(what) = what {
            out.push(finding(
                field,
                what,
                format!(
                    "make it a secret the runner provides: `vars.{k} = secret(\"{}\", key = \"{}\")`",
                    k.to_ascii_lowercase().replace('_', "-"),
                    k.to_ascii_lowercase()
                ),
            ));
        }
    }
    for (k, v) in &spec.labels {
        if let Some(shape) = token_shape(v) {
            out.push(finding(
                format!("labels.{}", scl_ir::path::quote_segment(k)),
                format!("label `{k}` holds what looks like {shape}, and it"),
                "remove it from the labels; give the job the credential as a secret (`vars.NAME = secret(...)`)".into(),
            ));
        }
    }
    let lines = [
        ("setup", &spec.setup),
        ("command", &spec.command),
        ("entrypoint", &spec.entrypoint),
        ("test", &spec.test),
    ];
    for (name, list) in lines {
        for (i, l) in list.iter().enumerate() {
            if let Some(shape) = token_shape(l) {
                out.push(finding(
                    format!("{name}[{i}]"),
                    format!("`{name}[{i}]` holds what looks like {shape}, and it"),
                    "read it from a variable that is a secret (`vars.TOKEN = secret(...)`, then `$TOKEN`)".into(),
                ));
            }
        }
    }
    if let Some(py) = &spec.python {
        let urls = py
            .index_url
            .iter()
            .map(|u| ("python.index_url".to_string(), u))
            .chain(
                py.extra_index_urls
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (format!("python.extra_index_urls[{i}]"), u)),
            );
        for (field, u) in urls {
            if has_password(u) {
                out.push(finding(
                    field.clone(),
                    format!("`{field}` has a password in its URL, and it"),
                    "drop the `user:password@` part and give the credentials as `python.index_credentials = secret(...)` (a netrc file)".into(),
                ));
            }
        }
    }
}

/// Whether a URL carries `user:password@`.
fn has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':') || token_shape(userinfo).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_names() {
        assert_eq!(token_shape("hf_abcdefghijklmnopqrstuvwxyz0123456789"), Some("a Hugging Face token"));
        assert_eq!(token_shape("AKIAIOSFODNN7EXAMPLE"), Some("an AWS access key id"));
        assert_eq!(token_shape("ghp_0123456789abcdefghijklmnopqrstuvwxyz"), Some("a GitHub token"));
        assert_eq!(token_shape("python train.py --lr 3e-4"), None);
        assert!(credential_name("WANDB_API_KEY"));
        assert!(credential_name("db_password"));
        assert!(!credential_name("CUDA_VISIBLE_DEVICES"));
        assert!(!credential_name("KEYBOARD"));
        assert!(harmless("/run/secrets/key"));
        assert!(!harmless("s3cr3t"));
        assert!(has_password("https://me:pw@pypi.example.com/simple"));
        assert!(!has_password("https://pypi.example.com/simple"));
        assert!(!has_password("https://me@pypi.example.com/simple"));
    }
}
