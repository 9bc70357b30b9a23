//! `sclc`: the command-line front end (`design/cli.md`). The only crate that
//! knows clap; it asks the database and prints.
//!
//! Exit codes: 0 success (warnings allowed), 1 the input has errors, 2 usage
//! error (unknown flag, missing file).

mod commands;

// The compiler allocates many small values; mimalloc is markedly faster at
// that than the system allocator (see `bench/README.md`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Deeply nested input recurses deeply; give the compiler a large stack
    // instead of the main thread's 8 MiB.
    let code = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(commands::main)
        .expect("spawn the compiler thread")
        .join()
        .unwrap_or(101);
    std::process::exit(code);
}
