//! A score compiled for evaluation: the checked score of the model plus its row and
//! parameter layout (which node features sit at which offset of a row, which job parameters
//! at which offset of the parameter block).
//!
//! Invariant: the layout is a pure function of the score — fields are the features the score
//! reads, in catalogue order — so the emitter, the native evaluator and `placid.meta` always
//! agree on offsets, and the same policy always yields the same bytes.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::expr::{JobParam, NodeFeature};
use placid_lang::model::{Direction, Score};

/// At most this many filters per score: the failure mask of a node is one `u32`.
pub const MAX_PREDICATES: usize = 32;
/// At most this many penalties per score. Each penalty is code in the plugin's one function,
/// which a host compiles before its first request; real policies use a handful, and 256 of
/// them compile in milliseconds where 80,000 took minutes.
pub const MAX_PENALTIES: usize = 256;

/// A score with its layout.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// The checked score.
    pub score: &'a Score,
    /// Node features in row order (field `i` is the f64 at byte `8 * i` of a row).
    pub node_fields: Vec<NodeFeature>,
    /// Job parameters in parameter-block order.
    pub params: Vec<JobParam>,
}

impl<'a> Program<'a> {
    /// Lays out `score`, or says why it cannot be compiled.
    pub fn new(score: &'a Score) -> Result<Program<'a>, Diagnostics> {
        if score.filters.len() > MAX_PREDICATES {
            let mut diagnostics = Diagnostics::new();
            diagnostics.push(
                Diagnostic::error(
                    Code::TooManyPredicates,
                    score.span,
                    format!("score `{}` has {} filters; the Wasm ABI reports at most {MAX_PREDICATES}", score.name, score.filters.len()),
                )
                .label("too many filters")
                .help("combine filters with `&&`; each filter is one bit of the failure mask"),
            );
            return Err(diagnostics);
        }
        if let Some(first_extra) = score.penalties.get(MAX_PENALTIES) {
            let mut diagnostics = Diagnostics::new();
            diagnostics.push(
                Diagnostic::error(
                    Code::TooManyPenalties,
                    score.span,
                    format!("score `{}` has {} penalties; a Wasm plugin holds at most {MAX_PENALTIES}", score.name, score.penalties.len()),
                )
                .label("too many penalties")
                .with_secondary(first_extra.span, format!("penalty {} of this score", MAX_PENALTIES + 1))
                .help("merge penalties that share a condition (their amounts add up), or split the score"),
            );
            return Err(diagnostics);
        }
        let expressions = || {
            std::iter::once(&score.expr)
                .chain(score.filters.iter().map(|filter| &filter.expr))
                .chain(score.penalties.iter().map(|penalty| &penalty.when))
        };
        let mut node_fields: Vec<NodeFeature> = expressions().flat_map(|expr| expr.node_features()).collect();
        node_fields.sort();
        node_fields.dedup();
        let mut params: Vec<JobParam> = expressions().flat_map(|expr| expr.job_params()).collect();
        params.sort();
        params.dedup();
        Ok(Program { score, node_fields, params })
    }

    /// Bytes per node row.
    pub fn row_stride(&self) -> usize {
        8 * self.node_fields.len()
    }

    /// Bytes of the parameter block.
    pub fn params_size(&self) -> usize {
        8 * self.params.len()
    }

    /// The field index of a node feature the score reads.
    pub fn field_slot(&self, feature: NodeFeature) -> usize {
        self.node_fields.iter().position(|field| *field == feature).unwrap_or(0)
    }

    /// The index of a job parameter the score reads.
    pub fn param_slot(&self, param: JobParam) -> usize {
        self.params.iter().position(|entry| *entry == param).unwrap_or(0)
    }

    /// Whether lower scores win.
    pub fn prefers_min(&self) -> bool {
        self.score.direction == Direction::Min
    }
}
