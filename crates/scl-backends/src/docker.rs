//! The Dockerfile backend: [`lower`] turns one [`EnvSpec`] into a
//! `Dockerfile` (plus `Dockerfile.dockerignore` and `.dockerignore` when the
//! env has `ignore` globs), or, for an env with `services`, one folder of
//! those per service.
//!
//! Layout of a generated Dockerfile, chosen for the layer cache (what changes
//! least comes first) and for hadolint (`.hadolint.yaml` at the workspace
//! root lists the rules it ignores, each with its reason). No here-document
//! is ever written (Podman/buildah do not read them):
//!
//! 1. a `# syntax=` line only when `ADD --checksum` needs the Dockerfile 1.7
//!    frontend, then a header comment (env, IR hash, how to build);
//! 2. `FROM` the exact image ([`scl_ir::ImageRef::pinned`]), a literal word;
//! 3. system packages in one layer with the base image's manager (apt: `apt-get
//!    update`, `--no-install-recommends`, lists removed in the same `RUN`;
//!    apk: `--no-cache`; dnf: `dnf clean all`), in IR order, after `--` for
//!    apt and apk; dnf 5 has no `--`, so a dnf package starting with `-` is
//!    refused. For apt, only Debian package names are written
//!    ([`apt_package`]: apt reads anything else as a pattern, a glob or a
//!    regular expression), with `-o APT::Cmd::Pattern-Only=true`, and each
//!    name with `.` or `+` is checked after the install with `dpkg-query`
//!    (the build stops unless a package of exactly that name is installed);
//! 4. the runtime user (`useradd`, or busybox `adduser` on apk images),
//!    unless it is root. If the base image already has a user of that name
//!    with another uid, the build stops with a message: files and processes
//!    always belong to the IR's uid. The same layer notes whether `workdir`
//!    exists in the base image (`/tmp/scl/own-workdir`);
//! 5. assets (a URL through `ADD`, verified by `--checksum` when the IR has a
//!    sha256 and owned by the runtime uid; a Hugging Face download by
//!    `hf_hub_download`/`snapshot_download` of a pinned `huggingface_hub`
//!    installed to a scratch folder and removed in the same layer, the
//!    values passed as `python3 -c` arguments, which nothing reads as
//!    options). They come before the Python packages so that editing a
//!    requirement does not download the weights again;
//! 6. Python: conda packages, then the requirements files (copied to
//!    `/tmp/scl/requirements/<n>-<basename>` and installed before any source
//!    file is copied), then `python.packages` after `--`; index URLs and
//!    channels as `--opt=value`; never Python itself: the base image's
//!    `python3` is used;
//! 7. `setup` steps, one `RUN` each, in order, as root: the step's lines are
//!    single-quoted `printf` arguments written to `/tmp/scl/setup.sh`, which
//!    `sh -e` runs, so a Dockerfile parser reads nothing of the step (no
//!    continuation, here-document or `RUN` flag); a step with a `'` is also
//!    shown as it is in a comment;
//! 8. `ENV` for plain vars (secrets only named in a comment), the run-time
//!    mounts as a comment;
//! 9. when `workdir` did not exist in the base image, the runtime user gets
//!    it and everything in it (all made by this build); a folder the base
//!    image has keeps its owner, and `/` and the top-level system folders are
//!    refused as `workdir`; then `USER <uid>` (numeric, so Kubernetes
//!    `runAsNonRoot` can check it), `WORKDIR`, and the `files` copies
//!    (`COPY --chown=<uid>`), last because source changes most;
//! 10. `EXPOSE`, `LABEL` (description, the IR labels, `dev.scl.ir.sha256`),
//!     `ENTRYPOINT`/`CMD` in exec form.
//!
//! Service folders (`<service>/`) may not take the name of a file written
//! beside them or differ from another only in case
//! ([`crate::reserved_output_name`], [`crate::case_clashes`]), and `ignore`
//! globs must compile in BuildKit's pattern matcher ([`quote::glob_problem`]).
//!
//! The build context is the workspace root: every `COPY` source is the
//! workspace-relative path the IR holds, refused when `COPY` would read it as
//! a glob (`*`, `?`, `[`, `\`).
//!
//! A value that cannot be written safely is a [`FieldError`] and the env gets
//! no artifact at all; a field Docker cannot express is a [`FieldWarning`].

use minijinja::{context, AutoEscape, Environment, UndefinedBehavior, Value};
use scl_ir::{Asset, EnvSpec, PythonManager, SystemManager, VarValue, VolumeMode};

use scl_ir::bases::{BaseInfo, Family, PythonEnv, CONDA_IMAGES, VENV};
use scl_ir::SecretRef;

use crate::expresses::Expresses;
use crate::quote;
use crate::{Artifact, ErrorKind, FieldError, FieldWarning, Lowered};

const DOCKERFILE_TEMPLATE: &str = include_str!("templates/docker/Dockerfile.j2");
const DOCKERIGNORE_TEMPLATE: &str = include_str!("templates/docker/dockerignore.j2");

/// The Dockerfile frontend named in the `# syntax=` line when one is needed:
/// `ADD --checksum` needs 1.6 or later (Docker's Dockerfile reference,
/// "ADD --checksum").
pub const DOCKERFILE_SYNTAX: &str = "docker/dockerfile:1.7";

/// The `huggingface_hub` release used to download Hugging Face assets
/// (`hf_hub_download(repo_id, filename, revision=, local_dir=)` and
/// `snapshot_download(repo_id, revision=, local_dir=)`).
pub const HUGGINGFACE_HUB: &str = "huggingface_hub==0.23.4";

/// The `uv` release installed (with pip) for `python.manager = .uv`.
pub const UV: &str = "uv==0.13.9";

/// The longest text one value may take in the Dockerfile (after quoting),
/// in bytes. BuildKit reads a Dockerfile line of at most 65535 bytes
/// (`bufio.MaxScanTokenSize`), and no generated line holds more than three
/// values, so 20,000 keeps every line readable.
pub const MAX_VALUE_BYTES: usize = 20_000;

/// BuildKit's limit on one physical line (`parser.go`, `handleScannerError`).
const MAX_LINE_BYTES: usize = 65_535;

/// The default output folder of `sclc build`, used only in the header's
/// build hint.
const OUT_DIR: &str = "out";
const PIP: &str = "python3 -m pip install --no-cache-dir";
const UV_PIP: &str = "uv pip install --system --no-cache";
const UV_PIP_VENV: &str = "uv pip install --no-cache";
const HF_TMP: &str = "/tmp/scl/hf";
/// The download of one Hugging Face asset: `python3 -c` ends the
/// interpreter's options, so the repo, revision, folder and file names that
/// follow are plain `sys.argv` entries, never options. Each named file is
/// fetched by its exact name; no names means the whole repo.
const HF_DOWNLOAD: &str = "import sys; from huggingface_hub import hf_hub_download, snapshot_download; repo, revision, to, *files = sys.argv[1:]; [hf_hub_download(repo, f, revision=revision, local_dir=to) for f in files] if files else snapshot_download(repo, revision=revision, local_dir=to)";
const REQUIREMENTS_DIR: &str = "/tmp/scl/requirements";
const SETUP_SCRIPT: &str = "/tmp/scl/setup.sh";
const OWN_WORKDIR_MARK: &str = "/tmp/scl/own-workdir";
const SECRET_HINT: &str = "pass with docker run -e / Kubernetes secretKeyRef";
const DESCRIPTION_LABEL: &str = "org.opencontainers.image.description";
const HASH_LABEL: &str = "dev.scl.ir.sha256";

/// Lowers `spec`, the IR of the env called `env_name`, to Dockerfile
/// artifacts.
///
/// Returns, for an env with a `base`: `Dockerfile`, and when `ignore` is
/// non-empty `Dockerfile.dockerignore` and `.dockerignore` (same contents).
/// For each entry of `services`, the same files under `<service>/` (service
/// names sorted).
///
/// Errors are returned in [`Lowered::errors`], and then
/// [`Lowered::artifacts`] is empty: a value that cannot be written safely
/// (a line break in a package name or an `ENV` value, a space in an `ENV`
/// name, an `ignore` glob `.dockerignore` cannot hold, a value a tool would
/// read as an option or a glob, `/etc` as `workdir`, …) is never left out of
/// the output. An env (or service) with neither `base` nor `services` is an
/// error too: there is nothing to build. Fields Docker cannot express are
/// [`Lowered::warnings`]: the set fields [`EXPRESSES`] does not say it
/// writes (`resources` and `distributed`, run-time settings), and values it
/// writes only in part: `python.version` on a Python image of another
/// version, `user` unset,
/// conda channels without conda packages. The output depends only on `spec`
/// and `env_name`.
///
/// # Panics
/// Only if the embedded templates are broken (covered by the crate's tests).
pub fn lower(spec: &EnvSpec, env_name: &str) -> Lowered {
    let mut out = Lowered::default();
    let origin = format!("env {}", quote::comment(env_name));
    lower_into(spec, env_name, &origin, "", "", &mut out);
    if !out.errors.is_empty() {
        out.artifacts.clear();
    }
    out
}

/// Lowers one built env (and its services) into `out`: artifacts under
/// `path_prefix` (`""` or `"webui/"`), warnings and errors under
/// `field_prefix` (`""` or `"services.webui."`).
fn lower_into(
    spec: &EnvSpec,
    env_name: &str,
    origin: &str,
    path_prefix: &str,
    field_prefix: &str,
    out: &mut Lowered,
) {
    if spec.base.is_some() {
        let mut job = Job {
            spec,
            prefix: field_prefix,
            warnings: &mut out.warnings,
            errors: &mut out.errors,
        };
        let dockerfile_path = format!(
            "{OUT_DIR}/{}/{path_prefix}Dockerfile",
            quote::comment(env_name)
        );
        let dockerfile = job.dockerfile(origin, &dockerfile_path);
        let ignore = job.dockerignore(origin);
        if let Some(text) = dockerfile {
            out.artifacts.push(Artifact {
                path: format!("{path_prefix}Dockerfile"),
                contents: text,
            });
            if let Some(ignore) = ignore {
                out.artifacts.push(Artifact {
                    path: format!("{path_prefix}Dockerfile.dockerignore"),
                    contents: ignore.clone(),
                });
                out.artifacts.push(Artifact {
                    path: format!("{path_prefix}.dockerignore"),
                    contents: ignore,
                });
            }
        }
    } else if spec.services.is_empty() {
        out.errors.push(FieldError {
            field: format!("{field_prefix}base"),
            kind: ErrorKind::NoBase,
            message: "not set and there are no services: there is no image to build (an env without `base` can only be a parent of others)".into(),
            help: Some("set `base = image(\"debian:12.5\")`, or extend an env that has one".into()),
        });
    }
    let names: Vec<&str> = spec.services.keys().map(String::as_str).collect();
    let clashes = crate::case_clashes(&names);
    for (i, (name, service)) in spec.services.iter().enumerate() {
        let field = format!("{field_prefix}services.{name}");
        if !crate::is_folder_name(name) {
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
        if let Some(why) = crate::reserved_output_name(name) {
            out.errors.push(FieldError {
                field,
                kind: ErrorKind::NameClash,
                message: format!("the service's folder `{path_prefix}{name}/` {why}"),
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
        let origin = format!("{origin}, service {name}");
        lower_into(
            service,
            env_name,
            &origin,
            &format!("{path_prefix}{name}/"),
            &format!("{field}."),
            out,
        );
    }
}

/// The Dockerfile target in the [`crate::REGISTRY`].
pub struct Docker;

impl crate::Backend for Docker {
    fn name(&self) -> &'static str {
        "docker"
    }
    fn summary(&self) -> &'static str {
        "a Dockerfile (and .dockerignore) per image: docker build / podman build"
    }
    fn layout(&self) -> &'static [&'static str] {
        &[
            "Dockerfile",
            "Dockerfile.dockerignore",
            ".dockerignore",
            "<service>/Dockerfile",
            "<service>/Dockerfile.dockerignore",
            "<service>/.dockerignore",
        ]
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &crate::LowerCx) -> Lowered {
        lower(spec, &cx.env)
    }
}

/// The IR fields the Docker target expresses ([`crate::expresses`]): a
/// field set in an env and not written here is a warning, computed from
/// this list.
pub const EXPRESSES: Expresses = Expresses {
    target: "docker",
    writes: &[
        "assets",
        "base",
        "command",
        "conda",
        "description",
        "entrypoint",
        "files",
        "ignore",
        "labels",
        "ports",
        "python",
        "services",
        "setup",
        "system",
        "user",
        "vars",
        // As comments: a volume is mounted at run time.
        "volumes",
        "workdir",
        "writable",
    ],
    // Run-time settings an image cannot hold.
    instead: &[
        (
            "builder",
            "multi-stage builds are not written yet: the Python packages are built and installed in `base`",
        ),
        (
            "resources",
            "requests/limits are set at run time (docker run --cpus/--memory/--gpus, compose or the k8s target); an image does not carry them",
        ),
        (
            "distributed",
            "distributed launch is applied by the k8s target; the Dockerfile runs one process",
        ),
    ],
    not_needed: &[
        (
            "depends_on",
            "it orders the start of services; each service's image is built on its own",
        ),
        (
            "test",
            "smoke tests run in the built image: `sclc build` prints the `docker run` line for each",
        ),
    ],
};

/// The command lines that build, run and smoke-test the images of `spec`
/// (the env, or each of its services that is built), as `sclc build` prints
/// them after writing: `folder` is the env's output folder and `context`
/// the build context (the workspace root), both as the user would type
/// them. Per image: `docker build -f FOLDER/[SERVICE/]Dockerfile -t IMAGE
/// [--secret id=ID,env=VAR]… CONTEXT`, then `docker run --rm` with `-e` for
/// each secret var (its value comes from the caller's environment, never
/// from a file sclc writes), `-p P:P` per port, `--mount type=bind,…` for
/// `host:` volumes (CSV fields quoted as docker's parser reads them) and
/// `--gpus N` for a GPU limit, then one `docker run --rm --entrypoint sh
/// IMAGE -c TEST` per `test` command. Every word is quoted by
/// [`quote::shell`]. Secrets reach `docker build` from environment
/// variables named after their id (`hf.token` → `HF_TOKEN`).
pub fn commands(spec: &EnvSpec, cx: &crate::LowerCx, folder: &str, context: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo: Vec<(Option<&str>, &EnvSpec)> = vec![(None, spec)];
    todo.extend(spec.services.iter().map(|(n, s)| (Some(n.as_str()), &**s)));
    for (service, s) in todo {
        if s.base.is_none() {
            continue;
        }
        let image = cx.image(s, service);
        let dockerfile = match service {
            Some(n) => format!("{folder}/{n}/Dockerfile"),
            None => format!("{folder}/Dockerfile"),
        };
        let mut build = vec![
            "docker".to_string(),
            "build".into(),
            "-f".into(),
            quote::shell(&dockerfile),
            "-t".into(),
            quote::shell(&image),
        ];
        let mut ids: Vec<String> = Vec::new();
        for r in build_secrets(s) {
            if let Some(id) = secret_id(r) {
                if ids.contains(&id) {
                    continue;
                }
                ids.push(id.clone());
                build.push("--secret".into());
                build.push(quote::shell(&format!(
                    "id={id},env={}",
                    secret_env_name(&id)
                )));
            }
        }
        build.push(quote::shell(context));
        out.push(build.join(" "));
        let mut run = vec!["docker".to_string(), "run".into(), "--rm".into()];
        for (k, v) in &s.vars {
            if matches!(v, VarValue::Secret(_)) {
                run.push("-e".into());
                run.push(quote::shell(k));
            }
        }
        for p in &s.ports {
            run.push("-p".into());
            run.push(format!("{p}:{p}"));
        }
        for v in &s.volumes {
            if let Some(path) = v.source.strip_prefix("host:") {
                // `--mount`, whose CSV fields can hold `:` and `,` (a `-v`
                // value is split on `:`).
                let ro = if v.mode == VolumeMode::ReadOnly {
                    ",readonly"
                } else {
                    ""
                };
                run.push("--mount".into());
                let host = match path.trim_start_matches("./") {
                    "" | "." => context.to_string(),
                    p => format!("{context}/{p}"),
                };
                run.push(quote::shell(&format!(
                    "type=bind,{},{}{ro}",
                    csv_field(&format!("source={host}")),
                    csv_field(&format!("target={}", v.mount))
                )));
            }
        }
        let gpus = s
            .resources
            .as_ref()
            .and_then(|r| r.limits.as_ref().or(r.requests.as_ref()))
            .and_then(|l| l.gpu.as_ref())
            .map_or(0, |g| g.count);
        if gpus > 0 {
            run.push("--gpus".into());
            run.push(gpus.to_string());
        }
        run.push(quote::shell(&image));
        out.push(run.join(" "));
        for t in &s.test {
            out.push(format!(
                "docker run --rm --entrypoint sh {} -c -- {}",
                quote::shell(&image),
                quote::shell(t)
            ));
        }
    }
    out
}

/// The build secrets an env's Dockerfile mounts, in order: each Hugging
/// Face token, then the index credentials.
fn build_secrets(spec: &EnvSpec) -> Vec<&SecretRef> {
    let mut v: Vec<&SecretRef> = spec
        .assets
        .iter()
        .filter_map(|a| match a {
            Asset::Huggingface { token, .. } => token.as_ref(),
            Asset::Url { .. } => None,
        })
        .collect();
    v.extend(
        spec.python
            .as_ref()
            .and_then(|p| p.index_credentials.as_ref()),
    );
    v
}

/// The environment variable `docker build --secret id=ID,env=VAR` reads a
/// secret from: the id upper-cased, `.` and `-` as `_` (`hf.token` →
/// `HF_TOKEN`), with a `_` in front when it would start with a digit (a
/// shell name cannot).
pub fn secret_env_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| match c {
            '.' | '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else {
        name
    }
}

/// One field of a CSV record as Go's `encoding/csv` reads it (docker's
/// `--mount` parser): quoted, with `"` doubled, when it holds `,`, `"` or a
/// line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The Python set-up an image needs ([`Job::python_setup`]).
#[derive(Default)]
struct PythonSetup {
    /// OS packages to install first (`python3`, `python3-venv`).
    packages: Vec<&'static str>,
    /// Make a virtual environment at [`VENV`] and put it first on `PATH`.
    venv: bool,
    /// Why, for the comment.
    why: &'static str,
}

/// The id of a build secret for `r`: `<secret>.<key>`, when both are
/// `[A-Za-z0-9_.-]+` (what `docker build --secret id=…` and
/// `RUN --mount=type=secret,id=…` carry without quoting).
pub fn secret_id(r: &SecretRef) -> Option<String> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    (ok(&r.secret) && ok(&r.key)).then(|| format!("{}.{}", r.secret, r.key))
}

/// The state of lowering one built env.
struct Job<'a> {
    spec: &'a EnvSpec,
    prefix: &'a str,
    warnings: &'a mut Vec<FieldWarning>,
    errors: &'a mut Vec<FieldError>,
}

impl Job<'_> {
    fn warn(&mut self, field: impl AsRef<str>, message: impl Into<String>) {
        self.warnings.push(FieldWarning {
            field: format!("{}{}", self.prefix, field.as_ref()),
            message: message.into(),
        });
    }

    fn refuse(
        &mut self,
        field: impl AsRef<str>,
        kind: ErrorKind,
        message: impl Into<String>,
        help: Option<&str>,
    ) {
        self.errors.push(FieldError {
            field: format!("{}{}", self.prefix, field.as_ref()),
            kind,
            message: message.into(),
            help: help.map(str::to_string),
        });
    }

    /// `text` (a value already quoted for its position) when it fits on a
    /// Dockerfile line ([`MAX_VALUE_BYTES`]), else `None` with an error.
    fn fits(&mut self, field: impl AsRef<str>, text: String) -> Option<String> {
        if text.len() <= MAX_VALUE_BYTES {
            return Some(text);
        }
        self.refuse(
            field,
            ErrorKind::Unwritable,
            format!(
                "is {} bytes long once quoted, more than the {MAX_VALUE_BYTES} one Dockerfile value may take (BuildKit reads lines of at most {MAX_LINE_BYTES} bytes)",
                text.len()
            ),
            None,
        );
        None
    }

    /// Text for a `#` comment line, or `None` when it would be too long.
    fn comment(&mut self, field: impl AsRef<str>, text: &str) -> Option<String> {
        let c = quote::comment(text);
        self.fits(field, c)
    }

    /// `value` shell-quoted, or `None` (with an error on `field`) when it
    /// holds a line break a `RUN` line cannot carry, or is too long.
    fn shell_arg(&mut self, field: impl AsRef<str>, value: &str) -> Option<String> {
        if quote::is_unwritable(value) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                quote::Unrepresentable.to_string(),
                None,
            );
            return None;
        }
        self.fits(field, quote::shell(value))
    }

    /// Like [`Job::shell_arg`], but also refuses the empty string (`what` names
    /// the value: "a package name").
    fn shell_name(&mut self, field: impl AsRef<str>, value: &str, what: &str) -> Option<String> {
        if value.is_empty() {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                format!("is empty, which is not {what}"),
                None,
            );
            return None;
        }
        self.shell_arg(field, value)
    }

    /// A `COPY` source: refused when BuildKit would read it as a pattern
    /// (`*`, `?`, `[`, or `\`, its escape character), so that the file
    /// copied is always the one the IR names and hashed.
    fn copy_source(&mut self, field: impl AsRef<str>, path: &str) -> bool {
        if let Some(c) = path.chars().find(|c| matches!(c, '*' | '?' | '[' | '\\')) {
            self.refuse(
                field,
                ErrorKind::Misread,
                format!("the path {path:?} has `{c}`, which COPY reads as a glob pattern (or its escape), so another file could be copied than the one sclc hashed"),
                Some("rename the file so that its path has none of `*`, `?`, `[`, `\\`"),
            );
            return false;
        }
        true
    }

    fn dockerfile(&mut self, origin: &str, dockerfile_path: &str) -> Option<String> {
        let spec = self.spec;
        let base = spec.base.as_ref()?;
        let from = self.from(base);
        let manager = spec
            .system
            .as_ref()
            .map(|s| s.manager)
            .unwrap_or_else(|| infer_manager(&base.reference));
        let mut needs_syntax = false;

        // What the Dockerfile does not write ([`EXPRESSES`]).
        for w in crate::expresses::unexpressed(spec, &EXPRESSES) {
            self.warn(w.field, w.message);
        }

        self.distinct_build_secrets();
        let info = scl_ir::bases::info(&base.reference);
        let setup_py = self.python_setup(&info, manager);
        let system = self.system(manager, &setup_py.packages);
        let workdir = self.workdir();
        let (create_user, user, chown) = self.user(manager, workdir.is_some());
        let assets = self.assets(&chown, &mut needs_syntax);
        let python = self.python(base, &info, setup_py.venv, &mut needs_syntax);
        let writable = self.writable(&chown);
        let setup = self.setup();
        let (env, secrets) = self.vars();

        let mut mounts = Vec::new();
        for (i, v) in spec.volumes.iter().enumerate() {
            let text = format!("{} <- {} ({})", v.mount, v.source, mode_name(v.mode));
            mounts.extend(self.comment(format!("volumes[{i}]"), &text));
        }

        // The runtime user gets the working directory only when this build
        // made it (see the user step, which notes whether it existed).
        let own_workdir = match (&spec.workdir, &spec.user, &workdir) {
            (Some(w), Some(u), Some(_)) if !u.is_root() => context! {
                mark => OWN_WORKDIR_MARK, dir => quote::shell(w), uid => u.uid,
            },
            _ => Value::from(()),
        };

        let files = self.files(&chown);
        let ports: Vec<String> = spec.ports.iter().map(|p| p.to_string()).collect();
        let labels = self.labels();
        let entrypoint = self.exec_form("entrypoint", &spec.entrypoint);
        let cmd = self.exec_form("command", &spec.command);

        if !self.errors.is_empty() {
            return None;
        }
        let ctx = context! {
            syntax => if needs_syntax { DOCKERFILE_SYNTAX } else { "" },
            origin => origin,
            ir_hash => spec.content_hash(),
            dockerfile_path => dockerfile_path,
            from => from,
            system => system,
            create_user => create_user,
            venv => if setup_py.venv { context! { dir => VENV, why => setup_py.why } } else { Value::from(()) },
            writable => writable,
            pip => PIP,
            hf_tmp => HF_TMP,
            hf_hub => HUGGINGFACE_HUB,
            hf_download => quote::shell(HF_DOWNLOAD),
            assets => assets,
            python => python,
            setup => setup,
            setup_script => SETUP_SCRIPT,
            env => env,
            secrets => secrets,
            mounts => mounts,
            own_workdir => own_workdir,
            user => user,
            workdir => workdir.unwrap_or_default(),
            files => files,
            ports => ports,
            labels => labels,
            entrypoint => entrypoint,
            cmd => cmd,
        };
        let text = render("Dockerfile", ctx);
        self.check_lines(&text, "the generated Dockerfile")
            .then_some(text)
    }

    /// A safety net behind the per-value limits: every physical line must be
    /// shorter than BuildKit's limit.
    fn check_lines(&mut self, text: &str, what: &str) -> bool {
        if let Some(n) = text
            .split('\n')
            .map(str::len)
            .find(|&n| n >= MAX_LINE_BYTES)
        {
            let field = self.prefix.trim_end_matches('.').to_string();
            self.errors.push(FieldError {
                field,
                kind: ErrorKind::Unwritable,
                message: format!(
                    "{what} would have a line of {n} bytes; BuildKit reads lines of at most {MAX_LINE_BYTES}"
                ),
                help: None,
            });
            return false;
        }
        true
    }

    /// The `FROM` word: the pinned reference, written bare, refused unless
    /// it is an image reference by the grammar of the distribution
    /// reference ([`is_image_reference`]), so nothing in it is a variable,
    /// a flag or a quote, and every Dockerfile parser reads it.
    fn from(&mut self, base: &scl_ir::ImageRef) -> String {
        let pinned = base.pinned();
        if !is_image_reference(&pinned) {
            self.refuse(
                "base",
                ErrorKind::Unwritable,
                format!(
                    "{:?} is not an image reference FROM can hold as a literal word",
                    quote::comment(&pinned)
                ),
                Some("write the reference as `name[:tag][@sha256:<hex>]`"),
            );
        }
        self.fits("base", pinned).unwrap_or_default()
    }

    /// The system packages step, or none. For apt, each package must be
    /// an [`apt_package`] argument, and the names apt could still misread
    /// ([`apt_needs_exact_check`]) are checked after the install.
    fn system(&mut self, manager: SystemManager, extra: &[&str]) -> Value {
        let none = Vec::new();
        let listed = self.spec.system.as_ref().map_or(&none, |s| &s.packages);
        let mut packages = Vec::new();
        let mut verify = Vec::new();
        // What the Python set-up needs first (plain names, nothing to check).
        for p in extra {
            if !listed.iter().any(|l| l == p) {
                packages.push(quote::shell(p));
            }
        }
        for (i, p) in listed.iter().enumerate() {
            let field = format!("system.packages[{i}]");
            if manager == SystemManager::Apt && !p.is_empty() && !quote::is_unwritable(p) {
                match apt_package(p) {
                    Err(why) => {
                        self.refuse(
                            &field,
                            ErrorKind::PackagePattern,
                            format!("{:?} {why}", quote::comment(p)),
                            Some("write one Debian package name (`curl`, `libssl-dev`), optionally with `:ARCH`, `=VERSION` or `/RELEASE`"),
                        );
                        continue;
                    }
                    Ok(name) if apt_needs_exact_check(name) => {
                        // By name, whatever the architecture (dpkg-query
                        // reads `name:any` otherwise than apt-get).
                        let name = name.split(':').next().unwrap_or(name);
                        verify.push(quote::shell(name));
                    }
                    Ok(_) => {}
                }
            }
            if manager == SystemManager::Dnf && p.starts_with('-') {
                self.refuse(
                    &field,
                    ErrorKind::Misread,
                    format!("{:?} starts with `-`, so dnf would read it as an option (dnf 5 has no `--` to end the options)", quote::comment(p)),
                    Some("write the package's name, without a leading `-`"),
                );
                continue;
            }
            packages.extend(self.shell_name(&field, p, "a package name"));
        }
        if packages.is_empty() {
            return Value::from(());
        }
        let verify_message = quote::shell(
            "sclc: apt-get did not install the package %s under that exact name: it may have read the name as a pattern, or it is a virtual package (then name a package that provides it)\\n",
        );
        context! {
            manager => manager_name(manager), packages => packages, verify => verify,
            verify_message => verify_message,
        }
    }

    /// `workdir` as a `WORKDIR` word, or `None` when unset or refused:
    /// it must be absolute and not `/` or a top-level system folder.
    fn workdir(&mut self) -> Option<String> {
        let w = self.spec.workdir.as_ref()?;
        if quote::is_unwritable(w) {
            self.refuse(
                "workdir",
                ErrorKind::Unwritable,
                quote::Unrepresentable.to_string(),
                None,
            );
            return None;
        }
        if !w.starts_with('/') {
            self.refuse(
                "workdir",
                ErrorKind::SystemFolder,
                format!("{w:?} is not an absolute path"),
                Some("write an absolute path such as \"/workspace\""),
            );
            return None;
        }
        let normal = normalize_path(w);
        if is_system_folder(&normal) {
            self.refuse(
                "workdir",
                ErrorKind::SystemFolder,
                format!(
                    "{w:?} is {}, which the runtime user must not be given",
                    if normal == "/" {
                        "the root folder".to_string()
                    } else {
                        format!("the system folder {normal}")
                    }
                ),
                Some("use a folder of its own, such as \"/workspace\" or \"/usr/src/app\""),
            );
            return None;
        }
        let word = quote::dockerfile_word(w).ok()?;
        self.fits("workdir", word)
    }

    /// The user-creation step, the `USER` line, and the `--chown=` value
    /// (the numeric uid, so ownership never depends on a name the base
    /// image may already use for another uid).
    fn user(&mut self, manager: SystemManager, has_workdir: bool) -> (Value, Value, String) {
        let spec = self.spec;
        let Some(u) = &spec.user else {
            self.warn("user", "not set: the image keeps the base image's user");
            return (Value::from(()), Value::from(()), String::new());
        };
        let comment = self
            .comment("user.name", &format!("{} (uid {})", u.name, u.uid))
            .unwrap_or_default();
        let user = context! { uid => u.uid, comment => comment.clone() };
        if u.is_root() {
            return (Value::from(()), user, String::new());
        }
        if !u.name.is_empty() && u.name.chars().all(|c| c.is_ascii_digit()) {
            self.refuse(
                "user.name",
                ErrorKind::Misread,
                format!(
                    "{:?} is only digits, so id, chown and useradd would read it as a uid",
                    u.name
                ),
                Some("give the user a name that starts with a letter, such as \"app\""),
            );
        }
        let name = self.shell_name("user.name", &u.name, "a user name");
        let create = match name {
            Some(name) => {
                let message = format!(
                    "sclc: the base image already has a user {} with another uid than {}; choose another user.name or user.uid",
                    u.name, u.uid
                );
                let workdir_check = match (&spec.workdir, has_workdir) {
                    (Some(w), true) => quote::shell(w),
                    _ => String::new(),
                };
                context! {
                    manager => manager_name(manager), name => name, uid => u.uid,
                    comment => comment.clone(),
                    message => self.fits("user.name", quote::shell(&message)).unwrap_or_default(),
                    workdir => workdir_check, mark => OWN_WORKDIR_MARK,
                }
            }
            None => Value::from(()),
        };
        (create, user, u.uid.to_string())
    }

    fn assets(&mut self, chown: &str, needs_syntax: &mut bool) -> Vec<Value> {
        let mut assets = Vec::new();
        for (i, asset) in self.spec.assets.iter().enumerate() {
            let field = format!("assets[{i}]");
            match asset {
                Asset::Url { url, sha256, to } => {
                    if !self.url_is_a_download(&format!("{field}.url"), url) {
                        continue;
                    }
                    let dest = join_path(to, &url_basename(url));
                    let args = match quote::dockerfile_args(&[url.as_str(), dest.as_str()]) {
                        Ok(a) => a,
                        Err(e) => {
                            // The destination ends in the URL's file name.
                            let which = if quote::is_unwritable(url) {
                                "url"
                            } else {
                                "to"
                            };
                            self.refuse(
                                format!("{field}.{which}"),
                                ErrorKind::Unwritable,
                                e.to_string(),
                                None,
                            );
                            continue;
                        }
                    };
                    let Some(args) = self.fits(&field, args) else {
                        continue;
                    };
                    let mut notes = Vec::new();
                    notes.extend(self.comment(&field, &format!("{field}: {url}")));
                    let checksum = match sha256 {
                        Some(h) if is_sha256_hex(h) => {
                            *needs_syntax = true;
                            h.to_ascii_lowercase()
                        }
                        Some(_) => {
                            self.refuse(
                                format!("{field}.sha256"),
                                ErrorKind::Unwritable,
                                "not a SHA-256 digest (64 hex digits), so ADD --checksum cannot verify the download",
                                Some("copy the file's sha256 (64 hex digits) or leave `sha256` out"),
                            );
                            continue;
                        }
                        None => {
                            notes.push(
                                "no sha256 in the source: fetched without verification".into(),
                            );
                            String::new()
                        }
                    };
                    assets.push(context! {
                        kind => "url", notes => notes, checksum => checksum, chown => chown, args => args,
                    });
                }
                Asset::Huggingface {
                    repo,
                    files,
                    revision,
                    to,
                    token,
                } => {
                    let repo_q = self.shell_name(format!("{field}.repo"), repo, "a repo id");
                    let rev_q =
                        self.shell_name(format!("{field}.revision"), revision, "a revision");
                    let to_q = self.shell_name(format!("{field}.to"), to, "a folder");
                    let mut files_q = Vec::new();
                    for (j, f) in files.iter().enumerate() {
                        files_q.extend(self.shell_name(
                            format!("{field}.files[{j}]"),
                            f,
                            "a file name",
                        ));
                    }
                    let note = self.comment(
                        &field,
                        &format!("{field}: Hugging Face {repo} at revision {revision} into {to}"),
                    );
                    let (Some(repo_q), Some(rev_q), Some(to_q), Some(note)) =
                        (repo_q, rev_q, to_q, note)
                    else {
                        continue;
                    };
                    if files_q.len() != files.len() {
                        continue;
                    }
                    let (mount, token) = match token {
                        Some(r) => match self.secret_id(&format!("{field}.token"), r) {
                            Some(id) => {
                                *needs_syntax = true;
                                (
                                    format!("--mount=type=secret,id={id},required=true "),
                                    format!("HF_TOKEN=\"$(cat /run/secrets/{id})\" "),
                                )
                            }
                            None => continue,
                        },
                        None => (String::new(), String::new()),
                    };
                    assets.push(context! {
                        kind => "huggingface", notes => vec![note], repo => repo_q, files => files_q,
                        revision => rev_q, to => to_q, mount => mount, token => token, chown => chown,
                    });
                }
            }
        }
        assets
    }

    /// Whether `url` can be fetched as a file by `ADD`: an `http://` or
    /// `https://` URL without whitespace or control characters whose path
    /// does not end in `.git` (BuildKit's `dfgitutil.ParseGitRef` reads such
    /// a URL, with or without `#ref`, as a git repository and clones it).
    fn url_is_a_download(&mut self, field: &str, url: &str) -> bool {
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                "contains whitespace or a control character, which a URL cannot hold",
                Some("percent-encode it (a space is %20)"),
            );
            return false;
        }
        let Some(rest) = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
        else {
            self.refuse(
                field,
                ErrorKind::Misread,
                format!("{:?} is not an http:// or https:// URL; ADD would read it as a local path or a git repository", quote::comment(url)),
                None,
            );
            return false;
        };
        let before_fragment = rest.split('#').next().unwrap_or(rest);
        let before_query = before_fragment.split('?').next().unwrap_or(before_fragment);
        let path = before_query.split_once('/').map_or("", |(_, p)| p);
        if percent_decode(path).ends_with(".git") {
            self.refuse(
                field,
                ErrorKind::Misread,
                format!("{:?} ends in `.git`, so BuildKit's ADD would clone it as a git repository instead of downloading the file", quote::comment(url)),
                Some("download it in a `setup` step (for example with curl), or use a URL that does not end in `.git`"),
            );
            return false;
        }
        true
    }

    /// The Python section: notes, the uv install, conda, requirements files,
    /// packages; `none` when there is nothing to do.
    fn python(
        &mut self,
        base: &scl_ir::ImageRef,
        info: &BaseInfo,
        venv: bool,
        needs_syntax: &mut bool,
    ) -> Value {
        let spec = self.spec;
        let mut notes = Vec::new();
        let manager = spec
            .python
            .as_ref()
            .map(|p| p.manager)
            .unwrap_or(PythonManager::Pip);
        let installer = match (manager, venv) {
            // uv installs into the environment VIRTUAL_ENV names.
            (PythonManager::Uv, true) => UV_PIP_VENV,
            (PythonManager::Uv, false) => UV_PIP,
            _ => PIP,
        };
        let wants_conda = manager == PythonManager::Conda
            || spec.conda.as_ref().is_some_and(|c| !c.packages.is_empty());
        if wants_conda && !info.has_conda && info.family != Family::Unknown {
            let field = if manager == PythonManager::Conda {
                "python.manager"
            } else {
                "conda.packages"
            };
            self.refuse(
                field,
                ErrorKind::BaseLacks,
                format!(
                    "the base image {} has no conda, and sclc does not download an installer into an image",
                    quote::comment(&base.reference)
                ),
                Some(&format!(
                    "build on an image that has conda ({CONDA_IMAGES}), or install the packages with pip"
                )),
            );
        }
        // Credentials for the package indexes: a secret mount read through
        // NETRC by pip and uv, for the install lines only.
        let mut secret_mount = String::new();
        let mut netrc = String::new();
        if let Some(r) = spec
            .python
            .as_ref()
            .and_then(|p| p.index_credentials.as_ref())
        {
            if let Some(id) = self.secret_id("python.index_credentials", r) {
                *needs_syntax = true;
                secret_mount = format!("--mount=type=secret,id={id},required=true ");
                netrc = format!("NETRC=/run/secrets/{id} ");
            }
        }

        let mut index_args = Vec::new();
        let mut requirements = Vec::new();
        let mut packages = Vec::new();
        if let Some(py) = &spec.python {
            if let Some(v) = &py.version {
                match python_image_tag(&base.reference) {
                    Some(tag) if !version_matches(tag, v) => self.warn(
                        "python.version",
                        format!(
                            "the base image {} (tag {tag}) does not provide Python {v}, and the Dockerfile does not install Python",
                            base.reference
                        ),
                    ),
                    Some(_) => {}
                    None => notes.extend(self.comment("python.version", &format!(
                        "python.version {v}: the base image's python3 is used; sclc does not install Python into an image"
                    ))),
                }
            }
            if let Some(u) = &py.index_url {
                if let Some(q) = self.shell_name("python.index_url", u, "a URL") {
                    index_args.push(format!("--index-url={q}"));
                }
            }
            for (i, u) in py.extra_index_urls.iter().enumerate() {
                if let Some(q) =
                    self.shell_name(format!("python.extra_index_urls[{i}]"), u, "a URL")
                {
                    index_args.push(format!("--extra-index-url={q}"));
                }
            }
            for (n, r) in py.requirements.iter().enumerate() {
                let field = format!("python.requirements[{n}]");
                if !self.copy_source(&field, &r.path) {
                    continue;
                }
                let dest = format!("{REQUIREMENTS_DIR}/{n}-{}", basename(&r.path));
                match quote::dockerfile_args(&[r.path.as_str(), dest.as_str()]) {
                    Ok(copy) => {
                        let copy = self.fits(&field, copy);
                        let dest_q = self.shell_arg(&field, &dest);
                        if let (Some(copy), Some(dest_q)) = (copy, dest_q) {
                            requirements.push(context! { copy => copy, dest => dest_q });
                        }
                    }
                    Err(e) => self.refuse(&field, ErrorKind::Unwritable, e.to_string(), None),
                }
            }
            for (i, p) in py.packages.iter().enumerate() {
                packages.extend(self.shell_name(
                    format!("python.packages[{i}]"),
                    p,
                    "a requirement",
                ));
            }
        }

        let mut conda = Value::from(());
        if let Some(c) = &spec.conda {
            let mut channels = Vec::new();
            for (i, ch) in c.channels.iter().enumerate() {
                if let Some(q) = self.shell_name(format!("conda.channels[{i}]"), ch, "a channel") {
                    channels.push(format!("--channel={q}"));
                }
            }
            let mut cpkgs = Vec::new();
            for (i, p) in c.packages.iter().enumerate() {
                cpkgs.extend(self.shell_name(format!("conda.packages[{i}]"), p, "a match spec"));
            }
            if !cpkgs.is_empty() {
                conda = context! { channels => channels, packages => cpkgs };
            } else if c.packages.is_empty() && !c.channels.is_empty() {
                self.warn(
                    "conda.channels",
                    "no conda packages to install, so the channels are not used",
                );
            }
        }

        let tool =
            if manager == PythonManager::Uv && !(requirements.is_empty() && packages.is_empty()) {
                quote::shell(UV)
            } else {
                String::new()
            };
        if notes.is_empty() && conda.is_none() && requirements.is_empty() && packages.is_empty() {
            return Value::from(());
        }
        context! {
            notes => notes, tool => tool, conda => conda, installer => installer,
            index_args => index_args, requirements => requirements, packages => packages,
            mount => secret_mount, netrc => netrc,
        }
    }

    /// What the image needs before anything is installed with Python: the
    /// OS packages that give it a Python (when the base has none) and a
    /// virtual environment (when the base's Python is not meant to be
    /// installed into, by the base-image table).
    fn python_setup(&mut self, info: &BaseInfo, manager: SystemManager) -> PythonSetup {
        let spec = self.spec;
        let py = spec.python.as_ref();
        let installs = py.is_some_and(|p| !p.packages.is_empty() || !p.requirements.is_empty());
        let hf = spec
            .assets
            .iter()
            .any(|a| matches!(a, Asset::Huggingface { .. }));
        let conda = py.is_some_and(|p| p.manager == PythonManager::Conda);
        if !(installs || hf) || conda {
            return PythonSetup::default();
        }
        let venv = info.python_env == PythonEnv::Venv;
        let mut packages: Vec<&'static str> = Vec::new();
        if !info.has_python {
            packages.push("python3");
        }
        if venv && manager == SystemManager::Apt {
            // Debian and Ubuntu split venv (and its ensurepip) out of python3.
            packages.push("python3-venv");
        }
        let why = if info.externally_managed {
            "the base image's Python is externally managed (PEP 668), so pip may not install into it"
        } else {
            "the base image's Python belongs to its package manager"
        };
        PythonSetup {
            packages,
            venv,
            why,
        }
    }

    /// Two different secrets that would share a build-secret id
    /// (`secret("a.b", "c")` and `secret("a", "b.c")` are both `a.b.c`) or
    /// the environment variable `docker build --secret` reads (`a-b.c` and
    /// `a_b.c` are both `A_B_C`) are refused: one could be given to the
    /// other's step. The same secret used twice is one secret.
    fn distinct_build_secrets(&mut self) {
        let mut seen: Vec<(&SecretRef, String, String)> = Vec::new();
        for r in build_secrets(self.spec) {
            let Some(id) = secret_id(r) else { continue };
            let env = secret_env_name(&id);
            if let Some((o, _, _)) = seen
                .iter()
                .find(|(o, i, e)| *o != r && (*i == id || *e == env))
            {
                let field = self
                    .spec
                    .python
                    .as_ref()
                    .and_then(|p| p.index_credentials.as_ref())
                    .filter(|c| *c == r)
                    .map_or("assets", |_| "python.index_credentials");
                self.refuse(
                    field,
                    ErrorKind::NameClash,
                    format!(
                        "the secrets `{}`/`{}` and `{}`/`{}` would be one build secret (id `{id}`, variable `{env}`), so one could be given to the other's step",
                        o.secret, o.key, r.secret, r.key
                    ),
                    Some("name the secrets or keys so that they differ in more than `.`, `-` and `_`"),
                );
                return;
            }
            seen.push((r, id, env));
        }
    }

    /// The id of a build secret: `<secret>.<key>`, which `docker build
    /// --secret id=…` and `RUN --mount=type=secret,id=…` name. Refused
    /// unless it is `[A-Za-z0-9_.-]+`, the characters of Kubernetes Secret
    /// names and keys, which no flag parser reads as anything else.
    fn secret_id(&mut self, field: &str, r: &SecretRef) -> Option<String> {
        match secret_id(r) {
            Some(id) => Some(id),
            None => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!(
                        "the secret name {:?} or key {:?} has characters other than letters, digits, `_`, `.` and `-`, which a build-secret id cannot hold",
                        quote::comment(&r.secret),
                        quote::comment(&r.key)
                    ),
                    Some("name the secret and its key with letters, digits, `_`, `.` and `-`"),
                );
                None
            }
        }
    }

    /// The folders the runtime user must write, in order and without
    /// repeats: `writable`, then each volume mount point that is not
    /// read-only. Each is created and given to the runtime user (the folder
    /// itself: what is in it keeps its owner). Asset targets need no step
    /// of their own: `ADD --chown` creates them for the user, and a Hugging
    /// Face download gives its folder to the user in its own layer. Refused: a path that is not absolute or
    /// is `/` or a top-level system folder. Empty without a non-root user.
    fn writable(&mut self, chown: &str) -> Value {
        let spec = self.spec;
        let mut dirs: Vec<(String, String)> = Vec::new();
        for (i, w) in spec.writable.iter().enumerate() {
            dirs.push((format!("writable[{i}]"), w.clone()));
        }
        for (i, v) in spec.volumes.iter().enumerate() {
            if v.mode != VolumeMode::ReadOnly {
                dirs.push((format!("volumes[{i}].mount"), v.mount.clone()));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut quoted = Vec::new();
        for (field, d) in dirs {
            if !field.starts_with("writable") && quote::is_unwritable(&d) {
                // Refused where the asset or volume is written.
                continue;
            }
            let normal = normalize_path(&d);
            // Inside a folder of the system (CA certificates in /etc/ssl,
            // the kernel's /proc) or sclc's virtual environment, the user
            // could change what every process trusts or runs.
            let inside = [
                "/etc",
                "/proc",
                "/sys",
                "/dev",
                "/boot",
                "/bin",
                "/sbin",
                "/usr/bin",
                "/usr/sbin",
                "/usr/lib",
                VENV,
            ]
            .iter()
            .any(|p| normal == *p || normal.starts_with(&format!("{p}/")))
                || normal.starts_with("/lib");
            if !d.starts_with('/') || is_system_folder(&normal) || inside {
                if field.starts_with("writable") {
                    self.refuse(
                        &field,
                        ErrorKind::SystemFolder,
                        format!("{:?} is not an absolute path of a folder of its own, so the runtime user cannot be given it", quote::comment(&d)),
                        Some("use a folder such as \"/cache/huggingface\""),
                    );
                }
                continue;
            }
            if !seen.insert(normal.clone()) {
                continue;
            }
            quoted.extend(self.shell_arg(&field, &normal));
        }
        if quoted.is_empty() || chown.is_empty() {
            return Value::from(());
        }
        context! { dirs => quoted, uid => chown }
    }

    /// The `setup` steps: each as the `printf` words of its lines
    /// ([`quote::shell_lines`]) and, when a line holds a `'` (quoted as
    /// `'\''`), the step as written, for a comment.
    fn setup(&mut self) -> Vec<Value> {
        let mut steps = Vec::new();
        for (i, step) in self.spec.setup.iter().enumerate() {
            let field = format!("setup[{i}]");
            let lines = match quote::shell_lines(step) {
                Ok(lines) => lines,
                Err(_) => {
                    self.refuse(
                        &field,
                        ErrorKind::Unwritable,
                        "contains NUL or a character a reader of the Dockerfile would not see (a carriage return, an escape, a bidirectional override)",
                        None,
                    );
                    continue;
                }
            };
            // Each line is one physical Dockerfile line: it must fit, shown
            // or not.
            let body = step.strip_suffix('\n').unwrap_or(step);
            let shown_lines: Vec<String> = if step.contains('\'') {
                body.split('\n').map(quote::comment).collect()
            } else {
                Vec::new()
            };
            let too_long = lines
                .iter()
                .chain(&shown_lines)
                .map(String::len)
                .enumerate()
                .find(|(_, n)| *n > MAX_VALUE_BYTES);
            if let Some((j, n)) = too_long {
                let line = if j < lines.len() { j } else { j - lines.len() } + 1;
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("line {line} is {n} bytes long once quoted, more than the {MAX_VALUE_BYTES} one Dockerfile line of a step may take (BuildKit reads lines of at most {MAX_LINE_BYTES} bytes)"),
                    Some("split the line, or put the long text in a file of the build context"),
                );
                continue;
            }
            steps.push(context! { field => field, lines => lines, shown => shown_lines });
        }
        steps
    }

    /// Plain vars as `ENV` instructions (lists of `K=V` pairs; a pair whose
    /// value ends in a backslash closes its instruction), secrets as comment
    /// lines.
    fn vars(&mut self) -> (Vec<Vec<String>>, Vec<String>) {
        let mut pairs = Vec::new();
        let mut secrets = Vec::new();
        for (k, v) in &self.spec.vars {
            let field = format!("vars.{k}");
            if !quote::is_dockerfile_bare(k) || k.contains('=') {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "{:?} is not a name an ENV instruction can hold",
                        quote::comment(k)
                    ),
                    Some("use a name of letters, digits and `_`, such as MY_VAR"),
                );
                continue;
            }
            match v {
                VarValue::Plain(s) => match quote::dockerfile_pair(s) {
                    Ok(q) => {
                        if let Some(text) = self.fits(&field, format!("{k}={}", q.text)) {
                            pairs.push((text, q.ends_line));
                        }
                    }
                    Err(e) => self.refuse(
                        &field,
                        ErrorKind::Unwritable,
                        format!("the value {e}"),
                        None,
                    ),
                },
                VarValue::Secret(r) => secrets.extend(self.comment(
                    &field,
                    &format!(
                        "runtime secret: {k} from secret {} key {} ({SECRET_HINT})",
                        r.secret, r.key
                    ),
                )),
            }
        }
        (group_pairs(pairs), secrets)
    }

    fn files(&mut self, chown: &str) -> Vec<Value> {
        let mut files = Vec::new();
        for (i, f) in self.spec.files.iter().enumerate() {
            let field = format!("files[{i}]");
            if !self.copy_source(&field, &f.from) {
                continue;
            }
            match quote::dockerfile_args(&[f.from.as_str(), f.to.as_str()]) {
                Ok(args) => {
                    if let Some(args) = self.fits(&field, args) {
                        files.push(context! { chown => chown, args => args });
                    }
                }
                Err(e) => self.refuse(&field, ErrorKind::Unwritable, e.to_string(), None),
            }
        }
        files
    }

    /// `ENTRYPOINT`/`CMD` in exec form, or `""` when the list is empty.
    fn exec_form(&mut self, field: &str, items: &[String]) -> String {
        if items.is_empty() {
            return String::new();
        }
        if let Some(i) = items.iter().position(|a| a.contains('\0')) {
            self.refuse(
                format!("{field}[{i}]"),
                ErrorKind::Unwritable,
                "contains NUL, which a process argument cannot hold",
                None,
            );
            return String::new();
        }
        let text = quote::json_array(items);
        if text.len() > 3 * MAX_VALUE_BYTES {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                format!(
                    "is {} bytes long in exec form, more than one Dockerfile line may take",
                    text.len()
                ),
                None,
            );
            return String::new();
        }
        text
    }

    /// `LABEL` instructions (lists of `key=value` pairs): the description,
    /// the IR labels (sorted), the IR hash.
    fn labels(&mut self) -> Vec<Vec<String>> {
        let spec = self.spec;
        let mut pairs = Vec::new();
        if let Some(d) = &spec.description {
            if !spec.labels.contains_key(DESCRIPTION_LABEL) {
                match quote::dockerfile_pair(d) {
                    Ok(q) => {
                        if let Some(text) = self.fits("description", format!("{DESCRIPTION_LABEL}={}", q.text)) {
                            pairs.push((text, q.ends_line));
                        }
                    }
                    Err(_) => self.refuse(
                        "description",
                        ErrorKind::Unwritable,
                        "contains a line break, which a Dockerfile LABEL cannot hold",
                        Some(&format!("write the description on one line, or set labels[\"{DESCRIPTION_LABEL}\"] to a one-line text")),
                    ),
                }
            }
        }
        for (k, v) in &spec.labels {
            let field = format!("labels.{k}");
            if k == HASH_LABEL {
                self.refuse(
                    &field,
                    ErrorKind::Reserved,
                    format!("{HASH_LABEL} is reserved: sclc sets it to the IR's hash"),
                    Some("remove this label, or give it another name"),
                );
                continue;
            }
            let key = if k.contains('=') || k.is_empty() {
                None
            } else if quote::is_dockerfile_bare(k) {
                Some(k.clone())
            } else {
                match quote::dockerfile_pair(k) {
                    Ok(q) if !q.ends_line => Some(q.text),
                    _ => None,
                }
            };
            let Some(key) = key else {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("{:?} is not a key a LABEL instruction can hold (it is empty, or has `=`, a line break or a trailing backslash)", quote::comment(k)),
                    None,
                );
                continue;
            };
            match quote::dockerfile_pair(v) {
                Ok(q) => {
                    if let Some(text) = self.fits(&field, format!("{key}={}", q.text)) {
                        pairs.push((text, q.ends_line));
                    }
                }
                Err(e) => self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("the value {e}"),
                    None,
                ),
            }
        }
        pairs.push((format!("{HASH_LABEL}=\"{}\"", spec.content_hash()), false));
        group_pairs(pairs)
    }

    fn dockerignore(&mut self, origin: &str) -> Option<String> {
        let mut patterns = Vec::new();
        for (i, p) in self.spec.ignore.iter().enumerate() {
            let field = format!("ignore[{i}]");
            match quote::dockerignore_pattern(p) {
                Ok(line) => patterns.extend(self.fits(&field, line)),
                Err(
                    e @ (quote::PatternRefusal::TrailingBackslash
                    | quote::PatternRefusal::Malformed(_)),
                ) => self.refuse(
                    &field,
                    ErrorKind::IgnorePattern,
                    e.to_string(),
                    Some("write `[...]` with its `]` and a character or range in it (`[a-z]`), and escape a special character with `\\` only before punctuation (`\\*`, `\\[`)"),
                ),
                Err(e) => self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    e.to_string(),
                    Some("write the glob on one line, without surrounding whitespace"),
                ),
            }
        }
        if patterns.is_empty() || !self.errors.is_empty() {
            return None;
        }
        let text = render(
            "dockerignore",
            context! { origin => origin, dockerfile_name => "Dockerfile", patterns => patterns },
        );
        self.check_lines(&text, "the generated .dockerignore")
            .then_some(text)
    }
}

/// The `name[:arch]` part of an argument of `apt-get install`, when the
/// argument names one package and apt cannot read it as anything else;
/// else why not.
///
/// apt-get reads each argument (apt, `apt-pkg/cacheset.cc`,
/// `VersionContainerInterface::FromString` and
/// `CacheSetHelper::PackageFromString`): the text after the last `=` or
/// `/` is a version or a release, the rest is tried in turn as an apt
/// pattern (a leading `?`, and `~` in apt ≥ 2.0, apt-patterns(7)), an exact
/// package name (`:arch` after the last `:`), a task (a trailing `^`), an
/// fnmatch glob (when it holds one of `.?*[]!`) and a POSIX regular
/// expression (when it holds one of `.?+*|[^$`); a trailing `+` or `-` on the
/// whole argument means "install" or "remove" (`apt-private/private-install.cc`).
/// So the argument must be `NAME[:ARCH][=VERSION|/RELEASE]` with
/// - NAME a Debian package name (Debian Policy §5.6.7: lower-case letters,
///   digits, `+`, `-` and `.`, at least two characters, starting with a
///   letter or digit), which has none of apt's pattern, glob or task
///   characters but `.` and `+`;
/// - ARCH lower-case letters, digits and `-` (`amd64`, `arm64`, `any`);
/// - VERSION the characters of a Debian version (§5.6.12: letters, digits,
///   `. + ~ - :`) and RELEASE those of an archive or codename
///   (`bookworm-backports`: letters, digits, `. + ~ _ -`);
/// - and not ending in `-` (apt would remove the package).
///
/// A name with `.` or `+` is still one apt may read as a glob or a regular
/// expression when no package has exactly that name (`libzstd.` installed 28
/// packages on Debian 12); [`apt_needs_exact_check`] says which, and the
/// Dockerfile turns the fallback off (`-o APT::Cmd::Pattern-Only=true`, apt
/// ≥ 1.9.6: a glob of `[A-Za-z0-9+.:*-]` only, no regular expression unless
/// it starts with `^` or ends with `$`) and checks after the install that a
/// package of exactly each such name is installed (`dpkg-query`, for any
/// architecture), since older apt ignores the option.
pub fn apt_package(arg: &str) -> Result<&str, &'static str> {
    let head = match arg.rfind(['=', '/']) {
        Some(i) => {
            let tail = &arg[i + 1..];
            let ok = if arg.as_bytes()[i] == b'=' {
                !tail.is_empty()
                    && tail
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".+~-:".contains(c))
            } else {
                !tail.is_empty()
                    && tail
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".+~_-".contains(c))
            };
            if !ok {
                return Err("has a version (after `=`) or release (after `/`) that is not one: apt-get would read it as another one, or as a pattern");
            }
            &arg[..i]
        }
        None => arg,
    };
    let name = match head.rsplit_once(':') {
        Some((name, arch)) => {
            let ok = !arch.is_empty()
                && arch
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !ok {
                return Err("has an architecture (after `:`) that is not one (`amd64`, `arm64`): apt-get could read it as a pattern");
            }
            name
        }
        None => head,
    };
    let name_ok = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !name_ok {
        return Err("is not a Debian package name (lower-case letters, digits, `+ - .`, at least two characters, starting with a letter or digit), so it names no package, and apt-get reads such a name as a regular expression, a glob, an apt pattern or a task where it can, installing other packages");
    }
    if arg.ends_with('-') {
        return Err("ends in `-`, which apt-get reads as \"remove this package\"");
    }
    Ok(head)
}

/// Whether apt could read the package name `name_arch` (the `Ok` of
/// [`apt_package`]) as a glob or a regular expression when no package has
/// exactly that name: when its name holds `.` or `+` (the only pattern
/// characters a Debian name may have), or ends in `+` (apt's "install"
/// suffix, stripped when no package has the whole name).
pub fn apt_needs_exact_check(name_arch: &str) -> bool {
    let name = name_arch.split(':').next().unwrap_or(name_arch);
    name.contains(['.', '+'])
}

/// Splits `(pair, ends_line)` items into instructions: a pair that must end
/// its line ([`quote::PairText::ends_line`]) is the last of its instruction.
fn group_pairs(pairs: Vec<(String, bool)>) -> Vec<Vec<String>> {
    let mut groups = Vec::new();
    let mut current = Vec::new();
    for (text, ends_line) in pairs {
        current.push(text);
        if ends_line {
            groups.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        groups.push(current);
    }
    groups
}

/// Whether `s` is an image reference by the grammar of
/// `distribution/reference` (`reference.go`), which Docker, BuildKit and
/// hadolint accept in `FROM`:
/// `[domain[:port]/]component(/component)*[:tag][@algorithm:hex]`, where a
/// path component is `[a-z0-9]+` runs joined by `.`, `_`, `__` or `-`s, the
/// first component is a domain when it holds `.` or `:` or is `localhost`,
/// a tag is `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`, and a digest is
/// `algorithm:hex` with at least 32 hex digits.
pub fn is_image_reference(s: &str) -> bool {
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    if let Some(d) = digest {
        let Some((alg, hex)) = d.split_once(':') else {
            return false;
        };
        let alg_ok = alg.split(['+', '.', '-', '_']).all(|c| {
            c.starts_with(|c: char| c.is_ascii_alphabetic())
                && c.chars().all(|c| c.is_ascii_alphanumeric())
        });
        if !alg_ok || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
    }
    // A tag is after the last `:` that follows the last `/`.
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let ok = t.len() <= 128
            && t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return false;
        }
    }
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
        let domain = parts.remove(0);
        let (host, port) = match domain.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (domain, None),
        };
        let host_ok = !host.is_empty()
            && host.split('.').all(|c| {
                !c.is_empty()
                    && c.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                    && !c.starts_with('-')
                    && !c.ends_with('-')
            });
        let port_ok = port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if !host_ok || !port_ok {
            return false;
        }
    }
    parts.iter().all(|p| is_path_component(p))
}

/// `[a-z0-9]+` runs joined by one separator: `.`, `_`, `__` or one or more `-`.
fn is_path_component(p: &str) -> bool {
    let b = p.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let sep_end = b[i..]
            .iter()
            .position(|&c| alnum(c))
            .map_or(b.len(), |n| i + n);
        let sep = &p[i..sep_end];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-')) {
            return false;
        }
        i = sep_end;
    }
    true
}

/// `path` with `.` and empty segments removed and `..` applied (never above
/// `/`): `/usr/../etc/` → `/etc`, `//` → `/`.
fn normalize_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `/` and the top-level folders of a Linux image that belong to the
/// system: `/bin /boot /dev /etc /lib* /proc /run /sbin /sys /usr /var`.
fn is_system_folder(normal: &str) -> bool {
    let Some(top) = normal.strip_prefix('/') else {
        return true;
    };
    top.is_empty()
        || (!top.contains('/')
            && (matches!(
                top,
                "bin" | "boot" | "dev" | "etc" | "proc" | "run" | "sbin" | "sys" | "usr" | "var"
            ) || top.starts_with("lib")))
}

/// `%XX` escapes decoded (invalid ones kept), as Go's `url.Parse` does for a
/// URL's path.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Renders one of the embedded templates (strict undefined, no
/// auto-escaping: values arrive quoted by [`quote`]).
fn render(name: &str, ctx: Value) -> String {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("default delimiters"),
    );
    env.add_template("Dockerfile", DOCKERFILE_TEMPLATE)
        .expect("Dockerfile.j2 parses");
    env.add_template("dockerignore", DOCKERIGNORE_TEMPLATE)
        .expect("dockerignore.j2 parses");
    let text = env
        .get_template(name)
        .expect("template exists")
        .render(ctx)
        .expect("template renders");
    tidy(&text)
}

/// Collapses runs of blank lines to one and ends the text with exactly one
/// newline, so the template can be written for readability. Lines are split
/// at `\n` only (a `\r` inside a value stays where it is). No generated line
/// that carries a value is blank: every one starts with a keyword, an
/// indent and a quote, or `#`.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = true; // no blank line at the top
    for line in text.split('\n') {
        let is_blank = line.trim_matches([' ', '\t']).is_empty();
        if is_blank && blank {
            continue;
        }
        out.push_str(if is_blank { "" } else { line });
        out.push('\n');
        blank = is_blank;
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The package manager of an image when `system` is absent from the IR:
/// the base-image table's ([`scl_ir::bases::manager`]).
pub fn infer_manager(image: &str) -> SystemManager {
    scl_ir::bases::manager(image)
}

/// The tag of an official-style Python image (`python:3.10-slim`,
/// `docker.io/library/python:3.11`), or `None` for any other image (or an
/// untagged one).
fn python_image_tag(image: &str) -> Option<&str> {
    let (repo, tag) = scl_ir::bases::split_ref(image);
    (repo.rsplit('/').next() == Some("python"))
        .then_some(tag)
        .flatten()
}

/// Whether an image tag such as `3.10.4-slim` provides Python `version` (`3.10`).
fn version_matches(tag: &str, version: &str) -> bool {
    tag.strip_prefix(version)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '-']))
}

fn manager_name(m: SystemManager) -> &'static str {
    match m {
        SystemManager::Apt => "apt",
        SystemManager::Apk => "apk",
        SystemManager::Dnf => "dnf",
    }
}

fn mode_name(m: VolumeMode) -> &'static str {
    match m {
        VolumeMode::ReadOnly => "read_only",
        VolumeMode::ReadWrite => "read_write",
        VolumeMode::ReadWriteMany => "read_write_many",
    }
}

/// The last `/`-separated segment of a path (`a/b/req.txt` → `req.txt`).
fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("requirements.txt")
}

/// The file name a URL downloads to: its last path segment without query or
/// fragment, or `download` when that is empty or `.`/`..`.
fn url_basename(url: &str) -> String {
    let no_frag = url.split('#').next().unwrap_or(url);
    let no_query = no_frag.split('?').next().unwrap_or(no_frag);
    let path = match no_query.find("://") {
        Some(i) => no_query[i + 3..].split_once('/').map_or("", |(_, p)| p),
        None => no_query,
    };
    match path.rsplit('/').next() {
        Some(s) if !s.is_empty() && s != "." && s != ".." => s.to_string(),
        _ => "download".to_string(),
    }
}

/// `dir/name`, without doubling a trailing `/`.
fn join_path(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manager_inference() {
        assert_eq!(infer_manager("redis:7-alpine"), SystemManager::Apk);
        assert_eq!(infer_manager("alpine:3.19"), SystemManager::Apk);
        assert_eq!(infer_manager("fedora:40"), SystemManager::Dnf);
        assert_eq!(
            infer_manager("registry.access.redhat.com/ubi9/ubi:9.3"),
            SystemManager::Dnf
        );
        assert_eq!(infer_manager("rockylinux:9"), SystemManager::Dnf);
        assert_eq!(
            infer_manager("nvcr.io/nvidia/pytorch:23.10-py3"),
            SystemManager::Apt
        );
        assert_eq!(infer_manager("localhost:5000/alpine"), SystemManager::Apk);
        assert_eq!(infer_manager("localhost:5000/team/img"), SystemManager::Apt);
    }

    #[test]
    fn refs_and_versions() {
        assert_eq!(
            scl_ir::bases::split_ref("localhost:5000/a/b:1.2@sha256:ff"),
            ("localhost:5000/a/b", Some("1.2"))
        );
        assert_eq!(
            scl_ir::bases::split_ref("localhost:5000/a/b"),
            ("localhost:5000/a/b", None)
        );
        assert_eq!(python_image_tag("python:3.10-slim"), Some("3.10-slim"));
        assert_eq!(
            python_image_tag("docker.io/library/python:3.11"),
            Some("3.11")
        );
        assert_eq!(python_image_tag("pytorch/pytorch:2.0.1"), None);
        assert_eq!(python_image_tag("python"), None);
        assert!(version_matches("3.10-slim", "3.10"));
        assert!(version_matches("3.10.4", "3.10"));
        assert!(version_matches("3.10", "3.10"));
        assert!(!version_matches("3.100", "3.10"));
        assert!(!version_matches("3.11-slim", "3.10"));
    }

    #[test]
    fn image_references() {
        for ok in [
            "debian:12.5",
            "python:3.10-slim",
            "nvcr.io/nvidia/pytorch:23.10-py3",
            "localhost:5000/team/img",
            "localhost/img:1",
            "a/b/c",
            "redis:7-alpine",
            "registry.access.redhat.com/ubi9/ubi:9.3",
            "my_org/my__img--x:v1",
            &format!("debian@sha256:{}", "ab".repeat(32)),
            &format!("fedora:40@sha256:{}", "0".repeat(64)),
        ] {
            assert!(is_image_reference(ok), "{ok}");
        }
        for bad in [
            "",
            "/",
            "debian:",
            "debian:$TAG",
            "x:y:z",
            "debian:`id`",
            "-x",
            "Debian",
            "a b",
            "debian@",
            "debian@sha256:abc",
            "a//b",
            "a/",
            ":tag",
            "debian:.x",
            "-h.io/a",
            "h.io:/a",
            "a__-b",
            "a.-b",
            "debian:12\n",
        ] {
            assert!(!is_image_reference(bad), "{bad}");
        }
    }

    #[test]
    fn url_names() {
        assert_eq!(
            url_basename("https://h/a/b/model.safetensors?download=1#x"),
            "model.safetensors"
        );
        assert_eq!(url_basename("https://h/"), "download");
        assert_eq!(url_basename("https://h"), "download");
        assert_eq!(url_basename("https://h/a/.."), "download");
        assert_eq!(join_path("/m/", "x"), "/m/x");
        assert_eq!(join_path("/", "x"), "/x");
        assert_eq!(basename("a/b/req.txt"), "req.txt");
    }

    #[test]
    fn tidy_collapses_blank_lines() {
        assert_eq!(tidy("\n\na\n\n\n\nb\n\n"), "a\n\nb\n");
        assert_eq!(tidy("a\r\n  \n\nb"), "a\r\n\nb\n");
    }
}
