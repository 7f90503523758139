//! Job classes (`class`): what a kind of job needs from the hardware (NVLink, locality,
//! communication, MIG, platforms, and the defaults of what its stages run).

use crate::model::{Arch, Launch};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::Bandwidth;

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
    /// What its jobs run, as the defaults of the stages of the class (the image among them).
    pub launch: Launch,
    /// Platforms the image is built for; empty means not declared.
    pub platforms: Vec<Arch>,
    /// Whether the declaration had errors of its own (reported by lowering): the class is
    /// kept, so that the stages and tests naming it are still checked, with each faulty
    /// setting as if it were not written (the least a class asks of a pool).
    pub recovered: bool,
}
