//! A minimal LSP client over a child process's stdio: what the end-to-end
//! tests and the editor-latency benchmark (`xtask bench`) drive `sclc lsp`
//! with. Messages are JSON-RPC 2.0 with `Content-Length` framing (LSP 3.17
//! §"Base Protocol"). A reader thread answers the server's own requests
//! (`client/registerCapability`, refreshes) with `null` and queues
//! everything else; each message is stamped with when it arrived.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a wait for a message gives up after.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// A server process and the messages it sent.
pub struct Client {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    rx: Receiver<(Instant, Value)>,
    /// Messages read but not yet asked for (responses and notifications),
    /// with their arrival times.
    queue: VecDeque<(Instant, Value)>,
    next_id: i64,
}

fn write_message(w: &mut impl Write, v: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(v)?;
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}

/// Reads one framed message; `None` at the end of the stream.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    /// Starts `program args…` (`sclc lsp`) in `cwd` and initializes it with
    /// `root` as the one workspace folder. `pull`: the client says it asks
    /// for diagnostics itself (`textDocument.diagnostic`), so the server
    /// pushes none. Returns the client and the `initialize` result.
    ///
    /// # Panics
    /// When the program cannot be started or does not answer (a test's
    /// failure).
    pub fn start(program: &Path, args: &[&str], root: &Path, pull: bool) -> (Client, Value) {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let stdin = Arc::new(Mutex::new(child.stdin.take().expect("piped stdin")));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let answer = stdin.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                let at = Instant::now();
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    // A request of the server's: accept it.
                    let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": null});
                    let _ = write_message(&mut *answer.lock().unwrap(), &reply);
                }
                if tx.send((at, msg)).is_err() {
                    return;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            rx,
            queue: VecDeque::new(),
            next_id: 0,
        };
        let uri = uri(root);
        let mut caps = json!({
            "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } },
            "textDocument": { "hover": { "contentFormat": ["markdown"] } }
        });
        if pull {
            caps["textDocument"]["diagnostic"] = json!({ "dynamicRegistration": false });
        }
        let init = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri,
                "workspaceFolders": [{ "uri": uri, "name": "ws" }],
                "capabilities": caps,
            }),
        );
        c.notify("initialized", json!({}));
        (c, init)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        write_message(&mut *self.stdin.lock().unwrap(), &msg).expect("write to the server");
    }

    /// A new request id (for [`Client::send_at_once`]).
    pub fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Writes `messages` (whole JSON-RPC messages, `jsonrpc` included) in
    /// one write, so that the server reads them together.
    pub fn send_at_once(&mut self, messages: &[Value]) {
        let mut buf = Vec::new();
        for m in messages {
            write_message(&mut buf, m).expect("write to memory");
        }
        let mut w = self.stdin.lock().unwrap();
        w.write_all(&buf)
            .and_then(|()| w.flush())
            .expect("write to the server");
    }

    /// Writes `bytes` as they are (a malformed frame, for a test).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let mut w = self.stdin.lock().unwrap();
        w.write_all(bytes)
            .and_then(|()| w.flush())
            .expect("write to the server");
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        write_message(&mut *self.stdin.lock().unwrap(), &msg).expect("write to the server");
        id
    }

    /// The response to request `id` (the whole message: `result` or
    /// `error`), waiting for it.
    ///
    /// # Panics
    /// After [`TIMEOUT`] without it.
    pub fn response(&mut self, id: i64) -> Value {
        self.wait_for(|m| m.get("method").is_none() && m["id"] == json!(id))
            .1
    }

    /// Sends a request and returns its `result` (`Value::Null` for an error
    /// response; [`Client::response`] gives the whole message).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)["result"].clone()
    }

    /// The first message (queued or new) that `pred` accepts, removed from
    /// the queue, with when it arrived.
    ///
    /// # Panics
    /// After [`TIMEOUT`] without one, or when the server exits.
    pub fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> (Instant, Value) {
        if let Some(i) = self.queue.iter().position(|(_, m)| pred(m)) {
            return self.queue.remove(i).expect("index from position");
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((at, m)) => {
                    if pred(&m) {
                        return (at, m);
                    }
                    self.queue.push_back((at, m));
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no such message from the server in {TIMEOUT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => panic!("the server exited"),
            }
        }
    }

    /// The next `textDocument/publishDiagnostics` for `uri` whose params
    /// `pred` accepts (earlier ones for it are dropped), with when it
    /// arrived.
    pub fn diagnostics(&mut self, uri: &str, pred: impl Fn(&Value) -> bool) -> (Instant, Value) {
        let (at, m) = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && pred(&m["params"])
        });
        (at, m["params"].clone())
    }

    /// Every message that arrives until none has for `quiet`, appended to
    /// the queue; returns the queue's messages (oldest first) with when
    /// they arrived.
    pub fn settle(&mut self, quiet: Duration) -> Vec<(Instant, Value)> {
        while let Ok(m) = self.rx.recv_timeout(quiet) {
            self.queue.push_back(m);
        }
        self.queue.iter().cloned().collect()
    }

    /// `shutdown`, then `exit`; the process's exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.child.wait().expect("wait for the server")
    }

    /// The exit status, if the server has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The server's process id (to read its memory use).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `file:` URI of an absolute path (percent-encoding what a URI cannot
/// hold; RFC 8089).
pub fn uri(path: &Path) -> String {
    tower_lsp_server::ls_types::Uri::from_file_path(path)
        .map(|u| u.as_str().to_string())
        .unwrap_or_else(|| format!("file://{}", path.display()))
}
