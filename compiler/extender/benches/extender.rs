//! Benchmarks of the scheduler extender at cluster scale, each reported against a baseline
//! measured in the same process:
//! - the extender's prioritize latency for 5,000 nodes (`nodeCacheCapable`), over HTTP on
//!   loopback with a keep-alive connection, with p50/p99 printed;
//! - the same with live telemetry (the `busy-aware` score on `domain.nvlink_utilization` and
//!   `node.nvlink_utilization`, a stand-in Prometheus answering all 5,000 nodes, TTL 1 s), so
//!   the p99 includes the cost of filling the telemetry fields and the refreshes;
//! - the extender under a hostile load (300 idle connections and 16 clients sending the
//!   largest requests the limits accept, without pause): the latency of a 100-node
//!   prioritize, p50/p99 printed, whose bar is a p99 under 50 ms.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use placid_extender::client::Client;
use placid_extender::live::Log;
use placid_extender::{Extender, Settings, serve};
use placid_lang::model::Model;
use placid_scoring::Loaded;

#[path = "../tests/support/mod.rs"]
mod support;
use support::{example, scaled};

/// Serves `model`'s extender on loopback, on a runtime laid out like `placid extender`'s (two
/// async workers here, scoring on a blocking pool of `concurrency` threads).
fn start_extender(loaded: Loaded, model: &Model, settings: Settings) -> (SocketAddr, tokio::runtime::Runtime) {
    serve_extender(Extender::new(loaded.plugin, model, settings), settings)
}

fn serve_extender(extender: Extender, settings: Settings) -> (SocketAddr, tokio::runtime::Runtime) {
    let extender = Arc::new(extender);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(settings.concurrency)
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap_or_else(|error| panic!("{error}"));
    let address = listener.local_addr().unwrap_or_else(|error| panic!("{error}"));
    runtime.spawn(serve(listener, extender, std::future::pending()));
    (address, runtime)
}

fn pod() -> serde_json::Value {
    serde_json::json!({"metadata": {"name": "p", "labels": {"placid.dev/comm": "high", "placid.dev/comm-gbps": "400", "placid.dev/rack": "r1", "placid.dev/nvlink-required": "true"}},
        "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]}})
}

/// A prioritize body naming `names` (`nodeCacheCapable: true`).
fn names_body(names: &[String]) -> String {
    serde_json::json!({"Pod": pod(), "Nodes": null, "NodeNames": names}).to_string()
}

/// p50, p99 and the largest of `latencies`.
fn percentiles(mut latencies: Vec<Duration>) -> (Duration, Duration, Duration) {
    latencies.sort();
    let at = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    (at(50), at(99), latencies[latencies.len() - 1])
}

fn extender_latency(criterion: &mut Criterion) {
    let loaded = example();
    let model = scaled(&loaded.model, 5_000);
    let names: Vec<String> = model.nodes.iter().map(|node| node.name.to_string()).collect();
    let (address, _runtime) = start_extender(loaded, &model, Settings::DEFAULT);
    let body = names_body(&names);
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    let latencies: Vec<Duration> = (0..2_000)
        .map(|_| {
            let started = Instant::now();
            let reply = client.post("/prioritize", body.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(reply.status, 200);
            started.elapsed()
        })
        .collect();
    let (p50, p99, max) = percentiles(latencies);
    println!("extender prioritize, 5000 nodes, 2000 requests: p50 {p50:?}, p99 {p99:?}, max {max:?}");
    let mut group = criterion.benchmark_group("extender");
    group.bench_function("prioritize 5000 nodes over HTTP", |bench| {
        bench.iter(|| client.post("/prioritize", body.as_bytes()).map(|reply| reply.status).unwrap_or(0))
    });
    group.finish();
}

fn extender_latency_with_telemetry(criterion: &mut Criterion) {
    let loaded = support::example_with(&[("policy/telemetry.kdl", support::TELEMETRY_POLICY)], "busy-aware");
    let model = scaled(&loaded.model, 5_000);
    let names: Vec<String> = model.nodes.iter().map(|node| node.name.to_string()).collect();
    let nodes: Vec<(String, String)> = names.iter().enumerate().map(|(index, name)| (name.clone(), format!("0.{}", index % 100))).collect();
    let domains = model.domains.iter().map(|domain| (domain.name.to_string(), "0.5".to_owned())).collect();
    let answer = Arc::new(std::sync::Mutex::new(support::Answer::Figures { domains, nodes }));
    let log: Log = Arc::new(|_: &str| {});
    let live = support::live(&model, support::prometheus(answer), log);
    let extender = Extender::new(loaded.plugin, &model, Settings::DEFAULT).with_live(live);
    let (address, _runtime) = serve_extender(extender, Settings::DEFAULT);
    let body = names_body(&names);
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    let started = Instant::now();
    let latencies: Vec<Duration> = (0..2_000)
        .map(|_| {
            let started = Instant::now();
            let reply = client.post("/prioritize", body.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(reply.status, 200);
            started.elapsed()
        })
        .collect();
    let refreshes = started.elapsed().as_secs() + 1;
    let (p50, p99, max) = percentiles(latencies);
    println!(
        "extender prioritize with telemetry, 5000 nodes, 2000 requests (about {refreshes} refreshes): p50 {p50:?}, p99 {p99:?}, max {max:?}"
    );
    let mut group = criterion.benchmark_group("extender");
    group.bench_function("prioritize 5000 nodes over HTTP with telemetry", |bench| {
        bench.iter(|| client.post("/prioritize", body.as_bytes()).map(|reply| reply.status).unwrap_or(0))
    });
    group.finish();
}

/// A `v1.Node` as kube-scheduler sends it without `nodeCacheCapable`, with the labels node
/// feature discovery and placid publish: about 4 KiB.
fn node_object(name: &str) -> serde_json::Value {
    let mut labels: serde_json::Map<String, serde_json::Value> = (0..48)
        .map(|index| (format!("feature.node.kubernetes.io/cpu-cpuid.feature-{index:02}"), serde_json::Value::from("true")))
        .collect();
    for (key, value) in [
        ("kubernetes.io/hostname", name),
        ("placid.dev/rack", "r1"),
        ("placid.dev/cost-per-gpu-hour", "2.5"),
        ("placid.dev/nvlink-gbps", "900"),
    ] {
        labels.insert(key.to_owned(), value.into());
    }
    serde_json::json!({"metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}, "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}}})
}

/// Keeps `count` connections open and silent, opening a new one whenever the server closes one
/// (after its header timeout), until `stop`.
fn hold_idle_connections(address: SocketAddr, count: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let connect = || {
            let stream = TcpStream::connect(address).unwrap_or_else(|error| panic!("{error}"));
            stream.set_nonblocking(true).unwrap_or_else(|error| panic!("{error}"));
            stream
        };
        let mut idle: Vec<TcpStream> = (0..count).map(|_| connect()).collect();
        while !stop.load(Ordering::Relaxed) {
            for stream in &mut idle {
                let mut byte = [0; 1];
                if !matches!(stream.read(&mut byte), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock) {
                    *stream = connect();
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    })
}

/// Sends `body` to `path` over and over, reconnecting after refusals, until `stop`; counts the
/// answers that were not 200.
fn flood(
    address: SocketAddr,
    path: &'static str,
    body: Arc<String>,
    stop: Arc<AtomicBool>,
    refused: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut client = None;
        while !stop.load(Ordering::Relaxed) {
            let connection = match client.take() {
                Some(connection) => connection,
                None => match Client::connect(address) {
                    Ok(connection) => connection,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                },
            };
            let mut connection = connection;
            match connection.post(path, body.as_bytes()) {
                Ok(reply) if reply.status == 200 => client = Some(connection),
                _ => {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    })
}

fn extender_under_hostile_load(criterion: &mut Criterion) {
    let settings = Settings::DEFAULT;
    let loaded = example();
    let model = scaled(&loaded.model, settings.max_nodes);
    let names: Vec<String> = model.nodes.iter().map(|node| node.name.to_string()).collect();
    let (address, _runtime) = start_extender(loaded, &model, settings);
    let stop = Arc::new(AtomicBool::new(false));
    let idle = hold_idle_connections(address, 300, stop.clone());
    // The largest requests the limits let through: every node by name, and as many Node
    // objects as fit in the body limit.
    let all_names = Arc::new(names_body(&names));
    let per_node = node_object("n00000").to_string().len() + 1;
    let objects: Vec<serde_json::Value> =
        names.iter().take((settings.max_body - (64 << 10)) / per_node).map(|name| node_object(name)).collect();
    let all_objects = Arc::new(serde_json::json!({"Pod": pod(), "Nodes": {"items": objects}, "NodeNames": null}).to_string());
    assert!(all_objects.len() <= settings.max_body);
    let refused = Arc::new(AtomicUsize::new(0));
    let floods: Vec<_> = (0..16)
        .map(|index| {
            let (path, body) = if index % 2 == 0 { ("/prioritize", all_names.clone()) } else { ("/filter", all_objects.clone()) };
            flood(address, path, body, stop.clone(), refused.clone())
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));

    let light = names_body(&names[..100]);
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    // The status of one light request; a connection the server closed is replaced.
    let mut light_request = move || {
        let status = client.post("/prioritize", light.as_bytes()).map(|reply| reply.status).unwrap_or(0);
        if status != 200 {
            client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
        }
        status
    };
    let mut not_ok = 0;
    let latencies: Vec<Duration> = (0..500)
        .map(|_| {
            let started = Instant::now();
            if light_request() != 200 {
                not_ok += 1;
            }
            started.elapsed()
        })
        .collect();
    let (p50, p99, max) = percentiles(latencies);
    println!(
        "extender prioritize, 100 nodes, 500 requests beside 300 idle connections and 16 clients sending {} KiB of names or {} KiB of {} Node objects without pause: p50 {p50:?}, p99 {p99:?}, max {max:?}; {not_ok} not answered 200; {} heavy requests refused",
        all_names.len() >> 10,
        all_objects.len() >> 10,
        objects.len(),
        refused.load(Ordering::Relaxed)
    );
    let mut group = criterion.benchmark_group("extender under hostile load");
    group.bench_function("prioritize 100 nodes", |bench| bench.iter(&mut light_request));
    group.finish();
    stop.store(true, Ordering::Relaxed);
    for thread in floods.into_iter().chain([idle]) {
        let _ = thread.join();
    }
}

criterion_group!(benches, extender_latency, extender_latency_with_telemetry, extender_under_hostile_load);
criterion_main!(benches);
