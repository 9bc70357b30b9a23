//! `sclc up FILE --target venv`: a local virtual environment through
//! `scl_engines::venv` (uv).
//!
//! The file is loaded and checked as `sclc check` does (a venv is not a
//! lowering target: an env without `base` is fine, and no target's
//! findings apply), then the env's Python part is made into `.venv` beside
//! the source file. What a venv cannot give is printed as one `warning:`
//! line per field; the uv commands as they run; then
//! `made .venv with Python X.Y.Z: N packages`. Exit codes: 1 for errors in
//! the file, 2 for usage errors, 3 when uv is missing or fails, or the
//! declared Python is not installed.

use crate::commands::{load_envs, print_diagnostics, usage_error, Loaded, MessageFormat};
use clap::{Args, ValueEnum};
use scl_diag::Diagnostic;
use scl_engines::venv::{left_out, make, Plan, Uv};
use std::path::{Path, PathBuf};

/// What `sclc up` makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum UpTarget {
    /// `.venv` beside the source, made with uv.
    Venv,
}

/// `sclc up FILE --target venv`.
#[derive(Args, Debug)]
pub(crate) struct UpArgs {
    #[command(flatten)]
    pub(crate) src: crate::prepare::Source,
    /// What to make (`venv`: `.venv` beside the file, made with uv).
    #[arg(long, value_enum, hide_possible_values = true)]
    pub(crate) target: UpTarget,
}

pub(crate) fn up(args: UpArgs, fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
    let UpTarget::Venv = args.target;
    let Loaded {
        host: _host,
        a,
        file,
        diags,
        envs,
    } = match load_envs(
        &args.src.file,
        args.src.env.as_deref(),
        &args.src.set,
        stdlib,
    ) {
        Ok(l) => l,
        Err(code) => return code,
    };
    print_diagnostics(&a, &diags, fmt);
    if diags.iter().any(Diagnostic::is_error) {
        return 1;
    }
    // Without `--env`: the one env that is not a stack of services.
    let name = match args.src.env {
        Some(_) => match envs.as_slice() {
            [one] => one.clone(),
            _ => return 1,
        },
        None => {
            let candidates: Vec<&String> = envs
                .iter()
                .filter(|n| a.ir(file, n).is_some_and(|s| s.services.is_empty()))
                .collect();
            match candidates.as_slice() {
                [one] => (*one).clone(),
                [] => return usage_error("`sclc up`: the file has no env to make a venv from"),
                many => {
                    let names: Vec<&str> = many.iter().map(|n| n.as_str()).collect();
                    return usage_error(&format!(
                        "`sclc up` works on one env and the file has {}: {}; choose one with `--env NAME`",
                        names.len(),
                        names.join(", ")
                    ));
                }
            }
        }
    };
    let Some(spec) = a.ir(file, &name) else {
        return 1;
    };
    let dir = a
        .path(file)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // uv first: without it, the one line that says so is all there is.
    let uv = match Uv::find() {
        Ok(uv) => uv,
        Err(e) => return crate::prepare::engine_failed(&e),
    };
    for line in left_out(&spec) {
        eprintln!("{line}");
    }
    let plan = Plan::of(&spec, &a.root(), &dir);
    let mut log = |line: &str| eprintln!("{line}");
    match make(&uv, &plan, &dir, &mut log) {
        Ok(made) => {
            let kept = if made.kept {
                " (kept the existing one)"
            } else {
                ""
            };
            let n = match made.packages {
                1 => "1 package".to_string(),
                n => format!("{n} packages"),
            };
            eprintln!("made .venv with Python {}: {n}{kept}", made.python);
            0
        }
        Err(e) => crate::prepare::engine_failed(&e),
    }
}
