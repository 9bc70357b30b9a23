//! Annotated fixtures, run in-process against `Analysis` (the format of
//! rust-analyzer's and ty's tests). A fixture is one text file:
//!
//! ```text
//! // Anything before the first file is a description, and `//@` directives:
//! //@ root: /ws                       the workspace root (default /ws)
//! //@ set: a.gpus=2                   a `--set` flag for the first file
//! //@ diagnostics                     check diagnostics (also without annotations: none expected)
//! //@ allow-errors                    without `diagnostics`, errors are allowed (else they fail the fixture)
//! //@ check: /ws/main.env.scl         the files checked (default: every file)
//! //@ completions: memory gpu         the completion labels at the cursor, in order
//! //@ hover: let image_name           the hover kind and name at the cursor
//! //@ hover-doc: The image.           …and its doc comment
//! //@ type: [String]                  the static type of the expression at the cursor
//! //@ definition: none                no definition at the cursor
//! //@ hover-value: 8                  the hover's value
//! //@ hover-chain: train @ /ws/main.env.scl:6:3 = 8 | base @ /ws/base.env.scl:3:3 = 4
//!   (a link that appends to the next one, `+=`, ends with ` (extends)`)
//! //                                  the hover's chain, exactly (`= ?`: no value)
//! //@ rename: gpus                    rename at the cursor: the edits are the `edit` annotations
//! //@ rename-error: `x` is a keyword  …or this error
//! //@ prepare-rename-error: a schema field cannot be renamed
//! //@ actions: *Replace `a` with `b` | Add `import "std/x" as x`
//! //                                  the code action titles at the cursor, in order (`*`: preferred)
//! //@ apply: Replace `a` with `b`     apply that action; `(after)` files are the texts expected
//! //- /ws/main.env.scl (after)        the text after `apply` or `rename` (annotation lines ignored)
//! //@ expect <command-line>:1:9 E0312: message    a diagnostic about a `--set` flag
//! //- /ws/main.env.scl                a file, written to an in-memory file system
//! env app extends lib.ba$0se {        `$0`: the cursor (removed from the text)
//! //              ^^^^ E0301: msg     an annotation: under the line above (the
//! //                                  nearest line that is not an annotation), carets
//! //                                  at its columns (characters), then what is there
//! //- /ws/lib.env.scl (overlay)       an editor buffer over the disk text
//! //^file def                         at the start of the file (an empty span)
//! ```
//!
//! An annotation is `CODE: message` (a diagnostic: the diagnostics of
//! checking every file must be exactly the annotated ones), `def` (the
//! definition at the cursor), `ref` (the references at the cursor, the
//! declaration included: exactly these), `symbol KIND` (the document
//! symbols of that file, children included: exactly these), or `edit` (the
//! edits of `rename`: exactly these). A span is drawn
//! on its first line; an empty span as one caret.
//!
//! The runner test runs every `tests/fixtures/*.fixture`; the runner is
//! itself tested with `tests/fixtures/wrong/*.fixture`, each of which must
//! fail.

use scl_ide::{AnalysisHost, FileId, MemorySystem, CMDLINE};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct FileSpec {
    path: PathBuf,
    text: String,
    overlay: bool,
    /// An expected text after `apply`/`rename`, not a file.
    after: bool,
}

#[derive(Default)]
struct Fixture {
    directives: Vec<(String, String)>,
    files: Vec<FileSpec>,
    /// (index in `files`, byte offset)
    cursor: Option<(usize, u32)>,
}

fn parse_fixture(src: &str) -> Result<Fixture, String> {
    let mut fx = Fixture::default();
    for line in src.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if let Some(h) = bare.strip_prefix("//- ") {
            let (path, overlay) = match h.trim().strip_suffix("(overlay)") {
                Some(p) => (p.trim(), true),
                None => (h.trim(), false),
            };
            let (path, after) = match path.strip_suffix("(after)") {
                Some(p) => (p.trim(), true),
                None => (path, false),
            };
            fx.files.push(FileSpec {
                path: PathBuf::from(path),
                text: String::new(),
                overlay,
                after,
            });
            continue;
        }
        let n = fx.files.len();
        match fx.files.last_mut() {
            None => {
                if let Some(d) = bare.strip_prefix("//@ ") {
                    // `KEY: VALUE` or `KEY VALUE`: the key is the first word.
                    let end = d.find([':', ' ']).unwrap_or(d.len());
                    let v = d[end..].strip_prefix(':').unwrap_or(&d[end..]);
                    fx.directives
                        .push((d[..end].to_string(), v.trim().to_string()));
                }
            }
            Some(f) => {
                if let Some(i) = line.find("$0") {
                    if fx.cursor.is_some() {
                        return Err("two cursors `$0`".into());
                    }
                    fx.cursor = Some((n - 1, (f.text.len() + i) as u32));
                    f.text.push_str(&line.replacen("$0", "", 1));
                } else {
                    f.text.push_str(line);
                }
            }
        }
    }
    if fx.files.iter().all(|f| f.after) {
        return Err("no file (`//- /path`)".into());
    }
    if let Some((i, _)) = fx.cursor {
        if fx.files[i].after {
            return Err("a cursor `$0` in an `(after)` text".into());
        }
    }
    Ok(fx)
}

/// An expected or actual annotation: the file, the 0-based line, the
/// character column and width (`None`: the start of the file), and the text.
type Ann = (PathBuf, Option<(usize, usize, usize)>, String);

/// The annotations of a file's text.
fn annotations(path: &Path, text: &str) -> Vec<Ann> {
    let mut out = Vec::new();
    let mut target: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("//^file ") {
            out.push((path.to_path_buf(), None, rest.trim().to_string()));
            continue;
        }
        let is_ann =
            t.starts_with("//") && t[2..].trim_start().starts_with('^') && target.is_some();
        if is_ann {
            let chars: Vec<char> = line.chars().collect();
            let col = chars.iter().position(|c| *c == '^').unwrap();
            let width = chars[col..].iter().take_while(|c| **c == '^').count();
            let rest: String = chars[col + width..].iter().collect();
            out.push((
                path.to_path_buf(),
                Some((target.unwrap(), col, width)),
                rest.trim().to_string(),
            ));
        } else {
            target = Some(i);
        }
    }
    out
}

/// The annotation a span of `text` is drawn as.
fn draw(path: &Path, text: &str, start: u32, end: u32, what: String) -> Ann {
    if start == 0 && end == 0 {
        return (path.to_path_buf(), None, what);
    }
    let ix = scl_ide::LineIndex::new(text);
    let (l, c) = ix.line_col(text, start as usize);
    let (el, ec) = ix.line_col(text, end as usize);
    let width = if el != l {
        // To the end of the first line.
        let line = text.lines().nth(l - 1).unwrap_or("");
        line.chars().count() + 1 - c
    } else {
        ec - c
    };
    (path.to_path_buf(), Some((l - 1, c - 1, width.max(1))), what)
}

fn show(anns: &BTreeSet<Ann>) -> String {
    anns.iter()
        .map(|(p, at, t)| match at {
            Some((l, c, w)) => format!("  {}:{}:{} (width {w}) {t}", p.display(), l + 1, c + 1),
            None => format!("  {}:^file {t}", p.display()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compare(what: &str, want: BTreeSet<Ann>, got: BTreeSet<Ann>) -> Result<(), String> {
    if want == got {
        return Ok(());
    }
    let missing: BTreeSet<Ann> = want.difference(&got).cloned().collect();
    let extra: BTreeSet<Ann> = got.difference(&want).cloned().collect();
    Err(format!(
        "{what}: annotated but not found:\n{}\nfound but not annotated:\n{}",
        show(&missing),
        show(&extra)
    ))
}

fn run_fixture(src: &str) -> Result<(), String> {
    let fx = parse_fixture(src)?;
    fn directive<'a>(fx: &'a Fixture, k: &'a str) -> impl Iterator<Item = &'a str> {
        fx.directives
            .iter()
            .filter(move |(dk, _)| dk == k)
            .map(|(_, v)| v.as_str())
    }
    let directive = |k: &'static str| directive(&fx, k);
    let root = directive("root").next().unwrap_or("/ws").to_string();
    let sys = MemorySystem::new();
    sys.mkdir(&root);
    sys.set_current_dir(&root);
    let afters: Vec<&FileSpec> = fx.files.iter().filter(|f| f.after).collect();
    let files: Vec<&FileSpec> = fx.files.iter().filter(|f| !f.after).collect();
    for f in files.iter().filter(|f| !f.overlay) {
        sys.write(&f.path, &f.text);
    }
    let mut host = AnalysisHost::new(Arc::new(sys), Path::new(&root), None);
    for f in files.iter().filter(|f| f.overlay) {
        host.set_overlay(&f.path, &f.text);
    }
    // The text analyzed: an overlay's where there is one.
    let effective = |p: &Path| -> &FileSpec {
        files
            .iter()
            .rev()
            .find(|f| f.path == p && f.overlay)
            .or_else(|| files.iter().find(|f| f.path == p))
            .unwrap()
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for f in &files {
        if !paths.contains(&f.path) {
            paths.push(f.path.clone());
        }
    }
    let first = host.file(&paths[0]);
    let flags: Vec<String> = directive("set").map(String::from).collect();
    let mut diags = host.set_overrides(first, &flags);
    let a = host.analysis();
    let ids: Vec<FileId> = paths.iter().map(|p| a.file(p)).collect();
    let mut expected: Vec<Ann> = Vec::new();
    for p in &paths {
        expected.extend(annotations(p, &effective(p).text));
    }
    let is_diag = |t: &str| {
        t.len() > 6 && t.as_bytes()[5] == b':' && (t.starts_with('E') || t.starts_with('W'))
    };
    let cursor = fx.cursor.map(|(i, off)| {
        let p = &fx.files[i].path;
        (a.file(p), off)
    });
    let mut errors = Vec::new();

    // Diagnostics.
    let want: BTreeSet<Ann> = expected.iter().filter(|x| is_diag(&x.2)).cloned().collect();
    let want_cmdline: BTreeSet<String> = directive("expect").map(String::from).collect();
    if src.contains("//@ expect") && want_cmdline.is_empty() {
        return Err("an `expect` directive that was not read".into());
    }
    if !want.is_empty() || !want_cmdline.is_empty() || directive("diagnostics").next().is_some() {
        // The files checked: those named with `check`, else every file.
        let roots: Vec<FileId> = match directive("check").next() {
            Some(_) => directive("check").map(|p| a.file(Path::new(p))).collect(),
            None => ids.clone(),
        };
        diags.extend(a.check(&roots));
        let mut got = BTreeSet::new();
        let mut got_cmdline = BTreeSet::new();
        for d in &diags {
            let what = format!("{}: {}", d.code, d.message);
            if &*d.at.file == CMDLINE {
                let text = a.command_line();
                let ix = scl_ide::LineIndex::new(text);
                let (l, c) = ix.line_col(text, d.at.span.start as usize);
                got_cmdline.insert(format!("{CMDLINE}:{l}:{c} {what}"));
                continue;
            }
            let Some(f) = a.file_of_key(&d.at.file) else {
                errors.push(format!(
                    "a diagnostic in an unknown file {}: {what}",
                    d.at.file
                ));
                continue;
            };
            let p = a.path(f);
            got.insert(draw(&p, &a.text(f), d.at.span.start, d.at.span.end, what));
        }
        if let Err(e) = compare("diagnostics", want, got) {
            errors.push(e);
        }
        if want_cmdline != got_cmdline {
            errors.push(format!(
                "command-line diagnostics: want {want_cmdline:#?}, got {got_cmdline:#?}"
            ));
        }
    } else if directive("allow-errors").next().is_none() {
        // A fixture that checks something else must still be a valid
        // program, or it may pass for the wrong reason (a typo that makes a
        // declaration an error node): errors fail it unless it says
        // `//@ allow-errors` (code being typed, for completion).
        for d in a.check(&ids).iter().filter(|d| d.is_error()) {
            errors.push(format!(
                "an error the fixture does not expect (annotate it with `//@ diagnostics`, or say `//@ allow-errors`): {} {}: {}",
                d.at.file, d.code, d.message
            ));
        }
    }

    let target_ann = |t: &scl_ide::NavTarget, what: &str| {
        let p = a.path(t.file);
        draw(
            &p,
            &a.text(t.file),
            t.span.start,
            t.span.end,
            what.to_string(),
        )
    };
    // Definition.
    let want: BTreeSet<Ann> = expected.iter().filter(|x| x.2 == "def").cloned().collect();
    if !want.is_empty() || directive("definition").next().is_some() {
        let (f, off) = cursor.ok_or("a `def` annotation needs a cursor `$0`")?;
        let got: BTreeSet<Ann> = a
            .definition(f, off)
            .iter()
            .map(|t| target_ann(t, "def"))
            .collect();
        if let Err(e) = compare("definition", want, got) {
            errors.push(e);
        }
    }
    // References.
    let want: BTreeSet<Ann> = expected.iter().filter(|x| x.2 == "ref").cloned().collect();
    if !want.is_empty() {
        let (f, off) = cursor.ok_or("a `ref` annotation needs a cursor `$0`")?;
        let got: BTreeSet<Ann> = a
            .references(f, off, true)
            .iter()
            .map(|t| target_ann(t, "ref"))
            .collect();
        if let Err(e) = compare("references", want, got) {
            errors.push(e);
        }
    }
    // Document symbols, of each file that has a `symbol` annotation.
    let want: BTreeSet<Ann> = expected
        .iter()
        .filter(|x| x.2.starts_with("symbol "))
        .cloned()
        .collect();
    let files: BTreeSet<PathBuf> = want.iter().map(|x| x.0.clone()).collect();
    if !want.is_empty() {
        let mut got = BTreeSet::new();
        for p in &files {
            let f = a.file(p);
            let text = a.text(f);
            let mut stack = a.symbols(f);
            while let Some(s) = stack.pop() {
                let what = format!("symbol {}", s.kind.label());
                got.insert(draw(p, &text, s.name_span.start, s.name_span.end, what));
                stack.extend(s.children);
            }
        }
        if let Err(e) = compare("symbols", want, got) {
            errors.push(e);
        }
    }
    // Completion.
    if let Some(want) = directive("completions").next() {
        let (f, off) = cursor.ok_or("`completions` needs a cursor `$0`")?;
        let got: Vec<String> = a.completions(f, off).into_iter().map(|c| c.label).collect();
        let want: Vec<String> = want.split_whitespace().map(String::from).collect();
        if got != want {
            errors.push(format!("completions: want {want:?}, got {got:?}"));
        }
    }
    // Hover.
    if let Some(want) = directive("hover").next() {
        let (f, off) = cursor.ok_or("`hover` needs a cursor `$0`")?;
        let h = a.hover(f, off);
        let got = h.as_ref().map(|h| format!("{} {}", h.kind, h.name));
        if got.as_deref() != Some(want) {
            errors.push(format!("hover: want {want:?}, got {got:?}"));
        }
        if let Some(doc) = directive("hover-doc").next() {
            let got = h.and_then(|h| h.doc).map(|d| d.trim().to_string());
            if got.as_deref() != Some(doc) {
                errors.push(format!("hover doc: want {doc:?}, got {got:?}"));
            }
        }
    }
    // The static type of the expression at the cursor.
    if let Some(want) = directive("type").next() {
        let (f, off) = cursor.ok_or("`type` needs a cursor `$0`")?;
        let got = a.type_at(f, off);
        if got.as_deref() != Some(want) {
            errors.push(format!("type: want {want:?}, got {got:?}"));
        }
    }
    // Hover value and chain.
    if let Some(want) = directive("hover-value").next() {
        let (f, off) = cursor.ok_or("`hover-value` needs a cursor `$0`")?;
        let got = a.hover(f, off).and_then(|h| h.value);
        if got.as_deref() != Some(want) {
            errors.push(format!("hover value: want {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = directive("hover-chain").next() {
        let (f, off) = cursor.ok_or("`hover-chain` needs a cursor `$0`")?;
        let got: Vec<String> = a
            .hover(f, off)
            .map(|h| h.chain)
            .unwrap_or_default()
            .iter()
            .map(|l| {
                let (line, col) = a.line_col(l.at.file, l.at.span.start);
                format!(
                    "{} @ {}:{line}:{col} = {}{}",
                    l.env,
                    a.path(l.at.file).display(),
                    l.value.as_deref().unwrap_or("?"),
                    if l.extends { " (extends)" } else { "" }
                )
            })
            .collect();
        let want: Vec<String> = want.split(" | ").map(|s| s.trim().to_string()).collect();
        if got != want {
            errors.push(format!("hover chain: want {want:#?}, got {got:#?}"));
        }
    }
    // The edits to apply, whose result the `(after)` texts give.
    let mut applied: Option<Vec<scl_ide::TextEdit>> = None;
    // Rename.
    if let Some(want) = directive("prepare-rename-error").next() {
        let (f, off) = cursor.ok_or("`prepare-rename-error` needs a cursor `$0`")?;
        let got = a.prepare_rename(f, off);
        if got.as_ref().err().map(String::as_str) != Some(want) {
            errors.push(format!("prepare rename: want Err({want:?}), got {got:?}"));
        }
    }
    let want: BTreeSet<Ann> = expected.iter().filter(|x| x.2 == "edit").cloned().collect();
    if let Some(new) = directive("rename").next() {
        let (f, off) = cursor.ok_or("`rename` needs a cursor `$0`")?;
        match (a.rename(f, off, new), directive("rename-error").next()) {
            (Err(got), Some(want)) if got == want => {}
            (got, Some(want)) => errors.push(format!("rename: want Err({want:?}), got {got:?}")),
            (Err(e), None) => errors.push(format!("rename failed: {e}")),
            (Ok(edits), None) => {
                let got: BTreeSet<Ann> = edits
                    .iter()
                    .map(|e| {
                        let p = a.path(e.file);
                        draw(&p, &a.text(e.file), e.span.start, e.span.end, "edit".into())
                    })
                    .collect();
                if let Some(e) = edits.iter().find(|e| e.new_text != new) {
                    errors.push(format!("rename: an edit writes {:?}", e.new_text));
                }
                match a.prepare_rename(f, off) {
                    Ok(s) if edits.iter().any(|e| e.file == f && e.span == s) => {}
                    other => errors.push(format!(
                        "prepare_rename gives {other:?}, which is not one of the edits"
                    )),
                }
                if let Err(e) = compare("rename edits", want, got) {
                    errors.push(e);
                }
                applied = Some(edits);
            }
        }
    } else if !want.is_empty() || directive("rename-error").next().is_some() {
        return Err("`edit` annotations or `rename-error` without `rename`".into());
    }
    // Code actions.
    if let Some(want) = directive("actions").next() {
        let (f, off) = cursor.ok_or("`actions` needs a cursor `$0`")?;
        let span = scl_ide::Span::new(off as usize, off as usize);
        let actions = a.code_actions(f, span);
        let got: Vec<String> = actions
            .iter()
            .map(|x| format!("{}{}", if x.preferred { "*" } else { "" }, x.title))
            .collect();
        let want: Vec<String> = if want.is_empty() {
            Vec::new()
        } else {
            want.split(" | ").map(|s| s.trim().to_string()).collect()
        };
        if got != want {
            errors.push(format!("actions: want {want:#?}, got {got:#?}"));
        }
        for x in &actions {
            if x.fixes.is_none() || x.kind != scl_ide::ActionKind::QuickFix {
                errors.push(format!("action {:?} fixes no diagnostic", x.title));
            }
        }
        if let Some(title) = directive("apply").next() {
            match actions.iter().find(|x| x.title == title) {
                Some(x) => applied = Some(x.edits.clone()),
                None => errors.push(format!("no action {title:?} to apply")),
            }
        }
    } else if directive("apply").next().is_some() {
        return Err("`apply` without `actions`".into());
    }
    if !afters.is_empty() {
        let edits = applied.ok_or("`(after)` texts without `apply` or a successful `rename`")?;
        // Annotation lines are comments; they are not compared.
        let strip = |t: &str| -> String {
            t.lines()
                .filter(|l| {
                    let t = l.trim_start();
                    !(t.starts_with("//^file ")
                        || t.starts_with("//") && t[2..].trim_start().starts_with('^'))
                })
                .map(|l| format!("{l}\n"))
                .collect()
        };
        for af in &afters {
            let f = a.file(&af.path);
            let mut text = a.text(f).to_string();
            let mut mine: Vec<&scl_ide::TextEdit> = edits.iter().filter(|e| e.file == f).collect();
            mine.sort_by_key(|e| std::cmp::Reverse((e.span.start, e.span.end)));
            for e in mine {
                text.replace_range(e.span.range(), &e.new_text);
            }
            if strip(&text) != strip(&af.text) {
                errors.push(format!(
                    "{} after the edits:\n{}\nexpected:\n{}",
                    af.path.display(),
                    strip(&text),
                    strip(&af.text)
                ));
            }
        }
        // A file edited must have its expected text.
        for e in &edits {
            let p = a.path(e.file);
            if !afters.iter().any(|af| af.path == p) {
                errors.push(format!(
                    "{} is edited but has no `(after)` text",
                    p.display()
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fixture"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_holds() {
    let all = fixtures("tests/fixtures");
    assert!(all.len() >= 8, "found only {} fixtures", all.len());
    let failures: Vec<String> = scl_ide::with_compiler_stack(|| {
        all.iter()
            .filter_map(|p| {
                let src = std::fs::read_to_string(p).unwrap();
                run_fixture(&src)
                    .err()
                    .map(|e| format!("{}:\n{e}", p.display()))
            })
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The runner fails a fixture whose annotation is wrong: each of these is a
/// correct fixture with one annotation changed (a column, a message, a
/// missing or extra diagnostic, a wrong definition, reference, symbol or
/// completion).
#[test]
fn a_wrong_annotation_fails() {
    let all = fixtures("tests/fixtures/wrong");
    assert!(all.len() >= 5, "found only {} wrong fixtures", all.len());
    scl_ide::with_compiler_stack(|| {
        for p in &all {
            let src = std::fs::read_to_string(p).unwrap();
            match run_fixture(&src) {
                Ok(()) => panic!("{} passed, but its annotation is wrong", p.display()),
                // It must fail for its annotation, not for an error in its code.
                Err(e) => assert!(
                    !e.contains("an error the fixture does not expect"),
                    "{} fails for an error in its code, not its annotation: {e}",
                    p.display()
                ),
            }
        }
    });
}
