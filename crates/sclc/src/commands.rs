use clap::{Parser, Subcommand, ValueEnum};
use scl_diag::{render_human, render_json, Diagnostic, SourceCache};
use scl_ide::{Analysis, AnalysisHost, FileId, OpenError, OsSystem, System};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::output::write_atomically;

/// The SCL compiler: one typed description of an ML job's environment, lowered
/// to Dockerfiles, Apptainer definitions, conda environments, Kubernetes Jobs /
/// Kubeflow PyTorchJobs / TrainJobs and compose files.
#[derive(Parser, Debug)]
#[command(name = "sclc", version, about, max_term_width = 100)]
struct Cli {
    /// How to print diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = MessageFormat::Human)]
    message_format: MessageFormat,
    /// Read `std/...` modules from this folder instead of the embedded stdlib.
    #[arg(long, global = true, value_name = "DIR")]
    stdlib: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MessageFormat {
    Human,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse, resolve, type-check and evaluate every env that is not a template; print only diagnostics.
    Check {
        /// Files, or folders to search for `*.env.scl` (default: `.`).
        paths: Vec<PathBuf>,
        /// Override a param: `NAME=VALUE`, or `ALIAS.NAME=VALUE` for a module imported as ALIAS.
        #[arg(long = "set", value_name = "K=V")]
        set: Vec<String>,
        /// Also check every CUDA runtime of the envs (base image, torch
        /// wheels) against this NVIDIA driver version (`535.104.05`; what
        /// `nvidia-smi` prints on the node).
        #[arg(long, value_name = "VERSION")]
        driver: Option<String>,
        /// Also require every env's image to be pinned by `scl.lock` beside
        /// its file (E0601): built by `sclc image build` from the env and
        /// the files as they are now.
        #[arg(long)]
        locked: bool,
    },
    /// Print the canonical EnvSpec IR (JSON) of one env, or of every env keyed by name.
    Ir {
        file: PathBuf,
        /// The env to print (default: every env that is not a template).
        #[arg(long)]
        env: Option<String>,
        #[arg(long = "set", value_name = "K=V")]
        set: Vec<String>,
        /// Add, per env, where each field was set (`"provenance"`: path → env, file, line, column).
        #[arg(long)]
        provenance: bool,
    },
    /// Lower envs to a target and write them under `--out` (one folder per env).
    Build {
        file: PathBuf,
        #[arg(long)]
        env: Option<String>,
        /// The target format (`all`: every target but `trainjob`).
        #[arg(long, value_parser = target_names())]
        target: String,
        /// The repository of the images: the printed `docker build -t` tag and
        /// the image Kubernetes and compose files run
        /// (`registry.example.com/team/bert`; default: the env's name).
        #[arg(long, value_name = "REPO")]
        image_repo: Option<String>,
        /// The workspace root's absolute path on the machines that run the
        /// pods, for `host:` volumes (the `k8s` target: a hostPath volume).
        #[arg(long, value_name = "DIR")]
        host_root: Option<String>,
        /// The output folder.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[arg(long = "set", value_name = "K=V")]
        set: Vec<String>,
    },
    /// Compare two versions of an env file: the IR fields that changed (with
    /// where each is set), then a unified diff of every lowered file that changed.
    Diff {
        /// `OLD NEW`; with `--rev`, one FILE.
        #[arg(required = true, num_args = 1..=2, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Compare FILE (and what it imports and reads) at this git revision with the working tree.
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// Only this env (default: every env that is not a template).
        #[arg(long)]
        env: Option<String>,
        /// `text`, `markdown` (a pull-request comment) or `json`.
        #[arg(long, value_enum, default_value_t = crate::diff::DiffFormat::Text)]
        format: crate::diff::DiffFormat,
        /// The targets whose files are compared (`all`: every target but `trainjob`).
        #[arg(long, value_parser = target_names(), default_value = "all")]
        target: String,
        /// As for `build`: the repository of the images Kubernetes and compose files run.
        #[arg(long, value_name = "REPO")]
        image_repo: Option<String>,
        /// The workspace root's absolute path on the machines that run the
        /// pods, for `host:` volumes (the `k8s` target: a hostPath volume).
        #[arg(long, value_name = "DIR")]
        host_root: Option<String>,
        /// Override a param on both sides: `NAME=VALUE` or `ALIAS.NAME=VALUE`.
        #[arg(long = "set", value_name = "K=V")]
        set: Vec<String>,
    },
    /// Rewrite files in the canonical layout (comments kept; see the book's "Formatting" page).
    Fmt {
        /// `.env.scl` files, or folders to search for them (default: `.`), as for `check`.
        paths: Vec<PathBuf>,
        /// Write nothing; list the files that would change and exit 1 if any.
        #[arg(long)]
        check: bool,
        /// Format standard input to standard output (no PATH then).
        #[arg(long, conflicts_with = "paths")]
        stdin: bool,
    },
    /// Compare each env's requests (cores, memory, GPUs, their type and
    /// memory, the NVIDIA driver and CUDA they need) with this machine, one
    /// line per fact; exit 1 when something will not fit.
    Doctor {
        file: PathBuf,
        /// Only this env (default: every env that is not a template).
        #[arg(long)]
        env: Option<String>,
    },
    /// Build and push images through the Docker Engine API (Docker, or
    /// Podman's Docker-compatible service): see the book's "From laptop to cluster".
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    /// Run the env's image in a container (built first when the engine does
    /// not have it), with its volumes, ports, environment, GPUs and runtime
    /// secrets; exit with the command's status.
    Run(crate::engine::RunArgs),
    /// An interactive shell in a new container of the env's image (as `run`,
    /// with `bash`, else `sh`, for the command).
    Shell(crate::engine::ShellArgs),
    /// Stop and remove the containers `sclc run --detach` left for the env.
    Down(crate::engine::DownArgs),
    /// Apply the env's lowered Job (or PyTorchJob, with `distributed`) to
    /// the current kube context with server-side apply (field manager `sclc`).
    Submit(crate::cluster::SubmitArgs),
    /// The state of the env's job in the cluster: its conditions and pods.
    Status(crate::cluster::JobArgs),
    /// The logs of every pod (every replica) of the env's job.
    Logs(crate::cluster::LogsArgs),
    /// Delete the env's job (and its pods) from the cluster.
    Delete(crate::cluster::JobArgs),
    /// Make the env locally: `--target venv` creates `.venv` beside the
    /// source with uv, with the env's Python and Python packages.
    Up(crate::venv::UpArgs),
    /// Run the language server on stdin/stdout (editors start it: see the book's "Editors" page).
    Lsp {
        /// Speak over stdin/stdout (the only transport; editors' clients pass it).
        #[arg(long)]
        stdio: bool,
    },
    /// Explain a diagnostic code, with an example and the fix.
    Explain {
        /// `E0201`, `W0001`, … (`sclc explain --list` lists them all).
        code: Option<String>,
        #[arg(long)]
        list: bool,
    },
    /// Write the standard library's reference pages (Markdown) from its doc comments.
    Doc {
        /// The folder of the pages: one per module and `README.md`, the index
        /// (required: `sclc doc` writes nowhere by default; the repository's
        /// book is `--out book/src/stdlib`).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Write nothing; list the pages that differ and exit 1 if any.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Subcommand, Debug)]
enum ImageCommand {
    /// Build the env's image (and its services' images) from the lowered
    /// Dockerfile, tag it `<repository>:<hash of the IR and the build
    /// context>` and record it in `scl.lock` beside the source.
    Build(crate::engine::BuildArgs),
}

/// Why `repo` cannot be the repository of an image reference, if it
/// cannot: it must be a reference by the distribution grammar without a tag
/// or digest (lower-case path components `[a-z0-9]+` joined by `.`, `_`,
/// `__` or `-`, an optional `host[:port]/` in front), not start with `-`.
pub(crate) fn check_image_repo(repo: &str) -> Result<(), &'static str> {
    let last = repo.rsplit('/').next().unwrap_or(repo);
    if repo.is_empty() || repo.starts_with('-') {
        return Err("is not an image repository: it is empty or starts with `-`");
    }
    if repo.contains('@') || last.contains(':') {
        return Err("has a tag or digest: give the repository only (sclc makes the tag)");
    }
    if repo.chars().any(|c| c.is_ascii_uppercase())
        || !scl_backends::docker::is_image_reference(&format!("{repo}:t"))
    {
        return Err("is not an image repository (lower-case `[a-z0-9]` parts joined by `.`, `_`, `-` and `/`, optionally after `host[:port]/`)");
    }
    Ok(())
}

/// Why `dir` cannot be `--host-root`, if it cannot: it must be an absolute
/// POSIX path (the nodes' file system), without `.` or `..` components,
/// empty components or control characters.
pub(crate) fn check_host_root(dir: &str) -> Result<(), &'static str> {
    if !dir.starts_with('/') {
        return Err(
            "is not an absolute path (the workspace's folder on the nodes, `/shared/project`)",
        );
    }
    if dir.chars().any(char::is_control) {
        return Err("has a control character");
    }
    if dir.contains("//") || dir.split('/').any(|c| c == "." || c == "..") {
        return Err("is not a normalized path (no `//`, `.` or `..`)");
    }
    Ok(())
}

/// Whether `rel` (`web/Dockerfile`) is a file of a backend's layout pattern
/// (`Dockerfile`, `<service>/Dockerfile`: `<service>` is one folder).
fn layout_matches(pattern: &str, rel: &str) -> bool {
    match pattern.strip_prefix("<service>/") {
        Some(file) => rel
            .split_once('/')
            .is_some_and(|(dir, f)| !dir.is_empty() && f == file),
        None => rel == pattern,
    }
}

/// The values `--target` takes: every backend of the registry, then `all`.
fn target_names() -> clap::builder::PossibleValuesParser {
    let mut v: Vec<clap::builder::PossibleValue> = scl_ide::Target::all()
        .map(|t| clap::builder::PossibleValue::new(t.name()).help(t.backend().summary()))
        .collect();
    v.push(clap::builder::PossibleValue::new("all").help("every target above but trainjob"));
    clap::builder::PossibleValuesParser::new(v)
}

/// Runs the CLI; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let fmt = cli.message_format;
    // Relative paths, the default `.` and the paths shown all start from
    // the current folder: without one (it was removed, or cannot be read)
    // nothing can be found, so say so instead of guessing one.
    if !matches!(cli.command, Command::Explain { .. }) {
        if let Err(e) = std::env::current_dir() {
            return usage_error(&format!(
                "the current folder cannot be read ({e}): run sclc from an existing folder"
            ));
        }
    }
    // `SCL_TIMINGS=1`: the phases of this run on stderr at the end
    // (`scl_db::timings`; for profiling, not a stable format). Not with
    // JSON diagnostics (stderr is then JSON lines) nor for the language
    // server (a session, not a run).
    let timings = std::env::var_os("SCL_TIMINGS").is_some_and(|v| v == "1")
        && fmt != MessageFormat::Json
        && !matches!(cli.command, Command::Lsp { .. });
    if timings {
        scl_ide::timings::enable();
    }
    let code = run_command(cli, fmt);
    if timings {
        let mut err = std::io::stderr().lock();
        for (phase, at, took) in scl_ide::timings::take() {
            let _ = writeln!(err, "timings: {at:9.1} ms {took:9.1} ms  {phase}");
        }
    }
    code
}

/// Runs the command `cli` names; its exit code.
fn run_command(cli: Cli, fmt: MessageFormat) -> i32 {
    match cli.command {
        Command::Explain { code, list } => explain(code, list),
        Command::Doc { out, check } => doc(&out, check, cli.stdlib.as_deref()),
        Command::Lsp { stdio: _ } => scl_lsp::run_stdio(scl_lsp::Options { stdlib: cli.stdlib }),
        Command::Image {
            command: ImageCommand::Build(args),
        } => crate::engine::image_build(args, fmt, cli.stdlib),
        Command::Run(args) => crate::engine::run(args, fmt, cli.stdlib),
        Command::Shell(args) => crate::engine::shell(args, fmt, cli.stdlib),
        Command::Down(args) => crate::engine::down(args, fmt, cli.stdlib),
        Command::Submit(args) => crate::cluster::submit(args, fmt, cli.stdlib),
        Command::Status(args) => crate::cluster::status(args, fmt, cli.stdlib),
        Command::Logs(args) => crate::cluster::logs(args, fmt, cli.stdlib),
        Command::Delete(args) => crate::cluster::delete(args, fmt, cli.stdlib),
        Command::Up(args) => crate::venv::up(args, fmt, cli.stdlib),
        Command::Doctor { file, env } => {
            crate::doctor::doctor(&file, env.as_deref(), fmt, cli.stdlib)
        }
        Command::Diff {
            files,
            rev,
            env,
            format,
            target,
            image_repo,
            host_root,
            set,
        } => crate::diff::diff(crate::diff::DiffArgs {
            files,
            rev,
            env,
            format,
            target,
            image_repo,
            host_root,
            set,
            message_format: fmt,
            stdlib: cli.stdlib,
        }),
        Command::Fmt {
            paths,
            check,
            stdin,
        } => crate::fmt::fmt(&paths, check, stdin, fmt == MessageFormat::Json),
        Command::Check {
            paths,
            set,
            driver,
            locked,
        } => check(&paths, &set, driver.as_deref(), locked, fmt, cli.stdlib),
        Command::Ir {
            file,
            env,
            set,
            provenance,
        } => ir(&file, env.as_deref(), &set, provenance, fmt, cli.stdlib),
        Command::Build {
            file,
            env,
            target,
            image_repo,
            host_root,
            out,
            set,
        } => build(
            &file,
            env.as_deref(),
            BuildTo {
                target: &target,
                image_repo,
                host_root,
                out: &out,
            },
            &set,
            fmt,
            cli.stdlib,
        ),
    }
}

pub(crate) fn usage_error(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
}

/// `sclc doc` (see `doc.rs`).
fn doc(out: &Path, check: bool, stdlib: Option<&Path>) -> i32 {
    crate::doc::run(out, check, stdlib)
}

fn explain(code: Option<String>, list: bool) -> i32 {
    if list || code.is_none() {
        for c in scl_diag::CODES {
            println!("{}  {}", c.code, c.title);
        }
        return 0;
    }
    let code = code.unwrap();
    match scl_diag::explain(&code) {
        Some(text) => {
            print!("{text}");
            0
        }
        None => usage_error(&format!(
            "unknown diagnostic code `{code}` (see `sclc explain --list`)"
        )),
    }
}

/// The texts diagnostics may point into (by file key: workspace-relative
/// path, `std/NAME.env.scl`, `<command-line>`) and the path shown for each.
pub(crate) struct Sources {
    texts: HashMap<String, String>,
    shown: HashMap<String, String>,
}

impl SourceCache for Sources {
    fn source(&self, file: &str) -> Option<&str> {
        self.texts.get(file).map(|s| s.as_str())
    }
    fn display<'a>(&'a self, file: &'a str) -> Cow<'a, str> {
        match self.shown.get(file) {
            Some(s) => Cow::Borrowed(s.as_str()),
            None => Cow::Borrowed(file),
        }
    }
}

impl Sources {
    /// Texts by the names they are shown as (`sclc fmt`: the paths given).
    pub(crate) fn plain(texts: HashMap<String, String>) -> Sources {
        Sources {
            texts,
            shown: HashMap::new(),
        }
    }

    /// Every text of `a`, each file shown by its path relative to the
    /// current folder (where a terminal or CI annotation opens it), or
    /// absolute when it is not below it; stdlib modules and the command
    /// line by their keys.
    fn of(a: &Analysis) -> Sources {
        let cwd = OsSystem.current_dir();
        Sources::shown_with(a, |p| shown_path(&cwd, p))
    }

    /// Every text of `a`, each file shown as `shown` says from its path
    /// (stdlib modules and the command line by their keys).
    pub(crate) fn shown_with(a: &Analysis, shown: impl Fn(&Path) -> String) -> Sources {
        let texts = a.texts();
        let shown = texts
            .keys()
            .filter_map(|k| Some((k.clone(), shown(&a.path_of_key(k)?))))
            .collect();
        Sources { texts, shown }
    }
}

/// `path` as shown from `cwd`: relative when below it, else absolute.
pub(crate) fn shown_path(cwd: &Path, path: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

pub(crate) fn print_diagnostics(a: &Analysis, diags: &[Diagnostic], fmt: MessageFormat) {
    if diags.is_empty() {
        return;
    }
    render_diagnostics(&Sources::of(a), diags, fmt == MessageFormat::Json);
}

/// Prints `diags` to stderr as `sclc check` does (human or JSON, with the
/// error and warning count), with `sources` the texts they point into (by
/// the file key in each diagnostic) and the paths shown for them.
pub(crate) fn render_diagnostics(sources: &dyn SourceCache, diags: &[Diagnostic], json: bool) {
    if diags.is_empty() {
        return;
    }
    let fmt = if json {
        MessageFormat::Json
    } else {
        MessageFormat::Human
    };
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut err = std::io::stderr().lock();
    for d in diags {
        let _ = match fmt {
            MessageFormat::Json => writeln!(err, "{}", render_json(d, sources)),
            MessageFormat::Human => write!(err, "{}", render_human(d, sources, color)),
        };
    }
    if fmt == MessageFormat::Human {
        // The per-file cap's notes (E0008, W0005: "and N more … not shown")
        // are not problems of their own: not counted, but said.
        let capped = |d: &&Diagnostic| d.code == "E0008" || d.code == "W0005";
        let shown: Vec<&Diagnostic> = diags.iter().filter(|d| !capped(d)).collect();
        let more = if shown.len() < diags.len() {
            ", more not shown"
        } else {
            ""
        };
        let e = shown.iter().filter(|d| d.is_error()).count();
        let w = shown.len() - e;
        let plural = |n: usize, s: &str| {
            if n == 1 {
                format!("{n} {s}")
            } else {
                format!("{n} {s}s")
            }
        };
        let _ = match (e, w) {
            (0, w) => writeln!(err, "{} emitted{more}", plural(w, "warning")),
            (e, 0) => writeln!(err, "{} emitted{more}", plural(e, "error")),
            (e, w) => writeln!(
                err,
                "{} and {} emitted{more}",
                plural(e, "error"),
                plural(w, "warning")
            ),
        };
    }
}

/// Opens `file` in a new host for its workspace, applies `--set`, and
/// checks it. Returns the host, a snapshot, the file and the diagnostics.
fn load(
    file: &Path,
    set: &[String],
    stdlib: Option<PathBuf>,
) -> Result<(AnalysisHost, Analysis, FileId, Vec<Diagnostic>), i32> {
    let opened = AnalysisHost::open_root(Arc::new(OsSystem), file, stdlib);
    scl_ide::timings::mark("root file read and parsed");
    load_opened(file, opened, set)
}

/// [`load`] of a root file already opened (`AnalysisHost::open_root`): the
/// usage error when it could not be, else the `--set` flags applied and
/// the file checked.
pub(crate) fn load_opened(
    file: &Path,
    opened: Result<(AnalysisHost, FileId), OpenError>,
    set: &[String],
) -> Result<(AnalysisHost, Analysis, FileId, Vec<Diagnostic>), i32> {
    let (mut host, f) = match opened {
        Ok(x) => x,
        Err(OpenError::IsDir) => {
            return Err(usage_error(&format!(
                "{} is a folder, not a file: give one `.env.scl` file (`sclc check` takes folders)",
                file.display()
            )))
        }
        Err(OpenError::Missing) => {
            return Err(usage_error(&format!("no such file: {}", file.display())))
        }
    };
    let mut diags = host.set_overrides(f, set);
    let a = host.analysis();
    diags.extend(a.check(&[f]));
    Ok((host, a, f, diags))
}

/// The files `sclc check` checks ([`scl_ide::collect_files`]); a usage error
/// (exit 2) if a path does not exist, a file is not a `.env.scl` file, or
/// there is no file to check at all. `sclc fmt` takes the same.
pub(crate) fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, i32> {
    scl_ide::collect_files(&OsSystem, paths).map_err(|e| usage_error(&e.to_string()))
}

fn check(
    paths: &[PathBuf],
    set: &[String],
    driver: Option<&str>,
    locked: bool,
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    if let Some(d) = driver {
        if scl_domain::version::Dotted::parse(d).is_none() {
            return usage_error(&format!(
                "--driver: `{d}` is not an NVIDIA driver version (such as 535.104.05, as `nvidia-smi` prints it)"
            ));
        }
    }
    let files = match collect_files(paths) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let mut errors = false;
    if set.is_empty() {
        // Files of one workspace share a database, so a module imported by
        // several of them is checked (and reported) once.
        let mut groups: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for f in files {
            groups
                .entry(AnalysisHost::workspace_root(&OsSystem, &f))
                .or_default()
                .push(f);
        }
        for (root, files) in groups {
            let host = AnalysisHost::new(Arc::new(OsSystem), &root, stdlib.clone());
            let a = host.analysis();
            let ids: Vec<FileId> = files.iter().map(|f| a.root_file(f)).collect();
            let mut diags = a.check(&ids);
            if let Some(d) = driver {
                diags.extend(a.driver_diagnostics(&ids, d));
            }
            if locked && !diags.iter().any(Diagnostic::is_error) {
                diags.extend(crate::engine::locked_diagnostics(&a, &ids));
            }
            errors |= diags.iter().any(Diagnostic::is_error);
            print_diagnostics(&a, &diags, fmt);
            std::mem::forget(a);
            std::mem::forget(host);
        }
        return i32::from(errors);
    }
    // With `--set`, every file is a root of its own, given the flags
    // addressed to it (a parameter it declares, an alias it imports); a
    // flag addressed to none of the files is given to the first, so that
    // its error is reported once. A diagnostic reached from
    // several roots is printed once. Each root may be its own workspace,
    // whose file names are relative to it: the same problem is the same
    // diagnostic in the same file on disk.
    // Each file is opened once: what it declares and imports says which
    // flags are addressed to it, then it is checked with them.
    let opened: Vec<Result<(AnalysisHost, FileId), OpenError>> = files
        .iter()
        .map(|f| AnalysisHost::open_root(Arc::new(OsSystem), f, stdlib.clone()))
        .collect();
    let accepted: Vec<Vec<bool>> = opened
        .iter()
        .map(|o| match o {
            Ok((host, id)) => set.iter().map(|s| host.accepts_override(*id, s)).collect(),
            Err(_) => vec![true; set.len()],
        })
        .collect();
    let mut printed: std::collections::HashSet<(Option<PathBuf>, Diagnostic)> =
        std::collections::HashSet::new();
    for (i, (f, o)) in files.iter().zip(opened).enumerate() {
        let flags: Vec<String> = set
            .iter()
            .enumerate()
            .filter(|(k, _)| accepted[i][*k] || (i == 0 && accepted.iter().all(|a| !a[*k])))
            .map(|(_, s)| s.clone())
            .collect();
        match load_opened(f, o, &flags) {
            Ok((_host, a, id, mut diags)) => {
                if let Some(d) = driver {
                    diags.extend(a.driver_diagnostics(&[id], d));
                }
                if locked && !diags.iter().any(Diagnostic::is_error) {
                    diags.extend(crate::engine::locked_diagnostics(&a, &[id]));
                }
                let diags: Vec<Diagnostic> = diags
                    .into_iter()
                    .filter(|d| printed.insert((a.path_of_key(&d.at.file), d.clone())))
                    .collect();
                errors |= diags.iter().any(Diagnostic::is_error);
                print_diagnostics(&a, &diags, fmt);
            }
            Err(code) => return code,
        }
    }
    i32::from(errors)
}

/// A checked file and the envs a command works on.
pub(crate) struct Loaded {
    pub(crate) host: AnalysisHost,
    pub(crate) a: Analysis,
    pub(crate) file: FileId,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) envs: Vec<String>,
}

/// [`load`] plus the envs selected by `--env` (an unknown env is one more
/// diagnostic).
pub(crate) fn load_envs(
    file: &Path,
    env: Option<&str>,
    set: &[String],
    stdlib: Option<PathBuf>,
) -> Result<Loaded, i32> {
    let (host, a, f, mut diags) = load(file, set, stdlib)?;
    let envs = a.select_envs(f, env).unwrap_or_else(|d| {
        diags.push(*d);
        Vec::new()
    });
    Ok(Loaded {
        host,
        a,
        file: f,
        diags,
        envs,
    })
}

fn ir(
    file: &Path,
    env: Option<&str>,
    set: &[String],
    provenance: bool,
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    let Loaded {
        host,
        a,
        file: f,
        diags,
        envs,
    } = match load_envs(file, env, set, stdlib) {
        Ok(x) => x,
        Err(code) => return code,
    };
    print_diagnostics(&a, &diags, fmt);
    if diags.iter().any(Diagnostic::is_error) {
        return 1;
    }
    let mut specs: BTreeMap<&str, scl_ide::ir::EnvSpec> = BTreeMap::new();
    for name in &envs {
        let Some(spec) = a.ir(f, name) else {
            return 1;
        };
        specs.insert(name, spec.versioned());
    }
    scl_ide::timings::mark("IR gathered");
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if provenance {
        // With provenance: through a JSON value (sorted keys) to add the table.
        let mut all = serde_json::Map::new();
        for name in &envs {
            let table = a.provenance(f, name).expect("checked above");
            let mut v = serde_json::to_value(&specs[name.as_str()]).expect("IR serializes");
            v.as_object_mut().unwrap().insert(
                "provenance".into(),
                serde_json::to_value(table).expect("provenance serializes"),
            );
            all.insert(name.clone(), v);
        }
        let out = if env.is_some() {
            all.into_iter().next().map(|(_, v)| v).unwrap_or_default()
        } else {
            serde_json::Value::Object(all)
        };
        let _ = stdout.write_all(scl_ide::ir::canonical_json(&out).as_bytes());
    } else {
        // The IR structs serialize with sorted keys directly (see scl-ir),
        // straight into the buffered output: no copy of the whole text.
        // Services are written on two threads (`to_writer_envs`).
        let _ = match env {
            Some(_) => {
                let spec = specs.values().next().expect("one env");
                scl_ide::ir::json::to_writer_envs(&mut stdout, spec, [spec], 2).map(drop)
            }
            None => {
                scl_ide::ir::json::to_writer_envs(&mut stdout, &specs, specs.values(), 3).map(drop)
            }
        }
        .map_err(std::io::Error::from)
        .and_then(|_| stdout.write_all(b"\n"));
    }
    let _ = stdout.flush();
    scl_ide::timings::mark("JSON written");
    // The process ends here: freeing the database would only cost time.
    std::mem::forget(specs);
    std::mem::forget(a);
    std::mem::forget(host);
    0
}

/// E0209 ("no base") is a fact of the env, not of a target: the E0209s
/// several targets report at one place (`docker: `base`: …`, `k8s: …`)
/// become one, naming the targets.
pub(crate) fn merge_no_base(diags: &mut Vec<Diagnostic>) {
    let mut i = 0;
    while i < diags.len() {
        if diags[i].code != "E0209" {
            i += 1;
            continue;
        }
        let target = |d: &Diagnostic| d.message.split_once(": ").map(|(t, _)| t.to_string());
        let mut targets: Vec<String> = target(&diags[i]).into_iter().collect();
        let mut j = i + 1;
        while j < diags.len() {
            if diags[j].code == "E0209" && diags[j].at == diags[i].at {
                let d = diags.remove(j);
                targets.extend(target(&d));
            } else {
                j += 1;
            }
        }
        if targets.len() > 1 {
            targets.dedup();
            let field = diags[i]
                .message
                .split_once(": ")
                .and_then(|(_, rest)| rest.split_once(": "))
                .map_or("`base`", |(f, _)| f)
                .to_string();
            diags[i].message = format!(
                "{}: {field}: not set: there is no image to build or run (an env without `base` can only be a parent of others)",
                targets.join(", ")
            );
        }
        i += 1;
    }
}

/// Leaves out of `envs` (of file `f`) each env without `base` and without
/// services, saying so: such an env is a parent of others (a mixin), with
/// no image to build or run. (Asked for by `--env`, it is E0209 from the
/// backend instead.)
pub(crate) fn drop_mixins(a: &Analysis, f: FileId, envs: &mut Vec<String>) {
    envs.retain(|name| match a.ir(f, name) {
        Some(spec) if spec.base.is_none() && spec.services.is_empty() => {
            eprintln!(
                "note: env `{name}` has no `base` image, so it is not built (it can be extended by envs that set one)"
            );
            false
        }
        _ => true,
    });
}

/// What `sclc build` writes and where: `--target`, `--image-repo`, `--out`.
struct BuildTo<'a> {
    target: &'a str,
    image_repo: Option<String>,
    host_root: Option<String>,
    out: &'a Path,
}

fn build(
    file: &Path,
    env: Option<&str>,
    to: BuildTo<'_>,
    set: &[String],
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    let BuildTo {
        target,
        image_repo,
        host_root,
        out,
    } = to;
    let targets: Vec<scl_ide::Target> = match target {
        "all" => scl_ide::Target::in_all().collect(),
        name => match scl_ide::Target::from_name(name) {
            Some(t) => vec![t],
            None => return usage_error(&format!("there is no target `{name}`")),
        },
    };
    if let Some(r) = &image_repo {
        if let Err(why) = check_image_repo(r) {
            return usage_error(&format!("--image-repo {r:?} {why}"));
        }
    }
    if let Some(r) = &host_root {
        if let Err(why) = check_host_root(r) {
            return usage_error(&format!("--host-root {r:?} {why}"));
        }
    }
    let prints_commands = targets.iter().any(|t| t.name() == "docker");
    let options = scl_ide::LowerOptions {
        image_repo: image_repo.clone(),
        host_root,
    };
    let Loaded {
        host: _host,
        a,
        file: f,
        mut diags,
        mut envs,
    } = match load_envs(file, env, set, stdlib) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if diags.iter().any(Diagnostic::is_error) {
        print_diagnostics(&a, &diags, fmt);
        return 1;
    }
    if env.is_none() {
        drop_mixins(&a, f, &mut envs);
    }
    // Every target of every env is lowered before anything is written: an
    // env's folder gets all its targets together, or nothing.
    let mut outputs: Vec<(String, scl_ide::Lowered)> = Vec::new();
    for t in targets.iter().copied() {
        let lowering = a.lower_with(f, &envs, t, &options);
        if lowering.incomplete {
            return 1;
        }
        // A finding every target makes alike (two envs whose names differ
        // only in case) is reported once.
        for d in lowering.diagnostics {
            if !diags.contains(&d) {
                diags.push(d);
            }
        }
        merge_no_base(&mut diags);
        for (env, l) in lowering.outputs {
            match outputs.iter_mut().find(|(e, _)| *e == env) {
                Some((_, all)) => {
                    all.artifacts.extend(l.artifacts);
                    all.warnings.extend(l.warnings);
                    all.errors.extend(l.errors);
                }
                None => outputs.push((env, l)),
            }
        }
    }
    print_diagnostics(&a, &diags, fmt);
    if diags.iter().any(Diagnostic::is_error) {
        // A value the target cannot write safely: nothing is written.
        return 1;
    }
    // A file of the old folder that belongs to a target not built now
    // stays (`--target k8s` after `--target docker` keeps the Dockerfile).
    let built: Vec<&str> = targets.iter().map(|t| t.name()).collect();
    let keep = |rel: &str| {
        let mut ours = false;
        let mut theirs = false;
        for t in scl_ide::Target::all() {
            if t.backend().layout().iter().any(|p| layout_matches(p, rel)) {
                if built.contains(&t.name()) {
                    ours = true;
                } else {
                    theirs = true;
                }
            }
        }
        theirs && !ours
    };
    match write_atomically(out, &outputs, &keep) {
        Ok(written) => {
            let mut stdout = std::io::stdout().lock();
            for p in written {
                let _ = writeln!(stdout, "wrote {}", p.display());
            }
            if prints_commands {
                // How to build and run what was written (docker build with
                // its --secret flags, docker run, the smoke tests).
                let context = a.root();
                let context = context.display().to_string();
                for (env, l) in &outputs {
                    if l.artifacts.is_empty() {
                        continue;
                    }
                    let folder = out.join(env).display().to_string();
                    for line in a
                        .docker_commands(f, env, &options, &folder, &context)
                        .unwrap_or_default()
                    {
                        let _ = writeln!(stdout, "{line}");
                    }
                }
            }
            0
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", out.display());
            2
        }
    }
}
