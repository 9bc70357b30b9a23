//! A grammar-aware generator of SCL programs (proptest strategies that
//! produce source text): declarations of every kind, expressions of every
//! form of `grammar/scl.ebnf` (operators, postfix chains, calls of every
//! builtin, lists, records, comprehensions, `if`, `with`, interpolation,
//! `self`), and envs whose items set the fields of the Env schema with
//! values that are mostly well-typed — so that most programs reach
//! normalization and the Docker backend — and often hostile: strings with
//! quotes, backslashes, `$()`, backticks, line breaks, CR, `#`, `%`,
//! `{{ }}`, here-document markers, a leading `-`, a trailing backslash
//! followed by spaces, non-ASCII; integers just past every bound.

use proptest::prelude::*;
use proptest::sample::select;

/// Pieces hostile strings are made of. Hidden characters (a lone CR, NUL,
/// DEL, U+FEFF, U+200B, bidi controls) are not among them: SCL source cannot hold
/// them (E0010), and the backends' refusal of them is tested on IR values
/// (`scl-backends/tests/hostile.rs`); [`crate::mutate`] still puts them
/// anywhere in a file.
const PIECES: &[&str] = &[
    "a",
    "x",
    "pkg",
    "1.0",
    " ",
    "  ",
    "-",
    "--",
    "-o",
    "--network=host",
    "--security=insecure",
    "\"",
    "'",
    "\\",
    "\\ ",
    "x \\  ",
    "\n\n",
    "\\\t",
    "$",
    "$(id)",
    "`id`",
    "${HOME}",
    "$TAG",
    "\n",
    "\r\n",
    "\t",
    "#",
    "%",
    "%s",
    "{{ x }}",
    "{% if %}",
    "<<EOF",
    "<<'EOF'",
    "EOF",
    ";",
    "&&",
    "|",
    ">",
    "<",
    "=",
    ":",
    "/",
    "..",
    "*",
    "?",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    "@",
    "!",
    "~",
    "ä",
    "日本",
    "é",
    "🙂",
    "ENV X=1",
    "RUN id",
    "FROM scratch",
    "a-}",
    "pkg=1.2",
    "pkg:amd64",
    "pkg/bookworm-backports",
    "https://x.org/a b",
    "secrets/",
    "!secrets",
    "torch>=2.0",
    "numpy==1.26.*",
    "a[b]",
    "req[1].txt",
    "a\\b",
];

/// A hostile string value (the raw characters, before SCL escaping).
pub fn hostile_raw() -> impl Strategy<Value = String> {
    prop::collection::vec(select(PIECES), 1..6).prop_map(|v| v.concat())
}

/// A plain identifier-like value.
fn plain_raw() -> impl Strategy<Value = String> {
    select(
        &[
            "a", "x", "curl", "git", "tmux", "numpy", "torch", "v1", "main", "data",
        ][..],
    )
    .prop_map(String::from)
}

/// Quotes raw text as an SCL string literal: `\"`, `\\`, `\$`, `\n`, `\t`
/// escaped; other characters (CR, NUL, non-ASCII) as they are.
pub fn literal(raw: &str) -> String {
    let mut s = String::from("\"");
    for c in raw.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '$' => s.push_str("\\$"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// A string literal: mostly plain, often hostile.
pub fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => plain_raw().prop_map(|s| literal(&s)),
        2 => hostile_raw().prop_map(|s| literal(&s)),
    ]
}

/// A string for a typed field (package, path, name): mostly one of `good`,
/// rarely hostile.
fn typed(good: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        8 => select(good).prop_map(literal),
        1 => hostile_raw().prop_map(|s| literal(&s)),
    ]
    .boxed()
}

const PACKAGES: &[&str] = &[
    "curl",
    "git",
    "tmux",
    "libgl1",
    "pkg=1.2",
    "pkg:amd64",
    "ca-certificates",
];
const PY_PACKAGES: &[&str] = &[
    "numpy",
    "torch>=2.0",
    "requests[socks]",
    "numpy==1.26.*",
    "tqdm",
];

/// Integers around every bound the IR has (u16 ports, u32 uids, i64).
fn int() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0i64..100).prop_map(|n| n.to_string()),
        3 => select(&[
            "0", "1", "65535", "65536", "4294967295", "4294967296", "99999999999",
            "9223372036854775807", "1_000", "-1",
        ][..]).prop_map(String::from),
    ]
}

fn quantity() -> impl Strategy<Value = String> {
    select(
        &[
            "4Gi",
            "32Gi",
            "500m",
            "2",
            "1.5",
            "16Ei",
            "17Ei",
            "1e99999999999Gi",
            "1e3Mi",
            "0.5k",
            "8E",
            "1m",
            "999999999999Ti",
        ][..],
    )
    .prop_map(String::from)
}

fn image_ref() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => select(&[
            "debian:12.5", "ubuntu:22.04", "python:3.11-slim", "alpine:3.19",
            "nvcr.io/nvidia/pytorch:23.10-py3", "fedora:39",
        ][..]).prop_map(String::from),
        1 => select(&["debian:$TAG", "x:y:z", "debian:`id`", "", "debian:12 5", "-debian"][..])
            .prop_map(String::from),
        1 => hostile_raw(),
    ]
    .prop_map(|r| literal(&r))
}

/// A name defined by the generated module (or not: unknown names too).
fn name() -> impl Strategy<Value = String> {
    select(&["a0", "a1", "a2", "p0", "s", "a0", "a1", "a2"][..]).prop_map(String::from)
}

fn builtin_call(e: BoxedStrategy<String>) -> BoxedStrategy<String> {
    prop_oneof![
        e.clone().prop_map(|a| format!("len({a})")),
        (e.clone(), string()).prop_map(|(a, b)| format!("join({a}, {b})")),
        (e.clone(), string()).prop_map(|(a, b)| format!("split({a}, {b})")),
        (e.clone(), string(), string()).prop_map(|(a, b, c)| format!("replace({a}, {b}, {c})")),
        e.clone().prop_map(|a| format!("lower({a})")),
        e.clone().prop_map(|a| format!("upper({a})")),
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("contains({a}, {b})")),
        e.clone().prop_map(|a| format!("keys({a})")),
        image_ref().prop_map(|r| format!("image({r})")),
        string().prop_map(|p| format!("file({p})")),
        (string(), string()).prop_map(|(a, b)| format!("secret({a}, key = {b})")),
        (string(), string()).prop_map(|(a, b)| format!("huggingface({a}, to = {b})")),
        (string(), string()).prop_map(|(a, b)| format!("url({a}, to = {b})")),
        e.prop_map(|a| format!("f0({a})")),
    ]
    .boxed()
}

/// An expression of every form in the grammar, nested up to a few levels.
pub fn expr() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        3 => int(),
        1 => quantity(),
        1 => select(&["true", "false", ".apt", ".pip", ".nccl", "[]", "{}"][..]).prop_map(String::from),
        3 => string(),
        2 => name(),
    ];
    leaf.prop_recursive(4, 48, 6, |e| {
        let ops = select(&["+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "&&", "||"][..]);
        prop_oneof![
            3 => (e.clone(), ops, e.clone()).prop_map(|(a, o, b)| format!("{a} {o} {b}")),
            1 => (select(&["!", "-"][..]), e.clone()).prop_map(|(o, a)| format!("{o}{a}")),
            1 => e.clone().prop_map(|a| format!("({a})")),
            2 => prop::collection::vec(e.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            2 => prop::collection::vec((select(&["a", "b", "name", "\"k.e y\""][..]), e.clone()), 0..3)
                .prop_map(|v| format!("{{ {} }}", v.iter().map(|(k, x)| format!("{k} = {x}")).collect::<Vec<_>>().join(", "))),
            1 => (e.clone(), e.clone(), e.clone()).prop_map(|(c, a, b)| format!("if {c} then {a} else {b}")),
            1 => (e.clone(), e.clone()).prop_map(|(l, b)| format!("[for v in {l} : {b}]")),
            1 => (e.clone(), e.clone(), e.clone()).prop_map(|(l, c, b)| format!("[for v in {l} if {c} : {b}]")),
            1 => (e.clone(), e.clone()).prop_map(|(a, i)| format!("{a}[{i}]")),
            1 => (e.clone(), select(&["a", "b", "name", "count"][..])).prop_map(|(a, f)| format!("{a}.{f}")),
            1 => (e.clone(), e.clone()).prop_map(|(a, b)| format!("{a} with {{ a = {b} }}")),
            2 => (e.clone(), hostile_raw()).prop_map(|(a, raw)| {
                let lit = literal(&raw);
                format!("\"{}${{{a}}}\"", &lit[1..lit.len() - 1])
            }),
            2 => builtin_call(e.clone()),
        ]
    })
    .boxed()
}

/// A condition: mostly a well-typed Bool, sometimes anything.
fn cond() -> BoxedStrategy<String> {
    prop_oneof![
        8 => select(&[
            "true", "false", "len(self.ports) > 0", "true", "false", "contains(self.labels, \"a\")", "1 < 2",
            "self.workdir == \"/workspace\"", "p0 > 0", "len(self.setup) == 0",
        ][..]).prop_map(String::from),
        1 => expr(),
    ]
    .boxed()
}

/// A well-typed String expression over the typed module's names
/// (`a0: String`, `a1: Int`, `a2: [String]`).
fn str_expr() -> BoxedStrategy<String> {
    prop_oneof![
        4 => string(),
        1 => Just("a0".to_string()),
        1 => (string(), string()).prop_map(|(a, b)| format!("{a} + {b}")),
        1 => hostile_raw().prop_map(|r| { let l = literal(&r); format!("\"{}${{a0}}-${{a1}}\"", &l[1..l.len() - 1]) }),
        1 => string().prop_map(|sep| format!("join(a2, {sep})")),
        1 => string().prop_map(|x| format!("lower({x})")),
        1 => (string(), string(), string()).prop_map(|(a, b, c)| format!("replace({a}, {b}, {c})")),
        1 => (string(), string()).prop_map(|(a, b)| format!("if len(a2) > 0 then {a} else {b}")),
    ]
    .boxed()
}

/// A well-typed [String] expression.
fn list_expr() -> BoxedStrategy<String> {
    prop_oneof![
        4 => list_of(string()),
        1 => Just("a2".to_string()),
        1 => list_of(string()).prop_map(|l| format!("a2 + {l}")),
        1 => string().prop_map(|x| format!("[for v in a2 : \"${{v}}{}\"]", &x[1..x.len() - 1])),
        1 => (string(), string()).prop_map(|(a, sep)| format!("split({a}, {sep})")),
    ]
    .boxed()
}

/// A list literal of `items`.
fn list_of(items: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(items, 0..4).prop_map(|v| format!("[{}]", v.join(", ")))
}

/// One item of an env body: a schema field with a value of (mostly) its
/// type, an `if` item, or anything.
fn item(well_typed: bool) -> BoxedStrategy<String> {
    let (text, list) = if well_typed {
        (str_expr(), list_expr())
    } else {
        (string().boxed(), list_of(string()).boxed())
    };
    let assign = select(&["=", "+="][..]);
    let key = || {
        prop_oneof![
            3 => select(&["A", "HOME", "PATH", "WANDB_MODE", "_x"][..]).prop_map(String::from),
            1 => hostile_raw().prop_map(|s| literal(&s)),
        ]
    };
    let field: BoxedStrategy<String> = prop_oneof![
        3 => image_ref().prop_map(|r| format!("base = image({r})")),
        1 => (image_ref(), string()).prop_map(|(r, d)| format!("base = image({r}, digest = {d})")),
        2 => text.clone().prop_map(|d| format!("description = {d}")),
        3 => (assign.clone(), list_of(typed(PACKAGES))).prop_map(|(a, l)| format!("system.packages {a} {l}")),
        1 => select(&[".apt", ".apk", ".dnf", ".yum", ".microdnf", ".pip", "\"apt\""][..]).prop_map(|m| format!("system.manager = {m}")),
        2 => (select(&["\"3.10\"", "\"3.11\"", "\"3\"", "\"3.12\"", "\"3.10\"", "\"x\""][..]), select(&[".pip", ".uv", ".conda"][..]),
              list_of(prop_oneof![12 => typed(PY_PACKAGES), 1 => Just("\"a-}\"".to_string())]))
            .prop_map(|(v, m, p)| format!("python {{\n    version = {v}\n    manager = {m}\n    packages = {p}\n  }}")),
        1 => typed(&["https://pypi.org/simple", "http://x"]).prop_map(|u| format!("python.index_url = {u}")),
        1 => (list_of(typed(&["conda-forge", "pytorch", "-c"])), list_of(typed(&["numpy", "pytorch>=2"]))).prop_map(|(c, p)| format!("conda {{ channels = {c}, packages = {p} }}")),
        3 => prop::collection::vec((key(), prop_oneof![3 => text.clone(), 1 => Just("secret(\"s\", key = \"k\")".to_string())]), 0..4)
            .prop_map(|v| format!("vars {{\n{}\n  }}", v.iter().map(|(k, x)| format!("    {k} = {x}")).collect::<Vec<_>>().join("\n"))),
        3 => prop::collection::vec((key(), text.clone()), 0..4)
            .prop_map(|v| format!("labels {{\n{}\n  }}", v.iter().map(|(k, x)| format!("    {k} = {x}")).collect::<Vec<_>>().join("\n"))),
        2 => (assign.clone(), list.clone()).prop_map(|(a, l)| format!("ignore {a} {l}")),
        5 => (assign.clone(), list.clone()).prop_map(|(a, l)| format!("setup {a} {l}")),
        2 => typed(&["/workspace", "/", "/etc", "/usr/src/app", "/usr", "/opt/app", "/var"])
            .prop_map(|w| format!("workdir = {w}")),
        2 => (typed(&["www-data", "root", "app", "-o", "trainer"]), int())
            .prop_map(|(n, u)| format!("user = {{ name = {n}, uid = {u} }}")),
        1 => list_of(int()).prop_map(|l| format!("ports = {l}")),
        2 => list.clone().prop_map(|l| format!("entrypoint = {l}")),
        2 => list.clone().prop_map(|l| format!("command = {l}")),
        1 => (select(&["4", "500m", "1.5", "0", "4Gi"][..]), quantity(), int()).prop_map(|(c, m, g)| format!("resources.requests {{ cpu = {c}, memory = {m}, gpu = {{ count = {g} }} }}")),
        1 => (int(), int(), int(), int()).prop_map(|(n, p, lo, hi)| format!("distributed {{ backend = .nccl, nodes = {n}, procs_per_node = {p}, elastic = {{ min_nodes = {lo}, max_nodes = {hi}, max_restarts = 1 }} }}")),
        1 => (typed(&["bert-base-uncased", "org/model", "-o"]), typed(&["/models", "/m"])).prop_map(|(r, t)| format!("assets += [huggingface({r}, to = {t})]")),
        1 => (typed(&["https://example.org/a.tar.gz", "https://x.org/x.git"]), typed(&["/data/a", "/x"])).prop_map(|(u, t)| format!("assets += [url({u}, to = {t})]")),
        1 => (typed(&["./main.env.scl", "./main.env.scl", "./scl.toml", "./x"]), typed(&["/app/m", "/app"])).prop_map(|(f, t)| format!("files += [{{ from = {f}, to = {t} }}]")),
        1 => (typed(&["host:./data", "s3://bucket/x", "pvc:claim"]), typed(&["/data", "/mnt/x"])).prop_map(|(s, m)| format!("volumes += [{{ name = \"v\", source = {s}, mount = {m} }}]")),
        1 => list_of(string()).prop_map(|l| format!("depends_on = {l}")),
        1 => list_of(typed(&["/cache/hf", "/", "/etc", "/w/../usr", "/data/x y", "rel"])).prop_map(|l| format!("writable = {l}")),
        1 => list.clone().prop_map(|l| format!("test = {l}")),
        1 => image_ref().prop_map(|r| format!("builder = image({r})")),
        1 => (typed(&["hf", "h f", "a,b", "-x", ""]), typed(&["token", "k=v", "t"])).prop_map(|(n, k)| format!("assets += [huggingface(\"org/m\", to = \"/m\", token = secret({n}, {k}))]")),
        1 => (typed(&["pypi", "p q"]), typed(&["netrc", "x\ny"])).prop_map(|(n, k)| format!("python.index_credentials = secret({n}, {k})")),
        1 => image_ref().prop_map(|r| format!("services {{\n    web = {{ base = image({r}) }}\n    db = {{ base = image(\"debian:12.5\"), depends_on = [\"web\"] }}\n  }}")),
    ]
    .boxed();
    let field = if well_typed {
        field
    } else {
        prop_oneof![
            12 => field,
            1 => (select(&["ports", "setup", "labels", "description", "workdir", "a", "system.packages"][..]), expr())
                .prop_map(|(f, e)| format!("{f} = {e}")),
        ]
        .boxed()
    };
    let cond = if well_typed {
        select(
            &[
                "true",
                "false",
                "len(self.ports) > 0",
                "len(a2) > 1",
                "a1 > 2",
                "contains(self.labels, \"A\")",
            ][..],
        )
        .prop_map(String::from)
        .boxed()
    } else {
        cond()
    };
    field
        .prop_recursive(2, 8, 3, move |inner| {
            prop_oneof![
                (cond.clone(), prop::collection::vec(inner.clone(), 0..3))
                    .prop_map(|(c, v)| format!("if {c} {{\n  {}\n  }}", v.join("\n  "))),
                (cond.clone(), inner.clone(), inner)
                    .prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
            ]
        })
        .boxed()
}

/// A declaration other than an env.
fn decl() -> BoxedStrategy<String> {
    prop_oneof![
        3 => (select(&["a0", "a1", "a2", "s"][..]), expr()).prop_map(|(n, e)| format!("let {n} = {e}")),
        1 => (select(&["Int", "String", "Bool", "Memory", "[String]", "Int?", "{String: String}"][..]), expr(), expr())
            .prop_map(|(t, d, w)| format!("param p0: {t} = {d} where {w}")),
        1 => (select(&["Int", "String"][..]), expr()).prop_map(|(t, b)| format!("fn f0(v: {t}) = {b}")),
        1 => Just("fn f0(v: String) -> String = \"${v}-${v}\"".to_string()),
        1 => Just("enum Flavor { small, large }".to_string()),
        1 => select(&["\"std/pytorch-cuda\"", "\"std/s3-data\"", "\"std/s3-data\"", "\"std/pytorch-cuda\"", "\"./missing.env.scl\""][..])
            .prop_map(|p| format!("import {p} as m")),
    ]
    .boxed()
}

/// A declaration of the typed module: `a0: String`, `a1: Int`, `a2: [String]`.
fn typed_decl() -> BoxedStrategy<String> {
    prop_oneof![
        2 => str_expr().prop_filter("no self-reference", |e| !e.contains("a0")).prop_map(|e| format!("let a0 = {e}")),
        1 => int().prop_map(|n| format!("let a1 = {n} + 1")),
        2 => list_of(string()).prop_map(|l| format!("let a2 = {l}")),
        1 => Just("import \"std/s3-data\" as m".to_string()),
        1 => Just("param p0: Int = 2 where p0 >= 1".to_string()),
    ]
    .boxed()
}

/// A whole module: mostly a well-typed one (so it reaches the backend with
/// hostile values), else anything of the grammar.
pub fn module() -> BoxedStrategy<String> {
    prop_oneof![
        3 => module_of(true),
        2 => module_of(false),
    ]
    .boxed()
}

/// A module of declarations, then envs that may extend the ones before
/// them (and be templates); `typed` keeps every expression well-typed.
fn module_of(typed: bool) -> BoxedStrategy<String> {
    let item = move || item(typed);
    let decl = move || if typed { typed_decl() } else { decl() };
    let env = (
        prop::collection::vec(item(), 1..7),
        any::<bool>(),
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.1),
    );
    (
        prop::collection::vec(decl(), 0..5),
        prop::collection::vec(env, 1..4),
    )
        .prop_map(|(decls, envs)| {
            let mut s = String::new();
            // One declaration per name (a duplicate is only an E0101).
            let mut names = std::collections::HashSet::new();
            for d in decls {
                let name = d.split([' ', '(', ':']).nth(1).unwrap_or("").to_string();
                let name = if d.starts_with("import") {
                    d.clone()
                } else {
                    name
                };
                if names.insert(name) {
                    s.push_str(&d);
                    s.push('\n');
                }
            }
            // Every name the expressions use is defined.
            for (name, def) in [
                ("a0", "let a0 = \"a\""),
                ("a1", "let a1 = 1"),
                ("a2", "let a2 = [\"x\"]"),
                ("s", "let s = \"s\""),
                ("p0", "param p0: Int = 1"),
                ("f0", "fn f0(v: String) = v"),
            ] {
                if names.insert(name.to_string()) {
                    s.push_str(def);
                    s.push('\n');
                }
            }
            for (i, (items, extends, with_base, template)) in envs.into_iter().enumerate() {
                if template {
                    s.push_str(&format!(
                        "env t{i}(v: String = \"x\") {{\n  labels {{ v = v }}\n"
                    ));
                } else if extends && i > 0 {
                    s.push_str(&format!("env e{i} extends e{} {{\n", i - 1));
                } else {
                    s.push_str(&format!("env e{i} {{\n"));
                }
                if with_base {
                    s.push_str("  base = image(\"debian:12.5\")\n");
                }
                // One `=` per field and block (a second is only an E0305).
                let mut set = std::collections::HashSet::new();
                for it in items {
                    let key = it.split(' ').next().unwrap_or("").to_string();
                    let assign = it.split(' ').nth(1) == Some("=");
                    if (assign
                        || key == "python"
                        || key == "vars"
                        || key == "labels"
                        || key == "distributed"
                        || key == "user")
                        && !set.insert(key.clone())
                        || (with_base && key == "base")
                    {
                        continue;
                    }
                    s.push_str("  ");
                    s.push_str(&it);
                    s.push('\n');
                }
                s.push_str("}\n");
            }
            s
        })
        .boxed()
}
