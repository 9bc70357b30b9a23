//! What the engine commands (`image build`, `run`, `shell`, `down`,
//! `submit`, `status`, `logs`, `delete`, `up`) share: load and check the
//! file, pick the envs, lower them for the target the engine reads, and
//! print the findings as `sclc build` does. Nothing reaches an engine from
//! a file with errors.

use crate::commands::{load_envs, merge_no_base, print_diagnostics, Loaded, MessageFormat};
use scl_diag::Diagnostic;
use scl_ide::{Analysis, AnalysisHost, FileId, LowerOptions, Target};
use std::path::{Path, PathBuf};

/// The arguments every engine command takes to name what it works on:
/// the file, the env and the `--set` flags.
#[derive(clap::Args, Debug)]
pub(crate) struct Source {
    /// The `.env.scl` file.
    pub(crate) file: PathBuf,
    /// The env (needed when the file has several).
    #[arg(long)]
    pub(crate) env: Option<String>,
    /// Override a param: `NAME=VALUE`, or `ALIAS.NAME=VALUE` for a module imported as ALIAS.
    #[arg(long = "set", value_name = "K=V")]
    pub(crate) set: Vec<String>,
}

/// A checked file, the envs a command works on and what the target made
/// of each.
pub(crate) struct Prepared {
    /// Kept alive with the snapshot `a` (the database it reads).
    pub(crate) _host: AnalysisHost,
    pub(crate) a: Analysis,
    pub(crate) file: FileId,
    /// Per env (in source order; envs without `base` and services left
    /// out unless asked for by `--env`), the lowered artifacts.
    pub(crate) envs: Vec<(String, scl_ide::Lowered)>,
    /// The options the envs were lowered with (the image references the
    /// artifacts name follow from them: [`Analysis::lower_cx`]).
    pub(crate) options: LowerOptions,
}

/// Loads `file`, applies `set`, checks it, lowers the envs `env` selects
/// (every env that is not a template and has something to build or run,
/// when `None`) for `target`, and prints the diagnostics. `Err(exit code)`:
/// 2 for a usage error (no such file), 1 when the file or the lowering has
/// errors.
pub(crate) fn prepare(
    file: &Path,
    env: Option<&str>,
    set: &[String],
    stdlib: Option<PathBuf>,
    fmt: MessageFormat,
    target: Target,
    options: LowerOptions,
) -> Result<Prepared, i32> {
    let Loaded {
        host,
        a,
        file: f,
        mut diags,
        mut envs,
    } = load_envs(file, env, set, stdlib)?;
    if diags.iter().any(Diagnostic::is_error) {
        print_diagnostics(&a, &diags, fmt);
        return Err(1);
    }
    if env.is_none() {
        crate::commands::drop_mixins(&a, f, &mut envs);
    }
    let lowering = a.lower_with(f, &envs, target, &options);
    if lowering.incomplete {
        print_diagnostics(&a, &diags, fmt);
        return Err(1);
    }
    for d in lowering.diagnostics {
        // The Docker target's "set at run time" notes (W0004 on
        // `resources`): the engine commands apply requests and limits
        // themselves (`sclc run`), and an image never holds them.
        let given = target == Target::DOCKER
            && d.code == "W0004"
            && d.message.starts_with("docker: `resources`");
        if !given && !diags.contains(&d) {
            diags.push(d);
        }
    }
    merge_no_base(&mut diags);
    print_diagnostics(&a, &diags, fmt);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(1);
    }
    Ok(Prepared {
        _host: host,
        a,
        file: f,
        envs: lowering.outputs,
        options,
    })
}

impl Prepared {
    /// The one env a command works on: the only one selected, else a
    /// usage error (exit 2) naming them and `--env`.
    pub(crate) fn one_env(&self, command: &str) -> Result<&(String, scl_ide::Lowered), i32> {
        match self.envs.as_slice() {
            [one] => Ok(one),
            [] => Err(crate::commands::usage_error(&format!(
                "`sclc {command}`: the file has no env with an image to run (set `base` in one)"
            ))),
            many => {
                let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
                Err(crate::commands::usage_error(&format!(
                    "`sclc {command}` works on one env and the file has {}: {}; choose one with `--env NAME`",
                    names.len(),
                    names.join(", ")
                )))
            }
        }
    }

    /// The folder of the source file (where `scl.lock` and `.venv` go).
    pub(crate) fn source_dir(&self) -> PathBuf {
        let path = self.a.path(self.file);
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

/// Prints an engine's failure as one line and returns exit code 3.
pub(crate) fn engine_failed(e: &scl_engines::EngineError) -> i32 {
    eprintln!("error: {e}");
    3
}
