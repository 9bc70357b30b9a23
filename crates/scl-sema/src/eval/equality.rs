//! Equality as the language sees it (`==`, `contains`, `-=`, the diamond rule).

use super::*;

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

/// Equality as the language sees it: structural (two records are equal when
/// they have the same fields with equal values, whatever made them: the
/// hidden [`TYPE_KEY`] mark of a record checked against a schema type is not
/// a field), enums by variant, numbers across Int/Float.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Enum(x), Value::Enum(y)) => x.variant == y.variant,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
        (Value::List(x), Value::List(y)) => {
            Arc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_equal(p, q)))
        }
        // A plain env of another module by reference and by value: the same
        // when the value is that declaration's env.
        (Value::EnvRef(r), Value::Env(e)) | (Value::Env(e), Value::EnvRef(r)) => {
            e.layers.last().is_some_and(|l| {
                l.id.module == r.module && l.id.decl == Some(r.decl) && l.id.args.is_empty()
            })
        }
        (Value::Record(x), Value::Record(y)) => {
            Arc::ptr_eq(x, y)
                || field_count(x) == field_count(y)
                    && fields(x)
                        .zip(fields(y))
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && values_equal(v1, v2))
        }
        _ => a == b,
    }
}

/// The fields of a record value, without the hidden [`TYPE_KEY`] mark.
pub(crate) fn fields(r: &Record) -> impl Iterator<Item = (&Arc<str>, &Value)> {
    r.iter().filter(|(k, _)| !is_type_mark(k))
}

/// How many fields a record value has (the hidden mark is not one).
pub(crate) fn field_count(r: &Record) -> usize {
    r.len() - usize::from(r.contains_key(TYPE_KEY))
}
