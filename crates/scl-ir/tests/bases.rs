//! Every row of `OS_PYTHONS` (`scl_ir::bases`) by its code name as well as
//! its version, and the families that ship nothing their tag does not say
//! (the per-image rows are the unit table `one_rule_per_family` in
//! `src/bases.rs`).

use scl_ir::bases::{ships, OS_PYTHONS};

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
