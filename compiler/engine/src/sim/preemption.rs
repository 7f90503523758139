//! Preemption, docs/semantics.md §6: who may be a victim, and the two ways a held job takes
//! victims: for capacity (Slurm's preemption: victims on the nodes of its pool, until its gang
//! fits) and for quota (Kueue's: victims charged to its own queue, or borrowing, in the cell
//! it would be admitted on, until enough quota is freed there). The rule of who may be a victim (the tier, the exemption,
//! the order) is spelled once, in `victims`, and the taking once, in `take_until`; the two
//! callers differ only in which running jobs they look at and in what "enough" means. Then
//! the victims' signals, and their stops at the end of the window.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use placid_lang::model::{NodeId, PoolId, Preemption};

use super::{JobState, Record, Simulation, Wake};
use crate::event::{EventKind, Placement};
use crate::job::{JobId, Seconds};
use crate::place::{self, Needs};
use crate::quota::Charge;
use crate::rank::Ranker;

/// The running jobs a preemptor may take, as [`Simulation::victims`] finds them.
struct Victims {
    /// The victims it may take now, in victim order.
    ready: Vec<JobId>,
    /// When the first of those it may take only once their exemption ends becomes a victim:
    /// the preemptor tries again then.
    exempt_until: Option<Seconds>,
}

/// Takes `victims` in order until `frees_enough`, told of each victim as it is taken, says the
/// ones taken so far free enough. Returns those taken, and whether they freed enough: all of
/// them when they did not, so that a search that released them can take them back.
fn take_until(victims: Vec<JobId>, mut frees_enough: impl FnMut(JobId) -> bool) -> (Vec<JobId>, bool) {
    let mut taken = Vec::new();
    for victim in victims {
        taken.push(victim);
        if frees_enough(victim) {
            return (taken, true);
        }
    }
    (taken, false)
}

impl<'m, R: Ranker> Simulation<'m, R> {
    /// Who `id` may preempt among the running jobs `wanted` accepts (it is told each job's
    /// record and placement): jobs whose tier its tier `preempts` (a preemptible tier of lower
    /// priority), past the exempt time of their tier, in the documented victim order. Draining
    /// jobs are already stopping and are nobody's victim again.
    fn victims(&self, id: JobId, wanted: impl Fn(&Record, &Placement) -> bool) -> Victims {
        let model = self.model;
        let tier = model.tier(self.records[id.index()].job.tier);
        let now = self.now;
        let mut victims = Vec::new();
        let mut exempt_until: Option<Seconds> = None;
        for victim in &self.running {
            let record = &self.records[victim.index()];
            let JobState::Running(placement) = &record.state else { continue };
            let victim_tier = model.tier(record.job.tier);
            if !tier.preempts(victim_tier) || !wanted(record, placement) {
                continue;
            }
            let exempt = victim_tier.exempt.map_or(0, |exempt| exempt.seconds);
            if now - record.started >= exempt {
                victims.push(*victim);
            } else {
                let until = record.started.saturating_add(exempt);
                if until > now {
                    exempt_until = Some(exempt_until.map_or(until, |earliest| earliest.min(until)));
                }
            }
        }
        victims.sort_by_key(|victim| self.victim_order(*victim));
        Victims { ready: victims, exempt_until }
    }

    /// The documented victim order: lowest tier priority first, then the latest started
    /// (least work lost), then the latest submitted.
    fn victim_order(&self, victim: JobId) -> (u32, Reverse<Seconds>, Reverse<JobId>) {
        let record = &self.records[victim.index()];
        (self.model.tier(record.job.tier).priority.value, Reverse(record.started), Reverse(victim))
    }

    /// Signals the victims that free a placement for `id` in `pool`, on the nodes of `cell`
    /// (the cell its quota admits it on; the pool's reach for a job no single cell holds), if
    /// its tier may preempt enough of them. Victims are the running jobs on those nodes, taken
    /// in victim order until the gang fits; those whose nodes the placement does not use are
    /// spared.
    pub(super) fn preempt(&mut self, id: JobId, pool: PoolId, cell: Option<usize>) {
        let model = self.model;
        let reach = self.quotas.nodes(pool, cell);
        let victims = self.victims(id, |_, placement| placement.node_ids().any(|node| reach.binary_search(&node).is_ok()));
        // Victims still exempt are tried again when the first exemption ends, whether those
        // that may be taken now free too little or there are none.
        let retry = victims.exempt_until;
        if victims.ready.is_empty() {
            if let Some(at) = retry {
                self.retry_at(at);
            }
            return;
        }
        // Victims are released on the live state and taken back after the search, instead
        // of copying every node's free capacity.
        let job = self.records[id.index()].job.clone();
        let mig_job = Needs::of(model, &job).mig.is_some();
        let mut free = self.free_in(reach, &job);
        let mut trial = std::mem::take(&mut self.cluster);
        let mut found = None;
        let (telemetry, now) = (self.telemetry, self.now);
        let (taken, _) = take_until(victims.ready, |victim| {
            let record = &self.records[victim.index()];
            let JobState::Running(placement) = &record.state else { return false };
            let mig = Needs::of(model, &record.job).mig;
            for share in &placement.nodes {
                trial.give(share, mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
            }
            free += u64::from(record.job.gpus);
            // Too few GPUs free in the pool: no placement to search for yet.
            if !mig_job && free < u64::from(job.gpus) {
                return false;
            }
            // A throttled domain takes no new comm-heavy job, preempting or not.
            let throttled = |node: NodeId| telemetry.is_some_and(|recorded| recorded.refuses(model, &job, node, now));
            match place::place(model, reach, &trial, &job, pool, &mut self.ranker, &mut self.scratch, &throttled) {
                Ok(placement) => {
                    found = Some(placement);
                    true
                }
                Err(_) => false,
            }
        });
        self.retake(&mut trial, &taken);
        self.cluster = trial;
        let Some(placement) = found else {
            if let Some(at) = retry {
                self.retry_at(at);
            }
            return;
        };
        let used: BTreeSet<NodeId> = placement.node_ids().collect();
        let victims: Vec<JobId> = taken
            .into_iter()
            .filter(|victim| match &self.records[victim.index()].state {
                JobState::Running(held) => held.node_ids().any(|node| used.contains(&node)),
                _ => false,
            })
            .collect();
        self.signal(id, &victims);
    }

    /// Frees quota for `id` in the cell of `charge`, as Kueue's queues preempt in a flavor:
    /// lower-priority jobs of its own queue there (`withinClusterQueue: LowerPriority`), and,
    /// when `id` stays within its team's guarantee in the cell, lower-priority jobs of teams
    /// borrowing in the cell (`reclaimWithinCohort: LowerPriority`). Victims go in victim
    /// order until `own` milli of the queue's quota and `cohort` milli of the cell's cohort are
    /// freed; if they cannot be, nobody is signalled. Returns whether victims were signalled.
    pub(super) fn reclaim(&mut self, id: JobId, charge: Charge, own: u64, cohort: u64) -> bool {
        // Admission asks only when its job is over a quota. `take_until` asks whether enough is
        // freed after each victim it takes, so with nothing to free it would still take one.
        debug_assert!(own > 0 || cohort > 0, "reclaim with nothing to free");
        let model = self.model;
        let job = &self.records[id.index()].job;
        let cell = charge.cell();
        let within_guarantee = match charge {
            Charge::Team(team, _) => {
                self.used(charge) + job.quota_milli(Needs::of(model, job).mig.is_some()) <= self.quotas.guaranteed(team, cell)
            }
            Charge::Reservation(..) => false,
        };
        let victims = self.victims(id, |record, _| {
            record.charges.iter().any(|(victim_charge, _)| {
                let borrower = match *victim_charge {
                    Charge::Team(team, charged) => charged == cell && self.used(*victim_charge) > self.quotas.guaranteed(team, cell),
                    Charge::Reservation(..) => false,
                };
                *victim_charge == charge || (within_guarantee && borrower)
            })
        });
        // Victims still exempt are tried again when their exemption ends.
        if let Some(at) = victims.exempt_until {
            self.retry_at(at);
        }
        let (mut own_freed, mut cohort_freed) = (0, 0);
        let (taken, enough) = take_until(victims.ready, |victim| {
            for (victim_charge, milli) in &self.records[victim.index()].charges {
                if *victim_charge == charge {
                    own_freed += milli;
                }
                if matches!(victim_charge, Charge::Team(_, charged) if *charged == cell) {
                    cohort_freed += milli;
                }
            }
            own_freed >= own && cohort_freed >= cohort
        });
        if enough {
            self.signal(id, &taken);
        }
        enough
    }

    /// Frees quota for `id`, a job no single cell of `pool` holds, across the pool's cells:
    /// as [`Self::reclaim`], with victims charged to its own queue in any of those cells, or
    /// (when it stays within its guarantees there together) borrowing in one; enough once
    /// what its queue and the cohorts have room for in those cells together holds it.
    pub(super) fn reclaim_across(&mut self, id: JobId, pool: PoolId) {
        let model = self.model;
        let job = &self.records[id.index()].job;
        let milli = job.quota_milli(Needs::of(model, job).mig.is_some());
        let charges: Vec<Charge> = self.quotas.cells_for(job, pool).map(|cell| self.quotas.charge(job, pool, cell)).collect();
        let within_guarantee = charges.iter().all(|charge| matches!(charge, Charge::Team(..)))
            && charges.iter().map(|charge| self.used(*charge)).sum::<u64>() + milli
                <= charges.iter().map(|charge| self.quotas.guaranteed(job.team, charge.cell())).sum::<u64>();
        let victims = self.victims(id, |record, _| {
            record.charges.iter().any(|(victim_charge, _)| {
                let borrower = match *victim_charge {
                    Charge::Team(team, cell) => {
                        charges.iter().any(|charge| charge.cell() == cell) && self.used(*victim_charge) > self.quotas.guaranteed(team, cell)
                    }
                    Charge::Reservation(..) => false,
                };
                charges.contains(victim_charge) || (within_guarantee && borrower)
            })
        });
        if let Some(at) = victims.exempt_until {
            self.retry_at(at);
        }
        // Room freed per charge of `id`: its own queue's, and the cohort's in the cell.
        let mut own_freed = vec![0u64; charges.len()];
        let mut cohort_freed = vec![0u64; charges.len()];
        let (taken, enough) = take_until(victims.ready, |victim| {
            for (victim_charge, freed) in &self.records[victim.index()].charges {
                for (index, charge) in charges.iter().enumerate() {
                    if victim_charge == charge {
                        own_freed[index] += freed;
                    }
                    if matches!(victim_charge, Charge::Team(_, cell) if *cell == charge.cell()) {
                        cohort_freed[index] += freed;
                    }
                }
            }
            let grown: u64 =
                charges.iter().enumerate().map(|(index, charge)| self.room_after(*charge, own_freed[index], cohort_freed[index])).sum();
            grown >= milli
        });
        if enough {
            self.signal(id, &taken);
        }
    }

    /// Signals `victims` to make room for `id`: each stops after its tier's window.
    fn signal(&mut self, id: JobId, victims: &[JobId]) {
        let model = self.model;
        let now = self.now;
        let mut stops = now;
        for victim in victims {
            let victim = *victim;
            let record = &mut self.records[victim.index()];
            let JobState::Running(held) = &record.state else { continue };
            let victim_tier = model.tier(record.job.tier);
            let window = match victim_tier.preemption.value {
                Preemption::Window { window, .. } => window.seconds,
                Preemption::Never => continue,
            };
            let stop = now.saturating_add(window);
            let ran = stop - record.started;
            let lost = victim_tier.work_lost(ran).min(record.work_left);
            record.state = JobState::Draining(held.clone());
            stops = stops.max(stop);
            self.wakes.push(Reverse((stop, Wake::Stop(victim))));
            let lost_gpu_seconds = lost.saturating_mul(u64::from(record.job.gpus));
            self.emit(victim, EventKind::Preempted { by: id, stops: stop, lost_gpu_seconds });
        }
        if !victims.is_empty() {
            self.records[id.index()].preempting = Some(stops);
            self.changed = true;
        }
    }

    /// A preempted job stops at the end of its window: requeued (resuming from its last
    /// checkpoint) or cancelled, as its tier says.
    pub(super) fn stop(&mut self, id: JobId) {
        let model = self.model;
        if !matches!(self.records[id.index()].state, JobState::Draining(_)) {
            return;
        }
        let started = self.records[id.index()].started;
        self.release(id);
        let record = &mut self.records[id.index()];
        let tier = model.tier(record.job.tier);
        let ran = self.now - started;
        let kept = ran - tier.work_lost(ran);
        record.work_left = record.work_left.saturating_sub(kept);
        record.estimate_left = record.estimate_left.saturating_sub(kept);
        match tier.preemption.value {
            Preemption::Window { mode: placid_lang::model::PreemptMode::Requeue, .. } => {
                self.emit(id, EventKind::Requeued);
                self.enqueue(id);
            }
            _ => {
                self.records[id.index()].state = JobState::Cancelled;
                self.emit(id, EventKind::Cancelled);
                self.release_dependents(id, false);
            }
        }
    }
}
