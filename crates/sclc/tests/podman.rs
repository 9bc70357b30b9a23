//! Real builds: the Dockerfile sclc generates for `tests/podman/smoke.env.scl`
//! is built with Podman on a local Debian 12 image, and every `test` command
//! of the env runs in the image. The command lines are the ones `sclc build`
//! prints, with `podman` for `docker` and the flags this machine needs (see
//! `tests/podman/README.md`): `--pull=never` (nothing can be pulled here),
//! `BUILDAH_ISOLATION=chroot`, and `--runtime runc` with small `--ulimit`s
//! (the container may not raise its limits above the machine's).
//!
//! Set up with `bash scripts/podman-setup.sh`. Without podman or the base
//! image the test is skipped with the reason, unless `CI` is set (to anything
//! but `false`, `0` or empty) or `SCL_REQUIRE_PODMAN=1`: then it fails.

mod common;

use common::{file_contains, must_run, repo, saved_image, sclc, text, RemoveImages};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

/// What `FROM debian:12` resolves to (made by scripts/podman-setup.sh).
const BASE: &str = "docker.io/library/debian:12";
/// Flags of `podman run` on this machine: runc, and limits under the hard
/// limits a process here may not raise (podman's defaults are higher).
const RUN_FLAGS: &str = "--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024";

/// Why the test cannot run here, if it cannot.
fn missing() -> Option<String> {
    match Command::new("podman").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Some("podman is not installed".into()),
    }
    let exists = Command::new("podman")
        .args(["image", "exists", BASE])
        .status()
        .is_ok_and(|s| s.success());
    if !exists {
        return Some(format!("podman has no {BASE} image"));
    }
    None
}

/// Runs a printed command line with `sh -c` in `dir`.
fn shell(dir: &Path, line: &str, envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new("sh");
    c.arg("-c").arg(line).current_dir(dir);
    c.env("BUILDAH_ISOLATION", "chroot");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("sh runs")
}

#[test]
fn smoke_env_builds_with_podman_and_its_tests_pass() {
    build_and_run("podman_smoke");
}

/// The same env with `builder`: a multi-stage build whose build stage makes
/// the wheels (with the index credentials) and whose image installs only
/// those.
#[test]
fn smoke_env_with_a_build_stage_builds_with_podman() {
    build_and_run("podman_smoke_builder");
}

/// Builds env `env` of the smoke file with the printed build line, runs
/// every printed run line and checks the secret is in no layer.
fn build_and_run(env: &str) {
    if let Some(why) = missing() {
        if must_run(&["SCL_REQUIRE_PODMAN"]) {
            panic!(
                "{why}: run `bash scripts/podman-setup.sh` (CI or SCL_REQUIRE_PODMAN=1 \
                 is set, so this test does not skip)"
            );
        }
        eprintln!("skipped: {why} (run `bash scripts/podman-setup.sh`)");
        return;
    }
    let start = Instant::now();
    let fixture = repo().join("tests/podman/smoke.env.scl");
    let dir = tempfile::tempdir().unwrap();
    let repo_name = format!("scl-{}-{}", env.replace('_', "-"), std::process::id());
    let built = sclc(
        dir.path(),
        &[
            "build",
            fixture.to_str().unwrap(),
            "--env",
            env,
            "--target",
            "docker",
            "--out",
            "out",
            // One repository per run, so that runs at the same time (and their
            // clean-up) do not share an image.
            "--image-repo",
            &repo_name,
        ],
    );
    assert!(built.status.success(), "sclc build: {}", text(&built));
    let dockerfile =
        std::fs::read_to_string(dir.path().join("out").join(env).join("Dockerfile")).unwrap();
    assert_eq!(
        dockerfile.contains(" AS builder\n"),
        env.ends_with("_builder"),
        "{dockerfile}"
    );
    let printed = String::from_utf8(built.stdout).unwrap();
    let build_line = printed
        .lines()
        .find(|l| l.starts_with("docker build "))
        .unwrap_or_else(|| panic!("no build line in:\n{printed}"));
    let run_lines: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("docker run "))
        .collect();
    // The tag sclc chose: `-t REPO:TAG` in the build line.
    let tag = build_line
        .split(' ')
        .skip_while(|w| *w != "-t")
        .nth(1)
        .unwrap_or_else(|| panic!("no -t in {build_line}"))
        .to_string();
    assert!(tag.starts_with(&format!("{repo_name}:")), "{tag}");
    let _cleanup = RemoveImages(vec![tag.clone()]);

    // A token found nowhere else, so that finding it in the image means the
    // secret leaked.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let token = format!("scl-smoke-token-{:x}-{}", nanos, std::process::id());
    let netrc = format!("machine pypi.invalid\nlogin smoke\npassword {token}\n");

    let line = build_line.replacen("docker build ", "podman build --pull=never ", 1);
    // The secret is required: without --secret the build stops at its mount.
    // With --no-cache, since a cached layer of that step would be used without
    // mounting anything; the build below then reuses the layers before it.
    let secret_flag = " --secret id=pypi.netrc,env=PYPI_NETRC";
    let tag_flag = format!(" -t {tag}");
    assert!(
        line.contains(secret_flag) && line.contains(&tag_flag),
        "{line}"
    );
    let no_secret = line
        .replacen(secret_flag, "", 1)
        .replacen(&tag_flag, "", 1)
        .replacen("podman build ", "podman build --no-cache ", 1);
    let n = shell(dir.path(), &no_secret, &[]);
    assert!(!n.status.success(), "{no_secret}\n{}", text(&n));
    assert!(
        String::from_utf8_lossy(&n.stderr)
            .contains("secret required but no secret with id pypi.netrc"),
        "{no_secret}\n{}",
        text(&n)
    );

    // The build line as printed (`--secret id=pypi.netrc,env=PYPI_NETRC`).
    // Podman before 4.4 (Debian 12 has 4.3.1) bind-mounts nothing from a
    // build stage that came from its cache (podman #16281, buildah #4375):
    // the second build of an env with `builder` on one machine would find
    // no wheels. Such a build runs without the cache.
    let line = if env.ends_with("_builder") && podman_before_4_4() {
        line.replacen("podman build ", "podman build --no-cache ", 1)
    } else {
        line
    };
    let b = shell(dir.path(), &line, &[("PYPI_NETRC", &netrc)]);
    assert!(b.status.success(), "{line}\n{}", text(&b));
    let build_secs = start.elapsed().as_secs();

    // Each printed `docker run` line: the command, then every `test`.
    let expected = [
        "check-ok /opt/venv/bin/python",
        "jq-1.6",
        "python-ok /opt/venv 1.16.0 3.7",
        "cache-ok",
        "setup-ok",
        "secret-not-mounted",
        "check-ok /opt/venv/bin/python",
    ];
    assert_eq!(run_lines.len(), expected.len(), "{printed}");
    for (line, want) in run_lines.iter().zip(expected) {
        let line = line.replacen("docker run ", &format!("podman run {RUN_FLAGS} "), 1);
        let r = shell(dir.path(), &line, &[]);
        assert!(r.status.success(), "{line}\n{}", text(&r));
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(
            stdout.contains(want),
            "{line}: expected {want:?}\n{}",
            text(&r)
        );
    }

    // The secret is in no layer (a file written and deleted later would still
    // be in one) and in no metadata of the image: search the saved archive,
    // whose layers are uncompressed tar.
    let archive = saved_image(dir.path(), &tag);
    assert!(std::fs::metadata(&archive).unwrap().len() > 50 << 20);
    assert!(
        !file_contains(&archive, token.as_bytes()),
        "the build secret is in the image"
    );
    // The search finds what a layer holds: the setup step's file.
    assert!(file_contains(&archive, b"it's set up"));
    eprintln!(
        "podman: built {tag} in {build_secs} s; all {} run lines passed; {} s in all",
        run_lines.len(),
        start.elapsed().as_secs()
    );
}

/// Whether `podman --version` is older than 4.4, whose builds mount a
/// cached build stage (`RUN --mount=type=bind,from=STAGE`) correctly.
fn podman_before_4_4() -> bool {
    let out = std::process::Command::new("podman")
        .arg("--version")
        .output();
    let v = out
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    let mut nums = v
        .split_whitespace()
        .last()
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (nums.next().unwrap_or(0), nums.next().unwrap_or(0));
    (major, minor) < (4, 4)
}
