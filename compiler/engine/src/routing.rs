//! Tag routing at submission: a job whose tag a `route` names gets the routed tier and class,
//! through [`Model::routing`], the resolution the Slurm and Kubernetes targets use too. A team
//! that may not use the routed tier keeps it here, so the verdict rejects the job
//! (`tier-not-allowed`), as job_submit.lua refuses it.

use placid_lang::model::{Model, Routing};

use crate::job::Job;

/// Applies the route of `job`'s tag, if any.
pub fn apply(model: &Model, job: &mut Job) {
    let Some(tag) = job.tag.as_deref() else {
        return;
    };
    match model.routing(tag, job.team) {
        Routing::Routed { tier, class } => {
            job.tier = tier;
            job.class = class.or(job.class);
        }
        Routing::Refused { tier, .. } => job.tier = tier,
        Routing::Unrouted => {}
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::source::MemoryWorld;

    use crate::policy_test::{TestResult, run};
    use crate::rank::Neutral;

    /// The policy's tests' results, and what `impossible` (the checker's E104) says of them.
    fn results(tests: &str) -> Vec<TestResult> {
        let (model, _) = load(tests);
        model.tests.iter().map(|test| run(&model, test, Neutral)).collect()
    }

    /// The model of the policy with `tests`, and the expectations `impossible` finds.
    fn load(tests: &str) -> (placid_lang::model::Model, Vec<String>) {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", "node \"n\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}\n");
        let policy = format!(
            "pool \"all\" {{ select arch=\"x86_64\" }}\ntier \"P0\" {{ priority 1000; preemption \"never\"; reserve pool=\"all\" gpus=2 }}\n\
             tier \"P2\" {{ priority 100; preemption window=\"1m\" mode=\"cancel\" }}\ncost-center \"cc\"\n\
             team \"prod\" {{ share 1; cost-center \"cc\"; tiers \"P0\" \"P2\" }}\nteam \"research\" {{ share 1; cost-center \"cc\"; tiers \"P2\" }}\n\
             route tag=\"prod-sla\" tier=\"P0\"\n{tests}"
        );
        world.insert("policy.kdl", policy);
        let compilation = placid_lang::load(&world);
        assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
        let model = compilation.model;
        let impossible = model.tests.iter().flat_map(|test| crate::policy_test::impossible(&model, test)).map(|(_, why)| why).collect();
        (model, impossible)
    }

    #[test]
    fn a_tag_routes_the_job_or_refuses_a_team_without_the_tier() {
        // P0 reserves both GPUs, so P2 has no quota in the pool: an untagged P2 job is
        // rejected for quota, the same job tagged prod-sla runs at P0, and research, which
        // may not use P0, is refused for the tier.
        let job = |name: &str, team: &str, tag: &str, expect: &str| {
            format!("test \"{name}\" {{\n    job team=\"{team}\" tier=\"P2\" gpus=2{tag}\n    expect {expect}\n}}\n")
        };
        let tests = [
            job("untagged", "prod", "", "\"rejected\" reason=\"exceeds-quota\""),
            job("routed", "prod", " tag=\"prod-sla\"", "\"placed\" pool=\"all\""),
            job("refused", "research", " tag=\"prod-sla\"", "\"rejected\" reason=\"tier-not-allowed\""),
        ];
        assert_eq!(results(&tests.concat()), [TestResult::Passed, TestResult::Passed, TestResult::Passed]);
        // The checker judges a tagged job at its routed tier too: placed at P0, not an
        // impossible P2 placement for want of quota.
        assert_eq!(load(&tests[1]).1, Vec::<String>::new());
    }
}
