//! placid's Prometheus rules (static series, recording rules and the policy's `alert`s,
//! built by [`crate::ops`]) as one prometheus-operator `PrometheusRule` in placid's
//! namespace, and the same groups as a plain rule file with its promtool unit tests under
//! `kubernetes/prometheus/` (not synced; CI runs promtool on them).

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use serde::Serialize;

use crate::Artifact;
use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::ops::{self, rule::Group};

/// Where the promtool files go.
pub const PROMTOOL_DIR: &str = "kubernetes/prometheus";

#[derive(Serialize)]
struct Spec<'a> {
    groups: &'a [Group],
}

#[derive(Serialize)]
struct PrometheusRule<'a> {
    spec: Spec<'a>,
}

/// Pushes the PrometheusRule.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let groups = match ops::groups(model, layout.project.as_str()) {
        Ok(groups) => groups,
        Err(errors) => return diagnostics.extend(errors),
    };
    let object = PrometheusRule { spec: Spec { groups: &groups } };
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

/// The promtool rule file and tests, when the rules can be built (their errors are reported
/// by [`emit`]).
pub fn promtool_files(model: &Model, layout: &Layout) -> Vec<Artifact> {
    ops::groups(model, layout.project.as_str()).map(|groups| ops::promtool_files(model, PROMTOOL_DIR, &groups)).unwrap_or_default()
}
