//! The parser alone (fast: most executions per second), on a thread with
//! the compiler's stack as every front end.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    scl_db::with_compiler_stack(|| {
        let _ = scl_syntax::parse(&text);
    });
});
