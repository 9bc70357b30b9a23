//! Every row of the driver table through the lookups the checks use
//! (`driver_need`, `driver_ok`), and every row of the conda CUDA package
//! table (`conda_cuda_versions`, which has no CSV: its rows are written out
//! here from anaconda.org's file lists).

use scl_domain::cuda::{self, conda_cuda_versions, driver_need, driver_ok};
use scl_domain::version::Dotted;

/// The highest driver version below `v` that differs in its last part
/// (`"525.60.13"` → `"525.60.12"`, `"580"` → `"579"`, `"418.0"` →
/// `"417.999"`).
fn just_below(v: &str) -> String {
    let mut parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
    while *parts.last().unwrap() == 0 {
        parts.pop();
    }
    *parts.last_mut().unwrap() -= 1;
    if parts.len() < v.split('.').count() {
        parts.push(999);
    }
    parts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

#[test]
fn just_below_is_below() {
    assert_eq!(just_below("525.60.13"), "525.60.12");
    assert_eq!(just_below("580"), "579");
    assert_eq!(just_below("418.0"), "417.999");
    assert_eq!(just_below("410.48"), "410.47");
}

/// Each release row is what `driver_need` answers for that exact toolkit;
/// a driver at the floor runs it and one just below does not, where the
/// floor is the family's (CUDA 11 and later, minor-version compatibility)
/// or the row's own minimum (before CUDA 11).
#[test]
fn every_driver_row_through_the_lookups() {
    let rows = cuda::driver_rows();
    assert_eq!(rows.len(), 59);
    for row in rows {
        let need = driver_need(row.toolkit).unwrap_or_else(|| panic!("{}", row.label));
        assert_eq!(need.release_min, Some(row.min_linux), "{}", row.label);
        let major = Dotted::parse(row.toolkit).unwrap().major();
        let (family, floor) = match major {
            13 => ("13.x", "580"),
            12 => ("12.x", "525.60.13"),
            11 => ("11.x", "450.80.02"),
            _ => (row.label, row.min_linux),
        };
        assert_eq!(
            (need.family, need.family_min, need.minor_compat),
            (family, floor, major >= 11),
            "{}",
            row.label
        );
        assert_eq!(driver_ok(floor, row.toolkit), Some(true), "{}", row.label);
        // Below both the floor and the release's own minimum, nothing runs
        // it (11.0's releases shipped with drivers older than the 11.x
        // floor, so the lower of the two).
        let lowest = if Dotted::parse(row.min_linux) < Dotted::parse(floor) {
            row.min_linux
        } else {
            floor
        };
        assert_eq!(
            driver_ok(&just_below(lowest), row.toolkit),
            Some(false),
            "{}",
            row.label
        );
    }
    // 9.2 without a patch is its first release (9.2.88), 9.2.148 its
    // update, whose driver is newer.
    assert_eq!(driver_need("9.2").unwrap().family_min, "396.26");
    assert_eq!(driver_ok("396.26", "9.2.148"), Some(false));
    assert_eq!(driver_ok("396.37", "9.2.148"), Some(true));
    // 8.0 without a patch: the older of its two rows (neither is a " GA").
    assert_eq!(driver_need("8.0").unwrap().family_min, "367.48");
}

/// The 13.x branches: each CUDA 13 minor the branch table lists runs on
/// the family floor 580 (minor-version compatibility), whatever its branch.
#[test]
fn every_branch_row_runs_on_the_family_floor() {
    let branches = cuda::branches();
    assert_eq!(branches.len(), 5);
    for b in branches {
        assert_eq!(driver_ok("580", b.cuda), Some(true), "{}", b.cuda);
        assert_eq!(driver_ok("579.99", b.cuda), Some(false), "{}", b.cuda);
        assert_eq!(driver_need(b.cuda).unwrap().family, "13.x", "{}", b.cuda);
    }
}

/// `conda_cuda_versions`, every row: the versions published on
/// anaconda.org (conda-forge/cudatoolkit, pytorch/pytorch-cuda), and none
/// for the packages that follow every CUDA release.
#[test]
fn conda_cuda_versions_rows() {
    assert_eq!(
        conda_cuda_versions("cudatoolkit").unwrap(),
        [
            "9.0", "9.2", "10.0", "10.1", "10.2", "11.0", "11.1", "11.2", "11.3", "11.4", "11.5",
            "11.6", "11.7", "11.8",
        ]
    );
    assert_eq!(
        conda_cuda_versions("pytorch-cuda").unwrap(),
        ["11.6", "11.7", "11.8", "12.1", "12.4"]
    );
    for other in [
        "cuda-version",
        "cuda-toolkit",
        "cuda-runtime",
        "cuda-nvcc",
        "cuda-cudart",
        "",
    ] {
        assert_eq!(conda_cuda_versions(other), None, "{other:?}");
    }
    // Every version is a CUDA release of the driver table (a toolkit row of
    // that major.minor), ascending.
    for package in ["cudatoolkit", "pytorch-cuda"] {
        let versions = conda_cuda_versions(package).unwrap();
        let parsed: Vec<Dotted> = versions.iter().map(|v| Dotted::parse(v).unwrap()).collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]), "{package}");
        for (v, d) in versions.iter().zip(&parsed) {
            assert!(
                cuda::driver_rows()
                    .iter()
                    .any(|r| Dotted::parse(r.toolkit).unwrap().same_minor(d)),
                "{package} {v}"
            );
        }
    }
}

/// A driver at a release's own minimum runs that release: NVIDIA's table
/// gives each toolkit release the driver it shipped with. The 11.0
/// releases shipped with drivers older than the 11.x minor-version floor
/// (450.80.02; the CSV's note: "CUDA 11.0 shipped with earlier drivers"),
/// so the floor of 11.0.3 is its own 450.51.06 (`DriverNeed::floor`).
#[test]
fn a_driver_at_a_releases_own_minimum_runs_it() {
    for row in cuda::driver_rows() {
        assert_eq!(
            driver_ok(row.min_linux, row.toolkit),
            Some(true),
            "{}: {}",
            row.label,
            row.min_linux
        );
    }
}
