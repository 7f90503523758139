//! Day-2 operations on the Prometheus side: the policy's static series ([`series`]), the
//! recording rules over live telemetry ([`usage`]), the policy's alerts ([`alerting`]) and
//! their promtool unit tests ([`promtool`]).
//!
//! Invariants: one list of rule groups ([`groups`]) is both the PrometheusRule's spec
//! (k8s/alerts.rs) and the plain rule file promtool checks, so what is tested is what is
//! synced. Every series a rule reads is produced by `placid-probe --serve`, by the static
//! series, by an earlier rule, or is one of kube-state-metrics' pod series
//! ([`usage::EXTERNAL`]); tests/tests/prometheus_rules.rs holds the rules to that.

pub mod alerting;
pub mod dashboards;
pub mod promtool;
pub mod rule;
pub mod series;
pub mod usage;

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

use crate::Artifact;
use crate::yaml;
use rule::{Group, Rule, RuleFile};

/// Every rule group of `model` under `project` (the group-name prefix), or the alerts that
/// cannot be expressed (E057).
pub fn groups(model: &Model, project: &str) -> Result<Vec<Group>, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    let mut alerts: Vec<Rule> = Vec::new();
    let mut recorded = Vec::new();
    for alert in &model.alerts {
        let metric = alert.condition.metric.value;
        if !recorded.contains(&metric) {
            recorded.push(metric);
            alerts.push(alerting::metric_rule(model.metric(metric)));
        }
        match alerting::rule(model, alert, alerting::url(model, alert)) {
            Ok(rule) => alerts.push(rule),
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let mut groups = vec![
        Group { name: format!("placid.{project}.static"), rules: series::rules(model) },
        Group { name: format!("placid.{project}.usage"), rules: usage::rules(placid_lang::labels::prefix(&model.project)) },
    ];
    if !alerts.is_empty() {
        groups.push(Group { name: format!("placid.{project}"), rules: alerts });
    }
    Ok(groups)
}

/// The rule file and its promtool tests under `dir` (`prometheus`), for CI:
/// `promtool check rules rules.yaml dashboards.rules.yaml` and `promtool test rules
/// rules.test.yaml`. `dashboards.rules.yaml` holds the dashboard's queries as rules, only to
/// be checked.
pub fn promtool_files(model: &Model, project: &str, dir: &str, groups: &[Group]) -> Result<Vec<Artifact>, yaml::Error> {
    let rules: Vec<Rule> = groups.iter().flat_map(|group| group.rules.iter().cloned()).collect();
    let dashboard = [dashboards::check_rules(project, &dashboards::panels(model))];
    Ok(vec![
        Artifact::text(format!("{dir}/{}", promtool::RULES_FILE), yaml::to_string(&RuleFile { groups })?),
        Artifact::text(format!("{dir}/rules.test.yaml"), promtool::file(model, &rules)?),
        Artifact::text(format!("{dir}/dashboards.rules.yaml"), yaml::to_string(&RuleFile { groups: &dashboard })?),
    ])
}
