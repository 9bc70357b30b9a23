//! The IR's JSON layout: serde_json's pretty layout (two-space indent, `": "`
//! after a key, one element or entry per line, `[]` and `{}` for empty
//! ones), written faster. `serde_json::ser::PrettyFormatter` writes a line's
//! indent as one two-byte write per level; [`Pretty`] writes the line break
//! and the whole indent as one slice, which matters for the IR of thousands
//! of envs (`sclc ir` writes about 2.7 KiB of JSON per env, on one thread,
//! after everything else). The bytes are the same as
//! `serde_json::to_writer_pretty`'s (tested against it).

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io;

/// The deepest level whose indent is one slice of [`LINES`]; deeper lines
/// are written in two steps (never met in the IR, whose depth is about 8).
const MAX_ONE_WRITE: usize = 64;

/// `,` then a line break then `2 * MAX_ONE_WRITE` spaces: the separator
/// and indent of a line at any level up to [`MAX_ONE_WRITE`] is a slice.
static LINES: [u8; 2 + 2 * MAX_ONE_WRITE] = {
    let mut b = [b' '; 2 + 2 * MAX_ONE_WRITE];
    b[0] = b',';
    b[1] = b'\n';
    b
};

/// serde_json's pretty layout with two spaces ([`to_writer`]).
#[derive(Debug, Default)]
pub struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// A new line at the current depth: `,` first unless `first`.
    fn line<W: ?Sized + io::Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        let from = usize::from(first);
        if self.depth <= MAX_ONE_WRITE {
            w.write_all(&LINES[from..2 + 2 * self.depth])
        } else {
            w.write_all(&LINES[from..2])?;
            for _ in 0..self.depth {
                w.write_all(b"  ")?;
            }
            Ok(())
        }
    }
}

impl Pretty {
    /// Opens an array or object (`open` is `[` or `{`) one level deeper.
    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(open)
    }

    /// Closes an array or object (`close` is `]` or `}`): on a line of its
    /// own unless it is empty.
    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line(w, true)?;
        }
        w.write_all(close)
    }
}

impl Formatter for Pretty {
    #[inline]
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    #[inline]
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.line(w, first)
    }

    #[inline]
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    #[inline]
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.line(w, first)
    }

    #[inline]
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    #[inline]
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as pretty JSON (no trailing newline), as
/// `serde_json::to_writer_pretty` does. Errors: the writer's, or a value
/// serde_json cannot write (a map with keys that are not strings).
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(w: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Pretty::default());
    value.serialize(&mut ser)
}

/// `value` as pretty JSON (no trailing newline), as
/// `serde_json::to_string_pretty` gives it.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    // serde_json writes only valid UTF-8.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Values of every shape: empty and one-element containers, nesting,
    /// escapes, numbers, and nesting deeper than one write covers.
    fn samples() -> Vec<serde_json::Value> {
        let mut deep = json!("leaf");
        for i in 0..(super::MAX_ONE_WRITE + 6) {
            deep = if i % 2 == 0 {
                json!([deep, 1])
            } else {
                json!({ "k": deep, "e": {} })
            };
        }
        vec![
            json!(null),
            json!(1.5),
            json!("a \"quoted\"\n\u{7f} ünï"),
            json!([]),
            json!({}),
            json!([[]]),
            json!({"a": {}}),
            json!([1]),
            json!({"a": 1}),
            json!({"a": [1, 2, {"b": [], "c": {"d": null}}], "e": "x", "f": [[], {}]}),
            deep,
        ]
    }

    #[test]
    fn the_bytes_are_serde_jsons_pretty_bytes() {
        for v in samples() {
            assert_eq!(
                super::to_string(&v).unwrap(),
                serde_json::to_string_pretty(&v).unwrap(),
                "{v}"
            );
        }
    }

    #[test]
    fn an_env_spec_writes_as_serde_json_writes_it() {
        let mut spec = crate::EnvSpec {
            description: Some("d".into()),
            command: vec!["a".into(), "b c".into()],
            ..Default::default()
        };
        spec.vars
            .insert("K".into(), crate::VarValue::Plain("v".into()));
        let outer = crate::EnvSpec {
            services: [("s".to_string(), std::sync::Arc::new(spec.clone()))]
                .into_iter()
                .collect(),
            ..spec
        };
        assert_eq!(
            super::to_string(&outer.versioned()).unwrap(),
            serde_json::to_string_pretty(&outer.versioned()).unwrap()
        );
    }
}
