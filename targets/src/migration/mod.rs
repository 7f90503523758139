//! Migrations: a `migration` block compiled into what runs it and what undoes it.
//!
//! - Kubernetes: an Argo Rollouts `Rollout` per migrated service whose canary steps are the
//!   phases, and one `AnalysisTemplate` (Prometheus provider) per acceptance gate and per
//!   rollback trigger ([`kubernetes_objects`]).
//! - Slurm: per phase, `apply.sh` and `revert.sh` of `scontrol` commands
//!   ([`crate::slurm::migrations`]).
//! - A runbook, `runbooks/<migration>.md` ([`crate::runbook`]).
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

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

pub use rollout::{KubeObject, PROMETHEUS_ADDRESS, template_name};

/// The Argo Rollouts objects of every migration: AnalysisTemplates, then Rollouts, sorted
/// by namespace, kind and name. Empty when the Kubernetes target is not enabled.
pub fn kubernetes_objects(model: &Model) -> Result<Vec<KubeObject>, Diagnostics> {
    rollout::objects(model)
}
