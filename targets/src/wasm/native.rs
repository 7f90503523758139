//! The native evaluator: the oracle the Wasm plugin is tested against, and the fast path of
//! tools that need no sandbox.
//!
//! Invariant: it performs exactly the IEEE operations the emitter emits, in the same order —
//! no `mul_add`, no reassociation, Wasm's `min`/`max` (NaN-propagating, `-0 < +0`) instead of
//! Rust's (NaN-ignoring) — so its results equal the module's bit for bit, NaN payloads aside.

use placid_lang::expr::{Arith, Compare, Function, JobParam, Logic, Node, NodeFeature};

use super::program::Program;

/// A compiled score, ready to evaluate rows laid out as the program says.
pub struct Evaluator<'a> {
    program: &'a Program<'a>,
    field_slots: Vec<usize>,
    param_slots: Vec<usize>,
}

/// The result for one node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// The score; `-inf` when a filter failed.
    pub score: f64,
    /// Bit `i` set when filter `i` failed.
    pub failed: u32,
}

impl<'a> Evaluator<'a> {
    /// An evaluator for `program`.
    pub fn new(program: &'a Program<'a>) -> Evaluator<'a> {
        let field_slots = NodeFeature::ALL.iter().map(|feature| program.field_slot(*feature)).collect();
        let param_slots = JobParam::ALL.iter().map(|param| program.param_slot(*param)).collect();
        Evaluator { program, field_slots, param_slots }
    }

    /// Scores one node row (`program.node_fields.len()` values) for `params`.
    pub fn evaluate(&self, params: &[f64], row: &[f64]) -> Outcome {
        let values = Values { evaluator: self, params, row };
        let score = self.program.score;
        let mut failed = 0u32;
        for (bit, filter) in score.filters.iter().enumerate() {
            if !values.condition(&filter.expr.root) {
                failed |= 1 << bit;
            }
        }
        let mut total = values.number(&score.expr.root);
        for penalty in &score.penalties {
            let amount = if values.condition(&penalty.when.root) { penalty.amount } else { 0.0 };
            total = if self.program.prefers_min() { total + amount } else { total - amount };
        }
        Outcome { score: if failed == 0 { total } else { f64::NEG_INFINITY }, failed }
    }

    /// Scores `rows` (concatenated, one row after another) into `out`.
    pub fn evaluate_batch(&self, params: &[f64], rows: &[f64], out: &mut Vec<Outcome>) {
        out.clear();
        let width = self.program.node_fields.len();
        if width == 0 {
            return;
        }
        out.extend(rows.chunks_exact(width).map(|row| self.evaluate(params, row)));
    }
}

struct Values<'e, 'a> {
    evaluator: &'e Evaluator<'a>,
    params: &'e [f64],
    row: &'e [f64],
}

impl Values<'_, '_> {
    fn feature(&self, feature: NodeFeature) -> f64 {
        self.row.get(self.evaluator.field_slots[feature.index()]).copied().unwrap_or(f64::NAN)
    }

    fn param(&self, param: JobParam) -> f64 {
        self.params.get(self.evaluator.param_slots[param.index()]).copied().unwrap_or(f64::NAN)
    }

    fn number(&self, node: &Node) -> f64 {
        match node {
            Node::Const(value) => *value,
            Node::Feature(feature) => self.feature(*feature),
            Node::Param(param) => self.param(*param),
            Node::Neg(inner) => -self.number(inner),
            Node::Arith(op, left, right) => {
                let (left, right) = (self.number(left), self.number(right));
                match op {
                    Arith::Add => left + right,
                    Arith::Sub => left - right,
                    Arith::Mul => left * right,
                    Arith::Div => left / right,
                }
            }
            Node::Call(function, args) => self.call(*function, args),
            // Booleans never reach a number context in a checked tree.
            Node::Bool(_) | Node::Not(_) | Node::Compare(..) | Node::Logic(..) => f64::NAN,
        }
    }

    fn call(&self, function: Function, args: &[Node]) -> f64 {
        let arg = |index: usize| args.get(index).map_or(f64::NAN, |node| self.number(node));
        match function {
            Function::Min => args.iter().map(|node| self.number(node)).reduce(wasm_min).unwrap_or(f64::NAN),
            Function::Max => args.iter().map(|node| self.number(node)).reduce(wasm_max).unwrap_or(f64::NAN),
            Function::Abs => arg(0).abs(),
            Function::Clamp => wasm_min(wasm_max(arg(0), arg(1)), arg(2)),
            Function::If => {
                let (then, otherwise) = (arg(1), arg(2));
                if args.first().is_some_and(|condition| self.condition(condition)) { then } else { otherwise }
            }
            Function::Sqrt => arg(0).sqrt(),
            Function::Floor => arg(0).floor(),
            Function::Ceil => arg(0).ceil(),
            Function::Round => arg(0).round_ties_even(),
            Function::Default => {
                let value = arg(0);
                if value.is_nan() { arg(1) } else { value }
            }
            Function::Missing => f64::NAN,
        }
    }

    fn condition(&self, node: &Node) -> bool {
        match node {
            Node::Bool(value) => *value,
            // A boolean field is true when it is a non-zero number: missing (NaN) is false.
            Node::Feature(feature) => self.feature(*feature).abs() > 0.0,
            Node::Param(param) => self.param(*param).abs() > 0.0,
            Node::Not(inner) => !self.condition(inner),
            Node::Compare(op, left, right) => {
                let (left, right) = (self.number(left), self.number(right));
                match op {
                    Compare::Lt => left < right,
                    Compare::Le => left <= right,
                    Compare::Gt => left > right,
                    Compare::Ge => left >= right,
                    Compare::Eq => left == right,
                    Compare::Ne => left != right,
                }
            }
            Node::Logic(op, left, right) => {
                let (left, right) = (self.condition(left), self.condition(right));
                match op {
                    Logic::And => left & right,
                    Logic::Or => left | right,
                    Logic::Eq => left == right,
                    Logic::Ne => left != right,
                }
            }
            Node::Call(Function::Missing, args) => args.first().is_some_and(|arg| self.number(arg).is_nan()),
            Node::Call(Function::If, args) => match args.as_slice() {
                [condition, then, otherwise] => {
                    let (then, otherwise) = (self.condition(then), self.condition(otherwise));
                    if self.condition(condition) { then } else { otherwise }
                }
                _ => false,
            },
            Node::Const(_) | Node::Neg(_) | Node::Arith(..) | Node::Call(..) => false,
        }
    }
}

/// Wasm's `f64.min`: NaN if either operand is NaN, and `-0` below `+0`.
pub fn wasm_min(left: f64, right: f64) -> f64 {
    if left.is_nan() || right.is_nan() {
        f64::NAN
    } else if left == right {
        // Equal operands differ only in the sign of zero; the negative one is smaller.
        if left.is_sign_negative() { left } else { right }
    } else if left < right {
        left
    } else {
        right
    }
}

/// Wasm's `f64.max`: NaN if either operand is NaN, and `+0` above `-0`.
pub fn wasm_max(left: f64, right: f64) -> f64 {
    if left.is_nan() || right.is_nan() {
        f64::NAN
    } else if left == right {
        if left.is_sign_positive() { left } else { right }
    } else if left > right {
        left
    } else {
        right
    }
}
