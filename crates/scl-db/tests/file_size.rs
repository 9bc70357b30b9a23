//! Files larger than `MAX_FILE_BYTES` are refused with E0009, never read
//! whole: a source module (the root or an import) and a `file()`. A file of
//! exactly the limit is read.

use scl_db::{with_compiler_stack, Database, MAX_FILE_BYTES};

/// `(code, file, line, column, message)` of every diagnostic of `main.env.scl`
/// in a workspace holding `files`.
fn check(files: &[(&str, Vec<u8>)]) -> Vec<(String, String, usize, usize, String)> {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    with_compiler_stack(|| {
        let db = Database::new(dir.path(), None);
        let f = db.open(&dir.path().join("main.env.scl"));
        let diags = db.check(f);
        let sources = db.sources();
        diags
            .iter()
            .map(|d| {
                let file = d.at.file.to_string();
                let src = &sources[&file];
                let index = scl_diag::LineIndex::new(src);
                let (l, c) = index.line_col(src, d.at.span.start as usize);
                (d.code.to_string(), file, l, c, d.message.clone())
            })
            .collect()
    })
}

/// A valid module of exactly `n` bytes: a `let` and then blank lines.
fn module_of(n: usize) -> Vec<u8> {
    let mut b = b"let x = 1\n".to_vec();
    b.resize(n, b'\n');
    b
}

#[test]
fn a_module_of_exactly_the_limit_is_read() {
    assert_eq!(
        check(&[("main.env.scl", module_of(MAX_FILE_BYTES))]),
        vec![]
    );
}

#[test]
fn a_module_over_the_limit_is_one_error() {
    let d = check(&[("main.env.scl", module_of(MAX_FILE_BYTES + 1))]);
    assert_eq!(
        d,
        vec![(
            "E0009".into(),
            "main.env.scl".into(),
            1,
            1,
            "the file is larger than 16 MiB, the most the compiler reads".into()
        )]
    );
}

#[test]
fn an_imported_module_over_the_limit_is_an_error_in_that_module() {
    let main = b"import \"./big.env.scl\" as big\nlet y = 1\n".to_vec();
    let d = check(&[
        ("main.env.scl", main),
        ("big.env.scl", module_of(MAX_FILE_BYTES + 10)),
    ]);
    assert_eq!(
        d,
        vec![(
            "E0009".into(),
            "big.env.scl".into(),
            1,
            1,
            "the file is larger than 16 MiB, the most the compiler reads".into()
        )]
    );
}

#[test]
fn file_reads_at_most_the_limit() {
    let main = b"let small = file(\"ok.txt\")\nlet big = file(\"big.txt\")\n".to_vec();
    let d = check(&[
        ("main.env.scl", main),
        ("ok.txt", vec![b'a'; MAX_FILE_BYTES]),
        ("big.txt", vec![0u8; MAX_FILE_BYTES + 1]),
    ]);
    assert_eq!(
        d,
        vec![(
            "E0009".into(),
            "main.env.scl".into(),
            2,
            16,
            "\"big.txt\" is larger than 16 MiB, the most the compiler reads".into()
        )]
    );
}
