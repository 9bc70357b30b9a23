//! The IR's JSON layout: serde_json's pretty layout (two-space indent, `": "`
//! after a key, one element or entry per line, `[]` and `{}` for empty
//! ones), written faster. `serde_json::ser::PrettyFormatter` writes a line's
//! indent as one two-byte write per level; [`Pretty`] writes the line break
//! and the whole indent as one slice, which matters for the IR of thousands
//! of envs (`sclc ir` writes about 2.7 KiB of JSON per env, after
//! everything else). The bytes are the same as
//! `serde_json::to_writer_pretty`'s (tested against it).
//!
//! [`to_writer_envs`] writes the same bytes on two threads: the JSON is the
//! last step of `sclc ir`, when the other core has nothing left to do, and
//! an env of thousands of services is most of it. A second thread writes
//! every other run of 16 services (`RUN`) of the top-level envs, each into a
//! buffer of its own (at the depth where it goes); this thread writes the
//! rest and splices each buffer in where its service goes. The threads
//! take turns by runs, not by service: a thread woken per service cost
//! more than it saved.

use crate::EnvSpec;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::ser::Formatter;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::sync::{mpsc, Arc};

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
    /// Set by [`to_writer_envs`] only: a byte string is JSON text written
    /// by a [`Pretty`] at this depth, spliced in where a value goes
    /// ([`Pretty::write_spliced`]). No IR value is a byte string.
    splice: Option<usize>,
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

    /// Spliced JSON text when `splice` is set; otherwise what
    /// serde_json writes for bytes, an array of numbers.
    fn write_byte_array<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        bytes: &[u8],
    ) -> io::Result<()> {
        if let Some(at) = self.splice {
            return self.write_spliced(w, bytes, at);
        }
        self.begin_array(w)?;
        for (i, b) in bytes.iter().enumerate() {
            self.begin_array_value(w, i == 0)?;
            self.write_u8(w, *b)?;
            self.end_array_value(w)?;
        }
        self.end_array(w)
    }
}

impl Pretty {
    /// `text` (JSON written by [`Pretty`] at depth `at`) at the current
    /// depth: as it is, or with each line break followed by the indent of
    /// this depth instead of that of `at`. A line break in JSON text is
    /// always layout (one in a string is written `\\n`).
    fn write_spliced<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        text: &[u8],
        at: usize,
    ) -> io::Result<()> {
        if self.depth == at {
            return w.write_all(text);
        }
        let mut lines = text.split(|&b| b == b'\n');
        if let Some(first) = lines.next() {
            w.write_all(first)?;
        }
        for line in lines {
            // Each later line starts with the indent of depth `at` or deeper.
            let inner = line.get(2 * at..).unwrap_or_default();
            self.line(w, true)?;
            w.write_all(inner)?;
        }
        Ok(())
    }
}

/// The stack of [`to_writer_envs`]'s second thread: writing a service
/// recurses once per level of services nested in it, as deep as evaluation
/// let them nest, so it gets as much as the compiler's thread has (scl-db's
/// `COMPILER_STACK_SIZE`, 512 MiB; address space, touched only as deep as
/// it goes).
const STACK_SIZE: usize = 512 << 20;

/// The fewest services of the top-level envs for [`to_writer_envs`] to
/// use a second thread (below it, starting one costs more than it saves).
const PARALLEL_MIN: usize = 64;

/// The services of the top-level envs are taken in runs of this many,
/// each thread every other run: the threads meet once per run, not once per
/// service (waking a waiting thread costs more than writing a service).
const RUN: usize = 16;

/// How many services the second thread of [`to_writer_envs`] may have
/// written ahead of this one: two runs (each buffer is about 2.7 KiB).
const AHEAD: usize = 2 * RUN;

/// The second thread's output, while [`to_writer_envs`] writes: the
/// services of the top-level envs met so far, and the buffers of those in
/// odd runs of [`RUN`] (by address, to be checked: the two threads agree
/// on the order).
struct Ahead {
    /// Index of the next top-level service met.
    next: usize,
    /// `false` while a service is written on this thread (its own services
    /// are not top-level ones), and for good after a buffer does not match.
    on: bool,
    rx: mpsc::Receiver<(usize, Vec<u8>)>,
    /// Buffers given back once spliced, for the second thread to write
    /// into again (fresh memory costs a page fault per page).
    back: mpsc::Sender<Vec<u8>>,
    /// How many buffers were spliced in.
    spliced: usize,
}

thread_local! {
    static SPLICING: RefCell<Option<Ahead>> = const { RefCell::new(None) };
}

/// What to write for a top-level service met while splicing: `Some`
/// buffer from the second thread, or `None` to write it here.
fn take_ahead(spec: &Arc<EnvSpec>) -> Option<Vec<u8>> {
    SPLICING.with(|s| {
        let mut s = s.borrow_mut();
        let a = s.as_mut().filter(|a| a.on)?;
        let i = a.next;
        a.next += 1;
        if (i / RUN).is_multiple_of(2) {
            return None;
        }
        match a.rx.recv() {
            Ok((addr, text)) if addr == Arc::as_ptr(spec) as usize => {
                a.spliced += 1;
                Some(text)
            }
            // The second thread stopped or wrote another service: write
            // the rest here.
            _ => {
                a.on = false;
                None
            }
        }
    })
}

/// Hands a spliced buffer back to the second thread.
fn give_back(mut text: Vec<u8>) {
    text.clear();
    SPLICING.with(|s| {
        if let Some(a) = s.borrow().as_ref() {
            let _ = a.back.send(text);
        }
    });
}

/// Sets whether top-level services are taken from the second thread; gives
/// the previous setting (`None` when not splicing).
fn set_splicing(on: bool) -> Option<bool> {
    SPLICING.with(|s| {
        s.borrow_mut()
            .as_mut()
            .map(|a| std::mem::replace(&mut a.on, on))
    })
}

/// One service of an env's `services`: written as [`EnvSpec`] is, or, when
/// [`to_writer_envs`] has it written on its second thread, spliced in.
struct Service<'a>(&'a Arc<EnvSpec>);

impl Serialize for Service<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(text) = take_ahead(self.0) {
            let r = s.serialize_bytes(&text);
            give_back(text);
            return r;
        }
        // Not a top-level service: its own services are written here too.
        let was = set_splicing(false);
        let r = self.0.serialize(s);
        if let Some(was) = was {
            set_splicing(was);
        }
        r
    }
}

/// `EnvSpec::services` as a map, each value through [`Service`].
pub(crate) fn services<S: Serializer>(
    m: &BTreeMap<String, Arc<EnvSpec>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(k, &Service(v))?;
    }
    map.end()
}

/// Clears the splicing state of this thread when [`to_writer_envs`] ends
/// (also on an error or a panic).
struct SplicingGuard;

impl Drop for SplicingGuard {
    fn drop(&mut self) {
        SPLICING.with(|s| s.borrow_mut().take());
    }
}

/// Writes `value` as [`to_writer`] does, the same bytes, on two threads
/// when `envs` (the top-level envs of `value`, in the order it writes
/// them) hold at least 64 (`PARALLEL_MIN`) services and the machine has two
/// cores. `depth` is how many arrays and objects enclose the entries of
/// their `services` in `value`'s JSON (2 when `value` is an env, 3 for a
/// map of envs): the second thread writes at that depth so that its text
/// is copied as it is (at another depth it is indented again). The second thread writes every other run of 16 (`RUN`) of their
/// services; a
/// buffer is spliced in only when it is for the service being written (by
/// address), so a wrong `envs` costs the second thread's work, never the
/// output. Returns how many services the second thread wrote (0 on one
/// thread). Errors: as [`to_writer`].
pub fn to_writer_envs<'a, W: io::Write, T: ?Sized + Serialize>(
    w: W,
    value: &T,
    envs: impl IntoIterator<Item = &'a EnvSpec>,
    depth: usize,
) -> serde_json::Result<usize> {
    let services: Vec<&Arc<EnvSpec>> = envs.into_iter().flat_map(|e| e.services.values()).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let nested = SPLICING.with(|s| s.borrow().is_some());
    if services.len() < PARALLEL_MIN || cores < 2 || nested {
        // `to_writer` takes nothing from an outer call's second thread.
        return to_writer(w, value).map(|()| 0);
    }
    let (tx, rx) = mpsc::sync_channel(AHEAD);
    let (back, back_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let odd = &services;
        // If the thread cannot start, the receiver finds the channel
        // closed and this thread writes every service.
        let _ = std::thread::Builder::new()
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, move || {
                for spec in odd.chunks(RUN).skip(1).step_by(2).flatten() {
                    let mut text = back_rx
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(4096));
                    let mut ser = serde_json::Serializer::with_formatter(
                        &mut text,
                        Pretty {
                            depth,
                            ..Pretty::default()
                        },
                    );
                    if EnvSpec::serialize(spec, &mut ser).is_err()
                        || tx.send((Arc::as_ptr(spec) as usize, text)).is_err()
                    {
                        return;
                    }
                }
            });
        SPLICING.with(|s| {
            *s.borrow_mut() = Some(Ahead {
                next: 0,
                on: true,
                rx,
                back,
                spliced: 0,
            })
        });
        // Dropping the state (the receiver) stops the second thread at its
        // next buffer, before the scope waits for it.
        let _guard = SplicingGuard;
        let mut ser = serde_json::Serializer::with_formatter(
            w,
            Pretty {
                splice: Some(depth),
                ..Pretty::default()
            },
        );
        value.serialize(&mut ser)?;
        Ok(SPLICING.with(|s| s.borrow().as_ref().map_or(0, |a| a.spliced)))
    })
}

/// Writes `value` as pretty JSON (no trailing newline), as
/// `serde_json::to_writer_pretty` does. Errors: the writer's, or a value
/// serde_json cannot write (a map with keys that are not strings).
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(w: W, value: &T) -> serde_json::Result<()> {
    // Called while [`to_writer_envs`] writes (from a `Serialize`), it
    // writes every service itself: its formatter cannot splice.
    let was = set_splicing(false);
    let mut ser = serde_json::Serializer::with_formatter(w, Pretty::default());
    let r = value.serialize(&mut ser);
    if let Some(was) = was {
        set_splicing(was);
    }
    r
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

    /// An env of `n` services, each different, every seventh holding
    /// services of its own.
    fn many_services(n: usize) -> crate::EnvSpec {
        let mut top = crate::EnvSpec::default();
        for i in 0..n {
            let mut s = crate::EnvSpec {
                description: Some(format!("service {i}\nline \"two\"")),
                command: vec!["run".into(), i.to_string()],
                ..Default::default()
            };
            s.labels.insert(format!("k{i}").into(), "v".into());
            if i % 7 == 0 {
                let inner = crate::EnvSpec {
                    ports: vec![80, 443],
                    ..s.clone()
                };
                s.services
                    .insert("inner".into(), std::sync::Arc::new(inner));
            }
            top.services
                .insert(format!("s{i:04}"), std::sync::Arc::new(s));
        }
        top
    }

    fn two_cores() -> bool {
        std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2
    }

    /// `to_writer_envs` writes `to_writer`'s bytes: for one env and for a
    /// map of envs, at the depth given and at a wrong one (the text of the
    /// second thread indented again), and it uses the second thread for
    /// the services in odd runs of `RUN` (200 services: runs 1, 3, 5, 7,
    /// 9 and 11, 96 services).
    #[test]
    fn services_written_on_two_threads_give_the_same_bytes() {
        let top = many_services(200);
        let expect = if two_cores() { 96 } else { 0 };
        let serial = super::to_string(&top).unwrap();
        for depth in [2, 0, 5] {
            let mut out = Vec::new();
            let n = super::to_writer_envs(&mut out, &top, [&top], depth).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), serial, "depth {depth}");
            assert_eq!(n, expect, "depth {depth}");
        }
        let other = many_services(70);
        let map: std::collections::BTreeMap<&str, crate::EnvSpec> =
            [("a", other.clone()), ("b", top.clone())].into();
        let serial = super::to_string(&map).unwrap();
        let mut out = Vec::new();
        let n = super::to_writer_envs(&mut out, &map, map.values(), 3).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), serial);
        // 270 services: runs 1, 3, …, 15 (the last run is 14 long).
        assert_eq!(n, if two_cores() { 8 * 16 } else { 0 });
    }

    /// A service nested 1,000 deep (each level's services holding the
    /// next), in a run the second thread writes: it recurses as deep as
    /// this thread (given the compiler's stack, as `sclc ir` has) and
    /// writes the same bytes. With a default 2 MiB thread stack the second
    /// thread overflows and aborts the process (checked, in the debug
    /// build the tests run in).
    const DEEP: usize = 1000;

    #[test]
    fn a_deeply_nested_service_is_written_on_a_stack_as_deep() {
        std::thread::Builder::new()
            .stack_size(super::STACK_SIZE)
            .spawn(|| {
                let mut deep = crate::EnvSpec::default();
                for _ in 0..DEEP {
                    let mut outer = crate::EnvSpec::default();
                    outer.services.insert("s".into(), std::sync::Arc::new(deep));
                    deep = outer;
                }
                let mut top = many_services(100);
                // Index 20: in run 1, the second thread's.
                top.services
                    .insert("s0019b".into(), std::sync::Arc::new(deep));
                let serial = super::to_string(&top).unwrap();
                let mut out = Vec::new();
                let n = super::to_writer_envs(&mut out, &top, [&top], 2).unwrap();
                assert!(out == serial.as_bytes(), "the bytes differ");
                assert_eq!(n, if two_cores() { 16 * 3 } else { 0 });
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// `to_writer` called while `to_writer_envs` writes (from a
    /// `Serialize`) writes every service itself, and the outer call still
    /// splices.
    #[test]
    fn to_writer_inside_to_writer_envs_takes_nothing_from_it() {
        struct Inner(crate::EnvSpec);
        impl serde::Serialize for Inner {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let text = super::to_string(&self.0).map_err(serde::ser::Error::custom)?;
                s.serialize_str(&text)
            }
        }
        let top = many_services(100);
        let inner = many_services(100);
        #[derive(serde::Serialize)]
        struct Both<'a> {
            a: &'a crate::EnvSpec,
            b: Inner,
        }
        let both = Both {
            a: &top,
            b: Inner(inner.clone()),
        };
        let serial = super::to_string(&both).unwrap();
        let mut out = Vec::new();
        let n = super::to_writer_envs(&mut out, &both, [&top], 2).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), serial);
        assert_eq!(n, if two_cores() { 48 } else { 0 });
    }

    /// Envs that are not those of the value (or not in its order) cost the
    /// second thread's work, never the bytes: nothing is spliced.
    #[test]
    fn wrong_envs_are_never_spliced() {
        let top = many_services(200);
        let stranger = many_services(200);
        let serial = super::to_string(&top).unwrap();
        let mut out = Vec::new();
        let n = super::to_writer_envs(&mut out, &top, [&stranger], 2).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), serial);
        assert_eq!(n, 0);
        // Below `PARALLEL_MIN` services, one thread.
        let small = many_services(super::PARALLEL_MIN - 1);
        let mut out = Vec::new();
        let n = super::to_writer_envs(&mut out, &small, [&small], 2).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            super::to_string(&small).unwrap()
        );
        assert_eq!(n, 0);
    }

    /// Bytes (no IR value is bytes) are an array of numbers, as
    /// serde_json's pretty writer has them, unless splicing.
    #[test]
    fn bytes_are_written_as_serde_json_writes_them() {
        struct Bytes(&'static [u8]);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        for b in [Bytes(b""), Bytes(b"\n{x"), Bytes(&[0, 255, 10])] {
            assert_eq!(
                super::to_string(&b).unwrap(),
                serde_json::to_string_pretty(&b).unwrap()
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
