//! Where each feature comes from on a live Kubernetes cluster: the node label or allocatable
//! resource behind each `node.*` feature and the pod field behind each `job.*` parameter.
//! Written into `placid.meta`, so a host builds its flattener from the module it loads.
//!
//! Invariant: the matches are exhaustive, so a feature added to the catalogue cannot ship
//! without a source. Node labels are spelled by [`NodeFact::key`], the spelling placid's
//! Kubernetes target writes them with through NFD.

use placid_lang::expr::{JobParam, NodeFeature};

use crate::facts::NodeFact;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Where a value is read from, and the factor it is multiplied by.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// `label:<key>`, `allocatable:<resource>`, `pod.request:<resource>`, `pod.label:<key>`
    /// or `pod.nodeSelector:<key>`.
    pub from: String,
    /// Multiplied into numeric values after parsing (1 unless a unit is converted).
    pub scale: f64,
}

fn source(from: String) -> Source {
    Source { from, scale: 1.0 }
}

fn label(fact: NodeFact, prefix: &str) -> Source {
    source(format!("label:{}", fact.key(prefix)))
}

/// The Kubernetes source of a node feature; `prefix` is the project's label prefix.
pub fn node_source(feature: NodeFeature, prefix: &str) -> Source {
    match feature {
        NodeFeature::Gpus | NodeFeature::GpusFree => source("allocatable:nvidia.com/gpu".to_owned()),
        // GPU feature discovery publishes the memory of one GPU in MiB.
        NodeFeature::GpuMemoryGib => Source { scale: 1.0 / 1024.0, ..label(NodeFact::GpuMemoryMib, prefix) },
        NodeFeature::MemoryGib => Source { from: "allocatable:memory".to_owned(), scale: 1.0 / GIB },
        NodeFeature::Cpus => source("allocatable:cpu".to_owned()),
        NodeFeature::CostPerGpuHour => label(NodeFact::CostPerGpuHour, prefix),
        NodeFeature::NvlinkGbps => label(NodeFact::NvlinkGbps, prefix),
        NodeFeature::HasNvlink => label(NodeFact::Nvlink, prefix),
        NodeFeature::Mig => label(NodeFact::MigCapable, prefix),
        NodeFeature::Arch => label(NodeFact::Arch, prefix),
        NodeFeature::Capacity => label(NodeFact::Capacity, prefix),
        NodeFeature::Rack => label(NodeFact::Rack, prefix),
        NodeFeature::NvlinkDomain => label(NodeFact::NvlinkDomain, prefix),
    }
}

/// The Kubernetes source of a job parameter; `prefix` is the project's label prefix. A pod
/// names the rack or NVLink domain of its job's other pods, and the architecture it runs on,
/// with the key the nodes carry it under.
pub fn param_source(param: JobParam, prefix: &str) -> Source {
    match param {
        JobParam::Gpus => source("pod.request:nvidia.com/gpu".to_owned()),
        JobParam::MemoryGib => source(format!("pod.label:{prefix}/gpu-memory-gib")),
        JobParam::CommGbps => source(format!("pod.label:{prefix}/comm-gbps")),
        JobParam::Comm => source(format!("pod.label:{prefix}/comm")),
        JobParam::NvlinkRequired => source(format!("pod.label:{prefix}/nvlink-required")),
        JobParam::Arch => source(format!("pod.nodeSelector:{}", NodeFact::Arch.key(prefix))),
        JobParam::Rack => source(format!("pod.label:{}", NodeFact::Rack.key(prefix))),
        JobParam::NvlinkDomain => source(format!("pod.label:{}", NodeFact::NvlinkDomain.key(prefix))),
    }
}
