//! How sclc reads conda match specs: with rattler's strict parser, except
//! for the one form `conda env export` writes that strict mode refuses.

/// Whether a conda match spec is the exported form `NAME=VERSION=BUILD`
/// (`cudatoolkit=11.8.0=h6a678d5_0`, what `conda env export` writes, which
/// conda installs as that exact build). rattler's strict parser refuses it
/// (its build string must follow a space), so the callers parse this one
/// form with rattler's lenient mode, which reads it as conda does, and every
/// other spec strictly: lenient mode also takes text that conda itself
/// refuses (`numpy >= 1.0 2.0 <`).
pub fn exported_form(spec: &str) -> bool {
    let body = spec.rsplit("::").next().unwrap_or(spec);
    let parts: Vec<&str> = body.split('=').collect();
    let word = |p: &str| {
        !p.is_empty()
            && p.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '*' | '!')
            })
    };
    parts.len() == 3 && parts.iter().all(|p| word(p))
}

#[cfg(test)]
mod tests {
    use super::exported_form;

    #[test]
    fn only_name_version_build() {
        assert!(exported_form("cudatoolkit=11.8.0=h6a678d5_0"));
        assert!(exported_form("conda-forge::numpy=1.26.4=py311h64a7726_0"));
        assert!(exported_form("python=3.11.7=hab00c5b_0_cpython"));
        for other in [
            "numpy",
            "numpy=1.26",
            "numpy==1.26",
            "numpy >= 1.0 2.0 <",
            "numpy=1.0\nscipy",
            "numpy=1.26=",
            "numpy=1.2 3=x",
        ] {
            assert!(!exported_form(other), "{other:?}");
        }
    }
}
