//! Writing `sclc build` outputs so that a kill at any moment leaves every env
//! folder whole.
//!
//! # Layout of `--out DIR`
//! - `DIR/<env>/` — one folder per env with all of its artifacts (a
//!   `Dockerfile`, its `.dockerignore`, `<service>/Dockerfile` …) and the
//!   marker file [`MARKER`]. Only folders that hold the marker are ever
//!   replaced; anything else makes the build fail before a byte is written.
//! - The lock: a build holds an exclusive lock ([`std::fs::File::lock`]:
//!   `flock(2)` on Unix, `LockFileEx` on Windows) while it works in `DIR`,
//!   so two builds into one folder take turns. On Unix the lock is on the
//!   folder `DIR` itself (no extra file); elsewhere on `DIR/.sclc-lock`, an
//!   empty file that is never deleted (deleting a lock file would let two
//!   processes lock two different files).
//! - `DIR/.sclc-tmp-XXXXXX/` — the staging folder of the build that holds
//!   the lock: [`STAGING_MARKER`], `new/<env>/` (the envs being written) and
//!   `old/<env>/` (envs moved out of the way by the fallback swap).
//!
//! # The swap
//! Every env is first written whole into `new/<env>/`. Then each env is
//! swapped into place with one atomic step:
//! - `DIR/<env>` does not exist: `rename(new/<env>, DIR/<env>)`;
//! - it exists, on Linux: `renameat2(new/<env>, DIR/<env>, RENAME_EXCHANGE)`
//!   (kernel ≥ 3.15; ext4, xfs, btrfs, tmpfs and most others support it —
//!   see renameat2(2)), which exchanges the two folders in one step, so
//!   `DIR/<env>` is at every moment either the old or the new folder;
//! - elsewhere, or where the file system refuses the exchange (`EINVAL`,
//!   `ENOSYS`…): the fallback moves the old folder to `old/<env>` and the new
//!   one into place — two renames, between which `DIR/<env>` is missing; the
//!   old folder is then in the staging folder, and the next build puts it
//!   back (see below), so after that recovery the env is again whole.
//!
//! If a step fails with an error (not a kill), the envs already swapped are
//! swapped back, so a failed build leaves the previous outputs. Files are not
//! `fsync`ed: the guarantee holds for a killed process, not for a power cut.
//!
//! # Recovery
//! Every build, once it holds the lock, looks for staging folders left by
//! builds that were killed (no live build can own one: the owner would hold
//! the lock). For each folder that sclc wrote — it holds [`STAGING_MARKER`],
//! or it has the layout of the staging folders of earlier sclc versions
//! (only `new/` and `old/`, whose every folder holds [`MARKER`]), or it is
//! empty — every `old/<env>` whose `DIR/<env>` is missing is moved back, and
//! the folder is removed. A folder named like a staging folder that sclc did
//! not write is left alone, with a note.
//!
//! # Failpoints (debug builds only)
//! For the tests, `SCLC_FAILPOINT=N` aborts the process (as a kill would: no
//! destructor runs) right after the N-th step of a build's write (1-based;
//! each step is named on stderr when it aborts), and
//! `SCLC_RENAME_FALLBACK=1` uses the two-rename swap even where the exchange
//! works. Release builds read neither variable.

use std::fs::{self, File};
use std::io::{self, Error, ErrorKind};
use std::path::{Path, PathBuf};

/// The file that marks an env folder as written by sclc, so that a later
/// build may replace it — and never a folder of the user's. The first of
/// the backends' [`scl_backends::OWN_FILE_NAMES`], which no service or env
/// may be named after.
pub const MARKER: &str = scl_backends::OWN_FILE_NAMES[0];

/// The file that marks a staging folder as sclc's (written first, removed last).
pub const STAGING_MARKER: &str = ".sclc-staging";

/// The name prefix of staging folders.
pub const TMP_PREFIX: &str = ".sclc-tmp-";

/// The lock file's name inside the output folder (not on Unix, where the
/// folder itself is locked).
#[cfg(not(unix))]
pub const LOCK_FILE: &str = ".sclc-lock";

const MARKER_TEXT: &str = "Written by sclc build; replaced on every build. Do not edit.\n";
const STAGING_TEXT: &str =
    "A build of sclc in progress, or interrupted; the next build removes it.\n";

/// Writes every env's artifacts under `out/<env>/` so that each env folder
/// is, at every moment, either wholly its previous version or wholly the new
/// one (see the module doc), after recovering what killed builds left.
///
/// `lowered` is the list of (env name, lowered artifacts); env names are
/// identifiers, artifact paths are relative (`Dockerfile`,
/// `webui/Dockerfile`). A file of the old `out/<env>/` (two levels deep at
/// most) that `lowered` does not write and `keep` accepts (its relative
/// path: the file of another target than the ones built) is copied into the
/// new folder, so the swap keeps it. Returns the paths written
/// (`out/<env>/<artifact>`), in order; kept files are not listed.
///
/// # Errors
/// - `AlreadyExists` when an `out/<env>` exists that sclc did not write
///   (no [`MARKER`] in a real folder): nothing is written then;
/// - any I/O error of the writes or renames: the envs already swapped are
///   swapped back first.
pub fn write_atomically(
    out: &Path,
    lowered: &[(String, scl_backends::Lowered)],
    keep: &dyn Fn(&str) -> bool,
) -> io::Result<Vec<PathBuf>> {
    // Fail fast, before anything is created (checked again under the lock).
    refuse_foreign(out, lowered)?;
    fs::create_dir_all(out)?;
    let _lock = lock(out)?;
    step("lock");
    recover(out)?;
    refuse_foreign(out, lowered)?;

    let tmp = tempfile::Builder::new()
        .prefix(TMP_PREFIX)
        .tempdir_in(out)?
        // The folder outlives errors on purpose: it may hold old versions
        // that a failed roll-back could not put back.
        .keep();
    step("create staging folder");
    fs::write(tmp.join(STAGING_MARKER), STAGING_TEXT)?;
    step("write staging marker");
    let (new, old) = (tmp.join("new"), tmp.join("old"));
    fs::create_dir(&new)?;
    fs::create_dir(&old)?;
    let mut written = Vec::new();
    for (env, l) in lowered {
        let dir = new.join(env);
        fs::create_dir(&dir)?;
        fs::write(dir.join(MARKER), MARKER_TEXT)?;
        step(&format!("stage {env}/{MARKER}"));
        for a in &l.artifacts {
            let p = dir.join(&a.path);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(&p, &a.contents)?;
            step(&format!("stage {env}/{}", a.path));
            written.push(out.join(env).join(&a.path));
        }
        // The files of other targets that the old folder holds stay: the
        // folder is swapped whole, so they are copied into the new one.
        for rel in old_files(&out.join(env)) {
            if keep(&rel) && !l.artifacts.iter().any(|a| a.path == rel) {
                let p = dir.join(&rel);
                if let Some(parent) = p.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::copy(out.join(env).join(&rel), &p)?;
            }
        }
    }

    let mut done: Vec<(&str, Swap)> = Vec::new();
    for (env, _) in lowered {
        match swap_in(out, &tmp, env) {
            Ok(how) => done.push((env, how)),
            Err(e) => {
                let mut restored = true;
                for (env, how) in done.into_iter().rev() {
                    restored &= swap_back(out, &tmp, env, how).is_ok();
                }
                if restored {
                    let _ = remove_staging(&tmp);
                }
                return Err(e);
            }
        }
    }
    remove_staging(&tmp)?;
    step("remove staging folder");
    Ok(written)
}

/// The regular files of an old env folder written by sclc (it holds the
/// [`MARKER`]), at most two levels deep (`Dockerfile`, `web/Dockerfile`),
/// as `/`-separated relative paths, sorted; none when it is not such a
/// folder. Links and other kinds of file are not followed or listed.
fn old_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if !is_dir(dir) || !dir.join(MARKER).is_file() {
        return out;
    }
    let list = |d: &Path| -> Vec<(String, fs::FileType)> {
        let Ok(rd) = fs::read_dir(d) else {
            return Vec::new();
        };
        rd.filter_map(|e| {
            let e = e.ok()?;
            Some((e.file_name().into_string().ok()?, e.file_type().ok()?))
        })
        .collect()
    };
    for (name, t) in list(dir) {
        if t.is_file() && name != MARKER {
            out.push(name);
        } else if t.is_dir() {
            for (inner, t2) in list(&dir.join(&name)) {
                if t2.is_file() {
                    out.push(format!("{name}/{inner}"));
                }
            }
        }
    }
    out.sort();
    out
}

/// How one env was put in place (to undo it after a later error).
#[derive(Clone, Copy, Debug)]
enum Swap {
    /// There was no old folder: `new/<env>` was renamed to `out/<env>`.
    Created,
    /// `new/<env>` and `out/<env>` were exchanged (the old one is now in `new/<env>`).
    Exchanged,
    /// The fallback: `out/<env>` → `old/<env>`, then `new/<env>` → `out/<env>`.
    Moved,
}

fn swap_in(out: &Path, tmp: &Path, env: &str) -> io::Result<Swap> {
    let (dest, new) = (out.join(env), tmp.join("new").join(env));
    if dest.symlink_metadata().is_err() {
        fs::rename(&new, &dest)?;
        step(&format!("rename new {env} into place"));
        return Ok(Swap::Created);
    }
    match exchange(&new, &dest) {
        Ok(()) => {
            step(&format!("exchange {env}"));
            return Ok(Swap::Exchanged);
        }
        Err(e) if e.kind() == ErrorKind::Unsupported => {}
        Err(e) => return Err(e),
    }
    let old = tmp.join("old").join(env);
    fs::rename(&dest, &old)?;
    step(&format!("move old {env} aside"));
    if let Err(e) = fs::rename(&new, &dest) {
        fs::rename(&old, &dest)?;
        return Err(e);
    }
    step(&format!("move new {env} into place"));
    Ok(Swap::Moved)
}

fn swap_back(out: &Path, tmp: &Path, env: &str, how: Swap) -> io::Result<()> {
    let (dest, new) = (out.join(env), tmp.join("new").join(env));
    match how {
        Swap::Created => fs::rename(&dest, &new),
        Swap::Exchanged => exchange(&new, &dest),
        Swap::Moved => {
            fs::rename(&dest, &new)?;
            fs::rename(tmp.join("old").join(env), &dest)
        }
    }
}

/// Exchanges two existing paths atomically. `Unsupported` when the platform
/// or the file system cannot (the caller then falls back to two renames).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    if cfg!(debug_assertions) && std::env::var_os("SCLC_RENAME_FALLBACK").is_some() {
        return Err(ErrorKind::Unsupported.into());
    }
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
            Err(ErrorKind::Unsupported.into())
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(ErrorKind::Unsupported.into())
}

/// Refuses to replace an `out/<env>` that sclc did not write.
fn refuse_foreign(out: &Path, lowered: &[(String, scl_backends::Lowered)]) -> io::Result<()> {
    for (env, _) in lowered {
        let dest = out.join(env);
        let Ok(meta) = dest.symlink_metadata() else {
            continue;
        };
        if !(meta.is_dir() && is_file(&dest.join(MARKER))) {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "{} exists and was not written by sclc; refusing to replace it (choose another --out)",
                    dest.display()
                ),
            ));
        }
    }
    Ok(())
}

/// A regular file (not a link).
fn is_file(p: &Path) -> bool {
    p.symlink_metadata().is_ok_and(|m| m.is_file())
}

/// A real folder (not a link).
fn is_dir(p: &Path) -> bool {
    p.symlink_metadata().is_ok_and(|m| m.is_dir())
}

/// Takes the exclusive lock of `out`, waiting (with a note) while another
/// build holds it. The lock is released when the file is dropped or the
/// process ends, however it ends.
fn lock(out: &Path) -> io::Result<File> {
    #[cfg(unix)]
    let f = File::open(out)?;
    #[cfg(not(unix))]
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out.join(LOCK_FILE))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            eprintln!(
                "note: waiting for another sclc build that is writing into {}",
                out.display()
            );
            f.lock()?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(e),
    }
    Ok(f)
}

/// Recovers from builds that were killed while writing into `out` (the
/// caller holds the lock): puts back env folders that a fallback swap had
/// moved aside, then removes the staging folders. Prints what it did.
fn recover(out: &Path) -> io::Result<()> {
    let mut leftovers: Vec<PathBuf> = fs::read_dir(out)?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(TMP_PREFIX))
        .map(|e| e.path())
        .filter(|p| is_dir(p))
        .collect();
    leftovers.sort();
    let mut removed = 0usize;
    for dir in leftovers {
        let ours = is_file(&dir.join(STAGING_MARKER));
        if !ours && !is_legacy_staging(&dir) {
            eprintln!(
                "note: leaving {} alone: sclc did not write it",
                dir.display()
            );
            continue;
        }
        let old = dir.join("old");
        if is_dir(&old) {
            let mut envs: Vec<PathBuf> = fs::read_dir(&old)?.flatten().map(|e| e.path()).collect();
            envs.sort();
            for from in envs {
                let dest = out.join(from.file_name().expect("a folder entry has a name"));
                if dest.symlink_metadata().is_err() && is_file(&from.join(MARKER)) {
                    fs::rename(&from, &dest)?;
                    step("recover an env folder");
                    eprintln!(
                        "note: restored {} from an interrupted build",
                        dest.display()
                    );
                }
            }
        }
        if ours {
            remove_staging(&dir)?;
        } else {
            fs::remove_dir_all(&dir)?;
        }
        step("remove a leftover staging folder");
        removed += 1;
    }
    if removed > 0 {
        eprintln!(
            "note: removed {removed} temporary folder{} of interrupted builds from {}",
            if removed == 1 { "" } else { "s" },
            out.display()
        );
    }
    Ok(())
}

/// The staging folder of sclc before the staging marker (0.1): only `new/`
/// and `old/`, every folder in them an env folder with [`MARKER`] (or empty);
/// or empty.
fn is_legacy_staging(dir: &Path) -> bool {
    let Ok(rd) = fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().all(|e| {
        let p = e.path();
        let name = e.file_name();
        (name == "new" || name == "old")
            && is_dir(&p)
            && fs::read_dir(&p).is_ok_and(|rd| {
                rd.flatten().all(|env| {
                    let p = env.path();
                    // A folder killed before its marker was written is empty.
                    is_dir(&p)
                        && (is_file(&p.join(MARKER))
                            || fs::read_dir(&p).is_ok_and(|mut rd| rd.next().is_none()))
                })
            })
    })
}

/// Removes a staging folder so that a kill halfway leaves one that is still
/// recognized: everything but [`STAGING_MARKER`] first, then the marker,
/// then the (then empty) folder.
fn remove_staging(dir: &Path) -> io::Result<()> {
    for e in fs::read_dir(dir)?.flatten() {
        if e.file_name() == STAGING_MARKER {
            continue;
        }
        if e.file_type()?.is_dir() {
            fs::remove_dir_all(e.path())?;
        } else {
            fs::remove_file(e.path())?;
        }
        step("remove part of a staging folder");
    }
    match fs::remove_file(dir.join(STAGING_MARKER)) {
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    step("remove the staging marker");
    fs::remove_dir(dir)
}

/// A step of the write is done: with `SCLC_FAILPOINT=N` in a debug build,
/// the N-th step aborts the process (see the module doc).
fn step(name: &str) {
    #[cfg(debug_assertions)]
    {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static STEPS: AtomicUsize = AtomicUsize::new(0);
        let Some(at) = std::env::var("SCLC_FAILPOINT")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        else {
            return;
        };
        if STEPS.fetch_add(1, Ordering::SeqCst) + 1 == at {
            eprintln!("failpoint {at}: abort after: {name}");
            std::process::abort();
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}
