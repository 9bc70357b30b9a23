//! Properties every generated Dockerfile must have (acceptance README,
//! "Properties every scenario's outputs must have", Dockerfile part), checked
//! on every fixture.

mod common;

use common::{dockerfiles, instructions, lowered, spec_for, Instruction};
use scl_ir::{EnvSpec, SystemManager, VarValue};

/// Every `(fixture/artifact, IR of that Dockerfile, instructions, text)`.
fn all() -> Vec<(String, EnvSpec, Vec<Instruction>, String)> {
    let mut out = Vec::new();
    for (name, spec, lowered) in lowered() {
        for a in dockerfiles(&lowered) {
            let s = spec_for(&spec, &a.path).clone();
            out.push((
                format!("{name}/{}", a.path),
                s,
                instructions(&a.contents),
                a.contents.clone(),
            ));
        }
    }
    assert!(out.len() >= 8, "fixtures missing");
    out
}

fn position(ins: &[Instruction], pred: impl Fn(&Instruction) -> bool) -> Option<usize> {
    ins.iter().position(pred)
}

fn is_requirements_step(i: &Instruction) -> bool {
    (i.keyword == "COPY" && i.args.contains("/tmp/scl/requirements/"))
        || (i.keyword == "RUN" && i.args.contains(" -r /tmp/scl/requirements/"))
        || (i.keyword == "RUN" && i.args.contains(" -r '/tmp/scl/requirements/"))
}

fn is_files_copy(i: &Instruction) -> bool {
    i.keyword == "COPY" && !i.args.contains("/tmp/scl/requirements/")
}

#[test]
fn from_is_the_exact_image() {
    for (what, spec, ins, _) in all() {
        assert_eq!(ins[0].keyword, "FROM", "{what}");
        assert_eq!(ins[0].args, spec.base.as_ref().unwrap().pinned(), "{what}");
        assert_eq!(
            ins.iter().filter(|i| i.keyword == "FROM").count(),
            1,
            "{what}: one stage"
        );
    }
}

#[test]
fn apt_packages_in_one_clean_layer() {
    let mut checked = 0;
    for (what, spec, ins, _) in all() {
        let Some(system) = &spec.system else { continue };
        if system.manager != SystemManager::Apt || system.packages.is_empty() {
            continue;
        }
        let installs: Vec<&Instruction> = ins
            .iter()
            .filter(|i| i.keyword == "RUN" && i.args.contains("apt-get install"))
            .collect();
        assert_eq!(installs.len(), 1, "{what}: one apt-get install layer");
        let run = &installs[0].args;
        assert!(run.contains("apt-get update"), "{what}");
        assert!(run.contains("--no-install-recommends"), "{what}");
        assert!(run.contains("rm -rf /var/lib/apt/lists/*"), "{what}");
        assert!(
            run.find("apt-get update") < run.find("apt-get install"),
            "{what}"
        );
        assert!(
            run.find("apt-get install") < run.find("rm -rf /var/lib/apt/lists/*"),
            "{what}"
        );
        // Every package, in IR order, after the `--` that ends the options.
        let mut at = run
            .find("--no-install-recommends -o APT::Cmd::Pattern-Only=true -- ")
            .unwrap_or_else(|| panic!("{what}: no `--` before the packages"));
        for p in &system.packages {
            let found = run[at..]
                .find(&format!(" {p} "))
                .unwrap_or_else(|| panic!("{what}: {p} missing or out of order"));
            at += found + 1;
        }
        checked += 1;
    }
    assert!(checked >= 3, "apt fixtures checked: {checked}");
}

#[test]
fn python_after_system_and_requirements_before_files() {
    let mut checked = 0;
    for (what, spec, ins, _) in all() {
        let system = position(&ins, |i| {
            i.keyword == "RUN"
                && ["apt-get install", "apk add", "dnf install", "yum install"]
                    .iter()
                    .any(|m| i.args.contains(m))
        });
        let first_python = position(&ins, |i| {
            i.keyword == "RUN" && i.args.contains("pip install") && !i.args.contains("--target")
        });
        if let (Some(s), Some(p)) = (system, first_python) {
            assert!(s < p, "{what}: Python packages after system packages");
        }
        let last_req = ins.iter().rposition(is_requirements_step);
        let first_files = position(&ins, is_files_copy);
        let has_req = spec
            .python
            .as_ref()
            .is_some_and(|p| !p.requirements.is_empty());
        assert_eq!(
            last_req.is_some(),
            has_req,
            "{what}: requirements steps iff requirements"
        );
        if let (Some(r), Some(f)) = (last_req, first_files) {
            assert!(
                r < f,
                "{what}: requirements installed before files are copied"
            );
            checked += 1;
        }
        // Python packages too come before the source.
        let last_pkg = ins
            .iter()
            .rposition(|i| i.keyword == "RUN" && i.args.contains("pip install"));
        if let (Some(p), Some(f)) = (last_pkg, first_files) {
            assert!(p < f, "{what}: packages installed before files are copied");
        }
        assert_eq!(first_files.is_some(), !spec.files.is_empty(), "{what}");
    }
    assert!(checked >= 1, "a fixture with both requirements and files");
}

#[test]
fn last_user_is_the_non_root_ir_user() {
    for (what, spec, ins, _) in all() {
        let user = spec.user.as_ref().expect("fixtures have users");
        let last = ins
            .iter()
            .rev()
            .find(|i| i.keyword == "USER")
            .unwrap_or_else(|| panic!("{what}: no USER"));
        let uid: u32 = last
            .args
            .parse()
            .unwrap_or_else(|_| panic!("{what}: USER {} not numeric", last.args));
        assert_ne!(uid, 0, "{what}: runs as root");
        assert_eq!(uid, user.uid, "{what}");
        // Created before anything is copied with --chown.
        let create = position(&ins, |i| {
            i.keyword == "RUN" && (i.args.contains("useradd") || i.args.contains("adduser"))
        });
        let create = create.unwrap_or_else(|| panic!("{what}: user not created"));
        if let Some(c) = position(&ins, |i| i.args.contains("--chown=")) {
            assert!(create < c, "{what}");
        }
    }
}

#[test]
fn ownership_follows_the_uid_and_spares_existing_folders() {
    let mut marked = 0;
    for (what, spec, ins, _) in all() {
        let user = spec.user.as_ref().expect("fixtures have users");
        // Every --chown is the numeric uid the container runs as, and every
        // file copied after USER carries it.
        for i in ins
            .iter()
            .filter(|i| i.keyword == "COPY" || i.keyword == "ADD")
        {
            let chown = i
                .args
                .split_whitespace()
                .find(|w| w.starts_with("--chown="));
            if let Some(c) = chown {
                assert_eq!(c, format!("--chown={}", user.uid), "{what}: {}", i.args);
            } else {
                assert!(
                    user.is_root() || i.args.contains("/tmp/scl/requirements/"),
                    "{what}: {} without --chown",
                    i.args
                );
            }
        }
        // The only chown of a RUN is the workdir's, and only when the user
        // step found no such folder in the base image.
        let workdir = spec.workdir.as_deref().unwrap();
        let w = scl_backends::quote::shell(workdir);
        let mark =
            format!("if [ ! -e {w} ]; then mkdir -p /tmp/scl && touch /tmp/scl/own-workdir; fi");
        let own = format!(
            "if [ -e /tmp/scl/own-workdir ]; then       mkdir -p {w} && chown -hR {} {w} && rm -f /tmp/scl/own-workdir;     fi",
            user.uid
        );
        let create = position(&ins, |i| {
            i.keyword == "RUN" && (i.args.contains("useradd") || i.args.contains("adduser"))
        })
        .unwrap();
        assert!(
            ins[create].args.ends_with(&mark),
            "{what}: {}",
            ins[create].args
        );
        // Three kinds of chown in a RUN, each given to the uid: the
        // workdir's (only when the user step found no such folder in the
        // base image), each Hugging Face download's target (in its own
        // layer), and the folders the user writes (writable, read-write mount
        // points: the folders themselves).
        let chowns: Vec<usize> = (0..ins.len())
            .filter(|&n| ins[n].keyword == "RUN" && ins[n].args.contains("chown"))
            .filter(|&n| {
                let a = &ins[n].args;
                if a.contains("huggingface_hub") {
                    assert!(
                        a.contains(&format!("&& chown -R -- {} /", user.uid)),
                        "{what}: {a}"
                    );
                    return false;
                }
                if a.starts_with("mkdir -p -- ") {
                    let mut dirs: Vec<String> = Vec::new();
                    let mounts = spec
                        .volumes
                        .iter()
                        .filter(|v| v.mode != scl_ir::VolumeMode::ReadOnly)
                        .map(|v| &*v.mount);
                    for d in spec.writable.iter().map(String::as_str).chain(mounts) {
                        let q = scl_backends::quote::shell(d.trim_end_matches('/'));
                        if !dirs.contains(&q) {
                            dirs.push(q);
                        }
                    }
                    let list = dirs.join(" ");
                    assert_eq!(
                        a,
                        &format!("mkdir -p -- {list}  && chown -- {} {list}", user.uid),
                        "{what}"
                    );
                    return false;
                }
                true
            })
            .collect();
        assert_eq!(chowns.len(), 1, "{what}");
        assert_eq!(ins[chowns[0]].args, own, "{what}");
        let user_line = position(&ins, |i| i.keyword == "USER").unwrap();
        assert!(create < chowns[0] && chowns[0] < user_line, "{what}");
        // Setup steps (which may create the folder) run in between.
        for (n, i) in ins.iter().enumerate() {
            if i.args.contains("sh -e /tmp/scl/setup.sh") {
                assert!(create < n && n < chowns[0], "{what}");
            }
        }
        marked += 1;
    }
    assert!(marked >= 8);
}

#[test]
fn setup_steps_are_scripts_run_by_sh() {
    let mut checked = 0;
    for (what, spec, ins, _) in all() {
        let runs: Vec<&Instruction> = ins
            .iter()
            .filter(|i| i.keyword == "RUN" && i.args.contains("/tmp/scl/setup.sh"))
            .collect();
        assert_eq!(runs.len(), spec.setup.len(), "{what}: one RUN per step");
        for r in runs {
            assert!(
                r.args
                    .starts_with("mkdir -p /tmp/scl  && printf '%s\\n'       '"),
                "{what}: {}",
                r.args
            );
            assert!(
                r.args.ends_with(
                    "'       > /tmp/scl/setup.sh  && sh -e /tmp/scl/setup.sh  && rm -f /tmp/scl/setup.sh"
                ),
                "{what}: {}",
                r.args
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "setup steps checked: {checked}");
}

#[test]
fn no_secret_reaches_env_or_arg() {
    let mut secrets_seen = 0;
    for (what, spec, ins, text) in all() {
        assert!(!ins.iter().any(|i| i.keyword == "ARG"), "{what}: no ARG");
        for (k, v) in &spec.vars {
            let VarValue::Secret(r) = v else { continue };
            secrets_seen += 1;
            for i in ins
                .iter()
                .filter(|i| i.keyword == "ENV" || i.keyword == "ARG" || i.keyword == "LABEL")
            {
                assert!(
                    !i.args.contains(&**k),
                    "{what}: secret var {k} in {} {}",
                    i.keyword,
                    i.args
                );
                assert!(
                    !i.args.contains(&r.secret),
                    "{what}: secret name {} in {}",
                    r.secret,
                    i.keyword
                );
            }
            // Only named, in a comment.
            assert!(
                text.contains(&format!(
                    "# runtime secret: {k} from secret {} key {}",
                    r.secret, r.key
                )),
                "{what}"
            );
        }
        // Plain vars are all there.
        let env: String = ins
            .iter()
            .filter(|i| i.keyword == "ENV")
            .map(|i| i.args.clone())
            .collect();
        for (k, v) in &spec.vars {
            if let VarValue::Plain(_) = v {
                assert!(
                    env.contains(&format!("{k}=\"")),
                    "{what}: {k} missing from ENV"
                );
            }
        }
    }
    assert!(secrets_seen >= 2);
}

#[test]
fn entrypoint_and_cmd_are_exec_form_json() {
    for (what, spec, ins, _) in all() {
        for (kw, ir) in [("ENTRYPOINT", &spec.entrypoint), ("CMD", &spec.command)] {
            let found: Vec<&Instruction> = ins.iter().filter(|i| i.keyword == kw).collect();
            if ir.is_empty() {
                assert!(found.is_empty(), "{what}: {kw} without IR value");
                continue;
            }
            assert_eq!(found.len(), 1, "{what}: one {kw}");
            let parsed: Vec<String> = serde_json::from_str(&found[0].args).unwrap_or_else(|e| {
                panic!("{what}: {kw} {} is not a JSON array: {e}", found[0].args)
            });
            assert_eq!(&parsed, ir, "{what}: {kw}");
        }
    }
}

#[test]
fn volumes_are_never_baked() {
    for (what, spec, ins, _) in all() {
        assert!(!ins.iter().any(|i| i.keyword == "VOLUME"), "{what}");
        for v in &spec.volumes {
            // Nothing is copied to or from a mount point.
            for i in ins
                .iter()
                .filter(|i| i.keyword == "COPY" || i.keyword == "ADD")
            {
                assert!(
                    !i.args.split_whitespace().any(|w| w == &*v.mount),
                    "{what}: {} copies to mount {}",
                    i.args,
                    v.mount
                );
            }
        }
    }
}

#[test]
fn metadata_instructions() {
    for (what, spec, ins, _) in all() {
        let ports: Vec<String> = spec.ports.iter().map(|p| p.to_string()).collect();
        let expose: Vec<&Instruction> = ins.iter().filter(|i| i.keyword == "EXPOSE").collect();
        if ports.is_empty() {
            assert!(expose.is_empty(), "{what}");
        } else {
            assert_eq!(expose[0].args, ports.join(" "), "{what}");
        }
        let label = ins
            .iter()
            .find(|i| i.keyword == "LABEL")
            .unwrap_or_else(|| panic!("{what}: no LABEL"));
        assert!(
            label
                .args
                .contains(&format!("dev.scl.ir.sha256=\"{}\"", spec.content_hash())),
            "{what}"
        );
        if let Some(w) = &spec.workdir {
            let wd = ins.iter().rev().find(|i| i.keyword == "WORKDIR").unwrap();
            assert_eq!(&wd.args, w, "{what}");
        }
    }
}

#[test]
fn lowering_is_deterministic() {
    for (name, spec, first) in lowered() {
        let again = scl_backends::docker::lower(&spec, &name);
        assert_eq!(first, again, "{name}");
        // And survives a JSON round trip of the IR.
        let back: EnvSpec = serde_json::from_str(&spec.to_canonical_json()).unwrap();
        assert_eq!(scl_backends::docker::lower(&back, &name), first, "{name}");
    }
}

#[test]
fn artifact_layout() {
    for (name, spec, out) in lowered() {
        let paths: Vec<&str> = out.artifacts.iter().map(|a| a.path.as_str()).collect();
        for p in &paths {
            assert!(
                !p.starts_with('/') && !p.split('/').any(|s| s == ".." || s.is_empty()),
                "{name}: {p}"
            );
        }
        let mut dedup = paths.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), paths.len(), "{name}: duplicate paths");
        if spec.base.is_some() {
            assert!(paths.contains(&"Dockerfile"), "{name}");
        } else {
            assert!(
                !paths.contains(&"Dockerfile"),
                "{name}: services env has no top-level Dockerfile"
            );
            for (svc, s) in &spec.services {
                assert_eq!(
                    s.base.is_some(),
                    paths.contains(&format!("{svc}/Dockerfile").as_str()),
                    "{name}/{svc}"
                );
            }
        }
        // Ignore files only with ignore globs, and both with the same text.
        let has_ignore = !spec.ignore.is_empty();
        assert_eq!(
            paths.contains(&"Dockerfile.dockerignore"),
            has_ignore,
            "{name}"
        );
        assert_eq!(paths.contains(&".dockerignore"), has_ignore, "{name}");
        if has_ignore {
            assert_eq!(
                out.artifact("Dockerfile.dockerignore").unwrap().contents,
                out.artifact(".dockerignore").unwrap().contents
            );
            // Every glob on a line of its own, escaped where .dockerignore
            // would read it as a comment or an exception.
            for g in &spec.ignore {
                let line = scl_backends::quote::dockerignore_pattern(g).unwrap();
                assert!(
                    out.artifact(".dockerignore")
                        .unwrap()
                        .contents
                        .lines()
                        .any(|l| l == line),
                    "{name}: {g}"
                );
                assert!(!line.starts_with(['#', '!']), "{name}: {line}");
            }
        }
        for a in &out.artifacts {
            assert!(
                a.contents.ends_with('\n') && !a.contents.ends_with("\n\n"),
                "{name}/{}",
                a.path
            );
        }
    }
}
