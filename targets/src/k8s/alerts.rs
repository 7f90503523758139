//! placid's Prometheus rules (static series, recording rules and the policy's `alert`s,
//! built by [`crate::ops`]) as one prometheus-operator `PrometheusRule` in placid's
//! namespace, and the same groups as a plain rule file with its promtool unit tests under
//! `prometheus/` (beside `kubernetes/`, so nothing syncs them; CI runs promtool on them). Also the Grafana
//! dashboard ([`crate::ops::dashboards`]) in a ConfigMap labelled for Grafana's sidecar.

use k8s_openapi::api::core::v1::ConfigMap;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use serde::Serialize;
use std::collections::BTreeMap;

use crate::Artifact;
use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::ops::{self, rule::Group};
use crate::yaml;

/// Where the promtool files go.
pub const PROMTOOL_DIR: &str = "prometheus";

#[derive(Serialize)]
struct Spec {
    groups: Vec<Group>,
}

#[derive(Serialize)]
struct PrometheusRule {
    spec: Spec,
}

/// Pushes the PrometheusRule.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let groups = match ops::groups(model, layout.project.as_str()) {
        Ok(groups) => groups,
        Err(errors) => return diagnostics.extend(errors),
    };
    let object = PrometheusRule { spec: Spec { groups } };
    let name = match ObjectName::fixed(&format!("placid-{}", layout.project), model.project.span) {
        Ok(name) => name,
        Err(diagnostic) => return diagnostics.push(diagnostic),
    };
    if let Err(diagnostic) =
        list.push(NewObject::namespaced(&kinds::PROMETHEUS_RULE, layout.namespace.clone(), name, model.project.span), object)
    {
        diagnostics.push(diagnostic);
    }
}

/// The label Grafana's dashboard sidecar (kube-prometheus-stack) loads ConfigMaps by.
const SIDECAR_LABEL: (&str, &str) = ("grafana_dashboard", "1");

/// Pushes the dashboard ConfigMap `placid-<project>-dashboard`.
pub fn emit_dashboard(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let panels = ops::dashboards::panels(model);
    let json = serde_json::to_string_pretty(&ops::dashboards::dashboard(layout.project.as_str(), &panels)).unwrap_or_default();
    let config_map = ConfigMap { data: Some(BTreeMap::from([(format!("placid-{}.json", layout.project), json)])), ..ConfigMap::default() };
    let result = ObjectName::fixed(&format!("placid-{}-dashboard", layout.project), model.project.span).and_then(|name| {
        let mut meta = NewObject::namespaced(&kinds::CONFIG_MAP, layout.namespace.clone(), name, model.project.span);
        meta.labels.insert(SIDECAR_LABEL.0.to_owned(), SIDECAR_LABEL.1.to_owned());
        list.push(meta, config_map)
    });
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}

/// The promtool rule file and tests, when the rules can be built (their errors are reported
/// by [`emit`]), or why they could not be written as YAML.
pub fn promtool_files(model: &Model, layout: &Layout) -> Result<Vec<Artifact>, yaml::Error> {
    let project = layout.project.as_str();
    match ops::groups(model, project) {
        Ok(groups) => ops::promtool_files(model, project, PROMTOOL_DIR, &groups),
        Err(_) => Ok(Vec::new()),
    }
}
