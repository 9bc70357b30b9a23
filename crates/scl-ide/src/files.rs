//! Which files a command works on: `*.env.scl` files below folders.

use crate::{DirEntry, PathKind, System};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why [`collect_files`] found nothing to work on. The message of each is
/// the CLI's usage error (`Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CollectError {
    /// A file named is not a `*.env.scl` file.
    NotScl(PathBuf),
    /// A path named does not exist.
    Missing(PathBuf),
    /// No `*.env.scl` file in any of the paths named.
    Empty(Vec<PathBuf>),
}

impl std::fmt::Display for CollectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CollectError::NotScl(p) => write!(f, "{} is not a `.env.scl` file", p.display()),
            CollectError::Missing(p) => write!(f, "no such file or folder: {}", p.display()),
            CollectError::Empty(ps) => {
                let shown: Vec<String> = ps.iter().map(|p| p.display().to_string()).collect();
                write!(f, "no `.env.scl` file in {}", shown.join(", "))
            }
        }
    }
}

/// The files `sclc check` and `sclc fmt` work on, as the user named them
/// (relative paths stay relative): each file named (it must be a
/// `*.env.scl` file), and every `*.env.scl` below each folder named
/// (default `.`), sorted per folder, links not followed, hidden folders,
/// `target` and `node_modules` skipped. Reads through `system` (before any
/// database exists: the files decide which workspaces there are).
pub fn collect_files(system: &dyn System, paths: &[PathBuf]) -> Result<Vec<PathBuf>, CollectError> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let cwd = system.current_dir();
    let abs = |p: &Path| scl_db::normalize_path(&cwd.join(p));
    let mut out = Vec::new();
    for p in &paths {
        match system.kind(&abs(p)) {
            PathKind::File => {
                if !p.to_string_lossy().ends_with(".env.scl") {
                    return Err(CollectError::NotScl(p.clone()));
                }
                out.push(p.clone());
            }
            PathKind::Dir => {
                let list = |d: &Path| system.read_dir(&abs(d)).map(Arc::from);
                let mut found = Vec::new();
                walk(&list, p, &mut found);
                // Only regular files: a FIFO, socket or device named
                // `*.env.scl` is not read (opening a FIFO would block).
                out.extend(
                    found
                        .into_iter()
                        .filter(|f| system.kind(&abs(f)) == PathKind::File),
                );
            }
            PathKind::Missing => return Err(CollectError::Missing(p.clone())),
        }
    }
    if out.is_empty() {
        return Err(CollectError::Empty(paths));
    }
    Ok(out)
}

/// The `*.env.scl` files below `dir` (joined to `dir` as given), sorted,
/// not following links, skipping hidden folders, `target` and
/// `node_modules`; `list` gives a folder's entries. Recurses once per level
/// of folders (bounded by the system's path length).
pub(crate) fn walk(
    list: &dyn Fn(&Path) -> Option<Arc<[DirEntry]>>,
    dir: &Path,
    out: &mut Vec<PathBuf>,
) {
    let Some(entries) = list(dir) else { return };
    let mut entries: Vec<&DirEntry> = entries.iter().collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in entries {
        // Links are not followed: they could lead out of the tree.
        if e.is_link {
            continue;
        }
        let p = dir.join(&e.name);
        if e.is_dir {
            if !e.name.starts_with('.') && e.name != "target" && e.name != "node_modules" {
                walk(list, &p, out);
            }
        } else if e.name.ends_with(".env.scl") {
            out.push(p);
        }
    }
}
