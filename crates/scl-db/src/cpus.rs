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
//! A [`Spread`] takes that choice away for the length of one phase. A
//! new thread starts on a CPU its creator's affinity mask allows, so the
//! creator hands each worker a CPU by being there as it starts it: it pins
//! itself to the CPU it is on, starts the first worker (which inherits that
//! one-CPU mask), then pins itself to the next CPU, which moves it there
//! and leaves the first CPU to the worker; and so on, one CPU per worker.
//! On two CPUs the creator moves once per phase and no worker ever waits
//! for a CPU another thread of the phase holds. (A worker that pinned
//! itself would first have to run on its creator's CPU to do so: that is
//! the wait this module removes, measured at 0.8–2.0 ms.) When the phase
//! ends (the `Spread` is dropped, after its workers are joined) the
//! creator's own mask is back as it was; the workers end with the phase.
//! The cost is the other side of the same choice: a thread pinned to a CPU
//! that another process keeps busy waits for its turn there instead of
//! moving, for at most the phase.
//!
//! The CPUs are those of the creator's mask when the phase begins, read
//! each time: a mask narrowed from outside (`taskset -p` on a running
//! language server) is obeyed by the next phase. A mask set from outside
//! while a phase runs is kept: the creator's mask is given back at the
//! end only if it is still the one-CPU mask the phase set. (Narrowed to
//! exactly that CPU from outside during the phase, it is taken for the
//! phase's own and widened again: the one case the check cannot tell.)
//!
//! On other systems than Linux, for a thread whose mask has one CPU (a
//! worker of another phase, a process run under `taskset -c N`), and
//! whenever the operating system refuses a call, everything here does
//! nothing: where threads run never changes an answer.

use std::cell::Cell;

/// A parallel phase whose threads each run on their own CPU. Made by the
/// thread that starts the phase's workers (the creator), which starts each
/// of them with [`Spread::spawn`]; drop it after they are joined: it
/// gives the creator back its own affinity mask. Not `Sync`: only the
/// creator uses it.
pub struct Spread {
    /// The creator's affinity mask before the phase, to give back.
    #[cfg(target_os = "linux")]
    saved: Option<libc::cpu_set_t>,
    /// The CPUs of the creator's mask at the start, starting with the
    /// one it was running on.
    cpus: Vec<usize>,
    /// How many workers were started.
    started: Cell<usize>,
    /// The CPU the phase last pinned the creator to, while it is pinned.
    pinned: Cell<Option<usize>>,
}

impl Spread {
    /// Starts a phase. Asks [`crate::cores`] first: it reads the calling
    /// thread's mask, which must still be the process's. Pins nothing yet;
    /// never fails (a refused call leaves a `Spread` that changes nothing).
    pub fn begin() -> Spread {
        let _ = crate::cores();
        imp::begin()
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
    /// the worker starts there and stays; the creator then moves on to
    /// the CPU after. Once every CPU but the last has a worker, a further
    /// worker starts with the creator's own mask (the scheduler's choice),
    /// and the creator keeps it too.
    fn start<T>(&self, spawn: impl FnOnce() -> T) -> T {
        let i = self.started.get();
        self.started.set(i + 1);
        match (self.cpus.get(i), self.cpus.get(i + 1)) {
            (Some(&here), Some(&next)) => {
                self.pin(here);
                let worker = spawn();
                self.pin(next);
                worker
            }
            _ => {
                self.give_back();
                spawn()
            }
        }
    }

    /// Pins the creator to `cpu`, and remembers it if that worked.
    fn pin(&self, cpu: usize) {
        if imp::pin(cpu) {
            self.pinned.set(Some(cpu));
        }
    }

    /// Gives the creator its mask from before the phase, if the phase
    /// pinned it and its mask is still that pin (see the module's docs).
    fn give_back(&self) {
        #[cfg(target_os = "linux")]
        if let (Some(saved), Some(cpu)) = (&self.saved, self.pinned.take()) {
            if imp::mask_cpus() == [cpu] {
                imp::set(saved);
            }
        }
    }
}

impl Drop for Spread {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::Spread;
    use std::cell::Cell;

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
    /// a refusal is ignored.
    pub(super) fn set(set: &libc::cpu_set_t) {
        // SAFETY: reads `size_of::<cpu_set_t>()` bytes of a valid set.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
        }
    }

    /// Pins the calling thread to `cpu`; false when refused.
    pub(super) fn pin(cpu: usize) -> bool {
        // SAFETY: as in `set`.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &only(cpu)) == 0
        }
    }

    fn only(cpu: usize) -> libc::cpu_set_t {
        // SAFETY: as in `get`; `CPU_SET` ignores a CPU past the set's end.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            set
        }
    }

    /// The CPUs in the calling thread's mask, in order (none when unknown).
    pub(super) fn mask_cpus() -> Vec<usize> {
        get().map_or_else(Vec::new, |set| cpus_in(&set))
    }

    /// The CPUs in `set`, in order.
    fn cpus_in(set: &libc::cpu_set_t) -> Vec<usize> {
        let size = 8 * std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `CPU_ISSET` reads the set within its size.
        (0..size)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, set) })
            .collect()
    }

    /// The CPU the calling thread is running on (`sched_getcpu(3)`).
    pub(super) fn current() -> Option<usize> {
        // SAFETY: no arguments; -1 on error.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }

    pub(super) fn begin() -> Spread {
        let nothing = || Spread {
            saved: None,
            cpus: Vec::new(),
            started: Cell::new(0),
            pinned: Cell::new(None),
        };
        let (Some(saved), Some(here)) = (get(), current()) else {
            return nothing();
        };
        let cpus = cpus_in(&saved);
        let Some(at) = cpus.iter().position(|&c| c == here) else {
            return nothing();
        };
        if cpus.len() < 2 {
            return nothing();
        }
        // The creator's CPU first (its first worker starts where it is),
        // then the ones after it, round.
        Spread {
            saved: Some(saved),
            cpus: cpus[at..].iter().chain(&cpus[..at]).copied().collect(),
            started: Cell::new(0),
            pinned: Cell::new(None),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Spread;
    use std::cell::Cell;

    pub(super) fn pin(_cpu: usize) -> bool {
        false
    }

    pub(super) fn begin() -> Spread {
        Spread {
            cpus: Vec::new(),
            started: Cell::new(0),
            pinned: Cell::new(None),
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// On a thread of its own (the test harness's threads stay as they
    /// are): each worker of a `Spread` starts on one CPU of its own, the
    /// creator is then on the one CPU no worker has, a worker past the
    /// process's CPUs starts with the creator's mask (and the creator has
    /// it again), and after the phase the creator's mask is the one it had.
    #[test]
    fn a_spread_starts_its_threads_apart_and_gives_the_mask_back() {
        std::thread::spawn(|| {
            let before = imp::mask_cpus();
            let cpus = before.clone();
            let spread = Spread::begin();
            std::thread::scope(|s| {
                let pinned: Vec<_> = (1..cpus.len())
                    .map(|_| spread.spawn(s, imp::mask_cpus).unwrap())
                    .collect();
                let mut seen: Vec<Vec<usize>> =
                    pinned.into_iter().map(|h| h.join().unwrap()).collect();
                seen.push(imp::mask_cpus());
                let one = |m: &Vec<usize>| match m.as_slice() {
                    [cpu] => *cpu,
                    other => panic!("a thread on one CPU, not {other:?}"),
                };
                let mut seen: Vec<usize> = seen.iter().map(one).collect();
                seen.sort_unstable();
                assert_eq!(seen, cpus, "every CPU once (none on one CPU)");
                let past = spread.spawn(s, imp::mask_cpus).unwrap();
                assert_eq!(
                    past.join().unwrap(),
                    before,
                    "past the CPUs: as the creator"
                );
                assert_eq!(imp::mask_cpus(), before);
            });
            drop(spread);
            assert_eq!(imp::mask_cpus(), before, "the mask is given back");
        })
        .join()
        .unwrap();
    }

    /// A phase inside a phase gives back the outer phase's pin, and the
    /// outer phase then the mask from before both.
    #[test]
    fn nested_spreads_give_back_in_order() {
        std::thread::spawn(|| {
            let before = imp::mask_cpus();
            let outer = Spread::begin();
            std::thread::scope(|s| outer.spawn(s, || ()).unwrap().join().unwrap());
            let pinned = imp::mask_cpus();
            let inner = Spread::begin();
            std::thread::scope(|s| inner.spawn(s, || ()).unwrap().join().unwrap());
            drop(inner);
            assert_eq!(imp::mask_cpus(), pinned);
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

    /// A mask set from outside while a phase runs (here by the thread
    /// itself, to another CPU than the phase's pin) is kept when the
    /// phase ends.
    #[test]
    fn a_mask_set_during_a_phase_is_kept() {
        std::thread::spawn(|| {
            let cpus = imp::mask_cpus();
            if cpus.len() < 2 {
                return;
            }
            let spread = Spread::begin();
            std::thread::scope(|s| spread.spawn(s, || ()).unwrap().join().unwrap());
            let [pinned] = imp::mask_cpus()[..] else {
                panic!("the creator is pinned after starting a worker")
            };
            let other = cpus.iter().copied().find(|&c| c != pinned).unwrap();
            assert!(imp::pin(other));
            drop(spread);
            assert_eq!(imp::mask_cpus(), [other]);
        })
        .join()
        .unwrap();
    }
}
