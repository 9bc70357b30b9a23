//! `scl-fuzz`: the supervisor and worker of the fuzz harness (see the
//! library doc and `fuzz/README.md`).
//!
//! ```text
//! scl-fuzz [--seed N] [--time SECS] [--cases N] [--start I] [--jobs J]
//!          [--out DIR] [--shrink-time SECS] [--scale F] [--repo DIR]
//!     Runs cases start, start+1, … of seed N (default: random, printed;
//!     or $SCL_FUZZ_SEED) for SECS seconds (default 60) or N cases, in J
//!     worker processes (default 2), then minimizes each distinct failure
//!     for at most SECS seconds in all (default 60), runs
//!     scripts/parse-dockerfiles.py over the Dockerfiles it collected, and
//!     prints a summary. Exit 0: no failure; 1: failures (saved under
//!     DIR/failures, default target/scl-fuzz); 2: usage.
//! scl-fuzz case --seed N --index I [--out DIR]
//!     Writes case I of seed N to DIR (a workspace: `sclc check DIR/…`
//!     reproduces it with the CLI) and runs it in a worker.
//! scl-fuzz one FILE
//!     Runs the oracle on FILE (its folder is the workspace) in this
//!     process: prints `ok …` (exit 0) or `fail KIND DETAIL` (exit 1); a
//!     stack overflow or the memory limit ends the process.
//! ```
//! `scl-fuzz worker` is the internal worker: it reads case indexes on
//! stdin and answers `start I LABEL SIZE`, then `ok I MS PEAK` or
//! `fail I KIND DETAIL`, on stdout.

use scl_fuzz::alloc::{self, Counting};
use scl_fuzz::case::Case;
use scl_fuzz::oracle::{self, Failure, Kind, Limits};
use scl_fuzz::{mutate, SCHEDULED};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: Counting<mimalloc::MiMalloc> = Counting(mimalloc::MiMalloc);

/// Debug builds run ~10× slower: their time budgets are scaled.
const DEBUG_SCALE: f64 = if cfg!(debug_assertions) { 10.0 } else { 1.0 };

/// The hard memory limit (the worker aborts past it), as a multiple of a
/// case's budget.
const HARD_MEMORY_FACTOR: usize = 4;

#[derive(Clone, Debug)]
struct Opts {
    seed: u64,
    time: Duration,
    cases: u64,
    start: u64,
    jobs: usize,
    out: PathBuf,
    shrink_time: Duration,
    scale: f64,
    repo: PathBuf,
    index: u64,
    collect: Option<PathBuf>,
}

fn repo_default() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

fn random_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (t ^ (u64::from(std::process::id()) << 32)) % 1_000_000_000
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        seed: match std::env::var("SCL_FUZZ_SEED") {
            Ok(s) => s
                .parse()
                .map_err(|_| format!("SCL_FUZZ_SEED={s} is not a number"))?,
            Err(_) => random_seed(),
        },
        time: Duration::from_secs(60),
        cases: u64::MAX,
        start: 0,
        jobs: 2,
        out: repo_default().join("target/scl-fuzz"),
        shrink_time: Duration::from_secs(60),
        scale: 1.0,
        repo: repo_default(),
        index: 0,
        collect: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        let num = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{a} {v}: not a number"))
        };
        match a.as_str() {
            "--seed" => o.seed = num(val()?)?,
            "--time" => o.time = Duration::from_secs(num(val()?)?),
            "--cases" => o.cases = num(val()?)?,
            "--start" => o.start = num(val()?)?,
            "--index" => o.index = num(val()?)?,
            "--jobs" => o.jobs = num(val()?)?.max(1) as usize,
            "--out" => o.out = PathBuf::from(val()?),
            "--collect" => o.collect = Some(PathBuf::from(val()?)),
            "--shrink-time" => o.shrink_time = Duration::from_secs(num(val()?)?),
            "--scale" => {
                let v = val()?;
                o.scale = v
                    .parse()
                    .map_err(|_| format!("--scale {v}: not a number"))?
            }
            "--repo" => o.repo = PathBuf::from(val()?),
            _ => {
                return Err(format!(
                    "unknown argument `{a}` (see the doc of crates/scl-fuzz/src/main.rs)"
                ))
            }
        }
    }
    Ok(o)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.first().map(String::as_str) {
        Some(c @ ("worker" | "one" | "case")) => (c.to_string(), &args[1..]),
        _ => ("run".to_string(), &args[..]),
    };
    let code = match cmd.as_str() {
        "one" => match rest {
            [file] => one(Path::new(file)),
            _ => usage("scl-fuzz one FILE"),
        },
        _ => match parse(rest) {
            Err(e) => usage(&e),
            Ok(o) => match cmd.as_str() {
                "worker" => worker(&o),
                "case" => case_cmd(&o),
                _ => run(&o),
            },
        },
    };
    std::process::exit(code);
}

fn usage(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
}

fn limits(case: &Case, scale: f64) -> Limits {
    Limits::for_size(case.size(), scale * DEBUG_SCALE)
}

/// Runs the oracle on one case in this process, with the hard memory limit.
fn run_here(case: &Case, scale: f64) -> Result<oracle::Report, Failure> {
    let l = limits(case, scale);
    alloc::set_limit(alloc::current() + l.memory.saturating_mul(HARD_MEMORY_FACTOR));
    if let Some(f) = self_test(case) {
        return f;
    }
    let r = oracle::run(case, l);
    alloc::set_limit(usize::MAX);
    r
}

/// Debug builds only: a main file that starts with
/// `//! scl-fuzz self-test: WHAT` misbehaves on purpose (`panic`,
/// `overflow`, `abort`, `memory`, `sleep`, `fail`), so the tests can check
/// that the supervisor sees each kind of failure.
fn self_test(case: &Case) -> Option<Result<oracle::Report, Failure>> {
    if !cfg!(debug_assertions) {
        return None;
    }
    let text = std::str::from_utf8(case.main_text()).ok()?;
    let what = text
        .strip_prefix("//! scl-fuzz self-test: ")?
        .lines()
        .next()?
        .trim();
    fn deep(n: u64) -> u64 {
        let pad = std::hint::black_box([n; 64]);
        if n == 0 {
            0
        } else {
            deep(n - 1) + pad[3]
        }
    }
    match what {
        "panic" => Some(
            std::panic::catch_unwind(|| -> Result<oracle::Report, Failure> {
                panic!("self-test panic")
            })
            .unwrap_or_else(|_| {
                Err(Failure {
                    kind: Kind::Panic,
                    detail: "self-test panic".into(),
                })
            }),
        ),
        "overflow" => Some(scl_ide::with_compiler_stack(|| {
            std::hint::black_box(deep(u64::MAX));
            Ok(oracle::Report::default())
        })),
        "abort" => std::process::abort(),
        "memory" => {
            // Reserved, not touched: counted without paging in.
            let v: Vec<Vec<u8>> = (0..1 << 10).map(|_| Vec::with_capacity(1 << 30)).collect();
            std::hint::black_box(v);
            None
        }
        "sleep" => {
            std::thread::sleep(Duration::from_secs(3600));
            None
        }
        "fail" => Some(Err(Failure {
            kind: Kind::BadArtifact,
            detail: "self-test failure".into(),
        })),
        _ => None,
    }
}

fn one_line(s: &str) -> String {
    let s: String = s.chars().take(400).collect();
    s.replace(['\n', '\r'], " ")
}

fn one(file: &Path) -> i32 {
    scl_fuzz::install_panic_hook();
    let Some(dir) = file.parent() else {
        return usage("FILE has no folder");
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let main = file.file_name().unwrap().to_string_lossy().to_string();
    let case = match Case::read_from(dir, &main, "one") {
        Ok(c) => c,
        Err(e) => return usage(&format!("cannot read {}: {e}", dir.display())),
    };
    let case = Case {
        files: case
            .files
            .into_iter()
            .filter(|(p, _)| p != "scl.toml")
            .collect(),
        ..case
    };
    match run_here(&case, 1.0) {
        Ok(r) => {
            println!(
                "ok {} ms, {} MiB peak, {} envs built, {} errors",
                r.time.as_millis(),
                r.peak >> 20,
                r.envs,
                r.errors
            );
            0
        }
        Err(f) => {
            println!("fail {} {}", f.kind.name(), one_line(&f.detail));
            1
        }
    }
}

fn strategy(repo: &Path) -> proptest::strategy::BoxedStrategy<Case> {
    scl_fuzz::strategy(Arc::new(mutate::Corpus::load(repo)))
}

fn worker(o: &Opts) -> i32 {
    scl_fuzz::install_panic_hook();
    let strat = strategy(&o.repo);
    let mut collected = 0usize;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(i) = line.trim().parse::<u64>() else {
            continue;
        };
        let case = scl_fuzz::case_at(&strat, o.seed, i);
        let _ = writeln!(
            out,
            "start {i} {} {}",
            case.label.replace(' ', "_"),
            case.size()
        );
        let _ = out.flush();
        let reply = match run_here(&case, o.scale) {
            Ok(r) => {
                if let Some(dir) = &o.collect {
                    for (k, (_, text)) in r.dockerfiles.iter().enumerate() {
                        if collected < 3000 && text.len() < 64 << 10 {
                            let _ = std::fs::create_dir_all(dir);
                            let _ = std::fs::write(dir.join(format!("{i}-{k}.Dockerfile")), text);
                            collected += 1;
                        }
                    }
                }
                format!("ok {i} {} {}", r.time.as_millis(), r.peak)
            }
            Err(f) => format!("fail {i} {} {}", f.kind.name(), one_line(&f.detail)),
        };
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
    0
}

/// How a worker process ended, from its exit status and stderr.
fn classify_exit(status: Option<std::process::ExitStatus>, stderr: &str) -> Failure {
    let kind = if stderr.contains("has overflowed its stack") {
        Kind::StackOverflow
    } else if stderr.contains(alloc::LIMIT_MESSAGE) {
        Kind::Memory
    } else if stderr.contains("panicked") {
        Kind::Panic
    } else {
        Kind::Crash
    };
    let last: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = last[last.len().saturating_sub(2)..].join(" | ");
    Failure {
        kind,
        detail: format!(
            "the worker died ({}): {}",
            status.map_or("no status".into(), |s| s.to_string()),
            one_line(&tail)
        ),
    }
}

/// A failed case.
#[derive(Clone, Debug)]
struct Found {
    index: u64,
    label: String,
    size: usize,
    failure: Failure,
}

impl Found {
    /// What makes two failures the same: the kind, where the case came from
    /// (the shape, or the generator) and the detail without numbers.
    fn signature(&self) -> String {
        let origin = match self.label.split(':').collect::<Vec<_>>().as_slice() {
            ["hostile", shape, ..] => format!("hostile:{shape}"),
            [first, ..] => first.to_string(),
            [] => String::new(),
        };
        let class = class(&self.failure.detail);
        format!("{} {origin} {class}", self.failure.kind.name())
    }
}

/// The class of a failure's detail: without the env folder (`e0/`), file
/// names, numbers, and everything from the first quoted value on.
fn class(detail: &str) -> String {
    let d = match detail.split_once(": ") {
        Some((head, rest)) if head.contains('/') => rest,
        _ => detail,
    };
    let d = d.split(['[', '"', '(', '`']).next().unwrap_or("");
    d.split_whitespace()
        .filter(|w| {
            !w.contains(".env.scl") && !w.contains('\'') && !w.chars().any(|c| c.is_ascii_digit())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One worker process and the lines it prints.
struct Worker {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: PathBuf,
}

fn spawn_worker(o: &Opts, slot: usize, collect: &Path) -> std::io::Result<Worker> {
    let stderr = o.out.join(format!("worker-{slot}.stderr"));
    let mut child = Command::new(std::env::current_exe()?)
        .arg("worker")
        .args([
            "--seed",
            &o.seed.to_string(),
            "--scale",
            &o.scale.to_string(),
        ])
        .arg("--repo")
        .arg(&o.repo)
        .arg("--collect")
        .arg(collect.join(format!("w{slot}-{}", random_seed())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr)?)
        .spawn()?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok(Worker {
        child,
        stdin,
        lines: rx,
        stderr,
    })
}

/// What happened to one case in a worker.
enum Outcome {
    /// Passed; the case's label.
    Ok(String),
    Failed(Found),
    /// The run's own deadline ended the case (not a failure).
    Unfinished,
}

/// Runs case `i` in `w` (spawning a new worker when needed).
fn run_in_worker(
    o: &Opts,
    w: &mut Option<Worker>,
    slot: usize,
    collect: &Path,
    i: u64,
    deadline: Instant,
) -> Outcome {
    if w.is_none() {
        match spawn_worker(o, slot, collect) {
            Ok(x) => *w = Some(x),
            Err(e) => {
                eprintln!("error: cannot start a worker: {e}");
                return Outcome::Unfinished;
            }
        }
    }
    let wk = w.as_mut().expect("spawned");
    if writeln!(wk.stdin, "{i}")
        .and_then(|_| wk.stdin.flush())
        .is_err()
    {
        *w = None;
        return Outcome::Unfinished;
    }
    let mut label = String::from("?");
    let mut size = 0usize;
    let mut hard = Duration::from_secs(30);
    let mut started = Instant::now();
    loop {
        let grace = deadline + Duration::from_secs(15);
        let wait = (started + hard)
            .min(grace)
            .saturating_duration_since(Instant::now());
        match wk.lines.recv_timeout(wait) {
            Ok(line) => {
                let parts: Vec<&str> = line.splitn(5, ' ').collect();
                match parts.as_slice() {
                    ["start", _, l, s] => {
                        label = l.to_string();
                        size = s.parse().unwrap_or(0);
                        let l = Limits::for_size(size, o.scale * DEBUG_SCALE);
                        hard = l.time * 2 + Duration::from_secs(5);
                        started = Instant::now();
                    }
                    ["ok", ..] => return Outcome::Ok(label),
                    ["fail", _, kind, rest @ ..] => {
                        let failure = Failure {
                            kind: Kind::parse(kind).unwrap_or(Kind::Crash),
                            detail: rest.join(" "),
                        };
                        return Outcome::Failed(Found {
                            index: i,
                            label,
                            size,
                            failure,
                        });
                    }
                    _ => {}
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let mut dead = w.take().expect("running");
                let _ = dead.child.kill();
                let _ = dead.child.wait();
                if Instant::now() >= grace && started.elapsed() < hard {
                    return Outcome::Unfinished;
                }
                let failure = Failure {
                    kind: Kind::Timeout,
                    detail: format!("no result after {:.0} s (killed)", hard.as_secs_f64()),
                };
                return Outcome::Failed(Found {
                    index: i,
                    label,
                    size,
                    failure,
                });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let mut dead = w.take().expect("running");
                let status = dead.child.wait().ok();
                let err = std::fs::read_to_string(&dead.stderr).unwrap_or_default();
                let failure = classify_exit(status, &err);
                return Outcome::Failed(Found {
                    index: i,
                    label,
                    size,
                    failure,
                });
            }
        }
    }
}

/// Runs one case in a fresh `scl-fuzz one` process, with its hard time
/// limit: `Ok(())` when it passes, else how it failed.
fn run_isolated(o: &Opts, case: &Case, dir: &Path) -> Result<(), Failure> {
    let _ = std::fs::remove_dir_all(dir);
    let main = case.write_to(dir).map_err(|e| Failure {
        kind: Kind::Crash,
        detail: e.to_string(),
    })?;
    let err_path = dir.with_extension("stderr");
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .arg("one")
        .arg(&main)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("spawn scl-fuzz one");
    let hard = limits(case, o.scale).time * 2 + Duration::from_secs(5);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > hard {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure {
                kind: Kind::Timeout,
                detail: format!("no result after {:.0} s", hard.as_secs_f64()),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stdout = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stdout.take().expect("piped"), &mut stdout);
    match status.code() {
        Some(0) => Ok(()),
        Some(1) => {
            let l = stdout
                .lines()
                .find(|l| l.starts_with("fail "))
                .unwrap_or("fail crash ?");
            let mut p = l.splitn(3, ' ').skip(1);
            let kind = Kind::parse(p.next().unwrap_or("")).unwrap_or(Kind::Crash);
            Err(Failure {
                kind,
                detail: p.next().unwrap_or("").to_string(),
            })
        }
        _ => Err(classify_exit(
            Some(status),
            &std::fs::read_to_string(&err_path).unwrap_or_default(),
        )),
    }
}

/// Minimizes a failure within `budget`: a hostile shape by bisecting its
/// size, anything else with proptest's shrinking of its value tree; a
/// candidate counts when it fails with the same kind. Returns the smallest
/// failing case found (or the original).
fn shrink(
    o: &Opts,
    strat: &proptest::strategy::BoxedStrategy<Case>,
    f: &Found,
    original: &Case,
    budget: Duration,
    scratch: &Path,
) -> (Case, usize) {
    let start = Instant::now();
    // The same failure: the same kind and the same class of detail (a
    // time-out or a dead worker has no useful detail).
    let want = class(&f.failure.detail);
    let by_detail = !matches!(
        f.failure.kind,
        Kind::Timeout | Kind::StackOverflow | Kind::Crash | Kind::Memory | Kind::Slow
    );
    let same = |c: &Case| matches!(run_isolated(o, c, scratch), Err(x) if x.kind == f.failure.kind && (!by_detail || class(&x.detail) == want));
    let mut best = original.clone();
    let mut tries = 0usize;
    if let Some(rest) = f.label.strip_prefix("hostile:") {
        let mut parts = rest.split(':');
        let name = parts.next().unwrap_or("");
        let n: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
        let Some(shape) = scl_fuzz::hostile::SHAPES
            .iter()
            .position(|s| s.name == name)
        else {
            return (best, 0);
        };
        let (mut lo, mut hi) = (0usize, n);
        while hi - lo > (hi / 50).max(1) && start.elapsed() < budget {
            let mid = lo + (hi - lo) / 2;
            let c = scl_fuzz::hostile::case(shape, mid);
            tries += 1;
            if same(&c) {
                hi = mid;
                best = c;
            } else {
                lo = mid;
            }
        }
        return (best, tries);
    }
    if f.index < SCHEDULED {
        return (best, 0);
    }
    let mut tree = scl_fuzz::case_tree(strat, o.seed, f.index);
    if !tree.simplify() {
        return (best, 0);
    }
    while start.elapsed() < budget && tries < 2000 {
        let c = tree.current();
        tries += 1;
        if same(&c) {
            // proptest's "simpler" is not always smaller: keep the smallest.
            if c.size() <= best.size() {
                best = c;
            }
            if !tree.simplify() {
                break;
            }
        } else if !tree.complicate() {
            break;
        }
    }
    (best, tries)
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect()
}

/// Saves a failing case and its README; returns the folder.
fn save(o: &Opts, n: usize, f: &Found, case: &Case, minimized: Option<&Case>) -> PathBuf {
    let dir = o.out.join("failures").join(format!(
        "{n:02}-{}-{}",
        f.failure.kind.name(),
        slug(&f.label)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = case.write_to(&dir.join("case"));
    let mut readme = format!(
        "kind: {}\ndetail: {}\nseed: {}\nindex: {}\nlabel: {}\nsize: {} bytes\n\nreproduce:\n  cargo run --release -p scl-fuzz -- case --seed {} --index {}\n  cargo run --release -p scl-fuzz -- one {}\n  sclc check {}\n",
        f.failure.kind.name(),
        f.failure.detail,
        o.seed,
        f.index,
        f.label,
        f.size,
        o.seed,
        f.index,
        dir.join("case").join(&case.main).display(),
        dir.join("case").join(&case.main).display(),
    );
    if let Some(m) = minimized {
        let _ = m.write_to(&dir.join("min"));
        readme.push_str(&format!(
            "\nminimized ({} bytes, label {}):\n  cargo run --release -p scl-fuzz -- one {}\n",
            m.size(),
            m.label,
            dir.join("min").join(&m.main).display()
        ));
        if m.size() <= 2000 {
            readme.push_str("\n--- minimized main file (control characters as \\u{…}) ---\n");
            // Control characters but line feed and tab as \u{…}.
            let text: String = String::from_utf8_lossy(m.main_text())
                .chars()
                .map(|c| {
                    if c.is_control() && c != '\n' && c != '\t' {
                        c.escape_unicode().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            readme.push_str(&text);
        }
    }
    let _ = std::fs::write(dir.join("README.txt"), readme);
    dir
}

fn run(o: &Opts) -> i32 {
    let t0 = Instant::now();
    let _ = std::fs::remove_dir_all(o.out.join("failures"));
    let collect = o.out.join("dockerfiles");
    let _ = std::fs::remove_dir_all(&collect);
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        return usage(&format!("cannot create {}: {e}", o.out.display()));
    }
    println!(
        "scl-fuzz: seed {} (reproduce a case: scl-fuzz case --seed {} --index I), {} s, {} jobs, corpus from {}",
        o.seed,
        o.seed,
        o.time.as_secs(),
        o.jobs,
        o.repo.display()
    );
    let deadline = t0 + o.time;
    let next = Arc::new(AtomicU64::new(o.start));
    let found: Arc<Mutex<Vec<Found>>> = Arc::default();
    let stats: Arc<Mutex<BTreeMap<String, (u64, u64)>>> = Arc::default();
    std::thread::scope(|s| {
        for slot in 0..o.jobs {
            let (next, found, stats, collect) =
                (next.clone(), found.clone(), stats.clone(), &collect);
            s.spawn(move || {
                let mut w: Option<Worker> = None;
                loop {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= o.start.saturating_add(o.cases) {
                        break;
                    }
                    let out = run_in_worker(o, &mut w, slot, collect, i, deadline);
                    let origin = |label: &str| label.split(':').next().unwrap_or("").to_string();
                    match out {
                        Outcome::Ok(label) => {
                            stats.lock().unwrap().entry(origin(&label)).or_default().0 += 1;
                        }
                        Outcome::Unfinished => continue,
                        Outcome::Failed(f) => {
                            println!(
                                "FAIL case {} ({}, {} bytes): {}: {}",
                                f.index,
                                f.label,
                                f.size,
                                f.failure.kind.name(),
                                f.failure.detail
                            );
                            let key = origin(&f.label);
                            stats.lock().unwrap().entry(key).or_default().1 += 1;
                            found.lock().unwrap().push(f);
                        }
                    }
                }
                if let Some(mut w) = w {
                    drop(w.stdin);
                    let _ = w.child.wait();
                }
            });
        }
    });
    let fuzz_time = t0.elapsed();
    let ran = next
        .load(Ordering::SeqCst)
        .min(o.start.saturating_add(o.cases))
        - o.start;

    // Minimize each distinct failure.
    let strat = strategy(&o.repo);
    let mut found = found.lock().unwrap().clone();
    found.sort_by_key(|f| f.index);
    let mut distinct: Vec<(Found, usize)> = Vec::new();
    for f in found.iter() {
        match distinct
            .iter_mut()
            .find(|(d, _)| d.signature() == f.signature())
        {
            Some((_, n)) => *n += 1,
            None => distinct.push((f.clone(), 1)),
        }
    }
    let shrink_start = Instant::now();
    let scratch = o.out.join("shrink");
    let mut report = Vec::new();
    for (n, (f, times)) in distinct.iter().enumerate() {
        let original = scl_fuzz::case_at(&strat, o.seed, f.index);
        let left = o.shrink_time.saturating_sub(shrink_start.elapsed());
        let per = left / (distinct.len() - n) as u32;
        let (min, tries) = if per > Duration::from_millis(500) {
            shrink(o, &strat, f, &original, per, &scratch)
        } else {
            (original.clone(), 0)
        };
        let min = (min != original).then_some(min);
        let dir = save(o, n + 1, f, &original, min.as_ref());
        report.push(format!(
            "{:>3}. {} ×{times}: {} ({}, case {}, {} bytes{}): {}\n     saved in {}",
            n + 1,
            f.failure.kind.name(),
            f.label,
            if f.index < SCHEDULED {
                "scheduled"
            } else {
                "random"
            },
            f.index,
            f.size,
            match &min {
                Some(m) => format!(", minimized to {} bytes in {tries} runs", m.size()),
                None => String::new(),
            },
            f.failure.detail,
            dir.display()
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);

    // The Dockerfile parser over everything collected.
    let dockerfiles = collect_files(&collect);
    let script = o.repo.join("scripts/parse-dockerfiles.py");
    let mut parse_failed = false;
    if dockerfiles.is_empty() {
        println!("dockerfiles: none generated");
    } else if script.is_file() {
        let venv = o.repo.join(".venv/bin/python");
        let python = if venv.is_file() {
            venv
        } else {
            PathBuf::from("python3")
        };
        let mut bad = Vec::new();
        for chunk in dockerfiles.chunks(500) {
            match Command::new(&python).arg(&script).args(chunk).output() {
                Ok(r) if r.status.success() => {}
                Ok(r) => bad.push(format!(
                    "{}{}",
                    String::from_utf8_lossy(&r.stdout),
                    String::from_utf8_lossy(&r.stderr)
                )),
                Err(e) => bad.push(format!("cannot run {}: {e}", python.display())),
            }
        }
        parse_failed = !bad.is_empty();
        println!(
            "dockerfiles: {} parsed with {} — {}",
            dockerfiles.len(),
            script.display(),
            if bad.is_empty() {
                "all fine".to_string()
            } else {
                format!("FAILED:\n{}", bad.join("\n"))
            }
        );
    } else {
        println!(
            "dockerfiles: {} collected in {}; not parsed: {} is not there yet",
            dockerfiles.len(),
            collect.display(),
            script.display()
        );
    }

    let stats = stats.lock().unwrap();
    let per: Vec<String> = stats
        .iter()
        .map(|(k, (ok, bad))| format!("{k} {} ({bad} failed)", ok + bad))
        .collect();
    println!(
        "scl-fuzz: seed {}: {ran} cases in {:.1} s ({}), {} failures ({} distinct), minimized in {:.1} s; total {:.1} s",
        o.seed,
        fuzz_time.as_secs_f64(),
        per.join(", "),
        found.len(),
        distinct.len(),
        shrink_start.elapsed().as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    for r in &report {
        println!("{r}");
    }
    if found.is_empty() && !parse_failed {
        0
    } else {
        1
    }
}

fn collect_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(collect_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn case_cmd(o: &Opts) -> i32 {
    let strat = strategy(&o.repo);
    let case = scl_fuzz::case_at(&strat, o.seed, o.index);
    let dir = o.out.join(format!("case-{}-{}", o.seed, o.index));
    let _ = std::fs::remove_dir_all(&dir);
    let main = match case.write_to(&dir) {
        Ok(m) => m,
        Err(e) => return usage(&format!("cannot write {}: {e}", dir.display())),
    };
    println!(
        "case {} of seed {}: {} ({} bytes), written to {}",
        o.index,
        o.seed,
        case.label,
        case.size(),
        main.display()
    );
    let scratch = o.out.join(format!("case-{}-{}.run", o.seed, o.index));
    let r = run_isolated(o, &case, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_file(scratch.with_extension("stderr"));
    match r {
        Ok(()) => {
            println!("ok");
            0
        }
        Err(f) => {
            println!("fail {} {}", f.kind.name(), f.detail);
            1
        }
    }
}
