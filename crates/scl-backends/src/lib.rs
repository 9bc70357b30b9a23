//! Backends: pure functions that lower one [`scl_ir::EnvSpec`] to the files of
//! a target (`design/architecture.md`, "Rules that keep it easy to change").
//!
//! Every backend returns a [`Lowered`]: the files to write ([`Artifact`]s,
//! with paths relative to the env's output folder `DIR/<env>/`) and the
//! fields the target could not express ([`FieldWarning`]s). Backends do no
//! I/O, read no clock and iterate no hash map, so the same IR always gives the
//! same bytes.
//!
//! Every value that reaches a shell line, a Dockerfile instruction or a
//! comment is quoted or escaped by [`quote`], never by hand in a template.
//!
//! Targets: [`docker`] (Dockerfile + `.dockerignore`).

pub mod docker;
pub mod quote;

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Path relative to the env's output folder, `/`-separated, never
    /// absolute and never containing `..`: `"Dockerfile"`,
    /// `"webui/Dockerfile"` (one folder per service of a services env).
    pub path: String,
    /// The full text of the file (UTF-8, `\n` line ends, trailing newline).
    pub contents: String,
}

/// A field of the IR that the target could not express (or expressed only in
/// part), so that the CLI can show it as a warning naming the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldWarning {
    /// Dotted IR path of the field: `"resources"`, `"vars.HOME"`,
    /// `"assets[1]"`, `"services.webui.distributed"`.
    pub field: String,
    /// One sentence saying what the target does instead.
    pub message: String,
}

/// The result of lowering one env to one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    /// Files to write, in a fixed order (a backend never emits two with the
    /// same path).
    pub artifacts: Vec<Artifact>,
    /// Fields the target could not express, in the order they were met.
    pub warnings: Vec<FieldWarning>,
}

impl Lowered {
    /// The artifact at `path`, if any.
    pub fn artifact(&self, path: &str) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| a.path == path)
    }
}
