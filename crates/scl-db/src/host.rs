//! The evaluator's view of the database (`scl_sema::Host`), and import resolution.

use crate::{
    cyclic_values, decl_value, display_path, file_exists, import_targets, items, module_decls,
    normalize_path, Db, DeclId, Imports, PathInfo, PathKind, SourceFile, Workspace, STDLIB,
    STD_PREFIX,
};
use rustc_hash::FxHashMap as HashMap;
use scl_diag::{did_you_mean, Diagnostic};
use scl_sema::{AnchoredDecl, FileError, FileInfo, Items, ModuleId, Override, Value};
use scl_syntax::ast::Decl;
use std::borrow::Cow;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) struct DbHost<'a> {
    pub db: &'a dyn Db,
    /// What this evaluation looked up already (each lookup takes the
    /// registry's lock; the salsa dependency is recorded by the first).
    files: RefCell<HashMap<ModuleId, SourceFile>>,
    outlines: RefCell<HashMap<ModuleId, Arc<Items>>>,
    /// The target of each import asked for, by module and declaration:
    /// one entry per import read (a host lives for one query, and a module
    /// may declare 10,000 names, so nothing per declaration is built).
    targets: RefCell<HashMap<(ModuleId, usize), Option<ModuleId>>>,
}

/// Where a declaration's value comes from: its module's imports, its own
/// [`decl_value`] query, or the module's [`cyclic_values`].
enum ComputedBy<'db> {
    Import,
    Decl(DeclId<'db>),
    Cyclic(SourceFile),
}

impl<'a> DbHost<'a> {
    pub(crate) fn new(db: &'a dyn Db) -> DbHost<'a> {
        DbHost {
            db,
            files: RefCell::default(),
            outlines: RefCell::default(),
            targets: RefCell::default(),
        }
    }

    /// Which query gives the value of declaration `decl` of `m`.
    fn computed_by(&self, m: ModuleId, decl: usize) -> ComputedBy<'a> {
        let items = self.outline(m);
        if items.items.get(decl).map(|x| x.kind) == Some(scl_sema::DeclKind::Import) {
            ComputedBy::Import
        } else if items.clean(decl) {
            ComputedBy::Decl(DeclId::new(self.db, self.file(m), decl as u32))
        } else {
            ComputedBy::Cyclic(self.file(m))
        }
    }

    /// The module import `decl` of `m` names, if it resolved.
    fn target(&self, m: ModuleId, decl: usize) -> Option<ModuleId> {
        if let Some(t) = self.targets.borrow().get(&(m, decl)) {
            return *t;
        }
        // An import of a module on an import cycle with `m` is unresolved
        // here (see `import_cycle`): no member's value waits on another's.
        let file = self.file(m);
        let t = import_targets(self.db, file)
            .get(decl)
            .copied()
            .flatten()
            .filter(|f| !crate::import_cycle(self.db, file).contains(f))
            .map(|f| self.db.module_id(f));
        self.targets.borrow_mut().insert((m, decl), t);
        t
    }

    fn file(&self, m: ModuleId) -> SourceFile {
        *self
            .files
            .borrow_mut()
            .entry(m)
            .or_insert_with(|| self.db.module_file(m))
    }

    fn outline(&self, m: ModuleId) -> Arc<Items> {
        if let Some(i) = self.outlines.borrow().get(&m) {
            return i.clone();
        }
        let i = items(self.db, self.file(m));
        self.outlines.borrow_mut().insert(m, i.clone());
        i
    }
}

pub(crate) fn is_std(p: &Path) -> bool {
    p.to_str().is_some_and(|s| s.starts_with(STD_PREFIX))
}

/// How many services one [`ServiceGroup`] holds.
const SERVICE_GROUP: usize = 32;

/// `envs` (module, env name) cut into consecutive runs of
/// [`SERVICE_GROUP`], each interned as a [`ServiceGroup`]: the keys with
/// which an env's services are read, their values
/// ([`service_group_envs`]) and their domain findings
/// (`checks::service_group_findings`).
pub(crate) fn service_groups<'db>(
    db: &'db dyn Db,
    envs: impl IntoIterator<Item = (SourceFile, Arc<str>)>,
) -> Vec<ServiceGroup<'db>> {
    let mut groups = Vec::new();
    let mut run = Vec::with_capacity(SERVICE_GROUP);
    for env in envs {
        run.push(env);
        if run.len() == SERVICE_GROUP {
            let full = std::mem::replace(&mut run, Vec::with_capacity(SERVICE_GROUP));
            groups.push(ServiceGroup::new(db, full));
        }
    }
    if !run.is_empty() {
        groups.push(ServiceGroup::new(db, run));
    }
    groups
}

/// Consecutive services (module, env name) of an env that holds them by
/// reference: the key of [`service_group_envs`] (their values) and of
/// `checks::service_group_findings` (their domain findings).
#[salsa::interned(debug)]
pub(crate) struct ServiceGroup<'db> {
    #[returns(ref)]
    pub(crate) envs: Vec<(SourceFile, Arc<str>)>,
}

/// The complete IR of each env of `group`, from its module's values
/// ([`crate::module_values`]; `None` for one that failed): an env holding
/// 1,000 services depends on 32 of these instead of 1,000 modules, so
/// after an edit of one service salsa verifies a few dozen results and
/// re-reads one group. (The IR only, not the whole `FinalEnv`: the reader
/// takes one shared pointer per service.)
#[salsa::tracked(returns(ref))]
fn service_group_envs<'db>(
    db: &'db dyn Db,
    group: ServiceGroup<'db>,
) -> Arc<Vec<Option<Arc<scl_ir::EnvSpec>>>> {
    Arc::new(
        group
            .envs(db)
            .iter()
            .map(|(f, name)| {
                crate::module_values(db, *f)
                    .final_env(name)
                    .and_then(|e| e.spec.clone())
            })
            .collect(),
    )
}

/// The folder of a module file, interned: what the relative paths its
/// module writes are resolved against.
#[salsa::interned(debug)]
struct Folder<'db> {
    #[returns(ref)]
    path: PathBuf,
}

/// The folder of `file` (memoized per file: a file's path never changes,
/// and hashing a path walks its components).
#[salsa::tracked]
fn folder_of<'db>(db: &'db dyn Db, file: SourceFile) -> Folder<'db> {
    let from = file.path(db);
    Folder::new(db, from.parent().unwrap_or(Path::new("/")))
}

/// A path written in a module (an import's, a `file()`'s) and the folder of
/// the module: the key of [`resolved_local`].
#[salsa::interned(debug)]
struct LocalPath<'db> {
    #[returns(copy)]
    folder: Folder<'db>,
    #[returns(ref)]
    rel: String,
}

/// [`resolve_local_now`], memoized per folder and path: a path is resolved
/// once for all the modules of a folder that write it (the bench's 20,000
/// modules each import `./base.env.scl`, and each module is imported by
/// the root and by the next module), although an import's outline
/// ([`crate::import_targets`]), its diagnostics ([`resolve_imports`]) and
/// the check's warm-up all ask (resolving costs path normalization, several
/// hashed lookups of path facts and, for a file met first, a system call).
#[salsa::tracked(returns(ref))]
fn resolved_local<'db>(db: &'db dyn Db, key: LocalPath<'db>) -> Result<PathBuf, FileError> {
    resolve_local_now(db, key.folder(db), key.rel(db))
}

/// The facts input ([`Db::path_info`]) of a folder's own path, memoized per
/// folder: each import resolved against the folder asks for its canonical
/// form, and the registry's lookup hashes the path and takes the lock
/// (for reading) that the threads resolving imports in parallel share,
/// where a memo is one lookup by the interned folder. A path's facts input is made once
/// and only ever set again (a refresh sets its fields), so the memo never
/// goes stale: the caller reads the fields, and salsa tracks those reads.
#[salsa::tracked]
fn folder_facts<'db>(db: &'db dyn Db, folder: Folder<'db>) -> PathInfo {
    db.path_info(folder.path(db))
}

/// [`folder_facts`] of the workspace root (changed with the root).
#[salsa::tracked]
fn root_facts(db: &dyn Db, workspace: Workspace) -> PathInfo {
    db.path_info(workspace.root(db))
}

/// The canonical form of the folder whose facts are `info` (`None` when
/// it is not a folder), borrowed ([`Db::canonical_dir`] copies it).
pub(crate) fn canonical_folder<D: Db + ?Sized>(db: &D, info: PathInfo) -> Option<&Path> {
    match info.kind(db) {
        PathKind::Dir => info.canonical(db).as_deref(),
        _ => None,
    }
}

/// Resolves `rel` against the folder of `file`; checks the workspace root
/// (memoized: [`resolved_local`]). A module of the standard library
/// (`std/NAME.env.scl`, built in) has no folder: nothing resolves from it.
fn resolve_local(db: &dyn Db, file: SourceFile, rel: &str) -> Result<PathBuf, FileError> {
    LocalResolver::of(db, file).resolve(db, rel).into_owned()
}

/// [`resolve_local`] for many paths written in one module: the module's
/// folder is looked up once, not once per path (a module with 20,000
/// imports records 40,000 fewer reads in its [`crate::imports`] query), and
/// each answer is borrowed from the memo, not copied.
#[derive(Clone, Copy)]
pub(crate) struct LocalResolver<'db> {
    /// The folder of the module; `None` for a stdlib module (nothing
    /// resolves from it).
    folder: Option<Folder<'db>>,
}

impl<'db> LocalResolver<'db> {
    pub(crate) fn of(db: &'db dyn Db, file: SourceFile) -> Self {
        LocalResolver {
            folder: (!is_std(file.path(db))).then(|| *folder_of(db, file)),
        }
    }

    /// The resolver of a module in `folder` (a workspace module, before
    /// its input is made: [`crate::Database::open_root`]).
    pub(crate) fn of_folder(db: &'db dyn Db, folder: &Path) -> Self {
        LocalResolver {
            folder: Some(Folder::new(db, folder)),
        }
    }

    /// `rel` resolved against the module's folder (see [`resolve_local`]).
    fn resolve(self, db: &'db dyn Db, rel: &str) -> Cow<'db, Result<PathBuf, FileError>> {
        match self.folder {
            Some(folder) => Cow::Borrowed(resolved_local(db, LocalPath::new(db, folder, rel))),
            None => Cow::Owned(Err(FileError::NotFound(rel.to_string()))),
        }
    }

    /// The path `import "PATH"` in the module names (`None` when it leads
    /// out of the workspace).
    pub(crate) fn import_path(self, db: &'db dyn Db, path: &str) -> Option<PathBuf> {
        if path.starts_with(STD_PREFIX) {
            return std_path(db, path);
        }
        self.resolve(db, path).into_owned().ok()
    }

    /// The module `import "PATH"` in the module resolves to, if it exists
    /// and can be read (what [`resolve_imports`] gives as the target; it
    /// also says why one fails).
    pub(crate) fn import_target(self, db: &'db dyn Db, path: &str) -> Option<SourceFile> {
        let f = if path.starts_with(STD_PREFIX) {
            db.input(&std_path(db, path)?)
        } else {
            let resolved = self.resolve(db, path);
            let f = db.input(resolved.as_ref().as_ref().ok()?);
            if f.unreadable(db).is_some() {
                return None;
            }
            f
        };
        file_exists(db, f).then_some(f)
    }
}

/// Resolves `rel` against the folder of a module; checks the workspace
/// root.
fn resolve_local_now<'db>(
    db: &'db dyn Db,
    folder: Folder<'db>,
    rel: &str,
) -> Result<PathBuf, FileError> {
    let dir = folder.path(db);
    // `./x` is `x`: without the `.` the joined path is often already
    // normal, which `normalize_path` checks first.
    let mut rel = rel;
    while let Some(r) = rel.strip_prefix("./") {
        if r.starts_with('/') {
            break;
        }
        rel = r;
    }
    let p = normalize_path(&dir.join(rel));
    let root = db.workspace().root(db);
    if !is_under(&p, root) {
        return Err(FileError::OutsideWorkspace(p.display().to_string()));
    }
    // A symlink must not lead out of the workspace either. Folders are
    // resolved once (cached); the file itself only when it is a link.
    let real_root = canonical_folder(db, *root_facts(db, db.workspace()));
    let info = db.path_info(&p);
    let real = if *info.is_link(db) {
        info.canonical(db).clone()
    } else {
        // The module's own folder, as a rule (`./x`): its memoized facts.
        let parent = match p.parent() {
            Some(d) if d.as_os_str() == dir.as_os_str() => {
                canonical_folder(db, *folder_facts(db, folder)).map(Cow::Borrowed)
            }
            Some(d) => db.canonical_dir(d).map(Cow::Owned),
            None => None,
        };
        parent.and_then(|dir| p.file_name().map(|n| dir.join(n)))
    };
    if let (Some(real), Some(real_root)) = (real, real_root) {
        if !is_under(&real, real_root) {
            return Err(FileError::OutsideWorkspace(format!(
                "{} (a link to {})",
                p.display(),
                real.display()
            )));
        }
    }
    Ok(p)
}

/// `Path::starts_with` (`p` is `root` or below it, component by
/// component), answered from the bytes when `root`'s are a prefix of `p`'s
/// ending at a separator: the usual case, and the component-by-component
/// walk costs about 1,200 instructions per import. (Unix only: in a
/// Windows verbatim path `/` is not a separator.)
fn is_under(p: &Path, root: &Path) -> bool {
    #[cfg(unix)]
    {
        let (b, r) = (
            p.as_os_str().as_encoded_bytes(),
            root.as_os_str().as_encoded_bytes(),
        );
        let at_separator = b.len() == r.len() || r.ends_with(b"/") || b.get(r.len()) == Some(&b'/');
        if b.starts_with(r) && !r.is_empty() && at_separator {
            return true;
        }
    }
    p.starts_with(root)
}

/// `p` relative to the workspace root, as written on disk: a `\\` in a
/// name stays a `\\` (on Unix it is part of the name, and rewriting it to `/`
/// would name another file than the one hashed).
fn ws_relative(db: &dyn Db, p: &Path) -> String {
    let root = db.workspace().root(db);
    let rel = p
        .strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned();
    if rel.is_empty() {
        ".".into()
    } else {
        rel
    }
}

impl scl_sema::Host for DbHost<'_> {
    fn items(&self, m: ModuleId) -> Arc<Items> {
        self.outline(m)
    }
    fn decl(&self, m: ModuleId, decl: usize) -> Arc<AnchoredDecl> {
        let file = self.file(m);
        crate::decl_syntax(self.db, file, decl)
    }
    fn span_text(&self, m: ModuleId, span: scl_diag::Span) -> Option<Arc<str>> {
        if span.anchor == 0 {
            let text = crate::source_text(self.db, self.file(m));
            return text.get(span.range()).map(Arc::from);
        }
        let (file, _) = crate::anchor_decl(self.db, span.anchor)?;
        let text = crate::source_text(self.db, file);
        text.get(crate::absolute_span(self.db, span).range())
            .map(Arc::from)
    }
    fn display_path(&self, m: ModuleId) -> Arc<str> {
        display_path(self.db, self.file(m))
    }
    fn import(&self, m: ModuleId, decl: usize) -> Option<ModuleId> {
        self.target(m, decl)
    }
    fn decl_spent(&self, m: ModuleId, decl: usize) -> scl_sema::Spent {
        match self.computed_by(m, decl) {
            ComputedBy::Import => scl_sema::Spent::default(),
            ComputedBy::Decl(id) => decl_value(self.db, id).spent,
            ComputedBy::Cyclic(file) => cyclic_values(self.db, file).spent,
        }
    }
    fn completed_env(&self, m: ModuleId, name: &str) -> Option<Arc<scl_sema::FinalEnv>> {
        crate::module_values(self.db, self.file(m))
            .final_env(name)
            .cloned()
    }
    fn completed_specs(&self, envs: &[(ModuleId, Arc<str>)]) -> Vec<Option<Arc<scl_ir::EnvSpec>>> {
        let ids: Vec<ModuleId> = envs.iter().map(|(m, _)| *m).collect();
        let files = self.db.module_files(&ids);
        let groups = service_groups(
            self.db,
            files
                .into_iter()
                .zip(envs)
                .map(|(f, (_, n))| (f, n.clone())),
        );
        let mut out = Vec::with_capacity(envs.len());
        for group in groups {
            out.extend(service_group_envs(self.db, group).iter().cloned());
        }
        out
    }
    fn own_decl_value(&self, m: ModuleId, decl: usize, clean: bool) -> Option<Value> {
        if !clean {
            return self.decl_value(m, decl);
        }
        decl_value(self.db, DeclId::new(self.db, self.file(m), decl as u32))
            .value
            .clone()
    }
    fn decl_value(&self, m: ModuleId, decl: usize) -> Option<Value> {
        match self.computed_by(m, decl) {
            // An import's value is the module it names: no query of its own.
            ComputedBy::Import => self.target(m, decl).map(Value::Module),
            ComputedBy::Decl(id) => decl_value(self.db, id).value.clone(),
            ComputedBy::Cyclic(file) => cyclic_values(self.db, file)
                .values
                .get(&decl)
                .cloned()
                .flatten(),
        }
    }
    fn read_file(&self, m: ModuleId, rel: &str) -> Result<FileInfo, FileError> {
        let f = self.file(m);
        let p = resolve_local(self.db, f, rel)?;
        let input = self.db.input(&p);
        if let Some(why) = input.unreadable(self.db) {
            return Err(FileError::Unreadable(
                p.display().to_string(),
                why.to_string(),
            ));
        }
        match input.contents(self.db) {
            Some(bytes) if crate::too_large(bytes) => Err(FileError::TooLarge(
                p.display().to_string(),
                crate::MAX_FILE_BYTES,
            )),
            Some(bytes) => Ok(FileInfo {
                path: ws_relative(self.db, &p),
                sha256: scl_ir::sha256_hex(bytes),
                text: Arc::from(String::from_utf8_lossy(bytes).as_ref()),
            }),
            None => Err(FileError::NotFound(p.display().to_string())),
        }
    }
    fn host_path(&self, m: ModuleId, rel: &str, must_exist: bool) -> Result<String, FileError> {
        let f = self.file(m);
        let p = resolve_local(self.db, f, rel)?;
        if must_exist && *self.db.path_info(&p).kind(self.db) == crate::PathKind::Missing {
            return Err(FileError::NotFound(p.display().to_string()));
        }
        Ok(ws_relative(self.db, &p))
    }
    fn overrides(&self, m: ModuleId) -> Vec<Override> {
        let f = self.file(m);
        self.db
            .workspace()
            .overrides(self.db)
            .get(f.path(self.db))
            .cloned()
            .unwrap_or_default()
    }
}

/// The path of the stdlib module `std/NAME` (`path` is the import path
/// as written: `std/NAME` or `std/NAME.env.scl`).
fn std_path(db: &dyn Db, path: &str) -> Option<PathBuf> {
    let name = path.strip_prefix(STD_PREFIX)?;
    let name = name.strip_suffix(".env.scl").unwrap_or(name);
    Some(match db.stdlib_dir() {
        Some(dir) => dir.join(format!("{name}.env.scl")),
        None => PathBuf::from(format!("{STD_PREFIX}{name}.env.scl")),
    })
}

pub(crate) fn resolve_imports(db: &dyn Db, file: SourceFile) -> Arc<Imports> {
    let decls = module_decls(db, file);
    let tables = &file.syntax(db).spans;
    let n = decls.len();
    let mut out = Imports {
        targets: vec![None; n],
        spans: vec![Default::default(); n],
        diagnostics: Vec::new(),
    };
    let here = display_path(db, file);
    let local = LocalResolver::of(db, file);
    for (i, d) in decls.iter().enumerate() {
        let Decl::Import(imp) = &d.decl else { continue };
        let path_span = tables
            .get(i)
            .map_or_else(Default::default, |t| t.absolute(imp.path_span));
        out.spans[i] = path_span;
        let target = if let Some(name) = imp.path.strip_prefix(STD_PREFIX) {
            let name = name.strip_suffix(".env.scl").unwrap_or(name);
            let Some(path) = std_path(db, &imp.path) else {
                continue;
            };
            let f = db.input(&path);
            if !file_exists(db, f) {
                let names: Vec<String> = match db.stdlib_dir() {
                    Some(dir) => db
                        .dir_listing(&dir)
                        .entries(db)
                        .iter()
                        .flat_map(|es| es.iter())
                        .filter_map(|e| e.name.strip_suffix(".env.scl").map(String::from))
                        .collect(),
                    None => STDLIB.iter().map(|(n, _)| n.to_string()).collect(),
                };
                let mut d = Diagnostic::error(
                    "E0102",
                    path_span,
                    format!("the standard library has no module `{name}`"),
                );
                d = match did_you_mean(name, names.iter().map(|s| s.as_str())) {
                    Some(s) => d.with_help(format!("did you mean `std/{s}`?")),
                    None => d.with_help(format!(
                        "std modules: {}",
                        names
                            .iter()
                            .map(|n| format!("std/{n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                };
                out.diagnostics.push(d.in_file(&here));
                None
            } else {
                Some(f)
            }
        } else {
            match local.resolve(db, &imp.path).as_ref() {
                Err(FileError::OutsideWorkspace(p)) => {
                    out.diagnostics.push(
                        Diagnostic::error("E0105", path_span, format!("{:?} is outside the workspace", imp.path))
                            .with_note(format!("it resolves to {p}"))
                            .with_help("imports must stay inside the workspace root (the folder with `scl.toml`, else the root file's folder)")
                            .in_file(&here),
                    );
                    None
                }
                Err(
                    FileError::NotFound(_) | FileError::TooLarge(..) | FileError::Unreadable(..),
                ) => None,
                Ok(p) => {
                    let f = db.input(p);
                    if let Some(why) = f.unreadable(db) {
                        // Reported here, at the import; the import counts
                        // as failed, so its uses say nothing more.
                        out.diagnostics.push(
                            Diagnostic::error(
                                "E0107",
                                path_span,
                                format!("module {:?} cannot be read: {why}", imp.path),
                            )
                            .with_note(format!("it resolves to {}", p.display()))
                            .with_help("check that the file is readable by this user")
                            .in_file(&here),
                        );
                        None
                    } else if !file_exists(db, f) {
                        let mut d = Diagnostic::error(
                            "E0102",
                            path_span,
                            format!("cannot find module {:?}", imp.path),
                        )
                        .with_note(format!("looked for {}", p.display()));
                        if let Some(dir) = p.parent() {
                            let fname = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                            let sibs: Vec<String> = db
                                .dir_listing(dir)
                                .entries(db)
                                .iter()
                                .flat_map(|es| es.iter())
                                .map(|e| e.name.clone())
                                .filter(|n| n.ends_with(".env.scl"))
                                .collect();
                            if let Some(s) = did_you_mean(fname, sibs.iter().map(|s| s.as_str())) {
                                d = d.with_help(format!("did you mean `{s}`?"));
                            }
                        }
                        out.diagnostics.push(d.in_file(&here));
                        None
                    } else {
                        Some(f)
                    }
                }
            }
        };
        out.targets[i] = target;
    }
    Arc::new(out)
}

#[cfg(test)]
mod tests {
    use super::is_under;
    use std::path::Path;

    /// The byte test answers as `Path::starts_with` on every pair,
    /// normalized or not.
    #[test]
    fn is_under_is_path_starts_with() {
        let paths = [
            "/",
            "/a",
            "/a/",
            "/a/b",
            "/ab",
            "/a/bc",
            "/a/b/c",
            "/a//b",
            "/a/./b",
            "/a/b/..",
            "/a/b/../c",
            "a",
            "a/b",
            ".",
            "./a",
            "",
            "//a",
            "/a/b/",
        ];
        for p in paths {
            for r in paths {
                let (p, r) = (Path::new(p), Path::new(r));
                assert_eq!(is_under(p, r), p.starts_with(r), "{p:?} under {r:?}");
            }
        }
    }
}
