//! The Kubernetes backend: [`lower`] turns one [`EnvSpec`] into `k8s.yaml`,
//! one object that runs the env's image (built and pushed from the docker
//! target's Dockerfile; its reference is [`LowerCx::image`]):
//!
//! - a `batch/v1` **Job** when the env runs one process (no `distributed`,
//!   or `nodes × procs_per_node = 1`);
//! - a `kubeflow.org/v1` **PyTorchJob** (Kubeflow training operator v1.9)
//!   when `distributed` asks for more than one process: `Master` with
//!   `replicas: 1` (the webhook requires exactly one), `Worker` with
//!   `nodes - 1` replicas and no `Worker` key at all when that is 0 (the
//!   webhook refuses `replicas: 0`), both with `restartPolicy: OnFailure`
//!   (PyTorch's default), the container named `pytorch` (the webhook needs
//!   one of that name: the operator injects its variables and its port
//!   there), and `spec.nprocPerNode` = `procs_per_node` as a string (the
//!   CRD's type: `auto`, `cpu`, `gpu` or a number). A single-node job with
//!   several processes is a PyTorchJob with only a Master.
//!
//! The Job and the pod template are k8s-openapi's types (v1_35, the API
//! version kubernetes-validate 1.35.0 checks); the PyTorchJob is this
//! module's serde structs around k8s-openapi's `PodTemplateSpec`, with the
//! field names of `kubeflow.org_pytorchjobs.yaml` (v1.9.0). The file is
//! written by `serde-saphyr` ([`crate::yaml`] says why, and which strings
//! are refused because Kubernetes' YAML 1.1 reader would read them as
//! another type).
//!
//! What goes where:
//! - **names**: every object is named [`crate::names::object_name`] of the
//!   env (a DNS-1035 label, as the PyTorchJob webhook requires; at most 52
//!   characters, so that pod names stay labels). A name that cannot be made
//!   is a [`FieldError`] on field `""`;
//! - **command**: `command` = `entrypoint`, `args` = `command`, as `docker
//!   run` combines ENTRYPOINT and CMD (either left out when empty, so the
//!   image's own is used). In a PyTorchJob with `launcher = torchrun` the
//!   container runs `torchrun` with the env's command: `entrypoint ++
//!   command` without its leading `python`/`python3` (torchrun runs the
//!   script, or `-m module`, with its own Python), or after `--no-python`
//!   when it does not start with a Python script. torchrun takes every
//!   option it is not given from the `PET_*` variables the operator injects
//!   into the `pytorch` container (`PET_NNODES`, `PET_NODE_RANK`,
//!   `PET_MASTER_ADDR`, `PET_MASTER_PORT`, `PET_NPROC_PER_NODE` from
//!   `nprocPerNode`; `torch/distributed/run.py` reads `PET_<OPTION>` for each
//!   `--option`), so `--nnodes`, `--node_rank`, `--nproc_per_node` and the
//!   rendezvous are not written. Other launchers run the command as written
//!   (a warning says the command must start them);
//! - **resources**: `cpu` as a quantity in cores or millicores (`"4"`,
//!   `"1500m"`), `memory` in the largest binary unit that divides it
//!   (`"32Gi"`, else bytes). GPUs only in `limits`, as `nvidia.com/gpu`
//!   (Kubernetes, "Schedule GPUs": extended resources cannot be
//!   overcommitted, requests default to limits and must equal them): a GPU
//!   count in `requests` alone goes to `limits`, and different counts in
//!   both are a [`FieldError`]. `gpu.type` becomes
//!   `nodeSelector: {<gpu.node_label or nvidia.com/gpu.product>: <type>}`
//!   (GPU Feature Discovery's label); `gpu.memory` is a warning;
//! - **volumes**: `pvc://NAME` → `persistentVolumeClaim`, `nfs://HOST/PATH`
//!   → `nfs`, `s3://…` → a `persistentVolumeClaim` named after the volume
//!   (its object name), which the user creates with a CSI S3 driver (the
//!   Mountpoint for Amazon S3 CSI driver, `s3.csi.aws.com`, or any other),
//!   with a warning saying that claim must exist; `readOnly` when the mode
//!   is `read_only`. A `host:PATH` volume is workspace-relative in the IR
//!   (`book/src/reference/schema.md`), a folder the cluster's nodes do not
//!   have unless told where the workspace is on them
//!   ([`crate::LowerCx::host_root`], `--host-root`): then a `hostPath` of
//!   type `Directory` at `<host_root>/PATH`, with a warning (the folder must
//!   exist on every node that may run the pod); without it the volume is
//!   left out, with a warning;
//! - **vars**: a plain value → `value`, a secret → `valueFrom.secretKeyRef
//!   {name, key}` (the value is never written);
//! - **labels** → `metadata.labels` of the object and of the pod template
//!   (a key or value Kubernetes refuses is a [`FieldError`]); `description`
//!   and the IR's SHA-256 → annotations `scl.dev/description`,
//!   `scl.dev/ir-sha256`;
//! - **user** → the pod's `securityContext.runAsUser` (and `runAsNonRoot:
//!   true` when the uid is not 0); **workdir** → `workingDir`; **ports** →
//!   `containerPort`s.
//!
//! An env with `services` gets no artifact and one warning: compose is the
//! multi-service target. Fields the target does not write are warnings from
//! [`EXPRESSES`].

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use scl_ir::{EnvSpec, Launcher, SourceKind, VarValue, VolumeMode};
use serde::Serialize;

use crate::expresses::Expresses;
use crate::{quote, Artifact, ErrorKind, FieldError, FieldWarning, LowerCx, Lowered};

/// The file the k8s target writes in an env's folder.
pub const FILE_NAME: &str = "k8s.yaml";

/// The node label `gpu.type` is matched against when `gpu.node_label` is
/// not set (see [`scl_ir::DEFAULT_GPU_LABEL`]).
pub use scl_ir::DEFAULT_GPU_LABEL;

/// The extended resource of NVIDIA GPUs (the NVIDIA device plugin).
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// The container name the PyTorchJob webhook requires (training-operator
/// v1.9.0, `pkg/webhooks/pytorch/pytorchjob_webhook.go`).
pub const PYTORCH_CONTAINER: &str = "pytorch";

/// The Kubernetes target (`k8s.yaml`: a Job or a PyTorchJob) in the
/// [`crate::REGISTRY`].
pub struct K8s;

impl crate::Backend for K8s {
    fn name(&self) -> &'static str {
        "k8s"
    }
    fn summary(&self) -> &'static str {
        "a Kubernetes Job, or a Kubeflow PyTorchJob for a distributed env (kubectl apply -f k8s.yaml)"
    }
    fn layout(&self) -> &'static [&'static str] {
        &["k8s.yaml"]
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered {
        lower(spec, cx)
    }
}

/// What the k8s target writes and does not ([`crate::expresses`]).
pub const EXPRESSES: Expresses = Expresses {
    target: "k8s",
    writes: &[
        "base",
        "command",
        "description",
        "distributed.launcher",
        "distributed.nodes",
        "distributed.procs_per_node",
        "entrypoint",
        "labels",
        "ports",
        "resources",
        "user.uid",
        "vars",
        "volumes",
        "workdir",
    ],
    instead: &[
        (
            "distributed.elastic",
            "the PyTorchJob is written with a fixed number of nodes; elastic bounds (elasticPolicy) are not written",
        ),
        (
            "resources.requests.gpu.memory",
            "Kubernetes has no per-GPU memory request: pick the GPU with `gpu.type` (a node label)",
        ),
        (
            "resources.limits.gpu.memory",
            "Kubernetes has no per-GPU memory request: pick the GPU with `gpu.type` (a node label)",
        ),
        (
            "depends_on",
            "a Job starts on its own: start what it needs first (compose orders services)",
        ),
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
        ("ignore", "it filters the docker build context"),
        ("test", "smoke tests run on the built image (docker target)"),
        ("user.name", "Kubernetes runs the container by uid"),
        (
            "distributed.backend",
            "the program picks its collective backend; the pods need nothing for it",
        ),
        ("services", "an env with services is one warning of its own"),
    ],
};

/// Lowers `spec`, the IR of env `cx.env`, to `k8s.yaml`.
///
/// Errors ([`Lowered::errors`], then no artifact): no `base` (no image), an
/// object name that cannot be made from the env's name, a label, var name,
/// secret reference, volume or GPU node label Kubernetes refuses, GPU
/// requests unlike the limits, a distributed env without a command, a
/// string Kubernetes' YAML reader would read as another type. Warnings:
/// the fields [`EXPRESSES`] does not write, `host:` and `s3://` volumes, a
/// launcher other than torchrun. An env with `services`: no artifact, one
/// warning on `services`.
pub fn lower(spec: &EnvSpec, cx: &LowerCx) -> Lowered {
    let mut out = Lowered::default();
    if !spec.services.is_empty() {
        out.warnings.push(FieldWarning {
            field: "services".into(),
            message: "an env with services is not written for Kubernetes: compose is the multi-service target (write each service as its own env for k8s)".into(),
        });
        return out;
    }
    let mut pod = Pod::new(spec, cx);
    pod.warnings = crate::expresses::unexpressed(spec, &EXPRESSES);
    let text = pod.k8s_file();
    out.warnings = pod.warnings;
    out.errors = pod.errors;
    if out.errors.is_empty() {
        if let Some(contents) = text {
            out.artifacts.push(Artifact {
                path: FILE_NAME.into(),
                contents,
            });
        }
    }
    out
}

/// The PyTorchJob of `kubeflow.org/v1` (training-operator v1.9.0,
/// `pkg/apis/kubeflow.org/v1/pytorch_types.go`), the fields this target
/// writes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PyTorchJob {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: PyTorchJobSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PyTorchJobSpec {
    /// `auto`, `cpu`, `gpu` or a number, as a string (the CRD's type).
    nproc_per_node: String,
    pytorch_replica_specs: ReplicaSpecs,
}

#[derive(Serialize)]
struct ReplicaSpecs {
    #[serde(rename = "Master")]
    master: ReplicaSpec,
    /// Absent when there is one node: the webhook refuses 0 replicas.
    #[serde(rename = "Worker", skip_serializing_if = "Option::is_none")]
    worker: Option<ReplicaSpec>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicaSpec {
    replicas: u32,
    restart_policy: &'static str,
    template: core::PodTemplateSpec,
}

/// The number of processes `spec` runs and how it launches: `None` for one
/// process.
pub(crate) fn multi_process(spec: &EnvSpec) -> Option<&scl_ir::Distributed> {
    spec.distributed.as_ref().filter(|d| d.world_size() > 1)
}

/// The state of lowering one env's pod (shared with the TrainJob target).
pub(crate) struct Pod<'a> {
    pub(crate) spec: &'a EnvSpec,
    pub(crate) cx: &'a LowerCx,
    pub(crate) warnings: Vec<FieldWarning>,
    pub(crate) errors: Vec<FieldError>,
}

impl<'a> Pod<'a> {
    pub(crate) fn new(spec: &'a EnvSpec, cx: &'a LowerCx) -> Pod<'a> {
        Pod {
            spec,
            cx,
            warnings: Vec::new(),
            errors: Vec::new(),
        }
    }

    pub(crate) fn warn(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(FieldWarning {
            field: field.into(),
            message: message.into(),
        });
    }

    pub(crate) fn refuse(
        &mut self,
        field: impl Into<String>,
        kind: ErrorKind,
        message: impl Into<String>,
        help: Option<&str>,
    ) {
        self.errors.push(FieldError {
            field: field.into(),
            kind,
            message: message.into(),
            help: help.map(str::to_string),
        });
    }

    /// `s`, after checking that a YAML 1.1 reader reads it back as itself
    /// ([`crate::yaml::misread`]); an error on `field` otherwise.
    pub(crate) fn text(&mut self, field: &str, what: &str, s: &str) -> String {
        if let Some(kind) = crate::yaml::misread(s) {
            self.refuse(
                field,
                ErrorKind::Misread,
                format!(
                    "{what} `{}` would be written unquoted, and Kubernetes' YAML reader (YAML 1.1) reads it as {kind}, not as text",
                    quote::comment(s)
                ),
                Some("write it another way: the YAML writer left it unquoted"),
            );
        }
        s.to_string()
    }

    /// The object name of the env, or an error on field `""`.
    pub(crate) fn object_name(&mut self) -> String {
        match crate::names::object_name(&self.cx.env) {
            Ok(n) => n,
            Err(e) => {
                self.refuse(
                    "",
                    ErrorKind::Unwritable,
                    e,
                    Some("rename the env: Kubernetes object names are DNS-1035 labels"),
                );
                "invalid".into()
            }
        }
    }

    /// The image, or an error when the env has no base.
    pub(crate) fn image(&mut self) -> String {
        if self.spec.base.is_none() {
            self.refuse(
                "base",
                ErrorKind::NoBase,
                "not set: there is no image to run (an env without `base` can only be a parent of others)",
                Some("set `base = image(\"debian:12.5\")`, or extend an env that has one"),
            );
        }
        self.cx.image(self.spec, None)
    }

    /// Object metadata: name, labels, the description and IR hash as
    /// annotations.
    pub(crate) fn metadata(&mut self, name: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
        let mut annotations = BTreeMap::new();
        if let Some(d) = &self.spec.description {
            let d = self.text("description", "the description", d);
            annotations.insert("scl.dev/description".to_string(), d);
        }
        annotations.insert("scl.dev/ir-sha256".to_string(), self.spec.content_hash());
        ObjectMeta {
            name: Some(name.to_string()),
            labels: (!labels.is_empty()).then_some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        }
    }

    /// `labels`, each key and value checked against Kubernetes' rules.
    pub(crate) fn labels(&mut self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (k, v) in &self.spec.labels {
            let field = format!("labels.{k}");
            if !is_label_key(k) {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("`{}` is not a Kubernetes label key (an optional DNS subdomain prefix and `/`, then at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)", quote::comment(k)),
                    None,
                );
                continue;
            }
            if !is_label_value(v) {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("`{}` is not a Kubernetes label value (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends, or empty)", quote::comment(v)),
                    None,
                );
                continue;
            }
            let k = self.text(&field, "the label key", k);
            let v = self.text(&field, "the label value", v);
            out.insert(k, v);
        }
        out
    }

    /// `vars` as container env: values, or secret references.
    pub(crate) fn env(&mut self) -> Vec<core::EnvVar> {
        let mut out = Vec::new();
        for (k, v) in &self.spec.vars {
            let field = format!("vars.{k}");
            if !is_env_name(k) {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("`{}` is not an environment variable name every Kubernetes version accepts ([-._a-zA-Z][-._a-zA-Z0-9]*)", quote::comment(k)),
                    None,
                );
                continue;
            }
            let name = self.text(&field, "the var name", k);
            match v {
                VarValue::Plain(s) => {
                    let value = self.text(&field, "the value", s);
                    out.push(core::EnvVar {
                        name,
                        value: Some(value),
                        value_from: None,
                    });
                }
                VarValue::Secret(r) => {
                    if !is_dns_subdomain(&r.secret) {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            format!("the secret name `{}` is not a Kubernetes object name (a DNS-1123 subdomain: lowercase [a-z0-9.-], at most 253)", quote::comment(&r.secret)),
                            None,
                        );
                        continue;
                    }
                    if !is_secret_key(&r.key) {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            format!("the secret key `{}` is not a Kubernetes Secret key ([-._a-zA-Z0-9]+, at most 253)", quote::comment(&r.key)),
                            None,
                        );
                        continue;
                    }
                    let secret = self.text(&field, "the secret name", &r.secret);
                    let key = self.text(&field, "the secret key", &r.key);
                    out.push(core::EnvVar {
                        name,
                        value: None,
                        value_from: Some(core::EnvVarSource {
                            secret_key_ref: Some(core::SecretKeySelector {
                                name: secret,
                                key,
                                optional: None,
                            }),
                            ..Default::default()
                        }),
                    });
                }
            }
        }
        out
    }

    /// `resources` as the container's requirements, and the node selector
    /// of `gpu.type`.
    pub(crate) fn resources(
        &mut self,
    ) -> (
        Option<core::ResourceRequirements>,
        Option<BTreeMap<String, String>>,
    ) {
        let Some(r) = &self.spec.resources else {
            return (None, None);
        };
        let list = |l: &Option<scl_ir::ResourceList>| {
            let mut m = BTreeMap::new();
            if let Some(l) = l {
                if let Some(c) = l.cpu {
                    m.insert("cpu".to_string(), Quantity(cpu_quantity(c)));
                }
                if let Some(b) = l.memory {
                    m.insert("memory".to_string(), Quantity(memory_quantity(b)));
                }
            }
            m
        };
        let requests = list(&r.requests);
        let mut limits = list(&r.limits);
        let req_gpu = r.requests.as_ref().and_then(|l| l.gpu.as_ref());
        let lim_gpu = r.limits.as_ref().and_then(|l| l.gpu.as_ref());
        if let (Some(a), Some(b)) = (req_gpu, lim_gpu) {
            if a.count != b.count {
                self.refuse(
                    "resources.requests.gpu",
                    ErrorKind::Unwritable,
                    format!("{} GPUs requested and {} as the limit: Kubernetes requires GPU requests to equal limits (GPUs are not overcommitted)", a.count, b.count),
                    Some("set the same count, or only one of them"),
                );
            }
        }
        let mut selector = BTreeMap::new();
        if let Some((g, which)) = lim_gpu
            .map(|g| (g, "limits"))
            .or(req_gpu.map(|g| (g, "requests")))
        {
            if g.count > 0 {
                limits.insert(GPU_RESOURCE.to_string(), Quantity(g.count.to_string()));
            }
            let kind = g.kind.as_ref().or(req_gpu.and_then(|r| r.kind.as_ref()));
            if let Some(kind) = kind {
                let field = format!("resources.{which}.gpu.type");
                let label = g
                    .node_label
                    .as_deref()
                    .or(req_gpu.and_then(|r| r.node_label.as_deref()))
                    .unwrap_or(DEFAULT_GPU_LABEL);
                if !is_label_key(label) {
                    self.refuse(
                        format!("resources.{which}.gpu.node_label"),
                        ErrorKind::Unwritable,
                        format!("`{}` is not a Kubernetes label key", quote::comment(label)),
                        None,
                    );
                } else if !is_label_value(kind) {
                    self.refuse(
                        &field,
                        ErrorKind::Unwritable,
                        format!("`{}` is not a Kubernetes label value (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends), so no node selector can match it", quote::comment(kind)),
                        None,
                    );
                } else {
                    let v = self.text(&field, "the GPU type", kind);
                    selector.insert(label.to_string(), v);
                }
            }
        }
        let req = (!requests.is_empty()).then_some(requests);
        let lim = (!limits.is_empty()).then_some(limits);
        let reqs = (req.is_some() || lim.is_some()).then(|| core::ResourceRequirements {
            requests: req,
            limits: lim,
            ..Default::default()
        });
        (reqs, (!selector.is_empty()).then_some(selector))
    }

    /// `volumes` as pod volumes and the container's mounts.
    pub(crate) fn volumes(&mut self) -> (Vec<core::Volume>, Vec<core::VolumeMount>) {
        let mut vols: Vec<core::Volume> = Vec::new();
        let mut mounts: Vec<core::VolumeMount> = Vec::new();
        for (i, v) in self.spec.volumes.iter().enumerate() {
            let field = format!("volumes[{i}]");
            let read_only = v.mode == VolumeMode::ReadOnly;
            let name = match crate::names::object_name(&v.name) {
                Ok(n) => n,
                Err(e) => {
                    self.refuse(&field, ErrorKind::Unwritable, e, Some("rename the volume"));
                    continue;
                }
            };
            if vols.iter().any(|x| x.name == name) {
                self.refuse(
                    &field,
                    ErrorKind::NameClash,
                    format!("the volume name `{}` becomes `{name}`, the name of another volume of the pod", quote::comment(&v.name)),
                    Some("rename one of the volumes"),
                );
                continue;
            }
            if !v.mount.starts_with('/') || v.mount.contains(':') {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "the mount path `{}` is not an absolute container path without `:`",
                        quote::comment(&v.mount)
                    ),
                    None,
                );
                continue;
            }
            if mounts.iter().any(|m| *m.mount_path == *v.mount) {
                self.refuse(
                    &field,
                    ErrorKind::NameClash,
                    format!("`{}` is the mount path of another volume: Kubernetes requires them to differ", quote::comment(&v.mount)),
                    None,
                );
                continue;
            }
            let mut vol = core::Volume {
                name: name.clone(),
                ..Default::default()
            };
            match v.source_kind() {
                SourceKind::Pvc => {
                    let claim = &v.source["pvc://".len()..];
                    if !is_dns_subdomain(claim) {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            format!(
                                "`{}` is not a PersistentVolumeClaim name (a DNS-1123 subdomain)",
                                quote::comment(claim)
                            ),
                            None,
                        );
                        continue;
                    }
                    let claim = self.text(&field, "the claim name", claim);
                    vol.persistent_volume_claim = Some(core::PersistentVolumeClaimVolumeSource {
                        claim_name: claim,
                        read_only: read_only.then_some(true),
                    });
                }
                SourceKind::Nfs => {
                    let rest = &v.source["nfs://".len()..];
                    let (host, path) = match rest.find('/') {
                        Some(j) => (&rest[..j], &rest[j..]),
                        None => (rest, "/"),
                    };
                    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control())
                    {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            format!("`{}` names no NFS server", quote::comment(&v.source)),
                            None,
                        );
                        continue;
                    }
                    let server = self.text(&field, "the NFS server", host);
                    let path = self.text(&field, "the NFS path", path);
                    vol.nfs = Some(core::NFSVolumeSource {
                        server,
                        path,
                        read_only: read_only.then_some(true),
                    });
                }
                SourceKind::S3 => {
                    self.warn(
                        &field,
                        format!(
                            "Kubernetes mounts no S3 bucket itself: the pod mounts the PersistentVolumeClaim `{name}`, which must exist before the job starts, bound to a PersistentVolume of a CSI S3 driver (e.g. the Mountpoint for Amazon S3 CSI driver, s3.csi.aws.com) for `{}`",
                            quote::comment(&v.source)
                        ),
                    );
                    vol.persistent_volume_claim = Some(core::PersistentVolumeClaimVolumeSource {
                        claim_name: name.clone(),
                        read_only: read_only.then_some(true),
                    });
                }
                SourceKind::Host => {
                    let rel = v.source["host:".len()..].trim_start_matches("./");
                    let rel = if rel == "." { "" } else { rel };
                    let Some(root) = &self.cx.host_root else {
                        self.warn(
                            &field,
                            format!(
                                "`{}` is a folder of the workspace, which the cluster's nodes do not have: the volume is left out (pass `--host-root DIR`, the workspace's path on the nodes, for a hostPath volume; or use pvc:// or nfs://)",
                                quote::comment(&v.source)
                            ),
                        );
                        continue;
                    };
                    let root = match root.trim_end_matches('/') {
                        "" => "/",
                        r => r,
                    };
                    let path = match (rel, root) {
                        ("", _) => root.to_string(),
                        (_, "/") => format!("/{rel}"),
                        _ => format!("{root}/{rel}"),
                    };
                    self.warn(
                        &field,
                        format!(
                            "`{}` becomes the hostPath `{}`: every node that may run the pod must have that folder (a shared file system), and a hostPath gives the pod the node's files directly",
                            quote::comment(&v.source),
                            quote::comment(&path)
                        ),
                    );
                    let path = self.text(&field, "the host path", &path);
                    vol.host_path = Some(core::HostPathVolumeSource {
                        path,
                        type_: Some("Directory".into()),
                    });
                }
            }
            let mount_path = self.text(&field, "the mount path", &v.mount);
            vols.push(vol);
            mounts.push(core::VolumeMount {
                name,
                mount_path,
                read_only: read_only.then_some(true),
                ..Default::default()
            });
        }
        (vols, mounts)
    }

    /// The container's `command` and `args`: the image's ENTRYPOINT and CMD
    /// replaced as `docker run` would, or `torchrun` with the env's command
    /// when `torchrun` launches several processes.
    pub(crate) fn command(&mut self, torchrun: bool) -> (Option<Vec<String>>, Option<Vec<String>>) {
        let check = |pod: &mut Pod, field: &str, v: &[String]| -> Vec<String> {
            v.iter()
                .enumerate()
                .map(|(i, s)| pod.text(&format!("{field}[{i}]"), "the argument", s))
                .collect()
        };
        let entrypoint = check(self, "entrypoint", &self.spec.entrypoint);
        let command = check(self, "command", &self.spec.command);
        if !torchrun {
            return (
                (!entrypoint.is_empty()).then_some(entrypoint),
                (!command.is_empty()).then_some(command),
            );
        }
        let all: Vec<String> = entrypoint.into_iter().chain(command).collect();
        if all.is_empty() {
            self.refuse(
                "command",
                ErrorKind::Unwritable,
                "a distributed env with launcher torchrun needs a command for torchrun to launch",
                Some("set `command = [\"python\", \"train.py\"]`"),
            );
            return (None, None);
        }
        (Some(vec!["torchrun".into()]), Some(torchrun_args(&all)))
    }

    /// The container of the pod.
    pub(crate) fn container(
        &mut self,
        name: &str,
        torchrun: bool,
    ) -> (
        core::Container,
        Vec<core::Volume>,
        Option<BTreeMap<String, String>>,
    ) {
        let image = self.image();
        let (command, args) = self.command(torchrun);
        let env = self.env();
        let (resources, selector) = self.resources();
        let (volumes, mounts) = self.volumes();
        let working_dir = self
            .spec
            .workdir
            .clone()
            .map(|w| self.text("workdir", "the workdir", &w));
        let ports: Vec<core::ContainerPort> = self
            .spec
            .ports
            .iter()
            .map(|p| core::ContainerPort {
                container_port: i32::from(*p),
                ..Default::default()
            })
            .collect();
        let c = core::Container {
            name: name.into(),
            image: Some(image),
            command,
            args,
            env: (!env.is_empty()).then_some(env),
            resources,
            volume_mounts: (!mounts.is_empty()).then_some(mounts),
            working_dir,
            ports: (!ports.is_empty()).then_some(ports),
            ..Default::default()
        };
        (c, volumes, selector)
    }

    /// The pod's security context from `user`.
    pub(crate) fn security_context(&self) -> Option<core::PodSecurityContext> {
        self.spec.user.as_ref().map(|u| core::PodSecurityContext {
            run_as_user: Some(i64::from(u.uid)),
            run_as_non_root: (u.uid != 0).then_some(true),
            ..Default::default()
        })
    }

    /// The pod template: labels, one container, volumes, node selector,
    /// security context; `restart_policy` for a Job's pods.
    fn template(
        &mut self,
        labels: BTreeMap<String, String>,
        container_name: &str,
        torchrun: bool,
        restart_policy: Option<&str>,
    ) -> core::PodTemplateSpec {
        let (container, volumes, node_selector) = self.container(container_name, torchrun);
        core::PodTemplateSpec {
            metadata: (!labels.is_empty()).then(|| ObjectMeta {
                labels: Some(labels),
                ..Default::default()
            }),
            spec: Some(core::PodSpec {
                containers: vec![container],
                volumes: (!volumes.is_empty()).then_some(volumes),
                node_selector,
                security_context: self.security_context(),
                restart_policy: restart_policy.map(str::to_string),
                ..Default::default()
            }),
        }
    }

    /// The text of `k8s.yaml`, or `None` after errors.
    fn k8s_file(&mut self) -> Option<String> {
        let name = self.object_name();
        let labels = self.labels();
        let metadata = self.metadata(&name, labels.clone());
        let (kind, value) = match multi_process(self.spec) {
            None => {
                let template = self.template(labels, &name, false, Some("OnFailure"));
                let job = Job {
                    metadata,
                    spec: Some(JobSpec {
                        template,
                        ..Default::default()
                    }),
                    status: None,
                };
                ("Job", serde_json::to_value(&job))
            }
            Some(d) => {
                let torchrun = d.launcher == Launcher::Torchrun;
                if !torchrun {
                    self.warn(
                        "distributed.launcher",
                        format!("the PyTorchJob runs the command as written in each pod: it must start the {:?} launcher itself (the operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and PET_* variables)", d.launcher).to_lowercase(),
                    );
                }
                let template = self.template(labels, PYTORCH_CONTAINER, torchrun, None);
                let replica = |t: core::PodTemplateSpec, n: u32| ReplicaSpec {
                    replicas: n,
                    restart_policy: "OnFailure",
                    template: t,
                };
                let workers = d.nodes.saturating_sub(1);
                let job = PyTorchJob {
                    api_version: "kubeflow.org/v1",
                    kind: "PyTorchJob",
                    metadata,
                    spec: PyTorchJobSpec {
                        nproc_per_node: d.procs_per_node.to_string(),
                        pytorch_replica_specs: ReplicaSpecs {
                            worker: (workers > 0).then(|| replica(template.clone(), workers)),
                            master: replica(template, 1),
                        },
                    },
                };
                ("PyTorchJob", serde_json::to_value(&job))
            }
        };
        let value = match value {
            Ok(v) => v,
            Err(e) => {
                self.refuse(
                    "",
                    ErrorKind::Unwritable,
                    format!("the manifest could not be serialized: {e}"),
                    None,
                );
                return None;
            }
        };
        self.finish(&value, &format!(
            "# Kubernetes {kind} of env {}, generated by sclc from its IR (sha256 {}).\n# Image: {} (build it from the docker target's Dockerfile and push it where the cluster pulls from).\n# Apply with: kubectl apply -f {FILE_NAME}\n",
            quote::comment(&self.cx.env),
            self.spec.content_hash(),
            quote::comment(&self.cx.image(self.spec, None)),
        ))
    }

    /// The YAML text of `value` after `header`, or `None` when there are
    /// errors (or a string a YAML 1.1 reader would misread slipped
    /// through: an error on `""`).
    pub(crate) fn finish(&mut self, value: &serde_json::Value, header: &str) -> Option<String> {
        if !self.errors.is_empty() {
            return None;
        }
        for (s, kind) in crate::yaml::misread_in(value) {
            self.refuse(
                "",
                ErrorKind::Misread,
                format!(
                    "`{}` would be read as {kind} by a YAML 1.1 reader",
                    quote::comment(&s)
                ),
                None,
            );
        }
        if !self.errors.is_empty() {
            return None;
        }
        match crate::yaml::to_string(value) {
            Ok(y) => Some(format!("{header}{y}")),
            Err(e) => {
                self.refuse(
                    "",
                    ErrorKind::Unwritable,
                    format!("the YAML writer refused the file: {e}"),
                    None,
                );
                None
            }
        }
    }
}

/// torchrun's arguments for the command `all` (`entrypoint ++ command`,
/// not empty): `python[3] SCRIPT ARGS…` → `SCRIPT ARGS…` and
/// `python[3] -m MOD ARGS…` → `-m MOD ARGS…` (torchrun runs them with its
/// own Python); anything else → `--no-python ARGS…` (torchrun executes it).
pub fn torchrun_args(all: &[String]) -> Vec<String> {
    let is_python = |s: &str| {
        let base = s.rsplit('/').next().unwrap_or(s);
        base == "python"
            || base.strip_prefix("python3").is_some_and(|v| {
                v.is_empty() || (v.starts_with('.') && v[1..].chars().all(|c| c.is_ascii_digit()))
            })
    };
    if all.len() >= 2 && is_python(&all[0]) {
        let next = &all[1];
        if next == "-m" && all.len() >= 3 {
            return all[1..].to_vec();
        }
        if !next.starts_with('-') {
            return all[1..].to_vec();
        }
    }
    let mut v = vec!["--no-python".to_string()];
    v.extend(all.iter().cloned());
    v
}

/// A CPU quantity from millicores: whole cores (`4000` → `"4"`), else
/// millicores (`1500` → `"1500m"`).
pub fn cpu_quantity(millicores: u64) -> String {
    if millicores.is_multiple_of(1000) {
        (millicores / 1000).to_string()
    } else {
        format!("{millicores}m")
    }
}

/// A memory quantity from bytes, in the largest binary suffix (`Ki` … `Ei`)
/// that divides it (`34359738368` → `"32Gi"`), else bytes (`1000` → `"1000"`).
pub fn memory_quantity(bytes: u64) -> String {
    for (suffix, shift) in [
        ("Ei", 60),
        ("Pi", 50),
        ("Ti", 40),
        ("Gi", 30),
        ("Mi", 20),
        ("Ki", 10),
    ] {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// A DNS-1123 subdomain (Kubernetes object names, label key prefixes):
/// at most 253 characters, dot-separated labels of `[a-z0-9-]` that start
/// and end alphanumeric.
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// A DNS-1123 label: 1–63 of `[a-z0-9-]`, alphanumeric at both ends.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// A label name (the part after a prefix; also a label value when not
/// empty): 1–63 of `[A-Za-z0-9-_.]`, alphanumeric at both ends
/// (apimachinery `validation.IsQualifiedName`).
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// A label key: `[prefix/]name`, the prefix a DNS-1123 subdomain.
pub fn is_label_key(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(s),
    }
}

/// A label value: empty, or a label name.
pub fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_label_name(s)
}

/// An env var name every Kubernetes version accepts (before 1.34's relaxed
/// rule): `[-._a-zA-Z][-._a-zA-Z0-9]*`.
pub fn is_env_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '-' | '.' | '_'))
        && c.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
}

/// A key of a Secret: `[-._a-zA-Z0-9]+`, at most 253.
pub fn is_secret_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(cpu_quantity(4000), "4");
        assert_eq!(cpu_quantity(1500), "1500m");
        assert_eq!(cpu_quantity(0), "0");
        assert_eq!(memory_quantity(34359738368), "32Gi");
        assert_eq!(memory_quantity(3 << 20), "3Mi");
        assert_eq!(memory_quantity(1000), "1000");
        assert_eq!(memory_quantity(1536 << 20), "1536Mi");
    }

    #[test]
    fn torchrun_arguments() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            torchrun_args(&v(&["python", "train.py", "--x"])),
            v(&["train.py", "--x"])
        );
        assert_eq!(
            torchrun_args(&v(&["python3.11", "-m", "pkg.train"])),
            v(&["-m", "pkg.train"])
        );
        assert_eq!(
            torchrun_args(&v(&["python", "-c", "print(1)"])),
            v(&["--no-python", "python", "-c", "print(1)"])
        );
        assert_eq!(
            torchrun_args(&v(&["./run.sh"])),
            v(&["--no-python", "./run.sh"])
        );
    }

    #[test]
    fn label_rules() {
        assert!(is_label_key("app.kubernetes.io/name"));
        assert!(is_label_key("team"));
        assert!(!is_label_key("-team"));
        assert!(!is_label_key("a/b/c"));
        assert!(!is_label_key(&"a".repeat(64)));
        assert!(is_label_value(""));
        assert!(!is_label_value("a b"));
        assert!(is_env_name("HF_HOME"));
        assert!(!is_env_name("1A"));
        assert!(!is_env_name("A B"));
    }
}
