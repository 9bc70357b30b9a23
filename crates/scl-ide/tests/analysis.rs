//! `AnalysisHost` and `Analysis` on an in-memory file system: the answers a
//! front end renders, and that they follow changes told to the host.

use scl_ide::{AnalysisHost, MemorySystem, Target};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn host(sys: &MemorySystem) -> AnalysisHost {
    sys.set_current_dir("/ws");
    AnalysisHost::new(Arc::new(sys.clone()), Path::new("/ws"), None)
}

#[test]
fn workspace_files_follow_the_folder_listings() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/a.env.scl", "let a = 1\n");
        sys.write("/ws/sub/b.env.scl", "let b = 1\n");
        sys.write("/ws/.git/c.env.scl", "let c = 1\n");
        sys.write("/ws/target/d.env.scl", "let d = 1\n");
        sys.write("/ws/notes.txt", "x\n");
        let mut h = host(&sys);
        let names = |h: &AnalysisHost| -> Vec<PathBuf> {
            let a = h.analysis();
            a.workspace_files().into_iter().map(|f| a.path(f)).collect()
        };
        assert_eq!(
            names(&h),
            [
                PathBuf::from("/ws/a.env.scl"),
                PathBuf::from("/ws/sub/b.env.scl")
            ]
        );
        // A new file: the listing is an input, read again when told.
        sys.write("/ws/sub/new.env.scl", "let n = 1\n");
        assert_eq!(names(&h).len(), 2);
        h.did_change_files(&[PathBuf::from("/ws/sub/new.env.scl")]);
        assert_eq!(names(&h).len(), 3);
        // A removed folder.
        sys.remove("/ws/sub/b.env.scl");
        sys.remove("/ws/sub/new.env.scl");
        h.did_change_files(&[PathBuf::from("/ws/sub")]);
        assert_eq!(names(&h), [PathBuf::from("/ws/a.env.scl")]);
    })
}

#[test]
fn envs_ir_provenance_and_lowering() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write(
            "/ws/main.env.scl",
            "env py(v: String) {\n  base = image(\"python:${v}-slim\")\n}\nenv app extends py(\"3.12\") {\n  workdir = \"/app\"\n}\n",
        );
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("main.env.scl"));
        assert_eq!(a.path(f), Path::new("/ws/main.env.scl"));
        assert_eq!(a.check(&[f]), vec![]);
        assert_eq!(a.envs(f), ["app"]);
        assert_eq!(a.select_envs(f, None).unwrap(), ["app"]);
        let e = a.select_envs(f, Some("py")).unwrap_err();
        assert_eq!(e.code, "E0314");
        let e = a.select_envs(f, Some("ap")).unwrap_err();
        assert_eq!(
            (e.code, e.help.as_deref()),
            ("E0315", Some("did you mean `app`?"))
        );
        let spec = a.ir(f, "app").unwrap();
        assert_eq!(spec.workdir.as_deref(), Some("/app"));
        let prov = a.provenance(f, "app").unwrap();
        let w = &prov["workdir"];
        assert_eq!(
            (w.env.as_str(), w.file.as_str(), w.line, w.column),
            ("app", "main.env.scl", 5, 3)
        );
        let o = a.origins(f, "app").unwrap();
        let w = o.iter().find(|o| o.path == "workdir").unwrap();
        assert_eq!(w.at.file, f);
        assert_eq!(&a.text(f)[w.at.span.range()], "workdir = \"/app\"");
        let l = a.lower(f, &a.envs(f), Target::DOCKER);
        assert!(!l.incomplete);
        assert_eq!(l.outputs.len(), 1);
        let paths: Vec<&str> = l.outputs[0]
            .1
            .artifacts
            .iter()
            .map(|x| x.path.as_str())
            .collect();
        assert!(paths.contains(&"Dockerfile"), "{paths:?}");
    })
}

#[test]
fn line_index_positions_for_lsp() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/m.env.scl", "let s = \"😀\"\nlet t = 1\n");
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("/ws/m.env.scl"));
        let text = a.text(f);
        let ix = a.line_index(f);
        let t = text.find("t =").unwrap();
        assert_eq!(ix.utf16_position(&text, t), (1, 4));
        let quote = text.rfind('"').unwrap();
        // `let s = "` is 9 units, the emoji 2.
        assert_eq!(ix.utf16_position(&text, quote), (0, 11));
        assert_eq!(a.line_col(f, quote as u32), (1, 11));
        let span = scl_ide::Span::new(quote, t + 1);
        assert_eq!(a.lsp_range(f, span), ((0, 11), (1, 5)));
        assert_eq!(a.offset_of_lsp(f, 0, 11), quote as u32);
        assert_eq!(a.offset_of_lsp(f, 1, 99), (text.len() - 1) as u32);
    })
}

#[test]
fn a_snapshot_answers_from_its_own_time() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/m.env.scl", "let x = nope\n");
        let mut h = host(&sys);
        let f = h.file(Path::new("/ws/m.env.scl"));
        assert_eq!(h.analysis().check(&[f]).len(), 1);
        h.set_overlay(Path::new("/ws/m.env.scl"), "let x = 1\n");
        assert_eq!(h.analysis().check(&[f]), vec![]);
        h.remove_overlay(Path::new("/ws/m.env.scl"));
        assert_eq!(h.analysis().check(&[f]).len(), 1);
        let d = &h.analysis().check(&[f])[0];
        assert_eq!(h.analysis().file_of_key(&d.at.file), Some(f));
    })
}

#[test]
fn moving_the_workspace_root_changes_keys_and_what_is_inside() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write("/ws/lib.env.scl", "let img = \"debian:12.5\"\n");
        sys.write(
            "/ws/app/m.env.scl",
            "import \"../lib.env.scl\" as lib\nenv app {\n  base = image(lib.img)\n}\n",
        );
        let mut h = host(&sys);
        let f = h.file(Path::new("/ws/app/m.env.scl"));
        assert_eq!(&*h.analysis().key(f), "app/m.env.scl");
        assert_eq!(h.analysis().check(&[f]), vec![]);
        h.set_workspace_root(Path::new("/ws/app"));
        let a = h.analysis();
        assert_eq!(&*a.key(f), "m.env.scl");
        assert_eq!(a.file_of_key("m.env.scl"), Some(f));
        let d = a.check(&[f]);
        assert_eq!(d[0].code, "E0105", "{d:?}");
    })
}

/// Every position of every example and stdlib module (and a few broken
/// texts) answers without a panic: definition, hover, completion at each
/// byte offset (also inside a character), references at every fifth.
#[test]
fn every_position_of_real_files_answers_without_a_panic() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "stdlib"] {
        let mut stack = vec![repo.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(".env.scl") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let broken = [
        "env app {\n  resources.requests { mem",
        "import \"./",
        "env py(version: String) {\n  base = image(\"${ver",
        "env app extends torch.runtime(cu, (",
        "let x = [for p in \"é😀\": p.",
        "fn f(x: Int) -> Int = f(",
    ];
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        let mut paths = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let p = PathBuf::from(format!(
                "/ws/f{i}/{}",
                f.file_name().unwrap().to_string_lossy()
            ));
            sys.write(&p, std::fs::read(f).unwrap());
            paths.push(p);
        }
        for (i, t) in broken.iter().enumerate() {
            let p = PathBuf::from(format!("/ws/broken{i}.env.scl"));
            sys.write(&p, t);
            paths.push(p);
        }
        let h = host(&sys);
        let a = h.analysis();
        for p in &paths {
            let f = a.file(p);
            let n = a.text(f).len() as u32;
            let _ = a.check(&[f]);
            let _ = a.symbols(f);
            for off in 0..=n + 1 {
                let _ = a.definition(f, off);
                let _ = a.hover(f, off);
                let _ = a.completions(f, off);
                if off % 5 == 0 {
                    let _ = a.references(f, off, true);
                }
            }
        }
    })
}

/// `replaced` names the env whose value a write replaced, for every way
/// the two writes can meet: the same path, a path below a record the
/// parent wrote whole, a record written whole over paths the parent set
/// below it, a map merged with `+=`; and nothing when the write adds a
/// value the parent did not have, or the env rewrites its own value.
#[test]
fn provenance_names_what_each_write_replaced() {
    scl_ide::with_compiler_stack(|| {
        let sys = MemorySystem::new();
        sys.write(
            "/ws/main.env.scl",
            r#"env a {
  base = image("registry.example.com/team/python:1")
  python = { version = "3.11" }
  vars = { A = "1" }
  resources.requests = { cpu = 1 }
  resources.limits { cpu = 4, memory = 8Gi }
  labels { k = "r" }
  workdir = "/a"
}
env b extends a {
  python.version = "3.12"
  vars { A = "2", NEW = "n" }
  resources.requests.cpu = 2
  resources.limits = { cpu = 3 }
  labels += { k = "s" }
  workdir = "/b"
  description = "new"
}
env c extends b {
  python = { version = "3.13" }
}
"#,
        );
        let h = host(&sys);
        let a = h.analysis();
        let f = a.file(Path::new("main.env.scl"));
        assert_eq!(a.check(&[f]), vec![]);
        let prov = a.provenance(f, "b").unwrap();
        let got = |p: &str| {
            let e = &prov[p];
            (e.env.as_str(), e.replaced.as_deref())
        };
        assert_eq!(got("python.version"), ("b", Some("a")));
        assert_eq!(got("vars.A"), ("b", Some("a")));
        assert_eq!(got("resources.requests.cpu"), ("b", Some("a")));
        assert_eq!(got("resources.limits"), ("b", Some("a")));
        assert_eq!(got("labels.k"), ("b", Some("a")));
        assert_eq!(got("workdir"), ("b", Some("a")));
        // New values replace nothing.
        assert_eq!(got("vars.NEW"), ("b", None));
        assert_eq!(got("description"), ("b", None));
        // A record written whole forgets what the parent set below it.
        assert!(!prov.contains_key("resources.limits.memory"), "{prov:?}");
        assert_eq!(got("base"), ("a", None));
        // A record written whole over a path a child of its writer set:
        // the last env that wrote below it.
        let prov = a.provenance(f, "c").unwrap();
        assert_eq!(prov["python"].env, "c");
        assert_eq!(prov["python"].replaced.as_deref(), Some("b"));
        assert!(!prov.contains_key("python.version"), "{prov:?}");
    })
}
