//! NUMA nodes from `/sys/devices/system/node/nodeN/`: the CPU list (`cpulist`, or the older
//! `cpumap` hex mask), and `meminfo`'s `MemTotal`. Also the host's total memory from
//! `/proc/meminfo`. Memory-only nodes (GPU HBM on coherent NVLink-C2C hosts) have no CPUs.

use placid_lang::cpulist::CpuSet;
use placid_lang::diag::Diagnostics;
use placid_lang::model::NumaNode;
use placid_lang::units::Bytes;

use crate::notes;
use crate::root::Root;

const NODE_DIR: &str = "/sys/devices/system/node";

/// The NUMA nodes, sorted by id; empty when the kernel has no NUMA sysfs.
pub fn read(root: &Root, diagnostics: &mut Diagnostics) -> Vec<NumaNode> {
    let mut nodes = Vec::new();
    for entry in root.list(NODE_DIR) {
        let Some(id) = entry.strip_prefix("node").and_then(|id| id.parse::<u32>().ok()) else {
            continue;
        };
        let dir = format!("{NODE_DIR}/{entry}");
        let cpus = match root.read_optional(&format!("{dir}/cpulist")) {
            Ok(Some(text)) => placid_lang::cpulist::parse(&text).map_err(|reason| (format!("{dir}/cpulist"), reason)),
            Ok(None) => match root.read_optional(&format!("{dir}/cpumap")) {
                Ok(Some(text)) => cpumap(&text).map_err(|reason| (format!("{dir}/cpumap"), reason)),
                Ok(None) => Ok(CpuSet::default()),
                Err(error) => Err((error.path, error.reason)),
            },
            Err(error) => Err((error.path, error.reason)),
        };
        let cpus = cpus.unwrap_or_else(|(path, reason)| {
            diagnostics.push(notes::garbled(&path, &reason));
            CpuSet::default()
        });
        let memory = match root.read_optional(&format!("{dir}/meminfo")) {
            Ok(Some(text)) => mem_total(&text),
            Ok(None) => None,
            Err(error) => {
                diagnostics.push(notes::unreadable(&error));
                None
            }
        };
        nodes.push(NumaNode { id, cpus, memory });
    }
    nodes.sort_by_key(|node| node.id);
    nodes
}

/// The host's memory (`MemTotal` of /proc/meminfo).
pub fn total_memory(root: &Root, diagnostics: &mut Diagnostics) -> Option<Bytes> {
    match root.read("/proc/meminfo") {
        Ok(text) => {
            let total = mem_total(&text);
            if total.is_none() {
                diagnostics.push(notes::garbled("/proc/meminfo", "no readable `MemTotal` line"));
            }
            total
        }
        Err(error) => {
            if !error.not_found || root.is_live() {
                diagnostics.push(notes::unreadable(&error));
            }
            None
        }
    }
}

/// `MemTotal:  16318412 kB` (and the per-node `Node 0 MemTotal: ... kB`) in bytes.
fn mem_total(text: &str) -> Option<Bytes> {
    let line = text.lines().find(|line| line.split(':').next().is_some_and(|key| key.trim_end().ends_with("MemTotal")))?;
    let mut words = line.split(':').nth(1)?.split_whitespace();
    let kibibytes: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kibibytes.checked_mul(1024).map(Bytes),
        Some(_) => None,
    }
}

/// A `cpumap` mask: comma-separated 32-bit hex groups, most significant first.
fn cpumap(text: &str) -> Result<CpuSet, String> {
    let groups: Vec<&str> = text.trim().split(',').collect();
    if groups.len() > 2048 {
        return Err("the CPU mask is implausibly long".to_owned());
    }
    let mut cpus = Vec::new();
    for (position, group) in groups.iter().rev().enumerate() {
        let bits = u32::from_str_radix(group.trim(), 16).map_err(|_| format!("`{}` is not a hex CPU mask group", group.escape_debug()))?;
        for bit in 0..32u32 {
            if bits & (1 << bit) != 0 {
                cpus.push(u32::try_from(position).unwrap_or(u32::MAX).saturating_mul(32).saturating_add(bit));
            }
        }
    }
    Ok(cpus.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumap_groups_are_most_significant_first() {
        assert_eq!(cpumap("00000000,00ff00ff\n"), Ok((0..8).chain(16..24).collect()));
        assert_eq!(cpumap("ff00ff00,00000000"), Ok((40..48).chain(56..64).collect()));
        assert!(cpumap("zz").is_err());
    }

    #[test]
    fn mem_total_reads_host_and_node_files() {
        assert_eq!(mem_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n"), Some(Bytes(16318412 * 1024)));
        assert_eq!(mem_total("Node 0 MemTotal:       129839104 kB\n"), Some(Bytes(129839104 * 1024)));
        assert_eq!(mem_total("MemTotal: lots"), None);
    }
}
