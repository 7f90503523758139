//! The extender over HTTP on loopback, with request bodies shaped exactly as kube-scheduler
//! sends `ExtenderArgs` (both `nodeCacheCapable` modes), plus hostile clients: malformed and
//! oversized bodies, too many nodes, more requests or connections than the limits, heads that
//! never end and a plugin that never returns. Every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use placid_extender::client::Client;
use placid_extender::{Extender, Settings};
use placid_scoring::host::{Limits, Plugin};
use serde_json::{Value, json};

mod support;
use support::{Server, example, serve_on_loopback};

const SETTINGS: Settings = Settings {
    max_body: 256 << 10,
    max_nodes: 100,
    timeout: Duration::from_secs(5),
    concurrency: 4,
    header_timeout: Duration::from_secs(10),
    max_connections: 64,
};

/// Longest any test waits for something that should happen.
const PATIENCE: Duration = Duration::from_secs(5);

/// Starts the example's `cost-aware` extender with `settings`.
fn start(settings: Settings) -> Server {
    let loaded = example();
    start_with(loaded.plugin, &loaded.model, settings)
}

fn start_with(plugin: Plugin, model: &placid_lang::model::Model, settings: Settings) -> Server {
    serve_on_loopback(Extender::new(plugin, model, settings))
}

/// A pod as kube-scheduler serialises a `v1.Pod`.
fn pod() -> Value {
    json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": "vit-train-0", "namespace": "vision", "uid": "2b0c9a4e-9d1c-4a52-a4c8-0d8f3b5e2f11",
            "labels": {"placid.dev/comm": "high", "placid.dev/comm-gbps": "400", "placid.dev/rack": "r1", "placid.dev/nvlink-required": "true"}
        },
        "spec": {
            "containers": [{"name": "train", "image": "registry.example.com/vit:1.0",
                "resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"cpu": "8", "nvidia.com/gpu": "4"}}}],
            "nodeSelector": {"kubernetes.io/arch": "riscv64"},
            "schedulerName": "default-scheduler"
        },
        "status": {"phase": "Pending"}
    })
}

/// A `v1.Node` with the labels placid publishes.
fn node(name: &str, rack: &str, cost: &str, nvlink: &str, gpus: &str) -> Value {
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/arch": "riscv64",
            "placid.dev/rack": rack, "placid.dev/cost-per-gpu-hour": cost, "placid.dev/nvlink-gbps": nvlink
        }},
        "spec": {},
        "status": {"capacity": {"nvidia.com/gpu": gpus}, "allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": gpus}}
    })
}

fn post(address: SocketAddr, path: &str, body: &[u8]) -> (u16, Value) {
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    let reply = client.post(path, body).unwrap_or_else(|error| panic!("{error}"));
    let value = serde_json::from_slice(&reply.body).unwrap_or(Value::String(String::from_utf8_lossy(&reply.body).into_owned()));
    (reply.status, value)
}

#[test]
fn extender_serves_both_modes_and_refuses_bad_bodies() {
    let server = start(SETTINGS);
    let address = server.address;

    // nodeCacheCapable: true — names only, features from the inventory.
    let cached = json!({"Pod": pod(), "Nodes": null, "NodeNames": ["rv-a-01", "rv-b-01", "x86-01", "ghost-1"]});
    let (status, filter) = post(address, "/filter", cached.to_string().as_bytes());
    assert_eq!(status, 200, "{filter}");
    assert_eq!(filter["NodeNames"], json!(["rv-a-01", "rv-b-01"]));
    assert_eq!(filter["FailedNodes"]["x86-01"], json!("placid: failed nvlink-if-required"));
    assert_eq!(filter["FailedAndUnresolvableNodes"]["ghost-1"], json!("placid: node not in the inventory"));
    assert_eq!(filter["Error"], json!(""));
    let (status, priorities) = post(address, "/prioritize", cached.to_string().as_bytes());
    assert_eq!(status, 200);
    assert_eq!(
        priorities,
        json!([{"Host": "rv-a-01", "Score": 10}, {"Host": "rv-b-01", "Score": 0}, {"Host": "x86-01", "Score": 0}, {"Host": "ghost-1", "Score": 0}])
    );

    // nodeCacheCapable: false — full Node objects, features from labels and allocatable.
    let nodes = [node("k-a", "r1", "3.10", "900", "4"), node("k-b", "r2", "2.00", "900", "4"), node("k-c", "r1", "1.00", "900", "2")];
    let uncached = json!({"Pod": pod(), "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": null});
    let (status, filter) = post(address, "/filter", uncached.to_string().as_bytes());
    assert_eq!(status, 200, "{filter}");
    let passing: Vec<&str> = filter["Nodes"]["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|item| item["metadata"]["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(passing, vec!["k-a", "k-b"]);
    assert_eq!(filter["Nodes"]["items"][0], nodes[0], "passing nodes are echoed unchanged");
    assert_eq!(filter["FailedNodes"]["k-c"], json!("placid: failed enough-gpus"));
    let (_, priorities) = post(address, "/prioritize", uncached.to_string().as_bytes());
    // k-a: 3.10/(1+0.8*400/900) = 2.288; k-b: 2.00/1.356 + 0.5 (other rack) = 1.975 -> best.
    assert_eq!(priorities, json!([{"Host": "k-a", "Score": 0}, {"Host": "k-b", "Score": 10}, {"Host": "k-c", "Score": 0}]));

    // Go decodes keys case-insensitively; lower-case keys work too.
    let lower = json!({"pod": pod(), "nodenames": ["rv-a-01"]});
    let (status, filter) = post(address, "/filter", lower.to_string().as_bytes());
    assert_eq!((status, filter["NodeNames"].clone()), (200, json!(["rv-a-01"])));

    // Malformed and oversized bodies are refused without harm.
    let (status, message) = post(address, "/filter", b"{\"Pod\": [1, 2");
    assert_eq!(status, 400, "{message}");
    assert!(message["error"].as_str().unwrap_or_default().contains("not ExtenderArgs JSON"), "{message}");
    let (status, _) = post(address, "/prioritize", b"[]");
    assert_eq!(status, 400);

    // Still serving after all that, and as many concurrent requests as it has places for are
    // all answered.
    let workers: Vec<_> = (0..SETTINGS.concurrency)
        .map(|_| {
            let body = cached.to_string();
            std::thread::spawn(move || post(address, "/prioritize", body.as_bytes()).0)
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap_or(0), 200);
    }
}

#[test]
fn a_pod_without_the_labels_a_score_reads_passes_unranked_with_a_neutral_score() {
    // cost-aware reads `job.comm_gbps` from the pod's label: without it the score is NaN on
    // every node. The filters still apply (x86-01 has no NVLink, the pod requires it), but a
    // missing label never blocks a node: the rest pass and score 5, between worst and best.
    let server = start(SETTINGS);
    let mut unlabelled = pod();
    if let Some(labels) = unlabelled["metadata"]["labels"].as_object_mut() {
        labels.remove("placid.dev/comm-gbps");
    }
    let body = json!({"Pod": unlabelled, "NodeNames": ["rv-a-01", "rv-b-01", "x86-01"]});
    let (status, filter) = post(server.address, "/filter", body.to_string().as_bytes());
    assert_eq!(status, 200, "{filter}");
    assert_eq!(filter["NodeNames"], json!(["rv-a-01", "rv-b-01"]), "{filter}");
    assert_eq!(filter["FailedNodes"]["x86-01"], json!("placid: failed nvlink-if-required"));
    let (_, priorities) = post(server.address, "/prioritize", body.to_string().as_bytes());
    assert_eq!(priorities, json!([{"Host": "rv-a-01", "Score": 5}, {"Host": "rv-b-01", "Score": 5}, {"Host": "x86-01", "Score": 0}]));
}

/// Node names of the inventory, repeated to `count`.
fn names(count: usize) -> Vec<&'static str> {
    ["rv-a-01", "rv-b-01", "x86-01"].into_iter().cycle().take(count).collect()
}

fn assert_refused(reply: &(u16, Value), status: u16, code: &str) {
    assert_eq!(reply.0, status, "{}", reply.1);
    assert_eq!(reply.1["code"], json!(code), "{}", reply.1);
    assert!(reply.1["error"].as_str().is_some_and(|error| !error.is_empty()), "{}", reply.1);
    assert!(reply.1["help"].as_str().is_some_and(|help| !help.is_empty()), "{}", reply.1);
}

#[test]
fn oversized_bodies_and_node_lists_get_413_with_a_json_error() {
    let server = start(SETTINGS);
    let huge = json!({"Pod": pod(), "NodeNames": vec!["x".repeat(1000); 400]});
    assert_refused(&post(server.address, "/filter", huge.to_string().as_bytes()), 413, "placid::E067");
    let at_limit = json!({"Pod": pod(), "NodeNames": names(SETTINGS.max_nodes)});
    assert_eq!(post(server.address, "/prioritize", at_limit.to_string().as_bytes()).0, 200);
    let names_over = json!({"Pod": pod(), "NodeNames": names(SETTINGS.max_nodes + 1)});
    let reply = post(server.address, "/prioritize", names_over.to_string().as_bytes());
    assert_refused(&reply, 413, "placid::E067");
    assert!(reply.1["error"].as_str().unwrap_or_default().contains("lists 101 nodes"), "{}", reply.1);
    let objects_over = json!({"Pod": pod(), "Nodes": {"items": vec![json!({"metadata": {"name": "k"}}); SETTINGS.max_nodes + 1]}});
    assert_refused(&post(server.address, "/filter", objects_over.to_string().as_bytes()), 413, "placid::E067");
}

/// A raw connection with bounded reads, for clients that misbehave on purpose.
fn raw(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap_or_else(|error| panic!("{error}"));
    stream.set_read_timeout(Some(PATIENCE)).unwrap_or_else(|error| panic!("{error}"));
    stream
}

/// Reads until the server closes the connection (or PATIENCE passes); returns what it sent.
fn read_to_close(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => panic!("the server did not close the connection within {PATIENCE:?}: {error}"),
        }
    }
    (received, started.elapsed())
}

#[test]
fn a_full_extender_answers_503_at_once() {
    // The held request's deadline is far beyond the test's patience: on a loaded machine the
    // retries below may be slow, and a deadline that passed would give the place back early.
    let server = start(Settings { concurrency: 1, timeout: Duration::from_secs(120), ..SETTINGS });
    let body = json!({"Pod": pod(), "NodeNames": ["rv-a-01"]}).to_string();
    // The first request takes the only place and holds it by sending half its body.
    let mut slow = raw(server.address);
    let head = format!("POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Length: {}\r\n\r\n", body.len());
    slow.write_all(head.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
    slow.write_all(&body.as_bytes()[..body.len() / 2]).unwrap_or_else(|error| panic!("{error}"));
    // The place is taken when the server reads the head, which it does at once; retry
    // briefly in case this request got there first.
    let started = Instant::now();
    let refused = loop {
        let reply = post(server.address, "/filter", body.as_bytes());
        if reply.0 != 200 || started.elapsed() > 6 * PATIENCE {
            break reply;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_refused(&refused, 503, "placid::E068");
    // The held request is still served once its body is complete, and frees its place.
    slow.write_all(&body.as_bytes()[body.len() / 2..]).unwrap_or_else(|error| panic!("{error}"));
    let mut answer = [0; 12];
    slow.read_exact(&mut answer).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(&answer, b"HTTP/1.1 200");
    drop(slow);
    let started = Instant::now();
    while post(server.address, "/filter", body.as_bytes()).0 != 200 {
        assert!(started.elapsed() < PATIENCE, "the place was not given back");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn partial_heads_and_idle_connections_are_closed_after_the_header_timeout() {
    let header_timeout = Duration::from_millis(300);
    let server = start(Settings { header_timeout, ..SETTINGS });
    let mut partial = raw(server.address);
    partial.write_all(b"POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Le").unwrap_or_else(|error| panic!("{error}"));
    let (received, waited) = read_to_close(&mut partial);
    assert!(waited >= header_timeout - Duration::from_millis(50), "closed after {waited:?}");
    assert!(received.is_empty(), "{}", String::from_utf8_lossy(&received));
    // A keep-alive connection that sends nothing after its answer is closed as well.
    let mut idle = raw(server.address);
    let body = json!({"Pod": pod(), "NodeNames": ["rv-a-01"]}).to_string();
    let request = format!("POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    idle.write_all(request.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
    let (received, _) = read_to_close(&mut idle);
    assert!(received.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&received));
}

#[test]
fn at_the_cap_the_connection_waiting_longest_for_a_head_is_shed() {
    let server = start(Settings { max_connections: 1, ..SETTINGS });
    let body = json!({"Pod": pod(), "NodeNames": ["rv-a-01"]}).to_string();
    let request = format!("POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    // An idle keep-alive connection makes room for a new one at once.
    let mut first = Client::connect(server.address).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(first.post("/filter", body.as_bytes()).map(|reply| reply.status).unwrap_or(0), 200);
    let mut second = raw(server.address);
    second.write_all(request.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
    let mut answer = [0; 12];
    second.read_exact(&mut answer).unwrap_or_else(|error| panic!("the idle connection was not shed: {error}"));
    assert_eq!(&answer, b"HTTP/1.1 200");
    assert!(first.post("/filter", body.as_bytes()).is_err(), "the idle connection was closed");
    drop(second);

    // A connection being answered (its head sent, its body coming) is not shed: a new one
    // waits until it has been answered, and then takes its place.
    let mut busy = raw(server.address);
    let head = format!("POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Length: {}\r\n\r\n", body.len());
    busy.write_all(head.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
    busy.write_all(&body.as_bytes()[..10]).unwrap_or_else(|error| panic!("{error}"));
    std::thread::sleep(Duration::from_millis(100));
    let mut waiting = raw(server.address);
    waiting.set_read_timeout(Some(Duration::from_millis(300))).unwrap_or_else(|error| panic!("{error}"));
    waiting.write_all(request.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
    assert!(waiting.read_exact(&mut answer).is_err(), "a connection being answered was shed");
    busy.write_all(&body.as_bytes()[10..]).unwrap_or_else(|error| panic!("{error}"));
    busy.read_exact(&mut answer).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(&answer, b"HTTP/1.1 200");
    waiting.set_read_timeout(Some(PATIENCE)).unwrap_or_else(|error| panic!("{error}"));
    waiting.read_exact(&mut answer).unwrap_or_else(|error| panic!("not served once the other was answered: {error}"));
    assert_eq!(&answer, b"HTTP/1.1 200");
}

/// Slowloris: every connection place held by a half-sent head, re-opened as the server
/// closes them, and a small request is still answered at once, not after the header
/// timeout (10 s, over kube-scheduler's 5 s).
#[test]
fn half_sent_heads_at_the_cap_do_not_delay_a_whole_request() {
    let server = start(SETTINGS);
    let body = json!({"Pod": pod(), "NodeNames": ["rv-a-01"]}).to_string();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let address = server.address;
    let attacker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Twice the cap, re-opened as they are closed.
                held.retain(|stream: &TcpStream| {
                    stream.peek(&mut [0; 1]).is_err_and(|error| error.kind() == std::io::ErrorKind::WouldBlock)
                });
                while held.len() < 2 * SETTINGS.max_connections {
                    let Ok(stream) = TcpStream::connect(address) else { break };
                    let _ = stream.set_nonblocking(true);
                    let _ = (&stream).write_all(b"POST /filter HTTP/1.1\r\nHost: placid\r\nContent-Le");
                    held.push(stream);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..5 {
        let started = Instant::now();
        let reply = post(server.address, "/filter", body.as_bytes());
        assert_eq!(reply.0, 200, "{}", reply.1);
        assert!(started.elapsed() < Duration::from_secs(2), "a whole request waited {:?}", started.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    attacker.join().unwrap_or_else(|_| panic!("the attacker panicked"));
}

/// A module with the example plugin's `placid.meta` whose `placid_score_batch` never returns.
fn endless_plugin(meta: &[u8]) -> Vec<u8> {
    use wasm_encoder::{
        BlockType, CodeSection, ConstExpr, CustomSection, ExportKind, ExportSection, Function, FunctionSection, GlobalSection, GlobalType,
        Instruction, MemorySection, MemoryType, Module, TypeSection, ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32; 5], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    module.section(&functions);
    let mut memories = MemorySection::new();
    memories.memory(MemoryType { minimum: 1, maximum: Some(16), memory64: false, shared: false, page_size_log2: None });
    module.section(&memories);
    let mut globals = GlobalSection::new();
    globals.global(GlobalType { val_type: ValType::I32, mutable: false, shared: false }, &ConstExpr::i32_const(1));
    module.section(&globals);
    let mut exports = ExportSection::new();
    exports.export("memory", ExportKind::Memory, 0);
    exports.export("placid_abi_version", ExportKind::Global, 0);
    exports.export("placid_score_batch", ExportKind::Func, 0);
    module.section(&exports);
    let mut code = CodeSection::new();
    let mut function = Function::new([]);
    for instruction in
        [Instruction::Loop(BlockType::Empty), Instruction::Br(0), Instruction::End, Instruction::I32Const(0), Instruction::End]
    {
        function.instruction(&instruction);
    }
    code.function(&function);
    module.section(&code);
    module.section(&CustomSection { name: "placid.meta".into(), data: meta.into() });
    module.finish()
}

#[test]
fn a_plugin_that_never_returns_is_stopped_at_the_request_deadline() {
    let loaded = example();
    // The plugin's own limit is far away: only the request's deadline can stop it in time.
    let limits = Limits { deadline: Duration::from_secs(60), ..Limits::DEFAULT };
    let plugin = Plugin::load(&endless_plugin(&loaded.plugin.meta().to_bytes()), limits).unwrap_or_else(|error| panic!("{error}"));
    let timeout = Duration::from_millis(300);
    let server = start_with(plugin, &loaded.model, Settings { timeout, concurrency: 1, ..SETTINGS });
    let body = json!({"Pod": pod(), "NodeNames": ["rv-a-01"]}).to_string();
    for path in ["/filter", "/prioritize"] {
        let started = Instant::now();
        let reply = post(server.address, path, body.as_bytes());
        let waited = started.elapsed();
        // A second request finds the place free again: the plugin was interrupted, not
        // abandoned on a thread that still runs.
        assert_refused(&reply, 503, "placid::E069");
        assert!(waited >= timeout && waited < PATIENCE, "answered after {waited:?}");
    }
}

#[test]
fn healthz_answers_200_for_the_probes() {
    let server = start(SETTINGS);
    let mut stream = raw(server.address);
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: extender\r\nConnection: close\r\n\r\n").unwrap_or_else(|error| panic!("{error}"));
    let (reply, _) = read_to_close(&mut stream);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}
