//! `sclc up FILE --target venv`: a local virtual environment through
//! `scl_engines::venv` (uv).

use crate::commands::MessageFormat;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// What `sclc up` makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum UpTarget {
    /// `.venv` beside the source, made with uv.
    Venv,
}

/// `sclc up FILE --target venv`.
#[derive(Args, Debug)]
pub(crate) struct UpArgs {
    pub(crate) file: PathBuf,
    #[arg(long)]
    pub(crate) env: Option<String>,
    #[arg(long, value_enum)]
    pub(crate) target: UpTarget,
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
}

pub(crate) fn up(args: UpArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let _ = (args, fmt, stdlib);
    crate::commands::usage_error("not yet")
}
