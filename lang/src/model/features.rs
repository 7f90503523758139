//! What each score feature reads from an inventory node, and the codes of the model's
//! categorical values (communication level, architecture, capacity kind) in rows and
//! parameters. It lives with the model rather than in `crate::expr`, because the model holds
//! typed expressions (scores) and the expression language must not depend back on it.

use crate::expr::{Category, Interner, NodeFeature, STATIC_UTILIZATION};
use crate::model::{Arch, CapacityKind, CommLevel, Mig, Model, Node};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The code of a communication level in rows and parameters.
pub fn comm_code(level: CommLevel) -> f64 {
    match level {
        CommLevel::Low => 0.0,
        CommLevel::Medium => 1.0,
        CommLevel::High => 2.0,
    }
}

/// The code of an architecture in rows and parameters.
pub fn arch_code(arch: Arch) -> f64 {
    match arch {
        Arch::Riscv64 => 0.0,
        Arch::X86_64 => 1.0,
        Arch::Aarch64 => 2.0,
    }
}

/// The code of a capacity kind in rows and parameters.
pub fn capacity_code(kind: CapacityKind) -> f64 {
    match kind {
        CapacityKind::Reserved => 0.0,
        CapacityKind::OnDemand => 1.0,
        CapacityKind::Spot => 2.0,
    }
}

impl NodeFeature {
    /// The value of this feature for an inventory node; NaN when the inventory does not say.
    pub fn inventory_value(self, model: &Model, node: &Node, interner: &mut dyn Interner) -> f64 {
        let flag = |value: bool| if value { 1.0 } else { 0.0 };
        match self {
            NodeFeature::Gpus | NodeFeature::GpusFree => f64::from(node.gpu_count()),
            NodeFeature::GpuMemoryGib => {
                node.gpus.iter().filter_map(|gpu| gpu.memory).map(|bytes| bytes.0 as f64 / GIB).reduce(f64::min).unwrap_or(f64::NAN)
            }
            NodeFeature::MemoryGib => node.memory.map_or(f64::NAN, |bytes| bytes.0 as f64 / GIB),
            NodeFeature::Cpus => f64::from(node.cpu.harts),
            NodeFeature::CostPerGpuHour => node.cost_per_gpu_hour.map_or(f64::NAN, |money| money.major()),
            NodeFeature::NvlinkGbps => node.nvlink_bandwidth().gigabytes_per_second(),
            NodeFeature::HasNvlink => flag(node.has_nvlink()),
            NodeFeature::Mig => flag(node.gpus.iter().any(|gpu| matches!(gpu.mig, Mig::Enabled { .. }))),
            NodeFeature::Arch => arch_code(node.arch),
            NodeFeature::Capacity => capacity_code(node.capacity),
            NodeFeature::Rack => node.rack.map_or(f64::NAN, |rack| interner.code(Category::Rack, model.rack(rack).name.as_str())),
            NodeFeature::NvlinkDomain => {
                node.domain.map_or(f64::NAN, |domain| interner.code(Category::Domain, model.domain(domain).name.as_str()))
            }
            // The inventory knows no allocations: free capacity is all of it.
            NodeFeature::FreeGpuMilli => f64::from(node.gpu_count()) * 1000.0,
            NodeFeature::FreeCpuMilli => f64::from(node.cpu.harts) * 1000.0,
            NodeFeature::FreeMemoryMib => node.memory.map_or(f64::NAN, |bytes| bytes.0 as f64 / MIB),
            // The inventory declares bandwidth, not traffic: without telemetry NVLink counts
            // as idle, the theoretical figure scoring used before telemetry existed.
            NodeFeature::NvlinkUtilization | NodeFeature::DomainNvlinkUtilization => STATIC_UTILIZATION,
        }
    }
}

impl NodeFeature {
    /// Whether the inventory says this feature's value for `node` (its
    /// [`inventory_value`](Self::inventory_value) is not NaN). A score that reads a feature no
    /// node provides scores every node as missing (E034).
    pub fn inventory_provides(self, model: &Model, node: &Node) -> bool {
        /// Names get a code whatever they are: only whether there is a name matters here.
        struct AnyName;
        impl Interner for AnyName {
            fn code(&mut self, _category: Category, _name: &str) -> f64 {
                0.0
            }
        }
        !self.inventory_value(model, node, &mut AnyName).is_nan()
    }
}
