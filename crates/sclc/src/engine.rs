//! `sclc image build`, `run`, `shell`, `down`: the Docker Engine API
//! (Docker, or Podman's compatible service) through `scl_engines::docker`.

use crate::commands::MessageFormat;
use clap::Args;
use std::path::PathBuf;

/// `sclc image build FILE`.
#[derive(Args, Debug)]
pub(crate) struct BuildArgs {
    pub(crate) file: PathBuf,
    /// Only this env (default: every env with a `base`).
    #[arg(long)]
    pub(crate) env: Option<String>,
    /// The repository of the images (`127.0.0.1:5000/team/bert`; default:
    /// the env's name). The tag is always made by sclc from the IR and the
    /// build context.
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    /// One more tag for the built image (`latest`, or a whole reference
    /// `registry.example.com/team/bert:v1`).
    #[arg(long, value_name = "TAG")]
    pub(crate) tag: Vec<String>,
    /// Push the image to the registry its repository names, and record the
    /// pushed digest in `scl.lock`.
    #[arg(long)]
    pub(crate) push: bool,
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
}

/// `sclc run FILE [-- COMMAND...]`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
    /// As for `image build`: the repository of the image.
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    /// A file of `NAME=VALUE` lines (as `docker run --env-file` reads) with
    /// the values of the env's runtime secrets; the environment is read first.
    #[arg(long, value_name = "FILE")]
    pub(crate) env_file: Option<PathBuf>,
    /// Start the container and return; `sclc down` stops and removes it.
    #[arg(long, short = 'd')]
    pub(crate) detach: bool,
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
    /// The command to run instead of the env's `command`.
    #[arg(last = true)]
    pub(crate) command: Vec<String>,
}

/// `sclc shell FILE`.
#[derive(Args, Debug)]
pub(crate) struct ShellArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
    #[arg(long, value_name = "REPO")]
    pub(crate) image_repo: Option<String>,
    #[arg(long, value_name = "FILE")]
    pub(crate) env_file: Option<PathBuf>,
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
}

/// `sclc down FILE`.
#[derive(Args, Debug)]
pub(crate) struct DownArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
}

pub(crate) fn image_build(args: BuildArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn run(args: RunArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn shell(args: ShellArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}

pub(crate) fn down(args: DownArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}
