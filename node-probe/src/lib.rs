//! placid-probe: one node's inventory from `/proc`, `/sys` and NVML, written in the inventory
//! format the compiler reads (through `placid_lang::print`, the one printer).
//!
//! Invariants: the probe never fails on what it reads. Missing, unreadable or garbled files
//! and an absent GPU library become warnings and fields left out; the only hard stop is a
//! node without a usable name or architecture. Everything below `--root` is read through
//! [`root::Root`], and NVML through the [`nvml::GpuSource`] trait, so tests replay captures.

pub mod cpu;
pub mod cpuinfo;
pub mod exporter;
pub mod gpus;
pub mod identity;
pub mod notes;
pub mod numa;
pub mod nvml;
pub mod pci;
pub mod riscv;
pub mod root;
pub mod site;

use std::time::Duration;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::lower::{InventoryEntry, assemble_inventory};
use placid_lang::model::{CapacityKind, Model, Node};
use placid_lang::name::{LabelKey, Name};
use placid_lang::span::{Span, Spanned};

use crate::cpu::CpuReport;
use crate::gpus::GpuReport;
use crate::nvml::GpuSource;
use crate::root::Root;
use crate::site::Site;

/// What one probe run found.
pub struct Probe {
    /// The node, unless it had no usable name or architecture.
    pub entry: Option<InventoryEntry>,
    /// CPU details beyond the inventory (per-hart ISAs, ids).
    pub cpu: CpuReport,
    /// GPU details beyond the inventory.
    pub gpus: GpuReport,
    /// Everything the probe could not read or decide.
    pub diagnostics: Diagnostics,
}

impl Probe {
    /// The inventory model of this one node (empty when there is no node).
    pub fn model(&self) -> Model {
        assemble_inventory(self.entry.iter().cloned().collect()).0
    }
}

/// Probes the node whose `/proc` and `/sys` lie below `root`, asking `gpu_source` about GPUs;
/// `site` supplies what cannot be probed (and may override the name).
pub fn probe(root: &Root, site: Site, gpu_source: &dyn GpuSource) -> Probe {
    let mut diagnostics = Diagnostics::new();
    let mut cpu = cpu::read(root, &mut diagnostics);
    let numa = numa::read(root, &mut diagnostics);
    if !numa.is_empty() {
        cpu.cpu.numa_nodes = u32::try_from(numa.len()).unwrap_or(u32::MAX);
        cpu.cpu.numa = numa;
    }
    let memory = numa::total_memory(root, &mut diagnostics);
    let pci = pci::read(root, &mut diagnostics);
    let gpus = gpus::read(gpu_source, &pci, &mut diagnostics);
    let mut labels = identity::board_labels(root, &mut diagnostics);
    if let (Some(level), Ok(key)) = (cpu.x86_level, LabelKey::new("x86-64-level")) {
        labels.insert(key, level.to_owned());
    }
    labels.extend(site.labels);

    let name = site.name.clone().or_else(|| identity::hostname(root).and_then(|host| host_name(&host, &mut diagnostics)));
    if name.is_none() {
        diagnostics.push(
            Diagnostic::error(Code::ProbeUnreadable, Span::DETACHED, "no usable host name (/proc/sys/kernel/hostname)")
                .help("pass --name, or set `name` in the site file"),
        );
    }
    if cpu.arch.is_none() {
        diagnostics.push(
            Diagnostic::error(Code::ProbeUnreadable, Span::DETACHED, "cannot tell the CPU architecture from /proc/cpuinfo")
                .help("check the captured tree has proc/cpuinfo"),
        );
    }
    let domain = site.nvlink_domain.or_else(|| gpus.fabric_domain.clone());
    let entry = match (name, cpu.arch) {
        (Some(name), Some(arch)) => Some(InventoryEntry {
            node: Node {
                name,
                span: Span::DETACHED,
                arch,
                rack: None,
                chassis: site.chassis,
                domain: None,
                capacity: site.capacity.unwrap_or(CapacityKind::OnDemand),
                cost_per_gpu_hour: site.cost_per_gpu_hour,
                cost_per_egress_tb: site.cost_per_egress_tb,
                cpu: cpu.cpu.clone(),
                memory,
                gpus: gpus.gpus.clone(),
                labels,
            },
            rack: site.rack.map(|rack| Spanned::new(rack, Span::DETACHED)),
            domain: domain.map(|domain| Spanned::new(domain, Span::DETACHED)),
        }),
        _ => None,
    };
    Probe { entry, cpu, gpus, diagnostics }
}

/// A host name as an inventory name; FQDNs are fine, other characters are not.
fn host_name(host: &str, diagnostics: &mut Diagnostics) -> Option<Name> {
    match Name::new(host) {
        Ok(name) => Some(name),
        Err(reason) => {
            diagnostics.push(
                Diagnostic::error(Code::ProbeUnreadable, Span::DETACHED, format!("the host name is not an inventory name: {reason}"))
                    .help("pass --name with the name the inventory uses"),
            );
            None
        }
    }
}

/// Measured NVLink throughput of one link over a sampling window.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSample {
    /// GPU index.
    pub gpu: u32,
    /// Link number.
    pub link: u32,
    /// Transmitted bytes per second.
    pub tx_bytes_per_second: f64,
    /// Received bytes per second.
    pub rx_bytes_per_second: f64,
}

/// Samples every active link's traffic counters `window` apart (`--sample 5s`). Links whose
/// GPU does not count traffic (Blackwell moved the counters) are left out.
pub fn sample_nvlink(source: &dyn GpuSource, gpus: &GpuReport, window: Duration) -> Vec<LinkSample> {
    let links: Vec<(u32, u32)> =
        gpus.nvml.iter().flat_map(|gpu| gpu.links.iter().filter(|link| link.active).map(move |link| (gpu.index, link.link))).collect();
    let before: Vec<Option<(u64, u64)>> = links.iter().map(|(gpu, link)| source.link_traffic(*gpu, *link)).collect();
    std::thread::sleep(window);
    let seconds = window.as_secs_f64().max(f64::EPSILON);
    links
        .iter()
        .zip(before)
        .filter_map(|((gpu, link), before)| {
            let (tx0, rx0) = before?;
            let (tx1, rx1) = source.link_traffic(*gpu, *link)?;
            let rate = |start: u64, end: u64| end.saturating_sub(start) as f64 * 1024.0 / seconds;
            Some(LinkSample { gpu: *gpu, link: *link, tx_bytes_per_second: rate(tx0, tx1), rx_bytes_per_second: rate(rx0, rx1) })
        })
        .collect()
}
