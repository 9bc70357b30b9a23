//! Path helpers: lexical normalization and the workspace root.

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically (without touching the disk).
pub fn normalize_path(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The workspace root of a file named on the command line: the nearest
/// ancestor folder holding `scl.toml`, else the file's folder
/// (`design/language.md`, "Design principles"). Reads the disk; see
/// [`find_workspace_root_in`].
pub fn find_workspace_root(file: &Path) -> PathBuf {
    find_workspace_root_in(&crate::OsSystem, file)
}

/// [`find_workspace_root`] through `system` (a relative `file` is taken from
/// its current folder). The root decides which database a file belongs to,
/// so it is found before any database exists, not through one.
pub fn find_workspace_root_in(system: &dyn crate::System, file: &Path) -> PathBuf {
    use crate::PathKind;
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        system.current_dir().join(file)
    };
    let abs = normalize_path(&abs);
    let start = if system.kind(&abs) == PathKind::Dir {
        abs.clone()
    } else {
        abs.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut cur = Some(start.as_path());
    while let Some(d) = cur {
        if system.kind(&d.join("scl.toml")) == PathKind::File {
            return d.to_path_buf();
        }
        cur = d.parent();
    }
    start
}
