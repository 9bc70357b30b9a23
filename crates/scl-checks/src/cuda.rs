//! CUDA: torch wheel variants against the image's CUDA (`E0501`), conda
//! CUDA packages (`E0505`), `nvidia/cuda` tags that do not exist (`E0508`)
//! and the driver a runtime needs (`E0506`).

use scl_domain::version::Dotted;

use crate::{major_minor, same_version, Cx, Finding};

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

/// `E0511`: a `+cuXYZ` pin of a torch release that has no wheel for that
/// CUDA (torch 2.8.0 has cu126, cu128 and cu129, not cu118).
fn published(cx: &Cx, out: &mut Vec<Finding>) {
    for p in cx.pins.iter().filter(|p| p.name == "torch") {
        let (Some(cuda), Some(rel)) = (p.cuda(), p.release().and_then(scl_domain::torch::release))
        else {
            continue;
        };
        if rel.cudas.iter().any(|c| *c == cuda) {
            continue;
        }
        let variants: Vec<String> = rel
            .cudas
            .iter()
            .map(|c| format!("`+{}`", scl_domain::torch::variant(c)))
            .collect();
        out.push(
            Finding::error(
                "E0511",
                &p.field,
                format!(
                    "{} does not exist: torch {} has wheels for CUDA {} only",
                    p.shown(),
                    rel.torch,
                    rel.cudas.join(", ")
                ),
            )
            .help(format!("use one of {}", variants.join(", "))),
        );
    }
}

/// `E0501`: each `+cuXYZ` pin against the base image's CUDA, else against
/// the first such pin.
fn variants(cx: &Cx, out: &mut Vec<Finding>) {
    let pins: Vec<_> = cx
        .pins
        .iter()
        .filter(|p| VARIANT_PACKAGES.contains(&p.name.as_str()))
        .filter_map(|p| Some((p, p.cuda()?)))
        .collect();
    if let Some(base) = &cx.base_cuda {
        let want = major_minor(base);
        // A devel image (nvcc, headers) builds extensions against its own
        // CUDA: a wheel of another CUDA is an error there. On a runtime or
        // base image the wheel's own CUDA libraries are used and the
        // image's are only dead weight: a warning (W0507).
        let devel = cx.base_ref().contains("devel");
        for (p, cuda) in &pins {
            if *cuda != want {
                let (code, error) = if devel {
                    ("E0501", true)
                } else {
                    ("W0507", false)
                };
                let f = if error {
                    Finding::error(code, &p.field, String::new())
                } else {
                    Finding::warning(code, &p.field, String::new())
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
                    .help(format!(
                        "use the wheel built for CUDA {want} (`+{}`), or a base image with CUDA {cuda}: torch's own CUDA libraries and the image's (nvcc, cuDNN, extensions built against them) should be one version",
                        scl_domain::torch::variant(&want)
                    )),
                );
            }
        }
        return;
    }
    let Some((first, first_cuda)) = pins.first() else {
        return;
    };
    for (p, cuda) in &pins[1..] {
        if cuda != first_cuda {
            out.push(
                Finding::error(
                    "E0501",
                    &p.field,
                    format!(
                        "{} is built for CUDA {cuda}, but {} is built for CUDA {first_cuda}",
                        p.shown(),
                        first.shown()
                    ),
                )
                .also(&first.field, format!("CUDA {first_cuda} here"))
                .help(format!(
                    "pin every one of torch, torchvision and torchaudio with the same variant (`+{}`)",
                    scl_domain::torch::variant(first_cuda)
                )),
            );
        }
    }
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

/// `E0505`: a conda CUDA package whose version is not the base image's CUDA.
fn conda(cx: &Cx, out: &mut Vec<Finding>) {
    let (Some(base), Some(conda)) = (&cx.base_cuda, &cx.spec.conda) else {
        return;
    };
    let want = major_minor(base);
    for (i, spec) in conda.packages.iter().enumerate() {
        // `name=1.2`, `name==1.2.*`, `name 1.2`, `channel::name=1.2`.
        let spec_body = spec.rsplit("::").next().unwrap_or(spec);
        let end = spec_body
            .find(['=', '<', '>', '!', '~', ' ', '['])
            .unwrap_or(spec_body.len());
        let name = spec_body[..end].to_ascii_lowercase();
        if !CONDA_CUDA.contains(&name.as_str()) {
            continue;
        }
        let version: String = spec_body[end..]
            .trim_start_matches(['=', ' '])
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if version.is_empty()
            || spec_body[end..]
                .trim_start()
                .starts_with(['<', '>', '!', '~'])
        {
            continue;
        }
        let got = major_minor(version.trim_end_matches('.'));
        if !same_version(&got, &want) {
            out.push(
                Finding::error(
                    "E0505",
                    format!("conda.packages[{i}]"),
                    format!(
                        "`{spec}` installs CUDA {got}, but the base image {} has CUDA {base}",
                        cx.base_ref()
                    ),
                )
                .also("base", format!("CUDA {base} here"))
                .help(format!(
                    "ask conda for CUDA {want} (`{name}={want}`), or drop it and use the image's CUDA"
                )),
            );
        }
    }
}

/// `E0508`: an `nvidia/cuda` tag without the patch version, or a devel +
/// cuDNN tag the table of published tags does not have.
fn tag(reference: &str, field: &str, out: &mut Vec<Finding>) {
    if scl_ir::bases::info(reference).family != scl_ir::bases::Family::NvidiaCuda {
        return;
    }
    let (repo, Some(tag)) = scl_ir::bases::split_ref(reference) else {
        return;
    };
    let Some((version, rest)) = tag.split_once('-') else {
        return;
    };
    let ubuntu = rest
        .rsplit('-')
        .next()
        .and_then(|os| os.strip_prefix("ubuntu"))
        .map(str::to_string);
    if Dotted::parse(version).is_none() {
        return;
    }
    let nearest = |cuda: &str| {
        scl_domain::cuda::nearest_images(cuda, ubuntu.as_deref())
            .into_iter()
            .take(3)
            .map(|i| format!("`{repo}:{}`", flavored(i.tag, rest)))
            .collect::<Vec<_>>()
    };
    if version.split('.').count() < 3 {
        let mut f = Finding::error(
            "E0508",
            field,
            format!(
                "`{reference}` does not exist: NVIDIA publishes `nvidia/cuda` tags with the patch version only (`{version}.x-{rest}`)"
            ),
        );
        // The newest patch release of that CUDA the table knows.
        let patch = scl_domain::cuda::cuda_images()
            .iter()
            .filter(|i| major_minor(i.cuda) == version)
            .filter_map(|i| Some((Dotted::parse(i.cuda)?, i.cuda)))
            .max()
            .map(|(_, c)| c);
        f = match patch {
            Some(c) => f.help(format!("write the patch version: `{repo}:{c}-{rest}`")),
            None => f.help(format!(
                "write the patch version (`{version}.N-{rest}`); the tags are listed at https://hub.docker.com/r/nvidia/cuda/tags"
            )),
        };
        out.push(f);
        return;
    }
    // The table covers the devel images with cuDNN on Ubuntu: only those
    // are checked (NVIDIA publishes UBI and Rocky Linux ones too).
    if rest.contains("cudnn") && rest.contains("devel") && ubuntu.is_some() {
        let known = scl_domain::cuda::cuda_images().iter().any(|i| i.tag == tag);
        if !known {
            let mut f = Finding::error(
                "E0508",
                field,
                format!("`{reference}` is not an `nvidia/cuda` tag NVIDIA publishes"),
            );
            let near = nearest(version);
            if !near.is_empty() {
                f = f.help(format!(
                    "the nearest that exist: {} (cuDNN is `cudnn8` up to CUDA 12.2, `cudnn9` for 12.3 and `cudnn` from 12.4)",
                    near.join(", ")
                ));
            }
            out.push(f);
        }
    }
}

/// A devel tag of the table turned into the flavour the user wrote
/// (`runtime`, `base`), when the tag has one.
fn flavored(devel: &str, written: &str) -> String {
    for flavor in ["runtime", "base"] {
        if written.split('-').any(|w| w == flavor) {
            return devel.replace("-devel-", &format!("-{flavor}-"));
        }
    }
    devel.to_string()
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
        .filter(|p| VARIANT_PACKAGES.contains(&p.name.as_str()))
    {
        if let Some(c) = p.cuda() {
            if !runtimes.iter().any(|(r, _, _)| major_minor(r) == c) {
                runtimes.push((c, p.field.clone(), p.shown()));
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
        let exact = match need.release_min {
            Some(m) if m != need.family_min => {
                format!("; {m} for every feature of CUDA {}", major_minor(&cuda))
            }
            _ => String::new(),
        };
        out.push(
            Finding::error(
                "E0506",
                field,
                format!(
                    "CUDA {cuda} ({from}) needs an NVIDIA driver ≥ {} (minor-version compatibility of CUDA {}{exact}), and the driver is {driver}",
                    need.family_min, need.family
                ),
            )
            .help(format!(
                "update the node's driver to ≥ {}, or use an image and wheels for an older CUDA",
                need.family_min
            )),
        );
    }
}
