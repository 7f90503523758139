//! The node facts that live in Kubernetes Node labels: those placid publishes under the
//! project's label prefix (the NFD rule of `k8s` writes them) and the well-known ones other
//! components publish. The Wasm plugins read them back (`wasm::sources` names them in
//! `placid.meta`), and the workload templates' node affinity selects on the NVLink lanes and
//! bisection. [`NodeFact::key`] is the one spelling of each key, so the labels NFD writes
//! and the labels the plugins read cannot drift apart.
//!
//! Invariant: a key never changes once released: emitted modules carry it in `placid.meta`,
//! and clusters carry it on their nodes.

/// A fact about a node, held in one of its labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeFact {
    /// `<prefix>/rack`: the node's rack (absent when it is in none).
    Rack,
    /// `<prefix>/nvlink-domain`: the node's NVLink domain (absent when it is in none).
    NvlinkDomain,
    /// `<prefix>/cost-per-gpu-hour`: the price of one GPU-hour, in major currency units.
    CostPerGpuHour,
    /// `<prefix>/nvlink-gbps`: the NVLink bandwidth every GPU of the node has, GB/s.
    NvlinkGbps,
    /// `<prefix>/nvlink`: whether any GPU of the node has an NVLink link.
    Nvlink,
    /// `<prefix>/capacity`: how the node's capacity is bought.
    Capacity,
    /// `<prefix>/nvlink-lanes`: the NVLink links every GPU of the node has to each linked
    /// peer at least (`Node::nvlink_lanes`); absent on a node with a GPU without NVLink. A
    /// class's `lanes=N` is node affinity `Gt N-1` on it.
    NvlinkLanes,
    /// `<prefix>/nvlink-bisection-gbps`: the bisection bandwidth of the node's NVLink domain,
    /// whole GB/s rounded down (`Model::domain_bisection`); absent outside a domain. A class's
    /// `min-bisection` is node affinity on it.
    NvlinkBisectionGbps,
    /// `kubernetes.io/arch`, published by the kubelet.
    Arch,
    /// `nvidia.com/gpu.memory`, published by GPU feature discovery: one GPU's memory in MiB.
    GpuMemoryMib,
    /// `nvidia.com/mig.capable`, published by GPU feature discovery.
    MigCapable,
}

/// How a fact's key is spelled, which says who publishes the label.
enum Spelling {
    /// The name under the project's label prefix: placid publishes it.
    Prefixed(&'static str),
    /// A well-known key another component publishes, the same on every cluster.
    WellKnown(&'static str),
}

impl NodeFact {
    /// Every fact.
    pub const ALL: &'static [NodeFact] = &[
        NodeFact::Rack,
        NodeFact::NvlinkDomain,
        NodeFact::CostPerGpuHour,
        NodeFact::NvlinkGbps,
        NodeFact::Nvlink,
        NodeFact::Capacity,
        NodeFact::NvlinkLanes,
        NodeFact::NvlinkBisectionGbps,
        NodeFact::Arch,
        NodeFact::GpuMemoryMib,
        NodeFact::MigCapable,
    ];

    fn spelling(self) -> Spelling {
        match self {
            NodeFact::Rack => Spelling::Prefixed("rack"),
            NodeFact::NvlinkDomain => Spelling::Prefixed("nvlink-domain"),
            NodeFact::CostPerGpuHour => Spelling::Prefixed("cost-per-gpu-hour"),
            NodeFact::NvlinkGbps => Spelling::Prefixed("nvlink-gbps"),
            NodeFact::Nvlink => Spelling::Prefixed("nvlink"),
            NodeFact::Capacity => Spelling::Prefixed("capacity"),
            NodeFact::NvlinkLanes => Spelling::Prefixed("nvlink-lanes"),
            NodeFact::NvlinkBisectionGbps => Spelling::Prefixed("nvlink-bisection-gbps"),
            NodeFact::Arch => Spelling::WellKnown("kubernetes.io/arch"),
            NodeFact::GpuMemoryMib => Spelling::WellKnown("nvidia.com/gpu.memory"),
            NodeFact::MigCapable => Spelling::WellKnown("nvidia.com/mig.capable"),
        }
    }

    /// The label key; `prefix` is the project's label prefix, which only the facts placid
    /// publishes are under.
    pub fn key(self, prefix: &str) -> String {
        match self.spelling() {
            Spelling::Prefixed(name) => placid_lang::labels::key(prefix, name),
            Spelling::WellKnown(key) => key.to_owned(),
        }
    }

    /// Whether placid publishes the label (through NFD), rather than another component.
    pub fn is_published(self) -> bool {
        matches!(self.spelling(), Spelling::Prefixed(_))
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::name::LabelKey;

    use super::NodeFact;

    #[test]
    fn keys_are_distinct_label_keys_under_the_prefix_exactly_when_placid_publishes_them() {
        let mut keys: Vec<String> = NodeFact::ALL.iter().map(|fact| fact.key("placid.example.com")).collect();
        for (fact, key) in NodeFact::ALL.iter().zip(&keys) {
            assert!(LabelKey::new(key).is_ok(), "{key}");
            assert_eq!(fact.is_published(), key.starts_with("placid.example.com/"), "{key}");
        }
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), NodeFact::ALL.len());
    }
}
