//! Wording shared by the static checker and evaluation: where both can meet
//! the same problem, they say it with the same code, span and text, so it
//! is reported once.

use crate::ty::{EnumDef, Ty};
use scl_diag::{did_you_mean, Diagnostic, Span};

/// The E0201 for a number written as `text` (which evaluates to `shown`)
/// where the string-like type `ty`, called `noun`, is expected: one wording
/// for evaluation and the static checker, so a problem both find is
/// reported once.
pub(crate) fn number_for_string_diag(
    ty: &Ty,
    noun: &str,
    text: &str,
    shown: &str,
    span: Span,
) -> Diagnostic {
    let quoted = format!("{text:?}");
    let how = if *ty == Ty::String {
        "in quotes"
    } else {
        "as a string"
    };
    Diagnostic::error(
        "E0201",
        span,
        format!("{noun} is written {how}: `{quoted}`"),
    )
    .with_primary_label(format!("expected {ty}, found a number"))
    .with_help(if shown != text {
        format!("write `{quoted}`: without quotes, `{text}` is the number {shown}")
    } else {
        format!("write `{quoted}`: without quotes, `{text}` is a number")
    })
}

/// Source text that reads as a number literal (digits, `_`, `.`, an
/// exponent, signs and spaces after a sign).
pub(crate) fn looks_like_number(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || "._-+eE ".contains(c))
}

/// What a value of string-like type `ty` is called in the message for a
/// number written in its place (`None` for other types).
pub(crate) fn string_noun(ty: &Ty) -> Option<&'static str> {
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

/// E0204 for `.{v}`, which is not a variant of the enum `def`, with a
/// did-you-mean and the list of its variants.
pub(crate) fn unknown_variant_diag(span: Span, v: &str, def: &EnumDef) -> Diagnostic {
    let list = def
        .variants
        .iter()
        .map(|x| format!(".{x}"))
        .collect::<Vec<_>>()
        .join(", ");
    let d = Diagnostic::error(
        "E0204",
        span,
        format!("`.{v}` is not a variant of {}", def.name),
    );
    match did_you_mean(v, def.variants.iter().map(|s| s.as_str())) {
        Some(s) => d.with_help(format!(
            "did you mean `.{s}`? ({} is one of {list})",
            def.name
        )),
        None => d.with_help(format!("{} is one of {list}", def.name)),
    }
}
