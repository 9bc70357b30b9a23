//! Properties of the formatter on every SCL file of the repository without
//! a syntax error: examples, stdlib, the syntax fixtures (acceptance and
//! conformance), the diagnostics cases and the book's code blocks.
//! (a) formatting twice gives the same bytes; (b) the comments are the same
//! list of texts before and after; (c) the tree is the same but for spans.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn walk(d: &Path, out: &mut Vec<PathBuf>) {
    let mut es: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    es.sort();
    for p in es {
        if p.is_dir() {
            walk(&p, out);
        } else if p.to_string_lossy().ends_with(".scl") {
            out.push(p);
        }
    }
}

/// Every repository SCL text: (name, text).
pub fn corpus() -> Vec<(String, String)> {
    let root = repo();
    let mut files = Vec::new();
    for d in [
        "examples",
        "stdlib",
        "tests/diagnostics",
        "crates/scl-syntax/tests/fixtures",
        "crates/sclc/tests",
    ] {
        walk(&root.join(d), &mut files);
    }
    let mut out: Vec<(String, String)> = files
        .into_iter()
        .map(|f| {
            (
                f.strip_prefix(&root).unwrap().display().to_string(),
                std::fs::read_to_string(&f).unwrap(),
            )
        })
        .collect();
    // The book's ```scl blocks.
    let mut pages = Vec::new();
    fn md(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                md(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    md(&root.join("book/src"), &mut pages);
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim().starts_with("```scl") => block = Some((i + 1, String::new())),
                Some((start, body)) if line.trim() == "```" => {
                    let name = format!("{}:{}", page.strip_prefix(&root).unwrap().display(), start);
                    out.push((name, std::mem::take(body)));
                    block = None;
                }
                Some((_, body)) => {
                    body.push_str(line);
                    body.push('\n');
                }
                None => {}
            }
        }
    }
    out
}

#[test]
fn every_repository_file_formats_to_the_same_meaning_idempotently() {
    let corpus = corpus();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, src) in &corpus {
        let Ok(once) = scl_fmt::format(src) else {
            continue; // a file with syntax errors is not formatted
        };
        checked += 1;
        if let Err(e) = scl_fmt::verify(src, &once) {
            failures.push(format!("{name}: {e}\n--- formatted:\n{once}"));
            continue;
        }
        match scl_fmt::format(&once) {
            Ok(twice) if twice == once => {}
            Ok(twice) => failures.push(format!(
                "{name}: not idempotent\n--- once:\n{once}\n--- twice:\n{twice}"
            )),
            Err(e) => failures.push(format!("{name}: the output does not parse: {e:?}")),
        }
    }
    assert!(checked >= 100, "only {checked} files checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The book's formatting page shows what `sclc fmt` does: its ```scl
/// blocks are formatted already, and its first "before" block (```scl,ignore)
/// formats to the first of them.
#[test]
fn the_book_page_shows_formatted_code() {
    let page = std::fs::read_to_string(repo().join("book/src/formatting.md")).unwrap();
    let (mut done, mut before) = (Vec::new(), Vec::new());
    let mut block: Option<(bool, String)> = None;
    for line in page.lines() {
        match &mut block {
            None if line == "```scl" => block = Some((true, String::new())),
            None if line == "```scl,ignore" => block = Some((false, String::new())),
            Some((ok, body)) if line == "```" => {
                if *ok {
                    done.push(std::mem::take(body))
                } else {
                    before.push(std::mem::take(body))
                }
                block = None;
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    assert!(done.len() >= 2 && !before.is_empty());
    for b in &done {
        assert_eq!(&scl_fmt::format(b).unwrap(), b);
    }
    assert_eq!(scl_fmt::format(&before[0]).unwrap(), done[0]);
}
