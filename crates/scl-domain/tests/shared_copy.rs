//! The copies in `data/source` are byte-identical to the team's shared
//! folder of vendor tables, where that folder exists next to the checkout
//! (it does not in every CI; then this test checks nothing).

use std::path::PathBuf;

#[test]
fn copies_match_the_shared_tables() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = here.join("../../../shared/data/compat");
    let Ok(entries) = std::fs::read_dir(&shared) else {
        return;
    };
    let mut compared = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".csv") {
            continue;
        }
        let theirs = std::fs::read(e.path()).unwrap();
        let ours = std::fs::read(here.join("data/source").join(&name))
            .unwrap_or_else(|_| panic!("data/source/{name} is missing"));
        assert!(
            ours == theirs,
            "data/source/{name} differs from the shared copy"
        );
        compared += 1;
    }
    assert!(compared >= 6, "only {compared} shared tables");
}
