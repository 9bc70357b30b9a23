//! Development aid: deletes each single character of a file in turn and
//! prints a histogram of the number of syntax errors, to spot cascades.
//! `cargo run -p scl-syntax --example cascade -- FILE`

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let src = std::fs::read_to_string(path).expect("read");
    let mut hist = std::collections::BTreeMap::new();
    let mut worst = (0, String::new());
    for (i, c) in src.char_indices() {
        let mut s = src.clone();
        s.replace_range(i..i + c.len_utf8(), "");
        let n = scl_syntax::parse(&s).errors.len();
        *hist.entry(n).or_insert(0) += 1;
        if n > worst.0 {
            worst = (n, format!("deleting {c:?} at byte {i}"));
        }
    }
    println!("{hist:?} worst: {} errors {}", worst.0, worst.1);
}
