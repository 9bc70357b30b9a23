//! Validators for the values that reach a tool's command line or a file
//! format: system package names by package manager, user names, Hugging Face
//! repository ids and revisions, conda channels, image references, URLs,
//! file names that `COPY` reads, and the workdir. Each checks the value
//! against the grammar of the tool that reads it (the source is named at
//! each function) and refuses a leading `-`, which a tool would read as an
//! option. Also [`guarded`], the one boundary through which every library
//! that parses user input is called, and the requirements-file reader.
//!
//! Validators return `Err(Invalid)` with a message (what is wrong, naming the
//! value) and a help line (what to write instead); callers add the code and
//! the span.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// Why a value was refused: the message and a help line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub msg: String,
    pub help: String,
}

fn bad<T>(msg: impl Into<String>, help: impl Into<String>) -> Result<T, Invalid> {
    Err(Invalid {
        msg: msg.into(),
        help: help.into(),
    })
}

// ----- the library boundary -------------------------------------------------

thread_local! {
    /// How many [`guarded`] scopes are open on this thread.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}
static HOOK: Once = Once::new();

/// Closes a [`guarded`] scope, also if the closure unwinds.
struct Scope;
impl Drop for Scope {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(q.get() - 1));
    }
}

/// Runs `f` — a call into a library that parses user input — and returns
/// `None` if it panicked. The panic message is not printed: a process-wide
/// panic hook, installed once, stays silent while a guarded scope is open on
/// the panicking thread and chains to the previous hook everywhere else (so
/// a real bug in our own code still prints its message and backtrace).
/// Needs `panic = "unwind"` (the default profile).
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) == 0 {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(q.get() + 1));
    let _scope = Scope;
    panic::catch_unwind(AssertUnwindSafe(f)).ok()
}

// ----- shared helpers ---------------------------------------------------------

fn no_leading_dash(s: &str, tool: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    if s.starts_with('-') {
        return bad(
            format!("{q} starts with `-`, which {tool} would read as an option"),
            "remove the leading `-`",
        );
    }
    Ok(())
}

fn all(s: &str, ok: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(ok)
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// The first character of `s` that is not allowed by `ok`, for messages.
fn first_bad(s: &str, ok: impl Fn(char) -> bool) -> String {
    match s.chars().find(|c| !ok(*c)) {
        Some(c) if c.is_control() || c.is_whitespace() => format!("{:?}", c),
        Some('`') => "a backquote".into(),
        Some(c) => format!("`{c}`"),
        None => "an empty value".into(),
    }
}

/// At most this many characters of a value are quoted in a message (as
/// many as a value shown by `Value`'s `Display`: a long download URL or
/// image reference still fits whole).
pub(crate) const QUOTE_MAX: usize = 200;

/// `s` for a message: as written when it is short, else its first
/// [`QUOTE_MAX`] characters, `…` and its length, so that a diagnostic never
/// grows with the value (a 200 MB line stays a short message).
pub(crate) fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(QUOTE_MAX) {
        None => std::borrow::Cow::Borrowed(s),
        Some((i, _)) => format!("{}… ({} bytes in all)", &s[..i], s.len()).into(),
    }
}

/// `s` quoted (`{:?}`) for a message, clipped like [`clip`].
pub(crate) fn quoted(s: &str) -> String {
    Quoted(s).to_string()
}

/// [`quoted`] made only when shown: what a validator keeps to name its
/// value in a message, at no cost when the value is valid (validation runs
/// for every list element of every env).
#[derive(Clone, Copy)]
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0;
        match s.char_indices().nth(QUOTE_MAX) {
            None => write!(f, "{s:?}"),
            Some((i, _)) => write!(f, "{:?}… ({} bytes in all)", &s[..i], s.len()),
        }
    }
}

// ----- system packages ----------------------------------------------------------

/// A system package as `apt-get install` reads it (apt-get(8)):
/// `NAME[:ARCH][=VERSION | /RELEASE]`.
/// - NAME: Debian Policy §5.6.7 — lower case letters, digits, `+ - .`,
///   starting with a letter or digit (Policy also asks for two characters;
///   a one-letter name cannot be misread, so it is left to apt to find).
///   A trailing `-` is refused: apt-get(8) reads `pkg-` as "remove pkg".
/// - ARCH: a dpkg architecture name (`amd64`, `arm64`, `i386`, …): lower
///   case letters, digits and `-`.
/// - VERSION: Debian Policy §5.6.12 — `[EPOCH:]UPSTREAM[-REVISION]`; EPOCH
///   digits; UPSTREAM starts with a digit and holds letters, digits and
///   `. + ~` (and `-` only when a REVISION follows); REVISION holds letters,
///   digits and `+ . ~`.
/// - RELEASE: an archive or codename (`bookworm-backports`, `stable`):
///   letters, digits and `. + ~ _ -`, starting with a letter or digit.
pub(crate) fn debian_package(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "apt-get")?;
    let help = "write a Debian package name (`curl`, `libssl-dev`), optionally with `:ARCH`, `=VERSION` or `/RELEASE` (`curl=7.88.1-10`, `curl:amd64`, `curl/bookworm-backports`)";
    let (head, tail) = match s.find(['=', '/']) {
        Some(i) => (&s[..i], Some((&s[i..i + 1], &s[i + 1..]))),
        None => (s, None),
    };
    let (name, arch) = match head.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (head, None),
    };
    let name_ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c);
    if !all(name, name_ok) {
        return bad(
            format!(
                "{q} is not a Debian package name: {} is not allowed (lower case letters, digits, `+ - .`)",
                first_bad(name, name_ok)
            ),
            help,
        );
    }
    if !name.starts_with(alnum) {
        return bad(
            format!("{q} is not a Debian package name: a name starts with a letter or digit"),
            help,
        );
    }
    if name.ends_with('-') {
        return bad(
            format!("{q} ends with `-`, which apt-get reads as \"remove this package\""),
            help,
        );
    }
    if let Some(a) = arch {
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        if !all(a, ok) || !a.starts_with(alnum) {
            return bad(
                format!(
                    "{q}: {} is not an architecture name (`amd64`, `arm64`, `i386`)",
                    quoted(a)
                ),
                help,
            );
        }
    }
    match tail {
        Some(("=", v)) => debian_version(v).map_err(|why| Invalid {
            msg: format!("{q}: {} is not a Debian version: {why}", quoted(v)),
            help: help.into(),
        }),
        Some((_, r)) => {
            let ok = |c: char| alnum(c) || ".+~_-".contains(c);
            if !all(r, ok) || !r.starts_with(alnum) {
                return bad(
                    format!(
                        "{q}: {} is not a release name (`bookworm-backports`, `stable`)",
                        quoted(r)
                    ),
                    help,
                );
            }
            Ok(())
        }
        None => Ok(()),
    }
}

/// Debian Policy §5.6.12 (see [`debian_package`]); the reason on error.
fn debian_version(v: &str) -> Result<(), &'static str> {
    let (epoch, rest) = match v.split_once(':') {
        Some((e, r)) => (Some(e), r),
        None => (None, v),
    };
    if let Some(e) = epoch {
        if !all(e, |c| c.is_ascii_digit()) {
            return Err("the epoch (before `:`) must be digits");
        }
    }
    let (upstream, revision) = match rest.rsplit_once('-') {
        Some((u, r)) => (u, Some(r)),
        None => (rest, None),
    };
    if !upstream.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("the upstream version must start with a digit");
    }
    let hyphen_ok = revision.is_some();
    if !upstream
        .chars()
        .all(|c| alnum(c) || ".+~".contains(c) || (c == '-' && hyphen_ok))
    {
        return Err("the upstream version holds letters, digits and `. + ~ -` only");
    }
    if let Some(r) = revision {
        if !all(r, |c| alnum(c) || "+.~".contains(c)) {
            return Err("the revision (after the last `-`) holds letters, digits and `+ . ~` only");
        }
    }
    Ok(())
}

/// A system package as `dnf install` (and `yum`, `microdnf`) reads it: a name, or a
/// name-version-release with an optional epoch and arch
/// (`python3-devel`, `curl-8.6.0-1.fc40`, `bash-0:5.2.26-3.fc40.x86_64`).
/// Characters: rpm's build/parsePreamble.c `rpmCharCheck` allows letters,
/// digits and `. - _ +` in a Name (and `~ ^` in a Version or Release, `:`
/// after an epoch); `..` is refused there too. The first character must be a
/// letter, digit or `_`: dnf reads `-x` as an option, `@x` as a group,
/// `/x` as a file, and `* ? [` as globs; a name ending in `.rpm` is
/// refused, as dnf installs it as a package file.
pub(crate) fn rpm_package(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "dnf, yum or microdnf")?;
    let help = "write an RPM package name (`python3-devel`), optionally with its version (`curl-8.6.0-1.fc40`)";
    let ok = |c: char| alnum(c) || "._+-~^:".contains(c);
    if !all(s, ok) {
        return bad(
            format!(
                "{q} is not an RPM package name: {} is not allowed (letters, digits, `. _ + -`, and `~ ^ :` in versions)",
                first_bad(s, ok)
            ),
            help,
        );
    }
    if !s.starts_with(|c: char| alnum(c) || c == '_') {
        return bad(
            format!("{q} is not an RPM package name: it must start with a letter, digit or `_`"),
            help,
        );
    }
    if s.contains("..") {
        return bad(
            format!("{q} is not an RPM package name: `..` is not allowed"),
            help,
        );
    }
    // dnf reads an argument ending in `.rpm` as a package file to install
    // (dnf 4 `Base.install_specs` / dnf5 `Goal::add_install`: "a local RPM
    // file or URL"), not a name to look up in the repositories.
    if s.len() >= 4 && s[s.len() - 4..].eq_ignore_ascii_case(".rpm") {
        return bad(
            format!("{q} ends in `.rpm`, so dnf would install it as a package file instead of looking the name up"),
            help,
        );
    }
    Ok(())
}

/// A system package as `apk add` reads it: `NAME[@TAG][OP VERSION]`
/// (apk-world(5); apk-tools src/add.c: "name(@tag)([<>~=]version)").
/// - NAME: apk-package(5) — letters, digits and `. _ + -`, starting with a
///   letter or digit. A name containing `.apk` is refused: `apk add` reads
///   such an argument as a package file (src/add.c).
/// - TAG: a repository tag (apk-repositories(5)): letters, digits, `. _ -`.
/// - OP: `=`, `<`, `>`, `<=`, `>=`, `~`, `~=`, `=~`.
/// - VERSION: apk-package(5) — `number{.number}…{letter}{_suffix{number}}…{~hash}{-r#}`
///   with the suffixes `alpha beta pre rc cvs svn git hg p`.
pub(crate) fn apk_package(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "apk")?;
    let help = "write an Alpine package name (`py3-numpy`), optionally with `@TAG` or a version (`curl=8.5.0-r0`, `python3~3.11`)";
    let op_at = s.find(['=', '<', '>', '~']);
    let (head, constraint) = match op_at {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    let (name, tag) = match head.split_once('@') {
        Some((n, t)) => (n, Some(t)),
        None => (head, None),
    };
    let ok = |c: char| alnum(c) || "._+-".contains(c);
    if !all(name, ok) || !name.starts_with(alnum) {
        return bad(
            format!(
                "{q} is not an Alpine package name: names hold letters, digits and `. _ + -` and start with a letter or digit{}",
                if name.is_empty() { String::new() } else { format!(" ({} is not allowed)", first_bad(name, ok)) }
            ),
            help,
        );
    }
    if s.contains(".apk") {
        return bad(
            format!("{q} contains `.apk`, so `apk add` would read it as a package file"),
            help,
        );
    }
    if let Some(t) = tag {
        let ok = |c: char| alnum(c) || "._-".contains(c);
        if !all(t, ok) || !t.starts_with(alnum) {
            return bad(format!("{q}: {} is not a repository tag", quoted(t)), help);
        }
    }
    if let Some(c) = constraint {
        let op_len = c.chars().take_while(|c| "=<>~".contains(*c)).count();
        let (op, version) = c.split_at(op_len);
        if !["=", "<", ">", "<=", ">=", "~", "~=", "=~"].contains(&op) {
            return bad(
                format!("{q}: `{op}` is not a version operator (`=`, `<`, `>`, `<=`, `>=`, `~`)"),
                help,
            );
        }
        if !apk_version(version) {
            return bad(
                format!(
                    "{q}: {} is not an Alpine version (`1.2.3`, `1.2.3_rc1-r0`)",
                    quoted(version)
                ),
                help,
            );
        }
    }
    Ok(())
}

/// apk-package(5)'s version grammar (see [`apk_package`]).
fn apk_version(v: &str) -> bool {
    let b = v.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    if !digits(&mut i) {
        return false;
    }
    while i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    while i < b.len() && b[i] == b'_' {
        i += 1;
        let rest = &v[i..];
        let Some(suf) = ["alpha", "beta", "pre", "rc", "cvs", "svn", "git", "hg", "p"]
            .iter()
            .find(|s| rest.starts_with(**s))
        else {
            return false;
        };
        i += suf.len();
        digits(&mut i);
    }
    if i < b.len() && b[i] == b'~' {
        i += 1;
        let s = i;
        while i < b.len() && (b[i].is_ascii_digit() || (b'a'..=b'f').contains(&b[i])) {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    if v[i..].starts_with("-r") {
        i += 2;
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

// ----- users ------------------------------------------------------------------------

/// A user name `useradd` (and busybox `adduser`) accepts on every base image:
/// POSIX.1-2017 §3.437 ("User Name") allows the portable filename characters
/// (§3.282: letters, digits, `. _ -`) and no leading `-`; shadow's
/// `is_valid_user_name` (libmisc/chkname.c, its default `NAME_REGEX`
/// `^[a-z_][a-z0-9_-]*[$]?$`) further requires lower case, a first character
/// in `[a-z_]`, and at most 32 characters. We take that intersection without
/// the trailing `$` (Samba machine accounts).
pub(crate) fn user_name(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "useradd")?;
    let help = "write a lower-case name such as `app` or `trainer` (letters a-z, digits, `_` and `-`; starting with a letter or `_`)";
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-".contains(c);
    if !all(s, ok) {
        return bad(
            format!(
                "{q} is not a portable user name: {} is not allowed",
                first_bad(s, ok)
            ),
            help,
        );
    }
    if !s.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
        return bad(
            format!("{q} is not a portable user name: it must start with a letter or `_`"),
            help,
        );
    }
    if s.len() > 32 {
        return bad(
            format!("{q} is not a portable user name: at most 32 characters"),
            help,
        );
    }
    Ok(())
}

// ----- Hugging Face ---------------------------------------------------------------------

/// A Hugging Face repository id, as huggingface_hub's `validate_repo_id`
/// (src/huggingface_hub/utils/_validators.py) checks it: `name` or
/// `namespace/name`; letters, digits, `- _ .` (ASCII: the Hub's own rule,
/// though the Python regex's `\w` is Unicode); each part starts and ends with
/// a letter, digit or `_` (the regex's `\b` anchors); the name has at most 96
/// characters; no `--` or `..`; not ending in `.git`.
pub(crate) fn hf_repo_id(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "huggingface-cli")?;
    let help = "write `owner/name` (`bert-base-uncased`, `google-bert/bert-base-uncased`): letters, digits, `-`, `_` and `.`";
    let msg = |why: &str| format!("{q} is not a Hugging Face repository id: {why}");
    let parts: Vec<&str> = s.split('/').collect();
    if parts.len() > 2 {
        return bad(msg("it is `name` or `namespace/name`"), help);
    }
    let word = |c: char| alnum(c) || c == '_';
    for p in &parts {
        if !all(p, |c| word(c) || "-.".contains(c)) {
            return bad(
                msg(&format!(
                    "{} is not allowed",
                    first_bad(p, |c| word(c) || "-.".contains(c))
                )),
                help,
            );
        }
        if !p.starts_with(word) || !p.ends_with(word) {
            return bad(msg("a part cannot start or end with `-` or `.`"), help);
        }
    }
    if parts.last().is_some_and(|n| n.len() > 96) {
        return bad(msg("the name has at most 96 characters"), help);
    }
    if s.contains("--") || s.contains("..") {
        return bad(msg("`--` and `..` are not allowed"), help);
    }
    if s.ends_with(".git") {
        return bad(msg("it cannot end in `.git`"), help);
    }
    Ok(())
}

/// A Hugging Face revision: a branch, tag (`main`, `v1.0`, `refs/pr/1`) or
/// commit hash. Git's ref-name rules (git-check-ref-format(1), rules 1–10):
/// no component starting with `.` or ending in `.lock`; no `..`; no control
/// characters, space, `~ ^ : ? * [ \`; no leading, trailing or double `/`;
/// no trailing `.`; no `@{`; not `@`; and, as `git check-ref-format --branch`
/// does, no leading `-`.
pub(crate) fn hf_revision(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "huggingface-cli")?;
    let help = "write a branch, tag or commit hash (`main`, `v1.0`, `refs/pr/1`, `a1b2c3…`)";
    let msg = |why: &str| format!("{q} is not a git revision: {why}");
    if s.is_empty() {
        return bad(msg("it is empty"), help);
    }
    if let Some(c) = s
        .chars()
        .find(|c| c.is_control() || " ~^:?*[\\".contains(*c))
    {
        return bad(msg(&format!("{c:?} is not allowed")), help);
    }
    if s.contains("..") || s.contains("@{") || s == "@" {
        return bad(msg("`..`, `@{` and a lone `@` are not allowed"), help);
    }
    if s.starts_with('/') || s.ends_with('/') || s.contains("//") || s.ends_with('.') {
        return bad(
            msg("it cannot start or end with `/`, contain `//`, or end with `.`"),
            help,
        );
    }
    if s.split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return bad(
            msg("a component cannot start with `.` or end with `.lock`"),
            help,
        );
    }
    Ok(())
}

/// A file name inside a Hugging Face repository (`config.json`,
/// `onnx/model.onnx`), passed to `huggingface-cli download` as an argument:
/// not empty, no control characters, no leading `-` or `/`, no `.` or `..`
/// component (which would leave the download folder), and no `*`, `?` or
/// `[`: files are fetched by exact name.
pub(crate) fn hf_file(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "huggingface-cli")?;
    let help = "write a path inside the repository (`config.json`, `onnx/model.onnx`)";
    if s.is_empty() || s.chars().any(char::is_control) {
        return bad(
            format!("{q} is not a file name in the repository: empty or with a control character"),
            help,
        );
    }
    if s.starts_with('/') || s.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
        return bad(
            format!("{q} is not a file name in the repository: a relative path without `.`, `..` or empty components"),
            help,
        );
    }
    // Files are fetched by exact name (`hf_hub_download`): a pattern would
    // be looked up as a file called `*.safetensors` and fail at build time.
    if s.contains(['*', '?', '[']) {
        return bad(
            format!("{q} is a pattern, but Hugging Face files are downloaded by exact name"),
            "list each file by its name in the repository (`model.safetensors`, `config.json`)",
        );
    }
    Ok(())
}

// ----- conda --------------------------------------------------------------------------------

/// A conda channel: a URL (`https://conda.anaconda.org/conda-forge`,
/// checked by [`url`]) or a channel name on the default channel alias — an
/// anaconda.org user or organization (`conda-forge`, `nvidia`, `pytorch`),
/// optionally followed by `/label/LABEL` (conda docs, "Channels"). Names
/// hold letters, digits, `- _ .` and start with a letter or digit. Local
/// paths are refused (they are not in the image), and so is rattler's
/// platform selector (`name[linux-64]`), which conda itself does not read.
pub(crate) fn conda_channel(s: &str) -> Result<(), Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "conda")?;
    if s.contains("://") {
        return http_url(s).map(|_| ());
    }
    let help =
        "write a channel name (`conda-forge`, `nvidia`, `conda-forge/label/rc`) or an https URL";
    let name_ok = |p: &str| all(p, |c| alnum(c) || "-_.".contains(c)) && p.starts_with(alnum);
    let parts: Vec<&str> = s.split('/').collect();
    let ok = match parts.as_slice() {
        [name] => name_ok(name),
        [name, "label", label] => name_ok(name) && name_ok(label),
        _ => false,
    };
    if !ok {
        return bad(
            format!("{q} is not a conda channel: a name (letters, digits, `- _ .`), `NAME/label/LABEL`, or a URL"),
            help,
        );
    }
    Ok(())
}

/// A conda match spec must not pick its own source: a channel named in the
/// spec (`CHANNEL::NAME`, `NAME[channel=CHANNEL]`) must be one of
/// `conda.channels` (which are validated by [`conda_channel`]), and a
/// package URL (`https://…/numpy-1.26.4-0.conda`), which conda installs from
/// wherever it points, is refused. The spec is parsed by
/// `scl_ir::conda::match_spec` (the same reading as at `check`); channels are compared by rattler's canonical name,
/// with a fixed root folder so that the result does not depend on the
/// working directory.
pub(crate) fn conda_spec_source(spec: &str, channels: &[String]) -> Result<(), Invalid> {
    use rattler_conda_types::{Channel, ChannelConfig};
    let q = Quoted(spec);
    let config = ChannelConfig::default_with_root_dir(std::path::PathBuf::from("/"));
    let Some(Ok(parsed)) = guarded(|| scl_ir::conda::match_spec(spec)) else {
        // Reported where the spec was checked.
        return Ok(());
    };
    if parsed.url.is_some() {
        return bad(
            format!("{q} is a package URL, which conda installs from wherever it points instead of the env's channels"),
            "publish the package in a channel, add the channel to `conda.channels`, and name the package",
        );
    }
    if let Some(c) = &parsed.channel {
        let name = c.canonical_name();
        let listed = channels.iter().any(|l| {
            guarded(|| Channel::from_str(l, &config).map(|l| l.canonical_name()))
                .and_then(Result::ok)
                .is_some_and(|l| l == name)
        });
        if !listed {
            return bad(
                format!("{q} names the channel {}, which is not in `conda.channels`", quoted(&name)),
                "add the channel to `conda.channels` (where it is checked), or remove it from the match spec",
            );
        }
    }
    Ok(())
}

// ----- image references --------------------------------------------------------------------

/// The parts of a valid image reference.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ImageParts {
    /// The tag, if one was written.
    pub tag: Option<String>,
    /// The digest, if one was written.
    pub digest: Option<String>,
}

/// The grammar of distribution/reference (`ReferenceRegexp` of
/// github.com/distribution/reference, `regexp.go`, which Docker, Podman and
/// every registry client use): `[HOST[:PORT]/]PATH[:TAG][@DIGEST]`, anchored,
/// with groups for name, tag and digest. It is the pattern the oci-spec crate
/// (`oci_spec::distribution::Reference`) carries, with one change: Go's `\w`
/// is ASCII (`[0-9A-Za-z_]`), and written so here, where oci-spec's Rust
/// `\w` is Unicode. That one difference made oci-spec accept non-ASCII tags
/// and made its first use compile a Unicode class repeated 128 times: 45 ms
/// and 48 MiB of memory in every process, ten times a whole check of a small
/// file. The test `image_references_agree_with_oci_spec` keeps the two
/// readings equal on ASCII input.
fn reference_regex() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::RegexBuilder::new(REFERENCE_GRAMMAR)
            .unicode(false)
            .build()
            .expect("the reference grammar is a valid pattern")
    })
}

/// See [`reference_regex`].
pub(crate) const REFERENCE_GRAMMAR: &str = r"^((?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(?::[0-9]+)?/)?[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?)(?::([0-9A-Za-z_][0-9A-Za-z_.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}))?$";

/// The longest repository name (host and path) distribution/reference
/// accepts (`NameTotalLengthMax`).
const NAME_TOTAL_LENGTH_MAX: usize = 255;

/// An image reference by the grammar of distribution/reference
/// ([`reference_regex`]): `[HOST[:PORT]/]PATH[:TAG][@DIGEST]`, the path in
/// lower case, the whole name at most 255 characters; digests must be
/// `sha256:` and 64 hex digits, which is what every target can pin.
pub(crate) fn image_reference(s: &str) -> Result<ImageParts, Invalid> {
    let q = Quoted(s);
    let help = "write `NAME[:TAG][@sha256:DIGEST]` with a lower-case name (`debian:12.5`, `nvcr.io/nvidia/pytorch:23.10-py3`)";
    no_leading_dash(s, "the container tools")?;
    let ok = |c: char| alnum(c) || "._-/:@".contains(c);
    if !all(s, ok) {
        return bad(
            format!(
                "{q} is not a valid image reference: {} is not allowed (letters, digits and `. _ - / : @`)",
                first_bad(s, ok)
            ),
            help,
        );
    }
    // A malformed digest gets its own message (the grammar's would only say
    // "invalid reference format").
    if let Some((_, d)) = s.split_once('@') {
        image_digest(d).map_err(|mut e| {
            e.msg = format!("{q}: {}", e.msg);
            e
        })?;
    }
    let Some(caps) = reference_regex().captures(s) else {
        // The grammar only says "invalid reference format"; say what is
        // wrong where it is clear.
        let lower = s.to_ascii_lowercase();
        let why = if reference_regex().is_match(&lower) {
            "the repository name must be lower case"
        } else {
            "invalid reference format"
        };
        return bad(format!("{q} is not a valid image reference: {why}"), help);
    };
    let name = caps.get(1).map_or("", |m| m.as_str());
    // The grammar lets a first component with capitals through as a
    // domain; Docker takes it as a domain only when it holds `.` or `:` or
    // is `localhost` (distribution/reference `splitDockerDomain`), and a
    // path component must be lower case: `NVIDIA/cuda` is refused there
    // ("repository name must be lowercase").
    if let Some((first, _)) = name.split_once('/') {
        let domain = first.contains(['.', ':']) || first == "localhost";
        if !domain && first.chars().any(|c| c.is_ascii_uppercase()) {
            return bad(
                format!("{q} is not a valid image reference: the repository name must be lower case (`{first}` is not a registry host: it has no `.` or `:`)"),
                help,
            );
        }
    }
    if name.len() > NAME_TOTAL_LENGTH_MAX {
        return bad(
            format!("{q} is not a valid image reference: the name is longer than {NAME_TOTAL_LENGTH_MAX} characters"),
            help,
        );
    }
    let written_tag = caps.get(2).map(|m| m.as_str().to_string());
    let digest = caps.get(3).map(|m| m.as_str().to_string());
    Ok(ImageParts {
        tag: written_tag,
        digest,
    })
}

/// An image digest that every target can pin: `sha256:` and 64 lower- or
/// upper-case hex digits (the message does not name the value) (OCI image spec, "Digests"; sha256 is the
/// registered algorithm every registry supports).
pub(crate) fn image_digest(d: &str) -> Result<(), Invalid> {
    let hex = d.strip_prefix("sha256:").unwrap_or("");
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return bad(
            "the digest must be `sha256:` and 64 hex digits",
            "copy the digest from `docker buildx imagetools inspect IMAGE`",
        );
    }
    Ok(())
}

// ----- URLs -----------------------------------------------------------------------------------

/// A URL (`scheme://…`), parsed by the `url` crate (the WHATWG URL
/// Standard). A URL the standard calls invalid but repairs (a space or a
/// backslash in it, a bad `%` escape, …: any syntax violation except
/// embedded credentials) is refused rather than silently rewritten, so the
/// value in the IR is the one every tool reads. Any scheme (`s3://`,
/// `file://`); see [`http_url`] for downloads.
pub(crate) fn url(s: &str) -> Result<url::Url, Invalid> {
    let q = Quoted(s);
    no_leading_dash(s, "the tool that reads it")?;
    let help =
        "write `scheme://HOST/PATH`; percent-encode spaces and other special characters (`%20`)";
    let violation: Cell<Option<url::SyntaxViolation>> = Cell::new(None);
    let record = |v: url::SyntaxViolation| {
        if v != url::SyntaxViolation::EmbeddedCredentials && violation.get().is_none() {
            violation.set(Some(v));
        }
    };
    let parsed = guarded(|| {
        url::Url::options()
            .syntax_violation_callback(Some(&record))
            .parse(s)
    });
    let u = match parsed {
        None => {
            return bad(
                format!("{q} could not be read as a URL (the parser failed on it)"),
                help,
            )
        }
        Some(Err(e)) => return bad(format!("{q} is not a URL: {e}"), help),
        Some(Ok(u)) => u,
    };
    if let Some(v) = violation.get() {
        return bad(format!("{q} is not a valid URL: {v}"), help);
    }
    if !s.contains("://") {
        return bad(format!("{q} is not a URL (`scheme://…`)"), help);
    }
    Ok(u)
}

/// An `http(s)` URL with a host (see [`url`]): what a download (`url()`,
/// Docker's `ADD`), a pip index line or a conda channel URL needs.
pub(crate) fn http_url(s: &str) -> Result<url::Url, Invalid> {
    let q = Quoted(s);
    let u = url(s)?;
    let help = "write an `https://HOST/PATH` URL";
    if !matches!(u.scheme(), "http" | "https") {
        return bad(
            format!("{q} is not an http(s) URL (scheme `{}`)", u.scheme()),
            help,
        );
    }
    if u.host_str().is_none_or(str::is_empty) {
        return bad(format!("{q} has no host"), help);
    }
    Ok(u)
}

/// True when BuildKit's Dockerfile frontend would read `ADD URL` as a git
/// repository to clone rather than a file to download: an http(s) URL whose
/// (percent-decoded) path ends in `.git` (moby/buildkit util/gitutil
/// `ParseGitRef`: "An HTTP(S) URL is considered to be a valid git ref only
/// when it has the `.git[...]` suffix").
pub(crate) fn is_git_url(u: &url::Url) -> bool {
    percent_decode(u.path()).ends_with(b".git")
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

// ----- file names and folders ----------------------------------------------------------------

/// A workspace-relative file name that `COPY` reads as the one file it names:
/// BuildKit matches `COPY` sources with Go's `filepath.Match`, where `*`, `?`
/// and `[` are patterns and `\` escapes (so `req[1].txt` copies `req1.txt`).
/// Control characters are refused too: no Dockerfile line can hold them.
pub(crate) fn copy_source(path: &str) -> Result<(), Invalid> {
    if let Some(c) = path
        .chars()
        .find(|c| "*?[\\".contains(*c) || c.is_control())
    {
        let shown = if c.is_control() {
            format!("{c:?}")
        } else {
            format!("`{c}`")
        };
        return bad(
            format!("{} has {shown} in its name, which Docker's COPY reads as a pattern, so another file than the one hashed here could be installed", quoted(path)),
            "rename the file (or folder) without `*`, `?`, `[`, `\\` or control characters",
        );
    }
    Ok(())
}

/// The folders `workdir` may not be: `/` and the top-level system folders of
/// the Filesystem Hierarchy Standard that the base image owns (`/bin`,
/// `/boot`, `/dev`, `/etc`, `/lib*`, `/proc`, `/run`, `/sbin`, `/sys`, `/usr`,
/// `/var`); the path is normalized first (`/usr/./`, `/opt/../etc`).
/// Folders below them (`/usr/src/app`) are fine.
pub(crate) fn workdir(path: &str) -> Result<(), Invalid> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let system = match parts.as_slice() {
        [] => true,
        [top] => {
            [
                "bin", "boot", "dev", "etc", "proc", "run", "sbin", "sys", "usr", "var",
            ]
            .contains(top)
                // FHS 3.0 §3.10: `/lib<qual>` (`lib32`, `lib64`, `libx32`).
                || top
                    .strip_prefix("lib")
                    .is_some_and(|q| q.len() <= 3 && q.chars().all(alnum))
        }
        _ => false,
    };
    if system {
        let shown = format!("/{}", parts.join("/"));
        let what = if shown == path {
            format!("`{path}` is")
        } else {
            format!("{} is `{shown}`,", quoted(path))
        };
        return bad(
            format!("`workdir` {what} a system folder of the base image"),
            "use a folder of its own, such as `/workspace` or `/usr/src/app`",
        );
    }
    Ok(())
}

// ----- requirements files --------------------------------------------------------------------

mod requirements;
pub(crate) use requirements::{env_var_reference, requirements, ReqLine, ReqOpt, PER_REQUIREMENT};

/// What sclc does with an option line of a requirements file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OptionUse {
    /// The value is carried into the IR (`--index-url`, `--extra-index-url`).
    Carry,
    /// pip applies it while installing the file's own requirements and
    /// nothing else changes: it stays in the file.
    Accept,
    /// Refused: why, and what to do instead.
    Refuse(&'static str, &'static str),
}

/// The options pip reads in a requirements file (pip 26.3
/// `req_file.SUPPORTED_OPTIONS` and `SUPPORTED_OPTIONS_REQ`), by canonical
/// long name, and what sclc does with each (short forms, aliases and
/// abbreviations map to these): never silently dropped. Options that change
/// where packages come from are carried into the IR or refused.
pub(crate) fn option_use(name: &str) -> OptionUse {
    match name {
        "--index-url" | "--extra-index-url" => OptionUse::Carry,
        // Which archives of a package pip may use, and which versions:
        // the package set the IR names stays the same.
        "--no-binary" | "--only-binary" | "--prefer-binary" | "--require-hashes"
        | "--no-require-hashes" | "--pre" | "--all-releases" | "--only-final" => OptionUse::Accept,
        // Per requirement (pip ignores them on an option line, with a
        // warning for `--hash`): checks or builds that requirement only.
        "--hash" | "--config-settings" => OptionUse::Accept,
        "--requirement" | "--constraint" => OptionUse::Refuse(
            "names another file, which is not copied into the image",
            "list every requirements file in `python.requirements` instead",
        ),
        "--editable" => OptionUse::Refuse(
            "is an editable install of a local folder or VCS checkout, which the image does not have",
            "install the package from an index, or copy it with `files` and install it in a `setup` step",
        ),
        "--find-links" => OptionUse::Refuse(
            "points pip at a folder or page of archives that the IR does not carry",
            "serve the archives from an index and add it to `python.extra_index_urls`",
        ),
        "--no-index" => OptionUse::Refuse(
            "would make pip ignore the env's index URLs",
            "remove the line; choose the index with `python.index_url`",
        ),
        "--trusted-host" => OptionUse::Refuse(
            "turns off TLS certificate checks for a host",
            "serve the index over https and remove the line",
        ),
        "--use-feature" => OptionUse::Refuse(
            "changes how pip works beyond what the IR says",
            "remove the line",
        ),
        _ => OptionUse::Refuse(
            "is not an option of pip's requirements file format",
            "requirements files take `-i`/`--index-url`, `--extra-index-url`, `--pre`, `--only-binary`, `--no-binary`, `--prefer-binary` and `--require-hashes`",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<E: std::fmt::Debug>(f: impl Fn(&str) -> Result<(), E>, good: &[&str], bad: &[&str]) {
        for g in good {
            assert!(f(g).is_ok(), "{g:?} should be accepted: {:?}", f(g));
        }
        for b in bad {
            assert!(f(b).is_err(), "{b:?} should be refused");
        }
    }

    #[test]
    fn guarded_catches_a_panic_and_passes_values_through() {
        assert_eq!(guarded(|| 41 + 1), Some(42));
        let r: Option<()> = guarded(|| panic!("library bug"));
        assert_eq!(r, None);
        // The scope counter is back to zero, also after a panic.
        assert_eq!(QUIET.with(|q| q.get()), 0);
        // Nested scopes.
        assert_eq!(guarded(|| guarded(|| 1)), Some(Some(1)));
    }

    #[test]
    fn pep508_panics_on_a_name_ending_in_a_separator_and_the_guard_catches_it() {
        use std::str::FromStr;
        // pep508_rs 0.9.2 `parse_name` panics ("`PackageName` validation
        // should match PEP 508 parsing") on a name ending in `-`, `.` or `_`
        // followed by a character that is not part of a name.
        // When a pep508_rs release fixes this, the first assertion fails:
        // E0317 is then only the safety net for the next such bug.
        let parse = |s: &str| {
            guarded(|| pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(s).is_ok())
        };
        assert_eq!(parse("a-}"), None, "pep508_rs 0.9.2 panics on `a-}}`");
        for s in ["a.}", "a_ ;", "x-["] {
            assert_ne!(parse(s), Some(true), "{s:?}");
        }
        assert_eq!(parse("numpy>=1.2"), Some(true));
    }

    #[test]
    fn debian_packages_follow_policy_and_apt_get() {
        // Debian Policy §5.6.7 (names), §5.6.12 (versions); apt-get(8).
        ok(
            debian_package,
            &[
                "curl",
                "libssl-dev",
                "g++",
                "python3.11",
                "curl=7.88.1-10+deb12u5",
                "curl=1:2.0~rc1",
                "libc6:amd64",
                "libc6:amd64=2.36-9",
                "git/bookworm-backports",
                "xz-utils",
                "a",
            ],
            &[
                "-o",
                "--allow-unauthenticated",
                "APT::Get=1",
                "Curl",
                "curl-",
                "curl ",
                "cu rl",
                "curl;rm",
                "curl=",
                "curl=abc",
                "curl=1.0-",
                "curl=x:1.0",
                "libc6:AMD64",
                "git/",
                "git/-x",
                "curl\n",
                "$(id)",
                "",
            ],
        );
    }

    #[test]
    fn rpm_packages_follow_rpm_and_dnf() {
        // rpm build/parsePreamble.c rpmCharCheck; dnf(8) package specs.
        ok(
            rpm_package,
            &[
                "python3-devel",
                "gcc-c++",
                "curl-8.6.0-1.fc40",
                "bash-0:5.2.26-3.fc40.x86_64",
                "vim-enhanced",
                "_x",
                "pkg-1.0~rc1^git",
            ],
            &[
                "-y",
                "@development-tools",
                "/usr/bin/python3",
                "py*",
                "a..b",
                "a b",
                "a;b",
                "",
                "x\n",
                "evil.rpm",
                "./evil.rpm",
                "x/evil.rpm",
                "evil.RPM",
            ],
        );
        assert!(rpm_package("rpm").is_ok() && rpm_package("python3-rpm").is_ok());
    }

    #[test]
    fn apk_packages_follow_apk_tools() {
        // apk-package(5), apk-world(5), apk-tools src/add.c.
        ok(
            apk_package,
            &[
                "py3-numpy",
                "build-base",
                "curl=8.5.0-r0",
                "python3~3.11",
                "busybox@edge",
                "busybox>1.6.1",
                "busybox>=1.6.1",
                "busybox~=1.6",
                "gcc<14",
                "lib.so_x+1",
                "p=1.2.3_rc1_p2~abc1-r3",
                "x=1a",
            ],
            &[
                "-U",
                "!curl",
                "./local.apk",
                "foo.apk",
                "curl==1",
                "curl=abc",
                "curl=1.2_wrong",
                "curl@",
                "@edge",
                "cu rl",
                "",
                "curl=1-r",
                "curl=1~",
            ],
        );
    }

    #[test]
    fn user_names_are_portable() {
        // POSIX.1-2017 §3.437, §3.282; shadow libmisc/chkname.c.
        ok(
            user_name,
            &["app", "trainer", "_svc", "www-data", "u1", "a_b-c"],
            &[
                "-o",
                "Root",
                "1user",
                "a b",
                "a.b",
                "a$",
                "",
                "ä",
                "a\n",
                &"x".repeat(33),
            ],
        );
    }

    #[test]
    fn hugging_face_ids_follow_validate_repo_id() {
        // huggingface_hub utils/_validators.py validate_repo_id.
        ok(
            hf_repo_id,
            &[
                "bert-base-uncased",
                "google-bert/bert-base-uncased",
                "Foo-BAR_foo.bar123",
                "123",
                "_x/_y",
                &"a".repeat(96),
            ],
            &[
                "datasets/foo/bar",
                ".repo_id",
                "foo--bar",
                "foo..bar",
                "foo.git",
                "-x/y",
                "x-/y",
                "x/y.",
                "",
                "x/",
                "a b",
                "ä/b",
                &"a".repeat(97),
            ],
        );
    }

    #[test]
    fn revisions_follow_git_ref_rules() {
        // git-check-ref-format(1).
        ok(
            hf_revision,
            &["main", "v1.0", "refs/pr/1", "a1b2c3d4", "release/2024-01"],
            &[
                "-x", "", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "/a", "a/",
                "a//b", "a.", "a@{1}", "@", ".a", "a/.b", "a.lock", "a\n",
            ],
        );
        ok(
            hf_file,
            &["config.json", "onnx/model.onnx", "tokenizer.json"],
            &[
                "",
                "-x",
                "/etc/passwd",
                "../x",
                "a/../b",
                "a//b",
                "./a",
                "a\n",
                "*.safetensors",
                "model-?.bin",
                "shard[0].bin",
            ],
        );
    }

    #[test]
    fn conda_channels_are_names_labels_or_urls() {
        ok(
            conda_channel,
            &[
                "conda-forge",
                "nvidia",
                "pytorch",
                "bioconda",
                "conda-forge/label/rc",
                "https://conda.anaconda.org/conda-forge",
            ],
            &[
                "-c",
                "--override-channels",
                "./local",
                "/opt/channel",
                "conda forge",
                "a/b",
                "a/label/",
                "conda-forge[linux-64]",
                "file:///tmp/x",
                "",
                "https://x/a b",
            ],
        );
    }

    #[test]
    fn conda_specs_take_their_channels_from_the_list() {
        let listed = vec![
            "conda-forge".to_string(),
            "https://conda.example.com/team".to_string(),
        ];
        ok(
            |s| conda_spec_source(s, &listed),
            &[
                "numpy",
                "numpy=1.26",
                "conda-forge::numpy",
                "numpy[channel=conda-forge]",
                "https://conda.example.com/team::tool",
                "conda-forge/linux-64::numpy",
            ],
            &[
                "evil::numpy",
                "numpy[channel=https://evil.example/c]",
                "https://evil.example/c::numpy",
                "https://evil.example/c/linux-64/numpy-1.26.4-0.conda",
                "nvidia::cuda",
            ],
        );
    }

    #[test]
    fn image_references_agree_with_oci_spec() {
        // The same grammar as oci-spec's parser on ASCII input (see
        // `reference_regex`): every case of the table below, and a few
        // thousand generated strings, accepted or refused alike, with the
        // same tag and digest.
        let mut cases: Vec<String> = [
            "debian:12.5",
            "debian",
            "python:3.11-slim",
            "nvcr.io/nvidia/pytorch:23.10-py3",
            "localhost:5000/team/img:1",
            "REGISTRY.example.com/x/y:Tag_1",
            "a/b/c/d",
            "x:y:z",
            "Debian:12",
            "a__b",
            "a___b",
            "a--b",
            "a-",
            "-a",
            "a/",
            "/a",
            "a:",
            "a:-x",
            "a:_x",
            "a.b.c/d:e",
            "a:1/b",
            "host:port/x",
            "a@sha256:0123456789abcdef0123456789abcdef",
            "a@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let alphabet = ['a', 'b', 'Z', '0', '9', '.', '_', '-', '/', ':', '@'];
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..4000 {
            let len = 1 + (x % 12) as usize;
            let mut s = String::new();
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            cases.push(s);
        }
        cases.push(format!("{}:t", "a".repeat(256)));
        cases.push(format!("a:{}", "t".repeat(128)));
        cases.push(format!("a:{}", "t".repeat(129)));
        for c in &cases {
            let ours = image_reference(c);
            let theirs = c.parse::<oci_spec::distribution::Reference>();
            // One known difference: oci-spec takes `Z/a` as the Docker Hub
            // repository `Z/a`, which Docker refuses (not a domain: no `.`
            // or `:`; a path component must be lower case). We follow Docker.
            let name = c.split(['@']).next().unwrap_or(c);
            let upper_path = name.split_once('/').is_some_and(|(first, _)| {
                !(first.contains(['.', ':']) || first == "localhost")
                    && first.chars().any(|ch| ch.is_ascii_uppercase())
            });
            match (&ours, &theirs) {
                (Err(_), Ok(_)) if upper_path => {}
                (Ok(p), Ok(r)) => {
                    assert_eq!(p.digest.as_deref(), r.digest(), "{c}");
                    if let Some(t) = &p.tag {
                        assert_eq!(Some(t.as_str()), r.tag(), "{c}");
                    }
                }
                (Err(_), Err(_)) => {}
                _ => panic!("{c:?}: ours {:?}, oci-spec {theirs:?}", ours.is_ok()),
            }
        }
    }

    #[test]
    fn image_references_follow_distribution_reference() {
        // distribution/reference grammar, through oci-spec.
        let good = [
            "debian:12.5",
            "debian",
            "python:3.11-slim",
            "nvcr.io/nvidia/pytorch:23.10-py3",
            "localhost:5000/team/img:1",
            "REGISTRY.example.com/x/y:Tag_1",
            "debian@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "debian:12@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "a/b/c/d",
        ];
        let bad = [
            "NVIDIA/cuda:12.1.1-runtime-ubuntu22.04",
            "debian:$TAG",
            "x:y:z",
            "debian:`id`",
            "Debian:12",
            "-debian",
            "debian:",
            ":12",
            "debian@sha256:abc",
            "debian@md5:0123456789abcdef0123456789abcdef",
            "deb ian",
            "debian:12\n",
            "debian:é",
            "",
            "/debian",
            "debian/",
        ];
        ok(|s| image_reference(s).map(|_| ()), &good, &bad);
        assert_eq!(image_reference("debian").unwrap().tag, None);
        assert_eq!(
            image_reference("localhost:5000/img").unwrap().tag,
            None,
            "a port is not a tag"
        );
        assert_eq!(
            image_reference("debian:12.5").unwrap().tag.as_deref(),
            Some("12.5")
        );
    }

    #[test]
    fn urls_are_parsed_strictly() {
        ok(
            |s| url(s).map(|_| ()),
            &[
                "s3://bucket/datasets/glue",
                "file:///srv/wheels",
                "nfs://host/x",
            ],
            &["s3://bucket/a b", "s3:bucket", "-s3://x", "s3://b/%zz"],
        );
        ok(
            |s| http_url(s).map(|_| ()),
            &[
                "https://example.com/model.bin",
                "http://pypi.internal:8080/simple",
                "https://user:token@pypi.example.com/simple",
                "https://x.org/a%20b?c=d#e",
            ],
            &[
                "https://example.com/a b",
                " https://example.com/",
                "https://example.com/\n",
                "https:example.com",
                "https://exa mple.com/",
                "https://example.com\\x",
                "https://x/%zz",
                "ftp://example.com/x",
                "file:///etc/passwd",
                "-https://x",
                "example.com",
                "https://",
            ],
        );
    }

    #[test]
    fn git_urls_are_recognized_like_buildkit() {
        // moby/buildkit util/gitutil ParseGitRef.
        let git = |s: &str| is_git_url(&http_url(s).unwrap());
        assert!(git("https://github.com/org/repo.git"));
        assert!(git("https://github.com/org/repo.git#main"));
        assert!(git("https://github.com/org/repo.git?x=1"));
        assert!(git("https://github.com/org/repo%2Egit"));
        assert!(!git("https://github.com/org/repo.git/"));
        assert!(!git("https://example.com/x.gitignore"));
        assert!(!git("https://example.com/model.bin"));
    }

    #[test]
    fn copy_sources_have_no_pattern_characters() {
        ok(
            copy_source,
            &["requirements.txt", "src/app.py", "a b.txt", "ü.txt", "a]b"],
            &[
                "req[1].txt",
                "*.txt",
                "a?.txt",
                "a\\b.txt",
                "a\nb",
                "x\u{7f}",
            ],
        );
    }

    #[test]
    fn workdir_is_not_a_system_folder() {
        ok(
            workdir,
            &[
                "/workspace",
                "/usr/src/app",
                "/opt/app",
                "/home/app",
                "/var/lib/app",
                "/library",
            ],
            &[
                "/",
                "//",
                "/.",
                "/etc",
                "/etc/",
                "/usr",
                "/usr/.",
                "/opt/../etc",
                "/bin",
                "/boot",
                "/dev",
                "/lib",
                "/lib64",
                "/lib32",
                "/libx32",
                "/proc",
                "/run",
                "/sbin",
                "/sys",
                "/var",
                "/..",
            ],
        );
    }

    #[test]
    fn every_documented_option_has_a_decision() {
        // pip "Requirements File Format", "Global options".
        for o in ["--index-url", "--extra-index-url"] {
            assert_eq!(option_use(o), OptionUse::Carry, "{o}");
        }
        for o in [
            "--no-binary",
            "--only-binary",
            "--prefer-binary",
            "--require-hashes",
            "--no-require-hashes",
            "--pre",
            "--all-releases",
            "--only-final",
            "--hash",
            "--config-settings",
        ] {
            assert_eq!(option_use(o), OptionUse::Accept, "{o}");
        }
        for o in [
            "--requirement",
            "--constraint",
            "--editable",
            "--find-links",
            "--no-index",
            "--trusted-host",
            "--use-feature",
            "--bogus",
            "-x",
        ] {
            assert!(matches!(option_use(o), OptionUse::Refuse(..)), "{o}");
        }
    }
}
