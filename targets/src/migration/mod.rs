//! Migrations: the plan both schedulers and the runbook read, derived once from a checked
//! `migration` block.
//!
//! - [`plan`]: which target nodes each phase uses, and their Slurm weights.
//! - [`analysis`]: what each acceptance gate and rollback trigger measures (PromQL and the
//!   condition on its result).
//!
//! What is built from the plan lives with its target: the Argo Rollouts objects in
//! `k8s::rollouts`, the Slurm phase scripts in `slurm::migrations`, the runbook in `runbook`.
//!
//! Invariants: this module imports neither the Kubernetes nor the Slurm target, which read
//! it; it is the one place that decides which nodes a phase uses and which PromQL a gate
//! runs, so the scripts, the objects and the runbook cannot disagree. The checker guarantees
//! phase weights strictly increase and one condition per metric.

pub mod analysis;
pub mod plan;
