//! `sclc build` outputs are atomic under kill (crates/sclc/src/output.rs):
//! after the process stops at any moment, every env folder under `--out` is
//! wholly its old or wholly its new version, and the next build recovers or
//! removes what the stopped one left — never a folder sclc did not write,
//! never one a concurrent build is using.
//!
//! Deterministic: the debug build's failpoint (`SCLC_FAILPOINT=N`) aborts
//! after each step of the write in turn, with the atomic exchange and with
//! the two-rename fallback. Random: a kill loop sends SIGKILL while a
//! many-env build writes.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A file with `n` envs `e0…`; `version` shows in every artifact of every env.
fn many_envs(n: usize, version: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "env e{i} {{\n  base = image(\"debian:12.5\")\n  labels {{ version = \"{version}\" }}\n  ignore = [\"{version}/\"]\n}}\n"
            )
        })
        .collect()
}

/// Every file below `dir`, relative path → bytes.
type Tree = BTreeMap<String, Vec<u8>>;

fn tree(dir: &Path) -> Tree {
    files_below(dir, &|_| true)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            (rel, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// A workspace with `v1.env.scl` and `v2.env.scl` (v2 has `extra` more envs),
/// and the reference output of a clean build of each, per env.
struct Fixture {
    ws: tempfile::TempDir,
    v1: BTreeMap<String, Tree>,
    v2: BTreeMap<String, Tree>,
}

fn fixture(n: usize, extra: usize) -> Fixture {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("scl.toml"), "").unwrap();
    std::fs::write(ws.path().join("v1.env.scl"), many_envs(n, "v1")).unwrap();
    std::fs::write(ws.path().join("v2.env.scl"), many_envs(n + extra, "v2")).unwrap();
    let reference = |file: &str| {
        let out = ws.path().join(format!("ref-{file}"));
        let r = build(ws.path(), file, &out, &[]);
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
        let envs: BTreeMap<String, Tree> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().to_string(), tree(&e.path())))
            .collect();
        assert!(envs
            .values()
            .all(|t| t.contains_key(".sclc-output") && t.len() >= 3));
        envs
    };
    let (v1, v2) = (reference("v1.env.scl"), reference("v2.env.scl"));
    assert_eq!(v2.len(), n + extra);
    assert_ne!(v1["e0"], v2["e0"]);
    Fixture { ws, v1, v2 }
}

fn build_cmd(ws: &Path, file: &str, out: &Path, env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sclc"));
    c.args(["build", file, "--target", "docker", "--out"])
        .arg(out)
        .current_dir(ws)
        .env("NO_COLOR", "1")
        .env_remove("SCLC_FAILPOINT")
        .env_remove("SCLC_RENAME_FALLBACK");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn build(ws: &Path, file: &str, out: &Path, env: &[(&str, &str)]) -> std::process::Output {
    build_cmd(ws, file, out, env).output().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The staging folders in `out`.
fn staging(out: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".sclc-tmp-"))
        .map(|e| e.path())
        .collect()
}

impl Fixture {
    /// Every env folder in `out` is wholly one of the two versions, and each
    /// env of `must` is there. With `recoverable`, an env may instead be
    /// missing while a whole old copy waits in a staging folder's `old/`
    /// (the fallback's window, which the next build closes).
    fn assert_whole(&self, out: &Path, must: &[String], recoverable: bool, ctx: &str) {
        let envs: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !n.starts_with('.'))
            .collect();
        for env in &envs {
            let t = tree(&out.join(env));
            assert!(
                self.v1.get(env) == Some(&t) || self.v2.get(env) == Some(&t),
                "{ctx}: out/{env} is neither wholly v1 nor wholly v2: {:?}",
                t.keys().collect::<Vec<_>>()
            );
        }
        for env in must.iter().filter(|e| !envs.contains(e)) {
            let parked = recoverable
                && staging(out).iter().any(|s| {
                    let t = tree(&s.join("old").join(env));
                    self.v1.get(env) == Some(&t) || self.v2.get(env) == Some(&t)
                });
            assert!(parked, "{ctx}: out/{env} is missing");
        }
    }

    fn names(&self, v: &BTreeMap<String, Tree>) -> Vec<String> {
        v.keys().cloned().collect()
    }
}

/// Aborts the write after each of its steps in turn (until a build runs
/// through): after every abort the envs are whole (or, with the fallback,
/// recoverable), a build of one env recovers all the others and removes
/// every staging folder, and a full build then gives exactly v2.
fn failpoints(fallback: bool) -> Vec<String> {
    let fx = fixture(3, 1);
    let mode: &[(&str, &str)] = if fallback {
        &[("SCLC_RENAME_FALLBACK", "1")]
    } else {
        &[]
    };
    let ws = fx.ws.path();
    let mut steps = Vec::new();
    let mut missing_seen = false;
    for n in 1.. {
        let out = ws.join(format!("out-{n}"));
        assert_eq!(build(ws, "v1.env.scl", &out, &[]).status.code(), Some(0));
        let at = n.to_string();
        let mut env = vec![("SCLC_FAILPOINT", at.as_str())];
        env.extend_from_slice(mode);
        let r = build(ws, "v2.env.scl", &out, &env);
        if r.status.code() == Some(0) {
            assert_eq!(tree(&out).len(), tree(&ws.join("ref-v2.env.scl")).len());
            assert!(staging(&out).is_empty());
            break;
        }
        let err = stderr(&r);
        assert_eq!(r.status.code(), None, "step {n}: killed by SIGABRT: {err}");
        let step = err
            .lines()
            .find_map(|l| l.strip_prefix(&format!("failpoint {n}: abort after: ")))
            .unwrap_or_else(|| panic!("step {n}: {err}"))
            .to_string();
        let ctx = format!("after step {n} ({step})");
        fx.assert_whole(&out, &fx.names(&fx.v1), fallback, &ctx);
        missing_seen |= fx.names(&fx.v1).iter().any(|e| !out.join(e).exists());
        steps.push(step);
        // A build of one env recovers everything the stopped one left.
        let mut c = build_cmd(ws, "v2.env.scl", &out, mode);
        let r = c.args(["--env", "e0"]).output().unwrap();
        assert_eq!(r.status.code(), Some(0), "{ctx}: {}", stderr(&r));
        assert!(staging(&out).is_empty(), "{ctx}: {:?}", staging(&out));
        fx.assert_whole(&out, &fx.names(&fx.v1), false, &format!("{ctx}, recovered"));
        assert_eq!(tree(&out.join("e0")), fx.v2["e0"]);
        // And a full build gives exactly v2.
        let r = build(ws, "v2.env.scl", &out, mode);
        assert_eq!(r.status.code(), Some(0), "{ctx}: {}", stderr(&r));
        assert_eq!(tree(&out), tree(&ws.join("ref-v2.env.scl")), "{ctx}");
        assert!(n < 200, "the build never ran through");
    }
    // With the fallback, the window in which an env is missing was hit.
    assert_eq!(missing_seen, fallback);
    steps
}

#[test]
fn every_failpoint_with_the_atomic_exchange_leaves_whole_envs() {
    let steps = failpoints(false);
    for s in [
        "lock",
        "write staging marker",
        "stage e1/Dockerfile",
        "exchange e0",
        "exchange e2",
        "rename new e3 into place",
        "remove part of a staging folder",
        "remove the staging marker",
    ] {
        assert!(steps.iter().any(|x| x == s), "{s} not in {steps:?}");
    }
}

#[test]
fn every_failpoint_with_the_rename_fallback_is_recovered() {
    let steps = failpoints(true);
    for s in [
        "move old e0 aside",
        "move new e0 into place",
        "move old e2 aside",
        "rename new e3 into place",
    ] {
        assert!(steps.iter().any(|x| x == s), "{s} not in {steps:?}");
    }
}

/// Recovery itself can be stopped at each of its steps and resumed.
#[test]
fn an_interrupted_recovery_is_recovered() {
    let fx = fixture(3, 0);
    let ws = fx.ws.path();
    let fallback = ("SCLC_RENAME_FALLBACK", "1");
    // A stopped fallback swap: e1 moved aside, not yet replaced.
    let mut at = None;
    for n in 1..100 {
        let out = ws.join(format!("p{n}"));
        assert_eq!(build(ws, "v1.env.scl", &out, &[]).status.code(), Some(0));
        let s = n.to_string();
        let r = build(ws, "v2.env.scl", &out, &[("SCLC_FAILPOINT", &s), fallback]);
        if stderr(&r).contains("abort after: move old e1 aside") {
            at = Some(out);
            break;
        }
    }
    let out = at.expect("the fallback moves e1 aside");
    assert!(!out.join("e1").exists());
    // Now stop the recovering build after each of its first steps.
    for n in 1..=4 {
        let s = n.to_string();
        let r = build(ws, "v1.env.scl", &out, &[("SCLC_FAILPOINT", &s)]);
        assert_eq!(r.status.code(), None, "{}", stderr(&r));
        fx.assert_whole(&out, &fx.names(&fx.v1), true, &format!("recovery step {n}"));
    }
    let r = build(ws, "v1.env.scl", &out, &[]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(staging(&out).is_empty());
    assert_eq!(tree(&out), tree(&ws.join("ref-v1.env.scl")));
}

/// The state the issue found after `timeout -s KILL` (sclc 0.1's staging
/// folders, `out/e1` missing, its old copy in `old/`), next to a folder
/// with a staging name that sclc did not write.
#[test]
fn staging_folders_of_earlier_builds_are_recovered_and_foreign_ones_kept() {
    let fx = fixture(3, 0);
    let ws = fx.ws.path();
    let out = ws.join("out");
    assert_eq!(build(ws, "v1.env.scl", &out, &[]).status.code(), Some(0));
    let legacy = out.join(".sclc-tmp-Ab12Cd");
    std::fs::create_dir_all(legacy.join("new")).unwrap();
    std::fs::create_dir_all(legacy.join("old")).unwrap();
    std::fs::rename(out.join("e1"), legacy.join("old/e1")).unwrap();
    let (ref2, new) = (ws.join("ref-v2.env.scl/e1"), legacy.join("new/e1"));
    std::fs::create_dir_all(&new).unwrap();
    for (rel, bytes) in tree(&ref2) {
        std::fs::write(new.join(rel), bytes).unwrap();
    }
    // One more killed before its first env had its marker.
    std::fs::create_dir_all(out.join(".sclc-tmp-Xy34Zw/new/e0")).unwrap();
    let foreign = out.join(".sclc-tmp-mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();

    let mut c = build_cmd(ws, "v2.env.scl", &out, &[]);
    let r = c.args(["--env", "e0"]).output().unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(
        err.contains(&format!(
            "note: restored {} from an interrupted build",
            out.join("e1").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("note: removed 2 temporary folders of interrupted builds"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "note: leaving {} alone: sclc did not write it",
            foreign.display()
        )),
        "{err}"
    );
    assert_eq!(tree(&out.join("e1")), fx.v1["e1"]);
    assert_eq!(tree(&out.join("e0")), fx.v2["e0"]);
    assert_eq!(staging(&out), vec![foreign.clone()]);
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
}

/// A build waits while another holds the output folder's lock, and touches
/// nothing meanwhile — not even a staging folder the other one would be
/// using; two real builds at once both succeed and leave whole envs.
#[test]
fn builds_into_one_folder_take_turns() {
    use std::io::{BufRead, BufReader};
    let fx = fixture(3, 0);
    let ws = fx.ws.path();
    let out = ws.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let busy = out.join(".sclc-tmp-busy01");
    std::fs::create_dir_all(busy.join("new/e0")).unwrap();
    std::fs::write(busy.join(".sclc-staging"), "").unwrap();
    let held = std::fs::File::open(&out).unwrap();
    held.lock().unwrap();
    let mut child = build_cmd(ws, "v1.env.scl", &out, &[])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("note: waiting for another sclc build that is writing into"),
        "{line}"
    );
    assert!(busy.join(".sclc-staging").exists());
    assert!(!out.join("e0").exists());
    drop(held);
    assert!(child.wait().unwrap().success());
    // The lock's owner is gone, so its staging folder was an orphan.
    assert!(staging(&out).is_empty());
    assert_eq!(tree(&out), tree(&ws.join("ref-v1.env.scl")));

    let racers: Vec<std::process::Child> = ["v2.env.scl", "v1.env.scl", "v2.env.scl"]
        .iter()
        .map(|f| {
            build_cmd(ws, f, &out, &[])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in racers {
        assert!(k.wait().unwrap().success());
    }
    fx.assert_whole(&out, &fx.names(&fx.v1), false, "after concurrent builds");
    assert!(staging(&out).is_empty());
}

/// SIGKILL while a 120-env build writes (the kill lands after the staging
/// folder appears, after a delay that grows each round): envs are whole
/// after every kill; then a normal build leaves exactly the new version and
/// no staging folder.
#[test]
fn a_kill_loop_leaves_whole_envs() {
    let fx = fixture(120, 0);
    let ws = fx.ws.path();
    let out = ws.join("out");
    assert_eq!(build(ws, "v1.env.scl", &out, &[]).status.code(), Some(0));
    let all = fx.names(&fx.v1);
    let mut mid_write = 0;
    for round in 0..16u64 {
        let file = if round % 2 == 0 {
            "v2.env.scl"
        } else {
            "v1.env.scl"
        };
        let mut child = build_cmd(ws, file, &out, &[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the write to start (or the build to end).
        let started = loop {
            if !staging(&out).is_empty() {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        };
        std::thread::sleep(std::time::Duration::from_micros(round * 700));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if started && !status.success() && !staging(&out).is_empty() {
            mid_write += 1;
        }
        fx.assert_whole(
            &out,
            &all,
            !cfg!(target_os = "linux"),
            &format!("kill round {round}"),
        );
    }
    assert!(mid_write > 0, "no kill landed while the build was writing");
    let r = build(ws, "v2.env.scl", &out, &[]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(staging(&out).is_empty());
    assert_eq!(tree(&out), tree(&ws.join("ref-v2.env.scl")));
}

/// A link where an env folder would go is not sclc's, even if it points at one.
#[test]
fn a_link_to_an_env_folder_is_not_replaced() {
    let fx = fixture(1, 0);
    let ws = fx.ws.path();
    let out = ws.join("out");
    std::fs::create_dir_all(&out).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.join("ref-v1.env.scl/e0"), out.join("e0")).unwrap();
    #[cfg(unix)]
    {
        let r = build(ws, "v2.env.scl", &out, &[]);
        assert_eq!(r.status.code(), Some(2));
        assert!(
            stderr(&r).contains("was not written by sclc"),
            "{}",
            stderr(&r)
        );
        assert_eq!(tree(&ws.join("ref-v1.env.scl/e0")), fx.v1["e0"]);
    }
}

/// An env folder holds every target built into it: building one target
/// replaces that target's files (and removes the ones it no longer writes)
/// and keeps the other targets' files; `--target all` writes them all.
#[test]
fn one_target_keeps_the_other_targets_files() {
    let ws = tempfile::tempdir().unwrap();
    let src = |ignore: &str| {
        format!(
            "env app {{\n  base = image(\"python:3.11-slim\")\n  python.packages = [\"rich==13.7.1\"]\n{ignore}}}\n"
        )
    };
    std::fs::write(ws.path().join("a.env.scl"), src("  ignore = [\".git\"]\n")).unwrap();
    let out = ws.path().join("out");
    let run = |target: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
            .args(["build", "a.env.scl", "--target", target, "--out"])
            .arg(&out)
            .current_dir(ws.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{target}: {}", stderr(&o));
    };
    let files = || {
        let mut v: Vec<String> = std::fs::read_dir(out.join("app"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    run("docker");
    assert_eq!(
        files(),
        [
            ".dockerignore",
            ".sclc-output",
            "Dockerfile",
            "Dockerfile.dockerignore"
        ]
    );
    run("conda");
    assert_eq!(
        files(),
        [
            ".dockerignore",
            ".sclc-output",
            "Dockerfile",
            "Dockerfile.dockerignore",
            "environment.yml"
        ]
    );
    // Docker again without `ignore`: its ignore files go, conda's file stays.
    std::fs::write(ws.path().join("a.env.scl"), src("")).unwrap();
    run("docker");
    assert_eq!(files(), [".sclc-output", "Dockerfile", "environment.yml"]);
    std::fs::remove_dir_all(&out).unwrap();
    run("all");
    assert!(files().contains(&"environment.yml".to_string()));
    assert!(files().contains(&"Dockerfile".to_string()));
}

#[cfg(all(target_os = "linux", not(feature = "sysalloc")))]
#[test]
fn the_allocator_is_tuned_before_it_starts() {
    // `sclc` sets two mimalloc options by number as it is loaded, before
    // the first allocation reserves an arena; mimalloc's verbose report
    // names each option with its value, so this checks both the numbers
    // and that they were set in time. The environment asks for other
    // values (mimalloc reads it only for an option not set before):
    // `arena_eager_commit` is set to mimalloc's own default, so only a
    // set that came too late could read 0.
    let o = Command::new(env!("CARGO_BIN_EXE_sclc"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .env("MIMALLOC_ARENA_EAGER_COMMIT", "0")
        .env("MIMALLOC_PURGE_DELAY", "1000")
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for line in ["option 'arena_eager_commit': 2", "option 'purge_delay': 10"] {
        assert!(
            err.lines().any(|l| l.trim_end() == line),
            "no `{line}` in mimalloc's report:\n{err}"
        );
    }
}

/// `sclc` holds no transparent huge page, not even from the allocations
/// made before `main` (mimalloc's first arena is one mapping, committed
/// at once and advised for huge pages: if the pages were turned off only
/// in `main`, the first touches got two 2 MiB pages). A language server is
/// started and answers `initialize` (its start-up allocations are made by
/// then); its `/proc/PID/status` must say huge pages are off for it
/// (`THP_enabled: 0`, the `prctl`) and its `smaps_rollup` must hold none.
/// Skipped, with a message, where nothing could be seen: huge pages off on
/// the machine (`never`) or already off for the test process (the setting
/// is inherited).
#[cfg(all(target_os = "linux", not(feature = "sysalloc")))]
#[test]
fn sclc_holds_no_huge_page() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mode =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let own = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if mode.is_empty() || mode.contains("[never]") || own.contains("THP_enabled:\t0") {
        eprintln!(
            "skipped: transparent huge pages are off here ({mode:?}; this process: {:?})",
            own.lines().find(|l| l.starts_with("THP_enabled"))
        );
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_sclc"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
    let mut stdin = child.stdin.take().unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
    // The reply: headers, a blank line, then the body.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut len = 0;
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the server closed its output"
        );
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            len = n.parse().unwrap();
        }
    }
    let mut reply = vec![0; len];
    out.read_exact(&mut reply).unwrap();
    assert!(
        String::from_utf8_lossy(&reply).contains("\"id\":1"),
        "{reply:?}"
    );
    let pid = child.id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        status.contains("THP_enabled:\t0"),
        "huge pages are on for sclc:\n{status}"
    );
    let Ok(rollup) = rollup else {
        eprintln!("no smaps_rollup (a kernel before 4.14): the pages held not checked");
        return;
    };
    let kib = |field: &str| {
        rollup
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    let (rss, huge) = (kib("Rss:").unwrap(), kib("AnonHugePages:").unwrap());
    assert!(rss > 0, "{rollup}");
    assert_eq!(huge, 0, "{huge} KiB of huge pages in {rss} KiB resident");
}
