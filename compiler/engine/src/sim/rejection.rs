//! Rejection, docs/semantics.md §3: what can never run. A job is asked at its arrival whether
//! any pool can ever take it (the tier, then per pool the hardware of the empty cluster, the
//! quota, the budget); the checker asks the same question of plan stages and tests through
//! [`verdict_in`], so both give the same verdict.

use placid_lang::model::{Model, PoolId};

use super::{JobState, Shape, Simulation};
use crate::cluster::Cluster;
use crate::event::{EventKind, Reject};
use crate::job::{Job, JobId};
use crate::place::{self, Needs, Scratch};
use crate::quota::{Budgets, Quotas, least_cost};
use crate::rank::Ranker;

/// The most distinct job shapes whose static verdict is remembered before the memo starts over.
const VERDICT_MEMO: usize = 4096;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// A job arrives: rejected at once when it can never run (and the jobs after it with it),
    /// else queued, or left waiting for the jobs it runs after.
    pub(super) fn arrive(&mut self, id: JobId) {
        // A job cancelled before its arrival (a job it runs after could never run) stays
        // cancelled: arriving would queue it to wait forever for a job that never ends.
        if self.records[id.index()].state == JobState::Cancelled {
            return;
        }
        self.emit(id, EventKind::Submitted);
        match self.verdict(id) {
            Err(reason) => {
                self.records[id.index()].state = JobState::Rejected(reason);
                self.emit(id, EventKind::Rejected(reason));
                self.release_dependents(id, false);
            }
            Ok((pools, spread)) => {
                let record = &mut self.records[id.index()];
                record.pools = pools;
                record.spread = spread;
                if record.waiting_on == 0 {
                    self.enqueue(id);
                } else {
                    record.state = JobState::Waiting;
                }
            }
        }
    }

    /// The pools `id` can ever run in, and those of them where no single cell can hold it,
    /// or the furthest reason it cannot run in any: the team may use the tier; then, per pool,
    /// the hardware (filters, then the locality unit), the quota, the budget.
    fn verdict(&mut self, id: JobId) -> Result<(Vec<PoolId>, Vec<PoolId>), Reject> {
        let job = &self.records[id.index()].job;
        let model = self.model;
        if !model.team(job.team).tiers.iter().any(|tier| tier.value == job.tier) {
            return Err(Reject::TierNotAllowed);
        }
        let pools: Vec<PoolId> = match job.pool {
            Some(pool) => vec![pool],
            None => (0..model.pools.len()).map(PoolId::from_index).collect(),
        };
        let pools: Vec<PoolId> = pools.into_iter().filter(|pool| self.model.tier_may_use(self.model.tier(job.tier), *pool)).collect();
        if pools.is_empty() {
            return Err(Reject::TierNotAllowed);
        }
        let mut viable = Vec::new();
        let mut spread = Vec::new();
        let mut furthest = Reject::NoFeasibleNode;
        for pool in pools {
            match self.pool_verdict(id, pool) {
                Ok(()) => {
                    viable.push(pool);
                    if !self.one_cell_holds(id, pool) {
                        spread.push(pool);
                    }
                }
                Err(reason) => furthest = furthest.max(reason),
            }
        }
        if viable.is_empty() { Err(furthest) } else { Ok((viable, spread)) }
    }

    /// Whether some cell `id` may use in `pool` can ever hold it alone: its charge's limit
    /// there covers it and the cell's nodes, empty, can host it. Kueue admits a workload on
    /// one flavor, so a job no cell holds stays pending there forever (the checker warns,
    /// E157); the engine runs it across the pool's cells, as Slurm does.
    fn one_cell_holds(&mut self, id: JobId, pool: PoolId) -> bool {
        let (model, job) = (self.model, &self.records[id.index()].job);
        let milli = job.quota_milli(Needs::of(model, job).mig.is_some());
        let (quotas, empty, scratch, nevers) = (&self.quotas, &self.empty, &mut self.scratch, &mut self.nevers);
        let shape = Shape::of(job, pool);
        quotas.cells_for(job, pool).any(|cell| {
            if milli > quotas.limit(quotas.charge(job, pool, cell)) {
                return false;
            }
            let nodes = quotas.nodes(pool, Some(cell));
            let never = match &shape {
                None => place::never(model, nodes, empty, job, pool, scratch),
                Some(shape) => {
                    if nevers.len() >= VERDICT_MEMO {
                        nevers.clear();
                    }
                    *nevers.entry((shape.clone(), Some(cell))).or_insert_with(|| place::never(model, nodes, empty, job, pool, scratch))
                }
            };
            never.is_none()
        })
    }

    /// [`verdict_in`], with the hardware question (a search of the empty cluster) asked once
    /// per shape: jobs differ mostly in what the quota and budget questions read.
    fn pool_verdict(&mut self, id: JobId, pool: PoolId) -> Result<(), Reject> {
        let (model, job) = (self.model, &self.records[id.index()].job);
        let (empty, reach, scratch, nevers) = (&self.empty, &self.quotas.reach[pool.index()], &mut self.scratch, &mut self.nevers);
        let price = place::cheapest_price(model, reach, job, pool, scratch);
        verdict_with(model, &self.quotas, job, pool, price, || match Shape::of(job, pool) {
            None => place::never(model, reach, empty, job, pool, scratch),
            Some(shape) => {
                if nevers.len() >= VERDICT_MEMO {
                    nevers.clear();
                }
                *nevers.entry((shape, None)).or_insert_with(|| place::never(model, reach, empty, job, pool, scratch))
            }
        })
    }
}

/// Whether `job` can ever run in `pool`: the hardware (its filters, then its locality unit),
/// then its quota, then its budget. The checker asks this of plan stages and tests.
pub fn verdict_in(model: &Model, quotas: &Quotas, empty: &Cluster, job: &Job, pool: PoolId) -> Result<(), Reject> {
    let price = place::cheapest_price(model, &quotas.reach[pool.index()], job, pool, &mut Scratch::default());
    verdict_with(model, quotas, job, pool, price, || hardware_verdict(model, quotas, empty, job, pool))
}

/// Why the hardware of `pool` can never hold `job`, whatever its tier, quota and budget: no
/// node passes its filters, no unit of its locality holds the gang, or (locality `any`) the
/// nodes together are too few. The checker's answer for a plan stage's fit (E023, E031,
/// E100) is this one, so `placid check` passes no stage the engine would reject.
pub fn hardware_verdict(model: &Model, quotas: &Quotas, empty: &Cluster, job: &Job, pool: PoolId) -> Option<Reject> {
    place::never(model, &quotas.reach[pool.index()], empty, job, pool, &mut Scratch::default())
}

/// [`verdict_in`], asking `never` whether the hardware can ever hold the job, whose cheapest
/// placement costs `price` a GPU-hour.
fn verdict_with(
    model: &Model,
    quotas: &Quotas,
    job: &Job,
    pool: PoolId,
    price: i64,
    never: impl FnOnce() -> Option<Reject>,
) -> Result<(), Reject> {
    if !model.tier_may_use(model.tier(job.tier), pool) {
        return Err(Reject::TierNotAllowed);
    }
    if let Some(reason) = never() {
        return Err(reason);
    }
    // A job no single cell holds runs across the pool's cells, charged in each within its
    // limit there: only more than all of them together can never be admitted.
    let mig = Needs::of(model, job).mig.is_some();
    if job.quota_milli(mig) > quotas.pool_limit(job, pool) {
        return Err(Reject::ExceedsQuota);
    }
    if !Budgets::ever_fits(model, job, least_cost(job, price)) {
        return Err(Reject::ExceedsBudget);
    }
    Ok(())
}
