//! The score-expression language: the strings in `score` blocks (`expr`, `filter`,
//! `penalty when=`), parsed and type-checked here; `placid-targets` evaluates the typed tree
//! natively and compiles it to Wasm.
//!
//! Pipeline: [`lexer`] -> [`syntax`] (untyped tree with byte ranges) -> [`check`] (typed
//! [`ast::Node`] tree, features resolved against the [`catalogue`]). Invariant: every
//! diagnostic points inside the KDL string (E013 for syntax, E014 for types), and a returned
//! [`Expr`] is well typed, so back ends never fail on it.

pub mod ast;
pub mod catalogue;
mod check;
pub mod lexer;
pub mod syntax;

use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::span::Span;

pub use ast::{Arith, Compare, Function, Logic, Node};
pub use catalogue::{Category, Entry, Interner, JobParam, NodeFeature, STATIC_UTILIZATION, Type};

/// A parsed, type-checked expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The source text.
    pub text: String,
    /// The span of the text.
    pub span: Span,
    /// The typed tree.
    pub root: Node,
    /// Its type (the type its context expected).
    pub ty: Type,
}

impl Expr {
    /// The node features the expression reads, in catalogue order, without repeats.
    pub fn node_features(&self) -> Vec<NodeFeature> {
        let mut features = Vec::new();
        self.root.walk(&mut |node| {
            if let Node::Feature(feature) = node {
                features.push(*feature);
            }
        });
        features.sort();
        features.dedup();
        features
    }

    /// The job parameters the expression reads, in catalogue order, without repeats.
    pub fn job_params(&self) -> Vec<JobParam> {
        let mut params = Vec::new();
        self.root.walk(&mut |node| {
            if let Node::Param(param) = node {
                params.push(*param);
            }
        });
        params.sort();
        params.dedup();
        params
    }
}

/// Parses and type-checks `text` as an expression of type `expected`. `span` is the span of
/// the text itself (the content of the KDL string, without quotes), so diagnostics can point
/// at single tokens.
pub fn parse(text: &str, span: Span, expected: Type) -> Result<Expr, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    let syntax = match syntax::parse(text) {
        Ok(syntax) => syntax,
        Err(error) => {
            let at = span.sub(error.range.0, error.range.1);
            diagnostics.push(
                Diagnostic::error(Code::ExpressionSyntax, at, error.message)
                    .label(error.label)
                    .help("expressions use numbers, `node.*` and `job.*` features, `+ - * /`, comparisons, `&& || !`, parentheses and functions such as `max(a, b)` (see docs/expressions.md)"),
            );
            return Err(diagnostics);
        }
    };
    let checked = check::check(&syntax, span, &mut diagnostics);
    match checked {
        Some((root, ty)) if ty == expected => Ok(Expr { text: text.to_owned(), span, root, ty }),
        Some((_, ty)) => {
            let help = match expected {
                Type::Bool => "a condition compares values, for example `node.gpus_free >= job.gpus`",
                _ => "a score is a number, for example `node.cost_per_gpu_hour`",
            };
            diagnostics.push(
                Diagnostic::error(Code::ExpressionType, span, format!("expected a {}, found a {}", expected.as_str(), ty.as_str()))
                    .label(format!("this is a {}", ty.as_str()))
                    .help(help),
            );
            Err(diagnostics)
        }
        None => Err(diagnostics),
    }
}

#[cfg(test)]
mod tests;
