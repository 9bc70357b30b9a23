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
        (
            r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}\b",
            "an OpenAI-style API key",
        ),
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

/// Whether a variable name says it holds a credential: its last
/// `_`-separated word is `TOKEN`, `KEY`, `SECRET`, `PASSWORD`, `PASSWD`,
/// `PWD` or `PAT` (`WANDB_API_KEY`, `DB_PASSWORD`), and it is not one of the
/// tokenizer settings (`EOS_TOKEN`, `PAD_TOKEN`, …) or a count
/// (`MAX_NEW_TOKEN`).
pub(crate) fn credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    let words: Vec<&str> = n.split('_').filter(|w| !w.is_empty()).collect();
    let Some(last) = words.last() else {
        return false;
    };
    if !["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PWD", "PAT"].contains(last) {
        return false;
    }
    let first = words[0];
    let tokenizer = [
        "EOS", "BOS", "PAD", "UNK", "SEP", "CLS", "MASK", "START", "END",
    ];
    let tokenizer_setting = words.len() == 2 && *last == "TOKEN" && tokenizer.contains(&first);
    let count = ["MAX", "MIN", "NUM", "N"].contains(&first);
    !(tokenizer_setting || count)
}

/// Whether a value under a credential's name is no credential itself: a
/// path (`/run/secrets/x`, `./key`, `~/.ssh/id`, `secrets/db.txt`), a
/// `${…}` reference, a URL or ARN without a password, a plain word or
/// number (`none`, `512`, `user_id`), or anything shorter than 8
/// characters. A credential is long and mixes letters and digits.
fn harmless(value: &str) -> bool {
    let v = value.trim();
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    v.len() < 8
        || v.contains('/')
        || v.starts_with('~')
        || v.starts_with('$')
        || v.starts_with("arn:")
        || v.contains(char::is_whitespace)
        || !(letters && digits)
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
                    "make it a secret the runner provides: `vars.{} = secret(\"{}\", key = \"value\")`",
                    scl_ir::path::quote_segment(k),
                    secret_name(k)
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
    // Other text that reaches the lowered files: direct references of
    // packages (`pkg @ git+https://TOKEN@…`), conda channels, asset URLs,
    // the description.
    let mut texts: Vec<(String, &str)> = Vec::new();
    if let Some(py) = &spec.python {
        texts.extend(
            py.packages
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("python.packages[{i}]"), p.as_str())),
        );
    }
    if let Some(c) = &spec.conda {
        texts.extend(
            c.channels
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("conda.channels[{i}]"), p.as_str())),
        );
    }
    for (i, a) in spec.assets.iter().enumerate() {
        if let scl_ir::Asset::Url { url, .. } = a {
            texts.push((format!("assets[{i}]"), url.as_str()));
        }
    }
    if let Some(d) = &spec.description {
        texts.push(("description".to_string(), d.as_str()));
    }
    for (field, t) in texts {
        let what = match token_shape(t) {
            Some(shape) => format!("`{field}` holds what looks like {shape}, and it"),
            None if t.split_whitespace().any(has_password) => {
                format!("`{field}` has a password in a URL, and it")
            }
            None => continue,
        };
        out.push(finding(
            field,
            what,
            "remove the credential: give it to the build or the job as a secret (`secret(...)`: an index's `python.index_credentials`, `huggingface(..., token = secret(...))`, `vars.NAME = secret(...)`)".into(),
        ));
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

/// A Kubernetes Secret name (RFC 1123) for a variable: lower case, runs of
/// other characters as `-` (`HF_TOKEN` → `hf-token`).
fn secret_name(var: &str) -> String {
    let mut out = String::new();
    for c in var.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "credentials".to_string()
    } else {
        out
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
        assert_eq!(
            token_shape("hf_abcdefghijklmnopqrstuvwxyz0123456789"),
            Some("a Hugging Face token")
        );
        assert_eq!(
            token_shape("AKIAIOSFODNN7EXAMPLE"),
            Some("an AWS access key id")
        );
        assert_eq!(
            token_shape("ghp_0123456789abcdefghijklmnopqrstuvwxyz"),
            Some("a GitHub token")
        );
        assert_eq!(token_shape("python train.py --lr 3e-4"), None);
        assert!(credential_name("WANDB_API_KEY"));
        assert!(credential_name("db_password"));
        assert!(!credential_name("CUDA_VISIBLE_DEVICES"));
        assert!(!credential_name("KEYBOARD"));
        for n in [
            "SECRET_NAME",
            "AWS_SECRETS_MANAGER_REGION",
            "VAULT_SECRET_PATH",
            "EOS_TOKEN",
            "PAD_TOKEN",
            "MAX_NEW_TOKEN",
            "PASSWORD_MIN_LENGTH",
            "PASSWORD_FILE",
            "KEY_PATH",
        ] {
            assert!(!credential_name(n), "{n}");
        }
        assert!(harmless("/run/secrets/key"));
        for v in [
            "user_id",
            "datasets/train.parquet",
            "~/.ssh/id_ed25519",
            "secrets/db.txt",
            "arn:aws:kms:us-east-1:1:key/x",
            "512",
            "</s>",
        ] {
            assert!(harmless(v), "{v}");
        }
        assert!(!harmless("3f2a9c0d5e7b41a6"));
        assert_eq!(secret_name("Ä_TOKEN"), "token");
        assert_eq!(secret_name("HF_TOKEN"), "hf-token");
        assert!(has_password("https://me:pw@pypi.example.com/simple"));
        assert!(!has_password("https://pypi.example.com/simple"));
        assert!(!has_password("https://me@pypi.example.com/simple"));
    }
}
