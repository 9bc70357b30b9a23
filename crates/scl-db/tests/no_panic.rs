//! Bad input never panics: every prefix of every example, conformance case
//! and diagnostics case goes through the whole pipeline (parse, imports,
//! static checks, evaluation, normalization) through one database, as an
//! editor would send it while the user types.

use scl_db::Database;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut es: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    es.sort();
    for p in es {
        if p.is_dir() {
            files(&p, out);
        } else if p.to_string_lossy().ends_with(".env.scl") {
            out.push(p);
        }
    }
}

#[test]
fn every_prefix_checks_without_panic() {
    // On the stack every front end uses (nesting up to the syntax's limit
    // needs more than a test thread's default 2 MiB in a debug build).
    scl_db::with_compiler_stack(every_prefix);
}

fn every_prefix() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut all = Vec::new();
    for d in [
        "examples",
        "tests/conformance/cases",
        "tests/diagnostics",
        "stdlib",
    ] {
        files(&repo.join(d), &mut all);
    }
    assert!(all.len() > 60, "{}", all.len());
    let mut checked = 0usize;
    for path in all {
        let text = std::fs::read_to_string(&path).unwrap();
        if std::env::var_os("SCL_TRACE").is_some() {
            eprintln!("{}", path.display());
        }
        let root = path.parent().unwrap();
        let mut db = Database::new(root, None);
        let f = db.open(&path);
        // Every char boundary for small files; a stride for large ones keeps the test fast.
        let stride = (text.len() / 400).max(1);
        let mut i = 0;
        while i <= text.len() {
            if text.is_char_boundary(i) {
                db.set_text(f, &text[..i]);
                let _ = db.check(f);
                checked += 1;
            }
            i += stride;
        }
        // And the full text once more, with a stray byte sequence appended.
        db.set_text(f, &format!("{text}\n}} ) ] \"${{ ä \\"));
        let _ = db.check(f);
    }
    assert!(checked > 10_000, "{checked}");
}
