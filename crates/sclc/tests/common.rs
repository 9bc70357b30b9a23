//! Helpers shared by the CLI tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs the built `sclc` with `args` in `cwd`.
pub fn sclc(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("sclc runs")
}

/// Every file below `dir` (recursively, sorted) for which `keep` is true.
pub fn files_below(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(d: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        let mut es: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, keep, out);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    walk(dir, keep, &mut out);
    out
}

/// Every `*.env.scl` below `dir`, sorted.
pub fn scl_files(dir: &Path) -> Vec<PathBuf> {
    files_below(dir, &|p| p.to_string_lossy().ends_with(".env.scl"))
}

/// Whether a test that needs an outside program must fail rather than skip
/// without it: `CI` is set (to anything but `false`, `0` or empty), or one
/// of `vars` is `1`.
pub fn must_run(vars: &[&str]) -> bool {
    let ci = std::env::var("CI").unwrap_or_default();
    !matches!(ci.as_str(), "" | "0" | "false")
        || vars.iter().any(|v| std::env::var(v).as_deref() == Ok("1"))
}

/// A process's exit status, stdout and stderr, for an assertion message.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Saves `image` with `podman save` (docker-archive: its layers are
/// uncompressed tar, so a file any layer holds can be searched for) to
/// `dir/image.tar` and returns that path.
pub fn saved_image(dir: &Path, image: &str) -> PathBuf {
    let archive = dir.join("image.tar");
    let s = Command::new("podman")
        .args(["save", "--quiet", "--format", "docker-archive", "-o"])
        .arg(&archive)
        .arg(image)
        .output()
        .expect("podman runs");
    assert!(s.status.success(), "podman save: {}", text(&s));
    archive
}

/// Whether `needle` occurs in the file at `path` (read in chunks).
pub fn file_contains(path: &Path, needle: &[u8]) -> bool {
    use std::io::Read;
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return false;
        }
        carry.extend_from_slice(&buf[..n]);
        if carry.windows(needle.len()).any(|w| w == needle) {
            return true;
        }
        let keep = carry.len().min(needle.len() - 1);
        carry.drain(..carry.len() - keep);
    }
}

/// Removes the podman images named when the test ends, passed or not.
pub struct RemoveImages(pub Vec<String>);

impl Drop for RemoveImages {
    fn drop(&mut self) {
        for i in &self.0 {
            let _ = Command::new("podman").args(["rmi", "--force", i]).output();
        }
    }
}
