//! The Python requirements of an env, from `python.packages` and its
//! requirements files, parsed as PEP 508 requirements.

use std::str::FromStr;

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
    pub name: String,
    /// The version of an exact pin (`==2.1.2+cu118` → `2.1.2+cu118`);
    /// `None` for a range or no version.
    pub version: Option<String>,
    /// The requirement as written.
    pub text: String,
    /// The IR field (`python.packages[0]`, `python.requirements[1]`).
    pub field: String,
    /// Where in a requirements file (`requirements.lock line 3`), else empty.
    pub place: String,
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

/// Whether a requirement's environment marker rules Linux out
/// (`sys_platform == 'win32'`, `platform_system == "Darwin"`): pip skips it
/// in an image, so the checks do too.
fn not_for_linux(r: &pep508_rs::Requirement<pep508_rs::VerbatimUrl>) -> bool {
    let Some(m) = r.marker.try_to_string() else {
        return false;
    };
    let m = m.to_ascii_lowercase();
    let other = ["win32", "windows", "darwin", "cygwin"]
        .iter()
        .any(|os| m.contains(&format!("== '{os}'")) || m.contains(&format!("== \"{os}\"")));
    other && !m.contains("linux")
}

/// The PEP 503 name and the exact version (`==` or `===`, local version
/// included: `2.1.2+cu118`) of a requirement, for any spelling PEP 508
/// allows (`torch == 2.1.2+CU118`, `torch (==2.1.2+cu118)`,
/// `torch>=2.1,==2.1.2+cu118`); `None` when it does not parse, pins no
/// exact version, or its marker rules Linux out.
pub fn exact_pin(text: &str) -> Option<(String, String)> {
    let p = parse(text, String::new(), String::new())?;
    Some((p.name, p.version?))
}

fn parse(text: &str, field: String, place: String) -> Option<Pin> {
    let r = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text).ok()?;
    if not_for_linux(&r) {
        return None;
    }
    // The exact pin among the specifiers (`>=2.1,==2.1.2+cu118` pins too).
    let version = match &r.version_or_url {
        Some(pep508_rs::VersionOrUrl::VersionSpecifier(s)) => s
            .iter()
            .find(|s| {
                matches!(
                    s.operator(),
                    pep508_rs::pep440_rs::Operator::Equal
                        | pep508_rs::pep440_rs::Operator::ExactEqual
                )
            })
            .map(|s| s.version().to_string().to_ascii_lowercase()),
        _ => None,
    };
    Some(Pin {
        name: normalize(r.name.as_ref()),
        version,
        text: text.trim().to_string(),
        field,
        place,
    })
}

/// Every requirement of `spec`: `python.packages` first, then each
/// requirements file's lines. Unparsable text is left out (evaluation
/// reported it).
pub(crate) fn collect(spec: &EnvSpec, inputs: &Inputs) -> Vec<Pin> {
    let mut out = Vec::new();
    let Some(py) = &spec.python else {
        return out;
    };
    for (i, p) in py.packages.iter().enumerate() {
        out.extend(parse(p, format!("python.packages[{i}]"), String::new()));
    }
    for (i, r) in py.requirements.iter().enumerate() {
        let Some(file) = inputs.requirements.iter().find(|f| f.path == r.path) else {
            continue;
        };
        let name = r.path.rsplit('/').next().unwrap_or(&r.path);
        for (line, text) in &file.lines {
            out.extend(parse(
                text,
                format!("python.requirements[{i}]"),
                format!("{name} line {line}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_pep_503_normal() {
        assert_eq!(normalize("OpenCV_Python"), "opencv-python");
        assert_eq!(normalize("a..b__c"), "a-b-c");
    }

    #[test]
    fn exact_pins_keep_their_local_version() {
        let p = parse("torch==2.1.2+cu118", "f".into(), String::new()).unwrap();
        assert_eq!(p.version.as_deref(), Some("2.1.2+cu118"));
        assert_eq!(p.release(), Some("2.1.2"));
        assert_eq!(p.cuda().as_deref(), Some("11.8"));
        let r = parse("torch>=2.0", "f".into(), String::new()).unwrap();
        assert_eq!(r.version, None);
        assert!(parse("torch>=>2", "f".into(), String::new()).is_none());
    }
}
