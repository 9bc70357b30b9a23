//! `sclc image build`, `run`, `shell`, `down`: the Docker Engine API
//! (Docker, or Podman's compatible service) through `scl_engines::docker`.
//!
//! Every image is built from the Dockerfile `sclc build --target docker`
//! writes (lowered again here, not read from an output folder), with the
//! build context `scl_engines::context` makes, and tagged
//! `<repository>:<tag>` with the tag the lowered Kubernetes and compose
//! files name (`scl_backends::LowerCx::image`). Each build is recorded in
//! `scl.lock` beside the source (`scl_engines::lock`).
//!
//! Exit codes: 0, 1 (the file has errors), 2 (usage: a missing secret, a
//! bad flag), 3 (the engine failed: no engine, a failed build or push);
//! `run` exits with the container's status.

use crate::commands::{check_image_repo, usage_error, MessageFormat};
use crate::prepare::{engine_failed, prepare, Prepared};
use clap::Args;
use scl_engines::docker::{self, Engine};
use scl_engines::{context, lock, EngineError};
use scl_ide::ir::{EnvSpec, VarValue};
use scl_ide::{LowerOptions, Target};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `sclc image build FILE`.
#[derive(Args, Debug)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub(crate) src: crate::prepare::Source,
    /// The repository of the images (`127.0.0.1:5000/team/bert`; default:
    /// the env's name). The tag is always made by sclc from the IR and the
    /// build context.
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    /// One more tag for each built image (`latest`, `v1`).
    #[arg(long, value_name = "TAG")]
    pub(crate) tag: Vec<String>,
    /// Push the image to the registry its repository names, and record the
    /// pushed digest in `scl.lock`.
    #[arg(long)]
    pub(crate) push: bool,
}

/// What `run` and `shell` take to make a container.
#[derive(Args, Debug)]
pub(crate) struct ContainerArgs {
    #[command(flatten)]
    pub(crate) src: crate::prepare::Source,
    /// As for `image build`: the repository of the image.
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    /// A file of `NAME=VALUE` lines (as `docker run --env-file` reads) with
    /// the values of the env's runtime secrets; a variable set in the
    /// environment wins.
    #[arg(long, value_name = "FILE")]
    pub(crate) env_file: Option<PathBuf>,
}

/// `sclc run FILE [-- COMMAND...]`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) container: ContainerArgs,
    /// Start the container and return; `sclc down` stops and removes it.
    #[arg(long, short = 'd')]
    pub(crate) detach: bool,
    /// The command to run instead of the env's `command`.
    #[arg(last = true)]
    pub(crate) command: Vec<String>,
}

/// `sclc shell FILE`.
#[derive(Args, Debug)]
pub(crate) struct ShellArgs {
    #[command(flatten)]
    pub(crate) container: ContainerArgs,
}

/// `sclc down FILE`.
#[derive(Args, Debug)]
pub(crate) struct DownArgs {
    /// The `.env.scl` file.
    pub(crate) file: PathBuf,
    /// Only this env's containers (default: every env of the file).
    #[arg(long)]
    pub(crate) env: Option<String>,
}

/// One image to build: an env's, or one of its services'.
struct Image {
    env: String,
    service: Option<String>,
    spec: Arc<EnvSpec>,
    reference: String,
    dockerfile: String,
}

/// The images of the prepared envs (each env with a `base`, then each of
/// its services with one), with their references and Dockerfiles.
fn images(p: &Prepared) -> Vec<Image> {
    let mut out = Vec::new();
    for (env, lowered) in &p.envs {
        let Some((spec, cx)) = p.a.lower_cx(p.file, env, &p.options) else {
            continue;
        };
        if spec.base.is_some() {
            if let Some(d) = lowered.artifact("Dockerfile") {
                out.push(Image {
                    env: env.clone(),
                    service: None,
                    reference: cx.image(&spec, None),
                    spec: spec.clone(),
                    dockerfile: d.contents.clone(),
                });
            }
        }
        for (name, s) in &spec.services {
            if s.base.is_none() {
                continue;
            }
            if let Some(d) = lowered.artifact(&format!("{name}/Dockerfile")) {
                out.push(Image {
                    env: env.clone(),
                    service: Some(name.clone()),
                    reference: cx.image(s, Some(name)),
                    spec: s.clone(),
                    dockerfile: d.contents.clone(),
                });
            }
        }
    }
    out
}

/// The build secrets of `spec` as `(id, environment variable)`, as the
/// printed `docker build --secret id=ID,env=VAR` lines name them.
fn build_secret_vars(spec: &EnvSpec) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in scl_backends::plan::build_secrets(spec) {
        if let Some(id) = scl_backends::plan::secret_id(r) {
            if !out.iter().any(|(i, _)| *i == id) {
                let var = scl_backends::plan::secret_env_name(&id);
                out.push((id, var));
            }
        }
    }
    out
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts")
}

/// Shows a build's or a push's output: on a terminal, a spinner with the
/// latest line (the whole output is printed only if it fails); elsewhere
/// (CI logs, pipes), every line as it comes.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    tail: std::collections::VecDeque<String>,
}

impl Progress {
    fn new(what: &str) -> Progress {
        // The line first, whole; the spinner below it has the width for
        // the current step.
        eprintln!("{what}");
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {elapsed:>4} {wide_msg}")
                    .expect("the template parses"),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        });
        Progress {
            bar,
            tail: std::collections::VecDeque::new(),
        }
    }

    fn line(&mut self, l: &str) {
        match &self.bar {
            Some(b) => {
                if !l.trim().is_empty() {
                    b.set_message(l.trim().to_string());
                }
                if self.tail.len() == 40 {
                    self.tail.pop_front();
                }
                self.tail.push_back(l.to_string());
            }
            None => eprintln!("  {l}"),
        }
    }

    /// Ends the display; after a failure, prints the last lines kept.
    fn finish(self, failed: bool) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
            if failed {
                for l in &self.tail {
                    eprintln!("  {l}");
                }
            }
        }
    }
}

/// Builds `img` with the build secrets' `(id, value)`s (and tags it
/// `extra` too, and pushes it when `push`), and records it in the lock at
/// `lock_at` (the lock's path, the source's name in it) when given. Prints
/// what it did to stdout (`to_stdout`) or stderr.
async fn build_one(
    engine: &Engine,
    root: &Path,
    img: &Image,
    secrets: &[(String, String)],
    (extra, push): (&[String], bool),
    lock_at: Option<(&Path, &str)>,
    to_stdout: bool,
) -> Result<String, EngineError> {
    // What was built goes to stdout for `image build`; for `run`, whose
    // stdout is the container's, to stderr.
    let report = |line: String| {
        if to_stdout {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    };
    let files = context::files(root, &img.spec)?;
    let mut extras = vec![context::Extra {
        rel: context::DOCKERFILE_PATH.to_string(),
        bytes: img.dockerfile.as_bytes(),
        mode: 0o644,
    }];
    let mut ids = Vec::new();
    for (i, (id, value)) in secrets.iter().enumerate() {
        // At the top of the archive: Podman moves the file to the folder
        // above the context before the build, which has no subfolders.
        let rel = format!(".sclc-secret-{i}");
        extras.push(context::Extra {
            rel: rel.clone(),
            bytes: value.as_bytes(),
            mode: 0o600,
        });
        ids.push((id.clone(), rel));
    }
    let tar = context::archive(&files, &extras)?;
    let what = format!(
        "building {} ({} file{}, {} KiB of context)",
        img.reference,
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        tar.len().div_ceil(1024)
    );
    let mut progress = Progress::new(&what);
    let started = std::time::Instant::now();
    let built = engine
        .build(
            docker::Build {
                context: tar,
                reference: img.reference.clone(),
                secrets: ids,
            },
            &mut |l| progress.line(l),
        )
        .await;
    progress.finish(built.is_err());
    let id = built?;
    report(format!(
        "built {} ({}) in {:.1} s",
        img.reference,
        docker::short(&id),
        started.elapsed().as_secs_f64()
    ));
    let (repo, _) = docker::split_reference(&img.reference);
    for t in extra {
        let target = format!("{repo}:{t}");
        engine.tag(&img.reference, &target).await?;
        report(format!("tagged {target}"));
    }
    let mut digest = None;
    if push {
        let mut progress = Progress::new(&format!("pushing {}", img.reference));
        let pushed = engine.push(&img.reference, &mut |l| progress.line(l)).await;
        progress.finish(pushed.is_err());
        let d = pushed?;
        report(format!("pushed {repo}@{d}"));
        for t in extra {
            let also = format!("{repo}:{t}");
            let d = engine.push(&also, &mut |_| {}).await?;
            report(format!("pushed {also} ({d})"));
        }
        digest = Some(format!("{repo}@{d}"));
    }
    let Some((lock_path, source_name)) = lock_at else {
        return Ok(id);
    };
    lock::Lock::update(lock_path, |l| {
        l.upsert(lock::Entry {
            file: source_name.to_string(),
            env: img.env.clone(),
            service: img.service.clone(),
            reference: img.reference.clone(),
            tag: lock::tag_of(&img.reference).to_string(),
            id: id.clone(),
            digest,
        })
    })?;
    Ok(id)
}

/// The values of `vars` (`(name, environment variable)`) from the
/// environment, then from `env_file`; a usage error naming every missing
/// one (what it is for comes from `what`; `env_file_flag`: whether the
/// command takes `--env-file`, to suggest it).
fn read_values(
    vars: &[(String, String)],
    env_file: Option<&Path>,
    env_file_flag: bool,
    what: &str,
) -> Result<Vec<(String, String)>, i32> {
    let file_values: Vec<(String, String)> = match env_file {
        None => Vec::new(),
        Some(f) => match std::fs::read_to_string(f) {
            Ok(text) => text
                .lines()
                .map(str::trim_start)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .collect(),
            Err(e) => {
                return Err(usage_error(&format!(
                    "cannot read --env-file {}: {e}",
                    f.display()
                )))
            }
        },
    };
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (name, var) in vars {
        let v = std::env::var(var).ok().or_else(|| {
            file_values
                .iter()
                .find(|(k, _)| k == var)
                .map(|(_, v)| v.clone())
        });
        match v {
            Some(v) => out.push((name.clone(), v)),
            None => missing.push(var.as_str()),
        }
    }
    if !missing.is_empty() {
        return Err(usage_error(&format!(
            "{what}: set {} in the environment{}",
            missing.join(", "),
            match (env_file.is_some(), env_file_flag) {
                (true, _) => " or in --env-file",
                (false, true) => " (or give them in a file with --env-file)",
                (false, false) => "",
            }
        )));
    }
    Ok(out)
}

fn options(image_repo: Option<String>) -> Result<LowerOptions, i32> {
    if let Some(r) = &image_repo {
        if let Err(why) = check_image_repo(r) {
            return Err(usage_error(&format!("--image-repo {r:?} {why}")));
        }
    }
    Ok(LowerOptions {
        image_repo,
        host_root: None,
    })
}

/// The lock file and the source's name in it.
fn lock_of(p: &Prepared) -> (PathBuf, String) {
    let path = p.a.path(p.file);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (lock::path_in(&p.source_dir()), name)
}

pub(crate) fn image_build(args: BuildArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let options = match options(args.image_repo) {
        Ok(o) => o,
        Err(c) => return c,
    };
    for t in &args.tag {
        let ok = !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return usage_error(&format!(
                "--tag {t:?} is not a tag (`[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}`: `latest`, `v1`)"
            ));
        }
    }
    let p = match prepare(
        &args.src.file,
        args.src.env.as_deref(),
        &args.src.set,
        stdlib,
        fmt,
        Target::DOCKER,
        options,
    ) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let images = images(&p);
    if images.is_empty() {
        return usage_error("there is no image to build: no env of the file has a `base`");
    }
    if !args.tag.is_empty() {
        let repos: Vec<&str> = images
            .iter()
            .map(|i| docker::split_reference(&i.reference).0)
            .collect();
        if let Some(r) = repos
            .iter()
            .enumerate()
            .find_map(|(k, r)| repos[..k].contains(r).then_some(r))
        {
            return usage_error(&format!(
                "--tag: several images of the file are in repository {r}, so the tag would name each in turn: build one env with `--env NAME`"
            ));
        }
    }
    let mut secrets = Vec::new();
    for img in &images {
        let vars = build_secret_vars(&img.spec);
        let what = format!("the image of env `{}` needs build secrets", img.env);
        match read_values(&vars, None, false, &what) {
            Ok(v) => secrets.push(v),
            Err(c) => return c,
        }
    }
    let root = p.a.root();
    let (lock_path, source_name) = lock_of(&p);
    let overridden = !args.src.set.is_empty();
    // A lock that cannot be read is said before anything is built.
    if let Err(e) = lock::Lock::read(&lock_path) {
        eprintln!("error: {e}");
        return 1;
    }
    runtime().block_on(async {
        let engine = match docker::connect().await {
            Ok(e) => e,
            Err(e) => return engine_failed(&e),
        };
        eprintln!("engine: {}", engine.describe());
        for (img, secrets) in images.iter().zip(&secrets) {
            if let Err(e) = build_one(
                &engine,
                &root,
                img,
                secrets,
                (&args.tag, args.push),
                (!overridden).then_some((lock_path.as_path(), source_name.as_str())),
                true,
            )
            .await
            {
                return engine_failed(&e);
            }
        }
        if overridden {
            println!(
                "not recorded in {}: built with --set, the images are not those of the file as it is",
                lock::FILE_NAME
            );
            return 0;
        }
        println!(
            "recorded in {}",
            crate::commands::shown_path(&std::env::current_dir().unwrap_or_default(), &lock_path)
        );
        0
    })
}

pub(crate) fn run(args: RunArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    start(
        &args.container,
        (&args.command, args.detach, false),
        fmt,
        stdlib,
    )
}

pub(crate) fn shell(args: ShellArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    start(&args.container, (&[], false, true), fmt, stdlib)
}

/// Makes sure every `host:` volume of `spec` has its folder under `root`
/// before a container mounts it: a missing folder of a read-write volume is
/// made (by this user, so it is not left to the engine to make as root); a
/// missing one of a read-only volume is a usage error (exit 2), since
/// nothing could be in it.
fn host_folders(spec: &EnvSpec, root: &Path) -> Result<(), i32> {
    for (i, v) in spec.volumes.iter().enumerate() {
        let Some(rel) = v.source.strip_prefix("host:") else {
            continue;
        };
        let rel = rel.trim_start_matches("./");
        let path = if rel.is_empty() || rel == "." {
            root.to_path_buf()
        } else {
            root.join(rel)
        };
        if path.exists() {
            continue;
        }
        if v.mode == scl_ide::ir::VolumeMode::ReadOnly {
            return Err(usage_error(&format!(
                "`volumes[{i}]` mounts {} read-only at {}, and it does not exist",
                path.display(),
                v.mount
            )));
        }
        if let Err(e) = std::fs::create_dir_all(&path) {
            return Err(usage_error(&format!(
                "`volumes[{i}]`: cannot make {}: {e}",
                path.display()
            )));
        }
        eprintln!(
            "note: made {} for `volumes[{i}]` (mounted at {})",
            path.display(),
            v.mount
        );
    }
    Ok(())
}

/// The labels every container sclc starts for env `env` of `source` has.
fn labels(source: &Path, env: Option<&str>) -> Vec<(String, String)> {
    let mut v = vec![(
        "dev.scl.source".to_string(),
        source.to_string_lossy().into_owned(),
    )];
    if let Some(e) = env {
        v.push(("dev.scl.env".into(), e.to_string()));
    }
    v
}

/// `run` (`shell` false) or `shell`: the container of `c`'s env, with
/// `command` for the env's command, detached or not.
fn start(
    c: &ContainerArgs,
    (command_words, detach, shell): (&[String], bool, bool),
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    let command = if shell { "shell" } else { "run" };
    let options = match options(c.image_repo.clone()) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let p = match prepare(
        &c.src.file,
        c.src.env.as_deref(),
        &c.src.set,
        stdlib,
        fmt,
        Target::DOCKER,
        options,
    ) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let env = match p.one_env(command) {
        Ok((name, _)) => name.clone(),
        Err(c) => return c,
    };
    let Some(img) = images(&p)
        .into_iter()
        .find(|i| i.env == env && i.service.is_none())
    else {
        return usage_error(&format!(
            "env `{env}` has no `base`, so there is no image to {command}: an env of services runs with `sclc build --target compose` and `docker compose up`"
        ));
    };
    if !img.spec.services.is_empty() {
        eprintln!(
            "warning: env `{env}` has services; `sclc {command}` starts its own image only (its services run with the compose target)"
        );
    }
    let secret_vars: Vec<(String, String)> = img
        .spec
        .vars
        .iter()
        .filter(|(_, v)| matches!(v, VarValue::Secret(_)))
        .map(|(k, _)| (k.to_string(), k.to_string()))
        .collect();
    let secrets = match read_values(
        &secret_vars,
        c.env_file.as_deref(),
        true,
        &format!("env `{env}` has runtime secrets"),
    ) {
        Ok(v) => v,
        Err(c) => return c,
    };
    let build_vars = build_secret_vars(&img.spec);
    let root = p.a.root();
    if let Err(c) = host_folders(&img.spec, &root) {
        return c;
    }
    // The canonical path, as `sclc down` finds it (through a link too).
    let source = p.a.path(p.file);
    let source = std::fs::canonicalize(&source).unwrap_or(source);
    let labels = labels(&source, Some(&env));
    runtime().block_on(async {
        let engine = match docker::connect().await {
            Ok(e) => e,
            Err(e) => return engine_failed(&e),
        };
        match engine.image_id(&img.reference).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                eprintln!("{} is not built yet: building it", img.reference);
                let build_secrets = match read_values(
                    &build_vars,
                    c.env_file.as_deref(),
                    true,
                    &format!("the image of env `{env}` needs build secrets"),
                ) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                if let Err(e) = build_one(
                    &engine,
                    &root,
                    &img,
                    &build_secrets,
                    (&[], false),
                    // Only `sclc image build` records images in scl.lock.
                    None,
                    false,
                )
                .await
                {
                    return engine_failed(&e);
                }
            }
            Err(e) => return engine_failed(&e),
        }
        let tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        let (body, warnings) = docker::container_body(
            &img.spec,
            &docker::RunInputs {
                image: &img.reference,
                root: &root,
                secrets: &secrets,
                labels: &labels,
                command: command_words,
                shell,
                tty,
            },
        );
        for w in warnings {
            eprintln!("warning: {w}");
        }
        match engine.run(body, detach).await {
            Ok(docker::Ran::Exited(code)) => i32::try_from(code).unwrap_or(1),
            Ok(docker::Ran::Detached(id)) => {
                println!(
                    "started {} from {} (stop it with `sclc down`)",
                    docker::short(&id),
                    img.reference
                );
                0
            }
            Err(e) if docker::is_missing_command(&e.0) => {
                eprintln!("error: {e}");
                127
            }
            Err(e) => engine_failed(&e),
        }
    })
}

pub(crate) fn down(args: DownArgs, _fmt: MessageFormat, _stdlib: Option<PathBuf>) -> i32 {
    let source = match std::fs::canonicalize(&args.file) {
        Ok(p) if p.is_file() => p,
        _ => return usage_error(&format!("no such file: {}", args.file.display())),
    };
    let labels = labels(&source, args.env.as_deref());
    runtime().block_on(async {
        let engine = match docker::connect().await {
            Ok(e) => e,
            Err(e) => return engine_failed(&e),
        };
        match engine.remove_labelled(&labels).await {
            Ok(removed) if removed.is_empty() => {
                println!("no containers of {} to remove", args.file.display());
                0
            }
            Ok(removed) => {
                for id in removed {
                    println!("removed {id}");
                }
                0
            }
            Err(e) => engine_failed(&e),
        }
    })
}

/// `sclc check --locked`: E0601 at the name of every env (of `files`)
/// whose image, or one of whose services' images, has no entry with its
/// current tag in the `scl.lock` beside its file; at the file's start when
/// that lock cannot be read. The tag does not depend on `--image-repo`, so
/// an image built for any repository pins the env.
pub(crate) fn locked_diagnostics(
    a: &scl_ide::Analysis,
    files: &[scl_ide::FileId],
) -> Vec<scl_diag::Diagnostic> {
    let mut out = Vec::new();
    for &f in files {
        let path = a.path(f);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock_path = lock::path_in(&dir);
        let error = |span: scl_ide::Span, message: String, help: String| {
            let mut d = scl_diag::Diagnostic::error("E0601", span, message).with_help(help);
            d.at.file = a.key(f);
            d
        };
        let l = match lock::Lock::read(&lock_path) {
            Ok(l) => l,
            Err(e) => {
                out.push(error(
                    scl_ide::Span::default(),
                    e.to_string(),
                    format!(
                        "remove {} and build the images again with `sclc image build {name}`",
                        lock::FILE_NAME
                    ),
                ));
                continue;
            }
        };
        let symbols = a.symbols(f);
        let Ok(envs) = a.select_envs(f, None) else {
            continue;
        };
        for env in envs {
            let Some((spec, cx)) = a.lower_cx(f, &env, &LowerOptions::default()) else {
                continue;
            };
            let mut wanted: Vec<(Option<&str>, String)> = Vec::new();
            if spec.base.is_some() {
                wanted.push((None, cx.image(&spec, None)));
            }
            for (s, sub) in &spec.services {
                if sub.base.is_some() {
                    wanted.push((Some(s), cx.image(sub, Some(s))));
                }
            }
            let span = symbols
                .iter()
                .find(|s| s.name == env)
                .map_or_else(scl_ide::Span::default, |s| s.name_span);
            for (service, reference) in wanted {
                let tag = lock::tag_of(&reference);
                let image = match service {
                    Some(s) => format!("the image of service `{s}` of env `{env}`"),
                    None => format!("the image of env `{env}`"),
                };
                let message = match l.find(&name, &env, service) {
                    Some(e) if e.tag == tag => continue,
                    Some(e) => format!(
                        "{image} is not pinned by {}: it records tag {}, and the env and the files its image copies now give tag {tag}",
                        lock::FILE_NAME, e.tag
                    ),
                    None => format!(
                        "{image} is not pinned by {}: no image of it was built (tag {tag})",
                        lock::FILE_NAME
                    ),
                };
                out.push(error(
                    span,
                    message,
                    format!(
                        "build it with `sclc image build {name} --env {env}` and commit {}",
                        lock::FILE_NAME
                    ),
                ));
            }
        }
    }
    out
}

/// The repository env `env`'s image was pushed to, by the `scl.lock`
/// beside the file: the entry of the env (not a service) whose tag is the
/// env's tag now and that has a digest. `sclc submit` runs that image when
/// no `--image-repo` is given, so that a pushed image is the one the pods
/// pull.
pub(crate) fn pushed_repo(p: &Prepared, env: &str) -> Option<String> {
    let (spec, cx) = p.a.lower_cx(p.file, env, &LowerOptions::default())?;
    let tag = lock::tag_of(&cx.image(&spec, None)).to_string();
    let (lock_path, source_name) = lock_of(p);
    let l = lock::Lock::read(&lock_path).ok()?;
    let e = l.find(&source_name, env, None)?;
    (e.tag == tag && e.digest.is_some())
        .then(|| docker::split_reference(&e.reference).0.to_string())
}
