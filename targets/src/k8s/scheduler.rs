//! A `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`) that registers placid's
//! scheduler extender, shipped as a ConfigMap in placid's namespace for a second scheduler
//! profile to mount. It is a config file, not an API object, so no schema covers it: the
//! typed structs below deny unknown fields, and the tests read it back through them.
//!
//! The extender server (`placid extender`) listens at the Service
//! `placid-extender.<namespace>.svc:8888` with the verbs `filter` and `prioritize`. Only pods
//! that request `nvidia.com/gpu` are sent to it (`managedResources`). Whether it is ignorable
//! is the policy's choice (`extender ignorable=`): a filter that is skipped when the extender
//! is down may place NVLink jobs across domains, and one that is not stops GPU scheduling
//! while it is down. Both are emitted only when the target deploys an extender.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use placid_lang::diag::Diagnostics;
use placid_lang::model::{ExtenderSettings, Model};
use serde::{Deserialize, Serialize};

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::yaml;

/// The ConfigMap key holding the configuration.
pub const CONFIG_KEY: &str = "scheduler-config.yaml";
/// The scheduler name jobs opt in with (`spec.schedulerName`).
pub const SCHEDULER_NAME: &str = "placid-scheduler";
/// The extender's port.
pub const EXTENDER_PORT: u16 = 8888;

/// The configuration file.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeSchedulerConfiguration {
    /// `kubescheduler.config.k8s.io/v1`.
    pub api_version: String,
    /// `KubeSchedulerConfiguration`.
    pub kind: String,
    /// Scheduler profiles.
    pub profiles: Vec<Profile>,
    /// Scheduler extenders.
    pub extenders: Vec<Extender>,
}

/// One scheduler profile.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// The name pods select with `spec.schedulerName`.
    pub scheduler_name: String,
}

/// A resource whose pods are sent to the extender.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedResource {
    /// The resource name.
    pub name: String,
    /// Whether kube-scheduler skips its own fit check for it.
    pub ignored_by_scheduler: bool,
}

/// One extender (k8s `staging/src/k8s.io/kube-scheduler/config/v1/types.go` `Extender`).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Extender {
    /// Base URL; verbs are appended.
    pub url_prefix: String,
    /// The filter verb.
    pub filter_verb: String,
    /// The prioritize verb.
    pub prioritize_verb: String,
    /// Multiplier of the extender's scores.
    pub weight: u32,
    /// Timeout of one call.
    pub http_timeout: String,
    /// Whether the extender caches nodes (then only names are sent).
    pub node_cache_capable: bool,
    /// Pods requesting these resources are sent to the extender.
    pub managed_resources: Vec<ManagedResource>,
    /// Whether scheduling proceeds when the extender is unreachable.
    pub ignorable: bool,
}

/// The configuration for an extender in `namespace`.
pub fn configuration(namespace: &ObjectName, extender: &ExtenderSettings) -> KubeSchedulerConfiguration {
    KubeSchedulerConfiguration {
        api_version: "kubescheduler.config.k8s.io/v1".into(),
        kind: "KubeSchedulerConfiguration".into(),
        profiles: vec![Profile { scheduler_name: SCHEDULER_NAME.into() }],
        extenders: vec![Extender {
            url_prefix: format!("http://placid-extender.{namespace}.svc:{EXTENDER_PORT}"),
            filter_verb: "filter".into(),
            prioritize_verb: "prioritize".into(),
            weight: 1,
            http_timeout: "5s".into(),
            node_cache_capable: false,
            managed_resources: vec![ManagedResource { name: "nvidia.com/gpu".into(), ignored_by_scheduler: false }],
            ignorable: extender.ignorable,
        }],
    }
}

/// Pushes the ConfigMap holding the configuration, when the target deploys an extender.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let Some(extender) = model.project.kubernetes.as_ref().and_then(|settings| settings.extender.as_ref()) else { return };
    let text = match yaml::to_string(&configuration(&layout.namespace, extender)) {
        Ok(text) => text,
        Err(error) => return diagnostics.push(super::yaml_diagnostic(model.project.span, "the scheduler's configuration", &error)),
    };
    let config_map = ConfigMap { data: Some(BTreeMap::from([(CONFIG_KEY.to_owned(), text)])), ..ConfigMap::default() };
    let result = ObjectName::fixed("placid-scheduler-config", model.project.span).and_then(|name| {
        list.push(NewObject::namespaced(&kinds::CONFIG_MAP, layout.namespace.clone(), name, model.project.span), config_map)
    });
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}
