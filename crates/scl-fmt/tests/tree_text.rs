//! `tree_without_spans` (which drops spans while the tree is written, to
//! keep `verify` within one copy of the text on huge files) gives what
//! dropping them from the whole `Debug` text gives, on every repository
//! file and on chains long enough to show a quadratic cost.

use std::path::{Path, PathBuf};

/// The plain way: the whole `Debug` text, then every `Span { … }` as `_`.
fn reference(m: &scl_syntax::ast::Module) -> String {
    let s = format!("{m:?}");
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find("Span { start: ") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let end = after.find(" }").map_or(after.len(), |j| j + 2);
        out.push('_');
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn files(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.to_string_lossy().ends_with(".scl") {
            out.push(p);
        }
    }
}

#[test]
fn spans_are_dropped_as_the_whole_text_would_drop_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut fs = Vec::new();
    for d in ["examples", "stdlib", "tests", "crates/scl-fmt/tests/cases"] {
        files(&root.join(d), &mut fs);
    }
    assert!(fs.len() > 50);
    // Strings holding what looks like a span, and text around `}`.
    let mut texts: Vec<String> = fs
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    texts.push("let a = \"Span { start: 1, end: 2 }\"\nlet b = \"x }\"\n".into());
    texts.push(format!("let a = {}1\n", "1 + ".repeat(5000)));
    for t in &texts {
        let m = scl_syntax::parse(t).module;
        let ours = scl_fmt::tree_without_spans(&m);
        assert!(!ours.contains("Span {"), "{ours}");
        assert_eq!(ours, reference(&m));
    }
}
