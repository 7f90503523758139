//! A cluster's Kueue history as a trace: the Workload objects of
//! `kubectl get workloads -A -o json` (Kueue's `kueue.x-k8s.io/v1beta1` `Workload`) read into
//! placid trace jobs (docs/simulate.md, "Kueue history"). A Workload's namespace maps to the
//! team whose namespace it is and its `spec.queueName` to the tier whose LocalQueue it is,
//! through the Kubernetes target's own layout (`placid_targets::k8s::layout`), so a history
//! recorded under this policy maps back exactly. What cannot be mapped, or never ran, is
//! counted by reason and left out, never guessed.

use std::collections::BTreeSet;

use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{ClassId, PoolId};
use placid_lang::span::{FileId, Span};
use placid_targets::k8s::layout::Layout;
use placid_targets::k8s::names::ObjectName;
use serde_json::Value;

use super::{History, MAX_JOBS, MAX_SECONDS, TraceJob, from_first_submission};

/// The resource a pod asks GPUs by.
const GPU: &str = "nvidia.com/gpu";

/// Reads `text`, a `kubectl get workloads -A -o json` list, against `model`.
pub fn read(model: &Checked, file: FileId, text: &str) -> Result<History, Diagnostics> {
    let whole = Span::new(file, 0, text.len().min(1));
    let fail = |message: String, help: &str| {
        let mut diagnostics = Diagnostics::new();
        diagnostics.push(Diagnostic::error(Code::TraceRow, whole, message).help(help.to_owned()));
        diagnostics
    };
    let Some(settings) = &model.project.kubernetes else {
        return Err(fail("the policy has no Kubernetes target to map Workloads through".to_owned(), "add `kubernetes` to the project"));
    };
    let layout = Layout::new(model, settings)?;
    let class_key = placid_targets::k8s::placement::class_key(&layout, whole).map_err(Diagnostics::from)?;
    let list: Value =
        serde_json::from_str(text).map_err(|error| fail(format!("this is not JSON: {error}"), "run kubectl get workloads -A -o json"))?;
    let Some(items) = list.get("items").and_then(Value::as_array) else {
        return Err(fail("the JSON has no `items` list".to_owned(), "run kubectl get workloads -A -o json"));
    };
    if items.len() > MAX_JOBS {
        return Err(fail(format!("the list has more than {MAX_JOBS} Workloads"), "ask for fewer, by namespace or label"));
    }
    let mut history = History::default();
    let mut jobs: Vec<(i64, TraceJob)> = Vec::new();
    for item in items {
        let text_at = |path: &[&str]| path.iter().try_fold(item, |value, key| value.get(key)).and_then(Value::as_str);
        if text_at(&["kind"]) != Some("Workload") {
            *history.left_out.entry("not a Workload".to_owned()).or_default() += 1;
            continue;
        }
        match job(model, &layout, &class_key, item, whole) {
            Ok((submit, job, requeued)) => {
                history.requeued += usize::from(requeued);
                jobs.push((submit, job));
            }
            Err(reason) => *history.left_out.entry(reason).or_default() += 1,
        }
    }
    history.jobs = from_first_submission(jobs);
    Ok(history)
}

/// One Workload as `(submitted, job, requeued)`, or why it is left out.
fn job(model: &Checked, layout: &Layout, class_key: &str, item: &Value, span: Span) -> Result<(i64, TraceJob, bool), String> {
    let text_at = |path: &[&str]| path.iter().try_fold(item, |value, key| value.get(key)).and_then(Value::as_str);
    let name =
        format!("{}/{}", text_at(&["metadata", "namespace"]).unwrap_or_default(), text_at(&["metadata", "name"]).unwrap_or_default());
    let created = text_at(&["metadata", "creationTimestamp"]).and_then(time).ok_or("no creationTimestamp")?;
    let namespace = text_at(&["metadata", "namespace"]).unwrap_or_default();
    let team =
        layout.teams.iter().position(|team| team.namespace.as_str() == namespace).ok_or(format!("namespace `{namespace}` is no team's"))?;
    let queue = text_at(&["spec", "queueName"]).unwrap_or_default();
    let tier = layout.tiers.iter().position(|tier| tier.object.as_str() == queue).ok_or(format!("queue `{queue}` is no tier's"))?;
    let conditions = item.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let when = |kind: &str| {
        conditions
            .iter()
            .find(|condition| condition.get("type").and_then(Value::as_str) == Some(kind))
            .filter(|condition| condition.get("status").and_then(Value::as_str) == Some("True"))
            .and_then(|condition| condition.get("lastTransitionTime").and_then(Value::as_str))
            .and_then(time)
    };
    let requeued = conditions
        .iter()
        .any(|condition| matches!(condition.get("type").and_then(Value::as_str), Some("Evicted" | "Requeued" | "Preempted")));
    let Some(admitted) = when("Admitted").or_else(|| when("QuotaReserved")) else {
        return Err(if when("Finished").is_some() { "finished before it was admitted" } else { "still pending" }.to_owned());
    };
    let finished = when("Finished").ok_or("still running")?;
    let gpus = gpus(item).ok_or("a GPU request that is not a whole number")?;
    let run = u64::try_from(finished - admitted).unwrap_or(0).min(MAX_SECONDS);
    let job = TraceJob {
        name,
        span,
        submit: 0,
        team: placid_lang::model::TeamId::from_index(team),
        tier: placid_lang::model::TierId::from_index(tier),
        class: class(model, class_key, item),
        pool: pool(model, layout, item),
        gpus,
        run,
        limit: None,
        tag: None,
        stage: None,
        after: Vec::new(),
    };
    Ok((created, job, requeued))
}

/// The first pod set's template, where placid's workload templates carry the stage's class
/// label and node affinity.
fn template(item: &Value) -> Option<&Value> {
    item.pointer("/spec/podSets/0/template")
}

/// The class whose label (`<prefix>/class`, [`placid_targets::k8s::placement::class_key`]) the
/// Workload's pods carry, if any.
fn class(model: &Checked, class_key: &str, item: &Value) -> Option<ClassId> {
    let value = template(item)?.pointer("/metadata/labels")?.get(class_key)?.as_str()?;
    model
        .classes
        .iter()
        .position(|class| ObjectName::map(&class.name, class.span, "class").is_ok_and(|name| name.as_str() == value))
        .map(ClassId::from_index)
}

/// The pool a Workload runs through: the pool whose cells are exactly the ones its pods'
/// required node affinity names (placid's templates name the cells of their stage's pool),
/// else the narrowest pool (fewest nodes, then declaration order) that reaches the flavor
/// Kueue admitted its GPUs on, which keeps the replay nearest the nodes it ran on; `None`
/// when neither tells, and the engine chooses, as for a trace job without a pool.
fn pool(model: &Checked, layout: &Layout, item: &Value) -> Option<PoolId> {
    let cell_key = layout.cell_label.as_str();
    let named: BTreeSet<&str> = template(item)
        .and_then(|template| {
            template.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        })
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|term| term.get("matchExpressions").and_then(Value::as_array))
        .flatten()
        .filter(|expression| expression.get("key").and_then(Value::as_str) == Some(cell_key))
        .filter(|expression| expression.get("operator").and_then(Value::as_str) == Some("In"))
        .filter_map(|expression| expression.get("values").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let pools = (0..layout.pools.len()).map(PoolId::from_index);
    if !named.is_empty() {
        let cells_of = |pool: PoolId| layout.cells.of_pool(pool).map(|(_, cell)| cell.name.as_str()).collect::<BTreeSet<&str>>();
        if let Some(pool) = pools.clone().find(|pool| cells_of(*pool) == named) {
            return Some(pool);
        }
    }
    let flavor = item.pointer("/status/admission/podSetAssignments/0/flavors")?.get(GPU)?.as_str()?;
    let cell = layout.cells.cells.iter().find(|cell| cell.name.as_str() == flavor)?;
    cell.group.pools.iter().copied().min_by_key(|pool| (model.pool(*pool).nodes.len(), pool.index()))
}

/// The GPUs a Workload holds: per pod set, its count × the GPUs its containers request.
fn gpus(item: &Value) -> Option<u32> {
    let pod_sets = item.pointer("/spec/podSets").and_then(Value::as_array)?;
    let mut total: u32 = 0;
    for pod_set in pod_sets {
        let count = u32::try_from(pod_set.get("count").and_then(Value::as_u64).unwrap_or(1)).ok()?;
        let containers = pod_set.pointer("/template/spec/containers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let mut per_pod: u32 = 0;
        for container in containers {
            let request = container
                .pointer("/resources/requests")
                .and_then(|requests| requests.get(GPU))
                .or_else(|| container.pointer("/resources/limits").and_then(|limits| limits.get(GPU)));
            let gpus = match request {
                None => 0,
                Some(Value::String(text)) => text.parse::<u32>().ok()?,
                Some(Value::Number(number)) => u32::try_from(number.as_u64()?).ok()?,
                Some(_) => return None,
            };
            per_pod = per_pod.checked_add(gpus)?;
        }
        total = total.checked_add(per_pod.checked_mul(count)?)?;
    }
    Some(total)
}

/// An RFC 3339 time (`2024-05-01T12:00:05Z`) in seconds since the epoch.
fn time(text: &str) -> Option<i64> {
    text.parse::<jiff::Timestamp>().ok().map(|timestamp| timestamp.as_second())
}
