//! Every row of the tables the checks and the standard library read,
//! exercised end to end through `sclc`:
//! - `std/compat`'s `torch`, `cuda_devel` and `torch_index` against the
//!   source CSV files of `crates/scl-domain/data/source` (read here, not by
//!   the generator that wrote the module);
//! - `std/tensorflow`'s `releases` and `tag_suffix` against
//!   `cog_tf_matrix.csv` (a table written by hand in the module);
//! - `std/pytorch-cuda`'s `cudnn` table (the official images);
//! - every `nvidia/cuda` tag of the image table through the tag check
//!   (E0508);
//! - every GPU model through the generation floors (E0507);
//! - every version of the conda CUDA package table through E0505;
//! - the passing side of E0511, E0512 and W0506.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

fn csv(name: &str) -> Vec<Vec<String>> {
    let path = repo().join("crates/scl-domain/data/source").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(fields)
        .collect()
}

/// The fields of one CSV line (RFC 4180 quoting: `"a, b"`, `""` for `"`).
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    assert!(!quoted, "an unclosed quote: {line}");
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

/// Dotted numbers, for numeric order.
fn num(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap()).collect()
}

/// A scratch folder holding `m.env.scl` with `text`.
fn workspace(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.env.scl"), text).unwrap();
    dir
}

/// `sclc check`'s diagnostics of `text`, each as `CODE LINE:COLUMN MESSAGE`.
fn diagnostics(text: &str) -> Vec<String> {
    let dir = workspace(text);
    let out = sclc(
        dir.path(),
        &["check", "m.env.scl", "--message-format", "json"],
    );
    let found: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| {
            let d: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            format!(
                "{} {}:{} {}",
                d["code"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    let errors = found.iter().any(|d| d.starts_with('E'));
    assert_eq!(out.status.code(), Some(i32::from(errors)), "{found:#?}");
    found
}

/// `sclc ir` of `text`, which must check without a diagnostic.
fn clean_ir(text: &str) -> serde_json::Value {
    assert_eq!(diagnostics(text), Vec::<String>::new());
    let dir = workspace(text);
    let out = sclc(dir.path(), &["ir", "m.env.scl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The strings of `setup` of env `env` in `ir`.
fn setup(ir: &serde_json::Value, env: &str) -> Vec<String> {
    ir[env]["setup"]
        .as_array()
        .unwrap_or_else(|| panic!("{env}: {ir}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// A source file built env by env, knowing the line of each line it adds.
#[derive(Default)]
struct Source {
    text: String,
    lines: usize,
}

impl Source {
    fn line(&mut self, l: &str) -> usize {
        self.text.push_str(l);
        self.text.push('\n');
        self.lines += 1;
        self.lines
    }
}

#[test]
fn compat_torch_table_is_the_csv() {
    let ir = clean_ir(
        r#"import "std/compat" as compat
env dump {
  base = image("debian:12.5")
  setup = [for t in keys(compat.torch): join([t, compat.torch[t].torchvision, compat.torch[t].torchaudio, "${compat.torch[t].torchaudio_cuda}", join(compat.torch[t].cudas, " "), join(compat.torch[t].index_cudas, " "), join(compat.torch[t].pythons, " "), compat.torch[t].cuda, compat.torch[t].python], "|")]
}
"#,
    );
    let got: BTreeSet<String> = setup(&ir, "dump").into_iter().collect();

    // The same rows, aggregated here from the CSV.
    let rows = csv("cog_torch_cuda_matrix.csv");
    let mut releases: BTreeMap<Vec<u32>, Vec<&Vec<String>>> = BTreeMap::new();
    for r in &rows {
        releases
            .entry(num(r[0].split('+').next().unwrap()))
            .or_default()
            .push(r);
    }
    let sorted = |mut v: Vec<String>| {
        v.sort_by_key(|c| num(c));
        v.dedup();
        v
    };
    let mut want = BTreeSet::new();
    for mine in releases.values() {
        let torch = mine[0][0].split('+').next().unwrap();
        let torchvision = mine[0][1].split('+').next().unwrap();
        let torchaudio = mine[0][2].as_str();
        let torchaudio_cuda = !torchaudio.is_empty() && num(torchaudio) >= vec![0, 10];
        let cudas = sorted(
            mine.iter()
                .map(|r| r[3].clone())
                .filter(|c| c != "cpu")
                .collect(),
        );
        // On an index: https://download.pytorch.org/whl/cuXYZ[/], not a
        // torch_stable.html find-links page, not PyPI's default.
        let index_cudas = sorted(
            mine.iter()
                .filter(|r| r[5].contains("/whl/cu") && !r[5].ends_with(".html"))
                .map(|r| r[3].clone())
                .collect(),
        );
        let pythons = sorted(
            mine.iter()
                .flat_map(|r| r[4].split_whitespace().map(String::from))
                .collect(),
        );
        want.insert(
            [
                torch.to_string(),
                torchvision.to_string(),
                torchaudio.to_string(),
                torchaudio_cuda.to_string(),
                cudas.join(" "),
                index_cudas.join(" "),
                pythons.join(" "),
                cudas.last().cloned().unwrap_or_default(),
                pythons.last().cloned().unwrap_or_default(),
            ]
            .join("|"),
        );
    }
    assert!(want.len() >= 40, "{}", want.len());
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );
    // Spot rows, written out.
    assert!(got.contains("2.1.2|0.16.2|2.1.2|true|11.8 12.1|11.8 12.1|3.8 3.9 3.10 3.11|12.1|3.11"));
    assert!(got.contains("1.9.0|0.10.0|0.9.0|false|10.2 11.1||3.6 3.7 3.8 3.9|11.1|3.9"));
}

#[test]
fn compat_cuda_devel_table_is_the_csv() {
    let ir = clean_ir(
        r#"import "std/compat" as compat
env dump {
  base = image("debian:12.5")
  setup = [for c in keys(compat.cuda_devel): join([for u in keys(compat.cuda_devel[c]): "${c}|${u}|${compat.cuda_devel[c][u]}"], ";")]
}
"#,
    );
    let got: BTreeSet<String> = setup(&ir, "dump")
        .iter()
        .flat_map(|l| l.split(';').map(String::from).collect::<Vec<_>>())
        .collect();
    // Per major.minor and Ubuntu, the highest patch release the CSV has.
    let mut best: BTreeMap<(String, String), (Vec<u32>, String)> = BTreeMap::new();
    for r in csv("cog_cuda_base_images.csv") {
        let (tag, cuda, ubuntu) = (&r[0], &r[1], &r[3]);
        let v = num(cuda);
        let mm = format!("{}.{}", v[0], v[1]);
        let slot = best
            .entry((mm, format!("ubuntu{ubuntu}")))
            .or_insert((Vec::new(), String::new()));
        if v > slot.0 {
            *slot = (v, tag.clone());
        }
    }
    let want: BTreeSet<String> = best
        .iter()
        .map(|((mm, u), (_, tag))| format!("{mm}|{u}|{tag}"))
        .collect();
    assert_eq!(got, want);
    assert!(got.contains("12.8|ubuntu22.04|12.8.1-cudnn-devel-ubuntu22.04"));
    assert!(got.contains("12.2|ubuntu22.04|12.2.2-cudnn8-devel-ubuntu22.04"));
}

#[test]
fn compat_torch_index_table_is_the_csv() {
    let ir = clean_ir(
        r#"import "std/compat" as compat
env dump {
  base = image("debian:12.5")
  setup = [for v in keys(compat.torch_index): "${v}|${compat.torch_index[v]}"]
}
"#,
    );
    let got: BTreeSet<String> = setup(&ir, "dump").into_iter().collect();
    let want: BTreeSet<String> = csv("cog_torch_cuda_matrix.csv")
        .iter()
        .map(|r| r[5].trim_end_matches('/').to_string())
        .filter(|u| u.starts_with("https://download.pytorch.org/whl/") && !u.ends_with(".html"))
        .map(|u| format!("{}|{u}", u.rsplit('/').next().unwrap()))
        .collect();
    assert_eq!(got, want);
    assert!(got.contains("cu130|https://download.pytorch.org/whl/cu130"));
    assert!(got.contains("cpu|https://download.pytorch.org/whl/cpu"));
}

/// `std/tensorflow`'s `releases` is written by hand: every release of the
/// CSV with its CUDA, cuDNN and Pythons, and nothing else; each release
/// with each of its Pythons and each flavour is an env that checks without
/// a diagnostic, on the tag of that release and flavour.
#[test]
fn tensorflow_releases_are_the_csv() {
    let ir = clean_ir(
        r#"import "std/tensorflow" as tf
env dump {
  base = image("debian:12.5")
  setup = [for t in keys(tf.releases): join([t, tf.cuda(t), tf.cudnn(t), join(tf.pythons(t), " ")], "|")]
}
"#,
    );
    let got: BTreeSet<String> = setup(&ir, "dump").into_iter().collect();
    let rows = csv("cog_tf_matrix.csv");
    let want: BTreeSet<String> = rows
        .iter()
        .map(|r| {
            // `pythons` is sorted as text.
            let mut pys: Vec<&str> = r[3].split_whitespace().collect();
            pys.sort();
            format!("{}|{}|{}|{}", r[0], r[1], r[2], pys.join(" "))
        })
        .collect();
    assert_eq!(got, want);

    let flavors = [
        ("gpu", "-gpu"),
        ("cpu", ""),
        ("gpu_jupyter", "-gpu-jupyter"),
        ("cpu_jupyter", "-jupyter"),
    ];
    let mut src = String::from("import \"std/tensorflow\" as tf\n");
    let mut expect = BTreeMap::new();
    let mut used = BTreeSet::new();
    for (i, r) in rows.iter().enumerate() {
        for (j, py) in r[3].split_whitespace().enumerate() {
            let (flavor, suffix) = flavors[(i + j) % flavors.len()];
            used.insert(flavor);
            let name = format!("e{i}_{j}");
            src.push_str(&format!(
                "env {name} extends tf.runtime(tf = \"{}\", python = \"{py}\", flavor = .{flavor}) {{}}\n",
                r[0]
            ));
            let gpu = suffix.starts_with("-gpu");
            let description = if gpu {
                format!("TensorFlow {} (CUDA {}, cuDNN {})", r[0], r[1], r[2])
            } else {
                format!(
                    "TensorFlow {}, CPU only (its GPU build uses CUDA {})",
                    r[0], r[1]
                )
            };
            expect.insert(
                name,
                (
                    format!("tensorflow/tensorflow:{}{suffix}", r[0]),
                    py.to_string(),
                    description,
                ),
            );
        }
    }
    let ir = clean_ir(&src);
    for (name, (base, py, description)) in &expect {
        let env = &ir[name];
        assert_eq!(env["base"]["ref"], *base, "{name}: {env}");
        assert_eq!(env["python"]["version"], *py, "{name}");
        assert_eq!(env["description"], *description, "{name}");
    }
    // Every flavour was used.
    assert_eq!(used.len(), flavors.len(), "{used:?}");
    // A Python the release does not list is the missing key.
    let found = diagnostics(
        "import \"std/tensorflow\" as tf\nenv e extends tf.runtime(tf = \"2.4.0\", python = \"3.9\") {}\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("E0311 ") && found[0].ends_with("no key \"3.9\" in this map"),
        "{found:?}"
    );
}

/// `std/pytorch-cuda`'s `cudnn` table (the official `pytorch/pytorch`
/// images): its releases are the torch releases 1.13.0 to 2.8.0 of the
/// CSV, each CUDA one the release has wheels for, cuDNN 8 before torch 2.4
/// and 9 from it; every pair, in both flavours, is an env on the tag of that
/// pair that checks without a diagnostic.
#[test]
fn official_images_for_every_cudnn_row() {
    let ir = clean_ir(
        r#"import "std/pytorch-cuda" as torch
env dump {
  base = image("debian:12.5")
  setup = [for t in keys(torch.cudnn): join([for c in keys(torch.cudnn[t]): "${t}|${c}|${torch.cudnn[t][c]}"], ";")]
}
"#,
    );
    let pairs: Vec<(String, String, String)> = setup(&ir, "dump")
        .iter()
        .flat_map(|l| l.split(';').map(String::from).collect::<Vec<_>>())
        .map(|p| {
            let f: Vec<&str> = p.split('|').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    let rows = csv("cog_torch_cuda_matrix.csv");
    let torch_of = |r: &Vec<String>| r[0].split('+').next().unwrap().to_string();
    let want_releases: BTreeSet<Vec<u32>> = rows
        .iter()
        .map(|r| num(&torch_of(r)))
        .filter(|t| *t >= vec![1, 13, 0] && *t <= vec![2, 8, 0])
        .collect();
    let got_releases: BTreeSet<Vec<u32>> = pairs.iter().map(|(t, ..)| num(t)).collect();
    assert_eq!(got_releases, want_releases);
    let mut src = String::from("import \"std/pytorch-cuda\" as torch\n");
    let mut expect = Vec::new();
    for (i, (t, c, n)) in pairs.iter().enumerate() {
        assert!(
            rows.iter().any(|r| torch_of(r) == *t && r[3] == *c),
            "torch {t} has no CUDA {c} wheel"
        );
        let cudnn = if num(t) < vec![2, 4, 0] { "8" } else { "9" };
        assert_eq!(n, cudnn, "torch {t} CUDA {c}");
        for flavor in ["runtime", "devel"] {
            let name = format!("e{i}_{flavor}");
            src.push_str(&format!(
                "env {name} extends torch.runtime(torch = \"{t}\", cuda = \"{c}\", flavor = .{flavor}, image = .official) {{}}\n"
            ));
            expect.push((
                name,
                format!("pytorch/pytorch:{t}-cuda{c}-cudnn{n}-{flavor}"),
            ));
        }
    }
    assert!(expect.len() >= 2 * 40, "{}", expect.len());
    let ir = clean_ir(&src);
    for (name, image) in &expect {
        assert_eq!(ir[name]["base"]["ref"], *image, "{name}");
    }
    // A pair the table does not have is the missing key.
    let found = diagnostics(
        "import \"std/pytorch-cuda\" as torch\nenv e extends torch.runtime(torch = \"2.8.0\", cuda = \"11.8\", image = .official) {}\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("E0311 ") && found[0].ends_with("no key \"11.8\" in this map"),
        "{found:?}"
    );
}

/// Every row of the `nvidia/cuda` table is a tag the tag check accepts,
/// and the same release with another cuDNN spelling is E0508.
#[test]
fn every_cuda_image_row_through_the_tag_check() {
    let rows = csv("cog_cuda_base_images.csv");
    assert!(rows.len() >= 80, "{}", rows.len());
    let mut ok = Source::default();
    let mut bad = Source::default();
    let mut want = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let tag = &r[0];
        ok.line(&format!(
            "env e{i} {{\n  base = image(\"nvidia/cuda:{tag}\")\n}}"
        ));
        let part = tag.split('-').nth(1).unwrap();
        let other = match part {
            "cudnn8" => "cudnn9",
            "cudnn9" => "cudnn",
            "cudnn" => "cudnn8",
            p => panic!("{tag}: {p}"),
        };
        let wrong = tag.replacen(part, other, 1);
        bad.line(&format!("env e{i} {{"));
        let line = bad.line(&format!("  base = image(\"nvidia/cuda:{wrong}\")"));
        bad.line("}");
        want.push(format!(
            "E0508 {line}:3 `nvidia/cuda:{wrong}` is not an `nvidia/cuda` tag NVIDIA publishes"
        ));
    }
    assert_eq!(diagnostics(&ok.text), Vec::<String>::new());
    assert_eq!(diagnostics(&bad.text), want);
}

/// Every GPU model through the generation floors: a model of Hopper or
/// later at its floor's torch and CUDA checks cleanly, one release below
/// gets E0507 for both (in GPU Feature Discovery's and in GKE's spelling);
/// an older model has no floor, whatever the torch.
#[test]
fn every_gpu_model_through_the_floors() {
    let models = csv("gpu_models.csv");
    let floors: BTreeMap<String, (String, String)> = csv("cog_gpu_compute_floor.csv")
        .into_iter()
        .map(|r| (r[0].clone(), (r[2].clone(), r[3].clone())))
        .collect();
    let mut src = Source::default();
    let mut want = Vec::new();
    let mut floored = 0;
    for (i, m) in models.iter().enumerate() {
        let (name, cc, arch) = (&m[0], &m[1], &m[2]);
        let gfd = format!("NVIDIA-{}", name.replace(' ', "-"));
        let gke = format!("nvidia-{}", name.to_lowercase().replace(' ', "-"));
        // The floor of the compute capability's major version.
        let floor = floors
            .iter()
            .find(|(f, _)| f.split('.').next() == cc.split('.').next());
        let Some((_, (min_torch, min_cuda))) = floor else {
            assert!(num(cc)[0] < 9, "{name}: no floor");
            src.line(&format!("env old{i} {{"));
            src.line("  base = image(\"python:3.10-slim\")");
            src.line("  python.packages = [\"torch==1.13.1+cu117\"]");
            src.line(&format!(
                "  resources.limits.gpu = {{ count = 1, type = \"{gfd}\" }}"
            ));
            src.line("}");
            continue;
        };
        floored += 1;
        let at = format!("torch=={min_torch}+cu{}", min_cuda.replace('.', ""));
        // One release below the floor, on a CUDA below its floor too.
        let below = match min_torch.as_str() {
            "2.0.1" => "torch==1.13.1+cu117",
            "2.7.0" => "torch==2.6.0+cu126",
            t => panic!("a floor at torch {t}: add its release below"),
        };
        let below_cuda = if below.ends_with("cu117") {
            "11.7"
        } else {
            "12.6"
        };
        src.line(&format!("env at{i} {{"));
        src.line("  base = image(\"python:3.10-slim\")");
        src.line(&format!("  python.packages = [\"{at}\"]"));
        src.line(&format!(
            "  resources.limits.gpu = {{ count = 1, type = \"{gfd}\" }}"
        ));
        src.line("}");
        for (kind, label) in [
            (&gfd, String::new()),
            (
                &gke,
                ", node_label = \"cloud.google.com/gke-accelerator\"".to_string(),
            ),
        ] {
            src.line(&format!("env below{i}_{} {{", label.is_empty()));
            src.line("  base = image(\"python:3.10-slim\")");
            src.line(&format!("  python.packages = [\"{below}\"]"));
            let line = src.line(&format!(
                "  resources.limits.gpu = {{ count = 1, type = \"{kind}\"{label} }}"
            ));
            src.line("}");
            let what = format!("{name} ({arch}, compute capability {cc})");
            want.push(format!(
                "E0507 {line}:3 the {what} needs torch ≥ {min_torch}, but the env has `{below}`"
            ));
            want.push(format!(
                "E0507 {line}:3 the {what} needs CUDA ≥ {min_cuda}, but `{below}` has CUDA {below_cuda}"
            ));
        }
    }
    assert!(floored >= 15, "{floored}");
    assert_eq!(diagnostics(&src.text), want);
}

/// Every version of the conda CUDA package table (`cudatoolkit` and
/// `pytorch-cuda`, the versions anaconda.org has) that has an `nvidia/cuda`
/// image: on that image, the spec of another version is E0505 and its help
/// names the spec of the image's version, which checks cleanly.
#[test]
fn every_conda_cuda_version_through_e0505() {
    let cudatoolkit = [
        "9.0", "9.2", "10.0", "10.1", "10.2", "11.0", "11.1", "11.2", "11.3", "11.4", "11.5",
        "11.6", "11.7", "11.8",
    ];
    let pytorch_cuda = ["11.6", "11.7", "11.8", "12.1", "12.4"];
    assert_eq!(
        scl_domain::cuda::conda_cuda_versions("cudatoolkit").unwrap(),
        cudatoolkit
    );
    assert_eq!(
        scl_domain::cuda::conda_cuda_versions("pytorch-cuda").unwrap(),
        pytorch_cuda
    );
    let images = csv("cog_cuda_base_images.csv");
    let mut checked = 0;
    for (package, versions) in [
        ("cudatoolkit", &cudatoolkit[..]),
        ("pytorch-cuda", &pytorch_cuda[..]),
    ] {
        for (i, v) in versions.iter().enumerate() {
            // The newest image of that CUDA in the table.
            let Some(image) = images
                .iter()
                .filter(|r| r[1].starts_with(&format!("{v}.")))
                .max_by_key(|r| (num(&r[1]), num(&r[3])))
            else {
                assert!(num(v)[0] < 11, "{package} {v}: no image");
                continue;
            };
            let image = format!("nvidia/cuda:{}", image[0]);
            let other = versions[if i == 0 { 1 } else { i - 1 }];
            let text = |spec: &str| {
                format!(
                    "env e {{\n  base = image(\"{image}\")\n  conda.packages = [\"{spec}\"]\n}}\n"
                )
            };
            let dir = workspace(&text(&format!("{package}={other}")));
            let out = sclc(
                dir.path(),
                &["check", "m.env.scl", "--message-format", "json"],
            );
            let found: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stderr)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(found.len(), 1, "{package}={other} on {image}: {found:?}");
            assert_eq!(found[0]["code"], "E0505");
            assert_eq!(
                found[0]["message"],
                format!(
                    "`{package}={other}` asks conda for a CUDA that is not the base image's: {image} has CUDA {}",
                    image.split(':').nth(1).unwrap().split('-').next().unwrap()
                )
            );
            let help = found[0]["help"].as_str().unwrap();
            assert_eq!(
                help,
                format!(
                    "ask conda for CUDA {v} (`{package}={v}`), or drop it and use the image's CUDA"
                ),
            );
            assert_eq!(
                diagnostics(&text(&format!("{package}={v}"))),
                Vec::<String>::new()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 9 + 5);
    // A CUDA past the table: the help names the versions that exist.
    let found = diagnostics(
        "env e {\n  base = image(\"nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04\")\n  conda.packages = [\"pytorch-cuda=12.4\", \"cudatoolkit=11.8\"]\n}\n",
    );
    assert_eq!(found.len(), 2, "{found:?}");
    let dir = workspace(
        "env e {\n  base = image(\"nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04\")\n  conda.packages = [\"pytorch-cuda=12.4\", \"cudatoolkit=11.8\"]\n}\n",
    );
    let out = sclc(
        dir.path(),
        &["check", "m.env.scl", "--message-format", "json"],
    );
    let helps: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["help"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        helps,
        [
            "`pytorch-cuda` is published for CUDA 11.6, 11.7, 11.8, 12.1, 12.4 only, not 12.8: ask for `cuda-version=12.8` instead, or drop it and use the image's CUDA",
            "`cudatoolkit` is published for CUDA 9.0 to 11.8 only, not 12.8: ask for `cuda-version=12.8` instead, or drop it and use the image's CUDA",
        ]
    );
}

/// The passing side of E0511, E0512 and W0506, each beside its failing
/// example: the same env with the fix the help names has no diagnostic.
#[test]
fn fixed_inputs_of_e0511_e0512_w0506_are_clean() {
    // E0511: torchvision 0.23.0 (torch 2.8.0) has no CUDA 11.8 wheel; its
    // CUDA 12.8 wheel exists. torchaudio 0.10.0 is the first with variants.
    let found = diagnostics(
        "env e {\n  base = image(\"python:3.10-slim\")\n  python.packages = [\"torchvision==0.23.0+cu118\"]\n}\n",
    );
    assert_eq!(
        found,
        ["E0511 3:22 `torchvision==0.23.0+cu118` does not exist: torch 2.8.0 has wheels for CUDA 12.6, 12.8, 12.9 only"]
    );
    assert_eq!(
        diagnostics(
            "env e {\n  base = image(\"python:3.10-slim\")\n  python.packages = [\"torchvision==0.23.0+cu128\"]\n}\n",
        ),
        Vec::<String>::new()
    );
    // E0512: torch 1.10.1's CUDA 11.1 wheel is only on a find-links page;
    // torch 1.11.0's CUDA 11.3 wheel is on the cu113 index.
    let found = diagnostics(
        "env e {\n  base = image(\"python:3.9-slim\")\n  python.packages = [\"torch==1.10.1+cu111\"]\n}\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "E0512 3:22 `torch==1.10.1+cu111` is published only on the find-links page "
        ),
        "{found:?}"
    );
    let ir = clean_ir(
        "env e {\n  base = image(\"python:3.9-slim\")\n  python.packages = [\"torch==1.11.0+cu113\", \"torchaudio==0.11.0+cu113\"]\n}\n",
    );
    assert_eq!(
        ir["e"]["python"]["extra_index_urls"],
        serde_json::json!(["https://download.pytorch.org/whl/cu113"])
    );
    // W0506: `python.version` on an image without Python is the `python3`
    // of its OS, or a warning.
    let found =
        diagnostics("env e {\n  base = image(\"ubuntu:24.04\")\n  python.version = \"3.10\"\n}\n");
    assert_eq!(
        found,
        ["W0506 3:3 `python.version` is 3.10, but the base image ubuntu:24.04 has no Python, and the `python3` its package manager installs, which sclc uses, is Python 3.12"]
    );
    for (image, python) in [
        ("ubuntu:24.04", "3.12"),
        ("ubuntu:20.04", "3.8"),
        ("debian:11", "3.9"),
        ("debian:trixie", "3.13"),
        ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "3.10"),
    ] {
        assert_eq!(
            diagnostics(&format!(
                "env e {{\n  base = image(\"{image}\")\n  python.version = \"{python}\"\n}}\n"
            )),
            Vec::<String>::new(),
            "{image}"
        );
    }
}
