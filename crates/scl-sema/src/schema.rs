//! The Env schema: one table holding, for every field of the built-in record
//! types (`Env`, `Python`, `Volume`, …), its name, type, whether it must be
//! given, its default, the names users bring from other tools for it
//! (aliases, for did-you-mean), its key in the IR, whether it is a set-like
//! list, and its documentation.
//!
//! Everything that needs to know a field reads it here: the type checks of
//! record paths and record literals ([`RecordTy::fields`] is a view of this
//! table), normalization (defaults, set-like lists, the record `self`
//! reads), the did-you-mean of an unknown field, and editor completion and
//! hover. The book's schema page (`book/src/reference/schema.md`) says the
//! same in prose; a test checks that every field has a doc, an IR key that
//! a serialized `EnvSpec` has, and aliases that resolve.

use crate::ty::{mode_ty, EnumDef, Field, RecordTy, Ty};
use scl_ir::path::Seg;
use scl_ir::FieldPath;
use std::sync::{Arc, OnceLock};

/// The record types' fields, as the type checks read them: views of the
/// table (defined here so that `ty.rs` does not depend on the schema).
impl RecordTy {
    /// The fields: name, type, and whether a value must be given: a view of
    /// the schema table ([`fields`], which also holds each field's default,
    /// aliases, IR key and doc), built once.
    pub fn fields(self) -> &'static [Field] {
        static TABLE: std::sync::OnceLock<Vec<Vec<Field>>> = std::sync::OnceLock::new();
        let table = TABLE.get_or_init(|| {
            RecordTy::ALL
                .iter()
                .map(|r| {
                    fields(*r)
                        .iter()
                        .map(|f| (f.name, f.ty.clone(), f.required))
                        .collect()
                })
                .collect()
        });
        &table[self as usize]
    }

    /// The type of field `name`, if the record has it.
    pub fn field(self, name: &str) -> Option<Ty> {
        self.field_ref(name).cloned()
    }

    /// Like [`RecordTy::field`], without cloning the type.
    pub fn field_ref(self, name: &str) -> Option<&'static Ty> {
        self.fields()
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, t, _)| t)
    }
}

/// What an unset field becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldDefault {
    /// Nothing: an unset field is absent from the IR.
    None,
    /// An unset list or map is empty (and left out of the IR).
    Empty,
    /// This string.
    Str(&'static str),
    /// This integer.
    Int(i64),
    /// This enum variant (written without the dot).
    Variant(&'static str),
    /// Computed from other fields when unset; the text says how.
    Inferred(&'static str),
    /// An unset record is made of its own fields' defaults (in an env that
    /// is built).
    Fields,
}

/// One field of a built-in record type.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDef {
    /// The name as users write it.
    pub name: &'static str,
    pub ty: Ty,
    /// True when a record of this type must give it.
    pub required: bool,
    pub default: FieldDefault,
    /// Names users bring from other tools (compose, Kubernetes, cog,
    /// conda) that mean this field when written in the same record,
    /// lower-case; offered as "did you mean" when edit distance finds nothing.
    pub aliases: &'static [&'static str],
    /// Aliases written one record up: `packages` in an env means
    /// `system.packages`.
    pub parent_aliases: &'static [&'static str],
    /// The field's key in the IR object of its record (`scl-ir`).
    pub ir: &'static str,
    /// A set-like list: de-duplicated keeping the first occurrence.
    pub set_like: bool,
    /// For an integer field (or a list of integers): the values its IR
    /// field holds, inclusive; a value outside is E0318, never clamped.
    pub range: Option<(i64, i64)>,
    /// What the field means, for hover and completion (one or two sentences).
    pub doc: &'static str,
}

impl FieldDef {
    fn new(name: &'static str, ty: Ty, doc: &'static str) -> FieldDef {
        let default = match ty {
            Ty::List(_) | Ty::Map(_) => FieldDefault::Empty,
            _ => FieldDefault::None,
        };
        FieldDef {
            name,
            ty,
            required: false,
            default,
            aliases: &[],
            parent_aliases: &[],
            ir: name,
            set_like: false,
            range: None,
            doc,
        }
    }
    fn required(mut self) -> Self {
        self.required = true;
        self
    }
    fn default(mut self, d: FieldDefault) -> Self {
        self.default = d;
        self
    }
    fn aliases(mut self, a: &'static [&'static str]) -> Self {
        self.aliases = a;
        self
    }
    fn parent_aliases(mut self, a: &'static [&'static str]) -> Self {
        self.parent_aliases = a;
        self
    }
    fn set_like(mut self) -> Self {
        self.set_like = true;
        self
    }
    fn range(mut self, lo: i64, hi: i64) -> Self {
        self.range = Some((lo, hi));
        self
    }
}

fn enum_ty(name: &str, variants: &[&str]) -> Ty {
    Ty::Enum(Arc::new(EnumDef {
        name: name.into(),
        variants: variants.iter().map(|s| s.to_string()).collect(),
    }))
}

/// The fields of `rt`, in declaration order (built once).
pub fn fields(rt: RecordTy) -> &'static [FieldDef] {
    static TABLE: OnceLock<Vec<Vec<FieldDef>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| RecordTy::ALL.iter().map(|r| build(*r)).collect());
    &table[rt as usize]
}

/// Field `name` of `rt`.
pub fn field(rt: RecordTy, name: &str) -> Option<&'static FieldDef> {
    fields(rt).iter().find(|f| f.name == name)
}

/// The field an alias written in a record of type `rt` stands for, as a
/// path from that record (`vars`, `system.packages`), if `name` is one
/// (compared without regard to case).
pub fn alias(rt: RecordTy, name: &str) -> Option<String> {
    let n = name.to_ascii_lowercase();
    for f in fields(rt) {
        if f.aliases.contains(&n.as_str()) {
            return Some(f.name.to_string());
        }
        if let Ty::Record(sub) = &f.ty {
            if let Some(g) = fields(*sub)
                .iter()
                .find(|g| g.parent_aliases.contains(&n.as_str()))
            {
                return Some(format!("{}.{}", f.name, g.name));
            }
        }
    }
    None
}

/// The set-like lists of the Env schema, as paths from the env's record:
/// de-duplicated keeping the first occurrence, compared as written (the
/// contract's "The EnvSpec IR"). Normalization and the record `self` reads
/// both use this list.
pub fn set_like() -> &'static [FieldPath] {
    static LIST: OnceLock<Vec<FieldPath>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut out = Vec::new();
        for f in fields(RecordTy::Env) {
            if f.set_like {
                out.push(FieldPath::fields(&[f.name]));
            }
            // Set-like lists sit at most one record deep (`python.packages`).
            if let Ty::Record(sub) = &f.ty {
                for g in fields(*sub).iter().filter(|g| g.set_like) {
                    out.push(FieldPath::fields(&[f.name, g.name]));
                }
            }
        }
        out
    })
}

/// The path of a field of the schema as a [`FieldPath`] of static names:
/// `path(&["python", "version"])`. The names are not checked here
/// ([`resolve`] checks a path against the schema).
pub fn path(names: &[&'static str]) -> FieldPath {
    FieldPath::fields(names)
}

/// The definition of the field at `path` below a record of type `rt`, and
/// the path with the schema's own names; map keys and list elements end
/// the walk (`vars.HOME` resolves to `vars`). `None` when a segment is not
/// a field.
pub fn resolve(rt: RecordTy, path: &FieldPath) -> Option<&'static FieldDef> {
    let mut cur = rt;
    let mut found = None;
    for seg in path.segments() {
        let f = field(cur, seg.as_str())?;
        found = Some(f);
        match &f.ty {
            Ty::Record(sub) => cur = *sub,
            Ty::Optional(t) => match &**t {
                Ty::Record(sub) => cur = *sub,
                _ => return found,
            },
            _ => return found,
        }
    }
    found
}

/// The record type at `path` below a record of type `rt` (`resources.limits`
/// → `ResourceList`), for completion: the fields valid inside
/// `resources.limits { … }` are `fields(record_at(Env, that path))`. `None`
/// when the path does not end at a record field.
pub fn record_at(rt: RecordTy, path: &FieldPath) -> Option<RecordTy> {
    let mut cur = rt;
    for seg in path.segments() {
        cur = match &field(cur, seg.as_str())?.ty {
            Ty::Record(sub) => *sub,
            _ => return None,
        };
    }
    Some(cur)
}

/// The default of field `name` of `rt` as a string (for [`FieldDefault::Str`]
/// and [`FieldDefault::Variant`]).
pub fn default_str(rt: RecordTy, name: &str) -> Option<&'static str> {
    match field(rt, name)?.default {
        FieldDefault::Str(s) | FieldDefault::Variant(s) => Some(s),
        _ => None,
    }
}

/// The default of integer field `name` of `rt`.
pub fn default_int(rt: RecordTy, name: &str) -> Option<i64> {
    match field(rt, name)?.default {
        FieldDefault::Int(i) => Some(i),
        _ => None,
    }
}

/// The range of integer field `name` of `rt` (its `FieldDef::range`; the
/// whole `i64` range for a field without one).
pub fn range(rt: RecordTy, name: &str) -> (i64, i64) {
    field(rt, name)
        .and_then(|f| f.range)
        .unwrap_or((i64::MIN, i64::MAX))
}

/// A segment naming schema field `name` of `rt` (a static name when the
/// schema has it, else a key).
pub fn seg(rt: RecordTy, name: &str) -> Seg {
    match field(rt, name) {
        Some(f) => Seg::Field(f.name),
        None => Seg::Key(name.into()),
    }
}

/// The largest `u32`, the IR type of most integer fields.
const U32: i64 = u32::MAX as i64;

fn build(rt: RecordTy) -> Vec<FieldDef> {
    use FieldDefault as D;
    use Ty::*;
    let list = |t: Ty| List(Box::new(t));
    let map = |t: Ty| Map(Box::new(t));
    let f = FieldDef::new;
    match rt {
        RecordTy::Env => vec![
            f("description", String, "What the env is for. The Docker target writes it as a one-line `LABEL`."),
            f("base", Image, "The image the env is built on: `image(\"debian:12.5\")`. Required for an env that is built (not for one that only has `services`).")
                .aliases(&["image", "from", "base_image"]),
            f("builder", Image, "An image to build compiled Python wheels in (a multi-stage build): the packages are built there and only the wheels are copied into `base`.")
                .aliases(&["build_image", "builder_image"]),
            f("system", Record(RecordTy::System), "OS packages and the package manager that installs them.")
                .default(D::Inferred("when `base` is set: the manager inferred from the image, and no packages")),
            f("python", Record(RecordTy::Python), "The Python interpreter version, package manager, packages, requirements files and indexes.")
                .aliases(&["requirements", "pip", "python_packages"]),
            f("conda", Record(RecordTy::Conda), "Conda channels and packages."),
            f("resources", Record(RecordTy::Resources), "CPU, memory and GPU requests and limits, applied at run time.")
                .aliases(&["resource", "gpu", "gpus", "cpu", "memory"]),
            f("volumes", list(Record(RecordTy::Volume)), "Volumes mounted at run time, never baked into an image; two volumes on one mount path are an error. Ordered.")
                .aliases(&["volume", "mounts"]),
            f("vars", map(StrOrSecret), "Environment variables; a value is a string or a `secret(...)`, and secrets are never written as plain text.")
                .aliases(&["env", "envs", "env_vars", "envvars", "environment", "variables", "environment_variables"]),
            f("assets", list(Asset), "Files fetched at build time (`huggingface(...)`, `url(...)`). Ordered."),
            f("files", list(Record(RecordTy::Copy)), "Local files copied into the image (`{ from = \"./src\", to = \"/workspace/src\" }`). Ordered.")
                .aliases(&["copy", "add"]),
            f("setup", list(String), "Build-time shell scripts, run after packages, in order, as root; each is one `sh -e` script.")
                .aliases(&["run", "steps", "build_steps"]),
            f("test", list(String), "Smoke-test commands (`sh -c` lines) run in the built image: Apptainer `%test`, and the `docker run` check `sclc build` prints.")
                .aliases(&["tests", "smoke_test", "check"]),
            f("writable", list(Path), "Container folders the runtime user must write (caches such as `HF_HOME`): created in the image and owned by that user.")
                .aliases(&["writable_dirs", "cache_dirs", "caches"])
                .set_like(),
            f("workdir", Path, "The working folder of the container; not `/` nor a top-level system folder.")
                .default(D::Str("/workspace"))
                .aliases(&["working_dir", "work_dir", "cwd", "workingdir"]),
            f("user", Record(RecordTy::User), "The user the container runs as: non-root unless set otherwise.")
                .default(D::Fields),
            f("entrypoint", list(String), "The entrypoint, exec form, kept exactly (never de-duplicated)."),
            f("command", list(String), "The command, exec form, kept exactly (never de-duplicated).")
                .aliases(&["cmd", "args"]),
            f("ports", list(Int), "Ports the container listens on (1 to 65535).")
                .aliases(&["expose", "port"])
                .range(1, 65535)
                .set_like(),
            f("distributed", Record(RecordTy::Distributed), "Distributed training: backend, launcher, nodes and processes per node. Absent means one process."),
            f("services", map(Env), "A multi-service environment (compose): one env per service."),
            f("depends_on", list(String), "Inside a service: the sibling services it starts after (without a cycle).")
                .set_like(),
            f("labels", map(String), "Image and Kubernetes labels.")
                .aliases(&["label", "annotations"]),
            f("ignore", list(String), "Globs kept out of the build context (`.dockerignore`).")
                .aliases(&["dockerignore", "exclude"])
                .set_like(),
        ],
        RecordTy::System => vec![
            f("packages", list(String), "OS packages, installed with the base image's package manager and checked against its name grammar.")
                .parent_aliases(&["packages", "apt", "apt_packages", "system_packages"])
                .set_like(),
            f("manager", enum_ty("SystemManager", &scl_ir::SystemManager::ALL.map(scl_ir::SystemManager::name)), "The package manager: inferred from the image (alpine → `.apk`; fedora, rocky, ubi and the rest of the Red Hat family → `.dnf`, but centos 7, amazonlinux 2 and oraclelinux 7 → `.yum` and the minimal images (`ubi9-minimal`, `rockylinux:9-minimal`, `oraclelinux:9-slim`) → `.microdnf`; otherwise `.apt`); set it to override.")
                .default(D::Inferred("from `base`: alpine → apk; fedora, rocky, ubi, centos, almalinux, amazonlinux, oraclelinux → dnf, except centos 7, amazonlinux 2 and oraclelinux 7 → yum and the minimal images → microdnf; otherwise apt")),
        ],
        RecordTy::Python => vec![
            f("version", Version, "The Python version, as a string kept as written (`\"3.10\"` stays `\"3.10\"`)."),
            f("manager", enum_ty("PythonManager", &["pip", "uv", "conda"]), "The tool that installs the packages.")
                .default(D::Variant("pip")),
            f("packages", list(Requirement), "PEP 508 requirements, validated at compile time.")
                .aliases(&["pip", "package"])
                .set_like(),
            f("requirements", list(RequirementsFile), "Requirements files (`file(\"./requirements.txt\")`), read, checked as pip reads them and hashed at compile time.")
                .aliases(&["requirement", "requirements_file"])
                .set_like(),
            f("index_url", Url, "The package index that replaces PyPI; also set by a requirements file's `--index-url` line."),
            f("extra_index_urls", list(Url), "More package indexes; requirements files' `--extra-index-url` lines are appended.")
                .set_like(),
            f("index_credentials", Secret, "A netrc file (`machine HOST login USER password TOKEN`) held as a `secret(...)`, for private package indexes: given to the build as a secret mount, never written.")
                .aliases(&["netrc", "index_auth", "credentials"]),
        ],
        RecordTy::Conda => vec![
            f("channels", list(String), "Conda channels (a name such as `conda-forge`, or an http(s) URL), in priority order.")
                .set_like(),
            f("packages", list(MatchSpec), "Conda match specs; a channel named in a spec must be in `channels`.")
                .set_like(),
        ],
        RecordTy::Resources => vec![
            f("requests", Record(RecordTy::ResourceList), "What the scheduler reserves."),
            f("limits", Record(RecordTy::ResourceList), "The most the container may use; a limit below its request is an error."),
        ],
        RecordTy::ResourceList => vec![
            f("cpu", Cpu, "Cores (`4`, `0.5`) or millicores (`1500m`); in the IR in millicores."),
            f("memory", Memory, "Memory (`32Gi`); in the IR in bytes.")
                .aliases(&["mem", "ram"]),
            f("gpu", Record(RecordTy::Gpu), "GPUs: `{ count = 1, type = \"NVIDIA-A100-SXM4-80GB\" }`.")
                .aliases(&["gpus", "nvidia.com/gpu"]),
        ],
        RecordTy::Gpu => vec![
            f("count", Int, "GPUs per replica (Kubernetes `nvidia.com/gpu`).")
                .required()
                .range(0, U32),
            f("type", String, "The accelerator type used for node selection: a value of the node label `node_label` (`\"NVIDIA-A100-SXM4-80GB\"` for GPU Feature Discovery's default label, `\"nvidia-a100-80gb\"` on GKE)."),
            f("memory", Memory, "The least memory per GPU."),
            f("node_label", String, "The node label whose value is `type` (Kubernetes `nodeSelector`); default `nvidia.com/gpu.product`, GPU Feature Discovery's label."),
        ],
        RecordTy::Volume => vec![
            f("name", String, "The volume's name in manifests; unique in an env.").required(),
            f("source", VolumeSource, "`s3://BUCKET/PREFIX`, `pvc://CLAIM`, `nfs://HOST/PATH`, or `host:PATH` (relative to the file, inside the workspace).").required(),
            f("mount", Path, "The container path; one volume per mount path.").required(),
            f("mode", mode_ty(), "`.read_only`, `.read_write` or `.read_write_many`.")
                .default(D::Variant("read_only")),
        ],
        RecordTy::Copy => vec![
            f("from", HostPath, "A local path relative to the file, inside the workspace; it must exist.").required(),
            f("to", Path, "The container path.").required(),
        ],
        RecordTy::User => vec![
            f("name", String, "The user name (`[a-z_][a-z0-9_-]*`, at most 32 characters), created in the image unless `uid` is 0.")
                .required()
                .default(D::Str("app")),
            f("uid", Int, "The numeric user id: `0` is root; at most 4294967294.")
                .required()
                .default(D::Int(1000))
                // 4294967295 is `(uid_t)-1`, which chown(2) and setuid(2)
                // read as "no change".
                .range(0, U32 - 1),
        ],
        RecordTy::Distributed => vec![
            f("backend", enum_ty("Backend", &["nccl", "gloo", "mpi"]), "The communication backend.")
                .default(D::Variant("nccl")),
            f("launcher", enum_ty("Launcher", &["torchrun", "deepspeed", "accelerate", "mpirun"]), "The program that starts the processes.")
                .default(D::Variant("torchrun")),
            f("nodes", Int, "Replicas (pods or machines).")
                .default(D::Int(1))
                .range(1, U32),
            f("procs_per_node", Int, "Processes per replica, usually one per GPU.")
                .default(D::Int(1))
                .range(1, U32),
            f("elastic", Record(RecordTy::Elastic), "Elastic training bounds (torchrun `--nnodes=MIN:MAX`, `--max-restarts`)."),
        ],
        RecordTy::Elastic => vec![
            f("min_nodes", Int, "The fewest nodes the job runs with.")
                .required()
                .default(D::Int(1))
                .range(1, U32),
            f("max_nodes", Int, "The most nodes the job runs with (not below `min_nodes`).")
                .required()
                .default(D::Int(1))
                .range(1, U32),
            f("max_restarts", Int, "How often the job may restart.")
                .required()
                .default(D::Int(0))
                .range(0, U32),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scl_ir::*;

    /// An EnvSpec with every optional part set and every list non-empty,
    /// serialized: the IR keys the table must name.
    fn full_ir() -> serde_json::Value {
        let rl = ResourceList {
            cpu: Some(1000),
            memory: Some(1),
            gpu: Some(Gpu {
                count: 1,
                node_label: Some("l".into()),
                kind: Some("a".into()),
                memory: Some(1),
            }),
        };
        let spec = EnvSpec {
            description: Some("d".into()),
            base: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            system: Some(System {
                packages: vec!["curl".into()],
                manager: SystemManager::Apt,
            }),
            python: Some(Python {
                index_credentials: Some(SecretRef {
                    secret: "s".into(),
                    key: "n".into(),
                }),
                version: Some("3.12".into()),
                manager: PythonManager::Pip,
                packages: vec!["numpy".into()],
                requirements: vec![FileRef {
                    path: "r.txt".into(),
                    sha256: "0".into(),
                }],
                index_url: Some("https://x".into()),
                extra_index_urls: vec!["https://y".into()],
            }),
            conda: Some(Conda {
                channels: vec!["conda-forge".into()],
                packages: vec!["numpy".into()],
            }),
            resources: Some(Resources {
                requests: Some(rl.clone()),
                limits: Some(rl),
            }),
            volumes: vec![Volume {
                name: "v".into(),
                source: "pvc://v".into(),
                mount: "/v".into(),
                mode: VolumeMode::ReadOnly,
            }],
            vars: [("A".into(), VarValue::Plain("1".into()))].into(),
            assets: vec![Asset::Url {
                url: "https://z".into(),
                sha256: None,
                to: "/z".into(),
            }],
            files: vec![Copy {
                from: "a".into(),
                to: "/a".into(),
            }],
            setup: vec!["true".into()],
            test: vec!["true".into()],
            writable: vec!["/c".into()],
            builder: Some(ImageRef {
                reference: "debian:12.5".into(),
                digest: None,
            }),
            workdir: Some("/w".into()),
            user: Some(User {
                name: "app".into(),
                uid: 1000,
            }),
            entrypoint: vec!["e".into()],
            command: vec!["c".into()],
            ports: vec![80],
            distributed: Some(Distributed {
                backend: Backend::Nccl,
                launcher: Launcher::Torchrun,
                nodes: 2,
                procs_per_node: 1,
                elastic: Some(Elastic {
                    min_nodes: 1,
                    max_nodes: 2,
                    max_restarts: 0,
                }),
            }),
            services: [("s".to_string(), Arc::new(EnvSpec::default()))].into(),
            depends_on: vec!["s".into()],
            labels: [(Arc::from("l"), Arc::from("v"))].into(),
            ignore: vec!["*.ckpt".into()],
            ..EnvSpec::default()
        };
        serde_json::to_value(&spec).unwrap()
    }

    /// Walks every field reachable from `Env`, with its IR value.
    fn walk(rt: RecordTy, ir: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        for f in fields(rt) {
            let here = format!("{at}{}", f.name);
            let v = ir
                .get(f.ir)
                .unwrap_or_else(|| panic!("`{here}`: the IR has no key {:?} here: {ir}", f.ir));
            out.push(here.clone());
            let (ty, v) = match (&f.ty, v) {
                (Ty::List(t), serde_json::Value::Array(a)) => (&**t, &a[0]),
                (t, v) => (t, v),
            };
            if let Ty::Record(sub) = ty {
                walk(*sub, v, &format!("{here}."), out);
            }
        }
    }

    #[test]
    fn every_field_has_an_ir_key_and_a_doc() {
        let ir = full_ir();
        let mut seen = Vec::new();
        walk(RecordTy::Env, &ir, "", &mut seen);
        // Every record type is reached from Env (so every field was checked).
        for rt in RecordTy::ALL {
            assert!(
                rt == RecordTy::Env
                    || seen
                        .iter()
                        .any(|p| resolve(RecordTy::Env, &FieldPath::parse(p))
                            .is_some_and(|f| f.ty == Ty::Record(rt)
                                || f.ty == Ty::List(Box::new(Ty::Record(rt))))),
                "{rt:?} is not reached from Env"
            );
            for f in fields(rt) {
                assert!(
                    f.doc.len() > 10 && f.doc.ends_with('.'),
                    "{}.{}: no doc",
                    rt.name(),
                    f.name
                );
            }
        }
        // And the IR has no top-level key the schema does not name.
        for k in ir.as_object().unwrap().keys() {
            assert!(
                field(RecordTy::Env, k).is_some(),
                "IR key {k} is not in the schema"
            );
        }
    }

    #[test]
    fn aliases_resolve_to_fields() {
        for rt in RecordTy::ALL {
            for f in fields(rt) {
                for a in f.aliases {
                    assert!(field(rt, a).is_none(), "{a} is a field of {}", rt.name());
                    let to = alias(rt, a).unwrap_or_else(|| panic!("{a} does not resolve"));
                    let def = resolve(rt, &FieldPath::parse(&to)).expect("a field");
                    assert_eq!(def.name, f.name, "{a} → {to}");
                    assert_eq!(*a, a.to_ascii_lowercase());
                }
            }
        }
        assert_eq!(
            alias(RecordTy::Env, "APT").as_deref(),
            Some("system.packages")
        );
        assert_eq!(alias(RecordTy::Env, "Environment").as_deref(), Some("vars"));
        assert_eq!(
            alias(RecordTy::ResourceList, "nvidia.com/gpu").as_deref(),
            Some("gpu")
        );
        assert_eq!(alias(RecordTy::Env, "nothing"), None);
    }

    #[test]
    fn every_integer_field_has_the_range_of_its_ir_field() {
        for rt in RecordTy::ALL {
            for f in fields(rt) {
                let int =
                    matches!(&f.ty, Ty::Int) || matches!(&f.ty, Ty::List(t) if **t == Ty::Int);
                assert_eq!(int, f.range.is_some(), "{}.{}", rt.name(), f.name);
                if let Some((lo, hi)) = f.range {
                    assert!(0 <= lo && lo <= hi && hi <= U32, "{}.{}", rt.name(), f.name);
                }
            }
        }
        assert_eq!(range(RecordTy::Env, "ports"), (1, 65535));
        assert_eq!(range(RecordTy::User, "uid"), (0, 4294967294));
    }

    #[test]
    fn the_record_at_a_path() {
        let at = |p: &str| record_at(RecordTy::Env, &FieldPath::parse(p));
        assert_eq!(at(""), Some(RecordTy::Env));
        assert_eq!(at("resources.limits"), Some(RecordTy::ResourceList));
        assert_eq!(at("resources.limits.gpu"), Some(RecordTy::Gpu));
        assert_eq!(at("distributed.elastic"), Some(RecordTy::Elastic));
        assert_eq!(at("python.version"), None);
        assert_eq!(at("vars.HOME"), None);
        assert_eq!(at("nothing"), None);
        let docs: Vec<&str> = fields(at("resources.limits").unwrap())
            .iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(docs, ["cpu", "memory", "gpu"]);
    }

    #[test]
    fn the_set_like_lists() {
        let got: Vec<String> = set_like().iter().map(|p| p.to_string()).collect();
        assert_eq!(
            got,
            [
                "system.packages",
                "python.packages",
                "python.requirements",
                "python.extra_index_urls",
                "conda.channels",
                "conda.packages",
                "writable",
                "ports",
                "depends_on",
                "ignore",
            ]
        );
    }

    #[test]
    fn record_ty_fields_is_a_view_of_the_table() {
        for rt in RecordTy::ALL {
            let view: Vec<(&str, &Ty, bool)> =
                rt.fields().iter().map(|(n, t, r)| (*n, t, *r)).collect();
            let table: Vec<(&str, &Ty, bool)> = fields(rt)
                .iter()
                .map(|f| (f.name, &f.ty, f.required))
                .collect();
            assert_eq!(view, table);
        }
    }
}
