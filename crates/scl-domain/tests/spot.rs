//! Hand-written spot checks of the API, row facts written out here.

use scl_domain::cuda::{self, cudnn_spelling, devel_image, driver_need, driver_ok, nearest_images};
use scl_domain::gpu::{floor_for, gpu_model};
use scl_domain::version::{cuda_of_local, split_local, Dotted};
use scl_domain::{syslibs, tf, torch};

#[test]
fn torch_2_1_2() {
    let r = torch::release("2.1.2").unwrap();
    assert_eq!(r.torchvision, "0.16.2");
    assert_eq!(r.torchaudio, Some("2.1.2"));
    assert_eq!(r.cudas, ["11.8", "12.1"]);
    assert_eq!(r.pythons, ["3.8", "3.9", "3.10", "3.11"]);
    assert_eq!(torch::release("2.1.2+cu121"), Some(r.clone()));
    assert_eq!(
        torch::release_of_torchvision("0.16.2+cu118"),
        Some(r.clone())
    );
    assert_eq!(torch::release_of_torchaudio("2.1.2"), Some(r));
    assert_eq!(torch::release("2.1.3"), None);
    assert_eq!(
        torch::release_of_torchaudio("0.7.2").unwrap().torch,
        "1.7.1"
    );
    assert_eq!(torch::release("1.2.0").unwrap().torchaudio, None);
    // Numeric order: 9.2 before 10.x, 2.10.0 after 2.9.1.
    assert_eq!(
        torch::release("1.7.0").unwrap().cudas,
        ["9.2", "10.1", "10.2", "11.0"]
    );
    let all = torch::releases();
    let pos = |t: &str| all.iter().position(|r| r.torch == t).unwrap();
    assert!(pos("2.9.1") < pos("2.10.0") && pos("2.10.0") < pos("2.11.0"));
    assert_eq!(
        torch::release("2.11.0").unwrap().cudas,
        ["12.6", "12.8", "12.9", "13.0"]
    );
}

#[test]
fn torch_index_and_variant() {
    assert_eq!(
        torch::index_url("cu118"),
        "https://download.pytorch.org/whl/cu118"
    );
    assert_eq!(torch::variant("11.8"), "cu118");
    assert_eq!(torch::variant("12.1.1"), "cu121");
    assert_eq!(torch::variant("9.2"), "cu92");
    assert_eq!(torch::variant("13.0"), "cu130");
    assert_eq!(torch::variant("cpu"), "cpu");
    for v in ["cu118", "cu121", "cu130", "cu92"] {
        assert_eq!(torch::variant(&cuda_of_local(v).unwrap()), v);
    }
}

#[test]
fn versions() {
    assert!(Dotted::parse("9.2").unwrap() < Dotted::parse("11.0").unwrap());
    assert_eq!(Dotted::parse("525.60.13").unwrap().major(), 525);
    assert_eq!(Dotted::parse("12.1").unwrap().minor(), 1);
    assert_eq!(Dotted::parse("12.1.1").unwrap().major_minor(), "12.1");
    assert_eq!(Dotted::parse("2.1.2").unwrap().to_string(), "2.1.2");
    assert_eq!(Dotted::parse("junk"), None);
    assert_eq!(split_local("2.1.2+cu118"), ("2.1.2", Some("cu118")));
    assert_eq!(cuda_of_local("cpu"), None);
}

#[test]
fn drivers() {
    let n = driver_need("12.1").unwrap();
    assert_eq!(n.release_min, Some("530.30.02"));
    assert_eq!((n.family, n.family_min), ("12.x", "525.60.13"));
    assert_eq!(n.cuda, "12.1");
    let n = driver_need("13.0").unwrap();
    assert_eq!(
        (n.family, n.family_min, n.release_min),
        ("13.x", "580", Some("580.65.06"))
    );
    assert_eq!(
        driver_need("13.0.2").unwrap().release_min,
        Some("580.95.05")
    );
    assert_eq!(driver_need("13.1").unwrap().release_min, None);
    assert_eq!(
        driver_need("12.2.2").unwrap().release_min,
        Some("535.104.05")
    );
    // 12.3.2 has no row of its own: the newest 12.3 row before it.
    assert_eq!(
        driver_need("12.3.2").unwrap().release_min,
        Some("545.23.08")
    );
    // 11.0: the GA row (11.0.2), not the RC (11.0.1).
    assert_eq!(driver_need("11.0").unwrap().release_min, Some("450.51.05"));
    assert_eq!(driver_need("11.8").unwrap().family_min, "450.80.02");
    // Before 11: no minor-version compatibility, each release's own minimum.
    let n = driver_need("10.2").unwrap();
    assert_eq!(
        (n.family_min, n.release_min, n.minor_compat),
        ("440.33", Some("440.33"), false)
    );
    assert_eq!(driver_need("9.0").unwrap().family_min, "384.81");
    assert_eq!(driver_ok("418.39", "10.2"), Some(false));
    assert_eq!(driver_ok("440.33", "10.2"), Some(true));
    assert!(driver_need("12.1").unwrap().minor_compat);
    assert_eq!(driver_need("7.1"), None);
    assert_eq!(driver_need("x"), None);

    assert_eq!(driver_ok("535.104.05", "12.2"), Some(true));
    assert_eq!(driver_ok("520.61.05", "12.1"), Some(false));
    assert_eq!(driver_ok("525.60.13", "12.8"), Some(true));
    assert_eq!(
        driver_ok("580.65.06", "12.4"),
        Some(true),
        "backward compatibility"
    );
    assert_eq!(driver_ok("575.57.08", "13.0"), Some(false));
    assert_eq!(driver_ok("580", "13.2"), Some(true));
    assert_eq!(driver_ok("junk", "12.1"), None);
    assert_eq!(
        cuda::family_of("11.4.3").unwrap().max_exclusive,
        Some("525")
    );
    assert_eq!(
        cuda::branches()
            .iter()
            .find(|b| b.cuda == "13.1")
            .unwrap()
            .branch,
        "R590"
    );
    let r = cuda::driver_rows()
        .iter()
        .find(|r| r.label == "12.9 Update 1")
        .unwrap();
    assert_eq!(
        (r.toolkit, r.min_linux, r.min_windows),
        ("12.9.1", "575.57.08", Some("576.57"))
    );
    let r = cuda::driver_rows()
        .iter()
        .find(|r| r.label == "10.1 (10.1.105+)")
        .unwrap();
    assert_eq!(r.toolkit, "10.1");
    assert!(
        cuda::driver_rows()
            .iter()
            .find(|r| r.label == "13.0 GA")
            .unwrap()
            .secondary
    );
}

#[test]
fn images() {
    assert_eq!(
        devel_image("12.8", "22.04").unwrap().tag,
        "12.8.1-cudnn-devel-ubuntu22.04"
    );
    assert_eq!(
        devel_image("12.2", "22.04").unwrap().tag,
        "12.2.2-cudnn8-devel-ubuntu22.04"
    );
    assert_eq!(
        devel_image("12.1", "22.04").unwrap().tag,
        "12.1.1-cudnn8-devel-ubuntu22.04"
    );
    assert_eq!(
        devel_image("12.1", "ubuntu22.04").unwrap().tag,
        "12.1.1-cudnn8-devel-ubuntu22.04"
    );
    assert_eq!(
        devel_image("12.1.0", "22.04").unwrap().tag,
        "12.1.0-cudnn8-devel-ubuntu22.04"
    );
    assert_eq!(devel_image("12.6", "24.04").unwrap().cudnn, "9");
    assert_eq!(devel_image("12.7", "22.04"), None);
    assert_eq!(devel_image("12.1", "24.04"), None);
    assert_eq!(devel_image("12.1.2", "22.04"), None);
    let near: Vec<&str> = nearest_images("12.7", Some("22.04"))
        .iter()
        .map(|i| i.cuda)
        .collect();
    assert_eq!(near, ["12.6.3", "12.6.2", "12.6.1", "12.8.0", "12.6.0"]);
    assert_eq!(nearest_images("12.7", None).len(), cuda::NEAREST);
    assert!(nearest_images("junk", None).is_empty());
    assert_eq!(cudnn_spelling("12.2.2"), "cudnn8");
    assert_eq!(cudnn_spelling("11.8"), "cudnn8");
    assert_eq!(cudnn_spelling("12.3.2"), "cudnn9");
    assert_eq!(cudnn_spelling("12.4.1"), "cudnn");
    assert_eq!(cudnn_spelling("13.0"), "cudnn");
}

#[test]
fn gpus() {
    let f = floor_for("9.0").unwrap();
    assert_eq!((f.min_torch, f.min_cuda), ("2.0.1", "11.8"));
    assert_eq!(floor_for("12.1").unwrap().compute_capability, "12.0");
    assert_eq!(floor_for("10.3").unwrap().compute_capability, "10.0");
    assert_eq!(floor_for("8.9"), None);
    assert_eq!(floor_for("x"), None);

    let cc = |n: &str| gpu_model(n).map(|m| (m.name, m.compute_capability));
    assert_eq!(cc("NVIDIA H100 80GB HBM3"), Some(("H100", "9.0")));
    assert_eq!(cc("NVIDIA A10G"), Some(("A10G", "8.6")));
    assert_eq!(cc("NVIDIA A10"), Some(("A10", "8.6")));
    assert_eq!(cc("Tesla V100-SXM2-16GB"), Some(("V100", "7.0")));
    assert_eq!(cc("NVIDIA A100-SXM4-40GB"), Some(("A100", "8.0")));
    assert_eq!(cc("NVIDIA GeForce RTX 4090"), Some(("RTX 4090", "8.9")));
    assert_eq!(cc("NVIDIA-A100-SXM4-80GB"), Some(("A100", "8.0")));
    assert_eq!(cc("A100-SXM4-40GB-MIG-1g.5gb"), Some(("A100", "8.0")));
    assert_eq!(cc("Tesla-T4"), Some(("T4", "7.5")));
    assert_eq!(cc("NVIDIA-GeForce-RTX-3090"), Some(("RTX 3090", "8.6")));
    assert_eq!(cc("nvidia-h100"), Some(("H100", "9.0")));
    assert_eq!(cc("h100"), Some(("H100", "9.0")));
    assert_eq!(cc("a100-80gb"), Some(("A100", "8.0")));
    assert_eq!(cc("NVIDIA L40S"), Some(("L40S", "8.9")));
    assert_eq!(cc("NVIDIA GH200 480GB"), Some(("GH200", "9.0")));
    assert_eq!(
        cc("NVIDIA RTX 6000 Ada Generation"),
        Some(("RTX 6000 Ada", "8.9"))
    );
    assert_eq!(cc("NVIDIA RTX A6000"), Some(("RTX A6000", "8.6")));
    assert_eq!(
        cc("NVIDIA RTX PRO 6000 Blackwell Server Edition"),
        Some(("RTX PRO 6000 Blackwell", "12.0"))
    );
    assert_eq!(cc("rtx4090"), Some(("RTX 4090", "8.9")));
    // Hopper for the China market, Blackwell Ultra, the smaller RTX 50s, as
    // nvidia-smi and GPU Feature Discovery name them.
    assert_eq!(cc("NVIDIA H800 80GB HBM3"), Some(("H800", "9.0")));
    assert_eq!(cc("NVIDIA H800 PCIe"), Some(("H800", "9.0")));
    assert_eq!(cc("NVIDIA-H800"), Some(("H800", "9.0")));
    assert_eq!(cc("NVIDIA H20"), Some(("H20", "9.0")));
    assert_eq!(cc("NVIDIA H20-3e"), Some(("H20", "9.0")));
    assert_eq!(cc("NVIDIA H200"), Some(("H200", "9.0")), "not the H20");
    assert_eq!(cc("NVIDIA B300 SXM6 AC"), Some(("B300", "10.3")));
    assert_eq!(cc("NVIDIA-B300-SXM6-AC"), Some(("B300", "10.3")));
    assert_eq!(cc("NVIDIA GB300"), Some(("GB300", "10.3")));
    assert_eq!(cc("nvidia-gb300"), Some(("GB300", "10.3")));
    assert_eq!(cc("NVIDIA GeForce RTX 5070"), Some(("RTX 5070", "12.0")));
    assert_eq!(cc("NVIDIA GeForce RTX 5070 Ti"), Some(("RTX 5070", "12.0")));
    assert_eq!(cc("NVIDIA-GeForce-RTX-5070"), Some(("RTX 5070", "12.0")));
    assert_eq!(cc("NVIDIA GeForce RTX 5060"), Some(("RTX 5060", "12.0")));
    assert_eq!(cc("NVIDIA GeForce RTX 5060 Ti"), Some(("RTX 5060", "12.0")));
    assert_eq!(cc("rtx5060"), Some(("RTX 5060", "12.0")));
    for name in ["NVIDIA B300 SXM6 AC", "NVIDIA GB300"] {
        let m = gpu_model(name).unwrap();
        assert_eq!(m.arch, "Blackwell Ultra");
        let f = floor_for(m.compute_capability).unwrap();
        assert_eq!(
            (f.compute_capability, f.min_torch, f.min_cuda),
            ("10.0", "2.7.0", "12.8")
        );
    }
    assert_eq!(cc("Quadro RTX 6000"), None, "a Turing card");
    assert_eq!(cc("NVIDIA A1000"), None);
    assert_eq!(cc(""), None);
}

#[test]
fn tf_and_syslibs() {
    let r = tf::release("2.15.0").unwrap();
    assert_eq!((r.cuda, r.cudnn), ("12.2", "8.9"));
    assert_eq!(tf::release("2.16").unwrap().tf, "2.16.1");
    assert_eq!(tf::release("2.3.0"), None);

    assert_eq!(
        syslibs::needs("opencv-python").unwrap().apt,
        ["libgl1", "libglib2.0-0"]
    );
    assert_eq!(
        syslibs::needs("OpenCV_Contrib.Python").unwrap().package,
        "opencv-contrib-python"
    );
    assert_eq!(syslibs::needs("opencv-python-headless"), None);
    assert_eq!(syslibs::needs("psycopg2-binary"), None);
    // Compiled from its sdist: a C compiler and the C library's headers
    // besides libpq's.
    assert_eq!(
        syslibs::needs("psycopg2").unwrap().apt,
        ["gcc", "libc6-dev", "libpq-dev"]
    );
    assert_eq!(
        syslibs::needs("mysqlclient").unwrap().apt,
        [
            "gcc",
            "libc6-dev",
            "default-libmysqlclient-dev",
            "pkg-config"
        ]
    );
    assert_eq!(syslibs::normalize("Foo__Bar.-baz"), "foo-bar-baz");
    assert_eq!(syslibs::normalize("_x_"), "-x-");
}
