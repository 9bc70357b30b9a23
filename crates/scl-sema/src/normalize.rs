//! Normalization: the final record of an env → the EnvSpec IR. Fills
//! defaults, infers the system package manager, de-duplicates set-like lists,
//! and checks what only the whole env can show (a built env needs a base,
//! limits not below requests, `depends_on` names sibling services).

use crate::eval::{Evaluator, Reported, R};
use crate::value::*;
use scl_diag::{Diagnostic, Span};
use scl_ir::*;
use std::collections::BTreeMap;
use std::sync::Arc;

fn get<'a>(r: &'a Record, path: &str) -> Option<&'a Value> {
    let mut cur = r;
    let mut parts = path.split('.').peekable();
    while let Some(p) = parts.next() {
        let v = cur.get(p)?;
        if parts.peek().is_none() {
            return Some(v);
        }
        match v {
            Value::Record(x) => cur = x,
            _ => return None,
        }
    }
    None
}

fn s(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Enum { variant, .. } => variant.to_string(),
        other => other.to_string(),
    }
}

fn strs(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::List(l)) => l.iter().map(s).collect(),
        _ => Vec::new(),
    }
}

/// De-duplicates keeping the first occurrence (compared as written).
fn dedup<T: Eq + std::hash::Hash + Clone>(v: Vec<T>) -> Vec<T> {
    let mut seen = std::collections::HashSet::with_capacity(v.len());
    v.into_iter().filter(|x| seen.insert(x.clone())).collect()
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

/// Infers the package manager from an image reference: alpine → apk;
/// fedora, rocky, ubi, centos, almalinux, amazonlinux → dnf; else apt.
pub fn infer_manager(image: &str) -> SystemManager {
    let repo = image.split(['@']).next().unwrap_or("").to_lowercase();
    let name = repo.rsplit('/').next().unwrap_or("");
    let (name, tag) = name.split_once(':').unwrap_or((name, ""));
    if name.contains("alpine") || tag.contains("alpine") {
        SystemManager::Apk
    } else if [
        "fedora",
        "rockylinux",
        "rocky",
        "ubi",
        "centos",
        "almalinux",
        "amazonlinux",
    ]
    .iter()
    .any(|d| name.starts_with(d))
    {
        SystemManager::Dnf
    } else {
        SystemManager::Apt
    }
}

pub(crate) fn normalize(
    ev: &Evaluator,
    env: &Arc<EnvValue>,
    r: &Record,
    origins: &BTreeMap<String, Origin>,
) -> R<EnvSpec> {
    let mut failed = false;
    // Where to point for a path: its origin, else the env's own span.
    let at = |path: &str| -> (crate::ModuleId, Span) {
        let mut p = path.to_string();
        loop {
            if let Some(o) = origins.get(&p) {
                return (o.module, o.span);
            }
            match p.rfind('.') {
                Some(i) => p.truncate(i),
                None => return (env.module, env.extends_span),
            }
        }
    };
    // Kept without `apiVersion` (it is added on output), so that an env used
    // as a service is shared, not copied.
    let mut spec = EnvSpec::default();
    spec.description = get(r, "description").map(s);
    if let Some(Value::Image { reference, digest }) = get(r, "base") {
        spec.base = Some(ImageRef {
            reference: reference.to_string(),
            digest: digest.as_ref().map(|d| d.to_string()),
        });
    }
    // services
    if let Some(services) = rec(get(r, "services")) {
        for (name, v) in services.iter() {
            let Value::Env(e) = v else { continue };
            match ev.final_of(e) {
                Ok(f) => match &f.spec {
                    Some(sp) => {
                        spec.services.insert(name.clone(), sp.clone());
                    }
                    None => failed = true,
                },
                Err(_) => failed = true,
            }
        }
        let names: Vec<&String> = services.keys().collect();
        for (name, sp) in &spec.services {
            for dep in &sp.depends_on {
                if !names.contains(&dep) {
                    let (m, span) = at(&format!("services.{name}"));
                    ev.report(
                        m,
                        Diagnostic::error(
                            "E0208",
                            span,
                            format!(
                                "service `{name}` depends on `{dep}`, which is not a service here"
                            ),
                        )
                        .with_help(format!(
                            "services: {}",
                            names
                                .iter()
                                .map(|n| n.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    );
                    failed = true;
                }
            }
        }
    }
    // An env that only has services (even ones that failed) is not built.
    let has_services = rec(get(r, "services")).is_some_and(|m| !m.is_empty());
    let built = spec.base.is_some() || !has_services;
    if spec.base.is_none() && !has_services {
        let name = env
            .layers
            .last()
            .map(|l| l.name.clone())
            .unwrap_or_default();
        ev.report(
            env.module,
            Diagnostic::error(
                "E0209",
                env.extends_span,
                format!("env `{name}` has no `base` image"),
            )
            .with_help("set `base = image(\"debian:12.5\")`, or extend an env that has one"),
        );
        failed = true;
    }
    // system
    let packages = dedup(strs(get(r, "system.packages")));
    let manager = match get(r, "system.manager") {
        Some(Value::Enum { variant, .. }) => match &**variant {
            "apk" => Some(SystemManager::Apk),
            "dnf" => Some(SystemManager::Dnf),
            _ => Some(SystemManager::Apt),
        },
        _ => spec.base.as_ref().map(|b| infer_manager(&b.reference)),
    };
    if let Some(manager) = manager {
        if spec.base.is_some() || !packages.is_empty() {
            spec.system = Some(System { packages, manager });
        }
    }
    // python
    if let Some(py) = rec(get(r, "python")) {
        let manager = match py.get("manager") {
            Some(Value::Enum { variant, .. }) if &**variant == "uv" => PythonManager::Uv,
            Some(Value::Enum { variant, .. }) if &**variant == "conda" => PythonManager::Conda,
            _ => PythonManager::Pip,
        };
        let requirements = match py.get("requirements") {
            Some(Value::List(l)) => dedup(
                l.iter()
                    .filter_map(|f| match f {
                        Value::File { path, sha256, .. } => Some(FileRef {
                            path: path.to_string(),
                            sha256: sha256.to_string(),
                        }),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => Vec::new(),
        };
        spec.python = Some(Python {
            version: py.get("version").map(s),
            manager,
            packages: dedup(strs(py.get("packages"))),
            requirements,
            index_url: py.get("index_url").map(s),
            extra_index_urls: dedup(strs(py.get("extra_index_urls"))),
        });
    }
    if let Some(c) = rec(get(r, "conda")) {
        spec.conda = Some(Conda {
            channels: dedup(strs(c.get("channels"))),
            packages: dedup(strs(c.get("packages"))),
        });
    }
    // resources
    if let Some(res) = rec(get(r, "resources")) {
        let list = |x: Option<&Value>| -> Option<ResourceList> {
            let l = rec(x)?;
            let cpu = match l.get("cpu") {
                Some(Value::Cpu(c)) => Some(*c),
                _ => None,
            };
            let memory = match l.get("memory") {
                Some(Value::Memory(b)) => Some(*b),
                _ => None,
            };
            let gpu = rec(l.get("gpu")).map(|g| Gpu {
                count: int(g.get("count")).unwrap_or(0).clamp(0, u32::MAX as i64) as u32,
                kind: g.get("type").map(s),
                memory: match g.get("memory") {
                    Some(Value::Memory(b)) => Some((*b).clamp(0, u64::MAX as i128) as u64),
                    _ => None,
                },
            });
            Some(ResourceList {
                cpu: cpu.map(|c| c.max(0) as u64),
                memory: memory.map(|b| b.clamp(0, u64::MAX as i128) as u64),
                gpu,
            })
        };
        for which in ["requests", "limits"] {
            for (field, neg) in [(
                "cpu",
                matches!(rec(res.get(which)).and_then(|l| l.get("cpu")), Some(Value::Cpu(c)) if *c < 0),
            )] {
                if neg {
                    let (m, span) = at(&format!("resources.{which}.{field}"));
                    ev.report(
                        m,
                        Diagnostic::error(
                            "E0208",
                            span,
                            format!("`resources.{which}.cpu` cannot be negative"),
                        ),
                    );
                    failed = true;
                }
            }
            if let Some(g) = rec(rec(res.get(which)).and_then(|l| l.get("gpu"))) {
                if int(g.get("count")).is_some_and(|c| c < 0) {
                    let (m, span) = at(&format!("resources.{which}.gpu"));
                    ev.report(
                        m,
                        Diagnostic::error("E0208", span, "a GPU count cannot be negative"),
                    );
                    failed = true;
                }
            }
        }
        let requests = list(res.get("requests"));
        let limits = list(res.get("limits"));
        if let (Some(rq), Some(lm)) = (&requests, &limits) {
            let pairs: [(&str, Option<u64>, Option<u64>, fn(u64) -> String); 3] = [
                ("cpu", rq.cpu, lm.cpu, |v| format_cpu(v as i64)),
                ("memory", rq.memory, lm.memory, |v| format_memory(v as i128)),
                (
                    "gpu.count",
                    rq.gpu.as_ref().map(|g| g.count as u64),
                    lm.gpu.as_ref().map(|g| g.count as u64),
                    |v| v.to_string(),
                ),
            ];
            for (field, q, l, fmt) in pairs {
                if let (Some(q), Some(l)) = (q, l) {
                    if l < q {
                        let (m, span) = at(&format!("resources.limits.{field}"));
                        let (qm, qspan) = at(&format!("resources.requests.{field}"));
                        ev.report(
                            m,
                            Diagnostic::error(
                                "E0304",
                                span,
                                format!("the limit of {field} ({}) is below its request ({})", fmt(l), fmt(q)),
                            )
                            .with_label(ev.host.display_path(qm), qspan, format!("requested {}", fmt(q)))
                            .with_help("raise the limit or lower the request; Kubernetes rejects a pod whose limit is below its request"),
                        );
                        failed = true;
                    }
                }
            }
        }
        if requests.is_some() || limits.is_some() {
            spec.resources = Some(Resources { requests, limits });
        }
    }
    // volumes
    if let Some(Value::List(vs)) = get(r, "volumes") {
        for v in vs.iter() {
            let Value::Record(v) = v else { continue };
            let mode = match v.get("mode") {
                Some(Value::Enum { variant, .. }) if &**variant == "read_write" => {
                    VolumeMode::ReadWrite
                }
                Some(Value::Enum { variant, .. }) if &**variant == "read_write_many" => {
                    VolumeMode::ReadWriteMany
                }
                _ => VolumeMode::ReadOnly,
            };
            spec.volumes.push(Volume {
                name: v.get("name").map(s).unwrap_or_default(),
                source: v.get("source").map(s).unwrap_or_default(),
                mount: v.get("mount").map(s).unwrap_or_default(),
                mode,
            });
        }
        let mut seen: Vec<&str> = Vec::new();
        for v in &spec.volumes {
            if seen.contains(&v.name.as_str()) {
                let (m, span) = at("volumes");
                ev.report(
                    m,
                    Diagnostic::error("E0208", span, format!("two volumes are named `{}`", v.name))
                        .with_help("volume names must be unique"),
                );
                failed = true;
            }
            seen.push(&v.name);
        }
    }
    if let Some(vars) = rec(get(r, "vars")) {
        for (k, v) in vars.iter() {
            let val = match v {
                Value::Secret { name, key } => VarValue::Secret(SecretRef {
                    secret: name.to_string(),
                    key: key.to_string(),
                }),
                other => VarValue::Plain(s(other)),
            };
            spec.vars.insert(k.clone(), val);
        }
    }
    if let Some(Value::List(a)) = get(r, "assets") {
        for x in a.iter() {
            let Value::Record(x) = x else { continue };
            let asset = if x.get("kind").map(s).as_deref() == Some("huggingface") {
                Asset::Huggingface {
                    repo: x.get("repo").map(s).unwrap_or_default(),
                    files: strs(x.get("files")),
                    revision: x.get("revision").map(s).unwrap_or_else(|| "main".into()),
                    to: x.get("to").map(s).unwrap_or_default(),
                }
            } else {
                Asset::Url {
                    url: x.get("url").map(s).unwrap_or_default(),
                    sha256: x.get("sha256").map(s),
                    to: x.get("to").map(s).unwrap_or_default(),
                }
            };
            spec.assets.push(asset);
        }
    }
    if let Some(Value::List(fs)) = get(r, "files") {
        for f in fs.iter() {
            if let Value::Record(f) = f {
                spec.files.push(Copy {
                    from: f.get("from").map(s).unwrap_or_default(),
                    to: f.get("to").map(s).unwrap_or_default(),
                });
            }
        }
    }
    spec.setup = strs(get(r, "setup"));
    spec.entrypoint = strs(get(r, "entrypoint"));
    spec.command = strs(get(r, "command"));
    if built {
        spec.workdir = Some(
            get(r, "workdir")
                .map(s)
                .unwrap_or_else(|| "/workspace".into()),
        );
        let user = rec(get(r, "user"));
        spec.user = Some(User {
            name: user
                .and_then(|u| u.get("name"))
                .map(s)
                .unwrap_or_else(|| "app".into()),
            uid: int(user.and_then(|u| u.get("uid")))
                .unwrap_or(1000)
                .clamp(0, u32::MAX as i64) as u32,
        });
        if let Some(u) = user {
            if int(u.get("uid")).is_some_and(|x| x < 0) {
                let (m, span) = at("user");
                ev.report(
                    m,
                    Diagnostic::error("E0208", span, "`user.uid` cannot be negative"),
                );
                failed = true;
            }
        }
    } else if let Some(w) = get(r, "workdir") {
        spec.workdir = Some(s(w));
    }
    if let Some(Value::List(ps)) = get(r, "ports") {
        let mut ports = Vec::new();
        for p in ps.iter() {
            if let Value::Int(p) = p {
                if !(1..=65535).contains(p) {
                    let (m, span) = at("ports");
                    ev.report(
                        m,
                        Diagnostic::error(
                            "E0208",
                            span,
                            format!("port {p} is out of range (1–65535)"),
                        ),
                    );
                    failed = true;
                } else {
                    ports.push(*p as u16);
                }
            }
        }
        spec.ports = dedup(ports);
    }
    if let Some(d) = rec(get(r, "distributed")) {
        let e = |k: &str| d.get(k).map(s);
        let nodes = int(d.get("nodes")).unwrap_or(1);
        let procs = int(d.get("procs_per_node")).unwrap_or(1);
        for (k, v) in [("nodes", nodes), ("procs_per_node", procs)] {
            if v < 1 {
                let (m, span) = at(&format!("distributed.{k}"));
                ev.report(
                    m,
                    Diagnostic::error(
                        "E0208",
                        span,
                        format!("`distributed.{k}` must be at least 1, found {v}"),
                    ),
                );
                failed = true;
            }
        }
        let elastic = rec(d.get("elastic")).map(|x| Elastic {
            min_nodes: int(x.get("min_nodes"))
                .unwrap_or(1)
                .clamp(0, u32::MAX as i64) as u32,
            max_nodes: int(x.get("max_nodes"))
                .unwrap_or(1)
                .clamp(0, u32::MAX as i64) as u32,
            max_restarts: int(x.get("max_restarts"))
                .unwrap_or(0)
                .clamp(0, u32::MAX as i64) as u32,
        });
        spec.distributed = Some(Distributed {
            backend: match e("backend").as_deref() {
                Some("gloo") => Backend::Gloo,
                Some("mpi") => Backend::Mpi,
                _ => Backend::Nccl,
            },
            launcher: match e("launcher").as_deref() {
                Some("deepspeed") => Launcher::Deepspeed,
                Some("accelerate") => Launcher::Accelerate,
                Some("mpirun") => Launcher::Mpirun,
                _ => Launcher::Torchrun,
            },
            nodes: nodes.clamp(0, u32::MAX as i64) as u32,
            procs_per_node: procs.clamp(0, u32::MAX as i64) as u32,
            elastic,
        });
    }
    spec.depends_on = dedup(strs(get(r, "depends_on")));
    if let Some(l) = rec(get(r, "labels")) {
        for (k, v) in l.iter() {
            spec.labels.insert(k.clone(), s(v));
        }
    }
    spec.ignore = dedup(strs(get(r, "ignore")));
    if failed {
        Err(Reported)
    } else {
        Ok(spec)
    }
}

/// The record `self` reads: the env's record with the defaults that
/// normalization fills in (`workdir`, `user`, the inferred `system.manager`,
/// `python.manager`, `distributed` defaults), and unset lists and maps as
/// empty, so that `self.workdir` or `len(self.ports)` see what the IR will say.
pub(crate) fn self_view(r: &Record) -> Record {
    use crate::ty::{RecordTy, Ty};
    let mut r = r.clone();
    let enum_v = |ty: &str, v: &str| Value::Enum {
        ty: Some(ty.into()),
        variant: v.into(),
    };
    for (name, ty, _) in RecordTy::Env.fields().iter() {
        match ty {
            Ty::List(_) => {
                r.entry(name.to_string())
                    .or_insert_with(|| Value::List(Arc::new(Vec::new())));
            }
            Ty::Map(_) => {
                r.entry(name.to_string())
                    .or_insert_with(|| Value::Record(Arc::new(Record::new())));
            }
            _ => {}
        }
    }
    r.entry("workdir".into())
        .or_insert_with(|| Value::str("/workspace"));
    fill_defaults(
        &mut r,
        "user",
        vec![("name", Value::str("app")), ("uid", Value::Int(1000))],
    );
    let base = match r.get("base") {
        Some(Value::Image { reference, .. }) => Some(reference.to_string()),
        _ => None,
    };
    if let Some(b) = base {
        let m = match infer_manager(&b) {
            SystemManager::Apt => "apt",
            SystemManager::Apk => "apk",
            SystemManager::Dnf => "dnf",
        };
        fill_defaults(
            &mut r,
            "system",
            vec![
                ("manager", enum_v("SystemManager", m)),
                ("packages", Value::List(Arc::new(Vec::new()))),
            ],
        );
    }
    if let Some(Value::Record(p)) = r.get_mut("python") {
        Arc::make_mut(p)
            .entry("manager".into())
            .or_insert_with(|| enum_v("PythonManager", "pip"));
    }
    if let Some(Value::Record(d)) = r.get_mut("distributed") {
        let d = Arc::make_mut(d);
        d.entry("backend".into())
            .or_insert_with(|| enum_v("Backend", "nccl"));
        d.entry("launcher".into())
            .or_insert_with(|| enum_v("Launcher", "torchrun"));
        d.entry("nodes".into()).or_insert(Value::Int(1));
        d.entry("procs_per_node".into()).or_insert(Value::Int(1));
    }
    r
}

/// Sets the fields of the record at `key` that are missing to `defaults`
/// (creating the record if needed).
fn fill_defaults(r: &mut Record, key: &str, defaults: Vec<(&str, Value)>) {
    let entry = r
        .entry(key.to_string())
        .or_insert_with(|| Value::Record(Arc::new(Record::new())));
    if let Value::Record(rec) = entry {
        let rec = Arc::make_mut(rec);
        for (k, v) in defaults {
            rec.entry(k.to_string()).or_insert(v);
        }
    }
}
