//! Shared support of the `k8s_*` tests: the Kubernetes objects an example emits, parsed back
//! from the generated YAML files, and the tree written to a temp dir.

#![allow(dead_code)] // Each test file uses a different part of this module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use placid_lang::model::Model;
use placid_targets::Artifact;
use placid_tests::{build, build_clean, copy_tree, example};
use serde_json::Value;

/// One emitted object: the file it came from and its content as JSON.
pub struct Emitted {
    /// Path of the artifact (`kubernetes/kueue/clusterqueue.vision.yaml`).
    pub path: String,
    /// The object.
    pub object: Value,
}

impl Emitted {
    /// `kind`.
    pub fn kind(&self) -> &str {
        self.object["kind"].as_str().unwrap_or("")
    }
    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or("")
    }
    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.object["metadata"]["namespace"].as_str()
    }
}

/// Every Kubernetes object of example `name` (synced and bootstrap), in path order.
pub fn emitted(name: &str) -> Vec<Emitted> {
    parsed(build_clean(name).artifacts)
}

/// The Kubernetes objects among `artifacts`, parsed back from their YAML.
pub fn parsed(artifacts: Vec<Artifact>) -> Vec<Emitted> {
    artifacts
        .into_iter()
        .filter(|artifact| artifact.path.starts_with("kubernetes/") && !artifact.path.ends_with("kustomization.yaml"))
        .map(|artifact| {
            let text = String::from_utf8(artifact.bytes).unwrap_or_else(|_| panic!("{} is not UTF-8", artifact.path));
            let object: Value = serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{} is not YAML: {error}", artifact.path));
            Emitted { path: artifact.path, object }
        })
        .collect()
}

/// The examples that enable the Kubernetes target.
pub fn kubernetes_examples() -> Vec<String> {
    placid_tests::examples().into_iter().filter(|name| build_clean(name).model.project.kubernetes.is_some()).collect()
}

/// Writes every artifact of example `name` under `root`.
pub fn write_tree(name: &str, root: &Path) {
    placid_driver::output::write_atomically(root, &build_clean(name).artifacts)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", root.display()));
}

/// The objects of `kind`.
pub fn of_kind<'a>(objects: &'a [Emitted], kind: &str) -> Vec<&'a Emitted> {
    objects.iter().filter(|object| object.kind() == kind).collect()
}

/// The flavor quotas of a ClusterQueue, across its resource groups.
pub fn flavor_quotas(queue: &Emitted) -> impl Iterator<Item = &Value> {
    queue.object["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["flavors"].as_array().into_iter().flatten())
}

/// A string map (labels, nodeLabels) as key -> value.
pub fn strings(value: &Value) -> BTreeMap<String, String> {
    value.as_object().into_iter().flatten().map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned())).collect()
}

/// The labels (key -> value) and taints (key, value) NFD puts on one node.
pub type Marks = (BTreeMap<String, String>, BTreeSet<(String, String)>);

/// The labels and taints the NFD rules put on each node, by node name; panics on a rule that
/// matches nodes other than by exact name.
pub fn nfd_marks(objects: &[Emitted]) -> BTreeMap<String, Marks> {
    let mut marks: BTreeMap<String, Marks> = BTreeMap::new();
    for rule_object in of_kind(objects, "NodeFeatureRule") {
        for rule in rule_object.object["spec"]["rules"].as_array().into_iter().flatten() {
            let matchers = rule["matchFeatures"].as_array().cloned().unwrap_or_default();
            assert_eq!(matchers.len(), 1, "{}: rule {} must match by node name only", rule_object.path, rule["name"]);
            let matcher = &matchers[0];
            assert_eq!(matcher["feature"], "system.name");
            let expression = &matcher["matchExpressions"]["nodename"];
            assert_eq!(expression["op"], "In", "{}: rule {} must match an explicit node list", rule_object.path, rule["name"]);
            for node in expression["value"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                let entry = marks.entry(node.to_owned()).or_default();
                entry.0.extend(strings(&rule["labels"]));
                for taint in rule["taints"].as_array().into_iter().flatten() {
                    entry.1.insert((
                        taint["key"].as_str().unwrap_or_default().to_owned(),
                        taint["value"].as_str().unwrap_or_default().to_owned(),
                    ));
                }
            }
        }
    }
    marks
}

/// The nodes a ResourceFlavor can place pods on, by name: those whose NFD labels include the
/// flavor's `nodeLabels` and whose NFD taints the flavor's tolerations all tolerate.
pub fn flavor_nodes<'a>(flavor: &Emitted, marks: &'a BTreeMap<String, Marks>) -> BTreeSet<&'a str> {
    let selected = strings(&flavor.object["spec"]["nodeLabels"]);
    let tolerations: Vec<&Value> = flavor.object["spec"]["tolerations"].as_array().into_iter().flatten().collect();
    let tolerated = |(key, value): &(String, String)| {
        tolerations.iter().any(|toleration| {
            toleration["key"] == key.as_str() && (toleration["operator"] == "Exists" || toleration["value"] == value.as_str())
        })
    };
    marks
        .iter()
        .filter(|(_, (labels, taints))| selected.iter().all(|(key, value)| labels.get(key) == Some(value)) && taints.iter().all(tolerated))
        .map(|(node, _)| node.as_str())
        .collect()
}

/// A Kubernetes quantity as placid writes them (`12`, `4096Mi`, `0`), in CPUs, MiB or GPUs.
pub fn quantity(value: &Value) -> u64 {
    let text = value.as_str().unwrap_or_else(|| panic!("quantity {value} is not a string"));
    let digits = text.strip_suffix("Mi").unwrap_or(text);
    digits.parse().unwrap_or_else(|_| panic!("quantity {text} is not a whole number (of MiB)"))
}

/// One project's build: its name, its model and its Kubernetes objects.
pub struct Project {
    /// The example's name, or what the generated project changed.
    pub name: String,
    /// Its model.
    pub model: Model,
    /// Its Kubernetes objects.
    pub objects: Vec<Emitted>,
    /// Every artifact of its build.
    pub artifacts: Vec<Artifact>,
}

/// Every example with a Kubernetes target.
pub fn example_projects() -> Vec<Project> {
    kubernetes_examples()
        .into_iter()
        .map(|name| {
            let clean = build_clean(&name);
            Project { name, model: clean.model.into_model(), objects: parsed(clean.artifacts.clone()), artifacts: clean.artifacts }
        })
        .collect()
}

/// Replaces `from` by `to` in the file at `path`, which must contain it.
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
}

/// The cluster example for Kubernetes `version`, with label prefix `prefix`, its tiers renamed
/// to `tiers`, the eval class without an image (its stage names one), a route to the
/// model-parallel class, and the extender reading telemetry.
pub fn generated(version: &str, prefix: &str, tiers: [&str; 3]) -> Project {
    let dir = tempfile::tempdir().expect("a temp dir");
    copy_tree(&example("cluster"), dir.path(), &["broken", "traces"]);
    let policy = dir.path().join("policy");
    for entry in std::fs::read_dir(&policy).expect("the policy directory").filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).expect("a policy file");
        let renamed =
            ["P0", "P1", "P2"].iter().zip(tiers).fold(text, |text, (from, to)| text.replace(&format!("\"{from}\""), &format!("\"{to}\"")));
        std::fs::write(entry.path(), renamed).expect("written");
    }
    let root = dir.path().join("placid.kdl");
    edit(&root, "label-prefix=\"placid.dev\"", &format!("label-prefix=\"{prefix}\""));
    edit(&root, "target \"kubernetes\" version=\"1.34\"", &format!("target \"kubernetes\" version=\"{version}\""));
    edit(&root, "score=\"cost-aware\"", "score=\"cost-aware\" prometheus=\"prometheus-operated.monitoring.svc:9090\"");
    edit(&policy.join("classes.kdl"), "    image \"ghcr.io/acme/eval:2.4\"\n", "");
    // A route to a class that filters nodes (lanes), so a routed workload gets a node selector.
    edit(
        &policy.join("routes.kdl"),
        "route tag=\"prod-sla\"",
        &format!("route tag=\"gang\" tier=\"{}\" class=\"model-parallel\"\nroute tag=\"prod-sla\"", tiers[1]),
    );
    edit(
        &policy.join("plans.kdl"),
        "\"--metric\" \"eval-loss\"\n",
        "\"--metric\" \"eval-loss\"\n        image \"ghcr.io/acme/eval:2.5\"\n",
    );
    std::fs::write(policy.join("telemetry.kdl"), "telemetry {\n    throttle domain-nvlink-above=0.85 for=\"10m\" comm=\"high\"\n}\n")
        .expect("written");
    let built = build(dir.path());
    let clean = built.clean().unwrap_or_else(|build| {
        panic!("generated project {prefix} does not compile:\n{}", placid_driver::render::text(&build.sources, &build.diagnostics, false))
    });
    Project {
        name: format!("generated ({version}, {prefix}, {tiers:?})"),
        model: clean.model.into_model(),
        objects: parsed(clean.artifacts.clone()),
        artifacts: clean.artifacts,
    }
}

/// The cluster example under another label prefix and other tier names (see [`generated`]).
pub fn generated_projects() -> Vec<Project> {
    vec![
        generated("1.34", "ml.acme-corp.io", ["Gold", "Silver_A", "Bronze"]),
        generated("1.34", "placid.dev", ["prod", "batch.hi", "scavenger"]),
    ]
}
