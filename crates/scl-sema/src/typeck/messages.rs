//! The messages of type errors: what was expected, what was found, what was
//! written, and a help line where a fix is known.

use super::types::Type;
use crate::ty::{RecordTy, Ty};
use scl_diag::{Diagnostic, Span};

/// The module's text and where a span of its declarations is in it
/// (`Context::absolute`): what quoting reads.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    pub text: &'a str,
    pub absolute: Option<&'a dyn Fn(Span) -> Span>,
}

/// The source text of `span`, on one line and clipped, for quoting.
pub(super) fn written(src: Source, span: Span) -> Option<String> {
    let text = src.text;
    let span = match src.absolute {
        Some(absolute) if span.anchor != 0 => absolute(span),
        _ => span,
    };
    // At most the first 256 bytes of the span are read: a message quotes
    // 60 characters, and a long chain (`1==1==1…`) has one message per
    // operator whose span covers everything before it (reading each whole
    // made checking the chain quadratic).
    const READ: usize = 256;
    let (start, end) = (span.start as usize, span.end as usize);
    let mut cut = end.min(start.saturating_add(READ));
    while cut > start && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let s = text.get(start..cut)?;
    let longer = cut < end;
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.is_empty() {
        return None;
    }
    Some(if longer || one.chars().count() > 60 {
        format!("{}…", one.chars().take(59).collect::<String>())
    } else {
        one
    })
}

/// "`src`" or "" when there is no text.
pub(super) fn quoted(text: Source, span: Span) -> String {
    match written(text, span) {
        Some(w) => format!(" `{w}`"),
        None => String::new(),
    }
}

/// A value of type `found`, written at `span`, where `expected` is
/// expected. The code and wording follow evaluation's for the same problem
/// (E0203 for units, E0314 for templates), so a problem both find is
/// reported once.
pub(super) fn mismatch(text: Source, span: Span, found: &Type, expected: &Type) -> Diagnostic {
    let src = written(text, span).unwrap_or_default();
    let e = expected.strip_optional();
    match (e, found.strip_optional()) {
        (Type::Memory, Type::Int | Type::Float) => {
            return Diagnostic::error(
                "E0203",
                span,
                format!("memory needs a unit: `{src}` alone is not a Memory"),
            )
            .with_help(if is_number(&src) {
                format!("write `{src}Gi` (binary, ×2^30 bytes) or `{src}Mi`")
            } else {
                format!("multiply it by a unit: `{src} * 1Gi`")
            })
        }
        (Type::Memory, Type::Cpu) => {
            return Diagnostic::error(
                "E0203",
                span,
                format!("`{src}` is a CPU quantity (milli), not a Memory"),
            )
            .with_help("memory takes `Ki Mi Gi Ti Pi Ei` or `k M G T P E`")
        }
        (Type::Cpu, Type::Memory) => {
            return Diagnostic::error(
                "E0203",
                span,
                format!("`{src}` is a memory size, not a CPU quantity"),
            )
            .with_help("CPU is a number of cores (`4`, `0.5`) or millicores (`500m`)")
        }
        (Type::Env, Type::Template(_)) => {
            return Diagnostic::error(
                "E0314",
                span,
                "a template must be instantiated with its arguments here",
            )
            .with_help(format!("call it: `{src}(…)`"))
        }
        _ => {}
    }
    // A number written where a string-like type is expected: the wording of
    // evaluation (`a version is written as a string: "3.10"`).
    if let (Type::Int | Type::Float, Some(ty)) = (found.strip_optional(), string_ty(e)) {
        if let Some(noun) = crate::wording::string_noun(&ty) {
            if crate::wording::looks_like_number(&src) {
                let digits: String = src.chars().filter(|c| !c.is_whitespace()).collect();
                let value = match found.strip_optional() {
                    Type::Int => digits.parse::<i64>().ok().map(crate::Value::Int),
                    _ => digits.parse::<f64>().ok().map(crate::Value::Float),
                };
                if let Some(v) = value {
                    return crate::wording::number_for_string_diag(
                        &ty,
                        noun,
                        &src,
                        &v.to_string(),
                        span,
                    );
                }
            }
        }
    }
    let shown = if src.is_empty() {
        String::new()
    } else {
        format!(" `{src}`")
    };
    let mut d = Diagnostic::error(
        "E0201",
        span,
        format!("expected {expected}, found {found}{shown}"),
    );
    if let Some(h) = hint(found, e, &src) {
        d = d.with_help(h);
    }
    d
}

/// A help line for common shape mistakes (`gpu = 2`, `user = "trainer"`,
/// `python.version = 3.10`).
fn hint(found: &Type, expected: &Type, src: &str) -> Option<String> {
    Some(match (expected, found.strip_optional()) {
        (Type::Schema(RecordTy::Gpu), Type::Int) => format!(
            "a Gpu is a record: write `{{ count = {src} }}` (optionally with `type = \"nvidia-a100\"`)"
        ),
        (Type::Schema(RecordTy::User), Type::Str(_)) => {
            format!("a User is a record: write `{{ name = {src}, uid = 1000 }}`")
        }
        (Type::Schema(RecordTy::Volume), Type::Str(_)) => "a Volume is a record: `{ name = \"data\", source = \"pvc://data\", mount = \"/data\" }`, or use `std/s3-data`'s `mount(...)`".into(),
        (Type::Schema(RecordTy::Copy), Type::Str(_)) => {
            format!("a Copy is a record: write `{{ from = {src}, to = \"/workspace/…\" }}`")
        }
        (Type::List(_), Type::List(_)) => return None,
        // `command = "python train.py"`: exec form is one element per argument.
        (Type::List(et), Type::Str(_))
            if matches!(**et, Type::Str(Ty::String)) && plain_literal(src).is_some_and(|s| s.split_whitespace().count() > 1) =>
        {
            let words: Vec<String> = plain_literal(src)
                .unwrap_or_default()
                .split_whitespace()
                .map(|w| format!("{w:?}"))
                .collect();
            format!(
                "this field is a list, one element per argument: write `[{}]`",
                words.join(", ")
            )
        }
        (Type::List(_), _) => format!("this field is a list: write `[{src}]`"),
        // `python.version = 3.10` is the number 3.1.
        (Type::Str(Ty::Version), Type::Int | Type::Float) => match src.parse::<f64>() {
            Ok(n) => format!(
                "a version is a string: write it in quotes (`\"{src}\"`, not `{src}`, which is the number {n})"
            ),
            Err(_) => "a version is a string: write it in quotes (`\"3.10\"`)".into(),
        },
        (Type::File(_), Type::Str(_)) => format!("read it with `file({src})`"),
        (Type::Image, _) => "write `image(\"debian:12.5\")` or a reference string".into(),
        (
            Type::Str(Ty::String) | Type::StrOrSecret,
            Type::Int | Type::Float | Type::Bool | Type::Memory | Type::Cpu,
        ) => {
            if is_number(src) {
                format!("write text in quotes: `\"{src}\"`")
            } else {
                format!("to use it as text, interpolate it: `\"${{{src}}}\"`")
            }
        }
        (Type::Enum(d), Type::Str(_)) => format!(
            "an enum value is written with a dot: one of {}",
            d.variants
                .iter()
                .map(|v| format!("`.{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => return None,
    })
}

/// True when `src` is a number literal (`42`, `2.5`).
fn is_number(src: &str) -> bool {
    !src.is_empty()
        && src
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
}

/// The text of a string literal written without escapes or interpolation.
fn plain_literal(src: &str) -> Option<&str> {
    let inner = src.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains(['"', '\\', '$'])).then_some(inner)
}

/// "a list", "an Int": the type with its article.
pub(super) fn a_type(t: &Type) -> String {
    let s = t.to_string();
    let vowel = s.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {s}", if vowel { "an" } else { "a" })
}

/// Names users bring from other tools for fields of the Env schema, for
/// "did you mean" when edit distance finds nothing. The same table as
/// evaluation's (`eval.rs`); both should read the schema table once it
/// holds aliases.
pub(super) fn field_alias(rt: RecordTy, name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    Some(match (rt, n.as_str()) {
        (
            RecordTy::Env,
            "env"
            | "envs"
            | "env_vars"
            | "envvars"
            | "environment"
            | "variables"
            | "environment_variables",
        ) => "vars",
        (RecordTy::Env, "image" | "from" | "base_image") => "base",
        (RecordTy::Env, "cmd" | "args") => "command",
        (RecordTy::Env, "working_dir" | "work_dir" | "cwd" | "workingdir") => "workdir",
        (RecordTy::Env, "expose" | "port") => "ports",
        (RecordTy::Env, "volume" | "mounts") => "volumes",
        (RecordTy::Env, "label" | "annotations") => "labels",
        (RecordTy::Env, "packages" | "apt" | "apt_packages" | "system_packages") => {
            "system.packages"
        }
        (RecordTy::Env, "requirements" | "pip" | "python_packages") => "python",
        (RecordTy::Env, "run" | "steps" | "build_steps") => "setup",
        (RecordTy::Env, "copy" | "add") => "files",
        (RecordTy::Env, "dockerignore" | "exclude") => "ignore",
        (RecordTy::Env, "resource" | "gpu" | "gpus" | "cpu" | "memory") => "resources",
        (RecordTy::ResourceList, "gpus" | "nvidia.com/gpu") => "gpu",
        (RecordTy::ResourceList, "mem" | "ram") => "memory",
        (RecordTy::Python, "requirement" | "requirements_file") => "requirements",
        (RecordTy::Python, "pip" | "package") => "packages",
        _ => return None,
    })
}

/// The schema type of a string-like expected type, for the number message.
fn string_ty(expected: &Type) -> Option<Ty> {
    match expected {
        Type::Str(t) => Some(t.clone()),
        Type::Image => Some(Ty::Image),
        Type::StrOrSecret => Some(Ty::StrOrSecret),
        _ => None,
    }
}
