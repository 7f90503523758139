//! Elements with an error of their own are kept, recovered, so that what names them is still
//! checked: a class with each faulty setting as if unwritten, a pool with a faulty selector
//! holding no node. (Tiers and teams: `lower/tier.rs`'s tests.)

use placid_lang::diag::Code;
use placid_lang::model::{Locality, Model};
use placid_lang::source::MemoryWorld;

fn load(policy: &str) -> (Model, Vec<Code>) {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
    world.insert("policy.kdl", policy);
    let compilation = placid_lang::load(&world);
    let codes = compilation.diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
    (compilation.model, codes)
}

#[test]
fn a_class_with_faulty_settings_is_kept_asking_the_least() {
    let (model, codes) = load(
        "class \"c\" {\n    locality \"nod\"\n    mig \"1g.18gb\"\n    platforms \"linux/amd64\" \"linux/riscv6\"\n}\nclass \"ok\" {\n    comm \"high\"\n}\n",
    );
    assert_eq!(codes, [Code::InvalidValue, Code::InvalidValue]);
    let class = &model.classes[0];
    assert!(class.recovered && !model.classes[1].recovered);
    // The faulty locality and platform list as if unwritten; the valid MIG profile kept.
    assert_eq!((class.locality, class.platforms.len(), class.mig.is_some()), (Locality::Any, 0, true));
}

#[test]
fn a_pool_with_a_faulty_selector_is_kept_without_nodes() {
    let (model, codes) =
        load("pool \"p\" {\n    select arch=\"x86_64\"\n    select arch=\"x86\"\n}\npool \"q\" { select arch=\"x86_64\" }\n");
    assert_eq!(codes, [Code::InvalidValue]);
    let found: Vec<(&str, bool, usize)> = model.pools.iter().map(|pool| (pool.name.as_str(), pool.recovered, pool.nodes.len())).collect();
    assert_eq!(found, [("p", true, 0), ("q", false, 1)]);
}

#[test]
fn a_plan_whose_team_is_unknown_keeps_its_stages() {
    let policy = "pool \"all\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 1\n    preemption window=\"1m\"\n}\ncost-center \"cc\"\n\
                  team \"a\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}\n\
                  plan \"p\" team=\"b\" {\n    stage \"x\" tier=\"t\" pool=\"all\" gpus=1\n}\n";
    let (model, codes) = load(policy);
    assert_eq!(codes, [Code::UnresolvedReference]);
    let found: Vec<(bool, usize)> = model.plans.iter().map(|plan| (plan.recovered, plan.stages.len())).collect();
    assert_eq!(found, [(true, 1)]);
    // Without any team there is nothing to stand in: the plan is left out.
    let (model, _) =
        load(&policy.replace("team \"a\"", "cost-center \"unused\"").replace("    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n", ""));
    assert!(model.teams.is_empty() && model.plans.is_empty());
}
