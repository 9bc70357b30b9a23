//! The VS Code extension's grammar snapshot test runs on copies of the
//! repository's SCL files (`editors/vscode/tests/snap/examples/**` and
//! `tests/snap/stdlib/*`, because `vscode-tmgrammar-snap` writes its `.snap`
//! files beside its inputs). CI checks them with Node
//! (`scripts/vscode-extension.sh`), late in the run; this test finds a stale
//! or missing copy in `cargo test`, in milliseconds, and names the command that
//! refreshes them.

mod common;

use std::path::Path;

#[test]
fn vscode_snapshot_inputs_mirror_examples_and_stdlib() {
    let repo = common::repo();
    let snap = repo.join("editors/vscode/tests/snap");
    let is_scl = |p: &Path| p.to_string_lossy().ends_with(".env.scl");
    let mut problems = Vec::new();
    // (folder under the repository root, recursive?) — as scripts/snap-inputs.js.
    for (folder, recursive) in [("examples", true), ("stdlib", false)] {
        let originals: Vec<_> = common::files_below(&repo.join(folder), &|p: &Path| {
            is_scl(p) && (recursive || p.parent() == Some(&repo.join(folder)))
        });
        assert!(!originals.is_empty(), "no .env.scl files under {folder}/");
        for original in &originals {
            let rel = original.strip_prefix(&repo).unwrap();
            let copy = snap.join(rel);
            match std::fs::read(&copy) {
                Err(_) => problems.push(format!("missing copy of {}", rel.display())),
                Ok(bytes) if bytes != std::fs::read(original).unwrap() => {
                    problems.push(format!("stale copy of {}", rel.display()))
                }
                Ok(_) => {}
            }
            let snapfile = copy.with_file_name(format!(
                "{}.snap",
                copy.file_name().unwrap().to_string_lossy()
            ));
            if !snapfile.exists() {
                problems.push(format!("no committed .snap for {}", rel.display()));
            }
        }
        for copy in common::files_below(&snap.join(folder), &is_scl) {
            let rel = copy.strip_prefix(&snap).unwrap();
            if !repo.join(rel).exists() {
                problems.push(format!("copy without an original: {}", rel.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "editors/vscode/tests/snap is out of sync (run `npm run snap:update` in editors/vscode \
         and review the .snap diff):\n{}",
        problems.join("\n")
    );
}
