//! `sclc doctor FILE [--env NAME]`: each env's requests (cores, memory,
//! GPUs, their type and memory, the NVIDIA driver its CUDA runtimes need,
//! the CUDA its GPUs' generation needs) against this machine, one line per
//! fact: `ok`, `FAIL` (will not fit: exit 1) or `note` (cannot be told).
//! Services are compared one by one, each as if alone on the machine.
//!
//! The driver is compared whenever `nvidia-smi` reports one, whether or not
//! the env requests a GPU (a CUDA runtime needs the driver all the same), by
//! the rule of `sclc check --driver` (E0506): one line per distinct CUDA
//! runtime (major.minor), naming every source of it (the base image, each
//! `+cuXYZ` wheel), so a failing line is one E0506. A GPU's memory fits
//! when `memory.total` is at least the request, or short of it by at most
//! [`MEMORY_SLACK_PERCENT`] % (cards report a little less than their
//! marketed size: an H100 80GB 81559 MiB).
//!
//! The machine is a [`Machine`]: [`Machine::probe`] reads this one (logical
//! cores from `std::thread::available_parallelism`, memory from
//! `/proc/meminfo`, GPUs from `nvidia-smi` on `PATH`); the comparison
//! ([`compare`]) takes any, so tests give facts directly.
//!
//! Test hooks (for the CLI tests, not an interface): `SCLC_DOCTOR_CORES`
//! (a number of cores) and `SCLC_DOCTOR_MEMORY_BYTES` (bytes) replace the
//! probed cores and memory, so the output does not depend on the machine
//! the tests run on. GPUs are faked by a `nvidia-smi` script first on `PATH`.

use scl_diag::Diagnostic;
use scl_domain::version::Dotted;
use scl_ide::ir::{EnvSpec, Gpu as GpuRequest, ResourceList};
use scl_ide::{Analysis, AnalysisHost, FileId, OsSystem, System};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::commands::{load_opened, render_diagnostics, shown_path, MessageFormat, Sources};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// How far below a per-GPU memory request a card's `memory.total` may be
/// and still fit: cards report their usable memory, a little less than
/// the marketed size (A100 80GB 81920 MiB, H100 80GB HBM3 81559, V100 32GB
/// 32510, V100 16GB 16160 — 1.4 % short of 16 GiB).
pub(crate) const MEMORY_SLACK_PERCENT: u64 = 2;

/// Whether a card with `have_mib` MiB holds a request of `want` bytes: at
/// least the request, or within [`MEMORY_SLACK_PERCENT`] of it.
fn memory_fits(have_mib: u64, want: u64) -> bool {
    u128::from(have_mib) * u128::from(MIB) * 100
        >= u128::from(want) * u128::from(100 - MEMORY_SLACK_PERCENT)
}

/// The query `sclc doctor` asks `nvidia-smi`; drivers older than the
/// `compute_cap` field (before 510) are asked without it.
const QUERY: &str = "name,memory.total,driver_version,compute_cap";
const QUERY_OLD: &str = "name,memory.total,driver_version";

/// One GPU as `nvidia-smi` lists it (`[N/A]` values are `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MachineGpu {
    /// `"NVIDIA H100 80GB HBM3"`.
    pub name: String,
    /// `memory.total` in MiB.
    pub memory_mib: Option<u64>,
    /// `"550.54.15"`.
    pub driver: Option<String>,
    /// `"9.0"`; from [`scl_domain::gpu::gpu_model`] when the driver does not say.
    pub compute_cap: Option<String>,
}

/// The facts of a machine that envs are compared with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Machine {
    /// Logical cores.
    pub cores: Option<u64>,
    /// Bytes.
    pub memory: Option<u64>,
    /// The GPUs, or why none were found (`"nvidia-smi is not on PATH"`).
    pub gpus: Result<Vec<MachineGpu>, String>,
}

impl Machine {
    /// This machine (see the module doc for the test hooks).
    pub(crate) fn probe() -> Machine {
        let hook = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let cores = hook("SCLC_DOCTOR_CORES").or_else(probe_cores);
        let memory = hook("SCLC_DOCTOR_MEMORY_BYTES").or_else(probe_memory);
        Machine {
            cores,
            memory,
            gpus: probe_gpus(),
        }
    }

    /// The driver of the machine's GPUs (the first one `nvidia-smi` names).
    fn driver(&self) -> Option<&str> {
        self.gpus
            .as_ref()
            .ok()?
            .iter()
            .find_map(|g| g.driver.as_deref())
    }
}

fn probe_cores() -> Option<u64> {
    if let Ok(n) = std::thread::available_parallelism() {
        return Some(n.get() as u64);
    }
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let n = text
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
        .count();
    (n > 0).then_some(n as u64)
}

fn probe_memory() -> Option<u64> {
    meminfo_total(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

fn probe_gpus() -> Result<Vec<MachineGpu>, String> {
    let run = |query: &str| {
        Command::new("nvidia-smi")
            .arg(format!("--query-gpu={query}"))
            .arg("--format=csv,noheader,nounits")
            .output()
    };
    let out = match run(QUERY) {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("nvidia-smi is not on PATH".into())
        }
        Err(e) => return Err(format!("nvidia-smi cannot be run: {e}")),
    };
    let (out, with_cc) = if out.status.success() {
        (out, true)
    } else {
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        if !said.contains("is not a valid field") {
            return Err(failed(&out));
        }
        match run(QUERY_OLD) {
            Ok(o) if o.status.success() => (o, false),
            Ok(o) => return Err(failed(&o)),
            Err(e) => return Err(format!("nvidia-smi cannot be run: {e}")),
        }
    };
    let gpus = parse_smi(&String::from_utf8_lossy(&out.stdout), with_cc)?;
    if gpus.is_empty() {
        return Err("nvidia-smi lists none".into());
    }
    Ok(gpus)
}

/// Why `nvidia-smi` failed: the first line of its stderr (else of its stdout).
fn failed(out: &std::process::Output) -> String {
    let first = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    let why = first(&out.stderr)
        .or_else(|| first(&out.stdout))
        .unwrap_or_else(|| format!("it exited with {}", out.status));
    format!("nvidia-smi failed: {why}")
}

/// The GPUs of `nvidia-smi --query-gpu=name,memory.total,driver_version[,compute_cap]
/// --format=csv,noheader,nounits` output. Fields are taken from the right,
/// so a name may hold commas; `[N/A]`-like values are `None`; blank lines
/// are skipped. Without `compute_cap`, it comes from the model's name.
pub(crate) fn parse_smi(text: &str, with_cc: bool) -> Result<Vec<MachineGpu>, String> {
    let fields = if with_cc { 4 } else { 3 };
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut parts: Vec<&str> = line.rsplitn(fields, ',').map(str::trim).collect();
        if parts.len() < fields {
            return Err(format!(
                "nvidia-smi printed a line sclc cannot read: `{line}`"
            ));
        }
        parts.reverse();
        let value = |s: &str| {
            let unknown = s.is_empty() || (s.starts_with('[') && s.ends_with(']'));
            (!unknown).then(|| s.to_string())
        };
        let name = parts[0].to_string();
        let memory_mib = value(parts[1]).and_then(|m| {
            m.trim_end_matches("MiB")
                .trim()
                .parse::<f64>()
                .ok()
                .map(|v| v as u64)
        });
        let driver = value(parts[2]);
        let compute_cap = if with_cc { value(parts[3]) } else { None }.or_else(|| {
            scl_domain::gpu::gpu_model(&name).map(|m| m.compute_capability.to_string())
        });
        out.push(MachineGpu {
            name,
            memory_mib,
            driver,
            compute_cap,
        });
    }
    Ok(out)
}

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    Fail,
    Note,
}

/// One compared fact: `cpu: 8 cores requested (limits), this machine has 16`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub status: Status,
    pub text: String,
}

/// The lines of one env: its own, then each service's (by name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvReport {
    pub env: String,
    pub lines: Vec<Line>,
    pub services: Vec<(String, Vec<Line>)>,
    /// The CUDA runtimes (of the env and its services) that need a newer
    /// driver than this machine's, each source as the E0506 message of
    /// `sclc check --driver` begins (`CUDA 12.1.1 (the base image …`), to
    /// pick those diagnostics.
    pub driver_failures: Vec<String>,
}

impl EnvReport {
    fn failures(&self) -> usize {
        let n = |ls: &[Line]| ls.iter().filter(|l| l.status == Status::Fail).count();
        n(&self.lines) + self.services.iter().map(|(_, l)| n(l)).sum::<usize>()
    }
}

/// What one env or service carries, for the comparison.
struct Target<'a> {
    spec: &'a EnvSpec,
    /// Its CUDA runtimes: (CUDA, where from), the base image's first, then
    /// each torch wheel's.
    runtimes: Vec<(String, String)>,
    /// Whether `runtimes[0]` is the base image's.
    base_first: bool,
    /// The `+cuXYZ` of its torchvision and torchaudio pins (in
    /// `python.packages`): runtimes for the driver, as E0506 counts them,
    /// but not the CUDA torch runs on.
    other_wheels: Vec<(String, String)>,
}

/// Compares env `spec` (its CUDA runtimes `runtimes`, from
/// [`Analysis::cuda_runtimes`]) and its services with `machine`.
pub(crate) fn compare(
    env: &str,
    spec: &EnvSpec,
    runtimes: Vec<(String, String)>,
    machine: &Machine,
) -> EnvReport {
    let base_first = base_cuda(spec).is_some();
    let mut lines = Vec::new();
    let mut driver_failures = Vec::new();
    if spec.base.is_some() || spec.services.is_empty() {
        lines = compare_one(
            &Target {
                spec,
                runtimes,
                base_first,
                other_wheels: wheel_cudas(spec, &["torchvision", "torchaudio"]),
            },
            machine,
            &mut driver_failures,
        );
    }
    let services = spec
        .services
        .iter()
        .map(|(name, s)| {
            (
                name.clone(),
                compare_one(&service_target(s), machine, &mut driver_failures),
            )
        })
        .collect();
    EnvReport {
        env: env.to_string(),
        lines,
        services,
        driver_failures,
    }
}

fn base_cuda(spec: &EnvSpec) -> Option<String> {
    scl_ide::ir::bases::ships(&spec.base.as_ref()?.reference).cuda
}

/// A service's CUDA runtimes: its base image's and each `torch==…+cuXYZ`
/// of its `python.packages` (a service's requirements files are not read).
fn service_target(spec: &EnvSpec) -> Target<'_> {
    let mut runtimes = Vec::new();
    let base_first = if let Some(c) = base_cuda(spec) {
        let reference = &spec.base.as_ref().expect("has a base").reference;
        runtimes.push((c, format!("the base image {reference}")));
        true
    } else {
        false
    };
    runtimes.extend(wheel_cudas(spec, &["torch"]));
    Target {
        spec,
        runtimes,
        base_first,
        other_wheels: wheel_cudas(spec, &["torchvision", "torchaudio"]),
    }
}

/// The CUDA of each `NAME==…+cuXYZ` pin of `python.packages` whose name is
/// one of `names`: (CUDA, `` `the pin` ``).
fn wheel_cudas(spec: &EnvSpec, names: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in spec.python.iter().flat_map(|p| &p.packages) {
        let Some((name, version)) = p.split_once("==") else {
            continue;
        };
        if !names.iter().any(|n| name.trim().eq_ignore_ascii_case(n)) {
            continue;
        }
        let version = version.split(';').next().unwrap_or_default().trim();
        if let Some(c) = scl_domain::version::split_local(version)
            .1
            .and_then(scl_domain::version::cuda_of_local)
        {
            out.push((c, format!("`{p}`")));
        }
    }
    out
}

/// The CUDA runtimes of a target by major.minor, as `sclc check --driver`
/// counts them: (the CUDA shown — its first source's —, every source), the
/// base image's first.
fn distinct_runtimes(t: &Target) -> Vec<(String, Vec<(String, String)>)> {
    let key = |c: &str| Dotted::parse(c).map_or(c.to_string(), |v| v.major_minor());
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (cuda, from) in t.runtimes.iter().chain(&t.other_wheels) {
        match out.iter_mut().find(|(c, _)| key(c) == key(cuda)) {
            Some((_, sources)) => {
                if !sources.iter().any(|(_, f)| f == from) {
                    sources.push((cuda.clone(), from.clone()));
                }
            }
            None => out.push((cuda.clone(), vec![(cuda.clone(), from.clone())])),
        }
    }
    out
}

/// `"a"`, `"a and b"`, `"a, b and c"`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The value of a field: the limits' if set, else the requests'.
fn wanted<'a, T>(
    spec: &'a EnvSpec,
    field: impl Fn(&'a ResourceList) -> Option<T>,
) -> Option<(T, &'static str)> {
    let r = spec.resources.as_ref()?;
    r.limits
        .as_ref()
        .and_then(&field)
        .map(|v| (v, "limits"))
        .or_else(|| {
            r.requests
                .as_ref()
                .and_then(&field)
                .map(|v| (v, "requests"))
        })
}

fn compare_one(t: &Target, machine: &Machine, driver_failures: &mut Vec<String>) -> Vec<Line> {
    let mut out = Vec::new();
    let mut line = |status: Status, text: String| out.push(Line { status, text });
    let spec = t.spec;

    // Cores.
    match (wanted(spec, |l| l.cpu), machine.cores) {
        (None, _) => line(
            Status::Ok,
            format!(
                "cpu: none requested, this machine has {}",
                machine
                    .cores
                    .map_or("an unknown number of cores".into(), |n| format!(
                        "{n} {}",
                        plural(n, "core")
                    ))
            ),
        ),
        (Some((m, from)), None) => line(
            Status::Note,
            format!(
                "cpu: {} requested ({from}), but the number of cores of this machine is unknown",
                cores(m)
            ),
        ),
        (Some((m, from)), Some(n)) => line(
            if m <= n.saturating_mul(1000) {
                Status::Ok
            } else {
                Status::Fail
            },
            format!("cpu: {} requested ({from}), this machine has {n}", cores(m)),
        ),
    }

    // Memory.
    match (wanted(spec, |l| l.memory), machine.memory) {
        (None, Some(m)) => line(
            Status::Ok,
            format!("memory: none requested, this machine has {}", bytes(m)),
        ),
        (None, None) => line(Status::Ok, "memory: none requested".into()),
        (Some((b, from)), None) => line(
            Status::Note,
            format!(
                "memory: {} requested ({from}), but the memory of this machine is unknown",
                bytes(b)
            ),
        ),
        (Some((b, from)), Some(m)) => line(
            if b <= m { Status::Ok } else { Status::Fail },
            format!(
                "memory: {} requested ({from}), this machine has {}",
                bytes(b),
                bytes(m)
            ),
        ),
    }

    // GPUs.
    let gpu: Option<(&GpuRequest, &str)> =
        wanted(spec, |l| l.gpu.as_ref()).filter(|(g, _)| g.count > 0);
    match gpu {
        None => line(
            Status::Ok,
            match &machine.gpus {
                Ok(gpus) => format!(
                    "gpu: none requested, this machine has {} ({})",
                    gpus.len(),
                    summary(gpus)
                ),
                Err(why) => format!("gpu: none requested (no NVIDIA GPU found: {why})"),
            },
        ),
        Some((g, from)) => {
            if !gpu_lines(t, g, from, machine, &mut line) {
                return out;
            }
        }
    }

    // The driver, for each distinct CUDA runtime, whenever nvidia-smi
    // reports one: a CUDA runtime needs it whether or not the env asks for
    // a GPU (as `sclc check --driver`).
    let runtimes = distinct_runtimes(t);
    let Some(driver) = machine.driver() else {
        if machine.gpus.is_ok() && (gpu.is_some() || !runtimes.is_empty()) {
            line(
                Status::Note,
                "driver: nvidia-smi does not say which NVIDIA driver this machine has".into(),
            );
        }
        return out;
    };
    if runtimes.is_empty() && gpu.is_some() {
        line(
            Status::Ok,
            format!("driver: {driver}; no CUDA runtime (base image, torch wheel) that sclc knows of needs a particular one"),
        );
    }
    for (cuda, sources) in &runtimes {
        let froms: Vec<&str> = sources.iter().map(|(_, f)| f.as_str()).collect();
        let from = and_list(&froms);
        let need = scl_domain::cuda::driver_need(cuda);
        match (scl_domain::cuda::driver_ok(driver, cuda), need) {
            (Some(true), Some(need)) => line(
                Status::Ok,
                format!("driver: CUDA {cuda} ({from}) runs on driver {driver} (it needs ≥ {})", need.floor()),
            ),
            (Some(false), Some(need)) => {
                driver_failures.extend(sources.iter().map(|(c, f)| format!("CUDA {c} ({f}")));
                line(
                    Status::Fail,
                    format!(
                        "driver: CUDA {cuda} ({from}) needs an NVIDIA driver ≥ {}, this machine has {driver}",
                        need.floor()
                    ),
                )
            }
            _ => line(
                Status::Note,
                format!("driver: CUDA {cuda} ({from}): sclc does not know which driver it needs (this machine has {driver})"),
            ),
        }
    }
    out
}

/// The GPU lines of a request of `g` (from the limits or requests: `from`):
/// count, type, memory per GPU, generation. `false` when the machine has
/// no GPU to compare with (the line says so; nothing follows).
fn gpu_lines(
    t: &Target,
    g: &GpuRequest,
    from: &str,
    machine: &Machine,
    line: &mut impl FnMut(Status, String),
) -> bool {
    let n = g.count as usize;
    let requested = format!(
        "{} {} requested ({from})",
        g.count,
        plural(g.count as u64, "GPU")
    );
    let gpus = match &machine.gpus {
        Ok(gpus) => gpus,
        Err(why) => {
            line(
                Status::Fail,
                format!("gpu: {requested}, but no NVIDIA GPU found ({why})"),
            );
            return false;
        }
    };
    line(
        if gpus.len() >= n {
            Status::Ok
        } else {
            Status::Fail
        },
        format!(
            "gpu: {requested}, this machine has {} ({})",
            gpus.len(),
            summary(gpus)
        ),
    );

    // The type: the GPUs of the requested model. A shortage of GPUs is
    // said once (above): the type and memory lines ask only whether the
    // GPUs there are would do.
    let at_most = n.min(gpus.len());
    let mut fitting: Vec<&MachineGpu> = gpus.iter().collect();
    if let Some(kind) = &g.kind {
        match scl_domain::gpu::gpu_model(kind) {
            None => line(
                Status::Note,
                format!("gpu type: {kind} requested, a GPU type sclc does not know, so it is not compared with this machine's GPUs"),
            ),
            Some(model) => {
                fitting.retain(|m| scl_domain::gpu::gpu_model(&m.name).is_some_and(|x| x.name == model.name));
                let names = |gs: &[&MachineGpu]| {
                    let mut v: Vec<&str> = gs.iter().map(|g| g.name.as_str()).collect();
                    v.dedup();
                    v.join(", ")
                };
                let all: Vec<&MachineGpu> = gpus.iter().collect();
                let text = if fitting.is_empty() {
                    format!("gpu type: {kind} ({}) requested, this machine has {}", model.name, names(&all))
                } else {
                    format!(
                        "gpu type: {kind} ({}) requested, this machine has {} of them ({})",
                        model.name,
                        fitting.len(),
                        names(&fitting)
                    )
                };
                line(
                    if fitting.len() >= at_most {
                        Status::Ok
                    } else {
                        Status::Fail
                    },
                    text,
                );
            }
        }
    }

    // Memory per GPU, of those of the type.
    // (None of the type: the type line has said it.)
    if !fitting.is_empty() {
        memory_line(g.memory, &fitting, at_most.min(fitting.len()), line);
    }

    // The generation's CUDA floor (with a type named, it is E0507 of `check`).
    if g.kind.is_none() {
        // The CUDA torch runs on: its wheel's, else the image's (as E0507).
        let cuda = t
            .runtimes
            .get(usize::from(t.base_first))
            .map(|(c, from)| (c.clone(), from.clone()))
            .or_else(|| {
                t.runtimes
                    .first()
                    .filter(|_| t.base_first)
                    .map(|(c, from)| {
                        let c = Dotted::parse(c).map_or(c.clone(), |v| v.major_minor());
                        (c, from.clone())
                    })
            });
        let mut seen: Vec<&str> = Vec::new();
        for m in gpus {
            let Some(cc) = m.compute_cap.as_deref() else {
                continue;
            };
            if seen.contains(&m.name.as_str()) {
                continue;
            }
            seen.push(&m.name);
            let (Some(floor), Some((c, from))) = (scl_domain::gpu::floor_for(cc), &cuda) else {
                continue;
            };
            let older = matches!(
                (Dotted::parse(c), Dotted::parse(floor.min_cuda)),
                (Some(c), Some(min)) if c < min
            );
            if older {
                line(
                    Status::Fail,
                    format!(
                        "gpu generation: the {} ({}, compute capability {cc}) needs CUDA ≥ {}, but {from} has CUDA {c}",
                        m.name,
                        scl_domain::gpu::gpu_model(&m.name).map_or(floor.arch, |x| x.arch),
                        floor.min_cuda
                    ),
                );
            }
        }
    }

    true
}

/// The `gpu memory` line: each of the GPUs `fitting` (of the requested
/// type) against a request of `want` bytes per GPU, of which `needed` must
/// fit. A card within [`MEMORY_SLACK_PERCENT`] of the request fits, and the
/// line says so. A card whose `memory.total` nvidia-smi does not report
/// (`[N/A]`, as on a GH200) cannot be told: a `note`, also when no memory
/// per GPU is requested.
fn memory_line(
    want: Option<u64>,
    fitting: &[&MachineGpu],
    needed: usize,
    line: &mut impl FnMut(Status, String),
) {
    let known: Vec<u64> = fitting.iter().filter_map(|g| g.memory_mib).collect();
    let unknown = fitting.len() - known.len();
    let have = |gs: &[u64]| {
        let mut v: Vec<u64> = gs.to_vec();
        v.sort_unstable();
        v.dedup();
        let v: Vec<String> = v.iter().map(|m| bytes(m * MIB)).collect();
        v.join(", ")
    };
    let unknown_names = || {
        let mut v: Vec<&str> = fitting
            .iter()
            .filter(|g| g.memory_mib.is_none())
            .map(|g| g.name.as_str())
            .collect();
        v.dedup();
        v.join(", ")
    };
    let Some(want) = want else {
        if unknown > 0 {
            line(
                Status::Note,
                format!(
                    "gpu memory: none requested per GPU; nvidia-smi does not say how much memory {} {} ([N/A])",
                    unknown_names(),
                    if unknown == 1 { "has" } else { "have" }
                ),
            );
        }
        return;
    };
    if known.is_empty() {
        line(
            Status::Note,
            format!(
                "gpu memory: {} per GPU requested, but nvidia-smi does not say how much memory the GPUs have ({}: [N/A])",
                bytes(want),
                unknown_names()
            ),
        );
        return;
    }
    let enough = known.iter().filter(|m| memory_fits(**m, want)).count();
    let short = known
        .iter()
        .any(|m| memory_fits(*m, want) && m * MIB < want);
    let mut text = format!(
        "gpu memory: {} per GPU requested, this machine's GPUs have {}",
        bytes(want),
        have(&known)
    );
    if short {
        let _ = write!(
            text,
            " (the cards' usable memory, within {MEMORY_SLACK_PERCENT} % of the request)"
        );
    }
    let status = if enough >= needed {
        Status::Ok
    } else if enough + unknown >= needed {
        let _ = write!(
            text,
            "; nvidia-smi does not say for {unknown} of them ([N/A])"
        );
        Status::Note
    } else {
        Status::Fail
    };
    line(status, text);
}

/// `"8 cores"`, `"1 core"`, `"0.5 cores"` of millicores.
fn cores(milli: u64) -> String {
    if milli.is_multiple_of(1000) {
        format!("{} {}", milli / 1000, plural(milli / 1000, "core"))
    } else {
        format!("{} cores", trim(format!("{:.3}", milli as f64 / 1000.0)))
    }
}

/// `"32 GiB"`, `"62.7 GiB"`, `"512 MiB"`.
fn bytes(b: u64) -> String {
    let (unit, name) = if b >= GIB {
        (GIB, "GiB")
    } else if b >= MIB {
        (MIB, "MiB")
    } else {
        return format!("{b} {}", plural(b, "byte"));
    };
    if b.is_multiple_of(unit) {
        format!("{} {name}", b / unit)
    } else {
        format!("{} {name}", trim(format!("{:.1}", b as f64 / unit as f64)))
    }
}

/// `"24.0"` → `"24"`, `"0.500"` → `"0.5"`.
fn trim(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// The GPUs of a machine by kind: `8× NVIDIA H100 80GB HBM3, 79.6 GiB`.
fn summary(gpus: &[MachineGpu]) -> String {
    let mut groups: Vec<(&str, Option<u64>, usize)> = Vec::new();
    for g in gpus {
        match groups
            .iter_mut()
            .find(|(n, m, _)| *n == g.name && *m == g.memory_mib)
        {
            Some(group) => group.2 += 1,
            None => groups.push((&g.name, g.memory_mib, 1)),
        }
    }
    groups
        .iter()
        .map(|(name, mem, k)| {
            let mut s = if *k > 1 {
                format!("{k}× {name}")
            } else {
                name.to_string()
            };
            if let Some(m) = mem {
                let _ = write!(s, ", {}", bytes(m * MIB));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The text of one env's report (heading, lines, services indented).
pub(crate) fn render(r: &EnvReport, shown_file: &str) -> String {
    let mut s = format!("env {} ({shown_file})\n", r.env);
    let put = |s: &mut String, indent: &str, lines: &[Line]| {
        for l in lines {
            let status = match l.status {
                Status::Ok => "ok",
                Status::Fail => "FAIL",
                Status::Note => "note",
            };
            let _ = writeln!(s, "{indent}{status:<6}{}", l.text);
        }
    };
    put(&mut s, "  ", &r.lines);
    for (name, lines) in &r.services {
        let _ = writeln!(s, "  service {name}");
        put(&mut s, "    ", lines);
    }
    s
}

/// `sclc doctor`: the exit code.
pub(crate) fn doctor(
    file: &Path,
    env: Option<&str>,
    fmt: MessageFormat,
    stdlib: Option<PathBuf>,
) -> i32 {
    let opened = AnalysisHost::open_root(Arc::new(OsSystem), file, stdlib);
    let (host, a, f, mut diags) = match load_opened(file, opened, &[]) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let envs = a.select_envs(f, env).unwrap_or_else(|d| {
        diags.push(*d);
        Vec::new()
    });
    print(&a, &diags, fmt);
    if diags.iter().any(Diagnostic::is_error) {
        return 1;
    }
    let machine = Machine::probe();
    let code = report(&a, f, file, env.is_some(), &envs, &machine, fmt);
    // The process ends here: freeing the database would only cost time.
    std::mem::forget(a);
    std::mem::forget(host);
    code
}

fn print(a: &Analysis, diags: &[Diagnostic], fmt: MessageFormat) {
    if diags.is_empty() {
        return;
    }
    let cwd = OsSystem.current_dir();
    let sources = Sources::shown_with(a, |p| shown_path(&cwd, p));
    render_diagnostics(&sources, diags, fmt == MessageFormat::Json);
}

fn report(
    a: &Analysis,
    f: FileId,
    file: &Path,
    asked: bool,
    envs: &[String],
    machine: &Machine,
    fmt: MessageFormat,
) -> i32 {
    let shown = file.display().to_string();
    let mut text = String::new();
    let mut failures = 0;
    let mut compared = 0;
    let mut driver_failures: Vec<String> = Vec::new();
    for name in envs {
        let Some(spec) = a.ir(f, name) else {
            return 1;
        };
        if !asked && spec.base.is_none() && spec.services.is_empty() {
            eprintln!(
                "note: env `{name}` has no `base` image, so it is not compared (it can be extended by envs that set one)"
            );
            continue;
        }
        let r = compare(name, &spec, a.cuda_runtimes(f, name), machine);
        failures += r.failures();
        driver_failures.extend(r.driver_failures.iter().cloned());
        compared += 1;
        text.push_str(&render(&r, &shown));
    }
    let things = if failures == 0 {
        "everything fits".to_string()
    } else if failures == 1 {
        "1 thing will not fit".to_string()
    } else {
        format!("{failures} things will not fit")
    };
    let _ = writeln!(
        text,
        "{compared} {}: {things}",
        plural(compared as u64, "env")
    );
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
    // Where in the file each runtime that needs a newer driver comes from:
    // the diagnostics of `sclc check --driver` with this machine's driver
    // (one E0506 per distinct CUDA runtime, as one FAIL line), those of the
    // runtimes that failed here.
    if !driver_failures.is_empty() {
        if let Some(driver) = machine.driver() {
            let diags: Vec<Diagnostic> = a
                .driver_diagnostics(&[f], driver)
                .into_iter()
                .filter(|d| {
                    d.code == "E0506"
                        && driver_failures
                            .iter()
                            .any(|p| d.message.starts_with(p.as_str()))
                })
                .collect();
            print(a, &diags, fmt);
        }
    }
    i32::from(failures > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_spaces_commas_and_na() {
        let text =
            "NVIDIA H100 80GB HBM3, 81559, 550.54.15, 9.0\n\nOdd, Name, [N/A], 470.82.01, [N/A]\n";
        let gpus = parse_smi(text, true).unwrap();
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(gpus[0].memory_mib, Some(81559));
        assert_eq!(gpus[0].compute_cap.as_deref(), Some("9.0"));
        assert_eq!(gpus[1].name, "Odd, Name");
        assert_eq!(gpus[1].memory_mib, None);
        assert_eq!(gpus[1].driver.as_deref(), Some("470.82.01"));
        assert_eq!(gpus[1].compute_cap, None);
        assert!(parse_smi("just a name\n", true).is_err());
    }

    #[test]
    fn old_drivers_take_the_compute_capability_from_the_model() {
        let gpus = parse_smi("Tesla T4, 15109, 450.80.02\n", false).unwrap();
        assert_eq!(gpus[0].compute_cap.as_deref(), Some("7.5"));
    }

    #[test]
    fn meminfo_and_units() {
        assert_eq!(
            meminfo_total("MemTotal:       65843232 kB\nMemFree: 1 kB\n"),
            Some(65843232 * 1024)
        );
        assert_eq!(bytes(32 * GIB), "32 GiB");
        assert_eq!(bytes(65843232 * 1024), "62.8 GiB");
        assert_eq!(bytes(24564 * MIB), "24 GiB");
        assert_eq!(bytes(512 * MIB), "512 MiB");
        assert_eq!(cores(8000), "8 cores");
        assert_eq!(cores(1000), "1 core");
        assert_eq!(cores(500), "0.5 cores");
    }

    #[test]
    fn cards_report_a_little_less_than_their_size() {
        // memory.total of real cards against their marketed size.
        for (mib, want) in [
            (81920, 80 * GIB), // A100 80GB
            (81559, 80 * GIB), // H100 80GB HBM3
            (32510, 32 * GIB), // V100 32GB
            (16160, 16 * GIB), // V100 16GB
            (24564, 24 * GIB), // RTX 4090
        ] {
            assert!(memory_fits(mib, want), "{mib} MiB for {}", bytes(want));
        }
        // More than 2 % short: a T4 (15360 MiB) is no 16 GiB card.
        assert!(!memory_fits(15360, 16 * GIB));
        assert!(!memory_fits(32510, 33 * GIB));
        assert!(!memory_fits(80280, 80 * GIB)); // 2.0003 % short
        assert!(memory_fits(80282, 80 * GIB)); // 1.9999 % short
        assert!(memory_fits(u64::MAX / MIB, u64::MAX)); // no overflow
    }

    #[test]
    fn facts_given_directly() {
        let spec = EnvSpec {
            base: Some(scl_ide::ir::ImageRef {
                digest: None,
                reference: "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04".into(),
            }),
            resources: Some(scl_ide::ir::Resources {
                limits: Some(ResourceList {
                    cpu: Some(4000),
                    gpu: Some(GpuRequest {
                        count: 2,
                        memory: None,
                        node_label: None,
                        kind: None,
                    }),
                    memory: None,
                }),
                requests: None,
            }),
            ..EnvSpec::default()
        };
        let machine = Machine {
            cores: Some(16),
            memory: Some(64 * GIB),
            gpus: Ok(vec![MachineGpu {
                name: "NVIDIA GeForce RTX 4090".into(),
                memory_mib: Some(24564),
                driver: Some("520.61.05".into()),
                compute_cap: Some("8.9".into()),
            }]),
        };
        let runtimes = vec![("12.1.1".to_string(), "the base image x".to_string())];
        let r = compare("t", &spec, runtimes, &machine);
        assert_eq!(r.failures(), 2, "{}", render(&r, "t.env.scl"));
    }
}
