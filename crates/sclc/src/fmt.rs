//! `sclc fmt [PATH...] [--check] [--stdin]`: rewrites SCL files in the
//! canonical layout of `scl-fmt` (book: "Formatting").
//!
//! - PATHs are taken exactly as `sclc check` takes them (the same code,
//!   `commands::collect_files`): files, each of which must be a `*.env.scl`
//!   file, or folders (default `.`), each standing for every `*.env.scl`
//!   file below it, sorted, without following links or entering hidden
//!   folders, `target` or `node_modules`. A path that does not exist, a
//!   file that is not a `.env.scl` file, or no file at all is a usage error
//!   (exit code 2), with `sclc check`'s message.
//! - A file with a syntax error is not formatted: its errors are printed as
//!   `sclc check` prints them, the file is left as it is, and the exit code
//!   is 1 (the other files are still formatted).
//! - A file is written only when its text changes, atomically: the new text
//!   goes to a temporary file in the same folder, which gets the old file's
//!   permissions and is then renamed over it, so a reader (or a kill) sees
//!   the old or the new file, never a part. A read-only file is not
//!   written (an error, exit code 1). A file named twice, or through a
//!   link and by its name, is formatted (and listed) once.
//! - `--check` writes nothing: it lists the files that would change, one per
//!   line on stdout, and exits 1 if there is any.
//! - `--stdin` formats standard input to standard output.
//!
//! Before anything is written, the output is checked to mean what the input
//! meant ([`scl_fmt::verify`]); if it does not (a formatter bug), the file is
//! left alone with an error and exit code 1.
//!
//! Exit codes: 0 done (or, with `--check`, nothing would change); 1 a
//! syntax error, a file that would change under `--check`, or a file that
//! could not be written; 2 usage error (see PATHs above).

use crate::commands::{collect_files, render_diagnostics, Sources};
use scl_diag::{Diagnostic, Span};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BOM: &str = "\u{feff}";

/// Runs `sclc fmt`; returns the exit code.
pub fn fmt(paths: &[PathBuf], check: bool, stdin: bool, json: bool) -> i32 {
    if stdin {
        return fmt_stdin(check, json);
    }
    // The files `sclc check` takes, with its usage errors.
    let mut files = match collect_files(paths) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // A file named twice (or through a link and by its name) is done once.
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for f in &files {
        let shown = f.strip_prefix(".").unwrap_or(f);
        let shown = scl_diag::visible_text(&shown.to_string_lossy()).into_owned();
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: cannot read {shown}: {e}");
                failed = true;
                continue;
            }
        };
        let src = match text_of(&bytes, &shown, json) {
            Some(s) => s,
            None => {
                failed = true;
                continue;
            }
        };
        let Some(out) = format_checked(&src, &shown, json) else {
            failed = true;
            continue;
        };
        if out == src {
            continue;
        }
        if check {
            let _ = writeln!(stdout, "{shown}");
            failed = true;
            continue;
        }
        if let Err(e) = write_atomically(f, out.as_bytes()) {
            eprintln!("error: cannot write {shown}: {e}");
            failed = true;
        }
    }
    i32::from(failed)
}

fn fmt_stdin(check: bool, json: bool) -> i32 {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("error: cannot read standard input: {e}");
        return 1;
    }
    let shown = "<stdin>";
    let Some(src) = text_of(&bytes, shown, json) else {
        return 1;
    };
    let Some(out) = format_checked(&src, shown, json) else {
        return 1;
    };
    if check {
        if out != src {
            println!("{shown}");
            return 1;
        }
        return 0;
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// The text of a file, or `None` after printing why it is not SCL text the
/// compiler reads (not UTF-8: `E0001`; too large: `E0009`), with the same
/// codes and messages as `sclc check`.
fn text_of(bytes: &[u8], shown: &str, json: bool) -> Option<String> {
    let file: Arc<str> = Arc::from(shown);
    let d = if bytes.len() > scl_ide::MAX_FILE_BYTES {
        Diagnostic::error(
            "E0009",
            Span::new(0, 0),
            format!(
                "the file is larger than {} MiB, the most the compiler reads",
                scl_ide::MAX_FILE_BYTES >> 20
            ),
        )
        .with_help("split it into modules, or keep generated data out of `.env.scl` files")
    } else {
        match std::str::from_utf8(bytes) {
            Ok(s) => return Some(s.to_string()),
            Err(e) => {
                let at = e.valid_up_to();
                // The text shown has U+FFFD (3 bytes) there.
                Diagnostic::error(
                    "E0001",
                    Span::new(at, at + '\u{fffd}'.len_utf8()),
                    format!("the file is not valid UTF-8 (byte {at})"),
                )
                .with_help("save the file as UTF-8")
            }
        }
    };
    let text =
        String::from_utf8_lossy(&bytes[..bytes.len().min(scl_ide::MAX_FILE_BYTES)]).into_owned();
    render_diagnostics(
        &Sources::plain(HashMap::from([(shown.to_string(), text)])),
        &[d.in_file(&file)],
        json,
    );
    None
}

/// The formatted text of `src`, or `None` after printing its syntax errors
/// (or, for a formatter bug, why the output was refused). A byte order mark
/// at the start is kept.
fn format_checked(src: &str, shown: &str, json: bool) -> Option<String> {
    let (bom, body) = match src.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", src),
    };
    match scl_fmt::format_verified(body) {
        Ok(out) => Some(format!("{bom}{out}")),
        Err(scl_fmt::Refusal::Meaning(why)) => {
            eprintln!(
                "error: {shown}: the formatted text would not mean the same ({why}); the file is left as it is. This is a bug in `sclc fmt`: please report it with the file."
            );
            None
        }
        Err(scl_fmt::Refusal::Syntax(diags)) => {
            let file: Arc<str> = Arc::from(shown);
            let diags: Vec<Diagnostic> = diags.into_iter().map(|d| d.in_file(&file)).collect();
            // The spans are into `body`: show it with the mark blanked, as `sclc check` does.
            let shown_text = if bom.is_empty() {
                src.to_string()
            } else {
                format!("   {body}")
            };
            let diags: Vec<Diagnostic> = if bom.is_empty() {
                diags
            } else {
                diags.into_iter().map(|d| shift(d, 3)).collect()
            };
            render_diagnostics(
                &Sources::plain(HashMap::from([(shown.to_string(), shown_text)])),
                &diags,
                json,
            );
            None
        }
    }
}

/// `d` with every span moved `by` bytes later.
fn shift(mut d: Diagnostic, by: u32) -> Diagnostic {
    let mv = |s: &mut Span| {
        s.start += by;
        s.end += by;
    };
    mv(&mut d.at.span);
    for l in &mut d.labels {
        mv(&mut l.at.span);
    }
    d
}

/// Replaces `path` with `contents` atomically: a temporary file in the same
/// folder, given `path`'s permissions, renamed over it.
/// A link is followed: the file it points to is replaced, the link stays.
/// A read-only file is not replaced (a rename would get past its
/// permissions): that is an error of kind `PermissionDenied`.
fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let path = &std::fs::canonicalize(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let perms = std::fs::metadata(path)?.permissions();
    if perms.readonly() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only",
        ));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".sclc-fmt-")
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.as_file().set_permissions(perms)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
