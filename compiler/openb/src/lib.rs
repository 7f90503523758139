//! The reference placements of the FGD paper on Alibaba's openb trace (docs/semantics.md,
//! "Reference placements (openb)"): read the node and pod lists ([`read`]), place every pod
//! once on a cluster that never frees anything ([`place`]), and measure the GPU allocation as
//! the arrived work grows ([`metric`]). It validates the engine against a published result, so
//! its definitions follow the paper's artifact, not placid's own placement rules.

pub mod metric;
pub mod place;
pub mod read;
pub mod wasm;

/// Thousandths of one GPU; a whole GPU is [`Milli::GPU`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Milli(pub u32);

impl Milli {
    /// One whole GPU.
    pub const GPU: u32 = 1000;
}

/// The GPU models a pod may run on, as a set of indices into [`Trace::models`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSpec(u64);

impl GpuSpec {
    /// No constraint (an empty `gpu_spec`).
    pub const ANY: GpuSpec = GpuSpec(u64::MAX);
    /// No model yet; [`GpuSpec::with`] adds them.
    pub const NONE: GpuSpec = GpuSpec(0);

    /// This set with model `index` added (`index` < [`read::MAX_MODELS`]).
    pub fn with(self, index: usize) -> GpuSpec {
        GpuSpec(self.0 | 1u64.checked_shl(index as u32).unwrap_or(0))
    }

    /// Whether a node of model `index` may run the pod.
    pub fn allows(self, index: u8) -> bool {
        self.0 & 1u64.checked_shl(u32::from(index)).unwrap_or(0) != 0
    }
}

/// A node of the node list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `sn`.
    pub name: String,
    /// Milli-vCPU.
    pub cpu_milli: u64,
    /// MiB.
    pub memory_mib: u64,
    /// GPUs, each of [`Milli::GPU`].
    pub gpus: u32,
    /// Index into [`Trace::models`].
    pub model: u8,
}

/// A pod of the pod list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// `name`.
    pub name: String,
    /// Milli-vCPU.
    pub cpu_milli: u64,
    /// MiB.
    pub memory_mib: u64,
    /// `num_gpu`.
    pub gpus: u32,
    /// The share of each GPU: 0 without GPUs, below [`Milli::GPU`] only for a sharing pod.
    pub gpu_milli: Milli,
    /// The models it may run on.
    pub spec: GpuSpec,
}

impl Pod {
    /// The GPU milli it asks for in all (`num_gpu × gpu_milli`).
    pub fn gpu_request(&self) -> u64 {
        u64::from(self.gpus) * u64::from(self.gpu_milli.0)
    }

    /// Whether it shares one GPU with others (`num_gpu` 1, `gpu_milli` below 1000).
    pub fn shares_gpu(&self) -> bool {
        self.gpus == 1 && self.gpu_milli.0 < Milli::GPU
    }
}

/// A node list and a pod list, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Every node.
    pub nodes: Vec<Node>,
    /// Every pod, in file order.
    pub pods: Vec<Pod>,
    /// The GPU models the node list names, in order of first appearance.
    pub models: Vec<String>,
}

impl Trace {
    /// The cluster's GPU milli in all.
    pub fn total_gpu_milli(&self) -> u64 {
        self.nodes.iter().map(|node| u64::from(node.gpus) * u64::from(Milli::GPU)).sum()
    }
}
