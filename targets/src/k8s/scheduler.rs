//! placid's scheduler: a second kube-scheduler, `placid-scheduler`, that runs a
//! `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`) registering placid's
//! scheduler extender. The configuration is a ConfigMap in placid's namespace; the
//! Deployment mounts it and passes it with `--config`, runs as its own ServiceAccount bound to
//! Kubernetes' `system:kube-scheduler` and `system:volume-scheduler` ClusterRoles, and elects
//! its leader on a lease of its own (`placid-scheduler` in placid's namespace, which a Role
//! lets it take), so it never contends with the cluster's default scheduler. A second
//! scheduler rather than the extender attached to the cluster's own: placid cannot edit the
//! default scheduler's flags on a managed control plane, and the pods that opt in with
//! `schedulerName` are exactly the ones the policy scores. The configuration is a config file,
//! not an API object, so no schema covers it: the typed structs below deny unknown fields, and
//! the tests read it back through them.
//!
//! The extender server (`placid extender`) listens at the Service
//! `placid-extender.<namespace>.svc:8888` with the verbs `filter` and `prioritize`. Only pods
//! that request `nvidia.com/gpu` are sent to it (`managedResources`). Whether it is ignorable
//! is the policy's choice (`extender ignorable=`): a filter that is skipped when the extender
//! is down may place NVLink jobs across domains, and one that is not stops GPU scheduling
//! while it is down. Both are emitted only when the target deploys an extender.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DeploymentSpec;
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, HTTPGetAction, PodSecurityContext, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, SeccompProfile, SecurityContext, ServiceAccount, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::model::{ExtenderSettings, Model};
use serde::{Deserialize, Serialize};

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList, WithSpec};
use crate::yaml;

/// The ConfigMap key holding the configuration.
pub const CONFIG_KEY: &str = "scheduler-config.yaml";
/// The scheduler name jobs opt in with (`spec.schedulerName`); also the name of the
/// scheduler's Deployment, ServiceAccount, lease and RBAC objects, and the value of its pods'
/// `app.kubernetes.io/name` label.
pub const SCHEDULER_NAME: &str = "placid-scheduler";
/// The extender's port.
pub const EXTENDER_PORT: u16 = 8888;
/// The scheduler's ConfigMap.
const CONFIG_MAP: &str = "placid-scheduler-config";
/// Where the Deployment mounts the ConfigMap.
const CONFIG_DIR: &str = "/etc/kubernetes/placid-scheduler";
/// kube-scheduler's secure port, where it answers `/healthz`.
const SECURE_PORT: i32 = 10_259;
/// Scheduler pods: one leads, the other takes over within the lease's duration.
const REPLICAS: i32 = 2;

/// The configuration file.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeSchedulerConfiguration {
    /// `kubescheduler.config.k8s.io/v1`.
    pub api_version: String,
    /// `KubeSchedulerConfiguration`.
    pub kind: String,
    /// Leader election among the scheduler's pods.
    pub leader_election: LeaderElection,
    /// Scheduler profiles.
    pub profiles: Vec<Profile>,
    /// Scheduler extenders.
    pub extenders: Vec<Extender>,
}

/// `leaderElection`: on a lease of placid's own, never the default scheduler's.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaderElection {
    /// Whether the pods elect a leader (only the leader schedules).
    pub leader_elect: bool,
    /// `leases`.
    pub resource_lock: String,
    /// The lease's name.
    pub resource_name: String,
    /// The lease's namespace.
    pub resource_namespace: String,
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
        leader_election: LeaderElection {
            leader_elect: true,
            resource_lock: "leases".into(),
            resource_name: SCHEDULER_NAME.into(),
            resource_namespace: namespace.as_str().to_owned(),
        },
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

/// Pushes the scheduler, when the target deploys an extender: its configuration, account,
/// RBAC and Deployment.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let Some(settings) = &model.project.kubernetes else { return };
    let Some(extender) = &settings.extender else { return };
    let text = match yaml::to_string(&configuration(&layout.namespace, extender)) {
        Ok(text) => text,
        Err(error) => return diagnostics.push(super::yaml_diagnostic(model.project.span, "the scheduler's configuration", &error)),
    };
    let span = extender.span;
    let namespace = &layout.namespace;
    let result = (|| -> Result<(), Diagnostic> {
        let name = || ObjectName::fixed(SCHEDULER_NAME, span);
        let config_map = ConfigMap { data: Some(BTreeMap::from([(CONFIG_KEY.to_owned(), text)])), ..ConfigMap::default() };
        list.push(NewObject::namespaced(&kinds::CONFIG_MAP, namespace.clone(), ObjectName::fixed(CONFIG_MAP, span)?, span), config_map)?;
        list.push(NewObject::namespaced(&kinds::SERVICE_ACCOUNT, namespace.clone(), name()?, span), ServiceAccount::default())?;
        let account = || Subject {
            kind: "ServiceAccount".into(),
            name: SCHEDULER_NAME.into(),
            namespace: Some(namespace.as_str().to_owned()),
            ..Subject::default()
        };
        for (suffix, role) in [("kube-scheduler", "system:kube-scheduler"), ("volume-scheduler", "system:volume-scheduler")] {
            let binding = ClusterRoleBinding {
                role_ref: RoleRef { api_group: RBAC_GROUP.into(), kind: "ClusterRole".into(), name: role.into() },
                subjects: Some(vec![account()]),
                ..ClusterRoleBinding::default()
            };
            list.push(
                NewObject::cluster(
                    &kinds::CLUSTER_ROLE_BINDING,
                    ObjectName::fixed(SCHEDULER_NAME, span)?.join(suffix, span, "binding")?,
                    span,
                ),
                binding,
            )?;
        }
        // `system:kube-scheduler` lets a scheduler update only the lease named `kube-scheduler`.
        let lease = Role {
            rules: Some(vec![
                PolicyRule {
                    api_groups: Some(vec!["coordination.k8s.io".into()]),
                    resources: Some(vec!["leases".into()]),
                    verbs: vec!["create".into()],
                    ..PolicyRule::default()
                },
                PolicyRule {
                    api_groups: Some(vec!["coordination.k8s.io".into()]),
                    resources: Some(vec!["leases".into()]),
                    resource_names: Some(vec![SCHEDULER_NAME.into()]),
                    verbs: vec!["get".into(), "update".into()],
                    ..PolicyRule::default()
                },
            ]),
            ..Role::default()
        };
        list.push(NewObject::namespaced(&kinds::ROLE, namespace.clone(), name()?, span), lease)?;
        let binding = RoleBinding {
            role_ref: RoleRef { api_group: RBAC_GROUP.into(), kind: "Role".into(), name: SCHEDULER_NAME.into() },
            subjects: Some(vec![account()]),
            ..RoleBinding::default()
        };
        list.push(NewObject::namespaced(&kinds::ROLE_BINDING, namespace.clone(), name()?, span), binding)?;
        list.push(
            NewObject::namespaced(&kinds::DEPLOYMENT, namespace.clone(), name()?, span),
            WithSpec { spec: deployment(settings.minor_version) },
        )
    })();
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}

/// The RBAC API group.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The image of the scheduler: Kubernetes' own kube-scheduler of the target's minor version
/// (its first patch release; kustomize's `images` pins another).
fn image(minor_version: u16) -> String {
    format!("registry.k8s.io/kube-scheduler:v1.{minor_version}.0")
}

fn deployment(minor_version: u16) -> DeploymentSpec {
    let labels = BTreeMap::from([("app.kubernetes.io/name".to_owned(), SCHEDULER_NAME.to_owned())]);
    let probe = |initial_delay| Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/healthz".into()),
            port: IntOrString::Int(SECURE_PORT),
            scheme: Some("HTTPS".into()),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: Some(initial_delay),
        period_seconds: Some(10),
        ..Probe::default()
    };
    let quantity = |text: &str| Quantity(text.to_owned());
    let container = Container {
        name: "kube-scheduler".into(),
        image: Some(image(minor_version)),
        command: Some(vec!["kube-scheduler".into(), format!("--config={CONFIG_DIR}/{CONFIG_KEY}")]),
        liveness_probe: Some(probe(15)),
        readiness_probe: Some(probe(1)),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([("cpu".into(), quantity("100m")), ("memory".into(), quantity("128Mi"))])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(65_532),
            read_only_root_filesystem: Some(true),
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities { drop: Some(vec!["ALL".into()]), ..Capabilities::default() }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(vec![VolumeMount {
            name: "config".into(),
            mount_path: CONFIG_DIR.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        }]),
        ..Container::default()
    };
    DeploymentSpec {
        replicas: Some(REPLICAS),
        selector: LabelSelector { match_labels: Some(labels.clone()), ..LabelSelector::default() },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta { labels: Some(labels), ..ObjectMeta::default() }),
            spec: Some(PodSpec {
                service_account_name: Some(SCHEDULER_NAME.into()),
                security_context: Some(PodSecurityContext {
                    run_as_non_root: Some(true),
                    seccomp_profile: Some(SeccompProfile { type_: "RuntimeDefault".into(), ..SeccompProfile::default() }),
                    ..PodSecurityContext::default()
                }),
                containers: vec![container],
                volumes: Some(vec![Volume {
                    name: "config".into(),
                    config_map: Some(ConfigMapVolumeSource { name: CONFIG_MAP.into(), ..ConfigMapVolumeSource::default() }),
                    ..Volume::default()
                }]),
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    }
}
