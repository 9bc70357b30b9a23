//! `SCL_TIMINGS=1`: the phases of a run on stderr, and nothing else changed.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, timings: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sclc"));
    c.args(args).current_dir(dir).env("NO_COLOR", "1");
    match timings {
        Some(v) => c.env("SCL_TIMINGS", v),
        None => c.env_remove("SCL_TIMINGS"),
    };
    c.output().expect("sclc runs")
}

/// The phase names of the `timings:` lines of `o`'s stderr, in order.
fn phases(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("timings:"))
        .map(|l| l.split("ms").last().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn timings_go_to_stderr_and_change_no_output() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("scl.toml"), "").unwrap();
    std::fs::write(
        ws.path().join("base.env.scl"),
        "env base_env {\n  base = image(\"debian:12.5\")\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("app.env.scl"),
        "import \"./base.env.scl\" as b\n\nenv app extends b.base_env {\n  description = \"app\"\n}\n",
    )
    .unwrap();
    let plain = run(ws.path(), None, &["ir", "app.env.scl"]);
    assert_eq!(plain.status.code(), Some(0));
    assert!(phases(&plain).is_empty());
    let timed = run(ws.path(), Some("1"), &["ir", "app.env.scl"]);
    assert_eq!(timed.status.code(), Some(0));
    assert_eq!(timed.stdout, plain.stdout, "the IR changed");
    // The preload runs only on a machine with two cores or more.
    let preload = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let levels: &[&str] = if preload {
        &[
            "preload: a level resolved, read and parsed",
            "preload: a level resolved, read and parsed",
        ]
    } else {
        &[]
    };
    let expected: Vec<&str> = ["start", "root file read and parsed"]
        .iter()
        .chain(levels)
        .chain(&[
            "preload",
            "imports resolved",
            "walk",
            "diagnostics",
            "IR gathered",
            "JSON written",
        ])
        .copied()
        .collect();
    assert_eq!(
        phases(&timed),
        expected,
        "{}",
        String::from_utf8_lossy(&timed.stderr)
    );
    // Only `1` turns them on, and never with JSON diagnostics on stderr.
    assert!(phases(&run(ws.path(), Some("0"), &["ir", "app.env.scl"])).is_empty());
    let json = run(
        ws.path(),
        Some("1"),
        &["--message-format", "json", "ir", "app.env.scl"],
    );
    assert_eq!(json.stdout, plain.stdout);
    assert!(
        phases(&json).is_empty(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
}
