//! The domain checks (`scl_checks`) as a query: every env of a module that
//! is not a template, checked on its IR, each finding placed at the source
//! of its field. [`module_diagnostics`](crate::module_diagnostics) includes
//! them, so `sclc check`, `sclc build` and the language server report the
//! same ones.
//!
//! Placement ([`locate_field`]): the provenance names the item that wrote a
//! field last, which for a list is the last `=`/`+=` of it, not the item
//! that wrote a given element. An element is looked for among the items of
//! the env's layers (parents, template bodies, `with` blocks) that wrote
//! the list since it was last replaced: its literal; else, when those
//! items append list literals unconditionally and make the IR's length,
//! the expression at its index; else a string built by interpolation or
//! `+` that matches it; else an expression outside every env (a `let`, a
//! function) of their modules. Only then the item that wrote the list. A
//! field of a service (`services.a.base`) is looked for inside the
//! service: its own provenance when it is a named env, else its layers'
//! items.

use std::collections::HashMap;
use std::sync::Arc;

use scl_diag::{Diagnostic, Span};
use scl_ir::{EnvSpec, FieldPath};
use scl_sema::value::{Layer, Lin, Record, Value};
use scl_sema::{FinalEnv, ModuleId, Origins};
use scl_syntax::ast::{
    AssignOp, BinaryOp, Decl, Expr, ExprKind, Item, ItemKind, PostOpKind, StrPart,
};

use crate::{absolute_span, decl_syntax, display_path, module_ast, module_values, Db, SourceFile};

/// The origin of an IR field: the field itself, else the nearest enclosing
/// path that has one (`assets[1]` → `assets`), else the first write below
/// it (`resources` → `resources.requests.cpu`), its span made absolute.
/// How backend findings are located; the domain checks go through
/// [`locate_field`], which also finds a list element's own expression and
/// a service's field inside the service.
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

/// The most layers of one env (from its last) the placement of a finding
/// reads: its work stays bounded however long the chain of `extends`.
const MAX_LAYERS: usize = 256;

/// A place in a module: the module and an absolute span.
type Place = (ModuleId, Span);

/// The provenance of a [`Scope`]: the one a caller holds, or a service's.
#[derive(Clone)]
enum Prov<'a> {
    Of(&'a Origins),
    Shared(Arc<Origins>),
}

impl Prov<'_> {
    fn get(&self) -> &Origins {
        match self {
            Prov::Of(o) => o,
            Prov::Shared(o) => o,
        }
    }
}

/// What the placement knows of one env: the env a finding is about, or a
/// service of it (`services.a.base` is `base` of the scope of `a`).
#[derive(Clone)]
struct Scope<'a> {
    spec: &'a EnvSpec,
    /// Its linearization: the layers whose items wrote it.
    layers: Lin,
    /// Its provenance, when it has a final value of its own (a named env);
    /// else (`worker with { … }`, a template instance) its layers' items
    /// are read.
    origins: Option<Prov<'a>>,
    /// Its final record, where its services are (named envs only).
    record: Option<Arc<Record>>,
}

impl<'a> Scope<'a> {
    /// The env `env` of `file` (IR `spec`, provenance `origins`).
    fn top(
        db: &dyn Db,
        file: SourceFile,
        env: &str,
        spec: &'a EnvSpec,
        origins: Prov<'a>,
    ) -> Scope<'a> {
        let (layers, record) = match module_values(db, file).values.get(env) {
            Some(Value::Env(ev)) => (
                ev.layers.clone(),
                ev.final_env.as_ref().map(|f| f.record.clone()),
            ),
            _ => (Lin::new(), None),
        };
        Scope {
            spec,
            layers,
            origins: Some(origins),
            record,
        }
    }

    /// The service `name` of this env, when its value can be read.
    fn service(&self, db: &dyn Db, name: &str) -> Option<Scope<'a>> {
        let spec: &'a EnvSpec = self.spec.services.get(name)?;
        let Some(Value::Record(services)) = self.record.as_ref()?.get("services") else {
            return None;
        };
        let ev = match services.get(name)? {
            Value::Env(ev) => ev.clone(),
            Value::EnvRef(r) => match module_values(db, db.module_file(r.module))
                .values
                .get(&*r.name)
            {
                Some(Value::Env(ev)) => ev.clone(),
                _ => return None,
            },
            _ => return None,
        };
        let fin = ev.final_env.as_ref();
        Some(Scope {
            spec,
            layers: ev.layers.clone(),
            origins: fin.map(|f| Prov::Shared(f.origins.clone())),
            record: fin.map(|f| f.record.clone()),
        })
    }

    /// The item that wrote `path` last (as [`field_origin`] finds it) and,
    /// from the provenance, its layer's position.
    fn writer(&self, db: &dyn Db, path: &[&str]) -> Option<(Place, Option<usize>)> {
        match &self.origins {
            Some(o) => field_origin(db, o.get(), &render(path))
                .map(|o| ((o.module, o.span), Some(o.position))),
            None => syntactic_writer(db, &self.layers, path).map(|p| (p, None)),
        }
    }

    /// Where element `index` of the list at `path` (of text `text`, for a
    /// string) was written, among the items of the layers up to the one
    /// at `end` that wrote the list (from the last that replaced it): its
    /// literal; else, when the order of the lists written can be followed
    /// (list literals appended to each other, unconditionally) and gives
    /// the IR's length, the expression at its index; else a string built
    /// by interpolation or `+` whose literal parts match it; else what
    /// [`outside_envs`] finds in those layers' modules (a `let`).
    fn element(
        &self,
        db: &dyn Db,
        path: &[&str],
        index: usize,
        text: Option<&str>,
        end: Option<usize>,
    ) -> Option<Place> {
        let n = self.layers.len();
        let start = n.saturating_sub(MAX_LAYERS);
        let end = end.map_or(n, |p| (p + 1).min(n));
        let layers = self.layers.suffix(start);
        let mut ws = Vec::new();
        for l in layers.iter().take(end.saturating_sub(start)) {
            writers(&l.block.items, path, l.id.module, false, &mut ws);
        }
        ws.retain(|w| !w.below);
        let from = ws
            .iter()
            .rposition(|w| w.replaces && !w.conditional)
            .unwrap_or(0);
        let ws = &ws[from..];
        let at = |m: ModuleId, e: &Expr| Some((m, absolute_span(db, e.span)));
        if let Some(t) = text {
            for w in ws {
                let found = w
                    .value
                    .and_then(|v| first_expr(v, |e| literal(e).as_deref() == Some(t)));
                if let Some(e) = found {
                    return at(w.module, e);
                }
            }
        }
        if let Some((m, e)) = by_order(ws, index, ir_list_len(self.spec, path)) {
            return at(m, e);
        }
        let t = text?;
        // The built string with the most literal text that matches.
        let mut best: Option<(usize, ModuleId, &Expr)> = None;
        for w in ws {
            let Some(v) = w.value else { continue };
            for_each_expr(v, &mut |e| {
                if let Some(score) = built_match(e, t) {
                    if best.is_none_or(|(b, _, _)| score > b) {
                        best = Some((score, w.module, e));
                    }
                }
            });
        }
        if let Some((_, m, e)) = best {
            return at(m, e);
        }
        let mut modules: Vec<ModuleId> = Vec::new();
        for w in ws {
            if !modules.contains(&w.module) {
                modules.push(w.module);
            }
        }
        outside_envs(db, &modules, t)
    }
}

/// `path` as the provenance names it.
fn render(path: &[&str]) -> String {
    let mut p = FieldPath::root();
    for s in path {
        p = p.key(s);
    }
    p.render()
}

/// `field` as the findings name it, split into its path and, for a list
/// element, its index (`python.packages[2]` → `python.packages`, 2; what
/// follows the index is left out: `volumes[0].name` is the element).
fn split_field(field: &str) -> (FieldPath, Option<usize>) {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in field.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '[' => {
                let index = field[i + 1..]
                    .split(']')
                    .next()
                    .and_then(|n| n.parse().ok());
                return (FieldPath::parse(&field[..i]), index);
            }
            _ => {}
        }
    }
    (FieldPath::parse(field), None)
}

/// The length of the IR list at `path`, for the lists the placement can
/// follow element by element (`None` for any other path).
fn ir_list_len(spec: &EnvSpec, path: &[&str]) -> Option<usize> {
    let python = spec.python.as_ref();
    let conda = spec.conda.as_ref();
    Some(match path {
        ["assets"] => spec.assets.len(),
        ["command"] => spec.command.len(),
        ["depends_on"] => spec.depends_on.len(),
        ["entrypoint"] => spec.entrypoint.len(),
        ["files"] => spec.files.len(),
        ["ignore"] => spec.ignore.len(),
        ["ports"] => spec.ports.len(),
        ["setup"] => spec.setup.len(),
        ["test"] => spec.test.len(),
        ["volumes"] => spec.volumes.len(),
        ["writable"] => spec.writable.len(),
        ["python", "packages"] => python.map_or(0, |p| p.packages.len()),
        ["python", "requirements"] => python.map_or(0, |p| p.requirements.len()),
        ["python", "extra_index_urls"] => python.map_or(0, |p| p.extra_index_urls.len()),
        ["system", "packages"] => spec.system.as_ref().map_or(0, |s| s.packages.len()),
        ["conda", "packages"] => conda.map_or(0, |c| c.packages.len()),
        ["conda", "channels"] => conda.map_or(0, |c| c.channels.len()),
        _ => return None,
    })
}

/// An item of a layer that writes a path (see [`writers`]).
struct Writer<'e> {
    module: ModuleId,
    /// The item (a span of its layer's declaration).
    item: Span,
    op: AssignOp,
    /// The value written at the path itself; `None` for a record written
    /// whole around it.
    value: Option<&'e Expr>,
    /// It replaces what the path held: `=` of it, or of a record around it.
    replaces: bool,
    /// A record literal written whole around the path without it: the
    /// path is empty after it.
    clears: bool,
    /// It writes below the path (`resources.limits.gpu` for `resources`).
    below: bool,
    /// It is inside an `if`.
    conditional: bool,
}

/// The items of `items` (a layer of module `module`) that write `path`,
/// a record around it or a path below it, in order, through `PATH { … }`
/// blocks, record literals written whole and `if` blocks.
fn writers<'e>(
    items: &'e [Item],
    path: &[&str],
    module: ModuleId,
    conditional: bool,
    out: &mut Vec<Writer<'e>>,
) {
    let writer = |it: &Item, op, value, replaces, clears, below| Writer {
        module,
        item: it.span,
        op,
        value,
        replaces,
        clears,
        below,
        conditional,
    };
    for it in items {
        match &it.kind {
            ItemKind::Assign {
                path: p, op, value, ..
            } => {
                let k = p.segments.len();
                let shared = k.min(path.len());
                if !p.segments[..shared]
                    .iter()
                    .zip(&path[..shared])
                    .all(|(s, x)| s.name == *x)
                {
                    continue;
                }
                if k == path.len() {
                    out.push(writer(
                        it,
                        *op,
                        Some(value),
                        *op == AssignOp::Set,
                        false,
                        false,
                    ));
                } else if k > path.len() {
                    out.push(writer(it, *op, Some(value), false, false, true));
                } else if let ExprKind::Record(b) = &value.kind {
                    // `python = { … }` replaces `python`; `vars += { … }`
                    // writes the keys it holds.
                    if *op == AssignOp::Set {
                        out.push(writer(it, *op, None, true, true, false));
                    }
                    if *op != AssignOp::Remove {
                        writers(&b.items, &path[k..], module, conditional, out);
                    }
                } else if *op != AssignOp::Remove {
                    out.push(writer(it, *op, None, *op == AssignOp::Set, false, false));
                }
            }
            ItemKind::Nested { path: p, body } => {
                let k = p.segments.len();
                let shared = k.min(path.len());
                if !p.segments[..shared]
                    .iter()
                    .zip(&path[..shared])
                    .all(|(s, x)| s.name == *x)
                {
                    continue;
                }
                if k <= path.len() {
                    writers(&body.items, &path[k..], module, conditional, out);
                } else {
                    out.push(writer(it, AssignOp::Set, None, false, false, true));
                }
            }
            ItemKind::If {
                then_block,
                else_block,
                ..
            } => {
                writers(&then_block.items, path, module, true, out);
                if let Some(b) = else_block {
                    writers(&b.items, path, module, true, out);
                }
            }
            ItemKind::Error => {}
        }
    }
}

/// The final value of the plain env (not a template, not a `with` block)
/// a layer is, as its module computed it.
fn plain_final(db: &dyn Db, l: &Layer) -> Option<Arc<FinalEnv>> {
    let d = l.id.decl?;
    if !l.id.args.is_empty() {
        return None;
    }
    let file = db.module_file(l.id.module);
    if d >= crate::items(db, file).items.len() {
        return None;
    }
    let name = match &decl_syntax(db, file, d).decl {
        Decl::Env(e) if e.params.is_none() => e.name.name.clone(),
        _ => return None,
    };
    module_values(db, file).final_env(&name).cloned()
}

/// The item that wrote `path` last in an env without a provenance of its
/// own (a service written `worker with { … }` or as a template
/// instance): from its last layer back, the first plain env's provenance
/// (it holds its ancestors'), else the last item of a layer that writes
/// the path or a record around it, else its first item that writes below
/// it. An item inside an `if` counts (its condition is not known here).
fn syntactic_writer(db: &dyn Db, layers: &Lin, path: &[&str]) -> Option<Place> {
    let n = layers.len();
    for l in layers.suffix(n.saturating_sub(MAX_LAYERS)).iter().rev() {
        if let Some(f) = plain_final(db, l) {
            if let Some(o) = field_origin(db, &f.origins, &render(path)) {
                return Some((o.module, o.span));
            }
            continue;
        }
        let mut ws = Vec::new();
        writers(&l.block.items, path, l.id.module, false, &mut ws);
        let w = ws
            .iter()
            .rev()
            .find(|w| !w.below)
            .or_else(|| ws.iter().find(|w| w.below));
        if let Some(w) = w {
            return Some((w.module, absolute_span(db, w.item)));
        }
    }
    None
}

/// The element expression at `index` of the list `ws` built, when each of
/// them is unconditional and writes a list literal (`=` or `+=`) or
/// clears the list, and the list they make has the IR's length `len`.
fn by_order<'e>(
    ws: &[Writer<'e>],
    index: usize,
    len: Option<usize>,
) -> Option<(ModuleId, &'e Expr)> {
    let mut elements: Vec<(ModuleId, &Expr)> = Vec::new();
    for w in ws {
        if w.conditional {
            return None;
        }
        match (w.op, w.value.map(|v| &v.kind)) {
            (AssignOp::Set, Some(ExprKind::List(es))) => {
                elements = es.iter().map(|e| (w.module, e)).collect();
            }
            (AssignOp::Append, Some(ExprKind::List(es))) => {
                elements.extend(es.iter().map(|e| (w.module, e)));
            }
            (AssignOp::Set, None) if w.clears => elements.clear(),
            _ => return None,
        }
    }
    if Some(elements.len()) != len {
        return None;
    }
    elements.get(index).copied()
}

/// The text of a string literal with no interpolation.
fn literal(e: &Expr) -> Option<String> {
    let ExprKind::Str(parts) = &e.kind else {
        return None;
    };
    let mut out = String::new();
    for p in parts {
        match p {
            StrPart::Lit(s) => out.push_str(s),
            StrPart::Interp(_) => return None,
        }
    }
    Some(out)
}

/// The pieces of a string built by interpolation or `+` of strings: the
/// literal text, and `None` for each part computed
/// (`"torch==${v}+${cu}"` is `torch==`, ·, `+`, ·).
fn pattern(e: &Expr) -> Option<Vec<Option<String>>> {
    let str_parts = |parts: &[StrPart]| -> Vec<Option<String>> {
        parts
            .iter()
            .map(|p| match p {
                StrPart::Lit(s) => Some(s.to_string()),
                StrPart::Interp(_) => None,
            })
            .collect()
    };
    match &e.kind {
        ExprKind::Str(parts) => Some(str_parts(parts)),
        ExprKind::Binary { first, rest } if rest.iter().all(|(op, _)| *op == BinaryOp::Add) => {
            let mut out = Vec::new();
            let mut strings = false;
            for o in std::iter::once(&**first).chain(rest.iter().map(|(_, e)| e)) {
                match &o.kind {
                    ExprKind::Str(parts) => {
                        strings = true;
                        out.extend(str_parts(parts));
                    }
                    _ => out.push(None),
                }
            }
            strings.then_some(out)
        }
        _ => None,
    }
}

/// Whether `text` can be what `pattern` builds: its literal pieces in
/// order, anything where a part is computed.
fn glob(pattern: &[Option<String>], text: &str) -> bool {
    let mut runs = vec![String::new()];
    for p in pattern {
        match p {
            Some(s) => runs.last_mut().expect("never empty").push_str(s),
            None => runs.push(String::new()),
        }
    }
    let (first, last) = (&runs[0], &runs[runs.len() - 1]);
    if runs.len() == 1 {
        return text == first;
    }
    if text.len() < first.len() + last.len()
        || !text.starts_with(first.as_str())
        || !text.ends_with(last.as_str())
    {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for r in &runs[1..runs.len() - 1] {
        match rest.find(r.as_str()) {
            Some(i) => rest = &rest[i + r.len()..],
            None => return false,
        }
    }
    true
}

/// A node of [`for_each_expr`]'s walk.
enum Node<'e> {
    Expr(&'e Expr),
    Items(&'e [Item]),
}

/// Calls `f` on `root` and every expression inside it, in source order
/// (without recursion: nesting is bounded by the parser, but the walk does
/// not need the stack).
fn for_each_expr<'e>(root: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    let mut stack = vec![Node::Expr(root)];
    let mut kids: Vec<Node<'e>> = Vec::new();
    while let Some(n) = stack.pop() {
        match n {
            Node::Items(items) => {
                for it in items {
                    match &it.kind {
                        ItemKind::Assign { value, .. } => kids.push(Node::Expr(value)),
                        ItemKind::Nested { body, .. } => kids.push(Node::Items(&body.items)),
                        ItemKind::If {
                            cond,
                            then_block,
                            else_block,
                        } => {
                            kids.push(Node::Expr(cond));
                            kids.push(Node::Items(&then_block.items));
                            if let Some(b) = else_block {
                                kids.push(Node::Items(&b.items));
                            }
                        }
                        ItemKind::Error => {}
                    }
                }
            }
            Node::Expr(e) => {
                f(e);
                match &e.kind {
                    ExprKind::Str(parts) => {
                        for p in parts {
                            if let StrPart::Interp(x) = p {
                                kids.push(Node::Expr(x));
                            }
                        }
                    }
                    ExprKind::List(es) => kids.extend(es.iter().map(Node::Expr)),
                    ExprKind::Comprehension(c) => {
                        let scl_syntax::ast::Comprehension {
                            iter, cond, body, ..
                        } = &**c;
                        kids.push(Node::Expr(iter));
                        if let Some(c) = cond {
                            kids.push(Node::Expr(c));
                        }
                        kids.push(Node::Expr(body));
                    }
                    ExprKind::Record(b) => kids.push(Node::Items(&b.items)),
                    ExprKind::Postfix { base, ops } => {
                        kids.push(Node::Expr(base));
                        for op in ops {
                            match &op.kind {
                                PostOpKind::Call(args) => {
                                    kids.extend(args.iter().map(|a| Node::Expr(&a.value)))
                                }
                                PostOpKind::Index(x) => kids.push(Node::Expr(x)),
                                PostOpKind::With(b) => kids.push(Node::Items(&b.items)),
                                PostOpKind::Field(_) => {}
                            }
                        }
                    }
                    ExprKind::Unary { operand, .. } => kids.push(Node::Expr(operand)),
                    ExprKind::Binary { first, rest } => {
                        kids.push(Node::Expr(first));
                        kids.extend(rest.iter().map(|(_, x)| Node::Expr(x)));
                    }
                    ExprKind::If(c, a, b) => {
                        kids.extend([Node::Expr(c), Node::Expr(a), Node::Expr(b)]);
                    }
                    _ => {}
                }
            }
        }
        stack.extend(kids.drain(..).rev());
    }
}

/// The first expression of `root` (in source order) that `pred` accepts.
fn first_expr(root: &Expr, pred: impl Fn(&Expr) -> bool) -> Option<&Expr> {
    let mut found = None;
    for_each_expr(root, &mut |e| {
        if found.is_none() && pred(e) {
            found = Some(e);
        }
    });
    found
}

/// How well `e`, a string built by interpolation or `+`, matches `text`:
/// the length of its literal text, when it has some and a computed part.
fn built_match(e: &Expr, text: &str) -> Option<usize> {
    let p = pattern(e)?;
    let literal_len: usize = p.iter().flatten().map(|s| s.len()).sum();
    (p.iter().any(Option::is_none) && literal_len > 0 && glob(&p, text)).then_some(literal_len)
}

/// Where a list written from a name (`python.packages = pins`) or a call
/// got its element `text`: among the expressions of `modules` outside
/// every env (a `let`, a function's body or default, a param's default),
/// its literal when there is exactly one, else the string built by
/// interpolation or `+` that matches it with the most literal text (none
/// when two tie).
fn outside_envs(db: &dyn Db, modules: &[ModuleId], text: &str) -> Option<Place> {
    let mut literals: Vec<Place> = Vec::new();
    let mut best: Option<(usize, Place)> = None;
    let mut tie = false;
    for &m in modules {
        let module = module_ast(db, db.module_file(m));
        for d in &module.decls {
            let roots: Vec<&Expr> = match d {
                Decl::Let(l) => vec![&l.value],
                Decl::Param(p) => vec![&p.default],
                Decl::Fn(f) => std::iter::once(&f.body)
                    .chain(f.params.iter().filter_map(|p| p.default.as_ref()))
                    .collect(),
                _ => Vec::new(),
            };
            for r in roots {
                for_each_expr(r, &mut |e| {
                    if literal(e).as_deref() == Some(text) {
                        literals.push((m, e.span));
                    } else if let Some(score) = built_match(e, text) {
                        match best {
                            Some((b, _)) if b > score => {}
                            Some((b, _)) if b == score => tie = true,
                            _ => {
                                best = Some((score, (m, e.span)));
                                tie = false;
                            }
                        }
                    }
                });
            }
        }
    }
    match literals[..] {
        [one] => Some(one),
        [] => best.filter(|_| !tie).map(|(_, p)| p),
        _ => None,
    }
}

/// Where `field` (as the findings name it) of the env of `top` was
/// written, and the entries (`services.a = …`) of the services it is
/// inside, outermost first. A field of a service is looked for inside the
/// service; a list element as [`Scope::element`] finds it, else at the
/// item that wrote the list.
fn locate(db: &dyn Db, top: &Scope<'_>, field: &str) -> (Option<Place>, Vec<Place>) {
    let (path, index) = split_field(field);
    let segs: Vec<&str> = path.segments().iter().map(|s| s.as_str()).collect();
    let mut scope = top.clone();
    let mut rest = &segs[..];
    let mut entries = Vec::new();
    while rest.len() > 2 && rest[0] == "services" {
        let Some(inner) = scope.service(db, rest[1]) else {
            break;
        };
        entries.extend(scope.writer(db, &rest[..2]).map(|(p, _)| p));
        scope = inner;
        rest = &rest[2..];
    }
    let last = scope.writer(db, rest);
    let place = match index {
        None => last.map(|(p, _)| p),
        Some(i) => {
            let text = scl_checks::element_text(scope.spec, &format!("{}[{i}]", render(rest)));
            let end = last.and_then(|(_, pos)| pos);
            scope
                .element(db, rest, i, text.as_deref(), end)
                .or(last.map(|(p, _)| p))
        }
    };
    (place, entries)
}

/// Where `field` (as findings name it: `volumes[0]`,
/// `services.a.python.packages[1]`) of env `env` of `file` (IR `spec`)
/// was written, as [`place`] locates a finding: a list element at its own
/// expression when that can be told (else the item that wrote the list),
/// a field of a service inside that service. `None` when nothing wrote
/// it (a default). For the front ends that place other findings on the
/// IR (the backends').
pub fn locate_field(
    db: &dyn Db,
    file: SourceFile,
    env: &str,
    spec: &EnvSpec,
    field: &str,
) -> Option<(ModuleId, Span)> {
    let values = module_values(db, file);
    let fin = values.final_env(env)?;
    let top = Scope::top(db, file, env, spec, Prov::Shared(fin.origins.clone()));
    locate(db, &top, field).0
}

/// The span of the name of the env declaration named `name` in `file`
/// (its first declaration of that name that is an env; an empty span at
/// 0 when there is none): from the anchored declaration and its span
/// table, without the file's whole tree.
pub fn env_name_span(db: &dyn Db, file: SourceFile, name: &str) -> Span {
    let outline = crate::items(db, file);
    outline
        .items
        .iter()
        .enumerate()
        .filter(|(_, x)| x.name == name)
        .find_map(|(i, _)| match &decl_syntax(db, file, i).decl {
            Decl::Env(e) => {
                let id = crate::DeclId::new(db, file, i as u32);
                Some(crate::decl_spans(db, id).absolute(e.name.span))
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// A finding of env `env` (IR `spec`) of `file` as a diagnostic: at the
/// place its field was written ([`locate_field`]: a list element at its
/// own expression, in a parent or a `with` block too; a field of a service
/// inside the service) when that place is in `file`; else at the entry of
/// the innermost service it is in that is in `file`, else at the env's
/// name, with a label at the place (another module: a parent, the
/// standard library); each other field it involves as a label there.
pub fn place(
    db: &dyn Db,
    file: SourceFile,
    env: &str,
    spec: &scl_ir::EnvSpec,
    origins: &scl_sema::Origins,
    f: &scl_checks::Finding,
) -> Diagnostic {
    let here = display_path(db, file);
    let key = |m: ModuleId| display_path(db, db.module_file(m));
    let name_span = env_name_span(db, file, env);
    let top = Scope::top(db, file, env, spec, Prov::Of(origins));
    let (at, entries) = locate(db, &top, &f.field);
    let home = entries
        .iter()
        .rev()
        .find(|(m, _)| key(*m) == here)
        .map_or(name_span, |(_, sp)| *sp);
    let (span, elsewhere) = match at {
        Some((m, sp)) if key(m) == here => (sp, None),
        Some(p) => (home, Some(p)),
        None => (home, None),
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
        if let (Some((m, sp)), _) = locate(db, &top, &a.field) {
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
    for (name, found) in module_findings(db, file).envs.iter() {
        let Some(fin) = values.final_env(name) else {
            continue;
        };
        let Some(spec) = &fin.spec else {
            continue;
        };
        for f in found.findings.iter() {
            out.push(place(db, file, name, spec, &fin.origins, f));
        }
    }
    Arc::new(out)
}

/// The findings of one env of a module, before placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvFindings {
    /// The env's IR they are about (compared by pointer when a service
    /// holds the env by reference).
    pub spec: Arc<EnvSpec>,
    /// `scl_checks::check` of it, services included.
    pub findings: Arc<Vec<scl_checks::Finding>>,
}

/// The findings of the envs of one module ([`module_findings`]).
#[derive(Debug, PartialEq, Eq, Default)]
pub struct ModuleFindings {
    /// `(env name, its findings)`, in the module's order of envs.
    pub envs: Vec<(String, EnvFindings)>,
    /// The position in `envs` of each name: a module holding 10,000
    /// services of another module's envs looks each up in O(1).
    by_name: HashMap<String, usize>,
}

impl ModuleFindings {
    /// The findings of env `name`.
    pub fn get(&self, name: &str) -> Option<&EnvFindings> {
        self.by_name.get(name).map(|&i| &self.envs[i].1)
    }
}

/// The domain findings of every env of `file` that is not a template, by
/// env name, unplaced: a service that holds an env by reference (`c =
/// b.worker`) takes that env's findings from here, so every env is checked
/// once however many envs hold it as a service.
#[salsa::tracked(returns(ref))]
pub fn module_findings(db: &dyn Db, file: SourceFile) -> Arc<ModuleFindings> {
    let values = module_values(db, file);
    let mut out = ModuleFindings::default();
    for name in &values.envs {
        let Some(fin) = values.final_env(name) else {
            continue;
        };
        let Some(spec) = &fin.spec else {
            continue;
        };
        let inputs = check_inputs(db, spec);
        let services = match fin.record.get("services") {
            Some(Value::Record(r)) => Some(r),
            _ => None,
        };
        let others = other_modules_findings(db, file, services.map(|r| &**r));
        let mut known =
            |service: &str, s: &Arc<EnvSpec>| -> Option<Arc<Vec<scl_checks::Finding>>> {
                // An env of another module from that module's findings
                // (`others` holds every such service: no lookup in the
                // record of 5,000 services); one of this module once
                // checked above it.
                let e = match others.get(service) {
                    Some(e) => *e,
                    None => {
                        let Value::EnvRef(r) = services?.get(service)? else {
                            return None;
                        };
                        out.get(&r.name)
                    }
                };
                e.filter(|e| Arc::ptr_eq(&e.spec, s))
                    .map(|e| e.findings.clone())
            };
        let findings = scl_checks::check_with(spec, &inputs, &mut known);
        out.by_name.insert(name.clone(), out.envs.len());
        out.envs.push((
            name.clone(),
            EnvFindings {
                spec: spec.clone(),
                findings: Arc::new(findings),
            },
        ));
    }
    Arc::new(out)
}

/// The findings of each service of `services` that holds an env of
/// another module than `file` by reference, by service name, from that
/// module's [`module_findings`]: fetched in groups of 32 services
/// (`host::service_groups`, [`service_group_findings`]), so that after an
/// edit of one service's module an env holding 5,000 services re-reads one
/// group and verifies a few hundred, instead of verifying 5,000 modules'
/// findings. `None` for a service whose module has no findings for that
/// env.
fn other_modules_findings<'a>(
    db: &'a dyn Db,
    file: SourceFile,
    services: Option<&'a Record>,
) -> rustc_hash::FxHashMap<&'a str, Option<&'a EnvFindings>> {
    let Some(services) = services else {
        return Default::default();
    };
    let held: Vec<(&'a str, &'a scl_sema::value::EnvRef)> = services
        .iter()
        .filter_map(|(k, v)| match v {
            Value::EnvRef(r) => Some((&**k, &**r)),
            _ => None,
        })
        .collect();
    let ids: Vec<ModuleId> = held.iter().map(|(_, r)| r.module).collect();
    let refs: Vec<(&'a str, SourceFile, &'a Arc<str>)> = held
        .iter()
        .zip(db.module_files(&ids))
        .filter(|(_, target)| *target != file)
        .map(|((k, r), target)| (*k, target, &r.name))
        .collect();
    let groups = crate::host::service_groups(db, refs.iter().map(|(_, f, n)| (*f, (*n).clone())));
    let found = groups
        .into_iter()
        .flat_map(|g| service_group_findings(db, g).iter());
    let mut out = rustc_hash::FxHashMap::with_capacity_and_hasher(refs.len(), Default::default());
    out.extend(
        refs.iter()
            .zip(found)
            .map(|((k, _, _), e)| (*k, e.as_ref())),
    );
    out
}

/// The findings of each env of `group` (module, env name), from its
/// module's [`module_findings`], in order: see [`other_modules_findings`].
#[salsa::tracked(returns(ref))]
fn service_group_findings<'db>(
    db: &'db dyn Db,
    group: crate::host::ServiceGroup<'db>,
) -> Arc<Vec<Option<EnvFindings>>> {
    Arc::new(
        group
            .envs(db)
            .iter()
            .map(|(f, name)| module_findings(db, *f).get(name).cloned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    //! Where findings land: the primary span and every label, as offsets
    //! of the texts below (each case's `sclc check` output is in
    //! `tests/diagnostics/domain_span_*`).
    use super::*;
    use crate::{Database, MemorySystem};
    use std::path::Path;

    /// A workspace of `files` (name, text) checked from `main.env.scl`.
    fn check(files: &[(&str, &str)]) -> Vec<Diagnostic> {
        let (db, main) = open(files);
        crate::with_compiler_stack(move || db.check(main))
    }

    fn open(files: &[(&str, &str)]) -> (Database, SourceFile) {
        let fs = Arc::new(MemorySystem::new());
        for (name, text) in files {
            fs.write(format!("/w/{name}"), text);
        }
        fs.set_current_dir("/w");
        let db = Database::with_system(fs, Path::new("/w"), None);
        let main = db.open(Path::new("/w/main.env.scl"));
        (db, main)
    }

    /// The span of the `n`th (from 0) occurrence of `needle` in `text`.
    fn nth(text: &str, needle: &str, n: usize) -> Span {
        let (at, _) = text
            .match_indices(needle)
            .nth(n)
            .unwrap_or_else(|| panic!("no {needle:?} #{n}"));
        Span::new(at, at + needle.len())
    }

    fn span_of(text: &str, needle: &str) -> Span {
        nth(text, needle, 0)
    }

    /// The one diagnostic with `code` in `main.env.scl` (an env of another
    /// module has its own).
    fn only<'d>(diags: &'d [Diagnostic], code: &str) -> &'d Diagnostic {
        let found: Vec<&Diagnostic> = diags
            .iter()
            .filter(|d| d.code == code && &*d.at.file == "main.env.scl")
            .collect();
        assert_eq!(found.len(), 1, "{diags:#?}");
        found[0]
    }

    /// The labels as (file, span, message).
    fn labels(d: &Diagnostic) -> Vec<(&str, Span, &str)> {
        d.labels
            .iter()
            .map(|l| (&*l.at.file, l.at.span, l.message.as_str()))
            .collect()
    }

    const DEVEL_121: &str = "image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")";

    #[test]
    fn a_pin_of_a_parent_in_the_same_file_is_at_its_literal() {
        let src = format!(
            "env gpu_base {{\n  base = image(\"python:3.11-slim\")\n  python.packages = [\"torch==2.1.2+cu118\"]\n}}\n\nenv train extends gpu_base {{\n  base = {DEVEL_121}\n  python.packages += [\"numpy==1.26.4\"]\n}}\n"
        );
        let diags = check(&[("main.env.scl", &src)]);
        let d = only(&diags, "E0501");
        assert_eq!(&*d.at.file, "main.env.scl");
        assert_eq!(d.at.span, span_of(&src, "\"torch==2.1.2+cu118\""));
        assert_eq!(
            labels(d),
            [(
                "main.env.scl",
                span_of(&src, &format!("base = {DEVEL_121}")),
                "CUDA 12.1.1 here"
            )]
        );
    }

    #[test]
    fn a_pin_built_by_interpolation_is_at_its_string() {
        let src = format!(
            "let cu = \"cu118\"\nenv train {{\n  base = {DEVEL_121}\n  python.packages = [\n    \"numpy==1.26.4\",\n    \"torch==2.1.2+${{cu}}\",\n  ]\n}}\n"
        );
        let d = only(&check(&[("main.env.scl", &src)]), "E0501").clone();
        assert_eq!(d.at.span, span_of(&src, "\"torch==2.1.2+${cu}\""));
        // A string built with `+`, appended in a parent of another module.
        let base = "let v = \"2.1.2\"\nenv gpu_base {\n  base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")\n  python.packages = [\"numpy==1.26.4\", \"torch==\" + v + \"+cu118\"]\n}\n";
        let src = "import \"./base.env.scl\" as b\nenv train extends b.gpu_base {\n  python.packages += [\"tqdm==4.66.4\"]\n}\n";
        let d = only(
            &check(&[("main.env.scl", src), ("base.env.scl", base)]),
            "E0501",
        )
        .clone();
        assert_eq!(d.at.span, span_of(src, "train"));
        assert_eq!(
            labels(&d),
            [
                (
                    "base.env.scl",
                    span_of(base, "\"torch==\" + v + \"+cu118\""),
                    "`python.packages[1]` is set here"
                ),
                (
                    "base.env.scl",
                    span_of(
                        base,
                        "base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")"
                    ),
                    "CUDA 12.1.1 here"
                ),
            ]
        );
    }

    #[test]
    fn a_pin_from_a_let_or_a_function_is_at_its_expression_there() {
        let src = format!(
            "let pins = [\"numpy==1.26.4\", \"torch==2.1.2+cu118\"]\nenv train {{\n  base = {DEVEL_121}\n  python.packages = pins\n}}\n"
        );
        let d = only(&check(&[("main.env.scl", &src)]), "E0501").clone();
        assert_eq!(d.at.span, span_of(&src, "\"torch==2.1.2+cu118\""));
        // The literal in another env is not where this env got it.
        let src = format!(
            "fn pins(cu: String) -> [String] = [\"torch==2.1.2+\" + cu]\nenv other {{\n  base = image(\"python:3.11-slim\")\n  python.packages = [\"torch==2.1.2+cu118\"]\n}}\nenv train {{\n  base = {DEVEL_121}\n  python.packages = pins(\"cu118\")\n}}\n"
        );
        let d = only(&check(&[("main.env.scl", &src)]), "E0501").clone();
        assert_eq!(d.at.span, span_of(&src, "\"torch==2.1.2+\" + cu"));
    }

    #[test]
    fn a_pin_the_locator_cannot_tell_is_at_the_item_that_wrote_the_list() {
        let src = format!(
            "fn pins() -> [String] = [join([\"torch\", \"2.1.2+cu118\"], \"==\")]\nenv train {{\n  base = {DEVEL_121}\n  python.packages = pins()\n}}\n"
        );
        let d = only(&check(&[("main.env.scl", &src)]), "E0501").clone();
        assert_eq!(d.at.span, span_of(&src, "python.packages = pins()"));
    }

    #[test]
    fn a_field_of_a_service_written_with_with_is_inside_the_service() {
        let src = format!(
            "env worker {{\n  base = {DEVEL_121}\n  python.packages = [\"torch==2.1.2+cu121\"]\n}}\nenv stack {{\n  services {{\n    a = worker with {{ python.packages = [\"torch==2.1.2+cu118\"] }}\n    b = worker\n  }}\n}}\n"
        );
        let d = only(&check(&[("main.env.scl", &src)]), "E0501").clone();
        assert_eq!(d.at.span, span_of(&src, "\"torch==2.1.2+cu118\""));
        assert_eq!(
            labels(&d),
            [(
                "main.env.scl",
                span_of(&src, &format!("base = {DEVEL_121}")),
                "CUDA 12.1.1 here"
            )]
        );
    }

    #[test]
    fn a_field_of_a_service_from_another_module_is_labelled_there() {
        // The service entry is the primary location; the pin, in the
        // parent of another module, a label.
        let base = format!(
            "env worker {{\n  base = {DEVEL_121}\n  python.packages = [\"torch==2.1.2+cu118\"]\n}}\n"
        );
        let src = "import \"./base.env.scl\" as b\nenv stack {\n  services {\n    a = b.worker with { workdir = \"/w\" }\n  }\n}\n";
        let d = only(
            &check(&[("main.env.scl", src), ("base.env.scl", &base)]),
            "E0501",
        )
        .clone();
        assert_eq!(&*d.at.file, "main.env.scl");
        assert_eq!(
            d.at.span,
            span_of(src, "a = b.worker with { workdir = \"/w\" }")
        );
        assert_eq!(
            labels(&d),
            [
                (
                    "base.env.scl",
                    span_of(&base, "\"torch==2.1.2+cu118\""),
                    "`services.a.python.packages[0]` is set here"
                ),
                (
                    "base.env.scl",
                    span_of(&base, &format!("base = {DEVEL_121}")),
                    "CUDA 12.1.1 here"
                ),
            ]
        );
    }

    #[test]
    fn a_service_by_reference_or_template_instance_is_read_inside() {
        let base = format!(
            "env worker {{\n  base = {DEVEL_121}\n  python.packages = [\"torch==2.1.2+cu118\"]\n}}\n"
        );
        // `c` is held by reference (an env of another module); `t` is a
        // template instance with a `with` block.
        let src = "import \"./base.env.scl\" as b\nimport \"std/pytorch-cuda\" as torch\nenv stack {\n  services {\n    c = b.worker\n    t = torch.runtime(torch = \"2.1.2\", cuda = \"11.8\") with { base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\") }\n  }\n}\n";
        let diags = check(&[("main.env.scl", src), ("base.env.scl", &base)]);
        let mine: Vec<&Diagnostic> = diags
            .iter()
            .filter(|d| &*d.at.file == "main.env.scl")
            .collect();
        // torch of `c`; torch, torchvision, torchaudio of `t`.
        assert_eq!(mine.len(), 4, "{diags:#?}");
        assert_eq!(mine[0].at.span, span_of(src, "c = b.worker"));
        assert_eq!(
            labels(mine[0]),
            [
                (
                    "base.env.scl",
                    span_of(&base, "\"torch==2.1.2+cu118\""),
                    "`services.c.python.packages[0]` is set here"
                ),
                (
                    "base.env.scl",
                    span_of(&base, &format!("base = {DEVEL_121}")),
                    "CUDA 12.1.1 here"
                ),
            ]
        );
        let entry = span_of(src, "t = torch.runtime(");
        let with_base = span_of(
            src,
            "base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")",
        );
        for d in &mine[1..] {
            assert_eq!((d.code, d.at.span.start), ("E0501", entry.start), "{d:#?}");
            let l = labels(d);
            assert_eq!(l.len(), 2, "{d:#?}");
            // The pins are built in the template's body.
            assert_eq!(l[0].0, "std/pytorch-cuda.env.scl");
            assert!(l[0].2.starts_with("`services.t.python.packages["), "{d:#?}");
            assert_eq!(l[1], ("main.env.scl", with_base, "CUDA 12.1.1 here"));
        }
    }

    #[test]
    fn a_service_by_reference_is_checked_once_with_the_same_findings() {
        // `c` holds `b.worker` by reference: its findings are the worker's,
        // taken from base.env.scl's, and equal a check of `stack` from
        // scratch.
        let base = format!(
            "env worker {{\n  base = {DEVEL_121}\n  python.packages = [\"torch==2.1.2+cu118\"]\n}}\n"
        );
        let src = "import \"./base.env.scl\" as b\nenv stack {\n  services {\n    c = b.worker\n    d = b.worker with { workdir = \"/w\" }\n  }\n}\n";
        let (db, main) = open(&[("main.env.scl", src), ("base.env.scl", &base)]);
        crate::with_compiler_stack(move || {
            let values = module_values(&db, main);
            let spec = values.final_env("stack").unwrap().spec.clone().unwrap();
            let base = db.open(Path::new("/w/base.env.scl"));
            let worker = module_findings(&db, base).get("worker").unwrap();
            // The condition of the reuse: the service is the env's own IR.
            assert!(Arc::ptr_eq(&worker.spec, &spec.services["c"]));
            assert!(!Arc::ptr_eq(&worker.spec, &spec.services["d"]));
            let stack = module_findings(&db, main).get("stack").unwrap();
            let fresh = scl_checks::check(&spec, &check_inputs(&db, &spec));
            assert_eq!(*stack.findings, fresh);
            let fields: Vec<&str> = fresh.iter().map(|f| f.field.as_str()).collect();
            assert_eq!(
                fields,
                [
                    "services.c.python.packages[0]",
                    "services.d.python.packages[0]"
                ]
            );
            assert_eq!(worker.findings.len(), 1);
            assert_eq!(worker.findings[0].field, "python.packages[0]");
        });
    }

    #[test]
    fn a_list_element_is_at_its_own_expression_not_at_the_last_append() {
        // `volumes[0]` is the user's; `volumes += [notebooks]` of
        // std/jupyter wrote the list last.
        let src = "import \"std/jupyter\" as jupyter\nenv train {\n  base = image(\"python:3.11-slim\")\n  volumes = [{ name = \"data\", source = \"s3://b/data\", mount = \"/data\", mode = .read_only }]\n}\nenv notebook extends train, jupyter.lab(\n  token = secret(\"jupyter\", key = \"token\"),\n  notebooks = { name = \"notebooks\", source = \"host:./notebooks\", mount = \"/workspace\", mode = .read_write },\n) { }\n";
        let (db, main) = open(&[("main.env.scl", src)]);
        let (first, second, last) = crate::with_compiler_stack(move || {
            assert_eq!(db.check(main), Vec::new());
            let values = module_values(&db, main);
            let fin = values.final_env("notebook").expect("evaluated");
            let spec = fin.spec.as_ref().expect("normalized");
            let at = |field: &str| {
                locate_field(&db, main, "notebook", spec, field)
                    .map(|(m, sp)| (display_path(&db, db.module_file(m)).to_string(), sp))
            };
            let last = field_origin(&db, &fin.origins, "volumes[0]")
                .map(|o| display_path(&db, db.module_file(o.module)).to_string());
            (at("volumes[0]"), at("volumes[1]"), last)
        });
        assert_eq!(last.as_deref(), Some("std/jupyter.env.scl"));
        assert_eq!(
            first,
            Some((
                "main.env.scl".into(),
                span_of(src, "{ name = \"data\", source = \"s3://b/data\", mount = \"/data\", mode = .read_only }")
            ))
        );
        assert_eq!(
            second.map(|(f, _)| f).as_deref(),
            Some("std/jupyter.env.scl")
        );
    }
}
