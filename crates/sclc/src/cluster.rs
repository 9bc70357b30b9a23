//! `sclc submit`, `status`, `logs`, `delete`: Kubernetes through
//! `scl_engines::kube`.
//!
//! Each command lowers the env for the k8s target (as `sclc build --target
//! k8s` would write `k8s.yaml`), turns that text into the objects to apply
//! ([`kube::apply_plan`], the namespace set in each) and drives the
//! current kube context on a current-thread tokio runtime.
//!
//! Exit codes: 0 done; 1 the file has errors, or `status`/`logs` found no
//! such job (or it has no pods yet); 2 a usage error (a bad `--namespace`,
//! `--image-repo` or `--host-root`, several envs without `--env`); 3 the
//! cluster failed (no kubeconfig, unreachable, credentials refused, a
//! request refused), as one line. `delete` of a job that is not there says
//! so and exits 0: the job is gone either way.

use crate::commands::MessageFormat;
use crate::prepare::{engine_failed, prepare};
use clap::Args;
use scl_engines::kube;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `sclc submit FILE`.
#[derive(Args, Debug)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    pub(crate) src: crate::prepare::Source,
    /// The namespace (default: the kube context's, else `default`).
    #[arg(long, short = 'n')]
    pub(crate) namespace: Option<String>,
    /// Print exactly what would be applied (YAML) and contact no cluster.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The repository of the image the pods run (as for `sclc build`).
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    /// The workspace root's absolute path on the nodes, for `host:` volumes.
    #[arg(long, value_name = "DIR")]
    pub(crate) host_root: Option<String>,
}

/// `sclc status|delete FILE`.
#[derive(Args, Debug)]
pub(crate) struct JobArgs {
    #[command(flatten)]
    pub(crate) src: crate::prepare::Source,
    /// The namespace (default: the kube context's, else `default`).
    #[arg(long, short = 'n')]
    pub(crate) namespace: Option<String>,
}

/// `sclc logs FILE`.
#[derive(Args, Debug)]
pub(crate) struct LogsArgs {
    #[command(flatten)]
    pub(crate) job: JobArgs,
    /// Keep printing new lines until every pod has ended.
    #[arg(long, short = 'f')]
    pub(crate) follow: bool,
}

/// `--namespace`, checked: `Err(2)` (printed) when it is not an RFC 1123
/// label.
fn checked_namespace(ns: Option<&str>) -> Result<Option<String>, i32> {
    match ns {
        Some(n) if !kube::is_namespace(n) => Err(crate::commands::usage_error(&format!(
            "--namespace {n:?} is not a namespace name (an RFC 1123 label: at most 63 characters of a-z, 0-9 and `-`, starting and ending with a letter or digit)"
        ))),
        other => Ok(other.map(String::from)),
    }
}

/// The text of the one env's `k8s.yaml` (lowered with `options`), and the
/// env's name. `Err(exit code)` after printing why.
fn k8s_yaml(
    file: &Path,
    env: Option<&str>,
    set: &[String],
    stdlib: Option<PathBuf>,
    fmt: MessageFormat,
    options: scl_ide::LowerOptions,
    command: &str,
) -> Result<String, i32> {
    let target = scl_ide::Target::from_name("k8s").expect("the k8s target is registered");
    let given_repo = options.image_repo.is_some();
    let prepared = prepare(file, env, set, stdlib, fmt, target, options)?;
    let (name, lowered) = prepared.one_env(command)?;
    let mut lowered = lowered.clone();
    if command == "submit" && !given_repo {
        // The image `sclc image build --push` pushed, by scl.lock.
        match crate::engine::pushed_repo(&prepared, name) {
            Some(repo) => {
                let options = scl_ide::LowerOptions {
                    image_repo: Some(repo.clone()),
                    ..prepared.options.clone()
                };
                let again = prepared
                    .a
                    .lower_with(prepared.file, std::slice::from_ref(name), target, &options);
                if let Some((_, l)) = again.outputs.into_iter().next() {
                    eprintln!("note: the pods run the image pushed to {repo} (scl.lock)");
                    lowered = l;
                }
            }
            None => eprintln!(
                "warning: the pods run an image named without a registry, which the nodes cannot pull unless it is on them: push it (`sclc image build {} --image-repo REGISTRY/NAME --push`), then submit again",
                file.display()
            ),
        }
    }
    match lowered.artifact(scl_backends::k8s::FILE_NAME) {
        Some(a) => Ok(a.contents.clone()),
        None => {
            eprintln!(
                "error: the k8s target writes no k8s.yaml for env `{name}` (see the warnings above), so there is nothing to submit"
            );
            Err(1)
        }
    }
}

/// Runs `f` on a new current-thread runtime; an engine failure is printed
/// (exit 3).
fn on_runtime<F: std::future::Future<Output = Result<i32, scl_engines::EngineError>>>(
    f: impl FnOnce() -> F,
) -> i32 {
    let rt = match kube::runtime() {
        Ok(rt) => rt,
        Err(e) => return engine_failed(&e),
    };
    match rt.block_on(f()) {
        Ok(code) => code,
        Err(e) => engine_failed(&e),
    }
}

/// The command line that names the same env and namespace as the one run:
/// `sclc status train.env.scl --env x -n ml`.
fn command_line(
    command: &str,
    file: &Path,
    env: Option<&str>,
    namespace: Option<&str>,
    extra: &str,
) -> String {
    let mut s = format!("sclc {command}{extra} {}", file.display());
    if let Some(e) = env {
        s.push_str(&format!(" --env {e}"));
    }
    if let Some(n) = namespace {
        s.push_str(&format!(" -n {n}"));
    }
    s
}

/// `sclc submit FILE`: every object of the env's `k8s.yaml`, applied with
/// server-side apply (field manager `sclc`, forced: `scl_engines::kube`
/// says why) in `--namespace`, else the kube context's namespace, else
/// `default`. `--dry-run` prints the objects exactly as they would be sent
/// (the same values, as YAML) and reads at most the kubeconfig, for the
/// context's namespace.
pub(crate) fn submit(args: SubmitArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let namespace = match checked_namespace(args.namespace.as_deref()) {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(r) = &args.image_repo {
        if let Err(why) = crate::commands::check_image_repo(r) {
            return crate::commands::usage_error(&format!("--image-repo {r:?} {why}"));
        }
    }
    if let Some(r) = &args.host_root {
        if let Err(why) = crate::commands::check_host_root(r) {
            return crate::commands::usage_error(&format!("--host-root {r:?} {why}"));
        }
    }
    let options = scl_ide::LowerOptions {
        image_repo: args.image_repo.clone(),
        host_root: args.host_root.clone(),
    };
    let yaml = match k8s_yaml(
        &args.src.file,
        args.src.env.as_deref(),
        &args.src.set,
        stdlib,
        fmt,
        options,
        "submit",
    ) {
        Ok(y) => y,
        Err(code) => return code,
    };
    if args.dry_run {
        let ns = namespace
            .or_else(kube::context_namespace)
            .unwrap_or_else(|| kube::DEFAULT_NAMESPACE.to_string());
        let printed = kube::apply_plan(&yaml, &ns).and_then(|plan| kube::plan_yaml(&plan));
        return match printed {
            Ok(text) => {
                print!("{text}");
                0
            }
            Err(e) => engine_failed(&e),
        };
    }
    on_runtime(|| async {
        let cluster = kube::connect().await?;
        let ns = namespace
            .clone()
            .unwrap_or_else(|| cluster.namespace.clone());
        let plan = kube::apply_plan(&yaml, &ns)?;
        kube::apply(&cluster, &plan, |o| {
            println!("applied {}", o.describe());
            let _ = std::io::stdout().flush();
        })
        .await?;
        let env = args.src.env.as_deref();
        let ns = args.namespace.as_deref();
        eprintln!(
            "hint: `{}` shows its state, `{}` its output",
            command_line("status", &args.src.file, env, ns, ""),
            command_line("logs", &args.src.file, env, ns, " --follow"),
        );
        Ok(0)
    })
}

/// What `status`, `logs` and `delete` start with: the env's job (lowered
/// for k8s with default options: the name does not depend on them) in the
/// namespace of `--namespace` or the context, and the cluster.
async fn job_in_cluster(
    yaml: &str,
    namespace: Option<String>,
) -> Result<(kube::Cluster, kube::JobRef), scl_engines::EngineError> {
    let cluster = kube::connect().await?;
    let ns = namespace.unwrap_or_else(|| cluster.namespace.clone());
    let plan = kube::apply_plan(yaml, &ns)?;
    let job = kube::job_of(&plan).ok_or_else(|| {
        scl_engines::EngineError::new("the env's k8s.yaml has no Job or PyTorchJob")
    })?;
    Ok((cluster, job))
}

/// The `k8s.yaml` and checked namespace of a `status`/`logs`/`delete`
/// command line.
fn job_args(
    args: &JobArgs,
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
    command: &str,
) -> Result<(String, Option<String>), i32> {
    let namespace = checked_namespace(args.namespace.as_deref())?;
    let yaml = k8s_yaml(
        &args.src.file,
        args.src.env.as_deref(),
        &args.src.set,
        stdlib,
        fmt,
        scl_ide::LowerOptions::default(),
        command,
    )?;
    Ok((yaml, namespace))
}

/// The line said when the cluster has no such job (exit 1).
fn no_job(job: &kube::JobRef, args: &JobArgs) -> i32 {
    eprintln!(
        "error: no {} `{}` in namespace `{}`: submit it with `{}`",
        job.kind_name(),
        job.object.name,
        job.object.namespace,
        command_line(
            "submit",
            &args.src.file,
            args.src.env.as_deref(),
            args.namespace.as_deref(),
            ""
        )
    );
    1
}

/// `sclc status FILE`: the job's counts and conditions and its pods
/// (`scl_engines::kube::status_report`); exit 1 when there is no such job.
pub(crate) fn status(args: JobArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let (yaml, namespace) = match job_args(&args, fmt, stdlib, "status") {
        Ok(x) => x,
        Err(code) => return code,
    };
    on_runtime(|| async {
        let (cluster, job) = job_in_cluster(&yaml, namespace).await?;
        Ok(match kube::status(&cluster, &job).await? {
            Some(report) => {
                print!("{report}");
                0
            }
            None => no_job(&job, &args),
        })
    })
}

/// `sclc logs FILE [--follow]`: every pod's log, each line prefixed
/// `[POD] ` when the job has several pods; exit 1 when there is no such job
/// or it has no pods yet.
pub(crate) fn logs(args: LogsArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let (yaml, namespace) = match job_args(&args.job, fmt, stdlib, "logs") {
        Ok(x) => x,
        Err(code) => return code,
    };
    on_runtime(|| async {
        let (cluster, job) = job_in_cluster(&yaml, namespace).await?;
        let mut out = std::io::stdout().lock();
        let outcome = kube::logs(
            &cluster,
            &job,
            args.follow,
            |prefix, line| {
                let _ = writeln!(out, "{prefix}{line}");
                let _ = out.flush();
            },
            |note| eprintln!("note: {note}"),
        )
        .await?;
        Ok(match outcome {
            kube::LogsOutcome::Printed => 0,
            kube::LogsOutcome::NoJob => no_job(&job, &args.job),
            kube::LogsOutcome::NoPods => {
                eprintln!(
                    "error: {} `{}` in namespace `{}` has no pods yet (see `{}`)",
                    job.kind_name(),
                    job.object.name,
                    job.object.namespace,
                    command_line(
                        "status",
                        &args.job.src.file,
                        args.job.src.env.as_deref(),
                        args.job.namespace.as_deref(),
                        ""
                    )
                );
                1
            }
        })
    })
}

/// `sclc delete FILE`: deletes the job with `propagationPolicy:
/// Background` (its pods go too). A job that is not there is a note and
/// exit 0.
pub(crate) fn delete(args: JobArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let (yaml, namespace) = match job_args(&args, fmt, stdlib, "delete") {
        Ok(x) => x,
        Err(code) => return code,
    };
    on_runtime(|| async {
        let (cluster, job) = job_in_cluster(&yaml, namespace).await?;
        if kube::delete(&cluster, &job).await? {
            println!("deleted {}", job.object.describe());
        } else {
            eprintln!(
                "note: no {} `{}` in namespace `{}`: nothing to delete",
                job.kind_name(),
                job.object.name,
                job.object.namespace
            );
        }
        Ok(0)
    })
}
