//! GPUs through recorded NVML answers (the fake is data, the join and link logic are real):
//! an 8-GPU NVSwitch node, a MIG-enabled GPU, a multi-node NVLink domain, direct GPU-to-GPU
//! links, and a node whose NVML is missing while PCI sysfs shows its GPUs.

mod common;

use std::path::Path;

use placid_lang::diag::Code;
use placid_lang::lower::assemble_inventory;
use placid_lang::model::{Mig, Model};
use placid_probe::nvml::{Fabric, MigState, NvmlGpu, NvmlLink};
use placid_probe::root::Root;
use placid_probe::site::Site;
use placid_probe::{Probe, probe, sample_nvlink};

use common::RecordedNvml;

const H200_BYTES: u64 = 143_771_090_944;

/// A captured-tree root with an x86_64 cpuinfo and the given NVIDIA PCI functions.
fn x86_root(gpu_bus_ids: &[&str]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let write = |path: &str, text: &str| {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap_or(Path::new("/"))).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(full, text).unwrap_or_else(|error| panic!("{error}"));
    };
    write("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\nflags\t\t: fpu lm sse4_2\n\n");
    write("proc/meminfo", "MemTotal:       2097152 kB\n");
    for (index, bus) in gpu_bus_ids.iter().enumerate() {
        let dir = format!("sys/bus/pci/devices/{bus}");
        write(&format!("{dir}/vendor"), "0x10de\n");
        write(&format!("{dir}/device"), "0x2335\n");
        write(&format!("{dir}/class"), "0x030200\n");
        write(&format!("{dir}/numa_node"), if index < gpu_bus_ids.len() / 2 { "0\n" } else { "1\n" });
        write(&format!("{dir}/local_cpulist"), "0-15\n");
    }
    // An NVSwitch is an NVIDIA PCI function too, but not a GPU.
    write("sys/bus/pci/devices/0000:05:00.0/vendor", "0x10de\n");
    write("sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n");
    root
}

fn bus_id(index: u32) -> String {
    format!("0000:{:02x}:00.0", 0x18 + index * 0x10)
}

fn nvml_bus_id(index: u32) -> String {
    format!("00000000:{:02X}:00.0", 0x18 + index * 0x10)
}

fn gpu(index: u32, links: Vec<NvmlLink>) -> NvmlGpu {
    NvmlGpu {
        index,
        name: Some("NVIDIA H200".to_owned()),
        uuid: Some(format!("GPU-00000000-0000-0000-0000-00000000000{index}")),
        memory_bytes: Some(H200_BYTES),
        pci_bus_id: Some(nvml_bus_id(index)),
        mig: Some(MigState::default()),
        links,
        fabric: None,
    }
}

fn link(link: u32, remote: &str, version: u32) -> NvmlLink {
    NvmlLink { link, active: true, version: Some(version), remote_pci_bus_id: Some(remote.to_owned()) }
}

fn run(root: &Path, name: &str, gpus: Option<Vec<NvmlGpu>>) -> Probe {
    let site = Site { name: placid_lang::name::Name::new(name).ok(), ..Site::default() };
    probe(&Root::new(root), site, &RecordedNvml(gpus))
}

#[test]
fn an_eight_gpu_nvswitch_node_links_every_pair() {
    let buses: Vec<String> = (0..8).map(bus_id).collect();
    let root = x86_root(&buses.iter().map(String::as_str).collect::<Vec<_>>());
    // HGX H200: 18 NVLink 4.0 links per GPU, spread over four NVSwitches.
    let switches = ["00000000:05:00.0", "00000000:06:00.0", "00000000:07:00.0", "00000000:08:00.0"];
    let gpus: Vec<NvmlGpu> =
        (0..8).map(|index| gpu(index, (0..18).map(|number| link(number, switches[number as usize % 4], 6)).collect())).collect();
    let result = run(root.path(), "hgx-01", Some(gpus));
    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    let model = result.model();
    let node = &model.nodes[0];
    assert_eq!(node.gpu_count(), 8);
    assert_eq!(node.gpu_model().map(|model| model.as_str()), Some("H200"));
    for gpu in &node.gpus {
        assert_eq!(gpu.links.len(), 7, "GPU {} reaches every other GPU", gpu.index);
        assert!(gpu.links.iter().all(|link| link.links == 18 && link.peer != gpu.index));
        assert_eq!(gpu.pci_bus_id.as_deref(), Some(bus_id(gpu.index).as_str()));
        assert_eq!(gpu.numa, Some(if gpu.index < 4 { 0 } else { 1 }));
    }
    // 18 links x 50 GB/s: the switched share adds up to the GPU's 900 GB/s (within rounding).
    let total = node.nvlink_bandwidth().bits_per_second;
    assert!((900 * 8_000_000_000 - 7..=900 * 8_000_000_000).contains(&total), "{total}");
    assert_eq!(node.domain, None, "intra-node NVLink has no fabric domain");

    let samples = sample_nvlink(&RecordedNvml(Some(result.gpus.nvml.clone())), &result.gpus, std::time::Duration::from_millis(1));
    assert_eq!(samples.len(), 8 * 18);
}

#[test]
fn direct_links_name_their_peer_gpu() {
    let root = x86_root(&[&bus_id(0), &bus_id(1), &bus_id(2), &bus_id(3)]);
    let gpus: Vec<NvmlGpu> = (0..4)
        .map(|index| {
            let peers: Vec<u32> = (0..4).filter(|peer| *peer != index).collect();
            gpu(index, (0..18).map(|number| link(number, &nvml_bus_id(peers[number as usize % 3]), 6)).collect())
        })
        .collect();
    let model = run(root.path(), "rv-a-01", Some(gpus)).model();
    let text = placid_lang::print::inventory_kdl(&model);
    assert!(text.contains("nvlink peer=1 links=6 bandwidth=\"300GB/s\""), "{text}");
    assert_eq!(model.nodes[0].gpus[3].links.iter().map(|link| link.peer).collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn a_mig_enabled_gpu_lists_its_instances_by_profile() {
    let root = x86_root(&[&bus_id(0), &bus_id(1)]);
    let mut partitioned = gpu(0, Vec::new());
    partitioned.mig = Some(MigState {
        enabled: true,
        pending_enabled: true,
        instances: ["1g.18gb", "1g.18gb", "1g.18gb", "3g.71gb"].map(str::to_owned).to_vec(),
    });
    let mut pending = gpu(1, Vec::new());
    pending.mig = Some(MigState { enabled: false, pending_enabled: true, instances: Vec::new() });
    let result = run(root.path(), "mig-01", Some(vec![partitioned, pending]));
    let model = result.model();
    let Mig::Enabled { instances } = &model.nodes[0].gpus[0].mig else {
        panic!("GPU 0 should have MIG on");
    };
    let counted: Vec<(&str, u32)> = instances.iter().map(|instance| (instance.profile.as_str(), instance.count)).collect();
    assert_eq!(counted, [("1g.18gb", 3), ("3g.71gb", 1)]);
    assert_eq!(model.nodes[0].gpus[1].mig, Mig::Disabled);
    assert!(result.diagnostics.iter().any(|diagnostic| diagnostic.message.contains("MIG mode change pending")));
    let text = placid_lang::print::inventory_kdl(&model);
    assert!(text.contains("mig=\"enabled\" {\n        mig-instance profile=\"1g.18gb\" count=3"), "{text}");
}

fn fabric(clique: u32) -> Fabric {
    Fabric { cluster_uuid: [0x5e, 0xa1, 0x0f, 0x3c, 0, 1, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x72], clique_id: clique, state: 3, status: 0 }
}

fn nvl72_node(name: &str, clique: u32) -> Probe {
    let root = x86_root(&[&bus_id(0), &bus_id(1), &bus_id(2), &bus_id(3)]);
    let gpus = (0..4)
        .map(|index| {
            let mut gpu = gpu(index, (0..18).map(|number| link(number, "00000000:FF:00.0", 7)).collect());
            gpu.fabric = Some(fabric(clique));
            gpu
        })
        .collect();
    run(root.path(), name, Some(gpus))
}

#[test]
fn a_multi_node_nvlink_domain_comes_from_the_fabric() {
    let nodes: Vec<Probe> = ["gb-01", "gb-02"].iter().map(|name| nvl72_node(name, 7)).collect();
    let entries = nodes.iter().filter_map(|probe| probe.entry.clone()).collect();
    let (model, diagnostics): (Model, _) = assemble_inventory(entries);
    assert!(!diagnostics.has_errors());
    assert_eq!(model.domains.len(), 1);
    assert_eq!(model.domains[0].name.as_str(), "5ea10f3c-0001-4000-8000-000000000072.7");
    assert_eq!(model.domains[0].gpus, 8);
    assert_eq!(model.domains[0].nodes.len(), 2);
    // NVLink 5.0 links to the NVL72 switch trays: 18 x 100 GB/s per GPU.
    assert_eq!(model.nodes[0].nvlink_bandwidth().bits_per_second, 1800 * 8_000_000_000 / 3 * 3);

    // A site name wins over the fabric id, so policies can say `nvl-a`.
    let root = x86_root(&[&bus_id(0)]);
    let mut attached = gpu(0, Vec::new());
    attached.fabric = Some(fabric(7));
    let site = Site {
        name: placid_lang::name::Name::new("gb-03").ok(),
        nvlink_domain: placid_lang::name::Name::new("nvl-a").ok(),
        ..Site::default()
    };
    let named = probe(&Root::new(root.path()), site, &RecordedNvml(Some(vec![attached])));
    assert_eq!(named.entry.and_then(|entry| entry.domain).map(|domain| domain.value.to_string()).as_deref(), Some("nvl-a"));
}

#[test]
fn gpus_that_disagree_on_their_clique_get_no_domain_and_a_warning() {
    let root = x86_root(&[&bus_id(0), &bus_id(1)]);
    let mut first = gpu(0, Vec::new());
    first.fabric = Some(fabric(1));
    let mut second = gpu(1, Vec::new());
    second.fabric = Some(fabric(2));
    let mut unattached = fabric(3);
    unattached.state = 1;
    assert!(!unattached.attached());
    let result = run(root.path(), "split-01", Some(vec![first, second]));
    assert_eq!(result.entry.and_then(|entry| entry.domain), None);
    assert!(
        result
            .diagnostics
            .iter()
            .any(|diagnostic| diagnostic.code == Code::ProbeFieldMissing && diagnostic.message.contains("2 different"))
    );
}

#[test]
fn without_nvml_the_gpus_come_from_pci_and_the_gaps_are_named() {
    let root = x86_root(&[&bus_id(0), &bus_id(1)]);
    let result = run(root.path(), "pcie-01", None);
    let model = result.model();
    let node = &model.nodes[0];
    assert_eq!(node.gpu_count(), 2, "the NVSwitch function is not a GPU");
    assert_eq!(node.gpu_model().map(|model| model.as_str()), Some("H200"));
    assert_eq!(node.gpus[1].pci_bus_id.as_deref(), Some(bus_id(1).as_str()));
    assert_eq!(node.gpus[0].memory, None);
    let missing: Vec<&str> = result
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::ProbeFieldMissing)
        .map(|diagnostic| diagnostic.message.as_str())
        .collect();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].contains("memory, MIG mode, NVLink links, NVLink domain") && missing[0].contains("NVML unavailable"),
        "{}",
        missing[0]
    );
    assert!(!result.diagnostics.has_errors());
}
