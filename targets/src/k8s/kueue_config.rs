//! Kueue's own `Configuration` (`config.kueue.x-k8s.io/v1beta2`) with what the emitted queues
//! rely on, synced as the ConfigMap Kueue's controller reads: `kueue-manager-config` in
//! `kueue-system`, key `controller_manager_config.yaml` (Kueue's install and Helm chart
//! mount it there). Every field placid leaves out takes Kueue's built-in default, which is what
//! the stock install's file says. Kueue reads the file at start-up, so its controller is
//! restarted after the ConfigMap changes (docs/targets/kubernetes.md, "Deploying"); a
//! ConfigMap anywhere else would be read by nobody.
//!
//! What the queues need: fair sharing on (the ClusterQueues' `fairSharing.weight` means
//! nothing otherwise; in v1beta2 a `fairSharing` block turns it on), with preemption strategies
//! that reclaim toward the weights; the integrations of every kind the admission policy
//! admits; Pods managed only in team namespaces (the plain-pod integration must never touch
//! system pods); and MIG resources left out of quota, since the queues cover `nvidia.com/gpu`
//! only and Kueue refuses workloads asking for uncovered resources. Topology Aware Scheduling
//! is on by default from Kueue 0.14, and this target needs 0.19 (v1beta2), so no feature gate.
//!
//! A config file, not an API object: the typed structs deny unknown fields, and the tests read
//! it back through them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use serde::{Deserialize, Serialize};

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::yaml;

/// The namespace Kueue is installed in (its install's and Helm chart's default).
pub const KUEUE_NAMESPACE: &str = "kueue-system";
/// The ConfigMap Kueue's controller mounts its configuration from.
pub const CONFIG_MAP: &str = "kueue-manager-config";
/// The ConfigMap key Kueue's controller reads (`--config=/controller_manager_config.yaml`).
pub const CONFIG_KEY: &str = "controller_manager_config.yaml";

/// `Configuration`, the fields placid sets.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KueueConfiguration {
    /// `config.kueue.x-k8s.io/v1beta2`.
    pub api_version: String,
    /// `Configuration`.
    pub kind: String,
    /// Namespaces whose Pods Kueue's pod integration may manage.
    pub managed_jobs_namespace_selector: LabelSelector,
    /// Enabled integrations.
    pub integrations: Integrations,
    /// Fair sharing between the ClusterQueues of the cohort.
    pub fair_sharing: FairSharing,
    /// Resources Kueue leaves out of quota.
    pub resources: Resources,
}

/// `integrations`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Integrations {
    /// Framework names (`batch/job`).
    pub frameworks: Vec<String>,
}

/// `fairSharing`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FairSharing {
    /// Tried in order until the preemptor fits.
    pub preemption_strategies: Vec<String>,
}

/// `resources`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resources {
    /// Resource name prefixes Kueue ignores.
    pub exclude_resource_prefixes: Vec<String>,
}

/// Kueue's names of the integrations of the kinds the admission policy covers
/// ([`super::admission`]).
const FRAMEWORKS: [&str; 5] = ["batch/job", "jobset.x-k8s.io/jobset", "ray.io/rayjob", "kubeflow.org/pytorchjob", "pod"];

/// The configuration for `layout`'s team label.
pub fn configuration(layout: &Layout) -> KueueConfiguration {
    KueueConfiguration {
        api_version: "config.kueue.x-k8s.io/v1beta2".into(),
        kind: "Configuration".into(),
        managed_jobs_namespace_selector: LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: layout.team_label.as_str().to_owned(),
                operator: "Exists".into(),
                values: None,
            }]),
            match_labels: None,
        },
        integrations: Integrations { frameworks: FRAMEWORKS.iter().map(|name| (*name).to_owned()).collect() },
        // First preempt only what keeps the preemptee at or above the preemptor's final share,
        // then, if that frees too little, by priority and start time within that bound.
        fair_sharing: FairSharing { preemption_strategies: vec!["LessThanOrEqualToFinalShare".into(), "LessThanInitialShare".into()] },
        resources: Resources { exclude_resource_prefixes: vec!["nvidia.com/mig-".into()] },
    }
}

/// Pushes Kueue's ConfigMap, `kueue-manager-config` in `kueue-system`.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let text = match yaml::to_string(&configuration(layout)) {
        Ok(text) => text,
        Err(error) => return diagnostics.push(super::yaml_diagnostic(model.project.span, "Kueue's configuration", &error)),
    };
    let config_map = ConfigMap { data: Some(BTreeMap::from([(CONFIG_KEY.to_owned(), text)])), ..ConfigMap::default() };
    let span = model.project.kubernetes.as_ref().map_or(model.project.span, |settings| settings.span);
    let result = ObjectName::fixed(KUEUE_NAMESPACE, span).and_then(|namespace| {
        let name = ObjectName::fixed(CONFIG_MAP, span)?;
        list.push(NewObject::namespaced(&kinds::CONFIG_MAP, namespace, name, span), config_map)
    });
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}
