//! The JSON form of an inventory: the same model as the KDL form, for machine-written
//! inventories. These are wire types, converted by hand to and from the model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A whole inventory file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonInventory {
    /// The nodes.
    pub nodes: Vec<JsonNode>,
}

/// One node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JsonNode {
    /// Host name.
    pub name: String,
    /// `riscv64`, `x86_64` or `aarch64`.
    pub arch: String,
    /// Rack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    /// Chassis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis: Option<String>,
    /// NVLink domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_domain: Option<String>,
    /// `reserved`, `on-demand` or `spot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<String>,
    /// Price per GPU-hour as a decimal string in the project's currency (`"3.10"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_gpu_hour: Option<String>,
    /// Price per TB of egress, like `cost-gpu-hour` (`"90"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_egress_tb: Option<String>,
    /// CPU; a node may leave it out, like a KDL node without `cpu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<JsonCpu>,
    /// Host memory (`"512GiB"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// GPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<JsonGpu>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// A CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JsonCpu {
    /// Hardware threads.
    pub harts: u32,
    /// Cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// RISC-V ISA string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
    /// NUMA nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<u32>,
    /// CPU model (`uarch` on riscv64, `model name` on x86_64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `rvv1.0`, `xtheadvector` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<String>,
    /// RISC-V profile verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<JsonProfile>,
    /// NUMA nodes with their CPUs and memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa: Vec<JsonNuma>,
}

/// A RISC-V profile verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonProfile {
    /// Profile (`rva23u64`).
    pub profile: String,
    /// `meets`, `missing` or `unverifiable`.
    pub verdict: String,
    /// Missing mandatory extensions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Mandatory extensions the kernel cannot report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverifiable: Vec<String>,
}

/// A NUMA node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonNuma {
    /// Node id.
    pub id: u32,
    /// CPU list (`0-7,16-23`).
    #[serde(default)]
    pub cpus: String,
    /// Memory (`"64GiB"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// A GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JsonGpu {
    /// Index.
    pub index: u32,
    /// Model.
    pub model: String,
    /// Memory (`"141GiB"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// PCI bus id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// NUMA node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<u32>,
    /// `disabled` or `enabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<String>,
    /// MIG instances.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_instances: Vec<JsonMigInstances>,
    /// NVLink connections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlinks: Vec<JsonNvLink>,
}

/// MIG instances of one profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonMigInstances {
    /// Profile.
    pub profile: String,
    /// Count.
    pub count: u32,
}

/// An NVLink connection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonNvLink {
    /// Peer GPU index.
    pub peer: u32,
    /// Link count.
    pub links: u32,
    /// Bandwidth (`"900GB/s"`).
    pub bandwidth: String,
}
