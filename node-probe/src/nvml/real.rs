//! The real NVML: nvml-wrapper for what it wraps, and the raw bindings of nvml-wrapper-sys for
//! what it does not (GPU fabric info, MIG device attributes, per-link field values). Raw calls
//! go through our own handle of `libnvidia-ml.so.1` and check that the symbol loaded first:
//! the bindings' convenience methods `expect()` the symbol and would panic on older drivers.

use std::os::raw::{c_int, c_uint};

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::nv_link::ErrorCounter;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper_sys::bindings::{NvmlLib, nvmlDevice_t, nvmlDeviceAttributes_t, nvmlFieldValue_t, nvmlGpuFabricInfoV_t};

use super::{Fabric, GpuSource, GpuTelemetry, LinkErrors, MigState, NvmlGpu, NvmlLink, Unavailable};

/// The library name NVML ships under on Linux.
const LIBRARY: &str = "libnvidia-ml.so.1";
/// `NVML_NVLINK_MAX_LINKS` of the NVML 12/13 headers.
const MAX_LINKS: u32 = 18;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX` / `_RX` (KiB, cumulative; scopeId = link).
const FIELD_THROUGHPUT_TX: c_uint = 138;
const FIELD_THROUGHPUT_RX: c_uint = 139;

/// NVML, loaded.
pub struct Nvml {
    wrapper: nvml_wrapper::Nvml,
    raw: Option<NvmlLib>,
}

impl Nvml {
    /// Loads and initialises NVML, or says why it cannot (no library, no driver).
    pub fn open() -> Result<Nvml, Unavailable> {
        let wrapper = nvml_wrapper::Nvml::init().map_err(|error| Unavailable { reason: error.to_string() })?;
        // SAFETY: loading the library NVML itself was just loaded from runs only its
        // initialisers again (a reference count); its symbols are the NVML C API.
        let raw = unsafe { NvmlLib::new(LIBRARY) }.ok();
        Ok(Nvml { wrapper, raw })
    }

    fn gpu(&self, index: u32, device: &Device<'_>) -> NvmlGpu {
        let mig = device.mig_mode().ok().map(|mode| MigState {
            enabled: mode.current == 1,
            pending_enabled: mode.pending == 1,
            instances: if mode.current == 1 { self.mig_profiles(device) } else { Vec::new() },
        });
        NvmlGpu {
            index,
            name: device.name().ok(),
            uuid: device.uuid().ok(),
            memory_bytes: device.memory_info().ok().map(|memory| memory.total),
            pci_bus_id: device.pci_info().ok().map(|pci| pci.bus_id),
            mig,
            links: links(device),
            fabric: self.fabric(device),
        }
    }

    fn fabric(&self, device: &Device<'_>) -> Option<Fabric> {
        let symbol = self.raw.as_ref()?.nvmlDeviceGetGpuFabricInfoV.as_ref().ok()?;
        // SAFETY: the struct is plain data; `version` tells NVML which layout we pass
        // (NVML_STRUCT_VERSION(GpuFabricInfo, 2) = sizeof | 2 << 24).
        let mut info: nvmlGpuFabricInfoV_t = unsafe { std::mem::zeroed() };
        info.version = std::mem::size_of::<nvmlGpuFabricInfoV_t>() as c_uint | (2 << 24);
        // SAFETY: a valid device handle of this NVML and a pointer to a live struct.
        let result = unsafe { symbol(device.handle(), &mut info) };
        (result == 0).then_some(Fabric { cluster_uuid: info.clusterUuid, clique_id: info.cliqueId, state: info.state, status: info.status })
    }

    /// Profile names (`1g.18gb`) of the MIG devices, from their slice count and memory, the
    /// way GPU Feature Discovery names them.
    fn mig_profiles(&self, device: &Device<'_>) -> Vec<String> {
        let Some(raw) = self.raw.as_ref() else {
            return Vec::new();
        };
        let (Ok(count_of), Ok(handle_of), Ok(attributes_of)) = (
            raw.nvmlDeviceGetMaxMigDeviceCount.as_ref(),
            raw.nvmlDeviceGetMigDeviceHandleByIndex.as_ref(),
            raw.nvmlDeviceGetAttributes_v2.as_ref(),
        ) else {
            return Vec::new();
        };
        let mut count: c_uint = 0;
        // SAFETY: valid handle, pointer to a local.
        if unsafe { count_of(device.handle(), &mut count) } != 0 {
            return Vec::new();
        }
        let mut profiles = Vec::new();
        for index in 0..count.min(64) {
            let mut mig: nvmlDevice_t = std::ptr::null_mut();
            // SAFETY: valid handle, index below the maximum, pointer to a local. Empty slots
            // answer NOT_FOUND and are skipped.
            if unsafe { handle_of(device.handle(), index, &mut mig) } != 0 || mig.is_null() {
                continue;
            }
            // SAFETY: plain-data struct filled by NVML for a MIG handle it just returned.
            let mut attributes: nvmlDeviceAttributes_t = unsafe { std::mem::zeroed() };
            if unsafe { attributes_of(mig, &mut attributes) } == 0 {
                let gigabytes = (attributes.memorySizeMB + 512) / 1024;
                profiles.push(format!("{}g.{gigabytes}gb", attributes.gpuInstanceSliceCount));
            }
        }
        profiles
    }
}

fn links(device: &Device<'_>) -> Vec<NvmlLink> {
    let mut links = Vec::new();
    for link in 0..MAX_LINKS {
        let wrapper = device.link_wrapper_for(link);
        let active = match wrapper.is_active() {
            Ok(active) => active,
            // Past the last link of this GPU, or a GPU without NVLink.
            Err(NvmlError::InvalidArg | NvmlError::NotSupported) => break,
            Err(_) => false,
        };
        links.push(NvmlLink {
            link,
            active,
            version: wrapper.version().ok(),
            remote_pci_bus_id: if active { wrapper.remote_pci_info().ok().map(|pci| pci.bus_id) } else { None },
        });
    }
    links
}

impl GpuSource for Nvml {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        let count = self.wrapper.device_count().map_err(|error| Unavailable { reason: error.to_string() })?;
        let mut gpus = Vec::new();
        for index in 0..count {
            if let Ok(device) = self.wrapper.device_by_index(index) {
                gpus.push(self.gpu(index, &device));
            }
        }
        Ok(gpus)
    }

    fn link_traffic(&self, gpu: u32, link: u32) -> Option<(u64, u64)> {
        // nvml-wrapper's `field_values_for` always sends scopeId 0; per-link counters need
        // the link as scope, so this is a raw call.
        let symbol = self.raw.as_ref()?.nvmlDeviceGetFieldValues.as_ref().ok()?;
        let device = self.wrapper.device_by_index(gpu).ok()?;
        // SAFETY: plain-data structs; NVML fills `value` and `nvmlReturn` for each request.
        let mut values: [nvmlFieldValue_t; 2] = unsafe { std::mem::zeroed() };
        values[0].fieldId = FIELD_THROUGHPUT_TX;
        values[1].fieldId = FIELD_THROUGHPUT_RX;
        values[0].scopeId = link;
        values[1].scopeId = link;
        // SAFETY: valid handle; the count matches the array.
        if unsafe { symbol(device.handle(), values.len() as c_int, values.as_mut_ptr()) } != 0 {
            return None;
        }
        if values.iter().any(|value| value.nvmlReturn != 0) {
            return None;
        }
        // SAFETY: throughput fields are NVML_VALUE_TYPE_UNSIGNED_LONG_LONG.
        Some(unsafe { (values[0].value.ullVal, values[1].value.ullVal) })
    }

    fn telemetry(&self, gpu: u32) -> Option<GpuTelemetry> {
        let device = self.wrapper.device_by_index(gpu).ok()?;
        let mut link_errors = Vec::new();
        for link in 0..MAX_LINKS {
            let wrapper = device.link_wrapper_for(link);
            match wrapper.is_active() {
                Err(NvmlError::InvalidArg | NvmlError::NotSupported) => break,
                Ok(false) | Err(_) => continue,
                Ok(true) => {}
            }
            let count = |counter| wrapper.error_counter(counter).ok();
            link_errors.push(LinkErrors {
                link,
                replay: count(ErrorCounter::DlReplay),
                recovery: count(ErrorCounter::DlRecovery),
                crc_flit: count(ErrorCounter::DlCrcFlit),
                crc_data: count(ErrorCounter::DlCrcData),
            });
        }
        Some(GpuTelemetry {
            utilization_percent: device.utilization_rates().ok().map(|rates| rates.gpu),
            memory_used_bytes: device.memory_info().ok().map(|memory| memory.used),
            link_errors,
        })
    }
}
