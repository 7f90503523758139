//! Escaping of text into the languages generated files are written in. Every string that
//! comes from a policy and reaches Lua or a shell script goes through exactly one function
//! here, so an escape cannot be forgotten at one call site and done right at another.
//!
//! Invariant: the output of each function is a single literal of its language that evaluates
//! back to the input, whatever bytes the input holds (quotes, newlines, `]]`, NUL).

/// `text` as a Lua string literal (double-quoted). Everything that is not printable ASCII, or
/// is a quote or backslash, is written as a decimal escape `\ddd`, which Lua 5.1 through 5.4
/// all read the same way; so no input can close the literal or start a comment.
pub fn lua_string(text: &str) -> String {
    let mut literal = String::with_capacity(text.len() + 2);
    literal.push('"');
    for byte in text.bytes() {
        match byte {
            b'"' | b'\\' => {
                literal.push('\\');
                literal.push(byte as char);
            }
            0x20..=0x7e => literal.push(byte as char),
            // Three digits always, so a following digit cannot extend the escape.
            _ => literal.push_str(&format!("\\{byte:03}")),
        }
    }
    literal.push('"');
    literal
}

/// `text` as one POSIX shell word: single-quoted, with each `'` written as `'\''`. Inside
/// single quotes the shell expands nothing, so `$`, backticks and newlines stay literal.
pub fn shell_word(text: &str) -> String {
    let safe = !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_.,/:=@%+".contains(&byte));
    if safe {
        return text.to_owned();
    }
    shell_quote(text)
}

/// `text` always single-quoted (`'a'\''b'` for `a'b`), for commands printed where a quoted
/// word reads more plainly than a bare one.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shell_quotes_survive_quotes() {
        assert_eq!(shell_quote("a'b; rm -rf /"), "'a'\\''b; rm -rf /'");
    }

    /// Reads a literal made by [`lua_string`] back, the way Lua's lexer does.
    fn unlua(literal: &str) -> Vec<u8> {
        let inner = &literal.as_bytes()[1..literal.len() - 1];
        let mut bytes = Vec::new();
        let mut index = 0;
        while index < inner.len() {
            if inner[index] == b'\\' {
                let next = inner[index + 1];
                if next.is_ascii_digit() {
                    let digits = std::str::from_utf8(&inner[index + 1..index + 4]).unwrap_or("0");
                    bytes.push(digits.parse::<u8>().unwrap_or(0));
                    index += 4;
                } else {
                    bytes.push(next);
                    index += 2;
                }
            } else {
                assert_ne!(inner[index], b'"', "an unescaped quote would close the literal");
                assert!(inner[index] >= 0x20 && inner[index] < 0x7f, "raw control or non-ASCII byte in {literal}");
                bytes.push(inner[index]);
                index += 1;
            }
        }
        bytes
    }

    #[test]
    fn lua_escapes_what_could_end_the_literal() {
        assert_eq!(lua_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(lua_string("x\n]]--"), r#""x\010]]--""#);
        assert_eq!(lua_string("\u{0}1"), r#""\0001""#);
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("nvl-a"), "nvl-a");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's $(x)"), r#"'it'\''s $(x)'"#);
        assert_eq!(shell_word(""), "''");
    }

    proptest! {
        #[test]
        fn lua_literals_read_back_to_their_input(text in ".*") {
            prop_assert_eq!(unlua(&lua_string(&text)), text.as_bytes().to_vec());
        }

        #[test]
        fn quoted_shell_words_hold_no_unquoted_quote(text in ".*") {
            let word = shell_word(&text);
            if word.starts_with('\'') {
                prop_assert_eq!(word[1..word.len() - 1].replace("'\\''", ""), text.replace('\'', ""));
            }
        }
    }
}
