//! `sclc submit`, `status`, `logs`, `delete` (Kubernetes through kube).
//!
//! - `--dry-run` on the examples (a Job, a PyTorchJob): snapshots, and the
//!   printed YAML passes `scripts/validate-manifests.py`
//!   (kubernetes-validate strict, the Kubeflow CRD's schema);
//! - no kubeconfig, an unreachable or TLS-failing server, refused
//!   credentials: exit 3 and one line; a bad `--namespace`: exit 2;
//! - the real binaries against an in-process HTTP/1.1 server standing in
//!   for the API server (no API server can run here): the requests sclc
//!   makes (method, path, query, headers, body) are recorded and checked —
//!   the apply body is the object `--dry-run` prints — and the server's
//!   answers (a Job's status, a pod list, logs) are what sclc prints from.
//!   The fake answers as the API server's REST interface is documented; it
//!   is not a Kubernetes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

const BERT: &str = "examples/bert-finetune/train.env.scl";
const RESNET: &str = "examples/resnet50-ddp/resnet50.env.scl";

/// Runs `sclc args` in the repository with `HOME` = `home`, `KUBECONFIG`
/// = `kubeconfig` (unset when `None`), and no in-cluster variables.
fn sclc(home: &Path, kubeconfig: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sclc"));
    c.args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("HOME", home)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT");
    match kubeconfig {
        Some(k) => c.env("KUBECONFIG", k),
        None => c.env_remove("KUBECONFIG"),
    };
    c.output().expect("sclc runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The `error:` lines of stderr (diagnostics' warnings left out).
fn error_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("error"))
        .map(String::from)
        .collect()
}

/// `text` (the YAML sclc printed) validated by
/// `scripts/validate-manifests.py`; the documents as PyYAML (YAML 1.1, as
/// Kubernetes reads) parsed them, or `None` when the tools are missing and
/// `SCL_SKIP_TOOLS=1`.
fn validated(text: &str) -> Option<serde_json::Value> {
    let repo = repo();
    let python = repo.join(".venv/bin/python");
    let has_tools = Command::new(&python)
        .args(["-c", "import kubernetes_validate, jsonschema, yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_tools {
        if std::env::var("SCL_SKIP_TOOLS").as_deref() == Ok("1") {
            eprintln!("SKIPPED: .venv lacks kubernetes-validate/jsonschema and SCL_SKIP_TOOLS=1");
            return None;
        }
        panic!("kubernetes-validate not found in .venv: run scripts/install-test-tools.sh (or set SCL_SKIP_TOOLS=1 to skip knowingly)");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k8s.yaml");
    std::fs::write(&file, text).unwrap();
    let o = Command::new(&python)
        .arg(repo.join("scripts/validate-manifests.py"))
        .arg("--schemas")
        .arg(repo.join("crates/scl-backends/tests/schemas"))
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "{text}");
    Some(v["parsed"].clone())
}

#[test]
fn dry_run_of_a_job_validates() {
    let home = tempfile::tempdir().unwrap();
    let o = sclc(
        home.path(),
        None,
        &[
            "submit",
            "--dry-run",
            BERT,
            "--image-repo",
            "registry.example.com/ml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // No kubeconfig and no --namespace: `default`.
    assert!(text.contains("\n  namespace: default\n"), "{text}");
    insta::assert_snapshot!("dry_run_bert_train_job", text);
    if let Some(docs) = validated(&text) {
        assert_eq!(docs[0]["kind"], "Job");
        assert_eq!(docs[0]["metadata"]["namespace"], "default");
    }
}

/// The book's "From laptop to cluster": `submit --dry-run` prints the Job
/// the chapter shows (it quotes this output), and it validates.
#[test]
fn dry_run_of_the_book_example_is_what_the_chapter_shows() {
    let home = tempfile::tempdir().unwrap();
    let o = sclc(
        home.path(),
        None,
        &[
            "submit",
            "--dry-run",
            "examples/laptop-to-cluster/train.env.scl",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let chapter = std::fs::read_to_string(repo().join("book/src/laptop-to-cluster.md")).unwrap();
    assert!(
        chapter.contains(&format!("```yaml\n{text}```\n")),
        "book/src/laptop-to-cluster.md does not show this output:\n{text}"
    );
    if let Some(docs) = validated(&text) {
        assert_eq!(docs[0]["kind"], "Job");
    }
}

#[test]
fn dry_run_of_a_pytorchjob_validates() {
    let home = tempfile::tempdir().unwrap();
    let o = sclc(
        home.path(),
        None,
        &["submit", "--dry-run", RESNET, "-n", "ml"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    insta::assert_snapshot!("dry_run_resnet50_pytorchjob", text);
    if let Some(docs) = validated(&text) {
        assert_eq!(docs.as_array().unwrap().len(), 1);
        assert_eq!(docs[0]["kind"], "PyTorchJob");
        assert_eq!(docs[0]["metadata"]["namespace"], "ml");
    }
}

/// `--dry-run` takes the namespace from the kube context, without
/// contacting the (here unreachable) server.
#[test]
fn dry_run_reads_the_contexts_namespace_only() {
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), "http://127.0.0.1:1");
    let o = sclc(home.path(), Some(&kc), &["submit", "--dry-run", BERT]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\n  namespace: ml\n"));
}

#[test]
fn without_a_kubeconfig_every_command_exits_3_with_one_line() {
    let home = tempfile::tempdir().unwrap();
    for cmd in ["submit", "status", "logs", "delete"] {
        let o = sclc(home.path(), None, &[cmd, BERT]);
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", stderr(&o));
        assert_eq!(
            error_lines(&o),
            ["error: no Kubernetes cluster: no kubeconfig (KUBECONFIG is unset and ~/.kube/config does not exist) and not in a pod"],
            "{cmd}"
        );
        assert_eq!(stdout(&o), "", "{cmd}");
    }
}

#[test]
fn a_missing_kubeconfig_file_is_named() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nope.yaml");
    let o = sclc(home.path(), Some(&missing), &["status", BERT]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        error_lines(&o),
        [format!(
            "error: cannot read the kubeconfig {}: no such file or directory",
            missing.display()
        )]
    );
}

#[test]
fn a_bad_namespace_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    for ns in ["Bad_NS", "-x", "", &"a".repeat(64)] {
        let flag = format!("--namespace={ns}");
        let o = sclc(home.path(), None, &["submit", "--dry-run", BERT, &flag]);
        assert_eq!(o.status.code(), Some(2), "{ns:?}");
        assert_eq!(
            error_lines(&o),
            [format!("error: --namespace {ns:?} is not a namespace name (an RFC 1123 label: at most 63 characters of a-z, 0-9 and `-`, starting and ending with a letter or digit)")]
        );
        assert_eq!(stdout(&o), "");
    }
    let o = sclc(home.path(), None, &["status", BERT, "-n", "UPPER"]);
    assert_eq!(o.status.code(), Some(2));
}

// ---------------------------------------------------------------------
// The in-process API server.

/// One request as the fake server read it.
#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

/// A fake API server on 127.0.0.1: every request recorded, answered by
/// [`answer`].
struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<Req>>>,
}

impl Fake {
    fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let recorded = recorded.clone();
                std::thread::spawn(move || connection(stream, &recorded));
            }
        });
        Fake { url, requests }
    }

    /// The requests recorded so far, and clears them.
    fn take(&self) -> Vec<Req> {
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// Serves HTTP/1.1 requests on one (keep-alive) connection until it closes.
fn connection(stream: TcpStream, recorded: &Mutex<Vec<Req>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return;
        };
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let query: BTreeMap<String, String> = query
            .split('&')
            .filter(|q| !q.is_empty())
            .map(|q| {
                let (k, v) = q.split_once('=').unwrap_or((q, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        let mut headers = BTreeMap::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap();
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
        assert!(
            !headers.contains_key("transfer-encoding"),
            "the fake reads Content-Length bodies only: {headers:?}"
        );
        let len: usize = headers
            .get("content-length")
            .map_or(0, |l| l.parse().unwrap());
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let req = Req {
            method: method.to_string(),
            path: path.to_string(),
            query,
            headers,
            body,
        };
        let (code, content_type, text) = answer(&req);
        recorded.lock().unwrap().push(req);
        let reason = match code {
            200 => "OK",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            _ => "Other",
        };
        let head = format!(
            "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

const JSON: &str = "application/json";

/// Whether the worker's log was refused once (see [`answer`]).
static WORKER_WAITED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How often the pods of `resnet50` in namespace `late` were listed: the
/// worker is there from the second list on (see [`answer`]).
static LATE_LISTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn status_json(code: u16, reason: &str, message: &str, name: Option<&str>) -> String {
    let mut s = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if let Some(n) = name {
        s["details"] = serde_json::json!({"name": n, "kind": "jobs"});
    }
    s.to_string()
}

fn pod(
    name: &str,
    container: &str,
    phase: &str,
    node: Option<&str>,
    restarts: i32,
    waiting: Option<&str>,
) -> serde_json::Value {
    let mut state = serde_json::json!({"running": {}});
    if let Some(w) = waiting {
        state = serde_json::json!({"waiting": {"reason": w}});
    }
    let mut spec = serde_json::json!({"containers": [{"name": container, "image": "x"}]});
    if let Some(n) = node {
        spec["nodeName"] = n.into();
    }
    serde_json::json!({
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
        "status": {"phase": phase, "containerStatuses": [{
            "name": container, "image": "x", "imageID": "", "ready": false,
            "restartCount": restarts, "state": state,
        }]},
    })
}

/// What the fake API server answers: namespace `ml` has the jobs
/// `bert-train` (a Job, complete) and `resnet50` (a PyTorchJob, running,
/// two pods); `locked` answers 401, `closed` 403; `bare` serves no
/// PyTorchJob (404 without details, as for a missing CRD); any other
/// object is not found (404 naming it).
fn answer(r: &Req) -> (u16, &'static str, String) {
    let segs: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
    let ns = segs
        .iter()
        .position(|s| *s == "namespaces")
        .and_then(|i| segs.get(i + 1))
        .copied()
        .unwrap_or("");
    let last = segs.last().copied().unwrap_or("");
    match ns {
        "locked" => return (401, JSON, status_json(401, "Unauthorized", "Unauthorized", None)),
        "closed" => {
            return (403, JSON, status_json(403, "Forbidden",
                "jobs.batch \"bert-train\" is forbidden: User \"dev\" cannot patch resource \"jobs\" in API group \"batch\" in the namespace \"closed\"", None))
        }
        "bare" if r.path.starts_with("/apis/kubeflow.org/") => {
            return (404, JSON, status_json(404, "NotFound", "the server could not find the requested resource", None))
        }
        _ => {}
    }
    match (r.method.as_str(), r.path.as_str()) {
        ("PATCH", _) => (200, JSON, String::from_utf8(r.body.clone()).unwrap()),
        // Namespace `late`: a PyTorchJob whose worker pod appears after
        // the first list of its pods.
        ("GET", "/apis/kubeflow.org/v1/namespaces/late/pytorchjobs/resnet50") => (200, JSON, serde_json::json!({
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "resnet50", "namespace": "late"}, "spec": {}, "status": {},
        }).to_string()),
        ("GET", "/api/v1/namespaces/late/pods") => {
            let n = LATE_LISTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut items = vec![pod("resnet50-master-0", "pytorch", "Running", Some("gpu-a"), 0, None)];
            if n > 0 {
                items.push(pod("resnet50-worker-0", "pytorch", "Running", Some("gpu-b"), 0, None));
            }
            (200, JSON, serde_json::json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}).to_string())
        }
        ("GET", p) if p.starts_with("/api/v1/namespaces/late/pods/") && last == "log" => {
            let pod = segs[segs.len() - 2];
            (200, "text/plain", format!("{pod}: epoch 1\n"))
        }
        ("GET", "/apis/batch/v1/namespaces/ml/jobs/bert-train") => (200, JSON, serde_json::json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "bert-train", "namespace": "ml"},
            "spec": {},
            "status": {"succeeded": 1, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
            ]},
        }).to_string()),
        ("GET", "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/resnet50") | ("DELETE", "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/resnet50") => (200, JSON, serde_json::json!({
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "resnet50", "namespace": "ml"},
            "spec": {},
            "status": {
                "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 0}},
                "conditions": [
                    {"type": "Created", "status": "True", "reason": "PyTorchJobCreated", "message": "PyTorchJob ml/resnet50 is created."},
                    {"type": "Running", "status": "True", "reason": "PyTorchJobRunning", "message": "PyTorchJob ml/resnet50 is running."},
                ],
            },
        }).to_string()),
        ("GET", "/api/v1/namespaces/ml/pods") => {
            let items = match r.query.get("labelSelector").map(String::as_str) {
                Some("training.kubeflow.org/job-name=resnet50") => vec![
                    pod("resnet50-worker-0", "pytorch", "Pending", Some("gpu-b"), 0, Some("ImagePullBackOff")),
                    pod("resnet50-master-0", "pytorch", "Running", Some("gpu-a"), 1, None),
                ],
                Some("batch.kubernetes.io/job-name=bert-train") => {
                    vec![pod("bert-train-x7k2p", "bert-train", "Succeeded", Some("gpu-a"), 0, None)]
                }
                _ => vec![],
            };
            (200, JSON, serde_json::json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}).to_string())
        }
        ("GET", p) if p.starts_with("/api/v1/namespaces/ml/pods/") && last == "log" => {
            let pod = segs[segs.len() - 2];
            // The worker's container starts late: the first request to
            // follow it is refused as the API server does.
            if pod == "resnet50-worker-0"
                && r.query.get("follow").map(String::as_str) == Some("true")
                && !WORKER_WAITED.swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                return (400, JSON, status_json(400, "BadRequest",
                    "container \"pytorch\" in pod \"resnet50-worker-0\" is waiting to start: ContainerCreating", None));
            }
            (200, "text/plain", format!("{pod}: epoch 1\n{pod}: epoch 2\n"))
        }
        _ => (404, JSON, status_json(404, "NotFound", &format!("\"{last}\" not found"), Some(last))),
    }
}

/// A kubeconfig (context `fake`, namespace `ml`, a bearer token) for
/// `server`, written in `dir`.
fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join(format!("kubeconfig-{}", dir.read_dir().unwrap().count()));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: {server}
contexts:
- name: fake
  context:
    cluster: fake
    user: dev
    namespace: ml
current-context: fake
users:
- name: dev
  user:
    token: t0ken
"
        ),
    )
    .unwrap();
    path
}

/// The apply request of `submit`: PATCH to the object's URL, field manager
/// `sclc`, forced, `application/apply-patch+yaml`, the bearer token, and
/// the body is the object `--dry-run` prints.
fn check_apply(file: &str, path: &str, kind: &str) {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let dry = sclc(home.path(), Some(&kc), &["submit", "--dry-run", file]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(fake.take().is_empty(), "--dry-run contacted the server");

    let o = sclc(home.path(), Some(&kc), &["submit", file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let name = path.rsplit('/').next().unwrap();
    let api_version = if kind == "Job" {
        "batch/v1"
    } else {
        "kubeflow.org/v1"
    };
    assert_eq!(
        stdout(&o),
        format!("applied {api_version} {kind} ml/{name}\n")
    );
    assert!(
        stderr(&o).contains(&format!(
            "hint: `sclc status {file}` shows its state, `sclc logs --follow {file}` its output"
        )),
        "{}",
        stderr(&o)
    );
    let reqs = fake.take();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let r = &reqs[0];
    assert_eq!(r.method, "PATCH");
    assert_eq!(r.path, path);
    assert_eq!(
        r.query,
        BTreeMap::from([
            ("fieldManager".to_string(), "sclc".to_string()),
            ("force".to_string(), "true".to_string()),
        ])
    );
    assert_eq!(r.headers["content-type"], "application/apply-patch+yaml");
    assert_eq!(r.headers["authorization"], "Bearer t0ken");
    let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["metadata"]["namespace"], "ml");
    if let Some(printed) = validated(&stdout(&dry)) {
        assert_eq!(
            printed,
            serde_json::json!([body]),
            "the applied body is not what --dry-run printed"
        );
    }
}

#[test]
fn submit_applies_a_job_server_side() {
    check_apply(BERT, "/apis/batch/v1/namespaces/ml/jobs/bert-train", "Job");
}

#[test]
fn submit_applies_a_pytorchjob_server_side() {
    check_apply(
        RESNET,
        "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/resnet50",
        "PyTorchJob",
    );
}

#[test]
fn submit_into_a_namespace() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(home.path(), Some(&kc), &["submit", BERT, "-n", "team-a"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "applied batch/v1 Job team-a/bert-train\n");
    assert!(stderr(&o).contains(&format!("`sclc status {BERT} -n team-a`")));
    let reqs = fake.take();
    assert_eq!(
        reqs[0].path,
        "/apis/batch/v1/namespaces/team-a/jobs/bert-train"
    );
    let body: serde_json::Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["metadata"]["namespace"], "team-a");
}

#[test]
fn status_of_a_job_and_of_a_pytorchjob() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(home.path(), Some(&kc), &["status", BERT]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("status_bert_train_job", stdout(&o));
    let reqs = fake.take();
    let seen: Vec<(String, String)> = reqs
        .iter()
        .map(|r| (r.method.clone(), r.path.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "GET".into(),
                "/apis/batch/v1/namespaces/ml/jobs/bert-train".into()
            ),
            ("GET".into(), "/api/v1/namespaces/ml/pods".into()),
        ]
    );
    assert_eq!(
        reqs[1].query["labelSelector"],
        "batch.kubernetes.io/job-name=bert-train"
    );

    let o = sclc(home.path(), Some(&kc), &["status", RESNET]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("status_resnet50_pytorchjob", stdout(&o));
    let reqs = fake.take();
    assert_eq!(
        reqs[1].query["labelSelector"],
        "training.kubeflow.org/job-name=resnet50"
    );
}

#[test]
fn status_of_a_job_not_submitted_exits_1() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(home.path(), Some(&kc), &["status", BERT, "-n", "empty"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        error_lines(&o),
        [format!("error: no Job `bert-train` in namespace `empty`: submit it with `sclc submit {BERT} -n empty`")]
    );
    assert_eq!(stdout(&o), "");
    let o = sclc(home.path(), Some(&kc), &["logs", RESNET, "-n", "empty"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        error_lines(&o),
        [format!("error: no PyTorchJob `resnet50` in namespace `empty`: submit it with `sclc submit {RESNET} -n empty`")]
    );
}

#[test]
fn logs_of_every_pod_prefixed() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(home.path(), Some(&kc), &["logs", RESNET]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Pod by pod, in name order.
    assert_eq!(
        stdout(&o),
        "[resnet50-master-0] resnet50-master-0: epoch 1\n\
         [resnet50-master-0] resnet50-master-0: epoch 2\n\
         [resnet50-worker-0] resnet50-worker-0: epoch 1\n\
         [resnet50-worker-0] resnet50-worker-0: epoch 2\n"
    );
    let logs: Vec<Req> = fake
        .take()
        .into_iter()
        .filter(|r| r.path.ends_with("/log"))
        .collect();
    assert_eq!(logs.len(), 2);
    for r in &logs {
        assert_eq!(r.method, "GET");
        assert_eq!(
            r.query.get("container").map(String::as_str),
            Some("pytorch")
        );
        assert!(!r.query.contains_key("follow"));
    }

    // --follow: both pods' streams at once, every line printed.
    let o = sclc(home.path(), Some(&kc), &["logs", "--follow", RESNET]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "[resnet50-master-0] resnet50-master-0: epoch 1",
            "[resnet50-master-0] resnet50-master-0: epoch 2",
            "[resnet50-worker-0] resnet50-worker-0: epoch 1",
            "[resnet50-worker-0] resnet50-worker-0: epoch 2",
        ]
    );
    let logs: Vec<Req> = fake
        .take()
        .into_iter()
        .filter(|r| r.path.ends_with("/log"))
        .collect();
    // The worker's, asked again after the 400.
    assert_eq!(logs.len(), 3);
    assert!(logs
        .iter()
        .all(|r| r.query.get("follow").map(String::as_str) == Some("true")));
    assert!(
        stderr(&o).contains("note: pod resnet50-worker-0 has not started: container \"pytorch\" in pod \"resnet50-worker-0\" is waiting to start: ContainerCreating; waiting for it\n"),
        "{}",
        stderr(&o)
    );

    // One pod: no prefix.
    let o = sclc(home.path(), Some(&kc), &["logs", BERT]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "bert-train-x7k2p: epoch 1\nbert-train-x7k2p: epoch 2\n"
    );
}

#[test]
fn delete_in_the_background() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(home.path(), Some(&kc), &["delete", RESNET]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "deleted kubeflow.org/v1 PyTorchJob ml/resnet50\n"
    );
    let reqs = fake.take();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "DELETE");
    assert_eq!(
        reqs[0].path,
        "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/resnet50"
    );
    let body: serde_json::Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["propagationPolicy"], "Background", "{body}");

    // Not there: a note, exit 0.
    let o = sclc(home.path(), Some(&kc), &["delete", BERT, "-n", "empty"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("note: no Job `bert-train` in namespace `empty`: nothing to delete")
    );
}

#[test]
fn refusals_and_failures_are_one_line_and_exit_3() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let at = format!("the Kubernetes API at {} (context fake)", fake.url);
    let cases: [(&[&str], String); 4] = [
        (&["submit", BERT, "-n", "locked"], format!("error: {at} refused the credentials (401 Unauthorized) while applying batch/v1 Job locked/bert-train: Unauthorized")),
        (&["submit", BERT, "-n", "closed"], format!("error: {at} forbids applying batch/v1 Job closed/bert-train (403 Forbidden): jobs.batch \"bert-train\" is forbidden: User \"dev\" cannot patch resource \"jobs\" in API group \"batch\" in the namespace \"closed\"")),
        (&["submit", RESNET, "-n", "bare"], format!("error: {at} does not serve kubeflow.org/v1 PyTorchJob (is the Kubeflow training operator installed?)")),
        (&["status", RESNET, "-n", "bare"], format!("error: {at} does not serve kubeflow.org/v1 PyTorchJob (is the Kubeflow training operator installed?)")),
    ];
    for (args, line) in cases {
        let o = sclc(home.path(), Some(&kc), args);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", stderr(&o));
        assert_eq!(error_lines(&o), [line], "{args:?}");
        assert_eq!(stdout(&o), "");
    }
}

#[test]
fn an_unreachable_server_is_one_line_and_exit_3() {
    let home = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then close it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!("https://127.0.0.1:{port}");
    let kc = kubeconfig(home.path(), &server);
    let o = sclc(home.path(), Some(&kc), &["submit", BERT]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(
        error_lines(&o),
        [format!(
            "error: cannot reach the Kubernetes API at {server} (context fake): connection refused"
        )]
    );
}

#[test]
fn a_tls_failure_is_one_line_and_exit_3() {
    // A server that answers plain HTTP where TLS is expected.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let home = tempfile::tempdir().unwrap();
    let server = format!("https://127.0.0.1:{port}");
    let kc = kubeconfig(home.path(), &server);
    let o = sclc(home.path(), Some(&kc), &["status", BERT]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let lines = error_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let prefix = format!("error: cannot reach the Kubernetes API at {server} (context fake): ");
    assert!(lines[0].starts_with(&prefix), "{lines:?}");
    insta::assert_snapshot!("tls_failure_cause", &lines[0][prefix.len()..]);
}

/// `submit` without `--image-repo` runs the image `sclc image build
/// --push` pushed for the env as it is now (by `scl.lock`), and warns when
/// there is none (a name without a registry, which nodes cannot pull).
#[test]
fn submit_runs_the_pushed_image_of_the_lock() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for f in ["train.env.scl", "train.py"] {
        std::fs::copy(
            repo().join("examples/laptop-to-cluster").join(f),
            dir.path().join(f),
        )
        .unwrap();
    }
    let dry_run = || {
        Command::new(env!("CARGO_BIN_EXE_sclc"))
            .args(["submit", "--dry-run", "train.env.scl"])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("HOME", home.path())
            .env_remove("KUBECONFIG")
            .output()
            .unwrap()
    };
    let before = dry_run();
    assert_eq!(before.status.code(), Some(0), "{}", stderr(&before));
    assert!(
        stderr(&before).starts_with("warning: the pods run an image named without a registry"),
        "{}",
        stderr(&before)
    );
    let out = stdout(&before);
    let tag = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("image: train:"))
        .expect("the image line")
        .to_string();
    let lock = |t: &str, digest: bool| {
        let d = if digest {
            format!(
                "digest = \"registry.example.com/team/train@sha256:{}\"\n",
                "c".repeat(64)
            )
        } else {
            String::new()
        };
        format!(
            "version = 1\n\n[[image]]\nfile = \"train.env.scl\"\nenv = \"train\"\nreference = \"registry.example.com/team/train:{t}\"\ntag = \"{t}\"\nid = \"sha256:{}\"\n{d}",
            "a".repeat(64)
        )
    };
    // Pushed, same tag: that repository.
    std::fs::write(dir.path().join("scl.lock"), lock(&tag, true)).unwrap();
    let after = dry_run();
    assert_eq!(
        stderr(&after),
        "note: the pods run the image pushed to registry.example.com/team/train (scl.lock)\n"
    );
    assert_eq!(
        stdout(&after),
        out.replace(
            &format!("image: train:{tag}"),
            &format!("image: registry.example.com/team/train:{tag}")
        )
    );
    // Built but not pushed, or pushed for another tag: not used.
    for l in [lock(&tag, false), lock("0000000000000000", true)] {
        std::fs::write(dir.path().join("scl.lock"), l).unwrap();
        let o = dry_run();
        assert_eq!(stdout(&o), out);
        assert!(stderr(&o).starts_with("warning: the pods run an image named without a registry"));
    }
}

/// `logs --follow` follows a pod that appears after it started (a
/// PyTorchJob's worker created later), prefixed like the first.
#[test]
fn logs_follow_picks_up_pods_that_start_later() {
    let fake = Fake::start();
    let home = tempfile::tempdir().unwrap();
    let kc = kubeconfig(home.path(), &fake.url);
    let o = sclc(
        home.path(),
        Some(&kc),
        &["logs", "--follow", RESNET, "-n", "late"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[resnet50-master-0] resnet50-master-0: epoch 1\n[resnet50-worker-0] resnet50-worker-0: epoch 1\n"
    );
}
