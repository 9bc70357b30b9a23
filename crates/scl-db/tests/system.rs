//! Every file-system fact the queries use comes through the database's
//! `System` into a salsa input: changing a file, a folder's listing or a
//! file's existence on the system and telling the database
//! (`did_change_files`) changes the answer; an overlay wins over the disk.

use scl_db::{with_compiler_stack, Database, Db, MemorySystem};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `(code, file, message)` of every diagnostic of `/ws/main.env.scl`.
fn diags(db: &Database) -> Vec<(String, String, String)> {
    let f = db.open(Path::new("/ws/main.env.scl"));
    db.check(f)
        .into_iter()
        .map(|d| (d.code.to_string(), d.at.file.to_string(), d.message))
        .collect()
}

fn codes(db: &Database) -> Vec<String> {
    diags(db).into_iter().map(|d| d.0).collect()
}

fn setup() -> (MemorySystem, Database) {
    let sys = MemorySystem::new();
    sys.write(
        "/ws/main.env.scl",
        "import \"./lib.env.scl\" as lib\nenv app {\n  base = image(lib.img)\n}\n",
    );
    sys.write("/ws/lib.env.scl", "let img = \"debian:12.5\"\n");
    let db = Database::with_system(Arc::new(sys.clone()), Path::new("/ws"), None);
    (sys, db)
}

#[test]
fn a_changed_file_is_read_again_when_the_database_is_told() {
    with_compiler_stack(|| {
        let (sys, mut db) = setup();
        assert_eq!(codes(&db), Vec::<String>::new());
        sys.write("/ws/lib.env.scl", "let img = 42\n");
        // Not told yet: the database answers from the facts it holds.
        assert_eq!(codes(&db), Vec::<String>::new());
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        let d = diags(&db);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].1, "main.env.scl");
        // And back.
        sys.write("/ws/lib.env.scl", "let img = \"debian:12.5\"\n");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(codes(&db), Vec::<String>::new());
    })
}

#[test]
fn a_file_that_appears_or_disappears_changes_the_import() {
    with_compiler_stack(|| {
        let (sys, mut db) = setup();
        sys.remove("/ws/lib.env.scl");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        let d = diags(&db);
        assert_eq!(d[0].0, "E0102", "{d:?}");
        assert_eq!(d[0].2, "cannot find module \"./lib.env.scl\"");
        sys.write("/ws/lib.env.scl", "let img = \"debian:12.5\"\n");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(codes(&db), Vec::<String>::new());
    })
}

#[test]
fn a_folder_listing_is_an_input_the_did_you_mean_reads() {
    with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write(
            "/ws/main.env.scl",
            "import \"./libs.env.scl\" as lib\nenv app {\n  base = image(\"debian:12.5\")\n}\n",
        );
        let mut db = Database::with_system(Arc::new(sys.clone()), Path::new("/ws"), None);
        let help = |db: &Database| {
            let f = db.open(Path::new("/ws/main.env.scl"));
            db.check(f)[0].help.clone()
        };
        assert_eq!(help(&db), None);
        let listing = db.dir_listing(Path::new("/ws"));
        assert_eq!(listing.entries(&db).as_ref().unwrap().len(), 1);
        // A sibling with a close name appears: the folder changed.
        sys.write("/ws/lib.env.scl", "let x = 1\n");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(help(&db).as_deref(), Some("did you mean `lib.env.scl`?"));
        assert_eq!(listing.entries(&db).as_ref().unwrap().len(), 2);
    })
}

#[test]
fn an_overlay_wins_over_the_disk_until_it_is_removed() {
    with_compiler_stack(|| {
        let (sys, mut db) = setup();
        db.set_overlay(Path::new("/ws/lib.env.scl"), "let img = 42\n");
        assert_eq!(codes(&db).len(), 1);
        // A disk change under an open buffer does not show through it.
        sys.write("/ws/lib.env.scl", "let img = \"ubuntu:22.04\"\n");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(codes(&db).len(), 1);
        db.remove_overlay(Path::new("/ws/lib.env.scl"));
        assert_eq!(codes(&db), Vec::<String>::new());
        let f = db.open(Path::new("/ws/lib.env.scl"));
        assert_eq!(db.text(f), "let img = \"ubuntu:22.04\"\n");
    })
}

#[test]
fn an_overlay_of_a_file_not_on_disk_exists_and_is_listed() {
    with_compiler_stack(|| {
        let (sys, mut db) = setup();
        sys.remove("/ws/lib.env.scl");
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(codes(&db), vec!["E0102".to_string()]);
        db.set_overlay(Path::new("/ws/lib.env.scl"), "let img = \"debian:12.5\"\n");
        assert_eq!(codes(&db), Vec::<String>::new());
        let names: Vec<String> = db
            .dir_listing(Path::new("/ws"))
            .entries(&db)
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| e.name.clone())
            .collect();
        assert_eq!(names, ["lib.env.scl", "main.env.scl"]);
        db.remove_overlay(Path::new("/ws/lib.env.scl"));
        assert_eq!(codes(&db), vec!["E0102".to_string()]);
    })
}

#[test]
fn host_paths_must_exist_through_the_system() {
    with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write(
            "/ws/main.env.scl",
            "env app {\n  base = image(\"debian:12.5\")\n  python.requirements = [file(\"./req.txt\")]\n}\n",
        );
        let mut db = Database::with_system(Arc::new(sys.clone()), Path::new("/ws"), None);
        let d = diags(&db);
        assert_eq!(d.len(), 1, "{d:?}");
        sys.write("/ws/req.txt", "numpy==1.26.4\n");
        db.did_change_files(&[PathBuf::from("/ws/req.txt")]);
        assert_eq!(codes(&db), Vec::<String>::new());
    })
}

#[test]
fn a_copied_folder_must_exist_on_the_system() {
    with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write(
            "/ws/main.env.scl",
            "env app {\n  base = image(\"debian:12.5\")\n  files = [{ from = \"./data\", to = \"/data\" }]\n}\n",
        );
        let mut db = Database::with_system(Arc::new(sys.clone()), Path::new("/ws"), None);
        let d = diags(&db);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].2.contains("data"), "{d:?}");
        // A folder (not a file): `files[].from` may name either.
        sys.mkdir("/ws/data");
        db.did_change_files(&[PathBuf::from("/ws/data")]);
        assert_eq!(codes(&db), Vec::<String>::new());
    })
}

#[test]
fn an_import_cycle_is_one_diagnostic_whichever_file_is_checked() {
    with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/a.env.scl", "import \"./b.env.scl\" as b\nlet x = 1\n");
        sys.write("/ws/b.env.scl", "import \"./c.env.scl\" as c\nlet y = 2\n");
        sys.write("/ws/c.env.scl", "import \"./a.env.scl\" as a\nlet z = 3\n");
        let db = Database::with_system(Arc::new(sys), Path::new("/ws"), None);
        let mut all = Vec::new();
        for name in ["c", "a", "b"] {
            let f = db.open(Path::new(&format!("/ws/{name}.env.scl")));
            let d = db.check(f);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(
                (
                    d[0].code,
                    &*d[0].at.file,
                    d[0].at.span.start,
                    d[0].message.as_str()
                ),
                (
                    "E0103",
                    "c.env.scl",
                    7,
                    "import cycle: a.env.scl → b.env.scl → c.env.scl → a.env.scl"
                )
            );
            all.extend(d);
        }
        all.dedup();
        assert_eq!(all.len(), 1);
    })
}

/// A file that exists but cannot be read is an error where it is used
/// (E0107, with the system's reason), never taken for an empty file: the
/// root module, an imported module, and a file read by `file()`.
#[test]
fn a_file_that_cannot_be_read_is_an_error_not_an_empty_file() {
    with_compiler_stack(|| {
        // An imported module.
        let (sys, mut db) = setup();
        sys.set_unreadable("/ws/lib.env.scl", true);
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        let d = diags(&db);
        assert_eq!(
            d,
            [(
                "E0107".to_string(),
                "main.env.scl".to_string(),
                "module \"./lib.env.scl\" cannot be read: Permission denied (os error 13)"
                    .to_string()
            )],
        );
        // Readable again: the error goes.
        sys.set_unreadable("/ws/lib.env.scl", false);
        db.did_change_files(&[PathBuf::from("/ws/lib.env.scl")]);
        assert_eq!(codes(&db), Vec::<String>::new());

        // The root module.
        sys.set_unreadable("/ws/main.env.scl", true);
        db.did_change_files(&[PathBuf::from("/ws/main.env.scl")]);
        assert_eq!(codes(&db), ["E0107"]);
        sys.set_unreadable("/ws/main.env.scl", false);
        db.did_change_files(&[PathBuf::from("/ws/main.env.scl")]);

        // A file read by `file()`.
        sys.write("/ws/req.txt", "numpy==2.0.0\n");
        sys.set_unreadable("/ws/req.txt", true);
        sys.write(
            "/ws/main.env.scl",
            "env app {\n  base = image(\"python:3.11-slim\")\n  python.requirements = [file(\"req.txt\")]\n}\n",
        );
        db.did_change_files(&[PathBuf::from("/ws/main.env.scl")]);
        let d = diags(&db);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "E0107", "{d:?}");
        assert!(d[0].2.starts_with("\"req.txt\" cannot be read"), "{d:?}");
    })
}
