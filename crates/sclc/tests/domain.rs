//! The domain knowledge end to end: `std/pytorch-cuda` on every torch
//! release of the tables, the wheel index a `+cuXYZ` pin gets in every
//! target, and `sclc check --driver`'s usage errors. The checks' exact
//! diagnostics are cases in `tests/diagnostics/domain_*`.

mod common;
use common::*;

fn write(dir: &std::path::Path, text: &str) {
    std::fs::write(dir.join("m.env.scl"), text).unwrap();
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The torch releases of `std/compat` (its `torch` table's keys).
fn releases() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("stdlib/compat.env.scl")).unwrap();
    let table = text.split("let torch = {").nth(1).unwrap();
    let table = table.split("\n}").next().unwrap();
    table
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"'))
        .filter_map(|l| l.split('"').next())
        .map(String::from)
        .collect()
}

/// Every torch release with a CUDA variant that has an `nvidia/cuda` image
/// checks cleanly with the template's defaults (its newest CUDA, Ubuntu
/// 22.04's Python); the others give exactly the error that names why.
#[test]
fn the_template_checks_cleanly_for_every_release_with_an_image() {
    let rels = releases();
    assert!(rels.len() >= 40, "{rels:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut clean = 0;
    let mut refused = Vec::new();
    for t in &rels {
        write(
            dir.path(),
            &format!(
                "import \"std/pytorch-cuda\" as torch\nenv job extends torch.runtime(torch = \"{t}\") {{}}\n"
            ),
        );
        let out = sclc(
            dir.path(),
            &["check", "m.env.scl", "--message-format", "json"],
        );
        if out.status.success() && out.stderr.is_empty() {
            clean += 1;
            continue;
        }
        let codes: Vec<String> = stderr(&out)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["code"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        refused.push((t.clone(), codes));
    }
    // The releases whose newest CUDA has no nvidia/cuda image at all (the
    // table starts at CUDA 11.0: torch 1.6 and older, CUDA 10.x) are refused
    // by the lookup (E0311, naming the nearest); torch 1.7 to 1.10, whose
    // CUDA wheels are only on the find-links page, by E0512 for the torch
    // and torchvision pins, and for torchaudio from 0.10 (torch 1.10) on,
    // which had no CUDA variants before; nothing else is. A CUDA without a 22.04 image (11.0–11.6) takes the newest
    // Ubuntu that has one.
    for (t, codes) in &refused {
        let major: u32 = t.split('.').next().unwrap().parse().unwrap();
        let minor: u32 = t.split('.').nth(1).unwrap().parse().unwrap();
        assert_eq!(major, 1, "torch {t} should check cleanly: {codes:?}");
        let want: &[&str] = if minor <= 6 {
            &["E0311"]
        } else if minor <= 9 {
            &["E0512", "E0512"]
        } else if minor == 10 {
            &["E0512", "E0512", "E0512"]
        } else {
            &[]
        };
        assert_eq!(codes, want, "torch {t}");
    }
    assert!(clean >= 27, "{clean} clean, refused: {refused:?}");
    // Every release was either clean or refused for that reason.
    assert_eq!(refused.len() + clean, rels.len());
}

/// The three kinds of instance: defaults, explicit CUDA and flavour, the
/// official image — as IR.
#[test]
fn template_instances_as_ir() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        r#"import "std/pytorch-cuda" as torch
env defaults extends torch.runtime(torch = "2.8.0") {}
env devel extends torch.runtime(torch = "2.1.2", cuda = "11.8", flavor = .devel) {}
env noble extends torch.runtime(torch = "2.7.1", cuda = "12.8", os = "ubuntu24.04") {}
env official extends torch.runtime(torch = "2.1.2", cuda = "11.8", image = .official) {}
"#,
    );
    let out = sclc(dir.path(), &["check", "m.env.scl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let out = sclc(dir.path(), &["ir", "m.env.scl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(
        "template_instances_ir",
        String::from_utf8(out.stdout).unwrap()
    );
}

/// A CUDA with no `nvidia/cuda` image is an error at the instance that
/// names the nearest versions that have one.
#[test]
fn a_cuda_without_an_image_names_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "import \"std/pytorch-cuda\" as torch\nenv job extends torch.runtime(torch = \"2.6.0\", cuda = \"12.7\") {}\n",
    );
    let out = sclc(
        dir.path(),
        &["check", "m.env.scl", "--message-format", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["code"], "E0311");
    assert_eq!(lines[0]["file"], "m.env.scl");
    assert_eq!(lines[0]["message"], "no key \"12.7\" in this map");
    assert!(
        lines[0]["help"]
            .as_str()
            .unwrap()
            .starts_with("the nearest that exist: \"12.6\", \"12.8\"; keys:"),
        "{}",
        lines[0]["help"]
    );
}

/// A torch series written without its patch (`"2.5"`) is one error, at the
/// lookup, naming the releases of that series; the defaults that read the
/// failed argument (`os`, `python`) add no `unknown name` errors inside the
/// template, and the key list is in version order, newest last.
#[test]
fn a_torch_series_names_its_releases_and_nothing_cascades() {
    let dir = tempfile::tempdir().unwrap();
    let lines = diagnostics_of(
        dir.path(),
        "import \"std/pytorch-cuda\" as torch\nenv job extends torch.runtime(torch = \"2.5\") {}\n",
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["code"], "E0311");
    assert_eq!(lines[0]["message"], "no key \"2.5\" in this map");
    let help = lines[0]["help"].as_str().unwrap();
    assert!(
        help.starts_with("the nearest that exist: \"2.5.0\", \"2.5.1\"; keys: …, "),
        "{help}"
    );
    assert!(help.ends_with("\"2.10.0\", \"2.11.0\""), "{help}");
}

/// A `+cuXYZ` pin (in `python.packages` or a requirements file) gets its
/// wheel index as an extra index, once, in every target that installs
/// Python packages; an index the env names already is not added again.
#[test]
fn a_cuda_pin_gets_its_wheel_index_in_every_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("requirements.txt"),
        "torchaudio==2.1.2+cu121\n",
    )
    .unwrap();
    write(
        dir.path(),
        r#"env job {
  base = image("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04")
  python.version = "3.10"
  python.packages = ["torch==2.1.2+cu121", "torchvision==0.16.2+cu121"]
  python.requirements = [file("./requirements.txt")]
}
env named {
  base = image("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04")
  python.version = "3.10"
  python.extra_index_urls = ["https://download.pytorch.org/whl/cu121"]
  python.packages = ["torch==2.1.2+cu121"]
}
"#,
    );
    let out = sclc(dir.path(), &["ir", "m.env.scl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ir: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for env in ["job", "named"] {
        assert_eq!(
            ir[env]["python"]["extra_index_urls"],
            serde_json::json!(["https://download.pytorch.org/whl/cu121"]),
            "{env}"
        );
    }
    let out_dir = dir.path().join("out");
    let o = out_dir.display().to_string();
    let out = sclc(
        dir.path(),
        &[
            "build",
            "m.env.scl",
            "--env",
            "job",
            "--target",
            "all",
            "--out",
            &o,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for f in ["Dockerfile", "apptainer.def", "environment.yml"] {
        let text = std::fs::read_to_string(out_dir.join("job").join(f)).unwrap();
        assert!(
            text.contains("--extra-index-url")
                && text.contains("https://download.pytorch.org/whl/cu121"),
            "{f}:\n{text}"
        );
    }
}

#[test]
fn driver_must_be_a_version() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "env job { base = image(\"debian:12.5\") }\n");
    for bad in ["abc", "", "535.x"] {
        let out = sclc(dir.path(), &["check", "m.env.scl", "--driver", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            stderr(&out).contains("is not an NVIDIA driver version"),
            "{}",
            stderr(&out)
        );
    }
    // A driver new enough for everything is no diagnostic.
    let out = sclc(dir.path(), &["check", "m.env.scl", "--driver", "580.65.06"]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
}

/// The diagnostics `sclc check` gives for `text` (one env file), as JSON.
fn diagnostics_of(dir: &std::path::Path, text: &str) -> Vec<serde_json::Value> {
    write(dir, text);
    let out = sclc(dir, &["check", "m.env.scl", "--message-format", "json"]);
    stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first text in backticks of `help` that starts with `prefix`.
fn backticked<'a>(help: &'a str, prefix: &str) -> Option<&'a str> {
    help.split('`')
        .skip(1)
        .step_by(2)
        .find(|t| t.starts_with(prefix))
}

/// Every help that names a replacement names one that exists: applied to
/// the env, it clears the finding and brings no other (the E0501 help once
/// named `+cu122`, which torch 2.1.2 does not have; the E0508 help named a
/// CUDA 12.1 tag on Ubuntu 24.04; the E0505 help `cudatoolkit=12.8`).
#[test]
fn helps_that_name_a_replacement_clear_the_finding() {
    let dir = tempfile::tempdir().unwrap();
    // (code, the env, the prefix of the replacement in the help, the text
    // of the env it replaces: `None` for the backticked text's own kind)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "E0508",
            "nvidia/cuda:12.1-runtime-ubuntu24.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.1-runtime-ubuntu24.04",
        ),
        (
            "E0508",
            "nvidia/cuda:12.4-cudnn8-devel-ubuntu22.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.4-cudnn8-devel-ubuntu22.04",
        ),
        (
            "E0508",
            "nvidia/cuda:12.4.1-cudnn9-runtime-ubuntu22.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.4.1-cudnn9-runtime-ubuntu22.04",
        ),
        (
            "E0508",
            "nvidia/cuda:12.1.1",
            "nvidia/cuda:",
            "nvidia/cuda:12.1.1",
        ),
        (
            "E0508",
            "nvidia/cuda:12.5.0-cudnn-devel-ubuntu22.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.5.0-cudnn-devel-ubuntu22.04",
        ),
        (
            "E0508",
            "nvidia/cuda:12.4-runtime-ubi9",
            "nvidia/cuda:",
            "nvidia/cuda:12.4-runtime-ubi9",
        ),
        (
            "E0508",
            "nvidia/cuda:12.4.1-CUDNN-devel-ubuntu22.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.4.1-CUDNN-devel-ubuntu22.04",
        ),
        (
            "W0509",
            "nvidia/cuda:12.4.7-runtime-ubuntu22.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.4.7-runtime-ubuntu22.04",
        ),
        (
            "W0509",
            "nvidia/cuda:12.1.1-base-ubuntu24.04",
            "nvidia/cuda:",
            "nvidia/cuda:12.1.1-base-ubuntu24.04",
        ),
    ];
    for (code, image, prefix, replaced) in cases {
        let text = format!("env e {{\n  base = image(\"{image}\")\n}}\n");
        let found = diagnostics_of(dir.path(), &text);
        let d = found
            .iter()
            .find(|d| d["code"] == *code)
            .unwrap_or_else(|| panic!("{image}: no {code}: {found:?}"));
        let help = d["help"].as_str().unwrap();
        let fix = backticked(help, prefix).unwrap_or_else(|| panic!("{image}: {help}"));
        let after = diagnostics_of(dir.path(), &text.replace(replaced, fix));
        assert!(after.is_empty(), "{image} → {fix}: {after:?}");
    }

    // Python packages: the pin's replacement.
    let cases: &[(&str, &str, &str, &str)] = &[
        // torch 2.1.2 has no CUDA 12.2 wheel: the help names the image's CUDA
        // it does have instead of `+cu122`.
        (
            "E0501",
            "nvidia/cuda:12.2.2-cudnn8-devel-ubuntu22.04",
            "torch==2.1.2+cu118",
            "nvidia/cuda:",
        ),
        (
            "W0507",
            "nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04",
            "torch==2.6.0+cu124",
            "+cu",
        ),
        // torch 2.1.2 has no CUDA 12.4 wheel: the image of the wheel's CUDA.
        (
            "W0507",
            "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04",
            "torch==2.1.2+cu121",
            "nvidia/cuda:",
        ),
        (
            "W0507",
            "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04",
            "torch==2.5.1+cu121",
            "+cu",
        ),
        ("E0511", "python:3.10-slim", "torch==2.8.0+cu118", "+cu"),
    ];
    for (code, image, pin, prefix) in cases {
        let text =
            format!("env e {{\n  base = image(\"{image}\")\n  python.packages = [\"{pin}\"]\n}}\n");
        let found = diagnostics_of(dir.path(), &text);
        let d = found
            .iter()
            .find(|d| d["code"] == *code)
            .unwrap_or_else(|| panic!("{pin} on {image}: no {code}: {found:?}"));
        let help = d["help"].as_str().unwrap();
        let fix = backticked(help, prefix).unwrap_or_else(|| panic!("{pin}: {help}"));
        let fixed = if *prefix == "+cu" {
            let (release, _) = pin.split_once('+').unwrap();
            text.replace(pin, &format!("{release}{fix}"))
        } else {
            text.replace(image, fix)
        };
        let after = diagnostics_of(dir.path(), &fixed);
        assert!(after.is_empty(), "{pin} on {image} → {fix}: {after:?}");
    }

    // conda CUDA packages: the spec's replacement.
    for (image, spec) in [
        (
            "nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04",
            "cudatoolkit=11.8",
        ),
        (
            "nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04",
            "pytorch-cuda=12.1",
        ),
        (
            "nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04",
            "pytorch-cuda=12.1",
        ),
    ] {
        let text =
            format!("env e {{\n  base = image(\"{image}\")\n  conda.packages = [\"{spec}\"]\n}}\n");
        let found = diagnostics_of(dir.path(), &text);
        let d = found
            .iter()
            .find(|d| d["code"] == "E0505")
            .unwrap_or_else(|| panic!("{spec}: {found:?}"));
        let help = d["help"].as_str().unwrap();
        let fix = help
            .split('`')
            .skip(1)
            .step_by(2)
            .find(|t| t.contains('='))
            .unwrap_or_else(|| panic!("{spec}: {help}"));
        let after: Vec<_> = diagnostics_of(dir.path(), &text.replace(spec, fix))
            .into_iter()
            .filter(|d| d["code"] == "E0505")
            .collect();
        assert!(after.is_empty(), "{spec} → {fix}: {after:?}");
    }

    // The Python: W0506's `python.version` and E0503's Ubuntu release.
    let text = "env e {\n  base = image(\"nvidia/cuda:12.4.1-cudnn-runtime-ubuntu20.04\")\n  python.version = \"3.10\"\n  python.packages = [\"torch==2.5.1+cu124\"]\n}\n";
    let found = diagnostics_of(dir.path(), text);
    let codes: Vec<&str> = found.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["W0506", "E0503"], "{found:?}");
    let e0503 = found[1]["help"].as_str().unwrap();
    let ubuntu = backticked(e0503, "-ubuntu").unwrap();
    let after = diagnostics_of(dir.path(), &text.replace("-ubuntu20.04", ubuntu));
    assert!(after.is_empty(), "{ubuntu}: {after:?}");
    let w0506 = found[0]["help"].as_str().unwrap();
    let version = backticked(w0506, "python.version = ").unwrap();
    let after: Vec<_> = diagnostics_of(
        dir.path(),
        &text.replace("python.version = \"3.10\"", version),
    )
    .into_iter()
    .map(|d| d["code"].as_str().unwrap().to_string())
    .collect();
    assert_eq!(
        after,
        ["E0503"],
        "W0506's fix leaves only the torch range: {version}"
    );
}

/// W0504 in a command line: the help moves the token to the environment
/// (a `$TOKEN` written in an exec-form command is not expanded), and for a
/// build step to a build secret (`vars` do not exist while the image builds).
#[test]
fn a_token_in_a_command_line_gets_a_fix_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let token = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH12";
    let text = format!(
        "env e {{\n  base = image(\"python:3.11-slim\")\n  command = [\"python\", \"train.py\", \"--token\", \"{token}\"]\n  setup = [\"huggingface-cli login --token {token}\"]\n}}\n"
    );
    let found = diagnostics_of(dir.path(), &text);
    let helps: Vec<(&str, &str)> = found
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["help"].as_str().unwrap()))
        .collect();
    assert_eq!(helps.len(), 2, "{found:?}");
    assert!(helps.iter().all(|(c, _)| *c == "W0504"), "{helps:?}");
    let command = helps
        .iter()
        .find(|(_, h)| h.starts_with("pass it in the environment"))
        .unwrap();
    assert!(
        command
            .1
            .contains("`vars.TOKEN = secret(\"token\", key = \"token\")`"),
        "{command:?}"
    );
    assert!(
        helps
            .iter()
            .any(|(_, h)| h.starts_with("remove the token from the build")),
        "{helps:?}"
    );
}
