//! Admission, executed: every CEL expression of the build's admission policies (the teams'
//! and the routes' ValidatingAdmissionPolicies, the routes' MutatingAdmissionPolicies) is
//! evaluated with a CEL runtime (cel-rust) on the build's own workload templates and on
//! tampered copies, as the API server would: the policies bound to the object's namespace,
//! mutations first, then every validation whose match conditions hold.
//!
//! Over every example and over generated projects: the templates are admitted, a workload
//! without a queue label is refused, a tier its team may not use is refused with the policy's
//! message, and a tagged workload is routed to its tier and its class's placement (or refused
//! where its team may not use that tier).
//!
//! A policy test's job, which `placid test` runs through the same policies for its admission
//! expectations, is written as the template of a stage of the job's settings.
//!
//! The evaluation is placid-admission's (compiler/admission), which says what cel-rust lacks of
//! Kubernetes' CEL.

mod k8s_support;

use std::collections::{BTreeMap, HashMap};

use k8s_support::{Project, example_projects, generated, generated_projects, kubernetes_examples, parsed, strings};
use placid_admission::apply::{configuration, merge};
use placid_admission::{Policies, cel_value, evaluate};
use placid_lang::model::{PolicyTest, Routing, TeamId, TestJob};
use placid_lang::name::Name;
use placid_lang::span::Span;
use placid_targets::k8s::TestSubmissions;
use serde_json::Value;

/// The build's admission policies.
struct Admission<'a> {
    policies: Policies<'a>,
}

/// What admission made of an object: the mutated object, or the refusals' messages and the
/// object as the validations saw it.
type Verdict = Result<Value, (Vec<String>, Value)>;

impl<'a> Admission<'a> {
    fn new(project: &'a Project) -> Admission<'a> {
        Admission { policies: Policies::new(project.objects.iter().map(|object| &object.object)) }
    }

    fn admit(&self, object: &Value) -> Verdict {
        match self.policies.admit(object).unwrap_or_else(|error| panic!("{error}")) {
            placid_admission::Verdict::Admitted(admitted) => Ok(admitted),
            placid_admission::Verdict::Refused { messages, seen } => Err((messages, seen)),
        }
    }
}

/// The workloads a team submits: the templates under `workloads/` and the objects the plans'
/// WorkflowTemplates create.
fn workloads(project: &Project) -> Vec<(String, Value)> {
    let mut workloads = Vec::new();
    for object in &project.objects {
        match object.kind() {
            "Job" | "JobSet" => workloads.push((object.path.clone(), object.object.clone())),
            "WorkflowTemplate" => {
                for template in object.object["spec"]["templates"].as_array().into_iter().flatten() {
                    let Some(manifest) = template["resource"]["manifest"].as_str() else { continue };
                    let mut embedded: Value = serde_yaml::from_str(manifest).unwrap_or_else(|error| panic!("{}: {error}", object.path));
                    // Argo names it at run time.
                    embedded["metadata"]["name"] = Value::String("created-by-argo".into());
                    workloads.push((format!("{} template {}", object.path, template["name"]), embedded));
                }
            }
            _ => {}
        }
    }
    workloads
}

/// A policy name as a Kubernetes name, spelled here rather than through placid's function.
fn kube(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

const QUEUE: &str = "kueue.x-k8s.io/queue-name";
const PRIORITY: &str = "kueue.x-k8s.io/priority-class";

fn set_label(object: &mut Value, key: &str, value: Option<&str>) {
    let labels = object["metadata"]["labels"].as_object_mut().expect("a workload has labels");
    match value {
        Some(value) => _ = labels.insert(key.to_owned(), Value::String(value.to_owned())),
        None => _ = labels.remove(key),
    }
}

/// The team whose namespace `object` is in.
fn team_of(project: &Project, object: &Value) -> TeamId {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let index =
        project.model.teams.iter().position(|team| kube(team.namespace.as_str()) == namespace || team.namespace.as_str() == namespace);
    TeamId::from_index(index.unwrap_or_else(|| panic!("no team has namespace {namespace}")))
}

fn check(project: &Project, compared: &mut usize) -> Vec<String> {
    let admission = Admission::new(project);
    let mut problems = Vec::new();
    let workloads = workloads(project);
    assert!(!workloads.is_empty(), "{}: no workloads", project.name);
    for (at, workload) in &workloads {
        let team = project.model.team(team_of(project, workload));
        if let Err((refusals, _)) = admission.admit(workload) {
            problems.push(format!("{}: {at}: the build's own template is refused: {refusals:?}", project.name));
        }
        let mut unqueued = workload.clone();
        set_label(&mut unqueued, QUEUE, None);
        match admission.admit(&unqueued) {
            Err((refusals, _)) if refusals.iter().any(|message| message.contains(&format!("must carry the {QUEUE} label"))) => {}
            other => {
                problems.push(format!("{}: {at}: without a queue label: {:?}", project.name, other.err().map(|(refusals, _)| refusals)))
            }
        }
        for (index, tier) in project.model.tiers.iter().enumerate() {
            if team.tiers.iter().any(|allowed| allowed.value.index() == index) {
                continue;
            }
            let mut forbidden = workload.clone();
            set_label(&mut forbidden, QUEUE, Some(&kube(tier.name.as_str())));
            set_label(&mut forbidden, PRIORITY, Some(&kube(tier.name.as_str())));
            let expected = format!("team {} may not use tier {}", team.name, tier.name);
            match admission.admit(&forbidden) {
                Err((refusals, _)) if refusals.iter().any(|message| message.starts_with(&expected)) => {}
                other => {
                    problems.push(format!("{}: {at}: in tier {}: {:?}", project.name, tier.name, other.err().map(|(refusals, _)| refusals)))
                }
            }
        }
        routes(project, &admission, at, workload, &mut problems, compared);
    }
    problems
}

/// Whether the build routes by mutation (a target version of 1.34 or later).
fn mutates(project: &Project) -> bool {
    project.objects.iter().any(|object| object.kind() == "MutatingAdmissionPolicy")
}

/// The pod templates of a workload, each with where it is.
fn pod_templates(workload: &Value) -> Vec<(String, Value)> {
    match workload["kind"].as_str() {
        Some("JobSet") => workload["spec"]["replicatedJobs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|job| (format!(" replicated job {}", job["name"]), job["template"]["spec"]["template"].clone()))
            .collect(),
        Some("Pod") => vec![(String::new(), workload.clone())],
        _ => vec![(String::new(), workload["spec"]["template"].clone())],
    }
}

/// What a class decides on a pod template: its labels but the submitter's own (team, tier,
/// plan, stage), its Kueue topology annotations and its node selector.
fn constraints(pod: &Value, prefix: &str) -> Vec<(&'static str, String, String)> {
    let own = ["team", "tier", "plan", "stage"].map(|name| format!("{prefix}/{name}"));
    let labels =
        strings(&pod["metadata"]["labels"]).into_iter().filter(|(key, _)| !own.contains(key)).map(|(key, value)| ("label", key, value));
    let annotations = strings(&pod["metadata"]["annotations"])
        .into_iter()
        .filter(|(key, _)| key.starts_with("kueue.x-k8s.io/podset-"))
        .map(|(key, value)| ("annotation", key, value));
    let selector = strings(&pod["spec"]["nodeSelector"]).into_iter().map(|(key, value)| ("node selector", key, value));
    labels.chain(annotations).chain(selector).collect()
}

/// The constraints of the build's first template whose pods name `class` directly.
fn directly_classed(project: &Project, prefix: &str, class: &str) -> Option<Vec<(&'static str, String, String)>> {
    project.objects.iter().filter(|object| matches!(object.kind(), "Job" | "JobSet")).find_map(|object| {
        let (_, pod) = pod_templates(&object.object).into_iter().next()?;
        (strings(&pod["metadata"]["labels"]).get(&format!("{prefix}/class")).map(String::as_str) == Some(class))
            .then(|| constraints(&pod, prefix))
    })
}

/// A tagged workload is routed to its tier (the mutating policy sets the labels, whatever the
/// submitter wrote) and, where the route names a class, carries every constraint a template
/// naming that class directly carries (its pod labels, TAS annotation and node selector), or
/// is refused where its team may not use the tier.
/// Counts in `compared` the routed workloads whose pod templates were compared with a template
/// naming the route's class directly.
fn routes(project: &Project, admission: &Admission<'_>, at: &str, workload: &Value, problems: &mut Vec<String>, compared: &mut usize) {
    let prefix = project.model.project.kubernetes.as_ref().map(|settings| settings.label_prefix.value.clone()).unwrap_or_default();
    let team = team_of(project, workload);
    for route in &project.model.routes {
        let mut tagged = workload.clone();
        set_label(&mut tagged, &format!("{prefix}/tag"), Some(route.tag.value.as_str()));
        // How the route's policy names it in a refusal.
        let declared = format!("(route tag=\"{}\"", route.tag.value);
        match project.model.routing(route.tag.value.as_str(), team) {
            Routing::Unrouted => {}
            Routing::Routed { tier: tier_id, .. } => {
                let tier = kube(project.model.tier(tier_id).name.as_str());
                let class = route.class.as_ref().map(|class| kube(project.model.class(class.value).name.as_str()));
                // Routed, the workload meets its new tier's own rules or is refused by them (a
                // template of a never-preempted tier has no grace period), never by the route.
                let (seen, refusals) = match admission.admit(&tagged) {
                    Ok(admitted) => (admitted, Vec::new()),
                    Err((refusals, seen)) => (seen, refusals),
                };
                let labels = strings(&seen["metadata"]["labels"]);
                let routed = labels.get(QUEUE) == Some(&tier)
                    && labels.get(PRIORITY) == Some(&tier)
                    && class.as_ref().is_none_or(|class| labels.get(&format!("{prefix}/class")) == Some(class));
                if !mutates(project) {
                    // Without mutation the route only validates: a template of the routed tier
                    // (its queue) and class (its pods') is admitted as it is, any other is told
                    // which labels to set.
                    let pods_class = pod_templates(workload)
                        .first()
                        .and_then(|(_, pod)| strings(&pod["metadata"]["labels"]).get(&format!("{prefix}/class")).cloned());
                    let already = labels.get(QUEUE) == Some(&tier) && class.as_ref().is_none_or(|class| pods_class.as_ref() == Some(class));
                    let told = refusals.iter().any(|message| message.contains("set the labels") && message.contains(&declared));
                    if already == told {
                        problems.push(format!(
                            "{}: {at}: tag {} unmutated, labels {labels:?}, pods' class {pods_class:?}: refusals {refusals:?}",
                            project.name, route.tag.value
                        ));
                    }
                    continue;
                }
                if !routed {
                    problems.push(format!("{}: {at}: tag {} is not routed to {tier} {class:?}: {labels:?}", project.name, route.tag.value));
                }
                if let Some(class) = &class {
                    let Some(direct) = directly_classed(project, &prefix, class) else {
                        problems.push(format!("{}: no template names class {class} directly", project.name));
                        continue;
                    };
                    for (pod_at, pod) in pod_templates(&seen) {
                        let carried = constraints(&pod, &prefix);
                        if let Some((what, key, value)) =
                            direct.iter().find(|(what, key, value)| !carried.contains(&(*what, key.clone(), value.clone())))
                        {
                            problems.push(format!(
                                "{}: {at}{pod_at}: tag {} routed to class {class} lacks its {what} {key}={value} (has {carried:?})",
                                project.name, route.tag.value
                            ));
                        }
                    }
                    *compared += 1;
                }
                let rules = format!("pods of tier {}", project.model.tier(tier_id).name);
                if let Some(refusal) = refusals.iter().find(|message| !message.starts_with(&rules)) {
                    problems.push(format!("{}: {at}: tag {} is refused: {refusal}", project.name, route.tag.value));
                }
            }
            Routing::Refused { .. } => match admission.admit(&tagged) {
                Err((refusals, _)) if refusals.iter().any(|message| message.contains(&declared)) => {}
                Err((refusals, _)) => {
                    problems.push(format!("{}: {at}: tag {} refused otherwise: {refusals:?}", project.name, route.tag.value))
                }
                Ok(_) => problems.push(format!("{}: {at}: tag {} routed where the team may not go", project.name, route.tag.value)),
            },
        }
    }
}

/// Admits every project's workloads; the number of routed workloads compared with a template
/// naming the route's class.
fn assert_admission(projects: &[Project]) -> usize {
    let mut compared = 0;
    let problems: Vec<String> = projects.iter().flat_map(|project| check(project, &mut compared)).collect();
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    compared
}

#[test]
fn every_examples_admission_admits_its_templates_and_refuses_tampered_ones() {
    assert_admission(&example_projects());
}

/// Below 1.34 no mutation routes a tagged workload (the closed build calls that an open
/// reference): a template of the routed tier and class is admitted as it is, every other
/// tagged one is told which labels to set.
#[test]
fn without_mutation_a_template_of_the_routed_tier_and_class_is_admitted_and_others_are_told() {
    let project = generated("1.33", "ml.acme-corp.io", ["Gold", "Silver_A", "Bronze"]);
    assert!(!mutates(&project), "1.33 has no MutatingAdmissionPolicy");
    assert_admission(&[project]);
}

#[test]
fn generated_projects_admission_admits_their_templates_and_refuses_tampered_ones() {
    // The generated projects route a tag to model-parallel, whose `lanes` is a node selector.
    assert!(assert_admission(&generated_projects()) > 0, "no routed workload was compared with a directly-classed template");
}

#[test]
fn a_policy_refuses_and_a_mutation_sets_what_it_says() {
    let object = serde_json::json!({"kind": "Job", "metadata": {"labels": {"a/tag": "x"}}, "spec": {"template": {"spec": {"terminationGracePeriodSeconds": 120}}}});
    let cel_object = cel_value(&object);
    let none = HashMap::new();
    assert_eq!(
        evaluate("p", "object.spec.template.spec.terminationGracePeriodSeconds >= 180", &cel_object, &none),
        Ok(cel_value(&Value::Bool(false)))
    );
    let applied = configuration(
        "p",
        "object.metadata.labels['a/tag'] == 'x' ? Object{metadata: Object.metadata{labels: {'q': 'p2'}}} : Object{}",
        &cel_object,
        &none,
    );
    let mut merged = object.clone();
    merge(&mut merged, &applied.expect("evaluates"));
    assert_eq!(
        strings(&merged["metadata"]["labels"]),
        BTreeMap::from([("a/tag".to_owned(), "x".to_owned()), ("q".to_owned(), "p2".to_owned())])
    );
}

/// A policy test's job is written as the build's own template for a stage of its team, tier,
/// class, pool and GPUs: for every plan stage of every example (but those restricted to one
/// capacity kind, which a test job cannot ask for), a test job of the stage's settings gets the
/// stage template's kind, namespace and queue labels, and pod templates with its labels (but
/// the plan's and stage's), annotations, node selector, affinity, grace period and GPU limits.
#[test]
fn a_test_jobs_workload_is_its_stages_template() {
    let mut compared = 0;
    for name in kubernetes_examples() {
        let clean = placid_tests::build_clean(&name);
        let model = &clean.model;
        let submissions = TestSubmissions::new(model).unwrap_or_else(|errors| panic!("{name}: {errors:?}")).expect("a Kubernetes target");
        let objects = parsed(clean.artifacts.clone());
        let prefix = model.project.kubernetes.as_ref().map(|settings| settings.label_prefix.value.clone()).unwrap_or_default();
        for plan in &model.plans {
            for stage in plan.stages.iter().filter(|stage| stage.capacity.is_none()) {
                let job = TestJob {
                    span: stage.span,
                    name: None,
                    running: false,
                    team: plan.team.clone(),
                    tier: stage.tier.clone(),
                    class: stage.class.clone(),
                    gpus: stage.gpus.value,
                    pool: Some(stage.pool.clone()),
                    nodes: Vec::new(),
                    at: None,
                    run: None,
                    tag: None,
                };
                let test = PolicyTest {
                    name: Name::new("t").expect("a name"),
                    span: Span::DETACHED,
                    jobs: vec![job],
                    at: None,
                    expects: Vec::new(),
                };
                let written = submissions.workload(model, &test, 0).unwrap_or_else(|error| panic!("{name}: {error:?}"));
                let at = format!("{name}: plan {} stage {}", plan.name, stage.name);
                let template = objects
                    .iter()
                    .map(|object| &object.object)
                    .filter(|object| matches!(object["kind"].as_str(), Some("Job" | "JobSet")))
                    .find(|object| {
                        pod_templates(object).first().is_some_and(|(_, pod)| {
                            let labels = strings(&pod["metadata"]["labels"]);
                            labels.get(&format!("{prefix}/plan")) == Some(&kube(plan.name.as_str()))
                                && labels.get(&format!("{prefix}/stage")) == Some(&kube(stage.name.as_str()))
                        })
                    })
                    .unwrap_or_else(|| panic!("{at}: no template"));
                assert_eq!(written["kind"], template["kind"], "{at}");
                assert_eq!(written["metadata"]["namespace"], template["metadata"]["namespace"], "{at}");
                // The workload object's labels whole: the tier's and the class label the
                // route policies read (the test jobs carry no tag).
                assert_eq!(written["metadata"]["labels"], template["metadata"]["labels"], "{at}");
                let (written_pods, template_pods) = (pod_templates(&written), pod_templates(template));
                assert_eq!(written_pods.len(), template_pods.len(), "{at}");
                for ((_, pod), (_, expected)) in written_pods.iter().zip(&template_pods) {
                    let own = |pod: &Value| -> BTreeMap<String, String> {
                        let mut labels = strings(&pod["metadata"]["labels"]);
                        labels.retain(|key, _| *key != format!("{prefix}/plan") && *key != format!("{prefix}/stage"));
                        labels
                    };
                    assert_eq!(own(pod), own(expected), "{at}: pod labels");
                    assert_eq!(pod["metadata"]["annotations"], expected["metadata"]["annotations"], "{at}: annotations");
                    for field in ["nodeSelector", "affinity", "terminationGracePeriodSeconds"] {
                        assert_eq!(pod["spec"][field], expected["spec"][field], "{at}: {field}");
                    }
                    assert_eq!(
                        pod["spec"]["containers"][0]["resources"]["limits"], expected["spec"]["containers"][0]["resources"]["limits"],
                        "{at}: GPU limits"
                    );
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 5, "only {compared} stages compared");
}
