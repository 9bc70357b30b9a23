//! The engines `sclc` drives (`design/architecture.md`: they sit behind the
//! CLI; the compiler core never does I/O beyond reading the workspace):
//!
//! - [`docker`]: the Docker Engine API through bollard — Docker, or
//!   Podman's Docker-compatible service — to build, push and run images;
//! - [`context`]: the build context sent to the engine (a tar of the
//!   workspace, filtered by the env's `ignore` globs);
//! - [`lock`]: `scl.lock`, the images built from each env;
//! - [`kube`]: Kubernetes through kube (server-side apply of the lowered
//!   Job or PyTorchJob, status, logs, delete);
//! - [`venv`]: local virtual environments through uv.
//!
//! Every failure of an engine is an [`EngineError`]: one line saying what
//! was tried and what answered, which the CLI prints before exiting 3.

pub mod context;
pub mod docker;
pub mod kube;
pub mod lock;
pub mod venv;

/// A failure of an engine (a daemon that does not answer, a build that
/// fails, a cluster that refuses a request): one line, shown as
/// `error: <line>`; the CLI exits 3.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError(pub String);

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EngineError {}

impl EngineError {
    /// An error with message `m`.
    pub fn new(m: impl Into<String>) -> EngineError {
        EngineError(m.into())
    }
}
