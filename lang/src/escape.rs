//! The one escaping function per medium for text placid did not write: names from a trace
//! or a policy, messages quoting them, paths. Every report that puts such text into Markdown
//! (a pull-request comment), HTML or a terminal goes through these, so a job named
//! `"\n## ✅ LGTM"`, `![](https://tracker)`, `@everyone` or `"\x1b]0;owned\x07"` shows as
//! that text and does nothing.

use std::borrow::Cow;

/// Whether a terminal could act on `character` rather than show it: C0 and C1 controls
/// (ESC starts ANSI sequences, U+009B is a one-character CSI), DEL, and the bidirectional
/// overrides and isolates that reorder what is shown (CVE-2021-42574).
fn acts_on_terminal(character: char) -> bool {
    character.is_control() || matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// `text` for a terminal, on one line: every character a terminal would act on, newlines
/// included, is written as its Rust escape (`\u{1b}`, `\n`).
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if acts_on_terminal(character) {
            escaped.extend(character.escape_default());
        } else {
            escaped.push(character);
        }
    }
    Cow::Owned(escaped)
}

/// `text` (a source file shown under a diagnostic) with every character a terminal would act
/// on, other than line ends and tabs, replaced by as many `?` as it has bytes: byte offsets,
/// and so the spans into the text, stay valid.
pub fn terminal_keeping_offsets(text: &str) -> Cow<'_, str> {
    let neutral = |character: char| matches!(character, '\n' | '\r' | '\t') || !acts_on_terminal(character);
    if text.chars().all(neutral) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if neutral(character) {
            escaped.push(character);
        } else {
            escaped.extend(std::iter::repeat_n('?', character.len_utf8()));
        }
    }
    Cow::Owned(escaped)
}

/// `text` as inert Markdown prose on one line (GitHub Flavored Markdown): the characters
/// that open emphasis, code, links, images, headings, tables, strikethrough and math are
/// backslash-escaped, as are the `:` of `scheme://` and the `.` of `www.` (no autolink); `<`,
/// `>` and `&` become entities (no HTML); a zero-width space follows each `@` (no mention);
/// and controls and newlines are written as escapes (no new line, so no heading or list).
pub fn markdown(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 16);
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '@' => escaped.push_str("@\u{200B}"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' | '$' => {
                escaped.push('\\');
                escaped.push(character);
            }
            ':' if characters.peek() == Some(&'/') => escaped.push_str("\\:"),
            '.' if escaped.len() >= 3 && escaped.get(escaped.len() - 3..).is_some_and(|end| end.eq_ignore_ascii_case("www")) => {
                escaped.push_str("\\.")
            }
            control if acts_on_terminal(control) => {
                for part in control.escape_default() {
                    if part.is_ascii_punctuation() {
                        escaped.push('\\');
                    }
                    escaped.push(part);
                }
            }
            other => escaped.push(other),
        }
    }
    escaped
}

/// `text` as one Markdown inline code span that it cannot break out of: backticks become
/// `'` (a code span has no escape for them), a pipe is escaped so a table cell stays one cell,
/// and controls and newlines are written as escapes. Inside code, GitHub makes no link,
/// image, mention or HTML.
pub fn markdown_code(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    escaped.push('`');
    for character in text.chars() {
        match character {
            '`' => escaped.push('\''),
            '|' => escaped.push_str("\\|"),
            control if acts_on_terminal(control) => escaped.extend(control.escape_default()),
            other => escaped.push(other),
        }
    }
    escaped.push('`');
    escaped
}

/// `text` for HTML or XML content and quoted attributes: markup characters and both quotes
/// become entities, and characters XML 1.0 cannot hold (controls other than tab, newline
/// and carriage return, U+FFFE and U+FFFF) become U+FFFD.
pub fn html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\t' | '\n' | '\r' => escaped.push(character),
            control if (control as u32) < 0x20 || control == '\u{7F}' || matches!(control, '\u{FFFE}' | '\u{FFFF}') => {
                escaped.push('\u{FFFD}')
            }
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORGED: &str = "x\n## ✅ LGTM\n![t](https://tracker.example/p.gif) [docs](https://evil.example) @everyone <img src=x> `|` \u{1b}[31mred\u{1b}]0;title\u{7}\u{9b}2J \u{202E}cba";

    #[test]
    fn markdown_prose_is_inert() {
        let escaped = markdown(FORGED);
        assert!(!escaped.contains('\n'), "{escaped}");
        for live in ["## ", "![", "](", "[docs]", "@everyone", "<img", "`|`", "\u{1b}", "\u{9b}", "\u{202E}", "https://"] {
            assert!(!escaped.contains(live), "{live:?} survives in {escaped:?}");
        }
        assert!(escaped.contains("\\#\\# ✅ LGTM"), "{escaped}");
        assert_eq!(markdown("tier P1: window 3m, requeue → 5m"), "tier P1: window 3m, requeue → 5m");
        assert_eq!(markdown("see www.evil.example"), "see www\\.evil.example");
    }

    #[test]
    fn a_markdown_code_span_cannot_be_left() {
        let escaped = markdown_code(FORGED);
        assert_eq!(escaped.matches('`').count(), 2, "{escaped}");
        assert!(escaped.starts_with('`') && escaped.ends_with('`'));
        assert!(!escaped.contains('\n') && !escaped.contains('\u{1b}') && !escaped.contains(" | "), "{escaped}");
        assert!(!escaped.replace("\\|", "").contains('|'), "{escaped}");
    }

    #[test]
    fn terminal_text_acts_on_nothing() {
        let escaped = terminal(FORGED);
        assert!(!escaped.chars().any(acts_on_terminal), "{escaped:?}");
        assert!(escaped.contains("\\u{1b}[31mred") && escaped.contains("\\n## ✅"), "{escaped}");
        assert!(matches!(terminal("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn source_text_keeps_its_offsets() {
        let escaped = terminal_keeping_offsets(FORGED);
        assert_eq!(escaped.len(), FORGED.len());
        assert_eq!(escaped.lines().count(), FORGED.lines().count());
        assert!(!escaped.chars().any(|character| acts_on_terminal(character) && character != '\n'), "{escaped:?}");
    }

    #[test]
    fn html_holds_no_markup() {
        assert_eq!(html("<a href=\"x\">'&'</a>\u{1}"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\u{FFFD}");
    }
}
