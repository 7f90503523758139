//! The score-expression language: parsed and type-checked here, compiled to Wasm and
//! evaluated natively by `placid-targets`.
//!
//! PLACEHOLDER CONTRACT (to be replaced by the full implementation): `parse` takes the text of
//! a KDL string, the span of that text (content only, without quotes) and the type the context
//! expects, and returns the typed expression or every diagnostic found.

use crate::diag::Diagnostics;
use crate::span::Span;

/// The type an expression must have in its context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A number (f64).
    Number,
    /// A condition.
    Bool,
}

/// A parsed, type-checked expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The source text.
    pub text: String,
    /// The span of the text.
    pub span: Span,
}

/// Parses and type-checks `text` as an expression of type `expected`.
pub fn parse(text: &str, span: Span, expected: Type) -> Result<Expr, Diagnostics> {
    let _ = expected;
    Ok(Expr { text: text.to_owned(), span })
}
