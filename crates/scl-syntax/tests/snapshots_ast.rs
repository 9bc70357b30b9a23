//! Snapshots of the AST of small programs (`cargo insta review` to update).

use scl_syntax::parse;

fn ast(src: &str) -> std::sync::Arc<scl_syntax::ast::Module> {
    let p = parse(src);
    assert!(p.errors.is_empty(), "unexpected errors: {:?}", p.errors);
    p.module
}

#[test]
fn decls() {
    insta::assert_debug_snapshot!(ast(r#"import "std/s3-data" as s3
/// GPUs.
/// Per node.
param gpus: Int = 1 where gpus >= 1 && gpus <= 8
let tools = ["git", "vim",]
enum Flavor { runtime, devel }
fn data(name: String, mode: Mode = .read_only) -> [Volume?] = [{ name = name }]
"#));
}

#[test]
fn env_with_items() {
    insta::assert_debug_snapshot!(ast(
        r#"env app(v: {String: Int}) extends base.py, torch.runtime(cuda = "12.1") {
  /// The image.
  base = image("python:${v}-slim")
  system.packages += ["git"]
  labels."app.kubernetes.io/name" = "web"
  vars { "experiment" = "x" }
  if a { x = 1 } else if b { x = 2 } else { x = 3 }
}
"#
    ));
}

#[test]
fn expressions() {
    insta::assert_debug_snapshot!(ast(
        r#"let a = if p then -x.y[0] * 2 + 1 else !q || r && s == 1.5
let b = f(1, at = "/x")(2) with { c = 500m, d = 32Gi }
let c = [for x in xs if x != "vim": x]
let d = self.workdir
let e = 3e-5
"#
    ));
}

#[test]
fn strings() {
    insta::assert_debug_snapshot!(ast(r#"let a = "costs \$5 and \"q\"\n"
let b = "${join(xs, ",")}!"
let c = """
    line one
      ${x}
    """
"#));
}
