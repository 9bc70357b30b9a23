//! PyPI packages whose wheels (or source builds) need Debian/Ubuntu system
//! packages, and which.
//!
//! Source: each package's own install documentation, named in
//! [`SysLibs::source`] (`data/source/python_syslibs.csv`, as gathered
//! 2026-12). Package names are Debian/Ubuntu names (bookworm, jammy, noble).

use crate::tables;

/// The system packages one PyPI package needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SysLibs {
    /// The PyPI name, normalized (PEP 503): `"opencv-python"`.
    pub package: &'static str,
    /// The apt packages to install: `["libgl1", "libglib2.0-0"]`.
    pub apt: &'static [&'static str],
    /// What needs them: `"cv2 links libGL.so.1 …"`.
    pub why: &'static str,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// Every row.
pub fn all() -> &'static [SysLibs] {
    tables::SYSLIBS
}

/// The PEP 503 normal form of a name: lowercase, each run of `-`, `_`, `.`
/// one `-` (`"OpenCV_Python"` → `"opencv-python"`).
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            in_run = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The system packages PyPI package `pypi_name` needs (matched by PEP 503
/// normal form: `"OpenCV_Python"` finds `opencv-python`), or `None`.
/// `psycopg2-binary` and `opencv-python-headless` are not in the table: they
/// need none.
pub fn needs(pypi_name: &str) -> Option<&'static SysLibs> {
    let n = normalize(pypi_name);
    all().iter().find(|s| s.package == n)
}
