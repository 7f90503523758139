//! Money as Slurm billing units. Slurm has no currency: a job's `billing` TRES is the sum of
//! its partition's `TRESBillingWeights`, accrued per minute, and budgets are association
//! `GrpTRESMins=billing=`. placid's unit: a GPU weight is the GPU-hour price in minor currency
//! units (cents), so one billing-minute is 1/60 of a minor unit and a daily budget of `b`
//! minor units is `b * 60` billing-minutes. Everything stays an exact integer.
//!
//! Weights sit on untyped `GRES/gpu`: a typed weight (`GRES/gpu:h200`) counts zero at
//! submit-time limit checks for jobs asking `--gres=gpu:N`, so budgets would never hold.
//!
//! `TRESBillingWeights` is per partition (22.05 through 25.11 have no per-node weight), so a
//! pool whose nodes have different prices becomes one partition per price ([`partitions`]):
//! every job is billed at the price of the nodes it runs on. A job of the pool names all of
//! them (`--partition=mixed_70,mixed_190,mixed_420`) and starts in whichever can run it first.

use placid_lang::model::{Class, Model, Node, NodeId, Pool, PoolId, Tier};
use placid_lang::units::Money;

use super::names;

/// One partition of a pool: its nodes of one GPU-hour price.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PricePartition {
    /// The partition's name: the pool's, or `<pool>_<price>` when the pool spans prices.
    pub name: String,
    /// Member nodes, in the pool's order.
    pub nodes: Vec<NodeId>,
    /// The billing weight of one GPU: the GPU-hour price in minor units (0 when unpriced).
    pub gpu_weight: u64,
}

/// The partitions of `pool`, cheapest first.
pub fn partitions(model: &Model, pool: &Pool) -> Vec<PricePartition> {
    let mut groups: Vec<PricePartition> = Vec::new();
    for id in &pool.nodes {
        let weight = node_weight(model.node(*id));
        match groups.iter_mut().find(|group| group.gpu_weight == weight) {
            Some(group) => group.nodes.push(*id),
            None => groups.push(PricePartition { name: String::new(), nodes: vec![*id], gpu_weight: weight }),
        }
    }
    groups.sort_by_key(|group| group.gpu_weight);
    let split = groups.len() > 1;
    for group in &mut groups {
        group.name = if split { format!("{}_{}", names::partition(pool), group.gpu_weight) } else { names::partition(pool) };
    }
    groups
}

/// The partitions of `pool` as one `--partition` list for a job of `class`, in the order
/// placement tries them: cheapest first, and for a class that prefers NVLink the partitions
/// holding an NVLink node before the others ([`Model::nvlink_preferred_first`]). Slurm starts
/// a job in the first listed partition that can run it, so the order is the engine's.
pub fn partition_list(model: &Model, pool: &Pool, class: Option<&Class>) -> String {
    let ordered = model.nvlink_preferred_first(class, partitions(model, pool), |node, partition| partition.nodes.contains(&node));
    ordered.into_iter().map(|partition| partition.name).collect::<Vec<_>>().join(",")
}

fn node_weight(node: &Node) -> u64 {
    u64::try_from(node.placement_price()).unwrap_or(0)
}

/// A daily budget in billing-minutes. Amounts are at most [`Money::MAX_MINOR`], which leaves
/// room for the factor 60; a saturated value would be Slurm's INFINITE, no limit at all.
pub fn budget_minutes(budget: Money) -> u64 {
    minor_units(budget) * 60
}

/// A tier's daily budget as the QOS's `GrpTRESMins=gres/gpu=`: GPU-minutes at the dearest
/// GPU of the pools the tier may run in, so the tier never spends more than its budget (and
/// exactly its budget when those pools have one price; on cheaper GPUs it stops early). Not
/// `billing=`: a QOS limit on a TRES replaces the association's limit on the same TRES for the
/// QOS's jobs (Slurm's limit hierarchy, seen live: a research job past its team budget ran once
/// P2 had a billing limit), so a tier budget in billing would switch the team budgets off.
/// `None` when no node of those pools has a price: the tier's jobs cost nothing.
pub fn tier_budget_gpu_minutes(model: &Model, tier: &Tier, budget: Money) -> Option<u64> {
    let dearest = (0..model.pools.len())
        .map(PoolId::from_index)
        .filter(|pool| model.tier_may_use(tier, *pool))
        .flat_map(|pool| &model.pool(pool).nodes)
        .map(|id| node_weight(model.node(*id)))
        .max()
        .filter(|weight| *weight > 0)?;
    Some(minor_units(budget) * 60 / dearest)
}

/// Whether any team, cost center or tier has a daily budget.
pub fn has_budgets(model: &Model) -> bool {
    model.teams.iter().any(|team| team.daily_budget.is_some())
        || model.cost_centers.iter().any(|center| center.daily_budget.is_some())
        || model.tiers.iter().any(|tier| tier.daily_budget.is_some())
}

fn minor_units(money: Money) -> u64 {
    u64::try_from(money.minor).unwrap_or(0)
}
