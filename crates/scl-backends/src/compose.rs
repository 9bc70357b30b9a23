//! The compose backend: [`lower`] turns one [`EnvSpec`] into `compose.yaml`
//! (Compose Specification, `compose-spec.json`), one service per entry of
//! `services` (names as written; plus the env itself, named by
//! [`crate::names::object_name`], when it has a `base`), or one service for a
//! plain env. Written from this module's serde structs by `serde-saphyr`
//! ([`crate::yaml`]).
//!
//! **Where the build context is.** The docker target writes
//! `OUT/<env>/Dockerfile` (and `OUT/<env>/<service>/Dockerfile`) for the
//! build context of the workspace root, and this file sits at
//! `OUT/<env>/compose.yaml`; `--out` (default `out`, in the folder sclc runs
//! in) can be anywhere, and no backend knows where. Compose resolves a
//! relative `build.context` against the project folder (by default the
//! compose file's folder) and `build.dockerfile` against the context. So
//! both are written with compose's own variable defaults:
//!
//! ```yaml
//! build:
//!   context: ${SCL_WORKSPACE:-../..}
//!   dockerfile: ${SCL_OUT:-out}/<env>/<service>/Dockerfile
//! ```
//!
//! With the default layout (sclc run in the workspace root with `--out
//! out`) `docker compose -f out/<env>/compose.yaml up --build` works as it
//! is; with another `--out`, set `SCL_WORKSPACE` (the workspace root,
//! absolute, or relative to the compose file's folder) and `SCL_OUT` (the
//! `--out` folder, absolute or relative to the workspace root) in the
//! environment. `host:PATH` bind mounts use the same root:
//! `${SCL_WORKSPACE:-../..}/PATH`.
//!
//! **Build secrets.** The secrets the docker target's Dockerfile mounts (a
//! Hugging Face token, `python.index_credentials`) are listed in the
//! service's `build.secrets` by the same id, and declared at the top level
//! as `secrets: {ID: {environment: VAR}}`: compose reads each from the
//! caller's environment variable `VAR` (`hf.token` → `HF_TOKEN`, the
//! variable `sclc build` prints in its `docker build --secret` line).
//!
//! **Interpolation.** Compose expands `$VAR` and `${VAR}` in every string
//! value, so each `$` of an IR string is written `$$`. A secret var is
//! written `KEY=${KEY:?set KEY (secret NAME, key KEY)}`: compose takes the
//! value from the caller's environment or `.env` and stops with that
//! message when it is not set; its value is never in the file.
//! `environment` and `labels` use the list form (`KEY=VALUE`), which no
//! YAML reader reads as another type.
//!
//! **The rest.** `image: <LowerCx::image>`; `entrypoint`/`command` as exec
//! lists; `depends_on`; ports in the long syntax (`{target: P, published:
//! "P"}`: the short `"P:P"` is the same mapping, and a YAML 1.1 reader
//! would read an unquoted `8000:22` as a base-60 number); `user` (the uid)
//! and `working_dir`; `deploy.resources.limits` / `reservations` from
//! `resources.limits` / `requests` (`cpus` in cores, `memory` in bytes or a
//! binary unit: `32g`), GPUs as `reservations.devices: [{driver: nvidia,
//! count: N, capabilities: [gpu]}]` (from the limits, else the requests).
//! Volumes: `host:` → a bind mount; `nfs://HOST/PATH` → a named volume of
//! the local driver with NFS options (`type: nfs`, `o: addr=HOST`,
//! `device: ":/PATH"`); `pvc://` and `s3://` → a named volume that compose
//! creates empty, with a warning (the data must be put in it). `read_only`
//! per mode. Other fields are warnings from [`EXPRESSES`].

use std::collections::BTreeMap;

use scl_ir::{EnvSpec, SourceKind, VarValue, VolumeMode};
use serde::Serialize;

use crate::expresses::Expresses;
use crate::{quote, Artifact, ErrorKind, FieldError, FieldWarning, LowerCx, Lowered};

/// The file the compose target writes in an env's folder.
pub const FILE_NAME: &str = "compose.yaml";

/// The build context written for every service: the workspace root,
/// `SCL_WORKSPACE` or, by default, two folders up from `OUT/<env>/`.
pub const CONTEXT: &str = "${SCL_WORKSPACE:-../..}";

/// The compose target in the [`crate::REGISTRY`].
pub struct Compose;

impl crate::Backend for Compose {
    fn name(&self) -> &'static str {
        "compose"
    }
    fn summary(&self) -> &'static str {
        "a compose.yaml with one service per service (docker compose -f compose.yaml up --build)"
    }
    fn layout(&self) -> &'static [&'static str] {
        &["compose.yaml"]
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered {
        lower(spec, cx)
    }
}

/// What the compose target writes and does not ([`crate::expresses`]).
pub const EXPRESSES: Expresses = Expresses {
    target: "compose",
    writes: &[
        "base",
        "command",
        "depends_on",
        "entrypoint",
        "labels",
        "ports",
        "resources",
        "services",
        "user.uid",
        "vars",
        "volumes",
        "workdir",
    ],
    instead: &[
        (
            "distributed",
            "compose runs one container per service: only a single-node torchrun launch is written (as the Dockerfile's ENTRYPOINT); several nodes or another launcher are for the k8s target",
        ),
        (
            "resources.requests.gpu.type",
            "compose reserves GPUs by count; it cannot pick a GPU model",
        ),
        (
            "resources.limits.gpu.type",
            "compose reserves GPUs by count; it cannot pick a GPU model",
        ),
        ("resources.requests.gpu.memory", "compose reserves GPUs by count"),
        ("resources.limits.gpu.memory", "compose reserves GPUs by count"),
        ("description", "a compose service has no description"),
    ],
    not_needed: &[
        ("builder", "built into the image by the docker target"),
        ("system", "built into the image by the docker target"),
        ("python", "built into the image by the docker target"),
        ("conda", "built into the image by the docker target"),
        ("assets", "built into the image by the docker target"),
        ("files", "built into the image by the docker target"),
        ("setup", "built into the image by the docker target"),
        ("writable", "built into the image by the docker target"),
        ("ignore", "the docker target's .dockerignore filters the build context"),
        ("test", "smoke tests run on the built image (docker target)"),
        ("user.name", "the container runs by uid"),
    ],
};

#[derive(Serialize)]
struct File {
    name: String,
    services: BTreeMap<String, Service>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    volumes: BTreeMap<String, NamedVolume>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    secrets: BTreeMap<String, SecretSource>,
}

/// A top-level secret: read from the caller's environment at `docker
/// compose build` / `up --build` (never a value in the file).
#[derive(Serialize)]
struct SecretSource {
    environment: String,
}

#[derive(Serialize)]
struct Service {
    build: Build,
    image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    entrypoint: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    depends_on: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    environment: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    labels: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<Port>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_dir: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    volumes: Vec<Mount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deploy: Option<Deploy>,
}

#[derive(Serialize)]
struct Build {
    context: &'static str,
    dockerfile: String,
    /// The build secrets the Dockerfile mounts (`RUN --mount=type=secret,id=…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<String>,
}

#[derive(Serialize)]
struct Port {
    target: u16,
    published: String,
}

#[derive(Serialize)]
struct Mount {
    #[serde(rename = "type")]
    kind: &'static str,
    source: String,
    target: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    read_only: bool,
}

#[derive(Serialize, PartialEq, Clone)]
struct NamedVolume {
    #[serde(skip_serializing_if = "Option::is_none")]
    driver: Option<&'static str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    driver_opts: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
struct Deploy {
    resources: DeployResources,
}

#[derive(Serialize)]
struct DeployResources {
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<Limits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reservations: Option<Reservations>,
}

#[derive(Serialize)]
struct Limits {
    #[serde(skip_serializing_if = "Option::is_none")]
    cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<String>,
}

#[derive(Serialize)]
struct Reservations {
    #[serde(skip_serializing_if = "Option::is_none")]
    cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    devices: Vec<Device>,
}

#[derive(Serialize)]
struct Device {
    driver: &'static str,
    count: u32,
    capabilities: Vec<&'static str>,
}

/// Lowers `spec`, the IR of env `cx.env`, to `compose.yaml`.
///
/// Errors (then no artifact): an env or service without `base`, a service
/// name compose refuses (`[a-zA-Z0-9._-]+`) or a service with services of
/// its own, a var name compose cannot interpolate for a secret, a var name
/// holding `=` or white space, a volume name compose refuses or used for
/// two sources, an object name that cannot be made from the env's name, a
/// string a YAML 1.1 reader would read as another type. Warnings: fields
/// [`EXPRESSES`] does not write (each service's under `services.NAME.`),
/// `pvc://` and `s3://` volumes (an empty named volume).
pub fn lower(spec: &EnvSpec, cx: &LowerCx) -> Lowered {
    let mut job = Job {
        cx,
        warnings: Vec::new(),
        errors: Vec::new(),
        volumes: BTreeMap::new(),
        secrets: BTreeMap::new(),
    };
    let project = match crate::names::object_name(&cx.env) {
        Ok(n) => n,
        Err(e) => {
            job.refuse("", ErrorKind::Unwritable, e);
            String::new()
        }
    };
    let mut services = BTreeMap::new();
    if spec.services.is_empty() || spec.base.is_some() {
        for w in unexpressed(spec) {
            job.warnings.push(w);
        }
        let dockerfile = format!("{}/Dockerfile", cx.env);
        if let Some(s) = job.service(spec, None, "", &dockerfile) {
            services.insert(project.clone(), s);
        }
    } else {
        for w in unexpressed(spec) {
            job.warnings.push(w);
        }
    }
    for (name, s) in &spec.services {
        let field = format!("services.{name}");
        if !is_compose_name(name) {
            job.refuse(
                &field,
                ErrorKind::Unwritable,
                "compose service names are [a-zA-Z0-9._-]+".into(),
            );
            continue;
        }
        if services.contains_key(name.as_str()) {
            job.refuse(
                &field,
                ErrorKind::NameClash,
                format!("`{name}` is also the service made for the env itself"),
            );
            continue;
        }
        if !s.services.is_empty() {
            job.refuse(
                &field,
                ErrorKind::Unwritable,
                "a service with services of its own cannot be one compose service".into(),
            );
            continue;
        }
        for mut w in unexpressed(s) {
            w.field = format!("{field}.{}", w.field);
            job.warnings.push(w);
        }
        let dockerfile = format!("{}/{name}/Dockerfile", cx.env);
        if let Some(svc) = job.service(s, Some(name), &format!("{field}."), &dockerfile) {
            services.insert(name.clone(), svc);
        }
    }
    let file = File {
        name: project,
        services,
        volumes: std::mem::take(&mut job.volumes)
            .into_iter()
            .map(|(k, (_, v))| (k, v))
            .collect(),
        secrets: std::mem::take(&mut job.secrets),
    };
    let mut out = Lowered::default();
    if job.errors.is_empty() {
        match serde_json::to_value(&file) {
            Ok(v) => {
                for (s, kind) in crate::yaml::misread_in(&v) {
                    job.refuse(
                        "",
                        ErrorKind::Misread,
                        format!(
                            "`{}` would be read as {kind} by a YAML 1.1 reader",
                            quote::comment(&s)
                        ),
                    );
                }
                if job.errors.is_empty() {
                    match crate::yaml::to_string(&v) {
                        Ok(y) => out.artifacts.push(Artifact {
                            path: FILE_NAME.into(),
                            contents: format!(
                                "# Compose file of env {}, generated by sclc from its IR (sha256 {}).\n# Run from the workspace root: docker compose -f {}/{}/{FILE_NAME} up --build\n# (another --out: set SCL_WORKSPACE to the workspace root and SCL_OUT to the output folder)\n{y}",
                                quote::comment(&cx.env),
                                spec.content_hash(),
                                "${SCL_OUT:-out}",
                                quote::comment(&cx.env),
                            ),
                        }),
                        Err(e) => job.refuse("", ErrorKind::Unwritable, format!("the YAML writer refused the file: {e}")),
                    }
                }
            }
            Err(e) => job.refuse(
                "",
                ErrorKind::Unwritable,
                format!("the file could not be serialized: {e}"),
            ),
        }
    }
    out.warnings = job.warnings;
    out.errors = job.errors;
    if !out.errors.is_empty() {
        out.artifacts.clear();
    }
    out
}

/// `s` with every `$` doubled, so compose's interpolation gives `s` back.
pub fn escape(s: &str) -> String {
    s.replace('$', "$$")
}

/// The fields compose does not write ([`EXPRESSES`]), but `distributed`
/// when it is a single-node torchrun launch, which the service's
/// entrypoint is.
fn unexpressed(spec: &EnvSpec) -> Vec<FieldWarning> {
    let launch = crate::docker::single_node_torchrun(spec).is_some();
    crate::expresses::unexpressed(spec, &EXPRESSES)
        .into_iter()
        .filter(|w| !(launch && w.field == "distributed"))
        .collect()
}

/// A compose service or volume name: `[a-zA-Z0-9._-]+`.
fn is_compose_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A name compose can interpolate: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_variable_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Cores from millicores: `4000` → `"4"`, `1500` → `"1.5"`.
pub fn cpus(millicores: u64) -> String {
    let whole = millicores / 1000;
    let frac = millicores % 1000;
    if frac == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{}", format!("{frac:03}").trim_end_matches('0'))
    }
}

/// Memory for compose (go-units `RAMInBytes`, binary units): `32g` when
/// divisible by GiB, `m`, `k`, else bytes.
pub fn memory(bytes: u64) -> String {
    for (suffix, shift) in [("g", 30), ("m", 20), ("k", 10)] {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

struct Job<'a> {
    cx: &'a LowerCx,
    warnings: Vec<FieldWarning>,
    errors: Vec<FieldError>,
    /// Named volumes: name → (source, definition).
    volumes: BTreeMap<String, (String, NamedVolume)>,
    /// Build secrets: id → the environment variable it is read from.
    secrets: BTreeMap<String, SecretSource>,
}

impl Job<'_> {
    fn refuse(&mut self, field: &str, kind: ErrorKind, message: String) {
        self.errors.push(FieldError {
            field: field.into(),
            kind,
            message,
            help: None,
        });
    }

    fn service(
        &mut self,
        spec: &EnvSpec,
        name: Option<&str>,
        prefix: &str,
        dockerfile: &str,
    ) -> Option<Service> {
        let errors = self.errors.len();
        if spec.base.is_none() {
            self.refuse(
                &format!("{prefix}base"),
                ErrorKind::NoBase,
                "not set: there is no image to build for this service".into(),
            );
        }
        let mut environment = Vec::new();
        for (k, v) in &spec.vars {
            let field = format!("{prefix}vars.{k}");
            if k.is_empty()
                || k.contains('=')
                || k.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    "compose cannot set a variable whose name is empty or holds `=` or white space"
                        .into(),
                );
                continue;
            }
            match v {
                VarValue::Plain(s) => environment.push(format!("{}={}", escape(k), escape(s))),
                VarValue::Secret(r) => {
                    if !is_variable_name(k) {
                        self.refuse(&field, ErrorKind::Unwritable, "a secret var is taken from the caller's environment by compose interpolation, whose names are [A-Za-z_][A-Za-z0-9_]*".into());
                        continue;
                    }
                    let plain = |s: &str| {
                        s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    };
                    let msg = if plain(&r.secret) && plain(&r.key) {
                        format!("set {k} (secret {}, key {})", r.secret, r.key)
                    } else {
                        format!("set {k} to the secret's value")
                    };
                    environment.push(format!("{k}=${{{k}:?{msg}}}"));
                }
            }
        }
        let labels = spec
            .labels
            .iter()
            .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
            .collect();
        let ports = spec
            .ports
            .iter()
            .map(|p| Port {
                target: *p,
                published: p.to_string(),
            })
            .collect();
        let mut mounts = Vec::new();
        for (i, v) in spec.volumes.iter().enumerate() {
            let field = format!("{prefix}volumes[{i}]");
            let read_only = v.mode == VolumeMode::ReadOnly;
            if !v.mount.starts_with('/') {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "the mount path `{}` is not absolute",
                        quote::comment(&v.mount)
                    ),
                );
                continue;
            }
            let source = match v.source_kind() {
                SourceKind::Host => {
                    let rel = &v.source["host:".len()..];
                    let rel = rel.trim_start_matches("./");
                    let src = if rel.is_empty() || rel == "." {
                        CONTEXT.to_string()
                    } else {
                        format!("{CONTEXT}/{}", escape(rel))
                    };
                    mounts.push(Mount {
                        kind: "bind",
                        source: src,
                        target: escape(&v.mount),
                        read_only,
                    });
                    continue;
                }
                _ => &*v.source,
            };
            if !is_compose_name(&v.name) {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "the volume name `{}` is not a compose volume name ([a-zA-Z0-9._-]+)",
                        quote::comment(&v.name)
                    ),
                );
                continue;
            }
            let def = match v.source_kind() {
                SourceKind::Nfs => {
                    let rest = &source["nfs://".len()..];
                    let (host, path) = match rest.find('/') {
                        Some(j) => (&rest[..j], &rest[j..]),
                        None => (rest, "/"),
                    };
                    if host.is_empty() || host.contains([',', ' ']) {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            format!("`{}` names no NFS server", quote::comment(source)),
                        );
                        continue;
                    }
                    let mut opts = BTreeMap::new();
                    opts.insert("type", "nfs".to_string());
                    opts.insert(
                        "o",
                        escape(&format!(
                            "addr={host}{}",
                            if read_only { ",ro" } else { "" }
                        )),
                    );
                    opts.insert("device", escape(&format!(":{path}")));
                    NamedVolume {
                        driver: Some("local"),
                        driver_opts: opts,
                    }
                }
                _ => {
                    self.warnings.push(FieldWarning {
                        field: field.clone(),
                        message: format!(
                            "compose cannot mount `{}`: the named volume `{}` is created empty; put the data in it (or declare it external)",
                            quote::comment(source),
                            v.name
                        ),
                    });
                    NamedVolume {
                        driver: None,
                        driver_opts: BTreeMap::new(),
                    }
                }
            };
            match self.volumes.get(&*v.name) {
                Some((s, _)) if s != source => {
                    self.refuse(
                        &field,
                        ErrorKind::NameClash,
                        format!(
                            "the volume name `{}` is used for another source, `{}`",
                            v.name,
                            quote::comment(s)
                        ),
                    );
                    continue;
                }
                _ => {
                    self.volumes
                        .insert(v.name.to_string(), (source.to_string(), def));
                }
            }
            mounts.push(Mount {
                kind: "volume",
                source: v.name.to_string(),
                target: escape(&v.mount),
                read_only,
            });
        }
        let deploy = spec.resources.as_ref().and_then(|r| {
            let limits = r.limits.as_ref().map(|l| Limits {
                cpus: l.cpu.map(cpus),
                memory: l.memory.map(memory),
            });
            let gpu = r
                .limits
                .as_ref()
                .and_then(|l| l.gpu.as_ref())
                .or(r.requests.as_ref().and_then(|l| l.gpu.as_ref()))
                .filter(|g| g.count > 0);
            let devices: Vec<Device> = gpu
                .map(|g| Device {
                    driver: "nvidia",
                    count: g.count,
                    capabilities: vec!["gpu"],
                })
                .into_iter()
                .collect();
            let req = r.requests.as_ref();
            let reservations = Reservations {
                cpus: req.and_then(|l| l.cpu).map(cpus),
                memory: req.and_then(|l| l.memory).map(memory),
                devices,
            };
            let reservations = (reservations.cpus.is_some()
                || reservations.memory.is_some()
                || !reservations.devices.is_empty())
            .then_some(reservations);
            let limits = limits.filter(|l| l.cpus.is_some() || l.memory.is_some());
            (limits.is_some() || reservations.is_some()).then_some(Deploy {
                resources: DeployResources {
                    limits,
                    reservations,
                },
            })
        });
        if self.errors.len() > errors {
            return None;
        }
        // The docker target's build secrets, by the ids its Dockerfile
        // mounts, each read from the variable `docker build --secret
        // id=ID,env=VAR` would read (crate::plan::secret_env_name).
        let mut secrets = Vec::new();
        for r in crate::plan::build_secrets(spec) {
            if let Some(id) = crate::plan::secret_id(r) {
                if !secrets.contains(&id) {
                    self.secrets.insert(
                        id.clone(),
                        SecretSource {
                            environment: crate::plan::secret_env_name(&id),
                        },
                    );
                    secrets.push(id);
                }
            }
        }
        // The launch the image's ENTRYPOINT has (a single-node torchrun
        // launch), which `entrypoint:` would otherwise replace.
        let (entrypoint, command) = crate::docker::single_node_torchrun(spec)
            .unwrap_or_else(|| (spec.entrypoint.clone(), spec.command.clone()));
        Some(Service {
            build: Build {
                context: CONTEXT,
                dockerfile: format!("${{SCL_OUT:-out}}/{}", escape(dockerfile)),
                secrets,
            },
            image: escape(&self.cx.image(spec, name)),
            entrypoint: entrypoint.iter().map(|s| escape(s)).collect(),
            command: command.iter().map(|s| escape(s)).collect(),
            depends_on: spec.depends_on.clone(),
            environment,
            labels,
            ports,
            user: spec.user.as_ref().map(|u| u.uid.to_string()),
            working_dir: spec.workdir.as_deref().map(escape),
            volumes: mounts,
            deploy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(cpus(4000), "4");
        assert_eq!(cpus(1500), "1.5");
        assert_eq!(cpus(250), "0.25");
        assert_eq!(cpus(1001), "1.001");
        assert_eq!(memory(34359738368), "32g");
        assert_eq!(memory(512 << 20), "512m");
        assert_eq!(memory(1000), "1000");
        assert_eq!(escape("a$b$$"), "a$$b$$$$");
    }
}
