//! Every ```scl code block of the book is a complete program that
//! `sclc check` accepts (blocks fenced ```scl,ignore are fragments and are
//! skipped). Each block is checked on its own in a fresh folder, so it can
//! import only `std/...` modules.

mod common;
use common::*;

#[test]
fn book_scl_blocks_compile() {
    let repo = repo();
    let src = repo.join("book/src");
    let mut pages = Vec::new();
    fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    walk(&src, &mut pages);
    pages.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim() == "```scl" => block = Some((i + 1, String::new())),
                Some((start, body)) if line.trim() == "```" => {
                    let dir = tempfile::tempdir().unwrap();
                    let f = dir.path().join("block.env.scl");
                    std::fs::write(&f, &*body).unwrap();
                    let out = sclc(dir.path(), &["check", "block.env.scl"]);
                    if out.status.code() != Some(0) {
                        failures.push(format!(
                            "{}:{}:\n{}",
                            page.strip_prefix(&src).unwrap().display(),
                            start,
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                    checked += 1;
                    block = None;
                }
                Some((_, body)) => {
                    body.push_str(line);
                    body.push('\n');
                }
                None => {}
            }
        }
    }
    assert!(checked >= 20, "only {checked} scl blocks in the book");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The book's diagnostics page has a section for every registered code.
#[test]
fn book_lists_every_diagnostic_code() {
    let page = std::fs::read_to_string(repo().join("book/src/diagnostics.md")).unwrap();
    for c in scl_diag::CODES {
        assert!(
            page.contains(&format!("### {}: {}", c.code, c.title)),
            "book/src/diagnostics.md lacks {}",
            c.code
        );
    }
}

/// Every command `sclc --help` lists has a section in the CLI chapter and is
/// named in the command lists of the CLI chapter's and the quick start's
/// first paragraphs (a list that stopped at seven commands went stale).
#[test]
fn book_names_every_command() {
    let help = sclc(&repo(), &["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands section")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 9, "{commands:?}");
    let cli = std::fs::read_to_string(repo().join("book/src/cli.md")).unwrap();
    let quick = std::fs::read_to_string(repo().join("book/src/quick-start.md")).unwrap();
    let list_of = |page: &str, starts: &str| -> String {
        let from = page.find(starts).unwrap_or_else(|| panic!("no {starts:?}"));
        page[from..].split("\n\n").next().unwrap().to_string()
    };
    let cli_list = list_of(&cli, "`sclc` is one binary");
    let quick_list = list_of(&quick, "`sclc`'s commands:");
    for c in commands {
        assert!(
            cli.contains(&format!("### `sclc {c}")),
            "book/src/cli.md has no section for `sclc {c}`"
        );
        for (page, list) in [("cli.md", &cli_list), ("quick-start.md", &quick_list)] {
            assert!(
                list.contains(&format!("`{c}`")),
                "book/src/{page} does not name `{c}` in its list of commands"
            );
        }
    }
}

/// The env the chapter "From laptop to cluster" shows is the example's, as
/// it is (the block reads `train.py`, so it is checked there, not alone).
#[test]
fn laptop_to_cluster_shows_the_example() {
    let page = std::fs::read_to_string(repo().join("book/src/laptop-to-cluster.md")).unwrap();
    let block = page
        .split("```scl,ignore\n")
        .nth(1)
        .and_then(|b| b.split("```\n").next())
        .expect("the chapter's first scl block");
    let example =
        std::fs::read_to_string(repo().join("examples/laptop-to-cluster/train.env.scl")).unwrap();
    assert!(
        example.contains(block),
        "book/src/laptop-to-cluster.md's env differs from examples/laptop-to-cluster/train.env.scl"
    );
}
