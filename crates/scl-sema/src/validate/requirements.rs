//! pip's reading of a requirements file, step by step as pip 26.3 does it
//! (pip/_internal/req/req_file.py, and the option definitions of
//! pip/_internal/cli/cmdoptions.py), so that what sclc checks is what
//! `pip install -r` applies at build time:
//!
//! 1. decode (`_decode_req_file`): a byte-order mark, else a PEP 263 coding
//!    cookie (`coding[:=]\s*([-\w.]+)`) on one of the first two lines that
//!    start with `#`, else UTF-8. sclc reads UTF-8 only: any other encoding
//!    (UTF-16/32 by their marks, `utf-7`, `latin-1`, … by a cookie) and bytes
//!    that are not UTF-8 are refused, since the same bytes would read
//!    differently in pip;
//! 2. split with Python's `str.splitlines` (also `\r`, `\v`, `\f`,
//!    `\x1c`–`\x1e`, `\x85`, U+2028, U+2029);
//! 3. `join_lines`: a line ending in `\` (tested before any trimming) joins
//!    the next one with every `\` at either end removed (`str.strip("\\")`),
//!    except a comment line (`COMMENT_RE` matching at its start), which never
//!    continues;
//! 4. `ignore_comments`: `(^|\s+)#.*$` removed, then `str.strip()`, blank
//!    lines dropped;
//! 5. `expand_env_variables`: pip replaces `${NAME}` (`[A-Z0-9_]+`) from the
//!    environment of the pip process. sclc refuses such a reference, so that
//!    the result depends neither on sclc's environment nor on the build's;
//! 6. `break_args_options`: the words (split on `" "` only) before the first
//!    one starting with `-` are the requirement, the rest options;
//! 7. `shlex.split` (POSIX mode) of the options, then optparse over the
//!    words: every option of the line is read, long options may be
//!    abbreviated to a unique prefix (`--extra` is `--extra-index-url`), a
//!    short option takes the rest of its word as its value (`-i=x` is the
//!    value `=x`), a valued option takes the next word whatever it is, and
//!    words that are not options are ignored by pip.

use super::Invalid;

/// One option of a requirements-file line, under its canonical long name
/// (`-i` and `--pypi-url` are `--index-url`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReqOpt {
    pub name: &'static str,
    pub value: Option<String>,
    /// The option as written (after shlex), for messages.
    pub written: String,
}

/// One logical line of a pip requirements file, numbered like pip (the
/// first physical line of a joined line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReqLine {
    /// A requirement, with the options written after it on its line and
    /// the words there that pip ignores.
    Requirement {
        line: usize,
        text: String,
        options: Vec<ReqOpt>,
        ignored: Vec<String>,
    },
    /// A line of options only; `ignored` holds the words pip reads but
    /// ignores (not options, so not requirements either).
    Options {
        line: usize,
        options: Vec<ReqOpt>,
        ignored: Vec<String>,
    },
    /// A line pip would refuse or read in a way sclc does not follow:
    /// the diagnostic code and why.
    Bad {
        line: usize,
        code: &'static str,
        why: Invalid,
    },
}

/// pip's requirements-file options (pip/_internal/req/req_file.py
/// `SUPPORTED_OPTIONS` + `SUPPORTED_OPTIONS_REQ`, defined in
/// pip/_internal/cli/cmdoptions.py): long names (the first is canonical),
/// the short name, and whether it takes a value.
const PIP_OPTIONS: &[(&[&str], Option<char>, bool)] = &[
    (&["--index-url", "--pypi-url"], Some('i'), true),
    (&["--extra-index-url"], None, true),
    (&["--no-index"], None, false),
    (&["--constraint"], Some('c'), true),
    (&["--requirement"], Some('r'), true),
    (&["--editable"], Some('e'), true),
    (&["--find-links"], Some('f'), true),
    (&["--no-binary"], None, true),
    (&["--only-binary"], None, true),
    (&["--prefer-binary"], None, false),
    (&["--require-hashes"], None, false),
    (&["--no-require-hashes"], None, false),
    (&["--pre"], None, false),
    (&["--all-releases"], None, true),
    (&["--only-final"], None, true),
    (&["--trusted-host"], None, true),
    (&["--use-feature"], None, true),
    (&["--hash"], None, true),
    (&["--config-settings"], Some('C'), true),
];

/// The options that apply to the requirement on their line
/// (`SUPPORTED_OPTIONS_REQ`); pip ignores every other option there.
pub(crate) const PER_REQUIREMENT: &[&str] = &["--hash", "--config-settings"];

/// Python's `str.isspace` (what `\s` and `str.strip()` use): Rust's
/// White_Space plus U+001C–U+001F.
pub(crate) fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.splitlines()` line boundaries.
fn py_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()` (`\r\n` is one boundary; no empty last line
/// after a final boundary).
pub(crate) fn splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if py_line_break(c) {
            out.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some((_, '\n')) = it.peek() {
                    it.next();
                    end += 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// `COMMENT_RE.match(line)`: the line starts with `#`, or with whitespace
/// and then `#`.
fn starts_as_comment(line: &str) -> bool {
    line.trim_start_matches(py_space).starts_with('#')
}

/// `COMMENT_RE.sub("", line)`: cut at the first `#` that starts the line
/// or follows whitespace.
fn cut_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return &line[..i];
        }
        prev_space = py_space(c);
    }
    line
}

/// The coding names Python resolves to UTF-8 (the `utf_8`, `utf_8_sig`
/// codecs and their aliases in `encodings.aliases`) and to ASCII.
const UTF8_NAMES: &[&str] = &[
    "utf_8",
    "utf_8_sig",
    "u8",
    "utf",
    "utf8",
    "utf8_ucs2",
    "utf8_ucs4",
    "cp65001",
];
const ASCII_NAMES: &[&str] = &[
    "ascii",
    "646",
    "ansi_x3.4_1968",
    "ansi_x3.4_1986",
    "ansi_x3_4_1968",
    "cp367",
    "csascii",
    "ibm367",
    "iso646_us",
    "iso_646.irv_1991",
    "iso_ir_6",
    "us",
    "us_ascii",
];

/// Python's `encodings.normalize_encoding` of a lower-cased name.
fn normalize_encoding(name: &str) -> String {
    let mut out = String::new();
    let mut punct = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            if punct && !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            punct = false;
        } else {
            punct = true;
        }
    }
    out
}

/// The PEP 263 cookie pip honours: `coding[:=]\s*([-\w.]+)` (a bytes
/// pattern: ASCII `\s` and `\w`) on one of the first two `\n`-separated
/// lines, if that line starts with `#`.
fn coding_cookie(text: &str) -> Option<(usize, &str)> {
    for (n, line) in text.split('\n').take(2).enumerate() {
        if !line.starts_with('#') {
            continue;
        }
        let mut from = 0;
        while let Some(i) = line[from..].find("coding") {
            let at = from + i + "coding".len();
            from = from + i + 1;
            let rest = &line[at..];
            let Some(rest) = rest.strip_prefix([':', '=']) else {
                continue;
            };
            let rest = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(rest.len());
            if len > 0 {
                return Some((n + 1, &rest[..len]));
            }
        }
    }
    None
}

/// Step 1: the text as pip decodes it, or why sclc refuses the file. `text`
/// is the file read as UTF-8 with invalid bytes replaced by U+FFFD.
pub(crate) fn decode(text: &str) -> Result<&str, Invalid> {
    let help =
        "save the file as UTF-8 (without a `coding:` comment, or with `# -*- coding: utf-8 -*-`)";
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        // pip decodes the rest as UTF-8 and reads no cookie.
        return if rest.contains('\u{fffd}') {
            super::bad("the file is not valid UTF-8", help)
        } else {
            Ok(rest)
        };
    }
    if text.starts_with("\u{fffd}\u{fffd}") || text.starts_with("\0\0\u{fffd}\u{fffd}") {
        return super::bad(
            "the file starts with a UTF-16 or UTF-32 byte-order mark; pip would decode it, sclc reads UTF-8 only",
            help,
        );
    }
    if let Some((line, name)) = coding_cookie(text) {
        let n = normalize_encoding(name);
        let alias = n.replace('.', "_");
        let utf8 = UTF8_NAMES.contains(&n.as_str()) || UTF8_NAMES.contains(&alias.as_str());
        let ascii = ASCII_NAMES.contains(&n.as_str()) || ASCII_NAMES.contains(&alias.as_str());
        if !(utf8 || ascii && text.is_ascii()) {
            return super::bad(
                format!("line {line} declares the encoding `{}`, which pip would decode the file with (PEP 263); sclc reads UTF-8 only", super::clip(name)),
                help,
            );
        }
    }
    if text.contains('\u{fffd}') {
        return super::bad(
            "the file is not valid UTF-8 (or holds U+FFFD, the replacement character)",
            help,
        );
    }
    Ok(text)
}

/// Steps 2–4: the logical lines, numbered, comments removed, stripped, not
/// blank.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut joined: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in splitlines(text).into_iter().enumerate() {
        let n = i + 1;
        let comment = starts_as_comment(line);
        if !line.ends_with('\\') || comment {
            // pip prefixes a comment line with a space so that it is
            // removed as a comment also when it ends a joined line.
            let line = if comment {
                format!(" {line}")
            } else {
                line.to_string()
            };
            match pending.take() {
                Some((start, mut acc)) => {
                    acc.push_str(&line);
                    joined.push((start, acc));
                }
                None => joined.push((n, line)),
            }
        } else {
            let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
            acc.push_str(line.trim_matches('\\'));
            pending = Some((start, acc));
        }
    }
    if let Some(p) = pending {
        joined.push(p);
    }
    joined
        .into_iter()
        .filter_map(|(n, l)| {
            let l = cut_comment(&l).trim_matches(py_space);
            (!l.is_empty()).then(|| (n, l.to_string()))
        })
        .collect()
}

/// The first `${NAME}` (`NAME` in `[A-Z0-9_]+`) in `s`: what pip's
/// `ENV_VAR_RE` (and pep508_rs's `expand_env_vars`) replace.
pub(crate) fn env_var_reference(s: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(i) = s[from..].find("${") {
        let start = from + i;
        let name_start = start + 2;
        let len = s[name_start..]
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(s.len() - name_start);
        if len > 0 && s[name_start + len..].starts_with('}') {
            return Some(&s[start..name_start + len + 1]);
        }
        from = start + 1;
    }
    None
}

/// Python's `shlex.split(s)` (POSIX mode, no comments): the words, or the
/// error shlex raises.
pub(crate) fn shlex_split(s: &str) -> Result<Vec<String>, &'static str> {
    #[derive(PartialEq, Clone, Copy)]
    enum St {
        Space,
        Word,
        Quote(char),
        Escape(char),
    }
    let ws = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut out = Vec::new();
    let mut tok = String::new();
    let mut quoted = false;
    let mut st = St::Space;
    for c in s.chars() {
        st = match st {
            St::Space | St::Word => {
                if ws(c) {
                    if st == St::Word {
                        out.push(std::mem::take(&mut tok));
                        quoted = false;
                    }
                    St::Space
                } else if c == '\\' {
                    St::Escape('a')
                } else if c == '"' || c == '\'' {
                    quoted = true;
                    St::Quote(c)
                } else {
                    tok.push(c);
                    St::Word
                }
            }
            St::Quote(q) => {
                if c == q {
                    St::Word
                } else if c == '\\' && q == '"' {
                    St::Escape(q)
                } else {
                    tok.push(c);
                    St::Quote(q)
                }
            }
            St::Escape(back) => {
                // Inside double quotes, `\` escapes only `"` and `\`.
                if back == '"' && c != '"' && c != '\\' {
                    tok.push('\\');
                }
                tok.push(c);
                if back == 'a' {
                    St::Word
                } else {
                    St::Quote(back)
                }
            }
        };
    }
    match st {
        St::Quote(_) => Err("No closing quotation"),
        St::Escape(_) => Err("No escaped character"),
        St::Word => {
            out.push(tok);
            Ok(out)
        }
        St::Space => {
            if quoted {
                out.push(tok);
            }
            Ok(out)
        }
    }
}

/// Looks up a long option as optparse does: the exact name, else the one
/// option it is a unique prefix of. Err: the message optparse gives.
fn long_option(word: &str) -> Result<(&'static str, bool), String> {
    let mut hits: Vec<(&'static str, &'static str, bool)> = Vec::new();
    for (longs, _, valued) in PIP_OPTIONS {
        for l in *longs {
            if *l == word {
                return Ok((longs[0], *valued));
            }
            if l.starts_with(word) {
                hits.push((l, longs[0], *valued));
            }
        }
    }
    match hits.as_slice() {
        [] => Err(format!("no such option: {word}")),
        [(_, canon, valued)] => Ok((canon, *valued)),
        _ => Err(format!(
            "ambiguous option: {word} ({}?)",
            hits.iter().map(|h| h.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn short_option(c: char) -> Option<(&'static str, bool)> {
    PIP_OPTIONS
        .iter()
        .find(|(_, s, _)| *s == Some(c))
        .map(|(longs, _, valued)| (longs[0], *valued))
}

/// optparse's `parse_args` over the words: the options in order and the
/// words that are not options, or optparse's error message.
fn optparse(words: &[String]) -> Result<(Vec<ReqOpt>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "--" {
            rest.extend(words[i..].iter().cloned());
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (w.clone(), None),
            };
            let (canon, valued) = long_option(&name)?;
            let value = match (valued, inline) {
                (false, Some(_)) => return Err(format!("{canon} option does not take a value")),
                (false, None) => None,
                (true, Some(v)) => Some(v),
                (true, None) => {
                    let Some(v) = words.get(i) else {
                        return Err(format!("{name} option requires 1 argument"));
                    };
                    i += 1;
                    Some(v.clone())
                }
            };
            opts.push(ReqOpt {
                name: canon,
                written: match &value {
                    Some(v) if !w.contains('=') => format!("{w} {v}"),
                    _ => w.clone(),
                },
                value,
            });
        } else if w.len() > 1 && w.starts_with('-') {
            let body = &w[1..];
            for (j, c) in body.char_indices() {
                let Some((canon, valued)) = short_option(c) else {
                    return Err(format!("no such option: -{c}"));
                };
                if valued {
                    let attached = &body[j + c.len_utf8()..];
                    let value = if !attached.is_empty() {
                        attached.to_string()
                    } else {
                        let Some(v) = words.get(i) else {
                            return Err(format!("-{c} option requires 1 argument"));
                        };
                        i += 1;
                        v.clone()
                    };
                    opts.push(ReqOpt {
                        name: canon,
                        written: if attached.is_empty() {
                            format!("{w} {value}")
                        } else {
                            w.clone()
                        },
                        value: Some(value),
                    });
                    break;
                }
                opts.push(ReqOpt {
                    name: canon,
                    value: None,
                    written: format!("-{c}"),
                });
            }
        } else {
            rest.push(w.clone());
        }
    }
    Ok((opts, rest))
}

/// Reads a requirements file the way pip does (see the module docs). Err
/// when the file as a whole cannot be read as pip reads it (its encoding);
/// otherwise every logical line, lines pip would refuse included as
/// [`ReqLine::Bad`].
pub(crate) fn requirements(text: &str) -> Result<Vec<ReqLine>, Invalid> {
    let text = decode(text)?;
    let mut out = Vec::new();
    for (line, l) in logical_lines(text) {
        if let Some(var) = env_var_reference(&l) {
            out.push(ReqLine::Bad {
                line,
                code: "E0333",
                why: Invalid {
                    msg: format!("`{}` is an environment variable reference, which pip replaces from the environment of the build", super::clip(var)),
                    help: "write the value itself (a credential belongs in a secret, not in a requirements file)".into(),
                },
            });
            continue;
        }
        // break_args_options
        let mut args = Vec::new();
        let mut words = l.split(' ');
        let mut options = String::new();
        for w in words.by_ref() {
            if w.starts_with('-') {
                options.push_str(w);
                break;
            }
            args.push(w);
        }
        for w in words {
            options.push(' ');
            options.push_str(w);
        }
        let args = args.join(" ");
        let parsed = shlex_split(&options)
            .map_err(|e| format!("the options cannot be split as pip splits them ({e})"))
            .and_then(|w| optparse(&w));
        let (options, ignored) = match parsed {
            Ok(p) => p,
            Err(e) => {
                out.push(ReqLine::Bad {
                    line,
                    code: "E0335",
                    why: Invalid {
                        msg: format!("pip cannot read `{}`: {}", super::clip(&l), super::clip(&e)),
                        help: "write one requirement per line, or options pip's requirements file format documents (`--index-url URL`, `--extra-index-url URL`, `--pre`, `--only-binary NAMES`, …)".into(),
                    },
                });
                continue;
            }
        };
        if args.is_empty() {
            out.push(ReqLine::Options {
                line,
                options,
                ignored,
            });
        } else {
            out.push(ReqLine::Requirement {
                line,
                text: args,
                options,
                ignored,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sclc's reading in the rendering `pip_reading.py` gives pip's: one
    /// line per logical line, `LINENO|ARGS|OPTIONS|IGNORED`, `error` where
    /// pip stops; or `Err(code)` when sclc refuses the file.
    fn sclc(bytes: &[u8]) -> Result<String, &'static str> {
        let text = String::from_utf8_lossy(bytes);
        let lines = requirements(&text).map_err(|_| "E0334")?;
        let mut out = Vec::new();
        for l in lines {
            let (line, args, options, ignored) = match l {
                ReqLine::Bad { code: "E0335", .. } => {
                    out.push("error".to_string());
                    break;
                }
                ReqLine::Bad { code, .. } => return Err(code),
                ReqLine::Requirement {
                    line,
                    text,
                    options,
                    ignored,
                } => (line, text, options, ignored),
                ReqLine::Options {
                    line,
                    options,
                    ignored,
                } => (line, String::new(), options, ignored),
            };
            let opts: Vec<String> = options
                .iter()
                .map(|o| match &o.value {
                    Some(v) => format!("{}={v}", o.name),
                    None => o.name.to_string(),
                })
                .collect();
            out.push(format!(
                "{line}|{args}|{}|{}",
                opts.join(" "),
                ignored.join(" ")
            ));
        }
        Ok(out.join("\n"))
    }

    const H: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// The table: a file's bytes, what pip 26.3's own parser reads in it,
    /// and `Some(code)` when sclc refuses the file instead of reading it
    /// like pip (`None`: sclc's reading is pip's).
    fn table() -> Vec<(Vec<u8>, String, Option<&'static str>)> {
        let s = |t: &str| t.as_bytes().to_vec();
        let mut t: Vec<(Vec<u8>, String, Option<&'static str>)> = vec![
            // round 2, C2: a comment line never continues.
            (
                s("numpy==1.26.4\n# harmless comment \\\n--index-url https://evil.example/simple\n"),
                "1|numpy==1.26.4||\n3||--index-url=https://evil.example/simple|".into(),
                None,
            ),
            // a lone CR splits lines.
            (
                s("numpy==1.26.4 # note \r--extra-index-url https://evil.example/simple"),
                "1|numpy==1.26.4||\n2||--extra-index-url=https://evil.example/simple|".into(),
                None,
            ),
            (
                s("numpy\x0c-e git+https://evil.example/x.git"),
                "1|numpy||\n2||--editable=git+https://evil.example/x.git|".into(),
                None,
            ),
            // a UTF-7 cookie: pip decodes `+AAo-` as a newline.
            (
                s("# -*- coding: utf-7 -*-\nnumpy==1.26.4 # +AAo---trusted-host evil.example"),
                "2|numpy==1.26.4||\n3||--trusted-host=evil.example|".into(),
                Some("E0334"),
            ),
            (
                s("# coding=latin-1\nnumpy"),
                "2|numpy||".into(),
                Some("E0334"),
            ),
            // every option of an option line.
            (
                s("--pre --index-url https://evil.example/simple --trusted-host evil.example"),
                "1||--pre --index-url=https://evil.example/simple --trusted-host=evil.example|".into(),
                None,
            ),
            (
                s("--only-binary=:all: -f https://evil.example/links --no-index"),
                "1||--only-binary=:all: --find-links=https://evil.example/links --no-index|".into(),
                None,
            ),
            // a short option takes the rest of its word.
            (
                s("-i=https://pypi.example/simple\n-ihttps://y\n-i https://z"),
                "1||--index-url==https://pypi.example/simple|\n2||--index-url=https://y|\n3||--index-url=https://z|".into(),
                None,
            ),
            // abbreviations and aliases.
            (
                s("--extra https://x\n--pypi-url https://y\n--no-i\n--index=https://z"),
                "1||--extra-index-url=https://x|\n2||--index-url=https://y|\n3||--no-index|\n4||--index-url=https://z|".into(),
                None,
            ),
            (s("--pr"), "error".into(), None),
            (s("--pre=yes"), "error".into(), None),
            (s("numpy\n--index-url"), "1|numpy||\nerror".into(), None),
            (s("--bogus x"), "error".into(), None),
            (s("-x"), "error".into(), None),
            // a valued option takes the next word whatever it is.
            (
                s("--index-url --pre"),
                "1||--index-url=--pre|".into(),
                None,
            ),
            // join_lines: no trimming, every `\` at both ends stripped.
            (
                s("numpy\\\n==1.0\nscipy \\\\\n>=1\n\\\\a\\\nb"),
                "1|numpy==1.0||\n3|scipy >=1||\n5|ab||".into(),
                None,
            ),
            (s("numpy \\ \n>=1"), "1|numpy \\||\n2|>=1||".into(), None),
            (s("last\\"), "1|last||".into(), None),
            (
                s("a\\\n# c\\\nb"),
                "1|a||\n3|b||".into(),
                None,
            ),
            // comments: `#` at the start or after Python whitespace.
            (
                s("numpy#x\nscipy\t# c\ntorch\x1f#c\n  # only\n#x"),
                "1|numpy#x||\n2|scipy||\n3|torch||".into(),
                None,
            ),
            // shlex of the options.
            (
                s("--index-url \"https://x/a b\"\n--extra-index-url 'https://y'"),
                "1||--index-url=https://x/a b|\n2||--extra-index-url=https://y|".into(),
                None,
            ),
            (s("--index-url 'https://x"), "error".into(), None),
            (s("--index-url https://x\\"), "1||--index-url=https://x|".into(), None),
            // words that are not options are ignored.
            (s("--pre numpy"), "1||--pre|numpy".into(), None),
            (
                s("--pre -- --index-url https://x"),
                "1||--pre|--index-url https://x".into(),
                None,
            ),
            // per-requirement options; split on " " only.
            (
                format!("torch==2.1.2 --hash={H} -C k=v\nnumpy  --pre\nscipy\t--pre").into_bytes(),
                format!("1|torch==2.1.2|--hash={H} --config-settings=k=v|\n2|numpy |--pre|\n3|scipy\t--pre||"),
                None,
            ),
            (
                s("numpy --index-url https://x"),
                "1|numpy|--index-url=https://x|".into(),
                None,
            ),
            // every line break of str.splitlines.
            (
                s("a\x0bb\x0cc\x1cd\x1de\x1ef\u{85}g\u{2028}h\u{2029}i\r\nj"),
                "1|a||\n2|b||\n3|c||\n4|d||\n5|e||\n6|f||\n7|g||\n8|h||\n9|i||\n10|j||".into(),
                None,
            ),
            // a UTF-8 BOM; a UTF-8 cookie; a cookie on the third line is no cookie.
            (s("\u{feff}numpy"), "1|numpy||".into(), None),
            (s("# -*- coding: utf-8 -*-\nnumpy"), "2|numpy||".into(), None),
            (s("# vim: fileencoding=ascii\nnumpy"), "2|numpy||".into(), None),
            (
                s("a\nb\n# coding: utf-7\nc"),
                "1|a||\n2|b||\n4|c||".into(),
                None,
            ),
            // environment variables: pip replaces them from the build's
            // environment (this table runs pip with the names unset).
            (
                s("foo @ https://${XHOST}/x.whl"),
                "1|foo @ https://${XHOST}/x.whl||".into(),
                Some("E0333"),
            ),
            (
                s("--index-url https://${TOKEN}@x/simple"),
                "1||--index-url=https://${TOKEN}@x/simple|".into(),
                Some("E0333"),
            ),
            // not env vars: lower case, empty; in a comment.
            (
                s("a${x}\nb${}\nc # ${HOME}"),
                "1|a${x}||\n2|b${}||\n3|c||".into(),
                None,
            ),
        ];
        for (text, pip) in [
            (
                "-r other.txt\n-c c.txt",
                "1||--requirement=other.txt|\n2||--constraint=c.txt|",
            ),
            ("--index-url \"\"", "1||--index-url=|"),
            ("numpy -", "1|numpy||-"),
            ("--extra-index-url=", "1||--extra-index-url=|"),
            ("-ie", "1||--index-url=e|"),
            (
                "--index-url=a --index-url=b",
                "1||--index-url=a --index-url=b|",
            ),
            ("#coding:utf8\nx", "2|x||"),
            ("x \"a b\" --pre", "1|x \"a b\"|--pre|"),
            ("--pre \"a b\"", "1||--pre|a b"),
        ] {
            t.push((s(text), pip.to_string(), None));
        }
        t.push((
            format!("--hash={H}").into_bytes(),
            format!("1||--hash={H}|"),
            None,
        ));
        // UTF-16 with its mark, and bytes that are not UTF-8.
        let mut utf16 = vec![0xff, 0xfe];
        for u in "numpy\n".encode_utf16() {
            utf16.extend(u.to_le_bytes());
        }
        t.push((utf16, "1|numpy||".into(), Some("E0334")));
        t.push((b"numpy\xff".to_vec(), "error".into(), Some("E0334")));
        t
    }

    #[test]
    fn sclc_reads_the_table_like_pip_or_refuses_it() {
        for (bytes, pip, refuse) in table() {
            let got = sclc(&bytes);
            match refuse {
                None => assert_eq!(got.as_deref(), Ok(pip.as_str()), "{bytes:?}"),
                Some(code) => assert_eq!(got, Err(code), "{bytes:?}"),
            }
        }
    }

    /// The same table through pip's own parser, when the project's `.venv`
    /// has pip 26.3 (`.venv/bin/python -m pip install pip==26.3`); skipped
    /// with a message otherwise (no network at test time).
    #[test]
    fn pip_reads_the_table_as_it_says() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let py = root.join(".venv/bin/python");
        let version = std::process::Command::new(&py)
            .args(["-c", "import pip; print(pip.__version__)"])
            .output();
        match version {
            Ok(o) if String::from_utf8_lossy(&o.stdout).trim() == "26.3" => {}
            _ => {
                eprintln!(
                    "skipped: {} has no pip 26.3 (install it with `.venv/bin/python -m pip install pip==26.3`)",
                    py.display()
                );
                return;
            }
        }
        let cases = table();
        let input = serde_json::to_string(&cases.iter().map(|c| &c.0).collect::<Vec<_>>()).unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/src/validate/pip_reading.py");
        let mut child = std::process::Command::new(&py)
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let got: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
        let wrong: Vec<String> = cases
            .iter()
            .zip(&got)
            .filter(|((_, pip, _), got)| got != &pip)
            .map(|((b, pip, _), got)| {
                format!(
                    "{:?}: the table says\n{pip}\npip reads\n{got}",
                    String::from_utf8_lossy(b)
                )
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    }
}
