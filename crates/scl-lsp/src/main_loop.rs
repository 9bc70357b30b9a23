//! The one thread that owns the database: it applies changes in the order
//! they were sent, hands out snapshots, and checks the open files after
//! each batch of changes.

use crate::convert;
use scl_ide::{Analysis, AnalysisHost, FileId, OsSystem, System};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
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
    /// A request's snapshot, taken after every change sent before it: of
    /// the workspace of the file it is about (`None`: the editor's).
    Snapshot(Option<PathBuf>, tokio::sync::oneshot::Sender<Analysis>),
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
    /// The root of its workspace (the host that checks it).
    root: PathBuf,
}

/// What was last published per URI: the version and the diagnostics.
type Published = Arc<Mutex<HashMap<Uri, (Option<i32>, Vec<lsp::Diagnostic>)>>>;

/// Whether to log timings to stderr (`SCL_LSP_TRACE=1`): each batch of
/// changes applied and each file checked, in microseconds.
fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SCL_LSP_TRACE").is_some_and(|v| v != "0"))
}

/// The open files of one workspace to check, in order: URI, version, id.
type Files = Vec<(Uri, i32, FileId)>;

/// One check of the open files: per workspace, a snapshot and its files.
struct Job {
    groups: Vec<(Analysis, Files)>,
    /// Publish the open files' own diagnostics (false when the client pulls
    /// them: only other modules' are pushed then).
    push_open: bool,
}

struct Loop {
    /// One database per workspace root: a file is checked in the workspace
    /// `sclc check FILE` would use (the nearest folder at or above it that
    /// holds `scl.toml`, else its folder). Every host sees every open
    /// buffer (a module of one workspace may be imported from another's
    /// files only if it is inside it, but the hosts need not know that).
    hosts: HashMap<PathBuf, AnalysisHost>,
    /// The workspace root of a path, found once (cleared when files change
    /// on disk: an `scl.toml` may have appeared).
    roots: HashMap<PathBuf, PathBuf>,
    /// The editor's root: the workspace of requests about no file.
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
        hosts: HashMap::new(),
        roots: HashMap::new(),
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
                    Task::Snapshot(path, reply) => {
                        let root = match path {
                            Some(p) => self.root_of(&p),
                            None => self.default_root(),
                        };
                        let snap = self.host(&root).analysis();
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

    /// The workspace root of `path`, as `sclc check` finds it.
    fn root_of(&mut self, path: &Path) -> PathBuf {
        if let Some(r) = self.roots.get(path) {
            return r.clone();
        }
        let r = AnalysisHost::workspace_root(&OsSystem, path);
        self.roots.insert(path.to_path_buf(), r.clone());
        r
    }

    /// The editor's root, else the current folder.
    fn default_root(&self) -> PathBuf {
        self.root.clone().unwrap_or_else(|| OsSystem.current_dir())
    }

    /// The database of the workspace at `root`, made with every open
    /// buffer on first use.
    fn host(&mut self, root: &Path) -> &mut AnalysisHost {
        if !self.hosts.contains_key(root) {
            let system: Arc<dyn System> = Arc::new(OsSystem);
            let mut host = AnalysisHost::new(system, root, self.stdlib.clone());
            for (path, doc) in &self.docs {
                host.set_overlay(path, &doc.text);
            }
            self.hosts.insert(root.to_path_buf(), host);
        }
        self.hosts.get_mut(root).expect("inserted above")
    }

    /// Applies one change; returns the path of a buffer it edited.
    fn apply(&mut self, task: Task) -> Option<PathBuf> {
        match task {
            Task::Init { root, push } => {
                // As the CLI does: the nearest folder at or above the
                // editor's that holds `scl.toml`, else the editor's folder.
                self.root = root.map(|r| AnalysisHost::workspace_root(&OsSystem, &r));
                self.push = push;
                None
            }
            Task::Open {
                uri,
                path,
                version,
                text,
            } => {
                let root = self.root_of(&path);
                if self.root.is_none() {
                    // No workspace folder: the first file's workspace is it.
                    self.root = Some(root.clone());
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
                self.host(&root);
                for host in self.hosts.values_mut() {
                    host.set_overlay(&path, &text);
                }
                self.docs.insert(
                    path.clone(),
                    Doc {
                        uri,
                        version,
                        text,
                        root,
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
                for host in self.hosts.values_mut() {
                    host.set_overlay(&path, &text);
                }
                Some(path)
            }
            Task::Close { path } => {
                if let Some(doc) = self.docs.remove(&path) {
                    for host in self.hosts.values_mut() {
                        host.remove_overlay(&path);
                    }
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
                for host in self.hosts.values_mut() {
                    if folder {
                        host.did_change_all_files();
                    } else {
                        host.did_change_files(&paths);
                    }
                }
                // An `scl.toml` may have appeared or gone.
                self.roots.clear();
                if !self.push {
                    let client = self.client.clone();
                    self.runtime.spawn(async move {
                        let _ = client.workspace_diagnostic_refresh().await;
                    });
                }
                None
            }
            Task::Snapshot(..) | Task::Exit => None,
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
        let mut order: Vec<PathBuf> = Vec::new();
        let mut seen: HashSet<&PathBuf> = HashSet::new();
        for path in edited.iter().chain(self.docs.keys()) {
            if self.docs.contains_key(path) && seen.insert(path) {
                order.push(path.clone());
            }
        }
        // One group per workspace, in the order of their first file.
        type ByPath = Vec<(Uri, i32, PathBuf)>;
        let mut groups: Vec<(PathBuf, ByPath)> = Vec::new();
        for path in order {
            let doc = &self.docs[&path];
            let entry = (doc.uri.clone(), doc.version, path.clone());
            match groups.iter_mut().find(|(r, _)| *r == doc.root) {
                Some((_, fs)) => fs.push(entry),
                None => groups.push((doc.root.clone(), vec![entry])),
            }
        }
        let groups: Vec<(Analysis, Files)> = groups
            .into_iter()
            .map(|(root, files)| {
                let host = self.host(&root);
                let files = files
                    .into_iter()
                    .map(|(u, v, p)| (u, v, host.file(&p)))
                    .collect();
                (host.analysis(), files)
            })
            .collect();
        if let Some(jobs) = &self.jobs {
            // A checker that is gone (it cannot start) drops the job here.
            let _ = jobs.send(Job {
                groups,
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
    let Job { groups, push_open } = job;
    let open: HashSet<Uri> = groups
        .iter()
        .flat_map(|(_, fs)| fs.iter().map(|(u, _, _)| u.clone()))
        .collect();
    let mut elsewhere: HashMap<Uri, Vec<lsp::Diagnostic>> = HashMap::new();
    for (snap, files) in &groups {
        for (uri, version, file) in files.iter().cloned() {
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
