//! The evaluation budget: steps, bytes produced, sizes of strings and lists,
//! and nesting depth.

use super::*;

/// Evaluation steps one item costs when an env's layers are applied again
/// from the first (see `Evaluator::compute_final`): about what applying an
/// item (path walk, set-twice check, provenance) costs against one step.
pub(super) const REBUILD_ITEM_STEPS: usize = 16;

/// How deeply evaluation may nest: one level per expression inside another
/// and per call of a function or template from another. Syntax bounds the
/// first (`E0007`); this bounds chains of calls (`f1` calls `f2` … calls
/// `f5000`), which are legal but would otherwise need unbounded stack.
pub(super) const MAX_DEPTH: u32 = 10_000;

/// Evaluation steps one module may take: far above any real program, low
/// enough that exponential programs stop in about a second.
pub(super) const MAX_STEPS: u64 = 20_000_000;

/// The largest string (bytes) or list (elements) a program may build.
pub(crate) const MAX_SIZE: usize = 1 << 24;

/// The bytes of strings and lists one module's evaluation may produce in
/// all (256 MiB; a list element counts as the size of a value): every
/// string and list an operator, a builtin, a literal, a comprehension or an
/// append makes is charged, and so is the state an env copies from its
/// parent, so no program can grow memory past a known bound however its
/// values are combined.
pub(crate) const MAX_PRODUCED: u64 = 1 << 28;

/// What one list element costs against [`MAX_PRODUCED`].
pub(crate) const VALUE_BYTES: usize = std::mem::size_of::<Value>();

/// What one inherited field costs against [`MAX_PRODUCED`] each time an env
/// starts from its parent's state: about what the field takes in the
/// record, the provenance and the IR of the env (measured: 500 to 600 bytes).
pub(super) const INHERITED_BYTES: usize = 512;

impl Evaluator<'_> {
    pub fn too_large<T>(&self, m: ModuleId, span: Span, what: &str) -> R<T> {
        Err(self.report(
            m,
            Diagnostic::error("E0316", span, format!("this {what} is larger than {MAX_SIZE} (bytes or elements)"))
                .with_help("the program grows exponentially (a value doubled in a chain of lets or functions?)"),
        ))
    }

    /// Whether `v` is or holds `Pending` (a `self` field not known yet).
    /// That needs a walk through the value, so it is done only once `self`
    /// was read in this evaluation: before, no value can hold `Pending`, and
    /// an operation on a large list costs nothing extra.
    ///
    /// A large list or record is walked once: the answer is kept by its
    /// address (with the value, so the address stays its own), since an env
    /// that reads `self` in a long chain asks about the same records
    /// (`self.vars`) once per layer and round.
    pub(crate) fn pending(&self, v: &Value) -> bool {
        if !self.self_seen.get() {
            return false;
        }
        let key = match v {
            Value::Pending => return true,
            Value::List(l) if l.len() >= 16 => Arc::as_ptr(l) as usize,
            Value::Record(r) if r.len() >= 16 => Arc::as_ptr(r) as *const u8 as usize,
            _ => return v.is_pending(),
        };
        if let Some((_, p)) = self.pending_known.borrow().get(&key) {
            return *p;
        }
        let p = v.is_pending();
        self.pending_known.borrow_mut().insert(key, (v.clone(), p));
        p
    }

    /// Charges `units` of work (elements compared or copied by one
    /// operation) to the step budget, [`MAX_STEPS`]: an operation whose cost
    /// grows with its operands' size (`contains` on a list, `-=`, `+=`,
    /// `==` of lists) costs that many steps, so repeating it over a large
    /// list is bounded like any other loop. E0316 once when it runs out.
    pub(crate) fn work(&self, m: ModuleId, span: Span, units: u64) -> R<()> {
        self.spend_steps(
            m,
            span,
            units,
            "an operation on large lists is repeated many times (`contains`, `-=`, `+=` or `==` inside a comprehension?)",
        )
    }

    /// Adds `units` to the steps taken; past [`MAX_STEPS`], `E0316` with
    /// `help` where the budget ran out (reported once) and every later
    /// spending fails.
    pub(super) fn spend_steps(&self, m: ModuleId, span: Span, units: u64, help: &str) -> R<()> {
        self.spend(&self.steps, MAX_STEPS, units, || {
            self.report(
                m,
                Diagnostic::error(
                    "E0316",
                    span,
                    format!("evaluation took more than {MAX_STEPS} steps"),
                )
                .with_help(help),
            );
        })
    }

    /// Adds `amount` to one of the budget's counters; the first time the
    /// total passes `limit` it calls `report`, and from then on every
    /// spending fails.
    pub(super) fn spend(
        &self,
        counter: &Cell<u64>,
        limit: u64,
        amount: u64,
        report: impl FnOnce(),
    ) -> R<()> {
        let before = counter.get();
        let total = before.saturating_add(amount);
        counter.set(total);
        if total <= limit {
            return Ok(());
        }
        if before <= limit {
            report();
        }
        Err(Reported)
    }

    /// Charges `bytes` against [`MAX_PRODUCED`]; past it, `E0316` (reported
    /// once) and every later charge fails.
    pub(super) fn charge(&self, m: ModuleId, span: Span, bytes: usize) -> R<()> {
        self.spend(&self.produced, MAX_PRODUCED, bytes as u64, || {
            self.report(
                m,
                Diagnostic::error(
                    "E0316",
                    span,
                    format!(
                        "evaluation produced more than {} MiB of strings, lists and inherited fields",
                        MAX_PRODUCED >> 20
                    ),
                )
                .with_help("the program builds ever larger values (a value doubled in a chain of lets, nested `replace` or `join`?)"),
            );
        })
    }

    /// Charges `bytes` that normalization copies into the IR (shared
    /// values become owned copies there) against [`MAX_PRODUCED`]; past it,
    /// `E0316` at `span` (reported once).
    pub(crate) fn charge_ir(&self, m: ModuleId, span: Span, bytes: usize) -> R<()> {
        self.charge(m, span, bytes)
    }

    /// Before a string of `len` bytes is built: at most [`MAX_SIZE`], and
    /// charged against [`MAX_PRODUCED`].
    pub(crate) fn new_string(&self, m: ModuleId, span: Span, len: usize) -> R<()> {
        if len > MAX_SIZE {
            return self.too_large(m, span, "string");
        }
        self.charge(m, span, len)
    }

    /// Before a list of `n` elements is built: at most [`MAX_SIZE`], and
    /// charged against [`MAX_PRODUCED`].
    pub(crate) fn new_list(&self, m: ModuleId, span: Span, n: usize) -> R<()> {
        if n > MAX_SIZE {
            return self.too_large(m, span, "list");
        }
        self.charge(m, span, n.saturating_mul(VALUE_BYTES))
    }
}
