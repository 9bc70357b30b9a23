//! Local virtual environments through uv (`sclc up FILE --target venv`).
//!
//! An env's Python part becomes a `.venv` beside the source file:
//!
//! 1. `uv python find --system --no-project --no-python-downloads VERSION`
//!    when `python.version` is set: the interpreter must be installed on
//!    this machine (uv is never let download one); else the make fails
//!    with one line saying so.
//! 2. `uv venv --no-project --no-python-downloads --python PATH .venv`,
//!    unless a `.venv` with that Python (or any, when no version is
//!    declared) is there already; `--clear` when it has another one.
//! 3. `uv pip install --python .venv/bin/python --system-certs
//!    [--index-url U] [--extra-index-url U]... [-r FILE]... PACKAGE...`:
//!    the pip packages of the env, whatever `python.manager` says.
//!
//! `--system-certs` (uv 0.11 and later; `--native-tls` before) makes uv
//! trust the system's certificate store, so a TLS-inspecting proxy whose
//! root is installed there works; uv honours `SSL_CERT_FILE` with or
//! without it. The index credentials (a netrc secret) are never written
//! anywhere: uv reads `~/.netrc` or the file `NETRC` names.
//!
//! What a venv cannot give (OS packages, conda packages, GPUs, volumes,
//! variables, services, the command…) is listed by [`left_out`], one line
//! per field, for the CLI to print as warnings.

use crate::EngineError;
use scl_ir::{EnvSpec, PythonManager, VarValue};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The line printed when `uv` is not on `PATH`.
pub const NO_UV: &str =
    "uv is not on PATH: install it (pip install uv, or https://docs.astral.sh/uv/) to make a venv";

/// What a venv is made of: the Python part of an env's IR.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// `python.version`, as written (`"3.11"`).
    pub version: Option<String>,
    /// `python.packages` (PEP 508 strings).
    pub packages: Vec<String>,
    /// `python.requirements`, as paths from the folder uv runs in (the
    /// source file's), else absolute.
    pub requirements: Vec<PathBuf>,
    pub index_url: Option<String>,
    pub extra_index_urls: Vec<String>,
}

impl Plan {
    /// The plan of `spec`, whose requirements paths are relative to the
    /// workspace `root`; uv will run in `dir`.
    pub fn of(spec: &EnvSpec, root: &Path, dir: &Path) -> Plan {
        let Some(py) = &spec.python else {
            return Plan::default();
        };
        let requirements = py
            .requirements
            .iter()
            .map(|f| {
                let abs = root.join(&f.path);
                match abs.strip_prefix(dir) {
                    Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
                    _ => abs,
                }
            })
            .collect();
        Plan {
            version: py.version.clone(),
            packages: py.packages.iter().map(|p| p.to_string()).collect(),
            requirements,
            index_url: py.index_url.clone(),
            extra_index_urls: py.extra_index_urls.clone(),
        }
    }
}

/// How a line of [`left_out`] is printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something of the env the venv does not have.
    Warning,
    /// Something to know (the base image is not used, how the index
    /// credentials are given).
    Note,
}

/// One line about a field a venv does not carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    pub level: Level,
    /// The IR field (`system.packages`).
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Warning => "warning",
            Level::Note => "note",
        };
        write!(f, "{level}: venv: `{}`: {}", self.field, self.message)
    }
}

/// `items` as `a, b, c` (at most five, then `and N more`).
fn list<S: AsRef<str>>(items: &[S]) -> String {
    const SHOWN: usize = 5;
    let mut s = items
        .iter()
        .take(SHOWN)
        .map(|i| i.as_ref())
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        s.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    s
}

/// What of `spec` a venv cannot give, one line per field, in field order.
pub fn left_out(spec: &EnvSpec) -> Vec<LeftOut> {
    let mut out = Vec::new();
    let mut push = |level, field, message: String| {
        out.push(LeftOut {
            level,
            field,
            message,
        })
    };
    use Level::{Note, Warning};
    if !spec.assets.is_empty() {
        push(
            Warning,
            "assets",
            format!(
                "a venv downloads no model or data files ({} of them): fetch them yourself",
                spec.assets.len()
            ),
        );
    }
    if let Some(base) = &spec.base {
        push(
            Note,
            "base",
            format!(
                "the venv uses this machine's OS and Python, not the image {}",
                base.reference
            ),
        );
    }
    if !spec.command.is_empty() || !spec.entrypoint.is_empty() {
        let field = if spec.command.is_empty() {
            "entrypoint"
        } else {
            "command"
        };
        push(
            Warning,
            field,
            "not run: run it yourself in the venv (`source .venv/bin/activate`)".into(),
        );
    }
    if let Some(conda) = &spec.conda {
        if !conda.packages.is_empty() {
            push(
                Warning,
                "conda.packages",
                format!(
                    "a venv has no conda: {} left out; install them with pip (python.packages) or use the conda target",
                    list(&conda.packages)
                ),
            );
        }
    }
    if !spec.depends_on.is_empty() {
        push(
            Warning,
            "depends_on",
            format!("not started: {}", list(&spec.depends_on)),
        );
    }
    if spec.distributed.is_some() {
        push(
            Warning,
            "distributed",
            "a venv starts no distributed launcher or nodes".into(),
        );
    }
    if !spec.files.is_empty() {
        push(
            Warning,
            "files",
            "nothing is copied: the venv sees the files where they are in the workspace".into(),
        );
    }
    if let Some(py) = &spec.python {
        if let Some(r) = &py.index_credentials {
            push(
                Note,
                "python.index_credentials",
                format!(
                    "sclc writes no secret: give uv the index login (secret `{}`, key `{}`, a netrc file) in ~/.netrc or in the file the NETRC variable names",
                    r.secret, r.key
                ),
            );
        }
        if py.manager == PythonManager::Conda {
            push(
                Warning,
                "python.manager",
                "conda does not make a venv: uv does, with this machine's Python, and installs the pip packages".into(),
            );
        }
    }
    if let Some(r) = &spec.resources {
        let lists = [r.requests.as_ref(), r.limits.as_ref()];
        let gpus = lists
            .iter()
            .flatten()
            .filter_map(|l| l.gpu.as_ref())
            .map(|g| g.count)
            .max();
        if let Some(n) = gpus {
            push(
                Warning,
                "resources.gpu",
                format!(
                    "a venv reserves no GPUs (the env asks for {n}): it sees the GPUs and drivers this machine has"
                ),
            );
        }
        if lists
            .iter()
            .flatten()
            .any(|l| l.cpu.is_some() || l.memory.is_some())
        {
            push(
                Warning,
                "resources",
                "a venv sets no CPU or memory requests or limits".into(),
            );
        }
    }
    if !spec.services.is_empty() {
        let names: Vec<&String> = spec.services.keys().collect();
        push(
            Warning,
            "services",
            format!("not started: {}", list(&names)),
        );
    }
    if !spec.setup.is_empty() {
        push(
            Warning,
            "setup",
            format!("the build steps are not run ({} of them)", spec.setup.len()),
        );
    }
    if let Some(system) = &spec.system {
        if !system.packages.is_empty() {
            push(
                Warning,
                "system.packages",
                format!(
                    "a venv installs no OS packages: install them on this machine ({})",
                    list(&system.packages)
                ),
            );
        }
    }
    if !spec.test.is_empty() {
        push(Warning, "test", "the smoke tests are not run".into());
    }
    let (secrets, plain): (Vec<_>, Vec<_>) = spec
        .vars
        .iter()
        .partition(|(_, v)| matches!(v, VarValue::Secret(_)));
    if !plain.is_empty() {
        let names: Vec<&std::sync::Arc<str>> = plain.iter().map(|(k, _)| *k).collect();
        push(
            Warning,
            "vars",
            format!(
                "not set in the venv: export them before you run ({})",
                list(&names)
            ),
        );
    }
    if !secrets.is_empty() {
        let names: Vec<&std::sync::Arc<str>> = secrets.iter().map(|(k, _)| *k).collect();
        push(
            Warning,
            "vars",
            format!("secrets are not read: set them yourself ({})", list(&names)),
        );
    }
    if !spec.volumes.is_empty() {
        let mounts: Vec<String> = spec
            .volumes
            .iter()
            .map(|v| format!("{} at {}", v.source, v.mount))
            .collect();
        push(
            Warning,
            "volumes",
            format!(
                "nothing is mounted: the data must be on this machine ({})",
                list(&mounts)
            ),
        );
    }
    out
}

/// The `uv` a venv is made with.
#[derive(Clone, Debug)]
pub struct Uv {
    /// Where it is (found on `PATH`).
    pub path: PathBuf,
    /// `uv 0.13.9 (...)`, the first line of `uv --version`.
    pub version: String,
    /// `--system-certs`, or `--native-tls` for uv before 0.11.
    pub tls_flag: &'static str,
}

/// The first file named `name` on `path` (a `PATH` value) that is
/// executable.
fn on_path(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    let exe = if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    };
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(&exe))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The TLS flag uv `version` (`uv 0.10.2 (…)`) takes: `--system-certs`
/// from 0.11 (where `--native-tls` became a deprecated alias), else
/// `--native-tls`.
pub fn tls_flag(version: &str) -> &'static str {
    let number = version.split_whitespace().nth(1).unwrap_or("");
    let mut parts = number.split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(0), Some(minor)) if minor < 11 => "--native-tls",
        _ => "--system-certs",
    }
}

impl Uv {
    /// `uv` on `PATH`, and its version; [`NO_UV`] when there is none.
    pub fn find() -> Result<Uv, EngineError> {
        let path = std::env::var_os("PATH")
            .and_then(|p| on_path("uv", &p))
            .ok_or_else(|| EngineError::new(NO_UV))?;
        let out = Command::new(&path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| EngineError::new(format!("{} --version: {e}", path.display())))?;
        if !out.status.success() {
            return Err(EngineError::new(format!(
                "{} --version failed ({}): {}",
                path.display(),
                out.status,
                first_line(&out.stderr)
            )));
        }
        let version = first_line(&out.stdout);
        Ok(Uv {
            tls_flag: tls_flag(&version),
            path,
            version,
        })
    }

    fn command(&self, dir: &Path, args: &[String]) -> Command {
        let mut c = Command::new(&self.path);
        c.args(args).current_dir(dir).stdin(Stdio::null());
        c
    }
}

/// The first non-empty line of `bytes`, trimmed.
fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// `uv ARGS` as a shell line (each word quoted when it must be).
pub fn command_line(args: &[String]) -> String {
    let mut s = String::from("uv");
    for a in args {
        s.push(' ');
        s.push_str(&scl_backends::quote::shell(&redact_password(a)));
    }
    s
}

/// `a` with the password of a URL's user information (`https://user:PASS@host/`),
/// or the whole of it when it has no password (`https://TOKEN@host/`),
/// shown as `****`, so that a printed command line does not show it (uv
/// is given the URL as written).
pub fn redact_password(a: &str) -> String {
    let Some(scheme) = a.find("://") else {
        return a.to_string();
    };
    let rest = &a[scheme + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return a.to_string();
    };
    let shown = match authority[..at].find(':') {
        Some(colon) => format!("{}:****", &authority[..colon]),
        // A user name alone is often a token (`https://TOKEN@host/`).
        None => "****".to_string(),
    };
    format!("{}{shown}{}", &a[..scheme + 3], &a[scheme + 3 + at..])
}

/// What [`make`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    /// The folder (`DIR/.venv`).
    pub venv: PathBuf,
    /// The venv's Python version (`3.11.7`), from its `pyvenv.cfg`.
    pub python: String,
    /// The distributions installed in it (its `*.dist-info` folders).
    pub packages: usize,
    /// Whether an existing `.venv` was kept (not made again).
    pub kept: bool,
}

/// The interpreter of the venv at `venv`.
pub fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// The Python version a `pyvenv.cfg` records (`version_info` as uv
/// writes it, `version` as `python -m venv` does).
fn venv_version(cfg: &str) -> Option<String> {
    cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        matches!(k.trim(), "version_info" | "version").then(|| v.trim().to_string())
    })
}

/// Whether a Python `have` (`3.11.7`) is the `want` (`3.11`) an env
/// declares.
fn version_matches(have: &str, want: &str) -> bool {
    have == want || have.starts_with(&format!("{want}."))
}

/// The `*.dist-info` folders below the venv's site-packages.
fn count_dists(venv: &Path) -> usize {
    let mut sites = Vec::new();
    if let Ok(libs) = std::fs::read_dir(venv.join("lib")) {
        sites.extend(libs.flatten().map(|e| e.path().join("site-packages")));
    }
    sites.push(venv.join("Lib").join("site-packages"));
    sites
        .iter()
        .filter_map(|s| std::fs::read_dir(s).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        .count()
}

/// Makes (or updates) `dir/.venv` from `plan` with `uv`, calling `log`
/// with each uv command line before it runs (uv's own output goes to this
/// process's stderr).
pub fn make(
    uv: &Uv,
    plan: &Plan,
    dir: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<Made, EngineError> {
    let venv = dir.join(".venv");
    let cfg = venv.join("pyvenv.cfg");
    let existing = if venv.exists() {
        match std::fs::read_to_string(&cfg) {
            Ok(text) => Some(venv_version(&text).unwrap_or_default()),
            Err(_) => {
                return Err(EngineError::new(format!(
                    "{} exists and is not a virtual environment (it has no pyvenv.cfg): move it away to make the venv",
                    venv.display()
                )))
            }
        }
    } else {
        None
    };

    // The interpreter: the declared version, installed here.
    let mut interpreter = None;
    if let Some(v) = &plan.version {
        let args: Vec<String> = [
            "python",
            "find",
            "--system",
            "--no-project",
            "--no-python-downloads",
            v,
        ]
        .map(String::from)
        .to_vec();
        log(&command_line(&args));
        let out = uv
            .command(dir, &args)
            .output()
            .map_err(|e| EngineError::new(format!("{}: {e}", command_line(&args))))?;
        let found = first_line(&out.stdout);
        if !out.status.success() || found.is_empty() {
            let said = first_line(&out.stderr);
            let said = said.strip_prefix("error: ").unwrap_or(&said);
            let why = if said.is_empty() || said.starts_with("No interpreter found") {
                String::new()
            } else {
                format!(" (uv: {said})")
            };
            return Err(EngineError::new(format!(
                "Python {v} is not installed here{why}: install it (`uv python install {v}`, pyenv or the OS packages) or change `python.version` (sclc does not let uv download Pythons)"
            )));
        }
        interpreter = Some(found);
    }

    // The venv: kept when it has the Python asked for.
    let kept = match (&existing, &plan.version) {
        (Some(have), Some(want)) => version_matches(have, want),
        (Some(_), None) => true,
        (None, _) => false,
    };
    if !kept {
        let mut args: Vec<String> = ["venv", "--no-project", "--no-python-downloads"]
            .map(String::from)
            .to_vec();
        if existing.is_some() {
            args.push("--clear".into());
        }
        if let Some(p) = &interpreter {
            args.push("--python".into());
            args.push(p.clone());
        }
        args.push(".venv".into());
        run(uv, dir, &args, log)?;
    }

    // The packages.
    let python = venv_python(Path::new(".venv"));
    if !plan.packages.is_empty() || !plan.requirements.is_empty() {
        let mut args: Vec<String> = vec![
            "pip".into(),
            "install".into(),
            "--python".into(),
            python.to_string_lossy().into_owned(),
            uv.tls_flag.into(),
        ];
        if let Some(u) = &plan.index_url {
            args.push("--index-url".into());
            args.push(u.clone());
        }
        for u in &plan.extra_index_urls {
            args.push("--extra-index-url".into());
            args.push(u.clone());
        }
        for r in &plan.requirements {
            args.push("-r".into());
            args.push(r.to_string_lossy().into_owned());
        }
        args.extend(plan.packages.iter().cloned());
        run(uv, dir, &args, log)?;
    }

    let python = std::fs::read_to_string(&cfg)
        .ok()
        .and_then(|t| venv_version(&t))
        .ok_or_else(|| {
            EngineError::new(format!(
                "uv made {} without a pyvenv.cfg that names its Python version",
                venv.display()
            ))
        })?;
    Ok(Made {
        packages: count_dists(&venv),
        python,
        venv,
        kept,
    })
}

/// Runs `uv args` in `dir` (stderr to ours), logged first.
fn run(uv: &Uv, dir: &Path, args: &[String], log: &mut dyn FnMut(&str)) -> Result<(), EngineError> {
    let line = command_line(args);
    log(&line);
    let status = uv
        .command(dir, args)
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| EngineError::new(format!("{line}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(EngineError::new(format!(
            "`{line}` failed ({status}): see uv's message above"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_flag_follows_the_version() {
        assert_eq!(
            tls_flag("uv 0.13.9 (x86_64-unknown-linux-gnu)"),
            "--system-certs"
        );
        assert_eq!(tls_flag("uv 0.11.0"), "--system-certs");
        assert_eq!(tls_flag("uv 0.10.12 (abc 2026-03-01)"), "--native-tls");
        assert_eq!(tls_flag("uv 1.0.0"), "--system-certs");
        assert_eq!(tls_flag("something else"), "--system-certs");
    }

    #[test]
    fn versions_match_by_prefix() {
        assert!(version_matches("3.11.7", "3.11"));
        assert!(version_matches("3.11.7", "3.11.7"));
        assert!(!version_matches("3.11.7", "3.1"));
        assert!(!version_matches("3.12.1", "3.11"));
        assert_eq!(
            venv_version("home = /x\nversion_info = 3.11.7\n").as_deref(),
            Some("3.11.7")
        );
        assert_eq!(venv_version("version = 3.12.1").as_deref(), Some("3.12.1"));
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let args: Vec<String> = ["pip", "install", "torch>=2", "six==1.16.0"]
            .map(String::from)
            .to_vec();
        assert_eq!(command_line(&args), "uv pip install 'torch>=2' six==1.16.0");
        let args = vec![
            "--index-url".to_string(),
            "https://me:s3cret@pypi.example.com/simple?x=a:b@c".to_string(),
            "--extra-index-url=https://token@pypi.example.com/".to_string(),
        ];
        assert_eq!(
            command_line(&args),
            "uv --index-url 'https://me:****@pypi.example.com/simple?x=a:b@c' '--extra-index-url=https://****@pypi.example.com/'"
        );
    }

    #[test]
    fn left_out_names_the_fields() {
        let spec: EnvSpec = serde_json::from_str(
            r#"{"system": {"manager": "apt", "packages": ["curl"]},
                "python": {"manager": "pip", "packages": ["six"]},
                "resources": {"limits": {"gpu": {"count": 2}}},
                "vars": {"A": "1", "T": {"secret": "hf", "key": "token"}},
                "command": ["python", "x.py"]}"#,
        )
        .unwrap();
        let lines: Vec<String> = left_out(&spec).iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "warning: venv: `command`: not run: run it yourself in the venv (`source .venv/bin/activate`)",
                "warning: venv: `resources.gpu`: a venv reserves no GPUs (the env asks for 2): it sees the GPUs and drivers this machine has",
                "warning: venv: `system.packages`: a venv installs no OS packages: install them on this machine (curl)",
                "warning: venv: `vars`: not set in the venv: export them before you run (A)",
                "warning: venv: `vars`: secrets are not read: set them yourself (T)",
            ]
        );
    }
}
