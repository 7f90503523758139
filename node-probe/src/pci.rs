//! NVIDIA GPUs on the PCI bus, from sysfs (`/sys/bus/pci/devices/<bdf>/`): vendor 0x10de with
//! a display or 3D-controller class (NVSwitches, class 0x0680, are not GPUs). This needs no
//! driver, so it is what the probe reports when NVML is absent, together with the model and
//! UUID the driver publishes in `/proc/driver/nvidia/gpus/<bdf>/information` when loaded.

use placid_lang::cpulist::CpuSet;
use placid_lang::diag::Diagnostics;

use crate::notes;
use crate::root::Root;

const PCI_DEVICES: &str = "/sys/bus/pci/devices";
const NVIDIA_VENDOR: u32 = 0x10de;

/// One NVIDIA GPU seen on the PCI bus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PciGpu {
    /// Normalised bus id (`0000:17:00.0`).
    pub bus_id: String,
    /// PCI device id (`0x2335` for H200).
    pub device_id: u32,
    /// NUMA node of the slot, when the platform reports one (sysfs says -1 otherwise).
    pub numa: Option<u32>,
    /// CPUs local to the slot.
    pub local_cpus: CpuSet,
    /// Model name from the driver's /proc file, when loaded.
    pub driver_model: Option<String>,
    /// UUID from the driver's /proc file, when loaded.
    pub driver_uuid: Option<String>,
}

/// The NVIDIA GPUs, sorted by bus id (the order NVML and CUDA number them by default).
pub fn read(root: &Root, diagnostics: &mut Diagnostics) -> Vec<PciGpu> {
    let mut gpus = Vec::new();
    for entry in root.list(PCI_DEVICES) {
        let dir = format!("{PCI_DEVICES}/{entry}");
        let hex = |name: &str| {
            root.read(&format!("{dir}/{name}")).ok().and_then(|text| u32::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok())
        };
        if hex("vendor") != Some(NVIDIA_VENDOR) {
            continue;
        }
        let Some(class) = hex("class") else {
            diagnostics.push(notes::garbled(&format!("{dir}/class"), "no readable PCI class"));
            continue;
        };
        if !matches!(class >> 8, 0x0300 | 0x0302) {
            continue;
        }
        let numa = root
            .read(&format!("{dir}/numa_node"))
            .ok()
            .and_then(|text| text.trim().parse::<i64>().ok())
            .and_then(|node| u32::try_from(node).ok());
        let local_cpus =
            root.read(&format!("{dir}/local_cpulist")).ok().and_then(|text| placid_lang::cpulist::parse(&text).ok()).unwrap_or_default();
        let bus_id = normalise_bus_id(&entry);
        let information = root.read(&format!("/proc/driver/nvidia/gpus/{bus_id}/information")).unwrap_or_default();
        let field = |key: &str| {
            information
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.trim() == key)
                .map(|(_, value)| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        gpus.push(PciGpu {
            bus_id,
            device_id: hex("device").unwrap_or(0),
            numa,
            local_cpus,
            driver_model: field("Model"),
            driver_uuid: field("GPU UUID"),
        });
    }
    gpus.sort_by(|left, right| left.bus_id.cmp(&right.bus_id));
    gpus
}

/// NVML writes `00000000:3B:00.0`, sysfs `0000:3b:00.0`: both become the sysfs form.
pub fn normalise_bus_id(text: &str) -> String {
    let lower = text.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((domain, rest)) if domain.len() > 4 && domain.bytes().all(|byte| byte.is_ascii_hexdigit()) => {
            format!("{}:{rest}", &domain[domain.len() - 4..])
        }
        _ => lower,
    }
}

/// A model name for a GPU known only by its PCI device id (no driver loaded).
pub fn model_for_device(device_id: u32) -> Option<&'static str> {
    const KNOWN: &[(u32, &str)] = &[
        (0x20b0, "A100-SXM4-40GB"),
        (0x20b2, "A100-SXM4-80GB"),
        (0x20b5, "A100-80GB-PCIe"),
        (0x2330, "H100-80GB-HBM3"),
        (0x2331, "H100-PCIe"),
        (0x2335, "H200"),
        (0x2342, "GH200"),
        (0x2901, "B200"),
        (0x2941, "GB200"),
        (0x26b9, "L40S"),
    ];
    KNOWN.iter().find(|(id, _)| *id == device_id).map(|(_, model)| *model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_normalise_to_the_sysfs_form() {
        assert_eq!(normalise_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
        assert_eq!(normalise_bus_id("0000:3b:00.0"), "0000:3b:00.0");
        assert_eq!(normalise_bus_id("garbage"), "garbage");
    }
}
