//! Path helpers: lexical normalization and the workspace root.

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically (without touching the disk).
pub fn normalize_path(p: &Path) -> PathBuf {
    if is_normal(p) {
        return p.to_path_buf();
    }
    walk_components(p)
}

/// [`normalize_path`] by walking the components (the slow path).
fn walk_components(p: &Path) -> PathBuf {
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

/// Whether `p` is its own [`normalize_path`]: no `.` or `..` component, no
/// empty one (`a//b`) and no trailing `/` — read from the bytes, which is
/// much cheaper than walking the components (every import is resolved
/// through here). Only decided on Unix; elsewhere `false` (the slow path).
fn is_normal(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let b = p.as_os_str().as_bytes();
        if b.len() > 1 && b.ends_with(b"/") {
            return false;
        }
        !b.split(|c| *c == b'/')
            .enumerate()
            .any(|(i, seg)| seg == b"." || seg == b".." || (seg.is_empty() && i > 0))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `normalize_path` answered before its fast path: the walk.
    fn walked(p: &str) -> PathBuf {
        walk_components(Path::new(p))
    }

    /// Every path of up to 7 characters of `/`, `.` and `a` (3,280 paths):
    /// the fast path never answers differently from the walk.
    #[test]
    fn every_short_path_normalizes_as_the_walk_does() {
        let mut paths = vec![String::new()];
        let mut all = Vec::new();
        for _ in 0..7 {
            paths = paths
                .iter()
                .flat_map(|p| ['/', '.', 'a'].map(|c| format!("{p}{c}")))
                .collect();
            all.extend(paths.iter().cloned());
        }
        assert_eq!(all.len(), 3279);
        for p in std::iter::once(String::new()).chain(all) {
            assert_eq!(normalize_path(Path::new(&p)), walked(&p), "{p:?}");
        }
    }

    /// The fast path answers exactly what walking the components does.
    #[test]
    fn normal_paths_are_kept_and_others_walked() {
        for p in [
            "",
            "/",
            "a",
            "/a/b.env.scl",
            "a/b",
            "./a",
            "a/./b",
            "a/../b",
            "../a",
            "/a/..",
            "a//b",
            "a/",
            "/a/b/",
            ".",
            "..",
            "/./a",
            "a/.",
            "a/..",
            ".a/b..c/...",
            "//a",
        ] {
            assert_eq!(normalize_path(Path::new(p)), walked(p), "{p:?}");
        }
        assert!(is_normal(Path::new("/w/mod1.env.scl")));
        assert!(!is_normal(Path::new("/w/./mod1.env.scl")));
    }
}
