//! What a stage runs, against the targets that run it and the nodes it may land on: a pod
//! needs an image (E172), a Slurm stage script a command (E173, a warning: the submitter's
//! `PLACID_STAGE_COMMAND` stands in), and `cpus`/`memory` per node must fit some GPU node of
//! the stage's pool (E174). Each reads [`Model::launch`], the one combination of a stage's
//! settings with its class's.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Launch, Model, Plan, Stage, env};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for plan in &model.plans {
        for stage in &plan.stages {
            let launch = model.launch(stage);
            if model.project.kubernetes.is_some() && launch.image.is_none() {
                diagnostics.push(without_image(model, plan, stage));
            }
            if model.project.slurm.is_some() && launch.command.is_none() {
                diagnostics.push(without_command(plan, stage));
            }
            fits_a_node(model, plan, stage, &launch, diagnostics);
        }
    }
}

fn without_image(model: &Model, plan: &Plan, stage: &Stage) -> Diagnostic {
    let help = match &stage.class {
        Some(class) => format!("add `image \"...\"` to the stage, or to class `{}`", model.class(class.value).name),
        None => "add `image \"...\"` to the stage, or give it a class with an image".to_owned(),
    };
    Diagnostic::error(
        Code::StageWithoutImage,
        stage.span,
        format!("stage `{}` of plan `{}` runs on Kubernetes without an image", stage.name, plan.name),
    )
    .label("no image on the stage or its class")
    .help(help)
}

fn without_command(plan: &Plan, stage: &Stage) -> Diagnostic {
    Diagnostic::warning(
        Code::StageWithoutCommand,
        stage.span,
        format!("stage `{}` of plan `{}` names no command: on Slurm it runs `${}`", stage.name, plan.name, env::STAGE_COMMAND),
    )
    .label("no command on the stage or its class")
    .help("add `command \"program\" \"argument\" ...` to the stage or its class")
}

/// `cpus` and `memory` are per node of a trial: some GPU node of the pool must have both.
fn fits_a_node(model: &Model, plan: &Plan, stage: &Stage, launch: &Launch, diagnostics: &mut Diagnostics) {
    let nodes: Vec<_> = model.pool(stage.pool.value).nodes.iter().map(|id| model.node(*id)).filter(|node| node.gpu_count() > 0).collect();
    if nodes.is_empty() {
        // An empty pool is the capacity checks' to report.
        return;
    }
    if let Some(cpus) = &launch.cpus
        && !nodes.iter().any(|node| node.cpu.harts >= cpus.value)
    {
        let most = nodes.iter().map(|node| node.cpu.harts).max().unwrap_or_default();
        diagnostics.push(
            Diagnostic::error(
                Code::StageResourcesUnavailable,
                cpus.span,
                format!(
                    "stage `{}` of plan `{}` asks {} CPUs per node; the GPU nodes of pool `{}` have at most {most}",
                    stage.name,
                    plan.name,
                    cpus.value,
                    model.pool(stage.pool.value).name
                ),
            )
            .label("more than any node has")
            .help(format!("ask at most {most}, or use a pool with larger nodes")),
        );
    }
    if let Some(memory) = &launch.memory {
        // A node whose memory the inventory does not say may have enough.
        let known: Vec<_> = nodes.iter().map(|node| node.memory).collect();
        if known.iter().all(Option::is_some) && !known.iter().flatten().any(|bytes| bytes.0 >= memory.value.0) {
            let most = known.iter().flatten().map(|bytes| bytes.0).max().unwrap_or_default();
            diagnostics.push(
                Diagnostic::error(
                    Code::StageResourcesUnavailable,
                    memory.span,
                    format!(
                        "stage `{}` of plan `{}` asks {} of memory per node; the GPU nodes of pool `{}` have at most {}",
                        stage.name,
                        plan.name,
                        memory.value,
                        model.pool(stage.pool.value).name,
                        placid_lang::units::Bytes(most)
                    ),
                )
                .label("more than any node has")
                .help("ask less, or use a pool with larger nodes"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::check_project;

    const NODES: &str = "node \"a\" arch=\"x86_64\" {\n    cpu harts=64\n    memory \"512GiB\"\n    gpu 0 model=\"H200\"\n}\n";

    const POLICY: &str = r#"
pool "gpu" { select arch="x86_64" }
cost-center "cc"
tier "P1" { priority 10; preemption "never"; max-time "1d" }
team "t" { share 1; cost-center "cc"; tiers "P1" }
class "c" { image "r.example/train:1"; command "train"; cpus 4 }
plan "p" team="t" {
    stage "s" tier="P1" class="c" pool="gpu" gpus=1 STAGE
}
"#;

    fn codes(project: &str, stage: &str) -> Vec<Code> {
        let policy = POLICY.replace("STAGE", stage);
        check_project(project, NODES, &policy).1.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn a_kubernetes_stage_needs_an_image_from_itself_or_its_class() {
        let kubernetes = "target \"kubernetes\" version=\"1.34\"\n";
        assert!(!codes(kubernetes, "").contains(&Code::StageWithoutImage), "the class's image serves");
        let classless = POLICY.replace(" class=\"c\"", "").replace("STAGE", "");
        let found: Vec<Code> = check_project(kubernetes, NODES, &classless).1.iter().map(|diagnostic| diagnostic.code).collect();
        assert!(found.contains(&Code::StageWithoutImage), "{found:?}");
        let own = POLICY.replace(" class=\"c\"", "").replace("STAGE", "{ image \"r.example/eval:1\" }");
        let found: Vec<Code> = check_project(kubernetes, NODES, &own).1.iter().map(|diagnostic| diagnostic.code).collect();
        assert!(!found.contains(&Code::StageWithoutImage), "{found:?}");
    }

    #[test]
    fn a_slurm_stage_without_a_command_is_warned() {
        let slurm = "target \"slurm\" version=\"22.05\"\n";
        assert!(!codes(slurm, "").contains(&Code::StageWithoutCommand));
        let classless = POLICY.replace(" class=\"c\"", "").replace("STAGE", "");
        let (_, found) = check_project(slurm, NODES, &classless);
        let warning = found.iter().find(|diagnostic| diagnostic.code == Code::StageWithoutCommand).expect("E173");
        assert_eq!(warning.severity, placid_lang::diag::Severity::Warning, "PLACID_STAGE_COMMAND stands in");
    }

    #[test]
    fn cpus_and_memory_must_fit_a_node_of_the_pool() {
        assert!(codes("", "{ cpus 100000 }").contains(&Code::StageResourcesUnavailable));
        assert!(codes("", "{ memory \"4096GiB\" }").contains(&Code::StageResourcesUnavailable));
        assert!(!codes("", "{ cpus 1; memory \"1GiB\" }").contains(&Code::StageResourcesUnavailable));
    }
}
