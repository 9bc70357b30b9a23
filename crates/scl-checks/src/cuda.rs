//! CUDA: torch wheel variants against the image's CUDA (`E0501`), conda
//! CUDA packages (`E0505`), `nvidia/cuda` tags that do not exist (`E0508`)
//! and the driver a runtime needs (`E0506`).

use scl_domain::version::Dotted;

use crate::{major_minor, Cx, Finding};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    published(cx, out);
    variants(cx, out);
    conda(cx, out);
    if let Some(b) = &cx.spec.base {
        tag(&b.reference, "base", out);
    }
    if let Some(b) = &cx.spec.builder {
        tag(&b.reference, "builder", out);
    }
}

/// The packages whose wheels carry a CUDA variant in their local version.
const VARIANT_PACKAGES: &[&str] = &["torch", "torchvision", "torchaudio"];

/// `E0511`: a `+cuXYZ` pin of a torch, torchvision or torchaudio release
/// that has no wheel for that CUDA (torch 2.8.0 has cu126, cu128 and
/// cu129, not cu118; torchaudio before 0.10 has no CUDA builds at all).
/// `E0512`: a pin in `python.packages` of a variant published only on a
/// find-links page, which pip cannot be given from there.
fn published(cx: &Cx, out: &mut Vec<Finding>) {
    for p in cx
        .pins
        .iter()
        .filter(|p| VARIANT_PACKAGES.contains(&&*p.name))
    {
        let (Some(cuda), Some(version), Some(rel)) = (p.cuda(), p.release(), p.torch_release())
        else {
            continue;
        };
        if &*p.name == "torchaudio" && !scl_domain::torch::torchaudio_has_cuda_variants(version) {
            out.push(
                Finding::error(
                    "E0511",
                    p.field,
                    format!(
                        "{} does not exist: torchaudio {version} was published without CUDA variants (its first CUDA builds were 0.10.0)",
                        p.shown()
                    ),
                )
                .help(format!("pin `torchaudio=={version}` (no `+{}`)", p.local().unwrap_or("cu"))),
            );
            continue;
        }
        if !rel.cudas.iter().any(|c| *c == cuda) {
            let variants: Vec<String> = rel
                .cudas
                .iter()
                .map(|c| format!("`+{}`", scl_domain::torch::variant(c)))
                .collect();
            let base = match &cx.base_cuda {
                Some(b) if !rel.cudas.iter().any(|c| *c == major_minor(b)) => {
                    let newest = rel.newest_cuda().unwrap_or_default();
                    match image_like(cx.base_ref(), newest) {
                        Some(i) => format!(
                            " (none of them is the base image's CUDA {b}: choose the base image of the variant too, `{i}` for `+{}`)",
                            scl_domain::torch::variant(newest)
                        ),
                        None => format!(
                            " (none of them is the base image's CUDA {b}: choose the base image of the variant too)"
                        ),
                    }
                }
                _ => String::new(),
            };
            out.push(
                Finding::error(
                    "E0511",
                    p.field,
                    format!(
                        "{} does not exist: torch {} has wheels for CUDA {} only",
                        p.shown(),
                        rel.torch,
                        rel.cudas.join(", ")
                    ),
                )
                .help(format!("use one of {}{base}", variants.join(", "))),
            );
            continue;
        }
        if !p.place.is_empty() {
            // A requirements file can carry its own `--find-links` line.
            continue;
        }
        let local = p.local().unwrap_or_default();
        if let Some(url) = scl_domain::torch::find_links(rel.torch, local) {
            out.push(
                Finding::error(
                    "E0512",
                    p.field,
                    format!(
                        "{} is published only on the find-links page {url}, not on a package index: pip installs it only with `--find-links`, which `python.packages` cannot give",
                        p.shown()
                    ),
                )
                .help(
                    "use torch 1.11 or newer, whose CUDA wheels are on the https://download.pytorch.org/whl/cuXYZ indexes (sclc adds the index itself); sclc gives pip no find-links page, from `python.packages` or a requirements file (E0331)",
                ),
            );
        }
    }
}

/// `E0501`: each `+cuXYZ` pin against the base image's CUDA, else against
/// the first such pin.
fn variants(cx: &Cx, out: &mut Vec<Finding>) {
    let pins: Vec<_> = cx
        .pins
        .iter()
        .filter(|p| VARIANT_PACKAGES.contains(&&*p.name))
        .filter_map(|p| Some((p, p.cuda()?)))
        .collect();
    // Pin against pin, whatever the image: torchvision and torchaudio refuse
    // a torch built for another CUDA. Each pin against the first earlier pin
    // it can be installed with (markers that exclude each other never meet).
    let mut against_pin = vec![false; pins.len()];
    for (i, (p, cuda)) in pins.iter().enumerate() {
        let Some((first, first_cuda)) = pins[..i].iter().find(|(q, _)| q.coexists(p)) else {
            continue;
        };
        if cuda != first_cuda {
            against_pin[i] = true;
            out.push(
                Finding::error(
                    "E0501",
                    p.field,
                    format!(
                        "{} is built for CUDA {cuda}, but {} is built for CUDA {first_cuda}",
                        p.shown(),
                        first.shown()
                    ),
                )
                .also(first.field, format!("CUDA {first_cuda} here"))
                .help(format!(
                    "pin every one of torch, torchvision and torchaudio with the same variant (`+{}`)",
                    scl_domain::torch::variant(first_cuda)
                )),
            );
        }
    }
    let Some(base) = &cx.base_cuda else {
        return;
    };
    let want = major_minor(base);
    // A devel image (nvcc, headers) builds extensions against its own
    // CUDA: a wheel of another CUDA is an error there. On a runtime or
    // base image the wheel's own CUDA libraries are used and the
    // image's are only dead weight: a warning (W0507).
    let devel = cx.base_ref().contains("devel");
    let base_major = Dotted::parse(&want).map(|v| v.major());
    for ((p, cuda), reported) in pins.iter().zip(against_pin) {
        if *cuda == want || reported {
            continue;
        }
        // torch's extension build (`torch.utils.cpp_extension`,
        // `_check_cuda_version`) raises for another CUDA major and
        // only warns for another minor of the same major.
        let other_major = Dotted::parse(cuda).map(|v| v.major()) != base_major;
        let f = if devel && other_major {
            Finding::error("E0501", p.field, String::new())
        } else {
            Finding::warning("W0507", p.field, String::new())
        };
        out.push(
            Finding {
                message: format!(
                    "{} is built for CUDA {cuda}, but the base image {} has CUDA {base}",
                    p.shown(),
                    cx.base_ref()
                ),
                ..f
            }
            .also("base", format!("CUDA {base} here"))
            .help(variant_help(cx, p, cuda, &want)),
        );
    }
}

/// The help of `E0501`/`W0507`: only fixes that exist. The wheel of the
/// image's CUDA `want` when the pin's release has one; otherwise a base
/// image with the wheel's CUDA `cuda`, or the newest torch release that has
/// wheels for `want` (`torch==2.8.0+cu121` does not exist: 2.8.0 has cu126,
/// cu128 and cu129 only).
fn variant_help(cx: &Cx, p: &crate::Pin, cuda: &str, want: &str) -> String {
    const WHY: &str = "torch's own CUDA libraries and the image's (nvcc, cuDNN, extensions built against them) should be one version";
    let image = match image_like(cx.base_ref(), cuda) {
        Some(i) => format!("a base image with CUDA {cuda} (`{i}`)"),
        None => format!("a base image with CUDA {cuda}"),
    };
    let rel = p.torch_release();
    if rel.as_ref().is_none_or(|r| r.cudas.contains(&want)) {
        return format!(
            "use the wheel built for CUDA {want} (`+{}`), or {image}: {WHY}",
            scl_domain::torch::variant(want)
        );
    }
    let rel = rel.expect("checked above");
    let newest_for_want = scl_domain::torch::releases()
        .into_iter()
        .rev()
        .find(|r| r.cudas.contains(&want));
    let other = match newest_for_want {
        Some(r) => format!(
            ", or torch {} (the newest release with wheels for CUDA {want}: `+{}`)",
            r.torch,
            scl_domain::torch::variant(want)
        ),
        None => String::new(),
    };
    format!(
        "torch {} has no wheel for CUDA {want} (only for {}): use {image}{other}; {WHY}",
        rel.torch,
        rel.cudas.join(", ")
    )
}

/// The conda packages that fix a CUDA version, by name.
const CONDA_CUDA: &[&str] = &[
    "cudatoolkit",
    "pytorch-cuda",
    "cuda-version",
    "cuda-toolkit",
    "cuda-runtime",
    "cuda-nvcc",
    "cuda-cudart",
];

/// `E0505`: a conda CUDA package whose version spec does not admit the
/// base image's CUDA. The spec is read as conda reads it (rattler's parser,
/// as evaluation checked it: `cudatoolkit=11.8` is any 11.8.x,
/// `cuda-version=12` any 12.x, `cuda-version>=12,<13` a range,
/// `cudatoolkit=11.8.0=h6a678d5_0` with a build string) and matched against
/// the versions the package has for the image's CUDA: `cuda-version` and
/// `pytorch-cuda` are versioned `12.1`, so `cuda-version>12.1` excludes a
/// 12.1 image; the others by release and component patch (`cudatoolkit
/// 11.8.0`, `cuda-nvcc 12.4.131`), so any `12.1.N` counts. A bare
/// `cudatoolkit` on a CUDA 12 image is one too (it stops at 11.8).
fn conda(cx: &Cx, out: &mut Vec<Finding>) {
    use rattler_conda_types::Version;
    use std::str::FromStr;
    let (Some(base), Some(conda)) = (&cx.base_cuda, &cx.spec.conda) else {
        return;
    };
    let want = major_minor(base);
    // The versions of a package of the image's CUDA: `cuda-version` and
    // `pytorch-cuda` are versioned major.minor (`12.4`); the others by
    // release and component patch (`cudatoolkit 11.8.0`, `cuda-nvcc
    // 12.4.131`), so every patch of the image's major.minor counts.
    let by_minor = [Version::from_str(&want)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    let by_patch: Vec<Version> = std::iter::once(want.clone())
        .chain((0..1000).map(|p| format!("{want}.{p}")))
        .filter_map(|v| Version::from_str(&v).ok())
        .collect();
    for (i, spec) in conda.packages.iter().enumerate() {
        let Ok(parsed) = scl_ir::conda::match_spec(spec) else {
            continue;
        };
        let Some(name) = parsed
            .name
            .as_exact()
            .map(|n| n.as_normalized().to_string())
        else {
            continue;
        };
        if !CONDA_CUDA.contains(&name.as_str()) {
            continue;
        }
        let Some(vspec) = &parsed.version else {
            // A bare `cudatoolkit` on a CUDA 12 or later image: the package
            // stops at 11.8, a second, older CUDA runtime.
            if name == "cudatoolkit" && Dotted::parse(&want).is_some_and(|v| v.major() >= 12) {
                out.push(
                    Finding::error(
                        "E0505",
                        format!("conda.packages[{i}]"),
                        format!(
                            "`{spec}` installs CUDA 11.8 or older (the last `cudatoolkit`), but the base image {} has CUDA {base}",
                            cx.base_ref()
                        ),
                    )
                    .also("base", format!("CUDA {base} here"))
                    .help(conda_help(&name, &want)),
                );
            }
            continue;
        };
        let versions = if matches!(name.as_str(), "cuda-version" | "pytorch-cuda") {
            &by_minor
        } else {
            &by_patch
        };
        if versions.is_empty() || versions.iter().any(|v| vspec.matches(v)) {
            continue;
        }
        out.push(
            Finding::error(
                "E0505",
                format!("conda.packages[{i}]"),
                format!(
                    "`{spec}` asks conda for a CUDA that is not the base image's: {} has CUDA {base}",
                    cx.base_ref()
                ),
            )
            .also("base", format!("CUDA {base} here"))
            .help(conda_help(&name, &want)),
        );
    }
}

/// The fix of `E0505` for package `name` and the image's CUDA `want`
/// (major.minor): only specs that name a published version
/// ([`scl_domain::cuda::conda_cuda_versions`]).
fn conda_help(name: &str, want: &str) -> String {
    let drop = "or drop it and use the image's CUDA";
    match scl_domain::cuda::conda_cuda_versions(name) {
        Some(published) if !published.contains(&want) => format!(
            "`{name}` is published for CUDA {} only, not {want}: ask for `cuda-version={want}` instead, {drop}",
            match published {
                [first, .., last] if published.len() > 6 => format!("{first} to {last}"),
                _ => published.join(", "),
            }
        ),
        _ => format!("ask conda for CUDA {want} (`{name}={want}`), {drop}"),
    }
}

/// The image flavours of `nvidia/cuda` tags (`VERSION-[cudnn…-]FLAVOR-OS`).
const FLAVORS: &[&str] = &["base", "runtime", "devel"];

/// `E0508` / `W0509`: an `nvidia/cuda` tag NVIDIA does not publish.
///
/// The tags are `VERSION-[CUDNN-]FLAVOR-OS` (`12.1.1-runtime-ubuntu22.04`,
/// `12.8.1-cudnn-devel-ubuntu24.04`). Errors (`E0508`): a tag without a
/// flavour (`12.1.1`), a version without the patch (`12.1-runtime-…`), and
/// on Ubuntu a cuDNN tag (devel or runtime) of a release the table lists
/// that is not the tag NVIDIA publishes for it (the cuDNN part is `cudnn8`
/// up to 12.2, `cudnn9` for 12.3, `cudnn` from 12.4). The table lists the
/// devel + cuDNN images and NVIDIA publishes base, runtime and devel images,
/// with and without cuDNN, for the same releases; a release the table does
/// not list on that Ubuntu is only a warning (`W0509`): the table cannot be
/// complete. Every help names tags built from the table.
fn tag(reference: &str, field: &str, out: &mut Vec<Finding>) {
    if scl_ir::bases::info(reference).family != scl_ir::bases::Family::NvidiaCuda {
        return;
    }
    // With a digest, the digest is what is pulled: the tag is only a name.
    if reference.contains('@') {
        return;
    }
    let (repo, Some(tag)) = scl_ir::bases::split_ref(reference) else {
        return;
    };
    let (version, rest) = tag.split_once('-').unwrap_or((tag, ""));
    if Dotted::parse(version).is_none() {
        return;
    }
    let words: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('-').collect()
    };
    // The shape NVIDIA publishes: `[cudnn…-]FLAVOR-OS`.
    let at = words.iter().position(|w| FLAVORS.contains(w));
    let flavor = at.map(|a| words[a]);
    let cudnn_word = |w: &str| {
        w.strip_prefix("cudnn")
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
    };
    let well_formed = match at {
        Some(a) => a + 2 == words.len() && (a == 0 || (a == 1 && cudnn_word(words[0]))),
        None => false,
    };
    let os = at.and_then(|a| words.get(a + 1)).copied();
    let ubuntu = os
        .and_then(|os| os.strip_prefix("ubuntu"))
        .filter(|v| Dotted::parse(v).is_some());
    let cudnn = words.iter().any(|w| cudnn_word(w));
    // A tag of the table's release `image` in the user's flavour and cuDNN
    // choice: `12.8.1-cudnn-devel-ubuntu22.04` → `12.8.1-runtime-ubuntu22.04`.
    let shaped = |image: &scl_domain::cuda::CudaImage| {
        format!("`{repo}:{}`", shaped_tag(image, flavor, cudnn))
    };
    // The nearest releases on that Ubuntu, after the newest release of the
    // same CUDA major.minor on another Ubuntu (`12.1-runtime-ubuntu24.04`:
    // CUDA 12.1 has images on 22.04, not on 24.04).
    let nearest = |cuda: &str| {
        let same_minor = scl_domain::cuda::cuda_images()
            .iter()
            .filter(|i| major_minor(i.cuda) == major_minor(cuda))
            .filter_map(|i| Some(((Dotted::parse(i.cuda)?, Dotted::parse(i.ubuntu)), i)))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, i)| i);
        let mut near = scl_domain::cuda::nearest_images(cuda, ubuntu);
        if near.is_empty() {
            near = scl_domain::cuda::nearest_images(cuda, None);
        }
        let mut out: Vec<String> = same_minor.into_iter().map(&shaped).collect();
        for i in near {
            let t = shaped(i);
            if out.len() < 3 && !out.contains(&t) {
                out.push(t);
            }
        }
        out
    };
    let error = |message: String, near: Vec<String>, why: &str| {
        let f = Finding::error("E0508", field, message);
        if near.is_empty() {
            f.help("the tags are listed at https://hub.docker.com/r/nvidia/cuda/tags")
        } else {
            f.help(format!("the nearest that exist: {}{why}", near.join(", ")))
        }
    };
    if !well_formed {
        out.push(error(
            format!(
                "`{reference}` does not exist: NVIDIA publishes `nvidia/cuda` tags as VERSION-[CUDNN-]FLAVOR-OS, in lower case, with a flavour of `base`, `runtime` or `devel` and an OS (`{version}-runtime-ubuntu22.04`, `{version}-cudnn-devel-ubi9`)"
            ),
            nearest(version),
            "",
        ));
        return;
    }
    if version.split('.').count() < 3 {
        // The newest patch release of that CUDA the table knows, on that
        // Ubuntu, or in the tag as written for another OS (UBI, Rocky
        // Linux: NVIDIA publishes the same releases there).
        let newest = scl_domain::cuda::cuda_images()
            .iter()
            .filter(|i| major_minor(i.cuda) == version)
            .filter(|i| ubuntu.is_none_or(|u| i.ubuntu == u))
            .filter_map(|i| Some((Dotted::parse(i.cuda)?, i)))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, i)| match ubuntu {
                Some(_) => shaped(i),
                None => format!("`{repo}:{}-{rest}`", i.cuda),
            });
        out.push(error(
            format!(
                "`{reference}` does not exist: NVIDIA publishes `nvidia/cuda` tags with the patch version only (`{version}.x-{rest}`)"
            ),
            newest.map_or_else(|| nearest(version), |t| vec![t]),
            "",
        ));
        return;
    }
    // Ubuntu is the only OS the table covers (NVIDIA publishes UBI and
    // Rocky Linux images too).
    let Some(ubuntu) = ubuntu else {
        return;
    };
    let images = scl_domain::cuda::cuda_images();
    let release = images
        .iter()
        .find(|i| i.cuda == version && i.ubuntu == ubuntu);
    const CUDNN: &str =
        " (cuDNN is `cudnn8` up to CUDA 12.2, `cudnn9` for 12.3 and `cudnn` from 12.4)";
    match release {
        Some(image) => {
            if cudnn && !words.contains(&cudnn_part(image.tag)) {
                out.push(error(
                    format!("`{reference}` is not an `nvidia/cuda` tag NVIDIA publishes"),
                    vec![shaped(image)],
                    CUDNN,
                ));
            }
        }
        None if cudnn && flavor == Some("devel") => out.push(error(
            format!("`{reference}` is not an `nvidia/cuda` tag NVIDIA publishes"),
            nearest(version),
            CUDNN,
        )),
        None => {
            // The table lists one or two patch releases of a minor per
            // Ubuntu: another release of a minor it has on that Ubuntu
            // (`12.4.0` beside `12.4.1`) is judged only for its cuDNN
            // spelling. A version that is no CUDA release at all, or a minor
            // with no image on that Ubuntu, is a warning.
            let release = scl_domain::cuda::driver_rows()
                .iter()
                .any(|r| r.toolkit == version)
                || images.iter().any(|i| i.cuda == version);
            let minor_there = images
                .iter()
                .any(|i| i.ubuntu == ubuntu && major_minor(i.cuda) == major_minor(version));
            if release && minor_there {
                let spelling = scl_domain::cuda::cudnn_spelling(version);
                if cudnn && !words.contains(&spelling) {
                    out.push(error(
                        format!("`{reference}` is not an `nvidia/cuda` tag NVIDIA publishes"),
                        vec![format!("`{repo}:{}`", tag.replacen(words[0], spelling, 1))],
                        CUDNN,
                    ));
                }
                return;
            }
            let why = if release {
                format!("CUDA {version} has no image on Ubuntu {ubuntu}")
            } else {
                format!("{version} is not a CUDA release sclc knows")
            };
            let near = nearest(version);
            let mut f = Finding::warning(
                "W0509",
                field,
                format!("`{reference}` is not among the `nvidia/cuda` tags sclc knows: {why}"),
            );
            if !near.is_empty() {
                f = f.help(format!(
                    "the nearest that exist: {}; if the tag does exist, this warning is the table's gap",
                    near.join(", ")
                ));
            }
            out.push(f);
        }
    }
}

/// A table tag (a devel + cuDNN image) in the user's flavour and cuDNN
/// choice: `12.8.1-cudnn-devel-ubuntu22.04` with `runtime`, no cuDNN →
/// `12.8.1-runtime-ubuntu22.04` (NVIDIA publishes every flavour of a
/// release it lists).
fn shaped_tag(image: &scl_domain::cuda::CudaImage, flavor: Option<&str>, cudnn: bool) -> String {
    let flavor = flavor.unwrap_or("runtime");
    let t = image.tag.replace("-devel-", &format!("-{flavor}-"));
    if cudnn {
        t
    } else {
        t.replacen(&format!("-{}", cudnn_part(image.tag)), "", 1)
    }
}

/// The `nvidia/cuda` image of CUDA `cuda` (major.minor) in the shape of the
/// image `reference` (its repository, flavour, cuDNN choice and Ubuntu),
/// when `reference` is an `nvidia/cuda` Ubuntu image and the table has that
/// CUDA on that Ubuntu: for a fix that names the image to switch to.
fn image_like(reference: &str, cuda: &str) -> Option<String> {
    if scl_ir::bases::info(reference).family != scl_ir::bases::Family::NvidiaCuda {
        return None;
    }
    let (repo, Some(tag)) = scl_ir::bases::split_ref(reference) else {
        return None;
    };
    let words: Vec<&str> = tag.split('-').collect();
    let flavor = words.iter().copied().find(|w| FLAVORS.contains(w));
    let ubuntu = words.last()?.strip_prefix("ubuntu")?;
    let cudnn = words.iter().any(|w| w.starts_with("cudnn"));
    let image = scl_domain::cuda::devel_image(cuda, ubuntu)?;
    Some(format!("{repo}:{}", shaped_tag(image, flavor, cudnn)))
}

/// The cuDNN word of a table tag (`cudnn8`, `cudnn9`, `cudnn`).
fn cudnn_part(tag: &str) -> &str {
    tag.split('-')
        .find(|w| w.starts_with("cudnn"))
        .unwrap_or("cudnn")
}

/// `E0506`: each CUDA runtime of the env against the driver.
pub(crate) fn driver(cx: &Cx, driver: &str, out: &mut Vec<Finding>) {
    let mut runtimes: Vec<(String, String, String)> = Vec::new();
    if let Some(c) = &cx.base_cuda {
        runtimes.push((
            c.clone(),
            "base".into(),
            format!("the base image {}", cx.base_ref()),
        ));
    }
    for p in cx
        .pins
        .iter()
        .filter(|p| VARIANT_PACKAGES.contains(&&*p.name))
    {
        if let Some(c) = p.cuda() {
            if !runtimes.iter().any(|(r, _, _)| major_minor(r) == c) {
                runtimes.push((c, p.field.to_string(), p.shown()));
            }
        }
    }
    for (cuda, field, from) in runtimes {
        if scl_domain::cuda::driver_ok(driver, &cuda) != Some(false) {
            continue;
        }
        let Some(need) = scl_domain::cuda::driver_need(&cuda) else {
            continue;
        };
        let why = if need.floor() != need.family_min {
            format!(
                "the minimum of CUDA {}'s own release, which came before the {} compatibility floor {}",
                need.cuda, need.family, need.family_min
            )
        } else if need.minor_compat {
            let exact = match need.release_min {
                Some(m) if m != need.floor() => {
                    format!("; {m} for every feature of CUDA {}", major_minor(&cuda))
                }
                _ => String::new(),
            };
            format!("minor-version compatibility of CUDA {}{exact}", need.family)
        } else {
            format!(
                "the minimum of CUDA {}: before CUDA 11 each release needs its own driver",
                need.family
            )
        };
        out.push(
            Finding::error(
                "E0506",
                field,
                format!(
                    "CUDA {cuda} ({from}) needs an NVIDIA driver ≥ {} ({why}), and the driver is {driver}",
                    need.floor()
                ),
            )
            .help(format!(
                "update the node's driver to ≥ {}, or use an image and wheels for an older CUDA",
                need.floor()
            )),
        );
    }
}
