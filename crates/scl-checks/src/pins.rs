//! The Python requirements of an env, from `python.packages` and its
//! requirements files, parsed as PEP 508 requirements.

use rustc_hash::FxHashMap as HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use scl_ir::EnvSpec;

use crate::Inputs;

/// The requirement lines of one requirements file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequirementsFile {
    /// The workspace-relative path, as the IR's `python.requirements[i].path`.
    pub path: String,
    /// `(line number, 1-based; the requirement as written)` for every
    /// requirement line (options, comments and blank lines left out).
    pub lines: Vec<(usize, String)>,
}

/// One requirement of the env.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The PEP 503 normalized name (`torchvision`, `opencv-python`).
    pub name: Arc<str>,
    /// The version of an exact pin (`==2.1.2+cu118` → `2.1.2+cu118`);
    /// `None` for a range or no version.
    pub version: Option<Arc<str>>,
    /// The requirement as written (without surrounding blanks).
    pub text: Arc<str>,
    /// The IR field (`python.packages[0]`, `python.requirements[1]`).
    pub field: PinField,
    /// Where in a requirements file (`requirements.lock line 3`), else empty.
    pub place: String,
    /// The environment marker (`python_version < "3.12"`; always true
    /// without one).
    pub marker: pep508_rs::MarkerTree,
}

/// The IR field a [`Pin`] comes from: its name is made only for a
/// finding (an env of ten packages checks ten pins and usually reports
/// none). Turns into the field's name (`python.packages[0]`) with
/// `String::from` or `to_string`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinField {
    /// `python.packages[i]`.
    Package(usize),
    /// `python.requirements[i]`: a line of that requirements file.
    Requirement(usize),
}

impl std::fmt::Display for PinField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PinField::Package(i) => write!(f, "python.packages[{i}]"),
            PinField::Requirement(i) => write!(f, "python.requirements[{i}]"),
        }
    }
}

impl From<PinField> for String {
    fn from(f: PinField) -> String {
        f.to_string()
    }
}

impl From<&PinField> for String {
    fn from(f: &PinField) -> String {
        f.to_string()
    }
}

impl Pin {
    /// The version without its local part (`2.1.2` of `2.1.2+cu118`).
    pub fn release(&self) -> Option<&str> {
        self.version
            .as_deref()
            .map(|v| scl_domain::version::split_local(v).0)
    }

    /// The local version label (`cu118`), if any.
    pub fn local(&self) -> Option<&str> {
        self.version
            .as_deref()
            .and_then(|v| scl_domain::version::split_local(v).1)
    }

    /// The CUDA of a `+cuXYZ` local version (`11.8`).
    pub fn cuda(&self) -> Option<String> {
        self.local().and_then(scl_domain::version::cuda_of_local)
    }

    /// The torch release a `torch`, `torchvision` or `torchaudio` pin belongs
    /// to (`torchvision==0.16.2` → torch 2.1.2); `None` for other packages,
    /// ranges and releases the table does not list.
    pub fn torch_release(&self) -> Option<scl_domain::torch::Release> {
        let v = self.release()?;
        match &*self.name {
            "torch" => scl_domain::torch::release(v),
            "torchvision" => scl_domain::torch::release_of_torchvision(v),
            "torchaudio" => scl_domain::torch::release_of_torchaudio(v),
            _ => None,
        }
    }

    /// Whether this requirement and `other` can be installed together: no
    /// Python and platform satisfies both markers when they are disjoint
    /// (`python_version < "3.12"` and `python_version >= "3.12"`), so pip
    /// reads only one of them and they never conflict.
    pub fn coexists(&self, other: &Pin) -> bool {
        !self.marker.is_disjoint(&other.marker)
    }

    /// How a message names it: `` `torch==2.1.2` `` or
    /// `` `torch==2.1.2` (requirements.lock line 3) ``.
    pub fn shown(&self) -> String {
        if self.place.is_empty() {
            format!("`{}`", self.text)
        } else {
            format!("`{}` ({})", self.text, self.place)
        }
    }
}

/// The PEP 503 normal form of a distribution name.
pub(crate) fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The Pythons a marker is evaluated for when the env's Python is not
/// known: a requirement is kept when it applies to any of them.
const ANY_PYTHON: &[&str] = &[
    "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14",
];

/// Whether pip installs a requirement in the image: its environment marker
/// (PEP 508, evaluated by pep508_rs) holds on Linux with CPython `python`
/// (major.minor; every Python pip runs on when `None`) on x86_64 or aarch64
/// (`sys_platform == 'win32'`, `python_version < '3.12'` on a 3.12 image
/// and `extra == 'gpu'` do not; one that depends on the patch release,
/// `python_full_version >= '3.12.1'`, is not judged).
fn applies(r: &pep508_rs::Requirement<pep508_rs::VerbatimUrl>, python: Option<&str>) -> bool {
    if r.marker.is_true() {
        return true;
    }
    let pythons = python.map_or(ANY_PYTHON.to_vec(), |p| vec![p]);
    let holds = |py: &str, patch: u32| {
        let full = format!("{py}.{patch}");
        ["x86_64", "aarch64"].iter().any(|machine| {
            let env = pep508_rs::MarkerEnvironmentBuilder {
                implementation_name: "cpython",
                implementation_version: &full,
                os_name: "posix",
                platform_machine: machine,
                platform_python_implementation: "CPython",
                platform_release: "",
                platform_system: "Linux",
                platform_version: "",
                python_full_version: &full,
                python_version: py,
                sys_platform: "linux",
            };
            // A Python that does not parse as a version cannot be judged:
            // the requirement is kept.
            pep508_rs::MarkerEnvironment::try_from(env)
                .map_or(true, |env| r.marker.evaluate(&env, &[]))
        })
    };
    // The patch release of the image's Python is not known
    // (`python_full_version >= "3.12.1"`): a requirement is counted only
    // when its marker holds for the first and a late patch release alike.
    pythons.iter().any(|py| holds(py, 0) && holds(py, 99))
}

/// The PEP 503 name and the exact version (`==` or `===`, local version
/// included: `2.1.2+cu118`) of a requirement, for any spelling PEP 508
/// allows (`torch == 2.1.2+CU118`, `torch (==2.1.2+cu118)`,
/// `torch>=2.1,==2.1.2+cu118`); `None` when it does not parse, pins no
/// exact version, or its marker holds for no Linux Python.
pub fn exact_pin(text: &str) -> Option<(String, String)> {
    // What `parse` would answer, without making the whole `Pin` (its text,
    // marker and place): every env's normalization asks this of each of
    // its Python requirements.
    let r = parsed(text)?;
    let version = r.version.as_deref()?;
    applies(&r.requirement, None).then(|| (r.name.to_string(), version.to_string()))
}

/// A requirement as a [`Pin`]; `None` when it does not parse or pip would
/// skip it on Linux with `python` ([`applies`]).
fn parse(text: &str, field: PinField, place: String, python: Option<&str>) -> Option<Pin> {
    let r = parsed(text)?;
    if !applies(&r.requirement, python) {
        return None;
    }
    // Shared with the memo: the same requirements come back in every env
    // that inherits them.
    Some(Pin {
        name: r.name.clone(),
        version: r.version.clone(),
        text: r.text.clone(),
        field,
        place,
        marker: r.requirement.marker.clone(),
    })
}

/// What [`parse`] reads of a requirement's text, whatever the Python.
struct Parsed {
    requirement: pep508_rs::Requirement<pep508_rs::VerbatimUrl>,
    /// PEP 503 normalized.
    name: Arc<str>,
    /// The exact pin among the specifiers (`>=2.1,==2.1.2+cu118` pins too),
    /// lowercase.
    version: Option<Arc<str>>,
    /// The text without surrounding blanks.
    text: Arc<str>,
}

/// How many requirement texts [`parsed`] remembers before it starts over.
const PARSED_MEMO: usize = 4096;

/// The requirement `text` parsed by pep508_rs (`None` when it does not
/// parse), remembered: the same texts come back in every env that
/// inherits them, and once more in normalization.
fn parsed(text: &str) -> Option<Arc<Parsed>> {
    type Memo = HashMap<Box<str>, Option<Arc<Parsed>>>;
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(hit) = memo.lock().ok().and_then(|m| m.get(text).cloned()) {
        return hit;
    }
    let out = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text)
        .ok()
        .map(|requirement| {
            let version = match &requirement.version_or_url {
                Some(pep508_rs::VersionOrUrl::VersionSpecifier(s)) => s
                    .iter()
                    .find(|s| {
                        matches!(
                            s.operator(),
                            pep508_rs::pep440_rs::Operator::Equal
                                | pep508_rs::pep440_rs::Operator::ExactEqual
                        )
                    })
                    .map(|s| s.version().to_string().to_ascii_lowercase().into()),
                _ => None,
            };
            Arc::new(Parsed {
                name: normalize(requirement.name.as_ref()).into(),
                version,
                text: text.trim().into(),
                requirement,
            })
        });
    if let Ok(mut m) = memo.lock() {
        if m.len() >= PARSED_MEMO {
            m.clear();
        }
        m.insert(text.into(), out.clone());
    }
    out
}

/// Every requirement of `spec` that pip installs on Linux with `python`
/// (major.minor, when known): `python.packages` first, then each
/// requirements file's lines. Unparsable text is left out (evaluation
/// reported it).
pub(crate) fn collect(spec: &EnvSpec, inputs: &Inputs, python: Option<&str>) -> Vec<Pin> {
    let mut out = Vec::new();
    let Some(py) = &spec.python else {
        return out;
    };
    for (i, p) in py.packages.iter().enumerate() {
        out.extend(parse(p, PinField::Package(i), String::new(), python));
    }
    for (i, r) in py.requirements.iter().enumerate() {
        let Some(file) = inputs.requirements.iter().find(|f| f.path == r.path) else {
            continue;
        };
        let name = r.path.rsplit('/').next().unwrap_or(&r.path);
        for (line, text) in &file.lines {
            out.extend(parse(
                text,
                PinField::Requirement(i),
                format!("{name} line {line}"),
                python,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_names_its_field() {
        assert_eq!(String::from(PinField::Package(2)), "python.packages[2]");
        assert_eq!(
            String::from(&PinField::Requirement(0)),
            "python.requirements[0]"
        );
    }

    #[test]
    fn names_are_pep_503_normal() {
        assert_eq!(normalize("OpenCV_Python"), "opencv-python");
        assert_eq!(normalize("a..b__c"), "a-b-c");
    }

    #[test]
    fn exact_pins_keep_their_local_version() {
        let p = parse(
            "torch==2.1.2+cu118",
            PinField::Package(0),
            String::new(),
            None,
        )
        .unwrap();
        assert_eq!(p.version.as_deref(), Some("2.1.2+cu118"));
        assert_eq!(p.release(), Some("2.1.2"));
        assert_eq!(p.cuda().as_deref(), Some("11.8"));
        let r = parse("torch>=2.0", PinField::Package(0), String::new(), None).unwrap();
        assert_eq!(r.version, None);
        assert!(parse("torch>=>2", PinField::Package(0), String::new(), None).is_none());
    }

    #[test]
    fn markers_are_evaluated_for_linux_and_the_python() {
        let p =
            |t: &str, py: Option<&str>| parse(t, PinField::Package(0), String::new(), py).is_some();
        assert!(!p("torch==2.1.2; python_version < '3.12'", Some("3.12")));
        assert!(p("torch==2.1.2; python_version < '3.12'", Some("3.11")));
        assert!(p("torch==2.1.2; python_version < '3.12'", None));
        assert!(!p("torch==2.1.2+cu118 ; os_name == 'nt'", None));
        assert!(!p("torch==2.1.2; sys_platform == 'win32'", None));
        assert!(!p("torch==2.1.2; platform_system == 'Darwin'", None));
        assert!(p("torch==2.1.2; sys_platform == 'linux'", Some("3.11")));
        assert!(p(
            "torch==2.1.2; platform_machine == 'aarch64'",
            Some("3.11")
        ));
        assert!(!p("torch==2.1.2; extra == 'gpu'", None));
        // The patch release is not known: not judged.
        assert!(!p(
            "torch==2.1.2; python_full_version < '3.12.1'",
            Some("3.12")
        ));
        assert!(!p(
            "torch==2.1.2; python_full_version >= '3.12.1'",
            Some("3.12")
        ));
        assert!(p(
            "torch==2.1.2; python_full_version >= '3.12'",
            Some("3.12")
        ));
    }
}
