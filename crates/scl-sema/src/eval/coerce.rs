//! Checking a value against a type, converting it where the language allows.

use super::*;

impl Evaluator<'_> {
    /// Checks `v` against `ty` and converts it (a bare number to Cpu, a
    /// string to an Image, …). Errors are reported at `span`.
    pub fn coerce(&self, m: ModuleId, v: Value, ty: &Ty, span: Span) -> R<Value> {
        crate::builtins::coerce(self, m, v, ty, span)
    }
}
