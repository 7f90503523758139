//! Reading the KDL form of an inventory into drafts. This file knows KDL's syntax (which
//! nodes, properties and arguments exist, and the type of each value); what the values mean
//! is checked by [`super::draft`], for both forms alike.

use crate::diag::{Code, Diagnostic};
use crate::lower::ParsedFile;
use crate::lower::context::Cx;
use crate::lower::inventory::InventoryFormat;
use crate::lower::inventory::draft::{CpuDraft, GpuDraft, LabelDraft, LinkDraft, MigDraft, NodeDraft, NumaDraft, ProfileDraft};
use crate::lower::reader::{NodeReader, Value};
use crate::lower::schema;
use crate::span::Spanned;

/// Example quantities, for help lines on values written without their unit.
const BYTES: &str = "141GiB";
const BANDWIDTH: &str = "900GB/s";

/// Reads the nodes of an inventory file, handing each to `accept`. Anything but `node`
/// declarations is reported.
pub(super) fn read(cx: &mut Cx, file: &ParsedFile, accept: &mut dyn FnMut(&mut Cx, NodeDraft)) {
    for node in file.document.nodes() {
        read_declaration(cx, &NodeReader::new(node, file.id), accept);
    }
}

/// Reads one top-level declaration of an inventory file.
pub(super) fn read_declaration(cx: &mut Cx, reader: &NodeReader<'_>, accept: &mut dyn FnMut(&mut Cx, NodeDraft)) {
    if !schema::INVENTORY_DECLARATIONS.contains(&reader.kind()) {
        cx.error(
            Diagnostic::error(
                Code::UnknownNode,
                reader.name_span(),
                format!("inventory files contain `node` declarations, not `{}`", reader.kind()),
            )
            .label("unknown node")
            .help("put policy declarations in files named by `include`"),
        );
        return;
    }
    if let Some(draft) = read_node(cx, reader) {
        accept(cx, draft);
    }
}

fn number(cx: &mut Cx, value: Value<'_>) -> Option<Spanned<u32>> {
    value.u32(cx).map(|number| Spanned::new(number, value.span))
}

fn bytes(cx: &mut Cx, value: Value<'_>) -> Option<Spanned<String>> {
    value.quantity_text(cx, BYTES)
}

/// `None` without a host name: nothing else of the node is read, since nothing could name it.
fn read_node(cx: &mut Cx, reader: &NodeReader<'_>) -> Option<NodeDraft> {
    let props = reader.props(cx, schema::NODE.properties);
    let children = reader.children(cx, schema::NODE.children);
    let args = reader.expect_args(cx, 1, 1, "the node's host name")?;
    let name = args[0].string(cx);
    let arch = props.require(cx, reader, "arch").and_then(|value| value.string(cx));
    let rack = props.get("rack").map(|value| value.string(cx));
    let chassis = props.get("chassis").map(|value| value.string(cx));
    let domain = props.get("nvlink-domain").map(|value| value.string(cx));
    let capacity = props.get("capacity").map(|value| value.string(cx));
    let cpu = NodeReader::single(cx, &children, "cpu").map(|cpu| read_cpu(cx, cpu));
    let memory = NodeReader::single(cx, &children, "memory").map(|memory| {
        // Read like every leaf, so that a property on it is an error rather than ignored.
        memory.leaf_args(cx, 1, 1, "the host memory, such as \"512GiB\"").and_then(|args| bytes(cx, args[0]))
    });
    let (cost, egress) = match NodeReader::single(cx, &children, "cost") {
        None => (None, None),
        Some(cost) => {
            let cost_props = cost.props(cx, schema::NODE_COST.properties);
            cost.children(cx, &[]);
            let no_arguments = cost.expect_args(cx, 0, 0, "no arguments (the prices are properties)").is_some();
            let egress = cost_props.get("egress-tb").map(|value| value.money_digits(cx));
            // Either price alone is a cost; a `cost` with neither says nothing.
            let gpu_hour = match (cost_props.get("gpu-hour"), &egress) {
                (Some(value), _) => Some(value.money_digits(cx)),
                (None, Some(_)) => None,
                (None, None) => {
                    cx.error(
                        Diagnostic::error(Code::MissingValue, cost.name_span(), "`cost` names no price")
                            .label("no `gpu-hour=` or `egress-tb=`")
                            .help(format!("give `gpu-hour=`, `egress-tb=` or both, such as `cost gpu-hour=({})3.10`", cx.currency.code())),
                    );
                    Some(None)
                }
            };
            // A `cost` with an argument is refused whole, like any invalid value.
            if no_arguments { (gpu_hour, egress) } else { (Some(None), egress) }
        }
    };
    let gpus = children.iter().filter(|child| child.kind() == "gpu").map(|gpu| read_gpu(cx, gpu)).collect();
    let labels = children.iter().filter(|child| child.kind() == "label").map(|label| read_label(cx, label)).collect();
    Some(NodeDraft {
        form: InventoryFormat::Kdl,
        span: args[0].span,
        name,
        arch,
        rack,
        chassis,
        domain,
        capacity,
        cpu,
        memory,
        cost,
        egress,
        gpus,
        labels,
    })
}

fn read_cpu(cx: &mut Cx, reader: &NodeReader<'_>) -> CpuDraft {
    let props = reader.props(cx, schema::NODE_CPU.properties);
    let children = reader.children(cx, schema::NODE_CPU.children);
    CpuDraft {
        harts: props.require(cx, reader, "harts").and_then(|value| number(cx, value)),
        cores: props.get("cores").map(|value| number(cx, value)),
        sockets: props.get("sockets").map(|value| number(cx, value)),
        isa: props.get("isa").map(|value| value.string(cx)),
        numa_nodes: props.get("numa-nodes").map(|value| number(cx, value)),
        model: props.get("model").map(|value| value.string(cx)),
        vector: props.get("vector").map(|value| value.string(cx)),
        profiles: children.iter().filter(|child| child.kind() == "profile").map(|profile| read_profile(cx, profile)).collect(),
        numa: children.iter().filter(|child| child.kind() == "numa").map(|numa| read_numa(cx, numa)).collect(),
    }
}

/// `profile "rva23u64" verdict="missing" missing="zfa zcb" unverifiable="ziccif"`: the lists
/// are space-separated extension names.
fn read_profile(cx: &mut Cx, reader: &NodeReader<'_>) -> ProfileDraft {
    let props = reader.props(cx, schema::NODE_CPU_PROFILE.properties);
    reader.children(cx, &[]);
    let unnamed = ProfileDraft { span: reader.name_span(), profile: None, verdict: None, missing: None, unverifiable: None };
    let Some(args) = reader.expect_args(cx, 1, 1, "the profile name, such as \"rva23u64\"") else {
        // Without its name the profile is left out, and its values are not worth reading.
        return unnamed;
    };
    let profile = args[0].string(cx);
    let verdict = props.require(cx, reader, "verdict").and_then(|value| value.string(cx));
    let mut words = |key: &str| {
        props
            .get(key)
            .map(|value| value.string(cx).map(|text| Spanned::new(text.value.split_whitespace().map(str::to_owned).collect(), text.span)))
    };
    let missing = words("missing");
    let unverifiable = words("unverifiable");
    ProfileDraft { profile, verdict, missing, unverifiable, ..unnamed }
}

/// `numa 0 cpus="0-7,16-23" memory="64GiB"`.
fn read_numa(cx: &mut Cx, reader: &NodeReader<'_>) -> NumaDraft {
    let props = reader.props(cx, schema::NODE_CPU_NUMA.properties);
    reader.children(cx, &[]);
    let id = reader.expect_args(cx, 1, 1, "the NUMA node id").and_then(|args| number(cx, args[0]));
    NumaDraft { id, cpus: props.get("cpus").map(|value| value.string(cx)), memory: props.get("memory").map(|value| bytes(cx, value)) }
}

fn read_gpu(cx: &mut Cx, reader: &NodeReader<'_>) -> GpuDraft {
    let props = reader.props(cx, schema::NODE_GPU.properties);
    let children = reader.children(cx, schema::NODE_GPU.children);
    let index = reader.expect_args(cx, 1, 1, "the GPU's index").and_then(|args| number(cx, args[0]));
    GpuDraft {
        span: reader.name_span(),
        index,
        model: props.require(cx, reader, "model").and_then(|value| value.string(cx)),
        memory: props.get("memory").map(|value| bytes(cx, value)),
        uuid: props.get("uuid").map(|value| value.string(cx)),
        pci: props.get("pci").map(|value| value.string(cx)),
        numa: props.get("numa").map(|value| number(cx, value)),
        mig: props.get("mig").map(|value| value.string(cx)),
        instances: children.iter().filter(|child| child.kind() == "mig-instance").map(|instance| read_instance(cx, instance)).collect(),
        links: children.iter().filter(|child| child.kind() == "nvlink").map(|link| read_link(cx, link)).collect(),
    }
}

fn read_instance(cx: &mut Cx, reader: &NodeReader<'_>) -> MigDraft {
    let props = reader.props(cx, schema::NODE_GPU_MIG_INSTANCE.properties);
    reader.children(cx, &[]);
    MigDraft {
        span: reader.name_span(),
        profile: props.require(cx, reader, "profile").and_then(|value| value.string(cx)),
        count: props.get("count").map(|value| number(cx, value)),
    }
}

fn read_link(cx: &mut Cx, reader: &NodeReader<'_>) -> LinkDraft {
    let props = reader.props(cx, schema::NODE_GPU_NVLINK.properties);
    reader.children(cx, &[]);
    LinkDraft {
        span: reader.name_span(),
        peer: props.require(cx, reader, "peer").and_then(|value| number(cx, value)),
        links: props.get("links").map(|value| number(cx, value)),
        bandwidth: props.require(cx, reader, "bandwidth").and_then(|value| value.quantity_text(cx, BANDWIDTH)),
    }
}

/// `label "zone" "a"`. A key that is not a string leaves the value unread, as one mistake
/// is enough to leave the label out.
fn read_label(cx: &mut Cx, reader: &NodeReader<'_>) -> LabelDraft {
    let Some(args) = reader.leaf_args(cx, 2, 2, "a label key and value") else {
        return LabelDraft { key: None, value: None };
    };
    let key = args[0].string(cx);
    let value = key.as_ref().and_then(|_| args[1].string(cx));
    LabelDraft { key, value }
}
