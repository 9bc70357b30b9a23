//! `W0504`: a credential written as plain text. A plain value ends up in
//! the image's layers (`ENV`), the pod spec and every lowered file a
//! reviewer reads; `secret(...)` keeps it out of all of them.
//!
//! Where: `vars` (by name or by value), `labels`, the command lines
//! (`setup`, `command`, `entrypoint`, `test`), direct references of
//! packages, conda channels, asset URLs and the description by value, and
//! index URLs with a password in them.
//!
//! By name ([`credential_name`]): a variable whose last word is `TOKEN`,
//! `KEY`, `APIKEY`, `PAT` or `PWD`, or with `PASSWORD`, `PASSWD`,
//! `PASSPHRASE` or `SECRET` anywhere in it (`DB_PASSWORD`, `PGPASSWORD`,
//! `SECRET_KEY_BASE`); not a name about a secret rather than of one
//! (`SECRET_NAME`, `PASSWORD_FILE`, `KEY_PATH`), a tokenizer setting
//! (`EOS_TOKEN`, `SPECIAL_TOKEN`), a count (`MAX_NEW_TOKEN`), a key of data
//! (`CACHE_KEY`, `SORT_KEY`) or public material (`PUBLIC_KEY`, `GPG_KEY`, a
//! `FINGERPRINT`). Its value counts ([`harmless`]) unless it is a `$…`
//! reference, a path, a file name (`id_ed25519`, `key.pem`), an ARN, a
//! tokenizer token (`<|endoftext|>`, `[CLS]`) or shorter than 8
//! characters; then, under a password's name (the last word a password)
//! any other value is one, under the other names only a value that looks
//! generated (a run of 8 or more letters and digits mixed, or of 24 or
//! more: not a slug such as `model-v2`).
//!
//! By value ([`token_shape`]), under any name: the published shapes of
//! common tokens: Hugging Face (`hf_…`), GitHub (`ghp_…`, `github_pat_…`),
//! GitLab (`glpat-…`), AWS access key ids (`AKIA…`), OpenAI (`sk-` and 32
//! or more letters and digits; `sk-proj-`, `sk-svcacct-`, `sk-admin-` and
//! 40 or more), Anthropic (`sk-ant-…`), Slack (`xox?-…`), Google API keys
//! (`AIza…`), and PEM private keys (`-----BEGIN … PRIVATE KEY-----`).
//! Shapes whose characters include `-` or `_` must also look generated, so
//! `--run-name sk-learn-baseline-2024-v2` is no key. Weights & Biases keys
//! are caught by their name (`WANDB_API_KEY`).

use std::sync::LazyLock;

use scl_ir::VarValue;

use crate::{Cx, Finding};

/// Token shapes: the pattern, the service it belongs to, and whether the
/// match must also look generated ([`generated`]: the pattern's characters
/// include separators, so a slug could match it).
static SHAPES: LazyLock<Vec<(regex::Regex, &'static str, bool)>> = LazyLock::new(|| {
    [
        (r"\bhf_[A-Za-z0-9]{30,}\b", "a Hugging Face token", false),
        (r"\bghp_[A-Za-z0-9]{36}\b", "a GitHub token", false),
        (r"\bgithub_pat_[A-Za-z0-9_]{40,}\b", "a GitHub token", false),
        (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token", true),
        (
            r"\b(AKIA|ASIA)[0-9A-Z]{16}\b",
            "an AWS access key id",
            false,
        ),
        (r"\bsk-ant-[A-Za-z0-9_-]{32,}", "an Anthropic API key", true),
        (
            r"\bsk-(proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
            "an OpenAI API key",
            true,
        ),
        (r"\bsk-[A-Za-z0-9]{32,}\b", "an OpenAI API key", false),
        (r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "a Slack token", true),
        (r"\bAIza[0-9A-Za-z_-]{35}", "a Google API key", false),
        (
            r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----",
            "a private key",
            false,
        ),
    ]
    .into_iter()
    .map(|(r, what, generated)| {
        (
            regex::Regex::new(r).expect("a valid pattern"),
            what,
            generated,
        )
    })
    .collect()
});

/// Every pattern of [`SHAPES`] in one automaton: one pass over a value
/// says which shapes occur in it at all.
static SHAPE_SET: LazyLock<regex::RegexSet> = LazyLock::new(|| {
    regex::RegexSet::new(SHAPES.iter().map(|(r, _, _)| r.as_str())).expect("valid patterns")
});

/// The shortest text any of [`SHAPES`] matches (`xoxb-` and 10 more
/// characters): a shorter value — most values an env holds — holds no token
/// and is not searched.
const SHORTEST_SHAPE: usize = 15;

/// Texts one of which every match of [`SHAPES`] contains: each pattern's
/// leading literal (each alternative's, for `(AKIA|ASIA)`), case as
/// written (no pattern ignores case). Tested against the patterns.
const SHAPE_LITERALS: &[&str] = &[
    "hf_",
    "ghp_",
    "github_pat_",
    "glpat-",
    "AKIA",
    "ASIA",
    "sk-",
    "xox",
    "AIza",
    "-----BEGIN ",
];

/// Whether `value` contains one of [`SHAPE_LITERALS`]: a value without
/// one (almost every value an env holds) holds no token, and is decided
/// without the patterns, which are then never compiled (about 1 % of a
/// whole `sclc ir` of 1,000 modules, `bench/README.md`).
fn holds_a_shape_literal(value: &str) -> bool {
    let b = value.as_bytes();
    (0..b.len()).any(|i| {
        matches!(b[i], b'h' | b'g' | b'A' | b's' | b'x' | b'-')
            && SHAPE_LITERALS
                .iter()
                .any(|l| b[i..].starts_with(l.as_bytes()))
    })
}

/// What kind of token `value` holds, by its shape (the first of
/// [`SHAPES`], in order, that it holds).
pub(crate) fn token_shape(value: &str) -> Option<&'static str> {
    if value.len() < SHORTEST_SHAPE || !holds_a_shape_literal(value) {
        return None;
    }
    let found = SHAPE_SET.matches(value);
    if !found.matched_any() {
        return None;
    }
    found.iter().find_map(|i| {
        let (r, what, must_look_generated) = &SHAPES[i];
        r.find_iter(value)
            .any(|m| !must_look_generated || generated(m.as_str()))
            .then_some(*what)
    })
}

/// Whether text looks generated rather than written: one of its runs of
/// ASCII letters and digits has 8 or more characters and mixes letters and
/// digits (`3f2a9c0d5e7b41a6`), or has 24 or more (`wJalrXUtnFEMIbPxRfiCY…`).
/// Words and slugs (`model-v2`, `sk-learn-baseline-2024-v2`,
/// `us-east-1`) do not.
fn generated(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric()).any(|run| {
        let letters = run.bytes().any(|b| b.is_ascii_alphabetic());
        let digits = run.bytes().any(|b| b.is_ascii_digit());
        (run.len() >= 8 && letters && digits) || run.len() >= 24
    })
}

/// What a credential's name says about its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// A password (`DB_PASSWORD`, `PGPASSWORD`): people choose them, so any
    /// value that is not a reference, path or file name is one.
    Password,
    /// A token, key or secret (`HF_TOKEN`, `SECRET_KEY_BASE`): generated
    /// values.
    Token,
}

/// The last words of names about a secret rather than of one: where it is
/// (`SECRET_NAME`, `VAULT_SECRET_PATH`, `PASSWORD_FILE`), a rule for it
/// (`PASSWORD_MIN_LENGTH`), an id (`AWS_ACCESS_KEY_ID`).
const ABOUT: &[&str] = &[
    "NAME", "NAMES", "PATH", "FILE", "DIR", "REGION", "LENGTH", "LEN", "ID", "ARN", "MANAGER",
    "PROVIDER", "BACKEND", "STORE", "MOUNT", "VERSION", "TYPE", "KIND", "ENABLED", "REQUIRED",
    "POLICY", "COUNT", "SIZE", "TTL", "ENV",
];

/// Words before `TOKEN` that make it a tokenizer setting (`EOS_TOKEN`,
/// `SPECIAL_TOKEN`), not a credential.
const TOKENIZER: &[&str] = &[
    "EOS",
    "BOS",
    "PAD",
    "UNK",
    "SEP",
    "CLS",
    "MASK",
    "START",
    "END",
    "SPECIAL",
    "ADDITIONAL",
];

/// Words before `KEY` that make it a key of data (`CACHE_KEY`, `SORT_KEY`).
const DATA_KEY: &[&str] = &[
    "CACHE",
    "SORT",
    "PARTITION",
    "PRIMARY",
    "FOREIGN",
    "SHARD",
    "ROUTING",
    "DEDUP",
    "IDEMPOTENCY",
    "LOOKUP",
    "JOIN",
    "GROUP",
    "COLUMN",
    "INDEX",
    "LABEL",
    "TEXT",
    "METRIC",
];

/// Words that make a key public material (`SSH_PUBLIC_KEY`, `GPG_KEY`: a
/// key id or fingerprint, `KEY_FINGERPRINT`), unless the name also says
/// `PRIVATE`.
const PUBLIC: &[&str] = &["PUBLIC", "PUB", "GPG", "PGP", "FINGERPRINT"];

/// Whether a variable name says it holds a credential, and of which kind
/// (see the module doc): `None` for every other name.
pub(crate) fn credential_name(name: &str) -> Option<NameKind> {
    // Every name this answers for holds one of these (`PASSWORD`, `PASSWD`
    // and `PASSPHRASE` hold `PASS`, `APIKEY` holds `KEY`): the others
    // (`HOME`, `LANG`, `PYTHONUNBUFFERED`, most of an env's variables) are
    // answered without copying the name.
    const HINTS: [&[u8]; 6] = [b"PASS", b"PWD", b"SECRET", b"TOKEN", b"KEY", b"PAT"];
    let upper = |b: &u8| b.to_ascii_uppercase();
    let hinted = HINTS.iter().any(|h| {
        name.as_bytes()
            .windows(h.len())
            .any(|w| w.iter().map(upper).eq(h.iter().copied()))
    });
    if !hinted {
        return None;
    }
    classify(name)
}

/// [`credential_name`] without its quick answer for names that hold none
/// of its hints (`tests::the_hints_change_no_answer` compares the two).
fn classify(name: &str) -> Option<NameKind> {
    let n = name.to_ascii_uppercase();
    let words: Vec<&str> = n
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let (&last, before) = words.split_last()?;
    if ABOUT.contains(&last) || ["MAX", "MIN", "NUM", "N"].contains(&words[0]) {
        return None;
    }
    let password = |w: &str| {
        ["PASSWORD", "PASSWD", "PASSPHRASE"]
            .iter()
            .any(|p| contains(w, p))
    };
    if password(last) || last == "PWD" {
        return Some(NameKind::Password);
    }
    if words.iter().any(|w| password(w) || contains(w, "SECRET")) {
        return Some(NameKind::Token);
    }
    let has = |list: &[&str]| before.iter().any(|w| list.contains(w));
    let private = words.contains(&"PRIVATE");
    let credential = match last {
        "TOKEN" => !has(TOKENIZER),
        "KEY" | "APIKEY" => {
            let data = before.last().is_some_and(|w| DATA_KEY.contains(w));
            !data && (private || !has(PUBLIC))
        }
        "PAT" => true,
        _ => false,
    };
    credential.then_some(NameKind::Token)
}

/// Whether a value under a credential's name is no credential itself (see
/// the module doc): a `$…` reference, a path, a file name, an ARN, a
/// tokenizer token or shorter than 8 characters; under a token's name also
/// a value with spaces (a sentence) or one that does not look generated.
fn harmless(value: &str, kind: NameKind) -> bool {
    let v = value.trim();
    let tokenizer =
        (v.starts_with('<') && v.ends_with('>')) || (v.starts_with('[') && v.ends_with(']'));
    let path = v.starts_with(['/', '~'])
        || v.starts_with("./")
        || v.starts_with("../")
        || (v.contains('/') && !generated(v));
    let referenced = v.len() < 8
        || v.starts_with('$')
        || v.starts_with("arn:")
        || tokenizer
        || path
        || file_name(v);
    referenced
        || match kind {
            NameKind::Password => false,
            NameKind::Token => v.contains(char::is_whitespace) || !generated(v),
        }
}

/// Whether a value is the name of a file that holds a credential: a name
/// with the extension of a key, certificate or settings file (`key.pem`,
/// `sa.json`, `.env`), or an SSH key's default name (`id_ed25519`).
fn file_name(v: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "pem", "key", "crt", "cer", "der", "p12", "pfx", "jks", "keystore", "json", "txt", "env",
        "yaml", "yml", "toml", "ini", "cfg", "conf", "gpg", "asc", "pub", "netrc", "pgpass",
    ];
    let simple = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !simple {
        return false;
    }
    let ssh = ["rsa", "dsa", "ecdsa", "ed25519", "ecdsa_sk", "ed25519_sk"]
        .iter()
        .any(|k| {
            v.strip_prefix("id_")
                .map(|rest| rest.strip_suffix(".pub").unwrap_or(rest))
                == Some(k)
        });
    let extension = v
        .rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
    ssh || extension
}

/// The help for a token in a command line. A `$TOKEN` in the line would
/// not work: `command`, `entrypoint` and `test` are exec form (Docker does
/// not expand variables in them, Kubernetes only `$(NAME)`), and the
/// variables of `vars` exist when the job runs, not while `setup` builds
/// the image.
fn line_help(field: &str) -> String {
    if field == "setup" {
        "remove the token from the build: a build step that needs a credential gets it as a secret mount (`python.index_credentials = secret(...)` for a package index), never in the command text".into()
    } else {
        "pass it in the environment instead: `vars.TOKEN = secret(\"token\", key = \"token\")`, and have the program read the variable `TOKEN` (a `$TOKEN` written in the command is not expanded: the command is exec form)".into()
    }
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
        let what = match token_shape(value) {
            Some(shape) => Some(format!("`{k}` holds what looks like {shape}, and it")),
            None if credential_name(k).is_some_and(|kind| !harmless(value, kind)) => {
                Some(format!("`{k}` looks like a credential, and it"))
            }
            None => None,
        };
        if let Some(what) = what {
            out.push(finding(
                format!("vars.{}", scl_ir::path::quote_segment(k)),
                what,
                format!(
                    "make it a secret the runner provides: `vars.{} = secret(\"{}\", key = \"token\")`",
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
                    line_help(name),
                ));
            }
        }
    }
    // Other text that reaches the lowered files: direct references of
    // packages (`pkg @ git+https://TOKEN@…`), conda channels, asset URLs,
    // the description.
    // Each text with its field: a list's name and the index in it (the
    // field's name is made only for a finding).
    let mut texts: Vec<(&str, Option<usize>, &str)> = Vec::new();
    if let Some(py) = &spec.python {
        texts.extend(
            py.packages
                .iter()
                .enumerate()
                .map(|(i, p)| ("python.packages", Some(i), &**p)),
        );
    }
    if let Some(c) = &spec.conda {
        texts.extend(
            c.channels
                .iter()
                .enumerate()
                .map(|(i, p)| ("conda.channels", Some(i), p.as_str())),
        );
    }
    for (i, a) in spec.assets.iter().enumerate() {
        if let scl_ir::Asset::Url { url, .. } = a {
            texts.push(("assets", Some(i), url.as_str()));
        }
    }
    if let Some(d) = &spec.description {
        texts.push(("description", None, d.as_str()));
    }
    for (name, index, t) in texts {
        let shape = token_shape(t);
        if shape.is_none() && !t.split_whitespace().any(has_password) {
            continue;
        }
        let field = match index {
            Some(i) => format!("{name}[{i}]"),
            None => name.to_string(),
        };
        let what = match shape {
            Some(shape) => format!("`{field}` holds what looks like {shape}, and it"),
            None => format!("`{field}` has a password in a URL, and it"),
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

/// Whether `text` contains `part`: `str::contains` for the short words of
/// variable names checked here, without the setup of its two-way searcher
/// (which cost more than the search: every word of every env's variable
/// names passes here).
fn contains(text: &str, part: &str) -> bool {
    find(text, part).is_some()
}

/// Where `part` first starts in `text` (`str::find` with a `&str`
/// pattern, without building its searcher; see [`contains`]).
fn find(text: &str, part: &str) -> Option<usize> {
    if part.is_empty() {
        return Some(0);
    }
    text.as_bytes()
        .windows(part.len())
        .position(|w| w == part.as_bytes())
}

/// Whether a URL carries `user:password@`.
fn has_password(url: &str) -> bool {
    let Some(at) = find(url, "://") else {
        return false;
    };
    let rest = &url[at + 3..];
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':') || token_shape(userinfo).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scl_ir::EnvSpec;

    /// Every pattern of `SHAPES` starts with one of `SHAPE_LITERALS` (each
    /// alternative of a leading group too), and each literal passes the
    /// first-byte test of `holds_a_shape_literal`: the filter never hides
    /// a shape. A pattern added without its literal fails here.
    #[test]
    fn every_shape_starts_with_a_filtered_literal() {
        for l in SHAPE_LITERALS {
            assert!(holds_a_shape_literal(l), "{l:?}");
            assert!(holds_a_shape_literal(&format!("x {l}")), "{l:?}");
        }
        for (r, _, _) in SHAPES.iter() {
            let p = r.as_str().trim_start_matches(r"\b");
            let alternatives: Vec<&str> = match p.strip_prefix('(') {
                Some(rest) => rest[..rest.find(')').unwrap()].split('|').collect(),
                None => vec![p],
            };
            for a in alternatives {
                assert!(
                    SHAPE_LITERALS.iter().any(|l| a.starts_with(l)),
                    "{} starts with no literal of SHAPE_LITERALS",
                    r.as_str()
                );
            }
        }
    }

    /// One token of each shape, alone and inside other text, is found and
    /// named (through the literal filter and the patterns).
    #[test]
    fn a_token_of_each_shape_is_found() {
        let tokens = [
            (
                "hf_abcdefghijklmnopqrstuvwxyz0123456789",
                "a Hugging Face token",
            ),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyz", "a GitHub token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
                "a GitHub token",
            ),
            ("glpat-Ab3dEf6hIj9lMn2pQr5t", "a GitLab token"),
            ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
            ("ASIAIOSFODNN7EXAMPLE", "an AWS access key id"),
            (
                "sk-ant-api03-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2",
                "an Anthropic API key",
            ),
            (
                "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2",
                "an OpenAI API key",
            ),
            (
                "sk-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0",
                "an OpenAI API key",
            ),
            ("xoxb-a1b2c3d4e5", "a Slack token"),
            (
                "AIzaSyAb3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7",
                "a Google API key",
            ),
            ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
        ];
        for (token, what) in tokens {
            assert_eq!(token_shape(token), Some(what), "{token}");
            assert_eq!(
                token_shape(&format!("--token {token} --x")),
                Some(what),
                "{token}"
            );
        }
        assert!(!holds_a_shape_literal("ca-certificates build-essential"));
        assert_eq!(token_shape("ca-certificates build-essential"), None);
    }

    #[test]
    fn contains_is_str_contains() {
        let texts = [
            "",
            "a",
            "PASSWORD",
            "DB_PASSWD",
            "MY-SECRET-X",
            "ab",
            "é://x",
            "x://",
        ];
        let parts = ["", "a", "PASSWD", "SECRET", "://", "abc", "é"];
        for t in texts {
            for p in parts {
                assert_eq!(contains(t, p), t.contains(p), "{t:?} {p:?}");
                assert_eq!(find(t, p), t.find(p), "{t:?} {p:?}");
            }
        }
    }

    #[test]
    fn a_password_is_found_after_the_scheme() {
        assert!(has_password("https://user:pw@host/x"));
        assert!(has_password("git+https://u:p@é.example/r"));
        assert!(!has_password("https://host/a:b@c"));
        assert!(!has_password("user:pw@host"));
        assert!(!has_password("://"));
        assert!(has_password("://a:b@"));
    }

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
        // The shortest shape is matched at its shortest, and one character
        // less is not a token (SHORTEST_SHAPE is right).
        assert_eq!(token_shape("xoxb-a1b2c3d4e5"), Some("a Slack token"));
        assert_eq!("xoxb-a1b2c3d4e5".len(), SHORTEST_SHAPE);
        assert_eq!(token_shape("xoxb-a1b2c3d4e"), None);
        assert_eq!(credential_name("WANDB_API_KEY"), Some(NameKind::Token));
        assert_eq!(credential_name("db_password"), Some(NameKind::Password));
        assert_eq!(credential_name("CUDA_VISIBLE_DEVICES"), None);
        assert_eq!(credential_name("KEYBOARD"), None);
    }

    /// The quick answer of `credential_name` (no hint, no credential) is
    /// the full classification's, for names made of every word the
    /// classification knows, in both cases and with each separator.
    #[test]
    fn the_hints_change_no_answer() {
        let mut words: Vec<&str> = [ABOUT, TOKENIZER, DATA_KEY, PUBLIC].concat();
        words.extend([
            "PASSWORD",
            "PASSWD",
            "PASSPHRASE",
            "PWD",
            "SECRET",
            "TOKEN",
            "KEY",
            "APIKEY",
            "PAT",
            "PRIVATE",
            "MAX",
            "MIN",
            "NUM",
            "N",
            "HF",
            "DB",
            "AWS",
            "MYPASSWORD",
            "X",
        ]);
        let mut found = 0;
        for a in &words {
            for b in &words {
                for sep in ["_", "-", "."] {
                    for n in [
                        format!("{a}{sep}{b}"),
                        format!("{a}{sep}{b}").to_lowercase(),
                    ] {
                        assert_eq!(credential_name(&n), classify(&n), "{n}");
                        found += usize::from(classify(&n).is_some());
                    }
                }
            }
            assert_eq!(credential_name(a), classify(a), "{a}");
        }
        // The corpus holds credentials too: the comparison is not of `None`s.
        assert!(found > 1000, "{found}");
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
            assert_eq!(credential_name(n), None, "{n}");
        }
        assert!(harmless("/run/secrets/key", NameKind::Token));
        for v in [
            "user_id",
            "datasets/train.parquet",
            "~/.ssh/id_ed25519",
            "secrets/db.txt",
            "arn:aws:kms:us-east-1:1:key/x",
            "512",
            "</s>",
        ] {
            assert!(harmless(v, NameKind::Token), "{v}");
        }
        assert!(!harmless("3f2a9c0d5e7b41a6", NameKind::Token));
        assert_eq!(secret_name("Ä_TOKEN"), "token");
        assert_eq!(secret_name("HF_TOKEN"), "hf-token");
        assert!(has_password("https://me:pw@pypi.example.com/simple"));
        assert!(!has_password("https://pypi.example.com/simple"));
        assert!(!has_password("https://me@pypi.example.com/simple"));
    }

    /// Whether a variable `name = value` is reported, as the check decides.
    fn reported(name: &str, value: &str) -> bool {
        token_shape(value).is_some()
            || credential_name(name).is_some_and(|kind| !harmless(value, kind))
    }

    #[test]
    fn not_credentials() {
        for (name, value) in [
            // Keys of data and slugs: written, not generated.
            ("CACHE_KEY", "model-v2"),
            ("SORT_KEY", "created_at"),
            ("API_KEY", "model-v2"),
            ("EXPERIMENT_KEY", "run-2024-v2"),
            // Tokenizer tokens, under any token name.
            ("SPECIAL_TOKEN", "<extra_id_0>"),
            ("ADDITIONAL_TOKEN", "<|endoftext|>"),
            ("SEP_TOKEN", "[SEP]"),
            ("TOKENIZER_CLS_TOKEN", "[CLS]"),
            ("IMAGE_TOKEN", "<image_placeholder_0001>"),
            ("STOP_TOKEN", "<|im_end|>"),
            // File names and paths of credentials, not their contents.
            ("SSH_KEY", "id_ed25519"),
            ("SSH_KEY", "id_rsa.pub"),
            ("TLS_KEY", "server-2024.key"),
            ("GOOGLE_KEY", "service-account-01.json"),
            ("DB_PASSWORD", "/run/secrets/db-password"),
            ("DB_PASSWORD", "./secrets/db1.txt"),
            ("DB_PASSWORD", "db-password-2024.txt"),
            ("PGPASSWORD", "${PGPASSWORD_FROM_VAULT}"),
            ("MYSQL_ROOT_PASSWORD", "$MYSQL_ROOT_PASSWORD"),
            // Public material.
            ("GPG_KEY", "7169605F62C751356D054A26A821E680E5FA6305"),
            (
                "SSH_PUBLIC_KEY",
                "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
            ),
            (
                "KEY_FINGERPRINT",
                "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
            ),
            ("PGP_KEY", "0x3F2A9C0D5E7B41A6"),
            // Names about a secret, and short or plain values.
            ("SECRET_NAME", "hf-token-2024v2xyz"),
            ("PASSWORD_MIN_LENGTH", "12"),
            ("SECRET_KEY_ID", "projects/1/secrets/x"),
            ("DB_PASSWORD", "pw"),
            ("CLIENT_SECRET", "my-secret-name"),
            // Slugs that start as a key would.
            ("RUN_ARGS", "--run-name sk-learn-baseline-2024-v2"),
            (
                "RUN",
                "sk-proj-baseline-experiment-with-a-rather-long-slug-name",
            ),
            (
                "NOTE",
                "sk-ant-thinking-about-the-plan-for-the-baseline-run",
            ),
        ] {
            assert!(!reported(name, value), "{name} = {value:?}");
        }
    }

    /// The texts that reach the lowered files are reported at their own
    /// field (`python.packages[1]`, `conda.channels[1]`, `assets[1]`,
    /// `description`), with the shape or the password in the message;
    /// clean ones are not reported.
    #[test]
    fn texts_are_reported_at_their_field() {
        let spec = EnvSpec {
            description: Some("see https://ci:hunter2hunter2@ci.example.com/x".into()),
            python: Some(scl_ir::Python {
                extra_index_urls: Vec::new(),
                index_credentials: None,
                index_url: None,
                manager: scl_ir::PythonManager::Pip,
                packages: vec![
                    "numpy".into(),
                    "lib @ git+https://ghp_Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0@github.com/o/lib"
                        .into(),
                ],
                requirements: Vec::new(),
                version: None,
            }),
            conda: Some(scl_ir::Conda {
                channels: vec![
                    "conda-forge".into(),
                    "https://me:s3cretpass@conda.example.com/channel".into(),
                ],
                packages: Vec::new(),
            }),
            assets: vec![
                scl_ir::Asset::Url {
                    sha256: None,
                    to: "/models/a.bin".into(),
                    url: "https://example.com/a.bin".into(),
                },
                scl_ir::Asset::Url {
                    sha256: None,
                    to: "/models/b.bin".into(),
                    url: "https://ghp_Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0@example.com/b.bin"
                        .into(),
                },
            ],
            ..EnvSpec::default()
        };
        let cx = Cx::new(&spec, &crate::Inputs::default());
        let mut out = Vec::new();
        check(&cx, &mut out);
        let got: Vec<(&str, &str)> = out
            .iter()
            .map(|f| (f.field.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "python.packages[1]",
                    "`python.packages[1]` holds what looks like a GitHub token, and it is written as plain text: it ends up in the image, the job's spec and every lowered file"
                ),
                (
                    "conda.channels[1]",
                    "`conda.channels[1]` has a password in a URL, and it is written as plain text: it ends up in the image, the job's spec and every lowered file"
                ),
                (
                    "assets[1]",
                    "`assets[1]` holds what looks like a GitHub token, and it is written as plain text: it ends up in the image, the job's spec and every lowered file"
                ),
                (
                    "description",
                    "`description` has a password in a URL, and it is written as plain text: it ends up in the image, the job's spec and every lowered file"
                ),
            ]
        );
    }

    #[test]
    fn credentials() {
        for (name, value) in [
            // A name with PASSWORD, PASSWD, PASSPHRASE or SECRET anywhere.
            ("PGPASSWORD", "hunter2hunter2"),
            ("SECRET_KEY_BASE", "9f2c1e0b7a6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4b3a"),
            ("CLIENT_SECRET", "aZ3kQ9xL2mN8pR4t"),
            ("DJANGO_SECRET_KEY", "django-insecure-x8k2m9q4w7e1r5t3"),
            // A password needs no digits: any value of 8 or more characters.
            ("DB_PASSWORD", "correcthorsebatterystaple"),
            ("POSTGRES_PASSWORD", "correct horse battery staple"),
            ("REDIS_PWD", "postgres"),
            ("GPG_PASSPHRASE", "my long passphrase"),
            // Generated values under a token's name.
            ("WANDB_API_KEY", "3f2a9c0d5e7b41a6"),
            ("HF_TOKEN", "abcdefghijklmnopqrstuvwxyzABCDEF"),
            ("GITHUB_PAT", "11ABCDEFG0123456789_abcdefghijklmnop"),
            ("GPG_PRIVATE_KEY", "3f2a9c0d5e7b41a6"),
            // Shapes, under any name.
            ("ARGS", "--api-key sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
            ("X", "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1_bC4eF7hI0kL3nO6qR9tU2wX5zA8cD1fG4"),
            ("X", "sk-svcacct-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2"),
            ("X", "sk-admin-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2"),
            ("X", "sk-ant-api03-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2wX5zA8cD1fG4-AA"),
            ("X", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----"),
            ("GPG_KEY", "-----BEGIN PGP PRIVATE KEY BLOCK-----"),
            ("TLS", "-----BEGIN RSA PRIVATE KEY-----"),
            ("TLS", "-----BEGIN PRIVATE KEY-----"),
            ("TLS", "-----BEGIN EC PRIVATE KEY-----"),
            ("TLS", "-----BEGIN ENCRYPTED PRIVATE KEY-----"),
        ] {
            assert!(reported(name, value), "{name} = {value:?}");
        }
        assert_eq!(token_shape("-----BEGIN CERTIFICATE-----"), None);
        assert_eq!(token_shape("-----BEGIN PUBLIC KEY-----"), None);
        assert_eq!(
            token_shape(
                "sk-ant-api03-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bC4eF7hI0kL3nO6qR9tU2wX5zA8cD1fG4-AA"
            ),
            Some("an Anthropic API key")
        );
        assert_eq!(
            token_shape("-----BEGIN OPENSSH PRIVATE KEY-----"),
            Some("a private key")
        );
    }
}
