//! The query database of SCL (salsa 0.28). The CLI, the language server, the
//! tests and the benchmark all ask it the same questions; an edit recomputes
//! only what depends on it.
//!
//! Inputs: [`SourceFile`] (a path and its bytes, read lazily from disk or
//! from the embedded stdlib) and [`Workspace`] (the root folder and the
//! `--set` values). Queries: [`parse`], [`imports`], [`static_diagnostics`],
//! [`module_values`] (evaluation, through `scl_sema::Host`) and
//! [`module_diagnostics`]. [`Database::check`] gathers the diagnostics of a
//! file and of every module it reaches, including import cycles.
//!
//! Boundary rule: tracked queries do no I/O except through
//! [`Database::input`], which reads a file once and caches it as an input.

mod host;
mod paths;
mod stack;
mod types;

pub use paths::{find_workspace_root, normalize_path};
pub use stack::{with_compiler_stack, COMPILER_STACK_SIZE};
pub use types::{known_modules, module_types, typed_module};

use salsa::Setter;
use scl_diag::Diagnostic;
use scl_sema::{ModuleId, ModuleValues, Override};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

include!(concat!(env!("OUT_DIR"), "/stdlib.rs"));

/// The display prefix of embedded stdlib modules.
pub const STD_PREFIX: &str = "std/";

/// The largest file the compiler reads, in bytes (16 MiB): a source module,
/// a `file()` (a requirements file, a script). Larger files are refused with
/// E0009 instead of being read whole; at most this many bytes plus one are
/// ever read from disk, so a huge or endless file (`/dev/zero`) costs no
/// more than the limit.
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// A source file: an absolute path (or `std/NAME.env.scl` for an embedded
/// stdlib module) and its bytes (`None` when it does not exist).
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub contents: Option<Arc<[u8]>>,
}

/// The workspace: its root folder (absolute) and the `--set` values, by
/// module path.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub root: PathBuf,
    #[returns(ref)]
    pub overrides: Arc<BTreeMap<PathBuf, Vec<Override>>>,
}

/// The database's own trait: lazy file inputs and module ids.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The input for `path` (absolute, normalized), read from disk on first use.
    fn input(&self, path: &Path) -> SourceFile;
    /// The workspace input.
    fn workspace(&self) -> Workspace;
    /// The stable id of a file, for the evaluator.
    fn module_id(&self, file: SourceFile) -> ModuleId;
    /// The file of an id.
    fn module_file(&self, id: ModuleId) -> SourceFile;
    /// The stdlib folder given with `--stdlib`, if any.
    fn stdlib_dir(&self) -> Option<PathBuf>;
    /// The canonical form of a folder (symlinks resolved), cached; `None`
    /// when it does not exist.
    fn canonical_dir(&self, dir: &Path) -> Option<PathBuf>;
}

#[derive(Default)]
struct Registry {
    by_path: HashMap<PathBuf, SourceFile>,
    ids: Vec<SourceFile>,
    id_of: HashMap<SourceFile, ModuleId>,
}

/// The concrete database.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    registry: Arc<Mutex<Registry>>,
    canonical: Arc<Mutex<HashMap<PathBuf, Option<PathBuf>>>>,
    workspace: Option<Workspace>,
    stdlib_dir: Option<PathBuf>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn input(&self, path: &Path) -> SourceFile {
        let mut reg = self.registry.lock().unwrap();
        if let Some(f) = reg.by_path.get(path) {
            return *f;
        }
        let contents = read_source(path);
        // Files read from disk (and the stdlib) change rarely: HIGH
        // durability lets salsa skip re-verifying what depends only on them
        // after an edit; `set_text` marks an edited file LOW.
        let f = SourceFile::builder(path.to_path_buf(), contents)
            .durability(salsa::Durability::HIGH)
            .new(self);
        reg.by_path.insert(path.to_path_buf(), f);
        let id = ModuleId(reg.ids.len() as u32);
        reg.ids.push(f);
        reg.id_of.insert(f, id);
        f
    }
    fn workspace(&self) -> Workspace {
        self.workspace
            .expect("the workspace input is created in Database::new")
    }
    fn module_id(&self, file: SourceFile) -> ModuleId {
        let mut reg = self.registry.lock().unwrap();
        if let Some(id) = reg.id_of.get(&file) {
            return *id;
        }
        let id = ModuleId(reg.ids.len() as u32);
        reg.ids.push(file);
        reg.id_of.insert(file, id);
        id
    }
    fn module_file(&self, id: ModuleId) -> SourceFile {
        self.registry.lock().unwrap().ids[id.0 as usize]
    }
    fn stdlib_dir(&self) -> Option<PathBuf> {
        self.stdlib_dir.clone()
    }
    fn canonical_dir(&self, dir: &Path) -> Option<PathBuf> {
        let mut cache = self.canonical.lock().unwrap();
        cache
            .entry(dir.to_path_buf())
            .or_insert_with(|| dir.canonicalize().ok())
            .clone()
    }
}

fn read_source(path: &Path) -> Option<Arc<[u8]>> {
    let s = path.to_str().unwrap_or("");
    if let Some(name) = s.strip_prefix(STD_PREFIX) {
        let name = name.strip_suffix(".env.scl").unwrap_or(name);
        return STDLIB
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, src)| Arc::from(src.as_bytes()));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => read_capped(path).ok().map(Arc::from),
        _ => None,
    }
}

/// Reads at most [`MAX_FILE_BYTES`] + 1 bytes of `path`: one byte more than
/// the limit tells a file that is too large from one that fits exactly.
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// Whether file contents exceed [`MAX_FILE_BYTES`].
pub(crate) fn too_large(bytes: &[u8]) -> bool {
    bytes.len() > MAX_FILE_BYTES
}

impl Database {
    /// A database for the workspace rooted at `root` (made absolute), with
    /// the stdlib embedded or read from `stdlib_dir`.
    pub fn new(root: &Path, stdlib_dir: Option<PathBuf>) -> Database {
        let root = absolute(root);
        let storage = salsa::Storage::default();
        let mut db = Database {
            storage,
            registry: Arc::default(),
            canonical: Arc::default(),
            workspace: None,
            stdlib_dir: stdlib_dir.map(|d| absolute(&d)),
        };
        db.workspace = Some(
            Workspace::builder(root, Arc::new(BTreeMap::new()))
                .durability(salsa::Durability::HIGH)
                .new(&db),
        );
        db
    }

    /// Sets the `--set` values (by absolute module path).
    pub fn set_overrides(&mut self, overrides: BTreeMap<PathBuf, Vec<Override>>) {
        let ws = self.workspace();
        ws.set_overrides(self)
            .with_durability(salsa::Durability::HIGH)
            .to(Arc::new(overrides));
    }

    /// The workspace root.
    pub fn root(&self) -> PathBuf {
        self.workspace().root(self).clone()
    }

    /// The input for a file given on the command line (made absolute).
    pub fn open(&self, path: &Path) -> SourceFile {
        self.input(&absolute(path))
    }

    /// Replaces a file's text (an editor buffer, or a benchmark edit).
    pub fn set_text(&mut self, file: SourceFile, text: &str) {
        file.set_contents(self)
            .with_durability(salsa::Durability::LOW)
            .to(Some(Arc::from(text.as_bytes())));
    }

    /// The display path of a file: workspace-relative, or `std/NAME.env.scl`.
    pub fn display_path(&self, file: SourceFile) -> Arc<str> {
        display_path(self, file)
    }

    /// The display path of a module id.
    pub fn module_display(&self, id: ModuleId) -> Arc<str> {
        display_path(self, self.module_file(id))
    }

    /// The text of a file (lossy UTF-8; empty when missing).
    pub fn text(&self, file: SourceFile) -> String {
        file.contents(self)
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    /// Every file read so far, by display path → text (for rendering diagnostics).
    pub fn sources(&self) -> HashMap<String, String> {
        let files: Vec<SourceFile> = self.registry.lock().unwrap().ids.clone();
        files
            .into_iter()
            .map(|f| (display_path(self, f).to_string(), self.text(f)))
            .collect()
    }

    /// The file of a module id.
    pub fn module_file_of(&self, id: ModuleId) -> SourceFile {
        self.module_file(id)
    }

    /// All diagnostics for `file` and every module it imports (transitively),
    /// sorted by file (the root file first) and position, plus import cycles.
    pub fn check(&self, file: SourceFile) -> Vec<Diagnostic> {
        let walk = self.walk(file);
        // Evaluate each module after the modules it imports, so that no
        // module's evaluation waits on another's (an import chain of any
        // length costs no stack).
        for f in &walk.post_order {
            let _ = module_values(self, *f);
        }
        let mut out: Vec<Diagnostic> = Vec::new();
        for f in &walk.order {
            out.extend(module_diagnostics(self, *f).iter().cloned());
        }
        out.extend(walk.cycles);
        let mut out = types::merge_static_duplicates(self, &walk.order, out);
        let root = display_path(self, file);
        let mut seen = HashSet::new();
        out.retain(|d| seen.insert((d.code, d.at.clone(), d.message.clone())));
        out.sort_by(|a, b| {
            ((*a.at.file != *root), &a.at.file, a.at.span.start, a.code).cmp(&(
                (*b.at.file != *root),
                &b.at.file,
                b.at.span.start,
                b.code,
            ))
        });
        cap_per_file(out)
    }

    /// The modules `file` reaches through imports, without recursion: in
    /// the order they are first reached (`order`, `file` first), and each
    /// after all it imports (`post_order`), with an `E0103` for every import
    /// that closes a cycle.
    fn walk(&self, file: SourceFile) -> Walk {
        let mut walk = Walk::default();
        let mut seen: HashSet<SourceFile> = HashSet::new();
        // The path from `file` to the module being walked: each module, its
        // imports, and the next import to follow.
        let mut path: Vec<(SourceFile, Arc<Imports>, usize)> = Vec::new();
        let mut on_path: HashMap<SourceFile, usize> = HashMap::new();
        let mut enter = |f: SourceFile,
                         path: &mut Vec<(SourceFile, Arc<Imports>, usize)>,
                         on_path: &mut HashMap<SourceFile, usize>,
                         walk: &mut Walk| {
            if !seen.insert(f) {
                return;
            }
            walk.order.push(f);
            let imps = imports(self, f).clone();
            let todo: Vec<SourceFile> = imps
                .targets
                .iter()
                .flatten()
                .filter(|t| !seen.contains(*t))
                .copied()
                .collect();
            if todo.len() >= PREFETCH_MIN {
                self.prefetch(&todo);
            }
            on_path.insert(f, path.len());
            path.push((f, imps, 0));
        };
        enter(file, &mut path, &mut on_path, &mut walk);
        while let Some((f, imps, next)) = path.last_mut() {
            let (f, decl) = (*f, *next);
            let Some(target) = imps.targets.get(decl) else {
                walk.post_order.push(f);
                on_path.remove(&f);
                path.pop();
                continue;
            };
            *next += 1;
            let (Some(t), span) = (*target, imps.spans[decl]) else {
                continue;
            };
            if let Some(&pos) = on_path.get(&t) {
                let mut chain: Vec<String> = path[pos..]
                    .iter()
                    .map(|(m, _, _)| display_path(self, *m).to_string())
                    .collect();
                chain.push(display_path(self, t).to_string());
                walk.cycles.push(
                    Diagnostic::error(
                        "E0103",
                        span,
                        format!("import cycle: {}", chain.join(" → ")),
                    )
                    .in_file(&display_path(self, f))
                    .with_help("move what both modules need into a third module that both import"),
                );
                continue;
            }
            enter(t, &mut path, &mut on_path, &mut walk);
        }
        walk
    }
}

/// The most diagnostics [`Database::check`] reports for one file: the
/// first ones (by position) are kept, and one more says how many were left
/// out. Every front end shows the same list.
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 100;

/// Keeps the first [`MAX_DIAGNOSTICS_PER_FILE`] diagnostics of each file of
/// `diags` (sorted by file) and adds, where some were left out, `E0008` (if
/// an error was among them) or `W0005` at the first one left out. An
/// `E0011` (the lexer stopped reading the file) left out is kept after it.
fn cap_per_file(diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = Vec::with_capacity(diags.len().min(4 * MAX_DIAGNOSTICS_PER_FILE));
    let mut i = 0;
    while i < diags.len() {
        let file = diags[i].at.file.clone();
        let end = diags[i..]
            .iter()
            .position(|d| d.at.file != file)
            .map_or(diags.len(), |n| i + n);
        let group = &diags[i..end];
        out.extend(group.iter().take(MAX_DIAGNOSTICS_PER_FILE).cloned());
        // Where the lexer stopped reading the file (E0011) is always shown.
        let stops = || {
            group
                .iter()
                .skip(MAX_DIAGNOSTICS_PER_FILE)
                .filter(|d| d.code == "E0011")
        };
        if let Some(rest) = group
            .get(MAX_DIAGNOSTICS_PER_FILE..)
            .filter(|r| r.iter().any(|d| d.code != "E0011"))
        {
            let errors = rest
                .iter()
                .filter(|d| d.is_error() && d.code != "E0011")
                .count();
            let n = rest.len() - stops().count();
            let what = match errors {
                0 if n == 1 => "warning".to_string(),
                0 => "warnings".to_string(),
                e if e == n && n == 1 => "error".to_string(),
                e if e == n => "errors".to_string(),
                e => format!("diagnostics ({e} of them errors)"),
            };
            let message = format!(
                "and {n} more {what} in this file, not shown (at most {MAX_DIAGNOSTICS_PER_FILE} per file)"
            );
            let help = "fix the ones above first: later ones are often caused by them";
            let d = if errors > 0 {
                Diagnostic::error("E0008", rest[0].at.span, message)
            } else {
                Diagnostic::warning("W0005", rest[0].at.span, message)
            };
            out.push(d.with_help(help).in_file(&file));
        }
        out.extend(stops().cloned());
        i = end;
    }
    out
}

/// What [`Database::walk`] found.
#[derive(Default)]
struct Walk {
    order: Vec<SourceFile>,
    post_order: Vec<SourceFile>,
    cycles: Vec<Diagnostic>,
}

/// How many imports a module needs before they are parsed in parallel.
const PREFETCH_MIN: usize = 16;

impl Database {
    /// Parses and resolves the imports of `files` on every core, each thread
    /// with its own handle on the same database; the results are memoized,
    /// so the walk that follows finds them ready.
    fn prefetch(&self, files: &[SourceFile]) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        if threads < 2 {
            return;
        }
        let chunk = files.len().div_ceil(threads);
        std::thread::scope(|s| {
            for part in files.chunks(chunk) {
                let db = self.clone();
                s.spawn(move || {
                    for f in part {
                        let _ = imports(&db, *f);
                    }
                });
            }
        });
    }
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    normalize_path(&p)
}

fn display_path(db: &dyn Db, file: SourceFile) -> Arc<str> {
    let p = file.path(db);
    let root = db.workspace().root(db);
    if let Some(s) = p.to_str().filter(|s| s.starts_with(STD_PREFIX)) {
        return Arc::from(s);
    }
    match p.strip_prefix(root) {
        Ok(rel) => Arc::from(rel.to_string_lossy().replace('\\', "/")),
        Err(_) => Arc::from(p.to_string_lossy().as_ref()),
    }
}

/// Parses a file (never fails; a missing file parses as empty).
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: SourceFile) -> Arc<scl_syntax::Parse> {
    let bytes = file
        .contents(db)
        .clone()
        .unwrap_or_else(|| Arc::from(&b""[..]));
    if too_large(&bytes) {
        let path = display_path(db, file);
        let mut p = scl_syntax::parse("");
        p.errors.push(
            Diagnostic::error(
                "E0009",
                scl_diag::Span::new(0, 0),
                format!(
                    "the file is larger than {} MiB, the most the compiler reads",
                    MAX_FILE_BYTES >> 20
                ),
            )
            .with_help("split it into modules, or keep generated data out of `.env.scl` files")
            .in_file(&path),
        );
        return Arc::new(p);
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    // A UTF-8 byte order mark is not part of the program; blank it (same length, same spans).
    if text.starts_with('\u{feff}') {
        text.replace_range(0..3, "   ");
    }
    let path = display_path(db, file);
    let mut p = scl_syntax::parse(&text);
    p.errors = p.errors.into_iter().map(|d| d.in_file(&path)).collect();
    if let Err(e) = std::str::from_utf8(&bytes) {
        let at = e.valid_up_to();
        p.errors.insert(
            0,
            Diagnostic::error(
                "E0001",
                // In the text the compiler reads, the bad bytes are one
                // U+FFFD (3 bytes) at the same offset.
                scl_diag::Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8()),
                format!("the file is not valid UTF-8 (byte {at})"),
            )
            .with_help("save the file as UTF-8")
            .in_file(&path),
        );
    }
    Arc::new(p)
}

/// The resolved imports of a module: for every declaration index, the
/// imported file (`None` for non-imports and failed imports), the span of
/// each import's path, and the resolution errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imports {
    pub targets: Vec<Option<SourceFile>>,
    pub spans: Vec<scl_diag::Span>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Whether a file exists (has contents). A query of its own, so that a module
/// importing `file` does not depend on its text, only on its existence.
#[salsa::tracked]
pub fn file_exists(db: &dyn Db, file: SourceFile) -> bool {
    file.contents(db).is_some()
}

/// Resolves every `import` of `file`: `std/NAME` from the stdlib, other paths
/// relative to the file's folder and inside the workspace root.
#[salsa::tracked(returns(ref))]
pub fn imports(db: &dyn Db, file: SourceFile) -> Arc<Imports> {
    host::resolve_imports(db, file)
}

/// The static diagnostics of a module (names, duplicates, types, recursion,
/// the type checker: see [`typed_module`]).
#[salsa::tracked(returns(ref))]
pub fn static_diagnostics(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    Arc::new(typed_module(db, file).diagnostics.clone())
}

/// Evaluates a module: its values (envs with their final IR) and evaluation
/// diagnostics. On an import cycle both sides get an empty result (the cycle
/// itself is reported by [`Database::check`]).
#[salsa::tracked(returns(ref), cycle_result = module_values_cycle)]
pub fn module_values(db: &dyn Db, file: SourceFile) -> Arc<ModuleValues> {
    let host = host::DbHost { db };
    Arc::new(scl_sema::evaluate_module(&host, db.module_id(file)))
}

fn module_values_cycle(_db: &dyn Db, _id: salsa::Id, _file: SourceFile) -> Arc<ModuleValues> {
    Arc::new(ModuleValues::default())
}

/// Every diagnostic of one module: syntax, imports, static checks, evaluation.
#[salsa::tracked(returns(ref))]
pub fn module_diagnostics(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    let syntax = &parse(db, file).errors;
    let mut out: Vec<Diagnostic> = syntax.clone();
    out.extend(imports(db, file).diagnostics.iter().cloned());
    // A semantic error on text the parser already reported is a cascade
    // (`4GB` is E0005; "memory needs a unit" on it would be noise): drop it.
    let here = display_path(db, file);
    // An unclosed delimiter (E0006) covers everything from its opener (a
    // label) to where it was closed. A declaration the parser recovered
    // (one with a syntax error of its own: a missing part, text after it)
    // is covered whole: what it would mean is unknown, so nothing is
    // said about it beyond the syntax error.
    let parsed = parse(db, file);
    let regions = scl_diag::Ranges::new(
        syntax
            .iter()
            .map(|e| {
                let start = e
                    .labels
                    .iter()
                    .map(|l| l.at.span.start)
                    .chain([e.at.span.start])
                    .min()
                    .unwrap_or(0);
                (start, e.at.span.end.max(e.at.span.start + 1))
            })
            .chain(
                parsed
                    .module
                    .recovered
                    .iter()
                    .map(|s| (s.start, s.end.max(s.start + 1))),
            )
            .collect(),
    );
    let cascade = |d: &Diagnostic| {
        *d.at.file == *here
            && regions.overlaps(d.at.span.start, d.at.span.end.max(d.at.span.start + 1))
    };
    let statics = static_diagnostics(db, file);
    out.extend(statics.iter().filter(|d| !cascade(d)).cloned());
    // Evaluation meets some problems the static pass already reported (a
    // recursive call runs into the call-stack guard): one problem, one
    // diagnostic.
    let known: HashSet<(&str, &str, u32)> = statics
        .iter()
        .map(|s| (s.code, &*s.at.file, s.at.span.start))
        .collect();
    let reported = |d: &Diagnostic| known.contains(&(d.code, &*d.at.file, d.at.span.start));
    out.extend(
        module_values(db, file)
            .diagnostics
            .iter()
            .filter(|d| !cascade(d) && !reported(d))
            .cloned(),
    );
    Arc::new(out)
}
