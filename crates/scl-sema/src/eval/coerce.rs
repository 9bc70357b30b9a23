//! Checking a value against a type, converting it where the language allows.
//! The conversions themselves are `builtins::coerce` (with the builtins that
//! make typed values); what is here knows the expression a value came from.

use super::*;

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
        let source = match &*self.set_text.borrow() {
            Some(t) => t.clone(),
            None => self.host.text(m),
        };
        let text = source
            .get(e.span.range())
            .filter(|t| looks_like_number(t))
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        let quoted = format!("{text:?}");
        let how = if *ty == Ty::String {
            "in quotes"
        } else {
            "as a string"
        };
        let mut d = Diagnostic::error(
            "E0201",
            e.span,
            format!("{noun} is written {how}: `{quoted}`"),
        )
        .with_primary_label(format!("expected {ty}, found a number"));
        let shown = v.to_string();
        d = d.with_help(if shown != text {
            format!("write `{quoted}`: without quotes, `{text}` is the number {shown}")
        } else {
            format!("write `{quoted}`: without quotes, `{text}` is a number")
        });
        self.report(m, d)
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

/// Source text that reads as a number literal (digits, `_`, `.`, an
/// exponent, signs and spaces after a sign).
fn looks_like_number(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || "._-+eE ".contains(c))
}

/// What a value of string-like type `ty` is called in the message for a
/// number written in its place (`None` for other types).
fn string_noun(ty: &Ty) -> Option<&'static str> {
    Some(match ty {
        Ty::Optional(t) => return string_noun(t),
        Ty::Version => "a version",
        Ty::String => "a string",
        Ty::Path | Ty::HostPath => "a path",
        Ty::VolumeSource => "a volume source",
        Ty::Url => "a URL",
        Ty::Image => "an image reference",
        Ty::Requirement => "a requirement",
        Ty::MatchSpec => "a match spec",
        Ty::StrOrSecret => "the value of a variable",
        _ => return None,
    })
}
