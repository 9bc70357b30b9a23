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

/// A map keyed by paths that compares them as [`Path`] does (component by
/// component: `/w//a`, `/w/./a` and `/w/a/` are `/w/a`) but hashes and
/// compares bytes: a key is stored in its component form, and a lookup
/// rebuilds that form only for a path with a doubled separator, a `.`
/// component after the first or a trailing separator. `Path`'s own hash
/// walks the components (about 2,000 instructions for a 40-byte path), and
/// the registry looks paths up several times per module.
#[derive(Debug)]
pub(crate) struct PathMap<V> {
    map: rustc_hash::FxHashMap<std::ffi::OsString, V>,
}

impl<V> Default for PathMap<V> {
    fn default() -> Self {
        PathMap {
            map: Default::default(),
        }
    }
}

/// `p` in its component form (what `p.components().collect::<PathBuf>()`
/// gives): `p` itself unless it has a doubled separator, a `.` component
/// after the first, or a trailing separator (Unix paths; elsewhere always
/// rebuilt).
fn component_form(p: &Path) -> std::borrow::Cow<'_, Path> {
    #[cfg(unix)]
    {
        // One look after each separator: a separator, a `.` that ends a
        // component, or the end (a trailing separator; `/` alone is plain).
        let b = p.as_os_str().as_encoded_bytes();
        let plain = b.iter().enumerate().all(|(i, &c)| {
            c != b'/'
                || match b.get(i + 1) {
                    None => b.len() == 1,
                    Some(b'/') => false,
                    Some(b'.') => !matches!(b.get(i + 2), None | Some(b'/')),
                    Some(_) => true,
                }
        });
        if plain {
            return std::borrow::Cow::Borrowed(p);
        }
    }
    std::borrow::Cow::Owned(p.components().collect())
}

impl<V> PathMap<V> {
    /// The value of `path`.
    pub(crate) fn get(&self, path: &Path) -> Option<&V> {
        self.map.get(component_form(path).as_os_str())
    }

    /// True when `path` has a value.
    pub(crate) fn contains_key(&self, path: &Path) -> bool {
        self.get(path).is_some()
    }

    /// Sets the value of `path`; the value it had.
    pub(crate) fn insert(&mut self, path: &Path, v: V) -> Option<V> {
        self.map
            .insert(component_form(path).into_owned().into_os_string(), v)
    }

    /// Room for `n` more paths.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.map.reserve(n);
    }

    /// Drops the value of `path`; the value it had.
    pub(crate) fn remove(&mut self, path: &Path) -> Option<V> {
        self.map.remove(component_form(path).as_os_str())
    }

    /// Every path with a value (in their component form), in no order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Path> {
        self.map.keys().map(Path::new)
    }
}

#[cfg(test)]
mod path_map_tests {
    use super::PathMap;
    use std::path::Path;

    /// `component_form(p)` is what collecting `p`'s components gives.
    fn assert_component_form(p: &str) {
        assert_eq!(
            super::component_form(Path::new(p)).as_os_str(),
            Path::new(p)
                .components()
                .collect::<std::path::PathBuf>()
                .as_os_str(),
            "{p}"
        );
    }

    #[test]
    fn keys_compare_as_paths_do() {
        // Every spelling `Path` calls equal finds the same entry, and each
        // is its own component form or is rebuilt to it.
        let same = [
            "/w/a.env.scl",
            "/w//a.env.scl",
            "//w/a.env.scl",
            "/w/./a.env.scl",
            "/w/a.env.scl/",
            "/w/a.env.scl/.",
            "/w/a.env.scl//",
        ];
        for p in same {
            assert_eq!(Path::new(p), Path::new(same[0]), "{p}");
            assert_component_form(p);
        }
        let mut m: PathMap<u32> = PathMap::default();
        assert_eq!(m.insert(Path::new(same[1]), 1), None);
        for p in same {
            assert_eq!(m.get(Path::new(p)), Some(&1), "{p}");
        }
        assert_eq!(m.insert(Path::new(same[4]), 2), Some(1));
        assert_eq!(m.keys().collect::<Vec<_>>(), [Path::new(same[0])]);
        for p in ["", "..", "./", ".//a", "a/.b", "a/..", "./.", "/./a", "/."] {
            assert_component_form(p);
        }
        // Paths `Path` tells apart stay apart: `..` is not resolved, a
        // leading `.` is kept, case counts.
        for p in [
            "/w/x/../a.env.scl",
            "./w/a.env.scl",
            "w/a.env.scl",
            "/w/A.env.scl",
            "/",
            ".",
        ] {
            assert_ne!(Path::new(p), Path::new(same[0]), "{p}");
            assert_eq!(m.get(Path::new(p)), None, "{p}");
            assert_component_form(p);
        }
        assert_eq!(m.remove(Path::new("/w/./a.env.scl")), Some(2));
        assert!(!m.contains_key(Path::new(same[0])));
    }
}
