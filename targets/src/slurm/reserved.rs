//! One meaning of reserved capacity and never-preempted tiers on Slurm, the one Kueue gives
//! them (see [`placid_lang::model::shares`]): a tier that reserves GPUs runs only in the pools
//! it reserves in and at most the GPUs it reserves there (QOS `GrpTRES=gres/gpu=`, the sum of
//! its reservations), and a never-preempted tier never runs on spot capacity, which the
//! provider may reclaim whatever the tier says. The GPUs are there when the tier needs them
//! because it preempts every preemptible tier, so other tiers may borrow them meanwhile.
//!
//! Invariant: partitions (`AllowQos`), job_submit.lua's default partitions and the partition
//! profile's node lists all ask [`Model::tier_may_use`](placid_lang::model::Model::tier_may_use),
//! as the engine does, so a tier is admitted in the same places everywhere.

use placid_lang::model::Tier;

/// The GPUs `tier` may hold at once, when it reserves any: the sum of its reservations.
pub fn gpu_cap(tier: &Tier) -> Option<u64> {
    (!tier.reservations.is_empty()).then(|| tier.reservations.iter().map(|reservation| u64::from(reservation.gpus)).sum())
}
