//! Where each feature comes from on a live Kubernetes cluster: the node label or allocatable
//! resource behind each `node.*` feature and the pod field behind each `job.*` parameter.
//! Written into `placid.meta`, so a host builds its flattener from the module it loads.
//!
//! Invariant: the matches are exhaustive, so a feature added to the catalogue cannot ship
//! without a source. Node labels are spelled by [`NodeFact::key`], the spelling placid's
//! Kubernetes target writes them with through NFD.

use placid_lang::expr::{JobParam, NodeFeature};

use super::meta::Source;
use crate::facts::NodeFact;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The extended resource of NVIDIA's device plugin.
const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Where a value is read from, and the factor it is multiplied by.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The object field.
    pub from: Source,
    /// Multiplied into numeric values after parsing (1 unless a unit is converted).
    pub scale: f64,
}

fn unscaled(from: Source) -> Origin {
    Origin { from, scale: 1.0 }
}

fn label(fact: NodeFact, prefix: &str) -> Origin {
    unscaled(Source::Label(fact.key(prefix)))
}

fn pod_label(name: &str, prefix: &str) -> Origin {
    unscaled(Source::PodLabel(format!("{prefix}/{name}")))
}

/// The Kubernetes source of a node feature; `prefix` is the project's label prefix.
pub fn node_source(feature: NodeFeature, prefix: &str) -> Origin {
    match feature {
        NodeFeature::Gpus | NodeFeature::GpusFree => unscaled(Source::Allocatable(GPU_RESOURCE.to_owned())),
        // GPU feature discovery publishes the memory of one GPU in MiB.
        NodeFeature::GpuMemoryGib => Origin { scale: 1.0 / 1024.0, ..label(NodeFact::GpuMemoryMib, prefix) },
        NodeFeature::MemoryGib => Origin { from: Source::Allocatable("memory".to_owned()), scale: 1.0 / GIB },
        NodeFeature::Cpus => unscaled(Source::Allocatable("cpu".to_owned())),
        NodeFeature::CostPerGpuHour => label(NodeFact::CostPerGpuHour, prefix),
        NodeFeature::NvlinkGbps => label(NodeFact::NvlinkGbps, prefix),
        NodeFeature::HasNvlink => label(NodeFact::Nvlink, prefix),
        NodeFeature::Mig => label(NodeFact::MigCapable, prefix),
        NodeFeature::Arch => label(NodeFact::Arch, prefix),
        NodeFeature::Capacity => label(NodeFact::Capacity, prefix),
        NodeFeature::Rack => label(NodeFact::Rack, prefix),
        NodeFeature::NvlinkDomain => label(NodeFact::NvlinkDomain, prefix),
        // The extender's request carries the Node objects but not the requests of the pods on
        // them, so free capacity is what the node can allocate (docs/wasm-abi.md).
        NodeFeature::FreeGpuMilli => Origin { from: Source::Allocatable(GPU_RESOURCE.to_owned()), scale: 1000.0 },
        NodeFeature::FreeCpuMilli => Origin { from: Source::Allocatable("cpu".to_owned()), scale: 1000.0 },
        NodeFeature::FreeMemoryMib => Origin { from: Source::Allocatable("memory".to_owned()), scale: 1.0 / MIB },
        // Prometheus through the extender's telemetry (the policy's `telemetry` block):
        // `telemetry:node` by the node's name, `telemetry:domain` by its NVLink-domain label.
        NodeFeature::NvlinkUtilization | NodeFeature::DomainNvlinkUtilization => unscaled(Source::Telemetry(feature.scope().to_owned())),
    }
}

/// The Kubernetes source of a job parameter; `prefix` is the project's label prefix. A pod
/// names the rack or NVLink domain of its job's other pods, and the architecture it runs on,
/// with the key the nodes carry it under.
pub fn param_source(param: JobParam, prefix: &str) -> Origin {
    match param {
        JobParam::Gpus => unscaled(Source::PodRequest(GPU_RESOURCE.to_owned())),
        JobParam::MemoryGib => pod_label("gpu-memory-gib", prefix),
        JobParam::CommGbps => pod_label("comm-gbps", prefix),
        JobParam::Comm => pod_label("comm", prefix),
        JobParam::NvlinkRequired => pod_label("nvlink-required", prefix),
        JobParam::Arch => unscaled(Source::PodNodeSelector(NodeFact::Arch.key(prefix))),
        JobParam::Rack => unscaled(Source::PodLabel(NodeFact::Rack.key(prefix))),
        JobParam::NvlinkDomain => unscaled(Source::PodLabel(NodeFact::NvlinkDomain.key(prefix))),
        JobParam::CpuMilli => Origin { from: Source::PodRequest("cpu".to_owned()), scale: 1000.0 },
        // Kubernetes has no resource for a share of a GPU; the pod says it with a label.
        JobParam::GpuMilli => pod_label("gpu-milli", prefix),
    }
}
