//! KDL sources to syntax trees. Parsing never fails: a file that is not valid KDL yields an
//! empty document plus its diagnostics, so the rest of the project is still checked.
//!
//! Every KDL file placid reads (policy, inventory, `placid fmt`) goes through [`parse`], which
//! first measures how deeply the text nests: kdl's parser recurses once per children block
//! and once per piece of a block comment, so a small file of deep braces would overflow the
//! stack (an abort, not an error) before any diagnostic could be made.

pub mod plain;

use kdl::KdlDocument;

use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::span::{FileId, Span};

/// The deepest nesting of children blocks placid parses. placid's own files nest at most
/// three levels (an inventory's node, gpu, nvlink); 64 leaves room for anything hand-written
/// while keeping the parser's recursion within a 2 MiB stack (a spawned thread's: `placid
/// diff` compiles its revisions on two, tests run on them). Measured in a debug build, the
/// parser overflows such a stack at about 300 levels.
pub const MAX_NESTING: usize = 64;

/// The most pieces (runs of text without `*` or `/`, a lone `*` or `/`, the `/*` and `*/`
/// of nested comments) one block comment may have: kdl's parser recurses once per piece.
/// Measured like [`MAX_NESTING`], it overflows at about 1,500 pieces of nested comments; a
/// hundred-line license header in ` * ` style is about 200 pieces.
pub const MAX_COMMENT_PIECES: usize = 256;

/// Converts a miette span of `file` into a placid span.
pub fn span_of(file: FileId, span: miette::SourceSpan) -> Span {
    Span::new(file, span.offset(), span.offset() + span.len())
}

/// Parses `text` (file `file`) as KDL 2.0.
pub fn parse(file: FileId, text: &str) -> (KdlDocument, Diagnostics) {
    let mut diagnostics = Diagnostics::new();
    if let Some(too_deep) = too_deep(file, text) {
        diagnostics.push(too_deep);
        return (KdlDocument::new(), diagnostics);
    }
    match KdlDocument::parse_v2(text) {
        Ok(document) => (document, diagnostics),
        Err(error) => {
            for item in &error.diagnostics {
                let message = item.message.clone().unwrap_or_else(|| "invalid KDL".to_owned());
                let found = text.get(item.span.offset()..item.span.offset() + item.span.len()).unwrap_or_default();
                let diagnostic = Diagnostic::error(Code::KdlSyntax, span_of(file, item.span), message)
                    .label(item.label.clone().unwrap_or_else(|| "here".to_owned()))
                    .maybe_help(kdl_one_habit(found).or_else(|| item.help.clone()));
                diagnostics.push(diagnostic);
            }
            if error.diagnostics.is_empty() {
                diagnostics.push(Diagnostic::error(Code::KdlSyntax, Span::new(file, 0, 0), "the file is not valid KDL 2.0"));
            }
            (KdlDocument::new(), diagnostics)
        }
    }
}

/// The help for KDL 1 spellings that KDL 2 refuses, where the parser's own message ("Expected
/// identifier string") does not say what to write instead.
fn kdl_one_habit(found: &str) -> Option<String> {
    match found {
        "true" | "false" | "null" => Some(format!("KDL 2 writes booleans and null with a `#`: `#{found}`")),
        "inf" | "-inf" | "nan" => Some(format!("KDL 2 writes this number with a `#`: `#{found}`")),
        _ => None,
    }
}

/// The error for the first place `text` nests deeper than the parser may recurse, if any. A
/// cheap lexical pre-scan: it skips strings (quoted, multi-line and raw `#"…"#`) and line
/// comments, whose braces do not nest, counts the pieces of block comments, and counts the
/// braces of slashdashed (`/-`) blocks, which the parser still parses. Where the text is
/// not valid KDL the scan may stop early or see less, never more, than the parser would.
fn too_deep(file: FileId, text: &str) -> Option<Diagnostic> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        at = match bytes[at] {
            b'"' => after_string(bytes, at + 1, 0),
            b'#' => {
                let hashes = bytes[at..].iter().take_while(|byte| **byte == b'#').count();
                if bytes.get(at + hashes) == Some(&b'"') { after_string(bytes, at + hashes + 1, hashes) } else { at + hashes }
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => (at..bytes.len()).find(|index| is_newline(bytes, *index)).unwrap_or(bytes.len()),
            b'/' if bytes.get(at + 1) == Some(&b'*') => match after_block_comment(bytes, at) {
                Ok(end) => end,
                Err(piece) => {
                    return Some(
                        Diagnostic::error(
                            Code::NestingTooDeep,
                            Span::new(file, piece, piece + 1),
                            format!("this block comment has more than {MAX_COMMENT_PIECES} parts"),
                        )
                        .label("the comment goes on past here")
                        .help("write long comments as `//` lines"),
                    );
                }
            },
            b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diagnostic::error(
                            Code::NestingTooDeep,
                            Span::new(file, at, at + 1),
                            format!("blocks nest deeper than {MAX_NESTING} levels"),
                        )
                        .label(format!("level {depth}"))
                        .help("placid files nest a few levels; check for unclosed or generated braces"),
                    );
                }
                at + 1
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                at + 1
            }
            _ => at + 1,
        };
    }
    None
}

/// The offset after the string whose content starts at `start`, opened by `hashes` `#` and
/// a `"` (already consumed; a `"""` opening is recognised here). Quoted strings honour `\`
/// escapes and end at a line break (KDL forbids one there; the parser reports it); raw
/// strings have no escapes.
fn after_string(bytes: &[u8], start: usize, hashes: usize) -> usize {
    let multi_line = bytes[start..].starts_with(b"\"\"");
    let content = if multi_line { start + 2 } else { start };
    let closing: Vec<u8> = std::iter::repeat_n(b'"', if multi_line { 3 } else { 1 }).chain(std::iter::repeat_n(b'#', hashes)).collect();
    let mut at = content;
    while at < bytes.len() {
        if bytes[at..].starts_with(&closing) {
            return at + closing.len();
        }
        match bytes[at] {
            b'\\' if hashes == 0 => at += 2,
            _ if !multi_line && is_newline(bytes, at) => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Whether a KDL newline starts at `at`: CR, LF, form feed, NEL, LS or PS.
fn is_newline(bytes: &[u8], at: usize) -> bool {
    let rest = &bytes[at..];
    matches!(rest.first(), Some(b'\r' | b'\n' | b'\x0c'))
        || rest.starts_with("\u{85}".as_bytes())
        || rest.starts_with("\u{2028}".as_bytes())
        || rest.starts_with("\u{2029}".as_bytes())
}

/// The offset after the block comment opening at `start` (nested comments included), or the
/// offset of the piece past [`MAX_COMMENT_PIECES`]. Pieces are counted as kdl's parser takes
/// them: `/*`, `*/`, a lone `*`, a lone `/`, or a run of other bytes.
fn after_block_comment(bytes: &[u8], start: usize) -> Result<usize, usize> {
    let mut open = 0usize;
    let mut pieces = 0usize;
    let mut at = start;
    while at < bytes.len() {
        pieces += 1;
        if pieces > MAX_COMMENT_PIECES {
            return Err(at);
        }
        let rest = &bytes[at..];
        if rest.starts_with(b"/*") {
            open += 1;
            at += 2;
        } else if rest.starts_with(b"*/") {
            open -= 1;
            at += 2;
            if open == 0 {
                return Ok(at);
            }
        } else if rest[0] == b'*' || rest[0] == b'/' {
            at += 1;
        } else {
            at += rest.iter().position(|byte| *byte == b'*' || *byte == b'/').unwrap_or(rest.len());
        }
    }
    Ok(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: FileId = FileId(0);

    fn nested(levels: usize) -> String {
        format!("{}{}", "a {\n".repeat(levels), "}\n".repeat(levels))
    }

    fn codes(text: &str) -> Vec<Code> {
        parse(FILE, text).1.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn kdl_one_booleans_and_null_get_the_kdl_two_spelling() {
        let (_, diagnostics) = parse(FILE, "tier \"a\" {\n    backfill true\n    window null\n}\n");
        let helps: Vec<&str> = diagnostics.iter().filter_map(|diagnostic| diagnostic.help.as_deref()).collect();
        assert!(helps.iter().any(|help| help.contains("`#true`")), "{helps:?}");
        assert!(helps.iter().any(|help| help.contains("`#null`")), "{helps:?}");
        assert_eq!(kdl_one_habit("backfill"), None);
    }

    #[test]
    fn deep_braces_are_an_error_at_the_first_brace_too_deep() {
        assert_eq!(codes(&nested(MAX_NESTING)), []);
        let (_, diagnostics) = parse(FILE, &nested(2000));
        let diagnostic = diagnostics.iter().next().expect("an error");
        assert_eq!(diagnostic.code, Code::NestingTooDeep);
        assert_eq!(diagnostic.primary.span, Span::new(FILE, 4 * MAX_NESTING + 2, 4 * MAX_NESTING + 3));
    }

    #[test]
    fn braces_in_strings_and_comments_do_not_nest() {
        let braces = "{".repeat(MAX_NESTING + 1);
        for text in [
            format!("a \"{braces}\"\n"),
            format!("a \"\\\"{braces}\"\n"),
            format!("a \"\"\"\n{braces}\n\"\"\"\n"),
            format!("a #\"{braces}\"#\n"),
            format!("a ##\"\"#{braces}\"##\n"),
            format!("a #\"\"\"\n\"#{braces}\n\"\"\"#\n"),
            format!("// {braces}\na\n"),
            format!("/* /* {braces} */ */ a\n"),
        ] {
            assert_eq!(too_deep(FILE, &text), None, "{text}");
        }
    }

    #[test]
    fn slashdashed_blocks_still_nest() {
        let text = format!("a /-{}{}\n", "{ b ".repeat(MAX_NESTING + 1), "}".repeat(MAX_NESTING + 1));
        assert_eq!(codes(&text), [Code::NestingTooDeep]);
    }

    #[test]
    fn a_block_comment_of_many_parts_is_an_error() {
        assert_eq!(codes(&format!("/*{}*/ a\n", " *".repeat(MAX_COMMENT_PIECES / 2 - 1))), []);
        assert_eq!(codes(&format!("/*{}*/ a\n", " *".repeat(100_000))), [Code::NestingTooDeep]);
        assert_eq!(codes(&format!("{}a{}", "/*".repeat(100_000), "*/".repeat(100_000))), [Code::NestingTooDeep]);
    }

    /// KDL between the levels of a nesting whose braces do not nest.
    const NOISE: &[&str] = &[
        "\"{\\\"\" ",
        "#\"{\"# ",
        "##\"\"#{\"## ",
        "\\ // {\n",
        "\\ // {\r\n",
        "/* { /* } */ * / */ ",
        "/-x ",
        "\"\"\"\n{\n\"\"\" ",
        "#\"\"\"\n\"#{\n\"\"\"# ",
        "#true ",
    ];

    proptest! {
        #[test]
        fn the_scan_counts_the_levels_the_parser_nests(levels in 0usize..100, noise in proptest::collection::vec(0..NOISE.len(), 0..4)) {
            // Strings and comments between the levels never change the verdict, and every
            // nesting the scan lets through parses (on a test thread's 2 MiB stack).
            let between: String = noise.iter().map(|index| NOISE[*index]).collect();
            let text = format!("{}{}", format!("a {between}{{\n").repeat(levels), "}\n".repeat(levels));
            let diagnostics = codes(&text);
            prop_assert_eq!(diagnostics.contains(&Code::NestingTooDeep), levels > MAX_NESTING);
            prop_assert!(levels > MAX_NESTING || diagnostics.is_empty(), "{text}: {diagnostics:?}");
        }
    }
}
