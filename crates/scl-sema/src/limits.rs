//! The bounds of evaluation: steps, sizes, bytes produced, nesting depth
//! (`ARCHITECTURE.md`, "Invariants"). The evaluator's budget
//! (`eval/budget.rs`) and normalization charge against them.

use crate::value::Value;

/// Evaluation steps one item costs when an env's layers are applied again
/// from the first (see `Evaluator::compute_final`): about what applying an
/// item (path walk, set-twice check, provenance) costs against one step.
pub(crate) const REBUILD_ITEM_STEPS: usize = 16;

/// How deeply evaluation may nest: one level per expression inside another
/// and per call of a function or template from another. Syntax bounds the
/// first (`E0007`); this bounds chains of calls (`f1` calls `f2` … calls
/// `f5000`), which are legal but would otherwise need unbounded stack.
pub(crate) const MAX_DEPTH: u32 = 10_000;

/// Evaluation steps one module may take: far above any real program, low
/// enough that exponential programs stop in about a second.
pub(crate) const MAX_STEPS: u64 = 20_000_000;

/// The largest string (bytes) or list (elements) a program may build.
pub(crate) const MAX_SIZE: usize = 1 << 24;

/// The bytes of strings and lists one module's evaluation may produce in
/// all (256 MiB; a list element counts as the size of a value): every
/// string and list an operator, a builtin, a literal, a comprehension or an
/// append makes is charged, and so is the state an env copies from its
/// parent, so no program can grow memory past a known bound however its
/// values are combined.
pub(crate) const MAX_PRODUCED: u64 = 1 << 28;

/// What one list element or map entry costs against [`MAX_PRODUCED`]:
/// 40 bytes, fixed (the size of a [`Value`] when the limits were set; it is
/// 24 now), so that which programs pass the limits does not change with
/// the compiler's representation of values.
pub(crate) const VALUE_BYTES: usize = 40;
const _: () = assert!(VALUE_BYTES >= std::mem::size_of::<Value>());

/// What one inherited field costs against [`MAX_PRODUCED`] each time an env
/// starts from its parent's state: about what the field takes in the
/// record, the provenance and the IR of the env (measured: 500 to 600 bytes).
pub(crate) const INHERITED_BYTES: usize = 512;
