//! The Docker Engine API (through bollard), as Docker and Podman's
//! Docker-compatible service (`podman system service`) serve it.
//!
//! **Which engine.** `DOCKER_HOST` when it is set (`unix://…`, `tcp://…`,
//! `http://…`); else the first of these sockets that exists: Docker's
//! `/var/run/docker.sock`, rootless Podman's
//! `$XDG_RUNTIME_DIR/podman/podman.sock` and `/run/user/<uid>/podman/podman.sock`,
//! root Podman's `/run/podman/podman.sock`. No socket, or one that does not
//! answer `GET /_ping`, is an [`EngineError`] naming what was tried.
//!
//! **Build secrets.** Docker's classic builder (`POST /build`, builder
//! version 1) takes no secrets, and BuildKit (version 2) takes them only
//! over its session protocol (`POST /session`, gRPC over a hijacked
//! connection). Podman does not implement that protocol (4.3 answers
//! `POST /session` with 404 and `_ping` reports no BuildKit version), but
//! its build endpoint takes a `secrets` parameter of its own: a JSON list
//! of `id=ID,src=PATH` with PATH a file of the uploaded context, which
//! Podman moves out of the context before the build starts (so no `COPY`
//! can reach it) and mounts where `RUN --mount=type=secret,id=ID` asks
//! (`pkg/api/handlers/compat/images_build.go`). So on Podman secrets travel
//! inside the upload, in memory, and sclc writes them nowhere. On Docker,
//! an image with build secrets is refused with a line saying to use the
//! `docker build --secret` command `sclc build` prints; images without
//! secrets build on either engine.
//!
//! **Run-time secrets** are passed as environment variables in the
//! container's creation request: the engine keeps them in the container's
//! configuration (`docker inspect` shows them) until it is removed.

use crate::EngineError;
use bollard::models::{
    ContainerCreateBody, DeviceRequest, HostConfig, Mount, MountType, PortBinding,
};
use bollard::Docker;
use futures::StreamExt;
use scl_ir::{EnvSpec, VarValue, VolumeMode};
use std::collections::HashMap;
use std::path::Path;

/// The engine behind the socket.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EngineKind {
    Docker,
    Podman,
}

/// A connected engine.
pub struct Engine {
    docker: Docker,
    /// The endpoint used (`unix:///run/podman/podman.sock`).
    pub endpoint: String,
    pub kind: EngineKind,
    /// The engine's version (`4.3.1`).
    pub version: String,
}

/// Request timeout of the long operations (builds, pushes, attached runs).
const LONG: u64 = 24 * 3600;

/// The default sockets, in the order they are tried (see the module doc).
pub fn default_sockets() -> Vec<String> {
    let mut v = vec!["/var/run/docker.sock".to_string()];
    if let Ok(x) = std::env::var("XDG_RUNTIME_DIR") {
        if !x.is_empty() {
            v.push(format!("{x}/podman/podman.sock"));
        }
    }
    let uid = rustix_uid();
    let user = format!("/run/user/{uid}/podman/podman.sock");
    if !v.contains(&user) {
        v.push(user);
    }
    v.push("/run/podman/podman.sock".into());
    v
}

fn rustix_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

/// One line for a bollard error: the innermost cause, without bollard's
/// wrapping.
fn say(e: &bollard::errors::Error) -> String {
    use bollard::errors::Error as E;
    match e {
        E::DockerResponseServerError {
            status_code,
            message,
        } if message.trim().is_empty() => {
            format!("HTTP {status_code}, and the engine gave no reason")
        }
        E::DockerResponseServerError {
            status_code,
            message,
        } => format!("{} (HTTP {status_code})", message.trim()),
        E::DockerStreamError { error } => error.trim().to_string(),
        other => {
            let mut s = other.to_string();
            let mut src = std::error::Error::source(other);
            while let Some(x) = src {
                s = x.to_string();
                src = x.source();
            }
            s
        }
    }
}

/// Connects to the engine (see the module doc) and asks its version.
/// Errors: no socket, an unsupported `DOCKER_HOST`, no answer.
pub async fn connect() -> Result<Engine, EngineError> {
    let (docker, endpoint) = match std::env::var("DOCKER_HOST") {
        Ok(host) if !host.is_empty() => {
            let d = Docker::connect_with_host(&host).map_err(|e| match e {
                bollard::errors::Error::SocketNotFoundError(p) => EngineError::new(format!(
                    "no container engine at DOCKER_HOST={host}: {p} does not exist"
                )),
                e => EngineError::new(format!("DOCKER_HOST={host}: {}", say(&e))),
            })?;
            (d, host)
        }
        _ => {
            let tried = default_sockets();
            let Some(sock) = tried.iter().find(|p| Path::new(p).exists()) else {
                return Err(EngineError::new(format!(
                    "no container engine: none of {} exists (start Docker or `podman system service`, or set DOCKER_HOST)",
                    tried.join(", ")
                )));
            };
            let d = Docker::connect_with_unix(sock, 120, bollard::API_DEFAULT_VERSION)
                .map_err(|e| EngineError::new(format!("unix://{sock}: {}", say(&e))))?;
            (d, format!("unix://{sock}"))
        }
    };
    let docker = docker.with_timeout(std::time::Duration::from_secs(10));
    let version = docker.version().await.map_err(|e| {
        EngineError::new(format!(
            "the container engine at {endpoint} does not answer: {}",
            say(&e)
        ))
    })?;
    let podman = version
        .components
        .iter()
        .flatten()
        .find(|c| c.name == "Podman Engine");
    let (kind, v) = match podman {
        Some(c) => (EngineKind::Podman, c.version.clone()),
        None => (
            EngineKind::Docker,
            version.version.clone().unwrap_or_default(),
        ),
    };
    // Speak the engine's API version (Podman 4.3 serves 1.41).
    let docker = docker
        .negotiate_version()
        .await
        .map_err(|e| EngineError::new(format!("{endpoint}: {}", say(&e))))?
        .with_timeout(std::time::Duration::from_secs(LONG));
    Ok(Engine {
        docker,
        endpoint,
        kind,
        version: v,
    })
}

/// A build to run.
pub struct Build {
    /// The uncompressed tar of the context ([`crate::context::archive`]),
    /// with the Dockerfile at [`crate::context::DOCKERFILE_PATH`] and each
    /// secret's value at the path in `secrets`.
    pub context: Vec<u8>,
    /// `<repository>:<tag>`.
    pub reference: String,
    /// `(id, path in the archive)` of each build secret: a file at the top
    /// of the archive (`.sclc-secret-0`), since Podman moves it to the
    /// context's parent folder, which has no subfolders.
    pub secrets: Vec<(String, String)>,
}

/// `%`-encodes `s` for a URL query value (RFC 3986 unreserved characters kept).
fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `secrets` query parameter of Podman's build endpoint for `secrets`.
pub fn podman_secrets_param(secrets: &[(String, String)]) -> String {
    let list: Vec<String> = secrets
        .iter()
        .map(|(id, src)| format!("id={id},src={src}"))
        .collect();
    format!(
        "secrets={}",
        query_escape(&serde_json::to_string(&list).expect("strings serialize"))
    )
}

impl Engine {
    /// What to call the engine in messages (`Podman 4.3.1 at unix:///…`).
    pub fn describe(&self) -> String {
        let name = match self.kind {
            EngineKind::Docker => "Docker",
            EngineKind::Podman => "Podman",
        };
        format!("{name} {} at {}", self.version, self.endpoint)
    }

    /// Builds `b`, calling `line` with each line of the build's output as
    /// it arrives; returns the image ID (`sha256:…`). Errors: the build
    /// failed (the engine's message), build secrets on Docker (see the
    /// module doc), the engine went away.
    pub async fn build(&self, b: Build, line: &mut dyn FnMut(&str)) -> Result<String, EngineError> {
        if !b.secrets.is_empty() && self.kind == EngineKind::Docker {
            let ids: Vec<&str> = b.secrets.iter().map(|(i, _)| i.as_str()).collect();
            return Err(EngineError::new(format!(
                "the image needs build secrets ({}), which Docker Engine takes only over a BuildKit session that sclc does not speak: build with the `docker build --secret …` line `sclc build --target docker` prints, or with Podman",
                ids.join(", ")
            )));
        }
        let docker = if b.secrets.is_empty() {
            self.docker.clone()
        } else {
            let param = podman_secrets_param(&b.secrets);
            self.docker.clone().with_request_modifier(move |mut req| {
                if req.uri().path().ends_with("/build") {
                    let uri = req.uri().to_string();
                    let sep = if uri.contains('?') { '&' } else { '?' };
                    if let Ok(u) = format!("{uri}{sep}{param}").parse() {
                        *req.uri_mut() = u;
                    }
                }
                req
            })
        };
        let options = bollard::query_parameters::BuildImageOptionsBuilder::default()
            .dockerfile(crate::context::DOCKERFILE_PATH)
            .t(&b.reference)
            .rm(true)
            .forcerm(true)
            .build();
        let mut stream =
            docker.build_image(options, None, Some(bollard::body_full(b.context.into())));
        let mut id: Option<String> = None;
        let mut partial = String::new();
        while let Some(item) = stream.next().await {
            let info = match item {
                Ok(i) => i,
                Err(e) => return Err(EngineError::new(format!("the build failed: {}", say(&e)))),
            };
            if let Some(err) = info.error_detail.and_then(|d| d.message) {
                return Err(EngineError::new(format!(
                    "the build failed: {}",
                    err.trim()
                )));
            }
            if let Some(aux) = info.aux {
                id = aux.id.or(id);
            }
            if let Some(s) = info.stream.or(info.status) {
                partial.push_str(&s);
                while let Some(i) = partial.find('\n') {
                    let l: String = partial.drain(..=i).collect();
                    line(l.trim_end_matches(['\n', '\r']));
                }
            }
        }
        if !partial.is_empty() {
            line(&partial);
        }
        match id {
            Some(id) => Ok(id),
            // Engines that send no `aux` (older Podman): the tag's image.
            None => self
                .image_id(&b.reference)
                .await?
                .ok_or_else(|| EngineError::new("the build ended without an image")),
        }
    }

    /// The ID of the image `reference` (`sha256:…`), `None` when the
    /// engine has no such image.
    pub async fn image_id(&self, reference: &str) -> Result<Option<String>, EngineError> {
        match self.docker.inspect_image(reference).await {
            Ok(i) => Ok(i.id),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(EngineError::new(format!(
                "cannot inspect image {reference}: {}",
                say(&e)
            ))),
        }
    }

    /// Adds the tag `target` (`repo:tag`) to the image `source`.
    pub async fn tag(&self, source: &str, target: &str) -> Result<(), EngineError> {
        let (repo, tag) = split_reference(target);
        let options = bollard::query_parameters::TagImageOptionsBuilder::default()
            .repo(repo)
            .tag(tag)
            .build();
        self.docker
            .tag_image(source, Some(options))
            .await
            .map_err(|e| EngineError::new(format!("cannot tag {source} as {target}: {}", say(&e))))
    }

    /// Pushes `reference` to the registry its repository names; returns
    /// the digest of what the registry stored (`sha256:…`), from the
    /// push's final status line (`TAG: digest: sha256:… size: N`, which
    /// Docker and Podman both print), else from the image's repo digests.
    pub async fn push(
        &self,
        reference: &str,
        line: &mut dyn FnMut(&str),
    ) -> Result<String, EngineError> {
        let (repo, tag) = split_reference(reference);
        let options = bollard::query_parameters::PushImageOptionsBuilder::default()
            .tag(tag)
            .build();
        let mut stream = self.docker.push_image(repo, Some(options), None);
        let mut digest: Option<String> = None;
        while let Some(item) = stream.next().await {
            let info = item
                .map_err(|e| EngineError::new(format!("cannot push {reference}: {}", say(&e))))?;
            if let Some(err) = info.error_detail.and_then(|d| d.message) {
                return Err(EngineError::new(format!(
                    "cannot push {reference}: {}",
                    err.trim()
                )));
            }
            if let Some(s) = info.status {
                if let Some(d) = digest_in(&s) {
                    digest = Some(d);
                }
                line(s.trim_end());
            }
        }
        if let Some(d) = digest {
            return Ok(d);
        }
        let inspect =
            self.docker.inspect_image(reference).await.map_err(|e| {
                EngineError::new(format!("cannot inspect {reference}: {}", say(&e)))
            })?;
        inspect
            .repo_digests
            .iter()
            .flatten()
            .find_map(|d| d.strip_prefix(&format!("{repo}@")).map(String::from))
            .ok_or_else(|| {
                EngineError::new(format!(
                    "pushed {reference}, but the engine did not say its digest"
                ))
            })
    }

    /// Creates the container of `body`, starts it and, unless `detach`,
    /// copies its output to this process's stdout and stderr (and this
    /// process's stdin to it when `body` opens stdin), waits for it and
    /// removes it (also on Ctrl-C). Returns its exit status, or its ID when
    /// detached (a container that fails to start is removed). Errors: the
    /// engine refused or lost the container; on Podman, a bind mount whose
    /// source or target has a comma (its compatibility layer splits mount
    /// options on commas).
    pub async fn run(&self, body: ContainerCreateBody, detach: bool) -> Result<Ran, EngineError> {
        if self.kind == EngineKind::Podman {
            let mounts = body
                .host_config
                .iter()
                .flat_map(|h| h.mounts.iter().flatten());
            for m in mounts {
                for p in [&m.source, &m.target].into_iter().flatten() {
                    if p.contains(',') {
                        return Err(EngineError::new(format!(
                            "cannot mount {p}: Podman's Docker API splits mount options at commas, so a path with one cannot be mounted (rename it)"
                        )));
                    }
                }
            }
        }
        let stdin = body.open_stdin.unwrap_or(false);
        let tty = body.tty.unwrap_or(false);
        let image = body.image.clone().unwrap_or_default();
        let created = self
            .docker
            .create_container(
                None::<bollard::query_parameters::CreateContainerOptions>,
                body,
            )
            .await
            .map_err(|e| {
                EngineError::new(format!("cannot create a container of {image}: {}", say(&e)))
            })?;
        let id = created.id;
        if detach {
            let started = self.run_created(&id, true, stdin, tty).await;
            if started.is_err() {
                let _ = self.remove(&id).await;
            }
            return started.map(|_| Ran::Detached(id));
        }
        // Ctrl-C stops the container (it is removed below), as `docker
        // run` does, and the status is the shell's for SIGINT.
        let result = tokio::select! {
            r = self.run_created(&id, false, stdin, tty) => r,
            _ = tokio::signal::ctrl_c() => Ok(Some(130)),
        };
        let _ = self.remove(&id).await;
        match result? {
            Some(code) => Ok(Ran::Exited(code)),
            None => Err(EngineError::new(format!(
                "container {} was removed while it ran: its exit status is unknown",
                short(&id)
            ))),
        }
    }

    async fn run_created(
        &self,
        id: &str,
        detach: bool,
        stdin: bool,
        tty: bool,
    ) -> Result<Option<i64>, EngineError> {
        let start = |e: bollard::errors::Error| start_error(id, &e);
        if detach {
            self.docker
                .start_container(id, None::<bollard::query_parameters::StartContainerOptions>)
                .await
                .map_err(start)?;
            return Ok(None);
        }
        let attach = self
            .docker
            .attach_container(
                id,
                Some(
                    bollard::query_parameters::AttachContainerOptionsBuilder::default()
                        .stream(true)
                        .stdout(true)
                        .stderr(true)
                        .stdin(stdin)
                        .logs(true)
                        .build(),
                ),
            )
            .await
            .map_err(|e| start_error(id, &e))?;
        self.docker
            .start_container(id, None::<bollard::query_parameters::StartContainerOptions>)
            .await
            .map_err(start)?;
        let bollard::container::AttachContainerResults {
            mut output,
            mut input,
        } = attach;
        let _raw = if tty { RawTerminal::enter() } else { None };
        let feeder = if stdin {
            Some(tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut local = tokio::io::stdin();
                let _ = tokio::io::copy(&mut local, &mut input).await;
                let _ = input.shutdown().await;
            }))
        } else {
            drop(input);
            None
        };
        {
            use std::io::Write;
            while let Some(chunk) = output.next().await {
                match chunk {
                    Ok(bollard::container::LogOutput::StdErr { message }) => {
                        let mut e = std::io::stderr().lock();
                        let _ = e.write_all(&message);
                        let _ = e.flush();
                    }
                    Ok(
                        bollard::container::LogOutput::StdOut { message }
                        | bollard::container::LogOutput::Console { message },
                    ) => {
                        let mut o = std::io::stdout().lock();
                        let _ = o.write_all(&message);
                        let _ = o.flush();
                    }
                    Ok(bollard::container::LogOutput::StdIn { .. }) => {}
                    Err(_) => break,
                }
            }
        }
        if let Some(f) = feeder {
            f.abort();
        }
        let mut wait = self
            .docker
            .wait_container(id, None::<bollard::query_parameters::WaitContainerOptions>);
        let mut code = None;
        while let Some(w) = wait.next().await {
            match w {
                Ok(r) => code = Some(r.status_code),
                // bollard reports a non-zero exit as this error.
                Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => {
                    code = Some(c)
                }
                Err(e) => {
                    return Err(EngineError::new(format!(
                        "lost container {}: {}",
                        short(id),
                        say(&e)
                    )))
                }
            }
        }
        Ok(code)
    }

    /// Stops (kills) and removes container `id`.
    async fn remove(&self, id: &str) -> Result<(), bollard::errors::Error> {
        let options = bollard::query_parameters::RemoveContainerOptionsBuilder::default()
            .force(true)
            .build();
        self.docker.remove_container(id, Some(options)).await
    }

    /// Stops and removes every container (running or not) whose labels
    /// include all of `labels`; returns the removed containers' short IDs.
    pub async fn remove_labelled(
        &self,
        labels: &[(String, String)],
    ) -> Result<Vec<String>, EngineError> {
        let filter: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut filters = HashMap::new();
        filters.insert("label".to_string(), filter);
        let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let list = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(|e| EngineError::new(format!("cannot list containers: {}", say(&e))))?;
        let mut removed = Vec::new();
        for c in list {
            let Some(id) = c.id else { continue };
            self.remove(&id).await.map_err(|e| {
                EngineError::new(format!(
                    "cannot remove container {}: {}",
                    short(&id),
                    say(&e)
                ))
            })?;
            removed.push(short(&id).to_string());
        }
        Ok(removed)
    }
}

/// A container that could not start (Podman reports it when attaching):
/// a command that is not in the image (see [`is_missing_command`]: the CLI
/// exits 127 for it, as `docker run` does), else a line naming the
/// container (a port in use, a mount that fails).
fn start_error(id: &str, e: &bollard::errors::Error) -> EngineError {
    let why = say(e);
    if is_missing_command(&why) {
        return EngineError::new(format!(
            "the container's command is not in the image: {why}"
        ));
    }
    EngineError::new(format!("cannot start container {}: {why}", short(id)))
}

/// Whether an engine's start error says the command does not exist in the
/// image (runc: `executable file not found in $PATH`, or `no such file or
/// directory` for a path), which `docker run` reports as exit status 127.
pub fn is_missing_command(message: &str) -> bool {
    message.contains("executable file not found")
        || (message.contains("exec") && message.contains("no such file or directory"))
}

/// How a container run by [`Engine::run`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It exited with this status.
    Exited(i64),
    /// It was started and left running (`--detach`): its ID.
    Detached(String),
}

/// The first 12 hex digits of a container or image ID.
pub fn short(id: &str) -> &str {
    let id = id.strip_prefix("sha256:").unwrap_or(id);
    &id[..id.len().min(12)]
}

/// `repo:tag` → (`repo`, `tag`); the tag is `latest` when there is none.
pub fn split_reference(reference: &str) -> (&str, &str) {
    let slash = reference.rfind('/').map_or(0, |i| i + 1);
    match reference[slash..].rfind(':') {
        Some(i) => (&reference[..slash + i], &reference[slash + i + 1..]),
        None => (reference, "latest"),
    }
}

/// The `sha256:…` digest in a push status line (`TAG: digest: sha256:… size: N`).
fn digest_in(status: &str) -> Option<String> {
    let at = status.find("digest: sha256:")? + "digest: ".len();
    let hex: String = status[at + 7..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (hex.len() == 64).then(|| format!("sha256:{hex}"))
}

/// Puts the terminal (stdin) in raw mode while the value lives, so keys
/// reach an interactive shell in the container as typed.
struct RawTerminal(libc::termios);

impl RawTerminal {
    fn enter() -> Option<RawTerminal> {
        // SAFETY: tcgetattr/tcsetattr on fd 0 with a termios we own.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return None;
            }
            let saved = t;
            libc::cfmakeraw(&mut t);
            if libc::tcsetattr(0, libc::TCSANOW, &t) != 0 {
                return None;
            }
            Some(RawTerminal(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `enter`.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.0);
        }
    }
}

/// What a container of the env needs besides its image.
pub struct RunInputs<'a> {
    /// `<repository>:<tag>` (or an image ID).
    pub image: &'a str,
    /// The workspace root: `host:` volumes are relative to it.
    pub root: &'a Path,
    /// The value of each runtime secret var, by var name.
    pub secrets: &'a [(String, String)],
    /// Labels that find the container again (`sclc down`).
    pub labels: &'a [(String, String)],
    /// The command instead of the image's `CMD` (empty: the image's).
    pub command: &'a [String],
    /// An interactive shell: `sh` (bash when the image has it) instead of
    /// the entrypoint, stdin open, a terminal when `tty`.
    pub shell: bool,
    pub tty: bool,
}

/// The container-creation body (`POST /containers/create`) for `spec`,
/// and a warning per part of the env a local container does not get.
/// Plain `vars` are in the image already (`ENV`); runtime secrets are
/// added as `NAME=VALUE`; `host:` volumes are bind mounts (read-only when
/// the volume is); other volumes (S3, PVC, NFS) are left out with a
/// warning; ports are published on the same host port; the CPU and memory
/// limits become `NanoCpus` and `Memory`; a GPU request or limit becomes
/// one device request `{"Count": N, "Capabilities": [["gpu"]]}` (what
/// `docker run --gpus N` sends; the engine's GPU support picks the driver).
pub fn container_body(spec: &EnvSpec, r: &RunInputs<'_>) -> (ContainerCreateBody, Vec<String>) {
    let mut warnings = Vec::new();
    let env: Vec<String> = spec
        .vars
        .iter()
        .filter(|(_, v)| matches!(v, VarValue::Secret(_)))
        .filter_map(|(k, _)| {
            r.secrets
                .iter()
                .find(|(n, _)| **n == **k)
                .map(|(n, v)| format!("{n}={v}"))
        })
        .collect();
    let mut mounts = Vec::new();
    for (i, v) in spec.volumes.iter().enumerate() {
        match v.source.strip_prefix("host:") {
            Some(p) => {
                let p = p.trim_start_matches("./");
                let source = if p.is_empty() || p == "." {
                    r.root.to_path_buf()
                } else {
                    r.root.join(p)
                };
                mounts.push(Mount {
                    target: Some(v.mount.to_string()),
                    source: Some(source.to_string_lossy().into_owned()),
                    typ: Some(MountType::BIND),
                    read_only: Some(v.mode == VolumeMode::ReadOnly),
                    ..Default::default()
                });
            }
            None => warnings.push(format!(
                "`volumes[{i}]` ({} at {}) is not mounted: a local container gets `host:` volumes only (the k8s target mounts the others)",
                v.source, v.mount
            )),
        }
    }
    let mut port_bindings = HashMap::new();
    let mut exposed = Vec::new();
    for p in &spec.ports {
        let key = format!("{p}/tcp");
        exposed.push(key.clone());
        port_bindings.insert(
            key,
            Some(vec![PortBinding {
                host_ip: None,
                host_port: Some(p.to_string()),
            }]),
        );
    }
    let resources = spec.resources.as_ref();
    let limits = resources.and_then(|x| x.limits.as_ref());
    let gpus = resources.and_then(|x| x.gpu()).map_or(0, |g| g.count);
    let device_requests = (gpus > 0).then(|| {
        vec![DeviceRequest {
            driver: Some(String::new()),
            count: Some(i64::from(gpus)),
            device_ids: None,
            capabilities: Some(vec![vec!["gpu".to_string()]]),
            options: Some(HashMap::new()),
        }]
    });
    let host_config = HostConfig {
        mounts: (!mounts.is_empty()).then_some(mounts),
        port_bindings: (!port_bindings.is_empty()).then_some(port_bindings),
        nano_cpus: limits
            .and_then(|l| l.cpu)
            .map(|m| i64::try_from(m.saturating_mul(1_000_000)).unwrap_or(i64::MAX)),
        memory: limits
            .and_then(|l| l.memory)
            .map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
        device_requests,
        ..Default::default()
    };
    let labels: HashMap<String, String> = r.labels.iter().cloned().collect();
    let (entrypoint, cmd) = if r.shell {
        (
            Some(vec![
                "/bin/sh".to_string(),
                "-c".into(),
                "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi".into(),
            ]),
            Some(Vec::new()),
        )
    } else if r.command.is_empty() {
        (None, None)
    } else {
        (None, Some(r.command.to_vec()))
    };
    let body = ContainerCreateBody {
        image: Some(r.image.to_string()),
        env: (!env.is_empty()).then_some(env),
        entrypoint,
        cmd,
        labels: Some(labels),
        exposed_ports: (!exposed.is_empty()).then_some(exposed),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        attach_stdin: Some(r.shell),
        open_stdin: Some(r.shell),
        stdin_once: Some(r.shell),
        tty: Some(r.shell && r.tty),
        host_config: Some(host_config),
        ..Default::default()
    };
    (body, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_at_the_tag() {
        assert_eq!(split_reference("bert:0123"), ("bert", "0123"));
        assert_eq!(
            split_reference("127.0.0.1:5000/team/bert:0123"),
            ("127.0.0.1:5000/team/bert", "0123")
        );
        assert_eq!(
            split_reference("127.0.0.1:5000/team/bert"),
            ("127.0.0.1:5000/team/bert", "latest")
        );
    }

    #[test]
    fn digests_are_read_from_push_status_lines() {
        let d = "a".repeat(64);
        assert_eq!(
            digest_in(&format!("0123: digest: sha256:{d} size: 1234")),
            Some(format!("sha256:{d}"))
        );
        assert_eq!(digest_in("Pushing layer"), None);
        assert_eq!(digest_in("x: digest: sha256:abc size: 1"), None);
    }

    /// The creation body sclc sends for an env with everything a local
    /// container gets (and a volume it does not): GPUs as a device
    /// request, never a `--gpus` string.
    #[test]
    fn container_body_has_device_requests_mounts_ports_limits_and_secrets() {
        let spec: EnvSpec = serde_json::from_value(serde_json::json!({
            "base": {"ref": "debian:12"},
            "ports": [8888],
            "resources": {
                "requests": {"cpu": 2000, "memory": 4294967296u64, "gpu": {"count": 2}},
                "limits": {"cpu": 1500, "memory": 8589934592u64}
            },
            "vars": {
                "PLAIN": "in the image already",
                "HF_TOKEN": {"secret": "hf", "key": "token"}
            },
            "volumes": [
                {"name": "code", "source": "host:./src", "mount": "/workspace/src", "mode": "read_write"},
                {"name": "data", "source": "host:data", "mount": "/data", "mode": "read_only"},
                {"name": "s3", "source": "s3://bucket/x", "mount": "/s3", "mode": "read_only"}
            ]
        }))
        .unwrap();
        let (body, warnings) = container_body(
            &spec,
            &RunInputs {
                image: "app:0123456789abcdef",
                root: Path::new("/work/project"),
                secrets: &[("HF_TOKEN".into(), "hf_value".into())],
                labels: &[("dev.scl.env".into(), "app".into())],
                command: &[],
                shell: false,
                tty: false,
            },
        );
        let json = serde_json::to_value(&body).unwrap();
        insta::assert_json_snapshot!(json);
        assert_eq!(
            json["HostConfig"]["DeviceRequests"],
            serde_json::json!([{"Driver": "", "Count": 2, "Capabilities": [["gpu"]], "Options": {}}])
        );
        assert_eq!(
            warnings,
            ["`volumes[2]` (s3://bucket/x at /s3) is not mounted: a local container gets `host:` volumes only (the k8s target mounts the others)"]
        );
        let (shell, _) = container_body(
            &spec,
            &RunInputs {
                image: "app:0123456789abcdef",
                root: Path::new("/work/project"),
                secrets: &[],
                labels: &[],
                command: &[],
                shell: true,
                tty: true,
            },
        );
        let shell = serde_json::to_value(&shell).unwrap();
        assert_eq!(shell["Tty"], true);
        assert_eq!(shell["OpenStdin"], true);
        assert_eq!(shell["Entrypoint"][0], "/bin/sh");
        assert!(
            shell.get("Env").is_none(),
            "a missing secret is not sent empty"
        );
    }

    #[test]
    fn podman_secrets_are_a_json_list_in_the_query() {
        assert_eq!(
            podman_secrets_param(&[("pypi.netrc".into(), ".sclc-secret-0".into())]),
            "secrets=%5B%22id%3Dpypi.netrc%2Csrc%3D.sclc-secret-0%22%5D"
        );
    }
}
