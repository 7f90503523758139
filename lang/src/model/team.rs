//! Cost centers and teams (`cost-center`, `team`): who pays and who submits. They sit
//! together because a team is defined by the cost center it bills to.

use crate::model::{CostCenterId, TierId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::Money;

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
    /// Whether the declaration had errors of its own (reported by lowering): the team is kept,
    /// so that its plans and tier permissions are still checked, with a neutral value in place
    /// of each faulty setting (share 1, its name as namespace and account; a faulty budget or
    /// tier reference left out). Checks that read those settings skip it.
    pub recovered: bool,
}
