//! Project automation. `cargo run --release -p xtask -- bench [--n 10,100,1000,5000]
//! [--topology chain|fanin]` runs the benchmark of `shared/bench/WORKLOAD.md`
//! (see `bench/README.md`).

mod bench;
mod workload;

// The same allocator as `sclc`, so in-process figures match the binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("bench") => {
            // The in-process chain of N modules recurses N queries deep: give it
            // the same large stack as `sclc`.
            let rest = args[1..].to_vec();
            std::thread::Builder::new()
                .stack_size(512 << 20)
                .spawn(move || bench::main(&rest))
                .expect("spawn the bench thread")
                .join()
                .unwrap_or(101)
        }
        Some("rss") => bench::rss_main(&args[1..]),
        Some("gen") => workload::gen_main(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo run --release -p xtask -- bench [--n 10,100,1000,5000] [--topology chain|fanin] \
                 [--runs R] [--edits E] [--shared DIR] [--keep DIR] [--no-peer] [--no-inprocess]\n       \
                 cargo run --release -p xtask -- gen OUTDIR N [--topology chain|fanin]"
            );
            2
        }
    };
    std::process::exit(code);
}
