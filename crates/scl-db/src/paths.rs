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
/// (`design/language.md`, "Design principles").
pub fn find_workspace_root(file: &Path) -> PathBuf {
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(file)
    };
    let abs = normalize_path(&abs);
    let start = if abs.is_dir() {
        abs.clone()
    } else {
        abs.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut cur = Some(start.as_path());
    while let Some(d) = cur {
        if d.join("scl.toml").is_file() {
            return d.to_path_buf();
        }
        cur = d.parent();
    }
    start
}
