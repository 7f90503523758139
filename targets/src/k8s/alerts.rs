//! The policy's `alert`s as one prometheus-operator `PrometheusRule` in placid's namespace.
//!
//! Invariants: the metric's PromQL is wrapped in parentheses before the comparison, so a
//! query with its own operators keeps its meaning; thresholds relative to a migration
//! baseline have no meaning in a standing alert and are refused (E057). The query is free
//! text from the policy and reaches YAML only through serde, which quotes it.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Alert, Bound, Model, Threshold};
use serde::Serialize;

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};

#[derive(Serialize)]
struct Rule {
    alert: String,
    expr: String,
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    for_duration: Option<String>,
    labels: BTreeMap<&'static str, String>,
    annotations: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
struct Group {
    name: String,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
struct Spec {
    groups: Vec<Group>,
}

#[derive(Serialize)]
struct PrometheusRule {
    spec: Spec,
}

/// `nvlink-saturation` -> `PlacidNvlinkSaturation`: Prometheus alert names are by convention
/// CamelCase, and the prefix keeps placid's alerts apart from others.
fn alert_name(name: &str) -> String {
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

fn rule(model: &Model, alert: &Alert) -> Result<Rule, Diagnostic> {
    let condition = &alert.condition;
    let metric = model.metric(condition.metric.value);
    let (threshold, shown) = match condition.threshold {
        Threshold::Value(value) => (format!("{value}"), format!("{value}")),
        Threshold::Percent(percent) => (format!("{}", percent.fraction()), percent.to_string()),
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
    let duration = condition.duration.map(|duration| duration.to_string());
    let summary = match &duration {
        Some(duration) => format!("{} {side} {shown} for {duration}", metric.name),
        None => format!("{} {side} {shown}", metric.name),
    };
    Ok(Rule {
        alert: alert_name(alert.name.as_str()),
        expr: format!("({}) {operator} {threshold}", metric.query.value),
        for_duration: duration,
        labels: BTreeMap::from([("severity", alert.severity.as_str().to_owned()), ("placid_alert", alert.name.as_str().to_owned())]),
        annotations: BTreeMap::from([("summary", summary)]),
    })
}

/// Pushes the PrometheusRule when the policy has alerts.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    if model.alerts.is_empty() {
        return;
    }
    let mut rules = Vec::new();
    for alert in &model.alerts {
        match rule(model, alert) {
            Ok(rule) => rules.push(rule),
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    let object = PrometheusRule { spec: Spec { groups: vec![Group { name: format!("placid.{}", layout.project), rules }] } };
    let name = match ObjectName::fixed(&format!("placid-{}", layout.project), model.project.span) {
        Ok(name) => name,
        Err(diagnostic) => return diagnostics.push(diagnostic),
    };
    if let Err(diagnostic) =
        list.push(NewObject::namespaced(&kinds::PROMETHEUS_RULE, layout.namespace.clone(), name, model.project.span), &object)
    {
        diagnostics.push(diagnostic);
    }
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
