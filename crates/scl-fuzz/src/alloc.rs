//! A counting global allocator: the harness binary wraps mimalloc (the
//! allocator `sclc` uses) in [`Counting`] so that every case's peak memory
//! is known, and a case that allocates past the hard limit stops the worker
//! at once (a blow-up must not take the machine down) with
//! [`LIMIT_MESSAGE`] on stderr, which the supervisor reads.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// What the worker prints (then aborts) when a case passes the hard limit.
pub const LIMIT_MESSAGE: &str = "scl-fuzz: memory limit exceeded";

/// Counts the bytes live in the inner allocator `A`.
pub struct Counting<A>(pub A);

// SAFETY: every call is forwarded to the inner allocator unchanged; the
// counters are only atomics.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

fn grow(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
    if now > LIMIT.load(Ordering::Relaxed) {
        over_limit();
    }
}

#[cold]
fn over_limit() -> ! {
    // No allocation from here: write(2) the message, then abort.
    let msg = b"\nscl-fuzz: memory limit exceeded\n";
    // SAFETY: a plain write of a static buffer to stderr.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
    std::process::abort()
}

/// Bytes live now.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// The highest [`current`] since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak measurement from the bytes live now.
pub fn reset_peak() {
    PEAK.store(current(), Ordering::Relaxed);
}

/// Aborts the process when more than `bytes` are live (`usize::MAX`: never).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
}
