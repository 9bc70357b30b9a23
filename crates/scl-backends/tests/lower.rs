//! Behaviour of `docker::lower` on small hand-built IRs: what is left out,
//! and the warning that says so.

use scl_backends::docker::lower;
use scl_ir::*;
use std::collections::BTreeMap;

fn built(base: &str) -> EnvSpec {
    EnvSpec {
        api_version: API_VERSION.into(),
        base: Some(ImageRef {
            reference: base.into(),
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

fn dockerfile(spec: &EnvSpec) -> String {
    lower(spec, "t")
        .artifact("Dockerfile")
        .expect("a Dockerfile")
        .contents
        .clone()
}

fn fields(spec: &EnvSpec) -> Vec<String> {
    lower(spec, "t")
        .warnings
        .into_iter()
        .map(|w| w.field)
        .collect()
}

#[test]
fn minimal_env() {
    let text = dockerfile(&built("debian:12.5"));
    assert!(text.contains("\nFROM debian:12.5\n"));
    assert!(text.contains("useradd --create-home --no-log-init --non-unique --uid 1000 app"));
    assert!(text.contains("\nUSER 1000\nWORKDIR /workspace\n"));
    assert!(!text.contains("apt-get"), "no packages, no apt layer");
    assert!(!text.contains("# syntax="), "no frontend pin unless needed");
    assert!(!text.contains("ENTRYPOINT") && !text.contains("CMD"));
    assert!(lower(&built("debian:12.5"), "t").warnings.is_empty());
}

#[test]
fn digest_pinned_base() {
    let mut s = built("debian:12.5");
    s.base.as_mut().unwrap().digest = Some(format!("sha256:{}", "ab".repeat(32)));
    assert!(dockerfile(&s).contains(&format!("\nFROM debian:12.5@sha256:{}\n", "ab".repeat(32))));
}

#[test]
fn root_user_is_not_created() {
    let mut s = built("debian:12.5");
    s.user = Some(User {
        name: "root".into(),
        uid: 0,
    });
    let text = dockerfile(&s);
    assert!(!text.contains("useradd"));
    assert!(text.contains("\nUSER 0\n"));
    s.user = None;
    assert_eq!(fields(&s), ["user"]);
    assert!(!dockerfile(&s).contains("USER"));
}

#[test]
fn alpine_and_inferred_manager() {
    let mut s = built("redis:7-alpine");
    assert!(dockerfile(&s).contains("adduser -D -u 1000 app"));
    s.system = Some(System {
        packages: vec!["curl".into()],
        manager: SystemManager::Apk,
    });
    assert!(dockerfile(&s).contains("RUN apk add --no-cache \\\n      curl\n"));
}

#[test]
fn packages_are_quoted_in_order_and_line_breaks_refused() {
    let mut s = built("debian:12.5");
    s.system = Some(System {
        packages: vec![
            "zlib1g".into(),
            "git".into(),
            "evil\nRUN rm -rf /".into(),
            "a b".into(),
        ],
        manager: SystemManager::Apt,
    });
    let text = dockerfile(&s);
    assert!(
        text.find("zlib1g").unwrap() < text.find("      git \\").unwrap(),
        "IR order kept"
    );
    assert!(!text.contains("RUN rm -rf /\n") && !text.contains("evil"));
    assert!(text.contains("      'a b' \\"));
    assert_eq!(fields(&s), ["system.packages[2]"]);
}

#[test]
fn python_managers() {
    let mut s = built("python:3.11-slim");
    s.python = Some(Python {
        version: Some("3.11".into()),
        manager: PythonManager::Pip,
        packages: vec!["numpy>=1.26".into()],
        requirements: vec![],
        index_url: None,
        extra_index_urls: vec![],
    });
    let text = dockerfile(&s);
    assert!(text.contains("RUN python3 -m pip install --no-cache-dir \\\n      'numpy>=1.26'\n"));
    assert!(
        !text.contains("python.version"),
        "matching python image: no note"
    );
    assert!(lower(&s, "t").warnings.is_empty());

    s.python.as_mut().unwrap().manager = PythonManager::Uv;
    let text = dockerfile(&s);
    assert!(text.contains(&format!(
        "RUN python3 -m pip install --no-cache-dir {}\n",
        scl_backends::docker::UV
    )));
    assert!(text.contains("RUN uv pip install --system --no-cache \\\n      'numpy>=1.26'\n"));

    s.python.as_mut().unwrap().version = Some("3.10".into());
    assert_eq!(fields(&s), ["python.version"]);
}

#[test]
fn assets() {
    let mut s = built("debian:12.5");
    s.assets = vec![
        Asset::Url {
            url: "https://h/w.bin".into(),
            sha256: Some("AB".repeat(32)),
            to: "/m".into(),
        },
        Asset::Url {
            url: "https://h/x.bin".into(),
            sha256: Some("nothex".into()),
            to: "/m".into(),
        },
        Asset::Huggingface {
            repo: "org/model".into(),
            files: vec!["a b.safetensors".into()],
            revision: "0123abc".into(),
            to: "/m/hf".into(),
        },
    ];
    let text = dockerfile(&s);
    assert!(
        text.starts_with("# syntax=docker/dockerfile:1.7\n"),
        "checksum needs the 1.6+ frontend"
    );
    assert!(text.contains(&format!(
        "ADD --checksum=sha256:{} --chown=app https://h/w.bin /m/w.bin\n",
        "ab".repeat(32)
    )));
    assert!(
        !text.contains("x.bin"),
        "an asset with a malformed sha256 is not fetched unverified"
    );
    assert!(text.contains(
        "      'a b.safetensors' \\\n      --revision 0123abc \\\n      --local-dir /m/hf \\\n"
    ));
    assert!(text.contains(scl_backends::docker::HUGGINGFACE_HUB));
    assert_eq!(fields(&s), ["assets[1].sha256"]);
}

#[test]
fn setup_steps() {
    let mut s = built("debian:12.5");
    s.setup = vec![
        "echo one".into(),
        "   ".into(),
        "cat <<EOF > /x\nSCL_SETUP\nEOF\n".into(),
        "echo trailing \\".into(),
    ];
    let text = dockerfile(&s);
    assert!(
        text.starts_with("# syntax=docker/dockerfile:1.7\n"),
        "here-documents need the frontend pin"
    );
    assert!(text.contains("\nRUN echo one\n"));
    assert!(text.contains("\nRUN <<'SCL_SETUP_1'\ncat <<EOF > /x\nSCL_SETUP\nEOF\nSCL_SETUP_1\n\n"));
    assert!(text.contains("\nRUN <<'SCL_SETUP'\necho trailing \\\nSCL_SETUP\n\n"));
    assert_eq!(fields(&s), ["setup[1]"]);
}

#[test]
fn vars_and_labels() {
    let mut s = built("debian:12.5");
    s.vars = BTreeMap::from([
        ("B".to_string(), VarValue::Plain("x $y \"z\"".into())),
        ("A".to_string(), VarValue::Plain("1".into())),
        ("NL".to_string(), VarValue::Plain("a\nb".into())),
        ("bad key".to_string(), VarValue::Plain("v".into())),
        (
            "TOKEN".to_string(),
            VarValue::Secret(SecretRef {
                secret: "s".into(),
                key: "k".into(),
            }),
        ),
    ]);
    s.labels = BTreeMap::from([
        ("dev.scl.ir.sha256".to_string(), "forged".to_string()),
        ("a.b".to_string(), "c".to_string()),
    ]);
    s.description = Some("two\nlines".into());
    let text = dockerfile(&s);
    assert!(
        text.contains("ENV A=\"1\" \\\n    B=\"x \\$y \\\"z\\\"\"\n"),
        "sorted, escaped:\n{text}"
    );
    assert!(!text.contains("NL=") && !text.contains("bad key"));
    assert!(text.contains("# runtime secret: TOKEN from secret s key k"));
    assert!(!text.contains("forged"));
    assert!(text.contains("org.opencontainers.image.description=\"two lines\""));
    assert!(text.contains(&format!("dev.scl.ir.sha256=\"{}\"", s.content_hash())));
    assert_eq!(
        fields(&s),
        ["vars.NL", "vars.bad key", "labels.dev.scl.ir.sha256"]
    );
}

#[test]
fn runtime_only_fields_warn() {
    let mut s = built("debian:12.5");
    s.resources = Some(Resources {
        requests: Some(ResourceList {
            cpu: Some(1000),
            ..Default::default()
        }),
        limits: None,
    });
    s.distributed = Some(Distributed {
        backend: Backend::Nccl,
        launcher: Launcher::Torchrun,
        nodes: 2,
        procs_per_node: 8,
        elastic: None,
    });
    s.entrypoint = vec!["python".into(), "train.py".into()];
    assert_eq!(fields(&s), ["resources", "distributed"]);
    assert!(
        dockerfile(&s).contains("\nENTRYPOINT [\"python\", \"train.py\"]\n"),
        "entrypoint unchanged"
    );
}

#[test]
fn services_and_missing_base() {
    let none = EnvSpec {
        api_version: API_VERSION.into(),
        ..Default::default()
    };
    let out = lower(&none, "t");
    assert!(out.artifacts.is_empty());
    assert_eq!(out.warnings[0].field, "base");

    let mut stack = none.clone();
    let mut svc = built("debian:12.5");
    svc.api_version.clear();
    svc.ignore = vec![".git".into()];
    stack
        .services
        .insert("web".into(), std::sync::Arc::new(svc.clone()));
    stack
        .services
        .insert("../evil".into(), std::sync::Arc::new(svc.clone()));
    stack
        .services
        .insert("nobase".into(), std::sync::Arc::new(EnvSpec::default()));
    let out = lower(&stack, "t");
    let paths: Vec<&str> = out.artifacts.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "web/Dockerfile",
            "web/Dockerfile.dockerignore",
            "web/.dockerignore"
        ]
    );
    let fields: Vec<&str> = out.warnings.iter().map(|w| w.field.as_str()).collect();
    assert_eq!(fields, ["services.../evil", "services.nobase.base"]);
    let text = &out.artifacts[0].contents;
    assert!(text.contains("from env t, service web."));
    assert!(text.contains("docker build -f out/t/web/Dockerfile <workspace root>"));
}

#[test]
fn env_name_cannot_inject_lines() {
    let out = lower(&built("debian:12.5"), "x\nRUN evil");
    let text = &out.artifact("Dockerfile").unwrap().contents;
    assert!(!text.lines().any(|l| l.starts_with("RUN evil")));
}

#[test]
fn odd_paths_use_the_json_form() {
    let mut s = built("debian:12.5");
    s.files = vec![Copy {
        from: "my dir/$x".into(),
        to: "/w/my dir".into(),
    }];
    s.workdir = Some("/w/my dir".into());
    let text = dockerfile(&s);
    assert!(
        text.contains(r#"COPY --chown=app ["my dir/\\$x", "/w/my dir"]"#),
        "{text}"
    );
    assert!(text.contains("WORKDIR \"/w/my dir\"\n"));
}
