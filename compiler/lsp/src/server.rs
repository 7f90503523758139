//! The message loop and the server's state: the open documents, the projects they belong to
//! (found by walking up to `placid.kdl`), and each project's last analysis. Documents are
//! checked when the loop has nothing else to read, so a burst of edits costs one check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability, CompletionOptions, CompletionParams,
    CompletionResponse, DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DocumentFormattingParams,
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams, HoverProviderCapability, Location, MarkupContent,
    MarkupKind, OneOf, PublishDiagnosticsParams, Range, ReferenceParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Uri, WorkspaceEdit,
};
use placid_driver::world::FsWorld;
use placid_lang::source::RelPath;
use placid_lang::span::FileId;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::names::Occurrence;
use crate::outline::Statement;
use crate::project::{self, Analysis, PROJECT_FILE};
use crate::{Error, complete, convert, hover, names, outline};

/// What the server offers, sent in its answer to `initialize`.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        // Whole documents: placid files are small, and a full text cannot drift from the
        // client's the way a misapplied incremental edit could.
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["=".to_owned(), "\"".to_owned()]),
            ..CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// Runs the protocol on `connection`: the handshake, then the loop.
pub fn run(connection: &Connection) -> Result<(), Error> {
    let (id, _params) = connection.initialize_start()?;
    let info = ServerInfo { name: "placid".to_owned(), version: Some(env!("CARGO_PKG_VERSION").to_owned()) };
    let result = serde_json::json!({ "capabilities": capabilities(), "serverInfo": info });
    connection.initialize_finish(id, result)?;
    let mut server = Server { connection, documents: BTreeMap::new(), projects: BTreeMap::new() };
    loop {
        let message = if server.projects.values().any(|project| project.dirty) {
            match connection.receiver.try_recv() {
                Ok(message) => message,
                Err(error) if error.is_empty() => {
                    server.refresh()?;
                    continue;
                }
                Err(_) => return Err(Error("the client closed the connection".to_owned())),
            }
        } else {
            connection.receiver.recv().map_err(|_| Error("the client closed the connection".to_owned()))?
        };
        match message {
            Message::Request(request) => {
                if connection.handle_shutdown(&request)? {
                    return Ok(());
                }
                server.request(request)?;
            }
            Message::Notification(notification) if notification.method == "exit" => return Ok(()),
            Message::Notification(notification) => server.notification(notification),
            // The server sends no requests, so no response is awaited.
            Message::Response(_) => {}
        }
    }
}

/// An open document.
struct Document {
    /// The URI the client named it by, which diagnostics must use.
    uri: Uri,
    /// Its text in the editor.
    text: String,
}

/// A project with open documents.
struct Project {
    disk: FsWorld,
    /// Whether an open document changed since the last analysis.
    dirty: bool,
    analysis: Option<Analysis>,
    /// Files that were last given diagnostics, to clear when they become clean.
    published: BTreeSet<PathBuf>,
}

struct Server<'c> {
    connection: &'c Connection,
    /// Open documents by their path, with symlinks resolved.
    documents: BTreeMap<PathBuf, Document>,
    /// Projects by their root, with symlinks resolved.
    projects: BTreeMap<PathBuf, Project>,
}

/// The path of `uri` with symlinks resolved (of its directory, for a file not saved yet).
fn real_path(uri: &Uri) -> Option<PathBuf> {
    let path = convert::path(uri)?;
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let parent = path.parent()?.canonicalize().ok()?;
    Some(parent.join(path.file_name()?))
}

/// The root of the project holding `path`: the nearest directory above it with a
/// `placid.kdl`.
fn project_root(path: &Path) -> Option<PathBuf> {
    path.ancestors().skip(1).find(|directory| directory.join(PROJECT_FILE).is_file()).map(Path::to_path_buf)
}

impl Server<'_> {
    fn send(&self, message: impl Into<Message>) -> Result<(), Error> {
        self.connection.sender.send(message.into()).map_err(|_| Error("the client closed the connection".to_owned()))
    }

    /// Marks the project of `path` as changed, opening it the first time.
    fn touch(&mut self, path: &Path) {
        let Some(root) = project_root(path) else { return };
        if let Some(project) = self.projects.get_mut(&root) {
            project.dirty = true;
            return;
        }
        if let Ok(disk) = FsWorld::new(&root) {
            self.projects.insert(root, Project { disk, dirty: true, analysis: None, published: BTreeSet::new() });
        }
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                let Some(params) = params::<DidOpenTextDocumentParams>(notification.params) else { return };
                let Some(path) = real_path(&params.text_document.uri) else { return };
                self.documents.insert(path.clone(), Document { uri: params.text_document.uri, text: params.text_document.text });
                self.touch(&path);
            }
            "textDocument/didChange" => {
                let Some(params) = params::<DidChangeTextDocumentParams>(notification.params) else { return };
                let Some(path) = real_path(&params.text_document.uri) else { return };
                let Some(document) = self.documents.get_mut(&path) else { return };
                for change in params.content_changes {
                    match change.range {
                        // A client may send ranges even so; apply them rather than lose the edit.
                        Some(range) => {
                            let start = convert::offset(&document.text, range.start);
                            let end = convert::offset(&document.text, range.end).max(start);
                            document.text.replace_range(start..end, &change.text);
                        }
                        None => document.text = change.text,
                    }
                }
                self.touch(&path);
            }
            "textDocument/didClose" => {
                let Some(params) = params::<DidCloseTextDocumentParams>(notification.params) else { return };
                let Some(path) = real_path(&params.text_document.uri) else { return };
                // The file on disk is the project's again.
                self.documents.remove(&path);
                self.touch(&path);
            }
            "textDocument/didSave" | "workspace/didChangeWatchedFiles" => {
                for project in self.projects.values_mut() {
                    project.dirty = true;
                }
            }
            _ => {}
        }
    }

    /// Checks every changed project and publishes its diagnostics.
    fn refresh(&mut self) -> Result<(), Error> {
        let roots: Vec<PathBuf> = self.projects.iter().filter(|(_, project)| project.dirty).map(|(root, _)| root.clone()).collect();
        for root in roots {
            self.refresh_project(&root)?;
        }
        Ok(())
    }

    fn refresh_project(&mut self, root: &Path) -> Result<(), Error> {
        let Some(project) = self.projects.get_mut(root) else { return Ok(()) };
        let open: BTreeMap<RelPath, String> = self
            .documents
            .iter()
            .filter_map(|(path, document)| {
                let relative = path.strip_prefix(root).ok()?.to_str()?;
                Some((RelPath::new(relative).ok()?, document.text.clone()))
            })
            .collect();
        let analysis = project::analyse(&project.disk, &open);
        project.dirty = false;
        // Every file with diagnostics, every file that had some (now cleared), and every open
        // document of the project (an editor waits for its first report).
        let mut paths: BTreeSet<PathBuf> = analysis.diagnostics.keys().cloned().collect();
        paths.extend(std::mem::take(&mut project.published));
        paths.extend(self.documents.keys().filter(|path| path.starts_with(root)).cloned());
        project.published = analysis.diagnostics.keys().cloned().collect();
        let mut messages = Vec::new();
        for path in paths {
            let uri = match self.documents.get(&path) {
                Some(document) => document.uri.clone(),
                None => match convert::uri(&path) {
                    Some(uri) => uri,
                    None => continue,
                },
            };
            let diagnostics = analysis.diagnostics.get(&path).cloned().unwrap_or_default();
            let params = PublishDiagnosticsParams { uri, diagnostics, version: None };
            messages.push(Notification::new("textDocument/publishDiagnostics".to_owned(), params));
        }
        project.analysis = Some(analysis);
        for message in messages {
            self.send(message)?;
        }
        Ok(())
    }

    fn request(&mut self, request: Request) -> Result<(), Error> {
        let id = request.id.clone();
        let response = match request.method.as_str() {
            "textDocument/hover" => self.answer(id, request.params, |server, params| server.hover(params)),
            "textDocument/completion" => self.answer(id, request.params, |server, params| server.completion(params)),
            "textDocument/definition" => self.answer(id, request.params, |server, params| server.definition(params)),
            "textDocument/references" => self.answer(id, request.params, |server, params| server.references(params)),
            "textDocument/formatting" => self.answer(id, request.params, |server, params| server.formatting(params)),
            "textDocument/codeAction" => self.answer(id, request.params, |server, params| server.code_actions(params)),
            method => Ok(Response::new_err(id, ErrorCode::MethodNotFound as i32, format!("placid does not serve `{method}`"))),
        }?;
        self.send(response)
    }

    /// Parses the params, makes sure the analysis is current, and answers with `handler`.
    fn answer<P: DeserializeOwned, R: Serialize>(
        &mut self,
        id: RequestId,
        params: serde_json::Value,
        handler: impl FnOnce(&Self, P) -> R,
    ) -> Result<Response, Error> {
        let params = match serde_json::from_value::<P>(params) {
            Ok(params) => params,
            Err(error) => return Ok(Response::new_err(id, ErrorCode::InvalidParams as i32, error.to_string())),
        };
        // A request reads the text the client has now: check what changed first.
        self.refresh()?;
        Ok(Response::new_ok(id, handler(self, params)))
    }

    /// The open document at `uri`, its project's analysis, and (when the document is one of
    /// the project's files) its outline there.
    fn context(&self, uri: &Uri) -> Option<Context<'_>> {
        let path = real_path(uri)?;
        let document = self.documents.get(&path)?;
        let analysis = project_root(&path).and_then(|root| self.projects.get(&root)).and_then(|project| project.analysis.as_ref());
        Some(Context { path, text: &document.text, analysis })
    }

    fn hover(&self, params: HoverParams) -> Option<Hover> {
        let at = params.text_document_position_params;
        let context = self.context(&at.text_document.uri)?;
        let offset = convert::offset(context.text, at.position);
        let analysis = context.analysis?;
        let (statements, names) = context.outline();
        let found = hover::hover(&analysis.model, &statements, &names, offset)?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: found.text }),
            range: Some(convert::range(context.text, found.start, found.end)),
        })
    }

    fn completion(&self, params: CompletionParams) -> Option<CompletionResponse> {
        let at = params.text_document_position;
        let context = self.context(&at.text_document.uri)?;
        let offset = convert::offset(context.text, at.position);
        let project_file = context.path.file_name().is_some_and(|name| name == PROJECT_FILE);
        let declared = context.analysis.into_iter().flat_map(|analysis| analysis.files.values()).flat_map(|file| file.names.iter());
        Some(CompletionResponse::Array(complete::complete(context.text, offset, project_file, declared)))
    }

    /// Every occurrence of the name at `position` of `uri`, `declarations` or all of them.
    fn occurrences(&self, uri: &Uri, position: lsp_types::Position, declarations: bool) -> Option<Vec<Location>> {
        let context = self.context(uri)?;
        let analysis = context.analysis?;
        let offset = convert::offset(context.text, position);
        let (_, names) = context.outline();
        let name = names.into_iter().find(|name| name.start <= offset && offset <= name.end)?;
        let mut locations = Vec::new();
        for (path, file) in &analysis.files {
            let uri = match self.documents.get(path) {
                Some(document) => document.uri.clone(),
                None => convert::uri(path)?,
            };
            for occurrence in &file.names {
                if occurrence.kind == name.kind && occurrence.key == name.key && (occurrence.declares || !declarations) {
                    locations.push(Location { uri: uri.clone(), range: convert::range(&file.text, occurrence.start, occurrence.end) });
                }
            }
        }
        Some(locations)
    }

    fn definition(&self, params: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
        let at = params.text_document_position_params;
        let locations = self.occurrences(&at.text_document.uri, at.position, true)?;
        (!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations))
    }

    fn references(&self, params: ReferenceParams) -> Option<Vec<Location>> {
        let at = params.text_document_position;
        let mut locations = self.occurrences(&at.text_document.uri, at.position, false)?;
        if !params.context.include_declaration {
            let declarations = self.occurrences(&at.text_document.uri, at.position, true).unwrap_or_default();
            locations.retain(|location| !declarations.contains(location));
        }
        Some(locations)
    }

    fn formatting(&self, params: DocumentFormattingParams) -> Option<Vec<TextEdit>> {
        let context = self.context(&params.text_document.uri)?;
        // A file that does not parse is left alone: its diagnostics say why.
        let formatted = placid_lang::format::format(FileId(0), context.text).ok()?;
        if formatted == context.text {
            return Some(Vec::new());
        }
        Some(vec![TextEdit { range: convert::range(context.text, 0, context.text.len()), new_text: formatted }])
    }

    // `WorkspaceEdit::changes` is keyed by lsp-types' `Uri`, whose parsed parts sit in a
    // cell; its hash and equality are of the string alone, so the key never changes.
    #[allow(clippy::mutable_key_type)]
    fn code_actions(&self, params: CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let context = self.context(&params.text_document.uri)?;
        let fixes = context.analysis?.fixes.get(&context.path)?;
        let actions = fixes
            .iter()
            .filter(|fix| overlaps(fix.at, params.range))
            .map(|fix| {
                let changes = std::collections::HashMap::from([(params.text_document.uri.clone(), vec![fix.edit.clone()])]);
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![fix.diagnostic.clone()]),
                    edit: Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                })
            })
            .collect();
        Some(actions)
    }
}

/// Whether two ranges share a position (touching counts: a cursor at a diagnostic's end).
fn overlaps(left: Range, right: Range) -> bool {
    left.start <= right.end && right.start <= left.end
}

/// A request's document.
struct Context<'a> {
    path: PathBuf,
    text: &'a str,
    analysis: Option<&'a Analysis>,
}

impl Context<'_> {
    /// The document's statements and names: the analysis's when it read this very text,
    /// otherwise (a file the project does not include) scanned now.
    fn outline(&self) -> (Vec<Statement>, Vec<Occurrence>) {
        if let Some(file) = self.analysis.and_then(|analysis| analysis.files.get(&self.path)).filter(|file| file.text == self.text) {
            return (file.statements.clone(), file.names.clone());
        }
        let statements = outline::scan(self.text);
        let names = names::occurrences(&statements);
        (statements, names)
    }
}

/// A notification's params, or `None` when they are malformed (a notification has no answer
/// to carry an error, so it is dropped).
fn params<P: DeserializeOwned>(value: serde_json::Value) -> Option<P> {
    serde_json::from_value(value).ok()
}
