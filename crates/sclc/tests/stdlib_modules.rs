//! The standard-library modules in use: for each module a small program that
//! `sclc check` accepts without a diagnostic and whose IR is a snapshot, and
//! a program that uses it wrongly, with the diagnostic code it gets. Last,
//! the book's generated stdlib pages are what `sclc doc` writes.

mod common;
use common::*;

/// A workspace holding `main.env.scl` (and the folders its `host:` volumes
/// name).
fn workspace(src: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.env.scl"), src).unwrap();
    for d in ["notebooks", "mlruns"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    dir
}

/// `sclc check` accepts `src` with no diagnostic at all; its IR (every env).
fn ir_of_clean(src: &str) -> String {
    let dir = workspace(src);
    let out = sclc(dir.path(), &["check", "main.env.scl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "check:\n{stderr}"
    );
    let out = sclc(dir.path(), &["ir", "main.env.scl"]);
    assert!(
        out.status.success(),
        "ir:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The codes of the diagnostics `sclc check` gives `src`, in order.
fn codes_of(src: &str) -> Vec<String> {
    let dir = workspace(src);
    let out = sclc(
        dir.path(),
        &["check", "--message-format", "json", "main.env.scl"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|d| d["code"].as_str().map(String::from))
        .collect()
}

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn tensorflow_runtime() {
    let ir = ir_of_clean(
        r#"import "std/tensorflow" as tf

env train extends tf.runtime(tf = "2.15.0", python = "3.11") {
  python.packages = ["tensorflow-datasets==4.9.4"]
}

env cpu extends tf.runtime(tf = "2.4.0", flavor = .cpu_jupyter) { }
"#,
    );
    insta::assert_snapshot!("tensorflow_runtime", ir);
}

#[test]
fn tensorflow_flavor_must_be_an_enum_value() {
    let codes = codes_of(
        r#"import "std/tensorflow" as tf

env train extends tf.runtime(tf = "2.15.0", flavor = "gpu") { }
"#,
    );
    assert_eq!(codes, ["E0201"]);
}

#[test]
fn tensorflow_unknown_python_is_a_missing_key() {
    let codes = codes_of(
        r#"import "std/tensorflow" as tf

env train extends tf.runtime(tf = "2.15.0", python = "3.12") { }
"#,
    );
    assert_eq!(codes, ["E0311"]);
}

#[test]
fn hf_models_assets() {
    let ir = ir_of_clean(&format!(
        r#"import "std/hf-models" as hf

env serve extends hf.cache(offline = true) {{
  base = image("python:3.12.4-slim")
  assets = [
    hf.model("google-bert/bert-base-uncased", revision = "{SHA}", files = ["config.json"], to = "/models/bert"),
    hf.gated(
      "meta-llama/Llama-3.1-8B",
      revision = "{SHA}",
      token = secret("hf", key = "token"),
      to = "/models/llama",
    ),
    hf.file_at(
      "stabilityai/sd-vae-ft-mse-original",
      revision = "{SHA}",
      path = "vae-ft-mse-840000-ema-pruned.safetensors",
      sha256 = "{SHA}{sha}",
      to = "/models/vae",
    ),
  ]
}}
"#,
        sha = "0123456789abcdef01234567"
    ));
    insta::assert_snapshot!("hf_models_assets", ir);
}

#[test]
fn hf_models_revision_is_required() {
    let codes = codes_of(
        r#"import "std/hf-models" as hf

env serve {
  base = image("python:3.12.4-slim")
  assets = [hf.model("google-bert/bert-base-uncased", to = "/models/bert")]
}
"#,
    );
    assert_eq!(codes, ["E0309"]);
}

#[test]
fn hf_models_branch_is_not_a_commit() {
    let codes = codes_of(
        r#"import "std/hf-models" as hf

env serve {
  base = image("python:3.12.4-slim")
  assets = [hf.model("google-bert/bert-base-uncased", revision = "main", to = "/models/bert")]
}
"#,
    );
    assert_eq!(codes, ["E0311"]);
}

#[test]
fn mlflow_stack() {
    let ir = ir_of_clean(
        r#"import "std/mlflow" as mlflow

env train {
  base = image("python:3.12.4-slim")
  python.packages = ["mlflow==2.17.2"]
  vars += mlflow.client_vars()
  command = ["python", "train.py"]
}

env stack {
  services {
    mlflow = mlflow.server(
      version = "2.17.2",
      store = { name = "mlruns", source = "host:./mlruns", mount = "/mlflow", mode = .read_write },
    )
    train = train with { depends_on = ["mlflow"] }
  }
}
"#,
    );
    insta::assert_snapshot!("mlflow_stack", ir);
}

#[test]
fn mlflow_store_must_be_a_volume() {
    let codes = codes_of(
        r#"import "std/mlflow" as mlflow

env stack {
  services {
    mlflow = mlflow.server(version = "2.17.2", store = "host:./mlruns")
  }
}
"#,
    );
    assert_eq!(codes, ["E0201"]);
}

#[test]
fn jupyter_lab() {
    let ir = ir_of_clean(
        r#"import "std/jupyter" as jupyter

env train {
  base = image("python:3.12.4-slim")
  python.packages = ["torch==2.5.1"]
}

env notebook extends train,
    jupyter.lab(
      token = secret("jupyter", key = "token"),
      notebooks = { name = "notebooks", source = "host:./notebooks", mount = "/workspace", mode = .read_write },
    ) {
  python.packages += ["pandas==2.2.2"]
}
"#,
    );
    insta::assert_snapshot!("jupyter_lab", ir);
}

#[test]
fn jupyter_token_must_be_a_secret() {
    let codes = codes_of(
        r#"import "std/jupyter" as jupyter

env notebook extends jupyter.lab(
  token = "letmein",
  notebooks = { name = "notebooks", source = "host:./notebooks", mount = "/workspace", mode = .read_write },
) {
  base = image("python:3.12.4-slim")
}
"#,
    );
    assert_eq!(codes, ["E0201"]);
}

/// `book/src/stdlib` is what `sclc doc` writes from the embedded stdlib
/// (run `cargo run -p sclc -- doc` after editing a module's comments).
#[test]
fn stdlib_pages_are_current() {
    let repo = repo();
    let out_dir = repo.join("book/src/stdlib");
    let out = sclc(
        &repo,
        &["doc", "--check", "--out", out_dir.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every page is in the book's table of contents.
    let summary = std::fs::read_to_string(repo.join("book/src/SUMMARY.md")).unwrap();
    for e in std::fs::read_dir(&out_dir).unwrap().flatten() {
        let name = e.file_name().into_string().unwrap();
        assert!(
            summary.contains(&format!("(stdlib/{name})")),
            "book/src/SUMMARY.md does not list stdlib/{name}"
        );
    }
}

/// `sclc doc --out DIR` writes a page per module and the index, and then
/// `--check` on DIR passes; a changed page fails it.
#[test]
fn doc_writes_then_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("pages");
    let o = out_dir.to_str().unwrap();
    let out = sclc(dir.path(), &["doc", "--out", o]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for page in [
        "README.md",
        "tensorflow.md",
        "hf-models.md",
        "mlflow.md",
        "jupyter.md",
        "s3-data.md",
    ] {
        assert!(out_dir.join(page).is_file(), "{page} missing");
    }
    assert_eq!(
        sclc(dir.path(), &["doc", "--check", "--out", o])
            .status
            .code(),
        Some(0)
    );
    std::fs::write(out_dir.join("mlflow.md"), "old\n").unwrap();
    let out = sclc(dir.path(), &["doc", "--check", "--out", o]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mlflow.md"));
}

/// An RFC 1123 label: 1 to 63 of `a`–`z`, `0`–`9` and `-`, starting and
/// ending with a letter or digit.
fn is_rfc1123_label(s: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    (1..=63).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && edge(s.chars().next())
        && edge(s.chars().last())
}

/// `std/s3-data` names every volume with an RFC 1123 label, as it
/// promises, whatever the URI's last segment holds: the segment's label,
/// else the bucket's, else `s3-data`.
#[test]
fn s3_volume_names_are_rfc1123_labels() {
    let long = "a".repeat(64);
    let ir = ir_of_clean(&format!(
        r#"import "std/s3-data" as s3

env data {{
  base = image("debian:12.5")
  volumes = [
    s3.mount("s3://my-bucket/datasets/_Glue~v2+x", at = "/a"),
    s3.mount("s3://b/ImageNet_1k/", at = "/b"),
    s3.mount("s3://Legacy_Bucket/données", at = "/c"),
    s3.mount("s3://my.bucket/___", at = "/d"),
    s3.mount("s3://x/a%20b(1)!*'=@", at = "/e"),
    s3.mount("s3://y/{long}", at = "/f"),
    s3.mount("s3://z/--.--/", at = "/g"),
    s3.mount("s3://_/é", at = "/h"),
  ]
}}
"#
    ));
    let v: serde_json::Value = serde_json::from_str(&ir).unwrap();
    let names: Vec<&str> = v["data"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "glue-v2-x",
            "imagenet-1k",
            "legacy-bucket",
            "my-bucket",
            "a-20b-1",
            "y",
            "z",
            "s3-data"
        ]
    );
    assert!(names.iter().all(|n| is_rfc1123_label(n)), "{names:?}");
}

/// The stack of the breaker's report: an s3 volume whose prefix holds `_`,
/// `~` and `+`, and std/jupyter on top; compose gets a valid volume name
/// (it refused `-glue~v2+x` with E0401 before).
#[test]
fn s3_volume_under_jupyter_lowers_to_compose() {
    let dir = workspace(
        r#"import "std/jupyter" as jupyter
import "std/s3-data" as s3

env train {
  base = image("python:3.12.4-slim")
  volumes = [s3.mount("s3://my-bucket/datasets/_Glue~v2+x", at = "/data")]
}

env notebook extends train,
    jupyter.lab(
      token = secret("jupyter", key = "token"),
      notebooks = { name = "notebooks", source = "host:./notebooks", mount = "/workspace", mode = .read_write },
    ) { }
"#,
    );
    let out_dir = dir.path().join("out");
    let out = sclc(
        dir.path(),
        &[
            "build",
            "main.env.scl",
            "--env",
            "notebook",
            "--target",
            "compose",
            "--message-format",
            "json",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let codes: Vec<String> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|d| d["code"].as_str().map(String::from))
        .collect();
    // Only the warning that compose cannot attach an s3 source.
    assert_eq!(codes, ["W0004"], "{stderr}");
    let compose = std::fs::read_to_string(out_dir.join("notebook/compose.yaml")).unwrap();
    assert!(compose.contains("glue-v2-x:"), "{compose}");
}

/// A finding about a pin that a std template builds is at the env's name
/// in the user's file, with a label at the template's string in the
/// stdlib (its line read from the module) and the user's `base` as a
/// label: the JSON the CLI prints.
#[test]
fn a_pin_built_by_a_std_template_is_labelled_in_the_template() {
    let dir = workspace(
        r#"import "std/pytorch-cuda" as torch

env t extends torch.runtime(torch = "2.1.2", cuda = "11.8") {
  base = image("nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04")
}
"#,
    );
    let out = sclc(
        dir.path(),
        &["check", "--message-format", "json", "main.env.scl"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first: serde_json::Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(first["code"], "E0501", "{stderr}");
    assert_eq!(
        (&first["file"], &first["line"], &first["column"]),
        (
            &serde_json::json!("main.env.scl"),
            &serde_json::json!(3),
            &serde_json::json!(5)
        )
    );
    // Where std/pytorch-cuda builds each pin (1-based line and column).
    let std_src = std::fs::read_to_string(repo().join("stdlib/pytorch-cuda.env.scl")).unwrap();
    let built = "\"${p[0]}==${p[1]}${p[2]}\"";
    let (line, column) = std_src
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find(built).map(|c| (i + 1, c + 1)))
        .expect("the template builds its pins so");
    let labels: Vec<(String, u64, u64, String)> = first["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap().to_string(),
                l["line"].as_u64().unwrap(),
                l["column"].as_u64().unwrap(),
                l["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            (
                "std/pytorch-cuda.env.scl".to_string(),
                line as u64,
                column as u64,
                "`python.packages[0]` is set here".to_string()
            ),
            (
                "main.env.scl".to_string(),
                4,
                3,
                "CUDA 12.1.1 here".to_string()
            ),
        ]
    );
}
