//! `sclc submit`, `status`, `logs`, `delete`: Kubernetes through
//! `scl_engines::kube`.

use crate::commands::MessageFormat;
use clap::Args;
use std::path::PathBuf;

/// `sclc submit FILE`.
#[derive(Args, Debug)]
pub(crate) struct SubmitArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
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
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
}

/// `sclc status|delete FILE`.
#[derive(Args, Debug)]
pub(crate) struct JobArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
    #[arg(long, short = 'n')]
    pub(crate) namespace: Option<String>,
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
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

pub(crate) fn submit(args: SubmitArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn status(args: JobArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn logs(args: LogsArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn delete(args: JobArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}
