//! Every ```scl code block of the book is a complete program that
//! `sclc check` accepts (blocks fenced ```scl,ignore are fragments and are
//! skipped). Each block is checked on its own in a fresh folder, so it can
//! import only `std/...` modules.

mod common;
use common::*;

#[test]
fn book_scl_blocks_compile() {
    let repo = repo();
    let src = repo.join("book/src");
    let mut pages = Vec::new();
    fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    walk(&src, &mut pages);
    pages.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim() == "```scl" => block = Some((i + 1, String::new())),
                Some((start, body)) if line.trim() == "```" => {
                    let dir = tempfile::tempdir().unwrap();
                    let f = dir.path().join("block.env.scl");
                    std::fs::write(&f, &*body).unwrap();
                    let out = sclc(dir.path(), &["check", "block.env.scl"]);
                    if out.status.code() != Some(0) {
                        failures.push(format!(
                            "{}:{}:\n{}",
                            page.strip_prefix(&src).unwrap().display(),
                            start,
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                    checked += 1;
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
    assert!(checked >= 20, "only {checked} scl blocks in the book");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The book's diagnostics page has a section for every registered code.
#[test]
fn book_lists_every_diagnostic_code() {
    let page = std::fs::read_to_string(repo().join("book/src/diagnostics.md")).unwrap();
    for c in scl_diag::CODES {
        assert!(
            page.contains(&format!("### {}: {}", c.code, c.title)),
            "book/src/diagnostics.md lacks {}",
            c.code
        );
    }
}
