//! The policy's `telemetry` block: where the scheduler extender reads live NVLink utilisation
//! (`node.nvlink_utilization`, `domain.nvlink_utilization`), how it smooths it, and the
//! throttling rule its filter and the engine's simulator enforce (docs/language.md,
//! "Telemetry"; docs/operations.md).
//!
//! Durations are whole seconds, as everywhere in the model; the smoothing and the rule
//! themselves are `crate::telemetry`.

use super::CommLevel;
use crate::span::{Span, Spanned};

/// The `telemetry` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Telemetry {
    /// Where it is declared.
    pub span: Span,
    /// PromQL giving one sample per node, labelled `node`; `None`: the generated recording
    /// rule `placid:nvlink_node_utilization:ratio` (targets/src/ops/usage.rs).
    pub node_query: Option<Spanned<String>>,
    /// PromQL giving one sample per NVLink domain, labelled `nvlink_domain`; `None`: the
    /// generated `placid:nvlink_domain_utilization:ratio`.
    pub domain_query: Option<Spanned<String>>,
    /// Half-life of the moving average, seconds (at least 1).
    pub half_life_seconds: u64,
    /// A sample older than this no longer counts: the static figure is used, seconds.
    pub max_age_seconds: u64,
    /// How long one answer of Prometheus is reused before it is asked again, seconds (at most
    /// `max_age_seconds`, so a cached answer is never older than a usable sample).
    pub ttl_seconds: u64,
    /// The throttling rule, if any.
    pub throttle: Option<ThrottleRule>,
}

impl Telemetry {
    /// Five minutes: smooths a 30 s scrape over about ten samples.
    pub const DEFAULT_HALF_LIFE_SECONDS: u64 = 300;
    /// Two minutes: four missed scrapes at 30 s.
    pub const DEFAULT_MAX_AGE_SECONDS: u64 = 120;
    /// Fifteen seconds: half a scrape interval, so kube-scheduler's bursts of requests share
    /// one query.
    pub const DEFAULT_TTL_SECONDS: u64 = 15;
    /// The longest half-life, maximum age, cache TTL or hold: one day. Longer figures mean
    /// telemetry that no longer describes the cluster.
    pub const MAX_SECONDS: u64 = 86_400;
    /// The longest query text.
    pub const MAX_QUERY_BYTES: usize = 4096;

    /// What is wrong with a query text, if anything: the extender sends it in a URL, so it is
    /// one non-empty line of at most [`Telemetry::MAX_QUERY_BYTES`].
    pub fn query_problem(text: &str) -> Option<String> {
        if text.trim().is_empty() {
            Some("is empty".to_owned())
        } else if text.len() > Telemetry::MAX_QUERY_BYTES {
            Some(format!("is longer than {} bytes", Telemetry::MAX_QUERY_BYTES))
        } else if text.chars().any(char::is_control) {
            Some("holds a control character".to_owned())
        } else {
            None
        }
    }
}

/// `throttle domain-nvlink-above= for= comm=`: an NVLink domain whose smoothed utilisation
/// stays above `threshold` for `hold_seconds` takes no new jobs of communication level `comm`
/// or above, until it drops below or its telemetry goes stale.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleRule {
    /// Where it is declared.
    pub span: Span,
    /// The fraction of the domain's NVLink capacity (0-1, exclusive of 0).
    pub threshold: f64,
    /// How long the figure must stay above, seconds.
    pub hold_seconds: u64,
    /// The lowest communication level refused.
    pub comm: CommLevel,
}

impl ThrottleRule {
    /// Whether `threshold` is a fraction of a domain's NVLink capacity a rule may compare with:
    /// above 0 (which would throttle any traffic), at most 1.
    pub fn is_threshold(threshold: f64) -> bool {
        threshold > 0.0 && threshold <= 1.0
    }

    /// Whether a job of communication level `comm` is refused by a throttled domain.
    pub fn refuses(&self, comm: CommLevel) -> bool {
        comm >= self.comm
    }
}
