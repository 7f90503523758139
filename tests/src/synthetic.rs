//! A synthetic project generator for benchmarks: `nodes` riscv64 nodes with 4 NVLink-connected
//! GPUs each in NVLink domains of 16 nodes (10,000 nodes -> 625 domains), racks of 4 domains,
//! `teams` teams, 3 tiers, one pool per domain plus arch pools, and `plans` plans. The
//! inventory is written in the JSON form (the machine-written fast path) or in KDL.

use std::fmt::Write as _;
use std::path::Path;

use placid_lang::inventory_json::{JsonCpu, JsonGpu, JsonInventory, JsonNode, JsonNvLink};
use placid_lang::lower::InventoryFormat;

/// How big a synthetic project is.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Nodes (4 GPUs each).
    pub nodes: usize,
    /// Teams.
    pub teams: usize,
    /// Plans.
    pub plans: usize,
}

const NODES_PER_DOMAIN: usize = 16;
const DOMAINS_PER_RACK: usize = 4;

fn domain_of(node: usize) -> usize {
    node / NODES_PER_DOMAIN
}

/// The inventory's nodes in the JSON wire form.
pub fn inventory(size: Size) -> JsonInventory {
    let nodes = (0..size.nodes)
        .map(|index| {
            let domain = domain_of(index);
            let gpus = (0..4)
                .map(|gpu| JsonGpu {
                    index: gpu,
                    model: "H200".into(),
                    memory: Some("141GiB".into()),
                    numa: Some(gpu / 2),
                    mig: Some("disabled".into()),
                    nvlinks: (0..4)
                        .filter(|peer| *peer != gpu)
                        .map(|peer| JsonNvLink { peer, links: 6, bandwidth: "300GB/s".into() })
                        .collect(),
                    ..JsonGpu::default()
                })
                .collect();
            JsonNode {
                name: format!("rv-{index:05}"),
                arch: "riscv64".into(),
                rack: Some(format!("r{:03}", domain / DOMAINS_PER_RACK)),
                chassis: Some(format!("c{:04}", index / 4)),
                nvlink_domain: Some(format!("nvl-{domain:03}")),
                capacity: Some(
                    if domain.is_multiple_of(5) {
                        "reserved"
                    } else if domain % 5 == 4 {
                        "spot"
                    } else {
                        "on-demand"
                    }
                    .into(),
                ),
                cost_gpu_hour: Some(if domain % 5 == 4 { "0.90" } else { "3.10" }.into()),
                cost_egress_tb: None,
                cpu: Some(JsonCpu {
                    harts: 64,
                    cores: Some(64),
                    sockets: Some(1),
                    isa: Some("rv64imafdcv_zba_zbb_zbs".into()),
                    numa_nodes: Some(2),
                    ..JsonCpu::default()
                }),
                memory: Some("512GiB".into()),
                gpus,
                labels: Default::default(),
            }
        })
        .collect();
    JsonInventory { nodes }
}

fn inventory_kdl(inventory: &JsonInventory) -> String {
    let mut out = String::new();
    for node in &inventory.nodes {
        let _ = writeln!(
            out,
            "node \"{}\" arch=\"{}\" rack=\"{}\" chassis=\"{}\" nvlink-domain=\"{}\" capacity=\"{}\" {{",
            node.name,
            node.arch,
            node.rack.as_deref().unwrap_or_default(),
            node.chassis.as_deref().unwrap_or_default(),
            node.nvlink_domain.as_deref().unwrap_or_default(),
            node.capacity.as_deref().unwrap_or_default()
        );
        let _ = writeln!(out, "    cpu harts=64 cores=64 sockets=1 isa=\"rv64imafdcv_zba_zbb_zbs\" numa-nodes=2");
        let _ = writeln!(out, "    memory \"512GiB\"");
        let _ = writeln!(out, "    cost gpu-hour=(usd){}", node.cost_gpu_hour.as_deref().unwrap_or("0"));
        for gpu in &node.gpus {
            let _ =
                writeln!(out, "    gpu {} model=\"H200\" memory=\"141GiB\" numa={} mig=\"disabled\" {{", gpu.index, gpu.numa.unwrap_or(0));
            for link in &gpu.nvlinks {
                let _ = writeln!(out, "        nvlink peer={} links={} bandwidth=\"{}\"", link.peer, link.links, link.bandwidth);
            }
            let _ = writeln!(out, "    }}");
        }
        let _ = writeln!(out, "}}");
    }
    out
}

/// The policy files of a synthetic project.
pub fn policy(size: Size) -> String {
    let domains = size.nodes.div_ceil(NODES_PER_DOMAIN);
    let mut out = String::new();
    for domain in 0..domains {
        let _ = writeln!(out, "pool \"pool-{domain:03}\" {{ select nvlink-domain=\"nvl-{domain:03}\" }}");
    }
    let _ = writeln!(out, "pool \"spot\" {{ select capacity=\"spot\" }}");
    let _ = writeln!(out, "pool \"all\" {{ select arch=\"riscv64\" }}");
    let _ = writeln!(
        out,
        "tier \"P0\" {{\n    priority 1000\n    preemption \"never\"\n    reserve pool=\"pool-000\" gpus=32\n    cost-center \"cc-0\"\n}}"
    );
    let _ = writeln!(out, "tier \"P1\" {{ priority 500; preemption window=\"3m\" mode=\"requeue\"; backfill #true }}");
    let _ = writeln!(out, "tier \"P2\" {{ priority 100; preemption window=\"2m\" mode=\"cancel\" }}");
    let cost_centers = size.teams.div_ceil(20).max(1);
    for center in 0..cost_centers {
        let _ = writeln!(out, "cost-center \"cc-{center}\" {{ budget daily=(usd)1000000 }}");
    }
    for team in 0..size.teams {
        let _ = writeln!(
            out,
            "team \"team-{team:03}\" {{ share {}; cost-center \"cc-{}\"; tiers \"P1\" \"P2\"; budget daily=(usd)2000 }}",
            10 + team % 7,
            team / 20
        );
    }
    let _ = writeln!(out, "class \"mp\" {{ nvlink \"required\" min-bandwidth=\"900GB/s\"; locality \"nvlink-domain\"; comm \"high\" }}");
    let _ = writeln!(out, "class \"dp\" {{ locality \"rack\"; comm \"medium\" }}");
    for plan in 0..size.plans {
        let team = plan % size.teams.max(1);
        let domain = plan % domains.max(1);
        let _ = writeln!(
            out,
            "plan \"plan-{plan:03}\" team=\"team-{team:03}\" {{\n    stage \"prep\" tier=\"P2\" class=\"dp\" pool=\"spot\" gpus=4\n    stage \"train\" tier=\"P1\" class=\"mp\" pool=\"pool-{domain:03}\" gpus=32 after=\"prep\"\n    stage \"eval\" tier=\"P2\" pool=\"all\" gpus=1 after=\"train\"\n}}"
        );
    }
    out
}

/// Writes a synthetic project into `dir`.
pub fn write_project(dir: &Path, size: Size, format: InventoryFormat) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("inventory"))?;
    std::fs::create_dir_all(dir.join("policy"))?;
    let (pattern, file, text) = match format {
        InventoryFormat::Json => ("inventory/*.json", "nodes.json", serde_json::to_string(&inventory(size)).unwrap_or_default()),
        InventoryFormat::Kdl => ("inventory/*.kdl", "nodes.kdl", inventory_kdl(&inventory(size))),
    };
    std::fs::write(dir.join("inventory").join(file), text)?;
    std::fs::write(dir.join("policy").join("policy.kdl"), policy(size))?;
    std::fs::write(
        dir.join("placid.kdl"),
        format!("project \"synthetic\" currency=\"usd\"\ninventory \"{pattern}\"\ninclude \"policy/*.kdl\"\n"),
    )
}

/// The median of benchmark samples (the middle one of an odd count).
pub fn median(mut samples: Vec<std::time::Duration>) -> std::time::Duration {
    samples.sort();
    samples[samples.len() / 2]
}
