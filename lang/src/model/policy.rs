//! The policy half of the model: project settings, pools, tiers, cost centers, teams,
//! classes, scores, plans, metrics, migrations, alerts and policy tests.

use crate::expr::Expr;
use crate::model::{Arch, CapacityKind, ClassId, CostCenterId, DomainId, MetricId, NodeId, PoolId, RackId, ScoreId, TeamId, TierId};
use crate::name::{LabelKey, Name};
use crate::source::RelPath;
use crate::span::{Span, Spanned};
use crate::units::{Bandwidth, Currency, Duration, Money, Percent};

/// The `project` node and the target settings of `placid.kdl`.
#[derive(Clone, Debug)]
pub struct Project {
    /// The project's name.
    pub name: Name,
    /// Where the project is declared.
    pub span: Span,
    /// The currency every amount of the project is in.
    pub currency: Currency,
    /// Where the build output is published (`https://…`, no trailing `/`), so each alert's
    /// `runbook_url` is a link; `None`: the path inside the build output.
    pub runbooks: Option<String>,
    /// The Slurm target, when enabled.
    pub slurm: Option<SlurmSettings>,
    /// The Kubernetes target, when enabled.
    pub kubernetes: Option<KubernetesSettings>,
    /// The Wasm scoring target, when enabled.
    pub wasm: Option<WasmSettings>,
}

impl Default for Project {
    fn default() -> Project {
        Project {
            name: Name::new("unnamed").unwrap_or_else(|_| unreachable!("a valid literal name")),
            span: Span::DETACHED,
            currency: Currency::Usd,
            runbooks: None,
            slurm: None,
            kubernetes: None,
            wasm: None,
        }
    }
}

/// A Slurm release, by its `YY.MM` version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlurmVersion {
    /// Year part (`22` of 22.05).
    pub major: u16,
    /// Month part (`5` of 22.05).
    pub minor: u16,
}

impl SlurmVersion {
    /// The releases placid emits for.
    pub const SUPPORTED: &'static [SlurmVersion] = &[
        SlurmVersion { major: 22, minor: 5 },
        SlurmVersion { major: 23, minor: 2 },
        SlurmVersion { major: 23, minor: 11 },
        SlurmVersion { major: 24, minor: 5 },
        SlurmVersion { major: 24, minor: 11 },
        SlurmVersion { major: 25, minor: 5 },
        SlurmVersion { major: 25, minor: 11 },
    ];

    /// Parses `22.05`.
    pub fn parse(text: &str) -> Option<SlurmVersion> {
        let (major, minor) = text.split_once('.')?;
        let version = SlurmVersion { major: major.parse().ok()?, minor: minor.parse().ok()? };
        SlurmVersion::SUPPORTED.contains(&version).then_some(version)
    }

    /// Whether this release is at least `major.minor`.
    pub fn at_least(self, major: u16, minor: u16) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl std::fmt::Display for SlurmVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:02}", self.major, self.minor)
    }
}

/// `target "slurm" ...`.
#[derive(Clone, Debug)]
pub struct SlurmSettings {
    /// Where the target is declared.
    pub span: Span,
    /// The Slurm release the output is for.
    pub version: SlurmVersion,
    /// `ClusterName` for accounting.
    pub cluster: Name,
    /// Whether slurmdbd accounting is in use (QOS and associations); without it tiers become
    /// partitions.
    pub accounting: bool,
    /// A directory of minijinja templates overriding the built-in sbatch templates, and
    /// where `templates=` names it.
    pub templates: Option<Spanned<RelPath>>,
}

/// `target "kubernetes" ...`.
#[derive(Clone, Debug)]
pub struct KubernetesSettings {
    /// Where the target is declared.
    pub span: Span,
    /// Kubernetes minor version (`34` of 1.34).
    pub minor_version: u16,
    /// The DNS prefix of every label and taint placid writes (`placid.dev`).
    pub label_prefix: Spanned<String>,
    /// Namespace for placid's own objects (the extender, the Argo CD application).
    pub namespace: Name,
    /// Argo CD settings, when the output is synced by Argo CD.
    pub argo: Option<ArgoSettings>,
    /// The scheduler extender's deployment, when a score places the cluster's GPU pods.
    pub extender: Option<ExtenderSettings>,
    /// The image of the steps placid adds to plan workflows (`steps image=`): a POSIX shell
    /// with `awk` and `sort`, for ranking a promoting stage's trials.
    pub steps_image: Option<Spanned<String>>,
}

/// `extender image= ignorable= [score=] [replicas=]` of the Kubernetes target: the Deployment
/// that serves a score's plugin to kube-scheduler.
#[derive(Clone, Debug)]
pub struct ExtenderSettings {
    /// Where it is declared.
    pub span: Span,
    /// The container image holding the `placid` binary.
    pub image: Spanned<String>,
    /// The score it serves; `None` until names are resolved, and when the project's only
    /// score is meant.
    pub score: Option<Spanned<ScoreId>>,
    /// The score's name as written, resolved into `score` once scores are lowered.
    pub score_name: Option<Spanned<Name>>,
    /// Pods of the Deployment.
    pub replicas: u32,
    /// Whether kube-scheduler places GPU pods without the extender when it is unreachable:
    /// the policy must choose, since neither answer is safe for every cluster.
    pub ignorable: bool,
    /// The Prometheus the deployed extender reads the policy's `telemetry` from, `HOST:PORT`
    /// (`prometheus-operated.monitoring.svc:9090`); `None`: it reads none (warning E147).
    pub prometheus: Option<Spanned<String>>,
}

impl KubernetesSettings {
    /// The label prefix of a project that names none (and of the Wasm plugins of a project
    /// without a Kubernetes target, which still say which labels a cluster would hold).
    pub const DEFAULT_LABEL_PREFIX: &'static str = "placid.dev";

    /// The score the deployed extender serves to kube-scheduler, if an extender is deployed:
    /// the only score whose stages kube-scheduler places through placid.
    pub fn served_score(&self) -> Option<ScoreId> {
        self.extender.as_ref()?.score.as_ref().map(|score| score.value)
    }
}

/// Argo CD settings of the Kubernetes target.
#[derive(Clone, Debug)]
pub struct ArgoSettings {
    /// Git repository URL of the generated tree.
    pub repo: Spanned<String>,
    /// Path of the generated tree in that repository.
    pub path: Spanned<String>,
    /// Revision Argo CD tracks.
    pub revision: Spanned<String>,
    /// Namespace Argo CD runs in.
    pub namespace: Name,
}

/// `target "wasm"`.
#[derive(Clone, Debug)]
pub struct WasmSettings {
    /// Where the target is declared.
    pub span: Span,
}

/// One `select` line of a pool: all given conditions must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    /// Where the selector is declared.
    pub span: Span,
    /// Node architecture.
    pub arch: Option<Arch>,
    /// NVLink domain.
    pub domain: Option<DomainId>,
    /// Rack name.
    pub rack: Option<Spanned<Name>>,
    /// Chassis name.
    pub chassis: Option<Spanned<Name>>,
    /// Capacity kind.
    pub capacity: Option<CapacityKind>,
    /// GPU model.
    pub gpu_model: Option<Spanned<Name>>,
    /// Node labels that must be present with these values.
    pub labels: Vec<(LabelKey, String)>,
}

/// A pool of nodes: the union of its selectors.
#[derive(Clone, Debug, PartialEq)]
pub struct Pool {
    /// The pool's name.
    pub name: Name,
    /// Where the pool is declared.
    pub span: Span,
    /// The selectors; a node is in the pool when any selector matches it.
    pub selectors: Vec<Selector>,
    /// Member nodes, sorted.
    pub nodes: Vec<NodeId>,
    /// GPUs of all member nodes.
    pub gpus: u32,
}

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
}

impl Tier {
    /// The run-time limit of a tier that declares no `max-time`: three days, the longest
    /// run a scheduler's backfill plans ahead for in placid's output.
    pub const DEFAULT_MAX_TIME: Duration = Duration { seconds: 3 * 86_400 };

    /// The longest a job of this tier may run: its `max-time`, or [`Tier::DEFAULT_MAX_TIME`].
    pub fn max_run_time(&self) -> Duration {
        self.max_time.as_ref().map_or(Tier::DEFAULT_MAX_TIME, |max| max.value)
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

/// A cost center.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostCenter {
    /// The cost center's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// Daily budget.
    pub daily_budget: Option<Spanned<Money>>,
}

/// A team.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Team {
    /// The team's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// Fair-share weight.
    pub share: Spanned<u32>,
    /// The cost center the team bills to.
    pub cost_center: Spanned<CostCenterId>,
    /// Tiers the team may use, sorted by priority (highest first).
    pub tiers: Vec<Spanned<TierId>>,
    /// Daily budget.
    pub daily_budget: Option<Spanned<Money>>,
    /// Kubernetes namespace of the team (defaults to the team's name).
    pub namespace: Name,
    /// Slurm account of the team (defaults to the team's name).
    pub account: Name,
}

/// How much a class needs NVLink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NvlinkNeed {
    /// Only NVLink-connected GPUs will do.
    Required,
    /// NVLink is preferred but PCIe works.
    Preferred,
    /// Indifferent.
    None,
}

impl NvlinkNeed {
    /// The keyword in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            NvlinkNeed::Required => "required",
            NvlinkNeed::Preferred => "preferred",
            NvlinkNeed::None => "none",
        }
    }
}

/// The unit of hardware a job must stay inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Locality {
    /// One node.
    Node,
    /// One chassis.
    Chassis,
    /// One NVLink domain.
    NvlinkDomain,
    /// One rack.
    Rack,
    /// Anywhere.
    Any,
}

impl Locality {
    /// The keyword in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            Locality::Node => "node",
            Locality::Chassis => "chassis",
            Locality::NvlinkDomain => "nvlink-domain",
            Locality::Rack => "rack",
            Locality::Any => "any",
        }
    }
}

/// How sensitive a class is to communication bandwidth and latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CommLevel {
    /// Embarrassingly parallel.
    Low,
    /// Some collective communication.
    Medium,
    /// Tensor/pipeline parallel, all-reduce heavy.
    High,
}

impl CommLevel {
    /// The keyword in policies and score expressions.
    pub fn as_str(self) -> &'static str {
        match self {
            CommLevel::Low => "low",
            CommLevel::Medium => "medium",
            CommLevel::High => "high",
        }
    }
}

/// A job class: what a kind of job needs from the hardware.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// The class's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// NVLink requirement.
    pub nvlink: NvlinkNeed,
    /// Minimum NVLink bandwidth per GPU.
    pub min_bandwidth: Option<Bandwidth>,
    /// Minimum NVLink links per GPU pair, with the span of `lanes=`.
    pub lanes: Option<Spanned<u32>>,
    /// Minimum bisection bandwidth of the NVLink domain a job runs in
    /// ([`Model::domain_bisection`](super::Model::domain_bisection)), with the span of
    /// `min-bisection=`.
    pub min_bisection: Option<Spanned<Bandwidth>>,
    /// The unit a job must stay inside.
    pub locality: Locality,
    /// Communication sensitivity.
    pub comm: CommLevel,
    /// MIG profile the class runs on (`1g.18gb`), instead of whole GPUs.
    pub mig: Option<Spanned<Name>>,
    /// The container image.
    pub image: Option<Spanned<String>>,
    /// Platforms the image is built for; empty means not declared.
    pub platforms: Vec<Arch>,
}

/// Which end of a score is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Lower scores win.
    Min,
    /// Higher scores win.
    Max,
}

impl Direction {
    /// The keyword in policies (`prefer "min"`) and in the plugin's meta.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Min => "min",
            Direction::Max => "max",
        }
    }
}

/// A named predicate of a score: nodes failing it are filtered out.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    /// The predicate's name, reported when it fails.
    pub name: Name,
    /// A boolean expression.
    pub expr: Expr,
}

/// A penalty added (for `min`) or subtracted (for `max`) when its condition holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Penalty {
    /// Where it is declared.
    pub span: Span,
    /// Amount, in score units.
    pub amount: f64,
    /// A boolean expression.
    pub when: Expr,
}

/// A scoring rule, compiled to a Wasm plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// The score's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// Which end is better.
    pub direction: Direction,
    /// The numeric score of a node for a job.
    pub expr: Expr,
    /// Predicates, in declaration order (bit `i` of the failure mask is filter `i`).
    pub filters: Vec<Filter>,
    /// Penalties, in declaration order.
    pub penalties: Vec<Penalty>,
}

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
}

impl Stage {
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
}

/// A metric, with the PromQL query that reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The metric's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// PromQL expression.
    pub query: Spanned<String>,
}

impl Metric {
    /// The placeholder a query uses for the pool it is measured on (a migration's target pool,
    /// or its source pool for a baseline).
    pub const POOL_PLACEHOLDER: &'static str = "$pool";

    /// Whether the query selects a pool with [`Metric::POOL_PLACEHOLDER`].
    pub fn is_per_pool(&self) -> bool {
        self.query.value.contains(Metric::POOL_PLACEHOLDER)
    }

    /// The query measured on `pool`.
    pub fn query_on(&self, pool: &Name) -> String {
        self.query.value.replace(Metric::POOL_PLACEHOLDER, pool.as_str())
    }
}

/// Which side of a threshold is bad (for triggers and alerts) or required (for gates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The value must stay at or above the threshold (gates), or firing when below.
    AtLeast,
    /// The value must stay at or below the threshold (gates), or firing when above.
    AtMost,
}

/// A threshold value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// A plain number in the metric's unit.
    Value(f64),
    /// A percentage (for ratios such as an error rate).
    Percent(Percent),
    /// A percentage of the baseline measured on the migration's source pool.
    OfBaseline(Percent),
}

/// A condition over a metric: gate, rollback trigger or alert.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// Where it is declared.
    pub span: Span,
    /// The metric.
    pub metric: Spanned<MetricId>,
    /// Which side is good (gates) or bad (triggers, alerts).
    pub bound: Bound,
    /// The threshold.
    pub threshold: Threshold,
    /// How long the condition must hold.
    pub duration: Option<Duration>,
}

/// A compatibility gate a migration must pass before any phase starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompatGate {
    /// Every migrated class has an image for this platform.
    ImagePlatform(Spanned<Arch>),
    /// Images pass `placid audit-binaries` (no architecture-specific binary without a build).
    BinaryAudit(Span),
    /// Minimum GPU driver version on the target nodes.
    MinDriver(Spanned<String>),
    /// Minimum kernel version on the target nodes.
    MinKernel(Spanned<String>),
}

/// The kind of a migration phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhaseKind {
    /// The new pool receives a copy of the traffic; results are discarded.
    Shadow,
    /// A small share of real work moves.
    Canary,
    /// A larger share moves.
    Ramp,
    /// All work switches at once, with the old pool kept warm.
    BlueGreen,
}

impl PhaseKind {
    /// The keyword in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::Shadow => "shadow",
            PhaseKind::Canary => "canary",
            PhaseKind::Ramp => "ramp",
            PhaseKind::BlueGreen => "blue-green",
        }
    }
}

/// A phase of a migration.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Where it is declared.
    pub span: Span,
    /// The kind.
    pub kind: PhaseKind,
    /// Share of work on the target pool (canary and ramp; 100% for blue-green).
    pub weight: Option<Percent>,
    /// How long the phase holds before the next one.
    pub hold: Duration,
}

impl Phase {
    /// The share of work on the target pool during the phase, in basis points: 0 for shadow,
    /// 10000 for blue-green.
    pub fn basis_points(&self) -> u32 {
        match self.kind {
            PhaseKind::Shadow => 0,
            PhaseKind::BlueGreen => 10_000,
            PhaseKind::Canary | PhaseKind::Ramp => self.weight.map_or(0, |weight| weight.basis_points),
        }
    }
}

/// A migration of work from one pool to another.
#[derive(Clone, Debug, PartialEq)]
pub struct Migration {
    /// The migration's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// The pool work leaves.
    pub from: Spanned<PoolId>,
    /// The pool work moves to.
    pub to: Spanned<PoolId>,
    /// Job classes that move.
    pub classes: Vec<Spanned<ClassId>>,
    /// Services (Kubernetes Deployments turned Rollouts) that move.
    pub services: Vec<Spanned<Name>>,
    /// Kubernetes namespace of the services (`services ... namespace=`); the Kubernetes
    /// target's namespace when not given.
    pub service_namespace: Option<Spanned<Name>>,
    /// Compatibility gates.
    pub compatibility: Vec<CompatGate>,
    /// Acceptance gates checked during each phase.
    pub acceptance: Vec<Condition>,
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// Rollback triggers.
    pub rollback: Vec<Condition>,
}

/// How urgent an alert is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlertSeverity {
    /// Informational.
    Info,
    /// Needs attention.
    Warning,
    /// Pages someone.
    Critical,
}

impl AlertSeverity {
    /// The keyword in policies and alert labels.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertSeverity::Info => "info",
            AlertSeverity::Warning => "warning",
            AlertSeverity::Critical => "critical",
        }
    }
}

/// An alert on a metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// The alert's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// When it fires.
    pub condition: Condition,
    /// How urgent it is.
    pub severity: AlertSeverity,
}

/// A job of a policy test: one already running in the starting state, or one submitted.
#[derive(Clone, Debug, PartialEq)]
pub struct TestJob {
    /// Where it is declared.
    pub span: Span,
    /// The name expectations refer to it by (`job "big" ...`), if any.
    pub name: Option<Spanned<Name>>,
    /// Whether it is running when the test starts (`running`), rather than submitted (`job`).
    pub running: bool,
    /// Submitting team.
    pub team: Spanned<TeamId>,
    /// Tier.
    pub tier: Spanned<TierId>,
    /// Class.
    pub class: Option<Spanned<ClassId>>,
    /// GPUs.
    pub gpus: u32,
    /// Pool the job asks for, if any.
    pub pool: Option<Spanned<PoolId>>,
    /// The nodes it must run on (`nodes "a" "b"`); empty means anywhere in its pool.
    pub nodes: Vec<Spanned<NodeId>>,
    /// When a submitted job arrives, from the start of the test (`at=`; 0 by default).
    pub at: Option<Duration>,
    /// How long it runs (`run=`; an hour by default).
    pub run: Option<Duration>,
    /// The tag it is submitted with (`tag=`): a `route` of the tag sets its tier and class.
    pub tag: Option<Spanned<Name>>,
}

/// Why a job is expected to wait (`expect "queued" reason=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueReason {
    /// Its team's or cost center's budget has no room today.
    Budget,
    /// Its team's quota in the pool (or its tier's reservation) is used up.
    Quota,
    /// No placement fits the free capacity, and nothing it may preempt frees one.
    Capacity,
    /// It would fit, but a job ahead of it holds the reservation, or its tier may not start
    /// out of order.
    Priority,
}

impl QueueReason {
    /// Every reason.
    pub const ALL: &'static [QueueReason] = &[QueueReason::Budget, QueueReason::Quota, QueueReason::Capacity, QueueReason::Priority];

    /// The keyword in tests and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueReason::Budget => "budget",
            QueueReason::Quota => "quota",
            QueueReason::Capacity => "capacity",
            QueueReason::Priority => "priority",
        }
    }
}

/// Where a placed job is expected to be; every given condition must hold.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Where {
    /// The pool it lands in.
    pub pool: Option<Spanned<PoolId>>,
    /// Whether all its GPUs must be in one NVLink domain.
    pub same_domain: bool,
    /// The NVLink domain all its nodes are in.
    pub domain: Option<Spanned<DomainId>>,
    /// The rack all its nodes are in.
    pub rack: Option<Spanned<RackId>>,
    /// The chassis all its nodes are in.
    pub chassis: Option<Spanned<Name>>,
    /// Exactly these nodes (`nodes "a" "b"`); empty means any.
    pub nodes: Vec<Spanned<NodeId>>,
}

/// What a policy test expects of one of its jobs.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The job runs, as described.
    Placed(Where),
    /// The job waits, for this reason if one is given.
    Queued(Option<Spanned<QueueReason>>),
    /// The job is rejected with this reason, a diagnostic code name (`tier-not-allowed`).
    Rejected(Spanned<Name>),
    /// The job preempts exactly these jobs of the test (indices into its jobs).
    Preempts(Vec<Spanned<usize>>),
}

/// One `expect` of a policy test.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// Where it is declared.
    pub span: Span,
    /// The job it is about (an index into the test's jobs): `job=`, or the last `job`.
    pub job: usize,
    /// What is expected.
    pub outcome: Outcome,
}

/// A policy test: a starting state, jobs submitted in sequence, a time to look, and what the
/// team expects then, like `opa test`. `placid test` runs it through the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyTest {
    /// The test's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// The jobs: `running` ones (the starting state) and submitted ones, in declaration order.
    pub jobs: Vec<TestJob>,
    /// When to look, from the start of the test (`at`); by default when the last job arrives.
    pub at: Option<Duration>,
    /// The expectations, at least one.
    pub expects: Vec<Expectation>,
}
