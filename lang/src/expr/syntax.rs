//! The untyped syntax tree of an expression and its parser (precedence climbing).
//!
//! Invariant: every node carries the byte range of the text it was parsed from, so the type
//! checker can point at the exact operand at fault. Parsing stops at the first syntax error:
//! expressions are one line long and later errors would mostly be echoes of the first.

use super::lexer::{Token, TokenKind, lex};

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!c`
    Not,
}

/// A binary operator, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    fn from_token(kind: &TokenKind) -> Option<BinaryOp> {
        Some(match kind {
            TokenKind::Plus => BinaryOp::Add,
            TokenKind::Minus => BinaryOp::Sub,
            TokenKind::Star => BinaryOp::Mul,
            TokenKind::Slash => BinaryOp::Div,
            TokenKind::Less => BinaryOp::Lt,
            TokenKind::LessEq => BinaryOp::Le,
            TokenKind::Greater => BinaryOp::Gt,
            TokenKind::GreaterEq => BinaryOp::Ge,
            TokenKind::EqEq => BinaryOp::Eq,
            TokenKind::NotEq => BinaryOp::Ne,
            TokenKind::AndAnd => BinaryOp::And,
            TokenKind::OrOr => BinaryOp::Or,
            _ => return None,
        })
    }

    /// Binding strength: `||` < `&&` < comparisons < `+ -` < `* /`.
    fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne => 3,
            BinaryOp::Add | BinaryOp::Sub => 4,
            BinaryOp::Mul | BinaryOp::Div => 5,
        }
    }

    fn is_comparison(self) -> bool {
        self.precedence() == 3
    }
}

/// A parsed, untyped expression node.
#[derive(Clone, Debug, PartialEq)]
pub struct Syntax {
    /// What it is.
    pub kind: SyntaxKind,
    /// First byte in the expression text.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// The kinds of syntax nodes.
#[derive(Clone, Debug, PartialEq)]
pub enum SyntaxKind {
    /// A number literal.
    Number(f64),
    /// A dotted name: `node.gpus_free`, `job.comm`, `high`, `true`.
    Path(Vec<String>),
    /// A unary operation.
    Unary(UnaryOp, Box<Syntax>),
    /// A binary operation.
    Binary(BinaryOp, Box<Syntax>, Box<Syntax>),
    /// A function call.
    Call {
        /// The function's name.
        name: String,
        /// Its byte range.
        name_range: (usize, usize),
        /// The arguments.
        args: Vec<Syntax>,
    },
}

/// A syntax error: a message, the byte range at fault, and a label.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// One sentence.
    pub message: String,
    /// The byte range at fault.
    pub range: (usize, usize),
    /// What is there, in a few words.
    pub label: String,
}

/// How deep parentheses, unary operators and calls may nest; deeper input is refused
/// instead of overflowing the stack (the checker, the evaluator and the emitter all recurse).
pub const MAX_DEPTH: usize = 64;

/// How many tokens an expression may have. Operator chains build trees as deep as they are
/// long, so this also bounds the recursion of every later stage.
pub const MAX_TOKENS: usize = 512;

/// Parses `text` into a syntax tree.
pub fn parse(text: &str) -> Result<Syntax, SyntaxError> {
    let tokens = lex(text);
    if tokens.len() > MAX_TOKENS {
        let start = tokens.get(MAX_TOKENS).map_or(0, |token| token.start);
        return Err(SyntaxError {
            message: format!("the expression is longer than {MAX_TOKENS} tokens"),
            range: (start, text.len()),
            label: "too long".to_owned(),
        });
    }
    let mut parser = Parser { tokens, position: 0, depth: 0 };
    let tree = parser.expression(0)?;
    let token = parser.peek();
    match token.kind {
        TokenKind::End => Ok(tree),
        TokenKind::RightParen => Err(parser.error_at(token.start, token.end, "unbalanced `)`", "no matching `(`")),
        _ => Err(parser.unexpected("an operator or the end of the expression")),
    }
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Token {
        let last = self.tokens.len().saturating_sub(1);
        self.tokens.get(self.position.min(last)).cloned().unwrap_or(Token { kind: TokenKind::End, start: 0, end: 0 })
    }

    fn advance(&mut self) -> Token {
        let token = self.peek();
        if self.position + 1 < self.tokens.len() {
            self.position += 1;
        }
        token
    }

    fn error_at(&self, start: usize, end: usize, message: &str, label: &str) -> SyntaxError {
        SyntaxError { message: message.to_owned(), range: (start, end), label: label.to_owned() }
    }

    fn unexpected(&self, expected: &str) -> SyntaxError {
        let token = self.peek();
        let (message, label) = match &token.kind {
            TokenKind::End => (format!("the expression ends where {expected} was expected"), "expression ends here".to_owned()),
            TokenKind::Invalid(text) if text.starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
                (format!("`{text}` is not a plain number (expressions have no units)"), "not a number".to_owned())
            }
            TokenKind::Invalid(text) => (format!("unexpected character `{text}`"), "not part of the expression language".to_owned()),
            _ => (format!("expected {expected}"), "unexpected token".to_owned()),
        };
        SyntaxError { message, range: (token.start, token.end.max(token.start + 1)), label }
    }

    fn nest(&mut self, start: usize) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(start, start + 1, &format!("the expression nests deeper than {MAX_DEPTH} levels"), "too deep"));
        }
        Ok(())
    }

    fn expression(&mut self, min_precedence: u8) -> Result<Syntax, SyntaxError> {
        let mut left = self.unary()?;
        while let Some(op) = BinaryOp::from_token(&self.peek().kind) {
            let precedence = op.precedence();
            if precedence < min_precedence.max(1) {
                break;
            }
            self.advance();
            let right = self.expression(precedence + 1)?;
            if op.is_comparison()
                && let Some(next) = BinaryOp::from_token(&self.peek().kind).filter(|next| next.is_comparison())
            {
                let token = self.peek();
                return Err(self.error_at(
                    token.start,
                    token.end,
                    &format!("comparisons do not chain: `a {} b {} c`", op.as_str(), next.as_str()),
                    "second comparison",
                ));
            }
            let (start, end) = (left.start, right.end);
            left = Syntax { kind: SyntaxKind::Binary(op, Box::new(left), Box::new(right)), start, end };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Syntax, SyntaxError> {
        let token = self.peek();
        let op = match token.kind {
            TokenKind::Minus => UnaryOp::Neg,
            TokenKind::Bang => UnaryOp::Not,
            _ => return self.primary(),
        };
        self.advance();
        self.nest(token.start)?;
        let operand = self.unary()?;
        self.depth -= 1;
        let end = operand.end;
        Ok(Syntax { kind: SyntaxKind::Unary(op, Box::new(operand)), start: token.start, end })
    }

    fn primary(&mut self) -> Result<Syntax, SyntaxError> {
        let token = self.peek();
        match token.kind {
            TokenKind::Number(value) => {
                self.advance();
                Ok(Syntax { kind: SyntaxKind::Number(value), start: token.start, end: token.end })
            }
            TokenKind::LeftParen => {
                self.advance();
                self.nest(token.start)?;
                let inner = self.expression(0)?;
                self.depth -= 1;
                let close = self.peek();
                if close.kind != TokenKind::RightParen {
                    return Err(self.error_at(token.start, token.end, "unclosed `(`", "this parenthesis is never closed"));
                }
                self.advance();
                Ok(Syntax { start: token.start, end: close.end, ..inner })
            }
            TokenKind::Ident(name) => {
                self.advance();
                if self.peek().kind == TokenKind::LeftParen {
                    return self.call(name, token.start, token.end);
                }
                let mut segments = vec![name];
                let mut end = token.end;
                while self.peek().kind == TokenKind::Dot {
                    self.advance();
                    let segment = self.peek();
                    let TokenKind::Ident(text) = segment.kind else {
                        return Err(self.unexpected("a name after `.`"));
                    };
                    self.advance();
                    segments.push(text);
                    end = segment.end;
                }
                Ok(Syntax { kind: SyntaxKind::Path(segments), start: token.start, end })
            }
            _ => Err(self.unexpected("a number, a feature such as `node.gpus_free`, a function call or `(`")),
        }
    }

    fn call(&mut self, name: String, start: usize, name_end: usize) -> Result<Syntax, SyntaxError> {
        self.advance();
        self.nest(start)?;
        let mut args = Vec::new();
        if self.peek().kind != TokenKind::RightParen {
            loop {
                args.push(self.expression(0)?);
                match self.peek().kind {
                    TokenKind::Comma => {
                        self.advance();
                    }
                    TokenKind::RightParen => break,
                    _ => return Err(self.unexpected("`,` or `)`")),
                }
            }
        }
        self.depth -= 1;
        let close = self.advance();
        Ok(Syntax { kind: SyntaxKind::Call { name, name_range: (start, name_end), args }, start, end: close.end })
    }
}
