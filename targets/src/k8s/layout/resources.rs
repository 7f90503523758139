//! Amounts of the resources Kueue quotas cover (CPU, memory, GPUs) and what one node has:
//! what cells add up and quotas split, kept apart from both so that each reads it without
//! reading the other.

use placid_lang::model::{Model, NodeId};

/// One MiB: memory quotas are whole MiB so they print exactly.
const MIB: u64 = 1024 * 1024;

/// An amount of each covered resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPUs (hardware threads).
    pub cpu: u64,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// GPUs.
    pub gpus: u64,
}

impl Resources {
    /// What is left of `self` once `other` is taken (never below zero).
    pub fn minus(self, other: Resources) -> Resources {
        Resources {
            cpu: self.cpu.saturating_sub(other.cpu),
            memory_mib: self.memory_mib.saturating_sub(other.memory_mib),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    /// The sum of two amounts.
    pub fn plus(self, other: Resources) -> Resources {
        Resources { cpu: self.cpu + other.cpu, memory_mib: self.memory_mib + other.memory_mib, gpus: self.gpus + other.gpus }
    }

    /// The share of this amount that goes with `gpus` of its GPUs (CPU and memory follow the
    /// GPUs they sit beside).
    pub(super) fn share_for_gpus(self, gpus: u64) -> Resources {
        let part = |amount: u64| if self.gpus == 0 { 0 } else { (u128::from(amount) * u128::from(gpus) / u128::from(self.gpus)) as u64 };
        Resources { cpu: part(self.cpu), memory_mib: part(self.memory_mib), gpus: gpus.min(self.gpus) }
    }
}

/// The CPU, memory and GPUs of one node.
pub fn node_resources(model: &Model, node_id: NodeId) -> Resources {
    let node = model.node(node_id);
    Resources {
        cpu: u64::from(node.cpu.harts),
        memory_mib: node.memory.map(|bytes| bytes.0 / MIB).unwrap_or(0),
        gpus: u64::from(node.gpu_count()),
    }
}
