//! Shared helpers of the integration tests: the IR fixtures, a small
//! Dockerfile reader, and the outside tools ([`tools`]).
#![allow(dead_code)]

pub mod deffile;
pub mod tools;

use scl_backends::{docker, Lowered};
use scl_ir::EnvSpec;
use std::path::{Path, PathBuf};

/// `tests/fixtures/`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every fixture as `(env name, IR)`, sorted by name. The env name is the
/// file stem.
pub fn fixtures() -> Vec<(String, EnvSpec)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(fixtures_dir()).expect("fixtures dir") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let spec: EnvSpec =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((name, spec));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// One fixture by name.
pub fn fixture(name: &str) -> EnvSpec {
    fixtures()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no fixture {name}"))
        .1
}

/// Every fixture lowered: `(env name, IR, output)`.
pub fn lowered() -> Vec<(String, EnvSpec, Lowered)> {
    fixtures()
        .into_iter()
        .map(|(name, spec)| {
            let out = docker::lower(&spec, &name);
            (name, spec, out)
        })
        .collect()
}

/// The IR a Dockerfile artifact lowers: the env itself, or the service its
/// folder names (`webui/Dockerfile` → `services.webui`).
pub fn spec_for<'a>(spec: &'a EnvSpec, artifact_path: &str) -> &'a EnvSpec {
    let mut s = spec;
    let mut parts: Vec<&str> = artifact_path.split('/').collect();
    parts.pop();
    for p in parts {
        s = &s.services[p];
    }
    s
}

/// One instruction of a Dockerfile: its keyword (upper case) and its
/// arguments with line continuations joined (`\` + newline removed). The
/// backend writes no here-documents, so this reader knows none
/// (`tests/parser.rs` checks it against BuildKit's parser).
#[derive(Debug, Clone)]
pub struct Instruction {
    pub keyword: String,
    pub args: String,
    /// 1-based line of the keyword.
    pub line: usize,
}

/// Splits a Dockerfile into instructions, skipping comments and blank lines
/// (the parser directive included).
pub fn instructions(text: &str) -> Vec<Instruction> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        let start = i;
        let (keyword, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        let mut args = String::new();
        let mut cur = rest.to_string();
        loop {
            if let Some(stripped) = continued(&cur) {
                args.push_str(stripped);
                i += 1;
                // Comment lines inside a continuation are dropped by Docker too.
                while i < lines.len() && lines[i].trim_start().starts_with('#') {
                    i += 1;
                }
                cur = lines.get(i).copied().unwrap_or("").to_string();
            } else {
                args.push_str(&cur);
                i += 1;
                break;
            }
        }
        out.push(Instruction {
            keyword: keyword.to_ascii_uppercase(),
            args,
            line: start + 1,
        });
    }
    out
}

/// The line without its continuation backslash, when it has one: by
/// BuildKit's rule (`parser.go`, `lineContinuationRegex`), a last
/// non-blank `\` that follows a character other than `\` (or stands alone).
fn continued(line: &str) -> Option<&str> {
    let body = line.trim_end_matches([' ', '\t']);
    let stripped = body.strip_suffix('\\')?;
    (stripped.is_empty() || !stripped.ends_with('\\')).then_some(stripped)
}

/// The Dockerfile artifacts of an output (`Dockerfile`, `svc/Dockerfile`).
pub fn dockerfiles(out: &Lowered) -> Vec<&scl_backends::Artifact> {
    out.artifacts
        .iter()
        .filter(|a| a.path == "Dockerfile" || a.path.ends_with("/Dockerfile"))
        .collect()
}
