//! Behaviour of `docker::lower` on small hand-built IRs: how each value is
//! written, the warnings for what Docker cannot express, and every error
//! path with its exact field, kind and message.

use scl_backends::docker::{lower, MAX_VALUE_BYTES};
use scl_backends::{ErrorKind, FieldError};
use scl_ir::*;
use std::process::Command;
use std::sync::Arc;

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
    let out = lower(spec, "t");
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out.artifact("Dockerfile")
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

/// The errors of lowering `spec`, as `(field, kind, message)`; also checks
/// that an output with errors has no artifact.
fn errors(spec: &EnvSpec) -> Vec<(String, ErrorKind, String)> {
    let out = lower(spec, "t");
    assert!(
        out.artifacts.is_empty(),
        "errors and artifacts: {:?}",
        out.errors
    );
    out.errors
        .into_iter()
        .map(
            |FieldError {
                 field,
                 kind,
                 message,
                 ..
             }| (field, kind, message),
        )
        .collect()
}

fn err(field: &str, kind: ErrorKind, message: &str) -> (String, ErrorKind, String) {
    (field.to_string(), kind, message.to_string())
}

const LINE_BREAK: &str = "contains a line break, NUL or an invisible character (a carriage return, an escape, a bidirectional override), which a Dockerfile cannot show as written";

#[test]
fn minimal_env() {
    let text = dockerfile(&built("debian:12.5"));
    assert!(text.contains("\nFROM debian:12.5\n"));
    assert!(text.contains(
        "      useradd --create-home --no-log-init --non-unique --uid 1000 -- app; \\\n"
    ));
    assert!(text.contains("\nUSER 1000\nWORKDIR /workspace\n"));
    assert!(!text.contains("apt-get"), "no packages, no apt layer");
    assert!(!text.contains("# syntax="), "no frontend pin unless needed");
    assert!(!text.contains("ENTRYPOINT") && !text.contains("CMD"));
    assert!(!text.contains("<<"), "no here-document");
    let out = lower(&built("debian:12.5"), "t");
    assert!(out.warnings.is_empty() && out.errors.is_empty());
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
    assert!(!text.contains("chown"), "root owns everything already");
    assert!(text.contains("\nUSER 0\n"));
    s.user = None;
    assert_eq!(fields(&s), ["user"]);
    assert!(!dockerfile(&s).contains("USER"));
}

/// The user step creates the user only when the name is free, and stops the
/// build when the base image has the name with another uid (`www-data` is
/// uid 33 in Debian images). Checked by running the step's shell with
/// stand-ins for `id` and `useradd`.
#[test]
fn existing_user_with_another_uid_stops_the_build() {
    let mut s = built("debian:12.5");
    s.user = Some(User {
        name: "www-data".into(),
        uid: 1000,
    });
    let text = dockerfile(&s);
    let run = user_step(&text);
    let dir = tempfile::tempdir().unwrap();
    let run_with = |id_uid: Option<u32>| {
        // `id -u -- NAME` prints the uid if the user exists; useradd records.
        let id = match id_uid {
            Some(u) => format!("id() {{ echo {u}; }}"),
            None => "id() { return 1; }".into(),
        };
        let script = format!(
            "{id}\nuseradd() {{ echo \"useradd $*\" >> {log}; }}\nmkdir() {{ :; }}\ntouch() {{ :; }}\n{run}",
            log = dir.path().join("log").display()
        );
        Command::new("sh").arg("-c").arg(script).output().unwrap()
    };
    // Absent: created with the uid.
    let o = run_with(None);
    assert!(o.status.success());
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert_eq!(
        log,
        "useradd --create-home --no-log-init --non-unique --uid 1000 -- www-data\n"
    );
    // Present with the same uid: nothing to do.
    std::fs::remove_file(dir.path().join("log")).unwrap();
    assert!(run_with(Some(1000)).status.success());
    assert!(!dir.path().join("log").exists());
    // Present with another uid: the build stops and says why.
    let o = run_with(Some(33));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "sclc: the base image already has a user www-data with another uid than 1000; choose another user.name or user.uid\n"
    );
    // Ownership never goes through the name.
    assert!(!text.contains("--chown=www-data"));
}

/// The shell command of the user-creation `RUN`, continuations joined.
fn user_step(text: &str) -> String {
    let start = text.find("RUN if ! id -u").expect("user step");
    let mut cmd = String::new();
    for line in text[start + 4..].lines() {
        match line.strip_suffix('\\') {
            Some(l) => cmd.push_str(l),
            None => {
                cmd.push_str(line);
                break;
            }
        }
    }
    cmd
}

/// `workdir = "/"` or `/etc` would have given the user the whole system
/// (`chown -R 1000 /`). Now such folders are refused, and the workdir is
/// given to the user only when the base image has no such folder.
#[test]
fn workdir_is_owned_only_when_this_build_made_it() {
    let s = built("debian:12.5");
    let text = dockerfile(&s);
    assert!(text.contains(
        " && if [ ! -e /workspace ]; then mkdir -p /tmp/scl && touch /tmp/scl/own-workdir; fi\n"
    ));
    assert!(text.contains(
        "RUN if [ -e /tmp/scl/own-workdir ]; then \\\n      mkdir -p /workspace && chown -hR 1000 /workspace && rm -f /tmp/scl/own-workdir; \\\n    fi\n"
    ));
    assert_eq!(text.matches("chown").count(), 1, "{text}");
    // Run both steps against a fake root: an existing folder keeps its owner.
    let root = tempfile::tempdir().unwrap();
    let run_steps = |existing: bool| {
        let w = root.path().join("w");
        let _ = std::fs::remove_dir_all(&w);
        let _ = std::fs::remove_dir_all(root.path().join("scl"));
        if existing {
            std::fs::create_dir(&w).unwrap();
        }
        let log = root.path().join("chown.log");
        let _ = std::fs::remove_file(&log);
        let first = user_step(&text);
        let first = first[first.find(" && if [ ! -e").unwrap() + 4..].to_string();
        let last = text[text.find("RUN if [ -e /tmp/scl/own-workdir ]").unwrap() + 4..]
            .lines()
            .take(3)
            .map(|l| l.trim_end_matches('\\'))
            .collect::<String>();
        let script = format!(
            "chown() {{ echo \"chown $*\" >> {log}; }}\n{}\n{}",
            first,
            last,
            log = log.display()
        )
        .replace("/tmp/scl", &root.path().join("scl").display().to_string())
        .replace("/workspace", &w.display().to_string());
        let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_to_string(&log).unwrap_or_default()
    };
    assert_eq!(
        run_steps(false),
        format!("chown -hR 1000 {}\n", root.path().join("w").display())
    );
    assert_eq!(run_steps(true), "", "an existing folder keeps its owner");

    // Deeper folders are fine.
    let mut s = built("debian:12.5");
    s.workdir = Some("/usr/src/app".into());
    assert!(dockerfile(&s).contains("\nWORKDIR /usr/src/app\n"));
    for bad in [
        "/",
        "/etc",
        "/etc/",
        "//usr",
        "/usr/../var",
        "/lib64",
        "/var/.",
        "/sys",
        "/proc",
    ] {
        s.workdir = Some(bad.into());
        let normal = match bad {
            "/" => "the root folder".to_string(),
            "/etc/" => "the system folder /etc".into(),
            "//usr" => "the system folder /usr".into(),
            "/usr/../var" | "/var/." => "the system folder /var".into(),
            b => format!("the system folder {b}"),
        };
        assert_eq!(
            errors(&s),
            [err(
                "workdir",
                ErrorKind::SystemFolder,
                &format!("{bad:?} is {normal}, which the runtime user must not be given")
            )],
            "{bad}"
        );
    }
    s.workdir = Some("relative/dir".into());
    assert_eq!(
        errors(&s),
        [err(
            "workdir",
            ErrorKind::SystemFolder,
            "\"relative/dir\" is not an absolute path"
        )]
    );
    s.workdir = Some("/a\nb".into());
    assert_eq!(
        errors(&s),
        [err("workdir", ErrorKind::Unwritable, LINE_BREAK)]
    );
    // Root needs no ownership step, so a system folder is still refused.
    s.user = Some(User {
        name: "root".into(),
        uid: 0,
    });
    s.workdir = Some("/etc".into());
    assert_eq!(errors(&s)[0].1, ErrorKind::SystemFolder);
}

#[test]
fn alpine_and_inferred_manager() {
    let mut s = built("redis:7-alpine");
    assert!(dockerfile(&s).contains("      adduser -D -u 1000 -- app; \\\n"));
    s.system = Some(System {
        packages: vec!["curl".into()],
        manager: SystemManager::Apk,
    });
    assert!(dockerfile(&s).contains("RUN apk add --no-cache -- \\\n      curl\n"));
}

/// `system.packages = ["-o", "APT::Get::AllowUnauthenticated=true"]` reached
/// apt-get as an option. Now apt and apk get `--` first (apt-get and apk
/// read everything after it as package names), and dnf, whose version 5 has
/// no `--`, refuses a leading `-` (as do yum and microdnf, given no `--`).
#[test]
fn packages_cannot_become_options() {
    let mut s = built("debian:12.5");
    s.system = Some(System {
        packages: vec!["-o".into(), "APT::Get::AllowUnauthenticated=true".into()],
        manager: SystemManager::Apt,
    });
    // apt: neither is a Debian package name (E0405, see
    // `apt_names_that_are_patterns_are_refused`).
    let e = errors(&s);
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e.iter().all(|(_, k, _)| *k == ErrorKind::PackagePattern),
        "{e:?}"
    );
    s.system.as_mut().unwrap().manager = SystemManager::Apk;
    assert!(dockerfile(&s).contains("RUN apk add --no-cache -- \\\n      -o \\\n"));
    s.system.as_mut().unwrap().manager = SystemManager::Dnf;
    assert_eq!(
        errors(&s),
        [err(
            "system.packages[0]",
            ErrorKind::Misread,
            "\"-o\" starts with `-`, so dnf would read it as an option (dnf 5 has no `--` to end the options)"
        )]
    );
    // yum and microdnf are given no `--` either: refused the same way.
    for (manager, tool) in [
        (SystemManager::Yum, "yum"),
        (SystemManager::Microdnf, "microdnf"),
    ] {
        s.system.as_mut().unwrap().manager = manager;
        assert_eq!(
            errors(&s),
            [err(
                "system.packages[0]",
                ErrorKind::Misread,
                &format!("\"-o\" starts with `-`, so {tool} would read it as an option")
            )]
        );
    }
}

/// CentOS 7 and Amazon Linux 2 have yum and no dnf, and no `python3`; the
/// manager is inferred from the base and Python comes from yum.
#[test]
fn yum_images_install_with_yum() {
    for base in ["centos:7", "amazonlinux:2"] {
        let mut s = built(base);
        s.python = Some(Python {
            index_credentials: None,
            version: None,
            manager: PythonManager::Pip,
            packages: vec!["rich".into()],
            requirements: vec![],
            index_url: None,
            extra_index_urls: vec![],
        });
        let text = dockerfile(&s);
        assert!(
            text.contains("\nRUN yum install -y --setopt=skip_missing_names_on_install=False \\\n      python3 \\\n && yum clean all\n"),
            "{base}: {text}"
        );
        assert!(!text.contains("dnf"), "{base}: {text}");
        assert!(text.contains("RUN python3 -m venv /opt/venv\n"), "{base}");
    }
}

/// The minimal Red Hat images have only microdnf and no `useradd`: the user
/// step installs shadow-utils (with microdnf) before it creates the user,
/// and Python comes from microdnf.
#[test]
fn microdnf_images_get_shadow_utils_before_useradd() {
    for base in [
        "registry.access.redhat.com/ubi9/ubi-minimal:9.4",
        "ubi8-minimal",
        "rockylinux:9-minimal",
    ] {
        let mut s = built(base);
        s.python = Some(Python {
            index_credentials: None,
            version: None,
            manager: PythonManager::Pip,
            packages: vec!["rich".into()],
            requirements: vec![],
            index_url: None,
            extra_index_urls: vec![],
        });
        let text = dockerfile(&s);
        assert!(
            text.contains(
                "\nRUN microdnf install -y \\\n      python3 \\\n && microdnf clean all\n"
            ),
            "{base}: {text}"
        );
        assert!(
            text.contains("\nRUN microdnf install -y shadow-utils \\\n && microdnf clean all \\\n && if ! id -u -- app >/dev/null 2>&1; then \\\n      useradd "),
            "{base}: {text}"
        );
        assert!(!text.contains(" dnf "), "{base}: {text}");
    }
    // Other managers install nothing for the user.
    assert!(!dockerfile(&built("ubi9")).contains("shadow-utils"));
    // Root is not created, so nothing is installed for it.
    let mut s = built("ubi9-minimal");
    s.user = Some(User {
        name: "root".into(),
        uid: 0,
    });
    assert!(!dockerfile(&s).contains("shadow-utils"));
}

/// Amazon Linux (2 and 2023) has no `useradd` either, and a minimal image
/// keeps lacking it when `system.manager` names another manager: the user
/// step installs shadow-utils with the manager the image is given.
#[test]
fn images_without_useradd_get_shadow_utils_with_their_manager() {
    let first = |tool: &str| {
        let install = match tool {
            "yum" => "yum install -y --setopt=skip_missing_names_on_install=False".to_string(),
            _ => format!("{tool} install -y"),
        };
        format!("\nRUN {install} shadow-utils \\\n && {tool} clean all \\\n && if ! id -u -- app >/dev/null 2>&1; then \\\n      useradd ")
    };
    for (base, tool) in [
        ("amazonlinux:2", "yum"),
        ("public.ecr.aws/amazonlinux/amazonlinux:2023", "dnf"),
        ("oraclelinux:9-slim", "microdnf"),
    ] {
        let text = dockerfile(&built(base));
        assert!(text.contains(&first(tool)), "{base}: {text}");
    }
    let mut s = built("ubi9-minimal");
    s.system = Some(System {
        packages: vec![],
        manager: SystemManager::Dnf,
    });
    let text = dockerfile(&s);
    assert!(text.contains(&first("dnf")), "{text}");
    assert!(!text.contains("microdnf"), "{text}");
    // Images that have `useradd` install nothing for the user.
    for base in ["centos:7", "rockylinux:9.3", "fedora:40", "oraclelinux:8"] {
        assert!(!dockerfile(&built(base)).contains("shadow-utils"), "{base}");
    }
}

/// The micro images have no package manager: a builder stage that would
/// install Python there is E0408 at `builder`, and an env that installs
/// nothing and runs as root lowers without a package manager line.
#[test]
fn micro_images_install_nothing() {
    let mut s = built("debian:12.5");
    s.builder = Some(ImageRef {
        reference: "almalinux:9-micro".into(),
        digest: None,
    });
    s.python = Some(Python {
        index_credentials: None,
        version: None,
        manager: PythonManager::Pip,
        packages: vec!["rich".into()],
        requirements: vec![],
        index_url: None,
        extra_index_urls: vec![],
    });
    let out = lower(&s, "t");
    assert_eq!(
        out.errors
            .iter()
            .map(|e| (e.field.as_str(), &e.kind))
            .collect::<Vec<_>>(),
        [("builder", &ErrorKind::BaseLacks)],
        "{:?}",
        out.errors
    );
    let mut s = built("ubi9/ubi-micro:9.4");
    s.user = Some(User {
        name: "root".into(),
        uid: 0,
    });
    let text = dockerfile(&s);
    assert!(!text.contains("dnf"), "{text}");
}

/// apt-get on this machine reads what follows `--` as package names: an
/// option-looking name is reported as an unknown package, not applied.
#[test]
fn apt_get_reads_names_after_double_dash() {
    let Ok(o) = Command::new("apt-get")
        .args([
            "install",
            "-s",
            "--",
            "-o",
            "APT::Get::AllowUnauthenticated=true",
        ])
        .output()
    else {
        eprintln!("SKIPPED: no apt-get on this machine");
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Unable to locate package -o"), "{err}");
}

#[test]
fn packages_are_quoted_in_order_and_line_breaks_refused() {
    let mut s = built("debian:12.5");
    s.system = Some(System {
        packages: vec!["zlib1g".into(), "git".into(), "a b".into()],
        manager: SystemManager::Apk,
    });
    let text = dockerfile(&s);
    assert!(
        text.find("zlib1g").unwrap() < text.find("      git \\").unwrap(),
        "IR order kept"
    );
    assert!(text.contains("      'a b'\n"));
    s.system.as_mut().unwrap().manager = SystemManager::Apt;
    s.system.as_mut().unwrap().packages.pop();
    s.system.as_mut().unwrap().packages.push("c".into()); // not a name: at least two characters
    assert_eq!(errors(&s)[0].0, "system.packages[2]",);
    s.system.as_mut().unwrap().packages[2] = "zstd".into();
    s.system
        .as_mut()
        .unwrap()
        .packages
        .push("evil\nRUN rm -rf /".into());
    s.system.as_mut().unwrap().packages.push("".into());
    assert_eq!(
        errors(&s),
        [
            err("system.packages[3]", ErrorKind::Unwritable, LINE_BREAK),
            err(
                "system.packages[4]",
                ErrorKind::Unwritable,
                "is empty, which is not a package name"
            ),
        ]
    );
}

#[test]
fn python_managers() {
    let mut s = built("python:3.11-slim");
    s.python = Some(Python {
        index_credentials: None,
        version: Some("3.11".into()),
        manager: PythonManager::Pip,
        packages: vec!["numpy>=1.26".into(), "-e".into()],
        requirements: vec![],
        index_url: Some("-x".into()),
        extra_index_urls: vec![],
    });
    let text = dockerfile(&s);
    assert!(text.contains(
        "RUN python3 -m pip install --no-cache-dir \\\n      --index-url=-x \\\n      -- \\\n      'numpy>=1.26' \\\n      -e\n"
    ));
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
    assert!(text.contains("RUN uv pip install --system --no-cache \\\n      --index-url=-x \\\n      -- \\\n      'numpy>=1.26' \\\n"));

    s.python.as_mut().unwrap().version = Some("3.10".into());
    assert_eq!(fields(&s), ["python.version"]);
}

/// pip on this machine reads what follows `--` as requirements: `-r
/// /dev/null` there is an invalid requirement, not an option.
#[test]
fn pip_reads_requirements_after_double_dash() {
    let Ok(o) = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--dry-run",
            "--",
            "-r",
            "/dev/null",
        ])
        .output()
    else {
        eprintln!("SKIPPED: no python3 on this machine");
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("No module named pip") || err.contains("no such option: --dry-run") {
        eprintln!("SKIPPED: no pip with --dry-run on this machine");
        return;
    }
    assert!(!o.status.success());
    assert!(err.contains("Invalid requirement: '-r'"), "{err}");
}

/// Channels are written `--channel=VALUE` (argparse never reads the value
/// as an option), packages after `--`.
#[test]
fn conda_channels_and_packages() {
    let mut s = built("continuumio/miniconda3:24.1.2-0");
    s.conda = Some(Conda {
        channels: vec!["-c".into(), "conda-forge".into()],
        packages: vec!["--override-channels".into(), "numpy>=1.26".into()],
    });
    let text = dockerfile(&s);
    assert!(text.contains(
        "RUN conda install -y \\\n      --channel=-c \\\n      --channel=conda-forge \\\n      -- \\\n      --override-channels \\\n      'numpy>=1.26' \\\n && conda clean -afy\n"
    ), "{text}");
    s.conda.as_mut().unwrap().packages.clear();
    let out = lower(&s, "t");
    assert_eq!(
        out.warnings
            .iter()
            .map(|w| (w.field.as_str(), w.message.as_str()))
            .collect::<Vec<_>>(),
        [(
            "conda.channels",
            "no conda packages to install, so the channels are not used"
        )]
    );
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
        Asset::Huggingface {
            token: None,
            repo: "org/model".into(),
            files: vec!["a b.safetensors".into(), "-x".into()],
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
        "ADD --checksum=sha256:{} --chown=1000 https://h/w.bin /m/w.bin\n",
        "ab".repeat(32)
    )));
    assert!(text.contains(
        "      org/model \\\n      0123abc \\\n      /m/hf \\\n      'a b.safetensors' \\\n      -x \\\n && rm -rf /tmp/scl/hf \\\n && chown -R -- 1000 /m/hf\n"
    ));
    assert!(text.contains(scl_backends::docker::HUGGINGFACE_HUB));
}

/// The Hugging Face download passes every value as an argument after
/// `python3 -c CODE`, which Python never reads as its own option: run the
/// step's Python with a stand-in `huggingface_hub` that records its calls.
#[test]
fn huggingface_values_are_plain_arguments() {
    let mut s = built("debian:12.5");
    let hostile = ["-h", "--revision=x", "a b", "it's", "$(id)"];
    s.assets = vec![
        Asset::Huggingface {
            token: None,
            repo: "-org/m".into(),
            files: hostile.iter().map(|x| x.to_string()).collect(),
            revision: "--help".into(),
            to: "/m".into(),
        },
        Asset::Huggingface {
            token: None,
            repo: "org/all".into(),
            files: vec![],
            revision: "main".into(),
            to: "-d".into(),
        },
    ];
    let text = dockerfile(&s);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("huggingface_hub.py"),
        "import json\n\
         def hf_hub_download(repo, f, revision, local_dir): print(json.dumps(['file', repo, f, revision, local_dir]))\n\
         def snapshot_download(repo, revision, local_dir): print(json.dumps(['repo', repo, revision, local_dir]))\n",
    )
    .unwrap();
    let mut calls = Vec::new();
    for (n, _) in text.match_indices("PYTHONPATH=/tmp/scl/hf python3 -c ") {
        let mut cmd = String::new();
        for line in text[n..].lines() {
            // Up to the scratch folder's removal (the ownership step after
            // it needs the runtime user).
            if line.starts_with(" && rm -rf ") {
                break;
            }
            let Some(l) = line.strip_suffix('\\') else {
                break;
            };
            cmd.push_str(l);
        }
        let cmd = cmd.replace("/tmp/scl/hf", &dir.path().display().to_string());
        let o = Command::new("sh").arg("-c").arg(&cmd).output().unwrap();
        assert!(
            o.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        calls.push(String::from_utf8(o.stdout).unwrap());
    }
    // Python's json.dumps: `["a", "b"]`.
    let py_json = |items: &[&str]| {
        let parts: Vec<String> = items
            .iter()
            .map(|i| serde_json::to_string(i).unwrap())
            .collect();
        format!("[{}]\n", parts.join(", "))
    };
    let mut want = String::new();
    for f in hostile {
        want.push_str(&py_json(&["file", "-org/m", f, "--help", "/m"]));
    }
    assert_eq!(calls[0], want);
    assert_eq!(calls[1], "[\"repo\", \"org/all\", \"main\", \"-d\"]\n");
}

/// `ADD https://…/x.git` is a git clone to BuildKit (also with `#ref`, a
/// query, or an escaped dot); only http(s) URLs are downloads.
#[test]
fn url_assets_are_plain_downloads() {
    let mut s = built("debian:12.5");
    let url = |u: &str| Asset::Url {
        url: u.into(),
        sha256: None,
        to: "/m".into(),
    };
    let git_msg = |u: &str| {
        format!("{u:?} ends in `.git`, so BuildKit's ADD would clone it as a git repository instead of downloading the file")
    };
    for u in [
        "https://h/x.git",
        "https://h/x.git#main",
        "https://h/x.git?a=1",
        "http://h/a/x%2Egit",
        "https://h/x.git#v1:sub",
    ] {
        s.assets = vec![url(u)];
        assert_eq!(
            errors(&s),
            [err("assets[0].url", ErrorKind::Misread, &git_msg(u))],
            "{u}"
        );
    }
    for u in [
        "git@h:x.git",
        "ssh://h/x",
        "git://h/x",
        "./local",
        "HTTPS://h/x",
    ] {
        s.assets = vec![url(u)];
        assert_eq!(
            errors(&s),
            [err(
                "assets[0].url",
                ErrorKind::Misread,
                &format!("{u:?} is not an http:// or https:// URL; ADD would read it as a local path or a git repository")
            )],
            "{u}"
        );
    }
    s.assets = vec![url("https://h/a b.bin")];
    assert_eq!(
        errors(&s),
        [err(
            "assets[0].url",
            ErrorKind::Unwritable,
            "contains whitespace or a control character, which a URL cannot hold"
        )]
    );
    // Not git: `.git` elsewhere, `.github`, `.gitignore`.
    for u in [
        "https://h/x.git/raw/f.bin",
        "https://h/.github",
        "https://h/x.gitignore",
        "https://h/f?x=.git",
    ] {
        s.assets = vec![url(u)];
        assert!(dockerfile(&s).contains("ADD --chown=1000 "), "{u}");
    }
    s.assets = vec![Asset::Url {
        url: "https://h/x.bin".into(),
        sha256: Some("nothex".into()),
        to: "/m".into(),
    }];
    assert_eq!(
        errors(&s),
        [err(
            "assets[0].sha256",
            ErrorKind::Unwritable,
            "not a SHA-256 digest (64 hex digits), so ADD --checksum cannot verify the download"
        )]
    );
    s.assets = vec![Asset::Url {
        url: "https://h/x.bin".into(),
        sha256: None,
        to: "/m\n".into(),
    }];
    assert_eq!(
        errors(&s),
        [err("assets[0].to", ErrorKind::Unwritable, LINE_BREAK)]
    );
    s.assets = vec![Asset::Huggingface {
        token: None,
        repo: "o/m\n".into(),
        files: vec!["f\r".into()],
        revision: String::new(),
        to: "/m".into(),
    }];
    assert_eq!(
        errors(&s),
        [
            err("assets[0].repo", ErrorKind::Unwritable, LINE_BREAK),
            err(
                "assets[0].revision",
                ErrorKind::Unwritable,
                "is empty, which is not a revision"
            ),
            err("assets[0].files[0]", ErrorKind::Unwritable, LINE_BREAK),
        ]
    );
}

/// A trailing backslash plus spaces used to join the next Dockerfile line to
/// the `RUN`, `<<EOF` started a here-document and a leading `--network=host`
/// became RUN flags. Now every step is single-quoted printf data.
#[test]
fn setup_steps() {
    let mut s = built("debian:12.5");
    s.setup = vec![
        "echo one".into(),
        "   ".into(),
        "cat <<EOF > /x\nbody\nEOF\n".into(),
        "echo trailing \\   ".into(),
        "--network=host --security=insecure echo".into(),
        "echo it's".into(),
    ];
    s.vars = Fields::from([("AFTER".into(), VarValue::Plain("1".into()))]);
    let text = dockerfile(&s);
    assert!(
        !text.contains("# syntax="),
        "no here-document, no frontend pin"
    );
    let step = |lines: &[&str]| {
        let mut t = String::from("RUN mkdir -p /tmp/scl \\\n && printf '%s\\n' \\\n");
        for l in lines {
            t.push_str(&format!("      {l} \\\n"));
        }
        t.push_str("      > /tmp/scl/setup.sh \\\n && sh -e /tmp/scl/setup.sh \\\n && rm -f /tmp/scl/setup.sh\n");
        t
    };
    assert!(text.contains(&step(&["'echo one'"])));
    assert!(text.contains(&step(&["'   '"])));
    assert!(text.contains(&step(&["'cat <<EOF > /x'", "'body'", "'EOF'"])));
    assert!(text.contains(&step(&["'echo trailing \\   '"])));
    assert!(text.contains(&step(&["'--network=host --security=insecure echo'"])));
    assert!(text.contains(
        &(String::from("# setup[5], as written:\n#   echo it's\n") + &step(&["'echo it'\\''s'"]))
    ));
    assert!(
        text.contains("\nENV AFTER=\"1\"\n"),
        "the next instruction is intact"
    );
    assert!(!text.contains("\nRUN --"), "no RUN flag");
    s.setup = vec!["a\0b".into()];
    assert_eq!(
        errors(&s),
        [err(
            "setup[0]",
            ErrorKind::Unwritable,
            "contains NUL or a character a reader of the Dockerfile would not see (a carriage return, an escape, a bidirectional override)"
        )]
    );
}

#[test]
fn vars_and_labels() {
    let mut s = built("debian:12.5");
    s.vars = Fields::from([
        ("B".into(), VarValue::Plain("x $y \"z\"".into())),
        ("A".into(), VarValue::Plain("1".into())),
        ("C".into(), VarValue::Plain("C:\\dir\\".into())),
        ("D".into(), VarValue::Plain("a\\\"b".into())),
        (
            "TOKEN".into(),
            VarValue::Secret(SecretRef {
                secret: "s".into(),
                key: "k".into(),
            }),
        ),
    ]);
    s.labels = Fields::from([("a.b".into(), "c".into())]);
    s.description = Some("one line, \"quoted\"\\".into());
    let text = dockerfile(&s);
    assert!(
        text.contains(
            "ENV A=\"1\" \\\n    B=\"x \\$y \\\"z\\\"\" \\\n    C=\"C:\\\\dir\"\\\\\nENV D=\"a\"'\\\"'\"b\"\n"
        ),
        "sorted, escaped, a trailing backslash ends its instruction:\n{text}"
    );
    assert!(text.contains("# runtime secret: TOKEN from secret s key k"));
    assert!(text.contains(&format!(
        "LABEL org.opencontainers.image.description=\"one line, \\\"quoted\\\"\"\\\\\nLABEL a.b=\"c\" \\\n      dev.scl.ir.sha256=\"{}\"\n",
        s.content_hash()
    )));
}

#[test]
fn unwritable_vars_and_labels_are_errors() {
    let mut s = built("debian:12.5");
    s.vars = Fields::from([
        ("NL".into(), VarValue::Plain("a\nb".into())),
        ("bad key".into(), VarValue::Plain("v".into())),
        ("K=V".into(), VarValue::Plain("v".into())),
    ]);
    s.labels = Fields::from([
        ("dev.scl.ir.sha256".into(), "forged".into()),
        ("a=b".into(), "c".into()),
        ("nl".into(), "x\ny".into()),
        ("back\\".into(), "c".into()),
    ]);
    s.description = Some("two\nlines".into());
    let out = lower(&s, "t");
    let helps: Vec<Option<String>> = out.errors.iter().map(|e| e.help.clone()).collect();
    assert_eq!(
        errors(&s),
        [
            err("vars.K=V", ErrorKind::Unwritable, "\"K=V\" is not a name an ENV instruction can hold"),
            err("vars.NL", ErrorKind::Unwritable, &format!("the value {LINE_BREAK}")),
            err("vars.bad key", ErrorKind::Unwritable, "\"bad key\" is not a name an ENV instruction can hold"),
            err("description", ErrorKind::Unwritable, "contains a line break, which a Dockerfile LABEL cannot hold"),
            err("labels.a=b", ErrorKind::Unwritable, "\"a=b\" is not a key a LABEL instruction can hold (it is empty, or has `=`, a line break or a trailing backslash)"),
            err("labels.back\\", ErrorKind::Unwritable, "\"back\\\\\" is not a key a LABEL instruction can hold (it is empty, or has `=`, a line break or a trailing backslash)"),
            err("labels.dev.scl.ir.sha256", ErrorKind::Reserved, "dev.scl.ir.sha256 is reserved: sclc sets it to the IR's hash"),
            err("labels.nl", ErrorKind::Unwritable, &format!("the value {LINE_BREAK}")),
        ]
    );
    assert_eq!(
        helps[3].as_deref(),
        Some("write the description on one line, or set labels[\"org.opencontainers.image.description\"] to a one-line text")
    );
    // With the description label set explicitly, the description is not used.
    let mut s = built("debian:12.5");
    s.description = Some("two\nlines".into());
    s.labels = Fields::from([("org.opencontainers.image.description".into(), "one".into())]);
    assert!(dockerfile(&s).contains("LABEL org.opencontainers.image.description=\"one\" \\\n"));
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
    assert_eq!(
        errors(&none),
        [err(
            "base",
            ErrorKind::NoBase,
            "not set and there are no services: there is no image to build (an env without `base` can only be a parent of others)"
        )]
    );

    let mut stack = none.clone();
    let mut svc = built("debian:12.5");
    svc.api_version.clear();
    svc.ignore = vec![".git".into()];
    stack.services.insert("web".into(), Arc::new(svc.clone()));
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
    let text = &out.artifacts[0].contents;
    assert!(text.contains("from env t, service web."));
    assert!(text.contains("docker build -f out/t/web/Dockerfile <workspace root>"));

    stack
        .services
        .insert("../evil".into(), Arc::new(svc.clone()));
    stack
        .services
        .insert("nobase".into(), Arc::new(EnvSpec::default()));
    assert_eq!(
        errors(&stack),
        [
            err(
                "services.../evil",
                ErrorKind::Unwritable,
                "the service name cannot be used as a folder name ([A-Za-z0-9_.-]+)"
            ),
            err(
                "services.nobase.base",
                ErrorKind::NoBase,
                "not set and there are no services: there is no image to build (an env without `base` can only be a parent of others)"
            ),
        ]
    );
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
    s.files = vec![
        Copy {
            from: "my dir/$x".into(),
            to: "/w/my dir".into(),
        },
        Copy {
            from: "--from=alpine".into(),
            to: "<<EOF".into(),
        },
    ];
    s.workdir = Some("/w/my dir".into());
    let text = dockerfile(&s);
    assert!(
        text.contains(r#"COPY --chown=1000 ["my dir/\u005c$x", "/w/my dir"]"#),
        "{text}"
    );
    assert!(text.contains(r#"COPY --chown=1000 ["--from=alpine", "<<EOF"]"#));
    assert!(text.contains("WORKDIR \"/w/my dir\"\n"));
}

/// `file("./req[1].txt")` made `COPY req[1].txt …`, which copies `req1.txt`:
/// a source with a glob character (or `\`, the glob escape) is refused.
#[test]
fn copy_sources_are_never_globs() {
    let mut s = built("debian:12.5");
    let msg = |p: &str, c: char| {
        format!("the path {p:?} has `{c}`, which COPY reads as a glob pattern (or its escape), so another file could be copied than the one sclc hashed")
    };
    for (p, c) in [
        ("req[1].txt", '['),
        ("a*.txt", '*'),
        ("a?.txt", '?'),
        ("a\\b.txt", '\\'),
    ] {
        s.python = Some(Python {
            index_credentials: None,
            version: None,
            manager: PythonManager::Pip,
            packages: vec![],
            requirements: vec![FileRef {
                path: p.into(),
                sha256: "0".repeat(64),
            }],
            index_url: None,
            extra_index_urls: vec![],
        });
        s.files = vec![Copy {
            from: p.into(),
            to: "/w/x".into(),
        }];
        assert_eq!(
            errors(&s),
            [
                err("python.requirements[0]", ErrorKind::Misread, &msg(p, c)),
                err("files[0]", ErrorKind::Misread, &msg(p, c)),
            ]
        );
    }
    s.python = None;
    s.files = vec![Copy {
        from: "a\nb".into(),
        to: "/w".into(),
    }];
    assert_eq!(
        errors(&s),
        [err("files[0]", ErrorKind::Unwritable, LINE_BREAK)]
    );
}

/// A newline in an `ignore` glob used to drop it (and so send `secrets/` in
/// the build context); a leading `#` made it a comment and `!` an
/// exception. Now those two are escaped and the rest refused.
#[test]
fn ignore_patterns() {
    let mut s = built("debian:12.5");
    s.ignore = vec!["secrets/".into(), "#notes".into(), "!keep".into()];
    let out = lower(&s, "t");
    let text = &out.artifact(".dockerignore").unwrap().contents;
    assert!(text.ends_with("\nsecrets/\n\\#notes\n\\!keep\n"), "{text}");
    s.ignore = vec!["a\nsecrets/".into(), "".into(), " x".into(), "x\\".into()];
    assert_eq!(
        errors(&s),
        [
            err(
                "ignore[0]",
                ErrorKind::Unwritable,
                "contains a line break, NUL or an invisible character, which one line of .dockerignore cannot show as written"
            ),
            err(
                "ignore[1]",
                ErrorKind::Unwritable,
                "is empty, and .dockerignore skips an empty line"
            ),
            err(
                "ignore[2]",
                ErrorKind::Unwritable,
                "starts or ends with whitespace, which .dockerignore strips"
            ),
            err(
                "ignore[3]",
                ErrorKind::IgnorePattern,
                "ends in a backslash that escapes nothing, so the pattern does not compile"
            ),
        ]
    );
}

/// `ignore = ["["]` was accepted, and BuildKit's pattern matcher
/// (moby/patternmatcher) then failed the build: every glob it rejects or
/// reads as another is refused, with its reason (E0407); a `^` outside a
/// bracket expression is escaped.
#[test]
fn ignore_globs_buildkit_rejects_are_refused() {
    let mut s = built("debian:12.5");
    s.ignore = vec![
        "[".into(),
        "a[b".into(),
        "\\d".into(),
        "[z-a]".into(),
        "[*]".into(),
        "[]a]".into(),
        "[a-b-c]".into(),
    ];
    let got: Vec<(String, ErrorKind)> = errors(&s).into_iter().map(|(f, k, _)| (f, k)).collect();
    let want: Vec<(String, ErrorKind)> = (0..7)
        .map(|i| (format!("ignore[{i}]"), ErrorKind::IgnorePattern))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        errors(&s)[0].2,
        "has a `[` without its `]`, so BuildKit rejects the .dockerignore (filepath.ErrBadPattern)"
    );
    s.ignore = vec![
        "[a-z]*.ckpt".into(),
        "a\\[1\\]".into(),
        "x^y*".into(),
        "[^x]".into(),
    ];
    let out = lower(&s, "t");
    let text = &out.artifact(".dockerignore").unwrap().contents;
    assert!(
        text.ends_with("\n[a-z]*.ckpt\na\\[1\\]\nx\\^y*\n[^x]\n"),
        "{text}"
    );
}

/// apt-get reads a name that is not a package's as a regular expression, a
/// glob, an apt pattern or a task (`libzstd.` installed 28 packages on
/// Debian 12): a name that is not a Debian package name is refused (E0405),
/// and a Debian name with `.` or `+` is installed with the fallback turned
/// off and then checked by its exact name.
#[test]
fn apt_names_that_are_patterns_are_refused() {
    let mut s = built("debian:12.5");
    let bad = [
        "zst*",
        "libzstd?",
        "?name(zstd)",
        "~nzstd",
        "zstd^",
        "a|b",
        "lib[a]",
        "zstd$",
        "Zstd",
        "zstd-",
        "zstd:amd*",
        "zstd=1.*",
        "zstd/a=b",
        "!x",
        "x",
        "-o",
    ];
    s.system = Some(System {
        packages: bad.iter().map(|p| p.to_string().into()).collect(),
        manager: SystemManager::Apt,
    });
    let e = errors(&s);
    assert_eq!(e.len(), bad.len(), "{e:?}");
    for (i, (field, kind, _)) in e.iter().enumerate() {
        assert_eq!(field, &format!("system.packages[{i}]"));
        assert_eq!(*kind, ErrorKind::PackagePattern, "{}", bad[i]);
    }
    s.system.as_mut().unwrap().packages = vec![
        "libzstd.".into(),
        "libstdc++6".into(),
        "zstd".into(),
        "libc6.1:amd64=2.36-9".into(),
        "git/bookworm-backports".into(),
    ];
    let text = dockerfile(&s);
    assert!(
        text.contains(
            "apt-get install -y --no-install-recommends -o APT::Cmd::Pattern-Only=true -- \\\n"
        ),
        "{text}"
    );
    for checked in ["libzstd.", "libstdc++6", "libc6.1"] {
        assert!(
            text.contains(&format!(" && case \"$(dpkg-query -W -f='${{db:Status-Abbrev}}' -- {checked} 2>/dev/null)\" in \\\n")),
            "{checked}: {text}"
        );
    }
    assert!(
        !text.contains("-- zstd 2>"),
        "a name without `.` or `+` is not checked"
    );
    assert!(!text.contains("-- git"), "{text}");
}

/// The install line and the checks of the Dockerfile, run here with
/// `apt-get install -s` (simulate) and the real `dpkg-query`: `libzstd.` is
/// no longer read as a regular expression, and the check fails the build
/// for a name that is not installed under exactly that name.
#[test]
fn apt_pattern_fallback_is_off_and_checked_with_real_apt() {
    if Command::new("apt-get").arg("--version").output().is_err()
        || Command::new("dpkg-query")
            .arg("--version")
            .output()
            .is_err()
    {
        eprintln!("SKIPPED: no apt-get/dpkg-query on this machine");
        return;
    }
    let mut s = built("debian:12.5");
    s.system = Some(System {
        packages: vec!["libzstd.".into()],
        manager: SystemManager::Apt,
    });
    let text = dockerfile(&s);
    let run = common_run(&text, "apt-get install");
    // The install command, simulated.
    let start = run.find("apt-get install").unwrap();
    let end = run[start..].find(" && ").unwrap() + start;
    let install = run[start..end].replacen("apt-get install", "apt-get install -s", 1);
    let o = Command::new("sh").arg("-c").arg(&install).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !stdout.contains("\nInst "),
        "{install}: installs packages:\n{stdout}"
    );
    assert!(!o.status.success(), "{install}: {stdout}");
    assert!(
        stderr.contains("Unable to locate package libzstd."),
        "{stderr}"
    );
    // Without the option (apt before 1.9.6 has none), apt reads it as a regex.
    let o = Command::new("apt-get")
        .args(["install", "-s", "--", "libzstd."])
        .output()
        .unwrap();
    let regex_installs = String::from_utf8_lossy(&o.stdout)
        .matches("\nInst ")
        .count();
    // The check after the install: fails for `libzstd.`, passes for an
    // installed package with `+` in its name (when this machine has one).
    let check_start = run.find("case ").unwrap();
    let check_end = run[check_start..].find("esac").unwrap() + check_start + 4;
    let check = &run[check_start..check_end];
    let o = Command::new("sh").arg("-c").arg(check).output().unwrap();
    assert!(!o.status.success(), "{check}");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("sclc: apt-get did not install the package libzstd. under that exact name"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let installed = Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Abbrev} ${Package}\n", "libstdc++6"])
        .output()
        .unwrap();
    if String::from_utf8_lossy(&installed.stdout).starts_with("ii ") {
        let o = Command::new("sh")
            .arg("-c")
            .arg(check.replace("libzstd.", "libstdc++6"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    eprintln!("without the option, apt-get -s installs {regex_installs} packages for libzstd.");
}

/// The text of the first `RUN` whose logical line contains `mark`, with
/// line continuations joined (as `sh -c` would receive it).
fn common_run(text: &str, mark: &str) -> String {
    let mut logical = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        match line.strip_suffix('\\') {
            Some(body) => cur.push_str(body),
            None => {
                cur.push_str(line);
                logical.push(std::mem::take(&mut cur));
            }
        }
    }
    let run = logical
        .into_iter()
        .find(|l| l.starts_with("RUN ") && l.contains(mark))
        .unwrap_or_else(|| panic!("no RUN with {mark}"));
    run["RUN ".len()..].to_string()
}

/// Services named like a file sclc writes beside them (`Dockerfile`,
/// `.sclc-output`, `Dockerfile.dockerignore`) passed `check` and then failed
/// `build` with "File exists" and no code; names differing only in case
/// overwrite each other on a case-insensitive file system. Both are E0406.
#[test]
fn service_names_that_clash_are_refused() {
    let mut s = EnvSpec {
        api_version: API_VERSION.into(),
        ..Default::default()
    };
    for name in [
        "Dockerfile",
        ".sclc-output",
        "Dockerfile.dockerignore",
        ".dockerignore",
        "dockerfile",
        "x.dockerignore",
        ".sclc-tmp-1",
        "WebUI",
        "webui",
        "ok",
    ] {
        s.services
            .insert(name.into(), Arc::new(built("debian:12.5")));
    }
    let e = errors(&s);
    let got: Vec<(&str, ErrorKind)> = e.iter().map(|(f, k, _)| (f.as_str(), *k)).collect();
    assert_eq!(
        got,
        [
            ("services..dockerignore", ErrorKind::NameClash),
            ("services..sclc-output", ErrorKind::NameClash),
            ("services..sclc-tmp-1", ErrorKind::NameClash),
            ("services.Dockerfile", ErrorKind::NameClash),
            ("services.Dockerfile.dockerignore", ErrorKind::NameClash),
            ("services.dockerfile", ErrorKind::NameClash),
            ("services.webui", ErrorKind::NameClash),
            ("services.x.dockerignore", ErrorKind::NameClash),
        ]
    );
    let webui = e.iter().find(|x| x.0 == "services.webui").unwrap();
    assert_eq!(
        webui.2,
        "the services `WebUI` and `webui` differ only in case, so on a case-insensitive file system (macOS, Windows) their folders would be one"
    );
    let dockerfile = e.iter().find(|x| x.0 == "services.Dockerfile").unwrap();
    assert_eq!(
        dockerfile.2,
        "the service's folder `Dockerfile/` is the name of the file `Dockerfile` that sclc writes in the same folder"
    );
    // A nested service is checked in its own folder.
    let mut inner = built("debian:12.5");
    inner
        .services
        .insert("Dockerfile".into(), Arc::new(built("debian:12.5")));
    let mut outer = EnvSpec {
        api_version: API_VERSION.into(),
        ..Default::default()
    };
    outer.services.insert("api".into(), Arc::new(inner));
    assert_eq!(
        errors(&outer),
        [err(
            "services.api.services.Dockerfile",
            ErrorKind::NameClash,
            "the service's folder `api/Dockerfile/` is the name of the file `Dockerfile` that sclc writes in the same folder"
        )]
    );
}

#[test]
fn from_is_a_literal_reference() {
    for bad in ["debian:$TAG", "debian:`id`", "-x", "a b", "debian:12\n"] {
        let s = built(bad);
        let e = errors(&s);
        assert_eq!(e.len(), 1, "{bad}: {e:?}");
        assert_eq!(e[0].0, "base");
        assert_eq!(
            e[0].2,
            format!(
                "{:?} is not an image reference FROM can hold as a literal word",
                scl_backends::quote::comment(bad)
            )
        );
    }
}

#[test]
fn user_names_of_digits_are_uids() {
    let mut s = built("debian:12.5");
    s.user = Some(User {
        name: "1000".into(),
        uid: 1000,
    });
    assert_eq!(
        errors(&s),
        [err(
            "user.name",
            ErrorKind::Misread,
            "\"1000\" is only digits, so id, chown and useradd would read it as a uid"
        )]
    );
    s.user = Some(User {
        name: "-o".into(),
        uid: 1000,
    });
    assert!(dockerfile(&s)
        .contains("useradd --create-home --no-log-init --non-unique --uid 1000 -- -o;"));
    s.user = Some(User {
        name: "a\nb".into(),
        uid: 1000,
    });
    assert_eq!(
        errors(&s),
        [err("user.name", ErrorKind::Unwritable, LINE_BREAK)]
    );
}

/// BuildKit reads a Dockerfile line of at most 65535 bytes: longer values
/// are refused, and no generated line is that long.
#[test]
fn values_fit_on_a_line() {
    let long = "x".repeat(MAX_VALUE_BYTES + 1);
    let mut s = built("debian:12.5");
    s.vars = Fields::from([("V".into(), VarValue::Plain(long.as_str().into()))]);
    s.setup = vec![format!("echo {long}\necho ok")];
    s.entrypoint = vec!["a".repeat(MAX_VALUE_BYTES); 4];
    assert_eq!(
        errors(&s),
        [
            err(
                "setup[0]",
                ErrorKind::Unwritable,
                "line 1 is 20008 bytes long once quoted, more than the 20000 one Dockerfile line of a step may take (BuildKit reads lines of at most 65535 bytes)"
            ),
            err(
                "vars.V",
                ErrorKind::Unwritable,
                "is 20005 bytes long once quoted, more than the 20000 one Dockerfile value may take (BuildKit reads lines of at most 65535 bytes)"
            ),
            err(
                "entrypoint",
                ErrorKind::Unwritable,
                "is 80016 bytes long in exec form, more than one Dockerfile line may take"
            ),
        ]
    );
    // The safety net: a huge env name would make the header too long.
    let out = lower(&built("debian:12.5"), &"e".repeat(70_000));
    assert_eq!(out.errors.len(), 1);
    assert!(out.errors[0]
        .message
        .starts_with("the generated Dockerfile would have a line of "));
}

/// A value with a character a reader of the Dockerfile would not see (a
/// carriage return that hides the start of a line on a terminal, an escape
/// sequence, a bidirectional override that shows text in another order) is
/// refused wherever it would be written raw; in exec form and comments it is
/// shown escaped.
#[test]
fn invisible_characters_are_refused_or_shown_escaped() {
    for hidden in [
        "\r",
        "\u{1b}[2J",
        "\u{202e}",
        "\u{2066}",
        "\u{85}",
        "\u{7f}",
    ] {
        let mut s = built("debian:12.5");
        s.setup = vec![format!("echo safe{hidden}rm -rf /data")];
        s.vars = Fields::from([("V".into(), VarValue::Plain(format!("a{hidden}b").into()))]);
        s.labels = Fields::from([("l".into(), format!("a{hidden}b").into())]);
        s.system = Some(System {
            manager: SystemManager::Apt,
            packages: vec![format!("git{hidden}").into()],
        });
        let fields: Vec<String> = errors(&s).into_iter().map(|e| e.0).collect();
        assert_eq!(
            fields,
            ["system.packages[0]", "setup[0]", "vars.V", "labels.l"],
            "{hidden:?}"
        );
        // Exec form: JSON escapes; a comment shows the character escaped.
        let mut s = built("debian:12.5");
        s.entrypoint = vec![format!("x{hidden}y")];
        s.description = Some(format!("d{hidden}"));
        s.labels = Fields::from([(
            "org.opencontainers.image.description".into(),
            "one line".into(),
        )]);
        let text = dockerfile(&s);
        assert!(
            !text.chars().any(scl_backends::quote::is_hidden),
            "{hidden:?}: {text}"
        );
        let shown = scl_backends::quote::json_string(&format!("x{hidden}y"));
        assert!(shown.is_ascii(), "{shown}");
        assert!(text.contains(&format!("ENTRYPOINT [{shown}]")), "{text}");
    }
}

/// Build secrets: two different secrets that would be one id or one
/// variable are refused; the same secret twice is one `--secret` flag; the
/// printed lines quote every word (a `host:` volume as `--mount` CSV, a
/// test after `--`) and name variables a shell can set.
#[test]
fn build_secrets_and_printed_commands() {
    let sref = |secret: &str, key: &str| SecretRef {
        secret: secret.into(),
        key: key.into(),
    };
    let hf = |token: SecretRef| Asset::Huggingface {
        token: Some(token),
        repo: "org/m".into(),
        files: vec![],
        revision: "main".into(),
        to: "/m".into(),
    };
    for (a, b) in [(("a.b", "c"), ("a", "b.c")), (("a-b", "c"), ("a_b", "c"))] {
        let mut s = built("python:3.12-slim");
        s.assets = vec![hf(sref(a.0, a.1)), hf(sref(b.0, b.1))];
        let e = errors(&s);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].1, ErrorKind::NameClash);
    }
    let mut s = built("python:3.12-slim");
    s.assets = vec![hf(sref("1hf", "token")), hf(sref("1hf", "token"))];
    s.test = vec!["-x echo hi".into()];
    s.volumes = vec![Volume {
        name: "d".into(),
        source: "host:a:b,c".into(),
        mount: "/data".into(),
        mode: VolumeMode::ReadOnly,
    }];
    assert!(lower(&s, "t").errors.is_empty());
    let lines =
        scl_backends::docker::commands(&s, &scl_backends::LowerCx::new("t"), "out/t", "/w s");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0].matches("--secret").count(), 1, "{}", lines[0]);
    assert!(
        lines[0].contains("--secret id=1hf.token,env=_1HF_TOKEN "),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with(" '/w s'"), "{}", lines[0]);
    assert!(
        lines[1].contains("--mount 'type=bind,\"source=/w s/a:b,c\",target=/data,readonly'"),
        "{}",
        lines[1]
    );
    assert!(lines[2].ends_with(" -c -- '-x echo hi'"), "{}", lines[2]);
    // The run line carries the CPU, memory and GPU limits.
    s.resources = Some(Resources {
        limits: Some(ResourceList {
            cpu: Some(1500),
            memory: Some(64 << 30),
            gpu: Some(Gpu {
                count: 2,
                memory: None,
                node_label: None,
                kind: None,
            }),
        }),
        requests: None,
    });
    let lines =
        scl_backends::docker::commands(&s, &scl_backends::LowerCx::new("t"), "out/t", "/w s");
    assert!(
        lines[1].contains(" --cpus 1.5 --memory 64g --gpus 2 "),
        "{}",
        lines[1]
    );
    // GPUs only requested, with limits that set the CPUs: the request is
    // still the GPU count (the limits do not hide it), here and in the
    // Apptainer definition's `apptainer run --nv`.
    let gpu = s
        .resources
        .as_mut()
        .unwrap()
        .limits
        .as_mut()
        .unwrap()
        .gpu
        .take();
    s.resources.as_mut().unwrap().requests = Some(ResourceList {
        cpu: None,
        memory: None,
        gpu,
    });
    let lines =
        scl_backends::docker::commands(&s, &scl_backends::LowerCx::new("t"), "out/t", "/w s");
    assert!(
        lines[1].contains(" --cpus 1.5 --memory 64g --gpus 2 "),
        "{}",
        lines[1]
    );
    let def = scl_backends::apptainer::lower(&s, &scl_backends::LowerCx::new("t"));
    let def = &def.artifacts[0].contents;
    assert!(def.contains("apptainer run --nv"), "{def}");
}

/// `distributed` asking torchrun for several processes on one node is a
/// `torchrun --standalone` ENTRYPOINT (the command stays CMD); several
/// nodes, one process or another launcher leave the entrypoint and warn.
#[test]
fn single_node_torchrun_launch() {
    let dist = |nodes, procs, launcher| Distributed {
        backend: Backend::Nccl,
        elastic: None,
        launcher,
        nodes,
        procs_per_node: procs,
    };
    let mut spec = built("debian:12");
    spec.entrypoint = vec!["python".into(), "train.py".into()];
    spec.command = vec!["--epochs".into(), "3".into()];
    spec.distributed = Some(dist(1, 4, Launcher::Torchrun));
    let text = dockerfile(&spec);
    assert!(
        text.contains("ENTRYPOINT [\"torchrun\", \"--standalone\", \"--nproc_per_node=4\", \"train.py\"]\nCMD [\"--epochs\", \"3\"]\n"),
        "{text}"
    );
    assert!(!fields(&spec).contains(&"distributed".to_string()));
    // The interpreter alone as the entrypoint: the script is in CMD.
    spec.entrypoint = vec!["python3".into()];
    spec.command = vec!["train.py".into(), "--epochs".into(), "3".into()];
    assert!(dockerfile(&spec).contains(
        "ENTRYPOINT [\"torchrun\", \"--standalone\", \"--nproc_per_node=4\"]\nCMD [\"train.py\", \"--epochs\", \"3\"]\n"
    ));
    // Not a Python script: torchrun --no-python.
    spec.entrypoint = vec!["/opt/run.sh".into()];
    spec.command = vec![];
    assert!(dockerfile(&spec).contains(
        "ENTRYPOINT [\"torchrun\", \"--standalone\", \"--nproc_per_node=4\", \"--no-python\", \"/opt/run.sh\"]\n"
    ));
    for d in [
        dist(2, 4, Launcher::Torchrun),
        dist(1, 1, Launcher::Torchrun),
        dist(1, 4, Launcher::Deepspeed),
    ] {
        spec.distributed = Some(d);
        let text = dockerfile(&spec);
        assert!(text.contains("ENTRYPOINT [\"/opt/run.sh\"]\n"), "{text}");
        assert!(fields(&spec).contains(&"distributed".to_string()));
    }
}

/// `builder`: a build stage makes the wheels (requirements and packages,
/// with the index credentials), the image installs only those, from no
/// index; without anything for pip to build, `builder` is a warning.
#[test]
fn builder_is_a_build_stage_for_the_wheels() {
    let mut spec = built("debian:12");
    spec.builder = Some(ImageRef {
        reference: "python:3.11".into(),
        digest: None,
    });
    spec.python = Some(Python {
        packages: vec!["six==1.16.0".into()],
        requirements: vec![FileRef {
            path: "req.txt".into(),
            sha256: "0".repeat(64),
        }],
        index_credentials: Some(SecretRef {
            secret: "pypi".into(),
            key: "netrc".into(),
        }),
        extra_index_urls: vec![],
        index_url: None,
        manager: PythonManager::Pip,
        version: None,
    });
    let text = dockerfile(&spec);
    let (stage, image) = text.split_once("\nFROM debian:12\n").expect("two stages");
    assert!(stage.contains("\nFROM python:3.11 AS builder\n"), "{text}");
    assert!(
        stage.contains("COPY req.txt /tmp/scl/requirements/0-req.txt\n"),
        "{text}"
    );
    // One `pip wheel` for the requirements file and the packages: one
    // resolution of every pin (two made two sets of wheels, which the
    // `--no-deps` install below would put over each other).
    assert_eq!(
        stage.matches("--mount=type=secret,id=pypi.netrc,required=true NETRC=/run/secrets/pypi.netrc python3 -m pip wheel --no-cache-dir --wheel-dir=/tmp/scl/wheels").count(),
        1,
        "{text}"
    );
    assert!(
        stage.contains("-r /tmp/scl/requirements/0-req.txt \\\n      -- \\\n      six==1.16.0\n"),
        "{text}"
    );
    assert!(image.contains("RUN --mount=type=bind,from=builder,source=/tmp/scl/wheels,target=/tmp/scl/wheels python3 -m pip install --no-cache-dir --no-index --no-deps /tmp/scl/wheels/*.whl\n"), "{text}");
    assert!(
        !image.contains("pypi.netrc"),
        "the image's stage reads no credentials: {text}"
    );
    assert!(!image.contains("COPY req.txt"), "{text}");
    assert!(!fields(&spec).contains(&"builder".to_string()));
    // Nothing to build: a warning, one stage.
    spec.python = None;
    assert!(!dockerfile(&spec).contains(" AS builder"));
    assert!(fields(&spec).contains(&"builder".to_string()));
}

/// A requirements file that pins hashes puts pip in hash-checking mode for
/// its whole install, and `python.packages` have no hashes: they are
/// installed on their own, before the files (one install otherwise, as
/// the builder test shows). Both image targets.
#[test]
fn a_hashed_requirements_file_is_installed_without_the_packages() {
    let mut spec = built("debian:12");
    spec.python = Some(Python {
        packages: vec!["six==1.16.0".into()],
        requirements: vec![FileRef {
            path: "req.lock".into(),
            sha256: "0".repeat(64),
        }],
        index_credentials: None,
        extra_index_urls: vec![],
        index_url: None,
        manager: PythonManager::Pip,
        version: None,
    });
    let hashed = "idna==3.7 \\\n    --hash=sha256:82fee1fc78add43492d3a1898bfa6d8a904cc97d8427f683ed8e798d07761aa0\n";
    for (text, together) in [
        (hashed, false),
        ("idna==3.7\n# --hash in a comment\n", true),
    ] {
        let mut cx = scl_backends::LowerCx::new("t");
        cx.files.insert("req.lock".into(), text.into());
        let out = scl_backends::docker::lower_with(&spec, &cx);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        let text = &out.artifact("Dockerfile").unwrap().contents;
        let six = text.find("six==1.16.0").unwrap();
        let lock = text.find("-r /tmp/scl/requirements/0-req.lock").unwrap();
        if together {
            assert!(
                text.contains(
                    "-r /tmp/scl/requirements/0-req.lock \\\n      -- \\\n      six==1.16.0\n"
                ),
                "{text}"
            );
        } else {
            assert!(six < lock, "the packages first: {text}");
            assert_eq!(text.matches("python3 -m pip install").count(), 2, "{text}");
            assert!(
                text.contains("-r /tmp/scl/requirements/0-req.lock\n"),
                "{text}"
            );
        }
        let def = scl_backends::apptainer::lower(&spec, &cx);
        assert!(def.errors.is_empty(), "{:?}", def.errors);
        let def = &def.artifacts[0].contents;
        assert_eq!(
            def.contains("-r /.sclc-build/requirements/0-req.lock \\\n          -- \\\n"),
            together,
            "{def}"
        );
    }
}
