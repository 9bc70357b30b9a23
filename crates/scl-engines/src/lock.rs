//! `scl.lock`: the images `sclc image build` made from the envs of the
//! `.env.scl` files of one folder, kept beside them (commit it).
//!
//! The format (TOML; `version` 1):
//!
//! ```toml
//! # Written by `sclc image build`; do not edit. See the book's "scl.lock".
//! version = 1
//!
//! [[image]]
//! file = "train.env.scl"          # the source, relative to this folder
//! env = "bert_train"
//! service = "webui"               # only for a service's image
//! reference = "bert_train:0123456789abcdef"
//! tag = "0123456789abcdef"        # SHA-256 of the IR and the build context, first 16 hex digits
//! id = "sha256:…"                 # the image ID the engine gave
//! digest = "127.0.0.1:5000/bert_train@sha256:…"   # only after --push
//! ```
//!
//! Entries are sorted by file, env and service; one per (file, env,
//! service): a new build replaces the old entry. The file is written
//! whole to a temporary file in the same folder and renamed over the old
//! one, so a reader sees the old or the new lock, never half of one.
//!
//! `sclc check --locked` requires, for every env with an image, an entry
//! whose `tag` is the tag the env has now: any change to the env or to a
//! file its image copies gives a new tag, which the lock does not pin.

use crate::EngineError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The lock file's name.
pub const FILE_NAME: &str = "scl.lock";

/// The format version this code reads and writes.
pub const VERSION: u32 = 1;

/// One built image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The source file, relative to the lock's folder (`/`-separated).
    pub file: String,
    pub env: String,
    /// The service of the env whose image this is, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// `<repository>:<tag>` as built.
    pub reference: String,
    /// The tag: the first 16 hex digits of SHA-256 over the IR and the
    /// build context (`scl_backends::LowerCx::image`).
    pub tag: String,
    /// The engine's image ID (`sha256:` and 64 hex digits).
    pub id: String,
    /// `<repository>@sha256:…` in the registry, after `--push`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// A whole `scl.lock`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub version: u32,
    #[serde(default, rename = "image")]
    pub images: Vec<Entry>,
}

/// The lock file of folder `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

impl Lock {
    /// Reads `path`; a missing file is an empty lock. Errors: the file
    /// cannot be read, is not TOML of this format, or has another version.
    pub fn read(path: &Path) -> Result<Lock, EngineError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Lock {
                    version: VERSION,
                    images: Vec::new(),
                })
            }
            Err(e) => {
                return Err(EngineError::new(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        };
        Lock::parse(&text).map_err(|e| EngineError::new(format!("{}: {e}", path.display())))
    }

    /// Parses the text of a lock file.
    pub fn parse(text: &str) -> Result<Lock, String> {
        let lock: Lock = toml::from_str(text).map_err(|e| {
            format!(
                "not an scl.lock: {}",
                e.message().lines().next().unwrap_or("")
            )
        })?;
        if lock.version != VERSION {
            return Err(format!(
                "scl.lock version {} is not {VERSION}, the version this sclc reads",
                lock.version
            ));
        }
        Ok(lock)
    }

    /// The text written to disk (a header comment, then the TOML).
    pub fn to_text(&self) -> String {
        let mut sorted = self.clone();
        sorted.version = VERSION;
        sorted
            .images
            .sort_by(|a, b| (&a.file, &a.env, &a.service).cmp(&(&b.file, &b.env, &b.service)));
        let body = toml::to_string(&sorted).expect("the lock serializes");
        format!(
            "# Written by `sclc image build`; do not edit. See the book's \"scl.lock\".\n{body}"
        )
    }

    /// The entry of (`file`, `env`, `service`), if any.
    pub fn find(&self, file: &str, env: &str, service: Option<&str>) -> Option<&Entry> {
        self.images
            .iter()
            .find(|e| e.file == file && e.env == env && e.service.as_deref() == service)
    }

    /// Adds `entry`, replacing the entry of the same file, env and service.
    /// A rebuild of the same image (same reference and ID) without a push
    /// keeps the digest recorded by an earlier push.
    pub fn upsert(&mut self, mut entry: Entry) {
        if entry.digest.is_none() {
            if let Some(old) = self.find(&entry.file, &entry.env, entry.service.as_deref()) {
                if old.reference == entry.reference && old.id == entry.id {
                    entry.digest = old.digest.clone();
                }
            }
        }
        self.images.retain(|e| {
            !(e.file == entry.file && e.env == entry.env && e.service == entry.service)
        });
        self.images.push(entry);
    }

    /// Writes the lock to `path` atomically: a temporary file in the same
    /// folder, flushed to disk, given the old file's permissions (`0644`
    /// less the umask for a new one: a lock is shared, like the source),
    /// renamed over `path`.
    pub fn write(&self, path: &Path) -> Result<(), EngineError> {
        use std::os::unix::fs::PermissionsExt;
        let dir = path.parent().unwrap_or(Path::new("."));
        let fail =
            |e: std::io::Error| EngineError::new(format!("cannot write {}: {e}", path.display()));
        let mut tmp = tempfile::Builder::new()
            .prefix(".sclc-tmp-lock")
            .tempfile_in(dir)
            .map_err(fail)?;
        use std::io::Write;
        tmp.write_all(self.to_text().as_bytes()).map_err(fail)?;
        let mode = match std::fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => 0o644 & !umask(),
        };
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(fail)?;
        tmp.as_file().sync_all().map_err(fail)?;
        tmp.persist(path).map_err(|e| fail(e.error))?;
        Ok(())
    }

    /// Reads the lock at `path`, lets `f` change it and writes it back
    /// ([`Lock::write`]), holding an exclusive `flock` on the lock's folder
    /// meanwhile: builds that finish at the same time in one folder each
    /// add their entry, none lost (the rename alone would keep the last
    /// writer's). Errors: as for [`Lock::read`] and [`Lock::write`], or the
    /// folder cannot be locked.
    pub fn update(path: &Path, f: impl FnOnce(&mut Lock)) -> Result<(), EngineError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let fail = |e: std::io::Error| {
            EngineError::new(format!(
                "cannot lock {} to update {}: {e}",
                dir.display(),
                FILE_NAME
            ))
        };
        let folder = std::fs::File::open(dir).map_err(fail)?;
        rustix::fs::flock(&folder, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| fail(e.into()))?;
        let mut lock = Lock::read(path)?;
        f(&mut lock);
        let written = lock.write(path);
        let _ = rustix::fs::flock(&folder, rustix::fs::FlockOperation::Unlock);
        written
    }
}

/// The process's umask (read by setting it and setting it back).
fn umask() -> u32 {
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(old);
    old.as_raw_mode()
}

/// The tag of a reference `<repository>:<tag>` (the part after the last
/// `:` that is not in the host).
pub fn tag_of(reference: &str) -> &str {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    last.rsplit_once(':').map_or("", |(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(env: &str, tag: &str) -> Entry {
        Entry {
            file: "train.env.scl".into(),
            env: env.into(),
            service: None,
            reference: format!("{env}:{tag}"),
            tag: tag.into(),
            id: format!("sha256:{}", "a".repeat(64)),
            digest: None,
        }
    }

    #[test]
    fn round_trips_sorted_and_replaces_by_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        let mut lock = Lock::read(&path).unwrap();
        assert!(lock.images.is_empty());
        lock.upsert(entry("zeta", "1111111111111111"));
        lock.upsert(entry("alpha", "2222222222222222"));
        lock.upsert(entry("zeta", "3333333333333333"));
        lock.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        insta::assert_snapshot!(text);
        let back = Lock::read(&path).unwrap();
        assert_eq!(back.images.len(), 2);
        assert_eq!(back.images[0].env, "alpha");
        assert_eq!(
            back.find("train.env.scl", "zeta", None).unwrap().tag,
            "3333333333333333"
        );
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(FILE_NAME)]);
    }

    #[test]
    fn a_rebuild_without_push_keeps_the_pushed_digest_of_the_same_image() {
        let mut lock = Lock::default();
        let mut pushed = entry("app", "1111111111111111");
        pushed.digest = Some(format!("app@sha256:{}", "b".repeat(64)));
        lock.upsert(pushed.clone());
        lock.upsert(entry("app", "1111111111111111"));
        assert_eq!(lock.images, [pushed.clone()]);
        // Another image (a new tag) has no digest until it is pushed.
        lock.upsert(entry("app", "2222222222222222"));
        assert_eq!(lock.images[0].digest, None);
    }

    /// Updates at the same time from many threads each add their entry.
    #[test]
    fn concurrent_updates_lose_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        std::thread::scope(|s| {
            for i in 0..16 {
                let path = &path;
                s.spawn(move || {
                    Lock::update(path, |l| {
                        l.upsert(entry(&format!("env{i:02}"), "1111111111111111"))
                    })
                    .unwrap()
                });
            }
        });
        assert_eq!(Lock::read(&path).unwrap().images.len(), 16);
    }

    #[test]
    fn a_new_lock_is_readable_by_others_and_an_old_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        Lock::update(&path, |l| l.upsert(entry("a", "1111111111111111"))).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644 & !umask());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        Lock::update(&path, |l| l.upsert(entry("b", "1111111111111111"))).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o664
        );
    }

    #[test]
    fn refuses_other_versions_and_other_text() {
        assert!(Lock::parse("version = 2\n")
            .unwrap_err()
            .contains("version 2 is not 1"));
        assert!(Lock::parse("hello")
            .unwrap_err()
            .starts_with("not an scl.lock"));
        assert!(Lock::parse("version = 1\n[[image]]\nfile = \"a\"\n")
            .unwrap_err()
            .starts_with("not an scl.lock"));
    }

    #[test]
    fn tags_of_references() {
        assert_eq!(tag_of("bert:0123"), "0123");
        assert_eq!(tag_of("127.0.0.1:5000/team/bert:0123"), "0123");
        assert_eq!(tag_of("127.0.0.1:5000/team/bert"), "");
    }
}
