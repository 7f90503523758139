//! What a team submits for each plan stage: a `batch/v1` Job, or a `jobset.x-k8s.io/v1alpha2`
//! JobSet when the stage's gang spans nodes, written to `kubernetes/workloads/` (not synced);
//! and each plan as an Argo Workflows WorkflowTemplate whose DAG creates the stages' workloads
//! in the plan's order (synced, in the team's namespace).
//!
//! A template carries everything the policy decides, what the stage runs among it (its image,
//! command, working directory, environment and CPU and memory requests, [`Model::launch`], with
//! `PLACID_TRIAL` set per trial by the workflow): the LocalQueue and WorkloadPriorityClass labels of the
//! stage's tier (what the admission policy checks), the class's placement
//! ([`super::placement::of_class`], which a route's mutation writes too: the Topology Aware
//! Scheduling annotation at the class's locality, the class's node label as a `nodeSelector`,
//! the pod labels the stage's score reads), required node affinity to the cells of the stage's
//! pool (the key Kueue's flavor assigner matches, [`super::layout::cells`]),
//! `terminationGracePeriodSeconds` = the tier's preemption window, the checkpoint cadence in
//! the environment variables the Slurm target exports, MIG resource names for MIG classes, and
//! the stage's run-time limit (`max-time`, as the Slurm target's `--time`) as
//! `activeDeadlineSeconds`.
//!
//! Invariant: labels are built from object names and checked label keys, and a template
//! carries exactly what its team's admission policy checks (queue and priority labels of the
//! stage's tier, no PriorityClass name, the grace period), so it is admitted as written.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, ResourceRequirements, Volume, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{
    Gang, KubernetesSettings, Launch, Model, Plan, PolicyTest, PoolId, Preemption, Promote, Stage, env as placid_env,
};
use placid_lang::span::Spanned;
use serde::Serialize;

use crate::k8s::kinds::{self, Kind};
use crate::k8s::layout::Layout;
use crate::k8s::names::{LabelValue, ObjectName};
use crate::k8s::objects::{Layer, NewObject, ObjectList, WithSpec};
use crate::k8s::placement;
use crate::k8s::scheduler::SCHEDULER_NAME;
use crate::text::shell_word;

/// Kueue's LocalQueue label.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// Kueue's WorkloadPriorityClass label.
pub const PRIORITY_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// The name of the one container a template has.
const CONTAINER: &str = "main";

/// The JobSet content (`jobset.x-k8s.io/v1alpha2`): one replicated Job of all the gang's pods.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSetSpec {
    replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Clone, Serialize)]
struct ReplicatedJob {
    name: String,
    replicas: i32,
    template: JobTemplateSpec,
}

/// A stage's workload: its kind and its content (`spec` only; the object list owns metadata).
enum Workload {
    // Boxed: a JobSpec is large and a Workload is moved around.
    Job(Box<JobSpec>),
    JobSet(JobSetSpec),
}

impl Workload {
    fn kind(&self) -> &'static Kind {
        match self {
            Workload::Job(_) => &kinds::JOB,
            Workload::JobSet(_) => &kinds::JOB_SET,
        }
    }

    /// Pushes a copy of it as the object `meta` names.
    fn push(&self, meta: NewObject, list: &mut ObjectList) -> Result<(), Diagnostic> {
        match self {
            Workload::Job(spec) => list.push(meta, WithSpec { spec: spec.clone() }),
            Workload::JobSet(spec) => list.push(meta, WithSpec { spec: spec.clone() }),
        }
    }

    /// The pod spec of its trial's pods.
    fn pod_spec(&mut self) -> Option<&mut PodSpec> {
        let job = match self {
            Workload::Job(spec) => spec.as_mut(),
            Workload::JobSet(spec) => spec.replicated_jobs.first_mut()?.template.spec.as_mut()?,
        };
        job.template.spec.as_mut()
    }

    /// The manifest an Argo `resource` step creates: the same object with a generated name, so
    /// trials and reruns do not collide.
    fn manifest(&self, generate_name: &str, namespace: &str, labels: &BTreeMap<String, String>) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Manifest<'a, T: Serialize> {
            api_version: &'static str,
            kind: &'static str,
            metadata: ObjectMeta,
            spec: &'a T,
        }
        let kind = self.kind();
        let metadata = ObjectMeta {
            generate_name: Some(format!("{generate_name}-")),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        };
        let text = match self {
            Workload::Job(spec) => serde_yaml::to_string(&Manifest { api_version: kind.api_version, kind: kind.kind, metadata, spec }),
            Workload::JobSet(spec) => serde_yaml::to_string(&Manifest { api_version: kind.api_version, kind: kind.kind, metadata, spec }),
        };
        text.unwrap_or_default()
    }
}

/// Pushes each stage's workload template and each plan's WorkflowTemplate.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    for plan in &model.plans {
        if let Err(diagnostic) = emit_plan(model, layout, plan, list) {
            diagnostics.push(diagnostic);
        }
    }
}

fn emit_plan(model: &Model, layout: &Layout, plan: &Plan, list: &mut ObjectList) -> Result<(), Diagnostic> {
    let team = &layout.teams[plan.team.value.index()];
    let plan_name = ObjectName::map(&plan.name, plan.span, "plan")?;
    let promotes = plan.stages.iter().any(|stage| stage.promote.is_some());
    let steps_image = model.project.kubernetes.as_ref().and_then(|settings| settings.steps_image.as_ref());
    let mut tasks = Vec::with_capacity(plan.stages.len());
    let mut templates = vec![Template::dag(&plan_name, Vec::new(), promotes)];
    for stage in &plan.stages {
        let stage_name = ObjectName::map(&stage.name, stage.span, "stage")?;
        let name = plan_name.join(stage_name.as_str(), stage.span, "stage")?;
        let labels = workload_labels(model, layout, stage)?;
        let mut workload = workload(model, layout, plan, &plan_name, stage, &stage_name)?;
        let mut meta = NewObject::namespaced(workload.kind(), team.namespace.clone(), name.clone(), stage.span);
        meta.layer = Layer::Workloads;
        meta.labels = labels.clone();
        // A copy: the template's workload is wired to the results below, the object is not.
        workload.push(meta, list)?;
        // The stage whose winners this one runs, if any (the first promoting `after`).
        let fed_by = stage.after.iter().map(|after| &plan.stages[after.value]).find(|after| after.promote.is_some());
        let role = Results { promotes: stage.promote.is_some(), fed: fed_by.is_some() };
        if let Some(pod) = workload.pod_spec() {
            role.wire(pod, stage_name.as_str(), steps_image);
        }
        templates.push(Template::resource(
            stage_name.as_str(),
            workload.manifest(name.as_str(), team.namespace.as_str(), &labels),
            &workload,
            role.parameters(),
        ));
        let dependencies: Vec<String> = stage
            .after
            .iter()
            .map(|after| &plan.stages[after.value])
            .map(|after| if after.promote.is_some() { promote_task(after) } else { task_name(after) })
            .collect();
        // A stage fed by a promotion runs winner i as its trial i, as Slurm's array task i
        // does, and only its own `trials` of them.
        let (with_sequence, with_param, when) = match fed_by {
            Some(fed_by) => (
                None,
                Some(format!("{{{{tasks.{}.outputs.result}}}}", promote_task(fed_by))),
                Some(format!("{{{{item.trial}}}} < {}", stage.trials)),
            ),
            None => ((stage.trials > 1).then(|| Sequence { count: stage.trials.to_string() }), None, None),
        };
        let arguments = match (&with_sequence, &with_param) {
            (_, Some(_)) => role.arguments("{{item.trial}}", "{{item.promoted}}"),
            (Some(_), None) => role.arguments("{{item}}", ""),
            (None, None) => role.arguments("0", ""),
        };
        tasks.push(DagTask {
            name: task_name(stage),
            template: stage_name.as_str().to_owned(),
            dependencies,
            depends: None,
            with_sequence,
            with_param,
            when,
            arguments,
        });
        if let (Some(promote), Some(image)) = (&stage.promote, steps_image) {
            let script = promotion_script(stage_name.as_str(), promote);
            templates.push(Template::promote(&promote_task(stage), image, &script));
            // Every trial ended, however: a failed or preempted trial is not ranked, and
            // cannot stall the plan (the Slurm step's `afterany`).
            let task = task_name(stage);
            tasks.push(DagTask {
                name: promote_task(stage),
                template: promote_task(stage),
                dependencies: Vec::new(),
                depends: Some(format!("{task}.Succeeded || {task}.Failed || {task}.Errored")),
                with_sequence: None,
                with_param: None,
                when: None,
                arguments: None,
            });
        }
    }
    templates[0] = Template::dag(&plan_name, tasks, promotes);
    let volume_claim_templates = promotes.then(|| vec![ResultsClaim::new()]);
    let spec = WorkflowTemplateSpec { entrypoint: plan_name.as_str().to_owned(), templates, volume_claim_templates };
    list.push(NewObject::namespaced(&kinds::WORKFLOW_TEMPLATE, team.namespace.clone(), plan_name, plan.span), WithSpec { spec })
}

/// Pushes the workload job `index` of policy test `test` is, as its team submits it from the
/// build's templates, for `placid test`'s admission expectations: the template a plan of the
/// job's team would get for a stage of the job's tier, class, pool and GPUs ([`workload`] and
/// [`workload_labels`], so every label, the placement and the grace period are the ones the
/// build's templates carry), in the team's namespace, with the tag label
/// ([`PlacidKeys::tag`](super::names::PlacidKeys::tag)) of the job's `tag=`, which the routes'
/// policies read. A job that asks for no pool gets the first pool's node affinity, which no
/// admission policy reads. Named `test-job-<n>`, `n` counted from 1.
pub fn push_test_job(model: &Model, layout: &Layout, test: &PolicyTest, index: usize, list: &mut ObjectList) -> Result<(), Diagnostic> {
    let job = &test.jobs[index];
    let pool = match (&job.pool, model.pools.is_empty()) {
        (Some(pool), _) => pool.clone(),
        (None, false) => Spanned::new(PoolId::from_index(0), job.span),
        (None, true) => {
            return Err(Diagnostic::error(
                Code::TestExpectationFails,
                job.span,
                "the project has no pool to write this job's workload for",
            )
            .label("no pool")
            .help("declare a pool: a workload's node affinity names one"));
        }
    };
    let plan = Plan { name: test.name.clone(), span: test.span, team: job.team.clone(), stages: Vec::new(), recovered: false };
    let stage = Stage {
        name: test.name.clone(),
        span: job.span,
        tier: job.tier.clone(),
        class: job.class.clone(),
        pool,
        gpus: Spanned::new(job.gpus, job.span),
        trials: 1,
        capacity: None,
        after: Vec::new(),
        promote: None,
        score: None,
        time: None,
        max_time: None,
        launch: Launch::default(),
    };
    let plan_name = ObjectName::fixed("test", test.span)?;
    let stage_name = ObjectName::fixed(&format!("job-{}", index + 1), job.span)?;
    let workload = workload(model, layout, &plan, &plan_name, &stage, &stage_name)?;
    let team = &layout.teams[job.team.value.index()];
    let mut meta =
        NewObject::namespaced(workload.kind(), team.namespace.clone(), plan_name.join(stage_name.as_str(), job.span, "job")?, job.span);
    meta.layer = Layer::Workloads;
    meta.labels = workload_labels(model, layout, &stage)?;
    if let Some(tag) = &job.tag {
        meta.labels.insert(layout.keys.tag()?.as_str().to_owned(), LabelValue::from_name(&tag.value, tag.span)?.as_str().to_owned());
    }
    workload.push(meta, list)
}

/// The name of a promoting stage's ranking task and template.
fn promote_task(stage: &Stage) -> String {
    format!("promote-{}", task_name(stage))
}

/// The ranking step's script: the Slurm promotion job's ranking on the workflow's results
/// volume, then the winners as a JSON list on stdout, which the stages after it fan out over.
/// Its log lines go to stderr, since Argo takes stdout as the step's result. Each winner is
/// `{"trial": i, "promoted": its trial}`: the stages after it run winner i as their trial i.
fn promotion_script(stage: &str, promote: &Promote) -> String {
    format!(
        "set -eu\nresults={RESULTS_DIR}\nstage={}\nmetric={}\ntop={}\nsort_order={}\n{{\n{}}} >&2\n{}",
        shell_word(stage),
        shell_word(promote.by.as_str()),
        promote.top,
        crate::results::sort_order(promote.order),
        crate::results::RANK_TRIALS,
        r#"awk 'BEGIN { printf "[" } { printf "%s{\"trial\":\"%d\",\"promoted\":\"%s\"}", (NR > 1 ? "," : ""), NR - 1, $1 } END { print "]" }' "$results/$stage.promoted""#,
    )
}

/// Where a promoting plan's results volume is mounted, in trial pods and the ranking step.
const RESULTS_DIR: &str = "/placid/results";
/// The workflow's volume claim template; Argo names the claim `<workflow>-results`.
const RESULTS_VOLUME: &str = "results";

/// How a stage's trials take part in its plan's promotions.
struct Results {
    /// Its trials write results files for a ranking.
    promotes: bool,
    /// It runs the winners of an earlier stage's ranking, one per trial.
    fed: bool,
}

impl Results {
    /// The workflow's copy of a trial's pod: its trial number, and for promotions the results
    /// volume, the directory created before the trial starts (with the steps image), and the
    /// variables the training code reads.
    fn wire(&self, pod: &mut PodSpec, stage: &str, steps_image: Option<&Spanned<String>>) {
        for container in &mut pod.containers {
            for variable in container.env.iter_mut().flatten().filter(|variable| variable.name == placid_env::TRIAL) {
                variable.value = Some("{{inputs.parameters.trial}}".to_owned());
            }
        }
        if !self.promotes && !self.fed {
            return;
        }
        let mount = VolumeMount { name: RESULTS_VOLUME.to_owned(), mount_path: RESULTS_DIR.to_owned(), ..VolumeMount::default() };
        let variable = |name: &str, value: String| EnvVar { name: name.to_owned(), value: Some(value), value_from: None };
        let mut env = vec![variable(placid_env::RESULTS_DIR, RESULTS_DIR.to_owned())];
        if self.promotes {
            env.push(variable(placid_env::RESULT_FILE, format!("{RESULTS_DIR}/{stage}/{{{{inputs.parameters.trial}}}}.result")));
            if let Some(image) = steps_image {
                pod.init_containers.get_or_insert_with(Vec::new).push(Container {
                    name: "results-dir".to_owned(),
                    image: Some(image.value.clone()),
                    command: Some(vec!["mkdir".to_owned(), "-p".to_owned(), format!("{RESULTS_DIR}/{stage}")]),
                    volume_mounts: Some(vec![mount.clone()]),
                    ..Container::default()
                });
            }
        }
        if self.fed {
            env.push(variable(placid_env::PROMOTED_TRIAL, "{{inputs.parameters.promoted}}".to_owned()));
        }
        for container in &mut pod.containers {
            container.env.get_or_insert_with(Vec::new).extend(env.iter().cloned());
            container.volume_mounts.get_or_insert_with(Vec::new).push(mount.clone());
        }
        pod.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: RESULTS_VOLUME.to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{{{{workflow.name}}}}-{RESULTS_VOLUME}"),
                read_only: None,
            }),
            ..Volume::default()
        });
    }

    /// The resource template's inputs.
    fn parameters(&self) -> Vec<&'static str> {
        // Every trial knows its number (`PLACID_TRIAL`).
        let mut names = vec!["trial"];
        if self.fed {
            names.push("promoted");
        }
        names
    }

    /// The task's arguments for them: the trial (the sequence item, or the promoted trial).
    fn arguments(&self, trial: &str, promoted: &str) -> Option<Arguments> {
        let value = |name: &str| if name == "promoted" { promoted } else { trial };
        let parameters: Vec<Parameter> =
            self.parameters().into_iter().map(|name| Parameter { name: name.to_owned(), value: Some(value(name).to_owned()) }).collect();
        (!parameters.is_empty()).then_some(Arguments { parameters })
    }
}

/// The DAG task of a stage: the stage's name mapped to a DNS label, which Argo accepts.
fn task_name(stage: &Stage) -> String {
    stage.name.as_str().to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The labels of a stage's workload object: its tier's Kueue queue and priority class, and its
/// class label: a route's validating policy reads the class on the object it admits, never
/// inside its pod template, so a template carries it there, as a routed workload does.
fn workload_labels(model: &Model, layout: &Layout, stage: &Stage) -> Result<BTreeMap<String, String>, Diagnostic> {
    let tier = layout.tier(stage.tier.value).object.as_str().to_owned();
    let mut labels = BTreeMap::from([(QUEUE_LABEL.to_owned(), tier.clone()), (PRIORITY_LABEL.to_owned(), tier)]);
    if let Some(class) = &stage.class {
        let (key, name) = placement::class_label(layout, model.class(class.value), stage.span)?;
        labels.insert(key, name.as_str().to_owned());
    }
    Ok(labels)
}

fn workload(
    model: &Model,
    layout: &Layout,
    plan: &Plan,
    plan_name: &ObjectName,
    stage: &Stage,
    stage_name: &ObjectName,
) -> Result<Workload, Diagnostic> {
    let gang = model.gang(stage);
    let pod = pod_template(model, layout, plan, plan_name, stage, stage_name, &gang)?;
    let tier = model.tier(stage.tier.value);
    // The limit the Slurm target gives `--time`: max-time, else the expected time, else the
    // tier's maximum. Kubernetes pauses the clock while Kueue holds the Job suspended.
    let active_deadline_seconds = Some(i64::try_from(stage.run_time_limit(tier).seconds).unwrap_or(i64::MAX));
    let pods = i32::try_from(gang.nodes).unwrap_or(i32::MAX);
    let job = JobSpec {
        parallelism: Some(pods),
        completions: Some(pods),
        completion_mode: (pods > 1).then(|| "Indexed".to_owned()),
        // A preempted pod is Kueue's to requeue (the whole workload), never the Job's to retry.
        backoff_limit: Some(if matches!(tier.preemption.value, Preemption::Window { .. }) { 0 } else { 3 }),
        active_deadline_seconds,
        template: pod,
        ..JobSpec::default()
    };
    if gang.nodes == 1 {
        return Ok(Workload::Job(Box::new(job)));
    }
    Ok(Workload::JobSet(JobSetSpec {
        replicated_jobs: vec![ReplicatedJob {
            name: "workers".to_owned(),
            replicas: 1,
            template: JobTemplateSpec { metadata: None, spec: Some(job) },
        }],
    }))
}

fn pod_template(
    model: &Model,
    layout: &Layout,
    plan: &Plan,
    plan_name: &ObjectName,
    stage: &Stage,
    stage_name: &ObjectName,
    gang: &Gang,
) -> Result<PodTemplateSpec, Diagnostic> {
    let tier = model.tier(stage.tier.value);
    let class = stage.class.as_ref().map(|class| model.class(class.value));
    let team = &layout.teams[plan.team.value.index()];
    let keys = &layout.keys;
    let mut labels = BTreeMap::from([
        (keys.pod("team", stage.span)?, team.object.as_str().to_owned()),
        (keys.pod("tier", stage.span)?, layout.tier(stage.tier.value).object.as_str().to_owned()),
        (keys.pod("plan", stage.span)?, plan_name.as_str().to_owned()),
        (keys.pod("stage", stage.span)?, stage_name.as_str().to_owned()),
    ]);
    let placement = placement::of_class(layout, class, stage.span)?;
    labels.extend(placement.labels);
    let annotations = (!placement.annotations.is_empty()).then_some(placement.annotations);
    let cells: Vec<String> = layout
        .cells
        .of_pool(stage.pool.value)
        .filter(|(_, cell)| stage.capacity.is_none_or(|kind| cell.group.capacity == kind))
        .map(|(_, cell)| cell.name.as_str().to_owned())
        .collect();
    let requirements =
        vec![NodeSelectorRequirement { key: layout.cell_label.as_str().to_owned(), operator: "In".to_owned(), values: Some(cells) }];
    let affinity = Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm { match_expressions: Some(requirements), match_fields: None }],
            }),
            preferred_during_scheduling_ignored_during_execution: None,
        }),
        ..Affinity::default()
    };
    let gpu_resource = match class.and_then(|class| class.mig.as_ref()) {
        Some(profile) => format!("nvidia.com/mig-{}", profile.value),
        None => "nvidia.com/gpu".to_owned(),
    };
    let launch = model.launch(stage);
    let variable = |name: &str, value: String| EnvVar { name: name.to_owned(), value: Some(value), value_from: None };
    // The stage's own variables, then placid's (whose names a stage may not take): the trial
    // (the workflow sets each trial's number, [`Results::wire`]) and the checkpoint cadence.
    let mut env: Vec<EnvVar> = launch.env.iter().map(|own| variable(&own.name.value, own.value.clone())).collect();
    env.push(variable(placid_env::TRIAL, "0".to_owned()));
    if let Some(checkpoint) = tier.checkpoint {
        env.push(variable(placid_env::CHECKPOINT_EVERY, checkpoint.every.seconds.to_string()));
        env.push(variable(placid_env::CHECKPOINT_INCREMENTAL, if checkpoint.incremental { "1" } else { "0" }.to_owned()));
    }
    let mut requests = BTreeMap::new();
    if let Some(cpus) = &launch.cpus {
        requests.insert("cpu".to_owned(), Quantity(cpus.value.to_string()));
    }
    if let Some(memory) = &launch.memory {
        let (count, unit) = memory.value.request();
        requests.insert("memory".to_owned(), Quantity(format!("{count}{unit}i")));
    }
    let container = Container {
        name: CONTAINER.to_owned(),
        image: launch.image.as_ref().map(|image| image.value.clone()),
        command: launch.command.as_ref().map(|command| command.value.clone()),
        working_dir: launch.workdir.as_ref().map(|workdir| workdir.value.clone()),
        env: Some(env),
        resources: Some(ResourceRequirements {
            limits: Some(BTreeMap::from([(gpu_resource, Quantity(gang.gpus_per_node.to_string()))])),
            requests: (!requests.is_empty()).then_some(requests),
            ..ResourceRequirements::default()
        }),
        ..Container::default()
    };
    let termination_grace_period_seconds = match tier.preemption.value {
        Preemption::Window { window, .. } => Some(i64::try_from(window.seconds).unwrap_or(i64::MAX)),
        Preemption::Never => None,
    };
    Ok(PodTemplateSpec {
        metadata: Some(ObjectMeta { labels: Some(labels), annotations, ..ObjectMeta::default() }),
        spec: Some(PodSpec {
            affinity: Some(affinity),
            containers: vec![container],
            node_selector: (!placement.node_selector.is_empty()).then_some(placement.node_selector),
            restart_policy: Some("Never".to_owned()),
            // Only the extender's own score places pods: another stage score is not served
            // there (the checker warns, E146), and without an extender no scheduler runs.
            scheduler_name: stage
                .score
                .as_ref()
                .filter(|score| model.project.kubernetes.as_ref().and_then(KubernetesSettings::served_score) == Some(score.value))
                .map(|_| SCHEDULER_NAME.to_owned()),
            termination_grace_period_seconds,
            ..PodSpec::default()
        }),
    })
}

/// WorkflowTemplate `spec` (argoproj.io/v1alpha1).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkflowTemplateSpec {
    entrypoint: String,
    templates: Vec<Template>,
    /// The results volume of a plan that promotes, one per workflow run.
    #[serde(skip_serializing_if = "Option::is_none")]
    volume_claim_templates: Option<Vec<ResultsClaim>>,
}

/// The results volume: shared by the trials, which may run on several nodes at once.
#[derive(Serialize)]
struct ResultsClaim {
    metadata: ObjectMeta,
    spec: PersistentVolumeClaimSpec,
}

impl ResultsClaim {
    /// Results files are a few lines per trial.
    fn new() -> ResultsClaim {
        ResultsClaim {
            metadata: ObjectMeta { name: Some(RESULTS_VOLUME.to_owned()), ..ObjectMeta::default() },
            spec: PersistentVolumeClaimSpec {
                access_modes: Some(vec!["ReadWriteMany".to_owned()]),
                resources: Some(VolumeResourceRequirements {
                    requests: Some(BTreeMap::from([("storage".to_owned(), Quantity("1Gi".to_owned()))])),
                    ..VolumeResourceRequirements::default()
                }),
                ..PersistentVolumeClaimSpec::default()
            },
        }
    }
}

#[derive(Serialize)]
struct Template {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    inputs: Option<Arguments>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dag: Option<Dag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource: Option<ResourceTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<Script>,
}

impl Template {
    /// The plan's DAG; a plan that promotes goes on after a failed trial, as its ranking does.
    fn dag(plan: &ObjectName, tasks: Vec<DagTask>, promotes: bool) -> Template {
        let fail_fast = promotes.then_some(false);
        Template { name: plan.as_str().to_owned(), inputs: None, dag: Some(Dag { tasks, fail_fast }), resource: None, script: None }
    }

    /// A promoting stage's ranking, on the results volume.
    fn promote(name: &str, image: &Spanned<String>, source: &str) -> Template {
        Template {
            name: name.to_owned(),
            inputs: None,
            dag: None,
            resource: None,
            script: Some(Script {
                image: image.value.clone(),
                command: vec!["sh".to_owned()],
                source: source.to_owned(),
                volume_mounts: vec![VolumeMount {
                    name: RESULTS_VOLUME.to_owned(),
                    mount_path: RESULTS_DIR.to_owned(),
                    ..VolumeMount::default()
                }],
            }),
        }
    }

    /// A step that creates the stage's workload and waits until it ends: Kueue admits it, so
    /// the DAG's order is the plan's and the queues' order is the policy's.
    fn resource(stage: &str, manifest: String, workload: &Workload, parameters: Vec<&str>) -> Template {
        let (success, failure) = match workload {
            Workload::Job(_) => ("status.succeeded > 0", "status.failed > 0"),
            Workload::JobSet(_) => ("status.terminalState == Completed", "status.terminalState == Failed"),
        };
        let parameters: Vec<Parameter> = parameters.into_iter().map(|name| Parameter { name: name.to_owned(), value: None }).collect();
        Template {
            name: stage.to_owned(),
            inputs: (!parameters.is_empty()).then_some(Arguments { parameters }),
            dag: None,
            script: None,
            resource: Some(ResourceTemplate {
                action: "create".to_owned(),
                manifest,
                success_condition: success.to_owned(),
                failure_condition: failure.to_owned(),
            }),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Dag {
    tasks: Vec<DagTask>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fail_fast: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DagTask {
    name: String,
    template: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dependencies: Vec<String>,
    /// A condition on earlier tasks' outcomes, instead of `dependencies` (Argo takes one).
    #[serde(skip_serializing_if = "Option::is_none")]
    depends: Option<String>,
    /// One workload per trial.
    #[serde(skip_serializing_if = "Option::is_none")]
    with_sequence: Option<Sequence>,
    /// One workload per promoted trial.
    #[serde(skip_serializing_if = "Option::is_none")]
    with_param: Option<String>,
    /// Which of those items run (a fed stage's own `trials`).
    #[serde(skip_serializing_if = "Option::is_none")]
    when: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<Arguments>,
}

/// Parameters given to a task, or taken by a template (then without values).
#[derive(Serialize)]
struct Arguments {
    parameters: Vec<Parameter>,
}

#[derive(Serialize)]
struct Parameter {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Script {
    image: String,
    command: Vec<String>,
    source: String,
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Serialize)]
struct Sequence {
    count: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceTemplate {
    action: String,
    manifest: String,
    success_condition: String,
    failure_condition: String,
}
