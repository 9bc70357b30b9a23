#!/usr/bin/env python3
"""Parse Dockerfiles with BuildKit's own parser and print what it reads.

Usage: parse-dockerfiles.py FILE...   (run with <repo>/.venv/bin/python, where
scripts/install-test-tools.sh installs the PyPI package `dockerfile`, the
Python bindings of moby/buildkit's frontend/dockerfile/parser).

Output: one JSON object per input file, one per line, in argument order.

For a Dockerfile (any name not ending in `.dockerignore`):

    {"file": PATH,
     "error": null | "the parser's message",        # e.g. unterminated heredoc
     "instructions": [
       {"cmd": "RUN",                # upper case
        "sub_cmd": null | "RUN",     # for ONBUILD
        "flags": ["--chown=1000"],   # leading --flags, as written
        "value": ["..."],            # the parser's arguments, quotes kept
        "json": false,               # exec/JSON form
        "original": "RUN ...",       # the logical line, continuations joined
        "start_line": 12, "end_line": 14,
        "heredocs": [{"name": "EOF", "file_descriptor": 0, "content": "..."}],
        "words": [...] | null,       # see below
        "shell_words": [...] | null  # see below
       }, ...]}

"words": for ENV, LABEL (keys and values alternate, as in "value"), COPY,
ADD, WORKDIR, USER, FROM and EXPOSE, each element of "value" after
BuildKit's word lexer (frontend/dockerfile/shell/lex.go, ProcessWord with
the default escape token and no build args): quotes removed, `\\` escapes
applied, a leading U+FEFF dropped (Go's text/scanner skips it). An element
in which the lexer would expand a variable (`$NAME`, `${...}`, `$1`, `$@`,
...) is null, and so is one it cannot lex (an unterminated quote). Other
instructions: null.

"shell_words": for a shell-form RUN (and shell-form CMD/ENTRYPOINT), the
words a POSIX shell splits the command into (Python's shlex in POSIX mode,
operators such as `&&`, `;`, `>` and `>&` as words of their own); null when
shlex cannot split it, and for the exec form.

For a file whose name ends in `.dockerignore`:

    {"file": PATH, "error": null | "...",
     "patterns": ["..."]}   # as moby/patternmatcher's ignorefile.ReadAll
                            # returns them: comments and blank lines
                            # skipped, whitespace trimmed, paths cleaned,
                            # a leading "!" kept

The process exits 0 even when a file fails to parse (its "error" says why);
it exits 2 on a usage error.
"""

import json
import shlex
import sys
import unicodedata

import dockerfile

LEXED = {"ENV", "LABEL", "COPY", "ADD", "WORKDIR", "USER", "FROM", "EXPOSE"}
SPECIAL_PARAMS = set("@*#?-$!0")
# Go's unicode.IsSpace.
GO_SPACE = set("\t\n\v\f\r \u0085\u00a0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)
}


class LexError(Exception):
    pass


class Expands(Exception):
    pass


def _dollar(s, i):
    """Raise Expands if the `$` at s[i] starts a variable (processDollar)."""
    if i + 1 >= len(s):
        return
    nxt = s[i + 1]
    cat = unicodedata.category(nxt)
    if nxt in "{_" or nxt in SPECIAL_PARAMS or cat == "Nd" or cat.startswith("L"):
        raise Expands()


def process_word(s):
    """BuildKit's ProcessWord for one word, without variables."""
    if s.startswith("\ufeff"):
        s = s[1:]
    out = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                raise LexError("unexpected end of statement while looking for matching single-quote")
            out.append(s[i + 1 : j])
            i = j + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise LexError("unexpected end of statement while looking for matching double-quote")
                c = s[i]
                if c == '"':
                    i += 1
                    break
                if c == "$":
                    _dollar(s, i)
                    out.append("$")
                    i += 1
                elif c == "\\":
                    if i + 1 < n and s[i + 1] in '"$\\':
                        out.append(s[i + 1])
                        i += 2
                    elif i + 1 >= n:
                        i += 1  # "Ignore \ at end of word"
                    else:
                        out.append("\\")
                        i += 1
                else:
                    out.append(c)
                    i += 1
        elif c == "$":
            _dollar(s, i)
            out.append("$")
            i += 1
        elif c == "\\":
            if i + 1 >= n:
                break  # an escape at the end is dropped
            out.append(s[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def lex_or_none(s):
    try:
        return process_word(s)
    except (LexError, Expands):
        return None


def shell_words(line):
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = ""  # no comments in the RUN lines sclc writes
        return list(lex)
    except ValueError:
        return None


def instruction(c):
    cmd = c.cmd.upper()
    value = list(c.value)
    words = None
    if cmd in LEXED:
        words = [lex_or_none(v) for v in value]
    sw = None
    if cmd in ("RUN", "CMD", "ENTRYPOINT") and not c.json and len(value) == 1:
        sw = shell_words(value[0])
    return {
        "cmd": cmd,
        "sub_cmd": c.sub_cmd,
        "flags": list(c.flags),
        "value": value,
        "json": bool(c.json),
        "original": c.original,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "heredocs": [
            {"name": h.name, "file_descriptor": h.file_descriptor, "content": h.content}
            for h in c.heredocs
        ],
        "words": words,
        "shell_words": sw,
    }


def go_trim_space(s):
    i, j = 0, len(s)
    while i < j and s[i] in GO_SPACE:
        i += 1
    while j > i and s[j - 1] in GO_SPACE:
        j -= 1
    return s[i:j]


def go_clean(path):
    """Go's path.Clean (filepath.Clean on Linux)."""
    if path == "":
        return "."
    rooted = path.startswith("/")
    parts = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(seg)
    out = "/".join(parts)
    if rooted:
        return "/" + out
    return out or "."


def read_dockerignore(text):
    """moby/patternmatcher ignorefile.ReadAll."""
    patterns = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]  # bufio.ScanLines drops one \r before \n
        if n == 0 and line.startswith("\ufeff"):
            line = line[1:]
        if line.startswith("#"):
            continue
        p = go_trim_space(line)
        if p == "":
            continue
        invert = p[0] == "!"
        if invert:
            p = go_trim_space(p[1:])
        if p:
            p = go_clean(p)
            if len(p) > 1 and p[0] == "/":
                p = p[1:]
        if invert:
            p = "!" + p
        patterns.append(p)
    return patterns


def parse(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        return {"file": path, "error": str(e)}
    if path.endswith(".dockerignore"):
        return {"file": path, "error": None, "patterns": read_dockerignore(text)}
    try:
        cmds = dockerfile.parse_string(text)
    except dockerfile.GoParseError as e:
        return {"file": path, "error": str(e), "instructions": []}
    return {"file": path, "error": None, "instructions": [instruction(c) for c in cmds]}


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for path in argv:
        sys.stdout.write(json.dumps(parse(path), ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
