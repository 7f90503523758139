//! Lowering: syntax trees to the checked [`Model`]. Lowering reads every file of a project
//! through a [`World`], resolves every reference and normalises every unit, and returns the
//! model together with *all* diagnostics. Elements that fail to lower are left out of the
//! model (their errors are reported), but for tiers, teams, classes and pools, which are kept
//! `recovered` with a stand-in for each faulty setting, and plans, which keep the stages that
//! lowered (and, with an unknown team, are recovered with a stand-in team): so what names them is still checked, and a model with errors is never checked
//! clean.

// One module per element of the language (pool, tier, team, ...), lowered in the order
// `load` calls them; the shared machinery (context, reader, values, names, schema) beside them.
mod admin_accounts;
mod alert;
mod budget;
mod class;
mod context;
mod inventory;
mod kubernetes;
mod launch;
mod metric;
mod migration;
mod names;
mod plans;
mod policy_test;
mod pool;
mod project;
pub(crate) mod reader;
mod route;
pub mod schema;
mod score;
mod team;
mod telemetry;
mod tier;
mod values;

use kdl::KdlDocument;

use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::model::Model;
use crate::source::{MAX_INVENTORY_BYTES, MAX_POLICY_BYTES, RelPath, Sources, World, WorldError};
use crate::span::{FileId, Span};
use crate::syntax;

pub use inventory::{InventoryEntry, InventoryFormat, assemble_inventory, read_inventory_file, read_inventory_json};

use context::Cx;
use names::Tables;
use reader::NodeReader;

/// The name of the project file at the root of every project.
pub const PROJECT_FILE: &str = "placid.kdl";

use schema::{POLICY_DECLARATIONS, PROJECT_DECLARATIONS};

/// The result of loading a project: its sources, the model and every diagnostic.
pub struct Compilation {
    /// Every file that was read, for rendering diagnostics.
    pub sources: Sources,
    /// The model (complete when `diagnostics` has no errors).
    pub model: Model,
    /// Every problem found while lowering.
    pub diagnostics: Diagnostics,
}

/// A parsed policy or inventory file.
struct ParsedFile {
    id: FileId,
    document: KdlDocument,
}

/// Loads, parses and lowers the project that `world` provides.
pub fn load(world: &dyn World) -> Compilation {
    let mut sources = Sources::new();
    let mut cx = Cx::new();
    let project_path = RelPath::new(PROJECT_FILE).unwrap_or_else(|_| unreachable!("a valid literal path"));
    let project_text = match world.read(&project_path, MAX_POLICY_BYTES) {
        Ok(text) => text,
        Err(error) => {
            let help = match error.code {
                Code::UnreadableSource => "run placid in (or point it at) a directory with a placid.kdl project file",
                code => read_help(code),
            };
            cx.error(Diagnostic::error(error.code, Span::DETACHED, format!("cannot read {PROJECT_FILE}: {}", error.reason)).help(help));
            return Compilation { sources, model: Model::default(), diagnostics: cx.diagnostics };
        }
    };
    let project_id = sources.add(project_path, project_text);
    let project_file = parse_file(&mut cx, &sources, project_id);

    let settings = project::lower(&mut cx, &sources, &project_file);

    let mut policy_files = vec![project_file];
    for (pattern, span) in &settings.includes {
        for path in expand(&mut cx, world, pattern, *span, "include") {
            if path.as_str() == PROJECT_FILE {
                continue;
            }
            if let Some(id) = read(&mut cx, world, &mut sources, path, MAX_POLICY_BYTES, *span) {
                policy_files.push(parse_file(&mut cx, &sources, id));
            }
        }
    }
    for file in &policy_files[1..] {
        reject_project_kinds(&mut cx, file);
    }

    let mut inventory_nodes = Vec::new();
    for (pattern, span) in &settings.inventory {
        for path in expand(&mut cx, world, pattern, *span, "inventory") {
            let Some(id) = read(&mut cx, world, &mut sources, path.clone(), MAX_INVENTORY_BYTES, *span) else {
                continue;
            };
            let text = sources.get(id).map(|file| file.text.as_str()).unwrap_or_default();
            inventory_nodes.extend(inventory::read(&mut cx, id, text, InventoryFormat::of_path(path.as_str())));
        }
    }

    // A file that does not parse (or nests too deep to parse) hides its declarations;
    // lowering the rest would report every reference to them as unresolved. Syntax errors
    // are reported alone.
    if cx.diagnostics.iter().any(|diagnostic| matches!(diagnostic.code, Code::KdlSyntax | Code::NestingTooDeep)) {
        let mut diagnostics = cx.diagnostics;
        diagnostics.sort();
        return Compilation { sources, model: Model { project: settings.project, ..Model::default() }, diagnostics };
    }

    let mut model = Model { project: settings.project, ..Model::default() };
    inventory::assemble(&mut cx, &mut model, inventory_nodes);

    let declarations: Vec<(FileId, &kdl::KdlNode)> =
        policy_files.iter().flat_map(|file| file.document.nodes().iter().map(move |node| (file.id, node))).collect();
    let of_kind = |kind: &str| -> Vec<NodeReader<'_>> {
        declarations.iter().filter(|(_, node)| node.name().value() == kind).map(|(file, node)| NodeReader::new(node, *file)).collect()
    };
    for (file, node) in &declarations {
        let kind = node.name().value();
        if !POLICY_DECLARATIONS.contains(&kind) && !PROJECT_DECLARATIONS.contains(&kind) {
            let reader = NodeReader::new(node, *file);
            cx.error(
                Diagnostic::error(Code::UnknownNode, reader.name_span(), format!("unknown declaration `{kind}`"))
                    .label("unknown node")
                    .maybe_help(crate::suggest::help_for(kind, POLICY_DECLARATIONS.iter().chain(PROJECT_DECLARATIONS).copied())),
            );
        }
    }

    // Kind by kind in dependency order, so each kind resolves references to the kinds before it.
    let mut tables = Tables::new(&model.domains);
    pool::lower(&mut cx, &mut model, &mut tables, &of_kind("pool"));
    team::lower_cost_centers(&mut cx, &mut model, &mut tables, &of_kind("cost-center"));
    class::lower(&mut cx, &mut model, &mut tables, &of_kind("class"));
    score::lower(&mut cx, &sources, &mut model, &mut tables, &of_kind("score"));
    tier::lower(&mut cx, &mut model, &mut tables, &of_kind("tier"));
    team::lower_teams(&mut cx, &mut model, &mut tables, &of_kind("team"));
    metric::lower(&mut cx, &mut model, &mut tables, &of_kind("metric"));
    plans::lower(&mut cx, &mut model, &tables, &of_kind("plan"));
    migration::lower(&mut cx, &mut model, &tables, &of_kind("migration"));
    alert::lower(&mut cx, &mut model, &tables, &of_kind("alert"));
    policy_test::lower(&mut cx, &mut model, &tables, &of_kind("test"));
    model.admin_accounts = admin_accounts::lower(&mut cx, &of_kind("admin-accounts"));
    model.routes = route::lower(&mut cx, &tables, &of_kind("route"));
    kubernetes::resolve(&mut cx, &mut model, &tables.scores);
    kubernetes::require_steps_image(&mut cx, &model);
    model.telemetry = telemetry::lower(&mut cx, &model, &of_kind("telemetry"));

    let mut diagnostics = cx.diagnostics;
    diagnostics.sort();
    Compilation { sources, model, diagnostics }
}

/// Parses a policy file: through the plain reader when it is in its subset, as generated
/// policy is, since lowering reads nothing of the formatting the crate's parser keeps at
/// several times the cost; otherwise through the crate, whose diagnostics it then reports.
fn parse_file(cx: &mut Cx, sources: &Sources, id: FileId) -> ParsedFile {
    let text = sources.get(id).map(|file| file.text.as_str()).unwrap_or_default();
    if let Some(document) = syntax::plain::read(text) {
        return ParsedFile { id, document };
    }
    let (document, diagnostics) = syntax::parse(id, text);
    cx.diagnostics.extend(diagnostics);
    ParsedFile { id, document }
}

fn read(cx: &mut Cx, world: &dyn World, sources: &mut Sources, path: RelPath, max_bytes: u64, span: Span) -> Option<FileId> {
    match world.read(&path, max_bytes) {
        Ok(text) => Some(sources.add(path, text)),
        Err(error) => {
            cx.error(read_error(&error, format!("cannot read `{path}`"), span));
            None
        }
    }
}

/// The diagnostic for a file a [`World`] could not read, at `span` (what named the file).
pub fn read_error(error: &WorldError, what: String, span: Span) -> Diagnostic {
    Diagnostic::error(error.code, span, format!("{what}: {}", error.reason)).label("named here").help(read_help(error.code))
}

/// How to fix a file that could not be read, by the code a [`World`] gave the problem.
fn read_help(code: Code) -> &'static str {
    match code {
        Code::FileTooLarge => "split it into smaller files (include and inventory patterns take globs), or narrow the pattern",
        Code::SpecialFile => "placid reads regular files only; replace it, or narrow the pattern that matched it",
        Code::IncludeOutsideRoot => "files may not leave the project root, also not through symlinks",
        _ => "check that the file exists and is readable",
    }
}

/// Expands one glob pattern of the project file into sorted paths inside the root.
fn expand(cx: &mut Cx, world: &dyn World, pattern: &str, span: Span, what: &str) -> Vec<RelPath> {
    let relative = match RelPath::new(pattern) {
        Ok(relative) => relative,
        Err(reason) => {
            cx.error(
                Diagnostic::error(Code::IncludeOutsideRoot, span, format!("{what} path `{}` is refused: {reason}", pattern.escape_debug()))
                    .label("outside the project root")
                    .help("name files relative to the directory of placid.kdl, without `..`"),
            );
            return Vec::new();
        }
    };
    // The normalised pattern (`./policy/*.kdl` -> `policy/*.kdl`), so every world matches alike.
    match world.glob(relative.as_str()) {
        Ok(paths) if paths.is_empty() => {
            cx.error(
                Diagnostic::error(Code::UnreadableSource, span, format!("{what} pattern `{}` matches no file", pattern.escape_debug()))
                    .label("matches nothing")
                    .help("check the pattern; it is relative to the directory of placid.kdl"),
            );
            Vec::new()
        }
        Ok(paths) => paths,
        Err(error) => {
            cx.error(
                Diagnostic::error(error.code, span, format!("{what} pattern `{}`: {}", pattern.escape_debug(), error.reason))
                    .label("refused")
                    .help(read_help(error.code)),
            );
            Vec::new()
        }
    }
}

fn reject_project_kinds(cx: &mut Cx, file: &ParsedFile) {
    for node in file.document.nodes() {
        let reader = NodeReader::new(node, file.id);
        if PROJECT_DECLARATIONS.contains(&reader.kind()) {
            cx.error(
                Diagnostic::error(Code::UnknownNode, reader.name_span(), format!("`{}` may only appear in {PROJECT_FILE}", reader.kind()))
                    .label("not allowed in an included file")
                    .help(format!("move it to {PROJECT_FILE}")),
            );
        }
    }
}
