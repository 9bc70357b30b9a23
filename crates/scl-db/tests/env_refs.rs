//! An env of another module named as `mod.name` is held by reference
//! (`Value::EnvRef`) and resolved where its content is read: these tests pin
//! that every way of reading it gives what the env itself gives, and that
//! an env holding it as a service gets its IR (and its failure).

use scl_db::{Database, MemorySystem, SourceFile};
use scl_sema::Value;
use std::path::Path;
use std::sync::Arc;

const LIB: &str = r#"
env a {
  base = image("debian:12.5")
  description = "A"
  workdir = "/a"
}

fn is_a(e: Env) -> Bool = e == a

env broken {
  base = image("debian:12.5")
  workdir = "relative"
}
"#;

fn db(main: &str) -> (Database, SourceFile) {
    let fs = Arc::new(MemorySystem::new());
    fs.write("/w/lib.env.scl", LIB);
    fs.write("/w/main.env.scl", main);
    fs.set_current_dir("/w");
    let db = Database::with_system(fs, Path::new("/w"), None);
    let main = db.open(Path::new("/w/main.env.scl"));
    (db, main)
}

fn value(db: &Database, file: SourceFile, name: &str) -> Value {
    scl_db::module_values(db, file)
        .values
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("no value {name}"))
}

#[test]
fn a_reference_reads_as_the_env_it_names() {
    let (db, main) = db(r#"import "./lib.env.scl" as lib
let same = lib.is_a(lib.a)
let refs_equal = lib.a == lib.a
let other = lib.a == (lib.a with { description = "other" })
let desc = lib.a.description
env b extends lib.a {
  description = "B"
}
let w = lib.a with { description = "W" }
let w_desc = w.description
"#);
    let diags = db.check(main);
    assert!(
        diags.iter().all(|d| !d.at.file.contains("main")),
        "{diags:?}"
    );
    assert_eq!(value(&db, main, "same"), Value::Bool(true));
    assert_eq!(value(&db, main, "refs_equal"), Value::Bool(true));
    assert_eq!(value(&db, main, "other"), Value::Bool(false));
    assert_eq!(value(&db, main, "desc"), Value::str("A"));
    assert_eq!(value(&db, main, "w_desc"), Value::str("W"));
    let b = scl_db::module_values(&db, main)
        .final_env("b")
        .and_then(|f| f.spec.clone())
        .expect("b has an IR");
    assert_eq!(b.description.as_deref(), Some("B"));
    assert_eq!(b.workdir.as_deref(), Some("/a"));
}

#[test]
fn services_by_reference_get_their_ir_and_their_failure() {
    let (db, main) = db(r#"import "./lib.env.scl" as lib
env ok {
  services {
    x = lib.a
    y = lib.a with { description = "Y" }
  }
}
env holds_broken {
  services {
    x = lib.a
    z = lib.broken
  }
}
env nested {
  services {
    inner = ok
  }
}
"#);
    let diags = db.check(main);
    // The broken service's error is reported once, in its own module.
    assert_eq!(
        diags
            .iter()
            .map(|d| (d.code, d.at.file.to_string()))
            .collect::<Vec<_>>(),
        vec![("E0208", "lib.env.scl".to_string())],
        "{diags:?}"
    );
    let values = scl_db::module_values(&db, main);
    let ok = values
        .final_env("ok")
        .and_then(|f| f.spec.clone())
        .expect("ok has an IR");
    assert!(!values.final_env("ok").unwrap().is_pending());
    assert_eq!(ok.services["x"].description.as_deref(), Some("A"));
    assert_eq!(ok.services["y"].description.as_deref(), Some("Y"));
    // An env holding a service that failed has no IR, as before.
    assert!(values.final_env("holds_broken").is_none());
    assert!(values.failed.contains(&"holds_broken".to_string()));
    // A service of the same module that holds services by reference.
    let nested = values
        .final_env("nested")
        .and_then(|f| f.spec.clone())
        .expect("nested has an IR");
    assert_eq!(
        nested.services["inner"].services["x"]
            .description
            .as_deref(),
        Some("A")
    );
}

/// Files under `/w` (`main.env.scl` is the one checked).
fn db_of(files: &[(&str, String)]) -> (Database, SourceFile) {
    let fs = Arc::new(MemorySystem::new());
    for (name, text) in files {
        fs.write(format!("/w/{name}"), text);
    }
    fs.set_current_dir("/w");
    let db = Database::with_system(fs, Path::new("/w"), None);
    let main = db.open(Path::new("/w/main.env.scl"));
    (db, main)
}

#[test]
fn a_template_instance_is_one_ancestor_whether_its_env_argument_is_named_by_reference_or_not() {
    let lib = r#"env a { base = image("debian:12.5") }
env t(e: Env) {
  base = image("debian:12.5")
  command += ["run"]
}
env left extends t(e = a) {}
"#;
    let main = r#"import "./lib.env.scl" as lib
env c extends lib.left, lib.t(e = lib.a) {}
"#;
    let (db, main) = db_of(&[("lib.env.scl", lib.into()), ("main.env.scl", main.into())]);
    assert!(db.check(main).is_empty());
    let c = scl_db::module_values(&db, main)
        .final_env("c")
        .and_then(|f| f.spec.clone())
        .expect("c has an IR");
    assert_eq!(c.command, vec!["run".to_string()]);
}

#[test]
fn services_by_reference_nested_as_a_diamond_are_completed_once_per_module() {
    // Each level holds the level below twice: completing each level again
    // from the bottom would cost 2^24 completions; each module's values
    // are assembled once.
    const LEVELS: usize = 24;
    let mut files = vec![(
        "l0.env.scl".to_string(),
        "env e { base = image(\"debian:12.5\") }\n".to_string(),
    )];
    for i in 1..=LEVELS {
        files.push((
            format!("l{i}.env.scl"),
            format!(
                "import \"./l{}.env.scl\" as p\nenv e {{\n  services {{\n    a = p.e\n    b = p.e\n  }}\n}}\n",
                i - 1
            ),
        ));
    }
    files.push((
        "main.env.scl".to_string(),
        format!(
            "import \"./l{LEVELS}.env.scl\" as top\nenv m {{\n  services {{ t = top.e }}\n}}\n"
        ),
    ));
    let refs: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let (db, main) = db_of(&refs);
    assert!(db.check(main).is_empty());
    let mut spec = scl_db::module_values(&db, main)
        .final_env("m")
        .and_then(|f| f.spec.clone())
        .expect("m has an IR");
    spec = spec.services["t"].clone();
    let mut depth = 0;
    while let Some(s) = spec.services.get("a").cloned() {
        assert!(spec.services.contains_key("b"));
        spec = s;
        depth += 1;
    }
    assert_eq!(depth, LEVELS);
}

#[test]
fn a_failed_env_read_by_reference_fails_where_it_is_read() {
    let lib = r#"env broken {
  base = image("debian:12.5")
  workdir = "rel"
}
env web {
  base = image("debian:12.5")
  depends_on = ["db"]
}
env inner {
  description = "rel3"
  services { w = web }
}
"#;
    let main = r#"import "./lib.env.scl" as lib
fn f(e: Env) -> String = "rel2"
env m {
  base = image("debian:12.5")
  workdir = f(lib.broken)
  description = if lib.broken == lib.broken then "same" else "other"
}
env n {
  base = image("debian:12.5")
  workdir = lib.inner.description
}
"#;
    let (db, main) = db_of(&[("lib.env.scl", lib.into()), ("main.env.scl", main.into())]);
    let diags = db.check(main);
    // Only the errors of `lib` itself (`broken`'s workdir, `inner`'s
    // service): nothing in main reads a failed env's content.
    let codes: Vec<(&str, &str)> = diags.iter().map(|d| (d.code, &*d.at.file)).collect();
    assert_eq!(
        codes,
        vec![("E0208", "lib.env.scl"), ("E0208", "lib.env.scl")],
        "{diags:?}"
    );
}
