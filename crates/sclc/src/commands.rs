use clap::{Parser, Subcommand, ValueEnum};
use scl_db::{find_workspace_root, Database, SourceFile};
use scl_diag::{render_human, render_json, Diagnostic, SourceCache};
use scl_sema::{ModuleValues, Override};
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::output::write_atomically;

/// The SCL compiler: one typed description of an ML job's environment, lowered
/// to Dockerfiles (and, later, Apptainer, conda, Kubernetes and compose).
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
enum MessageFormat {
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
        /// The target format.
        #[arg(long, value_enum)]
        target: Target,
        /// The output folder.
        #[arg(long, default_value = "out")]
        out: PathBuf,
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
    /// Explain a diagnostic code, with an example and the fix.
    Explain {
        /// `E0201`, `W0001`, … (`sclc explain --list` lists them all).
        code: Option<String>,
        #[arg(long)]
        list: bool,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    Docker,
    Apptainer,
    Conda,
    K8s,
    Compose,
    All,
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
    match cli.command {
        Command::Explain { code, list } => explain(code, list),
        Command::Fmt {
            paths,
            check,
            stdin,
        } => crate::fmt::fmt(&paths, check, stdin, fmt == MessageFormat::Json),
        Command::Check { paths, set } => check(&paths, &set, fmt, cli.stdlib),
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
            out,
            set,
        } => build(&file, env.as_deref(), target, &out, &set, fmt, cli.stdlib),
    }
}

pub(crate) fn usage_error(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
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

/// The texts diagnostics may point into: every file read, and the command line.
struct Sources(HashMap<String, String>);

impl SourceCache for Sources {
    fn source(&self, file: &str) -> Option<&str> {
        self.0.get(file).map(|s| s.as_str())
    }
}

const CMDLINE: &str = "<command-line>";

fn print_diagnostics(db: &Database, diags: &[Diagnostic], fmt: MessageFormat, cmdline: &str) {
    if diags.is_empty() {
        return;
    }
    let mut src = db.sources();
    src.insert(CMDLINE.to_string(), cmdline.to_string());
    render_diagnostics(src, diags, fmt == MessageFormat::Json);
}

/// Prints `diags` to stderr as `sclc check` does (human or JSON, with the
/// error and warning count), with `src` the texts they point into (by the
/// file name in each diagnostic).
pub(crate) fn render_diagnostics(src: HashMap<String, String>, diags: &[Diagnostic], json: bool) {
    if diags.is_empty() {
        return;
    }
    let fmt = if json {
        MessageFormat::Json
    } else {
        MessageFormat::Human
    };
    let sources = Sources(src);
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut err = std::io::stderr().lock();
    for d in diags {
        let _ = match fmt {
            MessageFormat::Json => writeln!(err, "{}", render_json(d, &sources)),
            MessageFormat::Human => write!(err, "{}", render_human(d, &sources, color)),
        };
    }
    if fmt == MessageFormat::Human {
        let e = diags.iter().filter(|d| d.is_error()).count();
        let w = diags.len() - e;
        let plural = |n: usize, s: &str| {
            if n == 1 {
                format!("{n} {s}")
            } else {
                format!("{n} {s}s")
            }
        };
        let _ = match (e, w) {
            (0, w) => writeln!(err, "{} emitted", plural(w, "warning")),
            (e, 0) => writeln!(err, "{} emitted", plural(e, "error")),
            (e, w) => writeln!(
                err,
                "{} and {} emitted",
                plural(e, "error"),
                plural(w, "warning")
            ),
        };
    }
}

/// Parses `--set` flags into overrides for the root file's modules.
/// Returns the command-line pseudo-source and the overrides, or diagnostics:
/// a malformed flag or an unknown alias (E0312), and a parameter set twice
/// (E0319) — also through two aliases of one module — where the first flag
/// does not silently win.
fn overrides(
    db: &Database,
    root: SourceFile,
    set: &[String],
) -> (String, BTreeMap<PathBuf, Vec<Override>>, Vec<Diagnostic>) {
    let mut text = String::new();
    let mut map: BTreeMap<PathBuf, Vec<Override>> = BTreeMap::new();
    let mut diags = Vec::new();
    // (module, parameter) → the span of the flag's key that set it first.
    let mut first: HashMap<(PathBuf, String), (scl_diag::Span, String)> = HashMap::new();
    let file: Arc<str> = Arc::from(CMDLINE);
    for s in set {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str("--set ");
        let start = text.len();
        // The pseudo-source shows what was given; a hidden character in it
        // (an escape, a bidi override, a line break: E0010) is refused, as
        // in a source file, before the value is read.
        if let Some((i, c)) = s
            .char_indices()
            .find(|(_, c)| scl_diag::is_hidden(*c) || *c == '\n')
        {
            text.push_str(&scl_diag::visible_source(s).replace('\n', " "));
            let mut d = Diagnostic::error(
                "E0010",
                scl_diag::Span::new(start + i, start + i + c.len_utf8()),
                format!("`--set` value with an invisible character {}", scl_diag::describe_char(c)),
            )
            .with_help("give the value without it; a value cannot hold control characters, line breaks or bidirectional controls");
            d.at.file = file.clone();
            diags.push(d);
            continue;
        }
        text.push_str(s);
        let Some((raw_key, value)) = s.split_once('=') else {
            let mut d = Diagnostic::error(
                "E0312",
                scl_diag::Span::new(start, start + s.len()),
                format!("`--set {s}` needs the form NAME=VALUE"),
            );
            d.at.file = file.clone();
            diags.push(d);
            continue;
        };
        let offset = (start + raw_key.len() + 1) as u32;
        // `--set "gpus = 2"`: the name without the blanks around it.
        let start = start + (raw_key.len() - raw_key.trim_start().len());
        let key = raw_key.trim();
        let (target, name) = match key.split_once('.') {
            None => (Some(root), key.to_string()),
            Some((alias, name)) => {
                let parse = scl_db::parse(db, root);
                let imps = scl_db::imports(db, root);
                let idx = parse.module.decls.iter().position(
                    |d| matches!(d, scl_syntax::ast::Decl::Import(i) if i.alias.name == alias),
                );
                match idx.and_then(|i| imps.targets[i]) {
                    Some(f) => (Some(f), name.to_string()),
                    None => {
                        let mut d = Diagnostic::error(
                            "E0312",
                            scl_diag::Span::new(start, start + alias.len()),
                            format!("`--set {key}`: the root file imports no module as `{alias}`"),
                        );
                        d.at.file = file.clone();
                        diags.push(d);
                        (None, String::new())
                    }
                }
            }
        };
        if let Some(f) = target {
            let t = f.path(db).clone();
            let key_span = scl_diag::Span::new(start, start + key.len());
            if let Some((prev, prev_key)) = first.get(&(t.clone(), name.clone())) {
                let msg = if *prev_key == key {
                    format!("`--set {key}` is given twice")
                } else {
                    format!(
                        "`--set {key}` sets the same parameter as `--set {prev_key}` (parameter `{name}` of `{}`)",
                        db.display_path(f)
                    )
                };
                let mut d = Diagnostic::error("E0319", key_span, msg)
                    .with_label(file.clone(), *prev, "set here first")
                    .with_help("give each parameter once");
                d.at.file = file.clone();
                diags.push(d);
                continue;
            }
            first.insert((t.clone(), name.clone()), (key_span, key.to_string()));
            let name_start = key_span.end as usize - name.len();
            map.entry(t).or_default().push(Override {
                name_span: scl_diag::Span::new(name_start, key_span.end as usize),
                name,
                value: value.to_string(),
                file: file.clone(),
                offset,
            });
        }
    }
    (text, map, diags)
}

/// Opens `file` in a new database for its workspace, applies `--set`, and
/// checks it. Returns the db, the file, the command line text and the diagnostics.
fn load(
    file: &Path,
    set: &[String],
    stdlib: Option<PathBuf>,
) -> Result<(Database, SourceFile, String, Vec<Diagnostic>), i32> {
    if file.is_dir() {
        return Err(usage_error(&format!(
            "{} is a folder, not a file: give one `.env.scl` file (`sclc check` takes folders)",
            file.display()
        )));
    }
    if !file.is_file() {
        return Err(usage_error(&format!("no such file: {}", file.display())));
    }
    let root = find_workspace_root(file);
    let mut db = Database::new(&root, stdlib);
    let f = db.open(file);
    let (cmdline, map, mut diags) = overrides(&db, f, set);
    if !map.is_empty() {
        db.set_overrides(map);
    }
    diags.extend(db.check(f));
    Ok((db, f, cmdline, diags))
}

/// The files `sclc check` checks: each file named (it must be a `*.env.scl`
/// file), and every `*.env.scl` below each folder named (default `.`). A
/// usage error (exit 2) if a path does not exist, a file is not a `.env.scl`
/// file, or there is no file to check at all. `sclc fmt` takes the same.
pub(crate) fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, i32> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut out = Vec::new();
    for p in &paths {
        if p.is_file() {
            if !p.to_string_lossy().ends_with(".env.scl") {
                return Err(usage_error(&format!(
                    "{} is not a `.env.scl` file",
                    p.display()
                )));
            }
            out.push(p.clone());
        } else if p.is_dir() {
            walk(p, &mut out);
        } else {
            return Err(usage_error(&format!(
                "no such file or folder: {}",
                p.display()
            )));
        }
    }
    if out.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(usage_error(&format!(
            "no `.env.scl` file in {}",
            shown.join(", ")
        )));
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    walk_files(dir, &|name| name.ends_with(".env.scl"), out)
}

/// The files below `dir` whose name `keep` accepts, sorted, not following
/// links and skipping hidden folders, `target` and `node_modules`.
fn walk_files(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Links are not followed: they could lead out of the tree.
        if p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            continue;
        }
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                walk_files(&p, keep, out);
            }
        } else if keep(name) {
            out.push(p);
        }
    }
}

fn check(paths: &[PathBuf], set: &[String], fmt: MessageFormat, stdlib: Option<PathBuf>) -> i32 {
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
            groups.entry(find_workspace_root(&f)).or_default().push(f);
        }
        for (root, files) in groups {
            let db = Database::new(&root, stdlib.clone());
            let mut diags: Vec<Diagnostic> = Vec::new();
            for f in files {
                let file = db.open(&f);
                for d in db.check(file) {
                    if !diags.contains(&d) {
                        diags.push(d);
                    }
                }
            }
            errors |= diags.iter().any(Diagnostic::is_error);
            print_diagnostics(&db, &diags, fmt, "");
            std::mem::forget(db);
        }
        return i32::from(errors);
    }
    // With `--set`, every file is a root of its own (the values apply to
    // it); a diagnostic reached from several of them is still printed once.
    let mut printed: std::collections::HashSet<Diagnostic> = std::collections::HashSet::new();
    for f in files {
        match load(&f, set, stdlib.clone()) {
            Ok((db, _, cmdline, diags)) => {
                let diags: Vec<Diagnostic> = diags
                    .into_iter()
                    .filter(|d| printed.insert(d.clone()))
                    .collect();
                errors |= diags.iter().any(Diagnostic::is_error);
                print_diagnostics(&db, &diags, fmt, &cmdline);
            }
            Err(code) => return code,
        }
    }
    i32::from(errors)
}

/// The envs to emit: the one named, or all non-template envs.
fn select_envs(
    db: &Database,
    file: SourceFile,
    values: &ModuleValues,
    env: Option<&str>,
) -> Result<Vec<String>, Box<Diagnostic>> {
    match env {
        None => Ok(values.envs.clone()),
        Some(name) => {
            if values.envs.iter().any(|e| e == name) {
                return Ok(vec![name.to_string()]);
            }
            if values.failed.iter().any(|e| e == name) {
                // It exists but has errors, which are reported already.
                return Ok(Vec::new());
            }
            let parse = scl_db::parse(db, file);
            let template = parse.module.decls.iter().any(|d| matches!(d, scl_syntax::ast::Decl::Env(e) if e.name.name == name && e.params.is_some()));
            let mut d = if template {
                Diagnostic::error(
                    "E0314",
                    Default::default(),
                    format!(
                        "`{name}` is a template; instantiate it from an env (`extends {name}(…)`)"
                    ),
                )
            } else {
                Diagnostic::error(
                    "E0315",
                    Default::default(),
                    format!("the file has no env `{name}`"),
                )
            };
            d.at.file = db.display_path(file);
            d = match scl_diag::did_you_mean(name, values.envs.iter().map(|s| s.as_str())) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help(format!("envs: {}", values.envs.join(", "))),
            };
            Err(Box::new(d))
        }
    }
}

fn provenance_json(db: &Database, f: &scl_sema::FinalEnv) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let mut texts: HashMap<scl_sema::ModuleId, (Arc<str>, String)> = HashMap::new();
    for (path, o) in f.origins.iter() {
        let (file, text) = texts.entry(o.module).or_insert_with(|| {
            let sf = db.module_file_of(o.module);
            (db.display_path(sf), db.text(sf))
        });
        let (line, column) = scl_diag::LineIndex::new(text).line_col(text, o.span.start as usize);
        let entry = scl_ir::ProvenanceEntry {
            env: o.layer.to_string(),
            file: file.to_string(),
            line: line as u32,
            column: column as u32,
            replaced: o.replaced.as_deref().map(String::from),
        };
        out.insert(
            path.replace(scl_sema::value::TYPE_KEY, ""),
            serde_json::to_value(entry).unwrap(),
        );
    }
    serde_json::Value::Object(out)
}

/// A checked file and the envs a command works on.
struct Loaded {
    db: Database,
    file: SourceFile,
    cmdline: String,
    diags: Vec<Diagnostic>,
    values: Arc<ModuleValues>,
    envs: Vec<String>,
}

/// [`load`] plus the module's values and the envs selected by `--env`
/// (an unknown env is one more diagnostic).
fn load_envs(
    file: &Path,
    env: Option<&str>,
    set: &[String],
    stdlib: Option<PathBuf>,
) -> Result<Loaded, i32> {
    let (db, f, cmdline, mut diags) = load(file, set, stdlib)?;
    let values = scl_db::module_values(&db, f).clone();
    let envs = select_envs(&db, f, &values, env).unwrap_or_else(|d| {
        diags.push(*d);
        Vec::new()
    });
    Ok(Loaded {
        db,
        file: f,
        cmdline,
        diags,
        values,
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
        db,
        cmdline,
        diags,
        values,
        envs,
        ..
    } = match load_envs(file, env, set, stdlib) {
        Ok(x) => x,
        Err(code) => return code,
    };
    print_diagnostics(&db, &diags, fmt, &cmdline);
    if diags.iter().any(Diagnostic::is_error) {
        return 1;
    }
    let mut specs: BTreeMap<&str, scl_ir::EnvSpec> = BTreeMap::new();
    for name in &envs {
        let Some(spec) = values.final_env(name).and_then(|f| f.spec.as_deref()) else {
            return 1;
        };
        specs.insert(name, spec.versioned());
    }
    let text = if provenance {
        // With provenance: through a JSON value (sorted keys) to add the table.
        let mut all = serde_json::Map::new();
        for name in &envs {
            let fin = values.final_env(name).expect("checked above");
            let mut v = serde_json::to_value(&specs[name.as_str()]).expect("IR serializes");
            v.as_object_mut()
                .unwrap()
                .insert("provenance".into(), provenance_json(&db, fin));
            all.insert(name.clone(), v);
        }
        let out = if env.is_some() {
            all.into_iter().next().map(|(_, v)| v).unwrap_or_default()
        } else {
            serde_json::Value::Object(all)
        };
        scl_ir::canonical_json(&out)
    } else {
        // The IR structs serialize with sorted keys directly (see scl-ir).
        let mut s = match env {
            Some(_) => serde_json::to_string_pretty(specs.values().next().expect("one env")),
            None => serde_json::to_string_pretty(&specs),
        }
        .expect("IR serializes");
        s.push('\n');
        s
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
    // The process ends here: freeing the database would only cost time.
    std::mem::forget(values);
    std::mem::forget(db);
    0
}

fn build(
    file: &Path,
    env: Option<&str>,
    target: Target,
    out: &Path,
    set: &[String],
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    if target != Target::Docker {
        return usage_error(&format!(
            "the target `{}` is not implemented yet; available: docker",
            format!("{target:?}").to_lowercase()
        ));
    }
    let Loaded {
        db,
        file: f,
        cmdline,
        mut diags,
        values,
        envs,
    } = match load_envs(file, env, set, stdlib) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if diags.iter().any(Diagnostic::is_error) {
        print_diagnostics(&db, &diags, fmt, &cmdline);
        return 1;
    }
    // Each env is the folder `--out/<env>`: two envs whose names differ
    // only in case would be one folder on a case-insensitive file system.
    let parsed = scl_db::parse(&db, f);
    for (i, j) in scl_backends::case_clashes(&envs) {
        let span = parsed
            .module
            .decls
            .iter()
            .find_map(|d| match d {
                scl_syntax::ast::Decl::Env(e) if e.name.name == envs[i] => Some(e.name.span),
                _ => None,
            })
            .unwrap_or_default();
        let mut d = Diagnostic::error(
            "E0406",
            span,
            format!(
                "the envs `{}` and `{}` differ only in case, so on a case-insensitive file system (macOS, Windows) their output folders would be one",
                envs[j], envs[i]
            ),
        )
        .with_help("rename one of the envs");
        d.at.file = db.display_path(f);
        diags.push(d);
    }
    let mut lowered = Vec::new();
    for name in &envs {
        let Some(fin) = values.final_env(name) else {
            return 1;
        };
        let Some(spec) = &fin.spec else { return 1 };
        let l = scl_backends::docker::lower(spec, name);
        // Point each warning and error at the source of its field.
        let located = |code: &'static str, field: &str, message: String, error: bool| {
            let origin = field_origin(&fin.origins, field);
            let span = origin.as_ref().map(|o| o.span).unwrap_or_default();
            let mut d = if error {
                Diagnostic::error(code, span, message)
            } else {
                Diagnostic::warning(code, span, message)
            };
            d.at.file = match &origin {
                Some(o) => db.module_display(o.module),
                None => db.display_path(f),
            };
            d
        };
        for w in &l.warnings {
            let message = format!("docker: `{}`: {}", w.field, w.message);
            diags.push(located("W0004", &w.field, message, false));
        }
        for e in &l.errors {
            let code = match e.kind {
                scl_backends::ErrorKind::Unwritable => "E0401",
                scl_backends::ErrorKind::Misread => "E0402",
                scl_backends::ErrorKind::SystemFolder => "E0403",
                scl_backends::ErrorKind::Reserved => "E0404",
                scl_backends::ErrorKind::PackagePattern => "E0405",
                scl_backends::ErrorKind::NameClash => "E0406",
                scl_backends::ErrorKind::IgnorePattern => "E0407",
            };
            let message = format!("docker: `{}`: {}", e.field, e.message);
            let mut d = located(code, &e.field, message, true);
            if let Some(h) = &e.help {
                d = d.with_help(h.clone());
            }
            diags.push(d);
        }
        lowered.push((name.clone(), l));
    }
    print_diagnostics(&db, &diags, fmt, &cmdline);
    if diags.iter().any(Diagnostic::is_error) {
        // A value the target cannot write safely: nothing is written.
        return 1;
    }
    match write_atomically(out, &lowered) {
        Ok(written) => {
            let mut stdout = std::io::stdout().lock();
            for p in written {
                let _ = writeln!(stdout, "wrote {}", p.display());
            }
            0
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", out.display());
            2
        }
    }
}

/// The origin of an IR field for a backend warning: the field itself, else
/// the nearest enclosing path that has one (`assets[1]` → `assets`), else the
/// first write below it (`resources` → `resources.requests.cpu`).
fn field_origin(
    origins: &BTreeMap<String, scl_sema::Origin>,
    field: &str,
) -> Option<scl_sema::Origin> {
    let mut key = field.to_string();
    loop {
        if let Some(o) = origins.get(&key) {
            return Some(o.clone());
        }
        match key.rfind(['.', '[']) {
            Some(i) => key.truncate(i),
            None => break,
        }
    }
    let below = format!("{field}.");
    origins
        .iter()
        .filter(|(k, _)| k.starts_with(&below))
        .map(|(_, o)| o)
        .min_by_key(|o| o.span.start)
        .cloned()
}
