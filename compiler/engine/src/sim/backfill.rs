//! EASY backfill, docs/semantics.md §7: the head's reservation, the earliest time its queue's
//! quota, its pool's cohort quota and its gang all fit as the running jobs end. The pass
//! (`queue`) makes it; admission lets a later job start only where it cannot delay it.

use std::collections::BTreeSet;

use placid_lang::model::{NodeId, PoolId};

use super::{JobState, Simulation};
use crate::job::{JobId, Seconds};
use crate::place::{self, Needs};
use crate::quota::Charge;
use crate::rank::Ranker;

/// The head's reservation: when and where its gang will fit, and how much of its queue's and
/// its pool's cohort quota is left over then, which is all a job that ends later may take.
pub(super) struct Reservation {
    pub(super) time: Seconds,
    pub(super) nodes: BTreeSet<NodeId>,
    pub(super) pool: PoolId,
    pub(super) charge: Charge,
    pub(super) spare: u64,
    pub(super) spare_cohort: u64,
    /// The last moment at which the verdicts of the jobs looked at behind the head still
    /// hold: the earliest at which one that would end by `time` no longer would.
    pub(super) steady_until: Seconds,
}

impl<'m, R: Ranker> Simulation<'m, R> {
    /// The head's reservation: the earliest end of running jobs after which its gang fits,
    /// and the nodes it would take then. Running jobs are expected to end at their start plus
    /// their estimate; draining ones at their stop.
    pub(super) fn reserve(&mut self, id: JobId) -> Option<Reservation> {
        let model = self.model;
        let job = self.records[id.index()].job.clone();
        let pool = *self.records[id.index()].pools.first()?;
        let reach = &self.quotas.reach[pool.index()];
        let milli = job.quota_milli(Needs::of(model, &job).mig.is_some());
        let charge = self.quotas.charge(&job, pool);
        let team_charged = matches!(charge, Charge::Team(..));
        let limit = self.quotas.limit(charge);
        let mut own_used = self.used(charge);
        let mut ends: Vec<(Seconds, JobId)> = self
            .running
            .iter()
            .filter_map(|other| {
                let record = &self.records[other.index()];
                match &record.state {
                    JobState::Running(placement) | JobState::Draining(placement)
                        if placement.node_ids().any(|node| reach.binary_search(&node).is_ok()) =>
                    {
                        Some((record.started.saturating_add(record.estimate_left).max(self.now), *other))
                    }
                    _ => None,
                }
            })
            .collect();
        ends.sort_unstable();
        let mig_job = Needs::of(model, &job).mig.is_some();
        let mut free = self.free_in(reach, &job);
        let mut trial = std::mem::take(&mut self.cluster);
        let mut given = Vec::new();
        let mut found = None;
        let mut cohort_used = self.cohort_used[pool.index()];
        let cohort = self.quotas.cohort(pool);
        for (time, other) in ends {
            let record = &self.records[other.index()];
            let (JobState::Running(placement) | JobState::Draining(placement)) = &record.state else { continue };
            let needs = Needs::of(model, &record.job);
            for share in &placement.nodes {
                trial.give(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
            }
            given.push(other);
            free += u64::from(record.job.gpus);
            let released = record.job.quota_milli(needs.mig.is_some());
            if matches!(record.charge, Some(Charge::Team(_, charged)) if charged == pool) {
                cohort_used -= released;
            }
            if record.charge == Some(charge) {
                own_used -= released;
            }
            if own_used + milli > limit || (team_charged && cohort_used + milli > cohort) || (!mig_job && free < u64::from(job.gpus)) {
                continue;
            }
            if let Ok(placement) = place::place(model, reach, &trial, &job, pool, &mut self.ranker, &mut self.scratch, &|_| false) {
                let spare_cohort = if team_charged { cohort - cohort_used - milli } else { u64::MAX };
                found = Some(Reservation {
                    time,
                    nodes: placement.node_ids().collect(),
                    pool,
                    charge,
                    spare: limit - own_used - milli,
                    spare_cohort,
                    steady_until: Seconds::MAX,
                });
                break;
            }
        }
        self.retake(&mut trial, &given);
        self.cluster = trial;
        found
    }
}
