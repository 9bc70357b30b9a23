//! `sclc diff OLD NEW` and `sclc diff --rev REV FILE`: what a change to an
//! env file does, for a reviewer.
//!
//! Both sides are compiled as `sclc build` would (the same `--set` flags,
//! `--target`, `--image-repo`), then compared in two parts, env by env:
//!
//! 1. **IR fields** — the canonical EnvSpec IR of each env, compared as JSON:
//!    objects key by key, lists element by element (an element inserted or
//!    removed is one change; a list whose elements changed in place is
//!    compared element by element, so `volumes[1].mount` is one change). A
//!    field that appears or disappears whole (a `distributed` block) is one
//!    change with its whole value. Each change names where it is set: the
//!    item that wrote it on the new side (on the old side for a removal),
//!    from the provenance table `sclc ir --provenance` prints.
//! 2. **Lowered files** — a unified diff (3 lines of context) of every
//!    artifact of every target that changed, appeared or disappeared, named
//!    `<env>/<file>` as under `sclc build --out`.
//!
//! Formats: `text` (the terminal), `markdown` (a pull-request comment: a
//! table of field changes, each file's diff in a collapsed `diff` block;
//! nothing at all when nothing changed, so CI can skip the comment) and
//! `json` (`{"old", "new", "envs": [{"env", "change", "fields": [{"path",
//! "change", "old", "new", "at"}], "files": [{"path", "change", "diff"}]}]}`,
//! `change` being `added`, `removed` or `changed`; unchanged envs are left
//! out).
//!
//! Only errors are reported (either side's: exit 1, nothing printed on
//! stdout); warnings are `sclc check`'s and `sclc build`'s to give. Exit 0
//! whether or not anything changed.

use crate::commands::{self, MessageFormat};
use crate::git::GitRev;
use scl_ide::{Analysis, AnalysisHost, Diagnostic, LowerOptions, OsSystem, System, Target};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How long one list or file may take to diff before the diff library
/// settles for a longer (still correct) diff: Myers' algorithm is quadratic
/// on inputs that differ everywhere.
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// `--format` of `sclc diff`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffFormat {
    Text,
    Markdown,
    Json,
}

/// What `sclc diff` compares and how it prints (its flags).
pub(crate) struct DiffArgs {
    pub files: Vec<PathBuf>,
    pub rev: Option<String>,
    pub env: Option<String>,
    pub format: DiffFormat,
    pub target: String,
    pub image_repo: Option<String>,
    pub host_root: Option<String>,
    pub set: Vec<String>,
    pub message_format: MessageFormat,
    pub stdlib: Option<PathBuf>,
}

/// Where a field is set, as shown to the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
struct At {
    file: String,
    line: u32,
    column: u32,
    env: String,
}

/// One IR field that changed.
#[derive(Clone, Debug)]
struct FieldChange {
    path: String,
    old: Option<Value>,
    new: Option<Value>,
    at: Option<At>,
}

impl FieldChange {
    fn change(&self) -> &'static str {
        match (&self.old, &self.new) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        }
    }
}

/// One lowered file that changed.
#[derive(Clone, Debug)]
struct FileChange {
    /// `<env>/<file>`.
    path: String,
    change: &'static str,
    /// The unified diff, with `a/…`/`b/…` (or `/dev/null`) headers.
    diff: String,
    added: usize,
    removed: usize,
}

/// What changed in one env.
#[derive(Clone, Debug)]
struct EnvDiff {
    env: String,
    change: &'static str,
    fields: Vec<FieldChange>,
    files: Vec<FileChange>,
}

/// One compiled side: its envs' IR (as JSON), provenance, lowered files.
struct Side {
    label: String,
    ir: BTreeMap<String, Value>,
    provenance: BTreeMap<String, BTreeMap<String, At>>,
    /// env → `<file>` → contents.
    files: BTreeMap<String, BTreeMap<String, String>>,
}

/// Runs `sclc diff`; returns the exit code.
pub(crate) fn diff(args: DiffArgs) -> i32 {
    let targets: Vec<Target> = match args.target.as_str() {
        "all" => Target::in_all().collect(),
        name => match Target::from_name(name) {
            Some(t) => vec![t],
            None => return commands::usage_error(&format!("there is no target `{name}`")),
        },
    };
    if let Some(r) = &args.image_repo {
        if let Err(why) = commands::check_image_repo(r) {
            return commands::usage_error(&format!("--image-repo {r:?} {why}"));
        }
    }
    if let Some(r) = &args.host_root {
        if let Err(why) = commands::check_host_root(r) {
            return commands::usage_error(&format!("--host-root {r:?} {why}"));
        }
    }
    let options = LowerOptions {
        image_repo: args.image_repo.clone(),
        host_root: args.host_root.clone(),
    };
    // The old side's file, system and (for a revision) its tree.
    let (old_file, old_sys, git, new_file): (&Path, Arc<dyn System>, Option<Arc<GitRev>>, &Path) =
        match (&args.rev, args.files.as_slice()) {
            (Some(rev), [file]) => match GitRev::open(file, rev) {
                Ok(g) => {
                    let g = Arc::new(g);
                    (file, g.clone(), Some(g), file)
                }
                Err(e) => return commands::usage_error(&e),
            },
            (Some(_), _) => {
                return commands::usage_error(
                    "with --rev, give one FILE: `sclc diff --rev REV FILE`",
                )
            }
            (None, [old, new]) => (old, Arc::new(OsSystem), None, new),
            (None, _) => {
                return commands::usage_error(
                    "give two files, `sclc diff OLD NEW`, or one with a revision, `sclc diff --rev REV FILE`",
                )
            }
        };
    let old_label = match &git {
        Some(g) => g.shown_file(old_file),
        None => old_file.display().to_string(),
    };
    let sides = [
        (old_file, old_sys, old_label, git),
        (
            new_file,
            Arc::new(OsSystem) as Arc<dyn System>,
            new_file.display().to_string(),
            None,
        ),
    ];
    let mut compiled = Vec::new();
    let mut failed = false;
    for (file, system, label, git) in sides {
        match compile(
            file,
            system,
            label,
            git.as_deref(),
            &args,
            &targets,
            &options,
        ) {
            Ok(side) => compiled.push(side),
            Err(1) => failed = true,
            Err(code) => return code,
        }
    }
    if failed {
        return 1;
    }
    let [old, new] = <[Side; 2]>::try_from(compiled).ok().expect("two sides");
    if let Some(name) = &args.env {
        if !old.ir.contains_key(name) && !new.ir.contains_key(name) {
            return commands::usage_error(&format!(
                "there is no env `{name}` in {} nor in {}",
                old.label, new.label
            ));
        }
    }
    let envs = compare(&old, &new);
    let text = match args.format {
        DiffFormat::Text => render_text(&envs),
        DiffFormat::Markdown => render_markdown(&old.label, &new.label, &envs),
        DiffFormat::Json => render_json(&old.label, &new.label, &envs),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
    0
}

/// Compiles one side: check, IR, provenance and every target's files of
/// the selected envs. Errors are printed (exit 1); a usage problem (a
/// missing file) is exit 2.
fn compile(
    file: &Path,
    system: Arc<dyn System>,
    label: String,
    git: Option<&GitRev>,
    args: &DiffArgs,
    targets: &[Target],
    options: &LowerOptions,
) -> Result<Side, i32> {
    let opened = AnalysisHost::open_root(system, file, args.stdlib.clone());
    let opened = match (opened, git) {
        (Err(scl_ide::OpenError::Missing), Some(g)) => {
            return Err(commands::usage_error(&format!(
                "{} does not exist at revision `{}`",
                file.display(),
                g.rev()
            )))
        }
        (o, _) => o,
    };
    let cwd = OsSystem.current_dir();
    // How a file is shown: relative to the current folder, or `REV:path`.
    let shown = |p: &Path| match git {
        Some(g) => g.shown(p),
        None => commands::shown_path(&cwd, p),
    };
    let (host, a, f, diags) = commands::load_opened(file, opened, &args.set)?;
    let show = |a: &Analysis, diags: &[Diagnostic]| {
        let errors: Vec<Diagnostic> = diags.iter().filter(|d| d.is_error()).cloned().collect();
        let sources = commands::Sources::shown_with(a, shown);
        commands::render_diagnostics(
            &sources,
            &errors,
            args.message_format == MessageFormat::Json,
        );
    };
    if diags.iter().any(Diagnostic::is_error) {
        show(&a, &diags);
        return Err(1);
    }
    let mut envs = a.select_envs(f, None).unwrap_or_default();
    if let Some(name) = &args.env {
        envs.retain(|e| e == name);
    }
    let mut side = Side {
        label,
        ir: BTreeMap::new(),
        provenance: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    let mut built = Vec::new();
    for name in &envs {
        let Some(spec) = a.ir(f, name) else {
            return Err(1);
        };
        // An env without `base` and services is only a parent: it has IR
        // but no files (as `sclc build` skips it).
        if spec.base.is_some() || !spec.services.is_empty() {
            built.push(name.clone());
        }
        let value = serde_json::to_value(spec.versioned()).expect("IR serializes");
        side.ir.insert(name.clone(), value);
        let table = a.provenance(f, name).unwrap_or_default();
        let table = table
            .into_iter()
            .map(|(path, e)| {
                let file = match a.path_of_key(&e.file) {
                    Some(p) => shown(&p),
                    None => e.file.clone(),
                };
                let at = At {
                    file,
                    line: e.line,
                    column: e.column,
                    env: e.env,
                };
                (path, at)
            })
            .collect();
        side.provenance.insert(name.clone(), table);
        side.files.insert(name.clone(), BTreeMap::new());
    }
    let mut errors: Vec<Diagnostic> = Vec::new();
    for t in targets.iter().copied() {
        let lowering = a.lower_with(f, &built, t, options);
        if lowering.incomplete {
            return Err(1);
        }
        for d in lowering.diagnostics {
            if d.is_error() && !errors.contains(&d) {
                errors.push(d);
            }
        }
        for (env, l) in lowering.outputs {
            let files = side.files.entry(env).or_default();
            for art in l.artifacts {
                files.insert(art.path, art.contents);
            }
        }
    }
    commands::merge_no_base(&mut errors);
    if !errors.is_empty() {
        show(&a, &errors);
        return Err(1);
    }
    // The process ends soon: freeing the database would only cost time.
    std::mem::forget(a);
    std::mem::forget(host);
    Ok(side)
}

/// Every env that differs between the sides: the new side's order
/// (by name), then those only in the old side.
fn compare(old: &Side, new: &Side) -> Vec<EnvDiff> {
    let mut names: Vec<&String> = new.ir.keys().collect();
    for n in old.ir.keys() {
        if !new.ir.contains_key(n) {
            names.push(n);
        }
    }
    names.sort();
    let empty = BTreeMap::new();
    let mut out = Vec::new();
    for name in names {
        let (o, n) = (old.ir.get(name), new.ir.get(name));
        let mut fields = Vec::new();
        if let (Some(o), Some(n)) = (o, n) {
            diff_value(String::new(), Some(o), Some(n), &mut fields);
        }
        for c in &mut fields {
            let table = if c.new.is_some() {
                new.provenance.get(name)
            } else {
                old.provenance.get(name)
            };
            c.at = table.and_then(|t| locate(t, &c.path));
        }
        let files = diff_files(
            name,
            old.files.get(name).unwrap_or(&empty),
            new.files.get(name).unwrap_or(&empty),
        );
        let change = match (o, n) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        };
        if change == "changed" && fields.is_empty() && files.is_empty() {
            continue;
        }
        out.push(EnvDiff {
            env: name.clone(),
            change,
            fields,
            files,
        });
    }
    out
}

/// The field changes between `old` and `new` at `path` (`""` the root).
fn diff_value(path: String, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<FieldChange>) {
    let change = |out: &mut Vec<FieldChange>| {
        out.push(FieldChange {
            path: path.clone(),
            old: old.cloned(),
            new: new.cloned(),
            at: None,
        })
    };
    match (old, new) {
        (Some(o), Some(n)) if o == n => {}
        (Some(Value::Object(o)), Some(Value::Object(n))) => {
            let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff_value(p, o.get(k), n.get(k), out);
            }
        }
        (Some(Value::Array(o)), Some(Value::Array(n))) => diff_list(&path, o, n, out),
        _ => change(out),
    }
}

/// Lists element by element: the longest common subsequence (Myers, by
/// each element's JSON) keeps what stayed; an element changed in place
/// (a run of replacements of equal length) is compared within.
fn diff_list(path: &str, old: &[Value], new: &[Value], out: &mut Vec<FieldChange>) {
    let keys = |v: &[Value]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let (ok, nk) = (keys(old), keys(new));
    let removed = |i: usize, out: &mut Vec<FieldChange>| {
        diff_value(format!("{path}[{i}]"), Some(&old[i]), None, out)
    };
    let added = |j: usize, out: &mut Vec<FieldChange>| {
        diff_value(format!("{path}[{j}]"), None, Some(&new[j]), out)
    };
    // A deadline bounds the time on huge, wholly changed lists (the
    // result is then still a correct diff, only not the shortest).
    let deadline = std::time::Instant::now() + DIFF_DEADLINE;
    for op in similar::capture_diff_deadline(
        similar::Algorithm::Myers,
        &ok,
        0..ok.len(),
        &nk,
        0..nk.len(),
        Some(deadline),
    ) {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => (old_index..old_index + old_len).for_each(|i| removed(i, out)),
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => (new_index..new_index + new_len).for_each(|j| added(j, out)),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                if old_len == new_len {
                    for k in 0..old_len {
                        diff_value(
                            format!("{path}[{}]", new_index + k),
                            Some(&old[old_index + k]),
                            Some(&new[new_index + k]),
                            out,
                        );
                    }
                } else {
                    (old_index..old_index + old_len).for_each(|i| removed(i, out));
                    (new_index..new_index + new_len).for_each(|j| added(j, out));
                }
            }
        }
    }
}

/// Where the field at `path` (`volumes[1].mount`) is set: the entry of the
/// longest dotted prefix of it (list indices dropped) in the table.
fn locate(table: &BTreeMap<String, At>, path: &str) -> Option<At> {
    let mut plain = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let mut p = plain.as_str();
    loop {
        if let Some(at) = table.get(p) {
            return Some(at.clone());
        }
        // A field set inside a block: the block's entries start with `p.`.
        let prefix = format!("{p}.");
        if let Some((_, at)) = table
            .range(prefix.clone()..)
            .next()
            .filter(|(k, _)| k.starts_with(&prefix))
        {
            return Some(at.clone());
        }
        match p.rfind('.') {
            Some(i) => p = &p[..i],
            None => return None,
        }
    }
}

/// The unified diffs of the files of one env that changed.
fn diff_files(
    env: &str,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<FileChange> {
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut out = Vec::new();
    for p in paths {
        let (o, n) = (old.get(p), new.get(p));
        if o == n {
            continue;
        }
        let name = format!("{env}/{p}");
        let (a, b) = (
            o.map_or("/dev/null".to_string(), |_| format!("a/{name}")),
            n.map_or("/dev/null".to_string(), |_| format!("b/{name}")),
        );
        let (ot, nt) = (o.map_or("", String::as_str), n.map_or("", String::as_str));
        let td = similar::TextDiff::configure()
            .timeout(DIFF_DEADLINE)
            .diff_lines(ot, nt);
        let mut added = 0;
        let mut removed = 0;
        for c in td.iter_all_changes() {
            match c.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        let mut diff = format!("--- {a}\n+++ {b}\n");
        for hunk in td.unified_diff().context_radius(3).iter_hunks() {
            let _ = write!(diff, "{hunk}");
        }
        if !diff.ends_with('\n') {
            diff.push_str("\n\\ No newline at end of file\n");
        }
        out.push(FileChange {
            path: name,
            change: match (o, n) {
                (None, _) => "added",
                (_, None) => "removed",
                _ => "changed",
            },
            diff,
            added,
            removed,
        });
    }
    out
}

/// A value as one line: JSON (strings quoted), absent as `(none)`.
fn show_value(v: &Option<Value>) -> String {
    match v {
        Some(v) => v.to_string(),
        None => "(none)".into(),
    }
}

fn show_at(at: &Option<At>) -> String {
    match at {
        Some(at) => format!("{}:{}:{}", at.file, at.line, at.column),
        None => String::new(),
    }
}

fn render_text(envs: &[EnvDiff]) -> String {
    if envs.is_empty() {
        return "no changes: the IR and every lowered file are the same\n".into();
    }
    let mut s = String::new();
    for (i, e) in envs.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let _ = writeln!(s, "env {}: {}", e.env, e.change);
        for c in &e.fields {
            let (sign, body) = match c.change() {
                "added" => ("+", format!("{} = {}", c.path, show_value(&c.new))),
                "removed" => ("-", format!("{} = {}", c.path, show_value(&c.old))),
                _ => (
                    "~",
                    format!(
                        "{}: {} -> {}",
                        c.path,
                        show_value(&c.old),
                        show_value(&c.new)
                    ),
                ),
            };
            let at = show_at(&c.at);
            if at.is_empty() {
                let _ = writeln!(s, "  {sign} {body}");
            } else {
                let _ = writeln!(s, "  {sign} {body}  (at {at})");
            }
        }
        for f in &e.files {
            let _ = writeln!(s);
            let _ = write!(s, "{}", f.diff);
        }
    }
    s
}

/// A markdown code span holding `s` on one line, `|` escaped for tables.
fn md_code(s: &str) -> String {
    md_code_inline(s).replace('|', "\\|")
}

/// A markdown code span holding `s` on one line (outside a table).
fn md_code_inline(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let longest = longest_run(&s, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == ch {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Text for HTML (`<summary>`): `&`, `<`, `>` escaped.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn render_markdown(old: &str, new: &str, envs: &[EnvDiff]) -> String {
    let mut s = format!(
        "### sclc diff: {} → {}\n\n",
        md_code_inline(old),
        md_code_inline(new)
    );
    if envs.is_empty() {
        // Nothing to post: a CI step tests for an empty output.
        return String::new();
    }
    for e in envs {
        let _ = writeln!(s, "#### env {} ({})\n", md_code(&e.env), e.change);
        if !e.fields.is_empty() {
            s.push_str("| | field | old | new | set at |\n|---|---|---|---|---|\n");
            for c in &e.fields {
                let sign = match c.change() {
                    "added" => "+",
                    "removed" => "−",
                    _ => "~",
                };
                let cell = |v: &Option<Value>| match v {
                    Some(v) => md_code(&v.to_string()),
                    None => String::new(),
                };
                let at = show_at(&c.at);
                let _ = writeln!(
                    s,
                    "| {sign} | {} | {} | {} | {} |",
                    md_code(&c.path),
                    cell(&c.old),
                    cell(&c.new),
                    if at.is_empty() {
                        String::new()
                    } else {
                        md_code(&at)
                    }
                );
            }
            s.push('\n');
        }
        for f in &e.files {
            let fence = "`".repeat(longest_run(&f.diff, '`').max(2) + 1);
            let _ = writeln!(
                s,
                "<details><summary><code>{}</code> ({}, +{} −{})</summary>\n\n{fence}diff\n{}{fence}\n\n</details>\n",
                html(&f.path),
                f.change,
                f.added,
                f.removed,
                f.diff
            );
        }
    }
    s
}

fn render_json(old: &str, new: &str, envs: &[EnvDiff]) -> String {
    let envs: Vec<Value> = envs
        .iter()
        .map(|e| {
            let fields: Vec<Value> = e
                .fields
                .iter()
                .map(|c| {
                    let mut v = json!({"path": c.path, "change": c.change()});
                    if let Some(o) = &c.old {
                        v["old"] = o.clone();
                    }
                    if let Some(n) = &c.new {
                        v["new"] = n.clone();
                    }
                    if let Some(at) = &c.at {
                        v["at"] = json!({"file": at.file, "line": at.line, "column": at.column, "env": at.env});
                    }
                    v
                })
                .collect();
            let files: Vec<Value> = e
                .files
                .iter()
                .map(|f| json!({"path": f.path, "change": f.change, "diff": f.diff}))
                .collect();
            json!({"env": e.env, "change": e.change, "fields": fields, "files": files})
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&json!({"old": old, "new": new, "envs": envs}))
        .expect("JSON serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(o: Value, n: Value) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        diff_value(String::new(), Some(&o), Some(&n), &mut out);
        out.into_iter()
            .map(|c| (c.path.clone(), show_value(&c.old), show_value(&c.new)))
            .collect()
    }

    #[test]
    fn objects_key_by_key_and_whole_new_blocks() {
        let c = changes(
            json!({"a": {"count": 1, "type": "x"}, "keep": 1}),
            json!({"a": {"count": 4, "type": "x"}, "keep": 1, "d": {"nodes": 1}}),
        );
        assert_eq!(
            c,
            vec![
                ("a.count".into(), "1".into(), "4".into()),
                ("d".into(), "(none)".into(), "{\"nodes\":1}".into()),
            ]
        );
    }

    #[test]
    fn lists_by_element() {
        let c = changes(
            json!({"p": ["git", "tmux", "htop"]}),
            json!({"p": ["git", "htop", "vim"]}),
        );
        assert_eq!(
            c,
            vec![
                ("p[1]".into(), "\"tmux\"".into(), "(none)".into()),
                ("p[2]".into(), "(none)".into(), "\"vim\"".into()),
            ]
        );
        // Changed in place: compared within.
        let c = changes(
            json!({"v": [{"name": "a", "mount": "/x"}]}),
            json!({"v": [{"name": "a", "mount": "/y"}]}),
        );
        assert_eq!(
            c,
            vec![("v[0].mount".into(), "\"/x\"".into(), "\"/y\"".into())]
        );
    }

    #[test]
    fn locate_takes_the_longest_prefix_without_indices() {
        let at = |line| At {
            file: "f".into(),
            line,
            column: 1,
            env: "e".into(),
        };
        let mut t = BTreeMap::new();
        t.insert("volumes".to_string(), at(1));
        t.insert("resources.requests.gpu".to_string(), at(2));
        t.insert("distributed.nodes".to_string(), at(3));
        assert_eq!(locate(&t, "volumes[1].mount").map(|a| a.line), Some(1));
        assert_eq!(
            locate(&t, "resources.requests.gpu.count").map(|a| a.line),
            Some(2)
        );
        assert_eq!(locate(&t, "distributed").map(|a| a.line), Some(3));
        assert_eq!(locate(&t, "vars.X"), None);
    }

    #[test]
    fn markdown_code_spans_hold_any_text() {
        assert_eq!(md_code("a|b"), "`a\\|b`");
        assert_eq!(md_code("x`y"), "``x`y``");
        assert_eq!(md_code("`"), "`` ` ``");
        assert_eq!(md_code("a\nb"), "`a b`");
    }
}
