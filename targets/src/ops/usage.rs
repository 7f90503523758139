//! Recording rules over live series: NVLink utilisation per link, GPU, node and domain from
//! the exporter's byte counters (`placid-probe --serve`, docs/probe.md), and the cost of each
//! converged model (a plan stage's jobs) from the pod labels the workload templates carry:
//! its GPU-hours at the node's price (the NVLink premium being part of that price) plus the
//! bytes it sends out at the node's egress price; and the GPU-hours interrupted pods lost
//! since their last checkpoint.
//!
//! Pods are known to Prometheus through kube-state-metrics: `kube_pod_labels` (with
//! `--metric-labels-allowlist=pods=[<prefix>/team,<prefix>/tier,<prefix>/class,<prefix>/stage]`,
//! the project's label prefix)
//! and `kube_pod_container_resource_requests`, and their start, deletion and completion
//! times; their traffic through the kubelet's cAdvisor,
//! which counts a pod's network once, on its sandbox. Those are the only series the rules read
//! that neither the exporter nor the static series produce ([`EXTERNAL`]).

use placid_lang::labels;

use super::rule::Rule;
use super::series;

/// Rate window of the NVLink counters: two scrapes at the usual 30 s interval and then some.
const WINDOW: &str = "2m";

/// NVLink utilisation of one link, 0-1.
pub const LINK_UTILIZATION: &str = "placid:nvlink_link_utilization:ratio";
/// NVLink utilisation of one GPU (all its links), 0-1.
pub const GPU_UTILIZATION: &str = "placid:nvlink_gpu_utilization:ratio";
/// NVLink utilisation of one node, 0-1: what `node.nvlink_utilization` reads.
pub const NODE_UTILIZATION: &str = "placid:nvlink_node_utilization:ratio";
/// NVLink saturation of a domain against its declared capacity, 0-1: what
/// `domain.nvlink_utilization` and the saturation alerts read.
pub const DOMAIN_UTILIZATION: &str = "placid:nvlink_domain_utilization:ratio";
/// GPUs each running pod requests, with its team, tier, class and stage.
pub const POD_GPUS: &str = "placid:pod_gpus:sum";
/// A pod's GPU-hour cost per hour (GPUs x node price).
pub const POD_COST: &str = "placid:pod_cost_per_hour:sum";
/// Bytes a second a GPU pod sends from its own network namespace, with its node, team, tier,
/// class and stage.
pub const POD_EGRESS: &str = "placid:pod_egress_bytes:rate2m";
/// A pod's egress cost per hour ([`POD_EGRESS`] x the node's egress price).
pub const POD_EGRESS_COST: &str = "placid:pod_egress_cost_per_hour:sum";
/// The NVLink part of [`POD_COST`].
pub const POD_NVLINK_PREMIUM: &str = "placid:pod_nvlink_premium_per_hour:sum";
/// Cost per hour of each converged model (a team's stage of a class in a tier): GPU-hours
/// and egress.
pub const MODEL_COST: &str = "placid:model_cost_per_hour:sum";
/// The egress part of [`MODEL_COST`].
pub const MODEL_EGRESS_COST: &str = "placid:model_egress_cost_per_hour:sum";
/// The NVLink premium per hour of each converged model.
pub const MODEL_NVLINK_PREMIUM: &str = "placid:model_nvlink_premium_per_hour:sum";
// The `1h` of the lost-work names is [`LOST_WINDOW`]; `concat!` takes no constants.
/// Seconds each GPU pod interrupted in the last hour (deleted while it ran) had run until it
/// stopped, by pod `uid`, with its node, team, tier, class and stage.
pub const POD_INTERRUPTED_RUN: &str = "placid:pod_interrupted_run_seconds:1h";
/// GPU-hours each pod interrupted in the last hour lost: its GPUs x the time since its last
/// checkpoint, as the engine counts work lost (docs/semantics.md, section 6).
pub const POD_LOST_GPU_HOURS: &str = "placid:pod_lost_gpu_hours:1h";
/// [`POD_LOST_GPU_HOURS`] by the interrupted pods' tier.
pub const TIER_LOST_GPU_HOURS: &str = "placid:tier_lost_gpu_hours:1h";
/// A team's cost per hour, GPU-hours and egress.
pub const TEAM_COST: &str = "placid:team_cost_per_hour:sum";
/// A team's cost over the last day, `{team, cost_center, currency}`: what budget alerts read.
pub const COST_DAILY: &str = "placid_cost_daily";

/// The exporter's series these rules read (its full list is `placid_probe::exporter::METRICS`).
pub const TRANSMITTED: &str = "placid_nvlink_transmitted_bytes_total";
/// See [`TRANSMITTED`].
pub const RECEIVED: &str = "placid_nvlink_received_bytes_total";
/// See [`TRANSMITTED`].
pub const LINK_BANDWIDTH: &str = "placid_nvlink_link_bandwidth_bytes_per_second";

/// cAdvisor's counter of the bytes a pod sends: the egress rules read it.
pub const POD_TRANSMITTED: &str = "container_network_transmit_bytes_total";

/// kube-state-metrics' pod start time: the lost-work rules and the queue-wait panel read it.
pub const POD_STARTED: &str = "kube_pod_start_time";
/// kube-state-metrics' `metadata.deletionTimestamp`: when the deletion was asked plus the
/// grace period, which placid's workloads set to their tier's preemption window, so it is
/// when the engine's victim stops.
pub const POD_DELETED: &str = "kube_pod_deletion_timestamp";
/// kube-state-metrics' pod phases.
pub const POD_PHASE: &str = "kube_pod_status_phase";
/// kube-state-metrics' pod info, whose `host_network` tells a pod without a network
/// namespace of its own.
pub const POD_INFO: &str = "kube_pod_info";

/// kube-state-metrics' and cAdvisor's series the cost and lost-work rules read.
pub const EXTERNAL: &[&str] =
    &["kube_pod_labels", "kube_pod_container_resource_requests", POD_TRANSMITTED, POD_STARTED, POD_DELETED, POD_PHASE, POD_INFO];

/// Every series these rules record.
pub const RECORDED: &[&str] = &[
    LINK_UTILIZATION,
    GPU_UTILIZATION,
    NODE_UTILIZATION,
    DOMAIN_UTILIZATION,
    POD_GPUS,
    POD_COST,
    POD_EGRESS,
    POD_EGRESS_COST,
    POD_NVLINK_PREMIUM,
    MODEL_COST,
    MODEL_EGRESS_COST,
    MODEL_NVLINK_PREMIUM,
    TEAM_COST,
    COST_DAILY,
    POD_INTERRUPTED_RUN,
    POD_LOST_GPU_HOURS,
    TIER_LOST_GPU_HOURS,
];

/// The pod labels of the workload templates (`<prefix>/team`, ...) that placid's pod series
/// carry, each under its name here.
pub const POD_LABELS: [&str; 4] = ["team", "tier", "class", "stage"];

/// kube-state-metrics' label in `kube_pod_labels` for the workload templates' pod label
/// `<prefix>/<name>` (`label_placid_dev_tier`): the rules read it, the promtool tests feed it.
pub fn pod_label(prefix: &str, name: &str) -> String {
    labels::metric_label(&labels::key(prefix, name))
}

/// The labels placid's pod series carry from the pod's `<prefix>/*` labels: `team, tier, ...`.
fn placid_labels() -> String {
    POD_LABELS.join(", ")
}

/// What tells one converged model's cost from another's.
const MODEL_LABELS: &str = "team, tier, class, stage, currency";

/// How far back the lost-work rules look.
const LOST_WINDOW: &str = "1h";

/// Seconds in an hour, for figures per hour from figures per second.
const SECONDS_PER_HOUR: &str = "3600";
/// Bytes in the TB egress is priced by (`cost egress-tb=`).
const BYTES_PER_TB: &str = "1e12";
/// The resolution at which the lost-work rules look for a pod that was running when its
/// deletion was seen: placid's shortest grace period is Kubernetes' default 30 s.
const DELETION_STEP: &str = "30s";

fn traffic(by: &str) -> String {
    format!("sum by ({by}) (rate({TRANSMITTED}[{WINDOW}]) + rate({RECEIVED}[{WINDOW}]))")
}

fn nvlink() -> Vec<Rule> {
    vec![
        Rule::record(LINK_UTILIZATION, format!("(rate({TRANSMITTED}[{WINDOW}]) + rate({RECEIVED}[{WINDOW}])) / {LINK_BANDWIDTH}")),
        Rule::record(
            GPU_UTILIZATION,
            format!("{} / sum by (node, nvlink_domain, gpu) ({LINK_BANDWIDTH})", traffic("node, nvlink_domain, gpu")),
        ),
        Rule::record(NODE_UTILIZATION, format!("{} / sum by (node, nvlink_domain) ({LINK_BANDWIDTH})", traffic("node, nvlink_domain"))),
        Rule::record(DOMAIN_UTILIZATION, format!("{} / on (nvlink_domain) {}", traffic("nvlink_domain"), series::NVLINK_CAPACITY)),
    ]
}

fn cost(prefix: &str) -> Vec<Rule> {
    let from: Vec<String> = POD_LABELS.iter().map(|name| pod_label(prefix, name)).collect();
    let mut labels = format!("max by (namespace, pod, {}) (kube_pod_labels)", from.join(", "));
    for (from, to) in from.iter().zip(POD_LABELS) {
        labels = format!("label_replace({labels}, \"{to}\", \"$1\", \"{from}\", \"(.+)\")");
    }
    let kept = placid_labels();
    vec![
        Rule::record(
            POD_GPUS,
            format!(
                "sum by (namespace, pod, node) (kube_pod_container_resource_requests{{resource=\"nvidia_com_gpu\", node!=\"\"}}) * on (namespace, pod) group_left ({kept}) max by (namespace, pod, {kept}) ({labels})"
            ),
        ),
        Rule::record(POD_COST, format!("{POD_GPUS} * on (node) group_left (currency) {}", series::PRICE)),
        Rule::record(POD_NVLINK_PREMIUM, format!("{POD_GPUS} * on (node) group_left (currency) {}", series::NVLINK_PREMIUM)),
        // `pod!=""` leaves out the node's own interfaces; `max by` an interface counts a pod
        // once when two jobs scrape its cAdvisor (the kubelet's and a standalone one). A pod
        // on the host's network reports the host's interfaces, the whole node's traffic.
        Rule::record(
            POD_EGRESS,
            format!(
                "(sum by (namespace, pod) (max by (namespace, pod, interface) (rate({POD_TRANSMITTED}{{pod!=\"\"}}[{WINDOW}]))) unless on (namespace, pod) {POD_INFO}{{host_network=\"true\"}}) * on (namespace, pod) group_left (node, {kept}) {}",
                pod_join(POD_GPUS)
            ),
        ),
        Rule::record(
            POD_EGRESS_COST,
            format!("{POD_EGRESS} * {SECONDS_PER_HOUR} / {BYTES_PER_TB} * on (node) group_left (currency) {}", series::EGRESS_PRICE),
        ),
        Rule::record(MODEL_COST, total(MODEL_LABELS)),
        Rule::record(MODEL_EGRESS_COST, format!("sum by ({MODEL_LABELS}) ({POD_EGRESS_COST})")),
        Rule::record(MODEL_NVLINK_PREMIUM, format!("sum by ({MODEL_LABELS}) ({POD_NVLINK_PREMIUM})")),
        Rule::record(TEAM_COST, total("team, currency")),
        // Five-minute steps over the day, each worth a twelfth of an hour; a team that ran an
        // hour pays for that hour, not for a day at that rate.
        Rule::record(
            COST_DAILY,
            format!(
                "sum by (team, currency) (sum_over_time({TEAM_COST}[1d:5m])) / 12 * on (team) group_left (cost_center) {}",
                series::TEAM_INFO
            ),
        ),
    ]
}

/// A GPU pod's series as a 1 that carries its node and `placid.dev/*` labels onto another
/// pod series (`* on (namespace, pod) group_left (...)`); `gpus` is [`POD_GPUS`] or a range
/// function of it, which must hold one series per pod.
pub fn pod_join(gpus: &str) -> String {
    format!("(0 * {gpus} + 1)")
}

/// The lost-work rules over the last [`LOST_WINDOW`]. A pod is interrupted when it was still
/// running when its deletion was seen (preempted, evicted, drained); a pod deleted after it
/// completed (a Job's TTL) lost nothing. Pods are told apart by `uid`, so a name used again
/// within the hour is a pod of its own. The range functions keep a pod for the whole window
/// after it is gone, so each rule is a figure over the last hour however often it runs.
fn lost_work() -> Vec<Rule> {
    let by_uid = "namespace, pod, uid";
    let last = |series: &str| format!("max by ({by_uid}) (last_over_time({series}[{LOST_WINDOW}]))");
    let running_when_deleted = format!(
        "max by ({by_uid}) (max_over_time(({POD_PHASE}{{phase=\"Running\"}} == 1 and on ({by_uid}) {POD_DELETED})[{LOST_WINDOW}:{DELETION_STEP}]))"
    );
    let ran = format!("({} - on ({by_uid}) {}) and on ({by_uid}) {running_when_deleted}", last(POD_DELETED), last(POD_STARTED));
    // One series per pod however its labels changed in the window (a reused name, a label
    // edit), or the joins below would refuse the whole vector.
    let gpus = format!("topk by (namespace, pod) (1, last_over_time({POD_GPUS}[{LOST_WINDOW}]))");
    let kept = placid_labels();
    let checkpoint = series::CHECKPOINT_SECONDS;
    vec![
        Rule::record(POD_INTERRUPTED_RUN, format!("({ran}) * on (namespace, pod) group_left (node, {kept}) {}", pod_join(&gpus))),
        // `ran mod every` in a tier that checkpoints, all of `ran` in one that does not.
        Rule::record(
            POD_LOST_GPU_HOURS,
            format!(
                "({POD_INTERRUPTED_RUN} % on (tier) group_left () {checkpoint} or {POD_INTERRUPTED_RUN} unless on (tier) {checkpoint}) * on (namespace, pod) group_left () {gpus} / {SECONDS_PER_HOUR}"
            ),
        ),
        Rule::record(TIER_LOST_GPU_HOURS, format!("sum by (tier) ({POD_LOST_GPU_HOURS})")),
    ]
}

/// GPU-hour and egress cost summed by `by`. Either alone where the other is missing: nodes
/// without an egress price, or a cluster whose cAdvisor is not scraped, still cost their
/// GPU-hours.
fn total(by: &str) -> String {
    let gpus = format!("sum by ({by}) ({POD_COST})");
    let egress = format!("sum by ({by}) ({POD_EGRESS_COST})");
    format!("{gpus} + {egress} or {gpus} or {egress}")
}

/// The live recording rules, NVLink first, over pods labelled under `prefix`.
pub fn rules(prefix: &str) -> Vec<Rule> {
    let mut rules = nvlink();
    rules.extend(cost(prefix));
    rules.extend(lost_work());
    rules
}
