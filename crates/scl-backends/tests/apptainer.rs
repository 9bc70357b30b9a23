//! Tests of the Apptainer target: a snapshot of every fixture's
//! `apptainer.def` and findings; every file read by a reader written after
//! Apptainer's own parser (`common::deffile`: build arguments, stages,
//! sections, header keys, `%files`, `%labels`) and by spython, with what
//! they read compared to the IR (`From:`, labels, `%files`, the
//! `%environment` values as `sh` sources them, the runscript and test
//! words, the setup scripts as `printf` writes them); every line checked
//! by the backend's own trap scan; one test per parser trap, each showing
//! the def a naive backend would write breaking and sclc's not; build
//! secrets; the section limit.

mod common;

use common::deffile::{self, Def};
use common::tools;
use scl_backends::apptainer::{self, trap, Trap};
use scl_backends::{ErrorKind, LowerCx, Lowered};
use scl_ir::*;
use std::path::PathBuf;

fn lower(name: &str, spec: &EnvSpec) -> Lowered {
    apptainer::lower(spec, &LowerCx::new(name))
}

/// Every fixture of the image targets, and the k8s ones (GPUs,
/// distributed launch).
fn fixtures() -> Vec<(String, EnvSpec)> {
    let mut v = common::fixtures();
    let dir = common::fixtures_dir().join("k8s");
    let mut extra: Vec<(String, EnvSpec)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            let spec = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (name, spec)
        })
        .collect();
    extra.sort_by(|a, b| a.0.cmp(&b.0));
    v.extend(extra);
    v
}

/// A built env on `base`.
fn built(base: &str) -> EnvSpec {
    EnvSpec {
        api_version: API_VERSION.into(),
        base: Some(ImageRef {
            reference: base.into(),
            digest: None,
        }),
        workdir: Some("/workspace".into()),
        user: Some(User {
            name: "app".into(),
            uid: 1000,
        }),
        ..Default::default()
    }
}

#[test]
fn every_fixture_snapshots() {
    for (name, spec) in fixtures() {
        let out = lower(&name, &spec);
        assert!(out.errors.is_empty(), "{name}: {:?}", out.errors);
        assert!(!out.artifacts.is_empty(), "{name}: no artifacts");
        for a in &out.artifacts {
            let snap = format!("{name}__{}", a.path.replace('/', "__"));
            insta::assert_snapshot!(snap, &a.contents);
        }
        let warnings: Vec<String> = out
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.field, w.message))
            .collect();
        insta::assert_snapshot!(format!("{name}__warnings"), warnings.join("\n"));
    }
}

/// The IR an artifact lowers: the env, or the service its folder names.
fn spec_for<'a>(spec: &'a EnvSpec, path: &str) -> &'a EnvSpec {
    common::spec_for(spec, path)
}

/// What the def of `spec` must say, read back by Apptainer's rules.
fn check_def(what: &str, spec: &EnvSpec, text: &str) -> Result<Def, String> {
    let def = deffile::parse(text).map_err(|e| format!("{what}: Apptainer would fail: {e}"))?;
    let err = |m: String| format!("{what}: {m}");
    if def.header.get("bootstrap").map(String::as_str) != Some("docker") {
        return Err(err(format!("header {:?}", def.header)));
    }
    // Pinned: `name@digest`, the tag dropped (Apptainer up to 1.3 reads
    // no reference with both).
    let base = spec.base.as_ref().unwrap();
    let from = match &base.digest {
        Some(d) => format!("{}@{d}", scl_ir::bases::split_ref(&base.reference).0),
        None => base.reference.clone(),
    };
    if def.header.get("from") != Some(&from) {
        return Err(err(format!(
            "From: {:?}, want {from}",
            def.header.get("from")
        )));
    }
    // Every line passes the backend's own scan (the first is Bootstrap).
    for (i, line) in text.lines().enumerate().skip(1) {
        let is_header = line.starts_with('%') && !line.contains(' ');
        if !is_header {
            if let Some(t) = trap(line) {
                return Err(err(format!("line {} hits {t:?}: {line:?}", i + 1)));
            }
        }
    }
    for (n, _) in &def.sections {
        if def.sections.iter().filter(|(m, _)| m == n).count() > 1 {
            return Err(err(format!("%{n} twice")));
        }
    }
    // The scripts are shell scripts.
    for name in ["post", "environment", "runscript", "test"] {
        if let Some(body) = def.section(name) {
            deffile::sh_syntax(&body).map_err(|e| err(format!("%{name}: sh -n: {e}")))?;
        }
    }
    // Labels: the IR's, the description, the hash.
    let mut want: std::collections::BTreeMap<String, String> = spec
        .labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(d) = &spec.description {
        want.entry("org.opencontainers.image.description".into())
            .or_insert_with(|| d.clone());
    }
    want.insert("dev.scl.ir.sha256".into(), spec.content_hash());
    if def.labels() != want {
        return Err(err(format!("labels {:?}, want {want:?}", def.labels())));
    }
    // %environment, sourced by sh: every plain var, no secret.
    let env = def.section("environment").unwrap_or_default();
    let names: Vec<&str> = spec.vars.keys().map(|k| &**k).collect();
    let got = deffile::sourced(&env, &names).map_err(|e| err(format!("sh: {e}")))?;
    for ((k, v), g) in spec.vars.iter().zip(got) {
        let want = match v {
            VarValue::Plain(s) => Some(s.to_string()),
            VarValue::Secret(_) => None,
        };
        if g != want {
            return Err(err(format!("{k} sourced as {g:?}, want {want:?}")));
        }
    }
    // %files: the requirements files, then the copies (relative
    // destinations inside workdir).
    let mut want_files: Vec<(String, String)> = Vec::new();
    if let Some(py) = &spec.python {
        for (i, r) in py.requirements.iter().enumerate() {
            let base = r.path.rsplit('/').next().unwrap();
            want_files.push((
                r.path.clone(),
                format!("{}/requirements/{i}-{base}", apptainer::SCRATCH),
            ));
        }
    }
    for f in &spec.files {
        let to = if f.to.starts_with('/') {
            f.to.clone()
        } else {
            format!(
                "{}/{}",
                spec.workdir.as_deref().unwrap_or("").trim_end_matches('/'),
                f.to
            )
        };
        let from = if f.from.starts_with(['-', '~', '#', '%']) {
            format!("./{}", f.from)
        } else {
            f.from.clone()
        };
        want_files.push((from, to));
    }
    if def.files() != want_files {
        return Err(err(format!("files {:?}, want {want_files:?}", def.files())));
    }
    // %runscript: the entrypoint's words, the command as defaults (for a
    // single-node torchrun launch, the launch the Dockerfile's ENTRYPOINT
    // and CMD have).
    let run = def.section("runscript").unwrap_or_default();
    let (entrypoint, command) = scl_backends::docker::single_node_torchrun(spec)
        .unwrap_or_else(|| (spec.entrypoint.clone(), spec.command.clone()));
    if entrypoint.is_empty() && command.is_empty() {
        if !run.is_empty() {
            return Err(err("a runscript without entrypoint or command".into()));
        }
    } else {
        // The last command, `exec WORDS "$@"`, may span lines (a value
        // with a line feed).
        let at = run
            .rfind("    exec ")
            .ok_or_else(|| err("no exec".into()))?;
        let exec = run[at + "    exec ".len()..]
            .trim_end()
            .strip_suffix("\"$@\"")
            .ok_or_else(|| err("exec does not end with \"$@\"".into()))?;
        let words = deffile::sh_words(exec).map_err(err)?;
        if words != entrypoint {
            return Err(err(format!("exec {words:?}, want {entrypoint:?}")));
        }
        if !command.is_empty() {
            let head = "if [ \"$#\" -eq 0 ]; then set -- ";
            let at = run
                .find(head)
                .ok_or_else(|| err("no default command".into()))?
                + head.len();
            let end = run[..run.rfind("    exec ").unwrap()]
                .rfind("; fi\n")
                .ok_or_else(|| err("no fi".into()))?;
            let words = deffile::sh_words(&run[at..end]).map_err(err)?;
            if words != command {
                return Err(err(format!("command {words:?}, want {command:?}")));
            }
        }
    }
    // %test: each test command, one `sh -c` word (which may span lines).
    let test = def.section("test").unwrap_or_default();
    let mut tests = Vec::new();
    for part in test.trim_end().split(" || exit 1") {
        if let Some(at) = part.find("    sh -c -- ") {
            tests.extend(deffile::sh_words(&part[at + "    sh -c -- ".len()..]).map_err(err)?);
        }
    }
    if tests != spec.test {
        return Err(err(format!("tests {tests:?}, want {:?}", spec.test)));
    }
    // Setup steps, as printf writes them.
    let scripts = setup_scripts(&def).map_err(err)?;
    let want: Vec<String> = spec
        .setup
        .iter()
        .map(|s| {
            if s.ends_with('\n') {
                s.clone()
            } else {
                format!("{s}\n")
            }
        })
        .collect();
    if scripts != want {
        return Err(err(format!("setup {scripts:?}, want {want:?}")));
    }
    // No build secret path of Docker's, no value of a secret.
    if text.contains("/run/secrets") {
        return Err(err("/run/secrets in the def".into()));
    }
    Ok(def)
}

/// The scripts the setup steps' `printf` commands write, in order.
fn setup_scripts(def: &Def) -> Result<Vec<String>, String> {
    let post = def.section("post").unwrap_or_default();
    let lines: Vec<&str> = post.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "printf '%s\\n' \\" {
            let mut args = String::new();
            i += 1;
            while !lines[i].trim_start().starts_with("> ") {
                args.push_str(lines[i]);
                args.push('\n');
                i += 1;
            }
            let words = deffile::sh_words(&args)?;
            out.push(words.iter().map(|w| format!("{w}\n")).collect());
        }
        i += 1;
    }
    Ok(out)
}

fn write_defs(defs: &[(String, String)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, (_, text)) in defs.iter().enumerate() {
        let p = dir.path().join(format!("{i}.def"));
        std::fs::write(&p, text).unwrap();
        paths.push(p);
    }
    (dir, paths)
}

#[test]
fn every_def_reads_back_as_the_ir() {
    let mut defs = Vec::new();
    let mut failures = Vec::new();
    for (name, spec) in fixtures() {
        let out = lower(&name, &spec);
        for a in &out.artifacts {
            let what = format!("{name}/{}", a.path);
            let s = spec_for(&spec, &a.path);
            if let Err(e) = check_def(&what, s, &a.contents) {
                failures.push(e);
            }
            defs.push((what, a.contents.clone()));
        }
    }
    assert!(defs.len() >= 15, "{}", defs.len());
    let python = tools::require(
        "spython (python -c 'import spython')",
        deffile::python_with_spython(),
    );
    if let Some(python) = python {
        let (_dir, paths) = write_defs(&defs);
        for (r, (what, text)) in deffile::spython(&python, &paths).iter().zip(&defs) {
            if let Some(e) = &r.error {
                failures.push(format!("{what}: spython: {e}"));
                continue;
            }
            let from = text.lines().nth(1).unwrap().strip_prefix("From: ").unwrap();
            if r.from_header.as_deref() != Some(from.to_lowercase().as_str()) {
                failures.push(format!("{what}: spython From {:?}", r.from_header));
            }
            if !r.labels.iter().any(|l| l.starts_with("dev.scl.ir.sha256 ")) {
                failures.push(format!("{what}: spython labels {:?}", r.labels));
            }
            if r.install.is_empty() {
                failures.push(format!("{what}: spython read no %post"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The errors of lowering `spec`, as `(field, kind)`.
fn refused(spec: &EnvSpec) -> Vec<(String, ErrorKind)> {
    lower("t", spec)
        .errors
        .iter()
        .map(|e| (e.field.clone(), e.kind))
        .collect()
}

/// One trap: values in several fields; each must come back through every
/// reader, or be refused on its field. And the line a backend without the
/// guard would write (`naive`) must break the file.
struct TrapCase {
    trap: Trap,
    /// A body line of `%post`, as written without a guard, with the value.
    naive: &'static str,
    /// A setup step.
    setup: &'static str,
    /// A plain var's value.
    var: &'static str,
    /// A label's value.
    label: &'static str,
    /// Whether the label is refused (its value cannot be quoted).
    label_refused: bool,
}

const TRAP_CASES: &[TrapCase] = &[
    TrapCase {
        trap: Trap::Section,
        naive: "printf '%s\\n' \\\n%d files\n",
        setup: "printf '%d files\\n' 3\n%post\n  %environment",
        var: "%post\n%x",
        label: "%d",
        label_refused: false,
    },
    TrapCase {
        trap: Trap::Template,
        naive: "echo {{ HOME }}\n",
        setup: "echo '{{ HOME }}' {{x}}\necho {{\n  name }}",
        var: "{{ HOME }}",
        label: "{{ x }}",
        label_refused: true,
    },
    TrapCase {
        trap: Trap::Stage,
        naive: "cat <<EOF\nBootstrap: docker\nEOF\n",
        setup: "cat <<EOF > /x\nBootstrap: docker\nbootstrap:x\nEOF",
        var: "a\nbootstrap: localimage",
        label: "see bootstrap: x",
        label_refused: true,
    },
];

/// Whether `text` is a def Apptainer reads as the one stage with the
/// sections sclc wrote (`sections`).
fn reads_as(text: &str, sections: &[&str]) -> bool {
    match deffile::parse(text) {
        Ok(d) => {
            let names: Vec<&str> = d.sections.iter().map(|(n, _)| n.as_str()).collect();
            names == sections
        }
        Err(_) => false,
    }
}

#[test]
fn each_trap_breaks_a_naive_def_and_not_sclcs() {
    let python = deffile::python_with_spython();
    for case in TRAP_CASES {
        // Without the guard: the value on a line of %post.
        let naive = format!(
            "Bootstrap: docker\nFrom: debian:12.5\n\n%post\n{}\n%environment\n    export A=1\n",
            case.naive
        );
        let mut broken = !reads_as(&naive, &["post", "environment"]);
        if case.trap == Trap::Stage {
            // Apptainer splits the stage at the line; spython stops there.
            broken = deffile::parse(&naive).is_err();
        }
        assert!(
            broken,
            "{:?}: the naive def reads fine:\n{naive}",
            case.trap
        );

        // With it: setup step, var and label in one env.
        let mut spec = built("debian:12.5");
        spec.setup = vec![case.setup.into(), "echo next".into()];
        spec.vars
            .insert("V".into(), VarValue::Plain(case.var.into()));
        spec.labels.insert("l".into(), case.label.into());
        spec.test = vec![case.setup.into()];
        spec.entrypoint = vec!["sh".into(), "-c".into(), case.var.into()];
        spec.command = vec![case.setup.into()];
        let out = lower("t", &spec);
        if case.label_refused {
            assert_eq!(
                refused(&spec),
                [("labels.l".to_string(), ErrorKind::Unwritable)],
                "{:?}",
                case.trap
            );
            assert!(
                out.errors[0].message.contains(case.trap.describe()),
                "{:?}: {}",
                case.trap,
                out.errors[0].message
            );
            spec.labels.clear();
        }
        let out = lower("t", &spec);
        assert!(out.errors.is_empty(), "{:?}: {:?}", case.trap, out.errors);
        let text = &out.artifacts[0].contents;
        check_def(&format!("{:?}", case.trap), &spec, text).unwrap();
        if let Some(python) = &python {
            let (_d, paths) = write_defs(&[(String::new(), text.clone())]);
            let r = &deffile::spython(python, &paths)[0];
            assert_eq!(r.error, None, "{:?}: spython", case.trap);
        }
    }
}

/// Line breaks other than `\n` and NUL: what Apptainer's line scanner
/// reads otherwise (a `\r` before `\n` dropped, U+2028 as a space) is
/// refused on its field, wherever it is.
#[test]
fn line_breaks_and_nul_are_refused() {
    // Without the guard: a CRLF in a %files line makes its name another.
    let naive = "Bootstrap: docker\nFrom: debian:12.5\n\n%files\n    a.txt /a.txt\r\n";
    let def = deffile::parse(naive).unwrap();
    assert_eq!(def.files(), [("a.txt".to_string(), "/a.txt".to_string())]);
    for v in [
        "a\rb",
        "crlf\r\n",
        "a\u{2028}b",
        "a\u{85}b",
        "a\u{b}b",
        "a\0b",
    ] {
        let mut spec = built("debian:12.5");
        spec.vars.insert("V".into(), VarValue::Plain(v.into()));
        spec.labels.insert("l".into(), v.into());
        spec.setup = vec![v.into()];
        spec.test = vec![v.into()];
        let fields: Vec<String> = refused(&spec).into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            ["setup[0]", "labels.l", "vars.V", "test[0]"],
            "{v:?}"
        );
        assert!(trap(v).is_some(), "{v:?}");
    }
    assert_eq!(trap("a\rb"), Some(Trap::LineBreak));
    assert_eq!(trap("a\0b"), Some(Trap::Hidden));
}

/// `%files` paths: a space is quoted, what Apptainer would expand or split
/// is refused on the field.
#[test]
fn files_paths() {
    let mut spec = built("debian:12.5");
    spec.files = vec![
        Copy {
            from: "my data/a b.txt".into(),
            to: "/w/a b.txt".into(),
        },
        Copy {
            from: "-x".into(),
            to: "rel/x".into(),
        },
    ];
    let out = lower("t", &spec);
    let def = check_def("files", &spec, &out.artifacts[0].contents).unwrap();
    assert_eq!(
        def.files(),
        [
            ("my data/a b.txt".to_string(), "/w/a b.txt".to_string()),
            ("./-x".to_string(), "/workspace/rel/x".to_string()),
        ]
    );
    for (from, kind) in [
        ("req[1].txt", ErrorKind::Misread),
        ("$HOME/x", ErrorKind::Misread),
        ("{a,b}", ErrorKind::Misread),
        ("a\tb", ErrorKind::Unwritable),
        ("it's", ErrorKind::Unwritable),
        ("{{ x }}", ErrorKind::Unwritable),
    ] {
        let mut s = built("debian:12.5");
        s.files = vec![Copy {
            from: from.into(),
            to: "/x".into(),
        }];
        assert_eq!(refused(&s), [("files[0]".to_string(), kind)], "{from:?}");
    }
    let mut s = built("debian:12.5");
    s.files = vec![Copy {
        from: "a".into(),
        to: "/x/{{ y }}".into(),
    }];
    assert_eq!(
        refused(&s),
        [("files[0]".to_string(), ErrorKind::Unwritable)]
    );
}

/// A build secret is read from `/mnt/<id>` at build time, with a warning
/// saying how to bind it; its value is never written, a secret var is only
/// named.
#[test]
fn secrets_are_never_written() {
    let spec = common::fixture("base_debian12");
    let out = lower("base_debian12", &spec);
    let text = &out.artifacts[0].contents;
    assert!(text.contains("HF_TOKEN=\"$(cat /mnt/hf.token)\" PYTHONPATH="));
    assert!(text.contains("NETRC=/mnt/pypi.netrc python3 -m pip install"));
    assert!(text.contains("if [ ! -r /mnt/hf.token ]; then"));
    let fields: Vec<&str> = out.warnings.iter().map(|w| w.field.as_str()).collect();
    assert!(fields.contains(&"assets[0].token"), "{fields:?}");
    assert!(fields.contains(&"python.index_credentials"), "{fields:?}");
    let spec = common::fixture("bert_train");
    let text = &lower("bert_train", &spec).artifacts[0].contents;
    assert!(text.contains(
        "# WANDB_API_KEY is a runtime secret, not written here: set APPTAINERENV_WANDB_API_KEY"
    ));
    assert!(!text.contains("wandb-secret"));
}

/// Apptainer reads a section of at most 64 KiB.
#[test]
fn long_sections_are_refused() {
    let mut spec = built("debian:12.5");
    spec.setup = (0..8).map(|_| "x".repeat(10_000)).collect();
    let out = lower("t", &spec);
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert!(out.errors[0]
        .message
        .starts_with("the %post section would be "));
    assert!(out.artifacts.is_empty());
}

#[test]
fn from_is_pinned_and_checked() {
    let mut spec = built("debian:12.5");
    spec.base.as_mut().unwrap().digest = Some(format!("sha256:{}", "a".repeat(64)));
    let out = lower("t", &spec);
    let def = deffile::parse(&out.artifacts[0].contents).unwrap();
    assert_eq!(
        def.header["from"],
        format!("debian@sha256:{}", "a".repeat(64))
    );
    for bad in ["debian:12 #x", "debian\\", "a b"] {
        let mut s = built(bad);
        s.base.as_mut().unwrap().reference = bad.into();
        assert_eq!(
            refused(&s),
            [("base".to_string(), ErrorKind::Unwritable)],
            "{bad:?}"
        );
    }
}

#[test]
fn registered_in_all() {
    let b = scl_backends::backend::backend("apptainer").unwrap();
    assert!(b.in_all());
    assert_eq!(b.layout(), ["apptainer.def", "<service>/apptainer.def"]);
    assert!(scl_backends::backend::all().any(|b| b.name() == "apptainer"));
}

#[test]
fn lowering_is_deterministic() {
    for (name, spec) in fixtures() {
        assert_eq!(lower(&name, &spec), lower(&name, &spec), "{name}");
    }
}

/// Apptainer binds the host's /tmp and /var/tmp while %post runs: what the
/// build would put there is refused, field by field; `ignore` with copies
/// is a warning (%files copies folders whole).
#[test]
fn host_tmp_paths_are_refused_and_ignore_warns() {
    let mut spec = built("debian:12.5");
    spec.workdir = Some("/tmp/work".into());
    spec.writable = vec!["/var/tmp/cache".into(), "/cache/ok".into()];
    spec.files = vec![Copy {
        from: "install.sh".into(),
        to: "/tmp/../tmp/install.sh".into(),
    }];
    assert_eq!(
        refused(&spec),
        [
            ("files[0].to".to_string(), ErrorKind::Unwritable),
            ("writable[0]".to_string(), ErrorKind::Unwritable),
            ("workdir".to_string(), ErrorKind::Unwritable),
        ]
    );
    let mut spec = built("debian:12.5");
    spec.workdir = Some("/tmpfoo".into());
    spec.files = vec![Copy {
        from: "src".into(),
        to: "/srv/src".into(),
    }];
    spec.ignore = vec!["*.ckpt".into()];
    let out = lower("t", &spec);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(
        out.warnings.iter().any(|w| w.field == "ignore"),
        "{:?}",
        out.warnings
    );
}
