//! The rows of the base-image table (`scl_ir::bases`) that the unit tests
//! in `src/bases.rs` do not reach: every repository name `info` matches by
//! name (the conda images, NGC and `nvcr.io/nvidia/cuda`, the Red Hat
//! family), Docker Hub's `index.docker.io` spelling, the Alpine fallback,
//! and every row of `OS_PYTHONS` by its code name as well as its version.

use scl_ir::bases::{info, ships, Family, PythonEnv, OS_PYTHONS};
use scl_ir::SystemManager::{self, *};

/// (image, family, manager, python, pip, PEP 668, conda, where packages go)
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

#[test]
fn every_named_image_has_its_row() {
    use PythonEnv::*;
    #[rustfmt::skip]
    let rows: &[Row] = &[
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

/// Every row of `OS_PYTHONS`, as written for the table (the row itself,
/// hand-written here), reached through `ships` by its version and by its
/// code name, in each image family that reads it.
#[test]
fn every_os_python_row_is_read_by_version_and_code_name() {
    let expected = [
        ("debian", "11", "bullseye", "3.9"),
        ("debian", "12", "bookworm", "3.11"),
        ("debian", "13", "trixie", "3.13"),
        ("ubuntu", "20.04", "focal", "3.8"),
        ("ubuntu", "22.04", "jammy", "3.10"),
        ("ubuntu", "24.04", "noble", "3.12"),
    ];
    assert_eq!(OS_PYTHONS, expected);
    for (distribution, version, code, python) in expected {
        for tag in [version, code, &format!("{code}-20240101")[..]] {
            let image = format!("{distribution}:{tag}");
            let s = ships(&image);
            assert_eq!(
                (s.python, s.apt_python, s.cuda, s.torch),
                (None, Some(python), None, None),
                "{image}"
            );
        }
        match distribution {
            // `python:*` reads the Debian release only from a code name.
            "debian" => {
                let image = format!("python:3.12.4-slim-{code}");
                let s = ships(&image);
                assert_eq!(
                    (s.python.as_deref(), s.apt_python),
                    (Some("3.12.4"), Some(python)),
                    "{image}"
                );
            }
            // `nvidia/cuda` reads the Ubuntu release from the tag's suffix,
            // on Docker Hub and on NGC alike.
            _ => {
                for repo in ["nvidia/cuda", "nvcr.io/nvidia/cuda"] {
                    let image = format!("{repo}:12.4.1-cudnn-runtime-ubuntu{version}");
                    let s = ships(&image);
                    assert_eq!(
                        (s.python, s.apt_python, s.cuda.as_deref(), s.torch),
                        (None, Some(python), Some("12.4.1"), None),
                        "{image}"
                    );
                }
            }
        }
    }
    // A release the table does not have ships no known Python.
    for image in [
        "debian:10",
        "ubuntu:18.04",
        "nvidia/cuda:11.8.0-base-ubuntu18.04",
    ] {
        assert_eq!(ships(image).apt_python, None, "{image}");
    }
}

/// What the images of the other families ship, as far as the reference
/// tells: nothing for the images whose tag names no version of Python,
/// torch or CUDA.
#[test]
fn other_families_ship_nothing_the_tag_does_not_say() {
    for image in [
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "tensorflow/tensorflow:2.15.0-gpu",
        "continuumio/anaconda3:2024.06-1",
        "mambaorg/micromamba:1.5",
        "alpine:3.20",
        "fedora:40",
        "rockylinux:latest",
        "pytorch/pytorch:2.1.2",
        "pytorch/pytorch:nightly-cuda12.1-cudnn8-devel",
    ] {
        assert_eq!(ships(image), Default::default(), "{image}");
    }
    // The Red Hat family: the python3 of its package manager, by release.
    assert_eq!(
        ships("rockylinux:9"),
        scl_ir::bases::Ships {
            apt_python: Some("3.9"),
            ..Default::default()
        }
    );
    let s = ships("docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:00");
    assert_eq!(
        (s.torch.as_deref(), s.cuda.as_deref(), s.python),
        (Some("2.5.1"), Some("12.4"), None)
    );
}
