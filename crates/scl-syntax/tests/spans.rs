//! Spans are absolute byte offsets that cover what they should.

use scl_syntax::{ast, parse};

#[test]
fn spans_cover_their_text() {
    let src = "/// Doc.\nenv a extends b.c, d(x = 1) {\n  python.version = \"3.11\"  // comment\n  vars { K = \"${v}\" }\n}\n";
    let p = parse(src);
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    let ast::Decl::Env(env) = &p.module.decls[0] else {
        panic!()
    };
    let text = |s: scl_diag::Span| &src[s.range()];
    assert_eq!(env.doc.as_deref(), Some("Doc."));
    assert!(text(env.span).starts_with("env a") && text(env.span).ends_with('}'));
    assert_eq!(text(env.extends_span.unwrap()), "extends b.c, d(x = 1)");
    assert_eq!(text(env.extends[1].span), "d(x = 1)");
    assert_eq!(text(env.body.span).chars().next(), Some('{'));
    let item = &env.body.items[0];
    assert_eq!(text(item.span), "python.version = \"3.11\"");
    let ast::ItemKind::Assign {
        path,
        op_span,
        value,
        ..
    } = &item.kind
    else {
        panic!()
    };
    assert_eq!(text(path.span), "python.version");
    assert_eq!(text(path.segments[1].span), "version");
    assert_eq!(text(*op_span), "=");
    assert_eq!(text(value.span), "\"3.11\"");
    let ast::ItemKind::Nested { body, .. } = &env.body.items[1].kind else {
        panic!()
    };
    let ast::ItemKind::Assign { value, .. } = &body.items[0].kind else {
        panic!()
    };
    assert_eq!(text(value.span), "\"${v}\"");
    let ast::ExprKind::Str(parts) = &value.kind else {
        panic!()
    };
    let ast::StrPart::Interp(e) = &parts[0] else {
        panic!()
    };
    assert_eq!(text(e.span), "v");
}
