//! Input shaped to exhaust the stack: chains of one operator, postfix, call
//! and `with` chains of any length are flat (no recursion in any stage),
//! and every other kind of nesting stops at `scl_syntax::MAX_NESTING` levels
//! with `E0007`. Everything runs on `with_compiler_stack`, as every front end
//! does, and in the test profile (unoptimized: the largest stack frames).

use scl_db::{with_compiler_stack, Database};

/// `(code, line, column, message)` of every diagnostic of `src` as one file.
fn check(src: &str) -> Vec<(String, usize, usize, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.env.scl");
    std::fs::write(&path, src).unwrap();
    with_compiler_stack(|| {
        let db = Database::new(dir.path(), None);
        let f = db.open(&path);
        let diags = db.check(f);
        let index = scl_diag::LineIndex::new(src);
        diags
            .iter()
            .map(|d| {
                let (l, c) = index.line_col(src, d.at.span.start as usize);
                (d.code.to_string(), l, c, d.message.clone())
            })
            .collect()
    })
}

/// Links per chain: far past the 2,000 levels of evaluation depth the tree
/// once needed per link, and enough to overflow any stack one frame per
/// link (the parse alone takes seconds in the unoptimized test build).
const N: usize = 200_000;
const ENV: &str = "env app {\n  base = image(\"debian:12.5\")\n}\n";

#[test]
fn long_addition_chains_are_flat() {
    let src = format!("let x = {}1\n", "1+".repeat(N));
    assert_eq!(check(&src), vec![]);
}

#[test]
fn long_prefix_operator_chains() {
    let src = format!("let x = {}true\n", "!".repeat(N));
    assert_eq!(check(&src), vec![]);
}

#[test]
fn long_index_chains() {
    // The third `[0]` indexes an Int: one error, then evaluation stops.
    let src = format!("let x = [[0]]{}\n", "[0]".repeat(N));
    let d = check(&src);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0].0.as_str(), d[0].3.as_str()),
        ("E0211", "cannot index an Int with an Int")
    );
}

#[test]
fn long_call_chains() {
    let src = format!("let x = len(\"ab\"){}\n", "()".repeat(N));
    let d = check(&src);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0].0.as_str(), d[0].3.as_str()),
        ("E0211", "an Int cannot be called `len(\"ab\")`")
    );
}

#[test]
fn a_long_with_chain() {
    let src = format!("{ENV}let x = app{}\n", " with {}".repeat(N));
    assert_eq!(check(&src), vec![]);
}

#[test]
fn long_optional_type_chains() {
    let src = format!("param p: Int{} = 1\n", "?".repeat(N));
    assert_eq!(check(&src), vec![]);
}

#[test]
fn brackets_stop_at_the_limit() {
    let ok = format!("let x = {}1{}\n", "(".repeat(256), ")".repeat(256));
    assert_eq!(check(&ok), vec![]);
    let deep = format!("let x = {}1{}\n", "[".repeat(N), "]".repeat(N));
    assert_eq!(
        check(&deep),
        vec![(
            "E0007".to_string(),
            1,
            9 + 256,
            "this is nested more than 256 levels deep".to_string()
        )]
    );
}

#[test]
fn if_expressions_stop_at_the_limit() {
    let nest = |n: usize| {
        format!(
            "let x = {}1{}\n",
            "if true then ".repeat(n),
            " else 2".repeat(n)
        )
    };
    assert_eq!(check(&nest(256)), vec![]);
    assert_eq!(
        check(&nest(N / 10)),
        vec![(
            "E0007".to_string(),
            1,
            9 + 13 * 256,
            "this is nested more than 256 levels deep".to_string()
        )]
    );
}

#[test]
fn else_if_chains_stop_at_the_limit() {
    let chain = |n: usize| {
        format!(
            "env app {{\n  base = image(\"debian:12.5\")\n  if false {{ }}{}\n}}\n",
            " else if false { }".repeat(n)
        )
    };
    assert_eq!(check(&chain(255)), vec![]);
    let d = check(&chain(100_000));
    assert_eq!(d.len(), 1, "{:?}", &d[..d.len().min(3)]);
    assert_eq!((d[0].0.as_str(), d[0].1), ("E0007", 3));
}

#[test]
fn brackets_and_ifs_together_at_their_limits() {
    // 256 brackets, each holding an `if`: 512 levels of recursion in every stage.
    let src = format!(
        "let x = {}1{}\n",
        "(if true then ".repeat(256),
        " else 2)".repeat(256)
    );
    assert_eq!(check(&src), vec![]);
}

/// `env e0 { … }` and `n - 1` envs each extending the previous one, in
/// declaration order or reversed.
fn extends_chain(n: usize, reversed: bool) -> String {
    let mut decls = vec![format!("{}", ENV.replace("app", "e0"))];
    for i in 1..n {
        decls.push(format!(
            "env e{i} extends e{} {{\n  description = \"e{i}\"\n  vars {{ LEVEL = \"{i}\" }}\n}}\n",
            i - 1
        ));
    }
    if reversed {
        decls.reverse();
    }
    decls.concat()
}

#[test]
fn long_extends_chains_in_any_order() {
    // Each env is evaluated after its parent, whatever the declaration
    // order, so no evaluation nests another env's.
    for reversed in [false, true] {
        assert_eq!(
            check(&extends_chain(5_000, reversed)),
            vec![],
            "reversed: {reversed}"
        );
    }
}

#[test]
fn long_import_chains() {
    // m0 ← m1 ← … ← m2999, each env extending the previous module's.
    let n = 3_000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m0.env.scl"), ENV.replace("app", "e")).unwrap();
    for i in 1..n {
        std::fs::write(
            dir.path().join(format!("m{i}.env.scl")),
            format!(
                "import \"./m{}.env.scl\" as prev\nenv e extends prev.e {{\n  vars {{ LEVEL = \"{i}\" }}\n}}\n",
                i - 1
            ),
        )
        .unwrap();
    }
    let top = dir.path().join(format!("m{}.env.scl", n - 1));
    let (diags, level) = with_compiler_stack(|| {
        let db = Database::new(dir.path(), None);
        let f = db.open(&top);
        let diags = db.check(f);
        let values = scl_db::module_values(&db, f);
        let spec = values.final_env("e").and_then(|f| f.spec.clone());
        let level = spec.and_then(|s| match s.vars.get("LEVEL") {
            Some(scl_ir::VarValue::Plain(v)) => Some(v.clone()),
            _ => None,
        });
        (diags.len(), level)
    });
    assert_eq!((diags, level.as_deref()), (0, Some("2999")));
}

#[test]
fn a_file_of_closing_brackets_is_one_error() {
    let src = ")".repeat(40_000);
    assert_eq!(
        check(&src),
        vec![("E0001".to_string(), 1, 1, "unexpected `)`".to_string())]
    );
}

#[test]
fn diagnostics_are_capped_per_file() {
    // 150 unknown names: the first 100 are shown, then one says the rest.
    let src: String = (0..150).map(|i| format!("let a{i} = nope{i}\n")).collect();
    let d = check(&src);
    assert_eq!(d.len(), 101);
    assert_eq!(d[99].1, 100);
    assert_eq!(
        d[100],
        (
            "E0008".to_string(),
            101,
            12,
            "and 50 more errors in this file, not shown (at most 100 per file)".to_string()
        )
    );
    // Exactly at the cap: all shown, nothing more said.
    for n in [99, 100, 101] {
        let src: String = (0..n).map(|i| format!("let a{i} = nope{i}\n")).collect();
        let d = check(&src);
        assert_eq!(d.len(), n.min(100) + usize::from(n > 100), "{n}");
        assert_eq!(
            d.last().unwrap().0,
            if n > 100 { "E0008" } else { "E0101" },
            "{n}"
        );
    }
    // Only warnings left out: W0005.
    let mut src: String = (0..100).map(|i| format!("let a{i} = nope{i}\n")).collect();
    src.push_str("env app {\n  base = image(\"debian:12.5\")\n");
    for i in 0..3 {
        src.push_str(&format!("  labels.m{i} = \"${{1G}}\"\n"));
    }
    src.push_str("}\n");
    let d = check(&src);
    assert_eq!(d.len(), 101);
    assert_eq!(
        (d[100].0.as_str(), d[100].3.as_str()),
        (
            "W0005",
            "and 3 more warnings in this file, not shown (at most 100 per file)"
        )
    );
}

#[test]
fn a_run_of_one_unexpected_character_is_one_error() {
    let src = "#".repeat(40_000);
    assert_eq!(
        check(&src),
        vec![(
            "E0001".to_string(),
            1,
            1,
            "unexpected character `#`".to_string()
        )]
    );
    let src = "\u{0}".repeat(40_000);
    assert_eq!(
        check(&src),
        vec![(
            "E0010".to_string(),
            1,
            1,
            "40000 invisible characters, the first U+0000 (NULL)".to_string()
        )]
    );
}

#[test]
fn the_lexer_stops_after_a_thousand_errors() {
    // Alternating characters are separate errors: the lexer records 1000,
    // then E0011 where it stops reading; the front end shows the first 100
    // and where it stopped.
    let src = "#@".repeat(100_000);
    let d = check(&src);
    assert_eq!(d.len(), 102, "{:?}", &d[..3]);
    assert_eq!(d[0].3, "unexpected character `#`");
    assert_eq!(d[1].3, "unexpected character `@`");
    assert_eq!(
        (d[100].0.as_str(), d[100].3.as_str()),
        (
            "E0008",
            "and 900 more errors in this file, not shown (at most 100 per file)"
        )
    );
    assert_eq!(
        d[101],
        (
            "E0011".to_string(),
            1,
            1001,
            "more than 1000 syntax errors: the rest of the file is not read".to_string()
        )
    );
}

/// `vars { V0 = "${self.vars.V1}", …, V{n-1} = "${self.vars.V{n}}", V{n} = "end" }`.
fn self_chain(n: usize) -> String {
    let mut vars: String = (0..n)
        .map(|i| format!("    V{i} = \"${{self.vars.V{}}}\"\n", i + 1))
        .collect();
    vars.push_str(&format!("    V{n} = \"end\"\n"));
    format!("env app {{\n  base = image(\"debian:12.5\")\n  vars {{\n{vars}  }}\n}}\n")
}

#[test]
fn self_reads_chain_up_to_the_round_limit() {
    // n reads deep need n + 2 rounds of the fixpoint (n to resolve, one to
    // see it settle; once 6 rounds, now 64).
    assert_eq!(check(&self_chain(10)), vec![]);
    assert_eq!(check(&self_chain(scl_sema::MAX_SELF_ROUNDS - 2)), vec![]);
    let d = check(&self_chain(scl_sema::MAX_SELF_ROUNDS + 5));
    assert_eq!(
        d,
        vec![(
            "E0310".to_string(),
            4,
            13,
            "the fields of `app` read each other through `self` more than 62 deep".to_string()
        )]
    );
}
