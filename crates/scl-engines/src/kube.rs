//! Kubernetes through kube: server-side apply of the objects of the k8s
//! target's `k8s.yaml` (a `batch/v1` Job, or a `kubeflow.org/v1`
//! PyTorchJob for a distributed env), and the job's status, logs and
//! deletion.
//!
//! Two halves:
//! - pure functions: [`apply_plan`] turns the text of `k8s.yaml` into the
//!   [`Object`]s to apply (the namespace set in each), [`plan_yaml`] prints
//!   them as `sclc submit --dry-run` shows them, [`job_of`] finds the job
//!   among them, [`status_report`] words a job's state;
//! - async functions taking a [`Cluster`] (a `kube::Client` and where it
//!   points): [`apply`], [`status`], [`logs`], [`delete`]. Every failure is
//!   an [`EngineError`], one line naming the context and the API server
//!   that was tried and what failed.
//!
//! Server-side apply (Kubernetes documentation, "Server-Side Apply",
//! <https://kubernetes.io/docs/reference/using-api/server-side-apply/>): one
//! `PATCH` per object to its URL with `Content-Type:
//! application/apply-patch+yaml` and `?fieldManager=sclc&force=true`; the
//! body is the whole object (JSON, which is YAML). The API server creates the
//! object or merges the fields into it, and records `sclc` as the manager of
//! every field the body sets. `force=true` takes fields another manager set
//! (a `kubectl edit`, a client-side `kubectl apply -f k8s.yaml`) instead of
//! failing with 409 Conflict: the env file is the source of truth for every
//! field sclc writes, as a controller is for its objects (the documentation
//! recommends that controllers always force). Fields sclc does not write
//! (the Job controller's, a user's extra labels) are left alone.

use std::path::PathBuf;

use ::kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, LogParams, Patch, PatchParams,
};
use ::kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use ::kube::core::GroupVersionKind;
use ::kube::{Client, Config};
use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::EngineError;

/// The field manager sclc applies as (the `fieldManager` query parameter
/// of every apply).
pub const FIELD_MANAGER: &str = "sclc";

/// The namespace used when neither `--namespace` nor the kube context names
/// one (kubectl's default too).
pub const DEFAULT_NAMESPACE: &str = "default";

/// The label the Job controller puts on a Job's pods, with the Job's name
/// (Kubernetes 1.27 and later; "Well-Known Labels, Annotations and Taints").
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// The label the Kubeflow training operator (v1.9) puts on a PyTorchJob's
/// pods, with the job's name (`training.kubeflow.org/job-name`,
/// `pkg/apis/kubeflow.org/v1/common_types.go`: `JobNameLabel`).
pub const KUBEFLOW_JOB_NAME_LABEL: &str = "training.kubeflow.org/job-name";

/// One object to apply: its type, name and namespace, and `body`, the JSON
/// sent as the apply patch (the object of `k8s.yaml` with
/// `metadata.namespace` set).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// `batch/v1`, `kubeflow.org/v1`.
    pub api_version: String,
    /// `Job`, `PyTorchJob`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` as sent.
    pub namespace: String,
    /// The whole object, as sent.
    pub body: Value,
}

impl Object {
    /// The object's API resource: group and version from `apiVersion`,
    /// the plural by kube's rule (lower-case kind + `s`: `jobs`,
    /// `pytorchjobs`), which holds for every kind `k8s.yaml` contains.
    pub fn api_resource(&self) -> ApiResource {
        let (group, version) = match self.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", self.api_version.as_str()),
        };
        ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, &self.kind))
    }

    /// `batch/v1 Job default/bert-train`: how messages name it.
    pub fn describe(&self) -> String {
        format!(
            "{} {} {}/{}",
            self.api_version, self.kind, self.namespace, self.name
        )
    }
}

/// The objects of `yaml` (the text of a `k8s.yaml`: one or more YAML
/// documents, `---` separated; empty documents and comments skipped), each
/// with `metadata.namespace` set to `namespace` (every object sclc writes is
/// namespaced; a namespace written in the file is replaced). `Err` when the
/// text is not YAML or a document is not an object with `apiVersion`,
/// `kind` and `metadata.name` strings.
pub fn apply_plan(yaml: &str, namespace: &str) -> Result<Vec<Object>, EngineError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(|e| {
        // The reader's message may add a snippet of the text below it.
        let e = e.to_string();
        let first = e.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let first = first.trim();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        EngineError::new(format!("k8s.yaml is not YAML: {first}"))
    })?;
    let mut out = Vec::new();
    for (i, mut doc) in docs.into_iter().enumerate() {
        if doc.is_null() {
            continue;
        }
        let field =
            |doc: &Value, ptr: &str| doc.pointer(ptr).and_then(Value::as_str).map(String::from);
        let (Some(api_version), Some(kind), Some(name)) = (
            field(&doc, "/apiVersion"),
            field(&doc, "/kind"),
            field(&doc, "/metadata/name"),
        ) else {
            return Err(EngineError::new(format!(
                "document {} of k8s.yaml is not a Kubernetes object (apiVersion, kind and metadata.name)",
                i + 1
            )));
        };
        let Some(meta) = doc.get_mut("metadata").and_then(Value::as_object_mut) else {
            unreachable!("metadata.name was read");
        };
        meta.insert("namespace".into(), Value::String(namespace.into()));
        out.push(Object {
            api_version,
            kind,
            name,
            namespace: namespace.into(),
            body: doc,
        });
    }
    if out.is_empty() {
        return Err(EngineError::new("k8s.yaml has no object"));
    }
    Ok(out)
}

/// The objects of `plan` as YAML documents separated by `---` lines: what
/// `sclc submit --dry-run` prints. Each document is `body`, the value
/// [`apply`] sends (written by `serde-saphyr`, read back and compared).
pub fn plan_yaml(plan: &[Object]) -> Result<String, EngineError> {
    let mut docs = Vec::new();
    for o in plan {
        docs.push(scl_backends::yaml::to_string(&o.body).map_err(|e| {
            EngineError::new(format!("cannot write {} as YAML: {e}", o.describe()))
        })?);
    }
    Ok(docs.join("---\n"))
}

/// Whether `ns` can name a namespace: an RFC 1123 label (at most 63
/// characters of `a-z`, `0-9` and `-`, starting and ending with a letter or
/// digit), as the API server requires.
pub fn is_namespace(ns: &str) -> bool {
    let b = ns.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=63).contains(&b.len())
        && b.iter().all(|c| alnum(c) || *c == b'-')
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
}

/// The kinds of job sclc submits and watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// `batch/v1` Job: pods labelled [`JOB_NAME_LABEL`].
    Job,
    /// `kubeflow.org/v1` PyTorchJob: pods labelled
    /// [`KUBEFLOW_JOB_NAME_LABEL`].
    PyTorchJob,
}

/// The job of a plan: its kind and the object.
#[derive(Debug, Clone)]
pub struct JobRef {
    /// Job or PyTorchJob.
    pub kind: JobKind,
    /// The object as applied (name, namespace, API resource).
    pub object: Object,
}

impl JobRef {
    /// The label selector of the job's pods (`batch.kubernetes.io/job-name=NAME`
    /// or `training.kubeflow.org/job-name=NAME`).
    pub fn pod_selector(&self) -> String {
        let label = match self.kind {
            JobKind::Job => JOB_NAME_LABEL,
            JobKind::PyTorchJob => KUBEFLOW_JOB_NAME_LABEL,
        };
        format!("{label}={}", self.object.name)
    }

    /// `Job` or `PyTorchJob`.
    pub fn kind_name(&self) -> &str {
        &self.object.kind
    }
}

/// The first `batch/v1` Job or `kubeflow.org/v1` PyTorchJob of `plan`, if
/// any.
pub fn job_of(plan: &[Object]) -> Option<JobRef> {
    plan.iter().find_map(|o| {
        let kind = match (o.api_version.as_str(), o.kind.as_str()) {
            ("batch/v1", "Job") => JobKind::Job,
            ("kubeflow.org/v1", "PyTorchJob") => JobKind::PyTorchJob,
            _ => return None,
        };
        Some(JobRef {
            kind,
            object: o.clone(),
        })
    })
}

/// Where a kubeconfig came from, for messages: the `KUBECONFIG` value or
/// `~/.kube/config`'s path.
fn kubeconfig_source() -> Option<String> {
    match std::env::var_os("KUBECONFIG") {
        Some(v) if std::env::split_paths(&v).any(|p| !p.as_os_str().is_empty()) => {
            Some(v.to_string_lossy().into_owned())
        }
        _ => home_kubeconfig()
            .filter(|p| p.exists())
            .map(|p| p.display().to_string()),
    }
}

fn home_kubeconfig() -> Option<PathBuf> {
    std::env::home_dir().map(|h| h.join(".kube").join("config"))
}

/// The line said when there is no kubeconfig and no in-cluster
/// configuration.
fn no_cluster(incluster: &str) -> EngineError {
    EngineError::new(format!(
        "no Kubernetes cluster: no kubeconfig (KUBECONFIG is unset and ~/.kube/config does not exist) and {incluster}"
    ))
}

/// The namespace the current kube context names, read from the kubeconfig
/// (`KUBECONFIG`, else `~/.kube/config`) or, in a pod, from its service
/// account's namespace file, without contacting any cluster; `None` when
/// there is none or the configuration cannot be read (then
/// [`DEFAULT_NAMESPACE`] applies). What `sclc submit --dry-run` uses.
pub fn context_namespace() -> Option<String> {
    if kubeconfig_source().is_some() {
        let kc = Kubeconfig::read().ok()?;
        let current = kc.current_context.as_ref()?;
        return kc
            .contexts
            .iter()
            .find(|c| &c.name == current)?
            .context
            .as_ref()?
            .namespace
            .clone();
    }
    std::env::var_os("KUBERNETES_SERVICE_HOST")?;
    let ns =
        std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace").ok()?;
    Some(ns.trim().to_string()).filter(|s| !s.is_empty())
}

/// A client of one cluster and where it points.
#[derive(Clone)]
pub struct Cluster {
    /// The client (connections are opened on the first request).
    pub client: Client,
    /// The kube context's name (`in-cluster` in a pod without kubeconfig).
    pub context: String,
    /// The API server's URL as configured (`https://127.0.0.1:6443`).
    pub server: String,
    /// The context's default namespace, else [`DEFAULT_NAMESPACE`].
    pub namespace: String,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("context", &self.context)
            .field("server", &self.server)
            .field("namespace", &self.namespace)
            .finish()
    }
}

/// The current kube context's cluster, found as kube's `Config::infer`
/// does: the kubeconfig of `KUBECONFIG` (files merged) or `~/.kube/config`,
/// else the in-cluster configuration of a pod (`KUBERNETES_SERVICE_HOST`
/// and the service account's token). One difference: a kubeconfig that
/// exists but cannot be used is an error here, where `infer` would fall back
/// to the in-cluster configuration and report that instead. Reads files
/// only: the server is first contacted by a request. `Err`: no
/// configuration at all, a kubeconfig that cannot be read or used (no
/// current context, no server, bad certificates), each as one line naming
/// the file.
pub async fn connect() -> Result<Cluster, EngineError> {
    let (config, context, server) = match kubeconfig_source() {
        Some(source) => {
            let kc = Kubeconfig::read().map_err(|e| kubeconfig_error(&source, &e))?;
            let context = kc.current_context.clone().unwrap_or_default();
            let server = kc
                .contexts
                .iter()
                .find(|c| c.name == context)
                .and_then(|c| c.context.as_ref())
                .and_then(|c| kc.clusters.iter().find(|cl| cl.name == c.cluster))
                .and_then(|cl| cl.cluster.as_ref()?.server.clone());
            let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .map_err(|e| kubeconfig_error(&source, &e))?;
            let server = server.unwrap_or_else(|| trim_url(&config.cluster_url));
            (config, context, server)
        }
        None => {
            if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
                return Err(no_cluster("not in a pod"));
            }
            let config = Config::incluster()
                .map_err(|e| no_cluster(&format!("the in-cluster configuration failed: {e}")))?;
            let server = trim_url(&config.cluster_url);
            (config, "in-cluster".to_string(), server)
        }
    };
    let namespace = if config.default_namespace.is_empty() {
        DEFAULT_NAMESPACE.to_string()
    } else {
        config.default_namespace.clone()
    };
    let client = Client::try_from(config).map_err(|e| {
        EngineError::new(format!(
            "cannot make a client for the Kubernetes API at {server} (context {context}): {}",
            root_cause(&e)
        ))
    })?;
    Ok(Cluster {
        client,
        context,
        server,
        namespace,
    })
}

fn trim_url(u: &impl std::fmt::Display) -> String {
    u.to_string().trim_end_matches('/').to_string()
}

fn kubeconfig_error(source: &str, e: &KubeconfigError) -> EngineError {
    let what = match e {
        KubeconfigError::ReadConfig(io, path) => {
            return EngineError::new(format!(
                "cannot read the kubeconfig {}: {}",
                path.display(),
                io_text(io)
            ))
        }
        KubeconfigError::CurrentContextNotSet => {
            "it sets no current-context (choose one with `kubectl config use-context NAME`)"
                .to_string()
        }
        other => other.to_string(),
    };
    EngineError::new(format!("cannot use the kubeconfig {source}: {what}"))
}

/// An I/O error as a phrase (`connection refused`, `No such file or
/// directory`), without the `(os error N)` tail.
fn io_text(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => "connection refused".into(),
        K::ConnectionReset => "connection reset".into(),
        K::TimedOut => "timed out".into(),
        K::NotFound => "no such file or directory".into(),
        K::PermissionDenied => "permission denied".into(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

/// The innermost error of `e`'s source chain, as a phrase: an OS I/O
/// error is worded by [`io_text`]; an I/O error of kind `InvalidData`
/// carrying another error is how rustls' stream reports a failed TLS
/// handshake (`TLS handshake failed: invalid peer certificate: UnknownIssuer`).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = e;
    loop {
        if let Some(io) = cur.downcast_ref::<std::io::Error>() {
            match io.get_ref() {
                None => return io_text(io),
                Some(inner) if io.kind() == std::io::ErrorKind::InvalidData => {
                    return format!("TLS handshake failed: {inner}")
                }
                // `io::Error::source` skips the error it carries: look
                // into it.
                Some(inner) => {
                    cur = inner;
                    continue;
                }
            }
        }
        match cur.source() {
            Some(next) => cur = next,
            None => return cur.to_string(),
        }
    }
}

impl Cluster {
    /// `the Kubernetes API at URL (context NAME)`.
    fn at(&self) -> String {
        format!(
            "the Kubernetes API at {} (context {})",
            self.server, self.context
        )
    }

    /// `e`, from a request about `what` (`applying batch/v1 Job ml/x`), as
    /// one line: the server unreachable (connection refused, TLS, DNS), the
    /// credentials refused (401, 403), or the server's answer.
    fn failed(&self, what: &str, e: ::kube::Error) -> EngineError {
        match e {
            ::kube::Error::Api(s) => {
                let msg = s.message.trim_end_matches('.');
                let line = match s.code {
                    401 => format!("{} refused the credentials (401 Unauthorized) while {what}: {msg}", self.at()),
                    403 => format!("{} forbids {what} (403 Forbidden): {msg}", self.at()),
                    422 if msg.contains("immutable") => format!(
                        "{} refused {what} (422 {}): {msg}; a submitted job cannot be changed: delete it first (`sclc delete`)",
                        self.at(),
                        s.reason
                    ),
                    code => format!("{} refused {what} ({code} {}): {msg}", self.at(), s.reason),
                };
                EngineError::new(line)
            }
            ::kube::Error::Auth(a) => EngineError::new(format!(
                "cannot authenticate to {}: {}",
                self.at(),
                root_cause(&a)
            )),
            other => EngineError::new(format!(
                "cannot reach {}: {}",
                self.at(),
                root_cause(&other)
            )),
        }
    }

    /// 404 for a type the server does not serve (no CRD): one line saying
    /// so, with the operator to install for Kubeflow kinds.
    fn not_served(&self, o: &Object) -> EngineError {
        let hint = if o.api_version.starts_with("kubeflow.org/") {
            " (is the Kubeflow training operator installed?)"
        } else {
            ""
        };
        EngineError::new(format!(
            "{} does not serve {} {}{hint}",
            self.at(),
            o.api_version,
            o.kind
        ))
    }

    fn dynamic(&self, o: &Object) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &o.namespace, &o.api_resource())
    }
}

/// Whether `e` is a 404 about the object `name` itself (the API server
/// names it in the Status's `details`), not about its type.
fn is_missing_object(e: &::kube::Error, name: &str) -> bool {
    matches!(e, ::kube::Error::Api(s)
        if s.code == 404 && s.details.as_ref().is_some_and(|d| d.name == name))
}

fn is_404(e: &::kube::Error) -> bool {
    matches!(e, ::kube::Error::Api(s) if s.code == 404)
}

/// Applies every object of `plan`, in order, with server-side apply
/// (`PATCH …/NAME?fieldManager=sclc&force=true`, `Content-Type:
/// application/apply-patch+yaml`, the body `serde_json` of
/// [`Object::body`]), calling `applied` after each. Stops at the first
/// failure: the objects before it stay applied.
pub async fn apply(
    cluster: &Cluster,
    plan: &[Object],
    mut applied: impl FnMut(&Object),
) -> Result<(), EngineError> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for o in plan {
        match cluster
            .dynamic(o)
            .patch(&o.name, &params, &Patch::Apply(&o.body))
            .await
        {
            Ok(_) => applied(o),
            Err(e) if is_404(&e) => return Err(cluster.not_served(o)),
            Err(e) => return Err(cluster.failed(&format!("applying {}", o.describe()), e)),
        }
    }
    Ok(())
}

/// The job as the cluster has it (`None`: no such object in its namespace).
async fn get_job(cluster: &Cluster, job: &JobRef) -> Result<Option<DynamicObject>, EngineError> {
    match cluster.dynamic(&job.object).get(&job.object.name).await {
        Ok(o) => Ok(Some(o)),
        Err(e) if is_missing_object(&e, &job.object.name) => Ok(None),
        Err(e) if is_404(&e) => Err(cluster.not_served(&job.object)),
        Err(e) => Err(cluster.failed(&format!("reading {}", job.object.describe()), e)),
    }
}

/// The job's pods (by [`JobRef::pod_selector`]), sorted by name.
async fn pods_of(cluster: &Cluster, job: &JobRef) -> Result<Vec<Pod>, EngineError> {
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), &job.object.namespace);
    let list = api
        .list(&ListParams::default().labels(&job.pod_selector()))
        .await
        .map_err(|e| {
            cluster.failed(&format!("listing the pods of {}", job.object.describe()), e)
        })?;
    let mut pods = list.items;
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(pods)
}

/// The state of `job` in the cluster, worded by [`status_report`];
/// `None` when the cluster has no such job.
pub async fn status(cluster: &Cluster, job: &JobRef) -> Result<Option<String>, EngineError> {
    let Some(found) = get_job(cluster, job).await? else {
        return Ok(None);
    };
    let pods = pods_of(cluster, job).await?;
    let value = serde_json::to_value(&found).unwrap_or(Value::Null);
    Ok(Some(status_report(job, &value, &pods)))
}

fn count(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// A job's state as lines of text: a header (`Job ml/x (batch/v1)`), the
/// pod counts (`active 1, succeeded 0, failed 0`, per replica type for a
/// PyTorchJob's `status.replicaStatuses`), each of `status.conditions`
/// (`condition Complete=True: reason: message`), then the pods with phase
/// (and a waiting container's reason), node and restarts. `found` is the
/// job as JSON.
pub fn status_report(job: &JobRef, found: &Value, pods: &[Pod]) -> String {
    let o = &job.object;
    let mut out = format!(
        "{} {}/{} ({})\n",
        o.kind, o.namespace, o.name, o.api_version
    );
    let st = found.get("status").cloned().unwrap_or(Value::Null);
    match job.kind {
        JobKind::Job => out.push_str(&format!(
            "  active {}, succeeded {}, failed {}\n",
            count(&st, "active"),
            count(&st, "succeeded"),
            count(&st, "failed")
        )),
        JobKind::PyTorchJob => match st.get("replicaStatuses").and_then(Value::as_object) {
            Some(rs) if !rs.is_empty() => {
                for (role, r) in rs {
                    out.push_str(&format!(
                        "  {role}: active {}, succeeded {}, failed {}\n",
                        count(r, "active"),
                        count(r, "succeeded"),
                        count(r, "failed")
                    ));
                }
            }
            _ => out.push_str("  no replica status yet\n"),
        },
    }
    let conditions = st
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if conditions.is_empty() {
        out.push_str("  no conditions yet\n");
    }
    for c in &conditions {
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        let mut line = format!("  condition {}={}", s("type"), s("status"));
        let detail: Vec<&str> = [s("reason"), s("message")]
            .into_iter()
            .filter(|x| !x.is_empty())
            .collect();
        if !detail.is_empty() {
            line.push_str(": ");
            line.push_str(&detail.join(": "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if pods.is_empty() {
        out.push_str("pods: none\n");
        return out;
    }
    out.push_str(&format!("pods ({}):\n", pods.len()));
    let rows: Vec<[String; 4]> = pods.iter().map(pod_row).collect();
    let w: Vec<usize> = (0..3)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        out.push_str(&format!(
            "  {:w0$}  {:w1$}  {:w2$}  restarts {}\n",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        ));
    }
    out
}

/// Name, phase (with the reason a container waits, `Pending
/// (ImagePullBackOff)`), node (`-` before scheduling), restarts.
fn pod_row(p: &Pod) -> [String; 4] {
    let name = p.metadata.name.clone().unwrap_or_default();
    let status = p.status.as_ref();
    let mut phase = status
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Unknown".into());
    let statuses = status
        .and_then(|s| s.container_statuses.clone())
        .unwrap_or_default();
    if let Some(reason) = statuses
        .iter()
        .find_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone())
    {
        phase = format!("{phase} ({reason})");
    }
    let node = p
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_else(|| "-".into());
    let restarts: i32 = statuses.iter().map(|c| c.restart_count).sum();
    [name, phase, node, restarts.to_string()]
}

/// What [`logs`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogsOutcome {
    /// Every pod's log was printed (to its end, with `follow`).
    Printed,
    /// The cluster has no such job.
    NoJob,
    /// The job has no pods (yet).
    NoPods,
}

/// The logs of every pod of `job` (every replica), handed line by line to
/// `line(prefix, text)`: `prefix` is `[POD] ` when the job has several
/// pods, empty otherwise. Each pod's first container (the job's; a
/// PyTorchJob's is `pytorch`). Without `follow`, pod by pod in name order;
/// a pod whose container has not started is skipped with a note through
/// `note`. With `follow`, all pods at once (`?follow=true`), lines in the
/// order they arrive, until every stream ends (its container ended); a pod
/// whose container has not started (the API answers 400) is noted once and
/// asked again every 2 seconds. Pods created after the call are not
/// followed.
pub async fn logs(
    cluster: &Cluster,
    job: &JobRef,
    follow: bool,
    mut line: impl FnMut(&str, &str),
    note: impl FnMut(&str),
) -> Result<LogsOutcome, EngineError> {
    // Shared by the streams of `follow` (one thread: a RefCell is enough).
    let note = std::cell::RefCell::new(note);
    if get_job(cluster, job).await?.is_none() {
        return Ok(LogsOutcome::NoJob);
    }
    let pods = pods_of(cluster, job).await?;
    if pods.is_empty() {
        return Ok(LogsOutcome::NoPods);
    }
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), &job.object.namespace);
    // Following, pods that start later join (a PyTorchJob's workers), so
    // every line is prefixed when the job can have several.
    let several = pods.len() > 1 || (follow && job.object.kind != "Job");
    let target = |p: &Pod| {
        let name = p.metadata.name.clone().unwrap_or_default();
        let container = p
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .map(|c| c.name.clone());
        let prefix = if several {
            format!("[{name}] ")
        } else {
            String::new()
        };
        let lp = LogParams {
            container,
            follow,
            ..LogParams::default()
        };
        (name, prefix, lp)
    };
    let targets: Vec<(String, String, LogParams)> = pods.iter().map(target).collect();
    if !follow {
        for (name, prefix, lp) in &targets {
            match api.logs(name, lp).await {
                Ok(text) => {
                    for l in text.lines() {
                        line(prefix, l);
                    }
                }
                Err(::kube::Error::Api(s)) if s.code == 400 => {
                    (note.borrow_mut())(&format!("pod {name} has no logs yet: {}", s.message));
                }
                Err(e) => return Err(cluster.failed(&format!("reading the logs of pod {name}"), e)),
            }
        }
        return Ok(LogsOutcome::Printed);
    }
    let stream_of = |(name, prefix, lp): (String, String, LogParams)| {
        let api = api.clone();
        let note = &note;
        let open = async move {
            let mut told = false;
            loop {
                match api.log_stream(&name, &lp).await {
                    Ok(r) => return Ok((name, r)),
                    // The container has not started (400 "... is waiting
                    // to start"): ask again.
                    Err(::kube::Error::Api(s)) if s.code == 400 => {
                        if !told {
                            (note.borrow_mut())(&format!(
                                "pod {name} has not started: {}; waiting for it",
                                s.message
                            ));
                            told = true;
                        }
                        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                    }
                    Err(e) => return Err((name, e)),
                }
            }
        };
        futures::stream::once(open)
            .map_ok(move |(name, r)| {
                let prefix = prefix.clone();
                r.lines()
                    .map_err(move |e| (name.clone(), ::kube::Error::ReadEvents(e)))
                    .map_ok(move |l| (prefix.clone(), l))
            })
            .try_flatten()
            .boxed_local()
    };
    let mut seen: std::collections::HashSet<String> =
        targets.iter().map(|(n, _, _)| n.clone()).collect();
    let mut all = futures::stream::select_all(targets.into_iter().map(stream_of));
    // The job's pods are listed again every few seconds, and once more when
    // every stream has ended: a pod seen for the first time is followed too.
    let mut relist = tokio::time::interval(std::time::Duration::from_secs(5));
    relist.tick().await;
    loop {
        let ended = tokio::select! {
            item = all.next() => match item {
                Some(Ok((prefix, l))) => {
                    line(&prefix, &l);
                    continue;
                }
                Some(Err((name, e))) => {
                    return Err(cluster.failed(&format!("reading the logs of pod {name}"), e))
                }
                None => true,
            },
            _ = relist.tick() => false,
        };
        let mut new = 0;
        for p in pods_of(cluster, job).await? {
            let t = target(&p);
            if seen.insert(t.0.clone()) {
                all.push(stream_of(t));
                new += 1;
            }
        }
        if ended && new == 0 {
            break;
        }
    }
    Ok(LogsOutcome::Printed)
}

/// Deletes `job` with `propagationPolicy: Background` (the DeleteOptions
/// body of `DELETE …/NAME`): the API server removes the job at once and the
/// garbage collector its pods after. `Ok(false)` when there was no such
/// job.
pub async fn delete(cluster: &Cluster, job: &JobRef) -> Result<bool, EngineError> {
    match cluster
        .dynamic(&job.object)
        .delete(&job.object.name, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if is_missing_object(&e, &job.object.name) => Ok(false),
        Err(e) if is_404(&e) => Err(cluster.not_served(&job.object)),
        Err(e) => Err(cluster.failed(&format!("deleting {}", job.object.describe()), e)),
    }
}

/// The runtime the CLI runs these functions on: tokio's current-thread
/// runtime with I/O and timers (one thread is plenty for a handful of
/// requests and log streams).
pub fn runtime() -> Result<tokio::runtime::Runtime, EngineError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::new(format!("cannot start the async runtime: {e}")))
}
