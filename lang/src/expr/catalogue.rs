//! The feature catalogue: every `node.*` feature and `job.*` parameter a score expression may
//! read, with its type and, for node features, where in the inventory its value comes from.
//! How the value is taken from an inventory node is the model's business (its `features`
//! module), so the expression language depends on nothing of the model.
//!
//! Invariant: this table is the only place feature names are spelled. The Wasm ABI orders row
//! fields and parameters by the position of the feature in [`NodeFeature::ALL`] /
//! [`JobParam::ALL`], so a feature's index here is part of every emitted module's layout
//! (through `placid.meta`, which names each field) and must never be reused for another
//! meaning. Where a feature comes from on a live Kubernetes node is the Wasm target's business
//! (`placid-targets`), because this crate knows nothing of Kubernetes.

/// A categorical type: a value out of a small set, compared with `==` and `!=` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Communication sensitivity: `low`, `medium`, `high`.
    Comm,
    /// CPU architecture: `riscv64`, `x86_64`, `aarch64`.
    Arch,
    /// How capacity is bought: `reserved`, `on_demand`, `spot`.
    Capacity,
    /// A rack name; values are interned by the host, so racks compare only with racks.
    Rack,
    /// An NVLink domain name; interned by the host like racks.
    Domain,
}

impl Category {
    /// Every category.
    pub const ALL: &'static [Category] = &[Category::Comm, Category::Arch, Category::Capacity, Category::Rack, Category::Domain];

    /// The category's name in messages and in `placid.meta`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Comm => "comm",
            Category::Arch => "arch",
            Category::Capacity => "capacity",
            Category::Rack => "rack",
            Category::Domain => "nvlink-domain",
        }
    }

    /// The values an expression may spell, in code order (value `i` is encoded as `i` in
    /// rows and parameters). `None` for interned categories, whose codes the host assigns.
    pub fn levels(self) -> Option<&'static [&'static str]> {
        match self {
            Category::Comm => Some(&["low", "medium", "high"]),
            // `on-demand` is spelled with an underscore because `-` is subtraction here.
            Category::Capacity => Some(&["reserved", "on_demand", "spot"]),
            Category::Arch => Some(&["riscv64", "x86_64", "aarch64"]),
            Category::Rack | Category::Domain => None,
        }
    }

    /// The code of a level (`high` of `comm` is 2), if `text` is one.
    pub fn level_code(self, text: &str) -> Option<u32> {
        let position = self.levels()?.iter().position(|level| *level == text)?;
        u32::try_from(position).ok()
    }
}

/// The type of a feature or of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A number (f64). Missing values are NaN.
    Number,
    /// A condition.
    Bool,
    /// A value of a categorical type.
    Category(Category),
}

impl Type {
    /// The type's name in messages and in `placid.meta` (`number`, `bool`, `comm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Type::Number => "number",
            Type::Bool => "bool",
            Type::Category(category) => category.as_str(),
        }
    }
}

/// Interned codes of racks and NVLink domains for one evaluation: both node rows and job
/// parameters must use the same table, so `node.rack != job.rack` compares like with like.
pub trait Interner {
    /// The code of `name` in `category`.
    fn code(&mut self, category: Category, name: &str) -> f64;
}

/// What [`NodeFeature`] and [`JobParam`] have in common, for code that treats a row field
/// and a job parameter alike (the layout `placid.meta` describes).
pub trait Entry: Copy + 'static {
    /// What one entry is called in messages (`node feature`).
    const KIND: &'static str;
    /// Every entry, in layout order.
    const ALL: &'static [Self];

    /// The full name as written in expressions (`node.gpus_free`).
    fn qualified_name(self) -> &'static str;

    /// The type of its values.
    fn ty(self) -> Type;

    /// The entry whose full name is `name`.
    fn from_qualified_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|entry| entry.qualified_name() == name)
    }
}

/// The scope of an entry: `$prefix` unless the entry names another (`domain.*` features are
/// fields of the node row too: the value of the node's domain).
macro_rules! scope {
    ($prefix:literal) => {
        $prefix
    };
    ($prefix:literal, $scope:literal) => {
        $scope
    };
}

macro_rules! features {
    ($(#[$meta:meta])* $enum:ident, $prefix:literal, $kind:literal, { $( $variant:ident = $name:literal $(in $scope:literal)?, $ty:expr, $doc:literal; )* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $enum {
            $( #[doc = $doc] $variant, )*
        }

        impl $enum {
            /// Every entry, in layout order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),*];

            /// The name after the scope (`gpus_free`).
            pub fn name(self) -> &'static str {
                match self { $($enum::$variant => $name,)* }
            }

            /// The full name as written in expressions (`node.gpus_free`).
            pub fn qualified_name(self) -> &'static str {
                match self { $($enum::$variant => concat!(scope!($prefix $(, $scope)?), ".", $name),)* }
            }

            /// The scope before the name (`node`; `domain` for the domain's figures).
            pub fn scope(self) -> &'static str {
                match self { $($enum::$variant => scope!($prefix $(, $scope)?),)* }
            }

            /// The type of its values.
            pub fn ty(self) -> Type {
                match self { $($enum::$variant => $ty,)* }
            }

            /// What it means, with its unit.
            pub fn doc(self) -> &'static str {
                match self { $($enum::$variant => $doc,)* }
            }

            /// Position in [`Self::ALL`], which orders fields in Wasm rows.
            pub fn index(self) -> usize {
                self as usize
            }

            /// The entry named `name` in `scope`.
            pub fn lookup(scope: &str, name: &str) -> Option<$enum> {
                Self::ALL.iter().copied().find(|entry| entry.scope() == scope && entry.name() == name)
            }
        }

        impl Entry for $enum {
            const KIND: &'static str = $kind;
            const ALL: &'static [$enum] = $enum::ALL;

            fn qualified_name(self) -> &'static str {
                $enum::qualified_name(self)
            }

            fn ty(self) -> Type {
                $enum::ty(self)
            }
        }
    };
}

features!(
    /// A feature of a node, read from a node row (`node.*`).
    NodeFeature, "node", "node feature", {
        Gpus = "gpus", Type::Number, "GPUs of the node (count).";
        GpusFree = "gpus_free", Type::Number, "GPUs not in use (count); the inventory knows no allocations, so all of them.";
        GpuMemoryGib = "gpu_memory_gib", Type::Number, "Memory of the smallest GPU of the node, in GiB.";
        MemoryGib = "memory_gib", Type::Number, "Host memory, in GiB.";
        Cpus = "cpus", Type::Number, "Hardware threads (harts on RISC-V).";
        CostPerGpuHour = "cost_per_gpu_hour", Type::Number, "Price of one GPU for one hour, in the project's currency (major units).";
        NvlinkGbps = "nvlink_gbps", Type::Number, "NVLink bandwidth every GPU of the node has (sum over its links), in GB/s; 0 without NVLink.";
        HasNvlink = "has_nvlink", Type::Bool, "Whether any GPU of the node has an NVLink link.";
        Mig = "mig", Type::Bool, "Whether any GPU of the node has MIG enabled.";
        Arch = "arch", Type::Category(Category::Arch), "CPU architecture (riscv64, x86_64, aarch64).";
        Capacity = "capacity", Type::Category(Category::Capacity), "How the capacity is bought (reserved, on_demand, spot).";
        Rack = "rack", Type::Category(Category::Rack), "The rack (interned).";
        NvlinkDomain = "nvlink_domain", Type::Category(Category::Domain), "The NVLink domain (interned).";
        FreeGpuMilli = "free_gpu_milli", Type::Number, "GPU capacity not in use, in thousandths of a GPU summed over the node's GPUs; dynamic: the host's caller supplies it (static capacity from the inventory).";
        FreeCpuMilli = "free_cpu_milli", Type::Number, "CPU not in use, in milli-CPU (thousandths of a hardware thread); dynamic like `free_gpu_milli`.";
        FreeMemoryMib = "free_memory_mib", Type::Number, "Host memory not in use, in MiB; dynamic like `free_gpu_milli`.";
        NvlinkUtilization = "nvlink_utilization", Type::Number, "NVLink utilisation of the node, 0-1, smoothed (the policy's `telemetry`); dynamic: the extender reads it from Prometheus and the simulator from a recorded series; 0 (idle) without telemetry.";
        DomainNvlinkUtilization = "nvlink_utilization" in "domain", Type::Number, "NVLink saturation of the node's NVLink domain, 0-1, smoothed; dynamic like `node.nvlink_utilization`; 0 without telemetry or outside a domain.";
    }
);

features!(
    /// A parameter of the job being placed (`job.*`), the same for every node of a batch.
    JobParam, "job", "job parameter", {
        Gpus = "gpus", Type::Number, "GPUs the job asks for on one node (count).";
        MemoryGib = "gpu_memory_gib", Type::Number, "GPU memory the job needs per GPU, in GiB.";
        CommGbps = "comm_gbps", Type::Number, "Communication bandwidth the job would like per GPU, in GB/s.";
        Comm = "comm", Type::Category(Category::Comm), "Communication sensitivity of the job's class (low, medium, high).";
        NvlinkRequired = "nvlink_required", Type::Bool, "Whether the job's class requires NVLink.";
        Arch = "arch", Type::Category(Category::Arch), "The architecture the job's image runs on.";
        Rack = "rack", Type::Category(Category::Rack), "The rack the job's other pods run in (interned).";
        NvlinkDomain = "nvlink_domain", Type::Category(Category::Domain), "The NVLink domain the job's other pods run in (interned).";
        CpuMilli = "cpu_milli", Type::Number, "CPU the job asks for on one node, in milli-CPU.";
        GpuMilli = "gpu_milli", Type::Number, "The share of each GPU the job asks for, in thousandths (1000 = whole GPUs; below 1000 one shared GPU).";
    }
);

/// The static figure of `node.nvlink_utilization` and `domain.nvlink_utilization`: what the
/// extender and the simulator fall back to when telemetry is missing or stale.
pub const STATIC_UTILIZATION: f64 = 0.0;

impl NodeFeature {
    /// Where the value comes from in the inventory, for `placid.meta` and the docs.
    pub fn inventory_source(self) -> &'static str {
        match self {
            NodeFeature::Gpus | NodeFeature::GpusFree => "inventory:gpu (count)",
            NodeFeature::GpuMemoryGib => "inventory:gpu memory (minimum)",
            NodeFeature::MemoryGib => "inventory:memory",
            NodeFeature::Cpus => "inventory:cpu harts",
            NodeFeature::CostPerGpuHour => "inventory:cost gpu-hour",
            NodeFeature::NvlinkGbps | NodeFeature::HasNvlink => "inventory:gpu nvlink bandwidth",
            NodeFeature::Mig => "inventory:gpu mig",
            NodeFeature::Arch => "inventory:node arch",
            NodeFeature::Capacity => "inventory:node capacity",
            NodeFeature::Rack => "inventory:node rack",
            NodeFeature::NvlinkDomain => "inventory:node nvlink-domain",
            NodeFeature::FreeGpuMilli => "inventory:gpu (count) x 1000",
            NodeFeature::FreeCpuMilli => "inventory:cpu harts x 1000",
            NodeFeature::FreeMemoryMib => "inventory:memory (MiB)",
            NodeFeature::NvlinkUtilization | NodeFeature::DomainNvlinkUtilization => "inventory:none (0: idle)",
        }
    }
}
