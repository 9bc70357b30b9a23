//! What an edit re-computes, read from salsa's event log: a comment or
//! whitespace edit anywhere re-evaluates nothing; an edit inside one env
//! re-evaluates that env and only what uses it; in a top env of 1,000
//! services, an edit of one service's module re-evaluates that service's
//! env only (the top env holds its services by reference; the top
//! module's values are assembled again), not the other 999.

use salsa::plumbing::AsId;
use scl_db::events::{EventLog, Executed};
use scl_db::{Database, DeclId, MemorySystem, SourceFile};
use std::path::Path;
use std::sync::Arc;

const N: usize = 1000;

const BASE: &str = "// The shared base.
let team = \"ml\"

/// The env every module extends.
env base_env {
  base = image(\"python:3.11-slim\")
  description = \"base\"
  labels { team = team }
}

env unused {
  base = image(\"debian:12.5\")
  description = \"nobody extends this\"
}
";

fn module(i: usize, description: &str) -> String {
    let parent = if i == 0 {
        "base.base_env.description".to_string()
    } else {
        format!("prev.m{}.description", i - 1)
    };
    let prev = if i == 0 {
        String::new()
    } else {
        format!("import \"./mod{}.env.scl\" as prev\n", i - 1)
    };
    format!(
        "import \"./base.env.scl\" as base\n{prev}\nenv m{i} extends base.base_env {{\n  description = \"{description}\"\n  labels {{ parent = {parent} }}\n}}\n"
    )
}

fn top() -> String {
    let mut s = String::new();
    for i in 0..N {
        s.push_str(&format!("import \"./mod{i}.env.scl\" as mod{i}\n"));
    }
    s.push_str("\nenv all {\n  services {\n");
    for i in 0..N {
        s.push_str(&format!("    e{i} = mod{i}.m{i}\n"));
    }
    s.push_str("  }\n}\n");
    s
}

struct Ws {
    db: Database,
    log: Arc<EventLog>,
    top: SourceFile,
}

impl Ws {
    fn new() -> Ws {
        let fs = Arc::new(MemorySystem::new());
        fs.write("/w/base.env.scl", BASE);
        for i in 0..N {
            fs.write(format!("/w/mod{i}.env.scl"), module(i, &format!("env-{i}")));
        }
        fs.write("/w/top.env.scl", top());
        fs.set_current_dir("/w");
        let (db, log) = Database::with_event_log(fs, Path::new("/w"), None);
        let top = db.open(Path::new("/w/top.env.scl"));
        let mut ws = Ws { db, log, top };
        let d = ws.check();
        assert!(d.is_empty(), "{d:?}");
        ws
    }

    fn file(&self, name: &str) -> SourceFile {
        self.db.open(&Path::new("/w").join(name))
    }

    /// Checks the top module; the events of the check.
    fn check(&mut self) -> Vec<scl_diag::Diagnostic> {
        let _ = self.log.take();
        self.db.check(self.top)
    }

    /// Sets `name`'s text, checks, and returns what ran.
    fn edit(&mut self, name: &str, text: &str) -> Vec<Executed> {
        let f = self.file(name);
        self.db.set_text(f, text);
        let d = self.check();
        assert!(d.is_empty(), "{d:?}");
        self.log.take().0
    }

    /// The declaration `index` of `name`'s salsa id.
    fn decl(&self, name: &str, index: u32) -> salsa::Id {
        DeclId::new(&self.db, self.file(name), index).as_id()
    }
}

/// At most the first 10 of `xs`, for a failure message.
fn few<T: std::fmt::Debug>(xs: &[T]) -> String {
    format!("{} in all: {:?}", xs.len(), &xs[..xs.len().min(10)])
}

/// The evaluation queries among `run`.
fn evaluations(run: &[Executed]) -> Vec<&Executed> {
    run.iter()
        .filter(|e| {
            matches!(
                e.query.as_str(),
                "decl_value" | "cyclic_values" | "module_values"
            )
        })
        .collect()
}

#[test]
fn comment_and_whitespace_edits_anywhere_reevaluate_nothing() {
    let mut ws = Ws::new();
    let base = ws.file("base.env.scl").as_id();
    let edits = [
        format!("// a comment at the top\n{BASE}"),
        BASE.replace("let team", "\n\n\nlet team"),
        BASE.replace(
            "  description = \"base\"",
            "  // a comment in the body\n  description = \"base\"",
        ),
        BASE.replace("labels { team = team }", "labels {   team   =   team   }"),
        format!("{BASE}\n// a comment at the end\n"),
        BASE.to_string(),
    ];
    for text in &edits {
        let run = ws.edit("base.env.scl", text);
        assert!(
            evaluations(&run).is_empty(),
            "{text}\nre-evaluated: {}",
            few(&evaluations(&run))
        );
        // Only the edited file's own syntax-level queries ran: none of
        // the 1,001 modules that import it (directly or not) re-ran anything.
        let decls: Vec<salsa::Id> = (0..3).map(|i| ws.decl("base.env.scl", i)).collect();
        for e in &run {
            // The workspace check gathers the diagnostics again (of the
            // module groups that hold what changed), and the import graph
            // is walked again when the import lines moved
            // (no evaluation: memoized lists and import targets).
            if matches!(
                e.query.as_str(),
                "check_diagnostics" | "module_graph" | "group_diagnostics" | "group_values"
            ) {
                continue;
            }
            assert!(
                e.key == base || decls.contains(&e.key),
                "{text}\nran {e:?}, which is not about base.env.scl"
            );
        }
    }
    // The same in a module in the middle of the chain.
    let text = format!("// moved\n\n{}", module(500, "env-500"));
    let run = ws.edit("mod500.env.scl", &text);
    assert!(evaluations(&run).is_empty(), "{}", few(&evaluations(&run)));
}

#[test]
fn an_edit_inside_one_env_reevaluates_it_and_what_uses_it() {
    let mut ws = Ws::new();
    // `unused` changes; nothing else uses it.
    let first = BASE.replace("nobody extends this", "nobody extends this at all");
    let run = ws.edit("base.env.scl", &first);
    let unused = ws.decl("base.env.scl", 2);
    let base = ws.file("base.env.scl").as_id();
    let evals = evaluations(&run);
    // `unused` itself, and the module's values assembled again from its
    // declarations' (which re-evaluates none of the others).
    assert!(
        evals
            .iter()
            .all(|e| (e.query == "decl_value" && e.key == unused)
                || (e.query == "module_values" && e.key == base))
            && evals.iter().any(|e| e.key == unused),
        "{}",
        few(&evals)
    );
    // `base_env` changes: every module's env extends it, and `all` holds
    // them by reference (its own value does not change: the top module's
    // values are assembled again, with each service's new IR).
    let run = ws.edit("base.env.scl", &first.replace("\"base\"", "\"the base\""));
    let evals = evaluations(&run);
    let decl_values = evals.iter().filter(|e| e.query == "decl_value").count();
    // base_env, m0 … m999 (the module_values of each file too).
    assert_eq!(decl_values, N + 1, "{}", few(&evals));
    let all = ws.decl("top.env.scl", N as u32);
    assert!(evals.iter().all(|e| e.key != all), "`all` re-evaluated");
    let top = ws.file("top.env.scl").as_id();
    assert!(
        evals
            .iter()
            .any(|e| e.query == "module_values" && e.key == top),
        "the top module's values were not assembled again"
    );
    assert!(
        evals.iter().all(|e| e.key != unused),
        "`unused` re-evaluated"
    );
}

#[test]
fn one_service_module_edit_reevaluates_that_service_only() {
    let mut ws = Ws::new();
    let last = format!("mod{}.env.scl", N - 1);
    let run = ws.edit(&last, &module(N - 1, "edited"));
    let all_evals = evaluations(&run);
    let evals: Vec<&Executed> = all_evals
        .iter()
        .copied()
        .filter(|e| e.query == "decl_value")
        .collect();
    // The service's env (declaration 2 of its module: after two imports);
    // not the top env `all`, which holds its services by reference, and no
    // other module's.
    let expected = [ws.decl(&last, 2)];
    assert_eq!(
        evals.iter().map(|e| e.key).collect::<Vec<_>>(),
        expected.to_vec(),
        "{}",
        few(&evals)
    );
    // The top module's values are assembled again: `all`'s IR gets the
    // service's new IR (the other 999 are shared, not re-evaluated).
    let top = ws.file("top.env.scl").as_id();
    let assembled: Vec<_> = all_evals
        .iter()
        .filter(|e| e.query == "module_values")
        .map(|e| e.key)
        .collect();
    assert!(assembled.contains(&top), "{}", few(&all_evals));
    assert!(assembled.len() <= 2, "{}", few(&all_evals));
    // `all` reads its services in groups of 32 (one query per group): only
    // the edited service's group is read again.
    let groups = run
        .iter()
        .filter(|e| e.query == "service_group_envs")
        .count();
    assert_eq!(groups, 1, "{}", few(&run.iter().collect::<Vec<_>>()));
    // The same for the services' domain findings, which the top module's
    // findings take from the services' modules: one group read again.
    let finding_groups = run
        .iter()
        .filter(|e| e.query == "service_group_findings")
        .count();
    assert_eq!(
        finding_groups,
        1,
        "{}",
        few(&run.iter().collect::<Vec<_>>())
    );
    let all = scl_db::module_values(&ws.db, ws.top)
        .final_env("all")
        .and_then(|f| f.spec.clone())
        .expect("all has an IR");
    assert_eq!(all.services.len(), N);
    assert_eq!(
        all.services[&format!("e{}", N - 1)].description.as_deref(),
        Some("edited")
    );
    let ir = ws.db.check(ws.top);
    assert!(ir.is_empty());
}

#[test]
fn a_path_is_resolved_once_per_folder() {
    // The 1,000 modules share a folder: `./base.env.scl`, which each of
    // them writes, is resolved once, and `./mod<i>.env.scl`, written by the
    // top module and by module i + 1, once; not once per module.
    let ws = Ws::new();
    let (run, _) = ws.log.take();
    let resolved = run.iter().filter(|e| e.query == "resolved_local").count();
    assert!(resolved > 0, "the log did not see the import resolution");
    assert_eq!(resolved, N + 1, "one resolution per folder and path");
}

#[test]
fn the_same_path_in_two_folders_resolves_in_each() {
    // `./x.env.scl` written in `a/` and in `b/` names two files: only
    // `b/`'s is missing, and only `b/m.env.scl` reports it.
    let fs = Arc::new(MemorySystem::new());
    fs.write("/w/a/x.env.scl", "let v = 1\n");
    fs.write(
        "/w/a/m.env.scl",
        "import \"./x.env.scl\" as x\nlet w = x.v\n",
    );
    fs.write(
        "/w/b/m.env.scl",
        "import \"./x.env.scl\" as x\nlet w = x.v\n",
    );
    fs.write(
        "/w/top.env.scl",
        "import \"./a/m.env.scl\" as a\nimport \"./b/m.env.scl\" as b\nlet s = [a.w, b.w]\n",
    );
    fs.set_current_dir("/w");
    let db = Database::with_system(fs, Path::new("/w"), None);
    let top = db.open(Path::new("/w/top.env.scl"));
    let d = db.check(top);
    let found: Vec<(String, &str, String)> = d
        .iter()
        .map(|d| (d.at.file.to_string(), d.code, d.message.clone()))
        .collect();
    assert_eq!(
        found,
        [(
            "b/m.env.scl".to_string(),
            "E0102",
            "cannot find module \"./x.env.scl\"".to_string()
        )],
        "{d:?}"
    );
}

#[test]
fn an_edited_module_leaves_its_importers_import_resolution_durable() {
    // A file opened for editing has LOW text, but whether it exists and
    // can be read stay MEDIUM (an edit does not change them): the top
    // module's resolution of its 1,000 imports, which reads them, is then
    // verified in one step after an edit, not import by import.
    let mut ws = Ws::new();
    let last = format!("mod{}.env.scl", N - 1);
    ws.db.will_edit(ws.file(&last));
    let _ = ws.edit(&last, &module(N - 1, "first"));
    let _ = ws.log.take_validated_by_query();
    let _ = ws.edit(&last, &module(N - 1, "second"));
    let validated = ws.log.take_validated_by_query();
    // Only the edited module's own two imports (its outline is LOW).
    for q in ["resolved_local", "import_targets"] {
        assert!(
            validated.get(q).copied().unwrap_or(0) <= 2,
            "{q}: {validated:?}"
        );
    }
    // The walk finds import cycles itself and asks `import_cycle` only of
    // modules on one (none here; evaluation asks it of the edited module
    // and of the top module).
    assert!(
        validated.get("import_cycle").copied().unwrap_or(0) <= 2,
        "{validated:?}"
    );
    // The top module types its 1,000 imports from groups of 32 modules'
    // types: the edited module's group is verified module by module, the
    // others in one step each.
    assert!(
        validated.get("module_types").copied().unwrap_or(0) <= 64,
        "{validated:?}"
    );
    // The walk reads the imports of the top module's 1,000 imports, and
    // whether the top module reaches a cycle folds over them, in groups
    // of 32 modules too: nothing is verified once per module.
    for q in ["imports", "reaches_cycle"] {
        assert!(
            validated.get(q).copied().unwrap_or(0) <= 64,
            "{q}: {validated:?}"
        );
    }
    let total: usize = validated.values().sum();
    assert!(total <= 400, "{total}: {validated:?}");
}

#[test]
fn diagnostics_follow_their_text_without_re_evaluating() {
    // An evaluation error, then the same file with comments, blank lines
    // and spaces added above and inside the declaration: the diagnostic
    // is reported where its text is now, and nothing is evaluated again.
    let fs = Arc::new(MemorySystem::new());
    let before = "let l = [1, 2]\nlet x = l[5]\n";
    let after = "// a comment\n\nlet l = [1, 2]\n\n/// doc\nlet x =   l[ 5 ]  // why\n";
    fs.write("/w/main.env.scl", before);
    fs.set_current_dir("/w");
    let (mut db, log) = Database::with_event_log(fs, Path::new("/w"), None);
    let main = db.open(Path::new("/w/main.env.scl"));
    let at = |db: &Database| {
        let d = db.check(main);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, "E0311");
        d[0].at.span
    };
    let span = at(&db);
    assert_eq!(&before[span.range()], "5");
    let _ = log.take();
    db.set_text(main, after);
    let span = at(&db);
    assert_eq!(&after[span.range()], "5");
    let (run, _) = log.take();
    assert!(evaluations(&run).is_empty(), "{}", few(&evaluations(&run)));
}

#[test]
fn opening_a_buffer_with_the_files_own_text_reruns_nothing() {
    // An editor opens files it may never change: their inputs keep their
    // durability (a buffer whose text differs is an edit, and lowers it),
    // so nothing that reads them is computed again and later checks stay
    // cheap to verify.
    let mut ws = Ws::new();
    let _ = ws.log.take();
    ws.db.set_overlay(Path::new("/w/base.env.scl"), BASE);
    ws.db
        .set_overlay(Path::new("/w/mod500.env.scl"), &module(500, "env-500"));
    let d = ws.check();
    assert!(d.is_empty(), "{d:?}");
    let run = ws.log.take().0;
    assert!(run.is_empty(), "opening re-ran {}", few(&run));
    // Its first change is an edit: what it changed is evaluated again.
    ws.db.set_overlay(
        Path::new("/w/mod500.env.scl"),
        &module(500, "env-500-edited"),
    );
    let d = ws.check();
    assert!(d.is_empty(), "{d:?}");
    let run = ws.log.take().0;
    assert!(
        evaluations(&run).iter().any(|e| e.query == "decl_value"),
        "the edit re-evaluated nothing: {}",
        few(&run)
    );
}

#[test]
fn a_check_keeps_one_tree_per_module_and_parses_nothing_again() {
    // The files were parsed when their inputs were made; the check (the
    // static pass, import resolution, evaluation) reads their anchored
    // declarations and never runs `parse`, the editor's whole parse.
    let mut ws = Ws::new();
    let (run, _) = ws.log.take();
    assert!(
        run.iter().filter(|e| e.query == "typed_module").count() > N,
        "the log did not see the check's static pass"
    );
    let parses: Vec<&Executed> = run.iter().filter(|e| e.query == "parse").collect();
    assert!(
        parses.is_empty(),
        "the check parsed again: {}",
        few(&parses)
    );
    let run = ws.edit("mod500.env.scl", &module(500, "changed"));
    assert!(run.iter().any(|e| e.query == "typed_module"));
    let parses: Vec<&Executed> = run.iter().filter(|e| e.query == "parse").collect();
    assert!(
        parses.is_empty(),
        "the re-check parsed again: {}",
        few(&parses)
    );
}

#[test]
fn the_declarations_made_absolute_are_the_parse_without_its_doc_comments() {
    // Doc comments, a declaration with a syntax error of its own, and an
    // edit that moves every declaration: `module_ast` follows the text.
    let texts = [
        "/// The base.\nenv a {\n  /// Its image.\n  base = image(\"debian:12\")\n}\n\nlet x = 1 2\nlet y = \"${x}\"\n",
        "// moved down\n\n/// The base.\nenv a {\n  /// Its image.\n  base = image(\"debian:12\")\n  labels { k = \"v\" }\n}\n\nlet x = 1 2\nlet y = \"${x}\"\nfn f(n: Int) -> Int = n + 1\n",
    ];
    each_text(&texts, |db, f, text| {
        let mut expected = scl_syntax::parse_tree(text).module.as_ref().clone();
        for d in &mut expected.decls {
            d.strip_docs();
        }
        assert!(!expected.recovered.is_empty(), "{text}: nothing recovered");
        let made = scl_db::module_ast(db, f);
        assert_eq!(made.decls, expected.decls, "{text}");
        assert_eq!(made.recovered, expected.recovered, "{text}");
        // The editor's parse keeps the doc comments.
        let parsed = scl_db::parse(db, f);
        assert_eq!(
            *parsed.module,
            scl_syntax::parse_tree(text).module.as_ref().clone()
        );
        assert_ne!(
            parsed.module.decls, expected.decls,
            "{text}: no doc comment"
        );
    });
}

/// `check(db, file, text)` for each of `texts`, in order, set as the text
/// of one module (`/w/a.env.scl`, the workspace `/w`) of one database.
fn each_text(texts: &[&str], check: impl Fn(&Database, SourceFile, &str)) {
    let fs = Arc::new(MemorySystem::new());
    fs.write("/w/a.env.scl", texts[0]);
    fs.set_current_dir("/w");
    let mut db = Database::with_system(fs, Path::new("/w"), None);
    let f = db.open(Path::new("/w/a.env.scl"));
    for text in texts {
        db.set_text(f, text);
        check(&db, f, text);
    }
}

#[test]
fn the_static_pass_on_anchored_declarations_reports_what_the_parse_would() {
    // The static pass reads the anchored declarations and makes only its
    // diagnostics absolute: each must equal the pass over the parse
    // (absolute spans), labels and quoted text included, before and
    // after an edit that moves every declaration, with a declaration
    // recovered from a syntax error (not checked).
    let texts = [
        "env a {\n  resources.requests.memory = 4\n  description = 1 + \"x\"\n}\nlet a = 2\nlet b = nope\nlet x = 1 2\nlet y: Int = \"s\"\n",
        "// moved down\n\n/// doc\nenv a {\n  resources.requests.memory =   4\n\n  description = 1 + \"x\"   // still wrong\n}\nlet a = 2\nlet b = nope\nlet x = 1 2\nlet y: Int = \"s\"\nfn f(n: Int) -> Int = n + \"1\"\n",
    ];
    each_text(&texts, |db, f, text| {
        let tree = scl_syntax::parse_tree(text);
        assert!(
            !tree.module.recovered.is_empty(),
            "{text}: nothing recovered"
        );
        let path: Arc<str> = Arc::from("a.env.scl");
        let expected: Vec<_> = scl_sema::check_module_with(
            &tree.module,
            &scl_sema::StaticInputs {
                text,
                imports: &scl_sema::typeck::NoImports,
                known_modules: &[],
                absolute: None,
            },
        )
        .diagnostics
        .into_iter()
        .map(|d| d.in_file(&path))
        .collect();
        let made = scl_db::static_diagnostics(db, f);
        assert!(
            made.iter().any(|d| !d.labels.is_empty()),
            "{text}: no label: {made:?}"
        );
        assert!(
            made.iter().any(|d| d.message.contains("`4`")),
            "{text}: nothing quoted: {made:?}"
        );
        assert_eq!(made.as_ref(), &expected, "{text}");
    });
}
