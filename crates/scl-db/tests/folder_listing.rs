//! The first facts of the files of a folder many of whose files are asked
//! about come from one listing of the folder instead of an `lstat` each:
//! the same facts (kind, link, canonical form) as asking the system about
//! each path, for every kind of entry, for names the listing does not
//! hold, and after a refresh.
#![cfg(unix)]

use scl_db::system::{DirEntry, EntryKind, EntryKinds, OsSystem, PathKind, System};
use scl_db::{Database, Db};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The disk, counting the questions asked about single paths and the
/// listings made.
#[derive(Debug, Default)]
struct Counting {
    single: AtomicUsize,
    listings: AtomicUsize,
}

impl System for Counting {
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
        OsSystem.read(path, limit)
    }
    fn kind(&self, path: &Path) -> PathKind {
        OsSystem.kind(path)
    }
    fn is_link(&self, path: &Path) -> bool {
        OsSystem.is_link(path)
    }
    fn kind_and_link(&self, path: &Path) -> (PathKind, bool) {
        self.single.fetch_add(1, Ordering::SeqCst);
        OsSystem.kind_and_link(path)
    }
    fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
        OsSystem.read_dir(path)
    }
    fn entry_kinds(&self, dir: &Path, at_most: usize) -> Option<EntryKinds> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        OsSystem.entry_kinds(dir, at_most)
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        OsSystem.canonicalize(path)
    }
    fn current_dir(&self) -> PathBuf {
        OsSystem.current_dir()
    }
}

/// What asking the system about `path` alone says (the database's facts
/// without a listing).
fn alone(path: &Path) -> (PathKind, bool, Option<PathBuf>) {
    let (kind, link) = OsSystem.kind_and_link(path);
    let canonical = (kind == PathKind::Dir || link)
        .then(|| OsSystem.canonicalize(path))
        .flatten();
    (kind, link, canonical)
}

fn facts(db: &Database, path: &Path) -> (PathKind, bool, Option<PathBuf>) {
    let i = db.path_info(path);
    (*i.kind(db), *i.is_link(db), i.canonical(db).clone())
}

#[test]
fn facts_from_a_listing_are_the_facts_of_each_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let dir = root.join("mods");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..100 {
        std::fs::write(dir.join(format!("m{i}.env.scl")), "let x = 1\n").unwrap();
    }
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.join("m0.env.scl"), dir.join("to-file.env.scl")).unwrap();
    std::os::unix::fs::symlink(dir.join("sub"), dir.join("to-dir")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("broken.env.scl")).unwrap();
    let fifo = dir.join("pipe.env.scl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let sys = Arc::new(Counting::default());
    let mut db = Database::with_system(sys.clone(), &root, None);
    // Enough files that the folder is listed, then every kind of entry.
    let mut paths: Vec<PathBuf> = (0..100)
        .map(|i| dir.join(format!("m{i}.env.scl")))
        .collect();
    for name in [
        "sub",
        "to-file.env.scl",
        "to-dir",
        "broken.env.scl",
        "pipe.env.scl",
        "missing.env.scl",
    ] {
        paths.push(dir.join(name));
    }
    // A file made after the listing: not in it, asked about alone.
    for p in &paths[..60] {
        assert_eq!(facts(&db, p), alone(p), "{}", p.display());
    }
    let late = dir.join("late.env.scl");
    std::fs::write(&late, "let y = 2\n").unwrap();
    paths.push(late.clone());
    for p in &paths[60..] {
        assert_eq!(facts(&db, p), alone(p), "{}", p.display());
    }
    assert_eq!(facts(&db, &dir.join("sub")).0, PathKind::Dir);
    assert_eq!(facts(&db, &dir.join("pipe.env.scl")).0, PathKind::Missing);
    assert_eq!(facts(&db, &late).0, PathKind::File);
    // The listing was used: far fewer questions than paths.
    assert_eq!(sys.listings.load(Ordering::SeqCst), 1);
    let single = sys.single.load(Ordering::SeqCst);
    assert!(single < 45, "{single} paths asked about alone");
    // A refresh asks the system about the path itself, whatever the
    // listing said.
    std::fs::remove_file(&paths[70]).unwrap();
    db.did_change_files(&[paths[70].clone()]);
    assert_eq!(facts(&db, &paths[70]).0, PathKind::Missing);
    assert_eq!(facts(&db, &paths[71]).0, PathKind::File);
}

/// A folder with many more entries than the files asked about in it is
/// not listed whole: the listing stops at eight entries per file asked,
/// and is tried again when twice as many files have been asked about.
#[test]
fn a_large_folder_is_listed_only_once_enough_of_it_is_asked_about() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for i in 0..600 {
        std::fs::write(root.join(format!("m{i}.env.scl")), "").unwrap();
    }
    let sys = Arc::new(Counting::default());
    let db = Database::with_system(sys.clone(), &root, None);
    let ask = |range: std::ops::Range<usize>| {
        for i in range {
            let p = root.join(format!("m{i}.env.scl"));
            assert_eq!(facts(&db, &p), alone(&p));
        }
    };
    // 32 asked: a listing of at most 256 entries stops (600 are there).
    ask(0..32);
    assert_eq!(sys.listings.load(Ordering::SeqCst), 1);
    assert_eq!(sys.single.load(Ordering::SeqCst), 32);
    // 64: at most 512, stops again; 128: at most 1,024, the whole folder
    // (checked against one `lstat` of the path asked about).
    ask(32..128);
    assert_eq!(sys.listings.load(Ordering::SeqCst), 3);
    assert_eq!(sys.single.load(Ordering::SeqCst), 128);
    ask(128..600);
    assert_eq!(sys.listings.load(Ordering::SeqCst), 3);
    assert_eq!(sys.single.load(Ordering::SeqCst), 128);
}

/// A listing finds each of its names, and no other: names that share
/// prefixes, differ in case or length only, are empty or not ASCII, pushed
/// in any order and twice.
#[test]
fn entry_kinds_finds_exactly_its_names() {
    let names = ["b", "a", "ab", "abc", "B", "é", "m10", "m1", "m100"];
    let mut b = EntryKinds::builder();
    for (i, n) in names.iter().enumerate() {
        let kind = if i % 2 == 0 {
            EntryKind::File
        } else {
            EntryKind::Dir
        };
        b.push(n, kind).unwrap();
    }
    b.push("a", EntryKind::Link).unwrap();
    let l = b.build();
    assert_eq!(l.len(), 9);
    for (i, n) in names.iter().enumerate() {
        let kind = if i % 2 == 0 {
            EntryKind::File
        } else {
            EntryKind::Dir
        };
        assert_eq!(l.get(n), Some(kind), "{n}");
    }
    // The first of two entries named alike is kept.
    assert_eq!(l.get("a"), Some(EntryKind::Dir));
    for n in ["", "A", "abcd", "m", "m1000", "e", "bb", "\u{0}"] {
        assert_eq!(l.get(n), None, "{n:?}");
    }
    assert_eq!(EntryKinds::default().get("a"), None);
}

/// A folder that can be read but not searched (mode `r` without `x`):
/// its listing names files that an `lstat` cannot see. Such a listing
/// disagrees with asking the path itself, and is not used: every file
/// is asked about on its own, as without listings. (Root ignores
/// permissions, so the system here plays the folder.)
#[test]
fn a_listing_that_disagrees_with_the_path_itself_is_not_used() {
    #[derive(Debug, Default)]
    struct Unsearchable(Counting);
    impl System for Unsearchable {
        fn read(&self, _: &Path, _: usize) -> Result<Option<Vec<u8>>, String> {
            Err("Permission denied (os error 13)".into())
        }
        fn kind(&self, _: &Path) -> PathKind {
            PathKind::Missing
        }
        fn is_link(&self, _: &Path) -> bool {
            false
        }
        fn kind_and_link(&self, _: &Path) -> (PathKind, bool) {
            self.0.single.fetch_add(1, Ordering::SeqCst);
            (PathKind::Missing, false)
        }
        fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
            OsSystem.read_dir(path)
        }
        fn entry_kinds(&self, dir: &Path, at_most: usize) -> Option<EntryKinds> {
            self.0.entry_kinds(dir, at_most)
        }
        fn canonicalize(&self, _: &Path) -> Option<PathBuf> {
            None
        }
        fn current_dir(&self) -> PathBuf {
            OsSystem.current_dir()
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for i in 0..100 {
        std::fs::write(root.join(format!("m{i}.env.scl")), "").unwrap();
    }
    let sys = Arc::new(Unsearchable::default());
    let db = Database::with_system(sys.clone(), &root, None);
    for i in 0..100 {
        let p = root.join(format!("m{i}.env.scl"));
        assert_eq!(facts(&db, &p).0, PathKind::Missing, "{}", p.display());
    }
    // Listed once, found to disagree, never listed again.
    assert_eq!(sys.0.listings.load(Ordering::SeqCst), 1);
}
