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
    /// placement (with preemption, and the head's reservation). Quota is charged per cell,
    /// and the job is admitted on the first of its pool's cells, in the ClusterQueue's flavor
    /// order, whose quota has room for it and whose nodes can host it now.
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
        let mig = Needs::of(model, job).mig.is_some();
        let milli = job.quota_milli(mig);
        let spread = self.records[id.index()].spread.contains(&pool);
        // Where it may be placed: the cells whose quota has room for it, in flavor order (as
        // Kueue's flavor assigner takes the first flavor that fits, borrowing or not); a job
        // no single cell holds, across the pool's cells while they have room together.
        let areas: Vec<Option<usize>> = if spread {
            let room: u64 = self.quotas.cells_for(job, pool).map(|cell| self.room(self.quotas.charge(job, pool, cell))).sum();
            if room < milli {
                if self.records[id.index()].preempting.is_none() {
                    self.reclaim_across(id, pool);
                }
                return Err(Wait { hold: Hold::Quota, reservable: true });
            }
            vec![None]
        } else {
            let mut fitting = Vec::new();
            let mut over = Vec::new();
            for cell in self.quotas.cells_for(job, pool) {
                let charge = self.quotas.charge(job, pool, cell);
                let own_over = (self.used(charge) + milli).saturating_sub(self.quotas.limit(charge));
                let cohort_over = match charge {
                    Charge::Team(..) => (self.cohort_used[cell] + milli).saturating_sub(self.quotas.cohort(cell)),
                    Charge::Reservation(..) => 0,
                };
                if own_over == 0 && cohort_over == 0 {
                    fitting.push(Some(cell));
                } else {
                    over.push((charge, own_over, cohort_over));
                }
            }
            if fitting.is_empty() {
                // Kueue preempts in the first flavor where preemption frees enough.
                if self.records[id.index()].preempting.is_none() {
                    for (charge, own_over, cohort_over) in over {
                        if self.reclaim(id, charge, own_over, cohort_over) {
                            break;
                        }
                    }
                }
                return Err(Wait { hold: Hold::Quota, reservable: true });
            }
            fitting
        };
        let job = &self.records[id.index()].job;
        let tier = model.tier(job.tier);
        if blocked_ahead && !tier.backfill {
            return Err(Wait::plain(Hold::Priority));
        }
        let ends = self.now.saturating_add(self.records[id.index()].estimate_left);
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
        let (telemetry, now) = (self.telemetry, self.now);
        let mut searched = false;
        for area in areas.iter().copied() {
            let job = &self.records[id.index()].job;
            if shape.as_ref().is_some_and(|shape| self.full.contains(&(shape.clone(), area, avoiding))) {
                continue;
            }
            searched = true;
            // A job that ends after the head's start leaves it the quota it needs: in a cell,
            // what it would be charged there is set aside before the search, as the head's
            // spare is what the jobs ahead in the pass leave.
            if let (Some(cell), Some(reservation)) = (area, head.as_deref_mut())
                && avoiding
            {
                let claim = [(self.quotas.charge(job, pool, cell), milli)];
                if !reservation.leaves_room(&claim) {
                    continue;
                }
                reservation.take(&claim);
            }
            let throttled = |node: NodeId| telemetry.is_some_and(|recorded| recorded.refuses(model, job, node, now));
            // A job that ends by the head's reserved start may use the head's nodes.
            let avoid = |node: NodeId| throttled(node) || head.as_ref().is_some_and(|reservation| reservation.nodes.contains(&node));
            let blocked: &dyn Fn(NodeId) -> bool = if avoiding { &avoid } else { &throttled };
            let nodes = self.quotas.nodes(pool, area);
            let Ok(placement) = place::place(model, nodes, &self.cluster, job, pool, &mut self.ranker, &mut self.scratch, blocked) else {
                if let Some(shape) = &shape {
                    self.full.insert((shape.clone(), area, avoiding));
                }
                continue;
            };
            let charges = self.quotas.charges(job, &placement, mig);
            if spread && !charges.iter().all(|(charge, milli)| *milli <= self.room(*charge)) {
                return Err(Wait { hold: Hold::Quota, reservable: true });
            }
            // Across cells, what it is charged is known once it is placed.
            if let Some(reservation) = head.as_deref()
                && spread
                && avoiding
                && !reservation.leaves_room(&charges)
            {
                return Err(Wait::plain(Hold::Priority));
            }
            // Charged what its placement costs: the cheapest nodes come first (§5.3), so
            // when this one is over the budget, none of the pool fits it now.
            let record = &self.records[id.index()];
            let cost = placement_cost(model, &record.job, &placement, record.estimate_left);
            if !self.budgets.has_room(model, &record.job, cost, self.now) {
                return Err(Wait::plain(Hold::Budget));
            }
            if let Some(reservation) = head.as_deref_mut()
                && spread
                && avoiding
            {
                reservation.take(&charges);
            }
            self.dequeue(id);
            self.start(id, placement);
            return Ok(());
        }
        if head.is_some() {
            return Err(Wait::plain(Hold::Priority));
        }
        // Kueue would admit it on the first cell with room: its victims are that cell's.
        if searched && self.records[id.index()].preempting.is_none() {
            self.preempt(id, pool, areas[0]);
        }
        Err(Wait::plain(Hold::Capacity))
    }

    /// The GPU milli `charge` may take now: what its limit leaves, and for a team queue what
    /// the cell's cohort leaves.
    fn room(&self, charge: Charge) -> u64 {
        self.room_after(charge, 0, 0)
    }

    /// [`Self::room`] once jobs holding `freed` milli of `charge`, and `cohort_freed` milli of
    /// its cell's cohort, have ended: what the backfill's reservation and a reclaim across
    /// cells foresee.
    pub(super) fn room_after(&self, charge: Charge, freed: u64, cohort_freed: u64) -> u64 {
        let own = self.own_room(charge, freed);
        match charge {
            Charge::Team(_, cell) => own.min(self.cohort_room(cell, cohort_freed)),
            Charge::Reservation(..) => own,
        }
    }

    /// What the limit of `charge` leaves once `freed` milli of it have ended.
    pub(super) fn own_room(&self, charge: Charge, freed: u64) -> u64 {
        (self.quotas.limit(charge) + freed).saturating_sub(self.used(charge))
    }

    /// What the cohort of `cell` leaves once `freed` milli of it have ended.
    pub(super) fn cohort_room(&self, cell: usize, freed: u64) -> u64 {
        (self.quotas.cohort(cell) + freed).saturating_sub(self.cohort_used[cell])
    }

    /// Starts `id` on `placement` now: takes the capacity, charges its quota (its queue in
    /// each cell of the placement, its team for fair share, the cells' cohorts) and its
    /// estimated cost, and wakes it at its end.
    pub(super) fn start(&mut self, id: JobId, placement: Placement) {
        let model = self.model;
        self.changed = true;
        let record = &mut self.records[id.index()];
        let needs = Needs::of(model, &record.job);
        for share in &placement.nodes {
            self.cluster.take(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
        }
        let charges = self.quotas.charges(&record.job, &placement, needs.mig.is_some());
        for (charge, milli) in &charges {
            *self.used.entry(*charge).or_default() += milli;
            if let Charge::Team(_, cell) = charge {
                self.cohort_used[*cell] += milli;
            }
        }
        self.team_used[record.job.team.index()] += record.job.quota_milli(needs.mig.is_some());
        let charged = placement_cost(model, &record.job, &placement, record.estimate_left);
        self.budgets.spend(model, &record.job, charged, self.now);
        record.charges = charges;
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
        for (charge, milli) in std::mem::take(&mut record.charges) {
            if let Some(used) = self.used.get_mut(&charge) {
                *used -= milli;
            }
            if let Charge::Team(_, cell) = charge {
                self.cohort_used[cell] -= milli;
            }
        }
        self.team_used[record.job.team.index()] -= record.job.quota_milli(needs.mig.is_some());
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
