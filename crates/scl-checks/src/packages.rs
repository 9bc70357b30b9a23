//! What the image installs: Python packages whose wheels need system
//! libraries (`W0502`) and Hugging Face assets at a moving revision
//! (`W0503`).

use scl_ir::{Asset, SystemManager};

use crate::{Cx, Finding, Fix};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    system_libraries(cx, out);
    revisions(cx, out);
}

/// `W0502`: on an apt image, each Python package of the table whose
/// libraries `system.packages` does not install (once per package).
fn system_libraries(cx: &Cx, out: &mut Vec<Finding>) {
    let manager = match (&cx.spec.system, &cx.spec.base) {
        (Some(s), _) => s.manager,
        (None, Some(b)) => scl_ir::bases::manager(&b.reference),
        (None, None) => return,
    };
    if manager != SystemManager::Apt {
        return;
    }
    let installed: Vec<&str> = cx
        .spec
        .system
        .iter()
        .flat_map(|s| &s.packages)
        .map(|p| p.split(['=', '/', ':']).next().unwrap_or(p))
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for p in &cx.pins {
        let Some(needs) = scl_domain::syslibs::needs(&p.name) else {
            continue;
        };
        if seen.contains(&needs.package) {
            continue;
        }
        // soundfile's wheels bundle libsndfile on Linux x86-64 from 0.12
        // (its README): only an older pin needs the system library.
        let bundled = scl_domain::version::Dotted::parse("0.12");
        if needs.package == "soundfile"
            && p.release()
                .and_then(scl_domain::version::Dotted::parse)
                .is_none_or(|v| Some(v) >= bundled)
        {
            continue;
        }
        seen.push(needs.package);
        // A package pip compiles (its row names a compiler) needs the
        // Python headers too: `python:` images and conda have them; the
        // `python3` sclc installs from apt comes without (`python3-dev`).
        let compiles = needs.apt.contains(&"gcc");
        let apt_python = cx.ships.python.is_none() && !cx.conda();
        let headers = (compiles && apt_python).then_some("python3-dev");
        let missing: Vec<String> = needs
            .apt
            .iter()
            .copied()
            .chain(headers)
            .filter(|a| !installed.iter().any(|i| provides(i, a)))
            .map(|a| a.to_string())
            .collect();
        if missing.is_empty() {
            continue;
        }
        let list = missing
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let mut f = Finding::warning(
            "W0502",
            p.field.to_string(),
            format!(
                "{} needs the system {} {} ({}), which the env does not install",
                p.shown(),
                if missing.len() == 1 {
                    "package"
                } else {
                    "packages"
                },
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                needs.why
            ),
        )
        .help(format!("add `system.packages += [{list}]`"));
        f.fix = Some(Fix::AddSystemPackages(missing));
        out.push(f);
    }
}

/// Whether the installed apt package `installed` provides `wanted`: itself,
/// a package that depends on it (`build-essential`: gcc and libc6-dev), or
/// an older name of it (`libgl1-mesa-glx`, the transitional package of
/// Debian ≤ 11 and Ubuntu ≤ 22.04, installs `libgl1`).
/// `libglib2.0-0t64` is `libglib2.0-0` after the 64-bit time_t transition
/// (Ubuntu 24.04, Debian 13).
fn provides(installed: &str, wanted: &str) -> bool {
    installed == wanted
        || installed.strip_suffix("t64") == Some(wanted)
        || (wanted == "libgl1" && installed == "libgl1-mesa-glx")
        // build-essential depends on gcc, g++, make and libc6-dev.
        || (installed == "build-essential" && matches!(wanted, "gcc" | "libc6-dev"))
        // python3-dev pulls the headers of the OS's Python (python3.X-dev).
        || (wanted == "python3-dev" && installed.starts_with("python3.") && installed.ends_with("-dev"))
}

/// Whether a Hugging Face revision names a commit (40 hexadecimal digits).
fn is_commit(rev: &str) -> bool {
    rev.len() == 40
        && rev
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `W0503`: a Hugging Face asset whose revision is a branch or tag.
fn revisions(cx: &Cx, out: &mut Vec<Finding>) {
    for (i, a) in cx.spec.assets.iter().enumerate() {
        let Asset::Huggingface { repo, revision, .. } = a else {
            continue;
        };
        if is_commit(revision) {
            continue;
        }
        out.push(
            Finding::warning(
                "W0503",
                format!("assets[{i}]"),
                format!(
                    "the Hugging Face asset `{repo}` is fetched at revision `{revision}`, which is not a full commit (40 lower-case hex digits) but a branch, a tag or a short commit: the files can change from one build to the next"
                ),
            )
            .help("pin the commit: `revision = \"<40-hex commit>\"` (the repository's \"History\" page, or `git ls-remote https://huggingface.co/REPO`)"),
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_commit_is_forty_hex_digits() {
        assert!(super::is_commit("0123456789abcdef0123456789abcdef01234567"));
        assert!(!super::is_commit("main"));
        assert!(!super::is_commit("v1.0"));
        assert!(!super::is_commit("0123456789abcdef0123456789abcdef0123456"));
    }
}
