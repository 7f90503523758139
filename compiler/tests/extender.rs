//! The extender over HTTP on loopback, with request bodies shaped exactly as kube-scheduler
//! sends `ExtenderArgs` (both `nodeCacheCapable` modes), plus malformed and oversized bodies.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use placid_compiler::cli::Output;
use placid_compiler::extender::client::Client;
use placid_compiler::extender::{Extender, Settings, router};
use placid_compiler::render::Format;
use placid_compiler::scoring;
use serde_json::{Value, json};

const SETTINGS: Settings = Settings { max_body: 256 << 10, timeout: Duration::from_secs(5), concurrency: 4 };

/// Starts the example's `cost-aware` extender; returns its address and a shutdown handle.
fn start() -> (SocketAddr, tokio::sync::oneshot::Sender<()>, std::thread::JoinHandle<()>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy-examples/cluster");
    let loaded = scoring::load(&mut Output::stdio(), &dir, Some("cost-aware"), Format::Text)
        .unwrap_or_else(|exit| panic!("cannot load the example: {exit:?}"));
    let extender = Arc::new(Extender::new(loaded.plugin, &loaded.model, SETTINGS));
    let (address_sender, address_receiver) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap_or_else(|error| panic!("{error}"));
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|error| panic!("{error}"));
            let _ = address_sender.send(listener.local_addr().unwrap_or_else(|error| panic!("{error}")));
            let shutdown = async {
                let _ = stopped.await;
            };
            axum::serve(listener, router(extender, SETTINGS))
                .with_graceful_shutdown(shutdown)
                .await
                .unwrap_or_else(|error| panic!("{error}"));
        });
    });
    let address = address_receiver.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|error| panic!("server did not start: {error}"));
    (address, stop, server)
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
    let (address, stop, server) = start();

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
    assert!(message.as_str().unwrap_or_default().contains("not ExtenderArgs JSON"));
    let (status, _) = post(address, "/prioritize", b"[]");
    assert_eq!(status, 400);
    let huge = json!({"Pod": pod(), "NodeNames": vec!["x".repeat(1000); 400]});
    let (status, _) = post(address, "/filter", huge.to_string().as_bytes());
    assert_eq!(status, 413);

    // Still serving after all that, and concurrent requests are answered.
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let body = cached.to_string();
            std::thread::spawn(move || post(address, "/prioritize", body.as_bytes()).0)
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap_or(0), 200);
    }

    let _ = stop.send(());
    server.join().unwrap_or_else(|_| panic!("the server thread panicked"));
}
