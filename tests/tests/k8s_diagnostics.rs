//! The Kubernetes target's diagnostics (E050-E059): a small in-memory project per case, with
//! the expected code and the source text its primary span must point at.

use placid_driver::build::{Selection, compile};
use placid_lang::diag::Code;
use placid_lang::source::MemoryWorld;
use placid_targets::TargetKind;

const PROJECT: &str = r#"project "demo"
inventory "inventory/*.kdl"
include "policy/*.kdl"
target "kubernetes" version="1.34" label-prefix="placid.dev"
"#;

const NODES: &str = r#"node "n1" arch="x86_64" rack="r1" capacity="on-demand" {
    cpu harts=8 numa-nodes=1
    memory "64GiB"
    gpu 0 model="L40S" memory="48GiB" numa=0 mig="disabled"
    gpu 1 model="L40S" memory="48GiB" numa=0 mig="disabled"
}
"#;

/// Compiles `policy` and asserts a diagnostic `code` whose span covers text containing `at`.
fn check(policy: &str, code: Code, at: &str) {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", PROJECT);
    world.insert("inventory/nodes.kdl", NODES);
    world.insert("policy/policy.kdl", policy);
    let build = compile(&world, &Selection { only: vec![TargetKind::Kubernetes] });
    let found = build.diagnostics.iter().find(|diagnostic| diagnostic.code == code);
    let Some(diagnostic) = found else {
        let all: Vec<String> =
            build.diagnostics.iter().map(|diagnostic| format!("{} {}", diagnostic.code.id(), diagnostic.message)).collect();
        panic!("expected {} for:\n{policy}\ngot: {all:?}", code.id());
    };
    let span = diagnostic.primary.span;
    let text = build.sources.get(span.file).and_then(|file| file.text.get(span.start as usize..span.end as usize)).unwrap_or_default();
    assert!(text.contains(at), "{} points at `{text}`, expected `{at}`", code.id());
    assert!(build.artifacts.is_empty(), "nothing may be emitted when the Kubernetes target has errors");
}

const TEAM: &str =
    "cost-center \"cc\"\nteam \"t\" { share 1; cost-center \"cc\"; tiers \"P1\" }\npool \"all\" { select arch=\"x86_64\" }\n";

#[test]
fn tier_priority_above_1e9_is_refused() {
    check(
        &format!("{TEAM}tier \"P1\" {{ priority 2000000000; preemption window=\"1m\" mode=\"cancel\" }}\n"),
        Code::PriorityClassOutOfRange,
        "2000000000",
    );
}

#[test]
fn tier_named_system_is_refused() {
    let policy = "cost-center \"cc\"\nteam \"t\" { share 1; cost-center \"cc\"; tiers \"system-x\" }\npool \"all\" { select arch=\"x86_64\" }\n\
                  tier \"system-x\" { priority 10; preemption window=\"1m\" mode=\"cancel\" }\n";
    check(policy, Code::PriorityClassReservedName, "system-x");
}

#[test]
fn pools_that_map_to_the_same_flavor_collide() {
    let policy = format!(
        "{TEAM}pool \"gpu_a\" {{ select arch=\"x86_64\" }}\npool \"gpu.a\" {{ select arch=\"x86_64\" }}\n\
                          tier \"P1\" {{ priority 10; preemption window=\"1m\" mode=\"cancel\" }}\n"
    );
    check(&policy, Code::KubernetesNameCollision, "gpu");
}

#[test]
fn a_team_name_that_is_no_dns_label_is_refused() {
    let policy = "cost-center \"cc\"\nteam \"t_\" { share 1; cost-center \"cc\"; tiers \"P1\"; namespace \"t\" }\npool \"all\" { select arch=\"x86_64\" }\n\
                  tier \"P1\" { priority 10; preemption window=\"1m\" mode=\"cancel\" }\n";
    check(policy, Code::KubernetesInvalidName, "t_");
}

#[test]
fn a_pool_label_key_over_63_characters_is_refused() {
    let long = "p".repeat(60);
    let policy = format!(
        "{TEAM}pool \"{long}\" {{ select arch=\"x86_64\" }}\ntier \"P1\" {{ priority 10; preemption window=\"1m\" mode=\"cancel\" }}\n"
    );
    check(&policy, Code::KubernetesInvalidLabel, &long);
}

#[test]
fn a_never_preempted_tier_without_a_reservation_is_refused() {
    check(&format!("{TEAM}tier \"P1\" {{ priority 10; preemption \"never\" }}\n"), Code::KueueEmptyReservedQueue, "P1");
}

#[test]
fn two_reserved_pools_that_share_nodes_are_refused() {
    let policy = "cost-center \"cc\"\nteam \"t\" { share 1; cost-center \"cc\"; tiers \"P0\" }\n\
                  pool \"a\" { select arch=\"x86_64\" }\npool \"b\" { select rack=\"r1\" }\n\
                  tier \"P0\" { priority 10; preemption \"never\"; reserve pool=\"a\" gpus=1; reserve pool=\"b\" gpus=1 }\n";
    check(policy, Code::KubernetesOverlappingReservations, "b");
}

#[test]
fn a_route_tag_that_is_no_label_value_is_refused() {
    let policy =
        format!("{TEAM}tier \"P1\" {{ priority 10; preemption window=\"1m\" mode=\"cancel\" }}\nroute tag=\"sweep-\" tier=\"P1\"\n");
    check(&policy, Code::KubernetesInvalidLabel, "sweep-");
}
