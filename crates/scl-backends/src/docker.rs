//! The Dockerfile backend: [`lower`] turns one [`EnvSpec`] into a
//! `Dockerfile` (plus `Dockerfile.dockerignore` and `.dockerignore` when the
//! env has `ignore` globs), or, for an env with `services`, one folder of
//! those per service.
//!
//! The build steps and their command lines come from the container plan
//! ([`crate::plan`], shared with the Apptainer target): this module renders
//! each step (a shell step as one `RUN a \` + ` && b`), adds what only a
//! Dockerfile has (`ADD --checksum`, `COPY --chown`, `RUN
//! --mount=type=secret`, `ENV`, `LABEL`, the comments) and checks what only
//! BuildKit reads (line lengths, `COPY` globs, `ADD` of a `.git` URL).
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
//!    apk: `--no-cache`; dnf, yum, microdnf: `… clean all`), in IR order,
//!    after `--` for apt and apk; dnf 5 has no `--` (and yum and microdnf are
//!    given none), so a package starting with `-` is refused for them. For apt, only Debian package names are written
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
//!     `ENTRYPOINT`/`CMD` in exec form; with `distributed` asking torchrun
//!     for several processes on one node, `ENTRYPOINT ["torchrun",
//!     "--standalone", "--nproc_per_node=N", …]` ([`single_node_torchrun`]).
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
use scl_ir::{EnvSpec, SystemManager, VarValue, VolumeMode};

use scl_ir::bases::VENV;

use crate::expresses::Expresses;
use crate::plan::{self, Step};
use crate::quote;
use crate::{Artifact, ErrorKind, FieldError, FieldWarning, Lowered};

pub use crate::plan::{
    apt_needs_exact_check, apt_package, secret_env_name, secret_id, HUGGINGFACE_HUB,
    MAX_VALUE_BYTES, UV,
};

const DOCKERFILE_TEMPLATE: &str = include_str!("templates/docker/Dockerfile.j2");
const DOCKERIGNORE_TEMPLATE: &str = include_str!("templates/docker/dockerignore.j2");

/// The Dockerfile frontend named in the `# syntax=` line when one is needed:
/// `ADD --checksum` needs 1.6 or later (Docker's Dockerfile reference,
/// "ADD --checksum").
pub const DOCKERFILE_SYNTAX: &str = "docker/dockerfile:1.7";

/// BuildKit's limit on one physical line (`parser.go`, `handleScannerError`).
const MAX_LINE_BYTES: usize = 65_535;

/// The default output folder of `sclc build`, used only in the header's
/// build hint.
const OUT_DIR: &str = "out";
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
/// and `env_name` ([`lower_with`] also reads the requirements files' texts).
///
/// # Panics
/// Only if the embedded templates are broken (covered by the crate's tests).
pub fn lower(spec: &EnvSpec, env_name: &str) -> Lowered {
    lower_with(spec, &crate::LowerCx::new(env_name))
}

/// [`lower`] with the context of a build: the env's name and the texts of
/// its requirements files ([`crate::LowerCx::files`]; a file that pins
/// hashes is installed without `python.packages`, see [`plan::build`]).
pub fn lower_with(spec: &EnvSpec, cx: &crate::LowerCx) -> Lowered {
    let env_name = cx.env.as_str();
    let mut out = Lowered::default();
    crate::lower_images(spec, env_name, &mut out, &mut |spec, at, out| {
        let mut job = Job {
            spec,
            prefix: &at.field_prefix,
            files: &cx.files,
            warnings: &mut out.warnings,
            errors: &mut out.errors,
        };
        let dockerfile_path = format!(
            "{OUT_DIR}/{}/{}Dockerfile",
            quote::comment(env_name),
            at.path_prefix
        );
        let dockerfile = job.dockerfile(&at.origin, &dockerfile_path);
        let ignore = job.dockerignore(&at.origin);
        if let Some(text) = dockerfile {
            out.artifacts.push(Artifact {
                path: format!("{}Dockerfile", at.path_prefix),
                contents: text,
            });
            if let Some(ignore) = ignore {
                out.artifacts.push(Artifact {
                    path: format!("{}Dockerfile.dockerignore", at.path_prefix),
                    contents: ignore.clone(),
                });
                out.artifacts.push(Artifact {
                    path: format!("{}.dockerignore", at.path_prefix),
                    contents: ignore,
                });
            }
        }
    });
    if !out.errors.is_empty() {
        out.artifacts.clear();
    }
    out
}

/// The `ENTRYPOINT` and `CMD` of an env whose `distributed` block asks
/// torchrun for several processes on one node (`nodes = 1`,
/// `procs_per_node > 1`, `launcher = .torchrun`), which one container can
/// run: `torchrun --standalone --nproc_per_node=N` (a rendezvous on the
/// container's own host; the underscore spelling, which every torchrun
/// takes) followed by the env's entrypoint, its `python` dropped
/// ([`crate::k8s::torchrun_args`]); the command stays `CMD`, so `docker run
/// IMAGE ARGS` still replaces it. With no entrypoint, or one that is only
/// the Python interpreter, the command is what torchrun launches (in `CMD`). `None` for any other env (one process, several nodes,
/// another launcher, nothing to launch): then `distributed` is a warning.
pub fn single_node_torchrun(spec: &EnvSpec) -> Option<(Vec<String>, Vec<String>)> {
    let d = spec.distributed.as_ref()?;
    if d.launcher != scl_ir::Launcher::Torchrun || d.nodes != 1 || d.procs_per_node < 2 {
        return None;
    }
    let head = vec![
        "torchrun".to_string(),
        "--standalone".to_string(),
        format!("--nproc_per_node={}", d.procs_per_node),
    ];
    // `ENTRYPOINT ["python3"]` with the script in `CMD`: torchrun runs the
    // script itself (no `--no-python python3`).
    if spec.entrypoint.len() == 1 && !spec.command.is_empty() {
        let all: Vec<String> = spec
            .entrypoint
            .iter()
            .chain(&spec.command)
            .cloned()
            .collect();
        let args = crate::k8s::torchrun_args(&all);
        if args.first().map(String::as_str) != Some("--no-python") {
            return Some((head, args));
        }
    }
    if !spec.entrypoint.is_empty() {
        let mut e = head;
        e.extend(crate::k8s::torchrun_args(&spec.entrypoint));
        return Some((e, spec.command.clone()));
    }
    if spec.command.is_empty() {
        return None;
    }
    Some((head, crate::k8s::torchrun_args(&spec.command)))
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
        lower_with(spec, cx)
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
        "builder",
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
            "resources",
            "requests/limits are set at run time (docker run --cpus/--memory/--gpus, compose or the k8s target); an image does not carry them",
        ),
        (
            "distributed",
            "only a single-node torchrun launch is written into a Dockerfile (ENTRYPOINT torchrun --standalone); several nodes, another launcher or nothing to launch are for the k8s target",
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
/// `host:` volumes (CSV fields quoted as docker's parser reads them),
/// `--cpus`/`--memory` for the CPU and memory limits and `--gpus N` for a
/// GPU limit, then one `docker run --rm --entrypoint sh
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
        for r in plan::build_secrets(s) {
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
        let limits = s.resources.as_ref().and_then(|r| r.limits.as_ref());
        if let Some(cpu) = limits.and_then(|l| l.cpu) {
            run.push("--cpus".into());
            // The docker CLI reads these as compose does (decimal CPUs,
            // go-units `RAMInBytes`).
            run.push(crate::compose::cpus(cpu));
        }
        if let Some(bytes) = limits.and_then(|l| l.memory) {
            run.push("--memory".into());
            run.push(crate::compose::memory(bytes));
        }
        let gpus = s
            .resources
            .as_ref()
            .and_then(|r| r.gpu())
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

/// The [`plan::Target`] texts of the Dockerfile.
const PLAN_TARGET: plan::Target = plan::Target {
    file: "the Dockerfile",
    value_limit: "one Dockerfile value may take (BuildKit reads lines of at most 65535 bytes)",
    user_unset: "not set: the image keeps the base image's user",
    not_a_url: "ADD would read it as a local path or a git repository",
    bad_checksum: "ADD --checksum cannot verify the download",
    scratch: "/tmp/scl",
    multi_stage: true,
};

/// The state of lowering one built env.
struct Job<'a> {
    spec: &'a EnvSpec,
    prefix: &'a str,
    files: &'a std::collections::BTreeMap<String, String>,
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
                "is {} bytes long once quoted, more than the {MAX_VALUE_BYTES} {}",
                text.len(),
                PLAN_TARGET.value_limit
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

    /// `COPY`/`ADD` arguments for `words`, or `None` with an error on `field`.
    fn copy_args(&mut self, field: &str, words: &[&str]) -> Option<String> {
        match quote::dockerfile_args(words) {
            Ok(args) => self.fits(field, args),
            Err(e) => {
                self.refuse(field, ErrorKind::Unwritable, e.to_string(), None);
                None
            }
        }
    }

    fn dockerfile(&mut self, origin: &str, dockerfile_path: &str) -> Option<String> {
        let spec = self.spec;
        let base = spec.base.as_ref()?;
        let from = self.from(base);

        // What the Dockerfile does not write ([`EXPRESSES`]); a
        // single-node torchrun launch it does write.
        let launch = single_node_torchrun(spec);
        for w in crate::expresses::unexpressed(spec, &EXPRESSES) {
            if w.field == "distributed" && launch.is_some() {
                continue;
            }
            self.warn(w.field, w.message);
        }

        let plan = plan::build(
            spec,
            base,
            &PLAN_TARGET,
            self.prefix,
            self.files,
            self.warnings,
            self.errors,
        );
        let mut needs_syntax = false;
        let mut steps = Vec::new();
        for step in &plan.steps {
            if let Some(v) = self.step(step, &mut needs_syntax) {
                steps.push(v);
            }
        }
        let builder = match &plan.builder {
            Some(b) => {
                let from = self.from(&b.image);
                let mut bsteps = Vec::new();
                for step in &b.steps {
                    if let Some(v) = self.step(step, &mut needs_syntax) {
                        bsteps.push(v);
                    }
                }
                context! { from => from, steps => bsteps }
            }
            None => Value::from(()),
        };
        let ports: Vec<String> = spec.ports.iter().map(|p| p.to_string()).collect();
        let labels = self.labels();
        let (entrypoint, cmd) = match &launch {
            Some((entrypoint, cmd)) => (
                self.exec_form("entrypoint", entrypoint),
                self.exec_form("command", cmd),
            ),
            None => (
                self.exec_form("entrypoint", &spec.entrypoint),
                self.exec_form("command", &spec.command),
            ),
        };

        if !self.errors.is_empty() {
            return None;
        }
        let ctx = context! {
            syntax => if needs_syntax { DOCKERFILE_SYNTAX } else { "" },
            origin => origin,
            ir_hash => spec.content_hash(),
            dockerfile_path => dockerfile_path,
            from => from,
            builder => builder,
            steps => steps,
            setup_script => PLAN_TARGET.setup_script(),
            ports => ports,
            labels => labels,
            entrypoint => entrypoint,
            cmd => cmd,
        };
        let text = render("Dockerfile", ctx);
        self.check_lines(&text, "the generated Dockerfile")
            .then_some(text)
    }

    /// One plan step as the template reads it (`kind` and the step's
    /// values), or `None` when a value of it is refused.
    fn step(&mut self, step: &Step, needs_syntax: &mut bool) -> Option<Value> {
        // A build secret: `RUN --mount=type=secret` and the variable of
        // the command that reads it.
        let (mount, prefix) = match step.secret() {
            Some(s) => {
                *needs_syntax = true;
                (
                    format!("--mount=type=secret,id={},required=true ", s.id),
                    s.prefix(&format!("/run/secrets/{}", s.id)),
                )
            }
            None => (String::new(), String::new()),
        };
        // The wheels of the build stage, seen only while they are installed.
        let mount = match step {
            Step::Wheels { .. } => {
                *needs_syntax = true;
                let dir = PLAN_TARGET.wheels_dir();
                format!("--mount=type=bind,from=builder,source={dir},target={dir} ")
            }
            _ => mount,
        };
        let run = step
            .shell()
            .map(|s| format!("{mount}{}", s.chained(&prefix)))
            .unwrap_or_default();
        Some(match step {
            Step::System { .. } => context! { kind => "system", run => run },
            Step::User {
                name,
                uid,
                notes_workdir,
                ..
            } => {
                let comment = self.comment("user.name", &format!("{name} (uid {uid})"))?;
                context! { kind => "user", comment => comment, notes_workdir => notes_workdir, run => run }
            }
            Step::Venv { why, .. } => {
                context! { kind => "venv", why => *why, dir => VENV, run => run }
            }
            Step::Url {
                field,
                url,
                dest,
                sha256,
                uid,
                ..
            } => {
                if !self.url_is_a_download(&format!("{field}.url"), url) {
                    return None;
                }
                let args = self.copy_args(field, &[url.as_str(), dest.as_str()])?;
                let mut notes = Vec::new();
                notes.extend(self.comment(field, &format!("{field}: {url}")));
                let checksum = match sha256 {
                    Some(h) => {
                        *needs_syntax = true;
                        h.clone()
                    }
                    None => {
                        notes.push("no sha256 in the source: fetched without verification".into());
                        String::new()
                    }
                };
                let chown = uid.map(|u| u.to_string()).unwrap_or_default();
                context! { kind => "url", notes => notes, checksum => checksum, chown => chown, args => args }
            }
            Step::Huggingface {
                field,
                repo,
                revision,
                to,
                ..
            } => {
                let note = self.comment(
                    field,
                    &format!("{field}: Hugging Face {repo} at revision {revision} into {to}"),
                )?;
                context! { kind => "huggingface", note => note, run => run }
            }
            Step::PythonNote { version } => {
                let note = self.comment("python.version", &format!(
                    "python.version {version}: the base image's python3 is used; sclc does not install Python into an image"
                ))?;
                context! { kind => "python_note", note => note }
            }
            Step::Requirements {
                files,
                with_packages,
                hashed,
                ..
            } => {
                let mut copies = Vec::new();
                for r in files {
                    if self.copy_source(&r.field, &r.path) {
                        copies
                            .extend(self.copy_args(&r.field, &[r.path.as_str(), r.dest.as_str()]));
                    }
                }
                context! { kind => "requirements", copies => copies, run => run, with_packages => with_packages, hashed => hashed }
            }
            Step::Setup {
                field, first, text, ..
            } => {
                // A step with a `'` (quoted as `'\''`) is also shown as
                // written. Each shown line is one physical Dockerfile line:
                // it must fit.
                let body = text.strip_suffix('\n').unwrap_or(text);
                let shown: Vec<String> = if text.contains('\'') {
                    body.split('\n').map(quote::comment).collect()
                } else {
                    Vec::new()
                };
                if let Some((j, n)) = shown
                    .iter()
                    .map(String::len)
                    .enumerate()
                    .find(|(_, n)| *n > MAX_VALUE_BYTES)
                {
                    self.refuse(
                        field,
                        ErrorKind::Unwritable,
                        format!("line {} is {n} bytes long once quoted, more than the {MAX_VALUE_BYTES} one Dockerfile line of a step may take (BuildKit reads lines of at most {MAX_LINE_BYTES} bytes)", j + 1),
                        Some("split the line, or put the long text in a file of the build context"),
                    );
                    return None;
                }
                context! { kind => "setup", first => first, field => field, shown => shown, run => run }
            }
            Step::Env => {
                let (env, secrets) = self.vars();
                let mut mounts = Vec::new();
                for (i, v) in self.spec.volumes.iter().enumerate() {
                    let text = format!("{} <- {} ({})", v.mount, v.source, mode_name(v.mode));
                    mounts.extend(self.comment(format!("volumes[{i}]"), &text));
                }
                context! { kind => "env", env => env, secrets => secrets, mounts => mounts }
            }
            Step::Writable { .. } => context! { kind => "writable", run => run },
            Step::OwnWorkdir { .. } => context! { kind => "own_workdir", run => run },
            Step::Runtime { user, workdir } => {
                let user = match user {
                    Some((uid, name)) => {
                        let comment = self
                            .comment("user.name", &format!("{name} (uid {uid})"))
                            .unwrap_or_default();
                        context! { uid => uid, comment => comment }
                    }
                    None => Value::from(()),
                };
                let workdir = match workdir {
                    Some(w) => match quote::dockerfile_word(w) {
                        Ok(word) => self.fits("workdir", word).unwrap_or_default(),
                        Err(_) => String::new(),
                    },
                    None => String::new(),
                };
                context! { kind => "runtime", user => user, workdir => workdir }
            }
            Step::Files { copies, uid } => {
                let mut files = Vec::new();
                for (field, from, to) in copies {
                    if self.copy_source(field, from) {
                        files.extend(self.copy_args(field, &[from.as_str(), to.as_str()]));
                    }
                }
                let chown = uid.map(|u| u.to_string()).unwrap_or_default();
                context! { kind => "files", files => files, chown => chown }
            }
            Step::Tool { .. } | Step::Conda { .. } | Step::Packages { .. } => {
                context! { kind => "run", run => run }
            }
            Step::Wheels { .. } => context! { kind => "wheels", run => run },
        })
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

    /// Whether `url` (an `http://` or `https://` URL, checked by the plan)
    /// can be fetched as a file by `ADD`: its path must not end in `.git`
    /// (BuildKit's `dfgitutil.ParseGitRef` reads such a URL, with or without
    /// `#ref`, as a git repository and clones it).
    fn url_is_a_download(&mut self, field: &str, url: &str) -> bool {
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .unwrap_or(url);
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
            if &**k == HASH_LABEL {
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
                Some(k.to_string())
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

fn mode_name(m: VolumeMode) -> &'static str {
    match m {
        VolumeMode::ReadOnly => "read_only",
        VolumeMode::ReadWrite => "read_write",
        VolumeMode::ReadWriteMany => "read_write_many",
    }
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
        assert_eq!(infer_manager("centos:7"), SystemManager::Yum);
        assert_eq!(infer_manager("amazonlinux:2"), SystemManager::Yum);
        assert_eq!(infer_manager("amazonlinux:2023"), SystemManager::Dnf);
        assert_eq!(
            infer_manager("registry.access.redhat.com/ubi9/ubi-minimal:9.4"),
            SystemManager::Microdnf
        );
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
    fn tidy_collapses_blank_lines() {
        assert_eq!(tidy("\n\na\n\n\n\nb\n\n"), "a\n\nb\n");
        assert_eq!(tidy("a\r\n  \n\nb"), "a\r\n\nb\n");
    }
}
