//! Issue 18's real-Prometheus bar: Debian's prometheus on loopback scrapes the exporter
//! (`placid-probe`'s server on recorded NVML answers) and loads the cluster example's
//! generated rules; the extender's telemetry reads utilisation back through the query API.
//! Driving the NVLink traffic up, the smoothed figure rises without oscillating and the
//! throttle starts only after its hold time; a query for a missing series and a stopped
//! Prometheus fall back to the static figure with a log line.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use placid_lang::telemetry::Figure;
use placid_probe::exporter::{Identity, serve};
use placid_probe::nvml::GpuSource;
use placid_probe::nvml::recorded::Recorded;
use placid_scoring::extender::telemetry::{Prometheus, Rule, Telemetry};
use placid_tests::build_clean;
use placid_tests::prometheus::tool;
use placid_tests::slurm::wait_until;

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
    let identity = Identity { node: "gpu-01".to_owned(), nvlink_domain: "nvl-a".to_owned() };
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
    let api = Prometheus { address, timeout: Duration::from_secs(2) };
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
    let mut telemetry = Telemetry::new(api, rule);
    let keys = BTreeMap::from([("gpu-01".to_owned(), 0.25)]);
    let start = Instant::now();
    let mut readings = Vec::new();
    let mut next_poll = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(26) {
        let level = if start.elapsed() < Duration::from_secs(10) { 0.3 } else { 0.97 };
        let tick = per_tick(level);
        recorded.add_traffic(tick, tick);
        if start.elapsed() >= next_poll {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
            let reading = telemetry.refresh(now, &keys).remove("gpu-01").expect("a reading");
            readings.push((start.elapsed().as_secs_f64(), reading));
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

    // The generated recording rule is evaluated on the exporter's series.
    let recorded_rule = api.query("placid:nvlink_node_utilization:ratio").expect("the rule's series");
    assert!(
        recorded_rule.iter().any(|sample| sample.labels.get("node").map(String::as_str) == Some("gpu-01") && sample.value > 0.0),
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
    let reading = Telemetry::new(api, missing).refresh(0.0, &keys).remove("gpu-01").expect("a reading");
    assert_eq!(reading.figure, Figure::Static(0.25));
    assert!(!reading.throttled && reading.fallback.as_deref().is_some_and(|line| line.contains("no sample")), "{reading:?}");
    let _ = child.0.kill();
    let _ = child.0.wait();
    let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64()) + 11.0;
    let down = telemetry.refresh(later, &keys).remove("gpu-01").expect("a reading");
    assert_eq!(down.figure, Figure::Static(0.25), "{down:?}");
    assert!(!down.throttled && down.fallback.as_deref().is_some_and(|line| line.contains("unreachable")), "{down:?}");

    let _ = stop_exporter.send(());
    let _ = server.join();
}
