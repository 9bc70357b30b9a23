//! `sclc up FILE --target venv`: a real `.venv` made with uv from the
//! fixtures in `tests/venv/` (see its README), and the failures that exit 3
//! (no uv, a Python that is not installed).
//!
//! uv comes from `bash scripts/install-test-tools.sh` (`<repo>/.venv/bin/uv`,
//! put first on `PATH` here). Without it the tests that need it are skipped
//! with the reason, unless `CI` is set (to anything but `false`, `0` or
//! empty) or `SCL_REQUIRE_ENGINES=1`: then they fail.

mod common;

use common::{must_run, repo, text};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `PATH` with the test tools' `.venv/bin` first.
fn path_with_uv() -> OsString {
    let mut dirs = vec![repo().join(".venv/bin")];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap()
}

/// Why the tests that need uv cannot run here, if they cannot.
fn missing_uv() -> Option<String> {
    match Command::new("uv")
        .arg("--version")
        .env("PATH", path_with_uv())
        .output()
    {
        Ok(o) if o.status.success() => None,
        _ => Some("uv is not installed".into()),
    }
}

/// Whether a test that needs uv runs (else it printed why it skips).
fn have_uv() -> bool {
    match missing_uv() {
        None => true,
        Some(why) if must_run(&["SCL_REQUIRE_ENGINES"]) => panic!(
            "{why}: run `bash scripts/install-test-tools.sh` (CI or SCL_REQUIRE_ENGINES=1 \
             is set, so this test does not skip)"
        ),
        Some(why) => {
            eprintln!("skipped: {why} (run `bash scripts/install-test-tools.sh`)");
            false
        }
    }
}

/// The fixture files `names` of `tests/venv/` copied into a new folder.
fn copy_fixtures(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in names {
        std::fs::copy(repo().join("tests/venv").join(n), dir.path().join(n)).unwrap();
    }
    dir
}

/// `sclc up FILE --target venv` in `dir` with `PATH` set to `path`, uv's
/// cache in `dir` (a real download every run).
fn up(dir: &Path, file: &str, path: &OsString) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(["up", file, "--target", "venv"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .env("UV_CACHE_DIR", dir.join("uv-cache"))
        .env_remove("VIRTUAL_ENV")
        .output()
        .expect("sclc runs")
}

fn stderr_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(String::from)
        .collect()
}

/// The warnings `app.env.scl` gives: one per field a venv cannot give.
const APP_WARNINGS: [&str; 4] = [
    "note: venv: `base`: the venv uses this machine's OS and Python, not the image python:3.11-slim",
    "warning: venv: `resources.gpu`: a venv reserves no GPUs (the env asks for 1): it sees the GPUs and drivers this machine has",
    "warning: venv: `system.packages`: a venv installs no OS packages: install them on this machine (curl)",
    "warning: venv: `volumes`: nothing is mounted: the data must be on this machine (host:data at /data)",
];

#[test]
fn without_uv_on_path_up_exits_3_with_one_line() {
    let dir = copy_fixtures(&["app.env.scl", "requirements.txt"]);
    let empty = tempfile::tempdir().unwrap();
    let out = up(
        dir.path(),
        "app.env.scl",
        &empty.path().as_os_str().to_owned(),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    // One line: what a venv would leave out is said only when one is made.
    assert_eq!(
        stderr_lines(&out),
        ["error: uv is not on PATH: install it (pip install uv, or https://docs.astral.sh/uv/) to make a venv"],
        "{}",
        text(&out)
    );
    assert!(!dir.path().join(".venv").exists());
}

#[test]
fn a_python_that_is_not_installed_exits_3_with_one_line() {
    if !have_uv() {
        return;
    }
    let dir = copy_fixtures(&["missing-python.env.scl"]);
    let out = up(dir.path(), "missing-python.env.scl", &path_with_uv());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let lines = stderr_lines(&out);
    assert_eq!(
        lines,
        [
            "uv python find --system --no-project --no-python-downloads 3.99",
            "error: Python 3.99 is not installed here: install it (`uv python install 3.99`, pyenv or the OS packages) or change `python.version` (sclc does not let uv download Pythons)",
        ],
        "{}",
        text(&out)
    );
    assert!(!dir.path().join(".venv").exists());
}

#[test]
fn up_makes_a_venv_with_the_packages_and_the_requirements() {
    if !have_uv() {
        return;
    }
    let dir = copy_fixtures(&["app.env.scl", "requirements.txt"]);
    let path = path_with_uv();
    let out = up(dir.path(), "app.env.scl", &path);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines = stderr_lines(&out);
    for w in APP_WARNINGS {
        assert!(lines.iter().any(|l| l == w), "no `{w}` in:\n{}", text(&out));
    }
    let printed: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("uv ") || l.starts_with("made "))
        .map(String::as_str)
        .collect();
    assert_eq!(printed.len(), 3, "{}", text(&out));
    assert_eq!(
        printed[0],
        "uv venv --no-project --no-python-downloads .venv"
    );
    assert!(
        printed[1].starts_with("uv pip install --python .venv/bin/python --")
            && printed[1].ends_with(" -r requirements.txt six==1.16.0"),
        "{}",
        printed[1]
    );
    assert!(
        printed[2].starts_with("made .venv with Python 3.") && printed[2].ends_with(": 2 packages"),
        "{}",
        printed[2]
    );

    let python: PathBuf = dir.path().join(".venv/bin/python");
    let import = |path: &Path| {
        Command::new(path)
            .args([
                "-c",
                "import six, idna; print(six.__version__, idna.__version__)",
            ])
            .output()
            .expect("the venv's python runs")
    };
    let ran = import(&python);
    assert!(ran.status.success(), "{}", text(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), "1.16.0 3.7");

    // Again: the venv is kept, the packages are there already.
    let again = up(dir.path(), "app.env.scl", &path);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let lines = stderr_lines(&again);
    assert!(
        !lines.iter().any(|l| l.starts_with("uv venv")),
        "{}",
        text(&again)
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("made .venv with Python 3.")
                && l.ends_with(": 2 packages (kept the existing one)")),
        "{}",
        text(&again)
    );
    let ran = import(&python);
    assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), "1.16.0 3.7");
}

/// The book's "From laptop to cluster": `sclc up` on the example, then its
/// training script in the venv prints what the chapter shows.
#[test]
fn the_book_example_runs_in_its_venv() {
    if !have_uv() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for f in ["train.env.scl", "train.py"] {
        std::fs::copy(
            repo().join("examples/laptop-to-cluster").join(f),
            dir.path().join(f),
        )
        .unwrap();
    }
    let o = up(dir.path(), "train.env.scl", &path_with_uv());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let run = Command::new(dir.path().join(".venv/bin/python"))
        .arg("train.py")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "epochs 3, accuracy 0.99\n",
        "{}",
        text(&run)
    );
    let chapter = std::fs::read_to_string(repo().join("book/src/laptop-to-cluster.md")).unwrap();
    assert!(chapter.contains(".venv/bin/python train.py        # epochs 3, accuracy 0.99"));
}
