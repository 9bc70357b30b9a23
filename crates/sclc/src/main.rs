//! `sclc`: the command-line front end (commands and flags: the book's CLI
//! reference). The only crate that
//! knows clap; it asks the database and prints.
//!
//! Exit codes: 0 success (warnings allowed), 1 the input has errors, 2 usage
//! error (unknown flag, missing file).

mod cluster;
mod commands;
mod diff;
mod doc;
mod doctor;
mod engine;
mod fmt;
mod git;
mod output;
mod prepare;
mod venv;

// The compiler allocates many small values; mimalloc is markedly faster at
// that than the system allocator (see `bench/README.md`). The `sysalloc`
// feature keeps the system allocator, so that heap profilers that replace
// `malloc` (valgrind's DHAT and massif) see every allocation.
#[cfg(not(feature = "sysalloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // The same known stack size as every other front end (see scl-ide).
    let code = scl_ide::with_compiler_stack(commands::main);
    std::process::exit(code);
}
