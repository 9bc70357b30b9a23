//! Every file in `examples/`: `sclc check` passes, `sclc ir` is byte-identical
//! on two runs and matches its snapshot, `sclc build --target docker`
//! writes the snapshotted Dockerfiles, and `--target all` plus `trainjob`
//! write snapshotted files of every target, whose manifests validate. Plus the review property of the BERT
//! scenario: `--set gpu_count=4` changes the GPU counts and switches on
//! distributed training, and nothing else.

mod common;
use common::*;

fn snapshot_name(rel: &str) -> String {
    rel.replace(".env.scl", "").replace(['/', '.'], "__")
}

#[test]
fn examples_check_and_ir_is_stable() {
    let repo = repo();
    let files = scl_files(&repo.join("examples"));
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let rel = f.strip_prefix(&repo).unwrap().to_string_lossy().to_string();
        let check = sclc(&repo, &["check", &rel]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{rel}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        let a = sclc(&repo, &["ir", &rel]);
        let b = sclc(&repo, &["ir", &rel]);
        assert_eq!(
            a.status.code(),
            Some(0),
            "{rel}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(a.stdout, b.stdout, "{rel}: IR differs between two runs");
        let ir = String::from_utf8(a.stdout).unwrap();
        insta::assert_snapshot!(format!("ir__{}", snapshot_name(&rel)), ir);
    }
}

#[test]
fn examples_lower_to_dockerfiles() {
    let repo = repo();
    for f in scl_files(&repo.join("examples")) {
        let rel = f.strip_prefix(&repo).unwrap().to_string_lossy().to_string();
        let out = tempfile::tempdir().unwrap();
        let o = out.path().to_str().unwrap();
        let r = sclc(&repo, &["build", &rel, "--target", "docker", "--out", o]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "{rel}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let written: Vec<String> = files_below(out.path(), &|_| true)
            .iter()
            .map(|p| {
                p.strip_prefix(out.path())
                    .unwrap()
                    .to_string_lossy()
                    .to_string()
            })
            .collect();
        assert!(
            !written.iter().any(|w| w.contains(".sclc-tmp")),
            "temporary folder left behind: {written:?}"
        );
        assert!(
            written.iter().any(|w| w.ends_with(".sclc-output")),
            "env folders carry the sclc marker: {written:?}"
        );
        for w in written.iter().filter(|w| !w.ends_with(".sclc-output")) {
            let text = std::fs::read_to_string(out.path().join(w)).unwrap();
            insta::assert_snapshot!(
                format!(
                    "docker__{}__{}",
                    snapshot_name(&rel),
                    w.replace(['/', '.'], "_")
                ),
                text
            );
        }
        assert!(
            written.iter().any(|w| w.ends_with("Dockerfile")),
            "{rel}: no Dockerfile in {written:?}"
        );
    }
}

#[test]
fn provenance_names_the_env_and_line_of_each_field() {
    let repo = repo();
    let r = sclc(
        &repo,
        &[
            "ir",
            "examples/bert-finetune/train.env.scl",
            "--env",
            "bert_train",
            "--provenance",
        ],
    );
    assert_eq!(r.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let p = &v["provenance"];
    assert_eq!(p["base"]["env"], "python_env");
    assert_eq!(p["base"]["file"], "base.env.scl");
    assert_eq!(p["base"]["line"], 5);
    assert_eq!(p["system.packages"]["env"], "bert_train");
    assert!(
        p["system.packages"].get("replaced").is_none(),
        "`+=` appends, it replaces nothing"
    );
    assert_eq!(p["workdir"]["env"], "python_env");
    assert_eq!(p["resources.requests.memory"]["line"], 18);
    insta::assert_snapshot!(
        "provenance__bert_train",
        String::from_utf8(r.stdout).unwrap()
    );
}

#[test]
fn gpu_count_4_switches_on_distributed_training_and_nothing_else() {
    let repo = repo();
    let one = sclc(
        &repo,
        &[
            "ir",
            "examples/bert-finetune/train.env.scl",
            "--env",
            "bert_train",
        ],
    );
    let four = sclc(
        &repo,
        &[
            "ir",
            "examples/bert-finetune/train.env.scl",
            "--env",
            "bert_train",
            "--set",
            "gpu_count=4",
        ],
    );
    assert_eq!(
        four.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&four.stderr)
    );
    let mut a: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&four.stdout).unwrap();
    assert_eq!(b["resources"]["requests"]["gpu"]["count"], 4);
    assert_eq!(b["resources"]["limits"]["gpu"]["count"], 4);
    assert_eq!(b["distributed"]["procs_per_node"], 4);
    assert_eq!(b["distributed"]["nodes"], 1);
    assert!(a.get("distributed").is_none());
    a["resources"]["requests"]["gpu"]["count"] = 4.into();
    a["resources"]["limits"]["gpu"]["count"] = 4.into();
    a["distributed"] = b["distributed"].clone();
    assert_eq!(a, b, "only the GPU counts and `distributed` may change");
}

#[test]
fn set_value_violating_where_is_reported_on_the_command_line() {
    let repo = repo();
    let r = sclc(
        &repo,
        &[
            "ir",
            "examples/bert-finetune/train.env.scl",
            "--set",
            "gpu_count=9",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(r.status.code(), Some(1));
    let s = String::from_utf8_lossy(&r.stderr);
    assert!(
        s.contains("\"file\":\"<command-line>\"")
            && s.contains("\"code\":\"E0303\"")
            && s.contains("\"column\":17"),
        "{s}"
    );
}

/// The Dockerfiles of every example pass hadolint at warning level with the
/// repository's `.hadolint.yaml` (installed by `scripts/install-test-tools.sh`;
/// missing hadolint fails unless `SCL_SKIP_TOOLS=1`).
#[test]
fn example_dockerfiles_pass_hadolint() {
    // As the backends' tests look for it: `$HADOLINT`, then the project's
    // `.venv` (where the install script puts it), then PATH.
    let venv = repo().join(".venv/bin/hadolint");
    let bin = std::env::var("HADOLINT").unwrap_or_else(|_| {
        if venv.is_file() {
            venv.to_string_lossy().into_owned()
        } else {
            "hadolint".into()
        }
    });
    if std::process::Command::new(&bin)
        .arg("--version")
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        if std::env::var("SCL_SKIP_TOOLS").as_deref() == Ok("1") {
            eprintln!("SKIPPED: hadolint not found and SCL_SKIP_TOOLS=1");
            return;
        }
        panic!("hadolint not found: run scripts/install-test-tools.sh (or set SCL_SKIP_TOOLS=1 to skip knowingly)");
    }
    let repo = repo();
    let mut linted = 0;
    for f in scl_files(&repo.join("examples")) {
        let rel = f.strip_prefix(&repo).unwrap().to_string_lossy().to_string();
        let out = tempfile::tempdir().unwrap();
        let r = sclc(
            &repo,
            &[
                "build",
                &rel,
                "--target",
                "docker",
                "--out",
                out.path().to_str().unwrap(),
            ],
        );
        assert_eq!(r.status.code(), Some(0));
        for line in String::from_utf8_lossy(&r.stdout).lines() {
            // After the `wrote` lines come the docker build/run lines.
            let Some(path) = line.strip_prefix("wrote ") else {
                assert!(line.starts_with("docker "), "{line}");
                continue;
            };
            if !path.ends_with("/Dockerfile") {
                continue;
            }
            let o = std::process::Command::new(&bin)
                .args(["--no-color", "--failure-threshold", "warning", "--config"])
                .arg(repo.join(".hadolint.yaml"))
                .arg(path)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{rel}: {path}:\n{}",
                String::from_utf8_lossy(&o.stdout)
            );
            linted += 1;
        }
    }
    assert!(linted >= 10, "only {linted} Dockerfiles linted");
}

/// `build` never replaces a folder it did not write, and rebuilding replaces
/// its own output.
#[test]
fn build_refuses_to_replace_foreign_folders() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("h.env.scl"),
        "env a { base = image(\"debian:12.5\") }\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::write(dir.path().join("a/code.py"), "important").unwrap();
    let r = sclc(
        dir.path(),
        &["build", "h.env.scl", "--target", "docker", "--out", "."],
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("was not written by sclc"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a/code.py")).unwrap(),
        "important"
    );
    for _ in 0..2 {
        let r = sclc(
            dir.path(),
            &["build", "h.env.scl", "--target", "docker", "--out", "out"],
        );
        assert_eq!(
            r.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let names: Vec<String> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    assert_eq!(names, ["a"], "no temporary folder is left behind");
}

/// The IR hash in a Dockerfile's label is the SHA-256 of the exact bytes
/// `sclc ir --env` prints for that env.
#[test]
fn dockerfile_label_is_the_hash_of_the_printed_ir() {
    let repo = repo();
    let ir = sclc(
        &repo,
        &[
            "ir",
            "examples/bert-finetune/train.env.scl",
            "--env",
            "bert_train",
        ],
    );
    let hash = scl_ide::ir::sha256_hex(&ir.stdout);
    let out = tempfile::tempdir().unwrap();
    let r = sclc(
        &repo,
        &[
            "build",
            "examples/bert-finetune/train.env.scl",
            "--target",
            "docker",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert_eq!(r.status.code(), Some(0));
    let dockerfile = std::fs::read_to_string(out.path().join("bert_train/Dockerfile")).unwrap();
    assert!(
        dockerfile.contains(&format!("dev.scl.ir.sha256=\"{hash}\"")),
        "{hash} not in\n{dockerfile}"
    );
}

/// Writes every target (`all`, then `trainjob`) of `rel` under a new folder;
/// returns it and the written files relative to it (marker files left out).
fn build_every_target(repo: &std::path::Path, rel: &str) -> (tempfile::TempDir, Vec<String>) {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    for target in ["all", "trainjob"] {
        let r = sclc(repo, &["build", rel, "--target", target, "--out", o]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "{rel} --target {target}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let written = files_below(out.path(), &|p| !p.ends_with(".sclc-output"))
        .iter()
        .map(|p| {
            p.strip_prefix(out.path())
                .unwrap()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    (out, written)
}

/// Every artifact of every target of every example is snapshotted (the
/// Dockerfiles and their ignore files by `examples_lower_to_dockerfiles`),
/// and `--target all` writes each target's file for every built env.
#[test]
fn examples_lower_to_every_target() {
    let repo = repo();
    let mut kinds = std::collections::BTreeSet::new();
    for f in scl_files(&repo.join("examples")) {
        let rel = f.strip_prefix(&repo).unwrap().to_string_lossy().to_string();
        let (out, written) = build_every_target(&repo, &rel);
        assert!(!written.is_empty(), "{rel}: nothing written");
        for w in &written {
            let name = w.rsplit('/').next().unwrap();
            kinds.insert(name.to_string());
            if name == "Dockerfile" || name.ends_with(".dockerignore") {
                continue;
            }
            let text = std::fs::read_to_string(out.path().join(w)).unwrap();
            insta::assert_snapshot!(
                format!(
                    "all__{}__{}",
                    snapshot_name(&rel),
                    w.replace(['/', '.'], "_")
                ),
                text
            );
        }
    }
    for name in [
        "Dockerfile",
        "apptainer.def",
        "environment.yml",
        "k8s.yaml",
        "trainjob.yaml",
        "compose.yaml",
    ] {
        assert!(kinds.contains(name), "no example wrote a {name}: {kinds:?}");
    }
}

/// The YAML files of every example (Job / PyTorchJob, TrainJob, compose)
/// pass `scripts/validate-manifests.py`: kubernetes-validate --strict for
/// core kinds, the Kubeflow CRDs' and compose-spec's JSON Schemas for the
/// rest (the tools from `scripts/install-test-tools.sh`; missing ones fail
/// unless `SCL_SKIP_TOOLS=1`).
#[test]
fn example_manifests_validate() {
    let repo = repo();
    let python = repo.join(".venv/bin/python");
    let has_tools = std::process::Command::new(&python)
        .args(["-c", "import kubernetes_validate, jsonschema, yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_tools {
        if std::env::var("SCL_SKIP_TOOLS").as_deref() == Ok("1") {
            eprintln!("SKIPPED: .venv lacks kubernetes-validate/jsonschema and SCL_SKIP_TOOLS=1");
            return;
        }
        panic!("kubernetes-validate not found in .venv: run scripts/install-test-tools.sh (or set SCL_SKIP_TOOLS=1 to skip knowingly)");
    }
    let mut checked = 0;
    for f in scl_files(&repo.join("examples")) {
        let rel = f.strip_prefix(&repo).unwrap().to_string_lossy().to_string();
        let (out, written) = build_every_target(&repo, &rel);
        let yamls: Vec<std::path::PathBuf> = written
            .iter()
            .filter(|w| {
                w.ends_with("k8s.yaml")
                    || w.ends_with("trainjob.yaml")
                    || w.ends_with("compose.yaml")
            })
            .map(|w| out.path().join(w))
            .collect();
        if yamls.is_empty() {
            continue;
        }
        let o = std::process::Command::new(&python)
            .arg(repo.join("scripts/validate-manifests.py"))
            .arg("--schemas")
            .arg(repo.join("crates/scl-backends/tests/schemas"))
            .args(&yamls)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["errors"], serde_json::json!([]), "{rel}: {}", v["file"]);
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} manifests validated");
}

/// The image tag the run targets name is a hash of the IR and of the files
/// the build copies: the same on a rebuild (the output folder, inside the
/// copied folder here, is not a source), new when a copied file changes.
#[test]
fn image_tag_follows_copied_sources() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("src")).unwrap();
    std::fs::write(d.join("src/train.py"), "print(1)\n").unwrap();
    std::fs::write(
        d.join("e.env.scl"),
        "env e {\n  base = image(\"debian:12\")\n  files = [{ from = \"./\", to = \"/workspace\" }]\n}\n",
    )
    .unwrap();
    let tag = || {
        let o = sclc(d, &["build", "e.env.scl", "--target", "k8s"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let k8s = std::fs::read_to_string(d.join("out/e/k8s.yaml")).unwrap();
        k8s.lines()
            .find_map(|l| {
                let l = l.trim().trim_start_matches("- ");
                l.strip_prefix("image: ").map(String::from)
            })
            .unwrap()
    };
    let first = tag();
    assert_eq!(tag(), first, "a rebuild keeps the tag");
    std::fs::write(d.join("src/train.py"), "print(2)\n").unwrap();
    let second = tag();
    assert_ne!(second, first, "a changed source file gives a new tag");
    std::fs::write(d.join("src/train.py"), "print(1)\n").unwrap();
    assert_eq!(tag(), first, "the tag is a function of the contents");
}
