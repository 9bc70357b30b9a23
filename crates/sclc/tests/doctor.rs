//! `sclc doctor`: envs against a machine whose GPUs are a fake `nvidia-smi`
//! (a shell script first on `PATH` that prints a recorded fixture of
//! `tests/doctor/*.csv`), with cores and memory fixed by the test hooks
//! `SCLC_DOCTOR_CORES` / `SCLC_DOCTOR_MEMORY_BYTES`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What the fake `nvidia-smi` does.
enum Smi {
    /// Not on `PATH` (`PATH` is an empty folder).
    Absent,
    /// Prints the fixture `tests/doctor/NAME.csv`.
    Prints(&'static str),
    /// Rejects `compute_cap` (exit 6), else prints the fixture.
    OldDriver(&'static str),
    /// Fails as on a machine whose driver is not loaded.
    Fails,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/doctor")
        .join(format!("{name}.csv"))
}

/// Runs `sclc doctor ARGS` in a folder holding `files`, with `smi` as the
/// machine's `nvidia-smi`, 16 cores and 64 GiB.
fn doctor(files: &[(&str, &str)], args: &[&str], smi: Smi) -> Output {
    let work = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(work.path().join(name), text).unwrap();
    }
    let bin = tempfile::tempdir().unwrap();
    let cat = |name: &str| {
        format!(
            "while IFS= read -r line || [ -n \"$line\" ]; do printf '%s\\n' \"$line\"; done < '{}'\n",
            fixture(name).display()
        )
    };
    let script = match smi {
        Smi::Absent => None,
        Smi::Prints(name) => Some(cat(name)),
        Smi::OldDriver(name) => Some(format!(
            "case \"$*\" in *compute_cap*) echo 'Field \"compute_cap\" is not a valid field to query.' >&2; exit 6;; esac\n{}",
            cat(name)
        )),
        Smi::Fails => Some(
            "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\" >&2\necho >&2\nexit 9\n"
                .to_string(),
        ),
    };
    if let Some(body) = script {
        let path = bin.path().join("nvidia-smi");
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sclc"));
    cmd.arg("doctor")
        .args(args)
        .current_dir(work.path())
        .env("PATH", bin.path())
        .env("NO_COLOR", "1")
        .env("SCLC_DOCTOR_CORES", "16")
        .env("SCLC_DOCTOR_MEMORY_BYTES", (64u64 << 30).to_string());
    cmd.output().expect("sclc runs")
}

/// Exit code, stdout and stderr, for a snapshot.
fn shown(o: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const TRAIN: &str = r#"env train {
  base = image("nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04")
  resources {
    requests {
      cpu = 8
      memory = 32Gi
    }
    limits {
      memory = 48Gi
      gpu = { count = gpu_count, type = gpu_type, memory = 16Gi }
    }
  }
}
"#;

/// [`TRAIN`] with a GPU count and type.
fn train(count: u32, kind: &str) -> String {
    format!("param gpu_count: Int = {count}\nparam gpu_type: String = \"{kind}\"\n{TRAIN}")
}

#[test]
fn h100_node_fits() {
    let o = doctor(
        &[("train.env.scl", &train(8, "nvidia-h100"))],
        &["train.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("h100_node_fits", shown(&o));
}

#[test]
fn too_few_gpus() {
    let o = doctor(
        &[("train.env.scl", &train(4, "nvidia-geforce-rtx-4090"))],
        &["train.env.scl"],
        Smi::Prints("rtx4090"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("too_few_gpus", shown(&o));
}

#[test]
fn driver_too_old_for_the_image() {
    let o = doctor(
        &[("train.env.scl", &train(2, "nvidia-a100"))],
        &["train.env.scl"],
        Smi::Prints("a100x2"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("driver_too_old_for_the_image", shown(&o));
}

#[test]
fn wrong_gpu_type() {
    let o = doctor(
        &[("train.env.scl", &train(2, "nvidia-a100"))],
        &["train.env.scl"],
        Smi::Prints("v100x4"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("wrong_gpu_type", shown(&o));
}

#[test]
fn old_driver_without_compute_cap() {
    let env = r#"env infer {
  base = image("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04")
  resources.limits.gpu = { count = 1 }
}
"#;
    let o = doctor(
        &[("infer.env.scl", env)],
        &["infer.env.scl"],
        Smi::OldDriver("t4_old_driver"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("old_driver_without_compute_cap", shown(&o));
}

#[test]
fn gpu_generation_needs_a_newer_cuda() {
    let env = r#"env old_torch {
  base = image("pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime")
  resources.limits.gpu = { count = 1 }
}
"#;
    let o = doctor(
        &[("old.env.scl", env)],
        &["old.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("gpu_generation_needs_a_newer_cuda", shown(&o));
}

const TWO_ENVS: &str = r#"env gpu_job {
  base = image("nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04")
  resources.limits.gpu = { count = 1 }
}

env cpu_job {
  base = image("python:3.11-slim")
  resources.requests { cpu = 2, memory = 4Gi }
}
"#;

#[test]
fn no_gpus_here_and_one_requested() {
    let o = doctor(
        &[("jobs.env.scl", TWO_ENVS)],
        &["jobs.env.scl", "--env", "gpu_job"],
        Smi::Absent,
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("no_gpus_here_and_one_requested", shown(&o));
}

#[test]
fn no_gpus_here_and_none_requested() {
    let o = doctor(
        &[("jobs.env.scl", TWO_ENVS)],
        &["jobs.env.scl", "--env", "cpu_job"],
        Smi::Absent,
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("no_gpus_here_and_none_requested", shown(&o));
}

#[test]
fn nvidia_smi_fails() {
    let o = doctor(&[("jobs.env.scl", TWO_ENVS)], &["jobs.env.scl"], Smi::Fails);
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("nvidia_smi_fails", shown(&o));
}

#[test]
fn services_one_by_one() {
    let env = r#"env stack {
  services {
    redis = { base = image("redis:7-alpine"), resources.requests.memory = 1Gi }
    backend = {
      base = image("pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime"),
      resources.limits = { cpu = 32, gpu = { count = 1, memory = 20Gi } },
    }
  }
}
"#;
    let o = doctor(
        &[("stack.env.scl", env)],
        &["stack.env.scl"],
        Smi::Prints("rtx4090"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("services_one_by_one", shown(&o));
}

#[test]
fn a_file_with_errors_has_no_table() {
    let o = doctor(
        &[(
            "bad.env.scl",
            "env bad {\n  base = image(\"python:3.11-slim\")\n  resources.limits.cpu = nope\n}\n",
        )],
        &["bad.env.scl"],
        Smi::Absent,
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    assert!(o.stdout.is_empty(), "{}", shown(&o));
    assert!(!o.stderr.is_empty(), "{}", shown(&o));
}

#[test]
fn usage_errors() {
    let o = doctor(&[], &["missing.env.scl"], Smi::Absent);
    assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
    let o = doctor(&[], &[], Smi::Absent);
    assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
}
