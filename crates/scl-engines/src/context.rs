//! The build context `sclc image build` sends to the engine: a tar archive
//! of the files the image's Dockerfile copies, by the rule of
//! [`scl_backends::context`] (the same files the image tag hashes: the
//! requirements files and the sources of `files`, relative to the workspace
//! root, less what `ignore` leaves out and the names never sent), plus the
//! Dockerfile, a `.dockerignore` that keeps sclc's own entries out of any
//! `COPY`, and the build secrets the engine mounts (Podman only, see
//! [`crate::docker`]).
//!
//! Sending only what the Dockerfile reads (rather than the whole workspace,
//! as `docker build DIR` does) keeps a large workspace — a `.venv`, data,
//! checkpoints — out of the upload.

use crate::EngineError;
use scl_backends::context::{never_sent, Ignore};
use scl_ir::EnvSpec;
use std::path::{Path, PathBuf};

/// Where the Dockerfile sits in the archive: a name no source can have
/// (names starting with `.sclc-` are never part of a context).
pub const DOCKERFILE_PATH: &str = ".sclc-build/Dockerfile";

/// The `.dockerignore` at the top of the archive: the engine reads it, and
/// it keeps sclc's own entries (the Dockerfile, the secrets Podman moves
/// out anyway, itself) out of a `COPY` of the whole context. The env's
/// `ignore` globs are applied when the archive is made, not here.
pub const DOCKERIGNORE: &str = ".sclc-build\n.sclc-secret-*\n.dockerignore\n";

/// A file of the context: its path in the archive (workspace-relative,
/// `/`-separated) and on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    pub rel: String,
    pub path: PathBuf,
}

/// The files of the build context of `spec` (not its services': each has
/// its own Dockerfile and context), sorted by path, each once. `root` is
/// the workspace root. A source that does not exist is an error naming it
/// (the engine would fail the `COPY` later, with less to go on).
pub fn files(root: &Path, spec: &EnvSpec) -> Result<Vec<ContextFile>, EngineError> {
    let ignore = Ignore::new(&spec.ignore);
    let mut out = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    if let Some(p) = &spec.python {
        sources.extend(p.requirements.iter().map(|r| r.path.clone()));
    }
    sources.extend(spec.files.iter().map(|c| {
        let from = c.from.trim_start_matches("./");
        if from == "." {
            String::new()
        } else {
            from.trim_end_matches('/').to_string()
        }
    }));
    for rel in sources {
        let path = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel)
        };
        if !path.exists() {
            return Err(EngineError::new(format!(
                "the build context has no `{rel}` (under {}): the Dockerfile copies it",
                root.display()
            )));
        }
        walk(&path, &rel, &ignore, &mut out)?;
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.dedup_by(|a, b| a.rel == b.rel);
    Ok(out)
}

fn walk(
    path: &Path,
    rel: &str,
    ignore: &Ignore,
    out: &mut Vec<ContextFile>,
) -> Result<(), EngineError> {
    if !rel.is_empty() && (ignore.ignores(rel) || never_sent(rel)) {
        return Ok(());
    }
    let meta = std::fs::metadata(path)
        .map_err(|e| EngineError::new(format!("cannot read {}: {e}", path.display())))?;
    if meta.is_file() {
        out.push(ContextFile {
            rel: rel.to_string(),
            path: path.to_path_buf(),
        });
        return Ok(());
    }
    if !meta.is_dir() {
        return Ok(());
    }
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(path)
        .map_err(|e| EngineError::new(format!("cannot read {}: {e}", path.display())))?
        .filter_map(Result::ok)
        .collect();
    if entries
        .iter()
        .any(|e| e.file_name() == scl_backends::OWN_FILE_NAMES[0])
    {
        // An output folder of sclc: not a source.
        return Ok(());
    }
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        walk(&e.path(), &child, ignore, out)?;
    }
    Ok(())
}

/// One more entry of the archive that is not a workspace file: the
/// Dockerfile, or a build secret's value.
pub struct Extra<'a> {
    /// Path in the archive (`.sclc-build/…`).
    pub rel: String,
    pub bytes: &'a [u8],
    /// Unix mode bits (`0o600` for a secret).
    pub mode: u32,
}

/// The tar archive (uncompressed, in memory) of `files` and `extras`, and
/// [`DOCKERIGNORE`] as `.dockerignore`.
/// Files keep their mode bits; owner, group and times are zeroed, so the
/// same files give the same bytes. Errors: a file that cannot be read.
pub fn archive(files: &[ContextFile], extras: &[Extra<'_>]) -> Result<Vec<u8>, EngineError> {
    let mut b = tar::Builder::new(Vec::new());
    b.mode(tar::HeaderMode::Deterministic);
    b.follow_symlinks(true);
    for f in files {
        b.append_path_with_name(&f.path, &f.rel)
            .map_err(|e| EngineError::new(format!("cannot read {}: {e}", f.path.display())))?;
    }
    let own = Extra {
        rel: ".dockerignore".into(),
        bytes: DOCKERIGNORE.as_bytes(),
        mode: 0o644,
    };
    for x in extras.iter().chain([&own]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(x.bytes.len() as u64);
        h.set_mode(x.mode);
        h.set_mtime(0);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, &x.rel, x.bytes)
            .map_err(|e| EngineError::new(format!("cannot make the build context: {e}")))?;
    }
    b.into_inner()
        .map_err(|e| EngineError::new(format!("cannot make the build context: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_the_copied_sources_without_ignored_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/pkg")).unwrap();
        std::fs::create_dir_all(root.join("src/.git")).unwrap();
        std::fs::write(root.join("src/pkg/a.py"), "a").unwrap();
        std::fs::write(root.join("src/big.ckpt"), "x").unwrap();
        std::fs::write(root.join("src/.git/HEAD"), "x").unwrap();
        std::fs::write(root.join("req.txt"), "six").unwrap();
        std::fs::write(root.join("unrelated.bin"), "x").unwrap();
        std::fs::write(root.join("src/scl.lock"), "version = 1").unwrap();
        let spec: EnvSpec = serde_json::from_value(serde_json::json!({
            "files": [{"from": "./src", "to": "/app/src"}],
            "ignore": ["*.ckpt", "**/*.ckpt"],
            "python": {"manager": "pip", "requirements": [{"path": "req.txt", "sha256": "00"}]}
        }))
        .unwrap();
        let got: Vec<String> = files(root, &spec)
            .unwrap()
            .into_iter()
            .map(|f| f.rel)
            .collect();
        assert_eq!(got, ["req.txt", "src/pkg/a.py"]);
        let bytes = archive(
            &files(root, &spec).unwrap(),
            &[Extra {
                rel: DOCKERFILE_PATH.into(),
                bytes: b"FROM x\n",
                mode: 0o644,
            }],
        )
        .unwrap();
        let mut names: Vec<String> = tar::Archive::new(&bytes[..])
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".dockerignore", DOCKERFILE_PATH, "req.txt", "src/pkg/a.py"]
        );
        let missing: EnvSpec = serde_json::from_value(serde_json::json!({
            "files": [{"from": "./nope", "to": "/app"}]
        }))
        .unwrap();
        let e = files(root, &missing).unwrap_err();
        assert!(e.0.starts_with("the build context has no `nope`"), "{e}");
    }
}
