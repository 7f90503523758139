//! Node labels and taints as one NFD `NodeFeatureRule` (`nfd.k8s-sigs.io/v1alpha1`).
//!
//! Invariants: the rule writes exactly the [`NodeMarks`] of the layout, the same data the
//! ResourceFlavors and the Topology select on; each rule matches nodes by exact name
//! (`system.name` / `nodename In [...]`), so no node outside the inventory is ever labelled.
//! Keys are under the project's prefix, never `kubernetes.io/`, which nfd-master refuses.
//! Nodes with identical marks share one rule, which keeps the object small for big clusters.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use serde::Serialize;

use crate::k8s::kinds;
use crate::k8s::layout::{Layout, NodeMarks};
use crate::k8s::objects::{NewObject, ObjectList};

#[derive(Serialize)]
struct MatchExpression {
    op: &'static str,
    value: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FeatureMatcher {
    feature: &'static str,
    match_expressions: BTreeMap<&'static str, MatchExpression>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    name: String,
    labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    taints: Vec<Taint>,
    match_features: Vec<FeatureMatcher>,
}

#[derive(Serialize)]
struct Spec {
    rules: Vec<Rule>,
}

#[derive(Serialize)]
struct NodeFeatureRule {
    spec: Spec,
}

/// Pushes the NodeFeatureRule of the project's nodes.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let mut groups: BTreeMap<&NodeMarks, Vec<String>> = BTreeMap::new();
    for (node, marks) in model.nodes.iter().zip(&layout.nodes) {
        groups.entry(marks).or_default().push(node.name.as_str().to_owned());
    }
    let mut rules: Vec<Rule> = groups
        .into_iter()
        .map(|(marks, nodes)| Rule {
            name: String::new(),
            labels: marks.labels.iter().map(|(key, value)| (key.as_str().to_owned(), value.as_str().to_owned())).collect(),
            taints: marks
                .taints
                .iter()
                .map(|(key, value)| Taint {
                    key: key.as_str().to_owned(),
                    value: Some(value.as_str().to_owned()),
                    effect: "NoSchedule".into(),
                    time_added: None,
                })
                .collect(),
            match_features: vec![FeatureMatcher {
                feature: "system.name",
                match_expressions: BTreeMap::from([("nodename", MatchExpression { op: "In", value: nodes })]),
            }],
        })
        .collect();
    // Rules are named after their first node, in node order, so names are stable when marks
    // of unrelated nodes change.
    rules.sort_by(|left, right| first_node(left).cmp(first_node(right)));
    for rule in &mut rules {
        rule.name = format!("placid nodes from {}", first_node(rule));
    }
    let object = NodeFeatureRule { spec: Spec { rules } };
    if let Err(diagnostic) = list.push(NewObject::cluster(&kinds::NODE_FEATURE_RULE, layout.project.clone(), model.project.span), object) {
        diagnostics.push(diagnostic);
    }
}

fn first_node(rule: &Rule) -> &str {
    rule.match_features
        .first()
        .and_then(|matcher| matcher.match_expressions.get("nodename"))
        .and_then(|expression| expression.value.first())
        .map_or("", String::as_str)
}
