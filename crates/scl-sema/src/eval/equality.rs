//! Equality as the language sees it (`==`, `contains`, `-=`, the diamond rule).

use super::*;

/// Equality as the language sees it: enums by variant, numbers across Int/Float.
/// The work [`values_equal`] may do on `a` and `b`, in elements: the
/// shorter top-level length of two lists, maps or strings (a string counts
/// one unit per 64 bytes), else 1. Deeper levels are not counted: a
/// comparison's cost is bounded by what the values' own making was charged.
pub(crate) fn compare_work(a: &Value, b: &Value) -> u64 {
    let n = match (a, b) {
        (Value::List(x), Value::List(y)) if !Arc::ptr_eq(x, y) => x.len().min(y.len()),
        (Value::Record(x), Value::Record(y)) if !Arc::ptr_eq(x, y) => x.len().min(y.len()),
        (Value::Str(x), Value::Str(y)) => x.len().min(y.len()) / 64,
        _ => 0,
    };
    1 + n as u64
}

pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Enum { variant: x, .. }, Value::Enum { variant: y, .. }) => x == y,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
        (Value::List(x), Value::List(y)) => {
            Arc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_equal(p, q)))
        }
        (Value::Record(x), Value::Record(y)) => {
            Arc::ptr_eq(x, y)
                || x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && values_equal(v1, v2))
        }
        _ => a == b,
    }
}
