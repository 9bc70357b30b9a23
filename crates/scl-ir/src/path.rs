//! [`FieldPath`]: the path of a field of an env's record, which is also the
//! path of that field in the IR (the Env schema's names are the IR's JSON
//! keys): `python.version`, `resources.requests.memory`, `vars.HF_HOME`,
//! `labels."app.kubernetes.io/name"`.
//!
//! A path is a short list of segments. A segment is either a field name of
//! the schema (a `&'static str`, no allocation) or a map key (shared text);
//! the two compare, hash and order by their text alone, so a path built from
//! the schema and one read from a string are the same key. Paths order
//! segment by segment, so every path below `p` sorts right after `p` (a
//! `BTreeMap` range from `p` visits exactly `p` and the paths below it).

use smallvec::SmallVec;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One segment of a [`FieldPath`].
#[derive(Clone, Debug)]
pub enum Seg {
    /// A field name of the schema.
    Field(&'static str),
    /// A map key (or a name the schema does not know).
    Key(Arc<str>),
}

impl Seg {
    /// The segment's text, unquoted.
    pub fn as_str(&self) -> &str {
        match self {
            Seg::Field(s) => s,
            Seg::Key(s) => s,
        }
    }
}

impl Seg {
    /// Whether the two texts are one and the same (a schema name's
    /// literal, a shared key): then they are equal without reading them.
    /// The segments of an env's paths are mostly such (every `services.*`
    /// path starts with the schema's one `services`).
    fn same_text(&self, other: &Seg) -> bool {
        let (a, b) = (self.as_str(), other.as_str());
        std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
    }
}

impl PartialEq for Seg {
    fn eq(&self, other: &Seg) -> bool {
        self.same_text(other) || self.as_str() == other.as_str()
    }
}
impl Eq for Seg {}
impl Hash for Seg {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}
impl PartialOrd for Seg {
    fn partial_cmp(&self, other: &Seg) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Seg {
    fn cmp(&self, other: &Seg) -> Ordering {
        if self.same_text(other) {
            return Ordering::Equal;
        }
        self.as_str().cmp(other.as_str())
    }
}

/// The path of a field: segments from the env's record (or from the record a
/// path is relative to). At most four segments are stored inline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(SmallVec<[Seg; 4]>);

impl FieldPath {
    /// The empty path (the record itself).
    pub fn root() -> FieldPath {
        FieldPath(SmallVec::new())
    }

    /// A path of schema field names: `FieldPath::fields(&["python", "version"])`.
    pub fn fields(names: &[&'static str]) -> FieldPath {
        FieldPath(names.iter().map(|n| Seg::Field(n)).collect())
    }

    /// Reads a path as [`fmt::Display`] writes it: segments separated by
    /// `.`, a segment holding `.` or `"` written as a quoted string
    /// (`labels."app.kubernetes.io/name"`, with `\"` and `\\` escapes).
    pub fn parse(text: &str) -> FieldPath {
        let mut out = FieldPath::root();
        let mut start = 0;
        let mut quoted = false;
        let mut escaped = false;
        let cut = |from: usize, to: usize, out: &mut FieldPath| {
            let seg = &text[from..to];
            let s = match seg.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
                None => seg.to_string(),
            };
            out.0.push(Seg::Key(s.into()));
        };
        for (i, c) in text.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                '.' if !quoted => {
                    cut(start, i, &mut out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !text.is_empty() {
            cut(start, text.len(), &mut out);
        }
        out
    }

    /// The segments.
    pub fn segments(&self) -> &[Seg] {
        &self.0
    }

    /// How many segments.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds a segment at the end.
    pub fn push(&mut self, seg: Seg) {
        self.0.push(seg);
    }

    /// This path with `seg` added at the end.
    pub fn child(&self, seg: Seg) -> FieldPath {
        let mut p = self.clone();
        p.0.push(seg);
        p
    }

    /// This path with a map key added at the end.
    pub fn key(&self, key: &str) -> FieldPath {
        self.child(Seg::Key(key.into()))
    }

    /// The last segment's text.
    pub fn last(&self) -> Option<&str> {
        self.0.last().map(Seg::as_str)
    }

    /// The path without its last segment (`None` for the empty path).
    pub fn parent(&self) -> Option<FieldPath> {
        let (_, init) = self.0.split_last()?;
        Some(FieldPath(init.iter().cloned().collect()))
    }

    /// Every proper prefix, shortest first (`a`, `a.b` for `a.b.c`), not
    /// the empty path.
    pub fn prefixes(&self) -> impl Iterator<Item = FieldPath> + '_ {
        (1..self.0.len()).map(|n| FieldPath(self.0[..n].iter().cloned().collect()))
    }

    /// True when `prefix` is this path or a path above it.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.len() >= prefix.0.len() && self.0[..prefix.0.len()] == prefix.0[..]
    }

    /// The segments after `prefix`, when this path starts with it.
    pub fn strip_prefix(&self, prefix: &FieldPath) -> Option<&[Seg]> {
        self.starts_with(prefix).then(|| &self.0[prefix.0.len()..])
    }
}

impl FieldPath {
    /// The path as [`fmt::Display`] writes it, built directly (no
    /// formatting machinery: provenance renders every written path).
    pub fn render(&self) -> String {
        // Schema names never need quotes; a key may.
        let plain = self.0.iter().all(|s| match s {
            Seg::Field(_) => true,
            Seg::Key(k) => !k.bytes().any(|b| b == b'.' || b == b'"'),
        });
        if !plain {
            return self.to_string();
        }
        let len = self.0.iter().map(|s| s.as_str().len() + 1).sum::<usize>();
        let mut out = String::with_capacity(len);
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(s.as_str());
        }
        out
    }
}

/// One segment as a path writes it: quoted (`"app.kubernetes.io/name"`,
/// as a Rust/JSON string) when it holds `.` or `"`, else as is.
pub fn quote_segment(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['.', '"']) {
        format!("{s:?}").into()
    } else {
        s.into()
    }
}

/// `python.version`, `labels."app.kubernetes.io/name"`: the form of the
/// provenance table's keys and of backends' field names.
impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(&quote_segment(s.as_str()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_and_parse_back() {
        for text in [
            "python.version",
            "vars.HF_HOME",
            "labels.\"app.kubernetes.io/name\"",
            "labels.\"a\\\"b\"",
            "base",
        ] {
            assert_eq!(FieldPath::parse(text).to_string(), text);
        }
        let p = FieldPath::fields(&["labels"]).key("app.kubernetes.io/name");
        assert_eq!(p.to_string(), "labels.\"app.kubernetes.io/name\"");
        assert_eq!(FieldPath::parse(&p.to_string()), p);
        for text in ["python.version", "labels.\"a.b\"", "", "a"] {
            let p = FieldPath::parse(text);
            assert_eq!(p.render(), p.to_string());
        }
    }

    #[test]
    fn schema_names_and_keys_are_one_key() {
        let a = FieldPath::fields(&["python", "version"]);
        let b = FieldPath::parse("python.version");
        assert_eq!(a, b);
        let mut set = std::collections::HashSet::new();
        set.insert(a.clone());
        assert!(set.contains(&b));
        assert_eq!(a.cmp(&b), Ordering::Equal);
    }

    #[test]
    fn the_paths_below_a_path_sort_right_after_it() {
        let mut m = std::collections::BTreeMap::new();
        for k in ["a", "a.b", "a.b.c", "a.c", "ab", "a-b", "b"] {
            m.insert(FieldPath::parse(k), ());
        }
        let a = FieldPath::parse("a");
        let below: Vec<String> = m
            .range(a.clone()..)
            .take_while(|(k, _)| k.starts_with(&a))
            .map(|(k, _)| k.to_string())
            .collect();
        assert_eq!(below, ["a", "a.b", "a.b.c", "a.c"]);
        assert_eq!(
            FieldPath::parse("a.b.c")
                .prefixes()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            ["a", "a.b"]
        );
    }
}
