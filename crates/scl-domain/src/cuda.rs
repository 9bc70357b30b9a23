//! CUDA toolkit ↔ NVIDIA driver, and the `nvidia/cuda` devel images.
//!
//! Sources (as gathered 2026-12):
//! - minimum driver per toolkit release: NVIDIA CUDA Toolkit release notes
//!   13.4 Update 1, table "CUDA Toolkit and Corresponding Driver Versions"
//!   (12.9 and earlier); the 13.0 rows are secondary quotes of the 13.0
//!   release notes ([`DriverRow::secondary`]); the 13.x driver branches from
//!   the table "Corresponding Driver Branch" (`data/source/cuda_min_driver_linux.csv`);
//! - minor-version compatibility: the same release notes, section "Minor
//!   Version Compatibility" (`cuda_minor_version_compat.csv`): within one CUDA
//!   major an application runs on any driver at or above the family floor
//!   (13.x ≥ 580, 12.x ≥ 525.60.13, 11.x ≥ 450.80.02); with backward
//!   compatibility, on every later driver too;
//! - `nvidia/cuda` devel tags: replicate/cog `pkg/config/cuda_compatibility.json`
//!   (`cog_cuda_base_images.csv`).
//!
//! Driver versions are Linux x86-64 driver versions (`"525.60.13"`),
//! compared numerically.

use crate::tables;
use crate::version::Dotted;

/// The minimum driver of one CUDA toolkit release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverRow {
    /// The toolkit version, normalized: `"12.9 Update 1"` → `"12.9.1"`,
    /// `"12.9 GA"` → `"12.9.0"`, `"11.4.0 GA"` → `"11.4.0"`, `"11.2.2 Update
    /// 2"` → `"11.2.2"`; `"10.1 (10.1.105+)"` → `"10.1"` (every 10.1 release).
    pub toolkit: &'static str,
    /// The release as the source names it: `"12.9 Update 1"`.
    pub label: &'static str,
    /// The minimum Linux x86-64 driver: `"575.57.08"`.
    pub min_linux: &'static str,
    /// The minimum Windows driver, where the source gives one.
    pub min_windows: Option<&'static str>,
    /// The row comes from a secondary quote, not from NVIDIA's table (13.0).
    pub secondary: bool,
}

/// Every toolkit release row, in the source's order (13.0 GA, Update 1,
/// Update 2, then 12.9 Update 1 down to 7.0).
pub fn driver_rows() -> &'static [DriverRow] {
    tables::DRIVER_ROWS
}

/// The driver branch of a CUDA 13.x minor release (R580 for 13.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Branch {
    /// The toolkit, major.minor: `"13.1"`.
    pub cuda: &'static str,
    /// The driver branch: `"R590"`. New features of that toolkit need this
    /// branch; by minor-version compatibility its runtime still runs on any
    /// driver ≥ 580.
    pub branch: &'static str,
}

/// The driver branches of the 13.x toolkits (13.0 … 13.4).
pub fn branches() -> &'static [Branch] {
    tables::BRANCHES
}

/// Minor-version compatibility of one CUDA major version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family {
    /// `"12.x"`.
    pub family: &'static str,
    /// `12`.
    pub major: u32,
    /// The driver branch floor as the source writes it: `"525"`.
    pub floor: &'static str,
    /// The exact minimum Linux driver for the whole family: `"525.60.13"`
    /// (the family's GA driver); `"580"` for 13.x, where the source gives
    /// only the branch.
    pub min_linux: &'static str,
    /// The minimum Windows driver for the whole family, where given (11.x:
    /// `"452.39"`).
    pub min_windows: Option<&'static str>,
    /// The first driver branch of the next family (`"580"` for 12.x), from
    /// which backward compatibility takes over; `None` for the newest.
    pub max_exclusive: Option<&'static str>,
    /// The source's note (may be empty).
    pub note: &'static str,
}

/// The families with minor-version compatibility: 13.x, 12.x, 11.x.
pub fn families() -> &'static [Family] {
    tables::FAMILIES
}

/// The family of a CUDA version (`"12.1"` → 12.x); `None` before CUDA 11,
/// which had no minor-version compatibility, and for junk.
pub fn family_of(cuda: &str) -> Option<&'static Family> {
    let v = Dotted::parse(cuda)?;
    families().iter().find(|f| f.major == v.major())
}

/// What driver a CUDA runtime needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverNeed {
    /// The CUDA version asked about, as parsed (`"12.1"`).
    pub cuda: String,
    /// The minimum driver of that exact toolkit release, which its own
    /// installer requires and its new features need: for `"12.1"` (no
    /// patch) the GA release of 12.1; for `"12.3.2"` the newest release row
    /// of 12.3 not newer than 12.3.2. `None` when the table has no release of
    /// that major.minor (13.1 and later: see [`branches`]).
    pub release_min: Option<&'static str>,
    /// The floor: a driver at or above it runs the runtime. From CUDA 11 on,
    /// the minor-version compatibility floor of the major (13.x `"580"`, 12.x
    /// `"525.60.13"`, 11.x `"450.80.02"`); before 11 (no minor-version
    /// compatibility) the release's own minimum (10.2 `"440.33"`).
    pub family_min: &'static str,
    /// `"12.x"`; before CUDA 11 the release row's label (`"10.2.89"`).
    pub family: &'static str,
    /// Whether minor-version compatibility applies (CUDA 11 and later).
    pub minor_compat: bool,
}

impl DriverNeed {
    /// The lowest driver that runs this runtime: the family floor
    /// ([`DriverNeed::family_min`]), or the release's own minimum when that
    /// is lower. CUDA 11.0 shipped before the 11.x floor (450.80.02): 11.0.3
    /// runs on its own 450.51.06 (NVIDIA CUDA Toolkit release notes, Table 3).
    pub fn floor(&self) -> &'static str {
        match self.release_min {
            Some(r) if matches!((Dotted::parse(r), Dotted::parse(self.family_min)), (Some(a), Some(b)) if a < b) => {
                r
            }
            _ => self.family_min,
        }
    }
}

/// What driver CUDA `cuda` (`"12.1"`, `"12.1.1"`) needs. `None` for junk and
/// for a CUDA before 11 that the release table does not list.
pub fn driver_need(cuda: &str) -> Option<DriverNeed> {
    let v = Dotted::parse(cuda)?;
    let same: Vec<(&DriverRow, Dotted)> = driver_rows()
        .iter()
        .filter_map(|r| Some((r, Dotted::parse(r.toolkit)?)))
        .filter(|(_, t)| t.same_minor(&v))
        .collect();
    let release = if v.parts().len() < 2 {
        None
    } else if v.patch().is_some() {
        same.iter()
            .filter(|(_, t)| *t <= v)
            .max_by(|a, b| a.1.cmp(&b.1))
            .map(|(r, _)| *r)
    } else {
        // The GA release; else the oldest release that is not an RC.
        same.iter()
            .find(|(r, _)| r.label.ends_with(" GA"))
            .or_else(|| {
                same.iter()
                    .filter(|(r, _)| !r.label.ends_with(" RC"))
                    .min_by(|a, b| a.1.cmp(&b.1))
            })
            .map(|(r, _)| *r)
    };
    match family_of(cuda) {
        Some(family) => Some(DriverNeed {
            cuda: v.to_string(),
            release_min: release.map(|r| r.min_linux),
            family_min: family.min_linux,
            family: family.family,
            minor_compat: true,
        }),
        // Before CUDA 11 every release needs its own driver (NVIDIA CUDA
        // Toolkit release notes, Table 3: "CUDA Toolkit and Corresponding
        // Driver Versions").
        None => release.map(|r| DriverNeed {
            cuda: v.to_string(),
            release_min: Some(r.min_linux),
            family_min: r.min_linux,
            family: r.label,
            minor_compat: false,
        }),
    }
}

/// Whether a host with Linux driver `driver` (`"535.104.05"`) runs a CUDA
/// `cuda` runtime (`"12.2"`): driver ≥ [`DriverNeed::floor`] (the
/// minor-version compatibility floor, or the release's own lower minimum). A newer family's driver runs an older runtime
/// (backward compatibility: a 12.x runtime on a 580 driver is fine). `None`
/// when either version is junk or `cuda` has no family ([`driver_need`]).
pub fn driver_ok(driver: &str, cuda: &str) -> Option<bool> {
    let need = driver_need(cuda)?;
    let driver = Dotted::parse(driver)?;
    Some(driver >= Dotted::parse(need.floor())?)
}

/// The versions published of the conda packages that pin a CUDA version
/// by their own version, where the package stops short of today's CUDA:
/// `cudatoolkit` (conda-forge and the `defaults` channel; the last is 11.8,
/// CUDA 12 is packaged as `cuda-version` + `cuda-*` packages) and
/// `pytorch-cuda` (the `pytorch` channel's selector package, published for
/// 11.6, 11.7, 11.8, 12.1 and 12.4 and discontinued after torch 2.5).
/// Sources: anaconda.org/conda-forge/cudatoolkit/files,
/// anaconda.org/pytorch/pytorch-cuda/files (gathered 2026-12). `None` for
/// other packages (`cuda-version`, `cuda-toolkit`, … follow every release).
pub fn conda_cuda_versions(package: &str) -> Option<&'static [&'static str]> {
    match package {
        "cudatoolkit" => Some(&[
            "9.0", "9.2", "10.0", "10.1", "10.2", "11.0", "11.1", "11.2", "11.3", "11.4", "11.5",
            "11.6", "11.7", "11.8",
        ]),
        "pytorch-cuda" => Some(&["11.6", "11.7", "11.8", "12.1", "12.4"]),
        _ => None,
    }
}

/// One `nvidia/cuda` cuDNN devel tag that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaImage {
    /// The tag: `"12.8.1-cudnn-devel-ubuntu22.04"` (image
    /// `nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04`).
    pub tag: &'static str,
    /// The full CUDA version: `"12.8.1"`.
    pub cuda: &'static str,
    /// The cuDNN major in the image: `"8"` or `"9"`.
    pub cudnn: &'static str,
    /// The Ubuntu release: `"22.04"`.
    pub ubuntu: &'static str,
}

/// Every known devel tag, CUDA ascending.
pub fn cuda_images() -> &'static [CudaImage] {
    tables::CUDA_IMAGES
}

fn ubuntu_of(ubuntu: &str) -> &str {
    ubuntu.strip_prefix("ubuntu").unwrap_or(ubuntu)
}

/// The devel image for CUDA `cuda` on Ubuntu `ubuntu` (`"22.04"` or
/// `"ubuntu22.04"`): for a major.minor (`"12.8"`) the highest patch release
/// with a tag for that Ubuntu; for a full version (`"12.8.1"`) that exact
/// release. `None` if no such tag exists (see [`nearest_images`]).
pub fn devel_image(cuda: &str, ubuntu: &str) -> Option<&'static CudaImage> {
    let v = Dotted::parse(cuda)?;
    let ubuntu = ubuntu_of(ubuntu);
    let mut on_ubuntu = cuda_images().iter().filter(|i| i.ubuntu == ubuntu);
    if v.patch().is_some() {
        return on_ubuntu.find(|i| Dotted::parse(i.cuda).as_ref() == Some(&v));
    }
    on_ubuntu
        .filter_map(|i| Some((i, Dotted::parse(i.cuda)?)))
        .filter(|(_, c)| c.same_minor(&v))
        .max_by(|a, b| a.1.cmp(&b.1))
        .map(|(i, _)| i)
}

/// How many images [`nearest_images`] returns at most.
pub const NEAREST: usize = 5;

fn linear(v: &Dotted) -> i64 {
    let p = v.parts();
    let at = |i: usize| i64::from(p.get(i).copied().unwrap_or(0));
    at(0) * 1_000_000 + at(1) * 1_000 + at(2)
}

/// The existing devel images closest to CUDA `cuda` (on Ubuntu `ubuntu`,
/// when given), for a "did you mean": at most [`NEAREST`], by numeric
/// distance of the CUDA version (each component weighted 1000× the next),
/// ties to the newer CUDA and then the newer Ubuntu. Empty for junk.
pub fn nearest_images(cuda: &str, ubuntu: Option<&str>) -> Vec<&'static CudaImage> {
    let Some(v) = Dotted::parse(cuda) else {
        return Vec::new();
    };
    let target = linear(&v);
    // (distance, newer CUDA first, newer Ubuntu first, image)
    let mut found: Vec<_> = cuda_images()
        .iter()
        .filter(|i| ubuntu.is_none_or(|u| i.ubuntu == ubuntu_of(u)))
        .filter_map(|i| {
            let c = Dotted::parse(i.cuda)?;
            let d = (linear(&c) - target).abs();
            let newer = std::cmp::Reverse((c, Dotted::parse(i.ubuntu)));
            Some((d, newer, i))
        })
        .collect();
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    found.into_iter().take(NEAREST).map(|(_, _, i)| i).collect()
}

/// The cuDNN part of an `nvidia/cuda` tag for CUDA `cuda`: `"cudnn8"` up to
/// 12.2.x, `"cudnn9"` for 12.3.x, `"cudnn"` (cuDNN 9, no number) from 12.4
/// on — the rule the tags follow from 11.0 on. Junk gives `"cudnn"`.
pub fn cudnn_spelling(cuda: &str) -> &'static str {
    match Dotted::parse(cuda) {
        Some(v) if (v.major(), v.minor()) < (12, 3) => "cudnn8",
        Some(v) if (v.major(), v.minor()) == (12, 3) => "cudnn9",
        _ => "cudnn",
    }
}
