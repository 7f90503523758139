//! A fast reader for the plain KDL that machines write: `placid-probe`'s inventories,
//! `placid inventory merge`'s output and generated policy, where a 4 MB file made the `kdl`
//! crate's parser (which keeps every byte of formatting) twenty times slower than the same
//! inventory in JSON.
//!
//! The subset is one node per line, entries separated by single spaces, `{` at the end of a
//! node's line and `}` alone on its own, or a block opened and closed on the node's line
//! (`team "a" { share 10; tiers "p0" }`: one level, children separated by `; `), full-line
//! `//` comments, ASCII only, and values that are quoted strings without escapes, decimal
//! integers and floats, `#true`/`#false`, with an optional `(type)` annotation. It builds the
//! same [`KdlDocument`] the crate would, with the same spans of names and entries (what the
//! lowering reads), so every later step and every diagnostic is unchanged; nodes carry no span
//! of their own, which nothing reads.
//!
//! Invariant: [`read`] returns `None` for any text outside the subset, valid KDL or not, and
//! the caller parses it with the crate instead. It never accepts what the crate would refuse
//! (a property test checks documents and spans against the crate's).

use kdl::{KdlDocument, KdlEntry, KdlEntryFormat, KdlIdentifier, KdlNode, KdlValue};
use miette::SourceSpan;

/// The document of `text`, or `None` when `text` is not in the plain subset.
pub fn read(text: &str) -> Option<KdlDocument> {
    let mut document = KdlDocument::new();
    for node in nodes(text) {
        document.nodes_mut().push(node?);
    }
    Some(document)
}

/// The top-level nodes of `text` one at a time, so a reader can lower each and drop it before
/// the next is built; an item `None` means `text` is not in the plain subset (the items before
/// it must then be discarded).
pub fn nodes(text: &str) -> Nodes<'_> {
    let plain = text.bytes().all(|byte| byte.is_ascii() && (byte == b'\n' || !byte.is_ascii_control()));
    Nodes { lines: text.split_inclusive('\n'), offset: 0, open: Vec::new(), plain, done: false }
}

/// The iterator of [`nodes`].
pub struct Nodes<'a> {
    lines: std::str::SplitInclusive<'a, char>,
    offset: usize,
    /// Blocks being filled, one per open `{`.
    open: Vec<(KdlNode, KdlDocument)>,
    plain: bool,
    done: bool,
}

impl Iterator for Nodes<'_> {
    type Item = Option<KdlNode>;

    fn next(&mut self) -> Option<Option<KdlNode>> {
        if self.done {
            return None;
        }
        let item = self.step();
        // After a refusal or the end, nothing more.
        self.done = !matches!(item, Some(Some(_)));
        item
    }
}

impl Nodes<'_> {
    fn step(&mut self) -> Option<Option<KdlNode>> {
        // Not ASCII, or with a control character: KDL ends a comment at `\r`, VT or FF, which
        // a line-based reader would not see.
        if !self.plain {
            return Some(None);
        }
        for line in self.lines.by_ref() {
            let start = self.offset;
            self.offset += line.len();
            let body = line.strip_suffix('\n').unwrap_or(line);
            let indent = body.len() - body.trim_start_matches(' ').len();
            let content = &body[indent..];
            if content.is_empty() || content.starts_with("//") {
                continue;
            }
            let finished = if content == "}" {
                let Some((mut node, children)) = self.open.pop() else { return Some(None) };
                node.set_children(children);
                node
            } else {
                let Some((node, opens)) = node(content, start + indent) else { return Some(None) };
                // Deeper than the crate's guard allows (a block on the line nests too): its
                // path reports it (E017).
                if (opens || node.children().is_some()) && self.open.len() >= super::MAX_NESTING {
                    return Some(None);
                }
                if !opens {
                    node
                } else {
                    self.open.push((node, KdlDocument::new()));
                    continue;
                }
            };
            match self.open.last_mut() {
                Some((_, children)) => children.nodes_mut().push(finished),
                None => return Some(Some(finished)),
            }
        }
        // The end: a block left open is outside the subset.
        if self.open.is_empty() { None } else { Some(None) }
    }
}

/// One node line (without its indentation, which starts at `at`): the node, with its
/// children when the line holds its whole block, and whether it opens a block.
fn node(content: &str, at: usize) -> Option<(KdlNode, bool)> {
    if content.ends_with(' ') {
        return None;
    }
    let words: Vec<(&str, usize)> = Words { text: content, at: 0 }.map(|(word, word_at)| (word, at + word_at)).collect();
    if let Some((_, head)) = words.split_last().filter(|(last, _)| last.0 == "{") {
        return Some((node_of(head)?, true));
    }
    let Some(open) = words.iter().position(|(word, _)| *word == "{") else { return Some((node_of(&words)?, false)) };
    let (_, inside) = words[open + 1..].split_last().filter(|(last, _)| last.0 == "}")?;
    let mut node = node_of(&words[..open])?;
    node.set_children(line_children(inside)?);
    Some((node, false))
}

/// A node of its name and entries, the words of one line (offsets in the file).
fn node_of(words: &[(&str, usize)]) -> Option<KdlNode> {
    let ((name, name_at), entries) = words.split_first()?;
    let mut node = KdlNode::new(identifier(name, *name_at)?);
    for (word, word_at) in entries {
        node.entries_mut().push(entry(word, *word_at)?);
    }
    Some(node)
}

/// The children of a block opened and closed on one line, the words between its braces:
/// nodes ended by a `;` on their last word, the last one by the `}` alone. An empty node, a
/// brace (a deeper block) or a `;` before the `}` leaves the subset.
fn line_children(words: &[(&str, usize)]) -> Option<KdlDocument> {
    let mut children = KdlDocument::new();
    let mut child = Vec::new();
    for (index, (word, word_at)) in words.iter().enumerate() {
        match word.strip_suffix(';') {
            Some(_) if index + 1 == words.len() => return None,
            Some(last) => {
                child.push((last, *word_at));
                children.nodes_mut().push(node_of(&child)?);
                child.clear();
            }
            None => child.push((word, *word_at)),
        }
    }
    children.nodes_mut().push(node_of(&child)?);
    Some(children)
}

/// The space-separated words of a line, with their offsets; a quoted string is one word.
struct Words<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<(&'a str, usize)> {
        let rest = self.text.get(self.at..)?;
        if rest.is_empty() {
            return None;
        }
        let start = self.at;
        // A quote opens a string that runs to the next quote; spaces inside are its own.
        let mut in_string = false;
        let length = rest
            .char_indices()
            .find(|(_, c)| {
                if *c == '"' {
                    in_string = !in_string;
                }
                *c == ' ' && !in_string
            })
            .map_or(rest.len(), |(index, _)| index);
        // Two spaces in a row, or a trailing one, leave the subset (an empty word).
        self.at = start + length + 1;
        Some((&rest[..length], start))
    }
}

fn identifier(text: &str, at: usize) -> Option<KdlIdentifier> {
    let bare = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !matches!(text, "true" | "false" | "null" | "inf" | "nan");
    if !bare {
        return None;
    }
    let mut identifier = KdlIdentifier::from(text);
    identifier.set_span(SourceSpan::new(at.into(), text.len()));
    Some(identifier)
}

/// One entry: `value`, `key=value`, either with a `(type)` before the value.
fn entry(word: &str, at: usize) -> Option<KdlEntry> {
    let (key, value_text, value_at) = match word.split_once('=') {
        Some((key, value)) if !key.starts_with('"') => (Some(identifier(key, at)?), value, at + key.len() + 1),
        _ => (None, word, at),
    };
    let (ty, literal) = match value_text.strip_prefix('(') {
        Some(annotated) => {
            let (ty, literal) = annotated.split_once(')')?;
            (Some(identifier(ty, value_at + 1)?), literal)
        }
        None => (None, value_text),
    };
    let value = value(literal)?;
    let float = matches!(value, KdlValue::Float(_));
    let mut entry = match key {
        Some(key) => KdlEntry::new_prop(key, value),
        None => KdlEntry::new(value),
    };
    if let Some(ty) = ty {
        entry.set_ty(ty);
    }
    if float {
        // Amounts of money are read as written (`2.50`), from the format.
        entry.set_format(KdlEntryFormat { value_repr: literal.to_owned(), ..KdlEntryFormat::default() });
    }
    entry.set_span(SourceSpan::new(at.into(), word.len()));
    Some(entry)
}

fn value(literal: &str) -> Option<KdlValue> {
    if let Some(quoted) = literal.strip_prefix('"') {
        let text = quoted.strip_suffix('"')?;
        // Escapes, and control characters the crate refuses, leave the subset.
        if text.contains(['"', '\\']) || text.chars().any(|c| c.is_ascii_control()) {
            return None;
        }
        return Some(KdlValue::String(text.to_owned()));
    }
    match literal {
        "#true" => return Some(KdlValue::Bool(true)),
        "#false" => return Some(KdlValue::Bool(false)),
        _ => {}
    }
    let digits = literal.strip_prefix('-').unwrap_or(literal);
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    // The crate reads each run of digits as an unsigned 128-bit integer: longer runs (more
    // than 38 digits) are its errors, so they leave the subset.
    let decimal = |part: &str| !part.is_empty() && part.len() <= 38 && part.bytes().all(|byte| byte.is_ascii_digit());
    if !decimal(whole) {
        return None;
    }
    match fraction {
        None => literal.parse::<i128>().ok().map(KdlValue::Integer),
        Some(fraction) if decimal(fraction) => literal.parse::<f64>().ok().filter(|number| number.is_finite()).map(KdlValue::Float),
        Some(_) => None,
    }
}
