//! Reading a value at a path below a record value.

use super::*;

/// The value at the path `below` inside a record value (`None` when a
/// segment is missing or not a record).
pub(super) fn sub_value(v: &Value, below: &[Seg]) -> Option<Value> {
    let mut cur = v;
    for seg in below {
        cur = match cur {
            Value::Record(r) => r.get(seg.as_str())?,
            _ => return None,
        };
    }
    Some(cur.clone())
}
