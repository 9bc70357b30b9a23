//! The one place where values are quoted or escaped for the text formats the
//! backends write. Templates never quote by hand: they receive values already
//! passed through one of these functions.
//!
//! | function | for | rule |
//! |---|---|---|
//! | [`shell`] | a word on a shell (`RUN`) line | POSIX single quotes, safe words left bare |
//! | [`json_string`], [`json_array`] | exec form (`ENTRYPOINT`, `CMD`) | JSON (RFC 8259) strings |
//! | [`dockerfile_value`] | `ENV`/`LABEL` values and keys | Dockerfile double quotes |
//! | [`dockerfile_word`] | `WORKDIR`, `FROM`, `--chown=` | bare when safe, else [`dockerfile_value`] |
//! | [`dockerfile_args`] | `COPY`/`ADD` sources and destination | bare when safe, else JSON form |
//! | [`comment`] | text inside a `#` comment | control characters shown escaped |
//!
//! The Dockerfile rules follow BuildKit's word lexer
//! (`moby/buildkit`, `frontend/dockerfile/shell/lex.go`): outside quotes a
//! backslash makes the next character literal; inside double quotes only
//! `"`, `$` and `\` can be escaped; `$` starts a variable in `ENV`, `LABEL`,
//! `COPY`, `ADD`, `WORKDIR`, `USER` and `FROM`. A Dockerfile line cannot hold a
//! newline (it ends the instruction) nor end in a backslash (it continues the
//! instruction), so those helpers return [`Unrepresentable`] for a value with a
//! line break or NUL.

use std::fmt;

/// A value that cannot be written in the requested Dockerfile position: it
/// holds a line break (`\n`, `\r`) or a NUL character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unrepresentable;

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("contains a line break or NUL, which a Dockerfile instruction cannot hold")
    }
}

impl std::error::Error for Unrepresentable {}

fn is_shell_safe(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
}

/// Quotes `s` as one POSIX shell word (`sh`, `bash`, `dash`, `ash`).
///
/// A non-empty word made only of `[A-Za-z0-9_@%+=:,./-]` is returned as is
/// (`git`, `numpy==1.2`, `/workspace/x`); anything else is wrapped in single
/// quotes, with each `'` written as `'\''` (`it's` → `'it'\''s'`), and the
/// empty string becomes `''`. Inside single quotes the shell gives no
/// character a meaning, so `$`, backticks, `\`, globs and spaces stay literal.
///
/// A newline stays a newline (correct for the shell); a caller writing a
/// Dockerfile line must refuse it first ([`has_line_break`]).
pub fn shell(s: &str) -> String {
    if !s.is_empty() && s.chars().all(is_shell_safe) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `s` as a JSON string literal, quotes included (RFC 8259 §7): `"` and `\`
/// are backslash-escaped, `\n \r \t \b \f` use their short escapes, other
/// control characters (U+0000–U+001F, U+007F) and the line separators
/// U+2028/U+2029 become `\uXXXX`; everything else is written as UTF-8.
/// Docker decodes exec-form arrays with Go's `encoding/json`, which accepts
/// exactly this.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON array of strings in Docker's exec form: `["python", "train.py"]`
/// (elements by [`json_string`], separated by `", "`). An empty slice gives
/// `[]`.
pub fn json_array<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|s| json_string(s.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

/// True when `s` holds a character no Dockerfile line can carry: `\n`, `\r`
/// or NUL.
pub fn has_line_break(s: &str) -> bool {
    s.contains(['\n', '\r', '\0'])
}

/// `s` as a double-quoted Dockerfile value, for `ENV K=<here>` and
/// `LABEL <here>=<here>`: `"` + `s` with `\`, `"` and `$` backslash-escaped +
/// `"`. Backticks, `'`, spaces, `#` and non-ASCII text need no escape there.
///
/// Errors: [`Unrepresentable`] when `s` holds `\n`, `\r` or NUL (a
/// Dockerfile value cannot contain a line break: a newline ends the
/// instruction, and `\`-newline is a continuation that disappears).
pub fn dockerfile_value(s: &str) -> Result<String, Unrepresentable> {
    if has_line_break(s) {
        return Err(Unrepresentable);
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// True for a word that a Dockerfile instruction reads literally when written
/// bare: non-empty, no whitespace or control characters, none of
/// `\ $ " '`, and not starting with `[` (exec/JSON form), `-` (a flag) or
/// `#`.
pub fn is_dockerfile_bare(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['[', '-', '#'])
        && s.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !matches!(c, '\\' | '$' | '"' | '\''))
}

/// One word for `FROM`, `WORKDIR` or a flag value (`--chown=`): `s` itself
/// when [`is_dockerfile_bare`], else [`dockerfile_value`] (double quotes are
/// removed by Docker's lexer in those positions).
///
/// Errors: [`Unrepresentable`] for a line break or NUL.
pub fn dockerfile_word(s: &str) -> Result<String, Unrepresentable> {
    if has_line_break(s) {
        return Err(Unrepresentable);
    }
    if is_dockerfile_bare(s) {
        Ok(s.to_string())
    } else {
        dockerfile_value(s)
    }
}

/// The sources and destination of a `COPY`/`ADD`: the words joined by
/// spaces when every one [`is_dockerfile_bare`] (`train.py /workspace/train.py`),
/// else the JSON form, whose elements keep spaces, with `\ $ " '`
/// backslash-escaped for Docker's lexer and then JSON-encoded
/// (`["my file", "/a/my file"]`).
///
/// Errors: [`Unrepresentable`] when a word holds a line break or NUL.
pub fn dockerfile_args<S: AsRef<str>>(words: &[S]) -> Result<String, Unrepresentable> {
    if words.iter().any(|w| has_line_break(w.as_ref())) {
        return Err(Unrepresentable);
    }
    if words.iter().all(|w| is_dockerfile_bare(w.as_ref())) {
        let parts: Vec<&str> = words.iter().map(|w| w.as_ref()).collect();
        return Ok(parts.join(" "));
    }
    let escaped: Vec<String> = words
        .iter()
        .map(|w| {
            let mut e = String::new();
            for c in w.as_ref().chars() {
                if matches!(c, '\\' | '$' | '"' | '\'') {
                    e.push('\\');
                }
                e.push(c);
            }
            e
        })
        .collect();
    Ok(json_array(&escaped))
}

/// Text for the inside of a one-line `#` comment: control characters
/// (`\n`, `\r`, tab, …) and U+2028/U+2029/U+0085 are written as Rust-style
/// escapes (`\n`, `\u{2028}`), so a value can neither end the comment nor
/// start an instruction. Everything else is kept.
pub fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const NASTY: &[&str] = &[
        "",
        "plain",
        "numpy==1.2",
        "/workspace/x",
        "it's",
        "'",
        "''",
        "a\"b",
        "$HOME",
        "${HOME:-x}",
        "`id`",
        "$(id)",
        "a b",
        "  lead and trail  ",
        "tab\there",
        "new\nline",
        "cr\rx",
        "back\\slash",
        "trailing\\",
        "glob*?[a]",
        "semi;colon&amp|pipe>out<in",
        "~user",
        "#hash",
        "-dash",
        "!bang",
        "ünïcödé ✓ 模型",
        "emoji 🚀",
        "numpy>=1.2,<2",
        "torch[cuda]",
        "\u{2028}sep",
    ];

    /// What `sh` prints for `printf %s <quoted>`.
    fn sh_roundtrip(quoted: &str) -> Vec<u8> {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {quoted}"))
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "sh failed for {quoted}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    #[test]
    fn shell_leaves_safe_words_bare() {
        for w in [
            "git",
            "numpy==1.2",
            "/workspace/x",
            "a-b_c.d",
            "user@host:1",
            "50%",
            "a,b",
            "x+y",
        ] {
            assert_eq!(shell(w), w);
        }
    }

    #[test]
    fn shell_quotes_everything_else() {
        assert_eq!(shell(""), "''");
        assert_eq!(shell("it's"), r"'it'\''s'");
        assert_eq!(shell("$HOME"), "'$HOME'");
        assert_eq!(shell("a b"), "'a b'");
        assert_eq!(shell("numpy>=1.2"), "'numpy>=1.2'");
        assert_eq!(shell("torch[cuda]"), "'torch[cuda]'");
        assert_eq!(shell("~"), "'~'");
        assert_eq!(shell("é"), "'é'");
    }

    #[test]
    fn shell_roundtrips_through_sh() {
        for s in NASTY {
            assert_eq!(
                sh_roundtrip(&shell(s)),
                s.as_bytes(),
                "value {s:?} quoted as {}",
                shell(s)
            );
        }
        // Several words stay several words.
        let line = format!("printf '<%s>' {} {}", shell("a b"), shell(""));
        let out = Command::new("sh").arg("-c").arg(line).output().unwrap();
        assert_eq!(out.stdout, b"<a b><>");
    }

    #[test]
    fn json_string_escapes_and_parses() {
        assert_eq!(json_string("python"), "\"python\"");
        assert_eq!(json_string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(json_string("x\ny\t"), r#""x\ny\t""#);
        assert_eq!(json_string("\u{1}\u{7f}"), r#""\u0001\u007f""#);
        assert_eq!(json_string("ü ✓"), "\"ü ✓\"");
        for s in NASTY {
            let back: String = serde_json::from_str(&json_string(s)).unwrap();
            assert_eq!(&back, s);
        }
    }

    #[test]
    fn json_array_is_exec_form() {
        assert_eq!(
            json_array(&["python", "train.py"]),
            r#"["python", "train.py"]"#
        );
        assert_eq!(json_array::<&str>(&[]), "[]");
        let all: Vec<&str> = NASTY.to_vec();
        let back: Vec<String> = serde_json::from_str(&json_array(&all)).unwrap();
        assert_eq!(back, all);
        assert!(!json_array(&all).contains('\n'));
    }

    /// Decodes a double-quoted value the way BuildKit's lexer does.
    fn lex_double_quoted(q: &str) -> String {
        let inner = q
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .expect("double-quoted");
        let mut out = String::new();
        let mut it = inner.chars().peekable();
        while let Some(c) = it.next() {
            if c == '\\' && matches!(it.peek(), Some('"' | '$' | '\\')) {
                out.push(it.next().unwrap());
            } else {
                assert!(c != '"' && c != '$', "unescaped {c:?} in {q}");
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn dockerfile_value_escapes() {
        assert_eq!(dockerfile_value("v").unwrap(), "\"v\"");
        assert_eq!(
            dockerfile_value("a\"b$c\\d`e'f").unwrap(),
            r#""a\"b\$c\\d`e'f""#
        );
        assert_eq!(dockerfile_value("").unwrap(), "\"\"");
        assert_eq!(dockerfile_value("trailing\\").unwrap(), r#""trailing\\""#);
        assert_eq!(dockerfile_value("a\nb"), Err(Unrepresentable));
        assert_eq!(dockerfile_value("a\rb"), Err(Unrepresentable));
        assert_eq!(dockerfile_value("a\0b"), Err(Unrepresentable));
        for s in NASTY.iter().filter(|s| !has_line_break(s)) {
            let q = dockerfile_value(s).unwrap();
            assert_eq!(&lex_double_quoted(&q), s);
            assert!(q.ends_with('"'), "never ends in a continuation backslash");
        }
    }

    #[test]
    fn dockerfile_word_and_args() {
        assert_eq!(dockerfile_word("/workspace").unwrap(), "/workspace");
        assert_eq!(dockerfile_word("/my dir").unwrap(), "\"/my dir\"");
        assert_eq!(dockerfile_word("/a$b").unwrap(), r#""/a\$b""#);
        assert_eq!(dockerfile_word("-x").unwrap(), "\"-x\"");
        assert_eq!(dockerfile_word("a\nb"), Err(Unrepresentable));
        assert_eq!(
            dockerfile_args(&["train.py", "/workspace/train.py"]).unwrap(),
            "train.py /workspace/train.py"
        );
        assert_eq!(
            dockerfile_args(&["https://h/x?a=1&b=2", "/m/x"]).unwrap(),
            "https://h/x?a=1&b=2 /m/x"
        );
        assert_eq!(
            dockerfile_args(&["my file", "/a/b"]).unwrap(),
            r#"["my file", "/a/b"]"#
        );
        assert_eq!(
            dockerfile_args(&["a$b'c\"d\\", "/x"]).unwrap(),
            r#"["a\\$b\\'c\\\"d\\\\", "/x"]"#
        );
        assert_eq!(dockerfile_args(&["[x]", "/y"]).unwrap(), r#"["[x]", "/y"]"#);
        assert_eq!(dockerfile_args(&["a\nb", "/y"]), Err(Unrepresentable));
        // The JSON form always parses, whatever the words.
        let words: Vec<&str> = NASTY
            .iter()
            .copied()
            .filter(|s| !has_line_break(s))
            .collect();
        let form = dockerfile_args(&words).unwrap();
        let parsed: Vec<String> = serde_json::from_str(&form).unwrap();
        assert_eq!(parsed.len(), words.len());
    }

    #[test]
    fn comment_cannot_break_out() {
        assert_eq!(comment("plain text ✓"), "plain text ✓");
        assert_eq!(comment("a\nRUN rm -rf /"), "a\\nRUN rm -rf /");
        assert_eq!(comment("x\r\ty"), "x\\r\\ty");
        assert_eq!(comment("a\u{2028}b"), "a\\u{2028}b");
        for s in NASTY {
            let c = comment(s);
            assert!(!c.contains(['\n', '\r']), "{c:?}");
        }
    }
}
