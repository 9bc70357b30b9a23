//! Python and the frameworks built for it: torch, torchvision and
//! torchaudio of one release (`E0502`), the Python range of a torch or
//! TensorFlow release (`E0503`), a torch pin over the base image's torch
//! (`W0501`) and `python.version` against the base image's Python (`E0504`).

use scl_domain::version::Dotted;

use crate::{major_minor, same_version, Cx, Finding};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let python = interpreter(cx, out);
    let torch = torch(cx);
    if let Some((t, field, shown)) = &torch {
        replaced(cx, out);
        releases(cx, t, field, shown, out);
    } else {
        orphans(cx, out);
    }
    if let (Some((py, py_field, py_from)), Some((t, field, shown))) = (&python, &torch) {
        if let Some(rel) = scl_domain::torch::release(t) {
            if !rel.pythons.iter().any(|p| *p == py) {
                out.push(
                    Finding::error(
                        "E0503",
                        field.clone(),
                        format!(
                            "{shown} supports Python {}, not Python {py} ({py_from})",
                            range(&rel.pythons)
                        ),
                    )
                    .also(py_field.clone(), format!("Python {py} here"))
                    .help(format!(
                        "use Python {} or a torch release built for Python {py}",
                        rel.pythons.last().copied().unwrap_or_default()
                    )),
                );
            }
        }
    }
    if let (Some((py, py_field, py_from)), Some(p)) = (&python, cx.pin("tensorflow")) {
        if let Some(row) = p.release().and_then(scl_domain::tf::release) {
            if !row.pythons.iter().any(|x| x == py) {
                out.push(
                    Finding::error(
                        "E0503",
                        p.field.clone(),
                        format!(
                            "{} supports Python {}, not Python {py} ({py_from})",
                            p.shown(),
                            range(row.pythons)
                        ),
                    )
                    .also(py_field.clone(), format!("Python {py} here"))
                    .help(format!(
                        "use Python {} or a TensorFlow release built for Python {py}",
                        row.pythons.last().copied().unwrap_or_default()
                    )),
                );
            }
        }
    }
}

/// `3.8–3.11` of a list of versions in ascending order.
fn range(v: &[&str]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}–{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// The Python the env runs, major.minor, with the field that decides it and
/// how a message names its origin; `E0504` when `python.version` is not
/// the Python the image has or gets.
fn interpreter(cx: &Cx, out: &mut Vec<Finding>) -> Option<(String, String, String)> {
    let py = cx.spec.python.as_ref()?;
    // `"3"` says no minor version: nothing to compare.
    let declared = py
        .version
        .as_deref()
        .filter(|v| v.split('.').count() >= 2)
        .map(major_minor);
    if py.manager == scl_ir::PythonManager::Conda {
        // conda installs the Python it is asked for.
        return declared.map(|v| (v, "python.version".into(), "`python.version`".into()));
    }
    let image = cx.ships.python.as_deref().map(major_minor);
    // The image's own Python (E0504), or the one its package manager
    // installs, which sclc uses (W0506: the env may install another itself).
    let (has, how, code) = match (&image, cx.ships.apt_python) {
        (Some(v), _) => (
            Some(v.clone()),
            format!("the base image {} ships Python {v}", cx.base_ref()),
            "E0504",
        ),
        (None, Some(v)) => (
            Some(v.to_string()),
            format!(
                "the base image {} has no Python, and the `python3` its package manager installs, which sclc uses, is Python {v}",
                cx.base_ref()
            ),
            "W0506",
        ),
        _ => (None, String::new(), "E0504"),
    };
    match (declared, has) {
        (Some(d), Some(h)) if Dotted::parse(&d) != Dotted::parse(&h) => {
            let f = if code == "E0504" {
                Finding::error(
                    code,
                    "python.version",
                    format!("`python.version` is {d}, but {how}"),
                )
            } else {
                Finding::warning(
                    code,
                    "python.version",
                    format!("`python.version` is {d}, but {how}"),
                )
            };
            out.push(
                f
                .also("base", format!("Python {h} here"))
                .help(format!(
                    "set `python.version = \"{h}\"`, or choose a base image with Python {d} (e.g. `python:{d}-slim`)"
                )),
            );
            Some((d, "python.version".into(), "`python.version`".into()))
        }
        (Some(d), _) => Some((d, "python.version".into(), "`python.version`".into())),
        (None, Some(h)) => Some((h, "base".into(), format!("the Python of {}", cx.base_ref()))),
        (None, None) => None,
    }
}

/// The torch the env runs: its exact pin, else the base image's; with the
/// field and how a message names it.
fn torch(cx: &Cx) -> Option<(String, String, String)> {
    if let Some(p) = cx.pin("torch") {
        return Some((p.release()?.to_string(), p.field.clone(), p.shown()));
    }
    let t = cx.ships.torch.clone()?;
    Some((
        t.clone(),
        "base".into(),
        format!("torch {t} (of the base image {})", cx.base_ref()),
    ))
}

/// `W0501`: each torch pin that is not the torch the base image ships.
fn replaced(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(shipped) = &cx.ships.torch else {
        return;
    };
    for p in cx.pins_of("torch") {
        let Some(rel) = p.release() else {
            continue;
        };
        if same_version(rel, shipped) {
            continue;
        }
        out.push(
            Finding::warning(
                "W0501",
                p.field.clone(),
                format!(
                    "{} replaces the torch {shipped} the base image {} ships: pip installs torch {rel} and its own CUDA libraries over it",
                    p.shown(),
                    cx.base_ref()
                ),
            )
            .also("base", format!("torch {shipped} here"))
            .help(format!(
                "pin `torch=={shipped}` (or leave torch out), or use a base image with torch {rel}"
            )),
        );
    }
}

/// `E0502` with a known torch: torchvision and torchaudio pins of another
/// release.
fn releases(cx: &Cx, torch: &str, field: &str, shown: &str, out: &mut Vec<Finding>) {
    let Some(rel) = scl_domain::torch::release(torch) else {
        return;
    };
    let wanted = [
        ("torchvision", Some(rel.torchvision)),
        ("torchaudio", rel.torchaudio),
    ];
    for (name, want) in wanted {
        let Some(want) = want else {
            continue;
        };
        for p in cx.pins_of(name) {
            let Some(got) = p.release() else {
                continue;
            };
            if !same_version(got, want) {
                out.push(
                Finding::error(
                    "E0502",
                    p.field.clone(),
                    format!("{} does not belong with {shown}: torch {torch} goes with {name} {want}", p.shown()),
                )
                .also(field.to_string(), format!("torch {torch} here"))
                .help(format!("pin `{name}=={want}`")),
            );
            }
        }
    }
    // Two torch pins of different versions: pip refuses the pair.
    let mut torches = cx.pins_of("torch");
    if let Some(first) = torches.next() {
        for p in torches {
            if let (Some(a), Some(b)) = (first.release(), p.release()) {
                if !same_version(a, b) {
                    out.push(
                        Finding::error(
                            "E0502",
                            p.field.clone(),
                            format!("{} and {} pin two torch releases", p.shown(), first.shown()),
                        )
                        .also(first.field.clone(), format!("torch {a} here"))
                        .help("pin torch once"),
                    );
                }
            }
        }
    }
}

/// `E0502` without a torch: torchvision and torchaudio of different
/// releases.
fn orphans(cx: &Cx, out: &mut Vec<Finding>) {
    let (Some(tv), Some(ta)) = (cx.pin("torchvision"), cx.pin("torchaudio")) else {
        return;
    };
    let (Some(rv), Some(ra)) = (
        tv.release()
            .and_then(scl_domain::torch::release_of_torchvision),
        ta.release()
            .and_then(scl_domain::torch::release_of_torchaudio),
    ) else {
        return;
    };
    if rv.torch != ra.torch {
        out.push(
            Finding::error(
                "E0502",
                ta.field.clone(),
                format!(
                    "{} is of torch {}, but {} is of torch {}",
                    ta.shown(),
                    ra.torch,
                    tv.shown(),
                    rv.torch
                ),
            )
            .also(tv.field.clone(), format!("torch {} here", rv.torch))
            .help(format!(
                "pin `torchaudio=={}` with torchvision {}",
                rv.torchaudio.unwrap_or("?"),
                rv.torchvision
            )),
        );
    }
}
