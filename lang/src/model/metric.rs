//! Metrics (`metric`) and the conditions over them (thresholds, bounds, durations) that
//! migration gates, rollback triggers and alerts share; kept apart from those so both read
//! one definition of a condition.

use crate::model::MetricId;
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::{Duration, Percent};

/// A metric, with the PromQL query that reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The metric's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// PromQL expression.
    pub query: Spanned<String>,
}

impl Metric {
    /// The placeholder a query uses for the pool it is measured on (a migration's target pool,
    /// or its source pool for a baseline).
    pub const POOL_PLACEHOLDER: &'static str = "$pool";

    /// Whether the query selects a pool with [`Metric::POOL_PLACEHOLDER`].
    pub fn is_per_pool(&self) -> bool {
        self.query.value.contains(Metric::POOL_PLACEHOLDER)
    }

    /// The query measured on `pool`.
    pub fn query_on(&self, pool: &Name) -> String {
        self.query.value.replace(Metric::POOL_PLACEHOLDER, pool.as_str())
    }
}

/// Which side of a threshold is bad (for triggers and alerts) or required (for gates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The value must stay at or above the threshold (gates), or firing when below.
    AtLeast,
    /// The value must stay at or below the threshold (gates), or firing when above.
    AtMost,
}

/// A threshold value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// A plain number in the metric's unit.
    Value(f64),
    /// A percentage (for ratios such as an error rate).
    Percent(Percent),
    /// A percentage of the baseline measured on the migration's source pool.
    OfBaseline(Percent),
}

/// A condition over a metric: gate, rollback trigger or alert.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// Where it is declared.
    pub span: Span,
    /// The metric.
    pub metric: Spanned<MetricId>,
    /// Which side is good (gates) or bad (triggers, alerts).
    pub bound: Bound,
    /// The threshold.
    pub threshold: Threshold,
    /// How long the condition must hold.
    pub duration: Option<Duration>,
}
