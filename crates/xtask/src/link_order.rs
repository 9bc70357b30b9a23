//! `xtask link-order`: writes `crates/sclc/link-order.txt`, the order in
//! which the linker lays out `sclc`'s functions (lld's
//! `--symbol-ordering-file`, passed by `crates/sclc/build.rs`).
//!
//! Why: the kernel maps a program's code into memory 64 KiB at a time
//! around each page that is run ("fault-around"), and those pages count in
//! the process's resident memory. `sclc` is about 15 MB of code, most of it
//! the engines' clients, the language server and their libraries; a
//! compile runs about 2 MB of it, spread over the whole text. Laid out
//! together, the functions a compile runs cost about 3 MiB less resident
//! memory per run (`bench/README.md`, seventh session).
//!
//! How: one release `sclc` runs under `valgrind --tool=callgrind` on the
//! benchmark workload (`ir` and `check` at N = 200, both topologies), on
//! every example of `examples/` (`ir`, `check`, and `build` to every
//! target); every function that ran and is in the binary's symbol table is
//! written, the most instructions first. The names are mangled symbols
//! (most in the legacy scheme, `_ZN…17h<hash>E`, whose hash covers the
//! function's path and signature and cargo's `-C metadata` of its crate):
//! they do not change when a function's body changes, only when it is
//! renamed or moved, or when a crate's version or features, the profile or
//! the compiler change. A name the binary no longer has is skipped by the
//! linker (`--check` counts them, and the bench prints the count:
//! regenerate when many are missing). Paths are the repository's and
//! `$CARGO_TARGET_DIR`'s, wherever the command runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file `crates/sclc/build.rs` hands to the linker, in the repository.
const ORDER_FILE: &str = "crates/sclc/link-order.txt";

pub fn main(args: &[String]) -> i32 {
    let check = args.iter().any(|a| a == "--check");
    let root = crate::bench::repo_root();
    let bin = crate::bench::target_dir(&root).join("release/sclc");
    if !bin.exists() {
        eprintln!(
            "error: {} is missing: build it first (cargo build --release -p sclc)",
            bin.display()
        );
        return 2;
    }
    let symbols = match text_symbols(&bin) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let order_file = root.join(ORDER_FILE);
    if check {
        let (found, listed) = count_found(&order_file, &symbols);
        println!(
            "{ORDER_FILE}: {found} of {listed} functions are in {} ({:.0} %)",
            bin.display(),
            100.0 * found as f64 / listed.max(1) as f64
        );
        return 0;
    }
    match generate(&root, &bin, &order_file, &symbols) {
        Ok((names, bytes)) => {
            println!(
                "{ORDER_FILE}: {} functions, {:.2} MB of {:.2} MB of code",
                names,
                bytes as f64 / 1e6,
                symbols.values().sum::<u64>() as f64 / 1e6
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// How many of the names of the order file under `root` the binary `bin`
/// has, and how many it lists; `None` when `nm` or the file is missing.
pub fn coverage(root: &Path, bin: &Path) -> Option<(usize, usize)> {
    let symbols = text_symbols(bin).ok().filter(|s| !s.is_empty())?;
    let file = root.join(ORDER_FILE);
    file.is_file().then(|| count_found(&file, &symbols))
}

/// (names of `file` that are in `symbols`, names in `file`).
fn count_found(file: &Path, symbols: &HashMap<String, u64>) -> (usize, usize) {
    let listed = std::fs::read_to_string(file).unwrap_or_default();
    let names: Vec<&str> = listed.lines().filter(|l| !l.is_empty()).collect();
    let found = names.iter().filter(|n| symbols.contains_key(**n)).count();
    (found, names.len())
}

/// The binary's functions (text symbols) and their sizes in bytes; an
/// error when `nm` fails or finds none (a stripped binary).
fn text_symbols(bin: &Path) -> Result<HashMap<String, u64>, String> {
    let out = Command::new("nm")
        .arg("-S")
        .arg(bin)
        .output()
        .map_err(|e| format!("nm {}: {e} (install binutils)", bin.display()))?;
    if !out.status.success() {
        return Err(format!(
            "nm {}: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut syms = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [_, size, kind, name] = f[..] {
            if matches!(kind, "t" | "T" | "w" | "W") {
                syms.insert(name.to_string(), u64::from_str_radix(size, 16).unwrap_or(0));
            }
        }
    }
    if syms.is_empty() {
        return Err(format!(
            "{} has no symbol table (stripped?): the order file names functions by their symbols",
            bin.display()
        ));
    }
    Ok(syms)
}

/// Runs the workloads under callgrind and writes the order file: the number
/// of functions written and their bytes of code.
fn generate(
    root: &Path,
    bin: &Path,
    order_file: &Path,
    symbols: &HashMap<String, u64>,
) -> Result<(usize, u64), String> {
    let bin = std::fs::canonicalize(bin).map_err(|e| e.to_string())?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut runs: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for topo in [
        crate::workload::Topology::Chain,
        crate::workload::Topology::Fanin,
    ] {
        let dir = tmp.path().join(format!("{topo:?}"));
        crate::workload::write(&dir, 200, topo).map_err(|e| e.to_string())?;
        for cmd in ["ir", "check"] {
            runs.push((dir.clone(), vec![cmd.into(), "top.env.scl".into()]));
        }
    }
    let examples = std::fs::canonicalize(root.join("examples")).map_err(|e| e.to_string())?;
    let mut files: Vec<PathBuf> = walk_scl(&examples);
    files.sort();
    for f in &files {
        let dir = f.parent().unwrap_or(&examples).to_path_buf();
        let file = f.to_string_lossy().to_string();
        runs.push((dir.clone(), vec!["ir".into(), file.clone()]));
        runs.push((dir.clone(), vec!["check".into(), file.clone()]));
        for target in ["all", "trainjob"] {
            let out = tmp.path().join("out").to_string_lossy().to_string();
            runs.push((
                dir.clone(),
                vec![
                    "build".into(),
                    file.clone(),
                    "--target".into(),
                    target.into(),
                    "--out".into(),
                    out,
                ],
            ));
        }
    }
    let mut cost: HashMap<String, u64> = HashMap::new();
    for (i, (dir, args)) in runs.iter().enumerate() {
        let out = tmp.path().join(format!("cg.{i}"));
        let status = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg("--demangle=no")
            // Self cost per line, recursion folded into one name: what
            // `callgrind_costs` reads, whatever a `.valgrindrc` says.
            .arg("--dump-instr=no")
            .arg("--separate-recs=1")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&bin)
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("valgrind (install it: apt-get install valgrind): {e}"))?;
        // A command may exit 1 on diagnostics: its functions still count.
        if !matches!(status.code(), Some(0 | 1)) {
            eprintln!(
                "warning: sclc {} ended with {status} under valgrind",
                args.join(" ")
            );
        }
        let text = std::fs::read_to_string(&out)
            .map_err(|e| format!("{}: {e} (sclc {})", out.display(), args.join(" ")))?;
        for (name, c) in callgrind_costs(&text) {
            *cost.entry(name).or_default() += c;
        }
    }
    let mut names: Vec<(&String, u64)> = cost
        .iter()
        .filter(|(n, _)| symbols.contains_key(*n))
        .map(|(n, c)| (n, *c))
        .collect();
    // The most instructions first; ties by name, so the file is stable.
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let bytes = names.iter().map(|(n, _)| symbols[*n]).sum();
    let mut text = String::new();
    for (n, _) in &names {
        text.push_str(n);
        text.push('\n');
    }
    std::fs::write(order_file, text).map_err(|e| format!("{}: {e}", order_file.display()))?;
    Ok((names.len(), bytes))
}

/// The `.env.scl` files under `dir`.
fn walk_scl(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_scl(&p));
        } else if p.to_string_lossy().ends_with(".env.scl") {
            out.push(p);
        }
    }
    out
}

/// Self cost (instructions) per function name of a callgrind output file
/// (names compressed as `fn=(id) name`, later `fn=(id)`; cost lines start
/// with a position, then the instruction count).
fn callgrind_costs(text: &str) -> HashMap<String, u64> {
    let mut ids: HashMap<&str, &str> = HashMap::new();
    let mut cost: HashMap<&str, u64> = HashMap::new();
    let mut cur: Option<&str> = None;
    let mut in_call = false;
    for line in text.lines() {
        let (kind, rest) = match line.split_once('=') {
            Some((k @ ("fn" | "cfn"), r)) => (k, r),
            _ => {
                if line.starts_with("calls=") {
                    // The next cost line is the call's inclusive cost.
                    in_call = true;
                    continue;
                }
                let first = line.as_bytes().first().copied().unwrap_or(b' ');
                if first.is_ascii_digit() || first == b'+' || first == b'-' || first == b'*' {
                    if in_call {
                        in_call = false;
                        continue;
                    }
                    if let (Some(f), Some(c)) = (cur, line.split_whitespace().nth(1)) {
                        *cost.entry(f).or_default() += c.parse::<u64>().unwrap_or(0);
                    }
                }
                continue;
            }
        };
        // `(id) name` defines an id; `(id)` refers to one.
        let name = match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((id, name)) if !name.trim().is_empty() => {
                ids.insert(id, name.trim());
                name.trim()
            }
            Some((id, _)) => ids.get(id).copied().unwrap_or(""),
            None => rest.trim(),
        };
        // `name'2` is a deeper recursion level of `name` (`--separate-recs`).
        let name = match name.rsplit_once('\'') {
            Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
            _ => name,
        };
        if kind == "fn" {
            cur = Some(name);
            cost.entry(name).or_default();
        }
    }
    cost.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_costs_count_self_instructions_and_skip_calls() {
        let text = "fn=(1) a\n0 10\n+1 5\ncfn=(2) b\ncalls=1 0\n0 100\nfn=(2)\n0 7\nfn=(1)\n0 1\nfn=(3) a'2\n0 4\n";
        let c = callgrind_costs(text);
        assert_eq!(c["a"], 20);
        assert_eq!(c["b"], 7);
        assert_eq!(c.len(), 2);
    }
}
