//! How evaluation fails: [`Reported`] (a diagnostic was already recorded)
//! and the result type [`R`].

/// Marker: evaluation failed and a diagnostic was already recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reported;

pub(crate) type R<T> = Result<T, Reported>;

/// Collects every result, so that every error is reported, then fails if
/// any step failed.
pub(crate) fn all_ok<T>(results: impl IntoIterator<Item = R<T>>) -> R<Vec<T>> {
    let mut out = Vec::new();
    let mut failed = false;
    for r in results {
        match r {
            Ok(v) => out.push(v),
            Err(_) => failed = true,
        }
    }
    if failed {
        Err(Reported)
    } else {
        Ok(out)
    }
}
