//! Between the protocol's coordinates and placid's: LSP positions (line and UTF-16 column,
//! the protocol's default encoding) and byte offsets, `file://` URIs and paths. Every
//! conversion clamps instead of failing, since an editor may send a position past the end of
//! a line or of the document (a stale request after an edit), and that must never panic.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, Uri};

/// The byte offset of `position` in `text`: a line past the end is the end of the text, a
/// column past the end of its line is the line's end, and a column inside a character that
/// UTF-16 writes as two units is that character's start.
pub fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text.get(line_start..).and_then(|rest| rest.find('\n')) {
            Some(index) => line_start += index + 1,
            None => return text.len(),
        }
    }
    let line = text.get(line_start..).unwrap_or_default();
    let line = line.split('\n').next().unwrap_or_default();
    let mut units = 0u32;
    for (index, character) in line.char_indices() {
        let width = character.len_utf16() as u32;
        if units + width > position.character {
            return line_start + index;
        }
        units += width;
    }
    line_start + line.len()
}

/// The position of byte `offset` of `text` (clamped to the text, and back to a character
/// boundary).
pub fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    Position { line: u32::try_from(line).unwrap_or(u32::MAX), character: u32::try_from(character).unwrap_or(u32::MAX) }
}

/// The range of bytes `start..end` of `text`.
pub fn range(text: &str, start: usize, end: usize) -> Range {
    Range { start: position(text, start), end: position(text, end.max(start)) }
}

/// The local path a `file://` URI names, percent-decoded; `None` for another scheme or a
/// path that is not valid UTF-8 once decoded.
pub fn path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().is_some_and(|scheme| scheme.as_str().eq_ignore_ascii_case("file")) {
        return None;
    }
    let encoded = uri.path().as_str();
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%'
            && let Some(value) = encoded.get(at + 1..at + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            decoded.push(value);
            at += 3;
            continue;
        }
        decoded.push(bytes[at]);
        at += 1;
    }
    let text = String::from_utf8(decoded).ok()?;
    text.starts_with('/').then(|| PathBuf::from(text))
}

/// The `file://` URI of an absolute path, with every byte that is not unreserved in a URI
/// path percent-encoded.
pub fn uri(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let mut encoded = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&encoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_and_clamp() {
        let text = "ab\n\u{1F600}x\n";
        assert_eq!(offset(text, Position::new(1, 2)), 7);
        assert_eq!(position(text, 7), Position::new(1, 2));
        // Inside the surrogate pair: the character's start.
        assert_eq!(offset(text, Position::new(1, 1)), 3);
        assert_eq!(offset(text, Position::new(0, 99)), 2);
        assert_eq!(offset(text, Position::new(99, 0)), text.len());
        assert_eq!(position(text, 999), Position::new(2, 0));
        assert_eq!(position(text, 4), Position::new(1, 0));
    }

    #[test]
    fn uris_and_paths() {
        let path = PathBuf::from("/tmp/a b/ü.kdl");
        let uri = uri(&path).unwrap_or_else(|| panic!("no uri"));
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%BC.kdl");
        assert_eq!(super::path(&uri), Some(path));
        let other = Uri::from_str("untitled:Untitled-1").unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(super::path(&other), None);
    }
}
