//! An import that reaches a file through a symbolic link is read only
//! when the link's target is inside the workspace (E0105 otherwise): a
//! link to a file, a link to a folder on the path, and the importing
//! module's own folder being a link. The answer follows the disk after a
//! refresh of the link (the facts of a folder are memoized per folder; a
//! refresh sets them, and what read them is checked again).
#![cfg(unix)]

use scl_db::Database;
use std::os::unix::fs::symlink;
use std::path::Path;

const LIB: &str = "let img = \"debian:12.5\"\n";

fn importer(path: &str) -> String {
    format!("import \"{path}\" as lib\nenv app {{\n  base = image(lib.img)\n}}\n")
}

/// The codes of the diagnostics of checking `file`, and their messages.
fn check(db: &Database, file: &Path) -> Vec<(String, String)> {
    let f = db.open(file);
    db.check(f)
        .into_iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn links_that_lead_out_of_the_workspace_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    write(&ws.join("scl.toml"), "");
    write(&ws.join("inside/lib.env.scl"), LIB);
    write(&outside.join("lib.env.scl"), LIB);
    // A link to a file outside, a link to a folder outside, and links to
    // the same inside.
    symlink(outside.join("lib.env.scl"), ws.join("out.env.scl")).unwrap();
    symlink(&outside, ws.join("outdir")).unwrap();
    symlink(ws.join("inside/lib.env.scl"), ws.join("in.env.scl")).unwrap();
    symlink(ws.join("inside"), ws.join("indir")).unwrap();
    for (name, import, refused) in [
        ("a.env.scl", "./out.env.scl", true),
        ("b.env.scl", "./outdir/lib.env.scl", true),
        ("c.env.scl", "./in.env.scl", false),
        ("d.env.scl", "./indir/lib.env.scl", false),
        ("e.env.scl", "./inside/lib.env.scl", false),
    ] {
        write(&ws.join(name), &importer(import));
        let db = Database::new(&ws, None);
        let d = check(&db, &ws.join(name));
        if refused {
            assert_eq!(d.len(), 1, "{import}: {d:?}");
            assert_eq!(d[0].0, "E0105", "{import}: {d:?}");
            assert!(d[0].1.contains("outside the workspace"), "{import}: {d:?}");
        } else {
            assert_eq!(d, vec![], "{import}");
        }
    }
}

/// The importing module's folder is a link: its imports are checked
/// against where the link leads, and again once the link is moved and
/// the folder refreshed, both ways.
#[test]
fn a_module_folder_that_becomes_a_link_out_is_seen_after_a_refresh() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let (real_in, real_out) = (ws.join("real"), tmp.path().join("elsewhere"));
    write(&ws.join("scl.toml"), "");
    for dir in [&real_in, &real_out] {
        write(&dir.join("lib.env.scl"), LIB);
        write(&dir.join("m.env.scl"), &importer("./lib.env.scl"));
    }
    let app = ws.join("app");
    symlink(&real_in, &app).unwrap();
    let m = app.join("m.env.scl");
    let mut db = Database::new(&ws, None);
    assert_eq!(check(&db, &m), vec![]);

    std::fs::remove_file(&app).unwrap();
    symlink(&real_out, &app).unwrap();
    db.did_change_files(std::slice::from_ref(&app));
    let d = check(&db, &m);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "E0105", "{d:?}");

    std::fs::remove_file(&app).unwrap();
    symlink(&real_in, &app).unwrap();
    db.did_change_files(std::slice::from_ref(&app));
    assert_eq!(check(&db, &m), vec![]);
}
