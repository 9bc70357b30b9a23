//! Runtime values of the evaluator.

use crate::ModuleId;
use scl_diag::Span;
use scl_ir::FieldPath;
use scl_syntax::ast;
use scl_syntax::ast::Name;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A record or map value: sorted keys, compact while small
/// ([`crate::record::Fields`]).
pub type Record = crate::record::Fields<Arc<str>, Value>;

/// A hidden key marking a record already checked against a schema record
/// type (its value is the type's name), so it is not checked twice.
pub const TYPE_KEY: &str = "\u{1}type";

/// Whether record key `k` is the hidden [`TYPE_KEY`] mark.
pub fn is_type_mark(k: &str) -> bool {
    k == TYPE_KEY
}

/// A value. Cheap to clone (containers are behind `Arc`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    /// Bytes ([`Bytes`]: an `i128` that keeps a value 8-byte aligned).
    Memory(Bytes),
    /// Millicores.
    Cpu(i64),
    /// An enum value ([`EnumVal`]).
    Enum(Arc<EnumVal>),
    List(Arc<Vec<Value>>),
    Record(Arc<Record>),
    /// An image reference ([`ImageVal`]).
    Image(Arc<ImageVal>),
    /// A file read at compile time ([`FileValue`]; behind an `Arc`, so that
    /// the rare file does not make every value larger).
    File(Arc<FileValue>),
    /// A reference to a secret ([`SecretVal`]).
    Secret(Arc<SecretVal>),
    Env(Arc<EnvValue>),
    /// A plain env declared in another module, by reference (`mod.name`):
    /// resolved through the host where its content is read (a field, an
    /// `extends`, a `with`, its IR as a service), so that a value which only
    /// holds it — a `services` entry — does not depend on what it contains.
    /// Equal to the [`Value::Env`] of the same declaration.
    EnvRef(Arc<EnvRef>),
    /// A function declared with `fn`.
    Func {
        module: ModuleId,
        decl: usize,
    },
    /// A template (an env with arguments) not yet instantiated.
    Template {
        module: ModuleId,
        decl: usize,
    },
    Builtin(&'static str),
    /// An imported module.
    Module(ModuleId),
    /// A user enum type (so `mod.Flavor` can be named).
    EnumType(Arc<crate::ty::EnumDef>),
    /// A `self.…` read whose value is not known yet (first round of the
    /// `self` fixpoint); every operation on it gives `Pending`.
    Pending,
}

// Every record, list and module keeps values for the whole run: a larger
// value costs memory in every one of them (the bench's memory slope). No
// variant holds more than 16 bytes: the two-field payloads (enum values,
// images, secrets) sit behind an `Arc`.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Value>() == 24);

/// The payload of [`Value::Enum`]: the variant, and the enum type's name
/// (`None` for a literal not yet resolved against a type).
#[derive(Clone, Debug, PartialEq)]
pub struct EnumVal {
    pub ty: Option<Arc<str>>,
    pub variant: Arc<str>,
}

/// The payload of [`Value::Image`]: the reference as written, and its
/// digest when pinned.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageVal {
    pub reference: Arc<str>,
    pub digest: Option<Arc<str>>,
}

/// The payload of [`Value::Secret`]: the secret's name and key.
#[derive(Clone, Debug, PartialEq)]
pub struct SecretVal {
    pub name: Arc<str>,
    pub key: Arc<str>,
}

impl Value {
    /// An enum value ([`EnumVal`]).
    pub fn enum_value(ty: Option<Arc<str>>, variant: Arc<str>) -> Value {
        Value::Enum(Arc::new(EnumVal { ty, variant }))
    }

    /// An image value ([`ImageVal`]).
    pub fn image(reference: Arc<str>, digest: Option<Arc<str>>) -> Value {
        Value::Image(Arc::new(ImageVal { reference, digest }))
    }

    /// A secret reference ([`SecretVal`]).
    pub fn secret(name: Arc<str>, key: Arc<str>) -> Value {
        Value::Secret(Arc::new(SecretVal { name, key }))
    }
}

/// The byte count of a [`Value::Memory`]: an `i128` kept as two 8-byte
/// halves, so that a [`Value`] is 8-byte aligned and 24 bytes long (an
/// `i128` field made every value 48). [`Bytes::get`] gives the number.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Bytes([u64; 2]);

impl Bytes {
    /// `n` bytes.
    pub const fn new(n: i128) -> Bytes {
        Bytes([n as u64, (n >> 64) as u64])
    }
    /// The number of bytes.
    pub const fn get(self) -> i128 {
        ((self.0[1] as i128) << 64) | self.0[0] as i128
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A file read at compile time: workspace-relative path, SHA-256, and its
/// text (lossy UTF-8; requirements files are validated from it).
#[derive(Clone, Debug, PartialEq)]
pub struct FileValue {
    pub path: Arc<str>,
    pub sha256: Arc<str>,
    pub text: Arc<str>,
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<Arc<str>>) -> Value {
        Value::Str(s.into())
    }
    /// The name of the value's type, for messages.
    pub fn type_name(&self) -> String {
        match self {
            Value::Bool(_) => "Bool".into(),
            Value::Int(_) => "Int".into(),
            Value::Float(_) => "Float".into(),
            Value::Str(_) => "String".into(),
            Value::Memory(_) => "Memory".into(),
            Value::Cpu(_) => "Cpu".into(),
            Value::Enum(e) => match &e.ty {
                Some(t) => t.to_string(),
                None => "enum literal".into(),
            },
            Value::List(_) => "list".into(),
            Value::Record(_) => "record".into(),
            Value::Image(_) => "Image".into(),
            Value::File(_) => "File".into(),
            Value::Secret(_) => "Secret".into(),
            Value::Env(_) | Value::EnvRef(_) => "Env".into(),
            Value::Func { .. } | Value::Builtin(_) => "function".into(),
            Value::Template { .. } => "template".into(),
            Value::Module(_) => "module".into(),
            Value::EnumType(_) => "enum type".into(),
            Value::Pending => "pending".into(),
        }
    }
    /// True if the value (or anything inside it) is still pending.
    pub fn is_pending(&self) -> bool {
        match self {
            Value::Pending => true,
            Value::List(l) => l.iter().any(Value::is_pending),
            Value::Record(r) => r.values().any(Value::is_pending),
            _ => false,
        }
    }
}

/// Formats a memory quantity: the largest binary suffix that represents it
/// exactly, else bytes (`16Gi`, `1536Mi`, `1000`).
pub fn format_memory(bytes: i128) -> String {
    const SUF: [&str; 6] = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"];
    if bytes != 0 {
        for (i, s) in SUF.iter().enumerate() {
            let unit = 1i128 << (10 * (6 - i));
            if bytes % unit == 0 {
                return format!("{}{}", bytes / unit, s);
            }
        }
    }
    bytes.to_string()
}

/// Formats CPU: whole cores when exact, else millicores (`2`, `500m`).
pub fn format_cpu(milli: i64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

/// The most characters a value shows in a message (see the `Display` impl).
pub const SHOWN_MAX: usize = 200;

/// A value as a message shows it (SCL syntax: `"text"`, `[1, 2]`,
/// `{ a = 1 }`, `.variant`), at most [`SHOWN_MAX`] bytes, then `…`: a
/// 16 MiB string or a list of a million elements costs a message of a few
/// hundred bytes, and is never rendered whole.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut w = Clip {
            out: String::new(),
            left: SHOWN_MAX,
        };
        let whole = fmt::write(&mut w, format_args!("{}", Whole(self))).is_ok();
        f.write_str(&w.out)?;
        if !whole {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// Collects at most `left` bytes (on a char boundary), then fails, which
/// stops the formatting that writes into it.
struct Clip {
    out: String,
    left: usize,
}

impl fmt::Write for Clip {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if s.len() <= self.left {
            self.out.push_str(s);
            self.left -= s.len();
            return Ok(());
        }
        let mut i = self.left;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        self.out.push_str(&s[..i]);
        self.left = 0;
        Err(fmt::Error)
    }
}

/// The whole rendering, unbounded: only written into a [`Clip`].
struct Whole<'a>(&'a Value);

impl fmt::Display for Whole<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Memory(b) => write!(f, "{}", format_memory(b.get())),
            Value::Cpu(m) => write!(f, "{}", format_cpu(*m)),
            Value::Enum(e) => write!(f, ".{}", e.variant),
            Value::List(l) => {
                write!(f, "[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", Whole(v))?;
                }
                write!(f, "]")
            }
            Value::Record(r) => {
                write!(f, "{{ ")?;
                for (i, (k, v)) in r.iter().filter(|(k, _)| !is_type_mark(k)).enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k} = {}", Whole(v))?;
                }
                write!(f, " }}")
            }
            Value::Image(i) => write!(f, "image({:?})", i.reference),
            Value::File(file) => write!(f, "file({:?})", file.path),
            Value::Secret(s) => write!(f, "secret({:?}, key = {:?})", s.name, s.key),
            Value::Env(e) => write!(f, "env {}", e.name),
            Value::EnvRef(r) => write!(f, "env {}", r.name),
            other => write!(f, "<{}>", other.type_name()),
        }
    }
}

/// The identity of one inheritance layer: a named env, a template instance
/// (template + evaluated arguments), or an anonymous env (`with`, record).
/// Two instances are one layer when their arguments are equal as the
/// language compares them (`==`: an env by reference equals the env).
#[derive(Clone, Debug)]
pub struct LayerId {
    pub module: ModuleId,
    /// Declaration index for named envs and templates; `None` for anonymous ones.
    pub decl: Option<usize>,
    /// For anonymous envs: the span of their block.
    pub span: Span,
    /// Template arguments (empty for plain envs).
    pub args: Vec<(Name, Value)>,
}

impl PartialEq for LayerId {
    fn eq(&self, other: &Self) -> bool {
        self.module == other.module
            && self.decl == other.decl
            && self.span == other.span
            && self.args.len() == other.args.len()
            && self
                .args
                .iter()
                .zip(&other.args)
                .all(|((n, a), (m, b))| n == m && crate::eval::values_equal(a, b))
    }
}

/// One layer: the items of one env, with the scope they are evaluated in.
#[derive(Clone, Debug)]
pub struct Layer {
    pub id: LayerId,
    /// Display name (`python_env`, `base.python_env`, `runtime(torch = "2.1.2", …)`).
    pub name: Arc<str>,
    pub block: ast::Block,
    /// Local bindings (template arguments) visible to the items.
    pub locals: Arc<Vec<(Name, Value)>>,
    /// This layer's ancestors: the linearization of its parents (shared
    /// with them, so a chain of `extends` costs one node per env).
    pub ancestors: Lin,
}

/// Layers are the same when their ids and their items are. Within one
/// evaluation the id (declaration and arguments, or the block of an
/// anonymous env) determines the rest, and the items are one shared `Arc`;
/// across edits they are compared too, since a declaration's spans are
/// anchored (position-independent: see `scl_diag::Span`) and an edit of an
/// env's body that keeps every span's length must not compare equal.
impl PartialEq for Layer {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && (Arc::ptr_eq(&self.block.items, &other.block.items) || self.block == other.block)
    }
}

/// A linearization: layers in order, ancestors first. Persistent: adding a
/// layer shares the list it extends, so the linearization of each env of an
/// `extends` chain costs O(1) time and memory, not O(depth).
#[derive(Clone, Default)]
pub struct Lin(Option<Arc<LinNode>>);

struct LinNode {
    last: Arc<Layer>,
    init: Lin,
    len: usize,
}

impl Lin {
    /// The empty linearization.
    pub fn new() -> Lin {
        Lin(None)
    }

    /// How many layers it holds.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    /// True when it holds no layer.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `self` followed by `layer` (O(1); `self` is shared, not copied).
    pub fn push(&self, layer: Arc<Layer>) -> Lin {
        Lin(Some(Arc::new(LinNode {
            last: layer,
            init: self.clone(),
            len: self.len() + 1,
        })))
    }

    /// The last layer (the env itself, for an env's linearization).
    pub fn last(&self) -> Option<&Arc<Layer>> {
        self.0.as_ref().map(|n| &n.last)
    }

    /// Every layer but the last.
    pub fn init(&self) -> Lin {
        self.0.as_ref().map(|n| n.init.clone()).unwrap_or_default()
    }

    /// The layers from position `start` (0-based) to the end, in order
    /// (O(len − start)).
    pub fn suffix(&self, start: usize) -> Vec<Arc<Layer>> {
        let mut out = Vec::with_capacity(self.len().saturating_sub(start));
        let mut cur = self.0.as_ref();
        while let Some(n) = cur {
            if n.len <= start {
                break;
            }
            out.push(n.last.clone());
            cur = n.init.0.as_ref();
        }
        out.reverse();
        out
    }

    /// Every layer, in order (O(len)).
    pub fn to_vec(&self) -> Vec<Arc<Layer>> {
        self.suffix(0)
    }

    /// The same list: the same nodes, or equal layers in the same order.
    pub fn same(&self, other: &Lin) -> bool {
        let (mut a, mut b) = (self.0.as_ref(), other.0.as_ref());
        loop {
            match (a, b) {
                (None, None) => return true,
                (Some(x), Some(y)) => {
                    if Arc::ptr_eq(x, y) {
                        return true;
                    }
                    if x.len != y.len || !(Arc::ptr_eq(&x.last, &y.last) || x.last == y.last) {
                        return false;
                    }
                    a = x.init.0.as_ref();
                    b = y.init.0.as_ref();
                }
                _ => return false,
            }
        }
    }
}

impl fmt::Debug for Lin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.to_vec().iter().map(|l| l.name.clone()))
            .finish()
    }
}

/// Frees a long list without recursing once per node.
impl Drop for LinNode {
    fn drop(&mut self) {
        let mut next = self.init.0.take();
        while let Some(node) = next {
            match Arc::try_unwrap(node) {
                Ok(mut n) => next = n.init.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// An env value: its linearization (ancestors first, itself last), and for
/// named envs evaluated by their module, the cached final result.
#[derive(Clone, Debug)]
pub struct EnvValue {
    pub name: String,
    pub layers: Lin,
    /// True when every layer inherits all the layers before it (a single
    /// chain of `extends`): no two layers are unrelated, so the diamond rule
    /// has nothing to check.
    pub chain: bool,
    /// Span of the `extends` clause (for conflict errors), or of the name.
    pub extends_span: Span,
    pub module: ModuleId,
    /// Set by the defining module for named envs.
    pub final_env: Option<Arc<FinalEnv>>,
    /// True when the env has one parent whose layers are all of this env's
    /// layers but the last (`extends p`, `p with {…}`): the parent's applied
    /// state can be reused, and only the last layer applied.
    pub single_parent: bool,
    /// That parent's final result, when it was known as the env was built
    /// (envs of other modules); else it is looked up by its declaration.
    /// Not the parent itself: a chain of envs holding their parents would be
    /// freed recursively.
    pub parent_final: Option<Arc<FinalEnv>>,
    /// For a template instance made by code of another module (`services.a
    /// = torch.runtime(…)`): that module and the call's span, where the
    /// diagnostics of the instance's final value point.
    pub used_at: Option<(ModuleId, Span)>,
}

impl PartialEq for EnvValue {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.layers.same(&other.layers)
            && self.final_env == other.final_env
    }
}

/// Where a field got its value: the layer that wrote it last and the item's
/// span, plus the layer it replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The name of the layer (env) that wrote it, shared with the layer.
    pub layer: Arc<str>,
    /// The position of that layer in the env's linearization (0 = the
    /// first ancestor applied).
    pub position: usize,
    pub module: ModuleId,
    pub span: Span,
    pub replaced: Option<Arc<str>>,
}

/// The provenance of an env: the [`Origin`] of every written path. The
/// evaluator's own map, shared by the env's [`FinalEnv`] and by the envs
/// that start from its state (render a path with [`FieldPath::render`]).
///
/// Layered: an env that starts from its parent's state holds only what its
/// own layer wrote (or forgot) over the parent's map, shared, so a chain of
/// envs that each set a few fields costs a few entries per env, not a copy
/// of every inherited path. A lookup goes down at most
/// [`Origins::MAX_DEPTH`] layers: a deeper chain starts a flat copy.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    /// What the layers over `base` wrote (`Some`) or forgot (`None`).
    own: crate::record::Fields<FieldPath, Option<Origin>>,
    base: Option<Arc<Origins>>,
    /// How many maps `base` stacks (0 for a flat map).
    depth: u32,
    /// How many paths have an origin: counted when first asked, not kept
    /// on every write (a write would look the path up in every stacked
    /// map; the count is asked of an env's map when another env extends
    /// it, and by an equality test). Reset by every change.
    len: std::sync::OnceLock<usize>,
}

impl Origins {
    /// The most maps stacked under one [`Origins`].
    pub const MAX_DEPTH: u32 = 8;

    /// An empty map over `base`: what a child env starts from. Flattened
    /// (one copy) when `base` is already [`Self::MAX_DEPTH`] deep.
    pub(crate) fn over(base: &Arc<Origins>) -> Origins {
        if base.depth >= Self::MAX_DEPTH {
            return Origins {
                own: base
                    .flatten()
                    .into_iter()
                    .map(|(k, o)| (k, Some(o)))
                    .collect(),
                base: None,
                depth: 0,
                len: Default::default(),
            };
        }
        Origins {
            own: Default::default(),
            base: Some(base.clone()),
            depth: base.depth + 1,
            len: Default::default(),
        }
    }

    /// The origin of exactly `path`.
    pub fn get(&self, path: &FieldPath) -> Option<&Origin> {
        match self.own.get(path) {
            Some(o) => o.as_ref(),
            None => self.base.as_ref().and_then(|b| b.get(path)),
        }
    }

    /// The origin of `path` or, when it has none, of the nearest path above
    /// it (a record written whole): where a value at `path` came from.
    pub fn nearest(&self, path: &FieldPath) -> Option<&Origin> {
        let mut p = Some(path.clone());
        while let Some(q) = p.filter(|q| !q.is_empty()) {
            if let Some(o) = self.get(&q) {
                return Some(o);
            }
            p = q.parent();
        }
        None
    }

    /// How many paths have an origin (counted once, then kept until the
    /// next change: each path this map holds itself is looked up in the
    /// maps under it).
    pub fn len(&self) -> usize {
        *self.len.get_or_init(|| {
            let below = self.base.as_ref().map_or(0, |b| b.len());
            let in_base = |k: &FieldPath| self.base.as_ref().is_some_and(|b| b.get(k).is_some());
            let (mut added, mut dropped) = (0, 0);
            for (k, o) in &self.own {
                match (o.is_some(), in_base(k)) {
                    (true, false) => added += 1,
                    (false, true) => dropped += 1,
                    _ => {}
                }
            }
            below + added - dropped
        })
    }

    /// True when no path has an origin.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the spare room of the paths this map holds itself (done once
    /// an env's origins are complete: they are kept as long as its value).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.own.shrink_to_fit();
    }

    /// Sets the origin of `path`.
    pub(crate) fn insert(&mut self, path: FieldPath, origin: Origin) {
        self.len.take();
        self.own.insert(path, Some(origin));
    }

    /// Drops the origin of `path`.
    pub(crate) fn remove(&mut self, path: &FieldPath) {
        if self.get(path).is_none() {
            return;
        }
        self.len.take();
        if self.base.as_ref().is_some_and(|b| b.get(path).is_some()) {
            self.own.insert(path.clone(), None);
        } else {
            self.own.remove(path);
        }
    }

    /// The paths strictly below `key` that have an origin, in order.
    pub fn paths_below(&self, key: &FieldPath) -> Vec<FieldPath> {
        let mut out: std::collections::BTreeSet<FieldPath> = match &self.base {
            Some(b) => b.paths_below(key).into_iter().collect(),
            None => Default::default(),
        };
        // The paths below `key` sort right after it ([`FieldPath`]'s order).
        for (k, o) in self.own.after(key).take_while(|(k, _)| k.starts_with(key)) {
            if o.is_some() {
                out.insert(k.clone());
            } else {
                out.remove(k);
            }
        }
        out.into_iter().collect()
    }

    /// Every path with its origin, in [`FieldPath`] order (a path's
    /// children right after it), as one flat map.
    pub fn flatten(&self) -> BTreeMap<FieldPath, Origin> {
        let mut out = match &self.base {
            Some(b) => b.flatten(),
            None => BTreeMap::new(),
        };
        for (k, o) in &self.own {
            match o {
                Some(o) => {
                    out.insert(k.clone(), o.clone());
                }
                None => {
                    out.remove(k);
                }
            }
        }
        out
    }
}

impl PartialEq for Origins {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.flatten() == other.flatten()
    }
}

/// An env after inheritance: the record, the provenance of every written
/// path, and the normalized IR (`None` if normalization reported errors).
#[derive(Clone, Debug)]
pub struct FinalEnv {
    pub record: Arc<Record>,
    pub origins: Arc<Origins>,
    pub spec: Option<Arc<scl_ir::EnvSpec>>,
    /// The state after applying every layer, when no layer read `self`: an
    /// env extending this one starts from it and applies only its own items.
    pub(crate) applied: Option<Arc<Applied>>,
    /// Services held by reference ([`Value::EnvRef`]) whose IR is not in
    /// `spec` yet: added, and the services checked together, by
    /// `Evaluator::complete` where the IR is read (the module's assembled
    /// values, or an env holding this one as a service). `None` when `spec`
    /// is complete.
    pub(crate) pending: Option<Arc<PendingServices>>,
}

impl FinalEnv {
    /// True when `spec` lacks services held by reference (see `pending`).
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }
}

impl PartialEq for FinalEnv {
    fn eq(&self, other: &Self) -> bool {
        (Arc::ptr_eq(&self.record, &other.record) || self.record == other.record)
            && (Arc::ptr_eq(&self.origins, &other.origins) || self.origins == other.origins)
            && self.spec == other.spec
            && self.pending == other.pending
    }
}

/// A plain env declaration of another module, named by a [`Value::EnvRef`]:
/// its module, its index among the module's declarations, and its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnvRef {
    pub module: ModuleId,
    pub decl: usize,
    pub name: Arc<str>,
    /// Whether the declaration is clean (`Items::clean`): which query of
    /// the host has its value.
    pub clean: bool,
}

/// The services of an env held by reference, by service name, with the
/// env's module and span (where the services' checks point when no origin
/// is recorded).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingServices {
    pub(crate) module: ModuleId,
    pub(crate) span: Span,
    /// The env's name and, for a template instance made by another
    /// module's code, that module and the call (`EnvValue::used_at`):
    /// where the services' checks are labelled.
    pub(crate) name: String,
    pub(crate) used_at: Option<(ModuleId, Span)>,
    pub(crate) services: Vec<(String, Arc<EnvRef>)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub(crate) layer: usize,
    pub(crate) value: Value,
    pub(crate) span: Span,
}

/// The state of the evaluator's builder after applying some layers, kept in
/// a [`FinalEnv`] for the envs that extend it (so that such an env starts
/// from it and applies only its own items).
#[derive(Debug)]
pub(crate) struct Applied {
    /// The env's final record, shared with its `FinalEnv` (a child copies
    /// it when it starts from this state).
    pub(crate) record: Arc<Record>,
    pub(crate) track_writes: bool,
    pub(crate) writes: BTreeMap<FieldPath, Vec<Write>>,
    pub(crate) origins: Arc<Origins>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(layer: &str, position: usize) -> Origin {
        Origin {
            layer: Arc::from(layer),
            position,
            module: ModuleId(0),
            span: Span::new(position, position + 1),
            replaced: None,
        }
    }

    /// A layered map answers as the flat map of the same writes would,
    /// through every depth (including past `MAX_DEPTH`, where a layer
    /// starts a flat copy).
    #[test]
    fn layered_origins_answer_as_one_flat_map() {
        let p = |s: &str| FieldPath::parse(s);
        let mut flat: BTreeMap<FieldPath, Origin> = BTreeMap::new();
        let mut layered = Arc::new(Origins::default());
        for depth in 0..(3 * Origins::MAX_DEPTH as usize) {
            let mut o = Origins::over(&layered);
            let name = format!("e{depth}");
            // Each layer writes one new path and rewrites an inherited one,
            // and every third layer forgets a record's paths below it.
            let own = p(&format!("vars.V{depth}"));
            o.insert(own.clone(), origin(&name, depth));
            flat.insert(own, origin(&name, depth));
            o.insert(p("description"), origin(&name, depth));
            flat.insert(p("description"), origin(&name, depth));
            // The count is kept once asked; a later change must renew it.
            assert_eq!(o.len(), flat.len(), "depth {depth}, before forgetting");
            if depth % 3 == 2 {
                let below = o.paths_below(&p("vars"));
                let want: Vec<FieldPath> = flat
                    .keys()
                    .filter(|k| k.starts_with(&p("vars")) && **k != p("vars"))
                    .cloned()
                    .collect();
                assert_eq!(below, want, "depth {depth}");
                for k in below {
                    o.remove(&k);
                    flat.remove(&k);
                }
                o.remove(&p("not.there"));
            }
            assert_eq!(o.len(), flat.len(), "depth {depth}");
            assert_eq!(o.flatten(), flat, "depth {depth}");
            for k in flat.keys() {
                assert_eq!(o.get(k), flat.get(k), "depth {depth}: {}", k.render());
            }
            assert!(o.depth <= Origins::MAX_DEPTH);
            layered = Arc::new(o);
        }
        // Equality is by content, whatever the layering.
        let mut one = Origins::default();
        for (k, v) in &flat {
            one.insert(k.clone(), v.clone());
        }
        assert_eq!(*layered, one);
        assert_eq!(one.len(), flat.len());
        one.insert(p("description"), origin("other", 99));
        assert_ne!(*layered, one);
        one.insert(p("a.new.path"), origin("other", 99));
        assert_eq!(one.len(), flat.len() + 1);
    }

    #[test]
    fn values_in_messages_are_clipped() {
        let long = Value::str("x".repeat(1 << 20));
        let shown = long.to_string();
        assert_eq!(shown.len(), SHOWN_MAX + "…".len());
        assert!(shown.starts_with("\"xxx") && shown.ends_with('…'));
        let list = Value::List(Arc::new((0..1_000_000).map(Value::Int).collect()));
        let shown = list.to_string();
        assert!(
            shown.starts_with("[0, 1, 2, ") && shown.ends_with('…'),
            "{shown}"
        );
        assert!(shown.len() <= SHOWN_MAX + "…".len());
        // Short values are whole, with no mark.
        let short = Value::List(Arc::new(vec![Value::str("a"), Value::Int(1)]));
        assert_eq!(short.to_string(), "[\"a\", 1]");
    }
}
