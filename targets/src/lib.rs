//! placid's targets: pure functions from the [`Checked`] model to artifacts.
//!
//! Invariants: no IO, no KDL, no re-checking of what the checker guarantees: every entry
//! point takes a [`Checked`] model, which only `placid_check::check` makes, so a target cannot
//! be handed a model that skipped the checks. Each target validates what only it constrains
//! (name lengths, escaping) and reports problems at the span of the model element at fault;
//! then it emits. Targets depend on `placid-lang` and `placid-check` (for that proof), not on
//! each other, with one exception: [`migration`] spans both schedulers, so it names objects
//! with `slurm::names` and `k8s::names`, and `k8s` places its Rollouts. Shared helpers live in
//! [`artifact`] and [`text`], and the node labels both `k8s` and `wasm` name in [`facts`].

#![deny(missing_docs)]

pub mod artifact;
pub mod facts;
pub mod k8s;
pub mod migration;
pub mod slurm;
pub mod text;
pub mod wasm;

use placid_check::Checked;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

pub use artifact::Artifact;

/// Files of the project that targets need besides the model. Targets do no IO, so the
/// compiler reads these and passes them in.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// Overrides of the built-in sbatch templates.
    pub slurm_templates: slurm::SlurmTemplates,
}

/// Which target to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    /// Slurm configuration under `slurm/`.
    Slurm,
    /// Kubernetes manifests under `kubernetes/`.
    Kubernetes,
    /// Wasm scoring plugins under `wasm/`.
    Wasm,
}

impl TargetKind {
    /// Every target.
    pub const ALL: &'static [TargetKind] = &[TargetKind::Slurm, TargetKind::Kubernetes, TargetKind::Wasm];

    /// The target's name on the command line and its output directory.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Slurm => "slurm",
            TargetKind::Kubernetes => "kubernetes",
            TargetKind::Wasm => "wasm",
        }
    }

    /// Whether the project enables this target.
    pub fn enabled(self, model: &Model) -> bool {
        match self {
            TargetKind::Slurm => model.project.slurm.is_some(),
            TargetKind::Kubernetes => model.project.kubernetes.is_some(),
            TargetKind::Wasm => model.project.wasm.is_some(),
        }
    }

    /// Warnings about what this target's output cannot express exactly (it is still emitted).
    pub fn warnings(self, model: &Checked) -> Diagnostics {
        match self {
            TargetKind::Slurm => slurm::warnings(model),
            TargetKind::Kubernetes | TargetKind::Wasm => Diagnostics::new(),
        }
    }

    /// Emits this target's artifacts, given the project files the compiler read for it.
    pub fn emit_with(self, model: &Checked, inputs: &Inputs) -> Result<Vec<Artifact>, Diagnostics> {
        match self {
            TargetKind::Slurm => slurm::emit_with(model, &inputs.slurm_templates),
            TargetKind::Kubernetes => k8s::emit(model),
            TargetKind::Wasm => wasm::emit(model),
        }
    }
}
