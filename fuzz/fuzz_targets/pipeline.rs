//! The whole pipeline on arbitrary bytes as one `main.env.scl`, with every
//! check of the harness's oracle (a failed check is a crash for libFuzzer).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scl_fuzz::case::Case;
use scl_fuzz::oracle::{self, Kind, Limits};

fuzz_target!(|data: &[u8]| {
    let case = Case::single("libfuzzer", data.to_vec());
    // libFuzzer has its own -timeout and -rss_limit_mb; the budget here only
    // catches what those would not name.
    match oracle::run(&case, Limits::for_size(case.size(), 1.0)) {
        Ok(_) => {}
        Err(f) if f.kind == Kind::Slow || f.kind == Kind::Memory => {}
        Err(f) => panic!("{}: {}", f.kind.name(), f.detail),
    }
});
