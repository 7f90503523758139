//! Inventory files to nodes, and nodes to NVLink domains and racks. Inventories come as KDL
//! (what people and `placid-probe` write) or as the JSON form of the same model (the fast
//! path for machine-written inventories of thousands of nodes, see docs/language.md).
//!
//! Each form has its own reader ([`kdl`], [`json`]), which knows only its syntax and yields
//! [`draft::NodeDraft`]s; one [`draft::NodeDraft::validate`] applies every rule to both, so
//! the two forms accept the same nodes and report the same mistakes.

mod draft;
mod json;
mod kdl;

use std::collections::BTreeMap;

use crate::diag::{Code, Diagnostic};
use crate::lower::ParsedFile;
use crate::lower::context::Cx;
use crate::lower::inventory::draft::NodeDraft;
use crate::lower::reader::NodeReader;
use crate::model::{Domain, DomainId, Model, Node, NodeId, Rack, RackId};
use crate::name::Name;
use crate::span::{FileId, Spanned};

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
    let entries = read(&mut cx, file, text, format);
    (entries, cx.diagnostics)
}

/// Reads the nodes of one inventory file and validates them; the ones that fail are left out
/// and their errors reported.
pub(super) fn read(cx: &mut Cx, file: FileId, text: &str, format: InventoryFormat) -> Vec<InventoryEntry> {
    let mut entries = Vec::new();
    match format {
        // Each node is validated as soon as it is read, so no more than one draft is ever held.
        InventoryFormat::Json => json::read(cx, file, text, &mut |cx, draft: NodeDraft| entries.extend(draft.validate(cx))),
        InventoryFormat::Kdl => {
            if let Some((plain, diagnostics)) = read_plain(cx, file, text) {
                cx.diagnostics.extend(diagnostics);
                return plain;
            }
            let (document, diagnostics) = crate::syntax::parse(file, text);
            cx.diagnostics.extend(diagnostics);
            kdl::read(cx, &ParsedFile { id: file, document }, &mut |cx, draft: NodeDraft| entries.extend(draft.validate(cx)));
        }
    }
    entries
}

/// Reads a KDL inventory in the plain subset machines write ([`crate::syntax::plain`]), one
/// node at a time, so no document of the whole file is held; `None` when the file leaves the
/// subset, whose nodes are then read again from the `kdl` crate's document. The nodes and
/// diagnostics are those of that path.
fn read_plain(cx: &Cx, file: FileId, text: &str) -> Option<(Vec<InventoryEntry>, crate::diag::Diagnostics)> {
    let mut trial = Cx::new();
    trial.currency = cx.currency;
    let mut entries = Vec::new();
    for node in crate::syntax::plain::nodes(text) {
        let node = node?;
        kdl::read_declaration(&mut trial, &NodeReader::new(&node, file), &mut |cx, draft: NodeDraft| entries.extend(draft.validate(cx)));
    }
    Some((entries, trial.diagnostics))
}

/// Builds the inventory half of a model (nodes, domains, racks) from entries: sorts the nodes,
/// reports duplicate host names and derives domains and racks.
pub fn assemble_inventory(entries: Vec<InventoryEntry>) -> (Model, crate::diag::Diagnostics) {
    let mut cx = Cx::new();
    let mut model = Model::default();
    assemble(&mut cx, &mut model, entries);
    (model, cx.diagnostics)
}

/// Reads the JSON form of an inventory (see [`crate::inventory_json`]) for tools that only
/// need the nodes, with the same validation as the compiler.
pub fn read_inventory_json(text: &str) -> Result<Vec<Node>, crate::diag::Diagnostics> {
    let mut cx = Cx::new();
    let entries = read(&mut cx, FileId(0), text, InventoryFormat::Json);
    if cx.diagnostics.has_errors() {
        return Err(cx.diagnostics);
    }
    Ok(entries.into_iter().map(|entry| entry.node).collect())
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
