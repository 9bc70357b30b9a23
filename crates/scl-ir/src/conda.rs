//! How sclc reads a conda match spec: one function, [`match_spec`], for
//! evaluation, the domain checks and the conda backend.

use rattler_conda_types::{MatchSpec, ParseStrictness};

/// `spec` read as a conda match spec, as conda reads it.
///
/// rattler's strict parser refuses forms conda itself accepts and its own
/// documentation uses: `NAME VERSION [BUILD]` without an operator
/// (`cuda-nvcc 12.4.131`, `cuda-version 11.8 *`), `|` between versions
/// (`cuda-version=12.4|12.5`), `=1.2.*`, and the exported
/// `NAME=VERSION=BUILD` that `conda env export` writes. Its lenient parser
/// reads those as conda does, but also takes text conda refuses
/// (`numpy >= 1.0 2.0 <`). So a spec is read strictly, else leniently when
/// the build string the lenient parser read is a well-formed one and what
/// it read, printed back (`cuda-nvcc ==12.4.131`), is a spec the strict
/// parser accepts. The error is the strict parser's.
///
/// A panic inside the parser is the caller's to guard (evaluation runs it
/// under its panic boundary).
pub fn match_spec(spec: &str) -> Result<MatchSpec, String> {
    if let Some(c) = spec.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{c:?} has no place in a match spec (one line of text)"
        ));
    }
    match MatchSpec::from_str(spec, ParseStrictness::Strict) {
        Ok(m) => Ok(m),
        Err(strict) => {
            let lenient = MatchSpec::from_str(spec, ParseStrictness::Lenient)
                .map_err(|_| strict.to_string())?;
            // A build string is letters, digits, `_`, `.`, `+` and `*`
            // (`py311h64a7726_0`); the lenient parser takes any rest of the
            // text as one (`numpy >= 1.0 2.0 <` has the build `2.0 <`).
            let build_ok = lenient.build.as_ref().is_none_or(|b| {
                b.to_string()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.+*".contains(c))
            });
            if !build_ok {
                return Err(strict.to_string());
            }
            MatchSpec::from_str(&lenient.to_string(), ParseStrictness::Strict)
                .map(|_| lenient)
                .map_err(|_| strict.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::match_spec;

    #[test]
    fn conda_forms_are_read_and_junk_is_not() {
        for ok in [
            "numpy",
            "numpy=1.26",
            "numpy>=1.2,<2",
            "cudatoolkit=11.8.0=h6a678d5_0",
            "conda-forge::numpy=1.26.4=py311h64a7726_0",
            "cuda-nvcc 12.4.131",
            "cuda-version 11.8 *",
            "cuda-version=12.4|12.5",
            "cuda-version=12.4.*",
            "cuda-version >=12,<13",
            "numpy 1.2.3 py311_0",
        ] {
            assert!(match_spec(ok).is_ok(), "{ok:?}: {:?}", match_spec(ok).err());
        }
        for bad in [
            "numpy >= 1.0 2.0 <",
            "numpy=1.0\nscipy",
            "numpy[version=='1']]",
            "",
        ] {
            assert!(match_spec(bad).is_err(), "{bad:?}");
        }
    }
}
