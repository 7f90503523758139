//! The free capacity of every node: CPU, memory, and each GPU's free milli and MIG
//! instances. Allocation and release are exact inverses, so a run never drifts.

use placid_lang::model::{Mig, Model, NodeId};

use crate::event::NodeShare;
use crate::job::WHOLE_GPU_MILLI;
use crate::rank::Candidate;

/// One MiB.
const MIB: u64 = 1024 * 1024;

/// The free capacity of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFree {
    /// Free CPU, in milli-CPUs.
    pub cpu_milli: u64,
    /// Free memory in MiB; `u64::MAX` when the inventory does not say.
    pub memory_mib: u64,
    /// Free milli of each GPU, by position in the node's GPU list.
    pub gpu_milli: Vec<u32>,
    /// Free MIG instances of each GPU (of the class's profile, counted per profile name).
    pub mig: Vec<Vec<(placid_lang::name::Name, u32)>>,
    /// GPUs with all 1,000 milli free and no MIG instance taken.
    pub whole: u32,
}

/// The free capacity of the whole inventory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// By node index.
    pub nodes: Vec<NodeFree>,
}

impl Cluster {
    /// An empty cluster: everything free.
    pub fn new(model: &Model) -> Cluster {
        let nodes = model
            .nodes
            .iter()
            .map(|node| {
                let mig: Vec<Vec<(placid_lang::name::Name, u32)>> = node
                    .gpus
                    .iter()
                    .map(|gpu| match &gpu.mig {
                        Mig::Disabled => Vec::new(),
                        Mig::Enabled { instances } => instances.iter().map(|each| (each.profile.clone(), each.count)).collect(),
                    })
                    .collect();
                NodeFree {
                    cpu_milli: u64::from(node.cpu.harts) * 1000,
                    memory_mib: node.memory.map_or(u64::MAX, |bytes| bytes.0 / MIB),
                    // A MIG GPU offers instances only, never milli.
                    gpu_milli: node.gpus.iter().map(|gpu| if gpu.mig == Mig::Disabled { WHOLE_GPU_MILLI } else { 0 }).collect(),
                    whole: node.gpus.iter().filter(|gpu| gpu.mig == Mig::Disabled).count() as u32,
                    mig,
                }
            })
            .collect();
        Cluster { nodes }
    }

    /// The node's free capacity, as offered to a ranker.
    pub fn candidate(&self, node: NodeId) -> Candidate {
        let free = &self.nodes[node.index()];
        Candidate {
            node,
            free_gpus: free.whole,
            free_gpu_milli: free.gpu_milli.iter().map(|milli| u64::from(*milli)).sum(),
            free_cpu_milli: free.cpu_milli,
            free_memory_mib: free.memory_mib,
        }
    }

    /// Takes `share` (which a placement found free), with `cpu` and `memory` per GPU.
    pub fn take(&mut self, share: &NodeShare, mig: Option<&str>, cpu: u64, memory: u64) {
        let free = &mut self.nodes[share.node.index()];
        let count = share.gpus.len() as u64;
        free.cpu_milli = free.cpu_milli.saturating_sub(cpu.saturating_mul(count));
        if free.memory_mib != u64::MAX {
            free.memory_mib = free.memory_mib.saturating_sub(memory.saturating_mul(count));
        }
        for gpu in &share.gpus {
            let index = *gpu as usize;
            if let Some(profile) = mig.filter(|_| share.mig) {
                if let Some(slot) = free.mig[index].iter_mut().find(|(name, _)| name.as_str() == profile) {
                    slot.1 = slot.1.saturating_sub(1);
                }
            } else {
                if free.gpu_milli[index] == WHOLE_GPU_MILLI {
                    free.whole -= 1;
                }
                free.gpu_milli[index] -= share.milli;
            }
        }
    }

    /// Gives back what [`Cluster::take`] took.
    pub fn give(&mut self, share: &NodeShare, mig: Option<&str>, cpu: u64, memory: u64) {
        let free = &mut self.nodes[share.node.index()];
        let count = share.gpus.len() as u64;
        free.cpu_milli = free.cpu_milli.saturating_add(cpu.saturating_mul(count));
        if free.memory_mib != u64::MAX {
            free.memory_mib = free.memory_mib.saturating_add(memory.saturating_mul(count));
        }
        for gpu in &share.gpus {
            let index = *gpu as usize;
            if let Some(profile) = mig.filter(|_| share.mig) {
                if let Some(slot) = free.mig[index].iter_mut().find(|(name, _)| name.as_str() == profile) {
                    slot.1 += 1;
                }
            } else {
                free.gpu_milli[index] += share.milli;
                if free.gpu_milli[index] == WHOLE_GPU_MILLI {
                    free.whole += 1;
                }
            }
        }
    }
}
