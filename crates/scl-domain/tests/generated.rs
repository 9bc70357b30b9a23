//! `src/tables.rs` and `stdlib/compat.env.scl` are what the generator writes
//! from `data/source` now (run `cargo run -p xtask -- gen-domain` after
//! editing a CSV).

#[path = "../src/gen.rs"]
mod gen;

use std::path::PathBuf;

#[test]
fn generated_files_are_up_to_date() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let g = gen::generate(&here.join("data/source")).unwrap();
    let tables = std::fs::read_to_string(here.join("src/tables.rs")).unwrap();
    let compat = std::fs::read_to_string(here.join("../../stdlib/compat.env.scl")).unwrap();
    assert!(
        tables == g.tables_rs,
        "src/tables.rs is out of date: run `cargo run -p xtask -- gen-domain`"
    );
    assert!(
        compat == g.compat_scl,
        "stdlib/compat.env.scl is out of date: run `cargo run -p xtask -- gen-domain`"
    );
}

/// The generated module is in `sclc fmt`'s canonical layout.
#[test]
fn compat_module_is_formatted() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let g = gen::generate(&here.join("data/source")).unwrap();
    let formatted = scl_fmt::format(&g.compat_scl).expect("std/compat parses");
    assert!(
        formatted == g.compat_scl,
        "the generator's layout of std/compat differs from `sclc fmt`"
    );
}
