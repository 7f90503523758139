//! What a gate or trigger measures: the PromQL query, the condition on its result and a
//! sentence for people, derived once from a model [`Condition`] and read by the
//! AnalysisTemplates and the runbook alike.
//!
//! Argo Rollouts has no "for N minutes" field, so a duration becomes a PromQL subquery over
//! the window at a one-minute resolution: "above X for 10m" is `min_over_time(q[10m:1m]) > X`
//! (the minimum over the window is above X only if every sample is). A baseline threshold
//! divides the query on the target pool by the same query on the source pool.

use placid_lang::model::{Bound, Condition, Migration, Model, Threshold};
use placid_lang::units::Duration;

/// Whether a condition must hold (an acceptance gate) or must not (a rollback trigger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The measurement succeeds when the condition holds.
    Gate,
    /// The measurement fails (and the rollout aborts) when the condition holds.
    Trigger,
}

/// A condition ready to be measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Gate or trigger.
    pub role: Role,
    /// The PromQL query whose first result is compared.
    pub query: String,
    /// The Argo Rollouts expression over `result`, such as `result[0] >= 0.9`.
    pub condition: String,
    /// The condition in words, for the runbook.
    pub summary: String,
}

/// Measures `condition` of `migration` in `role`.
pub fn measure(model: &Model, migration: &Migration, condition: &Condition, role: Role) -> Measurement {
    let metric = model.metric(condition.metric.value);
    let target = &model.pool(migration.to.value).name;
    let source = &model.pool(migration.from.value).name;
    let on_target = metric.query_on(target);
    let (value, threshold, relative) = match condition.threshold {
        Threshold::Value(number) => (on_target, number, String::new()),
        Threshold::Percent(percent) => (on_target, percent.fraction(), String::new()),
        Threshold::OfBaseline(percent) => {
            (format!("({on_target}) / ({})", metric.query_on(source)), percent.fraction(), format!(" of its value on `{source}`"))
        }
    };
    // A gate must hold at every sample of the window; a trigger fires when it is breached at
    // every sample. Either way the extreme on the "good" side is the one compared.
    let window_low = matches!((role, condition.bound), (Role::Gate, Bound::AtLeast) | (Role::Trigger, Bound::AtMost));
    let query = match condition.duration {
        Some(duration) => {
            let function = if window_low { "min_over_time" } else { "max_over_time" };
            format!("{function}(({value})[{}:1m])", go_duration(duration))
        }
        None => value,
    };
    let operator = match (role, condition.bound) {
        (Role::Gate, Bound::AtLeast) => ">=",
        (Role::Gate, Bound::AtMost) => "<=",
        (Role::Trigger, Bound::AtLeast) => "<",
        (Role::Trigger, Bound::AtMost) => ">",
    };
    let shown_threshold = match condition.threshold {
        Threshold::Value(number) => number.to_string(),
        Threshold::Percent(percent) | Threshold::OfBaseline(percent) => percent.to_string(),
    };
    let window = condition.duration.map(|duration| format!(" for {}", go_duration(duration))).unwrap_or_default();
    Measurement {
        role,
        query,
        condition: format!("result[0] {operator} {threshold}"),
        summary: format!("`{}` on `{target}` {operator} {shown_threshold}{relative}{window}", metric.name),
    }
}

/// A duration as Go's `time.ParseDuration` and PromQL read it: `72h`, `1h30m`, `45s`.
pub fn go_duration(duration: Duration) -> String {
    let seconds = duration.seconds;
    if seconds == 0 {
        return "0s".to_owned();
    }
    [(seconds / 3600, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")]
        .into_iter()
        .filter(|(amount, _)| *amount > 0)
        .map(|(amount, unit)| format!("{amount}{unit}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_use_hours_as_the_largest_unit() {
        let check = |seconds, expected: &str| assert_eq!(go_duration(Duration { seconds }), expected);
        check(0, "0s");
        check(45, "45s");
        check(600, "10m");
        check(5400, "1h30m");
        check(259_200, "72h");
        check(3661, "1h1m1s");
    }
}
