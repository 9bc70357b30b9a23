//! Backends: pure functions that lower one [`scl_ir::EnvSpec`] to the files of
//! a target (`design/architecture.md`, "Rules that keep it easy to change").
//!
//! Every backend returns a [`Lowered`]: the files to write ([`Artifact`]s,
//! with paths relative to the env's output folder `DIR/<env>/`), the fields
//! the target could not express ([`FieldWarning`]s), and the values it could
//! not write safely ([`FieldError`]s; then there are no artifacts at all, so
//! nothing is ever written with a value left out). Backends do no I/O, read
//! no clock and iterate no hash map, so the same IR always gives the same
//! bytes.
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

/// What kind of value a target refused, so that the CLI can give each kind
/// its own diagnostic code and explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The value holds characters the format cannot carry in that position
    /// (a line break in a package name, a space in an `ENV` name, a line
    /// longer than BuildKit reads, a malformed checksum), or there is
    /// nothing to build (no `base`).
    Unwritable,
    /// A tool would read the value as something other than itself: an
    /// option (`-o` given to `dnf`), a uid (a user name of digits), a glob
    /// (`COPY req[1].txt`), a git repository (`ADD https://…/x.git`).
    Misread,
    /// `workdir` is not an absolute path, or is `/` or a top-level system
    /// folder (`/etc`, `/usr`, …) that the runtime user would be given.
    SystemFolder,
    /// The source sets a value the target reserves for itself (the
    /// `dev.scl.ir.sha256` label).
    Reserved,
}

/// A value of the IR that the target cannot write safely: lowering fails
/// and no file is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted IR path of the field, as in [`FieldWarning::field`]:
    /// `"system.packages[2]"`, `"vars.A B"`, `"ignore[0]"`, `"description"`.
    pub field: String,
    /// The kind of refusal (it picks the diagnostic code).
    pub kind: ErrorKind,
    /// One sentence saying what is wrong with the value.
    pub message: String,
    /// How to fix it, when there is a known fix.
    pub help: Option<String>,
}

/// The result of lowering one env to one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    /// Files to write, in a fixed order (a backend never emits two with the
    /// same path). Empty whenever `errors` is not.
    pub artifacts: Vec<Artifact>,
    /// Fields the target could not express, in the order they were met.
    pub warnings: Vec<FieldWarning>,
    /// Values the target refused, in the order they were met.
    pub errors: Vec<FieldError>,
}

impl Lowered {
    /// The artifact at `path`, if any.
    pub fn artifact(&self, path: &str) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| a.path == path)
    }
}
