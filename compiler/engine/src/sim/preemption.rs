//! Preemption, docs/semantics.md §6: the two ways a held job takes victims, for capacity
//! (Slurm's preemption: victims on the nodes of its pool, until its gang fits) and for quota
//! (Kueue's: victims charged to its own queue, or borrowing in its pool, until enough quota is
//! freed); the victim order; the victims' signals, and their stops at the end of the window.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use placid_lang::model::{NodeId, PoolId, Preemption};

use super::{JobState, Record, Simulation, Wake};
use crate::event::EventKind;
use crate::job::{JobId, Seconds};
use crate::place::{self, Needs};
use crate::quota::Charge;
use crate::rank::Ranker;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// Signals the victims that free a placement for `id` in `pool`, if its tier may preempt
    /// enough of them. Victims are taken in the documented order (lowest priority first, then
    /// the latest started, then the latest submitted) until the gang fits; those whose nodes
    /// the placement does not use are spared.
    pub(super) fn preempt(&mut self, id: JobId, pool: PoolId) {
        let model = self.model;
        let tier = model.tier(self.records[id.index()].job.tier);
        let reach = &self.quotas.reach[pool.index()];
        let now = self.now;
        let mut victims: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|victim| {
                let record = &self.records[victim.index()];
                let victim_tier = model.tier(record.job.tier);
                matches!(record.state, JobState::Running(_))
                    && tier.preempts(victim_tier)
                    && now - record.started >= victim_tier.exempt.map_or(0, |exempt| exempt.seconds)
                    && match &record.state {
                        JobState::Running(placement) => placement.node_ids().any(|node| reach.binary_search(&node).is_ok()),
                        _ => false,
                    }
            })
            .collect();
        if victims.is_empty() {
            self.retry_after_exempt(id, pool);
            return;
        }
        victims.sort_by_key(|victim| self.victim_order(*victim));
        // Victims are released on the live state and taken back after the search, instead
        // of copying every node's free capacity.
        let job = self.records[id.index()].job.clone();
        let mig_job = Needs::of(model, &job).mig.is_some();
        let mut free = self.free_in(reach, &job);
        let mut trial = std::mem::take(&mut self.cluster);
        let mut taken = Vec::new();
        let mut found = None;
        for victim in victims {
            let record = &self.records[victim.index()];
            if let JobState::Running(placement) = &record.state {
                let mig = Needs::of(model, &record.job).mig;
                for share in &placement.nodes {
                    trial.give(share, mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
                }
                taken.push(victim);
                free += u64::from(record.job.gpus);
                // Too few GPUs free in the pool: no placement to search for yet.
                if !mig_job && free < u64::from(job.gpus) {
                    continue;
                }
                // A throttled domain takes no new comm-heavy job, preempting or not.
                let (telemetry, now) = (self.telemetry, self.now);
                let throttled = |node: NodeId| telemetry.is_some_and(|recorded| recorded.refuses(model, &job, node, now));
                if let Ok(placement) = place::place(model, reach, &trial, &job, pool, &mut self.ranker, &mut self.scratch, &throttled) {
                    found = Some(placement);
                    break;
                }
            }
        }
        self.retake(&mut trial, &taken);
        self.cluster = trial;
        let Some(placement) = found else { return };
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

    /// Frees quota for `id`, as Kueue's queues preempt: lower-priority jobs of its own queue
    /// (`withinClusterQueue: LowerPriority`), and, when `id` stays within its team's guarantee,
    /// lower-priority jobs of teams borrowing in the pool (`reclaimWithinCohort:
    /// LowerPriority`). Victims go in victim order until `own` milli of the queue's quota and
    /// `cohort` milli of the pool's are freed; if they cannot be, nobody is signalled.
    pub(super) fn reclaim(&mut self, id: JobId, pool: PoolId, charge: Charge, own: u64, cohort: u64) {
        let model = self.model;
        let job = &self.records[id.index()].job;
        let tier = model.tier(job.tier);
        let within_guarantee = match charge {
            Charge::Team(team, _) => {
                self.used(charge) + job.quota_milli(Needs::of(model, job).mig.is_some()) <= self.quotas.guaranteed(team, pool)
            }
            Charge::Reservation(..) => false,
        };
        let now = self.now;
        let mut victims: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|victim| {
                let record = &self.records[victim.index()];
                let victim_tier = model.tier(record.job.tier);
                let Some(victim_charge) = record.charge else { return false };
                let borrower = match victim_charge {
                    Charge::Team(team, charged_pool) => {
                        charged_pool == pool && self.used(victim_charge) > self.quotas.guaranteed(team, pool)
                    }
                    Charge::Reservation(..) => false,
                };
                matches!(record.state, JobState::Running(_))
                    && (victim_charge == charge || (within_guarantee && borrower))
                    && tier.preempts(victim_tier)
            })
            .collect();
        // Victims still exempt are tried again when their exemption ends.
        let exempt_until =
            |record: &Record| record.started.saturating_add(model.tier(record.job.tier).exempt.map_or(0, |exempt| exempt.seconds));
        if let Some(next) = victims.iter().map(|victim| exempt_until(&self.records[victim.index()])).filter(|until| *until > now).min() {
            self.retry_at(next);
        }
        victims.retain(|victim| exempt_until(&self.records[victim.index()]) <= now);
        victims.sort_by_key(|victim| self.victim_order(*victim));
        let (mut own_freed, mut cohort_freed) = (0, 0);
        let mut taken = Vec::new();
        for victim in victims {
            if own_freed >= own && cohort_freed >= cohort {
                break;
            }
            let record = &self.records[victim.index()];
            let milli = record.job.quota_milli(Needs::of(model, &record.job).mig.is_some());
            if record.charge == Some(charge) {
                own_freed += milli;
            }
            if matches!(record.charge, Some(Charge::Team(_, charged_pool)) if charged_pool == pool) {
                cohort_freed += milli;
            }
            taken.push(victim);
        }
        if own_freed >= own && cohort_freed >= cohort {
            self.signal(id, &taken);
        }
    }

    /// The documented victim order: lowest tier priority first, then the latest started
    /// (least work lost), then the latest submitted.
    fn victim_order(&self, victim: JobId) -> (u32, Reverse<Seconds>, Reverse<JobId>) {
        let record = &self.records[victim.index()];
        (self.model.tier(record.job.tier).priority.value, Reverse(record.started), Reverse(victim))
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
        }
    }

    /// When victims are exempt for now, tries again when the first exemption ends.
    fn retry_after_exempt(&mut self, id: JobId, pool: PoolId) {
        let model = self.model;
        let tier = model.tier(self.records[id.index()].job.tier);
        let reach = &self.quotas.reach[pool.index()];
        let next = self
            .running
            .iter()
            .map(|victim| &self.records[victim.index()])
            .filter(|record| tier.preempts(model.tier(record.job.tier)))
            .filter(|record| matches!(&record.state, JobState::Running(p) if p.node_ids().any(|node| reach.binary_search(&node).is_ok())))
            .filter_map(|record| model.tier(record.job.tier).exempt.map(|exempt| record.started.saturating_add(exempt.seconds)))
            .filter(|at| *at > self.now)
            .min();
        if let Some(at) = next {
            self.retry_at(at);
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
                self.cancel_dependents(id);
            }
        }
    }
}
