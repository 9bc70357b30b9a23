//! Parses every file given on the command line N times and prints the time.
//! `cargo run --release -p scl-syntax --example bench -- N FILE...`

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let files: Vec<String> = args
        .map(|p| std::fs::read_to_string(p).expect("read"))
        .collect();
    let start = std::time::Instant::now();
    let mut decls = 0;
    for i in 0..n {
        let p = scl_syntax::parse(&files[i % files.len()]);
        decls += p.module.decls.len();
    }
    println!("{n} parses in {:?} ({decls} decls)", start.elapsed());
}
