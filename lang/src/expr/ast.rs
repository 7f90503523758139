//! The typed expression tree that the type checker produces and every back end reads (the
//! native evaluator and the Wasm emitter in `placid-targets`).
//!
//! Invariant: a tree is well typed by construction. Operators are split by operand type
//! (number comparisons vs boolean equality), categorical literals are already their codes,
//! and every call has the arity its function needs, so back ends never re-check anything.

use super::catalogue::{JobParam, NodeFeature};

/// An arithmetic operator on numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arith {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (IEEE: `x / 0` is an infinity or NaN, never an error)
    Div,
}

/// A comparison of two numbers or two values of one category. IEEE semantics: every
/// comparison with NaN (a missing value) is false, except `!=`, which is true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
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
}

/// A boolean connective. Both sides are always evaluated: nothing has side effects and
/// nothing can fail, so short-circuiting would only add branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Logic {
    /// `&&`
    And,
    /// `||`
    Or,
    /// `==` on booleans
    Eq,
    /// `!=` on booleans
    Ne,
}

/// A built-in function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    /// `min(a, b, ...)`: the smallest; NaN if any argument is NaN; `-0 < +0`.
    Min,
    /// `max(a, b, ...)`: the largest; NaN if any argument is NaN; `-0 < +0`.
    Max,
    /// `abs(x)`
    Abs,
    /// `clamp(x, lo, hi)` = `min(max(x, lo), hi)`.
    Clamp,
    /// `if(c, a, b)`: `a` when `c` holds, else `b` (both are evaluated).
    If,
    /// `sqrt(x)`
    Sqrt,
    /// `floor(x)`
    Floor,
    /// `ceil(x)`
    Ceil,
    /// `round(x)`: to the nearest integer, ties to even.
    Round,
    /// `missing(x)`: whether `x` is missing (NaN).
    Missing,
    /// `default(x, d)`: `x`, or `d` when `x` is missing.
    Default,
}

impl Function {
    /// Every function.
    pub const ALL: &'static [Function] = &[
        Function::Min,
        Function::Max,
        Function::Abs,
        Function::Clamp,
        Function::If,
        Function::Sqrt,
        Function::Floor,
        Function::Ceil,
        Function::Round,
        Function::Missing,
        Function::Default,
    ];

    /// The name as written.
    pub fn name(self) -> &'static str {
        match self {
            Function::Min => "min",
            Function::Max => "max",
            Function::Abs => "abs",
            Function::Clamp => "clamp",
            Function::If => "if",
            Function::Sqrt => "sqrt",
            Function::Floor => "floor",
            Function::Ceil => "ceil",
            Function::Round => "round",
            Function::Missing => "missing",
            Function::Default => "default",
        }
    }

    /// The signature, for messages and docs.
    pub fn signature(self) -> &'static str {
        match self {
            Function::Min => "min(number, number, ...) -> number",
            Function::Max => "max(number, number, ...) -> number",
            Function::Abs => "abs(number) -> number",
            Function::Clamp => "clamp(number, lo, hi) -> number",
            Function::If => "if(bool, T, T) -> T",
            Function::Sqrt => "sqrt(number) -> number",
            Function::Floor => "floor(number) -> number",
            Function::Ceil => "ceil(number) -> number",
            Function::Round => "round(number) -> number",
            Function::Missing => "missing(number or category) -> bool",
            Function::Default => "default(T, T) -> T",
        }
    }

    /// The function named `name`.
    pub fn lookup(name: &str) -> Option<Function> {
        Function::ALL.iter().copied().find(|function| function.name() == name)
    }
}

/// A typed expression node.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A number literal, or the code of a categorical literal (`high` is 2).
    Const(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A node feature, read from the row.
    Feature(NodeFeature),
    /// A job parameter, read from the parameters.
    Param(JobParam),
    /// `-x`
    Neg(Box<Node>),
    /// `!c`
    Not(Box<Node>),
    /// Arithmetic on numbers.
    Arith(Arith, Box<Node>, Box<Node>),
    /// Comparison of numbers or categorical codes.
    Compare(Compare, Box<Node>, Box<Node>),
    /// A boolean connective.
    Logic(Logic, Box<Node>, Box<Node>),
    /// A call; `min` and `max` have two or more arguments, the rest exactly their arity.
    Call(Function, Vec<Node>),
}

impl Node {
    /// Calls `visit` on this node and every node below it, parents first.
    pub fn walk(&self, visit: &mut dyn FnMut(&Node)) {
        visit(self);
        match self {
            Node::Const(_) | Node::Bool(_) | Node::Feature(_) | Node::Param(_) => {}
            Node::Neg(inner) | Node::Not(inner) => inner.walk(visit),
            Node::Arith(_, left, right) | Node::Compare(_, left, right) | Node::Logic(_, left, right) => {
                left.walk(visit);
                right.walk(visit);
            }
            Node::Call(_, args) => args.iter().for_each(|arg| arg.walk(visit)),
        }
    }
}
