//! Editor latency: `sclc lsp` over stdio on a benchmark workload, timed
//! from writing a `didChange` to reading the `publishDiagnostics` of the
//! edited file's new version (the server has no debounce). The buffers open
//! are `top.env.scl` (it imports every module: the whole workspace is
//! loaded), the last module (a leaf) and `base.env.scl`; each measured edit
//! waits for its diagnostics before the next is sent. Three runs of edits:
//! the leaf (the base open but not edited), the base (a comment), the leaf
//! again (both having been edited). [`open_memory`] only opens
//! `top.env.scl` and reads the server's resident memory.

use crate::workload::{self, Topology};
use scl_lsp::client::{uri, Client};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// What [`latency`] measured (ms; MiB).
pub struct EditorLatency {
    pub leaf_p50: f64,
    pub leaf_p95: f64,
    pub base_p50: f64,
    pub base_p95: f64,
    /// Leaf edits again, after the base module was edited (the first one
    /// pays for moving the edited file: what read the base is verified once).
    pub after_p50: f64,
    pub after_p95: f64,
    pub after_max: f64,
    /// Resident memory of the server once the workspace is open and checked.
    pub rss_mib: f64,
    pub edits: usize,
}

/// The `q`-quantile (0..=1) of `xs` by the nearest-rank method.
fn quantile(xs: &mut [f64], q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// `VmRSS` of a process in MiB (Linux `/proc/PID/status`).
fn rss_mib(pid: u32) -> Option<f64> {
    status_mib(pid, "VmRSS:")
}

/// A `/proc/PID/status` field given in kB (`VmRSS:`, `VmHWM:`), in MiB.
fn status_mib(pid: u32, field: &str) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// What [`open_memory`] measured.
pub struct OpenMemory {
    /// Resident memory once `top.env.scl`'s diagnostics are published (MiB).
    pub rss_mib: f64,
    /// The server's peak resident memory until then (`VmHWM`, MiB).
    pub peak_mib: f64,
    /// From `didOpen` to the diagnostics (ms).
    pub open_ms: f64,
}

/// Starts `sclc lsp` on the workload in `dir`, opens `top.env.scl` (the
/// whole workspace loads), waits for its diagnostics (which must be
/// empty) and a quiet 200 ms, and reads the server's resident memory. No
/// edits: lighter than [`latency`], for the larger workloads.
pub fn open_memory(sclc: &Path, dir: &Path) -> Result<OpenMemory, String> {
    let (mut c, _) = Client::start(sclc, &["lsp"], dir, false);
    let top = dir.join("top.env.scl");
    let text = std::fs::read_to_string(&top).map_err(|e| format!("{}: {e}", top.display()))?;
    let top_u = uri(&top);
    let t = Instant::now();
    open(&mut c, &top_u, &text);
    let (at, d) = c.diagnostics(&top_u, |_| true);
    let open_ms = at.duration_since(t).as_secs_f64() * 1e3;
    if d["diagnostics"] != json!([]) {
        return Err(format!("top.env.scl: {}", d["diagnostics"]));
    }
    let _ = c.settle(std::time::Duration::from_millis(200));
    let pid = c.pid();
    let rss = rss_mib(pid).ok_or("no VmRSS in /proc/PID/status")?;
    let peak = status_mib(pid, "VmHWM:").unwrap_or(f64::NAN);
    if !c.shutdown().success() {
        return Err("sclc lsp exited with an error".into());
    }
    Ok(OpenMemory {
        rss_mib: rss,
        peak_mib: peak,
        open_ms,
    })
}

fn open(c: &mut Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "scl", "version": 1, "text": text}}),
    );
}

/// Sends `text` as version `version` of `uri` and returns the milliseconds
/// until its diagnostics arrive; errors if they are not empty.
fn timed_edit(c: &mut Client, uri: &str, version: i32, text: &str) -> Result<f64, String> {
    let t = Instant::now();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
    let (at, d) = c.diagnostics(uri, |p| p["version"] == version);
    if d["diagnostics"] != json!([]) {
        return Err(format!("edit {version} of {uri}: {}", d["diagnostics"]));
    }
    Ok(at.duration_since(t).as_secs_f64() * 1e3)
}

/// Runs the server `sclc lsp` on the workload in `dir` (`n` modules) and
/// times `edits` leaf edits and `edits` base-module edits.
pub fn latency(
    sclc: &Path,
    dir: &Path,
    n: usize,
    topo: Topology,
    edits: usize,
) -> Result<EditorLatency, String> {
    let (mut c, _) = Client::start(sclc, &["lsp"], dir, false);
    let top = dir.join("top.env.scl");
    let last_i = n - 1;
    let leaf = dir.join(format!("mod{last_i}.env.scl"));
    let base = dir.join("base.env.scl");
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (top_u, leaf_u, base_u) = (uri(&top), uri(&leaf), uri(&base));
    open(&mut c, &top_u, &read(&top)?);
    let (_, d) = c.diagnostics(&top_u, |_| true);
    if d["diagnostics"] != json!([]) {
        return Err(format!("top.env.scl: {}", d["diagnostics"]));
    }
    open(&mut c, &leaf_u, &read(&leaf)?);
    open(&mut c, &base_u, &read(&base)?);
    c.diagnostics(&leaf_u, |_| true);
    c.diagnostics(&base_u, |_| true);
    let rss = rss_mib(c.pid()).unwrap_or(f64::NAN);

    // Leaf edits: the last module's description changes every edit.
    let leaf_edits = |c: &mut Client, first: i32, warm: usize| -> Result<Vec<f64>, String> {
        let mut ms = Vec::new();
        for k in 0..edits + warm {
            let desc = format!("env-{last_i}-edit{k}-{first}");
            let v = first + k as i32;
            let t = timed_edit(c, &leaf_u, v, &workload::module_source(last_i, topo, &desc))?;
            if k >= warm {
                ms.push(t); // the first few warm the server up
            }
        }
        Ok(ms)
    };
    let mut leaf_ms = leaf_edits(&mut c, 2, 5)?;
    // The server really checks each version: a broken one gets its error.
    let broken = format!("{}\nlet = \n", workload::module_source(last_i, topo, "x"));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": leaf_u, "version": 100_000}, "contentChanges": [{"text": broken}]}),
    );
    let (_, d) = c.diagnostics(&leaf_u, |p| p["version"] == 100_000);
    if d["diagnostics"] == json!([]) {
        return Err("a leaf edit with a syntax error got no diagnostic".into());
    }
    // Base-module edits: a comment at its end, alternately present and absent.
    let base_src = workload::base_source();
    let mut base_ms = Vec::new();
    for k in 0..edits + 5 {
        let text = if k % 2 == 0 {
            format!("{base_src}// edit {k}\n")
        } else {
            base_src.clone()
        };
        let ms = timed_edit(&mut c, &base_u, 2 + k as i32, &text)?;
        if k >= 5 {
            base_ms.push(ms);
        }
    }
    // Leaf edits once more, the base having been edited: no warm-up, so
    // the first edit's cost of switching files is in the figures.
    let mut after_ms = leaf_edits(&mut c, 100_001, 0)?;
    let after_max = after_ms.iter().copied().fold(0.0, f64::max);
    let _ = c.settle(std::time::Duration::from_millis(100));
    if !c.shutdown().success() {
        return Err("sclc lsp exited with an error".into());
    }
    Ok(EditorLatency {
        leaf_p50: quantile(&mut leaf_ms, 0.5),
        leaf_p95: quantile(&mut leaf_ms, 0.95),
        base_p50: quantile(&mut base_ms, 0.5),
        base_p95: quantile(&mut base_ms, 0.95),
        after_p50: quantile(&mut after_ms, 0.5),
        after_p95: quantile(&mut after_ms, 0.95),
        after_max,
        rss_mib: rss,
        edits,
    })
}
