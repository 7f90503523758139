//! Plans: the stage graph is acyclic and written in order, every stage uses a tier its team
//! may use, and every stage can actually be placed in its pool (size, NVLink locality,
//! NVLink and MIG availability, image platforms).

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use placid_engine::Reject;
use placid_engine::plan::stage_job;
use placid_engine::sim::hardware_verdict;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Arch, ClassId, Locality, Mig, Model, NvlinkNeed, Plan, PlanId, Stage};

use super::empty::Empty;
use super::topology::units;

/// `unmet_classes`: classes whose lanes or bisection no hardware offers (the lanes pass said
/// so), whose stages fit nowhere for that reason alone; `unfit_stages`: stages whose `cpus` or
/// `memory` too few nodes offer (the launch pass said so, E174).
pub(super) fn check(
    model: &Model,
    empty: &Empty,
    unmet_classes: &[ClassId],
    unfit_stages: &[(PlanId, usize)],
    diagnostics: &mut Diagnostics,
) {
    for (plan_index, plan) in model.plans.iter().enumerate() {
        check_order(plan, diagnostics);
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            check_tier(model, plan, stage, diagnostics);
            // The hardware findings name the class's need (NVLink, MIG, an image); the fit
            // check leaves "no feasible node" to them, and is reported first, as it reads.
            let mut hardware = Diagnostics::default();
            check_hardware(model, stage, &mut hardware);
            let plan_id = PlanId::from_index(plan_index);
            let unmet = !hardware.is_empty() || stage.class.as_ref().is_some_and(|class| unmet_classes.contains(&class.value));
            let unfit = unfit_stages.contains(&(plan_id, stage_index));
            check_fit(model, empty, plan_id, stage_index, unmet, unfit, diagnostics);
            diagnostics.extend(hardware);
        }
    }
}

/// Reports cycles (with their path) and `after` references to later stages.
fn check_order(plan: &Plan, diagnostics: &mut Diagnostics) {
    let mut graph = DiGraph::<usize, ()>::new();
    let vertices: Vec<_> = (0..plan.stages.len()).map(|index| graph.add_node(index)).collect();
    for (index, stage) in plan.stages.iter().enumerate() {
        for after in &stage.after {
            graph.add_edge(vertices[after.value], vertices[index], ());
        }
    }
    let mut in_cycle = vec![false; plan.stages.len()];
    for component in tarjan_scc(&graph) {
        let self_loop = component.len() == 1 && graph.contains_edge(component[0], component[0]);
        if component.len() < 2 && !self_loop {
            continue;
        }
        let mut members: Vec<usize> = component.iter().map(|vertex| graph[*vertex]).collect();
        members.sort_unstable();
        for member in &members {
            in_cycle[*member] = true;
        }
        let path = cycle_path(plan, &members);
        let first = &plan.stages[members[0]];
        let mut diagnostic =
            Diagnostic::error(Code::PlanCycle, first.span, format!("stages of plan `{}` wait for each other: {path}", plan.name))
                .label("part of the cycle");
        for member in &members[1..] {
            diagnostic = diagnostic.with_secondary(plan.stages[*member].span, "also in the cycle");
        }
        diagnostics.push(diagnostic.help("remove one `after` so the stages can start"));
    }
    for (index, stage) in plan.stages.iter().enumerate() {
        for after in &stage.after {
            if after.value >= index && !in_cycle[index] {
                diagnostics.push(
                    Diagnostic::error(
                        Code::StageForwardReference,
                        after.span,
                        format!("stage `{}` runs after `{}`, which is declared later", stage.name, plan.stages[after.value].name),
                    )
                    .label("later stage")
                    .with_secondary(plan.stages[after.value].span, "declared here")
                    .help("write the stages of a plan in the order they run"),
                );
            }
        }
    }
}

/// `a -> b -> a`, following `after` edges inside the cycle's members.
fn cycle_path(plan: &Plan, members: &[usize]) -> String {
    let start = members[0];
    let mut path = vec![start];
    let mut current = start;
    for _ in 0..members.len() {
        // The stage that runs after `current` inside the cycle.
        let next = members.iter().copied().find(|candidate| plan.stages[*candidate].after.iter().any(|after| after.value == current));
        match next {
            Some(next) if next == start => {
                path.push(start);
                break;
            }
            Some(next) if !path.contains(&next) => {
                path.push(next);
                current = next;
            }
            _ => break,
        }
    }
    path.iter().map(|index| plan.stages[*index].name.as_str()).collect::<Vec<_>>().join(" -> ")
}

fn check_tier(model: &Model, plan: &Plan, stage: &Stage, diagnostics: &mut Diagnostics) {
    // A recovered plan's team is a stand-in (see `Plan::recovered`).
    if plan.recovered {
        return;
    }
    let team = model.team(plan.team.value);
    if !team.tiers.iter().any(|tier| tier.value == stage.tier.value) {
        let allowed: Vec<&str> = team.tiers.iter().map(|tier| model.tier(tier.value).name.as_str()).collect();
        diagnostics.push(
            Diagnostic::error(
                Code::TierNotAllowed,
                stage.tier.span,
                format!("team `{}` may not use tier `{}`", team.name, model.tier(stage.tier.value).name),
            )
            .label("tier not allowed")
            .with_secondary(team.span, "team declared here")
            .help(format!("team `{}` may use: {}", team.name, allowed.join(", "))),
        );
    }
}

/// Whether the stage's gang can ever fit its pool. The GPUs of the nodes the pool reaches
/// (fenced nodes left out) and of its largest unit say so where they suffice (the engine,
/// which places on a subset of them, agrees); past them the answer is the engine's
/// ([`hardware_verdict`]: the class's filters counted), so `placid check` passes no stage a
/// run would reject.
/// `hardware_reported`: the class's needs were found unmet already (E024, E032, E033, E165,
/// E166), which is what "no feasible node" would restate; `resources_reported`: so were the
/// stage's `cpus` or `memory` (E174), which the engine's verdict would restate in GPUs.
fn check_fit(
    model: &Model,
    empty: &Empty,
    plan_id: PlanId,
    stage_index: usize,
    hardware_reported: bool,
    resources_reported: bool,
    diagnostics: &mut Diagnostics,
) {
    let plan = model.plan(plan_id);
    let stage = &plan.stages[stage_index];
    let pool = model.pool(stage.pool.value);
    if pool.nodes.is_empty() {
        return;
    }
    // The GPUs of the nodes the pool reaches, of the stage's capacity kind. None at all is
    // "no feasible node" (the engine's E100 below): no GPU count would fix it.
    let fences = model.fences();
    let available: u32 = fences
        .reach(stage.pool.value)
        .map(|id| model.node(id))
        .filter(|node| stage.capacity.is_none_or(|kind| node.capacity == kind))
        .map(|node| node.gpu_count())
        .sum();
    let class = stage.class.as_ref().map(|class| model.class(class.value));
    // A MIG class's `gpus` counts instances, which whole-GPU figures do not measure: the
    // engine alone answers. So does a pool with none of the stage's GPUs at all (E100).
    let counted = available > 0 && class.is_none_or(|class| class.mig.is_none());
    if counted && stage.gpus.value > available {
        let what = stage.capacity.map_or_else(|| " ".to_owned(), |kind| format!(" {} ", kind.as_str()));
        let fenced = if available < pool.gpus && stage.capacity.is_none() { " it can reach" } else { "" };
        diagnostics.push(
            Diagnostic::error(
                Code::StageExceedsPool,
                stage.gpus.span,
                format!(
                    "stage `{}` needs {} GPUs per trial, but pool `{}` has {available}{what}GPUs{fenced}",
                    stage.name, stage.gpus.value, pool.name
                ),
            )
            .label(format!("{} GPUs short", stage.gpus.value - available))
            .with_secondary(pool.span, "pool declared here")
            .help("use fewer GPUs per trial or a larger pool"),
        );
        return;
    }
    if let Some(class) = class.filter(|_| counted) {
        // The class's locality as lowering resolved it (nvlink-domain by default when NVLink
        // is required): an explicit `any` lets the gang span domains, in the engine and on
        // both targets alike.
        let locality = class.locality;
        let unit_word = locality_word(locality);
        let largest = units(model, stage.pool.value, locality).map(|units| units.into_iter().next());
        match largest {
            Some(Some(unit)) if stage.gpus.value > unit.gpus => {
                diagnostics.push(
                    Diagnostic::error(
                        Code::DomainTooSmall,
                        stage.gpus.span,
                        format!(
                            "stage `{}` needs {} GPUs inside one {unit_word} of pool `{}`, but the largest is `{}` with {} GPUs",
                            stage.name, stage.gpus.value, pool.name, unit.name, unit.gpus
                        ),
                    )
                    .label(format!("{} GPUs short", stage.gpus.value - unit.gpus))
                    .with_secondary(class.span, format!("class `{}` asks for {} locality", class.name, locality.as_str()))
                    .help(format!("use at most {} GPUs per trial, or a pool with a larger {unit_word}", unit.gpus)),
                );
                return;
            }
            // A class that requires NVLink where the pool reaches none: E033's when the pool
            // has none (check_hardware), else the engine's E100 below (its NVLink nodes are
            // fenced off).
            Some(None) if class.nvlink == NvlinkNeed::Required => {}
            Some(None) => {
                diagnostics.push(
                    Diagnostic::error(
                        Code::DomainTooSmall,
                        stage.gpus.span,
                        format!(
                            "stage `{}` needs {} GPUs inside one {unit_word} of pool `{}`, but the pool has no {unit_word} at all",
                            stage.name, stage.gpus.value, pool.name
                        ),
                    )
                    .label(format!("{} GPUs short", stage.gpus.value))
                    .with_secondary(class.span, format!("class `{}` asks for {} locality", class.name, locality.as_str()))
                    .help(format!("give the pool's nodes a {unit_word}, or use a class of another locality")),
                );
                return;
            }
            _ => {}
        }
    }
    // A stand-in plan, pool or class (see `Plan::recovered`) has an error of its own already;
    // the engine's filters would echo it.
    if plan.recovered || pool.recovered || class.is_some_and(|class| class.recovered) || resources_reported {
        return;
    }
    let job = stage_job(model, plan_id, stage_index, 0);
    match hardware_verdict(model, &empty.quotas, &empty.cluster, &job, stage.pool.value) {
        None => {}
        Some(Reject::NoFeasibleNode) if hardware_reported => {}
        Some(Reject::NoFeasibleNode) => diagnostics.push(
            Diagnostic::error(
                Code::NoFeasibleNode,
                stage.pool.span,
                format!("no node of pool `{}` can ever host stage `{}` of plan `{}`", pool.name, stage.name, plan.name),
            )
            .label("no node passes the stage's filters")
            .help("the class's architecture, NVLink, bandwidth, lanes, MIG profile and the stage's capacity kind rule out every node the pool reaches (a node another pool's reservation fences off is not reached); choose another pool or relax the class"),
        ),
        Some(reason) => diagnostics.push(unexplained(model, stage, reason)),
    }
}

/// The fit error the engine finds where the GPUs the pool reaches, and its units', do not
/// explain it: the class's filters leave nodes out.
fn unexplained(model: &Model, stage: &Stage, reason: Reject) -> Diagnostic {
    let pool = model.pool(stage.pool.value);
    let locality = stage.class.as_ref().map_or(Locality::Any, |class| model.class(class.value).locality);
    let (code, within) = if reason == Reject::PoolTooSmall {
        (Code::StageExceedsPool, format!("pool `{}`", pool.name))
    } else {
        (Code::DomainTooSmall, format!("one {} of pool `{}`", locality_word(locality), pool.name))
    };
    Diagnostic::error(
        code,
        stage.gpus.span,
        format!(
            "stage `{}` needs {} GPUs per trial, but the GPUs it can use in {within} are fewer, even with nothing running",
            stage.name, stage.gpus.value
        ),
    )
    .label("never fits")
    .with_secondary(pool.span, "pool declared here")
    .help("only the nodes that pass the class's filters (architecture, NVLink bandwidth, lanes, bisection, MIG profile) count; use fewer GPUs per trial, relax the class, or choose a larger pool")
}

/// How a diagnostic names the unit of `locality`.
fn locality_word(locality: Locality) -> &'static str {
    match locality {
        Locality::Node => "node",
        Locality::Chassis => "chassis",
        Locality::NvlinkDomain => "NVLink domain",
        Locality::Rack => "rack",
        Locality::Any => "unit",
    }
}

fn check_hardware(model: &Model, stage: &Stage, diagnostics: &mut Diagnostics) {
    let Some(class_ref) = &stage.class else {
        return;
    };
    let class = model.class(class_ref.value);
    let pool = model.pool(stage.pool.value);
    let nodes: Vec<_> = pool.nodes.iter().map(|id| model.node(*id)).collect();
    if nodes.is_empty() {
        return;
    }
    if class.nvlink == NvlinkNeed::Required {
        let minimum = class.min_bandwidth.map_or(1, |bandwidth| bandwidth.bits_per_second);
        let good = nodes.iter().filter(|node| node.has_nvlink() && node.nvlink_bandwidth().bits_per_second >= minimum).count();
        if good == 0 {
            let why = class
                .min_bandwidth
                .map_or_else(|| "none has NVLink".to_owned(), |bandwidth| format!("none has NVLink of at least {bandwidth} per GPU"));
            diagnostics.push(
                Diagnostic::error(
                    Code::NvlinkUnavailable,
                    class_ref.span,
                    format!("class `{}` requires NVLink, but in pool `{}` {why}", class.name, pool.name),
                )
                .label("needs NVLink")
                .with_secondary(stage.pool.span, "pool")
                .help("place the stage in a pool of NVLink nodes, or relax the class to `nvlink \"preferred\"`"),
            );
        }
    }
    if let Some(profile) = &class.mig {
        let offers = nodes.iter().any(|node| {
            node.gpus.iter().any(|gpu| match &gpu.mig {
                Mig::Enabled { instances } => instances.iter().any(|instance| instance.profile == profile.value),
                Mig::Disabled => false,
            })
        });
        if !offers {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigUnavailable,
                    class_ref.span,
                    format!("class `{}` runs on MIG profile `{}`, which no GPU of pool `{}` offers", class.name, profile.value, pool.name),
                )
                .label("MIG profile unavailable")
                .with_secondary(profile.span, "profile named here")
                .help("enable MIG with that profile on GPUs of the pool, or choose another pool"),
            );
        }
    }
    if !class.platforms.is_empty() {
        let arches: std::collections::BTreeSet<Arch> = nodes.iter().map(|node| node.arch).collect();
        for arch in arches.into_iter().filter(|arch| !class.platforms.contains(arch)) {
            let code = if arch == Arch::Riscv64 { Code::MissingRiscvImage } else { Code::InvalidValue };
            diagnostics.push(
                Diagnostic::error(
                    code,
                    stage.pool.span,
                    format!(
                        "stage `{}` can land on {} nodes of pool `{}`, but class `{}` has no {} image",
                        stage.name,
                        arch.as_str(),
                        pool.name,
                        class.name,
                        arch.oci_platform()
                    ),
                )
                .label(format!("{} nodes in this pool", arch.as_str()))
                .with_secondary(class.span, "class declared here")
                .help(format!("add \"{}\" to the class's `platforms` once the image is built, or narrow the pool", arch.oci_platform())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::error_codes;

    /// Two 4-GPU x86 nodes in racks `r1` and `r2`.
    const NODES: &str = "node \"a\" arch=\"x86_64\" rack=\"r1\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n\
                         node \"b\" arch=\"x86_64\" rack=\"r2\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n";

    /// Pool `all` holds both nodes; pool `res` holds node `a`, where RESERVE may fence it off.
    const POLICY: &str = r#"
pool "all" { select arch="x86_64" }
pool "res" { select rack="r1" }
cost-center "cc"
tier "P0" { priority 100; preemption "never" RESERVE }
tier "P1" { priority 10; preemption window="1m" mode="cancel" }
team "t" { share 1; cost-center "cc"; tiers "P0" "P1" }
class "wide" { locality "any" }
plan "p" team="t" {
    stage "s" tier="P1" class="wide" pool="all" gpus=GPUS
}
"#;

    fn errors(reserve: &str, gpus: u32) -> Vec<Code> {
        let policy = POLICY.replace("RESERVE", reserve).replace("GPUS", &gpus.to_string());
        error_codes("", NODES, &policy)
    }

    #[test]
    fn a_stage_fits_the_gpus_the_engine_can_reach_not_the_pools_count() {
        // Unfenced, all eight GPUs serve the stage.
        assert_eq!(errors("", 8), []);
        // A reservation in `res` fences node `a` off from `all`: four GPUs are left, which the
        // pool's count (eight) does not show and the engine's empty cluster does.
        assert_eq!(errors("; reserve pool=\"res\" gpus=4", 4), []);
        assert_eq!(errors("; reserve pool=\"res\" gpus=4", 6), [Code::StageExceedsPool]);
        // Past the pool's count, the count says so.
        assert_eq!(errors("", 9), [Code::StageExceedsPool]);
    }

    #[test]
    fn a_mig_stage_is_measured_in_instances_not_whole_gpus() {
        // One GPU cut into seven `1g.18gb` instances, one whole GPU beside it: a MIG class's
        // `gpus` counts instances, so seven fit on node `m` though the pool has two GPUs (the
        // whole-GPU figures would call it E031), and eight fit on no one node.
        let nodes = "node \"m\" arch=\"x86_64\" rack=\"r1\" {\n    gpu 0 model=\"H200\" mig=\"enabled\" {\n        mig-instance profile=\"1g.18gb\" count=7\n    }\n    gpu 1 model=\"H200\"\n}\n";
        let errors = |gpus: u32| -> Vec<Code> {
            let policy = POLICY
                .replace("RESERVE", "")
                .replace("class \"wide\" { locality \"any\" }", "class \"wide\" { locality \"node\"; mig \"1g.18gb\" }")
                .replace("GPUS", &gpus.to_string());
            error_codes("", nodes, &policy)
        };
        assert_eq!(errors(7), []);
        assert_eq!(errors(8), [Code::DomainTooSmall]);
    }

    #[test]
    fn a_stage_needing_nvlink_whose_nvlink_nodes_are_fenced_off_fits_nowhere() {
        // Node `n` has NVLink and is in pool `res`, where P0 reserves: pool `all` reaches only
        // `p`, without NVLink. check_hardware sees NVLink in `all` (E033 stays quiet); the
        // engine finds no node it can use.
        let gpu =
            |index: u32, peer: u32| format!("    gpu {index} model=\"H200\" {{ nvlink peer={peer} links=6 bandwidth=\"300GB/s\" }}\n");
        let nodes = format!(
            "node \"n\" arch=\"x86_64\" rack=\"r1\" nvlink-domain=\"d\" {{\n{}{}}}\nnode \"p\" arch=\"x86_64\" rack=\"r2\" {{\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}}\n",
            gpu(0, 1),
            gpu(1, 0)
        );
        let policy = POLICY
            .replace("RESERVE", "; reserve pool=\"res\" gpus=2")
            .replace("class \"wide\" { locality \"any\" }", "class \"wide\" { nvlink \"required\" }")
            .replace("GPUS", "2");
        assert_eq!(error_codes("", &nodes, &policy), [Code::NoFeasibleNode]);
    }
}
