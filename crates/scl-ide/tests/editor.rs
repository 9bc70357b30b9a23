//! The editor features of `Analysis`: semantic tokens, inlay hints and
//! formatting edits, on in-memory workspaces and on every file of
//! `examples/` and `stdlib/`.

use scl_ide::{
    Analysis, AnalysisHost, FileId, InlayHint, MemorySystem, SemanticToken, Span, TextEdit,
    TokenKind, TOKEN_MODIFIERS,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

fn host(sys: &MemorySystem) -> AnalysisHost {
    sys.set_current_dir("/ws");
    AnalysisHost::new(Arc::new(sys.clone()), Path::new("/ws"), None)
}

const BASE: &str = r#"// The team's shared base.

/// GPU sizes.
enum Tier { small, large }

/// The CUDA base every project starts from.
env base {
  base = image("nvidia/cuda:12.1.0-runtime-ubuntu22.04")
  python.version = "3.10"
  resources.requests.cpu = 4
  resources.requests.memory = 16Gi
  workdir = "/work"
}

/// A GPU env: `gpus` devices.
env gpu_env(gpus: Int = 1, memory: Memory = 32Gi, tier: Tier = .small) extends base {
  resources.requests.gpu = { count = gpus, type = "NVIDIA-${tier}" }
  resources.requests.memory = memory
}
"#;

const TRAIN: &str = r#"import "./base.env.scl" as b
import "std/s3-data" as s3

/// Epochs to train.
param epochs: Int = 3 where epochs >= 1

let tag = "run-${epochs}"

fn double(x: Int) -> Int = x * 2

env train extends b.base {
  resources {
    requests.cpu = 8
  }
  vars { TAG = tag, STEPS = "${double(epochs)}" }
  volumes += [s3.mount("s3://bucket/glue", at = "/data")]
  entrypoint = ["python", "train.py"]
}

env big extends b.gpu_env(gpus = 2) {
  python.manager = .pip
  workdir = "/big"
}
"#;

fn fixture() -> (AnalysisHost, FileId, FileId) {
    let sys = MemorySystem::new();
    sys.write("/ws/base.env.scl", BASE);
    sys.write("/ws/train.env.scl", TRAIN);
    let h = host(&sys);
    let (base, train) = (
        h.file(Path::new("base.env.scl")),
        h.file(Path::new("train.env.scl")),
    );
    (h, base, train)
}

fn modifiers(bits: u32) -> String {
    let names: Vec<&str> = (0..TOKEN_MODIFIERS.len())
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| TOKEN_MODIFIERS[i])
        .collect();
    names.join(",")
}

/// `line:col-col kind [mods] "text"` (1-based lines, character columns).
fn render_tokens(a: &Analysis, f: FileId, tokens: &[SemanticToken]) -> String {
    let text = a.text(f);
    let mut out = String::new();
    for t in tokens {
        let (l1, c1) = a.line_col(f, t.span.start);
        let (l2, c2) = a.line_col(f, t.span.end);
        let end = if l1 == l2 {
            format!("{c2}")
        } else {
            format!("{l2}:{c2}")
        };
        out.push_str(&format!(
            "{l1}:{c1}-{end} {} [{}] {:?}\n",
            t.kind.lsp_name(),
            modifiers(t.modifiers),
            &text[t.span.range()]
        ));
    }
    out
}

fn render_target(a: &Analysis, t: &Option<scl_ide::NavTarget>) -> String {
    match t {
        Some(t) => {
            let (l, c) = a.line_col(t.file, t.span.start);
            format!(
                "{}:{l}:{c} {:?}",
                a.key(t.file),
                &a.text(t.file)[t.span.range()]
            )
        }
        None => "-".into(),
    }
}

/// `line:col kind label -> target`, then the tooltip's lines indented.
fn render_hints(a: &Analysis, f: FileId, hints: &[InlayHint]) -> String {
    let mut out = String::new();
    for h in hints {
        let (l, c) = a.line_col(f, h.offset);
        out.push_str(&format!(
            "{l}:{c} {:?} {:?} -> {}\n",
            h.kind,
            h.label,
            render_target(a, &h.target)
        ));
        for line in h.tooltip.iter().flat_map(|t| t.lines()) {
            out.push_str(&format!("    | {line}\n"));
        }
    }
    out
}

fn whole(a: &Analysis, f: FileId) -> Span {
    Span::new(0, a.text(f).len())
}

#[test]
fn legend() {
    let names: Vec<&str> = TokenKind::ALL.iter().map(|k| k.lsp_name()).collect();
    assert_eq!(
        names,
        [
            "keyword",
            "comment",
            "string",
            "number",
            "operator",
            "namespace",
            "type",
            "enum",
            "enumMember",
            "function",
            "parameter",
            "variable",
            "property",
            "class"
        ]
    );
    // The legend index is the discriminant.
    for (i, k) in TokenKind::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i);
    }
    assert_eq!(
        [
            SemanticToken::DECLARATION,
            SemanticToken::DOCUMENTATION,
            SemanticToken::READONLY,
            SemanticToken::DEFAULT_LIBRARY
        ]
        .map(modifiers),
        TOKEN_MODIFIERS
    );
}

#[test]
fn semantic_tokens_of_a_multi_file_fixture() {
    scl_ide::with_compiler_stack(|| {
        let (h, base, train) = fixture();
        let a = h.analysis();
        assert_eq!(a.check(&[train]), vec![]);
        insta::assert_snapshot!(
            "tokens_base",
            render_tokens(&a, base, &a.semantic_tokens(base))
        );
        insta::assert_snapshot!(
            "tokens_train",
            render_tokens(&a, train, &a.semantic_tokens(train))
        );
    })
}

#[test]
fn inlay_hints_of_a_multi_file_fixture() {
    scl_ide::with_compiler_stack(|| {
        let (h, base, train) = fixture();
        let a = h.analysis();
        insta::assert_snapshot!(
            "hints_base",
            render_hints(&a, base, &a.inlay_hints(base, whole(&a, base)))
        );
        insta::assert_snapshot!(
            "hints_train",
            render_hints(&a, train, &a.inlay_hints(train, whole(&a, train)))
        );
    })
}

/// Every `*.env.scl` of `examples/` and `stdlib/`: (path under /ws, text).
fn repository_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    let mut stack = vec![root.join("examples"), root.join("stdlib")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".env.scl") {
                let rel = p.strip_prefix(&root).unwrap().to_path_buf();
                out.push((
                    Path::new("/ws").join(rel),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 9, "{out:?}");
    out
}

/// The repository files on an in-memory file system (imports resolve).
fn repository_host() -> (AnalysisHost, Vec<(FileId, String)>) {
    let sys = MemorySystem::new();
    let files = repository_files();
    for (p, t) in &files {
        sys.write(p, t);
    }
    let h = host(&sys);
    let ids = files.into_iter().map(|(p, t)| (h.file(&p), t)).collect();
    (h, ids)
}

fn check_tokens(text: &str, tokens: &[SemanticToken]) -> Result<(), String> {
    let mut end = 0;
    for t in tokens {
        let (s, e) = (t.span.start as usize, t.span.end as usize);
        if s < end || e <= s || e > text.len() {
            return Err(format!("{t:?} after {end} (text of {} bytes)", text.len()));
        }
        if !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            return Err(format!("{t:?} splits a character"));
        }
        end = e;
    }
    Ok(())
}

#[test]
fn every_prefix_of_every_repository_file_gives_well_formed_tokens_and_hints() {
    scl_ide::with_compiler_stack(|| {
        let (mut h, files) = repository_host();
        let started = Instant::now();
        let mut checked = 0;
        for (f, text) in &files {
            let cuts: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            for &cut in &cuts {
                let prefix = &text[..cut];
                h.set_text(*f, prefix);
                let a = h.analysis();
                let tokens = a.semantic_tokens(*f);
                if let Err(e) = check_tokens(prefix, &tokens) {
                    panic!("{}: prefix of {cut} bytes: {e}", a.key(*f));
                }
                // Hints evaluate: at every line break (and the whole file).
                if cut == text.len() || text[cut..].starts_with('\n') {
                    for hint in a.inlay_hints(*f, Span::new(0, cut)) {
                        assert!(
                            hint.offset as usize <= cut
                                && prefix.is_char_boundary(hint.offset as usize)
                        );
                        assert!(
                            !hint.label.is_empty() && hint.label.chars().count() <= 120,
                            "{hint:?}"
                        );
                    }
                }
                checked += 1;
                drop(a);
            }
            h.set_text(*f, text);
        }
        assert!(checked > 5000, "{checked}");
        eprintln!("{checked} prefixes in {:?}", started.elapsed());
    })
}

#[test]
fn whole_repository_files_have_classified_names() {
    scl_ide::with_compiler_stack(|| {
        let (h, files) = repository_host();
        let a = h.analysis();
        for (f, text) in &files {
            let tokens = a.semantic_tokens(*f);
            check_tokens(text, &tokens).unwrap();
            // Every identifier of a file that parses is classified by the
            // tree: none is left to the fallback (a variable that
            // resolves to nothing, no modifiers).
            let unresolved: Vec<&str> = tokens
                .iter()
                .filter(|t| t.kind == TokenKind::Variable && t.modifiers == 0)
                .map(|t| &text[t.span.range()])
                .collect();
            assert!(unresolved.is_empty(), "{}: {unresolved:?}", a.key(*f));
        }
    })
}

#[test]
fn the_token_checker_finds_overlaps_and_empty_tokens() {
    let t = |s: usize, e: usize| SemanticToken {
        span: Span::new(s, e),
        kind: TokenKind::Keyword,
        modifiers: 0,
    };
    assert!(check_tokens("abcd", &[t(0, 2), t(2, 4)]).is_ok());
    assert!(check_tokens("abcd", &[t(0, 2), t(1, 3)]).is_err());
    assert!(check_tokens("abcd", &[t(1, 1)]).is_err());
    assert!(check_tokens("abcd", &[t(2, 5)]).is_err());
    assert!(check_tokens("é", &[t(0, 1)]).is_err());
}

/// `text` with `edits` applied (they must be sorted and not overlap).
fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for e in edits {
        assert!(
            e.span.start as usize >= at,
            "edits overlap or are unsorted: {edits:?}"
        );
        out.push_str(&text[at..e.span.start as usize]);
        out.push_str(&e.new_text);
        at = e.span.end as usize;
    }
    out.push_str(&text[at..]);
    out
}

/// Each edit replaces whole lines, and two edits never touch (a run of
/// changed lines is one edit).
fn check_line_edits(text: &str, edits: &[TextEdit]) {
    for e in edits {
        let (s, end) = (e.span.start as usize, e.span.end as usize);
        assert!(s == 0 || text.as_bytes()[s - 1] == b'\n', "{e:?}");
        assert!(
            end == text.len() || text.as_bytes()[end - 1] == b'\n',
            "{e:?}"
        );
    }
    for w in edits.windows(2) {
        assert!(w[0].span.end < w[1].span.start, "adjacent edits: {w:?}");
    }
}

/// Variants of a formatted file that the formatter must undo.
fn messed_up(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let in_multiline = |i: usize| {
        lines[..i]
            .iter()
            .map(|l| l.matches("\"\"\"").count())
            .sum::<usize>()
            % 2
            == 1
    };
    let mut out = Vec::new();
    // Reindented: four spaces per level, and everything flush left.
    out.push(
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if in_multiline(i) {
                    l.to_string()
                } else {
                    l.replace("  ", "    ")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    );
    out.push(
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if in_multiline(i) {
                    l.to_string()
                } else {
                    l.trim_start().to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    // Extra blank lines and trailing blanks.
    out.push(text.replace("\n\n", "\n\n\n\n"));
    out.push(
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if in_multiline(i) {
                    l.to_string()
                } else {
                    format!("{l}   ")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n\n\n",
    );
    // A comment before every declaration, badly indented.
    out.push(
        lines
            .iter()
            .map(|l| {
                if ["env ", "let ", "fn ", "param ", "import ", "enum "]
                    .iter()
                    .any(|k| l.starts_with(k))
                {
                    format!("      // about {}\n{l}", l.split(' ').nth(1).unwrap_or(""))
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    );
    out
}

#[test]
fn format_edits_give_what_sclc_fmt_writes() {
    scl_ide::with_compiler_stack(|| {
        let (mut h, files) = repository_host();
        let mut variants = 0;
        for (f, text) in &files {
            let a = h.analysis();
            let formatted = scl_fmt::format_verified(text).unwrap();
            let edits = a.format_edits(*f).unwrap();
            assert_eq!(apply(text, &edits), formatted, "{}", a.key(*f));
            // The repository's files are formatted already.
            assert_eq!(edits, vec![], "{}", a.key(*f));
            drop(a);
            for v in messed_up(text) {
                h.set_text(*f, &v);
                let a = h.analysis();
                match scl_fmt::format_verified(&v) {
                    Ok(want) => {
                        let edits = a.format_edits(*f).unwrap();
                        check_line_edits(&v, &edits);
                        assert_eq!(apply(&v, &edits), want, "{}: {v}", a.key(*f));
                        assert_eq!(want == v, edits.is_empty());
                        variants += 1;
                    }
                    Err(_) => assert!(a.format_edits(*f).is_err()),
                }
            }
            h.set_text(*f, text);
        }
        assert!(variants >= 40, "{variants}");
    })
}

#[test]
fn format_edits_are_one_per_changed_run_of_lines() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        let text =
            "env a {\n    workdir = \"/w\"\n  user.name = \"u\"\n\n\n\n  vars.X =    \"1\"\n}\n";
        sys.write("/ws/a.env.scl", text);
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("a.env.scl"));
        let edits = a.format_edits(f).unwrap();
        let line = |n: usize| -> usize { text.split_inclusive('\n').take(n).map(str::len).sum() };
        assert_eq!(
            edits,
            vec![
                TextEdit {
                    file: f,
                    span: Span::new(line(1), line(2)),
                    new_text: "  workdir = \"/w\"\n".into()
                },
                TextEdit {
                    file: f,
                    // One blank line stays: the edit starts after it.
                    span: Span::new(line(4), line(7)),
                    new_text: "  vars.X = \"1\"\n".into()
                },
            ]
        );
        assert_eq!(apply(text, &edits), scl_fmt::format(text).unwrap());
    })
}

#[test]
fn format_edits_refuse_a_file_with_a_syntax_error_and_keep_a_bom() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/broken.env.scl", "env a {\n  workdir = \n}\n");
        sys.write("/ws/bom.env.scl", "\u{feff}env  b {\n}\n");
        let h = host(&sys);
        let a = h.analysis();
        let broken = a.file(Path::new("broken.env.scl"));
        let errs = a.format_edits(broken).unwrap_err();
        let got: Vec<(&str, &str, u32)> = errs
            .iter()
            .map(|d| (d.code, &*d.at.file, d.at.span.start))
            .collect();
        assert_eq!(got.len(), 1, "{errs:?}");
        assert_eq!((got[0].0, got[0].1), ("E0001", "broken.env.scl"));
        let bom = a.file(Path::new("bom.env.scl"));
        let edits = a.format_edits(bom).unwrap();
        assert_eq!(
            edits,
            vec![TextEdit {
                file: bom,
                span: Span::new(3, 14),
                new_text: "env b {}\n".into()
            }]
        );
    })
}

#[test]
fn an_env_with_errors_gets_hints_from_its_syntax_and_range_filters() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/base.env.scl", BASE);
        let text = "import \"./base.env.scl\" as b\n\nenv bad extends b.base {\n  workdir = 42\n  python.version = \"3.12\"\n}\n";
        sys.write("/ws/bad.env.scl", text);
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("bad.env.scl"));
        assert!(a.ir(f, "bad").is_none());
        let labels = |r: Span| -> Vec<(u32, String)> {
            a.inlay_hints(f, r)
                .into_iter()
                .map(|h| (h.offset, h.label))
                .collect()
        };
        let after = |s: &str| (text.find(s).unwrap() + s.len()) as u32;
        let all = labels(Span::new(0, text.len()));
        assert_eq!(
            all,
            [
                (
                    after("b.base {"),
                    "inherits 3 fields from b.base".to_string()
                ),
                (after("workdir = 42"), "(was \"/work\" in base)".to_string()),
                (after("\"3.12\""), "(was \"3.10\" in base)".to_string()),
            ]
        );
        // Only the hints inside the range (both ends included).
        let w = after("workdir = 42");
        assert_eq!(labels(Span::new(w as usize, w as usize)), all[1..2]);
        assert_eq!(
            labels(Span::new(w as usize + 1, after("\"3.12\"") as usize - 1)),
            []
        );
    })
}

#[test]
fn half_typed_code_keeps_its_tokens() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/base.env.scl", BASE);
        let text = "import \"./base.env.scl\" as b\nenv x extends b.gpu_env(gpus = 2) {\n  resources.requests.\n  python.manager = .\n}\n";
        sys.write("/ws/x.env.scl", text);
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("x.env.scl"));
        assert!(!a.file_diagnostics(f).is_empty());
        let tokens = a.semantic_tokens(f);
        check_tokens(text, &tokens).unwrap();
        let kind_of = |s: &str| {
            let at = text.find(s).unwrap() as u32;
            tokens
                .iter()
                .find(|t| t.span.start == at)
                .map(|t| (t.kind, t.modifiers))
        };
        assert_eq!(kind_of("b.gpu"), Some((TokenKind::Namespace, 0)));
        assert_eq!(kind_of("gpu_env"), Some((TokenKind::Class, 0)));
        assert_eq!(kind_of("gpus"), Some((TokenKind::Parameter, 0)));
        assert_eq!(kind_of("env x").map(|k| k.0), Some(TokenKind::Keyword));
        assert_eq!(
            kind_of("x extends"),
            Some((TokenKind::Class, SemanticToken::DECLARATION))
        );
        // The template call still shows what is left at its default.
        let hints: Vec<String> = a
            .inlay_hints(f, Span::new(0, text.len()))
            .into_iter()
            .filter(|h| h.kind == scl_ide::InlayKind::Default)
            .map(|h| h.label)
            .collect();
        assert_eq!(hints, [", memory = 32Gi", ", tier = .small"]);
    })
}
