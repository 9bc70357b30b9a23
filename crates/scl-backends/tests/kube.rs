//! Tests of the k8s, trainjob and compose targets: snapshots of every
//! artifact of every fixture (`tests/fixtures/*.json` and
//! `tests/fixtures/k8s/*.json`), every file validated by the field's own
//! tools (`scripts/validate-manifests.py`: kubernetes-validate strict for
//! core kinds, the CRDs' schemas for PyTorchJob and TrainJob, compose-spec
//! for compose) and read back by PyYAML (YAML 1.1) and serde_yaml_ng as the
//! same data, a control that wrong manifests are reported, the PyTorchJob
//! rules, secrets, and hostile strings.

mod common;

use common::tools;
use scl_backends::backend::backend;
use scl_backends::{Backend, LowerCx, Lowered};
use scl_ir::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGETS: &[&str] = &["k8s", "trainjob", "compose"];

/// The fixtures a target refuses, with the field refused: OCI label values
/// (a URL, spaces) that are not Kubernetes label values.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "k8s",
        "edge_fedora_uv",
        "labels.org.opencontainers.image.source",
    ),
    (
        "trainjob",
        "edge_fedora_uv",
        "labels.org.opencontainers.image.source",
    ),
];

fn target(name: &str) -> &'static dyn Backend {
    backend(name).unwrap_or_else(|| panic!("no target {name}"))
}

/// Every fixture: the Dockerfile ones and `k8s/`.
fn fixtures() -> Vec<(String, EnvSpec)> {
    let mut v = common::fixtures();
    let dir = common::fixtures_dir().join("k8s");
    let mut extra: Vec<(String, EnvSpec)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            let spec = serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, spec)
        })
        .collect();
    extra.sort_by(|a, b| a.0.cmp(&b.0));
    v.extend(extra);
    v
}

fn fixture(name: &str) -> EnvSpec {
    fixtures().into_iter().find(|(n, _)| n == name).unwrap().1
}

fn lower(t: &str, name: &str, spec: &EnvSpec) -> Lowered {
    target(t).lower(spec, &LowerCx::new(name))
}

/// [`lower`] with `--host-root /shared/project`.
fn lower_host_root(t: &str, name: &str, spec: &EnvSpec) -> Lowered {
    let mut cx = LowerCx::new(name);
    cx.host_root = Some("/shared/project".into());
    target(t).lower(spec, &cx)
}

/// The one artifact's YAML read by serde_yaml_ng.
fn doc(out: &Lowered) -> Value {
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.artifacts.len(), 1, "{:?}", out.artifacts);
    serde_yaml_ng::from_str(&out.artifacts[0].contents).expect("YAML reads back")
}

#[test]
fn every_fixture_snapshots() {
    for t in TARGETS {
        for (name, spec) in fixtures() {
            let out = lower(t, &name, &spec);
            for a in &out.artifacts {
                insta::assert_snapshot!(format!("{t}__{name}__{}", a.path), &a.contents);
            }
            let mut lines: Vec<String> = out
                .warnings
                .iter()
                .map(|w| format!("warning {}: {}", w.field, w.message))
                .collect();
            lines.extend(
                out.errors
                    .iter()
                    .map(|e| format!("error {:?} {}: {}", e.kind, e.field, e.message)),
            );
            insta::assert_snapshot!(format!("{t}__{name}__findings"), lines.join("\n"));
        }
    }
}

#[test]
fn every_fixture_lowers_without_errors() {
    for t in TARGETS {
        for (name, spec) in fixtures() {
            let out = lower(t, &name, &spec);
            if let Some((_, _, field)) = REFUSED.iter().find(|r| r.0 == *t && r.1 == name) {
                assert!(out.artifacts.is_empty());
                assert_eq!(out.errors[0].field, *field);
                continue;
            }
            assert!(out.errors.is_empty(), "{t} {name}: {:?}", out.errors);
            let services = !spec.services.is_empty();
            if services && *t != "compose" {
                assert!(out.artifacts.is_empty(), "{t} {name}");
                assert_eq!(out.warnings.len(), 1, "{t} {name}: {:?}", out.warnings);
                assert_eq!(out.warnings[0].field, "services");
            } else {
                assert_eq!(out.artifacts.len(), 1, "{t} {name}");
                assert_eq!(out.artifacts[0].path, format!("{}.yaml", t));
            }
            // One warning per field.
            let mut fields: Vec<&str> = out.warnings.iter().map(|w| w.field.as_str()).collect();
            let n = fields.len();
            fields.sort();
            fields.dedup();
            assert_eq!(
                fields.len(),
                n,
                "{t} {name}: a field warned twice: {:?}",
                out.warnings
            );
        }
    }
}

/// One file as `validate-manifests.py` prints it.
#[derive(serde::Deserialize, Debug)]
struct Checked {
    file: String,
    kind: Option<String>,
    errors: Vec<String>,
    parsed: Option<Value>,
}

fn validate(files: &[PathBuf]) -> Option<Vec<Checked>> {
    let python = tools::require(
        "a Python with kubernetes_validate, jsonschema and yaml",
        find_python(),
    )?;
    let out = Command::new(python)
        .arg(tools::repo_root().join("scripts/validate-manifests.py"))
        .arg("--schemas")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas"))
        .args(files)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "validate-manifests.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<Checked> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(v.len(), files.len());
    Some(v)
}

fn find_python() -> Option<PathBuf> {
    let test = ["-c", "import kubernetes_validate, jsonschema, yaml"];
    let ok = |p: &Path| matches!(Command::new(p).args(test).output(), Ok(o) if o.status.success());
    if let Ok(p) = std::env::var("SCL_PYTHON") {
        return ok(Path::new(&p)).then(|| PathBuf::from(p));
    }
    let venv = tools::repo_root().join(".venv/bin/python");
    if ok(&venv) {
        return Some(venv);
    }
    ok(Path::new("python3")).then(|| PathBuf::from("python3"))
}

/// Writes `files` (name → text) into a new temporary folder.
fn write_all(files: &[(String, String)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = files
        .iter()
        .map(|(n, text)| {
            let p = dir.path().join(n);
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect();
    (dir, paths)
}

#[test]
fn every_artifact_validates_and_reads_back_the_same_in_yaml_1_1() {
    let mut files = Vec::new();
    for t in TARGETS {
        for (name, spec) in fixtures() {
            for a in lower(t, &name, &spec).artifacts {
                files.push((format!("{t}-{name}-{}", a.path), a.contents));
            }
            // With --host-root: host volumes as hostPath volumes.
            if *t != "compose" {
                for a in lower_host_root(t, &name, &spec).artifacts {
                    files.push((format!("{t}-{name}-host-root-{}", a.path), a.contents));
                }
            }
        }
    }
    let (_dir, paths) = write_all(&files);
    let Some(checked) = validate(&paths) else {
        return;
    };
    for (c, (n, text)) in checked.iter().zip(&files) {
        assert!(
            c.errors.is_empty(),
            "{n} ({:?}): {:?}\n{text}",
            c.kind,
            c.errors
        );
        let ours: Value = serde_yaml_ng::from_str(text).unwrap();
        assert_eq!(
            c.parsed.as_ref(),
            Some(&json!([ours])),
            "{}: PyYAML reads other data than serde_yaml_ng",
            c.file
        );
    }
}

#[test]
fn the_validator_reports_wrong_manifests() {
    let good_job = doc(&lower("k8s", "bert_train", &fixture("bert_train")));
    let good_ptj = doc(&lower("k8s", "ddp_multinode", &fixture("ddp_multinode")));
    let good_tj = doc(&lower(
        "trainjob",
        "ddp_multinode",
        &fixture("ddp_multinode"),
    ));
    let good_compose = doc(&lower("compose", "sd_stack", &fixture("sd_stack")));
    let mut wrong = Vec::new();
    let mut push = |n: &str, mut v: Value, f: fn(&mut Value)| {
        f(&mut v);
        wrong.push((n.to_string(), serde_yaml_ng::to_string(&v).unwrap()));
    };
    push("job-unknown-field.yaml", good_job.clone(), |v| {
        v["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = json!("Always");
    });
    push("job-cpu-not-quantity.yaml", good_job.clone(), |v| {
        v["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = json!({"cpu": [1]});
    });
    push("ptj-replicas-string.yaml", good_ptj.clone(), |v| {
        v["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!("one");
    });
    push("ptj-template-unknown.yaml", good_ptj.clone(), |v| {
        v["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["gpus"] =
            json!(4);
    });
    push("ptj-nproc-integer.yaml", good_ptj, |v| {
        v["spec"]["nprocPerNode"] = json!(4);
    });
    push("tj-no-runtime.yaml", good_tj, |v| {
        v["spec"].as_object_mut().unwrap().remove("runtimeRef");
    });
    push("compose-unknown.yaml", good_compose.clone(), |v| {
        v["services"]["webui"]["gpus_please"] = json!(true);
    });
    push("compose-bad-port.yaml", good_compose, |v| {
        v["services"]["webui"]["ports"] = json!([{"target": [1]}]);
    });
    let (_dir, paths) = write_all(&wrong);
    let Some(checked) = validate(&paths) else {
        return;
    };
    for (c, (n, _)) in checked.iter().zip(&wrong) {
        assert!(!c.errors.is_empty(), "{n} was not reported");
    }
}

fn replicas(v: &Value, role: &str) -> Option<u64> {
    v["spec"]["pytorchReplicaSpecs"]
        .get(role)
        .map(|r| r["replicas"].as_u64().unwrap())
}

#[test]
fn pytorchjob_rules() {
    // One process: a Job, the command as written.
    let job = doc(&lower("k8s", "bert_train", &fixture("bert_train")));
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["apiVersion"], "batch/v1");
    let gpu = doc(&lower("k8s", "gpu_job", &fixture("gpu_job")));
    assert_eq!(gpu["kind"], "Job", "distributed with one process is a Job");
    let c = &gpu["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["args"], json!(["python3", "infer.py", "--batch", "8"]));
    // GPU requested only in requests goes to limits, never to requests.
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], "1");
    assert!(c["resources"]["requests"].get("nvidia.com/gpu").is_none());
    assert_eq!(c["resources"]["requests"]["cpu"], "1500m");
    assert_eq!(c["resources"]["requests"]["memory"], "16Gi");
    assert_eq!(
        gpu["spec"]["template"]["spec"]["nodeSelector"],
        json!({"nvidia.com/gpu.product": "Tesla-T4"})
    );

    for (nodes, procs) in [(1, 2), (2, 1), (2, 4), (4, 1), (5, 3), (1, 1), (3, 8)] {
        let mut spec = fixture("ddp_multinode");
        spec.distributed.as_mut().unwrap().nodes = nodes;
        spec.distributed.as_mut().unwrap().procs_per_node = procs;
        let v = doc(&lower("k8s", "ddp_multinode", &spec));
        if nodes * procs == 1 {
            assert_eq!(v["kind"], "Job");
            continue;
        }
        assert_eq!(v["kind"], "PyTorchJob");
        assert_eq!(v["apiVersion"], "kubeflow.org/v1");
        assert_eq!(v["spec"]["nprocPerNode"], json!(procs.to_string()));
        assert_eq!(replicas(&v, "Master"), Some(1), "exactly one Master");
        if nodes == 1 {
            assert!(
                v["spec"]["pytorchReplicaSpecs"].get("Worker").is_none(),
                "no Worker key"
            );
        } else {
            assert_eq!(replicas(&v, "Worker"), Some(u64::from(nodes - 1)));
        }
        let roles = v["spec"]["pytorchReplicaSpecs"].as_object().unwrap();
        for (role, r) in roles {
            assert!(role == "Master" || role == "Worker");
            assert_eq!(r["restartPolicy"], "OnFailure");
            let pod = &r["template"]["spec"];
            let c = &pod["containers"][0];
            assert_eq!(pod["containers"].as_array().unwrap().len(), 1);
            assert_eq!(c["name"], "pytorch");
            assert_eq!(c["command"], json!(["torchrun"]));
            assert_eq!(c["args"], json!(["-m", "trainer.main", "--epochs", "3"]));
            assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], "4");
            assert!(c["resources"]["requests"].get("nvidia.com/gpu").is_none());
            assert_eq!(c["resources"]["requests"]["cpu"], "16500m");
            assert_eq!(c["resources"]["limits"]["memory"], "256Gi");
            assert_eq!(
                pod["nodeSelector"],
                json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})
            );
            assert_eq!(
                pod["securityContext"],
                json!({"runAsNonRoot": true, "runAsUser": 1000})
            );
        }
        let name = v["metadata"]["name"].as_str().unwrap();
        assert_eq!(name, "ddp-multinode", "a DNS-1035 label");
    }

    let single = doc(&lower(
        "k8s",
        "single_node_multi",
        &fixture("single_node_multi"),
    ));
    assert!(single["spec"]["pytorchReplicaSpecs"]
        .get("Worker")
        .is_none());
    let pod = &single["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["args"], json!(["train.py", "--bf16"]));
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.example.com/accelerator": "h100"})
    );
    assert_eq!(pod["securityContext"], json!({"runAsUser": 0}));

    // Different GPU counts in requests and limits are refused.
    let mut spec = fixture("ddp_multinode");
    let r = spec.resources.as_mut().unwrap();
    r.requests.as_mut().unwrap().gpu.as_mut().unwrap().count = 2;
    let out = lower("k8s", "ddp_multinode", &spec);
    assert!(out.artifacts.is_empty());
    assert_eq!(out.errors[0].field, "resources.requests.gpu");

    // TrainJob: nodes and processes per node.
    let tj = doc(&lower(
        "trainjob",
        "ddp_multinode",
        &fixture("ddp_multinode"),
    ));
    assert_eq!(
        tj["spec"]["runtimeRef"],
        json!({"name": "torch-distributed"})
    );
    assert_eq!(tj["spec"]["trainer"]["numNodes"], 2);
    assert_eq!(tj["spec"]["trainer"]["numProcPerNode"], 4);
    assert_eq!(tj["spec"]["trainer"]["command"], json!(["torchrun"]));
    assert!(!target("trainjob").in_all());
}

#[test]
fn volumes_and_names() {
    let v = doc(&lower("k8s", "ddp_multinode", &fixture("ddp_multinode")));
    let pod = &v["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"];
    assert_eq!(
        pod["volumes"],
        json!([
            {"name": "corpus", "persistentVolumeClaim": {"claimName": "corpus", "readOnly": true}},
            {"name": "ckpt", "persistentVolumeClaim": {"claimName": "llm-checkpoints"}},
        ])
    );
    let out = lower("k8s", "ddp_multinode", &fixture("ddp_multinode"));
    let fields: Vec<&str> = out.warnings.iter().map(|w| w.field.as_str()).collect();
    assert!(
        fields.contains(&"volumes[0]"),
        "the s3 claim must exist: {fields:?}"
    );
    assert!(
        fields.contains(&"volumes[2]"),
        "the host volume is left out: {fields:?}"
    );
    let nfs = doc(&lower("k8s", "resnet50", &fixture("resnet50")));
    assert_eq!(
        nfs["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"][0]["nfs"],
        json!({"server": "nfs.internal", "path": "/exports/imagenet", "readOnly": true})
    );
    // An env name with no letter: no object name, an error on "".
    let out = lower("k8s", "__9", &fixture("bert_train"));
    assert!(out.artifacts.is_empty());
    assert_eq!(out.errors[0].field, "");
    // compose: build context and Dockerfile by the documented rule.
    let c = doc(&lower("compose", "sd_stack", &fixture("sd_stack")));
    assert_eq!(
        c["services"]["webui"]["build"],
        json!({"context": "${SCL_WORKSPACE:-../..}", "dockerfile": "${SCL_OUT:-out}/sd_stack/webui/Dockerfile"})
    );
    let c = doc(&lower("compose", "bert_train", &fixture("bert_train")));
    assert_eq!(
        c["services"]["bert-train"]["build"]["dockerfile"],
        "${SCL_OUT:-out}/bert_train/Dockerfile"
    );
    assert_eq!(
        c["services"]["bert-train"]["deploy"]["resources"]["reservations"]["devices"],
        json!([{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}])
    );
}

/// `host:` volumes: left out without `--host-root`; with it, a hostPath
/// volume of type Directory below the nodes' workspace path, with a warning.
/// (TrainJob has no volumes: the runtime's pod template does.)
#[test]
fn host_volumes_become_host_paths_under_host_root() {
    let out = lower_host_root("k8s", "ddp_multinode", &fixture("ddp_multinode"));
    let text = &out.artifacts[0].contents;
    let v: Value = serde_yaml_ng::from_str(text).unwrap();
    let vols = &v["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["volumes"];
    let spec = fixture("ddp_multinode");
    assert_eq!(&*spec.volumes[2].source, "host:cache");
    assert!(
        vols.as_array().unwrap().contains(&json!({
            "name": "cache",
            "hostPath": {"path": "/shared/project/cache", "type": "Directory"}
        })),
        "{vols}"
    );
    let w: Vec<&str> = out
        .warnings
        .iter()
        .filter(|w| w.field == "volumes[2]")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        w,
        ["`host:cache` becomes the hostPath `/shared/project/cache`: every node that may run the pod must have that folder (a shared file system), and a hostPath gives the pod the node's files directly"]
    );
}

/// The docker target's Dockerfile paths are the ones compose names.
#[test]
fn compose_names_the_docker_targets_dockerfiles() {
    for (name, spec) in fixtures() {
        let docker = scl_backends::docker::lower(&spec, &name);
        if !docker.errors.is_empty() {
            continue;
        }
        let c = doc(&lower("compose", &name, &spec));
        for (_, s) in c["services"].as_object().unwrap() {
            let df = s["build"]["dockerfile"].as_str().unwrap();
            let rel = df
                .strip_prefix(&format!("${{SCL_OUT:-out}}/{name}/"))
                .unwrap();
            assert!(
                docker.artifact(rel).is_some(),
                "{name}: {rel} is not written by docker"
            );
        }
    }
}

#[test]
fn secrets_are_references_never_values() {
    for (name, spec) in fixtures() {
        let secrets: Vec<(&std::sync::Arc<str>, &SecretRef)> = spec
            .vars
            .iter()
            .filter_map(|(k, v)| match v {
                VarValue::Secret(r) => Some((k, r)),
                _ => None,
            })
            .collect();
        if secrets.is_empty() || REFUSED.iter().any(|r| r.1 == name) {
            continue;
        }
        let k = doc(&lower("k8s", &name, &spec));
        let pod = if k["kind"] == "Job" {
            k["spec"]["template"]["spec"].clone()
        } else {
            k["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"].clone()
        };
        let env = pod["containers"][0]["env"].as_array().unwrap().clone();
        let tj = doc(&lower("trainjob", &name, &spec));
        let tenv = tj["spec"]["trainer"]["env"].as_array().unwrap().clone();
        let c = doc(&lower("compose", &name, &spec));
        let (_, svc) = c["services"].as_object().unwrap().iter().next().unwrap();
        let cenv: Vec<&str> = svc["environment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for (key, r) in secrets {
            for env in [&env, &tenv] {
                let e = env.iter().find(|e| e["name"] == json!(key)).unwrap();
                assert_eq!(
                    e,
                    &json!({"name": key, "valueFrom": {"secretKeyRef": {"name": r.secret, "key": r.key}}}),
                    "{name}"
                );
            }
            let line = cenv
                .iter()
                .find(|l| l.starts_with(&format!("{key}=")))
                .unwrap();
            assert!(
                line.starts_with(&format!("{key}=${{{key}:?")),
                "{name}: {line}"
            );
        }
    }
}

/// The hostile corpus: YAML-special characters and words.
const HOSTILE: &[&str] = &[
    ": # - ? { } [ ] & * ! | > ' \" % @ \\",
    "a: b",
    "- item",
    "? key",
    "{a: 1}",
    "[1, 2]",
    "&anchor",
    "*alias",
    "!tag",
    "| block",
    "> folded",
    "'single'",
    "\"double\"",
    "%YAML 1.1",
    "@at",
    "`tick`",
    "back\\slash",
    "new\nline",
    "two\n\nlines\n",
    "  leading spaces",
    "trailing spaces  ",
    "\ttab",
    "yes",
    "no",
    "on",
    "Off",
    "y",
    "null",
    "Null",
    "~",
    "",
    "0x1",
    "0o17",
    "012",
    "1_000",
    "1e3",
    "1:20",
    "8000:22",
    "2024-01-31",
    ".inf",
    "-.inf",
    "NaN",
    "<<",
    "=",
    "true",
    "3.0",
    "--- doc",
    "...",
    "#comment",
    "a #b",
    "$HOME",
    "${X:?boom}",
    "$$",
    "ünïcödé ✓ 模型",
    "\u{85}nel\u{2028}ls",
    "cr\rx",
    "nul\0x",
    "\u{feff}bom",
];

/// Where a hostile value is put, and where it must come back.
struct Field {
    name: &'static str,
    set: fn(&mut EnvSpec, &str),
    /// The value in the parsed file (compose's `$$` undone), per target.
    get: fn(&str, &Value) -> Option<String>,
}

fn pod_spec(v: &Value) -> &Value {
    if v["kind"] == "Job" {
        &v["spec"]["template"]["spec"]
    } else {
        &v["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    }
}

fn container<'a>(t: &str, v: &'a Value) -> &'a Value {
    match t {
        "k8s" => &pod_spec(v)["containers"][0],
        "trainjob" => &v["spec"]["trainer"],
        _ => &v["services"]["t"],
    }
}

fn unescape(t: &str, s: &str) -> String {
    if t == "compose" {
        s.replace("$$", "$")
    } else {
        s.to_string()
    }
}

fn env_of(t: &str, v: &Value, key: &str) -> Option<String> {
    let c = container(t, v);
    if t == "compose" {
        let list = c["environment"].as_array()?;
        list.iter().find_map(|l| {
            l.as_str()?
                .strip_prefix(&format!("{key}="))
                .map(|s| unescape(t, s))
        })
    } else {
        c["env"]
            .as_array()?
            .iter()
            .find(|e| e["name"] == key)
            .and_then(|e| e["value"].as_str().map(str::to_string))
    }
}

const FIELDS: &[Field] = &[
    Field {
        name: "vars.V",
        set: |s, x| {
            s.vars.insert("V".into(), VarValue::Plain(x.into()));
        },
        get: |t, v| env_of(t, v, "V"),
    },
    Field {
        name: "command",
        set: |s, x| s.command = vec!["run.py".into(), x.into()],
        get: |t, v| {
            let c = container(t, v);
            let args = if t == "compose" {
                &c["command"]
            } else {
                &c["args"]
            };
            args[1].as_str().map(|s| unescape(t, s))
        },
    },
    Field {
        name: "labels.app",
        set: |s, x| {
            s.labels.insert("app".into(), x.into());
        },
        get: |t, v| match t {
            "compose" => v["services"]["t"]["labels"]
                .as_array()?
                .iter()
                .find_map(|l| l.as_str()?.strip_prefix("app=").map(|s| unescape(t, s))),
            _ => v["metadata"]["labels"]["app"].as_str().map(str::to_string),
        },
    },
    Field {
        name: "description",
        set: |s, x| s.description = Some(x.into()),
        get: |t, v| match t {
            "compose" => Some(String::new()),
            _ => v["metadata"]["annotations"]["scl.dev/description"]
                .as_str()
                .map(str::to_string),
        },
    },
];

fn hostile_base() -> EnvSpec {
    EnvSpec {
        base: Some(ImageRef {
            reference: "debian:12.5".into(),
            digest: None,
        }),
        workdir: Some("/workspace".into()),
        user: Some(User {
            name: "app".into(),
            uid: 1000,
        }),
        ..Default::default()
    }
}

#[test]
fn hostile_strings_come_back_unchanged_or_are_refused() {
    let mut files = Vec::new();
    let mut expected: Vec<(String, String, &'static Field, String)> = Vec::new();
    for t in TARGETS {
        for f in FIELDS {
            for (i, x) in HOSTILE.iter().enumerate() {
                let mut spec = hostile_base();
                (f.set)(&mut spec, x);
                let out = lower(t, "t", &spec);
                if !out.errors.is_empty() {
                    assert!(out.artifacts.is_empty());
                    for e in &out.errors {
                        assert!(
                            e.field == f.name || e.field.starts_with(&format!("{}[", f.name)),
                            "{t} {}: {x:?} refused on another field: {e:?}",
                            f.name
                        );
                    }
                    continue;
                }
                let v = doc(&out);
                if *t == "compose" && f.name == "description" {
                    continue;
                }
                assert_eq!((f.get)(t, &v).as_deref(), Some(*x), "{t} {}: {x:?}", f.name);
                let file = format!("{t}-{}-{i}.yaml", f.name.replace('.', "_"));
                files.push((file.clone(), out.artifacts[0].contents.clone()));
                expected.push((t.to_string(), file, f, x.to_string()));
            }
        }
    }
    // Plain words the backends must write, not refuse.
    for x in [
        "plain",
        "a: b",
        "null",
        "~",
        "0x1",
        "new\nline",
        "  leading spaces",
    ] {
        for t in TARGETS {
            let mut spec = hostile_base();
            spec.vars.insert("V".into(), VarValue::Plain(x.into()));
            assert!(lower(t, "t", &spec).errors.is_empty(), "{t}: {x:?} refused");
        }
    }
    // And a YAML 1.1 reader (PyYAML) reads every accepted file the same.
    let (_dir, paths) = write_all(&files);
    let Some(checked) = validate(&paths) else {
        return;
    };
    for (c, (t, file, f, x)) in checked.iter().zip(&expected) {
        assert!(c.errors.is_empty(), "{file}: {:?}", c.errors);
        let parsed = &c.parsed.as_ref().unwrap()[0];
        assert_eq!(
            (f.get)(t, parsed).as_deref(),
            Some(x.as_str()),
            "{file} read by PyYAML"
        );
    }
}

#[test]
fn hostile_names_are_refused_with_field_errors() {
    for (key, value, field) in [
        ("a b", "v", "labels.a b"),
        ("x", "a b", "labels.x"),
        ("x", &"a".repeat(64) as &str, "labels.x"),
        ("-x", "v", "labels.-x"),
    ] {
        let mut spec = hostile_base();
        spec.labels.insert(key.into(), value.into());
        let out = lower("k8s", "t", &spec);
        assert!(out.artifacts.is_empty(), "{key}={value}");
        assert_eq!(out.errors[0].field, field);
    }
    for name in ["A B", "1X", "X=Y", "a\nb"] {
        let mut spec = hostile_base();
        spec.vars.insert(name.into(), VarValue::Plain("v".into()));
        let out = lower("k8s", "t", &spec);
        assert!(out.artifacts.is_empty(), "{name:?}");
        assert_eq!(out.errors[0].field, format!("vars.{name}"));
    }
    let mut spec = hostile_base();
    spec.vars.insert(
        "S".into(),
        VarValue::Secret(SecretRef {
            secret: "Not A Name".into(),
            key: "k".into(),
        }),
    );
    assert_eq!(lower("k8s", "t", &spec).errors[0].field, "vars.S");
}

/// compose passes the docker target's build secrets to the build: each id
/// the Dockerfile mounts is in `build.secrets` and declared at the top level,
/// read from the environment variable `sclc build` names; the file
/// validates against compose-spec.json and holds no secret value.
#[test]
fn compose_passes_build_secrets() {
    use scl_ir::{Asset, SecretRef};
    let mut spec = fixture("bert_train");
    spec.assets.push(Asset::Huggingface {
        files: vec![],
        repo: "meta-llama/Llama-3.1-8B".into(),
        revision: "0e9e39f249a16976918f6564b8830bc894c89659".into(),
        to: "/models/llama".into(),
        token: Some(SecretRef {
            secret: "hf".into(),
            key: "token".into(),
        }),
    });
    spec.python.as_mut().unwrap().index_credentials = Some(SecretRef {
        secret: "pypi-private".into(),
        key: "netrc".into(),
    });
    let out = lower("compose", "bert_train", &spec);
    let c = doc(&out);
    assert_eq!(
        c["services"]["bert-train"]["build"]["secrets"],
        json!(["hf.token", "pypi-private.netrc"])
    );
    assert_eq!(
        c["secrets"],
        json!({
            "hf.token": {"environment": "HF_TOKEN"},
            "pypi-private.netrc": {"environment": "PYPI_PRIVATE_NETRC"},
        })
    );
    let files = vec![(
        "compose.yaml".to_string(),
        out.artifacts[0].contents.clone(),
    )];
    let (_dir, paths) = write_all(&files);
    if let Some(checked) = validate(&paths) {
        assert!(checked[0].errors.is_empty(), "{:?}", checked[0].errors);
    }
}
