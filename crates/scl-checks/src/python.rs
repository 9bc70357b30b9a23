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
                    .help(range_help(
                        cx,
                        py_field,
                        &rel.pythons,
                        py,
                        "torch",
                        &torch_for(py),
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
                        p.field.to_string(),
                        format!(
                            "{} supports Python {}, not Python {py} ({py_from})",
                            p.shown(),
                            range(row.pythons)
                        ),
                    )
                    .also(py_field.clone(), format!("Python {py} here"))
                    .help(range_help(
                        cx,
                        py_field,
                        row.pythons,
                        py,
                        "TensorFlow",
                        &[],
                    )),
                );
            }
        }
    }
}

/// The torch releases built for Python `py`, ascending.
fn torch_for(py: &str) -> Vec<&'static str> {
    scl_domain::torch::releases()
        .into_iter()
        .filter(|r| r.pythons.contains(&py))
        .map(|r| r.torch)
        .collect()
}

/// The help of `E0503`: a Python in `pythons` (the release's range) where
/// the env's Python comes from — `python.version` (conda), or the base
/// image, whose Python sclc does not change (for `nvidia/cuda` images, the
/// Ubuntu releases whose `python3` is in range) — or one of `releases`
/// (`what` releases built for `py`).
fn range_help(
    cx: &Cx,
    py_field: &str,
    pythons: &[&str],
    py: &str,
    what: &str,
    releases: &[&str],
) -> String {
    let range = range(pythons);
    // `python.version` decides the Python only with conda; otherwise the
    // image does, even when `python.version` says the same (a fix there
    // would only bring W0506/E0504).
    let conda = cx.conda();
    let python = if py_field == "python.version" && conda {
        format!("set `python.version` to a Python in {range}")
    } else if cx.ships.cuda.is_some() && cx.ships.python.is_none() && cx.ships.apt_python.is_some()
    {
        let fits: Vec<String> = scl_ir::bases::OS_PYTHONS
            .iter()
            .filter(|(dist, _, _, p)| *dist == "ubuntu" && pythons.contains(p))
            .map(|(_, v, _, p)| format!("Ubuntu {v} has {p}: the tag's `-ubuntu{v}`, in std/pytorch-cuda `os = \"ubuntu{v}\"`"))
            .collect();
        if fits.is_empty() {
            format!("use a base image whose Python is in {range}")
        } else {
            format!(
                "use a base image whose Python is in {range} ({})",
                fits.join("; ")
            )
        }
    } else {
        format!(
            "use a base image whose Python is in {range} (`python:{}-slim`)",
            pythons.last().copied().unwrap_or_default()
        )
    };
    // A `python.version` that says the image's Python must follow the image.
    let declared = cx.spec.python.as_ref().is_some_and(|p| p.version.is_some());
    let python = if declared && !conda {
        format!("{python} and set `python.version` to its Python")
    } else {
        python
    };
    match (releases.first(), releases.last()) {
        (Some(a), Some(b)) if a != b => {
            format!("{python}, or a {what} release built for Python {py} ({a} … {b})")
        }
        (Some(a), _) => format!("{python}, or {what} {a}, built for Python {py}"),
        _ => format!("{python}, or a {what} release built for Python {py}"),
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

/// `python.version` as major.minor; `None` without one or for `"3"`,
/// which says no minor version (nothing to compare).
fn declared(py: &scl_ir::Python) -> Option<String> {
    py.version
        .as_deref()
        .filter(|v| v.split('.').count() >= 2)
        .map(major_minor)
}

/// The Python the env runs, major.minor: with conda the declared
/// `python.version`; else the base image's own Python, or the `python3` its
/// package manager installs (sclc installs no other), or, for an image sclc
/// knows nothing of, the declared one.
pub(crate) fn runs(spec: &scl_ir::EnvSpec, ships: &scl_ir::bases::Ships) -> Option<String> {
    let py = spec.python.as_ref()?;
    let declared = declared(py);
    if py.manager == scl_ir::PythonManager::Conda {
        return declared;
    }
    ships
        .python
        .as_deref()
        .map(major_minor)
        .or(ships.apt_python.map(str::to_string))
        .or(declared)
}

/// How a message names the Python of the base image: its own (`E0504`'s
/// case) or the `python3` sclc installs on it (`W0506`'s).
fn image_python(cx: &Cx, code: &str) -> String {
    if code == "E0504" {
        format!("the Python of {}", cx.base_ref())
    } else if scl_ir::bases::info(cx.base_ref()).has_python {
        format!("the python3 of {}", cx.base_ref())
    } else {
        format!("the python3 sclc installs on {}", cx.base_ref())
    }
}

/// The Python the env runs ([`runs`]), with the field that decides it and
/// how a message names its origin; `E0504` when `python.version` is not
/// the Python the image has, `W0506` not the one it gets.
fn interpreter(cx: &Cx, out: &mut Vec<Finding>) -> Option<(String, String, String)> {
    let py = cx.spec.python.as_ref()?;
    let declared = declared(py);
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
        // EL9 and Amazon Linux 2023 have that `python3` already.
        (None, Some(v)) if scl_ir::bases::info(cx.base_ref()).has_python => (
            Some(v.to_string()),
            format!(
                "the base image {} has the `python3` of its package manager, which sclc uses: Python {v}",
                cx.base_ref()
            ),
            "W0506",
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
            let help = if code == "E0504" {
                format!(
                    "set `python.version = \"{h}\"`, or choose a base image with Python {d} (e.g. `python:{d}-slim`)"
                )
            } else {
                os_python_help(cx, &d, &h)
            };
            out.push(f.also("base", format!("Python {h} here")).help(help));
            // The image's Python is the one that runs.
            Some((h, "base".into(), image_python(cx, code)))
        }
        (Some(d), _) => Some((d, "python.version".into(), "`python.version`".into())),
        (None, Some(h)) => Some((h, "base".into(), image_python(cx, code))),
        (None, None) => None,
    }
}

/// The torch the env runs: its exact pin, else the base image's; with the
/// field and how a message names it.
fn torch(cx: &Cx) -> Option<(String, String, String)> {
    if let Some(p) = cx.pin("torch") {
        return Some((p.release()?.to_string(), p.field.to_string(), p.shown()));
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
                p.field.to_string(),
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
/// release, each against the torch pin it is installed with (the first one
/// whose marker can hold with its own; the base image's torch without a
/// pin), and two torch pins that can be installed together.
fn releases(cx: &Cx, torch: &str, field: &str, shown: &str, out: &mut Vec<Finding>) {
    let torches: Vec<&crate::Pin> = cx.pins_of("torch").collect();
    for name in ["torchvision", "torchaudio"] {
        for p in cx.pins_of(name) {
            let Some(got) = p.release() else {
                continue;
            };
            // The torch this pin goes with: a pin it can be installed with,
            // else (no torch pin at all) the image's.
            let (t, t_field, t_shown) = if torches.is_empty() {
                (torch.to_string(), field.to_string(), shown.to_string())
            } else {
                let Some(q) = torches.iter().find(|q| q.coexists(p)) else {
                    continue;
                };
                let Some(r) = q.release() else {
                    continue;
                };
                (r.to_string(), q.field.to_string(), q.shown())
            };
            let Some(rel) = scl_domain::torch::release(&t) else {
                continue;
            };
            let want = match name {
                "torchvision" => Some(rel.torchvision),
                _ => rel.torchaudio,
            };
            let Some(want) = want else {
                continue;
            };
            if !same_version(got, want) {
                out.push(
                    Finding::error(
                        "E0502",
                        p.field.to_string(),
                        format!(
                            "{} does not belong with {t_shown}: torch {t} goes with {name} {want}",
                            p.shown()
                        ),
                    )
                    .also(t_field, format!("torch {t} here"))
                    .help(format!("pin `{name}=={want}`")),
                );
            }
        }
    }
    // Two torch pins of different versions that pip would both read: pip
    // refuses the pair.
    for (i, p) in torches.iter().enumerate() {
        let Some(first) = torches[..i].iter().find(|q| q.coexists(p)) else {
            continue;
        };
        if let (Some(a), Some(b)) = (first.release(), p.release()) {
            if !same_version(a, b) {
                out.push(
                    Finding::error(
                        "E0502",
                        p.field.to_string(),
                        format!("{} and {} pin two torch releases", p.shown(), first.shown()),
                    )
                    .also(first.field.to_string(), format!("torch {a} here"))
                    .help("pin torch once (or give the pins environment markers that exclude each other)"),
                );
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
    if !tv.coexists(ta) {
        return;
    }
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
                ta.field.to_string(),
                format!(
                    "{} is of torch {}, but {} is of torch {}",
                    ta.shown(),
                    ra.torch,
                    tv.shown(),
                    rv.torch
                ),
            )
            .also(tv.field.to_string(), format!("torch {} here", rv.torch))
            .help(format!(
                "pin `torchaudio=={}` with torchvision {}",
                rv.torchaudio.unwrap_or("?"),
                rv.torchvision
            )),
        );
    }
}

/// The help of `W0506` (an image without Python, whose OS's `python3` is
/// `has`, and `python.version` `want`): sclc installs no other Python, so
/// the fixes are the OS's Python or an OS release whose `python3` is
/// `want` — an Ubuntu release for `nvidia/cuda` images (their only OS with
/// a Python table here), else Debian or Ubuntu, or a `python` image.
fn os_python_help(cx: &Cx, want: &str, has: &str) -> String {
    let cuda_image = cx.ships.cuda.is_some();
    let same = |py: &str| Dotted::parse(py) == Dotted::parse(want);
    let releases: Vec<_> = scl_ir::bases::OS_PYTHONS
        .iter()
        .filter(|(dist, ..)| !cuda_image || *dist == "ubuntu")
        .collect();
    let fits: Vec<_> = releases.iter().filter(|(.., py)| same(py)).collect();
    let keep = format!(
        "set `python.version = \"{has}\"` (sclc does not install another Python into an image)"
    );
    let name = |dist: &str, v: &str| {
        let mut d = dist.to_string();
        d[..1].make_ascii_uppercase();
        format!("{d} {v}")
    };
    if cuda_image {
        match fits.first() {
            Some((_, v, ..)) => format!(
                "{keep}, or use the image of Ubuntu {v}, whose python3 is {want} (the tag's `-ubuntu{v}`; with std/pytorch-cuda, `os = \"ubuntu{v}\"`)"
            ),
            None => format!(
                "{keep}: no Ubuntu of the nvidia/cuda images has python3 {want} ({})",
                releases
                    .iter()
                    .map(|(_, v, _, py)| format!("{v}: {py}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    } else {
        let with: Vec<String> = fits.iter().map(|(d, v, ..)| name(d, v)).collect();
        let os = if with.is_empty() {
            String::new()
        } else {
            format!("{}, whose python3 is {want}, or ", with.join(" or "))
        };
        format!("{keep}, or use a base image of {os}`python:{want}-slim`")
    }
}
