//! The outside tools of the tests: hadolint and BuildKit's Dockerfile parser
//! (through `scripts/parse-dockerfiles.py`), installed by
//! `scripts/install-test-tools.sh` into `<repo>/.venv`.
//!
//! Each is looked up in `<repo>/.venv/bin` first, then on `PATH`
//! (`HADOLINT=/path/to/hadolint` and `SCL_PYTHON=/path/to/python` override
//! both). When a tool is missing, [`require`] fails the test, unless
//! `SCL_SKIP_TOOLS=1` is set: then it says so and the test skips.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `<repo>/.hadolint.yaml`.
pub fn hadolint_config() -> PathBuf {
    repo_root().join(".hadolint.yaml")
}

/// `<repo>/scripts/parse-dockerfiles.py`.
pub fn parse_script() -> PathBuf {
    repo_root().join("scripts/parse-dockerfiles.py")
}

fn works(bin: &Path, args: &[&str]) -> bool {
    matches!(Command::new(bin).args(args).output(), Ok(o) if o.status.success())
}

/// The first of `override_var`, `<repo>/.venv/bin/<name>`, `<name>` on
/// `PATH` that runs `args` successfully.
fn find(name: &str, override_var: &str, args: &[&str]) -> Option<PathBuf> {
    if let Ok(p) = std::env::var(override_var) {
        return works(Path::new(&p), args).then(|| PathBuf::from(p));
    }
    let venv = repo_root().join(".venv/bin").join(name);
    if works(&venv, args) {
        return Some(venv);
    }
    works(Path::new(name), args).then(|| PathBuf::from(name))
}

/// The hadolint binary, if installed.
pub fn hadolint() -> Option<PathBuf> {
    find("hadolint", "HADOLINT", &["--version"])
}

/// A Python that can `import dockerfile` (BuildKit's parser), if installed.
pub fn python_with_parser() -> Option<PathBuf> {
    find("python", "SCL_PYTHON", &["-c", "import dockerfile"])
        .or_else(|| find("python3", "SCL_PYTHON", &["-c", "import dockerfile"]))
}

/// `tool` when found; else `None` after saying so when `SCL_SKIP_TOOLS=1`,
/// and a panic otherwise.
pub fn require(what: &str, tool: Option<PathBuf>) -> Option<PathBuf> {
    if tool.is_some() {
        return tool;
    }
    if std::env::var("SCL_SKIP_TOOLS").as_deref() == Ok("1") {
        eprintln!("SKIPPED: {what} not found and SCL_SKIP_TOOLS=1");
        return None;
    }
    panic!(
        "{what} not found in <repo>/.venv/bin or on PATH: run scripts/install-test-tools.sh, \
         or set SCL_SKIP_TOOLS=1 to skip this test knowingly"
    );
}

/// One instruction as `scripts/parse-dockerfiles.py` prints it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Parsed {
    pub cmd: String,
    pub flags: Vec<String>,
    pub value: Vec<String>,
    pub json: bool,
    pub original: String,
    pub heredocs: Vec<serde_json::Value>,
    pub start_line: usize,
    pub end_line: usize,
    /// BuildKit's lexer applied to each element of `value` (quotes and
    /// escapes removed) for the instructions whose arguments it processes;
    /// `None` for an element it would expand a variable in.
    pub words: Option<Vec<Option<String>>>,
    /// For a shell-form `RUN`: the POSIX shell words of the command line
    /// (`shlex`, operators such as `&&` and `>` as their own words).
    pub shell_words: Option<Vec<String>>,
}

/// One file as `scripts/parse-dockerfiles.py` prints it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ParsedFile {
    pub file: String,
    pub error: Option<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub instructions: Vec<Parsed>,
    /// For a `*.dockerignore` file: the patterns `ignorefile.ReadAll` reads.
    pub patterns: Option<Vec<String>>,
}

/// Parses `files` with `scripts/parse-dockerfiles.py` in one run.
pub fn parse_files(python: &Path, files: &[PathBuf]) -> Vec<ParsedFile> {
    let out = Command::new(python)
        .arg(parse_script())
        .args(files)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "parse-dockerfiles.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let parsed: Vec<ParsedFile> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(parsed.len(), files.len());
    parsed
}

/// One hadolint finding (`hadolint --format json`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Finding {
    pub code: String,
    pub level: String,
    pub line: usize,
    pub message: String,
    pub file: String,
}

/// Lints `files` with hadolint and the repository's `.hadolint.yaml`, in one
/// run; returns every finding (a parse error is one with code `DL1000`).
pub fn lint_files(hadolint: &Path, files: &[PathBuf]) -> Vec<Finding> {
    let out = Command::new(hadolint)
        .args([
            "--no-color",
            "--format",
            "json",
            "--failure-threshold",
            "none",
            "--config",
        ])
        .arg(hadolint_config())
        .args(files)
        .output()
        .expect("hadolint runs");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "hadolint output is not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
