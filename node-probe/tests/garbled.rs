//! The probe never panics on truncated or garbled /proc and /sys files: whatever it reads,
//! it either writes a node that reads back as a valid inventory, or says why it cannot, with
//! diagnostics.

mod common;

use std::path::Path;

use placid_lang::lower::{InventoryFormat, read_inventory_file};
use placid_lang::span::FileId;
use placid_probe::root::Root;
use placid_probe::site::Site;
use placid_probe::{notes, probe};
use proptest::prelude::*;

use common::RecordedNvml;

const FILES: &[&str] = &[
    "proc/cpuinfo",
    "proc/meminfo",
    "proc/sys/kernel/hostname",
    "sys/devices/system/cpu/online",
    "sys/devices/system/cpu/cpu0/topology/physical_package_id",
    "sys/devices/system/cpu/cpu0/topology/core_id",
    "sys/devices/system/cpu/cpu0/topology/core_cpus_list",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/system/node/node1/cpumap",
    "sys/devices/system/node/node0/meminfo",
    "sys/firmware/devicetree/base/model",
    "sys/firmware/devicetree/base/compatible",
    "sys/class/dmi/id/product_name",
    "sys/bus/pci/devices/0000:17:00.0/vendor",
    "sys/bus/pci/devices/0000:17:00.0/class",
    "sys/bus/pci/devices/0000:17:00.0/device",
    "sys/bus/pci/devices/0000:17:00.0/numa_node",
    "sys/bus/pci/devices/0000:17:00.0/local_cpulist",
    "proc/driver/nvidia/gpus/0000:17:00.0/information",
];

/// Plausible content for each file, which the strategy then truncates or garbles.
const SEEDS: &[&str] = &[
    "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdcv_zicsr_zba\nmmu\t\t: sv39\nmvendorid\t: 0x5b7\nmarchid\t\t: 0x0\nhart isa\t: rv64imafdcv_zicsr_zba\n\nprocessor\t: 1\nisa\t\t: rv64gc\n",
    "MemTotal:       16318412 kB\n",
    "node-a\n",
    "0-1\n",
    "0\n",
    "0\n",
    "0\n",
    "0-1\n",
    "00000000,00000003\n",
    "Node 0 MemTotal:       129839104 kB\n",
    "SiFive HiFive Unmatched A00\0",
    "sifive,hifive-unmatched-a00\0sifive,fu740\0",
    "ProLiant\n",
    "0x10de\n",
    "0x030200\n",
    "0x2335\n",
    "-1\n",
    "0-15\n",
    "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-1\n",
];

#[derive(Clone, Debug)]
enum Damage {
    Keep,
    Missing,
    Truncate(usize),
    Replace(Vec<u8>),
    Splice(usize, String),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        2 => Just(Damage::Keep),
        1 => Just(Damage::Missing),
        2 => (0usize..200).prop_map(Damage::Truncate),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Damage::Replace),
        2 => (0usize..200, "[\\PC:,\\-\n\t\0 0-9a-fx]{0,24}").prop_map(|(at, text)| Damage::Splice(at, text)),
    ]
}

fn write_tree(root: &Path, damages: &[Damage]) {
    for ((path, seed), damage) in FILES.iter().zip(SEEDS).zip(damages) {
        let bytes: Vec<u8> = match damage {
            Damage::Keep => seed.as_bytes().to_vec(),
            Damage::Missing => continue,
            Damage::Truncate(at) => seed.as_bytes()[..(*at).min(seed.len())].to_vec(),
            Damage::Replace(bytes) => bytes.clone(),
            Damage::Splice(at, text) => {
                let mut bytes = seed.as_bytes().to_vec();
                let at = (*at).min(bytes.len());
                bytes.splice(at..at, text.bytes());
                bytes
            }
        };
        let full = root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|error| panic!("{error}"));
        }
        std::fs::write(full, bytes).unwrap_or_else(|error| panic!("{error}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn garbled_trees_give_diagnostics_not_panics(damages in proptest::collection::vec(damage(), FILES.len())) {
        let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        write_tree(root.path(), &damages);
        let result = probe(&Root::new(root.path()), Site::default(), &RecordedNvml(None));
        let _ = notes::render(&result.diagnostics);
        match &result.entry {
            Some(_) => {
                let text = placid_lang::print::inventory_kdl(&result.model());
                let (entries, diagnostics) = read_inventory_file(FileId(0), &text, InventoryFormat::Kdl);
                prop_assert!(!diagnostics.has_errors(), "{:?}\n{}", diagnostics, text);
                prop_assert_eq!(entries.len(), 1);
            }
            None => prop_assert!(result.diagnostics.has_errors(), "no node and no error"),
        }
    }
}

#[test]
fn an_empty_root_says_what_is_missing() {
    let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let result = probe(&Root::new(root.path()), Site::default(), &RecordedNvml(None));
    assert!(result.entry.is_none());
    let rendered = notes::render(&result.diagnostics);
    assert!(rendered.contains("cannot read /proc/cpuinfo"), "{rendered}");
    assert!(rendered.contains("no usable host name"), "{rendered}");
    assert!(rendered.contains("placid::E077"), "{rendered}");
}
