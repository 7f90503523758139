//! The free capacity of every node: CPU, memory, and each GPU's free milli and MIG
//! instances. Allocation and release are exact inverses, so a run never drifts.

use std::collections::{BTreeSet, HashMap};

use placid_lang::model::{Locality, Mig, Model, NodeId};

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

impl NodeFree {
    /// Whether any GPU (or MIG instance) of the node is at least partly free: only such a
    /// node can host a GPU job.
    fn has_free_gpu(&self) -> bool {
        self.gpu_milli.iter().any(|milli| *milli > 0) || self.mig.iter().flatten().any(|(_, count)| *count > 0)
    }
}

/// Free whole GPUs per unit of one locality (chassis, NVLink domain or rack), with how many
/// units have each total, so the largest is known at once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct UnitTotals {
    /// Each node's unit, by node index.
    of_node: Vec<Option<u32>>,
    free: Vec<u32>,
    /// Units by free total (totals above 0 only), as (total, unit).
    by_total: BTreeSet<(u32, u32)>,
}

impl UnitTotals {
    fn new(of_node: Vec<Option<u32>>, nodes: &[NodeFree]) -> UnitTotals {
        let units = of_node.iter().flatten().map(|unit| *unit as usize + 1).max().unwrap_or(0);
        let mut totals = UnitTotals { of_node, free: vec![0; units], by_total: BTreeSet::new() };
        for (index, free) in nodes.iter().enumerate() {
            totals.shift(index, 0, free.whole);
        }
        totals
    }

    /// Moves node `index`'s unit from `before` to `after` of the node's whole GPUs free.
    fn shift(&mut self, index: usize, before: u32, after: u32) {
        let Some(unit) = self.of_node[index] else { return };
        let total = &mut self.free[unit as usize];
        self.by_total.remove(&(*total, unit));
        *total = *total + after - before;
        if *total > 0 {
            self.by_total.insert((*total, unit));
        }
    }

    fn most(&self) -> u32 {
        self.by_total.last().map_or(0, |(total, _)| *total)
    }
}

/// The free capacity of the whole inventory.
///
/// Invariants: `with_free` holds exactly the nodes with a free GPU or instance, so a
/// placement on a busy cluster looks at those alone rather than at every node of the pool;
/// `by_whole[w]` holds exactly the nodes with `w` (> 0) whole GPUs free, so a best fit is
/// found without looking at every node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// By node index.
    nodes: Vec<NodeFree>,
    with_free: BTreeSet<NodeId>,
    by_whole: Vec<BTreeSet<NodeId>>,
    /// Chassis, NVLink domains and racks.
    units: [UnitTotals; 3],
    whole: u64,
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
            .collect::<Vec<NodeFree>>();
        let with_free =
            nodes.iter().enumerate().filter(|(_, free)| free.has_free_gpu()).map(|(index, _)| NodeId::from_index(index)).collect();
        let most = nodes.iter().map(|free| free.whole as usize).max().unwrap_or(0);
        let mut by_whole = vec![BTreeSet::new(); most + 1];
        for (index, free) in nodes.iter().enumerate().filter(|(_, free)| free.whole > 0) {
            by_whole[free.whole as usize].insert(NodeId::from_index(index));
        }
        let mut names: HashMap<&str, u32> = HashMap::new();
        let chassis = model
            .nodes
            .iter()
            .map(|node| {
                let next = names.len() as u32;
                node.chassis.as_ref().map(|chassis| *names.entry(chassis.as_str()).or_insert(next))
            })
            .collect();
        let domains = model.nodes.iter().map(|node| node.domain.map(|domain| domain.index() as u32)).collect();
        let racks = model.nodes.iter().map(|node| node.rack.map(|rack| rack.index() as u32)).collect();
        let units = [UnitTotals::new(chassis, &nodes), UnitTotals::new(domains, &nodes), UnitTotals::new(racks, &nodes)];
        let whole = nodes.iter().map(|free| u64::from(free.whole)).sum();
        Cluster { nodes, with_free, by_whole, units, whole }
    }

    /// The unit of `locality` `node` is in, as an index below [`Cluster::unit_count`]; `None`
    /// when the node is in no such unit (no NVLink domain, say), which hosts no gang of it.
    pub fn unit(&self, locality: Locality, node: NodeId) -> Option<u32> {
        match locality {
            Locality::Node => Some(node.index() as u32),
            Locality::Chassis => self.units[0].of_node[node.index()],
            Locality::NvlinkDomain => self.units[1].of_node[node.index()],
            Locality::Rack => self.units[2].of_node[node.index()],
            Locality::Any => Some(0),
        }
    }

    /// More than the largest unit index of any locality.
    pub fn unit_count(&self) -> usize {
        self.units.iter().map(|units| units.free.len()).fold(self.nodes.len().max(1), usize::max)
    }

    /// An upper bound on the whole GPUs one unit of `locality` has free: no gang of more can
    /// be placed now, whatever its filters.
    pub fn most_whole_in(&self, locality: Locality) -> u64 {
        match locality {
            Locality::Node => (1..self.by_whole.len()).rev().find(|whole| !self.by_whole[*whole].is_empty()).unwrap_or(0) as u64,
            Locality::Chassis => u64::from(self.units[0].most()),
            Locality::NvlinkDomain => u64::from(self.units[1].most()),
            Locality::Rack => u64::from(self.units[2].most()),
            Locality::Any => self.whole,
        }
    }

    /// The free capacity of `node`.
    pub fn free(&self, node: NodeId) -> &NodeFree {
        &self.nodes[node.index()]
    }

    /// The nodes with a free GPU or MIG instance, in node order.
    pub fn with_free_gpus(&self) -> &BTreeSet<NodeId> {
        &self.with_free
    }

    /// The nodes with exactly `whole` (> 0) whole GPUs free, in node order.
    pub fn with_whole(&self, whole: u32) -> impl Iterator<Item = NodeId> + '_ {
        self.by_whole.get(whole as usize).into_iter().flatten().copied()
    }

    /// The most whole GPUs any node has.
    pub fn most_whole(&self) -> u32 {
        self.by_whole.len().saturating_sub(1) as u32
    }

    /// Keeps the indexes true of `node` after its GPUs changed from `before` whole free.
    fn refresh(&mut self, node: NodeId, before: u32) {
        let free = &self.nodes[node.index()];
        if free.has_free_gpu() {
            self.with_free.insert(node);
        } else {
            self.with_free.remove(&node);
        }
        if free.whole != before {
            let after = free.whole as usize;
            for units in &mut self.units {
                units.shift(node.index(), before, free.whole);
            }
            self.whole = self.whole + after as u64 - u64::from(before);
            if before > 0 {
                self.by_whole[before as usize].remove(&node);
            }
            if after > 0 {
                self.by_whole[after].insert(node);
            }
        }
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
        let before = self.nodes[share.node.index()].whole;
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
        self.refresh(share.node, before);
    }

    /// Gives back what [`Cluster::take`] took.
    pub fn give(&mut self, share: &NodeShare, mig: Option<&str>, cpu: u64, memory: u64) {
        let before = self.nodes[share.node.index()].whole;
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
        self.refresh(share.node, before);
    }
}
