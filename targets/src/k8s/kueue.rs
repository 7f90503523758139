//! The builders of the Kueue `v1beta2` objects placid emits, from the typed content in
//! [`super::kueue_types`].
//!
//! Invariants: one ResourceFlavor per cell ([`super::layout::cells`]), selecting exactly the cell's
//! nodes by the cell label; every ClusterQueue lists its flavors in cost order, cheapest
//! first, so Kueue's flavor assigner, which takes the first flavor that fits, prefers cheap
//! capacity; the queue of a reserving tier lends nothing (`lendingLimit: 0` on every
//! resource) and borrows nothing, so its workloads are never reclaimed; every quota is
//! checked by [`super::webhook`] before it is emitted.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, TeamId};
use serde::Serialize;

use crate::k8s::kinds;
use crate::k8s::kueue_types::{
    Amount, ClusterQueueSpec, CohortSpec, FairSharing, FlavorQuotas, LocalQueueSpec, PreemptionSettings, QueueingStrategy, ReclaimPolicy,
    ResourceFlavorSpec, ResourceGroup, ResourceName, ResourceQuota, TopologyLevel, TopologySpec, WithinQueuePolicy,
};
use crate::k8s::layout::Layout;
use crate::k8s::layout::cells::Cell;
use crate::k8s::layout::quota::Quotas;
use crate::k8s::objects::{NewObject, ObjectList, WithSpec};
use crate::k8s::webhook;

/// The well-known hostname label: the finest Topology level, which lets Kueue replace a
/// failed node of a TAS workload.
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Pushes the Topology, Cohort, ResourceFlavors, ClusterQueues and LocalQueues.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let span = model.project.span;
    // Coarsest first; a chassis lies in one NVLink domain (E071), a domain in one rack (E140).
    let levels = [Some(&layout.rack_label), Some(&layout.domain_label), layout.chassis_label.as_ref()]
        .into_iter()
        .flatten()
        .map(|label| label.as_str())
        .chain([HOSTNAME_LABEL])
        .map(|label| TopologyLevel { node_label: label.to_owned() })
        .collect();
    push(list, diagnostics, NewObject::cluster(&kinds::TOPOLOGY, layout.project.clone(), span), WithSpec { spec: TopologySpec { levels } });
    push(list, diagnostics, NewObject::cluster(&kinds::COHORT, layout.project.clone(), span), WithSpec { spec: CohortSpec {} });
    for cell in &layout.cells.cells {
        let flavor = flavor_spec(layout, cell);
        // The span of the pool the cell is named after is the nearest policy element.
        let span = cell.group.pools.first().map_or(span, |pool| model.pool(*pool).span);
        push(list, diagnostics, NewObject::cluster(&kinds::RESOURCE_FLAVOR, cell.name.clone(), span), WithSpec { spec: flavor });
    }
    let quotas = Quotas::new(model, &layout.cells);
    for (team_index, team) in model.teams.iter().enumerate() {
        let spec = team_queue(model, layout, &quotas, team_index);
        diagnostics.extend(webhook::check_cluster_queue(&spec, team.span));
        push(
            list,
            diagnostics,
            NewObject::cluster(&kinds::CLUSTER_QUEUE, layout.teams[team_index].object.clone(), team.span),
            WithSpec { spec },
        );
    }
    for (tier_index, tier) in model.tiers.iter().enumerate() {
        let Some(queue) = &layout.tiers[tier_index].reserved_queue else { continue };
        let spec = reserved_queue(model, layout, &quotas, tier_index);
        if spec.resource_groups.is_empty() {
            diagnostics.push(
                Diagnostic::error(
                    Code::KueueEmptyReservedQueue,
                    tier.span,
                    format!("tier `{}` is never preempted but reserves no GPUs: its ClusterQueue `{queue}` would admit no job", tier.name),
                )
                .label("no `reserve`")
                .help("add `reserve pool=\"...\" gpus=N` for each pool the tier runs in"),
            );
        }
        diagnostics.extend(webhook::check_cluster_queue(&spec, tier.span));
        push(list, diagnostics, NewObject::cluster(&kinds::CLUSTER_QUEUE, queue.clone(), tier.span), WithSpec { spec });
    }
    for (team_index, team) in model.teams.iter().enumerate() {
        let names = &layout.teams[team_index];
        for tier in &team.tiers {
            let tier_names = layout.tier(tier.value);
            let cluster_queue = tier_names.reserved_queue.clone().unwrap_or_else(|| names.object.clone());
            let meta = NewObject::namespaced(&kinds::LOCAL_QUEUE, names.namespace.clone(), tier_names.object.clone(), tier.span);
            push(list, diagnostics, meta, WithSpec { spec: LocalQueueSpec { cluster_queue } });
        }
    }
}

fn push<T: Serialize + Send + Sync + 'static>(list: &mut ObjectList, diagnostics: &mut Diagnostics, meta: NewObject, content: T) {
    if let Err(diagnostic) = list.push(meta, content) {
        diagnostics.push(diagnostic);
    }
}

/// A cell's flavor. It selects the cell label alone: Kueue's flavor assigner compares a pod's
/// `nodeSelector` and required node affinity with a flavor's `nodeLabels` on the keys the
/// flavors of the resource group use, and ignores every other key. A pod that asks for a pool
/// by its membership label would match every flavor; one that asks for
/// `<prefix>/cell In [the pool's cells]` matches exactly the pool's flavors.
fn flavor_spec(layout: &Layout, cell: &Cell) -> ResourceFlavorSpec {
    let node_labels = BTreeMap::from([(layout.cell_label.as_str().to_owned(), cell.name.as_str().to_owned())]);
    let (node_taints, tolerations) = if let Some(pool) = cell.group.fenced {
        let key = layout.reserved_taint.as_str().to_owned();
        let value = layout.pool(pool).flavor.as_str().to_owned();
        let taint = Taint { key: key.clone(), value: Some(value.clone()), effect: "NoSchedule".into(), time_added: None };
        let toleration = Toleration {
            key: Some(key),
            operator: Some("Equal".into()),
            value: Some(value),
            effect: Some("NoSchedule".into()),
            toleration_seconds: None,
        };
        (vec![taint], vec![toleration])
    } else {
        (Vec::new(), Vec::new())
    };
    ResourceFlavorSpec { node_labels, node_taints, tolerations, topology_name: layout.project.clone() }
}

/// Namespaces of these teams; none at all (not `{}`, which is every namespace) when the list
/// is empty, since `In` with no values is invalid.
fn team_selector(layout: &Layout, teams: Vec<String>) -> Option<LabelSelector> {
    if teams.is_empty() {
        return None;
    }
    Some(LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: layout.team_label.as_str().to_owned(),
            operator: "In".into(),
            values: Some(teams),
        }]),
        match_labels: None,
    })
}

/// A team's queue: every cell, cheapest first, nominal quota from the team's share of what the
/// cell's reservations leave. Teams allowed a backfill tier may borrow everything the others hold
/// there while they leave it idle; the rest may not borrow.
fn team_queue(model: &Model, layout: &Layout, quotas: &Quotas, team_index: usize) -> ClusterQueueSpec {
    let team = &model.teams[team_index];
    let flavors: Vec<FlavorQuotas> = layout
        .cells
        .cells
        .iter()
        .enumerate()
        .map(|(cell_index, cell)| {
            let nominal = quotas.teams[team_index][cell_index];
            let borrowable = quotas.borrowable(model, TeamId::from_index(team_index), cell_index, nominal);
            let resources = ResourceName::COVERED
                .iter()
                .map(|resource| ResourceQuota {
                    name: *resource,
                    nominal_quota: Amount { resource: *resource, value: resource.amount(nominal) },
                    borrowing_limit: Some(Amount { resource: *resource, value: resource.amount(borrowable) }),
                    lending_limit: None,
                })
                .collect();
            FlavorQuotas { name: cell.name.clone(), resources }
        })
        .collect();
    let resource_groups =
        if flavors.is_empty() { Vec::new() } else { vec![ResourceGroup { covered_resources: ResourceName::COVERED.to_vec(), flavors }] };
    ClusterQueueSpec {
        cohort_name: Some(layout.project.clone()),
        namespace_selector: team_selector(layout, vec![layout.teams[team_index].object.as_str().to_owned()]),
        fair_sharing: Some(FairSharing { weight: team.share.value.to_string() }),
        // The team's tiers with a queue of their own submit there.
        queueing_strategy: QueueingStrategy::of(
            team.tiers.iter().map(|tier| model.tier(tier.value)).filter(|tier| !tier.runs_on_reservations()),
        ),
        preemption: PreemptionSettings {
            reclaim_within_cohort: ReclaimPolicy::LowerPriority,
            within_cluster_queue: WithinQueuePolicy::LowerPriority,
        },
        resource_groups,
    }
}

/// The queue of a tier with reservations: only the cells of its reservations, nothing lent, nothing
/// borrowed, no preemption in either direction, open to the teams allowed the tier.
fn reserved_queue(model: &Model, layout: &Layout, quotas: &Quotas, tier_index: usize) -> ClusterQueueSpec {
    let tier_id = placid_lang::model::TierId::from_index(tier_index);
    let flavors: Vec<FlavorQuotas> = (0..layout.cells.cells.len())
        .filter(|cell_index| quotas.tiers[tier_index][*cell_index].gpus > 0)
        .map(|cell_index| {
            let nominal = quotas.tiers[tier_index][cell_index];
            let resources = ResourceName::COVERED
                .iter()
                .map(|resource| ResourceQuota {
                    name: *resource,
                    nominal_quota: Amount { resource: *resource, value: resource.amount(nominal) },
                    borrowing_limit: Some(Amount { resource: *resource, value: 0 }),
                    lending_limit: Some(Amount { resource: *resource, value: 0 }),
                })
                .collect();
            FlavorQuotas { name: layout.cells.cells[cell_index].name.clone(), resources }
        })
        .collect();
    let teams: Vec<String> = model
        .teams
        .iter()
        .zip(&layout.teams)
        .filter(|(team, _)| team.tiers.iter().any(|tier| tier.value == tier_id))
        .map(|(_, names)| names.object.as_str().to_owned())
        .collect();
    let resource_groups =
        if flavors.is_empty() { Vec::new() } else { vec![ResourceGroup { covered_resources: ResourceName::COVERED.to_vec(), flavors }] };
    ClusterQueueSpec {
        cohort_name: Some(layout.project.clone()),
        namespace_selector: team_selector(layout, teams),
        fair_sharing: None,
        queueing_strategy: QueueingStrategy::of(std::iter::once(&model.tiers[tier_index])),
        preemption: PreemptionSettings { reclaim_within_cohort: ReclaimPolicy::Never, within_cluster_queue: WithinQueuePolicy::Never },
        resource_groups,
    }
}
