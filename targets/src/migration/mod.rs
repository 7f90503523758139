//! Migrations: a `migration` block compiled into what runs it and what undoes it.
//!
//! - Kubernetes: an Argo Rollouts `Rollout` per migrated service whose canary steps are the
//!   phases, and one `AnalysisTemplate` (Prometheus provider) per acceptance gate and per
//!   rollback trigger ([`kubernetes_objects`]).
//! - Slurm: per phase, `apply.sh` and `revert.sh` of `scontrol` commands that move target
//!   nodes into the source partition, shift node weights and hold reservations
//!   (`slurm/migrations/<migration>/<NN>-<phase>/`).
//! - A runbook, `runbooks/<migration>.md`, written from the same values as the two above.
//!
//! Invariants: everything is derived from the checked model through [`plan::PhasePlan`] and
//! [`analysis::Measurement`], the one place that decides which nodes a phase uses and which
//! PromQL a gate runs, so the runbook cannot drift from the objects it describes. The
//! checker guarantees phase weights strictly increase and one condition per metric; names
//! that reach Kubernetes objects are validated here, at the span of the element at fault.

pub mod analysis;
mod names;
pub mod plan;
mod rollout;
mod runbook;
mod slurm;

use placid_check::Checked;
use placid_lang::diag::Diagnostics;

use crate::Artifact;

pub use rollout::KubeObject;

/// The Argo Rollouts objects of every migration: AnalysisTemplates, then Rollouts, sorted
/// by namespace, kind and name. Empty when the Kubernetes target is not enabled.
pub fn kubernetes_objects(model: &Checked) -> Result<Vec<KubeObject>, Diagnostics> {
    rollout::objects(model)
}

/// The Slurm phase scripts (when the Slurm target is enabled) and the runbook of every
/// migration, sorted by path.
pub fn artifacts(model: &Checked) -> Result<Vec<Artifact>, Diagnostics> {
    let mut artifacts = Vec::new();
    for migration in &model.migrations {
        let plan = plan::MigrationPlan::new(model, migration);
        if model.project.slurm.is_some() {
            artifacts.extend(slurm::phase_scripts(model, &plan));
        }
        artifacts.push(runbook::runbook(model, &plan));
    }
    artifacts.sort();
    Ok(artifacts)
}
