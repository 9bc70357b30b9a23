//! Which CPU each thread of a parallel phase runs on.
//!
//! The compiler's parallel phases (the root's read-ahead, the preload's
//! levels, the imports on every core, a check's second thread) are short:
//! a few milliseconds each at 1,000 modules. Left to the scheduler, a
//! thread that starts or wakes is often put on the CPU of the thread that
//! woke it and waits there while another CPU idles: Linux prefers the
//! waker's CPU when the two share a cache (`select_idle_sibling`, and on
//! some virtual machines a vCPU-packing policy), and moves a waiting
//! thread only at its next load balance, which may be milliseconds away.
//! Measured on a 2-vCPU virtual machine at 1,000 modules: a read-ahead
//! thread waited 2.0 ms to run, a preload share 0.8 ms, and the second CPU
//! idled through 25–45 % of a run.
//!
//! A [`Spread`] takes that choice away for the workers of one phase. A
//! new thread starts on a CPU its creator's affinity mask allows, so the
//! creator hands each worker a CPU by being there as it starts it: it pins
//! itself to the CPU it is on, starts the worker (which inherits that
//! one-CPU mask and keeps it: workers end with their phase), pins itself
//! to the next CPU, which moves it there and leaves the first CPU to the
//! worker, and takes its own mask back at once. On two CPUs the creator
//! moves once per phase and no worker waits for the CPU its creator
//! holds. (A worker that pinned itself would first have to run on its
//! creator's CPU to do so: that is the wait this module removes, measured
//! at 0.8–2.0 ms. Keeping the creator pinned for the whole phase measured
//! the same, 40.9 against 41.4 ms, and would hold it on one CPU for
//! milliseconds.) The cost is the other side of the same choice: a worker
//! pinned to a CPU that another process keeps busy waits for its turn
//! there instead of moving, for at most its phase.
//!
//! The CPUs are those of the creator's mask when the phase begins, read
//! each time: a mask narrowed from outside (`taskset -p` on a running
//! language server) is obeyed by the next phase, and by the next worker
//! of a phase (a worker starts where the creator's mask allows). The
//! creator is pinned only for the microseconds of starting a worker; it
//! then takes back the mask it had just before, also when starting the
//! thread panics. A mask set from outside in those microseconds is lost.
//!
//! On other systems than Linux, for a thread whose mask has one CPU (a
//! worker of another phase, a process run under `taskset -c N`), and
//! whenever the operating system refuses a call, everything here does
//! nothing: where threads run never changes an answer.

use std::cell::Cell;

/// A parallel phase whose threads each run on their own CPU. Made by the
/// thread that starts the phase's workers (the creator), which starts each
/// of them with [`Spread::spawn`]. Not `Sync`: only the creator uses it.
pub struct Spread {
    /// The CPUs of the creator's mask when the phase began, starting with
    /// the one it was running on; empty when there is nothing to spread.
    cpus: Vec<usize>,
    /// How many workers were started.
    started: Cell<usize>,
}

impl Spread {
    /// Starts a phase. Asks [`crate::cores`] first: it reads the calling
    /// thread's mask, which must still be the process's. Pins nothing;
    /// never fails (a refused call leaves a `Spread` that changes nothing).
    pub fn begin() -> Spread {
        let _ = crate::cores();
        Spread {
            cpus: imp::cpus_from_here(),
            started: Cell::new(0),
        }
    }

    /// Starts one worker of the phase: a [`crate::compiler_thread`] in
    /// `scope` that runs `f`, on the next CPU (how: [`Spread::start`]).
    /// Errors: the thread could not be created (`io::Error`; the caller
    /// then does its share itself).
    pub fn spawn<'scope, T, F>(
        &self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        f: F,
    ) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.start(|| crate::compiler_thread().spawn_scoped(scope, f))
    }

    /// Starts one worker: `spawn` (which creates the thread, and returns
    /// what it returns) runs with the creator pinned to the next CPU, so
    /// the worker starts there and stays; the creator then pins itself to
    /// the CPU after, which moves it there, and takes its own mask back.
    /// Once every CPU but the last has a worker, or when the creator's
    /// mask no longer holds both CPUs, the worker starts with the
    /// creator's mask (the scheduler's choice).
    fn start<T>(&self, spawn: impl FnOnce() -> T) -> T {
        let i = self.started.get();
        self.started.set(i + 1);
        match (self.cpus.get(i), self.cpus.get(i + 1)) {
            (Some(&here), Some(&next)) => imp::hand_over(here, next, spawn),
            _ => spawn(),
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    /// The calling thread's affinity mask (`sched_getaffinity(2)`), if
    /// the system gives it.
    pub(super) fn get() -> Option<libc::cpu_set_t> {
        // SAFETY: `cpu_set_t` is plain data (all zeroes is the empty set);
        // the call writes at most `size_of::<cpu_set_t>()` bytes into it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let ok = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            (ok == 0).then_some(set)
        }
    }

    /// Sets the calling thread's affinity mask (`sched_setaffinity(2)`);
    /// false when refused.
    pub(super) fn set(set: &libc::cpu_set_t) -> bool {
        // SAFETY: reads `size_of::<cpu_set_t>()` bytes of a valid set.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == 0 }
    }

    /// Pins the calling thread to `cpu`; false when refused.
    pub(super) fn pin(cpu: usize) -> bool {
        // SAFETY: as in `get`; `CPU_SET` ignores a CPU past the set's end.
        let only = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            set
        };
        set(&only)
    }

    /// Whether `set` holds `cpu`.
    fn has(set: &libc::cpu_set_t, cpu: usize) -> bool {
        // SAFETY: `CPU_ISSET` reads within the set (it checks `cpu`).
        cpu < 8 * std::mem::size_of::<libc::cpu_set_t>() && unsafe { libc::CPU_ISSET(cpu, set) }
    }

    /// The CPUs in the calling thread's mask, in order (none when unknown).
    pub(super) fn mask_cpus() -> Vec<usize> {
        let Some(set) = get() else {
            return Vec::new();
        };
        (0..8 * std::mem::size_of::<libc::cpu_set_t>())
            .filter(|&cpu| has(&set, cpu))
            .collect()
    }

    /// The CPUs of the calling thread's mask, starting with the one it
    /// runs on (`sched_getcpu(3)`) and going round; none when the mask
    /// has one CPU or either call fails.
    pub(super) fn cpus_from_here() -> Vec<usize> {
        let cpus = mask_cpus();
        // SAFETY: no arguments; -1 on error.
        let here = usize::try_from(unsafe { libc::sched_getcpu() }).ok();
        match here.and_then(|h| cpus.iter().position(|&c| c == h)) {
            Some(at) if cpus.len() >= 2 => cpus[at..].iter().chain(&cpus[..at]).copied().collect(),
            _ => Vec::new(),
        }
    }

    /// Runs `spawn` pinned to `here`, then pins the calling thread to
    /// `next` and gives it back the mask it had (also when `spawn`
    /// panics). Only `spawn` when the mask is unknown, does not hold both
    /// CPUs, or the first pin is refused.
    pub(super) fn hand_over<T>(here: usize, next: usize, spawn: impl FnOnce() -> T) -> T {
        struct Back(libc::cpu_set_t);
        impl Drop for Back {
            fn drop(&mut self) {
                set(&self.0);
            }
        }
        let Some(mine) = get() else {
            return spawn();
        };
        if !has(&mine, here) || !has(&mine, next) || !pin(here) {
            return spawn();
        }
        let _back = Back(mine);
        let worker = spawn();
        pin(next);
        worker
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn cpus_from_here() -> Vec<usize> {
        Vec::new()
    }

    pub(super) fn hand_over<T>(_here: usize, _next: usize, spawn: impl FnOnce() -> T) -> T {
        spawn()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// On a thread of its own (the test harness's threads stay as they
    /// are): the workers of a `Spread` start each on one CPU of its own,
    /// none on the CPU the creator ends on, a worker past the process's
    /// CPUs starts with the creator's mask, and the creator has its own
    /// mask after each start.
    #[test]
    fn a_spread_starts_its_threads_apart_and_gives_the_mask_back() {
        std::thread::spawn(|| {
            let before = imp::mask_cpus();
            let spread = Spread::begin();
            std::thread::scope(|s| {
                let workers: Vec<_> = (1..before.len())
                    .map(|_| {
                        let w = spread.spawn(s, imp::mask_cpus).unwrap();
                        assert_eq!(imp::mask_cpus(), before, "the creator's own mask");
                        w
                    })
                    .collect();
                let mut seen: Vec<usize> = workers
                    .into_iter()
                    .map(|h| match h.join().unwrap()[..] {
                        [cpu] => cpu,
                        ref other => panic!("a worker on one CPU, not {other:?}"),
                    })
                    .collect();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), before.len().saturating_sub(1), "one CPU each");
                let past = spread.spawn(s, imp::mask_cpus).unwrap();
                assert_eq!(
                    past.join().unwrap(),
                    before,
                    "past the CPUs: as the creator"
                );
                assert_eq!(imp::mask_cpus(), before);
            });
            drop(spread);
            assert_eq!(imp::mask_cpus(), before);
        })
        .join()
        .unwrap();
    }

    /// A phase inside another's (started between two of its workers)
    /// leaves the creator's mask as it found it.
    #[test]
    fn nested_spreads_leave_the_mask_as_they_found_it() {
        std::thread::spawn(|| {
            let before = imp::mask_cpus();
            let outer = Spread::begin();
            std::thread::scope(|s| {
                let a = outer.spawn(s, || ()).unwrap();
                let inner = Spread::begin();
                inner.spawn(s, || ()).unwrap().join().unwrap();
                drop(inner);
                assert_eq!(imp::mask_cpus(), before);
                a.join().unwrap();
                outer.spawn(s, || ()).unwrap().join().unwrap();
            });
            drop(outer);
            assert_eq!(imp::mask_cpus(), before);
        })
        .join()
        .unwrap();
    }

    /// A thread whose mask was narrowed to one CPU (by `taskset -p`, or as
    /// a worker) stays on it, and so do its workers: the CPUs are read
    /// from the creator's mask at each phase, not kept from the first.
    #[test]
    fn a_narrowed_mask_is_obeyed() {
        std::thread::spawn(|| {
            let cpus = imp::mask_cpus();
            drop(Spread::begin());
            let Some(&last) = cpus.last() else { return };
            assert!(imp::pin(last));
            let spread = Spread::begin();
            std::thread::scope(|s| {
                let worker = spread.spawn(s, imp::mask_cpus).unwrap();
                assert_eq!(worker.join().unwrap(), [last]);
                assert_eq!(imp::mask_cpus(), [last]);
            });
            drop(spread);
            assert_eq!(imp::mask_cpus(), [last]);
        })
        .join()
        .unwrap();
    }

    /// A mask narrowed between the start of a phase and a worker's start
    /// is obeyed by the worker and kept by the creator, and starting a
    /// thread that panics leaves the creator's mask as it was.
    #[test]
    fn a_mask_narrowed_during_a_phase_is_kept() {
        std::thread::spawn(|| {
            let cpus = imp::mask_cpus();
            if cpus.len() < 2 {
                return;
            }
            let panicked =
                std::panic::catch_unwind(|| Spread::begin().start(|| panic!("no thread")));
            assert!(panicked.is_err());
            assert_eq!(imp::mask_cpus(), cpus, "given back after a panic");
            let spread = Spread::begin();
            // Narrowed to the CPU after the creator's: without the check,
            // the worker would start on the creator's.
            let last = spread.cpus[1];
            assert!(imp::pin(last));
            std::thread::scope(|s| {
                let worker = spread.spawn(s, imp::mask_cpus).unwrap();
                assert_eq!(worker.join().unwrap(), [last]);
            });
            drop(spread);
            assert_eq!(imp::mask_cpus(), [last], "narrowed during the phase: kept");
        })
        .join()
        .unwrap();
    }
}
