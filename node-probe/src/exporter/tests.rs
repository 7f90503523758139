//! The exporter's tests: scrapes of recorded NVML telemetry (whole GPUs, NVLink errors, a
//! device that goes away) give the metrics the docs name, with the node's identity labels.

use super::{Identity, METRICS, scrape};
use crate::nvml::recorded::Recorded;
use crate::nvml::{GpuSource, GpuTelemetry, LinkErrors, NvmlGpu, Unavailable};

fn identity() -> Identity {
    Identity { node: "gpu-01".to_owned(), nvlink_domain: "nvl-a".to_owned() }
}

/// The sample lines of one family (`name{...} value`).
fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines().filter(|line| line.strip_prefix(name).is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))).collect()
}

#[test]
fn an_hgx_node_serves_every_family_with_its_labels() {
    let recorded = Recorded::hgx(8, 18);
    recorded.add_traffic(1, 2);
    let text = scrape(&recorded, &identity());
    for name in METRICS.iter().filter(|name| **name != "placid_gpu_mig_instances") {
        assert!(!samples(&text, name).is_empty(), "{name} missing from\n{text}");
    }
    assert_eq!(samples(&text, "placid_nvlink_link_up").len(), 8 * 18);
    assert_eq!(samples(&text, "placid_nvlink_errors_total").len(), 8 * 18 * 4);
    let transmitted = samples(&text, "placid_nvlink_transmitted_bytes_total");
    assert!(transmitted.iter().all(|line| line.ends_with(" 1024")), "KiB become bytes: {transmitted:?}");
    assert!(text.contains(r#"placid_gpu_utilization_ratio{node="gpu-01",nvlink_domain="nvl-a",gpu="3"} 0.5"#), "{text}");
    // NVLink 4.0: 50 GB/s both directions per link.
    assert!(
        text.contains(
            r#"placid_nvlink_link_bandwidth_bytes_per_second{node="gpu-01",nvlink_domain="nvl-a",gpu="0",link="17"} 50000000000"#
        )
    );
    assert!(text.ends_with("# EOF\n"), "OpenMetrics ends with # EOF");
}

#[test]
fn every_served_family_is_listed_in_metrics() {
    let recorded = Recorded::hgx(1, 1);
    let mut gpus = recorded.gpus().unwrap_or_default();
    if let Some(mig) = gpus[0].mig.as_mut() {
        mig.enabled = true;
        mig.instances = vec!["1g.18gb".to_owned(), "1g.18gb".to_owned(), "3g.71gb".to_owned()];
    }
    let mig = Recorded::new(gpus);
    mig.set_telemetry(
        0,
        GpuTelemetry { link_errors: vec![LinkErrors { link: 0, replay: Some(3), ..LinkErrors::default() }], ..GpuTelemetry::default() },
    );
    let text = scrape(&mig, &identity());
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let name = line.split(['{', ' ']).next().unwrap_or_default();
        assert!(METRICS.contains(&name), "{name} is served but not in METRICS");
    }
    assert!(text.contains(r#"placid_gpu_mig_instances{node="gpu-01",nvlink_domain="nvl-a",gpu="0",profile="1g.18gb"} 2"#), "{text}");
    assert!(text.contains(r#"kind="replay"} 3"#));
    assert!(!text.contains(r#"kind="crc_data""#), "an unanswered counter is left out, not zero");
}

struct Absent;

impl GpuSource for Absent {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        Err(Unavailable { reason: "no driver".to_owned() })
    }
    fn link_traffic(&self, _gpu: u32, _link: u32) -> Option<(u64, u64)> {
        None
    }
    fn telemetry(&self, _gpu: u32) -> Option<GpuTelemetry> {
        None
    }
}

#[test]
fn without_nvml_only_the_up_gauge_is_served() {
    let text = scrape(&Absent, &identity());
    let values: Vec<&str> = text.lines().filter(|line| !line.starts_with('#')).collect();
    assert_eq!(values, ["placid_exporter_nvml_up 0"]);
}

#[test]
fn utilisation_above_100_percent_is_clamped() {
    let recorded = Recorded::hgx(1, 0);
    recorded.set_telemetry(0, GpuTelemetry { utilization_percent: Some(250), ..GpuTelemetry::default() });
    assert!(scrape(&recorded, &identity()).contains(r#"gpu="0"} 1.0"#));
}

/// 1,100 idle and slow-header connections (over the default 1,024 file descriptors) do not
/// starve a scrape: the server holds at most its cap of them, shedding the connection that
/// has waited longest for a head.
#[test]
fn idle_and_slow_header_connections_do_not_starve_a_scrape() {
    use std::io::{Read as _, Write as _};
    use std::net::TcpStream;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let source: Arc<dyn GpuSource + Send + Sync> = Arc::new(Recorded::hgx(1, 1));
        super::serve::serve(listener, source, identity(), async {
            let _ = stopped.await;
        })
    });
    let mut held = Vec::new();
    for index in 0..1_100 {
        let stream = TcpStream::connect(address).expect("connect");
        if index % 2 == 0 {
            (&stream).write_all(b"GET /metrics HTTP/1.1\r\nHo").expect("a slow head");
        }
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..3 {
        let started = Instant::now();
        let mut scrape = TcpStream::connect(address).expect("connect");
        scrape.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        scrape.write_all(b"GET /metrics HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n").expect("request");
        let mut answer = Vec::new();
        scrape.read_to_end(&mut answer).expect("an answer before the timeout");
        assert!(answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
        assert!(started.elapsed() < Duration::from_secs(2), "the scrape waited {:?}", started.elapsed());
        held.push(TcpStream::connect(address).expect("connect"));
    }
    let open = held
        .iter()
        .filter(|stream| {
            stream.set_nonblocking(true).is_ok()
                && stream.peek(&mut [0; 1]).is_err_and(|error| error.kind() == std::io::ErrorKind::WouldBlock)
        })
        .count();
    assert!(open <= super::serve::MAX_CONNECTIONS, "the server holds {open} connections");
    let _ = stop.send(());
    drop(held);
    server.join().expect("the server thread").expect("the server");
}
