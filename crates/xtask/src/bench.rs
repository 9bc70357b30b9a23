//! `xtask bench`: the benchmark described in `bench/README.md`.
//!
//! Per N: generate the SCL workload, check `sclc ir top.env.scl` against the
//! expected JSON, time it as a whole process and measure its peak RSS
//! (`/usr/bin/time -f %M` if installed); time a cold in-process
//! `Database::check`, the re-check after a one-line edit of the last module
//! and the re-check after a comment-only edit of the base module; and, when
//! `jrsonnet` is on PATH, time the peer's Jsonnet version of the workload
//! (written by `gen_peers.py`) alternately with `sclc`, run by run.

use crate::workload::{self, Topology};
use scl_db::Database;
use scl_diag::Severity;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

struct Opts {
    ns: Vec<usize>,
    topo: Topology,
    runs: Option<usize>,
    edits: usize,
    shared: Option<PathBuf>,
    keep: Option<PathBuf>,
    peer: bool,
    inprocess: bool,
    /// Editor latency (`sclc lsp`) at N = 1000, with this many edits of
    /// each kind (0: skip).
    editor_edits: usize,
    /// Lengths of the deep-chain and import-chain workloads (empty: skip).
    deep: Vec<usize>,
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        ns: vec![10, 100, 1000, 5000],
        topo: Topology::Chain,
        runs: None,
        edits: 10,
        shared: std::env::var_os("SCL_SHARED").map(PathBuf::from),
        keep: None,
        peer: true,
        inprocess: true,
        editor_edits: 200,
        deep: vec![1000, 5000, 20000],
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--n" => {
                o.ns = val()?
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<usize>()
                            .map_err(|e| format!("--n {s}: {e}"))
                    })
                    .collect::<Result<_, _>>()?;
                if o.ns.contains(&0) {
                    return Err("--n values must be at least 1".into());
                }
            }
            "--topology" => {
                o.topo = Topology::parse(&val()?).ok_or("--topology is chain or fanin")?
            }
            "--runs" => o.runs = Some(val()?.parse().map_err(|e| format!("--runs: {e}"))?),
            "--edits" => o.edits = val()?.parse().map_err(|e| format!("--edits: {e}"))?,
            "--shared" => o.shared = Some(PathBuf::from(val()?)),
            "--keep" => o.keep = Some(PathBuf::from(val()?)),
            "--no-peer" => o.peer = false,
            "--deep" => {
                o.deep = val()?
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<usize>()
                            .map_err(|e| format!("--deep {s}: {e}"))
                    })
                    .collect::<Result<_, _>>()?;
                if o.deep.contains(&0) {
                    return Err("--deep values must be at least 1".into());
                }
            }
            "--no-deep" => o.deep.clear(),
            "--no-inprocess" => o.inprocess = false,
            "--no-editor" => o.editor_edits = 0,
            "--editor-edits" => {
                o.editor_edits = val()?.parse().map_err(|e| format!("--editor-edits: {e}"))?
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

fn on_path(tool: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// A command run in a folder: the program (absolute) and its arguments.
struct Cmd<'a> {
    prog: &'a Path,
    args: Vec<String>,
    dir: &'a Path,
}

impl Cmd<'_> {
    fn command(&self) -> Command {
        let mut c = Command::new(self.prog);
        c.args(&self.args).current_dir(self.dir);
        c
    }
    fn line(&self) -> String {
        let mut s = self.prog.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
    /// Runs once and returns stdout (errors on a non-zero exit).
    fn output(&self) -> Result<Vec<u8>, String> {
        let out = self
            .command()
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{}: {e}", self.line()))?;
        if !out.status.success() {
            return Err(format!(
                "{} failed ({}): {}",
                self.line(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(out.stdout)
    }
}

struct Tools {
    time: Option<PathBuf>,
}

/// Median wall times in ms of whole-process runs (output discarded), one per
/// command, measured alternately: after two warm-up runs of each, every round
/// runs each command once (ABAB…; the first command of a round rotates), so
/// a slow phase of a shared machine falls on all commands alike instead of on
/// whichever block ran during it.
fn alternate_ms(cmds: &[&Cmd], runs: usize) -> Result<Vec<f64>, String> {
    let once = |cmd: &Cmd| -> Result<f64, String> {
        let t = Instant::now();
        let st = cmd
            .command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("{}: {e}", cmd.line()))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if !st.success() {
            return Err(format!("{} failed ({st})", cmd.line()));
        }
        Ok(ms)
    };
    for cmd in cmds {
        once(cmd)?;
        once(cmd)?;
    }
    let mut times = vec![Vec::with_capacity(runs); cmds.len()];
    for r in 0..runs {
        for k in 0..cmds.len() {
            let c = (r + k) % cmds.len();
            times[c].push(once(cmds[c])?);
        }
    }
    Ok(times.into_iter().map(median).collect())
}

/// Median peak RSS in MiB over 3 runs.
fn peak_rss_mib(tools: &Tools, cmd: &Cmd) -> Result<f64, String> {
    let mut xs = Vec::new();
    for _ in 0..3 {
        let kib = match &tools.time {
            Some(time) => {
                let f = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
                let st = Command::new(time)
                    .args(["-f", "%M", "-o"])
                    .arg(f.path())
                    .arg(cmd.prog)
                    .args(&cmd.args)
                    .current_dir(cmd.dir)
                    .stdout(Stdio::null())
                    .status()
                    .map_err(|e| e.to_string())?;
                if !st.success() {
                    return Err(format!("{} failed under time", cmd.line()));
                }
                let text = std::fs::read_to_string(f.path()).map_err(|e| e.to_string())?;
                text.lines()
                    .last()
                    .unwrap_or("")
                    .trim()
                    .parse::<f64>()
                    .map_err(|e| format!("time -f %M: {e}: {text}"))?
            }
            None => rusage_kib(cmd)?,
        };
        xs.push(kib / 1024.0);
    }
    Ok(median(xs))
}

/// Without GNU time: re-run this program as `xtask rss CMD...`, whose only
/// child is CMD, and read `getrusage(RUSAGE_CHILDREN).ru_maxrss`.
fn rusage_kib(cmd: &Cmd) -> Result<f64, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(me)
        .arg("rss")
        .arg(cmd.prog)
        .args(&cmd.args)
        .current_dir(cmd.dir)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse::<f64>()
        .map_err(|e| format!("xtask rss: {e}: {text}"))
}

/// `xtask rss PROG ARGS...`: runs PROG (stdout discarded) and prints the peak
/// RSS of its process tree in KiB.
pub fn rss_main(args: &[String]) -> i32 {
    let Some(prog) = args.first() else { return 2 };
    let st = match Command::new(prog)
        .args(&args[1..])
        .stdout(Stdio::null())
        .status()
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return 1;
        }
    };
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    println!("{}", ru.ru_maxrss);
    if st.success() {
        0
    } else {
        1
    }
}

#[derive(Default)]
struct Row {
    n: usize,
    src_kib: f64,
    sclc_ms: f64,
    sclc_rss: f64,
    jr_ms: Option<f64>,
    jr_rss: Option<f64>,
    cold_ms: Option<f64>,
    recheck_ms: Option<f64>,
    comment_ms: Option<f64>,
    phases: Option<Phases>,
    editor: Option<crate::editor::EditorLatency>,
    ok: bool,
}

/// In-process phase split of one cold run (each phase forced for every
/// module before the next starts, so later phases reuse the memos).
#[derive(Clone, Copy, Default)]
struct Phases {
    parse: f64,
    imports: f64,
    static_check: f64,
    eval: f64,
    rest: f64,
}

fn no_errors(diags: &[scl_diag::Diagnostic]) -> Result<(), String> {
    match diags.iter().find(|d| d.severity == Severity::Error) {
        Some(d) => Err(format!(
            "{} {} at {}:{:?}",
            d.code, d.message, d.at.file, d.at.span
        )),
        None => Ok(()),
    }
}

/// The services of `all` as JSON, from the database.
fn services_json(
    db: &Database,
    top: scl_db::SourceFile,
) -> Result<serde_json::Map<String, Value>, String> {
    let mv = scl_db::module_values(db, top);
    let spec = mv
        .final_env("all")
        .and_then(|f| f.spec.clone())
        .ok_or("env `all` has no IR")?;
    let v = serde_json::to_value(&*spec).map_err(|e| e.to_string())?;
    v.get("services")
        .and_then(Value::as_object)
        .cloned()
        .ok_or("no services".into())
}

/// What [`inprocess`] measured (medians, ms).
struct InProcess {
    cold: f64,
    /// Re-check after a one-line edit of the last module (a leaf).
    leaf: f64,
    /// Re-check after a comment-only edit of the base module (every
    /// service module imports it): nothing's meaning changes.
    comment: f64,
    phases: Phases,
}

/// Cold in-process checks (fresh database each), then re-checks after
/// one-line edits of the last module and after comment-only edits of the
/// base module; every re-check's output is verified.
fn inprocess(
    dir: &Path,
    n: usize,
    topo: Topology,
    cold_runs: usize,
    edits: usize,
    expected: &Value,
) -> Result<InProcess, String> {
    let top_path = dir.join("top.env.scl");
    let mut cold = Vec::new();
    let mut kept = None;
    for r in 0..cold_runs {
        let db = Database::new(dir, None);
        let top = db.open(&top_path);
        let t = Instant::now();
        let diags = db.check(top);
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        no_errors(&diags)?;
        if r == 0 {
            workload::verify_services(&services_json(&db, top)?, expected)
                .map_err(|e| format!("in-process IR: {e}"))?;
        }
        kept = Some(db); // the previous database drops here, outside the timing
    }
    let mut db = kept.ok_or("no cold run")?;
    let top = db.open(&top_path);
    let last_i = n - 1;
    let last = db.open(&dir.join(format!("mod{last_i}.env.scl")));
    // The leaf is opened for editing, as an editor does (its inputs
    // become LOW durability; what reads it is computed once more, at the
    // next check, untimed). The base is edited without: its comment edits
    // lower only its text's durability, not its declarations'.
    let base = db.open(&dir.join("base.env.scl"));
    db.will_edit(last);
    no_errors(&db.check(top))?;
    let mut re = Vec::new();
    for k in 0..edits {
        // Alternate: every edit changes the text (and the last service's description).
        let desc = if k % 2 == 0 {
            format!("env-{last_i}-edit{k}")
        } else {
            format!("env-{last_i}")
        };
        db.set_text(last, &workload::module_source(last_i, topo, &desc));
        let t = Instant::now();
        let diags = db.check(top);
        re.push(t.elapsed().as_secs_f64() * 1e3);
        no_errors(&diags)?;
        let svcs = services_json(&db, top)?;
        let got = svcs
            .get(&format!("e{last_i}"))
            .and_then(|s| s.get("description"))
            .and_then(Value::as_str);
        if got != Some(desc.as_str()) {
            return Err(format!(
                "after edit {k}: service e{last_i} has description {got:?}, expected {desc:?}"
            ));
        }
    }
    // Comment-only edits of the base module: the text changes (a comment
    // at its end, alternately present and absent), its meaning does not.
    let base_src = workload::base_source();
    let mut comment = Vec::new();
    for k in 0..edits {
        let text = if k % 2 == 0 {
            format!("{base_src}// edit {k}\n")
        } else {
            base_src.clone()
        };
        db.set_text(base, &text);
        let t = Instant::now();
        let diags = db.check(top);
        comment.push(t.elapsed().as_secs_f64() * 1e3);
        no_errors(&diags)?;
    }
    workload::verify_services(&services_json(&db, top)?, &{
        // The last edit of the leaf loop left the last service's description as written.
        let mut e = expected.clone();
        if edits % 2 == 1 {
            if let Some(d) = e
                .get_mut(format!("e{last_i}"))
                .and_then(|s| s.get_mut("description"))
            {
                *d = Value::String(format!("env-{last_i}-edit{}", edits - 1));
            }
        }
        e
    })
    .map_err(|e| format!("in-process IR after comment edits: {e}"))?;
    drop(db);

    // Phase split on a fresh database.
    let db = Database::new(dir, None);
    let top = db.open(&top_path);
    let mut files = vec![db.open(&dir.join("base.env.scl"))];
    files.extend((0..n).map(|i| db.open(&dir.join(format!("mod{i}.env.scl")))));
    files.push(top);
    let mut ph = Phases::default();
    let t = Instant::now();
    for f in &files {
        let _ = scl_db::parse(&db, *f);
    }
    ph.parse = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    for f in &files {
        let _ = scl_db::imports(&db, *f);
    }
    ph.imports = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    for f in &files {
        let _ = scl_db::static_diagnostics(&db, *f);
    }
    ph.static_check = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let _ = scl_db::module_values(&db, top);
    ph.eval = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let diags = db.check(top);
    ph.rest = t.elapsed().as_secs_f64() * 1e3;
    no_errors(&diags)?;
    Ok(InProcess {
        cold: median(cold),
        leaf: median(re),
        comment: median(comment),
        phases: ph,
    })
}

fn repo_root() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    p.canonicalize().unwrap_or(p)
}

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        None => root.join("target"),
    }
}

fn find_shared(o: &Opts, root: &Path) -> Option<PathBuf> {
    let cands = [
        o.shared.clone(),
        Some(root.join("../shared")),
        Some(root.join("shared")),
    ];
    cands
        .into_iter()
        .flatten()
        .find(|d| d.join("bench/gen_peers.py").is_file())
}

fn fmt_opt(x: Option<f64>, prec: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.prec$}"),
        _ => "–".into(),
    }
}

/// `xtask recheck-loop DIR N EDITS`: only the re-check loop (after one cold
/// check), for profiling it with `perf record`.
pub fn recheck_loop_main(args: &[String]) -> i32 {
    let (Some(dir), Some(n), Some(edits)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2).and_then(|s| s.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: xtask recheck-loop DIR N EDITS");
        return 2;
    };
    let dir = Path::new(dir);
    let mut db = Database::new(dir, None);
    let top = db.open(&dir.join("top.env.scl"));
    let _ = db.check(top);
    let last = db.open(&dir.join(format!("mod{}.env.scl", n - 1)));
    // As the bench does: the file being edited is opened for editing.
    db.will_edit(last);
    let _ = db.check(top);
    // As the bench does: only the check is timed, and the IR is read
    // (as JSON) between checks.
    let mut each = Vec::with_capacity(edits);
    for k in 0..edits {
        let desc = if k % 2 == 0 {
            format!("env-{}-edit{k}", n - 1)
        } else {
            format!("env-{}", n - 1)
        };
        db.set_text(
            last,
            &workload::module_source(n - 1, Topology::Chain, &desc),
        );
        let t = Instant::now();
        let _ = db.check(top);
        each.push(t.elapsed().as_secs_f64() * 1e3);
        let _ = services_json(&db, top);
    }
    let mean = each.iter().sum::<f64>() / edits.max(1) as f64;
    each.sort_by(f64::total_cmp);
    println!(
        "{edits} re-checks: {mean:.3} ms each, median {:.3} ms",
        each.get(edits / 2).copied().unwrap_or(0.0)
    );
    std::mem::forget(db);
    0
}

/// `xtask cold-loop DIR RUNS`: only in-process cold checks of `DIR/top.env.scl`
/// (a fresh database each time), for profiling with `perf record`.
pub fn cold_loop_main(args: &[String]) -> i32 {
    let (Some(dir), Some(runs)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: xtask cold-loop DIR RUNS");
        return 2;
    };
    let dir = Path::new(dir);
    let t = Instant::now();
    let mut each = Vec::new();
    for _ in 0..runs {
        let t1 = Instant::now();
        let db = Database::new(dir, None);
        let top = db.open(&dir.join("top.env.scl"));
        let _ = db.check(top);
        each.push(format!("{:.1}", t1.elapsed().as_secs_f64() * 1e3));
        drop(db);
    }
    println!(
        "{runs} cold checks: {:.3} ms each ({})",
        t.elapsed().as_secs_f64() * 1e3 / runs as f64,
        each.join(" ")
    );
    0
}

pub fn main(args: &[String]) -> i32 {
    if args.first().map(String::as_str) == Some("cold-loop") {
        return cold_loop_main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("rss") {
        return rss_main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("recheck-loop") {
        return recheck_loop_main(&args[1..]);
    }
    let o = match parse_opts(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    match run(&o) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn run(o: &Opts) -> Result<bool, String> {
    let root = repo_root();
    eprintln!("building sclc (release)…");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "--release", "-q", "-p", "sclc"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !st.success() {
        return Err("cargo build --release -p sclc failed".into());
    }
    let sclc = target_dir(&root).join("release/sclc");
    let tools = Tools {
        time: Some(PathBuf::from("/usr/bin/time")).filter(|p| p.is_file()),
    };
    let jrsonnet = if o.peer { on_path("jrsonnet") } else { None };
    let shared = find_shared(o, &root);
    let python = on_path("python3");
    println!(
        "tools: wall time by std::process + Instant (median; sclc and jrsonnet alternate run by run); peak RSS by {}",
        if tools.time.is_some() {
            "/usr/bin/time -f %M (median of 3)"
        } else {
            "getrusage(RUSAGE_CHILDREN) (median of 3)"
        }
    );
    let peer_ok = match (&jrsonnet, &shared, &python) {
        (None, _, _) if o.peer => {
            println!("jrsonnet: not installed (cargo install jrsonnet --version 0.5.0-pre98)");
            false
        }
        (None, _, _) => false,
        (Some(_), None, _) => {
            println!("jrsonnet: found, but shared/bench/gen_peers.py not found (set SCL_SHARED or --shared)");
            false
        }
        (Some(_), _, None) => {
            println!("jrsonnet: found, but python3 is missing to run gen_peers.py");
            false
        }
        (Some(j), Some(_), Some(_)) => {
            let v = Command::new(j)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            println!("peer: {} ({v})", j.display());
            true
        }
    };

    let tmp;
    let work: PathBuf = match &o.keep {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
            d.canonicalize().map_err(|e| e.to_string())?
        }
        None => {
            tmp = tempfile::Builder::new()
                .prefix("scl-bench-")
                .tempdir()
                .map_err(|e| e.to_string())?;
            tmp.path().canonicalize().map_err(|e| e.to_string())?
        }
    };
    let peers_dir = work.join("peers");
    if peer_ok {
        let gen = shared.as_ref().unwrap().join("bench/gen_peers.py");
        let mut c = Command::new(python.as_ref().unwrap());
        c.arg(&gen).arg(&peers_dir);
        for n in &o.ns {
            c.arg(n.to_string());
        }
        c.args(["--topology", o.topo.name(), "--langs", "jsonnet"])
            .stdout(Stdio::null());
        if !c.status().map_err(|e| e.to_string())?.success() {
            return Err("gen_peers.py failed".into());
        }
    }

    let mut rows = Vec::new();
    let mut all_ok = true;
    for &n in &o.ns {
        let runs = o.runs.unwrap_or(if n >= 5000 { 5 } else { 10 });
        let dir = work.join(format!("scl/N{n}"));
        let bytes = workload::write(&dir, n, o.topo).map_err(|e| e.to_string())?;
        let expected = workload::expected(n, o.topo);
        let mut row = Row {
            n,
            src_kib: bytes as f64 / 1024.0,
            ok: true,
            ..Default::default()
        };
        eprintln!(
            "N={n}: {} modules, {:.0} KiB of SCL in {}",
            n + 2,
            row.src_kib,
            dir.display()
        );

        // The peers' expected JSON must be ours (same workload).
        let exp_file = peers_dir.join(format!("expected/N{n}.json"));
        if peer_ok {
            let theirs: Value =
                serde_json::from_slice(&std::fs::read(&exp_file).map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            if theirs != expected {
                return Err(format!(
                    "{} differs from this generator's expected JSON",
                    exp_file.display()
                ));
            }
        }

        let sc = Cmd {
            prog: &sclc,
            args: vec!["ir".into(), "top.env.scl".into()],
            dir: &dir,
        };
        let out = sc.output()?;
        let ir: Value =
            serde_json::from_slice(&out).map_err(|e| format!("sclc ir output is not JSON: {e}"))?;
        match workload::verify_ir(&ir, &expected) {
            Ok(()) => eprintln!("  sclc ir: {n} services verified"),
            Err(e) => {
                println!("N={n}: sclc ir output WRONG: {e}");
                row.ok = false;
            }
        }
        // The peer takes part in the timing only when its output is right.
        let jdir = peers_dir.join(format!("jsonnet/N{n}"));
        let jc = jrsonnet.as_ref().filter(|_| peer_ok).map(|prog| Cmd {
            prog,
            args: vec!["top.jsonnet".into()],
            dir: &jdir,
        });
        let jc = jc.filter(|jc| {
            match jc
                .output()
                .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
            {
                Ok(v) if v == expected => true,
                Ok(_) => {
                    println!("N={n}: jrsonnet output differs from {}", exp_file.display());
                    false
                }
                Err(e) => {
                    println!("N={n}: jrsonnet failed: {e}");
                    false
                }
            }
        });
        let mut cmds = vec![&sc];
        cmds.extend(jc.as_ref());
        let times = alternate_ms(&cmds, runs)?;
        row.sclc_ms = times[0];
        row.sclc_rss = peak_rss_mib(&tools, &sc)?;
        eprintln!("  sclc: {:.1} ms, {:.1} MiB", row.sclc_ms, row.sclc_rss);
        if let Some(jc) = &jc {
            row.jr_ms = Some(times[1]);
            row.jr_rss = Some(peak_rss_mib(&tools, jc)?);
            eprintln!(
                "  jrsonnet: {:.1} ms, {:.1} MiB",
                times[1],
                row.jr_rss.unwrap()
            );
        }

        if o.inprocess {
            let cold_runs = if n >= 5000 { 3 } else { 5 };
            match inprocess(&dir, n, o.topo, cold_runs, o.edits, &expected) {
                Ok(m) => {
                    row.cold_ms = Some(m.cold);
                    row.recheck_ms = Some(m.leaf);
                    row.comment_ms = Some(m.comment);
                    row.phases = Some(m.phases);
                    eprintln!(
                        "  in-process: cold {:.2} ms, re-check {:.3} ms after a leaf edit, {:.3} ms after a comment edit of the base",
                        m.cold, m.leaf, m.comment
                    );
                }
                Err(e) => {
                    println!("N={n}: in-process check FAILED: {e}");
                    row.ok = false;
                }
            }
        }
        if o.editor_edits > 0 && n == 1000 {
            match crate::editor::latency(&sclc, &dir, n, o.topo, o.editor_edits) {
                Ok(e) => {
                    eprintln!(
                        "  editor: leaf edit p50 {:.2} / p95 {:.2} ms, base edit p50 {:.2} / p95 {:.2} ms, server {:.1} MiB",
                        e.leaf_p50, e.leaf_p95, e.base_p50, e.base_p95, e.rss_mib
                    );
                    row.editor = Some(e);
                }
                Err(e) => {
                    println!("N={n}: editor latency FAILED: {e}");
                    row.ok = false;
                }
            }
        }
        all_ok &= row.ok;
        rows.push(row);
    }

    // The table (Markdown).
    println!();
    println!(
        "topology: {}; sclc {}; {} CPUs",
        o.topo.name(),
        sclc.display(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!();
    println!("| N | SCL KiB | sclc cold ms | sclc RSS MiB | jrsonnet ms | jrsonnet RSS MiB | jrsonnet/sclc time | sclc/jrsonnet RSS | in-proc cold ms | re-check ms | cold/re-check | comment re-check ms | cold/comment | output |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in &rows {
        let speed = r.jr_ms.map(|j| j / r.sclc_ms);
        let rss = r.jr_rss.map(|j| r.sclc_rss / j);
        let inc = match (r.cold_ms, r.recheck_ms) {
            (Some(c), Some(x)) => Some(c / x),
            _ => None,
        };
        let com = match (r.cold_ms, r.comment_ms) {
            (Some(c), Some(x)) => Some(c / x),
            _ => None,
        };
        println!(
            "| {} | {:.0} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.n,
            r.src_kib,
            r.sclc_ms,
            r.sclc_rss,
            fmt_opt(r.jr_ms, 1),
            fmt_opt(r.jr_rss, 1),
            speed.map(|s| format!("{s:.2}x")).unwrap_or("–".into()),
            rss.map(|s| format!("{s:.2}")).unwrap_or("–".into()),
            fmt_opt(r.cold_ms, 1),
            fmt_opt(r.recheck_ms, 2),
            inc.map(|s| format!("{s:.0}x")).unwrap_or("–".into()),
            fmt_opt(r.comment_ms, 3),
            com.map(|s| format!("{s:.0}x")).unwrap_or("–".into()),
            if r.ok { "verified" } else { "WRONG" }
        );
    }
    if rows.iter().any(|r| r.phases.is_some()) {
        println!();
        println!("In-process phase split of one cold run (ms; each phase run for every module before the next):");
        println!();
        println!("| N | parse | imports | static checks | evaluation + IR (module_values of top) | rest of check | total |");
        println!("|---:|---:|---:|---:|---:|---:|---:|");
        for r in &rows {
            if let Some(p) = r.phases {
                let tot = p.parse + p.imports + p.static_check + p.eval + p.rest;
                println!(
                    "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                    r.n, p.parse, p.imports, p.static_check, p.eval, p.rest, tot
                );
            }
        }
    }

    for r in &rows {
        if let Some(e) = &r.editor {
            println!();
            println!(
                "editor (sclc lsp over stdio, N={}, {} edits each, didChange to publishDiagnostics of the edited file, no debounce; open: top, the last module, base)",
                r.n, e.edits
            );
            println!();
            println!("| edit | p50 ms | p95 ms | in-proc cold ms | cold / p95 |");
            println!("|---|---:|---:|---:|---:|");
            for (what, p50, p95) in [
                ("leaf (last module)", e.leaf_p50, e.leaf_p95),
                ("base module (comment)", e.base_p50, e.base_p95),
                ("leaf again, after the base edits", e.after_p50, e.after_p95),
            ] {
                println!(
                    "| {what} | {p50:.2} | {p95:.2} | {} | {} |",
                    fmt_opt(r.cold_ms, 2),
                    fmt_opt(r.cold_ms.map(|c| c / p95), 0)
                );
            }
            println!();
            println!(
                "slowest leaf edit after the base edits (the first: the edited file switches): {:.2} ms",
                e.after_max
            );
            println!(
                "server resident memory after opening the workspace: {:.1} MiB",
                e.rss_mib
            );
        }
    }

    // Targets (bench/README.md).
    println!();
    let mut verdict = |name: String, pass: Option<bool>| {
        let s = match pass {
            Some(true) => "PASS",
            Some(false) => {
                all_ok = false;
                "FAIL"
            }
            None => "SKIP",
        };
        println!("{s}  {name}");
    };
    let at = |n: usize| rows.iter().find(|r| r.n == n);
    match at(1000) {
        Some(r) => verdict(
            format!(
                "N=1000: sclc cold at least 2x faster than jrsonnet ({})",
                r.jr_ms
                    .map(|j| format!("{:.2}x", j / r.sclc_ms))
                    .unwrap_or("no jrsonnet".into())
            ),
            r.jr_ms.map(|j| j >= 2.0 * r.sclc_ms),
        ),
        None => verdict(
            "N=1000: 2x faster than jrsonnet (N=1000 not run)".into(),
            None,
        ),
    }
    match at(5000) {
        Some(r) => {
            verdict(
                format!(
                    "N=5000: sclc faster than jrsonnet ({})",
                    r.jr_ms
                        .map(|j| format!("{:.0} vs {:.0} ms", r.sclc_ms, j))
                        .unwrap_or("no jrsonnet".into())
                ),
                r.jr_ms.map(|j| r.sclc_ms < j),
            );
            verdict(
                format!(
                    "N=5000: sclc peak RSS below jrsonnet's ({})",
                    r.jr_rss
                        .map(|j| format!("{:.1} vs {:.1} MiB", r.sclc_rss, j))
                        .unwrap_or("no jrsonnet".into())
                ),
                r.jr_rss.map(|j| r.sclc_rss < j),
            );
        }
        None => verdict(
            "N=5000: faster and smaller than jrsonnet (N=5000 not run)".into(),
            None,
        ),
    }
    for r in &rows {
        if let (Some(c), Some(x)) = (r.cold_ms, r.recheck_ms) {
            verdict(
                format!(
                    "N={}: re-check after a leaf edit at least 50x faster than cold ({:.0}x)",
                    r.n,
                    c / x
                ),
                Some(c >= 50.0 * x),
            );
        }
        if let (Some(c), Some(x)) = (r.cold_ms, r.comment_ms) {
            verdict(
                format!(
                    "N={}: re-check after a comment-only edit of the base module at least 200x faster than cold ({:.0}x)",
                    r.n,
                    c / x
                ),
                Some(c >= 200.0 * x),
            );
        }
    }
    for r in &rows {
        if let Some(e) = &r.editor {
            verdict(
                format!(
                    "N={}: editor leaf edit p95 at most 10 ms and at most 1/20 of the in-process cold check ({:.2} ms; cold {} ms)",
                    r.n,
                    e.leaf_p95,
                    fmt_opt(r.cold_ms, 2)
                ),
                r.cold_ms.map(|c| e.leaf_p95 <= 10.0 && e.leaf_p95 * 20.0 <= c),
            );
        }
    }
    for r in &rows {
        if !r.ok {
            verdict(format!("N={}: outputs verified", r.n), Some(false));
        }
    }
    if !o.deep.is_empty() {
        all_ok &= deep_chains(&tools, &sclc, &work, &o.deep, o.runs)?;
    }
    if o.keep.is_some() {
        println!("\nworkloads kept in {}", work.display());
    }
    Ok(all_ok)
}

/// The deep-chain workloads: `sclc check` of one module holding an
/// `extends` chain of N envs (declared last to first), and of an import
/// chain of N modules, each extending the previous one's env. The time per
/// env should not grow with N (linear in total). Returns whether every
/// output verified and the 5000-long chain met its bound (2 s, 300 MiB).
fn deep_chains(
    tools: &Tools,
    sclc: &Path,
    work: &Path,
    ns: &[usize],
    runs: Option<usize>,
) -> Result<bool, String> {
    let mut ok = true;
    println!();
    println!("Deep chains (`sclc check`, whole process; `ir --env` verified):");
    println!();
    println!("| workload | N | sclc check ms | µs per env | RSS MiB | output |");
    println!("|---|---:|---:|---:|---:|---|");
    let mut five_k: Option<(f64, f64)> = None;
    for &n in ns {
        let runs = runs.unwrap_or(if n >= 5000 { 3 } else { 5 });
        // One module, an extends chain.
        let dir = work.join(format!("deep/extends-N{n}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("chain.env.scl"), workload::deep_chain_source(n))
            .map_err(|e| e.to_string())?;
        let ir_cmd = Cmd {
            prog: sclc,
            args: vec![
                "ir".into(),
                "chain.env.scl".into(),
                "--env".into(),
                format!("e{}", n - 1),
            ],
            dir: &dir,
        };
        let verified = ir_cmd
            .output()
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
            .and_then(|v| workload::verify_deep_chain(&v, n));
        let check = Cmd {
            prog: sclc,
            args: vec!["check".into(), "chain.env.scl".into()],
            dir: &dir,
        };
        let ms = alternate_ms(&[&check], runs)?[0];
        let rss = peak_rss_mib(tools, &check)?;
        if n == 5000 {
            five_k = Some((ms, rss));
        }
        ok &= verified.is_ok();
        println!(
            "| extends chain, one module | {n} | {ms:.1} | {:.1} | {rss:.1} | {} |",
            ms * 1000.0 / n as f64,
            verified.map_or_else(|e| format!("WRONG: {e}"), |()| "verified".into())
        );
        // N modules, an import chain.
        let dir = work.join(format!("deep/imports-N{n}"));
        let top = workload::write_import_chain(&dir, n).map_err(|e| e.to_string())?;
        let top = top.file_name().unwrap().to_string_lossy().to_string();
        let ir_cmd = Cmd {
            prog: sclc,
            args: vec!["ir".into(), top.clone(), "--env".into(), "e".into()],
            dir: &dir,
        };
        let verified = ir_cmd
            .output()
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
            .and_then(|v| {
                let level = v
                    .pointer("/vars/LEVEL")
                    .and_then(Value::as_str)
                    .map(String::from);
                if n == 1 || level == Some((n - 1).to_string()) {
                    Ok(())
                } else {
                    Err(format!("vars.LEVEL: {level:?}"))
                }
            });
        let check = Cmd {
            prog: sclc,
            args: vec!["check".into(), top],
            dir: &dir,
        };
        let ms = alternate_ms(&[&check], runs)?[0];
        let rss = peak_rss_mib(tools, &check)?;
        ok &= verified.is_ok();
        println!(
            "| import chain, N modules | {n} | {ms:.1} | {:.1} | {rss:.1} | {} |",
            ms * 1000.0 / n as f64,
            verified.map_or_else(|e| format!("WRONG: {e}"), |()| "verified".into())
        );
    }
    if let Some((ms, rss)) = five_k {
        let pass = ms < 2000.0 && rss < 300.0;
        ok &= pass;
        println!();
        println!(
            "{}  N=5000 extends chain: sclc check under 2 s and 300 MiB ({ms:.0} ms, {rss:.1} MiB)",
            if pass { "PASS" } else { "FAIL" }
        );
    }
    Ok(ok)
}
