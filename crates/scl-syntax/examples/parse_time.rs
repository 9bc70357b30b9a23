//! Times lexing and parsing every `.scl` file under a folder (in memory).
//! `cargo run --release -p scl-syntax --example parse_time -- DIR [ROUNDS]`
use std::time::Instant;
fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("DIR");
    let rounds: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() { stack.push(p) } else if p.to_string_lossy().ends_with(".scl") {
                files.push(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut best = f64::MAX; let mut lex_best = f64::MAX; let mut empty_best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        for f in &files { std::hint::black_box(scl_syntax::lex(f)); }
        lex_best = lex_best.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for f in &files { std::hint::black_box(scl_syntax::parse(f)); }
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for _ in &files { std::hint::black_box(scl_syntax::parse("")); }
        empty_best = empty_best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let bytes: usize = files.iter().map(|f| f.len()).sum();
    println!("files {} bytes {} lex {:.2} ms parse(lex+parse) {:.2} ms empty-parse x files {:.2} ms", files.len(), bytes, lex_best, best, empty_best);
}
