//! The node's GPUs for the inventory: NVML's answers joined with PCI sysfs by bus id, NVLink
//! links resolved to peer GPUs, MIG instances counted by profile, and the NVLink domain taken
//! from the GPU fabric. Without NVML, the PCI view alone, with the missing fields named.
//!
//! Bandwidth convention (matches the inventory's `bandwidth=`): both directions together,
//! per link 40 GB/s for NVLink 1.0, 50 GB/s for 2.0-4.0 and 100 GB/s for 5.0. Links that end at
//! an NVSwitch reach every other switched GPU; each such peer is listed with the GPU's switch
//! links and an equal share of their bandwidth, so a GPU's links still add up to what it has.

use std::collections::{BTreeMap, BTreeSet};

use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::model::{Gpu, Mig, MigInstances, NvLink};
use placid_lang::name::Name;
use placid_lang::span::Span;
use placid_lang::units::{Bandwidth, Bytes};

use crate::identity::label_value;
use crate::notes;
use crate::nvml::{GpuSource, NvmlGpu, NvmlLink};
use crate::pci::{PciGpu, model_for_device, normalise_bus_id};

/// The GPUs and the NVLink domain the fabric reports.
#[derive(Clone, Debug, Default)]
pub struct GpuReport {
    /// GPUs sorted by index.
    pub gpus: Vec<Gpu>,
    /// `<cluster uuid>.<clique id>` when every GPU is attached to the same fabric clique.
    pub fabric_domain: Option<Name>,
    /// The NVML answers, for sampling.
    pub nvml: Vec<NvmlGpu>,
}

/// Joins NVML's answers with the PCI view.
pub fn read(source: &dyn GpuSource, pci: &[PciGpu], diagnostics: &mut Diagnostics) -> GpuReport {
    match source.gpus() {
        Ok(nvml) if !nvml.is_empty() || pci.is_empty() => from_nvml(nvml, pci, diagnostics),
        Ok(_) => {
            diagnostics.push(notes::fields_missing(
                "GPUs",
                &["model", "memory", "MIG mode", "NVLink links"],
                "NVML lists no GPU although PCI shows some",
            ));
            GpuReport { gpus: from_pci(pci), ..GpuReport::default() }
        }
        Err(unavailable) => {
            if !pci.is_empty() {
                diagnostics.push(notes::fields_missing(
                    &format!("{} GPU(s) seen on PCI", pci.len()),
                    &["memory", "MIG mode", "NVLink links", "NVLink domain"],
                    &format!("NVML unavailable: {}", unavailable.reason),
                ));
            }
            GpuReport { gpus: from_pci(pci), ..GpuReport::default() }
        }
    }
}

fn from_pci(pci: &[PciGpu]) -> Vec<Gpu> {
    pci.iter()
        .enumerate()
        .map(|(index, gpu)| Gpu {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            span: Span::DETACHED,
            model: model_name(gpu.driver_model.as_deref(), Some(gpu.device_id)),
            memory: None,
            uuid: gpu.driver_uuid.clone(),
            pci_bus_id: Some(gpu.bus_id.clone()),
            numa: gpu.numa,
            mig: Mig::Disabled,
            links: Vec::new(),
        })
        .collect()
}

fn from_nvml(nvml: Vec<NvmlGpu>, pci: &[PciGpu], diagnostics: &mut Diagnostics) -> GpuReport {
    let bus_of = |gpu: &NvmlGpu| gpu.pci_bus_id.as_deref().map(normalise_bus_id);
    let index_by_bus: BTreeMap<String, u32> = nvml.iter().filter_map(|gpu| Some((bus_of(gpu)?, gpu.index))).collect();
    let switched: BTreeSet<u32> = nvml
        .iter()
        .filter(|gpu| {
            active(&gpu.links)
                .any(|link| link.remote_pci_bus_id.as_deref().map(normalise_bus_id).is_some_and(|bus| !index_by_bus.contains_key(&bus)))
        })
        .map(|gpu| gpu.index)
        .collect();
    let mut gpus = Vec::new();
    for gpu in &nvml {
        let sysfs = bus_of(gpu).and_then(|bus| pci.iter().find(|candidate| candidate.bus_id == bus));
        let mut missing = Vec::new();
        if gpu.name.is_none() {
            missing.push("model");
        }
        if gpu.memory_bytes.is_none() {
            missing.push("memory");
        }
        if !missing.is_empty() {
            diagnostics.push(notes::fields_missing(&format!("GPU {}", gpu.index), &missing, "NVML did not answer"));
        }
        gpus.push(Gpu {
            index: gpu.index,
            span: Span::DETACHED,
            model: model_name(gpu.name.as_deref(), sysfs.map(|pci| pci.device_id)),
            memory: gpu.memory_bytes.map(Bytes),
            uuid: gpu.uuid.clone(),
            pci_bus_id: bus_of(gpu),
            numa: sysfs.and_then(|pci| pci.numa),
            mig: mig(gpu, diagnostics),
            links: peer_links(gpu, &index_by_bus, &switched),
        });
    }
    gpus.sort_by_key(|gpu| gpu.index);
    let fabric_domain = fabric_domain(&nvml, diagnostics);
    GpuReport { gpus, fabric_domain, nvml }
}

fn active(links: &[NvmlLink]) -> impl Iterator<Item = &NvmlLink> {
    links.iter().filter(|link| link.active)
}

/// Both directions of one link, in bits per second, by `nvmlNvlinkVersion_t`.
pub(crate) fn link_bandwidth(version: Option<u32>) -> u64 {
    let gigabytes_per_second = match version {
        Some(1) => 40,
        Some(7..) => 100,
        _ => 50,
    };
    gigabytes_per_second * 8_000_000_000
}

fn peer_links(gpu: &NvmlGpu, index_by_bus: &BTreeMap<String, u32>, switched: &BTreeSet<u32>) -> Vec<NvLink> {
    let mut direct: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    let (mut switch_links, mut switch_bits) = (0u32, 0u64);
    for link in active(&gpu.links) {
        let Some(remote) = link.remote_pci_bus_id.as_deref().map(normalise_bus_id) else {
            continue;
        };
        let bits = link_bandwidth(link.version);
        match index_by_bus.get(&remote) {
            Some(peer) if *peer != gpu.index => {
                let entry = direct.entry(*peer).or_default();
                entry.0 += 1;
                entry.1 += bits;
            }
            Some(_) => {}
            None => {
                switch_links += 1;
                switch_bits += bits;
            }
        }
    }
    let switch_peers: Vec<u32> = switched.iter().copied().filter(|peer| *peer != gpu.index).collect();
    if switch_links > 0 && !switch_peers.is_empty() {
        let share = switch_bits / switch_peers.len() as u64;
        for peer in switch_peers {
            let entry = direct.entry(peer).or_default();
            entry.0 += switch_links;
            entry.1 += share;
        }
    }
    direct
        .into_iter()
        .map(|(peer, (links, bits))| NvLink { peer, links, bandwidth: Bandwidth { bits_per_second: bits }, span: Span::DETACHED })
        .collect()
}

fn mig(gpu: &NvmlGpu, diagnostics: &mut Diagnostics) -> Mig {
    let Some(state) = &gpu.mig else {
        return Mig::Disabled;
    };
    if state.enabled != state.pending_enabled {
        diagnostics.push(notes::garbled(
            &format!("GPU {}", gpu.index),
            &format!("MIG mode change pending (now {}, after reset {})", on_off(state.enabled), on_off(state.pending_enabled)),
        ));
    }
    if !state.enabled {
        return Mig::Disabled;
    }
    let mut counts: BTreeMap<Name, u32> = BTreeMap::new();
    for profile in &state.instances {
        if let Ok(name) = Name::new(profile) {
            *counts.entry(name).or_default() += 1;
        }
    }
    Mig::Enabled { instances: counts.into_iter().map(|(profile, count)| MigInstances { profile, count }).collect() }
}

fn on_off(enabled: bool) -> &'static str {
    if enabled { "enabled" } else { "disabled" }
}

fn fabric_domain(nvml: &[NvmlGpu], diagnostics: &mut Diagnostics) -> Option<Name> {
    let ids: BTreeSet<String> =
        nvml.iter().filter_map(|gpu| gpu.fabric.filter(|fabric| fabric.attached())).map(|fabric| fabric.domain_id()).collect();
    match ids.len() {
        0 => None,
        1 => ids.first().and_then(|id| Name::new(id).ok()),
        _ => {
            diagnostics.push(
                Diagnostic::warning(
                    placid_lang::diag::Code::ProbeFieldMissing,
                    Span::DETACHED,
                    format!(
                        "the GPUs of this node report {} different NVLink fabric cliques: {}",
                        ids.len(),
                        ids.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                )
                .help("a node's GPUs belong to one NVLink partition; check the fabric manager, or set `nvlink-domain` in the site file"),
            );
            None
        }
    }
}

/// An inventory model name: NVML's product name without the `NVIDIA ` prefix, spaces as `-`
/// (GPU Feature Discovery's product label), else a known PCI device id, else the raw id.
fn model_name(product: Option<&str>, device_id: Option<u32>) -> Name {
    let from_product = product.map(|product| product.trim().trim_start_matches("NVIDIA").trim()).and_then(label_value);
    let from_device = device_id.and_then(model_for_device).map(str::to_owned);
    let raw = format!("nvidia-{:04x}", device_id.unwrap_or(0));
    [from_product, from_device, Some(raw)]
        .into_iter()
        .flatten()
        .find_map(|text| Name::new(&text).ok())
        .unwrap_or_else(|| Name::new("nvidia").unwrap_or_else(|_| unreachable!("a valid literal name")))
}
