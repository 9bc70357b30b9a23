//! The analysis layer of SCL: what every front end asks (the CLI today, the
//! language server next), over the salsa database of `scl-db`.
//!
//! Two types, as in rust-analyzer's `ide` crate:
//! - [`AnalysisHost`] owns the database and applies changes: file texts,
//!   editor overlays, files changed on disk, `--set` values.
//! - [`Analysis`] is a snapshot (a clone of the database) that answers
//!   questions in file ids ([`FileId`]) and byte offsets and returns plain
//!   data: diagnostics, the envs of a file, an env's IR and provenance, the
//!   lowered artifacts of an env for a target, document symbols, the
//!   definition and references of a name, completion candidates, hover.
//!   Nothing here prints or exits; the front end renders.
//!
//! A snapshot must be dropped before the host changes anything: salsa
//! cancels and then waits for other handles of the database before it sets
//! an input (a language server answers each request on a fresh snapshot).
//!
//! Every pipeline runs on a thread with the compiler's stack
//! ([`with_compiler_stack`]).

pub mod docs;
mod editor;
mod files;
mod lower;
mod nav;
mod overrides;
mod refactor;

pub use editor::{InlayHint, InlayKind, SemanticToken, TokenKind, TOKEN_MODIFIERS};
pub use files::{collect_files, CollectError};
pub use lower::{LowerOptions, Lowering, Target};
pub use nav::{Completion, CompletionKind, Hover, NavTarget, Symbol, SymbolKind};
pub use refactor::{ActionKind, ChainLink, CodeAction};
pub use salsa::Cancelled;
pub use scl_backends::{Artifact, Lowered};
pub use scl_db::timings;
pub use scl_db::{
    normalize_path, with_compiler_stack, DirEntry, MemorySystem, OsSystem, PathKind, System,
    COMPILER_STACK_SIZE, MAX_DIAGNOSTICS_PER_FILE, MAX_FILE_BYTES,
};
pub use scl_diag::{Diagnostic, FileId, LineIndex, Span};
/// The IR types front ends serialize (`EnvSpec`, `ProvenanceEntry`,
/// `canonical_json`).
pub use scl_ir as ir;

use scl_db::{Database, Db, SourceFile};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file key of diagnostics about `--set` values: their text is the
/// command line ([`Analysis::command_line`]).
pub const CMDLINE: &str = "<command-line>";

/// Owns the database of one workspace and applies changes to it.
pub struct AnalysisHost {
    db: Database,
    cmdline: Arc<str>,
}

/// Where a field of an env's IR was set ([`Analysis::origins`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldOrigin {
    /// The IR path (`resources.requests.cpu`, `assets[1]`).
    pub path: String,
    /// The env (layer) whose item set it.
    pub env: String,
    /// The item.
    pub at: NavTarget,
    /// The layer whose value it replaced, if any.
    pub replaced: Option<String>,
}

/// One replacement of text: bytes `span` of `file` become `new_text`
/// (rename, code actions and formatting answer with these; the language
/// server turns them into LSP `TextEdit`s).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextEdit {
    pub file: FileId,
    pub span: Span,
    pub new_text: String,
}

/// Why a file named as the root of `ir`/`build` cannot be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// It is a folder.
    IsDir,
    /// It does not exist (or is not a file).
    Missing,
}

impl AnalysisHost {
    /// A host for the workspace rooted at `root` (made absolute from the
    /// system's current folder), reading files through `system`, the stdlib
    /// embedded or from `stdlib` (`--stdlib DIR`).
    pub fn new(system: Arc<dyn System>, root: &Path, stdlib: Option<PathBuf>) -> AnalysisHost {
        AnalysisHost {
            db: Database::with_system(system, root, stdlib),
            cmdline: Arc::from(""),
        }
    }

    /// The workspace root of a file or folder: the nearest ancestor holding
    /// `scl.toml`, else the file's folder (a folder: itself).
    pub fn workspace_root(system: &dyn System, path: &Path) -> PathBuf {
        scl_db::find_workspace_root_in(system, path)
    }

    /// A host for the workspace of `file` with `file` opened, for a command
    /// that works on one root file (`ir`, `build`, `diff`, `doctor`, `check
    /// --set`): the modules its import lines name are read while it parses
    /// (scl-db's `Database::open_root`).
    pub fn open_root(
        system: Arc<dyn System>,
        file: &Path,
        stdlib: Option<PathBuf>,
    ) -> Result<(AnalysisHost, FileId), OpenError> {
        let abs = scl_db::normalize_path(&system.current_dir().join(file));
        match system.kind(&abs) {
            PathKind::Dir => return Err(OpenError::IsDir),
            PathKind::Missing => return Err(OpenError::Missing),
            PathKind::File => {}
        }
        let root = AnalysisHost::workspace_root(&*system, file);
        let host = AnalysisHost::new(system, &root, stdlib);
        // Its imports are read while it is parsed (scl-db's `open_root`).
        let id = host.db.file_id(host.db.open_root(file));
        Ok((host, id))
    }

    /// The id of the file at `path` (relative: from the system's current
    /// folder), read on first use.
    pub fn file(&self, path: &Path) -> FileId {
        let f = self.db.open(path);
        self.db.file_id(f)
    }

    /// Replaces the text of a file (a benchmark edit; an editor uses
    /// [`AnalysisHost::set_overlay`]).
    pub fn set_text(&mut self, file: FileId, text: &str) {
        if let Some(f) = self.db.file_of_id(file) {
            self.db.set_text(f, text);
        }
    }

    /// Opens or updates an editor buffer over `path`: its text wins over the
    /// disk. A text that differs from the file's makes it a file being
    /// edited (its inputs' durability drops: scl-db's `will_edit`); a
    /// buffer opened with the file's own text leaves it as it is.
    pub fn set_overlay(&mut self, path: &Path, text: &str) {
        self.db.set_overlay(path, text);
    }

    /// Closes the editor buffer over `path`: the disk text is read again.
    pub fn remove_overlay(&mut self, path: &Path) {
        self.db.remove_overlay(path);
    }

    /// The files or folders at `paths` changed on disk: read them again.
    pub fn did_change_files(&mut self, paths: &[PathBuf]) {
        self.db.did_change_files(paths);
    }

    /// Everything may have changed on disk (a watcher lost events).
    pub fn did_change_all_files(&mut self) {
        self.db.did_change_all_files();
    }

    /// Moves the workspace root (an editor opened another folder, or an
    /// `scl.toml` appeared): imports are checked against the new root and
    /// file keys are relative to it.
    pub fn set_workspace_root(&mut self, root: &Path) {
        self.db.set_root(root);
    }

    /// Applies `--set` flags (`NAME=VALUE` for the parameters of `root`,
    /// `ALIAS.NAME=VALUE` for a module `root` imports as ALIAS) and returns
    /// the problems with them: a malformed flag or an unknown alias (E0312),
    /// a hidden character (E0010), a parameter set twice (E0319). Their
    /// locations are in [`CMDLINE`], whose text is the flags as given
    /// ([`Analysis::command_line`]). Replaces the flags given before.
    pub fn set_overrides(&mut self, root: FileId, flags: &[String]) -> Vec<Diagnostic> {
        let Some(f) = self.db.file_of_id(root) else {
            return Vec::new();
        };
        let (text, map, diags) = overrides::parse(&self.db, f, flags);
        self.cmdline = Arc::from(text);
        if !map.is_empty() {
            self.db.set_overrides(map);
        }
        diags
    }

    /// Whether the `--set` flag `flag` is addressed to `root`: `NAME=VALUE`
    /// when `root` declares a parameter `NAME`, `ALIAS.NAME=VALUE` when it
    /// imports a module as `ALIAS`; a malformed flag is addressed to every
    /// file, so that it is reported. `sclc check` over several files gives
    /// each file the flags addressed to it.
    pub fn accepts_override(&self, root: FileId, flag: &str) -> bool {
        self.db
            .file_of_id(root)
            .is_some_and(|f| overrides::addressed_to(&self.db, f, flag))
    }

    /// A snapshot to ask questions of.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            db: self.db.clone(),
            cmdline: self.cmdline.clone(),
        }
    }

    /// The database itself, for the benchmark and the fuzz harness, which
    /// measure and drive the queries directly.
    pub fn raw_database(&mut self) -> &mut Database {
        &mut self.db
    }
}

/// A snapshot of the database: every answer is computed (and memoized) on
/// demand, in file ids and byte offsets.
#[derive(Clone)]
pub struct Analysis {
    db: Database,
    cmdline: Arc<str>,
}

impl Analysis {
    fn sf(&self, file: FileId) -> SourceFile {
        self.db
            .file_of_id(file)
            .expect("file ids come from this database")
    }

    /// The id of the file at `path` (read on first use).
    pub fn file(&self, path: &Path) -> FileId {
        self.db.file_id(self.db.open(path))
    }

    /// [`Analysis::file`] for a file a command checks: on first use, the
    /// modules its import lines name are read while it parses (scl-db's
    /// `Database::open_root`).
    pub fn root_file(&self, path: &Path) -> FileId {
        self.db.file_id(self.db.open_root(path))
    }

    /// The absolute path of a file (`std/NAME.env.scl` for an embedded
    /// stdlib module).
    pub fn path(&self, file: FileId) -> PathBuf {
        self.sf(file).path(&self.db).clone()
    }

    /// The workspace root.
    pub fn root(&self) -> PathBuf {
        self.db.root()
    }

    /// The file key of a file: what its diagnostics' `at.file` holds (the
    /// workspace-relative path, or `std/NAME.env.scl`).
    pub fn key(&self, file: FileId) -> Arc<str> {
        self.db.display_path(self.sf(file))
    }

    /// The file a diagnostic's file key names (`None` for [`CMDLINE`]).
    pub fn file_of_key(&self, key: &str) -> Option<FileId> {
        self.db.file_of_key(key).map(|f| self.db.file_id(f))
    }

    /// The text of a file (lossy UTF-8; empty when it does not exist),
    /// memoized: asking again costs no copy.
    pub fn text(&self, file: FileId) -> Arc<str> {
        scl_db::lossy_text(&self.db, self.sf(file)).clone()
    }

    /// The line index of a file (for line/column and LSP positions).
    pub fn line_index(&self, file: FileId) -> Arc<LineIndex> {
        scl_db::line_index(&self.db, self.sf(file)).clone()
    }

    /// `(line, column)` of a byte offset, 1-based, the column in characters
    /// (the CLI's JSON, `design/cli.md`).
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        self.line_index(file).line_col(&text, offset as usize)
    }

    /// A byte span as an LSP range: `((line, character), (line, character))`,
    /// 0-based, characters in UTF-16 code units (LSP 3.17 `Range`).
    pub fn lsp_range(&self, file: FileId, span: scl_diag::Span) -> ((u32, u32), (u32, u32)) {
        let text = self.text(file);
        let ix = self.line_index(file);
        (
            ix.utf16_position(&text, span.start as usize),
            ix.utf16_position(&text, span.end as usize),
        )
    }

    /// The byte offset of an LSP position (0-based line, UTF-16 character),
    /// clamped to the line's end and the text's end.
    pub fn offset_of_lsp(&self, file: FileId, line: u32, character: u32) -> u32 {
        let text = self.text(file);
        self.line_index(file)
            .offset_of_utf16(&text, line, character) as u32
    }

    /// The `--set` flags as one line: the text of [`CMDLINE`] locations.
    pub fn command_line(&self) -> &str {
        &self.cmdline
    }

    /// Every text a diagnostic may point into, by file key: each file read
    /// so far, and [`CMDLINE`].
    pub fn texts(&self) -> HashMap<String, String> {
        let mut src = self.db.sources();
        src.insert(CMDLINE.to_string(), self.cmdline.to_string());
        src
    }

    /// The real path of a diagnostic's file key (`None` for [`CMDLINE`] and
    /// embedded stdlib modules): what a front end shows, relative to where
    /// the user is.
    pub fn path_of_key(&self, key: &str) -> Option<PathBuf> {
        let f = self.db.file_of_key(key)?;
        let p = f.path(&self.db);
        p.is_absolute().then(|| p.clone())
    }

    /// The diagnostics of checking `files` together (each with every module
    /// it imports): syntax, imports and cycles, static checks, evaluation of
    /// every env that is not a template; at most
    /// [`MAX_DIAGNOSTICS_PER_FILE`] per file, each problem once, the files'
    /// own first (in the order given), each sorted by position.
    pub fn check(&self, files: &[FileId]) -> Vec<Diagnostic> {
        let mut diags: Vec<Diagnostic> = Vec::new();
        let mut seen: std::collections::HashSet<Diagnostic> = std::collections::HashSet::new();
        for f in files {
            for d in self.db.check(self.sf(*f)) {
                if seen.insert(d.clone()) {
                    diags.push(d);
                }
            }
        }
        diags
    }

    /// The driver check (`E0506`) of every env of `files` that is not a
    /// template: each CUDA runtime it carries (the base image's, each torch
    /// wheel's `+cuXYZ`) against the NVIDIA driver `driver`
    /// (`"535.104.05"`), placed like the other domain checks. What
    /// `sclc check --driver` and `sclc doctor` add to [`Analysis::check`].
    pub fn driver_diagnostics(&self, files: &[FileId], driver: &str) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        for f in files {
            let sf = self.sf(*f);
            let values = self.values(*f);
            for name in &values.envs {
                let Some(fin) = values.final_env(name) else {
                    continue;
                };
                let Some(spec) = &fin.spec else {
                    continue;
                };
                let inputs = scl_db::checks::check_inputs(&self.db, spec);
                for finding in scl_checks::check_driver(spec, &inputs, driver) {
                    let d = scl_db::checks::place(&self.db, sf, name, spec, &fin.origins, &finding);
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
        }
        out
    }

    /// The CUDA runtimes env `name` of `file` carries (`scl_checks::cuda_runtimes`:
    /// CUDA version and where it comes from), empty when it has no IR.
    pub fn cuda_runtimes(&self, file: FileId, name: &str) -> Vec<(String, String)> {
        let Some(spec) = self.ir(file, name) else {
            return Vec::new();
        };
        let inputs = scl_db::checks::check_inputs(&self.db, &spec);
        scl_checks::cuda_runtimes(&spec, &inputs)
    }

    /// The diagnostics located in `file` (checking it and what it imports;
    /// an error in an imported module is that module's).
    pub fn file_diagnostics(&self, file: FileId) -> Vec<Diagnostic> {
        let key = self.key(file);
        self.check(&[file])
            .into_iter()
            .filter(|d| d.at.file == key)
            .collect()
    }

    /// Every `*.env.scl` of the workspace (below its root, sorted; hidden
    /// folders, `target` and `node_modules` skipped, links not followed),
    /// through the folder listings the database holds as inputs.
    pub fn workspace_files(&self) -> Vec<FileId> {
        let mut out = Vec::new();
        files::walk(
            &|dir: &Path| self.db.dir_listing(dir).entries(&self.db).clone(),
            &self.root(),
            &mut out,
        );
        out.iter().map(|p| self.file(p)).collect()
    }

    fn values(&self, file: FileId) -> &Arc<scl_sema::ModuleValues> {
        scl_db::module_values(&self.db, self.sf(file))
    }

    /// The envs of a file that are not templates (and evaluated without
    /// error), in declaration order.
    pub fn envs(&self, file: FileId) -> Vec<String> {
        self.values(file).envs.clone()
    }

    /// The envs a command works on: the one named with `--env`, else every
    /// env that is not a template. An env that exists but failed gives no
    /// env (its errors are reported already); a template is E0314; an
    /// unknown name E0315 with a did-you-mean or the list of envs.
    pub fn select_envs(
        &self,
        file: FileId,
        env: Option<&str>,
    ) -> Result<Vec<String>, Box<Diagnostic>> {
        let values = self.values(file);
        let Some(name) = env else {
            return Ok(values.envs.clone());
        };
        if values.envs.iter().any(|e| e == name) {
            return Ok(vec![name.to_string()]);
        }
        if values.failed.iter().any(|e| e == name) {
            return Ok(Vec::new());
        }
        let parse = scl_db::parse(&self.db, self.sf(file));
        let template = parse.module.decls.iter().any(|d| matches!(d, scl_syntax::ast::Decl::Env(e) if e.name.name == name && e.params.is_some()));
        let mut d = if template {
            Diagnostic::error(
                "E0314",
                Default::default(),
                format!("`{name}` is a template; instantiate it from an env (`extends {name}(…)`)"),
            )
        } else {
            Diagnostic::error(
                "E0315",
                Default::default(),
                format!("the file has no env `{name}`"),
            )
        };
        d.at.file = self.key(file);
        d = match scl_diag::did_you_mean(name, values.envs.iter().map(|s| s.as_str())) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!("envs: {}", values.envs.join(", "))),
        };
        Err(Box::new(d))
    }

    /// The canonical IR of env `name` of `file` (`None` when it is not an
    /// env of the file or has errors).
    pub fn ir(&self, file: FileId, name: &str) -> Option<Arc<scl_ir::EnvSpec>> {
        self.values(file).final_env(name)?.spec.clone()
    }

    /// Where each field of env `name` was set: IR path → the env (layer),
    /// file, line and column (1-based, characters) of the item, and the
    /// layer it replaced. The file is the module's key (workspace-relative),
    /// as in `sclc ir --provenance`.
    pub fn provenance(
        &self,
        file: FileId,
        name: &str,
    ) -> Option<BTreeMap<String, scl_ir::ProvenanceEntry>> {
        let fin = self.values(file).final_env(name)?;
        let mut out = BTreeMap::new();
        let mut keys: HashMap<scl_sema::ModuleId, Arc<str>> = HashMap::new();
        for (path, o) in fin.origins.flatten().iter() {
            let m = FileId(o.module.0);
            let key = keys.entry(o.module).or_insert_with(|| self.key(m)).clone();
            let (line, column) = self.line_col(m, scl_db::absolute_span(&self.db, o.span).start);
            out.insert(
                path.render().replace(scl_sema::value::TYPE_KEY, ""),
                scl_ir::ProvenanceEntry {
                    env: o.layer.to_string(),
                    file: key.to_string(),
                    line: line as u32,
                    column: column as u32,
                    replaced: o.replaced.as_deref().map(String::from),
                },
            );
        }
        Some(out)
    }

    /// Where each field of env `name` was set, in file ids and byte spans
    /// (for an editor: go to the item that set a field), sorted by IR path.
    pub fn origins(&self, file: FileId, name: &str) -> Option<Vec<FieldOrigin>> {
        let fin = self.values(file).final_env(name)?;
        let mut out: Vec<FieldOrigin> = fin
            .origins
            .flatten()
            .iter()
            .map(|(path, o)| FieldOrigin {
                path: path.render().replace(scl_sema::value::TYPE_KEY, ""),
                env: o.layer.to_string(),
                at: NavTarget {
                    file: FileId(o.module.0),
                    span: scl_db::absolute_span(&self.db, o.span),
                },
                replaced: o.replaced.as_deref().map(String::from),
            })
            .collect();
        // Sorted by the rendered path, as documented.
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Some(out)
    }

    /// The lowered artifacts of envs `envs` of `file` for `target`, with the
    /// target's warnings and errors located at the source of their field
    /// (the item that set it, else its nearest enclosing field, else the
    /// first item below it), and E0406 for envs whose names differ only in
    /// case (one output folder on a case-insensitive file system).
    pub fn lower(&self, file: FileId, envs: &[String], target: Target) -> Lowering {
        lower::lower(self, file, envs, target, &LowerOptions::default())
    }

    /// The `docker build` / `docker run` / smoke-test command lines of env
    /// `env` of `file` (`scl_backends::docker::commands`), with the image
    /// tags [`Analysis::lower_with`] gives the same options; `folder` is the
    /// env's output folder and `context` the build context as the user
    /// types them. `None` when the env has no IR.
    pub fn docker_commands(
        &self,
        file: FileId,
        env: &str,
        options: &LowerOptions,
        folder: &str,
        context: &str,
    ) -> Option<Vec<String>> {
        let spec = self.ir(file, env)?;
        let cx = lower::lower_cx(&self.db, env, &spec, options);
        Some(scl_backends::docker::commands(&spec, &cx, folder, context))
    }

    /// The IR of env `env` of `file` and the context its backends lower it
    /// with ([`scl_backends::LowerCx`]: the image repository, the build
    /// context's hash, the requirements files' texts), as
    /// [`Analysis::lower_with`] makes it for the same options: so
    /// `cx.image(&spec, None)` is the reference the lowered Kubernetes and
    /// compose files run. `None` when the env has no IR.
    pub fn lower_cx(
        &self,
        file: FileId,
        env: &str,
        options: &LowerOptions,
    ) -> Option<(Arc<scl_ir::EnvSpec>, scl_backends::LowerCx)> {
        let spec = self.ir(file, env)?;
        let cx = lower::lower_cx(&self.db, env, &spec, options);
        Some((spec, cx))
    }

    /// [`Analysis::lower`] with options that do not come from the source
    /// (`--image-repo`).
    pub fn lower_with(
        &self,
        file: FileId,
        envs: &[String],
        target: Target,
        options: &LowerOptions,
    ) -> Lowering {
        lower::lower(self, file, envs, target, options)
    }

    /// The declarations of a file, in order, with their children (a
    /// template's or function's parameters, an enum's variants).
    pub fn symbols(&self, file: FileId) -> Vec<Symbol> {
        nav::symbols(&scl_db::parse(&self.db, self.sf(file)).module)
    }

    /// The declaration a name at `offset` refers to: a local binder (a
    /// parameter, a comprehension variable), a declaration of the file, the
    /// module an import alias or path names (at its start), or
    /// the declaration `alias.name` names in the imported module. On a
    /// field item of an env body (`resources.requests.cpu = 8`): the item
    /// (whole span) of the layer whose value it overrode, in whichever
    /// module that layer is (the next link of [`Hover::chain`]).
    pub fn definition(&self, file: FileId, offset: u32) -> Option<NavTarget> {
        nav::definition(self, file, offset)
    }

    /// Every place that refers to what the name at `offset` refers to, in
    /// every file read so far (the declaration itself included when
    /// `include_declaration`), sorted by file id and position.
    pub fn references(
        &self,
        file: FileId,
        offset: u32,
        include_declaration: bool,
    ) -> Vec<NavTarget> {
        nav::references(self, file, offset, include_declaration)
    }

    /// What may be written at `offset`: in an env body the schema fields of
    /// the record being written (`RecordTy::fields`); after `=` the variants
    /// of an enum-typed field and the names in scope; after `alias.` the
    /// declarations of the imported module; inside an import's path the
    /// stdlib modules and the files and folders beside the importer.
    pub fn completions(&self, file: FileId, offset: u32) -> Vec<Completion> {
        nav::completions(self, file, offset)
    }

    /// The kind, doc comment and type of what is at `offset`; for a `let`
    /// or `param`, its value; for a field path segment of an env body, its
    /// value in the env and the chain of layers that set it
    /// ([`ChainLink`]: the winning item first, then each item it
    /// overrode).
    pub fn hover(&self, file: FileId, offset: u32) -> Option<Hover> {
        nav::hover(self, file, offset)
    }

    /// The type of the innermost expression at `offset` (a byte offset), as
    /// the static checker infers it without evaluating anything (the rules:
    /// the book's "Typing rules"), written as users write types (`Int`,
    /// `[String]`, `{String: Int}`, `Env`…); `None` where no expression is.
    pub fn type_at(&self, file: FileId, offset: u32) -> Option<String> {
        scl_db::type_table(&self.db, self.sf(file))
            .type_at(offset)
            .map(|t| t.to_string())
    }

    /// Runs `f` on this snapshot and turns salsa's cancellation (the host
    /// applied a change while `f` was running: the answer would be stale)
    /// into `Err(Cancelled)`; any other panic propagates. A language server
    /// answers a cancelled request with `ContentModified`.
    pub fn catch_cancel<T>(
        &self,
        f: impl FnOnce(&Analysis) -> T + std::panic::UnwindSafe,
    ) -> Result<T, Cancelled> {
        let this = std::panic::AssertUnwindSafe(self);
        Cancelled::catch(move || f(*this))
    }

    pub(crate) fn db(&self) -> &Database {
        &self.db
    }
    pub(crate) fn source_file(&self, file: FileId) -> SourceFile {
        self.sf(file)
    }
    pub(crate) fn parse(&self, file: FileId) -> &Arc<scl_syntax::Tree> {
        scl_db::parse(&self.db, self.sf(file))
    }
    /// The lossless table of `file`'s text ([`scl_db::trivia`]).
    pub(crate) fn trivia(&self, file: FileId) -> &Arc<scl_syntax::Trivia> {
        scl_db::trivia(&self.db, self.sf(file))
    }
    /// The file an import declaration (by index) of `file` resolved to.
    pub(crate) fn import_target(&self, file: FileId, decl: usize) -> Option<FileId> {
        let imps = scl_db::imports(&self.db, self.sf(file));
        imps.targets
            .get(decl)
            .copied()
            .flatten()
            .map(|t| self.db.file_id(t))
    }
    /// The stdlib module names (`pytorch-cuda`, …).
    pub(crate) fn stdlib_modules(&self) -> Vec<String> {
        match self.db.stdlib_dir() {
            Some(dir) => self
                .db
                .dir_listing(&dir)
                .entries(&self.db)
                .iter()
                .flat_map(|es| es.iter())
                .filter_map(|e| e.name.strip_suffix(".env.scl").map(String::from))
                .collect(),
            None => scl_db::STDLIB.iter().map(|(n, _)| n.to_string()).collect(),
        }
    }
    pub(crate) fn listing(&self, dir: &Path) -> Option<Arc<[DirEntry]>> {
        self.db.dir_listing(dir).entries(&self.db).clone()
    }
}
