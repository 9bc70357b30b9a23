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
    // by the lookup (E0311, naming the nearest), and nothing else is; a CUDA
    // without a 22.04 image (11.0–11.6) takes the newest Ubuntu that has one.
    for (t, codes) in &refused {
        assert_eq!(codes, &vec!["E0311".to_string()], "torch {t}");
        let major: u32 = t.split('.').next().unwrap().parse().unwrap();
        let minor: u32 = t.split('.').nth(1).unwrap().parse().unwrap();
        assert!(
            major == 1 && minor <= 6,
            "torch {t} should have an image: {codes:?}"
        );
    }
    assert!(clean >= 35, "{clean} clean, refused: {refused:?}");
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
