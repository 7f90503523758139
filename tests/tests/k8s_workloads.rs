//! The workload templates of plan stages: every stage of every example has one, shaped as the
//! policy says, accepted by its team's admission rules as written, listed in its plan's
//! WorkflowTemplate in the plan's order, and scored like `placid score` scores it: the
//! stage's score, through its Wasm plugin, gives a finite score on a node that fits.
//! Their bytes are in the golden files (tests/golden/*/kubernetes/workloads/).

mod k8s_support;

use std::collections::BTreeSet;

use k8s_support::{Emitted, emitted, kubernetes_examples, of_kind, parsed, strings};
use placid_lang::expr::JobParam;
use placid_lang::model::{Locality, Preemption};
use placid_scoring::kube::{KubePod, pod_params};
use placid_scoring::{Codes, inventory_rows};
use placid_tests::{build_clean, checked};
use serde_json::Value;

/// The Job and its pod template of a Job or JobSet template.
fn job_and_pod(workload: &Emitted) -> (&Value, &Value) {
    let job = match workload.kind() {
        "Job" => &workload.object["spec"],
        "JobSet" => &workload.object["spec"]["replicatedJobs"][0]["template"]["spec"],
        other => panic!("{}: unexpected kind {other}", workload.path),
    };
    (job, &job["template"])
}

fn templates(objects: &[Emitted]) -> Vec<&Emitted> {
    objects.iter().filter(|object| object.path.starts_with("kubernetes/workloads/")).collect()
}

#[test]
fn every_plan_stage_has_a_template_shaped_as_the_policy_says() {
    let mut checked = 0;
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let templates = templates(&objects);
        for plan in &model.plans {
            for stage in &plan.stages {
                let name = format!("{}-{}", plan.name, stage.name).to_ascii_lowercase();
                let workload = templates
                    .iter()
                    .find(|object| object.name() == name)
                    .unwrap_or_else(|| panic!("{example}: no workload template {name}"));
                let tier = model.tier(stage.tier.value);
                let tier_name = tier.name.as_str().to_ascii_lowercase();
                let labels = &workload.object["metadata"]["labels"];
                assert_eq!(labels["kueue.x-k8s.io/queue-name"], tier_name.as_str(), "{}", workload.path);
                assert_eq!(labels["kueue.x-k8s.io/priority-class"], tier_name.as_str(), "{}", workload.path);
                let (job, pod) = job_and_pod(workload);
                let pods = job["parallelism"].as_u64().unwrap_or(0);
                assert_eq!(workload.kind() == "JobSet", pods > 1, "{}: a multi-node gang is a JobSet", workload.path);
                let gpus: u64 = pod["spec"]["containers"][0]["resources"]["limits"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(key, _)| key.starts_with("nvidia.com/"))
                    .map(|(_, value)| value.as_str().and_then(|text| text.parse::<u64>().ok()).unwrap_or(0))
                    .sum();
                assert!(gpus * pods >= u64::from(stage.gpus.value), "{}: {pods} pods of {gpus} GPUs < {}", workload.path, stage.gpus.value);
                let class = stage.class.as_ref().map(|class| model.class(class.value));
                if let Some(profile) = class.and_then(|class| class.mig.as_ref()) {
                    let key = format!("nvidia.com/mig-{}", profile.value);
                    assert!(pod["spec"]["containers"][0]["resources"]["limits"].get(&key).is_some(), "{}: no {key}", workload.path);
                }
                let grace = pod["spec"]["terminationGracePeriodSeconds"].as_u64();
                match tier.preemption.value {
                    Preemption::Window { window, .. } => assert_eq!(grace, Some(window.seconds), "{}", workload.path),
                    Preemption::Never => assert_eq!(grace, None, "{}", workload.path),
                }
                assert_eq!(job["activeDeadlineSeconds"].as_u64(), Some(stage.run_time_limit(tier).seconds), "{}", workload.path);
                let env: BTreeSet<&str> =
                    pod["spec"]["containers"][0]["env"].as_array().into_iter().flatten().filter_map(|var| var["name"].as_str()).collect();
                assert_eq!(env.contains("PLACID_CHECKPOINT_EVERY"), tier.checkpoint.is_some(), "{}", workload.path);
                let annotations = &pod["metadata"]["annotations"];
                if let Some(class) = class
                    && matches!(class.locality, Locality::Node | Locality::NvlinkDomain | Locality::Rack)
                {
                    assert!(annotations["kueue.x-k8s.io/podset-required-topology"].is_string(), "{}: no TAS annotation", workload.path);
                }
                for key in ["team", "tier", "stage", "plan"] {
                    assert!(
                        pod["metadata"]["labels"][format!("placid.dev/{key}")].is_string() || example != "cluster",
                        "{}",
                        workload.path
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 6, "the cluster example alone has six stages; checked {checked}");
}

/// Every stage's pod runs what the stage declares, its class's defaults under it
/// ([`placid_lang::model::Model::launch`]): image, command, working directory, variables and
/// CPU and memory requests, in the template and in the plan's WorkflowTemplate step alike.
#[test]
fn every_pod_runs_the_command_image_and_environment_its_stage_declares() {
    let mut checked = 0;
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        for plan in &model.plans {
            let workflow = of_kind(&objects, "WorkflowTemplate")
                .into_iter()
                .find(|object| object.name() == plan.name.as_str().to_ascii_lowercase())
                .unwrap_or_else(|| panic!("{example}: no WorkflowTemplate {}", plan.name));
            for stage in &plan.stages {
                let launch = model.launch(stage);
                let name = format!("{}-{}", plan.name, stage.name).to_ascii_lowercase();
                let workload = templates(&objects).into_iter().find(|object| object.name() == name).expect("a template");
                let step = workflow.object["spec"]["templates"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|template| template["name"] == stage.name.as_str().to_ascii_lowercase())
                    .and_then(|step| step["resource"]["manifest"].as_str())
                    .map(|manifest| serde_yaml::from_str::<Value>(manifest).expect("the step's manifest"))
                    .expect("a step per stage");
                for (what, object) in [("template", &workload.object), ("workflow step", &step)] {
                    let container = &pod_spec(object)["containers"][0];
                    let here = format!("{example}: {name}'s {what}");
                    let image = launch.image.as_ref().map(|image| Value::from(image.value.as_str()));
                    assert_eq!(container.get("image"), image.as_ref(), "{here}");
                    let command = launch.command.as_ref().map(|command| Value::from(command.value.clone()));
                    assert_eq!(container.get("command"), command.as_ref(), "{here}");
                    let workdir = launch.workdir.as_ref().map(|workdir| Value::from(workdir.value.as_str()));
                    assert_eq!(container.get("workingDir"), workdir.as_ref(), "{here}");
                    let env: Vec<(&str, &str)> = container["env"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|variable| Some((variable["name"].as_str()?, variable["value"].as_str()?)))
                        .collect();
                    for variable in &launch.env {
                        assert!(env.contains(&(variable.name.value.as_str(), variable.value.as_str())), "{here}: {env:?}");
                    }
                    assert!(env.iter().any(|(name, _)| *name == "PLACID_TRIAL"), "{here}: {env:?}");
                    let requests = &container["resources"]["requests"];
                    assert_eq!(requests["cpu"].as_str(), launch.cpus.as_ref().map(|cpus| cpus.value.to_string()).as_deref(), "{here}");
                    assert_eq!(requests["memory"].is_string(), launch.memory.is_some(), "{here}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 6, "checked {checked}");
}

#[test]
fn a_template_asks_for_exactly_the_cells_of_its_pool() {
    // The JobSet of vit-train's train stage (pool nvl-b) may use cell nvl-b only; prep
    // (pool x86-spot) x86-spot only; asr-sweep's sweep (pool mixed) all three cells of mixed,
    // cheapest first.
    let objects = emitted("cluster");
    let cells = |name: &str| -> Vec<String> {
        let workload = templates(&objects).into_iter().find(|object| object.name() == name).unwrap_or_else(|| panic!("no {name}"));
        let (_, pod) = job_and_pod(workload);
        let expression = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchExpressions"][0];
        assert_eq!(expression["key"], "placid.dev/cell");
        expression["values"].as_array().into_iter().flatten().filter_map(|value| value.as_str().map(str::to_owned)).collect()
    };
    assert_eq!(cells("vit-train-train"), ["nvl-b"]);
    assert_eq!(cells("vit-train-prep"), ["x86-spot"]);
    assert_eq!(cells("asr-sweep-sweep"), ["x86-spot", "x86-on-demand", "nvl-b"]);
}

#[test]
fn each_plan_is_a_workflow_template_whose_dag_follows_the_stage_order() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        for plan in &model.plans {
            let name = plan.name.as_str().to_ascii_lowercase();
            let workflow = of_kind(&objects, "WorkflowTemplate")
                .into_iter()
                .find(|object| object.name() == name)
                .unwrap_or_else(|| panic!("{example}: no WorkflowTemplate {name}"));
            let spec = &workflow.object["spec"];
            let dag = spec["templates"].as_array().into_iter().flatten().find(|template| template["name"] == spec["entrypoint"]);
            let tasks = dag.and_then(|dag| dag["dag"]["tasks"].as_array()).unwrap_or_else(|| panic!("{}: no DAG", workflow.path));
            let promotions = plan.stages.iter().filter(|stage| stage.promote.is_some()).count();
            assert_eq!(tasks.len(), plan.stages.len() + promotions, "{}: a task per stage and per promotion", workflow.path);
            let stage_tasks = tasks.iter().filter(|task| !task["name"].as_str().unwrap_or_default().starts_with("promote-"));
            for (stage, task) in plan.stages.iter().zip(stage_tasks) {
                let dependencies: BTreeSet<String> =
                    task["dependencies"].as_array().into_iter().flatten().filter_map(|value| value.as_str().map(str::to_owned)).collect();
                // A stage after a promoting one waits for its ranking and runs its winners.
                let after: BTreeSet<String> = stage
                    .after
                    .iter()
                    .map(|after| &plan.stages[after.value])
                    .map(|after| {
                        let name = after.name.as_str().to_ascii_lowercase();
                        if after.promote.is_some() { format!("promote-{name}") } else { name }
                    })
                    .collect();
                assert_eq!(dependencies, after, "{}: task {}", workflow.path, task["name"]);
                let fed = stage.after.iter().find(|after| plan.stages[after.value].promote.is_some());
                match fed {
                    Some(after) => {
                        let ranking = format!("promote-{}", plan.stages[after.value].name.as_str().to_ascii_lowercase());
                        assert_eq!(task["withParam"], format!("{{{{tasks.{ranking}.outputs.result}}}}").as_str(), "{}", workflow.path);
                        // Only the stage's own trials of the winners run.
                        assert_eq!(task["when"], format!("{{{{item.trial}}}} < {}", stage.trials).as_str(), "{}", workflow.path);
                        assert!(tasks.iter().any(|task| task["name"] == ranking.as_str() && task["depends"].is_string()));
                    }
                    None => {
                        let count = task["withSequence"]["count"].as_str().map_or(1, |count| count.parse().unwrap_or(0));
                        assert_eq!(count, stage.trials.max(1), "{}: task {} trials", workflow.path, task["name"]);
                    }
                }
                let step = spec["templates"].as_array().into_iter().flatten().find(|template| template["name"] == task["template"]);
                let manifest = step.and_then(|step| step["resource"]["manifest"].as_str()).unwrap_or_default();
                let mut created: Value =
                    serde_yaml::from_str(manifest).unwrap_or_else(|error| panic!("{}: manifest: {error}", workflow.path));
                if stage.promote.is_some() || fed.is_some() {
                    let wiring = without_results(&mut created);
                    assert!(wiring, "{}: stage {} has no results volume", workflow.path, stage.name);
                }
                assert_eq!(
                    trial_of(&mut created).as_deref(),
                    Some("{{inputs.parameters.trial}}"),
                    "{}: stage {}'s pods know their trial",
                    workflow.path,
                    stage.name
                );
                let template_name = format!("{}-{}", plan.name, stage.name).to_ascii_lowercase();
                let standalone = templates(&objects).into_iter().find(|object| object.name() == template_name).map(|object| &object.object);
                assert_eq!(
                    standalone.map(|object| &object["spec"]),
                    Some(&created["spec"]),
                    "{}: step differs from the template",
                    workflow.path
                );
            }
        }
    }
}

/// The pod spec of a Job or JobSet object.
fn pod_spec(workload: &Value) -> &Value {
    match workload["kind"].as_str() {
        Some("JobSet") => &workload["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"],
        _ => &workload["spec"]["template"]["spec"],
    }
}

/// [`pod_spec`], to change.
fn pod_spec_mut(workload: &mut Value) -> &mut Value {
    match workload["kind"].as_str() {
        Some("JobSet") => &mut workload["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"],
        _ => &mut workload["spec"]["template"]["spec"],
    }
}

/// The `PLACID_TRIAL` of a workload's pods, set back to the template's `0`.
fn trial_of(workload: &mut Value) -> Option<String> {
    let pod = pod_spec_mut(workload);
    let variable = pod["containers"][0]["env"].as_array_mut()?.iter_mut().find(|variable| variable["name"] == "PLACID_TRIAL")?;
    let trial = variable["value"].as_str().map(str::to_owned);
    variable["value"] = Value::from("0");
    trial
}

/// Removes what a workflow adds to a promoting or promoted stage's pods (the results volume,
/// its mount, the directory it creates and the `PLACID_RESULT*`/`PLACID_PROMOTED_TRIAL`
/// variables), saying whether the volume was there.
fn without_results(workload: &mut Value) -> bool {
    let pod = pod_spec_mut(workload);
    let Some(pod) = pod.as_object_mut() else { return false };
    let had = pod.remove("volumes").is_some();
    pod.remove("initContainers");
    for container in pod.get_mut("containers").and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(container) = container.as_object_mut() else { continue };
        container.remove("volumeMounts");
        if let Some(env) = container.get_mut("env").and_then(Value::as_array_mut) {
            env.retain(|var| {
                !var["name"].as_str().is_some_and(|name| name.starts_with("PLACID_RESULT") || name == "PLACID_PROMOTED_TRIAL")
            });
            if env.is_empty() {
                container.remove("env");
            }
        }
    }
    had
}

#[test]
fn the_promotion_step_ranks_the_trials_results_files_and_prints_the_winners() {
    let objects = emitted("cluster");
    let workflow = of_kind(&objects, "WorkflowTemplate").into_iter().find(|object| object.name() == "asr-sweep").expect("asr-sweep");
    let step = workflow.object["spec"]["templates"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|template| template["name"] == "promote-sweep")
        .expect("the ranking step");
    let source = step["script"]["source"].as_str().expect("a script");
    let mount = step["script"]["volumeMounts"][0]["mountPath"].as_str().expect("the results volume");
    // The policy: top 4 by val-wer, lowest first. Trial 7 reports no val-wer, the file
    // `1;x` is no trial's, and 5 and 3 tie (the lower trial first).
    let results = tempfile::tempdir().expect("temp dir");
    let trials = results.path().join("sweep");
    std::fs::create_dir_all(&trials).expect("mkdir");
    for (trial, text) in [
        ("0", "val-wer 0.31\n"),
        ("3", "val-wer 0.12\n"),
        ("5", "loss 9\nval-wer 0.12\n"),
        ("7", "loss 0.01\n"),
        ("9", "val-wer 0.2\n"),
        ("11", "val-wer 0.5\n"),
        ("1;x", "val-wer 0.0\n"),
    ] {
        std::fs::write(trials.join(format!("{trial}.result")), text).expect("write");
    }
    let script = source.replace(&format!("results={mount}\n"), &format!("results='{}'\n", results.path().display()));
    assert_ne!(script, source, "the script sets its results directory");
    let output = std::process::Command::new("sh").arg("-c").arg(&script).output().expect("sh");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let winners: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("stdout is not a JSON list: {error}"));
    // Winner i is the later stages' trial i, as on Slurm.
    let expected = [("0", "3"), ("1", "5"), ("2", "9"), ("3", "0")];
    let got: Vec<(&str, &str)> = winners
        .iter()
        .map(|winner| (winner["trial"].as_str().unwrap_or_default(), winner["promoted"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(got, expected);
    // No trial reported: the step fails, so the stages after it do not run.
    for entry in std::fs::read_dir(&trials).expect("read").flatten() {
        std::fs::remove_file(entry.path()).expect("rm");
    }
    let output = std::process::Command::new("sh").arg("-c").arg(&script).output().expect("sh");
    assert!(!output.status.success());
}

#[test]
fn the_score_of_a_stage_gives_its_template_pod_a_finite_score_on_a_fitting_node() {
    // vit-train's train stage uses score cost-aware in pool nvl-b: its pod, as the extender
    // reads it (labels and GPU limits), scored against the inventory like `placid score`.
    let objects = emitted("cluster");
    let workload =
        templates(&objects).into_iter().find(|object| object.name() == "vit-train-train").unwrap_or_else(|| panic!("no template"));
    let (_, pod) = job_and_pod(workload);
    let pod: KubePod =
        serde_json::from_value(pod.clone()).unwrap_or_else(|error| panic!("the pod does not parse as the extender reads it: {error}"));
    let model = build_clean("cluster").model;
    let loaded = placid_scoring::load(model, Some("cost-aware")).unwrap_or_else(|_| panic!("cost-aware does not load"));
    let meta = loaded.plugin.meta();
    let mut codes = Codes::default();
    let params = pod_params(&meta.params, &pod, &mut codes);
    // Where the job's other pods run (rack, NVLink domain) is unknown before it starts; every
    // other parameter the score reads comes from the template.
    for (field, value) in meta.params.iter().zip(&params) {
        let placed = matches!(field.name, JobParam::Rack | JobParam::NvlinkDomain);
        assert!(placed || !value.is_nan(), "the template leaves job.{} missing", field.name.name());
    }
    let rows = inventory_rows(&loaded.model, &loaded.plugin, &mut codes);
    let scores = loaded.plugin.worker().and_then(|mut worker| worker.score(&params, &rows)).unwrap_or_else(|error| panic!("{error:?}"));
    let index = loaded.model.nodes.iter().position(|node| node.name.as_str() == "rv-b-01").unwrap_or_else(|| panic!("no rv-b-01"));
    let score = scores.scores[index];
    assert!(score.is_finite() && scores.failed[index] == 0, "rv-b-01 scores {score} (filters failed: {:b})", scores.failed[index]);
}

/// The `nvlink-domain` label the scoring plugins read from nodes says what the inventory says:
/// only a node of an NVLink domain carries it (a PCIe node's feature is missing, as
/// `placid score` has it), while every node carries every level of the Topology, a PCIe node
/// being its own NVLink domain there, so Kueue counts it in TAS capacity.
#[test]
fn only_nvlink_nodes_carry_a_domain_and_every_node_every_topology_level() {
    let mut pcie = 0;
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let marks = k8s_support::nfd_marks(&objects);
        let prefix = model.project.kubernetes.as_ref().map(|settings| settings.label_prefix.value.clone()).unwrap_or_default();
        let levels: Vec<String> = of_kind(&objects, "Topology")[0].object["spec"]["levels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|level| level["nodeLabel"].as_str())
            .filter(|label| *label != "kubernetes.io/hostname")
            .map(str::to_owned)
            .collect();
        for node in &model.nodes {
            let (labels, _) = &marks[node.name.as_str()];
            let domain = node.domain.map(|domain| model.domain(domain).name.as_str().to_ascii_lowercase());
            assert_eq!(labels.get(&format!("{prefix}/nvlink-domain")), domain.as_ref(), "{example}: node {}", node.name);
            pcie += usize::from(domain.is_none());
            for level in &levels {
                assert!(labels.contains_key(level), "{example}: node {} lacks Topology level {level}", node.name);
            }
        }
    }
    assert!(pcie > 0, "no example has a node outside an NVLink domain");
}

/// The `rack` label the scoring plugins read from nodes says what the inventory says: a node
/// in no rack carries none (its `node.rack` is missing, as `placid score` has it, and no made-up
/// value can equal a real rack's), while the Topology's rack level, on every node, holds the
/// node itself there, so Kueue counts it in TAS capacity.
#[test]
fn a_rackless_node_carries_the_rack_level_but_no_rack() {
    let mut model = build_clean("cluster").model.into_model();
    let node = model.nodes.iter_mut().find(|node| node.name.as_str() == "x86-04").expect("the cluster example has node x86-04");
    assert!(node.domain.is_none(), "x86-04 is a PCIe node");
    node.rack = None;
    let objects = parsed(placid_targets::k8s::emit(&checked(model.clone())).unwrap_or_else(|errors| panic!("does not emit: {errors:?}")));
    let marks = k8s_support::nfd_marks(&objects);
    let (rackless, _) = &marks["x86-04"];
    assert_eq!(rackless.get("placid.dev/rack"), None);
    assert_eq!(rackless.get("placid.dev/rack-level").map(String::as_str), Some("x86-04"));
    let (racked, _) = &marks["x86-03"];
    assert_eq!(racked.get("placid.dev/rack").map(String::as_str), Some("r3"));
    assert_eq!(racked.get("placid.dev/rack-level").map(String::as_str), Some("r3"));
}

/// Where the inventory names chassis, the Topology has a chassis level between NVLink domain
/// and node, and a `locality "chassis"` class's templates require it (the cluster example's
/// `eval` class, made chassis-local here).
#[test]
fn a_chassis_class_requires_the_topologys_chassis_level() {
    let mut model = build_clean("cluster").model.into_model();
    let eval = model.classes.iter_mut().find(|class| class.name.as_str() == "eval").expect("the cluster example has class eval");
    eval.locality = Locality::Chassis;
    let objects = parsed(placid_targets::k8s::emit(&checked(model.clone())).unwrap_or_else(|errors| panic!("does not emit: {errors:?}")));
    let topology = &of_kind(&objects, "Topology")[0].object;
    let levels: Vec<&str> =
        topology["spec"]["levels"].as_array().into_iter().flatten().filter_map(|level| level["nodeLabel"].as_str()).collect();
    assert_eq!(levels, ["placid.dev/rack-level", "placid.dev/nvlink-domain-level", "placid.dev/chassis", "kubernetes.io/hostname"]);
    let mut seen = 0;
    for plan in &model.plans {
        for stage in
            plan.stages.iter().filter(|stage| stage.class.as_ref().is_some_and(|class| model.class(class.value).name.as_str() == "eval"))
        {
            let name = format!("{}-{}", plan.name, stage.name).to_ascii_lowercase();
            let workload =
                templates(&objects).into_iter().find(|object| object.name() == name).unwrap_or_else(|| panic!("no template {name}"));
            let (_, pod) = job_and_pod(workload);
            assert_eq!(
                pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"], "placid.dev/chassis",
                "{}",
                workload.path
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "no stage of the cluster example uses class eval");
}

/// Whether a node with NFD `labels` meets one node-selector requirement (`In`, `Gt`).
fn meets(labels: &std::collections::BTreeMap<String, String>, requirement: &Value) -> bool {
    let value = labels.get(requirement["key"].as_str().unwrap_or_default());
    let values: Vec<&str> = requirement["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    match requirement["operator"].as_str() {
        Some("In") => value.is_some_and(|value| values.contains(&value.as_str())),
        Some("Gt") => match (value.and_then(|value| value.parse::<i64>().ok()), values.first().and_then(|bar| bar.parse::<i64>().ok())) {
            (Some(value), Some(bar)) => value > bar,
            _ => false,
        },
        other => panic!("unexpected operator {other:?}"),
    }
}

/// The number of stages of `model` whose class asks for lanes or bisection; panics where a
/// stage's template reaches other nodes than the pool's nodes with the class's lanes and
/// bisection (its node affinity and its node selector together).
fn check_nvlink_affinity(model: &placid_lang::model::Model, objects: &[Emitted]) -> usize {
    let marks = k8s_support::nfd_marks(objects);
    let mut restricted = 0;
    for plan in &model.plans {
        for stage in &plan.stages {
            let name = format!("{}-{}", plan.name, stage.name).to_ascii_lowercase();
            let workload = templates(objects).into_iter().find(|object| object.name() == name).expect("template");
            let (_, pod) = job_and_pod(workload);
            let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
            let requirements: Vec<&Value> = terms[0]["matchExpressions"].as_array().into_iter().flatten().collect();
            let reached: BTreeSet<&str> = marks
                .iter()
                .filter(|(_, (labels, _))| requirements.iter().all(|requirement| meets(labels, requirement)))
                .filter(|(_, (labels, _))| strings(&pod["spec"]["nodeSelector"]).iter().all(|(key, value)| labels.get(key) == Some(value)))
                .map(|(node, _)| node.as_str())
                .collect();
            let class = stage.class.as_ref().map(|class| model.class(class.value));
            let lanes = class.and_then(|class| class.lanes.as_ref()).map(|lanes| lanes.value);
            let bisection = class.and_then(|class| class.min_bisection.as_ref()).map(|bisection| bisection.value);
            restricted += usize::from(lanes.is_some() || bisection.is_some());
            let expected: BTreeSet<&str> = model
                .pool(stage.pool.value)
                .nodes
                .iter()
                .map(|node| model.node(*node))
                .filter(|node| stage.capacity.is_none_or(|kind| node.capacity == kind))
                .filter(|node| lanes.is_none_or(|lanes| node.nvlink_lanes().is_some_and(|offered| offered >= lanes)))
                .filter(|node| bisection.is_none_or(|bar| node.domain.is_some_and(|domain| model.domain_bisection(domain) >= bar)))
                .map(|node| node.name.as_str())
                .collect();
            assert_eq!(reached, expected, "{}: the nodes its affinity reaches", workload.path);
        }
    }
    restricted
}

#[test]
fn a_template_reaches_exactly_the_pool_nodes_with_the_class_lanes_and_bisection() {
    let mut restricted = 0;
    for example in kubernetes_examples() {
        restricted += check_nvlink_affinity(&build_clean(&example).model, &emitted(&example));
    }
    assert!(restricted > 0, "no example stage asks for lanes or bisection");
    // Every node of the examples offers the lanes they ask for: thin the links of one node of
    // each NVLink domain, double the bandwidth of the first domain, and ask for a bisection
    // only it has, so that both requirements leave nodes out. The policy tests expect
    // placements on the unchanged inventory.
    let mut model = build_clean("cluster").model.into_model();
    let domains: Vec<placid_lang::model::DomainId> = (0..model.domains.len()).map(placid_lang::model::DomainId::from_index).collect();
    for (position, domain) in domains.iter().enumerate() {
        let last = *model.domain(*domain).nodes.last().expect("a domain has nodes");
        for gpu in &mut model.nodes[last.index()].gpus {
            for link in &mut gpu.links {
                link.links = 4;
            }
        }
        if position == 0 {
            for node in model.domain(*domain).nodes.clone() {
                for gpu in &mut model.nodes[node.index()].gpus {
                    for link in &mut gpu.links {
                        link.bandwidth.bits_per_second *= 2;
                    }
                }
            }
        }
    }
    let strongest = domains.iter().map(|domain| model.domain_bisection(*domain)).max().expect("domains");
    let class = model.classes.iter_mut().find(|class| class.lanes.is_some()).expect("a class with lanes");
    class.min_bisection = Some(placid_lang::span::Spanned::new(strongest, class.span));
    model.tests.clear();
    // A stage of that class in another domain's pool can now never be placed, which the checker
    // reports (E100): keep the plans whose stages of the class run where the first domain is.
    let first = model.domain(domains[0]).nodes.clone();
    let runs_in_first = |stage: &placid_lang::model::Stage| {
        let asks = stage.class.as_ref().is_some_and(|class| model.class(class.value).min_bisection.is_some());
        !asks || model.pool(stage.pool.value).nodes.iter().any(|node| first.contains(node))
    };
    let keep: Vec<bool> = model.plans.iter().map(|plan| plan.stages.iter().all(runs_in_first)).collect();
    let mut kept = keep.into_iter();
    model.plans.retain(|_| kept.next().unwrap_or(false));
    let changed = checked(model);
    let objects = parsed(placid_targets::k8s::emit(&changed).expect("emits"));
    assert!(check_nvlink_affinity(&changed, &objects) > 0);
}
