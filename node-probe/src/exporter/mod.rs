//! The metrics exporter (`placid-probe --serve ADDR`): one node's GPU and NVLink telemetry in
//! the OpenMetrics text format, encoded by `prometheus-client` from a fresh registry per
//! scrape, so a GPU that disappears leaves no stale series behind.
//!
//! Every series carries `node` and `nvlink_domain`, the labels the generated recording rules
//! join on (docs/operations.md lists the series and the rules that read them). NVLink
//! utilisation is not a gauge here: NVML gives cumulative byte counters, and the rules turn
//! them into rates and divide by the link bandwidth served beside them, over whatever window
//! the rule chooses.

pub mod serve;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::gpus::link_bandwidth;
use crate::nvml::{GpuSource, LinkErrors};

/// The content type of [`scrape`]'s text, which Prometheus needs to parse OpenMetrics.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every metric family the exporter serves, as Prometheus stores the samples (counters with
/// `_total`). The generated rules may read only these and the policy's static series; a test
/// holds them to it.
pub const METRICS: &[&str] = &[
    "placid_exporter_nvml_up",
    "placid_gpu_info",
    "placid_gpu_utilization_ratio",
    "placid_gpu_memory_used_bytes",
    "placid_gpu_memory_total_bytes",
    "placid_gpu_mig_instances",
    "placid_nvlink_link_up",
    "placid_nvlink_link_bandwidth_bytes_per_second",
    "placid_nvlink_transmitted_bytes_total",
    "placid_nvlink_received_bytes_total",
    "placid_nvlink_errors_total",
];

/// What names this node in every series.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    /// The node's inventory name.
    pub node: String,
    /// Its NVLink domain, empty when it has none (Prometheus then drops the label).
    pub nvlink_domain: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GpuLabels {
    node: String,
    nvlink_domain: String,
    gpu: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InfoLabels {
    node: String,
    nvlink_domain: String,
    gpu: String,
    uuid: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MigLabels {
    node: String,
    nvlink_domain: String,
    gpu: String,
    profile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LinkLabels {
    node: String,
    nvlink_domain: String,
    gpu: String,
    link: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    node: String,
    nvlink_domain: String,
    gpu: String,
    link: String,
    kind: &'static str,
}

/// The families of one scrape, registered under the names of [`METRICS`].
#[derive(Default)]
struct Families {
    nvml_up: Gauge,
    info: Family<InfoLabels, Gauge>,
    utilization: Family<GpuLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    memory_used: Family<GpuLabels, Gauge>,
    memory_total: Family<GpuLabels, Gauge>,
    mig: Family<MigLabels, Gauge>,
    link_up: Family<LinkLabels, Gauge>,
    bandwidth: Family<LinkLabels, Gauge>,
    transmitted: Family<LinkLabels, Counter>,
    received: Family<LinkLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
}

impl Families {
    fn register(self) -> Registry {
        let mut registry = Registry::default();
        registry.register("placid_exporter_nvml_up", "1 when NVML answered this scrape", self.nvml_up);
        registry.register("placid_gpu_info", "One series per GPU naming its UUID and model", self.info);
        registry.register("placid_gpu_utilization_ratio", "Fraction of the last sample period a kernel ran", self.utilization);
        registry.register("placid_gpu_memory_used_bytes", "Framebuffer memory allocated", self.memory_used);
        registry.register("placid_gpu_memory_total_bytes", "Framebuffer memory installed", self.memory_total);
        registry.register("placid_gpu_mig_instances", "MIG instances that exist, per profile", self.mig);
        registry.register("placid_nvlink_link_up", "1 when the NVLink link is active", self.link_up);
        registry.register(
            "placid_nvlink_link_bandwidth_bytes_per_second",
            "Both directions of the link at full speed, by NVLink version",
            self.bandwidth,
        );
        registry.register("placid_nvlink_transmitted_bytes", "NVLink data transmitted on the link", self.transmitted);
        registry.register("placid_nvlink_received_bytes", "NVLink data received on the link", self.received);
        registry.register("placid_nvlink_errors", "NVLink data-link errors by kind (replay, recovery, crc_flit, crc_data)", self.errors);
        registry
    }
}

/// One scrape: asks `source` about every GPU and encodes what it answered. NVML being
/// unavailable is `placid_exporter_nvml_up 0` and no GPU series, never an error.
pub fn scrape(source: &dyn GpuSource, identity: &Identity) -> String {
    let families = Families::default();
    if let Ok(gpus) = source.gpus() {
        families.nvml_up.set(1);
        for gpu in &gpus {
            let gpu_labels =
                GpuLabels { node: identity.node.clone(), nvlink_domain: identity.nvlink_domain.clone(), gpu: gpu.index.to_string() };
            let info = InfoLabels {
                node: identity.node.clone(),
                nvlink_domain: identity.nvlink_domain.clone(),
                gpu: gpu_labels.gpu.clone(),
                uuid: gpu.uuid.clone().unwrap_or_default(),
                model: gpu.name.clone().unwrap_or_default(),
            };
            families.info.get_or_create(&info).set(1);
            if let Some(total) = gpu.memory_bytes {
                families.memory_total.get_or_create(&gpu_labels).set(gauge(total));
            }
            if let Some(mig) = gpu.mig.as_ref().filter(|mig| mig.enabled) {
                for profile in &mig.instances {
                    let labels = MigLabels {
                        node: identity.node.clone(),
                        nvlink_domain: identity.nvlink_domain.clone(),
                        gpu: gpu_labels.gpu.clone(),
                        profile: profile.clone(),
                    };
                    families.mig.get_or_create(&labels).inc();
                }
            }
            let link_labels = |link: u32| LinkLabels {
                node: identity.node.clone(),
                nvlink_domain: identity.nvlink_domain.clone(),
                gpu: gpu_labels.gpu.clone(),
                link: link.to_string(),
            };
            for link in &gpu.links {
                let labels = link_labels(link.link);
                families.link_up.get_or_create(&labels).set(i64::from(link.active));
                if !link.active {
                    continue;
                }
                families.bandwidth.get_or_create(&labels).set(gauge(link_bandwidth(link.version) / 8));
                if let Some((tx, rx)) = source.link_traffic(gpu.index, link.link) {
                    families.transmitted.get_or_create(&labels).inc_by(tx.saturating_mul(1024));
                    families.received.get_or_create(&labels).inc_by(rx.saturating_mul(1024));
                }
            }
            let Some(telemetry) = source.telemetry(gpu.index) else { continue };
            if let Some(percent) = telemetry.utilization_percent {
                families.utilization.get_or_create(&gpu_labels).set(f64::from(percent.min(100)) / 100.0);
            }
            if let Some(used) = telemetry.memory_used_bytes {
                families.memory_used.get_or_create(&gpu_labels).set(gauge(used));
            }
            for errors in &telemetry.link_errors {
                for (kind, count) in error_counts(errors) {
                    let LinkLabels { node, nvlink_domain, gpu, link } = link_labels(errors.link);
                    families.errors.get_or_create(&ErrorLabels { node, nvlink_domain, gpu, link, kind }).inc_by(count);
                }
            }
        }
    }
    let registry = families.register();
    let mut text = String::new();
    // Writing to a String cannot fail; an encoder error would be a bug in a label type, and
    // the scrape then serves what was written.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// The counters NVML answered, by the `kind` label they are served under.
fn error_counts(errors: &LinkErrors) -> impl Iterator<Item = (&'static str, u64)> {
    [("replay", errors.replay), ("recovery", errors.recovery), ("crc_flit", errors.crc_flit), ("crc_data", errors.crc_data)]
        .into_iter()
        .filter_map(|(kind, count)| Some((kind, count?)))
}

/// Integer gauges are `i64`; bytes beyond `i64::MAX` (8 EiB) do not occur, and clamp.
fn gauge(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
