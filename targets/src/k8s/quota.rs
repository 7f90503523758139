//! Quotas: how much of each flavor each ClusterQueue is guaranteed.
//!
//! Invariants: a flavor's capacity counts only the nodes its pods can reach (members of the
//! pool without another pool's reservation taint); reservations come off the top and go to
//! the reserving tier's queue; the rest is split between teams by share with the largest
//! remainder method, so the teams' quotas add up exactly to what is left (no GPU is invented
//! or lost to rounding).

use placid_lang::model::shares::{Fences, apportion};
use placid_lang::model::{Model, NodeId, PoolId};

/// One MiB: memory quotas are whole MiB so they print exactly.
const MIB: u64 = 1024 * 1024;

/// An amount of each covered resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPUs (hardware threads).
    pub cpu: u64,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// GPUs.
    pub gpus: u64,
}

impl Resources {
    fn minus(self, other: Resources) -> Resources {
        Resources {
            cpu: self.cpu.saturating_sub(other.cpu),
            memory_mib: self.memory_mib.saturating_sub(other.memory_mib),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    /// The sum of two amounts.
    pub fn plus(self, other: Resources) -> Resources {
        Resources { cpu: self.cpu + other.cpu, memory_mib: self.memory_mib + other.memory_mib, gpus: self.gpus + other.gpus }
    }

    /// The share of this amount that goes with `gpus` of its GPUs (CPU and memory follow the
    /// GPUs they sit beside).
    fn share_for_gpus(self, gpus: u64) -> Resources {
        let part = |amount: u64| if self.gpus == 0 { 0 } else { (u128::from(amount) * u128::from(gpus) / u128::from(self.gpus)) as u64 };
        Resources { cpu: part(self.cpu), memory_mib: part(self.memory_mib), gpus: gpus.min(self.gpus) }
    }
}

/// What pods admitted on `pool`'s flavor can use.
fn flavor_capacity(model: &Model, fences: &Fences<'_>, pool: PoolId) -> Resources {
    let mut total = Resources::default();
    for node_id in &model.pool(pool).nodes {
        if fences.reaches(pool, *node_id) {
            total = total.plus(node_resources(model, *node_id));
        }
    }
    total
}

fn node_resources(model: &Model, node_id: NodeId) -> Resources {
    let node = model.node(node_id);
    Resources {
        cpu: u64::from(node.cpu.harts),
        memory_mib: node.memory.map(|bytes| bytes.0 / MIB).unwrap_or(0),
        gpus: u64::from(node.gpu_count()),
    }
}

/// The guaranteed (nominal) quotas of every queue, by flavor.
#[derive(Clone, Debug)]
pub struct Quotas {
    /// `[team][pool]`.
    pub teams: Vec<Vec<Resources>>,
    /// `[tier][pool]`: reserved quota (zero where the tier reserves nothing).
    pub tiers: Vec<Vec<Resources>>,
    /// `[pool]`: each flavor's reachable capacity.
    pub flavors: Vec<Resources>,
}

impl Quotas {
    /// Computes the quotas of `model`.
    pub fn new(model: &Model) -> Quotas {
        let fences = model.fences();
        let flavors: Vec<Resources> =
            (0..model.pools.len()).map(|index| flavor_capacity(model, &fences, PoolId::from_index(index))).collect();
        let mut tiers = vec![vec![Resources::default(); model.pools.len()]; model.tiers.len()];
        for (tier_index, tier) in model.tiers.iter().enumerate() {
            for reservation in &tier.reservations {
                let slot = &mut tiers[tier_index][reservation.pool.index()];
                *slot = slot.plus(flavors[reservation.pool.index()].share_for_gpus(u64::from(reservation.gpus)));
            }
        }
        let shares: Vec<u64> = model.teams.iter().map(|team| u64::from(team.share.value)).collect();
        let mut teams = vec![vec![Resources::default(); model.pools.len()]; model.teams.len()];
        for (pool_index, capacity) in flavors.iter().enumerate() {
            let reserved = tiers.iter().fold(Resources::default(), |sum, tier| sum.plus(tier[pool_index]));
            let left = capacity.minus(reserved);
            let cpu = apportion(left.cpu, &shares);
            let memory = apportion(left.memory_mib, &shares);
            // GPUs are the model's guarantees, the figures `placid diff` reports; CPU and
            // memory are split the same way over what the flavor reaches.
            let gpus = fences.guaranteed_gpus(PoolId::from_index(pool_index));
            for (team_index, team) in teams.iter_mut().enumerate() {
                team[pool_index] = Resources { cpu: cpu[team_index], memory_mib: memory[team_index], gpus: u64::from(gpus[team_index]) };
            }
        }
        Quotas { teams, tiers, flavors }
    }
}
