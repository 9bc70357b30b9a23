//! Project automation. `cargo run --release -p xtask -- bench [--n 100,1000,5000,20000]
//! [--topology chain|fanin]` runs the benchmark of `bench/README.md`
//! (see `bench/README.md`).

mod bench;
mod editor;
mod gen_domain;
mod link_order;
mod parse_time;
mod workload;

// The same allocator as `sclc`, so in-process figures match the binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        // The in-process runs use the same stack as every front end.
        Some("bench") => scl_db::with_compiler_stack(|| bench::main(&args[1..])),
        // Loops for `perf record`: in-process cold checks, or re-checks.
        Some("cold-loop") => scl_db::with_compiler_stack(|| bench::cold_loop_main(&args[1..])),
        Some("recheck-loop") => {
            scl_db::with_compiler_stack(|| bench::recheck_loop_main(&args[1..]))
        }
        Some("gen") => workload::gen_main(&args[1..]),
        Some("parse-time") => parse_time::main(&args[1..]),
        Some("gen-domain") => gen_domain::main(&args[1..]),
        Some("link-order") => link_order::main(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo run --release -p xtask -- bench [--n 100,1000,5000,20000] [--topology chain|fanin] \
                 [--runs R] [--edits E] [--shared DIR] [--keep DIR] [--no-peer] [--no-inprocess] [--no-editor | --editor-edits E] [--deep LIST | --no-deep] [--profile DIR]\n       \
                 cargo run --release -p xtask -- gen OUTDIR N [--topology chain|fanin]\n       \
                 cargo run --release -p xtask -- parse-time [--baseline COMMIT] [--n N] [--rounds R] [--runs K]\n       \
                 cargo run -p xtask -- gen-domain [--check]\n       \
                 cargo run --release -p xtask -- link-order [--check]"
            );
            2
        }
    };
    std::process::exit(code);
}
