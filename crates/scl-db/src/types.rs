//! The static type checker as queries: [`typed_module`] checks one module
//! (the static pass: names and types; [`type_table`] keeps hover's table)
//! and [`module_types`] keeps only the
//! types of its declarations, which is what the modules importing it read.
//! `module_types` compares by value, so an edit that changes no
//! declaration's type (a comment, a body) re-checks no importer.

use crate::{display_path, Db, SourceFile, STDLIB, STD_PREFIX};
use scl_sema::typeck::{ImportTypes, ModuleTypes, TypeTable};
use scl_sema::{KnownModule, StaticInputs};
use std::sync::{Arc, OnceLock};

/// What the static pass over one module keeps: its diagnostics (files
/// set) and the declarations' types (what importers read). The type of
/// every expression (hover's table) is not kept here: [`type_table`] makes
/// it again when an editor asks, so a compile holds no table.
#[derive(Debug, PartialEq, Default)]
pub struct StaticPass {
    pub diagnostics: Vec<scl_diag::Diagnostic>,
    pub signatures: Arc<ModuleTypes>,
}

/// The static pass over one module, with its imports' declaration types
/// ([`StaticPass`]).
///
/// It reads the declarations where the database keeps them (anchored:
/// [`crate::module_decls`]), without a copy with absolute spans, and makes
/// only its diagnostics' spans absolute: at N = 20000 modules the copy
/// ([`crate::module_ast`]) was a quarter of the static pass's time.
#[salsa::tracked(returns(ref), cycle_result = typed_cycle)]
pub fn typed_module(db: &dyn Db, file: SourceFile) -> Arc<StaticPass> {
    let decls = crate::module_decls(db, file);
    let text = crate::source_text(db, file);
    let path = display_path(db, file);
    let spans = crate::AnchoredSpans::new(db, file);
    let items = db.semantic(file).items(db);
    let list = scl_sema::typeck::Declarations {
        list: decls.iter().map(|d| &d.decl).collect(),
        recovered: (0..decls.len())
            .map(|i| items.items.get(i).is_some_and(|x| x.recovered))
            .collect(),
    };
    let absolute = |s: scl_diag::Span| spans.absolute(s);
    let typed = scl_sema::check_declarations(
        &list,
        &StaticInputs {
            text: &text,
            imports: &DbImports::new(db, file),
            known_modules: known_modules(),
            absolute: Some(&absolute),
        },
    );
    let diagnostics = typed
        .diagnostics
        .into_iter()
        .map(|d| spans.diagnostic(d).in_file(&path))
        .collect();
    let mut signatures = typed.signatures;
    signatures.path = path.to_string();
    Arc::new(StaticPass {
        diagnostics,
        signatures: Arc::new(signatures),
    })
}

/// The type of every expression of `file` (`TypeTable::type_at`, for
/// hover): the type checker run again on the declarations with absolute
/// spans ([`crate::module_ast`]), its table kept.
#[salsa::tracked(returns(ref), no_eq)]
pub fn type_table(db: &dyn Db, file: SourceFile) -> Arc<TypeTable> {
    let module = crate::module_ast(db, file);
    let text = crate::source_text(db, file);
    let typed = scl_sema::typeck::type_module(
        &module,
        &scl_sema::typeck::Context {
            text: &text,
            imports: &DbImports::new(db, file),
            absolute: None,
        },
    );
    Arc::new(typed.types)
}

fn typed_cycle(_db: &dyn Db, _id: salsa::Id, _file: SourceFile) -> Arc<StaticPass> {
    Arc::new(StaticPass::default())
}

/// The types of a module's declarations (what an importer sees), from its
/// [`crate::Semantic`] input (the anchored declarations: no positions), so
/// that an edit of the module's comments or layout re-checks no importer,
/// and an edit that changes no declaration's type re-checks none either
/// (compared by value). A declaration with a syntax error of its own has
/// type `Error`, as in [`typed_module`].
#[salsa::tracked(returns(ref), cycle_result = types_cycle)]
pub fn module_types(db: &dyn Db, file: SourceFile) -> Arc<ModuleTypes> {
    // A file whose text never changed: its text is as durable as its
    // declarations, and the static pass has typed them already (the same
    // types: the checker reads no position). Once its text changes, the
    // anchored declarations are typed here, so that moving text re-checks
    // no importer. (`text_changed` is an input field: salsa sees the switch.)
    if !*file.text_changed(db) {
        return typed_module(db, file).signatures.clone();
    }
    let sem = db.semantic(file);
    let module = scl_syntax::ast::Module {
        decls: crate::module_decls(db, file)
            .iter()
            .map(|d| d.decl.clone())
            .collect(),
        recovered: Vec::new(),
    };
    let typed = scl_sema::typeck::type_module(
        &module,
        &scl_sema::typeck::Context {
            text: "",
            imports: &DbImports::new(db, file),
            absolute: None,
        },
    );
    let mut sig = typed.signatures;
    for x in sem.items(db).items.iter().filter(|x| x.recovered) {
        if let Some(t) = sig.decls.get_mut(x.name.as_str()) {
            *t = scl_sema::typeck::Type::Error;
        }
    }
    sig.path = display_path(db, file).to_string();
    Arc::new(sig)
}

fn types_cycle(_db: &dyn Db, _id: salsa::Id, _file: SourceFile) -> Arc<ModuleTypes> {
    Arc::new(ModuleTypes::default())
}

struct DbImports<'a> {
    db: &'a dyn Db,
    file: SourceFile,
    /// `import_cycle(file)`, fetched once (a module may import 1,000).
    cycle: OnceLock<Arc<Vec<SourceFile>>>,
    /// For a module with at least [`GROUPED_IMPORTS`] imports: where each
    /// import's types are read in [`group_types`].
    grouped: OnceLock<Option<Grouped<'a>>>,
}

/// A module needs this many imports before their types are read in groups.
const GROUPED_IMPORTS: usize = 64;

/// The imports of one module cut into [`crate::ModuleGroup`]s of
/// consecutive targets (module-group-sized, cycle members left out): the
/// keys of [`group_types`].
struct Grouped<'a> {
    groups: Vec<crate::ModuleGroup<'a>>,
    /// By declaration index: the group and the position in it.
    slot: Vec<Option<(u32, u32)>>,
}

impl<'a> DbImports<'a> {
    fn new(db: &'a dyn Db, file: SourceFile) -> DbImports<'a> {
        DbImports {
            db,
            file,
            cycle: OnceLock::new(),
            grouped: OnceLock::new(),
        }
    }

    fn cycle(&self) -> &Arc<Vec<SourceFile>> {
        self.cycle
            .get_or_init(|| crate::import_cycle(self.db, self.file).clone())
    }

    /// The groups of this module's imports, when it has many.
    fn grouped(&self) -> Option<&Grouped<'a>> {
        self.grouped
            .get_or_init(|| {
                let targets = crate::import_targets(self.db, self.file);
                if targets.iter().flatten().count() < GROUPED_IMPORTS {
                    return None;
                }
                let cycle = self.cycle();
                let mut slot = vec![None; targets.len()];
                let mut files = Vec::new();
                for (decl, t) in targets.iter().enumerate() {
                    let Some(t) = *t else { continue };
                    if cycle.contains(&t) {
                        continue;
                    }
                    let i = files.len();
                    slot[decl] = Some((
                        (i / crate::MODULE_GROUP) as u32,
                        (i % crate::MODULE_GROUP) as u32,
                    ));
                    files.push(t);
                }
                let groups = crate::module_groups(self.db, &files).collect();
                Some(Grouped { groups, slot })
            })
            .as_ref()
    }
}

/// The declaration types ([`module_types`]) of each module of `group`, in
/// order: what a module importing many others reads instead of each
/// one's types, so that it depends on a few dozen results, and after an
/// edit of one of its imports salsa verifies those and the one group that
/// holds the edited module (not 5,000 modules' types).
#[salsa::tracked(returns(ref))]
fn group_types<'db>(db: &'db dyn Db, group: crate::ModuleGroup<'db>) -> Arc<Vec<Arc<ModuleTypes>>> {
    Arc::new(
        group
            .files(db)
            .iter()
            .map(|f| module_types(db, *f).clone())
            .collect(),
    )
}

impl ImportTypes for DbImports<'_> {
    fn import_types(&self, decl: usize) -> Option<Arc<ModuleTypes>> {
        let target = (*crate::import_targets(self.db, self.file).get(decl)?)?;
        // A module on an import cycle with this one: its types are unknown
        // here (see `import_cycle`; the cycle is reported by the check).
        if self.cycle().contains(&target) {
            return None;
        }
        let t = match self.grouped() {
            Some(g) => {
                let (k, i) = g.slot.get(decl).copied().flatten()?;
                group_types(self.db, g.groups[k as usize])[i as usize].clone()
            }
            None => module_types(self.db, target).clone(),
        };
        // The placeholder of a module on an import cycle (no path, no
        // declarations): its types are unknown, not empty (the cycle is
        // reported by the check; nothing is said about its names).
        if t.path.is_empty() {
            return None;
        }
        Some(t)
    }
}

/// The stdlib modules an unknown alias may mean: each module by its name,
/// by each `-`-separated part of it (`s3` for `s3-data`), and by the alias
/// its header documents (`import "std/pytorch-cuda" as torch`).
/// Workspace files are not listed yet: that needs the folder listing as a
/// salsa input.
pub fn known_modules() -> &'static [KnownModule] {
    static KNOWN: OnceLock<Vec<KnownModule>> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let mut out: Vec<KnownModule> = Vec::new();
        let mut add = |alias: &str, name: &str| {
            if !alias.is_empty() && !out.iter().any(|m| m.alias == alias) {
                out.push(KnownModule {
                    alias: alias.to_string(),
                    path: format!("{STD_PREFIX}{name}"),
                });
            }
        };
        for (name, src) in STDLIB {
            let written = format!("import \"{STD_PREFIX}{name}\" as ");
            for line in src.lines() {
                if let Some(rest) = line.find(&written).map(|i| &line[i + written.len()..]) {
                    let alias: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    add(&alias, name);
                }
            }
            add(&name.replace('-', "_"), name);
            for part in name.split('-') {
                add(part, name);
            }
        }
        out
    })
}

/// One problem, one diagnostic, across modules: evaluation meets an error
/// in an imported module's function or template body that the static pass
/// of that module already reported (same code, file and start). The static
/// diagnostic is kept (it quotes what was written) and takes the
/// evaluation's labels (the call site in the importer); the other is
/// dropped. `files` are the modules whose diagnostics `diags` holds.
pub(crate) fn merge_static_duplicates(
    db: &dyn Db,
    files: &[SourceFile],
    diags: Vec<scl_diag::Diagnostic>,
) -> Vec<scl_diag::Diagnostic> {
    use std::collections::HashMap;
    let mut statics: HashMap<(&str, Arc<str>, u32), &str> = HashMap::new();
    let lists: Vec<&Arc<Vec<scl_diag::Diagnostic>>> = files
        .iter()
        .map(|f| crate::static_diagnostics(db, *f))
        .collect();
    for d in lists.iter().flat_map(|l| l.iter()) {
        statics
            .entry((d.code, d.at.file.clone(), d.at.span.start))
            .or_insert(d.message.as_str());
    }
    // Where each static diagnostic is in `diags`, and the labels to add.
    let mut kept: HashMap<(&str, Arc<str>, u32), usize> = HashMap::new();
    let mut extra: Vec<(usize, Vec<scl_diag::Label>)> = Vec::new();
    let mut drop = vec![false; diags.len()];
    for (i, d) in diags.iter().enumerate() {
        let key = (d.code, d.at.file.clone(), d.at.span.start);
        if statics.get(&key) == Some(&d.message.as_str()) {
            kept.entry(key).or_insert(i);
        }
    }
    for (i, d) in diags.iter().enumerate() {
        let key = (d.code, d.at.file.clone(), d.at.span.start);
        match (statics.get(&key), kept.get(&key)) {
            (Some(m), Some(&k)) if *m != d.message.as_str() && k != i => {
                extra.push((k, d.labels.clone()));
                drop[i] = true;
            }
            _ => {
                // Evaluation reports a problem met inside another module's
                // code at the use (primary) with the line inside that
                // module as a label. When the static pass found the same
                // problem at that line, it is a mistake in that module,
                // whatever the arguments: one diagnostic there, with the
                // use as a label.
                let inner = d.labels.iter().find_map(|l| {
                    let key = (d.code, l.at.file.clone(), l.at.span.start);
                    kept.get(&key).copied().filter(|&k| k != i)
                });
                if let Some(k) = inner {
                    extra.push((
                        k,
                        vec![scl_diag::Label {
                            at: d.at.clone(),
                            message: "used here".into(),
                        }],
                    ));
                    drop[i] = true;
                }
            }
        }
    }
    let mut diags = diags;
    for (k, labels) in extra {
        for l in labels {
            if !diags[k].labels.contains(&l) {
                diags[k].labels.push(l);
            }
        }
    }
    diags
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(d, _)| d)
        .collect()
}
