//! Issue 18's real-Prometheus bar: Debian's prometheus on loopback scrapes the exporter
//! (`placid-probe`'s server on recorded NVML answers) and loads the cluster example's
//! generated rules; the extender's telemetry reads utilisation back through the query API.
//! Driving the NVLink traffic up, the smoothed figure rises without oscillating and the
//! throttle starts only after its hold time; a query for a missing series and a stopped
//! Prometheus fall back to the static figure with a log line. The extender itself (the
//! policy's `telemetry` block, its TTL cache, the `domain.nvlink_utilization` feature and the
//! throttle in its filter) runs beside it on the same Prometheus: the domain's figure rises
//! smoothly and comm-high pods are refused on the domain only after the hold.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use placid_extender::client::Client;
use placid_extender::live::{Live, Log};
use placid_extender::telemetry::{Prometheus, Rule, Telemetry};
use placid_extender::{Extender, Settings};
use placid_lang::telemetry::Figure;
use placid_probe::exporter::{Identity, serve};
use placid_probe::nvml::GpuSource;
use placid_probe::nvml::recorded::Recorded;
use placid_targets::k8s::telemetry_config::DeployedTelemetry;
use placid_tests::prometheus::tool;
use placid_tests::slurm::wait_until;
use placid_tests::{build, build_clean, copy_tree, example};

/// A free loopback port (bound, then released for the child to take).
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address")
}

struct Stop(Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// NVLink utilisation of the node over the last 5 s: the policy's query template for
/// `node.nvlink_utilization` at test speed (the generated rule's 2-minute window would make
/// the test minutes long; its series is checked to exist below).
const QUERY: &str = "sum by (node) (rate(placid_nvlink_transmitted_bytes_total[5s]) + rate(placid_nvlink_received_bytes_total[5s])) / sum by (node) (placid_nvlink_link_bandwidth_bytes_per_second)";

/// The cluster example with a `telemetry` block at test speed (the same 5 s rate as
/// [`QUERY`], per domain for `domain-query`) and a score on the domain's figure.
const POLICY: &str = r#"telemetry half-life="3s" max-age="10s" ttl="1s" {
    node-query "sum by (node) (rate(placid_nvlink_transmitted_bytes_total[5s]) + rate(placid_nvlink_received_bytes_total[5s])) / sum by (node) (placid_nvlink_link_bandwidth_bytes_per_second)"
    domain-query "sum by (nvlink_domain) (rate(placid_nvlink_transmitted_bytes_total[5s]) + rate(placid_nvlink_received_bytes_total[5s])) / sum by (nvlink_domain) (placid_nvlink_link_bandwidth_bytes_per_second)"
    throttle domain-nvlink-above=0.85 for="3s" comm="high"
}
score "busy-aware" {
    prefer "min"
    expr "domain.nvlink_utilization * 100 + node.nvlink_utilization"
}
"#;

/// `placid extender` on the cluster example with [`POLICY`], on loopback, reading `prometheus`.
struct Extended {
    live: Arc<Live>,
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Extended {
    fn start(scratch: &std::path::Path, prometheus: SocketAddr, lines: Arc<Mutex<Vec<String>>>) -> Extended {
        let project = scratch.join("project");
        copy_tree(&example("cluster"), &project, &["broken"]);
        std::fs::write(project.join("policy/telemetry.kdl"), POLICY).expect("write the telemetry policy");
        let model = build(&project).clean().unwrap_or_else(|_| panic!("the telemetry policy does not compile")).model;
        let loaded = placid_scoring::load(model, Some("busy-aware")).unwrap_or_else(|error| panic!("{error:?}"));
        let config = DeployedTelemetry::of(&loaded.model).expect("declared");
        let prometheus = Prometheus::at(prometheus, Duration::from_secs(2));
        let log: Log = Arc::new(move |line: &str| lines.lock().map(|mut lines| lines.push(line.to_owned())).unwrap_or_default());
        // The extender's filter reads the same figures as `live` (one cache each: both
        // refresh from the same Prometheus at most once a second).
        let live = Arc::new(Live::new(&config, prometheus.clone(), log.clone()));
        let extender =
            Arc::new(Extender::new(loaded.plugin, &loaded.model, Settings::DEFAULT).with_live(Live::new(&config, prometheus, log)));
        let (address_sender, address_receiver) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
                let _ = address_sender.send(listener.local_addr().expect("its address"));
                placid_extender::serve(listener, extender, async {
                    let _ = stopped.await;
                })
                .await;
            });
        });
        let address = address_receiver.recv_timeout(Duration::from_secs(30)).expect("the extender started");
        Extended { live, address, stop: Some(stop), thread: Some(thread) }
    }

    /// Whether the extender's filter refuses a pod of communication level `comm` on `node`
    /// because its domain is throttled.
    fn refuses(&self, node: &str, comm: &str) -> bool {
        let pod = serde_json::json!({"metadata": {"name": "p", "labels": {"placid.dev/comm": comm}}, "spec": {"containers": []}});
        let body = serde_json::to_vec(&serde_json::json!({"pod": pod, "nodenames": [node]})).expect("a body");
        let mut client = Client::connect(self.address).expect("connect to the extender");
        let reply = client.post("/filter", &body).expect("a filter answer");
        let answer: serde_json::Value = serde_json::from_slice(&reply.body).expect("JSON");
        answer["FailedNodes"][node].as_str().is_some_and(|reason| reason.contains("throttled"))
    }

    fn refuses_comm_high_on(&self, node: &str) -> bool {
        self.refuses(node, "high")
    }
}

impl Drop for Extended {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn the_extender_reads_smoothed_utilisation_from_a_real_prometheus_and_throttles_after_the_hold() {
    let test = "the_extender_reads_smoothed_utilisation_from_a_real_prometheus_and_throttles_after_the_hold";
    let Some(prometheus) = tool(test, "prometheus") else { return };
    let dir = tempfile::tempdir().expect("tempdir");

    // The exporter: one GPU with two NVLink 4.0 links, 100 GB/s both ways together.
    let recorded = Arc::new(Recorded::hgx(1, 2));
    let exporter = TcpListener::bind("127.0.0.1:0").expect("exporter port");
    let exporter_address = exporter.local_addr().expect("exporter address");
    let (stop_exporter, stopped) = std::sync::mpsc::channel::<()>();
    let source: Arc<dyn GpuSource + Send + Sync> = recorded.clone();
    // A node of the cluster example, so the extender's inventory knows it and its domain.
    let identity = Identity { node: "rv-a-01".to_owned(), nvlink_domain: "nvl-a".to_owned() };
    let server = std::thread::spawn(move || {
        serve::serve(exporter, source, identity, async move {
            let _ = tokio::task::spawn_blocking(move || stopped.recv()).await;
        })
    });

    // Prometheus, with the cluster example's rules.
    let rules = build_clean("cluster")
        .artifacts
        .into_iter()
        .find(|artifact| artifact.path == "prometheus/rules.yaml")
        .expect("the cluster example's rules");
    std::fs::write(dir.path().join("rules.yaml"), rules.bytes).expect("write rules");
    let config = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [rules.yaml]\nscrape_configs:\n- job_name: placid\n  static_configs:\n  - targets: ['{exporter_address}']\n"
    );
    std::fs::write(dir.path().join("prometheus.yml"), config).expect("write config");
    let address = free_port();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
        .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
        .arg(format!("--web.listen-address={address}"))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    let mut child = Stop(child);
    let api = Prometheus::at(address, Duration::from_secs(2));
    assert!(
        wait_until(Duration::from_secs(30), || api.query("up").is_ok_and(|up| up.iter().any(|sample| sample.value == 1.0))),
        "Prometheus never scraped the exporter"
    );

    // Traffic at a utilisation `level`, added every 100 ms: tx and rx each carry half.
    let per_tick = |level: f64| (level * 100e9 / 2.0 / 2.0 / 1024.0 / 10.0) as u64;
    let rule = Rule {
        query: QUERY.to_owned(),
        key: "node".to_owned(),
        half_life: Duration::from_secs(3),
        max_age: Duration::from_secs(10),
        threshold: 0.85,
        hold: Duration::from_secs(3),
    };
    let mut telemetry = Telemetry::new(api.clone(), rule);
    let keys = BTreeMap::from([("rv-a-01".to_owned(), 0.25)]);
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let extender = Extended::start(dir.path(), address, lines.clone());
    let mut domain_figures = Vec::new();
    let start = Instant::now();
    let mut readings = Vec::new();
    let mut next_poll = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(26) {
        let level = if start.elapsed() < Duration::from_secs(10) { 0.3 } else { 0.97 };
        let tick = per_tick(level);
        recorded.add_traffic(tick, tick);
        if start.elapsed() >= next_poll {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
            let reading = telemetry.refresh(now, &keys).remove("rv-a-01").expect("a reading");
            readings.push((start.elapsed().as_secs_f64(), reading));
            let figures = extender.live.figures().of("rv-a-01");
            domain_figures.push((start.elapsed().as_secs_f64(), figures.domain, extender.refuses_comm_high_on("rv-a-01")));
            next_poll += Duration::from_secs(1);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let live: Vec<(f64, f64, bool)> = readings
        .iter()
        .filter_map(|(at, reading)| match reading.figure {
            Figure::Live(value) => Some((*at, value, reading.throttled)),
            Figure::Static(_) => None,
        })
        .collect();
    let shown = format!("{live:?}");
    assert!(live.len() >= 18, "too few live readings: {readings:?}");
    // Low phase: near 0.3, never throttled.
    let low: Vec<&(f64, f64, bool)> = live.iter().filter(|(at, _, _)| (6.0..10.0).contains(at)).collect();
    assert!(!low.is_empty() && low.iter().all(|(_, value, throttled)| (0.15..0.45).contains(value) && !throttled), "{shown}");
    // High phase: the smoothed figure rises monotonically (no oscillation) to above 0.85.
    let high: Vec<&(f64, f64, bool)> = live.iter().filter(|(at, _, _)| *at >= 11.0).collect();
    for pair in high.windows(2) {
        assert!(pair[1].1 >= pair[0].1 - 0.03, "the figure fell while traffic rose: {shown}");
    }
    assert!(high.last().is_some_and(|(_, value, throttled)| *value > 0.85 && *throttled), "{shown}");
    // Throttled only after being above the threshold for the hold.
    let first_above = live.iter().find(|(_, value, _)| *value > 0.85).map(|(at, _, _)| *at).expect("above the threshold");
    let first_throttled = live.iter().find(|(_, _, throttled)| *throttled).map(|(at, _, _)| *at).expect("throttled");
    assert!(first_throttled - first_above >= 2.5, "throttled {first_throttled} s, above since {first_above} s: {shown}");

    // The extender: `domain.nvlink_utilization` of nvl-a follows the same smooth rise, and
    // its filter refuses comm-high pods on rv-a-01 only once the domain has been above 85 %
    // for the hold (never rv-b-01, whose domain is idle, never comm-low pods).
    let shown = format!("{domain_figures:?}");
    let high: Vec<&(f64, f64, bool)> = domain_figures.iter().filter(|(at, _, _)| *at >= 11.0).collect();
    for pair in high.windows(2) {
        assert!(pair[1].1 >= pair[0].1 - 0.03, "the domain's figure fell while traffic rose: {shown}");
    }
    assert!(
        domain_figures
            .iter()
            .filter(|(at, _, _)| (6.0..10.0).contains(at))
            .all(|(_, value, refused)| (0.15..0.45).contains(value) && !refused),
        "{shown}"
    );
    let first_above = domain_figures.iter().find(|(_, value, _)| *value > 0.85).map(|(at, _, _)| *at).expect("above the threshold");
    let first_refused = domain_figures.iter().find(|(_, _, refused)| *refused).map(|(at, _, _)| *at).expect("throttled by the filter");
    assert!(first_refused - first_above >= 2.0, "refused at {first_refused} s, above since {first_above} s: {shown}");
    assert!(high.last().is_some_and(|(_, _, refused)| *refused), "{shown}");
    assert!(!extender.refuses_comm_high_on("rv-b-01"));
    assert!(!extender.refuses("rv-a-01", "low"));

    // The generated recording rule is evaluated on the exporter's series.
    let recorded_rule = api.query("placid:nvlink_node_utilization:ratio").expect("the rule's series");
    assert!(
        recorded_rule.iter().any(|sample| sample.labels.get("node").map(String::as_str) == Some("rv-a-01") && sample.value > 0.0),
        "{recorded_rule:?}"
    );

    // Bad telemetry: a series that does not exist, then Prometheus down. Both fall back to the
    // static figure with a log line, and nothing panics.
    let missing = Rule {
        query: "placid_no_such_series".to_owned(),
        key: "node".to_owned(),
        half_life: Duration::from_secs(3),
        max_age: Duration::from_secs(10),
        threshold: 0.85,
        hold: Duration::from_secs(3),
    };
    let reading = Telemetry::new(api, missing).refresh(0.0, &keys).remove("rv-a-01").expect("a reading");
    assert_eq!(reading.figure, Figure::Static(0.25));
    assert!(!reading.throttled && reading.fallback.as_deref().is_some_and(|line| line.contains("no sample")), "{reading:?}");
    let _ = child.0.kill();
    let _ = child.0.wait();
    let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64()) + 11.0;
    let down = telemetry.refresh(later, &keys).remove("rv-a-01").expect("a reading");
    assert_eq!(down.figure, Figure::Static(0.25), "{down:?}");
    assert!(!down.throttled && down.fallback.as_deref().is_some_and(|line| line.contains("unreachable")), "{down:?}");
    // The extender, Prometheus gone: it logs, keeps scheduling, and once the last samples are
    // older than max-age nothing is throttled any more.
    std::thread::sleep(Duration::from_secs(11));
    assert!(!extender.refuses_comm_high_on("rv-a-01"), "stale telemetry must not throttle");
    assert_eq!(extender.live.figures().of("rv-a-01").domain, placid_lang::expr::STATIC_UTILIZATION);
    let logged = lines.lock().map(|lines| lines.clone()).unwrap_or_default();
    assert!(logged.iter().any(|line| line.contains("nvlink_domain=nvl-a") && line.contains("unreachable")), "{logged:?}");
    drop(extender);

    let _ = stop_exporter.send(());
    let _ = server.join();
}
