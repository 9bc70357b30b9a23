//! Types: the built-in scalar types, lists, maps, optionals, enums, and the
//! record types of the Env schema (`design/language.md`, "The Env schema").

use std::fmt;
use std::sync::Arc;

/// An enum type: its name and variants (in declaration order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumDef {
    pub name: String,
    pub variants: Vec<String>,
}

/// A type known to the checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// No expectation (an untyped `let`).
    Any,
    Bool,
    Int,
    Float,
    String,
    /// A container path (as written), or a host path where the schema says so.
    Path,
    /// A local path copied into the image, resolved relative to the file
    /// that writes it and stored workspace-relative.
    HostPath,
    /// A volume source (`s3://…`, `pvc://…`, `nfs://…`, `host:PATH`); a
    /// `host:` path is resolved like [`Ty::HostPath`].
    VolumeSource,
    Url,
    Version,
    Image,
    Memory,
    Cpu,
    Requirement,
    MatchSpec,
    File,
    /// A `File` holding a pip requirements file: every requirement line is
    /// validated as PEP 508.
    RequirementsFile,
    Secret,
    /// The value of an entry of `vars`: `String` or `Secret`.
    StrOrSecret,
    List(Box<Ty>),
    /// `{String: T}`
    Map(Box<Ty>),
    Optional(Box<Ty>),
    Enum(Arc<EnumDef>),
    Record(RecordTy),
    Env,
    Asset,
}

/// The built-in record types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordTy {
    Env,
    System,
    Python,
    Conda,
    Resources,
    ResourceList,
    Gpu,
    Volume,
    Copy,
    User,
    Distributed,
    Elastic,
}

/// `Mode`: `.read_only .read_write .read_write_many`.
pub fn mode_ty() -> Ty {
    Ty::Enum(Arc::new(EnumDef {
        name: "Mode".into(),
        variants: ["read_only", "read_write", "read_write_many"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }))
}

/// A schema field: its name, its type, and whether a value must be given
/// (see [`RecordTy::fields`], in `schema.rs`).
pub type Field = (&'static str, Ty, bool);

impl RecordTy {
    /// The record's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            RecordTy::Env => "Env",
            RecordTy::System => "System",
            RecordTy::Python => "Python",
            RecordTy::Conda => "Conda",
            RecordTy::Resources => "Resources",
            RecordTy::ResourceList => "ResourceList",
            RecordTy::Gpu => "Gpu",
            RecordTy::Volume => "Volume",
            RecordTy::Copy => "Copy",
            RecordTy::User => "User",
            RecordTy::Distributed => "Distributed",
            RecordTy::Elastic => "Elastic",
        }
    }

    /// Every record type, in declaration order (`ALL[r as usize] == r`).
    pub const ALL: [RecordTy; 12] = [
        RecordTy::Env,
        RecordTy::System,
        RecordTy::Python,
        RecordTy::Conda,
        RecordTy::Resources,
        RecordTy::ResourceList,
        RecordTy::Gpu,
        RecordTy::Volume,
        RecordTy::Copy,
        RecordTy::User,
        RecordTy::Distributed,
        RecordTy::Elastic,
    ];
}

impl Ty {
    /// The type named `name` among the built-ins (not user enums).
    pub fn builtin(name: &str) -> Option<Ty> {
        Some(match name {
            "Bool" => Ty::Bool,
            "Int" => Ty::Int,
            "Float" => Ty::Float,
            "String" => Ty::String,
            "Path" => Ty::Path,
            "Url" => Ty::Url,
            "Version" => Ty::Version,
            "Image" => Ty::Image,
            "Memory" => Ty::Memory,
            "Cpu" => Ty::Cpu,
            "Requirement" => Ty::Requirement,
            "MatchSpec" => Ty::MatchSpec,
            "File" => Ty::File,
            "Secret" => Ty::Secret,
            "Env" => Ty::Env,
            "Asset" => Ty::Asset,
            "Mode" => mode_ty(),
            "Volume" => Ty::Record(RecordTy::Volume),
            "Gpu" => Ty::Record(RecordTy::Gpu),
            "Copy" => Ty::Record(RecordTy::Copy),
            "User" => Ty::Record(RecordTy::User),
            "Distributed" => Ty::Record(RecordTy::Distributed),
            "Elastic" => Ty::Record(RecordTy::Elastic),
            "Resources" => Ty::Record(RecordTy::Resources),
            "ResourceList" => Ty::Record(RecordTy::ResourceList),
            "System" => Ty::Record(RecordTy::System),
            "Python" => Ty::Record(RecordTy::Python),
            "Conda" => Ty::Record(RecordTy::Conda),
            _ => return None,
        })
    }

    /// Every built-in type name, for did-you-mean.
    pub const BUILTIN_NAMES: &'static [&'static str] = &[
        "Bool",
        "Int",
        "Float",
        "String",
        "Path",
        "Url",
        "Version",
        "Image",
        "Memory",
        "Cpu",
        "Requirement",
        "MatchSpec",
        "File",
        "Secret",
        "Env",
        "Asset",
        "Mode",
        "Volume",
        "Gpu",
        "Copy",
        "User",
        "Distributed",
        "Elastic",
        "Resources",
        "ResourceList",
        "System",
        "Python",
        "Conda",
    ];

    /// True for types whose values are strings (a `--set` value is taken literally).
    pub fn is_string_like(&self) -> bool {
        match self {
            Ty::String
            | Ty::Path
            | Ty::HostPath
            | Ty::VolumeSource
            | Ty::Url
            | Ty::Version
            | Ty::Requirement
            | Ty::MatchSpec => true,
            Ty::Optional(t) => t.is_string_like(),
            _ => false,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => write!(f, "any"),
            Ty::Bool => write!(f, "Bool"),
            Ty::Int => write!(f, "Int"),
            Ty::Float => write!(f, "Float"),
            Ty::String => write!(f, "String"),
            Ty::Path | Ty::HostPath => write!(f, "Path"),
            Ty::VolumeSource => write!(f, "String"),
            Ty::Url => write!(f, "Url"),
            Ty::Version => write!(f, "Version"),
            Ty::Image => write!(f, "Image"),
            Ty::Memory => write!(f, "Memory"),
            Ty::Cpu => write!(f, "Cpu"),
            Ty::Requirement => write!(f, "Requirement"),
            Ty::MatchSpec => write!(f, "MatchSpec"),
            Ty::File | Ty::RequirementsFile => write!(f, "File"),
            Ty::Secret => write!(f, "Secret"),
            Ty::StrOrSecret => write!(f, "String or Secret"),
            Ty::List(t) => write!(f, "[{t}]"),
            Ty::Map(t) => write!(f, "{{String: {t}}}"),
            Ty::Optional(t) => write!(f, "{t}?"),
            Ty::Enum(e) => write!(f, "{}", e.name),
            Ty::Record(r) => write!(f, "{}", r.name()),
            Ty::Env => write!(f, "Env"),
            Ty::Asset => write!(f, "Asset"),
        }
    }
}
