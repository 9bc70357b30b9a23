//! `sclc diff`: the review of a change, between two files or against a git
//! revision.

mod common;

use common::{repo, sclc};
use std::path::Path;
use std::process::Command;

/// Two copies of the BERT example, `old/` and `new/`, in a fresh folder; the
/// new one with `gpu_count` defaulting to `gpus`.
fn bert_pair(gpus: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples/bert-finetune");
    for side in ["old", "new"] {
        let to = dir.path().join(side);
        std::fs::create_dir(&to).unwrap();
        for e in std::fs::read_dir(&src).unwrap().flatten() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    let train = dir.path().join("new/train.env.scl");
    let text = std::fs::read_to_string(&train).unwrap();
    let changed = text.replace(
        "param gpu_count: Int = 1 where",
        &format!("param gpu_count: Int = {gpus} where"),
    );
    assert_ne!(text, changed, "the example declares gpu_count = 1");
    std::fs::write(&train, changed).unwrap();
    dir
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn bert_gpu_count_1_to_4_text() {
    let dir = bert_pair(4);
    let o = sclc(
        dir.path(),
        &["diff", "old/train.env.scl", "new/train.env.scl"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    insta::assert_snapshot!("bert_gpu_1_to_4_text", stdout(&o));
}

#[test]
fn bert_gpu_count_1_to_4_markdown() {
    let dir = bert_pair(4);
    let o = sclc(
        dir.path(),
        &[
            "diff",
            "old/train.env.scl",
            "new/train.env.scl",
            "--format",
            "markdown",
            "--target",
            "k8s",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    insta::assert_snapshot!("bert_gpu_1_to_4_markdown_k8s", stdout(&o));
}

/// The JSON form names exactly the GPU counts and the new `distributed`
/// block, each where it is set, and nothing about packages, volumes or vars.
#[test]
fn bert_gpu_count_1_to_4_json_fields() {
    let dir = bert_pair(4);
    let o = sclc(
        dir.path(),
        &[
            "diff",
            "old/train.env.scl",
            "new/train.env.scl",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["old"], "old/train.env.scl");
    assert_eq!(v["new"], "new/train.env.scl");
    let envs = v["envs"].as_array().unwrap();
    assert_eq!(envs.len(), 1);
    assert_eq!(envs[0]["env"], "bert_train");
    let fields: Vec<(String, String, u64)> = envs[0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["change"].as_str().unwrap().to_string(),
                f["at"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let train = std::fs::read_to_string(dir.path().join("new/train.env.scl")).unwrap();
    let line_of = |needle: &str| {
        train
            .lines()
            .position(|l| l.contains(needle))
            .map(|i| i as u64 + 1)
            .unwrap()
    };
    // The gpu lines: the first is in requests, the second in limits; the
    // distributed block's first field.
    let gpu_lines: Vec<u64> = train
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("gpu = { count = gpu_count"))
        .map(|(i, _)| i as u64 + 1)
        .collect();
    assert_eq!(
        fields,
        vec![
            (
                "distributed".into(),
                "added".into(),
                line_of("backend = .nccl")
            ),
            (
                "resources.limits.gpu.count".into(),
                "changed".into(),
                gpu_lines[1]
            ),
            (
                "resources.requests.gpu.count".into(),
                "changed".into(),
                gpu_lines[0]
            ),
        ]
    );
    let d = &envs[0]["fields"][0]["new"];
    assert_eq!(d["procs_per_node"], 4);
    assert_eq!(d["launcher"], "torchrun");
    let files: Vec<&str> = envs[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"bert_train/k8s.yaml"), "{files:?}");
    let k8s = envs[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "bert_train/k8s.yaml")
        .unwrap()["diff"]
        .as_str()
        .unwrap();
    assert!(k8s.contains("-kind: Job\n"), "{k8s}");
    assert!(k8s.contains("+kind: PyTorchJob\n"), "{k8s}");
    assert!(k8s.contains("+            - torchrun\n"), "{k8s}");
    assert!(
        k8s.contains("-            nvidia.com/gpu: \"1\"\n"),
        "{k8s}"
    );
    assert!(
        k8s.contains("+                nvidia.com/gpu: \"4\"\n"),
        "{k8s}"
    );
}

#[test]
fn same_text_is_no_change() {
    let dir = bert_pair(4);
    let o = sclc(
        dir.path(),
        &["diff", "old/train.env.scl", "old/train.env.scl"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "no changes: the IR and every lowered file are the same\n"
    );
    let o = sclc(
        dir.path(),
        &[
            "diff",
            "old/train.env.scl",
            "old/train.env.scl",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["envs"], serde_json::json!([]));
    // Markdown: nothing to post.
    let o = sclc(
        dir.path(),
        &[
            "diff",
            "old/train.env.scl",
            "old/train.env.scl",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn envs_added_and_removed_and_list_elements() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "a.env.scl",
        "env gone {\n  base = image(\"debian:12\")\n}\n\nenv kept {\n  base = image(\"debian:12\")\n  system.packages = [\"git\", \"tmux\", \"htop\"]\n}\n",
    );
    write(
        d,
        "b.env.scl",
        "env kept {\n  base = image(\"debian:12\")\n  system.packages = [\"git\", \"htop\", \"vim\"]\n}\n\nenv fresh {\n  base = image(\"debian:12\")\n}\n",
    );
    let o = sclc(
        d,
        &[
            "diff",
            "a.env.scl",
            "b.env.scl",
            "--target",
            "docker",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let summary: Vec<(String, String)> = v["envs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["env"].as_str().unwrap().into(),
                e["change"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("fresh".into(), "added".into()),
            ("gone".into(), "removed".into()),
            ("kept".into(), "changed".into()),
        ]
    );
    let kept = &v["envs"][2];
    assert_eq!(
        kept["fields"],
        serde_json::json!([
            {"path": "system.packages[1]", "change": "removed", "old": "tmux",
             "at": {"file": "a.env.scl", "line": 7, "column": 3, "env": "kept"}},
            {"path": "system.packages[2]", "change": "added", "new": "vim",
             "at": {"file": "b.env.scl", "line": 3, "column": 3, "env": "kept"}},
        ])
    );
    // A new env's files are all new, a removed env's all removed.
    assert_eq!(v["envs"][0]["files"][0]["path"], "fresh/Dockerfile");
    assert_eq!(v["envs"][0]["files"][0]["change"], "added");
    assert!(v["envs"][0]["files"][0]["diff"]
        .as_str()
        .unwrap()
        .starts_with("--- /dev/null\n+++ b/fresh/Dockerfile\n"));
    assert_eq!(v["envs"][1]["files"][0]["change"], "removed");
}

#[test]
fn errors_on_either_side_are_exit_1_with_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "good.env.scl",
        "env e {\n  base = image(\"debian:12\")\n}\n",
    );
    write(
        d,
        "bad.env.scl",
        "env e {\n  base = imag(\"debian:12\")\n}\n",
    );
    for args in [
        ["good.env.scl", "bad.env.scl"],
        ["bad.env.scl", "good.env.scl"],
    ] {
        let o = sclc(d, &["diff", args[0], args[1]]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stdout(&o), "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("bad.env.scl:2:"), "{err}");
    }
    // Usage errors: exit 2.
    for args in [
        vec!["diff", "good.env.scl"],
        vec!["diff", "good.env.scl", "missing.env.scl"],
        vec!["diff", "--rev", "HEAD", "good.env.scl", "bad.env.scl"],
        vec!["diff", "good.env.scl", "good.env.scl", "--env", "nope"],
        vec![
            "diff",
            "good.env.scl",
            "good.env.scl",
            "--host-root",
            "rel/dir",
        ],
        vec![
            "diff",
            "good.env.scl",
            "good.env.scl",
            "--host-root",
            "/a/../b",
        ],
    ] {
        let o = sclc(d, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
    }
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--rev` reads the file, the modules it imports and the files it reads
/// from the revision; errors name the revision.
#[test]
fn against_a_git_revision() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("envs")).unwrap();
    write(
        d,
        "envs/base.env.scl",
        "env base {\n  base = image(\"debian:12\")\n}\n",
    );
    write(
        d,
        "envs/app.env.scl",
        "import \"./base.env.scl\" as b\n\nenv app extends b.base {\n  python.requirements = [file(\"./req.txt\")]\n}\n",
    );
    write(d, "envs/req.txt", "six==1.16.0\n");
    git(d, &["init", "-q"]);
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "one"]);
    // Work-tree changes in an imported module and in a read file.
    write(
        d,
        "envs/base.env.scl",
        "env base {\n  base = image(\"debian:12\")\n  workdir = \"/srv\"\n}\n",
    );
    write(d, "envs/req.txt", "six==1.16.0\nidna==3.7\n");
    let o = sclc(
        &d.join("envs"),
        &[
            "diff",
            "--rev",
            "HEAD",
            "app.env.scl",
            "--target",
            "conda",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["old"], "HEAD:envs/app.env.scl");
    let app = v["envs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["env"] == "app")
        .unwrap();
    let paths: Vec<&str> = app["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["python.requirements[0].sha256", "workdir"]);
    assert_eq!(app["fields"][1]["at"]["file"], "base.env.scl");
    let conda = app["files"][0]["diff"].as_str().unwrap();
    assert!(conda.contains("+  - idna==3.7\n"), "{conda}");
    // Nothing changed in the revision's own text: no change.
    git(d, &["commit", "-q", "-am", "two"]);
    let o = sclc(&d.join("envs"), &["diff", "--rev", "HEAD", "app.env.scl"]);
    assert_eq!(
        stdout(&o),
        "no changes: the IR and every lowered file are the same\n"
    );
    // A file the revision does not have, a revision that does not exist.
    write(
        d,
        "envs/new.env.scl",
        "env n {\n  base = image(\"debian:12\")\n}\n",
    );
    let o = sclc(&d.join("envs"), &["diff", "--rev", "HEAD", "new.env.scl"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: new.env.scl does not exist at revision `HEAD`\n"
    );
    let o = sclc(&d.join("envs"), &["diff", "--rev", "nope~3", "app.env.scl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`nope~3` does not name a commit"));
    // Diagnostics of the old side are shown as REV:path.
    write(
        d,
        "envs/app.env.scl",
        "env app {\n  base = imag(\"debian:12\")\n}\n",
    );
    git(d, &["commit", "-q", "-am", "three"]);
    write(
        d,
        "envs/app.env.scl",
        "env app {\n  base = image(\"debian:12\")\n}\n",
    );
    let o = sclc(&d.join("envs"), &["diff", "--rev", "HEAD", "app.env.scl"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("HEAD:envs/app.env.scl:2:"), "{err}");
}

/// The old side is read from the revision even when FILE's path goes
/// through a symbolic link to the work tree, and whatever repository the
/// caller's GIT_DIR names.
#[test]
fn rev_through_a_symlink_and_with_git_dir_set() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("r");
    std::fs::create_dir_all(repo_dir.join("sub")).unwrap();
    write(
        &repo_dir,
        "sub/h.env.scl",
        "env h {\n  base = image(\"debian:12.5\")\n}\n",
    );
    write(
        &repo_dir,
        "h.env.scl",
        "env h {\n  base = image(\"alpine:3.20\")\n}\n",
    );
    git(&repo_dir, &["init", "-q"]);
    git(&repo_dir, &["add", "."]);
    git(&repo_dir, &["commit", "-q", "-m", "one"]);
    write(
        &repo_dir,
        "sub/h.env.scl",
        "env h {\n  base = image(\"debian:12.6\")\n}\n",
    );
    std::os::unix::fs::symlink(&repo_dir, dir.path().join("link")).unwrap();
    let want = "  ~ base.ref: \"debian:12.5\" -> \"debian:12.6\"";
    for file in ["link/sub/h.env.scl", "r/sub/h.env.scl"] {
        let o = sclc(
            dir.path(),
            &["diff", "--rev", "HEAD", file, "--target", "k8s"],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(stdout(&o).contains(want), "{file}: {}", stdout(&o));
    }
    // A GIT_DIR relative to another folder (as inside some hooks) does
    // not pick the repository.
    let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(["diff", "--rev", "HEAD", "h.env.scl", "--target", "k8s"])
        .current_dir(repo_dir.join("sub"))
        .env("GIT_DIR", "../.git")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(want),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A folder is a usage error saying so.
    let o = sclc(&repo_dir, &["diff", "--rev", "HEAD", "sub"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a folder"));
}

/// `--host-root` must be an absolute, normalized path; a trailing `/` is
/// not written twice.
#[test]
fn host_root_is_checked_and_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "v.env.scl",
        "env v {\n  base = image(\"debian:12\")\n  volumes = [\n    { name = \"ws\", source = \"host:./\", mount = \"/ws\" },\n    { name = \"data\", source = \"host:data\", mount = \"/data\" },\n  ]\n}\n",
    );
    std::fs::create_dir(d.join("data")).unwrap();
    for bad in ["rel", "//", "/a//b", "/a/./b", "/a/../b", "/a/b/.."] {
        let o = sclc(
            d,
            &["build", "v.env.scl", "--target", "k8s", "--host-root", bad],
        );
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
    for (root, ws, data) in [
        ("/", "/", "/data"),
        ("/shared/p/", "/shared/p", "/shared/p/data"),
        ("/shared/p", "/shared/p", "/shared/p/data"),
    ] {
        let o = sclc(
            d,
            &["build", "v.env.scl", "--target", "k8s", "--host-root", root],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let k8s = std::fs::read_to_string(d.join("out/v/k8s.yaml")).unwrap();
        assert!(k8s.contains(&format!("path: {ws}\n")), "{root}: {k8s}");
        assert!(k8s.contains(&format!("path: {data}\n")), "{root}: {k8s}");
    }
}
