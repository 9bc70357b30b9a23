//! The LSP methods: each asks the main loop for a snapshot and answers on
//! a blocking thread with the compiler's stack.

use crate::convert;
use crate::main_loop::{Task, Tasks};
use scl_ide::{Analysis, CompletionKind, FileId, SymbolKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{self as lsp, Uri};
use tower_lsp_server::{Client, LanguageServer};

/// Set when the client sent `shutdown` (the exit code of `exit`).
pub(crate) static SHUT_DOWN: AtomicBool = AtomicBool::new(false);

/// The target `scl/lowered` uses when none is asked for.
const DEFAULT_TARGET: &str = "docker";

pub(crate) struct Server {
    client: Client,
    tasks: Tasks,
}

/// The params of `scl/lowered` ([`crate::LOWERED_METHOD`]).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoweredParams {
    text_document: lsp::TextDocumentIdentifier,
    position: lsp::Position,
    #[serde(default)]
    target: Option<String>,
}

/// The result of `scl/lowered`.
#[derive(serde::Serialize, Debug, Default)]
pub(crate) struct LoweredResult {
    env: Option<String>,
    target: String,
    targets: Vec<&'static str>,
    artifacts: Vec<LoweredArtifact>,
    diagnostics: Vec<LoweredDiagnostic>,
}

#[derive(serde::Serialize, Debug)]
struct LoweredArtifact {
    path: String,
    text: String,
}

#[derive(serde::Serialize, Debug)]
struct LoweredDiagnostic {
    severity: &'static str,
    code: &'static str,
    message: String,
}

fn bug() -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: "sclc lsp failed on this request (a bug; the server goes on)".into(),
        data: None,
    }
}

impl Server {
    pub(crate) fn new(client: Client, tasks: Tasks) -> Server {
        Server { client, tasks }
    }

    /// The snapshot reserved for this request when it arrived
    /// (`ordered::RESERVED`), else one taken now.
    async fn snapshot(&self, path: &Path) -> Result<Analysis> {
        let reserved = crate::ordered::RESERVED
            .try_with(|r| r.borrow_mut().take())
            .ok()
            .flatten();
        let rx = match reserved {
            Some(rx) => rx,
            None => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                self.tasks
                    .send(Task::Snapshot(Some(path.to_path_buf()), tx));
                rx
            }
        };
        rx.await.map_err(|_| bug())
    }

    /// Runs `f` for the file of `uri` on a snapshot; `None` for a URI that
    /// is not a local file. A change applied meanwhile cancels it:
    /// `ContentModified`.
    async fn on<T, F>(&self, uri: &Uri, f: F) -> Result<Option<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Analysis, FileId) -> T + Send + 'static,
    {
        let Some(path) = convert::path_of(uri) else {
            return Ok(None);
        };
        let snap = self.snapshot(&path).await?;
        run(snap, path, f).await.map(Some)
    }

    /// `scl/lowered`: the artifacts of the env under the cursor.
    pub(crate) async fn lowered(&self, params: LoweredParams) -> Result<LoweredResult> {
        let target = params
            .target
            .clone()
            .unwrap_or_else(|| DEFAULT_TARGET.to_string());
        let Some(t) = scl_ide::Target::from_name(&target) else {
            return Err(Error::invalid_params(format!(
                "unknown target `{target}`; targets: {}",
                scl_ide::Target::all()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let pos = params.position;
        self.on(&params.text_document.uri, move |a, file| {
            lowered(a, file, pos, t)
        })
        .await?
        .ok_or_else(|| Error::invalid_params("not a local file"))
    }
}

async fn run<T, F>(snap: Analysis, path: PathBuf, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Analysis, FileId) -> T + Send + 'static,
{
    let joined = tokio::task::spawn_blocking(move || {
        // The snapshot is dropped after a panic, so nothing half-updated
        // is seen again: asserting unwind safety is sound here. The
        // blocking threads have the compiler's stack (`run_stdio`).
        let f = std::panic::AssertUnwindSafe(f);
        snap.catch_cancel(move |a| {
            let f = f; // the whole wrapper, not its field
            let file = a.file(&path);
            (f.0)(a, file)
        })
    })
    .await;
    match joined {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(_cancelled)) => Err(Error::content_modified()),
        Err(_panic) => Err(bug()),
    }
}

fn lowered(a: &Analysis, file: FileId, pos: lsp::Position, t: scl_ide::Target) -> LoweredResult {
    let offset = convert::offset(a, file, pos);
    let envs = a.symbols(file);
    let under = envs
        .iter()
        .filter(|s| s.kind == SymbolKind::Env)
        .find(|s| s.span.start <= offset && offset <= s.span.end)
        .or_else(|| envs.iter().find(|s| s.kind == SymbolKind::Env));
    let mut out = LoweredResult {
        env: under.map(|s| s.name.clone()),
        target: t.name().to_string(),
        targets: scl_ide::Target::all().map(|t| t.name()).collect(),
        ..Default::default()
    };
    let Some(env) = out.env.clone() else {
        return out;
    };
    let lowering = a.lower(file, std::slice::from_ref(&env), t);
    let mut diags = lowering.diagnostics;
    if lowering.incomplete {
        // The env has errors: they are why nothing was lowered.
        diags.extend(
            a.file_diagnostics(file)
                .into_iter()
                .filter(|d| d.severity == scl_diag::Severity::Error),
        );
    }
    for (_, l) in lowering.outputs {
        out.artifacts
            .extend(l.artifacts.into_iter().map(|art| LoweredArtifact {
                path: art.path,
                text: art.contents,
            }));
    }
    out.diagnostics = diags
        .into_iter()
        .map(|d| LoweredDiagnostic {
            severity: match d.severity {
                scl_diag::Severity::Error => "error",
                scl_diag::Severity::Warning => "warning",
            },
            code: d.code,
            message: d.message,
        })
        .collect();
    out
}

/// The legend of semantic tokens: scl-ide's kinds and modifiers, in order.
fn legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: scl_ide::TokenKind::ALL
            .iter()
            .map(|k| lsp::SemanticTokenType::new(k.lsp_name()))
            .collect(),
        token_modifiers: scl_ide::TOKEN_MODIFIERS
            .iter()
            .map(|m| lsp::SemanticTokenModifier::new(m))
            .collect(),
    }
}

fn symbol_kind(k: SymbolKind) -> lsp::SymbolKind {
    match k {
        SymbolKind::Import => lsp::SymbolKind::MODULE,
        SymbolKind::Param => lsp::SymbolKind::CONSTANT,
        SymbolKind::Let => lsp::SymbolKind::VARIABLE,
        SymbolKind::Enum => lsp::SymbolKind::ENUM,
        SymbolKind::Variant => lsp::SymbolKind::ENUM_MEMBER,
        SymbolKind::Function => lsp::SymbolKind::FUNCTION,
        SymbolKind::Env => lsp::SymbolKind::CLASS,
        SymbolKind::Template => lsp::SymbolKind::INTERFACE,
        SymbolKind::Parameter => lsp::SymbolKind::TYPE_PARAMETER,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
fn document_symbol(a: &Analysis, file: FileId, s: &scl_ide::Symbol) -> lsp::DocumentSymbol {
    let range = convert::range(a, file, s.span);
    let mut selection = convert::range(a, file, s.name_span);
    if selection.start < range.start || selection.end > range.end {
        selection = range;
    }
    lsp::DocumentSymbol {
        name: if s.name.is_empty() {
            "?".into()
        } else {
            s.name.clone()
        },
        detail: Some(s.kind.label().to_string()),
        kind: symbol_kind(s.kind),
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: (!s.children.is_empty()).then(|| {
            s.children
                .iter()
                .map(|c| document_symbol(a, file, c))
                .collect()
        }),
    }
}

fn completion_kind(k: CompletionKind) -> lsp::CompletionItemKind {
    match k {
        CompletionKind::Field => lsp::CompletionItemKind::FIELD,
        CompletionKind::EnumVariant => lsp::CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Module => lsp::CompletionItemKind::MODULE,
        CompletionKind::File => lsp::CompletionItemKind::FILE,
        CompletionKind::Folder => lsp::CompletionItemKind::FOLDER,
        CompletionKind::Name(s) => match s {
            SymbolKind::Import => lsp::CompletionItemKind::MODULE,
            SymbolKind::Param => lsp::CompletionItemKind::CONSTANT,
            SymbolKind::Let => lsp::CompletionItemKind::VARIABLE,
            SymbolKind::Enum => lsp::CompletionItemKind::ENUM,
            SymbolKind::Variant => lsp::CompletionItemKind::ENUM_MEMBER,
            SymbolKind::Function => lsp::CompletionItemKind::FUNCTION,
            SymbolKind::Env | SymbolKind::Template => lsp::CompletionItemKind::CLASS,
            SymbolKind::Parameter => lsp::CompletionItemKind::VARIABLE,
        },
    }
}

/// A hover as Markdown: the kind, name and type; the doc comment; the
/// resolved value; and for a field the chain of envs and lines that set
/// it, the winning one first, each a link to its line.
fn hover_markdown(a: &Analysis, h: &scl_ide::Hover) -> String {
    let mut md = format!("**{}** `{}`", h.kind, h.name);
    if let Some(t) = &h.ty {
        md.push_str(&format!(": `{t}`"));
    }
    if let Some(d) = &h.doc {
        md.push_str("\n\n");
        md.push_str(d.trim());
    }
    if let Some(v) = &h.value {
        md.push_str(&format!("\n\n```scl\n{v}\n```"));
    }
    if !h.chain.is_empty() {
        md.push_str("\n\n---\n\n**Set by**\n");
        for (i, link) in h.chain.iter().enumerate() {
            let (line, _) = a.line_col(link.at.file, link.at.span.start);
            let key = a.key(link.at.file);
            let place = match convert::file_uri(a, link.at.file) {
                Some(u) => format!("[{key}:{line}]({}#L{line})", u.as_str()),
                None => format!("{key}:{line}"),
            };
            let value = link
                .value
                .as_deref()
                .map(|v| format!(" = `{v}`"))
                .unwrap_or_default();
            let note = match i.checked_sub(1).map(|p| h.chain[p].extends) {
                None => "",
                Some(true) => " (extended)",
                Some(false) => " (overridden)",
            };
            md.push_str(&format!(
                "{}. `{}` at {place}{value}{note}\n",
                i + 1,
                link.env
            ));
        }
    }
    md
}

impl LanguageServer for Server {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        #[allow(deprecated)] // `root_uri`/`root_path`: older clients send only these.
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| convert::path_of(&f.uri))
            .or_else(|| params.root_uri.as_ref().and_then(convert::path_of))
            .or_else(|| params.root_path.as_ref().map(PathBuf::from));
        let pull = params
            .capabilities
            .text_document
            .as_ref()
            .is_some_and(|t| t.diagnostic.is_some());
        self.tasks.send(Task::Init { root, push: !pull });
        let capabilities = lsp::ServerCapabilities {
            text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
                lsp::TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                },
            )),
            hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
            definition_provider: Some(lsp::OneOf::Left(true)),
            references_provider: Some(lsp::OneOf::Left(true)),
            rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: Default::default(),
            })),
            completion_provider: Some(lsp::CompletionOptions {
                trigger_characters: Some(vec![".".into(), "\"".into(), "/".into()]),
                ..Default::default()
            }),
            document_symbol_provider: Some(lsp::OneOf::Left(true)),
            semantic_tokens_provider: Some(
                lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                    lsp::SemanticTokensOptions {
                        legend: legend(),
                        full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                        range: None,
                        work_done_progress_options: Default::default(),
                    },
                ),
            ),
            inlay_hint_provider: Some(lsp::OneOf::Left(true)),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
                lsp::CodeActionOptions {
                    code_action_kinds: Some(vec![
                        lsp::CodeActionKind::QUICKFIX,
                        lsp::CodeActionKind::REFACTOR,
                    ]),
                    ..Default::default()
                },
            )),
            document_formatting_provider: Some(lsp::OneOf::Left(true)),
            diagnostic_provider: Some(lsp::DiagnosticServerCapabilities::Options(
                lsp::DiagnosticOptions {
                    identifier: Some("sclc".into()),
                    inter_file_dependencies: true,
                    workspace_diagnostics: false,
                    work_done_progress_options: Default::default(),
                },
            )),
            ..Default::default()
        };
        Ok(lsp::InitializeResult {
            capabilities,
            server_info: Some(lsp::ServerInfo {
                name: "sclc lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        // Files that change on disk (other modules, requirements files read
        // with `file()`): the client watches them for us when it can.
        let watchers = ["**/*.env.scl", "**/scl.toml", "**/*"]
            .iter()
            .map(|g| lsp::FileSystemWatcher {
                glob_pattern: lsp::GlobPattern::String(g.to_string()),
                kind: None,
            })
            .collect();
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = lsp::Registration {
            id: "scl-watched-files".into(),
            method: "workspace/didChangeWatchedFiles".into(),
            register_options: serde_json::to_value(options).ok(),
        };
        let client = self.client.clone();
        // Not awaited here: a client that never answers must not hold up
        // the handler's slot.
        tokio::spawn(async move {
            let _ = client.register_capability(vec![registration]).await;
        });
    }

    async fn shutdown(&self) -> Result<()> {
        SHUT_DOWN.store(true, Ordering::SeqCst);
        Ok(())
    }

    // The changes themselves were sent to the main loop, in order, by
    // `ordered::Ordered`; these handlers have nothing left to do.
    async fn did_open(&self, _: lsp::DidOpenTextDocumentParams) {}
    async fn did_change(&self, _: lsp::DidChangeTextDocumentParams) {}
    async fn did_close(&self, _: lsp::DidCloseTextDocumentParams) {}
    async fn did_change_watched_files(&self, _: lsp::DidChangeWatchedFilesParams) {}

    async fn diagnostic(
        &self,
        params: lsp::DocumentDiagnosticParams,
    ) -> Result<lsp::DocumentDiagnosticReportResult> {
        let items = self
            .on(&params.text_document.uri, convert::diagnostics)
            .await?
            .unwrap_or_default();
        Ok(lsp::DocumentDiagnosticReportResult::Report(
            lsp::DocumentDiagnosticReport::Full(lsp::RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                    result_id: None,
                    items,
                },
            }),
        ))
    }

    async fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
        let p = params.text_document_position_params;
        Ok(self
            .on(&p.text_document.uri, move |a, file| {
                let h = a.hover(file, convert::offset(a, file, p.position))?;
                Some(lsp::Hover {
                    contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: hover_markdown(a, &h),
                    }),
                    range: Some(convert::range(a, file, h.span)),
                })
            })
            .await?
            .flatten())
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> Result<Option<lsp::GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        Ok(self
            .on(&p.text_document.uri, move |a, file| {
                let t = a.definition(file, convert::offset(a, file, p.position))?;
                convert::location(a, t).map(lsp::GotoDefinitionResponse::Scalar)
            })
            .await?
            .flatten())
    }

    async fn references(&self, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
        let p = params.text_document_position;
        let include = params.context.include_declaration;
        self.on(&p.text_document.uri, move |a, file| {
            // Every module of the workspace, not only those read so far.
            let _ = a.workspace_files();
            a.references(file, convert::offset(a, file, p.position), include)
                .into_iter()
                .filter_map(|t| convert::location(a, t))
                .collect()
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>> {
        let answer = self
            .on(&params.text_document.uri, move |a, file| {
                a.prepare_rename(file, convert::offset(a, file, params.position))
                    .map(|s| lsp::PrepareRenameResponse::Range(convert::range(a, file, s)))
            })
            .await?;
        match answer {
            None => Ok(None),
            Some(Ok(r)) => Ok(Some(r)),
            Some(Err(reason)) => Err(Error::invalid_params(reason)),
        }
    }

    async fn rename(&self, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
        let p = params.text_document_position;
        let new_name = params.new_name;
        let answer = self
            .on(&p.text_document.uri, move |a, file| {
                // Every module of the workspace: an importer not read yet
                // would keep the old name and break.
                let _ = a.workspace_files();
                a.rename(file, convert::offset(a, file, p.position), &new_name)
                    .map(|edits| convert::workspace_edit(a, &edits))
            })
            .await?;
        match answer {
            None => Ok(None),
            Some(Ok(e)) => Ok(Some(e)),
            Some(Err(reason)) => Err(Error::invalid_params(reason)),
        }
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> Result<Option<lsp::CompletionResponse>> {
        let p = params.text_document_position;
        self.on(&p.text_document.uri, move |a, file| {
            let items = a
                .completions(file, convert::offset(a, file, p.position))
                .into_iter()
                .map(|c| lsp::CompletionItem {
                    label: c.label,
                    kind: Some(completion_kind(c.kind)),
                    detail: c.detail,
                    ..Default::default()
                })
                .collect();
            lsp::CompletionResponse::Array(items)
        })
        .await
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> Result<Option<lsp::DocumentSymbolResponse>> {
        self.on(&params.text_document.uri, |a, file| {
            lsp::DocumentSymbolResponse::Nested(
                a.symbols(file)
                    .iter()
                    .map(|s| document_symbol(a, file, s))
                    .collect(),
            )
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>> {
        self.on(&params.text_document.uri, |a, file| {
            let tokens = a.semantic_tokens(file);
            lsp::SemanticTokensResult::Tokens(lsp::SemanticTokens {
                result_id: None,
                data: convert::semantic_tokens(a, file, &tokens),
            })
        })
        .await
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> Result<Option<Vec<lsp::InlayHint>>> {
        let range = params.range;
        self.on(&params.text_document.uri, move |a, file| {
            let span = convert::span(a, file, range);
            a.inlay_hints(file, span)
                .into_iter()
                .map(|h| {
                    let (l, c) = a
                        .lsp_range(
                            file,
                            scl_ide::Span::new(h.offset as usize, h.offset as usize),
                        )
                        .0;
                    lsp::InlayHint {
                        position: lsp::Position::new(l, c),
                        label: lsp::InlayHintLabel::String(h.label),
                        kind: None,
                        text_edits: None,
                        tooltip: h.tooltip.map(lsp::InlayHintTooltip::String),
                        padding_left: Some(true),
                        padding_right: None,
                        data: None,
                    }
                })
                .collect()
        })
        .await
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> Result<Option<lsp::CodeActionResponse>> {
        let range = params.range;
        let context = params.context.diagnostics;
        self.on(&params.text_document.uri, move |a, file| {
            let span = convert::span(a, file, range);
            a.code_actions(file, span)
                .into_iter()
                .map(|act| {
                    let diagnostics = act.fixes.map(|(code, s)| {
                        let r = convert::range(a, file, s);
                        context
                            .iter()
                            .filter(|d| {
                                d.range == r
                                    && d.code == Some(lsp::NumberOrString::String(code.into()))
                            })
                            .cloned()
                            .collect::<Vec<_>>()
                    });
                    lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                        title: act.title,
                        kind: Some(match act.kind {
                            scl_ide::ActionKind::QuickFix => lsp::CodeActionKind::QUICKFIX,
                            scl_ide::ActionKind::Refactor => lsp::CodeActionKind::REFACTOR,
                        }),
                        diagnostics: diagnostics.filter(|d| !d.is_empty()),
                        edit: Some(convert::workspace_edit(a, &act.edits)),
                        command: None,
                        is_preferred: Some(act.preferred),
                        disabled: None,
                        data: None,
                    })
                })
                .collect()
        })
        .await
    }

    async fn formatting(
        &self,
        params: lsp::DocumentFormattingParams,
    ) -> Result<Option<Vec<lsp::TextEdit>>> {
        let answer = self
            .on(&params.text_document.uri, |a, file| {
                a.format_edits(file)
                    .map(|edits| edits.iter().map(|e| convert::text_edit(a, e)).collect())
            })
            .await?;
        // A file with a syntax error is not formatted; its errors are shown
        // as diagnostics already.
        Ok(answer.and_then(|r| r.ok()))
    }
}
