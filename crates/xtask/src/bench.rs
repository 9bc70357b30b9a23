//! `xtask bench`: the benchmark described in `bench/README.md`.
//!
//! Per N: generate the SCL workload, check `sclc ir top.env.scl` against the
//! expected JSON, time it as a whole process and measure its peak RSS
//! (`/usr/bin/time -f %M` if installed); time a cold in-process
//! `Database::check`, the re-check after a one-line edit of the last module
//! and the re-check after a comment-only edit of the base module; and, when
//! `jrsonnet` is on PATH, time the peer's Jsonnet version of the workload
//! (written by `gen_peers.py`) alternately with `sclc`, run by run. At
//! N = 1000 and at the largest N, `sclc check` joins the alternation (its
//! cost against `sclc ir`'s), and so does `sclc ir` held to one CPU (what
//! the other CPUs are worth on this machine, and the ratio to the
//! single-threaded peer without them). Per-module figures (µs and KiB per module,
//! the memory slope per added module) are printed next to the totals.
//! `--profile DIR` writes callgrind profiles of one `sclc ir` per phase
//! (or a `perf` profile without valgrind), separate from the timed runs.

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
    /// Where to write the per-phase profiles of one `sclc ir` per N.
    profile: Option<PathBuf>,
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        ns: vec![100, 1000, 5000, 20000],
        topo: Topology::Chain,
        runs: None,
        edits: 10,
        shared: std::env::var_os("SCL_SHARED").map(PathBuf::from),
        keep: None,
        peer: true,
        inprocess: true,
        editor_edits: 200,
        deep: vec![1000, 5000, 20000],
        profile: None,
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
            "--profile" => o.profile = Some(PathBuf::from(val()?)),
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

/// The whole-process runs of each command at `n` modules when `--runs`
/// is not given: 31 below N = 5000, 15 below N = 10000, 11 from there
/// (about 6, 11 and 45 s of alternated runs at N = 1000, 5000 and 20000
/// on 2 cores). Odd, so that the median is one run. On a shared VM single
/// runs vary by up to ±50 %: with the earlier 10 and 5 runs, five bench
/// runs of one commit gave `sclc ir` medians of 40.8–58.3 ms at
/// N = 1000, and the N = 20000 ratio moved between 1.84x and 2.11x.
fn default_runs(n: usize) -> usize {
    if n >= 10_000 {
        11
    } else if n >= 5000 {
        15
    } else {
        31
    }
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

/// A command run in a folder: the program (absolute) and its arguments,
/// and the one CPU it is held to, if any.
struct Cmd<'a> {
    prog: &'a Path,
    args: Vec<String>,
    dir: &'a Path,
    /// Run the process on this CPU only (`sched_setaffinity(2)` in the
    /// child before `exec`, as `taskset -c` does). The program then sees
    /// one CPU: `sclc` takes its one-core path (no read-ahead thread, no
    /// preload on every core, no second checking thread), so this times
    /// the compiler's serial path on one CPU, not its parallel one squeezed
    /// onto one.
    cpu: Option<usize>,
}

impl Cmd<'_> {
    fn command(&self) -> Command {
        let mut c = Command::new(self.prog);
        c.args(&self.args).current_dir(self.dir);
        if let Some(cpu) = self.cpu {
            use std::os::unix::process::CommandExt;
            // The set is made here, so that the child only makes the call
            // (a CPU past the set's size is refused there: EINVAL).
            // SAFETY: `cpu_set_t` is plain bits (all zero is the empty
            // set); `CPU_SET` sets one bit of it, below its size.
            let set = unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                if cpu < libc::CPU_SETSIZE as usize {
                    libc::CPU_SET(cpu, &mut set);
                }
                set
            };
            // SAFETY: between fork and exec the closure makes one system
            // call on a set it owns (`Copy`), which is async-signal-safe;
            // it allocates nothing and takes no lock.
            unsafe {
                c.pre_exec(move || {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        c
    }
    fn line(&self) -> String {
        self.with_args(self.prog.display().to_string())
    }
    /// [`Cmd::line`] with the program's file name only.
    fn short_line(&self) -> String {
        let name = self.prog.file_name().unwrap_or(self.prog.as_os_str());
        self.with_args(name.to_string_lossy().into_owned())
    }
    /// `prog` followed by the arguments and the CPU the command is held to.
    fn with_args(&self, mut s: String) -> String {
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        if let Some(cpu) = self.cpu {
            s.push_str(&format!(" (on CPU {cpu} only)"));
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

/// Writes every dirty page of the file system out (`sync(2)`) before a
/// measurement: the workloads just generated (26,000 files for the peers
/// at N up to 20,000, and each N's own) are otherwise written back by the
/// kernel's flusher threads about 30 s later (`vm.dirty_expire_centisecs`),
/// on the same two cores, in the middle of the first N's runs. Measured:
/// `sclc ir` at N = 1000 took 58.3 ms in a full run against 42.8 ms in a run
/// of N = 1000 alone; a process on two cores loses more to a flusher than
/// a peer on one.
fn settle_writes() {
    // SAFETY: no arguments; `sync` cannot fail.
    unsafe { libc::sync() };
}

/// Median wall times in ms of whole-process runs (output discarded), one per
/// command, measured alternately: after two warm-up runs of each, every round
/// runs each command once (ABAB…; the first command of a round rotates), so
/// a slow phase of a shared machine falls on all commands alike instead of on
/// whichever block ran during it.
fn alternate_ms(cmds: &[&Cmd], runs: usize) -> Result<Vec<f64>, String> {
    Ok(alternate(cmds, runs)?.into_iter().map(|t| t.ms).collect())
}

/// One command's timed runs of an [`alternate`] round robin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Timed {
    /// Median wall time, ms.
    ms: f64,
    /// How many of the timed runs read from the disk (`ru_inblock` > 0):
    /// files the kernel had dropped from its page cache since the run
    /// before (on a VM with proactive reclaim, a file not read for a few
    /// seconds may be dropped).
    disk_runs: usize,
    /// What the timed runs read from the disk in all, KiB (`ru_inblock`
    /// is in 512-byte blocks on Linux).
    disk_kib: f64,
}

/// [`alternate_ms`], with what each command's runs read from the disk.
fn alternate(cmds: &[&Cmd], runs: usize) -> Result<Vec<Timed>, String> {
    let once = |cmd: &Cmd| -> Result<(f64, u64), String> {
        let t = Instant::now();
        let child = cmd
            .command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", cmd.line()))?;
        let (code, ru) = wait_rusage(child).map_err(|e| format!("{}: {e}", cmd.line()))?;
        let inblock = ru.ru_inblock.max(0) as u64;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if code != Some(0) {
            return Err(format!("{} failed (exit {code:?})", cmd.line()));
        }
        Ok((ms, inblock))
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
    Ok(times
        .into_iter()
        .map(|t| Timed {
            ms: median(t.iter().map(|x| x.0).collect()),
            disk_runs: t.iter().filter(|x| x.1 > 0).count(),
            disk_kib: t.iter().map(|x| x.1 as f64 / 2.0).sum(),
        })
        .collect())
}

/// Waits for `child` with `wait4(2)` and returns its exit code (`None`
/// when a signal ended it) and its own `rusage` (its process and the
/// children it waited for). Its own, unlike `RUSAGE_CHILDREN`, which also
/// counts any other child this process waits for meanwhile (another
/// test's, in `cargo test`). `ru_inblock` is the 512-byte blocks the file
/// systems read from the disk for it (the program, its libraries and what
/// it read, readahead included); `ru_maxrss` its peak RSS in KiB.
fn wait_rusage(child: std::process::Child) -> std::io::Result<(Option<i32>, libc::rusage)> {
    let pid = child.id() as libc::pid_t;
    // `child` is not waited for by std: this call reaps it.
    drop(child);
    let mut status = 0;
    // SAFETY: `rusage` is plain data (all zero is valid); `wait4` writes
    // the status and the child's usage into them.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above; `pid` is our own child, not yet reaped.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, ru))
}

/// The first CPU this thread may run on (`sched_getaffinity(2)`), when it
/// may run on two or more and no CPU quota holds the process to one (else
/// there is no second CPU to do without); `None` too when the call fails
/// (a machine of more than 1,024 CPUs).
fn first_of_several_cpus() -> Option<usize> {
    // SAFETY: `cpu_set_t` is plain bits (all zero is the empty set);
    // `sched_getaffinity` writes at most `size_of::<cpu_set_t>()` bytes
    // into it; `CPU_ISSET` reads it.
    let first = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        let mut cpus = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set));
        let first = cpus.next()?;
        cpus.next().map(|_| first)
    };
    // A CPU quota of one (a container) leaves nothing to compare either:
    // what `sclc` itself counts.
    first.filter(|_| scl_db::cores() >= 2)
}

/// Runs an `sclc ir` command once and checks its output against the
/// peers' `expected` JSON (`workload::verify_ir`): the inner error says
/// what is wrong; the outer one that the command failed or wrote no JSON.
/// The output and its tree are dropped before returning (at N = 20000
/// they take hundreds of MiB, which the timed runs should not share).
fn verify_ir_output(cmd: &Cmd, expected: &Value) -> Result<Result<(), String>, String> {
    let out = cmd.output()?;
    let ir: Value = serde_json::from_slice(&out)
        .map_err(|e| format!("{}: output is not JSON: {e}", cmd.line()))?;
    Ok(workload::verify_ir(&ir, expected))
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

/// Without GNU time: the peak RSS of `cmd` in KiB, from its own `rusage`
/// ([`wait_rusage`]).
fn rusage_kib(cmd: &Cmd) -> Result<f64, String> {
    let child = cmd
        .command()
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", cmd.line()))?;
    let (code, ru) = wait_rusage(child).map_err(|e| format!("{}: {e}", cmd.line()))?;
    if code != Some(0) {
        return Err(format!("{} failed (exit {code:?})", cmd.line()));
    }
    Ok(ru.ru_maxrss as f64)
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
    /// `sclc check top.env.scl`, timed in the same alternation as `sclc ir`
    /// (at N = 1000 and at the largest N).
    check_ms: Option<f64>,
    /// `sclc ir top.env.scl` held to one CPU ([`Cmd::cpu`]), timed in the
    /// same alternation (where `check_ms` is, on a machine of two or more
    /// CPUs).
    one_cpu_ms: Option<f64>,
    /// For each command of the alternation whose timed runs read from the
    /// disk, a line saying how many and how much ([`Timed`]).
    disk_reads: Vec<String>,
    /// The language server's memory once the workspace is open (N = 5000).
    lsp_open: Option<crate::editor::OpenMemory>,
    profile: Option<Profile>,
    ok: bool,
}

impl Row {
    fn sclc_us_per_module(&self) -> f64 {
        self.sclc_ms * 1000.0 / self.n as f64
    }
    fn sclc_kib_per_module(&self) -> f64 {
        self.sclc_rss * 1024.0 / self.n as f64
    }
    fn jr_us_per_module(&self) -> Option<f64> {
        self.jr_ms.map(|j| j * 1000.0 / self.n as f64)
    }
    fn jr_kib_per_module(&self) -> Option<f64> {
        self.jr_rss.map(|j| j * 1024.0 / self.n as f64)
    }
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
        db.set_text(base, &comment_edit(&base_src, k));
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
    // A file is read, parsed and its declarations anchored when its input
    // is made (`Database::open`): that is the parse phase.
    let db = Database::new(dir, None);
    let mut ph = Phases::default();
    let t = Instant::now();
    let top = db.open(&top_path);
    let mut files = vec![db.open(&dir.join("base.env.scl"))];
    files.extend((0..n).map(|i| db.open(&dir.join(format!("mod{i}.env.scl")))));
    files.push(top);
    for f in &files {
        let _ = scl_db::syntax_errors(&db, *f);
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

/// The base module's text for comment-only edit `k`: a comment at its
/// end, alternately present and absent (the text changes, its meaning
/// does not).
fn comment_edit(base_src: &str, k: usize) -> String {
    if k.is_multiple_of(2) {
        format!("{base_src}// edit {k}\n")
    } else {
        base_src.to_string()
    }
}

pub(crate) fn repo_root() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    p.canonicalize().unwrap_or(p)
}

pub(crate) fn target_dir(root: &Path) -> PathBuf {
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
        eprintln!("usage: xtask recheck-loop DIR N EDITS [--events] [--comment]");
        return 2;
    };
    let dir = Path::new(dir);
    // `--events`: what each re-check ran and verified, by query (salsa's
    // event log; slower, so only for finding what a re-check does).
    let events = args.iter().any(|a| a == "--events");
    let (mut db, log) = if events {
        let (db, log) = Database::with_event_log(std::sync::Arc::new(scl_db::OsSystem), dir, None);
        (db, Some(log))
    } else {
        (Database::new(dir, None), None)
    };
    let top = db.open(&dir.join("top.env.scl"));
    let _ = db.check(top);
    let last = db.open(&dir.join(format!("mod{}.env.scl", n - 1)));
    // `--comment`: comment-only edits of the base module (not opened for
    // editing, as in the bench) instead of one-line edits of the leaf.
    let comment = args.iter().any(|a| a == "--comment");
    let base = db.open(&dir.join("base.env.scl"));
    let base_src = workload::base_source();
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
        if comment {
            db.set_text(base, &comment_edit(&base_src, k));
        } else {
            db.set_text(
                last,
                &workload::module_source(n - 1, Topology::Chain, &desc),
            );
        }
        if let Some(log) = &log {
            let _ = log.take();
            let _ = log.take_validated_by_query();
        }
        let t = Instant::now();
        let _ = db.check(top);
        each.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(log) = &log {
            let (ran, validated) = log.take();
            let mut by: std::collections::BTreeMap<String, usize> = Default::default();
            for e in &ran {
                *by.entry(e.query.clone()).or_default() += 1;
            }
            println!("re-check {k}: ran {} queries {by:?}", ran.len());
            println!(
                "  verified {validated}: {:?}",
                log.take_validated_by_query()
            );
        }
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
    if let Some((found, listed)) = crate::link_order::coverage(&root, &sclc) {
        println!(
            "link order: {found} of {listed} functions of crates/sclc/link-order.txt are in the binary{}",
            if found * 10 < listed * 9 {
                " (regenerate it: cargo run --release -p xtask -- link-order)"
            } else {
                ""
            }
        );
    }
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
            "the rusage of each run from wait4 (median of 3)"
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

    let max_n = o.ns.iter().copied().max().unwrap_or(0);
    let one_cpu = first_of_several_cpus();
    let valgrind = on_path("valgrind");
    let mut rows = Vec::new();
    let mut all_ok = true;
    for &n in &o.ns {
        let runs = o.runs.unwrap_or_else(|| default_runs(n));
        let dir = work.join(format!("scl/N{n}"));
        let bytes = workload::write(&dir, n, o.topo).map_err(|e| e.to_string())?;
        settle_writes();
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
            cpu: None,
        };
        match verify_ir_output(&sc, &expected)? {
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
            cpu: None,
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
        // `sclc check` against `sclc ir`, in the same alternation (at
        // N = 1000 and at the largest N).
        let check = Cmd {
            prog: &sclc,
            args: vec!["check".into(), "top.env.scl".into()],
            dir: &dir,
            cpu: None,
        };
        let time_check = n == 1000 || n == max_n;
        if time_check {
            check.output()?;
        }
        // `sclc ir` held to one CPU, in the same alternation (at the same
        // N): what the second CPU is worth on this machine, and the ratio
        // to the peer without it.
        let one = Cmd {
            prog: &sclc,
            args: sc.args.clone(),
            dir: &dir,
            cpu: one_cpu,
        };
        let time_one = time_check && one_cpu.is_some();
        if time_one {
            // The one-core path's output is verified as the other's.
            if let Err(e) = verify_ir_output(&one, &expected)? {
                println!("N={n}: sclc ir on one CPU: output WRONG: {e}");
                row.ok = false;
            }
        }
        let mut cmds = vec![&sc];
        cmds.extend(jc.as_ref());
        let at_check = cmds.len();
        if time_check {
            cmds.push(&check);
        }
        let at_one = cmds.len();
        if time_one {
            cmds.push(&one);
        }
        let timed = alternate(&cmds, runs)?;
        let times: Vec<f64> = timed.iter().map(|t| t.ms).collect();
        for (cmd, t) in cmds.iter().zip(&timed) {
            if t.disk_runs > 0 {
                let what = cmd.short_line();
                row.disk_reads.push(format!(
                    "{what}: {} of {runs} runs read from the disk ({:.1} KiB in all)",
                    t.disk_runs, t.disk_kib
                ));
            }
        }
        row.sclc_ms = times[0];
        if time_check {
            let c = times[at_check];
            row.check_ms = Some(c);
            eprintln!("  sclc check: {c:.1} ms (sclc ir {:.1} ms)", row.sclc_ms);
        }
        if time_one {
            let t = times[at_one];
            row.one_cpu_ms = Some(t);
            eprintln!(
                "  sclc ir on one CPU: {t:.1} ms (on every CPU {:.1} ms)",
                row.sclc_ms
            );
        }
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
        if o.editor_edits > 0 && n == 5000 {
            match crate::editor::open_memory(&sclc, &dir) {
                Ok(m) => {
                    eprintln!(
                        "  editor: server {:.1} MiB after opening the workspace (peak {:.1} MiB, diagnostics after {:.0} ms)",
                        m.rss_mib, m.peak_mib, m.open_ms
                    );
                    row.lsp_open = Some(m);
                }
                Err(e) => {
                    println!("N={n}: language server memory FAILED: {e}");
                    row.ok = false;
                }
            }
        }
        if let Some(pdir) = &o.profile {
            let out = pdir.join(format!("N{n}"));
            match profile(valgrind.as_deref(), &sclc, &dir, &out) {
                Ok(p) => row.profile = Some(p),
                Err(e) => println!("N={n}: profile FAILED: {e}"),
            }
        }
        all_ok &= row.ok;
        rows.push(row);
    }

    let deep = if o.deep.is_empty() {
        Vec::new()
    } else {
        deep_chains(&tools, &sclc, &work, &o.deep, o.runs)?
    };

    // The tables (Markdown).
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

    // Per module: time and peak RSS divided by N, and `sclc check` where timed.
    println!();
    println!("Per module (whole-process medians divided by N; `sclc check` timed in the same alternation as `sclc ir`):");
    println!();
    println!("| N | sclc µs/module | sclc KiB/module | jrsonnet µs/module | jrsonnet KiB/module | sclc check ms | sclc ir ms | check/ir |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.1} | {:.1} | {} | {} | {} | {:.1} | {} |",
            r.n,
            r.sclc_us_per_module(),
            r.sclc_kib_per_module(),
            fmt_opt(r.jr_us_per_module(), 1),
            fmt_opt(r.jr_kib_per_module(), 1),
            fmt_opt(r.check_ms, 1),
            r.sclc_ms,
            fmt_opt(r.check_ms.map(|c| c / r.sclc_ms), 2),
        );
    }
    // One CPU against all of them, where timed.
    if rows.iter().any(|r| r.one_cpu_ms.is_some()) {
        println!();
        println!(
            "`sclc ir` held to one CPU (CPU {}, sched_setaffinity before exec: sclc sees one CPU and takes its one-core path), in the same alternation as `sclc ir` on every CPU and jrsonnet (single-threaded, not held):",
            one_cpu.unwrap_or(0)
        );
        println!();
        println!("| N | sclc ir ms | sclc ir on one CPU ms | jrsonnet ms | speed-up from the other CPUs | jrsonnet / sclc on one CPU |");
        println!("|---:|---:|---:|---:|---:|---:|");
        for r in &rows {
            if let Some(one) = r.one_cpu_ms {
                println!(
                    "| {} | {:.1} | {:.1} | {} | {:.2}x | {} |",
                    r.n,
                    r.sclc_ms,
                    one,
                    fmt_opt(r.jr_ms, 1),
                    one / r.sclc_ms,
                    r.jr_ms
                        .map(|j| format!("{:.2}x", j / one))
                        .unwrap_or("–".into()),
                );
            }
        }
    }

    // Runs that read from the disk: their times include it.
    println!();
    if rows.iter().all(|r| r.disk_reads.is_empty()) {
        println!("disk reads during the timed whole-process runs: no run read a block from the disk (`ru_inblock` 0 in every timed run of the alternation)");
    } else {
        println!("disk reads during the timed whole-process runs (`ru_inblock` of each run: files, or the program and its libraries, the kernel dropped from its page cache since the run before; those runs' times include the reads):");
        for r in &rows {
            for line in &r.disk_reads {
                println!("- N={}: {line}", r.n);
            }
        }
    }

    // Memory slope: KiB per added module between the smallest N >= 1000
    // and the largest N.
    let slope_range = memory_slope_range(&rows);
    let slope = |rss: &dyn Fn(&Row) -> Option<f64>| {
        slope_range.and_then(|(lo, hi)| Some((rss(hi)? - rss(lo)?) * 1024.0 / (hi.n - lo.n) as f64))
    };
    let sclc_slope = slope(&|r: &Row| Some(r.sclc_rss));
    let jr_slope = slope(&|r: &Row| r.jr_rss);
    println!();
    match slope_range {
        Some((lo, hi)) => println!(
            "memory slope N={}→{} (peak RSS, KiB per added module): sclc {}, jrsonnet {}",
            lo.n,
            hi.n,
            fmt_opt(sclc_slope, 1),
            fmt_opt(jr_slope, 1)
        ),
        None => println!("memory slope: needs two N values, the smaller at least 1000"),
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
    for r in &rows {
        if let Some(m) = &r.lsp_open {
            println!();
            println!(
                "server resident memory after opening the N={} workspace: {:.1} MiB (peak {:.1} MiB; top.env.scl's diagnostics {:.0} ms after didOpen)",
                r.n, m.rss_mib, m.peak_mib, m.open_ms
            );
        }
    }

    if !deep.is_empty() {
        println!();
        println!("Deep chains (`sclc check`, whole process; `ir --env` verified):");
        println!();
        println!("| workload | N | sclc check ms | µs per env | RSS MiB | output |");
        println!("|---|---:|---:|---:|---:|---|");
        for d in &deep {
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.1} | {} |",
                d.workload,
                d.n,
                d.ms,
                d.us_per_env(),
                d.rss,
                match &d.verified {
                    Ok(()) => "verified".to_string(),
                    Err(e) => format!("WRONG: {e}"),
                }
            );
        }
    }

    for r in &rows {
        if let Some(p) = &r.profile {
            print_profile(r.n, p);
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
    // Speed against the peer.
    for (n, factor) in [(1000, 3.0), (20000, 2.0)] {
        let name = format!("N={n}: cold `sclc ir` at least {factor:.0}x faster than jrsonnet");
        match at(n) {
            None => verdict(format!("{name} (N={n} not run)"), None),
            Some(r) => match r.jr_ms {
                None => verdict(format!("{name} (no jrsonnet)"), None),
                Some(j) => verdict(
                    format!(
                        "{name} ({:.2}x: {:.1} vs {:.1} ms)",
                        j / r.sclc_ms,
                        r.sclc_ms,
                        j
                    ),
                    Some(j >= factor * r.sclc_ms),
                ),
            },
        }
    }
    // Memory against the peer.
    for n in [5000, 20000] {
        let name = format!("N={n}: sclc peak RSS below jrsonnet's");
        match at(n) {
            None => verdict(format!("{name} (N={n} not run)"), None),
            Some(r) => match r.jr_rss {
                None => verdict(format!("{name} (no jrsonnet)"), None),
                Some(j) => verdict(
                    format!("{name} ({:.1} vs {:.1} MiB)", r.sclc_rss, j),
                    Some(r.sclc_rss < j),
                ),
            },
        }
    }
    match (slope_range, sclc_slope, jr_slope) {
        (Some((lo, hi)), Some(s), Some(j)) => verdict(
            format!(
                "sclc memory slope N={}→{} below jrsonnet's ({s:.1} vs {j:.1} KiB per added module)",
                lo.n, hi.n
            ),
            Some(s < j),
        ),
        (Some((lo, hi)), _, _) => verdict(
            format!(
                "sclc memory slope N={}→{} below jrsonnet's (no jrsonnet)",
                lo.n, hi.n
            ),
            None,
        ),
        (None, _, _) => verdict(
            "sclc memory slope below jrsonnet's (needs two N values, the smaller at least 1000)"
                .into(),
            None,
        ),
    }
    // Scaling: per-module cost at N = 20000 against N = 1000.
    type PerModule = fn(&Row) -> f64;
    let scaling: [(&str, &str, PerModule); 2] = [
        ("time", "µs", Row::sclc_us_per_module),
        ("memory", "KiB", Row::sclc_kib_per_module),
    ];
    for (what, unit, per) in scaling {
        let name = format!("sclc {what} per module at N=20000 at most 1.25x its value at N=1000");
        match (at(1000), at(20000)) {
            (Some(a), Some(b)) => {
                let (x, y) = (per(a), per(b));
                verdict(
                    format!("{name} ({:.2}x: {x:.1} → {y:.1} {unit}/module)", y / x),
                    Some(y <= 1.25 * x),
                )
            }
            _ => verdict(format!("{name} (N=1000 or N=20000 not run)"), None),
        }
    }
    // Deep chains: time per env at the largest N against the smallest N >= 1000.
    for workload in [DEEP_EXTENDS, DEEP_IMPORTS] {
        let name = format!("deep chains, {workload}: time per env at the largest N at most 1.25x its value at the smallest N ≥ 1000");
        let of: Vec<&DeepRow> = deep
            .iter()
            .filter(|d| d.workload == workload && d.n >= 1000)
            .collect();
        let lo = of.iter().min_by_key(|d| d.n);
        let hi = of.iter().max_by_key(|d| d.n);
        match (lo, hi) {
            (Some(lo), Some(hi)) if hi.n > lo.n => verdict(
                format!(
                    "{name} ({:.2}x: {:.1} µs at N={} → {:.1} µs at N={})",
                    hi.us_per_env() / lo.us_per_env(),
                    lo.us_per_env(),
                    lo.n,
                    hi.us_per_env(),
                    hi.n
                ),
                Some(hi.us_per_env() <= 1.25 * lo.us_per_env()),
            ),
            _ => verdict(
                format!(
                    "{name} ({})",
                    if o.deep.is_empty() {
                        "--no-deep"
                    } else {
                        "needs two --deep values of at least 1000"
                    }
                ),
                None,
            ),
        }
    }
    // `sclc check` costs at most what `sclc ir` costs.
    let mut check_ns = vec![1000];
    if max_n != 1000 {
        check_ns.push(max_n);
    }
    for n in check_ns {
        let name = format!(
            "N={n}: `sclc check top.env.scl` at most the cost of `sclc ir top.env.scl` (median check ≤ median ir × 1.05: a 5 % noise allowance)"
        );
        match at(n).map(|r| (r.check_ms, r.sclc_ms)) {
            Some((Some(c), i)) => verdict(
                format!("{name} (check {c:.1} ms, ir {i:.1} ms: {:.2}x)", c / i),
                Some(c <= i * 1.05),
            ),
            _ => verdict(format!("{name} (N={n} not run)"), None),
        }
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
    if let Some(d) = deep
        .iter()
        .find(|d| d.workload == DEEP_EXTENDS && d.n == 5000)
    {
        verdict(
            format!(
                "N=5000 extends chain: sclc check under 2 s and 300 MiB ({:.0} ms, {:.1} MiB)",
                d.ms, d.rss
            ),
            Some(d.ms < 2000.0 && d.rss < 300.0),
        );
    }
    for r in &rows {
        if !r.ok {
            verdict(format!("N={}: outputs verified", r.n), Some(false));
        }
    }
    for d in &deep {
        if d.verified.is_err() {
            verdict(
                format!("deep chains, {} N={}: output verified", d.workload, d.n),
                Some(false),
            );
        }
    }
    if o.keep.is_some() {
        println!("\nworkloads kept in {}", work.display());
    }
    Ok(all_ok)
}

/// The rows between which the memory slope is taken: the smallest N of at
/// least 1000 and the largest N (None unless the two differ).
fn memory_slope_range(rows: &[Row]) -> Option<(&Row, &Row)> {
    let lo = rows.iter().filter(|r| r.n >= 1000).min_by_key(|r| r.n)?;
    let hi = rows.iter().max_by_key(|r| r.n)?;
    (hi.n > lo.n).then_some((lo, hi))
}

const DEEP_EXTENDS: &str = "extends chain, one module";
const DEEP_IMPORTS: &str = "import chain, N modules";

/// One deep-chain measurement.
struct DeepRow {
    workload: &'static str,
    n: usize,
    /// Median wall time of `sclc check` (ms).
    ms: f64,
    /// Median peak RSS (MiB).
    rss: f64,
    verified: Result<(), String>,
}

impl DeepRow {
    fn us_per_env(&self) -> f64 {
        self.ms * 1000.0 / self.n as f64
    }
}

/// The deep-chain workloads: `sclc check` of one module holding an
/// `extends` chain of N envs (declared last to first), and of an import
/// chain of N modules, each extending the previous one's env. The time per
/// env should not grow with N (linear in total); `ir --env` of the last env
/// is verified.
fn deep_chains(
    tools: &Tools,
    sclc: &Path,
    work: &Path,
    ns: &[usize],
    runs: Option<usize>,
) -> Result<Vec<DeepRow>, String> {
    let mut rows = Vec::new();
    for &n in ns {
        // Five runs at every N: with three, one slow run on a shared
        // machine moved the median at N = 20000 by a third (twice in the
        // twelfth round's three bench runs).
        let runs = runs.unwrap_or(5);
        // One module, an extends chain.
        let dir = work.join(format!("deep/extends-N{n}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("chain.env.scl"), workload::deep_chain_source(n))
            .map_err(|e| e.to_string())?;
        settle_writes();
        let ir_cmd = Cmd {
            prog: sclc,
            args: vec![
                "ir".into(),
                "chain.env.scl".into(),
                "--env".into(),
                format!("e{}", n - 1),
            ],
            dir: &dir,
            cpu: None,
        };
        let verified = ir_cmd
            .output()
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
            .and_then(|v| workload::verify_deep_chain(&v, n));
        let check = Cmd {
            prog: sclc,
            args: vec!["check".into(), "chain.env.scl".into()],
            dir: &dir,
            cpu: None,
        };
        let ms = alternate_ms(&[&check], runs)?[0];
        let rss = peak_rss_mib(tools, &check)?;
        eprintln!("deep: {DEEP_EXTENDS}, N={n}: {ms:.1} ms, {rss:.1} MiB");
        rows.push(DeepRow {
            workload: DEEP_EXTENDS,
            n,
            ms,
            rss,
            verified,
        });
        // N modules, an import chain.
        let dir = work.join(format!("deep/imports-N{n}"));
        let top = workload::write_import_chain(&dir, n).map_err(|e| e.to_string())?;
        settle_writes();
        let top = top.file_name().unwrap().to_string_lossy().to_string();
        let ir_cmd = Cmd {
            prog: sclc,
            args: vec!["ir".into(), top.clone(), "--env".into(), "e".into()],
            dir: &dir,
            cpu: None,
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
            cpu: None,
        };
        let ms = alternate_ms(&[&check], runs)?[0];
        let rss = peak_rss_mib(tools, &check)?;
        eprintln!("deep: {DEEP_IMPORTS}, N={n}: {ms:.1} ms, {rss:.1} MiB");
        rows.push(DeepRow {
            workload: DEEP_IMPORTS,
            n,
            ms,
            rss,
            verified,
        });
    }
    Ok(rows)
}

/// One phase of a cold `sclc ir`, profiled by callgrind with collection
/// toggled on entry to (and off on exit from) its entry functions. Each
/// entry lists alternative symbol names (demangled, `*` a wildcard), the
/// first one the binary has being used.
struct PhaseSpec {
    name: &'static str,
    slug: &'static str,
    entries: &'static [&'static [&'static str]],
}

const PHASES: &[PhaseSpec] = &[
    PhaseSpec {
        name: "parsing",
        slug: "parse",
        entries: &[&["scl_db::Parsed::of"]],
    },
    PhaseSpec {
        name: "imports",
        slug: "imports",
        entries: &[&["scl_db::imports"]],
    },
    PhaseSpec {
        name: "static checks",
        slug: "static",
        entries: &[&["scl_db::static_diagnostics"]],
    },
    PhaseSpec {
        name: "evaluation",
        slug: "evaluation",
        entries: &[&["scl_db::module_values"], &["scl_db::decl_value"]],
    },
    PhaseSpec {
        name: "domain checks",
        slug: "domain",
        // The salsa query's accessor is inlined in release builds; its
        // computation is the configuration's `execute`.
        entries: &[&[
            "scl_db::checks::module_findings",
            "<scl_db::checks::_::module_findings_Configuration_ as salsa::function::Configuration>::execute",
        ]],
    },
    PhaseSpec {
        name: "output (IR serialization)",
        slug: "output",
        // `scl_ir::json::to_writer` is inlined into `sclc`'s `ir`
        // command; what it calls per env is the IR's `Serialize`.
        entries: &[&[
            "scl_ir::json::to_writer*",
            "serde_json::ser::to_writer_pretty*",
            "scl_ir::_::<impl serde_core::ser::Serialize for scl_ir::EnvSpec>::serialize",
            "scl_ir::_::<impl serde::ser::Serialize for scl_ir::EnvSpec>::serialize",
        ]],
    },
];

/// The instructions of one phase.
struct PhaseCost {
    name: &'static str,
    /// The symbols toggled, and the files written.
    entries: Vec<String>,
    files: Vec<String>,
    instr: Option<u64>,
    note: Option<String>,
}

/// What [`profile`] wrote.
enum Profile {
    Callgrind {
        dir: PathBuf,
        whole: u64,
        phases: Vec<PhaseCost>,
    },
    Perf {
        dir: PathBuf,
        /// The report's first symbols.
        top: Vec<String>,
    },
}

/// `*` matches any run of characters, `?` one; the rest literally.
fn glob_match(pat: &str, s: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pat.chars().collect(), s.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The demangled names of the binary's symbols (`nm -C`), if `nm` runs.
fn symbols(bin: &Path) -> Option<Vec<String>> {
    let out = Command::new("nm").arg("-C").arg(bin).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .filter_map(|l| {
                // `ADDRESS TYPE NAME` or (undefined) `TYPE NAME`.
                let l = l.trim_start();
                let (first, rest) = l.split_once(' ')?;
                if first.len() == 1 {
                    Some(rest.to_string())
                } else {
                    rest.split_once(' ').map(|(_, name)| name.to_string())
                }
            })
            .collect(),
    )
}

/// The instruction count of a callgrind output file (its `summary:` or
/// `totals:` line).
fn callgrind_total(file: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or(format!("{}: no summary line", file.display()))
}

/// Runs `profiler` (its arguments given) on `sclc ir top.env.scl` in `dir`;
/// on failure, the error names `what` with the last lines it printed.
fn under_profiler(
    mut profiler: Command,
    sclc: &Path,
    dir: &Path,
    what: &str,
) -> Result<(), String> {
    let o = profiler
        .arg(sclc)
        .args(["ir", "top.env.scl"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    let tail: Vec<&str> = err.lines().rev().take(5).collect();
    Err(format!(
        "{what} of sclc ir failed ({}): {}",
        o.status,
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    ))
}

/// One `sclc ir top.env.scl` in `dir` under callgrind, writing `out`;
/// with `toggles`, collection starts off and is toggled on entry to and
/// exit from each of them. Returns the instructions collected.
fn callgrind(
    valgrind: &Path,
    sclc: &Path,
    dir: &Path,
    out: &Path,
    toggles: &[&str],
) -> Result<u64, String> {
    let mut c = Command::new(valgrind);
    c.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()));
    if !toggles.is_empty() {
        c.arg("--collect-atstart=no");
        for t in toggles {
            c.arg(format!("--toggle-collect={t}"));
        }
    }
    under_profiler(c, sclc, dir, "callgrind")?;
    // A readable listing next to it (inclusive costs), when the script is there.
    if let Some(annotate) = on_path("callgrind_annotate") {
        if let Ok(f) = std::fs::File::create(out.with_extension("txt")) {
            let _ = Command::new(annotate)
                .arg("--inclusive=yes")
                .arg(out)
                .stdout(f)
                .stderr(Stdio::null())
                .status();
        }
    }
    callgrind_total(out)
}

/// Profiles of one `sclc ir top.env.scl` of the workload in `dir`, written
/// into `out`: with valgrind, a whole-run callgrind file and one per phase
/// ([`PHASES`]); else, if `perf` works, one `perf record -e cpu-clock -g`
/// and its `perf report --no-children --sort sym`. Never timed.
fn profile(
    valgrind: Option<&Path>,
    sclc: &Path,
    dir: &Path,
    out: &Path,
) -> Result<Profile, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let out = out.canonicalize().map_err(|e| e.to_string())?;
    let Some(valgrind) = valgrind else {
        return perf_profile(sclc, dir, &out);
    };
    eprintln!("  profile: callgrind, whole run");
    let whole = callgrind(valgrind, sclc, dir, &out.join("whole.out"), &[])?;
    let syms = symbols(sclc);
    let resolve = |alts: &[&str]| -> Option<String> {
        match &syms {
            None => alts.first().map(|s| s.to_string()),
            Some(syms) => alts
                .iter()
                .find(|a| syms.iter().any(|s| glob_match(a, s)))
                .map(|s| s.to_string()),
        }
    };
    let short = |sym: &str| -> String {
        let base = sym.rsplit("::").next().unwrap_or(sym);
        base.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    let mut phases = Vec::new();
    for ph in PHASES {
        eprintln!("  profile: callgrind, {}", ph.name);
        let (found, missing): (Vec<_>, Vec<_>) = ph
            .entries
            .iter()
            .map(|alts| (alts, resolve(alts)))
            .partition(|(_, r)| r.is_some());
        let entries: Vec<String> = found.into_iter().filter_map(|(_, r)| r).collect();
        let note = (!missing.is_empty()).then(|| {
            format!(
                "not in the binary: {}",
                missing
                    .iter()
                    .map(|(a, _)| a.join(" | "))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        let mut cost = PhaseCost {
            name: ph.name,
            entries: entries.clone(),
            files: Vec::new(),
            instr: None,
            note,
        };
        match entries.as_slice() {
            [] => {}
            [one] => {
                let f = format!("{}.out", ph.slug);
                cost.instr = Some(callgrind(valgrind, sclc, dir, &out.join(&f), &[one])?);
                cost.files.push(f);
            }
            [a, b] => {
                // Callgrind's toggles flip one collection state: with both
                // functions toggled, what runs under both (evaluation inside
                // `module_values` calling `decl_value`) is not collected. So
                // one run each, and one with both (collected: under exactly
                // one); under either = (A + B + A xor B) / 2.
                let fa = format!("{}-{}.out", ph.slug, short(a));
                let fb = format!("{}-{}.out", ph.slug, short(b));
                let fx = format!("{}-xor.out", ph.slug);
                let ia = callgrind(valgrind, sclc, dir, &out.join(&fa), &[a])?;
                let ib = callgrind(valgrind, sclc, dir, &out.join(&fb), &[b])?;
                let ix = callgrind(valgrind, sclc, dir, &out.join(&fx), &[a, b])?;
                cost.instr = Some((ia + ib + ix) / 2);
                cost.files.extend([fa, fb, fx]);
            }
            _ => return Err(format!("{}: at most two entry functions", ph.name)),
        }
        phases.push(cost);
    }
    Ok(Profile::Callgrind {
        dir: out,
        whole,
        phases,
    })
}

/// Without valgrind: `perf record -e cpu-clock -g` of one `sclc ir`, and
/// its report by symbol (`perf-report.txt`).
fn perf_profile(sclc: &Path, dir: &Path, out: &Path) -> Result<Profile, String> {
    let perf = on_path("perf").ok_or("neither valgrind nor perf is installed")?;
    eprintln!("  profile: perf record");
    let data = out.join("perf.data");
    let mut c = Command::new(&perf);
    c.args(["record", "-e", "cpu-clock", "-g", "-o"])
        .arg(&data)
        .arg("--");
    under_profiler(c, sclc, dir, "perf record")?;
    let rep = Command::new(&perf)
        .args(["report", "--no-children", "--sort", "sym", "--stdio", "-i"])
        .arg(&data)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("perf report: {e}"))?;
    if !rep.status.success() {
        return Err(format!("perf report failed ({})", rep.status));
    }
    std::fs::write(out.join("perf-report.txt"), &rep.stdout).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&rep.stdout);
    let top = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with('#')
                && t.split('%')
                    .next()
                    .is_some_and(|p| p.parse::<f64>().is_ok())
        })
        .take(15)
        .map(|l| l.trim().to_string())
        .collect();
    Ok(Profile::Perf {
        dir: out.to_path_buf(),
        top,
    })
}

fn print_profile(n: usize, p: &Profile) {
    println!();
    match p {
        Profile::Callgrind { dir, whole, phases } => {
            println!(
                "Profile of one `sclc ir top.env.scl` at N={n} (callgrind instructions; files in {}):",
                dir.display()
            );
            println!();
            println!("| phase | entry functions (--toggle-collect) | instructions | share of the whole run | file |");
            println!("|---|---|---:|---:|---|");
            println!(
                "| whole run | – | {:.1} M | 100.0 % | whole.out |",
                *whole as f64 / 1e6
            );
            for ph in phases {
                let entries = if ph.entries.is_empty() {
                    "–".to_string()
                } else {
                    ph.entries
                        .iter()
                        .map(|e| format!("`{e}`"))
                        .collect::<Vec<_>>()
                        .join(" + ")
                };
                let entries = match &ph.note {
                    Some(note) => format!("{entries} ({note})"),
                    None => entries,
                };
                println!(
                    "| {} | {} | {} | {} | {} |",
                    ph.name,
                    entries,
                    ph.instr
                        .map(|i| format!("{:.1} M", i as f64 / 1e6))
                        .unwrap_or("–".into()),
                    ph.instr
                        .map(|i| format!("{:.1} %", i as f64 * 100.0 / *whole as f64))
                        .unwrap_or("–".into()),
                    if ph.files.is_empty() {
                        "–".to_string()
                    } else {
                        ph.files.join(", ")
                    }
                );
            }
            let sum: u64 = phases.iter().filter_map(|p| p.instr).sum();
            println!();
            println!(
                "A phase counts everything that runs inside its entry functions, other phases' work they force included; the phases sum to {:.1} % of the whole run (what runs outside every entry function, such as start-up, reading the files, the workspace walk, salsa's bookkeeping and lowering the IR, is in none). Evaluation: under either function, (A + B + A xor B) / 2 of its three files.",
                sum as f64 * 100.0 / *whole as f64
            );
        }
        Profile::Perf { dir, top } => {
            println!(
                "Profile of one `sclc ir top.env.scl` at N={n} (perf record -e cpu-clock -g; {}/perf.data, report in perf-report.txt), first symbols:",
                dir.display()
            );
            println!();
            for l in top {
                println!("    {l}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPUs of `Cpus_allowed_list` in a `/proc/…/status` text.
    fn allowed_cpus(status: &str) -> Vec<usize> {
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("Cpus_allowed_list in the status")
            .trim();
        let mut out = Vec::new();
        for part in list.split(',') {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            out.extend(lo.parse::<usize>().unwrap()..=hi.parse::<usize>().unwrap());
        }
        out
    }

    /// A command given a CPU runs there only (the kernel's own account of
    /// the process, `Cpus_allowed_list`); one given none keeps the bench's
    /// CPUs; one given a CPU that does not exist fails to start (so the
    /// affinity is set, also on a machine of one CPU). The CPU the bench
    /// picks is the first of this thread's, and only when it has several.
    #[test]
    fn a_command_held_to_one_cpu_runs_only_there() {
        let mine = allowed_cpus(&std::fs::read_to_string("/proc/thread-self/status").unwrap());
        let picked = first_of_several_cpus();
        if mine.len() >= 2 && scl_db::cores() >= 2 {
            assert_eq!(picked, Some(mine[0]));
        } else {
            assert_eq!(picked, None);
        }
        let cat = Path::new("/bin/cat");
        let dir = Path::new("/");
        let run = |cpu: Option<usize>| {
            Cmd {
                prog: cat,
                args: vec!["/proc/self/status".into()],
                dir,
                cpu,
            }
            .output()
            .map(|out| allowed_cpus(&String::from_utf8_lossy(&out)))
        };
        assert_eq!(run(Some(mine[0])).unwrap(), vec![mine[0]]);
        assert_eq!(run(None).unwrap(), mine);
        let absent = libc::CPU_SETSIZE as usize - 1;
        assert!(!mine.contains(&absent));
        let e = run(Some(absent)).expect_err("no such CPU");
        assert!(e.contains("on CPU 1023 only"), "{e}");
    }

    /// A child that reads a file the kernel dropped from its page cache
    /// counts blocks read from the disk; reading it again (cached) counts
    /// none. Skipped where the file's pages stay cached after
    /// `POSIX_FADV_DONTNEED` (a tmpfs has no disk to read from).
    #[test]
    fn a_child_reading_from_the_disk_is_counted() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        // Beside the test binary: on the disk of the build (a temp folder
        // may be a tmpfs).
        let exe = std::env::current_exe().unwrap();
        let path = exe.with_file_name(format!("bench-inblock-test-{}", std::process::id()));
        const LEN: usize = 1 << 20;
        // Readable too: `resident` maps it.
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(&vec![b'x'; LEN]).unwrap();
        f.sync_all().unwrap();
        // SAFETY: a valid open descriptor; the call only advises the kernel.
        let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(r, 0, "posix_fadvise");
        // Which of the file's pages are in the page cache (`mincore(2)` of
        // a shared mapping of it).
        let resident = || -> usize {
            let page = 4096;
            let mut vec = vec![0u8; LEN.div_ceil(page)];
            // SAFETY: a read-only shared mapping of an open file of LEN
            // bytes, unmapped before returning; `vec` has a byte per page.
            unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    LEN,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED);
                assert_eq!(libc::mincore(p, LEN, vec.as_mut_ptr()), 0);
                libc::munmap(p, LEN);
            }
            vec.iter().filter(|b| **b & 1 == 1).count()
        };
        if resident() > 0 {
            eprintln!("skipped: the file's pages stay cached after POSIX_FADV_DONTNEED here");
            let _ = std::fs::remove_file(&path);
            return;
        }
        let cat = |what: &str| {
            let child = Command::new("/bin/cat")
                .arg(&path)
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            let (code, ru) = wait_rusage(child).unwrap();
            let read = ru.ru_inblock.max(0) as u64;
            assert_eq!(code, Some(0));
            eprintln!("{what}: {read} blocks");
            read
        };
        assert!(
            cat("dropped") >= (LEN / 512) as u64 / 2,
            "a dropped file is read from the disk"
        );
        assert_eq!(resident(), LEN / 4096, "cat brought every page back");
        assert_eq!(cat("cached"), 0, "a cached file is not");
        let _ = std::fs::remove_file(&path);
    }

    /// Without GNU time, the peak RSS comes from the run's own `rusage`,
    /// in KiB: a process that touches 64 MiB reports at least that, and
    /// `true` far less.
    #[test]
    fn the_peak_rss_of_a_run_is_its_own() {
        let dir = Path::new("/");
        let sh = Path::new("/bin/sh");
        let cmd = |script: &str| Cmd {
            prog: sh,
            args: vec!["-c".into(), script.into()],
            dir,
            cpu: None,
        };
        let big = rusage_kib(&cmd(
            "exec python3 -c 'b = bytearray(64 << 20); b[::4096] = b\"x\" * len(b[::4096])'",
        ))
        .unwrap();
        let small = rusage_kib(&cmd("exec true")).unwrap();
        assert!(big >= 64.0 * 1024.0, "{big} KiB");
        assert!(small < 16.0 * 1024.0, "{small} KiB");
        assert!(rusage_kib(&cmd("exit 3")).is_err());
    }

    /// Every default run count is odd (the median is one run, not the
    /// mean of two) and larger workloads never get more runs.
    #[test]
    fn default_runs_are_odd_and_do_not_grow_with_n() {
        let ns = [1, 100, 1000, 4999, 5000, 9999, 10_000, 20_000, 100_000];
        for n in ns {
            assert_eq!(default_runs(n) % 2, 1, "N = {n}");
        }
        for w in ns.windows(2) {
            assert!(default_runs(w[1]) <= default_runs(w[0]), "{w:?}");
        }
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    }
}
