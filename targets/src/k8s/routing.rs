//! Tag-based tier routing (`route tag= tier= [class=]`) as one ValidatingAdmissionPolicy (+
//! binding) per team, emitted when the policy has routes, and, from Kubernetes 1.34, a
//! MutatingAdmissionPolicy that sets the routed labels and the class's placement first
//! ([`super::route_mutation`]).
//!
//! A workload of a [`MANAGED`](super::admission) kind that carries the tag label
//! (`<label-prefix>/tag`, [`PlacidKeys::tag`](super::names::PlacidKeys::tag)) must carry the
//! queue and WorkloadPriorityClass labels of the tier [`Model::routing`] gives its tag, and the
//! class label (`<label-prefix>/class`) of the route's class when it names one; a tag routed to
//! a tier the team may not use is refused with the same message as Slurm's and the engine's,
//! naming the team's policy rule. The message of each rule names the labels to set.
//!
//! Why validate as well as mutate: the mutating policy is a beta API that is off by default
//! on 1.34; the validating policy works on every supported cluster and tells the user what
//! to write where the mutation does not run.
//!
//! Invariant: the tag and every name reach CEL through [`cel_string`], and the tag is a checked
//! label value (a diagnostic at the route otherwise).

use k8s_openapi::api::admissionregistration::v1::{MatchCondition, ValidatingAdmissionPolicy, ValidatingAdmissionPolicySpec};
use placid_lang::diag::Diagnostics;
use placid_lang::model::{Model, Routing, TeamId};

use crate::k8s::admission::{cel_string, label_variable, managed_resources, push_team_policy, team_rule, validation};
use crate::k8s::layout::Layout;
use crate::k8s::names::{LabelValue, ObjectName};
use crate::k8s::objects::ObjectList;
use crate::k8s::placement;
use crate::k8s::route_mutation::{self, Routed};
use crate::k8s::workloads::{PRIORITY_LABEL, QUEUE_LABEL};

/// Pushes a routing policy and binding per team, when the policy has routes.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    if model.routes.is_empty() {
        return;
    }
    let keys = &layout.keys;
    let first_route = model.routes[0].span;
    let (tag_label, class_label) = match (keys.tag(), placement::class_key(layout, first_route)) {
        (Ok(tag), Ok(class)) => (tag, class),
        (tag, class) => {
            Extend::extend(diagnostics, tag.err().into_iter().chain(class.err()));
            return;
        }
    };
    // Each route's tag as a label value and its class as an object name, checked once.
    let mut routes = Vec::new();
    for route in &model.routes {
        let tag = LabelValue::from_name(&route.tag.value, route.tag.span);
        let class = route
            .class
            .as_ref()
            .map(|class| placement::class_label(layout, model.class(class.value), class.span).map(|(_, name)| name))
            .transpose();
        let placement =
            route.class.as_ref().map(|class| placement::of_class(layout, Some(model.class(class.value)), class.span)).transpose();
        match (tag, class, placement) {
            (Ok(tag), Ok(class), Ok(placement)) => routes.push((route, tag, class, placement)),
            (tag, class, placement) => Extend::extend(diagnostics, tag.err().into_iter().chain(class.err()).chain(placement.err())),
        }
    }
    if routes.len() != model.routes.len() {
        return;
    }
    let mutates = model.project.kubernetes.as_ref().is_some_and(|settings| settings.minor_version >= route_mutation::FIRST_MINOR);
    for (team_index, (team, names)) in model.teams.iter().zip(&layout.teams).enumerate() {
        let policy_name = match ObjectName::fixed(&format!("placid-route-{}", names.object), team.span) {
            Ok(name) => name,
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                continue;
            }
        };
        let mut validations = Vec::new();
        let mut routed = Vec::new();
        for (route, tag, class, placement) in &routes {
            let untagged = format!("variables.tag != {}", cel_string(tag.as_str()));
            let declared = match class {
                Some(class) => {
                    format!("route tag=\"{}\" tier=\"{}\" class=\"{class}\"", route.tag.value, model.tier(route.tier.value).name)
                }
                None => format!("route tag=\"{}\" tier=\"{}\"", route.tag.value, model.tier(route.tier.value).name),
            };
            match model.routing(tag.as_str(), TeamId::from_index(team_index)) {
                // Not reached: the tag is the route's own.
                Routing::Unrouted => {}
                Routing::Routed { tier, .. } => {
                    routed.push(Routed { tag: tag.as_str(), tier: layout.tier(tier).object.as_str(), placement: placement.clone() });
                    let tier_object = cel_string(layout.tier(tier).object.as_str());
                    let mut expression = format!("variables.queue == {tier_object} && variables.priorityClass == {tier_object}");
                    let mut labels = format!("{QUEUE_LABEL}={0} and {PRIORITY_LABEL}={0}", layout.tier(tier).object);
                    if let Some(class) = class {
                        expression.push_str(&format!(" && variables.class == {}", cel_string(class.as_str())));
                        labels = format!("{QUEUE_LABEL}={0}, {PRIORITY_LABEL}={0} and {class_label}={class}", layout.tier(tier).object);
                    }
                    validations.push(validation(
                        format!("{untagged} || ({expression})"),
                        format!(
                            "workloads tagged {} run at tier {}: set the labels {labels} ({declared})",
                            route.tag.value,
                            model.tier(tier).name
                        ),
                    ));
                }
                Routing::Refused { message, .. } => validations.push(validation(
                    untagged,
                    format!("{message}: the policy rule `{}` does not list it ({declared})", team_rule(model, team)),
                )),
            }
        }
        let policy = ValidatingAdmissionPolicy {
            spec: Some(ValidatingAdmissionPolicySpec {
                failure_policy: Some("Fail".into()),
                match_constraints: Some(managed_resources()),
                // Only tagged workloads; a Pod without the queue label is not Kueue's (a Job's
                // pods inherit the Job's tag, and the Job was checked).
                match_conditions: Some(vec![MatchCondition {
                    name: "tagged".to_owned(),
                    expression: format!(
                        "has(object.metadata.labels) && {0} in object.metadata.labels && !(object.kind == 'Pod' && !({1} in object.metadata.labels))",
                        cel_string(tag_label.as_str()),
                        cel_string(QUEUE_LABEL)
                    ),
                }]),
                variables: Some(vec![
                    label_variable("tag", tag_label.as_str()),
                    label_variable("queue", QUEUE_LABEL),
                    label_variable("priorityClass", PRIORITY_LABEL),
                    label_variable("class", &class_label),
                ]),
                validations: Some(validations),
                ..ValidatingAdmissionPolicySpec::default()
            }),
            ..ValidatingAdmissionPolicy::default()
        };
        push_team_policy(list, diagnostics, layout, names, team, &policy_name, policy);
        if mutates && !routed.is_empty() {
            route_mutation::push(list, diagnostics, layout, (team, names), tag_label.as_str(), &routed);
        }
    }
}
