//! The engine commands for real: `sclc image build` (with `--push`), `run`,
//! `shell`, `down` and `check --locked` on `tests/engines/app.env.scl`,
//! through the Docker Engine API as Podman's compatible service
//! (`podman system service`) serves it, on the local Debian 12 image that
//! `scripts/podman-setup.sh` makes, and with a registry from Debian's
//! `docker-registry` package on 127.0.0.1.
//!
//! The test starts both itself, each on its own socket or port, with the
//! configuration this machine needs (`tests/engines/README.md`): a
//! `containers.conf` with runtime `runc` and small `nofile`/`nproc`
//! ulimits, a `registries.conf` that lets the registry on 127.0.0.1 be
//! plain HTTP, and `BUILDAH_ISOLATION=chroot`.
//!
//! Without podman, the base image or `docker-registry` the test is skipped
//! with the reason, unless `CI` is set (to anything but `false`, `0` or
//! empty), `SCL_REQUIRE_PODMAN=1` or `SCL_REQUIRE_ENGINES=1`: then it fails.

mod common;

use common::{file_contains, must_run, repo, saved_image, sclc, text, RemoveImages};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BASE: &str = "docker.io/library/debian:12";

/// Why the test cannot run here, if it cannot.
fn missing() -> Option<String> {
    let runs = |c: &str, a: &[&str]| {
        Command::new(c)
            .args(a)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !runs("podman", &["--version"]) {
        return Some("podman is not installed".into());
    }
    if !runs("podman", &["image", "exists", BASE]) {
        return Some(format!("podman has no {BASE} image"));
    }
    if !Path::new("/usr/bin/docker-registry").exists() {
        return Some("docker-registry is not installed (Debian package docker-registry)".into());
    }
    None
}

/// Skips (returns true) or fails when the engines cannot run here.
fn skip() -> bool {
    match missing() {
        None => false,
        Some(why) if must_run(&["SCL_REQUIRE_PODMAN", "SCL_REQUIRE_ENGINES"]) => panic!(
            "{why}: run `bash scripts/podman-setup.sh` (CI, SCL_REQUIRE_PODMAN=1 or \
             SCL_REQUIRE_ENGINES=1 is set, so this test does not skip)"
        ),
        Some(why) => {
            eprintln!("skipped: {why} (run `bash scripts/podman-setup.sh`)");
            true
        }
    }
}

/// The Podman service and the registry of one test, stopped on drop.
struct Engines {
    dir: tempfile::TempDir,
    service: Child,
    registry: Child,
    port: u16,
}

impl Drop for Engines {
    fn drop(&mut self) {
        let _ = self.service.kill();
        let _ = self.registry.kill();
        let _ = self.service.wait();
        let _ = self.registry.wait();
    }
}

impl Engines {
    fn socket(&self) -> PathBuf {
        self.dir.path().join("podman.sock")
    }

    fn docker_host(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    fn start() -> Engines {
        let dir = tempfile::tempdir().unwrap();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let conf = dir.path().join("containers.conf");
        std::fs::write(
            &conf,
            "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n\n[engine]\nruntime = \"runc\"\n",
        )
        .unwrap();
        let registries = dir.path().join("registries.conf");
        std::fs::write(
            &registries,
            format!("unqualified-search-registries = []\n\n[[registry]]\nlocation = \"127.0.0.1:{port}\"\ninsecure = true\n"),
        )
        .unwrap();
        let registry_conf = dir.path().join("registry.yml");
        std::fs::write(
            &registry_conf,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("registry-data").display()
            ),
        )
        .unwrap();
        let log = |name: &str| std::fs::File::create(dir.path().join(name)).unwrap();
        let registry = Command::new("/usr/bin/docker-registry")
            .arg("serve")
            .arg(&registry_conf)
            .stdout(log("registry.log"))
            .stderr(log("registry.err"))
            .spawn()
            .expect("docker-registry starts");
        let socket = dir.path().join("podman.sock");
        let service = Command::new("podman")
            .args(["system", "service", "--time=0"])
            .arg(format!("unix://{}", socket.display()))
            .env("CONTAINERS_CONF", &conf)
            .env("CONTAINERS_REGISTRIES_CONF", &registries)
            .env("BUILDAH_ISOLATION", "chroot")
            .stdout(log("service.log"))
            .stderr(log("service.err"))
            .spawn()
            .expect("podman system service starts");
        let e = Engines {
            dir,
            service,
            registry,
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ping = std::os::unix::net::UnixStream::connect(e.socket()).and_then(|mut s| {
                s.write_all(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")?;
                let mut r = String::new();
                s.read_to_string(&mut r)?;
                Ok(r)
            });
            let registry_up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
            if ping.is_ok_and(|r| r.ends_with("OK")) && registry_up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "podman service or registry did not start; see {}",
                e.dir.path().display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        e
    }

    /// Runs sclc in `cwd` against this engine, with `envs` set.
    fn sclc(
        &self,
        cwd: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sclc"));
        c.args(args)
            .current_dir(cwd)
            .env("NO_COLOR", "1")
            .env("DOCKER_HOST", self.docker_host())
            .env_remove("PYPI_NETRC")
            .env_remove("APP_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        for (k, v) in envs {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("sclc runs");
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// The manifest digest the registry has for `name:tag`
    /// (`Docker-Content-Digest` of `HEAD /v2/<name>/manifests/<tag>`).
    fn registry_digest(&self, name: &str, tag: &str) -> String {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "HEAD /v2/{name}/manifests/{tag} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/vnd.docker.distribution.manifest.v2+json\r\nAccept: application/vnd.oci.image.manifest.v1+json\r\n\r\n"
        )
        .unwrap();
        let mut r = String::new();
        s.read_to_string(&mut r).unwrap();
        r.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("docker-content-digest")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no digest for {name}:{tag}:\n{r}"))
    }
}

fn copy_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = repo().join("tests/engines");
    for f in ["app.env.scl", "app.py", "data/hello.txt"] {
        let to = dir.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from.join(f), &to).unwrap();
    }
    dir
}

/// A value found nowhere else, so that finding it in an image means a
/// secret leaked.
fn token(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("scl-{what}-{nanos:x}-{}", std::process::id())
}

#[test]
fn build_push_run_shell_down_through_the_docker_api() {
    if skip() {
        return;
    }
    let engines = Engines::start();
    let work = copy_fixture();
    let w = work.path();
    let repo_name = format!(
        "127.0.0.1:{}/scl/engines-app-{}",
        engines.port,
        std::process::id()
    );
    let secret = token("build-secret");
    let netrc = format!("machine pypi.invalid\nlogin app\npassword {secret}\n");

    // Build and push: the lock records the image ID and the registry's digest.
    let build = engines.sclc(
        w,
        &[
            "image",
            "build",
            "app.env.scl",
            "--image-repo",
            &repo_name,
            "--push",
            "--tag",
            "latest",
        ],
        &[("PYPI_NETRC", &netrc)],
        None,
    );
    let stdout = String::from_utf8_lossy(&build.stdout).into_owned();
    assert!(build.status.success(), "{}", text(&build));
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(stderr.starts_with("engine: Podman "), "{}", text(&build));
    assert!(
        stderr.contains("STEP 1/"),
        "the build's output is shown: {}",
        text(&build)
    );
    let lock_text = std::fs::read_to_string(w.join("scl.lock")).unwrap();
    let field = |k: &str| -> String {
        lock_text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k} = \"")))
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or_else(|| panic!("no {k} in scl.lock:\n{lock_text}"))
            .to_string()
    };
    let reference = field("reference");
    let tag = field("tag");
    let _cleanup = RemoveImages(vec![reference.clone(), format!("{repo_name}:latest")]);
    assert_eq!(reference, format!("{repo_name}:{tag}"));
    assert_eq!(tag.len(), 16);
    let id = field("id");
    assert!(id.starts_with("sha256:") && id.len() == 71, "{lock_text}");
    let digest = field("digest");
    let name = repo_name.split_once('/').unwrap().1;
    let in_registry = engines.registry_digest(name, &tag);
    assert_eq!(digest, format!("{repo_name}@{in_registry}"), "{lock_text}");
    assert_eq!(
        engines.registry_digest(name, "latest"),
        in_registry,
        "--tag latest is pushed too"
    );
    assert_eq!(
        stdout,
        format!(
            "built {reference} ({}) in {}\ntagged {repo_name}:latest\npushed {digest}\npushed {repo_name}:latest ({in_registry})\nrecorded in scl.lock\n",
            &id[7..19],
            stdout.lines().next().unwrap().rsplit(" in ").next().unwrap()
        )
    );

    // The tag is the one the Kubernetes target names for the same repository.
    let k8s = sclc(
        w,
        &[
            "build",
            "app.env.scl",
            "--target",
            "k8s",
            "--image-repo",
            &repo_name,
            "--out",
            "out",
        ],
    );
    assert!(k8s.status.success(), "{}", text(&k8s));
    let manifest = std::fs::read_to_string(w.join("out/engines_app/k8s.yaml")).unwrap();
    assert!(manifest.contains(&reference), "{manifest}");
    std::fs::remove_dir_all(w.join("out")).unwrap();

    // The build secret is in no layer or metadata of the image.
    let archive = saved_image(w, &reference);
    assert!(
        !file_contains(&archive, secret.as_bytes()),
        "the build secret is in the image"
    );
    std::fs::remove_file(&archive).unwrap();

    // `check --locked`: pinned now; not after a copied file changes.
    let locked = sclc(w, &["check", "--locked", "app.env.scl"]);
    assert!(locked.status.success(), "{}", text(&locked));

    // Run: the command's output, as the non-root user, with the runtime
    // secret from the environment and the host volume.
    let run_token = token("runtime-secret");
    let run = engines.sclc(
        w,
        &["run", "app.env.scl", "--image-repo", &repo_name],
        &[("APP_TOKEN", &run_token)],
        None,
    );
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!(
            "user 1001 runner\npython /opt/venv six 1.16.0\njq jq-1.6\ncache ok\ntoken {run_token}\ndata hello from the host\nbuild-secret-mounted False\n"
        ),
        "{}",
        text(&run)
    );
    // The secret can come from --env-file instead.
    std::fs::write(
        w.join("secrets.env"),
        "# runtime secrets\nAPP_TOKEN=from-file\n",
    )
    .unwrap();
    let from_file = engines.sclc(
        w,
        &[
            "run",
            "app.env.scl",
            "--image-repo",
            &repo_name,
            "--env-file",
            "secrets.env",
            "--",
            "sh",
            "-c",
            "echo \"$APP_TOKEN\"; exit 7",
        ],
        &[],
        None,
    );
    assert_eq!(from_file.status.code(), Some(7), "{}", text(&from_file));
    assert_eq!(String::from_utf8_lossy(&from_file.stdout), "from-file\n");
    // Without it: a usage error before anything runs.
    let no_secret = engines.sclc(
        w,
        &["run", "app.env.scl", "--image-repo", &repo_name],
        &[],
        None,
    );
    assert_eq!(no_secret.status.code(), Some(2), "{}", text(&no_secret));
    assert_eq!(
        String::from_utf8_lossy(&no_secret.stderr),
        "error: env `engines_app` has runtime secrets: set APP_TOKEN in the environment (or give them in a file with --env-file)\n"
    );

    // Shell: commands from stdin, the shell's exit status.
    let sh = engines.sclc(
        w,
        &["shell", "app.env.scl", "--image-repo", &repo_name],
        &[("APP_TOKEN", "x")],
        Some("id -un\necho \"$0\"\nexit 3\n"),
    );
    assert_eq!(sh.status.code(), Some(3), "{}", text(&sh));
    assert_eq!(
        String::from_utf8_lossy(&sh.stdout),
        "runner\nbash\n",
        "{}",
        text(&sh)
    );

    // Detached (started through a link to the folder), then down (through
    // the folder itself).
    let links = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(w, links.path().join("ln")).unwrap();
    let d = engines.sclc(
        links.path(),
        &[
            "run",
            "ln/app.env.scl",
            "--image-repo",
            &repo_name,
            "--detach",
            "--",
            "sleep",
            "300",
        ],
        &[("APP_TOKEN", "x")],
        None,
    );
    assert!(d.status.success(), "{}", text(&d));
    let started = String::from_utf8_lossy(&d.stdout).into_owned();
    let short = started
        .strip_prefix("started ")
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    let down = engines.sclc(w, &["down", "app.env.scl"], &[], None);
    assert!(down.status.success(), "{}", text(&down));
    assert_eq!(
        String::from_utf8_lossy(&down.stdout),
        format!("removed {short}\n")
    );
    let again = engines.sclc(w, &["down", "app.env.scl"], &[], None);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "no containers of app.env.scl to remove\n"
    );

    // A host folder with a comma: Podman's API cannot mount it; one line.
    std::fs::create_dir_all(w.join("odd,dir")).unwrap();
    std::fs::write(
        w.join("odd.env.scl"),
        "env odd {\n  base = image(\"debian:12\")\n  volumes = [{ name = \"d\", source = \"host:./odd,dir\", mount = \"/d\", mode = .read_only }]\n  command = [\"true\"]\n}\n",
    )
    .unwrap();
    let odd = engines.sclc(w, &["run", "odd.env.scl"], &[], None);
    let odd_ref = String::from_utf8_lossy(&odd.stderr)
        .lines()
        .find_map(|l| {
            l.strip_prefix("built ")?
                .split(' ')
                .next()
                .map(String::from)
        })
        .unwrap_or_default();
    let _odd_image = RemoveImages(vec![odd_ref]);
    assert_eq!(odd.status.code(), Some(3), "{}", text(&odd));
    let err = String::from_utf8_lossy(&odd.stderr);
    assert!(
        err.ends_with(&format!(
            "error: cannot mount {}: Podman's Docker API splits mount options at commas, so a path with one cannot be mounted (rename it)\n",
            w.join("odd,dir").display()
        )),
        "{}",
        text(&odd)
    );

    // A build that fails: exit 3, the engine's reason in one line after
    // the build's output, and nothing recorded.
    std::fs::write(
        w.join("broken.env.scl"),
        "env broken {\n  base = image(\"debian:12\")\n  setup = [\"echo about to fail; exit 7\"]\n}\n",
    )
    .unwrap();
    let lock_before = std::fs::read_to_string(w.join("scl.lock")).unwrap();
    let broken = engines.sclc(w, &["image", "build", "broken.env.scl"], &[], None);
    assert_eq!(broken.status.code(), Some(3), "{}", text(&broken));
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(err.contains("  about to fail\n"), "{}", text(&broken));
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: the build failed: ") && last.contains("exit status 7"),
        "{}",
        text(&broken)
    );
    assert!(broken.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(w.join("scl.lock")).unwrap(),
        lock_before
    );

    // A changed copied file: a new tag, which the lock does not pin.
    std::fs::write(w.join("app.py"), "print('changed')\n").unwrap();
    let stale = sclc(w, &["check", "--locked", "app.env.scl"]);
    assert_eq!(stale.status.code(), Some(1), "{}", text(&stale));
    let err = String::from_utf8_lossy(&stale.stderr);
    assert!(
        err.contains(&format!("[E0601] Error: the image of env `engines_app` is not pinned by scl.lock: it records tag {tag}, and the env and the files its image copies now give tag ")),
        "{err}"
    );
}

/// The book's "From laptop to cluster": the example built and run, with
/// `--set` giving a new image (built by `run` itself).
#[test]
fn the_book_example_builds_and_runs() {
    if skip() {
        return;
    }
    let engines = Engines::start();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    for f in ["train.env.scl", "train.py"] {
        std::fs::copy(repo().join("examples/laptop-to-cluster").join(f), w.join(f)).unwrap();
    }
    let repo_name = format!("scl-laptop-{}", std::process::id());
    let build = engines.sclc(
        w,
        &[
            "image",
            "build",
            "train.env.scl",
            "--image-repo",
            &repo_name,
        ],
        &[],
        None,
    );
    assert!(build.status.success(), "{}", text(&build));
    let reference = String::from_utf8_lossy(&build.stdout)
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    let mut cleanup = RemoveImages(vec![reference]);
    let lock = std::fs::read_to_string(w.join("scl.lock")).unwrap();
    let run = engines.sclc(
        w,
        &["run", "train.env.scl", "--image-repo", &repo_name],
        &[],
        None,
    );
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "epochs 3, accuracy 0.99\n"
    );
    let five = engines.sclc(
        w,
        &[
            "run",
            "train.env.scl",
            "--image-repo",
            &repo_name,
            "--set",
            "epochs=5",
        ],
        &[],
        None,
    );
    assert!(five.status.success(), "{}", text(&five));
    // stdout is the container's; what was built is said on stderr.
    assert_eq!(
        String::from_utf8_lossy(&five.stdout),
        "epochs 5, accuracy 0.99\n"
    );
    let err = String::from_utf8_lossy(&five.stderr).into_owned();
    let built = err
        .lines()
        .find(|l| l.starts_with(&format!("built {repo_name}:")))
        .unwrap_or_else(|| panic!("{err}"));
    cleanup.0.push(built.split(' ').nth(1).unwrap().to_string());
    assert!(
        String::from_utf8_lossy(&five.stderr).contains("is not built yet: building it"),
        "{}",
        text(&five)
    );
    // Only `image build` records images, and not one built with --set.
    assert_eq!(std::fs::read_to_string(w.join("scl.lock")).unwrap(), lock);
    let set = engines.sclc(
        w,
        &[
            "image",
            "build",
            "train.env.scl",
            "--image-repo",
            &repo_name,
            "--set",
            "epochs=5",
        ],
        &[],
        None,
    );
    assert!(set.status.success(), "{}", text(&set));
    assert!(
        String::from_utf8_lossy(&set.stdout).ends_with(
            "not recorded in scl.lock: built with --set, the images are not those of the file as it is\n"
        ),
        "{}",
        text(&set)
    );
    assert_eq!(std::fs::read_to_string(w.join("scl.lock")).unwrap(), lock);
    let check = sclc(w, &["check", "--locked", "train.env.scl"]);
    assert!(check.status.success(), "{}", text(&check));
    // A command the image does not have: 127, as `docker run` says.
    let missing = engines.sclc(
        w,
        &[
            "run",
            "train.env.scl",
            "--image-repo",
            &repo_name,
            "--",
            "no-such-command",
        ],
        &[],
        None,
    );
    assert_eq!(missing.status.code(), Some(127), "{}", text(&missing));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.starts_with("error: the container's command is not in the image: ")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// No engine: exit 3 and one line naming what was tried.
#[test]
fn no_engine_is_exit_3_with_one_line() {
    let work = copy_fixture();
    let w = work.path();
    for args in [
        &["image", "build", "app.env.scl"][..],
        &["run", "app.env.scl"][..],
        &["down", "app.env.scl"][..],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
            .args(args)
            .current_dir(w)
            .env("DOCKER_HOST", "unix:///nonexistent/sclc-test.sock")
            .env("PYPI_NETRC", "x")
            .env("APP_TOKEN", "x")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", text(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "error: no container engine at DOCKER_HOST=unix:///nonexistent/sclc-test.sock: /nonexistent/sclc-test.sock does not exist\n",
            "{args:?}"
        );
        assert!(o.stdout.is_empty());
    }
    // Without DOCKER_HOST: the default sockets, listed.
    let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(["down", "app.env.scl"])
        .current_dir(w)
        .env_remove("DOCKER_HOST")
        .env("XDG_RUNTIME_DIR", w.join("no-runtime-dir"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if Path::new("/var/run/docker.sock").exists() || Path::new("/run/podman/podman.sock").exists() {
        eprintln!("a default socket exists here: not checking the no-socket message");
        return;
    }
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        err.starts_with("error: no container engine: none of /var/run/docker.sock, ")
            && err.ends_with(
                " exists (start Docker or `podman system service`, or set DOCKER_HOST)\n"
            )
            && err.lines().count() == 1,
        "{err}"
    );
}

/// The image tag hashes exactly what the build context sends: a copied
/// file's change gives a new tag; `scl.lock` (rewritten by every build),
/// an ignored file and a file nothing copies do not.
#[test]
fn the_tag_hashes_what_the_image_gets() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    std::fs::create_dir_all(w.join("data")).unwrap();
    std::fs::write(w.join("app.py"), "print(1)\n").unwrap();
    std::fs::write(w.join("data/big.ckpt"), "weights").unwrap();
    std::fs::write(
        w.join("root.env.scl"),
        "env rootcopy {\n  base = image(\"debian:12\")\n  files = [{ from = \".\", to = \"/workspace/src\" }]\n  ignore = [\"data\"]\n}\n",
    )
    .unwrap();
    let tag = || {
        let o = sclc(w, &["submit", "--dry-run", "root.env.scl"]);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|l| {
                l.trim()
                    .trim_start_matches("- ")
                    .strip_prefix("image: ")
                    .map(String::from)
            })
            .expect("an image line")
    };
    let first = tag();
    std::fs::write(w.join("scl.lock"), "version = 1\n").unwrap();
    std::fs::write(w.join("data/big.ckpt"), "other weights").unwrap();
    std::fs::write(w.join("data/new.ckpt"), "more").unwrap();
    assert_eq!(tag(), first, "scl.lock and ignored files are not hashed");
    std::fs::write(w.join("app.py"), "print(2)\n").unwrap();
    assert_ne!(tag(), first, "a copied file is hashed");
}

/// `--tag` names one image: with several images in one repository it is
/// a usage error before anything is built.
#[test]
fn a_tag_for_several_images_of_one_repository_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    std::fs::write(
        w.join("two.env.scl"),
        "env a {\n  base = image(\"debian:12\")\n}\n\nenv b {\n  base = image(\"debian:12\")\n  command = [\"true\"]\n}\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args([
            "image",
            "build",
            "two.env.scl",
            "--image-repo",
            "reg.example.com/x",
            "--tag",
            "latest",
        ])
        .current_dir(w)
        .env("DOCKER_HOST", "unix:///nonexistent/sclc-test.sock")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: --tag: several images of the file are in repository reg.example.com/x, so the tag would name each in turn: build one env with `--env NAME`\n"
    );
}
