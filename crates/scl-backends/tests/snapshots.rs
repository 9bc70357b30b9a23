//! Snapshot of every artifact and the warnings of every fixture in
//! `tests/fixtures/` (IR written by hand from the acceptance scenarios, plus
//! edge cases). Review changes with `cargo insta review`.

mod common;

#[test]
fn every_fixture_snapshots() {
    for (name, _spec, out) in common::lowered() {
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
        let paths: Vec<&str> = out.artifacts.iter().map(|a| a.path.as_str()).collect();
        insta::assert_snapshot!(format!("{name}__artifacts"), paths.join("\n"));
    }
}
