//! Parses a file (or stdin) and prints the AST and the syntax errors.
//! `cargo run -p scl-syntax --example parse -- FILE`

use std::io::Read;

fn main() {
    let src = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(path).expect("read file"),
        None => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).expect("read stdin");
            s
        }
    };
    let p = scl_syntax::parse(&src);
    println!("{:#?}", p.module);
    let idx = scl_diag::LineIndex::new(&src);
    for d in &p.errors {
        let (l, c) = idx.line_col(&src, d.at.span.start as usize);
        println!("{}:{l}:{c}: {}", d.code, d.message);
    }
}
