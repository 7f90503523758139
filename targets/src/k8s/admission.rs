//! Tier rules Kueue cannot enforce, as one ValidatingAdmissionPolicy (+ binding) per team.
//!
//! Kueue accepts any `kueue.x-k8s.io/priority-class` on any queue, and has no per-tier grace
//! period. The policy ties them together for `batch/v1` Jobs in the team's namespace: the
//! LocalQueue (named after the tier) must be one of the team's tiers; the Kueue priority class
//! label must name the same tier; the pod template must use the tier's PriorityClass (so a
//! non-preemptible tier also has the top pod priority); and a preemptible tier's pods must ask
//! for `terminationGracePeriodSeconds` of at least the tier's preemption window.
//!
//! Invariant: every string in a CEL expression is an object name (a DNS label) quoted by
//! [`cel_string`], so no policy text can change an expression's meaning.

use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use placid_lang::diag::Diagnostics;
use placid_lang::model::{Model, Preemption};

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};

const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
const PRIORITY_LABEL: &str = "kueue.x-k8s.io/priority-class";

/// A CEL string literal: single-quoted, with `\` and `'` escaped.
pub fn cel_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn label_variable(name: &str, label: &str) -> Variable {
    let label = cel_string(label);
    Variable {
        name: name.to_owned(),
        expression: format!("has(object.metadata.labels) && {label} in object.metadata.labels ? object.metadata.labels[{label}] : ''"),
    }
}

fn validation(expression: String, message: String) -> Validation {
    Validation { expression, message: Some(message), reason: Some("Forbidden".into()), message_expression: None }
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
        let mut validations = vec![
            validation(
                format!("variables.queue == '' || variables.queue in [{}]", tiers.join(", ")),
                format!("team {} may submit only to the LocalQueues of its tiers", team.name),
            ),
            validation(
                "variables.queue == '' || variables.priorityClass == variables.queue".to_owned(),
                format!("the {PRIORITY_LABEL} label must name the tier of the {QUEUE_LABEL} label"),
            ),
        ];
        for tier_id in &team.tiers {
            let tier = model.tier(tier_id.value);
            let tier_names = layout.tier(tier_id.value);
            let queue = cel_string(tier_names.object.as_str());
            validations.push(validation(
                format!(
                    "variables.queue != {queue} || (has(object.spec.template.spec.priorityClassName) && object.spec.template.spec.priorityClassName == {})",
                    cel_string(tier_names.priority_class.as_str())
                ),
                format!("jobs of tier {} must set priorityClassName: {}", tier.name, tier_names.priority_class),
            ));
            if let Preemption::Window { window, .. } = tier.preemption.value {
                validations.push(validation(
                    format!(
                        "variables.queue != {queue} || (has(object.spec.template.spec.terminationGracePeriodSeconds) && object.spec.template.spec.terminationGracePeriodSeconds >= {})",
                        window.seconds
                    ),
                    format!("jobs of tier {} must set terminationGracePeriodSeconds >= {} (the preemption window)", tier.name, window.seconds),
                ));
            }
        }
        let policy = ValidatingAdmissionPolicy {
            spec: Some(ValidatingAdmissionPolicySpec {
                failure_policy: Some("Fail".into()),
                match_constraints: Some(MatchResources {
                    resource_rules: Some(vec![NamedRuleWithOperations {
                        api_groups: Some(vec!["batch".into()]),
                        api_versions: Some(vec!["v1".into()]),
                        operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
                        resources: Some(vec!["jobs".into()]),
                        ..NamedRuleWithOperations::default()
                    }]),
                    ..MatchResources::default()
                }),
                variables: Some(vec![label_variable("queue", QUEUE_LABEL), label_variable("priorityClass", PRIORITY_LABEL)]),
                validations: Some(validations),
                ..ValidatingAdmissionPolicySpec::default()
            }),
            ..ValidatingAdmissionPolicy::default()
        };
        let binding = ValidatingAdmissionPolicyBinding {
            spec: Some(ValidatingAdmissionPolicyBindingSpec {
                policy_name: Some(policy_name.as_str().to_owned()),
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
        };
        for result in [
            list.push(NewObject::cluster(&kinds::VALIDATING_ADMISSION_POLICY, policy_name.clone(), team.span), &policy),
            list.push(NewObject::cluster(&kinds::VALIDATING_ADMISSION_POLICY_BINDING, policy_name.clone(), team.span), &binding),
        ] {
            if let Err(diagnostic) = result {
                diagnostics.push(diagnostic);
            }
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
