//! What the probe asks NVML, behind a trait: the real library ([`real::Nvml`], through
//! nvml-wrapper and, for what it does not wrap, the raw bindings) or recorded answers in tests.
//! An answer is a plain snapshot of every GPU, so a fake is just data.

pub mod real;
pub mod recorded;

/// Why NVML gave no answers at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// The reason (`libnvidia-ml.so.1: cannot open shared object file`, `driver not loaded`).
    pub reason: String,
}

/// The GPU library the probe reads.
pub trait GpuSource {
    /// Every GPU, or why the library is unavailable.
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable>;

    /// Cumulative NVLink traffic of one link in KiB `(transmitted, received)`, when the GPU
    /// counts it; read twice to sample throughput.
    fn link_traffic(&self, gpu: u32, link: u32) -> Option<(u64, u64)>;

    /// What changes from second to second on one GPU (what the exporter serves), or `None`
    /// when the GPU does not answer at all.
    fn telemetry(&self, gpu: u32) -> Option<GpuTelemetry>;
}

/// One GPU's live figures; a field is `None` when NVML did not answer it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuTelemetry {
    /// Percent of the last sample period a kernel ran (`nvmlUtilization_t.gpu`).
    pub utilization_percent: Option<u32>,
    /// Framebuffer memory allocated, in bytes.
    pub memory_used_bytes: Option<u64>,
    /// Error counters of each NVLink link, in link order.
    pub link_errors: Vec<LinkErrors>,
}

/// `nvmlDeviceGetNvLinkErrorCounter` of one link; cumulative since the driver loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkErrors {
    /// Link number.
    pub link: u32,
    /// Data-link transmit replays.
    pub replay: Option<u64>,
    /// Data-link transmit recoveries.
    pub recovery: Option<u64>,
    /// Flow-control digits received with a CRC error.
    pub crc_flit: Option<u64>,
    /// Data received with a CRC error.
    pub crc_data: Option<u64>,
}

/// One GPU as NVML reports it; a field is `None` when NVML did not answer it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvmlGpu {
    /// NVML index.
    pub index: u32,
    /// Product name (`NVIDIA H200`).
    pub name: Option<String>,
    /// `GPU-...` UUID.
    pub uuid: Option<String>,
    /// Memory in bytes.
    pub memory_bytes: Option<u64>,
    /// PCI bus id as NVML writes it (`00000000:17:00.0`).
    pub pci_bus_id: Option<String>,
    /// MIG mode and instances, `None` when the GPU has no MIG.
    pub mig: Option<MigState>,
    /// NVLink links, in link order.
    pub links: Vec<NvmlLink>,
    /// The GPU fabric (multi-node NVLink) state, when the driver has the call.
    pub fabric: Option<Fabric>,
}

/// MIG mode and the profile names of the instances that exist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigState {
    /// Whether MIG is on now.
    pub enabled: bool,
    /// Whether MIG will be on after the next GPU reset (differs while a change is pending).
    pub pending_enabled: bool,
    /// One profile name (`1g.18gb`) per instance.
    pub instances: Vec<String>,
}

/// One NVLink link of a GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvmlLink {
    /// Link number.
    pub link: u32,
    /// Whether the link is up.
    pub active: bool,
    /// `nvmlNvlinkVersion_t` (6 = NVLink 4.0, 7 = NVLink 5.0).
    pub version: Option<u32>,
    /// PCI bus id of the far end (a GPU or an NVSwitch).
    pub remote_pci_bus_id: Option<String>,
}

/// `nvmlGpuFabricInfo`: the multi-node NVLink domain a GPU belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fabric {
    /// Cluster UUID bytes.
    pub cluster_uuid: [u8; 16],
    /// Clique id within the cluster.
    pub clique_id: u32,
    /// `NVML_GPU_FABRIC_STATE_*` (3 = completed).
    pub state: u8,
    /// The registration result (0 = success), meaningful once completed.
    pub status: u32,
}

impl Fabric {
    /// Whether the GPU is attached to a fabric (go-nvlib `IsFabricAttached`): registration
    /// completed successfully with a non-zero cluster UUID.
    pub fn attached(&self) -> bool {
        const COMPLETED: u8 = 3;
        self.state == COMPLETED && self.status == 0 && self.cluster_uuid != [0; 16]
    }

    /// `<cluster uuid>.<clique id>`, the form GPU Feature Discovery (`nvidia.com/gpu.clique`)
    /// and topograph use, so domains can be matched with their labels.
    pub fn domain_id(&self) -> String {
        let hex: String = self.cluster_uuid.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("{}-{}-{}-{}-{}.{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32], self.clique_id)
    }
}
