//! Migrations (`migration`): moving work between pools through compatibility gates,
//! phases, acceptance gates and rollback triggers.

use crate::model::{Arch, ClassId, Condition, PoolId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::{Duration, Percent};

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
