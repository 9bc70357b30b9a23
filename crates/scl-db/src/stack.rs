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

/// How many threads this process can run at once
/// (`std::thread::available_parallelism`: the affinity mask and the
/// cgroup's CPU quota; 1 when unknown), asked once and kept for the life of
/// the process: on Linux each ask reads three files (about ten system
/// calls), and a check asks before each of its parallel phases. A later
/// change of the quota or the affinity (`taskset -p`, a container resized
/// in place) is not seen: it changes only how many threads share the work,
/// never an answer.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A builder of a thread that runs any part of the compiler (parsing,
/// resolution, checks, evaluation): a stack of [`COMPILER_STACK_SIZE`], so
/// that the bound above holds on it too (a spawned thread's default is
/// 2 MiB). Spawning may fail (`io::Error`): callers then do the work on
/// the thread they are on.
pub fn compiler_thread() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(COMPILER_STACK_SIZE)
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
        let handle = compiler_thread()
            .name("sclc-compiler".into())
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

    /// The sum of a 64 MiB array of ones held in one stack frame: more
    /// than a default thread's stack (8 MiB main, 2 MiB spawned) holds.
    fn sum_of_a_64_mib_frame() -> usize {
        let big = [1u8; 64 << 20];
        std::hint::black_box(&big)
            .iter()
            .map(|&b| b as usize)
            .sum::<usize>()
    }

    #[test]
    fn runs_on_a_big_stack_and_borrows() {
        let data = [1u8; 10];
        let sum = with_compiler_stack(|| sum_of_a_64_mib_frame() + data.len());
        assert_eq!(sum, (64 << 20) + 10);
    }

    /// A thread of `compiler_thread` has the compiler's stack.
    #[test]
    fn compiler_threads_have_the_compiler_stack() {
        let sum = std::thread::scope(|s| {
            compiler_thread()
                .spawn_scoped(s, sum_of_a_64_mib_frame)
                .unwrap()
                .join()
                .unwrap()
        });
        assert_eq!(sum, 64 << 20);
    }

    #[test]
    fn panics_propagate() {
        let r = std::panic::catch_unwind(|| with_compiler_stack(|| panic!("boom")));
        assert!(r.is_err());
    }
}
