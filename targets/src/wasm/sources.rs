//! Where each feature comes from on a live Kubernetes cluster: the node label or allocatable
//! resource behind each `node.*` feature and the pod field behind each `job.*` parameter.
//! Written into `placid.meta`, so a host builds its flattener from the module it loads.
//!
//! Invariant: the matches are exhaustive, so a feature added to the catalogue cannot ship
//! without a source. Labels under the project's prefix are the ones placid's Kubernetes
//! target asks NFD to publish.

use placid_lang::expr::{JobParam, NodeFeature};

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

/// The Kubernetes source of a node feature; `prefix` is the project's label prefix.
pub fn node_source(feature: NodeFeature, prefix: &str) -> Source {
    match feature {
        NodeFeature::Gpus | NodeFeature::GpusFree => source("allocatable:nvidia.com/gpu".to_owned()),
        // GPU feature discovery publishes the memory of one GPU in MiB.
        NodeFeature::GpuMemoryGib => Source { from: "label:nvidia.com/gpu.memory".to_owned(), scale: 1.0 / 1024.0 },
        NodeFeature::MemoryGib => Source { from: "allocatable:memory".to_owned(), scale: 1.0 / GIB },
        NodeFeature::Cpus => source("allocatable:cpu".to_owned()),
        NodeFeature::CostPerGpuHour => source(format!("label:{prefix}/cost-per-gpu-hour")),
        NodeFeature::NvlinkGbps => source(format!("label:{prefix}/nvlink-gbps")),
        NodeFeature::HasNvlink => source(format!("label:{prefix}/nvlink")),
        NodeFeature::Mig => source("label:nvidia.com/mig.capable".to_owned()),
        NodeFeature::Arch => source("label:kubernetes.io/arch".to_owned()),
        NodeFeature::Capacity => source(format!("label:{prefix}/capacity")),
        NodeFeature::Rack => source(format!("label:{prefix}/rack")),
        NodeFeature::NvlinkDomain => source(format!("label:{prefix}/nvlink-domain")),
    }
}

/// The Kubernetes source of a job parameter; `prefix` is the project's label prefix.
pub fn param_source(param: JobParam, prefix: &str) -> Source {
    match param {
        JobParam::Gpus => source("pod.request:nvidia.com/gpu".to_owned()),
        JobParam::MemoryGib => source(format!("pod.label:{prefix}/gpu-memory-gib")),
        JobParam::CommGbps => source(format!("pod.label:{prefix}/comm-gbps")),
        JobParam::Comm => source(format!("pod.label:{prefix}/comm")),
        JobParam::NvlinkRequired => source(format!("pod.label:{prefix}/nvlink-required")),
        JobParam::Arch => source("pod.nodeSelector:kubernetes.io/arch".to_owned()),
        JobParam::Rack => source(format!("pod.label:{prefix}/rack")),
        JobParam::NvlinkDomain => source(format!("pod.label:{prefix}/nvlink-domain")),
    }
}
