//! Tier rules Kueue cannot enforce, as one ValidatingAdmissionPolicy (+ binding) per team.
//!
//! The policy covers every workload kind Kueue manages ([`MANAGED`]: Jobs, JobSets, RayJobs,
//! PyTorchJobs, and Pods that carry the queue label, Kueue's plain-pod integration) in the
//! team's namespace. A workload must name a LocalQueue (named after a tier) of one of the
//! team's tiers, and a tier the team may not use is refused with a message naming the policy
//! rule (`team "research" { tiers "P2" }`). Priority is the Kueue WorkloadPriorityClass label,
//! which must name the same tier: users never hard-code a PriorityClass name, and a pod that
//! sets one anyway must set its tier's (so no job raises its pods' scheduler priority). Kueue
//! has no per-tier grace period, so a preemptible tier's pods must ask for
//! `terminationGracePeriodSeconds` of at least the tier's preemption window.
//!
//! Invariant: every string in a CEL expression is an object name (a DNS label) quoted by
//! [`cel_string`], so no policy text can change an expression's meaning.

use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use placid_lang::diag::Diagnostics;
use placid_lang::model::{Model, Preemption, Team};

use crate::k8s::kinds;
use crate::k8s::layout::{Layout, TeamNames};
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::k8s::workloads::{PRIORITY_LABEL, QUEUE_LABEL};

/// A workload kind Kueue manages: API group, version, resource, kind, and the CEL expression
/// of its pod specs (a list), evaluated only for objects of that kind.
struct Managed {
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    kind: &'static str,
    pod_specs: &'static str,
}

/// The kinds Kueue's integrations manage that placid's teams submit.
const MANAGED: &[Managed] = &[
    Managed { group: "batch", version: "v1", resource: "jobs", kind: "Job", pod_specs: "[object.spec.template.spec]" },
    Managed {
        group: "jobset.x-k8s.io",
        version: "v1alpha2",
        resource: "jobsets",
        kind: "JobSet",
        pod_specs: "object.spec.replicatedJobs.map(job, job.template.spec.template.spec)",
    },
    Managed {
        group: "ray.io",
        version: "v1",
        resource: "rayjobs",
        kind: "RayJob",
        pod_specs: "has(object.spec.rayClusterSpec) ? [object.spec.rayClusterSpec.headGroupSpec.template.spec] + (has(object.spec.rayClusterSpec.workerGroupSpecs) ? object.spec.rayClusterSpec.workerGroupSpecs.map(group, group.template.spec) : []) : []",
    },
    Managed {
        group: "kubeflow.org",
        version: "v1",
        resource: "pytorchjobs",
        kind: "PyTorchJob",
        pod_specs: "object.spec.pytorchReplicaSpecs.map(role, object.spec.pytorchReplicaSpecs[role].template.spec)",
    },
    // Pods without the queue label are not Kueue's (a Job's pods among them): `managed` below.
    Managed { group: "", version: "v1", resource: "pods", kind: "Pod", pod_specs: "[object.spec]" },
];

/// The pod specs of the object, by kind.
fn pod_specs_variable() -> Variable {
    let expression = MANAGED.iter().rev().fold("[]".to_owned(), |otherwise, managed| {
        format!("object.kind == {} ? ({}) : ({otherwise})", cel_string(managed.kind), managed.pod_specs)
    });
    Variable { name: "podSpecs".to_owned(), expression }
}

/// A CEL string literal: single-quoted, with `\` and `'` escaped.
pub fn cel_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The variable `name`: the value of the object's label `label`, or `''` when unset.
pub(super) fn label_variable(name: &str, label: &str) -> Variable {
    let label = cel_string(label);
    Variable {
        name: name.to_owned(),
        expression: format!("has(object.metadata.labels) && {label} in object.metadata.labels ? object.metadata.labels[{label}] : ''"),
    }
}

/// A rule that refuses with `message` where `expression` is false.
pub(super) fn validation(expression: String, message: String) -> Validation {
    Validation { expression, message: Some(message), reason: Some("Forbidden".into()), message_expression: None }
}

/// The policy rule naming the tiers `team` may use, as the user wrote it
/// (`team "research" { tiers "P2" }`), for messages.
pub(super) fn team_rule(model: &Model, team: &Team) -> String {
    let tiers: Vec<String> = team.tiers.iter().map(|tier| format!("\"{}\"", model.tier(tier.value).name)).collect();
    format!("team \"{}\" {{ tiers {} }}", team.name, tiers.join(" "))
}

/// Creations and updates of every [`MANAGED`] kind.
pub(super) fn managed_resources() -> MatchResources {
    MatchResources {
        resource_rules: Some(
            MANAGED
                .iter()
                .map(|managed| NamedRuleWithOperations {
                    api_groups: Some(vec![managed.group.into()]),
                    api_versions: Some(vec![managed.version.into()]),
                    operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
                    resources: Some(vec![managed.resource.into()]),
                    ..NamedRuleWithOperations::default()
                })
                .collect(),
        ),
        ..MatchResources::default()
    }
}

/// Binds `policy` to the namespace of the team named `names`, denying what it refuses.
fn team_binding(layout: &Layout, names: &TeamNames, policy: &ObjectName) -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(policy.as_str().to_owned()),
            validation_actions: Some(vec!["Deny".into()]),
            match_resources: Some(MatchResources {
                namespace_selector: Some(LabelSelector {
                    match_labels: Some([(layout.team_label.as_str().to_owned(), names.object.as_str().to_owned())].into()),
                    match_expressions: None,
                }),
                ..MatchResources::default()
            }),
            ..ValidatingAdmissionPolicyBindingSpec::default()
        }),
        ..ValidatingAdmissionPolicyBinding::default()
    }
}

/// Pushes a policy and a binding per team.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    for (team, names) in model.teams.iter().zip(&layout.teams) {
        let policy_name = match ObjectName::fixed(&format!("placid-team-{}", names.object), team.span) {
            Ok(name) => name,
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                continue;
            }
        };
        let tiers: Vec<String> = team.tiers.iter().map(|tier| cel_string(layout.tier(tier.value).object.as_str())).collect();
        let rule = team_rule(model, team);
        let mut validations = vec![validation(
            "variables.queue != ''".to_owned(),
            format!("workloads of team {} must carry the {QUEUE_LABEL} label, naming one of its tiers ({rule})", team.name),
        )];
        for (tier_index, tier) in model.tiers.iter().enumerate() {
            if team.tiers.iter().any(|allowed| allowed.value.index() == tier_index) {
                continue;
            }
            let queue = cel_string(layout.tiers[tier_index].object.as_str());
            validations.push(validation(
                format!("variables.queue != {queue}"),
                format!("team {} may not use tier {}: the policy rule `{rule}` does not list it", team.name, tier.name),
            ));
        }
        validations.extend([
            validation(
                format!("variables.queue in [{}]", tiers.join(", ")),
                format!("team {} may submit only to the LocalQueues of its tiers ({rule})", team.name),
            ),
            validation(
                "variables.priorityClass == variables.queue".to_owned(),
                format!("the {PRIORITY_LABEL} label (the WorkloadPriorityClass) must name the tier of the {QUEUE_LABEL} label"),
            ),
        ]);
        for tier_id in &team.tiers {
            let tier = model.tier(tier_id.value);
            let tier_names = layout.tier(tier_id.value);
            let queue = cel_string(tier_names.object.as_str());
            validations.push(validation(
                format!(
                    "variables.queue != {queue} || variables.podSpecs.all(spec, !has(spec.priorityClassName) || spec.priorityClassName == {})",
                    cel_string(tier_names.priority_class.as_str())
                ),
                format!("pods of tier {} may set no priorityClassName but {} (priority comes from the {PRIORITY_LABEL} label)", tier.name, tier_names.priority_class),
            ));
            if let Preemption::Window { window, .. } = tier.preemption.value {
                validations.push(validation(
                    format!(
                        "variables.queue != {queue} || variables.podSpecs.all(spec, has(spec.terminationGracePeriodSeconds) && spec.terminationGracePeriodSeconds >= {})",
                        window.seconds
                    ),
                    format!("pods of tier {} must set terminationGracePeriodSeconds >= {} (the preemption window)", tier.name, window.seconds),
                ));
            }
        }
        // A Pod without the queue label is not Kueue's: every rule holds for it.
        for rule in &mut validations {
            rule.expression = format!("(object.kind == 'Pod' && variables.queue == '') || ({})", rule.expression);
        }
        let policy = ValidatingAdmissionPolicy {
            spec: Some(ValidatingAdmissionPolicySpec {
                failure_policy: Some("Fail".into()),
                match_constraints: Some(managed_resources()),
                variables: Some(vec![
                    label_variable("queue", QUEUE_LABEL),
                    label_variable("priorityClass", PRIORITY_LABEL),
                    pod_specs_variable(),
                ]),
                validations: Some(validations),
                ..ValidatingAdmissionPolicySpec::default()
            }),
            ..ValidatingAdmissionPolicy::default()
        };
        push_team_policy(list, diagnostics, layout, names, team, &policy_name, policy);
    }
}

/// Adds a team's policy and the binding that applies it to the team's namespace.
pub(super) fn push_team_policy(
    list: &mut ObjectList,
    diagnostics: &mut Diagnostics,
    layout: &Layout,
    names: &TeamNames,
    team: &Team,
    policy_name: &ObjectName,
    policy: ValidatingAdmissionPolicy,
) {
    let binding = team_binding(layout, names, policy_name);
    for result in [
        list.push(NewObject::cluster(&kinds::VALIDATING_ADMISSION_POLICY, policy_name.clone(), team.span), policy),
        list.push(NewObject::cluster(&kinds::VALIDATING_ADMISSION_POLICY_BINDING, policy_name.clone(), team.span), binding),
    ] {
        if let Err(diagnostic) = result {
            diagnostics.push(diagnostic);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cel_string;

    #[test]
    fn cel_strings_cannot_be_closed_early() {
        assert_eq!(cel_string("p0"), "'p0'");
        assert_eq!(cel_string("a' || true || '"), "'a\\' || true || \\''");
        assert_eq!(cel_string("a\\"), "'a\\\\'");
    }
}
