//! The generator of `crates/scl-domain/src/tables.rs` and
//! `stdlib/compat.env.scl` from the vendor tables in
//! `crates/scl-domain/data/source/*.csv`.
//!
//! Not a module of the `scl_domain` library: `cargo run -p xtask --
//! gen-domain` and the test `tests/generated.rs` include this file with
//! `#[path]`, so both run the same code without the library reading CSV at
//! run time. [`generate`] is a pure function of the CSV bytes; the test
//! checks that the committed files are what it returns.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The two generated files, as text.
pub struct Generated {
    /// `crates/scl-domain/src/tables.rs`.
    pub tables_rs: String,
    /// `stdlib/compat.env.scl`.
    pub compat_scl: String,
}

/// When the facts were gathered.
const GATHERED: &str = "as gathered 2026-12";

/// One CSV file with its header row and the reference of its facts.
const SOURCES: &[(&str, &str)] = &[
    (
        "cuda_min_driver_linux.csv",
        "NVIDIA CUDA Toolkit release notes 13.4 Update 1, table \"CUDA Toolkit and Corresponding Driver Versions\" (12.9 and earlier; the 13.0 rows are secondary quotes of the 13.0 release notes; the 13.x row is the table \"Corresponding Driver Branch\")",
    ),
    (
        "cuda_minor_version_compat.csv",
        "NVIDIA CUDA Toolkit release notes 13.4 Update 1, section on minor version compatibility",
    ),
    (
        "cog_torch_cuda_matrix.csv",
        "replicate/cog pkg/config/torch_compatibility.json (HEAD) and pkg/config/torch_compatibility_matrix.json at commit 99346972 (torch <= 1.10 and the wider Python lists)",
    ),
    (
        "cog_cuda_base_images.csv",
        "replicate/cog pkg/config/cuda_compatibility.json / cuda_base_images.json (the nvidia/cuda devel tags that exist)",
    ),
    (
        "cog_gpu_compute_floor.csv",
        "replicate/cog pkg/doctor/gpu_compatibility.go (gpuFloors)",
    ),
    (
        "cog_tf_matrix.csv",
        "replicate/cog pkg/config/tf_compatibility.json",
    ),
    (
        "gpu_models.csv",
        "NVIDIA \"CUDA GPUs - Compute Capability\" (developer.nvidia.com/cuda-gpus); spellings from nvidia-smi names and GPU Feature Discovery nvidia.com/gpu.product labels",
    ),
    (
        "python_syslibs.csv",
        "each package's own install documentation (README / PyPI page), named in its row",
    ),
];

/// Reads `data/source` and returns both generated files, or a message naming
/// the file and row that could not be read.
pub fn generate(source_dir: &Path) -> Result<Generated, String> {
    let read = |name: &str| -> Result<Vec<Vec<String>>, String> {
        let path = source_dir.join(name);
        let mut reader =
            csv::Reader::from_path(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut rows = Vec::new();
        for (i, rec) in reader.records().enumerate() {
            let rec = rec.map_err(|e| format!("{}: row {}: {e}", path.display(), i + 2))?;
            rows.push(rec.iter().map(|f| f.trim().to_string()).collect());
        }
        Ok(rows)
    };
    let drivers = read("cuda_min_driver_linux.csv")?;
    let families = read("cuda_minor_version_compat.csv")?;
    let torch = read("cog_torch_cuda_matrix.csv")?;
    let images = read("cog_cuda_base_images.csv")?;
    let floors = read("cog_gpu_compute_floor.csv")?;
    let tf = read("cog_tf_matrix.csv")?;
    let gpus = read("gpu_models.csv")?;
    let syslibs = read("python_syslibs.csv")?;

    let torch = torch_rows(&torch)?;
    let images = image_rows(&images)?;
    let mut t = String::new();
    header_rs(&mut t);
    driver_tables(&mut t, &drivers)?;
    family_table(&mut t, &families)?;
    torch_table(&mut t, &torch);
    image_table(&mut t, &images);
    floor_table(&mut t, &floors)?;
    gpu_table(&mut t, &gpus)?;
    tf_table(&mut t, &tf)?;
    syslib_table(&mut t, &syslibs)?;

    let compat_scl = compat_scl(&torch, &images);
    Ok(Generated {
        tables_rs: t,
        compat_scl,
    })
}

// ---------------------------------------------------------------- helpers

/// Numeric key of a dotted version (`"12.10"` > `"12.9"`); junk sorts first.
fn key(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

fn is_dotted(v: &str) -> bool {
    !v.is_empty()
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn field<'a>(row: &'a [String], i: usize, file: &str) -> Result<&'a str, String> {
    row.get(i)
        .map(String::as_str)
        .ok_or_else(|| format!("{file}: row {row:?} has no column {i}"))
}

fn dotted<'a>(row: &'a [String], i: usize, file: &str) -> Result<&'a str, String> {
    let v = field(row, i, file)?;
    if is_dotted(v) {
        Ok(v)
    } else {
        Err(format!(
            "{file}: {v:?} in row {row:?} is not a dotted version"
        ))
    }
}

fn opt(v: Option<&str>) -> String {
    match v {
        Some(s) => format!("Some({s:?})"),
        None => "None".to_string(),
    }
}

fn strs(list: &[&str]) -> String {
    let items: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("&[{}]", items.join(", "))
}

fn pythons(s: &str, file: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = s.split_whitespace().map(str::to_string).collect();
    if list.is_empty() || !list.iter().all(|p| is_dotted(p)) {
        return Err(format!("{file}: bad Python list {s:?}"));
    }
    Ok(list)
}

fn header_rs(t: &mut String) {
    t.push_str(
        "//! GENERATED by `cargo run -p xtask -- gen-domain` from `data/source/*.csv`\n\
         //! (the generator is `src/gen.rs`); do not edit by hand.\n\
         //!\n",
    );
    let _ = writeln!(t, "//! Sources of the facts ({GATHERED}):");
    for (file, source) in SOURCES {
        let _ = writeln!(t, "//! - `{file}`: {source}.");
    }
    t.push_str(
        "\nuse crate::cuda::{Branch, CudaImage, DriverRow, Family};\n\
         use crate::gpu::{Floor, GpuModel};\n\
         use crate::syslibs::SysLibs;\n\
         use crate::tf::TfRow;\n\
         use crate::torch::{TorchIndex, TorchRow};\n",
    );
}

// ---------------------------------------------------------------- CUDA drivers

/// `"12.9 Update 1"` → `"12.9.1"`, `"11.4.0 GA"` → `"11.4.0"`,
/// `"12.9 GA"` → `"12.9.0"`, `"11.2.2 Update 2"` → `"11.2.2"`,
/// `"10.2.89"` → `"10.2.89"`, `"10.1 (10.1.105+)"` → `"10.1"`.
fn toolkit_of_label(label: &str) -> Result<String, String> {
    let (version, rest) = match label.split_once(' ') {
        Some((v, r)) => (v, r.trim()),
        None => (label, ""),
    };
    if !is_dotted(version) {
        return Err(format!("cuda_min_driver_linux.csv: label {label:?}"));
    }
    let parts = version.split('.').count();
    if let Some(n) = rest.strip_prefix("Update ") {
        if !n.bytes().all(|b| b.is_ascii_digit()) || n.is_empty() {
            return Err(format!("cuda_min_driver_linux.csv: label {label:?}"));
        }
        return Ok(if parts == 2 {
            format!("{version}.{n}")
        } else {
            version.to_string()
        });
    }
    match rest {
        "GA" | "GA2" | "RC" if parts == 2 => Ok(format!("{version}.0")),
        "GA" | "GA2" | "RC" | "" => Ok(version.to_string()),
        r if r.starts_with('(') => Ok(version.to_string()),
        _ => Err(format!("cuda_min_driver_linux.csv: label {label:?}")),
    }
}

fn driver_tables(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "cuda_min_driver_linux.csv";
    let mut releases = String::new();
    let mut branches = String::new();
    for row in rows {
        let label = field(row, 0, F)?;
        let linux = field(row, 1, F)?;
        if label.contains("(branch)") {
            // "R580 (13.0) R590 (13.1) …": the driver branch of each 13.x.
            let words: Vec<&str> = linux.split_whitespace().collect();
            if !words.len().is_multiple_of(2) {
                return Err(format!("{F}: branch row {linux:?}"));
            }
            for pair in words.chunks(2) {
                let cuda = pair[1].trim_start_matches('(').trim_end_matches(')');
                if !pair[0].starts_with('R') || !is_dotted(cuda) {
                    return Err(format!("{F}: branch row {linux:?}"));
                }
                let _ = writeln!(
                    branches,
                    "    Branch {{ cuda: {cuda:?}, branch: {:?} }},",
                    pair[0]
                );
            }
            continue;
        }
        let toolkit = toolkit_of_label(label)?;
        let windows = field(row, 2, F)?;
        if !is_dotted(linux) || !(windows.is_empty() || is_dotted(windows)) {
            return Err(format!("{F}: row {row:?}"));
        }
        let secondary = field(row, 3, F)?.contains("secondary");
        let _ = writeln!(
            releases,
            "    DriverRow {{ toolkit: {toolkit:?}, label: {label:?}, min_linux: {linux:?}, min_windows: {}, secondary: {secondary} }},",
            opt((!windows.is_empty()).then_some(windows)),
        );
    }
    let _ = write!(
        t,
        "\n/// The minimum driver of each CUDA toolkit release, in the order of\n\
         /// `cuda_min_driver_linux.csv` (13.0 oldest first, then 12.9 down to 7.0).\n\
         pub static DRIVER_ROWS: &[DriverRow] = &[\n{releases}];\n\
         \n/// The driver branch of each CUDA 13.x minor release.\n\
         pub static BRANCHES: &[Branch] = &[\n{branches}];\n"
    );
    Ok(())
}

/// `">=525 (12.0 GA: 525.60.13)"` → (floor "525", Linux "525.60.13", no
/// Windows); `">=450 (450.80.02 Linux / 452.39 Windows …)"` → ("450",
/// "450.80.02", Some("452.39")); `">=580"` → ("580", "580", None).
fn family_min(s: &str) -> Result<(String, String, Option<String>), String> {
    let bad = || format!("cuda_minor_version_compat.csv: min_driver {s:?}");
    let rest = s.strip_prefix(">=").ok_or_else(bad)?;
    let floor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if floor.is_empty() {
        return Err(bad());
    }
    let mut linux = None;
    let mut windows = None;
    if let Some(open) = rest.find('(') {
        let inner = rest[open + 1..].trim_end_matches(')');
        let words: Vec<&str> = inner.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let w = w.trim_end_matches(|c: char| !c.is_ascii_digit());
            // A driver version: dotted, with a branch of three digits or
            // more (`525.60.13`, not the toolkit `12.0`).
            let branch = w.split('.').next().unwrap_or("");
            if !is_dotted(w) || !w.contains('.') || branch.len() < 3 {
                continue;
            }
            if words.get(i + 1) == Some(&"Windows") {
                windows = Some(w.to_string());
            } else if linux.is_none() {
                linux = Some(w.to_string());
            }
        }
    }
    let linux = linux.unwrap_or_else(|| floor.clone());
    Ok((floor, linux, windows))
}

fn family_table(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "cuda_minor_version_compat.csv";
    t.push_str(
        "\n/// Minor-version compatibility per CUDA major, as in\n\
         /// `cuda_minor_version_compat.csv`.\n\
         pub static FAMILIES: &[Family] = &[\n",
    );
    for row in rows {
        let family = field(row, 0, F)?;
        let major: u32 = family
            .strip_suffix(".x")
            .and_then(|m| m.parse().ok())
            .ok_or_else(|| format!("{F}: family {family:?}"))?;
        let (floor, linux, windows) = family_min(field(row, 1, F)?)?;
        let max = field(row, 2, F)?;
        let max = match max.strip_prefix('<') {
            Some(m) if is_dotted(m) => Some(m),
            None if max == "N/A" => None,
            _ => return Err(format!("{F}: max_driver_exclusive {max:?}")),
        };
        let note = field(row, 3, F)?;
        let _ = writeln!(
            t,
            "    Family {{ family: {family:?}, major: {major}, floor: {floor:?}, min_linux: {linux:?}, min_windows: {}, max_exclusive: {}, note: {note:?} }},",
            opt(windows.as_deref()),
            opt(max),
        );
    }
    t.push_str("];\n");
    Ok(())
}

// ---------------------------------------------------------------- torch

/// One row of `cog_torch_cuda_matrix.csv`, normalized.
struct Torch {
    torch: String,
    local: Option<String>,
    torchvision: String,
    torchaudio: Option<String>,
    cuda: Option<String>,
    pythons: Vec<String>,
    /// `PyPi`, `FindLinks(url)` or `ExtraIndex(url)`, as Rust.
    index: String,
    /// The extra index URL without a trailing slash, for `torch_index`.
    extra: Option<String>,
}

fn torch_rows(rows: &[Vec<String>]) -> Result<Vec<Torch>, String> {
    const F: &str = "cog_torch_cuda_matrix.csv";
    let mut out = Vec::new();
    for row in rows {
        let (torch, local) = match field(row, 0, F)?.split_once('+') {
            Some((t, l)) => (t.to_string(), Some(l.to_string())),
            None => (field(row, 0, F)?.to_string(), None),
        };
        let tv = field(row, 1, F)?;
        let torchvision = tv.split('+').next().unwrap_or(tv).to_string();
        let ta = field(row, 2, F)?;
        let cuda = field(row, 3, F)?;
        let cuda = if cuda == "cpu" {
            None
        } else {
            Some(dotted(row, 3, F)?.to_string())
        };
        let url = field(row, 5, F)?;
        let (index, extra) = if url == "pypi-default" {
            ("TorchIndex::PyPi".to_string(), None)
        } else if url.ends_with(".html") {
            (format!("TorchIndex::FindLinks({url:?})"), None)
        } else if url.starts_with("https://") {
            (
                format!("TorchIndex::ExtraIndex({url:?})"),
                Some(url.trim_end_matches('/').to_string()),
            )
        } else {
            return Err(format!("{F}: index {url:?}"));
        };
        if !is_dotted(&torch) || !is_dotted(&torchvision) || !(ta.is_empty() || is_dotted(ta)) {
            return Err(format!("{F}: row {row:?}"));
        }
        out.push(Torch {
            torch,
            local,
            torchvision,
            torchaudio: (!ta.is_empty()).then(|| ta.to_string()),
            cuda,
            pythons: pythons(field(row, 4, F)?, F)?,
            index,
            extra,
        });
    }
    Ok(out)
}

fn torch_table(t: &mut String, rows: &[Torch]) {
    t.push_str(
        "\n/// The torch wheels, one row per row of `cog_torch_cuda_matrix.csv`, in\n\
         /// its order.\n\
         pub static TORCH_ROWS: &[TorchRow] = &[\n",
    );
    for r in rows {
        let py: Vec<&str> = r.pythons.iter().map(String::as_str).collect();
        let _ = writeln!(
            t,
            "    TorchRow {{ torch: {:?}, local: {}, torchvision: {:?}, torchaudio: {}, cuda: {}, pythons: {}, index: {} }},",
            r.torch,
            opt(r.local.as_deref()),
            r.torchvision,
            opt(r.torchaudio.as_deref()),
            opt(r.cuda.as_deref()),
            strs(&py),
            r.index,
        );
    }
    t.push_str("];\n");
}

// ---------------------------------------------------------------- images

struct Image {
    tag: String,
    cuda: String,
    cudnn: String,
    ubuntu: String,
}

fn image_rows(rows: &[Vec<String>]) -> Result<Vec<Image>, String> {
    const F: &str = "cog_cuda_base_images.csv";
    rows.iter()
        .map(|row| {
            Ok(Image {
                tag: field(row, 0, F)?.to_string(),
                cuda: dotted(row, 1, F)?.to_string(),
                cudnn: dotted(row, 2, F)?.to_string(),
                ubuntu: dotted(row, 3, F)?.to_string(),
            })
        })
        .collect()
}

fn image_table(t: &mut String, rows: &[Image]) {
    t.push_str(
        "\n/// The `nvidia/cuda` cuDNN devel tags that exist, as in\n\
         /// `cog_cuda_base_images.csv`.\n\
         pub static CUDA_IMAGES: &[CudaImage] = &[\n",
    );
    for r in rows {
        let _ = writeln!(
            t,
            "    CudaImage {{ tag: {:?}, cuda: {:?}, cudnn: {:?}, ubuntu: {:?} }},",
            r.tag, r.cuda, r.cudnn, r.ubuntu
        );
    }
    t.push_str("];\n");
}

// ---------------------------------------------------------------- GPUs

fn floor_table(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "cog_gpu_compute_floor.csv";
    t.push_str(
        "\n/// The oldest torch and CUDA with kernels for a compute capability, as in\n\
         /// `cog_gpu_compute_floor.csv`.\n\
         pub static FLOORS: &[Floor] = &[\n",
    );
    for row in rows {
        let _ = writeln!(
            t,
            "    Floor {{ compute_capability: {:?}, arch: {:?}, min_torch: {:?}, min_cuda: {:?} }},",
            dotted(row, 0, F)?,
            field(row, 1, F)?,
            dotted(row, 2, F)?,
            dotted(row, 3, F)?,
        );
    }
    t.push_str("];\n");
    Ok(())
}

fn gpu_table(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "gpu_models.csv";
    t.push_str(
        "\n/// GPU models and their compute capability, as in `gpu_models.csv`.\n\
         pub static GPU_MODELS: &[GpuModel] = &[\n",
    );
    for row in rows {
        let spellings: Vec<&str> = field(row, 3, F)?.split('|').map(str::trim).collect();
        if spellings.iter().any(|s| s.is_empty()) {
            return Err(format!("{F}: spellings of {row:?}"));
        }
        let _ = writeln!(
            t,
            "    GpuModel {{ name: {:?}, compute_capability: {:?}, arch: {:?}, spellings: {} }},",
            field(row, 0, F)?,
            dotted(row, 1, F)?,
            field(row, 2, F)?,
            strs(&spellings),
        );
    }
    t.push_str("];\n");
    Ok(())
}

// ---------------------------------------------------------------- TensorFlow

fn tf_table(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "cog_tf_matrix.csv";
    t.push_str(
        "\n/// TensorFlow releases and their CUDA, cuDNN and Pythons, as in\n\
         /// `cog_tf_matrix.csv`.\n\
         pub static TF_ROWS: &[TfRow] = &[\n",
    );
    for row in rows {
        let py = pythons(field(row, 3, F)?, F)?;
        let py: Vec<&str> = py.iter().map(String::as_str).collect();
        let _ = writeln!(
            t,
            "    TfRow {{ tf: {:?}, cuda: {:?}, cudnn: {:?}, pythons: {}, package: {:?} }},",
            dotted(row, 0, F)?,
            dotted(row, 1, F)?,
            dotted(row, 2, F)?,
            strs(&py),
            field(row, 4, F)?,
        );
    }
    t.push_str("];\n");
    Ok(())
}

// ---------------------------------------------------------------- system libraries

fn syslib_table(t: &mut String, rows: &[Vec<String>]) -> Result<(), String> {
    const F: &str = "python_syslibs.csv";
    t.push_str(
        "\n/// PyPI packages that need Debian/Ubuntu packages, as in\n\
         /// `python_syslibs.csv`.\n\
         pub static SYSLIBS: &[SysLibs] = &[\n",
    );
    for row in rows {
        let apt: Vec<&str> = field(row, 1, F)?.split_whitespace().collect();
        if apt.is_empty() {
            return Err(format!("{F}: no apt packages in {row:?}"));
        }
        let _ = writeln!(
            t,
            "    SysLibs {{ package: {:?}, apt: {}, why: {:?}, source: {:?} }},",
            field(row, 0, F)?,
            strs(&apt),
            field(row, 2, F)?,
            field(row, 3, F)?,
        );
    }
    t.push_str("];\n");
    Ok(())
}

// ---------------------------------------------------------------- std/compat

fn scl_list(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// The width `sclc fmt` fits lines to.
const SCL_WIDTH: usize = 100;

/// One entry `KEY = { ITEMS }` of a top-level map, laid out as `sclc fmt`
/// does: on one line if it fits in [`SCL_WIDTH`] columns, else one item per
/// line, each with a trailing comma.
fn scl_entry(s: &mut String, key: &str, items: &[String]) {
    let flat = format!("  {key} = {{ {} }},", items.join(", "));
    if flat.chars().count() <= SCL_WIDTH {
        let _ = writeln!(s, "{flat}");
        return;
    }
    let _ = writeln!(s, "  {key} = {{");
    for item in items {
        let _ = writeln!(s, "    {item},");
    }
    s.push_str("  },\n");
}

fn compat_scl(torch: &[Torch], images: &[Image]) -> String {
    let mut s = String::new();
    s.push_str(
        "// std/compat — compatibility tables for the GPU templates of the standard\n\
         // library (torch releases, nvidia/cuda devel tags, torch wheel indexes).\n\
         //\n\
         //   import \"std/compat\" as compat\n\
         //   let tv = compat.torch[\"2.1.2\"].torchvision   // \"0.16.2\"\n\
         //\n\
         // GENERATED by `cargo run -p xtask -- gen-domain` from\n\
         // crates/scl-domain/data/source/*.csv; do not edit by hand.\n",
    );
    let _ = writeln!(s, "// Sources ({GATHERED}):");
    for (file, source) in SOURCES.iter().take(4) {
        let _ = writeln!(s, "// - {file}: {source}.");
    }

    // Per torch release, in numeric order.
    let mut releases: BTreeMap<Vec<u32>, Vec<&Torch>> = BTreeMap::new();
    for r in torch {
        releases.entry(key(&r.torch)).or_default().push(r);
    }
    s.push_str(
        "\n/// Per torch release (the version without a local part, `\"2.1.2\"`): the\n\
         /// matching `torchvision` and `torchaudio` (`\"\"` for releases before\n\
         /// torchaudio was versioned with torch, 1.6 and older), `cudas` (every\n\
         /// CUDA variant of its wheels, numeric ascending), `pythons` (every Python\n\
         /// of its wheels, ascending), `cuda` (the newest CUDA variant) and\n\
         /// `python` (the newest Python). `torch[\"2.1.2\"].cudas` is\n\
         /// `[\"11.8\", \"12.1\"]`; an unknown release is a compile error that lists\n\
         /// the releases that exist. `index_cudas` are the CUDA variants whose\n\
         /// wheels are on a package index (`https://download.pytorch.org/whl/cuXYZ`;\n\
         /// torch 1.10 and older published theirs only on the find-links page\n\
         /// `torch_stable.html`), and `torchaudio_cuda` says whether torchaudio\n\
         /// has CUDA variants (`+cu118`) at all (from torchaudio 0.10 on).\n\
         ///\n\
         /// Source: replicate/cog `pkg/config/torch_compatibility.json` and, for\n\
         /// torch <= 1.10 and the wider Python lists, its commit 99346972\n",
    );
    let _ = writeln!(s, "/// ({GATHERED}).");
    s.push_str("let torch = {\n");
    for rows in releases.values() {
        let first = rows[0];
        let mut cudas: Vec<&str> = rows.iter().filter_map(|r| r.cuda.as_deref()).collect();
        cudas.sort_by_key(|c| key(c));
        cudas.dedup();
        let mut index_cudas: Vec<&str> = rows
            .iter()
            .filter(|r| r.extra.is_some())
            .filter_map(|r| r.cuda.as_deref())
            .collect();
        index_cudas.sort_by_key(|c| key(c));
        index_cudas.dedup();
        // torchaudio's first CUDA builds were 0.10.0 (the same rule as
        // `torch::torchaudio_has_cuda_variants`; this file is also compiled
        // into xtask, without the crate).
        let torchaudio_cuda = first
            .torchaudio
            .as_deref()
            .is_some_and(|ta| key(ta) >= vec![0, 10]);
        let mut pys: Vec<&str> = rows
            .iter()
            .flat_map(|r| r.pythons.iter().map(String::as_str))
            .collect();
        pys.sort_by_key(|p| key(p));
        pys.dedup();
        let fields = [
            format!("torchvision = {:?}", first.torchvision),
            format!(
                "torchaudio = {:?}",
                first.torchaudio.as_deref().unwrap_or("")
            ),
            format!("torchaudio_cuda = {torchaudio_cuda}"),
            format!("cudas = {}", scl_list(&cudas)),
            format!("index_cudas = {}", scl_list(&index_cudas)),
            format!("pythons = {}", scl_list(&pys)),
            format!("cuda = {:?}", cudas.last().copied().unwrap_or("")),
            format!("python = {:?}", pys.last().copied().unwrap_or("")),
        ];
        scl_entry(&mut s, &format!("{:?}", first.torch), &fields);
    }
    s.push_str("}\n");

    // nvidia/cuda devel tags: per major.minor and Ubuntu, the highest patch.
    let mut tags: BTreeMap<Vec<u32>, BTreeMap<Vec<u32>, &Image>> = BTreeMap::new();
    for img in images {
        let k = key(&img.cuda);
        let mm = k[..2.min(k.len())].to_vec();
        let slot = tags.entry(mm).or_default();
        let ubuntu = key(&img.ubuntu);
        match slot.get(&ubuntu) {
            Some(prev) if key(&prev.cuda) >= k => {}
            _ => {
                slot.insert(ubuntu, img);
            }
        }
    }
    s.push_str(
        "\n/// The `nvidia/cuda` cuDNN devel tag per CUDA version (major.minor) and\n\
         /// Ubuntu release: the highest patch release that has a tag for that\n\
         /// Ubuntu. `cuda_devel[\"12.8\"][\"ubuntu22.04\"]` is\n\
         /// `\"12.8.1-cudnn-devel-ubuntu22.04\"`, for the image\n\
         /// `nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04`. The cuDNN part of the tag\n\
         /// is `cudnn8` up to 12.2.2, `cudnn9` for 12.3.2 and plain `cudnn` (cuDNN 9)\n\
         /// from 12.4.1 on.\n\
         ///\n\
         /// Source: replicate/cog `pkg/config/cuda_compatibility.json`\n",
    );
    let _ = writeln!(s, "/// ({GATHERED}).");
    s.push_str("let cuda_devel = {\n");
    for (mm, by_ubuntu) in &tags {
        let entries: Vec<String> = by_ubuntu
            .values()
            .map(|img| format!("\"ubuntu{}\" = {:?}", img.ubuntu, img.tag))
            .collect();
        let name = format!("\"{}.{}\"", mm[0], mm.get(1).copied().unwrap_or(0));
        scl_entry(&mut s, &name, &entries);
    }
    s.push_str("}\n");

    // Torch wheel indexes, per variant, in numeric order (cpu last).
    let mut indexes: BTreeMap<(u32, Vec<u32>), (String, String)> = BTreeMap::new();
    for r in torch {
        let Some(url) = &r.extra else { continue };
        let variant = url.rsplit('/').next().unwrap_or("").to_string();
        let k = match &r.cuda {
            Some(c) => (0, key(c)),
            None => (1, Vec::new()),
        };
        indexes.entry(k).or_insert((variant, url.clone()));
    }
    s.push_str(
        "\n/// The PyTorch wheel index of each CUDA variant (`\"cu121\"`) and of\n\
         /// `\"cpu\"`, for `pip install --extra-index-url`. Only variants published\n\
         /// as an index are listed; older variants (cu92 to cu111) had only\n\
         /// the find-links page `https://download.pytorch.org/whl/torch_stable.html`.\n\
         ///\n\
         /// Source: the index URLs of replicate/cog `pkg/config/torch_compatibility.json`\n",
    );
    let _ = writeln!(s, "/// ({GATHERED}).");
    s.push_str("let torch_index = {\n");
    for (variant, url) in indexes.values() {
        let _ = writeln!(s, "  {variant:?} = {url:?},");
    }
    s.push_str("}\n");
    s
}
