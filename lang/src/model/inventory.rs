//! The inventory half of the model: nodes with their CPUs, memory, GPUs and NVLink links,
//! and the NVLink domains and racks derived from them. `placid-probe` writes this format and
//! the compiler reads it, through the same types and printer.

use std::collections::BTreeMap;

use crate::cpulist::CpuSet;
use crate::model::{DomainId, NodeId, RackId};
use crate::name::{LabelKey, Name};
use crate::span::Span;
use crate::units::{Bandwidth, Bytes, Money};

/// A CPU architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arch {
    /// 64-bit RISC-V.
    Riscv64,
    /// x86-64.
    X86_64,
    /// 64-bit Arm.
    Aarch64,
}

impl Arch {
    /// Every architecture.
    pub const ALL: &'static [Arch] = &[Arch::Riscv64, Arch::X86_64, Arch::Aarch64];

    /// The name used in policies, inventories and `uname -m`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Arch::Riscv64 => "riscv64",
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The OCI platform of images for this architecture (`linux/riscv64`).
    pub fn oci_platform(self) -> &'static str {
        match self {
            Arch::Riscv64 => "linux/riscv64",
            Arch::X86_64 => "linux/amd64",
            Arch::Aarch64 => "linux/arm64",
        }
    }

    /// Parses an architecture name (`riscv64`, `x86_64`, `aarch64`).
    pub fn parse(text: &str) -> Option<Arch> {
        Arch::ALL.iter().copied().find(|arch| arch.as_str() == text)
    }

    /// Parses an OCI platform (`linux/riscv64`, `linux/amd64`, `linux/arm64`).
    pub fn parse_oci_platform(text: &str) -> Option<Arch> {
        Arch::ALL.iter().copied().find(|arch| arch.oci_platform() == text)
    }
}

/// How a node's capacity is bought.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CapacityKind {
    /// Reserved (committed) capacity: paid for around the clock, never reclaimed.
    Reserved,
    /// On-demand capacity.
    OnDemand,
    /// Spot capacity: cheap, and the provider may reclaim it at any time.
    Spot,
}

impl CapacityKind {
    /// Every kind.
    pub const ALL: &'static [CapacityKind] = &[CapacityKind::Reserved, CapacityKind::OnDemand, CapacityKind::Spot];

    /// The keyword in policies and inventories.
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityKind::Reserved => "reserved",
            CapacityKind::OnDemand => "on-demand",
            CapacityKind::Spot => "spot",
        }
    }

    /// Parses the keyword.
    pub fn parse(text: &str) -> Option<CapacityKind> {
        CapacityKind::ALL.iter().copied().find(|kind| kind.as_str() == text)
    }
}

/// A node of the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Host name.
    pub name: Name,
    /// Where the node is declared.
    pub span: Span,
    /// CPU architecture.
    pub arch: Arch,
    /// The rack, when known.
    pub rack: Option<RackId>,
    /// The chassis (NVLink tray, blade enclosure), when known.
    pub chassis: Option<Name>,
    /// The NVLink domain (all GPUs that can reach each other over NVLink), when any.
    pub domain: Option<DomainId>,
    /// How the capacity is bought.
    pub capacity: CapacityKind,
    /// Price of one GPU for one hour.
    pub cost_per_gpu_hour: Option<Money>,
    /// Price of one TB (10^12 bytes) a GPU pod on the node sends from its own network
    /// namespace: uploads to object storage, checkpoints written over the network, traffic to
    /// other pods. Per TB, because [`Money`] holds whole cents and per-GB prices do not.
    pub cost_per_egress_tb: Option<Money>,
    /// The host CPU.
    pub cpu: Cpu,
    /// Host memory.
    pub memory: Option<Bytes>,
    /// GPUs, sorted by index.
    pub gpus: Vec<Gpu>,
    /// Extra node labels (`zone`, `example.com/tier`), sorted by key.
    pub labels: BTreeMap<LabelKey, String>,
}

impl Node {
    /// What placement ranks the node by, cheapest first (docs/semantics.md §5.3): its GPU-hour
    /// price in minor units, 0 when unpriced. The engine orders candidates by it and the Slurm
    /// target writes it as the node's `Weight`, which Slurm allocates lowest first.
    pub fn placement_price(&self) -> i64 {
        self.cost_per_gpu_hour.map_or(0, |price| price.minor)
    }

    /// Number of GPUs.
    pub fn gpu_count(&self) -> u32 {
        u32::try_from(self.gpus.len()).unwrap_or(u32::MAX)
    }

    /// The GPU model when all GPUs share one, which is what schedulers can express.
    pub fn gpu_model(&self) -> Option<&Name> {
        let first = &self.gpus.first()?.model;
        self.gpus.iter().all(|gpu| &gpu.model == first).then_some(first)
    }

    /// Whether any GPU has an NVLink link.
    pub fn has_nvlink(&self) -> bool {
        self.gpus.iter().any(|gpu| !gpu.links.is_empty())
    }

    /// The NVLink bandwidth every GPU of the node has at least (sum over its links), zero
    /// without NVLink. This is what a job spread over the node's GPUs can count on. The sum
    /// saturates: the checker refuses a GPU whose links add up past `u64` (E037), but its
    /// other passes ask this of the same model before the build stops.
    pub fn nvlink_bandwidth(&self) -> Bandwidth {
        let per_gpu =
            self.gpus.iter().map(|gpu| gpu.links.iter().fold(0u64, |sum, link| sum.saturating_add(link.bandwidth.bits_per_second)));
        Bandwidth { bits_per_second: per_gpu.min().unwrap_or(0) }
    }

    /// The NVLink links every GPU of the node has to each of its peers at least, `None` when
    /// a GPU has no NVLink: the most a class's `lanes` may ask of this node.
    pub fn nvlink_lanes(&self) -> Option<u32> {
        self.gpus.iter().map(|gpu| gpu.links.iter().map(|link| link.links).min()).collect::<Option<Vec<u32>>>()?.into_iter().min()
    }
}

/// A host CPU.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Cpu {
    /// Hardware threads (harts on RISC-V).
    pub harts: u32,
    /// Physical cores, when known.
    pub cores: Option<u32>,
    /// Sockets, when known.
    pub sockets: Option<u32>,
    /// The RISC-V ISA string (`rv64imafdcv_zicsr_...`), on riscv64.
    pub isa: Option<String>,
    /// NUMA nodes.
    pub numa_nodes: u32,
    /// The CPU model: `uarch` (`sifive,u74-mc`) on riscv64, `model name` on x86_64, when known.
    pub model: Option<String>,
    /// The vector extension the probe established on riscv64, when it looked.
    pub vector: Option<VectorExt>,
    /// RISC-V profile verdicts (`rva23u64`), sorted by profile; empty when not probed.
    pub profiles: Vec<ProfileVerdict>,
    /// NUMA nodes with their CPUs and memory, sorted by id; empty when not probed.
    pub numa: Vec<NumaNode>,
}

/// The vector extension of a RISC-V CPU. A `v` in the ISA string is not enough: T-Head C906,
/// C910 and C920v1 print `v` for their pre-ratification vector unit (RVV 0.7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VectorExt {
    /// The ratified RVV 1.0 vector extension.
    Rvv1,
    /// T-Head's vector unit (RVV 0.7.1), not binary compatible with RVV 1.0.
    XTheadVector,
    /// No vector unit.
    None,
}

impl VectorExt {
    /// Every kind.
    pub const ALL: &'static [VectorExt] = &[VectorExt::Rvv1, VectorExt::XTheadVector, VectorExt::None];

    /// The keyword in inventories.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorExt::Rvv1 => "rvv1.0",
            VectorExt::XTheadVector => "xtheadvector",
            VectorExt::None => "none",
        }
    }
}

/// Whether a CPU meets a RISC-V profile. Three-valued, because /proc/cpuinfo only proves
/// presence: an extension the kernel does not print may still be there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileVerdict {
    /// The profile, lower case (`rva22u64`, `rva23u64`).
    pub profile: Name,
    /// Mandatory extensions the kernel reports support for but this CPU lacks, sorted.
    pub missing: Vec<Name>,
    /// Mandatory extensions the kernel cannot report (properties like `ziccif`), sorted.
    pub unverifiable: Vec<Name>,
}

/// The summary of a [`ProfileVerdict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Every mandatory extension is reported.
    Meets,
    /// Some mandatory extension is missing.
    Missing,
    /// Nothing is missing, but some mandatory extensions cannot be verified.
    Unverifiable,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: &'static [Verdict] = &[Verdict::Meets, Verdict::Missing, Verdict::Unverifiable];

    /// The keyword in inventories.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Meets => "meets",
            Verdict::Missing => "missing",
            Verdict::Unverifiable => "unverifiable",
        }
    }
}

impl ProfileVerdict {
    /// The summary: missing beats unverifiable beats meets.
    pub fn verdict(&self) -> Verdict {
        if !self.missing.is_empty() {
            Verdict::Missing
        } else if !self.unverifiable.is_empty() {
            Verdict::Unverifiable
        } else {
            Verdict::Meets
        }
    }
}

/// A NUMA node of the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaNode {
    /// The kernel's node id.
    pub id: u32,
    /// Logical CPUs of the node; empty for memory-only nodes (GPU HBM on C2C hosts).
    pub cpus: CpuSet,
    /// Memory of the node, when known.
    pub memory: Option<Bytes>,
}

/// Whether and how a GPU is partitioned with MIG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mig {
    /// MIG is off: the GPU is one device.
    Disabled,
    /// MIG is on, with these instances.
    Enabled {
        /// Instances by profile (`1g.18gb` x 7).
        instances: Vec<MigInstances>,
    },
}

/// A number of MIG instances of one profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigInstances {
    /// The profile name (`1g.18gb`, `3g.71gb`).
    pub profile: Name,
    /// How many.
    pub count: u32,
}

/// A GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    /// Index within the node (as NVML and CUDA number them).
    pub index: u32,
    /// Where the GPU is declared.
    pub span: Span,
    /// Model name as schedulers see it (`H200`), a [`Name`] so Slurm cannot re-parse it.
    pub model: Name,
    /// GPU memory.
    pub memory: Option<Bytes>,
    /// NVML UUID (`GPU-...`).
    pub uuid: Option<String>,
    /// PCI bus id (`0000:17:00.0`).
    pub pci_bus_id: Option<String>,
    /// NUMA node the GPU is attached to.
    pub numa: Option<u32>,
    /// MIG mode.
    pub mig: Mig,
    /// NVLink connections to other GPUs of the node, sorted by peer.
    pub links: Vec<NvLink>,
}

/// The NVLink connection between a GPU and one peer GPU of the same node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvLink {
    /// Index of the peer GPU.
    pub peer: u32,
    /// Number of NVLink links to the peer.
    pub links: u32,
    /// Total bandwidth of those links.
    pub bandwidth: Bandwidth,
    /// Where the link is declared.
    pub span: Span,
}

/// An NVLink domain: nodes whose GPUs reach each other over NVLink (one NVL72 rack, or one
/// node for intra-node NVLink). Derived from the nodes' `nvlink-domain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// The domain's name.
    pub name: Name,
    /// Member nodes, sorted.
    pub nodes: Vec<NodeId>,
    /// GPUs of all member nodes.
    pub gpus: u32,
    /// The first node that named this domain (for diagnostics).
    pub span: Span,
}

/// A rack. Derived from the nodes' `rack`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rack {
    /// The rack's name.
    pub name: Name,
    /// Member nodes, sorted.
    pub nodes: Vec<NodeId>,
    /// The first node that named this rack (for diagnostics).
    pub span: Span,
}
