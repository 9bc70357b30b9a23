//! Characters a reader does not see as written: the one definition every
//! stage uses (the lexer refuses them in source, the renderer never prints
//! them raw, the backends refuse them in artifacts).

use std::borrow::Cow;

/// True for a character that a reader of a file or a terminal would not see
/// as written, or that a terminal or editor would act on:
/// - a control character other than tab and line feed (C0, DEL and C1 — the
///   carriage return and the escape that starts terminal sequences among
///   them) and the line and paragraph separators (U+0085, U+2028, U+2029);
/// - a bidirectional formatting character (U+061C, U+200E, U+200F,
///   U+202A–U+202E, U+2066–U+2069: the "Trojan Source" characters of
///   CVE-2021-42574, see Unicode UAX #9 §2);
/// - an invisible format or filler character that hides text or makes two
///   different strings look the same (Unicode's Default_Ignorable_Code_Point
///   set, DerivedCoreProperties.txt, and the Hangul fillers): U+00AD soft
///   hyphen, U+034F, U+115F, U+1160, U+17B4, U+17B5, U+180B–U+180F,
///   U+200B zero-width space, U+2060–U+2064, U+206A–U+206F, U+3164,
///   U+FEFF, U+FFA0, U+FFF9–U+FFFB, U+1D173–U+1D17A and the tag characters
///   U+E0000–U+E0FFF ("ASCII smuggling").
///
/// Not hidden, though default-ignorable: U+200C and U+200D (zero-width
/// non-joiner and joiner, which Persian, Indic scripts and emoji sequences
/// need) and the variation selectors U+FE00–U+FE0F (emoji presentation).
pub fn is_hidden(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n'))
        || matches!(
            c,
            '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{61c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{ad}'
                | '\u{34f}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'
                | '\u{2060}'..='\u{2064}'
                | '\u{206a}'..='\u{206f}'
                | '\u{3164}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// True when the character `c` at byte `at` of `text` is hidden in a file
/// ([`is_hidden`]), except the carriage return of a CRLF line end and a
/// byte order mark at the start: the rule for source files and for the
/// files they read.
pub fn is_hidden_at(text: &str, at: usize, c: char) -> bool {
    is_hidden(c)
        && !(c == '\r' && text.as_bytes().get(at + 1) == Some(&b'\n'))
        && !(c == '\u{feff}' && at == 0)
}

/// True for a bidirectional formatting character (see [`is_hidden`]).
pub fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// The Unicode name of a hidden character, where it has a well-known one
/// (the bidirectional controls, the separators, the usual C0 controls).
pub fn hidden_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\0' => "NULL",
        '\u{7}' => "BELL",
        '\u{8}' => "BACKSPACE",
        '\u{b}' => "LINE TABULATION",
        '\u{c}' => "FORM FEED",
        '\r' => "CARRIAGE RETURN",
        '\u{1b}' => "ESCAPE",
        '\u{7f}' => "DELETE",
        '\u{85}' => "NEXT LINE",
        '\u{61c}' => "ARABIC LETTER MARK",
        '\u{200e}' => "LEFT-TO-RIGHT MARK",
        '\u{200f}' => "RIGHT-TO-LEFT MARK",
        '\u{202a}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202b}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202c}' => "POP DIRECTIONAL FORMATTING",
        '\u{202d}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202e}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2028}' => "LINE SEPARATOR",
        '\u{2029}' => "PARAGRAPH SEPARATOR",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{feff}' => "ZERO WIDTH NO-BREAK SPACE",
        '\u{ad}' => "SOFT HYPHEN",
        '\u{200b}' => "ZERO WIDTH SPACE",
        '\u{2060}' => "WORD JOINER",
        '\u{3164}' => "HANGUL FILLER",
        '\u{e0000}'..='\u{e007f}' => "TAG",
        _ => return None,
    })
}

/// `c` as a reader can name it: `U+202E (RIGHT-TO-LEFT OVERRIDE)`.
pub fn describe_char(c: char) -> String {
    match hidden_name(c) {
        Some(n) => format!("U+{:04X} ({n})", c as u32),
        None => format!("U+{:04X}", c as u32),
    }
}

/// `text` with every hidden character replaced by a visible one of the same
/// UTF-8 length (`?`, `¿`, `�`, `🔲` for one, two, three and four bytes), so that every
/// byte offset and every character column stays what it was. The carriage
/// return of a CRLF line end becomes a space. Lines are then split only at
/// `\n`, as [`crate::LineIndex`] splits them. Borrows when nothing changes.
pub fn visible_source(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_hidden(c) {
            out.push(c);
        } else if c == '\r' && chars.peek() == Some(&'\n') {
            out.push(' ');
        } else {
            out.push(match c.len_utf8() {
                1 => '?',
                2 => '¿',
                3 => '\u{fffd}',
                _ => '\u{1f532}',
            });
        }
    }
    debug_assert_eq!(out.len(), text.len());
    Cow::Owned(out)
}

/// `text` with every hidden character written as an escape (`\u{1b}`), for
/// messages, labels and notes printed to a terminal. Borrows when nothing
/// changes.
pub fn visible_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hidden character: the class the functions above are about.
    fn all_hidden() -> Vec<char> {
        (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| is_hidden(*c))
            .collect()
    }

    #[test]
    fn the_class_is_what_the_docs_say() {
        let h = all_hidden();
        // The 32 C0 controls without tab and line feed (30), DEL, the 32 C1
        // controls (U+0085 among them), 2 separators, 12 bidi controls, U+FEFF,
        // and the invisible format and filler characters: 1 + 1 + 2 + 2 + 5
        // + 1 + 5 + 6 + 1 + 1 + 3 + 8 + 4096 (tags).
        let format = 1 + 1 + 2 + 2 + 5 + 1 + 5 + 6 + 1 + 1 + 3 + 8 + 4096;
        assert_eq!(h.len(), 30 + 1 + 32 + 2 + 12 + 1 + format, "{h:?}");
        assert!(!is_hidden('\t') && !is_hidden('\n') && !is_hidden('é') && !is_hidden(' '));
        // Needed by scripts and emoji: not hidden.
        assert!(!is_hidden('\u{200c}') && !is_hidden('\u{200d}') && !is_hidden('\u{fe0f}'));
        assert!(!is_hidden('日') && !is_hidden('🙂'));
    }

    #[test]
    fn visible_source_keeps_every_offset_and_column() {
        for c in all_hidden() {
            let text = format!("a{c}b\r\nc\u{202e}d");
            let v = visible_source(&text);
            assert_eq!(v.len(), text.len(), "{c:?}");
            assert_eq!(v.chars().count(), text.chars().count(), "{c:?}");
            assert!(!v.chars().any(is_hidden), "{c:?}: {v:?}");
            // Byte offsets of the visible characters are unchanged.
            assert_eq!(v.find('b'), text.find('b'));
            assert_eq!(v.find('d'), text.find('d'));
            assert_eq!(v.matches('\n').count(), 1, "{c:?}");
        }
        assert_eq!(visible_source("x\r\ny"), "x \ny");
        assert!(matches!(visible_source("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn visible_text_escapes_every_hidden_character() {
        for c in all_hidden() {
            let s = format!("<{c}>");
            let v = visible_text(&s);
            assert_eq!(v, format!("<\\u{{{:x}}}>", c as u32));
        }
        assert_eq!(visible_text("\u{1b}[2J"), "\\u{1b}[2J");
    }
}
