//! The conda backend: [`lower`] turns one [`EnvSpec`] into an
//! `environment.yml` for `conda env create -f environment.yml` (or
//! `mamba`/`micromamba create -f`), and, for an env with `services`, one
//! `<service>/environment.yml` per service (service names sorted).
//!
//! The file format is conda's (conda docs, "Managing environments →
//! Creating an environment file manually"; `rattler_conda_types`'s
//! `EnvironmentYaml` reads the same fields), written from a serde struct by
//! `serde_yaml_ng`, in this order:
//!
//! - a header comment (env, IR hash, how to create the env);
//! - `name`: the env's name (a service's name for a service). conda refuses
//!   `/`, space, `:` and `#` in a name and keeps `base` and `root` for its
//!   own environment (`conda/base/constants.py`,
//!   `PREFIX_NAME_DISALLOWED_CHARS`; `validate_prefix_name`): such a name is
//!   a [`FieldError`];
//! - `channels`: `conda.channels` exactly, in the written order (it is the
//!   priority order). With no channels, [`DEFAULT_CHANNELS`]:
//!   `conda-forge` and `nodefaults`. conda itself would fall back to
//!   `defaults` (Anaconda's repository, whose terms of service require a
//!   paid licence for larger organisations) and to whatever the machine's
//!   `.condarc` lists; `nodefaults` makes the file mean the same on every
//!   machine and keeps `defaults` out unless the env names it;
//! - `dependencies`: `python=<python.version>` (conda's `=` matches the
//!   version's prefix: `python=3.11` is any 3.11.x, `python=3.11.7` that
//!   release), then `conda.packages` as written, each checked to be a match
//!   spec by `scl_ir::conda::match_spec` (rattler, as conda reads specs);
//!   then
//!   `pip` itself when there are pip entries (conda warns when a `pip:`
//!   section comes without it), unless `conda.packages` names pip; then the
//!   `pip:` subsection;
//! - the `pip:` subsection: `--index-url URL` and `--extra-index-url URL`
//!   first, then every requirements file of `python.requirements` inlined
//!   (its text comes from [`LowerCx::files`]), then `python.packages` in
//!   declaration order. conda writes these entries, joined by newlines, to a
//!   temporary `condaenv.*.requirements.txt` in the folder of the
//!   environment file and runs `pip install -U -r` on it
//!   (`conda/env/installers/pip.py`), so each entry is one line of a pip
//!   requirements file, read again by pip: a requirements file cannot be
//!   named by a relative `-r` (it would be looked up beside that temporary
//!   file, conda#10815), nested `-r`/`-c` references inside an inlined
//!   file are refused for the same reason (the IR does not carry their
//!   text), and so are relative local paths (`./pkg`, `-e .`), which pip
//!   would resolve from the output folder instead of the workspace. A file
//!   is read as pip reads it (pip `req_file.py`: a `\` line end joins the
//!   next line, `#` comments and blank lines are dropped, the rest
//!   stripped); option lines (`--index-url`, `--extra-index-url`,
//!   `--find-links`, `--pre`, …) and per-requirement options (`--hash`)
//!   stay, as lines of the subsection. An entry pip would read as something
//!   else once written to that file (a line break, a `#` comment, a
//!   trailing `\`, a `${VAR}` reference) is a [`FieldError`];
//! - `variables`: the plain `vars` (conda stores them in
//!   `conda-meta/state` and sets them on `conda activate`). Secret vars are
//!   never written: one warning each, naming the var. conda's POSIX
//!   activator writes `export NAME='VALUE'` for the shell to evaluate, and
//!   its fish, csh, PowerShell and cmd.exe activators double-quote the value
//!   (`conda/activate.py`, `export_var_tmpl`), so a name that is not a shell
//!   name (`[A-Za-z_][A-Za-z0-9_]*`) and a value holding `'`, `"`, a line
//!   break or an invisible character are refused; a value holding `$`,
//!   `` ` ``, `\` or `%` is written (POSIX shells read it as written) with a
//!   warning that the other shells expand it.
//!
//! Every string is written by the YAML serializer, which quotes what a YAML
//! reader would take for something else (`null`, `true`, `0123`, `: `,
//! `#`, …). conda reads the file with `ruamel.yaml` (`YAML(typ="safe")`,
//! YAML 1.2: `conda/common/serialize.py`), whose implicit types are a little
//! wider than the serializer's (`1_000` is an int, `2024-01-31` a date): a
//! value the serializer would leave unquoted and ruamel would read as
//! another type is a [`FieldError`] ([`yaml_misread`]).
//!
//! Fields conda cannot express (system packages, the base image, files,
//! setup steps, the runtime user, resources, …) are one warning each, from
//! [`EXPRESSES`] ([`crate::expresses::unexpressed`]). A value that cannot be
//! written safely is a [`FieldError`] and the env gets no artifact at all.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use rattler_conda_types::MatchSpec;
use scl_ir::{EnvSpec, PythonManager, VarValue};
use serde::Serialize;

use crate::expresses::Expresses;
use crate::{quote, Artifact, ErrorKind, FieldError, FieldWarning, LowerCx, Lowered};

/// The file the conda target writes in an env's folder (and in each
/// service's folder).
pub const FILE_NAME: &str = "environment.yml";

/// The channels written when `conda.channels` is empty: conda-forge, and
/// `nodefaults` so that neither Anaconda's `defaults` channel (licence terms
/// for organisations) nor the channels of the machine's `.condarc` are added
/// (conda docs, "Creating an environment file manually": `nodefaults`).
pub const DEFAULT_CHANNELS: &[&str] = &["conda-forge", "nodefaults"];

/// The conda `environment.yml` target in the [`crate::REGISTRY`].
pub struct Conda;

impl crate::Backend for Conda {
    fn name(&self) -> &'static str {
        "conda"
    }
    fn summary(&self) -> &'static str {
        "a conda environment.yml per env (conda env create -f environment.yml)"
    }
    fn layout(&self) -> &'static [&'static str] {
        &["environment.yml", "<service>/environment.yml"]
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered {
        lower(spec, cx)
    }
}

/// The IR fields the conda target expresses ([`crate::expresses`]): a field
/// set in an env and not written to `environment.yml` is a warning,
/// computed from this list.
pub const EXPRESSES: Expresses = Expresses {
    target: "conda",
    writes: &[
        "conda",
        "python.extra_index_urls",
        "python.index_url",
        // pip installs the `pip:` list whatever the manager; `uv` is a
        // warning of its own.
        "python.manager",
        "python.packages",
        "python.requirements",
        "python.version",
        "services",
        // Plain vars; each secret var is a warning of its own.
        "vars",
    ],
    instead: &[
        (
            "python.index_credentials",
            "the netrc secret is not written: give pip the index credentials where `conda env create` runs (a ~/.netrc, or PIP_INDEX_URL with the token)",
        ),
        (
            "system.packages",
            "conda env create installs no OS packages: install them on the machine, use conda packages for them, or use the docker target",
        ),
        (
            "assets",
            "conda env create downloads no model or data files: fetch them yourself, or use the docker target",
        ),
        (
            "files",
            "an environment.yml copies no files: the env is created where the files already are",
        ),
        (
            "setup",
            "conda env create runs no shell steps: run them after creating the env, or use the docker target",
        ),
        (
            "writable",
            "a conda env creates no folders: make them yourself, or use the docker target",
        ),
        (
            "resources",
            "a conda env sets no resource requests or limits: they belong to a runner (the k8s target, docker run)",
        ),
        (
            "volumes",
            "a conda env mounts nothing: the data must be on the machine",
        ),
        (
            "ports",
            "a conda env opens no ports: they belong to a runner (docker, k8s)",
        ),
        (
            "distributed",
            "a conda env launches nothing: run the launcher yourself, or use the k8s target",
        ),
        (
            "entrypoint",
            "an environment.yml has no command: run it with `conda run -n NAME ...`",
        ),
        (
            "command",
            "an environment.yml has no command: run it with `conda run -n NAME ...`",
        ),
        (
            "test",
            "smoke tests are not written: run them with `conda run -n NAME ...` after creating the env",
        ),
        (
            "labels",
            "an environment.yml has no labels",
        ),
        (
            "description",
            "an environment.yml has no description field",
        ),
    ],
    not_needed: &[
        // About the image, which a conda env does not have: set by default
        // on every built env, so a warning would say nothing.
        (
            "base",
            "environment.yml is created with the conda at hand; the base image is used by the docker target",
        ),
        (
            "builder",
            "conda builds no image: the build image is used by the docker target",
        ),
        (
            "user",
            "a conda env belongs to whoever creates it; it has no runtime user",
        ),
        (
            "system.manager",
            "inferred from the base image; a conda env installs no OS packages",
        ),
        (
            "workdir",
            "a conda env has no working directory: run from the folder you want",
        ),
        (
            "depends_on",
            "it orders the start of services; each service's env is created on its own",
        ),
        (
            "ignore",
            "it filters the Docker build context; conda reads no build context",
        ),
    ],
};

/// `environment.yml`, in conda's field order. Optional parts are left out
/// when empty, as conda's own `conda env export` does.
#[derive(Serialize)]
struct EnvironmentFile<'a> {
    name: &'a str,
    channels: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dependencies: Vec<Dependency>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    variables: BTreeMap<&'a str, &'a str>,
}

/// One entry of `dependencies`: a match spec, or the `pip:` subsection.
#[derive(Serialize)]
#[serde(untagged)]
enum Dependency {
    Spec(String),
    Pip { pip: Vec<String> },
}

/// Lowers `spec`, the IR of the env `cx.env`, to `environment.yml`
/// artifacts.
///
/// Returns `environment.yml` for the env, unless it only groups services
/// (no `base`, `python` or `conda` and some `services`), and
/// `<service>/environment.yml` for each service, recursively (service
/// names sorted, as the IR keeps them).
///
/// Errors ([`Lowered::errors`]; then [`Lowered::artifacts`] is empty): a
/// name conda refuses or keeps (`base`), a service name that is not a
/// folder name or takes the place of an output file
/// ([`crate::reserved_output_name`], [`crate::case_clashes`]), a conda
/// package that is not a match spec, a requirements file whose text is not
/// in [`LowerCx::files`] (or whose text does not have the IR's SHA-256), a
/// nested `-r`/`-c` or a relative path in one, a pip entry pip would read
/// as something else, a var conda's activation would misread, a string
/// conda's YAML reader would read as another type. Warnings: the set fields
/// [`EXPRESSES`] does not write, each secret var, `python.manager = uv`
/// (pip is used), a var value that non-POSIX shells expand. The output
/// depends only on `spec` and `cx`.
pub fn lower(spec: &EnvSpec, cx: &LowerCx) -> Lowered {
    let mut out = Lowered::default();
    lower_into(spec, &cx.env, cx, "", "", &mut out);
    if !out.errors.is_empty() {
        out.artifacts.clear();
    }
    out
}

/// Lowers one env (and its services) into `out`: artifacts under
/// `path_prefix` (`""` or `"webui/"`), warnings and errors under
/// `field_prefix` (`""` or `"services.webui."`).
fn lower_into(
    spec: &EnvSpec,
    name: &str,
    cx: &LowerCx,
    path_prefix: &str,
    field_prefix: &str,
    out: &mut Lowered,
) {
    let own = spec.services.is_empty()
        || spec.base.is_some()
        || spec.python.is_some()
        || spec.conda.is_some();
    if own {
        let mut job = Job {
            spec,
            cx,
            prefix: field_prefix,
            warnings: &mut out.warnings,
            errors: &mut out.errors,
        };
        if let Some(text) = job.file(name) {
            out.artifacts.push(Artifact {
                path: format!("{path_prefix}{FILE_NAME}"),
                contents: text,
            });
        }
    }
    let names: Vec<&str> = spec.services.keys().map(String::as_str).collect();
    let clashes = crate::case_clashes(&names);
    for (i, (service_name, service)) in spec.services.iter().enumerate() {
        let field = format!("{field_prefix}services.{service_name}");
        let refuse = |out: &mut Lowered, kind, message: String, help: &str| {
            out.errors.push(FieldError {
                field: field.clone(),
                kind,
                message,
                help: Some(help.into()),
            });
        };
        if !crate::is_folder_name(service_name) {
            refuse(
                out,
                ErrorKind::Unwritable,
                "the service name cannot be used as a folder name ([A-Za-z0-9_.-]+)".into(),
                "rename the service",
            );
            continue;
        }
        if let Some(why) = crate::reserved_output_name(service_name) {
            refuse(
                out,
                ErrorKind::NameClash,
                format!("the service's folder `{path_prefix}{service_name}/` {why}"),
                "rename the service",
            );
            continue;
        }
        if let Some(&(_, j)) = clashes.iter().find(|(k, _)| *k == i) {
            refuse(
                out,
                ErrorKind::NameClash,
                format!(
                    "the services `{}` and `{service_name}` differ only in case, so on a case-insensitive file system (macOS, Windows) their folders would be one",
                    names[j]
                ),
                "rename one of the services",
            );
            continue;
        }
        lower_into(
            service,
            service_name,
            cx,
            &format!("{path_prefix}{service_name}/"),
            &format!("{field}."),
            out,
        );
    }
}

/// A shell variable name (POSIX `name`): `[A-Za-z_][A-Za-z0-9_]*`.
fn is_shell_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The state of lowering one env's file.
struct Job<'a> {
    spec: &'a EnvSpec,
    cx: &'a LowerCx,
    prefix: &'a str,
    warnings: &'a mut Vec<FieldWarning>,
    errors: &'a mut Vec<FieldError>,
}

impl<'a> Job<'a> {
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

    /// `s` when conda's YAML reader reads it back as this string, else an
    /// error on `field` and `None`.
    fn yaml<'s>(&mut self, field: impl AsRef<str>, what: &str, s: &'s str) -> Option<&'s str> {
        match yaml_misread(s) {
            None => Some(s),
            Some(kind) => {
                self.refuse(
                    field,
                    ErrorKind::Misread,
                    format!(
                        "{what} `{}` would be written unquoted, and conda's YAML reader (ruamel.yaml, YAML 1.2) reads it as {kind}, not as text",
                        quote::comment(s)
                    ),
                    None,
                );
                None
            }
        }
    }

    /// The text of the env's `environment.yml`, or `None` after errors.
    fn file(&mut self, name: &str) -> Option<String> {
        let errors = self.errors.len();
        for w in crate::expresses::unexpressed(self.spec, &EXPRESSES) {
            self.warn(w.field, w.message);
        }
        let name = self.name(name);
        let channels = self.channels();
        let dependencies = self.dependencies();
        let variables = self.variables();
        if self.errors.len() > errors {
            return None;
        }
        let file = EnvironmentFile {
            name: name?,
            channels,
            dependencies,
            variables,
        };
        let yaml = match serde_yaml_ng::to_string(&file) {
            Ok(y) => y,
            Err(e) => {
                self.refuse(
                    "",
                    ErrorKind::Unwritable,
                    format!("the YAML writer refused the file: {e}"),
                    None,
                );
                return None;
            }
        };
        let env = quote::comment(&self.cx.env);
        let header = format!(
            "# conda environment of env {env}{}, generated by sclc from its IR (sha256 {}).\n# Create it with: conda env create -f {FILE_NAME}\n",
            if self.prefix.is_empty() {
                String::new()
            } else {
                format!(", {}", quote::comment(self.prefix.trim_end_matches('.')))
            },
            self.spec.content_hash(),
        );
        Some(header + &yaml)
    }

    /// The env's name, when conda accepts it as an environment name.
    fn name<'n>(&mut self, name: &'n str) -> Option<&'n str> {
        // The field that holds the name: the service entry, or none (`""`)
        // for the env itself (its name is the declaration's). Errors are
        // pushed here without the prefix, which already names the service.
        let field = self.prefix.trim_end_matches('.').to_string();
        let prefix = std::mem::take(&mut self.prefix);
        let r = self.name_at(&field, name);
        self.prefix = prefix;
        r
    }

    fn name_at<'n>(&mut self, field: &str, name: &'n str) -> Option<&'n str> {
        if let Some(c) = name.chars().find(|c| {
            matches!(c, '/' | ' ' | ':' | '#') || c.is_control() || scl_diag::is_hidden(*c)
        }) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                format!(
                    "the name `{}` holds `{}`, which conda does not allow in an environment name (`/`, space, `:`, `#`)",
                    quote::comment(name),
                    quote::comment(&c.to_string())
                ),
                Some("rename the env"),
            );
            return None;
        }
        if name.is_empty() || name == "base" || name == "root" {
            self.refuse(
                field,
                ErrorKind::Reserved,
                format!(
                    "`{}` is not a name conda creates an environment under (`base` and `root` are conda's own environment)",
                    quote::comment(name)
                ),
                Some("rename the env"),
            );
            return None;
        }
        self.yaml(field, "the name", name)
    }

    /// `conda.channels` as written, or [`DEFAULT_CHANNELS`].
    fn channels(&mut self) -> Vec<&'a str> {
        let spec = self.spec;
        let written = spec
            .conda
            .as_ref()
            .map(|c| c.channels.as_slice())
            .unwrap_or(&[]);
        if written.is_empty() {
            return DEFAULT_CHANNELS.to_vec();
        }
        let mut out = Vec::new();
        for (i, ch) in written.iter().enumerate() {
            let field = format!("conda.channels[{i}]");
            if ch.is_empty() || quote::is_unwritable(ch) || ch.chars().any(char::is_whitespace) {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!(
                        "the channel `{}` is empty or holds a space, a line break or an invisible character",
                        quote::comment(ch)
                    ),
                    None,
                );
                continue;
            }
            out.extend(self.yaml(field, "the channel", ch));
        }
        out
    }

    /// `python=…`, the conda packages, `pip` and the `pip:` subsection.
    fn dependencies(&mut self) -> Vec<Dependency> {
        let spec = self.spec;
        let mut out = Vec::new();
        let mut names_pip = false;
        if let Some(v) = spec.python.as_ref().and_then(|p| p.version.as_deref()) {
            let text = format!("python={v}");
            // A version alone: `python=3.11 4` would be a build string, and
            // `python=3.11,<4` a second constraint.
            if !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '*' | '_' | '+' | '!'))
            {
                self.refuse(
                    "python.version",
                    ErrorKind::Misread,
                    format!(
                        "`{}` is not a plain version: conda would read `{}` as more than a version",
                        quote::comment(v),
                        quote::comment(&text)
                    ),
                    Some("write a version such as `3.11` or `3.11.7`"),
                );
            } else if self.match_spec("python.version", &text).is_some() {
                out.extend(
                    self.yaml("python.version", "the spec", &text)
                        .map(|_| Dependency::Spec(text.clone())),
                );
            }
        }
        if let Some(c) = &spec.conda {
            for (i, p) in c.packages.iter().enumerate() {
                let field = format!("conda.packages[{i}]");
                let Some(parsed) = self.match_spec(&field, p) else {
                    continue;
                };
                names_pip |= parsed
                    .name
                    .as_exact()
                    .is_some_and(|n| n.as_normalized() == "pip");
                if self.yaml(&field, "the match spec", p).is_some() {
                    out.push(Dependency::Spec(p.to_string()));
                }
            }
        }
        let pip = self.pip();
        if !pip.is_empty() {
            if !names_pip {
                out.push(Dependency::Spec("pip".into()));
            }
            out.push(Dependency::Pip { pip });
        }
        out
    }

    /// `s` parsed as a conda match spec, as conda reads it
    /// (`scl_ir::conda::match_spec`), else an error on `field`.
    fn match_spec(&mut self, field: &str, s: &str) -> Option<MatchSpec> {
        let parsed = std::panic::catch_unwind(|| scl_ir::conda::match_spec(s));
        match parsed {
            _ if quote::is_unwritable(s) => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!(
                        "the match spec `{}` holds a line break or an invisible character",
                        quote::comment(s)
                    ),
                    None,
                );
                None
            }
            Ok(Ok(m)) => Some(m),
            Ok(Err(e)) => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!("`{}` is not a conda match spec: {e}", quote::comment(s)),
                    Some("write `name`, `name=1.2`, `name>=1.2,<2` or `channel::name=1.2`"),
                );
                None
            }
            Err(_) => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!(
                        "`{}` could not be read as a conda match spec (the parser failed)",
                        quote::comment(s)
                    ),
                    None,
                );
                None
            }
        }
    }

    /// The `pip:` entries: index URLs, the requirements files' lines, the
    /// packages.
    fn pip(&mut self) -> Vec<String> {
        let Some(py) = &self.spec.python else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if py.manager == PythonManager::Uv {
            self.warn(
                "python.manager",
                "conda installs the `pip:` list with pip (it runs `pip install -U -r` on it); uv is not used",
            );
        }
        let mut push = |job: &mut Self, field: &str, what: &str, entry: String| {
            if let Some(why) = pip_line_problem(&entry) {
                job.refuse(
                    field,
                    ErrorKind::Misread,
                    format!("{what} `{}` {why}", quote::comment(&entry)),
                    None,
                );
            } else if job.yaml(field, what, &entry).is_some() {
                out.push(entry);
            }
        };
        let urls = py
            .index_url
            .iter()
            .map(|u| ("python.index_url".to_string(), "--index-url", u))
            .chain(py.extra_index_urls.iter().enumerate().map(|(i, u)| {
                (
                    format!("python.extra_index_urls[{i}]"),
                    "--extra-index-url",
                    u,
                )
            }));
        // The index lines the IR's own fields write: a requirements file's
        // line that says the same again is not repeated (the IR takes a
        // file's index lines into these fields).
        let mut ir_index_lines: Vec<String> = Vec::new();
        for (field, opt, url) in urls {
            ir_index_lines.push(format!("{opt} {url}"));
            if url.is_empty()
                || url
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\'))
            {
                self.refuse(
                    &field,
                    ErrorKind::Misread,
                    format!(
                        "the URL `{}` is empty or holds a space, a quote or a backslash, which pip's option reader (shlex) would split or unquote",
                        quote::comment(url)
                    ),
                    None,
                );
                continue;
            }
            push(self, &field, "the index URL", format!("{opt} {url}"));
        }
        for (i, file) in py.requirements.iter().enumerate() {
            let field = format!("python.requirements[{i}]");
            let Some(text) = self.cx.files.get(&file.path) else {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "the text of the requirements file `{}` was not given to the conda target, which writes its lines into the `pip:` list",
                        quote::comment(&file.path)
                    ),
                    Some("sclc reads every requirements file the IR names; build again"),
                );
                continue;
            };
            if scl_ir::sha256_hex(text.as_bytes()) != file.sha256 {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "the requirements file `{}` is not the one the IR was made from (its SHA-256 differs): it changed while sclc ran",
                        quote::comment(&file.path)
                    ),
                    Some("build again"),
                );
                continue;
            }
            for (line, entry) in logical_lines(text) {
                let what = format!("line {line} of `{}`", quote::comment(&file.path));
                let same = match entry.split_once(['=', ' ']) {
                    Some((opt, url)) if opt == "--index-url" || opt == "--extra-index-url" => {
                        format!("{opt} {}", url.trim())
                    }
                    _ => String::new(),
                };
                if !same.is_empty() && ir_index_lines.contains(&same) {
                    continue;
                }
                if let Some(why) = requirement_line_problem(&entry) {
                    self.refuse(
                        &field,
                        ErrorKind::Misread,
                        format!("{what}, `{}`, {why}", quote::comment(&entry)),
                        Some("list every requirements file in `python.requirements`, or write absolute paths or URLs"),
                    );
                    continue;
                }
                push(self, &field, &what, entry);
            }
        }
        for (i, p) in py.packages.iter().enumerate() {
            let field = format!("python.packages[{i}]");
            if let Some(why) = requirement_line_problem(p) {
                self.refuse(
                    &field,
                    ErrorKind::Misread,
                    format!("the requirement `{}` {why}", quote::comment(p)),
                    None,
                );
                continue;
            }
            push(self, &field, "the requirement", p.to_string());
        }
        out
    }

    /// The plain vars, checked for conda's activation scripts.
    fn variables(&mut self) -> BTreeMap<&'a str, &'a str> {
        let spec = self.spec;
        let mut out = BTreeMap::new();
        for (name, value) in &spec.vars {
            let field = format!("vars.{name}");
            let value = match value {
                VarValue::Plain(v) => v,
                VarValue::Secret(_) => {
                    self.warn(
                        &field,
                        "a secret is never written into environment.yml: set it at activation or run time (the runner's environment, or `conda env config vars set` on the machine)",
                    );
                    continue;
                }
            };
            if !is_shell_name(name) {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "`{}` is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*), and conda's activation writes `export NAME=...` for the shell",
                        quote::comment(name)
                    ),
                    Some("rename the variable"),
                );
                continue;
            }
            if let Some(c) = value
                .chars()
                .find(|&c| c == '\'' || c == '"' || c == '\n' || scl_diag::is_hidden(c))
            {
                let what = match c {
                    '\'' | '"' => format!("`{c}`"),
                    c => format!("the character {}", c.escape_unicode()),
                };
                self.refuse(
                    &field,
                    ErrorKind::Misread,
                    format!(
                        "the value holds {what}: conda's activation scripts put the value between quotes without escaping it (`export NAME='VALUE'` for POSIX shells, `set -gx NAME \"VALUE\"` for fish), so the shell would read something else"
                    ),
                    Some("set the variable at run time instead (the runner's environment)"),
                );
                continue;
            }
            if self.yaml(&field, "the variable name", name).is_none()
                || self.yaml(&field, "the value", value).is_none()
            {
                continue;
            }
            if value.contains(['$', '`', '\\', '%']) {
                self.warn(
                    &field,
                    "POSIX shells get the value as written, but conda's fish, csh, PowerShell and cmd.exe activators write it in double quotes, where `$`, `` ` ``, `\\` or `%` are expanded",
                );
            }
            out.insert(&**name, &**value);
        }
        out
    }
}

/// Why `entry`, written as one line of the temporary requirements file
/// conda hands to pip, would not be read by pip as this line; `None` when
/// it would be. pip (`req_file.py`) splits lines on Python's line breaks,
/// joins a line ending in `\` with the next, cuts a `#` at the start or
/// after whitespace, and replaces `${NAME}`.
fn pip_line_problem(entry: &str) -> Option<&'static str> {
    if entry
        .chars()
        .any(|c| py_line_break(c) || scl_diag::is_hidden(c))
    {
        return Some("holds a line break or an invisible character, which pip would read as more lines or not show");
    }
    if entry.trim_matches(py_space).is_empty() {
        return Some("is blank");
    }
    if entry.ends_with('\\') {
        return Some("ends in `\\`, which pip reads as joining the next line");
    }
    if cut_comment(entry).len() != entry.len() {
        return Some("holds a ` #` comment, which pip would cut off");
    }
    if env_var_reference(entry) {
        return Some("holds a `${NAME}` reference, which pip replaces from the environment of `conda env create`");
    }
    None
}

/// Why a requirements-file line (or a `python.packages` entry) cannot be
/// moved into the `pip:` list: a nested `-r`/`-c` file reference, or a
/// relative local path (resolved from the folder of `environment.yml`).
fn requirement_line_problem(line: &str) -> Option<&'static str> {
    const NESTED: &str = "names another requirements or constraints file, which pip would look up beside conda's temporary copy of the list, not beside this file";
    const RELATIVE: &str = "names a relative path, which pip would resolve from the folder of environment.yml (or of conda's temporary copy of the list), not from the workspace";
    let words: Vec<&str> = line.split(py_space).filter(|w| !w.is_empty()).collect();
    for (k, w) in words.iter().enumerate() {
        if let Some(body) = w.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or("");
            // optparse takes a unique prefix: `--requirem` is `--requirement`
            // (`--require` is also `--require-hashes`), `--cons` `--constraint`
            // (`--con` is also `--config-settings`).
            let unique = |full: &str, min: usize| name.len() >= min && full.starts_with(name);
            if unique("requirement", "requirem".len()) || unique("constraint", "cons".len()) {
                return Some(NESTED);
            }
            if unique("editable", "ed".len()) || unique("find-links", "f".len()) {
                let value = body
                    .split_once('=')
                    .map(|(_, v)| v)
                    .or(words.get(k + 1).copied());
                if value.is_some_and(is_relative_path) {
                    return Some(RELATIVE);
                }
            }
        } else if let Some(rest) = w.strip_prefix('-') {
            if rest.starts_with(['r', 'c']) {
                return Some(NESTED);
            }
            if let Some(v) = rest.strip_prefix(['e', 'f']) {
                let value = if v.is_empty() {
                    words.get(k + 1).copied()
                } else {
                    Some(v)
                };
                if value.is_some_and(is_relative_path) {
                    return Some(RELATIVE);
                }
            }
        } else if k == 0 && is_relative_path(w) {
            return Some(RELATIVE);
        }
    }
    None
}

/// A relative local path as pip would take it: `.`, `./x`, `../x`,
/// `file:./x`, `file:x` (not an absolute path, a URL or a name).
fn is_relative_path(s: &str) -> bool {
    let s = s
        .strip_prefix("file:")
        .map(|r| if r.starts_with('/') { "/" } else { "./" })
        .unwrap_or(s);
    s == "." || s == ".." || s.starts_with("./") || s.starts_with("../")
}

/// Python's `str.isspace` (what `\s` and `str.strip()` use in pip).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.splitlines()` line boundaries.
fn py_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()`.
fn splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if py_line_break(c) {
            out.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' && matches!(it.peek(), Some((_, '\n'))) {
                it.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// pip's `COMMENT_RE.match`: the line starts with `#`, or whitespace and `#`.
fn starts_as_comment(line: &str) -> bool {
    line.trim_start_matches(py_space).starts_with('#')
}

/// pip's `COMMENT_RE.sub("", line)`: cut at the first `#` that starts the
/// line or follows whitespace (and the whitespace before it).
fn cut_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return line[..i].trim_end_matches(py_space);
        }
        prev_space = py_space(c);
    }
    line
}

/// Whether `s` holds `${NAME}` with `NAME` in `[A-Z0-9_]+` (pip's
/// `ENV_VAR_RE`).
fn env_var_reference(s: &str) -> bool {
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let n = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        if n > 0 && after[n..].starts_with('}') {
            return true;
        }
        rest = after;
    }
    false
}

/// The logical lines of a requirements file as pip reads them
/// (`req_file.py`: `splitlines`, `join_lines`, `ignore_comments`), with the
/// 1-based number of each one's first physical line. A UTF-8 byte-order
/// mark is dropped (pip's `auto_decode`).
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut joined: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in splitlines(text).into_iter().enumerate() {
        let n = i + 1;
        let comment = starts_as_comment(line);
        if !line.ends_with('\\') || comment {
            // pip prefixes a comment line with a space so that it is cut
            // as a comment also when it ends a joined line.
            let line = if comment {
                format!(" {line}")
            } else {
                line.to_string()
            };
            match pending.take() {
                Some((start, mut acc)) => {
                    acc.push_str(&line);
                    joined.push((start, acc));
                }
                None => joined.push((n, line)),
            }
        } else {
            let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
            acc.push_str(line.trim_matches('\\'));
            pending = Some((start, acc));
        }
    }
    joined.extend(pending);
    joined
        .into_iter()
        .filter_map(|(n, l)| {
            let l = cut_comment(&l).trim_matches(py_space);
            (!l.is_empty()).then(|| (n, l.to_string()))
        })
        .collect()
}

/// The type conda's YAML reader (ruamel.yaml's YAML 1.2 implicit resolvers,
/// `ruamel/yaml/resolver.py`) gives `s` when the YAML writer leaves it as a
/// plain (unquoted) scalar and it is not a string there: `Some("an
/// integer")` for `1_000`, `Some("a date")` for `2024-01-31`; `None` when it
/// is read back as the same string (quoted, or plain text).
pub fn yaml_misread(s: &str) -> Option<&'static str> {
    let written = serde_yaml_ng::to_string(s).ok()?;
    if written.starts_with(['\'', '"', '|', '>']) {
        return None;
    }
    static RESOLVERS: OnceLock<Vec<(regex::Regex, &'static str)>> = OnceLock::new();
    let resolvers = RESOLVERS.get_or_init(|| {
        [
            (r"^(?:true|True|TRUE|false|False|FALSE)$", "a boolean"),
            (
                r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
                "a number",
            ),
            (
                r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$",
                "an integer",
            ),
            (r"^(?:<<)$", "a merge key"),
            (r"^(?:~|null|Null|NULL|)$", "null"),
            (
                r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$",
                "a date",
            ),
            (r"^(?:=)$", "a YAML value key"),
        ]
        .into_iter()
        .map(|(re, kind)| (regex::Regex::new(re).expect("resolver regex"), kind))
        .collect()
    });
    // The writer's own text is what the reader resolves (it is `s` itself
    // for a plain scalar on one line).
    let plain = written.trim_end_matches('\n');
    resolvers
        .iter()
        .find(|(re, _)| re.is_match(plain))
        .map(|(_, kind)| *kind)
}
