//! Scoring rules (`score` with `prefer`, `expr`, `filter` and `penalty`): the typed
//! expressions each Wasm plugin and the engine evaluate to place a stage's jobs.

use crate::expr::Expr;
use crate::name::Name;
use crate::span::Span;

/// Which end of a score is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Lower scores win.
    Min,
    /// Higher scores win.
    Max,
}

impl Direction {
    /// The keyword in policies (`prefer "min"`) and in the plugin's meta.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Min => "min",
            Direction::Max => "max",
        }
    }
}

/// A named predicate of a score: nodes failing it are filtered out.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    /// The predicate's name, reported when it fails.
    pub name: Name,
    /// A boolean expression.
    pub expr: Expr,
}

/// A penalty added (for `min`) or subtracted (for `max`) when its condition holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Penalty {
    /// Where it is declared.
    pub span: Span,
    /// Amount, in score units.
    pub amount: f64,
    /// A boolean expression.
    pub when: Expr,
}

/// A scoring rule, compiled to a Wasm plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// The score's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// Which end is better.
    pub direction: Direction,
    /// The numeric score of a node for a job.
    pub expr: Expr,
    /// Predicates, in declaration order (bit `i` of the failure mask is filter `i`).
    pub filters: Vec<Filter>,
    /// Penalties, in declaration order.
    pub penalties: Vec<Penalty>,
}
