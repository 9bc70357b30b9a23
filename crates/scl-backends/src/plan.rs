//! The container plan: what building one env's image does, in order, built
//! once from the IR and rendered by every target that builds an image from
//! a base image (the Dockerfile as `RUN` instructions, the Apptainer
//! definition file as its `%post` script).
//!
//! [`build`] validates the values the steps share and turns them into
//! [`Step`]s. The command lines of the package managers and tools (`apt-get`,
//! `apk`, `dnf`, `yum`, `microdnf`, `useradd`/`adduser`, pip and uv, conda,
//! the Hugging Face download, a URL download, `mkdir`/`chown`) are written
//! here, in Rust, as
//! [`Shell`]s: lists of [`Command`]s whose lines are already quoted by
//! [`quote::shell`]. A renderer only joins them (a Dockerfile `RUN a \` +
//! ` && b`, a `%post` script one command after the other) and adds what is
//! its own: comments, `ADD --checksum`, `COPY --chown`, `RUN
//! --mount=type=secret`, `%files`.
//!
//! The steps, in the order an image is built (what changes least first):
//!
//! 1. [`Step::System`]: the system packages with the base image's manager,
//!    plus what the Python set-up needs (`python3`, `python3-venv`);
//! 2. [`Step::User`]: the runtime user, created with the image's own tools
//!    (on an image without `useradd`, the minimal Red Hat images and
//!    Amazon Linux, shadow-utils installed first);
//! 3. [`Step::Venv`]: a virtual environment at [`VENV`] on an image whose
//!    Python is not meant to be installed into (PEP 668, or unknown);
//! 4. [`Step::Url`], [`Step::Huggingface`]: the assets, before the Python
//!    packages so that editing a requirement does not fetch them again;
//! 5. [`Step::PythonNote`], [`Step::Tool`] (uv), [`Step::Conda`],
//!    [`Step::Requirements`], [`Step::Packages`]: Python;
//! 6. [`Step::Setup`]: the `setup` steps, each a script run by `sh -e`;
//! 7. [`Step::Env`]: where the plain vars take effect;
//! 8. [`Step::Writable`], [`Step::OwnWorkdir`]: folders given to the
//!    runtime user;
//! 9. [`Step::Runtime`]: the user and working directory processes run with;
//! 10. [`Step::Files`]: the workspace files copied into the image.
//!
//! Adding a step: a [`Step`] variant, made in [`build`] at its place in the
//! order, and a rendering in each target that builds images (`docker.rs`,
//! `apptainer.rs`); a step that is a plain shell step needs only
//! [`Step::shell`] to return it.
//!
//! No value is ever left out: a value the plan cannot write is a
//! [`FieldError`] and the step is dropped, so the caller writes no file.

use scl_ir::bases::{BaseInfo, Family, PythonEnv, CONDA_IMAGES, VENV};
use scl_ir::{Asset, EnvSpec, ImageRef, PythonManager, SecretRef, SystemManager, VolumeMode};
use std::collections::BTreeMap;

use crate::quote;
use crate::{ErrorKind, FieldError, FieldWarning};

/// The `huggingface_hub` release used to download Hugging Face assets
/// (`hf_hub_download(repo_id, filename, revision=, local_dir=)` and
/// `snapshot_download(repo_id, revision=, local_dir=)`).
pub const HUGGINGFACE_HUB: &str = "huggingface_hub==0.23.4";

/// The `uv` release installed (with pip) for `python.manager = .uv`.
pub const UV: &str = "uv==0.13.9";

/// The longest text one value may take on a line of a generated file
/// (after quoting), in bytes. BuildKit reads a Dockerfile line of at most
/// 65535 bytes (`bufio.MaxScanTokenSize`), and no generated line holds more
/// than three values, so 20,000 keeps every line readable.
pub const MAX_VALUE_BYTES: usize = 20_000;

const PIP: &str = "python3 -m pip install --no-cache-dir";
/// yum 3 (CentOS 7, Amazon Linux 2) skips a name it does not find and
/// exits 0; `skip_missing_names_on_install=False` (yum 3.4.3-158, CentOS
/// 7.5 and later) makes a missing package fail the install, as dnf does.
const YUM_INSTALL: &str = "yum install -y --setopt=skip_missing_names_on_install=False";
const UV_PIP: &str = "uv pip install --system --no-cache";
const UV_PIP_VENV: &str = "uv pip install --no-cache";
/// The download of one Hugging Face asset: `python3 -c` ends the
/// interpreter's options, so the repo, revision, folder and file names that
/// follow are plain `sys.argv` entries, never options. Each named file is
/// fetched by its exact name; no names means the whole repo.
const HF_DOWNLOAD: &str = "import sys; from huggingface_hub import hf_hub_download, snapshot_download; repo, revision, to, *files = sys.argv[1:]; [hf_hub_download(repo, f, revision=revision, local_dir=to) for f in files] if files else snapshot_download(repo, revision=revision, local_dir=to)";
/// The download of a URL with Python's standard library, when the image has
/// neither curl nor wget: the URL and the destination are `sys.argv`.
const URL_DOWNLOAD: &str =
    "import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])";

/// One shell command: its physical lines, already quoted. The first line is
/// the command itself, each other line a continuation (the renderer ends
/// every line but the last with ` \`) with its own indentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The lines, without the continuation backslashes.
    pub lines: Vec<String>,
    /// True for the command that reads the step's build secret
    /// ([`BuildSecret`]): a renderer puts the secret's variable in front of
    /// its first line (`HF_TOKEN="…" python3 -c …`).
    pub secret: bool,
}

impl Command {
    fn one(line: impl Into<String>) -> Command {
        Command {
            lines: vec![line.into()],
            secret: false,
        }
    }

    fn lines(lines: Vec<String>) -> Command {
        Command {
            lines,
            secret: false,
        }
    }
}

/// Commands run one after the other; each must succeed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shell {
    /// In order.
    pub commands: Vec<Command>,
}

impl Shell {
    fn of(commands: Vec<Command>) -> Shell {
        Shell { commands }
    }

    /// The commands as one Dockerfile `RUN` line: continuation lines end in
    /// ` \`, and each command after the first starts a line with ` && `.
    /// `prefix` is written before the first line of the command that reads
    /// the build secret ([`Command::secret`]).
    pub fn chained(&self, prefix: &str) -> String {
        let mut out = String::new();
        for (i, c) in self.commands.iter().enumerate() {
            if i > 0 {
                out.push_str(" \\\n && ");
            }
            if c.secret {
                out.push_str(prefix);
            }
            out.push_str(&c.lines.join(" \\\n"));
        }
        out
    }

    /// The commands as lines of a script (one command, with its
    /// continuation lines, after the other), each line prefixed by
    /// `indent`; `prefix` as for [`Shell::chained`].
    pub fn script(&self, indent: &str, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.commands {
            for (j, l) in c.lines.iter().enumerate() {
                let head = if j == 0 && c.secret { prefix } else { "" };
                let tail = if j + 1 < c.lines.len() { " \\" } else { "" };
                out.push(format!("{indent}{head}{l}{tail}"));
            }
        }
        out
    }
}

/// How a step reads a build secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretUse {
    /// The variable holds the secret's contents (`HF_TOKEN`).
    Contents(&'static str),
    /// The variable holds the path of the file with the secret (`NETRC`).
    Path(&'static str),
}

/// A build secret one step reads: never written into a file sclc makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildSecret {
    /// The IR field that names the secret (`assets[0].token`).
    pub field: String,
    /// `<secret>.<key>` ([`secret_id`]): the id `docker build --secret`
    /// takes and the name of the file the build reads.
    pub id: String,
    /// The variable the reading command gets.
    pub reads: SecretUse,
}

impl BuildSecret {
    /// The text to put before the command that reads the secret, when the
    /// secret is a file at `path`: `HF_TOKEN="$(cat <path>)" ` or
    /// `NETRC=<path> ` (`path` is sclc's own, `[A-Za-z0-9_./-]`).
    pub fn prefix(&self, path: &str) -> String {
        match self.reads {
            SecretUse::Contents(var) => format!("{var}=\"$(cat {path})\" "),
            SecretUse::Path(var) => format!("{var}={path} "),
        }
    }
}

/// One requirements file: copied to `dest` before it is installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// `python.requirements[N]`.
    pub field: String,
    /// The workspace-relative path the IR holds.
    pub path: String,
    /// Where the file goes in the image: `<scratch>/requirements/<N>-<basename>`
    /// ([`Target::scratch`]).
    pub dest: String,
}

/// One step of building an image ([`build`]; the module docs give the order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The system packages (and what the Python set-up needs), in IR order.
    System {
        /// The base image's package manager.
        manager: SystemManager,
        shell: Shell,
    },
    /// Creates the runtime user unless the image has it; the build stops
    /// when the image has the name with another uid. Also notes
    /// ([`Target::own_workdir_mark`]) whether `workdir` is missing from the base
    /// image, when `notes_workdir`.
    User {
        /// The user's name as the IR holds it.
        name: String,
        uid: u32,
        /// Whether the step notes if the working directory exists.
        notes_workdir: bool,
        shell: Shell,
    },
    /// Makes a virtual environment at [`VENV`]; from then on `VIRTUAL_ENV`
    /// is [`VENV`] and `PATH` starts with its `bin`.
    Venv {
        /// Why, for a comment.
        why: &'static str,
        shell: Shell,
    },
    /// Downloads a URL to `dest` (a file in the asset's `to` folder).
    Url {
        /// `assets[N]`.
        field: String,
        url: String,
        /// `to` and the file name of the URL.
        dest: String,
        /// The SHA-256 to check the download against (lower-case hex).
        sha256: Option<String>,
        /// The runtime user's uid the file is given to, when not root.
        uid: Option<u32>,
        /// The download by a tool of the image (curl, wget or Python), for
        /// targets that have no download instruction of their own.
        fetch: Shell,
    },
    /// Downloads a Hugging Face repo (or some of its files) into `to` with
    /// a pinned `huggingface_hub` installed to a scratch folder, then gives
    /// the folder to the runtime user.
    Huggingface {
        /// `assets[N]`.
        field: String,
        repo: String,
        revision: String,
        to: String,
        /// The token, a build secret read by the download.
        secret: Option<BuildSecret>,
        shell: Shell,
    },
    /// `python.version` on an image that is not a `python` image: its
    /// `python3` is used (sclc does not install Python).
    PythonNote {
        /// The version the IR asks for.
        version: String,
    },
    /// Installs uv with pip.
    Tool { shell: Shell },
    /// `conda install` of the conda packages (with the channels).
    Conda { shell: Shell },
    /// Installs the requirements files (copied to [`Requirement::dest`]
    /// first, which is the renderer's) and `python.packages` (after `--`),
    /// in one install, so that pip resolves every pin together — unless a
    /// file pins hashes (`with_packages` is then false).
    Requirements {
        files: Vec<Requirement>,
        /// Whether `python.packages` are in this install too (not when a
        /// file pins hashes: [`Step::Packages`] comes before it then).
        with_packages: bool,
        /// Whether a file pins hashes (pip's hash-checking mode).
        hashed: bool,
        /// The index credentials, a build secret read by the install.
        secret: Option<BuildSecret>,
        shell: Shell,
    },
    /// Installs the wheels the build stage made ([`Builder`]): every wheel
    /// of [`Target::wheels_dir`], from no index and without resolving
    /// dependencies again (the stage built them all). The renderer makes
    /// the folder of the build stage visible at that path.
    Wheels { shell: Shell },
    /// Installs `python.packages` (after `--`) when [`Step::Requirements`]
    /// does not (no requirements file, or one that pins hashes).
    Packages {
        /// The index credentials, as for [`Step::Requirements`].
        secret: Option<BuildSecret>,
        shell: Shell,
    },
    /// One `setup` step, as root: its lines written by `printf` to
    /// [`Target::setup_script`], which `sh -e` runs, so nothing but a quoted word of
    /// the step reaches the file being generated.
    Setup {
        /// `setup[N]`.
        field: String,
        /// The first setup step (a renderer may write a heading).
        first: bool,
        /// The step as the IR holds it.
        text: String,
        shell: Shell,
    },
    /// Where the plain vars of the env take effect (each target writes them
    /// in its own form).
    Env,
    /// Makes the folders the runtime user writes (`writable`, read-write
    /// mount points) and gives them to it (the folders themselves).
    Writable { shell: Shell },
    /// Gives the working directory (and what is in it) to the runtime user
    /// when the user step found it missing from the base image.
    OwnWorkdir { shell: Shell },
    /// The user processes run as (none: the base image's) and the working
    /// directory (checked: absolute, not a system folder).
    Runtime {
        /// `(uid, name)` of the IR's user.
        user: Option<(u32, String)>,
        workdir: Option<String>,
    },
    /// The `files` copies, owned by `uid` when the user is not root.
    Files {
        /// `(files[N], from, to)`, in order.
        copies: Vec<(String, String, String)>,
        uid: Option<u32>,
    },
}

impl Step {
    /// The step's shell commands, when it is one plain shell step (every
    /// step but [`Step::Url`], [`Step::PythonNote`], [`Step::Env`],
    /// [`Step::Runtime`] and [`Step::Files`], which targets write in their
    /// own form).
    pub fn shell(&self) -> Option<&Shell> {
        match self {
            Step::System { shell, .. }
            | Step::User { shell, .. }
            | Step::Venv { shell, .. }
            | Step::Huggingface { shell, .. }
            | Step::Tool { shell }
            | Step::Conda { shell }
            | Step::Requirements { shell, .. }
            | Step::Packages { shell, .. }
            | Step::Wheels { shell }
            | Step::Setup { shell, .. }
            | Step::Writable { shell }
            | Step::OwnWorkdir { shell } => Some(shell),
            Step::Url { .. }
            | Step::PythonNote { .. }
            | Step::Env
            | Step::Runtime { .. }
            | Step::Files { .. } => None,
        }
    }

    /// The build secret the step reads, if any.
    pub fn secret(&self) -> Option<&BuildSecret> {
        match self {
            Step::Huggingface { secret, .. }
            | Step::Requirements { secret, .. }
            | Step::Packages { secret, .. } => secret.as_ref(),
            _ => None,
        }
    }
}

/// What the plan says about the file it is rendered into, for its
/// messages.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The generated file, in a sentence: "the Dockerfile".
    pub file: &'static str,
    /// The file's limit on a line, for the length messages: "one Dockerfile
    /// value may take (BuildKit reads lines of at most 65535 bytes)"; the
    /// text of a setup line replaces "value" with "line of a step".
    pub value_limit: &'static str,
    /// The warning for an env without `user`.
    pub user_unset: &'static str,
    /// The build's scratch folder in the image (`/tmp/scl`): requirements
    /// files are copied to `<scratch>/requirements/`, a setup step's script
    /// is `<scratch>/setup.sh`, the Hugging Face tools go to
    /// `<scratch>/hf`, and the user step's mark is `<scratch>/own-workdir`.
    pub scratch: &'static str,
    /// Why a URL that is not `http://` or `https://` is refused, after
    /// "is not an http:// or https:// URL; ".
    pub not_a_url: &'static str,
    /// What a malformed `sha256` stops, after "not a SHA-256 digest (64
    /// hex digits), so ".
    pub bad_checksum: &'static str,
    /// Whether the target writes multi-stage builds ([`Builder`]); if not,
    /// `builder` is the target's warning and the packages are installed
    /// in the image.
    pub multi_stage: bool,
}

impl Target {
    /// Where requirements files are copied before they are installed.
    pub fn requirements_dir(&self) -> String {
        format!("{}/requirements", self.scratch)
    }

    /// Where a `setup` step's script is written before `sh -e` runs it.
    pub fn setup_script(&self) -> String {
        format!("{}/setup.sh", self.scratch)
    }

    /// The mark the user step leaves when `workdir` is not in the base image.
    pub fn own_workdir_mark(&self) -> String {
        format!("{}/own-workdir", self.scratch)
    }

    /// Where the build stage puts the wheels it builds, and where the image
    /// sees them while it installs them.
    pub fn wheels_dir(&self) -> String {
        format!("{}/wheels", self.scratch)
    }

    fn hf_tmp(&self) -> String {
        format!("{}/hf", self.scratch)
    }
}

/// A built image's plan: the base image's facts and the steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The build's scratch folder ([`Target::scratch`]).
    pub scratch: &'static str,
    /// The package manager of the image (`system.manager`, or inferred).
    pub manager: SystemManager,
    /// Whether the Python packages go into a virtual environment at [`VENV`].
    pub venv: bool,
    /// In build order.
    pub steps: Vec<Step>,
    /// The build stage, when the env sets `builder` and the target writes
    /// multi-stage builds ([`Target::multi_stage`]): the Python packages
    /// are built into wheels there, and [`Step::Wheels`] installs only
    /// those wheels in the image.
    pub builder: Option<Builder>,
}

/// The build stage of a multi-stage build (`builder = image(...)`): the
/// system packages and Python set-up of the builder image, then the
/// requirements files and `python.packages` built as wheels (`pip wheel`,
/// every dependency included) into [`Target::wheels_dir`]. The image then
/// installs those wheels with `--no-index --no-deps` and gets no compiler,
/// header or index credential of the build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Builder {
    /// The builder image, as the IR holds it.
    pub image: ImageRef,
    /// [`Step::System`], [`Step::Venv`], [`Step::Requirements`],
    /// [`Step::Packages`] (their commands `pip wheel`), in order.
    pub steps: Vec<Step>,
}

/// Builds the plan of `spec` (one env with a `base`, not its services).
/// Warnings and errors go to `warnings`/`errors`, their fields prefixed
/// with `prefix` (`""` or `"services.webui."`); a step with a refused value
/// is left out, so a caller must write nothing when `errors` grew.
pub fn build(
    spec: &EnvSpec,
    base: &ImageRef,
    target: &Target,
    prefix: &str,
    files: &BTreeMap<String, String>,
    warnings: &mut Vec<FieldWarning>,
    errors: &mut Vec<FieldError>,
) -> Plan {
    let mut p = Planner {
        spec,
        target,
        prefix,
        files,
        warnings,
        errors,
    };
    let manager = spec
        .system
        .as_ref()
        .map(|s| s.manager)
        .unwrap_or_else(|| scl_ir::bases::manager(&base.reference));
    p.distinct_build_secrets();
    let info = scl_ir::bases::info(&base.reference);
    let setup_py = p.python_setup(&info, manager);
    p.no_manager(&base.reference, &info, &setup_py.packages, "");
    let mut steps = Vec::new();
    steps.extend(p.system(manager, &setup_py.packages));
    let workdir = p.workdir();
    let (user_step, chown) = p.user(&info, manager, workdir.is_some());
    steps.extend(user_step);
    if setup_py.venv {
        steps.push(Step::Venv {
            why: setup_py.why,
            shell: Shell::of(vec![Command::one(format!("python3 -m venv {VENV}"))]),
        });
    }
    p.assets(chown, &mut steps);
    p.python(base, &info, setup_py.venv, &mut steps);
    let builder = match &spec.builder {
        Some(b) if target.multi_stage => p.builder(b, &mut steps),
        _ => None,
    };
    let writable = p.writable_step(chown);
    p.setup(&mut steps);
    steps.push(Step::Env);
    steps.extend(writable);
    // The runtime user gets the working directory only when this build
    // made it (the user step notes whether it existed).
    if let (Some(w), Some(uid)) = (&workdir, chown) {
        let w = quote::shell(w);
        let mark = target.own_workdir_mark();
        steps.push(Step::OwnWorkdir {
            shell: Shell::of(vec![Command::lines(vec![
                format!("if [ -e {mark} ]; then"),
                format!("      mkdir -p {w} && chown -hR {uid} {w} && rm -f {mark};"),
                "    fi".into(),
            ])]),
        });
    }
    steps.push(Step::Runtime {
        user: spec.user.as_ref().map(|u| (u.uid, u.name.clone())),
        workdir: workdir.clone(),
    });
    let copies: Vec<(String, String, String)> = spec
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("files[{i}]"), f.from.clone(), f.to.clone()))
        .collect();
    if !copies.is_empty() {
        steps.push(Step::Files { copies, uid: chown });
    }
    Plan {
        scratch: target.scratch,
        manager,
        venv: setup_py.venv,
        steps,
        builder,
    }
}

/// The installer an install step's shell starts with ([`PIP`], [`UV_PIP`]
/// or [`UV_PIP_VENV`]).
fn installer_of(shell: &Shell) -> &'static str {
    let first = shell
        .commands
        .first()
        .and_then(|c| c.lines.first())
        .map(String::as_str);
    [UV_PIP_VENV, UV_PIP, PIP]
        .into_iter()
        .find(|i| first == Some(*i))
        .unwrap_or(PIP)
}

/// The build secrets an env's build reads, in order: each Hugging Face
/// token, then the index credentials.
pub fn build_secrets(spec: &EnvSpec) -> Vec<&SecretRef> {
    let mut v: Vec<&SecretRef> = spec
        .assets
        .iter()
        .filter_map(|a| match a {
            Asset::Huggingface { token, .. } => token.as_ref(),
            Asset::Url { .. } => None,
        })
        .collect();
    v.extend(
        spec.python
            .as_ref()
            .and_then(|p| p.index_credentials.as_ref()),
    );
    v
}

/// The id of a build secret for `r`: `<secret>.<key>`, when both are
/// `[A-Za-z0-9_.-]+` (what `docker build --secret id=…` and
/// `RUN --mount=type=secret,id=…` carry without quoting, and a file name
/// no shell or definition-file reader gives a meaning).
pub fn secret_id(r: &SecretRef) -> Option<String> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    (ok(&r.secret) && ok(&r.key)).then(|| format!("{}.{}", r.secret, r.key))
}

/// The environment variable `docker build --secret id=ID,env=VAR` reads a
/// secret from: the id upper-cased, `.` and `-` as `_` (`hf.token` →
/// `HF_TOKEN`), with a `_` in front when it would start with a digit (a
/// shell name cannot).
pub fn secret_env_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| match c {
            '.' | '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else {
        name
    }
}

/// The Python set-up an image needs ([`Planner::python_setup`]).
#[derive(Default)]
struct PythonSetup {
    /// OS packages to install first (`python3`, `python3-venv`).
    packages: Vec<&'static str>,
    /// Make a virtual environment at [`VENV`] and put it first on `PATH`.
    venv: bool,
    /// Why, for the comment.
    why: &'static str,
}

/// Whether a requirements file pins hashes (`--hash=sha256:…` on a
/// requirement line, or `--require-hashes`): pip then runs in
/// hash-checking mode, which requires a hash of every requirement of that
/// install (pip's "Secure installs" documentation).
fn pins_hashes(text: &str) -> bool {
    text.lines()
        .map(|l| l.split(" #").next().unwrap_or(l))
        .filter(|l| !l.trim_start().starts_with('#'))
        .any(|l| l.contains("--hash") || l.contains("--require-hashes"))
}

/// The state of planning one built env.
struct Planner<'a> {
    spec: &'a EnvSpec,
    target: &'a Target,
    prefix: &'a str,
    /// The requirements files' texts, by path ([`crate::LowerCx::files`]):
    /// read only to see whether one pins hashes.
    files: &'a BTreeMap<String, String>,
    warnings: &'a mut Vec<FieldWarning>,
    errors: &'a mut Vec<FieldError>,
}

impl Planner<'_> {
    fn warn(&mut self, field: impl AsRef<str>, message: impl Into<String>) {
        self.warnings.push(FieldWarning {
            field: format!("{}{}", self.prefix, field.as_ref()),
            message: message.into(),
        });
    }

    fn refuse(
        &mut self,
        field: impl AsRef<str>,
        kind: ErrorKind,
        message: impl Into<String>,
        help: Option<&str>,
    ) {
        self.errors.push(FieldError {
            field: format!("{}{}", self.prefix, field.as_ref()),
            kind,
            message: message.into(),
            help: help.map(str::to_string),
        });
    }

    /// `text` (a value already quoted) when it fits on a line
    /// ([`MAX_VALUE_BYTES`]), else `None` with an error.
    fn fits(&mut self, field: impl AsRef<str>, text: String) -> Option<String> {
        if text.len() <= MAX_VALUE_BYTES {
            return Some(text);
        }
        self.refuse(
            field,
            ErrorKind::Unwritable,
            format!(
                "is {} bytes long once quoted, more than the {MAX_VALUE_BYTES} {}",
                text.len(),
                self.target.value_limit
            ),
            None,
        );
        None
    }

    /// `value` shell-quoted, or `None` (with an error on `field`) when it
    /// holds a line break a command line cannot carry, or is too long.
    fn shell_arg(&mut self, field: impl AsRef<str>, value: &str) -> Option<String> {
        if quote::is_unwritable(value) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                quote::Unrepresentable.to_string(),
                None,
            );
            return None;
        }
        self.fits(field, quote::shell(value))
    }

    /// Like [`Planner::shell_arg`], but also refuses the empty string
    /// (`what` names the value: "a package name").
    fn shell_name(&mut self, field: impl AsRef<str>, value: &str, what: &str) -> Option<String> {
        if value.is_empty() {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                format!("is empty, which is not {what}"),
                None,
            );
            return None;
        }
        self.shell_arg(field, value)
    }

    /// The build stage of `builder`: the requirements and packages steps of
    /// `steps` move there as `pip wheel` into [`Target::wheels_dir`], and a
    /// [`Step::Wheels`] takes the place of the first of them. `None` (and a
    /// warning) when there is nothing for pip to build: no requirements or
    /// packages, or conda installs them.
    fn builder(&mut self, image: &ImageRef, steps: &mut Vec<Step>) -> Option<Builder> {
        let at = steps
            .iter()
            .position(|s| matches!(s, Step::Requirements { .. } | Step::Packages { .. }));
        let Some(at) = at else {
            self.warn(
                "builder",
                "there is nothing to build there (no requirements files or python.packages for pip or uv): the image is built from `base` alone",
            );
            return None;
        };
        let info = scl_ir::bases::info(&image.reference);
        let manager = scl_ir::bases::manager(&image.reference);
        let setup_py = self.python_setup(&info, manager);
        self.no_manager(&image.reference, &info, &setup_py.packages, "builder");
        let mut stage = Vec::new();
        stage.extend(self.system(manager, &setup_py.packages));
        if setup_py.venv {
            stage.push(Step::Venv {
                why: setup_py.why,
                shell: Shell::of(vec![Command::one(format!("python3 -m venv {VENV}"))]),
            });
        }
        let wheels = self.target.wheels_dir();
        let wheel = format!("python3 -m pip wheel --no-cache-dir --wheel-dir={wheels}");
        // The install lines, their installer replaced by `pip wheel`.
        let to_wheel = |shell: &Shell| {
            let mut shell = shell.clone();
            if let Some(first) = shell.commands.first_mut().and_then(|c| c.lines.first_mut()) {
                *first = wheel.clone();
            }
            shell
        };
        let mut installer = PIP;
        let mut rest = Vec::new();
        for step in steps.drain(..) {
            match step {
                Step::Requirements {
                    files,
                    with_packages,
                    hashed,
                    secret,
                    shell,
                } => {
                    installer = installer_of(&shell);
                    stage.push(Step::Requirements {
                        files,
                        with_packages,
                        hashed,
                        secret,
                        shell: to_wheel(&shell),
                    });
                }
                Step::Packages { secret, shell } => {
                    installer = installer_of(&shell);
                    stage.push(Step::Packages {
                        secret,
                        shell: to_wheel(&shell),
                    });
                }
                other => rest.push(other),
            }
        }
        rest.insert(
            at,
            Step::Wheels {
                shell: Shell::of(vec![Command::one(format!(
                    "{installer} --no-index --no-deps {wheels}/*.whl"
                ))]),
            },
        );
        *steps = rest;
        Some(Builder {
            image: image.clone(),
            steps: stage,
        })
    }

    /// `E0408` for what would be installed into an image without a package
    /// manager (the micro images): the system packages, and the `python3`
    /// (`python`, from [`Self::python_setup`]) that the Python packages,
    /// requirements or Hugging Face assets need. `stage` is `"builder"` for
    /// the build stage (the error is then at `builder`), else empty.
    fn no_manager(&mut self, image: &str, info: &BaseInfo, python: &[&str], stage: &str) {
        if info.has_manager {
            return;
        }
        let spec = self.spec;
        let image_name = if stage.is_empty() {
            "base image"
        } else {
            "builder image"
        };
        let lacks = format!(
            "the {image_name} {} has no package manager (a micro image)",
            quote::comment(image)
        );
        let help = Some("build on an image that has one (`ubi9/ubi-minimal`, `almalinux:9-minimal`, `ubi9/ubi`), or fill the micro image from another stage of your own");
        let at = |field: &str| {
            if stage.is_empty() {
                field.to_string()
            } else {
                stage.to_string()
            }
        };
        if spec.system.as_ref().is_some_and(|s| !s.packages.is_empty()) {
            self.refuse(
                at("system.packages"),
                ErrorKind::BaseLacks,
                format!("{lacks}, so the system packages cannot be installed"),
                help,
            );
        }
        if !python.is_empty() {
            let py = spec.python.as_ref();
            let field = if py.is_some_and(|p| !p.packages.is_empty()) {
                "python.packages"
            } else if py.is_some_and(|p| !p.requirements.is_empty()) {
                "python.requirements"
            } else {
                "assets"
            };
            self.refuse(
                at(field),
                ErrorKind::BaseLacks,
                format!(
                    "{lacks} and no Python, so the Python that `{field}` needs cannot be installed"
                ),
                help,
            );
        }
    }

    /// What the image needs before anything is installed with Python: the
    /// OS packages that give it a Python (when the base has none) and a
    /// virtual environment (when the base's Python is not meant to be
    /// installed into, by the base-image table).
    fn python_setup(&mut self, info: &BaseInfo, manager: SystemManager) -> PythonSetup {
        let spec = self.spec;
        let py = spec.python.as_ref();
        let installs = py.is_some_and(|p| !p.packages.is_empty() || !p.requirements.is_empty());
        let hf = spec
            .assets
            .iter()
            .any(|a| matches!(a, Asset::Huggingface { .. }));
        let conda = py.is_some_and(|p| p.manager == PythonManager::Conda);
        if !(installs || hf) || conda {
            return PythonSetup::default();
        }
        let venv = info.python_env == PythonEnv::Venv;
        let mut packages: Vec<&'static str> = Vec::new();
        if !info.has_python {
            packages.push("python3");
        }
        if venv && manager == SystemManager::Apt {
            // Debian and Ubuntu split venv (and its ensurepip) out of python3.
            packages.push("python3-venv");
        }
        let why = if info.externally_managed {
            "the base image's Python is externally managed (PEP 668), so pip may not install into it"
        } else {
            "the base image's Python belongs to its package manager"
        };
        PythonSetup {
            packages,
            venv,
            why,
        }
    }

    /// Two different secrets that would share a build-secret id
    /// (`secret("a.b", "c")` and `secret("a", "b.c")` are both `a.b.c`) or
    /// the environment variable `docker build --secret` reads (`a-b.c` and
    /// `a_b.c` are both `A_B_C`) are refused: one could be given to the
    /// other's step. The same secret used twice is one secret.
    fn distinct_build_secrets(&mut self) {
        let mut seen: Vec<(&SecretRef, String, String)> = Vec::new();
        for r in build_secrets(self.spec) {
            let Some(id) = secret_id(r) else { continue };
            let env = secret_env_name(&id);
            if let Some((o, _, _)) = seen
                .iter()
                .find(|(o, i, e)| *o != r && (*i == id || *e == env))
            {
                let field = self
                    .spec
                    .python
                    .as_ref()
                    .and_then(|p| p.index_credentials.as_ref())
                    .filter(|c| *c == r)
                    .map_or("assets", |_| "python.index_credentials");
                self.refuse(
                    field,
                    ErrorKind::NameClash,
                    format!(
                        "the secrets `{}`/`{}` and `{}`/`{}` would be one build secret (id `{id}`, variable `{env}`), so one could be given to the other's step",
                        o.secret, o.key, r.secret, r.key
                    ),
                    Some("name the secrets or keys so that they differ in more than `.`, `-` and `_`"),
                );
                return;
            }
            seen.push((r, id, env));
        }
    }

    /// The id of a build secret: `<secret>.<key>`. Refused unless it is
    /// `[A-Za-z0-9_.-]+`, the characters of Kubernetes Secret names and
    /// keys, which no flag parser reads as anything else.
    fn secret_id(&mut self, field: &str, r: &SecretRef) -> Option<String> {
        match secret_id(r) {
            Some(id) => Some(id),
            None => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!(
                        "the secret name {:?} or key {:?} has characters other than letters, digits, `_`, `.` and `-`, which a build-secret id cannot hold",
                        quote::comment(&r.secret),
                        quote::comment(&r.key)
                    ),
                    Some("name the secret and its key with letters, digits, `_`, `.` and `-`"),
                );
                None
            }
        }
    }

    /// The system packages step, or none. For apt, each package must be
    /// an [`apt_package`] argument, and the names apt could still misread
    /// ([`apt_needs_exact_check`]) are checked after the install.
    fn system(&mut self, manager: SystemManager, extra: &[&str]) -> Option<Step> {
        let none = Vec::new();
        let listed = self.spec.system.as_ref().map_or(&none, |s| &s.packages);
        let mut packages = Vec::new();
        let mut verify = Vec::new();
        // What the Python set-up needs first (plain names, nothing to check).
        for p in extra {
            if !listed.iter().any(|l| &**l == *p) {
                packages.push(quote::shell(p));
            }
        }
        for (i, p) in listed.iter().enumerate() {
            let field = format!("system.packages[{i}]");
            if manager == SystemManager::Apt && !p.is_empty() && !quote::is_unwritable(p) {
                match apt_package(p) {
                    Err(why) => {
                        self.refuse(
                            &field,
                            ErrorKind::PackagePattern,
                            format!("{:?} {why}", quote::comment(p)),
                            Some("write one Debian package name (`curl`, `libssl-dev`), optionally with `:ARCH`, `=VERSION` or `/RELEASE`"),
                        );
                        continue;
                    }
                    Ok(name) if apt_needs_exact_check(name) => {
                        // By name, whatever the architecture (dpkg-query
                        // reads `name:any` otherwise than apt-get).
                        let name = name.split(':').next().unwrap_or(name);
                        verify.push(quote::shell(name));
                    }
                    Ok(_) => {}
                }
            }
            let rpm = match manager {
                SystemManager::Dnf => {
                    Some("dnf would read it as an option (dnf 5 has no `--` to end the options)")
                }
                SystemManager::Yum => Some("yum would read it as an option"),
                SystemManager::Microdnf => Some("microdnf would read it as an option"),
                SystemManager::Apt | SystemManager::Apk => None,
            };
            if let Some(why) = rpm.filter(|_| p.starts_with('-')) {
                self.refuse(
                    &field,
                    ErrorKind::Misread,
                    format!("{:?} starts with `-`, so {why}", quote::comment(p)),
                    Some("write the package's name, without a leading `-`"),
                );
                continue;
            }
            packages.extend(self.shell_name(&field, p, "a package name"));
        }
        if packages.is_empty() {
            return None;
        }
        let args = |head: &str, packages: &[String]| {
            let mut lines = vec![head.to_string()];
            lines.extend(packages.iter().map(|p| format!("      {p}")));
            Command::lines(lines)
        };
        let commands = match manager {
            SystemManager::Apt => {
                let message = quote::shell(
                    "sclc: apt-get did not install the package %s under that exact name: it may have read the name as a pattern, or it is a virtual package (then name a package that provides it)\\n",
                );
                let mut c = vec![
                    Command::one("apt-get update"),
                    args("DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o APT::Cmd::Pattern-Only=true --", &packages),
                ];
                for p in &verify {
                    c.push(Command::lines(vec![
                        format!("case \"$(dpkg-query -W -f='${{db:Status-Abbrev}}' -- {p} 2>/dev/null)\" in"),
                        "      ?i*) ;;".into(),
                        format!("      *) printf {message} {p} >&2; exit 1 ;;"),
                        "    esac".into(),
                    ]));
                }
                c.push(Command::one("rm -rf /var/lib/apt/lists/*"));
                c
            }
            SystemManager::Apk => vec![args("apk add --no-cache --", &packages)],
            SystemManager::Dnf => vec![
                args("dnf install -y", &packages),
                Command::one("dnf clean all"),
            ],
            SystemManager::Yum => vec![args(YUM_INSTALL, &packages), Command::one("yum clean all")],
            SystemManager::Microdnf => vec![
                args("microdnf install -y", &packages),
                Command::one("microdnf clean all"),
            ],
        };
        Some(Step::System {
            manager,
            shell: Shell::of(commands),
        })
    }

    /// `workdir`, or `None` when unset or refused: it must be absolute and
    /// not `/` or a top-level system folder.
    fn workdir(&mut self) -> Option<String> {
        let w = self.spec.workdir.as_ref()?;
        if quote::is_unwritable(w) {
            self.refuse(
                "workdir",
                ErrorKind::Unwritable,
                quote::Unrepresentable.to_string(),
                None,
            );
            return None;
        }
        if !w.starts_with('/') {
            self.refuse(
                "workdir",
                ErrorKind::SystemFolder,
                format!("{w:?} is not an absolute path"),
                Some("write an absolute path such as \"/workspace\""),
            );
            return None;
        }
        let normal = normalize_path(w);
        if is_system_folder(&normal) {
            self.refuse(
                "workdir",
                ErrorKind::SystemFolder,
                format!(
                    "{w:?} is {}, which the runtime user must not be given",
                    if normal == "/" {
                        "the root folder".to_string()
                    } else {
                        format!("the system folder {normal}")
                    }
                ),
                Some("use a folder of its own, such as \"/workspace\" or \"/usr/src/app\""),
            );
            return None;
        }
        self.fits("workdir", w.clone())
    }

    /// The user-creation step (none for root or an unset user) and the uid
    /// files are given to (none for root: they stay root's). Ownership goes
    /// by the numeric uid, so it never depends on a name the base image may
    /// already use for another uid.
    fn user(
        &mut self,
        info: &BaseInfo,
        manager: SystemManager,
        has_workdir: bool,
    ) -> (Option<Step>, Option<u32>) {
        let spec = self.spec;
        let Some(u) = &spec.user else {
            let text = self.target.user_unset;
            self.warn("user", text);
            return (None, None);
        };
        if u.is_root() {
            return (None, None);
        }
        if !info.has_manager && !info.has_useradd {
            self.refuse(
                "user",
                ErrorKind::BaseLacks,
                format!(
                    "the base image {} has no `useradd` and no package manager to install it with (a micro image), so the runtime user cannot be created",
                    quote::comment(spec.base.as_ref().map_or("", |b| b.reference.as_str()))
                ),
                Some("run as root (`user = { name = \"root\", uid = 0 }`), or build on an image with a package manager (`ubi9/ubi-minimal`, `almalinux:9-minimal`)"),
            );
            return (None, Some(u.uid));
        }
        if !u.name.is_empty() && u.name.chars().all(|c| c.is_ascii_digit()) {
            self.refuse(
                "user.name",
                ErrorKind::Misread,
                format!(
                    "{:?} is only digits, so id, chown and useradd would read it as a uid",
                    u.name
                ),
                Some("give the user a name that starts with a letter, such as \"app\""),
            );
        }
        let Some(name) = self.shell_name("user.name", &u.name, "a user name") else {
            return (None, Some(u.uid));
        };
        let message = format!(
            "sclc: the base image already has a user {} with another uid than {}; choose another user.name or user.uid",
            u.name, u.uid
        );
        let Some(message) = self.fits("user.name", quote::shell(&message)) else {
            return (None, Some(u.uid));
        };
        let uid = u.uid;
        let create = if manager == SystemManager::Apk {
            format!("      adduser -D -u {uid} -- {name};")
        } else {
            format!("      useradd --create-home --no-log-init --non-unique --uid {uid} -- {name};")
        };
        let mut commands = Vec::new();
        // The minimal images and Amazon Linux have no `useradd`:
        // shadow-utils has it, installed with the manager the system
        // packages are installed with.
        let tool = match manager {
            SystemManager::Dnf => Some(("dnf install -y", "dnf")),
            SystemManager::Yum => Some((YUM_INSTALL, "yum")),
            SystemManager::Microdnf => Some(("microdnf install -y", "microdnf")),
            SystemManager::Apt | SystemManager::Apk => None,
        };
        if let Some((install, tool)) = tool.filter(|_| !info.has_useradd) {
            commands.push(Command::one(format!("{install} shadow-utils")));
            commands.push(Command::one(format!("{tool} clean all")));
        }
        commands.push(Command::lines(vec![
            format!("if ! id -u -- {name} >/dev/null 2>&1; then"),
            create,
            format!("    elif uid=$(id -u -- {name}) && [ \"$uid\" != {uid} ]; then"),
            format!("      printf '%s\\n' {message} >&2;"),
            "      exit 1;".into(),
            "    fi".into(),
        ]));
        let notes_workdir = match (&spec.workdir, has_workdir) {
            (Some(w), true) => {
                commands.push(Command::one(format!(
                    "if [ ! -e {} ]; then mkdir -p {} && touch {}; fi",
                    quote::shell(w),
                    self.target.scratch,
                    self.target.own_workdir_mark()
                )));
                true
            }
            _ => false,
        };
        (
            Some(Step::User {
                name: u.name.clone(),
                uid,
                notes_workdir,
                shell: Shell::of(commands),
            }),
            Some(uid),
        )
    }

    fn assets(&mut self, uid: Option<u32>, steps: &mut Vec<Step>) {
        for (i, asset) in self.spec.assets.iter().enumerate() {
            let field = format!("assets[{i}]");
            match asset {
                Asset::Url { url, sha256, to } => {
                    if !self.url_is_http(&format!("{field}.url"), url) {
                        continue;
                    }
                    let dest = join_path(to, &url_basename(url));
                    if quote::is_unwritable(&dest) {
                        // The destination ends in the URL's file name.
                        let which = if quote::is_unwritable(url) {
                            "url"
                        } else {
                            "to"
                        };
                        self.refuse(
                            format!("{field}.{which}"),
                            ErrorKind::Unwritable,
                            quote::Unrepresentable.to_string(),
                            None,
                        );
                        continue;
                    }
                    let sha256 = match sha256 {
                        Some(h) if is_sha256_hex(h) => Some(h.to_ascii_lowercase()),
                        Some(_) => {
                            self.refuse(
                                format!("{field}.sha256"),
                                ErrorKind::Unwritable,
                                format!(
                                    "not a SHA-256 digest (64 hex digits), so {}",
                                    self.target.bad_checksum
                                ),
                                Some(
                                    "copy the file's sha256 (64 hex digits) or leave `sha256` out",
                                ),
                            );
                            continue;
                        }
                        None => None,
                    };
                    let (Some(url_q), Some(to_q), Some(dest_q)) = (
                        self.fits(format!("{field}.url"), quote::shell(url)),
                        self.fits(format!("{field}.to"), quote::shell(to)),
                        self.fits(format!("{field}.to"), quote::shell(&dest)),
                    ) else {
                        continue;
                    };
                    let fetch = url_fetch(&field, &url_q, &to_q, &dest_q, sha256.as_deref(), uid);
                    steps.push(Step::Url {
                        field,
                        url: url.clone(),
                        dest,
                        sha256,
                        uid,
                        fetch,
                    });
                }
                Asset::Huggingface {
                    repo,
                    files,
                    revision,
                    to,
                    token,
                } => {
                    let repo_q = self.shell_name(format!("{field}.repo"), repo, "a repo id");
                    let rev_q =
                        self.shell_name(format!("{field}.revision"), revision, "a revision");
                    let to_q = self.shell_name(format!("{field}.to"), to, "a folder");
                    let mut files_q = Vec::new();
                    for (j, f) in files.iter().enumerate() {
                        files_q.extend(self.shell_name(
                            format!("{field}.files[{j}]"),
                            f,
                            "a file name",
                        ));
                    }
                    let (Some(repo_q), Some(rev_q), Some(to_q)) = (repo_q, rev_q, to_q) else {
                        continue;
                    };
                    if files_q.len() != files.len() {
                        continue;
                    }
                    let secret = match token {
                        Some(r) => match self.secret_id(&format!("{field}.token"), r) {
                            Some(id) => Some(BuildSecret {
                                field: format!("{field}.token"),
                                id,
                                reads: SecretUse::Contents("HF_TOKEN"),
                            }),
                            None => continue,
                        },
                        None => None,
                    };
                    let hf_tmp = self.target.hf_tmp();
                    let mut download = vec![format!(
                        "PYTHONPATH={hf_tmp} python3 -c {}",
                        quote::shell(HF_DOWNLOAD)
                    )];
                    for a in [&repo_q, &rev_q, &to_q].into_iter().chain(&files_q) {
                        download.push(format!("      {a}"));
                    }
                    let mut commands = vec![
                        Command::one(format!("{PIP} --target {hf_tmp} {HUGGINGFACE_HUB}")),
                        Command {
                            lines: download,
                            secret: secret.is_some(),
                        },
                        Command::one(format!("rm -rf {hf_tmp}")),
                    ];
                    if let Some(uid) = uid {
                        commands.push(Command::one(format!("chown -R -- {uid} {to_q}")));
                    }
                    steps.push(Step::Huggingface {
                        field,
                        repo: repo.clone(),
                        revision: revision.clone(),
                        to: to.clone(),
                        secret,
                        shell: Shell::of(commands),
                    });
                }
            }
        }
    }

    /// Whether `url` is an `http://` or `https://` URL without whitespace
    /// or control characters.
    fn url_is_http(&mut self, field: &str, url: &str) -> bool {
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                "contains whitespace or a control character, which a URL cannot hold",
                Some("percent-encode it (a space is %20)"),
            );
            return false;
        }
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            self.refuse(
                field,
                ErrorKind::Misread,
                format!(
                    "{:?} is not an http:// or https:// URL; {}",
                    quote::comment(url),
                    self.target.not_a_url
                ),
                None,
            );
            return false;
        }
        true
    }

    /// The Python steps: notes, the uv install, conda, requirements files,
    /// packages.
    fn python(&mut self, base: &ImageRef, info: &BaseInfo, venv: bool, steps: &mut Vec<Step>) {
        let spec = self.spec;
        let manager = spec
            .python
            .as_ref()
            .map(|p| p.manager)
            .unwrap_or(PythonManager::Pip);
        let installer = match (manager, venv) {
            // uv installs into the environment VIRTUAL_ENV names.
            (PythonManager::Uv, true) => UV_PIP_VENV,
            (PythonManager::Uv, false) => UV_PIP,
            _ => PIP,
        };
        let wants_conda = manager == PythonManager::Conda
            || spec.conda.as_ref().is_some_and(|c| !c.packages.is_empty());
        if wants_conda && !info.has_conda && info.family != Family::Unknown {
            let field = if manager == PythonManager::Conda {
                "python.manager"
            } else {
                "conda.packages"
            };
            self.refuse(
                field,
                ErrorKind::BaseLacks,
                format!(
                    "the base image {} has no conda, and sclc does not download an installer into an image",
                    quote::comment(&base.reference)
                ),
                Some(&format!(
                    "build on an image that has conda ({CONDA_IMAGES}), or install the packages with pip"
                )),
            );
        }
        // Credentials for the package indexes: a build secret read through
        // NETRC by pip and uv, for the install lines only.
        let mut secret = None;
        if let Some(r) = spec
            .python
            .as_ref()
            .and_then(|p| p.index_credentials.as_ref())
        {
            if let Some(id) = self.secret_id("python.index_credentials", r) {
                secret = Some(BuildSecret {
                    field: "python.index_credentials".into(),
                    id,
                    reads: SecretUse::Path("NETRC"),
                });
            }
        }

        let mut note = None;
        let mut index_args = Vec::new();
        let mut requirements = Vec::new();
        let mut packages = Vec::new();
        if let Some(py) = &spec.python {
            if let Some(v) = &py.version {
                match python_image_tag(&base.reference) {
                    Some(tag) if !version_matches(tag, v) => self.warn(
                        "python.version",
                        format!(
                            "the base image {} (tag {tag}) does not provide Python {v}, and {} does not install Python",
                            base.reference, self.target.file
                        ),
                    ),
                    Some(_) => {}
                    None => note = Some(Step::PythonNote { version: v.clone() }),
                }
            }
            if let Some(u) = &py.index_url {
                if let Some(q) = self.shell_name("python.index_url", u, "a URL") {
                    index_args.push(format!("--index-url={q}"));
                }
            }
            for (i, u) in py.extra_index_urls.iter().enumerate() {
                if let Some(q) =
                    self.shell_name(format!("python.extra_index_urls[{i}]"), u, "a URL")
                {
                    index_args.push(format!("--extra-index-url={q}"));
                }
            }
            for (n, r) in py.requirements.iter().enumerate() {
                let field = format!("python.requirements[{n}]");
                if quote::is_unwritable(&r.path) {
                    self.refuse(
                        &field,
                        ErrorKind::Unwritable,
                        quote::Unrepresentable.to_string(),
                        None,
                    );
                    continue;
                }
                let dest = format!(
                    "{}/{n}-{}",
                    self.target.requirements_dir(),
                    basename(&r.path)
                );
                if let Some(dest_q) = self.shell_arg(&field, &dest) {
                    requirements.push((
                        Requirement {
                            field,
                            path: r.path.clone(),
                            dest,
                        },
                        dest_q,
                    ));
                }
            }
            for (i, p) in py.packages.iter().enumerate() {
                packages.extend(self.shell_name(
                    format!("python.packages[{i}]"),
                    p,
                    "a requirement",
                ));
            }
        }

        let mut conda = None;
        if let Some(c) = &spec.conda {
            let mut channels = Vec::new();
            for (i, ch) in c.channels.iter().enumerate() {
                if let Some(q) = self.shell_name(format!("conda.channels[{i}]"), ch, "a channel") {
                    channels.push(format!("--channel={q}"));
                }
            }
            let mut cpkgs = Vec::new();
            for (i, p) in c.packages.iter().enumerate() {
                cpkgs.extend(self.shell_name(format!("conda.packages[{i}]"), p, "a match spec"));
            }
            if !cpkgs.is_empty() {
                let mut lines = vec!["conda install -y".to_string()];
                lines.extend(channels.iter().map(|c| format!("      {c}")));
                lines.push("      --".into());
                lines.extend(cpkgs.iter().map(|p| format!("      {p}")));
                conda = Some(Step::Conda {
                    shell: Shell::of(vec![
                        Command::lines(lines),
                        Command::one("conda clean -afy"),
                    ]),
                });
            } else if c.packages.is_empty() && !c.channels.is_empty() {
                self.warn(
                    "conda.channels",
                    "no conda packages to install, so the channels are not used",
                );
            }
        }

        steps.extend(note);
        if manager == PythonManager::Uv && !(requirements.is_empty() && packages.is_empty()) {
            steps.push(Step::Tool {
                shell: Shell::of(vec![Command::one(format!("{PIP} {}", quote::shell(UV)))]),
            });
        }
        steps.extend(conda);
        let install = |tail: Vec<String>| {
            let mut lines = vec![installer.to_string()];
            lines.extend(index_args.iter().map(|a| format!("      {a}")));
            lines.extend(tail);
            Shell::of(vec![Command {
                lines,
                secret: secret.is_some(),
            }])
        };
        // The requirements files and `python.packages` go to one install:
        // pip resolves once with every pin. Two installs resolve twice: a
        // requirement that needs torch (`accelerate`) pulled the newest torch
        // first, and the next layer replaced it with the pinned one (two
        // downloads of gigabytes, both kept in the image's layers). Except
        // when a file pins hashes (`pip-compile --generate-hashes`, `uv
        // export`): pip then requires a hash of every requirement of the
        // install, and the packages have none, so they are installed on
        // their own, first (a `torch==2.5.1` of the lock is then satisfied
        // by the `torch==2.5.1+cu124` installed before it).
        let hashed = requirements.iter().any(|(r, _)| {
            self.files
                .get(&r.path)
                .is_some_and(|text| pins_hashes(text))
        });
        let together = !hashed && !packages.is_empty() && !requirements.is_empty();
        if !together && !packages.is_empty() {
            let mut tail = vec!["      --".to_string()];
            tail.extend(packages.iter().map(|p| format!("      {p}")));
            steps.push(Step::Packages {
                shell: install(tail),
                secret: secret.clone(),
            });
        }
        if !requirements.is_empty() {
            let mut tail: Vec<String> = requirements
                .iter()
                .map(|(_, d)| format!("      -r {d}"))
                .collect();
            if together {
                tail.push("      --".to_string());
                tail.extend(packages.iter().map(|p| format!("      {p}")));
            }
            let shell = install(tail);
            steps.push(Step::Requirements {
                files: requirements.into_iter().map(|(r, _)| r).collect(),
                with_packages: together,
                hashed,
                secret: secret.clone(),
                shell,
            });
        }
    }

    /// The folders the runtime user must write, in order and without
    /// repeats: `writable`, then each volume mount point that is not
    /// read-only. Each is created and given to the runtime user (the folder
    /// itself: what is in it keeps its owner). Asset targets need no step
    /// of their own: a URL download is given to the user, and a Hugging
    /// Face download gives its folder to the user in its own step. Refused:
    /// a path that is not absolute or is `/` or a top-level system folder.
    /// None without a non-root user.
    fn writable_step(&mut self, uid: Option<u32>) -> Option<Step> {
        let spec = self.spec;
        let mut dirs: Vec<(String, String)> = Vec::new();
        for (i, w) in spec.writable.iter().enumerate() {
            dirs.push((format!("writable[{i}]"), w.clone()));
        }
        for (i, v) in spec.volumes.iter().enumerate() {
            if v.mode != VolumeMode::ReadOnly {
                dirs.push((format!("volumes[{i}].mount"), v.mount.to_string()));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut quoted = Vec::new();
        for (field, d) in dirs {
            if !field.starts_with("writable") && quote::is_unwritable(&d) {
                // Refused where the volume is written.
                continue;
            }
            let normal = normalize_path(&d);
            // Inside a folder of the system (CA certificates in /etc/ssl,
            // the kernel's /proc) or sclc's virtual environment, the user
            // could change what every process trusts or runs.
            let inside = [
                "/etc",
                "/proc",
                "/sys",
                "/dev",
                "/boot",
                "/bin",
                "/sbin",
                "/usr/bin",
                "/usr/sbin",
                "/usr/lib",
                VENV,
            ]
            .iter()
            .any(|p| normal == *p || normal.starts_with(&format!("{p}/")))
                || normal.starts_with("/lib");
            if !d.starts_with('/') || is_system_folder(&normal) || inside {
                if field.starts_with("writable") {
                    self.refuse(
                        &field,
                        ErrorKind::SystemFolder,
                        format!("{:?} is not an absolute path of a folder of its own, so the runtime user cannot be given it", quote::comment(&d)),
                        Some("use a folder such as \"/cache/huggingface\""),
                    );
                }
                continue;
            }
            if !seen.insert(normal.clone()) {
                continue;
            }
            quoted.extend(self.shell_arg(&field, &normal));
        }
        let uid = uid?;
        if quoted.is_empty() {
            return None;
        }
        let dirs: String = quoted.iter().map(|d| format!(" {d}")).collect();
        Some(Step::Writable {
            shell: Shell::of(vec![
                Command::one(format!("mkdir -p --{dirs}")),
                Command::one(format!("chown -- {uid}{dirs}")),
            ]),
        })
    }

    /// The `setup` steps: each as the `printf` words of its lines
    /// ([`quote::shell_lines`]).
    fn setup(&mut self, steps: &mut Vec<Step>) {
        let mut first = true;
        for (i, step) in self.spec.setup.iter().enumerate() {
            let field = format!("setup[{i}]");
            let lines = match quote::shell_lines(step) {
                Ok(lines) => lines,
                Err(_) => {
                    self.refuse(
                        &field,
                        ErrorKind::Unwritable,
                        format!("contains NUL or a character a reader of {} would not see (a carriage return, an escape, a bidirectional override)", self.target.file),
                        None,
                    );
                    continue;
                }
            };
            if let Some((j, n)) = lines
                .iter()
                .map(String::len)
                .enumerate()
                .find(|(_, n)| *n > MAX_VALUE_BYTES)
            {
                let limit = self
                    .target
                    .value_limit
                    .replacen("value", "line of a step", 1);
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "line {} is {n} bytes long once quoted, more than the {MAX_VALUE_BYTES} {limit}",
                        j + 1
                    ),
                    Some("split the line, or put the long text in a file of the build context"),
                );
                continue;
            }
            let mut printf = vec!["printf '%s\\n'".to_string()];
            printf.extend(lines.iter().map(|l| format!("      {l}")));
            let script = self.target.setup_script();
            printf.push(format!("      > {script}"));
            steps.push(Step::Setup {
                field,
                first,
                text: step.clone(),
                shell: Shell::of(vec![
                    Command::one(format!("mkdir -p {}", self.target.scratch)),
                    Command::lines(printf),
                    Command::one(format!("sh -e {script}")),
                    Command::one(format!("rm -f {script}")),
                ]),
            });
            first = false;
        }
    }
}

/// The download of a URL by a tool of the image (curl, then wget, then
/// Python's standard library), its check against the SHA-256 when there is
/// one, and the file given to `uid`. The arguments are quoted.
fn url_fetch(
    field: &str,
    url: &str,
    to: &str,
    dest: &str,
    sha256: Option<&str>,
    uid: Option<u32>,
) -> Shell {
    let no_tool = quote::shell(&format!(
        "sclc: {field} needs curl, wget or python3 in the image to be downloaded; add curl to system.packages"
    ));
    let mut commands = vec![
        Command::one(format!("mkdir -p -- {to}")),
        Command::lines(vec![
            "if command -v curl >/dev/null 2>&1; then".into(),
            format!("      curl -fsSL -o {dest} {url};"),
            "    elif command -v wget >/dev/null 2>&1; then".into(),
            format!("      wget -q -O {dest} {url};"),
            "    elif command -v python3 >/dev/null 2>&1; then".into(),
            format!(
                "      python3 -c {} {url} {dest};",
                quote::shell(URL_DOWNLOAD)
            ),
            "    else".into(),
            format!("      printf '%s\\n' {no_tool} >&2;"),
            "      exit 1;".into(),
            "    fi".into(),
        ]),
    ];
    if let Some(h) = sha256 {
        let mismatch = quote::shell(&format!(
            "sclc: the download of {field} does not have the sha256 of the source"
        ));
        commands.push(Command::lines(vec![
            format!("if [ \"$(sha256sum < {dest})\" != '{h}  -' ]; then"),
            format!("      printf '%s\\n' {mismatch} >&2;"),
            "      exit 1;".into(),
            "    fi".into(),
        ]));
    }
    if let Some(uid) = uid {
        commands.push(Command::one(format!("chown -- {uid} {dest}")));
    }
    Shell::of(commands)
}

/// The `name[:arch]` part of an argument of `apt-get install`, when the
/// argument names one package and apt cannot read it as anything else;
/// else why not.
///
/// apt-get reads each argument (apt, `apt-pkg/cacheset.cc`,
/// `VersionContainerInterface::FromString` and
/// `CacheSetHelper::PackageFromString`): the text after the last `=` or
/// `/` is a version or a release, the rest is tried in turn as an apt
/// pattern (a leading `?`, and `~` in apt ≥ 2.0, apt-patterns(7)), an exact
/// package name (`:arch` after the last `:`), a task (a trailing `^`), an
/// fnmatch glob (when it holds one of `.?*[]!`) and a POSIX regular
/// expression (when it holds one of `.?+*|[^$`); a trailing `+` or `-` on the
/// whole argument means "install" or "remove" (`apt-private/private-install.cc`).
/// So the argument must be `NAME[:ARCH][=VERSION|/RELEASE]` with
/// - NAME a Debian package name (Debian Policy §5.6.7: lower-case letters,
///   digits, `+`, `-` and `.`, at least two characters, starting with a
///   letter or digit), which has none of apt's pattern, glob or task
///   characters but `.` and `+`;
/// - ARCH lower-case letters, digits and `-` (`amd64`, `arm64`, `any`);
/// - VERSION the characters of a Debian version (§5.6.12: letters, digits,
///   `. + ~ - :`) and RELEASE those of an archive or codename
///   (`bookworm-backports`: letters, digits, `. + ~ _ -`);
/// - and not ending in `-` (apt would remove the package).
///
/// A name with `.` or `+` is still one apt may read as a glob or a regular
/// expression when no package has exactly that name (`libzstd.` installed 28
/// packages on Debian 12); [`apt_needs_exact_check`] says which, and the
/// install turns the fallback off (`-o APT::Cmd::Pattern-Only=true`, apt
/// ≥ 1.9.6: a glob of `[A-Za-z0-9+.:*-]` only, no regular expression unless
/// it starts with `^` or ends with `$`) and checks after the install that a
/// package of exactly each such name is installed (`dpkg-query`, for any
/// architecture), since older apt ignores the option.
pub fn apt_package(arg: &str) -> Result<&str, &'static str> {
    let head = match arg.rfind(['=', '/']) {
        Some(i) => {
            let tail = &arg[i + 1..];
            let ok = if arg.as_bytes()[i] == b'=' {
                !tail.is_empty()
                    && tail
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".+~-:".contains(c))
            } else {
                !tail.is_empty()
                    && tail
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".+~_-".contains(c))
            };
            if !ok {
                return Err("has a version (after `=`) or release (after `/`) that is not one: apt-get would read it as another one, or as a pattern");
            }
            &arg[..i]
        }
        None => arg,
    };
    let name = match head.rsplit_once(':') {
        Some((name, arch)) => {
            let ok = !arch.is_empty()
                && arch
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !ok {
                return Err("has an architecture (after `:`) that is not one (`amd64`, `arm64`): apt-get could read it as a pattern");
            }
            name
        }
        None => head,
    };
    let name_ok = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !name_ok {
        return Err("is not a Debian package name (lower-case letters, digits, `+ - .`, at least two characters, starting with a letter or digit), so it names no package, and apt-get reads such a name as a regular expression, a glob, an apt pattern or a task where it can, installing other packages");
    }
    if arg.ends_with('-') {
        return Err("ends in `-`, which apt-get reads as \"remove this package\"");
    }
    Ok(head)
}

/// Whether apt could read the package name `name_arch` (the `Ok` of
/// [`apt_package`]) as a glob or a regular expression when no package has
/// exactly that name: when its name holds `.` or `+` (the only pattern
/// characters a Debian name may have), or ends in `+` (apt's "install"
/// suffix, stripped when no package has the whole name).
pub fn apt_needs_exact_check(name_arch: &str) -> bool {
    let name = name_arch.split(':').next().unwrap_or(name_arch);
    name.contains(['.', '+'])
}

/// `path` with `.` and empty segments removed and `..` applied (never above
/// `/`): `/usr/../etc/` → `/etc`, `//` → `/`.
pub(crate) fn normalize_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `/` and the top-level folders of a Linux image that belong to the
/// system: `/bin /boot /dev /etc /lib* /proc /run /sbin /sys /usr /var`.
pub(crate) fn is_system_folder(normal: &str) -> bool {
    let Some(top) = normal.strip_prefix('/') else {
        return true;
    };
    top.is_empty()
        || (!top.contains('/')
            && (matches!(
                top,
                "bin" | "boot" | "dev" | "etc" | "proc" | "run" | "sbin" | "sys" | "usr" | "var"
            ) || top.starts_with("lib")))
}

/// The tag of an official-style Python image (`python:3.10-slim`,
/// `docker.io/library/python:3.11`), or `None` for any other image (or an
/// untagged one).
pub(crate) fn python_image_tag(image: &str) -> Option<&str> {
    let (repo, tag) = scl_ir::bases::split_ref(image);
    (repo.rsplit('/').next() == Some("python"))
        .then_some(tag)
        .flatten()
}

/// Whether an image tag such as `3.10.4-slim` provides Python `version` (`3.10`).
pub(crate) fn version_matches(tag: &str, version: &str) -> bool {
    tag.strip_prefix(version)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '-']))
}

/// The last `/`-separated segment of a path (`a/b/req.txt` → `req.txt`).
pub(crate) fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("requirements.txt")
}

/// The file name a URL downloads to: its last path segment without query or
/// fragment, or `download` when that is empty or `.`/`..`.
pub(crate) fn url_basename(url: &str) -> String {
    let no_frag = url.split('#').next().unwrap_or(url);
    let no_query = no_frag.split('?').next().unwrap_or(no_frag);
    let path = match no_query.find("://") {
        Some(i) => no_query[i + 3..].split_once('/').map_or("", |(_, p)| p),
        None => no_query,
    };
    match path.rsplit('/').next() {
        Some(s) if !s.is_empty() && s != "." && s != ".." => s.to_string(),
        _ => "download".to_string(),
    }
}

/// `dir/name`, without doubling a trailing `/`.
pub(crate) fn join_path(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_render_as_run_lines_and_scripts() {
        let s = Shell::of(vec![
            Command::one("a"),
            Command {
                lines: vec!["b".into(), "      c".into()],
                secret: true,
            },
        ]);
        assert_eq!(s.chained("T=1 "), "a \\\n && T=1 b \\\n      c");
        assert_eq!(s.script("  ", ""), ["  a", "  b \\", "        c"]);
    }

    #[test]
    fn refs_and_versions() {
        assert_eq!(python_image_tag("python:3.10-slim"), Some("3.10-slim"));
        assert_eq!(
            python_image_tag("docker.io/library/python:3.11"),
            Some("3.11")
        );
        assert_eq!(python_image_tag("pytorch/pytorch:2.0.1"), None);
        assert_eq!(python_image_tag("python"), None);
        assert!(version_matches("3.10-slim", "3.10"));
        assert!(version_matches("3.10.4", "3.10"));
        assert!(version_matches("3.10", "3.10"));
        assert!(!version_matches("3.100", "3.10"));
        assert!(!version_matches("3.11-slim", "3.10"));
    }

    #[test]
    fn url_names() {
        assert_eq!(
            url_basename("https://h/a/b/model.safetensors?download=1#x"),
            "model.safetensors"
        );
        assert_eq!(url_basename("https://h/"), "download");
        assert_eq!(url_basename("https://h"), "download");
        assert_eq!(url_basename("https://h/a/.."), "download");
        assert_eq!(join_path("/m/", "x"), "/m/x");
        assert_eq!(join_path("/", "x"), "/x");
        assert_eq!(basename("a/b/req.txt"), "req.txt");
    }
}
