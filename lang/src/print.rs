//! The inventory printer: the nodes of a [`Model`] to canonical KDL text and to the JSON wire
//! form. `placid-probe` and `placid inventory merge` both write through here, so every
//! inventory placid writes reads back to the same nodes (a property test holds this).
//!
//! Canonical means: nodes in model order (sorted by name), properties in a fixed order,
//! optional values left out when absent, every free string quoted and escaped for KDL 2.0.

use std::fmt::Write as _;

use crate::inventory_json::{JsonCpu, JsonGpu, JsonInventory, JsonMigInstances, JsonNode, JsonNuma, JsonNvLink, JsonProfile};
use crate::model::{Cpu, Gpu, Mig, Model, Node};
use crate::units::Money;

/// The nodes of `model` as an inventory file in KDL.
pub fn inventory_kdl(model: &Model) -> String {
    let mut out = String::new();
    for node in &model.nodes {
        write_node(&mut out, model, node);
    }
    out
}

/// The nodes of `model` in the JSON wire form.
pub fn inventory_json(model: &Model) -> JsonInventory {
    JsonInventory { nodes: model.nodes.iter().map(|node| json_node(model, node)).collect() }
}

/// A KDL 2.0 quoted string. Escapes quotes, backslashes and every control character, so no
/// value can end the string or start a new node.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other if other.is_control() || is_kdl_disallowed(other) => {
                let _ = write!(out, "\\u{{{:x}}}", other as u32);
            }
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// Code points KDL 2.0 forbids in documents even inside strings (direction controls, BOM),
/// and the line and paragraph separators, which it reads as newlines: a quoted string may
/// not contain one unescaped.
fn is_kdl_disallowed(character: char) -> bool {
    matches!(character, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2028}' | '\u{2029}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

fn write_node(out: &mut String, model: &Model, node: &Node) {
    let _ = write!(out, "node {} arch={}", quote(node.name.as_str()), quote(node.arch.as_str()));
    if let Some(rack) = node.rack {
        let _ = write!(out, " rack={}", quote(model.rack(rack).name.as_str()));
    }
    if let Some(chassis) = &node.chassis {
        let _ = write!(out, " chassis={}", quote(chassis.as_str()));
    }
    if let Some(domain) = node.domain {
        let _ = write!(out, " nvlink-domain={}", quote(model.domain(domain).name.as_str()));
    }
    let _ = writeln!(out, " capacity={} {{", quote(node.capacity.as_str()));
    if declares_cpu(&node.cpu) {
        write_cpu(out, &node.cpu);
    }
    if let Some(memory) = node.memory {
        let _ = writeln!(out, "    memory {}", quote(&memory.to_string()));
    }
    if node.cost_per_gpu_hour.is_some() || node.cost_per_egress_tb.is_some() {
        out.push_str("    cost");
        if let Some(cost) = node.cost_per_gpu_hour {
            let _ = write!(out, " gpu-hour={cost}");
        }
        if let Some(egress) = node.cost_per_egress_tb {
            let _ = write!(out, " egress-tb={egress}");
        }
        out.push('\n');
    }
    for gpu in &node.gpus {
        write_gpu(out, gpu);
    }
    for (key, value) in &node.labels {
        let _ = writeln!(out, "    label {} {}", quote(key.as_str()), quote(value));
    }
    out.push_str("}\n");
}

/// Whether a node's file says anything of its CPU. A node without `cpu` reads as the default
/// CPU, whose zero harts no `cpu` line could say (harts are at least 1), so neither form
/// writes one for it.
fn declares_cpu(cpu: &Cpu) -> bool {
    *cpu != Cpu::default()
}

fn write_cpu(out: &mut String, cpu: &Cpu) {
    let _ = write!(out, "    cpu harts={}", cpu.harts);
    if let Some(cores) = cpu.cores {
        let _ = write!(out, " cores={cores}");
    }
    if let Some(sockets) = cpu.sockets {
        let _ = write!(out, " sockets={sockets}");
    }
    if let Some(isa) = &cpu.isa {
        let _ = write!(out, " isa={}", quote(isa));
    }
    let _ = write!(out, " numa-nodes={}", cpu.numa_nodes);
    if let Some(model) = &cpu.model {
        let _ = write!(out, " model={}", quote(model));
    }
    if let Some(vector) = cpu.vector {
        let _ = write!(out, " vector={}", quote(vector.as_str()));
    }
    if cpu.profiles.is_empty() && cpu.numa.is_empty() {
        out.push('\n');
        return;
    }
    out.push_str(" {\n");
    for profile in &cpu.profiles {
        let _ = write!(out, "        profile {} verdict={}", quote(profile.profile.as_str()), quote(profile.verdict().as_str()));
        for (key, names) in [("missing", &profile.missing), ("unverifiable", &profile.unverifiable)] {
            if !names.is_empty() {
                let words: Vec<&str> = names.iter().map(|name| name.as_str()).collect();
                let _ = write!(out, " {key}={}", quote(&words.join(" ")));
            }
        }
        out.push('\n');
    }
    for numa in &cpu.numa {
        let _ = write!(out, "        numa {} cpus={}", numa.id, quote(&numa.cpus.to_string()));
        if let Some(memory) = numa.memory {
            let _ = write!(out, " memory={}", quote(&memory.to_string()));
        }
        out.push('\n');
    }
    out.push_str("    }\n");
}

fn write_gpu(out: &mut String, gpu: &Gpu) {
    let _ = write!(out, "    gpu {} model={}", gpu.index, quote(gpu.model.as_str()));
    if let Some(memory) = gpu.memory {
        let _ = write!(out, " memory={}", quote(&memory.to_string()));
    }
    if let Some(uuid) = &gpu.uuid {
        let _ = write!(out, " uuid={}", quote(uuid));
    }
    if let Some(pci) = &gpu.pci_bus_id {
        let _ = write!(out, " pci={}", quote(pci));
    }
    if let Some(numa) = gpu.numa {
        let _ = write!(out, " numa={numa}");
    }
    let instances = match &gpu.mig {
        Mig::Disabled => {
            out.push_str(" mig=\"disabled\"");
            &[][..]
        }
        Mig::Enabled { instances } => {
            out.push_str(" mig=\"enabled\"");
            &instances[..]
        }
    };
    if instances.is_empty() && gpu.links.is_empty() {
        out.push('\n');
        return;
    }
    out.push_str(" {\n");
    for instance in instances {
        let _ = writeln!(out, "        mig-instance profile={} count={}", quote(instance.profile.as_str()), instance.count);
    }
    for link in &gpu.links {
        let _ = writeln!(out, "        nvlink peer={} links={} bandwidth={}", link.peer, link.links, quote(&link.bandwidth.to_string()));
    }
    out.push_str("    }\n");
}

fn json_node(model: &Model, node: &Node) -> JsonNode {
    JsonNode {
        name: node.name.to_string(),
        arch: node.arch.as_str().to_owned(),
        rack: node.rack.map(|rack| model.rack(rack).name.to_string()),
        chassis: node.chassis.as_ref().map(ToString::to_string),
        nvlink_domain: node.domain.map(|domain| model.domain(domain).name.to_string()),
        capacity: Some(node.capacity.as_str().to_owned()),
        cost_gpu_hour: node.cost_per_gpu_hour.map(json_amount),
        cost_egress_tb: node.cost_per_egress_tb.map(json_amount),
        cpu: declares_cpu(&node.cpu).then(|| json_cpu(&node.cpu)),
        memory: node.memory.map(|memory| memory.to_string()),
        gpus: node.gpus.iter().map(json_gpu).collect(),
        labels: node.labels.iter().map(|(key, value)| (key.to_string(), value.clone())).collect(),
    }
}

/// An amount as the JSON form writes it: its digits, the currency being the project's.
fn json_amount(money: Money) -> String {
    let text = money.to_string();
    text.split_once(')').map_or(text.clone(), |(_, amount)| amount.to_owned())
}

fn json_cpu(cpu: &Cpu) -> JsonCpu {
    let words = |names: &[crate::name::Name]| names.iter().map(ToString::to_string).collect();
    JsonCpu {
        harts: cpu.harts,
        cores: cpu.cores,
        sockets: cpu.sockets,
        isa: cpu.isa.clone(),
        numa_nodes: Some(cpu.numa_nodes),
        model: cpu.model.clone(),
        vector: cpu.vector.map(|vector| vector.as_str().to_owned()),
        profiles: cpu
            .profiles
            .iter()
            .map(|profile| JsonProfile {
                profile: profile.profile.to_string(),
                verdict: profile.verdict().as_str().to_owned(),
                missing: words(&profile.missing),
                unverifiable: words(&profile.unverifiable),
            })
            .collect(),
        numa: cpu
            .numa
            .iter()
            .map(|numa| JsonNuma { id: numa.id, cpus: numa.cpus.to_string(), memory: numa.memory.map(|memory| memory.to_string()) })
            .collect(),
    }
}

fn json_gpu(gpu: &Gpu) -> JsonGpu {
    let (mig, mig_instances) = match &gpu.mig {
        Mig::Disabled => ("disabled", Vec::new()),
        Mig::Enabled { instances } => (
            "enabled",
            instances.iter().map(|instance| JsonMigInstances { profile: instance.profile.to_string(), count: instance.count }).collect(),
        ),
    };
    JsonGpu {
        index: gpu.index,
        model: gpu.model.to_string(),
        memory: gpu.memory.map(|memory| memory.to_string()),
        uuid: gpu.uuid.clone(),
        pci: gpu.pci_bus_id.clone(),
        numa: gpu.numa,
        mig: Some(mig.to_owned()),
        mig_instances,
        nvlinks: gpu
            .links
            .iter()
            .map(|link| JsonNvLink { peer: link.peer, links: link.links, bandwidth: link.bandwidth.to_string() })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{InventoryEntry, InventoryFormat, assemble_inventory, read_inventory_file};
    use crate::model::{Arch, CapacityKind, MigInstances, NumaNode, NvLink, ProfileVerdict, VectorExt};
    use crate::name::{LabelKey, Name};
    use crate::span::{FileId, Span, Spanned};
    use crate::units::{Bandwidth, Bytes, Currency, Money};
    use proptest::prelude::*;

    /// Spans differ between a printed file and the model it came from; everything else must not.
    fn without_spans(mut nodes: Vec<Node>) -> Vec<Node> {
        for node in &mut nodes {
            node.span = Span::DETACHED;
            for gpu in &mut node.gpus {
                gpu.span = Span::DETACHED;
                for link in &mut gpu.links {
                    link.span = Span::DETACHED;
                }
            }
        }
        nodes
    }

    fn reread(text: &str, format: InventoryFormat) -> Model {
        let (entries, diagnostics) = read_inventory_file(FileId(0), text, format);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}\n{text}");
        let (model, diagnostics) = assemble_inventory(entries);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        model
    }

    fn name() -> impl Strategy<Value = Name> {
        "[a-z0-9][a-z0-9.-]{0,12}".prop_map(|text| Name::new(&text).unwrap_or_else(|_| unreachable!("the pattern makes names")))
    }

    fn free_string() -> impl Strategy<Value = String> {
        prop_oneof![Just("rv64imafdcv_zicsr_zba".to_owned()), "\\PC{0,20}", Just("quote \" back\\slash\nnew\tline".to_owned())]
    }

    fn gpu(index: u32, gpus: u32) -> impl Strategy<Value = Gpu> {
        let links = proptest::collection::btree_map(0..gpus, (1u32..18, 1u64..2000), 0..gpus as usize);
        let instances = proptest::collection::vec((name(), 1u32..8), 0..3);
        (
            name(),
            proptest::option::of(1u64..200),
            proptest::option::of(free_string()),
            proptest::option::of(0u32..4),
            proptest::option::of(instances),
            links,
        )
            .prop_map(move |(model, memory, uuid, numa, mig, links)| Gpu {
                index,
                span: Span::DETACHED,
                model,
                memory: memory.map(|gib| Bytes(gib << 30)),
                uuid: uuid.clone(),
                pci_bus_id: uuid,
                numa,
                mig: match mig {
                    None => Mig::Disabled,
                    Some(instances) => {
                        Mig::Enabled { instances: instances.into_iter().map(|(profile, count)| MigInstances { profile, count }).collect() }
                    }
                },
                links: links
                    .into_iter()
                    .filter(|(peer, _)| *peer != index)
                    .map(|(peer, (links, gigabytes))| NvLink {
                        peer,
                        links,
                        bandwidth: Bandwidth { bits_per_second: gigabytes * 8_000_000_000 },
                        span: Span::DETACHED,
                    })
                    .collect(),
            })
    }

    fn cpu() -> impl Strategy<Value = Cpu> {
        let profile = (name(), proptest::collection::btree_set(name(), 0..3), proptest::collection::btree_set(name(), 0..3)).prop_map(
            |(profile, missing, unverifiable)| ProfileVerdict {
                profile,
                missing: missing.into_iter().collect(),
                unverifiable: unverifiable.into_iter().collect(),
            },
        );
        let numa = proptest::collection::btree_map(
            0u32..8,
            (proptest::collection::btree_set(0u32..64, 0..10), proptest::option::of(1u64..64)),
            0..4,
        );
        (
            1u32..256,
            proptest::option::of(1u32..64),
            proptest::option::of(free_string()),
            proptest::option::of(free_string()),
            proptest::collection::btree_map(name(), profile, 0..3),
            numa,
        )
            .prop_map(|(harts, cores, isa, model, profiles, numa)| Cpu {
                harts,
                cores,
                sockets: cores.map(|_| 1),
                isa,
                numa_nodes: numa.len().max(1) as u32,
                model,
                vector: Some(VectorExt::ALL[harts as usize % VectorExt::ALL.len()]),
                profiles: profiles
                    .into_iter()
                    .map(|(profile, mut verdict)| {
                        verdict.profile = profile;
                        verdict
                    })
                    .collect(),
                numa: numa
                    .into_iter()
                    .map(|(id, (cpus, memory))| NumaNode {
                        id,
                        cpus: cpus.into_iter().collect(),
                        memory: memory.map(|gib| Bytes(gib << 30)),
                    })
                    .collect(),
            })
    }

    fn entry() -> impl Strategy<Value = InventoryEntry> {
        let gpus = (0u32..4).prop_flat_map(|count| (0..count).map(|index| gpu(index, count)).collect::<Vec<_>>());
        let labels = proptest::collection::btree_map("[a-z]{1,8}", "[a-z0-9]{1,8}", 0..3);
        (
            name(),
            proptest::option::of(name()),
            proptest::option::of(name()),
            proptest::option::of(name()),
            // A node may say nothing of its CPU.
            prop_oneof![4 => cpu(), 1 => Just(Cpu::default())],
            gpus,
            labels,
            proptest::option::of(0i64..100_000),
            proptest::option::of(0i64..1_000),
            0usize..3,
        )
            .prop_map(|(host, rack, chassis, domain, cpu, gpus, labels, cost, egress, capacity)| InventoryEntry {
                node: Node {
                    name: host,
                    span: Span::DETACHED,
                    arch: Arch::ALL[capacity],
                    rack: None,
                    chassis,
                    domain: None,
                    capacity: CapacityKind::ALL[capacity],
                    cost_per_gpu_hour: cost.map(|minor| Money { currency: Currency::Usd, minor }),
                    cost_per_egress_tb: egress.map(|minor| Money { currency: Currency::Usd, minor }),
                    cpu,
                    memory: Some(Bytes(512 << 30)),
                    gpus,
                    labels: labels
                        .into_iter()
                        .map(|(key, value)| (LabelKey::new(&key).unwrap_or_else(|_| unreachable!("the pattern makes keys")), value))
                        .collect(),
                },
                rack: rack.map(|rack| Spanned::new(rack, Span::DETACHED)),
                domain: domain.map(|domain| Spanned::new(domain, Span::DETACHED)),
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn print_then_parse_gives_the_same_nodes(entries in proptest::collection::btree_map(name(), entry(), 1..4)) {
            let entries: Vec<InventoryEntry> = entries.into_iter().map(|(host, mut entry)| { entry.node.name = host; entry }).collect();
            let (model, diagnostics) = assemble_inventory(entries);
            prop_assert!(!diagnostics.has_errors());
            let kdl = inventory_kdl(&model);
            let from_kdl = reread(&kdl, InventoryFormat::Kdl);
            prop_assert_eq!(without_spans(from_kdl.nodes.clone()), without_spans(model.nodes.clone()));
            prop_assert_eq!(&from_kdl.domains.iter().map(|domain| &domain.name).collect::<Vec<_>>(), &model.domains.iter().map(|domain| &domain.name).collect::<Vec<_>>());
            prop_assert_eq!(inventory_kdl(&from_kdl), kdl.clone());
            let json = serde_json::to_string(&inventory_json(&model)).unwrap_or_default();
            let from_json = reread(&json, InventoryFormat::Json);
            prop_assert_eq!(inventory_kdl(&from_json), kdl);
            // Both forms read back to the same model: nodes, NVLink domains and racks.
            prop_assert_eq!(without_spans(from_json.nodes.clone()), without_spans(from_kdl.nodes.clone()));
            let groups = |model: &Model| {
                let domains: Vec<_> = model.domains.iter().map(|domain| (domain.name.clone(), domain.nodes.clone(), domain.gpus)).collect();
                let racks: Vec<_> = model.racks.iter().map(|rack| (rack.name.clone(), rack.nodes.clone())).collect();
                (domains, racks)
            };
            prop_assert_eq!(groups(&from_json), groups(&from_kdl));
            prop_assert_eq!(groups(&from_kdl), groups(&model));
        }
    }

    #[test]
    fn both_forms_refuse_a_zero_cpu_count() {
        let kdl = "node \"a\" arch=\"x86_64\" { cpu harts=8 cores=0 }";
        assert!(read_inventory_file(FileId(0), kdl, InventoryFormat::Kdl).1.has_errors());
        let json = r#"{"nodes": [{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "cores": 0}}]}"#;
        assert!(read_inventory_file(FileId(0), json, InventoryFormat::Json).1.has_errors());
        let fine = r#"{"nodes": [{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "cores": 4}}]}"#;
        assert!(!read_inventory_file(FileId(0), fine, InventoryFormat::Json).1.has_errors());
    }

    #[test]
    fn quoting_keeps_hostile_strings_inside_one_value() {
        let hostile = "x\" }\nnode \"evil\" arch=\"x86_64\u{202E}\u{2028}";
        let text = format!("node \"a\" arch=\"x86_64\" {{ cpu harts=1 model={} }}", quote(hostile));
        let (entries, diagnostics) = read_inventory_file(FileId(0), &text, InventoryFormat::Kdl);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].node.cpu.model.as_deref(), Some(hostile));
    }
}
