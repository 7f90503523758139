//! The event-driven simulation: arrivals, scheduling passes, completions and preemptions, in
//! time order, reported as [`Event`]s. docs/semantics.md is the normative description; the
//! comments here say how the code follows it.
//!
//! A scheduling pass runs after every instant at which something happened. It walks the
//! pending jobs in queue order (tier priority, then fair share, then submission), at most
//! [`PASS_DEPTH`] of them, as Slurm's backfill looks at `bf_max_job_test` jobs. The first job
//! held for capacity is the head: it gets a reservation (the earliest time its gang fits as
//! the running jobs end, EASY backfill), and a later job starts only where it cannot delay
//! that reservation.
//!
//! This file holds the state (§1 of docs/semantics.md), the public API, the event loop and the
//! events it reports (§10). Each rule of the semantics is an `impl Simulation` block of its own
//! file, named by its section:
//!
//! - `rejection`: §3, what can never run, asked at arrival;
//! - `admission`: §4 budget then quota, and §5 placement (through `crate::place`), which
//!   start a job, and the charge and refund around a run;
//! - `preemption`: §6, who may be a victim, signals, windows and stops;
//! - `queue`: §7, the queue order with fair share, and the scheduling pass that walks it;
//! - `backfill`: §7, the head's reservation of EASY backfill;
//! - `ends`: §8, a job's end and the jobs waiting for it;
//! - `plans`: §9, cancelled dependents and Pattern C promotions.

mod admission;
mod backfill;
mod ends;
mod plans;
mod preemption;
mod queue;
mod rejection;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};

use placid_lang::model::{Dependency, Model, NodeId, PoolId};

use crate::cluster::Cluster;
use crate::event::{Event, EventKind, Hold, Placement, Reject};
use crate::job::{Job, JobId, Seconds};
use crate::place::{self, Miss, Needs, Scratch};
use crate::promotion::Promotion;
use crate::quota::{Budgets, Charge, Quotas};
use crate::rank::Ranker;
use crate::telemetry::Recorded;
use backfill::Reservation;

pub use rejection::{hardware_verdict, verdict_in};

/// The most pending jobs one pass considers (Slurm's `bf_max_job_test` defaults to 500).
pub const PASS_DEPTH: usize = 500;

/// The most verdicts (a pending job examined by a pass) one run reaches; then it stops,
/// and [`Simulation::cut`] says when. A saturated queue costs each pass after an end its
/// [`PASS_DEPTH`] deepest jobs, about a microsecond each on the machine of docs/limits.md
/// (measured: 184.7 s for 200,000,000), so without a bound the largest trace a replay reads,
/// saturated, would take many minutes; this one ends any run within about a minute, and a
/// what-if's two sides, replayed at once, too. A trace below saturation ends far within it:
/// the 30 days of 1,000,000 jobs on 10,000 nodes of docs/limits.md take 1,000,000 verdicts,
/// and a queue kept 500 deep behind every end of 100,000 jobs would take 50,000,000.
pub const MAX_VERDICTS: u64 = 50_000_000;

/// Where a job stands.
#[derive(Clone, Debug, PartialEq)]
pub enum JobState {
    /// Submitted later than now.
    Future,
    /// Waiting for jobs it runs after.
    Waiting,
    /// In the queue; the reason of its last hold, if it was held.
    Pending(Option<Hold>),
    /// Running here.
    Running(Placement),
    /// Signalled by a preemption, running until it stops.
    Draining(Placement),
    /// Ran to its end.
    Finished,
    /// Cancelled by a preemption, or because a job it runs after cannot run.
    Cancelled,
    /// Refused at submission.
    Rejected(Reject),
}

struct Record {
    job: Job,
    state: JobState,
    /// Pools it can ever run in, in the order tried.
    pools: Vec<PoolId>,
    /// Those of them in which no single cell can ever hold it: it is placed across their
    /// cells (docs/semantics.md §4, the E157 case).
    spread: Vec<PoolId>,
    /// Run time left (the truth) and the scheduler's estimate of it.
    work_left: Seconds,
    estimate_left: Seconds,
    /// Start of the current run.
    started: Seconds,
    /// Counts starts, so that the end of an earlier run is recognised as stale.
    epoch: u32,
    /// What its run is charged, GPU milli per charge (empty while it does not run).
    charges: Vec<(Charge, u64)>,
    /// Amount charged to the budget at start (the estimate at the nodes' prices).
    charged: i64,
    /// Jobs it still waits for.
    waiting_on: usize,
    /// Whether its victims are draining (it preempts once per wait).
    preempting: Option<Seconds>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    /// Ends sort first at an instant: their capacity is free for the pass.
    End(JobId, u32),
    Stop(JobId),
    Arrive(JobId),
    Retry,
}

/// A simulation of one model. Submit jobs, run it to a time, read events and job states.
pub struct Simulation<'m, R: Ranker> {
    model: &'m Model,
    ranker: R,
    quotas: Quotas,
    cluster: Cluster,
    empty: Cluster,
    budgets: Budgets,
    now: Seconds,
    records: Vec<Record>,
    dependents: Vec<Vec<(JobId, Dependency)>>,
    wakes: BinaryHeap<Reverse<(Seconds, Wake)>>,
    retries: BTreeSet<Seconds>,
    /// Pending jobs by tier priority (highest first), then team, then submission.
    pending: BTreeMap<Reverse<u32>, Vec<BTreeSet<(Seconds, JobId)>>>,
    /// GPU milli held per charge, and per team (for fair share). Looked up for every verdict
    /// of a pass, so hashed as the shape memos are.
    used: HashMap<Charge, u64, FastHasher>,
    team_used: Vec<u64>,
    /// GPU milli the team queues hold per cell.
    cohort_used: Vec<u64>,
    running: BTreeSet<JobId>,
    promotions: Vec<Promotion>,
    /// What the empty cluster says of each shape, in its pool's reach (`None`) or one of its
    /// cells: [`place::never`], memoised.
    nevers: HashMap<(Shape, Option<usize>), Option<Reject>, FastHasher>,
    /// Shapes that found no placement in this pass (with the head's nodes avoided or not):
    /// capacity only shrinks during a pass, so the same shape is not searched again. A pass
    /// that carries the last one on keeps them, as that pass would have.
    full: HashSet<(Shape, Option<usize>, bool), FastHasher>,
    scratch: Scratch,
    out: Vec<Event>,
    /// Recorded NVLink utilisation, whose throttling rule keeps comm-heavy jobs off
    /// throttled domains (telemetry.rs).
    telemetry: Option<&'m Recorded>,
    /// Where the last pass stopped, when it started and signalled nothing: the next pass
    /// carries on from there if nothing its verdicts read has changed since (`queue::pass`).
    carry: Option<Carry>,
    /// Whether capacity, quota, budget or a running job changed since the last pass began:
    /// a start, an end, a stop, a signal, or a wake other than an arrival.
    changed: bool,
    /// Verdicts reached so far, and the most the run may reach ([`MAX_VERDICTS`]).
    verdicts: u64,
    max_verdicts: u64,
    /// The last instant run, once the run stopped at [`MAX_VERDICTS`].
    cut: Option<Seconds>,
}

/// What a pass that started and signalled nothing leaves for the next one. A saturated queue
/// holds hundreds of jobs that every arrival would otherwise examine again with the same
/// verdict; docs/limits.md has the figures.
struct Carry {
    /// The jobs it examined, in queue order.
    order: Vec<JobId>,
    /// The head's reservation as the last of them left it (its spare quota is what they did
    /// not take).
    head: Option<Reservation>,
    /// Whether a job ahead waits for capacity or priority (strict tiers then wait).
    blocked_ahead: bool,
    /// The day it ran on: budgets start over at each day boundary.
    day: Seconds,
}

/// The hasher of the maps looked up for nearly every verdict of a pass: the memos keyed by
/// [`Shape`] and the quota held per charge (SipHash was about a third of a saturated replay's
/// time). A shape holds numbers a trace
/// chooses (GPUs), so the hasher stays keyed at random per run, as std's is, and a trace
/// cannot line its shapes up on one bucket; aHash is that at a fraction of SipHash's cost.
type FastHasher = ahash::RandomState;

/// What decides where a job can be placed now.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Shape {
    class: Option<placid_lang::model::ClassId>,
    pool: PoolId,
    capacity: Option<placid_lang::model::CapacityKind>,
    gpus: u32,
    gpu_milli: u32,
    cpu: u64,
    memory: u64,
    score: Option<placid_lang::model::ScoreId>,
}

impl Shape {
    /// The shape of `job` in `pool`; none for a pinned job, whose nodes are its own.
    fn of(job: &Job, pool: PoolId) -> Option<Shape> {
        job.pin.is_none().then_some(Shape {
            class: job.class,
            pool,
            capacity: job.capacity,
            gpus: job.gpus,
            gpu_milli: job.gpu_milli,
            cpu: job.cpu_milli_per_gpu,
            memory: job.memory_mib_per_gpu,
            score: job.score,
        })
    }
}

/// Runs `jobs` on `model` to the end and returns every event.
pub fn simulate<R: Ranker>(model: &Model, ranker: R, jobs: Vec<Job>) -> Vec<Event> {
    let mut simulation = Simulation::new(model, ranker);
    for job in jobs {
        simulation.submit(job);
    }
    let mut events = Vec::new();
    simulation.run(&mut |event| events.push(event.clone()));
    events
}

impl<'m, R: Ranker> Simulation<'m, R> {
    /// An empty cluster at time 0.
    pub fn new(model: &'m Model, ranker: R) -> Simulation<'m, R> {
        let cluster = Cluster::new(model);
        let quotas = Quotas::new(model);
        let cells = quotas.cells.cells.len();
        Simulation {
            model,
            ranker,
            empty: cluster.clone(),
            cluster,
            budgets: Budgets::new(model),
            now: 0,
            records: Vec::new(),
            dependents: Vec::new(),
            wakes: BinaryHeap::new(),
            retries: BTreeSet::new(),
            pending: BTreeMap::new(),
            used: HashMap::default(),
            quotas,
            team_used: vec![0; model.teams.len()],
            cohort_used: vec![0; cells],
            running: BTreeSet::new(),
            promotions: Vec::new(),
            nevers: HashMap::default(),
            full: HashSet::default(),
            scratch: Scratch::default(),
            out: Vec::new(),
            telemetry: None,
            carry: None,
            changed: true,
            verdicts: 0,
            max_verdicts: MAX_VERDICTS,
            cut: None,
        }
    }

    /// Replays `recorded` with the run: the ranker sees its figures at each pass, and its
    /// throttling rule keeps new comm-heavy jobs off throttled domains. A pass runs at each
    /// moment a figure or a throttle may change, so a held job is tried when a throttle lifts.
    pub fn with_telemetry(&mut self, recorded: &'m Recorded) {
        self.telemetry = Some(recorded);
        for time in recorded.changes() {
            self.retry_at(time);
        }
    }

    /// When the run stopped at its bound of [`MAX_VERDICTS`], with work left: the last
    /// instant it ran. Jobs not ended by then stay as they were (pending, running, or never
    /// submitted), and a report counts them as unfinished.
    pub fn cut(&self) -> Option<Seconds> {
        self.cut
    }

    /// Lowers the run's bound from [`MAX_VERDICTS`] to `most`: a test of the bound, without
    /// a replay of minutes.
    #[cfg(test)]
    fn limit_verdicts(&mut self, most: u64) {
        self.max_verdicts = most.min(MAX_VERDICTS);
    }

    /// The current time.
    pub fn now(&self) -> Seconds {
        self.now
    }

    /// The free capacity now.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The quota limits the run uses.
    pub fn quotas(&self) -> &Quotas {
        &self.quotas
    }

    /// The job with this id.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.records.get(id.index()).map(|record| &record.job)
    }

    /// Where job `id` stands; `None` for an id never handed out.
    pub fn state(&self, id: JobId) -> Option<&JobState> {
        self.records.get(id.index()).map(|record| &record.state)
    }

    /// The GPU milli `charge` holds now.
    pub fn used(&self, charge: Charge) -> u64 {
        self.used.get(&charge).copied().unwrap_or(0)
    }

    /// The id the next submitted job gets.
    pub fn next_id(&self) -> JobId {
        JobId(self.records.len() as u32)
    }

    /// Makes room for `more` jobs to be submitted, so that a large replay's records grow
    /// once, not by doubling (which holds both the old and the new copy for a moment).
    pub fn make_room(&mut self, more: usize) {
        self.records.reserve_exact(more);
        self.dependents.reserve_exact(more);
        self.wakes.reserve(more);
    }

    /// Submits `job`, routed by its tag (`routing`); it arrives at its `submit` time (now, if
    /// that is past). Its `after` and `after_ended` must name jobs submitted before it; others
    /// are ignored.
    pub fn submit(&mut self, mut job: Job) -> JobId {
        crate::routing::apply(self.model, &mut job);
        let id = self.next_id();
        let known = self.records.len();
        let waits = job
            .after
            .iter()
            .map(|before| (*before, Dependency::Succeeded))
            .chain(job.after_ended.iter().map(|before| (*before, Dependency::Ended)))
            .filter(|(before, _)| before.index() < known);
        let mut waiting_on = 0;
        for (before, dependency) in waits {
            self.dependents[before.index()].push((id, dependency));
            waiting_on += 1;
        }
        let arrive = job.submit.max(self.now);
        self.records.push(Record {
            work_left: job.duration(self.model.tier(job.tier)),
            estimate_left: job.estimate(),
            job,
            state: JobState::Future,
            pools: Vec::new(),
            spread: Vec::new(),
            started: 0,
            epoch: 0,
            charges: Vec::new(),
            charged: 0,
            waiting_on,
            preempting: None,
        });
        self.dependents.push(Vec::new());
        self.wakes.push(Reverse((arrive, Wake::Arrive(id))));
        id
    }

    /// Registers a Pattern C promotion: when every job of `promotion.trials` has ended, its
    /// best `top` by metric are reported [`EventKind::Promoted`].
    pub fn promote(&mut self, promotion: Promotion) {
        self.promotions.push(promotion);
    }

    /// Starts `job` now, outside the queue, where it fits: the starting state of a policy
    /// test (`running`). Its quota and budget are charged, but not checked.
    pub fn start_now(&mut self, mut job: Job) -> Result<JobId, Miss> {
        job.submit = self.now;
        let pools: Vec<PoolId> = match job.pool {
            Some(pool) => vec![pool],
            None => (0..self.model.pools.len()).map(PoolId::from_index).collect(),
        };
        let mut miss = Miss::Never(Reject::NoFeasibleNode);
        for pool in pools {
            let reach = &self.quotas.reach[pool.index()];
            match place::place(self.model, reach, &self.cluster, &job, pool, &mut self.ranker, &mut self.scratch, &|_| false) {
                Ok(placement) => {
                    let id = self.next_id();
                    self.records.push(Record {
                        work_left: job.duration(self.model.tier(job.tier)),
                        estimate_left: job.estimate(),
                        job,
                        state: JobState::Future,
                        pools: vec![pool],
                        spread: Vec::new(),
                        started: 0,
                        epoch: 0,
                        charges: Vec::new(),
                        charged: 0,
                        waiting_on: 0,
                        preempting: None,
                    });
                    self.dependents.push(Vec::new());
                    self.emit(id, EventKind::Submitted);
                    self.start(id, placement);
                    return Ok(id);
                }
                Err(Miss::Full) => miss = Miss::Full,
                Err(Miss::Never(_)) => {}
            }
        }
        Err(miss)
    }

    /// Runs every instant up to and including `until`, passing each event to `sink`; stops
    /// for good, earlier, once the run has reached [`MAX_VERDICTS`] ([`Simulation::cut`]).
    pub fn run_until(&mut self, until: Seconds, sink: &mut dyn FnMut(&Event)) {
        while let Some(Reverse((time, _))) = self.wakes.peek().copied() {
            if time > until {
                break;
            }
            if self.verdicts >= self.max_verdicts {
                self.cut = Some(self.now);
                return;
            }
            self.step(time);
            for event in self.out.drain(..) {
                sink(&event);
            }
        }
        self.now = self.now.max(until);
    }

    /// Runs until nothing is left to happen.
    pub fn run(&mut self, sink: &mut dyn FnMut(&Event)) {
        self.run_until(Seconds::MAX, sink);
    }

    /// Handles every wake at `time`, then runs one scheduling pass.
    fn step(&mut self, time: Seconds) {
        self.now = time;
        self.ranker.at(time);
        while let Some(Reverse((at, wake))) = self.wakes.peek().copied() {
            if at != time {
                break;
            }
            self.wakes.pop();
            // An arrival changes only the queue, which the pass compares with the last one's.
            self.changed |= !matches!(wake, Wake::Arrive(_));
            match wake {
                Wake::Arrive(id) => self.arrive(id),
                Wake::End(id, epoch) => self.end(id, epoch),
                Wake::Stop(id) => self.stop(id),
                Wake::Retry => {
                    self.retries.remove(&time);
                }
            }
        }
        self.pass();
    }

    fn emit(&mut self, job: JobId, kind: EventKind) {
        self.out.push(Event { time: self.now, job, kind });
    }

    fn retry_at(&mut self, time: Seconds) {
        if time > self.now && self.retries.insert(time) {
            self.wakes.push(Reverse((time, Wake::Retry)));
        }
    }

    /// Free whole GPUs (or milli, for a sharing job) on the nodes of `reach`: a bound below
    /// which no placement is worth searching.
    fn free_in(&self, reach: &[NodeId], job: &Job) -> u64 {
        reach.iter().map(|node| self.cluster.free(*node).whole as u64).sum::<u64>() + u64::from(job.is_sharing())
    }

    /// Takes back on `cluster` what the running or draining `jobs` hold, after a search
    /// released them on it.
    fn retake(&self, cluster: &mut Cluster, jobs: &[JobId]) {
        for job in jobs {
            let record = &self.records[job.index()];
            if let JobState::Running(placement) | JobState::Draining(placement) = &record.state {
                let mig = Needs::of(self.model, &record.job).mig;
                for share in &placement.nodes {
                    cluster.take(share, mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
