//! `cargo bench -p placid-lsp --bench didchange`: the time from a `didChange` of an open
//! policy file to the `publishDiagnostics` the server answers with, in process over
//! `Connection::memory()`: on the bundled example (policy-examples/cluster, 12 nodes) and on
//! the same project with 1,000 nodes (988 generated aarch64 hosts of 8 GPUs in 25 racks
//! added to its inventory). Each change really changes the text (a comment comes and goes),
//! so every iteration is a full check of the project, as when typing.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::json;

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read") {
        let entry = entry.expect("entry");
        if entry.file_name() == "broken" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `count` generated inventory nodes.
fn generated_nodes(count: usize) -> String {
    let mut text = String::new();
    for index in 0..count {
        text.push_str(&format!(
            "node \"gen-{index:04}\" arch=\"aarch64\" rack=\"g{}\" capacity=\"on-demand\" {{\n    cpu harts=72 cores=72 sockets=1\n    memory \"480GiB\"\n    cost gpu-hour=(usd)2.20\n",
            index / 40
        ));
        for gpu in 0..8 {
            text.push_str(&format!("    gpu {gpu} model=\"GH200\" memory=\"96GiB\"\n"));
        }
        text.push_str("}\n");
    }
    text
}

struct Session {
    client: Connection,
    server: Option<JoinHandle<Result<(), placid_lsp::Error>>>,
    uri: String,
    text: String,
    version: i32,
    _dir: tempfile::TempDir,
}

impl Session {
    fn start(extra_nodes: usize) -> Session {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("cluster");
        copy(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster"), &root);
        if extra_nodes > 0 {
            std::fs::write(root.join("inventory/generated.kdl"), generated_nodes(extra_nodes)).expect("write nodes");
        }
        let root: PathBuf = root.canonicalize().expect("canonical");
        let file = root.join("policy/tiers.kdl");
        let text = std::fs::read_to_string(&file).expect("read");
        let (server, client) = Connection::memory();
        let handle = std::thread::spawn(move || placid_lsp::run(&server));
        let session = Session { client, server: Some(handle), uri: format!("file://{}", file.display()), text, version: 1, _dir: dir };
        session.request("initialize", json!({ "capabilities": {} }));
        session.notify("initialized", json!({}));
        let params = json!({ "textDocument": { "uri": session.uri, "languageId": "kdl", "version": 1, "text": session.text } });
        session.notify("textDocument/didOpen", params);
        let diagnostics = session.wait_for_diagnostics();
        eprintln!("{} nodes: {} diagnostics on tiers.kdl", 12 + extra_nodes, diagnostics);
        session
    }

    fn notify(&self, method: &str, params: serde_json::Value) {
        self.client.sender.send(Message::Notification(Notification::new(method.to_owned(), params))).expect("send");
    }

    fn request(&self, method: &str, params: serde_json::Value) {
        let id = RequestId::from(1);
        self.client.sender.send(Message::Request(Request::new(id.clone(), method.to_owned(), params))).expect("send");
        loop {
            if let Message::Response(response) = self.client.receiver.recv().expect("response") {
                assert_eq!(response.id, id);
                return;
            }
        }
    }

    /// Waits for the diagnostics of the open file; returns how many there are.
    fn wait_for_diagnostics(&self) -> usize {
        loop {
            let message = self.client.receiver.recv_timeout(Duration::from_secs(120)).expect("diagnostics");
            if let Message::Notification(notification) = message
                && notification.method == "textDocument/publishDiagnostics"
                && notification.params["uri"] == self.uri.as_str()
            {
                return notification.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    /// One edit and its diagnostics.
    fn edit(&mut self) -> Duration {
        self.version += 1;
        let text = if self.version % 2 == 0 { format!("{}// edited\n", self.text) } else { self.text.clone() };
        let params = json!({ "textDocument": { "uri": self.uri, "version": self.version }, "contentChanges": [{ "text": text }] });
        let start = Instant::now();
        self.notify("textDocument/didChange", params);
        self.wait_for_diagnostics();
        start.elapsed()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.client.sender.send(Message::Notification(Notification::new("exit".to_owned(), json!(null))));
        if let Some(handle) = self.server.take() {
            let _ = handle.join();
        }
    }
}

fn did_change(c: &mut Criterion) {
    let mut group = c.benchmark_group("didChange to publishDiagnostics");
    group.sample_size(20).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(2));
    for (name, extra) in [("cluster (12 nodes)", 0), ("cluster + 988 nodes (1,000)", 988)] {
        let mut session = Session::start(extra);
        group.bench_function(name, |bench| bench.iter_custom(|iterations| (0..iterations).map(|_| session.edit()).sum()));
    }
    group.finish();
}

criterion_group!(benches, did_change);
criterion_main!(benches);
