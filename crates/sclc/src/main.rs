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

/// mimalloc's numbers for the two options set below (`mi_option_e` in
/// mimalloc 3's `mimalloc.h`; the constants of the `libmimalloc-sys`
/// bindings are mimalloc 2's numbering). The test
/// `the_allocator_is_tuned_before_it_starts` (`tests/output.rs`) reads
/// them back by name from mimalloc's own report.
#[cfg(not(feature = "sysalloc"))]
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
#[cfg(not(feature = "sysalloc"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps memory freed in whole pages before it returns
/// it to the kernel, in milliseconds (its default is 1,000: longer than a
/// whole `sclc ir` of 5,000 modules, which then holds every page it ever
/// freed).
#[cfg(not(feature = "sysalloc"))]
const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Sets mimalloc up for a compiler: arena memory is committed as it is
/// used, not when the arena is reserved (`arena_eager_commit` off; by
/// default mimalloc commits eagerly where the kernel overcommits), and
/// freed pages go back to the kernel after [`PURGE_DELAY_MS`]. Measured on
/// the bench workload, the two together hold 4 to 6 MiB less at N = 5000
/// for the same time (`bench/README.md`).
/// Runs as the program is loaded (an ELF `.init_array` entry, like a C
/// constructor), before Rust's runtime makes the first allocation, which
/// reserves mimalloc's first arena: set in `main`, the eager-commit option
/// came too late for that arena (a three-line file held 15 MiB instead of
/// 11.5 MiB).
#[cfg(all(target_os = "linux", not(feature = "sysalloc")))]
extern "C" fn tune_allocator() {
    // SAFETY: `mi_option_set` only stores an integer in mimalloc's option
    // table (it needs no initialized heap); both numbers name options of
    // the linked mimalloc (tested).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    }
}

#[cfg(all(target_os = "linux", not(feature = "sysalloc")))]
#[used]
#[unsafe(link_section = ".init_array")]
static TUNE_ALLOCATOR: extern "C" fn() = tune_allocator;

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
