//! The file system of a git revision, for `sclc diff --rev REV FILE`.
//!
//! [`GitRev`] is a [`System`] that answers for the files of one commit of
//! the repository that holds FILE: the `.env.scl` file, the modules it
//! imports and the files it reads (`file("./requirements.txt")`) are all
//! taken from that commit (`git ls-tree -r -t` lists them, `git cat-file
//! blob` reads each one on first use), so the old side of a diff is what
//! the revision would have compiled to. A path outside the work tree (an
//! `--stdlib` folder elsewhere) is read from the disk.
//!
//! Errors (exit 2 in the CLI): git is not installed, FILE is not in a git
//! work tree, or REV does not name a commit.

use scl_ide::{DirEntry, OsSystem, PathKind, System};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// What a tree entry is (from its git mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A regular or executable file (modes 100644, 100755).
    Blob,
    /// A folder (mode 040000).
    Tree,
    /// A symbolic link (mode 120000): the blob holds the target.
    Link,
    /// A submodule (mode 160000): its files are in another repository,
    /// which is not read.
    Submodule,
}

#[derive(Clone, Debug)]
struct Entry {
    kind: Kind,
    oid: String,
}

/// A [`System`] reading the tree of one commit (see the module docs).
#[derive(Debug)]
pub(crate) struct GitRev {
    /// The work tree's root, canonical.
    top: PathBuf,
    /// The revision as the user wrote it (`HEAD~1`), for display.
    rev: String,
    /// Path relative to `top` → entry, for every file, link and folder.
    entries: HashMap<PathBuf, Entry>,
    /// Folder (relative to `top`, `""` the root) → its listing.
    children: BTreeMap<PathBuf, Vec<DirEntry>>,
    /// Blob id → bytes, read once.
    blobs: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    /// The current folder, canonical.
    cwd: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    // The repository is the one that holds the file: variables a hook or
    // a caller set for another repository (GIT_DIR relative to some
    // folder) must not pick it.
    let out = Command::new("git")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_NAMESPACE")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git ({e}): `--rev` needs git on PATH"))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(msg.trim().to_string());
    }
    Ok(out.stdout)
}

impl GitRev {
    /// The tree of `rev` in the repository that holds `file` (relative to
    /// the current folder, or absolute). Runs `git rev-parse` and one `git
    /// ls-tree`.
    pub(crate) fn open(file: &Path, rev: &str) -> Result<GitRev, String> {
        let cwd = std::env::current_dir()
            .and_then(|c| c.canonicalize())
            .map_err(|e| format!("the current folder cannot be read ({e})"))?;
        let abs = scl_ide::normalize_path(&cwd.join(file));
        if abs.is_dir() {
            return Err(format!(
                "{} is a folder, not a file: give one `.env.scl` file",
                file.display()
            ));
        }
        let dir = abs
            .parent()
            .filter(|d| d.is_dir())
            .ok_or_else(|| format!("no such folder: {}", abs.display()))?;
        let top = git(dir, &["rev-parse", "--show-toplevel"])
            .map_err(|e| format!("{} is not in a git work tree: {e}", file.display()))?;
        let top = PathBuf::from(String::from_utf8_lossy(&top).trim_end_matches('\n'));
        let top = top.canonicalize().unwrap_or(top);
        if rev.starts_with('-') {
            return Err(format!("`{rev}` is not a revision"));
        }
        let commit = git(
            &top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .map_err(|_| format!("`{rev}` does not name a commit of {}", top.display()))?;
        let commit = String::from_utf8_lossy(&commit).trim().to_string();
        let listing = git(&top, &["ls-tree", "-r", "-t", "-z", "--full-tree", &commit])?;
        let mut entries = HashMap::new();
        let mut children: BTreeMap<PathBuf, Vec<DirEntry>> = BTreeMap::new();
        children.insert(PathBuf::new(), Vec::new());
        for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            // `<mode> SP <type> SP <object> TAB <path>`
            let Some(tab) = record.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let (head, path) = (&record[..tab], &record[tab + 1..]);
            let (Ok(head), Ok(path)) = (std::str::from_utf8(head), std::str::from_utf8(path))
            else {
                continue; // names that are not UTF-8 are not listed
            };
            let mut words = head.split(' ');
            let (Some(mode), Some(_), Some(oid)) = (words.next(), words.next(), words.next())
            else {
                continue;
            };
            let kind = match mode {
                "040000" => Kind::Tree,
                "120000" => Kind::Link,
                "100644" | "100755" => Kind::Blob,
                "160000" => Kind::Submodule,
                _ => continue,
            };
            let rel = PathBuf::from(path);
            let parent = rel.parent().map(Path::to_path_buf).unwrap_or_default();
            let name = rel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            children.entry(parent).or_default().push(DirEntry {
                name,
                is_dir: kind == Kind::Tree,
                is_link: kind == Kind::Link,
            });
            if kind == Kind::Tree {
                children.entry(rel.clone()).or_default();
            }
            entries.insert(
                rel,
                Entry {
                    kind,
                    oid: oid.to_string(),
                },
            );
        }
        for list in children.values_mut() {
            list.sort();
        }
        Ok(GitRev {
            top,
            rev: rev.to_string(),
            entries,
            children,
            blobs: Mutex::new(HashMap::new()),
            cwd,
        })
    }

    /// `path` relative to the work tree's root, if it is inside it: as
    /// given, or once the folders it names on disk are resolved (a path
    /// through a symbolic link to the work tree, `/tmp` on macOS).
    fn rel(&self, path: &Path) -> Option<PathBuf> {
        if let Ok(r) = path.strip_prefix(&self.top) {
            return Some(r.to_path_buf());
        }
        let mut base = path;
        let mut rest = Vec::new();
        while let Some(parent) = base.parent() {
            rest.push(base.file_name()?.to_os_string());
            base = parent;
            if let Ok(c) = base.canonicalize() {
                let mut full = c;
                full.extend(rest.iter().rev());
                return full.strip_prefix(&self.top).ok().map(Path::to_path_buf);
            }
        }
        None
    }

    /// The submodule `rel` is inside (or is), if any.
    fn submodule_of<'p>(&self, rel: &'p Path) -> Option<&'p Path> {
        rel.ancestors().find(|a| {
            self.entries
                .get(*a)
                .is_some_and(|e| e.kind == Kind::Submodule)
        })
    }

    /// The revision as written.
    pub(crate) fn rev(&self) -> &str {
        &self.rev
    }

    /// How `file` (as given on the command line) is shown: `REV:path/in/repo`.
    pub(crate) fn shown_file(&self, file: &Path) -> String {
        self.shown(&scl_ide::normalize_path(&self.cwd.join(file)))
    }

    /// How a file of this tree is shown: `REV:path/in/repo`.
    pub(crate) fn shown(&self, path: &Path) -> String {
        match self.rel(path) {
            Some(rel) => format!("{}:{}", self.rev, rel.display()),
            None => path.display().to_string(),
        }
    }

    fn blob(&self, oid: &str) -> Result<Arc<Vec<u8>>, String> {
        let mut blobs = self.blobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = blobs.get(oid) {
            return Ok(b.clone());
        }
        let bytes = Arc::new(git(&self.top, &["cat-file", "blob", oid])?);
        blobs.insert(oid.to_string(), bytes.clone());
        Ok(bytes)
    }

    /// `rel` with every link resolved (at most 40), relative to the top;
    /// `None` when it leaves the tree or a link cannot be read.
    fn resolve(&self, rel: &Path) -> Option<PathBuf> {
        let mut out = PathBuf::new();
        let mut hops = 0;
        let mut rest: Vec<PathBuf> = rel
            .components()
            .rev()
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect();
        while let Some(part) = rest.pop() {
            match part.components().next() {
                Some(Component::ParentDir) => {
                    if !out.pop() {
                        return None;
                    }
                    continue;
                }
                Some(Component::CurDir) | None => continue,
                _ => {}
            }
            out.push(&part);
            if let Some(Entry {
                kind: Kind::Link,
                oid,
            }) = self.entries.get(&out)
            {
                hops += 1;
                if hops > 40 {
                    return None;
                }
                let target = self.blob(oid).ok()?;
                let target = PathBuf::from(String::from_utf8_lossy(&target).into_owned());
                if target.is_absolute() {
                    return None;
                }
                out.pop();
                rest.extend(
                    target
                        .components()
                        .rev()
                        .map(|c| PathBuf::from(c.as_os_str())),
                );
            }
        }
        Some(out)
    }

    /// The kind of what `rel` resolves to.
    fn kind_of(&self, rel: &Path) -> Option<(PathBuf, Kind)> {
        let r = self.resolve(rel)?;
        if r.as_os_str().is_empty() {
            return Some((r, Kind::Tree));
        }
        let kind = self.entries.get(&r)?.kind;
        Some((r, kind))
    }
}

impl System for GitRev {
    fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
        let Some(rel) = self.rel(path) else {
            return OsSystem.read(path, limit);
        };
        if let Some(sub) = self.submodule_of(&rel) {
            return Err(format!(
                "it is in the git submodule `{}`, whose files `sclc diff --rev` does not read (it compares the superproject's files only)",
                sub.display()
            ));
        }
        match self.kind_of(&rel) {
            Some((r, Kind::Blob)) => {
                let oid = &self.entries[&r].oid;
                let bytes = self.blob(oid)?;
                Ok(Some(bytes[..bytes.len().min(limit)].to_vec()))
            }
            _ => Ok(None),
        }
    }
    fn kind(&self, path: &Path) -> PathKind {
        let Some(rel) = self.rel(path) else {
            return OsSystem.kind(path);
        };
        if self.submodule_of(&rel).is_some_and(|s| s != rel) {
            // Reading it says why it cannot be read.
            return PathKind::File;
        }
        match self.kind_of(&rel) {
            Some((_, Kind::Blob)) => PathKind::File,
            Some((_, Kind::Tree)) => PathKind::Dir,
            _ => PathKind::Missing,
        }
    }
    fn is_link(&self, path: &Path) -> bool {
        let Some(rel) = self.rel(path) else {
            return OsSystem.is_link(path);
        };
        self.entries.get(&rel).is_some_and(|e| e.kind == Kind::Link)
    }
    fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
        let Some(rel) = self.rel(path) else {
            return OsSystem.read_dir(path);
        };
        let (r, kind) = self.kind_of(&rel)?;
        (kind == Kind::Tree).then(|| self.children.get(&r).cloned().unwrap_or_default())
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        let Some(rel) = self.rel(path) else {
            return OsSystem.canonicalize(path);
        };
        if self.submodule_of(&rel).is_some() {
            return Some(self.top.join(rel));
        }
        let (r, _) = self.kind_of(&rel)?;
        Some(self.top.join(r))
    }
    fn current_dir(&self) -> PathBuf {
        self.cwd.clone()
    }
}
