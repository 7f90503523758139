//! A test client for the language server: drives `placid_lsp::run` in process over
//! `lsp_server::Connection::memory()`, with JSON values for messages, and copies the bundled
//! example project into a temporary directory for it to serve.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

/// How long a test waits for one message before it fails.
const WAIT: Duration = Duration::from_secs(60);

/// The example project `name` under policy-examples, copied into a temporary directory
/// (without its broken variants).
pub fn example(name: &str) -> (tempfile::TempDir, PathBuf) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples").join(name);
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let root = dir.path().join(name);
    copy(&from, &root);
    let root = root.canonicalize().unwrap_or_else(|error| panic!("{error}"));
    (dir, root)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|error| panic!("{error}"));
    for entry in std::fs::read_dir(from).unwrap_or_else(|error| panic!("{error}")) {
        let entry = entry.unwrap_or_else(|error| panic!("{error}"));
        let name = entry.file_name();
        if name == "broken" {
            continue;
        }
        let target = to.join(&name);
        if entry.path().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|error| panic!("{error}"));
        }
    }
}

/// The `file://` URI of a path (test paths need no escaping).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A client connected to a server thread.
pub struct Client {
    connection: Connection,
    server: Option<JoinHandle<Result<(), placid_lsp::Error>>>,
    next_id: i32,
    /// Notifications that arrived while waiting for something else.
    pub notifications: Vec<Notification>,
}

impl Client {
    /// Starts a server and completes the handshake.
    pub fn start() -> Client {
        let (server, connection) = Connection::memory();
        let handle = std::thread::spawn(move || placid_lsp::run(&server));
        let mut client = Client { connection, server: Some(handle), next_id: 0, notifications: Vec::new() };
        let result = client.request("initialize", json!({ "capabilities": {}, "processId": null, "rootUri": null }));
        assert!(result["capabilities"]["hoverProvider"].as_bool().unwrap_or(false), "{result}");
        client.notify("initialized", json!({}));
        client
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let message = Message::Notification(Notification::new(method.to_owned(), params));
        self.connection.sender.send(message).unwrap_or_else(|error| panic!("{error}"));
    }

    /// Sends a request and waits for its response: the result, or the error object as
    /// `{"error": ...}`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let message = Message::Request(Request::new(id.clone(), method.to_owned(), params));
        self.connection.sender.send(message).unwrap_or_else(|error| panic!("{error}"));
        loop {
            match self.connection.receiver.recv_timeout(WAIT).unwrap_or_else(|error| panic!("no response to {method}: {error}")) {
                Message::Response(response) if response.id == id => {
                    return match response.response_result {
                        Ok(result) => result,
                        Err(error) => json!({ "error": { "code": error.code, "message": error.message } }),
                    };
                }
                Message::Notification(notification) => self.notifications.push(notification),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// Waits for the next diagnostics published for `uri` (taking any that arrived already).
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        if let Some(index) = self.notifications.iter().position(|notification| is_for(notification, uri)) {
            let notification = self.notifications.remove(index);
            return list(&notification.params["diagnostics"]);
        }
        loop {
            match self.connection.receiver.recv_timeout(WAIT).unwrap_or_else(|error| panic!("no diagnostics for {uri}: {error}")) {
                Message::Notification(notification) if is_for(&notification, uri) => return list(&notification.params["diagnostics"]),
                Message::Notification(notification) => self.notifications.push(notification),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// Opens a document with `text`.
    pub fn open(&self, path: &Path, text: &str) {
        let params = json!({ "textDocument": { "uri": uri(path), "languageId": "kdl", "version": 1, "text": text } });
        self.notify("textDocument/didOpen", params);
    }

    /// Replaces a document's text.
    pub fn change(&self, path: &Path, version: i32, text: &str) {
        let params = json!({ "textDocument": { "uri": uri(path), "version": version }, "contentChanges": [{ "text": text }] });
        self.notify("textDocument/didChange", params);
    }

    /// Shuts the server down and checks that it stopped cleanly.
    pub fn shutdown(mut self) {
        let result = self.request("shutdown", Value::Null);
        assert_eq!(result, Value::Null);
        self.notify("exit", Value::Null);
        let handle = self.server.take().unwrap_or_else(|| panic!("no server"));
        let outcome = handle.join().unwrap_or_else(|_| panic!("the server panicked"));
        assert!(outcome.is_ok(), "{outcome:?}");
    }
}

fn is_for(notification: &Notification, uri: &str) -> bool {
    notification.method == "textDocument/publishDiagnostics" && notification.params["uri"] == uri
}

fn list(value: &Value) -> Vec<Value> {
    value.as_array().cloned().unwrap_or_default()
}

/// The LSP position (line, UTF-16 column; the texts here are ASCII) of the first `needle`
/// in `text`, plus `into` characters.
pub fn position_of(text: &str, needle: &str, into: usize) -> Value {
    let offset = text.find(needle).unwrap_or_else(|| panic!("`{needle}` is not in the text")) + into;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = offset - before.rfind('\n').map_or(0, |index| index + 1);
    json!({ "line": line, "character": column })
}
