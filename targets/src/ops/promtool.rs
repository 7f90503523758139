//! Unit tests of the generated rules in `promtool test rules` format: the static series hold
//! the policy's figures, the NVLink rules turn byte counters into the utilisation they
//! should, the cost rules price a labelled pod, and every alert fires once its condition has
//! held for its `for`, not before, and not on the good side of its threshold.
//!
//! Inputs are chosen so every expected value is exact in binary floating point (rates of
//! whole bytes over whole minutes, halves), because promtool compares samples exactly.

use std::collections::BTreeMap;

use placid_lang::diag::Diagnostic;
use placid_lang::labels;
use placid_lang::model::{Alert, Bound, Model, Node, Tier};
use serde::Serialize;

use super::alerting;
use super::rule::Rule;
use super::series;
use super::usage;
use crate::yaml;

/// The file name of the rules the tests load, beside the test file.
pub const RULES_FILE: &str = "rules.yaml";

#[derive(Serialize)]
struct TestFile {
    rule_files: Vec<&'static str>,
    evaluation_interval: &'static str,
    tests: Vec<TestCase>,
}

#[derive(Serialize)]
struct TestCase {
    name: String,
    interval: &'static str,
    input_series: Vec<Input>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    promql_expr_test: Vec<ExprTest>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    alert_rule_test: Vec<AlertTest>,
}

#[derive(Serialize)]
struct Input {
    series: String,
    values: String,
}

#[derive(Serialize)]
struct ExprTest {
    expr: String,
    eval_time: String,
    exp_samples: Vec<Sample>,
}

#[derive(Serialize)]
struct Sample {
    labels: String,
    value: f64,
}

#[derive(Serialize)]
struct AlertTest {
    eval_time: String,
    alertname: String,
    exp_alerts: Vec<ExpectedAlert>,
}

#[derive(Serialize)]
struct ExpectedAlert {
    exp_labels: BTreeMap<String, String>,
    exp_annotations: BTreeMap<String, String>,
}

/// `name{a="b",...}` with the values escaped as PromQL strings.
fn selector(name: &str, labels: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = labels.iter().map(|(key, value)| format!("{key}={}", quoted(value))).collect();
    format!("{name}{{{}}}", pairs.join(","))
}

fn quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for character in value.chars() {
        match character {
            '"' | '\\' => {
                out.push('\\');
                out.push(character);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(character),
        }
    }
    out.push('"');
    out
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
}

/// kube-state-metrics' names of the pod labels the rules read (`label_placid_dev_team`, ...),
/// under the project's label prefix, in [`usage::POD_LABELS`] order: what a pod of the
/// workload templates really carries.
fn pod_keys(model: &Model) -> [String; 4] {
    usage::POD_LABELS.map(|name| usage::pod_label(labels::prefix(&model.project), name))
}

/// `base` and `extra`: one pod's labels and those of one of its series.
fn with_labels(base: &BTreeMap<String, String>, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut all = base.clone();
    all.extend(labels(extra));
    all
}

fn minutes(count: u64) -> String {
    format!("{count}m")
}

/// Each static series holds the figure of the rule that records it.
fn static_series(rules: &[Rule]) -> Option<TestCase> {
    let mut by_name: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for rule in rules {
        let (Some(name), Some(value)) = (rule.record.as_deref(), rule.expr.strip_prefix("vector(").and_then(|rest| rest.strip_suffix(')')))
        else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else { continue };
        by_name.entry(name).or_default().push(Sample { labels: selector(name, &rule.labels), value });
    }
    (!by_name.is_empty()).then(|| TestCase {
        name: "static series hold the policy's figures".to_owned(),
        interval: "1m",
        input_series: Vec::new(),
        promql_expr_test: by_name
            .into_iter()
            .map(|(name, exp_samples)| ExprTest { expr: name.to_owned(), eval_time: minutes(1), exp_samples })
            .collect(),
        alert_rule_test: Vec::new(),
    })
}

/// One link of one GPU per domain, at full bandwidth equal to the domain's capacity, moving
/// a quarter of it each way: every utilisation rule must read one half.
fn nvlink(model: &Model) -> Option<TestCase> {
    let mut inputs = Vec::new();
    let mut expected: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for domain in &model.domains {
        let capacity: u128 = domain.nodes.iter().map(|node| series::node_nvlink_bytes(model.node(*node))).sum();
        // Whole numbers of bytes per minute, exact in a double (below 2^53 / 15).
        if capacity == 0 || capacity > (1 << 48) {
            continue;
        }
        let node = format!("promtool-{}", domain.name);
        let link = labels(&[("node", &node), ("nvlink_domain", domain.name.as_str()), ("gpu", "0"), ("link", "0")]);
        let per_minute = capacity * 15;
        inputs.push(Input { series: selector(usage::LINK_BANDWIDTH, &link), values: format!("{capacity}+0x20") });
        inputs.push(Input { series: selector(usage::TRANSMITTED, &link), values: format!("0+{per_minute}x20") });
        inputs.push(Input { series: selector(usage::RECEIVED, &link), values: format!("0+{per_minute}x20") });
        let mut gpu = link.clone();
        gpu.remove("link");
        let mut node_labels = gpu.clone();
        node_labels.remove("gpu");
        let domain_labels = labels(&[("nvlink_domain", domain.name.as_str())]);
        for (name, labels) in [
            (usage::LINK_UTILIZATION, &link),
            (usage::GPU_UTILIZATION, &gpu),
            (usage::NODE_UTILIZATION, &node_labels),
            (usage::DOMAIN_UTILIZATION, &domain_labels),
        ] {
            expected.entry(name).or_default().push(Sample { labels: selector(name, labels), value: 0.5 });
        }
    }
    (!inputs.is_empty()).then(|| TestCase {
        name: "NVLink utilisation from the exporter's counters".to_owned(),
        interval: "1m",
        input_series: inputs,
        promql_expr_test: expected
            .into_iter()
            .map(|(name, exp_samples)| ExprTest { expr: name.to_owned(), eval_time: minutes(10), exp_samples })
            .collect(),
        alert_rule_test: Vec::new(),
    })
}

/// Bytes a second the test pod sends: a whole number, so that its rate is exact.
const EGRESS_BYTES_PER_SECOND: u64 = 10_000_000;

/// A pod on the host's network: cAdvisor reports the host's interfaces on its sandbox, the
/// whole node's traffic, so it has GPUs but no egress.
fn host_network(model: &Model) -> Option<TestCase> {
    let team = model.teams.first()?;
    let node = model.nodes.iter().find(|node| node.cost_per_egress_tb.is_some())?;
    let (namespace, pod) = (team.namespace.as_str(), "promtool-host-network");
    let per_pod = labels(&[("namespace", namespace), ("pod", pod)]);
    let with = |extra: &[(&str, &str)]| with_labels(&per_pod, extra);
    let request = with(&[("container", "main"), ("node", node.name.as_str()), ("resource", "nvidia_com_gpu"), ("unit", "integer")]);
    let [team_key, ..] = pod_keys(model);
    let team_value = labels::value(&team.name);
    let pod_labels = with(&[(team_key.as_str(), team_value.as_str())]);
    let gpus = with(&[("node", node.name.as_str()), ("team", team_value.as_str())]);
    Some(TestCase {
        name: "a pod on the host's network is not billed its node's traffic".to_owned(),
        interval: "1m",
        input_series: vec![
            Input { series: selector("kube_pod_container_resource_requests", &request), values: "2+0x10".to_owned() },
            Input { series: selector("kube_pod_labels", &pod_labels), values: "1+0x10".to_owned() },
            Input { series: selector(usage::POD_INFO, &with(&[("host_network", "true")])), values: "1+0x10".to_owned() },
            Input { series: selector(usage::POD_TRANSMITTED, &with(&[("interface", "eth0")])), values: "0+60000000x10".to_owned() },
        ],
        promql_expr_test: vec![
            ExprTest {
                expr: usage::POD_GPUS.to_owned(),
                eval_time: minutes(10),
                exp_samples: vec![Sample { labels: selector(usage::POD_GPUS, &gpus), value: 2.0 }],
            },
            ExprTest { expr: usage::POD_EGRESS.to_owned(), eval_time: minutes(10), exp_samples: Vec::new() },
        ],
        alert_rule_test: Vec::new(),
    })
}

/// A pod of the first team, asking two GPUs of the first priced node for an hour, and
/// sending [`EGRESS_BYTES_PER_SECOND`] when the node has an egress price.
fn cost(model: &Model, rules: &[Rule]) -> Option<TestCase> {
    let team = model.teams.first()?;
    // A node with both prices tests both, where there is one.
    let priced = |node: &&Node| node.cost_per_gpu_hour.is_some();
    let node =
        model.nodes.iter().filter(priced).find(|node| node.cost_per_egress_tb.is_some()).or_else(|| model.nodes.iter().find(priced))?;
    let price = node.cost_per_gpu_hour?;
    let center = model.cost_centers[team.cost_center.value.index()].name.as_str();
    let currency = price.currency.code();
    let tier = team.tiers.first().map_or_else(|| "none".to_owned(), |tier| labels::value(&model.tiers[tier.value.index()].name));
    let class = model.classes.first().map_or_else(|| "none".to_owned(), |class| labels::value(&class.name));
    let (tier, class) = (tier.as_str(), class.as_str());
    let team_value = labels::value(&team.name);
    let team_name = team_value.as_str();
    let [team_key, tier_key, class_key, stage_key] = pod_keys(model);
    let (namespace, pod, stage) = (team.namespace.as_str(), "promtool-pod", "train");
    let request = labels(&[
        ("namespace", namespace),
        ("pod", pod),
        ("container", "main"),
        ("node", node.name.as_str()),
        ("resource", "nvidia_com_gpu"),
        ("unit", "integer"),
    ]);
    let pod_labels = labels(&[
        ("namespace", namespace),
        ("pod", pod),
        (team_key.as_str(), team_name),
        (tier_key.as_str(), tier),
        (class_key.as_str(), class),
        (stage_key.as_str(), stage),
    ]);
    let per_pod = labels(&[
        ("namespace", namespace),
        ("pod", pod),
        ("node", node.name.as_str()),
        ("team", team_name),
        ("tier", tier),
        ("class", class),
        ("stage", stage),
    ]);
    let mut priced = per_pod.clone();
    priced.insert("currency".to_owned(), currency.to_owned());
    let per_model = labels(&[("team", team_name), ("tier", tier), ("class", class), ("stage", stage), ("currency", currency)]);
    let per_team = labels(&[("team", team_name), ("currency", currency)]);
    let gpu_hourly = 2.0 * price.major();
    let sample = |name: &str, labels: &BTreeMap<String, String>, value: f64| ExprTest {
        expr: name.to_owned(),
        eval_time: minutes(60),
        exp_samples: vec![Sample { labels: selector(name, labels), value }],
    };
    let mut tests = vec![sample(usage::POD_GPUS, &per_pod, 2.0), sample(usage::POD_COST, &priced, gpu_hourly)];
    let mut inputs = vec![
        Input { series: selector("kube_pod_container_resource_requests", &request), values: "2+0x60".to_owned() },
        Input { series: selector("kube_pod_labels", &pod_labels), values: "1+0x60".to_owned() },
    ];
    // The sums below are computed in the order the rules add, so they are the same doubles.
    let hourly = match node.cost_per_egress_tb {
        Some(egress_price) => {
            // The kubelet's cAdvisor and a standalone one both report the sandbox: counted once.
            for job in ["kubelet", "cadvisor"] {
                let sandbox = labels(&[("namespace", namespace), ("pod", pod), ("container", ""), ("interface", "eth0"), ("job", job)]);
                let per_minute = EGRESS_BYTES_PER_SECOND * 60;
                inputs.push(Input { series: selector(usage::POD_TRANSMITTED, &sandbox), values: format!("0+{per_minute}x60") });
            }
            let info = labels(&[("namespace", namespace), ("pod", pod), ("host_network", "false")]);
            inputs.push(Input { series: selector(usage::POD_INFO, &info), values: "1+0x60".to_owned() });
            let bytes = EGRESS_BYTES_PER_SECOND as f64;
            let egress_hourly = bytes * 3600.0 / 1e12 * egress_price.major();
            tests.push(sample(usage::POD_EGRESS, &per_pod, bytes));
            tests.push(sample(usage::POD_EGRESS_COST, &priced, egress_hourly));
            tests.push(sample(usage::MODEL_EGRESS_COST, &per_model, egress_hourly));
            gpu_hourly + egress_hourly
        }
        None => gpu_hourly,
    };
    tests.push(sample(usage::MODEL_COST, &per_model, hourly));
    tests.push(sample(usage::TEAM_COST, &per_team, hourly));
    let premium = rules.iter().find(|rule| {
        rule.record.as_deref() == Some(series::NVLINK_PREMIUM) && rule.labels.get("node").map(String::as_str) == Some(node.name.as_str())
    });
    let premium = premium.and_then(|rule| rule.expr.strip_prefix("vector(")?.strip_suffix(')')?.parse::<f64>().ok());
    if let Some(premium) = premium {
        tests.push(sample(usage::POD_NVLINK_PREMIUM, &priced, 2.0 * premium));
        tests.push(sample(usage::MODEL_NVLINK_PREMIUM, &per_model, 2.0 * premium));
    }
    // An hour of five-minute steps is 12 or 13 of them, depending on whether the first
    // sample's step counts; either is right to the step.
    let mut daily = per_team.clone();
    daily.insert("cost_center".to_owned(), center.to_owned());
    let (low, high) = (hourly * 0.999, hourly * 13.0 / 12.0 * 1.001);
    tests.push(ExprTest {
        expr: format!("({name} >= bool {low}) * ({name} <= bool {high})", name = usage::COST_DAILY),
        eval_time: minutes(60),
        exp_samples: vec![Sample { labels: selector("", &daily), value: 1.0 }],
    });
    Some(TestCase {
        name: "cost of a converged model from its pod's labels".to_owned(),
        interval: "1m",
        input_series: inputs,
        promql_expr_test: tests,
        alert_rule_test: Vec::new(),
    })
}

/// One pod of the lost-work test, started at 0 with two GPUs. Minutes are when series are
/// seen; seconds are the timestamps kube-state-metrics reports.
struct PodLife<'m> {
    pod: String,
    uid: &'static str,
    tier: &'m Tier,
    /// The minutes it is seen running (phase `Running`), from its first.
    running: (u64, u64),
    /// The minute its deletion is first seen and its `deletionTimestamp`, when it is deleted.
    deleted: Option<(u64, u64)>,
    /// Its `startTime`.
    started: u64,
}

/// Pods of the first team: one deleted while running in the first tier that checkpoints (it
/// loses the time since its last checkpoint; it exits within its grace period, so its phase
/// is no longer `Running` a minute later, and it was pending without a node first) and one
/// in the first that does not (it loses all of its run); one deleted after it completed (it
/// lost nothing); and a new pod under the first one's name, still running, started after the
/// first one's series left promtool's five-minute lookback (promtool writes no staleness
/// markers, so sooner the two pods' GPUs would add up).
fn lost_work(model: &Model) -> Option<TestCase> {
    let team = model.teams.first()?;
    let checkpointing = model.tiers.iter().find(|tier| tier.checkpoint_seconds().is_some());
    let tiers: Vec<&Tier> = checkpointing.into_iter().chain(model.tiers.iter().find(|tier| tier.checkpoint_seconds().is_none())).collect();
    let node = model.nodes.first()?.name.as_str();
    let (namespace, class, stage) = (team.namespace.as_str(), "none", "train");
    let team_value = labels::value(&team.name);
    let [team_key, tier_key, class_key, stage_key] = pod_keys(model);
    // A run past one checkpoint and half the next, so that the two branches of the rule give
    // different figures and neither gives 0.
    let ran = |tier: &Tier| tier.checkpoint_seconds().map_or(2400, |every| every + every / 2 + 1);
    let uids = ["uid-0", "uid-1"];
    let mut pods: Vec<PodLife> = tiers
        .iter()
        .zip(uids)
        .map(|(tier, uid)| PodLife {
            pod: format!("promtool-interrupted-{}", tier.name),
            uid,
            tier,
            running: (0, 40),
            deleted: Some((40, ran(tier))),
            started: 0,
        })
        .collect();
    let first = tiers.first()?;
    pods.push(PodLife {
        pod: "promtool-finished".to_owned(),
        uid: "uid-2",
        tier: first,
        running: (0, 20),
        deleted: Some((25, 1500)),
        started: 0,
    });
    pods.push(PodLife {
        pod: format!("promtool-interrupted-{}", first.name),
        uid: "uid-3",
        tier: first,
        running: (48, 55),
        deleted: None,
        started: 48 * 60,
    });
    let mut inputs = Vec::new();
    let mut expected: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    // A query and a sample it must return: `name` is the sample's metric name ("" for an
    // aggregation's result).
    let mut expect = |expr: String, name: &str, labels: &BTreeMap<String, String>, value: f64| {
        expected.entry(expr).or_default().push(Sample { labels: selector(name, labels), value });
    };
    // The last interrupted pod changes its stage half way, so that the pod has two GPU series
    // in the window, one per label set.
    let relabelled = tiers.len() - 1;
    for (index, life) in pods.iter().enumerate() {
        let pod = labels(&[("namespace", namespace), ("pod", life.pod.as_str())]);
        let with = |extra: &[(&str, &str)]| with_labels(&pod, extra);
        let (from, to) = life.running;
        let gone = life.deleted.map_or(to, |(minute, _)| minute.max(to) + 2);
        // `_` for the minutes before a series is first seen, then its value until `last`.
        let seen = |first: u64, value: String, last: u64| {
            format!("{}{value}+0x{}", if first > 0 { format!("_x{first} ") } else { String::new() }, last - first)
        };
        if index == 0 {
            let pending =
                with(&[("uid", life.uid), ("container", "main"), ("node", ""), ("resource", "nvidia_com_gpu"), ("unit", "integer")]);
            inputs.push(Input { series: selector("kube_pod_container_resource_requests", &pending), values: "2+0x1".to_owned() });
        }
        // kube-state-metrics labels every pod series with the pod's `uid`.
        let request =
            with(&[("uid", life.uid), ("container", "main"), ("node", node), ("resource", "nvidia_com_gpu"), ("unit", "integer")]);
        inputs.push(Input { series: selector("kube_pod_container_resource_requests", &request), values: seen(from, "2".to_owned(), gone) });
        let tier_value = labels::value(&life.tier.name);
        let placid = |stage: &str| {
            with(&[
                ("uid", life.uid),
                (team_key.as_str(), team_value.as_str()),
                (tier_key.as_str(), tier_value.as_str()),
                (class_key.as_str(), class),
                (stage_key.as_str(), stage),
            ])
        };
        if index == relabelled {
            inputs.push(Input { series: selector("kube_pod_labels", &placid(stage)), values: seen(from, "1".to_owned(), 20) });
            // Past promtool's five-minute lookback, as kube-state-metrics' staleness marker would.
            inputs.push(Input { series: selector("kube_pod_labels", &placid("eval")), values: seen(26, "1".to_owned(), gone) });
        } else {
            inputs.push(Input { series: selector("kube_pod_labels", &placid(stage)), values: seen(from, "1".to_owned(), gone) });
        }
        inputs.push(Input {
            series: selector(usage::POD_STARTED, &with(&[("uid", life.uid)])),
            values: seen(from, life.started.to_string(), gone),
        });
        let phase = with(&[("uid", life.uid), ("phase", "Running")]);
        let stopped = if gone > to { format!(" 0+0x{}", gone - to - 1) } else { String::new() };
        inputs.push(Input { series: selector(usage::POD_PHASE, &phase), values: format!("{}{stopped}", seen(from, "1".to_owned(), to)) });
        let Some((minute, timestamp)) = life.deleted else { continue };
        inputs.push(Input {
            series: selector(usage::POD_DELETED, &with(&[("uid", life.uid)])),
            values: seen(minute, timestamp.to_string(), gone),
        });
        if minute > to {
            // Deleted after it stopped running: nothing lost.
            continue;
        }
        let run = timestamp - life.started;
        // In the order the rule computes it, so that it is the same double.
        let lost = life.tier.work_lost(run) as f64 * 2.0 / 3600.0;
        let per_pod = with(&[
            ("uid", life.uid),
            ("node", node),
            ("team", team_value.as_str()),
            ("tier", tier_value.as_str()),
            ("class", class),
            ("stage", stage),
        ]);
        let tier = usage::TIER_LOST_GPU_HOURS;
        expect(tier.to_owned(), tier, &labels(&[("tier", tier_value.as_str())]), lost);
        let uid = labels(&[("uid", life.uid)]);
        for (name, value) in [(usage::POD_INTERRUPTED_RUN, run as f64), (usage::POD_LOST_GPU_HOURS, lost)] {
            if index == relabelled {
                // Either label set may carry it; what matters is that it is there, once.
                expect(format!("count by (uid) ({})", selector(name, &uid)), "", &uid, 1.0);
            } else {
                expect(selector(name, &uid), name, &per_pod, value);
            }
        }
    }
    Some(TestCase {
        name: "GPU-hours interrupted pods lost since their last checkpoint".to_owned(),
        interval: "1m",
        input_series: inputs,
        promql_expr_test: expected.into_iter().map(|(expr, exp_samples)| ExprTest { expr, eval_time: minutes(55), exp_samples }).collect(),
        alert_rule_test: Vec::new(),
    })
}

/// The alert's condition held bad from the start: not firing the minute before its `for`
/// ends, firing the minute after; held good, never firing.
fn alert(model: &Model, alert: &Alert, rule: &Rule) -> Result<Vec<TestCase>, Diagnostic> {
    let limit = alerting::limit(alert)?;
    let metric = model.metric(alert.condition.metric.value);
    let series = labels(&[("promtool", "placid")]);
    let input = selector(&alerting::metric_series(metric), &series);
    let step = limit.value.abs().max(1.0);
    let (bad, good) = match alert.condition.bound {
        Bound::AtMost => (limit.value + step, limit.value - step),
        Bound::AtLeast => (limit.value - step, limit.value + step),
    };
    let seconds = alert.condition.duration.map_or(0, |duration| duration.seconds);
    let fires_at = seconds.div_ceil(60) + 1;
    let name = rule.alert.clone().unwrap_or_default();
    let mut exp_labels = rule.labels.clone();
    exp_labels.extend(series.clone());
    let firing = ExpectedAlert { exp_labels, exp_annotations: rule.annotations.clone() };
    let check = |minute: u64, exp_alerts: Vec<ExpectedAlert>| AlertTest { eval_time: minutes(minute), alertname: name.clone(), exp_alerts };
    let mut held = Vec::new();
    if seconds > 0 {
        held.push(check((seconds - 1) / 60, Vec::new()));
    }
    held.push(check(fires_at, vec![firing]));
    let case = |title: String, value: f64, alert_rule_test: Vec<AlertTest>| TestCase {
        name: title,
        interval: "1m",
        input_series: vec![Input { series: input.clone(), values: format!("{value}+0x{}", fires_at + 5) }],
        promql_expr_test: Vec::new(),
        alert_rule_test,
    };
    Ok(vec![
        case(format!("alert {} fires after its for", alert.name), bad, held),
        case(format!("alert {} stays quiet on the good side", alert.name), good, vec![check(fires_at, Vec::new())]),
    ])
}

/// The promtool test file for `rules` (every rule of the rule file). An alert whose limit
/// cannot be expressed has no rule, and its E057 comes from the rules.
pub fn file(model: &Model, rules: &[Rule]) -> Result<String, yaml::Error> {
    let mut tests: Vec<TestCase> =
        [static_series(rules), nvlink(model), cost(model, rules), host_network(model), lost_work(model)].into_iter().flatten().collect();
    for alert_model in &model.alerts {
        let name = alerting::alert_name(alert_model.name.as_str());
        if let Some(rule) = rules.iter().find(|rule| rule.alert.as_deref() == Some(name.as_str())) {
            tests.extend(alert(model, alert_model, rule).unwrap_or_default());
        }
    }
    let file = TestFile { rule_files: vec![RULES_FILE], evaluation_interval: "1m", tests };
    yaml::to_string(&file)
}
