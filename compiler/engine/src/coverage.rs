//! Test coverage (`placid test --coverage`), like `opa test --coverage`: which tiers, teams,
//! pools, classes, routes and plan stages a policy's tests exercise. A test job exercises
//! its team, and the tier and class it runs at once its tag is routed (as the engine submits
//! it); the route of its tag; the pool it asks for, or, without one, each pool an `expect
//! "placed"` of it names; and a plan stage whose team, tier, class and pool are all the job's,
//! so that the job is what the stage submits.

use std::collections::BTreeSet;

use placid_lang::model::{Model, Outcome, PolicyTest, PoolId};

use crate::policy_test::job_of;
use crate::routing;

/// One kind of element: every declared one, by name in declaration order, and whether a test
/// exercises it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Covered {
    /// The elements, `(name, covered)`; a plan stage is named `plan/stage`, a route by its tag.
    pub elements: Vec<(String, bool)>,
}

impl Covered {
    /// How many elements a test exercises.
    pub fn count(&self) -> usize {
        self.elements.iter().filter(|(_, covered)| *covered).count()
    }

    /// The names no test exercises.
    pub fn missed(&self) -> impl Iterator<Item = &str> {
        self.elements.iter().filter(|(_, covered)| !covered).map(|(name, _)| name.as_str())
    }
}

/// What `tests` exercise of `model`, kind by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Priority tiers.
    pub tiers: Covered,
    /// Teams.
    pub teams: Covered,
    /// Pools.
    pub pools: Covered,
    /// Job classes.
    pub classes: Covered,
    /// Routes, by tag.
    pub routes: Covered,
    /// Plan stages, as `plan/stage`.
    pub stages: Covered,
}

impl Coverage {
    /// The kinds in report order, with their plural names.
    pub fn kinds(&self) -> [(&'static str, &Covered); 6] {
        [
            ("tiers", &self.tiers),
            ("teams", &self.teams),
            ("pools", &self.pools),
            ("classes", &self.classes),
            ("routes", &self.routes),
            ("plan stages", &self.stages),
        ]
    }
}

/// The coverage of `tests` (some or all of `model.tests`).
pub fn coverage<'m>(model: &Model, tests: impl IntoIterator<Item = &'m PolicyTest>) -> Coverage {
    let (mut tiers, mut teams, mut pools, mut classes, mut tags) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut stages = BTreeSet::new();
    for test in tests {
        for (index, test_job) in test.jobs.iter().enumerate() {
            let mut job = job_of(test_job);
            routing::apply(model, &mut job);
            if let Some(tag) = &job.tag
                && model.route_of(tag).is_some()
            {
                tags.insert(tag.clone());
            }
            teams.insert(job.team);
            tiers.insert(job.tier);
            classes.extend(job.class);
            // Where the job runs: the pool it asks for, or where the test expects it placed.
            let landing: Vec<PoolId> = match job.pool {
                Some(pool) => vec![pool],
                None => test
                    .expects
                    .iter()
                    .filter(|expect| expect.job == index)
                    .filter_map(|expect| match &expect.outcome {
                        Outcome::Placed(place) => place.pool.as_ref().map(|pool| pool.value),
                        _ => None,
                    })
                    .collect(),
            };
            pools.extend(landing.iter().copied());
            for (plan_index, plan) in model.plans.iter().enumerate() {
                for (stage_index, stage) in plan.stages.iter().enumerate() {
                    if plan.team.value == job.team
                        && stage.tier.value == job.tier
                        && stage.class.as_ref().map(|class| class.value) == job.class
                        && landing.contains(&stage.pool.value)
                    {
                        stages.insert((plan_index, stage_index));
                    }
                }
            }
        }
    }
    Coverage {
        tiers: Covered {
            elements: model
                .tiers
                .iter()
                .enumerate()
                .map(|(index, tier)| (tier.name.to_string(), tiers.iter().any(|id| id.index() == index)))
                .collect(),
        },
        teams: Covered {
            elements: model
                .teams
                .iter()
                .enumerate()
                .map(|(index, team)| (team.name.to_string(), teams.iter().any(|id| id.index() == index)))
                .collect(),
        },
        pools: Covered {
            elements: model
                .pools
                .iter()
                .enumerate()
                .map(|(index, pool)| (pool.name.to_string(), pools.iter().any(|id| id.index() == index)))
                .collect(),
        },
        classes: Covered {
            elements: model
                .classes
                .iter()
                .enumerate()
                .map(|(index, class)| (class.name.to_string(), classes.iter().any(|id| id.index() == index)))
                .collect(),
        },
        routes: Covered {
            elements: model.routes.iter().map(|route| (route.tag.value.to_string(), tags.contains(route.tag.value.as_str()))).collect(),
        },
        stages: Covered {
            elements: model
                .plans
                .iter()
                .enumerate()
                .flat_map(|(plan_index, plan)| {
                    let stages = &stages;
                    plan.stages.iter().enumerate().map(move |(stage_index, stage)| {
                        (format!("{}/{}", plan.name, stage.name), stages.contains(&(plan_index, stage_index)))
                    })
                })
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::source::MemoryWorld;

    use super::coverage;

    #[test]
    fn tests_cover_what_their_jobs_name_route_and_land_in() {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", "node \"n\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}\n");
        world.insert(
            "policy.kdl",
            "pool \"all\" { select arch=\"x86_64\" }\npool \"again\" { select arch=\"x86_64\" }\n\
             tier \"P0\" { priority 1000; preemption \"never\" }\ntier \"P2\" { priority 100; preemption window=\"1m\" mode=\"cancel\" }\n\
             class \"c\" { locality \"node\" }\ncost-center \"cc\"\n\
             team \"prod\" { share 1; cost-center \"cc\"; tiers \"P0\" \"P2\" }\nteam \"idle\" { share 1; cost-center \"cc\"; tiers \"P2\" }\n\
             route tag=\"sla\" tier=\"P0\" class=\"c\"\nroute tag=\"other\" tier=\"P2\"\n\
             plan \"p\" team=\"prod\" {\n    stage \"a\" tier=\"P0\" class=\"c\" pool=\"all\" gpus=1\n    stage \"b\" tier=\"P2\" pool=\"all\" gpus=1\n}\n\
             test \"t\" {\n    job team=\"prod\" tier=\"P2\" gpus=1 tag=\"sla\"\n    expect \"placed\" pool=\"all\"\n}\n",
        );
        let compilation = placid_lang::load(&world);
        assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
        let model = &compilation.model;
        let found = coverage(model, &model.tests);
        // The tag routes the P2 job to P0 as class c, landing in `all`: stage a's shape.
        let covered: Vec<(&str, usize, Vec<&str>)> =
            found.kinds().iter().map(|(kind, covered)| (*kind, covered.count(), covered.missed().collect())).collect();
        assert_eq!(
            covered,
            [
                ("tiers", 1, vec!["P2"]),
                ("teams", 1, vec!["idle"]),
                ("pools", 1, vec!["again"]),
                ("classes", 1, vec![]),
                ("routes", 1, vec!["other"]),
                ("plan stages", 1, vec!["p/b"]),
            ]
        );
        assert_eq!(coverage(model, []).tiers.count(), 0);
    }
}
