//! The one stack size every front end runs the compiler on.
//!
//! Parsing and evaluation recurse once per level of nesting in the source;
//! nesting is limited (256 levels, `E0007`) and chains of one operator are
//! flat, so the depth the pipeline needs is bounded. That bound must hold on
//! every thread that runs the pipeline — the CLI's, the tests', the language
//! server's workers — so they all go through [`with_compiler_stack`] instead
//! of relying on the platform's default (8 MiB for the main thread, 2 MiB for
//! spawned threads).

/// The stack size, in bytes, of a thread that runs the compiler: 512 MiB.
///
/// Only the pages the pipeline touches are committed, so the size costs
/// address space, not memory.
pub const COMPILER_STACK_SIZE: usize = 512 << 20;

/// How many threads the machine runs at once for this process
/// (`std::thread::available_parallelism`, 1 when unknown), asked once per
/// process: on Linux each ask reads the affinity mask and the cgroup's CPU
/// quota (three files, about ten system calls), and a check asks before
/// each of its parallel phases.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `f` on a new thread whose stack is [`COMPILER_STACK_SIZE`] bytes and
/// returns its result. `f` may borrow from the caller (the thread is scoped).
///
/// # Panics
/// Re-raises a panic of `f` on the calling thread, and panics if the
/// operating system cannot create the thread.
pub fn with_compiler_stack<F, R>(f: F) -> R
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("sclc-compiler".into())
            .stack_size(COMPILER_STACK_SIZE)
            .spawn_scoped(s, f)
            .expect("create the compiler thread");
        match handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_a_big_stack_and_borrows() {
        let data = [1u8; 10];
        // 64 MiB of stack in one frame would overflow a default thread.
        let sum = with_compiler_stack(|| {
            let big = [1u8; 64 << 20];
            std::hint::black_box(&big)
                .iter()
                .map(|&b| b as usize)
                .sum::<usize>()
                + data.len()
        });
        assert_eq!(sum, (64 << 20) + 10);
    }

    #[test]
    fn panics_propagate() {
        let r = std::panic::catch_unwind(|| with_compiler_stack(|| panic!("boom")));
        assert!(r.is_err());
    }
}
