//! The invariants the Kubernetes output must keep, one test each, checked on the emitted
//! YAML of every example (not on placid's internal types), so they hold for what Argo CD
//! actually applies.

mod k8s_support;

use std::collections::{BTreeMap, BTreeSet};

use k8s_support::{Emitted, emitted, flavor_quotas, kubernetes_examples, nfd_marks, of_kind, strings};
use placid_lang::model::Preemption;
use placid_targets::wasm::meta::Source;
use placid_tests::build_clean;
use serde_json::Value;

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
fn every_flavor_selects_nfd_labelled_nodes_that_each_pool_reaches_whole_or_not_at_all() {
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
        let fences = model.fences();
        let reached: Vec<BTreeSet<&str>> = (0..model.pools.len())
            .map(|index| {
                let pool = placid_lang::model::PoolId::from_index(index);
                model
                    .pool(pool)
                    .nodes
                    .iter()
                    .filter(|node| fences.reaches(pool, **node))
                    .map(|node| model.node(*node).name.as_str())
                    .collect()
            })
            .collect();
        let flavors = of_kind(&objects, "ResourceFlavor");
        assert!(!flavors.is_empty(), "{example}: no ResourceFlavor");
        let mut covered: BTreeSet<&str> = BTreeSet::new();
        for flavor in flavors {
            assert!(!strings(&flavor.object["spec"]["nodeLabels"]).is_empty(), "{example}: flavor {} selects every node", flavor.name());
            let nodes = k8s_support::flavor_nodes(flavor, &marks);
            assert!(!nodes.is_empty(), "{example}: flavor {} selects no node", flavor.name());
            for pool_nodes in &reached {
                assert!(
                    nodes.is_subset(pool_nodes) || nodes.is_disjoint(pool_nodes),
                    "{example}: flavor {} is split by a pool: a pool must be a set of whole flavors",
                    flavor.name()
                );
            }
            covered.extend(nodes);
            for taint in flavor.object["spec"]["nodeTaints"].as_array().into_iter().flatten() {
                let pair = (taint["key"].as_str().unwrap_or_default().to_owned(), taint["value"].as_str().unwrap_or_default().to_owned());
                let selected = k8s_support::flavor_nodes(flavor, &marks);
                assert!(
                    selected.iter().all(|node| marks[*node].1.contains(&pair)),
                    "{example}: taint {pair:?} of flavor {} is not on all its nodes",
                    flavor.name()
                );
            }
        }
        let reachable: BTreeSet<&str> = reached.iter().flatten().copied().collect();
        assert_eq!(covered, reachable, "{example}: the flavors must cover exactly the nodes some pool reaches");
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
fn the_cluster_example_quotas_match_a_hand_computation() {
    // Cells, cheapest first: x86-spot (2 nodes, 8 GPUs, $0.70), x86-on-demand (8 GPUs, $1.90),
    // nvl-a (16 GPUs, $3.10, 12 reserved by P0), nvl-b (16 GPUs, $4.20). Shares 40/30/30 by
    // largest remainder: 8 -> 3/3/2 (3.2, 2.4, 2.4: the tie goes to the earlier team), 16 ->
    // 6/5/5. nvl-a's 12 reserved GPUs are tier-p0's; its other 4 are shared like the
    // engine's (docs/semantics.md, section 3): 2/1/1.
    let objects = emitted("cluster");
    let queue = |name: &str| {
        of_kind(&objects, "ClusterQueue").into_iter().find(|object| object.name() == name).unwrap_or_else(|| panic!("no {name}"))
    };
    let gpus = |name: &str, flavor: &str| -> Option<String> {
        flavor_quotas(queue(name))
            .find(|quota| quota["name"] == flavor)
            .and_then(|quota| quota["resources"].as_array()?.iter().find(|resource| resource["name"] == "nvidia.com/gpu").cloned())
            .map(|resource| resource["nominalQuota"].as_str().unwrap_or_default().to_owned())
    };
    let three = |flavor: &str| [gpus("vision", flavor), gpus("speech", flavor), gpus("research", flavor)];
    let some = |values: [&str; 3]| values.map(|value| Some(value.to_owned()));
    assert_eq!(three("x86-spot"), some(["3", "3", "2"]));
    assert_eq!(three("x86-on-demand"), some(["3", "3", "2"]));
    assert_eq!(three("nvl-b"), some(["6", "5", "5"]));
    assert_eq!(three("nvl-a"), some(["2", "1", "1"]));
    assert_eq!(gpus("tier-p0", "nvl-a").as_deref(), Some("12"));
    let order: Vec<&str> = flavor_quotas(queue("vision")).filter_map(|quota| quota["name"].as_str()).collect();
    assert_eq!(order, ["x86-spot", "x86-on-demand", "nvl-a", "nvl-b"]);
}

#[test]
fn every_node_label_a_scoring_plugin_reads_is_written_by_nfd() {
    // In the extender's `nodeCacheCapable: false` mode the plugins read node facts from
    // labels; placid's own label is on a node exactly where the inventory gives the feature (a
    // price only where there is one, an NVLink domain only on a domain's nodes), so a plugin
    // sees what `placid score` sees.
    let mut features = 0;
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
            features += 1;
            for node in &model.nodes {
                let labelled = marks.get(node.name.as_str()).is_some_and(|(labels, _)| labels.contains_key(key));
                assert_eq!(
                    labelled,
                    feature.inventory_provides(&model, node),
                    "{example}: node {}: label {key}, which the scoring plugins read, against the inventory",
                    node.name
                );
            }
        }
    }
    assert!(features > 0);
}

// The engine's conformance facts (docs/semantics.md), as properties of the Kubernetes output.

#[test]
fn the_queue_a_stage_submits_to_exists_and_holds_quota_in_a_cell_of_its_pool() {
    for example in kubernetes_examples() {
        let objects = emitted(&example);
        let queues: BTreeMap<&str, &Emitted> = of_kind(&objects, "ClusterQueue").into_iter().map(|queue| (queue.name(), queue)).collect();
        for workload in objects.iter().filter(|object| object.path.starts_with("kubernetes/workloads/")) {
            let local_name = workload.object["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].as_str().unwrap_or_default();
            let local = of_kind(&objects, "LocalQueue")
                .into_iter()
                .find(|local| local.name() == local_name && local.namespace() == workload.namespace())
                .unwrap_or_else(|| panic!("{example}/{}: no LocalQueue {local_name} in its namespace", workload.path));
            let cluster_queue = queues[local.object["spec"]["clusterQueue"].as_str().unwrap_or_default()];
            let pod = if workload.kind() == "JobSet" {
                &workload.object["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
            } else {
                &workload.object["spec"]["template"]
            };
            let cells: BTreeSet<&str> = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let usable = flavor_quotas(cluster_queue).any(|quota| {
                cells.contains(quota["name"].as_str().unwrap_or_default())
                    && quota["resources"].as_array().into_iter().flatten().any(|resource| {
                        resource["name"] == "nvidia.com/gpu" && (resource["nominalQuota"] != "0" || resource["borrowingLimit"] != "0")
                    })
            });
            assert!(usable, "{example}/{}: queue {} holds no GPU of cells {cells:?}", workload.path, cluster_queue.name());
        }
    }
}

#[test]
fn who_preempts_whom_follows_the_tiers_workload_priorities() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let value = |tier: &placid_lang::model::Tier| -> i64 {
            let name = tier.name.as_str().to_ascii_lowercase();
            let class = of_kind(&objects, "WorkloadPriorityClass")
                .into_iter()
                .find(|class| class.name() == name)
                .unwrap_or_else(|| panic!("{example}: no WorkloadPriorityClass {name}"));
            class.object["value"].as_i64().unwrap_or_else(|| panic!("{example}: {name} has no value"))
        };
        for preemptor in &model.tiers {
            for victim in &model.tiers {
                if preemptor.preempts(victim) {
                    assert!(
                        value(preemptor) > value(victim),
                        "{example}: {} preempts {} but does not outrank it",
                        preemptor.name,
                        victim.name
                    );
                }
                if victim.preemption.value == Preemption::Never && preemptor.name != victim.name {
                    assert!(value(preemptor) < value(victim), "{example}: {} outranks never-preempted {}", preemptor.name, victim.name);
                }
            }
        }
    }
}

#[test]
fn a_reserved_cell_is_placed_on_only_through_its_own_flavor_and_its_reservation_only_by_teams_allowed_the_tier() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let marks = nfd_marks(&objects);
        let flavors = of_kind(&objects, "ResourceFlavor");
        for (node, (_, taints)) in &marks {
            if taints.is_empty() {
                continue;
            }
            let placing: Vec<&str> = flavors
                .iter()
                .filter(|flavor| k8s_support::flavor_nodes(flavor, &marks).contains(node.as_str()))
                .map(|flavor| flavor.name())
                .collect();
            assert_eq!(placing.len(), 1, "{example}: reserved node {node} is reachable through flavors {placing:?}");
        }
        for flavor in
            flavors.iter().filter(|flavor| flavor.object["spec"]["nodeTaints"].as_array().is_some_and(|taints| !taints.is_empty()))
        {
            let pool_value = flavor.object["spec"]["nodeTaints"][0]["value"].as_str().unwrap_or_default();
            let reserving: Vec<&placid_lang::model::Tier> = model
                .tiers
                .iter()
                .filter(|tier| {
                    tier.reservations.iter().any(|reservation| {
                        model.pool(reservation.pool).name.as_str().to_ascii_lowercase().replace(['_', '.'], "-") == pool_value
                    })
                })
                .collect();
            assert!(!reserving.is_empty(), "{example}: flavor {} is tainted for a pool no tier reserves", flavor.name());
            // The reservation is held by the reserving tier's queue, which admits only the
            // namespaces of teams allowed the tier (team queues share the unreserved rest).
            for tier in &reserving {
                let name = format!("tier-{}", tier.name.as_str().to_ascii_lowercase());
                let queue = of_kind(&objects, "ClusterQueue")
                    .into_iter()
                    .find(|queue| queue.name() == name)
                    .unwrap_or_else(|| panic!("{example}: no ClusterQueue {name}"));
                assert!(flavor_quotas(queue).any(|quota| quota["name"] == flavor.name()), "{example}: {name} lacks {}", flavor.name());
                let admitted: BTreeSet<&str> = queue.object["spec"]["namespaceSelector"]["matchExpressions"][0]["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let allowed: BTreeSet<String> = model
                    .teams
                    .iter()
                    .filter(|team| team.tiers.iter().any(|allowed| model.tier(allowed.value).name == tier.name))
                    .map(|team| team.name.as_str().to_ascii_lowercase())
                    .collect();
                let allowed: BTreeSet<&str> = allowed.iter().map(String::as_str).collect();
                assert_eq!(admitted, allowed, "{example}: {name} admits other teams than those allowed tier {}", tier.name);
            }
        }
    }
}

#[test]
fn namespaces_are_never_pruned_or_deleted_by_argo_cd() {
    for example in kubernetes_examples() {
        for namespace in of_kind(&emitted(&example), "Namespace") {
            let options = namespace.object["metadata"]["annotations"]["argocd.argoproj.io/sync-options"].as_str().unwrap_or_default();
            let options: BTreeSet<&str> = options.split(',').map(str::trim).collect();
            assert!(options.contains("Prune=false") && options.contains("Delete=false"), "{example}/{}: {options:?}", namespace.path);
        }
    }
}

/// Each team's routing policy (found through its namespace's team label and the binding that
/// selects it) holds one rule per route, as `Model::routing` resolves the tag for that team: a
/// tag routed to a tier the team may not use is refused outright, with the policy's message and
/// the team's rule; any other tagged workload must carry the routed tier's queue and priority
/// labels.
#[test]
fn a_routed_tag_requires_its_tiers_labels_and_is_refused_naming_the_rule_for_teams_without_the_tier() {
    let (mut routed, mut refused) = (0, 0);
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        for (team_index, team) in model.teams.iter().enumerate() {
            let Some(namespace) = of_kind(&objects, "Namespace").into_iter().find(|namespace| namespace.name() == team.namespace.as_str())
            else {
                panic!("{example}: no namespace for team {}", team.name)
            };
            let labels = namespace.object["metadata"]["labels"].as_object().cloned().unwrap_or_default();
            let selected = |binding: &&Emitted| {
                binding.object["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
                    .as_object()
                    .is_some_and(|selector| selector.iter().all(|(key, value)| labels.get(key) == Some(value)))
            };
            let policies: Vec<&Emitted> = of_kind(&objects, "ValidatingAdmissionPolicyBinding")
                .into_iter()
                .filter(selected)
                .filter_map(|binding| {
                    let name = binding.object["spec"]["policyName"].as_str()?;
                    of_kind(&objects, "ValidatingAdmissionPolicy").into_iter().find(|policy| policy.name() == name)
                })
                .filter(|policy| {
                    policy.object["spec"]["variables"].as_array().into_iter().flatten().any(|variable| variable["name"] == "tag")
                })
                .collect();
            if model.routes.is_empty() {
                assert!(policies.is_empty(), "{example}: a routing policy without routes");
                continue;
            }
            assert_eq!(policies.len(), 1, "{example}: team {} has {} routing policies", team.name, policies.len());
            let rules = policies[0].object["spec"]["validations"].as_array().cloned().unwrap_or_default();
            assert_eq!(rules.len(), model.routes.len(), "{example}: team {}: one rule per route", team.name);
            for (route, rule) in model.routes.iter().zip(&rules) {
                let expression = rule["expression"].as_str().unwrap_or_default();
                let message = rule["message"].as_str().unwrap_or_default();
                let untagged = format!("variables.tag != '{}'", route.tag.value);
                match model.routing(route.tag.value.as_str(), placid_lang::model::TeamId::from_index(team_index)) {
                    placid_lang::model::Routing::Routed { tier, .. } => {
                        routed += 1;
                        let queue = format!("variables.queue == '{}'", model.tier(tier).name.as_str().to_ascii_lowercase());
                        assert!(expression.starts_with(&format!("{untagged} || (")), "{example}: {expression}");
                        assert!(expression.contains(&queue), "{example}: {expression} does not require {queue}");
                        assert!(
                            message.contains("kueue.x-k8s.io/queue-name=") && message.contains("kueue.x-k8s.io/priority-class="),
                            "{message}"
                        );
                    }
                    placid_lang::model::Routing::Refused { message: refusal, .. } => {
                        refused += 1;
                        assert_eq!(expression, untagged, "{example}: a refused tag is refused outright");
                        let tiers: Vec<String> = team.tiers.iter().map(|tier| format!("\"{}\"", model.tier(tier.value).name)).collect();
                        let team_rule = format!("team \"{}\" {{ tiers {} }}", team.name, tiers.join(" "));
                        assert!(message.starts_with(&refusal), "{example}: `{message}` is not the policy's message `{refusal}`");
                        assert!(message.contains(&team_rule), "{example}: `{message}` does not name the rule `{team_rule}`");
                    }
                    placid_lang::model::Routing::Unrouted => panic!("{example}: the tag of a route is unrouted"),
                }
            }
        }
    }
    assert!(routed > 0 && refused > 0, "no example routes a tag for one team and refuses it for another");
}

#[test]
fn a_cluster_queue_keeps_order_exactly_when_a_tier_submitting_to_it_may_not_backfill() {
    let mut strict_seen = false;
    let mut best_effort_seen = false;
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        // The tiers whose LocalQueues point at each ClusterQueue, from the emitted YAML.
        let mut submitting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for local in of_kind(&objects, "LocalQueue") {
            submitting.entry(local.object["spec"]["clusterQueue"].as_str().unwrap_or_default()).or_default().insert(local.name());
        }
        for queue in of_kind(&objects, "ClusterQueue") {
            let tiers = submitting.get(queue.name()).cloned().unwrap_or_default();
            let ordered = model
                .tiers
                .iter()
                .filter(|tier| tiers.contains(tier.name.as_str().to_ascii_lowercase().as_str()))
                .any(|tier| !tier.backfill);
            let strategy = queue.object["spec"]["queueingStrategy"].as_str();
            let expected = if ordered { "StrictFIFO" } else { "BestEffortFIFO" };
            assert_eq!(strategy, Some(expected), "{example}/{}: tiers {tiers:?}", queue.path);
            strict_seen |= ordered;
            best_effort_seen |= !ordered && !tiers.is_empty();
        }
    }
    assert!(strict_seen && best_effort_seen, "the examples must show both strategies");
}
