//! A closed build: every reference one emitted Kubernetes artifact makes is provided by
//! another artifact of the same build, or is one of the documented external defaults this
//! file names (docs/targets/kubernetes.md, "Deploying"). Each artifact validating alone
//! (k8s_schema.rs) says nothing of whether a pod's `schedulerName` names a scheduler that
//! runs, whether the rules read the labels the pods carry, whether a ConfigMap reaches the
//! program that reads it, or whether a route does more than validate; these checks do.
//!
//! Over every example and over generated projects: another label prefix, tier names that
//! map (`Silver_A` is `silver-a` on Kubernetes), a class without an image whose stage names
//! its own, and an extender that reads telemetry with a throttling rule.

mod k8s_support;

use std::collections::{BTreeMap, BTreeSet};

use k8s_support::{Emitted, Project, example_projects, generated_projects, strings};
use placid_lang::model::Model;
use serde_json::Value;

/// The namespace and ConfigMap Kueue's controller reads its `Configuration` from at start-up,
/// and the key it reads (Kueue's install, `config/components/manager`).
const KUEUE_NAMESPACE: &str = "kueue-system";
const KUEUE_CONFIG_MAP: &str = "kueue-manager-config";
const KUEUE_CONFIG_KEY: &str = "controller_manager_config.yaml";
/// The default scheduler, which every cluster runs.
const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// A pod template found in the build: where, its labels, and its spec.
struct PodTemplate {
    at: String,
    labels: BTreeMap<String, String>,
    spec: Value,
    /// Whether it is one of a plan's workloads (Jobs and JobSets, alone or in a workflow).
    workload: bool,
    /// The claims that exist when it runs: those its workflow creates (Argo names the claim of
    /// `volumeClaimTemplates` entry `results` `{{workflow.name}}-results`).
    claims: BTreeSet<String>,
}

/// The pod templates of a Job or JobSet (`at` says where it was found).
fn job_pods(at: &str, object: &Value, claims: &BTreeSet<String>, into: &mut Vec<PodTemplate>) {
    let jobs: Vec<&Value> = match object["kind"].as_str() {
        Some("Job") => vec![&object["spec"]],
        Some("JobSet") => object["spec"]["replicatedJobs"].as_array().into_iter().flatten().map(|job| &job["template"]["spec"]).collect(),
        _ => Vec::new(),
    };
    for job in jobs {
        let template = &job["template"];
        into.push(PodTemplate {
            at: at.to_owned(),
            labels: strings(&template["metadata"]["labels"]),
            spec: template["spec"].clone(),
            workload: true,
            claims: claims.clone(),
        });
    }
}

/// Every pod template of the build: workloads (alone and embedded in WorkflowTemplates, whose
/// manifests are strings the API server never sees until the workflow runs), the workflows'
/// own steps, Deployments and Rollouts.
fn pod_templates(objects: &[Emitted]) -> Vec<PodTemplate> {
    let mut pods = Vec::new();
    for object in objects {
        match object.kind() {
            "Job" | "JobSet" => job_pods(&object.path, &object.object, &BTreeSet::new(), &mut pods),
            "WorkflowTemplate" => {
                let claims: BTreeSet<String> = object.object["spec"]["volumeClaimTemplates"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|claim| claim["metadata"]["name"].as_str())
                    .map(|name| format!("{{{{workflow.name}}}}-{name}"))
                    .collect();
                for template in object.object["spec"]["templates"].as_array().into_iter().flatten() {
                    let at = format!("{} template {}", object.path, template["name"]);
                    if let Some(manifest) = template["resource"]["manifest"].as_str() {
                        let embedded: Value =
                            serde_yaml::from_str(manifest).unwrap_or_else(|error| panic!("{at}: manifest is not YAML: {error}"));
                        job_pods(&at, &embedded, &claims, &mut pods);
                    }
                    for step in ["script", "container"] {
                        if template[step].is_object() {
                            let spec = serde_json::json!({ "containers": [template[step].clone()] });
                            pods.push(PodTemplate {
                                at: at.clone(),
                                labels: BTreeMap::new(),
                                spec,
                                workload: false,
                                claims: claims.clone(),
                            });
                        }
                    }
                }
            }
            "Deployment" | "Rollout" => {
                let template = &object.object["spec"]["template"];
                pods.push(PodTemplate {
                    at: object.path.clone(),
                    labels: strings(&template["metadata"]["labels"]),
                    spec: template["spec"].clone(),
                    workload: false,
                    claims: BTreeSet::new(),
                });
            }
            _ => {}
        }
    }
    pods
}

fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers"].into_iter().flat_map(|key| spec[key].as_array().into_iter().flatten())
}

fn find<'a>(objects: &'a [Emitted], kind: &str, namespace: Option<&str>, name: &str) -> Option<&'a Emitted> {
    objects.iter().find(|object| object.kind() == kind && object.namespace() == namespace && object.name() == name)
}

/// The label prefix the policy declares, read from the model (not through placid's spelling).
fn prefix(model: &Model) -> String {
    model.project.kubernetes.as_ref().map(|settings| settings.label_prefix.value.clone()).expect("a Kubernetes target")
}

/// Images: every container of every pod template names one; the API server refuses a pod
/// without, and a WorkflowTemplate's embedded Job is not checked until its workflow runs.
fn images(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    for pod in pods {
        for container in containers(&pod.spec) {
            if container["image"].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{}: {}: container {} has no image", project.name, pod.at, container["name"]));
            }
        }
    }
}

/// The schedulers the build runs: each Deployment that mounts a ConfigMap holding a
/// `KubeSchedulerConfiguration` and passes it with `--config`, by profile name; with its
/// ServiceAccount, RBAC and a lease of its own.
fn running_schedulers(project: &Project, problems: &mut Vec<String>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for deployment in project.objects.iter().filter(|object| object.kind() == "Deployment") {
        let spec = &deployment.object["spec"]["template"]["spec"];
        for volume in spec["volumes"].as_array().into_iter().flatten() {
            let Some(config_map) = volume["configMap"]["name"].as_str() else { continue };
            let Some(config_map) = find(&project.objects, "ConfigMap", deployment.namespace(), config_map) else { continue };
            for container in containers(spec) {
                let args: Vec<&str> = container["command"]
                    .as_array()
                    .into_iter()
                    .chain(container["args"].as_array())
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                for mount in container["volumeMounts"].as_array().into_iter().flatten().filter(|mount| mount["name"] == volume["name"]) {
                    for (key, text) in strings(&config_map.object["data"]) {
                        let path = format!("{}/{key}", mount["mountPath"].as_str().unwrap_or_default());
                        if !args.iter().any(|arg| *arg == format!("--config={path}")) {
                            continue;
                        }
                        let config: Value =
                            serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{}: {key}: {error}", config_map.path));
                        if config["kind"] != "KubeSchedulerConfiguration" {
                            continue;
                        }
                        let lease = &config["leaderElection"];
                        if lease["leaderElect"] != true || lease["resourceName"].as_str().is_none_or(|name| name == "kube-scheduler") {
                            problems
                                .push(format!("{}: {}: the scheduler elects no leader of its own lease", project.name, deployment.path));
                        }
                        scheduler_rbac(project, deployment, problems);
                        names.extend(
                            config["profiles"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|profile| profile["schedulerName"].as_str())
                                .map(str::to_owned),
                        );
                    }
                }
            }
        }
    }
    names
}

/// A second kube-scheduler runs as a ServiceAccount of the build bound to Kubernetes' own
/// `system:kube-scheduler` and `system:volume-scheduler` roles (documented external defaults).
fn scheduler_rbac(project: &Project, deployment: &Emitted, problems: &mut Vec<String>) {
    let account = deployment.object["spec"]["template"]["spec"]["serviceAccountName"].as_str().unwrap_or("default");
    for role in ["system:kube-scheduler", "system:volume-scheduler"] {
        let bound = project.objects.iter().filter(|object| object.kind() == "ClusterRoleBinding").any(|binding| {
            binding.object["roleRef"]["name"] == role
                && binding.object["subjects"].as_array().into_iter().flatten().any(|subject| {
                    subject["kind"] == "ServiceAccount"
                        && subject["name"] == account
                        && subject["namespace"].as_str() == deployment.namespace()
                })
        });
        if !bound {
            problems.push(format!("{}: {}: ServiceAccount {account} is not bound to {role}", project.name, deployment.path));
        }
    }
}

/// Scheduler names: every pod's `schedulerName` is the default scheduler or a profile of a
/// scheduler the build runs.
fn schedulers(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    let running = running_schedulers(project, problems);
    for pod in pods {
        let Some(name) = pod.spec["schedulerName"].as_str() else { continue };
        if name != DEFAULT_SCHEDULER && !running.contains(name) {
            problems.push(format!(
                "{}: {}: schedulerName {name} is no running scheduler's profile (running: {running:?})",
                project.name, pod.at
            ));
        }
    }
}

/// Accounts, Services and volumes: a Deployment's ServiceAccount is in the build; a Service
/// selects a Deployment's pods; a pod's ConfigMap volume is in the build; a pod's claim is a
/// claim its workflow creates (of the cluster's default StorageClass, which must offer
/// ReadWriteMany: a documented external default).
fn references(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    for deployment in project.objects.iter().filter(|object| object.kind() == "Deployment") {
        let spec = &deployment.object["spec"]["template"]["spec"];
        if let Some(account) = spec["serviceAccountName"].as_str()
            && find(&project.objects, "ServiceAccount", deployment.namespace(), account).is_none()
        {
            problems.push(format!("{}: {}: ServiceAccount {account} is not in the build", project.name, deployment.path));
        }
        for volume in spec["volumes"].as_array().into_iter().flatten() {
            if let Some(name) = volume["configMap"]["name"].as_str()
                && find(&project.objects, "ConfigMap", deployment.namespace(), name).is_none()
            {
                problems.push(format!("{}: {}: ConfigMap {name} is not in the build", project.name, deployment.path));
            }
        }
    }
    for service in project.objects.iter().filter(|object| object.kind() == "Service") {
        let selector = strings(&service.object["spec"]["selector"]);
        let selects =
            project.objects.iter().filter(|object| object.kind() == "Deployment" && object.namespace() == service.namespace()).any(
                |deployment| {
                    let labels = strings(&deployment.object["spec"]["template"]["metadata"]["labels"]);
                    selector.iter().all(|(key, value)| labels.get(key) == Some(value))
                },
            );
        if !selects {
            problems.push(format!("{}: {}: the Service selects no Deployment's pods", project.name, service.path));
        }
    }
    for pod in pods {
        for volume in pod.spec["volumes"].as_array().into_iter().flatten() {
            let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() else { continue };
            let claimed = pod.claims.contains(claim)
                || find(&project.objects, "PersistentVolumeClaim", pod.spec["namespace"].as_str(), claim).is_some();
            if !claimed {
                problems
                    .push(format!("{}: {}: the pods mount the claim {claim}, which nothing in the build creates", project.name, pod.at));
            }
        }
    }
}

/// The extender's URL in the scheduler configuration is a Service of the build on that port.
fn extender_url(project: &Project, problems: &mut Vec<String>) {
    for config_map in project.objects.iter().filter(|object| object.kind() == "ConfigMap") {
        for (key, text) in strings(&config_map.object["data"]) {
            let Ok(config) = serde_yaml::from_str::<Value>(&text) else { continue };
            if config["kind"] != "KubeSchedulerConfiguration" {
                continue;
            }
            for extender in config["extenders"].as_array().into_iter().flatten() {
                let url = extender["urlPrefix"].as_str().unwrap_or_default();
                let host_port = url.trim_start_matches("http://");
                let (host, port) = host_port.split_once(':').unwrap_or((host_port, "80"));
                let mut parts = host.split('.');
                let (service, namespace) = (parts.next().unwrap_or_default(), parts.next());
                let found = find(&project.objects, "Service", namespace, service).is_some_and(|service| {
                    service.object["spec"]["ports"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|each| port.parse::<u64>().ok() == each["port"].as_u64())
                });
                if !found {
                    problems.push(format!("{}: {}: {key}: the extender {url} is no Service of the build", project.name, config_map.path));
                }
            }
        }
    }
}

/// ConfigMaps reach their readers: each is mounted by a Deployment of the build, or is one
/// that a documented external reader reads where it is (Kueue's own configuration, the Argo
/// CD plugin's, Grafana's sidecar's dashboards).
fn config_maps(project: &Project, problems: &mut Vec<String>) {
    let argo_namespace =
        project.model.project.kubernetes.as_ref().and_then(|settings| settings.argo.as_ref()).map(|argo| argo.namespace.to_string());
    for config_map in project.objects.iter().filter(|object| object.kind() == "ConfigMap") {
        let mounted =
            project.objects.iter().filter(|object| object.kind() == "Deployment" && object.namespace() == config_map.namespace()).any(
                |deployment| {
                    deployment.object["spec"]["template"]["spec"]["volumes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|volume| volume["configMap"]["name"] == config_map.name())
                },
            );
        let kueue = config_map.namespace() == Some(KUEUE_NAMESPACE) && config_map.name() == KUEUE_CONFIG_MAP;
        let argo = config_map.namespace().map(str::to_owned) == argo_namespace && config_map.object["data"]["plugin.yaml"].is_string();
        let grafana = config_map.object["metadata"]["labels"]["grafana_dashboard"].is_string();
        if !(mounted || kueue || argo || grafana) {
            problems.push(format!("{}: {}: no program reads this ConfigMap", project.name, config_map.path));
        }
        if kueue {
            let text = config_map.object["data"][KUEUE_CONFIG_KEY].as_str().unwrap_or_default();
            let config: Value = serde_yaml::from_str(text).unwrap_or(Value::Null);
            if !config["fairSharing"].is_object() {
                problems.push(format!("{}: {}: Kueue's configuration turns no fair sharing on", project.name, config_map.path));
            }
        }
    }
    let cohorts = project.objects.iter().any(|object| object.kind() == "ClusterQueue" && object.object["spec"]["fairSharing"].is_object());
    if cohorts && find(&project.objects, "ConfigMap", Some(KUEUE_NAMESPACE), KUEUE_CONFIG_MAP).is_none() {
        problems.push(format!("{}: the ClusterQueues' fair-sharing weights need fair sharing on in Kueue's {KUEUE_CONFIG_MAP}, which the build does not configure", project.name));
    }
}

/// Labels the workloads carry, by key, with every value seen.
fn workload_labels(pods: &[PodTemplate]) -> BTreeMap<String, BTreeSet<String>> {
    let mut labels: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for pod in pods.iter().filter(|pod| pod.workload) {
        for (key, value) in &pod.labels {
            labels.entry(key.clone()).or_default().insert(value.clone());
        }
    }
    labels
}

/// kube-state-metrics' name of pod label `key` (written here, not through placid's spelling).
fn kube_state_metrics_label(key: &str) -> String {
    format!("label_{}", key.replace(['.', '/', '-'], "_"))
}

/// The values a tier's and a team's pods carry: the tier's WorkloadPriorityClass, and the
/// team label of the team's namespace.
fn tier_and_team_values(project: &Project) -> [BTreeSet<String>; 2] {
    let team_key = format!("{}/team", prefix(&project.model));
    let tiers =
        project.objects.iter().filter(|object| object.kind() == "WorkloadPriorityClass").map(|class| class.name().to_owned()).collect();
    let teams = project
        .objects
        .iter()
        .filter(|object| object.kind() == "Namespace")
        .filter_map(|namespace| namespace.object["metadata"]["labels"][&team_key].as_str().map(str::to_owned))
        .collect();
    [tiers, teams]
}

/// Labels the rules and the dashboard read: each `label_*` of `kube_pod_labels` is a pod
/// label of the workloads, and each tier or team a static series names is the value that
/// tier's or team's pods carry (the rules join the two): that of its WorkloadPriorityClass
/// and namespace, which the workloads carry too.
fn rules(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    let labels = workload_labels(pods);
    let carried: BTreeSet<String> = labels.keys().map(|key| kube_state_metrics_label(key)).collect();
    let prefix = prefix(&project.model);
    let values = tier_and_team_values(project);
    for (name, known) in ["tier", "team"].iter().zip(&values) {
        for value in labels.get(&format!("{prefix}/{name}")).into_iter().flatten() {
            if !known.contains(value) {
                problems.push(format!("{}: pods carry {prefix}/{name}={value:?}, which is none of {known:?}", project.name));
            }
        }
    }
    let mut read = Vec::new();
    for rule_object in project.objects.iter().filter(|object| object.kind() == "PrometheusRule") {
        for group in rule_object.object["spec"]["groups"].as_array().into_iter().flatten() {
            for rule in group["rules"].as_array().into_iter().flatten() {
                read.push((rule_object.path.clone(), rule["expr"].as_str().unwrap_or_default().to_owned()));
                let static_labels = strings(&rule["labels"]);
                for (name, known) in ["tier", "team"].iter().zip(&values) {
                    let Some(value) = static_labels.get(*name) else { continue };
                    if !known.contains(value) {
                        problems.push(format!(
                            "{}: {}: rule {} labels {name}={value:?}, which no pod carries as {prefix}/{name} (they carry {known:?})",
                            project.name, rule_object.path, rule["record"]
                        ));
                    }
                }
            }
        }
    }
    for dashboard in project
        .objects
        .iter()
        .filter(|object| object.kind() == "ConfigMap" && object.object["metadata"]["labels"]["grafana_dashboard"].is_string())
    {
        for (_, text) in strings(&dashboard.object["data"]) {
            read.push((dashboard.path.clone(), text));
        }
    }
    for (at, text) in read {
        for token in text.split(|character: char| !(character.is_ascii_alphanumeric() || character == '_')) {
            if token.starts_with("label_") && !token.starts_with("label_replace") && !carried.contains(token) {
                problems.push(format!("{}: {at}: reads the pod label {token}, which no workload carries", project.name));
            }
        }
    }
}

/// The deployed extender's throttling rule reads the pod label the workloads set.
fn extender_labels(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    let labels = workload_labels(pods);
    for config_map in project.objects.iter().filter(|object| object.kind() == "ConfigMap") {
        let Some(text) = config_map.object["data"]["telemetry.json"].as_str() else { continue };
        let config: Value = serde_json::from_str(text).unwrap_or_else(|error| panic!("{}: {error}", config_map.path));
        if !config["throttle"].is_object() {
            continue;
        }
        match config["comm_label"].as_str() {
            Some(key) if labels.contains_key(key) => {}
            other => problems.push(format!(
                "{}: {}: the extender's throttle reads the pod label {other:?}, which no workload carries (they carry {:?})",
                project.name,
                config_map.path,
                labels.keys().collect::<Vec<_>>()
            )),
        }
    }
}

/// Kueue names: each workload's queue is a LocalQueue of its namespace, its priority a
/// WorkloadPriorityClass of the build.
fn kueue_names(project: &Project, problems: &mut Vec<String>) {
    let mut workloads: Vec<(String, Value)> = Vec::new();
    for object in &project.objects {
        match object.kind() {
            "Job" | "JobSet" => workloads.push((object.path.clone(), object.object.clone())),
            "WorkflowTemplate" => {
                for template in object.object["spec"]["templates"].as_array().into_iter().flatten() {
                    if let Some(manifest) = template["resource"]["manifest"].as_str() {
                        workloads.push((
                            format!("{} template {}", object.path, template["name"]),
                            serde_yaml::from_str(manifest).unwrap_or(Value::Null),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    for (at, workload) in workloads {
        let labels = strings(&workload["metadata"]["labels"]);
        let namespace = workload["metadata"]["namespace"].as_str();
        if let Some(queue) = labels.get("kueue.x-k8s.io/queue-name")
            && find(&project.objects, "LocalQueue", namespace, queue).is_none()
        {
            problems.push(format!("{}: {at}: queue {queue} is no LocalQueue of {namespace:?}", project.name));
        }
        if let Some(priority) = labels.get("kueue.x-k8s.io/priority-class")
            && find(&project.objects, "WorkloadPriorityClass", None, priority).is_none()
        {
            problems.push(format!("{}: {at}: priority {priority} is no WorkloadPriorityClass", project.name));
        }
    }
}

/// Routes map jobs: where a team's route policy lets a tag through to a tier, a mutating
/// policy of the same name, bound like it, sets that tier's labels (k8s_admission.rs runs it).
fn routes(project: &Project, problems: &mut Vec<String>) {
    for validating in
        project.objects.iter().filter(|object| object.kind() == "ValidatingAdmissionPolicy" && object.name().starts_with("placid-route-"))
    {
        let routed = validating.object["spec"]["validations"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|validation| validation["message"].as_str().is_some_and(|message| message.contains(" run at tier ")));
        if !routed {
            continue;
        }
        let mutating = find(&project.objects, "MutatingAdmissionPolicy", None, validating.name());
        let bound = project
            .objects
            .iter()
            .any(|binding| binding.kind() == "MutatingAdmissionPolicyBinding" && binding.object["spec"]["policyName"] == validating.name());
        if mutating.is_none() || !bound {
            problems.push(format!(
                "{}: {}: routed tags are only validated; nothing sets the routed tier's labels",
                project.name, validating.path
            ));
        }
    }
}

/// Node selectors: every workload's `nodeSelector` (a class's node label) is met by some node
/// the build's NodeFeatureRule labels, so no pod waits for a label nothing writes.
fn node_selectors(project: &Project, pods: &[PodTemplate], problems: &mut Vec<String>) {
    let marks = k8s_support::nfd_marks(&project.objects);
    for pod in pods.iter().filter(|pod| pod.workload) {
        let selector = strings(&pod.spec["nodeSelector"]);
        if !marks.values().any(|(labels, _)| selector.iter().all(|(key, value)| labels.get(key) == Some(value))) {
            problems.push(format!("{}: {}: no node carries the labels of its nodeSelector {selector:?}", project.name, pod.at));
        }
    }
}

fn closed(project: &Project) -> Vec<String> {
    let pods = pod_templates(&project.objects);
    let mut problems = Vec::new();
    images(project, &pods, &mut problems);
    schedulers(project, &pods, &mut problems);
    references(project, &pods, &mut problems);
    extender_url(project, &mut problems);
    config_maps(project, &mut problems);
    rules(project, &pods, &mut problems);
    extender_labels(project, &pods, &mut problems);
    kueue_names(project, &mut problems);
    routes(project, &mut problems);
    node_selectors(project, &pods, &mut problems);
    problems
}

fn assert_closed(projects: &[Project]) {
    assert!(!projects.is_empty());
    let problems: Vec<String> = projects.iter().flat_map(closed).collect();
    assert!(problems.is_empty(), "{} open references:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_example_builds_closed() {
    assert_closed(&example_projects());
}

#[test]
fn generated_projects_build_closed() {
    assert_closed(&generated_projects());
}
