//! The reference documentation of a module, read from its source: the
//! header comment and, for each declaration, its signature as written and
//! its `///` doc comment (the same text hover shows). `sclc doc` renders
//! the standard library's pages from it.

use scl_syntax::ast::{Decl, ExprKind, ParamSig};
use scl_syntax::PieceKind;

/// What a module documents about itself.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ModuleDoc {
    /// The `//` comment lines before the first declaration (and before any
    /// `///` comment), without the slashes and the one space after them; a
    /// blank line between comments is an empty line. Empty when the module
    /// starts with code or a doc comment.
    pub header: Vec<String>,
    /// The declarations other than imports, in source order.
    pub items: Vec<ItemDoc>,
}

/// One declaration of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemDoc {
    /// `env`, `template`, `fn`, `let`, `param` or `enum`.
    pub kind: &'static str,
    pub name: String,
    /// The declaration's header as written, on one line: `fn mount(uri: Url,
    /// at: Path, mode: Mode = .read_only) -> Volume`, `env runtime(torch:
    /// Version, cuda: Version)`, `enum Flavor { runtime, devel }`,
    /// `param gpus: Int = 1 where gpus >= 1`. A `let` whose value is a
    /// record or a list (a table) is `let NAME` only; another `let` shows its
    /// value when it fits on one line.
    pub signature: String,
    /// The `///` doc comment: its lines without the slashes and the one
    /// space after them, joined by `\n`.
    pub doc: Option<String>,
}

/// The longest `let` value shown in a signature.
const MAX_LET_VALUE: usize = 80;

/// The documentation of the module whose text is `source` (any text: a
/// declaration with a syntax error is documented with the parts that parsed).
pub fn module_docs(source: &str) -> ModuleDoc {
    let parse = scl_syntax::parse(source);
    let text = |s: scl_diag::Span| source.get(s.start as usize..s.end as usize).unwrap_or("");
    let params = |ps: &[ParamSig]| {
        ps.iter()
            .map(|p| one_line(text(p.span)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut items = Vec::new();
    for d in &parse.module.decls {
        let name = d.name().name.to_string();
        let (kind, signature) = match d {
            Decl::Import(_) => continue,
            Decl::Param(p) => ("param", one_line(text(p.span))),
            Decl::Let(l) => {
                let value = one_line(text(l.value.span));
                let table = matches!(
                    l.value.kind,
                    ExprKind::Record(_) | ExprKind::List(_) | ExprKind::Comprehension { .. }
                );
                if table
                    || value.chars().count() > MAX_LET_VALUE
                    || text(l.value.span).contains('\n')
                {
                    ("let", format!("let {name}"))
                } else {
                    ("let", format!("let {name} = {value}"))
                }
            }
            Decl::Enum(e) => {
                let vs: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
                ("enum", format!("enum {name} {{ {} }}", vs.join(", ")))
            }
            Decl::Fn(f) => {
                let ret = f
                    .ret
                    .as_ref()
                    .map(|r| format!(" -> {}", one_line(text(r.span))))
                    .unwrap_or_default();
                ("fn", format!("fn {name}({}){ret}", params(&f.params)))
            }
            Decl::Env(e) => {
                let extends = e
                    .extends_span
                    .map(|s| format!(" {}", one_line(text(s))))
                    .unwrap_or_default();
                match &e.params {
                    Some(ps) => ("template", format!("env {name}({}){extends}", params(ps))),
                    None => ("env", format!("env {name}{extends}")),
                }
            }
        };
        items.push(ItemDoc {
            kind,
            name,
            signature,
            doc: d.doc().map(String::from),
        });
    }
    ModuleDoc {
        header: header(source, &parse.trivia.pieces),
        items,
    }
}

/// The leading `//` comments of a file (see [`ModuleDoc::header`]).
fn header(source: &str, pieces: &[scl_syntax::Piece]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    // Newlines since the last comment: two or more make a blank line.
    let mut newlines = 0;
    for p in pieces {
        match p.kind {
            PieceKind::Whitespace => {}
            PieceKind::Newline => newlines += 1,
            PieceKind::Comment => {
                if newlines > 1 && !lines.is_empty() {
                    lines.push(String::new());
                }
                newlines = 0;
                let t = &source[p.span.start as usize..p.span.end as usize];
                let t = t.strip_prefix("//").unwrap_or(t);
                let t = t.strip_prefix(' ').unwrap_or(t);
                lines.push(t.trim_end().to_string());
            }
            _ => break,
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// `s` on one line: each line trimmed, joined by one space, without the
/// space that would follow an opening or precede a closing bracket, and
/// without a trailing comma before a closing bracket.
fn one_line(s: &str) -> String {
    if !s.contains('\n') {
        return s.trim().to_string();
    }
    let mut out = String::new();
    for line in s.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let closes = line.starts_with([')', ']', '}']);
        if closes && out.ends_with(',') {
            out.pop();
        }
        // No space after `(` or `[`, nor before `)` or `]`; `{ a }` keeps both.
        let tight = out.ends_with(['(', '[']) || line.starts_with([')', ']']);
        if !out.is_empty() && !tight {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// The standard library embedded in this build: (module name, source), by name.
pub fn stdlib() -> &'static [(&'static str, &'static str)] {
    scl_db::STDLIB
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_docs_and_header() {
        let src = "// std/x — a module.\n//\n//   import \"std/x\" as x\n\n// More.\n\nimport \"std/s3-data\" as s3\n\n/// A flavor.\nenum Flavor { a, b }\n\n/// The table.\nlet t = { \"1\" = \"2\" }\nlet n = 3\n/// Doubles.\n///\n///     x.twice(2)\nfn twice(\n  n: Int,\n  m: Int = 1,\n) -> Int = n * 2\nenv tpl(f: Flavor = .a) extends plain { }\nenv plain { }\nparam g: Int = 1 where g > 0\n";
        let d = module_docs(src);
        assert_eq!(
            d.header,
            [
                "std/x — a module.",
                "",
                "  import \"std/x\" as x",
                "",
                "More."
            ]
        );
        let sigs: Vec<(&str, &str)> = d
            .items
            .iter()
            .map(|i| (i.kind, i.signature.as_str()))
            .collect();
        assert_eq!(
            sigs,
            [
                ("enum", "enum Flavor { a, b }"),
                ("let", "let t"),
                ("let", "let n = 3"),
                ("fn", "fn twice(n: Int, m: Int = 1) -> Int"),
                ("template", "env tpl(f: Flavor = .a) extends plain"),
                ("env", "env plain"),
                ("param", "param g: Int = 1 where g > 0"),
            ]
        );
        assert_eq!(
            d.items[3].doc.as_deref(),
            Some("Doubles.\n\n    x.twice(2)")
        );
        assert_eq!(d.items[2].doc, None);
    }

    #[test]
    fn no_header_before_a_doc_comment() {
        assert!(module_docs("/// Doc.\nlet a = 1\n").header.is_empty());
        assert!(module_docs("").items.is_empty());
    }

    #[test]
    fn multi_line_defaults_are_one_line() {
        assert_eq!(one_line("f(\n  a,\n  b,\n)"), "f(a, b)");
        assert_eq!(one_line("{\n  a = 1,\n  b = 2,\n}"), "{ a = 1, b = 2 }");
        assert_eq!(one_line("[\n  \"x\",\n]"), "[\"x\"]");
    }
}
