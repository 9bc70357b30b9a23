//! The evaluation budget: steps, bytes produced, sizes of strings and lists,
//! and nesting depth.

use super::*;

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
        // Once per evaluation: the total may have passed the limit before
        // this evaluation spent anything (what it read from the module's
        // other declarations counts: see `Evaluator::decl_value`).
        if !self.exhausted.replace(true) {
            report();
        }
        Err(Reported)
    }

    /// Charges `bytes` against [`MAX_PRODUCED`]; past it, `E0316` (reported
    /// once) and every later charge fails.
    pub(super) fn charge(&self, m: ModuleId, span: Span, bytes: usize) -> R<()> {
        self.charge_at(&|| (m, span), bytes)
    }

    /// [`Self::charge`] with the place of the error asked for only when
    /// there is one (finding it can cost more than the charge).
    fn charge_at(&self, at: &dyn Fn() -> (ModuleId, Span), bytes: usize) -> R<()> {
        self.spend(&self.produced, MAX_PRODUCED, bytes as u64, || {
            let (m, span) = at();
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
    /// `E0316` at the place `at` gives (asked for then only; reported once).
    pub(crate) fn charge_ir(&self, at: &dyn Fn() -> (ModuleId, Span), bytes: usize) -> R<()> {
        self.charge_at(at, bytes)
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
