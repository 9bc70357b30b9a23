//! Compatibility facts for the GPU, CUDA and torch checks and the standard
//! library: which driver a CUDA runtime needs, which torch wheels exist for
//! which CUDA and Python, which `nvidia/cuda` tags exist, which GPU has which
//! compute capability, which PyPI packages need system libraries.
//!
//! The facts are vendor tables kept as CSV in `data/source/` (each file's
//! source and date in `data/source/README.md`; as gathered 2026-12). `cargo
//! run -p xtask -- gen-domain` compiles them into `src/tables.rs` — plain
//! `static` arrays, so nothing is parsed at run time and every table is
//! loaded once, with the binary — and into the SCL module `std/compat`
//! (`stdlib/compat.env.scl`). A test checks that both files are what the
//! generator writes from the CSV files now, and every row against the CSV.
//!
//! Versions are compared numerically ([`version::Dotted`]), never as
//! strings. Lookups never fail loudly: an unknown or malformed input gives
//! `None` (or an empty list).
#![deny(missing_docs)]

pub mod cuda;
pub mod gpu;
pub mod syslibs;
#[rustfmt::skip]
mod tables;
pub mod tf;
pub mod torch;
pub mod version;
