//! Staged placement plans (`plan` with its `stage`s and `promote`): the work a team runs,
//! and the run-time limits a stage gets from its tier.

use crate::model::{CapacityKind, ClassId, Direction, Launch, PoolId, ScoreId, TeamId, Tier, TierId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::Duration;

/// How the best trials of a stage are promoted to the stages after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promote {
    /// Where it is declared.
    pub span: Span,
    /// How many trials are promoted.
    pub top: u32,
    /// The metric trials are ranked by (reported by the jobs).
    pub by: Name,
    /// Whether lower or higher values of the metric win.
    pub order: Direction,
}

/// A stage of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The stage's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// The tier its jobs run at.
    pub tier: Spanned<TierId>,
    /// The job class.
    pub class: Option<Spanned<ClassId>>,
    /// The pool its jobs run in.
    pub pool: Spanned<PoolId>,
    /// GPUs of one trial (one job).
    pub gpus: Spanned<u32>,
    /// Number of trials (jobs) of the stage.
    pub trials: u32,
    /// Restricts the stage to one kind of capacity within its pool.
    pub capacity: Option<CapacityKind>,
    /// Indices (within the plan) of the stages that must finish first.
    pub after: Vec<Spanned<usize>>,
    /// Promotion of the best trials to the next stages.
    pub promote: Option<Promote>,
    /// The scoring rule used to place the stage's jobs.
    pub score: Option<Spanned<ScoreId>>,
    /// How long one trial is expected to run (`time=`).
    pub time: Option<Spanned<Duration>>,
    /// The longest one trial may run (`max-time=`); at most its tier's maximum.
    pub max_time: Option<Spanned<Duration>>,
    /// What its trials run, as the stage says it ([`Model::launch`](super::Model::launch)
    /// adds its class's defaults).
    pub launch: Launch,
}

/// How a later stage waits for the jobs of an earlier one (docs/semantics.md §9), as the
/// engine runs it and the Slurm target's submit.sh writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dependency {
    /// Until every trial has ended, however (Slurm's `afterany`): a preempted, cancelled or
    /// cut trial of a stage of several, or of a promoting stage, must not stall the plan.
    Ended,
    /// Until its one job has finished within its time limit (Slurm's `afterok`): a job cut
    /// at its limit, cancelled or rejected cancels the later stage (`kill_invalid_depend`).
    Succeeded,
}

impl Stage {
    /// How the stages after this one wait for its jobs: a stage of several trials or one that
    /// promotes is waited for until every trial has ended, a single job until it succeeds.
    pub fn waited_for(&self) -> Dependency {
        if self.trials > 1 || self.promote.is_some() { Dependency::Ended } else { Dependency::Succeeded }
    }

    /// The run-time limit of one trial on `tier` (the stage's tier): its `max-time`, else its
    /// expected `time`, else the tier's maximum, so a stage is never cut off by a
    /// scheduler's own default.
    pub fn run_time_limit(&self, tier: &Tier) -> Duration {
        self.max_time.as_ref().or(self.time.as_ref()).map_or_else(|| tier.max_run_time(), |limit| limit.value)
    }

    /// The expected run time when it is shorter than the limit on `tier`: a scheduler may
    /// start the trial early in a gap at least this long (Slurm's `--time-min`).
    pub fn expected_time_below_limit(&self, tier: &Tier) -> Option<Duration> {
        self.time.as_ref().map(|time| time.value).filter(|time| *time < self.run_time_limit(tier))
    }
}

/// A staged placement plan of one team.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The plan's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// The team running it.
    pub team: Spanned<TeamId>,
    /// Stages in declaration order.
    pub stages: Vec<Stage>,
    /// Whether its `team=` had an error (reported by lowering): the plan is kept, so that its
    /// stages are still checked, with the first team standing in; the checks that read the
    /// team (tier permissions, quotas) skip it.
    pub recovered: bool,
}
