//! The host CPU: architecture, logical CPUs, cores and sockets, and the per-architecture
//! details (riscv64 ISA and profiles, x86_64 model and feature level) as the inventory's
//! [`Cpu`]. Topology comes from sysfs `cpuN/topology`, which every architecture shares.

use std::collections::BTreeSet;

use placid_lang::cpulist::CpuSet;
use placid_lang::diag::Diagnostics;
use placid_lang::model::{Arch, Cpu};

use crate::cpuinfo::{self, Record, processors};
use crate::notes;
use crate::riscv::{self, RiscvCpu};
use crate::root::Root;

/// What the probe learned about the CPU.
#[derive(Clone, Debug)]
pub struct CpuReport {
    /// The architecture, when /proc/cpuinfo (or the live host) tells it.
    pub arch: Option<Arch>,
    /// The inventory's CPU (without NUMA, which [`crate::numa`] fills in).
    pub cpu: Cpu,
    /// The riscv64 details.
    pub riscv: Option<RiscvCpu>,
    /// The x86-64 micro-architecture level (`x86-64-v3`), from the `flags` line.
    pub x86_level: Option<&'static str>,
}

/// Reads /proc/cpuinfo and sysfs CPU topology.
pub fn read(root: &Root, diagnostics: &mut Diagnostics) -> CpuReport {
    let records = match root.read("/proc/cpuinfo") {
        Ok(text) => cpuinfo::parse(&text),
        Err(error) => {
            diagnostics.push(notes::unreadable(&error));
            Vec::new()
        }
    };
    let arch = arch_of(&records).or_else(|| if root.is_live() { Arch::parse(std::env::consts::ARCH) } else { None });
    let online = online_cpus(root, diagnostics);
    let listed = processors(&records).count();
    let harts = if listed > 0 { u32::try_from(listed) } else { u32::try_from(online.count()) }.unwrap_or(u32::MAX);
    let (cores, sockets) = topology(root, &online, &records);
    let mut cpu = Cpu { harts, cores, sockets, numa_nodes: 1, ..Cpu::default() };
    let mut report = CpuReport { arch, cpu: cpu.clone(), riscv: None, x86_level: None };
    match arch {
        Some(Arch::Riscv64) => {
            let riscv = riscv::read(&records, diagnostics);
            cpu.isa = riscv.isa.as_ref().map(ToString::to_string);
            cpu.model = riscv.uarch.clone();
            cpu.vector = Some(riscv.vector);
            cpu.profiles = riscv.profiles.clone();
            report.riscv = Some(riscv);
        }
        Some(Arch::X86_64) => {
            let first = processors(&records).next();
            cpu.model = first.and_then(|record| record.get("model name")).map(str::to_owned);
            report.x86_level = first.and_then(|record| record.get("flags")).map(x86_level);
        }
        Some(Arch::Aarch64) | None => {}
    }
    report.cpu = cpu;
    report
}

fn arch_of(records: &[Record]) -> Option<Arch> {
    let first = processors(records).next()?;
    if first.get("isa").is_some_and(|isa| isa.to_ascii_lowercase().starts_with("rv64")) {
        Some(Arch::Riscv64)
    } else if first.get("vendor_id").is_some() && first.get("flags").is_some_and(|flags| flags.split_whitespace().any(|flag| flag == "lm"))
    {
        Some(Arch::X86_64)
    } else if first.get("CPU architecture").is_some_and(|value| value == "8") {
        Some(Arch::Aarch64)
    } else {
        None
    }
}

fn online_cpus(root: &Root, diagnostics: &mut Diagnostics) -> CpuSet {
    match root.read_optional("/sys/devices/system/cpu/online") {
        Ok(Some(text)) => placid_lang::cpulist::parse(&text).unwrap_or_else(|reason| {
            diagnostics.push(notes::garbled("/sys/devices/system/cpu/online", &reason));
            CpuSet::default()
        }),
        Ok(None) => CpuSet::default(),
        Err(error) => {
            diagnostics.push(notes::unreadable(&error));
            CpuSet::default()
        }
    }
}

/// Cores and sockets over the online CPUs from sysfs: distinct `core_cpus_list` sets (the
/// hardware threads of one core; `core_id` alone repeats per cluster on SG2042) and distinct
/// packages. Old kernels write -1 ids and made-up sibling lists, so any -1 means unknown. On
/// x86_64, /proc/cpuinfo's `physical id`/`core id` stand in when sysfs lacks topology.
fn topology(root: &Root, online: &CpuSet, records: &[Record]) -> (Option<u32>, Option<u32>) {
    let read = |cpu: u32, name: &str| root.read(&format!("/sys/devices/system/cpu/cpu{cpu}/topology/{name}")).ok();
    let per_cpu: Option<Vec<(i64, CpuSet)>> = online
        .iter()
        .map(|cpu| {
            let package = read(cpu, "physical_package_id")?.trim().parse::<i64>().ok().filter(|id| *id >= 0)?;
            read(cpu, "core_id")?.trim().parse::<i64>().ok().filter(|id| *id >= 0)?;
            let siblings = read(cpu, "core_cpus_list").or_else(|| read(cpu, "thread_siblings_list"))?;
            let siblings = placid_lang::cpulist::parse(&siblings).ok().filter(|siblings| siblings.contains(cpu))?;
            Some((package, siblings))
        })
        .collect();
    if let Some(per_cpu) = per_cpu.filter(|per_cpu| !per_cpu.is_empty()) {
        let cores: BTreeSet<&CpuSet> = per_cpu.iter().map(|(_, siblings)| siblings).collect();
        let sockets: BTreeSet<i64> = per_cpu.iter().map(|(package, _)| *package).collect();
        return (u32::try_from(cores.len()).ok(), u32::try_from(sockets.len()).ok());
    }
    let pairs: Vec<(i64, i64)> = processors(records)
        .filter_map(|record| Some((record.get("physical id")?.parse().ok()?, record.get("core id")?.parse().ok()?)))
        .collect();
    if pairs.is_empty() {
        return (None, None);
    }
    let cores: BTreeSet<(i64, i64)> = pairs.iter().copied().collect();
    let sockets: BTreeSet<i64> = pairs.iter().map(|(package, _)| *package).collect();
    (u32::try_from(cores.len()).ok(), u32::try_from(sockets.len()).ok())
}

/// The x86-64 psABI micro-architecture level the `flags` line supports.
fn x86_level(flags: &str) -> &'static str {
    let flags: BTreeSet<&str> = flags.split_whitespace().collect();
    let has = |needed: &[&str]| needed.iter().all(|flag| flags.contains(flag));
    let v2 = has(&["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"]);
    let v3 = v2 && has(&["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"]);
    let v4 = v3 && has(&["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]);
    match (v2, v3, v4) {
        (_, _, true) => "x86-64-v4",
        (_, true, _) => "x86-64-v3",
        (true, _, _) => "x86-64-v2",
        _ => "x86-64",
    }
}
