//! The conda target (`environment.yml`): snapshots of every fixture
//! (`tests/fixtures/*.json` and the conda ones in `tests/fixtures/conda/`),
//! every generated file read back by rattler's `EnvironmentYaml` reader and
//! compared field by field with the IR, requirements files inlined as pip
//! reads them, and hostile values in vars that come back unchanged or are
//! refused with errors naming their field.

mod common;

use rattler_conda_types::{EnvironmentYaml, MatchSpec, ParseStrictness};
use scl_backends::conda::{self, DEFAULT_CHANNELS};
use scl_backends::{ErrorKind, LowerCx, Lowered};
use scl_ir::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture: the shared ones and `tests/fixtures/conda/*.json`, sorted.
fn fixtures() -> Vec<(String, EnvSpec)> {
    let mut out = common::fixtures();
    let dir = common::fixtures_dir().join("conda");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let spec: EnvSpec = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((name, spec));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The text of a requirements file: the file of that path and SHA-256 in
/// `tests/fixtures/conda/files/` or in one of the examples (the scenario
/// fixtures name the examples' files by their real hashes).
fn find_text(r: &FileRef) -> Option<String> {
    let root = manifest().join("../..");
    let mut dirs = vec![common::fixtures_dir().join("conda/files")];
    for e in std::fs::read_dir(root.join("examples")).unwrap() {
        dirs.push(e.unwrap().path());
    }
    dirs.iter().find_map(|d| {
        let text = std::fs::read_to_string(d.join(&r.path)).ok()?;
        (sha256_hex(text.as_bytes()) == r.sha256).then_some(text)
    })
}

/// A fixed requirements text for a fixture whose file exists nowhere
/// (`edge_fedora_uv` names a made-up hash).
const STAND_IN: &str = "# stand-in for a file the fixture does not ship\nrequests==2.32.3\n";

/// `spec` with every requirements file's hash made that of [`STAND_IN`]
/// where its real file is not found, and the texts for [`LowerCx::files`].
fn with_files(mut spec: EnvSpec) -> (EnvSpec, BTreeMap<String, String>) {
    fn fix(spec: &mut EnvSpec, files: &mut BTreeMap<String, String>) {
        if let Some(p) = &mut spec.python {
            for r in &mut p.requirements {
                let text = find_text(r).unwrap_or_else(|| {
                    r.sha256 = sha256_hex(STAND_IN.as_bytes());
                    STAND_IN.to_string()
                });
                files.insert(r.path.clone(), text);
            }
        }
        for s in spec.services.values_mut() {
            fix(Arc::make_mut(s), files);
        }
    }
    let mut files = BTreeMap::new();
    fix(&mut spec, &mut files);
    (spec, files)
}

fn cx(name: &str, files: BTreeMap<String, String>) -> LowerCx {
    let mut cx = LowerCx::new(name);
    cx.files = files;
    cx
}

/// Every fixture lowered to conda: `(name, IR as lowered, files, output)`.
fn lowered() -> Vec<(String, EnvSpec, BTreeMap<String, String>, Lowered)> {
    fixtures()
        .into_iter()
        .map(|(name, spec)| {
            let (spec, files) = with_files(spec);
            let out = conda::lower(&spec, &cx(&name, files.clone()));
            (name, spec, files, out)
        })
        .collect()
}

#[test]
fn every_fixture_snapshots() {
    for (name, _spec, _files, out) in lowered() {
        if !out.errors.is_empty() {
            // A fixture of hostile values (`edge_fedora_uv`): refused whole.
            assert!(out.artifacts.is_empty(), "{name}");
            let errors: Vec<String> = out
                .errors
                .iter()
                .map(|e| format!("{}: {:?}: {}", e.field, e.kind, e.message))
                .collect();
            insta::assert_snapshot!(format!("{name}__errors"), errors.join("\n"));
            continue;
        }
        assert!(!out.artifacts.is_empty(), "{name}: no artifacts");
        for a in &out.artifacts {
            insta::assert_snapshot!(
                format!("{name}__{}", a.path.replace('/', "__")),
                &a.contents
            );
        }
        let warnings: Vec<String> = out
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.field, w.message))
            .collect();
        insta::assert_snapshot!(format!("{name}__warnings"), warnings.join("\n"));
    }
}

/// What a test expects in the `pip:` list of `spec`, computed apart from
/// the backend: index URLs, then each file's lines without comments and
/// blank lines (continuations joined), then the packages.
fn expected_pip(spec: &EnvSpec, files: &BTreeMap<String, String>) -> Vec<String> {
    let Some(p) = &spec.python else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.extend(p.index_url.iter().map(|u| format!("--index-url {u}")));
    out.extend(
        p.extra_index_urls
            .iter()
            .map(|u| format!("--extra-index-url {u}")),
    );
    for r in &p.requirements {
        let text = files[&r.path].replace("\\\n", "");
        for line in text.lines() {
            let line = match line.find(" #") {
                Some(i) => &line[..i],
                None => line,
            }
            .trim();
            // A file's index line that the IR's fields already write is not
            // repeated.
            let normal = line.replacen("-url=", "-url ", 1);
            if (normal.starts_with("--index-url ") || normal.starts_with("--extra-index-url "))
                && out.contains(&normal)
            {
                continue;
            }
            if !line.is_empty() && !line.starts_with('#') {
                out.push(line.to_string());
            }
        }
    }
    out.extend(p.packages.iter().map(|p| p.to_string()));
    out
}

fn canonical(spec: &str) -> String {
    MatchSpec::from_str(spec, ParseStrictness::Strict)
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .to_string()
}

/// Checks one `environment.yml` against the IR it came from.
fn check_file(
    what: &str,
    text: &str,
    name: &str,
    spec: &EnvSpec,
    files: &BTreeMap<String, String>,
) {
    let env =
        EnvironmentYaml::from_yaml_str(text).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    assert_eq!(env.name.as_deref(), Some(name), "{what}: name");
    let channels: Vec<String> = env.channels.iter().map(|c| c.to_string()).collect();
    let want: Vec<String> = match spec.conda.as_ref().map(|c| &c.channels) {
        Some(c) if !c.is_empty() => c.clone(),
        _ => DEFAULT_CHANNELS.iter().map(|s| s.to_string()).collect(),
    };
    assert_eq!(channels, want, "{what}: channels in the written order");

    let pip = expected_pip(spec, files);
    let mut specs = Vec::new();
    if let Some(v) = spec.python.as_ref().and_then(|p| p.version.as_ref()) {
        specs.push(format!("python={v}"));
    }
    let conda_pkgs = spec
        .conda
        .as_ref()
        .map(|c| {
            c.packages
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<String>>()
        })
        .unwrap_or_default();
    let names_pip = conda_pkgs
        .iter()
        .any(|p| p == "pip" || p.starts_with("pip>") || p.starts_with("pip="));
    specs.extend(conda_pkgs);
    if !pip.is_empty() && !names_pip {
        specs.push("pip".into());
    }
    let got: Vec<String> = env.match_specs().map(|m| m.to_string()).collect();
    let want: Vec<String> = specs.iter().map(|s| canonical(s)).collect();
    assert_eq!(got, want, "{what}: match specs in order");
    // The subsection is the last dependency, and the only one.
    assert_eq!(
        env.pip_specs().unwrap_or_default(),
        pip.as_slice(),
        "{what}: pip specs in order"
    );
    if !pip.is_empty() {
        assert!(
            env.dependencies.last().unwrap().as_sub_section().is_some(),
            "{what}: pip last"
        );
    }
    let vars: Vec<(String, String)> = spec
        .vars
        .iter()
        .filter_map(|(k, v)| match v {
            VarValue::Plain(v) => Some((k.to_string(), v.to_string())),
            VarValue::Secret(_) => None,
        })
        .collect();
    let got: Vec<(String, String)> = env
        .variables
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, vars, "{what}: plain vars, no secrets");
}

/// The IR an artifact lowers (the env, or the service its folder names)
/// and the `name` it must carry.
fn spec_and_name<'a>(spec: &'a EnvSpec, env: &'a str, path: &str) -> (&'a EnvSpec, &'a str) {
    let mut s = spec;
    let mut name = env;
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for p in parts {
        let (k, v) = s.services.get_key_value(p).unwrap();
        s = v;
        name = k;
    }
    (s, name)
}

#[test]
fn every_file_reads_back_as_the_ir() {
    for (env, spec, files, out) in lowered() {
        for a in &out.artifacts {
            assert!(
                a.path == "environment.yml" || a.path.ends_with("/environment.yml"),
                "{}",
                a.path
            );
            let (s, name) = spec_and_name(&spec, &env, &a.path);
            check_file(&format!("{env}: {}", a.path), &a.contents, name, s, &files);
        }
    }
}

#[test]
fn services_get_one_file_each_and_a_group_none() {
    let (_, spec, _, out) = lowered()
        .into_iter()
        .find(|(n, ..)| n == "conda_services")
        .unwrap();
    let paths: Vec<&str> = out.artifacts.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["api/environment.yml", "worker/environment.yml"]);
    assert!(spec.base.is_none());
    // `pip>=24` is listed by the env: no second `pip`.
    let worker = EnvironmentYaml::from_yaml_str(&out.artifacts[1].contents).unwrap();
    assert_eq!(
        worker
            .match_specs()
            .filter(|m| m.name.as_exact().unwrap().as_normalized() == "pip")
            .count(),
        1
    );
    // uv is not used.
    assert!(
        out.warnings
            .iter()
            .any(|w| w.field == "services.api.python.manager"),
        "{:?}",
        out.warnings
    );
}

fn python(packages: &[&str]) -> Python {
    Python {
        extra_index_urls: Vec::new(),
        index_credentials: None,
        index_url: None,
        manager: PythonManager::Conda,
        packages: packages.iter().map(|s| s.to_string().into()).collect(),
        requirements: Vec::new(),
        version: None,
    }
}

fn with_requirements(text: &str) -> (EnvSpec, LowerCx) {
    let mut py = python(&["wandb==0.17.0"]);
    py.requirements.push(FileRef {
        path: "req/requirements.txt".into(),
        sha256: sha256_hex(text.as_bytes()),
    });
    let spec = EnvSpec {
        python: Some(py),
        ..EnvSpec::default()
    };
    let files = [("req/requirements.txt".to_string(), text.to_string())].into();
    (spec, cx("train", files))
}

fn pip_of(out: &Lowered) -> Vec<String> {
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let env = EnvironmentYaml::from_yaml_str(&out.artifacts[0].contents).unwrap();
    env.pip_specs().unwrap().to_vec()
}

#[test]
fn a_requirements_file_is_inlined_as_pip_reads_it() {
    let text = "\u{feff}# header\r\n--index-url https://pypi.example.org/simple\r\n\r\n--extra-index-url=https://extra.example.org/simple # mirror\nnumpy==1.26.4 \\\n  --hash=sha256:aa \\\n  --hash=sha256:bb\n#comment ending in \\\ntorch==2.1.2  # pinned\n  \t \n-i https://third.example.org\n--pre\nfoo @ https://example.org/foo-1.0.tar.gz\nlast \\";
    let (spec, cx) = with_requirements(text);
    let out = conda::lower(&spec, &cx);
    assert_eq!(
        pip_of(&out),
        [
            "--index-url https://pypi.example.org/simple",
            "--extra-index-url=https://extra.example.org/simple",
            "numpy==1.26.4   --hash=sha256:aa   --hash=sha256:bb",
            "torch==2.1.2",
            "-i https://third.example.org",
            "--pre",
            "foo @ https://example.org/foo-1.0.tar.gz",
            "last",
            "wandb==0.17.0",
        ]
    );
    // The pip entry comes with `pip` itself, after the conda specs.
    let env = EnvironmentYaml::from_yaml_str(&out.artifacts[0].contents).unwrap();
    let specs: Vec<String> = env.match_specs().map(|m| m.to_string()).collect();
    assert_eq!(specs, ["pip"]);
}

#[test]
fn nested_files_relative_paths_and_missing_texts_are_refused() {
    for (line, why) in [
        ("-r other.txt", "another requirements"),
        ("-rother.txt", "another requirements"),
        ("--requirement=other.txt", "another requirements"),
        ("--requirem other.txt", "another requirements"),
        ("-c constraints.txt", "another requirements"),
        ("--cons constraints.txt", "another requirements"),
        ("-e .", "relative path"),
        ("--editable=./pkg", "relative path"),
        ("./dist/pkg-1.0.whl", "relative path"),
        ("--find-links ../wheels", "relative path"),
        ("pkg==1 \\\n#c", "wandb"),
    ] {
        let (spec, cx) = with_requirements(&format!("ok==1\n{line}\n"));
        let out = conda::lower(&spec, &cx);
        if why == "wandb" {
            // A comment line ends the continuation: `pkg==1 ` then nothing.
            assert_eq!(pip_of(&out), ["ok==1", "pkg==1", "wandb==0.17.0"], "{line}");
            continue;
        }
        assert!(out.artifacts.is_empty(), "{line}");
        assert_eq!(out.errors.len(), 1, "{line}: {:?}", out.errors);
        let e = &out.errors[0];
        assert_eq!(e.field, "python.requirements[0]", "{line}");
        assert!(
            e.message.contains("line 2 of `req/requirements.txt`"),
            "{}",
            e.message
        );
        assert!(e.message.contains(why), "{line}: {}", e.message);
    }
    // `--require-hashes` and `--config-settings` are options, not files.
    let (spec, cx) = with_requirements(
        "--require-hashes\nx==1 --config-settings=a=b\n-e git+https://example.org/r.git#egg=r\n",
    );
    assert_eq!(pip_of(&conda::lower(&spec, &cx)).len(), 4);

    // No text, or another text than the IR's hash.
    let (spec, mut cx) = with_requirements("x==1\n");
    cx.files.clear();
    let out = conda::lower(&spec, &cx);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].field, "python.requirements[0]");
    assert!(
        out.errors[0].message.contains("`req/requirements.txt`"),
        "{}",
        out.errors[0].message
    );
    cx.files
        .insert("req/requirements.txt".into(), "y==2\n".into());
    let out = conda::lower(&spec, &cx);
    assert!(
        out.errors[0].message.contains("SHA-256"),
        "{}",
        out.errors[0].message
    );
}

#[test]
fn pip_entries_pip_would_misread_are_refused() {
    for p in [
        "a==1 # c",
        "a==1\\",
        "a==1\nb",
        "x @ https://${TOKEN}@h/x.whl",
        "a\u{2028}b",
        "./local",
    ] {
        let spec = EnvSpec {
            python: Some(python(&["ok==1", p])),
            ..EnvSpec::default()
        };
        let out = conda::lower(&spec, &LowerCx::new("e"));
        assert_eq!(out.errors.len(), 1, "{p:?}: {:?}", out.errors);
        assert_eq!(out.errors[0].field, "python.packages[1]", "{p:?}");
        assert!(out.artifacts.is_empty());
    }
}

#[test]
fn python_version_conda_specs_and_names() {
    let spec = |v: &str, pkgs: &[&str]| EnvSpec {
        python: Some(Python {
            version: Some(v.into()),
            ..python(&[])
        }),
        conda: Some(Conda {
            channels: Vec::new(),
            packages: pkgs.iter().map(|s| s.to_string().into()).collect(),
        }),
        ..EnvSpec::default()
    };
    let out = conda::lower(&spec("3.11.7", &["numpy>=1.26"]), &LowerCx::new("e"));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let env = EnvironmentYaml::from_yaml_str(&out.artifacts[0].contents).unwrap();
    let specs: Vec<String> = env.match_specs().map(|m| m.to_string()).collect();
    assert_eq!(
        specs,
        [canonical("python=3.11.7"), canonical("numpy>=1.26")]
    );
    assert!(
        out.artifacts[0].contents.contains("\n- python=3.11.7\n"),
        "{}",
        out.artifacts[0].contents
    );
    assert!(env.pip_specs().is_none(), "no pip packages, no pip");

    for bad in [
        "numpy >= 1.0 2.0 <",
        "numpy=1.0\nscipy",
        "numpy[version=='1']]",
    ] {
        let out = conda::lower(&spec("3.11", &["ok", bad]), &LowerCx::new("e"));
        assert_eq!(out.errors.len(), 1, "{bad:?}: {:?}", out.errors);
        assert_eq!(out.errors[0].field, "conda.packages[1]");
    }
    for v in ["3.11 4", "3.11,<4", ">=3.10", "3.11=h1"] {
        let out = conda::lower(&spec(v, &[]), &LowerCx::new("e"));
        assert_eq!(out.errors.len(), 1, "{v}");
        assert_eq!(out.errors[0].field, "python.version", "{:?}", out.errors);
    }

    for (name, kind) in [
        ("base", ErrorKind::Reserved),
        ("root", ErrorKind::Reserved),
        ("a:b", ErrorKind::Unwritable),
        ("a b", ErrorKind::Unwritable),
    ] {
        let out = conda::lower(&spec("3.11", &[]), &LowerCx::new(name));
        assert_eq!(out.errors.len(), 1, "{name}");
        assert_eq!(out.errors[0].kind, kind, "{name}");
    }
}

#[test]
fn service_folders_are_checked() {
    let svc = Arc::new(EnvSpec {
        python: Some(python(&["x==1"])),
        ..EnvSpec::default()
    });
    for (names, field) in [
        (&["environment.yml", "ok"][..], "services.environment.yml"),
        (&["Web", "web"][..], "services.web"),
        (&["a b", "ok"][..], "services.a b"),
        (&["base", "ok"][..], "services.base"),
    ] {
        let spec = EnvSpec {
            services: names.iter().map(|n| (n.to_string(), svc.clone())).collect(),
            ..EnvSpec::default()
        };
        let out = conda::lower(&spec, &LowerCx::new("stack"));
        assert_eq!(out.errors.len(), 1, "{names:?}: {:?}", out.errors);
        assert_eq!(out.errors[0].field, field);
        assert!(out.artifacts.is_empty());
    }
}

#[test]
fn unwritten_fields_are_one_warning_each() {
    let (_, _, _, out) = lowered()
        .into_iter()
        .find(|(n, ..)| n == "conda_train")
        .unwrap();
    let fields: Vec<&str> = out.warnings.iter().map(|w| w.field.as_str()).collect();
    for f in ["system.packages", "setup", "vars.HF_TOKEN", "vars.DATA_DIR"] {
        assert_eq!(
            fields.iter().filter(|x| **x == f).count(),
            1,
            "{f}: {fields:?}"
        );
    }
    // What describes the image (set by default on every built env) is not
    // a warning: a conda env has no image.
    for f in ["base", "user", "workdir"] {
        assert!(!fields.contains(&f), "{f}: {fields:?}");
    }
    let text = &out.artifacts[0].contents;
    assert!(
        !text.contains("HF_TOKEN") && !text.contains("hf"),
        "no secret in the file:\n{text}"
    );
}

/// Hostile var values and names: YAML indicators, words YAML reads as other
/// types, leading and trailing spaces, quotes, line breaks.
const HOSTILE: &[&str] = &[
    "plain",
    "",
    " ",
    "  leading",
    "trailing  ",
    ": colon",
    "a: b",
    "a:b",
    "#hash",
    "a #b",
    "- dash",
    "-",
    "--",
    "?",
    "? q",
    "{",
    "}",
    "{a: b}",
    "[",
    "]",
    "[1, 2]",
    "&anchor",
    "*alias",
    "!tag",
    "!!str",
    "|",
    "|-",
    ">",
    ">-",
    "'",
    "''",
    "\"",
    "it's",
    "say \"hi\"",
    "%YAML",
    "%",
    "@at",
    "`tick`",
    ",",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "true",
    "False",
    "null",
    "Null",
    "~",
    "NaN",
    ".nan",
    ".inf",
    "-.inf",
    "1",
    "0123",
    "0o17",
    "0x1f",
    "0b101",
    "1_000",
    "1e3",
    "1.5",
    "+1",
    "1.2.3",
    "2024-01-31",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "$HOME",
    "${X}",
    "\\",
    "C:\\tools\\",
    "new\nline",
    "cr\rx",
    "tab\tx",
    "nul\0x",
    "\u{85}",
    "\u{2028}",
    "\u{feff}bom",
    "ümlaut",
    "日本",
    "emoji 🎉",
    "---",
    "...",
    "a\\nb",
];

/// The env with one var.
fn var_env(name: &str, value: &str) -> EnvSpec {
    EnvSpec {
        vars: [(name.into(), VarValue::Plain(value.into()))].into(),
        ..EnvSpec::default()
    }
}

#[test]
fn hostile_var_values_and_names_come_back_or_are_refused() {
    let mut refused = Vec::new();
    for s in HOSTILE {
        for (name, value) in [("HOSTILE", *s), (*s, "x")] {
            let out = conda::lower(&var_env(name, value), &LowerCx::new("e"));
            if !out.errors.is_empty() {
                assert!(out.artifacts.is_empty());
                for e in &out.errors {
                    assert_eq!(e.field, format!("vars.{name}"), "{s:?}: {e:?}");
                }
                refused.push((name == "HOSTILE", *s));
                continue;
            }
            let text = &out.artifacts[0].contents;
            let env = EnvironmentYaml::from_yaml_str(text)
                .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
            assert_eq!(env.variables.len(), 1, "{s:?}\n{text}");
            assert_eq!(
                env.variables.get(name).map(String::as_str),
                Some(value),
                "{s:?}\n{text}"
            );
            // Also read as generic YAML: a string, not another type.
            let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).unwrap();
            assert_eq!(
                doc["variables"][name].as_str(),
                Some(value),
                "{s:?}\n{text}"
            );
            assert_eq!(doc["name"].as_str(), Some("e"));
        }
    }
    let values: Vec<&str> = refused
        .iter()
        .filter(|(v, _)| *v)
        .map(|(_, s)| *s)
        .collect();
    // What conda's activation or YAML reader would misread, and only that.
    for s in [
        "'",
        "\"",
        "it's",
        "new\nline",
        "cr\rx",
        "nul\0x",
        "1_000",
        "2024-01-31",
        "\u{2028}",
    ] {
        assert!(values.contains(&s), "{s:?} written: {values:?}");
    }
    for s in [
        "yes",
        "null",
        "~",
        ": colon",
        "#hash",
        "  leading",
        "{a: b}",
        "&anchor",
        "%",
        "@at",
        "1.2.3",
        "$HOME",
    ] {
        assert!(!values.contains(&s), "{s:?} refused");
    }
    // Names: exactly the shell names ([A-Za-z_][A-Za-z0-9_]*) are written.
    let shell_name = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    for s in HOSTILE {
        let name_refused = refused.iter().any(|(v, r)| !*v && r == s);
        assert_eq!(name_refused, !shell_name(s), "name {s:?}");
    }
}

#[test]
fn yaml_misread_follows_ruamel_where_the_writer_does_not_quote() {
    for s in ["1_000", "2024-01-31", "2001-12-14 21:59:43.10 -5", "0_7"] {
        assert!(conda::yaml_misread(s).is_some(), "{s}");
    }
    for s in [
        "yes",
        "on",
        "1.2.3",
        "3.11",
        "null",
        "true",
        "0123",
        "1e3",
        "~",
        "",
        "numpy>=1.26",
        "=1",
    ] {
        assert_eq!(conda::yaml_misread(s), None, "{s}");
    }
}

#[test]
fn registered() {
    let b = scl_backends::backend::backend("conda").expect("in the registry");
    assert_eq!(b.expresses().target, "conda");
    assert_eq!(b.layout(), ["environment.yml", "<service>/environment.yml"]);
}

/// A requirements file's index line, which the IR also holds in
/// `python.extra_index_urls`, is written once.
#[test]
fn an_index_line_is_written_once() {
    let text = "--extra-index-url=https://pypi.internal.example.com/simple\nsix==1.16.0\n";
    let spec = EnvSpec {
        api_version: API_VERSION.into(),
        base: Some(ImageRef {
            reference: "python:3.11".into(),
            digest: None,
        }),
        python: Some(Python {
            extra_index_urls: vec!["https://pypi.internal.example.com/simple".into()],
            index_credentials: None,
            index_url: None,
            manager: PythonManager::Pip,
            packages: vec![],
            requirements: vec![FileRef {
                path: "req.txt".into(),
                sha256: sha256_hex(text.as_bytes()),
            }],
            version: None,
        }),
        ..Default::default()
    };
    let files = BTreeMap::from([("req.txt".to_string(), text.to_string())]);
    let out = conda::lower(&spec, &cx("c", files));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let yml = &out.artifacts[0].contents;
    assert_eq!(yml.matches("--extra-index-url").count(), 1, "{yml}");
    assert!(yml.contains("  - six==1.16.0\n"), "{yml}");
}
