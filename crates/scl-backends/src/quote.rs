//! The one place where values are quoted or escaped for the text formats the
//! backends write. Templates never quote by hand: they receive values already
//! passed through one of these functions.
//!
//! | function | for | rule |
//! |---|---|---|
//! | [`shell`] | a word on a shell line (`RUN`, Apptainer `%post`) | POSIX single quotes, safe words left bare |
//! | [`shell_quoted`] | a value in `export K=…` (Apptainer `%environment`) | POSIX single quotes, always |
//! | [`shell_lines`] | a multi-line script written by `printf` | one [`shell`] word per line |
//! | [`apptainer_files_source`], [`apptainer_files_dest`] | the two words of an Apptainer `%files` line | bare, or double quotes around a space |
//! | [`json_string`], [`json_array`] | exec form (`ENTRYPOINT`, `CMD`) | JSON (RFC 8259) strings, `"` and `\` as `\u0022`/`\u005c` |
//! | [`dockerfile_pair`] | `ENV`/`LABEL` keys and values | double quotes, single quotes around `\"` |
//! | [`dockerfile_word`] | `WORKDIR` | bare when safe, else double quotes |
//! | [`dockerfile_args`] | `COPY`/`ADD` sources and destination | bare when safe, else JSON form |
//! | [`dockerignore_pattern`] | one line of `.dockerignore` | a leading `#` or `!` escaped |
//! | [`comment`] | text inside a `#` comment | control characters shown escaped |
//!
//! The Dockerfile rules follow BuildKit's parser and word lexer
//! (`moby/buildkit`, `frontend/dockerfile/parser/parser.go` and
//! `frontend/dockerfile/shell/lex.go`): a physical line ends at `\n`; a line
//! whose last non-blank character is a backslash continues the instruction;
//! outside quotes a backslash makes the next character literal; inside double
//! quotes only `"`, `$` and `\` can be escaped; inside single quotes nothing
//! is special; `$` starts a variable in `ENV`, `LABEL`, `COPY`, `ADD`,
//! `WORKDIR`, `USER` and `FROM`. The generated files must also parse with
//! hadolint, whose parser (`hadolint/language-docker`,
//! `Language.Docker.Parser.Pairs`) reads `\` + quote as the quote but a run of
//! two or more backslashes before a quote as an error: [`dockerfile_pair`]
//! never writes one. A value with a line feed, NUL or a character a reader
//! would not see as written ([`is_hidden`]: a carriage return, an escape
//! sequence, a bidirectional override, …) is not written raw anywhere
//! ([`Unrepresentable`]; comments and JSON strings show such characters
//! escaped); only [`shell_lines`] turns line feeds into separate words.
//! Reviewers read the generated files: what they see must be what runs.

use std::fmt;

/// A value that cannot be written in the requested position: it holds a line
/// feed, NUL, or a character a reader would not see as written
/// ([`is_hidden`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unrepresentable;

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("contains a line break, NUL or an invisible character (a carriage return, an escape, a bidirectional override), which a Dockerfile cannot show as written")
    }
}

/// True for a character that a reader of a generated file would not see as
/// written, or that a terminal or editor would act on (a control character
/// other than tab and line feed, a line separator, a bidirectional control,
/// U+FEFF). The one definition of the class is [`scl_diag::is_hidden`],
/// which the lexer (E0010) and the terminal renderer use too.
pub use scl_diag::is_hidden;

impl std::error::Error for Unrepresentable {}

/// The characters of a word that no Dockerfile or shell rule gives a
/// meaning: `[A-Za-z0-9_@%+=:,./-]`.
fn is_shell_safe(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
}

/// Quotes `s` as one POSIX shell word (`sh`, `bash`, `dash`, `ash`).
///
/// A non-empty word made only of `[A-Za-z0-9_@%+=:,./-]` is returned as is
/// (`git`, `numpy==1.2`, `/workspace/x`), unless it starts with `%` or holds
/// `bootstrap:` (see below); anything else is single-quoted
/// ([`shell_quoted`]), and the empty string becomes `''`. Inside single
/// quotes the shell gives no character a meaning, so `$`, backticks, `\`,
/// globs and spaces stay literal. A word that starts with `-` is still one
/// word, but a command may read it as an option: callers put it after `--`
/// or refuse it.
///
/// The same words are safe on a line of an Apptainer definition file's
/// scripts, whose parser reads the text before the shell does: no word
/// written here starts a line with `%` (a new section), holds `{{`
/// (Apptainer's build-argument syntax, which has no escape) or `bootstrap:`
/// (a new build stage at the start of a line; anywhere in a line for
/// spython), and none ends a physical line inside quotes.
pub fn shell(s: &str) -> String {
    if !s.is_empty() && s.chars().all(is_shell_safe) && !s.starts_with('%') && !has_stage(s) {
        return s.to_string();
    }
    single_quoted(s)
}

/// `s` as one POSIX shell word, always quoted (never bare, unlike
/// [`shell`]): `'value'`, where the shell reads every character literally.
/// Each `'` is written `'\''` (`it's` → `'it'\''s'`), the empty string is
/// `''`, and the quoting is broken (`'…''…'`, which the shell joins back)
/// between the two braces of `{{` and before the `:` of `bootstrap:` (in any
/// case), so that the text never holds either; a line feed is written in
/// double quotes between two single-quoted pieces (`'a'"` line feed `"'b'`),
/// so every physical line after the first starts with `"`.
pub fn shell_quoted(s: &str) -> String {
    single_quoted(s)
}

/// Whether `s` holds `bootstrap:` in any case.
fn has_stage(s: &str) -> bool {
    s.to_ascii_lowercase().contains("bootstrap:")
}

/// `s` in POSIX single quotes ([`shell_quoted`]).
fn single_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\'' => out.push_str("'\\''"),
            '\n' => out.push_str("'\"\n\"'"),
            _ => out.push(c),
        }
        let next = chars.get(i + 1).copied();
        let stage = next == Some(':')
            && i >= 8
            && chars[i - 8..=i]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("bootstrap");
        if (c == '{' && next == Some('{')) || stage {
            out.push_str("''");
        }
    }
    out.push('\'');
    out
}

/// The lines of a shell script as single-quoted words (as [`shell`] quotes,
/// but never bare, so that no line reads like a keyword such as `fi` to a
/// linter), one per line, for `printf '%s\n' <word> <word> …`, which writes
/// the script back byte for byte (with a final `\n` when `script` has none).
///
/// `script` is split at `\n`; a final empty piece after a trailing `\n` is
/// dropped, so `"a\nb"` and `"a\nb\n"` give `['a', 'b']`, and `""` gives one
/// empty line (`''`).
///
/// Errors: [`Unrepresentable`] when `script` holds an [`is_hidden`]
/// character: NUL, which neither a Dockerfile nor a shell string can carry,
/// or one a reviewer would not see (a carriage return can hide the start of
/// a line on a terminal).
pub fn shell_lines(script: &str) -> Result<Vec<String>, Unrepresentable> {
    if script.chars().any(is_hidden) {
        return Err(Unrepresentable);
    }
    let body = script.strip_suffix('\n').unwrap_or(script);
    Ok(body.split('\n').map(single_quoted).collect())
}

/// `s` as a JSON string literal, quotes included (RFC 8259 §7): `"` and `\`
/// are written as the escapes `\u0022` and `\u005c`, `\n \r \t \b \f` use
/// their short escapes, every other [`is_hidden`] character becomes
/// `\uXXXX`; everything else is written as UTF-8 (`a"b\c` →
/// `"a\u0022b\u005cc"`).
///
/// BuildKit decodes the JSON form (exec-form `ENTRYPOINT`/`CMD`/`RUN`, and
/// `COPY`/`ADD` with a list) with Go's `encoding/json`
/// (`frontend/dockerfile/parser/line_parsers.go`, `parseJSON`), which reads
/// every RFC 8259 escape. hadolint's parser (`hadolint/language-docker`)
/// does not: it reads a string holding `\"` after a backslash, or ending in
/// `\\`, as no JSON at all and then lints the instruction as shell form
/// (DL3025 "use arguments JSON notation" for `CMD ["a\\\"b"]`), while
/// `\u0022`/`\u005c` parse in both (checked with hadolint 2.15.1 by
/// `tests/hostile.rs`). So no string written here has a backslash other
/// than the one that starts an escape sequence, followed by `u`, `n`, `r`,
/// `t`, `b` or `f`.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\u0022"),
            '\\' => out.push_str("\\u005c"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if is_hidden(c) => {
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

/// True when `s` holds a character no Dockerfile word can show as written:
/// a line feed or an [`is_hidden`] character (NUL and `\r` among them).
pub fn is_unwritable(s: &str) -> bool {
    s.chars().any(|c| c == '\n' || is_hidden(c))
}

/// An `ENV`/`LABEL` key or value as written by [`dockerfile_pair`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairText {
    /// The text to write after `KEY=` (or before `=` for a key).
    pub text: String,
    /// True when the value ends in a backslash: then `text` ends with that
    /// run written outside quotes (`"C:"\\`), which both parsers read only
    /// when nothing follows it on the line, so the pair must be the last of
    /// its instruction and no ` \` continuation may follow.
    pub ends_line: bool,
}

/// `s` as one word of an `ENV K=<here>` or `LABEL <here>=<here>` pair, such
/// that BuildKit's lexer reads back exactly `s` and hadolint parses it.
///
/// The text is double-quoted with `\`, `"` and `$` backslash-escaped
/// (`x $y "z"` → `"x \$y \"z\""`); backticks, `'`, spaces, `#` and non-ASCII
/// text need no escape there. Two cases where hadolint's parser and
/// BuildKit's disagree are written differently:
/// - backslashes directly before a `"` (`a\"b`) go into a single-quoted
///   segment, where both read every character literally:
///   `"a"'\"'"b"`;
/// - backslashes at the end (`C:\tools\`) are written after the closing
///   quote, each as `\\` (`"C:\\tools"\\`), and [`PairText::ends_line`] is
///   set.
///
/// The empty string is `""`.
///
/// Errors: [`Unrepresentable`] when `s` holds `\n`, `\r` or NUL (a newline
/// ends the instruction, and `\`-newline is a continuation that disappears).
pub fn dockerfile_pair(s: &str) -> Result<PairText, Unrepresentable> {
    if is_unwritable(s) {
        return Err(Unrepresentable);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut text = String::with_capacity(s.len() + 2);
    let mut in_double = false;
    let mut ends_line = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let run_end = chars[i..]
                .iter()
                .position(|&c| c != '\\')
                .map_or(chars.len(), |n| i + n);
            let run = run_end - i;
            match chars.get(run_end) {
                None => {
                    // Trailing backslashes: outside quotes, at the line's end.
                    if in_double {
                        text.push('"');
                        in_double = false;
                    } else if text.is_empty() {
                        text.push_str("\"\"");
                    }
                    text.push_str(&"\\\\".repeat(run));
                    ends_line = true;
                }
                Some('"') => {
                    // Backslashes before a quote: literal in single quotes.
                    if in_double {
                        text.push('"');
                        in_double = false;
                    }
                    text.push('\'');
                    text.push_str(&"\\".repeat(run));
                    text.push('"');
                    text.push('\'');
                    i = run_end + 1;
                    continue;
                }
                Some(_) => {
                    if !in_double {
                        text.push('"');
                        in_double = true;
                    }
                    text.push_str(&"\\\\".repeat(run));
                }
            }
            i = run_end;
            continue;
        }
        if !in_double {
            text.push('"');
            in_double = true;
        }
        if matches!(c, '"' | '$') {
            text.push('\\');
        }
        text.push(c);
        i += 1;
    }
    if in_double {
        text.push('"');
    }
    if text.is_empty() {
        text.push_str("\"\"");
    }
    Ok(PairText { text, ends_line })
}

/// True for a word that a Dockerfile instruction reads literally when
/// written bare, and that the shell would not quote either: non-empty, only
/// `[A-Za-z0-9_@%+=:,./?&-]`, not starting with `-` (a flag). That rules out
/// whitespace, quotes, `\`, `$` (variables), `#` (comments), `[` (the JSON
/// form), `*`/`[` (globs) and `<` (here-documents, `<<EOF` or `2<<EOF`).
pub fn is_dockerfile_bare(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| is_shell_safe(c) || matches!(c, '?' | '&'))
}

/// One word for `WORKDIR`: `s` itself when [`is_dockerfile_bare`], else
/// double-quoted with `\`, `"` and `$` backslash-escaped (BuildKit's lexer
/// removes the quotes; hadolint reads `WORKDIR` to the end of the line, so
/// a backslash before the closing quote is fine there).
///
/// Errors: [`Unrepresentable`] for a line break or NUL.
pub fn dockerfile_word(s: &str) -> Result<String, Unrepresentable> {
    if is_unwritable(s) {
        return Err(Unrepresentable);
    }
    if is_dockerfile_bare(s) {
        return Ok(s.to_string());
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

/// The sources and destination of a `COPY`/`ADD`: the words joined by
/// spaces when every one [`is_dockerfile_bare`] (`train.py /workspace/train.py`),
/// else the JSON form, whose elements keep spaces, with `\ $ " '`
/// (and U+FEFF) backslash-escaped for BuildKit's lexer (which processes each
/// element) and then JSON-encoded (`["my file", "/a/my file"]`). The JSON form also
/// keeps a word that starts with `-` (`--from=x`) from being read as a flag
/// and one that starts with `<<` from being read as a here-document.
///
/// Globs are not escaped here: `COPY` reads `*`, `?` and `[` in a source as
/// a pattern, so callers refuse such sources.
///
/// Errors: [`Unrepresentable`] when a word holds a line break or NUL.
pub fn dockerfile_args<S: AsRef<str>>(words: &[S]) -> Result<String, Unrepresentable> {
    if words.iter().any(|w| is_unwritable(w.as_ref())) {
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
                // U+FEFF too: Go's text/scanner, under BuildKit's lexer,
                // drops it as a byte order mark when it starts a word.
                if matches!(c, '\\' | '$' | '"' | '\'' | '\u{feff}') {
                    e.push('\\');
                }
                e.push(c);
            }
            e
        })
        .collect();
    Ok(json_array(&escaped))
}

/// Why a path cannot be one word of an Apptainer `%files` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilesPathRefusal {
    /// Empty: a source names no file, and an empty destination means "the
    /// source's own path".
    Empty,
    /// A line break, a tab or other whitespace but the space, or an
    /// [`is_hidden`] character: the line is split at whitespace (a space is
    /// kept only inside double quotes).
    Whitespace,
    /// A `"` or `'`, which the line's splitter reads as quotes (with no
    /// escape).
    Quote,
    /// In a source, a character Apptainer's shell expansion of the path
    /// reads (`*`, `?`, `[` globs, `{`/`}` braces, `$` and backticks,
    /// `\`), so another file than the one named could be copied.
    Expansion(char),
    /// `{{`, Apptainer's build-argument syntax, or `bootstrap:`, which
    /// definition-file readers take for a new build stage.
    Syntax,
}

impl fmt::Display for FilesPathRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilesPathRefusal::Empty => f.write_str("is empty, which names no file"),
            FilesPathRefusal::Whitespace => f.write_str("contains a line break, a tab or an invisible character, which a line of Apptainer's %files cannot hold (only a space can be quoted there)"),
            FilesPathRefusal::Quote => f.write_str("contains a `\"` or `'`, which Apptainer's %files reads as a quote and which cannot be escaped there"),
            FilesPathRefusal::Expansion(c) => write!(f, "contains `{c}`, which Apptainer expands in a %files source (globs, braces, `$` variables, backslash escapes), so another file could be copied than the one sclc hashed"),
            FilesPathRefusal::Syntax => f.write_str("contains `{{` (Apptainer's build-argument syntax, which has no escape) or `bootstrap:` (the start of a new build stage for definition-file readers)"),
        }
    }
}

impl std::error::Error for FilesPathRefusal {}

/// The checks a `%files` word must pass in either position.
fn files_word(p: &str) -> Result<(), FilesPathRefusal> {
    if p.is_empty() {
        return Err(FilesPathRefusal::Empty);
    }
    if p.chars()
        .any(|c| is_hidden(c) || (c.is_whitespace() && c != ' '))
    {
        return Err(FilesPathRefusal::Whitespace);
    }
    if p.contains(['"', '\'']) {
        return Err(FilesPathRefusal::Quote);
    }
    if p.contains("{{") || has_stage(p) {
        return Err(FilesPathRefusal::Syntax);
    }
    Ok(())
}

/// `p` in double quotes when it holds a space, else as it is.
fn files_quoted(p: String) -> String {
    if p.contains(' ') {
        format!("\"{p}\"")
    } else {
        p
    }
}

/// A workspace-relative source path as the first word of an Apptainer
/// `%files` line, read back as `p` by Apptainer (`apptainer/apptainer`,
/// `pkg/build/types/parser/deffile.go` and `internal/pkg/build/files`).
///
/// Apptainer splits the line with `fileSplitter` (whitespace, except inside
/// `"…"`; a `'` starts a quoted piece that is not removed), trims `"` from
/// both ends, and then expands the source as a shell word: it escapes each
/// space and parses the text as a here-document body with `mvdan.cc/sh`
/// (`$` variables, `$(…)` and backticks expand, every `\x` becomes `x`),
/// then expands braces, a leading `~`, and globs (`*`, `?`, `[`; an
/// escaped glob character is a glob again once the backslash is gone); the
/// result is given to `cp -fLr`. So a path with a space is double-quoted,
/// one that starts with `-` (an option of `cp`), `~` (a home folder), `#`
/// (a comment line) or `%` (a new section) gets `./` in front, and a path
/// with a character no form of quoting keeps is refused
/// ([`FilesPathRefusal`]).
pub fn apptainer_files_source(p: &str) -> Result<String, FilesPathRefusal> {
    files_word(p)?;
    if let Some(c) = p
        .chars()
        .find(|c| matches!(c, '*' | '?' | '[' | '{' | '}' | '$' | '`' | '\\'))
    {
        return Err(FilesPathRefusal::Expansion(c));
    }
    let p = if p.starts_with(['-', '~', '#', '%']) {
        format!("./{p}")
    } else {
        p.to_string()
    };
    Ok(files_quoted(p))
}

/// A destination path in the image as the second word of an Apptainer
/// `%files` line: split and trimmed as the source is (see
/// [`apptainer_files_source`]) but not expanded (Apptainer joins it to the
/// image's root), so only whitespace other than a space, quotes, `{{` and
/// `bootstrap:` are refused; a path with a space is double-quoted.
pub fn apptainer_files_dest(p: &str) -> Result<String, FilesPathRefusal> {
    files_word(p)?;
    Ok(files_quoted(p.to_string()))
}

/// Why a glob cannot be one line of a `.dockerignore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternRefusal {
    /// A line feed (the file is read line by line) or an [`is_hidden`]
    /// character (NUL, `\r`, …).
    LineBreak,
    /// Empty or only whitespace: the reader skips such a line.
    Empty,
    /// Leading or trailing whitespace, which the reader strips.
    EdgeWhitespace,
    /// An odd run of backslashes at the end escapes nothing: the pattern does
    /// not compile.
    TrailingBackslash,
    /// BuildKit's pattern matcher would reject the glob when it reads the
    /// `.dockerignore` (an unclosed `[`, an escape its regular expression
    /// does not read as the character, a reversed range, …) or read it as
    /// another glob; the text says which ([`glob_problem`]).
    Malformed(&'static str),
}

impl fmt::Display for PatternRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PatternRefusal::LineBreak => {
                "contains a line break, NUL or an invisible character, which one line of .dockerignore cannot show as written"
            }
            PatternRefusal::Empty => "is empty, and .dockerignore skips an empty line",
            PatternRefusal::EdgeWhitespace => {
                "starts or ends with whitespace, which .dockerignore strips"
            }
            PatternRefusal::TrailingBackslash => {
                "ends in a backslash that escapes nothing, so the pattern does not compile"
            }
            PatternRefusal::Malformed(why) => why,
        })
    }
}

impl std::error::Error for PatternRefusal {}

/// One glob as a line of `.dockerignore`, read by BuildKit with
/// `moby/patternmatcher`'s `ignorefile.ReadAll`: a line starting with `#` is
/// a comment, surrounding whitespace is trimmed, a leading `!` makes the line
/// an exception (re-includes what it matches), and in the pattern a `\`
/// escapes the next character. Since an IR `ignore` entry is a glob kept out
/// of the context, a leading `#` or `!` is escaped (`\#notes`, `\!x`) so
/// that it matches a name starting with that character, and every other line
/// is written as is. `ReadAll` then cleans the path (`a//b/` → `a/b`,
/// `/x` → `x`), which does not change what it matches.
///
/// A `^` outside a bracket expression is written `\^`: the glob reads it as
/// itself either way, but `patternmatcher` copies it unescaped into the
/// regular expression it builds for a glob with a wildcard (`a^b*` becomes
/// `^a^b[^/]*$`, which matches nothing), and `\^` is the character there.
///
/// Errors: [`PatternRefusal`] for a line break or NUL, an empty pattern,
/// leading or trailing whitespace, an unpaired trailing backslash, or a glob
/// BuildKit would reject or misread ([`glob_problem`]).
pub fn dockerignore_pattern(p: &str) -> Result<String, PatternRefusal> {
    if is_unwritable(p) {
        return Err(PatternRefusal::LineBreak);
    }
    if p.trim().is_empty() {
        return Err(PatternRefusal::Empty);
    }
    if p.starts_with(char::is_whitespace) || p.ends_with(char::is_whitespace) {
        return Err(PatternRefusal::EdgeWhitespace);
    }
    if let Some(refusal) = glob_problem(p) {
        return Err(refusal);
    }
    let mut line = String::with_capacity(p.len() + 1);
    if p.starts_with(['#', '!']) {
        line.push('\\');
    }
    let mut chars = p.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                line.push(c);
                line.extend(chars.next());
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '^' if !in_class => line.push('\\'),
            _ => {}
        }
        line.push(c);
    }
    Ok(line)
}

/// Why BuildKit would reject the `.dockerignore` glob `p`, or read it as
/// another glob than Go's `filepath.Match` syntax says; `None` when it reads
/// `p` as written.
///
/// BuildKit reads `.dockerignore` with `moby/patternmatcher` (v0.6,
/// `patternmatcher.go`). `New` rejects a pattern for which
/// `filepath.Match(p, ".")` fails, and `Pattern.compile` turns each pattern
/// with a wildcard, a bracket or an escape into a Go regular expression
/// (RE2 syntax), copying `[`, `]` and every `\x` into it as they are and
/// `*`/`?` as `[^/]*`/`[^/]` wherever they stand; a regular expression that
/// does not compile fails the build (`filepath.ErrBadPattern`). So the rule
/// copied here is Go's `filepath.Match` grammar (`path/filepath/match.go`:
/// `'\\' c` escapes `c`; `'[' ['^'] { lo ['-' hi] } ']'`, non-empty, where
/// `lo` and `hi` are a character other than `\\`, `-`, `]`, or `\\` and one
/// character) plus what the regular expression changes:
/// - a `\\` must be followed by an ASCII character that is not a letter or
///   digit (RE2 reads `\.`, `\*`, `\\`, `\ ` as the character, but `\d` as a
///   digit, `\n` as a newline, and `\q` or `\é` not at all);
/// - in a bracket expression, `*`, `?` and `[` must be escaped (`[\*]`):
///   `compile` would put `[^/]*` inside the class, and `[:` starts a POSIX
///   class in RE2;
/// - a range may not run backwards (`[z-a]`: `filepath.Match` accepts it,
///   RE2 does not).
///
/// The cases of `patternmatcher_test.go` (`matchTests`, taken from Go's own
/// `filepath` tests) are this module's unit tests.
pub fn glob_problem(p: &str) -> Option<PatternRefusal> {
    const UNCLOSED: PatternRefusal = PatternRefusal::Malformed(
        "has a `[` without its `]`, so BuildKit rejects the .dockerignore (filepath.ErrBadPattern)",
    );
    const ESCAPE: PatternRefusal = PatternRefusal::Malformed(
        "has a `\\` before a letter, a digit or a non-ASCII character: BuildKit's pattern matcher reads `\\d`, `\\n`, … as regular-expression escapes, and rejects the others",
    );
    const EDGE: PatternRefusal = PatternRefusal::Malformed(
        "has a `[...]` that is empty or has a `-` or `]` where a character must be (`[]`, `[-x]`, `[x-]`, `[a-b-c]`), so BuildKit rejects the .dockerignore (filepath.ErrBadPattern)",
    );
    const WILD: PatternRefusal = PatternRefusal::Malformed(
        "has `*`, `?` or `[` inside `[...]`, which BuildKit's pattern matcher reads as a wildcard or a POSIX class there",
    );
    const REVERSED: PatternRefusal = PatternRefusal::Malformed(
        "has a range that runs backwards (such as `[z-a]`), which BuildKit's pattern matcher rejects",
    );
    let c: Vec<char> = p.chars().collect();
    let escapable = |e: char| e.is_ascii() && !e.is_ascii_alphanumeric();
    // One character of a bracket expression at `i`: (the character, the index after it).
    let class_char = |i: usize| -> Result<(char, usize), PatternRefusal> {
        match c.get(i) {
            None => Err(UNCLOSED),
            Some('-' | ']') => Err(EDGE),
            Some('*' | '?' | '[') => Err(WILD),
            Some('\\') => match c.get(i + 1) {
                None => Err(UNCLOSED),
                Some(&e) if escapable(e) => Ok((e, i + 2)),
                Some(_) => Err(ESCAPE),
            },
            Some(&ch) => Ok((ch, i + 1)),
        }
    };
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '\\' => match c.get(i + 1) {
                None => return Some(PatternRefusal::TrailingBackslash),
                Some(&e) if escapable(e) => i += 2,
                Some(_) => return Some(ESCAPE),
            },
            '[' => {
                i += 1;
                if c.get(i) == Some(&'^') {
                    i += 1;
                }
                let mut ranges = 0;
                loop {
                    if ranges > 0 && c.get(i) == Some(&']') {
                        i += 1;
                        break;
                    }
                    let (lo, next) = match class_char(i) {
                        Ok(x) => x,
                        Err(e) => return Some(e),
                    };
                    i = next;
                    if c.get(i) == Some(&'-') {
                        let (hi, next) = match class_char(i + 1) {
                            Ok(x) => x,
                            Err(e) => return Some(e),
                        };
                        if hi < lo {
                            return Some(REVERSED);
                        }
                        i = next;
                    }
                    if i >= c.len() {
                        return Some(UNCLOSED);
                    }
                    ranges += 1;
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Text for the inside of a one-line `#` comment: tab, line feed and every
/// [`is_hidden`] character are written as Rust-style escapes (`\n`,
/// `\u{2028}`, `\u{202e}`), so a value can neither end the comment, start an
/// instruction, nor show a reader something else. Everything else is kept.
pub fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\t' || c == '\n' || is_hidden(c) {
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
        "a\\\"b",
        "a\\\\\"b",
        "\\\"",
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
        "trailing\\\\",
        "\\",
        "trailing\\   ",
        "glob*?[a]",
        "semi;colon&amp|pipe>out<in",
        "<<EOF",
        "2<<EOF",
        "~user",
        "#hash",
        "-dash",
        "--network=host --security=insecure",
        "!bang",
        "%s %% {{ x }}",
        "ünïcödé ✓ 模型",
        "emoji 🚀",
        "numpy>=1.2,<2",
        "torch[cuda]",
        "\u{2028}sep\u{85}nel",
        "\u{b}vt\u{c}ff\u{1b}esc",
        "\u{feff}bom",
        "{{x}}",
        "{{{ a }}}",
        "%post",
        "Bootstrap: docker",
        "x BOOTSTRAP:y",
        "a\n%post\nbootstrap: x\n{{ y }}",
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

    /// No quoted word gives an Apptainer definition file's parser something
    /// to read: no `{{`, no `bootstrap:`, no word starting with `%`, and
    /// every physical line after the first starts with `"`.
    #[test]
    fn shell_words_are_inert_in_definition_files() {
        assert_eq!(shell("%x"), "'%x'");
        assert_eq!(shell("50%"), "50%");
        assert_eq!(shell("{{ x }}"), "'{''{ x }}'");
        assert_eq!(shell("{{{"), "'{''{''{'");
        assert_eq!(shell("Bootstrap:x"), "'Bootstrap'':x'");
        assert_eq!(shell("a\nb"), "'a'\"\n\"'b'");
        assert_eq!(shell_quoted("v"), "'v'");
        for s in NASTY {
            for q in [shell(s), shell_quoted(s)] {
                assert!(!q.contains("{{"), "{q:?}");
                assert!(!q.to_ascii_lowercase().contains("bootstrap:"), "{q:?}");
                assert!(!q.starts_with('%'), "{q:?}");
                for line in q.split('\n').skip(1) {
                    assert!(line.starts_with('"'), "{q:?}");
                }
            }
        }
    }

    #[test]
    fn apptainer_files_paths() {
        assert_eq!(apptainer_files_source("train.py").unwrap(), "train.py");
        assert_eq!(
            apptainer_files_source("my data/x").unwrap(),
            "\"my data/x\""
        );
        assert_eq!(apptainer_files_source("-rf").unwrap(), "./-rf");
        assert_eq!(apptainer_files_source("#x").unwrap(), "./#x");
        assert_eq!(apptainer_files_source("%post").unwrap(), "./%post");
        assert_eq!(apptainer_files_source("~x").unwrap(), "./~x");
        assert_eq!(apptainer_files_source("a(b)&c;d").unwrap(), "a(b)&c;d");
        for (bad, why) in [
            ("", FilesPathRefusal::Empty),
            ("a\tb", FilesPathRefusal::Whitespace),
            ("a\nb", FilesPathRefusal::Whitespace),
            ("a\u{a0}b", FilesPathRefusal::Whitespace),
            ("a\rb", FilesPathRefusal::Whitespace),
            ("a\"b", FilesPathRefusal::Quote),
            ("it's", FilesPathRefusal::Quote),
            ("req[1].txt", FilesPathRefusal::Expansion('[')),
            ("a*", FilesPathRefusal::Expansion('*')),
            ("{a,b}", FilesPathRefusal::Expansion('{')),
            ("$HOME", FilesPathRefusal::Expansion('$')),
            ("a\\b", FilesPathRefusal::Expansion('\\')),
            ("bootstrap:x", FilesPathRefusal::Syntax),
        ] {
            assert_eq!(apptainer_files_source(bad), Err(why), "{bad:?}");
        }
        assert_eq!(apptainer_files_dest("/w/a b").unwrap(), "\"/w/a b\"");
        assert_eq!(apptainer_files_dest("/w/$x*{a}").unwrap(), "/w/$x*{a}");
        assert_eq!(
            apptainer_files_dest("/w/{{ x }}"),
            Err(FilesPathRefusal::Syntax)
        );
        assert_eq!(apptainer_files_dest("/w/'"), Err(FilesPathRefusal::Quote));
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
    fn shell_lines_rebuild_the_script_with_printf() {
        assert_eq!(shell_lines("echo hi").unwrap(), ["'echo hi'"]);
        assert_eq!(shell_lines("a\nb\n").unwrap(), ["'a'", "'b'"]);
        assert_eq!(shell_lines("a\n\nb").unwrap(), ["'a'", "''", "'b'"]);
        assert_eq!(shell_lines("it's").unwrap(), [r"'it'\''s'"]);
        assert_eq!(shell_lines("").unwrap(), ["''"]);
        assert_eq!(shell_lines("a\0b"), Err(Unrepresentable));
        // A carriage return, an escape, a bidirectional override: a reader
        // of the Dockerfile would not see the script as it runs.
        for hidden in ["crlf\r\nline\r\n", "a\u{1b}[2Jb", "x\u{202e}y", "\u{2028}"] {
            assert_eq!(shell_lines(hidden), Err(Unrepresentable), "{hidden:?}");
        }
        let mut scripts: Vec<String> = NASTY
            .iter()
            .filter(|s| !s.chars().any(is_hidden))
            .map(|s| s.to_string())
            .collect();
        scripts.push(scripts.join("\n"));
        scripts.push("if true; then\n  echo \"$HOME\" \\\n    x\nfi\n".into());
        scripts.push("cat <<EOF > /x\nbody\nEOF\n".into());
        scripts.push("tab\tand\nlines\n".into());
        for script in scripts {
            let words = shell_lines(&script).unwrap();
            for w in &words {
                assert!(!w.contains('\n'), "{w:?}");
            }
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("printf '%s\\n' {}", words.join(" ")))
                .output()
                .unwrap();
            assert!(out.status.success());
            let want = if script.ends_with('\n') {
                script.clone()
            } else {
                format!("{script}\n")
            };
            assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{script:?}");
        }
    }

    #[test]
    fn json_string_escapes_and_parses() {
        assert_eq!(json_string("python"), "\"python\"");
        assert_eq!(json_string("a\"b\\c"), r#""a\u0022b\u005cc""#);
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

    /// Reads one word the way BuildKit's lexer does (`shell/lex.go`,
    /// `processStopOn` with the default escape token, no variables): quotes
    /// removed, `\` outside quotes escapes any character, inside double
    /// quotes only `"`, `$` and `\`. Panics on an unescaped `$` (it would be
    /// expanded) or an unterminated quote.
    fn buildkit_word(w: &str) -> String {
        // Go's text/scanner skips a byte order mark that starts its input.
        let w = w.strip_prefix('\u{feff}').unwrap_or(w);
        let mut out = String::new();
        let mut it = w.chars().peekable();
        while let Some(c) = it.next() {
            match c {
                '\'' => loop {
                    match it.next().expect("unterminated '") {
                        '\'' => break,
                        c => out.push(c),
                    }
                },
                '"' => loop {
                    match it.next().expect("unterminated \"") {
                        '"' => break,
                        '\\' if matches!(it.peek(), Some('"' | '$' | '\\')) => {
                            out.push(it.next().unwrap())
                        }
                        '$' => panic!("unescaped $ in {w}"),
                        c => out.push(c),
                    }
                },
                '\\' => {
                    if let Some(n) = it.next() {
                        out.push(n)
                    }
                }
                '$' => panic!("unescaped $ in {w}"),
                c => out.push(c),
            }
        }
        out
    }

    /// True when hadolint's pair parser (`stringWithEscaped` in
    /// `Language.Docker.Parser.Prelude`) would fail on `text`: inside a
    /// quoted segment, a backslash run is literal unless a quote of that
    /// segment's kind follows, and then it must be exactly one backslash.
    fn hadolint_trips(text: &str) -> bool {
        let c: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < c.len() {
            let quote = c[i];
            if quote != '"' && quote != '\'' {
                i += 1; // unquoted: only our trailing `\\` runs
                continue;
            }
            i += 1;
            loop {
                let Some(&ch) = c.get(i) else { return true };
                if ch == quote {
                    i += 1;
                    break;
                }
                if ch == '\\' {
                    let run = c[i..].iter().take_while(|&&x| x == '\\').count();
                    if c.get(i + run) == Some(&quote) && run != 1 {
                        return true;
                    }
                    // `\` + quote is an escaped quote; other runs literal.
                    i += run + usize::from(run == 1 && c.get(i + 1) == Some(&quote));
                    continue;
                }
                i += 1;
            }
        }
        false
    }

    #[test]
    fn dockerfile_pair_escapes() {
        let p = |s: &str| dockerfile_pair(s).unwrap();
        assert_eq!(p("v").text, "\"v\"");
        assert_eq!(p("a\"b$c`e'f").text, r#""a\"b\$c`e'f""#);
        assert_eq!(p("").text, "\"\"");
        assert_eq!(p("a\\b").text, r#""a\\b""#);
        assert_eq!(p("a\\\"b").text, r#""a"'\"'"b""#);
        assert_eq!(p("\\\"").text, r#"'\"'"#);
        assert_eq!(
            p("C:\\tools\\"),
            PairText {
                text: r#""C:\\tools"\\"#.into(),
                ends_line: true
            }
        );
        assert_eq!(p("\\").text, r#"""\\"#);
        assert!(!p("x").ends_line);
        assert_eq!(dockerfile_pair("a\nb"), Err(Unrepresentable));
        assert_eq!(dockerfile_pair("a\rb"), Err(Unrepresentable));
        assert_eq!(dockerfile_pair("a\0b"), Err(Unrepresentable));
        for s in NASTY.iter().filter(|s| !is_unwritable(s)) {
            let q = p(s);
            assert_eq!(&buildkit_word(&q.text), s, "{q:?}");
            assert!(!hadolint_trips(&q.text), "{s:?} → {q:?}");
            assert_eq!(q.ends_line, s.ends_with('\\'), "{s:?}");
            if !q.ends_line {
                assert!(!q.text.ends_with('\\'), "never a continuation");
            }
        }
    }

    #[test]
    fn dockerfile_word_and_args() {
        assert_eq!(dockerfile_word("/workspace").unwrap(), "/workspace");
        assert_eq!(dockerfile_word("/my dir").unwrap(), "\"/my dir\"");
        assert_eq!(dockerfile_word("/a$b").unwrap(), r#""/a\$b""#);
        assert_eq!(dockerfile_word("-x").unwrap(), "\"-x\"");
        assert_eq!(dockerfile_word("/a\\").unwrap(), r#""/a\\""#);
        assert_eq!(dockerfile_word("a\nb"), Err(Unrepresentable));
        for s in NASTY.iter().filter(|s| !is_unwritable(s)) {
            let w = dockerfile_word(s).unwrap();
            assert_eq!(&buildkit_word(&w), s);
        }
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
            r#"["a\u005c$b\u005c'c\u005c\u0022d\u005c\u005c", "/x"]"#
        );
        assert_eq!(dockerfile_args(&["[x]", "/y"]).unwrap(), r#"["[x]", "/y"]"#);
        assert_eq!(
            dockerfile_args(&["<<EOF", "/y"]).unwrap(),
            r#"["<<EOF", "/y"]"#
        );
        assert_eq!(
            dockerfile_args(&["--from=x", "/y"]).unwrap(),
            r#"["--from=x", "/y"]"#
        );
        assert_eq!(dockerfile_args(&["a\nb", "/y"]), Err(Unrepresentable));
        // The JSON form always parses and lexes back, whatever the words.
        let words: Vec<&str> = NASTY
            .iter()
            .copied()
            .filter(|s| !is_unwritable(s))
            .collect();
        let form = dockerfile_args(&words).unwrap();
        let parsed: Vec<String> = serde_json::from_str(&form).unwrap();
        let lexed: Vec<String> = parsed.iter().map(|w| buildkit_word(w)).collect();
        assert_eq!(lexed, words);
    }

    #[test]
    fn bare_words_are_inert() {
        for w in ["debian:12.5", "/workspace", "https://h/x?a=1&b=2", "a=b"] {
            assert!(is_dockerfile_bare(w), "{w}");
        }
        for w in [
            "", "-x", "a b", "<<EOF", "2<<EOF", "a*", "a[1]", "#x", "a$b", "a\\b", "'", "\"", "é",
        ] {
            assert!(!is_dockerfile_bare(w), "{w}");
        }
    }

    #[test]
    fn dockerignore_patterns() {
        assert_eq!(dockerignore_pattern("secrets/").unwrap(), "secrets/");
        assert_eq!(dockerignore_pattern("**/*.ckpt").unwrap(), "**/*.ckpt");
        assert_eq!(dockerignore_pattern("#notes").unwrap(), "\\#notes");
        assert_eq!(dockerignore_pattern("!keep").unwrap(), "\\!keep");
        assert_eq!(dockerignore_pattern("a#b!c").unwrap(), "a#b!c");
        assert_eq!(dockerignore_pattern("a\\\\").unwrap(), "a\\\\");
        assert_eq!(
            dockerignore_pattern("a\nsecrets"),
            Err(PatternRefusal::LineBreak)
        );
        assert_eq!(dockerignore_pattern("a\rb"), Err(PatternRefusal::LineBreak));
        assert_eq!(dockerignore_pattern(""), Err(PatternRefusal::Empty));
        assert_eq!(dockerignore_pattern(" \t"), Err(PatternRefusal::Empty));
        assert_eq!(
            dockerignore_pattern(" x"),
            Err(PatternRefusal::EdgeWhitespace)
        );
        assert_eq!(
            dockerignore_pattern("x\u{a0}"),
            Err(PatternRefusal::EdgeWhitespace)
        );
        assert_eq!(
            dockerignore_pattern("x\\"),
            Err(PatternRefusal::TrailingBackslash)
        );
        assert_eq!(
            dockerignore_pattern("x\\\\\\"),
            Err(PatternRefusal::TrailingBackslash)
        );
    }

    /// `matchTests` of moby/patternmatcher's `patternmatcher_test.go`
    /// (taken from Go's `path/filepath` tests): the patterns it expects
    /// `filepath.ErrBadPattern` for are refused, the others accepted; plus
    /// what its regular expression cannot read.
    #[test]
    fn globs_patternmatcher_rejects_are_refused() {
        for ok in [
            "abc",
            "*",
            "*c",
            "a*",
            "a*/b",
            "a*b*c*d*e*/f",
            "a*b?c*x",
            "ab[c]",
            "ab[b-d]",
            "ab[e-g]",
            "ab[^c]",
            "ab[^b-d]",
            "ab[^e-g]",
            "a\\*b",
            "a?b",
            "a[^a]b",
            "a???b",
            "a[^a][^a][^a]b",
            "[a-ζ]*",
            "*[a-ζ]",
            "[\\]a]",
            "[\\-]",
            "[x\\-]",
            "[\\-x]",
            "*x",
            // patternmatcher's own cases
            "**",
            "**/",
            "dir/**",
            "**/dir2/*",
            "a[b-d]e",
            "a[^b-d]e",
            ".*",
            "abc.def",
            "a\\\\",
            "a(b)c/def",
            "a.|)$(}+{bc",
            "dist/*.whl",
            "x]",
            "[a-a]",
            "[\\*]",
            "a\\ b",
            "[!x]",
            "[a^]",
        ] {
            assert_eq!(glob_problem(ok), None, "{ok:?}");
        }
        // `[[]` is a class holding `[` for Go, but `[[:` starts a POSIX
        // class in RE2, so an unescaped `[` in a class is refused.
        for (bad, why) in [
            ("[]a]", EDGE_),
            ("[-]", EDGE_),
            ("[x-]", EDGE_),
            ("[-x]", EDGE_),
            ("\\", "trailing"),
            ("[a-b-c]", EDGE_),
            ("[", "unclosed"),
            ("[^", "unclosed"),
            ("[^bc", "unclosed"),
            ("a[", "unclosed"),
            ("[\\", "unclosed"),
            ("[a", "unclosed"),
            ("[a-", "unclosed"),
            ("[a-b", "unclosed"),
            ("x\\\\\\", "trailing"),
            ("\\d", "escape"),
            ("a\\q", "escape"),
            ("\\é", "escape"),
            ("[\\n]", "escape"),
            ("[z-a]", "backwards"),
            ("[*]", "wildcard"),
            ("[a?]", "wildcard"),
            ("[[:alpha:]]", "wildcard"),
            ("[[]", "wildcard"),
            ("[]]", EDGE_),
        ] {
            let got = glob_problem(bad).unwrap_or_else(|| panic!("{bad:?} accepted"));
            let text = got.to_string();
            let want = match why {
                "unclosed" => "without its `]`",
                "trailing" => "escapes nothing",
                "escape" => "before a letter",
                "backwards" => "backwards",
                "wildcard" => "inside `[...]`",
                _ => "empty or has a `-`",
            };
            assert!(text.contains(want), "{bad:?}: {text}");
        }
        assert_eq!(
            dockerignore_pattern("[").unwrap_err(),
            glob_problem("[").unwrap()
        );
    }

    const EDGE_: &str = "edge";

    #[test]
    fn caret_outside_a_class_is_escaped() {
        assert_eq!(dockerignore_pattern("a^b*").unwrap(), "a\\^b*");
        assert_eq!(dockerignore_pattern("[^a]^").unwrap(), "[^a]\\^");
        assert_eq!(dockerignore_pattern("[a^]").unwrap(), "[a^]");
        assert_eq!(dockerignore_pattern("\\^x").unwrap(), "\\^x");
        assert_eq!(dockerignore_pattern("!^").unwrap(), "\\!\\^");
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
