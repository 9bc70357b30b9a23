//! Numeric dotted versions (`12.1`, `525.60.13`, `2.1.2`) and the local-version
//! part of a wheel version (`2.1.2+cu118`).
//!
//! Versions are compared numerically, component by component, never as
//! strings: `9.2` < `11.0`, `3.9` < `3.10`.

use smallvec::SmallVec;
use std::fmt;

/// A version made of dot-separated unsigned integers: `12.1`, `525.60.13`,
/// `2.1.2`, `580`.
///
/// Ordering is numeric and component-wise; a version sorts just before its
/// extensions (`12.1` < `12.1.0` < `12.1.1` < `12.2`), so a floor written
/// with fewer parts (`580`) is met by every release of it (`580.65.06`).
/// [`Display`](fmt::Display) prints the components as parsed, without leading
/// zeros (`"580.65.06"` prints as `580.65.6`); keep the source string when the
/// exact spelling matters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dotted(SmallVec<[u32; 4]>);

impl Dotted {
    /// Parses `text` as one or more dot-separated decimal numbers, each at
    /// most `u32::MAX`. Returns `None` for anything else: an empty string or
    /// component (`""`, `"12."`, `".1"`), signs, spaces, letters
    /// (`"12.1a"`, `"v12"`), local versions (`"2.1.2+cu118"`: split them with
    /// [`split_local`] first).
    pub fn parse(text: &str) -> Option<Dotted> {
        let mut parts = SmallVec::new();
        for part in text.split('.') {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts.push(part.parse().ok()?);
        }
        Some(Dotted(parts))
    }

    /// The components, at least one.
    pub fn parts(&self) -> &[u32] {
        &self.0
    }

    /// The first component (`12` of `12.1.1`).
    pub fn major(&self) -> u32 {
        self.0[0]
    }

    /// The second component, 0 when there is none (`1` of `12.1.1`; `0` of `12`).
    pub fn minor(&self) -> u32 {
        self.0.get(1).copied().unwrap_or(0)
    }

    /// The third component, if written (`Some(1)` of `12.1.1`; `None` of `12.1`).
    pub fn patch(&self) -> Option<u32> {
        self.0.get(2).copied()
    }

    /// `"major.minor"` (`"12.1"` of `12.1.1`; `"12.0"` of `12`).
    pub fn major_minor(&self) -> String {
        format!("{}.{}", self.major(), self.minor())
    }

    /// Whether `self` and `other` have the same major and minor components.
    pub fn same_minor(&self, other: &Dotted) -> bool {
        self.major() == other.major() && self.minor() == other.minor()
    }
}

impl fmt::Display for Dotted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

/// Splits a PEP 440 local version off: `"2.1.2+cu118"` → `("2.1.2",
/// Some("cu118"))`, `"2.1.2"` → `("2.1.2", None)`. Splits at the first `+`;
/// an empty local part (`"2.1.2+"`) is `Some("")`.
pub fn split_local(v: &str) -> (&str, Option<&str>) {
    match v.split_once('+') {
        Some((public, local)) => (public, Some(local)),
        None => (v, None),
    }
}

/// The CUDA version of a torch wheel's local version: `"cu118"` → `"11.8"`,
/// `"cu121"` → `"12.1"`, `"cu130"` → `"13.0"`, `"cu92"` → `"9.2"`. The last
/// digit is the minor version (no CUDA minor has had two digits). `None` for
/// `"cpu"`, ROCm (`"rocm6.1"`) and anything that is not `cu` followed by two
/// or three digits.
pub fn cuda_of_local(local: &str) -> Option<String> {
    let digits = local.strip_prefix("cu")?;
    if !(2..=3).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    let major: u32 = major.parse().ok()?;
    Some(format!("{major}.{minor}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        let v = |s| Dotted::parse(s).unwrap();
        assert!(v("9.2") < v("11.0"));
        assert!(v("3.9") < v("3.10"));
        assert!(v("12.1") < v("12.1.0"));
        assert!(v("580") < v("580.65.06"));
        assert_eq!(v("525.60.13").to_string(), "525.60.13");
        assert_eq!(v("580.65.06").to_string(), "580.65.6");
        assert_eq!(v("12.1.1").major_minor(), "12.1");
        assert_eq!(v("12").major_minor(), "12.0");
        assert_eq!(
            (v("2.1.2").major(), v("2.1.2").minor(), v("2.1.2").patch()),
            (2, 1, Some(2))
        );
        for junk in [
            "",
            "12.",
            ".1",
            "1..2",
            "12.1a",
            "v12",
            "+1",
            "-1",
            " 12",
            "2.1.2+cu118",
            "99999999999",
        ] {
            assert_eq!(Dotted::parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn locals() {
        assert_eq!(split_local("2.1.2+cu118"), ("2.1.2", Some("cu118")));
        assert_eq!(split_local("2.1.2"), ("2.1.2", None));
        assert_eq!(cuda_of_local("cu118").as_deref(), Some("11.8"));
        assert_eq!(cuda_of_local("cu121").as_deref(), Some("12.1"));
        assert_eq!(cuda_of_local("cu130").as_deref(), Some("13.0"));
        assert_eq!(cuda_of_local("cu92").as_deref(), Some("9.2"));
        for other in ["cpu", "cu", "cu1", "cu1234", "cuab", "rocm6.1", ""] {
            assert_eq!(cuda_of_local(other), None, "{other:?}");
        }
    }
}
