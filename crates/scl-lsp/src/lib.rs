//! The SCL language server (`sclc lsp`): the Language Server Protocol
//! (3.17) over stdio, a thin layer over `scl-ide`.
//!
//! # How it is put together
//! - **One database, edits in order.** The [`scl_ide::AnalysisHost`] lives on
//!   one thread, the *main loop* ([`main_loop`]). Every change — an opened,
//!   edited or closed buffer, files changed on disk, a new workspace root —
//!   is a [`main_loop::Task`] on one channel. The tasks are sent from
//!   [`ordered::Ordered`], a `tower::Service` in front of
//!   tower-lsp-server's own, *while the message is being dispatched*: its
//!   `call` runs for each message in the order the client sent them, whereas
//!   tower-lsp-server runs up to four handlers at once and an async handler
//!   runs only when first polled, so their order is not the client's.
//! - **Requests on snapshots.** Each request's snapshot (an
//!   [`scl_ide::Analysis`], a clone of the database) is asked for through
//!   the same channel when the request arrives ([`ordered::Ordered`]), so it
//!   sees exactly the edits sent before it; the handler answers on a
//!   blocking thread with the compiler's stack. When the main loop applies
//!   a change, salsa cancels the queries running on older snapshots (and
//!   waits for them to be dropped): such a request answers `ContentModified`
//!   (-32801), which clients retry.
//! - **Diagnostics.** After each batch of changes the main loop checks the
//!   open files on a fresh snapshot in a worker thread, the edited files
//!   first, and publishes a file's diagnostics when they differ from what it
//!   last published (or the file's version changed): an edit of a base module
//!   re-checks its importers. There is no debounce; a batch is every change
//!   waiting in the channel. Errors the checks find in modules that are not
//!   open (an imported module's) are published for those modules. A client
//!   that asks for diagnostics itself (`textDocument/diagnostic`, LSP 3.17
//!   pull diagnostics) gets no open file's diagnostics pushed, only those of
//!   modules that are not open.
//!
//! The LSP types are tower-lsp-server's re-export (`ls_types`).

pub mod client;
pub mod convert;
mod handlers;
mod input;
pub mod main_loop;
pub mod ordered;

use tower_lsp_server::{LspService, Server};

/// The custom request of the lowered preview: `scl/lowered`.
///
/// Params: `{ "textDocument": { "uri" }, "position": { "line", "character" },
/// "target": string | null }` (null: `docker`). Result: `{ "env": string |
/// null, "target", "targets": [string], "artifacts": [{ "path", "text" }],
/// "diagnostics": [{ "severity": "error" | "warning", "code", "message" }]
/// }` — the env under the cursor (else the file's first env), every target
/// name, the files the target writes for it and the target's findings.
pub const LOWERED_METHOD: &str = "scl/lowered";

/// Options of a server (the CLI's global flags).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--stdlib DIR`: read `std/...` modules from this folder.
    pub stdlib: Option<std::path::PathBuf>,
}

/// Serves the protocol on `input`/`output` until the client sends `exit`
/// (or closes the input). Needs a tokio runtime whose blocking threads
/// have the compiler's stack (`scl_ide::COMPILER_STACK_SIZE`), as
/// [`run_stdio`]'s has: requests run the compiler on them.
pub async fn serve<I, O>(input: I, output: O, options: Options)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let (tasks, rx) = main_loop::channel();
    let sender = tasks.clone();
    let (service, socket) = LspService::build(move |client| {
        main_loop::spawn(
            rx,
            client.clone(),
            options,
            tokio::runtime::Handle::current(),
        );
        handlers::Server::new(client, sender)
    })
    .custom_method(LOWERED_METHOD, handlers::Server::lowered)
    .finish();
    let service = ordered::Ordered::new(service, tasks.clone());
    Server::new(input, output, socket).serve(service).await;
    tasks.send(main_loop::Task::Exit);
}

/// Runs the server on stdin/stdout (`sclc lsp`); returns the process exit
/// code: 0 after `shutdown` then `exit`, 1 when the client exited without
/// `shutdown` or the runtime could not start (LSP 3.17, `exit`).
pub fn run_stdio(options: Options) -> i32 {
    // Requests run the compiler on the runtime's blocking threads: they get
    // the compiler's stack (`scl_ide::COMPILER_STACK_SIZE`, address space
    // only) and are kept between requests, so no request starts a thread.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(scl_ide::COMPILER_STACK_SIZE)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the language server's runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(serve(input::stdin(), tokio::io::stdout(), options));
    // Do not wait for blocking tasks still running on stale snapshots.
    runtime.shutdown_background();
    if handlers::SHUT_DOWN.load(std::sync::atomic::Ordering::SeqCst) {
        0
    } else {
        1
    }
}
