//! Inventory files outside a project: reading probed node files from disk, and merging many
//! of them into one inventory (`placid inventory merge`). A merged inventory is checked for
//! what single files cannot show: a node described twice, and NVLink domains or chassis whose
//! nodes disagree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::lower::{InventoryEntry, InventoryFormat, assemble_inventory, read_inventory_file};
use placid_lang::model::{DomainId, Model, Node};
use placid_lang::name::Name;
use placid_lang::source::{MAX_INVENTORY_BYTES, RelPath, Sources};
use placid_lang::span::Span;

use crate::world::read_regular;

/// Reads inventory files (KDL, or JSON by extension) into `sources`; returns the entries of
/// each file in order, with every diagnostic (unreadable files included). Like a project's
/// files, only regular files are read, and at most [`MAX_INVENTORY_BYTES`] of each.
pub fn read_inventories(sources: &mut Sources, paths: &[PathBuf]) -> (Vec<Vec<InventoryEntry>>, Diagnostics) {
    let mut diagnostics = Diagnostics::new();
    let mut files = Vec::new();
    for path in paths {
        let text = match read_regular(path, MAX_INVENTORY_BYTES) {
            Ok(text) => text,
            Err(error) => {
                diagnostics.push(
                    Diagnostic::error(error.code, Span::DETACHED, format!("cannot read {}: {}", path.display(), error.reason))
                        .help("name regular inventory files written by placid-probe"),
                );
                continue;
            }
        };
        let shown = shown_path(path);
        let format = InventoryFormat::of_path(shown.as_str());
        let file = sources.add(shown, text);
        let text = sources.get(file).map(|source| source.text.as_str()).unwrap_or_default();
        let (entries, file_diagnostics) = read_inventory_file(file, text, format);
        diagnostics.extend(file_diagnostics);
        files.push(entries);
    }
    (files, diagnostics)
}

/// The inventory files of a directory (`*.kdl`, `*.json`), sorted. Entries that are not
/// directories are listed whatever they are, so that reading refuses a FIFO or a device by
/// name rather than leaving it out unnoticed.
pub fn inventory_files_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| !path.is_dir() && path.extension().is_some_and(|extension| extension == "kdl" || extension == "json"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// A path for diagnostics: relative to the working directory when inside it, else the file
/// name (diagnostics name source files by relative path).
fn shown_path(path: &Path) -> RelPath {
    let relative = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    let candidates = [relative, Some(path.to_path_buf()), path.file_name().map(PathBuf::from)];
    candidates
        .into_iter()
        .flatten()
        .find_map(|candidate| RelPath::new(&candidate.to_string_lossy()).ok())
        .unwrap_or_else(|| RelPath::new("inventory").unwrap_or_else(|_| unreachable!("a valid literal path")))
}

/// Merges the entries of many files into one inventory model, with every problem.
pub fn merge(files: Vec<Vec<InventoryEntry>>) -> (Model, Diagnostics) {
    let mut diagnostics = Diagnostics::new();
    let mut first_seen: BTreeMap<Name, Span> = BTreeMap::new();
    let mut unique = Vec::new();
    for entry in files.into_iter().flatten() {
        if let Some(first) = first_seen.get(&entry.node.name) {
            diagnostics.push(
                Diagnostic::error(
                    Code::DuplicateInventoryNode,
                    entry.node.span,
                    format!("node `{}` is described by two files", entry.node.name),
                )
                .label("second description")
                .with_secondary(*first, "first described here")
                .help("keep one file per node; re-probe the node or remove the stale file"),
            );
            continue;
        }
        first_seen.insert(entry.node.name.clone(), entry.node.span);
        unique.push(entry);
    }
    let (model, assembled) = assemble_inventory(unique);
    diagnostics.extend(assembled);
    check_domains(&model, &mut diagnostics);
    check_chassis(&model, &mut diagnostics);
    diagnostics.sort();
    (model, diagnostics)
}

fn check_domains(model: &Model, diagnostics: &mut Diagnostics) {
    for (index, domain) in model.domains.iter().enumerate() {
        let members: Vec<&Node> = model.nodes.iter().filter(|node| node.domain == Some(DomainId::from_index(index))).collect();
        for node in members.iter().filter(|node| node.gpus.is_empty()) {
            diagnostics.push(
                Diagnostic::error(
                    Code::InconsistentDomain,
                    node.span,
                    format!("node `{}` is in NVLink domain `{}` but has no GPU", node.name, domain.name),
                )
                .label("no GPU")
                .help("remove `nvlink-domain` from nodes without GPUs"),
            );
        }
        let with_gpus: Vec<&&Node> = members.iter().filter(|node| !node.gpus.is_empty()).collect();
        let Some(first) = with_gpus.first() else {
            continue;
        };
        for node in &with_gpus[1..] {
            if node.gpu_model() != first.gpu_model() {
                diagnostics.push(
                    Diagnostic::error(
                        Code::InconsistentDomain,
                        node.span,
                        format!(
                            "NVLink domain `{}` mixes GPU models: `{}` has {}, `{}` has {}",
                            domain.name,
                            node.name,
                            gpu_models(node),
                            first.name,
                            gpu_models(first)
                        ),
                    )
                    .label("different GPUs")
                    .with_secondary(first.span, "first node of the domain")
                    .help("one NVLink domain is one GPU generation; check the node's fabric or its `nvlink-domain`"),
                );
            }
        }
    }
}

fn check_chassis(model: &Model, diagnostics: &mut Diagnostics) {
    let mut first_in_chassis: BTreeMap<&Name, &Node> = BTreeMap::new();
    for node in &model.nodes {
        let Some(chassis) = &node.chassis else {
            continue;
        };
        let Some(first) = first_in_chassis.get(chassis) else {
            first_in_chassis.insert(chassis, node);
            continue;
        };
        if first.domain != node.domain {
            diagnostics.push(
                Diagnostic::error(
                    Code::InconsistentDomain,
                    node.span,
                    format!(
                        "chassis `{chassis}` holds nodes of different NVLink domains: `{}` is in {}, `{}` in {}",
                        node.name,
                        domain_name(model, node),
                        first.name,
                        domain_name(model, first)
                    ),
                )
                .label("other domain")
                .with_secondary(first.span, "first node of the chassis")
                .help("the GPUs of one chassis share its NVLink switches, so its nodes share one domain"),
            );
        }
    }
}

fn gpu_models(node: &Node) -> String {
    node.gpu_model().map_or("mixed models".to_owned(), ToString::to_string)
}

fn domain_name(model: &Model, node: &Node) -> String {
    node.domain.map_or("no NVLink domain".to_owned(), |domain| format!("domain `{}`", model.domain(domain).name))
}
