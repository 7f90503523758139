//! One meaning of reserved capacity and never-preempted tiers on Slurm, the one Kueue gives
//! them (see [`placid_lang::model::shares`]): a tier that reserves GPUs runs only in the pools
//! it reserves in and at most the GPUs it reserves there (QOS `GrpTRES=gres/gpu=`, the sum of
//! its reservations), and a never-preempted tier never runs on spot capacity, which the
//! provider may reclaim whatever the tier says. The GPUs are there when the tier needs them
//! because it preempts every preemptible tier, so other tiers may borrow them meanwhile.
//!
//! Invariant: partitions (`AllowQos`), job_submit.lua's default partitions and the partition
//! profile's node lists all ask [`allowed`], so a tier is admitted in the same places everywhere.

use placid_lang::model::{CapacityKind, Model, Pool, PoolId, Tier};

/// Whether jobs of `tier` may run in `pool`.
pub fn allowed(model: &Model, tier: &Tier, pool: PoolId) -> bool {
    if !tier.reservations.is_empty() {
        return tier.reservations.iter().any(|reservation| reservation.pool == pool);
    }
    tier.is_preemptible() || !has_spot(model, model.pool(pool))
}

/// The GPUs `tier` may hold at once, when it reserves any: the sum of its reservations.
pub fn gpu_cap(tier: &Tier) -> Option<u64> {
    (!tier.reservations.is_empty()).then(|| tier.reservations.iter().map(|reservation| u64::from(reservation.gpus)).sum())
}

/// Whether `pool` has a spot node.
fn has_spot(model: &Model, pool: &Pool) -> bool {
    pool.nodes.iter().any(|id| model.node(*id).capacity == CapacityKind::Spot)
}
