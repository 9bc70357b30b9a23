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
let other = lib.a == lib.broken
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
