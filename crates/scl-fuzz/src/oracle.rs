//! The oracle: runs one [`Case`] through the whole pipeline the way `sclc`
//! does (parse, imports, static checks, evaluation, normalization, the IR,
//! the Docker backend) on a thread of [`scl_ide::COMPILER_STACK_SIZE`]
//! (through [`scl_ide::with_compiler_stack`], as every front end must) and
//! checks what must hold on any input:
//!
//! - no panic (caught here) — stack overflows, aborts and the memory limit
//!   stop the process and are seen by the supervisor (`main.rs`);
//! - time and peak memory within a generous budget that grows with the
//!   input ([`Limits::for_size`]): a blow-up detector, not a speed target;
//! - every diagnostic has a registered code and a span inside its file, and
//!   there are at most [`MAX_DIAGNOSTICS_PER_FILE`] per file (and at most
//!   one E0011);
//! - the IR, the diagnostics and every artifact are the same bytes when the
//!   case runs again in a fresh database, and after an edit and its undo in
//!   the same database (the incremental path);
//! - every artifact passes [`crate::dockerfile`]'s checks.

use crate::case::Case;
use crate::{alloc, dockerfile};
use scl_ide::{Analysis, AnalysisHost, OsSystem};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The diagnostics cap of every front end (100, then one "and N more"; an
/// E0011, where the lexer stopped reading the file, comes on top).
pub const MAX_DIAGNOSTICS_PER_FILE: usize = scl_ide::MAX_DIAGNOSTICS_PER_FILE + 1;

/// How a case failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Panic,
    StackOverflow,
    Crash,
    Timeout,
    Slow,
    Memory,
    Nondeterministic,
    BadDiagnostic,
    BadArtifact,
}

impl Kind {
    /// The name used in reports and on the worker protocol.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::StackOverflow => "stack-overflow",
            Kind::Crash => "crash",
            Kind::Timeout => "timeout",
            Kind::Slow => "slow",
            Kind::Memory => "memory",
            Kind::Nondeterministic => "nondeterministic",
            Kind::BadDiagnostic => "bad-diagnostic",
            Kind::BadArtifact => "bad-artifact",
        }
    }

    /// The kind named `s`.
    pub fn parse(s: &str) -> Option<Kind> {
        ALL_KINDS.iter().copied().find(|k| k.name() == s)
    }
}

const ALL_KINDS: [Kind; 9] = [
    Kind::Panic,
    Kind::StackOverflow,
    Kind::Crash,
    Kind::Timeout,
    Kind::Slow,
    Kind::Memory,
    Kind::Nondeterministic,
    Kind::BadDiagnostic,
    Kind::BadArtifact,
];

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: Kind,
    /// One line saying what went wrong.
    pub detail: String,
}

impl Failure {
    fn new(kind: Kind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
        }
    }
}

/// The budget of one case.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall-clock time of the first run (the checks' reruns are not counted).
    pub time: Duration,
    /// Peak live heap bytes of the first run.
    pub memory: usize,
}

impl Limits {
    /// The budget for a case of `bytes` bytes of source: 2 s + 10 µs/byte
    /// and 512 MiB + 400 bytes/byte. A linear compiler stays below both
    /// (`sclc ir` of the 5000-module bench workload, 1.3 MB, takes well under
    /// a second and 200 MiB; the densest input, 20,000 envs in one 850 KB
    /// file, about 3.4 µs/byte, and twice that on a machine whose other core
    /// is busy), while anything quadratic passes it by far at these sizes.
    /// The time is multiplied by `scale` (debug builds are ~10× slower: the
    /// binary passes 10 there).
    pub fn for_size(bytes: usize, scale: f64) -> Limits {
        let secs = (2.0 + bytes as f64 * 10e-6) * scale;
        let mem = (512u64 << 20) as f64 + bytes as f64 * 400.0;
        Limits {
            time: Duration::from_secs_f64(secs),
            memory: mem as usize,
        }
    }
}

/// What one run produced, compared between runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// `Debug` of every diagnostic, in order.
    pub diagnostics: Vec<String>,
    /// What `sclc ir` prints (every built env keyed by name), or "" when
    /// there are errors.
    pub ir: String,
    /// (env, artifact path, contents) of `sclc build --target docker`.
    pub artifacts: Vec<(String, String, String)>,
}

/// The measurements of a passing case.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub time: Duration,
    pub peak: usize,
    pub errors: usize,
    pub envs: usize,
    /// The generated Dockerfiles: (env/path, contents).
    pub dockerfiles: Vec<(String, String)>,
}

/// Runs the pipeline once on the workspace `root` (main file `main`):
/// diagnostics, then IR and artifacts when there are no errors, and the
/// artifact problems found (with their specs).
fn pipeline(a: &Analysis, main: &Path) -> (Snapshot, Vec<String>) {
    let f = a.file(main);
    let diags = a.check(&[f]);
    let mut snap = Snapshot {
        diagnostics: diags.iter().map(|d| format!("{d:?}")).collect(),
        ..Snapshot::default()
    };
    let mut problems = Vec::new();
    // Codes and spans.
    let sources = a.texts();
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut stops: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &diags {
        // Where the lexer stopped reading (E0011) is shown after the cap.
        if d.code != "E0011" {
            *per_file.entry(&d.at.file).or_default() += 1;
        } else {
            *stops.entry(&d.at.file).or_default() += 1;
        }
        if scl_diag::explain(d.code).is_none() {
            problems.push(format!(
                "diagnostic code {} is not registered: {}",
                d.code, d.message
            ));
        }
        let span = d.at.span;
        let len = sources.get(&*d.at.file).map(|t| t.len());
        if span.start > span.end || len.is_some_and(|l| span.end as usize > l + 1) {
            problems.push(format!(
                "{} at {}..{} is outside {} ({:?} bytes): {}",
                d.code, span.start, span.end, d.at.file, len, d.message
            ));
        }
        // Spans are in the coordinates of the text the compiler read, so
        // they fall on its character boundaries.
        if let Some(text) = sources.get(&*d.at.file) {
            let on = |o: u32| (o as usize) > text.len() || text.is_char_boundary(o as usize);
            if !on(span.start) || !on(span.end) {
                problems.push(format!(
                    "{} at {}..{} is not on character boundaries of {}: {}",
                    d.code, span.start, span.end, d.at.file, d.message
                ));
            }
        }
    }
    // Every diagnostic renders for a terminal (a panic here is caught by the
    // supervisor like any other).
    for d in &diags {
        std::hint::black_box(scl_diag::render_human(d, &sources, false));
    }
    for (file, n) in stops {
        if n > 1 {
            problems.push(format!("{n} E0011 for {file}: the lexer stops once"));
        }
    }
    for (file, n) in per_file {
        if n > MAX_DIAGNOSTICS_PER_FILE {
            problems.push(format!(
                "{n} diagnostics for {file}, more than {MAX_DIAGNOSTICS_PER_FILE}"
            ));
        }
    }
    if diags.iter().any(|d| d.is_error()) {
        return (snap, problems);
    }
    let mut specs = BTreeMap::new();
    for name in &a.envs(f) {
        let Some(spec) = a.ir(f, name) else {
            problems.push(format!("env {name} has no IR and no error"));
            continue;
        };
        specs.insert(name.clone(), spec);
    }
    let versioned: BTreeMap<&String, scl_ir::EnvSpec> =
        specs.iter().map(|(k, v)| (k, v.versioned())).collect();
    snap.ir = serde_json::to_string_pretty(&versioned).expect("the IR serializes");
    // Lowered as `sclc build` lowers them (findings located in the source).
    let names: Vec<String> = specs.keys().cloned().collect();
    let lowering = a.lower(f, &names, scl_ide::Target::DOCKER);
    for (name, lowered) in &lowering.outputs {
        let spec = &specs[name];
        for a in &lowered.artifacts {
            // `svc/Dockerfile` belongs to the service `svc`.
            let mut s: &scl_ir::EnvSpec = spec;
            let parts: Vec<&str> = a.path.split('/').collect();
            for svc in &parts[..parts.len() - 1] {
                match s.services.get(*svc) {
                    Some(x) => s = x,
                    None => problems.push(format!("{name}/{}: no service {svc}", a.path)),
                }
            }
            let file = parts[parts.len() - 1];
            let found = if file == "Dockerfile" {
                dockerfile::check_dockerfile(s, &a.contents)
            } else if file.ends_with(".dockerignore") || file == ".dockerignore" {
                dockerfile::check_dockerignore(s, &a.contents)
            } else {
                vec![format!("an artifact the harness does not know: {}", a.path)]
            };
            problems.extend(found.into_iter().map(|p| format!("{name}/{}: {p}", a.path)));
            snap.artifacts
                .push((name.clone(), a.path.clone(), a.contents.clone()));
        }
    }
    (snap, problems)
}

/// Compares two snapshots; the first difference, if any.
fn differ(a: &Snapshot, b: &Snapshot, how: &str) -> Option<Failure> {
    let what = if a.diagnostics != b.diagnostics {
        "diagnostics"
    } else if a.ir != b.ir {
        "IR"
    } else if a.artifacts != b.artifacts {
        "artifacts"
    } else {
        return None;
    };
    Some(Failure::new(
        Kind::Nondeterministic,
        format!("the {what} differ {how}"),
    ))
}

/// Runs `case`, written into the empty folder `dir`, with `limits`. Must be
/// called on a thread with the compiler's stack (see [`run`]).
fn run_inner(case: &Case, dir: &Path, limits: Limits) -> Result<Report, Failure> {
    let main = case
        .write_to(dir)
        .map_err(|e| Failure::new(Kind::Crash, format!("cannot write the case: {e}")))?;
    alloc::reset_peak();
    let base = alloc::current();
    let start = Instant::now();
    let mut host = AnalysisHost::new(Arc::new(OsSystem), dir, None);
    let (first, problems) = pipeline(&host.analysis(), &main);
    let time = start.elapsed();
    let peak = alloc::peak().saturating_sub(base);
    if time > limits.time {
        return Err(Failure::new(
            Kind::Slow,
            format!(
                "{:.1} s for {} bytes (budget {:.1} s)",
                time.as_secs_f64(),
                case.size(),
                limits.time.as_secs_f64()
            ),
        ));
    }
    if peak > limits.memory {
        return Err(Failure::new(
            Kind::Memory,
            format!(
                "{} MiB at peak for {} bytes (budget {} MiB)",
                peak >> 20,
                case.size(),
                limits.memory >> 20
            ),
        ));
    }
    if let Some(p) = problems.iter().find(|p| p.contains("diagnostic")) {
        return Err(Failure::new(Kind::BadDiagnostic, p.clone()));
    }
    if let Some(p) = problems.first() {
        return Err(Failure::new(Kind::BadArtifact, p.clone()));
    }
    // Determinism: a fresh database, then an edit and its undo.
    let fresh = AnalysisHost::new(Arc::new(OsSystem), dir, None);
    let (second, _) = pipeline(&fresh.analysis(), &main);
    if let Some(f) = differ(&first, &second, "between two fresh databases") {
        return Err(f);
    }
    if let Ok(text) = std::str::from_utf8(case.main_text()) {
        // A snapshot is dropped before each edit (salsa waits for them).
        let f = host.file(&main);
        host.set_text(f, "env edited_away { }\n");
        let _ = host.analysis().check(&[f]);
        host.set_text(f, text);
        let (third, _) = pipeline(&host.analysis(), &main);
        if let Some(f) = differ(&first, &third, "after an edit and its undo") {
            return Err(f);
        }
    }
    let errors = first
        .diagnostics
        .iter()
        .filter(|d| d.contains("Error"))
        .count();
    let envs = first
        .artifacts
        .iter()
        .map(|a| &a.0)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let dockerfiles = first
        .artifacts
        .into_iter()
        .filter(|a| a.1.ends_with("Dockerfile"))
        .map(|(env, path, text)| (format!("{env}/{path}"), text))
        .collect();
    std::mem::forget(host);
    Ok(Report {
        time,
        peak,
        errors,
        envs,
        dockerfiles,
    })
}

/// Runs `case` in a fresh temporary folder on a thread with the compiler's
/// stack, and turns a panic into a [`Kind::Panic`] failure. A stack overflow
/// or the memory limit ends the process instead (see the module doc).
pub fn run(case: &Case, limits: Limits) -> Result<Report, Failure> {
    let dir = tempfile::Builder::new()
        .prefix("scl-fuzz-")
        .tempdir()
        .map_err(|e| Failure::new(Kind::Crash, format!("no temporary folder: {e}")))?;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        scl_ide::with_compiler_stack(|| run_inner(case, dir.path(), limits))
    }));
    match r {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            let at = crate::last_panic_location().unwrap_or_default();
            Err(Failure::new(Kind::Panic, format!("{msg} ({at})")))
        }
    }
}
