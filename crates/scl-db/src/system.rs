//! The file system the database reads, behind a trait: [`OsSystem`] (the
//! disk) and [`MemorySystem`] (a map, for tests and fixtures).
//!
//! The database never calls `std::fs` itself: every fact it uses (a file's
//! bytes, whether a path is a file or a folder, a folder's listing, a
//! canonical path) comes through a [`System`] and is stored in a salsa input
//! (see `files.rs`), so a long-running front end answers from what it was
//! last told, and [`crate::Database::did_change_files`] re-reads what changed.
//! The design follows ty's `ruff_db::system` (a `System` trait with an OS and
//! an in-memory implementation) and rust-analyzer's `vfs` (the front end says
//! which paths changed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// What a path is, without following a final symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// A regular file (or a link to one, for [`System::kind`]).
    File,
    /// A folder (or a link to one, for [`System::kind`]).
    Dir,
    /// Nothing, or something that is neither (a socket, a broken link).
    Missing,
}

/// One entry of a folder's listing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirEntry {
    /// The file name (names that are not UTF-8 are not listed).
    pub name: String,
    /// Whether it is a folder (links are not followed: a link is neither).
    pub is_dir: bool,
    /// Whether it is a symbolic link.
    pub is_link: bool,
}

/// The file system as the compiler sees it. Paths are absolute and
/// lexically normalized (no `.`/`..`). Implementations never panic.
pub trait System: Send + Sync + std::fmt::Debug {
    /// At most `limit` bytes of the file at `path` (a caller passes one byte
    /// more than it accepts, to tell "too large" from "fits exactly");
    /// `Ok(None)` when there is no regular file there; `Err` (the system's
    /// message) when there is one but it cannot be read (permissions, an
    /// I/O error).
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String>;
    /// What `path` is, following links.
    fn kind(&self, path: &Path) -> PathKind;
    /// Whether `path` itself is a symbolic link.
    fn is_link(&self, path: &Path) -> bool;
    /// [`System::kind`] and [`System::is_link`] together (for
    /// [`OsSystem`]: one `lstat`, and a `stat` only for a link).
    fn kind_and_link(&self, path: &Path) -> (PathKind, bool) {
        (self.kind(path), self.is_link(path))
    }
    /// The entries of a folder whose names are UTF-8, sorted by name; `None`
    /// when it is not a folder.
    fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>>;
    /// The canonical form of `path` (every link resolved), if it exists.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;
    /// The current folder (for paths given relative on a command line and
    /// for display paths).
    fn current_dir(&self) -> PathBuf;
    /// The SHA-256 (lowercase hex) of the file at `path`; `Ok(None)` and
    /// `Err` as for [`System::read`]. The default reads the whole file;
    /// [`OsSystem`] streams it, so a large file costs no memory.
    fn sha256(&self, path: &Path) -> Result<Option<String>, String> {
        Ok(self.read(path, usize::MAX)?.map(|b| scl_ir::sha256_hex(&b)))
    }
}

/// The real file system, through `std::fs`.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsSystem;

impl System for OsSystem {
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
        use std::io::Read;
        // Only regular files are opened (a FIFO would block the open).
        let len = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m.len(),
            _ => return Ok(None),
        };
        // Room for the whole file and the read that finds its end: two
        // reads for a file that did not grow meanwhile, instead of a
        // doubling series from 32 bytes.
        let room = usize::try_from(len).unwrap_or(usize::MAX).min(limit);
        let mut out = Vec::with_capacity(room.saturating_add(1).min(1 << 20));
        std::fs::File::open(path)
            .and_then(|f| f.take(limit as u64).read_to_end(&mut out))
            .map_err(|e| e.to_string())?;
        Ok(Some(out))
    }
    fn kind(&self, path: &Path) -> PathKind {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => PathKind::File,
            Ok(m) if m.is_dir() => PathKind::Dir,
            _ => PathKind::Missing,
        }
    }
    fn is_link(&self, path: &Path) -> bool {
        path.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    }
    fn kind_and_link(&self, path: &Path) -> (PathKind, bool) {
        match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => (self.kind(path), true),
            Ok(m) if m.is_file() => (PathKind::File, false),
            Ok(m) if m.is_dir() => (PathKind::Dir, false),
            _ => (PathKind::Missing, false),
        }
    }
    fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
        let rd = std::fs::read_dir(path).ok()?;
        // A name that is not UTF-8 is left out: no import path or `.env.scl`
        // name can say it.
        let mut out: Vec<DirEntry> = rd
            .flatten()
            .filter_map(|e| {
                let t = e.file_type().ok();
                Some(DirEntry {
                    name: e.file_name().into_string().ok()?,
                    is_dir: t.is_some_and(|t| t.is_dir()),
                    is_link: t.is_some_and(|t| t.is_symlink()),
                })
            })
            .collect();
        out.sort();
        Some(out)
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        path.canonicalize().ok()
    }
    fn current_dir(&self) -> PathBuf {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    }
    fn sha256(&self, path: &Path) -> Result<Option<String>, String> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            _ => return Ok(None),
        }
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        scl_ir::sha256_reader(file)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// An in-memory file system: files by absolute path; a folder exists when a
/// file is below it (or it was made with [`MemorySystem::mkdir`]). No links:
/// a path is its own canonical form. Cloning shares the same files, so a
/// test keeps a handle, changes a file, and tells the database.
#[derive(Debug, Clone, Default)]
pub struct MemorySystem {
    inner: Arc<RwLock<Memory>>,
}

#[derive(Debug, Default)]
struct Memory {
    files: BTreeMap<PathBuf, Arc<[u8]>>,
    dirs: std::collections::BTreeSet<PathBuf>,
    /// Files that exist but whose reading fails (as without permission).
    unreadable: std::collections::BTreeSet<PathBuf>,
    cwd: Option<PathBuf>,
}

impl MemorySystem {
    /// An empty file system whose current folder is `/`.
    pub fn new() -> MemorySystem {
        MemorySystem::default()
    }
    /// Writes (creates or replaces) a file.
    pub fn write(&self, path: impl AsRef<Path>, text: impl AsRef<[u8]>) {
        let mut m = self.inner.write().unwrap_or_else(|e| e.into_inner());
        m.files
            .insert(path.as_ref().to_path_buf(), Arc::from(text.as_ref()));
    }
    /// Removes a file (nothing if there is none).
    pub fn remove(&self, path: impl AsRef<Path>) {
        let mut m = self.inner.write().unwrap_or_else(|e| e.into_inner());
        m.files.remove(path.as_ref());
    }
    /// Makes the file at `path` unreadable (it stays listed and is a file,
    /// but reading it fails as without permission), or readable again.
    pub fn set_unreadable(&self, path: impl AsRef<Path>, unreadable: bool) {
        let mut m = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if unreadable {
            m.unreadable.insert(path.as_ref().to_path_buf());
        } else {
            m.unreadable.remove(path.as_ref());
        }
    }
    /// Makes an (empty) folder.
    pub fn mkdir(&self, path: impl AsRef<Path>) {
        let mut m = self.inner.write().unwrap_or_else(|e| e.into_inner());
        m.dirs.insert(path.as_ref().to_path_buf());
    }
    /// Sets the current folder.
    pub fn set_current_dir(&self, path: impl AsRef<Path>) {
        let mut m = self.inner.write().unwrap_or_else(|e| e.into_inner());
        m.cwd = Some(path.as_ref().to_path_buf());
    }
    fn with<T>(&self, f: impl FnOnce(&Memory) -> T) -> T {
        f(&self.inner.read().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Memory {
    fn is_dir(&self, path: &Path) -> bool {
        path == Path::new("/")
            || self.dirs.iter().any(|d| d.starts_with(path))
            || self
                .files
                .range(path.to_path_buf()..)
                .next()
                .is_some_and(|(f, _)| f != path && f.starts_with(path))
    }
}

impl System for MemorySystem {
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
        self.with(|m| {
            if m.unreadable.contains(path) {
                return Err("Permission denied (os error 13)".to_string());
            }
            Ok(m.files.get(path).map(|b| b[..b.len().min(limit)].to_vec()))
        })
    }
    fn kind(&self, path: &Path) -> PathKind {
        self.with(|m| {
            if m.files.contains_key(path) {
                PathKind::File
            } else if m.is_dir(path) {
                PathKind::Dir
            } else {
                PathKind::Missing
            }
        })
    }
    fn is_link(&self, _path: &Path) -> bool {
        false
    }
    fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
        self.with(|m| {
            if !m.is_dir(path) {
                return None;
            }
            let mut names: BTreeMap<String, bool> = BTreeMap::new();
            let below = m.files.keys().chain(m.dirs.iter());
            for p in below {
                let Ok(rest) = p.strip_prefix(path) else {
                    continue;
                };
                let mut parts = rest.components();
                let Some(first) = parts.next() else { continue };
                let name = first.as_os_str().to_string_lossy().into_owned();
                let is_dir = parts.next().is_some() || m.dirs.contains(p);
                *names.entry(name).or_default() |= is_dir;
            }
            Some(
                names
                    .into_iter()
                    .map(|(name, is_dir)| DirEntry {
                        name,
                        is_dir,
                        is_link: false,
                    })
                    .collect(),
            )
        })
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        (self.kind(path) != PathKind::Missing).then(|| path.to_path_buf())
    }
    fn current_dir(&self) -> PathBuf {
        self.with(|m| m.cwd.clone().unwrap_or_else(|| PathBuf::from("/")))
    }
}
