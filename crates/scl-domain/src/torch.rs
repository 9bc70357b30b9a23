//! PyTorch wheels: torch ↔ torchvision ↔ torchaudio ↔ CUDA variant ↔ Python
//! ↔ wheel index, torch 1.2.0 to 2.11.0.
//!
//! Source: replicate/cog `pkg/config/torch_compatibility.json` (HEAD) and,
//! for torch ≤ 1.10 and the wider Python lists, `torch_compatibility_matrix.json`
//! at commit 99346972 (`data/source/cog_torch_cuda_matrix.csv`, as gathered
//! 2026-12). The table keeps both files' rows, so a release can appear twice
//! for one CUDA variant (once with the older, wider Python list).

use crate::tables;
use crate::version::Dotted;

/// Where pip finds a wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TorchIndex {
    /// The default index (PyPI): the wheel's CUDA is the one PyTorch
    /// published to PyPI for that release.
    PyPi,
    /// A find-links page (`pip install -f URL`), as written in the source:
    /// `https://download.pytorch.org/whl/torch_stable.html` (torch ≤ 1.10).
    FindLinks(&'static str),
    /// An extra index (`pip install --extra-index-url URL`), as written in
    /// the source (with or without a trailing `/`):
    /// `https://download.pytorch.org/whl/cu118`.
    ExtraIndex(&'static str),
}

/// One torch wheel variant: a row of the source table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TorchRow {
    /// The torch version without a local part: `"2.1.2"`.
    pub torch: &'static str,
    /// The local version as the source writes the torch requirement:
    /// `Some("cu118")`, `Some("cpu")`, or `None` when it is written without
    /// one (PyPI default wheels, and some rows whose variant comes from the
    /// index alone).
    pub local: Option<&'static str>,
    /// The matching torchvision, without a local part: `"0.16.2"`.
    pub torchvision: &'static str,
    /// The matching torchaudio; `None` for releases before torchaudio was
    /// listed with torch (torch ≤ 1.6).
    pub torchaudio: Option<&'static str>,
    /// The CUDA runtime of the wheel, major.minor (`"11.8"`); `None` for the
    /// CPU-only wheel.
    pub cuda: Option<&'static str>,
    /// The Python versions with wheels, ascending (`["3.8", …, "3.11"]`).
    pub pythons: &'static [&'static str],
    /// Where pip finds the wheel.
    pub index: TorchIndex,
}

/// Every row of the source table, in its order.
pub fn rows() -> &'static [TorchRow] {
    tables::TORCH_ROWS
}

/// One torch release with every variant of it put together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    /// The torch version: `"2.1.2"`.
    pub torch: &'static str,
    /// The matching torchvision: `"0.16.2"`.
    pub torchvision: &'static str,
    /// The matching torchaudio; `None` for torch ≤ 1.6.
    pub torchaudio: Option<&'static str>,
    /// Every CUDA variant (major.minor), numeric ascending, without the CPU
    /// variant: `["11.8", "12.1"]`.
    pub cudas: Vec<&'static str>,
    /// Every Python with a wheel of any variant, ascending.
    pub pythons: Vec<&'static str>,
}

impl Release {
    /// The newest CUDA variant, if the release has one.
    pub fn newest_cuda(&self) -> Option<&'static str> {
        self.cudas.last().copied()
    }

    /// The newest Python of the release.
    pub fn newest_python(&self) -> Option<&'static str> {
        self.pythons.last().copied()
    }
}

fn sort_numeric(v: &mut Vec<&'static str>) {
    v.sort_by_key(|s| Dotted::parse(s));
    v.dedup();
}

/// The release `torch` (`"2.1.2"`; a local part such as `"+cu118"` is
/// ignored). `None` if the table has no such release.
pub fn release(torch: &str) -> Option<Release> {
    let (torch, _) = crate::version::split_local(torch);
    let mut matching = rows().iter().filter(|r| r.torch == torch).peekable();
    let first = *matching.peek()?;
    let mut cudas = Vec::new();
    let mut pythons = Vec::new();
    for r in matching {
        cudas.extend(r.cuda);
        pythons.extend_from_slice(r.pythons);
    }
    sort_numeric(&mut cudas);
    sort_numeric(&mut pythons);
    Some(Release {
        torch: first.torch,
        torchvision: first.torchvision,
        torchaudio: first.torchaudio,
        cudas,
        pythons,
    })
}

/// Every release, torch version ascending (numerically).
pub fn releases() -> Vec<Release> {
    let mut names: Vec<&'static str> = rows().iter().map(|r| r.torch).collect();
    sort_numeric(&mut names);
    names.into_iter().filter_map(release).collect()
}

/// The torch release whose torchvision is `tv` (`"0.16.2"`; a local part is
/// ignored).
pub fn release_of_torchvision(tv: &str) -> Option<Release> {
    let (tv, _) = crate::version::split_local(tv);
    release(rows().iter().find(|r| r.torchvision == tv)?.torch)
}

/// The torch release whose torchaudio is `ta` (`"2.1.2"`, `"0.13.1"`; a
/// local part is ignored). torchaudio is listed from torch 1.7 on.
pub fn release_of_torchaudio(ta: &str) -> Option<Release> {
    let (ta, _) = crate::version::split_local(ta);
    release(rows().iter().find(|r| r.torchaudio == Some(ta))?.torch)
}

/// The PyTorch wheel index of a variant: `"cu118"` →
/// `"https://download.pytorch.org/whl/cu118"`, `"cpu"` →
/// `"https://download.pytorch.org/whl/cpu"`. Built from the pattern, not
/// looked up: variants older than cu102 had only the find-links page
/// (see [`TorchIndex::FindLinks`]).
pub fn index_url(cuda_variant: &str) -> String {
    format!("https://download.pytorch.org/whl/{cuda_variant}")
}

/// The wheel index pip needs for `torch==<torch>+<local>` (and the
/// torchvision/torchaudio of that variant), to give it as
/// `--extra-index-url`: the variant's index
/// (`https://download.pytorch.org/whl/cu118`) when the table lists it as
/// one, or when the table does not know the release (a newer one) and
/// `local` is `cpu` or `cuXYZ`; `None` when the table says the variant was
/// published only on a find-links page (torch ≤ 1.10: `torch_stable.html`)
/// or `local` is not a PyTorch variant. `local` is matched without case.
pub fn wheel_index(torch: &str, local: &str) -> Option<String> {
    let local = local.to_ascii_lowercase();
    let known = local == "cpu" || crate::version::cuda_of_local(&local).is_some();
    if !known {
        return None;
    }
    match rows()
        .iter()
        .find(|r| r.torch == torch && r.local == Some(local.as_str()))
    {
        Some(TorchRow {
            index: TorchIndex::ExtraIndex(_),
            ..
        }) => Some(index_url(&local)),
        Some(_) => None,
        None => Some(index_url(&local)),
    }
}

/// The find-links page of `torch==<torch>+<local>` when the table says that
/// variant was published only there (`pip install -f URL`; torch ≤ 1.10:
/// `https://download.pytorch.org/whl/torch_stable.html`); `None` when it is
/// on an index or the table does not know it. `local` is matched without
/// case.
pub fn find_links(torch: &str, local: &str) -> Option<&'static str> {
    let local = local.to_ascii_lowercase();
    rows()
        .iter()
        .filter(|r| r.torch == torch && r.local == Some(local.as_str()))
        .find_map(|r| match r.index {
            TorchIndex::FindLinks(url) => Some(url),
            _ => None,
        })
}

/// Whether torchaudio `ta` (`"0.9.0"`, `"2.1.2"`) was published with CUDA
/// variants (`+cu113`). torchaudio's first CUDA builds were 0.10.0 (with
/// torch 1.10); 0.9.x and older are one CPU wheel per Python, without a
/// local version (the file names of
/// https://download.pytorch.org/whl/torch_stable.html, gathered 2026-12).
/// `false` for a version that does not parse.
pub fn torchaudio_has_cuda_variants(ta: &str) -> bool {
    let (ta, _) = crate::version::split_local(ta);
    Dotted::parse(ta).is_some_and(|v| v >= Dotted::parse("0.10").expect("a version"))
}

/// The wheel variant of a CUDA version: `"11.8"` → `"cu118"`, `"12.1.1"` →
/// `"cu121"`, `"9.2"` → `"cu92"`, `"cpu"` → `"cpu"`. Anything else that is
/// not a version gives `"cu"` followed by its text without dots.
pub fn variant(cuda: &str) -> String {
    if cuda == "cpu" {
        return "cpu".to_string();
    }
    match Dotted::parse(cuda) {
        Some(v) => format!("cu{}{}", v.major(), v.minor()),
        None => format!("cu{}", cuda.replace('.', "")),
    }
}
