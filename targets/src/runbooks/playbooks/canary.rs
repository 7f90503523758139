//! The 72-hour NVLink canary: for each domain, a job that runs nccl-tests' `all_reduce_perf`
//! across the domain's GPUs every hour for 72 hours and fails when the bus bandwidth falls
//! below what the policy's NVLink thresholds assume the domain can carry, or a result is
//! wrong.
//!
//! The bar is the highest NVLink utilisation the policy acts on (an alert above a fraction of
//! a `placid:nvlink_*` utilisation series, or the telemetry throttle) times one GPU's NVLink
//! bandwidth one way: a domain that cannot reach that rate can never trip the alert or the
//! throttle the way the policy means, so its NVLink is degraded. Without such a threshold
//! the canary records the bandwidth and fails only on errors.
//!
//! Slurm: `<domain>.sbatch`, one task per GPU on every node of the domain (`srun`, so one
//! all-reduce spans the whole NVLink domain). Kubernetes: `<domain>.kubernetes.yaml`, one Job
//! per node (a pod's all-reduce over its node's GPUs: across nodes nccl-tests needs an MPI
//! launcher, which the cluster may not have), applied by `<domain>.kubernetes.sh IMAGE`
//! with `kubectl set image`, so the image never passes through a shell or YAML text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec, PodTemplateSpec, ResourceRequirements, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use placid_lang::model::{Bound, Domain, Model, Threshold};
use serde::Serialize;

use super::{Playbook, Script, domain_nodes, kubernetes_keys, slurm_accounting};
use crate::Artifact;
use crate::k8s::names::ObjectName;
use crate::ops::usage;
use crate::runbooks::GENERATED;
use crate::slurm::billing;
use crate::text::shell_word;

/// The directory of the canary jobs.
pub const DIR: &str = "runbooks/playbooks/nvlink-canary";

pub(super) const PLAYBOOK: Playbook = Playbook {
    page: DIR,
    title: "NVLink canary",
    when: "to tell a fault from load: a 72-hour all-reduce canary per domain, checked against the policy's NVLink thresholds",
};

/// The placeholder image of the Kubernetes Jobs, replaced by `kubectl set image`.
const PLACEHOLDER_IMAGE: &str = "set-by-the-canary-script.invalid/nccl-tests";
/// The container's name, which `kubectl set image` addresses.
pub(super) const CONTAINER: &str = "canary";

pub(super) fn applies(model: &Model) -> bool {
    !model.domains.is_empty() && super::has_scheduler(model)
}

pub(super) fn emit(model: &Model) -> Vec<Artifact> {
    if !applies(model) {
        return Vec::new();
    }
    let bar = Bar::of(model);
    let mut artifacts = Vec::new();
    let mut page = format!("# Playbook: the 72-hour NVLink canary\n\n{GENERATED}\n\n");
    let _ = write_bar(&mut page, &bar);
    for domain in &model.domains {
        let min_gbps = bar.fraction.map(|fraction| fraction * one_way_gbps(model, domain));
        if model.project.slurm.is_some() {
            artifacts.push(Artifact::text(format!("{DIR}/{}.sbatch", domain.name), sbatch(model, domain, min_gbps)));
        }
        if model.project.kubernetes.is_some()
            && let Some(jobs) = kubernetes_jobs(model, domain, min_gbps)
        {
            artifacts.push(Artifact::text(format!("{DIR}/{}.kubernetes.yaml", domain.name), jobs));
            artifacts.push(Artifact::text(format!("{DIR}/{}.kubernetes.sh", domain.name), kubernetes_script(domain)));
        }
        let _ = write_domain(&mut page, model, domain, min_gbps);
    }
    artifacts.push(Artifact::text(format!("{DIR}.md"), page));
    artifacts
}

/// The highest NVLink utilisation the policy acts on, and where each candidate comes from.
struct Bar {
    fraction: Option<f64>,
    sources: Vec<String>,
}

impl Bar {
    fn of(model: &Model) -> Bar {
        let nvlink_series = [usage::LINK_UTILIZATION, usage::GPU_UTILIZATION, usage::NODE_UTILIZATION, usage::DOMAIN_UTILIZATION];
        let mut candidates: Vec<(f64, String)> = Vec::new();
        for alert in &model.alerts {
            let metric = model.metric(alert.condition.metric.value);
            let fraction = match alert.condition.threshold {
                Threshold::Percent(percent) => percent.fraction(),
                Threshold::Value(value) => value,
                Threshold::OfBaseline(_) => continue,
            };
            if alert.condition.bound == Bound::AtMost
                && (0.0..=1.0).contains(&fraction)
                && nvlink_series.iter().any(|series| metric.query.value.contains(series))
            {
                candidates.push((fraction, format!("alert `{}`", alert.name)));
            }
        }
        if let Some(throttle) = model.telemetry.as_ref().and_then(|telemetry| telemetry.throttle.as_ref()) {
            candidates.push((throttle.threshold, "the telemetry throttle".to_owned()));
        }
        let fraction = candidates.iter().map(|(fraction, _)| *fraction).reduce(f64::max);
        Bar { fraction, sources: candidates.into_iter().map(|(fraction, source)| format!("{source}: {}", percent(fraction))).collect() }
    }
}

fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 10_000.0).round() / 100.0)
}

/// One GPU's NVLink bandwidth one way, GB/s: the least any GPU of the domain has (the
/// inventory counts both directions), which bounds an all-reduce's bus bandwidth.
fn one_way_gbps(model: &Model, domain: &Domain) -> f64 {
    let bits = domain.nodes.iter().map(|id| model.node(*id).nvlink_bandwidth().bits_per_second).min().unwrap_or(0);
    bits as f64 / 8.0 / 2.0 / 1e9
}

/// GPUs per node the canary uses: the fewest any node of the domain has, so one task layout
/// fits every node.
fn gpus_per_node(model: &Model, domain: &Domain) -> u32 {
    domain.nodes.iter().map(|id| model.node(*id).gpu_count()).min().unwrap_or(0)
}

/// `min_busbw=…`, rounded down to a tenth of a GB/s, or empty for no bar.
fn bar_word(min_gbps: Option<f64>) -> String {
    min_gbps.map(|gbps| format!("{:.1}", (gbps * 10.0).floor() / 10.0)).unwrap_or_default()
}

/// The loop both targets run: `launch` is the command that runs one all-reduce.
fn canary_loop(script: &mut Script, domain: &Domain, min_gbps: Option<f64>, launch: &str) {
    script
        .var("domain", domain.name.as_str())
        .line(format_args!("min_busbw={}", shell_word(&bar_word(min_gbps))))
        .line("all_reduce=\"${PLACID_ALL_REDUCE_PERF:-all_reduce_perf}\"")
        .line("interval=\"${PLACID_CANARY_INTERVAL:-3600}\"")
        .line("end=$(( $(date +%s) + ${PLACID_CANARY_HOURS:-72} * 3600 ))")
        .line("runs=0")
        .line("failures=0")
        .line("while :; do")
        .line("    runs=$((runs + 1))")
        .line("    busbw=''")
        .line("    wrong=''")
        .line(format_args!("    if out=$({launch} 2>&1); then"))
        .line("        busbw=$(awk '/# Avg bus bandwidth/ { print $NF }' <<<\"$out\")")
        .line("        wrong=$(awk '/# Out of bounds values/ { print $7 }' <<<\"$out\")")
        .line("    fi")
        .line("    verdict=$(awk -v bw=\"$busbw\" -v min=\"$min_busbw\" -v wrong=\"$wrong\" 'BEGIN {")
        .line("        if (bw == \"\") print \"failed\"; else if (wrong + 0 > 0) print \"wrong\"; else if (min != \"\" && bw + 0 < min + 0) print \"slow\"; else print \"ok\" }')")
        .line("    echo \"$(date -u +%FT%TZ) placid canary domain=$domain run=$runs busbw_gbps=${busbw:-none} min_gbps=${min_busbw:-none} result=$verdict\"")
        .line("    if [ \"$verdict\" != ok ]; then failures=$((failures + 1)); printf '%s\\n' \"$out\" | tail -n 20; fi")
        .line("    if [ $(( $(date +%s) + interval )) -ge \"$end\" ]; then break; fi")
        .line("    sleep \"$interval\"")
        .line("done")
        .line("echo \"placid canary domain=$domain runs=$runs failures=$failures\"")
        .line("[ \"$failures\" -eq 0 ]");
}

/// The all-reduce's arguments: 1 GiB messages (bandwidth-bound), checked results.
const ALL_REDUCE_ARGS: &str = "-b 1G -e 1G -n 20 -w 5 -c 1";

fn sbatch(model: &Model, domain: &Domain, min_gbps: Option<f64>) -> String {
    let nodes = domain_nodes(model, domain);
    let gpus = gpus_per_node(model, domain);
    let mut out = String::from("#!/usr/bin/env bash\n");
    // Names are validated policy names (letters, digits, `-`, `_`, `.`): safe in a directive.
    let _ = writeln!(out, "#SBATCH --job-name=placid-canary.{}", domain.name);
    let _ = writeln!(out, "#SBATCH --nodes={}", nodes.len());
    let _ = writeln!(out, "#SBATCH --nodelist={}", nodes.join(","));
    let _ = writeln!(out, "#SBATCH --ntasks-per-node={gpus}");
    let _ = writeln!(out, "#SBATCH --gpus-per-node={gpus}");
    if let Some(partitions) = partitions(model, domain) {
        let _ = writeln!(out, "#SBATCH --partition={partitions}");
    }
    let _ = writeln!(out, "#SBATCH --exclusive\n#SBATCH --time=3-01:00:00");
    let _ = writeln!(out, "#SBATCH --output=placid-canary.{}.%j.log", domain.name);
    let mut script = Script::new(&[
        &format!(
            "The 72-hour NVLink canary of domain {}: all_reduce_perf over its {} GPUs every",
            domain.name,
            gpus as usize * nodes.len()
        ),
        "PLACID_CANARY_INTERVAL seconds (3600) for PLACID_CANARY_HOURS (72). Submit with sbatch -A ACCOUNT [--qos=QOS].",
    ]);
    canary_loop(&mut script, domain, min_gbps, &format!("srun --gpus-per-task=1 \"$all_reduce\" {ALL_REDUCE_ARGS} -g 1"));
    out.push_str(script.finish().trim_start_matches("#!/usr/bin/env bash\n"));
    out
}

/// With accounting, the partitions of the narrowest pool that holds the whole domain.
fn partitions(model: &Model, domain: &Domain) -> Option<String> {
    if !slurm_accounting(model) {
        return None;
    }
    let pool =
        model.pools.iter().filter(|pool| domain.nodes.iter().all(|node| pool.nodes.contains(node))).min_by_key(|pool| pool.nodes.len())?;
    Some(billing::partition_list(model, pool, None))
}

/// A `v1` List of the domain's Jobs, one per node; `None` when a name is no Kubernetes name
/// (the Kubernetes target reports it).
fn kubernetes_jobs(model: &Model, domain: &Domain, min_gbps: Option<f64>) -> Option<String> {
    let settings = model.project.kubernetes.as_ref()?;
    let keys = kubernetes_keys(model)?;
    let reserved = keys.reserved().ok()?;
    let domain_name = ObjectName::map(&domain.name, domain.span, "nvlink domain").ok()?;
    let gpus = gpus_per_node(model, domain);
    let mut script = Script::new(&["The NVLink canary of one node of the domain."]);
    canary_loop(&mut script, domain, min_gbps, &format!("\"$all_reduce\" {ALL_REDUCE_ARGS} -g {gpus}"));
    let script = script.finish();
    let mut items = Vec::new();
    for (index, node) in domain_nodes(model, domain).into_iter().enumerate() {
        let labels = BTreeMap::from([
            ("app.kubernetes.io/managed-by".to_owned(), "placid".to_owned()),
            ("app.kubernetes.io/name".to_owned(), "placid-canary".to_owned()),
        ]);
        let pod = PodSpec {
            restart_policy: Some("Never".into()),
            node_selector: Some(BTreeMap::from([("kubernetes.io/hostname".to_owned(), node.clone())])),
            tolerations: Some(vec![Toleration {
                key: Some(reserved.as_str().to_owned()),
                operator: Some("Exists".into()),
                effect: Some("NoSchedule".into()),
                ..Toleration::default()
            }]),
            containers: vec![Container {
                name: CONTAINER.to_owned(),
                image: Some(PLACEHOLDER_IMAGE.to_owned()),
                command: Some(vec!["bash".into(), "-c".into(), script.clone()]),
                env: Some(vec![EnvVar { name: "PLACID_CANARY_NODE".into(), value: Some(node), value_from: None }]),
                resources: Some(ResourceRequirements {
                    limits: Some(BTreeMap::from([("nvidia.com/gpu".to_owned(), Quantity(gpus.to_string()))])),
                    ..ResourceRequirements::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        };
        items.push(Job {
            metadata: ObjectMeta {
                name: Some(format!("placid-canary-{domain_name}-{index}")),
                namespace: Some(settings.namespace.as_str().to_owned()),
                labels: Some(labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(JobSpec {
                backoff_limit: Some(0),
                // 72 hours and one more for the last run.
                active_deadline_seconds: Some(73 * 3600),
                template: PodTemplateSpec { metadata: Some(ObjectMeta { labels: Some(labels), ..ObjectMeta::default() }), spec: Some(pod) },
                ..JobSpec::default()
            }),
            status: None,
        });
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct List {
        api_version: &'static str,
        kind: &'static str,
        items: Vec<Job>,
    }
    serde_yaml::to_string(&List { api_version: "v1", kind: "List", items }).ok()
}

fn kubernetes_script(domain: &Domain) -> String {
    let mut script = Script::new(&[
        &format!("Usage: {}.kubernetes.sh IMAGE (an image with bash and nccl-tests' all_reduce_perf)", domain.name),
        &format!("Starts the NVLink canary Jobs of domain {} (kubectl apply: a running canary is left unchanged).", domain.name),
    ]);
    script.line("if [ \"$#\" -ne 1 ]; then echo \"usage: $0 IMAGE\" >&2; exit 2; fi").line("here=$(dirname \"$0\")").line(format_args!(
        "kubectl set image --local -o yaml -f \"$here\"/{} {CONTAINER}=\"$1\" | kubectl apply -f -",
        shell_word(&format!("{}.kubernetes.yaml", domain.name))
    ));
    script.finish()
}

fn write_bar(out: &mut String, bar: &Bar) -> std::fmt::Result {
    match bar.fraction {
        Some(fraction) => writeln!(
            out,
            "A run fails when all_reduce_perf's average bus bandwidth is below {} of one GPU's NVLink bandwidth one way, the highest NVLink utilisation the policy acts on ({}), or when a result is wrong.",
            percent(fraction),
            bar.sources.join("; ")
        ),
        None => writeln!(
            out,
            "The policy acts on no NVLink utilisation (no alert above a `placid:nvlink_*` series, no throttle): runs record the bus bandwidth and fail only when all_reduce_perf fails or a result is wrong."
        ),
    }?;
    writeln!(
        out,
        "\nEach run logs `placid canary domain=… run=… busbw_gbps=… min_gbps=… result=ok|slow|wrong|failed`; the job fails if any run did not pass."
    )
}

fn write_domain(out: &mut String, model: &Model, domain: &Domain, min_gbps: Option<f64>) -> std::fmt::Result {
    writeln!(out, "\n## Domain `{}`\n", domain.name)?;
    writeln!(
        out,
        "- {} nodes, {} GPUs each; one GPU's NVLink one way: {:.1} GB/s; bar: {}",
        domain.nodes.len(),
        gpus_per_node(model, domain),
        one_way_gbps(model, domain),
        min_gbps.map_or_else(|| "none".to_owned(), |_| format!("{} GB/s", bar_word(min_gbps)))
    )?;
    if model.project.slurm.is_some() {
        writeln!(out, "- Slurm: `sbatch -A ACCOUNT {DIR}/{}.sbatch` (all its nodes, exclusive, one task per GPU)", domain.name)?;
    }
    if model.project.kubernetes.is_some() {
        writeln!(out, "- Kubernetes: `bash {DIR}/{}.kubernetes.sh IMAGE` (one Job per node, outside Kueue's queues)", domain.name)?;
    }
    Ok(())
}
