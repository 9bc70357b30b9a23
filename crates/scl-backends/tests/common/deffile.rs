//! A reader of Apptainer definition files for the tests, written after
//! Apptainer's own (`apptainer/apptainer`: `pkg/build/types/parser/deffile.go`,
//! `internal/pkg/build/args/reader.go`) so that a test sees what Apptainer
//! would: build arguments replaced first (a `{{ name }}` not on a comment
//! line fails, as no build argument is given), the file split into stages
//! at every line starting `bootstrap:`, each stage scanned line by line
//! (`bufio.ScanLines`, which drops a `\r` before `\n`) into a header and
//! sections at every line whose first word (`bufio.ScanWords`) starts with
//! `%`, sections of at most 64 KiB, the header's keys, the section names,
//! `%files` lines split by `fileSplitter` and `%labels` by `GetLabels`.
//! Plus spython (Singularity Python's parser, in `<repo>/.venv`), through
//! `spython_parse.py`.

use regex::Regex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A definition file as Apptainer reads it (one stage).
#[derive(Debug, Clone, Default)]
pub struct Def {
    /// Header keys (lower-cased) → values.
    pub header: BTreeMap<String, String>,
    /// `(name, body)` of each section in order (a repeated section appends).
    pub sections: Vec<(String, String)>,
}

impl Def {
    /// The body of section `name` (all of its parts, joined), if any.
    pub fn section(&self, name: &str) -> Option<String> {
        let parts: Vec<&str> = self
            .sections
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, b)| b.as_str())
            .collect();
        (!parts.is_empty()).then(|| parts.concat())
    }

    /// `%files` as `(src, dst)` pairs, split as `deffile.go` does.
    pub fn files(&self) -> Vec<(String, String)> {
        let splitter = Regex::new(
            r#"([^\t\n\f\r "']*\{\{[\t\n\f\r ]*[0-9A-Za-z_]+[\t\n\f\r ]*\}\}*[^\t\n\f\r {}"']*)+|([^\t\n\f\r "']+|"([^"]*)"|'([^']*))"#,
        )
        .unwrap();
        let mut out = Vec::new();
        let body = self.section("files").unwrap_or_default();
        for line in go_trim(&body).split('\n') {
            let line = go_trim(line);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let subs: Vec<&str> = splitter.find_iter(line).map(|m| m.as_str()).collect();
            let src = go_trim(subs[0]).trim_matches('"').to_string();
            let dst = subs
                .get(1)
                .map(|d| go_trim(d).trim_matches('"').to_string())
                .unwrap_or_default();
            out.push((src, dst));
        }
        out
    }

    /// `%labels` as `GetLabels` reads it.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let body = self.section("labels").unwrap_or_default();
        for line in go_trim(&body).split('\n') {
            let line = go_trim(line);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line.split_once(' ') {
                Some((k, v)) => out.insert(go_trim(k).to_string(), go_trim(v).to_string()),
                None => out.insert(line.to_string(), String::new()),
            };
        }
        out
    }
}

/// Go's `unicode.IsSpace` (what `bufio.ScanWords` and `strings.TrimSpace`
/// skip).
pub fn go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

fn go_trim(s: &str) -> &str {
    s.trim_matches(go_space)
}

const SECTIONS: &[&str] = &[
    "help",
    "setup",
    "files",
    "labels",
    "environment",
    "pre",
    "post",
    "runscript",
    "test",
    "startscript",
    "arguments",
];

const HEADER_KEYS: &[&str] = &[
    "bootstrap",
    "from",
    "includecmd",
    "mirrorurl",
    "updateurl",
    "osversion",
    "include",
    "library",
    "registry",
    "namespace",
    "stage",
    "product",
    "user",
    "regcode",
    "productpgp",
    "registerurl",
    "modules",
    "fingerprints",
    "confurl",
    "setopt",
    "target",
    "frontend",
    "filename",
    "buildargs",
];

/// Reads `text` as `apptainer build` does with no build arguments, or says
/// why it fails (or would not be one stage).
pub fn parse(text: &str) -> Result<Def, String> {
    // Build arguments (reader.go), over the whole file.
    let arg = Regex::new(r"\{\{[\t\n\f\r ]*([0-9A-Za-z_]+)[\t\n\f\r ]*\}\}").unwrap();
    let comment = Regex::new(r"[\t\n\f\r ]*[#][^!][\t\n\f\r ]*.*").unwrap();
    let bytes = text.as_bytes();
    for m in arg.captures_iter(text) {
        let whole = m.get(0).unwrap();
        let line_start = bytes[..whole.start()]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap_or(0);
        if !comment.is_match(&text[line_start..whole.start()]) {
            return Err(format!(
                "build var {} is not defined through either --build-arg (--build-arg-file) or 'arguments' section",
                &m[1]
            ));
        }
    }
    // Stages (deffile.go, All).
    let stage = Regex::new(r"(?mi)^bootstrap:").unwrap();
    let starts: Vec<usize> = stage.find_iter(text).map(|m| m.start()).collect();
    if starts != [0] {
        return Err(format!(
            "stages start at bytes {starts:?}, not one stage at 0"
        ));
    }
    // Lines and sections (scanDefinitionFile).
    let mut header = String::new();
    let mut sections: Vec<(String, String, usize)> = Vec::new();
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let first = line.trim_start_matches(go_space);
        let word: String = first.chars().take_while(|&c| !go_space(c)).collect();
        if word.starts_with('%') {
            let name = word.trim_start_matches('%').to_lowercase();
            if let Some(last) = sections.last() {
                // bufio.Scanner: a section and the next one's first line
                // must fit in 64 KiB.
                if last.2 + raw.len() > 64 * 1024 {
                    return Err(format!("section %{} too long for bufio.Scanner", last.0));
                }
            }
            if !SECTIONS.contains(&name.as_str()) {
                return Err(format!("invalid section(s) specified: {name}"));
            }
            sections.push((name, String::new(), raw.len()));
        } else if let Some(last) = sections.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
            last.2 += raw.len();
        } else {
            header.push_str(line);
            header.push('\n');
        }
    }
    let mut def = Def::default();
    for line in go_trim(&header).split('\n') {
        let line = go_trim(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.split('#').next().unwrap();
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("header key {line} had no val"))?;
        let k = go_trim(k).to_lowercase();
        if v.trim_end().ends_with('\\') {
            return Err(format!("header line {line:?} continues"));
        }
        if !HEADER_KEYS.contains(&k.as_str()) {
            return Err(format!("invalid header keyword found: {k}"));
        }
        def.header.insert(k, go_trim(v).to_string());
    }
    def.sections = sections.into_iter().map(|(n, b, _)| (n, b)).collect();
    Ok(def)
}

/// spython's reading of one file (`spython_parse.py`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Spython {
    pub file: String,
    pub error: Option<String>,
    #[serde(default, rename = "fromHeader")]
    pub from_header: Option<String>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub environ: Vec<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub install: Vec<String>,
}

/// A Python that can `import spython`, if installed (`<repo>/.venv` first).
pub fn python_with_spython() -> Option<PathBuf> {
    let venv = super::tools::repo_root().join(".venv/bin/python");
    for p in [venv, PathBuf::from("python3")] {
        let ok = Command::new(&p)
            .args(["-c", "import spython"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(p);
        }
    }
    None
}

/// Reads `files` with spython in one run.
pub fn spython(python: &Path, files: &[PathBuf]) -> Vec<Spython> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/spython_parse.py");
    let out = Command::new(python)
        .arg(script)
        .args(files)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "spython_parse.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("spython_parse.py prints JSON")
}

/// The words `sh` makes of `text` (shell words, quotes removed), or an
/// error when `sh` cannot read it. `text` must be plain words (no
/// operators), as the arguments of one command are.
pub fn sh_words(text: &str) -> Result<Vec<String>, String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "set -f\nfor a in {text}\ndo printf '%s\\0' \"$a\"; done"
        ))
        .output()
        .expect("sh runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let mut words: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .map(str::to_string)
        .collect();
    words.pop();
    Ok(words)
}

/// The value of each of `names` after `sh` sources `environment` (in an
/// empty environment): `None` for a name it leaves unset.
pub fn sourced(environment: &str, names: &[&str]) -> Result<Vec<Option<String>>, String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env.sh");
    std::fs::write(&file, environment).unwrap();
    let mut script = format!(". {}\n", file.display());
    for n in names {
        script.push_str(&format!(
            "if [ \"${{{n}+set}}\" = set ]; then printf 's%s\\0' \"${n}\"; else printf 'u\\0'; fi\n"
        ));
    }
    let out = Command::new("env")
        .args(["-i", "sh", "-c", &script])
        .output()
        .expect("sh runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut vals: Vec<Option<String>> = text
        .split('\0')
        .map(|v| v.strip_prefix('s').map(str::to_string))
        .collect();
    vals.pop();
    Ok(vals)
}

/// Whether `sh -n` reads `script` (a section's body) without a syntax error.
pub fn sh_syntax(script: &str) -> Result<(), String> {
    let out = Command::new("sh")
        .args(["-n", "-c", script])
        .output()
        .expect("sh runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
