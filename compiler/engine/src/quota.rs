//! Quotas and budgets. Quota is charged per *cell* (`lang/src/model/cells.rs`), as Kueue
//! charges a workload to the one ResourceFlavor it is admitted on: a team's jobs to its queue
//! in the cell (guaranteed GPUs, plus what it may borrow when it has a backfill tier), a
//! reserving tier's jobs in its reserved pool to the tier's reservation in the cell, which
//! lends and borrows nothing; the team queues together hold at most what the reservations
//! leave of the cell (the cohort). Every figure is the language's (`Cells::gpus`,
//! `CellGpus::team_limit`); which cell a job is admitted on is admission's
//! (docs/semantics.md section 4).

use std::collections::BTreeMap;

use placid_lang::model::cells::{CellGpus, Cells};
use placid_lang::model::{Model, NodeId, PoolId, TeamId, TierId};

use crate::event::Placement;
use crate::job::{Job, Seconds, WHOLE_GPU_MILLI};

/// One day, the period of a daily budget.
pub const DAY: Seconds = 86_400;

/// What a job is charged to, in one cell (an index into [`Model::cells`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Charge {
    /// Its team's queue in the cell.
    Team(TeamId, usize),
    /// Its tier's reservation in the cell.
    Reservation(TierId, usize),
}

impl Charge {
    /// The cell charged.
    pub fn cell(self) -> usize {
        match self {
            Charge::Team(_, cell) | Charge::Reservation(_, cell) => cell,
        }
    }
}

/// The quota limits of a model per cell, the cells, and the nodes each pool reaches.
#[derive(Clone, Debug)]
pub struct Quotas {
    /// The partition of the inventory the quotas are split over.
    pub cells: Cells,
    /// The language's GPU quotas of every cell, in GPUs.
    gpus: CellGpus,
    /// `[team][cell]`: the most the team's queue may hold ([`CellGpus::team_limit`]).
    team_limit: Vec<Vec<u64>>,
    /// `[tier][pool]`: whether the tier reserves in the pool, and so is charged to its
    /// reservation there.
    reserves: Vec<Vec<bool>>,
    /// `[pool]`: the nodes work placed through the pool can run on (members no other fenced
    /// pool holds), sorted: the nodes of its cells.
    pub reach: Vec<Vec<NodeId>>,
    /// `[pool]`: its cells in the order a class that prefers NVLink tries them
    /// ([`Model::nvlink_preferred_first`]: those holding an NVLink node first, each group in
    /// cost order), the order the Slurm target gives such a class's price partitions.
    nvlink_first: Vec<Vec<usize>>,
    /// `[class]`: whether the class prefers NVLink.
    prefers_nvlink: Vec<bool>,
}

impl Quotas {
    /// The limits of `model`.
    pub fn new(model: &Model) -> Quotas {
        let fences = model.fences();
        let cells = model.cells();
        let gpus = cells.gpus(model);
        let team_limit = (0..model.teams.len())
            .map(|team| (0..cells.cells.len()).map(|cell| gpus.team_limit(model, TeamId::from_index(team), cell)).collect())
            .collect();
        let reserves = model
            .tiers
            .iter()
            .map(|tier| (0..model.pools.len()).map(|pool| tier.reserves_in(PoolId::from_index(pool))).collect())
            .collect();
        let reach = (0..model.pools.len()).map(PoolId::from_index).map(|pool| fences.reach(pool).collect()).collect();
        let preferring = model.classes.iter().find(|class| class.prefers_nvlink());
        let nvlink_first = (0..model.pools.len())
            .map(|pool| {
                let by_cost = cells.of_pool[pool].clone();
                model.nvlink_preferred_first(preferring, by_cost, |node, cell| cells.of_node[node.index()] == Some(*cell))
            })
            .collect();
        let prefers_nvlink = model.classes.iter().map(placid_lang::model::Class::prefers_nvlink).collect();
        Quotas { cells, gpus, team_limit, reserves, reach, nvlink_first, prefers_nvlink }
    }

    /// The cells `job` may be admitted on through `pool`, of its capacity kind when it names
    /// one, in the order they are tried: cost order, the order Kueue's flavor assigner tries
    /// the ClusterQueue's flavors; for a class that prefers NVLink, the cells holding NVLink
    /// nodes first, as Slurm tries the class's price partitions (Kueue keeps cost order there,
    /// a divergence docs/semantics.md states).
    pub fn cells_for<'q>(&'q self, job: &Job, pool: PoolId) -> impl Iterator<Item = usize> + 'q {
        let capacity = job.capacity;
        let order = if job.class.is_some_and(|class| self.prefers_nvlink[class.index()]) {
            &self.nvlink_first[pool.index()]
        } else {
            &self.cells.of_pool[pool.index()]
        };
        order.iter().copied().filter(move |cell| capacity.is_none_or(|kind| self.cells.cells[*cell].capacity == kind))
    }

    /// The nodes of `cell`, sorted; the pool's reach when `cell` is `None` (a job no single
    /// cell can hold is placed across them).
    pub fn nodes(&self, pool: PoolId, cell: Option<usize>) -> &[NodeId] {
        match cell {
            Some(cell) => &self.cells.cells[cell].nodes,
            None => &self.reach[pool.index()],
        }
    }

    /// What `job` is charged to in `cell` of `pool`: its tier's reservation there when the
    /// tier reserves in `pool`, else its team's queue.
    pub fn charge(&self, job: &Job, pool: PoolId, cell: usize) -> Charge {
        if self.reserves[job.tier.index()][pool.index()] { Charge::Reservation(job.tier, cell) } else { Charge::Team(job.team, cell) }
    }

    /// Whether jobs of `tier` in `pool` are charged to the tier's reservation.
    pub fn reserves(&self, tier: TierId, pool: PoolId) -> bool {
        self.reserves[tier.index()][pool.index()]
    }

    /// What `job`, placed on `placement`, is charged, in GPU milli per charge: each cell its
    /// GPUs lie in, for the GPUs there (one cell, unless no single cell can hold the job).
    /// MIG instances count nothing (`mig`).
    pub fn charges(&self, job: &Job, placement: &Placement, mig: bool) -> Vec<(Charge, u64)> {
        let per_gpu = if mig { 0 } else { u64::from(job.gpu_milli.min(WHOLE_GPU_MILLI)) };
        let mut charges: BTreeMap<Charge, u64> = BTreeMap::new();
        for share in &placement.nodes {
            // A placement is made within the pool's reach, which its cells cover.
            let Some(cell) = self.cells.of_node[share.node.index()] else { continue };
            *charges.entry(self.charge(job, placement.pool, cell)).or_default() += share.gpus.len() as u64 * per_gpu;
        }
        charges.into_iter().collect()
    }

    /// The most GPU milli `charge` may ever hold.
    pub fn limit(&self, charge: Charge) -> u64 {
        let gpus = match charge {
            Charge::Team(team, cell) => self.team_limit[team.index()][cell],
            Charge::Reservation(tier, cell) => self.gpus.reserved[tier.index()][cell],
        };
        gpus * u64::from(WHOLE_GPU_MILLI)
    }

    /// The most GPU milli `job` may ever hold through `pool`: its charges' limits in the
    /// cells it may use, together, since a job no single cell holds runs across them.
    pub fn pool_limit(&self, job: &Job, pool: PoolId) -> u64 {
        self.cells_for(job, pool).map(|cell| self.limit(self.charge(job, pool, cell))).sum()
    }

    /// The GPU milli `team` is guaranteed in `cell` (Kueue's nominal quota).
    pub fn guaranteed(&self, team: TeamId, cell: usize) -> u64 {
        self.gpus.teams[team.index()][cell] * u64::from(WHOLE_GPU_MILLI)
    }

    /// The GPU milli all team queues may hold in `cell` together: what the reservations leave
    /// (the cohort lends only unused nominal quota; reservations lend nothing).
    pub fn cohort(&self, cell: usize) -> u64 {
        self.gpus.unreserved[cell] * u64::from(WHOLE_GPU_MILLI)
    }
}

/// The least `job` can cost, in minor currency units: GPUs x estimated run x `price`, the
/// cheapest GPU-hour its filters reach in its pool ([`crate::place::cheapest_price`]). A job
/// is charged what its placement costs (docs/semantics.md §4); one whose least cost exceeds
/// a budget can never run.
pub fn least_cost(job: &Job, price: i64) -> i64 {
    cost(price, job.gpus, job.gpu_milli, job.estimate())
}

/// The cost of `gpus` GPUs of `milli` each for `seconds` at `price` minor units per
/// GPU-hour, rounded down, saturating.
pub fn cost(price: i64, gpus: u32, milli: u32, seconds: Seconds) -> i64 {
    let total = i128::from(price) * i128::from(gpus) * i128::from(milli) * i128::from(seconds) / (3600 * i128::from(WHOLE_GPU_MILLI));
    i64::try_from(total).unwrap_or(if total < 0 { i64::MIN } else { i64::MAX })
}

/// Per-day spending of teams, cost centers and tiers; only the current day is kept.
#[derive(Clone, Debug)]
pub struct Budgets {
    day: Seconds,
    teams: Vec<i64>,
    centers: Vec<i64>,
    tiers: Vec<i64>,
}

impl Budgets {
    /// No spending yet.
    pub fn new(model: &Model) -> Budgets {
        Budgets { day: 0, teams: vec![0; model.teams.len()], centers: vec![0; model.cost_centers.len()], tiers: vec![0; model.tiers.len()] }
    }

    /// Moves to the day of `now`, forgetting the spending of earlier days.
    fn roll(&mut self, now: Seconds) {
        let day = now / DAY;
        if day != self.day {
            self.day = day;
            for spent in self.teams.iter_mut().chain(&mut self.centers).chain(&mut self.tiers) {
                *spent = 0;
            }
        }
    }

    /// The budgets `job` spends from, with today's spending of each: its team's, its team's
    /// cost center's and its tier's (a tier budget covers every team's jobs of the tier).
    fn accounts(&mut self, model: &Model, job: &Job) -> [(&mut i64, Option<i64>); 3] {
        let team = model.team(job.team);
        let center = team.cost_center.value;
        let limit = |budget: Option<&placid_lang::span::Spanned<placid_lang::units::Money>>| budget.map(|money| money.value.minor);
        [
            (&mut self.teams[job.team.index()], limit(team.daily_budget.as_ref())),
            (&mut self.centers[center.index()], limit(model.cost_center(center).daily_budget.as_ref())),
            (&mut self.tiers[job.tier.index()], limit(model.tier(job.tier).daily_budget.as_ref())),
        ]
    }

    /// Whether `amount` more fits every budget of `job` on `now`'s day.
    pub fn has_room(&mut self, model: &Model, job: &Job, amount: i64, now: Seconds) -> bool {
        self.roll(now);
        self.accounts(model, job).into_iter().all(|(spent, budget)| budget.is_none_or(|budget| spent.saturating_add(amount) <= budget))
    }

    /// Whether `amount` alone fits every budget of `job`.
    pub fn ever_fits(model: &Model, job: &Job, amount: i64) -> bool {
        Budgets::new(model).accounts(model, job).into_iter().all(|(_, budget)| budget.is_none_or(|budget| amount <= budget))
    }

    /// Spends `amount` (negative to refund) from every budget of `job` on `now`'s day.
    pub fn spend(&mut self, model: &Model, job: &Job, amount: i64, now: Seconds) {
        self.roll(now);
        for (spent, _) in self.accounts(model, job) {
            *spent = spent.saturating_add(amount);
        }
    }
}
