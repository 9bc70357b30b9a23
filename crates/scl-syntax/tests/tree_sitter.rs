//! The tree-sitter grammar (`grammar/tree-sitter-scl`) agrees with the
//! compiler, and its committed parser is what its `grammar.js` generates.
//!
//! * `agreement`: every `.scl` file of the repository (examples, stdlib,
//!   tests, the crates' test fixtures and the grammar's own edge cases in
//!   `grammar/tree-sitter-scl/test/agreement/`) is parsed by both parsers.
//!   tree-sitter's tree has no `ERROR` or `MISSING` node exactly when
//!   [`scl_syntax::parse`] reports no syntax error. A syntax error is one of
//!   the codes `E0001`–`E0007` and `E0011`; `E0010` (an invisible character)
//!   is left out because both parsers skip the character and build the same
//!   tree.
//! * `corpus`: `tree-sitter test` (the corpus in `test/corpus/*.txt`, the
//!   queries' syntax).
//! * `generated_parser_is_committed`: `tree-sitter generate` run on a copy
//!   of `grammar.js` gives the committed `src/` byte for byte.
//!
//! The tests need the tree-sitter CLI at the version
//! `scripts/install-test-tools.sh` installs (and a C compiler, which the CLI
//! calls to build the parser). Without it they fail, unless
//! `SCL_SKIP_TREE_SITTER=1` is set.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The version `scripts/install-test-tools.sh` pins.
const TREE_SITTER_VERSION: &str = "0.27.1";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn grammar_dir() -> PathBuf {
    root().join("grammar/tree-sitter-scl")
}

/// The `tree-sitter` program, or `None` when `SCL_SKIP_TREE_SITTER=1` and it
/// is missing. Panics when it is missing or has another version.
fn cli() -> Option<&'static str> {
    static CLI: OnceLock<Result<(), String>> = OnceLock::new();
    let found = CLI.get_or_init(|| {
        let out = Command::new("tree-sitter").arg("--version").output();
        match out {
            Ok(o) if o.status.success() => {
                let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
                if v == format!("tree-sitter {TREE_SITTER_VERSION}") {
                    Ok(())
                } else {
                    Err(format!("`tree-sitter --version` says {v:?}, the tests need {TREE_SITTER_VERSION}"))
                }
            }
            Ok(o) => Err(format!("`tree-sitter --version` failed: {}", String::from_utf8_lossy(&o.stderr))),
            Err(e) => Err(format!("the tree-sitter CLI is not on PATH ({e})")),
        }
    });
    match found {
        Ok(()) => Some("tree-sitter"),
        Err(_) if std::env::var("SCL_SKIP_TREE_SITTER").as_deref() == Ok("1") => {
            eprintln!("SCL_SKIP_TREE_SITTER=1: the tree-sitter tests are skipped");
            None
        }
        Err(e) => panic!(
            "{e}: run scripts/install-test-tools.sh (it installs tree-sitter-cli {TREE_SITTER_VERSION} with cargo), \
             or set SCL_SKIP_TREE_SITTER=1 to skip the tree-sitter tests"
        ),
    }
}

/// Runs `cmd`, panicking with its output when it fails.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The parser built once from the committed `src/` (a shared library in a
/// temporary folder that lives as long as the test process).
fn parser_lib(ts: &str) -> &'static Path {
    static LIB: OnceLock<(tempfile_dir::Dir, PathBuf)> = OnceLock::new();
    let (_, lib) = LIB.get_or_init(|| {
        let dir = tempfile_dir::Dir::new("scl-tree-sitter-lib");
        let lib = dir.path().join(format!("scl.{}", std::env::consts::DLL_EXTENSION));
        run(Command::new(ts)
            .current_dir(grammar_dir())
            .arg("build")
            .arg("--output")
            .arg(&lib)
            .arg("."));
        (dir, lib)
    });
    lib
}

/// A temporary folder removed on drop (std only).
mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new(prefix: &str) -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "{prefix}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Every `.scl` file of the repository the agreement covers, relative to the root.
fn scl_files() -> Vec<PathBuf> {
    let root = root();
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ["examples", "stdlib", "tests", "crates", "grammar"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with("target") && !p.ends_with("node_modules") {
                    stack.push(p);
                }
            } else if p.to_string_lossy().ends_with(".scl") {
                out.push(p.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The codes that mean the compiler could not read the file as written.
fn is_syntax_error(code: &str) -> bool {
    matches!(
        code,
        "E0001" | "E0002" | "E0003" | "E0004" | "E0005" | "E0006" | "E0007" | "E0011"
    )
}

#[test]
fn agreement() {
    let Some(ts) = cli() else { return };
    let lib = parser_lib(ts);
    let files = scl_files();
    assert!(files.len() > 150, "found only {} .scl files", files.len());
    let agreement_cases = files
        .iter()
        .filter(|f| f.starts_with("grammar/tree-sitter-scl/test/agreement"))
        .count();
    assert!(agreement_cases > 20, "found only {agreement_cases} edge-case files");

    // The compiler's verdict.
    let mut compiler_errors: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for f in &files {
        let bytes = std::fs::read(root().join(f)).unwrap();
        let src = String::from_utf8(bytes).unwrap_or_else(|_| panic!("{} is not UTF-8", f.display()));
        let codes: Vec<String> = scl_syntax::parse(&src)
            .errors
            .iter()
            .filter(|d| is_syntax_error(&d.code))
            .map(|d| format!("{} {}:{}", d.code, d.at.span.start, d.message))
            .collect();
        // The edge cases say in their name which verdict they expect.
        if let Some(name) = f.file_name().and_then(|n| n.to_str()) {
            if f.starts_with("grammar/tree-sitter-scl/test/agreement") {
                assert_eq!(
                    name.starts_with("err_"),
                    !codes.is_empty(),
                    "{}: the compiler's verdict is not the one the name says ({codes:?})",
                    f.display()
                );
            }
        }
        compiler_errors.push((f.clone(), codes));
    }

    // tree-sitter's verdict: one run over every file.
    let list = tempfile_dir::Dir::new("scl-tree-sitter-paths");
    let paths = list.path().join("paths.txt");
    let text: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
    std::fs::write(&paths, text).unwrap();
    let out = Command::new(ts)
        .current_dir(root())
        .args(["parse", "--quiet", "--json-summary", "--lang-name", "scl", "--lib-path"])
        .arg(lib)
        .arg("--paths")
        .arg(&paths)
        .output()
        .expect("run tree-sitter parse");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `--quiet` prints a line per file with errors, then the JSON summary.
    let json_start = stdout
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| stdout.starts_with('{').then_some(0))
        .unwrap_or_else(|| panic!("no JSON summary from tree-sitter parse:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    let summary: serde_json::Value = serde_json::from_str(&stdout[json_start..]).expect("tree-sitter's JSON summary");
    let parses = summary["parse_summaries"].as_array().expect("parse_summaries");
    assert_eq!(parses.len(), files.len(), "tree-sitter parsed another number of files");
    let ts_failed: BTreeSet<PathBuf> = parses
        .iter()
        .filter(|p| p["successful"] != serde_json::Value::Bool(true))
        .map(|p| PathBuf::from(p["file"].as_str().unwrap()))
        .collect();
    // The lines of the files with errors, by file (the first node in error).
    let ts_lines: Vec<&str> = stdout[..json_start].lines().collect();

    let mut disagree = Vec::new();
    let mut with_errors = 0;
    for (f, codes) in &compiler_errors {
        let compiler_ok = codes.is_empty();
        let ts_ok = !ts_failed.contains(f);
        if !compiler_ok {
            with_errors += 1;
        }
        if compiler_ok != ts_ok {
            let ts_line = ts_lines
                .iter()
                .find(|l| l.starts_with(&*f.to_string_lossy()))
                .map_or("no ERROR or MISSING node".to_string(), |l| l.split('\t').last().unwrap_or(l).to_string());
            disagree.push(format!(
                "{}: compiler {}, tree-sitter {ts_line}",
                f.display(),
                if compiler_ok { "accepts it".to_string() } else { format!("reports {codes:?}") }
            ));
        }
    }
    eprintln!(
        "tree-sitter agreement: {} files, {with_errors} with syntax errors, {} disagreements",
        files.len(),
        disagree.len()
    );
    assert!(disagree.is_empty(), "the parsers disagree on {} files:\n{}", disagree.len(), disagree.join("\n"));
    // Both kinds are covered.
    assert!(with_errors >= 30, "only {with_errors} files with syntax errors");
    assert!(files.len() - with_errors >= 100, "only {} files without", files.len() - with_errors);
}

#[test]
fn corpus() {
    let Some(ts) = cli() else { return };
    let lib = parser_lib(ts);
    let out = run(Command::new(ts)
        .current_dir(grammar_dir())
        .args(["test", "--lang-name", "scl", "--lib-path"])
        .arg(lib));
    assert!(out.contains("Total parses") || out.contains('✓'), "unexpected output of tree-sitter test:\n{out}");
}

#[test]
fn generated_parser_is_committed() {
    let Some(ts) = cli() else { return };
    let work = tempfile_dir::Dir::new("scl-tree-sitter-generate");
    for f in ["grammar.js", "tree-sitter.json"] {
        std::fs::copy(grammar_dir().join(f), work.path().join(f)).unwrap();
    }
    // The built-in QuickJS runtime: no node needed.
    run(Command::new(ts)
        .current_dir(work.path())
        .args(["generate", "--js-runtime", "native", "grammar.js"]));
    let committed = grammar_dir().join("src");
    let generated = work.path().join("src");
    let mut stale = Vec::new();
    for f in [
        "parser.c",
        "grammar.json",
        "node-types.json",
        "tree_sitter/parser.h",
        "tree_sitter/alloc.h",
        "tree_sitter/array.h",
    ] {
        let want = std::fs::read(generated.join(f)).unwrap_or_else(|e| panic!("generated {f}: {e}"));
        let have = std::fs::read(committed.join(f)).unwrap_or_default();
        if want != have {
            stale.push(f);
        }
    }
    assert!(
        stale.is_empty(),
        "grammar/tree-sitter-scl/src/{stale:?} differ from what grammar.js generates: \
         run `tree-sitter generate --js-runtime native` in grammar/tree-sitter-scl and commit src/"
    );
}
