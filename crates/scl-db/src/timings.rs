//! Phase marks of one run, for finding where a cold check's time goes:
//! off unless the front end turns them on (`sclc` does when the
//! environment variable `SCL_TIMINGS` is `1`), and then a mark costs one
//! clock read and a lock. The library only records; the front end prints
//! ([`take`]), since library crates never print.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

static ON: AtomicBool = AtomicBool::new(false);
static MARKS: Mutex<Vec<(&'static str, Instant)>> = Mutex::new(Vec::new());

/// Turns recording on for the rest of the process; the first mark is the
/// moment of this call (`start`).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
    mark("start");
}

/// Records that phase `name` ended now (a no-op unless [`enable`]d).
#[inline]
pub fn mark(name: &'static str) {
    if ON.load(Ordering::Relaxed) {
        let now = Instant::now();
        if let Ok(mut m) = MARKS.lock() {
            m.push((name, now));
        }
    }
}

/// The marks recorded so far, in order, as (phase, milliseconds since
/// [`enable`], milliseconds since the mark before), and forgets them.
pub fn take() -> Vec<(&'static str, f64, f64)> {
    let marks = MARKS
        .lock()
        .map(|mut m| std::mem::take(&mut *m))
        .unwrap_or_default();
    let Some(&(_, start)) = marks.first() else {
        return Vec::new();
    };
    let mut prev = start;
    marks
        .into_iter()
        .map(|(name, t)| {
            let r = (
                name,
                (t - start).as_secs_f64() * 1e3,
                (t - prev).as_secs_f64() * 1e3,
            );
            prev = t;
            r
        })
        .collect()
}
