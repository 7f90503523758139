//! Prometheus rule groups as data, serialised the same way into the PrometheusRule's `spec`
//! and into the plain rule file promtool reads, so the two cannot drift apart.

use std::collections::BTreeMap;

use serde::Serialize;

/// One recording or alerting rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rule {
    /// The series a recording rule writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// The alert's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert: Option<String>,
    /// The PromQL.
    pub expr: String,
    /// How long an alert's condition must hold.
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_duration: Option<String>,
    /// Labels added to the result.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// An alert's annotations.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Rule {
    /// A recording rule.
    pub fn record(name: &str, expr: impl Into<String>) -> Rule {
        Rule {
            record: Some(name.to_owned()),
            alert: None,
            expr: expr.into(),
            for_duration: None,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
        }
    }

    /// This rule with one more label.
    pub fn label(mut self, key: &str, value: impl Into<String>) -> Rule {
        self.labels.insert(key.to_owned(), value.into());
        self
    }
}

/// A rule group; Prometheus evaluates its rules in order, every interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// Unique within the file.
    pub name: String,
    /// In evaluation order: a rule may read what an earlier one recorded.
    pub rules: Vec<Rule>,
}

/// A whole rule file (`groups:`), promtool's format.
#[derive(Serialize)]
pub struct RuleFile<'a> {
    /// The groups.
    pub groups: &'a [Group],
}
