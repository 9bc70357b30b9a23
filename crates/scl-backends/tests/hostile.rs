//! Hostile values through every IR field that reaches the Dockerfile or the
//! `.dockerignore`: quotes, backslashes, `$()`, backticks, newlines, CR,
//! `#`, `%`, `{{ }}`, here-document markers, a leading `-`, a trailing
//! backslash followed by spaces, non-ASCII, … — a fixed corpus, and strings
//! that proptest builds from it with a fixed seed (deterministic, so never
//! flaky; `SCL_HOSTILE_CASES=N` asks for more).
//!
//! For each value and each field: lowering either refuses the value with
//! errors that all name that field (and only for a value the field may
//! refuse: a line break in a package name, not a quote), or writes it. Each
//! value is then put in every field that accepted it, the env is lowered,
//! and the files are parsed in one batch by BuildKit's own parser
//! (`scripts/parse-dockerfiles.py`) and linted by hadolint. Each value must
//! come back exactly as written: as BuildKit's word lexer reads it (`ENV`,
//! `LABEL`, `COPY`, `ADD`, `WORKDIR`, `FROM`), as the shell splits the `RUN`
//! line (packages, user, Hugging Face arguments, the `printf` lines of a
//! setup step), as JSON (`ENTRYPOINT`/`CMD`) or as `.dockerignore` reads it;
//! the instructions must be the same as with harmless values (nothing
//! injected), with no here-document, no `RUN` flag, and no parse error from
//! either tool.
//!
//! The same values go through the Apptainer definition file
//! ([`hostile_values_in_apptainer_defs`]): each is refused on its field or
//! written, and the file is read as Apptainer reads it (`common::deffile`:
//! one stage, the same sections as with harmless values, no build argument)
//! and by spython; every line passes the backend's trap scan, and each
//! value comes back: from `%environment` as `sh` sources it, from `%labels`
//! and `%files` as Apptainer splits them, and from the `%post`,
//! `%runscript` and `%test` commands as `sh` splits their words.

mod common;

use common::tools::{self, ParsedFile};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use scl_backends::docker::lower;
use scl_ir::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The hostile corpus (also the fragments proptest combines).
const CORPUS: &[&str] = &[
    "plain",
    "",
    " ",
    "a b",
    "it's",
    "'",
    "\"",
    "a\"b",
    "a\\\"b",
    "\\\"",
    "\\",
    "a\\",
    "a\\\\",
    "trailing \\   ",
    "trailing \\\t",
    "\\ ",
    "$HOME",
    "${HOME:-x}",
    "$(id)",
    "`id`",
    "$",
    "a$",
    "new\nline",
    "cr\rx",
    "crlf\r\n",
    "nul\0x",
    "#hash",
    "a #b",
    "%s %d %%",
    "{{ x }}",
    "{% if %}",
    "<<EOF",
    "<<-EOF",
    "2<<EOF",
    "a <<'EOF'",
    "-o",
    "--network=host --security=insecure",
    "-",
    "!bang",
    "*?[a]",
    "[",
    "[z-a]",
    "\\d",
    "x^y*",
    "libzstd.",
    "g++",
    "&& rm -rf / ;",
    "| > < ;",
    "ünïcödé ✓ 模型 🚀",
    "\u{2028}\u{2029}\u{85}",
    "\u{feff}bom",
    "\u{a0}nbsp\u{a0}",
    "tab\there",
    "\u{b}\u{c}\u{1b}\u{7f}",
    "=",
    "k=v",
    "/abs/path",
    "/",
    "/etc",
    "..",
    "1000",
    "x.git",
    "ENV X=1",
    "RUN --mount=type=secret,id=x cat",
    "localhost:5000/team/img:1.0-rc",
    "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "../etc",
    "../../usr/../",
];

/// How one field receives a value, which values it may refuse, a harmless
/// value for comparison, and how its value is read back.
struct Field {
    /// Every error for this field names a path starting with this.
    path: &'static str,
    set: fn(&mut Case, &str),
    may_refuse: fn(&str) -> bool,
    benign: &'static str,
    check: fn(&Parsed, &str) -> Result<(), String>,
}

/// A spec being built, and the env name to lower it as.
struct Case {
    spec: EnvSpec,
    env_name: String,
}

fn base() -> Case {
    let mut spec = EnvSpec {
        api_version: API_VERSION.into(),
        base: Some(ImageRef {
            reference: "debian:12.5".into(),
            digest: None,
        }),
        workdir: Some("/workspace".into()),
        user: Some(User {
            name: "app".into(),
            uid: 1000,
        }),
        system: Some(System {
            manager: SystemManager::Apt,
            packages: vec![],
        }),
        ..Default::default()
    };
    spec.vars
        .insert("AFTER".into(), VarValue::Plain("after".into()));
    Case {
        spec,
        env_name: "t".into(),
    }
}

fn python(c: &mut Case) -> &mut Python {
    c.spec.python.get_or_insert(Python {
        index_credentials: None,
        version: None,
        manager: PythonManager::Pip,
        packages: vec![],
        requirements: vec![],
        index_url: None,
        extra_index_urls: vec![],
    })
}

fn conda(c: &mut Case) -> &mut Conda {
    // conda packages need an image that has conda (E0408 otherwise).
    // An image the base-image table does not know is not refused (it may
    // have conda), and gets the same Python set-up as debian:12.5, so the
    // instructions stay comparable with a hostile `base`.
    if let Some(b) = c.spec.base.as_mut() {
        if b.reference == "debian:12.5" {
            b.reference = "registry.example.com/team/conda-base:1".into();
        }
    }
    c.spec.conda.get_or_insert(Conda {
        channels: vec![],
        packages: vec![],
    })
}

/// Puts `asset` at position `n` of `assets` (filling the gap with plain
/// downloads), so each asset field keeps its own index.
fn asset_at(c: &mut Case, n: usize, asset: Asset) {
    while c.spec.assets.len() <= n {
        c.spec.assets.push(Asset::Url {
            url: "https://h/filler.bin".into(),
            sha256: None,
            to: "/filler".into(),
        });
    }
    c.spec.assets[n] = asset;
}

fn hf(c: &mut Case, n: usize, repo: &str, files: &[&str], revision: &str, to: &str) {
    asset_at(
        c,
        n,
        Asset::Huggingface {
            token: None,
            repo: repo.into(),
            files: files.iter().map(|s| s.to_string()).collect(),
            revision: revision.into(),
            to: to.into(),
        },
    );
}

/// A line feed, or a character a reader would not see (NUL, `\r`, an
/// escape, a bidirectional override, …): refused wherever a value is written
/// raw.
fn line_break(v: &str) -> bool {
    v.chars()
        .any(|c| c == '\n' || scl_backends::quote::is_hidden(c))
}

fn empty_or_line_break(v: &str) -> bool {
    v.is_empty() || line_break(v)
}

fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn system_folder(v: &str) -> bool {
    let n = normalize(v);
    let top = &n[1..];
    top.is_empty()
        || (!top.contains('/')
            && ([
                "bin", "boot", "dev", "etc", "proc", "run", "sbin", "sys", "usr", "var",
            ]
            .contains(&top)
                || top.starts_with("lib")))
}

fn bare(v: &str) -> bool {
    scl_backends::quote::is_dockerfile_bare(v)
}

/// Go's `path.Clean`, as `.dockerignore`'s reader applies it.
fn go_clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let out = parts.join("/");
    match (rooted, out.is_empty()) {
        (true, _) => format!("/{out}"),
        (false, true) => ".".into(),
        (false, false) => out,
    }
}

/// What a field's check sees: the parsed Dockerfile and `.dockerignore`.
struct Parsed<'a> {
    spec: &'a EnvSpec,
    dockerfile: &'a ParsedFile,
    ignore: Option<&'a ParsedFile>,
}

impl Parsed<'_> {
    fn all(&self, cmd: &str) -> Vec<&tools::Parsed> {
        self.dockerfile
            .instructions
            .iter()
            .filter(|i| i.cmd == cmd)
            .collect()
    }

    /// The shell words of the `RUN`s that contain all of `marks` as words.
    fn runs(&self, marks: &[&str]) -> Vec<Vec<String>> {
        self.all("RUN")
            .into_iter()
            .filter_map(|i| i.shell_words.clone())
            .filter(|w| marks.iter().all(|m| w.iter().any(|x| x == m)))
            .collect()
    }

    fn run(&self, marks: &[&str]) -> Result<Vec<String>, String> {
        let r = self.runs(marks);
        match r.len() {
            1 => Ok(r.into_iter().next().unwrap()),
            n => Err(format!("{n} RUNs with {marks:?}")),
        }
    }

    /// `(key, value)` pairs of every instruction `cmd` (ENV or LABEL), lexed.
    fn pairs(&self, cmd: &str) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for i in self.all(cmd) {
            // The virtual environment's own ENV (constant; `$PATH` is meant
            // to expand).
            if i.value.first().is_some_and(|k| k == "VIRTUAL_ENV") {
                continue;
            }
            let words = i.words.clone().ok_or("no words")?;
            for kv in words.chunks(2) {
                match kv {
                    [Some(k), Some(v)] => out.push((k.clone(), v.clone())),
                    _ => return Err(format!("{cmd} pair not read literally: {:?}", i.value)),
                }
            }
        }
        Ok(out)
    }

    fn copies(&self, cmd: &str) -> Vec<Vec<Option<String>>> {
        self.all(cmd)
            .into_iter()
            .map(|i| i.words.clone().unwrap_or_default())
            .collect()
    }
}

/// The words after `start` up to (not including) the first `end`.
fn between<'a>(words: &'a [String], start: &[&str], end: &str) -> Result<&'a [String], String> {
    let at = words
        .windows(start.len())
        .position(|w| w.iter().zip(start).all(|(a, b)| a == b))
        .ok_or_else(|| format!("no {start:?} in {words:?}"))?
        + start.len();
    let len = words[at..]
        .iter()
        .position(|w| w == end)
        .unwrap_or(words.len() - at);
    Ok(&words[at..at + len])
}

fn has_seq(words: &[String], seq: &[&str]) -> Result<(), String> {
    if words
        .windows(seq.len())
        .any(|w| w.iter().zip(seq).all(|(a, b)| a == b))
    {
        Ok(())
    } else {
        Err(format!("no {seq:?} in {words:?}"))
    }
}

fn eq<T: PartialEq + std::fmt::Debug>(got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:?}, want {want:?}"))
    }
}

fn pair(p: &Parsed, cmd: &str, k: &str, v: &str) -> Result<(), String> {
    let pairs = p.pairs(cmd)?;
    if pairs.iter().any(|(a, b)| a == k && b == v) {
        Ok(())
    } else {
        Err(format!("no {cmd} {k:?}={v:?} in {pairs:?}"))
    }
}

fn fields() -> Vec<Field> {
    vec![
        Field {
            path: "base",
            set: |c, v| c.spec.base.as_mut().unwrap().reference = v.into(),
            may_refuse: |v| !scl_backends::docker::is_image_reference(v),
            benign: "debian:12.5",
            check: |p, _| {
                eq(
                    p.all("FROM")[0].words.clone().unwrap(),
                    vec![Some(p.spec.base.as_ref().unwrap().pinned())],
                )
            },
        },
        Field {
            path: "base",
            set: |c, v| c.spec.base.as_mut().unwrap().digest = Some(v.into()),
            may_refuse: |v| !scl_backends::docker::is_image_reference(&format!("debian:12.5@{v}")),
            benign: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
            check: |p, _| {
                eq(
                    p.all("FROM")[0].words.clone().unwrap(),
                    vec![Some(p.spec.base.as_ref().unwrap().pinned())],
                )
            },
        },
        Field {
            path: "system.packages[0]",
            set: |c, v| c.spec.system.as_mut().unwrap().packages = vec![v.into()],
            // Only Debian package names (apt reads anything else as a
            // pattern, a glob or a regular expression).
            may_refuse: |v| empty_or_line_break(v) || scl_backends::docker::apt_package(v).is_err(),
            benign: "git",
            check: |p, v| {
                let w = p.run(&["apt-get", "install"])?;
                eq(
                    between(&w, &["APT::Cmd::Pattern-Only=true", "--"], "&&")?
                        .iter()
                        // What the Python set-up adds on a Debian base.
                        .filter(|p| *p != "python3" && *p != "python3-venv")
                        .cloned()
                        .collect::<Vec<_>>(),
                    vec![v.to_string()],
                )?;
                // A name apt could read as a pattern is checked by name.
                let name = scl_backends::docker::apt_package(v).unwrap();
                let name = name.split(':').next().unwrap();
                if scl_backends::docker::apt_needs_exact_check(name) {
                    let query = format!(
                        "$(dpkg-query -W -f='${{db:Status-Abbrev}}' -- {name} 2>/dev/null)"
                    );
                    has_seq(&w, &["case", &query, "in"])?;
                    if !w
                        .windows(2)
                        .any(|x| x[0].starts_with("sclc: apt-get did not install") && x[1] == name)
                    {
                        return Err(format!("no message naming {name} in {w:?}"));
                    }
                }
                Ok(())
            },
        },
        Field {
            path: "user.name",
            set: |c, v| c.spec.user.as_mut().unwrap().name = v.into(),
            may_refuse: |v| empty_or_line_break(v) || v.chars().all(|c| c.is_ascii_digit()),
            benign: "app",
            check: |p, v| {
                let w = p.run(&["useradd"])?;
                has_seq(&w, &["id", "-u", "--", v, ">", "/dev/null"])?;
                has_seq(&w, &["--uid", "1000", "--", v, ";"])
            },
        },
        Field {
            path: "assets[0].url",
            set: |c, v| {
                asset_at(
                    c,
                    0,
                    Asset::Url {
                        url: format!("https://h/{v}"),
                        sha256: None,
                        to: "/m".into(),
                    },
                )
            },
            may_refuse: |v| {
                v.chars().any(|c| {
                    c.is_whitespace() || c.is_control() || scl_backends::quote::is_hidden(c)
                }) || v.contains(".git")
                    || v.contains('%')
            },
            benign: "f.bin",
            check: |p, v| {
                let adds = p.copies("ADD");
                eq(adds[0][0].clone(), Some(format!("https://h/{v}")))
            },
        },
        Field {
            path: "assets[1].to",
            set: |c, v| {
                asset_at(
                    c,
                    1,
                    Asset::Url {
                        url: "https://h/f.bin".into(),
                        sha256: None,
                        to: v.into(),
                    },
                )
            },
            may_refuse: line_break,
            benign: "/m",
            check: |p, v| {
                let adds = p.copies("ADD");
                eq(
                    adds[1].clone(),
                    vec![
                        Some("https://h/f.bin".into()),
                        Some(format!("{}/f.bin", v.trim_end_matches('/'))),
                    ],
                )
            },
        },
        Field {
            path: "assets[2]",
            set: |c, v| hf(c, 2, v, &["f"], "main", "/m"),
            may_refuse: empty_or_line_break,
            benign: "org/m",
            check: |p, v| hf_args(p, 0, &[v, "main", "/m", "f"]),
        },
        Field {
            path: "assets[3]",
            set: |c, v| hf(c, 3, "org/m", &[v, "g"], "main", "/m"),
            may_refuse: empty_or_line_break,
            benign: "f",
            check: |p, v| hf_args(p, 1, &["org/m", "main", "/m", v, "g"]),
        },
        Field {
            path: "assets[4]",
            set: |c, v| hf(c, 4, "org/m", &[], v, "/m"),
            may_refuse: empty_or_line_break,
            benign: "main",
            check: |p, v| hf_args(p, 2, &["org/m", v, "/m"]),
        },
        Field {
            path: "assets[5]",
            set: |c, v| hf(c, 5, "org/m", &["f"], "main", v),
            may_refuse: empty_or_line_break,
            benign: "/m",
            check: |p, v| hf_args(p, 3, &["org/m", "main", v, "f"]),
        },
        Field {
            path: "python.version",
            set: |c, v| python(c).version = Some(v.into()),
            may_refuse: |_| false,
            benign: "3.10",
            check: |_, _| Ok(()), // only named in a comment
        },
        Field {
            path: "python.index_url",
            set: |c, v| {
                let py = python(c);
                py.index_url = Some(v.into());
                py.packages.push("numpy".into());
            },
            may_refuse: empty_or_line_break,
            benign: "https://pypi.org/simple",
            check: |p, v| {
                let w = p.run(&["pip", "install", "--", "numpy"])?;
                has_seq(&w, &[&format!("--index-url={v}")])
            },
        },
        Field {
            path: "python.extra_index_urls[0]",
            set: |c, v| {
                let py = python(c);
                py.extra_index_urls = vec![v.into()];
                py.packages.push("numpy".into());
            },
            may_refuse: empty_or_line_break,
            benign: "https://h/simple",
            check: |p, v| {
                let w = p.run(&["pip", "install", "--", "numpy"])?;
                has_seq(&w, &[&format!("--extra-index-url={v}")])
            },
        },
        Field {
            path: "python.requirements[0]",
            set: |c, v| {
                python(c).requirements = vec![FileRef {
                    path: v.into(),
                    sha256: "0".repeat(64),
                }]
            },
            may_refuse: |v| line_break(v) || v.contains(['*', '?', '[', '\\']),
            benign: "requirements.txt",
            check: |p, v| {
                let copy = p
                    .copies("COPY")
                    .into_iter()
                    .find(|w| {
                        w.get(1).is_some_and(|d| {
                            d.as_deref()
                                .is_some_and(|d| d.starts_with("/tmp/scl/requirements/0-"))
                        })
                    })
                    .ok_or("no requirements COPY")?;
                eq(copy[0].as_deref(), Some(v))?;
                let dest = copy[1].clone().unwrap();
                let w = p.run(&["-r"])?;
                has_seq(&w, &["-r", &dest])
            },
        },
        Field {
            path: "python.packages[0]",
            set: |c, v| python(c).packages.insert(0, v.into()),
            may_refuse: empty_or_line_break,
            benign: "rich",
            check: |p, v| {
                let runs = p.runs(&["pip", "install", "--"]);
                // Not the Hugging Face download (pip --target, then `chown --`).
                let w = runs
                    .iter()
                    .find(|w| !w.iter().any(|x| x == "--target"))
                    .ok_or("no pip RUN")?;
                eq(&between(w, &["--"], "&&")?[0], &v.to_string())
            },
        },
        Field {
            path: "conda.channels[0]",
            set: |c, v| {
                let cd = conda(c);
                cd.channels = vec![v.into()];
                cd.packages = vec!["numpy".into()];
            },
            may_refuse: empty_or_line_break,
            benign: "conda-forge",
            check: |p, v| {
                let w = p.run(&["conda", "install"])?;
                has_seq(&w, &[&format!("--channel={v}")])
            },
        },
        Field {
            path: "conda.packages[1]",
            set: |c, v| conda(c).packages = vec!["numpy".into(), v.into()],
            may_refuse: empty_or_line_break,
            benign: "scipy",
            check: |p, v| {
                let w = p.run(&["conda", "install"])?;
                eq(
                    between(&w, &["--"], "&&")?,
                    &["numpy".to_string(), v.to_string()],
                )
            },
        },
        Field {
            path: "setup[0]",
            set: |c, v| c.spec.setup = vec![v.into(), "echo next".into()],
            may_refuse: |v| v.chars().any(scl_backends::quote::is_hidden),
            benign: "echo hi",
            check: |p, v| {
                let runs = p.runs(&["printf", "%s\\n", "/tmp/scl/setup.sh"]);
                let mut scripts = Vec::new();
                for w in &runs {
                    let lines = between(w, &["printf", "%s\\n"], ">")?;
                    scripts.push(lines.iter().map(|l| format!("{l}\n")).collect::<String>());
                }
                let want = if v.ends_with('\n') {
                    v.to_string()
                } else {
                    format!("{v}\n")
                };
                eq(scripts, vec![want, "echo next\n".into()])
            },
        },
        Field {
            path: "vars.",
            set: |c, v| {
                c.spec.vars.insert(v.into(), VarValue::Plain("x".into()));
            },
            may_refuse: |v| !bare(v) || v.contains('='),
            benign: "KEY",
            check: |p, v| pair(p, "ENV", v, "x"),
        },
        Field {
            path: "vars.VALUE",
            set: |c, v| {
                c.spec
                    .vars
                    .insert("VALUE".into(), VarValue::Plain(v.into()));
            },
            may_refuse: line_break,
            benign: "value",
            check: |p, v| pair(p, "ENV", "VALUE", v),
        },
        Field {
            path: "vars.SECRET",
            set: |c, v| {
                c.spec.vars.insert(
                    "SECRET".into(),
                    VarValue::Secret(SecretRef {
                        secret: v.into(),
                        key: v.into(),
                    }),
                );
            },
            may_refuse: |_| false,
            benign: "s",
            check: |p, _| {
                let keys: Vec<String> = p.pairs("ENV")?.into_iter().map(|(k, _)| k).collect();
                if keys.iter().any(|k| k == "SECRET") {
                    return Err("a secret in ENV".into());
                }
                Ok(())
            },
        },
        Field {
            path: "volumes[",
            set: |c, v| {
                c.spec.volumes = vec![
                    Volume {
                        mode: VolumeMode::ReadOnly,
                        mount: v.into(),
                        name: "a".into(),
                        source: "s3://b/x".into(),
                    },
                    Volume {
                        mode: VolumeMode::ReadOnly,
                        mount: "/d".into(),
                        name: "b".into(),
                        source: v.into(),
                    },
                ]
            },
            may_refuse: |_| false,
            benign: "/data",
            check: |_, _| Ok(()),
        },
        Field {
            path: "writable[0]",
            set: |c, v| c.spec.writable = vec![format!("/w/{v}")],
            may_refuse: |v| line_break(v) || system_folder(&format!("/w/{v}")),
            benign: "cache",
            check: |p, v| {
                let w = normalize(&format!("/w/{v}"));
                let runs = p.runs(&["mkdir", "-p", "--", "chown"]);
                let words = runs
                    .iter()
                    .find(|r| r.first().is_some_and(|x| x == "mkdir"))
                    .ok_or("no RUN that makes the writable folders")?;
                has_seq(words, &["mkdir", "-p", "--", &w])?;
                has_seq(words, &["chown", "--", "1000", &w])
            },
        },
        Field {
            path: "assets[6].token",
            set: |c, v| {
                hf(c, 6, "org/m", &[], "main", "/m6");
                if let Asset::Huggingface { token, .. } = &mut c.spec.assets[6] {
                    *token = Some(SecretRef {
                        secret: v.into(),
                        key: "token".into(),
                    });
                }
            },
            // The id of a build secret is `[A-Za-z0-9_.-]+`: nothing else.
            may_refuse: |v| {
                v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            },
            benign: "hf",
            check: |p, v| {
                let run = p
                    .all("RUN")
                    .into_iter()
                    .find(|i| i.original.contains("huggingface_hub") && i.original.contains("/m6"))
                    .ok_or("no download RUN")?;
                eq(
                    run.flags.clone(),
                    vec![format!("--mount=type=secret,id={v}.token,required=true")],
                )?;
                let words = run.shell_words.clone().ok_or("no shell words")?;
                has_seq(
                    &words,
                    &[&format!("HF_TOKEN=$(cat /run/secrets/{v}.token)")],
                )
            },
        },
        Field {
            path: "workdir",
            set: |c, v| c.spec.workdir = Some(format!("/w/{v}")),
            may_refuse: |v| line_break(v) || system_folder(&format!("/w/{v}")),
            benign: "srv",
            check: |p, v| {
                let w = format!("/w/{v}");
                eq(
                    p.all("WORKDIR")[0].words.clone().unwrap(),
                    vec![Some(w.clone())],
                )?;
                let words = p.run(&["useradd"])?;
                has_seq(&words, &["[", "!", "-e", &w, "]"])?;
                let words = p.run(&["chown", "-hR"])?;
                has_seq(
                    &words,
                    &["mkdir", "-p", &w, "&&", "chown", "-hR", "1000", &w],
                )
            },
        },
        Field {
            path: "files[0]",
            set: |c, v| {
                c.spec.files.insert(
                    0,
                    Copy {
                        from: v.into(),
                        to: "/w/x".into(),
                    },
                )
            },
            may_refuse: |v| line_break(v) || v.contains(['*', '?', '[', '\\']),
            benign: "src",
            check: |p, v| {
                let c = p.copies("COPY");
                let c = c
                    .iter()
                    .find(|w| w.get(1) == Some(&Some("/w/x".into())))
                    .ok_or("no COPY")?;
                eq(c[0].as_deref(), Some(v))
            },
        },
        Field {
            path: "files[",
            set: |c, v| {
                c.spec.files.push(Copy {
                    from: "dst-test".into(),
                    to: v.into(),
                })
            },
            may_refuse: line_break,
            benign: "/w/y",
            check: |p, v| {
                let c = p.copies("COPY");
                let c = c
                    .iter()
                    .find(|w| w.first() == Some(&Some("dst-test".into())))
                    .ok_or("no COPY")?;
                eq(c[1].as_deref(), Some(v))
            },
        },
        Field {
            path: "labels.",
            set: |c, v| {
                c.spec.labels.insert(v.into(), "x".into());
            },
            may_refuse: |v| {
                empty_or_line_break(v)
                    || v.contains('=')
                    || (!bare(v) && v.ends_with('\\'))
                    || v == "dev.scl.ir.sha256"
            },
            benign: "key",
            check: |p, v| pair(p, "LABEL", v, "x"),
        },
        Field {
            path: "labels.value",
            set: |c, v| {
                c.spec.labels.insert("value".into(), v.into());
            },
            may_refuse: line_break,
            benign: "x",
            check: |p, v| pair(p, "LABEL", "value", v),
        },
        Field {
            path: "description",
            set: |c, v| c.spec.description = Some(v.into()),
            may_refuse: line_break,
            benign: "a description",
            check: |p, v| pair(p, "LABEL", "org.opencontainers.image.description", v),
        },
        Field {
            path: "entrypoint",
            set: |c, v| c.spec.entrypoint = vec![v.into(), v.into()],
            may_refuse: |v| v.contains('\0'),
            benign: "python",
            check: |p, v| {
                let e = p.all("ENTRYPOINT");
                eq(e[0].json, true)?;
                eq(e[0].value.clone(), vec![v.to_string(), v.to_string()])
            },
        },
        Field {
            path: "command",
            set: |c, v| c.spec.command = vec![v.into()],
            may_refuse: |v| v.contains('\0'),
            benign: "train.py",
            check: |p, v| {
                let e = p.all("CMD");
                eq(e[0].json, true)?;
                eq(e[0].value.clone(), vec![v.to_string()])
            },
        },
        Field {
            path: "ignore[1]",
            set: |c, v| c.spec.ignore = vec!["keep".into(), v.into()],
            // Also a glob BuildKit's pattern matcher rejects: only `[` or
            // `\` can make one.
            may_refuse: |v| {
                line_break(v)
                    || v.trim().is_empty()
                    || v.starts_with(char::is_whitespace)
                    || v.ends_with(char::is_whitespace)
                    || v.contains(['[', '\\'])
            },
            benign: "data/",
            check: |p, v| {
                let pats = p
                    .ignore
                    .ok_or("no .dockerignore")?
                    .patterns
                    .clone()
                    .unwrap();
                let line = if v.starts_with(['#', '!']) {
                    format!("\\{}", caret_escaped(v))
                } else {
                    caret_escaped(v)
                };
                let mut want = go_clean(&line);
                if want.len() > 1 && want.starts_with('/') {
                    want.remove(0);
                }
                eq(pats, vec!["keep".to_string(), want])
            },
        },
        Field {
            path: "",
            set: |c, v| c.env_name = v.into(),
            may_refuse: |_| false,
            benign: "t",
            check: |_, _| Ok(()),
        },
    ]
}

/// `v` with each `^` outside a `[...]` written `\^` (a glob that was
/// accepted, so its brackets are well formed).
fn caret_escaped(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '^' if !in_class => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Whether the base reference is one hadolint cannot parse although it is
/// valid: a registry `host:port` whose host has no dot, and a tag.
fn hadolint_port_bug(spec: &EnvSpec) -> bool {
    let r = spec.base.as_ref().unwrap();
    let Some((domain, rest)) = r.reference.split_once('/') else {
        return false;
    };
    domain.contains(':') && !domain.contains('.') && rest.contains(':')
}

/// The arguments after the Python code of the `n`th Hugging Face `RUN`.
fn hf_args(p: &Parsed, n: usize, want: &[&str]) -> Result<(), String> {
    let runs = p.runs(&["python3", "-c"]);
    let w = runs.get(n).ok_or("no Hugging Face RUN")?;
    let code = w.iter().position(|x| x == "-c").unwrap() + 2;
    let end = w[code..].iter().position(|x| x == "&&").unwrap() + code;
    eq(
        w[code..end].to_vec(),
        want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    )
}

/// The instruction keywords, consecutive `ENV`s and `LABEL`s merged (a
/// value ending in a backslash closes its instruction).
fn shape(f: &ParsedFile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in &f.instructions {
        if (i.cmd == "ENV" || i.cmd == "LABEL") && out.last() == Some(&i.cmd) {
            continue;
        }
        out.push(i.cmd.clone());
    }
    out
}

fn values() -> Vec<String> {
    let mut out: Vec<String> = CORPUS.iter().map(|s| s.to_string()).collect();
    let cases: usize = std::env::var("SCL_HOSTILE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48);
    let piece = proptest::prop_oneof![
        3 => proptest::sample::select(CORPUS).prop_map(str::to_string),
        1 => proptest::char::any().prop_map(|c| c.to_string()),
    ];
    let strategy = proptest::collection::vec(piece, 1..5).prop_map(|v| v.concat());
    let mut runner = TestRunner::deterministic();
    for _ in 0..cases {
        out.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    out
}

#[test]
fn hostile_values_come_back_or_are_refused() {
    let python = tools::require(
        "BuildKit's parser (python -c 'import dockerfile')",
        tools::python_with_parser(),
    );
    let hadolint = tools::require("hadolint", tools::hadolint());
    let (Some(python), Some(hadolint)) = (python, hadolint) else {
        return;
    };
    let fields = fields();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    // (value, accepted fields, Dockerfile, .dockerignore, benign Dockerfile, spec)
    #[allow(clippy::type_complexity)]
    let mut written: Vec<(
        String,
        Vec<usize>,
        PathBuf,
        Option<PathBuf>,
        PathBuf,
        EnvSpec,
    )> = Vec::new();
    let mut refused = vec![0usize; fields.len()];
    let mut accepted = vec![0usize; fields.len()];
    let values = values();
    for (n, v) in values.iter().enumerate() {
        let mut ok = Vec::new();
        for (fi, f) in fields.iter().enumerate() {
            let mut c = base();
            (f.set)(&mut c, v);
            let out = lower(&c.spec, &c.env_name);
            if out.errors.is_empty() {
                ok.push(fi);
                accepted[fi] += 1;
                continue;
            }
            refused[fi] += 1;
            if !(f.may_refuse)(v) {
                failures.push(format!("{}: {v:?} refused: {:?}", f.path, out.errors));
            }
            for e in &out.errors {
                if !e.field.starts_with(f.path) {
                    failures.push(format!(
                        "{}: {v:?}: error names {}: {}",
                        f.path, e.field, e.message
                    ));
                }
            }
        }
        // Every field that accepted the value, at once, and the same with
        // harmless values.
        let mut c = base();
        let mut harmless = base();
        for &fi in &ok {
            (fields[fi].set)(&mut c, v);
            (fields[fi].set)(&mut harmless, fields[fi].benign);
        }
        let out = lower(&c.spec, &c.env_name);
        let benign = lower(&harmless.spec, &harmless.env_name);
        if !out.errors.is_empty() || !benign.errors.is_empty() {
            failures.push(format!(
                "{v:?} in all fields: {:?} {:?}",
                out.errors, benign.errors
            ));
            continue;
        }
        let df = dir.path().join(format!("{n}.Dockerfile"));
        std::fs::write(&df, &out.artifact("Dockerfile").unwrap().contents).unwrap();
        let bf = dir.path().join(format!("{n}.benign.Dockerfile"));
        std::fs::write(&bf, &benign.artifact("Dockerfile").unwrap().contents).unwrap();
        let ig = out.artifact(".dockerignore").map(|a| {
            let p = dir.path().join(format!("{n}.dockerignore"));
            std::fs::write(&p, &a.contents).unwrap();
            p
        });
        written.push((v.clone(), ok, df, ig, bf, c.spec.clone()));
    }

    // One batch through BuildKit's parser, one through hadolint.
    let mut files = Vec::new();
    for (_, _, df, ig, bf, _) in &written {
        files.push(df.clone());
        files.push(bf.clone());
        files.extend(ig.clone());
    }
    let parsed: BTreeMap<String, ParsedFile> = tools::parse_files(&python, &files)
        .into_iter()
        .map(|p| (p.file.clone(), p))
        .collect();
    let dockerfiles: Vec<PathBuf> = written.iter().map(|w| w.2.clone()).collect();
    // The line of `FROM` in a generated Dockerfile (after the header, which
    // has a `# syntax=` line or not).
    let from_line = |file: &str| {
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .position(|l| l.starts_with("FROM "))
            .unwrap()
            + 1
    };
    for f in tools::lint_files(&hadolint, &dockerfiles) {
        // DL3025 ("use arguments JSON notation"): hadolint did not read an
        // exec form as JSON, so it linted it as something else.
        let parse_error = f.code == "DL1000"
            || f.code == "DL3025"
            || (f.code.starts_with("SC1") && f.level == "error");
        let w = written
            .iter()
            .find(|w| w.2 == std::path::Path::new(&f.file));
        if parse_error && f.line == from_line(&f.file) && w.is_some_and(|w| hadolint_port_bug(&w.5))
        {
            // A known limitation of hadolint's parser (language-docker):
            // `FROM localhost:5000/img:1` — a registry port on a host
            // without a dot, plus a tag — is a valid reference that
            // BuildKit reads; hadolint reads `localhost` as the name.
            continue;
        }
        if parse_error {
            let n: usize = std::path::Path::new(&f.file)
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse().ok())
                .unwrap_or(usize::MAX);
            let v = written
                .iter()
                .find(|w| w.2 == std::path::Path::new(&f.file))
                .map(|w| w.0.clone());
            failures.push(format!(
                "hadolint cannot parse the file of {v:?} (#{n}): {f:?}"
            ));
        }
    }
    for (v, ok, df, ig, bf, spec) in &written {
        let key = |p: &PathBuf| p.display().to_string();
        let dockerfile = &parsed[&key(df)];
        let benign = &parsed[&key(bf)];
        if let Some(e) = &dockerfile.error {
            failures.push(format!("{v:?}: BuildKit cannot parse it: {e}"));
            continue;
        }
        if shape(dockerfile) != shape(benign) {
            failures.push(format!(
                "{v:?}: instructions {:?}, with harmless values {:?}",
                shape(dockerfile),
                shape(benign)
            ));
        }
        for i in &dockerfile.instructions {
            if !i.heredocs.is_empty() {
                failures.push(format!("{v:?}: a here-document in {}", i.original));
            }
            // The only RUN flag sclc writes: a build secret's mount, whose id
            // is `[A-Za-z0-9_.-]+` (refused otherwise).
            let secret_mount = |f: &String| {
                f.strip_prefix("--mount=type=secret,id=")
                    .and_then(|r| r.strip_suffix(",required=true"))
                    .is_some_and(|id| {
                        !id.is_empty()
                            && id
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                    })
            };
            if i.cmd == "RUN" && !i.flags.iter().all(secret_mount) {
                failures.push(format!("{v:?}: RUN flags {:?}", i.flags));
            }
        }
        // The var after every other value is still set.
        let p = Parsed {
            spec,
            dockerfile,
            ignore: ig.as_ref().map(|i| &parsed[&key(i)]),
        };
        if let Err(e) = pair(&p, "ENV", "AFTER", "after") {
            failures.push(format!("{v:?}: {e}"));
        }
        for &fi in ok {
            if let Err(e) = (fields[fi].check)(&p, v) {
                failures.push(format!("{}: {v:?}: {e}", fields[fi].path));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Not vacuous: every field wrote a good part of the values; an image
    // reference, an ENV name, an apt package and a build-secret id take only
    // their own characters.
    for (fi, f) in fields.iter().enumerate() {
        let narrow = f.path == "base"
            || f.path == "vars."
            || f.path == "system.packages[0]"
            || f.path == "assets[6].token";
        assert!(
            accepted[fi] * 3 >= values.len() || (narrow && accepted[fi] >= 1),
            "{}: {} written, {} refused",
            f.path,
            accepted[fi],
            refused[fi]
        );
    }
    assert!(written.len() >= CORPUS.len(), "{}", written.len());
}

// ----- Apptainer -----------------------------------------------------------------------------

use common::deffile::{self, Def};

/// How one field reaches an Apptainer definition file: as [`Field`], with
/// the value read back from the file as Apptainer reads it
/// ([`deffile::parse`]) and as `sh` runs it.
struct DefField {
    path: &'static str,
    set: fn(&mut Case, &str),
    may_refuse: fn(&str) -> bool,
    benign: &'static str,
    check: fn(&Def, &str) -> Result<(), String>,
}

/// The arguments of every logical command of `%post` whose first line
/// starts (after its indent) with `head`, as `sh` splits them (`head`
/// removed; a command's continuation lines end in ` \`).
fn post_all(def: &Def, head: &str) -> Result<Vec<Vec<String>>, String> {
    let post = def.section("post").unwrap_or_default();
    let lines: Vec<&str> = post.lines().collect();
    let mut out = Vec::new();
    for (start, l) in lines.iter().enumerate() {
        if !l.trim_start().starts_with(head) {
            continue;
        }
        let mut text = l.trim_start()[head.len()..].to_string();
        let mut i = start;
        while lines[i].ends_with(" \\") {
            i += 1;
            // A redirection (the setup step's `> script`) is not a word.
            if lines[i].trim_start().starts_with("> ") {
                text = text.trim_end_matches(" \\").to_string();
                break;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(lines[i]);
        }
        out.push(deffile::sh_words(&text)?);
    }
    Ok(out)
}

/// The arguments of the first command of [`post_all`] for which `pick`
/// holds.
fn post_args(
    def: &Def,
    head: &str,
    pick: impl Fn(&[String]) -> bool,
) -> Result<Vec<String>, String> {
    post_all(def, head)?
        .into_iter()
        .find(|w| pick(w))
        .ok_or_else(|| format!("no %post command {head:?} as wanted"))
}

/// Whether some command of [`post_all`] has exactly the arguments `want`.
fn post_has(def: &Def, head: &str, want: &[String]) -> Result<(), String> {
    let all = post_all(def, head)?;
    if all.iter().any(|w| w == want) {
        Ok(())
    } else {
        Err(format!("no %post {head:?} {want:?} in {all:?}"))
    }
}

const PIP_INSTALL: &str = "python3 -m pip install --no-cache-dir";

/// Not the Hugging Face tools' install (`--target`).
fn not_hf(w: &[String]) -> bool {
    !w.iter().any(|x| x == "--target")
}

/// The arguments on the one physical line of `%post` that starts with
/// `head` (inside an `if`: the line ends with `; \`).
fn post_line(def: &Def, head: &str) -> Result<Vec<String>, String> {
    let post = def.section("post").unwrap_or_default();
    let line = post
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(head))
        .ok_or_else(|| format!("no %post line {head:?}"))?;
    deffile::sh_words(line.trim_end_matches(" \\").trim_end_matches(';'))
}

fn def_fields() -> Vec<DefField> {
    vec![
        DefField {
            path: "base",
            set: |c, v| c.spec.base.as_mut().unwrap().reference = v.into(),
            may_refuse: |v| !scl_backends::docker::is_image_reference(v),
            benign: "debian:12.5",
            check: |d, v| eq(d.header.get("from").cloned(), Some(v.to_string())),
        },
        DefField {
            path: "system.packages[0]",
            set: |c, v| c.spec.system.as_mut().unwrap().packages = vec![v.into()],
            may_refuse: |v| empty_or_line_break(v) || scl_backends::docker::apt_package(v).is_err(),
            benign: "git",
            check: |d, v| {
                let w = post_args(d, "DEBIAN_FRONTEND=noninteractive apt-get install", |_| {
                    true
                })?;
                let pkgs: Vec<String> = w
                    .into_iter()
                    .skip_while(|x| x != "--")
                    .skip(1)
                    .filter(|p| p != "python3" && p != "python3-venv")
                    .collect();
                eq(pkgs, vec![v.to_string()])
            },
        },
        DefField {
            path: "user.name",
            set: |c, v| c.spec.user.as_mut().unwrap().name = v.into(),
            may_refuse: |v| empty_or_line_break(v) || v.chars().all(|c| c.is_ascii_digit()),
            benign: "app",
            check: |d, v| {
                let w = post_line(
                    d,
                    "useradd --create-home --no-log-init --non-unique --uid 1000 -- ",
                )?;
                eq(w, vec![v.to_string()])
            },
        },
        DefField {
            path: "assets[0].url",
            set: |c, v| {
                asset_at(
                    c,
                    0,
                    Asset::Url {
                        url: format!("https://h/{v}"),
                        sha256: None,
                        to: "/m".into(),
                    },
                )
            },
            may_refuse: |v| {
                v.chars().any(|c| {
                    c.is_whitespace() || c.is_control() || scl_backends::quote::is_hidden(c)
                })
            },
            benign: "f.bin",
            check: |d, v| {
                let w = post_line(d, "curl -fsSL -o ")?;
                eq(w.get(1).cloned(), Some(format!("https://h/{v}")))
            },
        },
        DefField {
            path: "assets[1].to",
            set: |c, v| {
                asset_at(
                    c,
                    1,
                    Asset::Url {
                        url: "https://h/g.bin".into(),
                        sha256: Some("A".repeat(64)),
                        to: v.into(),
                    },
                )
            },
            may_refuse: line_break,
            benign: "/m",
            check: |d, v| {
                let post = d.section("post").unwrap_or_default();
                let want = format!("{}/g.bin", v.trim_end_matches('/'));
                for line in post
                    .lines()
                    .filter_map(|l| l.trim_start().strip_prefix("curl -fsSL -o "))
                {
                    let w = deffile::sh_words(line.trim_end_matches(" \\").trim_end_matches(';'))?;
                    if w[0] == want {
                        return Ok(());
                    }
                }
                Err(format!("no curl to {want:?}"))
            },
        },
        DefField {
            path: "assets[2]",
            set: |c, v| hf(c, 2, v, &["f"], "main", "/m"),
            may_refuse: empty_or_line_break,
            benign: "org/m",
            check: |d, v| hf_def_args(d, 0, &[v, "main", "/m", "f"]),
        },
        DefField {
            path: "assets[3]",
            set: |c, v| hf(c, 3, "org/m", &[v, "g"], "main", "/m"),
            may_refuse: empty_or_line_break,
            benign: "f",
            check: |d, v| hf_def_args(d, 1, &["org/m", "main", "/m", v, "g"]),
        },
        DefField {
            path: "assets[4]",
            set: |c, v| hf(c, 4, "org/m", &[], v, v),
            may_refuse: empty_or_line_break,
            benign: "main",
            check: |d, v| hf_def_args(d, 2, &["org/m", v, v]),
        },
        DefField {
            path: "python.index_url",
            set: |c, v| {
                let py = python(c);
                py.index_url = Some(v.into());
                py.packages.push("numpy".into());
            },
            may_refuse: empty_or_line_break,
            benign: "https://pypi.org/simple",
            check: |d, v| {
                let w = post_args(d, PIP_INSTALL, not_hf)?;
                has_seq(&w, &[&format!("--index-url={v}")])
            },
        },
        DefField {
            path: "python.requirements[0]",
            set: |c, v| {
                python(c).requirements = vec![FileRef {
                    path: v.into(),
                    sha256: "0".repeat(64),
                }]
            },
            may_refuse: |v| {
                line_break(v)
                    || v.is_empty()
                    || v.contains(['*', '?', '[', '{', '}', '$', '`', '\\', '"', '\'', '\t'])
                    || v.chars().any(|c| c.is_whitespace() && c != ' ')
                    || v.to_ascii_lowercase().contains("bootstrap:")
            },
            benign: "requirements.txt",
            check: |d, v| {
                let files = d.files();
                let src = if v.starts_with(['-', '~', '#', '%']) {
                    format!("./{v}")
                } else {
                    v.to_string()
                };
                eq(files[0].0.clone(), src)?;
                let w = post_args(d, PIP_INSTALL, not_hf)?;
                has_seq(&w, &["-r", &files[0].1])
            },
        },
        DefField {
            path: "python.packages[0]",
            set: |c, v| python(c).packages.insert(0, v.into()),
            may_refuse: empty_or_line_break,
            benign: "rich",
            check: |d, v| {
                let w = post_args(d, PIP_INSTALL, |w| not_hf(w) && w.iter().any(|x| x == "--"))?;
                let after: Vec<&String> = w.iter().skip_while(|x| *x != "--").skip(1).collect();
                eq(after.first().map(|s| s.as_str()), Some(v))
            },
        },
        DefField {
            path: "conda.packages[1]",
            set: |c, v| conda(c).packages = vec!["numpy".into(), v.into()],
            may_refuse: empty_or_line_break,
            benign: "scipy",
            check: |d, v| {
                let w = post_args(d, "conda install -y", |_| true)?;
                eq(w, vec!["--".to_string(), "numpy".into(), v.to_string()])
            },
        },
        DefField {
            path: "setup[0]",
            set: |c, v| c.spec.setup = vec![v.into(), "echo next".into()],
            may_refuse: |v| v.chars().any(scl_backends::quote::is_hidden),
            benign: "echo hi",
            check: |d, v| {
                let mut scripts = Vec::new();
                for w in post_all(d, "printf '%s\\n' \\")? {
                    // The words up to the redirection.
                    let lines: Vec<String> = w.into_iter().take_while(|x| x != ">").collect();
                    scripts.push(lines.iter().map(|l| format!("{l}\n")).collect::<String>());
                }
                let want = if v.ends_with('\n') {
                    v.to_string()
                } else {
                    format!("{v}\n")
                };
                eq(scripts, vec![want, "echo next\n".into()])
            },
        },
        DefField {
            path: "vars.",
            set: |c, v| {
                c.spec.vars.insert(v.into(), VarValue::Plain("x".into()));
            },
            may_refuse: |v| {
                !(v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            },
            benign: "KEY",
            check: |d, v| {
                let got = deffile::sourced(&d.section("environment").unwrap_or_default(), &[v])?;
                eq(got, vec![Some("x".to_string())])
            },
        },
        DefField {
            path: "vars.VALUE",
            set: |c, v| {
                c.spec
                    .vars
                    .insert("VALUE".into(), VarValue::Plain(v.into()));
            },
            may_refuse: |v| v.chars().any(scl_backends::quote::is_hidden),
            benign: "value",
            check: |d, v| {
                let got =
                    deffile::sourced(&d.section("environment").unwrap_or_default(), &["VALUE"])?;
                eq(got, vec![Some(v.to_string())])
            },
        },
        DefField {
            path: "vars.SECRET",
            set: |c, v| {
                c.spec.vars.insert(
                    "SECRET".into(),
                    VarValue::Secret(SecretRef {
                        secret: v.into(),
                        key: v.into(),
                    }),
                );
            },
            may_refuse: |_| false,
            benign: "s",
            check: |d, _| {
                let got =
                    deffile::sourced(&d.section("environment").unwrap_or_default(), &["SECRET"])?;
                eq(got, vec![None])
            },
        },
        DefField {
            path: "writable[0]",
            set: |c, v| c.spec.writable = vec![format!("/w/{v}")],
            may_refuse: |v| line_break(v) || system_folder(&format!("/w/{v}")),
            benign: "cache",
            check: |d, v| {
                let w = normalize(&format!("/w/{v}"));
                post_has(d, "mkdir -p --", std::slice::from_ref(&w))?;
                post_has(d, "chown -- 1000", &[w])
            },
        },
        DefField {
            path: "assets[6].token",
            set: |c, v| {
                hf(c, 6, "org/m", &[], "main", "/m6");
                if let Asset::Huggingface { token, .. } = &mut c.spec.assets[6] {
                    *token = Some(SecretRef {
                        secret: v.into(),
                        key: "token".into(),
                    });
                }
            },
            may_refuse: |v| {
                v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            },
            benign: "hf",
            check: |d, v| {
                let post = d.section("post").unwrap_or_default();
                let want = format!("HF_TOKEN=\"$(cat /mnt/{v}.token)\" PYTHONPATH=");
                if post.contains(&want) {
                    Ok(())
                } else {
                    Err(format!("no {want:?}"))
                }
            },
        },
        DefField {
            path: "workdir",
            set: |c, v| c.spec.workdir = Some(format!("/w/{v}")),
            may_refuse: |v| line_break(v) || system_folder(&format!("/w/{v}")),
            benign: "srv",
            check: |d, v| post_has(d, "mkdir -p --", &[format!("/w/{v}")]),
        },
        DefField {
            path: "files[0]",
            set: |c, v| {
                c.spec.files.insert(
                    0,
                    Copy {
                        from: v.into(),
                        to: "/w/x".into(),
                    },
                )
            },
            may_refuse: |v| {
                line_break(v)
                    || v.is_empty()
                    || v.contains(['*', '?', '[', '{', '}', '$', '`', '\\', '"', '\'', '\t'])
                    || v.chars().any(|c| c.is_whitespace() && c != ' ')
                    || v.to_ascii_lowercase().contains("bootstrap:")
            },
            benign: "src",
            check: |d, v| {
                let f = d.files();
                let f = f
                    .iter()
                    .find(|(_, t)| t == "/w/x")
                    .ok_or("no %files line")?;
                let src = if v.starts_with(['-', '~', '#', '%']) {
                    format!("./{v}")
                } else {
                    v.to_string()
                };
                eq(f.0.clone(), src)
            },
        },
        DefField {
            path: "files[",
            set: |c, v| {
                c.spec.files.push(Copy {
                    from: "dst-test".into(),
                    to: format!("/d/{v}"),
                })
            },
            may_refuse: |v| {
                line_break(v)
                    || v.contains(['"', '\'', '\t'])
                    || v.chars().any(|c| c.is_whitespace() && c != ' ')
                    || v.contains("{{")
                    || v.to_ascii_lowercase().contains("bootstrap:")
            },
            benign: "y",
            check: |d, v| {
                let f = d.files();
                let f = f
                    .iter()
                    .find(|(s, _)| s == "dst-test")
                    .ok_or("no %files line")?;
                eq(f.1.clone(), format!("/d/{v}"))
            },
        },
        DefField {
            path: "labels.",
            set: |c, v| {
                c.spec.labels.insert(v.into(), "x".into());
            },
            may_refuse: |v| {
                v.is_empty()
                    || v.starts_with(['#', '%'])
                    || v.chars()
                        .any(|c| c.is_whitespace() || scl_backends::quote::is_hidden(c))
                    || v.contains("{{")
                    || v.to_ascii_lowercase().contains("bootstrap:")
                    || v == "dev.scl.ir.sha256"
            },
            benign: "key",
            check: |d, v| eq(d.labels().get(v).cloned(), Some("x".to_string())),
        },
        DefField {
            path: "labels.value",
            set: |c, v| {
                c.spec.labels.insert("value".into(), v.into());
            },
            may_refuse: |v| {
                line_break(v)
                    || v.trim() != v
                    || v.contains("{{")
                    || v.to_ascii_lowercase().contains("bootstrap:")
            },
            benign: "x",
            check: |d, v| eq(d.labels().get("value").cloned(), Some(v.to_string())),
        },
        DefField {
            path: "entrypoint",
            set: |c, v| c.spec.entrypoint = vec![v.into(), v.into()],
            may_refuse: |v| v.chars().any(scl_backends::quote::is_hidden),
            benign: "python",
            check: |d, v| {
                let run = d.section("runscript").unwrap_or_default();
                let at = run.rfind("    exec ").ok_or("no exec")?;
                let exec = run[at + 9..]
                    .trim_end()
                    .strip_suffix("\"$@\"")
                    .ok_or("no \"$@\"")?;
                eq(deffile::sh_words(exec)?, vec![v.to_string(), v.to_string()])
            },
        },
        DefField {
            path: "test[0]",
            set: |c, v| c.spec.test = vec![v.into()],
            may_refuse: |v| v.chars().any(scl_backends::quote::is_hidden),
            benign: "true",
            check: |d, v| {
                let t = d.section("test").unwrap_or_default();
                let at = t.find("    sh -c -- ").ok_or("no test")?;
                let w = t[at + 13..]
                    .trim_end()
                    .strip_suffix(" || exit 1")
                    .ok_or("no exit")?;
                eq(deffile::sh_words(w)?, vec![v.to_string()])
            },
        },
        DefField {
            path: "description",
            set: |c, v| c.spec.description = Some(v.into()),
            may_refuse: |v| {
                line_break(v)
                    || v.trim() != v
                    || v.contains("{{")
                    || v.to_ascii_lowercase().contains("bootstrap:")
            },
            benign: "a description",
            check: |d, v| {
                eq(
                    d.labels()
                        .get("org.opencontainers.image.description")
                        .cloned(),
                    Some(v.to_string()),
                )
            },
        },
    ]
}

/// The arguments after the Python code of the `n`th Hugging Face download.
fn hf_def_args(d: &Def, n: usize, want: &[&str]) -> Result<(), String> {
    let all = post_all(d, "PYTHONPATH=/.sclc-build/hf python3 -c ")?;
    let w = all.get(n).ok_or("no Hugging Face download")?;
    eq(
        w[1..].to_vec(),
        want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    )
}

#[test]
fn hostile_values_in_apptainer_defs() {
    let spython = tools::require("spython", deffile::python_with_spython());
    let fields = def_fields();
    let mut failures = Vec::new();
    let mut accepted = vec![0usize; fields.len()];
    let mut written: Vec<(String, String)> = Vec::new();
    let mut values = values();
    values.extend(
        [
            "%post",
            "  %environment",
            "x\n%post\ny",
            "Bootstrap: docker",
            "a\nbootstrap: localimage",
            "{{x}}",
            "{{\n x \n}}",
            "{ {",
            "a}}b{{",
        ]
        .map(String::from),
    );
    let lower = |c: &Case| {
        scl_backends::apptainer::lower(&c.spec, &scl_backends::LowerCx::new(&c.env_name))
    };
    for v in &values {
        let mut ok = Vec::new();
        for (fi, f) in fields.iter().enumerate() {
            let mut c = base();
            (f.set)(&mut c, v);
            let out = lower(&c);
            if out.errors.is_empty() {
                ok.push(fi);
                accepted[fi] += 1;
                continue;
            }
            if !(f.may_refuse)(v) {
                failures.push(format!("{}: {v:?} refused: {:?}", f.path, out.errors));
            }
            for e in &out.errors {
                if !e.field.starts_with(f.path) {
                    failures.push(format!(
                        "{}: {v:?}: error names {}: {}",
                        f.path, e.field, e.message
                    ));
                }
            }
        }
        let mut c = base();
        let mut harmless = base();
        for &fi in &ok {
            (fields[fi].set)(&mut c, v);
            (fields[fi].set)(&mut harmless, fields[fi].benign);
        }
        let out = lower(&c);
        let benign = lower(&harmless);
        if !out.errors.is_empty() || !benign.errors.is_empty() {
            failures.push(format!(
                "{v:?} in all fields: {:?} {:?}",
                out.errors, benign.errors
            ));
            continue;
        }
        let text = &out.artifacts[0].contents;
        let def = match deffile::parse(text) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{v:?}: Apptainer would fail: {e}"));
                continue;
            }
        };
        let names = |d: &Def| {
            d.sections
                .iter()
                .map(|(n, _)| n.clone())
                .collect::<Vec<_>>()
        };
        let benign_def = deffile::parse(&benign.artifacts[0].contents).unwrap();
        if names(&def) != names(&benign_def) {
            failures.push(format!(
                "{v:?}: sections {:?}, with harmless values {:?}",
                names(&def),
                names(&benign_def)
            ));
        }
        for (i, line) in text.lines().enumerate().skip(1) {
            let is_header = line.starts_with('%') && !line.contains(' ');
            if let (false, Some(t)) = (is_header, scl_backends::apptainer::trap(line)) {
                failures.push(format!("{v:?}: line {} hits {t:?}", i + 1));
            }
        }
        for name in ["post", "environment", "runscript", "test"] {
            if let Err(e) = deffile::sh_syntax(&def.section(name).unwrap_or_default()) {
                failures.push(format!("{v:?}: %{name}: sh -n: {e}"));
            }
        }
        match deffile::sourced(&def.section("environment").unwrap_or_default(), &["AFTER"]) {
            Ok(a) if a == [Some("after".to_string())] => {}
            other => failures.push(format!("{v:?}: AFTER {other:?}")),
        }
        for &fi in &ok {
            if let Err(e) = (fields[fi].check)(&def, v) {
                failures.push(format!("{}: {v:?}: {e}", fields[fi].path));
            }
        }
        written.push((v.clone(), text.clone()));
    }
    if let Some(python) = spython {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = written
            .iter()
            .enumerate()
            .map(|(i, (_, t))| {
                let p = dir.path().join(format!("{i}.def"));
                std::fs::write(&p, t).unwrap();
                p
            })
            .collect();
        for (r, (v, _)) in deffile::spython(&python, &paths).iter().zip(&written) {
            if let Some(e) = &r.error {
                failures.push(format!("{v:?}: spython: {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (fi, f) in fields.iter().enumerate() {
        let narrow = matches!(
            f.path,
            "base" | "vars." | "system.packages[0]" | "assets[6].token"
        );
        assert!(
            accepted[fi] * 3 >= values.len() || (narrow && accepted[fi] >= 1),
            "{}: {} written",
            f.path,
            accepted[fi]
        );
    }
    assert!(written.len() >= CORPUS.len(), "{}", written.len());
}
