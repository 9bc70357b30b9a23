//! A fuzz case: a small workspace (files by relative path) and the file to
//! compile.

use std::path::{Path, PathBuf};

/// One input of the harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Where it came from: `gen`, `mutate:<corpus file>`, `hostile:<shape>`.
    pub label: String,
    /// The file to compile, relative to the workspace root (`/`-separated).
    pub main: String,
    /// Every file of the workspace: relative path → bytes. `scl.toml` is
    /// added when written, so the folder is the workspace root.
    pub files: Vec<(String, Vec<u8>)>,
}

impl Case {
    /// A workspace of one file, `main.env.scl`.
    pub fn single(label: impl Into<String>, text: impl Into<Vec<u8>>) -> Case {
        Case {
            label: label.into(),
            main: "main.env.scl".into(),
            files: vec![("main.env.scl".into(), text.into())],
        }
    }

    /// The bytes of the main file.
    pub fn main_text(&self) -> &[u8] {
        self.files
            .iter()
            .find(|(p, _)| *p == self.main)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[])
    }

    /// Total bytes of the `.env.scl` files (what the time and memory
    /// budgets scale with).
    pub fn size(&self) -> usize {
        self.files
            .iter()
            .filter(|(p, _)| p.ends_with(".env.scl"))
            .map(|(_, b)| b.len())
            .sum()
    }

    /// Writes the workspace into `dir` (created; it should be empty) and
    /// returns the absolute path of the main file.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        if !self.files.iter().any(|(p, _)| p == "scl.toml") {
            std::fs::write(dir.join("scl.toml"), "")?;
        }
        for (rel, bytes) in &self.files {
            let p = dir.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&p, bytes)?;
        }
        Ok(dir.join(&self.main))
    }

    /// Reads a case back from a workspace folder written by [`Case::write_to`]
    /// (or any folder: every file below it, hidden ones and `scl.toml`
    /// included, except files larger than 64 MiB).
    pub fn read_from(dir: &Path, main: &str, label: &str) -> std::io::Result<Case> {
        let mut files = Vec::new();
        read_tree(dir, dir, &mut files)?;
        files.sort();
        Ok(Case {
            label: label.into(),
            main: main.into(),
            files,
        })
    }
}

fn read_tree(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        let t = e.file_type()?;
        if t.is_dir() {
            read_tree(root, &p, out)?;
        } else if t.is_file() && e.metadata()?.len() <= 64 << 20 {
            let rel = p
                .strip_prefix(root)
                .expect("below root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(&p)?));
        }
    }
    Ok(())
}
