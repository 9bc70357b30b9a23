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

/// What a folder's entry is, from its listing (links not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (what it points to is not in the listing).
    Link,
    /// Something else (a socket, a FIFO, a device).
    Other,
}

/// The kinds of a folder's entries by name ([`System::entry_kinds`]): the
/// names in one buffer, sorted, looked up by binary search. A folder of
/// 5,000 modules takes about 110 KiB, against about 400 KiB as a map of
/// strings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryKinds {
    /// Every name, in name order, one after the other.
    names: String,
    /// For each name in order: where it ends in `names` (it starts where
    /// the previous one ends), and its kind.
    entries: Vec<(u32, EntryKind)>,
}

impl EntryKinds {
    /// An empty listing, to [`EntryKindsBuilder::push`] entries to in any order.
    pub fn builder() -> EntryKindsBuilder {
        EntryKindsBuilder::default()
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name of entry `i` (in name order).
    fn name(&self, i: usize) -> &str {
        let start = match i {
            0 => 0,
            _ => self.entries[i - 1].0 as usize,
        };
        &self.names[start..self.entries[i].0 as usize]
    }

    /// The kind of the entry named `name`, if the listing holds one.
    pub fn get(&self, name: &str) -> Option<EntryKind> {
        let (mut lo, mut hi) = (0, self.entries.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.name(mid).cmp(name) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.entries[mid].1),
            }
        }
        None
    }
}

/// [`EntryKinds`] being made: entries pushed in listing order.
#[derive(Debug, Default)]
pub struct EntryKindsBuilder {
    names: String,
    /// (start, end, kind) of each name in `names`.
    entries: Vec<(u32, u32, EntryKind)>,
}

impl EntryKindsBuilder {
    /// Adds an entry; `None` when the names pass 4 GiB in all.
    pub fn push(&mut self, name: &str, kind: EntryKind) -> Option<()> {
        let start = u32::try_from(self.names.len()).ok()?;
        self.names.push_str(name);
        let end = u32::try_from(self.names.len()).ok()?;
        self.entries.push((start, end, kind));
        Some(())
    }

    /// How many entries were pushed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry was pushed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The listing, sorted by name (of two entries with the same name, the
    /// first pushed is kept).
    pub fn build(self) -> EntryKinds {
        let name = |&(s, e, _): &(u32, u32, EntryKind)| &self.names[s as usize..e as usize];
        let mut order: Vec<&(u32, u32, EntryKind)> = self.entries.iter().collect();
        order.sort_by(|a, b| name(a).cmp(name(b)));
        order.dedup_by(|b, a| name(a) == name(b));
        let mut out = EntryKinds {
            names: String::with_capacity(self.names.len()),
            entries: Vec::with_capacity(order.len()),
        };
        for e in order {
            out.names.push_str(name(e));
            out.entries.push((out.names.len() as u32, e.2));
        }
        out
    }
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
    /// The kind of each entry of folder `dir` whose name is UTF-8, in
    /// listing order, as [`System::kind_and_link`] would tell it without
    /// following a link; `None` when the folder cannot be listed, or has
    /// more than `at_most` entries (the listing stops there). The database
    /// answers questions about many files of one folder from this (one
    /// `getdents` per few hundred entries instead of an `lstat` per file).
    /// The default lists nothing: every path is asked about on its own.
    fn entry_kinds(&self, dir: &Path, at_most: usize) -> Option<EntryKinds> {
        let _ = (dir, at_most);
        None
    }
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

/// `path` opened for reading with `O_NONBLOCK` where the platform has it
/// (an open of a FIFO returns at once instead of waiting for a writer;
/// reads of a regular file ignore the flag), and `O_NOCTTY` (a terminal
/// device opened by a process without one does not become its
/// controlling terminal).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// The regular file at `path`, open for reading, with its size in bytes;
/// `Ok(None)` when there is no regular file there; `Err` (the system's
/// message) when there is one but it cannot be opened. The path is walked
/// once (the open): its kind and size come from the open file. It is
/// opened without blocking ([`open_nonblocking`]), since opening a FIFO for
/// reading waits for a writer; a regular file whose open would have waited
/// (another process holds a lease on it: Samba, an NFS server) is opened
/// again, waiting, as a plain open does. On a failed open a `stat` tells a
/// missing or special file (`None`) from a regular one (`Err`).
fn open_regular(path: &Path) -> Result<Option<(std::fs::File, u64)>, String> {
    let file = match open_nonblocking(path) {
        Ok(f) => f,
        Err(e) => match std::fs::metadata(path) {
            Ok(m) if m.is_file() && e.kind() == std::io::ErrorKind::WouldBlock => {
                std::fs::File::open(path).map_err(|e| e.to_string())?
            }
            Ok(m) if m.is_file() => return Err(e.to_string()),
            _ => return Ok(None),
        },
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(Some((file, m.len()))),
        Ok(_) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The real file system, through `std::fs`.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsSystem;

impl System for OsSystem {
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
        use std::io::Read;
        let Some((file, len)) = open_regular(path)? else {
            return Ok(None);
        };
        // The bytes the size promises, and no read to find the end after
        // them: one `read` for a small file (a file that grows meanwhile is
        // read as it was when its size was taken). A size of 0 says nothing
        // (files of `/proc`, or one still being written): read to the end.
        let take = match usize::try_from(len) {
            Ok(0) | Err(_) => limit,
            Ok(n) => n.min(limit),
        };
        let mut out = Vec::with_capacity(if len == 0 { 0 } else { take.min(1 << 20) });
        file.take(take as u64)
            .read_to_end(&mut out)
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
    fn entry_kinds(&self, dir: &Path, at_most: usize) -> Option<EntryKinds> {
        let mut out = EntryKinds::builder();
        for e in std::fs::read_dir(dir).ok()? {
            // An error partway: no listing (each path is asked about alone).
            let e = e.ok()?;
            if out.len() == at_most {
                return None;
            }
            // The type the listing gives (`d_type`; `lstat` where the file
            // system gives none); an entry whose type cannot be had is left
            // out, so it is asked about on its own.
            let (Ok(name), Ok(t)) = (e.file_name().into_string(), e.file_type()) else {
                continue;
            };
            let kind = if t.is_file() {
                EntryKind::File
            } else if t.is_dir() {
                EntryKind::Dir
            } else if t.is_symlink() {
                EntryKind::Link
            } else {
                EntryKind::Other
            };
            out.push(&name, kind)?;
        }
        Some(out.build())
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        path.canonicalize().ok()
    }
    fn current_dir(&self) -> PathBuf {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    }
    fn sha256(&self, path: &Path) -> Result<Option<String>, String> {
        // Opened as `read` opens (a FIFO is not waited on), then streamed.
        let Some((file, _)) = open_regular(path)? else {
            return Ok(None);
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `OsSystem::read` against the file kinds it meets: the exact bytes
    /// of a regular file (one smaller than the read probe, one of several
    /// pages), at most `limit` of them, nothing for what is not a regular
    /// file, and the whole of a file whose size says 0 (`/proc`).
    #[test]
    fn the_os_system_reads_regular_files_only_and_exactly() {
        let d = tempfile::tempdir().unwrap();
        let small = d.path().join("small.env.scl");
        std::fs::write(&small, b"env a {}\n").unwrap();
        let large: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let big = d.path().join("big.env.scl");
        std::fs::write(&big, &large).unwrap();
        let empty = d.path().join("empty.env.scl");
        std::fs::write(&empty, b"").unwrap();
        let os = OsSystem;
        assert_eq!(os.read(&small, 100), Ok(Some(b"env a {}\n".to_vec())));
        assert_eq!(os.read(&big, usize::MAX), Ok(Some(large.clone())));
        // One byte more than a caller accepts tells "too large".
        assert_eq!(os.read(&big, 10_001), Ok(Some(large[..10_001].to_vec())));
        assert_eq!(os.read(&small, 3), Ok(Some(b"env".to_vec())));
        assert_eq!(os.read(&empty, 100), Ok(Some(Vec::new())));
        assert_eq!(os.read(d.path(), 100), Ok(None));
        assert_eq!(os.read(&d.path().join("missing.env.scl"), 100), Ok(None));
        assert_eq!(os.read(&small.join("below"), 100), Ok(None));
        // `sha256` opens as `read` does and hashes the whole file.
        assert_eq!(os.sha256(&big), Ok(Some(scl_ir::sha256_hex(&large))));
        assert_eq!(os.sha256(d.path()), Ok(None));
        assert_eq!(os.sha256(&d.path().join("missing.env.scl")), Ok(None));
        #[cfg(unix)]
        {
            // A link is followed: to a file, its bytes; to a folder or to
            // nothing, no file.
            let link = |to: &Path, name: &str| {
                let l = d.path().join(name);
                std::os::unix::fs::symlink(to, &l).unwrap();
                l
            };
            let to_file = link(&small, "to-file.env.scl");
            assert_eq!(os.read(&to_file, 100), Ok(Some(b"env a {}\n".to_vec())));
            assert_eq!(os.read(&link(d.path(), "to-dir.env.scl"), 100), Ok(None));
            let broken = link(&d.path().join("gone"), "broken.env.scl");
            assert_eq!(os.read(&broken, 100), Ok(None));
        }
        #[cfg(target_os = "linux")]
        {
            let status = os.read(Path::new("/proc/self/status"), 1 << 20);
            let status = status.unwrap().unwrap();
            assert!(status.starts_with(b"Name:"), "{status:?}");
        }
    }

    /// A FIFO is not a regular file: `read` and `sha256` answer `None` at
    /// once instead of waiting for a writer (their open does not block).
    #[cfg(unix)]
    #[test]
    fn the_os_system_does_not_wait_on_a_fifo() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("x.env.scl");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send((OsSystem.read(&path, 100), OsSystem.sha256(&path)));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(20));
        if got.is_err() {
            // Unblock the reader before failing.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        assert_eq!(got, Ok((Ok(None), Ok(None))));
    }
}
