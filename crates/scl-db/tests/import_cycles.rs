//! Modules on an import cycle: an import of another member is unresolved
//! for evaluation and for the type checker (`scl_db::import_cycle`), so
//! what each module computes is the same whichever module is asked first,
//! and a module outside the cycle that imports it sees the same too.
//! These pin the behaviour on fixed files; what it fixed shows only across
//! edits: salsa's cycle fallbacks made results depend on the order of the
//! queries, and an incremental database kept stale ones (the differential
//! tests `module_types_backdate_violation_when_import_cycles_change` and
//! `random_edits_with_import_cycles` in `differential.rs` fail without it).

use scl_db::{Database, MemorySystem, SourceFile};
use std::path::Path;
use std::sync::Arc;

/// a → b → c → a (a cycle of three), d → a (outside it), e → e (a module
/// importing itself), f → g (no cycle at all).
const FILES: &[(&str, &str)] = &[
    (
        "a",
        "import \"./b.env.scl\" as b\nenv base_a {\n  base = image(\"debian:12.5\")\n}\nenv x extends b.base_b {\n  workdir = \"/a\"\n}\n",
    ),
    (
        "b",
        "import \"./c.env.scl\" as c\nenv base_b {\n  base = image(\"debian:12.5\")\n  workdir = \"/b\"\n}\nlet w: String = c.v\n",
    ),
    (
        "c",
        "import \"./a.env.scl\" as a\nlet v = \"c\"\nenv y extends a.base_a {\n  workdir = 42\n}\n",
    ),
    (
        "d",
        "import \"./a.env.scl\" as a\nenv z extends a.base_a {\n  workdir = \"/d\"\n}\n",
    ),
    (
        "e",
        "import \"./e.env.scl\" as e\nenv s {\n  base = image(\"debian:12.5\")\n}\nenv t extends e.s {\n}\n",
    ),
    (
        "f",
        "import \"./g.env.scl\" as g\nenv u extends g.v {\n}\n",
    ),
    ("g", "env v {\n  base = image(\"debian:12.5\")\n}\n"),
];

fn db() -> Database {
    let fs = Arc::new(MemorySystem::new());
    for (name, text) in FILES {
        fs.write(format!("/w/{name}.env.scl"), text);
    }
    fs.set_current_dir("/w");
    Database::with_system(fs, Path::new("/w"), None)
}

fn file(db: &Database, name: &str) -> SourceFile {
    db.open(Path::new(&format!("/w/{name}.env.scl")))
}

/// Everything a module computes that an importer or a front end reads,
/// rendered: its values (envs, lets), its evaluation and static
/// diagnostics, and the types importers see.
fn outcome(db: &Database, name: &str) -> String {
    let f = file(db, name);
    let values = scl_db::module_values(db, f);
    let mut names: Vec<_> = values.values.keys().cloned().collect();
    names.sort();
    let mut out = String::new();
    // Values by what they mean (module ids and anchors are numbered in
    // the order files are met, so they are left out): an env by its IR.
    for n in names {
        let shown = match values.final_env(&n) {
            Some(f) => format!("{:?}", f.spec),
            None => values.values[&n].to_string(),
        };
        out.push_str(&format!("{n} = {shown}\n"));
    }
    for d in scl_db::module_diagnostics(db, f).iter() {
        out.push_str(&format!(
            "{} {}:{} {}\n",
            d.code, d.at.file, d.at.span.start, d.message
        ));
    }
    out.push_str(&format!("types {:?}\n", scl_db::module_types(db, f)));
    out
}

fn cycle_names(db: &Database, name: &str) -> Vec<String> {
    let mut out: Vec<String> = scl_db::import_cycle(db, file(db, name))
        .iter()
        .map(|f| db.display_path(*f).to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn members_of_an_import_cycle_are_found_whichever_module_is_asked() {
    let db = db();
    let abc = vec!["a.env.scl", "b.env.scl", "c.env.scl"];
    // d first: it reaches the cycle but is not on it.
    assert!(cycle_names(&db, "d").is_empty());
    assert_eq!(cycle_names(&db, "b"), abc);
    assert_eq!(cycle_names(&db, "a"), abc);
    assert_eq!(cycle_names(&db, "c"), abc);
    assert_eq!(cycle_names(&db, "e"), vec!["e.env.scl"]);
    assert!(cycle_names(&db, "f").is_empty());
    assert!(cycle_names(&db, "g").is_empty());
    assert!(!scl_db::reaches_import_cycle(&db, file(&db, "f")));
    assert!(scl_db::reaches_import_cycle(&db, file(&db, "d")));
}

#[test]
fn what_a_cycle_member_computes_does_not_depend_on_the_order_of_queries() {
    let names = ["a", "b", "c", "d", "e", "f", "g"];
    // Every rotation of the order, and the reverse of each, in a fresh
    // database: the same outcome for every module.
    let expected: Vec<String> = {
        let db = db();
        names.iter().map(|n| outcome(&db, n)).collect()
    };
    for start in 0..names.len() {
        for reverse in [false, true] {
            let mut order: Vec<usize> = (0..names.len())
                .map(|i| (start + i) % names.len())
                .collect();
            if reverse {
                order.reverse();
            }
            let db = db();
            let mut got = vec![String::new(); names.len()];
            for &i in &order {
                got[i] = outcome(&db, names[i]);
            }
            for i in 0..names.len() {
                assert_eq!(
                    got[i], expected[i],
                    "module {} asked in order {order:?}",
                    names[i]
                );
            }
        }
    }
}

#[test]
fn the_check_reports_each_cycle_once_and_nothing_about_unknown_members() {
    let db = db();
    for start in ["a", "b", "c", "d", "e"] {
        let diags = db.check(file(&db, start));
        let rendered: Vec<String> = diags
            .iter()
            .map(|d| format!("{} {}: {}", d.code, d.at.file, d.message))
            .collect();
        let cycles: Vec<&String> = rendered.iter().filter(|d| d.starts_with("E0103")).collect();
        assert_eq!(cycles.len(), 1, "from {start}: {rendered:#?}");
        // Names read through an import of another member are unknown, not
        // errors: nothing is said about `b.base_b`, `c.v`, `a.base_a`.
        assert!(
            !rendered.iter().any(|d| d.contains("has no declaration")),
            "from {start}: {rendered:#?}"
        );
    }
    // The cycle through a, b and c is the same one whichever module the
    // check starts from.
    let msg = |start: &str| {
        db.check(file(&db, start))
            .into_iter()
            .find(|d| d.code == "E0103")
            .map(|d| d.message)
    };
    assert_eq!(msg("a"), msg("c"));
    assert_eq!(msg("a"), msg("d"));
    assert_eq!(
        msg("a").as_deref(),
        Some("import cycle: a.env.scl → b.env.scl → c.env.scl → a.env.scl")
    );
}

#[test]
fn a_module_outside_the_cycle_still_reads_a_member_fully() {
    // d imports a (a member): d is not on the cycle, so `a.base_a` is a
    // resolved env for d and its IR is complete.
    let db = db();
    let d = file(&db, "d");
    let _ = db.check(d);
    let values = scl_db::module_values(&db, d);
    let z = values.final_env("z").expect("env z");
    let json = format!("{z:?}");
    assert!(json.contains("debian:12.5"), "{json}");
    assert!(json.contains("/d"), "{json}");
}

#[test]
fn breaking_the_cycle_makes_the_imports_resolve_again() {
    let fs = Arc::new(MemorySystem::new());
    for (name, text) in FILES {
        fs.write(format!("/w/{name}.env.scl"), text);
    }
    fs.set_current_dir("/w");
    let mut db = Database::with_system(fs, Path::new("/w"), None);
    let c = file(&db, "c");
    let before = db.check(file(&db, "a"));
    assert!(before.iter().any(|d| d.code == "E0103"));
    assert!(!scl_db::import_cycle(&db, c).is_empty());
    // c no longer imports a: no cycle; b.w reads c.v (a String) again and
    // c's `workdir = 42` is reported.
    db.set_text(c, "let v = \"c\"\n");
    let after = db.check(file(&db, "a"));
    assert!(after.iter().all(|d| d.code != "E0103"), "{after:?}");
    assert!(scl_db::import_cycle(&db, c).is_empty());
    assert!(scl_db::import_cycle(&db, file(&db, "a")).is_empty());
    // A fresh database over the same files agrees.
    let fs2 = Arc::new(MemorySystem::new());
    for (name, text) in FILES {
        let text = if *name == "c" {
            "let v = \"c\"\n"
        } else {
            text
        };
        fs2.write(format!("/w/{name}.env.scl"), text);
    }
    fs2.set_current_dir("/w");
    let fresh2 = Database::with_system(fs2, Path::new("/w"), None);
    let expected = fresh2.check(fresh2.open(Path::new("/w/a.env.scl")));
    assert_eq!(format!("{after:?}"), format!("{expected:?}"));
}

#[test]
fn a_module_importing_itself_is_told_to_remove_the_import() {
    let db = db();
    let diags = db.check(file(&db, "e"));
    let cycle = diags
        .iter()
        .find(|d| d.code == "E0103")
        .expect("the self-import is a cycle");
    assert_eq!(cycle.message, "import cycle: e.env.scl → e.env.scl");
    assert_eq!(
        cycle.help.as_deref(),
        Some(
            "a module cannot import itself: remove this import and name its declarations directly"
        )
    );
    // A cycle of two or more modules keeps the advice for two modules.
    let abc = db.check(file(&db, "a"));
    let d = abc.iter().find(|d| d.code == "E0103").expect("cycle");
    assert_eq!(
        d.help.as_deref(),
        Some("move what both modules need into a third module that both import")
    );
}

/// Modules that all import each other: one strongly connected component,
/// so one E0103 — the same one whichever module the check starts from
/// (it was one per import closing a cycle on the walk: 66 from one file
/// of 12, a different set from each) — naming the other members.
#[test]
fn a_dense_component_is_one_diagnostic_whichever_module_is_checked() {
    let n = 8;
    let fs = Arc::new(MemorySystem::new());
    for i in 0..n {
        let mut text = String::new();
        for j in 0..n {
            if j != i {
                text.push_str(&format!("import \"./m{j}.env.scl\" as m{j}\n"));
            }
        }
        text.push_str(&format!("let v{i} = {i}\n"));
        fs.write(format!("/w/m{i}.env.scl"), text);
    }
    fs.write(
        "/w/outside.env.scl",
        "import \"./m3.env.scl\" as m\nlet x = 1\n",
    );
    fs.set_current_dir("/w");
    let db = Database::with_system(fs, Path::new("/w"), None);
    let mut seen: Option<Vec<String>> = None;
    for name in (0..n)
        .map(|i| format!("m{i}"))
        .chain(["outside".to_string()])
    {
        let diags = db.check(db.open(Path::new(&format!("/w/{name}.env.scl"))));
        let cycles: Vec<String> = diags
            .iter()
            .filter(|d| d.code == "E0103")
            .map(|d| {
                format!(
                    "{}:{} {} {:?}",
                    d.at.file, d.at.span.start, d.message, d.notes
                )
            })
            .collect();
        assert_eq!(cycles.len(), 1, "from {name}: {cycles:#?}");
        match &seen {
            None => seen = Some(cycles),
            Some(s) => assert_eq!(&cycles, s, "from {name}"),
        }
    }
    let d = seen.unwrap().remove(0);
    assert!(
        d.starts_with("m1.env.scl:")
            && d.contains("import cycle: m0.env.scl → m1.env.scl → m0.env.scl"),
        "{d}"
    );
    assert!(
        d.contains("8 modules import each other, directly or not: m0.env.scl, m1.env.scl"),
        "{d}"
    );
}

#[test]
fn the_walk_and_the_cycle_queries_resolve_every_import_alike() {
    // The check's walk follows `imports` (with diagnostics) and marks the
    // modules on a cycle itself; `import_cycle` and the type checker
    // follow `import_targets` (from the outline). The walk asks
    // `import_cycle` only of the modules it marks, so both must resolve
    // every kind of import to the same target, or a cycle would go
    // unreported: found, missing, unreadable, outside the workspace, the
    // stdlib (present and missing), the module itself, twice, and through
    // `..` and `./`.
    let fs = Arc::new(MemorySystem::new());
    let files = [
        (
            "/w/a.env.scl",
            "import \"./b.env.scl\" as b\nimport \"./missing.env.scl\" as m\nimport \"./locked.env.scl\" as l\nimport \"../out.env.scl\" as o\nimport \"std/pytorch-cuda\" as torch\nimport \"std/no-such-module\" as nope\nimport \"./a.env.scl\" as me\nimport \"./b.env.scl\" as b2\nimport \"sub/../sub/c.env.scl\" as c\nenv e {\n  base = image(\"debian:12.5\")\n}\n",
        ),
        ("/w/b.env.scl", "import \"./sub/c.env.scl\" as c\nlet x = 1\n"),
        ("/w/sub/c.env.scl", "import \"../a.env.scl\" as a\nlet y = 2\n"),
        ("/w/locked.env.scl", "let z = 3\n"),
        ("/out.env.scl", "let w = 4\n"),
    ];
    for (path, text) in files {
        fs.write(path, text);
    }
    fs.set_unreadable("/w/locked.env.scl", true);
    fs.set_current_dir("/w");
    let db = Database::with_system(fs, Path::new("/w"), None);
    let a = db.open(Path::new("/w/a.env.scl"));
    let _ = db.check(a);
    let mut compared = 0;
    for path in ["/w/a.env.scl", "/w/b.env.scl", "/w/sub/c.env.scl"] {
        let f = db.open(Path::new(path));
        let walked = &scl_db::imports(&db, f).targets;
        let outlined = scl_db::import_targets(&db, f);
        assert_eq!(walked, &**outlined, "{path}");
        compared += walked.iter().flatten().count();
    }
    // a: b (twice), std/pytorch-cuda, itself and c; b: c; c: a.
    assert_eq!(compared, 7);
    // The cycle a → b → c → a and a's import of itself: one E0103 for
    // the component, as `import_cycle` sees it.
    let cycles: Vec<_> = db
        .check(a)
        .into_iter()
        .filter(|d| d.code == "E0103")
        .collect();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(
        scl_db::import_cycle(&db, a).len(),
        3,
        "a, b and c are one component"
    );
}

/// `l0` … `l39`, each a `let`; `w1` and `w2` import all of them and each
/// other, and `w3` imports all of them and is imported by none (more than
/// 32 imports each: `reaches_import_cycle` reads such imports in groups
/// of 32, and the three share their first group); `l7` imports `w1`. So
/// `w1`, `w2` and `l7` are one component, and `w3` reaches it.
fn wide(l7_imports_w1: bool, w2_imports_w1: bool) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..40 {
        let mut t = String::new();
        if i == 7 && l7_imports_w1 {
            t.push_str("import \"./w1.env.scl\" as w1\n");
        }
        t.push_str(&format!("let v{i} = {i}\n"));
        files.push((format!("/w/l{i}.env.scl"), t));
    }
    for (me, other, imports_other) in [("w1", "w2", true), ("w2", "w1", w2_imports_w1)] {
        let mut t = String::new();
        for i in 0..40 {
            t.push_str(&format!("import \"./l{i}.env.scl\" as l{i}\n"));
        }
        if imports_other {
            t.push_str(&format!("import \"./{other}.env.scl\" as o\n"));
        }
        t.push_str(&format!("let {me} = l3.v3\n"));
        files.push((format!("/w/{me}.env.scl"), t));
    }
    let mut t = String::new();
    for i in 0..40 {
        t.push_str(&format!("import \"./l{i}.env.scl\" as l{i}\n"));
    }
    files.push(("/w/w3.env.scl".into(), t));
    files
}

fn wide_db(files: &[(String, String)]) -> Database {
    let fs = Arc::new(MemorySystem::new());
    for (p, t) in files {
        fs.write(p, t);
    }
    fs.set_current_dir("/w");
    Database::with_system(fs, Path::new("/w"), None)
}

/// What a check of `root` reports, and the cycle facts of the wide
/// workspace's modules: the same whichever module is asked first.
fn wide_facts(db: &Database, root: &str) -> String {
    let r = file(db, root);
    let mut out: Vec<String> = db
        .check(r)
        .iter()
        .map(|d| format!("{} {}:{} {}", d.code, d.at.file, d.at.span.start, d.message))
        .collect();
    for n in ["w1", "w2", "w3", "l7", "l3"] {
        out.push(format!(
            "{n}: cycle {:?}, reaches {}",
            cycle_names(db, n),
            scl_db::reaches_import_cycle(db, file(db, n))
        ));
    }
    out.join("\n")
}

#[test]
fn cycles_through_modules_with_many_imports_are_found_whichever_is_asked() {
    // (l7 imports w1, w2 imports w1) and the component of w1. In the
    // second case only an import in w1's second group of 32 (w2) leads
    // back to w1.
    let cases: [((bool, bool), &[&str]); 4] = [
        ((true, true), &["l7.env.scl", "w1.env.scl", "w2.env.scl"]),
        ((false, true), &["w1.env.scl", "w2.env.scl"]),
        // w2 imports l7 too.
        ((true, false), &["l7.env.scl", "w1.env.scl", "w2.env.scl"]),
        ((false, false), &[]),
    ];
    for ((l7, w2), component) in cases {
        let files = wide(l7, w2);
        let expected = {
            let db = wide_db(&files);
            wide_facts(&db, "w1")
        };
        let case = format!("l7 imports w1: {l7}, w2 imports w1: {w2}");
        assert!(
            expected.contains(&format!(
                "w1: cycle {component:?}, reaches {}",
                !component.is_empty()
            )),
            "{case}: {expected}"
        );
        assert!(
            expected.contains("l3: cycle [], reaches false"),
            "{case}: {expected}"
        );
        assert_eq!(
            expected.matches("E0103").count(),
            usize::from(!component.is_empty()),
            "one diagnostic for the component ({case}): {expected}"
        );
        assert!(
            expected.contains(&format!("w3: cycle [], reaches {l7}")),
            "{case}: {expected}"
        );
        // Asked first of another module's cycle fact, before any check:
        // the same answers. Asked of `w3` first, the cycle through `l7`
        // closes at the first group `w3` shares with `w1` (a group query
        // heads the salsa cycle).
        for first in ["w2", "w3", "l7", "l3"] {
            let db = wide_db(&files);
            let _ = scl_db::reaches_import_cycle(&db, file(&db, first));
            assert_eq!(
                wide_facts(&db, "w1"),
                expected,
                "{case}: {first} asked first"
            );
        }
    }
}

#[test]
fn edits_that_make_and_break_cycles_through_many_imports_match_a_fresh_database() {
    // Each step's files, checked incrementally (the edited files opened
    // for editing, as an editor does) and in a fresh database.
    let steps = [
        (true, true),
        (false, true),
        (false, false),
        (true, false),
        (true, true),
    ];
    let fs = Arc::new(MemorySystem::new());
    for (p, t) in wide(steps[0].0, steps[0].1) {
        fs.write(p, &t);
    }
    fs.set_current_dir("/w");
    let mut db = Database::with_system(fs, Path::new("/w"), None);
    let _ = wide_facts(&db, "w1");
    for f in ["l7", "w2"] {
        let f = file(&db, f);
        db.will_edit(f);
    }
    for (l7, w2) in steps {
        let files = wide(l7, w2);
        for (p, t) in &files {
            if p.ends_with("/l7.env.scl") || p.ends_with("/w2.env.scl") {
                let f = db.open(Path::new(p));
                db.set_text(f, t);
            }
        }
        let fresh = wide_db(&files);
        assert_eq!(
            wide_facts(&db, "w1"),
            wide_facts(&fresh, "w1"),
            "l7 imports w1: {l7}, w2 imports w1: {w2}"
        );
    }
}
