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
static GLOBAL: Mimalloc = Mimalloc;

/// mimalloc, asked for a plain block whenever the layout's alignment is at
/// most a word's. Every mimalloc block is a whole number of words from a
/// word-aligned start (its size classes are multiples of
/// `MI_INTPTR_SIZE`), so `mi_malloc`'s blocks are 8-byte aligned on a
/// 64-bit target. The `mimalloc` crate's `MiMalloc` calls
/// `mi_malloc_aligned` for every layout, which in mimalloc 3 checks the
/// alignment and the free block's address before the same fast path: on
/// the bench workload `sclc ir` makes about 480 allocations per module, and
/// this took about 20 instructions off each (`bench/README.md`). A larger
/// alignment goes to the aligned functions, as before.
#[cfg(not(feature = "sysalloc"))]
struct Mimalloc;

/// The largest alignment every block of `mi_malloc` has (a word).
#[cfg(not(feature = "sysalloc"))]
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

#[cfg(not(feature = "sysalloc"))]
// SAFETY: each function passes the layout's size to mimalloc and asks for
// its alignment (plain blocks are word-aligned, see `Mimalloc`); blocks are
// freed and resized by mimalloc, which knows their size.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: see the impl.
        unsafe { libmimalloc_sys::mi_free(ptr as *mut std::ffi::c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        let p = ptr as *mut std::ffi::c_void;
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(p, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(p, new_size, layout.align()) as *mut u8
            }
        }
    }
}

fn main() {
    // With mimalloc, `tune_allocator` turned them off before the first
    // allocation.
    #[cfg(any(not(target_os = "linux"), feature = "sysalloc"))]
    no_huge_pages();
    // The same known stack size as every other front end (see scl-ide).
    // The process ends on the compiler thread, as soon as the command is
    // done: `exit` flushes standard output and ends every thread. This
    // thread's Rust thread-locals are still dropped (glibc's `exit` runs
    // them), but its end is skipped — mimalloc's per-thread teardown,
    // which hands pages back to the kernel — and so are the join and the
    // main thread's wake-up.
    scl_ide::with_compiler_stack(|| -> () { std::process::exit(commands::main()) });
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

/// Arena memory committed when the arena is reserved (mimalloc's own
/// default, `2`: eagerly where the kernel overcommits, as Linux does by
/// default; `0` commits each 64 KiB as it is first used). Committing as
/// used costs an `mprotect` per step, which takes the kernel's
/// `mmap_lock` for writing and so makes the other thread's page faults
/// wait: at N = 20000 on two cores, about 600 of the run's 1,000 blocking
/// waits were the two meeting there, and eager commit made `sclc ir` 5 %
/// faster (`bench/README.md`). Its fixed cost was huge pages: the first
/// arena, one mapping, got two 2 MiB pages (3.6 MiB more for a three-line
/// file) before `main` turned them off, so [`tune_allocator`] turns them
/// off first.
#[cfg(not(feature = "sysalloc"))]
const ARENA_EAGER_COMMIT: std::ffi::c_long = 2;

/// How long mimalloc keeps memory freed in whole pages before it returns
/// it to the kernel, in milliseconds (its default is 1,000: longer than a
/// whole `sclc ir` of 5,000 modules, which then holds every page it ever
/// freed).
#[cfg(not(feature = "sysalloc"))]
const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Sets mimalloc up for a compiler: transparent huge pages off for the
/// process ([`no_huge_pages`]), arena memory committed as the arena is
/// reserved ([`ARENA_EAGER_COMMIT`]), and freed pages given back to the
/// kernel after [`PURGE_DELAY_MS`].
/// Runs as the program is loaded (an ELF `.init_array` entry, like a C
/// constructor), before Rust's runtime makes the first allocation, which
/// reserves mimalloc's first arena and touches its first pages: done in
/// `main`, both the options and the huge pages came too late for that
/// arena. Which constructor runs first depends on the C compiler
/// (mimalloc's own has no priority under gcc, priority 101 under clang);
/// one that allocated before this one would show in the tests
/// `the_allocator_is_tuned_before_it_starts` (an option set too late
/// reads as mimalloc's environment value) and `sclc_holds_no_huge_page`.
#[cfg(all(target_os = "linux", not(feature = "sysalloc")))]
extern "C" fn tune_allocator() {
    no_huge_pages();
    // SAFETY: `mi_option_set` only stores an integer in mimalloc's option
    // table (it needs no initialized heap); both numbers name options of
    // the linked mimalloc (tested).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, ARENA_EAGER_COMMIT);
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
/// samples in the kernel's `clear_page` (`bench/README.md`); with them on
/// at N = 20000, the faults fell from 109,000 to 19,000 but the kernel's
/// time nearly doubled and the run was 20 % slower. Failure (an old
/// kernel, a seccomp filter) changes nothing but memory use, so it is
/// ignored. Makes no allocation (one `prctl` system call: it runs before
/// the allocator is set up).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

#[cfg(all(test, not(feature = "sysalloc")))]
mod tests {
    use super::*;
    use std::alloc::{GlobalAlloc, Layout};

    /// Every block `Mimalloc` gives, plain or aligned, fresh, zeroed or
    /// resized, has the alignment its layout asks for, and a resize keeps
    /// the bytes: sizes across mimalloc's small, medium and large classes
    /// (the word-sized ones that are not 16-aligned among them),
    /// alignments from 1 byte to 4 KiB.
    #[test]
    fn blocks_have_the_alignment_asked_for() {
        let sizes = [1, 7, 8, 9, 24, 40, 100, 1000, 5000, 70_000, 1 << 20];
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in sizes {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes, valid layouts; each block is
                // freed with the layout it has.
                unsafe {
                    let p = GLOBAL.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size} bytes aligned {align}");
                    p.write_bytes(0xa5, size);
                    let grown = size * 3 + 5;
                    let q = GLOBAL.realloc(p, layout, grown);
                    assert_eq!(q as usize % align, 0, "realloc to {grown} aligned {align}");
                    assert!(
                        (0..size).all(|i| *q.add(i) == 0xa5),
                        "realloc kept the bytes"
                    );
                    GLOBAL.dealloc(q, Layout::from_size_align(grown, align).unwrap());
                    let z = GLOBAL.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zalloc {size} aligned {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "zeroed");
                    GLOBAL.dealloc(z, layout);
                }
            }
        }
    }
}
