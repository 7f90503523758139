//! Test support shared by the probe's integration tests: locating `../shared` the way
//! `placid_tests::shared_dir` does (the probe may not depend on the compiler-based test crate),
//! and a recorded-answers [`GpuSource`].

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use placid_probe::nvml::{GpuSource, NvmlGpu, Unavailable};

/// The shared data directory (`../shared` beside the workspace, or `$PLACID_SHARED`).
/// Under `CI=true` a missing directory fails the test; elsewhere it prints NOT RUN.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = std::env::var_os("PLACID_SHARED").map(PathBuf::from).unwrap_or_else(|| workspace.join("..").join("shared"));
    if dir.join("DESIGN.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: the shared data directory {} is missing; CI must provide ../shared", dir.display());
    }
    eprintln!("{test}: NOT RUN: the shared data directory {} is missing", dir.display());
    None
}

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
}
