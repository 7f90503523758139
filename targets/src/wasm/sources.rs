//! Where each feature comes from on a live Kubernetes cluster: the node label or allocatable
//! resource behind each `node.*` feature and the pod field behind each `job.*` parameter.
//! Written into `placid.meta` as a [`Source`] (defined here, re-exported by `meta`), so a host
//! builds its flattener from the module it loads.
//!
//! Invariant: the matches are exhaustive, so a feature added to the catalogue cannot ship
//! without a source. Node labels are spelled by [`NodeFact::key`], the spelling placid's
//! Kubernetes target writes them with through NFD.

use std::fmt;

use placid_lang::expr::{JobParam, NodeFeature};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::facts::NodeFact;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The extended resource of NVIDIA's device plugin.
const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Where a Kubernetes host reads a value (docs/wasm-abi.md, "Kubernetes sources"), written in
/// `placid.meta` as one string, `<form>:<argument>` (`label:placid.dev/rack`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `label:<key>`: the Node's label.
    Label(String),
    /// `allocatable:<resource>`: the Node's `status.allocatable[<resource>]`.
    Allocatable(String),
    /// `pod.request:<resource>`: the sum over the Pod's containers of the resource's limit,
    /// else its request.
    PodRequest(String),
    /// `pod.label:<key>`: the Pod's label.
    PodLabel(String),
    /// `pod.nodeSelector:<key>`: the Pod's `spec.nodeSelector[<key>]`.
    PodNodeSelector(String),
    /// `telemetry:<scope>`: the host's live figure for the node (`node`) or for the node's
    /// NVLink domain (`domain`), docs/operations.md; a host without telemetry uses the
    /// field's static figure.
    Telemetry(String),
}

impl Source {
    /// Every form, by its constructor.
    const FORMS: [fn(String) -> Source; 6] =
        [Source::Label, Source::Allocatable, Source::PodRequest, Source::PodLabel, Source::PodNodeSelector, Source::Telemetry];

    /// The form (the one place each is spelled) and the argument.
    fn parts(&self) -> (&'static str, &str) {
        match self {
            Source::Label(key) => ("label", key),
            Source::Allocatable(resource) => ("allocatable", resource),
            Source::PodRequest(resource) => ("pod.request", resource),
            Source::PodLabel(key) => ("pod.label", key),
            Source::PodNodeSelector(key) => ("pod.nodeSelector", key),
            Source::Telemetry(scope) => ("telemetry", scope),
        }
    }

    /// The source written `text`. Any other form is refused: a host must not guess where a
    /// value of a newer format comes from.
    fn parse(text: &str) -> Result<Source, String> {
        let form_of = |make: &fn(String) -> Source| make(String::new()).parts().0;
        let found = text
            .split_once(':')
            .and_then(|(form, argument)| Source::FORMS.iter().find(|make| form_of(make) == form).map(|make| make(argument.to_owned())));
        found.ok_or_else(|| {
            let forms: Vec<String> = Source::FORMS.iter().map(|make| format!("`{}:`", form_of(make))).collect();
            format!("unknown Kubernetes source `{text}` (the forms are {})", forms.join(", "))
        })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (form, argument) = self.parts();
        write!(f, "{form}:{argument}")
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Source, D::Error> {
        Source::parse(&String::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

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
    unscaled(Source::PodLabel(placid_lang::labels::key(prefix, name)))
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

#[cfg(test)]
mod tests {
    use super::Source;

    fn json(text: &str) -> String {
        serde_json::to_string(text).unwrap_or_default()
    }

    #[test]
    fn sources_keep_their_wire_form() {
        for text in [
            "label:placid.dev/rack",
            "allocatable:nvidia.com/gpu",
            "pod.request:nvidia.com/gpu",
            "pod.label:placid.dev/comm",
            "pod.nodeSelector:kubernetes.io/arch",
        ] {
            let source: Source = serde_json::from_str(&json(text)).unwrap_or_else(|error| panic!("{text}: {error}"));
            assert_eq!(serde_json::to_string(&source).ok(), Some(json(text)));
        }
    }

    #[test]
    fn unknown_source_forms_are_refused() {
        for text in ["pod.annotation:placid.dev/comm", "Label:placid.dev/rack", "label", ""] {
            let error = serde_json::from_str::<Source>(&json(text)).err().map(|error| error.to_string()).unwrap_or_default();
            assert!(error.contains("unknown Kubernetes source"), "{text}: {error}");
        }
    }
}
