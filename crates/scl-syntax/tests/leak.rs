//! Parsing must not leak: everything a parse allocates (tokens, the
//! parser's state, the tree, the trivia table, the errors) is freed when the
//! result is dropped, on valid input and on the recovery paths. (The parser
//! was once a chumsky combinator graph built per call, where a `Recursive`
//! referring to itself strongly kept it alive through an `Rc` cycle; the
//! hand-written parser builds nothing, and this test keeps it that way.)
//!
//! A counting global allocator tracks the live bytes; this file holds a
//! single test so that no other test allocates concurrently.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn parsing_does_not_leak() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    // A valid file and a broken one (recovery paths allocate too).
    let good = std::fs::read_to_string(dir.join("acceptance/sd-webui__webui.env.scl")).unwrap();
    let bad = std::fs::read_to_string(dir.join("conformance/25_err_unterminated.env.scl")).unwrap();

    // Warm up: anything allocated once and kept (lazy statics, …) happens here.
    for src in [&good, &bad] {
        drop(scl_syntax::parse(src));
    }

    let before = LIVE.load(Ordering::SeqCst);
    for _ in 0..200 {
        for src in [&good, &bad] {
            let p = scl_syntax::parse(src);
            assert!(!p.module.decls.is_empty() || !p.errors.is_empty());
            drop(p);
        }
    }
    let delta = LIVE.load(Ordering::SeqCst) - before;
    println!("live bytes after 400 parses: {delta:+}");
    assert!(
        delta < 64 * 1024,
        "400 parses left {delta} bytes allocated ({} per parse)",
        delta / 400
    );
}
