//! Kueue quotas that the cluster can honour: for every group of nodes and every resource (GPU,
//! CPU, memory), the nominal quota of all ClusterQueues on the flavors that can place pods
//! there adds up to at most what those nodes hold. Checked on the emitted YAML alone (flavors
//! matched to nodes through the NFD labels and taints, as Kubernetes matches them), over every
//! example and over generated projects whose pools overlap at random.

mod k8s_support;

use std::collections::{BTreeMap, BTreeSet};

use k8s_support::{Emitted, emitted, flavor_nodes, flavor_quotas, kubernetes_examples, nfd_marks, of_kind, parsed, quantity};
use placid_lang::diag::Diagnostics;
use placid_lang::model::{CapacityKind, Model, NodeId, PoolId};
use placid_tests::build_clean;
use proptest::prelude::*;

const RESOURCES: [&str; 3] = ["cpu", "memory", "nvidia.com/gpu"];

/// How much of `resource` node `name` holds (CPUs, MiB, GPUs).
fn node_amount(model: &Model, name: &str, resource: &str) -> u64 {
    let node = model.nodes.iter().find(|node| node.name.as_str() == name).unwrap_or_else(|| panic!("no node {name}"));
    match resource {
        "cpu" => u64::from(node.cpu.harts),
        "memory" => node.memory.map_or(0, |bytes| bytes.0 / (1024 * 1024)),
        _ => u64::from(node.gpu_count()),
    }
}

/// The quota invariant, or what breaks it. Nodes are grouped by the set of flavors that can
/// place pods on them; each group must hold the nominal quota of all those flavors, since
/// Kueue may admit all of it there. A flavor that places nowhere must hold no quota.
fn quota_violations(model: &Model, objects: &[Emitted]) -> Vec<String> {
    let marks = nfd_marks(objects);
    let flavors: BTreeMap<&str, BTreeSet<&str>> =
        of_kind(objects, "ResourceFlavor").into_iter().map(|flavor| (flavor.name(), flavor_nodes(flavor, &marks))).collect();
    let mut nominal: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for queue in of_kind(objects, "ClusterQueue") {
        for quota in flavor_quotas(queue) {
            let flavor = quota["name"].as_str().unwrap_or_default();
            for resource in quota["resources"].as_array().into_iter().flatten() {
                let name = resource["name"].as_str().unwrap_or_default();
                let key = RESOURCES.iter().find(|known| **known == name).copied().unwrap_or("other");
                *nominal.entry((flavor, key)).or_default() += quantity(&resource["nominalQuota"]);
            }
        }
    }
    let mut groups: BTreeMap<BTreeSet<&str>, BTreeSet<&str>> = BTreeMap::new();
    for node in marks.keys() {
        let placing: BTreeSet<&str> = flavors.iter().filter(|(_, nodes)| nodes.contains(node.as_str())).map(|(name, _)| *name).collect();
        if !placing.is_empty() {
            groups.entry(placing).or_default().insert(node.as_str());
        }
    }
    let mut violations = Vec::new();
    for (placing, nodes) in &groups {
        for resource in RESOURCES {
            let capacity: u64 = nodes.iter().map(|node| node_amount(model, node, resource)).sum();
            let quota: u64 = placing.iter().map(|flavor| nominal.get(&(*flavor, resource)).copied().unwrap_or(0)).sum();
            if quota > capacity {
                violations.push(format!("nodes {nodes:?} hold {capacity} {resource}, flavors {placing:?} carry {quota} nominal"));
            }
        }
    }
    for (flavor, nodes) in &flavors {
        for resource in RESOURCES {
            let quota = nominal.get(&(*flavor, resource)).copied().unwrap_or(0);
            if nodes.is_empty() && quota > 0 {
                violations.push(format!("flavor {flavor} places on no node but carries {quota} nominal {resource}"));
            }
        }
    }
    violations
}

#[test]
fn no_group_of_nodes_is_promised_more_than_it_holds_in_any_example() {
    let examples = kubernetes_examples();
    assert!(!examples.is_empty(), "no example enables the Kubernetes target");
    for example in examples {
        let model = build_clean(&example).model;
        let violations = quota_violations(&model, &emitted(&example));
        assert!(violations.is_empty(), "{example}: quotas over-commit the cluster:\n{}", violations.join("\n"));
    }
}

#[test]
fn the_cluster_example_promises_exactly_its_48_gpus() {
    let objects = emitted("cluster");
    let total: u64 = of_kind(&objects, "ClusterQueue")
        .into_iter()
        .flat_map(flavor_quotas)
        .flat_map(|quota| quota["resources"].as_array().into_iter().flatten())
        .filter(|resource| resource["name"] == "nvidia.com/gpu")
        .map(|resource| quantity(&resource["nominalQuota"]))
        .sum();
    assert_eq!(total, 48, "every GPU is somebody's quota, and none twice");
}

/// The price and capacity kind of the nodes a flavor places on (all alike), by flavor name.
fn flavor_costs<'a>(model: &Model, objects: &'a [Emitted]) -> BTreeMap<&'a str, (Option<i64>, CapacityKind)> {
    let marks = nfd_marks(objects);
    of_kind(objects, "ResourceFlavor")
        .into_iter()
        .map(|flavor| {
            let costs: BTreeSet<(Option<i64>, CapacityKind)> = flavor_nodes(flavor, &marks)
                .into_iter()
                .map(|name| {
                    let node = model.nodes.iter().find(|node| node.name.as_str() == name).unwrap_or_else(|| panic!("no node {name}"));
                    (node.cost_per_gpu_hour.map(|money| money.minor), node.capacity)
                })
                .collect();
            assert_eq!(costs.len(), 1, "flavor {} mixes prices or capacity kinds: {costs:?}", flavor.name());
            (flavor.name(), costs.into_iter().next().unwrap_or((None, CapacityKind::OnDemand)))
        })
        .collect()
}

#[test]
fn every_queue_lists_its_flavors_cheapest_first() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let costs = flavor_costs(&model, &objects);
        for queue in of_kind(&objects, "ClusterQueue") {
            let order: Vec<(u8, i64, usize)> = flavor_quotas(queue)
                .map(|quota| {
                    let (price, kind) = costs[quota["name"].as_str().unwrap_or_default()];
                    let rank = CapacityKind::ALL.iter().position(|known| *known == kind).unwrap_or(0);
                    price.map_or((1, 0, rank), |minor| (0, minor, rank))
                })
                .collect();
            assert!(order.is_sorted(), "{example}/{}: flavors are not cheapest first: {order:?}", queue.path);
        }
    }
}

/// The pool each reservation taint value fences (`<prefix>/reserved=<pool>`).
fn fenced_pool<'m>(model: &'m Model, value: &str) -> &'m placid_lang::model::Pool {
    model
        .pools
        .iter()
        .find(|pool| pool.name.as_str().to_ascii_lowercase().replace(['_', '.'], "-") == value)
        .unwrap_or_else(|| panic!("taint value {value} names no pool"))
}

#[test]
fn a_reserved_cell_holds_its_reservation_in_the_tier_queue_and_the_rest_for_the_teams() {
    // As the engine (docs/semantics.md, section 3): a reserving tier is charged to its
    // reservation, and the pool's unreserved GPUs are split between all teams by share.
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let marks = nfd_marks(&objects);
        let gpus_in = |queue: &Emitted, flavor: &str| -> u64 {
            flavor_quotas(queue)
                .filter(|quota| quota["name"] == flavor)
                .flat_map(|quota| quota["resources"].as_array().into_iter().flatten())
                .filter(|resource| resource["name"] == "nvidia.com/gpu")
                .map(|resource| quantity(&resource["nominalQuota"]))
                .sum()
        };
        for flavor in of_kind(&objects, "ResourceFlavor") {
            let Some(value) = flavor.object["spec"]["nodeTaints"].as_array().and_then(|taints| taints.first()?["value"].as_str()) else {
                continue;
            };
            let pool = fenced_pool(&model, value);
            let capacity: u64 = flavor_nodes(flavor, &marks).iter().map(|node| node_amount(&model, node, "nvidia.com/gpu")).sum();
            let (mut reserved, mut shared) = (0, 0);
            for queue in of_kind(&objects, "ClusterQueue") {
                let gpus = gpus_in(queue, flavor.name());
                if queue.name().starts_with("tier-") {
                    reserved += gpus;
                } else {
                    shared += gpus;
                }
            }
            let declared: u64 = model
                .tiers
                .iter()
                .flat_map(|tier| &tier.reservations)
                .filter(|reservation| model.pool(reservation.pool).name == pool.name)
                .map(|reservation| u64::from(reservation.gpus))
                .sum();
            assert!(reserved > 0 && reserved <= declared.min(capacity), "{example}: {} reserves {reserved} of {declared}", flavor.name());
            assert_eq!(reserved + shared, capacity, "{example}: {} splits {capacity} GPUs into {reserved} + {shared}", flavor.name());
        }
    }
}

#[test]
fn a_backfilling_team_may_borrow_what_the_other_teams_hold_in_the_cell_and_no_other_team_borrows() {
    for example in kubernetes_examples() {
        let model = build_clean(&example).model;
        let objects = emitted(&example);
        let teams: BTreeMap<String, bool> =
            model.teams.iter().map(|team| (team.name.as_str().to_ascii_lowercase(), model.team_backfills(team))).collect();
        let mut held: BTreeMap<String, u64> = BTreeMap::new();
        let gpu_quota = |quota: &serde_json::Value| {
            quota["resources"].as_array().into_iter().flatten().find(|resource| resource["name"] == "nvidia.com/gpu").cloned()
        };
        for queue in of_kind(&objects, "ClusterQueue").into_iter().filter(|queue| teams.contains_key(queue.name())) {
            for quota in flavor_quotas(queue) {
                let gpus = gpu_quota(quota).map_or(0, |resource| quantity(&resource["nominalQuota"]));
                *held.entry(quota["name"].as_str().unwrap_or_default().to_owned()).or_default() += gpus;
            }
        }
        for queue in of_kind(&objects, "ClusterQueue").into_iter().filter(|queue| teams.contains_key(queue.name())) {
            for quota in flavor_quotas(queue) {
                let resource = gpu_quota(quota).unwrap_or_else(|| panic!("{example}/{}: no GPU quota", queue.path));
                let own = quantity(&resource["nominalQuota"]);
                let total = held[quota["name"].as_str().unwrap_or_default()];
                let expected = if teams[queue.name()] { total - own } else { 0 };
                assert_eq!(quantity(&resource["borrowingLimit"]), expected, "{example}/{}: {}", queue.path, quota["name"]);
            }
        }
    }
}

/// The cluster example's model with its nodes' pool memberships, capacity kinds, prices and
/// the teams' shares and tiers drawn at random, checked again; `None` when the checker refuses
/// the draw (a reservation larger than its pool, an empty pool).
fn redrawn(draw: &Draw) -> Option<placid_lang::checked::Checked> {
    let mut model = build_clean("cluster").model.into_model();
    model.plans.clear();
    model.tests.clear();
    model.migrations.clear();
    // Routes name tiers the redrawn teams may no longer use; they do not bear on quotas.
    model.routes.clear();
    let node_count = model.nodes.len();
    for (index, pool) in model.pools.iter_mut().enumerate() {
        let members = draw.members[index % draw.members.len()];
        pool.nodes = (0..node_count).filter(|node| members & (1 << node) != 0).map(NodeId::from_index).collect();
        pool.gpus = 0;
    }
    let gpus: Vec<u32> = model.nodes.iter().map(|node| node.gpu_count()).collect();
    for pool in &mut model.pools {
        pool.gpus = pool.nodes.iter().map(|node| gpus[node.index()]).sum();
    }
    for (index, node) in model.nodes.iter_mut().enumerate() {
        let (kind, price) = draw.nodes[index % draw.nodes.len()];
        node.capacity = CapacityKind::ALL[kind];
        if let Some(money) = &mut node.cost_per_gpu_hour {
            money.minor = price;
        }
    }
    for (index, team) in model.teams.iter_mut().enumerate() {
        let (share, tiers) = draw.teams[index % draw.teams.len()];
        team.share.value = share;
        let all = team.tiers.clone();
        let kept: Vec<_> = all.iter().enumerate().filter(|(tier, _)| tiers & (1 << tier) != 0).map(|(_, tier)| tier.clone()).collect();
        if !kept.is_empty() {
            team.tiers = kept;
        }
    }
    for tier in &mut model.tiers {
        for reservation in &mut tier.reservations {
            reservation.pool = PoolId::from_index(draw.reserved_pool % model.pools.len());
            reservation.gpus = draw.reserved_gpus;
        }
    }
    // Routes do not bear on quotas, and a redrawn team set may leave a route's tier to no
    // team (E163), which would discard the draw.
    model.routes.clear();
    let (verdict, _) = placid_check::check(model, Diagnostics::new());
    verdict.into_checked()
}

#[derive(Debug, Clone)]
struct Draw {
    /// Bit sets over the 12 nodes, one per pool.
    members: Vec<u32>,
    /// (capacity kind index, price in cents) per node.
    nodes: Vec<(usize, i64)>,
    /// (share, tier bit set) per team.
    teams: Vec<(u32, u8)>,
    reserved_pool: usize,
    reserved_gpus: u32,
}

fn draws() -> impl Strategy<Value = Draw> {
    (
        proptest::collection::vec(1u32..(1 << 12), 6),
        proptest::collection::vec((0usize..3, prop_oneof![Just(70i64), Just(190), Just(310)]), 12),
        proptest::collection::vec((1u32..100, 1u8..8), 3),
        0usize..6,
        1u32..20,
    )
        .prop_map(|(members, nodes, teams, reserved_pool, reserved_gpus)| Draw { members, nodes, teams, reserved_pool, reserved_gpus })
}

/// The most GPUs one workload can be admitted with, read from the emitted ClusterQueues, for
/// every team, tier it may use and pool the tier may use, beside the language's figure
/// (`CellGpus::most_for_one_workload`, what E157 warns with) and the engine's quota limit.
/// Kueue admits a workload on one flavor, within its queue's nominal quota plus borrowing
/// limit there: the queue is the tier's reserved queue in a pool it reserves in, else the
/// team's; the flavors are the pool's cells. Each limit is (what, Kueue's, the language's,
/// the engine's), in GPUs.
fn one_workload_limits(model: &placid_lang::checked::Checked, objects: &[Emitted]) -> Vec<(String, u64, u64, u64)> {
    let settings = model.project.kubernetes.as_ref().unwrap_or_else(|| panic!("the cluster example enables Kubernetes"));
    let layout = placid_targets::k8s::layout::Layout::new(model, settings).unwrap_or_else(|error| panic!("{error:?}"));
    let cells = model.cells();
    let gpus = cells.gpus(model);
    let quotas = placid_engine::quota::Quotas::new(model);
    let queues: BTreeMap<&str, &Emitted> = of_kind(objects, "ClusterQueue").into_iter().map(|queue| (queue.name(), queue)).collect();
    let mut limits = Vec::new();
    for (team_index, team) in model.teams.iter().enumerate() {
        let team_id = placid_lang::model::TeamId::from_index(team_index);
        for tier_ref in &team.tiers {
            let tier = model.tier(tier_ref.value);
            for pool_index in 0..model.pools.len() {
                let pool = PoolId::from_index(pool_index);
                if !model.tier_may_use(tier, pool) {
                    continue;
                }
                let reserves_here = tier.reservations.iter().any(|reservation| reservation.pool == pool);
                let queue_name = match (&layout.tiers[tier_ref.value.index()].reserved_queue, reserves_here) {
                    (Some(queue), true) => queue.as_str().to_owned(),
                    _ => layout.teams[team_index].object.as_str().to_owned(),
                };
                let Some(queue) = queues.get(queue_name.as_str()) else { continue };
                let flavors: BTreeSet<&str> = layout.cells.of_pool(pool).map(|(_, cell)| cell.name.as_str()).collect();
                let kueue = flavor_quotas(queue)
                    .filter(|quota| flavors.contains(quota["name"].as_str().unwrap_or_default()))
                    .filter_map(|quota| {
                        quota["resources"]
                            .as_array()
                            .and_then(|resources| resources.iter().find(|resource| resource["name"] == "nvidia.com/gpu"))
                    })
                    .map(|resource| quantity(&resource["nominalQuota"]) + resource.get("borrowingLimit").map_or(0, quantity))
                    .max()
                    .unwrap_or(0);
                let language = gpus.most_for_one_workload(model, &cells, team_id, tier_ref.value, pool, None);
                let mut job = placid_engine::job::Job::new(team_id, tier_ref.value, 1);
                job.pool = Some(pool);
                let engine = quotas.limit(quotas.charge(&job, pool)) / u64::from(placid_engine::job::WHOLE_GPU_MILLI);
                limits.push((format!("{} at {} in {}", team.name, tier.name, model.pool(pool).name), kueue, language, engine));
            }
        }
    }
    limits
}

/// A draw's model and the objects emitted for it; `None` for a draw the checker refuses (a
/// reservation above its pool) or the target refuses (two reserved pools sharing nodes),
/// which the properties discard (proptest fails if too many are).
fn emitted_draw(draw: &Draw) -> Option<(placid_lang::checked::Checked, Vec<Emitted>)> {
    let model = redrawn(draw)?;
    let artifacts = placid_targets::k8s::emit(&model).ok()?;
    Some((model, parsed(artifacts)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_group_of_nodes_is_promised_more_than_it_holds_with_overlapping_pools(draw in draws()) {
        let drawn = emitted_draw(&draw);
        prop_assume!(drawn.is_some());
        let Some((model, objects)) = drawn else { return Ok(()) };
        prop_assert!(!of_kind(&objects, "ClusterQueue").is_empty());
        let violations = quota_violations(&model, &objects);
        prop_assert!(violations.is_empty(), "{}", violations.join("\n"));
    }

    #[test]
    fn one_workload_is_admitted_by_the_emitted_queues_up_to_the_languages_figure_and_never_past_the_engines(draw in draws()) {
        let drawn = emitted_draw(&draw);
        prop_assume!(drawn.is_some());
        let Some((model, objects)) = drawn else { return Ok(()) };
        for (what, kueue, language, engine) in one_workload_limits(&model, &objects) {
            prop_assert_eq!(kueue, language, "{}: the queues admit {} GPUs, the language says {}", what, kueue, language);
            // A cell's guarantee is rounded on its own (largest remainder), the engine's on the
            // pool's sum: one GPU apart at most (docs/semantics.md section 4).
            prop_assert!(kueue <= engine + 1, "{}: the queues admit {} GPUs at once, the engine only {}", what, kueue, engine);
        }
    }
}
