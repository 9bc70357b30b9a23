//! A mutator of the repository's SCL files (`examples/`, `stdlib/`,
//! `tests/`): each corpus entry is one `.env.scl` file with the files of
//! its folder (imports, requirements files), and a case applies a short
//! list of mutations to the main file — byte edits, token insertions,
//! repetitions (which grow chains and nesting), splices of lines from other
//! corpus files, boundary numbers and hostile strings in place of literals.

use crate::case::Case;
use crate::gen;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use std::path::Path;
use std::sync::Arc;

/// One corpus entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Repository-relative path of the main file (for labels).
    pub name: String,
    pub case: Case,
}

/// The corpus: every `.env.scl` below the given folders of the repository.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub entries: Vec<Entry>,
}

/// The folders the corpus is read from.
pub const CORPUS_DIRS: &[&str] = &["examples", "stdlib", "tests"];

impl Corpus {
    /// Reads the corpus below `repo` (sorted, so the same repository gives
    /// the same corpus). Each entry's workspace is the main file's folder
    /// with everything below it, up to 2 MiB.
    pub fn load(repo: &Path) -> Corpus {
        let mut mains = Vec::new();
        for d in CORPUS_DIRS {
            walk(&repo.join(d), &mut mains);
        }
        mains.sort();
        let mut entries = Vec::new();
        for m in mains {
            let dir = m.parent().expect("a file has a folder");
            let mut files = Vec::new();
            let mut total = 0usize;
            let mut all = Vec::new();
            walk_all(dir, &mut all);
            all.sort();
            for p in all {
                let Ok(bytes) = std::fs::read(&p) else {
                    continue;
                };
                total += bytes.len();
                if total > 2 << 20 && p != m {
                    continue;
                }
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.push((rel, bytes));
            }
            let main = m.file_name().unwrap().to_string_lossy().to_string();
            let name = m
                .strip_prefix(repo)
                .unwrap_or(&m)
                .to_string_lossy()
                .replace('\\', "/");
            entries.push(Entry {
                name: name.clone(),
                case: Case {
                    label: format!("mutate:{name}"),
                    main,
                    files,
                },
            });
        }
        Corpus { entries }
    }
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.to_string_lossy().ends_with(".env.scl") {
            out.push(p);
        }
    }
}

fn walk_all(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let hidden = e.file_name().to_string_lossy().starts_with('.');
        if p.is_dir() && !hidden {
            walk_all(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

/// Tokens inserted or substituted.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "\"\"\"",
    "${",
    "}",
    ",",
    ".",
    ":",
    "=",
    "+=",
    "-=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "!",
    "&&",
    "||",
    "->",
    "?",
    "\n",
    " ",
    "\t",
    "\\",
    "//",
    "///",
    "import",
    "as",
    "param",
    "let",
    "fn",
    "env",
    "enum",
    "extends",
    "with",
    "if",
    "then",
    "else",
    "for",
    "in",
    "where",
    "true",
    "false",
    "self",
    "self.ports",
    "base",
    "labels",
    "vars",
    "setup",
    "0",
    "-1",
    "4294967296",
    "1e99999999999Gi",
    "16Ei",
    "4GB",
    "3e",
    "\u{feff}",
    "\u{0}",
    "\r",
    "ä",
    "x[0]",
    "f()",
    "len(",
    "join([], \"\")",
    "replace(\"a\", \"a\", \"aa\")",
    "extends e",
    "import \"./base.env.scl\" as b",
    "import \"std/s3-data\" as s3",
];

/// Boundary numbers for number literals.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "65536",
    "4294967295",
    "4294967296",
    "99999999999",
    "9223372036854775808",
    "1e99999999999",
    "1e-99999",
    "1_",
    "00",
    "0.0",
    "999999999999999999999999",
];

/// One mutation of the main file's bytes; positions are proptest indexes
/// resolved against the current length, so a list of mutations shrinks.
#[derive(Clone, Debug)]
pub enum Mutation {
    Delete(Index, u8),
    Insert(Index, &'static str),
    Replace(Index, u8, &'static str),
    Duplicate(Index, u8, u16),
    Splice(Index, Index, Index),
    Number(Index, &'static str),
    Literal(Index, String),
    Byte(Index, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (any::<Index>(), 1u8..40).prop_map(|(i, n)| Mutation::Delete(i, n)),
        3 => (any::<Index>(), select(TOKENS)).prop_map(|(i, t)| Mutation::Insert(i, t)),
        2 => (any::<Index>(), 1u8..12, select(TOKENS)).prop_map(|(i, n, t)| Mutation::Replace(i, n, t)),
        2 => (any::<Index>(), 1u8..24, prop_oneof![3 => 2u16..8, 1 => 8u16..3000]).prop_map(|(i, n, k)| Mutation::Duplicate(i, n, k)),
        2 => (any::<Index>(), any::<Index>(), any::<Index>()).prop_map(|(i, f, l)| Mutation::Splice(i, f, l)),
        2 => (any::<Index>(), select(NUMBERS)).prop_map(|(i, n)| Mutation::Number(i, n)),
        3 => (any::<Index>(), gen::hostile_raw()).prop_map(|(i, s)| Mutation::Literal(i, s)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
    ]
}

/// Start offsets of the literals of a kind in `text`: numbers (a digit not
/// after a word character) or one-line strings.
fn starts(text: &[u8], string: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if string && c == b'"' {
            let mut j = i + 1;
            while j < text.len() && text[j] != b'"' && text[j] != b'\n' {
                j += if text[j] == b'\\' { 2 } else { 1 };
            }
            if j < text.len() && text[j] == b'"' {
                out.push((i, j + 1));
            }
            i = j + 1;
        } else if !string
            && c.is_ascii_digit()
            && (i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'_'))
        {
            let mut j = i;
            while j < text.len()
                && (text[j].is_ascii_alphanumeric() || text[j] == b'_' || text[j] == b'.')
            {
                j += 1;
            }
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Applies `m` to `text`; `others` are the corpus texts to splice from.
pub fn apply(text: &mut Vec<u8>, m: &Mutation, others: &[Arc<Vec<u8>>]) {
    let at = |i: &Index, len: usize| {
        if len == 0 {
            0
        } else {
            i.index(len + 1).min(len)
        }
    };
    let len = text.len();
    match m {
        Mutation::Delete(i, n) => {
            let a = at(i, len);
            let b = (a + *n as usize).min(len);
            text.drain(a..b);
        }
        Mutation::Insert(i, t) => {
            let a = at(i, len);
            text.splice(a..a, t.bytes());
        }
        Mutation::Replace(i, n, t) => {
            let a = at(i, len);
            let b = (a + *n as usize).min(len);
            text.splice(a..b, t.bytes());
        }
        Mutation::Duplicate(i, n, k) => {
            let a = at(i, len);
            let b = (a + *n as usize).min(len);
            let piece = text[a..b].to_vec();
            let rep: Vec<u8> = piece.repeat(*k as usize);
            text.splice(b..b, rep);
        }
        Mutation::Splice(i, f, l) => {
            if others.is_empty() {
                return;
            }
            let src = &others[f.index(others.len())];
            let lines: Vec<&[u8]> = src.split(|b| *b == b'\n').collect();
            let line = lines[l.index(lines.len())];
            // Insert at a line start.
            let mut a = at(i, len);
            while a > 0 && text[a - 1] != b'\n' {
                a -= 1;
            }
            let mut piece = line.to_vec();
            piece.push(b'\n');
            text.splice(a..a, piece);
        }
        Mutation::Number(i, n) => {
            let s = starts(text, false);
            if !s.is_empty() {
                let (a, b) = s[i.index(s.len())];
                text.splice(a..b, n.bytes());
            }
        }
        Mutation::Literal(i, raw) => {
            let s = starts(text, true);
            if !s.is_empty() {
                let (a, b) = s[i.index(s.len())];
                text.splice(a..b, gen::literal(raw).into_bytes());
            }
        }
        Mutation::Byte(i, b) => {
            if len > 0 {
                let a = i.index(len);
                text[a] = *b;
            }
        }
    }
}

/// A mutated corpus entry.
pub fn mutated(corpus: Arc<Corpus>) -> BoxedStrategy<Case> {
    assert!(!corpus.entries.is_empty(), "the corpus is empty");
    let others: Arc<Vec<Arc<Vec<u8>>>> = Arc::new(
        corpus
            .entries
            .iter()
            .map(|e| Arc::new(e.case.main_text().to_vec()))
            .collect(),
    );
    (any::<Index>(), prop::collection::vec(mutation(), 1..6))
        .prop_map(move |(e, ms)| {
            let entry = &corpus.entries[e.index(corpus.entries.len())];
            let mut case = entry.case.clone();
            let main = case.main.clone();
            let slot = case
                .files
                .iter_mut()
                .find(|(p, _)| *p == main)
                .expect("main file");
            for m in &ms {
                apply(&mut slot.1, m, &others);
            }
            case
        })
        .boxed()
}
