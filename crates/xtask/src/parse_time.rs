//! `xtask parse-time`: the parser's speed against an older commit's, as a
//! ratio measured in one run that alternates the two.
//!
//! Both sides are the same program, `crates/scl-syntax/examples/parse_time.rs`
//! (lex + parse, trivia included, of every file of the shared workload held in
//! memory; best of `--rounds` passes), built from this checkout and from
//! `--baseline` (default `a2b02ad`, the parser before issue 6) in a detached
//! worktree under `target/parse-baseline/`. The two processes then run
//! alternately `--runs` times each; the report gives each side's median and
//! the ratio of the medians (baseline / current: above 1 is faster now).

use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = "crates/scl-syntax/examples/parse_time.rs";

struct Opts {
    baseline: String,
    n: usize,
    rounds: usize,
    runs: usize,
}

fn opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        baseline: "a2b02ad".into(),
        n: 1000,
        rounds: 10,
        runs: 7,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--baseline" => o.baseline = val()?,
            "--n" => o.n = val()?.parse().map_err(|e| format!("--n: {e}"))?,
            "--rounds" => o.rounds = val()?.parse().map_err(|e| format!("--rounds: {e}"))?,
            "--runs" => o.runs = val()?.parse().map_err(|e| format!("--runs: {e}"))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds the example in `dir` (a checkout) with `target` as the target folder.
fn build(dir: &Path, target: &Path) -> Result<PathBuf, String> {
    run(Command::new("cargo")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "scl-syntax",
            "--example",
            "parse_time",
        ]))?;
    Ok(target.join("release/examples/parse_time"))
}

/// `(parse_ms, files)` of one run of the example.
fn measure(exe: &Path, dir: &Path, rounds: usize) -> Result<(f64, usize), String> {
    let out = run(Command::new(exe).arg(dir).arg(rounds.to_string()))?;
    let field = |k: &str| {
        out.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .map(str::to_string)
            .ok_or(format!("{}: no {k} in {out:?}", exe.display()))
    };
    let ms = field("parse_ms=")?
        .parse()
        .map_err(|e| format!("parse_ms: {e}"))?;
    let files = field("files=")?
        .parse()
        .map_err(|e| format!("files: {e}"))?;
    Ok((ms, files))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn main(args: &[String]) -> i32 {
    match go(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}\nusage: xtask parse-time [--baseline COMMIT] [--n N] [--rounds R] [--runs K]");
            1
        }
    }
}

fn go(args: &[String]) -> Result<(), String> {
    let o = opts(args)?;
    let root = root();
    let work = root.join("target/parse-baseline");
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let wl = work.join(format!("workload-N{}", o.n));
    if !wl.exists() {
        crate::workload::write(&wl, o.n, crate::workload::Topology::Chain)
            .map_err(|e| e.to_string())?;
    }
    // The baseline: a detached worktree at the commit, with today's example.
    let base = work.join(&o.baseline);
    if !base.exists() {
        run(Command::new("git")
            .current_dir(&root)
            .args(["worktree", "add", "--detach", "-f"])
            .arg(&base)
            .arg(&o.baseline))?;
    }
    let dst = base.join(EXAMPLE);
    std::fs::create_dir_all(dst.parent().unwrap()).map_err(|e| e.to_string())?;
    std::fs::copy(root.join(EXAMPLE), &dst).map_err(|e| e.to_string())?;
    eprintln!("building the parser at {} and at this checkout", o.baseline);
    let old = build(&base, &work.join("target"))?;
    let new = build(&root, &root.join("target"))?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut files = 0;
    for i in 0..o.runs {
        // Alternate which side goes first.
        let (first, second) = if i % 2 == 0 {
            (&old, &new)
        } else {
            (&new, &old)
        };
        let x = measure(first, &wl, o.rounds)?;
        let y = measure(second, &wl, o.rounds)?;
        let (xo, yn) = if i % 2 == 0 { (x, y) } else { (y, x) };
        if xo.1 != yn.1 {
            return Err(format!("the two sides read {} and {} files", xo.1, yn.1));
        }
        files = xo.1;
        a.push(xo.0);
        b.push(yn.0);
    }
    let (ma, mb) = (median(&mut a), median(&mut b));
    println!(
        "| N | files | {} lex+parse (median of {} runs, best of {} passes) | now | {} / now |",
        o.baseline, o.runs, o.rounds, o.baseline
    );
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {} | {ma:.2} ms | {mb:.2} ms | {:.2}x |",
        o.n,
        files,
        ma / mb
    );
    println!("runs: {} {a:.2?}; now {b:.2?}", o.baseline);
    Ok(())
}
