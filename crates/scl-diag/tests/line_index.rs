//! The line index: byte offsets ↔ 1-based (line, character column) for the
//! CLI and ↔ 0-based (line, UTF-16 unit) positions for LSP.

use scl_diag::LineIndex;

/// Every char boundary of `text` survives both round trips.
fn round_trips(text: &str) {
    let ix = LineIndex::new(text);
    for (off, _) in text.char_indices().chain([(text.len(), ' ')]) {
        let (l, c) = ix.line_col(text, off);
        assert_eq!(ix.offset_of_line_col(text, l, c), off, "{text:?} @{off}");
        // For LSP a `\r\n` is the line break: its `\n` is not a position.
        if text[off..].starts_with('\n') && text[..off].ends_with('\r') {
            continue;
        }
        let (l16, c16) = ix.utf16_position(text, off);
        assert_eq!(ix.offset_of_utf16(text, l16, c16), off, "{text:?} @{off}");
    }
}

#[test]
fn non_ascii_columns_in_characters_and_utf16_units() {
    // é is 2 bytes, 1 char, 1 UTF-16 unit; 中 3 bytes, 1 char, 1 unit;
    // 😀 4 bytes, 1 char, 2 units.
    let text = "a = \"é中😀x\"\n";
    let ix = LineIndex::new(text);
    let x = text.find('x').unwrap();
    assert_eq!(x, 5 + 2 + 3 + 4);
    assert_eq!(ix.line_col(text, x), (1, 9));
    assert_eq!(ix.utf16_position(text, x), (0, 9));
    let emoji = text.find('😀').unwrap();
    assert_eq!(ix.utf16_position(text, emoji), (0, 7));
    // Inside the emoji (byte 2 of 4): counts from its start.
    assert_eq!(ix.utf16_position(text, emoji + 2), (0, 7));
    // UTF-16 unit 8 is inside the surrogate pair: the emoji's start.
    assert_eq!(ix.offset_of_utf16(text, 0, 8), emoji);
    round_trips(text);
}

#[test]
fn crlf_line_breaks() {
    let text = "env a {\r\n  é = 1\r\n}\r\n";
    let ix = LineIndex::new(text);
    assert_eq!(ix.len(), 4);
    let e = text.find('é').unwrap();
    assert_eq!(ix.line_col(text, e), (2, 3));
    assert_eq!(ix.utf16_position(text, e), (1, 2));
    // A column past the end of line 1 stops before its `\r\n`.
    assert_eq!(ix.offset_of_utf16(text, 0, 100), text.find('\r').unwrap());
    assert_eq!(ix.line_start(2), Some(text.find('}').unwrap()));
    round_trips(text);
}

#[test]
fn no_trailing_newline_and_offsets_at_eof() {
    let text = "a\nbé";
    let ix = LineIndex::new(text);
    assert_eq!(ix.len(), 2);
    assert_eq!(ix.line_col(text, text.len()), (2, 3));
    assert_eq!(ix.utf16_position(text, text.len()), (1, 2));
    // Past the end: clamped to the end.
    assert_eq!(ix.line_col(text, 1000), (2, 3));
    assert_eq!(ix.offset_of_utf16(text, 7, 0), text.len());
    assert_eq!(ix.offset_of_line_col(text, 2, 99), text.len());
    round_trips(text);
    // A trailing newline starts an empty last line.
    let text = "a\n";
    let ix = LineIndex::new(text);
    assert_eq!(ix.line_col(text, 2), (2, 1));
    assert_eq!(ix.utf16_position(text, 2), (1, 0));
    round_trips(text);
    round_trips("");
}
