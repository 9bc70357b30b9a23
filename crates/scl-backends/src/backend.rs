//! The backend interface: every target is a [`Backend`] in [`REGISTRY`],
//! which the CLI (`sclc build --target`), `scl-ide` and the language
//! server's lowered preview all read. Adding a target is one module with a
//! `Backend` value and one line in [`REGISTRY`].

use crate::expresses::Expresses;
use crate::Lowered;
use scl_ir::EnvSpec;

/// What a backend needs besides the IR: names and the image the env's
/// Dockerfile builds (for the targets that run it: Kubernetes, compose).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerCx {
    /// The env's name as declared (`bert_train`): the output folder, object
    /// names (made RFC 1123 by [`crate::names`]) and the image repository
    /// by default.
    pub env: String,
    /// The repository the env's image is tagged with (`--image-repo`;
    /// `registry.example.com/team/bert`), or `None` for the env's name.
    pub image_repo: Option<String>,
    /// SHA-256 (lowercase hex) of the files the build context sends, in a
    /// fixed order ([`context_hash`]); the image tag is made from it and the
    /// IR ([`LowerCx::image`]), so a changed source file gives a new tag.
    /// Empty when the caller has no file system (a test, a preview).
    pub context_sha256: String,
    /// The text of each requirements file the IR names
    /// (`python.requirements[*].path`, the env's and every service's):
    /// workspace-relative `/`-separated path, as in [`scl_ir::FileRef::path`]
    /// → its contents as UTF-8. Targets that cannot point at the file from
    /// their output (the conda target: conda runs pip on a copy of the
    /// `pip:` list in another folder) inline it from here; a path missing
    /// from the map is a [`crate::FieldError`] for those targets. Empty by
    /// default ([`LowerCx::new`]); the Dockerfile target does not read it.
    pub files: std::collections::BTreeMap<String, String>,
    /// Where the workspace root is on the machines that run the pods
    /// (`--host-root /shared/team/project`: an absolute, normalized path,
    /// checked by the caller), for `host:` volumes of the `k8s`
    /// target (Job, PyTorchJob): `host:data` becomes a `hostPath` of `<host_root>/data`.
    /// `None` (the default): such volumes are left out, with a warning.
    pub host_root: Option<String>,
}

impl LowerCx {
    /// A context for the env `env` with no image repository, no build
    /// context (the tag is the IR's hash alone) and no file texts.
    pub fn new(env: impl Into<String>) -> LowerCx {
        LowerCx {
            env: env.into(),
            image_repo: None,
            context_sha256: String::new(),
            files: std::collections::BTreeMap::new(),
            host_root: None,
        }
    }

    /// The image reference `<repository>:<tag>` of `spec` (the env itself,
    /// or one of its services when `service` is given): the repository is
    /// `--image-repo` (with `-<service>` for a service) or the env's (the
    /// service's) name made a valid repository name; the tag is the first
    /// 16 hex digits of SHA-256 over the IR's canonical JSON, a newline and
    /// [`LowerCx::context_sha256`]. Docker's rule for a repository: lowercase
    /// `[a-z0-9]` separated by `.`, `_`, `__` or `-`, components by `/`
    /// (distribution `reference` grammar); a tag `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
    pub fn image(&self, spec: &EnvSpec, service: Option<&str>) -> String {
        let repo = match (&self.image_repo, service) {
            (Some(r), None) => r.clone(),
            (Some(r), Some(s)) => format!("{r}-{}", crate::names::repository_component(s)),
            (None, None) => crate::names::repository_component(&self.env),
            (None, Some(s)) => crate::names::repository_component(s),
        };
        let text = format!("{}\n{}", spec.to_canonical_json(), self.context_sha256);
        let hash = scl_ir::sha256_hex(text.as_bytes());
        format!("{repo}:{}", &hash[..16])
    }
}

/// The SHA-256 of a build context given as `(path, sha256 of the file)`
/// pairs (paths workspace-relative, `/`-separated): the pairs sorted by
/// path, each written as `path\0sha256\n`, hashed. Order of the input does
/// not matter; an empty context gives the hash of no bytes.
pub fn context_hash(files: &[(String, String)]) -> String {
    let mut v: Vec<&(String, String)> = files.iter().collect();
    v.sort();
    let mut text = String::new();
    for (p, h) in v {
        text.push_str(p);
        text.push('\0');
        text.push_str(h);
        text.push('\n');
    }
    scl_ir::sha256_hex(text.as_bytes())
}

/// One target format.
pub trait Backend: Sync {
    /// The name `sclc build --target` takes (`docker`, `k8s`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and the book: what the target writes.
    fn summary(&self) -> &'static str;
    /// The files it writes in an env's folder, as patterns (`Dockerfile`,
    /// `<service>/Dockerfile`): its file layout, for documentation and for
    /// recognizing its files in an old output folder.
    fn layout(&self) -> &'static [&'static str];
    /// Whether `--target all` includes it (Kubeflow Trainer v2 does not: a
    /// cluster runs either the v1 operator or the Trainer).
    fn in_all(&self) -> bool {
        true
    }
    /// The IR fields it expresses ([`crate::expresses`]).
    fn expresses(&self) -> &'static Expresses;
    /// Lowers one env. Pure: the same IR and context give the same bytes.
    fn lower(&self, spec: &EnvSpec, cx: &LowerCx) -> Lowered;
}

/// Every target, in the order `--target all` writes them and help lists them.
pub static REGISTRY: &[&dyn Backend] = &[
    &crate::docker::Docker,
    &crate::apptainer::Apptainer,
    &crate::conda::Conda,
    &crate::k8s::K8s,
    &crate::trainjob::TrainJob,
    &crate::compose::Compose,
];

/// The backend called `name`, if any.
pub fn backend(name: &str) -> Option<&'static dyn Backend> {
    REGISTRY.iter().copied().find(|b| b.name() == name)
}

/// The names of every target, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|b| b.name()).collect()
}

/// The targets `--target all` writes.
pub fn all() -> impl Iterator<Item = &'static dyn Backend> {
    REGISTRY.iter().copied().filter(|b| b.in_all())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let n = names();
        for (i, a) in n.iter().enumerate() {
            assert!(!n[..i].contains(a), "{a} twice");
            assert_eq!(backend(a).map(|b| b.name()), Some(*a));
            assert_eq!(backend(a).unwrap().expresses().target, *a);
        }
        assert!(backend("nope").is_none());
    }

    #[test]
    fn image_tag_follows_ir_and_context() {
        let spec = EnvSpec::default();
        let mut cx = LowerCx::new("bert_train");
        let a = cx.image(&spec, None);
        assert!(a.starts_with("bert_train:"), "{a}");
        assert_eq!(a.len(), "bert_train:".len() + 16);
        cx.context_sha256 = context_hash(&[("train.py".into(), "00".into())]);
        let b = cx.image(&spec, None);
        assert_ne!(a, b, "a changed build context gives a new tag");
        cx.image_repo = Some("reg.example.com/team/bert".into());
        assert!(cx
            .image(&spec, Some("Web UI"))
            .starts_with("reg.example.com/team/bert-web-ui:"));
        assert_eq!(
            context_hash(&[("b".into(), "1".into()), ("a".into(), "2".into())]),
            context_hash(&[("a".into(), "2".into()), ("b".into(), "1".into())])
        );
    }
}
