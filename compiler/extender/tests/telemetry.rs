//! The extender with live telemetry, against a stand-in Prometheus on loopback whose answers
//! the test sets: `domain.nvlink_utilization` moves the scores, the filter refuses comm-heavy
//! pods on a domain only once it has stayed above the threshold for the hold, and bad
//! telemetry (NaN, a missing series, Prometheus down) falls back with a log line while
//! scheduling goes on; a slow Prometheus delays only the request that refreshes.
//! (tests/tests/prometheus_live.rs does the same against a real Prometheus.)

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use placid_extender::client::Client;
use placid_extender::live::Log;
use placid_extender::{Extender, Settings};
use serde_json::{Value, json};

mod support;
use support::{Answer, Server, prometheus, serve_on_loopback};

fn start(prometheus: SocketAddr, log: Log) -> Server {
    start_with_timeout(prometheus, Duration::from_secs(2), log)
}

fn start_with_timeout(prometheus: SocketAddr, timeout: Duration, log: Log) -> Server {
    let loaded = support::example_with(&[("policy/telemetry.kdl", support::TELEMETRY_POLICY)], "busy-aware");
    let live = support::live_with_timeout(&loaded.model, prometheus, timeout, log);
    serve_on_loopback(Extender::new(loaded.plugin, &loaded.model, Settings::DEFAULT).with_live(live))
}

fn args(comm: &str) -> Vec<u8> {
    let pod = json!({"metadata": {"name": "p", "labels": {"placid.dev/comm": comm}}, "spec": {"containers": []}});
    serde_json::to_vec(&json!({"pod": pod, "nodenames": ["rv-a-01", "rv-b-01"]})).unwrap_or_default()
}

fn post(address: SocketAddr, path: &str, body: &[u8]) -> Value {
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    let reply = client.post(path, body).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    serde_json::from_slice(&reply.body).unwrap_or_else(|error| panic!("{error}"))
}

/// The nodes the filter refused because their domain is throttled.
fn throttled(address: SocketAddr, comm: &str) -> Vec<String> {
    let answer = post(address, "/filter", &args(comm));
    let failed = answer.get("FailedNodes").and_then(Value::as_object).cloned().unwrap_or_default();
    failed
        .into_iter()
        .filter(|(_, reason)| reason.as_str().is_some_and(|reason| reason.contains("throttled")))
        .map(|(node, _)| node)
        .collect()
}

/// The prioritize scores of rv-a-01 (domain nvl-a) and rv-b-01 (nvl-b).
fn priorities(address: SocketAddr) -> (i64, i64) {
    let answer = post(address, "/prioritize", &args("high"));
    let score = |host: &str| {
        answer.as_array().and_then(|hosts| hosts.iter().find(|entry| entry["Host"] == host)).and_then(|entry| entry["Score"].as_i64())
    };
    (score("rv-a-01").unwrap_or(-1), score("rv-b-01").unwrap_or(-1))
}

fn settle() {
    // Past the TTL, so the next request refreshes.
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn live_figures_score_throttle_after_the_hold_and_fall_back_with_a_log_line() {
    let answer = Arc::new(Mutex::new(Answer::figures(&[("nvl-a", "0.95"), ("nvl-b", "0.10")], &[])));
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let log: Log = Arc::new(move |line: &str| sink.lock().map(|mut lines| lines.push(line.to_owned())).unwrap_or_default());
    let server = start(prometheus(answer.clone()), log);

    // The busy domain's node ranks below the idle one (prefer min: less utilisation is better).
    let (busy, idle) = priorities(server.address);
    assert!(busy < idle, "nvl-a at 95 % must rank below nvl-b at 10 %: {busy} vs {idle}");
    // Above the threshold, but not for the hold yet: nothing is throttled.
    assert_eq!(throttled(server.address, "high"), Vec::<String>::new());
    // Missing node series: logged once per node, not per refresh.
    let missing = lines.lock().map(|lines| lines.iter().filter(|line| line.contains("no sample for node=rv-a-01")).count()).unwrap_or(0);
    assert_eq!(missing, 1, "{:?}", lines.lock().map(|lines| lines.clone()));

    // Held above for the hold (2 s): comm-high pods are refused on nvl-a only; comm-low pass.
    for _ in 0..2 {
        settle();
        let _ = throttled(server.address, "high");
    }
    settle();
    assert_eq!(throttled(server.address, "high"), ["rv-a-01"]);
    assert_eq!(throttled(server.address, "low"), Vec::<String>::new());
    let missing = lines.lock().map(|lines| lines.iter().filter(|line| line.contains("no sample for node=rv-a-01")).count()).unwrap_or(0);
    assert_eq!(missing, 1, "an unchanged fallback is not logged again");

    // A NaN sample is refused with a log line; the last good figure stays.
    *answer.lock().unwrap_or_else(|error| panic!("{error}")) = Answer::figures(&[("nvl-a", "0.95"), ("nvl-b", "NaN")], &[]);
    settle();
    let (busy, idle) = priorities(server.address);
    assert!(busy < idle, "{busy} vs {idle}");
    assert!(
        lines
            .lock()
            .is_ok_and(|lines| lines.iter().any(|line| line.contains("nvlink_domain=nvl-b") && line.contains("not a finite number")))
    );

    // Prometheus down: logged, scheduling goes on (no error), the last good figures are kept
    // until they are older than max-age.
    *answer.lock().unwrap_or_else(|error| panic!("{error}")) = Answer::Down;
    settle();
    let filtered = post(server.address, "/filter", &args("high"));
    assert_eq!(filtered.get("Error").and_then(Value::as_str).unwrap_or_default(), "");
    assert!(lines.lock().is_ok_and(|lines| lines.iter().any(|line| line.contains("503") && line.contains("keeping the last good figure"))));
}

#[test]
fn a_slow_prometheus_delays_only_the_request_that_refreshes() {
    let answer = Arc::new(Mutex::new(Answer::figures(&[("nvl-a", "0.95"), ("nvl-b", "0.10")], &[])));
    let log: Log = Arc::new(|_: &str| {});
    // The held answer comes only when the test releases it, not when a timeout does.
    let server = start_with_timeout(prometheus(answer.clone()), Duration::from_secs(600), log);
    let before = priorities(server.address);

    let arrived = Arc::new(AtomicUsize::new(0));
    *answer.lock().unwrap_or_else(|error| panic!("{error}")) = Answer::Stalled(arrived.clone());
    settle();
    let address = server.address;
    let refreshing = std::thread::spawn(move || priorities(address));
    let waited = std::time::Instant::now();
    while arrived.load(Ordering::SeqCst) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(30), "the refreshing request never reached Prometheus");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Prometheus holds the first request's refresh; another request is answered meanwhile,
    // with the figures of the last refresh.
    assert_eq!(priorities(server.address), before);
    assert!(!refreshing.is_finished(), "the second request waited for the first one's refresh");

    *answer.lock().unwrap_or_else(|error| panic!("{error}")) = Answer::figures(&[("nvl-a", "0.10"), ("nvl-b", "0.95")], &[]);
    let (busy, idle) = refreshing.join().unwrap_or_else(|_| panic!("the refreshing request panicked"));
    assert!(busy > idle, "the refresh read the answer Prometheus finally gave: {busy} vs {idle}");
}
