//! Routes that map jobs: one MutatingAdmissionPolicy (+ binding) per team with routed tags,
//! which sets the labels of the tier a tagged workload is routed to (`kueue.x-k8s.io/queue-name`
//! and `kueue.x-k8s.io/priority-class`) and the route's class label, as Slurm's job_submit.lua
//! rewrites a tagged job's QOS. The validating policy of [`super::routing`] still runs after
//! it (mutating admission comes first), so a cluster that does not serve the mutating API still
//! refuses what the route forbids, with the labels to set.
//!
//! Why a MutatingAdmissionPolicy and not a webhook placid serves: a webhook needs a serving
//! certificate, its rotation and a Service on every API request's path; the policy runs
//! inside the API server. Kubernetes serves it as `admissionregistration.k8s.io/v1beta1` from
//! 1.34 (behind the `MutatingAdmissionPolicy` feature gate and that API version's
//! `--runtime-config`), so it is emitted for a target `version` of 1.34 and later.
//!
//! Invariant: every string reaches CEL through [`cel_string`]; the tags are checked label
//! values and the tiers and classes object names.

use k8s_openapi::api::admissionregistration::v1::MatchResources;
use k8s_openapi::api::admissionregistration::v1beta1::{
    self as beta, ApplyConfiguration, MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, MutatingAdmissionPolicyBindingSpec,
    MutatingAdmissionPolicySpec, Mutation,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Team;

use crate::k8s::admission::{cel_string, managed_resources};
use crate::k8s::kinds;
use crate::k8s::layout::{Layout, TeamNames};
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::k8s::workloads::{PRIORITY_LABEL, QUEUE_LABEL};

/// The first Kubernetes minor version that serves MutatingAdmissionPolicy as `v1beta1`.
pub const FIRST_MINOR: u16 = 34;

/// A tag the team's workloads are routed by: the labels it sets.
pub struct Routed<'a> {
    /// The tag (a label value).
    pub tag: &'a str,
    /// The routed tier's object name (its LocalQueue and WorkloadPriorityClass).
    pub tier: &'a str,
    /// The route's class, as an object name, when it names one.
    pub class: Option<&'a str>,
}

/// The mutation of one routed tag: the tier's labels (and the class's) on a workload that
/// carries the tag, nothing on one that does not.
fn mutation(tag_label: &str, class_label: &str, routed: &Routed<'_>) -> Mutation {
    let mut labels = vec![(QUEUE_LABEL, routed.tier), (PRIORITY_LABEL, routed.tier)];
    if let Some(class) = routed.class {
        labels.push((class_label, class));
    }
    let labels: Vec<String> = labels.iter().map(|(key, value)| format!("{}: {}", cel_string(key), cel_string(value))).collect();
    let tag_label = cel_string(tag_label);
    let expression = format!(
        "object.metadata.labels[{tag_label}] == {} ? Object{{metadata: Object.metadata{{labels: {{{}}}}}}} : Object{{}}",
        cel_string(routed.tag),
        labels.join(", ")
    );
    Mutation {
        patch_type: "ApplyConfiguration".into(),
        apply_configuration: Some(ApplyConfiguration { expression: Some(expression) }),
        json_patch: None,
    }
}

/// The validating policies' match rules, in the beta API's types.
fn beta_resources(resources: MatchResources) -> beta::MatchResources {
    beta::MatchResources {
        resource_rules: resources.resource_rules.map(|rules| {
            rules
                .into_iter()
                .map(|rule| beta::NamedRuleWithOperations {
                    api_groups: rule.api_groups,
                    api_versions: rule.api_versions,
                    operations: rule.operations,
                    resource_names: rule.resource_names,
                    resources: rule.resources,
                    scope: rule.scope,
                })
                .collect()
        }),
        ..beta::MatchResources::default()
    }
}

/// Pushes `placid-route-<team>`'s mutating policy and its binding to the team's namespace.
pub fn push(
    list: &mut ObjectList,
    diagnostics: &mut Diagnostics,
    layout: &Layout,
    (team, names): (&Team, &TeamNames),
    labels: (&str, &str),
    routed: &[Routed<'_>],
) {
    let (tag_label, class_label) = labels;
    let policy = MutatingAdmissionPolicy {
        spec: Some(MutatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(beta_resources(managed_resources())),
            match_conditions: Some(vec![beta::MatchCondition {
                name: "tagged".into(),
                expression: format!("has(object.metadata.labels) && {} in object.metadata.labels", cel_string(tag_label)),
            }]),
            mutations: Some(routed.iter().map(|routed| mutation(tag_label, class_label, routed)).collect()),
            reinvocation_policy: Some("Never".into()),
            ..MutatingAdmissionPolicySpec::default()
        }),
        ..MutatingAdmissionPolicy::default()
    };
    let result = ObjectName::fixed(&format!("placid-route-{}", names.object), team.span).and_then(|name| {
        let binding = MutatingAdmissionPolicyBinding {
            spec: Some(MutatingAdmissionPolicyBindingSpec {
                policy_name: Some(name.as_str().to_owned()),
                match_resources: Some(beta::MatchResources {
                    namespace_selector: Some(LabelSelector {
                        match_labels: Some([(layout.team_label.as_str().to_owned(), names.object.as_str().to_owned())].into()),
                        match_expressions: None,
                    }),
                    ..beta::MatchResources::default()
                }),
                param_ref: None,
            }),
            ..MutatingAdmissionPolicyBinding::default()
        };
        list.push(NewObject::cluster(&kinds::MUTATING_ADMISSION_POLICY, name.clone(), team.span), policy)?;
        list.push(NewObject::cluster(&kinds::MUTATING_ADMISSION_POLICY_BINDING, name, team.span), binding)
    });
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}
