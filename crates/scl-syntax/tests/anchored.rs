//! Anchored declarations (`Decl::anchored`), the position-independent form
//! the evaluator reads: every span is visited, the offsets are relative to
//! the declaration's start, and moving a declaration (text added above it)
//! gives an equal anchored tree.

use scl_diag::Span;
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
fn anchored_spans_turn_back_into_the_original_offsets() {
    for text in texts() {
        for d in &parse(&text).module.decls {
            let table = d.span_table();
            let (mut orig, mut back) = (Vec::new(), Vec::new());
            d.clone().for_each_span_mut(&mut |s| orig.push(*s));
            d.anchored(7).for_each_span_mut(&mut |s| {
                assert_eq!(s.anchor, 7);
                back.push(table.absolute(*s));
            });
            assert_eq!(orig, back);
        }
    }
}

#[test]
fn anchoring_in_place_and_back_gives_the_parse_without_its_docs() {
    let mut docs = 0;
    for text in texts() {
        for d in &parse(&text).module.decls {
            let mut a = d.clone();
            let table = a.anchor(7);
            assert_eq!(a, d.anchored(7));
            assert_eq!(table, d.span_table());
            // The ranks written in visit order are the ones a lookup of
            // each span in the table gives.
            let mut looked_up = d.clone();
            looked_up.anchor_to(&table, 7);
            assert_eq!(a, looked_up);
            let mut expected = d.clone();
            expected.strip_docs();
            docs += usize::from(expected != *d);
            assert_eq!(a.absolute(&table), expected);
        }
    }
    assert!(docs > 0, "no declaration with a doc comment was tried");
}

#[test]
fn layout_and_comments_do_not_change_the_anchored_tree() {
    // Every space, newline and comment position of a declaration varied:
    // the anchored tree is the same; a change of meaning is not.
    let a = "env app extends base {\n  description = \"x\"\n  labels { a = f(1, 2) }\n}\n";
    let b = "/// doc\nenv   app  extends   base {\n  // c\n  description   =   \"x\" // e\n\n  labels {\n    /// d\n    a = f( 1 ,\n 2 )\n  }\n}\n";
    let c = "env app extends base {\n  description = \"y\"\n  labels { a = f(1, 2) }\n}\n";
    let anchored = |t: &str| {
        let p = parse(t);
        assert!(p.errors.is_empty(), "{t}: {:?}", p.errors);
        p.module.decls[0].anchored(3)
    };
    assert_eq!(anchored(a), anchored(b));
    assert_ne!(anchored(a), anchored(c));
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

#[test]
fn a_declaration_longer_than_64_kib_turns_back_into_its_offsets() {
    // The table keeps offsets as `u16` below 64 KiB and as `u32` above:
    // both forms give the original spans back, here and in a file where
    // the declaration starts past 64 KiB.
    let long = "a".repeat(70_000);
    for text in [
        format!("let x = [\"{long}\", 1, y]\n"),
        format!("let pad = \"{long}\"\nlet x = [\"b\", 1, y]\n"),
        format!("let pad = \"{long}\"\nlet x = [\"{long}\", 1, y]\n"),
    ] {
        let p = parse(&text);
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        for d in &p.module.decls {
            let mut a = d.clone();
            let table = a.anchor(5);
            assert_eq!(a.absolute(&table), *d);
            let mut looked_up = d.clone();
            looked_up.anchor_to(&table, 5);
            assert_eq!(a, looked_up, "the ranks of a wide table");
        }
    }
}

#[test]
fn a_rank_out_of_range_is_clamped_to_the_declaration() {
    // A stale anchored span (from before an edit that changed the
    // declaration's shape) lands on the declaration's last start and end.
    let p = parse("let x = [1, 2]\n");
    let d = &p.module.decls[0];
    let table = d.span_table();
    let last = table.absolute(Span {
        start: 1_000,
        end: 1_000,
        anchor: 1,
    });
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    d.clone().for_each_span_mut(&mut |s| {
        starts.push(s.start);
        ends.push(s.end);
    });
    assert_eq!(last.start, *starts.iter().max().unwrap());
    assert_eq!(last.end, *ends.iter().max().unwrap());
}

#[test]
fn ranks_in_visit_order_are_the_looked_up_ones_on_broken_code() {
    // Syntax errors leave zero-width spans (inserted closers, missing
    // expressions) and many spans sharing a start or an end: the ranks
    // written in visit order must still be those a lookup in the table
    // gives.
    let (mut broken, mut zero_width) = (0, 0);
    for text in [
        "env a {\n  labels { x = \n}\n",
        "let x = [1, (2, {\n",
        "env b extends {\n  = 3\n  y = f(,)\n}\n",
        "let s = \"${a.}\"\nlet t = ((((x))))\n",
        "fn f(a: Int, b:) -> = a\n",
    ] {
        let p = parse(text);
        broken += usize::from(!p.errors.is_empty());
        for d in &p.module.decls {
            let mut ranked = d.clone();
            let table = ranked.anchor(9);
            let mut looked_up = d.clone();
            looked_up.anchor_to(&table, 9);
            assert_eq!(ranked, looked_up, "{text:?}");
            d.clone()
                .for_each_span_mut(&mut |s| zero_width += usize::from(s.start == s.end));
        }
    }
    assert!(broken >= 4, "the texts are meant to be broken");
    assert!(zero_width > 0, "no zero-width span was tried");
}
