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
//! Each target declares the IR fields it expresses ([`expresses::Expresses`],
//! e.g. [`docker::EXPRESSES`]); the warnings for set fields it does not
//! write are computed from that declaration ([`expresses::unexpressed`]).
//!
//! Every target is a [`Backend`] in [`REGISTRY`] ([`backend`]): its name,
//! file layout, the fields it expresses and `lower(&EnvSpec, &LowerCx)`.
//! Targets: [`docker`] (Dockerfile + `.dockerignore`), [`conda`]
//! (`environment.yml`), [`k8s`], [`trainjob`], [`compose`]. The targets
//! that build an image from a base render one container plan ([`plan`]).

pub mod apptainer;
pub mod backend;
pub mod compose;
pub mod conda;
pub mod context;
pub mod docker;
pub mod expresses;
pub mod k8s;
pub mod names;
pub mod plan;
pub mod quote;
pub mod trainjob;
pub mod yaml;

pub use backend::{context_hash, Backend, LowerCx, REGISTRY};

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
    /// A system package name that the package manager could read as a
    /// pattern rather than one package: for apt, a name that is not a
    /// Debian package name (`libzstd?`, `zst*`, `?name(x)`, `x^`), which
    /// `apt-get install` would read as a regular expression, a glob, an apt
    /// pattern or a task ([`docker`] explains what stays and how it is
    /// checked).
    PackagePattern,
    /// An output file or folder name that would be the same as another
    /// one, or as a file sclc writes itself: a service called `Dockerfile`
    /// or `.sclc-output`, two services (or two envs) whose names differ only
    /// in case (one folder on a case-insensitive file system).
    NameClash,
    /// An `ignore` glob that BuildKit's `.dockerignore` reader would reject
    /// or read as another glob (an unclosed `[`, a `\d` escape, `[z-a]`;
    /// see [`quote::glob_problem`]).
    IgnorePattern,
    /// The env needs a tool the base image does not have and the target
    /// will not install (conda on `python:3.11-slim`; anything on a micro
    /// image, which has no package manager), by the base-image table
    /// ([`scl_ir::bases`]).
    BaseLacks,
    /// The env has no `base` and no services: it can be a parent of other
    /// envs, but there is no image to build (E0209, "missing required
    /// field", as when such an env is used as a service).
    NoBase,
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

/// The names of the files sclc itself writes into an output folder: the
/// marker of an env folder (`.sclc-output`, first, written by `sclc build`:
/// its output module takes the name from here), and the
/// Dockerfile backend's `Dockerfile`, `Dockerfile.dockerignore` and
/// `.dockerignore`. Compared without regard to case.
pub const OWN_FILE_NAMES: &[&str] = &[
    ".sclc-output",
    "Dockerfile",
    "Dockerfile.dockerignore",
    ".dockerignore",
    "apptainer.def",
    "environment.yml",
    "k8s.yaml",
    "trainjob.yaml",
    "compose.yaml",
];

/// Why `name`, used as a folder of an output tree (an env under `--out`, a
/// service under its env), could take the place of a file sclc writes: it
/// is one of [`OWN_FILE_NAMES`], starts with `.sclc-` (sclc's marker, lock
/// and staging names: `.sclc-tmp-*`, `.sclc-lock`, `.sclc-staging`) or ends
/// in `.dockerignore` (the name BuildKit reads an ignore file from), in any
/// case: on a case-insensitive file system (the default on macOS and
/// Windows) `dockerfile` and `Dockerfile` are one name. `None` when the name
/// is free.
pub fn reserved_output_name(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if let Some(own) = OWN_FILE_NAMES.iter().find(|f| f.eq_ignore_ascii_case(name)) {
        return Some(format!(
            "is the name of the file `{own}` that sclc writes in the same folder"
        ));
    }
    if lower.starts_with(".sclc-") {
        return Some("starts with `.sclc-`, which sclc keeps for its own files".into());
    }
    if lower.ends_with(".dockerignore") {
        return Some("ends in `.dockerignore`, the name BuildKit reads ignore files from".into());
    }
    None
}

/// A name usable as one output folder (a service's): `[A-Za-z0-9_.-]+`, not
/// `.` or `..`.
pub(crate) fn is_folder_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Where one image of an env is lowered ([`lower_images`]).
pub(crate) struct ImageAt {
    /// `env NAME` or `env NAME, service S` (for header comments; the env's
    /// name passed through [`quote::comment`]).
    pub origin: String,
    /// The folder of its files in the env's output folder: `""` or
    /// `"webui/"`.
    pub path_prefix: String,
    /// The prefix of its warnings' and errors' fields: `""` or
    /// `"services.webui."`.
    pub field_prefix: String,
}

/// Calls `image` for the env `spec` (named `env_name`) when it has a `base`
/// and for each of its services that does, recursively (one folder
/// `<service>/` each, in the IR's order). A service whose name cannot be
/// its folder (not [`is_folder_name`], one of [`reserved_output_name`], or
/// the same as another's but for case, [`case_clashes`]) is an error and
/// is not lowered; an env or service with neither `base` nor services is
/// E0209 ([`ErrorKind::NoBase`]): there is nothing to build. The targets
/// that build one image per env and service (Dockerfile, Apptainer) share
/// this walk.
pub(crate) fn lower_images(
    spec: &scl_ir::EnvSpec,
    env_name: &str,
    out: &mut Lowered,
    image: &mut dyn FnMut(&scl_ir::EnvSpec, &ImageAt, &mut Lowered),
) {
    let at = ImageAt {
        origin: format!("env {}", quote::comment(env_name)),
        path_prefix: String::new(),
        field_prefix: String::new(),
    };
    walk_images(spec, &at, out, image);
}

fn walk_images(
    spec: &scl_ir::EnvSpec,
    at: &ImageAt,
    out: &mut Lowered,
    image: &mut dyn FnMut(&scl_ir::EnvSpec, &ImageAt, &mut Lowered),
) {
    if spec.base.is_some() {
        image(spec, at, out);
    } else if spec.services.is_empty() {
        out.errors.push(FieldError {
            field: format!("{}base", at.field_prefix),
            kind: ErrorKind::NoBase,
            message: "not set and there are no services: there is no image to build (an env without `base` can only be a parent of others)".into(),
            help: Some("set `base = image(\"debian:12.5\")`, or extend an env that has one".into()),
        });
    }
    let names: Vec<&str> = spec.services.keys().map(String::as_str).collect();
    let clashes = case_clashes(&names);
    for (i, (name, service)) in spec.services.iter().enumerate() {
        let field = format!("{}services.{name}", at.field_prefix);
        if !is_folder_name(name) {
            out.errors.push(FieldError {
                field,
                kind: ErrorKind::Unwritable,
                message: "the service name cannot be used as a folder name ([A-Za-z0-9_.-]+)"
                    .into(),
                help: None,
            });
            continue;
        }
        // The service's folder `<name>/` sits beside the env's own files.
        if let Some(why) = reserved_output_name(name) {
            out.errors.push(FieldError {
                field,
                kind: ErrorKind::NameClash,
                message: format!("the service's folder `{}{name}/` {why}", at.path_prefix),
                help: Some("rename the service".into()),
            });
            continue;
        }
        if let Some(&(_, j)) = clashes.iter().find(|(k, _)| *k == i) {
            out.errors.push(FieldError {
                field,
                kind: ErrorKind::NameClash,
                message: format!(
                    "the services `{}` and `{name}` differ only in case, so on a case-insensitive file system (macOS, Windows) their folders would be one",
                    names[j]
                ),
                help: Some("rename one of the services".into()),
            });
            continue;
        }
        let inner = ImageAt {
            origin: format!("{}, service {name}", at.origin),
            path_prefix: format!("{}{name}/", at.path_prefix),
            field_prefix: format!("{field}."),
        };
        walk_images(service, &inner, out, image);
    }
}

/// The pairs of `names` that are the same folder on a case-insensitive file
/// system (equal after ASCII and Unicode lower-casing): `(i, j)` with `j < i`
/// the first name that `names[i]` clashes with, for each such `i`, in order.
/// `["WebUI", "api", "webui"]` → `[(2, 0)]`.
pub fn case_clashes<S: AsRef<str>>(names: &[S]) -> Vec<(usize, usize)> {
    let mut first: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        match first.entry(n.as_ref().to_lowercase()) {
            std::collections::btree_map::Entry::Occupied(e) => out.push((i, *e.get())),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(i);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names() {
        for bad in [
            ".sclc-output",
            "Dockerfile",
            "dockerfile",
            "DOCKERFILE.dockerignore",
            ".dockerignore",
            "x.dockerignore",
            ".sclc-tmp-abc",
            ".SCLC-lock",
        ] {
            assert!(reserved_output_name(bad).is_some(), "{bad}");
        }
        for ok in ["webui", "Dockerfiles", "api.v2", ".sclc", "dockerignore"] {
            assert_eq!(reserved_output_name(ok), None, "{ok}");
        }
        assert_eq!(
            case_clashes(&["WebUI", "api", "webui", "API", "x"]),
            [(2, 0), (3, 1)]
        );
        assert!(case_clashes(&["a", "b"]).is_empty());
    }
}
