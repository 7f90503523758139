//! Canonical formatting of placid files (`placid fmt`). The layout is fixed (one node per
//! line, four-space indentation, one space between entries, `key=value` without spaces,
//! children in braces, at most one blank line between nodes), while what the author wrote is
//! kept: comments, and each value exactly as written (`(usd)3.10` stays `3.10`, quoting
//! stays as it was). Formatting never changes what a file means.

use std::fmt::Write as _;

use kdl::{KdlDocument, KdlEntry, KdlNode};

use crate::diag::Diagnostics;
use crate::span::FileId;
use crate::syntax;

const INDENT: &str = "    ";

/// Formats `text`; returns the syntax diagnostics when it does not parse (formatting a broken
/// file would guess).
pub fn format(file: FileId, text: &str) -> Result<String, Diagnostics> {
    let (document, diagnostics) = syntax::parse(file, text);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let mut out = String::new();
    write_document(&mut out, &document, 0);
    if let Some(format) = document.format() {
        write_comments(&mut out, &format.trailing, 0, true);
    }
    let trimmed = out.trim_end_matches('\n');
    let mut result = trimmed.trim_start_matches('\n').to_owned();
    result.push('\n');
    Ok(result)
}

fn write_document(out: &mut String, document: &KdlDocument, depth: usize) {
    for (index, node) in document.nodes().iter().enumerate() {
        write_node(out, node, depth, index == 0);
    }
}

/// Comment lines (and up to one blank line) out of a run of whitespace and comments.
fn write_comments(out: &mut String, whitespace: &str, depth: usize, allow_blank: bool) {
    let mut blank_pending = false;
    let mut lines = whitespace.split('\n').peekable();
    let mut seen_content = false;
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            // A blank line is a line break followed by another one: the first segment ends the
            // previous node and is not blank.
            if seen_content || lines.peek().is_some() {
                blank_pending = seen_content || blank_pending || line.is_empty() && lines.peek().is_some();
            }
            continue;
        }
        if blank_pending && allow_blank && !out.is_empty() && !out.ends_with("{\n") && !out.ends_with("\n\n") {
            out.push('\n');
        }
        blank_pending = false;
        seen_content = true;
        for _ in 0..depth {
            out.push_str(INDENT);
        }
        out.push_str(trimmed);
        out.push('\n');
    }
    if blank_pending && allow_blank && !out.is_empty() && !out.ends_with("{\n") && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

fn blank_lines_before(leading: &str) -> bool {
    leading.matches('\n').count() >= 2 || leading.trim_start_matches([' ', '\t']).starts_with('\n')
}

fn write_node(out: &mut String, node: &KdlNode, depth: usize, first: bool) {
    let format = node.format();
    let leading = format.map(|format| format.leading.as_str()).unwrap_or_default();
    if !first && blank_lines_before(leading) && !out.ends_with("\n\n") && !out.ends_with("{\n") {
        out.push('\n');
    }
    write_comments(out, leading, depth, false);
    for _ in 0..depth {
        out.push_str(INDENT);
    }
    if let Some(ty) = node.ty() {
        let _ = write!(out, "({})", ty);
    }
    let _ = write!(out, "{}", node.name());
    for entry in node.entries() {
        out.push(' ');
        write_entry(out, entry);
    }
    let inline_comment = format
        .map(|format| format!("{}{}{}", format.before_terminator, format.terminator, format.trailing))
        .map(|text| text.lines().map(str::trim).find(|line| line.starts_with("//")).map(str::to_owned))
        .unwrap_or_default();
    match node.children() {
        Some(children) if let Some(compact) = compact_child(children, out.len() - out.rfind('\n').map_or(0, |index| index + 1)) => {
            out.push_str(" { ");
            out.push_str(&compact);
            out.push_str(" }");
        }
        Some(children) if !children.nodes().is_empty() => {
            out.push_str(" {\n");
            write_document(out, children, depth + 1);
            if let Some(children_format) = children.format() {
                write_comments(out, &children_format.trailing, depth + 1, false);
            }
            for _ in 0..depth {
                out.push_str(INDENT);
            }
            out.push('}');
        }
        Some(_) => out.push_str(" {}"),
        None => {}
    }
    if let Some(comment) = inline_comment {
        out.push(' ');
        out.push_str(&comment);
    }
    out.push('\n');
}

/// The longest line a compact block may make.
const COMPACT_WIDTH: usize = 100;

/// A block with exactly one child that has no children and no comments is written on the
/// parent's line (`pool "x" { select arch="x86_64" }`) when it fits in [`COMPACT_WIDTH`].
fn compact_child(children: &KdlDocument, line_so_far: usize) -> Option<String> {
    let [child] = children.nodes() else { return None };
    let has_comment = |text: &str| text.contains("//") || text.contains("/*");
    let format = child.format();
    let commented = format.is_some_and(|format| {
        has_comment(&format.leading)
            || has_comment(&format.before_terminator)
            || has_comment(&format.terminator)
            || has_comment(&format.trailing)
    }) || children.format().is_some_and(|format| has_comment(&format.trailing));
    if child.children().is_some() || commented {
        return None;
    }
    let mut text = String::new();
    if let Some(ty) = child.ty() {
        let _ = write!(text, "({ty})");
    }
    let _ = write!(text, "{}", child.name());
    for entry in child.entries() {
        text.push(' ');
        write_entry(&mut text, entry);
    }
    (line_so_far + text.len() + 6 <= COMPACT_WIDTH).then_some(text)
}

fn write_entry(out: &mut String, entry: &KdlEntry) {
    if let Some(name) = entry.name() {
        let _ = write!(out, "{name}=");
    }
    if let Some(ty) = entry.ty() {
        let _ = write!(out, "({ty})");
    }
    match entry.format().map(|format| format.value_repr.trim()).filter(|repr| !repr.is_empty()) {
        Some(repr) => out.push_str(repr),
        None => {
            let _ = write!(out, "{}", entry.value());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        let formatted = format(FileId(0), input).expect("formats");
        assert_eq!(formatted, expected);
        assert_eq!(format(FileId(0), &formatted).expect("formats again"), formatted, "formatting is idempotent");
    }

    #[test]
    fn lays_out_nodes_and_keeps_values_and_comments() {
        check(
            "tier   \"P1\"   {  priority 500 ; preemption window=\"3m\"   mode=\"requeue\"; backfill #true }\n\n\n// pools\npool \"x\" {\n  select arch=\"x86_64\" // trailing\n}\ncost gpu-hour=(usd)3.10\n",
            "tier \"P1\" {\n    priority 500\n    preemption window=\"3m\" mode=\"requeue\"\n    backfill #true\n}\n\n// pools\npool \"x\" {\n    select arch=\"x86_64\" // trailing\n}\ncost gpu-hour=(usd)3.10\n",
        );
        check("pool \"x\" {\n    select arch=\"x86_64\"\n}\n", "pool \"x\" { select arch=\"x86_64\" }\n");
    }

    #[test]
    fn refuses_broken_files() {
        assert!(format(FileId(0), "tier \"P1\" {").is_err());
    }
}
