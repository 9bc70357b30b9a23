//! The Dockerfile backend: [`lower`] turns one [`EnvSpec`] into a
//! `Dockerfile` (plus `Dockerfile.dockerignore` and `.dockerignore` when the
//! env has `ignore` globs), or, for an env with `services`, one folder of
//! those per service.
//!
//! Layout of a generated Dockerfile, chosen for the layer cache (what changes
//! least comes first) and for hadolint (`.hadolint.yaml` at the workspace
//! root lists the rules it ignores, each with its reason):
//!
//! 1. a `# syntax=` line only when a feature needs the Dockerfile 1.7
//!    frontend (`ADD --checksum`, a here-document for a multi-line `setup`
//!    step), then a header comment (env, IR hash, how to build);
//! 2. `FROM` the exact image ([`scl_ir::ImageRef::pinned`]);
//! 3. system packages in one layer with the base image's manager (apt: `apt-get
//!    update`, `--no-install-recommends`, lists removed in the same `RUN`;
//!    apk: `--no-cache`; dnf: `dnf clean all`), in IR order;
//! 4. the runtime user (`useradd`, or busybox `adduser` on apk images), unless
//!    it is root;
//! 5. assets (a URL through `ADD`, verified by `--checksum` when the IR has a
//!    sha256; a Hugging Face download with a pinned `huggingface_hub`
//!    installed to a scratch folder and removed in the same layer, so the
//!    image's own packages are untouched). They come before the Python
//!    packages so that editing a requirement does not download the weights
//!    again;
//! 6. Python: conda packages, then the requirements files (copied to
//!    `/tmp/scl/requirements/<n>-<basename>` and installed before any source
//!    file is copied), then `python.packages`; never Python itself: the base
//!    image's `python3` is used;
//! 7. `setup` steps, one `RUN` each, in order, as root;
//! 8. `ENV` for plain vars (secrets only named in a comment), the run-time
//!    mounts as a comment;
//! 9. `USER <uid>` (numeric, so Kubernetes `runAsNonRoot` can check it), then
//!    `WORKDIR` (BuildKit creates it owned by that user), then the `files`
//!    copies (`COPY --chown`), last because source changes most;
//! 10. `EXPOSE`, `LABEL` (description, the IR labels, `dev.scl.ir.sha256`),
//!     `ENTRYPOINT`/`CMD` in exec form.
//!
//! The build context is the workspace root: every `COPY` source is the
//! workspace-relative path the IR holds.

use minijinja::{context, AutoEscape, Environment, UndefinedBehavior, Value};
use scl_ir::{Asset, EnvSpec, PythonManager, SystemManager, VarValue, VolumeMode};

use crate::quote;
use crate::{Artifact, FieldWarning, Lowered};

const DOCKERFILE_TEMPLATE: &str = include_str!("templates/docker/Dockerfile.j2");
const DOCKERIGNORE_TEMPLATE: &str = include_str!("templates/docker/dockerignore.j2");

/// The Dockerfile frontend named in the `# syntax=` line when one is needed:
/// `ADD --checksum` needs 1.6 or later and here-documents 1.4 or later
/// (Docker's Dockerfile reference, "ADD --checksum" and "Here-Documents").
pub const DOCKERFILE_SYNTAX: &str = "docker/dockerfile:1.7";

/// The `huggingface_hub` release used to download Hugging Face assets
/// (its `huggingface-cli download … --revision … --local-dir …`).
pub const HUGGINGFACE_HUB: &str = "huggingface_hub==0.23.4";

/// The `uv` release installed (with pip) for `python.manager = .uv`.
pub const UV: &str = "uv==0.13.9";

/// The default output folder of `sclc build`, used only in the header's
/// build hint.
const OUT_DIR: &str = "out";
const PIP: &str = "python3 -m pip install --no-cache-dir";
const UV_PIP: &str = "uv pip install --system --no-cache";
const HF_TMP: &str = "/tmp/scl/hf";
const REQUIREMENTS_DIR: &str = "/tmp/scl/requirements";
const SECRET_HINT: &str = "pass with docker run -e / Kubernetes secretKeyRef";

/// Lowers `spec`, the IR of the env called `env_name`, to Dockerfile
/// artifacts.
///
/// Returns, for an env with a `base`: `Dockerfile`, and when `ignore` is
/// non-empty `Dockerfile.dockerignore` and `.dockerignore` (same contents).
/// For each entry of `services` that has a base, the same files under
/// `<service>/` (service names sorted). An env with neither gives no
/// artifact and a warning on `base`.
///
/// Never fails: a field Docker cannot express, or a value that cannot be
/// written safely (a line break in a package name, an ENV value or a
/// path; a malformed sha256), is left out of the output and reported as a
/// [`FieldWarning`] naming it. `resources` and `distributed` are always
/// reported (they are run-time settings). The output depends only on `spec`
/// and `env_name`.
///
/// # Panics
/// Only if the embedded templates are broken (covered by the crate's tests).
pub fn lower(spec: &EnvSpec, env_name: &str) -> Lowered {
    let mut out = Lowered::default();
    let origin = format!("env {}", quote::comment(env_name));
    lower_into(spec, env_name, &origin, "", "", &mut out);
    out
}

/// Lowers one built env (and its services) into `out`: artifacts under
/// `path_prefix` (`""` or `"webui/"`), warnings under `field_prefix`
/// (`""` or `"services.webui."`).
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
        };
        let dockerfile_path = format!(
            "{OUT_DIR}/{}/{path_prefix}Dockerfile",
            quote::comment(env_name)
        );
        if let Some(text) = job.dockerfile(origin, &dockerfile_path) {
            out.artifacts.push(Artifact {
                path: format!("{path_prefix}Dockerfile"),
                contents: text,
            });
            if let Some(ignore) = job.dockerignore(origin) {
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
        out.warnings.push(FieldWarning {
            field: format!("{field_prefix}base"),
            message: "not set and no services: there is no image to build, so no Dockerfile".into(),
        });
    }
    for (name, service) in &spec.services {
        let field = format!("{field_prefix}services.{name}");
        if !is_folder_name(name) {
            out.warnings.push(FieldWarning {
                field,
                message: "the service name cannot be used as a folder name; no Dockerfile for it"
                    .into(),
            });
            continue;
        }
        if service.base.is_none() && service.services.is_empty() {
            out.warnings.push(FieldWarning {
                field: format!("{field}.base"),
                message: "not set: the service has no image to build, so no Dockerfile".into(),
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

/// A name usable as one path segment: `[A-Za-z0-9_.-]+`, not `.` or `..`.
fn is_folder_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The state of lowering one built env.
struct Job<'a> {
    spec: &'a EnvSpec,
    prefix: &'a str,
    warnings: &'a mut Vec<FieldWarning>,
}

impl Job<'_> {
    fn warn(&mut self, field: impl AsRef<str>, message: impl Into<String>) {
        self.warnings.push(FieldWarning {
            field: format!("{}{}", self.prefix, field.as_ref()),
            message: message.into(),
        });
    }

    /// `value` shell-quoted, or `None` (with a warning on `field`) when it
    /// holds a line break a `RUN` line cannot carry.
    fn shell_word(&mut self, field: impl AsRef<str>, value: &str) -> Option<String> {
        if quote::has_line_break(value) {
            self.warn(
                field,
                format!("{}; left out of the Dockerfile", quote::Unrepresentable),
            );
            None
        } else {
            Some(quote::shell(value))
        }
    }

    fn dockerfile(&mut self, origin: &str, dockerfile_path: &str) -> Option<String> {
        let spec = self.spec;
        let base = spec.base.as_ref()?;
        let from = match quote::dockerfile_word(&base.pinned()) {
            Ok(w) => w,
            Err(e) => {
                self.warn("base", format!("{e}; no Dockerfile"));
                return None;
            }
        };
        let manager = spec
            .system
            .as_ref()
            .map(|s| s.manager)
            .unwrap_or_else(|| infer_manager(&base.reference));
        let mut needs_syntax = false;

        // Run-time settings an image cannot hold.
        if let Some(r) = &spec.resources {
            if r.requests.is_some() || r.limits.is_some() {
                self.warn(
                    "resources",
                    "requests/limits are set at run time (docker run --cpus/--memory/--gpus, compose or the k8s target); an image does not carry them",
                );
            }
        }
        if spec.distributed.is_some() {
            self.warn(
                "distributed",
                "distributed launch is applied by the k8s target; the Dockerfile runs one process",
            );
        }

        // System packages.
        let mut packages = Vec::new();
        if let Some(system) = &spec.system {
            for (i, p) in system.packages.iter().enumerate() {
                packages.extend(self.shell_word(format!("system.packages[{i}]"), p));
            }
        }
        let system = if packages.is_empty() {
            Value::from(())
        } else {
            context! { manager => manager_name(manager), packages => packages }
        };

        // The runtime user.
        let (create_user, user, chown) = match &spec.user {
            None => {
                self.warn("user", "not set: the image keeps the base image's user");
                (Value::from(()), Value::from(()), String::new())
            }
            Some(u) => {
                let comment = quote::comment(&format!("{} (uid {})", u.name, u.uid));
                let user = context! { uid => u.uid, comment => comment };
                if u.is_root() {
                    (Value::from(()), user, String::new())
                } else {
                    let create = match self.shell_word("user.name", &u.name) {
                        Some(name) => context! {
                            manager => manager_name(manager), name => name, uid => u.uid,
                        },
                        None => Value::from(()),
                    };
                    let chown = if quote::is_dockerfile_bare(&u.name) {
                        u.name.clone()
                    } else {
                        u.uid.to_string()
                    };
                    (create, user, chown)
                }
            }
        };

        // Assets.
        let mut assets = Vec::new();
        for (i, asset) in spec.assets.iter().enumerate() {
            let field = format!("assets[{i}]");
            match asset {
                Asset::Url { url, sha256, to } => {
                    let dest = join_path(to, &url_basename(url));
                    let args = match quote::dockerfile_args(&[url.as_str(), dest.as_str()]) {
                        Ok(a) => a,
                        Err(e) => {
                            self.warn(&field, format!("{e}; left out of the Dockerfile"));
                            continue;
                        }
                    };
                    let mut notes = vec![quote::comment(&format!("{field}: {url}"))];
                    let checksum = match sha256 {
                        Some(h) if is_sha256_hex(h) => {
                            needs_syntax = true;
                            h.to_ascii_lowercase()
                        }
                        Some(_) => {
                            self.warn(
                                format!("{field}.sha256"),
                                "not a SHA-256 digest (64 hex digits); the asset is left out rather than fetched unverified",
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
                        kind => "url", notes => notes, checksum => checksum, chown => chown.clone(), args => args,
                    });
                }
                Asset::Huggingface {
                    repo,
                    files,
                    revision,
                    to,
                } => {
                    let repo_q = self.shell_word(format!("{field}.repo"), repo);
                    let rev_q = self.shell_word(format!("{field}.revision"), revision);
                    let to_q = self.shell_word(format!("{field}.to"), to);
                    let mut files_q = Vec::new();
                    for (j, f) in files.iter().enumerate() {
                        files_q.extend(self.shell_word(format!("{field}.files[{j}]"), f));
                    }
                    let (Some(repo_q), Some(rev_q), Some(to_q)) = (repo_q, rev_q, to_q) else {
                        continue;
                    };
                    if files_q.len() != files.len() {
                        continue;
                    }
                    let notes = vec![quote::comment(&format!(
                        "{field}: Hugging Face {repo} at revision {revision} into {to}"
                    ))];
                    assets.push(context! {
                        kind => "huggingface", notes => notes, repo => repo_q, files => files_q,
                        revision => rev_q, to => to_q,
                    });
                }
            }
        }

        let python = self.python(base);
        let setup = self.setup(&mut needs_syntax);

        // Variables: plain ones in one ENV, secrets only named.
        let mut env = Vec::new();
        let mut secrets = Vec::new();
        for (k, v) in &spec.vars {
            let field = format!("vars.{k}");
            if !quote::is_dockerfile_bare(k) || k.contains('=') {
                self.warn(
                    field,
                    "not a name an ENV instruction can hold; left out of the Dockerfile",
                );
                continue;
            }
            match v {
                VarValue::Plain(s) => match quote::dockerfile_value(s) {
                    Ok(q) => env.push(format!("{k}={q}")),
                    Err(e) => {
                        self.warn(field, format!("the value {e}; left out of the Dockerfile"))
                    }
                },
                VarValue::Secret(r) => secrets.push(quote::comment(&format!(
                    "runtime secret: {k} from secret {} key {} ({SECRET_HINT})",
                    r.secret, r.key
                ))),
            }
        }

        let mounts: Vec<String> = spec
            .volumes
            .iter()
            .map(|v| {
                quote::comment(&format!(
                    "{} <- {} ({})",
                    v.mount,
                    v.source,
                    mode_name(v.mode)
                ))
            })
            .collect();

        let workdir = match &spec.workdir {
            None => String::new(),
            Some(w) => match quote::dockerfile_word(w) {
                Ok(q) => q,
                Err(e) => {
                    self.warn("workdir", format!("{e}; left out of the Dockerfile"));
                    String::new()
                }
            },
        };

        // The runtime user must own its working directory: it may already
        // exist in the base (root-owned `/workspace` in the PyTorch images)
        // or have been filled by `setup` steps, which run as root.
        let workdir_owner = match (&spec.workdir, &spec.user) {
            (Some(w), Some(u)) if !u.is_root() && !workdir.is_empty() => {
                let w = quote::shell(w);
                format!("mkdir -p {w} && chown -R {} {w}", u.uid)
            }
            _ => String::new(),
        };

        let mut files = Vec::new();
        for (i, f) in spec.files.iter().enumerate() {
            match quote::dockerfile_args(&[f.from.as_str(), f.to.as_str()]) {
                Ok(args) => files.push(context! { chown => chown.clone(), args => args }),
                Err(e) => self.warn(
                    format!("files[{i}]"),
                    format!("{e}; left out of the Dockerfile"),
                ),
            }
        }

        let ports: Vec<String> = spec.ports.iter().map(|p| p.to_string()).collect();
        let labels = self.labels();
        let entrypoint = if spec.entrypoint.is_empty() {
            String::new()
        } else {
            quote::json_array(&spec.entrypoint)
        };
        let cmd = if spec.command.is_empty() {
            String::new()
        } else {
            quote::json_array(&spec.command)
        };

        let ctx = context! {
            syntax => if needs_syntax { DOCKERFILE_SYNTAX } else { "" },
            origin => origin,
            ir_hash => spec.content_hash(),
            dockerfile_path => dockerfile_path,
            from => from,
            system => system,
            create_user => create_user,
            pip => PIP,
            hf_tmp => HF_TMP,
            hf_hub => HUGGINGFACE_HUB,
            assets => assets,
            python => python,
            setup => setup,
            env => env,
            secrets => secrets,
            mounts => mounts,
            user => user,
            workdir => workdir,
            workdir_owner => workdir_owner,
            files => files,
            ports => ports,
            labels => labels,
            entrypoint => entrypoint,
            cmd => cmd,
        };
        Some(render("Dockerfile", ctx))
    }

    /// The Python section: notes, the uv install, conda, requirements files,
    /// packages; `none` when there is nothing to do.
    fn python(&mut self, base: &scl_ir::ImageRef) -> Value {
        let spec = self.spec;
        let mut notes = Vec::new();
        let manager = spec
            .python
            .as_ref()
            .map(|p| p.manager)
            .unwrap_or(PythonManager::Pip);
        let installer = if manager == PythonManager::Uv {
            UV_PIP
        } else {
            PIP
        };

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
                    None => notes.push(quote::comment(&format!(
                        "python.version {v}: the base image's python3 is used; sclc does not install Python into an image"
                    ))),
                }
            }
            if let Some(u) = &py.index_url {
                if let Some(q) = self.shell_word("python.index_url", u) {
                    index_args.push(format!("--index-url {q}"));
                }
            }
            for (i, u) in py.extra_index_urls.iter().enumerate() {
                if let Some(q) = self.shell_word(format!("python.extra_index_urls[{i}]"), u) {
                    index_args.push(format!("--extra-index-url {q}"));
                }
            }
            for (n, r) in py.requirements.iter().enumerate() {
                let field = format!("python.requirements[{n}]");
                let dest = format!("{REQUIREMENTS_DIR}/{n}-{}", basename(&r.path));
                match (
                    quote::dockerfile_args(&[r.path.as_str(), dest.as_str()]),
                    self.shell_word(&field, &dest),
                ) {
                    (Ok(copy), Some(dest_q)) => {
                        requirements.push(context! { copy => copy, dest => dest_q })
                    }
                    (Err(e), _) => self.warn(field, format!("{e}; left out of the Dockerfile")),
                    _ => {}
                }
            }
            for (i, p) in py.packages.iter().enumerate() {
                packages.extend(self.shell_word(format!("python.packages[{i}]"), p));
            }
        }

        let mut conda = Value::from(());
        if let Some(c) = &spec.conda {
            let mut channels = Vec::new();
            for (i, ch) in c.channels.iter().enumerate() {
                channels.extend(self.shell_word(format!("conda.channels[{i}]"), ch));
            }
            let mut cpkgs = Vec::new();
            for (i, p) in c.packages.iter().enumerate() {
                cpkgs.extend(self.shell_word(format!("conda.packages[{i}]"), p));
            }
            if !cpkgs.is_empty() {
                conda = context! { channels => channels, packages => cpkgs };
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
        }
    }

    /// The `setup` steps: one-line steps as `RUN <step>`, multi-line ones (or
    /// one ending in a backslash, which would continue the instruction) as a
    /// here-document.
    fn setup(&mut self, needs_syntax: &mut bool) -> Vec<Value> {
        let mut steps = Vec::new();
        for (i, step) in self.spec.setup.iter().enumerate() {
            let field = format!("setup[{i}]");
            let body = step.replace("\r\n", "\n");
            if body.trim().is_empty() {
                self.warn(field, "an empty step; left out of the Dockerfile");
                continue;
            }
            if body.contains(['\r', '\0']) {
                self.warn(
                    field,
                    "contains a carriage return or NUL; left out of the Dockerfile",
                );
                continue;
            }
            let body = body.trim_end_matches('\n').to_string();
            if body.contains('\n') || body.ends_with('\\') {
                *needs_syntax = true;
                let mut delimiter = "SCL_SETUP".to_string();
                let mut n = 0;
                while body.lines().any(|l| l.trim() == delimiter) {
                    n += 1;
                    delimiter = format!("SCL_SETUP_{n}");
                }
                steps.push(context! { heredoc => true, delimiter => delimiter, body => body });
            } else {
                steps.push(context! { heredoc => false, body => body });
            }
        }
        steps
    }

    /// `key="value"` pairs for the LABEL instruction: the description, the
    /// IR labels (sorted), the IR hash.
    fn labels(&mut self) -> Vec<String> {
        const DESCRIPTION: &str = "org.opencontainers.image.description";
        const HASH: &str = "dev.scl.ir.sha256";
        let spec = self.spec;
        let mut out = Vec::new();
        if let Some(d) = &spec.description {
            if !spec.labels.contains_key(DESCRIPTION) {
                // A label is one line: runs of whitespace, line breaks included, become one space.
                let flat = d.split_whitespace().collect::<Vec<_>>().join(" ");
                let flat: String = flat.chars().filter(|c| *c != '\0').collect();
                if let Ok(q) = quote::dockerfile_value(&flat) {
                    out.push(format!("{DESCRIPTION}={q}"));
                }
            }
        }
        for (k, v) in &spec.labels {
            let field = format!("labels.{k}");
            if k == HASH {
                self.warn(
                    field,
                    "reserved: sclc sets it to the IR hash; the source's value is left out",
                );
                continue;
            }
            let key = if quote::is_dockerfile_bare(k) && !k.contains('=') {
                Ok(k.clone())
            } else {
                quote::dockerfile_value(k)
            };
            match (key, quote::dockerfile_value(v)) {
                (Ok(k), Ok(v)) => out.push(format!("{k}={v}")),
                (Err(e), _) | (_, Err(e)) => {
                    self.warn(field, format!("{e}; left out of the Dockerfile"))
                }
            }
        }
        out.push(format!("{HASH}=\"{}\"", spec.content_hash()));
        out
    }

    fn dockerignore(&mut self, origin: &str) -> Option<String> {
        let mut patterns = Vec::new();
        for (i, p) in self.spec.ignore.iter().enumerate() {
            if quote::has_line_break(p) {
                self.warn(
                    format!("ignore[{i}]"),
                    format!("{}; left out of .dockerignore", quote::Unrepresentable),
                );
            } else {
                patterns.push(p.clone());
            }
        }
        if patterns.is_empty() {
            return None;
        }
        Some(render(
            "dockerignore",
            context! { origin => origin, dockerfile_name => "Dockerfile", patterns => patterns },
        ))
    }
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

/// Collapses runs of blank lines to one (outside here-documents, which are
/// kept byte for byte) and ends the text with exactly one newline, so the
/// template can be written for readability.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = true; // no blank line at the top
    let mut heredoc: Option<String> = None; // inside a here-document: keep every line
    for line in text.lines() {
        if let Some(delimiter) = &heredoc {
            if line == delimiter {
                heredoc = None;
            }
            out.push_str(line);
            out.push('\n');
            blank = false;
            continue;
        }
        if let Some(rest) = line.strip_prefix("RUN <<'") {
            heredoc = rest.strip_suffix('\'').map(str::to_string);
        }
        let is_blank = line.trim().is_empty();
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

/// The package manager of an image when `system` is absent from the IR, by
/// the rule of the Env schema (`design/language.md`): alpine → apk;
/// fedora, rocky, ubi, centos, almalinux → dnf; otherwise apt.
pub fn infer_manager(image: &str) -> SystemManager {
    let lower = image.to_ascii_lowercase();
    let (repo, tag) = split_ref(&lower);
    let name = repo.rsplit('/').next().unwrap_or(repo);
    if name.contains("alpine") || tag.is_some_and(|t| t.contains("alpine")) {
        SystemManager::Apk
    } else if ["fedora", "rocky", "rockylinux", "centos", "almalinux"].contains(&name)
        || name.starts_with("ubi")
        || repo.contains("/ubi")
    {
        SystemManager::Dnf
    } else {
        SystemManager::Apt
    }
}

/// `(repository, tag)` of an image reference, digest dropped.
fn split_ref(image: &str) -> (&str, Option<&str>) {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last_slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[last_slash..].rfind(':') {
        Some(i) => (
            &without_digest[..last_slash + i],
            Some(&without_digest[last_slash + i + 1..]),
        ),
        None => (without_digest, None),
    }
}

/// The tag of an official-style Python image (`python:3.10-slim`,
/// `docker.io/library/python:3.11`), or `None` for any other image (or an
/// untagged one).
fn python_image_tag(image: &str) -> Option<&str> {
    let (repo, tag) = split_ref(image);
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
            split_ref("localhost:5000/a/b:1.2@sha256:ff"),
            ("localhost:5000/a/b", Some("1.2"))
        );
        assert_eq!(
            split_ref("localhost:5000/a/b"),
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
        assert_eq!(
            tidy("RUN <<'E'\nx\n\n\ny\nE\n\n\nZ\n"),
            "RUN <<'E'\nx\n\n\ny\nE\n\nZ\n"
        );
    }
}
