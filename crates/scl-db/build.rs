//! Embeds every `stdlib/*.env.scl` of the repository into the binary.
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../stdlib");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            if let Some(stem) = name.strip_suffix(".env.scl") {
                println!("cargo:rerun-if-changed={}", p.display());
                entries.push((stem.to_string(), p.canonicalize().unwrap()));
            }
        }
    }
    entries.sort();
    let mut out = String::from("/// The embedded standard library: (module name, source).\npub const STDLIB: &[(&str, &str)] = &[\n");
    for (name, path) in entries {
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("stdlib.rs");
    std::fs::write(dest, out).unwrap();
}
