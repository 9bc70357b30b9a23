//! Lowering envs to a target, with the target's findings located in the source.

use crate::{Analysis, Diagnostic, FileId};
use scl_backends::{Backend, LowerCx, Lowered};

/// A target format: one backend of the registry ([`scl_backends::REGISTRY`]).
#[derive(Clone, Copy)]
pub struct Target(&'static dyn Backend);

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.name())
    }
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Target {}

impl Target {
    /// The Dockerfile target.
    pub const DOCKER: Target = Target(&scl_backends::docker::Docker);

    /// Every target, in registry order.
    pub fn all() -> impl Iterator<Item = Target> {
        scl_backends::REGISTRY.iter().map(|b| Target(*b))
    }

    /// The targets `--target all` writes (registry order).
    pub fn in_all() -> impl Iterator<Item = Target> {
        scl_backends::backend::all().map(Target)
    }

    /// The target called `name` (`docker`), if implemented.
    pub fn from_name(name: &str) -> Option<Target> {
        scl_backends::backend::backend(name).map(Target)
    }

    /// The name the CLI takes and diagnostics start with.
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// The backend.
    pub fn backend(self) -> &'static dyn Backend {
        self.0
    }
}

/// Options of a lowering that do not come from the source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// `--image-repo`: the repository of the images (default: the env's name).
    pub image_repo: Option<String>,
    /// `--host-root`: the workspace root's absolute path on the machines
    /// that run the pods ([`scl_backends::LowerCx::host_root`]).
    pub host_root: Option<String>,
}

/// What [`Analysis::lower`] made.
#[derive(Debug, Default)]
pub struct Lowering {
    /// Per env (in the order asked), what the backend made.
    pub outputs: Vec<(String, Lowered)>,
    /// E0406 for envs whose names differ only in case, then each env's
    /// warnings (W0004) and errors (E0401–E0408), located at the source of
    /// their field.
    pub diagnostics: Vec<Diagnostic>,
    /// True when an env asked for has no IR (it is not an env of the file,
    /// or its evaluation failed; its errors are reported by a check):
    /// nothing was lowered from it on.
    pub incomplete: bool,
}

pub(crate) fn lower(
    a: &Analysis,
    file: FileId,
    envs: &[String],
    target: Target,
    options: &LowerOptions,
) -> Lowering {
    let mut out = Lowering::default();
    let key = a.key(file);
    // Each env is the folder `--out/<env>`: two envs whose names differ
    // only in case would be one folder on a case-insensitive file system.
    for (i, j) in scl_backends::case_clashes(envs) {
        let span = scl_db::checks::env_name_span(a.db(), a.source_file(file), &envs[i]);
        let mut d = Diagnostic::error(
            "E0406",
            span,
            format!(
                "the envs `{}` and `{}` differ only in case, so on a case-insensitive file system (macOS, Windows) their output folders would be one",
                envs[j], envs[i]
            ),
        )
        .with_help("rename one of the envs");
        d.at.file = key.clone();
        out.diagnostics.push(d);
    }
    let values = scl_db::module_values(a.db(), a.source_file(file));
    for name in envs {
        let Some(fin) = values.final_env(name) else {
            out.incomplete = true;
            return out;
        };
        let Some(spec) = &fin.spec else {
            out.incomplete = true;
            return out;
        };
        let cx = lower_cx(a.db(), name, spec, options);
        let l = target.0.lower(spec, &cx);
        // Point each warning and error at the source of its field, else
        // (a default, a field no item wrote) at the env's name.
        let env_span = scl_db::checks::env_name_span(a.db(), a.source_file(file), name);
        // A list element at its own expression (`volumes[0]` at the
        // `s3.mount(...)` that made it, not at the last item that appended
        // to the list), as the domain checks place theirs.
        let located = |code: &'static str, field: &str, message: String, error: bool| {
            let origin =
                scl_db::checks::locate_field(a.db(), a.source_file(file), name, spec, field);
            let span = origin.map_or(env_span, |(_, span)| span);
            let mut d = if error {
                Diagnostic::error(code, span, message)
            } else {
                Diagnostic::warning(code, span, message)
            };
            d.at.file = match origin {
                Some((module, _)) => a.key(FileId(module.0)),
                None => key.clone(),
            };
            d
        };
        let t = target.name();
        for w in &l.warnings {
            let message = format!("{t}: `{}`: {}", w.field, w.message);
            out.diagnostics
                .push(located("W0004", &w.field, message, false));
        }
        for e in &l.errors {
            let code = match e.kind {
                scl_backends::ErrorKind::Unwritable => "E0401",
                scl_backends::ErrorKind::Misread => "E0402",
                scl_backends::ErrorKind::SystemFolder => "E0403",
                scl_backends::ErrorKind::Reserved => "E0404",
                scl_backends::ErrorKind::PackagePattern => "E0405",
                scl_backends::ErrorKind::NameClash => "E0406",
                scl_backends::ErrorKind::IgnorePattern => "E0407",
                scl_backends::ErrorKind::BaseLacks => "E0408",
                scl_backends::ErrorKind::NoBase => "E0209",
            };
            let message = format!("{t}: `{}`: {}", e.field, e.message);
            let mut d = located(code, &e.field, message, true);
            if let Some(h) = &e.help {
                d = d.with_help(h.clone());
            }
            out.diagnostics.push(d);
        }
        out.outputs.push((name.clone(), l));
    }
    out
}

/// The context a backend lowers env `name` with.
/// `files` holds the text of each requirements file the IR names (and its
/// services name) whose bytes, read now through the database, still have
/// the SHA-256 the IR records: the conda target inlines them.
pub(crate) fn lower_cx(
    db: &scl_db::Database,
    name: &str,
    spec: &scl_ir::EnvSpec,
    options: &LowerOptions,
) -> LowerCx {
    let mut files = std::collections::BTreeMap::new();
    let root = db.root();
    let mut todo = vec![spec];
    while let Some(s) = todo.pop() {
        for r in s.python.iter().flat_map(|p| &p.requirements) {
            let file = db.open(&root.join(&r.path));
            if let Some(bytes) = file.contents(db).as_deref() {
                if scl_ir::sha256_hex(bytes) == r.sha256 {
                    if let Ok(text) = std::str::from_utf8(bytes) {
                        files.insert(r.path.clone(), text.to_string());
                    }
                }
            }
        }
        todo.extend(s.services.values().map(|v| &**v));
    }
    LowerCx {
        env: name.to_string(),
        image_repo: options.image_repo.clone(),
        context_sha256: context_sha256(db, spec),
        files,
        host_root: options.host_root.clone(),
    }
}

/// The hash of what the build context of `spec` sends
/// ([`scl_backends::context_hash`]), by the rule of
/// [`scl_backends::context`]: its requirements files (and its services'),
/// by path and the SHA-256 the IR records, and every file the `files`
/// copies read, by path and the SHA-256 of its bytes read now (a folder:
/// every file below it; symbolic links are not followed; a source that is
/// missing counts as `missing`), less what `ignore` leaves out and the
/// names never sent (`.git`, `scl.lock`, `.sclc-*`, sclc's output
/// folders). So a changed source file gives a new image tag, and a file
/// the image does not get does not. Files are hashed as streams.
fn context_sha256(db: &scl_db::Database, spec: &scl_ir::EnvSpec) -> String {
    let system = db.system();
    let root = db.root();
    let mut files = Vec::new();
    let mut todo = vec![spec];
    while let Some(s) = todo.pop() {
        let ignore = scl_backends::context::Ignore::new(&s.ignore);
        if let Some(p) = &s.python {
            for r in &p.requirements {
                files.push((r.path.clone(), r.sha256.clone()));
            }
        }
        for c in &s.files {
            let from = c.from.trim_start_matches("./");
            let from = if from == "." { "" } else { from };
            hash_tree(&**system, &root, from, &ignore, &mut files);
        }
        todo.extend(s.services.values().map(|v| &**v));
    }
    files.sort();
    files.dedup();
    scl_backends::context_hash(&files)
}

/// Adds `(path, sha256)` for the file at workspace-relative `rel`, or for
/// every file below it when it is a folder, less what `ignore` matches and
/// the names never sent ([`scl_backends::context::never_sent`]).
fn hash_tree(
    system: &dyn scl_db::System,
    root: &std::path::Path,
    rel: &str,
    ignore: &scl_backends::context::Ignore,
    out: &mut Vec<(String, String)>,
) {
    if !rel.is_empty() && (ignore.ignores(rel) || scl_backends::context::never_sent(rel)) {
        return;
    }
    let path = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    match system.kind(&path) {
        scl_db::PathKind::File => {
            let hash = match system.sha256(&path) {
                Ok(Some(h)) => h,
                Ok(None) => "missing".into(),
                Err(_) => "unreadable".into(),
            };
            out.push((rel.to_string(), hash));
        }
        scl_db::PathKind::Dir => {
            let entries = system.read_dir(&path).unwrap_or_default();
            // sclc's own outputs (an env folder holds the marker file):
            // hashing them would make the tag depend on the last build.
            if entries
                .iter()
                .any(|e| e.name == scl_backends::OWN_FILE_NAMES[0])
            {
                return;
            }
            for e in entries {
                if e.is_link {
                    continue;
                }
                let child = if rel.is_empty() {
                    e.name.clone()
                } else {
                    format!("{rel}/{}", e.name)
                };
                hash_tree(system, root, &child, ignore, out);
            }
        }
        scl_db::PathKind::Missing => out.push((rel.to_string(), "missing".into())),
    }
}
