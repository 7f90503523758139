//! What a stage runs, against the targets that run it and the nodes it may land on: a pod
//! needs an image (E172), a Slurm stage script a command (E173, a warning: the submitter's
//! `PLACID_STAGE_COMMAND` stands in), and `cpus`/`memory`, asked of each node of a trial's
//! gang, must fit as many GPU nodes of the stage's pool as the gang spans (E174). Each reads
//! [`Model::launch`], the one combination of a stage's settings with its class's, and
//! [`Model::gang`], the nodes a trial spans on both targets.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Launch, Model, Node, Plan, PlanId, Stage, env};

/// Returns the stages (plan, stage index) whose `cpus` or `memory` fit too few nodes (E174):
/// the engine cannot place them either, and its verdict would restate this one.
pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) -> Vec<(PlanId, usize)> {
    let mut unfit = Vec::new();
    for (plan_index, plan) in model.plans.iter().enumerate() {
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            let launch = model.launch(stage);
            if model.project.kubernetes.is_some() && launch.image.is_none() {
                diagnostics.push(without_image(model, plan, stage));
            }
            if model.project.slurm.is_some() && launch.command.is_none() {
                diagnostics.push(without_command(plan, stage));
            }
            if !fits_the_gang(model, plan, stage, &launch, diagnostics) {
                unfit.push((PlanId::from_index(plan_index), stage_index));
            }
        }
    }
    unfit
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

/// `cpus` and `memory` are per node of a trial: the GPU nodes the pool reaches must offer
/// both on as many nodes as the trial's gang spans. Returns whether they do.
fn fits_the_gang(model: &Model, plan: &Plan, stage: &Stage, launch: &Launch, diagnostics: &mut Diagnostics) -> bool {
    if launch.cpus.is_none() && launch.memory.is_none() {
        return true;
    }
    let fences = model.fences();
    let pool = stage.pool.value;
    let nodes: Vec<&Node> = fences.reach(pool).map(|id| model.node(id)).filter(|node| node.gpu_count() > 0).collect();
    if nodes.is_empty() {
        // An empty pool is the capacity checks' to report.
        return true;
    }
    let pool_name = &model.pool(pool).name;
    let cpus_fit = |node: &Node| launch.cpus.as_ref().is_none_or(|cpus| node.cpu.harts >= cpus.value);
    // A node whose memory the inventory does not say may have enough.
    let memory_fits = |node: &Node| launch.memory.as_ref().is_none_or(|memory| node.memory.is_none_or(|bytes| bytes.0 >= memory.value.0));
    let mut fits = true;
    if let Some(cpus) = &launch.cpus
        && !nodes.iter().any(|node| cpus_fit(node))
    {
        let most = nodes.iter().map(|node| node.cpu.harts).max().unwrap_or_default();
        fits = false;
        diagnostics.push(
            Diagnostic::error(
                Code::StageResourcesUnavailable,
                cpus.span,
                format!(
                    "stage `{}` of plan `{}` asks {} CPUs per node; the GPU nodes of pool `{pool_name}` have at most {most}",
                    stage.name, plan.name, cpus.value
                ),
            )
            .label("more than any node has")
            .help(format!("ask at most {most}, or use a pool with larger nodes")),
        );
    }
    if let Some(memory) = &launch.memory
        && !nodes.iter().any(|node| memory_fits(node))
    {
        let most = nodes.iter().filter_map(|node| node.memory).map(|bytes| bytes.0).max().unwrap_or_default();
        fits = false;
        diagnostics.push(
            Diagnostic::error(
                Code::StageResourcesUnavailable,
                memory.span,
                format!(
                    "stage `{}` of plan `{}` asks {} of memory per node; the GPU nodes of pool `{pool_name}` have at most {}",
                    stage.name,
                    plan.name,
                    memory.value,
                    placid_lang::units::Bytes(most)
                ),
            )
            .label("more than any node has")
            .help("ask less, or use a pool with larger nodes"),
        );
    }
    if !fits {
        return false;
    }
    // Each node of the gang is asked for both at once.
    let gang = model.gang(stage);
    let enough = nodes.iter().filter(|node| cpus_fit(node) && memory_fits(node)).count();
    if enough >= gang.nodes as usize {
        return true;
    }
    let asked: Vec<String> = launch
        .cpus
        .iter()
        .map(|cpus| format!("{} CPUs", cpus.value))
        .chain(launch.memory.iter().map(|memory| format!("{} of memory", memory.value)))
        .collect();
    diagnostics.push(
        Diagnostic::error(
            Code::StageResourcesUnavailable,
            stage.gpus.span,
            format!(
                "stage `{}` of plan `{}` spans {} nodes of pool `{pool_name}` ({} GPUs each), each asked for {}; only {enough} GPU nodes of the pool have that",
                stage.name,
                plan.name,
                gang.nodes,
                gang.gpus_per_node,
                asked.join(" and ")
            ),
        )
        .label(format!("{} nodes short", gang.nodes as usize - enough))
        .help("ask less per node, use fewer GPUs per trial, or use a pool with more nodes that large"),
    );
    false
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::{check_project, error_codes};

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

    /// Two 4-GPU nodes: `big` with 64 CPUs and 64 GiB, `small` with 4 CPUs and 512 GiB.
    const PAIR: &str = "node \"big\" arch=\"x86_64\" {\n    cpu harts=64\n    memory \"64GiB\"\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n\
                        node \"small\" arch=\"x86_64\" {\n    cpu harts=4\n    memory \"512GiB\"\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n";

    fn gang_errors(gpus: u32, stage: &str) -> Vec<Code> {
        let policy = POLICY.replace("gpus=1", &format!("gpus={gpus}")).replace("cpus 4 }", "}").replace("STAGE", stage);
        error_codes("", PAIR, &policy)
    }

    #[test]
    fn every_node_of_the_gang_must_offer_cpus_and_memory_at_once() {
        // Four GPUs are one node: `big` has the CPUs.
        assert_eq!(gang_errors(4, "{ cpus 16 }"), []);
        // Eight span both nodes, and `small` has 4 CPUs: Slurm and Kubernetes would leave it
        // pending, and the engine's verdict (which the CPUs now bind too) is not echoed.
        assert_eq!(gang_errors(8, "{ cpus 16 }"), [Code::StageResourcesUnavailable]);
        assert_eq!(gang_errors(8, "{ cpus 4 }"), []);
        // One node, but none with both: `big` has the CPUs, `small` the memory.
        assert_eq!(gang_errors(4, "{ cpus 16; memory \"128GiB\" }"), [Code::StageResourcesUnavailable]);
    }
}
