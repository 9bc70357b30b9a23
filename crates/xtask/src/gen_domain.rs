//! `cargo run -p xtask -- gen-domain [--check]`: writes
//! `crates/scl-domain/src/tables.rs` and `stdlib/compat.env.scl` from
//! `crates/scl-domain/data/source/*.csv` (the generator is
//! `crates/scl-domain/src/gen.rs`, shared with scl-domain's tests). With
//! `--check` it writes nothing and fails if either file differs.

#[path = "../../scl-domain/src/gen.rs"]
mod gen;

use std::path::PathBuf;

pub fn main(args: &[String]) -> i32 {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            eprintln!("usage: cargo run -p xtask -- gen-domain [--check]");
            return 2;
        }
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let generated = match gen::generate(&root.join("crates/scl-domain/data/source")) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gen-domain: {e}");
            return 1;
        }
    };
    let outputs = [
        ("crates/scl-domain/src/tables.rs", generated.tables_rs),
        ("stdlib/compat.env.scl", generated.compat_scl),
    ];
    let mut code = 0;
    for (rel, text) in outputs {
        let path = root.join(rel);
        let same = std::fs::read_to_string(&path).is_ok_and(|old| old == text);
        if check {
            if !same {
                eprintln!(
                    "gen-domain: {rel} is out of date (run `cargo run -p xtask -- gen-domain`)"
                );
                code = 1;
            }
        } else if same {
            println!("{rel}: unchanged");
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("gen-domain: {rel}: {e}");
            code = 1;
        } else {
            println!("{rel}: written");
        }
    }
    code
}
