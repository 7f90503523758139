//! What the engine (docs/semantics.md) says can never happen: a plan stage its team's queue
//! can never admit, a never-preempted tier's stage that can land on spot capacity, and a
//! policy test whose expectation no run can meet. The engine answers; this pass gives the
//! answers spans.

use placid_engine::job::WHOLE_GPU_MILLI;
use placid_engine::plan::stage_job;
use placid_engine::sim::verdict_in;
use placid_engine::{Reject, policy_test};
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{ClassId, Model, PlanId, Preemption};

use super::empty::Empty;

/// `unmet_classes`: classes whose lanes or bisection no hardware offers (the lanes pass said
/// so); a test of theirs can never pass for that reason alone.
pub(super) fn check(model: &Model, empty: &Empty, unmet_classes: &[ClassId], diagnostics: &mut Diagnostics) {
    let quotas = &empty.quotas;
    for (plan_index, plan) in model.plans.iter().enumerate() {
        let team = model.team(plan.team.value);
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            // Stages of a tier the team may not use are E030 already; a recovered plan's team is
            // a stand-in (see `Plan::recovered`).
            if plan.recovered || !team.tiers.iter().any(|tier| tier.value == stage.tier.value) {
                continue;
            }
            let job = stage_job(model, PlanId::from_index(plan_index), stage_index, 0);
            // A recovered team's share is a stand-in (see `Team::recovered`): its quota is unknown.
            // So is a recovered pool's size (see `Pool::recovered`).
            if !team.recovered
                && !model.pool(stage.pool.value).recovered
                && verdict_in(model, quotas, &empty.cluster, &job, stage.pool.value) == Err(Reject::ExceedsQuota)
            {
                let pool = model.pool(stage.pool.value);
                let most = quotas.pool_limit(&job, stage.pool.value) / u64::from(WHOLE_GPU_MILLI);
                let (holder, help) = match quotas.reserves(stage.tier.value, stage.pool.value) {
                    false => (
                        format!("team `{}` can hold at most {most} in pool `{}`, borrowing included", team.name, pool.name),
                        "lower `gpus`, raise the team's share, give the team a backfill tier, or reserve capacity for the tier in this pool",
                    ),
                    true => (
                        format!("tier `{}` reserves {most} in pool `{}` and borrows nothing", model.tier(stage.tier.value).name, pool.name),
                        "lower `gpus`, or raise the tier's reservation in this pool: a reservation neither lends nor borrows",
                    ),
                };
                diagnostics.push(
                    Diagnostic::error(
                        Code::ExceedsQuota,
                        stage.gpus.span,
                        format!(
                            "stage `{}` of plan `{}` can never be admitted: it asks for {} GPUs, but {holder}",
                            stage.name, plan.name, stage.gpus.value
                        ),
                    )
                    .label("more than the queue ever admits")
                    .help(help),
                );
            }
            let tier = model.tier(stage.tier.value);
            // `Model::tier_may_use` keeps such a tier out of every pool holding spot nodes, as
            // Slurm's partitions do, whatever capacity kind the stage asks for.
            if tier.preemption.value == Preemption::Never && tier.reservations.is_empty() && !model.tier_may_use(tier, stage.pool.value) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::NeverPreemptedOnSpot,
                        stage.tier.span,
                        format!(
                            "stage `{}` runs at tier `{}`, which is never preempted, but pool `{}` holds spot nodes the provider may reclaim",
                            stage.name,
                            tier.name,
                            model.pool(stage.pool.value).name
                        ),
                    )
                    .label("never preempted")
                    .with_secondary(stage.pool.span, "holds spot capacity")
                    .help("move the stage to a pool without spot nodes, or give the tier a preemption window"),
                );
            }
        }
    }
    // What a test expects depends on every tier, team and class; with a stand-in setting among
    // them (an error of its own is reported already), "can never pass" could be its echo.
    if model.tiers.iter().any(|tier| tier.recovered)
        || model.teams.iter().any(|team| team.recovered)
        || model.classes.iter().any(|class| class.recovered)
        || model.pools.iter().any(|pool| pool.recovered)
    {
        return;
    }
    for test in &model.tests {
        if test.jobs.iter().any(|job| job.class.as_ref().is_some_and(|class| unmet_classes.contains(&class.value))) {
            continue;
        }
        for (span, why) in policy_test::impossible(model, test) {
            diagnostics.push(
                Diagnostic::error(Code::TestExpectationImpossible, span, format!("test `{}` can never pass: {why}", test.name))
                    .label("impossible expectation")
                    .help("fix the expectation, or the policy it describes"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    const INVENTORY: &str = "node \"spot-1\" arch=\"x86_64\" capacity=\"spot\" {\n    cost gpu-hour=(usd)1\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\nnode \"od-1\" arch=\"x86_64\" capacity=\"on-demand\" {\n    cost gpu-hour=(usd)2\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n";

    /// Two teams of equal share in an 8-GPU pool; `a` has only the non-backfill tier `t`, so
    /// it is guaranteed 4 and borrows nothing.
    fn policy(extra: &str) -> String {
        format!(
            "pool \"all\" {{ select arch=\"x86_64\" }}\npool \"od\" {{ select capacity=\"on-demand\" }}\ntier \"t\" {{\n    priority 10\n    preemption window=\"1m\" mode=\"cancel\"\n}}\ntier \"prod\" {{\n    priority 100\n    preemption \"never\"\n}}\ntier \"bf\" {{\n    priority 1\n    preemption window=\"1m\" mode=\"cancel\"\n    backfill #true\n}}\ncost-center \"cc\"\nteam \"a\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"prod\" \"t\"\n}}\nteam \"b\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"bf\"\n}}\n{extra}"
        )
    }

    fn errors(policy: &str) -> Vec<Code> {
        crate::testing::error_codes("", INVENTORY, policy)
    }

    #[test]
    fn a_stage_beyond_the_team_quota_can_never_be_admitted() {
        let over = policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"t\" pool=\"all\" gpus=5\n}\n");
        assert_eq!(errors(&over), [Code::ExceedsQuota]);
        let within = policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"t\" pool=\"all\" gpus=4\n}\n");
        assert_eq!(errors(&within), []);
        // Team b backfills, so it may borrow a's guarantee: all 8 GPUs.
        let borrowing = policy("plan \"p\" team=\"b\" {\n    stage \"s\" tier=\"bf\" pool=\"all\" gpus=8\n}\n");
        assert_eq!(errors(&borrowing), []);
    }

    #[test]
    fn a_team_with_an_error_of_its_own_has_no_quota_to_exceed() {
        // Team a's share is faulty: it stands in as 1, the same as before, yet reports nothing.
        let faulty =
            policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"t\" pool=\"all\" gpus=5\n}\n").replacen("share 1", "share \"one\"", 1);
        assert_eq!(errors(&faulty), [Code::InvalidValue]);
        let impossible = policy("test \"big\" {\n    job team=\"a\" tier=\"t\" gpus=64\n    expect \"placed\" pool=\"all\"\n}\n");
        assert_eq!(errors(&impossible.replacen("share 1", "share \"one\"", 1)), [Code::InvalidValue]);
    }

    #[test]
    fn a_never_preempted_stage_may_not_land_on_spot() {
        let spot = policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"prod\" pool=\"all\" gpus=1\n}\n");
        assert_eq!(errors(&spot), [Code::NeverPreemptedOnSpot]);
        // The tier may not use a pool that holds spot nodes at all (`Model::tier_may_use`), as
        // Slurm's partitions, which are not split by capacity kind, cannot let it in part way.
        let restricted = policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"prod\" pool=\"all\" gpus=1 capacity=\"on-demand\"\n}\n");
        assert_eq!(errors(&restricted), [Code::NeverPreemptedOnSpot]);
        let on_demand = policy("plan \"p\" team=\"a\" {\n    stage \"s\" tier=\"prod\" pool=\"od\" gpus=1\n}\n");
        assert_eq!(errors(&on_demand), []);
    }

    #[test]
    fn a_test_expecting_an_impossible_placement_is_reported() {
        let impossible = policy("test \"big\" {\n    job team=\"a\" tier=\"t\" gpus=64\n    expect \"placed\" pool=\"all\"\n}\n");
        assert_eq!(errors(&impossible), [Code::TestExpectationImpossible]);
        let other_pool =
            policy("test \"elsewhere\" {\n    job team=\"a\" tier=\"t\" gpus=1 pool=\"od\"\n    expect \"placed\" pool=\"all\"\n}\n");
        assert_eq!(errors(&other_pool), [Code::TestExpectationImpossible]);
        let possible = policy("test \"small\" {\n    job team=\"a\" tier=\"t\" gpus=2\n    expect \"placed\" pool=\"all\"\n}\n");
        assert_eq!(errors(&possible), []);
    }
}
