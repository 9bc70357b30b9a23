//! Between scl-ide's answers (file ids, byte offsets) and LSP types (URIs,
//! 0-based lines and UTF-16 characters, LSP 3.17 §"Position").

use scl_ide::{Analysis, FileId, LineIndex, NavTarget, Span};
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{self as lsp, Uri};

/// The local path of a `file:` URI; `None` for other schemes (`untitled:`),
/// which the server does not analyse.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    uri.to_file_path().map(|p| scl_ide::normalize_path(&p))
}

/// The `file:` URI of an absolute path; `None` for the embedded stdlib's
/// `std/NAME.env.scl`, which has no file.
pub fn uri_of(path: &Path) -> Option<Uri> {
    if !path.is_absolute() {
        return None;
    }
    Uri::from_file_path(path)
}

/// The URI of a file of the analysis (`None`: an embedded stdlib module).
pub fn file_uri(a: &Analysis, file: FileId) -> Option<Uri> {
    uri_of(&a.path(file))
}

/// A byte span of `file` as an LSP range.
pub fn range(a: &Analysis, file: FileId, span: Span) -> lsp::Range {
    let ((l0, c0), (l1, c1)) = a.lsp_range(file, span);
    lsp::Range::new(lsp::Position::new(l0, c0), lsp::Position::new(l1, c1))
}

/// The byte offset of an LSP position in `file`.
pub fn offset(a: &Analysis, file: FileId, pos: lsp::Position) -> u32 {
    a.offset_of_lsp(file, pos.line, pos.character)
}

/// A byte span of `file` from an LSP range.
pub fn span(a: &Analysis, file: FileId, r: lsp::Range) -> Span {
    let s = offset(a, file, r.start);
    let e = offset(a, file, r.end).max(s);
    Span::new(s as usize, e as usize)
}

/// A place as an LSP location (`None` in an embedded stdlib module).
pub fn location(a: &Analysis, t: NavTarget) -> Option<lsp::Location> {
    Some(lsp::Location::new(
        file_uri(a, t.file)?,
        range(a, t.file, t.span),
    ))
}

/// Applies one `didChange` content change to `text`: a whole new text, or
/// a range (UTF-16 positions, clamped to the text) replaced.
pub fn apply_change(text: &mut String, change: lsp::TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(r) => {
            let ix = LineIndex::new(text);
            let s = ix.offset_of_utf16(text, r.start.line, r.start.character);
            let e = ix.offset_of_utf16(text, r.end.line, r.end.character).max(s);
            text.replace_range(s..e, &change.text);
        }
    }
}

/// The LSP diagnostics of `file`: what `sclc check FILE` reports located
/// in it (the same codes, severities, messages, ranges and per-file cap).
/// The primary span's label, the help and the notes follow as related
/// information at the primary span, other labels at theirs.
pub fn diagnostics(a: &Analysis, file: FileId) -> Vec<lsp::Diagnostic> {
    a.file_diagnostics(file)
        .iter()
        .map(|d| diagnostic(a, file, d))
        .collect()
}

/// Checking `file` (with what it imports, as `sclc check FILE`): its own
/// diagnostics ([`diagnostics`]), and those located in other files, by
/// their URI (an imported module's errors; not the embedded stdlib's).
pub fn check(
    a: &Analysis,
    file: FileId,
) -> (Vec<lsp::Diagnostic>, Vec<(Uri, Vec<lsp::Diagnostic>)>) {
    let key = a.key(file);
    let mut own = Vec::new();
    let mut others: Vec<(Uri, Vec<lsp::Diagnostic>)> = Vec::new();
    for d in a.check(&[file]) {
        if d.at.file == key {
            own.push(diagnostic(a, file, &d));
            continue;
        }
        let Some(f) = a.file_of_key(&d.at.file) else {
            continue; // `<command-line>`
        };
        let Some(u) = file_uri(a, f) else { continue };
        let ld = diagnostic(a, f, &d);
        match others.iter_mut().find(|(x, _)| *x == u) {
            Some((_, ds)) => ds.push(ld),
            None => others.push((u, vec![ld])),
        }
    }
    (own, others)
}

/// One diagnostic located in `file`.
pub fn diagnostic(a: &Analysis, file: FileId, d: &scl_ide::Diagnostic) -> lsp::Diagnostic {
    let r = range(a, file, d.at.span);
    let uri = file_uri(a, file);
    let mut related = Vec::new();
    for l in &d.labels {
        let Some(f) = a.file_of_key(&l.at.file) else {
            continue;
        };
        if let Some(u) = file_uri(a, f) {
            related.push(lsp::DiagnosticRelatedInformation {
                location: lsp::Location::new(u, range(a, f, l.at.span)),
                message: l.message.clone(),
            });
        }
    }
    if let Some(u) = &uri {
        // The label under the primary span ("expected Version, found a
        // number") first: the terminal shows it there.
        if let Some(l) = &d.primary_label {
            related.insert(
                0,
                lsp::DiagnosticRelatedInformation {
                    location: lsp::Location::new(u.clone(), r),
                    message: l.clone(),
                },
            );
        }
        for (what, text) in d
            .help
            .iter()
            .map(|h| ("help", h))
            .chain(d.notes.iter().map(|n| ("note", n)))
        {
            related.push(lsp::DiagnosticRelatedInformation {
                location: lsp::Location::new(u.clone(), r),
                message: format!("{what}: {text}"),
            });
        }
    }
    lsp::Diagnostic {
        range: r,
        severity: Some(match d.severity {
            scl_diag::Severity::Error => lsp::DiagnosticSeverity::ERROR,
            scl_diag::Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: Some(lsp::NumberOrString::String(d.code.to_string())),
        code_description: None,
        source: Some("sclc".into()),
        message: d.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

/// A text edit of scl-ide as an LSP edit in its file.
pub fn text_edit(a: &Analysis, e: &scl_ide::TextEdit) -> lsp::TextEdit {
    lsp::TextEdit::new(range(a, e.file, e.span), e.new_text.clone())
}

/// scl-ide edits as a workspace edit (edits in embedded stdlib modules are
/// left out: they have no file).
pub fn workspace_edit(a: &Analysis, edits: &[scl_ide::TextEdit]) -> lsp::WorkspaceEdit {
    let mut changes: std::collections::HashMap<Uri, Vec<lsp::TextEdit>> = Default::default();
    for e in edits {
        if let Some(u) = file_uri(a, e.file) {
            changes.entry(u).or_default().push(text_edit(a, e));
        }
    }
    lsp::WorkspaceEdit::new(changes)
}

/// Semantic tokens in LSP's relative encoding (LSP 3.17 §"Semantic
/// Tokens"): five integers per token, lengths in UTF-16 code units; a
/// token that spans lines is split into one token per line.
pub fn semantic_tokens(
    a: &Analysis,
    file: FileId,
    tokens: &[scl_ide::SemanticToken],
) -> Vec<lsp::SemanticToken> {
    let text = a.text(file);
    let ix = a.line_index(file);
    let kinds = scl_ide::TokenKind::ALL;
    let mut out = Vec::with_capacity(tokens.len());
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    for t in tokens {
        let Some(kind) = kinds.iter().position(|k| *k == t.kind) else {
            continue;
        };
        // One piece per line of the token.
        let mut start = t.span.start as usize;
        let end = (t.span.end as usize).min(text.len());
        while start < end {
            let line_end = text[start..end].find('\n').map_or(end, |i| start + i);
            let piece_end = if line_end > start && text.as_bytes()[line_end - 1] == b'\r' {
                line_end - 1
            } else {
                line_end
            };
            if piece_end > start {
                let (line, col) = ix.utf16_position(&text, start);
                let len: u32 = text[start..piece_end].encode_utf16().count() as u32;
                let delta_line = line - prev_line;
                let delta_start = if delta_line == 0 { col - prev_col } else { col };
                out.push(lsp::SemanticToken {
                    delta_line,
                    delta_start,
                    length: len,
                    token_type: kind as u32,
                    token_modifiers_bitset: t.modifiers,
                });
                prev_line = line;
                prev_col = col;
            }
            start = line_end + 1;
        }
    }
    out
}
