//! Pools (`pool` with its `select` lines): named sets of inventory nodes that tiers reserve
//! in, stages run in and migrations move between.

use crate::model::{Arch, CapacityKind, DomainId, NodeId};
use crate::name::{LabelKey, Name};
use crate::span::{Span, Spanned};

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
    /// Whether a selector had errors of its own (reported by lowering): the pool is kept, so
    /// that the stages, reservations and tests naming it are still checked, but which nodes it
    /// selects is unknown, so it holds none, and the checks of its size skip it.
    pub recovered: bool,
}
