//! A follower thread that works behind a leader on the same sequence:
//! the follower takes item `i` only once the leader has finished it, and
//! sleeps, when it catches up, until a batch of items is ready.
//!
//! Why: in the first check the leader evaluates the modules in post-order
//! and the follower runs each module's diagnostics, which read its values.
//! A follower that asks for a module the leader is still evaluating waits
//! inside salsa for that one result, and the leader must wake it when the
//! result is made: a futex wake on the evaluating thread's path for every
//! module. Measured at N = 1000 (the bench workload, two cores), a
//! follower trailing the chain that way made the chain 28 ms instead of
//! 21. Here the leader only stores a counter per item and wakes the
//! follower once per batch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::OnceLock;
use std::thread::Thread;

/// The progress of one leader over `len` items, and the follower waiting
/// on it (at most one follower).
pub(crate) struct Trail {
    len: usize,
    /// How many items, from the first, the leader has finished.
    done: AtomicUsize,
    /// The leader stopped before finishing them all (it unwound).
    abandoned: AtomicBool,
    /// While the follower sleeps: the count of finished items it waits for.
    want: AtomicUsize,
    /// Whether the follower is (about to be) asleep in `park`.
    asleep: AtomicBool,
    follower: OnceLock<Thread>,
}

impl Trail {
    /// A trail over `len` items, none finished.
    pub(crate) fn new(len: usize) -> Trail {
        Trail {
            len,
            done: AtomicUsize::new(0),
            abandoned: AtomicBool::new(false),
            want: AtomicUsize::new(0),
            asleep: AtomicBool::new(false),
            follower: OnceLock::new(),
        }
    }

    /// Leader: items `0..n` are finished. Wakes the follower when it
    /// sleeps and what it waits for is ready.
    pub(crate) fn finished(&self, n: usize) {
        self.done.store(n.min(self.len), SeqCst);
        self.wake_if(n.min(self.len) >= self.want.load(SeqCst));
    }

    /// Leader: it will finish no more items (it is unwinding); the
    /// follower's waits for items not finished return `false` from now on.
    pub(crate) fn abandon(&self) {
        if self.done.load(SeqCst) < self.len {
            self.abandoned.store(true, SeqCst);
            self.wake_if(true);
        }
    }

    fn wake_if(&self, ready: bool) {
        // Whoever clears the flag wakes the follower: a park that follows
        // returns at once (the token), so no wake-up is ever lost.
        if ready && self.asleep.swap(false, SeqCst) {
            if let Some(t) = self.follower.get() {
                t.unpark();
            }
        }
    }

    /// Follower: waits until the leader has finished item `i` (`i <
    /// len`); when it has to sleep, until `batch` items from `i` on are
    /// ready (or the last). `false`: the leader abandoned the trail
    /// before it finished item `i`. Called from one thread only.
    pub(crate) fn wait_for(&self, i: usize, batch: usize) -> bool {
        let me = self.follower.get_or_init(std::thread::current);
        debug_assert_eq!(me.id(), std::thread::current().id());
        loop {
            if self.done.load(SeqCst) > i {
                return true;
            }
            if self.abandoned.load(SeqCst) {
                return false;
            }
            self.want.store((i + batch.max(1)).min(self.len), SeqCst);
            self.asleep.store(true, SeqCst);
            // The leader may have finished in between: look again before
            // sleeping (it reads `asleep` after storing `done`).
            if self.done.load(SeqCst) > i || self.abandoned.load(SeqCst) {
                self.asleep.store(false, SeqCst);
                continue;
            }
            std::thread::park();
        }
    }
}

/// Abandons `trail` when dropped before the leader finished it (the
/// leader unwound), so that the follower does not sleep for ever.
pub(crate) struct AbandonOnDrop<'a>(pub(crate) &'a Trail);

impl Drop for AbandonOnDrop<'_> {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The follower takes every item once, in order, and only after the
    /// leader finished it, whatever the batch size.
    #[test]
    fn follower_sees_only_finished_items() {
        for batch in [1, 3, 32, 1000] {
            let len = 200;
            let trail = Trail::new(len);
            let finished = AtomicUsize::new(0);
            let seen = Mutex::new(Vec::new());
            std::thread::scope(|s| {
                s.spawn(|| {
                    for i in 0..len {
                        if !trail.wait_for(i, batch) {
                            break;
                        }
                        assert!(
                            finished.load(SeqCst) > i,
                            "item {i} taken before it was finished"
                        );
                        seen.lock().unwrap().push(i);
                    }
                });
                let _g = AbandonOnDrop(&trail);
                for i in 0..len {
                    if i % 7 == 0 {
                        std::thread::yield_now();
                    }
                    finished.store(i + 1, SeqCst);
                    trail.finished(i + 1);
                }
            });
            assert_eq!(*seen.lock().unwrap(), (0..len).collect::<Vec<_>>());
        }
    }

    /// A leader that unwinds before finishing releases a sleeping
    /// follower, whose wait then says so.
    #[test]
    fn an_unwinding_leader_releases_the_follower() {
        let trail = Trail::new(10);
        let got = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..10 {
                    let ok = trail.wait_for(i, 4);
                    got.lock().unwrap().push(ok);
                    if !ok {
                        break;
                    }
                }
            });
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _g = AbandonOnDrop(&trail);
                trail.finished(3);
                std::thread::sleep(std::time::Duration::from_millis(20));
                panic!("the leader fails");
            }));
            assert!(r.is_err());
        });
        assert_eq!(*got.lock().unwrap(), vec![true, true, true, false]);
    }

    /// Once every item is finished, dropping the guard changes nothing.
    #[test]
    fn a_finished_trail_is_not_abandoned() {
        let trail = Trail::new(2);
        {
            let _g = AbandonOnDrop(&trail);
            trail.finished(2);
        }
        assert!(trail.wait_for(0, 1) && trail.wait_for(1, 1));
    }
}
