//! Parses every file given on the command line N times and prints the time.
//! `cargo run --release -p scl-syntax --example bench -- [N [FILE...]]`
//!
//! Without files it parses the acceptance and conformance fixtures of
//! `tests/fixtures`; N defaults to 1000.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let mut paths: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if paths.is_empty() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for dir in ["acceptance", "conformance"] {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
                .expect("read fixtures")
                .map(|e| e.expect("read fixtures").path())
                .filter(|p| p.to_string_lossy().ends_with(".scl"))
                .collect();
            entries.sort();
            paths.extend(entries);
        }
    }
    let files: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();
    if files.is_empty() {
        eprintln!("no files to parse");
        std::process::exit(2);
    }
    let start = std::time::Instant::now();
    let mut decls = 0;
    for i in 0..n {
        let p = scl_syntax::parse(&files[i % files.len()]);
        decls += p.module.decls.len();
    }
    let elapsed = start.elapsed();
    println!(
        "{n} parses of {} files in {elapsed:?} ({:.1} µs/parse, {decls} decls)",
        files.len(),
        elapsed.as_secs_f64() * 1e6 / n as f64
    );
}
