//! Times lexing + parsing (trivia included) of every `.scl` file under a
//! folder, read into memory first: the best of ROUNDS passes over all files.
//!
//! `cargo run --release -p scl-syntax --example parse_time -- DIR [ROUNDS]`
//!
//! Prints one line, `parse_ms=<best> lex_ms=<best> files=<n> bytes=<n>`.
//! `xtask parse-time` builds this same file at an older commit too and runs
//! the two alternately (see `bench/README.md`).
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: parse_time DIR [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else if p.to_string_lossy().ends_with(".scl") {
                files.push(std::fs::read_to_string(&p).expect("UTF-8 file"));
            }
        }
    }
    let (mut parse_best, mut lex_best) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        for f in &files {
            std::hint::black_box(scl_syntax::lex(f));
        }
        lex_best = lex_best.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for f in &files {
            std::hint::black_box(scl_syntax::parse(f));
        }
        parse_best = parse_best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let bytes: usize = files.iter().map(|f| f.len()).sum();
    println!(
        "parse_ms={parse_best:.3} lex_ms={lex_best:.3} files={} bytes={bytes}",
        files.len()
    );
}
