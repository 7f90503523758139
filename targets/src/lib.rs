//! placid's targets: pure functions from the [`Checked`] model to artifacts, one per
//! [`TargetKind`]: [`slurm`], [`k8s`], [`wasm`] and [`runbooks`].
//!
//! Invariants: no IO, no KDL, no re-checking of what the checker guarantees: every entry
//! point takes a [`Checked`] model, which only `placid_check::check` makes, so a target cannot
//! be handed a model that skipped the checks. Each target validates what only it constrains
//! (name lengths, escaping) and reports problems at the span of the model element at fault;
//! then it emits. The schedulers' targets and Wasm depend on `placid-lang` (whose
//! [`Checked`] token is that proof), the migration planner ([`migration`], which imports no target) and the
//! helpers in [`artifact`] and [`text`], not on each other, except that `k8s` ships what `wasm`
//! makes (the extender's module, the pod labels a plugin reads); the node labels both `k8s`
//! and `wasm` name live in [`facts`]. [`runbooks`] alone reads `slurm` and `k8s`, because it must
//! name exactly the scripts and objects they emit; nothing reads it.

#![deny(missing_docs)]

pub mod artifact;
pub mod facts;
pub mod k8s;
pub mod migration;
pub mod ops;
pub mod results;
pub mod runbooks;
pub mod slurm;
pub mod text;
pub mod wasm;
pub mod yaml;

use placid_lang::checked::Checked;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

pub use artifact::Artifact;
// The playbooks keep their path at the crate root, where other crates read them.
pub use runbooks::playbooks;

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
    /// Migration runbooks and operations playbooks under `runbooks/`.
    Runbooks,
}

impl TargetKind {
    /// Every target.
    pub const ALL: &'static [TargetKind] = &[TargetKind::Slurm, TargetKind::Kubernetes, TargetKind::Wasm, TargetKind::Runbooks];

    /// The target's name on the command line and its output directory.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Slurm => "slurm",
            TargetKind::Kubernetes => "kubernetes",
            TargetKind::Wasm => "wasm",
            TargetKind::Runbooks => "runbooks",
        }
    }

    /// Whether the project enables this target: a `target` node for the schedulers and Wasm,
    /// a page to write for the runbooks ([`runbooks::enabled`]: migrations, playbooks and
    /// alerts, whichever schedulers run them).
    pub fn enabled(self, model: &Model) -> bool {
        match self {
            TargetKind::Slurm => model.project.slurm.is_some(),
            TargetKind::Kubernetes => model.project.kubernetes.is_some(),
            TargetKind::Wasm => model.project.wasm.is_some(),
            TargetKind::Runbooks => runbooks::enabled(model),
        }
    }

    /// Warnings about what this target's output cannot express exactly (it is still emitted).
    pub fn warnings(self, model: &Checked) -> Diagnostics {
        match self {
            TargetKind::Slurm => slurm::warnings(model),
            TargetKind::Kubernetes | TargetKind::Wasm | TargetKind::Runbooks => Diagnostics::new(),
        }
    }

    /// Every error [`TargetKind::emit_with`] would report, without the bytes of the
    /// artifacts where making them is most of the work (`placid check`, which writes nothing).
    pub fn validate_with(self, model: &Checked, inputs: &Inputs) -> Result<(), Diagnostics> {
        match self {
            // Every Kubernetes diagnostic comes from building the objects, none from their YAML.
            TargetKind::Kubernetes => k8s::objects(model).map(drop),
            // Runbooks and playbooks are pages of a checked model: making them reports nothing.
            TargetKind::Runbooks => Ok(()),
            TargetKind::Slurm | TargetKind::Wasm => self.emit_with(model, inputs).map(drop),
        }
    }

    /// Emits this target's artifacts, given the project files the compiler read for it.
    pub fn emit_with(self, model: &Checked, inputs: &Inputs) -> Result<Vec<Artifact>, Diagnostics> {
        match self {
            TargetKind::Slurm => {
                // The configuration is what the release reads; the phase scripts are commands
                // run by hand, the same for every release.
                let mut artifacts = slurm::emit_with(model, &inputs.slurm_templates)?;
                artifacts.extend(slurm::migrations::phase_scripts(model));
                artifacts.sort();
                Ok(artifacts)
            }
            TargetKind::Kubernetes => k8s::emit(model),
            TargetKind::Wasm => wasm::emit(model),
            TargetKind::Runbooks => Ok(runbooks::emit(model)),
        }
    }
}
