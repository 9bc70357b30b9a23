//! End-to-end tests of `sclc lsp`: the binary is started and spoken to over
//! stdio (JSON-RPC, `scl_lsp::client`), on multi-file workspaces written to
//! a temporary folder. Responses are insta snapshots with the folder's URI
//! replaced by `file:///WS`.

use scl_lsp::client::{uri, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const BASE: &str = r#"// The team's base.

/// The runtime every project shares.
env base {
  base = image("python:3.11-slim")
  python.packages = ["numpy==2.1.0"]
  resources.requests {
    cpu = 2
    memory = 4Gi
  }
  workdir = "/app"
}
"#;

const TRAIN: &str = r#"import "./base.env.scl" as b

/// How many GPUs a run takes.
param gpus: Int = 1

let image_name = "trainer"

env train extends b.base {
  resources.requests.cpu = 8
  vars {
    NAME = image_name
  }
  entrypoint = ["python", "train.py"]
}
"#;

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Ws {
    fn new(files: &[(&str, &str)]) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (name, text) in files {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Ws { _dir: dir, root }
    }
    fn uri(&self, name: &str) -> String {
        uri(&self.root.join(name))
    }
    fn start(&self, pull: bool) -> (Client, Value) {
        Client::start(
            Path::new(env!("CARGO_BIN_EXE_sclc")),
            &["lsp"],
            &self.root,
            pull,
        )
    }
    /// `v` with the workspace's URI (and path) written `file:///WS` (`/WS`).
    fn redact(&self, v: &Value) -> Value {
        let s = serde_json::to_string(v).unwrap();
        let s = s.replace(&uri(&self.root), "file:///WS");
        let s = s.replace(&self.root.display().to_string(), "/WS");
        serde_json::from_str(&s).unwrap()
    }
}

fn open(c: &mut Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "scl", "version": 1, "text": text}}),
    );
}

fn change(c: &mut Client, uri: &str, version: i32, text: &str) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

/// The LSP position of the first `needle` in `text` (+ `plus` characters).
fn pos(text: &str, needle: &str, plus: usize) -> Value {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in the text"))
        + plus;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}

fn at(uri: &str, text: &str, needle: &str, plus: usize) -> Value {
    json!({"textDocument": {"uri": uri}, "position": pos(text, needle, plus)})
}

#[test]
fn every_feature_on_a_two_module_workspace() {
    let ws = Ws::new(&[("base.env.scl", BASE), ("train.env.scl", TRAIN)]);
    let (mut c, init) = ws.start(false);
    insta::assert_json_snapshot!("initialize", init);
    let train = ws.uri("train.env.scl");
    open(&mut c, &train, TRAIN);
    let (_, d) = c.diagnostics(&train, |_| true);
    insta::assert_json_snapshot!("open_diagnostics", ws.redact(&d));

    // Hover on an inherited field: the chain of envs and lines that set it.
    let h = c.request("textDocument/hover", at(&train, TRAIN, "cpu = 8", 1));
    insta::assert_json_snapshot!("hover_inherited_field", ws.redact(&h));
    let h = c.request("textDocument/hover", at(&train, TRAIN, "image_name\n", 2));
    insta::assert_json_snapshot!("hover_let", ws.redact(&h));

    let d = c.request("textDocument/definition", at(&train, TRAIN, "b.base {", 3));
    insta::assert_json_snapshot!("definition_across_modules", ws.redact(&d));
    let d = c.request("textDocument/definition", at(&train, TRAIN, "cpu = 8", 1));
    insta::assert_json_snapshot!("definition_field_to_parent", ws.redact(&d));

    let mut refs = at(&train, TRAIN, "let image_name", 5);
    refs["context"] = json!({"includeDeclaration": true});
    let r = c.request("textDocument/references", refs);
    insta::assert_json_snapshot!("references", ws.redact(&r));

    let p = c.request(
        "textDocument/prepareRename",
        at(&train, TRAIN, "let image_name", 5),
    );
    insta::assert_json_snapshot!("prepare_rename", ws.redact(&p));
    let mut ren = at(&train, TRAIN, "let image_name", 5);
    ren["newName"] = json!("image");
    let r = c.request("textDocument/rename", ren);
    insta::assert_json_snapshot!("rename", ws.redact(&r));

    let comp = c.request(
        "textDocument/completion",
        at(&train, TRAIN, "  entrypoint", 2),
    );
    let labels: Vec<&str> = comp
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    for field in ["base", "python", "resources", "volumes", "entrypoint"] {
        assert!(labels.contains(&field), "{field} in {labels:?}");
    }

    let s = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": train}}),
    );
    insta::assert_json_snapshot!("document_symbols", ws.redact(&s));

    let t = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": train}}),
    );
    insta::assert_snapshot!("semantic_tokens", decode_tokens(&init, TRAIN, &t["data"]));

    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": train}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}),
    );
    insta::assert_json_snapshot!("inlay_hints", ws.redact(&hints));

    let low = c.request(
        "scl/lowered",
        json!({"textDocument": {"uri": train}, "position": pos(TRAIN, "entrypoint", 0), "target": "docker"}),
    );
    insta::assert_json_snapshot!("lowered_docker", ws.redact(&low));
    let low = c.request(
        "scl/lowered",
        json!({"textDocument": {"uri": train}, "position": pos(TRAIN, "entrypoint", 0), "target": "k8s"}),
    );
    assert_eq!(low["env"], "train");
    assert_eq!(low["artifacts"][0]["path"], "k8s.yaml", "{low}");
    let bad = c.send_request(
        "scl/lowered",
        json!({"textDocument": {"uri": train}, "position": pos(TRAIN, "entrypoint", 0), "target": "podman"}),
    );
    insta::assert_json_snapshot!("lowered_unknown_target", c.response(bad)["error"]);

    assert!(c.shutdown().success());
}

/// Decodes LSP semantic tokens into `line:col len type [modifiers] "text"`
/// lines, with the legend of the `initialize` result.
fn decode_tokens(init: &Value, text: &str, data: &Value) -> String {
    let legend = &init["capabilities"]["semanticTokensProvider"]["legend"];
    let types: Vec<&str> = legend["tokenTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mods: Vec<&str> = legend["tokenModifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let lines: Vec<&str> = text.split('\n').collect();
    let nums: Vec<u64> = data
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let (mut line, mut col) = (0u64, 0u64);
    let mut out = String::new();
    for t in nums.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        let src: String = lines[line as usize]
            .chars()
            .skip(col as usize)
            .take(t[2] as usize)
            .collect();
        let m: Vec<&str> = (0..mods.len())
            .filter(|i| t[4] & (1 << i) != 0)
            .map(|i| mods[i])
            .collect();
        out.push_str(&format!(
            "{}:{} {} [{}] {:?}\n",
            line + 1,
            col + 1,
            types[t[3] as usize],
            m.join(","),
            src
        ));
    }
    out
}

#[test]
fn code_actions_and_formatting() {
    let text = "env app {\n  base = image(\"python:3.11-slim\")\n  python.version = 3.10\n  workdri = \"/app\"\n}\n";
    let ws = Ws::new(&[("app.env.scl", text)]);
    let (mut c, _) = ws.start(false);
    let app = ws.uri("app.env.scl");
    open(&mut c, &app, text);
    let (_, d) = c.diagnostics(&app, |_| true);
    insta::assert_json_snapshot!("actions_diagnostics", ws.redact(&d));
    let diags = d["diagnostics"].clone();
    for (name, needle) in [
        ("actions_did_you_mean", "workdri"),
        ("actions_quote_version", "3.10"),
    ] {
        let p = pos(text, needle, 0);
        let a = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": app}, "range": {"start": p, "end": p}, "context": {"diagnostics": diags}}),
        );
        insta::assert_json_snapshot!(name, ws.redact(&a));
    }
    // Formatting: a badly laid out file gets edits that give `sclc fmt`'s text.
    let messy = "env app {\n      workdir =    \"/app\"\n\n\n\n  base = image(\"python:3.11-slim\")   // the base\n}\n";
    change(&mut c, &app, 2, messy);
    let f = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": app}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    insta::assert_json_snapshot!("formatting_edits", f);
    // A file with a syntax error is not formatted.
    change(&mut c, &app, 3, "env app {\n  workdir = \n");
    let f = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": app}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(f, Value::Null);
    assert!(c.shutdown().success());
}

#[test]
fn an_edit_of_a_base_module_rechecks_its_importers() {
    let ws = Ws::new(&[("base.env.scl", BASE), ("train.env.scl", TRAIN)]);
    let (mut c, _) = ws.start(false);
    let (base, train) = (ws.uri("base.env.scl"), ws.uri("train.env.scl"));
    open(&mut c, &train, TRAIN);
    open(&mut c, &base, BASE);
    let (_, d) = c.diagnostics(&train, |_| true);
    assert_eq!(d["diagnostics"], json!([]));
    // Renaming the env in the base module breaks `extends b.base`.
    change(&mut c, &base, 2, &BASE.replace("env base", "env base2"));
    let (_, d) = c.diagnostics(&train, |p| p["diagnostics"] != json!([]));
    insta::assert_json_snapshot!("importer_after_base_edit", ws.redact(&d));
    change(&mut c, &base, 3, BASE);
    let (_, d) = c.diagnostics(&train, |p| p["diagnostics"] == json!([]));
    assert_eq!(d["version"], 1, "the importer's own version: {d}");
    // Edits applied in order: many versions sent at once, the last wins.
    for v in 4..40 {
        let t = if v % 2 == 0 {
            BASE.replace("cpu = 2", "cpu = \"x\"")
        } else {
            BASE.to_string()
        };
        change(&mut c, &base, v, &t);
    }
    change(&mut c, &base, 40, BASE);
    let (_, d) = c.diagnostics(&base, |p| p["version"] == 40);
    assert_eq!(d["diagnostics"], json!([]));
    // Closing a buffer clears its diagnostics.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": base}}),
    );
    let (_, d) = c.diagnostics(&base, |p| p["version"].is_null());
    assert_eq!(d["diagnostics"], json!([]));
    assert!(c.shutdown().success());
}

#[test]
fn a_file_changed_on_disk_is_read_again() {
    let ws = Ws::new(&[("base.env.scl", BASE), ("train.env.scl", TRAIN)]);
    let (mut c, _) = ws.start(false);
    let train = ws.uri("train.env.scl");
    open(&mut c, &train, TRAIN);
    let (_, d) = c.diagnostics(&train, |_| true);
    assert_eq!(d["diagnostics"], json!([]));
    // base.env.scl is not open: the disk is its text.
    std::fs::remove_file(ws.root.join("base.env.scl")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": ws.uri("base.env.scl"), "type": 3}]}),
    );
    let (_, d) = c.diagnostics(&train, |p| p["diagnostics"] != json!([]));
    insta::assert_json_snapshot!("importer_after_base_deleted", ws.redact(&d));
    std::fs::write(ws.root.join("base.env.scl"), BASE).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": ws.uri("base.env.scl"), "type": 1}]}),
    );
    c.diagnostics(&train, |p| p["diagnostics"] == json!([]));
    assert!(c.shutdown().success());
}

#[test]
fn a_client_that_pulls_diagnostics_gets_those_of_open_files_not_pushed() {
    let bad = "env app {\n  workdir = 42\n}\n";
    let ws = Ws::new(&[("app.env.scl", bad)]);
    let (mut c, _) = ws.start(true);
    let app = ws.uri("app.env.scl");
    open(&mut c, &app, bad);
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": app}}),
    );
    insta::assert_json_snapshot!("pull_diagnostics", ws.redact(&r));
    let pushed: Vec<Value> = settled(&mut c)
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert_eq!(pushed, Vec::<Value>::new());
    assert!(c.shutdown().success());
}

#[test]
fn exit_without_shutdown_is_exit_code_1() {
    let ws = Ws::new(&[("app.env.scl", "env app {}\n")]);
    let (mut c, _) = ws.start(false);
    c.notify("exit", Value::Null);
    let status = wait_exit(&mut c);
    assert_eq!(status.code(), Some(1));
}

/// Every message the server sends until it has been quiet for 300 ms
/// (with those already queued).
fn settled(c: &mut Client) -> Vec<Value> {
    c.settle(std::time::Duration::from_millis(300))
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

fn wait_exit(c: &mut Client) -> std::process::ExitStatus {
    let pid = c.pid();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(s) = c.try_wait() {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "server {pid} did not exit"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn an_error_in_an_imported_module_that_is_not_open_is_published_for_it() {
    let broken = BASE.replace("workdir = \"/app\"", "workdir = 42");
    let ws = Ws::new(&[("base.env.scl", &broken), ("train.env.scl", TRAIN)]);
    let (mut c, _) = ws.start(false);
    let (base, train) = (ws.uri("base.env.scl"), ws.uri("train.env.scl"));
    open(&mut c, &train, TRAIN);
    c.diagnostics(&train, |_| true);
    // `sclc check train.env.scl` reports it: so does the editor, in the
    // module where it is (no version: the file is not open).
    let (_, d) = c.diagnostics(&base, |_| true);
    insta::assert_json_snapshot!("imported_module_error", ws.redact(&d));
    std::fs::write(ws.root.join("base.env.scl"), BASE).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": base, "type": 2}]}),
    );
    let (_, d) = c.diagnostics(&base, |p| p["diagnostics"] == json!([]));
    assert!(d["version"].is_null(), "{d}");
    assert!(c.shutdown().success());
}

#[test]
fn rename_and_references_reach_modules_not_read_yet() {
    let other =
        "import \"./base.env.scl\" as b\n\nenv other extends b.base {\n  workdir = \"/o\"\n}\n";
    let ws = Ws::new(&[
        ("scl.toml", ""),
        ("base.env.scl", BASE),
        ("train.env.scl", TRAIN),
        ("sub/other.env.scl", &other.replace("./base", "../base")),
    ]);
    let (mut c, _) = ws.start(false);
    let base = ws.uri("base.env.scl");
    open(&mut c, &base, BASE);
    let mut refs = at(&base, BASE, "env base", 4);
    refs["context"] = json!({"includeDeclaration": false});
    let r = c.request("textDocument/references", refs);
    let files: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [ws.uri("sub/other.env.scl"), ws.uri("train.env.scl")],
        "{r}"
    );
    let mut ren = at(&base, BASE, "env base", 4);
    ren["newName"] = json!("runtime");
    let r = c.request("textDocument/rename", ren);
    let mut changed: Vec<&String> = r["changes"].as_object().unwrap().keys().collect();
    changed.sort();
    assert_eq!(
        changed,
        [
            &ws.uri("base.env.scl"),
            &ws.uri("sub/other.env.scl"),
            &ws.uri("train.env.scl")
        ]
    );
    assert!(c.shutdown().success());
}

#[test]
fn a_client_that_pulls_gets_closed_modules_errors_pushed_until_it_opens_them() {
    let broken = BASE.replace("workdir = \"/app\"", "workdir = 42");
    let ws = Ws::new(&[("base.env.scl", &broken), ("train.env.scl", TRAIN)]);
    let (mut c, _) = ws.start(true);
    let (base, train) = (ws.uri("base.env.scl"), ws.uri("train.env.scl"));
    open(&mut c, &train, TRAIN);
    let (_, d) = c.diagnostics(&base, |_| true);
    assert_eq!(d["diagnostics"][0]["code"], "E0201", "{d}");
    // Opened, the module's diagnostics are pulled: the pushed ones are cleared.
    open(&mut c, &base, &broken);
    c.diagnostics(&base, |p| p["diagnostics"] == json!([]));
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": base}}),
    );
    assert_eq!(r["items"][0]["code"], "E0201", "{r}");
    let pushed: Vec<Value> = settled(&mut c)
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert_eq!(pushed, Vec::<Value>::new());
    assert!(c.shutdown().success());
}

#[test]
fn a_request_is_answered_on_the_text_it_was_sent_after() {
    // An edit, a hover and another edit read by the server together: the
    // hover describes the first text, or is cancelled (ContentModified) by
    // the second edit; it is never answered on the second text.
    let ws = Ws::new(&[("t.env.scl", "let a = 1\n")]);
    let (mut c, _) = ws.start(false);
    let t = ws.uri("t.env.scl");
    open(&mut c, &t, "let a = 1\n");
    c.diagnostics(&t, |_| true);
    let (mut answered, mut cancelled) = (0, 0);
    for trial in 0..20 {
        let v = 2 + 2 * trial;
        let id = c.fresh_id();
        let edit = |v: i32, text: &str| {
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": t, "version": v}, "contentChanges": [{"text": text}]}})
        };
        c.send_at_once(&[
            edit(v, "let a = 1\n"),
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": t}, "position": {"line": 0, "character": 4}}}),
            edit(v + 1, "let bbbbbb = \"later\"\n"),
        ]);
        let r = c.response(id);
        if r.get("error").is_some() {
            assert_eq!(r["error"]["code"], -32801, "{r}");
            cancelled += 1;
        } else {
            let s = r["result"].to_string();
            assert!(
                s.contains("`a`") && !s.contains("bbbbbb"),
                "trial {trial}: {s}"
            );
            answered += 1;
        }
    }
    assert_eq!(answered + cancelled, 20);
    assert!(c.shutdown().success());
}

#[test]
fn a_malformed_message_is_dropped_and_the_session_goes_on() {
    let ws = Ws::new(&[("t.env.scl", "let a = 1\n")]);
    let (mut c, _) = ws.start(false);
    let t = ws.uri("t.env.scl");
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    for bad in [
        frame("{not json"),
        frame(r#"{"jsonrpc":"2.0","id":1.5,"method":"textDocument/hover"}"#),
        frame(r#"{"id":7,"method":"shutdown"}"#),
        frame("[1, 2]"),
        // Three headers: the message itself is good.
        format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nX-Extra: 1\r\n{}",
            frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": {"uri": t, "languageId": "scl", "version": 1, "text": "let a = 1\n"}}}).to_string())
        ),
    ] {
        c.send_bytes(bad.as_bytes());
    }
    c.diagnostics(&t, |p| p["version"] == 1);
    let h = c.request("textDocument/hover", at(&t, "let a = 1\n", "a =", 0));
    assert!(h.to_string().contains("`a`"), "{h}");
    assert!(c.shutdown().success());
}

#[test]
fn a_folder_deleted_on_disk_refreshes_the_modules_in_it() {
    let train =
        "import \"./lib/base.env.scl\" as b\n\nenv train extends b.base {\n  workdir = \"/t\"\n}\n";
    let ws = Ws::new(&[("lib/base.env.scl", BASE), ("train.env.scl", train)]);
    let (mut c, _) = ws.start(false);
    let t = ws.uri("train.env.scl");
    open(&mut c, &t, train);
    let (_, d) = c.diagnostics(&t, |_| true);
    assert_eq!(d["diagnostics"], json!([]));
    // One event for the folder, as VS Code sends for a deleted folder.
    std::fs::remove_dir_all(ws.root.join("lib")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": ws.uri("lib"), "type": 3}]}),
    );
    let (_, d) = c.diagnostics(&t, |p| p["diagnostics"] != json!([]));
    assert_eq!(d["diagnostics"][0]["code"], "E0102", "{d}");
    assert!(c.shutdown().success());
}

#[test]
fn a_buffer_of_another_language_is_not_checked() {
    let ws = Ws::new(&[
        ("requirements.txt", "numpy==2.1.0\n"),
        ("t.env.scl", "let a = 1\n"),
    ]);
    let (mut c, _) = ws.start(false);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": ws.uri("requirements.txt"), "languageId": "pip-requirements", "version": 1, "text": "numpy==2.1.0\n"}}),
    );
    let t = ws.uri("t.env.scl");
    open(&mut c, &t, "let a = 1\n");
    c.diagnostics(&t, |_| true);
    let about_txt: Vec<Value> = settled(&mut c)
        .into_iter()
        .filter(|m| m["params"]["uri"] == ws.uri("requirements.txt"))
        .collect();
    assert_eq!(about_txt, Vec::<Value>::new());
    assert!(c.shutdown().success());
}

#[test]
fn each_file_is_checked_in_the_workspace_sclc_check_would_use() {
    let app = "import \"./lib.env.scl\" as l\n\nenv app extends l.base {\n  workdir = \"/b\"\n}\n";
    let up = "import \"../base.env.scl\" as b\n\nenv up extends b.base {\n  workdir = \"/u\"\n}\n";
    let ws = Ws::new(&[
        ("a/scl.toml", ""),
        ("a/base.env.scl", BASE),
        ("a/train.env.scl", TRAIN),
        ("b/scl.toml", ""),
        ("b/lib.env.scl", BASE),
        ("b/app.env.scl", app),
        ("c/base.env.scl", BASE),
        ("c/sub/up.env.scl", up),
    ]);
    // The editor's folder is `a`; `b` and `c` are outside it.
    let (mut c, _) = Client::start(
        Path::new(env!("CARGO_BIN_EXE_sclc")),
        &["lsp"],
        &ws.root.join("a"),
        false,
    );
    let (train, app_u, up_u) = (
        ws.uri("a/train.env.scl"),
        ws.uri("b/app.env.scl"),
        ws.uri("c/sub/up.env.scl"),
    );
    open(&mut c, &train, TRAIN);
    open(&mut c, &app_u, app);
    open(&mut c, &up_u, up);
    let (_, d) = c.diagnostics(&train, |_| true);
    assert_eq!(d["diagnostics"], json!([]), "{d}");
    // `b` has its own scl.toml: its import is inside its workspace.
    let (_, d) = c.diagnostics(&app_u, |_| true);
    assert_eq!(d["diagnostics"], json!([]), "{d}");
    // `c/sub` has no scl.toml above it: its folder is its workspace, and
    // `../base.env.scl` leaves it, as `sclc check c/sub/up.env.scl` says.
    let (_, d) = c.diagnostics(&up_u, |_| true);
    assert_eq!(d["diagnostics"][0]["code"], "E0105", "{d}");
    let cli = common_check(&ws.root, "c/sub/up.env.scl");
    assert!(cli.contains("E0105"), "{cli}");
    // A hover in `b` is answered in `b`'s workspace.
    let h = c.request("textDocument/hover", at(&app_u, app, "l.base", 2));
    assert!(h.to_string().contains("env"), "{h}");
    assert!(c.shutdown().success());
}

/// `sclc check --message-format json FILE` in `cwd`, its output.
fn common_check(cwd: &Path, file: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sclc"))
        .args(["check", "--message-format", "json", file])
        .current_dir(cwd)
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn after_shutdown_a_buffer_is_not_opened() {
    let ws = Ws::new(&[("t.env.scl", "env app {\n  workdir = 42\n}\n")]);
    let (mut c, _) = ws.start(false);
    let r = c.request("shutdown", Value::Null);
    assert_eq!(r, Value::Null);
    open(
        &mut c,
        &ws.uri("t.env.scl"),
        "env app {\n  workdir = 42\n}\n",
    );
    let published: Vec<Value> = settled(&mut c)
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert_eq!(published, Vec::<Value>::new());
    c.notify("exit", Value::Null);
    assert_eq!(wait_exit(&mut c).code(), Some(0));
}
