//! Link options of the `sclc` binary that make it smaller in memory:
//!
//! - `--symbol-ordering-file=link-order.txt`: the functions a compile runs
//!   are laid out together (the list is written by `cargo run --release -p
//!   xtask -- link-order`; see `crates/xtask/src/link_order.rs`), so the
//!   64 KiB blocks of code the kernel maps around each page run hold little
//!   else. A name the binary does not have is skipped. No effect on what
//!   the program does.
//! - `-z pack-relative-relocs` (RELR): the 23,000 relative relocations of a
//!   position-independent binary in 6 KB instead of 550 KB, which the
//!   loader reads at every start. Only when the glibc of the machine that
//!   builds is 2.36 or later, and it makes the binary need 2.36 too (2.34
//!   without it): build a binary for older systems on one of them, or with
//!   `SCL_PLAIN_LINK=1`.
//!
//! Both are options of lld, which rustc uses by default on
//! x86_64-unknown-linux-gnu since Rust 1.90. Before adding them this script
//! links an empty program with them, with the same rustc, target, flags
//! and configured linker: an older rustc, GNU ld, mold or another linker
//! that does not take them gets a plain link. Set `SCL_PLAIN_LINK=1` to
//! link without them anyway. The decision is made when this script runs:
//! after changing the linker in flags of a cross build (`--target`), run
//! `cargo clean -p sclc`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=SCL_PLAIN_LINK");
    if env::var_os("SCL_PLAIN_LINK").is_some_and(|v| v != "0") {
        return;
    }
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return;
    }
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let order = dir.join("link-order.txt");
    let mut args: Vec<String> = Vec::new();
    if order.is_file() {
        args.push(format!("--symbol-ordering-file={}", order.display()));
        args.push("--no-warn-symbol-ordering".into());
    }
    let host = env::var("HOST").unwrap_or_default();
    if host == "x86_64-unknown-linux-gnu" && glibc_has_relr() {
        args.push("-zpack-relative-relocs".into());
    }
    if args.is_empty() || !links_with(&args) {
        return;
    }
    for a in &args {
        // `-Xlinker`, not `-Wl,`: a comma in the path stays in it.
        println!("cargo:rustc-link-arg-bin=sclc=-Xlinker");
        println!("cargo:rustc-link-arg-bin=sclc={a}");
    }
}

/// Whether an empty program links with `args` given to the linker, built by
/// the same rustc for the same target with the same flags and linker.
fn links_with(args: &[String]) -> bool {
    let (Some(out), Some(rustc)) = (env::var_os("OUT_DIR"), env::var_os("RUSTC")) else {
        return false;
    };
    let out = Path::new(&out);
    let src = out.join("probe.rs");
    if std::fs::write(&src, "fn main() {}\n").is_err() {
        return false;
    }
    let mut cmd = Command::new(rustc);
    cmd.arg(&src)
        .arg("--target")
        .arg(env::var("TARGET").unwrap_or_default())
        .arg("-o")
        .arg(out.join("probe"));
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        cmd.arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    for a in args {
        cmd.arg("-C")
            .arg("link-arg=-Xlinker")
            .arg("-C")
            .arg(format!("link-arg={a}"));
    }
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the glibc here is 2.36 or later (`getconf GNU_LIBC_VERSION`
/// prints `glibc 2.36`): the first with DT_RELR. Unknown: no.
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(v) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
