//! The static types of expressions ([`Type`]) and the one relation between
//! them, [`fits`] ("a value of this type is accepted where that type is
//! expected"), with [`join`] (the one type of two branches or two list
//! elements). The rules are those of the book's "Typing rules" chapter.
//!
//! [`Type`] extends the schema's [`Ty`] with what only the checker needs:
//! plain records, functions, templates, modules, enum types, and the two
//! types that fit everything (`Error`: already reported; `Nothing`: the
//! elements of `[]`). The schema's scalar types are kept as [`Ty`] values.

use crate::builtins::Builtin;
use crate::ty::{EnumDef, RecordTy, Ty};
use scl_syntax::ast::Name;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The static type of an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// The expression could not be typed and that was already reported (an
    /// unknown name, a syntax error, a wrong operand): it fits everything,
    /// so one mistake gives one diagnostic.
    Error,
    /// The element type of the empty list and the value type of the empty
    /// map: fits everything.
    Nothing,
    Bool,
    Int,
    Float,
    /// `String` or one of the string-like types of the schema (`Path`,
    /// `Url`, `Version`, `Requirement`, `MatchSpec`, a volume source); the
    /// [`Ty`] is kept for messages.
    Str(Ty),
    Memory,
    Cpu,
    Image,
    /// A file; `true` for a requirements file (`python.requirements`).
    File(bool),
    Secret,
    /// An entry of `vars`: a `String` or a `Secret`.
    StrOrSecret,
    List(Arc<Type>),
    /// `{String: T}`
    Map(Arc<Type>),
    Optional(Arc<Type>),
    Enum(Arc<EnumDef>),
    /// `.name` where no enum is expected: fits an enum with that variant.
    EnumLit(Arc<str>),
    /// A record type of the Env schema.
    Schema(RecordTy),
    /// A record literal without a schema type and without quoted keys: its
    /// fields, by name.
    Record(Arc<BTreeMap<String, Type>>),
    /// An env (a plain env, a template call, `X with { … }`).
    Env,
    /// What `huggingface(...)` and `url(...)` make (an entry of `assets`).
    Asset,
    Fn(Arc<Signature>),
    /// An env with parameters; a call gives an [`Type::Env`].
    Template(Arc<Signature>),
    Builtin(Builtin),
    /// An import alias: the types of the imported module's declarations
    /// (`None` when the import did not resolve, already reported).
    Module(Option<Arc<ModuleTypes>>),
    /// An enum declaration, named as a value (`Flavor.devel`).
    EnumType(Arc<EnumDef>),
}

/// The parameters and result of a function or template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The declared name, for messages.
    pub name: String,
    pub params: Vec<Param>,
    /// The result: the declared return type, the body's type, or `Env`.
    pub ret: Type,
}

/// One parameter of a [`Signature`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub has_default: bool,
}

/// The types of a module's top-level declarations, by name: what another
/// module sees through an import. Position-independent (no spans), so an
/// edit that does not change them does not re-check the modules that
/// import it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ModuleTypes {
    /// The module's display path (`std/s3-data.env.scl`), for messages.
    pub path: String,
    pub decls: scl_ir::fields::Fields<Name, Type>,
}

impl Type {
    /// The static type of values of schema type `t`.
    pub fn from_ty(t: &Ty) -> Type {
        match t {
            Ty::Any => Type::Error,
            Ty::Bool => Type::Bool,
            Ty::Int => Type::Int,
            Ty::Float => Type::Float,
            Ty::String
            | Ty::Path
            | Ty::HostPath
            | Ty::VolumeSource
            | Ty::Url
            | Ty::Version
            | Ty::Requirement
            | Ty::MatchSpec => Type::Str(t.clone()),
            Ty::Image => Type::Image,
            Ty::Memory => Type::Memory,
            Ty::Cpu => Type::Cpu,
            Ty::File => Type::File(false),
            Ty::RequirementsFile => Type::File(true),
            Ty::Secret => Type::Secret,
            Ty::StrOrSecret => Type::StrOrSecret,
            Ty::List(e) => Type::List(Arc::new(Type::from_ty(e))),
            Ty::Map(e) => Type::Map(Arc::new(Type::from_ty(e))),
            Ty::Optional(e) => Type::Optional(Arc::new(Type::from_ty(e))),
            Ty::Enum(d) => Type::Enum(d.clone()),
            Ty::Record(r) => Type::Schema(*r),
            Ty::Env => Type::Env,
            Ty::Asset => Type::Asset,
        }
    }

    /// `String`.
    pub fn string() -> Type {
        Type::Str(Ty::String)
    }

    /// A list of `t`.
    pub fn list(t: Type) -> Type {
        Type::List(Arc::new(t))
    }

    /// True for the types that fit everything.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Type::Error | Type::Nothing)
    }

    /// The type without an optional wrapper (`T?` is used as `T`).
    pub fn strip_optional(&self) -> &Type {
        match self {
            Type::Optional(t) => t.strip_optional(),
            t => t,
        }
    }

    /// True for `String` and the string-like types.
    pub fn is_str(&self) -> bool {
        matches!(self, Type::Str(_))
    }

    /// True for `Int` and `Float`.
    pub fn is_number(&self) -> bool {
        matches!(self, Type::Int | Type::Float)
    }

    /// True when a value of this type can be interpolated into a string
    /// (`"${x}"`, `join`): strings, numbers, booleans, enums, quantities,
    /// images and files.
    pub fn interpolable(&self) -> bool {
        matches!(
            self.strip_optional(),
            Type::Error
                | Type::Nothing
                | Type::Str(_)
                | Type::Int
                | Type::Float
                | Type::Bool
                | Type::Enum(_)
                | Type::EnumLit(_)
                | Type::Memory
                | Type::Cpu
                | Type::Image
                | Type::File(_)
                // A `vars` entry read back (`self.vars.K`): a string, or a
                // secret, which evaluation refuses (E0210) when it is one.
                | Type::StrOrSecret
        )
    }

    /// The one type of a map literal's values or of a record read as a map
    /// (`None` when they have no one type).
    pub fn record_as_map(fields: &BTreeMap<String, Type>) -> Option<Type> {
        let mut t = Type::Nothing;
        for v in fields.values() {
            t = join(&t, v)?;
        }
        Some(t)
    }
}

/// Whether a value of type `found` is accepted where `expected` is
/// expected (the book's table "Fitting a value to an expected type").
///
/// Types are DAGs: a `let` used twice shares its type, and two records of
/// the same shape built apart are two DAGs whose trees can be exponentially
/// larger than they are (`r1 = {a = r0, b = r0}` …). Every comparison of two
/// lists, maps or records is therefore done once per pair of nodes
/// ([`Memo`]): linear in the sizes of the DAGs, not of the trees.
pub fn fits(found: &Type, expected: &Type) -> bool {
    fits_in(found, expected, &mut Memo::default())
}

/// The one type of two values that must have one type (the branches of an
/// `if`, two list elements, two map values): the larger of the two when
/// one fits the other (`Int` and `Float` give `Float`), else `None`. Memoized
/// per pair of nodes like [`fits`].
pub fn join(a: &Type, b: &Type) -> Option<Type> {
    join_in(a, b, &mut Memo::default())
}

/// The results of comparisons of shared nodes, by the addresses of the two
/// nodes. Every node used as a key is kept alive in `keep` (a `join` makes
/// new types while it runs), so no address is reused while the memo lives.
#[derive(Default)]
struct Memo {
    fits: rustc_hash::FxHashMap<(usize, usize), bool>,
    join: rustc_hash::FxHashMap<(usize, usize), Option<Type>>,
    keep: Vec<Type>,
}

/// The address of a list's, map's or record's node, or `None` for a type
/// without one.
fn node(t: &Type) -> Option<usize> {
    match t {
        Type::List(x) | Type::Map(x) | Type::Optional(x) => Some(Arc::as_ptr(x) as usize),
        Type::Record(x) => Some(Arc::as_ptr(x) as *const u8 as usize),
        _ => None,
    }
}

fn fits_in(found: &Type, expected: &Type, m: &mut Memo) -> bool {
    let (Some(a), Some(b)) = (node(found), node(expected)) else {
        return fits_raw(found, expected, m);
    };
    if let Some(r) = m.fits.get(&(a, b)) {
        return *r;
    }
    let r = fits_raw(found, expected, m);
    m.fits.insert((a, b), r);
    m.keep.extend([found.clone(), expected.clone()]);
    r
}

fn join_in(a: &Type, b: &Type, m: &mut Memo) -> Option<Type> {
    let (Some(x), Some(y)) = (node(a), node(b)) else {
        return join_raw(a, b, m);
    };
    if let Some(r) = m.join.get(&(x, y)) {
        return r.clone();
    }
    let r = join_raw(a, b, m);
    m.join.insert((x, y), r.clone());
    m.keep.extend([a.clone(), b.clone()]);
    r
}

/// [`fits`] of one pair, its parts through the memo.
fn fits_raw(found: &Type, expected: &Type, m: &mut Memo) -> bool {
    use Type::*;
    match (found, expected) {
        (Error | Nothing, _) | (_, Error | Nothing) => true,
        // Shared parts (a `let` used twice) are compared once.
        (List(a), List(b)) | (Map(a), Map(b)) if Arc::ptr_eq(a, b) => true,
        (Record(a), Record(b)) if Arc::ptr_eq(a, b) => true,
        (Optional(f), _) => fits_in(f, expected, m),
        (_, Optional(e)) => fits_in(found, e, m),
        (Bool, Bool) | (Int, Int) | (Float, Float) | (Int, Float) => true,
        (Memory, Memory) | (Cpu, Cpu) | (Int | Float, Cpu) => true,
        (Str(_), Str(_) | Image) | (Image, Image) => true,
        (File(_), File(_)) | (Secret, Secret) | (Asset, Asset) => true,
        (Str(_) | Secret | StrOrSecret, StrOrSecret) => true,
        (Enum(a), Enum(b)) => a.name == b.name,
        (EnumLit(v), Enum(d)) => d.variants.iter().any(|x| **x == **v),
        (EnumLit(a), EnumLit(b)) => a == b,
        (List(a), List(b)) | (Map(a), Map(b)) => fits_in(a, b, m),
        (Record(fs), Map(e)) => fs.values().all(|v| fits_in(v, e, m)),
        (Record(fs), Schema(rt)) => {
            fs.iter().all(|(k, v)| match rt.field_ref(k) {
                Some(t) => fits_in(v, &Type::from_ty(t), m),
                None => false,
            }) && rt
                .fields()
                .iter()
                .all(|(n, _, req)| !*req || fs.contains_key(*n))
        }
        (Map(v), Schema(_)) => v.is_unknown(),
        (Schema(a), Schema(b)) => a == b,
        (Record(a), Record(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && fits_in(v1, v2, m))
        }
        (Env, Env) => true,
        (Fn(a), Fn(b)) | (Template(a), Template(b)) => a == b,
        (Builtin(a), Builtin(b)) => a == b,
        (EnumType(a), EnumType(b)) => a.name == b.name,
        _ => false,
    }
}

/// [`join`] of one pair, its parts through the memo.
fn join_raw(a: &Type, b: &Type, m: &mut Memo) -> Option<Type> {
    use Type::*;
    Some(match (a, b) {
        (Error, _) | (_, Error) => Error,
        (List(x), List(y)) | (Map(x), Map(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Record(x), Record(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Nothing, t) | (t, Nothing) => t.clone(),
        // Two string-like values are strings.
        (Str(x), Str(y)) => {
            if x == y {
                a.clone()
            } else {
                Type::string()
            }
        }
        (List(x), List(y)) => List(Arc::new(join_in(x, y, m)?)),
        (Map(x), Map(y)) => Map(Arc::new(join_in(x, y, m)?)),
        (Record(x), Map(y)) | (Map(y), Record(x)) => {
            let mut t = (**y).clone();
            for v in x.values() {
                t = join_in(&t, v, m)?;
            }
            Map(Arc::new(t))
        }
        (EnumLit(x), Enum(d)) | (Enum(d), EnumLit(x)) if d.variants.iter().any(|v| **v == **x) => {
            Enum(d.clone())
        }
        (Record(x), Record(y)) if x.keys().eq(y.keys()) => {
            let mut out = BTreeMap::new();
            for ((k, v1), v2) in x.iter().zip(y.values()) {
                out.insert(k.clone(), join_in(v1, v2, m)?);
            }
            Record(Arc::new(out))
        }
        _ if fits_in(b, a, m) => a.clone(),
        _ if fits_in(a, b, m) => b.clone(),
        _ => return None,
    })
}

/// How deep a type is written in messages and hovers: below it a record is
/// `{…}` (a type is a DAG whose tree may be exponentially large).
const SHOWN_DEPTH: usize = 4;

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.show(f, 0)
    }
}

/// A type written at a depth (see [`SHOWN_DEPTH`]).
struct Shown<'a>(&'a Type, usize);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.show(f, self.1)
    }
}

impl Type {
    fn show(&self, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
        let sub = |t| Shown(t, depth + 1);
        if depth >= SHOWN_DEPTH {
            if let Type::Record(_) | Type::Map(_) | Type::List(_) = self {
                return write!(f, "…");
            }
        }
        match self {
            Type::Error => write!(f, "an unknown type"),
            Type::Nothing => write!(f, "nothing"),
            Type::Bool => write!(f, "Bool"),
            Type::Int => write!(f, "Int"),
            Type::Float => write!(f, "Float"),
            Type::Str(t) => write!(f, "{t}"),
            Type::Memory => write!(f, "Memory"),
            Type::Cpu => write!(f, "Cpu"),
            Type::Image => write!(f, "Image"),
            Type::File(_) => write!(f, "File"),
            Type::Secret => write!(f, "Secret"),
            Type::StrOrSecret => write!(f, "String or Secret"),
            Type::List(t) => write!(f, "[{}]", sub(t)),
            Type::Map(t) => write!(f, "{{String: {}}}", sub(t)),
            Type::Optional(t) => write!(f, "{}?", sub(t)),
            Type::Enum(d) => write!(f, "{}", d.name),
            Type::EnumLit(v) => write!(f, "enum literal .{v}"),
            Type::Schema(r) => write!(f, "{}", r.name()),
            Type::Record(fs) => {
                write!(f, "{{")?;
                for (i, (k, v)) in fs.iter().enumerate() {
                    if i >= 8 {
                        write!(f, ", …")?;
                        break;
                    }
                    write!(f, "{}{k}: {}", if i == 0 { "" } else { ", " }, sub(v))?;
                }
                write!(f, "}}")
            }
            Type::Env => write!(f, "Env"),
            Type::Asset => write!(f, "Asset"),
            Type::Fn(s) => {
                write!(f, "fn(")?;
                params(f, s)?;
                write!(f, ") -> {}", s.ret)
            }
            Type::Template(s) => {
                write!(f, "template(")?;
                params(f, s)?;
                write!(f, ")")
            }
            Type::Builtin(b) => write!(f, "builtin `{}`", b.name()),
            Type::Module(_) => write!(f, "module"),
            Type::EnumType(d) => write!(f, "enum {}", d.name),
        }
    }
}

fn params(f: &mut fmt::Formatter<'_>, s: &Signature) -> fmt::Result {
    for (i, p) in s.params.iter().enumerate() {
        let opt = if p.has_default { " = …" } else { "" };
        write!(
            f,
            "{}{}: {}{opt}",
            if i == 0 { "" } else { ", " },
            p.name,
            p.ty
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_fits_float_and_not_the_other_way() {
        assert!(fits(&Type::Int, &Type::Float));
        assert!(!fits(&Type::Float, &Type::Int));
        assert_eq!(join(&Type::Int, &Type::Float), Some(Type::Float));
        assert!(!fits(&Type::Int, &Type::string()));
        assert_eq!(join(&Type::Int, &Type::string()), None);
    }

    #[test]
    fn a_plain_record_fits_a_schema_record_only_with_its_fields() {
        let mut fs = BTreeMap::new();
        fs.insert("count".to_string(), Type::Int);
        let r = Type::Record(Arc::new(fs.clone()));
        assert!(fits(&r, &Type::Schema(RecordTy::Gpu)));
        fs.insert("cuont".to_string(), Type::Int);
        assert!(!fits(
            &Type::Record(Arc::new(fs)),
            &Type::Schema(RecordTy::Gpu)
        ));
        // `name` and `uid` are required.
        assert!(!fits(&r, &Type::Schema(RecordTy::User)));
    }
}
