//! The type checker through the database: the type of an expression by
//! offset with imported modules' declaration types, and the early cutoff of
//! `module_types` (an edit of an imported module that changes no
//! declaration's type re-checks no importer).

use scl_db::{type_table, typed_module, with_compiler_stack, Database};
use std::sync::Arc;

const LIB: &str = "fn mem(n: Int) -> Memory = 4Gi * n\nlet names = [\"a\"]\n";
const MAIN: &str = "import \"./lib.env.scl\" as lib\nenv app {\n  base = image(\"debian:12.5\")\n  resources.limits.memory = lib.mem(2)\n  system.packages = lib.names\n}\n";

fn at(src: &str, needle: &str) -> u32 {
    src.find(needle).unwrap() as u32
}

#[test]
fn imported_declarations_are_typed_and_shown_by_offset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.env.scl"), LIB).unwrap();
    std::fs::write(dir.path().join("main.env.scl"), MAIN).unwrap();
    with_compiler_stack(|| {
        let db = Database::new(dir.path(), None);
        let main = db.open(&dir.path().join("main.env.scl"));
        let t = typed_module(&db, main);
        assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics);
        let table = type_table(&db, main);
        let shown = |n: &str| table.type_at(at(MAIN, n)).map(|t| t.to_string());
        assert_eq!(shown("lib.mem").as_deref(), Some("module"));
        assert_eq!(shown("mem(2)").as_deref(), Some("fn(n: Int) -> Memory"));
        assert_eq!(shown("(2)").as_deref(), Some("Memory"));
        assert_eq!(shown("names\n").as_deref(), Some("[String]"));
    });
}

#[test]
fn an_edit_that_keeps_the_declaration_types_rechecks_no_importer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.env.scl"), LIB).unwrap();
    std::fs::write(dir.path().join("main.env.scl"), MAIN).unwrap();
    with_compiler_stack(|| {
        let mut db = Database::new(dir.path(), None);
        let lib = db.open(&dir.path().join("lib.env.scl"));
        let main = db.open(&dir.path().join("main.env.scl"));
        // The file is opened for editing first (its inputs become LOW
        // durability: salsa does not backdate across a drop in
        // durability); from then on, every edit cuts off.
        db.will_edit(lib);
        let first = typed_module(&db, main).clone();
        // A comment and a new body: the same declaration types.
        db.set_text(lib, &format!("// a comment\n{}", LIB.replace("4Gi", "2Gi")));
        let second = typed_module(&db, main).clone();
        assert!(Arc::ptr_eq(&first, &second), "the importer was re-checked");
        // A changed return type is seen by the importer.
        db.set_text(lib, &LIB.replace("-> Memory = 4Gi * n", "-> Int = n"));
        let third = typed_module(&db, main).clone();
        assert!(!Arc::ptr_eq(&second, &third));
        let codes: Vec<&str> = third.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["E0203"], "{:?}", third.diagnostics);
    });
}
