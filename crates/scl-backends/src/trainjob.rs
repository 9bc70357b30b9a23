//! The Kubeflow Trainer v2 backend: [`lower`] turns one [`EnvSpec`] into
//! `trainjob.yaml`, a `trainer.kubeflow.org/v1alpha1` **TrainJob**
//! (`pkg/apis/trainer/v1alpha1/trainjob_types.go`; CRD
//! `trainer.kubeflow.org_trainjobs.yaml` of 2025-02-24) that runs on the
//! `torch-distributed` ClusterTrainingRuntime:
//!
//! ```yaml
//! spec:
//!   runtimeRef: {name: torch-distributed}
//!   trainer: {image, command, args, env, numNodes, numProcPerNode, resourcesPerNode}
//! ```
//!
//! `numNodes` and `numProcPerNode` come from `distributed` (1 and 1 without
//! it); the image, command, env and resources are written as by the k8s
//! target ([`crate::k8s`]): secrets as `secretKeyRef`, GPUs only in limits,
//! `torchrun` + the env's command when `launcher = torchrun` and there is
//! more than one process (the Trainer's torch plugin sets `PET_NNODES`,
//! `PET_NPROC_PER_NODE`, `PET_NODE_RANK`, `PET_MASTER_ADDR`,
//! `PET_MASTER_PORT`, which torchrun reads for its options).
//!
//! The trainer API has no volumes, node selector, security context,
//! working directory or ports (they belong to the runtime or
//! `podSpecOverrides`): those fields are warnings. Not in `--target all`: a
//! cluster runs either the v1 training operator (the k8s target's
//! PyTorchJob) or the Trainer.

use scl_ir::{EnvSpec, Launcher};
use serde::Serialize;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::expresses::Expresses;
use crate::k8s::{multi_process, Pod};
use crate::{quote, Artifact, FieldWarning, LowerCx, Lowered};

/// The file the trainjob target writes in an env's folder.
pub const FILE_NAME: &str = "trainjob.yaml";

/// The ClusterTrainingRuntime the TrainJob names (kubeflow/trainer
/// `manifests/base/runtimes/torch_distributed.yaml`).
pub const RUNTIME: &str = "torch-distributed";

/// The Kubeflow Trainer v2 target in the [`crate::REGISTRY`].
pub struct TrainJob;

impl crate::Backend for TrainJob {
    fn name(&self) -> &'static str {
        "trainjob"
    }
    fn summary(&self) -> &'static str {
        "a Kubeflow Trainer v2 TrainJob on the torch-distributed runtime (kubectl apply -f trainjob.yaml)"
    }
    fn layout(&self) -> &'static [&'static str] {
        &["trainjob.yaml"]
    }
    fn in_all(&self) -> bool {
        false
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered {
        lower(spec, cx)
    }
}

const NO_OVERRIDE: &str = "the TrainJob's trainer has no such field (it belongs to the runtime or podSpecOverrides); it is left out";

/// What the trainjob target writes and does not ([`crate::expresses`]).
pub const EXPRESSES: Expresses = Expresses {
    target: "trainjob",
    writes: &[
        "base",
        "command",
        "description",
        "distributed.launcher",
        "distributed.nodes",
        "distributed.procs_per_node",
        "entrypoint",
        "labels",
        "resources",
        "vars",
    ],
    instead: &[
        ("volumes", NO_OVERRIDE),
        ("ports", NO_OVERRIDE),
        (
            "resources.requests.gpu.type",
            "the trainer has no node selector: pick GPU nodes in the runtime or podSpecOverrides",
        ),
        (
            "resources.limits.gpu.type",
            "the trainer has no node selector: pick GPU nodes in the runtime or podSpecOverrides",
        ),
        (
            "resources.requests.gpu.node_label",
            "the trainer has no node selector",
        ),
        (
            "resources.limits.gpu.node_label",
            "the trainer has no node selector",
        ),
        (
            "resources.requests.gpu.memory",
            "Kubernetes has no per-GPU memory request",
        ),
        (
            "resources.limits.gpu.memory",
            "Kubernetes has no per-GPU memory request",
        ),
        (
            "distributed.elastic",
            "the TrainJob is written with a fixed number of nodes",
        ),
        ("depends_on", "a TrainJob starts on its own"),
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
        ("user", "the image's USER (docker target) runs the trainer"),
        (
            "workdir",
            "the image's WORKDIR (docker target) is the trainer's",
        ),
        (
            "distributed.backend",
            "the program picks its collective backend; the pods need nothing for it",
        ),
        ("services", "an env with services is one warning of its own"),
    ],
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrainJobObject {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: TrainJobSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrainJobSpec {
    runtime_ref: RuntimeRef,
    trainer: Trainer,
}

#[derive(Serialize)]
struct RuntimeRef {
    name: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Trainer {
    image: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    env: Vec<core::EnvVar>,
    num_nodes: u32,
    num_proc_per_node: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources_per_node: Option<core::ResourceRequirements>,
}

/// Lowers `spec`, the IR of env `cx.env`, to `trainjob.yaml`. Errors and
/// warnings as for [`crate::k8s::lower`], with the fields the trainer API
/// lacks as warnings ([`EXPRESSES`]). An env with `services`: no artifact,
/// one warning.
pub fn lower(spec: &EnvSpec, cx: &LowerCx) -> Lowered {
    let mut out = Lowered::default();
    if !spec.services.is_empty() {
        out.warnings.push(FieldWarning {
            field: "services".into(),
            message: "an env with services is not written as a TrainJob: compose is the multi-service target".into(),
        });
        return out;
    }
    let mut pod = Pod::new(spec, cx);
    pod.warnings = crate::expresses::unexpressed(spec, &EXPRESSES);
    let name = pod.object_name();
    let labels = pod.labels();
    let metadata = pod.metadata(&name, labels);
    let image = pod.image();
    let dist = multi_process(spec);
    let torchrun = dist.is_some_and(|d| d.launcher == Launcher::Torchrun);
    if let Some(d) = dist.filter(|d| d.launcher != Launcher::Torchrun) {
        pod.warn(
            "distributed.launcher",
            format!("the trainer runs the command as written on each node: it must start the {:?} launcher itself", d.launcher).to_lowercase(),
        );
    }
    let (command, args) = pod.command(torchrun);
    let env = pod.env();
    let (resources, _selector) = pod.resources();
    let job = TrainJobObject {
        api_version: "trainer.kubeflow.org/v1alpha1",
        kind: "TrainJob",
        metadata,
        spec: TrainJobSpec {
            runtime_ref: RuntimeRef { name: RUNTIME },
            trainer: Trainer {
                image,
                command,
                args,
                env,
                num_nodes: spec.distributed.as_ref().map_or(1, |d| d.nodes),
                num_proc_per_node: spec.distributed.as_ref().map_or(1, |d| d.procs_per_node),
                resources_per_node: resources,
            },
        },
    };
    let header = format!(
        "# Kubeflow Trainer TrainJob of env {}, generated by sclc from its IR (sha256 {}).\n# Runtime: ClusterTrainingRuntime {RUNTIME}; image: {} (build it from the docker target's Dockerfile and push it).\n# Apply with: kubectl apply -f {FILE_NAME}\n",
        quote::comment(&cx.env),
        spec.content_hash(),
        quote::comment(&cx.image(spec, None)),
    );
    let text = match serde_json::to_value(&job) {
        Ok(v) => pod.finish(&v, &header),
        Err(_) => None,
    };
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
