//! Quotas and budgets, per pool, from the guarantees of `model/shares.rs`: a team's
//! jobs in a pool are charged to its queue (guaranteed GPUs, plus what it may borrow when it
//! has a backfill tier); a reserving tier's jobs in its reserved pool are charged to the
//! tier's reservation, which lends and borrows nothing. Kueue splits the same guarantees per
//! cell; docs/semantics.md section 4 says where that differs with overlapping pools.

use placid_lang::model::{Model, NodeId, PoolId, TeamId, TierId};

use crate::job::{Job, Seconds, WHOLE_GPU_MILLI};

/// One day, the period of a daily budget.
pub const DAY: Seconds = 86_400;

/// What a job is charged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Charge {
    /// Its team's queue in the pool.
    Team(TeamId, PoolId),
    /// Its tier's reservation in the pool.
    Reservation(TierId, PoolId),
}

/// The quota limits of a model, in GPU milli, and the nodes each pool reaches.
#[derive(Clone, Debug)]
pub struct Quotas {
    /// `[team][pool]`: guaranteed plus borrowable.
    team_limit: Vec<Vec<u64>>,
    /// `[team][pool]`: guaranteed (Kueue's nominal quota).
    guaranteed: Vec<Vec<u64>>,
    /// `[pool]`: what the teams are guaranteed together, the most their queues hold at
    /// once (the cohort lends only unused nominal quota; reservations lend nothing).
    cohort: Vec<u64>,
    /// `[tier][pool]`: reserved.
    reserved: Vec<Vec<u64>>,
    /// `[pool]`: the nodes work placed through the pool can run on (members no other fenced
    /// pool holds), sorted.
    pub reach: Vec<Vec<NodeId>>,
}

impl Quotas {
    /// The limits of `model`.
    pub fn new(model: &Model) -> Quotas {
        let fences = model.fences();
        let pools = model.pools.len();
        let mut team_limit = vec![vec![0; pools]; model.teams.len()];
        let mut guaranteed_milli = vec![vec![0; pools]; model.teams.len()];
        let mut cohort = Vec::with_capacity(pools);
        let mut reserved = vec![vec![0; pools]; model.tiers.len()];
        let mut reach = Vec::with_capacity(pools);
        for index in 0..pools {
            let pool = PoolId::from_index(index);
            let guaranteed = fences.guaranteed_gpus(pool);
            let borrowable = fences.borrowable_gpus(&guaranteed);
            for (limits, (own, borrow)) in team_limit.iter_mut().zip(guaranteed.iter().zip(&borrowable)) {
                limits[index] = (u64::from(*own) + u64::from(*borrow)) * u64::from(WHOLE_GPU_MILLI);
            }
            for (nominal, own) in guaranteed_milli.iter_mut().zip(&guaranteed) {
                nominal[index] = u64::from(*own) * u64::from(WHOLE_GPU_MILLI);
            }
            cohort.push(guaranteed.iter().map(|own| u64::from(*own)).sum::<u64>() * u64::from(WHOLE_GPU_MILLI));
            let nodes: Vec<NodeId> = model.pool(pool).nodes.iter().copied().filter(|node| fences.reaches(pool, *node)).collect();
            reach.push(nodes);
        }
        for (tier, each) in model.tiers.iter().enumerate() {
            for reservation in &each.reservations {
                reserved[tier][reservation.pool.index()] += u64::from(reservation.gpus) * u64::from(WHOLE_GPU_MILLI);
            }
        }
        Quotas { team_limit, guaranteed: guaranteed_milli, cohort, reserved, reach }
    }

    /// What `job` is charged to in `pool`: its tier's reservation there, if any, else its
    /// team's queue.
    pub fn charge(&self, job: &Job, pool: PoolId) -> Charge {
        if self.reserved[job.tier.index()][pool.index()] > 0 { Charge::Reservation(job.tier, pool) } else { Charge::Team(job.team, pool) }
    }

    /// The most GPU milli `charge` may ever hold.
    pub fn limit(&self, charge: Charge) -> u64 {
        match charge {
            Charge::Team(team, pool) => self.team_limit[team.index()][pool.index()],
            Charge::Reservation(tier, pool) => self.reserved[tier.index()][pool.index()],
        }
    }

    /// The GPU milli `team` is guaranteed in `pool`.
    pub fn guaranteed(&self, team: TeamId, pool: PoolId) -> u64 {
        self.guaranteed[team.index()][pool.index()]
    }

    /// The GPU milli all team queues may hold in `pool` together.
    pub fn cohort(&self, pool: PoolId) -> u64 {
        self.cohort[pool.index()]
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
