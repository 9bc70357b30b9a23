//! Anchored declarations (`Decl::anchored`), the position-independent form
//! the evaluator reads: every span is visited, the offsets are relative to
//! the declaration's start, and moving a declaration (text added above it)
//! gives an equal anchored tree.

use scl_syntax::{ast::Decl, parse};

mod common;

fn texts() -> Vec<String> {
    let files = common::scl_files(&["examples", "stdlib", "tests", "crates"]);
    assert!(files.len() > 50, "found only {} .scl files", files.len());
    files
        .into_iter()
        .filter_map(|f| std::fs::read_to_string(common::root().join(f)).ok())
        .collect()
}

/// How many spans a declaration's `Debug` text shows.
fn spans_in_debug(d: &Decl) -> usize {
    format!("{d:?}").matches("Span { start: ").count()
}

#[test]
fn every_span_is_visited() {
    let mut decls = 0;
    for text in texts() {
        for d in &parse(&text).module.decls {
            let mut d = d.clone();
            let mut n = 0;
            d.for_each_span_mut(&mut |_| n += 1);
            assert_eq!(n, spans_in_debug(&d), "a span is not visited in {d:?}");
            decls += 1;
        }
    }
    assert!(decls > 200, "only {decls} declarations");
}

#[test]
fn anchored_spans_are_relative_and_restore_the_original() {
    for text in texts() {
        for d in &parse(&text).module.decls {
            let base = d.span().start;
            let mut a = d.anchored(7);
            a.for_each_span_mut(&mut |s| {
                assert_eq!(s.anchor, 7);
                assert!(s.end <= d.span().end - base, "{s:?} outside {:?}", d.span());
                *s = s.absolute(base);
            });
            assert_eq!(&a, d);
        }
    }
}

#[test]
fn moving_a_declaration_keeps_its_anchored_tree() {
    for text in texts() {
        let moved = format!("// a comment\n\n\n{text}");
        let (a, b) = (parse(&text), parse(&moved));
        assert_eq!(a.module.decls.len(), b.module.decls.len());
        for (x, y) in a.module.decls.iter().zip(&b.module.decls) {
            assert_ne!(x.span(), y.span());
            assert_eq!(x.anchored(1), y.anchored(1));
        }
    }
}
