//! Ranking and normalising the results of a batch: the order `placid score` prints and the
//! 0..10 integers kube-scheduler expects from an extender's prioritize verb.
//!
//! Invariant: deterministic — ties are broken by node name — and a node is feasible only if
//! no filter failed and its score is a number (a NaN score is "undefined", never a winner).

use placid_targets::wasm::Meta;

/// One node's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    /// The node's name.
    pub node: String,
    /// Its raw score.
    pub score: f64,
    /// Whether it may host the job.
    pub feasible: bool,
    /// Names of the filters it failed.
    pub failed: Vec<String>,
}

/// Names of the predicates set in `mask`.
pub fn failed_names(meta: &Meta, mask: u32) -> Vec<String> {
    meta.predicates.iter().enumerate().filter(|(bit, _)| mask & (1 << bit) != 0).map(|(_, name)| name.clone()).collect()
}

/// Whether a node with this score and mask is feasible.
pub fn is_feasible(score: f64, mask: u32) -> bool {
    mask == 0 && !score.is_nan() && score != f64::NEG_INFINITY
}

/// Whether a node passed every filter of the score but has no score: NaN, because a feature or
/// parameter it reads is missing (a Node or Pod without the label). Such a node is not
/// refused: a missing label must not block scheduling by accident.
pub fn is_unranked(score: f64, mask: u32) -> bool {
    mask == 0 && score.is_nan()
}

/// The extender score of an unranked node: the middle of kube-scheduler's 0..=10, so it is
/// neither preferred nor avoided.
pub const NEUTRAL_PRIORITY: i64 = 5;

/// Best first: feasible nodes by score (lowest first for `min`), then the rest by name.
pub fn rank(meta: &Meta, mut results: Vec<Ranked>) -> Vec<Ranked> {
    let prefers_min = meta.prefers_min();
    results.sort_by(|left, right| {
        right.feasible.cmp(&left.feasible).then_with(|| {
            let order = if left.feasible && right.feasible {
                if prefers_min { left.score.total_cmp(&right.score) } else { right.score.total_cmp(&left.score) }
            } else {
                std::cmp::Ordering::Equal
            };
            order.then_with(|| left.node.cmp(&right.node))
        })
    });
    results
}

/// kube-scheduler's extender scores: integers 0..=10, 10 the best. Feasible scores are
/// min-max normalised over the batch (inverted for `min`); unranked nodes get
/// [`NEUTRAL_PRIORITY`], infeasible ones 0, and a batch whose feasible scores are all equal
/// gets 10 everywhere it is feasible.
pub fn extender_priorities(meta: &Meta, scores: &[f64], masks: &[u32]) -> Vec<i64> {
    let feasible = |index: usize| is_feasible(scores[index], masks[index]) && scores[index].is_finite();
    let finite: Vec<f64> = (0..scores.len()).filter(|index| feasible(*index)).map(|index| scores[index]).collect();
    let low = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let high = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (0..scores.len())
        .map(|index| {
            if is_unranked(scores[index], masks[index]) {
                return NEUTRAL_PRIORITY;
            }
            if !feasible(index) {
                return 0;
            }
            if high <= low {
                return 10;
            }
            let position = (scores[index] - low) / (high - low);
            let goodness = if meta.prefers_min() { 1.0 - position } else { position };
            (goodness * 10.0).round().clamp(0.0, 10.0) as i64
        })
        .collect()
}
