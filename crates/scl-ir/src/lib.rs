//! The EnvSpec IR: the normalized result of one env (inheritance applied,
//! defaults filled, unset optionals left out), which every backend lowers.
//!
//! Canonical form ([`EnvSpec::to_canonical_json`]): JSON with sorted keys,
//! two-space indent and a trailing newline, `"apiVersion": "scl.dev/v1alpha1"`
//! at the top; memory in bytes, CPU in millicores (integers); enums by name
//! without the dot; versions, image references and container paths exactly as
//! written; host paths workspace-relative. Empty lists and maps are left out.
//! Provenance ([`Provenance`]) is kept apart from these bytes.

pub mod bases;
pub mod conda;
pub mod fields;
pub mod json;
pub mod path;
pub use fields::Fields;
pub use path::FieldPath;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The IR's `apiVersion`.
pub const API_VERSION: &str = "scl.dev/v1alpha1";

/// One environment, normalized. Field names are the Env schema's
/// (`design/language.md`, "The Env schema").
///
/// Fields (here and in every IR struct) are declared in the byte order of
/// their JSON names, so serializing a struct directly gives the canonical
/// sorted keys without building a `serde_json::Value` first (a test checks
/// both routes agree).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct EnvSpec {
    /// `scl.dev/v1alpha1` on a top-level IR; empty (and not serialized) on
    /// the specs the compiler keeps and on services. [`EnvSpec::versioned`]
    /// and [`EnvSpec::to_canonical_json`] add it.
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// Ordered; kept exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assets: Vec<Asset>,
    /// Required for an env that is built; absent for a services-only env.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<ImageRef>,
    /// The image compiled wheels are built in (a multi-stage build): the
    /// Python packages are built there and only the results copied into
    /// `base`. Absent: one stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builder: Option<ImageRef>,
    /// Exec form, kept exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conda: Option<Conda>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
    /// Exec form, kept exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrypoint: Vec<String>,
    /// Ordered; kept exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<Copy>,
    /// Globs kept out of the build context (`.dockerignore`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    #[serde(default, skip_serializing_if = "Fields::is_empty")]
    pub labels: Fields<Arc<str>, Arc<str>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<Python>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Multi-service environments: each entry a full EnvSpec (without its own apiVersion).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "json::services"
    )]
    pub services: BTreeMap<String, Arc<EnvSpec>>,
    /// Build-time shell steps, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<System>,
    /// Smoke-test commands (each one `sh -c` line), run in the built image:
    /// Apptainer `%test`, a `docker run` check printed by `sclc build`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test: Vec<String>,
    /// Defaults to `{ name = "app", uid = 1000 }` for a built env.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<User>,
    #[serde(default, skip_serializing_if = "Fields::is_empty")]
    pub vars: Fields<Arc<str>, VarValue>,
    /// Ordered; kept exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Defaults to `/workspace` for a built env.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Container folders the runtime user must be able to write (caches
    /// such as `HF_HOME`): created and owned by that user. Set-like.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
}

/// An image reference: `{"ref": "<as written>", "digest": "sha256:…"?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(rename = "ref")]
    pub reference: String,
}

impl ImageRef {
    /// `ref@digest` when pinned, else `ref`.
    pub fn pinned(&self) -> String {
        match &self.digest {
            Some(d) => format!("{}@{}", self.reference, d),
            None => self.reference.clone(),
        }
    }
}

/// `system.*`: OS packages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Set, or inferred from the base image (alpine → apk; fedora, EL8 and later → dnf; centos 7, amazonlinux 2 → yum; the minimal images → microdnf; else apt).
    pub manager: SystemManager,
    /// Set-like: de-duplicated, first occurrence kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Arc<str>>,
}

/// The base image's package manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemManager {
    /// Debian and Ubuntu: `apt-get`.
    Apt,
    /// Alpine: `apk`.
    Apk,
    /// Fedora, RHEL 8 and later (UBI, Rocky, Alma, CentOS Stream), Amazon
    /// Linux 2023: `dnf`.
    Dnf,
    /// CentOS 7 and Amazon Linux 2: `yum` (yum 3), which these images have
    /// instead of dnf.
    Yum,
    /// The minimal images of the Red Hat family (`ubi9-minimal`,
    /// `rockylinux:9-minimal`): `microdnf`, their only package manager
    /// (they have no dnf, no Python and no `useradd`).
    Microdnf,
}

impl SystemManager {
    /// Every manager, in the order of the language's `SystemManager` enum.
    pub const ALL: [SystemManager; 5] = [
        SystemManager::Apt,
        SystemManager::Apk,
        SystemManager::Dnf,
        SystemManager::Yum,
        SystemManager::Microdnf,
    ];

    /// The name as SCL writes it (`.dnf`) and the IR's JSON: `"apt"`,
    /// `"apk"`, `"dnf"`, `"yum"`, `"microdnf"`.
    pub fn name(self) -> &'static str {
        match self {
            SystemManager::Apt => "apt",
            SystemManager::Apk => "apk",
            SystemManager::Dnf => "dnf",
            SystemManager::Yum => "yum",
            SystemManager::Microdnf => "microdnf",
        }
    }

    /// The manager [`SystemManager::name`] calls `name`.
    pub fn from_name(name: &str) -> Option<SystemManager> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The program the generated files run: `apt-get` for apt, else the
    /// name.
    pub fn command(self) -> &'static str {
        match self {
            SystemManager::Apt => "apt-get",
            other => other.name(),
        }
    }
}

/// `python.*`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Python {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_index_urls: Vec<String>,
    /// Credentials for the package indexes, a netrc file held as a secret
    /// (`machine HOST login USER password TOKEN`): given to the build as a
    /// secret mount, never written into an image or a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_credentials: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    pub manager: PythonManager,
    /// PEP 508 requirements, as written, de-duplicated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Arc<str>>,
    /// Requirements files, de-duplicated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<FileRef>,
    /// As written (`"3.10"` stays `"3.10"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `python.manager`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PythonManager {
    Pip,
    Uv,
    Conda,
}

/// `conda.*`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conda {
    /// Order kept (it is the priority order), de-duplicated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
    /// Conda match specs, as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Arc<str>>,
}

/// A file read at compile time: workspace-relative path (`/`-separated) and
/// the SHA-256 of its bytes (lowercase hex).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    pub path: String,
    pub sha256: String,
}

/// `resources`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceList>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceList>,
}

/// Requests or limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ResourceList {
    /// Millicores (`4` cores → 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
    /// Bytes (`32Gi` → 34359738368).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
}

/// The node label `Gpu::kind` is matched against when `Gpu::node_label` is
/// not set: GPU Feature Discovery's product label, whose values are the
/// `nvidia-smi` product name with spaces as `-` (`NVIDIA-A100-SXM4-80GB`,
/// `Tesla-V100-SXM2-16GB`) (NVIDIA/k8s-device-plugin,
/// `docs/gpu-feature-discovery/README.md`).
pub const DEFAULT_GPU_LABEL: &str = "nvidia.com/gpu.product";

/// GKE's node label for the accelerator of a node pool, whose values are
/// lower-case `nvidia-…` names (`nvidia-tesla-v100`, `nvidia-a100-80gb`,
/// `nvidia-l4`) (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
pub const GKE_GPU_LABEL: &str = "cloud.google.com/gke-accelerator";

/// GPUs: a count, optionally a type (a value of the node label `node_label`:
/// `NVIDIA-A100-SXM4-80GB`, or `nvidia-a100-80gb` on GKE) and a per-GPU
/// memory in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// The node label whose value is `type` (Kubernetes `nodeSelector`);
    /// absent: [`DEFAULT_GPU_LABEL`], GPU Feature Discovery's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_label: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Resources {
    /// The GPUs the env gets: `limits.gpu`, else `requests.gpu` (the
    /// Kubernetes rule for extended resources: GPUs are given by their
    /// limit, and a request alone is lowered as the limit). Each field is
    /// looked up on its own: a `limits` with only `cpu` does not hide a
    /// GPU request.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.limits
            .as_ref()
            .and_then(|l| l.gpu.as_ref())
            .or_else(|| self.requests.as_ref().and_then(|l| l.gpu.as_ref()))
    }
}

/// A data volume mounted at run time (never baked into an image).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    pub mode: VolumeMode,
    /// Container path.
    pub mount: Arc<str>,
    pub name: Arc<str>,
    /// `s3://…`, `pvc://NAME`, `nfs://HOST/PATH`, or `host:PATH` (workspace-relative).
    pub source: Arc<str>,
}

impl Volume {
    /// The source's kind, from its scheme.
    pub fn source_kind(&self) -> SourceKind {
        if self.source.starts_with("s3://") {
            SourceKind::S3
        } else if self.source.starts_with("pvc://") {
            SourceKind::Pvc
        } else if self.source.starts_with("nfs://") {
            SourceKind::Nfs
        } else {
            SourceKind::Host
        }
    }
}

/// The kind of a volume source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    S3,
    Pvc,
    Nfs,
    Host,
}

/// Access mode of a volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VolumeMode {
    ReadOnly,
    ReadWrite,
    ReadWriteMany,
}

/// The value of an environment variable: plain text or a secret reference
/// (`{"secret": NAME, "key": KEY}`), never the secret's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VarValue {
    Plain(Arc<str>),
    Secret(SecretRef),
}

/// A reference to a secret held by the runner (a Kubernetes Secret, a
/// `docker run -e` value): its name and key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    pub key: String,
    pub secret: String,
}

/// A model or data file fetched at build time. Serialized with a `kind` field
/// (`"huggingface"` or `"url"`) and its arguments, keys sorted.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Asset {
    /// `huggingface(REPO, files = [...], revision = "main", to = PATH)`.
    Huggingface {
        #[serde(default)]
        files: Vec<String>,
        repo: String,
        revision: String,
        to: String,
        /// The Hugging Face token of a gated or private repository, given
        /// to the build as a secret mount (never written).
        #[serde(default)]
        token: Option<SecretRef>,
    },
    /// `url(URL, sha256 = "...", to = PATH)`.
    Url {
        #[serde(default)]
        sha256: Option<String>,
        to: String,
        url: String,
    },
}

impl Serialize for Asset {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        match self {
            Asset::Huggingface {
                files,
                repo,
                revision,
                to,
                token,
            } => {
                if !files.is_empty() {
                    m.serialize_entry("files", files)?;
                }
                m.serialize_entry("kind", "huggingface")?;
                m.serialize_entry("repo", repo)?;
                m.serialize_entry("revision", revision)?;
                m.serialize_entry("to", to)?;
                if let Some(t) = token {
                    m.serialize_entry("token", t)?;
                }
            }
            Asset::Url { sha256, to, url } => {
                m.serialize_entry("kind", "url")?;
                if let Some(h) = sha256 {
                    m.serialize_entry("sha256", h)?;
                }
                m.serialize_entry("to", to)?;
                m.serialize_entry("url", url)?;
            }
        }
        m.end()
    }
}

/// A local path (workspace-relative) copied into the image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copy {
    pub from: String,
    pub to: String,
}

/// The user the container runs as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub name: String,
    pub uid: u32,
}

impl User {
    /// True for root (uid 0), which backends do not create.
    pub fn is_root(&self) -> bool {
        self.uid == 0
    }
}

/// Distributed launch; absent means one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distributed {
    pub backend: Backend,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<Elastic>,
    pub launcher: Launcher,
    pub nodes: u32,
    pub procs_per_node: u32,
}

impl Distributed {
    /// Total processes (`nodes × procs_per_node`).
    pub fn world_size(&self) -> u64 {
        self.nodes as u64 * self.procs_per_node as u64
    }
}

/// Collective-communication backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Nccl,
    Gloo,
    Mpi,
}

/// Process launcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Launcher {
    Torchrun,
    Deepspeed,
    Accelerate,
    Mpirun,
}

/// Elastic training bounds (torchrun `--nnodes=MIN:MAX`, `--max-restarts`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Elastic {
    pub max_nodes: u32,
    pub max_restarts: u32,
    pub min_nodes: u32,
}

impl EnvSpec {
    /// The spec as a top-level IR: with `apiVersion` set (a shallow copy:
    /// services are shared).
    pub fn versioned(&self) -> EnvSpec {
        let mut s = self.clone();
        s.api_version = API_VERSION.into();
        s
    }

    /// The canonical JSON bytes of the top-level IR: `apiVersion`, sorted
    /// keys, two-space indent, trailing newline.
    pub fn to_canonical_json(&self) -> String {
        let mut s = if self.api_version.is_empty() {
            json::to_string(&self.versioned())
        } else {
            json::to_string(self)
        }
        .expect("EnvSpec serializes");
        s.push('\n');
        s
    }
    /// SHA-256 (lowercase hex) of the canonical bytes: the content hash used
    /// for image labels, tags and locks.
    pub fn content_hash(&self) -> String {
        sha256_hex(self.to_canonical_json().as_bytes())
    }
    /// True when the env is built (it has a base image).
    pub fn is_built(&self) -> bool {
        self.base.is_some()
    }
}

/// Canonical text of any JSON value: sorted keys (serde_json's map is a
/// BTreeMap), two-space indent, trailing newline.
pub fn canonical_json(v: &serde_json::Value) -> String {
    let mut s = json::to_string(v).expect("JSON serializes");
    s.push('\n');
    s
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`sha256_hex`] of everything `r` reads, in 64 KiB pieces (a large file
/// is never held in memory). Errors: the reader's.
pub fn sha256_reader(mut r: impl std::io::Read) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Where one field of an env got its value: the env that wrote it last, the
/// source position of that write, and what the write replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvenanceEntry {
    /// The env (or `module.env`, or `template(args)`) whose item wrote it.
    pub env: String,
    /// Workspace-relative file (or `std/NAME`).
    pub file: String,
    /// 1-based line and column of the item.
    pub line: u32,
    pub column: u32,
    /// The env whose value this write replaced, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
}

/// The provenance table of one env: dotted IR path (`resources.requests.memory`,
/// `vars.HF_HOME`) → entry. Kept apart from the canonical bytes.
pub type Provenance = BTreeMap<String, ProvenanceEntry>;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn canonical_json_sorts_and_omits_empty() {
        let spec = EnvSpec {
            api_version: API_VERSION.into(),
            base: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            workdir: Some("/workspace".into()),
            ..Default::default()
        };
        assert_eq!(
            spec.to_canonical_json(),
            "{\n  \"apiVersion\": \"scl.dev/v1alpha1\",\n  \"base\": {\n    \"ref\": \"debian:12.5\"\n  },\n  \"workdir\": \"/workspace\"\n}\n"
        );
        assert_eq!(spec.content_hash().len(), 64);
    }
    /// Direct serialization (declaration order) equals the sorted-keys route
    /// through `serde_json::Value`, for an IR with every field set.
    #[test]
    fn direct_serialization_is_canonical() {
        let list = ResourceList {
            cpu: Some(500),
            memory: Some(1 << 30),
            gpu: Some(Gpu {
                count: 2,
                node_label: Some("l".into()),
                kind: Some("a100".into()),
                memory: Some(1),
            }),
        };
        let full = EnvSpec {
            api_version: API_VERSION.into(),
            description: Some("d".into()),
            base: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: Some("sha256:00".into()),
            }),
            system: Some(System {
                packages: vec!["git".into()],
                manager: SystemManager::Apt,
            }),
            python: Some(Python {
                index_credentials: Some(SecretRef {
                    secret: "s".into(),
                    key: "n".into(),
                }),
                version: Some("3.10".into()),
                manager: PythonManager::Uv,
                packages: vec!["numpy".into()],
                requirements: vec![FileRef {
                    path: "r.txt".into(),
                    sha256: "ab".into(),
                }],
                index_url: Some("https://i".into()),
                extra_index_urls: vec!["https://e".into()],
            }),
            conda: Some(Conda {
                channels: vec!["c".into()],
                packages: vec!["p".into()],
            }),
            resources: Some(Resources {
                requests: Some(list.clone()),
                limits: Some(list),
            }),
            volumes: vec![Volume {
                name: "n".into(),
                source: "pvc://n".into(),
                mount: "/n".into(),
                mode: VolumeMode::ReadWriteMany,
            }],
            vars: [
                ("A".into(), VarValue::Plain("1".into())),
                (
                    "B".into(),
                    VarValue::Secret(SecretRef {
                        secret: "s".into(),
                        key: "k".into(),
                    }),
                ),
            ]
            .into(),
            assets: vec![
                Asset::Huggingface {
                    token: Some(SecretRef {
                        secret: "h".into(),
                        key: "t".into(),
                    }),
                    repo: "o/r".into(),
                    files: vec!["f".into()],
                    revision: "main".into(),
                    to: "/m".into(),
                },
                Asset::Url {
                    url: "https://u".into(),
                    sha256: Some("ff".into()),
                    to: "/u".into(),
                },
            ],
            files: vec![Copy {
                from: "a".into(),
                to: "/a".into(),
            }],
            setup: vec!["true".into()],
            test: vec!["true".into()],
            writable: vec!["/c".into()],
            builder: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            workdir: Some("/w".into()),
            user: Some(User {
                name: "app".into(),
                uid: 1000,
            }),
            entrypoint: vec!["e".into()],
            command: vec!["c".into()],
            ports: vec![80],
            distributed: Some(Distributed {
                backend: Backend::Nccl,
                launcher: Launcher::Torchrun,
                nodes: 2,
                procs_per_node: 4,
                elastic: Some(Elastic {
                    min_nodes: 1,
                    max_nodes: 2,
                    max_restarts: 3,
                }),
            }),
            services: BTreeMap::new(),
            depends_on: vec!["x".into()],
            labels: [(Arc::from("l"), Arc::from("v"))].into(),
            ignore: vec![".git".into()],
        };
        let mut with_service = full.clone();
        let mut nested = full.clone();
        nested.api_version.clear();
        with_service.services.insert("svc".into(), Arc::new(nested));
        for spec in [full, with_service] {
            let via_value = canonical_json(&serde_json::to_value(&spec).unwrap());
            assert_eq!(spec.to_canonical_json(), via_value);
        }
    }

    #[test]
    fn secret_vars_serialize_as_references() {
        let v = VarValue::Secret(SecretRef {
            secret: "s".into(),
            key: "k".into(),
        });
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"key":"k","secret":"s"}"#
        );
    }
}
