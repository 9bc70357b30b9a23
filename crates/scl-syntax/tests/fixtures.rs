//! Every acceptance and conformance program parses as expected, and no prefix
//! of any of them makes the parser panic.

use scl_diag::LineIndex;
use scl_syntax::parse;
use std::path::PathBuf;

fn fixtures() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for dir in ["acceptance", "conformance"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.to_string_lossy().ends_with(".env.scl") {
                let name = format!("{dir}/{}", p.file_name().unwrap().to_string_lossy());
                out.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    assert!(out.len() >= 28, "fixtures missing: {}", out.len());
    out
}

fn show(src: &str, errors: &[scl_diag::Diagnostic]) -> String {
    let idx = LineIndex::new(src);
    errors
        .iter()
        .map(|d| {
            let (l, c) = idx.line_col(src, d.at.span.start as usize);
            format!("{}:{l}:{c}: {}", d.code, d.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn all_fixtures_parse() {
    for (name, src) in fixtures() {
        let p = parse(&src);
        if name.ends_with("25_err_unterminated.env.scl") {
            let idx = LineIndex::new(&src);
            assert!(
                p.errors.iter().any(|d| d.code == "E0002"),
                "{name}: {}",
                show(&src, &p.errors)
            );
            for d in &p.errors {
                assert_eq!(
                    idx.line_col(&src, d.at.span.start as usize).0,
                    2,
                    "{name}: {}",
                    show(&src, &p.errors)
                );
            }
            // The env is still there, with both items.
            let scl_syntax::ast::Decl::Env(env) = &p.module.decls[0] else {
                panic!()
            };
            assert_eq!(env.body.items.len(), 2);
        } else {
            assert!(p.errors.is_empty(), "{name}:\n{}", show(&src, &p.errors));
        }
        assert!(!p.module.decls.is_empty(), "{name}: no declarations");
        for d in &p.module.decls {
            if let scl_syntax::ast::Decl::Env(e) = d {
                for it in e.body.items.iter() {
                    assert!(
                        !matches!(it.kind, scl_syntax::ast::ItemKind::Error),
                        "{name}: error item"
                    );
                }
            }
        }
    }
}

#[test]
fn crlf_line_endings_parse_the_same() {
    for (name, src) in fixtures() {
        let lf = parse(&src);
        let crlf = parse(&src.replace('\n', "\r\n"));
        assert_eq!(lf.errors.len(), crlf.errors.len(), "{name}");
        assert_eq!(lf.module.decls.len(), crlf.module.decls.len(), "{name}");
    }
    let p = parse("let x = \"\"\"\r\n  a\r\n  b\r\n  \"\"\"\r\n");
    let scl_syntax::ast::Decl::Let(l) = &p.module.decls[0] else {
        panic!()
    };
    assert_eq!(
        l.value.kind,
        scl_syntax::ast::ExprKind::Str(vec![scl_syntax::ast::StrPart::Lit("a\nb".into())])
    );
}

#[test]
fn every_prefix_parses_without_panic() {
    for (name, src) in fixtures() {
        for (i, _) in src.char_indices().chain(std::iter::once((src.len(), ' '))) {
            let prefix = &src[..i];
            let p = std::panic::catch_unwind(|| parse(prefix));
            assert!(p.is_ok(), "{name}: panic on prefix of {i} bytes:\n{prefix}");
        }
    }
}

#[test]
fn mutated_fixtures_do_not_panic() {
    let files = fixtures();
    let pieces = [
        "{", "}", "(", ")", "[", "]", "\"", "\"\"\"", "${", "\n", ",", "=", "+=", ".", "if ",
        "else ", "with ", "4GB", "\\q", "é", "env ", "///x\n",
    ];
    let mut seed = 0x9E3779B97F4A7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let (_, src) = &files[(next() % files.len() as u64) as usize];
        let mut s = src.clone();
        for _ in 0..(1 + next() % 3) {
            let mut at = (next() % (s.len() as u64 + 1)) as usize;
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            if next() % 2 == 0 {
                s.insert_str(at, pieces[(next() % pieces.len() as u64) as usize]);
            } else {
                let mut end = (at + 1 + (next() % 8) as usize).min(s.len());
                while !s.is_char_boundary(end) {
                    end += 1;
                }
                s.replace_range(at..end, "");
            }
        }
        let p = parse(&s);
        for d in &p.errors {
            assert!(
                d.at.span.start <= d.at.span.end && d.at.span.end as usize <= s.len(),
                "{s}\n{d:?}"
            );
        }
    }
}
