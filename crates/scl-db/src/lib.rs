//! The query database of SCL (salsa 0.28). The CLI, the language server, the
//! tests and the benchmark all ask it the same questions; an edit recomputes
//! only what depends on it.
//!
//! Inputs: [`SourceFile`] (a path and its bytes, from the [`System`], an
//! editor overlay or the embedded stdlib), [`PathInfo`] (what a path is),
//! [`DirListing`] (a folder's entries) and [`Workspace`] (the root folder and
//! the `--set` values). Queries: [`parse`], [`line_index`], [`imports`],
//! [`static_diagnostics`], [`module_values`] (evaluation, through
//! `scl_sema::Host`) and [`module_diagnostics`]. [`Database::check`] gathers the diagnostics of a
//! file and of every module it reaches, including import cycles.
//!
//! Boundary rule: tracked queries do no I/O. Every file-system fact comes
//! through the database's [`System`] into a salsa input, made on first use
//! and kept until a front end says the path changed
//! ([`Database::did_change_files`]): a file's bytes ([`SourceFile`]), what
//! a path is and its canonical form ([`PathInfo`]), a folder's listing
//! ([`DirListing`]). Open editor buffers overlay the disk
//! ([`Database::set_overlay`]).

pub mod checks;
mod cpus;
pub mod events;
mod host;
mod paths;
mod stack;
pub mod system;
pub mod timings;
mod trail;
mod types;

use paths::PathMap;
pub use paths::{find_workspace_root, find_workspace_root_in, normalize_path};
pub use stack::{compiler_thread, cores, with_compiler_stack, COMPILER_STACK_SIZE};
use std::sync::atomic::AtomicBool;
pub use system::{DirEntry, EntryKind, EntryKinds, MemorySystem, OsSystem, PathKind, System};
pub use types::{known_modules, module_types, type_table, typed_module, StaticPass};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use salsa::Setter;
use scl_diag::Diagnostic;
use scl_sema::{ModuleId, ModuleValues, Override};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

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
/// stdlib module) and its bytes (`None` when it does not exist). A file that
/// exists but cannot be read has empty contents and the system's message in
/// `unreadable` (reported as E0107 where it is used, never taken for an
/// empty file).
///
/// `syntax` is what the database keeps of the parse of the contents besides
/// the declarations ([`FileSyntax`]): it parses the contents when it sets
/// them, anchors the declarations into the file's [`Semantic`] input, and
/// keeps no other copy of the tree.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub contents: Option<Arc<[u8]>>,
    #[returns(ref)]
    pub unreadable: Option<Arc<str>>,
    #[returns(ref)]
    pub syntax: Arc<FileSyntax>,
    /// Whether it exists (has contents): a field of its own, set only when
    /// that changes, so what depends on a file's existence (an import of
    /// it) is not re-verified when its text changes. It and `unreadable`
    /// keep their durability (MEDIUM for a workspace file) while the text
    /// is LOW ([`Database::will_edit`]).
    pub exists: bool,
    /// Whether the text was set again after it was first read, or opened
    /// for editing: `module_types` then types the file's anchored
    /// declarations instead of reusing the static pass, which reads the
    /// text. A tracked field (set once, MEDIUM), so that the switch is seen
    /// by salsa like any other change.
    pub text_changed: bool,
}

/// What the database keeps of a file's parse besides its declarations
/// (which are anchored in its [`Semantic`] input: one tree per module):
/// the parser's diagnostics, the declarations it recovered, and where each
/// declaration's spans are now. The declarations with absolute spans are
/// made again from these when a pass needs offsets ([`module_ast`]); the
/// whole tree, doc comments included, only when an editor asks
/// ([`parse`]).
#[derive(Debug, Default)]
pub struct FileSyntax {
    /// The parser's diagnostics (no file set: see [`syntax_errors`]).
    pub errors: Vec<Diagnostic>,
    /// `ast::Module::recovered`: the declarations with a syntax error of
    /// their own.
    pub recovered: Vec<scl_diag::Span>,
    /// By declaration index: the table that turns its anchored spans into
    /// offsets in the text as it is now.
    pub spans: Vec<Arc<scl_syntax::ast::SpanTable>>,
}

/// A file's text parsed as the database keeps it: the facts of the parse,
/// the outline, and the declarations (absolute spans, not anchored yet:
/// [`Parsed::anchor`]).
struct Parsed {
    syntax: Arc<FileSyntax>,
    items: Arc<scl_sema::Items>,
    decls: Vec<scl_syntax::ast::Decl>,
    /// By declaration index: its spans' ranks in its table
    /// (`Decl::ranked_span_table`), for [`Parsed::anchor`].
    ranks: Vec<scl_syntax::ast::SpanRanks>,
}

impl Parsed {
    /// Parses the text the compiler reads from `contents`
    /// ([`compiled_text`]).
    fn of(contents: Option<&[u8]>, unreadable: bool) -> Parsed {
        let tree = scl_syntax::parse_tree(&compiled_text(contents, unreadable));
        let items = scl_sema::Items::of(&tree.module);
        let module = Arc::unwrap_or_clone(tree.module);
        let mut decls = module.decls;
        let (spans, ranks) = decls
            .iter_mut()
            .map(|d| {
                let (table, ranks) = d.ranked_span_table();
                (Arc::new(table), ranks)
            })
            .unzip();
        Parsed {
            syntax: Arc::new(FileSyntax {
                errors: tree.errors,
                recovered: module.recovered,
                spans,
            }),
            items: Arc::new(items),
            decls,
            ranks,
        }
    }

    /// The anchor of each declaration (by its name and occurrence), in
    /// order, and `file`'s table of anchors with any new ones added.
    /// `table` is what the registry holds for `file` (empty for a new
    /// input; the caller puts the result back, under the lock it takes
    /// anyway). The threads that read files in parallel share the
    /// registry, so the lookups, the names' copies and the table are made
    /// outside its lock: under it, only the new anchors are numbered (one
    /// `extend` of the list [`Registry::anchors`]). One thread anchors a
    /// file at a time (a new input is its maker's; an edit takes
    /// `&mut Database`).
    fn anchors(
        &self,
        db: &Database,
        file: SourceFile,
        mut table: FileAnchors,
    ) -> (Vec<u32>, FileAnchors) {
        let items = self.items.items.iter().take(self.decls.len());
        // The keys, each looked up in the file's table: a new input's is
        // empty, and each name is copied once, for the table.
        let keys: Vec<(AnchorKey, Option<u32>)> = items
            .map(|x| {
                let key = (Arc::<str>::from(x.name.as_str()), x.occurrence);
                let old = table.get(&key).copied();
                (key, old)
            })
            .collect();
        let new = keys.iter().filter(|(_, old)| old.is_none()).count();
        let mut next = 0;
        if new > 0 {
            let mut reg = db.reg();
            next = reg.anchors.len() as u32 + 1;
            reg.anchors.extend(
                keys.iter()
                    .filter(|(_, old)| old.is_none())
                    .map(|((name, occ), _)| (file, name.clone(), *occ)),
            );
        }
        table.reserve(new);
        let out = keys
            .into_iter()
            .map(|(key, old)| {
                old.unwrap_or_else(|| {
                    // Numbered in the order they were listed above; a
                    // name and occurrence are unique in a file (the
                    // occurrence counts earlier namesakes).
                    let a = next;
                    next += 1;
                    table.insert(key, a);
                    a
                })
            })
            .collect();
        (out, table)
    }

    /// The declarations anchored in place (`Decl::anchor_ranked`), each to
    /// its anchor in `anchors` ([`Parsed::anchors`]): the [`Semantic`]
    /// declarations. No copy of the tree is made.
    fn anchor(self, anchors: &[u32]) -> Vec<Arc<scl_sema::AnchoredDecl>> {
        let Parsed {
            syntax: _,
            items: _,
            decls,
            ranks,
        } = self;
        decls
            .into_iter()
            .zip(anchors)
            .zip(&ranks)
            .map(|((mut decl, &anchor), ranks)| {
                decl.anchor_ranked(ranks, anchor);
                Arc::new(scl_sema::AnchoredDecl { decl })
            })
            .collect()
    }
}

/// What a file's text means, apart from where it is written: its outline
/// ([`scl_sema::Items`]) and its declarations anchored
/// (`Decl::anchored`: no positions, no layout, no comments). Set by the
/// database from the text, and only when it differs: an edit of comments,
/// blank lines or spaces leaves it untouched, so nothing that reads it
/// (evaluation, the declarations' types, import targets) is even verified
/// again. Evaluation reads a file only through this input (and its text
/// only to quote it in an error message).
///
/// Durability: HIGH for the stdlib; MEDIUM for a workspace file until its
/// meaning changes, LOW from then on. After an edit, salsa verifies in
/// constant time every result that reads only MEDIUM and HIGH inputs: a
/// re-check walks only what depends on the files being edited.
#[salsa::input(debug)]
pub struct Semantic {
    #[returns(ref)]
    pub items: Arc<scl_sema::Items>,
    /// One input per declaration, in order: an edit sets only those whose
    /// anchored form changed (so even the first edit of a file leaves the
    /// others as durable as they were).
    #[returns(ref)]
    pub decls: Arc<Vec<DeclInput>>,
}

/// One declaration of a [`Semantic`] input, anchored.
#[salsa::input(debug)]
pub struct DeclInput {
    #[returns(ref)]
    pub decl: Arc<scl_sema::AnchoredDecl>,
}

/// What a path is (following links), whether it is itself a link, and its
/// canonical form (every link resolved; only for folders and links, `None`
/// for anything else or when it does not exist). One input per path asked
/// about: an import of a missing file depends on this, not on any text.
#[salsa::input(debug)]
pub struct PathInfo {
    #[returns(ref)]
    pub path: PathBuf,
    pub kind: PathKind,
    pub is_link: bool,
    #[returns(ref)]
    pub canonical: Option<PathBuf>,
}

/// A folder's listing, sorted by name (`None` when it is not a folder),
/// with the open editor buffers in it: what `sclc check DIR` walks, the
/// did-you-mean of a missing import, and import-path completion.
#[salsa::input(debug)]
pub struct DirListing {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub entries: Option<Arc<[DirEntry]>>,
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
    /// The file of each id, in order: [`Db::module_file`] for many ids at
    /// once (one lock of the registry, not one per id: an env holding
    /// 5,000 services asks for all of their modules).
    fn module_files(&self, ids: &[ModuleId]) -> Vec<SourceFile> {
        ids.iter().map(|&id| self.module_file(id)).collect()
    }
    /// The stdlib folder given with `--stdlib`, if any.
    fn stdlib_dir(&self) -> Option<PathBuf>;
    /// The canonical form of a folder (symlinks resolved), from its
    /// [`PathInfo`]; `None` when it is not a folder.
    fn canonical_dir(&self, dir: &Path) -> Option<PathBuf> {
        host::canonical_folder(self, self.path_info(dir)).map(Path::to_path_buf)
    }
    /// The [`PathInfo`] input of `path` (absolute, normalized), made from the
    /// [`System`] on first use.
    fn path_info(&self, path: &Path) -> PathInfo;
    /// The [`DirListing`] input of `dir`, made from the [`System`] on first use.
    fn dir_listing(&self, dir: &Path) -> DirListing;
    /// What an anchor names: the file, the declaration's name and occurrence.
    fn anchor_target(&self, anchor: u32) -> Option<(SourceFile, Arc<str>, u32)>;
    /// The [`Semantic`] input of a file.
    fn semantic(&self, file: SourceFile) -> Semantic;
}

/// The inputs made so far, by path, and the open editor buffers.
#[derive(Default)]
struct Registry {
    by_path: PathMap<SourceFile>,
    ids: Vec<SourceFile>,
    id_of: HashMap<SourceFile, ModuleId>,
    infos: PathMap<PathInfo>,
    listings: PathMap<DirListing>,
    overlays: PathMap<Arc<[u8]>>,
    /// Files by display path (the file key of their diagnostics).
    by_key: HashMap<Arc<str>, SourceFile>,
    /// Files [`Database::check`] was asked about.
    checked: HashSet<SourceFile>,
    /// The [`Semantic`] input of each file.
    semantic: HashMap<SourceFile, Semantic>,
    /// Files whose inputs are LOW durability ([`Database::will_edit`]).
    edited: HashSet<SourceFile>,

    /// Anchor `a` names `anchors[a - 1]`: the declaration of a file
    /// named so (its `occurrence`-th declaration of that name). A small
    /// number, never 0, the same for the life of the database whatever
    /// moves in the file (see `scl_diag::Span`); given out by
    /// [`Parsed::anchors`].
    anchors: Vec<(SourceFile, Arc<str>, u32)>,
    /// Each file's anchors, by name and occurrence.
    anchor_of: HashMap<SourceFile, FileAnchors>,
    /// Bumped whenever path facts may have changed (an overlay opened or
    /// closed, a path refreshed): [`Db::path_info`] stats without the lock
    /// and keeps what it read only if no change came in between.
    facts_generation: u64,
}

/// A file's anchors by declaration name and occurrence (see
/// [`Registry::anchors`]).
type FileAnchors = HashMap<AnchorKey, u32>;

/// A declaration's name and occurrence (how many earlier declarations of
/// its file have that name).
type AnchorKey = (Arc<str>, u32);

/// The concrete database.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    registry: Arc<RwLock<Registry>>,
    /// Folders many files of which were asked about: their listings, for
    /// the first facts of their files (see [`Folders`]).
    folders: Arc<Mutex<Folders>>,
    system: Arc<dyn System>,
    workspace: Option<Workspace>,
    stdlib_dir: Option<PathBuf>,
}

/// The first facts of a path ([`Db::path_info`]) for files of a folder
/// many of whose files are asked about, from one listing of the folder
/// ([`System::entry_kinds`]) instead of an `lstat` per file: a module that
/// imports 1,000 siblings costs three `getdents` calls, not 1,000 `lstat`s
/// (each of which walks the whole path again). Only first facts come from
/// here: a refresh ([`Database::did_change_files`]) always asks the
/// system about the path itself.
///
/// A folder is listed once [`FIRST_LISTING`] of its files have been asked
/// about, reading at most [`ENTRIES_PER_ASK`] entries per file asked; a
/// larger folder is tried again when twice as many have been, so a huge
/// folder of which a few files are imported is never listed whole, and the
/// listings that stop early cost at most about as much as the `lstat`s
/// they were meant to save. A name the listing does not hold (a file made
/// since, a name a case-insensitive file system matches in another case)
/// and a link are asked about on their own. A listing is checked against
/// an `lstat` of the path whose question made it: one that disagrees (a
/// folder that can be read but not searched lists files no `lstat` can
/// see) is dropped, and the folder is never listed again. Listings
/// belong to one facts generation: any change of path facts (an overlay
/// opened or closed, a refresh) drops them.
#[derive(Default)]
struct Folders {
    /// The facts generation ([`Registry`]'s) the listings were made in.
    generation: u64,
    by_dir: HashMap<PathBuf, Folder>,
}

/// One folder of [`Folders`].
struct Folder {
    /// How many of its files were asked about so far.
    asked: usize,
    /// The count at which it is listed next.
    list_at: usize,
    /// Its entries' kinds by name, once listed.
    listed: Option<system::EntryKinds>,
}

/// What [`stat`] says of a folder's entry of this kind (without the
/// canonical form): `None` for a link or a name the listing lacks, which
/// are asked about on their own.
fn facts_of_entry(kind: Option<system::EntryKind>) -> Option<(PathKind, bool)> {
    match kind? {
        system::EntryKind::File => Some((PathKind::File, false)),
        system::EntryKind::Dir => Some((PathKind::Dir, false)),
        system::EntryKind::Other => Some((PathKind::Missing, false)),
        system::EntryKind::Link => None,
    }
}

/// Files of one folder asked about before it is listed (see [`Folders`]).
const FIRST_LISTING: usize = 32;

/// Entries of a folder read at most per file of it asked about (see
/// [`Folders`]): a listing that stops at this many cost about what the
/// `lstat`s it replaces would have (an `lstat` of a path walks every
/// folder of it; a listing reads a few hundred entries per call).
const ENTRIES_PER_ASK: usize = 8;

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn input(&self, path: &Path) -> SourceFile {
        self.input_read(path, None)
    }
    fn semantic(&self, file: SourceFile) -> Semantic {
        self.reg_read().semantic[&file]
    }

    fn workspace(&self) -> Workspace {
        self.workspace
            .expect("the workspace input is created in Database::new")
    }
    fn module_id(&self, file: SourceFile) -> ModuleId {
        if let Some(id) = self.reg_read().id_of.get(&file) {
            return *id;
        }
        let mut reg = self.reg();
        if let Some(id) = reg.id_of.get(&file) {
            return *id;
        }
        let id = ModuleId(reg.ids.len() as u32);
        reg.ids.push(file);
        reg.id_of.insert(file, id);
        id
    }
    fn module_file(&self, id: ModuleId) -> SourceFile {
        self.reg_read().ids[id.0 as usize]
    }
    fn module_files(&self, ids: &[ModuleId]) -> Vec<SourceFile> {
        let reg = self.reg_read();
        ids.iter().map(|id| reg.ids[id.0 as usize]).collect()
    }
    fn stdlib_dir(&self) -> Option<PathBuf> {
        self.stdlib_dir.clone()
    }
    fn path_info(&self, path: &Path) -> PathInfo {
        // The system call is made without the registry's lock, so that
        // threads resolving imports in parallel (the preload) do not wait
        // on each other's; one that loses a race drops its facts, and facts
        // read while an overlay or a refresh changed them are read again.
        let (mut reg, (kind, is_link, canonical)) = loop {
            let (generation, open) = {
                let reg = self.reg_read();
                if let Some(i) = reg.infos.get(path) {
                    return *i;
                }
                (reg.facts_generation, reg.overlays.contains_key(path))
            };
            let facts = match open {
                false => self.listed_facts(generation, path),
                true => None,
            }
            .unwrap_or_else(|| stat(&*self.system, open, path));
            let reg = self.reg();
            if let Some(i) = reg.infos.get(path) {
                return *i;
            }
            if reg.facts_generation == generation {
                break (reg, facts);
            }
        };
        let i = PathInfo::builder(path.to_path_buf(), kind, is_link, canonical)
            .durability(salsa::Durability::HIGH)
            .new(self);
        reg.infos.insert(path, i);
        i
    }
    fn anchor_target(&self, anchor: u32) -> Option<(SourceFile, Arc<str>, u32)> {
        let reg = self.reg_read();
        reg.anchors.get((anchor as usize).checked_sub(1)?).cloned()
    }
    fn dir_listing(&self, dir: &Path) -> DirListing {
        let mut reg = self.reg();
        if let Some(l) = reg.listings.get(dir) {
            return *l;
        }
        let entries = list(&*self.system, &reg.overlays, dir);
        let l = DirListing::builder(dir.to_path_buf(), entries)
            .durability(salsa::Durability::HIGH)
            .new(self);
        reg.listings.insert(dir, l);
        l
    }
}

impl Registry {
    /// Room for `n` more files (their paths' facts, and about four
    /// declarations each) in every table a new input goes into: what
    /// [`Database::open_root`] expects from a root's import lines.
    fn reserve_files(&mut self, n: usize) {
        self.by_path.reserve(n);
        self.infos.reserve(n);
        self.ids.reserve(n);
        self.id_of.reserve(n);
        self.by_key.reserve(n);
        self.semantic.reserve(n);
        self.anchor_of.reserve(n);
        self.anchors.reserve(4 * n);
    }
}

/// The parse of a file's text as the compiler reads it ([`compiled_text`];
/// [`parse`] adds the diagnostics of a file that cannot be read or is too
/// large).
/// The text the compiler parses from a file's bytes: as [`reading_text`]
/// reads them, or empty for a file that cannot be read or is too large.
fn compiled_text(contents: Option<&[u8]>, unreadable: bool) -> String {
    let bytes = contents.unwrap_or(b"");
    if unreadable || too_large(bytes) {
        String::new()
    } else {
        reading_text(bytes)
    }
}

/// Bytes as the compiler reads them: lossy UTF-8, a byte order mark
/// blanked (same length, so spans are offsets into the bytes).
fn reading_text(bytes: &[u8]) -> String {
    // Valid UTF-8 (nearly every file) is checked by `from_utf8`, which
    // takes ASCII a word at a time; the lossy decoder walks every byte
    // (12 instructions a byte, 1 % of a cold `sclc ir`).
    let mut text = match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    };
    if text.starts_with('\u{feff}') {
        text.replace_range(0..3, "   ");
    }
    text
}

/// The facts of [`PathInfo`] for `path`: a file when `open` (an editor buffer
/// over it), else what the system says.
fn stat(system: &dyn System, open: bool, path: &Path) -> (PathKind, bool, Option<PathBuf>) {
    if open {
        return (PathKind::File, false, None);
    }
    let (kind, is_link) = system.kind_and_link(path);
    let canonical = if kind == PathKind::Dir || is_link {
        system.canonicalize(path)
    } else {
        None
    };
    (kind, is_link, canonical)
}

/// The listing of [`DirListing`] for `dir`: the folder's entries plus the
/// open buffers directly in it (an unsaved new file is listed).
fn list(system: &dyn System, overlays: &PathMap<Arc<[u8]>>, dir: &Path) -> Option<Arc<[DirEntry]>> {
    let mut entries = system.read_dir(dir);
    for p in overlays.keys().filter(|p| p.parent() == Some(dir)) {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name {
            let list = entries.get_or_insert_with(Vec::new);
            if !list.iter().any(|e| e.name == name) {
                list.push(DirEntry {
                    name,
                    is_dir: false,
                    is_link: false,
                });
                list.sort();
            }
        }
    }
    entries.map(Arc::from)
}

/// What [`read_source`] gives: a file's bytes (`None` when it does not
/// exist) and, for one that exists but cannot be read, the system's message.
type Source = (Option<Arc<[u8]>>, Option<Arc<str>>);

/// The bytes of `path` and, for a file that exists but cannot be read,
/// the system's message (the bytes are then empty).
fn read_source(system: &dyn System, path: &Path) -> Source {
    let s = path.to_str().unwrap_or("");
    if let Some(name) = s.strip_prefix(STD_PREFIX) {
        let name = name.strip_suffix(".env.scl").unwrap_or(name);
        let text = STDLIB
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, src)| Arc::from(src.as_bytes()));
        return (text, None);
    }
    // At most MAX_FILE_BYTES + 1 bytes: one byte more than the limit tells
    // a file that is too large from one that fits exactly.
    match system.read(path, MAX_FILE_BYTES + 1) {
        Ok(bytes) => (bytes.map(Arc::from), None),
        Err(why) => (Some(Arc::from(&b""[..])), Some(Arc::from(why))),
    }
}

/// Whether file contents exceed [`MAX_FILE_BYTES`].
pub(crate) fn too_large(bytes: &[u8]) -> bool {
    bytes.len() > MAX_FILE_BYTES
}

impl Database {
    /// The facts of `path` ([`stat`]'s) from its folder's listing, when the
    /// folder is listed or due to be (see [`Folders`]); `None` when the
    /// system must be asked about the path itself. `generation`: the facts
    /// generation the caller read before asking.
    fn listed_facts(
        &self,
        generation: u64,
        path: &Path,
    ) -> Option<(PathKind, bool, Option<PathBuf>)> {
        if !path.is_absolute() {
            return None;
        }
        let (dir, name) = (path.parent()?, path.file_name()?.to_str()?);
        let kind = {
            let mut folders = self
                .folders
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if folders.generation != generation {
                folders.by_dir.clear();
                folders.generation = generation;
            }
            if !folders.by_dir.contains_key(dir) {
                folders.by_dir.insert(
                    dir.to_path_buf(),
                    Folder {
                        asked: 0,
                        list_at: FIRST_LISTING,
                        listed: None,
                    },
                );
            }
            let folder = folders.by_dir.get_mut(dir)?;
            if folder.listed.is_none() {
                folder.asked += 1;
                if folder.asked < folder.list_at {
                    return None;
                }
                // Listed while the lock is held: a second thread asking
                // about the same folder waits for the listing rather than
                // making its own.
                match self
                    .system
                    .entry_kinds(dir, ENTRIES_PER_ASK.saturating_mul(folder.asked))
                {
                    // The listing is used only if it tells the path asked
                    // about as asking it does: a folder that can be read
                    // but not searched (mode `r` without `x`) lists its
                    // files, but an `lstat` of one fails.
                    Some(entries)
                        if facts_of_entry(entries.get(name)).is_none_or(|(kind, link)| {
                            (kind, link) == self.system.kind_and_link(path)
                        }) =>
                    {
                        folder.listed = Some(entries)
                    }
                    Some(_) => {
                        folder.list_at = usize::MAX;
                        return None;
                    }
                    None => {
                        folder.list_at = folder.list_at.saturating_mul(2);
                        return None;
                    }
                }
            }
            folder.listed.as_ref()?.get(name)
        };
        let (kind, link) = facts_of_entry(kind)?;
        let canonical = (kind == PathKind::Dir)
            .then(|| self.system.canonicalize(path))
            .flatten();
        Some((kind, link, canonical))
    }

    /// The registry, locked for a change. A panic while it is held —
    /// salsa's cancellation unwinding out of creating an input on a
    /// snapshot, while the host applies a change — does not make it
    /// unusable: every section changes the registry only after the salsa
    /// call that may unwind, so a poisoned lock still guards a consistent
    /// registry.
    fn reg(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.registry
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The registry, locked for reading: most lookups (a file's
    /// [`Semantic`] input, a module's file, a path's facts already read)
    /// change nothing, and the threads that read and check modules in
    /// parallel make them by the hundred thousand, so they do not wait on
    /// each other. (Poisoning: as [`Database::reg`].)
    fn reg_read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        self.registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// [`Db::input`], with the file's bytes already read by the caller
    /// (`read`: the facts generation current before the read, and what
    /// [`read_source`] gave), used unless the generation moved since.
    fn input_read(&self, path: &Path, mut read: Option<(u64, Source)>) -> SourceFile {
        // Read without the lock (below); an overlay opened or closed, or a
        // refresh, while it read makes it read again (`facts_generation`).
        loop {
            if let Some(f) = self.try_input(path, read.take()) {
                return f;
            }
        }
    }

    /// [`Db::input`] once: the file's input, or `None` when an overlay or a
    /// refresh changed the path's facts while the file was read without the
    /// lock (the caller reads again; what this read made is left unused).
    /// `read`: as [`Database::input_read`]'s.
    fn try_input(&self, path: &Path, read: Option<(u64, Source)>) -> Option<SourceFile> {
        let (overlay, generation) = {
            let reg = self.reg_read();
            if let Some(f) = reg.by_path.get(path) {
                return Some(*f);
            }
            (reg.overlays.get(path).cloned(), reg.facts_generation)
        };
        // Read and parse without the lock: threads that preload imports
        // parse in parallel (one that loses a race drops its parse).
        let (contents, unreadable) = match (overlay, read) {
            (Some(text), _) => (Some(text), None),
            (None, Some((g, read))) if g == generation => read,
            (None, _) => read_source(&*self.system, path),
        };
        let parsed = Parsed::of(contents.as_deref(), unreadable.is_some());
        // The stdlib does not change while the compiler runs: HIGH
        // durability lets salsa skip re-verifying what depends only on it
        // after an edit. A workspace file is MEDIUM until it is edited
        // (see [`Semantic`]); an edit makes what it changed LOW.
        let durability = if self.is_stdlib_path(path) {
            salsa::Durability::HIGH
        } else {
            salsa::Durability::MEDIUM
        };
        let exists = contents.is_some();
        // The inputs are made without the registry's lock too (a thread
        // that loses a race leaves its inputs unused, and the anchor
        // numbers it took name its unused input: harmless, numbers are
        // plenty).
        let f = SourceFile::builder(
            path.to_path_buf(),
            contents,
            unreadable,
            parsed.syntax.clone(),
            exists,
            false,
        )
        .durability(durability)
        .new(self);
        let items = parsed.items.clone();
        let (anchors, table) = parsed.anchors(self, f, FileAnchors::default());
        let decls = parsed.anchor(&anchors);
        let decls: Vec<DeclInput> = decls
            .into_iter()
            .map(|d| DeclInput::builder(d).durability(durability).new(self))
            .collect();
        let sem = Semantic::builder(items, Arc::new(decls))
            .durability(durability)
            .new(self);
        // A query: computed before the lock, not while the other threads
        // wait on it.
        let key = display_path(self, f);
        let mut reg = self.reg();
        if let Some(f) = reg.by_path.get(path) {
            return Some(*f);
        }
        if reg.facts_generation != generation {
            return None;
        }
        reg.semantic.insert(f, sem);
        reg.anchor_of.insert(f, table);
        reg.by_path.insert(path, f);
        reg.by_key.entry(key).or_insert(f);
        let id = ModuleId(reg.ids.len() as u32);
        reg.ids.push(f);
        reg.id_of.insert(f, id);
        Some(f)
    }

    /// A database for the workspace rooted at `root` (made absolute), with
    /// the stdlib embedded or read from `stdlib_dir`.
    pub fn new(root: &Path, stdlib_dir: Option<PathBuf>) -> Database {
        Database::with_system(Arc::new(OsSystem), root, stdlib_dir)
    }

    /// A database reading files through `system` (relative paths are taken
    /// from its current folder).
    pub fn with_system(
        system: Arc<dyn System>,
        root: &Path,
        stdlib_dir: Option<PathBuf>,
    ) -> Database {
        Database::build(system, root, stdlib_dir, salsa::Storage::default())
    }

    /// A database like [`Database::with_system`] that records which queries
    /// run and how many results salsa re-uses, for tests that assert what
    /// an edit re-computes ([`events::EventLog`]).
    pub fn with_event_log(
        system: Arc<dyn System>,
        root: &Path,
        stdlib_dir: Option<PathBuf>,
    ) -> (Database, Arc<events::EventLog>) {
        let log = Arc::new(events::EventLog::default());
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |e: salsa::Event| sink.record(&e))));
        (Database::build(system, root, stdlib_dir, storage), log)
    }

    fn build(
        system: Arc<dyn System>,
        root: &Path,
        stdlib_dir: Option<PathBuf>,
        storage: salsa::Storage<Database>,
    ) -> Database {
        let cwd = system.current_dir();
        let root = absolute(&cwd, root);
        let mut db = Database {
            storage,
            registry: Arc::default(),
            folders: Arc::default(),
            system,
            workspace: None,
            stdlib_dir: stdlib_dir.map(|d| absolute(&cwd, &d)),
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

    /// Moves the workspace root (made absolute): imports and `file()` paths
    /// are checked against it, and display paths are relative to it.
    pub fn set_root(&mut self, root: &Path) {
        let root = self.absolute(root);
        if *self.workspace().root(self) == root {
            return;
        }
        let ws = self.workspace();
        ws.set_root(self)
            .with_durability(salsa::Durability::HIGH)
            .to(root);
        // Every display path changed: index the files by the new ones.
        let keys: Vec<(Arc<str>, SourceFile)> = self
            .files()
            .into_iter()
            .map(|f| (display_path(self, f), f))
            .collect();
        let mut reg = self.reg();
        reg.by_key.clear();
        for (k, f) in keys {
            reg.by_key.entry(k).or_insert(f);
        }
    }

    /// The workspace root.
    pub fn root(&self) -> PathBuf {
        self.workspace().root(self).clone()
    }

    /// The input for a file given on the command line (made absolute).
    pub fn open(&self, path: &Path) -> SourceFile {
        self.input(&self.absolute(path))
    }

    /// [`Database::open`] for the file a command starts from: while its
    /// text is parsed, the modules its import lines name
    /// (`import_lines`) are resolved, read and parsed on another core,
    /// which would otherwise wait for the parse (20,000 import lines take
    /// about 80 ms to parse). The lines are a hint, not the imports: the
    /// parse decides what is imported ([`Database::check`]'s preload and
    /// walk then find these modules read), and a module read for a line
    /// that is not an import is an input nothing asks about.
    pub fn open_root(&self, path: &Path) -> SourceFile {
        let path = self.absolute(path);
        let threads = cores();
        let generation = {
            let reg = self.reg_read();
            let fresh = !reg.by_path.contains_key(&path) && !reg.overlays.contains_key(&path);
            (threads >= 2 && fresh).then_some(reg.facts_generation)
        };
        let Some(generation) = generation else {
            return self.input(&path);
        };
        let read = read_source(&*self.system, &path);
        let bytes = read.0.clone().unwrap_or_else(|| Arc::from(&b""[..]));
        let lines = import_lines(&bytes);
        let folder = path.parent().unwrap_or(Path::new("/"));
        if lines.len() < PREFETCH_MIN || host::is_std(&path) {
            return self.input_read(&path, Some((generation, read)));
        }
        // One module per import line as a rule (`reserve_files` counts
        // four anchors per line: the module's declarations and the
        // root's own): the registry grows once, not while the threads
        // that read and parse in parallel wait on its lock.
        self.reg().reserve_files(lines.len());
        let parsed = AtomicBool::new(false);
        let spread = cpus::Spread::begin();
        std::thread::scope(|s| {
            let db = self.clone();
            let (lines, parsed) = (&lines, &parsed);
            // A thread that cannot start leaves the modules to the preload.
            let ahead = spread
                .spawn(s, move || db.read_ahead(folder, lines, parsed))
                .ok();
            // The preload goes on from the parse, on every core: the other
            // thread stops at its next line (also when the parse unwinds).
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            let file = {
                let _stop = Stop(parsed);
                self.input_read(&path, Some((generation, read)))
            };
            resume_panic_of(ahead);
            file
        })
    }

    /// [`Database::open_root`]'s other thread: the inputs of the modules
    /// `lines` (import paths written in a module of `folder`) name, in
    /// order, until `stop` is set; a path that does not resolve (outside
    /// the workspace) is skipped.
    fn read_ahead(&self, folder: &Path, lines: &[&str], stop: &AtomicBool) {
        let local = host::LocalResolver::of_folder(self, folder);
        for line in lines {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            if let Some(p) = local.import_path(self, line) {
                let _ = self.input(&p);
            }
        }
    }

    /// `path` made absolute (from the system's current folder) and normalized.
    pub fn absolute(&self, path: &Path) -> PathBuf {
        absolute(&self.system.current_dir(), path)
    }

    /// Whether `path` is a stdlib module: embedded (`std/NAME.env.scl`) or
    /// inside the `--stdlib` folder.
    fn is_stdlib_path(&self, path: &Path) -> bool {
        host::is_std(path)
            || self
                .stdlib_dir
                .as_deref()
                .is_some_and(|d| path.starts_with(d))
    }

    /// The file system this database reads.
    pub fn system(&self) -> &Arc<dyn System> {
        &self.system
    }

    /// Replaces a file's text (a benchmark edit). Unlike an overlay, a later
    /// [`Database::did_change_files`] of its path reads the disk again.
    pub fn set_text(&mut self, file: SourceFile, text: &str) {
        self.update_text(file, Some(Arc::from(text.as_bytes())), None);
    }

    /// Prepares `file` for editing: its inputs become LOW durability, the
    /// durability of files being edited (a workspace file starts MEDIUM;
    /// see [`Semantic`]). Salsa does not carry a result across a drop in
    /// durability, so what reads the file is computed once more now, at
    /// the next query, and from then on every edit cuts off at the first
    /// unchanged result (a declaration's value, a module's types).
    /// [`Database::set_overlay`] calls it when a buffer's text first
    /// differs from the file's; without it, the first edit that changes a
    /// declaration re-runs what reads that declaration even when its result
    /// is unchanged. Idempotent.
    pub fn will_edit(&mut self, file: SourceFile) {
        if !self.reg().edited.insert(file) {
            return;
        }
        let low = salsa::Durability::LOW;
        let contents = file.contents(self).clone();
        file.set_contents(self).with_durability(low).to(contents);
        // Whether the file exists and can be read stay MEDIUM: an edit
        // does not change them, and every module importing this one reads
        // them (`host::LocalResolver::import_target`), so after an edit salsa verifies
        // those imports in one step instead of one per import (a module
        // importing 5,000 others). When one does change
        // ([`Database::update_text`]), MEDIUM results are verified again.
        let syntax = file.syntax(self).clone();
        file.set_syntax(self).with_durability(low).to(syntax);
        file.set_text_changed(self)
            .with_durability(salsa::Durability::MEDIUM)
            .to(true);
        let sem = self.semantic(file);
        let items = sem.items(self).clone();
        sem.set_items(self).with_durability(low).to(items);
        let decls = sem.decls(self).clone();
        for d in decls.iter() {
            let v = d.decl(self).clone();
            d.set_decl(self).with_durability(low).to(v);
        }
        sem.set_decls(self).with_durability(low).to(decls);
    }

    /// Gives `file` new bytes (or none: it is gone) and unreadable
    /// message, where they differ: the bytes and their parse become LOW
    /// durability, and the [`Semantic`] input is set (LOW) only if the
    /// meaning changed.
    fn update_text(
        &mut self,
        file: SourceFile,
        contents: Option<Arc<[u8]>>,
        unreadable: Option<Arc<str>>,
    ) {
        if *file.contents(self) == contents && *file.unreadable(self) == unreadable {
            return;
        }
        let parsed = Parsed::of(contents.as_deref(), unreadable.is_some());
        let low = salsa::Durability::LOW;
        if !*file.text_changed(self) {
            // MEDIUM: what reads it (a module's types, which importers
            // read) stays as durable as the declarations.
            file.set_text_changed(self)
                .with_durability(salsa::Durability::MEDIUM)
                .to(true);
        }
        // Existence and readability keep MEDIUM durability (see
        // [`Database::will_edit`]): they rarely change, and importers read them.
        let medium = salsa::Durability::MEDIUM;
        if *file.exists(self) != contents.is_some() {
            file.set_exists(self)
                .with_durability(medium)
                .to(contents.is_some());
        }
        file.set_contents(self).with_durability(low).to(contents);
        if *file.unreadable(self) != unreadable {
            file.set_unreadable(self)
                .with_durability(medium)
                .to(unreadable);
        }
        file.set_syntax(self)
            .with_durability(low)
            .to(parsed.syntax.clone());
        let items = parsed.items.clone();
        let table = self.reg().anchor_of.remove(&file).unwrap_or_default();
        let (anchors, table) = parsed.anchors(self, file, table);
        self.reg().anchor_of.insert(file, table);
        let decls = parsed.anchor(&anchors);
        let sem = self.semantic(file);
        if **sem.items(self) != *items {
            sem.set_items(self).with_durability(low).to(items);
        }
        let old: Vec<DeclInput> = sem.decls(self).as_ref().clone();
        for (input, new) in old.iter().zip(&decls) {
            if **input.decl(self) != **new {
                input.set_decl(self).with_durability(low).to(new.clone());
            }
        }
        if old.len() != decls.len() {
            let mut handles: Vec<DeclInput> = old.iter().take(decls.len()).copied().collect();
            for d in decls.into_iter().skip(old.len()) {
                handles.push(DeclInput::builder(d).durability(low).new(self));
            }
            sem.set_decls(self)
                .with_durability(low)
                .to(Arc::new(handles));
        }
    }

    /// Opens or updates an editor buffer over `path`: until
    /// [`Database::remove_overlay`], every query sees `text` instead of the
    /// disk (the file exists, and is listed in its folder, even if it is
    /// not on disk). A buffer whose text differs from what the database
    /// holds is being edited: [`Database::will_edit`] lowers its
    /// durability first. A buffer opened with the file's own text is not
    /// (its inputs keep their durability, so checks that read it stay
    /// cheap to verify). Only opening a buffer re-reads the path's kind and
    /// its folder's listing: a change of an open buffer cannot change them.
    pub fn set_overlay(&mut self, path: &Path, text: &str) {
        let path = self.absolute(path);
        let bytes: Arc<[u8]> = Arc::from(text.as_bytes());
        let was_open = {
            let mut reg = self.reg();
            reg.facts_generation += 1;
            reg.overlays.insert(&path, bytes.clone()).is_some()
        };
        let file = self.input(&path);
        if file.contents(self).as_deref() != Some(&*bytes) {
            self.will_edit(file);
        }
        self.update_text(file, Some(bytes), None);
        if !was_open {
            self.refresh(&path);
        }
    }

    /// Closes the editor buffer over `path`: queries see the disk again.
    pub fn remove_overlay(&mut self, path: &Path) {
        let path = self.absolute(path);
        let removed = {
            let mut reg = self.reg();
            reg.facts_generation += 1;
            reg.overlays.remove(&path)
        };
        if removed.is_some() {
            self.did_change_files(&[path]);
        }
    }

    /// Tells the database that the files or folders at `paths` may have
    /// changed on disk (created, written, removed): each fact it holds about
    /// them (bytes, kind, canonical form, listing, and the listing of the
    /// folder they are in) is read again from the [`System`], and set only
    /// where it differs, so what depends on an unchanged fact is not re-run.
    /// An open overlay keeps winning over the disk.
    pub fn did_change_files(&mut self, paths: &[PathBuf]) {
        for p in paths {
            let p = self.absolute(p);
            self.refresh(&p);
        }
    }

    /// [`Database::did_change_files`] for every path the database has read
    /// (after a file watcher lost events).
    pub fn did_change_all_files(&mut self) {
        let paths: Vec<PathBuf> = {
            let reg = self.reg();
            let mut v: Vec<PathBuf> = reg
                .by_path
                .keys()
                .chain(reg.infos.keys())
                .chain(reg.listings.keys())
                .map(Path::to_path_buf)
                .collect();
            v.sort();
            v.dedup();
            v
        };
        for p in paths {
            self.refresh(&p);
        }
    }

    /// Reads the facts about `path` (and its folder's listing) again.
    fn refresh(&mut self, path: &Path) {
        let (file, info, listings, contents, facts, lists) = {
            let mut reg = self.reg();
            reg.facts_generation += 1;
            let file = reg.by_path.get(path).copied();
            let info = reg.infos.get(path).copied();
            let contents = file.map(|_| match reg.overlays.get(path) {
                Some(t) => (Some(t.clone()), None),
                None => read_source(&*self.system, path),
            });
            let facts = info.map(|_| stat(&*self.system, reg.overlays.contains_key(path), path));
            let dirs: Vec<&Path> = [Some(path), path.parent()].into_iter().flatten().collect();
            let listings: Vec<DirListing> = dirs
                .iter()
                .filter_map(|d| reg.listings.get(d).copied())
                .collect();
            let lists: Vec<Option<Arc<[DirEntry]>>> = listings
                .iter()
                .map(|l| list(&*self.system, &reg.overlays, l.path(self)))
                .collect();
            (file, info, listings, contents, facts, lists)
        };
        if let (Some(f), Some((new, unreadable))) = (file, contents) {
            self.update_text(f, new, unreadable);
        }
        if let (Some(i), Some((kind, is_link, canonical))) = (info, facts) {
            if *i.kind(self) != kind {
                i.set_kind(self).to(kind);
            }
            if *i.is_link(self) != is_link {
                i.set_is_link(self).to(is_link);
            }
            if *i.canonical(self) != canonical {
                i.set_canonical(self).to(canonical);
            }
        }
        for (l, new) in listings.into_iter().zip(lists) {
            if *l.entries(self) != new {
                l.set_entries(self).to(new);
            }
        }
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
    pub fn sources(&self) -> std::collections::HashMap<String, String> {
        let files: Vec<SourceFile> = self.reg_read().ids.clone();
        files
            .into_iter()
            .map(|f| (display_path(self, f).to_string(), self.text(f)))
            .collect()
    }

    /// Every file input made so far, in the order of their ids
    /// ([`Database::file_id`]).
    pub fn files(&self) -> Vec<SourceFile> {
        self.reg_read().ids.clone()
    }

    /// The id of a file: small, stable for the life of the database (the
    /// same number as its [`ModuleId`]).
    pub fn file_id(&self, file: SourceFile) -> scl_diag::FileId {
        scl_diag::FileId(self.module_id(file).0)
    }

    /// The file of an id given out by [`Database::file_id`].
    pub fn file_of_id(&self, id: scl_diag::FileId) -> Option<SourceFile> {
        self.reg_read().ids.get(id.0 as usize).copied()
    }

    /// The file whose display path (the file key of its diagnostics) is
    /// `key`, among the files read so far.
    pub fn file_of_key(&self, key: &str) -> Option<SourceFile> {
        self.reg_read().by_key.get(key).copied()
    }

    /// The file of a module id.
    pub fn module_file_of(&self, id: ModuleId) -> SourceFile {
        self.module_file(id)
    }

    /// All diagnostics for `file` and every module it imports (transitively),
    /// sorted by file (the root file first) and position, plus import cycles
    /// ([`check_diagnostics`], memoized: a re-check after an edit that
    /// changes no diagnostic costs salsa's verification only). The first
    /// check of a file parses the modules it reaches on every core first.
    pub fn check(&self, file: SourceFile) -> Vec<Diagnostic> {
        if self.reg().checked.insert(file) {
            // A first check cut short (a cancellation in the language
            // server) leaves `file` unmarked, so that the next check does
            // this work again on every core instead of on one thread.
            let first = FirstCheck {
                db: self,
                file,
                done: false,
            };
            let read = self.preload(file);
            timings::mark("preload");
            self.imports_on_every_core(file, &read);
            timings::mark("imports resolved");
            // Every module's imports are made: the walk only reads them.
            let pre = walk(self, file, false);
            timings::mark("walk");
            self.check_on_two_cores(file, &pre.post_order);
            first.finish();
        }
        let diagnostics = check_diagnostics(self, file).as_ref().clone();
        timings::mark("diagnostics");
        diagnostics
    }

    /// The first check of `root`, shared between two threads (when the
    /// machine has two cores and `root` reaches many modules): evaluation
    /// is a chain (a module's values need those of the modules it
    /// imports), so this thread evaluates the modules in post-order while
    /// another runs what evaluation does not need — each module's static
    /// pass — and then, in the same order, each module's diagnostics (its
    /// domain checks among them) as soon as it is evaluated (the static
    /// passes take about half as long as evaluation, so the other thread
    /// would otherwise wait); this thread then takes what is left of the
    /// modules' diagnostics from the other end. Everything is memoized:
    /// [`check_diagnostics`] finds it made. The answers are the same as on
    /// one thread. `order` is the post-order of the modules `root` reaches
    /// (the warm-up walk's: [`module_graph`]'s is the same, and the other
    /// thread makes that query first, off this thread's path).
    fn check_on_two_cores(&self, root: SourceFile, order: &[SourceFile]) {
        let threads = cores();
        if threads < 2 || order.len() < PREFETCH_MIN {
            return;
        }
        let spread = cpus::Spread::begin();
        let evaluated = trail::Trail::new(order.len());
        std::thread::scope(|s| {
            let db = self.clone();
            let evaluated = &evaluated;
            let helper = spread.spawn(s, move || {
                let _ = module_graph(&db, root);
                for f in order {
                    let _ = static_diagnostics(&db, *f);
                }
                timings::mark("helper: static passes");
                // Only modules this thread has evaluated: one that is
                // being evaluated would be waited for inside salsa, and
                // its end would wake this thread, module by module.
                for (i, f) in order.iter().enumerate() {
                    if !evaluated.wait_for(i, TRAIL_BATCH) {
                        break;
                    }
                    let _ = module_diagnostics(&db, *f);
                }
                timings::mark("helper: module diagnostics");
            });
            // A fresh handle: salsa reuses each depth's frame of the query
            // stack with its room, and clearing a frame costs its room, so
            // the module queries would each pay for the walk's large frame.
            let main = self.clone();
            {
                let _release = trail::AbandonOnDrop(evaluated);
                for (i, f) in order.iter().enumerate() {
                    if i + 1 == order.len() {
                        timings::mark("evaluation: all but the root");
                    }
                    let _ = module_values(&main, *f);
                    evaluated.finished(i + 1);
                }
            }
            timings::mark("evaluation");
            for f in order.iter().rev() {
                let _ = module_diagnostics(&main, *f);
            }
            timings::mark("module diagnostics");
            // A helper that could not start or panicked leaves its queries
            // to `check_diagnostics`, on this thread.
            if let Ok(h) = helper {
                let _ = h.join();
            }
        });
    }
}

/// The first check of a file ([`Database::check`]) under way: dropped
/// before [`FirstCheck::finish`] (the check unwound), it takes the file
/// out of the checked set again.
struct FirstCheck<'a> {
    db: &'a Database,
    file: SourceFile,
    done: bool,
}

impl FirstCheck<'_> {
    fn finish(mut self) {
        self.done = true;
    }
}

impl Drop for FirstCheck<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.db.reg().checked.remove(&self.file);
        }
    }
}

/// How many evaluated modules the thread running their diagnostics
/// behind the evaluation ([`Database::check_on_two_cores`]) is woken for
/// once it caught up.
const TRAIL_BATCH: usize = 32;

/// What [`Database::check`] returns, as a query: the diagnostics of every
/// module `file` reaches and the import cycles, one problem once, sorted
/// and capped per file.
#[salsa::tracked(returns(ref))]
pub fn check_diagnostics(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    let walk = module_graph(db, file);
    // Evaluate each module after the modules it imports, so that no
    // module's evaluation waits on another's (an import chain of any
    // length costs no stack). Modules are taken in groups
    // ([`ModuleGroup`]): this query depends on the groups, not on every
    // module, so after an edit salsa verifies a few dozen results here
    // and the modules of the groups that hold what changed.
    for group in module_groups(db, &walk.post_order) {
        group_values(db, group);
    }
    // In order: asked in another order (the group holding `file` last, or
    // last to first), a chain of imports is typed from its far end, one
    // query inside the next, and one core takes 4-14 % longer at N = 20000
    // (bench/README.md, twenty-first session).
    let mut out: Vec<Diagnostic> = Vec::new();
    for group in module_groups(db, &walk.order) {
        out.extend(group_diagnostics(db, group).iter().cloned());
    }
    out.extend(walk.cycles.iter().cloned());
    if out.is_empty() {
        return Arc::new(out);
    }
    let mut out = types::merge_static_duplicates(db, &walk.order, out);
    let root = display_path(db, file);
    let mut seen = HashSet::default();
    out.retain(|d| seen.insert((d.code, d.at.clone(), d.message.clone())));
    out.sort_by(|a, b| {
        ((*a.at.file != *root), &a.at.file, a.at.span.start, a.code).cmp(&(
            (*b.at.file != *root),
            &b.at.file,
            b.at.span.start,
            b.code,
        ))
    });
    Arc::new(cap_per_file(out))
}

/// How many modules one [`ModuleGroup`] holds.
pub(crate) const MODULE_GROUP: usize = 32;

/// `files` cut into consecutive runs of [`MODULE_GROUP`], each interned as
/// a [`ModuleGroup`] (the last run may be shorter).
pub(crate) fn module_groups<'db, 'f>(
    db: &'db dyn Db,
    files: &'f [SourceFile],
) -> impl Iterator<Item = ModuleGroup<'db>> + use<'db, 'f> {
    files
        .chunks(MODULE_GROUP)
        .map(move |c| ModuleGroup::new(db, c.to_vec()))
}

/// Consecutive modules of a check's walk (at most [`MODULE_GROUP`]):
/// what [`check_diagnostics`] depends on instead of each module.
#[salsa::interned(debug)]
pub struct ModuleGroup<'db> {
    #[returns(ref)]
    pub files: Vec<SourceFile>,
}

/// Evaluates the modules of `group`, in order (each after those it
/// imports, when the group is a run of a post-order). Its result is
/// nothing: it only orders evaluation, and never changes.
#[salsa::tracked]
fn group_values<'db>(db: &'db dyn Db, group: ModuleGroup<'db>) {
    for f in group.files(db) {
        let _ = module_values(db, *f);
    }
}

/// The diagnostics of the modules of `group` ([`module_diagnostics`]), in
/// order: unchanged (and so backdated) when none of theirs changed.
#[salsa::tracked(returns(ref))]
fn group_diagnostics<'db>(db: &'db dyn Db, group: ModuleGroup<'db>) -> Arc<Vec<Diagnostic>> {
    let mut out = Vec::new();
    for f in group.files(db) {
        out.extend(module_diagnostics(db, *f).iter().cloned());
    }
    Arc::new(out)
}

/// [`walk`] as a query: a re-check after an edit that changes no import
/// finds it ready.
#[salsa::tracked(returns(ref))]
fn module_graph(db: &dyn Db, file: SourceFile) -> Arc<Walk> {
    Arc::new(walk(db, file, true))
}

/// The modules `file` reaches through imports, without recursion: in
/// the order they are first reached (`order`, `file` first), and each
/// after all it imports (`post_order`), with an `E0103` for every import
/// that closes a cycle.
///
/// In a query (`in_query`: [`module_graph`]), the imports of the modules
/// that a module with [`PREFETCH_MIN`] or more not yet walked imports names
/// are read through [`group_imports`], so that the graph depends on one
/// query per [`MODULE_GROUP`] of them. Outside (the first check's warm-up,
/// after [`Database::imports_on_every_core`] made them), each module's
/// imports are read directly: no group is made there (what a query
/// outside any query interns is kept for good).
fn walk(db: &dyn Db, file: SourceFile, in_query: bool) -> Walk {
    let mut walk = Walk::default();
    let mut seen: HashSet<SourceFile> = HashSet::default();
    // The imports of each module of `walk.order`, for [`on_cycles`].
    let mut targets: Vec<Arc<Imports>> = Vec::new();
    // The imports of the modules a module with many imports names, read
    // through [`group_imports`] (see there) before they are entered.
    let mut grouped: HashMap<SourceFile, Arc<Imports>> = HashMap::default();
    // The path from `file` to the module being walked: each module, its
    // imports, and the next import to follow.
    let mut path: Vec<(SourceFile, Arc<Imports>, usize)> = Vec::new();
    // A module met again (also one on `path`: an import closing a cycle,
    // reported below once per strongly connected component) is not
    // entered again.
    let mut enter =
        |f: SourceFile, path: &mut Vec<(SourceFile, Arc<Imports>, usize)>, walk: &mut Walk| {
            if !seen.insert(f) {
                return;
            }
            walk.order.push(f);
            let imps = grouped.remove(&f).unwrap_or_else(|| imports(db, f).clone());
            targets.push(imps.clone());
            let todo: Vec<SourceFile> = imps
                .targets
                .iter()
                .flatten()
                .filter(|t| !seen.contains(*t))
                .copied()
                .collect();
            if in_query && todo.len() >= PREFETCH_MIN {
                for g in module_groups(db, &todo) {
                    for (t, i) in g.files(db).iter().zip(group_imports(db, g).iter()) {
                        grouped.insert(*t, i.clone());
                    }
                }
            }
            path.push((f, imps, 0));
        };
    enter(file, &mut path, &mut walk);
    while let Some((f, imps, next)) = path.last_mut() {
        let (f, decl) = (*f, *next);
        let Some(target) = imps.targets.get(decl) else {
            walk.post_order.push(f);
            path.pop();
            continue;
        };
        *next += 1;
        let Some(t) = *target else {
            continue;
        };
        enter(t, &mut path, &mut walk);
    }
    let on_cycle = on_cycles(&walk.order, &targets);
    walk.cycles = cycle_diagnostics(db, &walk.order, &on_cycle);

    walk
}

/// The [`imports`] of each module of `group`, in order: what [`walk`]
/// reads for the modules that a module with many imports names, so that
/// [`module_graph`] depends on one query per [`MODULE_GROUP`] modules
/// instead of one per module. After an edit of one module, salsa verifies
/// its group's few dozen results and the graph's few dozen groups, not
/// every module's imports (1,000 of them for the benchmark's root).
#[salsa::tracked(returns(ref))]
fn group_imports<'db>(db: &'db dyn Db, group: ModuleGroup<'db>) -> Arc<Vec<Arc<Imports>>> {
    Arc::new(
        group
            .files(db)
            .iter()
            .map(|f| imports(db, *f).clone())
            .collect(),
    )
}

/// Which modules of `order` (a walk's modules, with their imports in
/// `targets`) are on an import cycle: the members of the strongly connected
/// components with a cycle (more than one module, or one importing
/// itself; `scl_sema::graph::cyclic_components`) of the walk's own graph.
/// The same graph as [`import_cycle`]'s ([`imports`] and [`import_targets`]
/// resolve each import alike), so a module not marked here has no
/// `import_cycle`: the walk asks that query only of the few that do, and
/// so depends on one query per module fewer (a re-check after an edit
/// verifies 5,000 fewer results in a workspace of 5,000 modules).
fn on_cycles(order: &[SourceFile], targets: &[Arc<Imports>]) -> Vec<bool> {
    let n = order.len();
    let index_of: HashMap<SourceFile, usize> =
        order.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let succ = |v: usize, i: usize| -> Option<Option<usize>> {
        targets[v]
            .targets
            .get(i)
            .map(|t| t.and_then(|t| index_of.get(&t).copied()))
    };
    let mut out = vec![false; n];
    for comp in scl_sema::graph::cyclic_components(n, succ) {
        for w in comp {
            out[w] = true;
        }
    }
    out
}

/// One `E0103` for each strongly connected component of the import graph
/// among `files` ([`import_cycle`], asked only of the files `on_cycle`
/// marks: see [`on_cycles`]), whichever file the walk started from:
/// the shortest cycle through the member with the smallest display path,
/// reported at the import that leads back to it, with the other members
/// named when the component holds more than that cycle.
fn cycle_diagnostics(db: &dyn Db, files: &[SourceFile], on_cycle: &[bool]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut done: HashSet<SourceFile> = HashSet::default();
    for (&f, _) in files.iter().zip(on_cycle).filter(|(_, on)| **on) {
        if done.contains(&f) {
            continue;
        }
        let members = import_cycle(db, f);
        if members.is_empty() {
            continue;
        }
        done.extend(members.iter().copied());
        let in_scc: HashSet<SourceFile> = members.iter().copied().collect();
        let first = *members
            .iter()
            .min_by_key(|m| display_path(db, **m))
            .expect("a component has a member");
        // Breadth-first from `first` inside the component, imports in
        // declaration order: the first import found that leads back to
        // `first` closes a shortest cycle.
        let mut parent: HashMap<SourceFile, SourceFile> = HashMap::default();
        let mut queue = std::collections::VecDeque::from([first]);
        let mut closing: Option<(SourceFile, scl_diag::Span)> = None;
        'bfs: while let Some(m) = queue.pop_front() {
            let imps = imports(db, m);
            for (decl, t) in imps.targets.iter().enumerate() {
                let Some(t) = *t else { continue };
                if t == first {
                    closing = Some((m, imps.spans[decl]));
                    break 'bfs;
                }
                if in_scc.contains(&t) && t != m && !parent.contains_key(&t) {
                    parent.insert(t, m);
                    queue.push_back(t);
                }
            }
        }
        let Some((last, at)) = closing else { continue };
        let mut chain = vec![last];
        while let Some(&p) = chain.last().and_then(|c| parent.get(c)) {
            chain.push(p);
        }
        // From `first` (the root of the search: no parent) to `last`; the
        // cycle closes at `first`.
        chain.reverse();
        let names: Vec<String> = chain
            .iter()
            .chain([&first])
            .map(|m| display_path(db, *m).to_string())
            .collect();
        let mut d = Diagnostic::error("E0103", at, format!("import cycle: {}", names.join(" → ")))
            .in_file(&display_path(db, last))
            .with_help(if chain.len() == 1 {
                "a module cannot import itself: remove this import and name its declarations directly"
            } else {
                "move what both modules need into a third module that both import"
            });
        if members.len() > chain.len() {
            let mut all: Vec<String> = members
                .iter()
                .map(|m| display_path(db, *m).to_string())
                .collect();
            all.sort();
            d = d.with_note(format!(
                "{} modules import each other, directly or not: {}",
                all.len(),
                all.join(", ")
            ));
        }
        out.push(d);
    }
    out
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

/// What [`walk`] found.
#[derive(Default, Debug, PartialEq)]
struct Walk {
    order: Vec<SourceFile>,
    post_order: Vec<SourceFile>,
    cycles: Vec<Diagnostic>,
}

/// How many imports a module needs before they are parsed in parallel.
const PREFETCH_MIN: usize = 16;

impl Database {
    /// Reads and parses the modules `root` reaches, level by level, each
    /// level on every core: the threads take runs of the level's imports
    /// in turn, resolve them and read the files they name (a file's input
    /// is parsed when it is made), so that the root's thousands of imports are not
    /// resolved on one thread while the other waits. The walk that follows
    /// finds them made. Only a warm-up: it creates no input the walk would
    /// not (the same path resolution; [`Database::open_root`] may have made
    /// a few more, for lines that read like imports and are not). Returns the modules it read, level
    /// by level (without `root`; none on one core).
    fn preload(&self, root: SourceFile) -> Vec<SourceFile> {
        let mut read = Vec::new();
        let threads = cores().min(8);
        if threads < 2 {
            return read;
        }
        let mut level = vec![root];
        // The paths read so far (every thread's): each file is read and
        // parsed by the one thread that claims its path.
        let claimed: Mutex<HashSet<std::ffi::OsString>> =
            Mutex::new(std::iter::once(root.path(self).as_os_str().to_os_string()).collect());
        while !level.is_empty() {
            let outlines: Vec<(SourceFile, Arc<scl_sema::Items>)> =
                level.iter().map(|f| (*f, items(self, *f))).collect();
            // Every import of the level: the module and the path as written.
            let work: Vec<(SourceFile, &str)> = outlines
                .iter()
                .flat_map(|(f, o)| {
                    o.items
                        .iter()
                        .filter_map(|x| x.import.as_deref())
                        .map(move |p| (*f, p))
                })
                .collect();
            level = if work.len() < PREFETCH_MIN {
                resolve_and_read(self, &work, &claimed)
            } else {
                // Runs of imports taken in turn, not a share per thread:
                // the root's first imports may be read already
                // ([`Database::open_root`]), and files differ in size.
                // Shorter runs for a short level, so that every thread
                // has some.
                let run = (work.len() / (4 * threads)).clamp(1, PRELOAD_RUN);
                let next = std::sync::atomic::AtomicUsize::new(0);
                let (work, claimed, next) = (&work, &claimed, &next);
                // Each thread's share, on its own handle.
                let share = |db: Database| {
                    let mut out = Vec::new();
                    take_runs(work, run, next, |part| {
                        out.extend(resolve_and_read(&db, part, claimed))
                    });
                    out
                };
                let spread = cpus::Spread::begin();
                std::thread::scope(|s| {
                    // This thread takes a share too, instead of waiting for
                    // the others from the start: one thread fewer to start
                    // and end. A thread that cannot start leaves its share
                    // to the others.
                    let others: Vec<_> = (1..threads.min(work.len().div_ceil(run)))
                        .filter_map(|_| {
                            let db = self.clone();
                            spread.spawn(s, move || share(db)).ok()
                        })
                        .collect();
                    // A share that panicked is lost to the warm-up (the
                    // files it claimed are not preloaded further); the walk
                    // reaches them all the same.
                    let db = self.clone();
                    let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| share(db)))
                        .unwrap_or_default();
                    mine.into_iter()
                        .chain(
                            others
                                .into_iter()
                                .flat_map(|h| h.join().unwrap_or_default()),
                        )
                        .collect()
                })
            };
            read.extend_from_slice(&level);
            timings::mark("preload: a level resolved, read and parsed");
        }
        read
    }

    /// The [`imports`] of `root` and of `files` (what the preload read), on
    /// every core: this thread starts with the root's (one query, which
    /// resolves its import lines in turn: 20,000 in the benchmark's largest
    /// root) while the others take runs of `files`, which it then joins.
    /// The walk that follows finds them all made; before, it resolved the
    /// root's imports alone, with the other core waiting. On one core, or
    /// for fewer than [`PREFETCH_MIN`] modules, the walk makes them.
    fn imports_on_every_core(&self, root: SourceFile, files: &[SourceFile]) {
        let threads = cores().min(8);
        if threads < 2 || files.len() < PREFETCH_MIN {
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Each thread its own handle: salsa keeps a query frame's room, and
        // the root's frame records every import.
        let share = |db: Database, root: Option<SourceFile>| {
            if let Some(root) = root {
                let _ = imports(&db, root);
            }
            take_runs(files, PRELOAD_RUN, &next, |run| {
                for f in run {
                    let _ = imports(&db, *f);
                }
            });
        };
        let spread = cpus::Spread::begin();
        std::thread::scope(|s| {
            let share = &share;
            // A thread that cannot start leaves its runs to the others.
            let others: Vec<_> = (1..threads.min(1 + files.len().div_ceil(PRELOAD_RUN)))
                .filter_map(|_| {
                    let db = self.clone();
                    spread.spawn(s, move || share(db, None)).ok()
                })
                .collect();
            // This thread starts with the root's (and takes runs after).
            share(self.clone(), Some(root));
            for h in others {
                resume_panic_of(Some(h));
            }
        });
    }
}

/// Waits for `thread` (if it started) and, if it panicked, goes on
/// unwinding here with its own payload: a `salsa::Cancelled` stays a
/// cancellation for the caller (`Cancelled::catch`), where letting
/// `std::thread::scope` end would replace it with "a scoped thread
/// panicked".
fn resume_panic_of(thread: Option<std::thread::ScopedJoinHandle<'_, ()>>) {
    if let Some(Err(payload)) = thread.map(|h| h.join()) {
        std::panic::resume_unwind(payload);
    }
}

/// The most imports a preload thread takes at a time.
const PRELOAD_RUN: usize = 32;

/// Calls `f` on consecutive runs of `items` (each at most `run` long, `run`
/// ≥ 1) until none is left, taking each through `next`: threads sharing
/// the counter take the runs in turn, each run once.
fn take_runs<T>(
    items: &[T],
    run: usize,
    next: &std::sync::atomic::AtomicUsize,
    mut f: impl FnMut(&[T]),
) {
    loop {
        let i = next.fetch_add(run, std::sync::atomic::Ordering::Relaxed);
        match items.get(i..items.len().min(i + run)) {
            Some(part) if !part.is_empty() => f(part),
            _ => return,
        }
    }
}

/// The modules the imports `work` (a module and a path as written) name
/// that no thread has claimed yet (`claimed`, by path), read and parsed (a
/// file's input is parsed when it is made): the preload's share of one
/// thread. Paths are told apart by their bytes (resolution gives
/// normalized paths; `Path`'s own hash walks components).
fn resolve_and_read(
    db: &Database,
    work: &[(SourceFile, &str)],
    claimed: &Mutex<HashSet<std::ffi::OsString>>,
) -> Vec<SourceFile> {
    let mut out = Vec::new();
    // The resolver of the last importing module: a level's imports come
    // grouped by module (the root's thousands in a row).
    let mut local: Option<(SourceFile, host::LocalResolver)> = None;
    for (f, imp) in work {
        let resolver = match local {
            Some((g, r)) if g == *f => r,
            _ => {
                let r = host::LocalResolver::of(db, *f);
                local = Some((*f, r));
                r
            }
        };
        let Some(p) = resolver.import_path(db, imp) else {
            continue;
        };
        let p = p.into_os_string();
        let mine = claimed
            .lock()
            .map(|mut c| !c.contains(&p) && c.insert(p.clone()))
            .unwrap_or(false);
        if mine {
            out.push(db.input(Path::new(&p)));
        }
    }
    out
}

/// The paths of the lines of `text` that read `import "PATH"` (after
/// blanks; a path without `\\`, `$` or a line break), in order: what
/// [`Database::open_root`] reads ahead of the parse. A line inside a
/// multi-line string or a block that happens to read so is listed too;
/// an import written otherwise is not (the parse finds both).
fn import_lines(text: &[u8]) -> Vec<&str> {
    text.split(|&b| b == b'\n')
        .filter_map(|line| {
            let start = line.iter().position(|&b| b != b' ' && b != b'\t')?;
            let rest = line[start..].strip_prefix(b"import")?;
            let gap = rest
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            let rest = rest[gap..].strip_prefix(b"\"")?;
            let end = rest.iter().position(|&b| b == b'"')?;
            let path = &rest[..end];
            if gap == 0 || path.is_empty() || path.iter().any(|&b| b == b'\\' || b == b'$') {
                return None;
            }
            std::str::from_utf8(path).ok()
        })
        .collect()
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    normalize_path(&p)
}

/// How a file is named in diagnostics: relative to the workspace root
/// (`/` as the separator), `std/NAME.env.scl` for the stdlib, else its
/// absolute path. A query: every module's diagnostics, outline and
/// import checks ask for it, and stripping a path prefix walks its
/// components.
fn display_path(db: &dyn Db, file: SourceFile) -> Arc<str> {
    display_path_of(db, file).clone()
}

#[salsa::tracked(returns(ref))]
fn display_path_of(db: &dyn Db, file: SourceFile) -> Arc<str> {
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

/// The line index of a file's text (the lossy UTF-8 text the parser reads):
/// byte offsets ↔ lines and character or UTF-16 columns.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn Db, file: SourceFile) -> Arc<scl_diag::LineIndex> {
    let bytes = file
        .contents(db)
        .clone()
        .unwrap_or_else(|| Arc::from(&b""[..]));
    Arc::new(scl_diag::LineIndex::new(&String::from_utf8_lossy(&bytes)))
}

/// The diagnostics of a file's parse, in the file: the parser's, with the
/// problems of the bytes themselves (unreadable, too large, not UTF-8).
#[salsa::tracked(returns(ref))]
pub fn syntax_errors(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    let path = display_path(db, file);
    if let Some(why) = file.unreadable(db) {
        return Arc::new(vec![Diagnostic::error(
            "E0107",
            scl_diag::Span::new(0, 0),
            format!("the file cannot be read: {why}"),
        )
        .with_help("check that the file is readable by this user, or remove it")
        .in_file(&path)]);
    }
    let bytes = file.contents(db).as_deref().unwrap_or(b"");
    if too_large(bytes) {
        return Arc::new(vec![Diagnostic::error(
            "E0009",
            scl_diag::Span::new(0, 0),
            format!(
                "the file is larger than {} MiB, the most the compiler reads",
                MAX_FILE_BYTES >> 20
            ),
        )
        .with_help("split it into modules, or keep generated data out of `.env.scl` files")
        .in_file(&path)]);
    }
    let mut errors: Vec<Diagnostic> = file
        .syntax(db)
        .errors
        .iter()
        .map(|d| d.clone().in_file(&path))
        .collect();
    if let Err(e) = std::str::from_utf8(bytes) {
        let at = e.valid_up_to();
        errors.insert(
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
    Arc::new(errors)
}

/// The whole parse of a file, doc comments included (never fails; a
/// missing file parses as empty), with its diagnostics in the file
/// ([`syntax_errors`]): made again from the text when asked, for an
/// editor's features (outline, hover, navigation). A compile does not ask
/// for it: it reads the anchored declarations ([`Semantic`]) and, where a
/// pass needs offsets, [`module_ast`].
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: SourceFile) -> Arc<scl_syntax::Tree> {
    let text = compiled_text(file.contents(db).as_deref(), file.unreadable(db).is_some());
    Arc::new(scl_syntax::Tree {
        module: scl_syntax::parse_tree(&text).module,
        errors: syntax_errors(db, file).as_ref().clone(),
    })
}

/// The anchored declarations of a module, in order (one dependency for
/// what reads them all, instead of one per declaration: a module may
/// declare 5,000 imports).
#[salsa::tracked(returns(ref))]
pub fn module_decls(db: &dyn Db, file: SourceFile) -> Arc<ModuleDecls> {
    Arc::new(ModuleDecls(
        db.semantic(file)
            .decls(db)
            .iter()
            .map(|d| d.decl(db).clone())
            .collect(),
    ))
}

/// What [`module_decls`] returns: a module's anchored declarations (a
/// slice, through `Deref`). Compared `Arc` by `Arc`: a declaration an edit
/// left alone keeps its `Arc`, so comparing the old list with the new one
/// compares no tree but the changed declarations'.
#[derive(Debug, Default)]
pub struct ModuleDecls(pub Vec<Arc<scl_sema::AnchoredDecl>>);

impl PartialEq for ModuleDecls {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
    }
}

impl std::ops::Deref for ModuleDecls {
    type Target = [Arc<scl_sema::AnchoredDecl>];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// A module's declarations with absolute spans, made again from the
/// anchored ones and the span tables (`Decl::absolute`): what hover's
/// type table (`types::type_table`) and the placing of findings read
/// (the static pass of a compile reads the anchored declarations and
/// makes only its diagnostics absolute). Equal to the parse but for the
/// doc comments; a copy, not kept (not a query).
pub fn module_ast(db: &dyn Db, file: SourceFile) -> scl_syntax::ast::Module {
    let syntax = file.syntax(db);
    scl_syntax::ast::Module {
        decls: module_decls(db, file)
            .iter()
            .zip(&syntax.spans)
            .map(|(d, table)| d.decl.absolute(table))
            .collect(),
        recovered: syntax.recovered.clone(),
    }
}

/// The lossless table of `file`'s text (every byte in one piece; see
/// `scl_syntax::trivia`), made when asked for: only an editor's semantic
/// tokens read it, so a file's parse does not keep it. The text is the one
/// [`parse`] read (empty for a file that cannot be read or is too large).
#[salsa::tracked(returns(ref), no_eq)]
pub fn trivia(db: &dyn Db, file: SourceFile) -> Arc<scl_syntax::Trivia> {
    let text = compiled_text(file.contents(db).as_deref(), file.unreadable(db).is_some());
    Arc::new(scl_syntax::trivia::of(&text))
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

/// Whether a file exists (has contents): an input field of its own, so that
/// a module importing `file` does not depend on its text, only on its
/// existence.
pub fn file_exists(db: &dyn Db, file: SourceFile) -> bool {
    *file.exists(db)
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

/// One declaration of a module, by index: the key of the per-declaration
/// queries ([`decl_value`], [`decl_spans`]).
#[salsa::interned(debug)]
pub struct DeclId<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(copy)]
    pub index: u32,
}

/// The outline of a module: names, kinds and import paths of its
/// declarations, position-independent (from its [`Semantic`] input).
pub fn items(db: &dyn Db, file: SourceFile) -> Arc<scl_sema::Items> {
    db.semantic(file).items(db).clone()
}

/// What each declaration of a module imports (by declaration index;
/// `None` for non-imports and failed imports): the targets of [`imports`],
/// resolved from the file's [`Semantic`] outline (the import paths), so
/// that no edit of its text but one of an import path re-runs what reads
/// it. The failures are reported by [`imports`].
#[salsa::tracked(returns(ref))]
pub fn import_targets(db: &dyn Db, file: SourceFile) -> Arc<Vec<Option<SourceFile>>> {
    let local = host::LocalResolver::of(db, file);
    Arc::new(
        items(db, file)
            .items
            .iter()
            .map(|x| x.import.as_deref().and_then(|p| local.import_target(db, p)))
            .collect(),
    )
}

/// Whether `file` reaches an import cycle (is on one, or imports, directly
/// or not, a module that is): [`reaches_cycle`] as a query.
pub fn reaches_import_cycle(db: &dyn Db, file: SourceFile) -> bool {
    reaches_cycle(db, file).0
}

/// [`reaches_import_cycle`], and a number naming the revision it was
/// computed in: the greatest fixpoint of "some import target is `file`
/// itself or reaches a cycle". Salsa iterates it from `true` on a cycle
/// (every query of a salsa cycle here is a module on an import cycle, or
/// a [`group_reaches_cycle`] holding one, so the first round is the
/// answer), so it does not depend on which module
/// was asked first; on an acyclic import graph no iteration happens.
///
/// The revision is part of the value so that a result is never backdated:
/// salsa 0.28 reports a "backdate violation" (a panic in debug builds) when
/// a memo computed inside a fixpoint is later recomputed outside one with
/// an equal value but older inputs (found by `tests/differential.rs`, seeds
/// 51, 92, 158 and 178 of `explore`). Only an edit of some module's imports
/// re-runs this query (or salsa reusing the slot of a [`ModuleGroup`] made
/// here and not read for some revisions: a cost, not a change of answer);
/// [`import_cycle`], which reads it, compares by value and stops the
/// change there.
#[salsa::tracked(returns(copy), cycle_initial = reaches_cycle_initial)]
fn reaches_cycle(db: &dyn Db, file: SourceFile) -> (bool, u64) {
    let targets = import_targets(db, file);
    // A self-import is a cycle; it needs no query of its own.
    let own = targets.contains(&Some(file));
    let others: Vec<SourceFile> = targets
        .iter()
        .flatten()
        .filter(|t| **t != file)
        .copied()
        .collect();
    // Every target is read (no short-circuit), in order. Many targets are
    // read through [`group_reaches_cycle`], one query per
    // [`MODULE_GROUP`] of them: after an edit of one module, salsa
    // verifies a few dozen results here, not one per import.
    let yes = if others.len() > MODULE_GROUP {
        module_groups(db, &others).fold(false, |any, g| group_reaches_cycle(db, g).0 | any)
    } else {
        any_reaches_cycle(db, &others)
    };
    (own | yes, revision_number(db))
}

/// Whether some module of `files` reaches an import cycle, each asked in
/// order (no short-circuit: the queries a fixpoint round reads must not
/// depend on the answers).
fn any_reaches_cycle(db: &dyn Db, files: &[SourceFile]) -> bool {
    files
        .iter()
        .fold(false, |any, t| reaches_import_cycle(db, *t) | any)
}

/// Whether some module of `group` reaches an import cycle, and the
/// revision it was computed in: [`reaches_cycle`]'s fold over a run of a
/// module's many import targets. Its value carries the revision, and it
/// starts from `true` on a cycle, for [`reaches_cycle`]'s reasons (two
/// modules with the same imports share their groups, so a cycle can close
/// here).
#[salsa::tracked(returns(copy), cycle_initial = group_reaches_cycle_initial)]
fn group_reaches_cycle<'db>(db: &'db dyn Db, group: ModuleGroup<'db>) -> (bool, u64) {
    (any_reaches_cycle(db, group.files(db)), revision_number(db))
}

fn group_reaches_cycle_initial<'db>(
    db: &'db dyn Db,
    _id: salsa::Id,
    _previous: Option<&(bool, u64)>,
    _group: ModuleGroup<'db>,
) -> (bool, u64) {
    (true, revision_number(db))
}

fn reaches_cycle_initial(
    db: &dyn Db,
    _id: salsa::Id,
    _previous: Option<&(bool, u64)>,
    _file: SourceFile,
) -> (bool, u64) {
    (true, revision_number(db))
}

/// A number that differs between revisions (a hash of salsa's current
/// revision): see [`reaches_cycle`].
fn revision_number(db: &dyn Db) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    salsa::plumbing::current_revision(db).hash(&mut h);
    h.finish()
}

/// A module on the path of [`import_cycle`]'s walk: its import targets and
/// the next one to follow.
type DfsFrame = (SourceFile, Arc<Vec<Option<SourceFile>>>, usize);

/// The modules on an import cycle with `file` — its strongly connected
/// component of the import graph, `file` included, in the order the walk
/// found them — or nothing when `file`
/// is on no cycle (a module importing itself is on one). Evaluation and
/// the type checker treat an import of one of these as unresolved (its
/// names and types unknown; the cycle is `E0103`), so that no query of one
/// member waits on another's: what a member of a cycle computes is the
/// same whichever member was asked first, and no salsa cycle goes through
/// two modules.
///
/// Tarjan's algorithm from `file` (iterative), over the modules that reach
/// a cycle ([`reaches_import_cycle`]): only they can be on one. Costs
/// nothing for a module that reaches no cycle; otherwise linear in the
/// modules it reaches.
#[salsa::tracked(returns(ref))]
pub fn import_cycle(db: &dyn Db, file: SourceFile) -> Arc<Vec<SourceFile>> {
    if !reaches_import_cycle(db, file) {
        return Arc::default();
    }
    // index and lowlink of each visited module; the Tarjan stack; the DFS
    // path with each module's import targets and the next one to follow.
    let mut seen: HashMap<SourceFile, (u32, u32)> = HashMap::default();
    let mut stack: Vec<SourceFile> = Vec::new();
    let mut on_stack: HashSet<SourceFile> = HashSet::default();
    let mut path: Vec<DfsFrame> = Vec::new();
    let visit = |f: SourceFile,
                 seen: &mut HashMap<SourceFile, (u32, u32)>,
                 stack: &mut Vec<SourceFile>,
                 on_stack: &mut HashSet<SourceFile>,
                 path: &mut Vec<DfsFrame>| {
        let i = seen.len() as u32;
        seen.insert(f, (i, i));
        stack.push(f);
        on_stack.insert(f);
        path.push((f, import_targets(db, f).clone(), 0));
    };
    visit(file, &mut seen, &mut stack, &mut on_stack, &mut path);
    while let Some((f, targets, next)) = path.last_mut() {
        let f = *f;
        if let Some(t) = targets.get(*next) {
            *next += 1;
            let Some(t) = *t else { continue };
            match seen.get(&t) {
                None if reaches_import_cycle(db, t) => {
                    visit(t, &mut seen, &mut stack, &mut on_stack, &mut path);
                }
                None => {}
                Some(&(ti, _)) if on_stack.contains(&t) => {
                    let e = seen.get_mut(&f).expect("visited");
                    e.1 = e.1.min(ti);
                }
                Some(_) => {}
            }
            continue;
        }
        path.pop();
        let (fi, fl) = seen[&f];
        if let Some((parent, _, _)) = path.last() {
            let e = seen.get_mut(parent).expect("visited");
            e.1 = e.1.min(fl);
        }
        if fi == fl {
            // `f` is the root of a component: pop it.
            let mut members = Vec::new();
            while let Some(m) = stack.pop() {
                on_stack.remove(&m);
                members.push(m);
                if m == f {
                    break;
                }
            }
            if f == file {
                let on_cycle = members.len() > 1 || import_targets(db, file).contains(&Some(file));
                if !on_cycle {
                    return Arc::default();
                }
                return Arc::new(members);
            }
        }
    }
    Arc::default()
}

/// Declaration `index` of `file`, anchored (`Decl::anchored`), read from
/// its [`DeclInput`]: what reads it depends on that one declaration (and on
/// the list of the file's declarations, which changes only when one is
/// added or removed), so it re-runs only when the declaration itself
/// changed. (Not a query: the input is the firewall.)
pub fn decl_syntax(db: &dyn Db, file: SourceFile, index: usize) -> Arc<scl_sema::AnchoredDecl> {
    match db.semantic(file).decls(db).get(index) {
        Some(d) => d.decl(db).clone(),
        None => {
            // Asked for after the declaration disappeared: an empty `let`.
            let empty = scl_syntax::parse_tree("let _ = 0");
            let decl = empty.module.decls[0].clone();
            Arc::new(scl_sema::AnchoredDecl { decl })
        }
    }
}

/// Where the spans of one declaration are now (`SpanTable`): what turns
/// its anchored spans back into offsets.
#[salsa::tracked(returns(ref))]
pub fn decl_spans<'db>(db: &'db dyn Db, id: DeclId<'db>) -> Arc<scl_syntax::ast::SpanTable> {
    id.file(db)
        .syntax(db)
        .spans
        .get(id.index(db) as usize)
        .cloned()
        .unwrap_or_default()
}

/// The value of one clean declaration (see `scl_sema::Items::clean`) and
/// the diagnostics of its evaluation, spans anchored. The unit of
/// incremental evaluation: it re-runs only when its declaration's text
/// ([`decl_syntax`]: its [`DeclInput`]) or a value it read changed.
#[salsa::tracked(returns(ref), cycle_result = decl_value_cycle)]
pub fn decl_value<'db>(db: &'db dyn Db, id: DeclId<'db>) -> Arc<scl_sema::DeclOutcome> {
    let host = host::DbHost::new(db);
    let m = db.module_id(id.file(db));
    Arc::new(scl_sema::evaluate_decl(&host, m, id.index(db) as usize))
}

fn decl_value_cycle<'db>(
    _db: &'db dyn Db,
    _id: salsa::Id,
    _decl: DeclId<'db>,
) -> Arc<scl_sema::DeclOutcome> {
    Arc::new(scl_sema::DeclOutcome::default())
}

/// The declarations of a module that are on a cycle of references (or
/// reach one), evaluated together; empty when there is none.
#[salsa::tracked(returns(ref), cycle_result = cyclic_values_cycle)]
pub fn cyclic_values(db: &dyn Db, file: SourceFile) -> Arc<scl_sema::CyclicValues> {
    if items(db, file).all_clean() {
        return Arc::new(scl_sema::CyclicValues::default());
    }
    let host = host::DbHost::new(db);
    Arc::new(scl_sema::evaluate_cyclic(&host, db.module_id(file)))
}

fn cyclic_values_cycle(
    _db: &dyn Db,
    _id: salsa::Id,
    _file: SourceFile,
) -> Arc<scl_sema::CyclicValues> {
    Arc::new(scl_sema::CyclicValues::default())
}

/// A module's values (envs with their final IR) and evaluation
/// diagnostics (spans anchored), assembled from [`decl_value`] and
/// [`cyclic_values`]. On an import cycle both sides get an empty result
/// (the cycle itself is reported by [`Database::check`]).
#[salsa::tracked(returns(ref), cycle_result = module_values_cycle)]
pub fn module_values(db: &dyn Db, file: SourceFile) -> Arc<ModuleValues> {
    let host = host::DbHost::new(db);
    let outcome = |i: usize| decl_value(db, DeclId::new(db, file, i as u32)).clone();
    // A module whose declarations are all clean has none to evaluate
    // together: no query for that (the outline says so; `cyclic_values`
    // answers the same from it).
    static NONE: scl_sema::CyclicValues = scl_sema::CyclicValues {
        values: BTreeMap::new(),
        diagnostics: Vec::new(),
        spent: scl_sema::Spent {
            produced: 0,
            steps: 0,
        },
    };
    let cyclic = if items(db, file).all_clean() {
        &NONE
    } else {
        &**cyclic_values(db, file)
    };
    Arc::new(scl_sema::assemble_module(
        &host,
        db.module_id(file),
        &outcome,
        cyclic,
    ))
}

fn module_values_cycle(_db: &dyn Db, _id: salsa::Id, _file: SourceFile) -> Arc<ModuleValues> {
    Arc::new(ModuleValues::default())
}

/// The text of a file as it is (lossy UTF-8, a byte order mark kept), made
/// once per revision of its bytes: what front ends convert positions in
/// ([`Database::text`] without the copy).
#[salsa::tracked(returns(ref))]
pub fn lossy_text(db: &dyn Db, file: SourceFile) -> Arc<str> {
    Arc::from(String::from_utf8_lossy(
        file.contents(db).as_deref().unwrap_or(b""),
    ))
}

/// The text of a file as the parser reads it (lossy UTF-8, a byte order
/// mark blanked): made each time it is asked for, not kept (a compile
/// reads it once per module, in the static pass, and otherwise only to
/// quote source in an error message; the bytes are kept already).
pub fn source_text(db: &dyn Db, file: SourceFile) -> Arc<str> {
    Arc::from(reading_text(file.contents(db).as_deref().unwrap_or(b"")))
}

/// The file and declaration index an anchor names now (`None` when the
/// declaration is gone).
pub(crate) fn anchor_decl(db: &dyn Db, anchor: u32) -> Option<(SourceFile, usize)> {
    let (file, name, occurrence) = db.anchor_target(anchor)?;
    let i = items(db, file)
        .items
        .iter()
        .position(|x| *x.name == *name && x.occurrence == occurrence)?;
    Some((file, i))
}

/// `span` made absolute: an anchored span becomes the offsets it stands
/// for in its declaration as it is now (see `scl_diag::Span`); an absolute
/// one is returned as it is.
pub fn absolute_span(db: &dyn Db, span: scl_diag::Span) -> scl_diag::Span {
    if span.anchor == 0 {
        return span;
    }
    match anchor_decl(db, span.anchor) {
        Some((file, i)) => decl_spans(db, DeclId::new(db, file, i as u32)).absolute(span),
        None => scl_diag::Span::new(0, 0),
    }
}

/// Makes the anchored spans of one module's diagnostics absolute (its
/// static pass's, its evaluation's): by the module's own span tables
/// (`FileSyntax::spans`, by declaration index) for its own anchors, found
/// through a map made at the first anchored span (a module may declare
/// 20,000 names and have an error in each: no search of its outline per
/// span, as [`anchor_decl`] does); by [`absolute_span`] for another
/// module's. Reads nothing until a span is anchored.
pub(crate) struct AnchoredSpans<'a> {
    db: &'a dyn Db,
    file: SourceFile,
    /// Anchor → declaration index, made when first needed.
    index: std::cell::OnceCell<HashMap<u32, usize>>,
}

impl<'a> AnchoredSpans<'a> {
    pub(crate) fn new(db: &'a dyn Db, file: SourceFile) -> Self {
        AnchoredSpans {
            db,
            file,
            index: std::cell::OnceCell::new(),
        }
    }

    /// `s` as offsets in its file's text (an absolute span as it is).
    pub(crate) fn absolute(&self, s: scl_diag::Span) -> scl_diag::Span {
        if s.anchor == 0 {
            return s;
        }
        let index = self.index.get_or_init(|| {
            module_decls(self.db, self.file)
                .iter()
                .enumerate()
                .map(|(i, d)| (d.decl.span().anchor, i))
                .collect()
        });
        match index.get(&s.anchor) {
            Some(&i) => match self.file.syntax(self.db).spans.get(i) {
                Some(table) => table.absolute(s),
                None => scl_diag::Span::new(0, 0),
            },
            None => absolute_span(self.db, s),
        }
    }

    /// `d` with every span made absolute ([`AnchoredSpans::absolute`]):
    /// the primary span and each label's. What is rendered.
    pub(crate) fn diagnostic(&self, mut d: Diagnostic) -> Diagnostic {
        d.at.span = self.absolute(d.at.span);
        for l in &mut d.labels {
            l.at.span = self.absolute(l.at.span);
        }
        d
    }
}

/// Every diagnostic of one module: syntax, imports, static checks, evaluation.
#[salsa::tracked(returns(ref))]
pub fn module_diagnostics(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    let syntax = syntax_errors(db, file);
    let mut out: Vec<Diagnostic> = syntax.as_ref().clone();
    out.extend(imports(db, file).diagnostics.iter().cloned());
    // A semantic error on text the parser already reported is a cascade
    // (`4GB` is E0005; "memory needs a unit" on it would be noise): drop it.
    let here = display_path(db, file);
    // An unclosed delimiter (E0006) covers everything from its opener (a
    // label) to where it was closed. A declaration the parser recovered
    // (one with a syntax error of its own: a missing part, text after it)
    // is covered whole: what it would mean is unknown, so nothing is
    // said about it beyond the syntax error.
    let recovered = &file.syntax(db).recovered;
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
            .chain(recovered.iter().map(|s| (s.start, s.end.max(s.start + 1))))
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
    // Evaluation's spans are anchored to declarations; here, where the
    // module's diagnostics are put together for rendering, they become
    // absolute (this query re-runs when its file moves; evaluation does not).
    let spans = AnchoredSpans::new(db, file);
    let evaluated: Vec<Diagnostic> = module_values(db, file)
        .diagnostics
        .iter()
        .map(|d| spans.diagnostic(d.clone()))
        .collect();
    out.extend(
        evaluated
            .into_iter()
            .filter(|d| !cascade(d) && !reported(d)),
    );
    // The domain checks, on the envs that evaluated.
    out.extend(checks::domain_diagnostics(db, file).iter().cloned());
    Arc::new(out)
}

#[cfg(test)]
mod reading_tests {
    use super::reading_text;

    /// Valid UTF-8 (the `from_utf8` path) and invalid bytes (the lossy
    /// path) read as `String::from_utf8_lossy` reads them, a byte order
    /// mark blanked to three spaces either way.
    #[test]
    fn text_is_read_as_lossy_utf8_with_the_bom_blanked() {
        let cases: [&[u8]; 6] = [
            b"",
            b"env a {}\n",
            "env caf\u{e9} {}\n".as_bytes(),
            b"env a { description = \"\xff\xfe\" }\n",
            b"\xef\xbb\xbfenv a {}\n",
            b"\xef\xbb\xbfenv a { x = \"\xc3\" }\n",
        ];
        for bytes in cases {
            let mut want = String::from_utf8_lossy(bytes).into_owned();
            if want.starts_with('\u{feff}') {
                want.replace_range(0..3, "   ");
            }
            assert_eq!(reading_text(bytes), want, "{bytes:?}");
        }
        assert_eq!(reading_text(b"\xef\xbb\xbfenv"), "   env");
        assert_eq!(reading_text(b"a\xffb"), "a\u{fffd}b");
    }
}

#[cfg(test)]
mod open_root_tests {
    use super::*;

    /// A worker's panic reaches the caller with its own payload (a
    /// cancellation stays one), where the end of `std::thread::scope`
    /// would give "a scoped thread panicked"; a worker that ended well or
    /// never started changes nothing.
    #[test]
    fn a_workers_panic_keeps_its_payload() {
        struct Payload(u32);
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|s| {
                let ok = compiler_thread().spawn_scoped(s, || ()).ok();
                resume_panic_of(ok);
                resume_panic_of(None);
                let bad = compiler_thread()
                    .spawn_scoped(s, || std::panic::panic_any(Payload(7)))
                    .ok();
                resume_panic_of(bad);
            })
        });
        let payload = caught.expect_err("the worker's panic goes on");
        assert_eq!(payload.downcast_ref::<Payload>().map(|p| p.0), Some(7));
    }

    /// The import lines of a text: after blanks, `import`, blanks, then a
    /// quoted path; not a comment, not `import` glued to its path or to
    /// another word, not a path with `\\` or `$` (escapes and
    /// interpolation: the parse's business), not an unterminated one.
    #[test]
    fn import_lines_are_the_lines_that_read_as_imports() {
        let text = concat!(
            "import \"./a.env.scl\" as a\n",
            "  \timport\t\"b/c.env.scl\" as c\r\n",
            "import \"std/gpu\" as g\n",
            "// import \"./comment.env.scl\" as x\n",
            "import\"./glued.env.scl\" as x\n",
            "imports \"./word.env.scl\" as x\n",
            "import \"./esc\\\"aped.env.scl\" as x\n",
            "import \"./${x}.env.scl\" as x\n",
            "import \"./open.env.scl\n",
            "import \"\" as x\n",
            "let s = \"import \\\"./in-a-string.env.scl\\\"\"\n",
            "  import \"./last.env.scl\"",
        );
        assert_eq!(
            import_lines(text.as_bytes()),
            ["./a.env.scl", "b/c.env.scl", "std/gpu", "./last.env.scl"]
        );
        assert_eq!(
            import_lines(b"import \"\xff.env.scl\" as x\n"),
            Vec::<&str>::new()
        );
        assert_eq!(import_lines(b""), Vec::<&str>::new());
    }

    /// A root whose import lines (one of them in a `\"\"\"` string, naming a
    /// module with a syntax error that nothing imports) were read ahead —
    /// all of them, on this thread — checks as a root opened alone: same
    /// diagnostics, same IR, and nothing from the module read for a line
    /// that only looks like an import. `open_root` itself (whose other
    /// thread may read any part of the lines) gives the same too.
    #[test]
    fn modules_read_ahead_change_nothing_the_check_reports() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::write(ws.join("scl.toml"), "").unwrap();
        let mut root = String::new();
        for i in 0..40 {
            let body = if i == 7 {
                "  ports = \"eighty\"\n".to_string()
            } else {
                format!("  description = \"module {i}\"\n")
            };
            std::fs::write(
                ws.join(format!("m{i}.env.scl")),
                format!("env e{i} {{\n  base = image(\"debian:12\")\n{body}}}\n"),
            )
            .unwrap();
            root.push_str(&format!("import \"./m{i}.env.scl\" as m{i}\n"));
        }
        std::fs::write(ws.join("decoy.env.scl"), "env broken {\n  base = \n").unwrap();
        root.push_str("import \"./missing.env.scl\" as gone\n");
        root.push_str("import \"../outside.env.scl\" as out\n");
        root.push_str("let text = \"\"\"\n  import \"./decoy.env.scl\" as decoy\n  \"\"\"\n");
        root.push_str("env all {\n  services {\n");
        // All but the module with the error, so that the env has an IR.
        for i in (0..40).filter(|i| *i != 7) {
            root.push_str(&format!("    s{i} = m{i}.e{i}\n"));
        }
        root.push_str("  }\n}\n");
        let path = ws.join("main.env.scl");
        std::fs::write(&path, &root).unwrap();
        type Found = (Vec<(String, String, u32, String)>, Option<String>);
        let check = |db: &Database, f: SourceFile| -> Found {
            let diags = db
                .check(f)
                .iter()
                .map(|d| {
                    (
                        d.code.to_string(),
                        d.at.file.to_string(),
                        d.at.span.start,
                        d.message.clone(),
                    )
                })
                .collect();
            let ir = module_values(db, f)
                .final_env("all")
                .and_then(|e| e.spec.clone())
                .map(|s| s.to_canonical_json());
            (diags, ir)
        };
        crate::with_compiler_stack(|| {
            let alone = Database::new(ws, None);
            let expected = check(&alone, alone.open(&path));
            let found: Vec<(&str, &str)> = expected
                .0
                .iter()
                .map(|d| (d.0.as_str(), d.1.as_str()))
                .collect();
            assert_eq!(
                found,
                [
                    ("E0102", "main.env.scl"),
                    ("E0105", "main.env.scl"),
                    ("E0201", "m7.env.scl")
                ],
                "{:?}",
                expected.0
            );
            assert!(expected.1.is_some());

            let ahead = Database::new(ws, None);
            let lines = import_lines(root.as_bytes());
            assert_eq!(lines.len(), 43);
            ahead.read_ahead(ws, &lines, &AtomicBool::new(false));
            assert!(ahead.sources().contains_key("decoy.env.scl"));
            assert_eq!(check(&ahead, ahead.open(&path)), expected);

            // Stopped at once, it reads nothing.
            let stopped = Database::new(ws, None);
            stopped.read_ahead(ws, &lines, &AtomicBool::new(true));
            assert!(stopped.sources().is_empty());

            let opened = Database::new(ws, None);
            assert_eq!(check(&opened, opened.open_root(&path)), expected);
        });
    }
}

#[cfg(test)]
mod walk_tests {
    use super::*;

    /// The modules `f` reaches, read with [`imports`] one module at a
    /// time, recursively: first reached (pre-order) and each after all it
    /// imports (post-order).
    fn plain(
        db: &Database,
        f: SourceFile,
        seen: &mut HashSet<SourceFile>,
        order: &mut Vec<SourceFile>,
        post: &mut Vec<SourceFile>,
    ) {
        if !seen.insert(f) {
            return;
        }
        order.push(f);
        for t in imports(db, f).targets.iter().flatten() {
            plain(db, *t, seen, order, post);
        }
        post.push(f);
    }

    /// A system that panics on reading `/w/m5.env.scl` while `fail` is
    /// set: a first check that unwinds half way, as a cancelled one does.
    #[derive(Debug)]
    struct FailingRead {
        inner: MemorySystem,
        fail: AtomicBool,
    }

    impl System for FailingRead {
        fn read(&self, path: &Path, limit: usize) -> Result<Option<Vec<u8>>, String> {
            if self.fail.load(std::sync::atomic::Ordering::SeqCst)
                && path == Path::new("/w/m5.env.scl")
            {
                panic!("the first check is cut short");
            }
            self.inner.read(path, limit)
        }
        fn kind(&self, path: &Path) -> PathKind {
            self.inner.kind(path)
        }
        fn is_link(&self, path: &Path) -> bool {
            self.inner.is_link(path)
        }
        fn read_dir(&self, path: &Path) -> Option<Vec<DirEntry>> {
            self.inner.read_dir(path)
        }
        fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
            self.inner.canonicalize(path)
        }
        fn current_dir(&self) -> PathBuf {
            self.inner.current_dir()
        }
    }

    /// A first check that unwinds (a cancellation) leaves the file
    /// unchecked, so the next check is a first check again (on every
    /// core); one that ends marks it.
    #[test]
    fn a_first_check_cut_short_is_done_again() {
        let inner = MemorySystem::new();
        let mut top = String::new();
        for i in 0..2 * PREFETCH_MIN {
            inner.write(format!("/w/m{i}.env.scl"), format!("let v = {i}\n"));
            top.push_str(&format!("import \"./m{i}.env.scl\" as m{i}\n"));
        }
        inner.write("/w/top.env.scl", &top);
        inner.set_current_dir("/w");
        let fs = Arc::new(FailingRead {
            inner,
            fail: AtomicBool::new(true),
        });
        let db = Database::with_system(fs.clone(), Path::new("/w"), None);
        let f = db.open(Path::new("/w/top.env.scl"));
        let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.check(f)));
        assert!(cut.is_err());
        assert!(!db.reg().checked.contains(&f));
        fs.fail.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(db.check(f), Vec::new());
        assert!(db.reg().checked.contains(&f));
    }

    /// The walk, through groups (as `module_graph` runs it) and reading
    /// each module's imports directly (as the first check runs it), gives the plain recursive
    /// walk's orders and the same cycles, on modules with many imports:
    /// duplicates, a self-import, a missing module, two wide modules that
    /// import each other and share their targets, and modules reached both
    /// through a group and directly.
    #[test]
    fn the_grouped_walk_is_the_plain_walk() {
        let fs = Arc::new(MemorySystem::new());
        for i in 0..40 {
            let mut t = String::new();
            if i % 9 == 4 {
                t.push_str(&format!("import \"./l{}.env.scl\" as n\n", (i + 17) % 40));
            }
            if i == 5 {
                t.push_str("import \"./w2.env.scl\" as w\n");
            }
            t.push_str(&format!("let v{i} = {i}\n"));
            fs.write(format!("/w/l{i}.env.scl"), &t);
        }
        let mut w1 = String::new();
        for i in (0..40).rev().chain(0..20) {
            w1.push_str(&format!("import \"./l{i}.env.scl\" as a{i}\n"));
        }
        w1.push_str("import \"./w1.env.scl\" as me\nimport \"./nowhere.env.scl\" as x\nimport \"./w2.env.scl\" as w2\n");
        let mut w2 = String::new();
        for i in 0..40 {
            w2.push_str(&format!("import \"./l{i}.env.scl\" as b{i}\n"));
        }
        w2.push_str("import \"./w1.env.scl\" as w1\n");
        fs.write("/w/w1.env.scl", &w1);
        fs.write("/w/w2.env.scl", &w2);
        fs.write(
            "/w/top.env.scl",
            "import \"./l3.env.scl\" as l\nimport \"./w1.env.scl\" as w\n",
        );
        fs.set_current_dir("/w");
        for root in ["top", "w1", "w2", "l5"] {
            let db = Database::with_system(fs.clone(), Path::new("/w"), None);
            let f = db.open(Path::new(&format!("/w/{root}.env.scl")));
            let grouped = walk(&db, f, true);
            let direct = walk(&db, f, false);
            let (mut seen, mut order, mut post) = Default::default();
            plain(&db, f, &mut seen, &mut order, &mut post);
            assert!(order.len() > 40, "{root}: {}", order.len());
            for w in [&grouped, &direct] {
                assert_eq!(w.order, order, "{root}");
                assert_eq!(w.post_order, post, "{root}");
            }
            assert_eq!(grouped.cycles, direct.cycles, "{root}");
            assert!(!grouped.cycles.is_empty(), "{root}");
        }
    }
}
