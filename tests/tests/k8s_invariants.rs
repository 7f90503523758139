//! The invariants the Kubernetes output must keep, one test each, checked on the emitted
//! YAML of every example (not on placid's internal types), so they hold for what Argo CD
//! actually applies.

mod k8s_support;

use std::collections::{BTreeMap, BTreeSet};

use k8s_support::{Emitted, emitted, kubernetes_examples};
use placid_lang::model::Preemption;
use placid_targets::wasm::meta::Source;
use placid_tests::build_clean;
use serde_json::Value;

fn of_kind<'a>(objects: &'a [Emitted], kind: &str) -> Vec<&'a Emitted> {
    objects.iter().filter(|object| object.kind() == kind).collect()
}

/// The flavor quotas of a ClusterQueue, across its resource groups.
fn flavor_quotas(queue: &Emitted) -> impl Iterator<Item = &Value> {
    queue.object["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["flavors"].as_array().into_iter().flatten())
}

fn strings(value: &Value) -> BTreeMap<String, String> {
    value.as_object().into_iter().flatten().map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned())).collect()
}

/// The labels (key -> value) and taints (key, value) NFD puts on one node.
type Marks = (BTreeMap<String, String>, BTreeSet<(String, String)>);

/// The labels and taints the NFD rules put on each node, by node name; panics on a rule that
/// matches nodes other than by exact name.
fn nfd_marks(objects: &[Emitted]) -> BTreeMap<String, Marks> {
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

#[test]
fn no_cluster_queue_reclaims_with_any() {
    for example in kubernetes_examples() {
        let objects = emitted(&example);
        let queues = of_kind(&objects, "ClusterQueue");
        assert!(!queues.is_empty(), "{example}: no ClusterQueue");
        for queue in queues {
            let preemption = &queue.object["spec"]["preemption"];
            let reclaim = preemption["reclaimWithinCohort"].as_str();
            assert!(matches!(reclaim, Some("Never" | "LowerPriority")), "{example}/{}: reclaimWithinCohort is {reclaim:?}", queue.path);
            assert!(
                preemption.get("borrowWithinCohort").is_none(),
                "{example}/{}: borrowWithinCohort preempts regardless of tiers",
                queue.path
            );
        }
    }
}

#[test]
fn the_queue_of_a_never_preempted_tier_lends_and_borrows_nothing_and_holds_only_reserved_flavors() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let queues: BTreeMap<&str, &Emitted> = of_kind(&objects, "ClusterQueue").into_iter().map(|queue| (queue.name(), queue)).collect();
        let tainted_flavors: BTreeSet<&str> = of_kind(&objects, "ResourceFlavor")
            .into_iter()
            .filter(|flavor| flavor.object["spec"]["nodeTaints"].as_array().is_some_and(|taints| !taints.is_empty()))
            .map(Emitted::name)
            .collect();
        for tier in model.tiers.iter().filter(|tier| tier.preemption.value == Preemption::Never) {
            let queue_name = tier.name.as_str().to_ascii_lowercase();
            let local_queues: Vec<&Emitted> =
                of_kind(&objects, "LocalQueue").into_iter().filter(|queue| queue.name() == queue_name).collect();
            assert!(
                !local_queues.is_empty()
                    || model.teams.iter().all(|team| team.tiers.iter().all(|allowed| model.tier(allowed.value).name != tier.name))
            );
            for local in local_queues {
                let cluster_queue = local.object["spec"]["clusterQueue"].as_str().unwrap_or_default();
                let queue = queues.get(cluster_queue).unwrap_or_else(|| panic!("{example}: no ClusterQueue {cluster_queue}"));
                let spec = &queue.object["spec"];
                assert_eq!(spec["preemption"]["withinClusterQueue"], "Never", "{example}/{}", queue.path);
                assert!(flavor_quotas(queue).next().is_some(), "{example}/{}: the reserved queue holds no flavor", queue.path);
                for flavor in flavor_quotas(queue) {
                    let flavor_name = flavor["name"].as_str().unwrap_or_default();
                    assert!(
                        tainted_flavors.contains(flavor_name),
                        "{example}/{}: flavor {flavor_name} is not reserved (tainted)",
                        queue.path
                    );
                    for resource in flavor["resources"].as_array().into_iter().flatten() {
                        assert_eq!(resource["lendingLimit"], "0", "{example}/{}: {flavor_name} {} is lent", queue.path, resource["name"]);
                        assert_eq!(resource["borrowingLimit"], "0", "{example}/{}: {flavor_name} {} borrows", queue.path, resource["name"]);
                    }
                }
            }
        }
    }
}

#[test]
fn every_local_queue_points_to_an_existing_cluster_queue_that_admits_its_namespace() {
    for example in kubernetes_examples() {
        let objects = emitted(&example);
        let queues: BTreeMap<&str, &Emitted> = of_kind(&objects, "ClusterQueue").into_iter().map(|queue| (queue.name(), queue)).collect();
        let namespaces: BTreeMap<&str, BTreeMap<String, String>> = of_kind(&objects, "Namespace")
            .into_iter()
            .map(|namespace| (namespace.name(), strings(&namespace.object["metadata"]["labels"])))
            .collect();
        let locals = of_kind(&objects, "LocalQueue");
        assert!(!locals.is_empty(), "{example}: no LocalQueue");
        for local in locals {
            let target = local.object["spec"]["clusterQueue"].as_str().unwrap_or_default();
            let queue = queues.get(target).unwrap_or_else(|| panic!("{example}/{}: ClusterQueue {target} does not exist", local.path));
            let namespace = local.namespace().unwrap_or_default();
            let labels =
                namespaces.get(namespace).unwrap_or_else(|| panic!("{example}/{}: namespace {namespace} is not emitted", local.path));
            let selector = &queue.object["spec"]["namespaceSelector"];
            let matches_labels = strings(&selector["matchLabels"]).iter().all(|(key, value)| labels.get(key) == Some(value));
            let matches_expressions = selector["matchExpressions"].as_array().into_iter().flatten().all(|requirement| {
                let value = labels.get(requirement["key"].as_str().unwrap_or_default());
                let values: Vec<&str> = requirement["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                match requirement["operator"].as_str() {
                    Some("In") => value.is_some_and(|value| values.contains(&value.as_str())),
                    Some("Exists") => value.is_some(),
                    other => panic!("{example}/{}: unexpected operator {other:?}", queue.path),
                }
            });
            assert!(
                selector.is_object() && matches_labels && matches_expressions,
                "{example}/{}: {target} does not admit namespace {namespace}",
                local.path
            );
        }
    }
}

#[test]
fn every_label_a_flavor_selects_is_written_by_nfd_on_exactly_the_pool_nodes() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let marks = nfd_marks(&objects);
        let inventory: BTreeSet<&str> = model.nodes.iter().map(|node| node.name.as_str()).collect();
        for node in marks.keys() {
            assert!(inventory.contains(node.as_str()), "{example}: NFD labels {node}, which is not in the inventory");
        }
        for (labels, _) in marks.values() {
            for key in labels.keys() {
                let prefix = key.split_once('/').map_or("", |(prefix, _)| prefix);
                assert!(
                    prefix != "kubernetes.io" && !prefix.ends_with(".kubernetes.io"),
                    "{example}: NFD would have to write {key}, which it refuses"
                );
            }
        }
        let flavors = of_kind(&objects, "ResourceFlavor");
        assert_eq!(flavors.len(), model.pools.len(), "{example}: one flavor per pool");
        for flavor in flavors {
            let pool = model
                .pools
                .iter()
                .find(|pool| pool.name.as_str().to_ascii_lowercase().replace(['_', '.'], "-") == flavor.name())
                .unwrap_or_else(|| panic!("{example}: flavor {} has no pool", flavor.name()));
            let expected: BTreeSet<&str> = pool.nodes.iter().map(|id| model.node(*id).name.as_str()).collect();
            let selected = strings(&flavor.object["spec"]["nodeLabels"]);
            assert!(!selected.is_empty(), "{example}: flavor {} selects every node", flavor.name());
            let labelled: BTreeSet<&str> = marks
                .iter()
                .filter(|(_, (labels, _))| selected.iter().all(|(key, value)| labels.get(key) == Some(value)))
                .map(|(node, _)| node.as_str())
                .collect();
            assert_eq!(labelled, expected, "{example}: flavor {} selects other nodes than pool {}", flavor.name(), pool.name);
            for taint in flavor.object["spec"]["nodeTaints"].as_array().into_iter().flatten() {
                let pair = (taint["key"].as_str().unwrap_or_default().to_owned(), taint["value"].as_str().unwrap_or_default().to_owned());
                let tainted: BTreeSet<&str> =
                    marks.iter().filter(|(_, (_, taints))| taints.contains(&pair)).map(|(node, _)| node.as_str()).collect();
                assert_eq!(tainted, expected, "{example}: taint {pair:?} of flavor {} is not on exactly its pool's nodes", flavor.name());
            }
        }
        for topology in of_kind(&objects, "Topology") {
            for level in topology.object["spec"]["levels"].as_array().into_iter().flatten() {
                let label = level["nodeLabel"].as_str().unwrap_or_default();
                if label == "kubernetes.io/hostname" {
                    continue;
                }
                for node in &inventory {
                    let written = marks.get(*node).is_some_and(|(labels, _)| labels.contains_key(label));
                    assert!(written, "{example}: node {node} lacks Topology level {label}; Kueue would leave it out of TAS");
                }
            }
        }
    }
}

#[test]
fn each_team_queue_is_given_the_gpus_its_share_guarantees_and_borrows_what_the_model_says() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let queues: BTreeMap<&str, &Emitted> = of_kind(&objects, "ClusterQueue").into_iter().map(|queue| (queue.name(), queue)).collect();
        let fences = model.fences();
        let mut compared = 0;
        for (pool_index, pool) in model.pools.iter().enumerate() {
            let pool_id = placid_lang::model::PoolId::from_index(pool_index);
            let guaranteed = fences.guaranteed_gpus(pool_id);
            let borrowable = fences.borrowable_gpus(&guaranteed);
            for ((team, gpus), borrow) in model.teams.iter().zip(guaranteed).zip(borrowable) {
                let queue_name = team.name.as_str().to_ascii_lowercase();
                let queue = queues.get(queue_name.as_str()).unwrap_or_else(|| panic!("{example}: no ClusterQueue {queue_name}"));
                let quota = flavor_quotas(queue)
                    .filter(|flavor| flavor["name"] == pool.name.as_str().to_ascii_lowercase())
                    .flat_map(|flavor| flavor["resources"].as_array().into_iter().flatten())
                    .find(|resource| resource["name"] == "nvidia.com/gpu")
                    .unwrap_or_else(|| panic!("{example}: queue {queue_name} has no GPU quota in flavor {}", pool.name));
                assert_eq!(quota["nominalQuota"], gpus.to_string(), "{example}: team {} pool {}", team.name, pool.name);
                assert_eq!(quota["borrowingLimit"], borrow.to_string(), "{example}: team {} pool {} borrowing", team.name, pool.name);
                compared += 1;
            }
        }
        assert!(compared > 0, "{example}: no team quota compared");
    }
}

#[test]
fn the_cluster_example_quotas_match_a_hand_computation() {
    // nvl-a: 16 GPUs, 12 reserved by P0, 4 left; shares 40/30/30 -> 2/1/1. nvlink spans both
    // domains, but nvl-a's nodes are fenced by the reservation, so it reaches nvl-b's 16 GPUs:
    // 6.4/4.8/4.8 -> 6/5/5 by largest remainder.
    let objects = emitted("cluster");
    let gpus = |name: &str, flavor: &str| -> String {
        let queue =
            of_kind(&objects, "ClusterQueue").into_iter().find(|object| object.name() == name).unwrap_or_else(|| panic!("no {name}"));
        flavor_quotas(queue)
            .find(|quota| quota["name"] == flavor)
            .and_then(|quota| quota["resources"].as_array()?.iter().find(|resource| resource["name"] == "nvidia.com/gpu").cloned())
            .map(|resource| resource["nominalQuota"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_else(|| panic!("{name} has no GPU quota in {flavor}"))
    };
    assert_eq!([gpus("vision", "nvl-a"), gpus("speech", "nvl-a"), gpus("research", "nvl-a")], ["2", "1", "1"]);
    assert_eq!([gpus("vision", "nvlink"), gpus("speech", "nvlink"), gpus("research", "nvlink")], ["6", "5", "5"]);
    assert_eq!(gpus("tier-p0", "nvl-a"), "12");
}

#[test]
fn every_node_label_a_scoring_plugin_reads_is_written_by_nfd() {
    // In the extender's `nodeCacheCapable: false` mode the plugins read node facts from
    // labels; placid's own labels must be on every node (a price only where there is one).
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let Some(kubernetes) = &model.project.kubernetes else { continue };
        let prefix = format!("{}/", kubernetes.label_prefix.value);
        let marks = nfd_marks(&emitted(&example));
        for feature in placid_lang::expr::NodeFeature::ALL {
            let source = placid_targets::wasm::sources::node_source(*feature, &kubernetes.label_prefix.value);
            let Source::Label(key) = &source.from else { continue };
            if !key.starts_with(&prefix) {
                continue;
            }
            for node in &model.nodes {
                if *feature == placid_lang::expr::NodeFeature::CostPerGpuHour && node.cost_per_gpu_hour.is_none() {
                    continue;
                }
                let labels = marks.get(node.name.as_str()).map(|(labels, _)| labels);
                assert!(
                    labels.is_some_and(|labels| labels.contains_key(key)),
                    "{example}: node {} lacks label {key}, which the scoring plugins read",
                    node.name
                );
            }
        }
    }
}
