//! The domain checks: what is wrong with an environment that only a reader
//! who knows CUDA, torch, NVIDIA drivers, Kubernetes and the images would
//! see — the failures other tools find at `docker build` time or on the GPU
//! node, hours later.
//!
//! Each check reads one evaluated env ([`EnvSpec`], the IR) and gives
//! [`Finding`]s that name IR fields (`python.packages[2]`, `base`); the
//! database (`scl-db`'s `module_diagnostics`) turns them into diagnostics at
//! the source of those fields, so `sclc check`, `sclc build` and the language
//! server report the same ones. No I/O here: the texts of requirements files
//! come in [`Inputs`], the facts from `scl_domain` (versioned tables with
//! their sources) and `scl_ir::bases` (what each base image ships).
//!
//! The checks and their codes (the book's chapter "What sclc checks, and
//! why" has one entry per code):
//! - `E0501` a torch wheel's CUDA variant (`torch==2.1.2+cu118`) that is not
//!   the env's CUDA (a devel base image's, or another pin's); `W0507` on a
//!   runtime or base image (the wheel's own CUDA libraries are used);
//! - `E0502` torch, torchvision and torchaudio versions of different
//!   releases;
//! - `E0503` a Python version outside the range of the torch (or
//!   TensorFlow) release;
//! - `W0501` a pip pin of torch that replaces the torch the base image ships;
//! - `E0504` `python.version` that is not the Python the base image ships;
//!   `W0506` not the `python3` its package manager installs (an image
//!   without Python);
//! - `E0505` a conda CUDA package (`cudatoolkit`, `pytorch-cuda`,
//!   `cuda-version`) that is not the base image's CUDA;
//! - `E0506` (with a driver version: `sclc check --driver`, `sclc doctor`)
//!   a CUDA runtime that needs a newer NVIDIA driver;
//! - `E0507` a GPU type whose generation needs a newer torch or CUDA;
//! - `W0502` a Python package whose wheel needs system libraries the env
//!   does not install;
//! - `E0508` an `nvidia/cuda` tag NVIDIA does not publish (no patch version;
//!   a devel + cuDNN tag not in the table);
//! - `W0503` a Hugging Face asset whose revision is not a commit;
//! - `W0504` a plain value that looks like a credential;
//! - `E0509` GPU requests and limits that differ;
//! - `E0511` a torch `+cuXYZ` wheel the release was not published for;
//! - `E0510` more processes per node than GPUs (or an NCCL launch with no
//!   GPU); `W0505` GPUs that no process uses.

use std::sync::Arc;

use scl_ir::EnvSpec;

mod credentials;
mod cuda;
mod gpus;
mod packages;
mod pins;
mod python;

pub use pins::{exact_pin, Pin, PinField, RequirementsFile};

/// One problem found in an env.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The registered code (`E05xx`, `W05xx`).
    pub code: &'static str,
    /// An error (the env will not work) or a warning.
    pub error: bool,
    /// The IR field the problem is located at, as the provenance names it
    /// (`python.packages[1]`, `resources.limits.gpu`).
    pub field: String,
    /// The message, with the values involved.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// Other fields the problem involves, each with a label.
    pub also: Vec<Also>,
    /// A change that fixes it, for an editor's quick fix.
    pub fix: Option<Fix>,
}

/// A second location of a [`Finding`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Also {
    /// The IR field.
    pub field: String,
    /// What it contributes (`the base image's CUDA is 12.1`).
    pub label: String,
}

/// A fix an editor can apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fix {
    /// Add these packages to `system.packages` (`system.packages += [...]`).
    AddSystemPackages(Vec<String>),
}

/// What the checks read besides the IR.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The requirement lines of each requirements file the env names (its
    /// `python.requirements[i]` in order), read as pip reads them.
    pub requirements: Vec<RequirementsFile>,
}

impl Finding {
    /// This finding with `prefix` (`services.a.`) before its fields.
    fn prefixed(&self, prefix: &str) -> Finding {
        let mut f = self.clone();
        if !prefix.is_empty() {
            f.field = format!("{prefix}{}", f.field);
            for a in &mut f.also {
                a.field = format!("{prefix}{}", a.field);
            }
        }
        f
    }

    fn error(code: &'static str, field: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            code,
            error: true,
            field: field.into(),
            message: message.into(),
            help: None,
            also: Vec::new(),
            fix: None,
        }
    }

    fn warning(
        code: &'static str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            error: false,
            ..Finding::error(code, field, message)
        }
    }

    fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }

    fn also(mut self, field: impl Into<String>, label: impl Into<String>) -> Finding {
        self.also.push(Also {
            field: field.into(),
            label: label.into(),
        });
        self
    }
}

/// Every check of one env and, with their fields prefixed by
/// `services.NAME.`, of each of its services (a service is checked with the
/// requirements files of its own IR; their texts are in `inputs` by path).
/// Findings come in a fixed order (check by check, then by field).
pub fn check(spec: &EnvSpec, inputs: &Inputs) -> Vec<Finding> {
    check_with(spec, inputs, &mut |_, _| None)
}

/// What [`check_with`] asks for a service: `(name, its IR)` → the findings
/// its own env already has.
pub type Known<'a> = dyn FnMut(&str, &Arc<EnvSpec>) -> Option<Arc<Vec<Finding>>> + 'a;

/// [`check`], with the findings of some services already known:
/// `known(name, service)` gives those of the service `name` of `spec` (what
/// [`check`] returned for that same env, fields unprefixed), or `None`,
/// and then the service is checked here. A service that is another env
/// held by reference is so checked once, not again for every env that
/// holds it. The result equals [`check`]'s.
pub fn check_with(spec: &EnvSpec, inputs: &Inputs, known: &mut Known<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    own_findings(spec, inputs, "", &mut out);
    for (name, s) in &spec.services {
        // The prefix is made only for a service with findings: an env of
        // 5,000 clean services makes none (a re-check after one edit
        // passes here for every service).
        let prefix = || format!("services.{name}.");
        match known(name, s) {
            Some(found) if found.is_empty() => {}
            Some(found) => {
                let prefix = prefix();
                out.extend(found.iter().map(|f| f.prefixed(&prefix)));
            }
            None => check_one(s, inputs, &prefix(), &mut out),
        }
    }
    out
}

fn check_one(spec: &EnvSpec, inputs: &Inputs, prefix: &str, out: &mut Vec<Finding>) {
    own_findings(spec, inputs, prefix, out);
    for (name, s) in &spec.services {
        check_one(s, inputs, &format!("{prefix}services.{name}."), out);
    }
}

/// The findings of `spec` itself (not of its services), fields prefixed.
fn own_findings(spec: &EnvSpec, inputs: &Inputs, prefix: &str, out: &mut Vec<Finding>) {
    let cx = Cx::new(spec, inputs);
    let mut found = Vec::new();
    cuda::check(&cx, &mut found);
    python::check(&cx, &mut found);
    packages::check(&cx, &mut found);
    gpus::check(&cx, &mut found);
    credentials::check(&cx, &mut found);
    if prefix.is_empty() {
        out.extend(found);
    } else {
        out.extend(found.iter().map(|f| f.prefixed(prefix)));
    }
}

/// The driver check (`E0506`): every CUDA runtime the env carries (the base
/// image's, each torch wheel's `+cuXYZ`) against the NVIDIA driver version
/// `driver` (`"535.104.05"`) of the machine or node it will run on. Services
/// are checked too. Minor-version compatibility is the rule (NVIDIA CUDA
/// Toolkit release notes, "CUDA minor version compatibility"): a 12.x
/// runtime needs a driver ≥ 525.60.13, 13.x ≥ 580, 11.x ≥ 450.80.02.
pub fn check_driver(spec: &EnvSpec, inputs: &Inputs, driver: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    driver_one(spec, inputs, driver, "", &mut out);
    out
}

fn driver_one(spec: &EnvSpec, inputs: &Inputs, driver: &str, prefix: &str, out: &mut Vec<Finding>) {
    let cx = Cx::new(spec, inputs);
    let mut found = Vec::new();
    cuda::driver(&cx, driver, &mut found);
    for mut f in found {
        f.field = format!("{prefix}{}", f.field);
        out.push(f);
    }
    for (name, s) in &spec.services {
        driver_one(s, inputs, driver, &format!("{prefix}services.{name}."), out);
    }
}

/// The CUDA runtimes an env carries, for a front end that compares them
/// with a machine (`sclc doctor`): `(CUDA "12.1.1", where it comes from)`,
/// the base image's first, then each torch wheel variant's.
pub fn cuda_runtimes(spec: &EnvSpec, inputs: &Inputs) -> Vec<(String, String)> {
    let cx = Cx::new(spec, inputs);
    let mut out = Vec::new();
    if let Some(c) = &cx.base_cuda {
        out.push((c.clone(), format!("the base image {}", cx.base_ref())));
    }
    for p in cx.pins.iter().filter(|p| &*p.name == "torch") {
        if let Some(c) = p.cuda() {
            out.push((c, format!("`{}`", p.text)));
        }
    }
    out
}

/// The text of a list element a finding names (`python.packages[2]`,
/// `services.web.conda.packages[0]`) in `spec`, when it is a string: what a
/// front end looks for in the item that wrote the list, since the
/// provenance locates lists, not their elements. `None` for any other field.
pub fn element_text(spec: &EnvSpec, field: &str) -> Option<String> {
    let (path, index) = field.strip_suffix(']')?.rsplit_once('[')?;
    let index: usize = index.parse().ok()?;
    let mut v = serde_json::to_value(spec).ok()?;
    for seg in path.split('.') {
        v = v.get_mut(seg)?.take();
    }
    v.get(index)?.as_str().map(String::from)
}

/// What every check reads, computed once per env.
pub(crate) struct Cx<'a> {
    pub spec: &'a EnvSpec,
    /// Every requirement of `python.packages` and of the requirements files
    /// that pip installs here (markers evaluated for the Python the env
    /// runs, [`python::runs`]).
    pub pins: Vec<Pin>,
    /// The CUDA of the base image's tag (`nvidia/cuda`, `pytorch/pytorch`).
    pub base_cuda: Option<String>,
    /// What the base image ships.
    pub ships: scl_ir::bases::Ships,
}

impl<'a> Cx<'a> {
    fn new(spec: &'a EnvSpec, inputs: &Inputs) -> Cx<'a> {
        let ships = spec
            .base
            .as_ref()
            .map(|b| scl_ir::bases::ships(&b.reference))
            .unwrap_or_default();
        let python = python::runs(spec, &ships);
        Cx {
            spec,
            pins: pins::collect(spec, inputs, python.as_deref()),
            base_cuda: ships.cuda.clone(),
            ships,
        }
    }

    /// The base image's reference, for messages (`""` without one).
    pub fn base_ref(&self) -> &str {
        self.spec.base.as_ref().map_or("", |b| b.reference.as_str())
    }

    /// Whether conda installs the env's Python (`python.manager = .conda`):
    /// it then installs the `python.version` asked for, with its headers.
    pub fn conda(&self) -> bool {
        self.spec.python.as_ref().map(|p| p.manager) == Some(scl_ir::PythonManager::Conda)
    }

    /// The exact pin of package `name` (normalized), the first one.
    pub fn pin(&self, name: &str) -> Option<&Pin> {
        self.pins
            .iter()
            .find(|p| *p.name == *name && p.version.is_some())
    }

    /// Every exact pin of package `name` (normalized), in order.
    pub fn pins_of<'b>(&'b self, name: &'b str) -> impl Iterator<Item = &'b Pin> + 'b {
        self.pins
            .iter()
            .filter(move |p| *p.name == *name && p.version.is_some())
    }
}

/// Whether two versions are equal as PEP 440 compares releases (`2.1` is
/// `2.1.0`); unparsable ones are equal when their texts are.
pub(crate) fn same_version(a: &str, b: &str) -> bool {
    let trim = |v: &str| {
        scl_domain::version::Dotted::parse(v).map(|d| {
            let mut p = d.parts().to_vec();
            while p.len() > 1 && p.last() == Some(&0) {
                p.pop();
            }
            p
        })
    };
    match (trim(a), trim(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether PEP 440 version `a` is older than `floor` (`2.4.0rc1` is not
/// older than `2.0.1`; `2.0.1rc1` is); `None` when either does not parse.
pub(crate) fn older_than(a: &str, floor: &str) -> Option<bool> {
    use pep508_rs::pep440_rs::Version;
    use std::str::FromStr;
    Some(Version::from_str(a).ok()? < Version::from_str(floor).ok()?)
}

/// `"12.1"` of `"12.1.1"` (major.minor of a dotted version).
pub(crate) fn major_minor(v: &str) -> String {
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        (Some(a), None) => a.to_string(),
        _ => v.to_string(),
    }
}
