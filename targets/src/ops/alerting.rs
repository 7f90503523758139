//! The policy's `alert`s as alerting rules. Each metric an alert reads is first recorded as
//! `placid:metric:<name>` and the alert compares that series: the query is evaluated once per
//! interval however many alerts share it, and the generated promtool tests can drive the
//! alert's threshold and `for` through that one series whatever the query is. Each alert links
//! its section of the alerts' runbook page ([`url`]); the page lives here because the rule
//! carries it, and the runbooks target writes the page where it points.
//!
//! Invariants: the metric's PromQL is wrapped in parentheses before it is recorded, so a query
//! with its own operators keeps its meaning; thresholds relative to a migration baseline have
//! no meaning in a standing alert and are refused (E057). The query is free text from the
//! policy and reaches YAML only through serde, which quotes it.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::model::{Alert, Bound, Metric, Model, Threshold};

use super::rule::Rule;

/// The alerts' runbook page's path in the build output (the runbooks target writes it,
/// `runbooks::alerts`), which every alert's `runbook_url` links.
pub const PAGE: &str = "runbooks/alerts.md";

/// The `runbook_url` of `alert`: its section of [`PAGE`], under the project's `runbooks=`
/// base URL, or as a path inside the build output without one.
pub fn url(model: &Model, alert: &Alert) -> String {
    let section = format!("{PAGE}#{}", anchor(alert));
    match &model.project.runbooks {
        Some(base) => format!("{base}/{section}"),
        None => section,
    }
}

/// The HTML id of an alert's section; names are letters, digits, `-`, `_` and `.`, all
/// valid in an id, so it needs no escaping.
pub fn anchor(alert: &Alert) -> String {
    format!("alert-{}", alert.name)
}

/// `nvlink-saturation` -> `PlacidNvlinkSaturation`: Prometheus alert names are by convention
/// CamelCase, and the prefix keeps placid's alerts apart from others.
pub fn alert_name(name: &str) -> String {
    let mut out = String::from("Placid");
    for part in name.split(|character: char| !character.is_ascii_alphanumeric()).filter(|part| !part.is_empty()) {
        let mut characters = part.chars();
        if let Some(first) = characters.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(characters);
        }
    }
    out
}

/// `nvlink-utilization` -> `placid:metric:nvlink_utilization`, the series an alert compares.
pub fn metric_series(metric: &Metric) -> String {
    let snake: String =
        metric.name.as_str().chars().map(|character| if character.is_ascii_alphanumeric() { character } else { '_' }).collect();
    format!("placid:metric:{snake}")
}

/// An alert's threshold as PromQL compares it, and as its summary shows it.
pub struct Limit {
    /// `>` or `<`.
    pub operator: &'static str,
    /// The number compared with.
    pub value: f64,
    /// `85%`, `0`.
    pub shown: String,
    /// `above` or `below`.
    pub side: &'static str,
}

/// The limit of `alert`, or E057 when it compares with a baseline.
pub fn limit(alert: &Alert) -> Result<Limit, Diagnostic> {
    let condition = &alert.condition;
    let (value, shown) = match condition.threshold {
        Threshold::Value(value) => (value, format!("{value}")),
        Threshold::Percent(percent) => (percent.fraction(), percent.to_string()),
        Threshold::OfBaseline(_) => {
            return Err(Diagnostic::error(
                Code::AlertNotExpressible,
                condition.span,
                format!("alert `{}` compares with a baseline", alert.name),
            )
            .label("no baseline outside a migration")
            .help("give the alert an absolute threshold or a percentage"));
        }
    };
    let (operator, side) = match condition.bound {
        Bound::AtMost => (">", "above"),
        Bound::AtLeast => ("<", "below"),
    };
    Ok(Limit { operator, value, shown, side })
}

/// The recording rule of one metric an alert reads.
pub fn metric_rule(metric: &Metric) -> Rule {
    Rule::record(&metric_series(metric), format!("({})", metric.query.value))
}

/// The alerting rule of `alert`, linking its runbook at `runbook_url` ([`crate::alert_pages::url`]).
pub fn rule(model: &Model, alert: &Alert, runbook_url: String) -> Result<Rule, Diagnostic> {
    let limit = limit(alert)?;
    let metric = model.metric(alert.condition.metric.value);
    let duration = alert.condition.duration.map(|duration| duration.to_string());
    let summary = match &duration {
        Some(duration) => format!("{} {} {} for {duration}", metric.name, limit.side, limit.shown),
        None => format!("{} {} {}", metric.name, limit.side, limit.shown),
    };
    let annotations = BTreeMap::from([("summary".to_owned(), summary), ("runbook_url".to_owned(), runbook_url)]);
    Ok(Rule {
        record: None,
        alert: Some(alert_name(alert.name.as_str())),
        expr: format!("{} {} {}", metric_series(metric), limit.operator, limit.value),
        for_duration: duration,
        labels: BTreeMap::from([
            ("severity".to_owned(), alert.severity.as_str().to_owned()),
            ("placid_alert".to_owned(), alert.name.as_str().to_owned()),
        ]),
        annotations,
    })
}

#[cfg(test)]
mod tests {
    use super::alert_name;

    #[test]
    fn alert_names_are_camel_case() {
        assert_eq!(alert_name("nvlink-saturation"), "PlacidNvlinkSaturation");
        assert_eq!(alert_name("budget_burn.v2"), "PlacidBudgetBurnV2");
    }
}
