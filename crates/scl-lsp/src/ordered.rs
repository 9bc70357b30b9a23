//! Keeps the client's order of the notifications that change the database.
//!
//! tower-lsp-server hands each message to its `LspService` in the order it
//! read them, but runs the resulting futures up to four at once, and an
//! async handler's body runs only when the future is first polled: two
//! `didChange` notifications can be applied out of order. [`Ordered`]
//! wraps the service and, in `call` — which runs synchronously for each
//! message in arrival order — turns every `textDocument/didOpen`,
//! `didChange`, `didClose` and `workspace/didChangeWatchedFiles` into a
//! [`Task`] on the main loop's channel before passing the message on.
//!
//! A request gets its snapshot reserved there too: a [`Task::Snapshot`] is
//! sent in the same order, and its receiver travels with the request's
//! future (a tokio task-local, [`RESERVED`]), so the request is answered on
//! the text the client had when it sent it — or, when a later edit arrives
//! first, it is cancelled (`ContentModified`), never answered on a newer
//! text at an old position.

use crate::convert;
use crate::main_loop::{Task, Tasks};
use futures::future::BoxFuture;
use scl_ide::Analysis;
use std::cell::RefCell;
use std::task::{Context, Poll};
use tokio::sync::oneshot;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams,
};
use tower_lsp_server::{ExitedError, LspService};

tokio::task_local! {
    /// The snapshot reserved for the request being handled, taken by its
    /// handler (`handlers::Server::snapshot`).
    pub(crate) static RESERVED: RefCell<Option<oneshot::Receiver<Analysis>>>;
}

/// Requests that read no snapshot: nothing is reserved for them (a
/// reserved snapshot holds the database until the request ends).
const NO_SNAPSHOT: &[&str] = &["initialize", "shutdown"];

/// `LspService<S>` with the database's changes sent in the client's order.
pub struct Ordered<S: tower_lsp_server::LanguageServer> {
    inner: LspService<S>,
    tasks: Tasks,
}

impl<S: tower_lsp_server::LanguageServer> Ordered<S> {
    /// Wraps `inner`; changes go to `tasks`.
    pub fn new(inner: LspService<S>, tasks: Tasks) -> Self {
        Ordered { inner, tasks }
    }

    fn intercept(&self, req: &Request) {
        // After `shutdown` only `exit` is handled (LSP 3.17).
        if crate::handlers::SHUT_DOWN.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Some(params) = req.params() else { return };
        let params = params.clone();
        let task = match req.method() {
            "textDocument/didOpen" => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(params) else {
                    return;
                };
                let Some(path) = convert::path_of(&p.text_document.uri) else {
                    return;
                };
                // A client that sends every file it opens: only SCL is ours.
                let scl = p.text_document.language_id == "scl"
                    || path.to_string_lossy().ends_with(".env.scl");
                if !scl {
                    return;
                }
                Task::Open {
                    uri: p.text_document.uri,
                    path,
                    version: p.text_document.version,
                    text: p.text_document.text,
                }
            }
            "textDocument/didChange" => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(params) else {
                    return;
                };
                let Some(path) = convert::path_of(&p.text_document.uri) else {
                    return;
                };
                Task::Change {
                    path,
                    version: p.text_document.version,
                    changes: p.content_changes,
                }
            }
            "textDocument/didClose" => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(params) else {
                    return;
                };
                let Some(path) = convert::path_of(&p.text_document.uri) else {
                    return;
                };
                Task::Close { path }
            }
            "workspace/didChangeWatchedFiles" => {
                let Ok(p) = serde_json::from_value::<DidChangeWatchedFilesParams>(params) else {
                    return;
                };
                Task::Watched(
                    p.changes
                        .iter()
                        .filter_map(|c| convert::path_of(&c.uri))
                        .collect(),
                )
            }
            _ => return,
        };
        self.tasks.send(task);
    }
}

impl<S: tower_lsp_server::LanguageServer> tower::Service<Request> for Ordered<S> {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        self.intercept(&req);
        let reserve = req.id().is_some() && !NO_SNAPSHOT.contains(&req.method());
        let reserved = reserve.then(|| {
            // The workspace of the file the request is about.
            let path = req
                .params()
                .and_then(|p| p.get("textDocument")?.get("uri")?.as_str()?.parse().ok())
                .and_then(|u: tower_lsp_server::ls_types::Uri| convert::path_of(&u));
            let (tx, rx) = oneshot::channel();
            self.tasks.send(Task::Snapshot(path, tx));
            rx
        });
        let fut = self.inner.call(req);
        match reserved {
            Some(rx) => Box::pin(RESERVED.scope(RefCell::new(Some(rx)), fut)),
            None => fut,
        }
    }
}
