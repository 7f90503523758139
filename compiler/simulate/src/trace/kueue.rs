//! A cluster's Kueue history as a trace: the Workload objects of
//! `kubectl get workloads -A -o json` (Kueue's `kueue.x-k8s.io/v1beta1` `Workload`) read into
//! placid trace jobs (docs/simulate.md, "Kueue history"). A Workload's namespace maps to the
//! team whose namespace it is and its `spec.queueName` to the tier whose LocalQueue it is,
//! through the Kubernetes target's own layout (`placid_targets::k8s::layout`), so a history
//! recorded under this policy maps back exactly. What cannot be mapped, or never ran, is
//! counted by reason and left out, never guessed.

use std::collections::BTreeSet;
use std::fmt;

use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{ClassId, PoolId};
use placid_lang::span::{FileId, Span};
use placid_targets::k8s::layout::Layout;
use placid_targets::k8s::names::ObjectName;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::{History, MAX_JOBS, MAX_SECONDS, TraceJob, from_first_submission};

/// Reads `text`, a `kubectl get workloads -A -o json` list, against `model`.
///
/// The list is never held as a JSON tree: its items stay slices of `text`, and each is read
/// on its own into the few fields a replay uses, every other field skipped as it is parsed.
/// Memory is `text`, a slice per item and one job per Workload, whatever the items carry
/// (docs/limits.md measures a list of 16 million values).
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
    let list: List<'_> = serde_json::from_str(text)
        .map_err(|error| fail(format!("this is not a list of Workloads: {error}"), "run kubectl get workloads -A -o json"))?;
    if list.items.more {
        return Err(fail(format!("the list has more than {MAX_JOBS} Workloads"), "ask for fewer, by namespace or label"));
    }
    let mut history = History::default();
    let mut jobs: Vec<(i64, TraceJob)> = Vec::new();
    for item in list.items.kept {
        let reason = match serde_json::from_str::<Workload<'_>>(item.get()) {
            Ok(workload) if workload.kind == "Workload" => match job(model, &layout, &class_key, &workload, whole) {
                Ok((submit, job, requeued)) => {
                    history.requeued += usize::from(requeued);
                    jobs.push((submit, job));
                    continue;
                }
                Err(reason) => reason,
            },
            Err(_) if serde_json::from_str::<Kind>(item.get()).is_ok_and(|item| item.kind == "Workload") => {
                "a Workload field placid reads is not of its Kubernetes type".to_owned()
            }
            _ => "not a Workload".to_owned(),
        };
        *history.left_out.entry(reason).or_default() += 1;
    }
    history.jobs = from_first_submission(jobs);
    Ok(history)
}

/// The list: `items`, each kept as its own text; the rest is skipped.
#[derive(Deserialize)]
struct List<'a> {
    #[serde(borrow)]
    items: Items<'a>,
}

/// The items of the list, the first [`MAX_JOBS`] kept; `more` when there were more, which
/// are skipped as they are parsed.
struct Items<'a> {
    kept: Vec<&'a RawValue>,
    more: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Items<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bounded<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Bounded<'a> {
            type Value = Items<'a>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a list of Workloads")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut items: S) -> Result<Items<'a>, S::Error> {
                let mut kept = Vec::new();
                while kept.len() < MAX_JOBS {
                    match items.next_element::<&'de RawValue>()? {
                        Some(item) => kept.push(item),
                        None => return Ok(Items { kept, more: false }),
                    }
                }
                let more = items.next_element::<IgnoredAny>()?.is_some();
                while items.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Items { kept, more })
            }
        }
        deserializer.deserialize_seq(Bounded(std::marker::PhantomData))
    }
}

/// An item's kind alone, to tell a Workload placid cannot read from another object.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Kind {
    #[serde(deserialize_with = "or_default")]
    kind: String,
}

/// The fields of a Workload (Kueue's `v1beta1` API) a replay reads; Kubernetes omits empty
/// ones, so each may be missing, and a `null` (which a hand-made or converted file may hold)
/// reads as missing too ([`or_default`]).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Workload<'a> {
    #[serde(deserialize_with = "or_default")]
    kind: String,
    #[serde(deserialize_with = "or_default")]
    metadata: Metadata,
    #[serde(borrow, deserialize_with = "or_default")]
    spec: Spec<'a>,
    #[serde(deserialize_with = "or_default")]
    status: Status,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Metadata {
    #[serde(deserialize_with = "or_default")]
    name: String,
    #[serde(deserialize_with = "or_default")]
    namespace: String,
    creation_timestamp: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Spec<'a> {
    #[serde(deserialize_with = "or_default")]
    queue_name: String,
    #[serde(borrow, deserialize_with = "or_default")]
    pod_sets: Vec<PodSet<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodSet<'a> {
    count: Option<u64>,
    #[serde(borrow, deserialize_with = "or_default")]
    template: Template<'a>,
}

/// A pod set's pod template, where placid's workload templates carry the stage's class label
/// and node affinity.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Template<'a> {
    #[serde(borrow, deserialize_with = "or_default")]
    metadata: TemplateMetadata<'a>,
    #[serde(deserialize_with = "or_default")]
    spec: PodSpec,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TemplateMetadata<'a> {
    /// Kept as text: only the class label is looked up in it ([`label`]).
    #[serde(borrow)]
    labels: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodSpec {
    #[serde(deserialize_with = "or_default")]
    containers: Vec<Container>,
    #[serde(deserialize_with = "or_default")]
    affinity: Affinity,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Affinity {
    #[serde(deserialize_with = "or_default")]
    node_affinity: NodeAffinity,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NodeAffinity {
    #[serde(rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    #[serde(deserialize_with = "or_default")]
    required: NodeSelector,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct NodeSelector {
    #[serde(deserialize_with = "or_default")]
    node_selector_terms: Vec<NodeSelectorTerm>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct NodeSelectorTerm {
    #[serde(deserialize_with = "or_default")]
    match_expressions: Vec<Requirement>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Requirement {
    #[serde(deserialize_with = "or_default")]
    key: String,
    #[serde(deserialize_with = "or_default")]
    operator: String,
    #[serde(deserialize_with = "or_default")]
    values: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Container {
    #[serde(deserialize_with = "or_default")]
    resources: Resources,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Resources {
    #[serde(deserialize_with = "or_default")]
    requests: Gpus,
    #[serde(deserialize_with = "or_default")]
    limits: Gpus,
}

/// The GPUs of a resource list, a Kubernetes quantity (`"4"`, or a bare number).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Gpus {
    #[serde(rename = "nvidia.com/gpu")]
    gpu: Option<Quantity>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Status {
    #[serde(deserialize_with = "or_default")]
    admission: Admission,
    #[serde(deserialize_with = "or_default")]
    conditions: Vec<Condition>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Admission {
    #[serde(deserialize_with = "or_default")]
    pod_set_assignments: Vec<PodSetAssignment>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodSetAssignment {
    #[serde(deserialize_with = "or_default")]
    flavors: Flavors,
}

/// The flavor each resource was admitted on; only the GPUs' is read.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Flavors {
    #[serde(rename = "nvidia.com/gpu")]
    gpu: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Condition {
    #[serde(rename = "type")]
    #[serde(deserialize_with = "or_default")]
    kind: String,
    #[serde(deserialize_with = "or_default")]
    status: String,
    last_transition_time: Option<String>,
}

/// A field's value, or its default when it is `null`.
fn or_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(deserializer: D) -> Result<T, D::Error> {
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// A GPU count as Kubernetes writes a quantity: a string, or a number. A string that is not
/// a whole number reads as `None`, and the Workload is left out for it.
enum Quantity {
    Whole(u32),
    NotWhole,
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Count;
        impl Visitor<'_> for Count {
            type Value = Quantity;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a quantity")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Quantity, E> {
                Ok(text.parse().map_or(Quantity::NotWhole, Quantity::Whole))
            }
            fn visit_u64<E: serde::de::Error>(self, number: u64) -> Result<Quantity, E> {
                Ok(u32::try_from(number).map_or(Quantity::NotWhole, Quantity::Whole))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Quantity, E> {
                Ok(Quantity::NotWhole)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Quantity, E> {
                Ok(Quantity::NotWhole)
            }
        }
        deserializer.deserialize_any(Count)
    }
}

/// One Workload as `(submitted, job, requeued)`, or why it is left out.
fn job(model: &Checked, layout: &Layout, class_key: &str, item: &Workload<'_>, span: Span) -> Result<(i64, TraceJob, bool), String> {
    let Metadata { name, namespace, creation_timestamp } = &item.metadata;
    let name = format!("{namespace}/{name}");
    let created = creation_timestamp.as_deref().and_then(time).ok_or("no creationTimestamp")?;
    let team =
        layout.teams.iter().position(|team| team.namespace.as_str() == namespace).ok_or(format!("namespace `{namespace}` is no team's"))?;
    let queue = &item.spec.queue_name;
    let tier = layout.tiers.iter().position(|tier| tier.object.as_str() == queue).ok_or(format!("queue `{queue}` is no tier's"))?;
    let conditions = &item.status.conditions;
    let when = |kind: &str| {
        conditions
            .iter()
            .find(|condition| condition.kind == kind)
            .filter(|condition| condition.status == "True")
            .and_then(|condition| condition.last_transition_time.as_deref())
            .and_then(time)
    };
    let requeued = conditions.iter().any(|condition| matches!(condition.kind.as_str(), "Evicted" | "Requeued" | "Preempted"));
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
fn template<'w, 'a>(item: &'w Workload<'a>) -> Option<&'w Template<'a>> {
    item.spec.pod_sets.first().map(|pod_set| &pod_set.template)
}

/// The class whose label (`<prefix>/class`, [`placid_targets::k8s::placement::class_key`]) the
/// Workload's pods carry, if any.
fn class(model: &Checked, class_key: &str, item: &Workload<'_>) -> Option<ClassId> {
    let value = label(template(item)?.metadata.labels?, class_key)?;
    model
        .classes
        .iter()
        .position(|class| ObjectName::map(&class.name, class.span, "class").is_ok_and(|name| name.as_str() == value))
        .map(ClassId::from_index)
}

/// The value of the label `key` in `labels`, a JSON object of strings, read without keeping
/// the others.
fn label(labels: &RawValue, key: &str) -> Option<String> {
    struct Lookup<'k>(&'k str);
    impl<'de> DeserializeSeed<'de> for Lookup<'_> {
        type Value = Option<String>;
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<String>, D::Error> {
            deserializer.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Lookup<'_> {
        type Value = Option<String>;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("labels")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut labels: M) -> Result<Option<String>, M::Error> {
            let mut found = None;
            while let Some(name) = labels.next_key::<std::borrow::Cow<'de, str>>()? {
                if name == self.0 {
                    found = Some(labels.next_value::<String>()?);
                } else {
                    labels.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    Lookup(key).deserialize(&mut serde_json::Deserializer::from_str(labels.get())).ok().flatten()
}

/// The pool a Workload runs through: the pool whose cells are exactly the ones its pods'
/// required node affinity names (placid's templates name the cells of their stage's pool),
/// else the narrowest pool (fewest nodes, then declaration order) that reaches the flavor
/// Kueue admitted its GPUs on, which keeps the replay nearest the nodes it ran on; `None`
/// when neither tells, and the engine chooses, as for a trace job without a pool.
fn pool(model: &Checked, layout: &Layout, item: &Workload<'_>) -> Option<PoolId> {
    let cell_key = layout.cell_label.as_str();
    let named: BTreeSet<&str> = template(item)
        .into_iter()
        .flat_map(|template| &template.spec.affinity.node_affinity.required.node_selector_terms)
        .flat_map(|term| &term.match_expressions)
        .filter(|requirement| requirement.key == cell_key && requirement.operator == "In")
        .flat_map(|requirement| &requirement.values)
        .map(String::as_str)
        .collect();
    let pools = (0..layout.pools.len()).map(PoolId::from_index);
    if !named.is_empty() {
        let cells_of = |pool: PoolId| layout.cells.of_pool(pool).map(|(_, cell)| cell.name.as_str()).collect::<BTreeSet<&str>>();
        if let Some(pool) = pools.clone().find(|pool| cells_of(*pool) == named) {
            return Some(pool);
        }
    }
    let flavor = item.status.admission.pod_set_assignments.first()?.flavors.gpu.as_deref()?;
    let cell = layout.cells.cells.iter().find(|cell| cell.name.as_str() == flavor)?;
    cell.group.pools.iter().copied().min_by_key(|pool| (model.pool(*pool).nodes.len(), pool.index()))
}

/// The GPUs a Workload holds: per pod set, its count × the GPUs its containers request (or,
/// without a request, limit).
fn gpus(item: &Workload<'_>) -> Option<u32> {
    let mut total: u32 = 0;
    for pod_set in &item.spec.pod_sets {
        let count = u32::try_from(pod_set.count.unwrap_or(1)).ok()?;
        let mut per_pod: u32 = 0;
        for container in &pod_set.template.spec.containers {
            let gpus = match container.resources.requests.gpu.as_ref().or(container.resources.limits.gpu.as_ref()) {
                None => 0,
                Some(Quantity::Whole(gpus)) => *gpus,
                Some(Quantity::NotWhole) => return None,
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
