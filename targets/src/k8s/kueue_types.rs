//! Typed content of the Kueue `v1beta2` objects placid emits (kueue
//! `apis/kueue/v1beta2/*_types.go`), apart from their builders (`kueue`) so that the builders
//! and the webhook rules (`webhook`) both read them without importing each other.
//!
//! Invariant: `reclaimWithinCohort: Any` cannot be written, because [`ReclaimPolicy`] has no
//! such variant (Any preempts borrowers whatever their priority, which would break a
//! non-preemptible tier).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use placid_lang::model::Tier;
use serde::Serialize;

use crate::k8s::layout::resources::Resources;
use crate::k8s::names::ObjectName;

/// A resource a ClusterQueue covers, in the order of `coveredResources`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceName {
    /// `cpu`.
    Cpu,
    /// `memory`.
    Memory,
    /// `nvidia.com/gpu` (NVIDIA's device plugin).
    Gpu,
}

impl ResourceName {
    /// Every covered resource, in `coveredResources` order. Kueue refuses workloads that
    /// request a resource their ClusterQueue does not cover, so CPU and memory are covered too.
    pub const COVERED: [ResourceName; 3] = [ResourceName::Cpu, ResourceName::Memory, ResourceName::Gpu];

    /// The Kubernetes resource name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceName::Cpu => "cpu",
            ResourceName::Memory => "memory",
            ResourceName::Gpu => "nvidia.com/gpu",
        }
    }

    /// How much of this resource `resources` holds (CPUs, MiB or GPUs).
    pub fn amount(self, resources: Resources) -> u64 {
        match self {
            ResourceName::Cpu => resources.cpu,
            ResourceName::Memory => resources.memory_mib,
            ResourceName::Gpu => resources.gpus,
        }
    }

    /// The quantity text of `amount` of this resource (`12`, `4096Mi`).
    pub fn quantity(self, amount: u64) -> String {
        match self {
            // A plain zero reads the same for every resource (`lendingLimit: 0`).
            ResourceName::Memory if amount > 0 => format!("{amount}Mi"),
            ResourceName::Memory | ResourceName::Cpu | ResourceName::Gpu => amount.to_string(),
        }
    }
}

impl Serialize for ResourceName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An amount of one resource, kept as a number so webhook rules can compare amounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Amount {
    /// Which resource (decides the unit).
    pub resource: ResourceName,
    /// CPUs, MiB or GPUs.
    pub value: u64,
}

impl Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.resource.quantity(self.value))
    }
}

/// `resourceGroups[].flavors[].resources[]`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuota {
    /// The resource.
    pub name: ResourceName,
    /// Guaranteed amount.
    pub nominal_quota: Amount,
    /// How much more may be borrowed from the cohort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<Amount>,
    /// How much of the nominal quota may be lent to the cohort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<Amount>,
}

/// `resourceGroups[].flavors[]`.
#[derive(Clone, Debug, Serialize)]
pub struct FlavorQuotas {
    /// The ResourceFlavor.
    pub name: ObjectName,
    /// One entry per covered resource, in the same order.
    pub resources: Vec<ResourceQuota>,
}

/// `resourceGroups[]`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceGroup {
    /// The resources the group covers.
    pub covered_resources: Vec<ResourceName>,
    /// Flavors in preference order.
    pub flavors: Vec<FlavorQuotas>,
}

/// Whom a workload may preempt to reclaim quota the cohort borrowed from its queue. There is
/// deliberately no `Any`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReclaimPolicy {
    /// Never reclaim.
    Never,
    /// Only lower-priority workloads.
    LowerPriority,
}

/// Whom a workload may preempt inside its own ClusterQueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WithinQueuePolicy {
    /// Never.
    Never,
    /// Only lower-priority workloads.
    LowerPriority,
}

/// `spec.preemption`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionSettings {
    /// Reclaiming lent quota.
    pub reclaim_within_cohort: ReclaimPolicy,
    /// Inside the queue.
    pub within_cluster_queue: WithinQueuePolicy,
}

/// `spec.fairSharing`.
#[derive(Clone, Debug, Serialize)]
pub struct FairSharing {
    /// The weight, a quantity.
    pub weight: String,
}

/// ClusterQueue `spec`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueueSpec {
    /// The cohort (renamed from `cohort` in v1beta2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort_name: Option<ObjectName>,
    /// Namespaces whose LocalQueues may point here (`{}` would be all; absent is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Fair-sharing weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharing>,
    /// Whether a workload that does not fit holds back the ones after it.
    pub queueing_strategy: QueueingStrategy,
    /// Preemption.
    pub preemption: PreemptionSettings,
    /// Quotas.
    pub resource_groups: Vec<ResourceGroup>,
}

/// How a ClusterQueue orders its pending workloads (by priority, then creation time) when
/// the first one does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum QueueingStrategy {
    /// The first one that does not fit holds back every later one: no job starts out of order.
    #[serde(rename = "StrictFIFO")]
    StrictFifo,
    /// A later workload that fits is admitted first: backfill, without a reservation.
    #[serde(rename = "BestEffortFIFO")]
    BestEffortFifo,
}

impl QueueingStrategy {
    /// The strategy of a queue admitting the jobs of `tiers`: strict when any of them may not
    /// backfill, since `backfill #false` promises order and `backfill #true` only allows
    /// skipping it (the checker warns where a backfilling tier loses that, E144).
    pub fn of<'a>(mut tiers: impl Iterator<Item = &'a Tier>) -> QueueingStrategy {
        if tiers.any(|tier| !tier.backfill) { QueueingStrategy::StrictFifo } else { QueueingStrategy::BestEffortFifo }
    }
}

/// ResourceFlavor `spec`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceFlavorSpec {
    /// The labels of the nodes the flavor stands for.
    pub node_labels: BTreeMap<String, String>,
    /// Taints of those nodes that workloads admitted elsewhere do not tolerate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_taints: Vec<Taint>,
    /// Tolerations Kueue adds to the workloads it admits on the flavor.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// The Topology whose levels the flavor's nodes are labelled with.
    pub topology_name: ObjectName,
}

/// `spec.levels[]` of a Topology.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologyLevel {
    /// The node label that holds the level's value.
    pub node_label: String,
}

/// Topology `spec`.
#[derive(Serialize)]
pub struct TopologySpec {
    /// Levels from the coarsest to the finest.
    pub levels: Vec<TopologyLevel>,
}

/// Cohort `spec`: empty, the cohort only groups the ClusterQueues that name it.
#[derive(Serialize)]
pub struct CohortSpec {}

/// LocalQueue `spec`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueSpec {
    /// The ClusterQueue the LocalQueue submits to.
    pub cluster_queue: ObjectName,
}
