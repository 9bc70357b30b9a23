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

/// The span of env `name`'s name in `file` (where a finding whose field
/// was set in another module, or by no item, is reported).
fn env_name_span(db: &dyn Db, file: SourceFile, name: &str) -> Span {
    parse(db, file)
        .module
        .decls
        .iter()
        .find_map(|d| match d {
            scl_syntax::ast::Decl::Env(e) if e.name.name == name => Some(e.name.span),
            _ => None,
        })
        .unwrap_or_default()
}

/// A finding of env `env` of `file` as a diagnostic: at the item that set
/// its field when that item is in `file`, else at the env's name with a
/// label at the item (another module: a parent, the standard library);
/// each other field it involves as a label.
pub fn place(
    db: &dyn Db,
    file: SourceFile,
    env: &str,
    origins: &scl_sema::Origins,
    f: &scl_checks::Finding,
) -> Diagnostic {
    let here = display_path(db, file);
    let key = |o: &scl_sema::Origin| display_path(db, db.module_file(o.module));
    let origin = field_origin(db, origins, &f.field);
    let (span, elsewhere) = match &origin {
        Some(o) if key(o) == here => (o.span, None),
        Some(o) => (env_name_span(db, file, env), Some(o)),
        None => (env_name_span(db, file, env), None),
    };
    let mut d = if f.error {
        Diagnostic::error(f.code, span, f.message.clone())
    } else {
        Diagnostic::warning(f.code, span, f.message.clone())
    };
    d.at.file = here.clone();
    if let Some(o) = elsewhere {
        d = d.with_label(key(o), o.span, format!("`{}` is set here", f.field));
    }
    for a in &f.also {
        if let Some(o) = field_origin(db, origins, &a.field) {
            d = d.with_label(key(&o), o.span, a.label.clone());
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
            out.push(place(db, file, name, &fin.origins, &f));
        }
    }
    Arc::new(out)
}
