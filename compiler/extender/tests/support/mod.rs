//! What the extender's tests and benchmarks share: the example models (from the scoring
//! crate's test support), a stand-in Prometheus, and an extender served on loopback.

// Each test binary and benchmark that includes this module uses part of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[path = "../../../scoring/tests/support/mod.rs"]
mod models;
pub use models::*;

/// A `telemetry` block for the cluster example at test speed (queries `node_q` and
/// `domain_q`, which [`prometheus`] answers) and a score on its figures.
pub const TELEMETRY_POLICY: &str = "telemetry half-life=\"1s\" max-age=\"1m\" ttl=\"1s\" {\n    node-query \"node_q\"\n    domain-query \"domain_q\"\n    throttle domain-nvlink-above=0.85 for=\"2s\" comm=\"high\"\n}\nscore \"busy-aware\" {\n    prefer \"min\"\n    expr \"domain.nvlink_utilization * 100 + node.nvlink_utilization\"\n}\n";

/// The extender's live telemetry of `model`'s `telemetry` block, reading `prometheus`.
pub fn live(model: &placid_lang::model::Model, prometheus: SocketAddr, log: placid_extender::live::Log) -> placid_extender::live::Live {
    live_with_timeout(model, prometheus, Duration::from_secs(2), log)
}

/// [`live`] with the Prometheus client's `timeout`.
pub fn live_with_timeout(
    model: &placid_lang::model::Model,
    prometheus: SocketAddr,
    timeout: Duration,
    log: placid_extender::live::Log,
) -> placid_extender::live::Live {
    let config = placid_targets::k8s::telemetry_config::DeployedTelemetry::of(model).expect("the policy declares telemetry");
    placid_extender::live::Live::new(&config, placid_extender::telemetry::Prometheus::at(prometheus, timeout), log)
}

/// What the stand-in Prometheus answers: figures by domain and by node, or an HTTP error.
#[derive(Clone)]
pub enum Answer {
    /// `(key, value)` pairs of the domain query (`domain_q`) and of any other query.
    Figures { domains: Vec<(String, String)>, nodes: Vec<(String, String)> },
    /// 503.
    Down,
    /// No answer while the answer stays `Stalled`, then the answer it becomes: a slow
    /// Prometheus. The counter counts the queries that arrived while stalled.
    Stalled(Arc<AtomicUsize>),
}

impl Answer {
    /// Figures from borrowed pairs.
    pub fn figures(domains: &[(&str, &str)], nodes: &[(&str, &str)]) -> Answer {
        let owned = |pairs: &[(&str, &str)]| pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect();
        Answer::Figures { domains: owned(domains), nodes: owned(nodes) }
    }
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|since| since.as_secs_f64()).unwrap_or_default()
}

/// A stand-in for Prometheus's `/api/v1/query` on loopback: one thread answering every
/// connection with the current answer, samples stamped now. It lives as long as the process.
pub fn prometheus(answer: Arc<Mutex<Answer>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|error| panic!("{error}"));
    let address = listener.local_addr().unwrap_or_else(|error| panic!("{error}"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // As Prometheus (Go) does: without it, the answer's last segment waits for the
            // client's delayed ACK, and the bench would measure 40 ms timers.
            let _ = stream.set_nodelay(true);
            let mut head = [0u8; 4096];
            let read = stream.read(&mut head).unwrap_or(0);
            let request = String::from_utf8_lossy(&head[..read]).into_owned();
            let mut current = answer.lock().map(|answer| answer.clone()).unwrap_or(Answer::Down);
            if let Answer::Stalled(arrived) = &current {
                arrived.fetch_add(1, Ordering::SeqCst);
            }
            while let Answer::Stalled(_) = current {
                std::thread::sleep(Duration::from_millis(10));
                current = answer.lock().map(|answer| answer.clone()).unwrap_or(Answer::Down);
            }
            let reply = match current {
                Answer::Stalled(_) => unreachable!("waited above until the answer changed"),
                Answer::Down => "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                Answer::Figures { domains, nodes } => {
                    let (label, figures) = if request.contains("domain_q") { ("nvlink_domain", domains) } else { ("node", nodes) };
                    let now = unix_now();
                    let result: Vec<serde_json::Value> =
                        figures.iter().map(|(key, value)| serde_json::json!({"metric": {label: key}, "value": [now, value]})).collect();
                    let body = serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": result}}).to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                }
            };
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    address
}

/// A running extender on loopback; stopped (and its thread joined) when dropped.
pub struct Server {
    pub address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let joined = thread.join();
            if !std::thread::panicking() {
                joined.unwrap_or_else(|_| panic!("the server thread panicked"));
            }
        }
    }
}

/// Serves `extender` on a free loopback port, on a runtime of its own.
pub fn serve_on_loopback(extender: placid_extender::Extender) -> Server {
    let extender = Arc::new(extender);
    let (address_sender, address_receiver) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap_or_else(|error| panic!("{error}"));
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|error| panic!("{error}"));
            let _ = address_sender.send(listener.local_addr().unwrap_or_else(|error| panic!("{error}")));
            placid_extender::serve(listener, extender, async {
                let _ = stopped.await;
            })
            .await;
        });
    });
    let address = address_receiver.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|error| panic!("server did not start: {error}"));
    Server { address, stop: Some(stop), thread: Some(thread) }
}
