//! Normalization: the final record of an env → the EnvSpec IR. Fills
//! defaults, infers the system package manager, de-duplicates set-like lists
//! ([`schema::set_like`]), carries requirements files' index URLs, and checks what
//! only the whole env can show (a built env needs a base, limits not below
//! requests, `depends_on` names sibling services without a cycle, one volume
//! per mount path, system packages valid for the manager, user names,
//! channels, the workdir, and every integer in the range of its IR field).

use crate::limits::{MAX_PRODUCED, VALUE_BYTES};
use crate::outcome::{Reported, R};
use crate::schema::{self, path, FieldDefault};
use crate::ty::{RecordTy, Ty};
use crate::validate;
use crate::value::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use scl_diag::{Diagnostic, Span};
use scl_ir::FieldPath;
use scl_ir::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How two elements of a set-like list compare: as written. Borrowed from
/// the element (no string is built), except for a kind no set-like list of
/// the schema holds.
#[derive(PartialEq, Eq, Hash)]
enum DedupKey<'a> {
    Str(&'a str),
    Int(i64),
    File(&'a str, &'a str),
    Other(String),
}

fn dedup_key(v: &Value) -> DedupKey<'_> {
    match v {
        Value::Str(s) => DedupKey::Str(s),
        Value::Int(i) => DedupKey::Int(*i),
        Value::File(f) => DedupKey::File(&f.path, &f.sha256),
        other => DedupKey::Other(format!("{other:?}")),
    }
}

/// The list `l` without repeated elements (first kept), or `None` if it has none.
fn dedup_list(l: &[Value]) -> Option<Vec<Value>> {
    // A short list of strings and integers (an env's packages, its ports)
    // is compared pair by pair, without hashing: most have no repeat.
    if l.len() <= 16 && l.iter().all(|v| matches!(v, Value::Str(_) | Value::Int(_))) {
        let repeat = (1..l.len()).any(|i| {
            let k = dedup_key(&l[i]);
            l[..i].iter().any(|v| dedup_key(v) == k)
        });
        if !repeat {
            return None;
        }
    }
    let mut seen = HashSet::with_capacity_and_hasher(l.len(), Default::default());
    let keys: Vec<bool> = l.iter().map(|v| seen.insert(dedup_key(v))).collect();
    if keys.iter().all(|k| *k) {
        return None;
    }
    Some(
        l.iter()
            .zip(keys)
            .filter(|(_, first)| *first)
            .map(|(v, _)| v.clone())
            .collect(),
    )
}

/// What normalizing `v` puts into the IR, as if copied: the bytes of every
/// string (a value shared by many references counts once per reference,
/// although some IR fields share the string itself: what is charged bounds
/// the size of the JSON and of the lowered files) and
/// [`VALUE_BYTES`] per list element or map entry;
/// services are shared specs, not copied. Walks at most until `limit` is
/// passed, so the walk itself is bounded by the budget.
///
/// `todo` is the walk's room, empty on entry and on return: one vector for
/// all the fields of an env, not one per field.
fn ir_bytes<'a>(v: &'a Value, limit: u64, todo: &mut Vec<&'a Value>) -> u64 {
    let entry = VALUE_BYTES as u64;
    // The bytes of a value with nothing inside it to walk.
    let leaf = |v: &Value| -> Option<u64> {
        Some(match v {
            Value::Str(s) => s.len() as u64,
            Value::Enum(e) => e.variant.len() as u64,
            Value::File(f) => (f.path.len() + f.sha256.len()) as u64,
            Value::Image(i) => {
                (i.reference.len() + i.digest.as_ref().map_or(0, |d| d.len())) as u64
            }
            Value::Secret(x) => (x.name.len() + x.key.len()) as u64,
            Value::List(_) | Value::Record(_) => return None,
            _ => 0,
        })
    };
    if let Some(n) = leaf(v) {
        return n;
    }
    let mut total: u64 = 0;
    todo.push(v);
    while let Some(v) = todo.pop() {
        if total > limit {
            break;
        }
        // The elements of a list or the fields of a record: leaves are
        // counted in place, the rest walked later.
        let mut inner = |x: &'a Value, total: &mut u64| match leaf(x) {
            Some(n) => *total += n,
            None => todo.push(x),
        };
        match v {
            Value::List(l) => {
                total += l.len() as u64 * entry;
                for x in l.iter() {
                    inner(x, &mut total);
                }
            }
            Value::Record(r) => {
                for (k, x) in r.iter() {
                    total += k.len() as u64 + entry;
                    inner(x, &mut total);
                }
            }
            other => total += leaf(other).unwrap_or(0),
        }
    }
    todo.clear();
    total
}

/// Sets the value at `path` of `r` (whose parents are records; nothing
/// happens when one is missing).
fn set_path(r: &mut Record, path: &FieldPath, v: Value) {
    let Some((last, parents)) = path.segments().split_last() else {
        return;
    };
    let mut cur = r;
    for seg in parents {
        match cur.get_mut(seg.as_str()) {
            Some(Value::Record(sub)) => cur = Arc::make_mut(sub),
            _ => return,
        }
    }
    cur.insert(last.as_str().into(), v);
}

/// The index URLs carried from the env's requirements files (`--index-url`,
/// `--extra-index-url` lines, in file and line order), each with its file
/// path and line, and the extra index URLs that pip would drop: pip's
/// `handle_option_line` replaces its whole index list with a line's
/// `--index-url` (the env's own `python.extra_index_urls`, given on the
/// command line, and every `--extra-index-url` read before that line
/// included), then appends the line's `--extra-index-url`s.
struct Carried {
    index_urls: Vec<(String, String, usize)>,
    extra_index_urls: Vec<String>,
    /// (file, line of the `--index-url`, extra URL pip drops there).
    dropped: Vec<(String, usize, String)>,
}

fn carried(r: &Record) -> Carried {
    let mut c = Carried {
        index_urls: Vec::new(),
        extra_index_urls: Vec::new(),
        dropped: Vec::new(),
    };
    let Some(Value::List(files)) = get(r, &["python", "requirements"]) else {
        return c;
    };
    // The extra index URLs pip holds so far: the env's own first.
    let mut extras = strs(get(r, &["python", "extra_index_urls"]));
    for f in files.iter() {
        let Value::File(file) = f else {
            continue;
        };
        let (path, text) = (&file.path, &file.text);
        // A file pip cannot be made to read like sclc was reported when
        // it was checked.
        let Ok(lines) = validate::requirements(text) else {
            continue;
        };
        for l in lines {
            let validate::ReqLine::Options { line, options, .. } = l else {
                continue;
            };
            let value = |o: &validate::ReqOpt| o.value.clone().unwrap_or_default();
            if let Some(o) = options.iter().rev().find(|o| o.name == "--index-url") {
                for e in extras.drain(..) {
                    c.dropped.push((path.to_string(), line, e));
                }
                c.index_urls.push((value(o), path.to_string(), line));
            }
            for o in options.iter().filter(|o| o.name == "--extra-index-url") {
                extras.push(value(o));
                c.extra_index_urls.push(value(o));
            }
        }
    }
    // A URL pip drops and reads again later is in its final list.
    c.dropped.retain(|(_, _, u)| !extras.contains(u));
    let mut seen = HashSet::default();
    c.dropped.retain(|(_, _, u)| seen.insert(u.clone()));
    c
}

/// The wheel indexes the torch pins of `r` need, in order: a pin of
/// torch, torchvision or torchaudio with a CUDA local version
/// (`torch==2.1.2+cu118`, in `python.packages` or a requirements file) is
/// on `https://download.pytorch.org/whl/cu118` only, which pip must be
/// given with `--extra-index-url` (PyTorch's install instructions; not
/// `--index-url`, which would hide PyPI from the other packages).
fn torch_indexes(r: &Record) -> Vec<String> {
    // Only a requirement whose name starts with `torch` can pin one of the
    // three: the others are not parsed (every env reads its packages here).
    let mut reqs: Vec<String> = match get(r, &["python", "packages"]) {
        Some(Value::List(l)) => l
            .iter()
            .filter(|v| !matches!(v, Value::Str(t) if !may_name_torch(t)))
            .map(s)
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::List(files)) = get(r, &["python", "requirements"]) {
        for f in files.iter() {
            if let Value::File(file) = f {
                if let Ok(lines) = validate::requirements(&file.text) {
                    for l in lines {
                        if let validate::ReqLine::Requirement { text, .. } = l {
                            if may_name_torch(&text) {
                                reqs.push(text);
                            }
                        }
                    }
                }
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for req in reqs {
        let Some((name, version)) = scl_checks::exact_pin(&req) else {
            continue;
        };
        if !matches!(name.as_str(), "torch" | "torchvision" | "torchaudio") {
            continue;
        }
        let (release, Some(local)) = scl_domain::version::split_local(&version) else {
            continue;
        };
        // torchvision's and torchaudio's versions are not torch's: the
        // table is asked for torch's (a release it knows gives its index;
        // the variant's index otherwise).
        let torch = match name.as_str() {
            "torch" => Some(release.to_string()),
            "torchvision" => {
                scl_domain::torch::release_of_torchvision(release).map(|r| r.torch.to_string())
            }
            _ => scl_domain::torch::release_of_torchaudio(release).map(|r| r.torch.to_string()),
        };
        let Some(u) = scl_domain::torch::wheel_index(torch.as_deref().unwrap_or(release), local)
        else {
            continue;
        };
        if !out.contains(&u) {
            out.push(u);
        }
    }
    out
}

/// The record as the IR will read it: set-like lists de-duplicated, and the
/// index URLs of requirements files carried into `python.index_url` (when
/// the env sets none) and `python.extra_index_urls`. Used by [`normalize`]
/// and [`self_view`]; borrowed when nothing changes.
fn effective(r: &Record) -> Cow<'_, Record> {
    let mut out = Cow::Borrowed(r);
    let mut c = carried(r);
    // The wheel index of each torch `+cuXYZ` pin, unless the env names it.
    let index = get(r, &["python", "index_url"]).map(s);
    let own = strs(get(r, &["python", "extra_index_urls"]));
    for u in torch_indexes(r) {
        if index.as_deref() != Some(u.as_str())
            && !own.contains(&u)
            && !c.extra_index_urls.contains(&u)
        {
            c.extra_index_urls.push(u);
        }
    }
    if !c.extra_index_urls.is_empty() {
        let mut all = own;
        all.extend(c.extra_index_urls);
        let list = Value::List(Arc::new(all.into_iter().map(Value::str).collect()));
        set_path(out.to_mut(), &path(&["python", "extra_index_urls"]), list);
    }
    if let (None, Some((u, _, _))) = (get(r, &["python", "index_url"]), c.index_urls.first()) {
        set_path(
            out.to_mut(),
            &path(&["python", "index_url"]),
            Value::str(u.as_str()),
        );
    }
    for path in schema::set_like() {
        if let Some(Value::List(l)) = get_path(&out, path) {
            if let Some(d) = dedup_list(l) {
                set_path(out.to_mut(), path, Value::List(Arc::new(d)));
            }
        }
    }
    out
}

/// Whether the PEP 508 requirement `req` may name `torch`, `torchvision`
/// or `torchaudio`: its name (after leading blanks) starts with `torch`,
/// in any case. PEP 503 normalization only lowercases a name and turns
/// runs of `-`, `_` and `.` into one `-`, and none of the three holds one,
/// so a requirement that fails this names none of them.
fn may_name_torch(req: &str) -> bool {
    req.trim_start()
        .as_bytes()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"torch"))
}

/// Lexically normalizes a container path (`/data/` → `/data`, `/a/./b` →
/// `/a/b`, `/a/../b` → `/b`).
fn clean_path(p: &str) -> String {
    // Most paths are clean already: copied, not rebuilt.
    let clean = p == "/"
        || (p.starts_with('/') && p[1..].split('/').all(|c| !matches!(c, "" | "." | "..")));
    if clean {
        return p.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The value at the path of schema field names `path` of `r`
/// (`&["python", "version"]`).
fn get<'a>(r: &'a Record, path: &[&str]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut cur = r;
    for seg in parents {
        match cur.get_str(seg)? {
            Value::Record(x) => cur = x,
            _ => return None,
        }
    }
    cur.get_str(last)
}

/// The value at `path` of `r`.
fn get_path<'a>(r: &'a Record, path: &FieldPath) -> Option<&'a Value> {
    let (last, parents) = path.segments().split_last()?;
    let mut cur = r;
    for seg in parents {
        match cur.get_str(seg.as_str())? {
            Value::Record(x) => cur = x,
            _ => return None,
        }
    }
    cur.get_str(last.as_str())
}

fn s(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Enum(e) => e.variant.to_string(),
        other => other.to_string(),
    }
}

/// [`s`] as shared text: a string value's own text, not a copy.
fn shared(v: &Value) -> Arc<str> {
    match v {
        Value::Str(s) => s.clone(),
        Value::Enum(e) => e.variant.clone(),
        other => other.to_string().into(),
    }
}

/// [`strs`] as shared text (the list's own strings, not copies).
fn shared_strs(v: Option<&Value>) -> Vec<Arc<str>> {
    match v {
        Some(Value::List(l)) => l.iter().map(shared).collect(),
        _ => Vec::new(),
    }
}

fn strs(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::List(l)) => l.iter().map(s).collect(),
        _ => Vec::new(),
    }
}

/// The schema's string default of field `name` of `rt` (see
/// [`schema::default_str`]; empty if it has none).
fn str_default(rt: RecordTy, name: &str) -> String {
    schema::default_str(rt, name)
        .unwrap_or_default()
        .to_string()
}

/// The schema's integer default of field `name` of `rt` (0 if it has none).
fn int_default(rt: RecordTy, name: &str) -> i64 {
    schema::default_int(rt, name).unwrap_or(0)
}

/// The variant of enum field `name` of record `r` (of type `rt`), else its
/// default from the schema.
fn variant_or_default<'a>(rt: RecordTy, r: &'a Record, name: &str) -> Cow<'a, str> {
    match r.get_str(name) {
        Some(Value::Enum(e)) => Cow::Borrowed(&*e.variant),
        _ => Cow::Borrowed(schema::default_str(rt, name).unwrap_or_default()),
    }
}

fn rec(v: Option<&Value>) -> Option<&Record> {
    match v {
        Some(Value::Record(r)) => Some(r),
        _ => None,
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The package manager of an image reference, by the base-image table
/// ([`scl_ir::bases`]): alpine → apk; Fedora, UBI, Rocky, Alma, CentOS,
/// Amazon Linux (and `nvidia/cuda` on UBI/Rocky) → dnf; else apt.
pub fn infer_manager(image: &str) -> SystemManager {
    scl_ir::bases::manager(image)
}

/// What normalization needs from the evaluator that runs it: a place for
/// diagnostics, the evaluation budget, the final value of a service's env,
/// and display paths for labels. (A trait, so that normalization does not
/// depend on the evaluator.)
pub(crate) trait Sink {
    /// Records a diagnostic located in module `m`.
    fn report(&self, m: crate::ModuleId, d: Diagnostic) -> Reported;
    /// Records a warning with a help (none when empty).
    fn warn(&self, m: crate::ModuleId, code: &'static str, span: Span, msg: String, help: &str);
    /// Charges `bytes` copied into the IR to the evaluation budget; `at`
    /// gives the place of the error, asked for only past the budget.
    fn charge_ir(&self, at: &dyn Fn() -> (crate::ModuleId, Span), bytes: usize) -> R<()>;
    /// The final, normalized value of an env (a service).
    fn final_of(&self, env: &Arc<EnvValue>) -> R<Arc<FinalEnv>>;
    /// `f` with the services it holds by reference added to its IR
    /// (`Evaluator::complete`).
    fn complete(&self, f: &Arc<FinalEnv>) -> R<Arc<FinalEnv>>;
    /// The complete IR of each env `refs` name, as their modules' values
    /// hold them (`Host::completed_specs`), in order; `None` for one that
    /// failed.
    fn completed_specs(&self, refs: &[&crate::value::EnvRef]) -> Vec<Option<Arc<EnvSpec>>>;
    /// The display path of a module, for a label in another file.
    fn display_path(&self, m: crate::ModuleId) -> Arc<str>;
}

/// Where a diagnostic about `path` points: the origin of `path` (or of the
/// nearest path above it), else `span` in module `m` (the env's own).
pub(crate) fn origin_at(
    origins: &Origins,
    m: crate::ModuleId,
    span: Span,
    path: &FieldPath,
) -> (crate::ModuleId, Span) {
    origins
        .nearest(path)
        .map_or((m, span), |o| (o.module, o.span))
}

/// Reports error `code` at `at(path)` (with `help` unless it is empty) and
/// marks `failed`: how normalization and the services' checks report.
fn report_at(
    ev: &impl Sink,
    at: &dyn Fn(&FieldPath) -> (crate::ModuleId, Span),
    failed: &std::cell::Cell<bool>,
    path: &FieldPath,
    code: &'static str,
    msg: String,
    help: String,
) {
    let (m, span) = at(path);
    let mut d = Diagnostic::error(code, span, msg);
    if !help.is_empty() {
        d = d.with_help(help);
    }
    ev.report(m, d);
    failed.set(true);
}

/// The names of the services of env record `r` (those that failed too), in
/// order: what a `depends_on` may name.
pub(crate) fn service_names(r: &Record) -> Vec<&Arc<str>> {
    rec(get(r, &["services"]))
        .map(|s| s.keys().collect())
        .unwrap_or_default()
}

/// The complete IR of each service held by reference, from its module's
/// values (`Sink::completed_env`), in order; the bool is true when one of
/// them failed (and is left out).
pub(crate) fn pending_specs(
    ev: &impl Sink,
    pending: &[(String, Arc<crate::value::EnvRef>)],
) -> (Vec<(String, Arc<EnvSpec>)>, bool) {
    let mut failed = false;
    let mut out = Vec::with_capacity(pending.len());
    let refs: Vec<&crate::value::EnvRef> = pending.iter().map(|(_, r)| &**r).collect();
    for ((name, _), sp) in pending.iter().zip(ev.completed_specs(&refs)) {
        match sp {
            Some(sp) => out.push((name.clone(), sp)),
            None => failed = true,
        }
    }
    (out, failed)
}

pub(crate) fn normalize(
    ev: &impl Sink,
    env: &Arc<EnvValue>,
    r: &Record,
    origins: &Origins,
) -> R<(EnvSpec, Option<Arc<crate::value::PendingServices>>)> {
    let failed = std::cell::Cell::new(false);
    // Where to point for a path: its origin (or the origin of the nearest
    // path above it), else the env's own span.
    let at = |path: &FieldPath| origin_at(origins, env.module, env.extends_span, path);
    let report = |path: &FieldPath, code: &'static str, msg: String, help: String| {
        report_at(ev, &at, &failed, path, code, msg, help)
    };
    let invalid = |path: &FieldPath, code: &'static str, e: validate::Invalid| {
        report(path, code, e.msg, e.help);
    };
    // An integer field of the IR: in `lo..=hi`, else E0318 (never clamped).
    // (The path is made only when the value is out of range.)
    let ranged = |path: &dyn Fn() -> FieldPath, v: i64, lo: i64, hi: i64| -> Option<i64> {
        if (lo..=hi).contains(&v) {
            Some(v)
        } else {
            let path = &path();
            let help = if *path == schema::path(&["user", "uid"]) {
                "4294967295 is `(uid_t)-1`, which chown(2) and setuid(2) read as \"no change\"; write a uid from 0 to 4294967294"
            } else {
                "write a value in that range (sclc never clamps a value)"
            };
            report(
                path,
                "E0318",
                format!("`{path}` is {v}, out of range ({lo} to {hi})"),
                help.into(),
            );
            None
        }
    };
    // An integer field of record type `rt` in the range the schema gives.
    let u32_field = |rt: RecordTy, name: &str, path: &dyn Fn() -> FieldPath, v: i64| -> u32 {
        let (lo, hi) = schema::range(rt, name);
        ranged(path, v, lo, hi).map_or(0, |v| v as u32)
    };
    // Requirements files' index URLs: one index in all, and no extra index
    // URL that pip would drop, or an error.
    for (file, line, u) in carried(r).dropped {
        report(&path(&["python", "requirements"]),
            "E0332",
            format!("{file} line {line}: pip replaces its index URLs with this line's `--index-url`, so the extra index URL {} given before it would not be used", validate::quoted(&u)),
            "put the `--index-url` line before every `--extra-index-url` (in the first requirements file), or set `python.index_url` in the env and remove the line".into(),
        );
    }
    if let Some(own) = get(r, &["python", "index_url"]).map(s) {
        for (u, file, line) in carried(r).index_urls {
            if u != own {
                report(&path(&["python", "requirements"]),
                    "E0332",
                    format!("{file} line {line}: `--index-url {u}` conflicts with `python.index_url` = {}", validate::quoted(&own)),
                    "pip would use the file's index instead of the env's: remove the line, or make them the same".into(),
                );
            }
        }
    } else {
        let urls = carried(r).index_urls;
        if let Some((first, ffile, fline)) = urls.first() {
            for (u, file, line) in &urls[1..] {
                if u != first {
                    report(&path(&["python", "requirements"]),
                        "E0332",
                        format!("{file} line {line}: `--index-url {u}` conflicts with `--index-url {first}` ({ffile} line {fline})"),
                        "a pip install has one index: keep one `--index-url` (use `--extra-index-url` for the others)".into(),
                    );
                }
            }
        }
    }
    let r: &Record = &effective(r);
    // Every byte this puts into the IR is charged to the evaluation
    // budget before it is built (field by field, at the field's origin),
    // so that many references to one large value stop at E0316.
    let mut todo = Vec::new();
    for (k, v) in r.iter() {
        if &**k == "services" {
            continue;
        }
        // A top-level key is its own path (looked up only for an error).
        let at = || {
            origins
                .get(&FieldPath::root().key(k))
                .map_or((env.module, env.extends_span), |o| (o.module, o.span))
        };
        ev.charge_ir(&at, ir_bytes(v, MAX_PRODUCED, &mut todo) as usize)?;
    }
    // Kept without `apiVersion` (it is added on output), so that an env used
    // as a service is shared, not copied.
    let mut spec = EnvSpec {
        description: r.get_str("description").map(s),
        ..EnvSpec::default()
    };
    if let Some(Value::Image(i)) = get(r, &["base"]) {
        spec.base = Some(ImageRef {
            reference: i.reference.to_string(),
            digest: i.digest.as_ref().map(|d| d.to_string()),
        });
    }
    if let Some(Value::Image(i)) = get(r, &["builder"]) {
        spec.builder = Some(ImageRef {
            reference: i.reference.to_string(),
            digest: i.digest.as_ref().map(|d| d.to_string()),
        });
    }
    spec.test = strs(get(r, &["test"]));
    spec.writable = strs(get(r, &["writable"]));
    // services: those held by reference are added by `complete`, which
    // then checks them all together.
    let mut pending: Vec<(String, Arc<crate::value::EnvRef>)> = Vec::new();
    if let Some(services) = rec(get(r, &["services"])) {
        for (name, v) in services.iter() {
            let e = match v {
                Value::Env(e) => e,
                Value::EnvRef(r) => {
                    pending.push((name.to_string(), r.clone()));
                    continue;
                }
                _ => continue,
            };
            match ev.final_of(e).and_then(|f| ev.complete(&f)) {
                Ok(f) => match &f.spec {
                    Some(sp) => {
                        spec.services.insert(name.to_string(), sp.clone());
                    }
                    None => failed.set(true),
                },
                Err(_) => failed.set(true),
            }
        }
        if pending.is_empty() && check_services(ev, &at, &service_names(r), &spec.services) {
            failed.set(true);
        }
    }
    // An env that only has services (even ones that failed) is not built.
    let has_services = rec(get(r, &["services"])).is_some_and(|m| !m.is_empty());
    let built = spec.base.is_some() || !has_services;
    // An env without `base` and without services is a parent (a mixin):
    // not an error here. E0209 comes when it is used as a service (below)
    // or lowered (the backends).
    // system
    let packages = shared_strs(get(r, &["system", "packages"]));
    let manager = match get(r, &["system", "manager"]) {
        Some(Value::Enum(e)) => {
            Some(SystemManager::from_name(&e.variant).unwrap_or(SystemManager::Apt))
        }
        _ => spec.base.as_ref().map(|b| infer_manager(&b.reference)),
    };
    if let Some(manager) = manager {
        // Each name by the grammar of every manager that installs it: the
        // base's, and the builder image's (a multi-stage build installs the
        // system packages in its build stage too, with that image's manager,
        // whatever `system.manager` says). One error per name.
        let grammar = |m: SystemManager| match m {
            SystemManager::Apt => 0,
            SystemManager::Dnf | SystemManager::Yum | SystemManager::Microdnf => 1,
            SystemManager::Apk => 2,
        };
        let check = |g: u8, p: &str| match g {
            0 => validate::debian_package(p),
            1 => validate::rpm_package(p),
            _ => validate::apk_package(p),
        };
        let builder = spec
            .builder
            .as_ref()
            .map(|b| (b, infer_manager(&b.reference)))
            .filter(|&(_, m)| grammar(m) != grammar(manager));
        for p in &packages {
            let result = check(grammar(manager), p).and_then(|()| match builder {
                Some((b, m)) => check(grammar(m), p).map_err(|e| validate::Invalid {
                    msg: format!(
                        "{}: the build stage of `builder` ({}) installs the system packages with {}",
                        e.msg,
                        b.reference,
                        m.command()
                    ),
                    help: e.help,
                }),
                None => Ok(()),
            });
            if let Err(e) = result {
                invalid(&path(&["system", "packages"]), "E0320", e);
            }
        }
        if spec.base.is_some() || !packages.is_empty() {
            spec.system = Some(System { packages, manager });
        }
    }
    // python
    if let Some(py) = rec(get(r, &["python"])) {
        let manager = match &*variant_or_default(RecordTy::Python, py, "manager") {
            "uv" => PythonManager::Uv,
            "conda" => PythonManager::Conda,
            _ => PythonManager::Pip,
        };
        let requirements = match py.get_str("requirements") {
            Some(Value::List(l)) => l
                .iter()
                .filter_map(|f| match f {
                    Value::File(f) => Some(FileRef {
                        path: f.path.to_string(),
                        sha256: f.sha256.to_string(),
                    }),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        spec.python = Some(Python {
            version: py.get_str("version").map(s),
            manager,
            packages: shared_strs(py.get_str("packages")),
            requirements,
            index_url: py.get_str("index_url").map(s),
            extra_index_urls: strs(py.get_str("extra_index_urls")),
            index_credentials: py.get_str("index_credentials").and_then(secret_ref),
        });
    }
    if let Some(c) = rec(get(r, &["conda"])) {
        let channels = strs(c.get_str("channels"));
        for ch in &channels {
            if let Err(e) = validate::conda_channel(ch) {
                invalid(&path(&["conda", "channels"]), "E0323", e);
            }
        }
        let packages = shared_strs(c.get_str("packages"));
        for p in &packages {
            if let Err(e) = validate::conda_spec_source(p, &channels) {
                invalid(&path(&["conda", "packages"]), "E0336", e);
            }
        }
        spec.conda = Some(Conda { channels, packages });
    }
    // resources
    if let Some(res) = rec(get(r, &["resources"])) {
        let list = |which: &str| -> Option<ResourceList> {
            let l = rec(res.get_str(which))?;
            let cpu = match l.get_str("cpu") {
                Some(Value::Cpu(c)) if *c < 0 => {
                    let path = path(&["resources"]).key(which).key("cpu");
                    report(
                        &path,
                        "E0318",
                        format!(
                            "`{path}` is {}, out of range (a CPU quantity cannot be negative)",
                            format_cpu(*c)
                        ),
                        "write a number of cores (`4`, `0.5`) or millicores (`500m`)".into(),
                    );
                    None
                }
                Some(Value::Cpu(c)) => Some(*c as u64),
                _ => None,
            };
            // (The path is made only for an error.)
            let memory = |v: Option<&Value>, path: &dyn Fn() -> FieldPath| match v {
                Some(Value::Memory(b)) => match u64::try_from(b.get()) {
                    Ok(b) => Some(b),
                    Err(_) => {
                        let path = &path();
                        report(
                            path,
                            "E0318",
                            format!(
                                "`{path}` is {} bytes, out of range (0 to {})",
                                b.get(),
                                u64::MAX
                            ),
                            String::new(),
                        );
                        None
                    }
                },
                _ => None,
            };
            let gpu = rec(l.get_str("gpu")).map(|g| Gpu {
                count: int(g.get_str("count")).map_or(0, |c| {
                    u32_field(
                        RecordTy::Gpu,
                        "count",
                        &|| path(&["resources"]).key(which).key("gpu").key("count"),
                        c,
                    )
                }),
                kind: g.get_str("type").map(s),
                node_label: g.get_str("node_label").map(s),
                memory: memory(g.get_str("memory"), &|| {
                    path(&["resources"]).key(which).key("gpu").key("memory")
                }),
            });
            Some(ResourceList {
                cpu,
                memory: memory(l.get_str("memory"), &|| {
                    path(&["resources"]).key(which).key("memory")
                }),
                gpu,
            })
        };
        let requests = list("requests");
        let limits = list("limits");
        if let (Some(rq), Some(lm)) = (&requests, &limits) {
            type Pair<'a> = (&'a str, Option<u64>, Option<u64>, fn(u64) -> String);
            let pairs: [Pair; 4] = [
                ("cpu", rq.cpu, lm.cpu, |v| format_cpu(v as i64)),
                ("memory", rq.memory, lm.memory, |v| format_memory(v as i128)),
                (
                    "gpu.count",
                    rq.gpu.as_ref().map(|g| g.count as u64),
                    lm.gpu.as_ref().map(|g| g.count as u64),
                    |v| v.to_string(),
                ),
                (
                    "gpu.memory",
                    rq.gpu.as_ref().and_then(|g| g.memory),
                    lm.gpu.as_ref().and_then(|g| g.memory),
                    |v| format_memory(v as i128),
                ),
            ];
            for (field, q, l, fmt) in pairs {
                if let (Some(q), Some(l)) = (q, l) {
                    if l < q {
                        let below = FieldPath::parse(field);
                        let under = |which: &'static str| {
                            let mut p = path(&["resources", which]);
                            for seg in below.segments() {
                                p.push(seg.clone());
                            }
                            p
                        };
                        let (m, span) = at(&under("limits"));
                        let (qm, qspan) = at(&under("requests"));
                        ev.report(
                            m,
                            Diagnostic::error(
                                "E0304",
                                span,
                                format!("the limit of {field} ({}) is below its request ({})", fmt(l), fmt(q)),
                            )
                            .with_label(ev.display_path(qm), qspan, format!("requested {}", fmt(q)))
                            .with_help("raise the limit or lower the request; Kubernetes rejects a pod whose limit is below its request"),
                        );
                        failed.set(true);
                    }
                }
            }
        }
        if requests.is_some() || limits.is_some() {
            spec.resources = Some(Resources { requests, limits });
        }
    }
    // volumes
    if let Some(Value::List(vs)) = get(r, &["volumes"]) {
        spec.volumes.reserve_exact(vs.len());
        for v in vs.iter() {
            let Value::Record(v) = v else { continue };
            let mode = match &*variant_or_default(RecordTy::Volume, v, "mode") {
                "read_write" => VolumeMode::ReadWrite,
                "read_write_many" => VolumeMode::ReadWriteMany,
                _ => VolumeMode::ReadOnly,
            };
            spec.volumes.push(Volume {
                name: v.get_str("name").map(shared).unwrap_or_default(),
                source: v.get_str("source").map(shared).unwrap_or_default(),
                mount: v.get_str("mount").map(shared).unwrap_or_default(),
                mode,
            });
        }
        let mut names: HashSet<&str> = HashSet::default();
        let mut mounts: BTreeMap<String, &str> = BTreeMap::new();
        for v in &spec.volumes {
            if !names.insert(&v.name) {
                report(
                    &path(&["volumes"]),
                    "E0208",
                    format!("two volumes are named `{}`", v.name),
                    "volume names must be unique".into(),
                );
            }
            let mount = clean_path(&v.mount);
            if let Some(first) = mounts.get(&mount) {
                report(
                    &path(&["volumes"]),
                    "E0330",
                    format!(
                        "volumes `{first}` and `{}` are both mounted at `{mount}`",
                        v.name
                    ),
                    "give each volume its own mount path: the second would hide the first".into(),
                );
            } else {
                mounts.insert(mount, &v.name);
            }
        }
    }
    if let Some(vars) = rec(get(r, &["vars"])) {
        // The hidden mark of a record checked against a schema type is
        // not an entry (a `Volume` assigned to a map keeps it).
        spec.vars = Fields::with_capacity(vars.len());
        for (k, v) in vars.iter().filter(|(k, _)| !is_type_mark(k)) {
            let val = match v {
                Value::Secret(x) => VarValue::Secret(SecretRef {
                    secret: x.name.to_string(),
                    key: x.key.to_string(),
                }),
                other => VarValue::Plain(shared(other)),
            };
            spec.vars.insert(k.clone(), val);
        }
    }
    if let Some(Value::List(a)) = get(r, &["assets"]) {
        for x in a.iter() {
            let Value::Record(x) = x else { continue };
            let asset = if x.get_str("kind").map(s).as_deref() == Some("huggingface") {
                Asset::Huggingface {
                    repo: x.get_str("repo").map(s).unwrap_or_default(),
                    files: strs(x.get_str("files")),
                    revision: x
                        .get_str("revision")
                        .map(s)
                        .unwrap_or_else(|| "main".into()),
                    to: x.get_str("to").map(s).unwrap_or_default(),
                    token: x.get_str("token").and_then(secret_ref),
                }
            } else {
                Asset::Url {
                    url: x.get_str("url").map(s).unwrap_or_default(),
                    sha256: x.get_str("sha256").map(s),
                    to: x.get_str("to").map(s).unwrap_or_default(),
                }
            };
            spec.assets.push(asset);
        }
    }
    if let Some(Value::List(fs)) = get(r, &["files"]) {
        for f in fs.iter() {
            if let Value::Record(f) = f {
                spec.files.push(Copy {
                    from: f.get_str("from").map(s).unwrap_or_default(),
                    to: f.get_str("to").map(s).unwrap_or_default(),
                });
            }
        }
    }
    spec.setup = strs(get(r, &["setup"]));
    for (i, step) in spec.setup.iter().enumerate() {
        // In a Dockerfile a trailing backslash continues the command on the
        // next line; a setup step is a script of its own, so it does not.
        if step.trim_end().ends_with('\\') {
            let (m, span) = at(&path(&["setup"]));
            ev.warn(
                m,
                "W0006",
                span,
                format!("setup step {i} ends with a backslash, but each step is a script of its own: the next step does not continue it"),
                "join the lines into one step, or write a multi-line step with `\"\"\"`",
            );
        }
    }
    spec.entrypoint = strs(get(r, &["entrypoint"]));
    spec.command = strs(get(r, &["command"]));
    if let Some(w) = get(r, &["workdir"]) {
        if let Err(e) = validate::workdir(&s(w)) {
            invalid(&path(&["workdir"]), "E0328", e);
        }
    }
    if built {
        spec.workdir = Some(
            get(r, &["workdir"])
                .map(s)
                .unwrap_or_else(|| str_default(RecordTy::Env, "workdir")),
        );
        let user = rec(get(r, &["user"]));
        let name = user
            .and_then(|u| u.get_str("name"))
            .map(s)
            .unwrap_or_else(|| str_default(RecordTy::User, "name"));
        if let Err(e) = validate::user_name(&name) {
            invalid(&path(&["user", "name"]), "E0321", e);
        }
        // 4294967295 is `(uid_t)-1`, which chown(2) and setuid(2) read as
        // "no change", so the largest uid is one below it.
        let uid = int(user.and_then(|u| u.get_str("uid")))
            .unwrap_or_else(|| int_default(RecordTy::User, "uid"));
        let uid = u32_field(RecordTy::User, "uid", &|| path(&["user", "uid"]), uid);
        spec.user = Some(User { name, uid });
    } else if let Some(w) = get(r, &["workdir"]) {
        spec.workdir = Some(s(w));
    }
    if let Some(Value::List(ps)) = get(r, &["ports"]) {
        let mut ports = Vec::new();
        for p in ps.iter() {
            if let Value::Int(p) = p {
                let (lo, hi) = schema::range(RecordTy::Env, "ports");
                if let Some(p) = ranged(&|| path(&["ports"]), *p, lo, hi) {
                    ports.push(p as u16);
                }
            }
        }
        spec.ports = ports;
    }
    if let Some(d) = rec(get(r, &["distributed"])) {
        let field = |k: &str| {
            u32_field(
                RecordTy::Distributed,
                k,
                &|| path(&["distributed"]).key(k),
                int(d.get_str(k)).unwrap_or_else(|| int_default(RecordTy::Distributed, k)),
            )
        };
        let nodes = field("nodes");
        let procs_per_node = field("procs_per_node");
        let elastic = rec(d.get_str("elastic")).map(|x| {
            let f = |k: &str| {
                u32_field(
                    RecordTy::Elastic,
                    k,
                    &|| path(&["distributed", "elastic"]).key(k),
                    int(x.get_str(k)).unwrap_or_else(|| int_default(RecordTy::Elastic, k)),
                )
            };
            let el = Elastic {
                min_nodes: f("min_nodes"),
                max_nodes: f("max_nodes"),
                max_restarts: f("max_restarts"),
            };
            if el.min_nodes > 0 && el.max_nodes > 0 && el.max_nodes < el.min_nodes {
                report(
                    &path(&["distributed", "elastic", "max_nodes"]),
                    "E0318",
                    format!(
                        "`distributed.elastic.max_nodes` ({}) is below `min_nodes` ({})",
                        el.max_nodes, el.min_nodes
                    ),
                    "torchrun's `--nnodes=MIN:MAX` needs MIN ≤ MAX".into(),
                );
            }
            // The job starts with `nodes` nodes, which the elastic bounds
            // must allow (torchrun `--nnodes=MIN:MAX`).
            let bounds_ok = el.min_nodes > 0 && el.max_nodes >= el.min_nodes;
            if bounds_ok && nodes > 0 && !(el.min_nodes..=el.max_nodes).contains(&nodes) {
                report(
                    &path(&["distributed", "nodes"]),
                    "E0318",
                    format!(
                        "`distributed.nodes` ({nodes}) is outside the elastic bounds ({} to {})",
                        el.min_nodes, el.max_nodes
                    ),
                    "set `nodes` between `elastic.min_nodes` and `elastic.max_nodes`".into(),
                );
            }
            el
        });
        spec.distributed = Some(Distributed {
            backend: match &*variant_or_default(RecordTy::Distributed, d, "backend") {
                "gloo" => Backend::Gloo,
                "mpi" => Backend::Mpi,
                _ => Backend::Nccl,
            },
            launcher: match &*variant_or_default(RecordTy::Distributed, d, "launcher") {
                "deepspeed" => Launcher::Deepspeed,
                "accelerate" => Launcher::Accelerate,
                "mpirun" => Launcher::Mpirun,
                _ => Launcher::Torchrun,
            },
            nodes,
            procs_per_node,
            elastic,
        });
    }
    spec.depends_on = strs(get(r, &["depends_on"]));
    if let Some(l) = rec(get(r, &["labels"])) {
        // In key order, into exactly the room needed (the IR is kept).
        spec.labels = Fields::with_capacity(l.len());
        for (k, v) in l.iter().filter(|(k, _)| !is_type_mark(k)) {
            spec.labels.insert(k.clone(), shared(v));
        }
    }
    spec.ignore = strs(get(r, &["ignore"]));
    if failed.get() {
        // The env fails, but its services by reference are still checked
        // together with the others (as they would be if held by value).
        if !pending.is_empty() {
            let mut all = spec.services.clone();
            all.extend(pending_specs(ev, &pending).0);
            check_services(ev, &at, &service_names(r), &all);
        }
        return Err(Reported);
    }
    let pending = (!pending.is_empty()).then(|| {
        Arc::new(crate::value::PendingServices {
            module: env.module,
            span: env.extends_span,
            name: env.name.clone(),
            used_at: env.used_at,
            services: pending,
        })
    });
    Ok((spec, pending))
}

/// The checks of an env's services together (`depends_on` names one of
/// `names`, the env's services, and no cycle of `depends_on`), reported at
/// `at(path)`; true when one failed.
pub(crate) fn check_services(
    ev: &impl Sink,
    at: &dyn Fn(&FieldPath) -> (crate::ModuleId, Span),
    names: &[&Arc<str>],
    services: &BTreeMap<String, Arc<EnvSpec>>,
) -> bool {
    let failed = std::cell::Cell::new(false);
    let report = |path: &FieldPath, code: &'static str, msg: String, help: String| {
        report_at(ev, at, &failed, path, code, msg, help)
    };
    // A service is built: it needs an image (an env meant only as a
    // parent has none).
    for (name, sp) in services {
        if sp.base.is_none() && sp.services.is_empty() {
            report(
                &path(&["services"]).key(name),
                "E0209",
                format!("service `{name}` has no `base` image, so there is nothing to run"),
                "set `base = image(\"debian:12.5\")` in the service's env, or extend an env that has one".into(),
            );
        }
    }
    if services.values().all(|s| s.depends_on.is_empty()) {
        return failed.get();
    }
    for (name, sp) in services {
        for dep in &sp.depends_on {
            if !names.iter().any(|n| ***n == **dep) {
                report(
                    &path(&["services"]).key(name),
                    "E0208",
                    format!("service `{name}` depends on `{dep}`, which is not a service here"),
                    format!(
                        "services: {}",
                        names.iter().map(|n| &***n).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
    }
    for (cycle, size) in depends_on_cycles(services) {
        let shown: Vec<String> = cycle.iter().map(|n| format!("`{n}`")).collect();
        let more = if size > cycle.len() - 1 {
            format!(" ({size} services in all depend on each other in cycles)")
        } else {
            String::new()
        };
        report(
            &path(&["services"]).key(&cycle[0]),
            "E0329",
            if cycle.len() == 2 {
                format!("service `{}` depends on itself{more}", cycle[0])
            } else {
                format!(
                    "services depend on each other in a cycle: {}{more}",
                    shown.join(" → ")
                )
            },
            "a service starts after the services it depends on, so a cycle can never start: remove one `depends_on` entry".into(),
        );
    }
    failed.get()
}

/// The cycles of the services' `depends_on` graph: one for each strongly
/// connected component that has a cycle (found with an iterative Tarjan, so
/// linear in services + edges, whatever the shape), as the shortest path
/// from the component's smallest service name back to it (`[a, b, a]`;
/// `[a, a]` for a service that depends on itself), with the size of the
/// component; sorted by name. Unknown names are not edges.
fn depends_on_cycles(services: &BTreeMap<String, Arc<EnvSpec>>) -> Vec<(Vec<String>, usize)> {
    let names: Vec<&str> = services.keys().map(|k| k.as_str()).collect();
    let index_of: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let adj: Vec<Vec<usize>> = services
        .values()
        .map(|s| {
            s.depends_on
                .iter()
                .filter_map(|d| index_of.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    let n = names.len();
    const NONE: usize = usize::MAX;
    let comps = crate::graph::cyclic_components(n, |v, i| adj[v].get(i).map(|&w| Some(w)));
    let mut out = Vec::new();
    let mut in_comp = vec![false; n];
    let mut prev = vec![NONE; n];
    for comp in comps {
        for &v in &comp {
            in_comp[v] = true;
        }
        // The shortest cycle through the smallest name: BFS inside the
        // component until an edge leads back to it.
        let start = *comp.iter().min().unwrap_or(&0);
        let mut queue = std::collections::VecDeque::from([start]);
        prev[start] = start;
        let mut last = NONE;
        'bfs: while let Some(v) = queue.pop_front() {
            for &w in &adj[v] {
                if w == start {
                    last = v;
                    break 'bfs;
                }
                if in_comp[w] && prev[w] == NONE {
                    prev[w] = v;
                    queue.push_back(w);
                }
            }
        }
        let mut path = vec![start];
        let mut v = last;
        while v != start && v != NONE {
            path.push(v);
            v = prev[v];
        }
        path[1..].reverse();
        path.push(start);
        let mut cycle: Vec<String> = path.iter().map(|&i| names[i].to_string()).collect();
        if cycle.len() == 1 {
            cycle.push(cycle[0].clone());
        }
        for &v in &comp {
            in_comp[v] = false;
            prev[v] = NONE;
        }
        out.push((cycle, comp.len()));
    }
    out.sort();
    out
}

/// The record `self` reads: the env's record as normalization reads it
/// (set-like lists de-duplicated by the same [`schema::set_like`] table,
/// requirements files' index URLs carried), with the defaults of the schema
/// table filled in ([`fill_defaults`]: `workdir`, `user`, the inferred
/// `system.manager`, `python.manager`, `distributed` defaults, unset lists
/// and maps as empty), so that `self.workdir` or `len(self.ports)` see what
/// the IR will say.
pub(crate) fn self_view(r: &Record) -> Record {
    let mut r = effective(r).into_owned();
    let base = match r.get_str("base") {
        Some(Value::Image(i)) => Some(i.reference.to_string()),
        _ => None,
    };
    // The fields the schema says are inferred: `system` (a record) and
    // its `manager`, from the base image.
    let infer = |rt: RecordTy, name: &str| -> Option<Value> {
        let b = base.as_deref()?;
        match (rt, name) {
            (RecordTy::Env, "system") => Some(Value::Record(Arc::new(Record::new()))),
            (RecordTy::System, "manager") => Some(Value::enum_value(
                Some("SystemManager".into()),
                infer_manager(b).name().into(),
            )),
            _ => None,
        }
    };
    fill_defaults(&mut r, RecordTy::Env, &infer);
    r
}

/// Sets every unset field of `r` (a record of type `rt`) that has a default
/// in the schema table to it: an empty list or map, a string, an integer,
/// an enum variant, what `infer` gives for an inferred field, or a record
/// made of its own fields' defaults ([`FieldDefault::Fields`]); and does the
/// same inside every record field that is then set (not inside lists).
fn fill_defaults(r: &mut Record, rt: RecordTy, infer: &dyn Fn(RecordTy, &str) -> Option<Value>) {
    for f in schema::fields(rt) {
        if !r.contains_key(f.name) {
            let v = match (f.default, &f.ty) {
                (FieldDefault::None, _) => None,
                (FieldDefault::Empty, Ty::Map(_)) => Some(Value::Record(Arc::new(Record::new()))),
                (FieldDefault::Empty, _) => Some(Value::List(Arc::new(Vec::new()))),
                (FieldDefault::Str(x), _) => Some(Value::str(x)),
                (FieldDefault::Int(i), _) => Some(Value::Int(i)),
                (FieldDefault::Variant(x), Ty::Enum(def)) => {
                    Some(Value::enum_value(Some(def.name.as_str().into()), x.into()))
                }
                (FieldDefault::Variant(_), _) => None,
                (FieldDefault::Inferred(_), _) => infer(rt, f.name),
                (FieldDefault::Fields, _) => Some(Value::Record(Arc::new(Record::new()))),
            };
            if let Some(v) = v {
                r.insert(f.name.into(), v);
            }
        }
        if let (Ty::Record(sub), Some(Value::Record(x))) = (&f.ty, r.get_mut(f.name)) {
            fill_defaults(Arc::make_mut(x), *sub, infer);
        }
    }
}

/// The IR reference of a `secret(...)` value.
fn secret_ref(v: &Value) -> Option<SecretRef> {
    match v {
        Value::Secret(x) => Some(SecretRef {
            secret: x.name.to_string(),
            key: x.key.to_string(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`ir_bytes`] counts, written as plainly as possible: each
    /// string's bytes, and per list element or record entry
    /// [`VALUE_BYTES`] (plus the key's bytes).
    fn plain_ir_bytes(v: &Value) -> u64 {
        let entry = VALUE_BYTES as u64;
        match v {
            Value::List(l) => l.iter().map(|x| entry + plain_ir_bytes(x)).sum(),
            Value::Record(r) => r
                .iter()
                .map(|(k, x)| k.len() as u64 + entry + plain_ir_bytes(x))
                .sum(),
            Value::Str(s) => s.len() as u64,
            Value::Enum(e) => e.variant.len() as u64,
            _ => 0,
        }
    }

    /// The walk counts what the plain recursion counts, for leaves, flat
    /// and nested lists and records, mixed in one value; under a limit it
    /// stops past it (answering more than the limit) and leaves its room
    /// empty.
    #[test]
    fn ir_bytes_counts_every_string_and_entry_once() {
        let strs = |xs: &[&str]| Value::List(Arc::new(xs.iter().map(|x| Value::str(*x)).collect()));
        let mut inner = Record::new();
        inner.insert("cpu".into(), Value::Int(2));
        inner.insert("name".into(), Value::str("gpu-a100"));
        inner.insert("tags".into(), strs(&["a", "bb", ""]));
        let inner = Value::Record(Arc::new(inner));
        let mut outer = Record::new();
        outer.insert("requests".into(), inner.clone());
        outer.insert("packages".into(), strs(&["numpy", "pandas"]));
        outer.insert(
            "nested".into(),
            Value::List(Arc::new(vec![
                inner.clone(),
                strs(&[]),
                strs(&["x"]),
                Value::Int(1),
            ])),
        );
        let outer = Value::Record(Arc::new(outer));
        let values = [
            Value::str("plain"),
            Value::Int(7),
            strs(&[]),
            strs(&["a", "bcd"]),
            inner.clone(),
            outer.clone(),
        ];
        let mut todo = Vec::new();
        for v in &values {
            assert_eq!(
                ir_bytes(v, MAX_PRODUCED, &mut todo),
                plain_ir_bytes(v),
                "{v:?}"
            );
            assert!(todo.is_empty());
        }
        let all = plain_ir_bytes(&outer);
        assert!(ir_bytes(&outer, all / 2, &mut todo) > all / 2);
        assert!(todo.is_empty());
        assert_eq!(ir_bytes(&outer, all, &mut todo), all);
        // Past the limit with records still to walk: it stops, answers
        // more than the limit, and leaves no room in use.
        let records = Value::List(Arc::new(vec![inner.clone(); 4]));
        let entries = 4 * VALUE_BYTES as u64;
        assert!(ir_bytes(&records, entries - 1, &mut todo) > entries - 1);
        assert!(todo.is_empty());
    }

    /// Every requirement that pins `torch`, `torchvision` or `torchaudio`
    /// (as `scl_checks::exact_pin` reads it) passes the prefilter, however
    /// its name is written; others mostly do not.
    #[test]
    fn the_torch_prefilter_keeps_every_torch_pin() {
        let pins = [
            "torch==2.1.2+cu118",
            "  torch == 2.1.2+cu118",
            "Torch==2.1.2",
            "TORCHVISION==0.16.2+cu118",
            "torchaudio[extra]==2.1.2 ; sys_platform == 'linux'",
            "torch>=2.0,==2.1.2+cu121",
        ];
        for p in pins {
            let (name, _) = scl_checks::exact_pin(p).expect(p);
            assert!(
                matches!(name.as_str(), "torch" | "torchvision" | "torchaudio"),
                "{p}: {name}"
            );
            assert!(may_name_torch(p), "{p}");
        }
        for other in ["numpy==1.26.4", "pytorch-lightning==2.2.0", "", " ", "torc"] {
            assert!(!may_name_torch(other), "{other}");
        }
    }

    /// The pairwise check of short lists gives what hashing gives: repeats
    /// of strings and of integers, first kept, and no copy without one.
    #[test]
    fn short_and_long_lists_are_deduplicated_alike() {
        let strs = |xs: &[&str]| xs.iter().map(|x| Value::str(*x)).collect::<Vec<_>>();
        assert_eq!(dedup_list(&strs(&["a", "b", "c"])), None);
        assert_eq!(dedup_list(&[]), None);
        assert_eq!(
            dedup_list(&strs(&["a", "b", "a", "c", "b"])),
            Some(strs(&["a", "b", "c"]))
        );
        let ints = |xs: &[i64]| xs.iter().map(|x| Value::Int(*x)).collect::<Vec<_>>();
        assert_eq!(dedup_list(&ints(&[8080, 8888])), None);
        assert_eq!(
            dedup_list(&ints(&[8080, 8888, 8080])),
            Some(ints(&[8080, 8888]))
        );
        // Past 16 elements: hashed.
        let long: Vec<String> = (0..20).map(|i| format!("p{}", i % 17)).collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let want: Vec<&str> = long[..17].to_vec();
        assert_eq!(dedup_list(&strs(&long)), Some(strs(&want)));
        assert_eq!(dedup_list(&strs(&want)), None);
        // A string and an integer that print alike differ.
        assert_eq!(dedup_list(&[Value::str("1"), Value::Int(1)]), None);
    }

    #[test]
    fn container_paths_are_cleaned_lexically() {
        for (given, clean) in [
            ("/", "/"),
            ("/data", "/data"),
            ("/a/b.c/d", "/a/b.c/d"),
            ("/data/", "/data"),
            ("//data", "/data"),
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("/a/.", "/a"),
            ("/..", "/"),
            ("/.a/..b", "/.a/..b"),
            ("data", "/data"),
            ("", "/"),
        ] {
            assert_eq!(clean_path(given), clean, "{given:?}");
        }
    }

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, Arc<EnvSpec>> {
        edges
            .iter()
            .map(|(n, deps)| {
                let spec = EnvSpec {
                    depends_on: deps.iter().map(|d| d.to_string()).collect(),
                    ..EnvSpec::default()
                };
                (n.to_string(), Arc::new(spec))
            })
            .collect()
    }

    fn names(c: &[String]) -> Vec<&str> {
        c.iter().map(|s| s.as_str()).collect()
    }

    #[test]
    fn one_cycle_per_strongly_connected_component() {
        let g = graph(&[
            ("web", &["web"]),
            ("a", &["b"]),
            ("b", &["c", "x"]),
            ("c", &["a", "b"]),
            ("d", &["a"]),
            ("e", &["unknown"]),
        ]);
        let got = depends_on_cycles(&g);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(names(&got[0].0), ["a", "b", "c", "a"]);
        assert_eq!(got[0].1, 3);
        assert_eq!(names(&got[1].0), ["web", "web"]);
        assert_eq!(got[1].1, 1);
        assert!(depends_on_cycles(&graph(&[("a", &["b"]), ("b", &[])])).is_empty());
    }

    #[test]
    fn every_service_depending_on_all_is_one_cycle() {
        // round 2, H3: n services each depending on all n recorded every
        // back edge as a cycle (about n²/2 cycles of length about n).
        let n = 300;
        let all: Vec<String> = (0..n).map(|i| format!("s{i:03}")).collect();
        let g: BTreeMap<String, Arc<EnvSpec>> = all
            .iter()
            .map(|k| {
                let spec = EnvSpec {
                    depends_on: all.clone(),
                    ..EnvSpec::default()
                };
                (k.clone(), Arc::new(spec))
            })
            .collect();
        let got = depends_on_cycles(&g);
        assert_eq!(got.len(), 1);
        // The shortest cycle through the smallest name: itself.
        assert_eq!(names(&got[0].0), ["s000", "s000"]);
        assert_eq!(got[0].1, n);
        // A long chain closed into a ring: one cycle of every service, and
        // no recursion (a deep DFS would overflow the stack).
        let n = 100_000;
        let ring: BTreeMap<String, Arc<EnvSpec>> = (0..n)
            .map(|i| {
                let spec = EnvSpec {
                    depends_on: vec![format!("s{:06}", (i + 1) % n)],
                    ..EnvSpec::default()
                };
                (format!("s{i:06}"), Arc::new(spec))
            })
            .collect();
        let got = depends_on_cycles(&ring);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), n + 1);
        assert_eq!(got[0].0[1], "s000001");
    }
}
