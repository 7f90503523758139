//! Routes that map jobs: one MutatingAdmissionPolicy (+ binding) per team with routed tags,
//! which sets the labels of the tier a tagged workload is routed to (`kueue.x-k8s.io/queue-name`
//! and `kueue.x-k8s.io/priority-class`) and, when the route names a class, the class's
//! placement ([`of_class`](super::placement::of_class), the same function the workload templates call): its pod
//! labels, its Kueue topology annotation and its node label as a `nodeSelector` key, on the pod
//! template of every [`MANAGED`](super::admission) kind. That is what Slurm's job_submit.lua does
//! to a tagged job's QOS and constraints. The validating policy of [`super::routing`] still runs
//! after it (mutating admission comes first), so a cluster that does not serve the mutating API
//! still refuses what the route forbids, with the labels to set.
//!
//! An ApplyConfiguration merges maps key by key and `replicatedJobs` by name, so the
//! submitter's own node affinity (its pool's cells), labels and annotations stay; a key the
//! routed class does not set (a TAS annotation of the other kind, `comm-gbps` of a class without
//! `min-bandwidth`) keeps the submitter's value, which an apply cannot remove.
//!
//! Why a MutatingAdmissionPolicy and not a webhook placid serves: a webhook needs a serving
//! certificate, its rotation and a Service on every API request's path; the policy runs
//! inside the API server. Kubernetes serves it as `admissionregistration.k8s.io/v1beta1` from
//! 1.34 (behind the `MutatingAdmissionPolicy` feature gate and that API version's
//! `--runtime-config`), so it is emitted for a target `version` of 1.34 and later.
//!
//! Invariant: every string reaches CEL through [`cel_string`]; the tags are checked label
//! values, the tiers object names, and the placement's keys and values checked labels.

use std::collections::BTreeMap;

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
use crate::k8s::placement::Placement;
use crate::k8s::workloads::{PRIORITY_LABEL, QUEUE_LABEL};

/// The first Kubernetes minor version that serves MutatingAdmissionPolicy as `v1beta1`.
pub const FIRST_MINOR: u16 = 34;

/// A tag the team's workloads are routed by: the labels it sets.
pub struct Routed<'a> {
    /// The tag (a label value).
    pub tag: &'a str,
    /// The routed tier's object name (its LocalQueue and WorkloadPriorityClass).
    pub tier: &'a str,
    /// The placement of the route's class, when it names one.
    pub placement: Option<Placement>,
}

/// A CEL map literal of `entries`.
fn cel_map<'e>(entries: impl IntoIterator<Item = (&'e String, &'e String)>) -> String {
    let entries: Vec<String> = entries.into_iter().map(|(key, value)| format!("{}: {}", cel_string(key), cel_string(value))).collect();
    format!("{{{}}}", entries.join(", "))
}

/// A pod template's configuration of `placement`, the template's type being `path`
/// (`Object.spec.template`): its labels and annotations, and its pod spec's `nodeSelector`.
fn pod_template(path: &str, placement: &Placement) -> String {
    format!(
        "{path}{{metadata: {}, spec: {}}}",
        pod_metadata(&format!("{path}.metadata"), placement),
        pod_spec(&format!("{path}.spec"), placement)
    )
}

/// Pod metadata of type `path` with `placement`'s labels (and `labels`) and annotations.
fn pod_metadata(path: &str, placement: &Placement) -> String {
    let mut fields = vec![format!("labels: {}", cel_map(&placement.labels))];
    if !placement.annotations.is_empty() {
        fields.push(format!("annotations: {}", cel_map(&placement.annotations)));
    }
    format!("{path}{{{}}}", fields.join(", "))
}

/// A pod spec of type `path` with `placement`'s node selector.
fn pod_spec(path: &str, placement: &Placement) -> String {
    match placement.node_selector.is_empty() {
        true => format!("{path}{{}}"),
        false => format!("{path}{{nodeSelector: {}}}", cel_map(&placement.node_selector)),
    }
}

/// The `spec` configuration that puts `placement` on the pods of each managed kind that has
/// one pod template per object (Job, JobSet by replicated job, Pod).
fn placement_spec(placement: &Placement) -> String {
    let job = format!("Object.spec{{template: {}}}", pod_template("Object.spec.template", placement));
    let job_set = format!(
        "Object.spec{{replicatedJobs: object.spec.replicatedJobs.map(job, Object.spec.replicatedJobs{{name: job.name, template: Object.spec.replicatedJobs.template{{spec: Object.spec.replicatedJobs.template.spec{{template: {}}}}}}})}}",
        pod_template("Object.spec.replicatedJobs.template.spec.template", placement)
    );
    let pod = pod_spec("Object.spec", placement);
    format!("object.kind == 'Job' ? {job} : object.kind == 'JobSet' ? {job_set} : object.kind == 'Pod' ? {pod} : Object.spec{{}}")
}

/// The mutation of one routed tag: the tier's labels (and the class's placement) on a
/// workload that carries the tag, nothing on one that does not.
fn mutation(tag_label: &str, routed: &Routed<'_>) -> Mutation {
    let tier = routed.tier.to_owned();
    let mut labels = BTreeMap::from([(QUEUE_LABEL.to_owned(), tier.clone()), (PRIORITY_LABEL.to_owned(), tier)]);
    let mut fields = Vec::new();
    if let Some(placement) = &routed.placement {
        // A Pod is its own template; a Job's class label is on the Job too, as the
        // validating policy reads it there.
        labels.extend(placement.labels.iter().map(|(key, value)| (key.clone(), value.clone())));
        fields.push(format!("spec: {}", placement_spec(placement)));
    }
    let metadata = match routed.placement.as_ref().filter(|placement| !placement.annotations.is_empty()) {
        // A Pod's TAS annotation is its own; other kinds' go on their pod templates.
        Some(placement) => format!(
            "object.kind == 'Pod' ? Object.metadata{{labels: {0}, annotations: {1}}} : Object.metadata{{labels: {0}}}",
            cel_map(&labels),
            cel_map(&placement.annotations)
        ),
        None => format!("Object.metadata{{labels: {}}}", cel_map(&labels)),
    };
    fields.insert(0, format!("metadata: {metadata}"));
    let expression = format!(
        "object.metadata.labels[{}] == {} ? Object{{{}}} : Object{{}}",
        cel_string(tag_label),
        cel_string(routed.tag),
        fields.join(", ")
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
    tag_label: &str,
    routed: &[Routed<'_>],
) {
    let policy = MutatingAdmissionPolicy {
        spec: Some(MutatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(beta_resources(managed_resources())),
            match_conditions: Some(vec![beta::MatchCondition {
                name: "tagged".into(),
                expression: format!("has(object.metadata.labels) && {} in object.metadata.labels", cel_string(tag_label)),
            }]),
            mutations: Some(routed.iter().map(|routed| mutation(tag_label, routed)).collect()),
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
