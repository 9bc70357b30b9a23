//! What can be checked of a generated Dockerfile and `.dockerignore` without
//! a Dockerfile parser: that every instruction line was written by the
//! template and none by a value, one `FROM`, and every `ENV`/`LABEL` pair,
//! `RUN` and ignore pattern accounted for by the IR. The full parse (values
//! coming back as written) is `scripts/parse-dockerfiles.py`, BuildKit's
//! parser, run over the collected files at the end of a run.
//!
//! The line rules are BuildKit's (Dockerfile reference, "Format", "Parser
//! directives", "Here-Documents"; moby/buildkit `frontend/dockerfile/parser`):
//! a line whose first non-blank character is `#` is a comment (also inside a
//! continuation); a line that ends with the escape character (`\`, or the
//! `# escape=` directive's), possibly followed by spaces or tabs, continues
//! on the next line; a word `<<WORD`, `<<-WORD`, `<<"WORD"` or `<<'WORD'`
//! in `RUN`, `COPY` or `ADD` starts a here-document. `.dockerignore` is
//! moby's `ignorefile.ReadAll`: a line starting with `#` is a comment, the
//! others are trimmed of white space and empty ones skipped.

use scl_ir::{Asset, EnvSpec, VarValue};

/// Every instruction of the Dockerfile reference.
const INSTRUCTIONS: &[&str] = &[
    "ADD",
    "ARG",
    "CMD",
    "COPY",
    "ENTRYPOINT",
    "ENV",
    "EXPOSE",
    "FROM",
    "HEALTHCHECK",
    "LABEL",
    "MAINTAINER",
    "ONBUILD",
    "RUN",
    "SHELL",
    "STOPSIGNAL",
    "USER",
    "VOLUME",
    "WORKDIR",
];

/// The label sclc sets to the IR hash (its own value is refused).
const HASH_LABEL: &str = "dev.scl.ir.sha256";
/// The label the description goes to.
const DESCRIPTION_LABEL: &str = "org.opencontainers.image.description";

/// One logical instruction: the keyword (upper-cased), the rest of the
/// joined lines, and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub keyword: String,
    pub args: String,
    pub line: usize,
}

/// Splits a Dockerfile into instructions. Problems (a line no instruction
/// starts, a here-document, a control character) go to `problems`.
pub fn instructions(text: &str, problems: &mut Vec<String>) -> Vec<Instruction> {
    let mut escape = '\\';
    let mut out: Vec<Instruction> = Vec::new();
    let mut in_directives = true;
    let mut current: Option<Instruction> = None;
    for (i, c) in text.char_indices() {
        // C0 controls but tab and line feed: CR ends a line for some
        // readers and not for others, NUL ends a C string.
        if (c as u32) < 0x20 && c != '\n' && c != '\t' {
            problems.push(format!(
                "a control character U+{:04X} at byte {i}",
                c as u32
            ));
            break;
        }
    }
    for (n, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = line.trim_start_matches([' ', '\t']);
        if in_directives {
            if let Some(d) = trimmed.strip_prefix('#') {
                let d = d.trim();
                if let Some(v) = d.strip_prefix("escape=") {
                    escape = v.trim().chars().next().unwrap_or('\\');
                }
                if !d.contains('=') {
                    in_directives = false;
                }
                continue;
            }
            in_directives = false;
        }
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_none()) {
            continue;
        }
        let (body, continues) = {
            let t = line.trim_end_matches([' ', '\t']);
            match t.strip_suffix(escape) {
                Some(b) => (b, true),
                None => (line, false),
            }
        };
        match &mut current {
            Some(ins) => {
                ins.args.push(' ');
                ins.args.push_str(body.trim());
            }
            None => {
                let b = body.trim_start();
                let (kw, rest) = b.split_once([' ', '\t']).unwrap_or((b, ""));
                let keyword = kw.to_ascii_uppercase();
                if !INSTRUCTIONS.contains(&keyword.as_str()) {
                    problems.push(format!(
                        "line {}: `{}` starts no instruction (a value broke out of its line?)",
                        n + 1,
                        short(line)
                    ));
                }
                current = Some(Instruction {
                    keyword,
                    args: rest.trim().to_string(),
                    line: n + 1,
                });
            }
        }
        if !continues {
            finish(&mut current, &mut out, problems);
        }
    }
    finish(&mut current, &mut out, problems);
    out
}

/// Ends the current instruction (a here-document in it is a problem: the
/// first one reported, before the lines it swallows).
fn finish(
    current: &mut Option<Instruction>,
    out: &mut Vec<Instruction>,
    problems: &mut Vec<String>,
) {
    if let Some(ins) = current.take() {
        if matches!(ins.keyword.as_str(), "RUN" | "COPY" | "ADD") && has_heredoc(&ins.args) {
            problems.push(format!(
                "line {}: a here-document in {} (Podman/buildah cannot read it; a value may swallow the lines after it)",
                ins.line, ins.keyword
            ));
        }
        out.push(ins);
    }
}

/// Whether a word of `args` starts a here-document (`<<EOF`, `2<<EOF`,
/// `<<-EOF`, `<<'EOF'`, `<<"EOF"`). As BuildKit's `heredocsFromLine`: the
/// words are split with their quotes kept (`RawQuotes`), and a word is a
/// here-document when it matches `^(\d*)<<(-?)([^<]*)$` with a name, so a
/// quoted word (`'<<EOF'`) is not one.
fn has_heredoc(args: &str) -> bool {
    words(args).iter().any(|w| {
        let w = w.trim_start_matches(|c: char| c.is_ascii_digit());
        w.strip_prefix("<<").is_some_and(|r| {
            let r = r.strip_prefix('-').unwrap_or(r);
            !r.contains('<')
                && r.trim_start_matches(['\'', '"'])
                    .starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    })
}

fn short(s: &str) -> String {
    let s: String = s.chars().take(60).collect();
    s.escape_debug().to_string()
}

/// The words of an `ENV`/`LABEL` argument list (`k=v k2="v 2"`), split at
/// unquoted blanks: quotes and the escape character keep a blank inside a
/// word (BuildKit's `parseWords`); quotes are kept in the words.
pub fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t') => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (Some(q), _) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some('\''), _) => cur.push(c),
            (_, '\\') => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The key of a `k=v` word, quotes and escapes removed.
fn key_of(word: &str) -> String {
    let mut key = String::new();
    let mut quote: Option<char> = None;
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '=') => break,
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (q, '\\') if q != Some('\'') => key.extend(chars.next()),
            _ => key.push(c),
        }
    }
    key
}

/// The problems of one generated Dockerfile for `spec`.
pub fn check_dockerfile(spec: &EnvSpec, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let ins = instructions(text, &mut problems);
    // The one ENV of a virtual environment, right after its RUN (constant:
    // `VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH`), is not the vars'.
    let is_venv_env = |n: usize| {
        let i = &ins[n];
        i.keyword == "ENV"
            && n.checked_sub(1).is_some_and(|p| {
                ins[p].keyword == "RUN" && ins[p].args == "python3 -m venv /opt/venv"
            })
            && i.args
                .replace("\\\n", " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                == ["VIRTUAL_ENV=/opt/venv", "PATH=/opt/venv/bin:$PATH"]
    };
    let count = |k: &str| {
        (0..ins.len())
            .filter(|&n| ins[n].keyword == k && !is_venv_env(n))
            .count()
    };
    // With `builder`, a build stage `FROM <builder> AS builder` may come
    // first (when there is something for pip to build).
    let staged = spec.builder.is_some()
        && ins
            .iter()
            .find(|i| i.keyword == "FROM")
            .is_some_and(|i| i.args.ends_with(" AS builder"));
    let froms = if staged { 2 } else { 1 };
    if count("FROM") != froms {
        problems.push(format!("{} FROM instructions, not {froms}", count("FROM")));
    }
    if let Some(first) = ins.iter().find(|i| i.keyword != "ARG") {
        if first.keyword != "FROM" {
            problems.push(format!(
                "the first instruction is {}, not FROM",
                first.keyword
            ));
        }
    }
    for k in [
        "ONBUILD",
        "SHELL",
        "HEALTHCHECK",
        "STOPSIGNAL",
        "MAINTAINER",
        "VOLUME",
        "ARG",
    ] {
        if count(k) > 0 {
            problems.push(format!(
                "a {k} instruction, which the template never writes"
            ));
        }
    }
    for k in [
        "USER",
        "WORKDIR",
        "EXPOSE",
        "ENTRYPOINT",
        "CMD",
        "ENV",
        "LABEL",
    ] {
        if count(k) > 1 {
            problems.push(format!(
                "{} {k} instructions, at most one expected",
                count(k)
            ));
        }
    }
    // RUN: each kind of step the IR can ask for, plus one each for the user,
    // the workdir's owner and a setup script.
    let hf = spec
        .assets
        .iter()
        .filter(|a| !matches!(a, Asset::Url { .. }))
        .count();
    let python = spec.python.as_ref().map_or(0, |_| 4);
    // A build stage: its system packages, venv, two wheel builds, and the
    // install of the wheels.
    let stage = if staged { 5 } else { 0 };
    let runs_max = 1 + 1 + hf + python + spec.setup.len() + 1 + 2 + stage;
    if count("RUN") > runs_max {
        problems.push(format!(
            "{} RUN instructions, at most {runs_max} accounted for by the IR",
            count("RUN")
        ));
    }
    let urls = spec.assets.len() - hf;
    if count("ADD") > urls {
        problems.push(format!(
            "{} ADD instructions for {urls} URL assets",
            count("ADD")
        ));
    }
    let copies_max =
        spec.files.len() + spec.python.as_ref().map_or(0, |p| p.requirements.len()) + 2;
    if count("COPY") > copies_max {
        problems.push(format!(
            "{} COPY instructions, at most {copies_max} accounted for by the IR",
            count("COPY")
        ));
    }
    // ENV: exactly the plain vars, by name, besides the one instruction of
    // a virtual environment (`VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH`,
    // written right after `RUN python3 -m venv /opt/venv`).
    let want_env: Vec<&std::sync::Arc<str>> = spec
        .vars
        .iter()
        .filter(|(_, v)| matches!(v, VarValue::Plain(_)))
        .map(|(k, _)| k)
        .collect();
    let got_env: Vec<String> = ins
        .iter()
        .enumerate()
        .filter(|(n, _)| !is_venv_env(*n))
        .map(|(_, i)| i)
        .filter(|i| i.keyword == "ENV")
        .flat_map(|i| words(&i.args))
        .map(|w| key_of(&w))
        .collect();
    let mut got_sorted = got_env.clone();
    got_sorted.sort();
    if got_sorted.iter().map(String::as_str).collect::<Vec<_>>()
        != want_env.iter().map(|k| &***k).collect::<Vec<&str>>()
    {
        problems.push(format!(
            "ENV sets {:?}, the IR's plain vars are {:?}",
            got_env, want_env
        ));
    }
    // LABEL: every IR label (but the reserved one), the description, the hash.
    let got_labels: Vec<String> = ins
        .iter()
        .filter(|i| i.keyword == "LABEL")
        .flat_map(|i| words(&i.args))
        .map(|w| key_of(&w))
        .collect();
    let mut want: Vec<String> = spec
        .labels
        .keys()
        .filter(|k| &***k != HASH_LABEL)
        .map(|k| k.to_string())
        .collect();
    if spec.description.is_some() && !spec.labels.contains_key(DESCRIPTION_LABEL) {
        want.push(DESCRIPTION_LABEL.into());
    }
    want.push(HASH_LABEL.into());
    want.sort();
    let mut got = got_labels.clone();
    got.sort();
    if got != want {
        problems.push(format!("LABEL sets {got_labels:?}, expected {want:?}"));
    }
    // A value never becomes options: of a RUN (`RUN --network=host …`), or
    // of the command it is an argument of (`apt-get install -o …`) unless
    // a `--` ends the options first.
    for i in ins.iter().filter(|i| i.keyword == "RUN") {
        // The one flag sclc writes: a build secret's mount, whose id is
        // `[A-Za-z0-9_.-]+` (the backend refuses any other).
        // And the bind mount of the build stage's wheels (a constant).
        let plain = i
            .args
            .strip_prefix(
                "--mount=type=bind,from=builder,source=/tmp/scl/wheels,target=/tmp/scl/wheels ",
            )
            .unwrap_or(&i.args);
        let args = match plain
            .strip_prefix("--mount=type=secret,id=")
            .and_then(|r| r.split_once(",required=true "))
        {
            Some((id, rest))
                if !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) =>
            {
                rest
            }
            _ => plain,
        };
        if args.starts_with("--") {
            problems.push(format!(
                "line {}: RUN {}: a value became RUN flags",
                i.line,
                short(&i.args)
            ));
        }
    }
    for v in dash_values(spec) {
        for i in ins.iter().filter(|i| i.keyword == "RUN") {
            let mut ended = false;
            for w in i.args.split_whitespace() {
                if matches!(w, "&&" | "||" | ";" | "|") {
                    ended = false;
                } else if w == "--" {
                    ended = true;
                } else if !ended && w.trim_matches(['\'', '"']) == v {
                    problems.push(format!(
                        "line {}: the value {v:?} reaches a command as an option (no `--` before it)",
                        i.line
                    ));
                }
            }
        }
    }
    // System packages with no character that needs quoting appear as written.
    if let Some(sys) = &spec.system {
        for p in &sys.packages {
            let plain = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.:=/_~".contains(c));
            if plain
                && !ins
                    .iter()
                    .any(|i| i.keyword == "RUN" && i.args.contains(&**p))
            {
                problems.push(format!("system package {p:?} is in no RUN"));
            }
        }
    }
    problems
}

/// The IR's values that begin with `-` and are arguments of a command:
/// system, Python and conda packages, conda channels, the user name,
/// Hugging Face repos, revisions and file names.
fn dash_values(spec: &EnvSpec) -> Vec<String> {
    let mut all: Vec<&str> = Vec::new();
    if let Some(s) = &spec.system {
        all.extend(s.packages.iter().map(|p| &**p));
    }
    if let Some(p) = &spec.python {
        all.extend(p.packages.iter().map(|p| &**p));
    }
    if let Some(c) = &spec.conda {
        all.extend(c.channels.iter().map(String::as_str));
        all.extend(c.packages.iter().map(|p| &**p));
    }
    if let Some(u) = &spec.user {
        all.push(&u.name);
    }
    let assets = serde_json::to_value(&spec.assets).unwrap_or_default();
    let mut strings = Vec::new();
    collect_strings(&assets, &mut strings);
    let mut out: Vec<String> = all.into_iter().map(str::to_string).chain(strings).collect();
    out.retain(|v| v.starts_with('-') && v.len() > 1 && !v.contains(char::is_whitespace));
    out.sort();
    out.dedup();
    out
}

fn collect_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// The patterns of a `.dockerignore` as moby reads them.
pub fn ignore_patterns(text: &str) -> Vec<String> {
    text.split('\n')
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The problems of one generated `.dockerignore` for `spec`: one pattern per
/// IR pattern, none lost to a comment or a line break.
pub fn check_dockerignore(spec: &EnvSpec, text: &str) -> Vec<String> {
    let got = ignore_patterns(text);
    let want: Vec<&String> = spec
        .ignore
        .iter()
        .filter(|p| !p.trim().is_empty())
        .collect();
    if got.len() != want.len() {
        return vec![format!(
            "{} patterns read back from .dockerignore for the IR's {} ({:?} vs {:?})",
            got.len(),
            want.len(),
            got,
            want
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_comment_and_heredoc() {
        let mut p = Vec::new();
        let ins = instructions(
            "# syntax=docker/dockerfile:1.7\nFROM x\nRUN a \\  \n# c\n  b\nRUN <<'EOF'\nx\nEOF\n",
            &mut p,
        );
        let kws: Vec<&str> = ins.iter().map(|i| i.keyword.as_str()).collect();
        assert_eq!(kws, ["FROM", "RUN", "RUN", "X", "EOF"]);
        assert_eq!(ins[1].args, "a b");
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("here-document"), "{p:?}");
        // Quoted, it is a word like any other (BuildKit keeps the quotes
        // when it looks for here-documents).
        let mut p = Vec::new();
        instructions("FROM x\nRUN printf '%s\\n' '<<EOF' 'a <<EOF'\n", &mut p);
        assert!(p.is_empty(), "{p:?}");
        assert!(has_heredoc("cat 2<<EOF") && has_heredoc("cat <<-\"E\""));
    }

    #[test]
    fn words_and_keys() {
        let w = words(r#"A=1 "B C"="x y" D='a b' E=a\ b"#);
        assert_eq!(w.len(), 4, "{w:?}");
        let k: Vec<String> = w.iter().map(|w| key_of(w)).collect();
        assert_eq!(k, ["A", "B C", "D", "E"]);
    }

    #[test]
    fn ignore_comments_and_blanks() {
        assert_eq!(
            ignore_patterns("# gen\n a \n\n#x\nb\n"),
            vec!["a".to_string(), "b".to_string()]
        );
    }
}
