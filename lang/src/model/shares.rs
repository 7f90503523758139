//! How reservations and fair shares turn into guaranteed capacity. The semantic diff
//! (`placid diff`) and the Kubernetes quotas both read these, so the "guaranteed GPUs" of a
//! PR comment are the GPUs the queues are given.
//!
//! A pool in which a tier reserves GPUs is *fenced*: its nodes serve work placed through
//! that pool only (on Kubernetes they carry a reservation taint that only the pool's flavor
//! tolerates), so an overlapping pool cannot count them. Pools overlap freely otherwise.

use super::{CapacityKind, Model, NodeId, PoolId, Team, Tier};

/// Which fenced pool, if any, holds each node: computed once, since every question about
/// reach asks it for every node of a pool.
#[derive(Clone, Debug)]
pub struct Fences<'m> {
    model: &'m Model,
    /// By node index.
    holder: Vec<Holder>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// No fenced pool holds the node.
    Open,
    /// Exactly this fenced pool holds it.
    Pool(PoolId),
    /// Two fenced pools hold it: neither reaches it. The Kubernetes target refuses such a
    /// policy (E059: a node carries one reservation taint); elsewhere this keeps the
    /// guarantees from counting one GPU for two pools.
    Contested,
}

impl Model {
    /// Whether some tier reserves GPUs in `pool`.
    pub fn is_fenced(&self, pool: PoolId) -> bool {
        self.tiers.iter().flat_map(|tier| &tier.reservations).any(|reservation| reservation.pool == pool)
    }

    /// Whether jobs of `tier` may run in `pool` (docs/semantics.md §4): a tier that reserves
    /// GPUs only in the pools it reserves in (capped there at its reservations); a
    /// never-preempted tier without reservations in no pool holding a spot node, which the
    /// provider may reclaim whatever the tier says; any other tier everywhere. The engine
    /// rejects a job elsewhere (`tier-not-allowed`); the Slurm target lets the tier's QOS into
    /// these pools' partitions only (`AllowQos`, job_submit.lua); the Kubernetes target gives a
    /// reserving tier a queue over its reservations alone, and refuses a never-preempted tier
    /// without reservations (E058), whose queue would hold nothing.
    pub fn tier_may_use(&self, tier: &Tier, pool: PoolId) -> bool {
        if !tier.reservations.is_empty() {
            return tier.reserves_in(pool);
        }
        tier.is_preemptible() || !self.pool(pool).nodes.iter().any(|node| self.node(*node).capacity == CapacityKind::Spot)
    }

    /// Whether `team` may use a backfill tier, and so borrow what other teams leave idle.
    pub fn team_backfills(&self, team: &Team) -> bool {
        team.tiers.iter().any(|tier| self.tier(tier.value).backfill)
    }

    /// The fences of this model.
    pub fn fences(&self) -> Fences<'_> {
        let mut holder = vec![Holder::Open; self.nodes.len()];
        for index in (0..self.pools.len()).filter(|index| self.is_fenced(PoolId::from_index(*index))) {
            let pool = PoolId::from_index(index);
            for node in &self.pool(pool).nodes {
                let slot = &mut holder[node.index()];
                *slot = if *slot == Holder::Open { Holder::Pool(pool) } else { Holder::Contested };
            }
        }
        Fences { model: self, holder }
    }
}

impl Fences<'_> {
    /// Whether work placed through `pool` can run on `node`: the node is a member and no other
    /// fenced pool holds it.
    pub fn reaches(&self, pool: PoolId, node: NodeId) -> bool {
        let holder = self.holder[node.index()];
        (holder == Holder::Open || holder == Holder::Pool(pool)) && self.model.pool(pool).nodes.binary_search(&node).is_ok()
    }

    /// The nodes work placed through `pool` can run on ([`Self::reaches`]), in the pool's
    /// (sorted) order.
    pub fn reach(&self, pool: PoolId) -> impl Iterator<Item = NodeId> + '_ {
        self.model.pool(pool).nodes.iter().copied().filter(move |node| self.reaches(pool, *node))
    }

    /// The GPUs of the nodes `pool` reaches.
    fn reachable_gpus(&self, pool: PoolId) -> u32 {
        self.reach(pool).map(|node| self.model.node(node).gpu_count()).sum()
    }

    /// GPUs of `pool` that tiers reserve, capped at the `reachable` GPUs.
    fn reserved_within(&self, pool: PoolId, reachable: u32) -> u32 {
        let reserved: u64 = self
            .model
            .tiers
            .iter()
            .flat_map(|tier| &tier.reservations)
            .filter(|reservation| reservation.pool == pool)
            .map(|reservation| u64::from(reservation.gpus))
            .sum();
        u32::try_from(reserved).unwrap_or(u32::MAX).min(reachable)
    }

    /// The GPUs of `pool` each team is guaranteed, indexed like `teams`: what the pool reaches
    /// and no tier reserves, split by fair share with [`apportion`].
    pub fn guaranteed_gpus(&self, pool: PoolId) -> Vec<u32> {
        let shares: Vec<u64> = self.model.teams.iter().map(|team| u64::from(team.share.value)).collect();
        let reachable = self.reachable_gpus(pool);
        let unreserved = reachable - self.reserved_within(pool, reachable);
        // Every part is at most `unreserved`, so it fits the u32 it came from.
        apportion(u64::from(unreserved), &shares).into_iter().map(|part| part as u32).collect()
    }

    /// The GPUs each team may borrow beyond `guaranteed` (a pool's [`Self::guaranteed_gpus`]),
    /// indexed like `teams`: a team with a backfill tier may use everything the other teams
    /// are guaranteed while they leave it idle; the others borrow nothing.
    pub fn borrowable_gpus(&self, guaranteed: &[u32]) -> Vec<u32> {
        debug_assert_eq!(guaranteed.len(), self.model.teams.len(), "one guarantee per team");
        let total: u32 = guaranteed.iter().sum();
        self.model.teams.iter().zip(guaranteed).map(|(team, own)| if self.model.team_backfills(team) { total - own } else { 0 }).collect()
    }
}

/// Splits `total` in proportion to `weights` by the largest remainder method: the parts add
/// up to `total` exactly (when any weight is positive); ties go to the earlier weight.
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|weight| u128::from(*weight)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    // In u64 where the product fits (every real policy): u128 division is a library call,
    // and a build apportions every cell's CPU, memory and GPUs among every team.
    let narrow_sum = u64::try_from(sum).ok();
    let exact: Vec<(u64, u128)> = weights
        .iter()
        .map(|weight| match (total.checked_mul(*weight), narrow_sum) {
            (Some(product), Some(sum)) => (product / sum, u128::from(product % sum)),
            _ => {
                let product = u128::from(total) * u128::from(*weight);
                ((product / sum) as u64, product % sum)
            }
        })
        .collect();
    let mut parts: Vec<u64> = exact.iter().map(|(floor, _)| *floor).collect();
    let handed_out: u64 = parts.iter().sum();
    // Fewer than one leftover per weight: the floors lose less than 1 each.
    let leftover = total.saturating_sub(handed_out) as usize;
    if leftover > 0 {
        // Largest remainder first, the earlier weight first among equals: a total order, so
        // the first `leftover` after selecting are the same set a full sort would give.
        let mut order: Vec<usize> = (0..weights.len()).collect();
        order.select_nth_unstable_by(leftover - 1, |left, right| exact[*right].1.cmp(&exact[*left].1).then(left.cmp(right)));
        for index in &order[..leftover] {
            parts[*index] += 1;
        }
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

        /// The same parts as the method written plainly: in u128, every index sorted by
        /// remainder, the leftovers to the first ones (huge totals take the u128 path).
        #[test]
        fn parts_are_those_of_the_plain_largest_remainder_method(
            total in prop_oneof![0u64..1000, Just(u64::MAX), (u64::MAX / 2)..u64::MAX],
            weights in proptest::collection::vec(prop_oneof![0u64..20, Just(u64::MAX)], 1..40),
        ) {
            let sum: u128 = weights.iter().map(|weight| u128::from(*weight)).sum();
            let mut expected = vec![0u64; weights.len()];
            if sum > 0 {
                let exact: Vec<(u64, u128)> = weights
                    .iter()
                    .map(|weight| (((u128::from(total) * u128::from(*weight)) / sum) as u64, (u128::from(total) * u128::from(*weight)) % sum))
                    .collect();
                expected = exact.iter().map(|(floor, _)| *floor).collect();
                let mut order: Vec<usize> = (0..weights.len()).collect();
                order.sort_by(|left, right| exact[*right].1.cmp(&exact[*left].1).then(left.cmp(right)));
                let handed_out: u64 = expected.iter().sum();
                for index in order.into_iter().take(total.saturating_sub(handed_out) as usize) {
                    expected[index] += 1;
                }
            }
            prop_assert_eq!(apportion(total, &weights), expected);
        }
    }
}
