//! The base-image families: for a `base` reference, which package manager
//! the image has, whether Python (and pip) is there, whether that Python is
//! "externally managed" (PEP 668: `pip install` outside a virtual
//! environment fails with `externally-managed-environment`), whether conda
//! is there, and where Python packages go. One table, read by every backend
//! that installs software (Dockerfile, Apptainer) and by the checks that
//! reason about an image.
//!
//! Facts, per family (checked against the images' own files as of 2026):
//! - Debian: no Python in the image; `python3` from apt is externally
//!   managed from Debian 12 (bookworm, `/usr/lib/python3.11/EXTERNALLY-MANAGED`);
//!   a virtual environment needs `python3-venv`.
//! - Ubuntu: no Python in the image; externally managed from 23.04
//!   (so 24.04 LTS); `python3-venv` as for Debian.
//! - `python:*` (Docker official images): Python and pip in `/usr/local`,
//!   not externally managed; installing into that Python is the image's
//!   convention.
//! - `nvidia/cuda:*`: the OS of the tag's suffix (`-ubuntu22.04`,
//!   `-ubuntu24.04`, `-ubi8`, `-ubi9`, `-rockylinux8`, `-rockylinux9`: dnf;
//!   `-centos7`: yum), no Python.
//! - `pytorch/pytorch:*`: a conda installation in `/opt/conda` holding
//!   torch; its Python is the image's environment (not externally managed).
//! - NGC `nvcr.io/nvidia/pytorch:*`: Ubuntu with torch in the system
//!   Python; NVIDIA's documented way to extend it is `pip install` into that
//!   Python, which the image allows.
//! - `tensorflow/tensorflow:*`: Ubuntu with TensorFlow pip-installed in
//!   the system Python (counted with NGC: packages go into that Python).
//! - conda images (`continuumio/miniconda3`, `continuumio/anaconda3`,
//!   `condaforge/miniforge3`, `condaforge/mambaforge`): Debian/Ubuntu with
//!   conda and Python in `/opt/conda` (the image's environment).
//!   `mambaorg/micromamba` has `micromamba`, not `conda`, and an empty base
//!   environment: it counts as without conda and without Python.
//! - Alpine: apk, no Python; `python3` from apk is externally managed
//!   from 3.19.
//! - Fedora, UBI, Rocky, Alma, CentOS, Amazon Linux, Oracle Linux: never pip in the
//!   image, never externally managed (these distributions ship no
//!   `EXTERNALLY-MANAGED` marker). The package manager and the Python go by
//!   release (the images' own package lists):
//!   - Fedora: dnf; `python3` is in the image (dnf itself was written in
//!     Python up to dnf 4); Fedora 41 and later (dnf 5, C++) have none.
//!   - EL9 and later (`ubi9`, `rockylinux:9`, `almalinux:9`,
//!     `centos:stream9`, …) and Amazon Linux 2023: dnf, `python3` present.
//!   - EL8 (`ubi8`, `rockylinux:8`, `almalinux:8`, `centos:8`,
//!     `centos:stream8`): dnf, but no `python3` on `PATH`: RHEL 8's dnf runs
//!     on `/usr/libexec/platform-python`, which is not meant for users.
//!   - CentOS 7 and Amazon Linux 2 (`amazonlinux:2`, `2.0.…`, not `2023`):
//!     yum 3 and no dnf; Python 2 only, no `python3` (likewise Amazon
//!     Linux 1, `2018.03`).
//!   - Amazon Linux (1, 2 and 2023): no `useradd` in the container image
//!     (shadow-utils is not in its package list).
//!   - The minimal images (`ubi8-minimal`, `ubi9-minimal`,
//!     `ubi9/ubi-minimal`, `rockylinux:9-minimal`, `almalinux:9-minimal`):
//!     microdnf only (Red Hat's UBI documentation), no Python, and no
//!     `useradd` (shadow-utils is not installed).
//!   - The micro images (`ubi8/ubi-micro`, `ubi9/ubi-micro`,
//!     `almalinux:9-micro`): no package manager at all, no Python and no
//!     `useradd` (Red Hat's UBI documentation: "does not include a package
//!     manager"); nothing can be installed into them.
//!   - Oracle Linux (`oraclelinux:7`, `8`, `9`) as the EL release it
//!     follows; its `-slim` images have yum (7) or microdnf (8 and later)
//!     and no Python (Oracle's container images documentation), and no
//!     `useradd` (like the minimal images, shadow-utils is left out).
//!   - A release the tag does not tell (`latest`, `stream`) is taken as
//!     recent: dnf with `python3` (minimal: microdnf), except Docker Hub's
//!     `centos:latest`, which is CentOS 8.
//!
//! Where the table does not know an image it assumes the least: no Python,
//! externally managed, no conda, apt — so the generated file installs
//! Python and uses a virtual environment, which works either way.
//!
//! What an image ships ([`ships`]), read from the reference alone:
//! - `python:<X.Y>[.<Z>]-…` ships that Python (Docker official images: the
//!   tag is the Python version); `python:3-slim`, `python:slim` and
//!   `latest` name no minor version, so the Python is unknown.
//! - the `python3` the OS's package manager installs (Debian's and
//!   Ubuntu's own package lists): Debian 11 (bullseye) 3.9, 12 (bookworm)
//!   3.11, 13 (trixie) 3.13; Ubuntu 20.04 (focal) 3.8, 22.04 (jammy) 3.10,
//!   24.04 (noble) 3.12. For `python:*` only when the tag names the Debian
//!   release (`-bookworm`); for `nvidia/cuda` from the tag's `-ubuntuXX.YY`
//!   (or `-ubiN`, `-rockylinuxN`, `-centosN`, below).
//! - the `python3` of the Red Hat family (the distributions' package lists:
//!   CentOS 7 `python3-3.6.8` in base/updates; RHEL 8 AppStream's default
//!   `python36` module, `python3` = 3.6; RHEL 9 BaseOS `python3-3.9`;
//!   RHEL 10 `python3-3.12`; Amazon Linux 2 core `python3-3.7`; Amazon
//!   Linux 2023 `python3-3.9`): 3.6 on EL7 (CentOS 7, Oracle Linux 7) and
//!   EL8 (UBI 8, Rocky, Alma, CentOS, CentOS Stream, Oracle Linux 8), 3.7
//!   on Amazon Linux 2, 3.9 on EL9 (UBI 9, Rocky, Alma, Oracle Linux 9,
//!   CentOS Stream 9) and Amazon Linux 2023, 3.12 on EL10. Fedora, Amazon
//!   Linux 1 and tags that name no release (`latest`, except Docker Hub's
//!   `centos:latest`, CentOS 8) are left unknown.
//! - `nvidia/cuda:<X.Y.Z>-…`: that CUDA toolkit (the tag starts with it).
//! - `pytorch/pytorch:<torch>-cuda<X.Y>-cudnn<N>-<runtime|devel>`: that
//!   torch and CUDA (the PyTorch release pipeline's tag scheme). The
//!   Python of these images is left unknown (it changes between releases
//!   and the tag does not say it).

use crate::SystemManager;

/// The folder of the virtual environment sclc makes on an image whose
/// Python is not meant to be installed into.
pub const VENV: &str = "/opt/venv";

/// A family of base images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Debian,
    Ubuntu,
    /// Docker's official `python` images.
    Python,
    /// `nvidia/cuda`, whose OS follows the tag.
    NvidiaCuda,
    /// `pytorch/pytorch`.
    Pytorch,
    /// NGC `nvcr.io/nvidia/pytorch` (and other NGC framework images).
    Ngc,
    /// miniconda, anaconda, miniforge, mambaforge.
    Conda,
    /// `mambaorg/micromamba`.
    Micromamba,
    Alpine,
    /// Fedora, UBI, Rocky, Alma, CentOS, Amazon Linux, Oracle Linux.
    RedHat,
    /// Anything else.
    Unknown,
}

/// Where `python.packages` and requirements files are installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PythonEnv {
    /// Into the image's own Python (`python:*`, `pytorch/pytorch`, NGC,
    /// conda images), which is that image's convention.
    Image,
    /// Into a virtual environment at [`VENV`], made by the build, whose
    /// `bin` is put first on `PATH`.
    Venv,
}

/// What sclc knows of one base image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseInfo {
    pub family: Family,
    /// The package manager of the image (for the micro images, which have
    /// none, the one their release's minimal image has).
    pub manager: SystemManager,
    /// The image has a package manager: false for the micro images
    /// (`ubi9/ubi-micro`, `almalinux:9-micro`), where nothing can be
    /// installed.
    pub has_manager: bool,
    /// `python3` is in the image.
    pub has_python: bool,
    /// `python3 -m pip` works in the image's Python.
    pub has_pip: bool,
    /// The image's Python (or the one its package manager installs) is
    /// externally managed (PEP 668).
    pub externally_managed: bool,
    /// `conda` is on `PATH`.
    pub has_conda: bool,
    /// Where Python packages go.
    pub python_env: PythonEnv,
    /// The image can create a user with its own tools: `useradd`
    /// (shadow-utils), or busybox's `adduser` on Alpine. False for the
    /// minimal Red Hat images and Amazon Linux, where shadow-utils must be
    /// installed first.
    pub has_useradd: bool,
}

/// The repository and tag of a lower-cased reference, Docker Hub's
/// spellings made one (`docker.io/library/python` is `python`; no tag is
/// `latest`).
fn repo_and_tag(lower: &str) -> (&str, &str) {
    let (repo, tag) = split_ref(lower);
    let repo = repo
        .strip_prefix("docker.io/")
        .or_else(|| repo.strip_prefix("index.docker.io/"))
        .unwrap_or(repo);
    (
        repo.strip_prefix("library/").unwrap_or(repo),
        tag.unwrap_or("latest"),
    )
}

/// What sclc knows of `image` (a reference as written: `debian:12.5`,
/// `docker.io/library/python:3.11-slim@sha256:…`). Never fails: an image
/// it does not know gets the cautious defaults described in the module doc.
pub fn info(image: &str) -> BaseInfo {
    let lower = image.to_ascii_lowercase();
    let (repo, tag) = repo_and_tag(&lower);
    let name = repo.rsplit('/').next().unwrap_or(repo);
    let unknown = BaseInfo {
        family: Family::Unknown,
        manager: SystemManager::Apt,
        has_manager: true,
        has_python: false,
        has_pip: false,
        externally_managed: true,
        has_conda: false,
        python_env: PythonEnv::Venv,
        has_useradd: true,
    };
    let os = |family: Family, manager: SystemManager, externally_managed: bool| BaseInfo {
        family,
        manager,
        externally_managed,
        ..unknown
    };
    let image_env = |family: Family, manager: SystemManager, has_conda: bool| BaseInfo {
        family,
        manager,
        has_manager: true,
        has_python: true,
        has_pip: true,
        externally_managed: false,
        has_conda,
        python_env: PythonEnv::Image,
        has_useradd: true,
    };
    match repo {
        "python" => {
            let manager = if tag.contains("alpine") {
                SystemManager::Apk
            } else {
                SystemManager::Apt
            };
            return image_env(Family::Python, manager, false);
        }
        "pytorch/pytorch" => return image_env(Family::Pytorch, SystemManager::Apt, true),
        "continuumio/miniconda3"
        | "continuumio/anaconda3"
        | "condaforge/miniforge3"
        | "condaforge/mambaforge"
        | "condaforge/miniforge-pypy3" => {
            return image_env(Family::Conda, SystemManager::Apt, true)
        }
        "mambaorg/micromamba" | "ghcr.io/mamba-org/micromamba" => {
            return os(Family::Micromamba, SystemManager::Apt, true)
        }
        "nvidia/cuda" => {
            let (manager, pep668) = os_of_tag(tag);
            return os(Family::NvidiaCuda, manager, pep668);
        }
        _ => {}
    }
    if repo.starts_with("nvcr.io/nvidia/") && !repo.starts_with("nvcr.io/nvidia/cuda") {
        return image_env(Family::Ngc, SystemManager::Apt, false);
    }
    // The official TensorFlow images: Ubuntu with TensorFlow installed by
    // pip into the system Python, which they mean to be extended the same
    // way (like NGC's).
    if repo == "tensorflow/tensorflow" {
        return image_env(Family::Ngc, SystemManager::Apt, false);
    }
    if repo == "nvcr.io/nvidia/cuda" {
        let (manager, pep668) = os_of_tag(tag);
        return os(Family::NvidiaCuda, manager, pep668);
    }
    match name {
        "debian" => os(Family::Debian, SystemManager::Apt, debian_is_pep668(tag)),
        "ubuntu" => os(Family::Ubuntu, SystemManager::Apt, ubuntu_is_pep668(tag)),
        "alpine" => os(Family::Alpine, SystemManager::Apk, alpine_is_pep668(tag)),
        "fedora" => {
            // Fedora 41 (dnf 5) and later have no Python in the image.
            let has_python = leading_number(tag).is_some_and(|v| v < 41);
            BaseInfo {
                has_python,
                externally_managed: false,
                ..os(Family::RedHat, SystemManager::Dnf, false)
            }
        }
        n if [
            "rockylinux",
            "rocky",
            "almalinux",
            "centos",
            "amazonlinux",
            "oraclelinux",
        ]
        .contains(&n)
            || n.starts_with("ubi") =>
        {
            let RedHat {
                manager,
                has_manager,
                has_python,
                has_useradd,
            } = red_hat(repo, tag);
            BaseInfo {
                has_manager,
                has_python,
                has_useradd,
                ..os(Family::RedHat, manager, false)
            }
        }
        _ if tag.contains("alpine") || name.contains("alpine") => {
            os(Family::Alpine, SystemManager::Apk, true)
        }
        _ => unknown,
    }
}

/// The package manager of `image` (the rule `system.manager` defaults to).
pub fn manager(image: &str) -> SystemManager {
    info(image).manager
}

/// What [`red_hat`] tells of an image.
struct RedHat {
    manager: SystemManager,
    /// The image has its package manager (the micro images have none).
    has_manager: bool,
    /// `python3` is on `PATH`.
    has_python: bool,
    /// `useradd` is there (shadow-utils is installed).
    has_useradd: bool,
}

/// The package manager of a Red Hat-family image other than Fedora,
/// whether `python3` is on its `PATH` and whether it has `useradd` (the
/// module doc has the facts), from its repository (`ubi9/ubi-minimal`,
/// `rockylinux`, `amazonlinux`) and tag.
fn red_hat(repo: &str, tag: &str) -> RedHat {
    let name = repo.rsplit('/').next().unwrap_or(repo);
    let full = |manager, has_python| RedHat {
        manager,
        has_manager: true,
        has_python,
        has_useradd: true,
    };
    // Neither Python nor `useradd`.
    let bare = |manager| RedHat {
        manager,
        has_manager: true,
        has_python: false,
        has_useradd: false,
    };
    // `ubi9/ubi-micro`, `ubi8-micro`, `almalinux:9-micro`: no package
    // manager at all (nor Python, nor `useradd`).
    if is_micro(name, tag) {
        return RedHat {
            has_manager: false,
            ..bare(SystemManager::Microdnf)
        };
    }
    // `ubi9-minimal`, `ubi9/ubi-minimal`, `rockylinux:9-minimal`.
    if name.ends_with("-minimal") || tag.contains("minimal") {
        return bare(SystemManager::Microdnf);
    }
    let release = release_of(repo, tag);
    // Oracle Linux's `-slim` images: yum up to 7, microdnf from 8 (Oracle's
    // container images documentation), no Python.
    if name == "oraclelinux" && tag.contains("slim") {
        return match release {
            Some(v) if v <= 7 => bare(SystemManager::Yum),
            _ => bare(SystemManager::Microdnf),
        };
    }
    if name == "amazonlinux" {
        // Amazon Linux 2 (`2`, `2.0.20240131.0`) and 1 (`2018.03`) have
        // yum; 2023 has dnf. None of their container images has
        // shadow-utils.
        let has_useradd = false;
        return match release {
            Some(v) if v < 2023 => RedHat {
                has_useradd,
                ..full(SystemManager::Yum, false)
            },
            _ => RedHat {
                has_useradd,
                ..full(SystemManager::Dnf, true)
            },
        };
    }
    // Docker Hub's `centos:latest` is CentOS 8 (the last release it got).
    let release = match (repo, tag) {
        ("centos", "latest") => Some(8),
        _ => release,
    };
    match release {
        Some(v) if v <= 7 => full(SystemManager::Yum, false),
        Some(8) => full(SystemManager::Dnf, false),
        _ => full(SystemManager::Dnf, true),
    }
}

/// The release of a Red Hat-family image other than Fedora, as its
/// reference writes it: in the name for UBI (`ubi8`, `ubi9/ubi`), else in
/// the tag (`8.9`, `stream8`, `centos7`, `2023.4.20240319.1`).
fn release_of(repo: &str, tag: &str) -> Option<u32> {
    repo.split('/')
        .find_map(|part| part.strip_prefix("ubi").and_then(leading_number))
        .or_else(|| {
            let t = tag.strip_prefix("centos").unwrap_or(tag);
            leading_number(t.strip_prefix("stream").unwrap_or(t))
        })
}

/// A Red Hat micro image (`ubi9/ubi-micro`, `almalinux:9-micro`), by its
/// repository's last part and its tag.
fn is_micro(name: &str, tag: &str) -> bool {
    name.ends_with("-micro") || tag.split('-').any(|part| part == "micro")
}

/// The `python3` a Red Hat-family image's package manager installs
/// (other than Fedora; the module doc has the facts), by the release its
/// reference writes; `None` where the reference does not say it, and for
/// the micro images, which have no package manager.
fn red_hat_python(repo: &str, tag: &str) -> Option<&'static str> {
    let name = repo.rsplit('/').next().unwrap_or(repo);
    if is_micro(name, tag) {
        return None;
    }
    let release = match (repo, tag) {
        ("centos", "latest") => Some(8),
        _ => release_of(repo, tag),
    }?;
    if name == "amazonlinux" {
        return match release {
            2 => Some("3.7"),
            2023 => Some("3.9"),
            _ => None,
        };
    }
    el_python(release)
}

/// The `python3` of an EL release (RHEL and its rebuilds: UBI, Rocky,
/// Alma, CentOS, CentOS Stream, Oracle Linux).
fn el_python(release: u32) -> Option<&'static str> {
    match release {
        7 | 8 => Some("3.6"),
        9 => Some("3.9"),
        10 => Some("3.12"),
        _ => None,
    }
}

/// The OS of an `nvidia/cuda` tag (`12.4.1-cudnn-devel-ubuntu22.04`):
/// its package manager and whether its `python3` is externally managed.
fn os_of_tag(tag: &str) -> (SystemManager, bool) {
    if let Some(i) = tag.rfind("ubuntu") {
        return (SystemManager::Apt, ubuntu_is_pep668(&tag[i + 6..]));
    }
    if let Some(i) = tag.rfind("centos") {
        // `11.0.3-base-centos7`: CentOS 7 has yum, not dnf (`-centos8`: dnf).
        if leading_number(&tag[i + 6..]).is_some_and(|v| v <= 7) {
            return (SystemManager::Yum, false);
        }
        return (SystemManager::Dnf, false);
    }
    if tag.contains("ubi") || tag.contains("rockylinux") {
        return (SystemManager::Dnf, false);
    }
    (SystemManager::Apt, true)
}

/// Debian 12 (bookworm) and later; unknown tags (`latest`, `stable`,
/// `testing`, `sid`) are taken as recent.
fn debian_is_pep668(tag: &str) -> bool {
    const OLD: &[&str] = &["bullseye", "buster", "stretch", "jessie", "oldoldstable"];
    if OLD.iter().any(|o| tag.starts_with(o)) {
        return false;
    }
    leading_number(tag).is_none_or(|v| v >= 12)
}

/// Ubuntu 23.04 and later (`24.04`, `noble`); older LTS names are not.
fn ubuntu_is_pep668(tag: &str) -> bool {
    const OLD: &[&str] = &["jammy", "focal", "bionic", "xenial", "kinetic"];
    if OLD.iter().any(|o| tag.starts_with(o)) {
        return false;
    }
    leading_number(tag).is_none_or(|v| v >= 23)
}

/// Alpine 3.19 and later.
fn alpine_is_pep668(tag: &str) -> bool {
    let mut parts = tag.split(['.', '-']);
    match (
        parts.next().and_then(|p| p.parse::<u32>().ok()),
        parts.next().and_then(|p| p.parse::<u32>().ok()),
    ) {
        (Some(major), Some(minor)) => major > 3 || (major == 3 && minor >= 19),
        (Some(major), None) => major > 3,
        _ => true,
    }
}

/// The number a tag starts with (`12.5-slim` → 12), if any.
fn leading_number(tag: &str) -> Option<u32> {
    let digits: String = tag.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// `(repository, tag)` of an image reference, digest dropped
/// (`localhost:5000/a/b:1@sha256:…` → `("localhost:5000/a/b", Some("1"))`).
pub fn split_ref(image: &str) -> (&str, Option<&str>) {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last_slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[last_slash..].rfind(':') {
        Some(i) => (
            &without_digest[..last_slash + i],
            Some(&without_digest[last_slash + i + 1..]),
        ),
        None => (without_digest, None),
    }
}

/// What a base image ships, as far as its reference tells (see the module
/// doc for the facts). Every field is `None` when unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ships {
    /// The Python of the image's own environment, as the tag writes it
    /// (`"3.11"` for `python:3.11-slim`, `"3.11.4"` for `python:3.11.4`).
    pub python: Option<String>,
    /// The `python3` the image's OS package manager installs (`"3.11"` on
    /// Debian 12, `"3.10"` on Ubuntu 22.04, `"3.9"` on Rocky Linux 9), or
    /// has already installed (EL9, Amazon Linux 2023).
    pub apt_python: Option<&'static str>,
    /// The CUDA of the image: `"12.1.1"` from `nvidia/cuda` tags, `"11.8"`
    /// from `pytorch/pytorch` tags (as written in the tag).
    pub cuda: Option<String>,
    /// The torch of a `pytorch/pytorch` image: `"2.1.2"`.
    pub torch: Option<String>,
}

/// What `image` ships (`python:3.11-slim`, `nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04`,
/// `pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime`). Never fails: what the
/// reference does not tell is `None`.
pub fn ships(image: &str) -> Ships {
    let lower = image.to_ascii_lowercase();
    let (repo, tag) = repo_and_tag(&lower);
    let name = repo.rsplit('/').next().unwrap_or(repo);
    let mut out = Ships::default();
    match repo {
        "python" => {
            let v = leading_version(tag);
            if v.matches('.').count() >= 1 {
                out.python = Some(v.to_string());
            }
            out.apt_python = tag.split('-').find_map(debian_python);
        }
        "nvidia/cuda" | "nvcr.io/nvidia/cuda" => {
            let v = leading_version(tag);
            if !v.is_empty() {
                out.cuda = Some(v.to_string());
            }
            if let Some(i) = tag.rfind("ubuntu") {
                out.apt_python = ubuntu_python(&tag[i + 6..]);
            } else if let Some(i) = ["ubi", "rockylinux", "centos"]
                .iter()
                .find_map(|os| tag.rfind(os).map(|i| i + os.len()))
            {
                // `-ubi9`, `-rockylinux8`, `-centos7`.
                out.apt_python = leading_number(&tag[i..]).and_then(el_python);
            }
        }
        "pytorch/pytorch" => {
            let mut parts = tag.split('-');
            let torch = parts.next().unwrap_or("");
            let cuda = parts.next().and_then(|p| p.strip_prefix("cuda"));
            if let Some(cuda) = cuda.filter(|c| is_version(c)) {
                if is_version(torch) {
                    out.torch = Some(torch.to_string());
                    out.cuda = Some(cuda.to_string());
                }
            }
        }
        _ => match name {
            "debian" => out.apt_python = tag.split('-').next().and_then(debian_python),
            "ubuntu" => out.apt_python = tag.split('-').next().and_then(ubuntu_python),
            "rockylinux" | "rocky" | "almalinux" | "centos" | "amazonlinux" | "oraclelinux" => {
                out.apt_python = red_hat_python(repo, tag)
            }
            n if n.starts_with("ubi") => out.apt_python = red_hat_python(repo, tag),
            _ => {}
        },
    }
    out
}

/// The dotted version a tag starts with (`"3.11"` of `3.11-slim`), or `""`.
fn leading_version(tag: &str) -> &str {
    let end = tag
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(tag.len());
    let v = tag[..end].trim_end_matches('.');
    if is_version(v) {
        v
    } else {
        ""
    }
}

/// Dot-separated decimal numbers.
fn is_version(v: &str) -> bool {
    !v.is_empty()
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The `python3` package of each Debian and Ubuntu release:
/// `(distribution, version, code name, Python)` (packages.debian.org,
/// packages.ubuntu.com, the `python3` package of each release).
pub const OS_PYTHONS: &[(&str, &str, &str, &str)] = &[
    ("debian", "11", "bullseye", "3.9"),
    ("debian", "12", "bookworm", "3.11"),
    ("debian", "13", "trixie", "3.13"),
    ("ubuntu", "20.04", "focal", "3.8"),
    ("ubuntu", "22.04", "jammy", "3.10"),
    ("ubuntu", "24.04", "noble", "3.12"),
];

fn os_python(distribution: &str, release: &str) -> Option<&'static str> {
    OS_PYTHONS
        .iter()
        .find(|(d, v, name, _)| *d == distribution && (release == *v || release == *name))
        .map(|(.., py)| *py)
}

/// The `python3` of a Debian release (`12`, `12.5`, `bookworm`).
fn debian_python(release: &str) -> Option<&'static str> {
    os_python("debian", release.split('.').next().unwrap_or(release))
}

/// The `python3` of an Ubuntu release (`22.04`, `jammy`, `jammy-20240111`).
fn ubuntu_python(release: &str) -> Option<&'static str> {
    os_python("ubuntu", release.split('-').next().unwrap_or(release))
}

/// Images that have conda, to name in a message.
pub const CONDA_IMAGES: &str = "condaforge/miniforge3, continuumio/miniconda3 or pytorch/pytorch";

#[cfg(test)]
mod tests {
    use super::*;
    use SystemManager::*;

    /// One row per family: (image, family, manager, python, pip, PEP 668,
    /// conda, where packages go).
    #[test]
    fn one_rule_per_family() {
        use PythonEnv::*;
        type Row = (
            &'static str,
            Family,
            SystemManager,
            bool,
            bool,
            bool,
            bool,
            PythonEnv,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("debian:12.5", Family::Debian, Apt, false, false, true, false, Venv),
            ("debian:bookworm-slim", Family::Debian, Apt, false, false, true, false, Venv),
            ("debian:11", Family::Debian, Apt, false, false, false, false, Venv),
            ("debian:bullseye", Family::Debian, Apt, false, false, false, false, Venv),
            ("ubuntu:24.04", Family::Ubuntu, Apt, false, false, true, false, Venv),
            ("ubuntu:22.04", Family::Ubuntu, Apt, false, false, false, false, Venv),
            ("ubuntu:jammy", Family::Ubuntu, Apt, false, false, false, false, Venv),
            ("python:3.11-slim", Family::Python, Apt, true, true, false, false, Image),
            ("docker.io/library/python:3.12@sha256:00", Family::Python, Apt, true, true, false, false, Image),
            ("python:3.12-alpine", Family::Python, Apk, true, true, false, false, Image),
            ("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", Family::NvidiaCuda, Apt, false, false, false, false, Venv),
            ("nvidia/cuda:12.6.0-devel-ubuntu24.04", Family::NvidiaCuda, Apt, false, false, true, false, Venv),
            ("nvidia/cuda:12.4.1-base-ubi9", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime", Family::Pytorch, Apt, true, true, false, true, Image),
            ("nvcr.io/nvidia/pytorch:24.05-py3", Family::Ngc, Apt, true, true, false, false, Image),
            ("tensorflow/tensorflow:2.15.0-gpu", Family::Ngc, Apt, true, true, false, false, Image),
            ("condaforge/miniforge3:24.3.0-0", Family::Conda, Apt, true, true, false, true, Image),
            ("continuumio/miniconda3", Family::Conda, Apt, true, true, false, true, Image),
            ("mambaorg/micromamba:1.5", Family::Micromamba, Apt, false, false, true, false, Venv),
            ("ghcr.io/mamba-org/micromamba:2.0", Family::Micromamba, Apt, false, false, true, false, Venv),
            ("alpine:3.20", Family::Alpine, Apk, false, false, true, false, Venv),
            ("alpine:3.18", Family::Alpine, Apk, false, false, false, false, Venv),
            ("fedora:40", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("fedora:41", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("registry.access.redhat.com/ubi9/ubi:9.4", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("rockylinux:9", Family::RedHat, Dnf, true, false, false, false, Venv),
            // CentOS 7, Amazon Linux 2 (and 1): yum, Python 2 only.
            ("centos:7", Family::RedHat, Yum, false, false, false, false, Venv),
            ("centos:7.9.2009", Family::RedHat, Yum, false, false, false, false, Venv),
            ("centos:centos7", Family::RedHat, Yum, false, false, false, false, Venv),
            ("docker.io/library/centos:centos7.9.2009", Family::RedHat, Yum, false, false, false, false, Venv),
            ("amazonlinux:2", Family::RedHat, Yum, false, false, false, false, Venv),
            ("amazonlinux:2.0.20240131.0", Family::RedHat, Yum, false, false, false, false, Venv),
            ("public.ecr.aws/amazonlinux/amazonlinux:2", Family::RedHat, Yum, false, false, false, false, Venv),
            ("amazonlinux:2018.03", Family::RedHat, Yum, false, false, false, false, Venv),
            // Amazon Linux 2023: dnf and python3.
            ("amazonlinux:2023", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("amazonlinux:2023.4.20240319.1", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("amazonlinux", Family::RedHat, Dnf, true, false, false, false, Venv),
            // EL8: dnf, only platform-python.
            ("ubi8", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("ubi8/ubi", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("registry.access.redhat.com/ubi8/ubi:8.10", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("registry.access.redhat.com/ubi8:latest", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("rockylinux:8", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("rockylinux:8.9", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("almalinux:8", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("centos:8", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("centos:latest", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("quay.io/centos/centos:stream8", Family::RedHat, Dnf, false, false, false, false, Venv),
            // EL9 and later: dnf and python3.
            ("ubi9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("ubi9/ubi:9.4", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("rockylinux:9.3", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("almalinux:9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("quay.io/centos/centos:stream9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("quay.io/centos/centos:stream10", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("almalinux:10", Family::RedHat, Dnf, true, false, false, false, Venv),
            // The minimal images: microdnf, no Python.
            ("ubi8-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("ubi9-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("ubi9/ubi-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("registry.access.redhat.com/ubi9/ubi-minimal:9.4", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("registry.access.redhat.com/ubi8/ubi-minimal:8.10", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("rockylinux:9-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("rockylinux:8-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("almalinux:9-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            // Oracle Linux: yum up to 7, dnf from 8; `-slim`: microdnf from 8.
            ("oraclelinux:7", Family::RedHat, Yum, false, false, false, false, Venv),
            ("oraclelinux:7-slim", Family::RedHat, Yum, false, false, false, false, Venv),
            ("oraclelinux:8", Family::RedHat, Dnf, false, false, false, false, Venv),
            ("oraclelinux:8-slim", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("oraclelinux:9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("oraclelinux:9-slim", Family::RedHat, Microdnf, false, false, false, false, Venv),
            ("rockylinux/rockylinux:9-minimal", Family::RedHat, Microdnf, false, false, false, false, Venv),
            // nvidia/cuda by the tag's OS.
            ("nvidia/cuda:11.0.3-base-centos7", Family::NvidiaCuda, Yum, false, false, false, false, Venv),
            ("nvidia/cuda:11.4.3-devel-centos8", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("nvidia/cuda:12.4.1-base-ubi8", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("nvidia/cuda:12.4.1-runtime-rockylinux8", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("nvidia/cuda:12.4.1-runtime-rockylinux9", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("ghcr.io/acme/thing:1", Family::Unknown, Apt, false, false, true, false, Venv),
            // Named images past the rows above: conda images, NGC, the Red Hat
            // family, Docker Hub spellings, the Alpine fallback.
            // The conda images, each name of the match arm.
            ("continuumio/anaconda3:2024.06-1", Family::Conda, Apt, true, true, false, true, Image),
            ("condaforge/mambaforge:24.3.0-0", Family::Conda, Apt, true, true, false, true, Image),
            ("condaforge/miniforge-pypy3:24.3.0-0", Family::Conda, Apt, true, true, false, true, Image),
            ("docker.io/continuumio/miniconda3:24.7.1-0", Family::Conda, Apt, true, true, false, true, Image),
            // Docker Hub's other spelling, and an upper-case reference.
            ("index.docker.io/library/python:3.11-slim", Family::Python, Apt, true, true, false, false, Image),
            ("PYTHON:3.11-SLIM", Family::Python, Apt, true, true, false, false, Image),
            ("index.docker.io/library/debian:11", Family::Debian, Apt, false, false, false, false, Venv),
            // NVIDIA's registry: CUDA by its tag's OS, the framework images as NGC.
            ("nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", Family::NvidiaCuda, Apt, false, false, false, false, Venv),
            ("nvcr.io/nvidia/cuda:12.6.0-devel-ubuntu24.04", Family::NvidiaCuda, Apt, false, false, true, false, Venv),
            ("nvcr.io/nvidia/cuda:12.4.1-base-rockylinux9", Family::NvidiaCuda, Dnf, false, false, false, false, Venv),
            ("nvcr.io/nvidia/tensorflow:24.03-tf2-py3", Family::Ngc, Apt, true, true, false, false, Image),
            ("nvidia/cuda:12.4.1-base-ubuntu20.04", Family::NvidiaCuda, Apt, false, false, false, false, Venv),
            ("nvidia/cuda:12.4.1-base-ubuntu24.04", Family::NvidiaCuda, Apt, false, false, true, false, Venv),
            // The Red Hat family by each name the table lists (releases with dnf).
            ("rockylinux/rockylinux:9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("almalinux:9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("quay.io/centos/centos:stream9", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("amazonlinux:2023", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("fedora:39", Family::RedHat, Dnf, true, false, false, false, Venv),
            ("fedora:42", Family::RedHat, Dnf, false, false, false, false, Venv),
            // Ubuntu and Debian by code name.
            ("ubuntu:noble", Family::Ubuntu, Apt, false, false, true, false, Venv),
            ("ubuntu:focal", Family::Ubuntu, Apt, false, false, false, false, Venv),
            ("debian:trixie-slim", Family::Debian, Apt, false, false, true, false, Venv),
            ("debian:buster", Family::Debian, Apt, false, false, false, false, Venv),
            // Alpine by release, and an unknown image on Alpine.
            ("alpine:3.19", Family::Alpine, Apk, false, false, true, false, Venv),
            ("alpine:3.18.4", Family::Alpine, Apk, false, false, false, false, Venv),
            ("ghcr.io/acme/tool:1.2-alpine", Family::Alpine, Apk, false, false, true, false, Venv),
        ];
        for &(image, family, manager, py, pip, pep668, conda, env) in rows {
            let i = info(image);
            assert_eq!(
                (
                    i.family,
                    i.manager,
                    i.has_python,
                    i.has_pip,
                    i.externally_managed,
                    i.has_conda,
                    i.python_env
                ),
                (family, manager, py, pip, pep668, conda, env),
                "{image}"
            );
        }
    }

    /// `useradd` is missing from the minimal Red Hat images, Oracle Linux's
    /// `-slim` images and every Amazon Linux, and nowhere else.
    #[test]
    fn useradd_by_image() {
        for (image, has) in [
            ("ubi9-minimal", false),
            ("registry.access.redhat.com/ubi8/ubi-minimal:8.10", false),
            ("rockylinux:9-minimal", false),
            ("almalinux:9-minimal", false),
            ("oraclelinux:7-slim", false),
            ("oraclelinux:9-slim", false),
            ("amazonlinux:2", false),
            ("amazonlinux:2.0.20240131.0", false),
            ("amazonlinux:2018.03", false),
            ("amazonlinux:2023", false),
            ("public.ecr.aws/amazonlinux/amazonlinux:2023", false),
            ("amazonlinux", false),
            ("ubi9", true),
            ("rockylinux:8.9", true),
            ("centos:7", true),
            ("oraclelinux:8", true),
            ("fedora:41", true),
            ("nvidia/cuda:12.4.1-base-ubi9", true),
            ("debian:12.5", true),
            ("alpine:3.20", true),
            ("python:3.11-slim", true),
            ("ghcr.io/acme/thing:1", true),
        ] {
            assert_eq!(info(image).has_useradd, has, "{image}");
        }
    }

    /// The micro images have no package manager, no Python and no
    /// `useradd`; every other image has a package manager.
    #[test]
    fn micro_images_have_no_package_manager() {
        for image in [
            "registry.access.redhat.com/ubi9/ubi-micro:9.4",
            "ubi9/ubi-micro",
            "ubi8/ubi-micro",
            "ubi9-micro",
            "almalinux:9-micro",
            "almalinux:9.4-micro",
        ] {
            let i = info(image);
            assert_eq!(
                (i.family, i.has_manager, i.has_python, i.has_useradd),
                (Family::RedHat, false, false, false),
                "{image}"
            );
        }
        for image in [
            "ubi9/ubi-minimal",
            "almalinux:9-minimal",
            "rockylinux:9.3",
            "debian:12.5",
            "mambaorg/micromamba:1.5",
            "ghcr.io/acme/thing:1",
        ] {
            assert!(info(image).has_manager, "{image}");
        }
    }

    #[test]
    fn venv_whenever_pip_would_meet_pep_668() {
        for image in [
            "debian:12",
            "ubuntu:24.04",
            "alpine:3.20",
            "nvidia/cuda:12.6.0-devel-ubuntu24.04",
            "x/y:z",
        ] {
            let i = info(image);
            assert!(
                i.externally_managed && i.python_env == PythonEnv::Venv,
                "{image}"
            );
        }
    }

    #[test]
    fn what_images_ship() {
        type Row = (
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // (image, python, apt_python, cuda, torch)
            ("python:3.11-slim", Some("3.11"), None, None, None),
            ("python:3.11.4-slim-bookworm", Some("3.11.4"), Some("3.11"), None, None),
            ("docker.io/library/python:3.12-bullseye@sha256:00", Some("3.12"), Some("3.9"), None, None),
            ("python:3.13-trixie", Some("3.13"), Some("3.13"), None, None),
            ("python:3.12-alpine", Some("3.12"), None, None, None),
            ("python:3-slim", None, None, None, None),
            ("python:slim", None, None, None, None),
            ("python", None, None, None, None),
            ("debian:11", None, Some("3.9"), None, None),
            ("debian:12.5-slim", None, Some("3.11"), None, None),
            ("debian:bookworm-slim", None, Some("3.11"), None, None),
            ("debian:trixie", None, Some("3.13"), None, None),
            ("debian:latest", None, None, None, None),
            ("ubuntu:20.04", None, Some("3.8"), None, None),
            ("ubuntu:jammy-20240111", None, Some("3.10"), None, None),
            ("ubuntu:24.04", None, Some("3.12"), None, None),
            ("ubuntu", None, None, None, None),
            ("nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", None, Some("3.10"), Some("12.1.1"), None),
            ("nvidia/cuda:12.6.0-devel-ubuntu24.04", None, Some("3.12"), Some("12.6.0"), None),
            ("nvidia/cuda:11.8.0-base-ubuntu20.04", None, Some("3.8"), Some("11.8.0"), None),
            ("nvidia/cuda:12.4.1-base-ubi9", None, Some("3.9"), Some("12.4.1"), None),
            ("nvidia/cuda:12.4.1-runtime-rockylinux8", None, Some("3.6"), Some("12.4.1"), None),
            ("nvidia/cuda:11.0.3-base-centos7", None, Some("3.6"), Some("11.0.3"), None),
            // The Red Hat family: the python3 of its package manager by release.
            ("centos:7", None, Some("3.6"), None, None),
            ("centos:centos7.9.2009", None, Some("3.6"), None, None),
            ("oraclelinux:7-slim", None, Some("3.6"), None, None),
            ("amazonlinux:2", None, Some("3.7"), None, None),
            ("amazonlinux:2.0.20240131.0", None, Some("3.7"), None, None),
            ("ubi8", None, Some("3.6"), None, None),
            ("registry.access.redhat.com/ubi8/ubi-minimal:8.10", None, Some("3.6"), None, None),
            ("rockylinux:8.9", None, Some("3.6"), None, None),
            ("almalinux:8", None, Some("3.6"), None, None),
            ("centos:8", None, Some("3.6"), None, None),
            ("centos:latest", None, Some("3.6"), None, None),
            ("quay.io/centos/centos:stream8", None, Some("3.6"), None, None),
            ("oraclelinux:8", None, Some("3.6"), None, None),
            ("registry.access.redhat.com/ubi9/ubi:9.4", None, Some("3.9"), None, None),
            ("ubi9-minimal", None, Some("3.9"), None, None),
            ("rockylinux:9.3", None, Some("3.9"), None, None),
            ("rockylinux/rockylinux:9-minimal", None, Some("3.9"), None, None),
            ("almalinux:9", None, Some("3.9"), None, None),
            ("oraclelinux:9", None, Some("3.9"), None, None),
            ("quay.io/centos/centos:stream9", None, Some("3.9"), None, None),
            ("amazonlinux:2023", None, Some("3.9"), None, None),
            ("public.ecr.aws/amazonlinux/amazonlinux:2023.4.20240319.1", None, Some("3.9"), None, None),
            ("quay.io/centos/centos:stream10", None, Some("3.12"), None, None),
            ("almalinux:10", None, Some("3.12"), None, None),
            // A release the reference does not tell, Amazon Linux 1, Fedora.
            ("rockylinux:latest", None, None, None, None),
            ("amazonlinux", None, None, None, None),
            ("amazonlinux:2018.03", None, None, None, None),
            ("ubi9/ubi-micro", None, None, None, None),
            ("almalinux:9-micro", None, None, None, None),
            ("fedora:40", None, None, None, None),
            ("pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime", None, None, Some("11.8"), Some("2.1.2")),
            ("pytorch/pytorch:2.8.0-cuda12.9-cudnn9-devel", None, None, Some("12.9"), Some("2.8.0")),
            ("pytorch/pytorch:latest", None, None, None, None),
            ("condaforge/miniforge3", None, None, None, None),
            ("ghcr.io/acme/thing:1", None, None, None, None),
        ];
        for &(image, python, apt, cuda, torch) in rows {
            let s = ships(image);
            assert_eq!(
                (
                    s.python.as_deref(),
                    s.apt_python,
                    s.cuda.as_deref(),
                    s.torch.as_deref()
                ),
                (python, apt, cuda, torch),
                "{image}"
            );
        }
    }
}
