//! EASY backfill, docs/semantics.md §7: the head's reservation, the earliest time its queue's
//! quota and its cell's cohort quota (in the first of its cells with room then, as admission
//! chooses) and its gang all fit as the running jobs end. The pass (`queue`) makes it;
//! admission lets a later job start only where it cannot delay it.

use std::collections::{BTreeSet, HashMap};

use placid_lang::model::NodeId;

use super::{JobState, Simulation};
use crate::job::{JobId, Seconds};
use crate::place::{self, Needs};
use crate::quota::Charge;
use crate::rank::Ranker;

/// The head's reservation: when and where its gang will fit, and how much of the quota it is
/// charged (its queue's in each cell, and those cells' cohorts) is left over then, which is
/// all a job that ends later may take.
pub(super) struct Reservation {
    pub(super) time: Seconds,
    pub(super) nodes: BTreeSet<NodeId>,
    /// GPU milli left per charge of the head.
    spare: Vec<(Charge, u64)>,
    /// GPU milli left per cell whose cohort the head is charged to.
    spare_cohort: Vec<(usize, u64)>,
    /// The last moment at which the verdicts of the jobs looked at behind the head still
    /// hold: the earliest at which one that would end by `time` no longer would.
    pub(super) steady_until: Seconds,
}

impl Reservation {
    /// Whether `charges` (a later job's, per charge) leave the head what it is charged.
    pub(super) fn leaves_room(&self, charges: &[(Charge, u64)]) -> bool {
        charges.iter().all(|(charge, milli)| {
            let own = self.spare.iter().all(|(held, spare)| held != charge || milli <= spare);
            let cohort = match charge {
                Charge::Team(_, cell) => self.spare_cohort.iter().all(|(held, spare)| held != cell || milli <= spare),
                Charge::Reservation(..) => true,
            };
            own && cohort
        })
    }

    /// Takes `charges` (which [`Self::leaves_room`] allows) from what is left over.
    pub(super) fn take(&mut self, charges: &[(Charge, u64)]) {
        for (charge, milli) in charges {
            for (held, spare) in &mut self.spare {
                if held == charge {
                    *spare -= milli;
                }
            }
            if let Charge::Team(_, cell) = charge {
                for (held, spare) in &mut self.spare_cohort {
                    if held == cell {
                        *spare -= milli;
                    }
                }
            }
        }
    }
}

impl<'m, R: Ranker> Simulation<'m, R> {
    /// The head's reservation: the earliest end of running jobs after which its quota has
    /// room in one of its cells (in flavor order) and its gang fits on that cell's nodes, and
    /// the nodes it would take then; for a job no single cell holds, its pool's nodes, with
    /// room for what each cell's GPUs are charged. Running jobs are expected to end at their
    /// start plus their estimate; draining ones at their stop.
    pub(super) fn reserve(&mut self, id: JobId) -> Option<Reservation> {
        let model = self.model;
        let job = self.records[id.index()].job.clone();
        let pool = *self.records[id.index()].pools.first()?;
        let spread = self.records[id.index()].spread.contains(&pool);
        let areas: Vec<Option<usize>> = if spread { vec![None] } else { self.quotas.cells_for(&job, pool).map(Some).collect() };
        let reach = &self.quotas.reach[pool.index()];
        let mig_job = Needs::of(model, &job).mig.is_some();
        let milli = job.quota_milli(mig_job);
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
        let mut free = self.free_in(reach, &job);
        let mut trial = std::mem::take(&mut self.cluster);
        let mut given = Vec::new();
        let mut found = None;
        // What the jobs ended so far give back, per charge and per cell's cohort.
        let mut released: HashMap<Charge, u64> = HashMap::new();
        let mut cohort_released: HashMap<usize, u64> = HashMap::new();
        'ends: for (time, other) in ends {
            let record = &self.records[other.index()];
            let (JobState::Running(placement) | JobState::Draining(placement)) = &record.state else { continue };
            let needs = Needs::of(model, &record.job);
            for share in &placement.nodes {
                trial.give(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
            }
            given.push(other);
            free += u64::from(record.job.gpus);
            for (charge, milli) in &record.charges {
                *released.entry(*charge).or_default() += milli;
                if let Charge::Team(_, cell) = charge {
                    *cohort_released.entry(*cell).or_default() += milli;
                }
            }
            if !mig_job && free < u64::from(job.gpus) {
                continue;
            }
            // What these jobs give back, of a charge and of a cell's cohort.
            let freed = |charge: Charge| released.get(&charge).copied().unwrap_or(0);
            let cohort_freed = |cell: usize| cohort_released.get(&cell).copied().unwrap_or(0);
            let freed_both = |charge: Charge| match charge {
                Charge::Team(_, cell) => (freed(charge), cohort_freed(cell)),
                Charge::Reservation(..) => (freed(charge), 0),
            };
            for area in &areas {
                if let Some(cell) = area {
                    let charge = self.quotas.charge(&job, pool, *cell);
                    let (own, cohort) = freed_both(charge);
                    if self.room_after(charge, own, cohort) < milli {
                        continue;
                    }
                }
                let nodes = self.quotas.nodes(pool, *area);
                let Ok(placement) = place::place(model, nodes, &trial, &job, pool, &mut self.ranker, &mut self.scratch, &|_| false) else {
                    continue;
                };
                let charges = self.quotas.charges(&job, &placement, mig_job);
                if charges.iter().any(|(charge, milli)| {
                    let (own, cohort) = freed_both(*charge);
                    self.room_after(*charge, own, cohort) < *milli
                }) {
                    continue;
                }
                let spare = charges.iter().map(|(charge, milli)| (*charge, self.own_room(*charge, freed(*charge)) - milli)).collect();
                let spare_cohort = charges
                    .iter()
                    .filter_map(|(charge, milli)| match charge {
                        Charge::Team(_, cell) => Some((*cell, self.cohort_room(*cell, cohort_freed(*cell)) - milli)),
                        Charge::Reservation(..) => None,
                    })
                    .collect();
                found = Some(Reservation { time, nodes: placement.node_ids().collect(), spare, spare_cohort, steady_until: Seconds::MAX });
                break 'ends;
            }
        }
        self.retake(&mut trial, &given);
        self.cluster = trial;
        found
    }
}
