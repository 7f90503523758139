//! Settings one enabled target cannot carry out (issue 19, "no setting that does nothing"):
//! each is a warning at the setting when that target is enabled, naming where it does take
//! effect, so that no one believes a cluster does what its scheduler was never told. The
//! effects test (tests/tests/effects.rs) and docs/language.md ("Where each setting takes
//! effect") list every setting with the places it reaches; these are the gaps between them
//! that a policy can hit. `backfill #false` on Slurm (E168) is the same kind, in `backfill.rs`.

use placid_engine::plan::stage_job;
use placid_engine::sim::verdict_in;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{KubernetesSettings, Model, PlanId, Preemption};

use super::empty::Empty;

pub(super) fn check(model: &Model, empty: &Empty, diagnostics: &mut Diagnostics) {
    if model.project.kubernetes.is_some() {
        exempt_on_kubernetes(model, diagnostics);
        stages_beyond_one_cell(model, empty, diagnostics);
        scores_on_kubernetes(model, diagnostics);
        telemetry_on_kubernetes(model, diagnostics);
    }
    if model.project.slurm.is_some() {
        score_on_slurm(model, diagnostics);
    }
}

/// Kueue preempts a workload whatever it has run: it has no minimum run time before
/// preemption, and the Kubernetes target emits none.
fn exempt_on_kubernetes(model: &Model, diagnostics: &mut Diagnostics) {
    for tier in model.tiers.iter().filter(|tier| tier.exempt.is_some() && matches!(tier.preemption.value, Preemption::Window { .. })) {
        diagnostics.push(
            Diagnostic::warning(
                Code::ExemptNotOnKubernetes,
                tier.preemption.span,
                format!("Kubernetes may preempt tier `{}`'s jobs before their `exempt` time: Kueue has no minimum run time", tier.name),
            )
            .label("`exempt` takes effect on Slurm (`PreemptExemptTime`) and in the engine only")
            .help("accept that Kueue may preempt these jobs at once, or drop `exempt`"),
        );
    }
}

/// Kueue admits a workload on one flavor, and the Kubernetes target makes a flavor of each
/// cell: a stage larger than the most its queue holds in any one cell of its pool stays
/// pending there, where the engine and Slurm run it across the cells. Stages the engine
/// rejects as well have their error already; MIG instances are outside the queues' quotas.
fn stages_beyond_one_cell(model: &Model, empty: &Empty, diagnostics: &mut Diagnostics) {
    let cells = model.cells();
    let gpus = cells.gpus(model);
    for (plan_index, plan) in model.plans.iter().enumerate() {
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            if stage.class.as_ref().is_some_and(|class| model.class(class.value).mig.is_some()) {
                continue;
            }
            let most = gpus.most_for_one_workload(model, &cells, plan.team.value, stage.tier.value, stage.pool.value, stage.capacity);
            if u64::from(stage.gpus.value) <= most {
                continue;
            }
            let job = stage_job(model, PlanId::from_index(plan_index), stage_index, 0);
            if verdict_in(model, &empty.quotas, &empty.cluster, &job, stage.pool.value).is_err() {
                continue;
            }
            let pool = model.pool(stage.pool.value);
            diagnostics.push(
                Diagnostic::warning(
                    Code::StageExceedsOneCell,
                    stage.gpus.span,
                    format!(
                        "Kueue never admits stage `{}` of plan `{}`: it asks for {} GPUs, but the most its queue holds on one flavor of pool `{}` is {most}",
                        stage.name, plan.name, stage.gpus.value, pool.name
                    ),
                )
                .label("more than one cell's quota")
                .with_secondary(pool.span, "its cells are its flavors")
                .help(format!(
                    "Kueue admits a workload on one flavor (one per cell: nodes of one price and capacity kind that the same pools reach), within its queue's quota there, which is split per cell; the engine and Slurm count the pool as a whole: use at most {most} GPUs per trial on Kubernetes, or give the team a larger share"
                )),
            );
        }
    }
}

/// kube-scheduler calls one extender, which serves one score: a stage whose score is another,
/// or any stage score without an extender, is placed by kube-scheduler's own scoring there.
fn scores_on_kubernetes(model: &Model, diagnostics: &mut Diagnostics) {
    let served = model.project.kubernetes.as_ref().and_then(KubernetesSettings::served_score);
    for plan in &model.plans {
        for stage in &plan.stages {
            let Some(score) = &stage.score else { continue };
            if served == Some(score.value) {
                continue;
            }
            let why = match served {
                Some(served) => format!("the extender serves score `{}`", model.score(served).name),
                None => "the target deploys no extender".to_owned(),
            };
            diagnostics.push(
                Diagnostic::warning(
                    Code::StageScoreNotServed,
                    score.span,
                    format!(
                        "Kubernetes places stage `{}` of plan `{}` without score `{}`: {why}",
                        stage.name,
                        plan.name,
                        model.score(score.value).name
                    ),
                )
                .label("not served to kube-scheduler")
                .help("serve this score with the target's `extender score=`, or drop the stage's `score` for Kubernetes"),
            );
        }
    }
}

/// The deployed extender reads the policy's telemetry from the Prometheus its `prometheus=`
/// names: a telemetry block without one does not reach it (a warning), and an address without
/// a telemetry block would be ignored (an error).
fn telemetry_on_kubernetes(model: &Model, diagnostics: &mut Diagnostics) {
    let Some(extender) = model.project.kubernetes.as_ref().and_then(|settings| settings.extender.as_ref()) else { return };
    match (&model.telemetry, &extender.prometheus) {
        (Some(telemetry), None) => diagnostics.push(
            Diagnostic::warning(
                Code::TelemetryNotDeployed,
                telemetry.span,
                "the deployed extender reads no Prometheus: it scores NVLink utilisation as 0 and throttles nothing",
            )
            .label("takes effect in `placid extender DIR --prometheus` and `placid simulate --telemetry` only")
            .with_secondary(extender.span, "no `prometheus=`")
            .help("name the cluster's Prometheus: `extender ... prometheus=\"prometheus-operated.monitoring.svc:9090\"`"),
        ),
        (None, Some(prometheus)) => diagnostics.push(
            Diagnostic::error(
                Code::ExtenderPrometheusWithoutTelemetry,
                prometheus.span,
                "the extender names a Prometheus, but the policy reads no telemetry",
            )
            .label("nothing to read here")
            .help("declare a `telemetry` block (docs/language.md, \"Telemetry\"), or remove `prometheus=`"),
        ),
        _ => {}
    }
}

/// Slurm has no node scoring placid can program: a stage's score ranks nodes through the
/// Kubernetes scheduler extender only.
fn score_on_slurm(model: &Model, diagnostics: &mut Diagnostics) {
    for plan in &model.plans {
        for stage in &plan.stages {
            let Some(score) = &stage.score else { continue };
            diagnostics.push(
                Diagnostic::warning(
                    Code::ScoreNotOnSlurm,
                    score.span,
                    format!(
                        "Slurm places stage `{}` of plan `{}` without score `{}`",
                        stage.name,
                        plan.name,
                        model.score(score.value).name
                    ),
                )
                .label("the score ranks nodes on Kubernetes only")
                .help("accept Slurm's own node order for this stage, or run it on Kubernetes to have it scored"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    const SLURM: &str = "target \"slurm\" version=\"22.05\" cluster=\"t\"\n";
    const KUBERNETES: &str = "target \"kubernetes\" version=\"1.34\" {\n    extender image=\"r.example/placid:1\" ignorable=#false\n}\n";

    /// The codes `check` reports for a project with `targets`, a tier with `preemption`, and a
    /// plan whose first stage has `first` (properties).
    fn codes(targets: &str, preemption: &str, first: &str) -> Vec<Code> {
        let (codes, has_errors) = all_codes(targets, preemption, first);
        assert!(!has_errors, "{codes:?}");
        codes
    }

    /// [`codes`], errors included, and whether there were any.
    fn all_codes(targets: &str, preemption: &str, first: &str) -> (Vec<Code>, bool) {
        let (_, diagnostics) = crate::testing::check_project(
            targets,
            "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}\n",
            &format!(
                "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"top\" {{\n    priority 10\n    preemption \"never\"\n}}\ntier \"low\" {{\n    priority 1\n    {preemption}\n}}\nteam \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"low\"\n}}\nscore \"s\" {{\n    prefer \"min\"\n    expr \"node.gpus_free\"\n}}\nplan \"p\" team=\"t\" {{\n    stage \"a\" tier=\"low\" pool=\"all\" gpus=1 trials=2 {first} {{ {RUNS} }}\n    stage \"b\" tier=\"low\" pool=\"all\" gpus=1 after=\"a\" {{ {RUNS} }}\n}}\n"
            ),
        );
        (diagnostics.iter().map(|diagnostic| diagnostic.code).collect(), diagnostics.has_errors())
    }

    /// What both stages run, so that neither target misses it.
    const RUNS: &str = "command \"train\"; image \"r.example/train:1\"";

    const WINDOW: &str = "preemption window=\"1m\"";
    const EXEMPT: &str = "preemption window=\"1m\" exempt=\"10m\"";

    #[test]
    fn exempt_warns_only_with_kubernetes() {
        assert_eq!(codes(KUBERNETES, EXEMPT, ""), [Code::ExemptNotOnKubernetes]);
        assert_eq!(codes(SLURM, EXEMPT, ""), []);
        assert_eq!(codes(KUBERNETES, WINDOW, ""), []);
    }

    #[test]
    fn a_stage_score_the_extender_does_not_serve_warns_on_kubernetes() {
        let bare = "target \"kubernetes\" version=\"1.34\"\n";
        assert_eq!(codes(bare, WINDOW, "score=\"s\""), [Code::ScoreWithoutExtender, Code::StageScoreNotServed]);
        assert_eq!(codes(KUBERNETES, WINDOW, "score=\"s\""), []);
    }

    #[test]
    fn telemetry_warns_that_the_deployed_extender_does_not_read_it() {
        let telemetry = format!("{KUBERNETES}telemetry half-life=\"5m\"\n");
        assert_eq!(codes(&telemetry, WINDOW, ""), [Code::TelemetryNotDeployed]);
        assert_eq!(codes("telemetry half-life=\"5m\"\n", WINDOW, ""), []);
        let with_prometheus = KUBERNETES.replace("ignorable=#false", "ignorable=#false prometheus=\"prom.monitoring.svc:9090\"");
        assert_eq!(codes(&format!("{with_prometheus}telemetry half-life=\"5m\"\n"), WINDOW, ""), []);
        assert_eq!(all_codes(&with_prometheus, WINDOW, ""), (vec![Code::ExtenderPrometheusWithoutTelemetry], true));
    }

    #[test]
    fn a_stage_score_warns_only_with_slurm() {
        assert_eq!(codes(SLURM, WINDOW, "score=\"s\""), [Code::ScoreNotOnSlurm]);
        assert_eq!(codes(KUBERNETES, WINDOW, "score=\"s\""), []);
        assert_eq!(codes(SLURM, WINDOW, ""), []);
    }

    /// The codes of a Kubernetes project whose pool `all` holds a spot node and an on-demand
    /// node of 4 GPUs each (two cells), with one stage of `gpus` at locality `any`.
    fn split_pool_codes(gpus: u32) -> Vec<Code> {
        let gpu_lines = "gpu 0 model=\"H200\"; gpu 1 model=\"H200\"; gpu 2 model=\"H200\"; gpu 3 model=\"H200\"";
        let nodes =
            format!("node \"s\" arch=\"x86_64\" capacity=\"spot\" {{ {gpu_lines} }}\nnode \"o\" arch=\"x86_64\" {{ {gpu_lines} }}\n");
        let policy = format!(
            "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"low\" {{\n    priority 1\n    {WINDOW}\n}}\nteam \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"low\"\n}}\nclass \"wide\" {{ locality \"any\" }}\nplan \"p\" team=\"t\" {{\n    stage \"a\" tier=\"low\" class=\"wide\" pool=\"all\" gpus={gpus} {{ {RUNS} }}\n}}\n"
        );
        let (_, diagnostics) = crate::testing::check_project("target \"kubernetes\" version=\"1.34\"\n", &nodes, &policy);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn a_stage_larger_than_any_one_cell_of_its_pool_warns_on_kubernetes() {
        // The engine runs 6 GPUs across both nodes; Kueue admits on one flavor of 4.
        assert_eq!(split_pool_codes(4), []);
        assert_eq!(split_pool_codes(6), [Code::StageExceedsOneCell]);
    }
}
