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
    let mut all = vec!["doctor"];
    all.extend(args);
    sclc(files, &all, smi)
}

/// Runs `sclc ARGS` (any command) as [`doctor`] runs `sclc doctor`.
fn sclc(files: &[(&str, &str)], args: &[&str], smi: Smi) -> Output {
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
    cmd.args(args)
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

/// [`TRAIN`] with a GPU count and type (spelled as GPU Feature Discovery's
/// `nvidia.com/gpu.product` label, the default node label, has them).
fn train(count: u32, kind: &str) -> String {
    format!("param gpu_count: Int = {count}\nparam gpu_type: String = \"{kind}\"\n{TRAIN}")
}

#[test]
fn h100_node_fits() {
    let o = doctor(
        &[("train.env.scl", &train(8, "NVIDIA-H100-80GB-HBM3"))],
        &["train.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("h100_node_fits", shown(&o));
}

#[test]
fn too_few_gpus() {
    let o = doctor(
        &[("train.env.scl", &train(4, "NVIDIA-GeForce-RTX-4090"))],
        &["train.env.scl"],
        Smi::Prints("rtx4090"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("too_few_gpus", shown(&o));
}

#[test]
fn driver_too_old_for_the_image() {
    let o = doctor(
        &[("train.env.scl", &train(2, "NVIDIA-A100-SXM4-40GB"))],
        &["train.env.scl"],
        Smi::Prints("a100x2"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("driver_too_old_for_the_image", shown(&o));
}

#[test]
fn wrong_gpu_type() {
    let o = doctor(
        &[("train.env.scl", &train(2, "NVIDIA-A100-SXM4-40GB"))],
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

/// An env that carries a CUDA runtime but requests no GPU: its base image
/// (`nvidia/cuda:13.0.x`) and wheels (`+cu130`) from `std/pytorch-cuda`.
const CUDA13_NO_GPU: &str = r#"import "std/pytorch-cuda" as torch

env infer extends torch.runtime(torch = "2.9.0", cuda = "13.0") {
}
"#;

#[test]
fn driver_is_compared_without_a_gpu_request() {
    // The driver of this machine (550.54.15) is older than CUDA 13 needs
    // (580): `check --driver` says E0506, and doctor must not say that
    // everything fits because the env asks for no GPU. The base image and
    // the wheel carry the same CUDA: one line names both.
    let env = r#"env infer {
  base = image("nvidia/cuda:13.0.2-runtime-ubuntu24.04")
  python.packages = ["torch==2.9.0+cu130"]
}
"#;
    let o = doctor(
        &[("infer.env.scl", env)],
        &["infer.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("driver_is_compared_without_a_gpu_request", shown(&o));
    // The same with std/pytorch-cuda's template (no snapshot: the module's
    // lines are not this test's).
    let o = doctor(
        &[("infer.env.scl", CUDA13_NO_GPU)],
        &["infer.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let fails: Vec<&str> = stdout.lines().filter(|l| l.contains("FAIL")).collect();
    assert_eq!(fails.len(), 1, "{stdout}");
    assert!(
        fails[0].starts_with("  FAIL  driver: CUDA 13.0.")
            && fails[0].contains("`torch==2.9.0+cu130`")
            && fails[0].ends_with("needs an NVIDIA driver ≥ 580, this machine has 550.54.15"),
        "{stdout}"
    );
}

/// The `E0506` diagnostics of JSON lines, sorted.
fn e0506(o: &Output) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|d| d["code"] == "E0506")
        .collect();
    v.sort_by_key(|d| d.to_string());
    v
}

#[test]
fn doctor_and_check_driver_report_the_same_runtimes() {
    // One CUDA runtime from several sources (a base image, torch and
    // torchvision wheels of its CUDA), two runtimes in one env, a service:
    // one FAIL line per distinct runtime, each naming every source, and as
    // many E0506 as `check --driver` gives, the same ones.
    let file = format!(
        "{CUDA13_NO_GPU}
env train {{
  base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")
  python.packages = [\"torch==2.1.2+cu121\", \"torchvision==0.16.2+cu121\"]
  resources.limits.gpu = {{ count = 1 }}
}}

env mixed {{
  base = image(\"nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\")
  python.packages = [\"torch==2.1.2+cu121\"]
}}

env stack {{
  services {{
    api = {{ base = image(\"python:3.11-slim\") }}
    worker = {{
      base = image(\"pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime\"),
      python.packages = [\"torch==2.1.2+cu121\"],
    }}
  }}
}}
"
    );
    let files = [("jobs.env.scl", file.as_str())];
    let o = doctor(&files, &["jobs.env.scl"], Smi::Prints("a100x2"));
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let fails = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("FAIL  driver: "))
        .count();
    let json = doctor(
        &files,
        &["jobs.env.scl", "--message-format", "json"],
        Smi::Prints("a100x2"),
    );
    let check = sclc(
        &files,
        &[
            "check",
            "jobs.env.scl",
            "--driver",
            "520.61.05",
            "--message-format",
            "json",
        ],
        Smi::Absent,
    );
    assert_eq!(check.status.code(), Some(1), "{}", shown(&check));
    let (from_doctor, from_check) = (e0506(&json), e0506(&check));
    assert_eq!(from_doctor, from_check, "{}", shown(&json));
    // 13.0 (infer), 12.1 (train: image, torch and torchvision), 12.1 of
    // mixed's wheel (a runtime of its own beside the image's 11.8, which
    // runs on 520), 12.1 (the worker: image and wheel).
    assert_eq!((fails, from_check.len()), (4, 4), "{stdout}");
    for line in [
        "FAIL  driver: CUDA 12.1.1 (the base image nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04, `torch==2.1.2+cu121` and `torchvision==0.16.2+cu121`) needs",
        "FAIL  driver: CUDA 12.1 (`torch==2.1.2+cu121`) needs",
        "FAIL  driver: CUDA 12.1 (the base image pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime and `torch==2.1.2+cu121`) needs",
        "ok    driver: CUDA 11.8.0 (the base image nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04) runs on driver 520.61.05",
    ] {
        assert_eq!(stdout.matches(line).count(), 1, "{line}\n{stdout}");
    }
}

#[test]
fn memory_within_two_percent_of_the_request_fits() {
    // Cards report less than their marketed size: an H100 80GB has 81559
    // MiB for `80Gi` (81920 MiB), a V100 32GB 32510 MiB for `32Gi`.
    let env = |name: &str, kind: &str, mem: &str| {
        format!(
            "env {name} {{\n  base = image(\"python:3.11-slim\")\n  resources.limits.gpu = {{ count = 1, type = \"{kind}\", memory = {mem} }}\n}}\n"
        )
    };
    let h100 = env("h100_80", "NVIDIA-H100-80GB-HBM3", "80Gi");
    let o = doctor(
        &[("h.env.scl", &h100)],
        &["h.env.scl"],
        Smi::Prints("h100x8"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("memory_h100_80gb", shown(&o));
    let v100 = format!(
        "{}\n{}",
        env("v100_32", "Tesla-V100-SXM2-32GB", "32Gi"),
        env("v100_33", "Tesla-V100-SXM2-32GB", "33Gi")
    );
    let o = doctor(
        &[("v.env.scl", &v100)],
        &["v.env.scl"],
        Smi::Prints("v100x2_32gb"),
    );
    // 32510 MiB is 0.8 % short of 32 GiB (fits) and 3.8 % short of 33 GiB.
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    insta::assert_snapshot!("memory_v100_32gb", shown(&o));
}

#[test]
fn memory_not_reported_is_a_note() {
    // A GH200 reports `memory.total` as [N/A]: whether or not memory per
    // GPU is requested, the line says that it cannot be told.
    let env = r#"env any_gpu {
  base = image("nvidia/cuda:12.4.1-runtime-ubuntu22.04")
  resources.limits.gpu = { count = 1 }
}

env with_memory {
  base = image("nvidia/cuda:12.4.1-runtime-ubuntu22.04")
  resources.limits.gpu = { count = 1, type = "NVIDIA-GH200-480GB", memory = 96Gi }
}
"#;
    let o = doctor(
        &[("gh.env.scl", env)],
        &["gh.env.scl"],
        Smi::Prints("gh200"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    insta::assert_snapshot!("memory_not_reported_is_a_note", shown(&o));
}

#[test]
fn gloo_processes_may_share_a_gpu() {
    // One process per GPU is NCCL's rule (E0510); with Gloo four processes
    // may share the one GPU, and the file is compared with the machine.
    let env = |backend: &str| {
        format!(
            "env ddp {{\n  base = image(\"pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime\")\n  resources.limits.gpu = {{ count = 1 }}\n  distributed {{ backend = .{backend}, launcher = .torchrun, nodes = 1, procs_per_node = 4 }}\n}}\n"
        )
    };
    let gloo = env("gloo");
    let o = doctor(
        &[("ddp.env.scl", &gloo)],
        &["ddp.env.scl"],
        Smi::Prints("rtx4090"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    assert!(o.stderr.is_empty(), "{}", shown(&o));
    let nccl = env("nccl");
    let o = doctor(
        &[("ddp.env.scl", &nccl)],
        &["ddp.env.scl"],
        Smi::Prints("rtx4090"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    assert!(o.stdout.is_empty(), "{}", shown(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("[E0510]"),
        "{}",
        shown(&o)
    );
}

#[test]
fn a_source_build_gets_everything_it_needs() {
    // W0502 before the table: psycopg2 has no Linux wheel, and pip compiles
    // it. The warning (and its quick fix) names the compiler and the C
    // library's headers besides libpq; with them installed, none is left.
    let env = |packages: &str| {
        format!(
            "env db {{\n  base = image(\"python:3.11-slim\")\n  system.packages = [{packages}]\n  python.packages = [\"psycopg2==2.9.9\"]\n}}\n"
        )
    };
    let before = env("");
    let o = doctor(
        &[("db.env.scl", &before)],
        &["db.env.scl", "--message-format", "json"],
        Smi::Absent,
    );
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let w: Vec<serde_json::Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|d| d["code"] == "W0502")
        .collect();
    assert_eq!(w.len(), 1, "{stderr}");
    let message = w[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "`psycopg2==2.9.9` needs the system packages `gcc`, `libc6-dev`, `libpq-dev` ("
        ),
        "{message}"
    );
    assert_eq!(
        w[0]["help"].as_str().unwrap(),
        "add `system.packages += [\"gcc\", \"libc6-dev\", \"libpq-dev\"]`"
    );
    let after = env("\"gcc\", \"libc6-dev\", \"libpq-dev\"");
    let o = doctor(&[("db.env.scl", &after)], &["db.env.scl"], Smi::Absent);
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    assert!(o.stderr.is_empty(), "{}", shown(&o));
}
