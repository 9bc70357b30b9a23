//! Semantic analysis of SCL: the static pass (names, duplicates, recursion,
//! types), evaluation (params and `--set`, `let`, functions, templates,
//! inheritance with the diamond rule, `self`, provenance) and normalization of
//! each env to the EnvSpec IR.
//!
//! This crate does no I/O and knows nothing of salsa: everything outside one
//! module (other modules, files named by `file()`, `--set` values) is reached
//! through the [`Host`] trait, which the database crate implements with
//! memoized queries. Diagnostics are returned as values.

pub mod builtins;
mod eval;
pub mod graph;
mod items;
mod limits;
mod normalize;
mod outcome;
pub mod record;
mod resolve;
pub mod schema;
pub mod ty;
pub mod typeck;
mod validate;
pub mod value;
mod wording;

pub use eval::{
    assemble_module, evaluate_cyclic, evaluate_decl, unknown_overrides, CyclicValues, DeclOutcome,
    Spent, MAX_SELF_ROUNDS,
};
pub use items::{AnchoredDecl, DeclKind, ItemInfo, Items};
pub use resolve::{check_declarations, check_module, check_module_with, KnownModule, StaticInputs};
pub use value::{EnumVal, EnvValue, FinalEnv, ImageVal, Origin, Origins, SecretVal, Value};

use scl_diag::{Diagnostic, Span};
use std::sync::Arc;

/// Identifies a module (a file, or a stdlib module) for the [`Host`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

/// A file read by `file("...")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
    /// The text (lossy UTF-8), for requirements files.
    pub text: Arc<str>,
}

/// Why a local path could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// No such file or folder (the resolved path is given).
    NotFound(String),
    /// Outside the workspace root (the resolved path is given).
    OutsideWorkspace(String),
    /// Larger than the host's limit (the resolved path and the limit in bytes).
    TooLarge(String, usize),
    /// It exists but cannot be read (the resolved path and the system's message).
    Unreadable(String, String),
}

/// A `--set NAME=VALUE` for one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub name: String,
    /// The value text as given.
    pub value: String,
    /// The pseudo-file diagnostics point into (`<command-line>`).
    pub file: Arc<str>,
    /// Byte offset of the value inside that pseudo-file's text.
    pub offset: u32,
    /// The parameter name's span in that text (after an `alias.` prefix):
    /// where "no such parameter" points.
    pub name_span: Span,
}

/// What the evaluator needs from outside one module. Implemented by the
/// database with memoized queries; implementations must be deterministic.
pub trait Host {
    /// The outline of a module (position-independent).
    fn items(&self, m: ModuleId) -> Arc<Items>;
    /// Declaration `decl` (an index into [`Host::items`]) of module `m`,
    /// anchored: its spans are relative to its start (see
    /// `scl_diag::Span`), so the value computed from it does not change
    /// when text above it moves.
    fn decl(&self, m: ModuleId, decl: usize) -> Arc<AnchoredDecl>;
    /// The text `span` covers in module `m` (an anchored span: in its
    /// declaration), for quoting it in messages.
    fn span_text(&self, m: ModuleId, span: Span) -> Option<Arc<str>>;
    /// The display path of a module (workspace-relative, or `std/NAME.env.scl`).
    fn display_path(&self, m: ModuleId) -> Arc<str>;
    /// The module an `import` declaration (by index in `m`'s decls) resolved
    /// to, or `None` when resolution failed (already reported).
    fn import(&self, m: ModuleId, decl: usize) -> Option<ModuleId>;
    /// The value of declaration `decl` of module `m` (memoized): what
    /// [`evaluate_decl`] gives for a clean declaration
    /// ([`Items::clean`]), the declaration's entry of [`evaluate_cyclic`]
    /// for the others.
    fn decl_value(&self, m: ModuleId, decl: usize) -> Option<Value>;
    /// The final value of env `name` of module `m` as that module's
    /// assembled values hold it (`ModuleValues::final_env`: its services
    /// held by reference complete), memoized per module; `None` when it
    /// failed or is no env.
    fn completed_env(&self, m: ModuleId, name: &str) -> Option<Arc<FinalEnv>>;
    /// The complete IR (`FinalEnv::spec` of [`Host::completed_env`]) of
    /// each of `envs` (module, env name), in order: what an env holding
    /// many services by reference reads. A host may answer in batches (the
    /// database: one memoized query per group of services, so that an env
    /// with 1,000 services depends on a few dozen results, not on 1,000
    /// modules).
    fn completed_specs(&self, envs: &[(ModuleId, Arc<str>)]) -> Vec<Option<Arc<scl_ir::EnvSpec>>> {
        envs.iter()
            .map(|(m, n)| self.completed_env(*m, n).and_then(|f| f.spec.clone()))
            .collect()
    }
    /// [`Host::decl_value`] of a declaration the caller knows is not an
    /// import and is clean ([`Items::clean`]) when `clean`: the same value,
    /// without looking the declaration up in the outline again (a
    /// [`Value::EnvRef`] records both when it is made).
    fn own_decl_value(&self, m: ModuleId, decl: usize, clean: bool) -> Option<Value> {
        let _ = clean;
        self.decl_value(m, decl)
    }
    /// What computing [`Host::decl_value`] spent of the evaluation budget
    /// (for the declarations on cycles: what they spent together).
    fn decl_spent(&self, m: ModuleId, decl: usize) -> Spent;
    /// Reads `rel` (relative to the folder of module `m`) for `file()`.
    fn read_file(&self, m: ModuleId, rel: &str) -> Result<FileInfo, FileError>;
    /// Resolves a local path relative to module `m`'s folder to a
    /// workspace-relative, `/`-separated path (`.` for the root itself),
    /// refusing one outside the workspace. With `must_exist` (`files[].from`,
    /// which is copied into the image) a missing path is
    /// [`FileError::NotFound`]; without it (`host:` volume sources, folders
    /// of the machine that runs the container) the path is only normalized.
    /// The name is kept byte for byte (a `\` stays a `\`).
    fn host_path(&self, m: ModuleId, rel: &str, must_exist: bool) -> Result<String, FileError>;
    /// The `--set` values addressed to module `m`.
    fn overrides(&self, m: ModuleId) -> Vec<Override>;
}

/// The result of evaluating one module: the value of every top-level name
/// but the imports (envs carry their final, normalized result), and the
/// module's diagnostics.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ModuleValues {
    /// By name (compact: most modules declare a few names).
    pub values: record::Fields<String, Value>,
    /// Names whose evaluation failed (their errors are in `diagnostics`).
    pub failed: Vec<String>,
    /// Envs that are built or checked (not templates), in declaration order.
    pub envs: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
}

impl ModuleValues {
    /// The final result of env `name`, if it evaluated.
    pub fn final_env(&self, name: &str) -> Option<&Arc<FinalEnv>> {
        match self.values.get(name) {
            Some(Value::Env(e)) => e.final_env.as_ref(),
            _ => None,
        }
    }
}

/// The requirement lines of a requirements file's text, read as pip reads
/// it (decoding, line joining, comments, options left out):
/// `(1-based line, the requirement as written)`. Empty when pip could not
/// read the file (evaluation reports why).
pub fn requirement_lines(text: &str) -> Vec<(usize, String)> {
    match validate::requirements(text) {
        Ok(lines) => lines
            .into_iter()
            .filter_map(|l| match l {
                validate::ReqLine::Requirement { line, text, .. } => Some((line, text)),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}
