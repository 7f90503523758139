//! Tokens of the score-expression language, with byte offsets into the expression text.
//!
//! Invariant: lexing never fails; a character that starts no token becomes
//! [`TokenKind::Invalid`] so the parser reports it with its exact position.

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A number literal (`0.8`, `1e3`).
    Number(f64),
    /// An identifier (`node`, `gpus_free`, `max`, `high`).
    Ident(String),
    /// `.`
    Dot,
    /// `,`
    Comma,
    /// `(`
    LeftParen,
    /// `)`
    RightParen,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `!`
    Bang,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Less,
    /// `<=`
    LessEq,
    /// `>`
    Greater,
    /// `>=`
    GreaterEq,
    /// A character (or malformed number) that starts no token.
    Invalid(String),
    /// The end of the text.
    End,
}

/// A token and its byte range in the expression text.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// Splits `text` into tokens, ending with [`TokenKind::End`].
pub fn lex(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut position = 0;
    while position < bytes.len() {
        let byte = bytes[position];
        if byte.is_ascii_whitespace() {
            position += 1;
            continue;
        }
        let start = position;
        let two = bytes.get(position..position + 2);
        let (kind, length) = match (byte, two) {
            (_, Some(b"&&")) => (TokenKind::AndAnd, 2),
            (_, Some(b"||")) => (TokenKind::OrOr, 2),
            (_, Some(b"==")) => (TokenKind::EqEq, 2),
            (_, Some(b"!=")) => (TokenKind::NotEq, 2),
            (_, Some(b"<=")) => (TokenKind::LessEq, 2),
            (_, Some(b">=")) => (TokenKind::GreaterEq, 2),
            (b'.', _) if !bytes.get(position + 1).is_some_and(u8::is_ascii_digit) => (TokenKind::Dot, 1),
            (b',', _) => (TokenKind::Comma, 1),
            (b'(', _) => (TokenKind::LeftParen, 1),
            (b')', _) => (TokenKind::RightParen, 1),
            (b'+', _) => (TokenKind::Plus, 1),
            (b'-', _) => (TokenKind::Minus, 1),
            (b'*', _) => (TokenKind::Star, 1),
            (b'/', _) => (TokenKind::Slash, 1),
            (b'!', _) => (TokenKind::Bang, 1),
            (b'<', _) => (TokenKind::Less, 1),
            (b'>', _) => (TokenKind::Greater, 1),
            (b'0'..=b'9' | b'.', _) => number(text, position),
            (b'a'..=b'z' | b'A'..=b'Z' | b'_', _) => {
                let length = bytes[position..].iter().take_while(|byte| byte.is_ascii_alphanumeric() || **byte == b'_').count();
                (TokenKind::Ident(text[position..position + length].to_owned()), length)
            }
            _ => {
                let length = text[position..].chars().next().map_or(1, char::len_utf8);
                (TokenKind::Invalid(text[position..position + length].to_owned()), length)
            }
        };
        position += length;
        tokens.push(Token { kind, start, end: position });
    }
    tokens.push(Token { kind: TokenKind::End, start: text.len(), end: text.len() });
    tokens
}

/// A number literal: digits, an optional fraction and an optional exponent.
fn number(text: &str, start: usize) -> (TokenKind, usize) {
    let bytes = text.as_bytes();
    let digits = |from: usize| bytes[from..].iter().take_while(|byte| byte.is_ascii_digit()).count();
    let mut end = start + digits(start);
    if bytes.get(end) == Some(&b'.') {
        end += 1 + digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let exponent_digits = digits(end + 1 + sign);
        if exponent_digits > 0 {
            end += 1 + sign + exponent_digits;
        }
    }
    // A letter glued to a number (`3m`, `900GB`) is a unit, which expressions do not have.
    let glued = bytes[end..].iter().take_while(|byte| byte.is_ascii_alphanumeric() || **byte == b'_').count();
    let literal = &text[start..end + glued];
    match (glued, literal.parse::<f64>()) {
        (0, Ok(value)) if value.is_finite() => (TokenKind::Number(value), end - start),
        _ => (TokenKind::Invalid(literal.to_owned()), end + glued - start),
    }
}
