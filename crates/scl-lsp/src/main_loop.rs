//! The one thread that owns the database: it applies changes in the order
//! they were sent, hands out snapshots, and checks the open files after
//! each batch of changes.

use crate::convert;
use scl_ide::{Analysis, AnalysisHost, FileId, OsSystem, System};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use tower_lsp_server::ls_types::{self as lsp, Uri};
use tower_lsp_server::Client;

/// A change to the database or a question for it, in the client's order.
pub enum Task {
    /// `initialize`: the workspace root (a workspace folder or the root URI;
    /// `None`: each opened file's own root) and whether to push diagnostics
    /// (the client does not pull them).
    Init { root: Option<PathBuf>, push: bool },
    /// `textDocument/didOpen`: the buffer overlays the file on disk.
    Open {
        uri: Uri,
        path: PathBuf,
        version: i32,
        text: String,
    },
    /// `textDocument/didChange`: full texts or ranges (UTF-16), in order.
    Change {
        path: PathBuf,
        version: i32,
        changes: Vec<lsp::TextDocumentContentChangeEvent>,
    },
    /// `textDocument/didClose`: the disk text is read again.
    Close { path: PathBuf },
    /// `workspace/didChangeWatchedFiles`: these files or folders changed on
    /// disk.
    Watched(Vec<PathBuf>),
    /// A request's snapshot, taken after every change sent before it.
    Snapshot(tokio::sync::oneshot::Sender<Analysis>),
    /// The server stopped: end the loop.
    Exit,
}

/// The sending side of the main loop's channel (cheap to clone).
#[derive(Clone)]
pub struct Tasks(mpsc::Sender<Task>);

impl Tasks {
    /// Sends `task`; after the loop ended this does nothing.
    pub fn send(&self, task: Task) {
        let _ = self.0.send(task);
    }
}

/// A new channel: the senders and the receiver [`spawn`] takes.
pub fn channel() -> (Tasks, mpsc::Receiver<Task>) {
    let (tx, rx) = mpsc::channel();
    (Tasks(tx), rx)
}

/// An open buffer.
struct Doc {
    uri: Uri,
    version: i32,
    text: String,
    file: FileId,
}

/// What was last published per URI: the version and the diagnostics.
type Published = Arc<Mutex<HashMap<Uri, (Option<i32>, Vec<lsp::Diagnostic>)>>>;

/// Whether to log timings to stderr (`SCL_LSP_TRACE=1`): each batch of
/// changes applied and each file checked, in microseconds.
fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SCL_LSP_TRACE").is_some_and(|v| v != "0"))
}

/// One check of the open files: a snapshot and the files, in order (URI,
/// version, file id).
struct Job {
    snap: Analysis,
    files: Vec<(Uri, i32, FileId)>,
    /// Publish the open files' own diagnostics (false when the client pulls
    /// them: only other modules' are pushed then).
    push_open: bool,
}

struct Loop {
    host: Option<AnalysisHost>,
    root: Option<PathBuf>,
    push: bool,
    stdlib: Option<PathBuf>,
    docs: HashMap<PathBuf, Doc>,
    published: Published,
    client: Client,
    runtime: tokio::runtime::Handle,
    /// The checker thread's queue.
    jobs: Option<mpsc::Sender<Job>>,
}

/// Starts the main loop on its own thread. It ends on [`Task::Exit`] or
/// when every sender is dropped.
pub fn spawn(
    rx: mpsc::Receiver<Task>,
    client: Client,
    options: crate::Options,
    runtime: tokio::runtime::Handle,
) {
    let published: Published = Arc::default();
    let (jobs, job_rx) = mpsc::channel::<Job>();
    let checker = {
        let (published, client, runtime) = (published.clone(), client.clone(), runtime.clone());
        std::thread::Builder::new()
            .name("scl-lsp-check".into())
            .stack_size(scl_ide::COMPILER_STACK_SIZE)
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    check(job, &published, &client, &runtime);
                }
            })
    };
    if let Err(e) = checker {
        eprintln!("error: cannot start the language server's checker: {e}");
    }
    let mut l = Loop {
        host: None,
        root: None,
        push: true,
        stdlib: options.stdlib,
        docs: HashMap::new(),
        published,
        client,
        runtime,
        jobs: Some(jobs),
    };
    let spawned = std::thread::Builder::new()
        .name("scl-lsp-main".into())
        .stack_size(scl_ide::COMPILER_STACK_SIZE)
        .spawn(move || l.run(rx));
    if let Err(e) = spawned {
        eprintln!("error: cannot start the language server's main loop: {e}");
    }
}

impl Loop {
    fn run(&mut self, rx: mpsc::Receiver<Task>) {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            batch.extend(rx.try_iter());
            let mut edited: Vec<PathBuf> = Vec::new();
            let mut changed = false;
            let started = std::time::Instant::now();
            let tasks = batch.len();
            for task in batch {
                match task {
                    Task::Exit => return,
                    Task::Snapshot(reply) => {
                        let snap = self.host().analysis();
                        // A request given up already drops the snapshot here.
                        let _ = reply.send(snap);
                    }
                    task => {
                        if let Some(path) = self.apply(task) {
                            edited.push(path);
                        }
                        changed = true;
                    }
                }
            }
            if tracing() && changed {
                eprintln!(
                    "scl-lsp: applied {tasks} task(s) in {} µs",
                    started.elapsed().as_micros()
                );
            }
            if changed {
                self.check_open_files(&edited);
            }
        }
    }

    fn host(&mut self) -> &mut AnalysisHost {
        let stdlib = self.stdlib.clone();
        let root = self.root.clone();
        self.host.get_or_insert_with(|| {
            let system: Arc<dyn System> = Arc::new(OsSystem);
            let root = root.unwrap_or_else(|| system.current_dir());
            AnalysisHost::new(system, &root, stdlib)
        })
    }

    /// Applies one change; returns the path of a buffer it edited.
    fn apply(&mut self, task: Task) -> Option<PathBuf> {
        match task {
            Task::Init { root, push } => {
                // As the CLI does: the nearest folder at or above the
                // editor's that holds `scl.toml`, else the editor's folder.
                let root = root.map(|r| AnalysisHost::workspace_root(&OsSystem, &r));
                self.root = root.clone();
                self.push = push;
                if let (Some(root), Some(host)) = (root, self.host.as_mut()) {
                    host.set_workspace_root(&root);
                }
                None
            }
            Task::Open {
                uri,
                path,
                version,
                text,
            } => {
                if self.root.is_none() && self.docs.is_empty() {
                    // No workspace folder: the first file's workspace is it.
                    let root = AnalysisHost::workspace_root(&OsSystem, &path);
                    self.root = Some(root.clone());
                    if let Some(host) = self.host.as_mut() {
                        host.set_workspace_root(&root);
                    }
                }
                if !self.push {
                    // Pushed while it was closed (an imported module's
                    // errors); the client pulls an open file's own.
                    let pushed = self
                        .published
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&uri);
                    if pushed.is_some_and(|(_, d)| !d.is_empty()) {
                        let client = self.client.clone();
                        self.runtime.block_on(client.publish_diagnostics(
                            uri.clone(),
                            Vec::new(),
                            None,
                        ));
                    }
                }
                let host = self.host();
                host.set_overlay(&path, &text);
                let file = host.file(&path);
                self.docs.insert(
                    path.clone(),
                    Doc {
                        uri,
                        version,
                        text,
                        file,
                    },
                );
                Some(path)
            }
            Task::Change {
                path,
                version,
                changes,
            } => {
                let doc = self.docs.get_mut(&path)?;
                if version < doc.version {
                    // Versions only grow (LSP 3.17); an older one is stale.
                    return None;
                }
                for c in changes {
                    convert::apply_change(&mut doc.text, c);
                }
                doc.version = version;
                let text = doc.text.clone();
                self.host().set_overlay(&path, &text);
                Some(path)
            }
            Task::Close { path } => {
                if let Some(doc) = self.docs.remove(&path) {
                    self.host().remove_overlay(&path);
                    self.published
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&doc.uri);
                    if self.push {
                        let client = self.client.clone();
                        self.runtime.block_on(client.publish_diagnostics(
                            doc.uri,
                            Vec::new(),
                            None,
                        ));
                    }
                }
                None
            }
            Task::Watched(paths) => {
                // An open buffer wins over the disk: re-reading it changes
                // nothing the overlay does not already say. A folder (or a
                // path that is gone and may have been one: a deleted folder
                // is one event) may hold files the database has read:
                // everything it has read is checked again then.
                let folder = paths.iter().any(|p| !p.is_file());
                if folder {
                    self.host().did_change_all_files();
                } else {
                    self.host().did_change_files(&paths);
                }
                if !self.push {
                    let client = self.client.clone();
                    self.runtime.spawn(async move {
                        let _ = client.workspace_diagnostic_refresh().await;
                    });
                }
                None
            }
            Task::Snapshot(_) | Task::Exit => None,
        }
    }

    /// Queues a check of every open file, the edited ones first, on a
    /// snapshot taken now, for the checker thread. A check still running
    /// (or queued) on an older snapshot is cancelled by the changes just
    /// applied (salsa): it publishes nothing more, and it had finished its
    /// publishing before they were applied (setting an input waits for
    /// every snapshot to be dropped), so publications keep the order of
    /// the edits.
    fn check_open_files(&mut self, edited: &[PathBuf]) {
        let mut files: Vec<(Uri, i32, FileId)> = Vec::new();
        let mut seen: HashSet<&PathBuf> = HashSet::new();
        for path in edited.iter().chain(self.docs.keys()) {
            if let Some(doc) = self.docs.get(path) {
                if seen.insert(path) {
                    files.push((doc.uri.clone(), doc.version, doc.file));
                }
            }
        }
        let snap = self.host().analysis();
        if let Some(jobs) = &self.jobs {
            // A checker that is gone (it cannot start) drops the job here.
            let _ = jobs.send(Job {
                snap,
                files,
                push_open: self.push,
            });
        }
    }
}

/// Checks the files of `job` in order and publishes each file's
/// diagnostics when they, or its version, differ from what was published
/// last; stops at the first cancellation (a newer change: its own check
/// follows) or failure (a bug: the server goes on). Then the diagnostics
/// the checks found in modules that are not open (an imported module with
/// an error: `sclc check` of the open file reports it too) are published
/// for those modules, and cleared for those that have none any more.
fn check(job: Job, published: &Published, client: &Client, runtime: &tokio::runtime::Handle) {
    let Job {
        snap,
        files,
        push_open,
    } = job;
    let open: HashSet<Uri> = files.iter().map(|(u, _, _)| u.clone()).collect();
    let mut elsewhere: HashMap<Uri, Vec<lsp::Diagnostic>> = HashMap::new();
    for (uri, version, file) in files {
        let started = std::time::Instant::now();
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            snap.catch_cancel(|a| convert::check(a, file))
        }));
        if tracing() {
            eprintln!(
                "scl-lsp: checked {} (version {version}) in {} µs{}",
                uri.as_str(),
                started.elapsed().as_micros(),
                match &answer {
                    Ok(Ok(_)) => "",
                    Ok(Err(_)) => ", cancelled",
                    Err(_) => ", failed",
                }
            );
        }
        let Ok(Ok((diags, others))) = answer else {
            return;
        };
        for (u, ds) in others {
            if !open.contains(&u) {
                let e = elsewhere.entry(u).or_default();
                for d in ds {
                    if !e.contains(&d) {
                        e.push(d);
                    }
                }
            }
        }
        if push_open {
            publish(published, client, runtime, uri, Some(version), diags);
        }
    }
    let stale: Vec<Uri> = {
        let p = published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.iter()
            .filter(|(u, (v, d))| {
                v.is_none() && !d.is_empty() && !open.contains(*u) && !elsewhere.contains_key(*u)
            })
            .map(|(u, _)| u.clone())
            .collect()
    };
    for u in stale {
        publish(published, client, runtime, u, None, Vec::new());
    }
    for (u, ds) in elsewhere {
        publish(published, client, runtime, u, None, ds);
    }
}

/// Publishes `diags` for `uri` unless they and the version are what was
/// published last.
fn publish(
    published: &Published,
    client: &Client,
    runtime: &tokio::runtime::Handle,
    uri: Uri,
    version: Option<i32>,
    diags: Vec<lsp::Diagnostic>,
) {
    let mut p = published
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if p.get(&uri)
        .is_some_and(|(v, d)| *v == version && *d == diags)
    {
        return;
    }
    p.insert(uri.clone(), (version, diags.clone()));
    drop(p);
    runtime.block_on(client.publish_diagnostics(uri, diags, version));
}
