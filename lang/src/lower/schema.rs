//! What the language accepts, in one table: every node that takes properties or children, by
//! its path, with the properties and children lowering reads. Lowering checks each node
//! against its entry here (unknown names are `E002`/`E003`), and the effects test
//! (tests/tests/effects.rs) enumerates [`NODES`] so that a property added here without an
//! effect fails it. A node missing from the table takes neither (`priority 500`, `label "k"
//! "v"`): it is named in its parent's `children`.
//!
//! Paths are node names from a file's top level joined by `/`; `target` is one node with a
//! different schema per kind, so its path names the kind (`target=slurm/...`).

/// The properties and children of one node.
#[derive(Debug)]
pub struct NodeSchema {
    /// Where the node appears: `tier/checkpoint`.
    pub path: &'static str,
    /// The properties it accepts (`every`, `incremental`).
    pub properties: &'static [&'static str],
    /// The children it accepts.
    pub children: &'static [&'static str],
}

const fn node(path: &'static str, properties: &'static [&'static str], children: &'static [&'static str]) -> NodeSchema {
    NodeSchema { path, properties, children }
}

/// Declarations that may appear in any policy file.
pub const POLICY_DECLARATIONS: &[&str] = &[
    "pool",
    "tier",
    "cost-center",
    "team",
    "class",
    "score",
    "plan",
    "metric",
    "migration",
    "alert",
    "test",
    "admin-accounts",
    "route",
    "telemetry",
];

/// Declarations that only the project file may contain.
pub const PROJECT_DECLARATIONS: &[&str] = &["project", "inventory", "include", "target"];

/// The declarations of an inventory file.
pub const INVENTORY_DECLARATIONS: &[&str] = &["node"];

/// Properties and children of every node that has any.
pub const NODES: &[&NodeSchema] = &[
    &PROJECT,
    &TARGET_SLURM,
    &TARGET_KUBERNETES,
    &TARGET_KUBERNETES_ARGO,
    &TARGET_KUBERNETES_EXTENDER,
    &TARGET_KUBERNETES_STEPS,
    &TARGET_WASM,
    &TELEMETRY,
    &TELEMETRY_THROTTLE,
    &NODE,
    &NODE_CPU,
    &NODE_CPU_PROFILE,
    &NODE_CPU_NUMA,
    &NODE_COST,
    &NODE_GPU,
    &NODE_GPU_NVLINK,
    &NODE_GPU_MIG_INSTANCE,
    &POOL,
    &POOL_SELECT,
    &TIER,
    &TIER_PREEMPTION,
    &TIER_RESERVE,
    &TIER_CHECKPOINT,
    &TIER_BUDGET,
    &COST_CENTER,
    &COST_CENTER_BUDGET,
    &TEAM,
    &TEAM_BUDGET,
    &CLASS,
    &CLASS_NVLINK,
    &SCORE,
    &SCORE_PENALTY,
    &PLAN,
    &PLAN_STAGE,
    &PLAN_STAGE_PROMOTE,
    &ROUTE,
    &METRIC,
    &ALERT,
    &MIGRATION,
    &MIGRATION_SERVICES,
    &MIGRATION_COMPATIBILITY,
    &MIGRATION_ACCEPT,
    &MIGRATION_ROLLBACK_WHEN,
    &MIGRATION_PHASE,
    &TEST,
    &TEST_RUNNING,
    &TEST_JOB,
    &TEST_EXPECT,
];

/// `project "name" currency=`.
pub const PROJECT: NodeSchema = node("project", &["currency", "runbooks"], &[]);
/// `target "slurm"`.
pub const TARGET_SLURM: NodeSchema = node("target=slurm", &["version", "cluster", "accounting", "templates"], &[]);
/// `target "kubernetes"`.
pub const TARGET_KUBERNETES: NodeSchema =
    node("target=kubernetes", &["version", "label-prefix", "namespace"], &["argo", "extender", "steps"]);
/// The Argo CD application of the Kubernetes target.
pub const TARGET_KUBERNETES_ARGO: NodeSchema = node("target=kubernetes/argo", &["repo", "path", "revision", "namespace"], &[]);
/// The scheduler extender's deployment.
pub const TARGET_KUBERNETES_EXTENDER: NodeSchema =
    node("target=kubernetes/extender", &["image", "ignorable", "score", "replicas", "prometheus"], &[]);
/// The image of the steps placid adds to plan workflows.
pub const TARGET_KUBERNETES_STEPS: NodeSchema = node("target=kubernetes/steps", &["image"], &[]);

/// Live NVLink telemetry for scoring and throttling.
pub const TELEMETRY: NodeSchema = node("telemetry", &["half-life", "max-age", "ttl"], &["node-query", "domain-query", "throttle"]);
/// A throttle rule: a domain above the threshold for the hold takes no new jobs of the level.
pub const TELEMETRY_THROTTLE: NodeSchema = node("telemetry/throttle", &["domain-nvlink-above", "for", "comm"], &[]);

/// `target "wasm"`: it takes nothing, and is listed so that every target kind has its entry.
pub const TARGET_WASM: NodeSchema = node("target=wasm", &[], &[]);

/// An inventory host.
pub const NODE: NodeSchema =
    node("node", &["arch", "rack", "chassis", "nvlink-domain", "capacity"], &["cpu", "memory", "cost", "gpu", "label"]);
/// A host's CPU, as placid-probe reports it.
pub const NODE_CPU: NodeSchema =
    node("node/cpu", &["harts", "cores", "sockets", "isa", "numa-nodes", "model", "vector"], &["profile", "numa"]);
/// A RISC-V profile verdict of a host's CPU.
pub const NODE_CPU_PROFILE: NodeSchema = node("node/cpu/profile", &["verdict", "missing", "unverifiable"], &[]);
/// A NUMA node of a host's CPU.
pub const NODE_CPU_NUMA: NodeSchema = node("node/cpu/numa", &["cpus", "memory"], &[]);
/// A host's GPU price.
pub const NODE_COST: NodeSchema = node("node/cost", &["gpu-hour", "egress-tb"], &[]);
/// A GPU of a host.
pub const NODE_GPU: NodeSchema = node("node/gpu", &["model", "memory", "uuid", "pci", "numa", "mig"], &["nvlink", "mig-instance"]);
/// The NVLink links of a GPU to one peer.
pub const NODE_GPU_NVLINK: NodeSchema = node("node/gpu/nvlink", &["peer", "links", "bandwidth"], &[]);
/// MIG instances of a GPU.
pub const NODE_GPU_MIG_INSTANCE: NodeSchema = node("node/gpu/mig-instance", &["profile", "count"], &[]);

/// A pool of nodes.
pub const POOL: NodeSchema = node("pool", &[], &["select"]);
/// One conjunction of a pool.
pub const POOL_SELECT: NodeSchema = node("pool/select", &["arch", "nvlink-domain", "rack", "chassis", "capacity", "gpu-model"], &["label"]);

/// A priority tier.
pub const TIER: NodeSchema =
    node("tier", &[], &["priority", "preemption", "checkpoint", "backfill", "reserve", "cost-center", "budget", "max-time"]);
/// How a tier's jobs are preempted.
pub const TIER_PREEMPTION: NodeSchema = node("tier/preemption", &["window", "mode", "exempt"], &[]);
/// GPUs reserved for a tier.
pub const TIER_RESERVE: NodeSchema = node("tier/reserve", &["pool", "gpus"], &[]);
/// A tier's checkpoint cadence.
pub const TIER_CHECKPOINT: NodeSchema = node("tier/checkpoint", &["every", "incremental"], &[]);
/// A tier's daily budget.
pub const TIER_BUDGET: NodeSchema = node("tier/budget", &["daily"], &[]);

/// A cost center.
pub const COST_CENTER: NodeSchema = node("cost-center", &[], &["budget"]);
/// A cost center's daily budget.
pub const COST_CENTER_BUDGET: NodeSchema = node("cost-center/budget", &["daily"], &[]);
/// A team.
pub const TEAM: NodeSchema = node("team", &[], &["share", "cost-center", "tiers", "budget", "namespace", "account"]);
/// A team's daily budget.
pub const TEAM_BUDGET: NodeSchema = node("team/budget", &["daily"], &[]);

/// A job class.
pub const CLASS: NodeSchema =
    node("class", &[], &["nvlink", "locality", "comm", "mig", "platforms", "command", "image", "env", "cpus", "memory", "workdir"]);
/// A class's NVLink needs.
pub const CLASS_NVLINK: NodeSchema = node("class/nvlink", &["min-bandwidth", "lanes", "min-bisection"], &[]);

/// A placement score.
pub const SCORE: NodeSchema = node("score", &[], &["prefer", "expr", "filter", "penalty"]);
/// A penalty of a score.
pub const SCORE_PENALTY: NodeSchema = node("score/penalty", &["when"], &[]);

/// A team's plan.
pub const PLAN: NodeSchema = node("plan", &["team"], &["stage"]);
/// A stage of a plan.
pub const PLAN_STAGE: NodeSchema = node(
    "plan/stage",
    &["tier", "class", "pool", "gpus", "trials", "capacity", "after", "score", "time", "max-time"],
    &["after", "promote", "command", "image", "env", "cpus", "memory", "workdir"],
);
/// Which trials of a stage move on.
pub const PLAN_STAGE_PROMOTE: NodeSchema = node("plan/stage/promote", &["top", "by", "order"], &[]);

/// A tag's route to a tier.
pub const ROUTE: NodeSchema = node("route", &["tag", "tier", "class"], &[]);
/// A named PromQL query.
pub const METRIC: NodeSchema = node("metric", &["query"], &[]);
/// An alert on a metric.
pub const ALERT: NodeSchema = node("alert", &["metric", "above", "below", "of", "for", "severity"], &[]);

/// A migration between pools.
pub const MIGRATION: NodeSchema =
    node("migration", &["from", "to"], &["classes", "services", "compatibility", "accept", "phase", "rollback-when"]);
/// The services a migration moves.
pub const MIGRATION_SERVICES: NodeSchema = node("migration/services", &["namespace"], &[]);
/// The compatibility gates of a migration.
pub const MIGRATION_COMPATIBILITY: NodeSchema =
    node("migration/compatibility", &[], &["image-platform", "binary-audit", "min-driver", "min-kernel"]);
/// An acceptance gate of a migration.
pub const MIGRATION_ACCEPT: NodeSchema = node("migration/accept", &["metric", "at-least", "at-most", "of", "for"], &[]);
/// A rollback trigger of a migration.
pub const MIGRATION_ROLLBACK_WHEN: NodeSchema = node("migration/rollback-when", &["metric", "above", "below", "of", "for"], &[]);
/// A phase of a migration.
pub const MIGRATION_PHASE: NodeSchema = node("migration/phase", &["weight", "hold"], &[]);

/// A policy test.
pub const TEST: NodeSchema = node("test", &[], &["running", "job", "at", "expect"]);
/// A job already running when a test starts.
pub const TEST_RUNNING: NodeSchema = node("test/running", &["team", "tier", "class", "gpus", "pool", "run"], &["nodes"]);
/// A job a test submits.
pub const TEST_JOB: NodeSchema = node("test/job", &["team", "tier", "class", "gpus", "pool", "at", "run", "tag"], &["nodes"]);
/// What a test expects.
pub const TEST_EXPECT: NodeSchema =
    node("test/expect", &["job", "pool", "same-domain", "domain", "rack", "chassis", "reason", "message"], &["nodes", "victims"]);
