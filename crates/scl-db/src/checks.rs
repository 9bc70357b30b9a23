//! The domain checks (`scl_checks`) as a query: every env of a module that
//! is not a template, checked on its IR, each finding placed at the source
//! of its field. [`module_diagnostics`](crate::module_diagnostics) includes
//! them, so `sclc check`, `sclc build` and the language server report the
//! same ones.

use std::sync::Arc;

use scl_diag::{Diagnostic, Span};

use crate::{absolute_span, display_path, module_values, parse, Db, SourceFile};

/// The origin of an IR field: the field itself, else the nearest enclosing
/// path that has one (`assets[1]` → `assets`), else the first write below
/// it (`resources` → `resources.requests.cpu`), its span made absolute.
/// How backend findings and domain checks are located.
pub fn field_origin(
    db: &dyn Db,
    origins: &scl_sema::Origins,
    field: &str,
) -> Option<scl_sema::Origin> {
    let absolute = |o: &scl_sema::Origin| scl_sema::Origin {
        span: absolute_span(db, o.span),
        ..o.clone()
    };
    // `field` as the findings name it (`system.packages[1]`): itself, then
    // each enclosing field (an index is not a path of the provenance).
    let mut key = field.to_string();
    loop {
        if let Some(o) = origins.get(&scl_ir::FieldPath::parse(&key)) {
            return Some(absolute(o));
        }
        match key.rfind(['.', '[']) {
            Some(i) => key.truncate(i),
            None => break,
        }
    }
    let path = scl_ir::FieldPath::parse(field);
    // The paths below `field` sort right after it.
    origins
        .paths_below(&path)
        .iter()
        .filter_map(|k| origins.get(k))
        .map(absolute)
        .min_by_key(|o| o.span.start)
}

/// What the checks read besides the IR: the requirement lines of every
/// requirements file `spec` (and its services) names whose bytes, read now
/// through the database, still have the SHA-256 the IR records.
pub fn check_inputs(db: &dyn Db, spec: &scl_ir::EnvSpec) -> scl_checks::Inputs {
    let root = db.workspace().root(db).clone();
    let mut inputs = scl_checks::Inputs::default();
    let mut todo = vec![spec];
    while let Some(s) = todo.pop() {
        for r in s.python.iter().flat_map(|p| &p.requirements) {
            if inputs.requirements.iter().any(|f| f.path == r.path) {
                continue;
            }
            let file = db.input(&root.join(&r.path));
            let Some(bytes) = file.contents(db).as_deref() else {
                continue;
            };
            if scl_ir::sha256_hex(bytes) != r.sha256 {
                continue;
            }
            let Ok(text) = std::str::from_utf8(bytes) else {
                continue;
            };
            inputs.requirements.push(scl_checks::RequirementsFile {
                path: r.path.clone(),
                lines: scl_sema::requirement_lines(text),
            });
        }
        todo.extend(s.services.values().map(|v| &**v));
    }
    inputs
}

/// Where list element `text` (a string) is written inside `span` of the
/// module `module`: the span of its literal `"text"`, if it is there as
/// written (not built by interpolation).
fn element_span(db: &dyn Db, module: scl_sema::ModuleId, span: Span, text: &str) -> Option<Span> {
    let src = crate::source_text(db, db.module_file(module));
    let body = src.get(span.start as usize..span.end as usize)?;
    let needle = format!("\"{text}\"");
    let at = body.find(&needle)?;
    let start = span.start as usize + at;
    Some(Span::new(start, start + needle.len()))
}

/// The env declaration named `name` in `file` (name span, whole span).
fn env_spans(db: &dyn Db, file: SourceFile, name: &str) -> (Span, Span) {
    parse(db, file)
        .module
        .decls
        .iter()
        .find_map(|d| match d {
            scl_syntax::ast::Decl::Env(e) if e.name.name == name => Some((e.name.span, e.span)),
            _ => None,
        })
        .unwrap_or_default()
}

/// A finding of env `env` (IR `spec`) of `file` as a diagnostic: at the
/// item that set its field when that item is in `file`, else at the env's
/// name with a label at the item (another module: a parent, the standard
/// library); each other field it involves as a label. A list element
/// (`python.packages[2]`) is located at its literal inside the item that
/// wrote the list, else inside the env in `file`; an element neither holds
/// (it came from an earlier layer elsewhere) is reported at the env's name.
pub fn place(
    db: &dyn Db,
    file: SourceFile,
    env: &str,
    spec: &scl_ir::EnvSpec,
    origins: &scl_sema::Origins,
    f: &scl_checks::Finding,
) -> Diagnostic {
    let here = display_path(db, file);
    let this_module = db.module_id(file);
    let key = |m: scl_sema::ModuleId| display_path(db, db.module_file(m));
    let (name_span, env_span) = env_spans(db, file, env);
    // The location of a field: (module, span), or `None` when unknown.
    let locate = |field: &str| -> Option<(scl_sema::ModuleId, Span)> {
        let o = field_origin(db, origins, field)?;
        match scl_checks::element_text(spec, field) {
            None => Some((o.module, o.span)),
            Some(t) => element_span(db, o.module, o.span, &t)
                .map(|sp| (o.module, sp))
                .or_else(|| {
                    element_span(db, this_module, env_span, &t).map(|sp| (this_module, sp))
                }),
        }
    };
    let at = locate(&f.field);
    let (span, elsewhere) = match at {
        Some((m, sp)) if key(m) == here => (sp, None),
        Some((m, sp)) => (name_span, Some((m, sp))),
        None => (name_span, None),
    };
    let mut d = if f.error {
        Diagnostic::error(f.code, span, f.message.clone())
    } else {
        Diagnostic::warning(f.code, span, f.message.clone())
    };
    d.at.file = here.clone();
    if let Some((m, sp)) = elsewhere {
        d = d.with_label(key(m), sp, format!("`{}` is set here", f.field));
    }
    for a in &f.also {
        if let Some((m, sp)) = locate(&a.field) {
            d = d.with_label(key(m), sp, a.label.clone());
        }
    }
    if let Some(h) = &f.help {
        d = d.with_help(h.clone());
    }
    d
}

/// The domain checks of every env of `file` that is not a template.
#[salsa::tracked(returns(ref))]
pub fn domain_diagnostics(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    let values = module_values(db, file);
    let mut out = Vec::new();
    for name in &values.envs {
        let Some(fin) = values.final_env(name) else {
            continue;
        };
        let Some(spec) = &fin.spec else {
            continue;
        };
        let inputs = check_inputs(db, spec);
        for f in scl_checks::check(spec, &inputs) {
            out.push(place(db, file, name, spec, &fin.origins, &f));
        }
    }
    Arc::new(out)
}
