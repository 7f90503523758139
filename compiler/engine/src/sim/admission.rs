//! Admission, docs/semantics.md §4 (budget, then quota) and §5 (placement, searched by
//! `crate::place`): whether a pending job starts now through a pool, and if not, why it waits.
//! Backfill's rules for a job behind the head (§7) are checked here too, because they bound the
//! same quota and nodes. A start charges quota and the estimated cost; a release gives the
//! quota back and refunds the part of the budget the run did not use.

use std::cmp::Reverse;

use placid_lang::model::{Model, NodeId, PoolId};

use super::backfill::Reservation;
use super::{JobState, Shape, Simulation, Wake};
use crate::event::{EventKind, Hold, Placement};
use crate::job::{Job, JobId, Seconds};
use crate::place::{self, Needs};
use crate::quota::{Charge, cost, least_cost};
use crate::rank::Ranker;

/// Why a job waits in one pool, and whether it waits for what running jobs give back as they
/// end (capacity for its gang, or quota): such a job may be the head and get a reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Wait {
    pub(super) hold: Hold,
    pub(super) reservable: bool,
}

impl Wait {
    /// A wait for `hold`: reservable when it waits for capacity or quota.
    fn plain(hold: Hold) -> Wait {
        Wait { hold, reservable: matches!(hold, Hold::Capacity | Hold::Quota) }
    }
}

impl<'m, R: Ranker> Simulation<'m, R> {
    /// Starts `id` through `pool` if admission and placement allow it now; otherwise says
    /// why it waits. Admission in the order of docs/semantics.md: budget, then quota, then
    /// placement (with preemption, and the head's reservation).
    pub(super) fn try_start(
        &mut self,
        id: JobId,
        pool: PoolId,
        mut head: Option<&mut Reservation>,
        blocked_ahead: bool,
    ) -> Result<(), Wait> {
        let model = self.model;
        // A preemption that has run its course (its victims stopped) may be tried again.
        if self.records[id.index()].preempting.is_some_and(|stops| stops <= self.now) {
            self.records[id.index()].preempting = None;
        }
        let job = &self.records[id.index()].job;
        // Not even its cheapest placement fits today's budget: no need to search one.
        let price = place::cheapest_price(model, &self.quotas.reach[pool.index()], job, pool, &mut self.scratch);
        if !self.budgets.has_room(model, job, least_cost(job, price), self.now) {
            return Err(Wait::plain(Hold::Budget));
        }
        let charge = self.quotas.charge(job, pool);
        let mig = Needs::of(model, job).mig.is_some();
        let milli = job.quota_milli(mig);
        let own_over = (self.used(charge) + milli).saturating_sub(self.quotas.limit(charge));
        let cohort_over = match charge {
            Charge::Team(..) => (self.cohort_used[pool.index()] + milli).saturating_sub(self.quotas.cohort(pool)),
            Charge::Reservation(..) => 0,
        };
        if own_over > 0 || cohort_over > 0 {
            if self.records[id.index()].preempting.is_none() {
                self.reclaim(id, pool, charge, own_over, cohort_over);
            }
            return Err(Wait { hold: Hold::Quota, reservable: true });
        }
        let job = &self.records[id.index()].job;
        let tier = model.tier(job.tier);
        if blocked_ahead && !tier.backfill {
            return Err(Wait::plain(Hold::Priority));
        }
        let reach = &self.quotas.reach[pool.index()];
        let ends = self.now.saturating_add(self.records[id.index()].estimate_left);
        let job = &self.records[id.index()].job;
        let avoiding = head.as_ref().is_some_and(|reservation| ends > reservation.time);
        // A job that would end by the head's start is judged with the head's nodes open to
        // it; later, when `now` plus its estimate passes that start, it would not be. A pass
        // that carries this one's verdicts on may do so only until then.
        if let Some(reservation) = head.as_deref_mut()
            && !avoiding
        {
            let last = reservation.time.saturating_sub(self.records[id.index()].estimate_left);
            reservation.steady_until = reservation.steady_until.min(last);
        }
        let shape = Shape::of(job, pool);
        if shape.as_ref().is_some_and(|shape| self.full.contains(&(shape.clone(), avoiding))) {
            return Err(Wait::plain(if head.is_some() { Hold::Priority } else { Hold::Capacity }));
        }
        let (telemetry, now) = (self.telemetry, self.now);
        let throttled = |node: NodeId| telemetry.is_some_and(|recorded| recorded.refuses(model, job, node, now));
        let placed = match head {
            None => place::place(model, reach, &self.cluster, job, pool, &mut self.ranker, &mut self.scratch, &throttled),
            Some(reservation) => {
                // A job that ends after the head's start leaves it the quota it needs.
                let cohort_charged = matches!(charge, Charge::Team(..)) && reservation.pool == pool;
                if ends > reservation.time {
                    let same_queue = charge == reservation.charge;
                    if (same_queue && milli > reservation.spare) || (cohort_charged && milli > reservation.spare_cohort) {
                        return Err(Wait::plain(Hold::Priority));
                    }
                    if same_queue {
                        reservation.spare -= milli;
                    }
                    if cohort_charged {
                        reservation.spare_cohort -= milli;
                    }
                }
                let free = |node: NodeId| throttled(node);
                let avoid = |node: NodeId| throttled(node) || reservation.nodes.contains(&node);
                // A job that ends by the head's reserved start may use the head's nodes.
                let blocked: &dyn Fn(NodeId) -> bool = if ends <= reservation.time { &free } else { &avoid };
                match place::place(model, reach, &self.cluster, job, pool, &mut self.ranker, &mut self.scratch, blocked) {
                    Ok(placement) => Ok(placement),
                    Err(_) => {
                        if let Some(shape) = shape {
                            self.full.insert((shape, avoiding));
                        }
                        return Err(Wait::plain(Hold::Priority));
                    }
                }
            }
        };
        match placed {
            Ok(placement) => {
                // Charged what its placement costs: the cheapest nodes come first (§5.3), so
                // when this one is over the budget, none of the pool fits it now.
                let record = &self.records[id.index()];
                let cost = placement_cost(model, &record.job, &placement, record.estimate_left);
                if !self.budgets.has_room(model, &record.job, cost, self.now) {
                    return Err(Wait::plain(Hold::Budget));
                }
                self.dequeue(id);
                self.start(id, placement);
                Ok(())
            }
            Err(_) => {
                if let Some(shape) = shape {
                    self.full.insert((shape, avoiding));
                }
                if self.records[id.index()].preempting.is_some() {
                    return Err(Wait::plain(Hold::Capacity));
                }
                self.preempt(id, pool);
                Err(Wait::plain(Hold::Capacity))
            }
        }
    }

    /// Starts `id` on `placement` now: takes the capacity, charges its quota (its queue, its
    /// team for fair share, its pool's cohort) and its estimated cost, and wakes it at its end.
    pub(super) fn start(&mut self, id: JobId, placement: Placement) {
        let model = self.model;
        self.changed = true;
        let record = &mut self.records[id.index()];
        let needs = Needs::of(model, &record.job);
        for share in &placement.nodes {
            self.cluster.take(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
        }
        let charge = self.quotas.charge(&record.job, placement.pool);
        let milli = record.job.quota_milli(needs.mig.is_some());
        *self.used.entry(charge).or_default() += milli;
        self.team_used[record.job.team.index()] += milli;
        if let Charge::Team(_, pool) = charge {
            self.cohort_used[pool.index()] += milli;
        }
        let charged = placement_cost(model, &record.job, &placement, record.estimate_left);
        self.budgets.spend(model, &record.job, charged, self.now);
        record.charge = Some(charge);
        record.charged = charged;
        record.started = self.now;
        record.epoch += 1;
        record.preempting = None;
        record.state = JobState::Running(placement.clone());
        let end = self.now.saturating_add(record.work_left);
        self.wakes.push(Reverse((end, Wake::End(id, record.epoch))));
        self.running.insert(id);
        self.emit(id, EventKind::Started(placement));
    }

    /// Frees what `id` holds and refunds the budget it did not use; returns its placement.
    pub(super) fn release(&mut self, id: JobId) -> Option<Placement> {
        let model = self.model;
        let now = self.now;
        let record = &mut self.records[id.index()];
        let placement = match std::mem::replace(&mut record.state, JobState::Finished) {
            JobState::Running(placement) | JobState::Draining(placement) => placement,
            other => {
                record.state = other;
                return None;
            }
        };
        self.changed = true;
        let needs = Needs::of(model, &record.job);
        for share in &placement.nodes {
            self.cluster.give(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
        }
        let milli = record.job.quota_milli(needs.mig.is_some());
        if let Some(charge) = record.charge.take() {
            if let Some(used) = self.used.get_mut(&charge) {
                *used -= milli;
            }
            if let Charge::Team(_, pool) = charge {
                self.cohort_used[pool.index()] -= milli;
            }
        }
        self.team_used[record.job.team.index()] -= milli;
        let ran = now - record.started;
        let spent = placement_cost(model, &record.job, &placement, ran);
        self.budgets.spend(model, &record.job, spent - record.charged, now);
        record.charged = 0;
        self.running.remove(&id);
        Some(placement)
    }
}

/// What `seconds` of `job` on `placement` cost at the nodes' prices.
fn placement_cost(model: &Model, job: &Job, placement: &Placement, seconds: Seconds) -> i64 {
    placement
        .nodes
        .iter()
        .map(|share| {
            let price = model.node(share.node).cost_per_gpu_hour.map_or(0, |money| money.minor);
            let milli = if share.mig { job.gpu_milli } else { share.milli };
            cost(price, share.gpus.len() as u32, milli, seconds)
        })
        .fold(0i64, i64::saturating_add)
}
