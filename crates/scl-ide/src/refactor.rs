//! Changes an editor makes to the source: rename and code actions; and the
//! provenance chain a hover shows for an inherited field.

use crate::nav::{self, NavTarget};
use crate::{Analysis, Diagnostic, FileId, Span, TextEdit};
use scl_db::Db;
use scl_ir::FieldPath;
use scl_sema::value::{Layer, Origin, Value};
use scl_syntax::ast::{Block, Decl, ItemKind};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A change offered at a place: a fix of a diagnostic or a refactor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeAction {
    /// What the editor shows (`Replace `memry` with `memory``).
    pub title: String,
    pub kind: ActionKind,
    /// The edits, sorted (one file or several).
    pub edits: Vec<TextEdit>,
    /// The code and span of the diagnostic it fixes.
    pub fixes: Option<(&'static str, Span)>,
    /// The one fix to apply without asking (LSP `isPreferred`): set when it
    /// is the only fix offered for its diagnostic.
    pub preferred: bool,
}

/// LSP's `CodeActionKind`: `quickfix` or `refactor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    QuickFix,
    Refactor,
}

/// One layer of the provenance chain of a field ([`crate::Hover::chain`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainLink {
    /// The layer (env) that set it: `train`, `base.python_env`,
    /// `runtime(torch = "2.1.2")`, as `sclc ir --provenance` names it.
    pub env: String,
    /// The item that set it (its whole span), in the layer's module.
    pub at: NavTarget,
    /// What that layer set, as SCL source (the value after the layer for an
    /// env evaluated on its own; the item's source text for a template
    /// layer), clipped to about 200 bytes.
    pub value: Option<String>,
    /// The item extends the value of the next link (`+=`, `-=`) rather
    /// than replacing it.
    pub extends: bool,
}

/// The most links of a chain (a longer `extends` chain is cut).
const MAX_LINKS: usize = 64;
/// Values are clipped to this many bytes (as `Value`'s `Display`).
const SHOWN: usize = 200;

fn clip(s: &str) -> String {
    if s.len() <= SHOWN {
        return s.to_string();
    }
    let mut i = SHOWN;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    format!("{}…", &s[..i])
}

fn field_path(path: &[String]) -> FieldPath {
    let mut p = FieldPath::root();
    for s in path {
        p = p.key(s);
    }
    p
}

fn value_at(record: &scl_sema::value::Record, path: &[String]) -> Option<String> {
    let (first, rest) = path.split_first()?;
    let mut v = record.get(first.as_str())?;
    for s in rest {
        match v {
            Value::Record(r) => v = r.get(s.as_str())?,
            _ => return None,
        }
    }
    Some(v.to_string())
}

/// The value of env `env` of `file` at `path` and the chain of layers that
/// set it: the winning writer first, then the writer it replaced, and so
/// on. Built from the env's provenance (`Origins`), following `replaced`
/// through the linearization: a replaced layer that is a plain env is
/// evaluated on its own (its own provenance says what it replaced); a
/// template layer is found by its items (which item sets `path`), and the
/// layers before it are searched for the next writer.
pub(crate) fn chain(
    a: &Analysis,
    file: FileId,
    env: &str,
    path: &[String],
) -> (Option<String>, Vec<ChainLink>) {
    let values = a.values(file).clone();
    let Some(Value::Env(ev)) = values.values.get(env) else {
        return (None, Vec::new());
    };
    let Some(fin) = ev.final_env.clone() else {
        return (None, Vec::new());
    };
    let value = value_at(&fin.record, path);
    let fp = field_path(path);
    let mut out = Vec::new();
    let Some(o) = fin.origins.nearest(&fp).cloned() else {
        return (value, out);
    };
    let mut layers = ev.layers.to_vec();
    let mut cur = o;
    let mut cur_value = value.clone();
    loop {
        out.push(ChainLink {
            env: cur.layer.to_string(),
            at: NavTarget {
                file: FileId(cur.module.0),
                span: scl_db::absolute_span(a.db(), cur.span),
            },
            value: cur_value.take(),
            extends: false,
        });
        if out.len() >= MAX_LINKS {
            break;
        }
        let upto = cur.position.min(layers.len());
        // An append (`+=`, `-=`) keeps what the layers below gave: the chain
        // goes on to the layer below it, as for a value it replaced.
        let replaced = match cur.replaced.clone() {
            Some(r) => r,
            None if upto > 0 && appends(a, out.last().map(|l| l.at)) => {
                if let Some(l) = out.last_mut() {
                    l.extends = true;
                }
                layers[upto - 1].name.clone()
            }
            None => break,
        };
        let Some(i) = layers[..upto].iter().rposition(|l| l.name == replaced) else {
            break;
        };
        // From layer `i` down: the next writer.
        match next_writer(a, &layers, i, upto, path, &fp, &mut out) {
            Some((o, lin, v)) => {
                cur = o;
                layers = lin;
                cur_value = v;
            }
            None => break,
        }
        if out.len() >= MAX_LINKS {
            break;
        }
    }
    (value, out)
}

/// Whether the item at `at` changes its field with `+=` or `-=` (its first
/// operator outside brackets and strings, on its line).
fn appends(a: &Analysis, at: Option<NavTarget>) -> bool {
    let Some(at) = at else { return false };
    let text = a.text(at.file);
    let Some(rest) = text.get(at.span.start as usize..) else {
        return false;
    };
    let line = rest.split('\n').next().unwrap_or("");
    match line.find('=') {
        Some(i) if i > 0 => matches!(line.as_bytes()[i - 1], b'+' | b'-'),
        _ => false,
    }
}

/// The origin of `fp` written by layer `layers[i]`, with the linearization
/// and value of a plain env that saw that layer win: `layers[i]` itself, or
/// (for a template layer) a plain env of `layers[i..upto]` whose own
/// provenance names it. Else the first of `layers[..=i]` (from `i` down)
/// that sets it: a plain env by its own evaluation; a template layer that
/// sets it is pushed to `out` as a link found from its items (its source
/// text as the value), and the search goes on below it.
#[allow(clippy::type_complexity)]
fn next_writer(
    a: &Analysis,
    layers: &[Arc<Layer>],
    i: usize,
    upto: usize,
    path: &[String],
    fp: &FieldPath,
    out: &mut Vec<ChainLink>,
) -> Option<(Origin, Vec<Arc<Layer>>, Option<String>)> {
    let wanted = &layers[i].name;
    for l in &layers[i..upto] {
        let Some(name) = plain_env(a, l) else {
            continue;
        };
        let vals = a.values(FileId(l.id.module.0)).clone();
        if let Some(Value::Env(ev)) = vals.values.get(&name) {
            if let Some(fin) = &ev.final_env {
                if let Some(o) = fin.origins.nearest(fp).filter(|o| o.layer == *wanted) {
                    return Some((o.clone(), ev.layers.to_vec(), value_at(&fin.record, path)));
                }
            }
        }
    }
    for j in (0..=i).rev() {
        let l = &layers[j];
        let lf = FileId(l.id.module.0);
        if let Some(name) = plain_env(a, l) {
            let vals = a.values(lf).clone();
            if let Some(Value::Env(ev)) = vals.values.get(&name) {
                if let Some(fin) = &ev.final_env {
                    let o = fin.origins.nearest(fp)?.clone();
                    return Some((o, ev.layers.to_vec(), value_at(&fin.record, path)));
                }
            }
            // An env that failed: found by its items, as a template.
        }
        if let Some((item, value)) = item_setting(&l.block, path) {
            let text = a.text(lf);
            out.push(ChainLink {
                env: l.name.to_string(),
                at: NavTarget {
                    file: lf,
                    span: scl_db::absolute_span(a.db(), item),
                },
                value: text
                    .get(scl_db::absolute_span(a.db(), value).range())
                    .map(clip),
                extends: false,
            });
            if out.len() >= MAX_LINKS {
                return None;
            }
        }
    }
    None
}

/// The name of the plain env (not a template) a layer is.
fn plain_env(a: &Analysis, l: &Layer) -> Option<String> {
    let d = l.id.decl?;
    if !l.id.args.is_empty() {
        return None;
    }
    let m = &a.parse(FileId(l.id.module.0)).module;
    match m.decls.get(d)? {
        Decl::Env(e) if e.params.is_none() => Some(e.name.name.to_string()),
        _ => None,
    }
}

/// The last item of `b` (anchored spans) that assigns exactly `path`
/// (through `PATH { … }` blocks and `if` blocks): its span and its value's.
fn item_setting(b: &Block, path: &[String]) -> Option<(Span, Span)> {
    let mut found = None;
    for it in b.items.iter() {
        match &it.kind {
            ItemKind::Assign { path: p, value, .. } => {
                let segs: Vec<&str> = p.segments.iter().map(|s| s.name.as_str()).collect();
                if segs.iter().copied().eq(path.iter().map(|s| s.as_str())) {
                    found = Some((it.span, value.span));
                }
            }
            ItemKind::Nested { path: p, body } => {
                let n = p.segments.len();
                if path.len() > n && p.segments.iter().zip(path).all(|(s, x)| s.name == *x) {
                    if let Some(f) = item_setting(body, &path[n..]) {
                        found = Some(f);
                    }
                }
            }
            ItemKind::If {
                then_block,
                else_block,
                ..
            } => {
                for blk in std::iter::once(then_block).chain(else_block.as_ref()) {
                    if let Some(f) = item_setting(blk, path) {
                        found = Some(f);
                    }
                }
            }
            ItemKind::Error => {}
        }
    }
    found
}

// ---------------------------------------------------------------------
// Code actions

/// The text `did you mean `X`?` suggests, if the help is one.
fn suggestion(help: &str) -> Option<&str> {
    let rest = help.strip_prefix("did you mean `")?;
    let end = rest.find('`')?;
    Some(&rest[..end]).filter(|s| !s.is_empty())
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where a did-you-mean's suggestion `x` goes in the diagnostic's span:
/// the whole span when it is one name (a leading `.` of an enum variant
/// kept or added as the suggestion has it); in a string (an import path)
/// its contents, or only its last path component when `x` has no `/`;
/// else the first whole-word occurrence in the span of a name the message
/// quotes (a record literal's unknown key).
fn did_you_mean_edit(d: &Diagnostic, text: &str) -> Option<(Span, String)> {
    let x = suggestion(d.help.as_deref()?)?;
    let span = d.at.span;
    let t = text.get(span.range())?;
    if t.is_empty() {
        return None;
    }
    let word = |s: &str| !s.is_empty() && s.bytes().all(is_word_byte);
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        let inner = Span::new(span.start as usize + 1, span.end as usize - 1);
        let content = &t[1..t.len() - 1];
        if x.contains('/') {
            return Some((inner, x.to_string()));
        }
        let cut = content.rfind('/').map_or(0, |i| i + 1);
        return Some((
            Span::new(inner.start as usize + cut, inner.end as usize),
            x.to_string(),
        ));
    }
    if let Some(v) = t.strip_prefix('.').filter(|v| word(v)) {
        let _ = v;
        return Some(match x.strip_prefix('.') {
            Some(_) => (span, x.to_string()),
            None => (
                Span::new(span.start as usize + 1, span.end as usize),
                x.to_string(),
            ),
        });
    }
    let x = x.strip_prefix('.').unwrap_or(x);
    if word(t) {
        return Some((span, x.to_string()));
    }
    // A name the message quotes, found in the span (last quoted first).
    let quoted: Vec<&str> = d.message.split('`').skip(1).step_by(2).collect();
    for q in quoted.iter().rev() {
        let q = q.strip_prefix('.').unwrap_or(q);
        if !word(q) {
            continue;
        }
        let b = t.as_bytes();
        let mut from = 0;
        while let Some(i) = t[from..].find(q) {
            let s = from + i;
            let e = s + q.len();
            if (s == 0 || !is_word_byte(b[s - 1])) && (e == b.len() || !is_word_byte(b[e])) {
                return Some((
                    Span::new(span.start as usize + s, span.start as usize + e),
                    x.to_string(),
                ));
            }
            from = e;
        }
    }
    None
}

/// A number literal (`3.10`, `12`, `-1.5`, `1_000`).
fn number_literal(t: &str) -> bool {
    let body = t.strip_prefix('-').unwrap_or(t);
    body.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
}

/// The path to write in an import of `to` from a file in `from_dir`:
/// `./x.env.scl`, `../lib/x.env.scl`.
fn relative(from_dir: &Path, to: &Path) -> Option<String> {
    let a: Vec<Component> = from_dir.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    let s = out.to_str()?.replace('\\', "/");
    Some(if s.starts_with("..") {
        s
    } else {
        format!("./{s}")
    })
}

impl Analysis {
    fn stdlib_declares(&self, module: &str, name: &str) -> bool {
        let text: Option<String> = match self.db().stdlib_dir() {
            Some(dir) => Some(
                self.text(self.file(&dir.join(format!("{module}.env.scl"))))
                    .to_string(),
            ),
            None => scl_db::STDLIB
                .iter()
                .find(|(n, _)| *n == module)
                .map(|(_, t)| t.to_string()),
        };
        text.is_some_and(|t| {
            scl_syntax::parse(&t)
                .module
                .decls
                .iter()
                .any(|d| d.name().name == name)
        })
    }

    /// The imports that would declare `alias` so that `alias.member`
    /// resolves: a stdlib module or a workspace `.env.scl` file whose name
    /// fits `alias` ([`alias_fits`]) and which declares `member`; as the
    /// path to write.
    fn import_candidates(&self, file: FileId, alias: &str, member: &str) -> Vec<String> {
        let mut out = Vec::new();
        for n in self.stdlib_modules() {
            if alias_fits(&n, alias) && self.stdlib_declares(&n, member) {
                out.push(format!("std/{n}"));
            }
        }
        let here = self.path(file);
        let Some(dir) = here.parent() else {
            return out;
        };
        for f in self.workspace_files() {
            let p = self.path(f);
            if f == file {
                continue;
            }
            let Some(stem) = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".env.scl"))
            else {
                continue;
            };
            if !alias_fits(stem, alias)
                || !self
                    .parse(f)
                    .module
                    .decls
                    .iter()
                    .any(|d| d.name().name == member)
            {
                continue;
            }
            if let Some(r) = relative(dir, &p) {
                out.push(r);
            }
        }
        out
    }

    /// The span of the name at `offset` if it can be renamed: a `param`,
    /// `let`, `env` (or template), `fn`, `enum` or `import` alias
    /// declaration or a use of one (also `alias.name` in an importing
    /// module), or a local binder (a function's or template's parameter, a
    /// comprehension variable). `Err(reason)` otherwise: "a schema field
    /// cannot be renamed", "a stdlib declaration cannot be renamed", "an
    /// import path cannot be renamed", "`image` is a builtin and cannot be
    /// renamed", "nothing to rename here".
    pub fn prepare_rename(&self, file: FileId, offset: u32) -> Result<Span, String> {
        nav::rename_site(self, file, offset).map(|s| s.occ)
    }

    /// Every edit of renaming what the name at `offset` names to
    /// `new_name`, in every file read so far (the declaration, its uses,
    /// importers' `alias.name`: what [`Analysis::references`] finds),
    /// sorted, without duplicates (none when the name is already
    /// `new_name`). `Err` with what [`Analysis::prepare_rename`] refuses,
    /// and when `new_name` is not an identifier ("`1x` is not a name"), is a
    /// keyword ("`env` is a keyword"), or would change what a name refers
    /// to: "`base` is already declared in lib.env.scl (line 3)", "`image`
    /// is a builtin used in main.env.scl (line 4)", "the use at line 7
    /// (main.env.scl) would refer to the parameter `x` of `f`", "`x` is
    /// already a name in `f` (main.env.scl, line 2)".
    pub fn rename(
        &self,
        file: FileId,
        offset: u32,
        new_name: &str,
    ) -> Result<Vec<TextEdit>, String> {
        let site = nav::rename_site(self, file, offset)?;
        let ident = new_name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && new_name.bytes().all(is_word_byte);
        if !ident {
            return Err(format!("`{new_name}` is not a name"));
        }
        if scl_syntax::is_keyword(new_name) {
            return Err(format!("`{new_name}` is a keyword"));
        }
        let text = self.text(site.def.file);
        if text.get(site.def.span.range()) == Some(new_name) {
            return Ok(Vec::new());
        }
        if let Some(why) = nav::rename_clash(self, &site, new_name) {
            return Err(why);
        }
        let mut edits: Vec<TextEdit> = self
            .references(file, offset, true)
            .into_iter()
            .map(|t| TextEdit {
                file: t.file,
                span: t.span,
                new_text: new_name.to_string(),
            })
            .collect();
        edits.sort();
        edits.dedup();
        Ok(edits)
    }

    /// Code actions for the diagnostics of `file` whose span meets `span`
    /// (touches or overlaps it), sorted by the diagnostic's position then
    /// title: for every diagnostic whose help is "did you mean `x`?"
    /// (unknown field, name, type, enum variant, argument, declaration of
    /// a module, record field, stdlib module or file of an import) "Replace
    /// `old` with `x`"; for an unknown name `foo` in `foo.bar`, "Add
    /// `import "std/NAME" as foo`" / "Add `import "./path.env.scl" as foo`"
    /// for each stdlib module and workspace file named `foo` (`-` written
    /// `_`) that declares `bar`, inserted after the last import, else at the
    /// top; for a number literal where a string is expected (E0201,
    /// `python.version = 3.10`), "Quote `3.10` as a string" (its source
    /// text, so `3.10` stays `3.10`). No refactors yet.
    pub fn code_actions(&self, file: FileId, span: Span) -> Vec<CodeAction> {
        let text = self.text(file);
        let m = &self.parse(file).module;
        let mut diags: Vec<Diagnostic> = self
            .file_diagnostics(file)
            .into_iter()
            .filter(|d| d.at.span.start <= span.end && span.start <= d.at.span.end)
            .collect();
        diags.sort_by_key(|d| (d.at.span.start, d.at.span.end));
        let mut out: Vec<CodeAction> = Vec::new();
        for d in &diags {
            let fixes = Some((d.code, d.at.span));
            let mut mine: Vec<CodeAction> = Vec::new();
            let edit = |span: Span, new_text: String| TextEdit {
                file,
                span,
                new_text,
            };
            if let Some((s, x)) = did_you_mean_edit(d, &text) {
                let old = &text[s.range()];
                if old != x {
                    mine.push(CodeAction {
                        title: format!("Replace `{old}` with `{x}`"),
                        kind: ActionKind::QuickFix,
                        edits: vec![edit(s, x)],
                        fixes,
                        preferred: false,
                    });
                }
            }
            let t = text.get(d.at.span.range()).unwrap_or_default();
            if d.code == "E0201"
                && number_literal(t)
                && (d.message.contains("written as a string")
                    || d.message.contains("expected String"))
            {
                mine.push(CodeAction {
                    title: format!("Quote `{t}` as a string"),
                    kind: ActionKind::QuickFix,
                    edits: vec![edit(d.at.span, format!("\"{t}\""))],
                    fixes,
                    preferred: false,
                });
            }
            if d.code == "E0101" && d.message.starts_with("unknown name `") {
                let after = &text[d.at.span.end as usize..];
                let member: String = after
                    .strip_prefix('.')
                    .unwrap_or("")
                    .bytes()
                    .take_while(|b| is_word_byte(*b))
                    .map(char::from)
                    .collect();
                if !member.is_empty() {
                    let at = m
                        .decls
                        .iter()
                        .filter(|d| matches!(d, Decl::Import(_)))
                        .map(|d| d.span().end)
                        .max();
                    for p in self.import_candidates(file, t, &member) {
                        let line = format!("import \"{p}\" as {t}");
                        let (s, new_text) = match at {
                            Some(end) => {
                                (Span::new(end as usize, end as usize), format!("\n{line}"))
                            }
                            None => (Span::new(0, 0), format!("{line}\n")),
                        };
                        mine.push(CodeAction {
                            title: format!("Add `{line}`"),
                            kind: ActionKind::QuickFix,
                            edits: vec![edit(s, new_text)],
                            fixes,
                            preferred: false,
                        });
                    }
                }
            }
            // A Python package that needs system libraries (W0502): add
            // them to the env whose item the diagnostic is at, as the help
            // says (`system.packages += [...]`), as its body's last item.
            if d.code == "W0502" {
                let added = d
                    .help
                    .as_deref()
                    .and_then(|h| h.strip_prefix("add `"))
                    .and_then(|h| h.strip_suffix('`'));
                let env = m.decls.iter().find_map(|x| match x {
                    Decl::Env(e)
                        if e.span.start <= d.at.span.start && d.at.span.end <= e.span.end =>
                    {
                        Some(e)
                    }
                    _ => None,
                });
                if let (Some(line), Some(e)) = (added, env) {
                    let close = e.body.span.end.saturating_sub(1);
                    // The closing brace's line: its indentation, and whether
                    // the body is written on one line.
                    let line_start = text[..close as usize].rfind('\n').map_or(0, |i| i + 1);
                    let before = &text[line_start..close as usize];
                    let new_text = if before.trim().is_empty() {
                        format!("  {line}\n{before}")
                    } else {
                        format!("\n  {line}\n")
                    };
                    mine.push(CodeAction {
                        title: format!("Add `{line}`"),
                        kind: ActionKind::QuickFix,
                        edits: vec![edit(Span::new(close as usize, close as usize), new_text)],
                        fixes,
                        preferred: true,
                    });
                }
            }
            if mine.len() == 1 {
                mine[0].preferred = true;
            }
            mine.sort_by(|a, b| a.title.cmp(&b.title));
            for a in mine {
                if !out.iter().any(|b| b.edits == a.edits) {
                    out.push(a);
                }
            }
        }
        out
    }
}

/// Whether a module named `name` (a file name without `.env.scl`) is one a
/// user would import as `alias`: the name with `-` written `_`
/// (`s3_data` for `s3-data`), or its first `-`-separated word (`s3`,
/// as the book imports `std/s3-data`).
fn alias_fits(name: &str, alias: &str) -> bool {
    name.replace('-', "_") == alias || name.split('-').next() == Some(alias)
}
