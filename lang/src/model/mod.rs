//! The checked model: the one intermediate representation every target reads.
//!
//! Invariants: every reference is resolved to an id that indexes the matching `Vec` of
//! [`Model`]; every quantity is normalised (seconds, bytes, bits/s, basis points, minor
//! currency units); every element keeps the span it was declared at, so any later stage can
//! point at the line that caused a problem. The model derives no `serde`: serialised forms
//! are written by hand where they are needed.

// The policy half of the model, one module per element; every type is re-exported here so
// `crate::model::Tier` and the like stay the one path other crates use.
mod alert;
pub mod cells;
mod class;
mod features;
mod ids;
pub mod inventory;
mod launch;
mod metric;
mod migration;
mod placement;
mod plan;
mod policy_test;
mod pool;
mod project;
mod routing;
mod score;
pub mod shares;
mod team;
mod telemetry;
mod tier;

pub use alert::*;
pub use class::*;
pub use features::{arch_code, capacity_code, comm_code};
pub use ids::*;
pub use inventory::*;
pub use launch::{EnvVar, Gang, Launch, RESERVED_ENV_PREFIX, env};
pub use metric::*;
pub use migration::*;
pub use plan::*;
pub use policy_test::*;
pub use pool::*;
pub use project::*;
pub use routing::*;
pub use score::*;
pub use team::*;
pub use telemetry::*;
pub use tier::*;

use crate::span::Span;
use crate::units::Bandwidth;

/// A project: its policy resolved against its inventory.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// The `project` node and target settings.
    pub project: Project,
    /// Nodes of the inventory, sorted by name; indexed by [`NodeId`].
    pub nodes: Vec<Node>,
    /// NVLink domains derived from the nodes, sorted by name; indexed by [`DomainId`].
    pub domains: Vec<Domain>,
    /// Racks derived from the nodes, sorted by name; indexed by [`RackId`].
    pub racks: Vec<Rack>,
    /// Pools, in declaration order; indexed by [`PoolId`].
    pub pools: Vec<Pool>,
    /// Tiers; indexed by [`TierId`].
    pub tiers: Vec<Tier>,
    /// Cost centers; indexed by [`CostCenterId`].
    pub cost_centers: Vec<CostCenter>,
    /// Teams; indexed by [`TeamId`].
    pub teams: Vec<Team>,
    /// Job classes; indexed by [`ClassId`].
    pub classes: Vec<Class>,
    /// Scoring rules; indexed by [`ScoreId`].
    pub scores: Vec<Score>,
    /// Staged placement plans; indexed by [`PlanId`].
    pub plans: Vec<Plan>,
    /// Metrics that gates, triggers and alerts refer to; indexed by [`MetricId`].
    pub metrics: Vec<Metric>,
    /// Migrations; indexed by [`MigrationId`].
    pub migrations: Vec<Migration>,
    /// Alerts; indexed by [`AlertId`].
    pub alerts: Vec<Alert>,
    /// Policy tests; indexed by [`TestId`].
    pub tests: Vec<PolicyTest>,
    /// Scheduler accounts of administrators (`admin-accounts`), whose jobs skip placid's
    /// submission rules (Slurm's job_submit.lua); Slurm's own limits still apply.
    pub admin_accounts: Vec<crate::span::Spanned<crate::name::Name>>,
    /// Tag-based tier routes, in declaration order ([`Model::routing`] resolves a tag).
    pub routes: Vec<Route>,
    /// Live NVLink telemetry for scoring and throttling (`telemetry`), if declared.
    pub telemetry: Option<Telemetry>,
}

impl Model {
    /// The node with this id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    /// The domain with this id.
    pub fn domain(&self, id: DomainId) -> &Domain {
        &self.domains[id.index()]
    }
    /// The bisection bandwidth of an NVLink domain: the NVLink bandwidth (sum over its links)
    /// of the weaker half of the domain's GPUs together, the ⌊n/2⌋ GPUs with the least. Half
    /// the GPUs can send no more than that to the other half at once, so it bounds every
    /// bisection; on a switched fabric (NVSwitch, NVL72), where each GPU reaches any other at
    /// its full bandwidth, it is the bisection bandwidth. A direct GPU-to-GPU mesh can have a
    /// smaller cut, which the inventory's links do not describe well enough to find. Zero for
    /// a domain of one GPU. The sum saturates, as [`Node::nvlink_bandwidth`] does.
    pub fn domain_bisection(&self, id: DomainId) -> Bandwidth {
        let mut per_gpu: Vec<u64> = self
            .domain(id)
            .nodes
            .iter()
            .flat_map(|node| &self.node(*node).gpus)
            .map(|gpu| gpu.links.iter().fold(0u64, |sum, link| sum.saturating_add(link.bandwidth.bits_per_second)))
            .collect();
        per_gpu.sort_unstable();
        let half = per_gpu.len() / 2;
        Bandwidth { bits_per_second: per_gpu[..half].iter().fold(0u64, |sum, bandwidth| sum.saturating_add(*bandwidth)) }
    }
    /// The rack with this id.
    pub fn rack(&self, id: RackId) -> &Rack {
        &self.racks[id.index()]
    }
    /// The pool with this id.
    pub fn pool(&self, id: PoolId) -> &Pool {
        &self.pools[id.index()]
    }
    /// The tier with this id.
    pub fn tier(&self, id: TierId) -> &Tier {
        &self.tiers[id.index()]
    }
    /// The cost center with this id.
    pub fn cost_center(&self, id: CostCenterId) -> &CostCenter {
        &self.cost_centers[id.index()]
    }
    /// The team with this id.
    pub fn team(&self, id: TeamId) -> &Team {
        &self.teams[id.index()]
    }
    /// The class with this id.
    pub fn class(&self, id: ClassId) -> &Class {
        &self.classes[id.index()]
    }
    /// The score with this id.
    pub fn score(&self, id: ScoreId) -> &Score {
        &self.scores[id.index()]
    }
    /// The plan with this id.
    pub fn plan(&self, id: PlanId) -> &Plan {
        &self.plans[id.index()]
    }
    /// The metric with this id.
    pub fn metric(&self, id: MetricId) -> &Metric {
        &self.metrics[id.index()]
    }

    /// The GPUs a migration's work uses on its source pool at once: GPUs x trials of every
    /// stage of a migrated class on the source pool, summed over all plans and capped at the
    /// pool's GPUs; the whole source pool when no such stage exists (services move it all).
    pub fn migration_workload_gpus(&self, migration: &Migration) -> u32 {
        let source = self.pool(migration.from.value);
        let stage_gpus: u64 = self
            .plans
            .iter()
            .flat_map(|plan| &plan.stages)
            .filter(|stage| stage.pool.value == migration.from.value)
            .filter(|stage| stage.class.as_ref().is_some_and(|class| migration.classes.iter().any(|moved| moved.value == class.value)))
            .map(|stage| u64::from(stage.gpus.value) * u64::from(stage.trials.max(1)))
            // Saturating is exact here: the result is capped at the pool's GPUs below.
            .fold(0, u64::saturating_add);
        if stage_gpus == 0 { source.gpus } else { u32::try_from(stage_gpus).unwrap_or(u32::MAX).min(source.gpus) }
    }

    /// Total GPUs of the inventory.
    pub fn total_gpus(&self) -> u32 {
        self.nodes.iter().map(|node| node.gpu_count()).sum()
    }

    /// The node named `name`, if any (nodes are sorted by name).
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes.binary_search_by(|node| node.name.as_str().cmp(name)).ok().map(NodeId::from_index)
    }

    /// The span of the project node, for diagnostics about the project as a whole.
    pub fn project_span(&self) -> Span {
        self.project.span
    }
}
