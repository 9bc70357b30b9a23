//! Builtin functions, quantity literals, and coercion of values to types.

use crate::eval::{Cx, Evaluator, Reported, R};
use crate::ty::{RecordTy, Ty};
use crate::validate::{self, Invalid};
use crate::value::*;
use crate::{FileError, ModuleId};
use scl_diag::{did_you_mean, Diagnostic, Span};
use scl_syntax::ast::{self, QuantitySuffix};
use std::str::FromStr;
use std::sync::Arc;

/// A builtin function. Every builtin has one row in [`TABLE`] (name,
/// parameters, result, doc); evaluation ([`call`]) and the static type
/// checker (`typeck`) both read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    Image,
    File,
    Secret,
    Huggingface,
    Url,
    Len,
    Join,
    Split,
    Replace,
    Lower,
    Upper,
    Contains,
    Keys,
}

/// The static type of a builtin's parameter: a schema type, or one of the
/// few shapes a builtin accepts that a single type does not name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamTy {
    /// A `String` (or any string-like value).
    Str,
    /// A container path (`Path`: absolute, checked on the value).
    Path,
    /// A list of strings.
    StrList,
    /// A list whose elements can be interpolated (`join`).
    InterpList,
    /// A string, a list or a map (`len`).
    Sized,
    /// A string, a list or a map; the next argument is what is looked for (`contains`).
    Container,
    /// What `contains` looks for: a string in a string or a map, an element in a list.
    Item,
    /// A map or a record (`keys`).
    Map,
    /// A `secret(...)` reference.
    Secret,
}

/// The static type of a builtin's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetTy {
    Image,
    File,
    Secret,
    Asset,
    Int,
    Bool,
    Str,
    StrList,
}

/// One parameter of a builtin: its name (for `name = value` arguments),
/// its type, and whether it must be given.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinParam {
    pub name: &'static str,
    pub ty: ParamTy,
    pub required: bool,
}

/// One row of [`TABLE`].
#[derive(Clone, Copy, Debug)]
pub struct BuiltinDef {
    pub builtin: Builtin,
    /// The name programs call it by.
    pub name: &'static str,
    pub params: &'static [BuiltinParam],
    pub ret: RetTy,
    /// One line for hover and completion (the book's `reference/builtins.md`
    /// has the full text).
    pub doc: &'static str,
}

const fn p(name: &'static str, ty: ParamTy, required: bool) -> BuiltinParam {
    BuiltinParam { name, ty, required }
}

/// Every builtin function, in the order of the book's Builtins chapter.
pub const TABLE: &[BuiltinDef] = &[
    BuiltinDef {
        builtin: Builtin::Image,
        name: "image",
        params: &[p("ref", ParamTy::Str, true), p("digest", ParamTy::Str, false)],
        ret: RetTy::Image,
        doc: "An OCI image reference (`image(\"debian:12.5\")`), optionally pinned by `digest = \"sha256:…\"`.",
    },
    BuiltinDef {
        builtin: Builtin::File,
        name: "file",
        params: &[p("path", ParamTy::Str, true)],
        ret: RetTy::File,
        doc: "A file of the workspace, read and hashed at compile time; the path is relative to the calling module.",
    },
    BuiltinDef {
        builtin: Builtin::Secret,
        name: "secret",
        params: &[p("name", ParamTy::Str, true), p("key", ParamTy::Str, true)],
        ret: RetTy::Secret,
        doc: "A reference to key `key` of the runner's secret `name`; only a whole `vars` value, never text.",
    },
    BuiltinDef {
        builtin: Builtin::Huggingface,
        name: "huggingface",
        params: &[
            p("repo", ParamTy::Str, true),
            p("files", ParamTy::StrList, false),
            p("revision", ParamTy::Str, false),
            p("to", ParamTy::Path, true),
            p("token", ParamTy::Secret, false),
        ],
        ret: RetTy::Asset,
        doc: "An asset: files of a Hugging Face Hub repository (all without `files`), fetched at build time into `to`; `token = secret(...)` for a gated or private repository (given to the build as a secret, never written).",
    },
    BuiltinDef {
        builtin: Builtin::Url,
        name: "url",
        params: &[
            p("url", ParamTy::Str, true),
            p("sha256", ParamTy::Str, false),
            p("to", ParamTy::Path, true),
        ],
        ret: RetTy::Asset,
        doc: "An asset: one file downloaded at build time into `to`, verified by `sha256` when given.",
    },
    BuiltinDef {
        builtin: Builtin::Len,
        name: "len",
        params: &[p("value", ParamTy::Sized, true)],
        ret: RetTy::Int,
        doc: "The number of characters of a string, elements of a list or keys of a map.",
    },
    BuiltinDef {
        builtin: Builtin::Join,
        name: "join",
        params: &[p("list", ParamTy::InterpList, true), p("sep", ParamTy::Str, true)],
        ret: RetTy::Str,
        doc: "The elements of `list` as text, with `sep` between them.",
    },
    BuiltinDef {
        builtin: Builtin::Split,
        name: "split",
        params: &[p("string", ParamTy::Str, true), p("sep", ParamTy::Str, true)],
        ret: RetTy::StrList,
        doc: "The parts of `string` between occurrences of the non-empty `sep`.",
    },
    BuiltinDef {
        builtin: Builtin::Replace,
        name: "replace",
        params: &[
            p("string", ParamTy::Str, true),
            p("from", ParamTy::Str, true),
            p("to", ParamTy::Str, true),
        ],
        ret: RetTy::Str,
        doc: "`string` with every occurrence of the non-empty `from` replaced by `to`.",
    },
    BuiltinDef {
        builtin: Builtin::Lower,
        name: "lower",
        params: &[p("value", ParamTy::Str, true)],
        ret: RetTy::Str,
        doc: "The string in lower case (Unicode).",
    },
    BuiltinDef {
        builtin: Builtin::Upper,
        name: "upper",
        params: &[p("value", ParamTy::Str, true)],
        ret: RetTy::Str,
        doc: "The string in upper case (Unicode).",
    },
    BuiltinDef {
        builtin: Builtin::Contains,
        name: "contains",
        params: &[p("container", ParamTy::Container, true), p("item", ParamTy::Item, true)],
        ret: RetTy::Bool,
        doc: "Whether a string holds a substring, a list an element, or a map a key.",
    },
    BuiltinDef {
        builtin: Builtin::Keys,
        name: "keys",
        params: &[p("value", ParamTy::Map, true)],
        ret: RetTy::StrList,
        doc: "The keys of a map, in order.",
    },
];

const fn names() -> [&'static str; TABLE.len()] {
    let mut out = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        out[i] = TABLE[i].name;
        i += 1;
    }
    out
}

const NAME_ARRAY: [&str; TABLE.len()] = names();

/// The names of the builtins (from [`TABLE`]).
pub const NAMES: &[&str] = &NAME_ARRAY;

impl Builtin {
    /// The builtin called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        TABLE.iter().find(|d| d.name == name).map(|d| d.builtin)
    }

    /// Its row of [`TABLE`].
    pub fn def(self) -> &'static BuiltinDef {
        // The table lists the builtins in the enum's order (a test checks it).
        &TABLE[self as usize]
    }

    /// The name programs call it by.
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// The name of the builtin called `name`, if any (what `Value::Builtin` holds).
pub fn lookup(name: &str) -> Option<&'static str> {
    Builtin::from_name(name).map(Builtin::name)
}

/// Calls builtin `name` with `args` (evaluated in `cx`).
pub(crate) fn call(
    ev: &Evaluator,
    cx: Cx,
    name: &str,
    args: &[ast::Arg],
    span: Span,
    _ty: &Ty,
) -> R<Value> {
    let m = cx.module;
    let Some(builtin) = Builtin::from_name(name) else {
        return Err(Reported);
    };
    let s = builtin.def();
    let mut vals: Vec<Option<(Value, Span)>> = vec![None; s.params.len()];
    let mut given: Vec<Option<Span>> = vec![None; s.params.len()];
    let mut pos = 0;
    for a in args {
        let i = match &a.name {
            None => {
                pos += 1;
                if pos > s.params.len() {
                    return ev.err(
                        m,
                        "E0308",
                        a.span,
                        format!("`{name}` takes at most {} argument(s)", s.params.len()),
                    );
                }
                pos - 1
            }
            Some(n) => match s.params.iter().position(|p| p.name == n.name) {
                Some(i) => i,
                None => {
                    let mut d = Diagnostic::error(
                        "E0308",
                        n.span,
                        format!("`{name}` has no argument `{}`", n.name),
                    );
                    d = match did_you_mean(&n.name, s.params.iter().map(|p| p.name)) {
                        Some(x) => d.with_help(format!("did you mean `{x}`?")),
                        None => d.with_help(format!(
                            "arguments: {}",
                            s.params
                                .iter()
                                .map(|p| p.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    };
                    return Err(ev.report(m, d));
                }
            },
        };
        // One value per parameter, as for user functions (E0305): a second
        // one (named twice, or named after its position) is an error.
        if let Some(first) = given[i] {
            let at = a.name.as_ref().map_or(a.span, |n| n.span);
            return Err(ev.report(
                m,
                Diagnostic::error(
                    "E0305",
                    at,
                    format!("argument `{}` of `{name}` is given twice", s.params[i].name),
                )
                .with_label(Arc::from(""), first, "first given here")
                .with_help("remove one of the two arguments"),
            ));
        }
        given[i] = Some(a.span);
        let v = ev.eval(cx, &a.value, &Ty::Any)?;
        if ev.pending(&v) {
            return Ok(Value::Pending);
        }
        vals[i] = Some((v, a.value.span));
    }
    for (
        i,
        BuiltinParam {
            name: p,
            required: req,
            ..
        },
    ) in s.params.iter().enumerate()
    {
        if *req && vals[i].is_none() {
            return Err(ev.report(
                m,
                Diagnostic::error("E0309", span, format!("`{name}` needs the argument `{p}`"))
                    .with_help(format!("pass `{p} = …`")),
            ));
        }
    }
    let str_arg = |i: usize| -> R<Option<(Arc<str>, Span)>> {
        match &vals[i] {
            None => Ok(None),
            Some((Value::Str(s), sp)) => Ok(Some((s.clone(), *sp))),
            Some((v, sp)) => ev.err(
                m,
                "E0201",
                *sp,
                format!(
                    "`{name}` expects a String for `{}`, found {}",
                    s.params[i].name,
                    v.type_name()
                ),
            ),
        }
    };
    let list_of_str = |i: usize| -> R<Vec<Arc<str>>> {
        match &vals[i] {
            None => Ok(Vec::new()),
            Some((Value::List(l), sp)) => l
                .iter()
                .map(|x| match x {
                    Value::Str(s) => Ok(s.clone()),
                    other => ev.err(
                        m,
                        "E0201",
                        *sp,
                        format!(
                            "`{name}` expects a list of strings, found {}",
                            other.type_name()
                        ),
                    ),
                })
                .collect(),
            Some((v, sp)) => ev.err(
                m,
                "E0201",
                *sp,
                format!("`{name}` expects a list, found {}", v.type_name()),
            ),
        }
    };
    match builtin {
        Builtin::Image => {
            let (r, sp) = str_arg(0)?.unwrap();
            let parts = check_image_ref(ev, m, &r, sp)?;
            let digest = str_arg(1)?;
            if let (Some((_, dsp)), true) = (&digest, parts.digest.is_some()) {
                return ev.err(
                    m,
                    "E0324",
                    *dsp,
                    "the reference already has a digest (`@sha256:…`); give it once",
                );
            }
            if let Some((d, dsp)) = &digest {
                validate::image_digest(d).map_err(|mut e| {
                    e.msg = format!("{}: {}", validate::quoted(d), e.msg);
                    invalid(ev, m, "E0324", *dsp, e)
                })?;
            } else if parts.digest.is_none()
                && (parts.tag.is_none() || parts.tag.as_deref() == Some("latest"))
            {
                ev.warn(
                    m,
                    "W0003",
                    sp,
                    format!(
                        "image {} has no pinned tag, so the build can change from day to day",
                        validate::quoted(&r)
                    ),
                    "pin a tag (`debian:12.5`) or a digest (`digest = \"sha256:…\"`)",
                );
            }
            Ok(Value::image(r, digest.map(|d| d.0)))
        }
        Builtin::File => {
            let (p, sp) = str_arg(0)?.unwrap();
            match ev.host.read_file(m, &p) {
                Ok(f) => {
                    validate::copy_source(&f.path).map_err(|e| invalid(ev, m, "E0327", sp, e))?;
                    Ok(Value::File(Arc::new(crate::value::FileValue {
                        path: f.path.into(),
                        sha256: f.sha256.into(),
                        text: f.text,
                    })))
                }
                Err(e) => Err(file_error(ev, m, e, sp, &p)),
            }
        }
        Builtin::Secret => {
            let (n, _) = str_arg(0)?.unwrap();
            let (k, _) = str_arg(1)?.unwrap();
            Ok(Value::secret(n, k))
        }
        Builtin::Huggingface => {
            let (repo, rsp) = str_arg(0)?.unwrap();
            validate::hf_repo_id(&repo).map_err(|e| invalid(ev, m, "E0322", rsp, e))?;
            let files = list_of_str(1)?;
            if let Some((_, fsp)) = &vals[1] {
                for f in &files {
                    validate::hf_file(f).map_err(|e| invalid(ev, m, "E0322", *fsp, e))?;
                }
            }
            let rev = match str_arg(2)? {
                Some((r, sp)) => {
                    validate::hf_revision(&r).map_err(|e| invalid(ev, m, "E0322", sp, e))?;
                    r
                }
                None => "main".into(),
            };
            let (to, tsp) = str_arg(3)?.unwrap();
            let to = coerce(ev, m, Value::Str(to), &Ty::Path, tsp)?;
            let mut r = Record::new();
            r.insert("kind".into(), Value::str("huggingface"));
            r.insert("repo".into(), Value::Str(repo));
            r.insert(
                "files".into(),
                Value::List(Arc::new(files.into_iter().map(Value::Str).collect())),
            );
            r.insert("revision".into(), Value::Str(rev));
            r.insert("to".into(), to);
            match &vals[4] {
                None => {}
                Some((v @ Value::Secret(_), _)) => {
                    r.insert("token".into(), v.clone());
                }
                Some((v, sp)) => {
                    return ev.err(
                        m,
                        "E0201",
                        *sp,
                        format!(
                            "`huggingface` expects a `secret(...)` for `token`, found {}",
                            v.type_name()
                        ),
                    )
                }
            }
            Ok(Value::Record(Arc::new(r)))
        }
        Builtin::Url => {
            let (u, usp) = str_arg(0)?.unwrap();
            let parsed = validate::http_url(&u).map_err(|e| invalid(ev, m, "E0325", usp, e))?;
            if validate::is_git_url(&parsed) {
                return Err(ev.report(
                    m,
                    Diagnostic::error(
                        "E0326",
                        usp,
                        format!("{} ends in `.git`, so Docker's `ADD` would clone it as a git repository instead of downloading a file", validate::quoted(&u)),
                    )
                    .with_help("`url()` downloads one file: name the file (e.g. a release archive), or fetch the repository in a `setup` step with `git clone --depth 1 URL`"),
                ));
            }
            let sha = str_arg(1)?;
            if let Some((h, hsp)) = &sha {
                if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
                    return ev.err(m, "E0208", *hsp, "`sha256` must be 64 hex digits");
                }
            } else {
                ev.warn(
                    m,
                    "W0002",
                    usp,
                    format!("the download {} has no checksum", validate::quoted(&u)),
                    "add `sha256 = \"<hex>\"` so the build can verify the file",
                );
            }
            let (to, tsp) = str_arg(2)?.unwrap();
            let to = coerce(ev, m, Value::Str(to), &Ty::Path, tsp)?;
            let mut r = Record::new();
            r.insert("kind".into(), Value::str("url"));
            r.insert("url".into(), Value::Str(u));
            if let Some((h, _)) = sha {
                r.insert("sha256".into(), Value::str(h.to_lowercase()));
            }
            r.insert("to".into(), to);
            Ok(Value::Record(Arc::new(r)))
        }
        Builtin::Len => match &vals[0].as_ref().unwrap().0 {
            Value::Str(s) => {
                // Counting characters walks the string: work, like a loop.
                ev.work(m, span, 1 + (s.len() / 64) as u64)?;
                Ok(Value::Int(s.chars().count() as i64))
            }
            Value::List(l) => Ok(Value::Int(l.len() as i64)),
            Value::Record(r) => Ok(Value::Int(r.len() as i64)),
            v => ev.err(
                m,
                "E0201",
                vals[0].as_ref().unwrap().1,
                format!("`len` needs a string, list or map, found {}", v.type_name()),
            ),
        },
        // Every string and list a builtin makes is sized before it is built
        // and charged to the evaluation budget (`E0316`).
        Builtin::Join => {
            let (sep, _) = str_arg(1)?.unwrap();
            let mut parts = Vec::new();
            if let Some((Value::List(l), sp)) = &vals[0] {
                let mut len = sep.len().saturating_mul(l.len().saturating_sub(1));
                for x in l.iter() {
                    let p = ev.interpolate(m, x, *sp)?;
                    len = len.saturating_add(p.len());
                    if len > crate::eval::MAX_SIZE {
                        return ev.too_large(m, span, "string");
                    }
                    parts.push(p);
                }
                ev.new_string(m, span, len)?;
            } else {
                return ev.err(
                    m,
                    "E0201",
                    vals[0].as_ref().unwrap().1,
                    "`join` needs a list",
                );
            }
            Ok(Value::str(parts.join(&sep)))
        }
        Builtin::Split => {
            let (s, _) = str_arg(0)?.unwrap();
            let (sep, sp) = str_arg(1)?.unwrap();
            if sep.is_empty() {
                return ev.err(m, "E0208", sp, "`split` needs a non-empty separator");
            }
            ev.new_list(m, span, s.matches(&*sep).count() + 1)?;
            ev.new_string(m, span, s.len())?;
            Ok(Value::List(Arc::new(
                s.split(&*sep).map(Value::str).collect(),
            )))
        }
        Builtin::Replace => {
            let (s, _) = str_arg(0)?.unwrap();
            let (from, sp) = str_arg(1)?.unwrap();
            let (to, _) = str_arg(2)?.unwrap();
            if from.is_empty() {
                return ev.err(m, "E0208", sp, "`replace` needs a non-empty pattern");
            }
            // A one-byte (ASCII) pattern is counted and replaced byte by
            // byte (an ASCII byte is never part of another character), which
            // stays fast when nearly every byte matches; others search with
            // the two-way algorithm. Both are linear.
            let byte = (from.len() == 1).then(|| from.as_bytes()[0]);
            let hits = match byte {
                Some(b) => s.bytes().filter(|&x| x == b).count(),
                None => s.matches(&*from).count(),
            };
            let len = (s.len() - hits * from.len()).saturating_add(hits.saturating_mul(to.len()));
            ev.new_string(m, span, len)?;
            Ok(Value::str(match byte {
                Some(b) => {
                    let mut out = Vec::with_capacity(len);
                    for &x in s.as_bytes() {
                        if x == b {
                            out.extend_from_slice(to.as_bytes());
                        } else {
                            out.push(x);
                        }
                    }
                    // Still UTF-8: an ASCII byte was replaced by a string.
                    String::from_utf8(out)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
                }
                None => s.replace(&*from, &to),
            }))
        }
        Builtin::Lower | Builtin::Upper => {
            let (s, _) = str_arg(0)?.unwrap();
            // Case mapping can lengthen a string (`ß` → `SS`, at most 3x):
            // sized once made.
            let out = if builtin == Builtin::Lower {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            };
            ev.new_string(m, span, out.len())?;
            Ok(Value::str(out))
        }
        Builtin::Contains => {
            let item = &vals[1].as_ref().unwrap().0;
            match (&vals[0].as_ref().unwrap().0, item) {
                (Value::Str(s), Value::Str(x)) => {
                    ev.work(m, span, 1 + (s.len() / 64) as u64)?;
                    Ok(Value::Bool(s.contains(&**x)))
                }
                (Value::List(l), x) => {
                    // One comparison per element: work, like a loop.
                    ev.work(m, span, 1 + l.len() as u64)?;
                    Ok(Value::Bool(
                        l.iter().any(|y| crate::eval::values_equal(x, y)),
                    ))
                }
                (Value::Record(r), Value::Str(k)) => Ok(Value::Bool(r.contains_key(&**k))),
                (c, _) => ev.err(
                    m,
                    "E0201",
                    vals[0].as_ref().unwrap().1,
                    format!(
                        "`contains` needs a string, list or map, found {}",
                        c.type_name()
                    ),
                ),
            }
        }
        Builtin::Keys => match &vals[0].as_ref().unwrap().0 {
            Value::Record(r) => ev.new_list(m, span, r.len()).map(|()| {
                Value::List(Arc::new(
                    r.keys()
                        .filter(|k| !is_type_mark(k))
                        .map(|k| Value::Str(k.clone()))
                        .collect(),
                ))
            }),
            v => ev.err(
                m,
                "E0201",
                vals[0].as_ref().unwrap().1,
                format!("`keys` needs a map, found {}", v.type_name()),
            ),
        },
    }
}

fn file_error(ev: &Evaluator, m: ModuleId, e: FileError, span: Span, written: &str) -> Reported {
    match e {
        FileError::NotFound(p) => ev.report(
            m,
            Diagnostic::error("E0307", span, format!("file {} not found", validate::quoted(written)))
                .with_note(format!("looked for {p}"))
                .with_help("paths are relative to the file that names them"),
        ),
        FileError::OutsideWorkspace(p) => ev.report(
            m,
            Diagnostic::error("E0105", span, format!("{} is outside the workspace", validate::quoted(written)))
                .with_note(format!("it resolves to {p}"))
                .with_help("only files inside the workspace root (the folder with `scl.toml`, else the root file's folder) can be read"),
        ),
        FileError::TooLarge(p, limit) => ev.report(
            m,
            Diagnostic::error(
                "E0009",
                span,
                format!("{written:?} is larger than {} MiB, the most the compiler reads", limit >> 20),
            )
            .with_note(format!("it resolves to {p}"))
            .with_help("keep large data out of the build description: copy it with a volume or an asset"),
        ),
        FileError::Unreadable(p, why) => ev.report(
            m,
            Diagnostic::error(
                "E0107",
                span,
                format!("{} cannot be read: {why}", validate::quoted(written)),
            )
            .with_note(format!("it resolves to {p}"))
            .with_help("check that the file is readable by this user"),
        ),
    }
}

/// Reports `e` as a `code` error at `span`, with its help.
fn invalid(ev: &Evaluator, m: ModuleId, code: &'static str, span: Span, e: Invalid) -> Reported {
    ev.report(m, Diagnostic::error(code, span, e.msg).with_help(e.help))
}

/// Checks an image reference (see [`validate::image_reference`]); E0324.
fn check_image_ref(ev: &Evaluator, m: ModuleId, r: &str, span: Span) -> R<validate::ImageParts> {
    validate::image_reference(r).map_err(|e| invalid(ev, m, "E0324", span, e))
}

/// Parses a PEP 508 requirement with pep508_rs through the panic guard:
/// `Ok(())`, or the message of why it is not one.
fn pep508(s: &str) -> Result<(), String> {
    match validate::guarded(|| pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(s)) {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(e.message.to_string()),
        None => Err(PANICKED.into()),
    }
}

/// The reason given when a parsing library panicked on a value (E0317).
const PANICKED: &str = "the parser failed on it";

/// Evaluates a quantity literal: binary and decimal suffixes give Memory in
/// bytes (which must be whole), `m` gives Cpu in millicores (an i64). The
/// value is computed exactly: a number that does not fit (an exponent that
/// does not fit an i64 included) is E0005, never clamped or read as 0.
pub(crate) fn quantity(
    ev: &Evaluator,
    m: ModuleId,
    number: &str,
    suffix: QuantitySuffix,
    span: Span,
) -> R<Value> {
    let literal = format!("{number}{}", suffix.as_str());
    let too_large = || ev.err(m, "E0005", span, format!("`{literal}` is too large"));
    let what = if suffix == QuantitySuffix::Milli {
        "millicores"
    } else {
        "bytes"
    };
    let not_whole = || {
        ev.err(
            m,
            "E0203",
            span,
            format!("`{literal}` is not a whole number of {what}"),
        )
    };
    let zero = || match suffix {
        QuantitySuffix::Milli => Value::Cpu(0),
        _ => Value::Memory(Bytes::new(0)),
    };
    // number = digits[.digits][e[+-]digits]: the value is p × 10^shift.
    let (mant, exp) = match number.split_once('e') {
        Some((a, b)) => (a, Some(b)),
        None => (number, None),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(zero());
    }
    let Ok(mut p) = digits.parse::<i128>() else {
        return too_large();
    };
    let exp: i64 = match exp.map(str::parse::<i64>) {
        None => 0,
        Some(Ok(e)) => e,
        // An exponent beyond i64: a non-zero value is far too large, or
        // (negative) far below one unit.
        Some(Err(_)) if exp.is_some_and(|e| e.starts_with('-')) => return not_whole(),
        Some(Err(_)) => return too_large(),
    };
    let mul: i128 = match suffix {
        QuantitySuffix::Binary(k) => 1i128 << (10 * k as u32),
        QuantitySuffix::Decimal(k) => 1000i128.pow(k as u32),
        QuantitySuffix::Milli => 1,
    };
    let Some(x) = p.checked_mul(mul) else {
        return too_large();
    };
    p = x;
    let shift = exp.saturating_sub(frac.len() as i64);
    if shift >= 0 {
        // p is not zero, so this overflows within 39 steps.
        for _ in 0..shift {
            let Some(x) = p.checked_mul(10) else {
                return too_large();
            };
            p = x;
        }
    } else {
        let mut q = shift.unsigned_abs();
        while q > 0 && p % 10 == 0 {
            p /= 10;
            q -= 1;
        }
        if q > 0 {
            return not_whole();
        }
    }
    Ok(match suffix {
        QuantitySuffix::Milli => match i64::try_from(p) {
            Ok(v) => Value::Cpu(v),
            Err(_) => return too_large(),
        },
        _ => Value::Memory(Bytes::new(p)),
    })
}

/// `name=1.2` (conda's and apt's way to pin) where PEP 508 wants `==`:
/// the help that says so, with the corrected requirement.
fn single_equals_hint(req: &str) -> Option<String> {
    let (name, version) = req.split_once('=')?;
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.[],".contains(c));
    (name_ok && !version.starts_with('=') && version.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| format!("PEP 508 pins a version with `==`: write `{name}=={version}`"))
}

/// A help line for common shape mistakes (`gpu = 2`, `user = "trainer"`).
fn shape_hint(v: &Value, ty: &Ty) -> Option<String> {
    Some(match (ty, v) {
        (Ty::Record(RecordTy::Gpu), Value::Int(n)) => format!("a Gpu is a record: write `{{ count = {n} }}` (optionally with `type = \"nvidia-a100\"`)"),
        (Ty::Record(RecordTy::User), Value::Str(s)) => format!("a User is a record: write `{{ name = {}, uid = 1000 }}`", validate::quoted(s)),
        (Ty::Record(RecordTy::Volume), Value::Str(_)) => "a Volume is a record: `{ name = \"data\", source = \"pvc://data\", mount = \"/data\" }`, or use `std/s3-data`'s `mount(...)`".into(),
        (Ty::Record(RecordTy::Copy), Value::Str(s)) => format!("a Copy is a record: write `{{ from = {}, to = \"/workspace/…\" }}`", validate::quoted(s)),
        // `command = "python train.py"`: exec form is one element per argument.
        (Ty::List(et), Value::Str(s)) if **et == Ty::String && s.len() <= 200 && s.split_whitespace().count() > 1 => {
            let words: Vec<String> = s.split_whitespace().map(|w| format!("{w:?}")).collect();
            format!("this field is a list, one element per argument: write `[{}]`", words.join(", "))
        }
        (Ty::List(_), v) if !matches!(v, Value::List(_)) => format!("this field is a list: write `[{v}]`"),
        // `python.version = 3.10` is the number 3.1.
        (Ty::Version, Value::Float(_) | Value::Int(_)) => "a version is a string: write it in quotes (`\"3.10\"`, not `3.10`, which is the number 3.1)".into(),
        (Ty::Image, _) => "write `image(\"debian:12.5\")` or a reference string".into(),
        _ => return None,
    })
}

fn mismatch(ev: &Evaluator, m: ModuleId, v: &Value, ty: &Ty, span: Span) -> Reported {
    let shown = match v {
        Value::Str(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::Memory(_)
        | Value::Cpu(_)
        | Value::Enum(_) => {
            format!(" {v}")
        }
        _ => String::new(),
    };
    let mut d = Diagnostic::error(
        "E0201",
        span,
        format!("expected {ty}, found {}{shown}", v.type_name()),
    );
    if let Some(h) = shape_hint(v, ty) {
        d = d.with_help(h);
    }
    ev.report(m, d)
}

/// Checks `v` against `ty`, converting where the language allows.
pub(crate) fn coerce(ev: &Evaluator, m: ModuleId, v: Value, ty: &Ty, span: Span) -> R<Value> {
    if matches!(v, Value::Pending) {
        return Ok(v);
    }
    match (ty, v) {
        (Ty::Any, v) => Ok(v),
        (Ty::Optional(t), v) => coerce(ev, m, v, t, span),
        (Ty::Bool, v @ Value::Bool(_)) => Ok(v),
        (Ty::Int, v @ Value::Int(_)) => Ok(v),
        (Ty::Float, Value::Int(i)) => Ok(Value::Float(i as f64)),
        (Ty::Float, v @ Value::Float(_)) => Ok(v),
        (Ty::String, v @ Value::Str(_)) => Ok(v),
        (Ty::Version, Value::Str(s)) => {
            // PEP 440-like: starts with a digit; digits, letters and `. + - _ *` (`3.10`, `12.1`, `2.3.1+cu121`, `23.10`).
            if s.starts_with(|c: char| c.is_ascii_digit())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".+-_*".contains(c))
            {
                Ok(Value::Str(s))
            } else {
                ev.err(
                    m,
                    "E0208",
                    span,
                    format!(
                        "{} is not a version (e.g. \"3.10\", \"2.1.2\", \"12.1\")",
                        validate::quoted(&s)
                    ),
                )
            }
        }
        (Ty::Path, Value::Str(s)) => {
            if s.starts_with('/') && !s.contains(char::is_control) {
                Ok(Value::Str(s))
            } else {
                Err(ev.report(
                    m,
                    Diagnostic::error(
                        "E0208",
                        span,
                        format!("{} is not an absolute container path", validate::quoted(&s)),
                    )
                    .with_help(if s.starts_with('/') {
                        "a container path has no control characters".to_string()
                    } else {
                        format!(
                            "a path in the container starts with `/`: write \"/{}\"",
                            s.trim_start_matches("./")
                        )
                    }),
                ))
            }
        }
        // A path copied into the image (`files[].from`): it must exist, and
        // `COPY` must read its name as that one file.
        (Ty::HostPath, Value::Str(s)) => match ev.host.host_path(m, &s, true) {
            Ok(p) => {
                validate::copy_source(&p).map_err(|e| invalid(ev, m, "E0327", span, e))?;
                Ok(Value::str(p))
            }
            Err(e) => Err(file_error(ev, m, e, span, &s)),
        },
        (Ty::VolumeSource, Value::Str(s)) => {
            // A folder on the machine that runs the container: normalized
            // (workspace-relative), not required to exist at compile time.
            if let Some(rel) = s.strip_prefix("host:") {
                return match ev.host.host_path(m, rel, false) {
                    Ok(p) => Ok(Value::str(format!("host:{p}"))),
                    Err(e) => Err(file_error(ev, m, e, span, rel)),
                };
            }
            if ["s3://", "pvc://", "nfs://"]
                .iter()
                .any(|p| s.starts_with(p) && s.len() > p.len())
                && !s.contains(|c: char| c.is_whitespace() || c.is_control())
            {
                Ok(Value::Str(s))
            } else {
                Err(ev.report(
                    m,
                    Diagnostic::error("E0208", span, format!("{} is not a volume source", validate::quoted(&s)))
                        .with_help("sources are `s3://BUCKET/PATH`, `pvc://CLAIM`, `nfs://HOST/PATH` or `host:PATH`"),
                ))
            }
        }
        (Ty::Url, Value::Str(s)) => match validate::url(&s) {
            Ok(_) => Ok(Value::Str(s)),
            Err(e) => Err(invalid(ev, m, "E0325", span, e)),
        },
        // pep508_rs replaces `${NAME}` from sclc's own environment (and pip
        // would from the build's): refused, so the result never depends on
        // an environment variable.
        (Ty::Requirement, Value::Str(s)) if validate::env_var_reference(&s).is_some() => {
            let var = validate::env_var_reference(&s).unwrap_or_default();
            Err(ev.report(
                m,
                Diagnostic::error(
                    "E0333",
                    span,
                    format!(
                        "{} holds `{}`, an environment variable reference, which the PEP 508 parser would replace from sclc's environment",
                        validate::quoted(&s),
                        validate::clip(var)
                    ),
                )
                .with_help("write the value itself; an env's requirements never depend on environment variables"),
            ))
        }
        (Ty::Requirement, Value::Str(s)) => match pep508(&s) {
            Ok(()) => Ok(Value::Str(s)),
            Err(msg) => {
                let help = "write `name`, `name==1.2.3`, `name>=1.2,<2` or `name[extra]>=1.0`";
                let d = if msg == PANICKED {
                    Diagnostic::error(
                        "E0317",
                        span,
                        format!(
                            "{} could not be read as a PEP 508 requirement ({msg})",
                            validate::quoted(&s)
                        ),
                    )
                    .with_help(format!(
                        "a package name starts and ends with a letter or digit; {help}"
                    ))
                } else {
                    Diagnostic::error(
                        "E0205",
                        span,
                        format!(
                            "{} is not a valid PEP 508 requirement: {msg}",
                            validate::quoted(&s)
                        ),
                    )
                    .with_help(single_equals_hint(&s).unwrap_or_else(|| help.to_string()))
                };
                Err(ev.report(m, d))
            }
        },
        (Ty::MatchSpec, Value::Str(s)) if s.starts_with('-') => Err(ev.report(
            m,
            Diagnostic::error(
                "E0205",
                span,
                format!(
                    "{} starts with `-`, which conda would read as an option",
                    validate::quoted(&s)
                ),
            )
            .with_help("list package match specs only (`numpy`, `numpy=1.26`)"),
        )),
        (Ty::MatchSpec, Value::Str(s)) => {
            // conda's match spec grammar, as conda reads it
            // (`scl_ir::conda::match_spec`: rattler, strict, else lenient for
            // the forms conda accepts).
            let parsed = validate::guarded(|| scl_ir::conda::match_spec(&s).map(|_| ()));
            match parsed {
                Some(Ok(())) => Ok(Value::Str(s)),
                None => Err(ev.report(
                    m,
                    Diagnostic::error(
                        "E0317",
                        span,
                        format!(
                            "{} could not be read as a conda match spec ({PANICKED})",
                            validate::quoted(&s)
                        ),
                    )
                    .with_help("write `name`, `name=1.2`, `name >=1.2,<2` or `channel::name=1.2`"),
                )),
                Some(Err(e)) => Err(ev.report(
                    m,
                    Diagnostic::error(
                        "E0205",
                        span,
                        format!(
                            "{} is not a valid conda match spec: {e}",
                            validate::quoted(&s)
                        ),
                    )
                    .with_help("write `name`, `name=1.2`, `name >=1.2,<2` or `channel::name=1.2`"),
                )),
            }
        }
        (Ty::Image, Value::Str(s)) => {
            check_image_ref(ev, m, &s, span)?;
            Ok(Value::image(s, None))
        }
        (Ty::Image, v @ Value::Image(_)) => Ok(v),
        (Ty::Memory, Value::Memory(bytes)) => {
            let b = bytes.get();
            if b < 0 {
                ev.err(
                    m,
                    "E0207",
                    span,
                    format!("memory cannot be negative ({b} bytes)"),
                )
            } else if b > u64::MAX as i128 {
                ev.err(
                    m,
                    "E0207",
                    span,
                    format!(
                        "{} is too large for a Memory (at most {} bytes, one byte less than 16Ei)",
                        format_memory(b),
                        u64::MAX
                    ),
                )
            } else {
                Ok(Value::Memory(bytes))
            }
        }
        (Ty::Memory, v @ (Value::Int(_) | Value::Float(_))) => Err(ev.report(
            m,
            Diagnostic::error(
                "E0203",
                span,
                format!("memory needs a unit: `{v}` alone is not a Memory"),
            )
            .with_help(format!("write `{v}Gi` (binary, ×2^30 bytes) or `{v}Mi`")),
        )),
        (Ty::Memory, v @ Value::Cpu(_)) => Err(ev.report(
            m,
            Diagnostic::error(
                "E0203",
                span,
                format!("`{v}` is a CPU quantity (milli), not a Memory"),
            )
            .with_help("memory takes `Ki Mi Gi Ti Pi Ei` or `k M G T P E`"),
        )),
        (Ty::Cpu, Value::Cpu(c)) => Ok(Value::Cpu(c)),
        (Ty::Cpu, Value::Int(i)) => i
            .checked_mul(1000)
            .map(Value::Cpu)
            .ok_or(Reported)
            .or_else(|_| ev.err(m, "E0207", span, "CPU quantity too large")),
        (Ty::Cpu, Value::Float(f)) => {
            let milli = f * 1000.0;
            if !milli.is_finite() || milli.abs() > 9.0e15 {
                ev.err(m, "E0207", span, format!("`{f}` cores is too large"))
            } else if milli.fract().abs() > 1e-9 {
                ev.err(
                    m,
                    "E0203",
                    span,
                    format!("`{f}` cores is not a whole number of millicores"),
                )
            } else {
                Ok(Value::Cpu(milli.round() as i64))
            }
        }
        (Ty::Cpu, v @ Value::Memory(_)) => Err(ev.report(
            m,
            Diagnostic::error(
                "E0203",
                span,
                format!("`{v}` is a memory size, not a CPU quantity"),
            )
            .with_help("CPU is a number of cores (`4`, `0.5`) or millicores (`500m`)"),
        )),
        (Ty::File, v @ Value::File(_)) => Ok(v),
        (Ty::RequirementsFile, Value::File(f)) => {
            check_requirements_file(ev, m, &f.path, &f.text, span)?;
            Ok(Value::File(f))
        }
        (Ty::File | Ty::RequirementsFile, v @ Value::Str(_)) => Err(ev.report(
            m,
            Diagnostic::error("E0201", span, format!("expected File, found String {v}"))
                .with_help(format!("read it with `file({v})`")),
        )),
        (Ty::Secret, v @ Value::Secret(_)) => Ok(v),
        (Ty::StrOrSecret, v @ (Value::Str(_) | Value::Secret(_))) => Ok(v),
        (Ty::Enum(def), Value::Enum(e)) => {
            let EnumVal { ty, variant } = &*e;
            if let Some(t) = ty.as_deref().filter(|t| *t != def.name) {
                return ev.err(
                    m,
                    "E0201",
                    span,
                    format!("expected {}, found {t} .{variant}", def.name),
                );
            }
            if !def.variants.iter().any(|x| **x == **variant) {
                let d = crate::wording::unknown_variant_diag(span, variant, def);
                return Err(ev.report(m, d));
            }
            if ty.is_some() {
                // Already of this type (checked above): the same value.
                return Ok(Value::Enum(e));
            }
            Ok(Value::enum_value(
                Some(def.name.as_str().into()),
                variant.clone(),
            ))
        }
        (Ty::List(et), Value::List(l)) => {
            if **et == Ty::Any {
                return Ok(Value::List(l));
            }
            let out = crate::eval::all_ok(l.iter().map(|x| coerce(ev, m, x.clone(), et, span)))?;
            Ok(Value::List(Arc::new(out)))
        }
        (Ty::Map(et), Value::Record(r)) => {
            let mut out = Record::new();
            let mut failed = false;
            for (k, x) in r.iter() {
                match coerce(ev, m, x.clone(), et, span) {
                    Ok(v) => {
                        out.insert(k.clone(), v);
                    }
                    Err(_) => failed = true,
                }
            }
            if failed {
                Err(Reported)
            } else {
                Ok(Value::Record(Arc::new(out)))
            }
        }
        (Ty::Record(rt), Value::Record(r)) => coerce_record(ev, m, *rt, &r, span),
        (Ty::Env, v @ (Value::Env(_) | Value::EnvRef(_))) => Ok(v),
        (Ty::Env, Value::Template { .. }) => ev.err(
            m,
            "E0314",
            span,
            "a template must be instantiated with its arguments here",
        ),
        (Ty::Asset, Value::Record(r)) if r.contains_key("kind") => Ok(Value::Record(r)),
        (ty, v) => Err(mismatch(ev, m, &v, ty, span)),
    }
}

fn coerce_record(ev: &Evaluator, m: ModuleId, rt: RecordTy, r: &Record, span: Span) -> R<Value> {
    if matches!(r.get(TYPE_KEY), Some(Value::Str(t)) if **t == *rt.name()) {
        return Ok(Value::Record(Arc::new(r.clone())));
    }
    let fields = rt.fields();
    let mut out = Record::new();
    let mut failed = false;
    for (k, v) in r.iter() {
        if &**k == TYPE_KEY {
            continue;
        }
        match fields.iter().find(|(n, _, _)| *n == &**k) {
            Some((_, t, _)) => match coerce(ev, m, v.clone(), t, span) {
                Ok(v) => {
                    out.insert(k.clone(), v);
                }
                Err(_) => failed = true,
            },
            None => {
                let mut d = Diagnostic::error(
                    "E0202",
                    span,
                    format!("unknown field `{k}` in {}", rt.name()),
                );
                d = match did_you_mean(k, fields.iter().map(|(n, _, _)| *n)) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d.with_help(format!(
                        "fields: {}",
                        fields
                            .iter()
                            .map(|(n, _, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                };
                ev.report(m, d);
                failed = true;
            }
        }
    }
    for (n, _, req) in fields {
        if *req && !out.contains_key(*n) && !r.contains_key(*n) {
            ev.report(
                m,
                Diagnostic::error(
                    "E0209",
                    span,
                    format!("{} needs the field `{n}`", rt.name()),
                ),
            );
            failed = true;
        }
    }
    if failed {
        Err(Reported)
    } else {
        out.insert(TYPE_KEY.into(), Value::str(rt.name()));
        Ok(Value::Record(Arc::new(out)))
    }
}

/// Checks a pip requirements file as pip reads it (see
/// [`validate::requirements`]): a file sclc cannot decode as pip does is
/// E0334; each requirement is PEP 508 (E0205, or E0317 when the parser
/// fails on it); each option is carried, accepted or refused by
/// [`validate::option_use`] (E0331; on a requirement line only `--hash`
/// and `--config-settings` apply, pip ignores the others), and a carried
/// index URL must be a valid URL (E0325); a `${NAME}` reference is E0333, a
/// line pip cannot read or words it ignores E0335. Every bad line is
/// reported.
fn check_requirements_file(
    ev: &Evaluator,
    m: ModuleId,
    path: &str,
    text: &str,
    span: Span,
) -> R<()> {
    // A hidden character (E0010): pip reads \x1c-\x1e, \x0b, \x0c, U+0085,
    // U+2028 and U+2029 as line ends and keeps the others, so a line a
    // reader sees as a comment can hold an option. A CRLF line end and a
    // byte order mark at the start are fine.
    let hidden = text
        .char_indices()
        .find(|&(i, c)| scl_diag::is_hidden_at(text, i, c));
    if let Some((i, c)) = hidden {
        let line = text.as_bytes()[..i].iter().filter(|b| **b == b'\n').count() + 1;
        return Err(ev.report(
            m,
            Diagnostic::error(
                "E0010",
                span,
                format!("{path} line {line}: invisible character {}", scl_diag::describe_char(c)),
            )
            .with_help("delete it: pip may read it as a line break (then a line that looks like a comment can hold an option) or keep it in a name"),
        ));
    }
    let lines = match validate::requirements(text) {
        Ok(l) => l,
        Err(e) => {
            return Err(ev.report(
                m,
                Diagnostic::error("E0334", span, format!("{path}: {}", e.msg)).with_help(e.help),
            ))
        }
    };
    let mut diags = Vec::new();
    let ignored_words = |line: usize, ignored: &[String], diags: &mut Vec<Diagnostic>| {
        if !ignored.is_empty() {
            diags.push(
                Diagnostic::error(
                    "E0335",
                    span,
                    format!(
                        "{path} line {line}: pip ignores {} after the options of this line",
                        validate::quoted(&ignored.join(" "))
                    ),
                )
                .with_help("put each requirement on a line of its own, before its options"),
            );
        }
    };
    for l in lines {
        match l {
            validate::ReqLine::Bad { line, code, why } => diags.push(
                Diagnostic::error(code, span, format!("{path} line {line}: {}", why.msg))
                    .with_help(why.help),
            ),
            validate::ReqLine::Requirement {
                line,
                text,
                options,
                ignored,
            } => {
                match pep508(&text) {
                    Ok(()) => {}
                    Err(msg) if msg == PANICKED => diags.push(Diagnostic::error(
                        "E0317",
                        span,
                        format!("{path} line {line}: {} could not be read as a PEP 508 requirement ({msg})", validate::quoted(&text)),
                    )
                    .with_help("fix the line in the requirements file: a package name starts and ends with a letter or digit")),
                    Err(msg) => diags.push(Diagnostic::error(
                        "E0205",
                        span,
                        format!("{path} line {line}: {} is not a valid PEP 508 requirement: {}", validate::quoted(&text), validate::clip(&msg)),
                    )
                    .with_help(single_equals_hint(&text).unwrap_or_else(|| {
                        "fix the line in the requirements file (e.g. `numpy>=1.2`)".to_string()
                    }))),
                }
                for o in options {
                    if validate::PER_REQUIREMENT.contains(&o.name) {
                        continue;
                    }
                    let d = match validate::option_use(o.name) {
                        validate::OptionUse::Refuse(why, help) => Diagnostic::error(
                            "E0331",
                            span,
                            format!("{path} line {line}: `{}` {why}", validate::clip(&o.written)),
                        )
                        .with_help(help),
                        _ => Diagnostic::error(
                            "E0331",
                            span,
                            format!(
                                "{path} line {line}: pip ignores `{}` on a requirement line",
                                validate::clip(&o.written)
                            ),
                        )
                        .with_help(format!("put `{}` on a line of its own", o.name)),
                    };
                    diags.push(d);
                }
                ignored_words(line, &ignored, &mut diags);
            }
            validate::ReqLine::Options {
                line,
                options,
                ignored,
            } => {
                for o in options {
                    if validate::PER_REQUIREMENT.contains(&o.name) {
                        // pip's handle_option_line ignores them (with a
                        // warning for `--hash`): they apply to a requirement.
                        diags.push(
                            Diagnostic::error(
                                "E0331",
                                span,
                                format!(
                                    "{path} line {line}: `{}` applies to the requirement on its line; on a line of its own pip ignores it",
                                    validate::clip(&o.written)
                                ),
                            )
                            .with_help(format!("write `{}` after the requirement it is for", o.name)),
                        );
                        continue;
                    }
                    let d = match validate::option_use(o.name) {
                        validate::OptionUse::Accept => continue,
                        validate::OptionUse::Carry => {
                            match validate::http_url(o.value.as_deref().unwrap_or_default()) {
                                Ok(_) => continue,
                                Err(e) => Diagnostic::error(
                                    "E0325",
                                    span,
                                    format!("{path} line {line}: `{}`: {}", o.name, e.msg),
                                )
                                .with_help(e.help),
                            }
                        }
                        validate::OptionUse::Refuse(why, help) => Diagnostic::error(
                            "E0331",
                            span,
                            format!("{path} line {line}: `{}` {why}", validate::clip(&o.written)),
                        )
                        .with_help(help),
                    };
                    diags.push(d);
                }
                ignored_words(line, &ignored, &mut diags);
            }
        }
    }
    if diags.is_empty() {
        return Ok(());
    }
    for d in diags {
        ev.report(m, d);
    }
    Err(Reported)
}

#[cfg(test)]
mod table_tests {
    use super::*;

    /// `Builtin::def` indexes the table by the enum's discriminant.
    #[test]
    fn the_table_lists_the_builtins_in_the_enums_order() {
        for (i, d) in TABLE.iter().enumerate() {
            assert_eq!(d.builtin as usize, i, "{}", d.name);
            assert_eq!(Builtin::from_name(d.name), Some(d.builtin));
            assert_eq!(d.builtin.name(), d.name);
        }
        assert_eq!(NAMES.len(), TABLE.len());
        assert_eq!(lookup("join"), Some("join"));
        assert_eq!(lookup("nope"), None);
    }
}

#[cfg(test)]
mod book_tests {
    use super::*;

    /// The book's table of signatures lists every builtin of the table.
    #[test]
    fn the_book_lists_every_builtin_signature() {
        let page = include_str!("../../../book/src/reference/builtins.md");
        let sigs = &page[page.find("## Signatures").expect("a Signatures section")..];
        for d in TABLE {
            assert!(sigs.contains(&format!("`{}`", d.name)), "{}", d.name);
            for p in d.params {
                assert!(sigs.contains(p.name), "{}: {}", d.name, p.name);
            }
            assert!(!d.doc.is_empty());
        }
    }
}
