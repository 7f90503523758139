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
