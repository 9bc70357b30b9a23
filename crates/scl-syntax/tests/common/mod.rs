//! What several of this crate's tests share: the repository root and its
//! `.scl` files.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.scl` file under the given folders of the repository (paths
/// relative to the root), sorted; `target` and `node_modules` folders are
/// skipped.
pub fn scl_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = root();
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with("target") && !p.ends_with("node_modules") {
                    stack.push(p);
                }
            } else if p.to_string_lossy().ends_with(".scl") {
                out.push(p.strip_prefix(&root).unwrap_or(&p).to_path_buf());
            }
        }
    }
    out.sort();
    out
}
