//! Which files of the workspace are an image's build context: the one rule
//! the image tag's hash (`scl-ide`'s `context_sha256`, through
//! [`crate::context_hash`]) and the archive `sclc image build` sends
//! (`scl_engines::context`) both follow, so that a file is hashed exactly
//! when it is sent.
//!
//! The context is what the Dockerfile copies — each requirements file and
//! each `files[].from` (a folder: every file below it) — less:
//! - what the env's `ignore` globs match ([`Ignore`]);
//! - names that are never sources ([`never_sent`]): `.git`, `scl.lock`,
//!   names starting with `.sclc-`, and `.dockerignore` at the top of the
//!   context (the engine reads the one sclc sends there);
//! - sclc's output folders (a folder with a `.sclc-output` marker) and
//!   symbolic links inside copied folders.

/// The env's `ignore` globs, matched as `.dockerignore` lines are (moby's
/// `patternmatcher`): a workspace-relative, `/`-separated path is ignored
/// when a glob matches it or a folder above it; `*`, `?` and `[...]` do not
/// cross `/`, `**` matches any number of folders; a leading `/` or `./` is
/// dropped. Globs the compiler refuses (E0407) never reach here; one that
/// globset still cannot read matches nothing.
pub struct Ignore {
    set: globset::GlobSet,
}

impl Ignore {
    /// The matcher of `globs` (the IR's `ignore`).
    pub fn new(globs: &[String]) -> Ignore {
        let mut b = globset::GlobSetBuilder::new();
        for g in globs {
            let clean: Vec<&str> = g
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            if let Ok(glob) = globset::GlobBuilder::new(&clean.join("/"))
                .literal_separator(true)
                .backslash_escape(true)
                .build()
            {
                b.add(glob);
            }
        }
        Ignore {
            set: b.build().unwrap_or_else(|_| globset::GlobSet::empty()),
        }
    }

    /// Whether `rel` (workspace-relative, `/`-separated) or a folder above
    /// it is matched.
    pub fn ignores(&self, rel: &str) -> bool {
        let mut prefix = rel;
        loop {
            if self.set.is_match(prefix) {
                return true;
            }
            match prefix.rfind('/') {
                Some(i) => prefix = &prefix[..i],
                None => return false,
            }
        }
    }
}

/// Whether the file or folder `rel` (workspace-relative) is never part of
/// a build context, whatever copies it: a `.git` folder, an `scl.lock`
/// (rewritten by every build: hashing it would change the tag each time),
/// a name starting with `.sclc-` (sclc's staging, lock and build files),
/// and the `.dockerignore` at the top (the engine reads the one sclc sends).
pub fn never_sent(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == ".git" || name == "scl.lock" || name.starts_with(".sclc-") || rel == ".dockerignore"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_matches_as_dockerignore_does() {
        let i = Ignore::new(&[
            "data".into(),
            "*.ckpt".into(),
            "/logs/".into(),
            "**/__pycache__".into(),
            "./src/*.tmp".into(),
        ]);
        for yes in [
            "data",
            "data/x.csv",
            "a.ckpt",
            "logs/run1/out.txt",
            "__pycache__/m.pyc",
            "src/pkg/__pycache__/m.pyc",
            "src/x.tmp",
        ] {
            assert!(i.ignores(yes), "{yes} is ignored");
        }
        for no in [
            "src/data.py",
            "sub/a.ckpt",
            "src/pkg/x.tmp",
            "train.py",
            "datasets",
        ] {
            assert!(!i.ignores(no), "{no} is kept");
        }
    }

    #[test]
    fn never_sent_names() {
        for yes in [
            ".git",
            "src/.git",
            "scl.lock",
            "sub/scl.lock",
            ".sclc-build",
            ".dockerignore",
        ] {
            assert!(never_sent(yes), "{yes}");
        }
        for no in ["src/.dockerignore", "scl.lock.txt", "git", "sclc-x"] {
            assert!(!never_sent(no), "{no}");
        }
    }
}
