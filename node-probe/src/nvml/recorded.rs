//! Recorded NVML answers: a [`GpuSource`] made of data, for the exporter's tests, its
//! benchmark and the Prometheus end-to-end test, which drive the counters while it serves.
//!
//! The answers sit behind a mutex so that a test can move the counters while a server thread
//! reads them; a poisoned lock (a test thread that panicked mid-update) still serves the last
//! answers rather than failing the scrape.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{Fabric, GpuSource, GpuTelemetry, LinkErrors, MigState, NvmlGpu, NvmlLink, Unavailable};

/// NVML answers recorded as data.
pub struct Recorded {
    answers: Mutex<Answers>,
}

struct Answers {
    gpus: Vec<NvmlGpu>,
    telemetry: BTreeMap<u32, GpuTelemetry>,
    /// Cumulative KiB `(transmitted, received)` per `(gpu, link)`.
    traffic: BTreeMap<(u32, u32), (u64, u64)>,
}

impl Recorded {
    /// These GPUs, with no telemetry and no traffic yet.
    pub fn new(gpus: Vec<NvmlGpu>) -> Recorded {
        Recorded { answers: Mutex::new(Answers { gpus, telemetry: BTreeMap::new(), traffic: BTreeMap::new() }) }
    }

    /// An HGX-style node: `gpus` H200s, each with `links` active NVLink 4.0 links to an
    /// NVSwitch, in one fabric clique, each 50 % busy with 40 GiB allocated and no errors.
    pub fn hgx(gpus: u32, links: u32) -> Recorded {
        let fabric = Fabric { cluster_uuid: [0x11; 16], clique_id: 1, state: 3, status: 0 };
        let answers = (0..gpus)
            .map(|index| NvmlGpu {
                index,
                name: Some("NVIDIA H200".to_owned()),
                uuid: Some(format!("GPU-00000000-0000-0000-0000-{index:012}")),
                memory_bytes: Some(141 << 30),
                pci_bus_id: Some(format!("00000000:{:02X}:00.0", 0x18 + index)),
                mig: Some(MigState { enabled: false, pending_enabled: false, instances: Vec::new() }),
                links: (0..links)
                    .map(|link| NvmlLink { link, active: true, version: Some(6), remote_pci_bus_id: Some("00000000:05:00.0".to_owned()) })
                    .collect(),
                fabric: Some(fabric),
            })
            .collect();
        let recorded = Recorded::new(answers);
        for gpu in 0..gpus {
            let link_errors =
                (0..links).map(|link| LinkErrors { link, replay: Some(0), recovery: Some(0), crc_flit: Some(0), crc_data: Some(0) });
            recorded.set_telemetry(
                gpu,
                GpuTelemetry { utilization_percent: Some(50), memory_used_bytes: Some(40 << 30), link_errors: link_errors.collect() },
            );
        }
        recorded
    }

    /// Replaces one GPU's telemetry.
    pub fn set_telemetry(&self, gpu: u32, telemetry: GpuTelemetry) {
        self.lock().telemetry.insert(gpu, telemetry);
    }

    /// Counts `tx` and `rx` more KiB on every active link of every GPU (the counters only
    /// grow, as NVML's do; they saturate instead of wrapping).
    pub fn add_traffic(&self, tx: u64, rx: u64) {
        let mut answers = self.lock();
        let links: Vec<(u32, u32)> =
            answers.gpus.iter().flat_map(|gpu| gpu.links.iter().filter(|link| link.active).map(|link| (gpu.index, link.link))).collect();
        for key in links {
            let counter = answers.traffic.entry(key).or_default();
            *counter = (counter.0.saturating_add(tx), counter.1.saturating_add(rx));
        }
    }

    fn lock(&self) -> MutexGuard<'_, Answers> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl GpuSource for Recorded {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        Ok(self.lock().gpus.clone())
    }

    fn link_traffic(&self, gpu: u32, link: u32) -> Option<(u64, u64)> {
        self.lock().traffic.get(&(gpu, link)).copied()
    }

    fn telemetry(&self, gpu: u32) -> Option<GpuTelemetry> {
        self.lock().telemetry.get(&gpu).cloned()
    }
}
