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
    no_huge_pages();
    // The same known stack size as every other front end (see scl-ide).
    let code = scl_ide::with_compiler_stack(commands::main);
    std::process::exit(code);
}

/// Turns transparent huge pages off for this process (Linux
/// `prctl(PR_SET_THP_DISABLE)`; inherited by the programs it starts).
/// mimalloc asks the kernel for huge pages (`MADV_HUGEPAGE`) on its arenas,
/// and under the common `madvise` setting of
/// `/sys/kernel/mm/transparent_hugepage/enabled` the kernel then zeroes
/// 2 MiB for a first touch that needs a few KiB: `sclc ir` on the bench's
/// N = 1000 workload held 74 MiB instead of 45 MiB, with a quarter of its
/// samples in the kernel's `clear_page` (`bench/README.md`). Failure (an
/// old kernel, a seccomp filter) changes nothing but memory use, so it is
/// ignored.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}
