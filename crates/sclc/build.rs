//! Link options of the `sclc` binary that make it smaller in memory (no
//! effect on what it does):
//!
//! - `--symbol-ordering-file=link-order.txt`: the functions a compile runs
//!   are laid out together (the list is written by `cargo run --release -p
//!   xtask -- link-order`; see `crates/xtask/src/link_order.rs`), so the
//!   64 KiB blocks of code the kernel maps around each page run hold little
//!   else. A name the binary does not have is skipped.
//! - `-z pack-relative-relocs` (RELR, glibc 2.36 and later): the 23,000
//!   relative relocations of a position-independent binary in 6 KB instead
//!   of 550 KB, which the loader reads at every start.
//!
//! Both are lld options: applied only where rustc links with lld by default
//! (x86_64-unknown-linux-gnu, Rust 1.90 and later) and no other linker is
//! configured, RELR only when this machine's glibc has it. Set
//! `SCL_PLAIN_LINK=1` to link without either.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=SCL_PLAIN_LINK");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if env::var_os("SCL_PLAIN_LINK").is_some_and(|v| v != "0") {
        return;
    }
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" {
        return;
    }
    // Another linker, or lld turned off, may not know these options.
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
        || flags
            .split('\x1f')
            .any(|f| f.contains("linker") || f.contains("link-self-contained"))
    {
        return;
    }
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:rustc-link-arg-bin=sclc=-Wl,--symbol-ordering-file={dir}/link-order.txt");
    println!("cargo:rustc-link-arg-bin=sclc=-Wl,--no-warn-symbol-ordering");
    if host == target && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=sclc=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the glibc here is 2.36 or later (`getconf GNU_LIBC_VERSION`
/// prints `glibc 2.36`): the first with DT_RELR. Unknown: no.
fn glibc_has_relr() -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
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
