//! Pattern C's promotion: which trials of a promoting stage go on, the best `top` by their
//! metric. Its own module because both the plans (which make one per promoting stage) and the
//! event loop (which applies it when the last trial ends) read it.

use placid_lang::model::Direction;

use crate::job::JobId;

/// A Pattern C promotion: the best `top` of `trials` by their metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Promotion {
    /// The jobs of the promoting stage.
    pub trials: Vec<JobId>,
    /// How many are promoted.
    pub top: u32,
    /// Which end of the metric wins.
    pub order: Direction,
}

impl Promotion {
    /// The promoted jobs among the `finished` trials with their metric: the best `top` by the
    /// metric (jobs without one rank last), ties to the earlier job.
    pub fn best(&self, finished: &[(JobId, Option<f64>)]) -> Vec<JobId> {
        let mut ranked: Vec<(JobId, Option<f64>)> = finished.to_vec();
        let order = self.order;
        ranked.sort_by(|(left_id, left), (right_id, right)| {
            let better = match (left, right) {
                (Some(a), Some(b)) => match order {
                    Direction::Max => b.total_cmp(a),
                    Direction::Min => a.total_cmp(b),
                },
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            better.then(left_id.cmp(right_id))
        });
        ranked.into_iter().take(self.top as usize).map(|(id, _)| id).collect()
    }
}
