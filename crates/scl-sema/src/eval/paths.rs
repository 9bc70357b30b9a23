//! Paths of an env's record as string keys (`python.version`, `labels."a.b"`).

use super::*;

/// A path as one string key: segments joined with `.`, a segment holding a
/// `.` or `"` quoted (`labels."app.kubernetes.io/name"`), so that a key and
/// the paths below it never collide with a map key that contains a dot.
pub(crate) fn path_key(segments: &[String]) -> String {
    let mut out = String::new();
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(&quote_segment(s));
    }
    out
}

/// One path segment as written in a key (quoted when it holds `.` or `"`).
pub(crate) fn quote_segment(s: &str) -> String {
    if s.contains(['.', '"']) {
        format!("{s:?}")
    } else {
        s.to_string()
    }
}

/// Byte positions of the `.` separators of a key (not those inside quotes).
pub(super) fn key_dots(key: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in key.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(i),
            _ => {}
        }
    }
    out
}

/// The segments of a key (quoted ones unquoted).
pub(super) fn key_segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in key_dots(key).into_iter().chain([key.len()]) {
        let seg = &key[start..i];
        out.push(
            match seg.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
                None => seg.to_string(),
            },
        );
        start = i + 1;
    }
    out
}

/// The value at a key's path inside a record value.
pub(super) fn sub_value(v: &Value, path: &str) -> Option<Value> {
    let mut cur = v.clone();
    for seg in key_segments(path) {
        cur = match &cur {
            Value::Record(r) => r.get(&seg)?.clone(),
            _ => return None,
        };
    }
    Some(cur)
}
