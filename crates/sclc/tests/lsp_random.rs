//! Thousands of random edits to `sclc lsp`: garbage text, half-typed lines,
//! whole files deleted and restored (in buffers and on disk), requests
//! mixed in, everything sent faster than it is answered. The server must
//! answer every request (a result, or `ContentModified` for one a later
//! edit made stale), and its final diagnostics must equal what
//! `sclc check` reports on the final texts: the same file, code, severity,
//! message, range and help, with the same per-file cap.
//!
//! `SCL_LSP_SEED` picks another seed; `SCL_LSP_EDITS` another count.

use scl_lsp::client::{uri, Client};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// xorshift64*: a fixed sequence per seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Half-typed lines and fragments a user types on the way to valid code.
const FRAGMENTS: &[&str] = &[
    "  resources.requests.",
    "  resources.requests.cpu = ",
    "env x extends ",
    "env half {\n  python.",
    "import \"./",
    "import \"std/",
    "  python.version = 3.10\n",
    "let = ",
    "\"unterminated",
    "\"${",
    "\"\"\"\n  text",
    "}\n",
    "{",
    "(",
    "  vars { A = secret(\"x\", key = \"k\") }\n",
    "fn f(x: Int) -> String = x\n",
    "param p: Int = 1 where p > 0\n",
    "  workdri = \"/w\"\n",
    "  base = image(\"python:3.11-slim\")\n",
    "// a comment\n",
    "/// doc\n",
    "é",
    "🚀",
    "\t",
    "\r\n",
];

const GARBAGE: &[u8] = b"abcxyz_019 .,;:=+-*/<>!?&|{}[]()\"'\\$#@\n\n  ";

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bert-finetune");
    for f in [
        "base.env.scl",
        "train.env.scl",
        "requirements.txt",
        "train.py",
    ] {
        std::fs::copy(ex.join(f), root.join(f)).unwrap();
    }
    (dir, root)
}

/// The byte offset of a char boundary at or before `at`.
fn floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The LSP position (UTF-16) of byte `at`.
fn lsp_pos(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let ch = text[start..at].encode_utf16().count();
    json!({"line": line, "character": ch})
}

struct Doc {
    uri: String,
    name: &'static str,
    original: String,
    text: String,
    version: i32,
}

fn random_edit(rng: &mut Rng, d: &mut Doc) -> Value {
    let len = d.text.len();
    let (s, e, new): (usize, usize, String) = match rng.below(10) {
        // Whole file: deleted, or restored.
        0 => {
            let t = if rng.below(2) == 0 {
                String::new()
            } else {
                d.original.clone()
            };
            d.text = t.clone();
            return json!([{ "text": t }]);
        }
        1..=3 => {
            let s = floor(&d.text, rng.below(len + 1));
            (s, s, rng.pick(FRAGMENTS).to_string())
        }
        4..=5 => {
            let s = floor(&d.text, rng.below(len + 1));
            let n = 1 + rng.below(8);
            let g: String = (0..n).map(|_| *rng.pick(GARBAGE) as char).collect();
            (s, s, g)
        }
        6..=7 => {
            let s = floor(&d.text, rng.below(len + 1));
            let e = floor(&d.text, s + rng.below(40));
            (s, e.max(s), String::new())
        }
        _ => {
            // Retype a piece of the original somewhere.
            let o = &d.original;
            let a = floor(o, rng.below(o.len() + 1));
            let b = floor(o, a + rng.below(60)).max(a);
            let s = floor(&d.text, rng.below(len + 1));
            (s, s, o[a..b].to_string())
        }
    };
    let range = json!({"start": lsp_pos(&d.text, s), "end": lsp_pos(&d.text, e)});
    d.text.replace_range(s..e, &new);
    // Sometimes the client sends the whole text instead of the range.
    if rng.below(4) == 0 {
        json!([{ "text": d.text }])
    } else {
        json!([{ "range": range, "text": new }])
    }
}

/// `(code, severity, message, start, end, help)` with 1-based lines and
/// character columns, as `sclc check --message-format json` writes them.
type Diag = (
    String,
    String,
    String,
    (u64, u64),
    (u64, u64),
    Option<String>,
);

/// The character column (1-based) of an LSP position (UTF-16) in `text`.
fn char_col(text: &str, line: u64, utf16: u64) -> u64 {
    let l = text.split('\n').nth(line as usize).unwrap_or("");
    let mut units = 0u64;
    let mut chars = 0u64;
    for ch in l.chars() {
        if units >= utf16 {
            break;
        }
        units += ch.len_utf16() as u64;
        chars += 1;
    }
    chars + 1
}

fn from_lsp(text: &str, d: &Value) -> Diag {
    let r = &d["range"];
    let p = |p: &Value| {
        let line = p["line"].as_u64().unwrap();
        (
            line + 1,
            char_col(text, line, p["character"].as_u64().unwrap()),
        )
    };
    let help = d["relatedInformation"].as_array().and_then(|rs| {
        rs.iter().find_map(|r| {
            r["message"]
                .as_str()?
                .strip_prefix("help: ")
                .map(String::from)
        })
    });
    (
        d["code"].as_str().unwrap().to_string(),
        match d["severity"].as_u64() {
            Some(1) => "error".into(),
            Some(2) => "warning".into(),
            s => format!("{s:?}"),
        },
        d["message"].as_str().unwrap().to_string(),
        p(&r["start"]),
        p(&r["end"]),
        help,
    )
}

fn from_cli(d: &Value) -> Diag {
    (
        d["code"].as_str().unwrap().to_string(),
        d["severity"].as_str().unwrap().to_string(),
        d["message"].as_str().unwrap().to_string(),
        (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()),
        (
            d["end_line"].as_u64().unwrap(),
            d["end_column"].as_u64().unwrap(),
        ),
        d["help"].as_str().map(String::from),
    )
}

#[test]
fn random_edits_end_in_the_diagnostics_of_sclc_check() {
    let seed: u64 = std::env::var("SCL_LSP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5c1c_0de5);
    let edits: usize = std::env::var("SCL_LSP_EDITS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let mut rng = Rng(seed | 1);
    let (_dir, root) = workspace();
    let sclc = Path::new(env!("CARGO_BIN_EXE_sclc"));
    let (mut c, _) = Client::start(sclc, &["lsp"], &root, false);
    let mut docs: Vec<Doc> = ["train.env.scl", "base.env.scl"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(root.join(name)).unwrap();
            Doc {
                uri: uri(&root.join(name)),
                name,
                original: text.clone(),
                text,
                version: 1,
            }
        })
        .collect();
    for d in &docs {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": d.uri, "languageId": "scl", "version": 1, "text": d.text}}),
        );
    }
    let methods = [
        "textDocument/hover",
        "textDocument/completion",
        "textDocument/definition",
        "textDocument/semanticTokens/full",
        "textDocument/inlayHint",
        "textDocument/documentSymbol",
        "textDocument/codeAction",
        "textDocument/formatting",
        "textDocument/diagnostic",
        "scl/lowered",
    ];
    let mut pending: Vec<(i64, &str)> = Vec::new();
    let requirements = root.join("requirements.txt");
    let req_text = std::fs::read_to_string(&requirements).unwrap();
    for i in 0..edits {
        let k = rng.below(docs.len());
        let d = &mut docs[k];
        let changes = random_edit(&mut rng, d);
        d.version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": d.uri, "version": d.version}, "contentChanges": changes}),
        );
        if i % 7 == 0 {
            let m = *rng.pick(&methods);
            let d = &docs[rng.below(docs.len())];
            let at = floor(&d.text, rng.below(d.text.len() + 1));
            let p = lsp_pos(&d.text, at);
            let doc = json!({"uri": d.uri});
            let params = match m {
                "textDocument/semanticTokens/full"
                | "textDocument/documentSymbol"
                | "textDocument/diagnostic" => json!({"textDocument": doc}),
                "textDocument/formatting" => {
                    json!({"textDocument": doc, "options": {"tabSize": 2, "insertSpaces": true}})
                }
                "textDocument/inlayHint" => {
                    json!({"textDocument": doc, "range": {"start": p, "end": lsp_pos(&d.text, d.text.len())}})
                }
                "textDocument/codeAction" => {
                    json!({"textDocument": doc, "range": {"start": p, "end": p}, "context": {"diagnostics": []}})
                }
                "scl/lowered" => json!({"textDocument": doc, "position": p, "target": "docker"}),
                _ => json!({"textDocument": doc, "position": p}),
            };
            pending.push((c.send_request(m, params), m));
        }
        if i % 500 == 250 {
            // A closed file read by `file()`: deleted on disk, then restored.
            std::fs::remove_file(&requirements).unwrap();
            c.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": uri(&requirements), "type": 3}]}),
            );
        }
        if i % 500 == 300 {
            std::fs::write(&requirements, &req_text).unwrap();
            c.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": uri(&requirements), "type": 1}]}),
            );
        }
    }
    // A final state with more errors than the per-file cap in one buffer.
    let noise: String = (0..150).map(|i| format!("let x{i} = y{i}\n")).collect();
    docs[1].text.push_str(&noise);
    docs[1].version += 1;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": docs[1].uri, "version": docs[1].version}, "contentChanges": [{"text": docs[1].text}]}),
    );
    // Every request is answered: a result, or ContentModified.
    for (id, m) in &pending {
        let r = c.response(*id);
        if let Some(e) = r.get("error") {
            assert_eq!(e["code"], -32801, "{m} answered {e}");
        }
    }
    // Still answering.
    let h = c.send_request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": docs[0].uri}}),
    );
    assert!(c.response(h).get("result").is_some());
    // The final diagnostics: each buffer's publish of its last version,
    // unless a later one (an edit of a module it imports) follows it.
    let mut last: BTreeMap<String, (std::time::Instant, Value)> = BTreeMap::new();
    for d in &docs {
        let got = c.diagnostics(&d.uri, |p| p["version"] == d.version);
        last.insert(d.uri.clone(), got);
    }
    for (at, m) in c.settle(std::time::Duration::from_millis(1500)) {
        if m["method"] == "textDocument/publishDiagnostics" {
            let u = m["params"]["uri"].as_str().unwrap().to_string();
            if last.get(&u).is_some_and(|(t, _)| at > *t) {
                last.insert(u, (at, m["params"].clone()));
            }
        }
    }
    for d in &docs {
        std::fs::write(root.join(d.name), &d.text).unwrap();
    }
    for d in &docs {
        let pulled = c.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": d.uri}}),
        );
        let lsp: Vec<Diag> = pulled["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| from_lsp(&d.text, x))
            .collect();
        if let Some((_, p)) = last.get(&d.uri) {
            let pushed: Vec<Diag> = p["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| from_lsp(&d.text, x))
                .collect();
            assert_eq!(pushed, lsp, "{}: the last push and a pull differ", d.name);
        }
        let out = std::process::Command::new(sclc)
            .args(["check", "--message-format", "json", d.name])
            .current_dir(&root)
            .output()
            .unwrap();
        let cli: Vec<Diag> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["file"] == d.name)
            .map(|v| from_cli(&v))
            .collect();
        assert_eq!(
            lsp, cli,
            "{} (seed {seed}): the server's diagnostics differ from sclc check's on\n{}",
            d.name, d.text
        );
        if d.name == "base.env.scl" {
            assert!(
                cli.len() > 100,
                "the per-file cap is reached: {}",
                cli.len()
            );
        }
    }
    assert!(c.shutdown().success());
}
