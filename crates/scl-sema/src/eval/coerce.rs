//! Checking a value against a type, converting it where the language allows.
//! The conversions themselves are `builtins::coerce` (with the builtins that
//! make typed values); what is here knows the expression a value came from.

use super::*;
use crate::wording::{looks_like_number, number_for_string_diag, string_noun};

impl Evaluator<'_> {
    /// Checks `v` against `ty` and converts it (a bare number to Cpu, a
    /// string to an Image, …). Errors are reported at `span`.
    pub fn coerce(&self, m: ModuleId, v: Value, ty: &Ty, span: Span) -> R<Value> {
        crate::builtins::coerce(self, m, v, ty, span)
    }

    /// [`Evaluator::coerce`] of the value `v` of expression `e`: a number
    /// written where a string-like type is expected (`python.version =
    /// 3.10`) is reported with the number as it was written, quoted as the
    /// string it should be, not as the number it became (`3.1`).
    pub(super) fn coerce_expr(&self, m: ModuleId, e: &ast::Expr, v: Value, ty: &Ty) -> R<Value> {
        if matches!(v, Value::Int(_) | Value::Float(_)) && is_number_literal(e) {
            if let Some(noun) = string_noun(ty) {
                return Err(self.number_for_string(m, e, &v, ty, noun));
            }
        }
        self.coerce(m, v, ty, e.span)
    }

    /// E0201 for number literal `e` (value `v`) where `ty`, a string-like
    /// type called `noun` in messages, is expected.
    fn number_for_string(
        &self,
        m: ModuleId,
        e: &ast::Expr,
        v: &Value,
        ty: &Ty,
        noun: &str,
    ) -> Reported {
        // The text as written, from the source (a `--set` value is parsed
        // from a text of its own, whose spans are not the module's); the
        // value for anything that does not read as a number.
        let written: Option<String> = match &*self.set_text.borrow() {
            Some(t) => t.get(e.span.range()).map(str::to_string),
            None => self.host.span_text(m, e.span).map(|t| t.to_string()),
        };
        let text = written
            .filter(|t| looks_like_number(t))
            .unwrap_or_else(|| v.to_string());
        self.report(
            m,
            number_for_string_diag(ty, noun, &text, &v.to_string(), e.span),
        )
    }
}

/// A number literal, possibly negated (`3.10`, `8080`, `-1`).
fn is_number_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) => true,
        ExprKind::Unary { ops, operand } => {
            ops.iter().all(|(op, _)| *op == UnaryOp::Neg) && is_number_literal(operand)
        }
        _ => false,
    }
}
