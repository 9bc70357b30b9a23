//! The hostile shapes (each at the size that once broke the compiler): long chains of one operator, postfix and
//! call chains, deep nesting of every bracket and construct, values that
//! grow exponentially through builtins, long `extends` and import chains,
//! and files of one repeated character. Each shape is a function of a size
//! `n`; [`SHAPES`] gives, per shape, the size at which the issue saw the
//! defect (the harness runs every shape at that size first, then random
//! sizes up to it).

use crate::case::Case;

/// A shape: its name, the size the issue reported, and the program of size `n`.
pub struct Shape {
    pub name: &'static str,
    pub trigger: usize,
    pub build: fn(usize) -> Case,
}

const BASE: &str = "base = image(\"debian:12.5\")";

/// An env that uses `let x` (so it is evaluated) and builds.
fn using_x(decls: String) -> Case {
    Case::single(
        "",
        format!("{decls}\nenv e {{\n  {BASE}\n  labels {{ x = \"${{x}}\" }}\n}}\n"),
    )
}

fn let_x(expr: String) -> Case {
    using_x(format!("let x = {expr}"))
}

fn chain(first: &str, link: &str, n: usize) -> String {
    let mut s = String::with_capacity(first.len() + link.len() * n);
    s.push_str(first);
    for _ in 1..n {
        s.push_str(link);
    }
    s
}

fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + middle.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

/// `let s0 = SEED` and `n` lets, each `step` applied to the one before.
fn growth(seed: &str, step: fn(&str) -> String, n: usize) -> Case {
    let mut s = format!("let s0 = {seed}\n");
    for i in 1..=n {
        s.push_str(&format!("let s{i} = {}\n", step(&format!("s{}", i - 1))));
    }
    s.push_str(&format!("let x = len(s{n})\n"));
    using_x(s)
}

fn repeated(c: &str, n: usize) -> Case {
    Case::single("", c.repeat(n))
}

/// Every shape, in the order the harness runs them first.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "plus-chain",
        trigger: 1_500_000,
        build: |n| let_x(chain("1", "+1", n)),
    },
    Shape {
        name: "minus-chain",
        trigger: 1_500_000,
        build: |n| let_x(chain("1", "-1", n)),
    },
    Shape {
        name: "times-chain",
        trigger: 1_500_000,
        build: |n| let_x(chain("1", "*1", n)),
    },
    Shape {
        name: "and-chain",
        trigger: 400_000,
        build: |n| let_x(chain("true", " && true", n)),
    },
    Shape {
        name: "or-chain",
        trigger: 400_000,
        build: |n| let_x(chain("false", " || true", n)),
    },
    Shape {
        name: "compare-chain",
        trigger: 1_000_000,
        build: |n| let_x(chain("1", "==1", n)),
    },
    Shape {
        name: "concat-chain",
        trigger: 700_000,
        build: |n| let_x(chain("\"a\"", "+\"a\"", n)),
    },
    Shape {
        name: "index-chain",
        trigger: 1_000_000,
        build: |n| using_x(format!("let l = [1]\nlet x = {}", chain("l", "[0]", n))),
    },
    Shape {
        name: "call-chain",
        trigger: 1_500_000,
        build: |n| using_x(format!("fn f() = 1\nlet x = {}", chain("f", "()", n))),
    },
    Shape {
        name: "field-chain",
        trigger: 1_500_000,
        build: |n| {
            using_x(format!(
                "let r = {{ b = 1 }}\nlet x = {}",
                chain("r", ".b", n)
            ))
        },
    },
    Shape {
        name: "with-chain",
        trigger: 300_000,
        build: |n| {
            using_x(format!(
                "let x = {}",
                chain("{ a = 1 }", " with { a = 2 }", n)
            ))
        },
    },
    Shape {
        name: "not-chain",
        trigger: 1_500_000,
        build: |n| let_x(format!("{}true", "!".repeat(n))),
    },
    Shape {
        name: "negate-chain",
        trigger: 1_500_000,
        build: |n| let_x(format!("{}1", "-".repeat(n))),
    },
    Shape {
        name: "paren-nest",
        trigger: 200_000,
        build: |n| let_x(nest("(", "1", ")", n)),
    },
    Shape {
        name: "list-nest",
        trigger: 200_000,
        build: |n| let_x(nest("[", "1", "]", n)),
    },
    Shape {
        name: "record-nest",
        trigger: 100_000,
        build: |n| let_x(nest("{ a = ", "1", " }", n)),
    },
    Shape {
        name: "block-nest",
        trigger: 100_000,
        build: |n| {
            Case::single(
                "",
                format!(
                    "env e {{\n  {BASE}\n  {}\n}}\n",
                    nest("a { ", "b = 1", " }", n)
                ),
            )
        },
    },
    Shape {
        name: "if-item-nest",
        trigger: 100_000,
        build: |n| {
            Case::single(
                "",
                format!(
                    "env e {{\n  {BASE}\n  {}\n}}\n",
                    nest("if true { ", "ports = [1]", " }", n)
                ),
            )
        },
    },
    Shape {
        name: "interp-nest",
        trigger: 50_000,
        build: |n| let_x(nest("\"${", "\"x\"", "}\"", n)),
    },
    Shape {
        name: "if-nest",
        trigger: 100_000,
        build: |n| let_x(nest("if true then ", "1", " else 2", n)),
    },
    Shape {
        name: "call-nest",
        trigger: 100_000,
        build: |n| let_x(nest("lower(", "\"X\"", ")", n)),
    },
    Shape {
        name: "comprehension-nest",
        trigger: 50_000,
        build: |n| let_x(nest("[for v in ", "[1]", " : v]", n)),
    },
    Shape {
        name: "list-type-nest",
        trigger: 100_000,
        build: |n| {
            using_x(format!(
                "param p: {} = []\nlet x = 1",
                nest("[", "Int", "]", n)
            ))
        },
    },
    Shape {
        name: "optional-type-chain",
        trigger: 1_000_000,
        build: |n| using_x(format!("param p: Int{} = 1\nlet x = p", "?".repeat(n))),
    },
    Shape {
        name: "replace-growth",
        trigger: 40,
        build: |n| growth("\"xx\"", |p| format!("replace({p}, \"x\", \"xx\")"), n),
    },
    Shape {
        name: "join-growth",
        trigger: 12,
        build: |n| {
            growth(
                "\"xxxxxxxxxxxxxxxx\"",
                |p| format!("join([{p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}], \"\")"),
                n,
            )
        },
    },
    Shape {
        name: "split-growth",
        trigger: 40,
        build: |n| growth("\"xx\"", |p| format!("join(split({p}, \"\"), \"xx\")"), n),
    },
    Shape {
        name: "interp-growth",
        trigger: 40,
        build: |n| growth("\"xx\"", |p| format!("\"${{{p}}}${{{p}}}\""), n),
    },
    Shape {
        name: "concat-growth",
        trigger: 40,
        build: |n| growth("\"xx\"", |p| format!("{p} + {p}"), n),
    },
    Shape {
        name: "list-growth",
        trigger: 40,
        build: |n| growth("[\"x\"]", |p| format!("{p} + {p}"), n),
    },
    Shape {
        name: "extends-chain",
        trigger: 5_000,
        build: extends_chain,
    },
    Shape {
        name: "import-chain",
        trigger: 3_000,
        build: import_chain,
    },
    Shape {
        name: "close-parens",
        trigger: 40_000,
        build: |n| repeated(")", n),
    },
    Shape {
        name: "close-brackets",
        trigger: 40_000,
        build: |n| repeated("]", n),
    },
    Shape {
        name: "close-braces",
        trigger: 40_000,
        build: |n| repeated("}", n),
    },
    Shape {
        name: "open-parens",
        trigger: 40_000,
        build: |n| repeated("(", n),
    },
    Shape {
        name: "bad-chars",
        trigger: 40_000,
        build: |n| repeated("@", n),
    },
    Shape {
        name: "bad-lines",
        trigger: 20_000,
        build: |n| repeated("let = \n", n),
    },
    Shape {
        name: "long-string",
        trigger: 3_000_000,
        build: |n| let_x(format!("\"{}\"", "a".repeat(n))),
    },
    Shape {
        name: "many-envs",
        trigger: 20_000,
        build: |n| {
            Case::single(
                "",
                (0..n)
                    .map(|i| format!("env e{i} {{ {BASE} }}\n"))
                    .collect::<String>(),
            )
        },
    },
];

fn extends_chain(n: usize) -> Case {
    let mut s = format!("env e0 {{\n  {BASE}\n}}\n");
    for i in 1..n.max(1) {
        s.push_str(&format!(
            "env e{i} extends e{} {{\n  labels {{ l{i} = \"v\" }}\n}}\n",
            i - 1
        ));
    }
    Case::single("", s)
}

fn import_chain(n: usize) -> Case {
    let n = n.max(1);
    let mut files = vec![(
        "main.env.scl".to_string(),
        format!("import \"./m1.env.scl\" as m\nenv e {{\n  {BASE}\n  labels {{ v = \"${{m.v}}\" }}\n}}\n").into_bytes(),
    )];
    for i in 1..=n {
        let text = if i == n {
            "let v = 0\n".to_string()
        } else {
            format!("import \"./m{}.env.scl\" as m\nlet v = m.v + 1\n", i + 1)
        };
        files.push((format!("m{i}.env.scl"), text.into_bytes()));
    }
    Case {
        label: String::new(),
        main: "main.env.scl".into(),
        files,
    }
}

/// The case of shape `i` at size `n`, labelled `hostile:<name>:<n>`.
pub fn case(i: usize, n: usize) -> Case {
    let s = &SHAPES[i % SHAPES.len()];
    let mut c = (s.build)(n);
    c.label = format!("hostile:{}:{n}", s.name);
    c
}
