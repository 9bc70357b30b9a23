//! The Apptainer backend: [`lower`] turns one [`EnvSpec`] into an
//! `apptainer.def` definition file (`apptainer build env.sif apptainer.def`,
//! run from the workspace root), or, for an env with `services`, one
//! `<service>/apptainer.def` per service.
//!
//! The file, section by section (Apptainer's user guide, "Definition
//! Files"; its parser `pkg/build/types/parser/deffile.go`):
//!
//! - the header: `Bootstrap: docker` and `From:` the image
//!   ([`scl_ir::ImageRef::pinned`], with its digest when pinned), refused
//!   unless it is an image reference ([`crate::docker::is_image_reference`]:
//!   no `#`, which would end the header line, and no `\`, which would
//!   continue it);
//! - `%labels`: the description, the IR labels, the IR's hash
//!   (`dev.scl.ir.sha256`), one `KEY value` a line;
//! - `%help`: the env's name and how the file was made and is built;
//! - `%files`: the requirements files (to [`SCRATCH`]`/requirements/`) and the
//!   `files` copies, workspace-relative source → destination
//!   ([`quote::apptainer_files_source`], [`quote::apptainer_files_dest`]); a
//!   relative destination is taken inside `workdir`, as Docker's `COPY`
//!   does. Apptainer copies them before `%post` runs, and they belong to
//!   root;
//! - `%post`: the container plan ([`crate::plan`]), one command after the
//!   other (Apptainer runs it with `sh -e`): system packages, the user, the
//!   virtual environment, the assets (a URL with curl, wget or Python's
//!   `urllib`, checked against its `sha256`), Python, the setup steps (each
//!   a script written by `printf` and run by `sh -e`), the writable folders
//!   given to the user, the working directory; then the scratch folder
//!   [`SCRATCH`] is removed.
//!   A build secret is never written: the build reads it from
//!   [`BUILD_SECRETS_DIR`]`/<id>`, a folder of the host bound with
//!   `apptainer build --bind DIR:/mnt` (a warning says so), and stops with a
//!   message when it is not there;
//! - `%environment`: `export K='value'` for every plain var, single-quoted
//!   ([`quote::shell_quoted`]), so that no `$` or backtick expands when
//!   Apptainer sources it; `VIRTUAL_ENV` and `PATH` for the virtual
//!   environment; a secret var only named in a comment (it is set at run
//!   time with `APPTAINERENV_<K>`);
//! - `%runscript`: `cd` to `workdir`, then `exec` the entrypoint with the
//!   command as default arguments (arguments given to `apptainer run`
//!   replace the command, as with `docker run`), every word quoted; a
//!   single-node torchrun `distributed` block starts `torchrun --standalone
//!   --nproc_per_node=N` as the Dockerfile's ENTRYPOINT does
//!   ([`crate::docker::single_node_torchrun`]);
//! - `%test`: each `test` command, `sh -c` in `workdir`.
//!
//! A definition file is read by a parser before any shell sees it, and it
//! has traps ([`Trap`]) no quoting escapes: a line whose first word starts
//! with `%` begins a section, `{{ word }}` anywhere is a build argument (an
//! unknown one fails the build), a line that starts with `bootstrap:` begins
//! a new build stage (spython, a common reader, takes it anywhere in a
//! line), and a carriage return, another line break or NUL changes what the
//! line is. The backend keeps every value out of those positions: shell
//! words are quoted by [`quote::shell`], which never writes `{{`,
//! `bootstrap:` or a word starting with `%`, and puts a line feed of a value
//! in double quotes so that every continued line starts with `"`; a setup
//! step reaches the file only as single-quoted `printf` arguments, one per
//! line. Then [`trap`] checks every line the backend writes, and a line
//! that would still hit one (a label, a `%files` path) is a [`FieldError`]
//! naming its field. Apptainer reads a section of at most 64 KiB
//! ([`MAX_SECTION_BYTES`]).
//!
//! Fields a definition file cannot express (ports, resources, distributed
//! launch, volumes, the start order of services, multi-stage builds) are
//! warnings, from [`EXPRESSES`].

use scl_ir::bases::VENV;
use scl_ir::{EnvSpec, VarValue};

use crate::expresses::Expresses;
use crate::plan::{self, Shell, Step};
use crate::{quote, Artifact, ErrorKind, FieldError, FieldWarning, LowerCx, Lowered};

/// The file the Apptainer target writes in an env's folder (and in each
/// service's folder).
pub const FILE_NAME: &str = "apptainer.def";

/// Where `%post` reads build secrets: a file `<secret>.<key>` in a folder of
/// the host bound here with `apptainer build --bind DIR:/mnt`. `/mnt` is a
/// folder of nearly every base image, and the bind needs one: Apptainer
/// builds with `--writable`, where a bind to a missing folder is skipped.
pub const BUILD_SECRETS_DIR: &str = "/mnt";

/// The longest section written, in bytes. Apptainer reads the file with a
/// `bufio.Scanner` whose tokens are whole sections and which keeps its
/// default limit (`bufio.MaxScanTokenSize`, 64 KiB), so a longer section
/// (with the next section's first line) fails the build with "token too
/// long"; 60,000 leaves room for that line.
pub const MAX_SECTION_BYTES: usize = 60_000;

const DESCRIPTION_LABEL: &str = "org.opencontainers.image.description";
const HASH_LABEL: &str = "dev.scl.ir.sha256";
const INDENT: &str = "    ";
/// The default output folder of `sclc build`, used only in `%help`.
const OUT_DIR: &str = "out";

/// The [`plan::Target`] texts of the definition file.
const PLAN_TARGET: plan::Target = plan::Target {
    file: "the definition file",
    value_limit: "one value of a definition file may take (Apptainer reads sections of at most 64 KiB)",
    user_unset: "not set: no user is created in the image (Apptainer runs the container as the user who starts it)",
    not_a_url: "the build would not download it as a file",
    bad_checksum: "the build cannot verify the download",
    scratch: SCRATCH,
    multi_stage: false,
};

/// The build's scratch folder. Not under `/tmp`: Apptainer binds the host's
/// `/tmp` and `/var/tmp` over the image's while `%post` runs (`mount tmp`
/// in `apptainer.conf`, which builds keep), so files `%files` puts there
/// would be hidden, and marks left there would be the host's.
pub const SCRATCH: &str = "/.sclc-build";

/// The Apptainer definition-file target in the [`crate::REGISTRY`].
pub struct Apptainer;

impl crate::Backend for Apptainer {
    fn name(&self) -> &'static str {
        "apptainer"
    }
    fn summary(&self) -> &'static str {
        "an Apptainer definition file per image (apptainer build env.sif apptainer.def)"
    }
    fn layout(&self) -> &'static [&'static str] {
        &["apptainer.def", "<service>/apptainer.def"]
    }
    fn expresses(&self) -> &'static Expresses {
        &EXPRESSES
    }
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered {
        lower(spec, cx)
    }
}

/// The IR fields the Apptainer target expresses ([`crate::expresses`]): a
/// field set in an env and not written here is a warning, computed from
/// this list.
pub const EXPRESSES: Expresses = Expresses {
    target: "apptainer",
    writes: &[
        "assets",
        "base",
        "command",
        "conda",
        "description",
        "entrypoint",
        "files",
        "labels",
        "python",
        "services",
        "setup",
        "system",
        "test",
        "user",
        "vars",
        "workdir",
        "writable",
    ],
    instead: &[
        (
            "builder",
            "multi-stage builds are not written yet: the Python packages are built and installed in `base`",
        ),
        (
            "ports",
            "Apptainer shares the host's network: a process listens on the host's port itself, there is nothing to publish",
        ),
        (
            "volumes",
            "a definition file holds no mounts: bind them at run time (apptainer run --bind HOST:CONTAINER); read-write mount points are made in the image",
        ),
        (
            "resources",
            "requests/limits are set by the scheduler that runs the container (and GPUs with apptainer run --nv); an image does not carry them",
        ),
        (
            "distributed",
            "only a single-node torchrun launch is written into the runscript (torchrun --standalone); several nodes, another launcher or nothing to launch are for the k8s target",
        ),
        (
            "depends_on",
            "a definition file builds one image: start the services' instances (apptainer instance start) in order yourself",
        ),
    ],
    not_needed: &[(
        "ignore",
        "Apptainer copies only the files %files names; there is no build context to filter",
    )],
};

/// Lowers `spec`, the IR of the env `cx.env`, to `apptainer.def` artifacts:
/// `apptainer.def` for an env with a `base`, and `<service>/apptainer.def`
/// for each service that has one (service names sorted), with the service
/// folders' rules of the Dockerfile target ([`crate::reserved_output_name`],
/// [`crate::case_clashes`]).
///
/// Errors ([`Lowered::errors`]; then [`Lowered::artifacts`] is empty): the
/// values the container plan refuses (see [`crate::plan`]), a `From:` that
/// is not an image reference, a var name that is not a shell name, a label
/// or `%files` path the format cannot hold, a line that would hit a parser
/// trap ([`trap`]), a section longer than [`MAX_SECTION_BYTES`]. Warnings:
/// the set fields [`EXPRESSES`] does not write, and each build secret
/// (read from [`BUILD_SECRETS_DIR`]). The output depends only on `spec`,
/// `cx.env` and `cx.files` (a requirements file that pins hashes is
/// installed without `python.packages`).
pub fn lower(spec: &EnvSpec, cx: &LowerCx) -> Lowered {
    let mut out = Lowered::default();
    crate::lower_images(spec, &cx.env, &mut out, &mut |spec, at, out| {
        let mut job = Job {
            spec,
            prefix: &at.field_prefix,
            files: &cx.files,
            warnings: &mut out.warnings,
            errors: &mut out.errors,
        };
        let def_path = format!(
            "{OUT_DIR}/{}/{}{FILE_NAME}",
            quote::comment(&cx.env),
            at.path_prefix
        );
        // `bert_train.sif`, `stack-webui.sif`.
        let sif = format!(
            "{}{}.sif",
            quote::comment(&cx.env),
            at.path_prefix
                .trim_end_matches('/')
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| format!("-{s}"))
                .collect::<String>()
        );
        if let Some(text) = job.def(&at.origin, &def_path, &sif) {
            out.artifacts.push(Artifact {
                path: format!("{}{FILE_NAME}", at.path_prefix),
                contents: text,
            });
        }
    });
    if !out.errors.is_empty() {
        out.artifacts.clear();
    }
    out
}

/// A parser trap of Apptainer's definition files that a line would hit
/// ([`trap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trap {
    /// The line's first word starts with `%`: the parser reads a new
    /// section there (`scanDefinitionFile`), and the rest of the script
    /// becomes an unknown section.
    Section,
    /// `{{`: the start of a build argument (`{{ word }}`, which may span
    /// lines), replaced before the file is parsed, and fatal when the
    /// argument is not defined; there is no escape.
    Template,
    /// `bootstrap:` (in any case): a new build stage where it starts a line
    /// (Apptainer), and anywhere in a line for spython.
    Stage,
    /// A carriage return, a vertical tab, a form feed, a next-line or
    /// line/paragraph separator: the parser drops a `\r` before a line
    /// feed and reads the others as whitespace, so the line is not what is
    /// written.
    LineBreak,
    /// NUL, or another character a reader would not see ([`quote::is_hidden`]).
    Hidden,
}

impl Trap {
    /// What the trap does, for a message.
    pub fn describe(self) -> &'static str {
        match self {
            Trap::Section => "a line whose first word starts with `%`, which Apptainer reads as the start of a new section",
            Trap::Template => "`{{`, which Apptainer reads as a build argument (`{{ name }}`, with no escape)",
            Trap::Stage => "`bootstrap:`, which starts a new build stage for definition-file readers",
            Trap::LineBreak => "a carriage return or another line break, which Apptainer's parser reads otherwise than written",
            Trap::Hidden => "NUL or a character a reader of the file would not see",
        }
    }
}

/// The first parser trap `line` (one line of a section's body or of the
/// header, without its `\n`) would hit, if any. Whitespace before the first
/// word is what Go's `bufio.ScanWords` skips (Unicode white space) and what
/// Python's `str.strip` does (also U+001C–U+001F).
pub fn trap(line: &str) -> Option<Trap> {
    if let Some(c) = line.chars().find(|&c| quote::is_hidden(c)) {
        return Some(
            if matches!(
                c,
                '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
            ) {
                Trap::LineBreak
            } else {
                Trap::Hidden
            },
        );
    }
    let first =
        line.trim_start_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c));
    if first.starts_with('%') {
        return Some(Trap::Section);
    }
    if line.contains("{{") {
        return Some(Trap::Template);
    }
    if line.to_ascii_lowercase().contains("bootstrap:") {
        return Some(Trap::Stage);
    }
    None
}

/// One line of a section's body, and the IR field its values come from
/// (`""`: sclc's own text), for the error when it hits a trap.
struct Line {
    text: String,
    field: String,
}

/// One section: `%name` and its body.
struct Section {
    name: &'static str,
    lines: Vec<Line>,
}

/// The state of lowering one built env.
struct Job<'a> {
    spec: &'a EnvSpec,
    prefix: &'a str,
    files: &'a std::collections::BTreeMap<String, String>,
    warnings: &'a mut Vec<FieldWarning>,
    errors: &'a mut Vec<FieldError>,
}

impl Job<'_> {
    fn warn(&mut self, field: impl AsRef<str>, message: impl Into<String>) {
        self.warnings.push(FieldWarning {
            field: format!("{}{}", self.prefix, field.as_ref()),
            message: message.into(),
        });
    }

    /// Paths under `/tmp` and `/var/tmp` are refused wherever the build
    /// puts something: during `%post` Apptainer binds the host's folders
    /// there (`mount tmp` in apptainer.conf), so a file copied, downloaded
    /// or made there would be the host's, or hidden, and not in the image.
    fn refuse_host_tmp(&mut self) {
        let spec = self.spec;
        let mut paths: Vec<(String, String)> = Vec::new();
        for (i, c) in spec.files.iter().enumerate() {
            paths.push((format!("files[{i}].to"), c.to.clone()));
        }
        for (i, w) in spec.writable.iter().enumerate() {
            paths.push((format!("writable[{i}]"), w.clone()));
        }
        if let Some(w) = &spec.workdir {
            paths.push(("workdir".into(), w.clone()));
        }
        for (i, a) in spec.assets.iter().enumerate() {
            let to = match a {
                scl_ir::Asset::Huggingface { to, .. } | scl_ir::Asset::Url { to, .. } => to,
            };
            paths.push((format!("assets[{i}].to"), to.clone()));
        }
        for (i, v) in spec.volumes.iter().enumerate() {
            if v.mode != scl_ir::VolumeMode::ReadOnly {
                paths.push((format!("volumes[{i}].mount"), v.mount.to_string()));
            }
        }
        for (field, p) in paths {
            let n = plan::normalize_path(&p);
            let under = |d: &str| n == d || n.starts_with(&format!("{d}/"));
            if under("/tmp") || under("/var/tmp") {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "`{}` is under /tmp or /var/tmp, which Apptainer binds from the host while %post runs: what the build puts there would not be in the image",
                        quote::comment(&p)
                    ),
                    Some("use a folder such as /opt/..., /srv/... or /cache/..."),
                );
            }
        }
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

    fn def(&mut self, origin: &str, def_path: &str, sif: &str) -> Option<String> {
        let spec = self.spec;
        let base = spec.base.as_ref()?;
        // Pinned: `name@sha256:…` without the tag, which Apptainer up to
        // 1.3 cannot read together with a digest (containers/image's
        // docker.ParseReference refuses a reference with both); the digest
        // alone names the image.
        let from = match &base.digest {
            Some(d) => format!("{}@{d}", scl_ir::bases::split_ref(&base.reference).0),
            None => base.reference.clone(),
        };
        self.refuse_host_tmp();
        if !spec.ignore.is_empty() && !spec.files.is_empty() {
            self.warn(
                "ignore",
                "%files copies each source whole: the ignore globs do not apply to the definition file, so ignored files inside a copied folder (credentials, checkpoints, outputs) are copied into the image; copy only the folders you need",
            );
        }
        if !crate::docker::is_image_reference(&from) {
            self.refuse(
                "base",
                ErrorKind::Unwritable,
                format!(
                    "{:?} is not an image reference a `From:` line can hold",
                    quote::comment(&from)
                ),
                Some("write the reference as `name[:tag][@sha256:<hex>]`"),
            );
        }
        let launch = crate::docker::single_node_torchrun(spec).is_some();
        for w in crate::expresses::unexpressed(spec, &EXPRESSES) {
            if w.field == "distributed" && launch {
                continue; // the runscript starts torchrun
            }
            self.warn(w.field, w.message);
        }
        let plan = plan::build(
            spec,
            base,
            &PLAN_TARGET,
            self.prefix,
            self.files,
            self.warnings,
            self.errors,
        );
        let sections = [
            self.labels(),
            self.help(origin, def_path, sif),
            self.files(&plan),
            self.post(&plan),
            self.environment(&plan),
            self.runscript(),
            self.test(),
        ];
        let header = [
            Line {
                text: "Bootstrap: docker".into(),
                field: String::new(),
            },
            Line {
                text: format!("From: {from}"),
                field: "base".into(),
            },
            Line {
                text: String::new(),
                field: String::new(),
            },
            Line {
                text: "# Generated by sclc. Do not edit: change the .env.scl source.".into(),
                field: String::new(),
            },
        ];
        // One scan of every line written: the header's (its first line is
        // the one `Bootstrap:`) and every section's body.
        let mut text = String::new();
        let mut n = 0;
        for (i, l) in header.iter().enumerate() {
            n += 1;
            if i > 0 {
                self.scan(l, "the header", n);
            }
            text.push_str(&l.text);
            text.push('\n');
        }
        for s in sections.iter().filter(|s| !s.lines.is_empty()) {
            let mut body = format!("\n%{}\n", s.name);
            n += 2;
            for l in &s.lines {
                self.scan(l, s.name, n);
                n += 1;
                body.push_str(&l.text);
                body.push('\n');
            }
            if body.len() > MAX_SECTION_BYTES {
                let field = self.prefix.trim_end_matches('.').to_string();
                self.errors.push(FieldError {
                    field,
                    kind: ErrorKind::Unwritable,
                    message: format!(
                        "the %{} section would be {} bytes long; Apptainer reads a section of at most 64 KiB ({MAX_SECTION_BYTES} written at most)",
                        s.name,
                        body.len()
                    ),
                    help: Some("move long setup steps into a script file copied with `files`".into()),
                });
            }
            text.push_str(&body);
        }
        if !self.errors.is_empty() {
            return None;
        }
        Some(text)
    }

    /// A [`FieldError`] on the line's field when it hits a parser trap.
    fn scan(&mut self, line: &Line, section: &str, n: usize) {
        if let Some(t) = trap(&line.text) {
            let field = if line.field.is_empty() {
                self.prefix.trim_end_matches('.').to_string()
            } else {
                format!("{}{}", self.prefix, line.field)
            };
            let place = if section == "the header" {
                section.to_string()
            } else {
                format!("%{section}")
            };
            self.errors.push(FieldError {
                field,
                kind: ErrorKind::Unwritable,
                message: format!(
                    "would put {} on line {n} of the definition file ({place}), where no quoting can keep it",
                    t.describe()
                ),
                help: None,
            });
        }
    }

    /// A section's first line: a comment of sclc's own, so that what a
    /// reader takes for the first line of a section (spython reads it as a
    /// header line when it holds `from:`) is never a value.
    fn heading(text: &str) -> Line {
        Self::line("", format!("# {text}"))
    }

    /// A body line carrying `field`'s value.
    fn line(field: impl Into<String>, text: impl Into<String>) -> Line {
        Line {
            text: format!("{INDENT}{}", text.into()),
            field: field.into(),
        }
    }

    /// `%labels`: `KEY value` lines. A key must be one word that does not
    /// start a comment (`#`); a value is the rest of the line, which
    /// Apptainer trims, so it may not start or end with whitespace.
    fn labels(&mut self) -> Section {
        let spec = self.spec;
        let mut lines = vec![Self::heading("KEY value, one a line.")];
        if let Some(d) = &spec.description {
            if !spec.labels.contains_key(DESCRIPTION_LABEL) {
                if let Some(v) = self.label_value("description", d) {
                    lines.push(Self::line(
                        "description",
                        format!("{DESCRIPTION_LABEL} {v}"),
                    ));
                }
            }
        }
        for (k, v) in &spec.labels {
            let field = format!("labels.{k}");
            if &**k == HASH_LABEL {
                self.refuse(
                    &field,
                    ErrorKind::Reserved,
                    format!("{HASH_LABEL} is reserved: sclc sets it to the IR's hash"),
                    Some("remove this label, or give it another name"),
                );
                continue;
            }
            if k.is_empty()
                || k.starts_with('#')
                || k.chars().any(|c| c.is_whitespace() || quote::is_hidden(c))
            {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!("{:?} is not a key a %labels line can hold (it is empty, starts with `#`, or has whitespace or an invisible character)", quote::comment(k)),
                    None,
                );
                continue;
            }
            if let Some(v) = self.label_value(&field, v) {
                let text = if v.is_empty() {
                    k.to_string()
                } else {
                    format!("{k} {v}")
                };
                lines.push(Self::line(field, text));
            }
        }
        lines.push(Self::line(
            "",
            format!("{HASH_LABEL} {}", spec.content_hash()),
        ));
        Section {
            name: "labels",
            lines,
        }
    }

    /// A label's value as the rest of its line, or `None` with an error.
    fn label_value(&mut self, field: &str, v: &str) -> Option<String> {
        if v.chars().any(|c| c == '\n' || quote::is_hidden(c)) {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                "contains a line break or an invisible character, which a %labels line cannot hold",
                Some("write it on one line"),
            );
            return None;
        }
        if v.trim() != v {
            self.refuse(
                field,
                ErrorKind::Unwritable,
                "starts or ends with whitespace, which Apptainer strips from a label",
                None,
            );
            return None;
        }
        Some(v.to_string())
    }

    /// `%help`: which env, how it was made, how to build and run it.
    fn help(&mut self, origin: &str, def_path: &str, sif: &str) -> Section {
        let spec = self.spec;
        let gpu = spec
            .resources
            .as_ref()
            .and_then(|r| r.gpu())
            .is_some_and(|g| g.count > 0);
        let run = if gpu {
            "apptainer run --nv"
        } else {
            "apptainer run"
        };
        let lines = vec![
            Self::line(
                "",
                "Generated by sclc. Do not edit: change the .env.scl source.",
            ),
            Self::line("", format!("The image of {origin}.")),
            Self::line("", format!("IR sha256: {}", spec.content_hash())),
            Self::line(
                "",
                format!("Build from the workspace root: apptainer build {sif} {def_path}"),
            ),
            Self::line("", format!("Run: {run} {sif}")),
        ];
        Section {
            name: "help",
            lines,
        }
    }

    /// `%files`: the requirements files, then the `files` copies.
    fn files(&mut self, plan: &plan::Plan) -> Section {
        let mut lines = vec![Self::heading(
            "Workspace files, copied from the folder apptainer build runs in before %post.",
        )];
        let workdir = self.spec.workdir.clone().unwrap_or_else(|| "/".into());
        for step in &plan.steps {
            match step {
                Step::Requirements { files, .. } => {
                    for r in files {
                        lines.extend(self.files_line(&r.field, &r.path, &r.dest));
                    }
                }
                Step::Files { copies, .. } => {
                    for (field, from, to) in copies {
                        // A relative destination is inside the working
                        // directory, as for Docker's COPY.
                        let to = if to.starts_with('/') {
                            to.clone()
                        } else {
                            plan::join_path(&workdir, to)
                        };
                        lines.extend(self.files_line(field, from, &to));
                    }
                }
                _ => {}
            }
        }
        if lines.len() == 1 {
            lines.clear();
        }
        Section {
            name: "files",
            lines,
        }
    }

    fn files_line(&mut self, field: &str, from: &str, to: &str) -> Option<Line> {
        let src = quote::apptainer_files_source(from);
        let dst = quote::apptainer_files_dest(to);
        match (src, dst) {
            (Ok(s), Ok(d)) => Some(Self::line(field, format!("{s} {d}"))),
            (Err(e), _) => {
                let kind = match e {
                    quote::FilesPathRefusal::Expansion(_) => ErrorKind::Misread,
                    _ => ErrorKind::Unwritable,
                };
                self.refuse(field, kind, format!("the source {}", e), Some("rename the file so that its path is letters, digits, spaces and `_ . / + , = @ % : -`"));
                None
            }
            (_, Err(e)) => {
                self.refuse(
                    field,
                    ErrorKind::Unwritable,
                    format!("the destination {e}"),
                    None,
                );
                None
            }
        }
    }

    /// `%post`: the plan's steps, each with a comment of sclc's own.
    fn post(&mut self, plan: &plan::Plan) -> Section {
        let mut lines = Vec::new();
        let comment = |lines: &mut Vec<Line>, text: &str| {
            lines.push(Self::line("", format!("# {text}")));
        };
        let script = |lines: &mut Vec<Line>, field: &str, shell: &Shell, prefix: &str| {
            for l in shell.script(INDENT, prefix) {
                lines.push(Line {
                    text: l,
                    field: field.to_string(),
                });
            }
        };
        for step in &plan.steps {
            let (field, what) = match step {
                Step::System { manager, .. } => (
                    "system.packages".to_string(),
                    format!("System packages with {}.", manager.name()),
                ),
                Step::User { uid, .. } => (
                    "user".to_string(),
                    format!("The runtime user (uid {uid}), created with the base image's own tools; the build stops if the image has the name with another uid."),
                ),
                Step::Venv { why, .. } => (
                    "python".to_string(),
                    format!("Python packages go into a virtual environment: {why}."),
                ),
                Step::Url { field, .. } => (field.clone(), format!("{field}: a download.")),
                Step::Huggingface { field, .. } => {
                    (field.clone(), format!("{field}: a Hugging Face download."))
                }
                Step::PythonNote { .. } => (
                    "python.version".to_string(),
                    "python.version: the base image's python3 is used; sclc does not install Python into an image.".to_string(),
                ),
                Step::Tool { .. } => ("python.manager".to_string(), "uv, with pip.".to_string()),
                Step::Conda { .. } => ("conda".to_string(), "conda packages.".to_string()),
                Step::Requirements {
                    with_packages,
                    hashed,
                    ..
                } => (
                    "python.requirements".to_string(),
                    if *with_packages {
                        "The requirements files (copied by %files) and python.packages, in one install.".to_string()
                    } else if *hashed {
                        "The requirements files (copied by %files), which pin hashes: python.packages went on their own.".to_string()
                    } else {
                        "The requirements files (copied by %files).".to_string()
                    },
                ),
                Step::Packages { .. } => {
                    ("python.packages".to_string(), "Python packages.".to_string())
                }
                // Not made: this target writes no build stage.
                Step::Wheels { .. } => ("builder".to_string(), "Python wheels.".to_string()),
                Step::Setup { field, .. } => (
                    field.clone(),
                    format!("{field}, as root: its lines are printf arguments written to a script that sh -e runs."),
                ),
                Step::Writable { .. } => (
                    "writable".to_string(),
                    "Folders the runtime user writes (writable, read-write mount points), made and given to it.".to_string(),
                ),
                Step::OwnWorkdir { .. } => (
                    "workdir".to_string(),
                    "The runtime user owns its working directory if neither the base image nor %files made it.".to_string(),
                ),
                Step::Runtime { workdir, .. } => {
                    if let Some(w) = workdir {
                        comment(&mut lines, "The working directory.");
                        lines.push(Self::line("workdir", format!("mkdir -p -- {}", quote::shell(w))));
                    }
                    continue;
                }
                Step::Env | Step::Files { .. } => continue,
            };
            comment(&mut lines, &what);
            if let Some(s) = step.secret() {
                let path = format!("{BUILD_SECRETS_DIR}/{}", s.id);
                let missing = quote::shell(&format!(
                    "sclc: {}{}: the build secret {} is not in {BUILD_SECRETS_DIR}: build with apptainer build --bind DIR:{BUILD_SECRETS_DIR}, DIR holding the file {}",
                    self.prefix, s.field, s.id, s.id
                ));
                for l in [
                    format!("if [ ! -r {path} ]; then \\"),
                    format!("      printf '%s\\n' {missing} >&2; \\"),
                    "      exit 1; \\".into(),
                    "    fi".into(),
                ] {
                    lines.push(Self::line(s.field.clone(), l));
                }
                self.warn(
                    &s.field,
                    format!("Apptainer has no build secrets: %post reads this one from {path}, a file of a host folder bound with `apptainer build --bind DIR:{BUILD_SECRETS_DIR}` (the value is not written into the image or the definition file)"),
                );
            }
            let prefix = step
                .secret()
                .map(|s| s.prefix(&format!("{BUILD_SECRETS_DIR}/{}", s.id)))
                .unwrap_or_default();
            match step {
                Step::Url { fetch, .. } => script(&mut lines, &field, fetch, ""),
                Step::Venv { shell, .. } => {
                    script(&mut lines, &field, shell, "");
                    lines.push(Self::line("", format!("export VIRTUAL_ENV={VENV}")));
                    lines.push(Self::line("", format!("export PATH=\"{VENV}/bin:$PATH\"")));
                }
                _ => {
                    if let Some(shell) = step.shell() {
                        script(&mut lines, &field, shell, &prefix);
                    }
                }
            }
        }
        if !lines.is_empty() {
            comment(&mut lines, "sclc's scratch files.");
            lines.push(Self::line("", format!("rm -rf {SCRATCH}")));
        }
        Section {
            name: "post",
            lines,
        }
    }

    /// `%environment`: the virtual environment, then every plain var
    /// single-quoted; secrets only named.
    fn environment(&mut self, plan: &plan::Plan) -> Section {
        let mut lines = vec![Self::heading(
            "Sourced by sh when the container starts; every value single-quoted.",
        )];
        if plan.venv {
            lines.push(Self::line("", format!("export VIRTUAL_ENV={VENV}")));
            lines.push(Self::line("", format!("export PATH=\"{VENV}/bin:$PATH\"")));
        }
        for (k, v) in &self.spec.vars {
            let field = format!("vars.{k}");
            let name_ok = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !name_ok {
                self.refuse(
                    &field,
                    ErrorKind::Unwritable,
                    format!(
                        "{:?} is not a shell variable name, which `export` in %environment needs",
                        quote::comment(k)
                    ),
                    Some("use a name of letters, digits and `_`, such as MY_VAR"),
                );
                continue;
            }
            match v {
                VarValue::Plain(s) => {
                    if s.chars().any(quote::is_hidden) {
                        self.refuse(
                            &field,
                            ErrorKind::Unwritable,
                            "the value contains NUL or a character a reader of the file would not see (a carriage return, an escape, a bidirectional override)",
                            None,
                        );
                        continue;
                    }
                    lines.push(Self::line(field, format!("export {k}={}", quote::shell_quoted(s))));
                }
                VarValue::Secret(_) => lines.push(Self::line(
                    field,
                    format!("# {k} is a runtime secret, not written here: set APPTAINERENV_{k} where the container runs"),
                )),
            }
        }
        if lines.len() == 1 {
            lines.clear();
        }
        Section {
            name: "environment",
            lines,
        }
    }

    /// `%runscript`: `cd` to `workdir`, the command as default arguments,
    /// `exec` the entrypoint with them. None without entrypoint and command
    /// (the base image's runscript is kept).
    fn runscript(&mut self) -> Section {
        let spec = self.spec;
        let mut lines = Vec::new();
        // A single-node torchrun launch, as the Dockerfile's ENTRYPOINT.
        let (entry, cmd) = match crate::docker::single_node_torchrun(spec) {
            Some((e, c)) => (e, c),
            None => (spec.entrypoint.clone(), spec.command.clone()),
        };
        let entry = self.words("entrypoint", &entry);
        let cmd = self.words("command", &cmd);
        if let (Some(entry), Some(cmd)) = (entry, cmd) {
            if !(entry.is_empty() && cmd.is_empty()) {
                lines.push(Self::heading(
                    "The entrypoint, with the command unless apptainer run is given arguments.",
                ));
                if let Some(w) = &spec.workdir {
                    lines.push(Self::line(
                        "workdir",
                        format!("cd -- {} || exit 1", quote::shell(w)),
                    ));
                }
                if !cmd.is_empty() {
                    lines.push(Self::line(
                        "command",
                        format!("if [ \"$#\" -eq 0 ]; then set -- {}; fi", cmd.join(" ")),
                    ));
                }
                let exec = if entry.is_empty() {
                    "exec \"$@\"".to_string()
                } else {
                    format!("exec {} \"$@\"", entry.join(" "))
                };
                lines.push(Self::line("entrypoint", exec));
            }
        }
        Section {
            name: "runscript",
            lines,
        }
    }

    /// `items` as quoted shell words, or `None` (with an error) when one
    /// holds NUL or an invisible character.
    fn words(&mut self, field: &str, items: &[String]) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut ok = true;
        for (i, a) in items.iter().enumerate() {
            if a.chars().any(quote::is_hidden) {
                self.refuse(
                    format!("{field}[{i}]"),
                    ErrorKind::Unwritable,
                    "contains NUL or a character a reader of the file would not see (a carriage return, an escape, a bidirectional override)",
                    None,
                );
                ok = false;
                continue;
            }
            out.push(quote::shell(a));
        }
        ok.then_some(out)
    }

    /// `%test`: each `test` command, `sh -c` in `workdir`; the first that
    /// fails fails the build.
    fn test(&mut self) -> Section {
        let spec = self.spec;
        let mut lines = Vec::new();
        let tests = self.words("test", &spec.test);
        if let Some(tests) = tests.filter(|t| !t.is_empty()) {
            lines.push(Self::heading(
                "The smoke tests, run at the end of the build (apptainer build --notest skips them).",
            ));
            if let Some(w) = &spec.workdir {
                lines.push(Self::line(
                    "workdir",
                    format!("cd -- {} || exit 1", quote::shell(w)),
                ));
            }
            for (i, t) in tests.iter().enumerate() {
                lines.push(Self::line(
                    format!("test[{i}]"),
                    format!("sh -c -- {t} || exit 1"),
                ));
            }
        }
        Section {
            name: "test",
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traps() {
        assert_eq!(trap("    echo hi"), None);
        assert_eq!(trap("%post"), Some(Trap::Section));
        assert_eq!(trap("   %d files"), Some(Trap::Section));
        assert_eq!(trap("\u{a0}%x"), Some(Trap::Section));
        assert_eq!(trap("    printf '%d'"), None);
        assert_eq!(trap("echo {{ x }}"), Some(Trap::Template));
        assert_eq!(trap("echo {{"), Some(Trap::Template));
        assert_eq!(trap("Bootstrap: docker"), Some(Trap::Stage));
        assert_eq!(trap("  echo BOOTSTRAP:x"), Some(Trap::Stage));
        assert_eq!(trap("a\rb"), Some(Trap::LineBreak));
        assert_eq!(trap("a\u{2028}b"), Some(Trap::LineBreak));
        assert_eq!(trap("a\0b"), Some(Trap::Hidden));
        assert_eq!(trap("a\u{202e}b"), Some(Trap::Hidden));
    }
}
