//! Every row of every table against the CSV files in `data/source`, read
//! with the `csv` crate and normalized here (not by the generator).

use scl_domain::{cuda, gpu, syslibs, tf, torch};
use std::path::PathBuf;

fn read(name: &str) -> Vec<csv::StringRecord> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/source")
        .join(name);
    csv::Reader::from_path(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .records()
        .map(|r| r.unwrap())
        .collect()
}

fn get(r: &csv::StringRecord, i: usize) -> &str {
    r.get(i).unwrap().trim()
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

fn num(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap()).collect()
}

/// "12.9 Update 1" → 12.9.1; "12.9 GA" → 12.9.0; "11.2.2 Update 2" → 11.2.2;
/// "10.2.89" → 10.2.89; "10.1 (10.1.105+)" → 10.1.
fn toolkit(label: &str) -> String {
    let w = words(label);
    let dots = w[0].matches('.').count();
    match (w.get(1).copied(), dots) {
        (Some("Update"), 1) => format!("{}.{}", w[0], w[2]),
        (Some("GA" | "GA2" | "RC"), 1) => format!("{}.0", w[0]),
        _ => w[0].to_string(),
    }
}

#[test]
fn driver_rows_and_branches() {
    let csv = read("cuda_min_driver_linux.csv");
    let (branch_rows, release_rows): (Vec<_>, Vec<_>) =
        csv.iter().partition(|r| get(r, 0) == "13.x (branch)");
    assert_eq!(branch_rows.len(), 1);
    let rows = cuda::driver_rows();
    assert_eq!(rows.len(), release_rows.len());
    for (row, r) in rows.iter().zip(&release_rows) {
        let windows = get(r, 2);
        assert_eq!(row.label, get(r, 0));
        assert_eq!(row.toolkit, toolkit(get(r, 0)), "{}", row.label);
        assert_eq!(row.min_linux, get(r, 1));
        assert_eq!(row.min_windows, (!windows.is_empty()).then_some(windows));
        assert_eq!(row.secondary, get(r, 3).contains("secondary"));
        assert!(row
            .toolkit
            .starts_with(words(row.label)[0].trim_end_matches(".0")));
    }
    // Normalized versions are unique.
    let mut versions: Vec<Vec<u32>> = rows.iter().map(|r| num(r.toolkit)).collect();
    versions.sort();
    versions.dedup();
    assert_eq!(versions.len(), rows.len());
    let w = words(get(branch_rows[0], 1));
    let expected: Vec<(String, &str)> = w
        .chunks(2)
        .map(|c| (c[1].replace(['(', ')'], ""), c[0]))
        .collect();
    let got: Vec<(String, &str)> = cuda::branches()
        .iter()
        .map(|b| (b.cuda.to_string(), b.branch))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(got.len(), 5);
}

#[test]
fn families() {
    let csv = read("cuda_minor_version_compat.csv");
    let fams = cuda::families();
    assert_eq!(fams.len(), csv.len());
    // The exact drivers inside the source's parentheses, written here.
    let exact = [
        ("13.x", "580", None),
        ("12.x", "525.60.13", None),
        ("11.x", "450.80.02", Some("452.39")),
    ];
    for ((f, r), (family, linux, windows)) in fams.iter().zip(&csv).zip(exact) {
        assert_eq!(f.family, get(r, 0));
        assert_eq!(f.family, family);
        assert_eq!(f.major.to_string() + ".x", f.family);
        assert!(get(r, 1).starts_with(&format!(">={}", f.floor)));
        assert!(get(r, 1).contains(linux) && linux.starts_with(f.floor));
        assert_eq!((f.min_linux, f.min_windows), (linux, windows));
        let max = get(r, 2);
        assert_eq!(f.max_exclusive, max.strip_prefix('<'));
        assert_eq!(f.note, get(r, 3));
        // Every family member's own need points at this family.
        let need = cuda::driver_need(&format!("{}.0", f.major)).unwrap();
        assert_eq!((need.family, need.family_min), (f.family, f.min_linux));
    }
}

#[test]
fn torch_rows_and_releases() {
    let csv = read("cog_torch_cuda_matrix.csv");
    let rows = torch::rows();
    assert_eq!(rows.len(), csv.len());
    for (row, r) in rows.iter().zip(&csv) {
        let t = get(r, 0);
        let (ver, local) = match t.find('+') {
            Some(i) => (&t[..i], Some(&t[i + 1..])),
            None => (t, None),
        };
        assert_eq!((row.torch, row.local), (ver, local), "{t}");
        assert_eq!(row.torchvision, get(r, 1).split('+').next().unwrap());
        let ta = get(r, 2);
        assert_eq!(row.torchaudio, (!ta.is_empty()).then_some(ta));
        let cuda = get(r, 3);
        assert_eq!(row.cuda, (cuda != "cpu").then_some(cuda));
        assert_eq!(row.pythons, words(get(r, 4)).as_slice());
        let url = get(r, 5);
        let index = match row.index {
            torch::TorchIndex::PyPi => "pypi-default",
            torch::TorchIndex::FindLinks(u) => {
                assert!(u.ends_with("torch_stable.html"), "{t}");
                u
            }
            torch::TorchIndex::ExtraIndex(u) => {
                assert!(!u.ends_with(".html"), "{t}");
                u
            }
        };
        assert_eq!(index, url, "{t}");
        // A local version agrees with the row's CUDA.
        if let Some(l) = local {
            assert_eq!(
                scl_domain::version::cuda_of_local(l).as_deref(),
                row.cuda,
                "{t}"
            );
        }
        // An extra index is the documented URL of the variant.
        if let torch::TorchIndex::ExtraIndex(u) = row.index {
            let v = row.cuda.map_or("cpu".to_string(), torch::variant);
            assert_eq!(u.trim_end_matches('/'), torch::index_url(&v));
        }
    }
    // Releases: aggregated here from the CSV.
    let mut names: Vec<&str> = csv
        .iter()
        .map(|r| get(r, 0).split('+').next().unwrap())
        .collect();
    names.sort_by_key(|n| num(n));
    names.dedup();
    let releases = torch::releases();
    assert_eq!(releases.iter().map(|r| r.torch).collect::<Vec<_>>(), names);
    for rel in &releases {
        let mine: Vec<_> = csv
            .iter()
            .filter(|r| get(r, 0).split('+').next() == Some(rel.torch))
            .collect();
        let mut cudas: Vec<&str> = mine
            .iter()
            .map(|r| get(r, 3))
            .filter(|c| *c != "cpu")
            .collect();
        cudas.sort_by_key(|c| num(c));
        cudas.dedup();
        let mut pys: Vec<&str> = mine.iter().flat_map(|r| words(get(r, 4))).collect();
        pys.sort_by_key(|p| num(p));
        pys.dedup();
        assert_eq!(rel.cudas, cudas, "{}", rel.torch);
        assert_eq!(rel.pythons, pys, "{}", rel.torch);
        assert_eq!(rel.torchvision, get(mine[0], 1).split('+').next().unwrap());
        assert_eq!(torch::release(rel.torch).as_ref(), Some(rel));
        assert_eq!(
            torch::release_of_torchvision(rel.torchvision).as_ref(),
            Some(rel)
        );
        if let Some(ta) = rel.torchaudio {
            assert_eq!(
                torch::release_of_torchaudio(ta).unwrap().torchaudio,
                Some(ta)
            );
        }
        assert_eq!(rel.newest_cuda(), cudas.last().copied());
        assert_eq!(rel.newest_python(), pys.last().copied());
    }
}

#[test]
fn cuda_images() {
    let csv = read("cog_cuda_base_images.csv");
    let images = cuda::cuda_images();
    assert_eq!(images.len(), csv.len());
    for (img, r) in images.iter().zip(&csv) {
        assert_eq!(
            (img.tag, img.cuda, img.cudnn, img.ubuntu),
            (get(r, 0), get(r, 1), get(r, 2), get(r, 3))
        );
        // The tag spells what the columns say.
        let spelled = format!(
            "{}-{}-devel-ubuntu{}",
            img.cuda,
            cuda::cudnn_spelling(img.cuda),
            img.ubuntu
        );
        assert_eq!(img.tag, spelled);
        assert_eq!(cuda::devel_image(img.cuda, img.ubuntu), Some(img));
        // The highest patch of its major.minor on its Ubuntu.
        let mm = &img.cuda[..img.cuda.rfind('.').unwrap()];
        let best = csv
            .iter()
            .filter(|r| get(r, 3) == img.ubuntu && get(r, 1).rsplit_once('.').unwrap().0 == mm)
            .max_by_key(|r| num(get(r, 1)))
            .unwrap();
        assert_eq!(cuda::devel_image(mm, img.ubuntu).unwrap().tag, get(best, 0));
        assert_eq!(cuda::nearest_images(img.cuda, Some(img.ubuntu))[0], img);
    }
}

#[test]
fn floors() {
    let csv = read("cog_gpu_compute_floor.csv");
    let floors = gpu::floors();
    assert_eq!(floors.len(), csv.len());
    for (f, r) in floors.iter().zip(&csv) {
        assert_eq!(
            (f.compute_capability, f.arch, f.min_torch, f.min_cuda),
            (get(r, 0), get(r, 1), get(r, 2), get(r, 3))
        );
        assert_eq!(gpu::floor_for(f.compute_capability), Some(f));
    }
}

#[test]
fn gpu_models() {
    let csv = read("gpu_models.csv");
    let models = gpu::models();
    assert_eq!(models.len(), csv.len());
    for (m, r) in models.iter().zip(&csv) {
        assert_eq!(
            (m.name, m.compute_capability, m.arch),
            (get(r, 0), get(r, 1), get(r, 2))
        );
        let spellings: Vec<&str> = get(r, 3).split('|').collect();
        assert_eq!(m.spellings, spellings.as_slice());
        // Found by its canonical name, in nvidia-smi and GFD forms, and by
        // every spelling.
        for name in [
            m.name.to_string(),
            format!("NVIDIA {}", m.name),
            format!("NVIDIA-{}", m.name.replace(' ', "-")),
            format!("nvidia-{}", m.name.to_lowercase().replace(' ', "-")),
        ] {
            assert_eq!(gpu::gpu_model(&name), Some(m), "{name}");
        }
        for s in m.spellings {
            assert_eq!(gpu::gpu_model(s), Some(m), "{s}");
        }
        // The generation floor: the row of the model's major version (10.3
        // takes 10.0's), of the same architecture family (`Blackwell Ultra`
        // is a Blackwell); none before Hopper, where every torch of the table
        // has kernels.
        let major = num(m.compute_capability)[0];
        match gpu::floor_for(m.compute_capability) {
            Some(f) => {
                assert!(major >= 9, "{}: a floor below Hopper", m.name);
                assert_eq!(num(f.compute_capability)[0], major, "{}", m.name);
                assert_eq!(
                    f.arch.split_whitespace().next(),
                    m.arch.split_whitespace().next(),
                    "{}: floor {f:?}",
                    m.name
                );
            }
            None => assert!(major < 9, "{}: no floor", m.name),
        }
        if m.arch.starts_with("Blackwell") {
            let f = gpu::floor_for(m.compute_capability).unwrap();
            assert_eq!((f.min_torch, f.min_cuda), ("2.7.0", "12.8"), "{}", m.name);
        }
    }
}

#[test]
fn tf_rows() {
    let csv = read("cog_tf_matrix.csv");
    let rows = tf::rows();
    assert_eq!(rows.len(), csv.len());
    for (row, r) in rows.iter().zip(&csv) {
        assert_eq!(
            (row.tf, row.cuda, row.cudnn, row.package),
            (get(r, 0), get(r, 1), get(r, 2), get(r, 4))
        );
        assert_eq!(row.pythons, words(get(r, 3)).as_slice());
        assert_eq!(tf::release(row.tf), Some(row));
        assert_eq!(row.package, format!("tensorflow=={}", row.tf));
    }
}

#[test]
fn syslibs() {
    let csv = read("python_syslibs.csv");
    let all = syslibs::all();
    assert_eq!(all.len(), csv.len());
    for (s, r) in all.iter().zip(&csv) {
        assert_eq!(
            (s.package, s.why, s.source),
            (get(r, 0), get(r, 2), get(r, 3))
        );
        assert_eq!(s.apt, words(get(r, 1)).as_slice());
        assert_eq!(syslibs::needs(s.package), Some(s));
        assert_eq!(
            syslibs::needs(&s.package.to_uppercase().replace('-', "_")),
            Some(s)
        );
        assert_eq!(
            syslibs::normalize(s.package),
            s.package,
            "already normalized"
        );
        // A package pip compiles on Linux needs, besides its libraries, a C
        // compiler and the C library's headers (`gcc` only recommends
        // `libc6-dev`, and sclc installs without recommends); the Python
        // headers come with python:* images, and `why` says that other
        // images need python3-dev.
        let compiled = ["compiled", "built from source", "compiles"]
            .iter()
            .any(|w| s.why.contains(w));
        if compiled {
            for needed in ["gcc", "libc6-dev"] {
                assert!(s.apt.contains(&needed), "{}: {needed}", s.package);
            }
            assert!(s.why.contains("python3-dev"), "{}", s.package);
        } else {
            assert!(!s.apt.contains(&"gcc"), "{}", s.package);
        }
    }
    let compiled: Vec<&str> = all
        .iter()
        .filter(|s| s.apt.contains(&"gcc"))
        .map(|s| s.package)
        .collect();
    assert_eq!(
        compiled,
        ["pyaudio", "pygraphviz", "psycopg2", "mysqlclient"]
    );
}
