//! Unit tests of the checker: the type of an expression by offset, and the
//! rules of the book's "Typing rules" chapter on small programs.

use super::*;

fn typed(src: &str) -> Typed {
    let parse = scl_syntax::parse(src);
    assert!(parse.errors.is_empty(), "{:?}", parse.errors);
    type_module(
        &parse.module,
        &Context {
            text: src,
            imports: &NoImports,
            absolute: None,
        },
    )
}

/// The type at the first occurrence of `needle` (its first byte).
fn type_of(t: &Typed, src: &str, needle: &str) -> String {
    let at = src.find(needle).unwrap_or_else(|| panic!("{needle}")) as u32;
    t.type_at(at)
        .map(|t| t.to_string())
        .unwrap_or_else(|| "none".into())
}

fn messages(src: &str) -> Vec<String> {
    typed(src)
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

#[test]
fn type_at_gives_the_innermost_expression() {
    let src = "let xs = [1, 2.5]\nlet n = len(xs) + 1\nlet m = 4Gi * n\nlet s = \"a${n}\"\n";
    let t = typed(src);
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics);
    assert_eq!(type_of(&t, src, "[1"), "[Float]");
    assert_eq!(type_of(&t, src, "1,"), "Int");
    assert_eq!(type_of(&t, src, "2.5"), "Float");
    assert_eq!(type_of(&t, src, "len"), "builtin `len`");
    assert_eq!(type_of(&t, src, "xs)"), "[Float]");
    assert_eq!(type_of(&t, src, "4Gi"), "Memory");
    assert_eq!(type_of(&t, src, "n\n"), "Int");
    assert_eq!(type_of(&t, src, "\"a"), "String");
    // The `let` keyword is no expression; the declared name has its type.
    assert_eq!(t.type_at(src.find("let m").unwrap() as u32), None);
    assert_eq!(type_of(&t, src, "m ="), "Memory");
    // The declarations' types, for importers.
    assert_eq!(t.signatures.decls["m"], Type::Memory);
    assert_eq!(t.signatures.decls["xs"].to_string(), "[Float]");
}

#[test]
fn type_at_in_templates_functions_and_env_bodies() {
    let src = "fn f(x: Int) -> String = \"${x}\"\nenv t(n: Int = 1) {\n  workdir = f(n)\n  ports = [n]\n}\n";
    let t = typed(src);
    assert_eq!(type_of(&t, src, "x}"), "Int");
    assert_eq!(type_of(&t, src, "f(n)"), "fn(x: Int) -> String");
    assert_eq!(type_of(&t, src, "(n)"), "String");
    assert_eq!(type_of(&t, src, "[n]"), "[Int]");
    // A field name in an env body has the schema field's type.
    assert_eq!(type_of(&t, src, "workdir"), "Path");
    assert_eq!(type_of(&t, src, "ports"), "[Int]");
    assert_eq!(t.signatures.decls["t"].to_string(), "template(n: Int = …)");
}

#[test]
fn lookup_tables_are_maps() {
    let src = "let t = { \"a\" = { \"x\" = \"1\" }, \"b\" = { \"y\" = \"2\" } }\nfn g(k: String) -> String = t[k][\"x\"]\n";
    let t = typed(src);
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics);
    assert_eq!(
        t.signatures.decls["t"].to_string(),
        "{String: {String: String}}"
    );
}

#[test]
fn the_issues_three_examples_are_errors() {
    assert_eq!(
        messages("env t(n: Int) {\n  resources.limits.memroy = 4Gi\n}\n"),
        ["E0202 unknown field `memroy` in `resources.limits` (ResourceList)"]
    );
    assert_eq!(
        messages("fn f(x: Int) -> String = x + \"a\"\n"),
        ["E0211 `+` does not apply to Int and String `x + \"a\"`"]
    );
    assert_eq!(
        messages("env e {\n  if false { workdir = 42 }\n}\n"),
        ["E0201 a path is written as a string: `\"42\"`"]
    );
}

#[test]
fn rules_of_the_book() {
    // Int → Float is the one conversion; not the other way.
    assert!(messages("param f: Float = 1\n").is_empty());
    assert_eq!(
        messages("param i: Int = 1.5\n"),
        ["E0201 expected Int, found Float `1.5`"]
    );
    // One type per list, per `if`.
    assert_eq!(messages("let l = [1, \"a\"]\n").len(), 1);
    assert_eq!(messages("let l = if true then 1 else \"a\"\n").len(), 1);
    assert!(messages("let l = if true then 1 else 2.5\n").is_empty());
    // A record literal against a schema record.
    assert_eq!(
        messages("env e {\n  user = { name = \"x\", uid = \"1000\" }\n}\n"),
        ["E0201 expected Int, found String `\"1000\"`"]
    );
    // Comprehension variables have the element type.
    assert_eq!(
        messages("let xs = [1, 2]\nlet ys = [for x in xs: x + \"a\"]\n"),
        ["E0211 `+` does not apply to Int and String `x + \"a\"`"]
    );
    // Secrets are never interpolated, even in a branch that does not run.
    assert_eq!(
        messages("let s = secret(\"a\", key = \"b\")\nlet t = if false then \"${s}\" else \"\"\n"),
        ["E0210 a secret cannot be interpolated into a string"]
    );
    // Enum literals against their enum.
    assert_eq!(
        messages("enum T { a, b }\nparam t: T = .c\n"),
        ["E0204 `.c` is not a variant of T"]
    );
}

/// Two records of one shape built apart, each field holding the previous
/// record twice: as trees they double at every step (2^40 leaves here), as
/// DAGs they grow by one node. Comparing them (a list of both) and writing
/// one in a message cost the size of the DAG: this finishes at once (it did
/// not before: 2.9 GB at 22 steps), and the message stays short.
#[test]
fn types_shared_as_dags_are_compared_and_shown_in_linear_size() {
    let n = 40;
    let mut src = String::from("let r0 = { a = 1 }\nlet s0 = { a = 1 }\n");
    for i in 1..n {
        src.push_str(&format!(
            "let r{i} = {{ a = r{p}, b = r{p} }}\nlet s{i} = {{ a = s{p}, b = s{p} }}\n",
            p = i - 1
        ));
    }
    src.push_str(&format!(
        "let x = [r{m}, s{m}]\nlet y = \"${{r{m}}}\"\n",
        m = n - 1
    ));
    let t = typed(&src);
    let msgs: Vec<String> = t.diagnostics.iter().map(|d| d.message.clone()).collect();
    // The list is fine; interpolating a record is the one error.
    assert_eq!(t.diagnostics.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].len() < 1000,
        "{} bytes: {}",
        msgs[0].len(),
        &msgs[0][..200]
    );
}
