//! Priority tiers (`tier`): priority, preemption, checkpoints, backfill, reservations,
//! budget and run-time limit, with the rules every target and the engine share about them
//! (who preempts whom, work lost, the default run time).

use crate::model::{CostCenterId, PoolId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::{Duration, Money};

/// What happens to a preemptible job when a higher tier needs its GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PreemptMode {
    /// The job is signalled, then stopped and put back in the queue.
    Requeue,
    /// The job is signalled, then cancelled.
    Cancel,
}

impl PreemptMode {
    /// The keyword in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptMode::Requeue => "requeue",
            PreemptMode::Cancel => "cancel",
        }
    }
}

/// Whether a tier's jobs can be preempted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preemption {
    /// Never: the tier is protected in every target.
    Never,
    /// After a grace window, by the given mode.
    Window {
        /// Time between the preemption signal and the stop.
        window: Duration,
        /// Requeue or cancel.
        mode: PreemptMode,
    },
}

/// Checkpoint cadence of a tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checkpoint {
    /// Interval between checkpoints.
    pub every: Duration,
    /// Whether checkpoints are incremental.
    pub incremental: bool,
}

/// GPUs reserved for a tier in a pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Where the reservation is declared.
    pub span: Span,
    /// The pool.
    pub pool: PoolId,
    /// How many GPUs.
    pub gpus: u32,
}

/// A priority tier.
#[derive(Clone, Debug, PartialEq)]
pub struct Tier {
    /// The tier's name (`P0`).
    pub name: Name,
    /// Where the tier is declared.
    pub span: Span,
    /// Priority; higher runs first and preempts lower preemptible tiers.
    pub priority: Spanned<u32>,
    /// Whether and how the tier's jobs are preempted.
    pub preemption: Spanned<Preemption>,
    /// Minimum run time before a job of this tier may be preempted.
    pub exempt: Option<Duration>,
    /// Checkpoint cadence.
    pub checkpoint: Option<Checkpoint>,
    /// Whether the tier's jobs may backfill idle capacity.
    pub backfill: bool,
    /// Where `backfill` is written, when it is (the default is no backfill).
    pub backfill_span: Option<Span>,
    /// Reserved GPUs.
    pub reservations: Vec<Reservation>,
    /// The cost center paying for the reservations.
    pub cost_center: Option<Spanned<CostCenterId>>,
    /// Daily budget of all the tier's jobs together, whichever team runs them (`budget
    /// daily=`): reset at midnight like team budgets.
    pub daily_budget: Option<Spanned<Money>>,
    /// The longest a job of this tier may run (`max-time`); [`Tier::max_run_time`] gives
    /// the default when it is not declared.
    pub max_time: Option<Spanned<Duration>>,
    /// Whether the declaration had errors of its own (reported by lowering): the tier is kept,
    /// so that what names it is still checked, with a neutral value in place of each faulty
    /// setting (priority 0, a zero preemption window, no backfill; a faulty reservation, cost
    /// center, budget or `max-time` left out). Checks that read those settings skip it; a
    /// model with a recovered tier is never checked clean, since lowering reported an error.
    pub recovered: bool,
}

impl Tier {
    /// Whether the tier reserves GPUs in `pool`: its jobs there are charged to the
    /// reservation, and a reserving tier runs only in such pools.
    pub fn reserves_in(&self, pool: PoolId) -> bool {
        self.reservations.iter().any(|reservation| reservation.pool == pool)
    }

    /// The run-time limit of a tier that declares no `max-time`: three days, the longest
    /// run a scheduler's backfill plans ahead for in placid's output.
    pub const DEFAULT_MAX_TIME: Duration = Duration { seconds: 3 * 86_400 };

    /// The longest a job of this tier may run: its `max-time`, or [`Tier::DEFAULT_MAX_TIME`].
    pub fn max_run_time(&self) -> Duration {
        self.max_time.as_ref().map_or(Tier::DEFAULT_MAX_TIME, |max| max.value)
    }

    /// The time limit a job of this tier runs under: the one it names, else the tier's
    /// maximum. job_submit.lua gives a Slurm job that names none the tier's maximum; the engine
    /// cuts the job there.
    pub fn time_limit(&self, named: Option<Duration>) -> Duration {
        named.unwrap_or_else(|| self.max_run_time())
    }

    /// Whether the tier runs on reserved capacity alone: it reserves GPUs, or is never
    /// preempted (which only reserved capacity can promise). Kubernetes gives such a tier a
    /// ClusterQueue of its own; every other tier shares its team's.
    pub fn runs_on_reservations(&self) -> bool {
        !self.reservations.is_empty() || self.preemption.value == Preemption::Never
    }

    /// The tier's checkpoint interval in seconds, when its jobs checkpoint: an interval of 0
    /// never comes round, so it is no checkpoint.
    pub fn checkpoint_seconds(&self) -> Option<u64> {
        self.checkpoint.map(|checkpoint| checkpoint.every.seconds).filter(|every| *every > 0)
    }

    /// The work a job of this tier loses when it stops after running `ran` seconds: the
    /// time since its last checkpoint, or all of it without checkpoints (docs/semantics.md,
    /// "Work lost").
    pub fn work_lost(&self, ran: u64) -> u64 {
        self.checkpoint_seconds().map_or(ran, |every| ran % every)
    }

    /// Whether the tier may be preempted at all.
    pub fn is_preemptible(&self) -> bool {
        matches!(self.preemption.value, Preemption::Window { .. })
    }

    /// Whether this tier's jobs may preempt `victim`'s: the victim is preemptible and has a
    /// lower priority. The one rule Slurm's `Preempt=` lists, Kubernetes' preemption policy
    /// and the diff's "who preempts whom" all follow.
    pub fn preempts(&self, victim: &Tier) -> bool {
        victim.is_preemptible() && victim.priority.value < self.priority.value
    }
}
