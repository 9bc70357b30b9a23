//! The SCL side of the team's shared benchmark workload (described in `bench/README.md`):
//! the generator, and the check of `sclc ir` output against the peers'
//! expected JSON (`gen_peers.py`'s `expected()`), mapped back field by field.

use serde_json::{json, Map, Value};
use std::path::Path;

/// Module topology: who module `i` imports as `prev`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    Chain,
    Fanin,
}

impl Topology {
    pub fn parse(s: &str) -> Option<Topology> {
        match s {
            "chain" => Some(Topology::Chain),
            "fanin" => Some(Topology::Fanin),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Topology::Chain => "chain",
            Topology::Fanin => "fanin",
        }
    }
    /// `prev(i)` of gen_peers.py.
    pub fn prev(self, i: usize) -> Option<usize> {
        match (i, self) {
            (0, _) => None,
            (_, Topology::Chain) => Some(i - 1),
            (_, Topology::Fanin) => Some((i - 1) / 2),
        }
    }
}

/// `BASE` of gen_peers.py (30 fields), as JSON.
pub fn base_record() -> Value {
    json!({
        "name": "base",
        "description": "Base development environment",
        "parent": "",
        "image": "debian:12-slim",
        "platform": "linux/amd64",
        "version": "1.0.0",
        "user": "app",
        "uid": 1000,
        "gid": 1000,
        "workdir": "/workspace",
        "shell": "/bin/bash",
        "entrypoint": ["/bin/bash", "-lc"],
        "command": ["sleep", "infinity"],
        "packages": ["curl", "git", "ca-certificates", "build-essential", "vim",
                     "less", "htop", "jq", "unzip", "wget"],
        "pip_packages": ["numpy", "pandas", "requests", "pyyaml", "rich", "click",
                         "pytest", "black", "mypy", "ipython"],
        "resources": {"cpu": 2, "memory": "4Gi", "gpu": 0, "gpu_type": "none"},
        "volumes": [
            {"name": "data", "mount": "/data", "read_only": false},
            {"name": "cache", "mount": "/cache", "read_only": false},
            {"name": "secrets", "mount": "/run/secrets", "read_only": true},
        ],
        "env": {"LANG": "C.UTF-8", "TZ": "UTC", "PIP_NO_CACHE_DIR": "1",
                "PYTHONUNBUFFERED": "1", "HOME": "/home/app"},
        "ports": [8080, 8888],
        "network": "bridge",
        "restart": "on-failure",
        "privileged": false,
        "read_only_root": false,
        "tty": true,
        "stop_signal": "SIGTERM",
        "stop_timeout_s": 30,
        "healthcheck": {"cmd": ["curl", "-f", "http://localhost:8080/health"],
                        "interval_s": 30, "retries": 3},
        "log_level": "info",
        "timezone": "UTC",
        "tags": ["base", "dev"],
    })
}

/// `expected(n, topology)` of gen_peers.py: `{"envs": [...]}`.
pub fn expected(n: usize, topo: Topology) -> Value {
    let base = base_record();
    let cpu = base["resources"]["cpu"].as_i64().unwrap();
    let envs: Vec<Value> = (0..n)
        .map(|i| {
            let mut e = base.clone();
            e["name"] = json!(format!("env-{i}"));
            e["parent"] = match topo.prev(i) {
                None => json!("base"),
                Some(p) => json!(format!("env-{p}")),
            };
            e["resources"]["cpu"] = json!(cpu * 2);
            e["packages"]
                .as_array_mut()
                .unwrap()
                .push(json!(format!("pkg-{i}")));
            e
        })
        .collect();
    json!({ "envs": envs })
}

fn lit(v: &Value) -> String {
    // JSON string and number literals are SCL literals for this data.
    v.to_string()
}

fn str_list(v: &Value) -> String {
    let items: Vec<String> = v.as_array().unwrap().iter().map(lit).collect();
    format!("[{}]", items.join(", "))
}

/// `base.env.scl`: the 30 BASE fields mapped onto Env fields and `labels`
/// (the mapping is undone by [`service_to_peer`]).
pub fn base_source() -> String {
    let b = base_record();
    let r = &b["resources"];
    let mut s = String::new();
    s.push_str(
        "// The shared benchmark workload's base environment (30 fields of gen_peers.py BASE).\n",
    );
    s.push_str("env base_env {\n");
    s.push_str(&format!("  description = {}\n", lit(&b["name"])));
    s.push_str(&format!("  base = image({})\n", lit(&b["image"])));
    s.push_str(&format!(
        "  system.packages = {}\n",
        str_list(&b["packages"])
    ));
    s.push_str(&format!(
        "  python.packages = {}\n",
        str_list(&b["pip_packages"])
    ));
    s.push_str("  resources.requests {\n");
    s.push_str(&format!("    cpu = {}\n", r["cpu"]));
    s.push_str(&format!("    memory = {}\n", r["memory"].as_str().unwrap()));
    s.push_str(&format!(
        "    gpu = {{ count = {}, type = {} }}\n",
        r["gpu"],
        lit(&r["gpu_type"])
    ));
    s.push_str("  }\n");
    s.push_str("  volumes = [\n");
    for v in b["volumes"].as_array().unwrap() {
        let name = v["name"].as_str().unwrap();
        let mode = if v["read_only"].as_bool().unwrap() {
            ".read_only"
        } else {
            ".read_write"
        };
        s.push_str(&format!(
            "    {{ name = \"{name}\", source = \"pvc://{name}\", mount = {}, mode = {mode} }},\n",
            lit(&v["mount"])
        ));
    }
    s.push_str("  ]\n");
    s.push_str("  vars {\n");
    for (k, v) in b["env"].as_object().unwrap() {
        s.push_str(&format!("    {k} = {}\n", lit(v)));
    }
    s.push_str("  }\n");
    s.push_str(&format!(
        "  ports = [{}]\n",
        b["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s.push_str(&format!("  entrypoint = {}\n", str_list(&b["entrypoint"])));
    s.push_str(&format!("  command = {}\n", str_list(&b["command"])));
    s.push_str(&format!(
        "  user = {{ name = {}, uid = {} }}\n",
        lit(&b["user"]),
        b["uid"]
    ));
    s.push_str(&format!("  workdir = {}\n", lit(&b["workdir"])));
    s.push_str(&format!("  ignore = {}\n", str_list(&b["tags"])));
    s.push_str("  labels {\n");
    let label =
        |s: &mut String, k: &str, v: String| s.push_str(&format!("    {k} = {}\n", lit(&json!(v))));
    label(&mut s, "summary", b["description"].as_str().unwrap().into());
    for k in LABEL_SCALARS {
        let v = &b[*k];
        let text = match v {
            Value::String(x) => x.clone(),
            other => other.to_string(),
        };
        label(&mut s, k, text);
    }
    let hc = &b["healthcheck"];
    let cmd: Vec<&str> = hc["cmd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    label(&mut s, "\"healthcheck.cmd\"", cmd.join(" "));
    label(
        &mut s,
        "\"healthcheck.interval_s\"",
        hc["interval_s"].to_string(),
    );
    label(&mut s, "\"healthcheck.retries\"", hc["retries"].to_string());
    s.push_str("  }\n}\n");
    s
}

/// BASE scalars kept as `labels` (typed back by [`service_to_peer`]).
const LABEL_SCALARS: &[&str] = &[
    "parent",
    "platform",
    "version",
    "gid",
    "shell",
    "network",
    "restart",
    "privileged",
    "read_only_root",
    "tty",
    "stop_signal",
    "stop_timeout_s",
    "log_level",
    "timezone",
];

/// `mod<i>.env.scl`. `description` is the line the incremental bench edits.
pub fn module_source(i: usize, topo: Topology, description: &str) -> String {
    let cpu = base_record()["resources"]["cpu"].as_i64().unwrap();
    let mut s = String::from("import \"./base.env.scl\" as base\n");
    let parent = match topo.prev(i) {
        Some(p) => {
            s.push_str(&format!("import \"./mod{p}.env.scl\" as prev\n"));
            format!("prev.m{p}.description")
        }
        None => "base.base_env.description".to_string(),
    };
    s.push_str(&format!(
        "\nenv m{i} extends base.base_env {{\n  description = \"{description}\"\n  labels {{ parent = {parent} }}\n  \
         resources.requests {{ cpu = 2 * {cpu} }}\n  system.packages += [\"pkg-{i}\"]\n}}\n"
    ));
    s
}

/// `top.env.scl`: every module, one service each.
pub fn top_source(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("import \"./mod{i}.env.scl\" as mod{i}\n"));
    }
    s.push_str("\nenv all {\n  services {\n");
    for i in 0..n {
        s.push_str(&format!("    e{i} = mod{i}.m{i}\n"));
    }
    s.push_str("  }\n}\n");
    s
}

/// Writes the workload for `n` modules into `dir`; returns the source bytes written.
pub fn write(dir: &Path, n: usize, topo: Topology) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let mut bytes = 0u64;
    let mut put = |name: String, text: String| -> std::io::Result<()> {
        bytes += text.len() as u64;
        std::fs::write(dir.join(name), text)
    };
    put("base.env.scl".into(), base_source())?;
    for i in 0..n {
        put(
            format!("mod{i}.env.scl"),
            module_source(i, topo, &format!("env-{i}")),
        )?;
    }
    put("top.env.scl".into(), top_source(n))?;
    Ok(bytes)
}

fn label<'a>(labels: &'a Value, k: &str) -> Result<&'a str, String> {
    labels
        .get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("label `{k}` missing"))
}

/// One service's IR mapped back onto the peers' record (the inverse of
/// [`base_source`] plus the module overrides).
pub fn service_to_peer(ir: &Value) -> Result<Value, String> {
    let base = base_record();
    let labels = ir.get("labels").ok_or("no labels")?;
    let mut out = Map::new();
    let g = |p: &str| {
        ir.pointer(p)
            .cloned()
            .ok_or_else(|| format!("IR has no {p}"))
    };
    out.insert("name".into(), g("/description")?);
    out.insert("description".into(), json!(label(labels, "summary")?));
    out.insert("image".into(), g("/base/ref")?);
    out.insert("user".into(), g("/user/name")?);
    out.insert("uid".into(), g("/user/uid")?);
    out.insert("workdir".into(), g("/workdir")?);
    out.insert("entrypoint".into(), g("/entrypoint")?);
    out.insert("command".into(), g("/command")?);
    out.insert("packages".into(), g("/system/packages")?);
    out.insert("pip_packages".into(), g("/python/packages")?);
    let millis = g("/resources/requests/cpu")?
        .as_i64()
        .ok_or("cpu is not an integer")?;
    let bytes = g("/resources/requests/memory")?
        .as_i64()
        .ok_or("memory is not an integer")?;
    if millis % 1000 != 0 || bytes % (1 << 30) != 0 {
        return Err(format!("cpu {millis}m / memory {bytes} B not whole"));
    }
    out.insert(
        "resources".into(),
        json!({"cpu": millis / 1000, "memory": format!("{}Gi", bytes >> 30),
               "gpu": g("/resources/requests/gpu/count")?, "gpu_type": g("/resources/requests/gpu/type")?}),
    );
    let vols: Vec<Value> = g("/volumes")?
        .as_array()
        .ok_or("volumes")?
        .iter()
        .map(|v| json!({"name": v["name"], "mount": v["mount"], "read_only": v["mode"] == "read_only"}))
        .collect();
    out.insert("volumes".into(), Value::Array(vols));
    out.insert("env".into(), g("/vars")?);
    out.insert("ports".into(), g("/ports")?);
    out.insert("tags".into(), g("/ignore")?);
    for k in LABEL_SCALARS {
        let text = label(labels, k)?;
        // Type each label back like the BASE field it carries.
        let v = match &base[*k] {
            Value::String(_) => json!(text),
            Value::Bool(_) => json!(text == "true"),
            _ => json!(text.parse::<i64>().map_err(|e| format!("label {k}: {e}"))?),
        };
        out.insert((*k).into(), v);
    }
    let cmd: Vec<&str> = label(labels, "healthcheck.cmd")?.split(' ').collect();
    let int = |k: &str| -> Result<i64, String> {
        label(labels, k)?
            .parse::<i64>()
            .map_err(|e| format!("{k}: {e}"))
    };
    out.insert(
        "healthcheck".into(),
        json!({"cmd": cmd, "interval_s": int("healthcheck.interval_s")?, "retries": int("healthcheck.retries")?}),
    );
    Ok(Value::Object(out))
}

/// Checks `sclc ir top.env.scl` output (`{"all": {...}}`) against the
/// expected peer JSON: N services, and each maps back to the expected record
/// (so env i's packages end with `pkg-<i>`, its CPU is doubled, its
/// description is `env-<i>`, its parent label is prev's description).
pub fn verify_ir(ir: &Value, expected: &Value) -> Result<(), String> {
    let services = ir
        .pointer("/all/services")
        .and_then(Value::as_object)
        .ok_or("no all.services in the IR")?;
    verify_services(services, expected)
}

pub fn verify_services(services: &Map<String, Value>, expected: &Value) -> Result<(), String> {
    let envs = expected["envs"].as_array().ok_or("expected has no envs")?;
    if services.len() != envs.len() {
        return Err(format!(
            "{} services, expected {}",
            services.len(),
            envs.len()
        ));
    }
    for (i, want) in envs.iter().enumerate() {
        let svc = services
            .get(&format!("e{i}"))
            .ok_or_else(|| format!("service e{i} missing"))?;
        let got = service_to_peer(svc).map_err(|e| format!("service e{i}: {e}"))?;
        if &got != want {
            return Err(format!("service e{i} differs:\n got  {got}\n want {want}"));
        }
        let pkgs = svc
            .pointer("/system/packages")
            .and_then(Value::as_array)
            .ok_or("no packages")?;
        if pkgs.last() != Some(&json!(format!("pkg-{i}"))) {
            return Err(format!("service e{i}: packages do not end with pkg-{i}"));
        }
    }
    Ok(())
}

/// `xtask gen OUTDIR N [--topology T]`: writes the SCL workload and the expected JSON.
pub fn gen_main(args: &[String]) -> i32 {
    let mut topo = Topology::Chain;
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--topology" {
            match it.next().and_then(|t| Topology::parse(t)) {
                Some(t) => topo = t,
                None => return 2,
            }
        } else {
            pos.push(a.clone());
        }
    }
    let (Some(out), Some(n)) = (
        pos.first(),
        pos.get(1).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: xtask gen OUTDIR N [--topology chain|fanin]");
        return 2;
    };
    let dir = Path::new(out);
    if let Err(e) = write(dir, n, topo) {
        eprintln!("error: {e}");
        return 1;
    }
    let exp = serde_json::to_string_pretty(&expected(n, topo)).unwrap();
    if let Err(e) = std::fs::write(dir.join(format!("expected-N{n}.json")), exp) {
        eprintln!("error: {e}");
        return 1;
    }
    println!("wrote {} (N={n}, {})", dir.display(), topo.name());
    0
}

/// The deep-chain workload: one module of `n` envs, `e0` with a base and
/// each `e<i>` extending `e<i-1>` (description, one var, a CPU request),
/// declared last to first so that no env is evaluated before its parent by
/// declaration order. `sclc ir --env e<n-1>` must say `description =
/// "e<n-1>"`, `vars.LEVEL = "<n-1>"` and every `vars.K<i mod 8>` set.
pub fn deep_chain_source(n: usize) -> String {
    let mut decls = vec![
        "env e0 {\n  base = image(\"debian:12.5\")\n  system.packages = [\"git\"]\n}\n".to_string(),
    ];
    for i in 1..n {
        decls.push(format!(
            "env e{i} extends e{} {{\n  description = \"e{i}\"\n  vars {{ LEVEL = \"{i}\", K{} = \"{i}\" }}\n  resources.requests.cpu = {}\n}}\n",
            i - 1,
            i % 8,
            i % 7 + 1
        ));
    }
    decls.reverse();
    decls.concat()
}

/// Checks `sclc ir --env e<n-1>` of [`deep_chain_source`].
pub fn verify_deep_chain(ir: &Value, n: usize) -> Result<(), String> {
    let last = n - 1;
    let want_desc = if last == 0 {
        None
    } else {
        Some(format!("e{last}"))
    };
    if ir
        .get("description")
        .and_then(Value::as_str)
        .map(String::from)
        != want_desc
    {
        return Err(format!("description: {:?}", ir.get("description")));
    }
    if last > 0 {
        let level = ir.pointer("/vars/LEVEL").and_then(Value::as_str);
        if level != Some(last.to_string().as_str()) {
            return Err(format!("vars.LEVEL: {level:?}"));
        }
        let cpu = ir
            .pointer("/resources/requests/cpu")
            .and_then(Value::as_u64);
        if cpu != Some(((last % 7 + 1) * 1000) as u64) {
            return Err(format!("resources.requests.cpu: {cpu:?}"));
        }
    }
    Ok(())
}

/// The import-chain workload: `m0.env.scl` … `m<n-1>.env.scl`, each module
/// importing the previous one and extending its env. Returns the top file.
pub fn write_import_chain(dir: &Path, n: usize) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("m0.env.scl"),
        "env e {\n  base = image(\"debian:12.5\")\n}\n",
    )?;
    for i in 1..n {
        std::fs::write(
            dir.join(format!("m{i}.env.scl")),
            format!(
                "import \"./m{}.env.scl\" as prev\nenv e extends prev.e {{\n  description = \"m{i}\"\n  vars {{ LEVEL = \"{i}\" }}\n}}\n",
                i - 1
            ),
        )?;
    }
    Ok(dir.join(format!("m{}.env.scl", n - 1)))
}
