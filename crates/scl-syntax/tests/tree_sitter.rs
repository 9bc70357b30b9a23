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
//! * `agreement_on_prefixes`: the same on every prefix of those files
//!   (mostly broken, half-typed text).
//! * `agreement_on_moved_line_ends`: the same on those files with each line
//!   end removed (two lines joined into one) and with a line end inserted
//!   between two tokens.
//! * `no_expected_token_is_hidden`: a token the parser's error recovery can
//!   insert as `MISSING` (the separator in `let a = 1 let b = 2`) is visible.
//! * `corpus`: `tree-sitter test` (the corpus in `test/corpus/*.txt`).
//! * `queries_compile`: the queries in `queries/` (nvim-treesitter's capture
//!   names) and `queries/helix/` (Helix's) are valid for the grammar.
//! * `highlights_of_every_construct`, `helix_highlights_of_every_construct`:
//!   on `test/highlight-fixture/all.env.scl`, the capture that wins for each
//!   interesting token (the last matching pattern on the innermost node, the
//!   rule of tree-sitter 0.27's highlighter, Neovim and Helix) is the
//!   expected one, and `tree-sitter highlight` shows the same.
//! * `helix_locals_discard_non_references`: in Helix's locals, field names,
//!   named arguments and enum literals are not references.
//! * `generated_parser_is_committed`: `tree-sitter generate` run on a copy
//!   of `grammar.js` gives the committed `src/` byte for byte.
//!
//! The tests need the tree-sitter CLI at the version
//! `scripts/install-test-tools.sh` installs (and a C compiler, which the CLI
//! calls to build the parser). Without it they fail, unless
//! `SCL_SKIP_TREE_SITTER=1` is set.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The version `scripts/install-test-tools.sh` pins.
const TREE_SITTER_VERSION: &str = "0.27.1";

mod common;
use common::root;

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
                    Err(format!(
                        "`tree-sitter --version` says {v:?}, the tests need {TREE_SITTER_VERSION}"
                    ))
                }
            }
            Ok(o) => Err(format!(
                "`tree-sitter --version` failed: {}",
                String::from_utf8_lossy(&o.stderr)
            )),
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
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
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
        let lib = dir
            .path()
            .join(format!("scl.{}", std::env::consts::DLL_EXTENSION));
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

/// `tree-sitter <command>` for a command that loads the parser (`parse`,
/// `test`, `query`): `--lib-path` names the library built by [`parser_lib`], and
/// `TREE_SITTER_LIBDIR` is its folder too, because `test` and `query` also
/// load the grammar of the folder they run in from the CLI's library cache,
/// which by default (`~/.cache/tree-sitter/lib`) is shared by every checkout
/// on the machine: a library compiled there from another checkout's newer
/// `src/` would be used instead of this one.
fn ts_with_lib(ts: &str, command: &str) -> Command {
    let lib = parser_lib(ts);
    let mut cmd = Command::new(ts);
    cmd.arg(command)
        .env("TREE_SITTER_LIBDIR", lib.parent().unwrap());
    cmd.args(["--lang-name", "scl", "--lib-path"]).arg(lib);
    cmd
}

/// A temporary folder removed on drop (std only).
mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new(prefix: &str) -> Dir {
            Dir::new_in(std::env::temp_dir(), prefix)
        }
        pub fn new_in(parent: PathBuf, prefix: &str) -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = parent.join(format!(
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
    common::scl_files(&["examples", "stdlib", "tests", "crates", "grammar"])
}

/// The codes that mean the compiler could not read the file as written.
fn is_syntax_error(code: &str) -> bool {
    matches!(
        code,
        "E0001" | "E0002" | "E0003" | "E0004" | "E0005" | "E0006" | "E0007" | "E0011"
    )
}

/// A text both parsers read: where it comes from and the compiler's syntax
/// errors in it.
struct Case {
    label: String,
    src: String,
    errors: Vec<String>,
}

impl Case {
    fn new(label: String, src: String) -> Case {
        let errors = scl_syntax::parse(&src)
            .errors
            .iter()
            .filter(|d| is_syntax_error(d.code))
            .map(|d| format!("{} at byte {}: {}", d.code, d.at.span.start, d.message))
            .collect();
        Case { label, src, errors }
    }
}

/// Parses every case with tree-sitter (one run of `tree-sitter parse`) and
/// returns the cases on which it disagrees with the compiler.
fn disagreements(ts: &str, cases: &[Case]) -> Vec<String> {
    // Tens of thousands of small files: in memory where the system has a
    // RAM file system (writing them to a disk takes most of the time).
    let shm = Path::new("/dev/shm");
    let dir = tempfile_dir::Dir::new_in(
        if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        },
        "scl-tree-sitter-cases",
    );
    let mut list = String::new();
    let mut index = HashMap::new();
    for (i, c) in cases.iter().enumerate() {
        let p = dir.path().join(format!("{i}.env.scl"));
        std::fs::write(&p, &c.src).unwrap();
        list.push_str(&format!("{}\n", p.display()));
        index.insert(p.display().to_string(), i);
    }
    let paths = dir.path().join("paths.txt");
    std::fs::write(&paths, list).unwrap();
    let out = ts_with_lib(ts, "parse")
        .args(["--quiet", "--stat", "--paths"])
        .arg(&paths)
        .output()
        .expect("run tree-sitter parse");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `--quiet` prints a line per file whose tree has an ERROR or MISSING
    // node, `<path> Parse: <time> <speed> (<the first of them>)`, and
    // `--stat` then the totals.
    let mut first_error: HashMap<usize, &str> = HashMap::new();
    let mut totals = None;
    for line in stdout.lines() {
        if let Some(t) = line.strip_prefix("Total parses: ") {
            totals = Some(t);
        } else if let Some((file, rest)) = line.split_once('\t') {
            let i = *index
                .get(file.trim_end())
                .unwrap_or_else(|| panic!("tree-sitter parse printed {line:?}"));
            first_error.insert(i, rest.rsplit('\t').next().unwrap_or(rest).trim());
        }
    }
    let totals = totals.unwrap_or_else(|| {
        panic!(
            "no totals from tree-sitter parse --stat:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        totals.starts_with(&format!(
            "{}; successful parses: {}; failed parses: {};",
            cases.len(),
            cases.len() - first_error.len(),
            first_error.len()
        )),
        "tree-sitter parsed other files than the {} cases: {totals}",
        cases.len()
    );
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let ts_error = first_error.get(&i);
        if ts_error.is_none() != c.errors.is_empty() {
            out.push(format!(
                "{}: the compiler {}, tree-sitter {}",
                c.label,
                if c.errors.is_empty() {
                    "accepts it".to_string()
                } else {
                    format!("reports {:?}", c.errors)
                },
                ts_error.map_or("accepts it", |e| e)
            ));
        }
    }
    out
}

#[test]
fn agreement() {
    let Some(ts) = cli() else { return };
    let files = scl_files();
    assert!(files.len() > 150, "found only {} .scl files", files.len());
    let mut cases = Vec::new();
    let mut edge_cases = 0;
    for f in &files {
        let bytes = std::fs::read(root().join(f)).unwrap();
        let src =
            String::from_utf8(bytes).unwrap_or_else(|_| panic!("{} is not UTF-8", f.display()));
        let case = Case::new(f.display().to_string(), src);
        // The edge cases say in their name which verdict they expect.
        if f.starts_with("grammar/tree-sitter-scl/test/agreement") {
            edge_cases += 1;
            let name = f.file_name().unwrap().to_string_lossy();
            assert_eq!(
                name.starts_with("err_"),
                !case.errors.is_empty(),
                "{}: the compiler's verdict is not the one the name says ({:?})",
                f.display(),
                case.errors
            );
        }
        cases.push(case);
    }
    assert!(edge_cases > 40, "found only {edge_cases} edge-case files");
    let with_errors = cases.iter().filter(|c| !c.errors.is_empty()).count();
    let disagree = disagreements(ts, &cases);
    eprintln!(
        "tree-sitter agreement: {} files, {with_errors} with syntax errors, {} disagreements",
        cases.len(),
        disagree.len()
    );
    assert!(
        disagree.is_empty(),
        "the parsers disagree on {} files:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
    assert!(
        with_errors >= 30,
        "only {with_errors} files with syntax errors"
    );
    assert!(
        cases.len() - with_errors >= 100,
        "only {} files without",
        cases.len() - with_errors
    );
}

/// The same on every prefix of every file (every character boundary: half-
/// typed, mostly broken text; about 50,000 texts).
#[test]
fn agreement_on_prefixes() {
    let Some(ts) = cli() else { return };
    let mut cases = Vec::new();
    for (f, src) in sources() {
        for i in (0..src.len()).filter(|i| src.is_char_boundary(*i)) {
            cases.push(Case::new(
                format!("{} up to byte {i}", f.display()),
                src[..i].to_string(),
            ));
        }
    }
    assert!(cases.len() > 40_000, "only {} prefixes", cases.len());
    let with_errors = cases.iter().filter(|c| !c.errors.is_empty()).count();
    let disagree = disagreements(ts, &cases);
    eprintln!(
        "tree-sitter agreement on prefixes: {} texts, {with_errors} with syntax errors, {} disagreements",
        cases.len(),
        disagree.len()
    );
    assert!(
        disagree.is_empty(),
        "the parsers disagree on {} prefixes:\n{}",
        disagree.len(),
        disagree
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every repository file read in memory, with its path: the texts the
/// agreement tests start from.
fn sources() -> Vec<(PathBuf, String)> {
    scl_files()
        .into_iter()
        .map(|f| {
            let src = std::fs::read_to_string(root().join(&f)).unwrap();
            (f, src)
        })
        .collect()
}

/// The same on texts made from every file by moving its line ends, where a
/// grammar that conjures a separator the compiler's lexer does not emit (or
/// drops one it emits) shows:
///
/// * each line end replaced by a space (two lines joined into one: two
///   declarations or two items on a line) and by a lone carriage return
///   (which the compiler reads as absent, E0010);
/// * a line end inserted at every gap between two tokens (and before the
///   first one): `\n`, `\r\n` and a comment with its line end (`// c\n`)
///   taking turns, so that each kind meets every kind of gap somewhere.
#[test]
fn agreement_on_moved_line_ends() {
    let Some(ts) = cli() else { return };
    let mut cases = Vec::new();
    for (f, src) in sources() {
        for (i, _) in src.match_indices('\n') {
            for (name, by) in [("joined", " "), ("a lone CR", "\r")] {
                cases.push(Case::new(
                    format!("{} with the line end at byte {i} {name}", f.display()),
                    format!("{}{by}{}", &src[..i], &src[i + 1..]),
                ));
            }
        }
        let mut gaps: Vec<usize> = scl_syntax::lex(&src)
            .0
            .iter()
            .flat_map(|t| [t.span.start as usize, t.span.end as usize])
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        gaps.sort_unstable();
        gaps.dedup();
        for (k, i) in gaps.into_iter().enumerate() {
            let (name, by) = [("\\n", "\n"), ("\\r\\n", "\r\n"), ("// c\\n", " // c\n")][k % 3];
            cases.push(Case::new(
                format!("{} with {name} inserted at byte {i}", f.display()),
                format!("{}{by}{}", &src[..i], &src[i..]),
            ));
        }
    }
    assert!(cases.len() > 10_000, "only {} texts", cases.len());
    let with_errors = cases.iter().filter(|c| !c.errors.is_empty()).count();
    let disagree = disagreements(ts, &cases);
    eprintln!(
        "tree-sitter agreement on moved line ends: {} texts, {with_errors} with syntax errors, {} disagreements",
        cases.len(),
        disagree.len()
    );
    assert!(
        disagree.is_empty(),
        "the parsers disagree on {} texts:\n{}",
        disagree.len(),
        disagree
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// No token that a rule expects is hidden (named `_…`). Where a token is
/// missing, tree-sitter's error recovery inserts it as a `MISSING` node; a
/// hidden one is invisible (no editor, no `tree-sitter parse` and no corpus
/// test sees it), so the tree looks correct where the compiler reports an
/// error. Hidden tokens are only extras (which the parser never expects)
/// and the error token no rule names.
#[test]
fn no_expected_token_is_hidden() {
    let text = std::fs::read_to_string(grammar_dir().join("src/grammar.json")).unwrap();
    let grammar: serde_json::Value = serde_json::from_str(&text).unwrap();
    fn symbols<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::Object(o) => {
                if o.get("type").and_then(|t| t.as_str()) == Some("SYMBOL") {
                    out.extend(o.get("name").and_then(|n| n.as_str()));
                }
                o.values().for_each(|v| symbols(v, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| symbols(v, out)),
            _ => {}
        }
    }
    let (mut externals, mut extras, mut used) = (Vec::new(), Vec::new(), Vec::new());
    symbols(&grammar["externals"], &mut externals);
    symbols(&grammar["extras"], &mut extras);
    symbols(&grammar["rules"], &mut used);
    let rules = grammar["rules"].as_object().unwrap();
    // tokens: the external ones and the rules that are one token
    let tokens = externals.into_iter().chain(
        rules
            .iter()
            .filter(|(_, r)| {
                matches!(
                    r["type"].as_str(),
                    Some("STRING" | "PATTERN" | "TOKEN" | "IMMEDIATE_TOKEN")
                )
            })
            .map(|(name, _)| name.as_str()),
    );
    let hidden_expected: Vec<&str> = tokens
        .filter(|t| t.starts_with('_') && used.contains(t) && !extras.contains(t))
        .collect();
    assert!(
        hidden_expected.is_empty(),
        "hidden tokens that rules expect (a missing one would be an invisible MISSING node): {hidden_expected:?}"
    );
    assert!(
        grammar["externals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "STRING" && e["value"] == "newline"),
        "the separator is the visible external token \"newline\""
    );
}

#[test]
fn corpus() {
    let Some(ts) = cli() else { return };
    let out = run(ts_with_lib(ts, "test").current_dir(grammar_dir()));
    assert!(
        out.contains("Total parses") || out.contains('✓'),
        "unexpected output of tree-sitter test:\n{out}"
    );
}

/// Every query file compiles against the grammar (a capture of a node type
/// or field that does not exist is an error) and runs on every example.
#[test]
fn queries_compile() {
    let Some(ts) = cli() else { return };
    let examples: Vec<PathBuf> = scl_files()
        .into_iter()
        .filter(|f| f.starts_with("examples") || f.starts_with("stdlib"))
        .map(|f| root().join(f))
        .collect();
    for q in [
        "highlights",
        "locals",
        "folds",
        "indents",
        "helix/highlights",
        "helix/locals",
        "helix/indents",
    ] {
        let query = grammar_dir().join(format!("queries/{q}.scm"));
        run(ts_with_lib(ts, "query")
            .arg("--quiet")
            .arg(&query)
            .args(&examples));
    }
}

/// The fixture every construct of the language appears in, for the
/// highlight tests.
const HIGHLIGHT_FIXTURE: &str = "test/highlight-fixture/all.env.scl";

/// One capture printed by `tree-sitter query --captures`: the index of its
/// pattern in the query file, its name and its byte range.
struct Capture {
    pattern: usize,
    name: String,
    start: usize,
    end: usize,
}

/// Every capture of `query` (a path relative to the grammar folder) on the
/// highlight fixture, whose text is `src`.
fn captures(ts: &str, query: &str, src: &str) -> Vec<Capture> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(src.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // `(row, column)`, the column in bytes
    let byte = |point: &str| -> usize {
        let (row, col) = point
            .trim_matches(|c| c == '(' || c == ')')
            .split_once(", ")
            .unwrap_or_else(|| panic!("not a point: {point:?}"));
        line_starts[row.parse::<usize>().unwrap()] + col.parse::<usize>().unwrap()
    };
    let out = run(ts_with_lib(ts, "query")
        .current_dir(grammar_dir())
        .arg("--captures")
        .arg(query)
        .arg(HIGHLIGHT_FIXTURE));
    let mut caps = Vec::new();
    // `    pattern: 22, capture: 21 - type, start: (0, 4), end: (0, 7), text: `app``
    for line in out
        .lines()
        .filter(|l| l.trim_start().starts_with("pattern:"))
    {
        let field = |key: &str| -> &str {
            let rest = &line[line
                .find(key)
                .unwrap_or_else(|| panic!("{key} in {line:?}"))
                + key.len()..];
            let end = if key.ends_with("(") {
                rest.find(')').unwrap()
            } else {
                rest.find(',').unwrap()
            };
            &rest[..end]
        };
        let capture = field("capture: ");
        caps.push(Capture {
            pattern: field("pattern: ").trim().parse().unwrap(),
            name: capture.split_once(" - ").unwrap().1.to_string(),
            start: byte(field("start: (")),
            end: byte(field("end: (")),
        });
    }
    assert!(!caps.is_empty(), "no captures from {query}:\n{out}");
    caps
}

/// The capture that colours the bytes `start..end`: of the captured nodes
/// that contain them, the innermost (smallest) one; of the patterns that
/// capture it, the last one.
fn winner(caps: &[Capture], start: usize, end: usize) -> Option<&str> {
    caps.iter()
        .filter(|c| c.start <= start && end <= c.end)
        .min_by_key(|c| (c.end - c.start, std::cmp::Reverse(c.pattern)))
        .map(|c| c.name.as_str())
}

/// An interesting token of the fixture: the first occurrence of `token`
/// inside the first occurrence of `context`, the capture that should win for
/// it with the nvim-treesitter names (`queries/`) and with Helix's
/// (`queries/helix/`).
struct Expect {
    context: &'static str,
    token: &'static str,
    nvim: &'static str,
    helix: &'static str,
}

const fn e(
    context: &'static str,
    token: &'static str,
    nvim: &'static str,
    helix: &'static str,
) -> Expect {
    Expect {
        context,
        token,
        nvim,
        helix,
    }
}

/// The expected highlight of every construct of the fixture.
const EXPECTED: &[Expect] = &[
    // comments
    e(
        "// a line comment",
        "// a line comment",
        "comment",
        "comment.line",
    ),
    e(
        "/// GPUs per node.",
        "/// GPUs per node.",
        "comment.documentation",
        "comment.line.documentation",
    ),
    // import: keyword, path, module alias
    e(
        "import \"std",
        "import",
        "keyword.import",
        "keyword.control.import",
    ),
    e(
        "\"std/pytorch-cuda\"",
        "\"std/pytorch-cuda\"",
        "string.special.path",
        "string.special.path",
    ),
    e("as torch", "as", "keyword.import", "keyword.control.import"),
    e("as torch", "torch", "module", "namespace"),
    // param, let, types, numbers, quantities, operators
    e("param gpus", "param", "keyword", "keyword.storage.type"),
    e("param gpus", "gpus", "constant", "constant"),
    e("gpus: Int", "Int", "type.builtin", "type.builtin"),
    e(
        "gpus: Int",
        ":",
        "punctuation.delimiter",
        "punctuation.delimiter",
    ),
    e("= 2 where", "=", "operator", "operator"),
    e("= 2 where", "2", "number", "constant.numeric.integer"),
    e("2 where", "where", "keyword", "keyword"),
    e("where gpus", "gpus", "variable", "variable"),
    e("gpus >= 1", ">=", "operator", "operator"),
    e("&&", "&&", "operator", "operator"),
    e("let shm", "let", "keyword", "keyword.storage.type"),
    e("let shm", "shm", "constant", "constant"),
    e("512Mi", "512Mi", "number", "constant.numeric"),
    e("0.5", "0.5", "number.float", "constant.numeric.float"),
    e(
        "[String?]",
        "[",
        "punctuation.bracket",
        "punctuation.bracket",
    ),
    e("[String?]", "String", "type.builtin", "type.builtin"),
    e("[String?]", "?", "operator", "operator"),
    // enum declaration
    e(
        "enum Flavor",
        "enum",
        "keyword.type",
        "keyword.storage.type",
    ),
    e("enum Flavor", "Flavor", "type", "type"),
    e(
        "{ runtime, devel }",
        "runtime",
        "constant",
        "type.enum.variant",
    ),
    // fn declaration, parameters, enum literal, record fields
    e("fn data", "fn", "keyword.function", "keyword.function"),
    e("fn data", "data", "function", "function"),
    e(
        "(name: String",
        "name",
        "variable.parameter",
        "variable.parameter",
    ),
    e("mode: Mode", "Mode", "type", "type"),
    e(".read_only", ".", "constant", "type.enum.variant"),
    e(".read_only", "read_only", "constant", "type.enum.variant"),
    e("-> Volume?", "->", "operator", "operator"),
    e("-> Volume?", "Volume", "type", "type"),
    e("name = name,", "name", "property", "variable.other.member"),
    e("= name,", "name", "variable", "variable"),
    // strings: text, interpolation, escape
    e("\"pvc://", "\"pvc://", "string", "string"),
    e(
        "${name}",
        "${",
        "punctuation.special",
        "punctuation.special",
    ),
    e("${name}", "name", "variable", "variable"),
    e(
        "name}\\n",
        "}",
        "punctuation.special",
        "punctuation.special",
    ),
    e("\\n\"", "\\n", "string.escape", "constant.character.escape"),
    // comprehension, builtin call
    e("[for p", "for", "keyword.repeat", "keyword.control.repeat"),
    e("[for p", "p", "variable", "variable"),
    e("p in split", "in", "keyword.repeat", "keyword.operator"),
    e("split(uri", "split", "function.builtin", "function.builtin"),
    e(
        "if p !=",
        "if",
        "keyword.conditional",
        "keyword.control.conditional",
    ),
    e("p != \"\"", "!=", "operator", "operator"),
    // env template: name, parameters, map type, parent from a module
    e("env app", "env", "keyword", "keyword"),
    e("env app", "app", "type", "type"),
    e(
        "(flavor: Flavor",
        "flavor",
        "variable.parameter",
        "variable.parameter",
    ),
    e("(flavor: Flavor", "Flavor", "type", "type"),
    e("= .devel", "devel", "constant", "type.enum.variant"),
    e("{String: Int}", "String", "type.builtin", "type.builtin"),
    e("{String: Int}", "Int", "type.builtin", "type.builtin"),
    e("extends torch", "extends", "keyword", "keyword"),
    e("extends torch.runtime", "torch", "module", "namespace"),
    e("torch.runtime(", "runtime", "type", "type"),
    e(
        "(torch = \"2.1.2\"",
        "torch",
        "variable.parameter",
        "variable.parameter",
    ),
    e("\"2.1.2\"", "\"2.1.2\"", "string", "string"),
    e("= .pip", ".", "constant", "type.enum.variant"),
    e("= .pip", "pip", "constant", "type.enum.variant"),
    // env items
    e("base = image", "base", "property", "variable.other.member"),
    e(
        "image(\"python",
        "image",
        "function.builtin",
        "function.builtin",
    ),
    e(
        "labels.\"app",
        "labels",
        "property",
        "variable.other.member",
    ),
    e(
        "\"app.kubernetes.io/name\"",
        "\"app.kubernetes.io/name\"",
        "property",
        "variable.other.member",
    ),
    e("\"\"\"web\"\"\"", "\"\"\"web\"\"\"", "string", "string"),
    e(
        "python.packages +=",
        "packages",
        "property",
        "variable.other.member",
    ),
    e("python.packages +=", "+=", "operator", "operator"),
    e(
        "resources.limits {",
        "limits",
        "property",
        "variable.other.member",
    ),
    e("-1 * 2", "-", "operator", "operator"),
    e("-1 * 2", "1", "number", "constant.numeric.integer"),
    e("-1 * 2", "*", "operator", "operator"),
    e("!true", "!", "operator", "operator"),
    e("!true", "true", "boolean", "constant.builtin.boolean"),
    e("|| false", "||", "operator", "operator"),
    e("|| false", "false", "boolean", "constant.builtin.boolean"),
    e(
        "if gpus > 1 then",
        "if",
        "keyword.conditional",
        "keyword.control.conditional",
    ),
    e(
        "1 then",
        "then",
        "keyword.conditional",
        "keyword.control.conditional",
    ),
    e(
        "gpus else",
        "else",
        "keyword.conditional",
        "keyword.control.conditional",
    ),
    e(
        "self.python",
        "self",
        "variable.builtin",
        "variable.builtin",
    ),
    e(
        "self.python.version",
        "version",
        "property",
        "variable.other.member",
    ),
    e("names[0]", "names", "variable", "variable"),
    e("data(\"x\"", "data", "function.call", "function"),
    e(
        "at = \"/d\"",
        "at",
        "variable.parameter",
        "variable.parameter",
    ),
    e("torch.mount(", "torch", "module", "namespace"),
    e("torch.mount(", "mount", "function.call", "function"),
    e(
        "if gpus > 1 {",
        "if",
        "keyword.conditional",
        "keyword.control.conditional",
    ),
    e(
        "workers = [4]",
        "workers",
        "property",
        "variable.other.member",
    ),
];

/// The byte range of an expected token in the fixture.
fn locate(src: &str, x: &Expect) -> (usize, usize) {
    let at = src
        .find(x.context)
        .unwrap_or_else(|| panic!("{:?} is not in {HIGHLIGHT_FIXTURE}", x.context));
    assert!(
        src[at + 1..].find(x.context).is_none(),
        "{:?} occurs twice in {HIGHLIGHT_FIXTURE}: make it unique",
        x.context
    );
    let start = at
        + x.context
            .find(x.token)
            .unwrap_or_else(|| panic!("{:?} is not in {:?}", x.token, x.context));
    (start, start + x.token.len())
}

/// Checks the winning capture of every expected token under one query file.
fn check_highlights(ts: &str, query: &str, expected: impl Fn(&Expect) -> &'static str) {
    let src = std::fs::read_to_string(grammar_dir().join(HIGHLIGHT_FIXTURE)).unwrap();
    let caps = captures(ts, query, &src);
    let wrong: Vec<String> = EXPECTED
        .iter()
        .filter_map(|x| {
            let (start, end) = locate(&src, x);
            let got = winner(&caps, start, end);
            (got != Some(expected(x))).then(|| {
                format!(
                    "{:?} in {:?}: {got:?}, expected {:?}",
                    x.token,
                    x.context,
                    expected(x)
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{query} gives {} tokens of {HIGHLIGHT_FIXTURE} the wrong highlight:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The class `tree-sitter highlight --html --style minimal` gives each byte
/// of the source: the innermost `<span class='…'>` around it (`None`
/// outside every span).
fn highlight_classes(html: &str, src: &str) -> Vec<Option<String>> {
    let mut classes = Vec::with_capacity(src.len());
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<span class='") {
            let end = r.find("'>").unwrap();
            stack.push(r[..end].to_string());
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix("</span>") {
            stack.pop();
            rest = r;
        } else if rest.starts_with('&') {
            let end = rest.find(';').unwrap();
            let len = match &rest[..=end] {
                "&quot;" | "&lt;" | "&gt;" | "&amp;" | "&#39;" | "&apos;" => 1,
                other => panic!("unknown entity {other}"),
            };
            classes.extend(std::iter::repeat_n(stack.last().cloned(), len));
            rest = &rest[end + 1..];
        } else {
            let c = rest.chars().next().unwrap();
            classes.extend(std::iter::repeat_n(stack.last().cloned(), c.len_utf8()));
            rest = &rest[c.len_utf8()..];
        }
    }
    // the HTML leaves out the final line end
    if classes.len() + 1 == src.len() && src.ends_with('\n') {
        classes.push(None);
    }
    assert_eq!(
        classes.len(),
        src.len(),
        "the highlighted text is not the source"
    );
    classes
}

#[test]
fn highlights_of_every_construct() {
    let Some(ts) = cli() else { return };
    check_highlights(ts, "queries/highlights.scm", |x| x.nvim);
    // The real highlighter agrees. It shows a capture as the name of its
    // theme with the most parts that are all parts of the capture (dots as
    // spaces: `keyword.function` may show as `function`), or as no class
    // where the theme has no such name (`boolean`): each class must be made
    // of parts of the expected capture (with the catch-all rule last, an env
    // name showed as `variable`, not a part of `type`).
    let lib = parser_lib(ts);
    let out = run(Command::new(ts)
        .current_dir(grammar_dir())
        .env("TREE_SITTER_LIBDIR", lib.parent().unwrap())
        .args([
            "highlight",
            "--html",
            "--style",
            "minimal",
            "--layout",
            "fragment",
        ])
        .arg(HIGHLIGHT_FIXTURE));
    let src = std::fs::read_to_string(grammar_dir().join(HIGHLIGHT_FIXTURE)).unwrap();
    let code = out
        .split_once("<pre><code>")
        .and_then(|(_, r)| r.rsplit_once("</code></pre>"))
        .map(|(c, _)| c)
        .unwrap_or_else(|| panic!("no <pre><code> in tree-sitter highlight's output:\n{out}"));
    let classes = highlight_classes(code, &src);
    let wrong: Vec<String> = EXPECTED
        .iter()
        .filter_map(|x| {
            let (start, end) = locate(&src, x);
            let want: Vec<&str> = x.nvim.split('.').collect();
            let bad = classes[start..end].iter().find(|c| match c {
                Some(c) => !c.split(' ').all(|part| want.contains(&part)),
                None => false,
            });
            bad.map(|c| {
                format!(
                    "{:?} in {:?}: class {c:?}, expected {:?}",
                    x.token, x.context, x.nvim
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "tree-sitter highlight colours {} tokens of {HIGHLIGHT_FIXTURE} wrongly:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn helix_highlights_of_every_construct() {
    let Some(ts) = cli() else { return };
    check_highlights(ts, "queries/helix/highlights.scm", |x| x.helix);
}

/// In Helix's locals, a later pattern wins, so the discards after
/// `(identifier) @local.reference` keep field names, named arguments and
/// enum literals from resolving to a definition of the same name (the
/// named argument `torch = …` is not the module `torch`); a name in an
/// expression stays a reference.
#[test]
fn helix_locals_discard_non_references() {
    let Some(ts) = cli() else { return };
    let src = std::fs::read_to_string(grammar_dir().join(HIGHLIGHT_FIXTURE)).unwrap();
    let caps = captures(ts, "queries/helix/locals.scm", &src);
    for (context, token, want) in [
        ("(torch = \"2.1.2\"", "torch", "_argument"),
        ("name = name,", "name", "_field"),
        ("= .pip", "pip", "_enum_literal"),
        ("self.python.version", "version", "_field"),
        ("= name,", "name", "local.reference"),
        ("gpus > 1 then", "gpus", "local.reference"),
        ("extends torch.runtime", "torch", "local.reference"),
    ] {
        let (start, end) = locate(&src, &e(context, token, "", ""));
        assert_eq!(
            winner(&caps, start, end),
            Some(want),
            "{token:?} in {context:?}"
        );
    }
}

#[test]
fn generated_parser_is_committed() {
    let Some(ts) = cli() else { return };
    let work = tempfile_dir::Dir::new("scl-tree-sitter-generate");
    for f in ["grammar.js", "tree-sitter.json"] {
        std::fs::copy(grammar_dir().join(f), work.path().join(f)).unwrap();
    }
    // The built-in QuickJS runtime: no node needed.
    run(Command::new(ts).current_dir(work.path()).args([
        "generate",
        "--js-runtime",
        "native",
        "grammar.js",
    ]));
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
        let want =
            std::fs::read(generated.join(f)).unwrap_or_else(|e| panic!("generated {f}: {e}"));
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
