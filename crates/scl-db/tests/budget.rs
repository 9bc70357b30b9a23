//! The evaluation budget covers every way to make a big value: each string
//! and list an operator, a builtin, a literal, a comprehension or an append
//! produces is sized before it is built (at most 16 MiB or 16 Mi elements)
//! and charged against 256 MiB per module (`E0316`), so no program grows
//! memory without bound however it combines values.

use scl_db::{with_compiler_stack, Database};

/// `(code, line, column, message)` of every diagnostic of `src`.
fn check(src: &str) -> Vec<(String, usize, usize, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("budget.env.scl");
    std::fs::write(&path, src).unwrap();
    with_compiler_stack(|| {
        let db = Database::new(dir.path(), None);
        let f = db.open(&path);
        let index = scl_diag::LineIndex::new(src);
        db.check(f)
            .iter()
            .map(|d| {
                let (l, c) = index.line_col(src, d.at.span.start as usize);
                (d.code.to_string(), l, c, d.message.clone())
            })
            .collect()
    })
}

/// `let s0 = <16 bytes>` and `let sK = "${sK-1}${sK-1}"` up to `s{n}`
/// (16 × 2^n bytes), one line each.
fn doubling(n: usize) -> String {
    let mut out = String::from("let s0 = \"xxxxxxxxxxxxxxxx\"\n");
    for k in 1..=n {
        out.push_str(&format!("let s{k} = \"${{s{}}}${{s{}}}\"\n", k - 1, k - 1));
    }
    out
}

fn too_large(line: usize, column: usize, what: &str) -> Vec<(String, usize, usize, String)> {
    vec![(
        "E0316".into(),
        line,
        column,
        format!("this {what} is larger than 16777216 (bytes or elements)"),
    )]
}

#[test]
fn replace_is_sized_before_it_is_built() {
    // 8 KiB with 8192 hits, each replaced by 8 KiB: 64 MiB.
    let src = format!("{}let r = replace(s9, \"x\", s9)\n", doubling(9));
    assert_eq!(check(&src), too_large(11, 9, "string"));
}

#[test]
fn join_is_sized_before_it_is_built() {
    // Two 16 MiB strings joined: 32 MiB (this used to build a 1 GiB string).
    let src = format!("{}let j = join([s20, s20], \"\")\n", doubling(20));
    assert_eq!(check(&src), too_large(22, 9, "string"));
}

#[test]
fn case_mapping_split_and_keys_are_sized() {
    let src = format!("{}let u = upper(s20)\nlet l = lower(s20)\n", doubling(20));
    assert_eq!(check(&src), vec![]);
    // 16 Mi + 1 pieces.
    let src = format!("{}let p = split(s20, \"x\")\n", doubling(20));
    assert_eq!(check(&src), too_large(22, 9, "list"));
}

#[test]
fn list_concatenation_is_charged() {
    // A list doubled again and again: every element of every list made is
    // charged, so the total stops it when the 22nd doubling (4 Mi elements)
    // brings the lists made to 8 Mi elements (256 MiB).
    let mut src = String::from("let l0 = [1]\n");
    for k in 1..=24 {
        src.push_str(&format!("let l{k} = l{} + l{}\n", k - 1, k - 1));
    }
    assert_eq!(
        check(&src),
        vec![(
            "E0316".into(),
            23,
            11,
            "evaluation produced more than 256 MiB of strings, lists and inherited fields".into()
        )]
    );
}

#[test]
fn comprehensions_are_charged() {
    // Each comprehension over a 4 Mi-element list makes 4 Mi elements.
    let mut src = String::from("let l0 = [1]\n");
    for k in 1..=20 {
        src.push_str(&format!("let l{k} = l{} + l{}\n", k - 1, k - 1));
    }
    for i in 0..8 {
        src.push_str(&format!("let c{i} = [for x in l20: x]\n"));
    }
    // Each comprehension is within the limit on its own; a declaration
    // that reads them all is charged for all of them.
    src.push_str("let all = [c0, c1, c2, c3, c4, c5, c6, c7]\n");
    let d = check(&src);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0].0.as_str(), d[0].3.as_str()),
        (
            "E0316",
            "evaluation produced more than 256 MiB of strings, lists and inherited fields"
        )
    );
}

#[test]
fn the_total_is_bounded_too() {
    // Each `t` is 16 MiB, within the limit of one value. The budget bounds
    // a declaration with everything of its module it reads (each
    // declaration is evaluated, and re-evaluated after an edit, on its
    // own): `all` reads 17 of them, each 32 MiB with the `s19` it reads;
    // the eighth, `t7`, passes the 256 MiB.
    let mut src = doubling(19);
    for i in 0..17 {
        src.push_str(&format!("let t{i} = \"${{s19}}${{s19}}\"\n"));
    }
    let ts: Vec<String> = (0..17).map(|i| format!("t{i}")).collect();
    src.push_str(&format!("let all = [{}]\n", ts.join(", ")));
    let d = check(&src);
    assert_eq!(
        d,
        vec![(
            "E0316".into(),
            38,
            40,
            "evaluation produced more than 256 MiB of strings, lists and inherited fields".into()
        )]
    );
}

#[test]
fn appends_are_charged() {
    // A 4 Mi-element list appended by 2 envs in a chain... and by 20.
    let mut src = String::from("let l0 = [1]\n");
    for k in 1..=22 {
        src.push_str(&format!("let l{k} = l{} + l{}\n", k - 1, k - 1));
    }
    src.push_str("env e0 {\n  base = image(\"debian:12.5\")\n}\n");
    for i in 1..=20 {
        src.push_str(&format!(
            "env e{i} extends e{} {{\n  python.packages += l22\n}}\n",
            i - 1
        ));
    }
    let d = check(&src);
    assert!(
        d.iter().any(|x| x.0 == "E0316"
            && x.3
                == "evaluation produced more than 256 MiB of strings, lists and inherited fields"),
        "{d:?}"
    );
}

#[test]
fn inherited_state_is_charged() {
    // Each env of a chain adds a label, so each env's state (and IR) holds
    // all the labels before it: 2,000 envs would copy 2 million fields
    // (about 1.2 GB); the budget stops them about half way.
    let mut src = String::from("env e0 {\n  base = image(\"debian:12.5\")\n}\n");
    for i in 1..2000 {
        src.push_str(&format!(
            "env e{i} extends e{} {{\n  labels {{ l{i} = \"v\" }}\n}}\n",
            i - 1
        ));
    }
    let d = check(&src);
    assert_eq!(d.len(), 1, "{:?}", &d[..d.len().min(3)]);
    assert_eq!(
        (d[0].0.as_str(), d[0].3.as_str()),
        (
            "E0316",
            "evaluation produced more than 256 MiB of strings, lists and inherited fields"
        )
    );
}

/// `let s13 = "a,a,…"` (8,192 items) and `let l = split(s13, ",")`.
fn big_list() -> String {
    let mut out = String::from("let s0 = \"a,\"\n");
    for k in 1..=13 {
        out.push_str(&format!("let s{k} = \"${{s{}}}${{s{}}}\"\n", k - 1, k - 1));
    }
    out.push_str("let l = split(s13, \",\")\n");
    out
}

fn too_much_work(line: usize, column: usize) -> Vec<(String, usize, usize, String)> {
    vec![(
        "E0316".into(),
        line,
        column,
        "evaluation took more than 20000000 steps".into(),
    )]
}

#[test]
fn contains_on_a_list_is_work() {
    // 8,193 searches of an 8,193-element list: 67 million comparisons in a
    // program of 16 lines; each search costs its length in steps.
    let src = format!("{}let r = [for x in l: contains(l, x)]\n", big_list());
    assert_eq!(check(&src), too_much_work(16, 22));
    // One search is cheap.
    let src = format!("{}let r = contains(l, \"b\")\n", big_list());
    assert_eq!(check(&src), vec![]);
}

#[test]
fn comparing_lists_is_work() {
    let src = format!(
        "{}let l2 = split(s13, \",\")\nlet r = [for x in l: l == l2]\n",
        big_list()
    );
    assert_eq!(check(&src), too_much_work(17, 22));
}

#[test]
fn what_normalization_copies_is_charged_where_the_field_is_set() {
    // `s19` is 8 MiB; `command` holds 40 references to it, which the IR
    // would copy 40 times (320 MiB): E0316 at the `command` line, found
    // only once the budget is passed.
    let mut src = doubling(19);
    src.push_str("env e {\n  base = image(\"debian:12.5\")\n  workdir = \"/w\"\n");
    let refs: Vec<&str> = (0..40).map(|_| "s19").collect();
    src.push_str(&format!("  command = [{}]\n}}\n", refs.join(", ")));
    let d = check(&src);
    assert_eq!(
        d,
        vec![(
            "E0316".into(),
            24,
            3,
            "evaluation produced more than 256 MiB of strings, lists and inherited fields".into()
        )]
    );
}
