//! TensorFlow ↔ CUDA ↔ cuDNN ↔ Python, TensorFlow 2.4.0 to 2.21.0.
//!
//! Source: replicate/cog `pkg/config/tf_compatibility.json`
//! (`data/source/cog_tf_matrix.csv`, as gathered 2026-12).

use crate::tables;
use crate::version::Dotted;

/// One TensorFlow release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfRow {
    /// The release: `"2.15.0"`.
    pub tf: &'static str,
    /// The CUDA it was built with, major.minor: `"12.2"`.
    pub cuda: &'static str,
    /// The cuDNN it was built with, major.minor: `"8.9"`.
    pub cudnn: &'static str,
    /// The Python versions with wheels, ascending.
    pub pythons: &'static [&'static str],
    /// The pip requirement of its GPU build: `"tensorflow==2.15.0"`.
    pub package: &'static str,
}

/// Every release, ascending.
pub fn rows() -> &'static [TfRow] {
    tables::TF_ROWS
}

/// The release `tf`: exactly (`"2.16.1"`), or for a major.minor (`"2.16"`)
/// the newest release of it. `None` if unknown.
pub fn release(tf: &str) -> Option<&'static TfRow> {
    if let Some(r) = rows().iter().find(|r| r.tf == tf) {
        return Some(r);
    }
    let v = Dotted::parse(tf)?;
    if v.parts().len() != 2 {
        return None;
    }
    rows()
        .iter()
        .filter_map(|r| Some((r, Dotted::parse(r.tf)?)))
        .filter(|(_, t)| t.same_minor(&v))
        .max_by(|a, b| a.1.cmp(&b.1))
        .map(|(r, _)| r)
}
