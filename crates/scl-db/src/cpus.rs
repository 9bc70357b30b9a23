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
//! On two CPUs the creator moves once per phase and no thread of the phase
//! waits for a CPU another one holds, also when it wakes. (A worker that
//! pinned itself would first have to run on its creator's CPU to do so:
//! that is the wait this module removes, measured at 0.8–2.0 ms. A creator
//! that took its own mask back right after each start, instead of at the
//! end of the phase, measured 0.7–1.8 ms slower at 1,000 modules: woken by
//! a worker, it was put on the worker's CPU.) When the phase ends (the
//! `Spread` is dropped, after its workers are joined) the creator's own
//! mask is back as it was; the workers end with the phase. The cost is the
//! other side of the same choice: a thread pinned to a CPU that another
//! process keeps busy waits for its turn there instead of moving, for at
//! most the phase.
//!
//! A mask set from outside (`taskset -p` on a running language server) is
//! obeyed. The CPUs are read from the creator's mask at the start of each
//! phase. During a phase, a creator whose mask is no longer its own pin
//! starts no more workers apart and keeps that mask at the end; one whose
//! mask is its pin gets its old mask back, unless the process's first
//! thread (which `taskset -p` always sets) was narrowed to exactly that
//! CPU meanwhile: then it is taken for `taskset -a -p` and kept.
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
/// creator uses it. `Spread::default()` spreads nothing.
#[derive(Default)]
pub struct Spread {
    /// The creator's mask at the start, to give back; `None` when there
    /// is nothing to spread.
    #[cfg(target_os = "linux")]
    saved: Option<libc::cpu_set_t>,
    /// The CPUs of the process's first thread at the start (`None` when
    /// the creator is that thread).
    #[cfg(target_os = "linux")]
    leader: Option<Vec<usize>>,
    /// The CPUs of the creator's mask at the start, starting with the one
    /// it was running on.
    cpus: Vec<usize>,
    /// How many workers were started.
    started: Cell<usize>,
    /// The CPU the creator pinned itself to, while the phase holds it
    /// there; `None` before the first start and once it stopped spreading.
    pinned: Cell<Option<usize>>,
    /// Set when the phase stopped spreading (its mask was set from
    /// outside, or a pin was refused): later workers start as the creator.
    stopped: Cell<bool>,
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
    /// which the creator has back. Once the creator's mask was set from
    /// outside (see the module's docs), the phase stops spreading: this
    /// and later workers start with that mask, and the creator keeps it.
    fn start<T>(&self, spawn: impl FnOnce() -> T) -> T {
        let i = self.started.get();
        self.started.set(i + 1);
        if self.stopped.get() {
            return spawn();
        }
        let (Some(&here), Some(&next)) = (self.cpus.get(i), self.cpus.get(i + 1)) else {
            self.give_back();
            return spawn();
        };
        // After the first start the creator is at `here` already.
        let held = match self.pinned.get() {
            None if i == 0 => imp::pin(here),
            Some(cpu) => cpu == here && !self.set_from_outside(cpu),
            None => false,
        };
        if !held {
            self.give_back();
            self.stopped.set(true);
            return spawn();
        }
        self.pinned.set(Some(here));
        let worker = spawn();
        // A mask set from outside while the thread started is kept (the
        // creator stays where it was put; the phase stops spreading).
        if self.set_from_outside(here) {
            self.pinned.set(None);
            self.stopped.set(true);
        } else if imp::pin(next) {
            self.pinned.set(Some(next));
        }
        worker
    }

    /// Whether the creator's mask, which the phase pinned to `cpu`, was
    /// set from outside since: it is not that pin any more, or the
    /// process's first thread (which `taskset -p` always sets) was
    /// narrowed to exactly that CPU since the phase began (`taskset -a
    /// -p`, which set the creator to the same mask).
    fn set_from_outside(&self, cpu: usize) -> bool {
        #[cfg(target_os = "linux")]
        {
            imp::mask_cpus() != [cpu]
                || self.leader.as_ref().is_some_and(|was| {
                    let now = imp::leader_cpus();
                    now != *was && now == [cpu]
                })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = cpu;
            true
        }
    }

    /// Gives the creator its mask from before the phase, if the phase
    /// holds it pinned and nothing set its mask from outside (see the
    /// module's docs).
    fn give_back(&self) {
        let Some(cpu) = self.pinned.take() else {
            return;
        };
        if self.set_from_outside(cpu) {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(saved) = &self.saved {
            imp::set(saved);
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

    /// The affinity mask of thread `tid` (0: the calling thread), from
    /// `sched_getaffinity(2)`, if the system gives it.
    fn get_of(tid: libc::pid_t) -> Option<libc::cpu_set_t> {
        // SAFETY: `cpu_set_t` is plain data (all zeroes is the empty set);
        // the call writes at most `size_of::<cpu_set_t>()` bytes into it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let ok = libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
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
        // SAFETY: as in `get_of`; `CPU_SET` ignores a CPU past the set's end.
        let only = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            set
        };
        set(&only)
    }

    /// The CPUs in `set`, in order.
    fn cpus_in(set: &libc::cpu_set_t) -> Vec<usize> {
        // SAFETY: `CPU_ISSET` reads the set within its size.
        (0..8 * std::mem::size_of::<libc::cpu_set_t>())
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, set) })
            .collect()
    }

    /// The CPUs in the mask of thread `tid` (0: the calling thread), in
    /// order (none when unknown).
    fn cpus_of(tid: libc::pid_t) -> Vec<usize> {
        get_of(tid).map_or_else(Vec::new, |set| cpus_in(&set))
    }

    /// The CPUs in the calling thread's mask, in order (none when unknown).
    pub(super) fn mask_cpus() -> Vec<usize> {
        cpus_of(0)
    }

    /// The CPUs in the mask of the process's first thread (none when
    /// unknown).
    pub(super) fn leader_cpus() -> Vec<usize> {
        // SAFETY: no arguments.
        cpus_of(unsafe { libc::getpid() })
    }

    pub(super) fn begin() -> Spread {
        let Some(saved) = get_of(0) else {
            return Spread::default();
        };
        let cpus = cpus_in(&saved);
        // SAFETY: no arguments; -1 on error.
        let here = usize::try_from(unsafe { libc::sched_getcpu() }).ok();
        let Some(at) = here.and_then(|h| cpus.iter().position(|&c| c == h)) else {
            return Spread::default();
        };
        if cpus.len() < 2 {
            return Spread::default();
        }
        // SAFETY: no arguments.
        let leader = (unsafe { libc::gettid() != libc::getpid() }).then(leader_cpus);
        // The creator's CPU first (its first worker starts where it is),
        // then the ones after it, round.
        let mut spread = Spread::default();
        spread.saved = Some(saved);
        spread.leader = leader;
        spread.cpus = cpus[at..].iter().chain(&cpus[..at]).copied().collect();
        spread
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Spread;

    pub(super) fn pin(_cpu: usize) -> bool {
        false
    }

    pub(super) fn begin() -> Spread {
        Spread::default()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Runs `f` on a thread of its own: the test harness's threads keep
    /// their masks whatever a test does.
    fn on_own_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().unwrap();
    }

    /// Runs `f` as [`on_own_thread`] does, given the thread's CPUs, when
    /// it may run on two or more (nothing to spread otherwise).
    fn on_own_thread_with_cpus(f: impl FnOnce(Vec<usize>) + Send + 'static) {
        on_own_thread(|| {
            let cpus = imp::mask_cpus();
            if cpus.len() >= 2 {
                f(cpus);
            }
        });
    }

    /// The mask a worker of `spread` starts with.
    fn worker_mask<'scope>(
        spread: &Spread,
        s: &'scope std::thread::Scope<'scope, '_>,
    ) -> Vec<usize> {
        spread.spawn(s, imp::mask_cpus).unwrap().join().unwrap()
    }

    /// The one CPU of a one-CPU mask.
    fn one(mask: &[usize]) -> usize {
        match mask {
            [cpu] => *cpu,
            other => panic!("a thread on one CPU, not {other:?}"),
        }
    }

    /// Each worker starts on one CPU of its own, the creator is then on
    /// the one CPU no worker has, a worker past the CPUs starts with the
    /// creator's mask (which it has back), and after the phase the
    /// creator's mask is the one it had.
    #[test]
    fn a_spread_starts_its_threads_apart_and_gives_the_mask_back() {
        on_own_thread(|| {
            let before = imp::mask_cpus();
            let spread = Spread::begin();
            std::thread::scope(|s| {
                let workers: Vec<_> = (1..before.len())
                    .map(|_| spread.spawn(s, imp::mask_cpus).unwrap())
                    .collect();
                let mut seen: Vec<usize> = workers
                    .into_iter()
                    .map(|h| one(&h.join().unwrap()))
                    .collect();
                if before.len() >= 2 {
                    seen.push(one(&imp::mask_cpus()));
                } else {
                    assert_eq!(imp::mask_cpus(), before, "one CPU: nothing changes");
                    seen = before.clone();
                }
                seen.sort_unstable();
                assert_eq!(seen, before, "every CPU once");
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
        });
    }

    /// A phase begun by a pinned creator (inside another phase) spreads
    /// nothing, and the outer phase then gives back the mask from before.
    #[test]
    fn a_phase_inside_a_phase_changes_nothing() {
        on_own_thread(|| {
            let before = imp::mask_cpus();
            let outer = Spread::begin();
            std::thread::scope(|s| outer.spawn(s, || ()).unwrap().join().unwrap());
            let pinned = imp::mask_cpus();
            let inner = Spread::begin();
            std::thread::scope(|s| {
                assert_eq!(worker_mask(&inner, s), pinned);
            });
            drop(inner);
            assert_eq!(imp::mask_cpus(), pinned);
            drop(outer);
            assert_eq!(imp::mask_cpus(), before);
        });
    }

    /// A mask narrowed between phases (`taskset -p` on a running server)
    /// is obeyed by the next phase: the CPUs are read at each phase.
    #[test]
    fn a_mask_narrowed_between_phases_is_obeyed() {
        on_own_thread(|| {
            let cpus = imp::mask_cpus();
            drop(Spread::begin());
            let Some(&last) = cpus.last() else { return };
            assert!(imp::pin(last));
            let spread = Spread::begin();
            std::thread::scope(|s| {
                assert_eq!(worker_mask(&spread, s), [last]);
                assert_eq!(imp::mask_cpus(), [last]);
            });
            drop(spread);
            assert_eq!(imp::mask_cpus(), [last]);
        });
    }

    /// A mask set from outside during a phase (here by the creator, to
    /// another CPU than its pin) stops the spreading: the next worker
    /// starts with that mask, and the creator keeps it at the end.
    #[test]
    fn a_mask_set_during_a_phase_is_kept() {
        on_own_thread_with_cpus(|cpus| {
            let spread = Spread::begin();
            std::thread::scope(|s| {
                spread.spawn(s, || ()).unwrap().join().unwrap();
                let pinned = one(&imp::mask_cpus());
                let other = cpus.iter().copied().find(|&c| c != pinned).unwrap();
                assert!(imp::pin(other));
                assert_eq!(worker_mask(&spread, s), [other]);
                drop(spread);
                assert_eq!(imp::mask_cpus(), [other]);
            });
        });
    }

    /// A mask set from outside while a worker starts (here from inside
    /// `start`'s closure, where the thread would be created) is kept: the
    /// creator does not move on to the next CPU.
    #[test]
    fn a_mask_set_while_a_worker_starts_is_kept() {
        on_own_thread_with_cpus(|_| {
            let spread = Spread::begin();
            let other = spread.cpus[1];
            spread.start(|| {
                let here = one(&imp::mask_cpus());
                assert_ne!(here, other);
                // `taskset -a -p` to the creator's CPU would look the
                // same from this thread; another CPU is what it can tell.
                assert!(imp::pin(other));
            });
            assert_eq!(imp::mask_cpus(), [other]);
            drop(spread);
            assert_eq!(imp::mask_cpus(), [other]);
        });
    }

    /// A panic while starting a worker unwinds through the `Spread`,
    /// which gives the creator its mask back.
    #[test]
    fn a_panic_in_a_start_gives_the_mask_back() {
        on_own_thread(|| {
            let before = imp::mask_cpus();
            let r = std::panic::catch_unwind(|| Spread::begin().start(|| panic!("no thread")));
            assert!(r.is_err());
            assert_eq!(imp::mask_cpus(), before);
        });
    }
}
