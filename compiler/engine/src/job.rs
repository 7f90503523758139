//! What a job asks for: the input of the engine, from a trace, a plan or a policy test.

use placid_lang::model::{CapacityKind, ClassId, NodeId, PlanId, PoolId, ScoreId, TeamId, Tier, TierId};
use placid_lang::units::Duration;

/// Simulated time, in seconds since the start of the run (day 0 starts at 0).
pub type Seconds = u64;

/// A GPU in milli: a whole GPU is 1,000.
pub const WHOLE_GPU_MILLI: u32 = 1000;

/// The id of a submitted job: its submission index within one [`crate::Simulation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u32);

impl JobId {
    /// The index of the job in submission order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The plan stage a job is a trial of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StageRef {
    /// The plan.
    pub plan: PlanId,
    /// The stage's index within the plan.
    pub stage: usize,
    /// The trial number, from 0.
    pub trial: u32,
}

/// One job: who submits it, what it needs and how long it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The submitting team.
    pub team: TeamId,
    /// The tier it runs at.
    pub tier: TierId,
    /// The job class (NVLink need, locality, MIG, platforms); none means no constraint and
    /// locality `any`.
    pub class: Option<ClassId>,
    /// The pool it asks for; none means the first pool, in declaration order, that takes it.
    pub pool: Option<PoolId>,
    /// Restricts the job to one kind of capacity (a stage's `capacity`).
    pub capacity: Option<CapacityKind>,
    /// GPUs (whole GPUs, or MIG instances of the class's profile).
    pub gpus: u32,
    /// Milli of each GPU: [`WHOLE_GPU_MILLI`] for whole GPUs, less for a sharing job of one GPU.
    pub gpu_milli: u32,
    /// CPU per GPU, in milli-CPUs.
    pub cpu_milli_per_gpu: u64,
    /// Host memory per GPU, in MiB.
    pub memory_mib_per_gpu: u64,
    /// When it is submitted.
    pub submit: Seconds,
    /// How long it runs once started (the trace's truth, unknown to the scheduler).
    pub run: Seconds,
    /// The time limit the scheduler knows (`--time`); the run is cut at it.
    pub limit: Option<Seconds>,
    /// Jobs that must finish first, within their time limit (a plan's `after` on a
    /// single-trial stage, Slurm's `afterok`): when one cannot, this job is cancelled.
    pub after: Vec<JobId>,
    /// Jobs that must have ended first, however (a plan's `after` on a stage of several
    /// trials or a promoting one, Slurm's `afterany`).
    pub after_ended: Vec<JobId>,
    /// The metric value the job reports (for Pattern C promotion).
    pub metric: Option<f64>,
    /// The score ranking its nodes (a stage's `score`).
    pub score: Option<ScoreId>,
    /// Only these nodes may host it (a test's `running` job on named nodes).
    pub pin: Option<Vec<NodeId>>,
    /// The stage it is a trial of.
    pub stage: Option<StageRef>,
    /// A free-form tag from the trace, carried into reports.
    pub tag: Option<String>,
}

impl Job {
    /// A job of `gpus` whole GPUs running for an hour, with no class, pool or limit.
    pub fn new(team: TeamId, tier: TierId, gpus: u32) -> Job {
        Job {
            team,
            tier,
            class: None,
            pool: None,
            capacity: None,
            gpus,
            gpu_milli: WHOLE_GPU_MILLI,
            cpu_milli_per_gpu: 0,
            memory_mib_per_gpu: 0,
            submit: 0,
            run: 3600,
            limit: None,
            after: Vec::new(),
            after_ended: Vec::new(),
            metric: None,
            score: None,
            pin: None,
            stage: None,
            tag: None,
        }
    }

    /// How long the job runs at `tier` (its own): its run, cut at its time limit, the one it
    /// names or else the tier's maximum ([`Tier::time_limit`]).
    pub fn duration(&self, tier: &Tier) -> Seconds {
        self.run.min(tier.time_limit(self.limit.map(|seconds| Duration { seconds })).seconds)
    }

    /// Whether the job is cut at its time limit at `tier` (Slurm's `TIMEOUT`).
    pub fn times_out(&self, tier: &Tier) -> bool {
        self.duration(tier) < self.run
    }

    /// How long the scheduler expects it to run: its limit, or its run when it has none
    /// (a trace without limits makes the engine's backfill clairvoyant, as Slurm's
    /// simulators are when given exact run times).
    pub fn estimate(&self) -> Seconds {
        self.limit.unwrap_or(self.run)
    }

    /// Whether the job shares one GPU with others (less than a whole GPU).
    pub fn is_sharing(&self) -> bool {
        self.gpu_milli < WHOLE_GPU_MILLI
    }

    /// The GPU milli the job is charged to its quota: whole and shared GPUs count, MIG
    /// instances do not (the Kueue queues cover `nvidia.com/gpu`, not MIG resources).
    pub fn quota_milli(&self, mig: bool) -> u64 {
        if mig { 0 } else { u64::from(self.gpus) * u64::from(self.gpu_milli.min(WHOLE_GPU_MILLI)) }
    }
}
