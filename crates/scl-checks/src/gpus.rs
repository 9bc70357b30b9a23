//! GPUs: the generation floors of a GPU type (`E0507`), requests against
//! limits (`E0509`) and the processes of a distributed launch against the
//! GPUs each node gets (`E0510`, `W0505`).

use scl_domain::version::Dotted;
use scl_ir::Gpu;

use crate::{major_minor, older_than, Cx, Finding};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let res = cx.spec.resources.as_ref();
    let limits = res
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.gpu.as_ref());
    let requests = res
        .and_then(|r| r.requests.as_ref())
        .and_then(|l| l.gpu.as_ref());
    if let (Some(l), Some(r)) = (limits, requests) {
        requests_and_limits(l, r, out);
    }
    let gpu = limits
        .map(|g| (g, "resources.limits.gpu"))
        .or(requests.map(|g| (g, "resources.requests.gpu")));
    if let Some((g, field)) = gpu {
        floors(cx, g, field, out);
        label_spelling(g, requests, field, out);
    }
    world(cx, gpu, out);
}

/// Whether a GPU type is spelled as GKE's accelerator label values are:
/// lower case, starting `nvidia-` (`nvidia-tesla-v100`, `nvidia-l4`).
fn gke_spelling(kind: &str) -> bool {
    kind.starts_with("nvidia-") && !kind.chars().any(|c| c.is_ascii_uppercase())
}

/// `W0508`: a GPU type spelled for another node label than the one the
/// Kubernetes node selector uses (as the k8s backends pick them: the type
/// and label of the limits, else of the requests). GPU Feature Discovery's
/// `nvidia.com/gpu.product` holds product names (`Tesla-V100-SXM2-16GB`),
/// GKE's `cloud.google.com/gke-accelerator` lower-case `nvidia-…` names: a
/// value of the one never matches the other, and the pod stays Pending.
fn label_spelling(g: &Gpu, requests: Option<&Gpu>, field: &str, out: &mut Vec<Finding>) {
    let Some(kind) = g
        .kind
        .as_deref()
        .or(requests.and_then(|r| r.kind.as_deref()))
    else {
        return;
    };
    let label = g
        .node_label
        .as_deref()
        .or(requests.and_then(|r| r.node_label.as_deref()));
    let shown = label.unwrap_or(scl_ir::DEFAULT_GPU_LABEL);
    let (message, help) = match label {
        None | Some(scl_ir::DEFAULT_GPU_LABEL) if gke_spelling(kind) => (
            format!(
                "GPU type `{kind}` is a value of GKE's node label `{}`, but the node selector uses `{shown}`{}, whose values are product names such as `Tesla-V100-SXM2-16GB`: no node matches, and the pod stays Pending",
                scl_ir::GKE_GPU_LABEL,
                if label.is_none() { " (the default: GPU Feature Discovery's label)" } else { "" }
            ),
            format!(
                "on GKE, set `node_label = \"{}\"` in the GPU record; on other clusters write the product name as GPU Feature Discovery labels it (`nvidia-smi --query-gpu=name`, spaces as `-`: `NVIDIA-A100-SXM4-80GB`)",
                scl_ir::GKE_GPU_LABEL
            ),
        ),
        Some(scl_ir::GKE_GPU_LABEL) if !gke_spelling(kind) => (
            format!(
                "GPU type `{kind}` is not a value of GKE's node label `{}` (lower case, `nvidia-…`: `nvidia-l4`, `nvidia-tesla-v100`): no node matches, and the pod stays Pending",
                scl_ir::GKE_GPU_LABEL
            ),
            "write the accelerator as GKE names it (`nvidia-tesla-t4`, `nvidia-tesla-v100`, `nvidia-a100-80gb`, `nvidia-l4`, `nvidia-h100-80gb`), or use the label of your cluster's GPU nodes".to_string(),
        ),
        _ => return,
    };
    out.push(Finding::warning("W0508", field, message).help(help));
}

/// `E0509`: Kubernetes takes GPUs as limits; requests may be left out, but
/// when both are written they must be equal ("Schedule GPUs",
/// kubernetes.io).
fn requests_and_limits(l: &Gpu, r: &Gpu, out: &mut Vec<Finding>) {
    if l.count != r.count {
        out.push(
            Finding::error(
                "E0509",
                "resources.requests.gpu",
                format!(
                    "GPU requests ({}) and limits ({}) differ: Kubernetes takes GPUs only as limits, and requests, when written, must equal them",
                    r.count, l.count
                ),
            )
            .also("resources.limits.gpu", format!("{} GPUs here", l.count))
            .help("write the GPUs once, as `resources.limits.gpu` (sclc writes the request from it)"),
        );
    } else if l.kind.is_some() && r.kind.is_some() && l.kind != r.kind {
        out.push(
            Finding::error(
                "E0509",
                "resources.requests.gpu",
                format!(
                    "the GPU type of requests ({}) and of limits ({}) differ: a pod runs on one node, with one type",
                    r.kind.as_deref().unwrap_or_default(),
                    l.kind.as_deref().unwrap_or_default()
                ),
            )
            .also("resources.limits.gpu", "this type")
            .help("write the GPUs once, as `resources.limits.gpu`"),
        );
    }
}

/// `E0507`: a GPU type whose generation needs a newer torch or CUDA than
/// the env's (floors of the compute capability).
fn floors(cx: &Cx, g: &Gpu, field: &str, out: &mut Vec<Finding>) {
    let Some(kind) = &g.kind else {
        return;
    };
    let Some(model) = scl_domain::gpu::gpu_model(kind) else {
        return;
    };
    let Some(floor) = scl_domain::gpu::floor_for(model.compute_capability) else {
        return;
    };
    let what = format!(
        "{} ({}, compute capability {})",
        model.name, model.arch, model.compute_capability
    );
    let torch = cx
        .pin("torch")
        .and_then(|p| Some((p.release()?.to_string(), p.field.to_string(), p.shown())))
        .or_else(|| {
            let t = cx.ships.torch.clone()?;
            Some((
                t.clone(),
                "base".to_string(),
                format!("torch {t} of {}", cx.base_ref()),
            ))
        });
    if let Some((t, tfield, shown)) = &torch {
        if older_than(t, floor.min_torch) == Some(true) {
            out.push(
                Finding::error(
                    "E0507",
                    field,
                    format!(
                        "the {what} needs torch ≥ {}, but the env has {shown}",
                        floor.min_torch
                    ),
                )
                .also(tfield.clone(), format!("torch {t} here"))
                .help(format!(
                    "use torch ≥ {} (built for CUDA ≥ {}), or another GPU type",
                    floor.min_torch, floor.min_cuda
                )),
            );
        }
    }
    // The CUDA torch runs on: its wheel's variant, else the image's.
    let cuda = cx
        .pins
        .iter()
        .filter(|p| &*p.name == "torch")
        .find_map(|p| Some((p.cuda()?, p.field.to_string(), p.shown())))
        .or_else(|| {
            let c = cx.base_cuda.clone()?;
            Some((
                major_minor(&c),
                "base".to_string(),
                format!("the base image {}", cx.base_ref()),
            ))
        });
    if let Some((c, cfield, shown)) = cuda {
        if matches!((Dotted::parse(&c), Dotted::parse(floor.min_cuda)), (Some(c), Some(min)) if c < min)
        {
            out.push(
                Finding::error(
                    "E0507",
                    field,
                    format!(
                        "the {what} needs CUDA ≥ {}, but {shown} has CUDA {c}",
                        floor.min_cuda
                    ),
                )
                .also(cfield, format!("CUDA {c} here"))
                .help(format!(
                    "use a CUDA ≥ {} image and torch wheels (`+{}`), or another GPU type",
                    floor.min_cuda,
                    scl_domain::torch::variant(floor.min_cuda)
                )),
            );
        }
    }
}

/// `E0510` / `W0505`: the processes each node starts against its GPUs.
/// One process per GPU is NCCL's rule (two ranks on one device fail), so
/// `E0510` is for NCCL only: with Gloo or MPI several processes may share a
/// GPU, or run without one. GPUs that no process uses (`W0505`) are idle
/// whatever the backend.
fn world(cx: &Cx, gpu: Option<(&Gpu, &str)>, out: &mut Vec<Finding>) {
    let Some(d) = &cx.spec.distributed else {
        return;
    };
    let per_node = d.procs_per_node;
    let nccl = d.backend == scl_ir::Backend::Nccl;
    match gpu {
        None | Some((Gpu { count: 0, .. }, _)) if nccl => {
            out.push(
                Finding::error(
                    "E0510",
                    "distributed",
                    format!(
                        "the NCCL backend runs one process per GPU, but the env requests no GPU for its {per_node} process{} per node",
                        if per_node == 1 { "" } else { "es" }
                    ),
                )
                .help(format!(
                    "request the GPUs (`resources.limits.gpu = {{ count = {per_node} }}`), or use `backend = .gloo` for CPU training"
                )),
            );
        }
        Some((g, field)) if nccl && g.count > 0 && per_node > g.count => {
            out.push(
                Finding::error(
                    "E0510",
                    "distributed.procs_per_node",
                    format!(
                        "{per_node} processes per node, but each node gets {} GPU{}: with NCCL two processes on one GPU fail (\"Duplicate GPU detected\"), and the world size ({}) is not the GPU count",
                        g.count,
                        if g.count == 1 { "" } else { "s" },
                        d.world_size()
                    ),
                )
                .also(field, format!("{} GPUs per node here", g.count))
                .help(format!("set `procs_per_node = {}` (one process per GPU), or request {per_node} GPUs", g.count)),
            );
        }
        Some((g, field)) if per_node < g.count => {
            out.push(
                Finding::warning(
                    "W0505",
                    "distributed.procs_per_node",
                    format!(
                        "{per_node} process{} per node for {} GPUs per node: {} GPU{} will do nothing",
                        if per_node == 1 { "" } else { "es" },
                        g.count,
                        g.count - per_node,
                        if g.count - per_node == 1 { "" } else { "s" }
                    ),
                )
                .also(field, format!("{} GPUs per node here", g.count))
                .help(format!("set `procs_per_node = {}` (one process per GPU)", g.count)),
            );
        }
        _ => {}
    }
}
