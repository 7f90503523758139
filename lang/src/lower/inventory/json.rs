//! Reading the JSON form of an inventory ([`crate::inventory_json`]) into drafts. serde reads
//! the syntax and the type of every value; what the values mean is checked by
//! [`super::draft`], for both forms alike.
//!
//! serde gives no positions inside a value it has read, so each node is first cut out of the
//! file as raw JSON: a node that does not match the schema is reported where serde stopped
//! in it, and every value of a node that does carries the span of the node's object. That
//! span is the object's opening brace alone: a report shows the line it is on and the next,
//! which names the node in the files placid writes, where the whole object could run to
//! hundreds of lines.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::diag::{Code, Diagnostic};
use crate::inventory_json::{JsonCpu, JsonGpu, JsonNode};
use crate::lower::context::Cx;
use crate::lower::inventory::InventoryFormat;
use crate::lower::inventory::draft::{
    CpuDraft, Given, GpuDraft, LabelDraft, LinkDraft, MigDraft, NodeDraft, NumaDraft, ProfileDraft, Required,
};
use crate::span::{FileId, Span, Spanned};

/// A whole file with its nodes left unread, as [`crate::inventory_json::JsonInventory`]
/// without their schema.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInventory<'a> {
    #[serde(borrow)]
    nodes: Vec<&'a RawValue>,
}

/// Reads the nodes of an inventory file, handing each to `accept`. A file that is not JSON,
/// or not an object of `nodes`, is reported alone; a node that does not match the schema is
/// reported and left out.
pub(super) fn read(cx: &mut Cx, file: FileId, text: &str, accept: &mut dyn FnMut(&mut Cx, NodeDraft)) {
    let inventory: RawInventory<'_> = match serde_json::from_str(text) {
        Ok(inventory) => inventory,
        Err(error) => return report(cx, file, text, 0, &error),
    };
    for raw in inventory.nodes {
        let node_text = raw.get();
        let start = offset_in(text, node_text);
        match serde_json::from_str::<JsonNode>(node_text) {
            Ok(node) => accept(cx, node_draft(At(Span::new(file, start, start + 1)), node)),
            Err(error) => report(cx, file, node_text, start, &error),
        }
    }
}

/// Where `part`, a slice of `text`, starts in it. serde_json borrows raw values from the text
/// it reads, so their addresses give their offsets.
fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr().addr().saturating_sub(text.as_ptr().addr()).min(text.len())
}

/// Reports a serde error in `text`, which starts at byte `start` of the file.
fn report(cx: &mut Cx, file: FileId, text: &str, start: usize, error: &serde_json::Error) {
    let offset = start + offset_of(text, error.line(), error.column());
    // serde_json appends the line and column to its message; the span says where instead, as
    // those would count from the start of the node.
    let message = error.to_string();
    let reason = match message.rfind(" at line ") {
        Some(end) if error.line() > 0 => &message[..end],
        _ => &message,
    };
    cx.error(
        Diagnostic::error(Code::KdlSyntax, Span::new(file, offset, offset), format!("invalid JSON inventory: {reason}"))
            .label("here")
            .help("JSON inventories follow the schema in docs/language.md (`placid-probe --format json` writes it)"),
    );
}

fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// The span every value of one node carries: the node's object.
#[derive(Clone, Copy)]
struct At(Span);

impl At {
    fn required<T>(self, value: T) -> Required<T> {
        Some(Spanned::new(value, self.0))
    }

    fn given<T>(self, value: Option<T>) -> Given<T> {
        value.map(|value| self.required(value))
    }
}

fn node_draft(at: At, node: JsonNode) -> NodeDraft {
    NodeDraft {
        form: InventoryFormat::Json,
        span: at.0,
        name: at.required(node.name),
        arch: at.required(node.arch),
        rack: at.given(node.rack),
        chassis: at.given(node.chassis),
        domain: at.given(node.nvlink_domain),
        capacity: at.given(node.capacity),
        cpu: node.cpu.map(|cpu| cpu_draft(at, cpu)),
        memory: at.given(node.memory),
        cost: at.given(node.cost_gpu_hour),
        egress: at.given(node.cost_egress_tb),
        gpus: node.gpus.into_iter().map(|gpu| gpu_draft(at, gpu)).collect(),
        labels: node.labels.into_iter().map(|(key, value)| LabelDraft { key: at.required(key), value: at.required(value) }).collect(),
    }
}

fn cpu_draft(at: At, cpu: JsonCpu) -> CpuDraft {
    CpuDraft {
        harts: at.required(cpu.harts),
        cores: at.given(cpu.cores),
        sockets: at.given(cpu.sockets),
        isa: at.given(cpu.isa),
        numa_nodes: at.given(cpu.numa_nodes),
        model: at.given(cpu.model),
        vector: at.given(cpu.vector),
        profiles: cpu
            .profiles
            .into_iter()
            .map(|profile| ProfileDraft {
                span: at.0,
                profile: at.required(profile.profile),
                verdict: at.required(profile.verdict),
                missing: at.given(Some(profile.missing)),
                unverifiable: at.given(Some(profile.unverifiable)),
            })
            .collect(),
        numa: cpu
            .numa
            .into_iter()
            .map(|numa| NumaDraft { id: at.required(numa.id), cpus: at.given(Some(numa.cpus)), memory: at.given(numa.memory) })
            .collect(),
    }
}

fn gpu_draft(at: At, gpu: JsonGpu) -> GpuDraft {
    GpuDraft {
        span: at.0,
        index: at.required(gpu.index),
        model: at.required(gpu.model),
        memory: at.given(gpu.memory),
        uuid: at.given(gpu.uuid),
        pci: at.given(gpu.pci),
        numa: at.given(gpu.numa),
        mig: at.given(gpu.mig),
        instances: gpu
            .mig_instances
            .into_iter()
            .map(|instance| MigDraft { span: at.0, profile: at.required(instance.profile), count: at.given(Some(instance.count)) })
            .collect(),
        links: gpu
            .nvlinks
            .into_iter()
            .map(|link| LinkDraft {
                span: at.0,
                peer: at.required(link.peer),
                links: at.given(Some(link.links)),
                bandwidth: at.required(link.bandwidth),
            })
            .collect(),
    }
}
