//! Tests of the harness itself (they pass on any compiler: the fuzz run is
//! `.ci/run`'s, not `cargo test`'s): the generator writes programs that get
//! through the pipeline, cases are a pure function of (seed, index), the
//! mutator mutates, and the supervisor sees every kind of failure — a
//! panic, a stack overflow, an abort, the memory limit, a time-out — in a
//! worker and saves a case that reproduces it.

use scl_fuzz::case::Case;
use scl_fuzz::mutate::Corpus;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn strategy() -> proptest::strategy::BoxedStrategy<Case> {
    scl_fuzz::strategy(Arc::new(Corpus::load(&repo())))
}

/// Most generated programs are free of syntax errors, and many reach the
/// Docker backend: the generator knows the grammar and the schema.
#[test]
fn generated_programs_reach_the_backend() {
    use proptest::strategy::{Strategy, ValueTree};
    let gen = scl_fuzz::gen::module();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut clean, mut built, total) = (0, 0, 200);
    for _ in 0..total {
        let text = gen.new_tree(&mut runner).unwrap().current();
        let parse = scl_syntax::parse(&text);
        if parse.errors.is_empty() {
            clean += 1;
        }
        let case = Case::single("gen", text);
        let r = scl_fuzz::oracle::run(
            &case,
            scl_fuzz::oracle::Limits::for_size(case.size(), 100.0),
        );
        if r.as_ref().is_ok_and(|r| r.envs > 0)
            || matches!(&r, Err(f) if f.kind == scl_fuzz::oracle::Kind::BadArtifact)
        {
            built += 1;
        }
    }
    assert!(
        clean * 10 >= total * 7,
        "only {clean} of {total} parse cleanly"
    );
    // Check-time validation refuses hostile values in every field with a
    // grammar (package names, user names, URLs, …), so fewer programs reach
    // the backend than parse; one in eight still must.
    assert!(
        built * 8 >= total,
        "only {built} of {total} reach the backend"
    );
}

#[test]
fn a_case_is_a_function_of_seed_and_index() {
    let s = strategy();
    for i in [0, 5, scl_fuzz::SCHEDULED, scl_fuzz::SCHEDULED + 7, 1234] {
        assert_eq!(
            scl_fuzz::case_at(&s, 42, i),
            scl_fuzz::case_at(&strategy(), 42, i)
        );
    }
    let a: Vec<Case> = (100..110).map(|i| scl_fuzz::case_at(&s, 42, i)).collect();
    let b: Vec<Case> = (100..110).map(|i| scl_fuzz::case_at(&s, 43, i)).collect();
    assert_ne!(a, b);
    // The scheduled cases are the hostile shapes at their issue sizes.
    let first = scl_fuzz::case_at(&s, 1, 0);
    assert_eq!(
        first.label,
        format!(
            "hostile:plus-chain:{}",
            scl_fuzz::hostile::SHAPES[0].trigger
        )
    );
    assert!(first.size() > 3_000_000);
}

#[test]
fn the_mutator_changes_corpus_files_and_keeps_their_folders() {
    let corpus = Corpus::load(&repo());
    assert!(corpus.entries.len() > 60, "{}", corpus.entries.len());
    let bert = corpus
        .entries
        .iter()
        .find(|e| e.name == "examples/bert-finetune/train.env.scl")
        .unwrap();
    assert!(bert.case.files.iter().any(|(p, _)| p == "base.env.scl"));
    assert!(bert.case.files.iter().any(|(p, _)| p == "requirements.txt"));
    let s = strategy();
    let mutated: Vec<Case> = (scl_fuzz::SCHEDULED..scl_fuzz::SCHEDULED + 300)
        .map(|i| scl_fuzz::case_at(&s, 7, i))
        .filter(|c| c.label.starts_with("mutate:"))
        .collect();
    assert!(mutated.len() > 60, "{}", mutated.len());
    let changed = mutated
        .iter()
        .filter(|c| {
            let name = c.label.strip_prefix("mutate:").unwrap();
            let e = corpus.entries.iter().find(|e| e.name == name).unwrap();
            e.case.main_text() != c.main_text()
        })
        .count();
    assert!(
        changed * 10 >= mutated.len() * 8,
        "{changed} of {}",
        mutated.len()
    );
}

#[test]
fn every_hostile_shape_builds_a_program_of_its_size() {
    for (i, s) in scl_fuzz::hostile::SHAPES.iter().enumerate() {
        let small = scl_fuzz::hostile::case(i, 3);
        assert!(small.size() > 0, "{}", s.name);
        assert!(small.label.starts_with(&format!("hostile:{}:", s.name)));
        let parse = scl_syntax::parse(std::str::from_utf8(small.main_text()).unwrap());
        let expect_clean = ![
            "close-parens",
            "close-brackets",
            "close-braces",
            "open-parens",
            "bad-chars",
            "bad-lines",
        ]
        .contains(&s.name);
        assert_eq!(
            parse.errors.is_empty(),
            expect_clean,
            "{}: {:?}",
            s.name,
            parse.errors
        );
    }
}

fn fuzz() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scl-fuzz"));
    c.env_remove("SCL_FUZZ_SEED");
    c
}

/// `scl-fuzz one` on the self-test inputs of debug builds: each kind of
/// failure is seen and named, also those that kill the process.
#[test]
fn each_kind_of_failure_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    for (what, expect) in [
        ("panic", "fail panic self-test panic"),
        ("fail", "fail bad-artifact self-test failure"),
    ] {
        let f = dir.path().join(format!("{what}.env.scl"));
        std::fs::write(&f, format!("//! scl-fuzz self-test: {what}\n")).unwrap();
        let r = fuzz().arg("one").arg(&f).output().unwrap();
        assert_eq!(r.status.code(), Some(1));
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.starts_with(expect), "{what}: {out}");
    }
    let ok = dir.path().join("ok.env.scl");
    std::fs::write(&ok, "env e {\n  base = image(\"debian:12.5\")\n}\n").unwrap();
    let r = fuzz().arg("one").arg(&ok).output().unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    assert!(String::from_utf8_lossy(&r.stdout).contains("1 envs built"));
}

/// The supervisor keeps going after workers die, classifies each death,
/// saves each failing case, and exits 1.
#[test]
fn the_supervisor_survives_and_reports_dying_workers() {
    let out = tempfile::tempdir().unwrap();
    let corpus = tempfile::tempdir().unwrap();
    let tests = corpus.path().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    for what in ["overflow", "abort", "memory", "sleep", "panic"] {
        std::fs::write(
            tests.join(format!("{what}.env.scl")),
            format!("//! scl-fuzz self-test: {what}\n"),
        )
        .unwrap();
    }
    // A corpus of self-tests only: random cases from index 1000 are mutated
    // self-tests (and generated programs); the mutations keep most of them
    // self-tests, so every kind shows up within a few dozen cases.
    let r = fuzz()
        .args([
            "--seed",
            "3",
            "--start",
            "1000",
            "--cases",
            "120",
            "--time",
            "120",
            "--jobs",
            "2",
            "--shrink-time",
            "0",
            "--scale",
            "0.05",
        ])
        .arg("--repo")
        .arg(corpus.path())
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(
        r.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    for kind in ["stack-overflow", "crash", "memory", "timeout", "panic"] {
        assert!(
            stdout.contains(&format!(": {kind}: ")),
            "{kind} not reported:\n{stdout}\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    assert!(stdout.contains("scl-fuzz: seed 3: 120 cases"), "{stdout}");
    let saved = std::fs::read_dir(out.path().join("failures"))
        .unwrap()
        .count();
    assert!(saved >= 5, "{saved}");
    // A saved case reproduces its failure.
    let dir = std::fs::read_dir(out.path().join("failures"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("-panic-"))
        .expect("a saved panic");
    let readme = std::fs::read_to_string(dir.join("README.txt")).unwrap();
    assert!(
        readme.contains("scl-fuzz -- case --seed 3 --index"),
        "{readme}"
    );
    let main = std::fs::read_dir(dir.join("case"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".env.scl"))
        .unwrap();
    let again = fuzz().arg("one").arg(&main).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("fail panic"));
}
