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

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};

use placid_lang::model::{Model, NodeId, PoolId, Preemption};

use crate::cluster::Cluster;
use crate::event::{Event, EventKind, Hold, Placement, Reject};
use crate::job::{Job, JobId, Seconds};
use crate::place::{self, Miss, Needs, Scratch};
use crate::promotion::Promotion;
use crate::quota::{Budgets, Charge, DAY, Quotas, cost};
use crate::rank::Ranker;
use crate::telemetry::Recorded;

/// The most pending jobs one pass considers (Slurm's `bf_max_job_test` defaults to 500).
pub const PASS_DEPTH: usize = 500;

/// The most distinct job shapes whose static verdict is remembered before the memo starts over.
const VERDICT_MEMO: usize = 4096;

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
    /// Run time left (the truth) and the scheduler's estimate of it.
    work_left: Seconds,
    estimate_left: Seconds,
    /// Start of the current run.
    started: Seconds,
    /// Counts starts, so that the end of an earlier run is recognised as stale.
    epoch: u32,
    charge: Option<Charge>,
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

/// Why a job waits in one pool, and whether it waits for what running jobs give back as they
/// end (capacity for its gang, or quota): such a job may be the head and get a reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Wait {
    hold: Hold,
    reservable: bool,
}

impl Wait {
    fn plain(hold: Hold) -> Wait {
        Wait { hold, reservable: matches!(hold, Hold::Capacity | Hold::Quota) }
    }
}

/// The head's reservation: when and where its gang will fit, and how much of its queue's and
/// its pool's cohort quota is left over then, which is all a job that ends later may take.
struct Reservation {
    time: Seconds,
    nodes: BTreeSet<NodeId>,
    pool: PoolId,
    charge: Charge,
    spare: u64,
    spare_cohort: u64,
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
    dependents: Vec<Vec<JobId>>,
    wakes: BinaryHeap<Reverse<(Seconds, Wake)>>,
    retries: BTreeSet<Seconds>,
    /// Pending jobs by tier priority (highest first), then team, then submission.
    pending: BTreeMap<Reverse<u32>, Vec<BTreeSet<(Seconds, JobId)>>>,
    /// GPU milli held per charge, and per team (for fair share).
    used: HashMap<Charge, u64>,
    team_used: Vec<u64>,
    /// GPU milli the team queues hold per pool.
    cohort_used: Vec<u64>,
    running: BTreeSet<JobId>,
    promotions: Vec<Promotion>,
    /// What the empty cluster says of each shape: [`place::never`], memoised.
    nevers: HashMap<Shape, Option<Reject>>,
    /// Shapes that found no placement in this pass (with the head's nodes avoided or not):
    /// capacity only shrinks during a pass, so the same shape is not searched again.
    full: HashSet<(Shape, bool)>,
    scratch: Scratch,
    out: Vec<Event>,
    /// Recorded NVLink utilisation, whose throttling rule keeps comm-heavy jobs off
    /// throttled domains (telemetry.rs).
    telemetry: Option<&'m Recorded>,
}

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
        Simulation {
            model,
            ranker,
            quotas: Quotas::new(model),
            empty: cluster.clone(),
            cluster,
            budgets: Budgets::new(model),
            now: 0,
            records: Vec::new(),
            dependents: Vec::new(),
            wakes: BinaryHeap::new(),
            retries: BTreeSet::new(),
            pending: BTreeMap::new(),
            used: HashMap::new(),
            team_used: vec![0; model.teams.len()],
            cohort_used: vec![0; model.pools.len()],
            running: BTreeSet::new(),
            promotions: Vec::new(),
            nevers: HashMap::new(),
            full: HashSet::new(),
            scratch: Scratch::default(),
            out: Vec::new(),
            telemetry: None,
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

    /// Submits `job`, routed by its tag (`routing`); it arrives at its `submit` time (now, if
    /// that is past). Its `after` must name jobs submitted before it; others are ignored.
    pub fn submit(&mut self, mut job: Job) -> JobId {
        crate::routing::apply(self.model, &mut job);
        let id = self.next_id();
        let waiting_on = job.after.iter().filter(|before| before.index() < self.records.len()).count();
        for before in job.after.iter().filter(|before| before.index() < self.records.len()) {
            self.dependents[before.index()].push(id);
        }
        let arrive = job.submit.max(self.now);
        self.records.push(Record {
            work_left: job.duration(),
            estimate_left: job.estimate(),
            job,
            state: JobState::Future,
            pools: Vec::new(),
            started: 0,
            epoch: 0,
            charge: None,
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
                        work_left: job.duration(),
                        estimate_left: job.estimate(),
                        job,
                        state: JobState::Future,
                        pools: vec![pool],
                        started: 0,
                        epoch: 0,
                        charge: None,
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

    /// Runs every instant up to and including `until`, passing each event to `sink`.
    pub fn run_until(&mut self, until: Seconds, sink: &mut dyn FnMut(&Event)) {
        while let Some(Reverse((time, _))) = self.wakes.peek().copied() {
            if time > until {
                break;
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

    fn arrive(&mut self, id: JobId) {
        self.emit(id, EventKind::Submitted);
        match self.verdict(id) {
            Err(reason) => {
                self.records[id.index()].state = JobState::Rejected(reason);
                self.emit(id, EventKind::Rejected(reason));
                self.cancel_dependents(id);
            }
            Ok(pools) => {
                let record = &mut self.records[id.index()];
                record.pools = pools;
                if record.waiting_on == 0 {
                    self.enqueue(id);
                } else {
                    record.state = JobState::Waiting;
                }
            }
        }
    }

    /// The pools `id` can ever run in, or the furthest reason it cannot run in any: the team
    /// may use the tier; then, per pool, the hardware (filters, then the locality unit), the
    /// quota, the budget.
    fn verdict(&mut self, id: JobId) -> Result<Vec<PoolId>, Reject> {
        let job = &self.records[id.index()].job;
        let model = self.model;
        if !model.team(job.team).tiers.iter().any(|tier| tier.value == job.tier) {
            return Err(Reject::TierNotAllowed);
        }
        let pools: Vec<PoolId> = match job.pool {
            Some(pool) => vec![pool],
            None => (0..model.pools.len()).map(PoolId::from_index).collect(),
        };
        let pools: Vec<PoolId> = pools.into_iter().filter(|pool| !self.quotas.outside_reservations(job.tier, *pool)).collect();
        if pools.is_empty() {
            return Err(Reject::TierNotAllowed);
        }
        let mut viable = Vec::new();
        let mut furthest = Reject::NoFeasibleNode;
        for pool in pools {
            match self.pool_verdict(id, pool) {
                Ok(()) => viable.push(pool),
                Err(reason) => furthest = furthest.max(reason),
            }
        }
        if viable.is_empty() { Err(furthest) } else { Ok(viable) }
    }

    /// [`verdict_in`], with the hardware question (a search of the empty cluster) asked once
    /// per shape: jobs differ mostly in what the quota and budget questions read.
    fn pool_verdict(&mut self, id: JobId, pool: PoolId) -> Result<(), Reject> {
        let (model, job) = (self.model, &self.records[id.index()].job);
        let (empty, reach, scratch, nevers) = (&self.empty, &self.quotas.reach[pool.index()], &mut self.scratch, &mut self.nevers);
        verdict_with(model, &self.quotas, job, pool, || match Shape::of(job, pool) {
            None => place::never(model, reach, empty, job, pool, scratch),
            Some(shape) => {
                if nevers.len() >= VERDICT_MEMO {
                    nevers.clear();
                }
                *nevers.entry(shape).or_insert_with(|| place::never(model, reach, empty, job, pool, scratch))
            }
        })
    }

    fn enqueue(&mut self, id: JobId) {
        let record = &mut self.records[id.index()];
        record.state = JobState::Pending(None);
        let priority = self.model.tier(record.job.tier).priority.value;
        let teams = self.model.teams.len();
        let level = self.pending.entry(Reverse(priority)).or_insert_with(|| vec![BTreeSet::new(); teams]);
        level[record.job.team.index()].insert((record.job.submit, id));
    }

    fn dequeue(&mut self, id: JobId) {
        let record = &self.records[id.index()];
        let priority = self.model.tier(record.job.tier).priority.value;
        if let Some(level) = self.pending.get_mut(&Reverse(priority)) {
            level[record.job.team.index()].remove(&(record.job.submit, id));
            if level.iter().all(BTreeSet::is_empty) {
                self.pending.remove(&Reverse(priority));
            }
        }
    }

    /// The pending jobs of this pass in queue order: by tier priority, highest first; within
    /// a priority, the team whose GPUs held (counting the jobs already ordered in this pass)
    /// per unit of share is lowest goes next, ties to the team declared first; within a team,
    /// by submission. At most [`PASS_DEPTH`].
    fn order(&self) -> Vec<JobId> {
        let mut order = Vec::new();
        let mut used = self.team_used.clone();
        for level in self.pending.values() {
            let mut cursors: Vec<_> = level.iter().map(|jobs| jobs.iter().peekable()).collect();
            while order.len() < PASS_DEPTH {
                let mut best: Option<usize> = None;
                for (team, cursor) in cursors.iter_mut().enumerate() {
                    if cursor.peek().is_none() {
                        continue;
                    }
                    best = match best {
                        Some(other) if !self.fairer(team, other, &used) => Some(other),
                        _ => Some(team),
                    };
                }
                let Some(team) = best else { break };
                let Some((_, id)) = cursors[team].next() else { break };
                let job = &self.records[id.index()].job;
                used[team] += job.quota_milli(false);
                order.push(*id);
            }
        }
        order
    }

    /// Whether `team` goes before `other`: a lower usage per share (cross-multiplied, exact),
    /// ties to the lower index. A team with share 0 goes last.
    fn fairer(&self, team: usize, other: usize, used: &[u64]) -> bool {
        let share = |index: usize| u128::from(self.model.teams[index].share.value);
        let (left, right) = (u128::from(used[team]) * share(other), u128::from(used[other]) * share(team));
        match (share(team), share(other)) {
            (0, 0) => team < other,
            (0, _) => false,
            (_, 0) => true,
            _ => left < right || (left == right && team < other),
        }
    }

    /// One scheduling pass.
    fn pass(&mut self) {
        self.full.clear();
        let order = self.order();
        let mut head: Option<Reservation> = None;
        let mut blocked_ahead = false;
        for id in order {
            let mut furthest: Option<Wait> = None;
            let pools = self.records[id.index()].pools.clone();
            let mut started = false;
            for pool in pools {
                match self.try_start(id, pool, head.as_mut(), blocked_ahead) {
                    Ok(()) => {
                        started = true;
                        break;
                    }
                    Err(wait) => furthest = furthest.max(Some(wait)),
                }
            }
            if started {
                continue;
            }
            let Wait { hold, reservable } = furthest.unwrap_or(Wait { hold: Hold::Capacity, reservable: true });
            if reservable || hold == Hold::Priority {
                if head.is_none() && reservable {
                    head = self.reserve(id);
                }
                blocked_ahead = true;
            }
            if hold == Hold::Budget {
                self.retry_at((self.now / DAY + 1) * DAY);
            }
            let record = &mut self.records[id.index()];
            if record.state != JobState::Pending(Some(hold)) {
                record.state = JobState::Pending(Some(hold));
                self.emit(id, EventKind::Held(hold));
            }
        }
    }

    /// Starts `id` through `pool` if admission and placement allow it now; otherwise says
    /// why it waits. Admission in the order of docs/semantics.md: budget, then quota, then
    /// placement (with preemption, and the head's reservation).
    fn try_start(&mut self, id: JobId, pool: PoolId, head: Option<&mut Reservation>, blocked_ahead: bool) -> Result<(), Wait> {
        let model = self.model;
        // A preemption that has run its course (its victims stopped) may be tried again.
        if self.records[id.index()].preempting.is_some_and(|stops| stops <= self.now) {
            self.records[id.index()].preempting = None;
        }
        let job = &self.records[id.index()].job;
        let estimate = self.quotas.estimate(job, pool);
        if !self.budgets.has_room(model, job, estimate, self.now) {
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

    fn start(&mut self, id: JobId, placement: Placement) {
        let model = self.model;
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
    fn release(&mut self, id: JobId) -> Option<Placement> {
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

    fn end(&mut self, id: JobId, epoch: u32) {
        let record = &self.records[id.index()];
        if record.epoch != epoch || !matches!(record.state, JobState::Running(_) | JobState::Draining(_)) {
            return;
        }
        self.release(id);
        self.records[id.index()].state = JobState::Finished;
        self.emit(id, EventKind::Finished);
        for dependent in self.dependents[id.index()].clone() {
            let record = &mut self.records[dependent.index()];
            record.waiting_on = record.waiting_on.saturating_sub(1);
            if record.waiting_on == 0 && record.state == JobState::Waiting {
                self.enqueue(dependent);
            }
        }
        self.check_promotions();
    }

    fn cancel_dependents(&mut self, id: JobId) {
        let mut stack = self.dependents[id.index()].clone();
        while let Some(dependent) = stack.pop() {
            let record = &mut self.records[dependent.index()];
            if matches!(record.state, JobState::Waiting | JobState::Future) {
                record.state = JobState::Cancelled;
                self.emit(dependent, EventKind::Cancelled);
                stack.extend(self.dependents[dependent.index()].iter().copied());
            }
        }
        self.check_promotions();
    }

    /// Reports the promotions whose trials have all ended.
    fn check_promotions(&mut self) {
        let done = |state: &JobState| matches!(state, JobState::Finished | JobState::Cancelled | JobState::Rejected(_));
        let mut index = 0;
        while index < self.promotions.len() {
            let promotion = &self.promotions[index];
            if promotion.trials.iter().all(|trial| self.records.get(trial.index()).is_some_and(|record| done(&record.state))) {
                let promotion = self.promotions.swap_remove(index);
                let finished: Vec<(JobId, Option<f64>)> = promotion
                    .trials
                    .iter()
                    .filter(|trial| self.records[trial.index()].state == JobState::Finished)
                    .map(|trial| (*trial, self.records[trial.index()].job.metric))
                    .collect();
                for id in promotion.best(&finished) {
                    self.emit(id, EventKind::Promoted);
                }
            } else {
                index += 1;
            }
        }
    }

    /// Signals the victims that free a placement for `id` in `pool`, if its tier may preempt
    /// enough of them. Victims are taken in the documented order (lowest priority first, then
    /// the latest started, then the latest submitted) until the gang fits; those whose nodes
    /// the placement does not use are spared.
    fn preempt(&mut self, id: JobId, pool: PoolId) {
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
    fn reclaim(&mut self, id: JobId, pool: PoolId, charge: Charge, own: u64, cohort: u64) {
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
    fn stop(&mut self, id: JobId) {
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

    /// The head's reservation: the earliest end of running jobs after which its gang fits,
    /// and the nodes it would take then. Running jobs are expected to end at their start plus
    /// their estimate; draining ones at their stop.
    fn reserve(&mut self, id: JobId) -> Option<Reservation> {
        let model = self.model;
        let job = self.records[id.index()].job.clone();
        let pool = *self.records[id.index()].pools.first()?;
        let reach = &self.quotas.reach[pool.index()];
        let milli = job.quota_milli(Needs::of(model, &job).mig.is_some());
        let charge = self.quotas.charge(&job, pool);
        let team_charged = matches!(charge, Charge::Team(..));
        let limit = self.quotas.limit(charge);
        let mut own_used = self.used(charge);
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
        let mig_job = Needs::of(model, &job).mig.is_some();
        let mut free = self.free_in(reach, &job);
        let mut trial = std::mem::take(&mut self.cluster);
        let mut given = Vec::new();
        let mut found = None;
        let mut cohort_used = self.cohort_used[pool.index()];
        let cohort = self.quotas.cohort(pool);
        for (time, other) in ends {
            let record = &self.records[other.index()];
            let (JobState::Running(placement) | JobState::Draining(placement)) = &record.state else { continue };
            let needs = Needs::of(model, &record.job);
            for share in &placement.nodes {
                trial.give(share, needs.mig, record.job.cpu_milli_per_gpu, record.job.memory_mib_per_gpu);
            }
            given.push(other);
            free += u64::from(record.job.gpus);
            let released = record.job.quota_milli(needs.mig.is_some());
            if matches!(record.charge, Some(Charge::Team(_, charged)) if charged == pool) {
                cohort_used -= released;
            }
            if record.charge == Some(charge) {
                own_used -= released;
            }
            if own_used + milli > limit || (team_charged && cohort_used + milli > cohort) || (!mig_job && free < u64::from(job.gpus)) {
                continue;
            }
            if let Ok(placement) = place::place(model, reach, &trial, &job, pool, &mut self.ranker, &mut self.scratch, &|_| false) {
                let spare_cohort = if team_charged { cohort - cohort_used - milli } else { u64::MAX };
                found = Some(Reservation {
                    time,
                    nodes: placement.node_ids().collect(),
                    pool,
                    charge,
                    spare: limit - own_used - milli,
                    spare_cohort,
                });
                break;
            }
        }
        self.retake(&mut trial, &given);
        self.cluster = trial;
        found
    }
}

/// Whether `job` can ever run in `pool`: the hardware (its filters, then its locality unit),
/// then its quota, then its budget. The checker asks this of plan stages and tests.
pub fn verdict_in(model: &Model, quotas: &Quotas, empty: &Cluster, job: &Job, pool: PoolId) -> Result<(), Reject> {
    let reach = &quotas.reach[pool.index()];
    verdict_with(model, quotas, job, pool, || place::never(model, reach, empty, job, pool, &mut Scratch::default()))
}

/// [`verdict_in`], asking `never` whether the hardware can ever hold the job.
fn verdict_with(model: &Model, quotas: &Quotas, job: &Job, pool: PoolId, never: impl FnOnce() -> Option<Reject>) -> Result<(), Reject> {
    if quotas.outside_reservations(job.tier, pool) {
        return Err(Reject::TierNotAllowed);
    }
    if let Some(reason) = never() {
        return Err(reason);
    }
    let mig = Needs::of(model, job).mig.is_some();
    if job.quota_milli(mig) > quotas.limit(quotas.charge(job, pool)) {
        return Err(Reject::ExceedsQuota);
    }
    if !Budgets::ever_fits(model, job, quotas.estimate(job, pool)) {
        return Err(Reject::ExceedsBudget);
    }
    Ok(())
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
