//! Test support shared by the probe's integration tests: locating `../shared` with the
//! workspace's one `shared_dir` (included by path: the probe may not depend on the
//! compiler-based test crate), and a recorded-answers [`GpuSource`].

#![allow(dead_code)]

#[path = "../../../tests/src/shared.rs"]
mod shared;

// Not every test file of the probe reads ../shared.
#[allow(unused_imports)]
pub use shared::shared_dir;

use placid_probe::nvml::{GpuSource, GpuTelemetry, NvmlGpu, Unavailable};

/// NVML answers recorded as data; `None` plays a host without the library.
pub struct RecordedNvml(pub Option<Vec<NvmlGpu>>);

impl GpuSource for RecordedNvml {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        self.0.clone().ok_or_else(|| Unavailable { reason: "libnvidia-ml.so.1: cannot open shared object file".to_owned() })
    }

    fn link_traffic(&self, gpu: u32, link: u32) -> Option<(u64, u64)> {
        let gpus = self.0.as_ref()?;
        gpus.iter().find(|candidate| candidate.index == gpu)?.links.iter().find(|candidate| candidate.link == link && candidate.active)?;
        Some((u64::from(gpu) * 1000 + u64::from(link), 0))
    }

    fn telemetry(&self, _gpu: u32) -> Option<GpuTelemetry> {
        None
    }
}
