//! GPUs: compute capability per model, and the oldest torch and CUDA with
//! kernels for a compute capability.
//!
//! Sources (as gathered 2026-12):
//! - floors: replicate/cog `pkg/doctor/gpu_compatibility.go` (`gpuFloors`,
//!   measured from `torch._C._cuda_getArchFlags()`;
//!   `data/source/cog_gpu_compute_floor.csv`);
//! - models: NVIDIA "CUDA GPUs – Compute Capability"
//!   (developer.nvidia.com/cuda-gpus; `data/source/gpu_models.csv`), with
//!   the spellings of `nvidia-smi` names (`NVIDIA H100 80GB HBM3`, `Tesla
//!   V100-SXM2-16GB`) and of GPU Feature Discovery's `nvidia.com/gpu.product`
//!   label (the same name with `-` for spaces: `NVIDIA-A100-SXM4-80GB`,
//!   `Tesla-T4`, `NVIDIA-GeForce-RTX-3090`).

use crate::tables;
use crate::version::Dotted;

/// The oldest torch and CUDA with kernels for one compute capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Floor {
    /// `"9.0"`.
    pub compute_capability: &'static str,
    /// The source's description: `"Hopper (H100)"`.
    pub arch: &'static str,
    /// The oldest torch release with kernels for it: `"2.0.1"`.
    pub min_torch: &'static str,
    /// The oldest CUDA variant with kernels for it: `"11.8"` (so torch
    /// 2.7.0+cu118 has no Blackwell kernels).
    pub min_cuda: &'static str,
}

/// Every floor (12.0, 10.0, 9.0).
pub fn floors() -> &'static [Floor] {
    tables::FLOORS
}

/// The floor of compute capability `cc` (`"9.0"`, `"12.1"`, `"10.3"`): the
/// row of the same major version. `None` for majors without a floor (below
/// 9, where every torch of the table has kernels, and 11) and junk.
pub fn floor_for(cc: &str) -> Option<&'static Floor> {
    let v = Dotted::parse(cc)?;
    floors()
        .iter()
        .find(|f| Dotted::parse(f.compute_capability).is_some_and(|c| c.major() == v.major()))
}

/// One GPU model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuModel {
    /// The canonical name: `"H100"`, `"RTX 4090"`.
    pub name: &'static str,
    /// `"9.0"`.
    pub compute_capability: &'static str,
    /// The architecture: `"Hopper"`.
    pub arch: &'static str,
    /// The token sequences the model is known by, lowercase, space-separated
    /// (`["rtx 4090", "rtx4090"]`); see [`gpu_model`].
    pub spellings: &'static [&'static str],
}

/// Every known model.
pub fn models() -> &'static [GpuModel] {
    tables::GPU_MODELS
}

/// Words of a GPU name that say nothing of the model.
const NOISE: &[&str] = &["nvidia", "tesla", "geforce", "quadro"];

/// The model of a GPU name, case-insensitive, compared token by token (a
/// token is a run of letters and digits), so `A100` never matches `A10`.
/// Leading brand words (`NVIDIA`, `Tesla`, `GeForce`, `Quadro`) are skipped;
/// then a model matches when its spelling's tokens begin the name's tokens,
/// or equal the name's first tokens written together (`rtx4090`). The
/// longest match wins. Understands `nvidia-smi` names (`"NVIDIA H100 80GB
/// HBM3"`, `"Tesla V100-SXM2-16GB"`, `"NVIDIA A100-SXM4-40GB"`), GPU Feature
/// Discovery labels (`"NVIDIA-A100-SXM4-80GB"`, `"Tesla-T4"`,
/// `"A100-SXM4-40GB-MIG-1g.5gb"`) and short SCL spellings (`"nvidia-h100"`,
/// `"h100"`, `"a100-80gb"`). `None` for unknown models (`"Quadro RTX 6000"`,
/// a Turing card, is not the RTX 6000 Ada).
pub fn gpu_model(name: &str) -> Option<&'static GpuModel> {
    let lower = name.to_ascii_lowercase();
    let mut tokens = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .skip_while(|t| NOISE.contains(t));
    // No spelling has more than a few words: the tokens after the first
    // eight cannot take part in a match (and a long input costs nothing).
    let mut first = [""; 8];
    let mut n = 0;
    for t in tokens.by_ref().take(8) {
        first[n] = t;
        n += 1;
    }
    let tokens = &first[..n];
    let mut best: Option<(usize, &'static GpuModel)> = None;
    for s in spellings() {
        // The first tokens written together (`a100` for `a 100`): the
        // name's prefixes compared with the spelling joined, in one pass.
        let matches = tokens.starts_with(&s.words) || written_together(tokens, &s.joined);
        if matches && best.is_none_or(|(len, _)| s.joined.len() > len) {
            best = Some((s.joined.len(), s.model));
        }
    }
    best.map(|(_, m)| m)
}

/// Whether the first tokens of `tokens`, concatenated, equal `joined`.
fn written_together(tokens: &[&str], joined: &str) -> bool {
    let mut rest = joined;
    for t in tokens {
        match rest.strip_prefix(t) {
            Some("") => return true,
            Some(r) => rest = r,
            None => return false,
        }
    }
    false
}

/// One spelling of a model, split once: its words and the words joined.
struct Spelling {
    words: Vec<&'static str>,
    joined: String,
    model: &'static GpuModel,
}

/// Every spelling of every model, in table order, split on first use.
fn spellings() -> &'static [Spelling] {
    static SPELLINGS: std::sync::OnceLock<Vec<Spelling>> = std::sync::OnceLock::new();
    SPELLINGS.get_or_init(|| {
        models()
            .iter()
            .flat_map(|model| {
                model.spellings.iter().map(move |sp| Spelling {
                    words: sp.split(' ').collect(),
                    joined: sp.split(' ').collect(),
                    model,
                })
            })
            .collect()
    })
}
