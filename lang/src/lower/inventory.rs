//! Inventory files to nodes, and nodes to NVLink domains and racks. Inventories come as KDL
//! (what people and `placid-probe` write) or as the JSON form of the same model (the fast
//! path for machine-written inventories of thousands of nodes, see docs/language.md).

use std::collections::BTreeMap;

use crate::cpulist::CpuSet;
use crate::diag::{Code, Diagnostic};
use crate::inventory_json::{JsonCpu, JsonGpu, JsonInventory, JsonNode};
use crate::lower::ParsedFile;
use crate::lower::reader::{Cx, NodeReader, Optional, Value};
use crate::model::{
    Arch, CapacityKind, Cpu, Domain, DomainId, Gpu, Mig, MigInstances, Model, Node, NodeId, NumaNode, NvLink, ProfileVerdict, Rack, RackId,
    VectorExt, Verdict,
};
use crate::name::{LabelKey, Name, is_label_value};
use crate::span::{FileId, Span, Spanned};
use crate::units::{Bandwidth, Bytes, Money};

/// One node of an inventory file with the names of its rack and NVLink domain, before a
/// whole inventory gives them ids. `placid-probe` and `placid inventory merge` build models
/// from these through [`assemble_inventory`].
#[derive(Clone, Debug)]
pub struct InventoryEntry {
    /// The node (its `rack` and `domain` ids are unset).
    pub node: Node,
    /// The rack's name and where it is written.
    pub rack: Option<Spanned<Name>>,
    /// The NVLink domain's name and where it is written.
    pub domain: Option<Spanned<Name>>,
}

/// How an inventory file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InventoryFormat {
    /// KDL, as people and `placid-probe` write it.
    Kdl,
    /// The JSON form of [`crate::inventory_json`].
    Json,
}

impl InventoryFormat {
    /// The format a file name implies: `.json` is JSON, anything else KDL.
    pub fn of_path(path: &str) -> InventoryFormat {
        if path.ends_with(".json") { InventoryFormat::Json } else { InventoryFormat::Kdl }
    }
}

/// Reads one inventory file on its own (outside a project), with the same validation as the
/// compiler. Entries that fail to lower are left out and their errors reported.
pub fn read_inventory_file(file: FileId, text: &str, format: InventoryFormat) -> (Vec<InventoryEntry>, crate::diag::Diagnostics) {
    let mut cx = Cx::new();
    let entries = match format {
        InventoryFormat::Json => lower_json(&mut cx, file, text),
        InventoryFormat::Kdl => {
            let (document, diagnostics) = crate::syntax::parse(file, text);
            cx.diagnostics.extend(diagnostics);
            lower_kdl(&mut cx, &ParsedFile { id: file, document })
        }
    };
    (entries, cx.diagnostics)
}

/// Builds the inventory half of a model (nodes, domains, racks) from entries: sorts the nodes,
/// reports duplicate host names and derives domains and racks.
pub fn assemble_inventory(entries: Vec<InventoryEntry>) -> (Model, crate::diag::Diagnostics) {
    let mut cx = Cx::new();
    let mut model = Model::default();
    assemble(&mut cx, &mut model, entries);
    (model, cx.diagnostics)
}

const ARCHES: &[(&str, Arch)] = &[("riscv64", Arch::Riscv64), ("x86_64", Arch::X86_64), ("aarch64", Arch::Aarch64)];
const CAPACITIES: &[(&str, CapacityKind)] =
    &[("reserved", CapacityKind::Reserved), ("on-demand", CapacityKind::OnDemand), ("spot", CapacityKind::Spot)];

pub(super) fn lower_kdl(cx: &mut Cx, file: &ParsedFile) -> Vec<InventoryEntry> {
    let mut drafts = Vec::new();
    for node in file.document.nodes() {
        let reader = NodeReader::new(node, file.id);
        if reader.kind() != "node" {
            cx.error(
                Diagnostic::error(
                    Code::UnknownNode,
                    reader.name_span(),
                    format!("inventory files contain `node` declarations, not `{}`", reader.kind()),
                )
                .label("unknown node")
                .help("put policy declarations in files named by `include`"),
            );
            continue;
        }
        if let Some(draft) = lower_node(cx, &reader) {
            drafts.push(draft);
        }
    }
    drafts
}

fn lower_node(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<InventoryEntry> {
    let props = reader.props(cx, &["arch", "rack", "chassis", "nvlink-domain", "capacity"]);
    let children = reader.children(cx, &["cpu", "memory", "cost", "gpu", "label"]);
    let args = reader.expect_args(cx, 1, 1, "the node's host name")?;
    let name = args[0].name(cx);
    let arch = props.require(cx, reader, "arch").and_then(|value| value.keyword(cx, ARCHES));
    let rack = props.get("rack").and_then(|value| value.name(cx));
    let chassis = props.get("chassis").and_then(|value| value.name(cx)).map(|chassis| chassis.value);
    let domain = props.get("nvlink-domain").and_then(|value| value.name(cx));
    let capacity = match props.get("capacity") {
        Some(value) => value.keyword(cx, CAPACITIES),
        None => Some(CapacityKind::OnDemand),
    };
    let cpu = match NodeReader::single(cx, &children, "cpu") {
        Some(cpu) => lower_cpu(cx, cpu),
        None => Some(Cpu::default()),
    };
    let memory = NodeReader::single(cx, &children, "memory")
        .and_then(|memory| memory.expect_args(cx, 1, 1, "the host memory, such as \"512GiB\""))
        .and_then(|args| args[0].bytes(cx));
    let cost = match NodeReader::single(cx, &children, "cost") {
        Some(cost) => {
            let cost_props = cost.props(cx, &["gpu-hour"]);
            cost.children(cx, &[]);
            cost_props.require(cx, cost, "gpu-hour").and_then(|value| value.money(cx)).map(|money| Some(money.value))
        }
        None => Some(None),
    };
    let mut gpus = Vec::new();
    let mut ok = true;
    for child in children.iter().filter(|child| child.kind() == "gpu") {
        match lower_gpu(cx, child) {
            Some(gpu) => gpus.push(gpu),
            None => ok = false,
        }
    }
    gpus.sort_by_key(|gpu| gpu.index);
    for pair in gpus.windows(2) {
        if pair[0].index == pair[1].index {
            cx.error(
                Diagnostic::error(Code::DuplicateName, pair[1].span, format!("GPU {} is declared twice", pair[1].index))
                    .label("second declaration")
                    .with_secondary(pair[0].span, "first declared here")
                    .help("number the GPUs of a node 0, 1, 2, ..."),
            );
            ok = false;
        }
    }
    for gpu in &gpus {
        for link in &gpu.links {
            if link.peer == gpu.index || !gpus.iter().any(|other| other.index == link.peer) {
                cx.error(
                    Diagnostic::error(
                        Code::UnresolvedReference,
                        link.span,
                        format!("GPU {} has an NVLink to GPU {}, which is not another GPU of this node", gpu.index, link.peer),
                    )
                    .label("unknown peer")
                    .help("`peer=` names the index of another GPU of the same node"),
                );
                ok = false;
            }
        }
    }
    let mut labels = std::collections::BTreeMap::new();
    for child in children.iter().filter(|child| child.kind() == "label") {
        match lower_label(cx, child) {
            Some((key, value)) => {
                labels.insert(key, value);
            }
            None => ok = false,
        }
    }
    let node = Node {
        name: name?.value,
        span: args[0].span,
        arch: arch?,
        rack: None,
        chassis,
        domain: None,
        capacity: capacity?,
        cost_per_gpu_hour: cost?,
        cpu: cpu?,
        memory,
        gpus,
        labels,
    };
    ok.then_some(InventoryEntry { node, rack, domain })
}

fn lower_cpu(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<Cpu> {
    let props = reader.props(cx, &["harts", "cores", "sockets", "isa", "numa-nodes", "model", "vector"]);
    let children = reader.children(cx, &["profile", "numa"]);
    let harts = props.require(cx, reader, "harts").and_then(|value| value.positive(cx));
    let cores = props.get("cores").map(|value| value.positive(cx));
    let sockets = props.get("sockets").map(|value| value.positive(cx));
    let isa = props.get("isa").map(|value| value.string(cx));
    let numa_nodes = props.get("numa-nodes").map_or(Some(1), |value| value.positive(cx));
    let model = props.get("model").map(|value| value.string(cx));
    let vector_choices: Vec<(&str, VectorExt)> = VectorExt::ALL.iter().map(|kind| (kind.as_str(), *kind)).collect();
    let vector = props.get("vector").map(|value| value.keyword(cx, &vector_choices));
    let mut profiles = Vec::new();
    let mut numa = Vec::new();
    let mut ok = true;
    for child in &children {
        if child.kind() == "profile" {
            match lower_profile(cx, child) {
                Some(profile) => profiles.push(profile),
                None => ok = false,
            }
        } else {
            match lower_numa(cx, child) {
                Some(node) => numa.push(node),
                None => ok = false,
            }
        }
    }
    profiles.sort_by(|left, right| left.profile.cmp(&right.profile));
    numa.sort_by_key(|node| node.id);
    let cpu = Cpu {
        harts: harts?,
        cores: cores.lowered()?,
        sockets: sockets.lowered()?,
        isa: isa.lowered()?.map(|isa| isa.value),
        numa_nodes: numa_nodes?,
        model: model.lowered()?.map(|model| model.value),
        vector: vector.lowered()?,
        profiles,
        numa,
    };
    ok.then_some(cpu)
}

/// `profile "rva23u64" verdict="missing" missing="zfa zcb" unverifiable="ziccif"`: the lists
/// are space-separated extension names, and `verdict` must agree with them so a hand edit
/// cannot leave a file that says `meets` while listing missing extensions.
fn lower_profile(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<ProfileVerdict> {
    let props = reader.props(cx, &["verdict", "missing", "unverifiable"]);
    reader.children(cx, &[]);
    let args = reader.expect_args(cx, 1, 1, "the profile name, such as \"rva23u64\"")?;
    let profile = args[0].name(cx);
    let verdict_choices: Vec<(&str, Verdict)> = Verdict::ALL.iter().map(|verdict| (verdict.as_str(), *verdict)).collect();
    let verdict = props.require(cx, reader, "verdict").and_then(|value| value.keyword(cx, &verdict_choices));
    let mut name_list = |key: &str| -> Option<Vec<Name>> {
        let Some(value) = props.get(key) else {
            return Some(Vec::new());
        };
        let text = value.string(cx)?;
        let mut names = Vec::new();
        for word in text.value.split_whitespace() {
            match Name::new(word) {
                Ok(name) => names.push(name),
                Err(reason) => {
                    cx.error(
                        Diagnostic::error(Code::InvalidName, value.span, reason)
                            .label("invalid extension name")
                            .help("list extension names separated by spaces, such as \"zfa zcb\""),
                    );
                    return None;
                }
            }
        }
        names.sort();
        names.dedup();
        Some(names)
    };
    let missing = name_list("missing");
    let unverifiable = name_list("unverifiable");
    let profile = ProfileVerdict { profile: profile?.value, missing: missing?, unverifiable: unverifiable? };
    let verdict = verdict?;
    if profile.verdict() != verdict {
        cx.error(
            Diagnostic::error(
                Code::InvalidValue,
                reader.name_span(),
                format!("profile `{}` says `{}` but its lists mean `{}`", profile.profile, verdict.as_str(), profile.verdict().as_str()),
            )
            .label("inconsistent verdict")
            .help("`missing` wins over `unverifiable`, which wins over `meets`; regenerate the file with placid-probe"),
        );
        return None;
    }
    Some(profile)
}

/// `numa 0 cpus="0-7,16-23" memory="64GiB"`.
fn lower_numa(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<NumaNode> {
    let props = reader.props(cx, &["cpus", "memory"]);
    reader.children(cx, &[]);
    let args = reader.expect_args(cx, 1, 1, "the NUMA node id");
    let id = args.and_then(|args| args[0].u32(cx));
    let cpus = match props.get("cpus") {
        Some(value) => value.string(cx).and_then(|text| match crate::cpulist::parse(&text.value) {
            Ok(cpus) => Some(cpus),
            Err(reason) => {
                cx.error(
                    Diagnostic::error(Code::InvalidValue, value.span, reason)
                        .label("invalid CPU list")
                        .help("write CPUs as the kernel does, such as \"0-7,16-23\""),
                );
                None
            }
        }),
        None => Some(CpuSet::default()),
    };
    let memory = props.get("memory").map(|value| value.bytes(cx));
    Some(NumaNode { id: id?, cpus: cpus?, memory: memory.lowered()? })
}

fn lower_gpu(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<Gpu> {
    let props = reader.props(cx, &["model", "memory", "uuid", "pci", "numa", "mig"]);
    let children = reader.children(cx, &["nvlink", "mig-instance"]);
    let args = reader.expect_args(cx, 1, 1, "the GPU's index");
    let index = args.and_then(|args| args[0].u32(cx));
    let model = props.require(cx, reader, "model").and_then(|value| value.name(cx));
    let memory = props.get("memory").map(|value| value.bytes(cx));
    let uuid = props.get("uuid").map(|value| value.string(cx));
    let pci = props.get("pci").map(|value| value.string(cx));
    let numa = props.get("numa").map(|value| value.u32(cx));
    let mig_enabled = match props.get("mig") {
        Some(value) => value.keyword(cx, &[("disabled", false), ("enabled", true)]),
        None => Some(false),
    };
    let mut links = Vec::new();
    let mut instances = Vec::new();
    let mut ok = true;
    for child in &children {
        if child.kind() == "nvlink" {
            match lower_link(cx, child) {
                Some(link) => links.push(link),
                None => ok = false,
            }
        } else {
            let instance_props = child.props(cx, &["profile", "count"]);
            child.children(cx, &[]);
            let profile = instance_props.require(cx, child, "profile").and_then(|value| value.name(cx));
            let count = instance_props.get("count").map_or(Some(1), |value| value.positive(cx));
            match (profile, count) {
                (Some(profile), Some(count)) => instances.push(MigInstances { profile: profile.value, count }),
                _ => ok = false,
            }
        }
    }
    links.sort_by_key(|link| link.peer);
    let mig_enabled = mig_enabled?;
    if !mig_enabled && let Some(first) = children.iter().find(|child| child.kind() == "mig-instance") {
        cx.error(
            Diagnostic::error(Code::InvalidValue, first.name_span(), "MIG instances on a GPU whose MIG mode is disabled")
                .label("MIG instance")
                .help("set `mig=\"enabled\"` on the GPU, or remove the instances"),
        );
        ok = false;
    }
    let mig = if mig_enabled { Mig::Enabled { instances } } else { Mig::Disabled };
    let gpu = Gpu {
        index: index?,
        span: reader.name_span(),
        model: model?.value,
        memory: memory.lowered()?,
        uuid: uuid.lowered()?.map(|uuid| uuid.value),
        pci_bus_id: pci.lowered()?.map(|pci| pci.value),
        numa: numa.lowered()?,
        mig,
        links,
    };
    ok.then_some(gpu)
}

fn lower_link(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<NvLink> {
    let props = reader.props(cx, &["peer", "links", "bandwidth"]);
    reader.children(cx, &[]);
    let peer = props.require(cx, reader, "peer").and_then(|value| value.u32(cx));
    let links = props.get("links").map_or(Some(1), |value| value.positive(cx));
    let bandwidth = props.require(cx, reader, "bandwidth").and_then(|value| value.bandwidth(cx));
    Some(NvLink { peer: peer?, links: links?, bandwidth: bandwidth?, span: reader.name_span() })
}

fn lower_label(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<(LabelKey, String)> {
    reader.props(cx, &[]);
    reader.children(cx, &[]);
    let args = reader.expect_args(cx, 2, 2, "a label key and value")?;
    label_pair(cx, args[0], args[1])
}

/// A label key and value, validated with Kubernetes' rules.
pub(super) fn label_pair(cx: &mut Cx, key: Value<'_>, value: Value<'_>) -> Option<(LabelKey, String)> {
    let key_text = key.string(cx)?;
    let value_text = value.string(cx)?;
    let key = match LabelKey::new(&key_text.value) {
        Ok(label) => label,
        Err(reason) => {
            cx.error(
                Diagnostic::error(Code::InvalidName, key.span, reason)
                    .label("invalid label key")
                    .help("label keys look like `zone` or `example.com/zone`"),
            );
            return None;
        }
    };
    if !is_label_value(&value_text.value) {
        cx.error(
            Diagnostic::error(Code::InvalidName, value.span, format!("`{}` is not a valid label value", value_text.value.escape_debug()))
                .label("invalid label value")
                .help("label values have at most 63 letters, digits, `-`, `_` or `.`, and start and end with a letter or digit"),
        );
        return None;
    }
    Some((key, value_text.value))
}

/// Reads the JSON form of an inventory (see [`crate::inventory_json`]) for tools that only
/// need the nodes, with the same validation as the compiler.
pub fn read_inventory_json(text: &str) -> Result<Vec<Node>, crate::diag::Diagnostics> {
    let mut cx = Cx::new();
    let drafts = lower_json(&mut cx, FileId(0), text);
    if cx.diagnostics.has_errors() {
        return Err(cx.diagnostics);
    }
    Ok(drafts.into_iter().map(|draft| draft.node).collect())
}

pub(super) fn lower_json(cx: &mut Cx, file: FileId, text: &str) -> Vec<InventoryEntry> {
    let inventory: JsonInventory = match serde_json::from_str(text) {
        Ok(inventory) => inventory,
        Err(error) => {
            let offset = offset_of(text, error.line(), error.column());
            cx.error(
                Diagnostic::error(Code::KdlSyntax, Span::new(file, offset, offset), format!("invalid JSON inventory: {error}"))
                    .label("here")
                    .help("JSON inventories follow the schema in docs/language.md (`placid-probe --format json` writes it)"),
            );
            return Vec::new();
        }
    };
    let span = Span::new(file, 0, 0);
    inventory.nodes.into_iter().filter_map(|node| json_node(cx, span, node)).collect()
}

fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

fn json_node(cx: &mut Cx, span: Span, node: JsonNode) -> Option<InventoryEntry> {
    let currency = cx.currency;
    let mut invalid = |what: String| {
        cx.error(
            Diagnostic::error(Code::InvalidValue, span, what)
                .label("in this file")
                .help("fix the JSON inventory or regenerate it with placid-probe"),
        );
    };
    let name_of = |text: &str, invalid: &mut dyn FnMut(String)| match Name::new(text) {
        Ok(name) => Some(name),
        Err(reason) => {
            invalid(reason);
            None
        }
    };
    let name = name_of(&node.name, &mut invalid)?;
    let Some(arch) = Arch::parse(&node.arch) else {
        invalid(format!("node `{name}`: unknown arch `{}`", node.arch.escape_debug()));
        return None;
    };
    let capacity = match node.capacity.as_deref() {
        None => CapacityKind::OnDemand,
        Some(text) => match CapacityKind::parse(text) {
            Some(kind) => kind,
            None => {
                invalid(format!("node `{name}`: unknown capacity `{}`", text.escape_debug()));
                return None;
            }
        },
    };
    let rack = match &node.rack {
        Some(rack) => Some(Spanned::new(name_of(rack, &mut invalid)?, span)),
        None => None,
    };
    let domain = match &node.nvlink_domain {
        Some(domain) => Some(Spanned::new(name_of(domain, &mut invalid)?, span)),
        None => None,
    };
    let chassis = match &node.chassis {
        Some(chassis) => Some(name_of(chassis, &mut invalid)?),
        None => None,
    };
    let memory = match &node.memory {
        Some(memory) => match Bytes::parse(memory) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                invalid(format!("node `{name}`: {}", error.message));
                return None;
            }
        },
        None => None,
    };
    let cost_per_gpu_hour = match &node.cost_gpu_hour {
        Some(amount) => match Money::parse(currency, amount) {
            // The KDL form's rule: a price is never negative.
            Ok(money) if money.minor < 0 => {
                invalid(format!("node `{name}`: the GPU-hour price {money} is negative"));
                return None;
            }
            Ok(money) => Some(money),
            Err(error) => {
                invalid(format!("node `{name}`: {}", error.message));
                return None;
            }
        },
        None => None,
    };
    let mut gpus = Vec::with_capacity(node.gpus.len());
    for gpu in node.gpus {
        gpus.push(json_gpu(&name, gpu, span, &mut invalid)?);
    }
    let mut labels = BTreeMap::new();
    for (key, value) in node.labels {
        let Ok(key) = LabelKey::new(&key) else {
            invalid(format!("node `{name}`: invalid label key `{}`", key.escape_debug()));
            return None;
        };
        if !is_label_value(&value) {
            invalid(format!("node `{name}`: invalid label value `{}`", value.escape_debug()));
            return None;
        }
        labels.insert(key, value);
    }
    let cpu = json_cpu(&name, node.cpu, &mut invalid)?;
    let node = Node { name, span, arch, rack: None, chassis, domain: None, capacity, cost_per_gpu_hour, cpu, memory, gpus, labels };
    Some(InventoryEntry { node, rack, domain })
}

fn json_cpu(node: &Name, cpu: JsonCpu, invalid: &mut dyn FnMut(String)) -> Option<Cpu> {
    // The KDL form's rule (`positive`), so targets may divide by these counts.
    if cpu.harts == 0 || cpu.cores == Some(0) || cpu.sockets == Some(0) {
        invalid(format!("node `{node}`: `harts`, `cores` and `sockets` must be at least 1"));
        return None;
    }
    let vector = match cpu.vector.as_deref() {
        Some(text) => match VectorExt::parse(text) {
            Some(vector) => Some(vector),
            None => {
                invalid(format!("node `{node}`: unknown vector extension `{}`", text.escape_debug()));
                return None;
            }
        },
        None => None,
    };
    let mut profiles = Vec::with_capacity(cpu.profiles.len());
    for profile in cpu.profiles {
        let names = |words: &[String]| -> Option<Vec<Name>> {
            let mut names: Vec<Name> = words.iter().map(|word| Name::new(word).ok()).collect::<Option<_>>()?;
            names.sort();
            names.dedup();
            Some(names)
        };
        let (Ok(name), Some(missing), Some(unverifiable)) =
            (Name::new(&profile.profile), names(&profile.missing), names(&profile.unverifiable))
        else {
            invalid(format!("node `{node}`: invalid profile `{}`", profile.profile.escape_debug()));
            return None;
        };
        let verdict = ProfileVerdict { profile: name, missing, unverifiable };
        if Verdict::parse(&profile.verdict) != Some(verdict.verdict()) {
            invalid(format!(
                "node `{node}`: profile `{}` has verdict `{}`, its lists mean `{}`",
                verdict.profile,
                profile.verdict.escape_debug(),
                verdict.verdict().as_str()
            ));
            return None;
        }
        profiles.push(verdict);
    }
    profiles.sort_by(|left, right| left.profile.cmp(&right.profile));
    let mut numa = Vec::with_capacity(cpu.numa.len());
    for numa_node in cpu.numa {
        let cpus = match crate::cpulist::parse(&numa_node.cpus) {
            Ok(cpus) => cpus,
            Err(reason) => {
                invalid(format!("node `{node}` NUMA node {}: {reason}", numa_node.id));
                return None;
            }
        };
        let memory = match numa_node.memory.as_deref().map(Bytes::parse) {
            Some(Ok(bytes)) => Some(bytes),
            Some(Err(error)) => {
                invalid(format!("node `{node}` NUMA node {}: {}", numa_node.id, error.message));
                return None;
            }
            None => None,
        };
        numa.push(NumaNode { id: numa_node.id, cpus, memory });
    }
    numa.sort_by_key(|numa_node| numa_node.id);
    Some(Cpu {
        harts: cpu.harts,
        cores: cpu.cores,
        sockets: cpu.sockets,
        isa: cpu.isa,
        numa_nodes: cpu.numa_nodes.unwrap_or(1),
        model: cpu.model,
        vector,
        profiles,
        numa,
    })
}

fn json_gpu(node: &Name, gpu: JsonGpu, span: Span, invalid: &mut dyn FnMut(String)) -> Option<Gpu> {
    let Ok(model) = Name::new(&gpu.model) else {
        invalid(format!("node `{node}`: invalid GPU model `{}`", gpu.model.escape_debug()));
        return None;
    };
    let memory = match &gpu.memory {
        Some(memory) => match Bytes::parse(memory) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                invalid(format!("node `{node}` GPU {}: {}", gpu.index, error.message));
                return None;
            }
        },
        None => None,
    };
    let mut links = Vec::with_capacity(gpu.nvlinks.len());
    for link in gpu.nvlinks {
        let Ok(bandwidth) = Bandwidth::parse(&link.bandwidth) else {
            invalid(format!("node `{node}` GPU {}: invalid NVLink bandwidth `{}`", gpu.index, link.bandwidth.escape_debug()));
            return None;
        };
        links.push(NvLink { peer: link.peer, links: link.links, bandwidth, span });
    }
    links.sort_by_key(|link| link.peer);
    let mig = match gpu.mig.as_deref() {
        None | Some("disabled") => Mig::Disabled,
        Some("enabled") => {
            let mut instances = Vec::new();
            for instance in gpu.mig_instances {
                let Ok(profile) = Name::new(&instance.profile) else {
                    invalid(format!("node `{node}` GPU {}: invalid MIG profile", gpu.index));
                    return None;
                };
                instances.push(MigInstances { profile, count: instance.count });
            }
            Mig::Enabled { instances }
        }
        Some(other) => {
            invalid(format!("node `{node}` GPU {}: unknown MIG mode `{}`", gpu.index, other.escape_debug()));
            return None;
        }
    };
    Some(Gpu { index: gpu.index, span, model, memory, uuid: gpu.uuid, pci_bus_id: gpu.pci, numa: gpu.numa, mig, links })
}

/// Sorts the nodes, reports duplicate host names and derives domains and racks.
pub(super) fn assemble(cx: &mut Cx, model: &mut Model, mut drafts: Vec<InventoryEntry>) {
    drafts.sort_by(|left, right| left.node.name.cmp(&right.node.name));
    let mut unique: Vec<InventoryEntry> = Vec::with_capacity(drafts.len());
    for draft in drafts {
        if let Some(previous) = unique.last()
            && previous.node.name == draft.node.name
        {
            cx.error(
                Diagnostic::error(Code::DuplicateName, draft.node.span, format!("node `{}` is declared twice", draft.node.name))
                    .label("second declaration")
                    .with_secondary(previous.node.span, "first declared here")
                    .help("each host appears once in the inventory; `placid inventory merge` reports such clashes"),
            );
            continue;
        }
        unique.push(draft);
    }
    let mut domains: BTreeMap<Name, Domain> = BTreeMap::new();
    let mut racks: BTreeMap<Name, Rack> = BTreeMap::new();
    for (index, draft) in unique.iter().enumerate() {
        let id = NodeId::from_index(index);
        if let Some(domain) = &draft.domain {
            let entry = domains.entry(domain.value.clone()).or_insert_with(|| Domain {
                name: domain.value.clone(),
                nodes: Vec::new(),
                gpus: 0,
                span: domain.span,
            });
            entry.nodes.push(id);
            entry.gpus += draft.node.gpu_count();
        }
        if let Some(rack) = &draft.rack {
            racks
                .entry(rack.value.clone())
                .or_insert_with(|| Rack { name: rack.value.clone(), nodes: Vec::new(), span: rack.span })
                .nodes
                .push(id);
        }
    }
    let domain_ids: BTreeMap<Name, DomainId> =
        domains.keys().enumerate().map(|(index, name)| (name.clone(), DomainId::from_index(index))).collect();
    let rack_ids: BTreeMap<Name, RackId> =
        racks.keys().enumerate().map(|(index, name)| (name.clone(), RackId::from_index(index))).collect();
    model.nodes = unique
        .into_iter()
        .map(|draft| {
            let mut node = draft.node;
            node.domain = draft.domain.and_then(|domain| domain_ids.get(&domain.value).copied());
            node.rack = draft.rack.and_then(|rack| rack_ids.get(&rack.value).copied());
            node
        })
        .collect();
    model.domains = domains.into_values().collect();
    model.racks = racks.into_values().collect();
}
