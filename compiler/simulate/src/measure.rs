//! What a replay measured, computed from the engine's events alone: the report never asks the
//! engine why, so a figure here is what an observer of the cluster would have counted.
//! Definitions are in docs/simulate.md; each field of [`Report`] names its unit.

use std::collections::BTreeMap;

use placid_engine::event::Placement;
use placid_engine::job::WHOLE_GPU_MILLI;
use placid_engine::quota::cost;
use placid_engine::{Event, EventKind, Hold};
use placid_lang::model::Model;
use placid_lang::units::Money;
use serde::Serialize;

use crate::outcome::{Cancel, End, JobOutcome, Pending, Tally, tallies};
use crate::stats::{Percentiles, Steps, TimeMean};
use crate::trace::TraceJob;

/// A day, in seconds: budgets are daily.
const DAY: u64 = 86_400;

/// The most points a plotted series keeps.
const PLOT_POINTS: usize = 2_000;

/// Everything a replay measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Jobs in the trace.
    pub jobs: usize,
    /// Jobs that ran to their end (or their limit).
    pub finished: usize,
    /// Jobs refused at submission, by reason (`tier-not-allowed`).
    pub rejected: BTreeMap<&'static str, usize>,
    /// Jobs cancelled: stopped by a preemption their tier does not requeue, or after a job
    /// that can never finish.
    pub cancelled: usize,
    /// Jobs still waiting or running when the replay ended (or never submitted, waiting for
    /// a job that had not ended).
    pub unfinished: usize,
    /// The jobs that did not finish, counted per state, reason, tier and team, and named.
    pub not_finished: Vec<Tally>,
    /// When the last thing happened, in seconds from the start of the trace.
    pub horizon_seconds: u64,
    /// GPUs of the inventory.
    pub gpus: u32,
    /// Allocated GPUs over total GPUs, averaged over time (0 to 1).
    pub allocation: f64,
    /// Free GPUs while some job waited for capacity, averaged over time: GPUs that exist but
    /// in shapes (a node, a domain) no waiting job can use.
    pub fragmented_gpus: f64,
    /// Time from submission to first start, per tier, in seconds (started jobs only).
    pub wait_by_tier: BTreeMap<String, Percentiles>,
    /// The same per team.
    pub wait_by_team: BTreeMap<String, Percentiles>,
    /// Preemptions, by the tier of the preempted job.
    pub preemptions: BTreeMap<String, usize>,
    /// GPU-hours of work lost to preemption: GPUs × time since the victim's last checkpoint.
    pub lost_gpu_hours: f64,
    /// GPU-hours run on nodes inside an NVLink domain (billable NVLink hours).
    pub nvlink_gpu_hours: f64,
    /// GPU-hours run in all.
    pub gpu_hours: f64,
    /// Spending per team, against its daily budget.
    pub cost: BTreeMap<String, TeamCost>,
    /// The finish time of the last job, in seconds (for a plan: the time to its final stage).
    pub makespan_seconds: u64,
    /// When the replay stopped at the engine's bound on its work
    /// ([`placid_engine::sim::MAX_VERDICTS`]), in seconds: the jobs not ended by then are
    /// unfinished, those never submitted as `not-replayed`. None when it ran to its end (and
    /// then not serialised, so a report reads as before the bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_seconds: Option<u64>,
    /// Series for plots, not serialised.
    #[serde(skip)]
    pub series: Series,
    /// Every job's outcome, in trace order (`--jobs`), not serialised with the report.
    #[serde(skip)]
    pub outcomes: Vec<JobOutcome>,
}

/// A team's spending.
#[derive(Clone, Debug, Serialize)]
pub struct TeamCost {
    /// What its jobs cost in all, at each node's price.
    #[serde(serialize_with = "money")]
    pub spent: Money,
    /// Its daily budget, if it has one.
    #[serde(serialize_with = "optional_money")]
    pub daily_budget: Option<Money>,
    /// The most it spent on one day.
    #[serde(serialize_with = "money")]
    pub peak_day: Money,
    /// Days on which it spent more than its budget (the engine holds new work at the budget,
    /// so an overrun is work that was admitted under it and ran past it).
    pub days_over_budget: usize,
}

/// Time series for the plots.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Allocated over total GPUs.
    pub allocation: Steps,
    /// Jobs waiting.
    pub queue: Steps,
    /// Per tier, the distribution of waits: `(seconds, percent of the tier's started jobs
    /// that waited at most that long)`, at most [`PLOT_POINTS`] points.
    pub wait_distribution: BTreeMap<String, Vec<(f64, f64)>>,
}

impl Series {
    /// The plot points of the allocation, in percent.
    pub fn allocation_points(&self, end: u64) -> Vec<(f64, f64)> {
        self.allocation.points(end, PLOT_POINTS).into_iter().map(|(time, value)| (time, value * 100.0)).collect()
    }

    /// The plot points of the queue length.
    pub fn queue_points(&self, end: u64) -> Vec<(f64, f64)> {
        self.queue.points(end, PLOT_POINTS)
    }
}

/// A run of a job: where, and from when. Only running jobs have one, boxed so that the
/// jobs not running cost a pointer each.
struct Run {
    placement: Placement,
    since: u64,
}

/// What the measure keeps about the cluster as it walks the events.
struct Walk<'a> {
    model: &'a Model,
    jobs: &'a [TraceJob],
    runs: Vec<Option<Box<Run>>>,
    outcomes: Vec<JobOutcome>,
    waiting: Vec<bool>,
    capacity_held: Vec<bool>,
    waiting_count: usize,
    capacity_count: usize,
    allocated_milli: u64,
    gpu_seconds: u128,
    nvlink_gpu_seconds: u128,
    /// Spending in minor units by team and day.
    spent: Vec<BTreeMap<u64, i64>>,
    series: Series,
    fragmented: TimeMean,
}

/// The measure of a replay of `jobs` (the trace, indexed by [`placid_engine::JobId`]), fed
/// its events one at a time as the engine reports them: a replay keeps no log of its events,
/// which would cost several times the memory of its jobs (docs/limits.md).
pub struct Measure<'a> {
    walk: Walk<'a>,
    total_milli: u64,
    rejected: BTreeMap<&'static str, usize>,
    preemptions: BTreeMap<String, usize>,
    lost_gpu_seconds: u128,
    horizon: u64,
    makespan: u64,
}

impl<'a> Measure<'a> {
    /// A measure of nothing yet, for a replay of `jobs` on `model`.
    pub fn new(model: &'a Model, jobs: &'a [TraceJob]) -> Measure<'a> {
        Measure {
            walk: Walk {
                model,
                jobs,
                runs: (0..jobs.len()).map(|_| None).collect(),
                // Names are filled in by `report`: until then an outcome costs no string.
                outcomes: (0..jobs.len()).map(|_| JobOutcome::new(String::new())).collect(),
                waiting: vec![false; jobs.len()],
                capacity_held: vec![false; jobs.len()],
                waiting_count: 0,
                capacity_count: 0,
                allocated_milli: 0,
                gpu_seconds: 0,
                nvlink_gpu_seconds: 0,
                spent: vec![BTreeMap::new(); model.teams.len()],
                series: Series::default(),
                fragmented: TimeMean::default(),
            },
            total_milli: u64::from(model.total_gpus()) * u64::from(WHOLE_GPU_MILLI),
            rejected: BTreeMap::new(),
            preemptions: BTreeMap::new(),
            lost_gpu_seconds: 0,
            horizon: 0,
            makespan: 0,
        }
    }

    /// Counts `event`, the next of the replay in the order the engine reported them.
    pub fn observe(&mut self, event: &Event) {
        let walk = &mut self.walk;
        let model = walk.model;
        let index = event.job.index();
        let Some(job) = walk.jobs.get(index) else { return };
        self.horizon = self.horizon.max(event.time);
        match &event.kind {
            EventKind::Submitted => {
                walk.wait(index, true);
                walk.outcomes[index].end = End::Unfinished(Pending::Queued);
            }
            EventKind::Started(placement) => {
                walk.wait(index, false);
                let outcome = &mut walk.outcomes[index];
                outcome.start.get_or_insert(event.time);
                outcome.end = End::Unfinished(Pending::Running);
                outcome.nodes = placement.nodes.iter().map(|share| share.node).collect();
                walk.allocated_milli += placement_milli(placement);
                walk.runs[index] = Some(Box::new(Run { placement: placement.clone(), since: event.time }));
            }
            EventKind::Finished => {
                walk.stop(index, event.time);
                walk.end(index, End::Finished, event.time);
                self.makespan = self.makespan.max(event.time);
            }
            EventKind::Preempted { lost_gpu_seconds: lost, .. } => {
                *self.preemptions.entry(model.tier(job.tier).name.to_string()).or_default() += 1;
                self.lost_gpu_seconds += u128::from(*lost);
                walk.outcomes[index].preemptions += 1;
            }
            EventKind::Requeued => {
                walk.stop(index, event.time);
                walk.wait(index, true);
                walk.outcomes[index].end = End::Unfinished(Pending::Queued);
            }
            EventKind::Cancelled => {
                // A running job is cancelled by its preemption; any other, by a job it runs
                // after that can never finish.
                let why = if walk.runs[index].is_some() { Cancel::Preempted } else { Cancel::After };
                walk.stop(index, event.time);
                walk.wait(index, false);
                walk.end(index, End::Cancelled(why), event.time);
            }
            EventKind::Rejected(reason) => {
                walk.wait(index, false);
                *self.rejected.entry(reason.name()).or_default() += 1;
                walk.end(index, End::Rejected(*reason), event.time);
            }
            EventKind::Held(hold) => {
                walk.hold(index, *hold == Hold::Capacity);
                if let End::Unfinished(Pending::Queued | Pending::Held(_)) = walk.outcomes[index].end {
                    walk.outcomes[index].end = End::Unfinished(Pending::Held(*hold));
                }
            }
            EventKind::Promoted => {}
        }
        walk.sample(event.time, self.total_milli);
    }

    /// What the events observed measured; `cut` is when the engine stopped at its bound on
    /// work ([`placid_engine::Simulation::cut`]), if it did.
    pub fn report(self, cut: Option<u64>) -> Report {
        let Measure { mut walk, rejected, preemptions, lost_gpu_seconds, horizon, makespan, .. } = self;
        let (model, jobs) = (walk.model, walk.jobs);
        for (outcome, job) in walk.outcomes.iter_mut().zip(jobs) {
            outcome.name.clone_from(&job.name);
            // A job the cut kept from being submitted did not wait for another: it was
            // never replayed.
            if cut.is_some() && outcome.end == End::Unfinished(Pending::After) {
                outcome.end = End::Unfinished(Pending::NotReplayed);
            }
        }
        let count = |state: fn(&End) -> bool| walk.outcomes.iter().filter(|outcome| state(&outcome.end)).count();
        let finished = count(|end| *end == End::Finished);
        let cancelled = count(|end| matches!(end, End::Cancelled(_)));
        let unfinished = count(|end| matches!(end, End::Unfinished(_)));
        let Waits { by_tier: wait_by_tier, by_team: wait_by_team, distributions } = waits(model, jobs, &walk.outcomes);
        walk.series.wait_distribution = distributions;
        let not_finished = tallies(model, jobs, &walk.outcomes);
        let cost = team_costs(model, &walk.spent);
        Report {
            jobs: jobs.len(),
            finished,
            rejected,
            cancelled,
            unfinished,
            not_finished,
            horizon_seconds: horizon,
            gpus: model.total_gpus(),
            allocation: walk.series.allocation.time_mean(horizon),
            fragmented_gpus: walk.fragmented.mean(horizon),
            wait_by_tier,
            wait_by_team,
            preemptions,
            lost_gpu_hours: gpu_hours(lost_gpu_seconds),
            nvlink_gpu_hours: gpu_hours(walk.nvlink_gpu_seconds),
            gpu_hours: gpu_hours(walk.gpu_seconds),
            cost,
            makespan_seconds: makespan,
            cut_seconds: cut,
            series: walk.series,
            outcomes: walk.outcomes,
        }
    }
}

impl Walk<'_> {
    /// The job ended (finished, rejected or cancelled) at `time`.
    fn end(&mut self, index: usize, end: End, time: u64) {
        let outcome = &mut self.outcomes[index];
        outcome.end = end;
        outcome.ended = Some(time);
    }

    fn wait(&mut self, index: usize, waiting: bool) {
        if self.waiting[index] != waiting {
            self.waiting[index] = waiting;
            if waiting {
                self.waiting_count += 1;
            } else {
                self.waiting_count -= 1;
                self.hold(index, false);
            }
        }
    }

    fn hold(&mut self, index: usize, for_capacity: bool) {
        if self.capacity_held[index] != for_capacity {
            self.capacity_held[index] = for_capacity;
            if for_capacity {
                self.capacity_count += 1;
            } else {
                self.capacity_count -= 1;
            }
        }
    }

    /// Ends the job's run at `time`, counting its GPU-hours and its cost day by day.
    fn stop(&mut self, index: usize, time: u64) {
        let Some(run) = self.runs[index].take() else { return };
        let model = self.model;
        let team = self.jobs[index].team.index();
        self.allocated_milli -= placement_milli(&run.placement);
        for share in &run.placement.nodes {
            let node = model.node(share.node);
            let gpus = u32::try_from(share.gpus.len()).unwrap_or(u32::MAX);
            let milli_seconds = u128::from(gpus) * u128::from(share.milli) * u128::from(time.saturating_sub(run.since));
            self.gpu_seconds += milli_seconds / u128::from(WHOLE_GPU_MILLI);
            if node.domain.is_some() {
                self.nvlink_gpu_seconds += milli_seconds / u128::from(WHOLE_GPU_MILLI);
            }
            let price = node.cost_per_gpu_hour.map_or(0, |money| money.minor);
            // Split at midnights, so each day is charged what ran on it.
            let mut from = run.since;
            while from < time {
                let day = from / DAY;
                let until = time.min((day + 1) * DAY);
                let amount = cost(price, gpus, share.milli, until - from);
                let spent = self.spent[team].entry(day).or_default();
                *spent = spent.saturating_add(amount);
                let job_cost = &mut self.outcomes[index].cost_minor;
                *job_cost = job_cost.saturating_add(amount);
                from = until;
            }
        }
    }

    fn sample(&mut self, time: u64, total_milli: u64) {
        let allocated = if total_milli == 0 { 0.0 } else { self.allocated_milli as f64 / total_milli as f64 };
        self.series.allocation.set(time, allocated);
        self.series.queue.set(time, self.waiting_count as f64);
        let free_gpus = total_milli.saturating_sub(self.allocated_milli) as f64 / f64::from(WHOLE_GPU_MILLI);
        self.fragmented.set(time, if self.capacity_count > 0 { free_gpus } else { 0.0 });
    }
}

/// GPU milli a placement holds.
fn placement_milli(placement: &Placement) -> u64 {
    placement.nodes.iter().map(|share| share.gpus.len() as u64 * u64::from(share.milli)).sum()
}

fn gpu_hours(gpu_seconds: u128) -> f64 {
    gpu_seconds as f64 / 3600.0
}

/// What [`waits`] measures: percentiles per tier and per team, and each tier's distribution.
struct Waits {
    by_tier: BTreeMap<String, Percentiles>,
    by_team: BTreeMap<String, Percentiles>,
    distributions: BTreeMap<String, Vec<(f64, f64)>>,
}

/// Waits per tier and per team, of the jobs that started, and each tier's distribution.
fn waits(model: &Model, jobs: &[TraceJob], outcomes: &[JobOutcome]) -> Waits {
    let mut by_tier: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut by_team: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        let Some(start) = outcome.start else { continue };
        let wait = start.saturating_sub(job.submit);
        by_tier.entry(model.tier(job.tier).name.to_string()).or_default().push(wait);
        by_team.entry(model.team(job.team).name.to_string()).or_default().push(wait);
    }
    let distributions = by_tier.iter().map(|(name, waits)| (name.clone(), distribution(waits))).collect();
    let summarise = |groups: BTreeMap<String, Vec<u64>>| groups.into_iter().map(|(name, waits)| (name, Percentiles::of(waits))).collect();
    Waits { by_tier: summarise(by_tier), by_team: summarise(by_team), distributions }
}

/// The empirical distribution of `waits` as plot points: the share of waits (percent) at
/// most each wait, thinned to about [`PLOT_POINTS`] evenly spaced ranks.
fn distribution(waits: &[u64]) -> Vec<(f64, f64)> {
    let mut sorted = waits.to_vec();
    sorted.sort_unstable();
    let count = sorted.len();
    let stride = count.div_ceil(PLOT_POINTS).max(1);
    let mut points = vec![(0.0, 0.0)];
    for (rank, wait) in sorted.iter().enumerate() {
        let last = rank + 1 == count;
        // Only the last of equal waits counts, so a step shows every job that waited so long.
        let next_differs = sorted.get(rank + 1).is_none_or(|next| next != wait);
        if next_differs && ((rank + 1) % stride == 0 || last || stride == 1) {
            points.push((*wait as f64, (rank + 1) as f64 / count as f64 * 100.0));
        }
    }
    points
}

fn team_costs(model: &Model, spent: &[BTreeMap<u64, i64>]) -> BTreeMap<String, TeamCost> {
    let currency = model.project.currency;
    let money = |minor: i64| Money { currency, minor };
    model
        .teams
        .iter()
        .zip(spent)
        .map(|(team, days)| {
            let budget = team.daily_budget.as_ref().map(|budget| budget.value);
            let total = days.values().fold(0i64, |sum, day| sum.saturating_add(*day));
            let peak = days.values().copied().max().unwrap_or(0);
            let over = budget.map_or(0, |budget| days.values().filter(|day| **day > budget.minor).count());
            (team.name.to_string(), TeamCost { spent: money(total), daily_budget: budget, peak_day: money(peak), days_over_budget: over })
        })
        .collect()
}

/// Money as placid writes it in a policy: `(usd)12.34`, exact.
fn money<S: serde::Serializer>(amount: &Money, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(amount)
}

fn optional_money<S: serde::Serializer>(amount: &Option<Money>, serializer: S) -> Result<S::Ok, S::Error> {
    match amount {
        Some(amount) => serializer.collect_str(amount),
        None => serializer.serialize_none(),
    }
}
