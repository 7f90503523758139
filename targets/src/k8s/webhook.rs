//! The rules Kueue enforces on ClusterQueues in its webhook and CRD CEL rules (kueue
//! `pkg/webhooks/clusterqueue_webhook.go`, `apis/kueue/v1beta2/clusterqueue_types.go`),
//! checked on the typed spec before it is emitted, so a policy that would be refused at sync
//! time is refused at build time instead (E055, E056), at the span of the team or tier.

use std::collections::BTreeSet;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::span::Span;

use crate::k8s::kueue_types::{Amount, ClusterQueueSpec};

/// Kueue's caps on a ClusterQueue.
const MAX_RESOURCE_GROUPS: usize = 16;
const MAX_FLAVORS_PER_GROUP: usize = 64;
const MAX_RESOURCES_PER_FLAVOR: usize = 64;

/// Every rule `spec` breaks, reported at `span`.
pub fn check_cluster_queue(spec: &ClusterQueueSpec, span: Span) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    let mut seen_flavors = BTreeSet::new();
    for group in &spec.resource_groups {
        for flavor in &group.flavors {
            if !seen_flavors.insert(&flavor.name) {
                quota_error(&mut diagnostics, span, format!("flavor `{}` appears in two resource groups", flavor.name));
            }
            if !flavor.resources.iter().map(|resource| resource.name).eq(group.covered_resources.iter().copied()) {
                quota_error(
                    &mut diagnostics,
                    span,
                    format!("the resources of flavor `{}` are not listed in `coveredResources` order", flavor.name),
                );
            }
            for resource in &flavor.resources {
                let limits = [resource.borrowing_limit, resource.lending_limit];
                if spec.cohort_name.is_none() && limits.iter().any(Option::is_some) {
                    quota_error(
                        &mut diagnostics,
                        span,
                        format!(
                            "`{}` of flavor `{}` has a borrowing or lending limit but the queue has no cohort",
                            resource.name.as_str(),
                            flavor.name
                        ),
                    );
                }
                if let Some(Amount { value: lending, .. }) = resource.lending_limit
                    && lending > resource.nominal_quota.value
                {
                    quota_error(
                        &mut diagnostics,
                        span,
                        format!(
                            "`{}` of flavor `{}` lends {lending}, more than its nominal quota {}",
                            resource.name.as_str(),
                            flavor.name,
                            resource.nominal_quota.value
                        ),
                    );
                }
            }
            if flavor.resources.len() > MAX_RESOURCES_PER_FLAVOR {
                diagnostics_limit(
                    &mut diagnostics,
                    span,
                    format!("flavor `{}` has more than {MAX_RESOURCES_PER_FLAVOR} resources", flavor.name),
                );
            }
        }
        if group.flavors.len() > MAX_FLAVORS_PER_GROUP {
            diagnostics_limit(
                &mut diagnostics,
                span,
                format!("a ClusterQueue would list {} flavors; Kueue accepts at most {MAX_FLAVORS_PER_GROUP}", group.flavors.len()),
            );
        }
    }
    if spec.resource_groups.len() > MAX_RESOURCE_GROUPS {
        diagnostics_limit(&mut diagnostics, span, format!("more than {MAX_RESOURCE_GROUPS} resource groups"));
    }
    diagnostics
}

fn quota_error(diagnostics: &mut Diagnostics, span: Span, message: String) {
    diagnostics.push(
        Diagnostic::error(Code::KueueQuotaInvalid, span, message)
            .label("Kueue would reject this ClusterQueue")
            .help("this is a placid bug or an extreme policy; report it with the policy"),
    );
}

fn diagnostics_limit(diagnostics: &mut Diagnostics, span: Span, message: String) {
    diagnostics.push(
        Diagnostic::error(Code::KueueLimitExceeded, span, message)
            .label("over Kueue's limit")
            .help("each pool becomes one ResourceFlavor: merge pools, or split the cluster into several projects"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::kueue_types::{
        FlavorQuotas, PreemptionSettings, QueueingStrategy, ReclaimPolicy, ResourceGroup, ResourceName, ResourceQuota, WithinQueuePolicy,
    };
    use crate::k8s::names::ObjectName;

    fn name(text: &str) -> ObjectName {
        ObjectName::fixed(text, Span::DETACHED).unwrap_or_else(|diagnostic| panic!("{}", diagnostic.message))
    }

    fn quota(resource: ResourceName, nominal: u64, lending: Option<u64>) -> ResourceQuota {
        ResourceQuota {
            name: resource,
            nominal_quota: Amount { resource, value: nominal },
            borrowing_limit: None,
            lending_limit: lending.map(|value| Amount { resource, value }),
        }
    }

    fn spec(cohort: Option<&str>, resources: Vec<ResourceQuota>) -> ClusterQueueSpec {
        ClusterQueueSpec {
            cohort_name: cohort.map(name),
            namespace_selector: None,
            fair_sharing: None,
            queueing_strategy: QueueingStrategy::StrictFifo,
            preemption: PreemptionSettings { reclaim_within_cohort: ReclaimPolicy::Never, within_cluster_queue: WithinQueuePolicy::Never },
            resource_groups: vec![ResourceGroup {
                covered_resources: vec![ResourceName::Cpu, ResourceName::Gpu],
                flavors: vec![FlavorQuotas { name: name("a"), resources }],
            }],
        }
    }

    fn codes(spec: &ClusterQueueSpec) -> Vec<Code> {
        check_cluster_queue(spec, Span::DETACHED).iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn a_valid_queue_passes() {
        assert_eq!(codes(&spec(Some("c"), vec![quota(ResourceName::Cpu, 4, Some(0)), quota(ResourceName::Gpu, 2, Some(2))])), []);
    }

    #[test]
    fn lending_more_than_nominal_is_refused() {
        assert_eq!(
            codes(&spec(Some("c"), vec![quota(ResourceName::Cpu, 4, None), quota(ResourceName::Gpu, 2, Some(3))])),
            [Code::KueueQuotaInvalid]
        );
    }

    #[test]
    fn limits_without_a_cohort_are_refused() {
        assert_eq!(
            codes(&spec(None, vec![quota(ResourceName::Cpu, 4, None), quota(ResourceName::Gpu, 2, Some(0))])),
            [Code::KueueQuotaInvalid]
        );
    }

    #[test]
    fn resources_out_of_covered_order_are_refused() {
        assert_eq!(
            codes(&spec(Some("c"), vec![quota(ResourceName::Gpu, 2, None), quota(ResourceName::Cpu, 4, None)])),
            [Code::KueueQuotaInvalid]
        );
    }

    #[test]
    fn too_many_flavors_are_refused() {
        let mut queue = spec(Some("c"), vec![quota(ResourceName::Cpu, 4, None), quota(ResourceName::Gpu, 2, None)]);
        let template = queue.resource_groups[0].flavors[0].clone();
        queue.resource_groups[0].flavors =
            (0..65).map(|index| FlavorQuotas { name: name(&format!("f{index}")), ..template.clone() }).collect();
        assert_eq!(codes(&queue), [Code::KueueLimitExceeded]);
    }
}
