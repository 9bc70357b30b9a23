//! `--set` flags: parsing, alias resolution, duplicates.

use crate::CMDLINE;
use scl_db::{Database, SourceFile};
use scl_diag::Diagnostic;
use scl_sema::Override;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// The declaration index of the import of `root` named `alias`.
fn import_named(db: &Database, root: SourceFile, alias: &str) -> Option<usize> {
    scl_db::module_decls(db, root)
        .iter()
        .position(|d| matches!(&d.decl, scl_syntax::ast::Decl::Import(i) if i.alias.name == alias))
}

/// Whether the `--set` flag `flag` is addressed to `root`: `NAME=VALUE`
/// when `root` declares a parameter `NAME`, `ALIAS.NAME=VALUE` when it
/// imports a module as `ALIAS` (as [`parse`] reads them). A malformed flag
/// (no `=`) is addressed to every file, so that it is reported.
pub(crate) fn addressed_to(db: &Database, root: SourceFile, flag: &str) -> bool {
    let Some((key, _)) = flag.split_once('=') else {
        return true;
    };
    match key.trim().split_once('.') {
        None => scl_db::module_decls(db, root).iter().any(
            |d| matches!(&d.decl, scl_syntax::ast::Decl::Param(p) if p.name.name == key.trim()),
        ),
        Some((alias, _)) => import_named(db, root, alias).is_some(),
    }
}

/// Parses `--set` flags into overrides for the root file's modules.
/// Returns the command-line pseudo-source and the overrides, or diagnostics:
/// a malformed flag or an unknown alias (E0312), and a parameter set twice
/// (E0319) — also through two aliases of one module — where the first flag
/// does not silently win.
pub(crate) fn parse(
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
                let imps = scl_db::imports(db, root);
                match import_named(db, root, alias).and_then(|i| imps.targets[i]) {
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
