//! Quotas: how much of each flavor each ClusterQueue is guaranteed.
//!
//! Invariants: a flavor's capacity counts only the nodes its pods can reach (members of the
//! pool without another pool's reservation taint); reservations come off the top and go to
//! the reserving tier's queue; the rest is split between teams by share with the largest
//! remainder method, so the teams' quotas add up exactly to what is left (no GPU is invented
//! or lost to rounding).

use placid_lang::model::{Model, NodeId, PoolId};

use crate::k8s::layout::Layout;

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
pub fn flavor_capacity(model: &Model, layout: &Layout, pool: PoolId) -> Resources {
    let mut total = Resources::default();
    for node_id in &model.pool(pool).nodes {
        if layout.flavor_reaches(model, pool, *node_id) {
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
    pub fn new(model: &Model, layout: &Layout) -> Quotas {
        let flavors: Vec<Resources> =
            (0..model.pools.len()).map(|index| flavor_capacity(model, layout, PoolId::from_index(index))).collect();
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
            let gpus = apportion(left.gpus, &shares);
            for (team_index, team) in teams.iter_mut().enumerate() {
                team[pool_index] = Resources { cpu: cpu[team_index], memory_mib: memory[team_index], gpus: gpus[team_index] };
            }
        }
        Quotas { teams, tiers, flavors }
    }
}

/// Splits `total` in proportion to `weights` by the largest remainder method: the parts add
/// up to `total` exactly (when any weight is positive); ties go to the earlier weight.
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|weight| u128::from(*weight)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let exact: Vec<(u64, u128)> = weights
        .iter()
        .map(|weight| {
            let product = u128::from(total) * u128::from(*weight);
            ((product / sum) as u64, product % sum)
        })
        .collect();
    let mut parts: Vec<u64> = exact.iter().map(|(floor, _)| *floor).collect();
    let handed_out: u64 = parts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|left, right| exact[*right].1.cmp(&exact[*left].1).then(left.cmp(right)));
    for index in order.into_iter().take(total.saturating_sub(handed_out) as usize) {
        parts[index] += 1;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::apportion;
    use proptest::prelude::*;

    #[test]
    fn largest_remainder_gives_leftovers_to_the_largest_fractions() {
        assert_eq!(apportion(4, &[40, 30, 30]), [2, 1, 1]);
        // 6.4, 4.8, 4.8: the floors hand out 14, the two .8 remainders get the other two.
        assert_eq!(apportion(16, &[40, 30, 30]), [6, 5, 5]);
        // Equal remainders: the earlier weight wins the single leftover.
        assert_eq!(apportion(1, &[1, 1]), [1, 0]);
        assert_eq!(apportion(5, &[0, 0]), [0, 0]);
        assert_eq!(apportion(0, &[1, 2]), [0, 0]);
    }

    proptest! {
        #[test]
        fn parts_add_up_and_stay_within_one_of_the_exact_share(total in 0u64..100_000, weights in proptest::collection::vec(0u64..1000, 1..12)) {
            let parts = apportion(total, &weights);
            let sum: u64 = weights.iter().sum();
            if sum > 0 {
                prop_assert_eq!(parts.iter().sum::<u64>(), total);
                for (part, weight) in parts.iter().zip(&weights) {
                    let exact = total as f64 * *weight as f64 / sum as f64;
                    prop_assert!((*part as f64 - exact).abs() < 1.0 + 1e-9);
                }
            }
        }
    }
}
